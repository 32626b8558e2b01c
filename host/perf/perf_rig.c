/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-perf's rig: finding sdr-dpu and rig.sh, the network namespaces of
 * --rig veth, starting the daemons (one on the ring, two on veth), waiting
 * for their sockets, and stopping them again (also at exit). Host program,
 * above perf_argv.c (their command lines).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "perf.h"

const char *const rig_names[] = {"ring", "veth", "attach"};
const char *const rig_pmds[] = {"net_ring", "net_af_packet", "unknown"};

/* The names of rig.sh veth-up's NAME=VALUE lines (enum RV_*). */
static const char *const rv_names[RV__N] = {"NS_A",   "NS_B",   "DIP_A",  "DIP_B",
					    "DMAC_A", "DMAC_B", "VDEV_A", "VDEV_B"};

struct rig *g_rig; /* for cleanup at exit */

static int run_cmd(char *const argv[], int quiet)
{
	pid_t p = fork();
	int st;

	if (p < 0)
		return -1;
	if (p == 0) {
		if (quiet) {
			int fd = open("/dev/null", O_WRONLY);
			if (fd >= 0) {
				dup2(fd, 1);
				dup2(fd, 2);
			}
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	while (waitpid(p, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int find_dpu_bin(char *out, size_t n)
{
	char self[PATH_MAX - 64], *slash;
	ssize_t len;
	const char *env = getenv("SDR_DPU");

	if (o.dpu_bin) {
		snprintf(out, n, "%s", o.dpu_bin);
		return access(out, X_OK) ? -1 : 0;
	}
	if (env && *env && !access(env, X_OK)) {
		snprintf(out, n, "%s", env);
		return 0;
	}
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len > 0) {
		self[len] = 0;
		slash = strrchr(self, '/');
		if (slash) {
			*slash = 0;
			/* build tree: <build>/host/perf/sdr-perf -> <build>/firmware/sdr-dpu */
			snprintf(out, n, "%s/../../firmware/sdr-dpu", self);
			if (!access(out, X_OK))
				return 0;
			snprintf(out, n, "%s/sdr-dpu", self);
			if (!access(out, X_OK))
				return 0;
		}
	}
	snprintf(out, n, "sdr-dpu"); /* PATH */
	return 0;
}

/* CPU seconds (user + system) used so far by the fast-path threads
 * ("rte-worker-N") of the daemons we started; NAN for --rig attach. On a
 * shared machine the workers do not get a whole CPU each, so throughput per
 * worker CPU-second is the figure that survives the noise. */

static void dump_log(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512];
	long lines = 0;

	if (!f)
		return;
	fprintf(stderr, "---- %s ----\n", path);
	while (fgets(line, sizeof(line), f) && lines++ < 60)
		fputs(line, stderr);
	fclose(f);
}

/* The rig script (hw/x86/rig.sh): $SDR_RIG, the source tree this binary
 * was built from, then where it is installed. */
static int find_rig_sh(char *out, size_t n)
{
	const char *env = getenv("SDR_RIG");
	const char *cand[] = {env, SDR_RIG_SH_SOURCE, SDR_RIG_SH_INSTALLED};

	for (size_t i = 0; i < sizeof(cand) / sizeof(cand[0]); i++)
		if (cand[i] && *cand[i] && access(cand[i], R_OK) == 0) {
			snprintf(out, n, "%s", cand[i]);
			return 0;
		}
	return -1;
}

/* 'rig.sh veth-up TAG QPAIRS': the namespaces and veth pair of the rig; its
 * NAME=VALUE lines go to r->vars. */
static int rig_veth_up(struct rig *r, unsigned qpairs)
{
	char rig_sh[PATH_MAX], qp[16], line[256];
	int fds[2], st, got = 0;
	pid_t p;
	FILE *f;

	if (find_rig_sh(rig_sh, sizeof(rig_sh))) {
		fprintf(stderr,
			"sdr-perf: the rig script (hw/x86/rig.sh) is not at %s or %s; set "
			"SDR_RIG\n",
			SDR_RIG_SH_SOURCE, SDR_RIG_SH_INSTALLED);
		return -1;
	}
	snprintf(r->ns_tag, sizeof(r->ns_tag), "p%u", (unsigned)getpid() % 1000000);
	snprintf(qp, sizeof(qp), "%u", qpairs);
	if (pipe(fds))
		return -1;
	p = fork();
	if (p < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (p == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execlp("bash", "bash", rig_sh, "veth-up", r->ns_tag, qp, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *eq = strchr(line, '=');

		line[strcspn(line, "\n")] = 0;
		if (!eq)
			continue;
		*eq = 0;
		for (int i = 0; i < RV__N; i++)
			if (!strcmp(line, rv_names[i])) {
				snprintf(r->vars[i], sizeof(r->vars[i]), "%s", eq + 1);
				got |= 1 << i;
			}
	}
	if (f)
		fclose(f);
	else
		close(fds[0]);
	while (waitpid(p, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (!WIFEXITED(st) || WEXITSTATUS(st) || got != (1 << RV__N) - 1) {
		fprintf(stderr, "sdr-perf: %s veth-up %s failed\n", rig_sh, r->ns_tag);
		return -1;
	}
	return 0;
}

void rig_stop(struct rig *r)
{
	/* Let the daemons finish tearing down the contexts we just closed:
	 * a SIGINT that lands while the main lcore waits for a worker to
	 * acknowledge a teardown command costs the daemon's 5 s command
	 * timeout (the worker has already left its loop). */
	if (r->ndaemons)
		sleep_ms(300);
	for (int i = 0; i < r->ndaemons; i++) {
		if (r->pid[i] <= 0)
			continue;
		kill(r->pid[i], SIGINT);
	}
	for (int i = 0; i < r->ndaemons; i++) {
		int st, done = 0;
		if (r->pid[i] <= 0)
			continue;
		for (int t = 0; t < 160 && !done; t++) { /* 8 s */
			pid_t w = waitpid(r->pid[i], &st, WNOHANG);
			if (w == r->pid[i] || (w < 0 && errno == ECHILD))
				done = 1;
			else
				sleep_ms(50);
		}
		if (!done) {
			kill(r->pid[i], SIGKILL);
			waitpid(r->pid[i], &st, 0);
		}
		r->pid[i] = 0;
	}
	r->ndaemons = 0;
	if (r->ns_tag[0]) {
		char rig_sh[PATH_MAX];
		char *a[] = {"bash", rig_sh, "veth-down", r->ns_tag, NULL};

		if (find_rig_sh(rig_sh, sizeof(rig_sh)) == 0)
			run_cmd(a, 1);
		r->ns_tag[0] = 0;
	}
	if (r->tmpdir[0] && !o.keep_logs) {
		char p[256];
		const char *names[] = {"a.sock", "b.sock", "dpu0.log", "dpu1.log"};
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			snprintf(p, sizeof(p), "%s/%s", r->tmpdir, names[i]);
			unlink(p);
		}
		rmdir(r->tmpdir);
		r->tmpdir[0] = 0;
	} else if (r->tmpdir[0]) {
		fprintf(stderr, "sdr-perf: daemon logs kept in %s\n", r->tmpdir);
		r->tmpdir[0] = 0;
	}
}

void cleanup_at_exit(void)
{
	if (g_rig)
		rig_stop(g_rig);
}

/* Start one daemon with argv; stdout/stderr into log. */
static int spawn(struct rig *r, char **argv)
{
	int i = r->ndaemons;
	pid_t p;

	snprintf(r->log[i], sizeof(r->log[i]), "%s/dpu%d.log", r->tmpdir, i);
	p = fork();
	if (p < 0)
		return -errno;
	if (p == 0) {
		int fd = open(r->log[i], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		sigset_t s;
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		/* the daemon dies with us, even on SIGKILL */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		sigemptyset(&s);
		sigprocmask(SIG_SETMASK, &s, NULL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execvp(argv[0], argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	r->pid[i] = p;
	r->ndaemons++;
	return 0;
}

static int wait_socks(struct rig *r)
{
	double deadline = now_s() + 30;

	while (now_s() < deadline && !g_stop) {
		struct stat st;
		int ok = !stat(r->sock_a, &st) && S_ISSOCK(st.st_mode) && !stat(r->sock_b, &st) &&
			 S_ISSOCK(st.st_mode);
		if (ok)
			return 0;
		for (int i = 0; i < r->ndaemons; i++) {
			int ws;
			if (waitpid(r->pid[i], &ws, WNOHANG) == r->pid[i]) {
				r->pid[i] = 0;
				fprintf(stderr, "sdr-perf: sdr-dpu exited during start-up\n");
				dump_log(r->log[i]);
				return -1;
			}
		}
		sleep_ms(20);
	}
	fprintf(stderr, "sdr-perf: daemon sockets did not appear within 30 s\n");
	for (int i = 0; i < r->ndaemons; i++)
		dump_log(r->log[i]);
	return -1;
}

/* Arguments common to every instance / daemon. */

int rig_start(struct rig *r, const char *link, uint64_t max_size)
{
	char bin[PATH_MAX];
	uint64_t max_msg = max_msg_for(max_size);
	unsigned workers = o.workers ? o.workers : 1;

	memset(r, 0, sizeof(*r));
	r->kind = o.rig;
	snprintf(r->link, sizeof(r->link), "%s", link ? link : "");
	if (r->kind == RIG_ATTACH) {
		snprintf(r->sock_a, sizeof(r->sock_a), "%s", o.dpu_a);
		snprintf(r->sock_b, sizeof(r->sock_b), "%s", o.dpu_b);
		return 0;
	}
	if (max_msg < (64u << 20))
		max_msg = 64u << 20; /* the daemon default; QPs ask for less */
	snprintf(r->tmpdir, sizeof(r->tmpdir), "/tmp/sdr-perf.XXXXXX");
	if (!mkdtemp(r->tmpdir)) {
		fprintf(stderr, "sdr-perf: mkdtemp: %s\n", strerror(errno));
		r->tmpdir[0] = 0;
		return -1;
	}
	snprintf(r->sock_a, sizeof(r->sock_a), "%s/a.sock", r->tmpdir);
	snprintf(r->sock_b, sizeof(r->sock_b), "%s/b.sock", r->tmpdir);
	if (find_dpu_bin(bin, sizeof(bin))) {
		fprintf(stderr, "sdr-perf: sdr-dpu binary not found (use --dpu-bin)\n");
		return -1;
	}
	g_rig = r;
	if (r->kind == RIG_RING) {
		struct argv_b a = {0};
		av(&a, bin);
		av_common_eal(&a, r->tmpdir + 5, 512);
		snprintf(r->prefix[0], sizeof(r->prefix[0]), "%s", r->tmpdir + 5);
		av_lcores(&a, workers, 0);
		av(&a, "--");
		av(&a, "--ring-pair");
		av_fw_global(&a, max_msg);
		avf(&a, "--name=%s", r->sock_a);
		av(&a, "--ip=10.0.0.1");
		av_fw_inst(&a, r);
		av(&a, "--instance");
		avf(&a, "--name=%s", r->sock_b);
		av(&a, "--ip=10.0.0.2");
		av_fw_inst(&a, r);
		if (spawn(r, a.v))
			return -1;
		return wait_socks(r);
	}
	/* veth: the namespaces, veth ends, addresses and vdevs of the rig
	 * script (hw/x86/rig.sh veth-up); only the daemons are started here */
	if (geteuid() != 0) {
		fprintf(stderr, "sdr-perf: --rig veth needs root (ip netns)\n");
		return -1;
	}
	if (rig_veth_up(r, workers))
		return -1;
	if (!o.port_rate) {
		o.port_rate = "1g";
		o.port_rate_bps = 1000000000ull;
	}
	for (int side = 0; side < 2; side++) {
		struct argv_b a = {0};
		av(&a, "ip");
		av(&a, "netns");
		av(&a, "exec");
		av(&a, r->vars[side ? RV_NS_B : RV_NS_A]);
		av(&a, bin);
		av(&a, "--no-huge");
		av(&a, "--no-shconf");
		av(&a, "--no-pci");
		av(&a, "-m512");
		avf(&a, "--file-prefix=%s-%c", r->tmpdir + 5, side ? 'b' : 'a');
		snprintf(r->prefix[side], sizeof(r->prefix[side]), "%s-%c", r->tmpdir + 5,
			 side ? 'b' : 'a');
		av(&a, "--log-level=lib.eal:warning");
		for (int i = 0; i < o.n_eal_extra; i++)
			av(&a, o.eal_extra[i]);
		av_lcores(&a, workers, side ? 1 : 0);
		av(&a, r->vars[side ? RV_VDEV_B : RV_VDEV_A]);
		av(&a, "--");
		av_fw_global(&a, max_msg);
		avf(&a, "--name=%s", side ? r->sock_b : r->sock_a);
		avf(&a, "--ip=%s", r->vars[side ? RV_DIP_B : RV_DIP_A]);
		avf(&a, "--mac=%s", r->vars[side ? RV_DMAC_B : RV_DMAC_A]);
		avf(&a, "--peer-mac=%s", r->vars[side ? RV_DMAC_A : RV_DMAC_B]);
		av_fw_inst(&a, r);
		if (spawn(r, a.v))
			return -1;
	}
	return wait_socks(r);
}
