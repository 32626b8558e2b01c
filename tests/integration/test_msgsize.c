/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A send longer than the receive posted for it fails with -EMSGSIZE at BOTH
 * ends (docs/host-api.md): the sender's completion and the receiver's
 * completion of that receive, which must not wait forever. Against a real
 * daemon pair (ring pair), for each reliability named on the command line
 * (none, sr, ec = RS(8,2), auto), one QP pair each:
 *
 *   message  receive  send    expected (both ends)
 *   0        1000 B   2000 B  -EMSGSIZE (one packet, longer)
 *   1        4096 B   4096 B  0, bit-exact, immediate 1
 *   2        3 B      5000 B  -EMSGSIZE (two packets)
 *   3        10 B     1 B     0 (shorter is fine), length 1, immediate 3
 *   4        64 KiB   64 KiB  0 (the QP still works)
 *
 * Nothing is written into a receive buffer of a failed receive past its
 * posted length (guard bytes after every buffer stay untouched). Every
 * completion must arrive within 8 s (none of them waits for the reliable
 * QPs' outage horizon; a receive that saw no packet never times out on its
 * own).
 *   test_msgsize SOCK_A SOCK_B REL...
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sdr.h"
#include "tools/sdr_pattern.h"

#define NMSG 5
#define SLOT (128 * 1024)
#define GUARD 0xEE

static const uint32_t rlen[NMSG] = {1000, 4096, 3, 10, 65536};
static const uint32_t slen[NMSG] = {2000, 4096, 5000, 1, 65536};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int expect_status(int i)
{
	return slen[i] > rlen[i] ? -EMSGSIZE : 0;
}

/* one QP pair of reliability @p rel: returns the number of failed checks */
static int run(struct sdr_ctx *a, struct sdr_ctx *b, const char *relname)
{
	struct sdr_qp_attr attr = {.max_msg = 65536};
	struct sdr_qp_info ia, ib;
	struct sdr_qp *qa, *qb;
	struct sdr_mr *ma, *mb;
	uint8_t *ba, *bb;
	struct sdr_wc sw[NMSG], rw[NMSG];
	int got_s[NMSG] = {0}, got_r[NMSG] = {0}, ns = 0, nr = 0, bad = 0;
	double t0;

	/* none, sr, auto, or an EC code; "ec" alone is RS(8,2) here */
	static const struct sdr_scheme ec_default = {SDR_REL_EC, SDR_EC_RS, 8, 2};
	struct sdr_scheme sch;

	if (sdr_scheme_parse(relname, 0, &ec_default, &sch)) {
		fprintf(stderr, "unknown reliability %s\n", relname);
		return 1;
	}
	attr.reliability = sch.rel;
	attr.ec_code = sch.code;
	attr.ec_k = (uint8_t)sch.k;
	attr.ec_m = (uint8_t)sch.m;
	qa = sdr_qp_create(a, &attr);
	qb = sdr_qp_create(b, &attr);
	if (!qa || !qb || sdr_qp_info_get(qa, &ia) || sdr_qp_info_get(qb, &ib) ||
	    sdr_qp_connect(qa, &ib) || sdr_qp_connect(qb, &ia)) {
		fprintf(stderr, "%s: QP setup: %s\n", relname, strerror(errno));
		return 1;
	}
	ba = sdr_buf_alloc(a, NMSG * SLOT);
	bb = sdr_buf_alloc(b, NMSG * SLOT);
	if (!ba || !bb) {
		fprintf(stderr, "%s: buffers: %s\n", relname, strerror(errno));
		return 1;
	}
	memset(bb, GUARD, NMSG * SLOT);
	ma = sdr_mr_reg(a, ba, NMSG * SLOT, 0);
	mb = sdr_mr_reg(b, bb, NMSG * SLOT, 0);
	if (!ma || !mb) {
		fprintf(stderr, "%s: MR: %s\n", relname, strerror(errno));
		return 1;
	}
	for (int i = 0; i < NMSG; i++) {
		struct sdr_recv_wr r = {
			.mr = mb, .addr = bb + i * SLOT, .length = rlen[i], .wr_id = 100 + i};
		int rc = sdr_recv_post(qb, &r, NULL);
		if (rc) {
			fprintf(stderr, "%s: recv_post %d: %d\n", relname, i, rc);
			return 1;
		}
	}
	for (int i = 0; i < NMSG; i++) {
		struct sdr_send_wr s = {.mr = ma,
					.addr = ba + i * SLOT,
					.length = slen[i],
					.imm = (uint32_t)i,
					.wr_id = 200 + i};
		sdr_pattern_fill(ba + i * SLOT, slen[i], 7, i);
		int rc = sdr_send_post(qa, &s, NULL);
		if (rc) {
			fprintf(stderr, "%s: send_post %d: %d\n", relname, i, rc);
			return 1;
		}
	}
	t0 = now_s();
	while ((ns < NMSG || nr < NMSG) && now_s() - t0 < 8) {
		struct sdr_wc wc;
		int n = sdr_cq_poll(a, &wc, 1);
		if (n == 0)
			n = sdr_cq_poll(b, &wc, 1);
		if (n < 0) {
			fprintf(stderr, "%s: cq_poll: %d\n", relname, n);
			return 1;
		}
		if (n == 0) {
			usleep(200);
			continue;
		}
		if (wc.qp == qa && wc.wr_id >= 200 && wc.wr_id < 200 + NMSG &&
		    !got_s[wc.wr_id - 200]) {
			got_s[wc.wr_id - 200] = 1;
			sw[wc.wr_id - 200] = wc;
			ns++;
		} else if (wc.qp == qb && wc.wr_id >= 100 && wc.wr_id < 100 + NMSG &&
			   !got_r[wc.wr_id - 100]) {
			got_r[wc.wr_id - 100] = 1;
			rw[wc.wr_id - 100] = wc;
			nr++;
		} else {
			printf("FAIL %s: unexpected completion wr_id %llu status %d\n", relname,
			       (unsigned long long)wc.wr_id, wc.status);
			bad++;
		}
	}
	for (int i = 0; i < NMSG; i++) {
		int want = expect_status(i);
		const uint8_t *p = bb + i * SLOT;

		if (!got_s[i]) {
			printf("FAIL %s: message %d (send %u B into %u B): no send completion\n",
			       relname, i, slen[i], rlen[i]);
			bad++;
		} else if (sw[i].status != want) {
			printf("FAIL %s: message %d (send %u B into %u B): send status %d, "
			       "expected %d\n",
			       relname, i, slen[i], rlen[i], sw[i].status, want);
			bad++;
		}
		if (!got_r[i]) {
			printf("FAIL %s: message %d (send %u B into %u B): no receive completion\n",
			       relname, i, slen[i], rlen[i]);
			bad++;
		} else if (rw[i].status != want) {
			printf("FAIL %s: message %d (send %u B into %u B): receive status %d, "
			       "expected %d\n",
			       relname, i, slen[i], rlen[i], rw[i].status, want);
			bad++;
		} else if (want == 0) {
			if (rw[i].length != slen[i] || (rw[i].flags & SDR_CQE_F_PARTIAL) ||
			    !(rw[i].flags & SDR_CQE_F_IMM) || rw[i].imm != (uint32_t)i ||
			    sdr_pattern_check(p, slen[i], 7, i) != slen[i]) {
				printf("FAIL %s: message %d: length %u flags 0x%x imm %u or data "
				       "wrong\n",
				       relname, i, rw[i].length, rw[i].flags, rw[i].imm);
				bad++;
			}
		}
		/* nothing past the posted length */
		for (uint32_t k = rlen[i]; k < SLOT; k++)
			if (p[k] != GUARD) {
				printf("FAIL %s: message %d: byte %u past the posted %u B "
				       "written\n",
				       relname, i, k, rlen[i]);
				bad++;
				break;
			}
		printf("%s: message %d: send %u B into a %u B receive: send %s%d, receive %s%d\n",
		       relname, i, slen[i], rlen[i], got_s[i] ? "" : "none ",
		       got_s[i] ? sw[i].status : 0, got_r[i] ? "" : "none ",
		       got_r[i] ? rw[i].status : 0);
	}
	sdr_qp_destroy(qa);
	sdr_qp_destroy(qb);
	return bad;
}

int main(int argc, char **argv)
{
	struct sdr_ctx *a, *b;
	int bad = 0;

	if (argc < 4) {
		fprintf(stderr, "usage: test_msgsize SOCK_A SOCK_B REL...\n");
		return 2;
	}
	a = sdr_ctx_open(argv[1], NULL);
	b = sdr_ctx_open(argv[2], NULL);
	if (!a || !b) {
		fprintf(stderr, "attach: %s\n", strerror(errno));
		return 1;
	}
	for (int i = 3; i < argc; i++) {
		int f = run(a, b, argv[i]);
		printf("%s: %s\n", argv[i], f ? "FAILED" : "ok");
		bad += f;
	}
	sdr_ctx_close(a);
	sdr_ctx_close(b);
	return bad ? 1 : 0;
}
