/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receive completion flags against a real daemon pair (ring pair): a receive
 * the host completes early (sdr_recv_complete) says which part is missing.
 *   SDR_CQE_F_PARTIAL      data missing (bitmap not full)
 *   SDR_CQE_F_IMM_PARTIAL  immediate incomplete (then no SDR_CQE_F_IMM)
 * Streamed sends that are not ended leave the receiver with exactly the
 * packets we chose: a stream's immediate-only packets (messages of fewer
 * than 8 packets) only leave at sdr_send_stream_end().
 *   test_partial SOCK_A SOCK_B
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sdr.h"
#include "sdr_test.h"

#define MTU 4096u

static struct sdr_ctx *ca, *cb;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The receive completion of @p rh (sender completions on ca are drained). */
static struct sdr_wc wait_recv(struct sdr_recv_handle *rh)
{
	struct sdr_wc wc;
	double t0 = now_s();

	for (;;) {
		REQUIRE(sdr_cq_poll(ca, NULL, 0) >= 0, "sdr_cq_poll(a)");
		int n = sdr_cq_poll(cb, &wc, 1);
		REQUIRE(n >= 0, "sdr_cq_poll(b): %d", n);
		if (n == 1) {
			REQUIRE(wc.handle == rh && wc.opcode == SDR_SQ_RECV && wc.status == 0,
				"unexpected completion wr_id %llu status %d",
				(unsigned long long)wc.wr_id, wc.status);
			return wc;
		}
		REQUIRE(now_s() - t0 < 10, "no receive completion");
		usleep(200);
	}
}

/* Wait until @p rh has @p chunks chunks (and, if @p imm_known, the whole
 * immediate) in its shared state. */
static void wait_landed(struct sdr_recv_handle *rh, int chunks, int imm_known)
{
	double t0 = now_s();
	uint32_t imm;

	while (sdr_recv_chunks_done(rh) < chunks || (imm_known && sdr_recv_imm_get(rh, &imm))) {
		REQUIRE(sdr_cq_poll(ca, NULL, 0) >= 0, "sdr_cq_poll(a)");
		REQUIRE(now_s() - t0 < 10, "only %d of %d chunks landed", sdr_recv_chunks_done(rh),
			chunks);
		usleep(200);
	}
}

static void wait_send(struct sdr_send_handle *sh)
{
	double t0 = now_s();
	int rc;

	while ((rc = sdr_send_poll(sh)) == 0) {
		REQUIRE(sdr_cq_poll(cb, NULL, 0) >= 0, "sdr_cq_poll(b)");
		REQUIRE(now_s() - t0 < 10, "send did not complete");
		usleep(200);
	}
	REQUIRE(rc == 1, "send completed with %d", rc);
}

static void expect(const char *what, const struct sdr_wc *wc, struct sdr_recv_handle *rh,
		   uint8_t flags, uint32_t length, int poll)
{
	REQUIRE(wc->flags == flags, "%s: flags 0x%x, expected 0x%x", what, wc->flags, flags);
	REQUIRE(wc->length == length, "%s: length %u, expected %u", what, wc->length, length);
	REQUIRE(sdr_recv_poll(rh) == poll, "%s: sdr_recv_poll %d, expected %d", what,
		sdr_recv_poll(rh), poll);
	printf("%s: flags 0x%x (%s%s%s), length %u\n", what, wc->flags,
	       flags & SDR_CQE_F_PARTIAL ? "PARTIAL " : "", flags & SDR_CQE_F_IMM ? "IMM " : "",
	       flags & SDR_CQE_F_IMM_PARTIAL ? "IMM_PARTIAL" : "", wc->length);
}

int main(int argc, char **argv)
{
	struct sdr_qp_attr attr = {.chunk_pkts = 1, .max_msg = 1 << 20};
	struct sdr_qp *qa, *qb;
	struct sdr_qp_info ia, ib;
	struct sdr_mr *ma, *mb;
	struct sdr_recv_handle *rh;
	struct sdr_send_handle *sh;
	struct sdr_wc wc;
	uint8_t *ba, *bb;
	uint32_t imm;
	const size_t len = 1 << 20;

	REQUIRE(argc == 3, "usage: test_partial SOCK_A SOCK_B");
	ca = sdr_ctx_open(argv[1], NULL);
	cb = sdr_ctx_open(argv[2], NULL);
	REQUIRE(ca && cb, "attach: %s", strerror(errno));
	qa = sdr_qp_create(ca, &attr);
	qb = sdr_qp_create(cb, &attr);
	REQUIRE(qa && qb, "qp_create: %s", strerror(errno));
	REQUIRE(!sdr_qp_info_get(qa, &ia) && !sdr_qp_info_get(qb, &ib), "info");
	REQUIRE(!sdr_qp_connect(qa, &ib) && !sdr_qp_connect(qb, &ia), "connect");
	ba = sdr_buf_alloc(ca, len);
	bb = sdr_buf_alloc(cb, len);
	REQUIRE(ba && bb, "buf_alloc");
	ma = sdr_mr_reg(ca, ba, len, 0);
	mb = sdr_mr_reg(cb, bb, len, 0);
	REQUIRE(ma && mb, "mr_reg: %s", strerror(errno));
	for (size_t i = 0; i < len; i++)
		ba[i] = (uint8_t)(i * 13 + 1);

	/* 0: 16 packets, only packets 0..7 sent: the immediate is whole (every
	 * packet carries one nibble), half the data is missing. */
	{
		struct sdr_recv_wr rw = {.mr = mb, .addr = bb, .length = 16 * MTU, .wr_id = 10};
		struct sdr_stream_start_wr st = {
			.length = 16 * MTU, .imm = 0x89ABCDEF, .wr_id = 20};
		struct sdr_stream_wr piece = {.mr = ma, .addr = ba, .length = 8 * MTU};

		REQUIRE(sdr_recv_post(qb, &rw, &rh) == 0, "recv_post 0");
		REQUIRE(sdr_send_stream_start(qa, &st, &sh) == 0, "stream_start 0");
		REQUIRE(sdr_send_stream_continue(sh, &piece) == 0, "stream_continue 0");
		wait_landed(rh, 8, 1);
		REQUIRE(sdr_recv_complete(rh) == 0, "recv_complete 0");
		wc = wait_recv(rh);
		expect("data missing, immediate whole", &wc, rh, SDR_CQE_F_PARTIAL | SDR_CQE_F_IMM,
		       8 * MTU, SDR_POLL_PARTIAL);
		REQUIRE(wc.imm == 0x89ABCDEF && sdr_recv_imm_get(rh, &imm) == 0 &&
				imm == 0x89ABCDEF,
			"immediate 0x%x", wc.imm);
		piece.addr = ba + 8 * MTU;
		piece.msg_offset = 8 * MTU;
		REQUIRE(sdr_send_stream_continue(sh, &piece) == 0, "stream_continue 0b");
		REQUIRE(sdr_send_stream_end(sh) == 0, "stream_end 0");
		wait_send(sh);
	}
	/* 1: one packet of 100 bytes, the stream not ended: every byte is in,
	 * the immediate has 1 of 8 nibbles. */
	{
		struct sdr_recv_wr rw = {.mr = mb, .addr = bb, .length = 100, .wr_id = 11};
		struct sdr_stream_start_wr st = {.length = 100, .imm = 0x12345678, .wr_id = 21};
		struct sdr_stream_wr piece = {.mr = ma, .addr = ba, .length = 100};

		REQUIRE(sdr_recv_post(qb, &rw, &rh) == 0, "recv_post 1");
		REQUIRE(sdr_send_stream_start(qa, &st, &sh) == 0, "stream_start 1");
		REQUIRE(sdr_send_stream_continue(sh, &piece) == 0, "stream_continue 1");
		wait_landed(rh, 1, 0);
		REQUIRE(sdr_recv_imm_get(rh, &imm) == -EAGAIN,
			"immediate complete without its packets");
		REQUIRE(sdr_recv_complete(rh) == 0, "recv_complete 1");
		wc = wait_recv(rh);
		expect("data whole, immediate missing", &wc, rh, SDR_CQE_F_IMM_PARTIAL, 100,
		       SDR_POLL_DONE);
		REQUIRE(sdr_recv_imm_get(rh, &imm) == -EAGAIN, "immediate after completion");
		REQUIRE(memcmp(ba, bb, 100) == 0, "payload of message 1");
		REQUIRE(sdr_send_stream_end(sh) == 0, "stream_end 1");
		wait_send(sh);
	}
	/* 2: nothing arrived yet: both parts missing. */
	{
		struct sdr_recv_wr rw = {.mr = mb, .addr = bb, .length = 5000, .wr_id = 12};
		struct sdr_send_wr sw = {
			.mr = ma, .addr = ba, .length = 5000, .imm = 7, .wr_id = 22};

		REQUIRE(sdr_recv_post(qb, &rw, &rh) == 0, "recv_post 2");
		REQUIRE(sdr_recv_complete(rh) == 0, "recv_complete 2");
		wc = wait_recv(rh);
		expect("nothing arrived", &wc, rh, SDR_CQE_F_PARTIAL | SDR_CQE_F_IMM_PARTIAL, 0,
		       SDR_POLL_PARTIAL);
		REQUIRE(sdr_send_post(qa, &sw, &sh) == 0, "send_post 2");
		wait_send(sh);
	}
	/* 3: a whole message: neither flag. */
	{
		struct sdr_recv_wr rw = {.mr = mb, .addr = bb, .length = 5000, .wr_id = 13};
		struct sdr_send_wr sw = {
			.mr = ma, .addr = ba, .length = 5000, .imm = 0xC0FFEE, .wr_id = 23};

		memset(bb, 0, 5000);
		REQUIRE(sdr_recv_post(qb, &rw, &rh) == 0, "recv_post 3");
		REQUIRE(sdr_send_post(qa, &sw, &sh) == 0, "send_post 3");
		wc = wait_recv(rh);
		expect("whole message", &wc, rh, SDR_CQE_F_IMM, 5000, SDR_POLL_DONE);
		REQUIRE(wc.imm == 0xC0FFEE, "immediate 0x%x", wc.imm);
		REQUIRE(memcmp(ba, bb, 5000) == 0, "payload of message 3");
		wait_send(sh);
	}
	/* a destroyed QP's pending completions are discarded, never returned */
	{
		struct sdr_recv_wr rw = {.mr = mb, .addr = bb, .length = 5000, .wr_id = 30};
		struct sdr_ctx_stats st;
		int n = 0;

		CHECK(sdr_recv_post(qb, &rw, &rh) == 0, "recv_post 4");
		/* let the worker take the descriptor (else the destroy overtakes
		 * it and it completes as "no such QP" instead: discarded too, but
		 * not a cancelled receive in the daemon's counts) */
		usleep(100000);
		CHECK(sdr_qp_destroy(qb) == 0, "qp_destroy");
		for (double t0 = now_s(); now_s() - t0 < 0.5;)
			n += sdr_cq_poll(cb, &wc, 1);
		CHECK(n == 0, "%d completion(s) of a destroyed QP returned (wr_id 0x%llx)", n,
		      (unsigned long long)wc.wr_id);
		CHECK(sdr_ctx_stats_get(cb, &st) == 0 && st.wc_orphaned == 1,
		      "wc_orphaned %llu, want 1 (the receive's -ECANCELED)",
		      (unsigned long long)st.wc_orphaned);
		printf("destroyed QP: its pending receive's completion discarded (wc_orphaned "
		       "1)\n");
	}
	sdr_ctx_close(ca);
	sdr_ctx_close(cb);
	return 0;
}
