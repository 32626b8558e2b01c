/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Multi-channel QPs through libsdr against real daemons (chan_ring.sh;
 * docs/host-api.md "Channels"). Host test program, layer tests.
 *   test_chan errors SOCK          a daemon of one worker: channels 2 is
 *                                  ENOTSUP (with the reason), 9 EINVAL, 1 an
 *                                  ordinary QP
 *   test_chan api SOCK_A SOCK_B    a ring pair of two workers, reliability
 *                                  sr: the calls a W = 2 QP refuses, then
 *                                  messages whose completions (sdr_cq_poll
 *                                  and the handles) come in posting order,
 *                                  bit-exact, with the summed length, the
 *                                  immediate and a merged bitmap; short
 *                                  messages (one stripe or less: channel 1
 *                                  carries a filler) with and without an
 *                                  immediate, nothing past them written
 *                                  (the byte a filler lands on put back);
 *                                  short receives, and a message one byte
 *                                  longer than its receive refused there
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "sdr.h"
#include "sdr_test.h"
#include "tools/sdr_pattern.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct sdr_qp *mk(struct sdr_ctx *c, unsigned w, uint8_t rel)
{
	struct sdr_qp_attr_ext x = {.size = sizeof(x), .channels = w};

	x.attr.max_msg = 1 << 20;
	x.attr.chunk_pkts = 1;
	x.attr.reliability = rel;
	return sdr_qp_create_ext(c, &x);
}

static int errors(const char *sock)
{
	struct sdr_ctx *c = sdr_ctx_open(sock, NULL);
	struct sdr_qp *q;

	REQUIRE(c != NULL, " attach %s: %s", sock, sdr_last_error(NULL));
	q = mk(c, 2, SDR_REL_SR);
	CHECK(q == NULL && errno == ENOTSUP, " channels 2 on one worker: %p %s", (void *)q,
	      strerror(errno));
	CHECK(strstr(sdr_last_error(c), "workers") != NULL, " reason: %s", sdr_last_error(c));
	printf("channels 2 on a daemon of one worker: %s (%s)\n", strerror(errno),
	       sdr_last_error(c));
	q = mk(c, 9, SDR_REL_SR);
	CHECK(q == NULL && errno == EINVAL, " channels 9");
	printf("channels 9: %s (%s)\n", strerror(errno), sdr_last_error(c));
	q = mk(c, 1, SDR_REL_SR);
	CHECK(q != NULL && sdr_qp_channels(q) == 1, " channels 1");
	if (q) {
		struct sdr_qp_info i;
		CHECK(sdr_qp_info_get(q, &i) == 0 && sdr_qp_infos_get(q, &i, 1) == 0);
		CHECK(sdr_qp_infos_get(q, &i, 2) == -EINVAL);
	}
	sdr_ctx_close(c);
	return t_finish("test_chan errors");
}

/* the sizes of the api case: 1..9 stripes of 4 KiB, short last stripes, and
 * short messages of one stripe or less; some without an immediate */
#define NMSG 20
static uint32_t msg_len(unsigned i)
{
	static const uint32_t l[] = {4097, 8192, 1, 12289, 65536, 100, 1 << 20, 4096, 300000, 4095};
	return l[i % 10];
}
static uint32_t msg_imm(unsigned i)
{
	return i % 7 == 5 ? 0 : 0x1000 + i;
}

static int api(const char *sa, const char *sb)
{
	struct sdr_ctx *a = sdr_ctx_open(sa, NULL), *b = sdr_ctx_open(sb, NULL);
	struct sdr_qp_info ia[2], ib[2], one;
	struct sdr_send_handle *sh[NMSG];
	struct sdr_recv_handle *rh[NMSG];
	const size_t slot = 1 << 20;
	struct sdr_qp *qa, *qb;
	struct sdr_mr *ma, *mb;
	uint8_t *ba, *bb;
	unsigned sdone = 0, rdone = 0;
	double t0;

	REQUIRE(a && b, " attach");
	qa = mk(a, 2, SDR_REL_SR);
	qb = mk(b, 2, SDR_REL_SR);
	REQUIRE(qa && qb, " create W=2: %s / %s", sdr_last_error(a), sdr_last_error(b));
	CHECK(sdr_qp_channels(qa) == 2);
	CHECK(sdr_qp_info_get(qa, &one) == -EINVAL, " info_get on W=2");
	printf("sdr_qp_info_get on W=2: %s\n", sdr_last_error(a));
	CHECK(sdr_qp_infos_get(qa, ia, 1) == -EINVAL);
	REQUIRE(sdr_qp_infos_get(qa, ia, 2) == 0 && sdr_qp_infos_get(qb, ib, 2) == 0);
	CHECK(ia[0].qpn != ia[1].qpn, " two QPs of the daemon");
	CHECK(sdr_qp_connect(qa, &ib[0]) == -EINVAL, " sdr_qp_connect on W=2");
	CHECK(sdr_qp_connect_infos(qa, ib, 1) == -EINVAL, " one info for W=2");
	printf("sdr_qp_connect_infos with 1 info: %s\n", sdr_last_error(a));
	REQUIRE(sdr_qp_connect_infos(qa, ib, 2) == 0 && sdr_qp_connect_infos(qb, ia, 2) == 0,
		" connect: %s / %s", sdr_last_error(a), sdr_last_error(b));
	ba = sdr_buf_alloc(a, NMSG * slot);
	bb = sdr_buf_alloc(b, NMSG * slot);
	REQUIRE(ba && bb);
	ma = sdr_mr_reg(a, ba, NMSG * slot, 0);
	mb = sdr_mr_reg(b, bb, NMSG * slot, 0);
	REQUIRE(ma && mb);
	{
		struct sdr_stream_start_wr st = {.length = 8192};
		struct sdr_send_handle *h;

		CHECK(sdr_send_stream_start(qa, &st, &h) == -EOPNOTSUPP, " stream on W=2");
	}
	memset(bb, 0xEE, NMSG * slot);
	for (unsigned i = 0; i < NMSG; i++) {
		struct sdr_recv_wr rw = {.mr = mb,
					 .addr = bb + i * slot,
					 .length = (uint32_t)slot,
					 .wr_id = 100 + i};
		REQUIRE(sdr_recv_post(qb, &rw, &rh[i]) == 0, " recv %u: %s", i, sdr_last_error(b));
	}
	for (unsigned i = 0; i < NMSG; i++) {
		struct sdr_send_wr sw = {.mr = ma,
					 .addr = ba + i * slot,
					 .length = msg_len(i),
					 .imm = msg_imm(i),
					 .wr_id = 200 + i};
		sdr_pattern_fill(ba + i * slot, msg_len(i), 5, i);
		REQUIRE(sdr_send_post(qa, &sw, &sh[i]) == 0, " send %u: %s", i, sdr_last_error(a));
	}
	t0 = now_s();
	while ((sdone < NMSG || rdone < NMSG) && now_s() - t0 < 30) {
		struct sdr_wc wc[8];
		int n = sdr_cq_poll(b, wc, 8);

		for (int k = 0; k < n; k++, rdone++) {
			unsigned i = rdone;
			CHECK(wc[k].qp == qb && wc[k].wr_id == 100 + i,
			      " recv completion %u: wr_id %llu", i,
			      (unsigned long long)wc[k].wr_id);
			CHECK(wc[k].handle == rh[i] && wc[k].seq == i);
			CHECK(wc[k].status == 0 && wc[k].length == msg_len(i),
			      " recv %u: %d len %u", i, wc[k].status, wc[k].length);
			CHECK((wc[k].flags & SDR_CQE_F_IMM) && wc[k].imm == msg_imm(i),
			      " recv %u: immediate %#x", i, wc[k].imm);
		}
		n = sdr_cq_poll(a, wc, 8);
		for (int k = 0; k < n; k++, sdone++) {
			CHECK(wc[k].qp == qa && wc[k].wr_id == 200 + sdone && wc[k].status == 0,
			      " send completion %u: wr_id %llu status %d", sdone,
			      (unsigned long long)wc[k].wr_id, wc[k].status);
		}
		BAIL_IF_MANY();
	}
	REQUIRE(sdone == NMSG && rdone == NMSG, " completions: %u sends %u receives", sdone, rdone);
	for (unsigned i = 0; i < NMSG; i++) {
		const uint64_t *bm;
		size_t nc, set = 0;
		uint32_t imm = 0;
		uint8_t *p = bb + i * slot;

		CHECK(sdr_recv_poll(rh[i]) == SDR_POLL_DONE);
		CHECK(sdr_send_poll(sh[i]) == SDR_POLL_DONE);
		CHECK(sdr_pattern_check(p, msg_len(i), 5, i) == msg_len(i),
		      " message %u not bit-exact", i);
		CHECK(msg_len(i) == slot || p[msg_len(i)] == 0xEE,
		      " message %u: byte past it written", i);
		CHECK(msg_len(i) > 4096 || p[4096] == 0xEE,
		      " message %u: the filler's byte at 4096 not put back", i);
		CHECK(sdr_recv_imm_get(rh[i], &imm) == 0 && imm == msg_imm(i));
		REQUIRE(sdr_recv_bitmap_get(rh[i], &bm, &nc) == 0);
		for (size_t c = 0; c < nc; c++)
			set += (bm[c / 64] >> (c % 64)) & 1;
		CHECK(nc == slot / 4096 && set == (msg_len(i) + 4095) / 4096,
		      " message %u: merged bitmap %zu of %zu set", i, set, nc);
		CHECK(sdr_recv_chunks_done(rh[i]) == (int)((msg_len(i) + 4095) / 4096));
	}
	printf("%u messages of W=2 (%s): completed in posting order, bit-exact, merged bitmaps\n",
	       NMSG, "1 B - 1 MiB, 6 of one stripe or less");
	/* short receives: 100 bytes into a receive of 100 (channel 1 on the fill
	 * region), then 4097 bytes into one of 4096: channel 1's byte has no
	 * place, the receive fails with EMSGSIZE (the send completes: its
	 * channels' receives took what they carried) */
	{
		static const uint32_t rl[] = {100, 4096}, sl[] = {100, 4097};

		memset(bb, 0xEE, 8192);
		for (unsigned i = 0; i < 2; i++) {
			struct sdr_recv_wr rw = {.mr = mb, .addr = bb, .length = rl[i]};
			struct sdr_send_wr sw = {.mr = ma, .addr = ba, .length = sl[i], .imm = 7};
			int rr = SDR_POLL_PENDING, ss = SDR_POLL_PENDING;

			sdr_pattern_fill(ba, sl[i], 6, i);
			REQUIRE(sdr_recv_post(qb, &rw, &rh[0]) == 0, " short recv: %s",
				sdr_last_error(b));
			REQUIRE(sdr_send_post(qa, &sw, &sh[0]) == 0, " short send: %s",
				sdr_last_error(a));
			t0 = now_s();
			while ((rr == SDR_POLL_PENDING || ss == SDR_POLL_PENDING) &&
			       now_s() - t0 < 10) {
				struct sdr_wc wc[4];

				sdr_cq_poll(a, wc, 4);
				sdr_cq_poll(b, wc, 4);
				rr = sdr_recv_poll(rh[0]);
				ss = sdr_send_poll(sh[0]);
			}
			CHECK(ss == SDR_POLL_DONE, " send of %u into %u: %d", sl[i], rl[i], ss);
			if (i == 0) {
				CHECK(rr == SDR_POLL_DONE &&
					      sdr_pattern_check(bb, 100, 6, 0) == 100 &&
					      bb[100] == 0xEE,
				      " 100 B into a receive of 100: %d", rr);
			} else {
				CHECK(rr == -EMSGSIZE, " 4097 B into a receive of 4096: %d (%s)",
				      rr, sdr_strerror(rr));
				printf("4097 B into a receive of 4096 on W=2: %s (%s)\n",
				       sdr_strerror(rr), sdr_last_error(b));
			}
		}
		printf("short receives on W=2: 100 B exact, 4097 B into 4096 refused\n");
	}
	CHECK(sdr_qp_destroy(qa) == 0 && sdr_qp_destroy(qb) == 0);
	sdr_ctx_close(a);
	sdr_ctx_close(b);
	return t_finish("test_chan api");
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "errors"))
		return errors(argv[2]);
	if (argc == 4 && !strcmp(argv[1], "api"))
		return api(argv[2], argv[3]);
	fprintf(stderr, "usage: test_chan errors SOCK | api SOCK_A SOCK_B\n");
	return 2;
}
