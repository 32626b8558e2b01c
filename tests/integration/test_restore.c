/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * QP_RESTORE of a real daemon (ring pair), speaking the raw control
 * protocol (docs/security.md "Restoring a QP"):
 *
 *   test_restore restore SOCK_A SOCK_B  creates QPs (prints READY), waits
 *                                       for the daemon to be killed and
 *                                       started again with the same command
 *                                       line, then: reserved blocks, the
 *                                       refusals (each with its errno) and
 *                                       the rightful restores (same QPN,
 *                                       R_Key, control key); the block of a
 *                                       QP nobody restored is free after
 *                                       --restore-window-ms (4000)
 *   test_restore none SOCK              --state-dir none: zero token, no
 *                                       restore (EOPNOTSUPP)
 *
 * Lines "expect COUNTER N" tell the calling script the exact value the
 * daemon's counter must have at exit. Run as root: another uid (65534)
 * tries a restore with everything but the creator's uid.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sdr_abi.h"
#include "sdr_fdpass.h"
#include "sdr_test.h"

#define WINDOW_MS 4000 /* the script's --restore-window-ms */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int raw_connect(const char *path, int must)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	REQUIRE(s >= 0, "socket: %s", strerror(errno));
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) == 0)
		return s;
	REQUIRE(!must, "connect %s: %s", path, strerror(errno));
	close(s);
	return -1;
}

/* One request, one response within 5 s; returns the status. */
static int call(int s, struct sdr_ctl_req *q, int fd_in, struct sdr_ctl_resp *r, int *fd_out)
{
	int got = -1, rc;
	ssize_t n;

	q->magic = SDR_CTL_MAGIC;
	q->abi_major = SDR_ABI_MAJOR;
	q->abi_minor = SDR_ABI_MINOR;
	rc = sdr_fd_send(s, q, sizeof(*q), fd_in, -1);
	REQUIRE(rc == 0, "send request %u: %s", q->type, strerror(-rc));
	n = sdr_fd_recv(s, r, sizeof(*r), &got, 5000);
	REQUIRE(n == (ssize_t)sizeof(*r) && r->magic == SDR_CTL_MAGIC && r->type == q->type,
		"response to request %u (%zd B)", q->type, n);
	r->msg[sizeof(r->msg) - 1] = 0;
	if (fd_out)
		*fd_out = got;
	else if (got >= 0)
		close(got);
	return r->status;
}

static int attach(const char *path)
{
	struct sdr_ctl_req q = {.type = SDR_CTL_HELLO};
	struct sdr_ctl_resp r;
	int s = raw_connect(path, 1);

	REQUIRE(call(s, &q, -1, &r, NULL) == 0, "HELLO: %s", r.msg);
	return s;
}

static const struct sdr_qp_attr_abi sr_attr = {.reliability = SDR_REL_SR};

struct kept {
	struct sdr_qp_info info;
	uint8_t token[SDR_RESTORE_TOKEN_LEN];
	int seg_fd;
	uint64_t seg_size;
};

static int create(int s, uint32_t want_qpn, struct kept *k, struct sdr_ctl_resp *r)
{
	struct sdr_ctl_req q = {.type = SDR_CTL_QP_CREATE, .qp_attr = sr_attr};
	int fd = -1, st;

	q.qp_attr.want_qpn = want_qpn;
	st = call(s, &q, -1, r, &fd);
	if (st == 0 && k) {
		k->info = r->info;
		memcpy(k->token, r->token, sizeof(k->token));
		k->seg_fd = fd;
		k->seg_size = r->seg_size;
	} else if (fd >= 0) {
		close(fd);
	}
	return st;
}

static uint8_t restore_cc; /* the cc of restore()'s request */

static int restore(int s, const struct kept *k, const uint8_t *token, int seg_fd,
		   const struct sdr_qp_info *remote, struct sdr_ctl_resp *r)
{
	struct sdr_ctl_req q = {.type = SDR_CTL_QP_RESTORE, .qp_attr = sr_attr, .cc = restore_cc};

	q.restore.local = k->info;
	memcpy(q.restore.token, token, SDR_RESTORE_TOKEN_LEN);
	q.restore.send_base = 7; /* any numbering the host says */
	q.restore.recv_base = 5;
	if (remote) {
		q.restore.connected = 1;
		q.remote = *remote;
	}
	return call(s, &q, seg_fd, r, NULL);
}

static int memfd_of(size_t len, int seal)
{
	int fd = memfd_create("test-restore", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	REQUIRE(fd >= 0 && ftruncate(fd, (off_t)len) == 0, "memfd: %s", strerror(errno));
	if (seal)
		REQUIRE(fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) == 0, "seal");
	return fd;
}

static void expect(const char *ctr, unsigned long n)
{
	printf("expect %s %lu\n", ctr, n);
	fflush(stdout);
}

static int token_zero(const uint8_t *t)
{
	for (unsigned i = 0; i < SDR_RESTORE_TOKEN_LEN; i++)
		if (t[i])
			return 0;
	return 1;
}

/* Wait for the daemon behind @p s to die, then for a new one on @p path
 * that answers a HELLO: @return the attached socket. */
static int wait_restart(int s, const char *path)
{
	struct sdr_ctl_req q = {.type = SDR_CTL_HELLO};
	struct sdr_ctl_resp r;
	double t0 = now_s();
	char b[64];
	int n;

	while ((n = (int)recv(s, b, sizeof(b), 0)) > 0 || (n < 0 && errno == EINTR))
		;
	close(s);
	printf("daemon gone after %.1f s\n", now_s() - t0);
	for (;;) {
		int c = raw_connect(path, 0), got = -1;

		if (c >= 0) {
			q.magic = SDR_CTL_MAGIC;
			q.abi_major = SDR_ABI_MAJOR;
			q.abi_minor = SDR_ABI_MINOR;
			if (sdr_fd_send(c, &q, sizeof(q), -1, 1000) == 0 &&
			    sdr_fd_recv(c, &r, sizeof(r), &got, 5000) == (ssize_t)sizeof(r) &&
			    r.status == 0) {
				if (got >= 0)
					close(got);
				printf("daemon back after %.1f s\n", now_s() - t0);
				return c;
			}
			if (got >= 0)
				close(got);
			close(c); /* the old one, going */
		}
		REQUIRE(now_s() - t0 < 60, "no daemon on %s again within 60 s", path);
		usleep(50 * 1000);
	}
}

/* As uid 65534, with the right token and segment: EPERM. */
static void other_uid(const char *sock, const struct kept *k)
{
	pid_t p = fork();
	int st;

	REQUIRE(p >= 0, "fork");
	if (p == 0) {
		struct sdr_ctl_resp r;
		int s, rc;

		if (setgid(65534) || setuid(65534)) {
			fprintf(stderr, "setuid 65534: %s\n", strerror(errno));
			_exit(2);
		}
		/* (the script opens the restarted daemon's socket to this uid
		 * right after the restart: wait for it, up to 10 s) */
		for (int i = 0; i < 100 && access(sock, W_OK); i++)
			usleep(100 * 1000);
		s = attach(sock);
		rc = restore(s, k, k->token, k->seg_fd, NULL, &r);
		printf("uid 65534: QP_RESTORE of 0x%x: %d (%s)\n", k->info.qpn, rc, r.msg);
		fflush(stdout);
		_exit(rc == -EPERM && strstr(r.msg, "restore token does not match") ? 0 : 1);
	}
	REQUIRE(waitpid(p, &st, 0) == p, "waitpid");
	CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "another uid's restore was not refused EPERM");
}

static void test_restore(const char *sa, const char *sb)
{
	struct kept ka, kb, k2;
	struct sdr_ctl_resp r;
	struct sdr_ctl_req q;
	int a = attach(sa), b = attach(sb), st, fd;
	uint8_t bad[SDR_RESTORE_TOKEN_LEN];
	unsigned refused = 0;
	double t_back;

	/* ---- before: QPs, their tokens ---- */
	REQUIRE(create(a, 0, &ka, &r) == 0, "create A: %s", r.msg);
	REQUIRE(create(b, 0, &kb, &r) == 0, "create B: %s", r.msg);
	REQUIRE(create(a, 0, &k2, &r) == 0, "create A2: %s", r.msg);
	CHECK(!token_zero(ka.token) && !token_zero(kb.token) && !token_zero(k2.token),
	      "QP_CREATE returned a token");
	CHECK(memcmp(ka.token, k2.token, SDR_RESTORE_TOKEN_LEN), "two QPs, two tokens");
	printf("QPs 0x%06x (A), 0x%06x (B), 0x%06x (A, never restored)\n", ka.info.qpn, kb.info.qpn,
	       k2.info.qpn);
	printf("READY\n");
	fflush(stdout);

	/* ---- the daemon is killed (-9) and started again ---- */
	a = wait_restart(a, sa);
	t_back = now_s();
	close(b);
	b = attach(sb);

	/* the blocks of the previous incarnation are reserved */
	st = create(a, ka.info.qpn, NULL, &r);
	CHECK(st == -EADDRINUSE && strstr(r.msg, "reserved for the restore"),
	      "want_qpn of a reserved block: %d (%s)", st, r.msg);
	expect("ctl_qpn_reserved", 1);
	{
		struct kept kn;
		REQUIRE(create(a, 0, &kn, &r) == 0, "create: %s", r.msg);
		CHECK(kn.info.qpn != ka.info.qpn && kn.info.qpn != k2.info.qpn,
		      "a new QP took reserved QPN 0x%x", kn.info.qpn);
		CHECK(memcmp(kn.token, ka.token, SDR_RESTORE_TOKEN_LEN), "token of a new QP");
		q = (struct sdr_ctl_req){.type = SDR_CTL_QP_DESTROY, .qp_id = r.id};
		REQUIRE(call(a, &q, -1, &r, NULL) == 0, "destroy: %s", r.msg);
		close(kn.seg_fd);
	}

	/* a wrong token */
	memcpy(bad, ka.token, sizeof(bad));
	bad[5] ^= 0x10;
	st = restore(a, &ka, bad, ka.seg_fd, &kb.info, &r);
	CHECK(st == -EPERM && strstr(r.msg, "restore token does not match"), "wrong token: %d (%s)",
	      st, r.msg);
	refused++;
	/* the right token for another QP (keys swapped) */
	{
		struct kept x = ka;
		x.info.ctrl_key ^= 1;
		st = restore(a, &x, ka.token, ka.seg_fd, &kb.info, &r);
		CHECK(st == -EPERM, "changed control key: %d (%s)", st, r.msg);
		refused++;
	}
	/* another uid with everything else right */
	if (geteuid() == 0) {
		other_uid(sa, &ka);
		refused++;
	}
	/* the segment: none, unsealed, wrong size, not this QP's */
	st = restore(a, &ka, ka.token, -1, &kb.info, &r);
	CHECK(st == -EBADF, "no segment fd: %d (%s)", st, r.msg);
	refused++;
	fd = memfd_of(ka.seg_size, 0);
	st = restore(a, &ka, ka.token, fd, &kb.info, &r);
	CHECK(st == -EPERM && strstr(r.msg, "sealed"), "unsealed segment: %d (%s)", st, r.msg);
	close(fd);
	refused++;
	fd = memfd_of(ka.seg_size + 4096, 1);
	st = restore(a, &ka, ka.token, fd, &kb.info, &r);
	CHECK(st == -EINVAL, "segment of the wrong size: %d (%s)", st, r.msg);
	close(fd);
	refused++;
	fd = memfd_of(ka.seg_size, 1);
	st = restore(a, &ka, ka.token, fd, &kb.info, &r);
	CHECK(st == -EINVAL && strstr(r.msg, "header"), "zeroed segment: %d (%s)", st, r.msg);
	close(fd);
	refused++;
	/* another address than this daemon's */
	{
		struct kept x = ka;
		x.info.ip ^= 0x100;
		/* (the token covers the QPN and keys, not the address) */
		st = restore(a, &x, ka.token, ka.seg_fd, &kb.info, &r);
		CHECK(st == -EADDRNOTAVAIL && strstr(r.msg, "IP"), "another IP: %d (%s)", st,
		      r.msg);
		refused++;
	}
	/* a congestion control out of range, everything else right */
	restore_cc = SDR_QP_CC_ON + 1;
	st = restore(a, &ka, ka.token, ka.seg_fd, &kb.info, &r);
	CHECK(st == -EINVAL && strstr(r.msg, "cc"), "cc %u: %d (%s)", restore_cc, st, r.msg);
	restore_cc = 0;
	refused++;
	/* the rightful restores: the same identity */
	st = restore(a, &ka, ka.token, ka.seg_fd, &kb.info, &r);
	CHECK(st == 0, "restore A: %d (%s)", st, r.msg);
	CHECK(r.info.qpn == ka.info.qpn && r.info.rkey == ka.info.rkey &&
		      r.info.ctrl_key == ka.info.ctrl_key,
	      "restored A: QPN 0x%x rkey 0x%x (was 0x%x 0x%x)", r.info.qpn, r.info.rkey,
	      ka.info.qpn, ka.info.rkey);
	CHECK(!memcmp(r.token, ka.token, SDR_RESTORE_TOKEN_LEN), "restored A: the same token");
	st = restore(b, &kb, kb.token, kb.seg_fd, &ka.info, &r);
	CHECK(st == 0 && r.info.qpn == kb.info.qpn && r.info.rkey == kb.info.rkey &&
		      r.info.ctrl_key == kb.info.ctrl_key,
	      "restore B: %d (%s)", st, r.msg);
	/* once: the block is in use now */
	fd = dup(ka.seg_fd);
	st = restore(a, &ka, ka.token, fd, &kb.info, &r);
	CHECK(st == -EADDRINUSE, "second restore of A: %d (%s)", st, r.msg);
	close(fd);
	refused++;
	printf("restored within %.2f s of the restart\n", now_s() - t_back);
	expect("ctl_restore_ok", 2);
	expect("ctl_restore_refused", refused);

	/* the block nobody restored: free once the window is over */
	st = create(a, k2.info.qpn, NULL, &r);
	CHECK(st == -EADDRINUSE, "A2's block within the window: %d (%s)", st, r.msg);
	while (now_s() - t_back < WINDOW_MS / 1000.0 + 0.5)
		usleep(100 * 1000);
	st = create(a, k2.info.qpn, NULL, &r);
	CHECK(st == 0 && r.info.qpn == k2.info.qpn, "A2's block after the window: %d (%s)", st,
	      r.msg);
	expect("ctl_qpn_reserved", 2);
	close(a);
	close(b);
}

static void test_none(const char *sa)
{
	struct kept k;
	struct sdr_ctl_resp r;
	int a = attach(sa), st;

	REQUIRE(create(a, 0, &k, &r) == 0, "create: %s", r.msg);
	CHECK(token_zero(k.token), "--state-dir none: no token");
	st = restore(a, &k, k.token, k.seg_fd, NULL, &r);
	CHECK(st == -EOPNOTSUPP, "--state-dir none: restore %d (%s)", st, r.msg);
	expect("ctl_restore_refused", 1);
	close(a);
}

int main(int argc, char **argv)
{
	t_seed("test_restore", 0x52535452);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && !strcmp(argv[1], "restore"))
		test_restore(argv[2], argv[3]);
	else if (argc == 3 && !strcmp(argv[1], "none"))
		test_none(argv[2]);
	else {
		fprintf(stderr, "usage: test_restore restore SOCK_A SOCK_B | none SOCK\n");
		return 2;
	}
	return t_finish("test_restore");
}
