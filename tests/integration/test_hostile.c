/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Hostile host against a real daemon pair (ring pair): malformed and
 * out-of-range descriptors written straight into the SQ ring get error
 * completions with the documented status and never disturb the daemon; an
 * unsealed memfd is refused; afterwards a normal transfer still works.
 * Prints one line "expect COUNTER N" per host-interface counter: how many
 * descriptors of that kind it injected (hostile.sh compares them with the
 * daemon's counters, exactly).
 *   test_hostile SOCK_A SOCK_B
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "sdr.h"
#include "sdr_internal.h"
#include "sdr_test.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Wait for exactly one completion with this wr_id. */
static struct sdr_wc wait_wc(struct sdr_ctx *c, uint64_t wr_id)
{
	struct sdr_wc wc;
	double t0 = now_s();
	for (;;) {
		int n = sdr_cq_poll(c, &wc, 1);
		REQUIRE(n >= 0, "sdr_cq_poll: %d", n);
		if (n == 1) {
			REQUIRE(wc.wr_id == wr_id, "completion for wr_id %llu, expected %llu",
				(unsigned long long)wc.wr_id, (unsigned long long)wr_id);
			return wc;
		}
		REQUIRE(now_s() - t0 < 10, "no completion for wr_id %llu",
			(unsigned long long)wr_id);
		usleep(200);
	}
}

int main(int argc, char **argv)
{
	struct sdr_ctx *a, *b;
	struct sdr_qp *qa, *qb, *qx;
	struct sdr_qp_info ia, ib;
	struct sdr_mr *ma, *mb;
	uint8_t *ba, *bb;
	const size_t len = 1 << 20;

	REQUIRE(argc == 3, "usage: test_hostile SOCK_A SOCK_B");
	a = sdr_ctx_open(argv[1], NULL);
	b = sdr_ctx_open(argv[2], NULL);
	REQUIRE(a && b, "attach: %s", strerror(errno));
	qa = sdr_qp_create(a, NULL);
	qb = sdr_qp_create(b, NULL);
	qx = sdr_qp_create(a, NULL); /* never connected */
	REQUIRE(qa && qb && qx, "qp_create: %s", strerror(errno));
	/* a second host on the same DPU, whose QP the first must not touch */
	struct sdr_ctx *a2 = sdr_ctx_open(argv[1], NULL);
	REQUIRE(a2, "attach 2: %s", strerror(errno));
	struct sdr_qp *qo = sdr_qp_create(a2, NULL);
	REQUIRE(qo, "qp_create 2: %s", strerror(errno));
	REQUIRE(!sdr_qp_info_get(qa, &ia) && !sdr_qp_info_get(qb, &ib), "info");
	REQUIRE(!sdr_qp_connect(qa, &ib) && !sdr_qp_connect(qb, &ia), "connect");
	ba = sdr_buf_alloc(a, len);
	bb = sdr_buf_alloc(b, len);
	REQUIRE(ba && bb, "buf_alloc");
	ma = sdr_mr_reg(a, ba, len, 0);
	mb = sdr_mr_reg(b, bb, len, 0);
	REQUIRE(ma && mb, "mr_reg: %s", strerror(errno));

	/* An unsealed memfd could be shrunk under the DPU's mapping: refused. */
	{
		int fd = memfd_create("unsealed", 0);
		REQUIRE(fd >= 0 && ftruncate(fd, 65536) == 0, "memfd");
		void *p = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		struct sdr_mr *m = sdr_mr_reg_fd(a, fd, 0, 65536, p);
		REQUIRE(!m, "unsealed memfd was accepted");
		printf("unsealed memfd refused: %s (%s)\n", strerror(errno), sdr_last_error(a));
	}

	/* Raw hostile descriptors, each with its expected completion status. */
	uint32_t qid = sdr__qp_id(qa), xid = sdr__qp_id(qx), mid = sdr_mr_id(ma);
	struct {
		const char *what;
		struct sdr_sqe d;
		int status;
		const char *counter; /* the daemon's counter for it */
	} cases[] = {
		{"bad opcode",
		 {.opcode = 99, .qp_id = (uint16_t)qid, .length = 1},
		 -EINVAL,
		 "sqe_bad"},
		{"flags set",
		 {.opcode = SDR_SQ_SEND,
		  .flags = 1,
		  .qp_id = (uint16_t)qid,
		  .mr_id = mid,
		  .length = 1},
		 -EINVAL,
		 "sqe_bad_flags"}, /* RESUME: a restored QP's, on RECV only */
		{"flag DONE on a QP not restored",
		 {.opcode = SDR_SQ_SEND,
		  .flags = SDR_SQE_F_DONE,
		  .qp_id = (uint16_t)qid,
		  .mr_id = mid,
		  .length = 1},
		 -EINVAL,
		 "sqe_bad_flags"},
		{"unknown flag",
		 {.opcode = SDR_SQ_SEND,
		  .flags = 0x80,
		  .qp_id = (uint16_t)qid,
		  .mr_id = mid,
		  .length = 1},
		 -EINVAL,
		 "sqe_bad"},
		{"reserved set",
		 {.opcode = SDR_SQ_SEND,
		  .qp_id = (uint16_t)qid,
		  .mr_id = mid,
		  .length = 1,
		  .reserved = {1}},
		 -EINVAL,
		 "sqe_bad"},
		{"unknown QP",
		 {.opcode = SDR_SQ_SEND, .qp_id = 250, .mr_id = mid, .length = 1},
		 -EBADF,
		 "sqe_bad_qp"},
		{"QP of another context",
		 {.opcode = SDR_SQ_SEND,
		  .qp_id = (uint16_t)sdr__qp_id(qo),
		  .mr_id = mid,
		  .length = 1},
		 -EBADF,
		 "sqe_bad_qp"},
		{"unknown MR",
		 {.opcode = SDR_SQ_SEND, .qp_id = (uint16_t)qid, .mr_id = 200, .length = 1},
		 -ENOENT,
		 "sqe_bad_mr"},
		{"huge MR id",
		 {.opcode = SDR_SQ_RECV, .qp_id = (uint16_t)qid, .mr_id = 0xFFFFFFFF, .length = 1},
		 -ENOENT,
		 "sqe_bad_mr"},
		{"range past MR end",
		 {.opcode = SDR_SQ_SEND,
		  .qp_id = (uint16_t)qid,
		  .mr_id = mid,
		  .offset = len - 10,
		  .length = 100},
		 -ERANGE,
		 "sqe_bad_range"},
		{"offset overflow",
		 {.opcode = SDR_SQ_RECV,
		  .qp_id = (uint16_t)qid,
		  .mr_id = mid,
		  .offset = UINT64_MAX - 5,
		  .length = 100},
		 -ERANGE,
		 "sqe_bad_range"},
		{"zero length",
		 {.opcode = SDR_SQ_SEND, .qp_id = (uint16_t)qid, .mr_id = mid, .length = 0},
		 -EMSGSIZE,
		 "sqe_bad_len"},
		{"over max_msg",
		 {.opcode = SDR_SQ_RECV,
		  .qp_id = (uint16_t)qid,
		  .mr_id = mid,
		  .length = 0xFFFFFFFF},
		 -EMSGSIZE,
		 "sqe_bad_len"},
		{"unconnected QP send",
		 {.opcode = SDR_SQ_SEND, .qp_id = (uint16_t)xid, .mr_id = mid, .length = 1},
		 -ENOTCONN,
		 "sqe_not_conn"},
		{"unconnected QP recv",
		 {.opcode = SDR_SQ_RECV, .qp_id = (uint16_t)xid, .mr_id = mid, .length = 1},
		 -ENOTCONN,
		 "sqe_not_conn"},
	};
	const unsigned ncases = sizeof(cases) / sizeof(cases[0]);
	for (unsigned i = 0; i < ncases; i++) {
		cases[i].d.wr_id = 1000 + i;
		REQUIRE(sdr__sq_raw_post(a, &cases[i].d) == 0, "raw post %s", cases[i].what);
		struct sdr_wc wc = wait_wc(a, 1000 + i);
		REQUIRE(wc.status == cases[i].status, "%s: status %d (%s), expected %d",
			cases[i].what, wc.status, strerror(-wc.status), cases[i].status);
		printf("hostile descriptor '%s' -> %s\n", cases[i].what, strerror(-wc.status));
	}
	/* References to nothing fold into nothing: no completion, just a counter. */
	{
		struct sdr_sqe d = {
			.opcode = SDR_SQ_RECV_COMPLETE, .qp_id = (uint16_t)qid, .seq = 777};
		REQUIRE(sdr__sq_raw_post(a, &d) == 0, "raw post");
		struct sdr_sqe e = {
			.opcode = SDR_SQ_STREAM_END, .qp_id = (uint16_t)qid, .seq = 12345};
		REQUIRE(sdr__sq_raw_post(a, &e) == 0, "raw post");
	}
	/* what the daemon must have counted, per counter (first occurrence
	 * prints the total of its kind) */
	for (unsigned i = 0; i < ncases; i++) {
		unsigned n = 0, first = 1;
		for (unsigned j = 0; j < ncases; j++) {
			first &= !(j < i && !strcmp(cases[j].counter, cases[i].counter));
			n += !strcmp(cases[j].counter, cases[i].counter);
		}
		if (first)
			printf("expect %s %u\n", cases[i].counter, n);
	}
	printf("expect sqe_no_target 2\n"); /* the RECV_COMPLETE and STREAM_END above */

	/* The daemon is unharmed: a normal 1 MiB transfer with an immediate. */
	for (size_t i = 0; i < len; i++)
		ba[i] = (uint8_t)(i * 31 + 7);
	memset(bb, 0, len);
	struct sdr_recv_handle *rh;
	struct sdr_send_handle *sh;
	struct sdr_recv_wr rw = {.mr = mb, .addr = bb, .length = (uint32_t)len, .wr_id = 1};
	struct sdr_send_wr sw = {
		.mr = ma, .addr = ba, .length = (uint32_t)len, .imm = 0xC0FFEE42, .wr_id = 2};
	REQUIRE(sdr_recv_post(qb, &rw, &rh) == 0, "recv_post");
	REQUIRE(sdr_send_post(qa, &sw, &sh) == 0, "send_post");
	double t0 = now_s();
	int rs = 0, ss = 0;
	while (!rs || !ss) {
		if (!ss)
			ss = sdr_send_poll(sh);
		if (!rs)
			rs = sdr_recv_poll(rh);
		REQUIRE(ss >= 0 && rs >= 0, "poll: send %d recv %d", ss, rs);
		REQUIRE(now_s() - t0 < 20, "transfer did not complete (send %d recv %d chunks %d)",
			ss, rs, sdr_recv_chunks_done(rh));
		usleep(100);
	}
	REQUIRE(rs == SDR_POLL_DONE, "receive completed partially");
	REQUIRE(memcmp(ba, bb, len) == 0, "payload differs");
	uint32_t imm;
	REQUIRE(sdr_recv_imm_get(rh, &imm) == 0 && imm == 0xC0FFEE42, "immediate 0x%x", imm);
	printf("normal transfer after hostile descriptors: 1 MiB bit-exact, imm ok\n");
	sdr_ctx_close(a2);
	sdr_ctx_close(a);
	sdr_ctx_close(b);
	return 0;
}
