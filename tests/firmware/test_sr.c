/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of firmware/sr/sdr_sr.h (Selective Repeat building blocks): the
 * RFC 6298 estimator and RTO, the timer FIFO, and the ACK window math
 * checked against brute force, including a receiver bitmap -> ACK on the
 * wire -> sender's acknowledged set round trip.
 */
#include <string.h>

#include "sdr_sr.h"
#include "sdr_wire.h"
#include "sdr_test.h"

static void test_rtt(void)
{
	struct sdr_rtt r;
	uint64_t next = 0;

	sdr_rtt_init(&r, 200000, 1000, 500, 0);
	CHECK_EQ(r.rto, 200000);
	CHECK_EQ(r.samples, 0);
	sdr_rtt_init(&r, 10, 1000, 500, 0); /* the floor applies to the initial RTO too */
	CHECK_EQ(r.rto, 1000);

	sdr_rtt_init(&r, 200000, 100, 500, 0);
	sdr_rtt_sample(&r, 800); /* first: SRTT = R, RTTVAR = R/2 */
	CHECK_EQ(r.srtt, 800);
	CHECK_EQ(r.rttvar, 400);
	CHECK_EQ(r.rto, 1200);    /* (1 + 0.5) * 800 */
	sdr_rtt_sample(&r, 1600); /* RTTVAR = 3/4*400 + 1/4*|800-1600|, SRTT = 7/8*800 + 1/8*1600 */
	CHECK_EQ(r.rttvar, 500);
	CHECK_EQ(r.srtt, 900);
	CHECK_EQ(r.rto, 1350);
	CHECK_EQ(r.samples, 2);

	/* the floor */
	sdr_rtt_init(&r, 5000, 2000, 500, 0);
	sdr_rtt_sample(&r, 100);
	CHECK_EQ(r.rto, 2000);

	/* alpha = 0: RTO = SRTT; constant samples converge, variance decays */
	sdr_rtt_init(&r, 5000, 1, 0, 0);
	for (int i = 0; i < 200; i++)
		sdr_rtt_sample(&r, 25000000);
	CHECK_EQ(r.srtt, 25000000);
	CHECK_EQ(r.rto, 25000000);
	CHECK(r.rttvar < 10);
	/* alpha = 16 (the option's maximum) */
	sdr_rtt_init(&r, 5000, 1, 16000, 0);
	sdr_rtt_sample(&r, 1000);
	CHECK_EQ(r.rto, 17000);

	/* the RFC 6298 bound SRTT + k * RTTVAR, when it is the larger */
	sdr_rtt_init(&r, 5000, 1, 500, 4);
	sdr_rtt_sample(&r, 800); /* SRTT 800, RTTVAR 400: 800 + 1600 > 1200 */
	CHECK_EQ(r.rto, 2400);
	for (int i = 0; i < 100; i++)
		sdr_rtt_sample(&r, 800); /* RTTVAR decays: back to (1 + alpha) * SRTT */
	CHECK_EQ(r.rto, 1200);
	sdr_rtt_sample(&r, 8800); /* a stall: RTTVAR = 2000, SRTT = 1800 */
	CHECK_EQ(r.srtt, 1800);
	CHECK_EQ(r.rttvar, 2000);
	CHECK_EQ(r.rto, 9800);

	/* backoff: doubles, at most once per RTO, capped; a sample resets it */
	sdr_rtt_init(&r, 1000, 10, 500, 0);
	CHECK(sdr_rtt_backoff(&r, 100, &next, 5000) == 1);
	CHECK_EQ(r.rto, 2000);
	CHECK_EQ(next, 2100);
	CHECK(sdr_rtt_backoff(&r, 2099, &next, 5000) == 0);
	CHECK_EQ(r.rto, 2000);
	CHECK(sdr_rtt_backoff(&r, 2100, &next, 5000) == 1);
	CHECK_EQ(r.rto, 4000);
	CHECK(sdr_rtt_backoff(&r, 100000, &next, 5000) == 1);
	CHECK_EQ(r.rto, 5000);
	CHECK(sdr_rtt_backoff(&r, 1000000, &next, 5000) == 0);
	sdr_rtt_sample(&r, 1000);
	CHECK_EQ(r.rto, 1500);
}

static void test_tq(void)
{
	struct sdr_tq q = {0};
	static struct sdr_tq_ent ref[100000];
	uint32_t rh = 0, rt = 0;

	CHECK(sdr_tq_peek(&q) == NULL);
	sdr_tq_pop(&q); /* harmless on empty */
	for (int round = 0; round < 20000; round++) {
		/* bursts of pushes and pops, so the ring wraps and grows */
		uint64_t np = t_below(12), nq = t_below(12);
		for (uint64_t i = 0; i < np && rt < 100000; i++) {
			struct sdr_tq_ent e = {(uint32_t)t_rnd(), (uint32_t)t_rnd(), t_rnd()};
			CHECK_OR_BREAK(sdr_tq_push(&q, e.seq, e.chunk, e.tsc) == 0);
			ref[rt++] = e;
		}
		for (uint64_t i = 0; i < nq; i++) {
			const struct sdr_tq_ent *p = sdr_tq_peek(&q);
			if (rh == rt) {
				CHECK_OR_BREAK(p == NULL && q.n == 0);
				break;
			}
			CHECK_OR_BREAK(p != NULL);
			CHECK_OR_BREAK(p->seq == ref[rh].seq && p->chunk == ref[rh].chunk &&
				       p->tsc == ref[rh].tsc);
			sdr_tq_pop(&q);
			rh++;
		}
		CHECK_OR_BREAK(q.n == rt - rh);
		BAIL_IF_MANY();
	}
	CHECK(q.cap >= q.n);
	sdr_tq_fini(&q);
	CHECK(q.e == NULL && q.n == 0 && q.cap == 0);
}

static void rand_bm(uint64_t *bm, uint32_t nbits, uint32_t density)
{
	memset(bm, 0, ((nbits + 63) / 64) * 8);
	for (uint32_t i = 0; i < nbits; i++)
		if (t_below(100) < density)
			bm[i / 64] |= 1ull << (i % 64);
}

struct walk_rec {
	uint8_t *hit;
	uint32_t n;
	int bad;
};

static void rec_fn(void *arg, uint32_t c)
{
	struct walk_rec *w = arg;
	if (c >= w->n)
		w->bad = 1;
	else
		w->hit[c] = 1;
}

static void test_ack_math(void)
{
	enum { MAXB = 3000 };
	static uint64_t bm[MAXB / 64 + 1];
	static uint8_t hit[MAXB], want[MAXB];

	for (int iter = 0; iter < 3000; iter++) {
		uint32_t nbits = (uint32_t)t_range(1, MAXB);
		uint32_t dens = (uint32_t)t_range(0, 100);
		uint32_t start = (uint32_t)t_below(nbits + 1);
		uint8_t bits[SDR_ACK_WINDOW_BITS / 8];
		/* a later window of the same message, sometimes */
		uint32_t off = t_below(3) ? 0 : (uint32_t)t_below(4) * SDR_ACK_WINDOW_BITS;

		rand_bm(bm, nbits, dens);
		/* the receiver's invariant: everything below its previous
		 * cumulative point (start) has arrived */
		for (uint32_t c = 0; c < start; c++)
			bm[c / 64] |= 1ull << (c % 64);
		/* the cumulative point: first clear bit at or after start */
		uint32_t cum = sdr_ack_cum_advance(bm, nbits, start), b = start;
		while (b < nbits && (bm[b / 64] >> (b % 64) & 1))
			b++;
		CHECK_OR_BREAK(cum == b);
		/* the selective window */
		uint32_t ws = cum + off;
		sdr_ack_window_get(bm, nbits, ws, bits);
		for (uint32_t i = 0; i < SDR_ACK_WINDOW_BITS; i++) {
			int w = ws + i < nbits && (bm[(ws + i) / 64] >> ((ws + i) % 64) & 1);
			CHECK_OR_BREAK(!!(bits[i / 8] & (1u << (i % 8))) == w);
		}
		/* over the wire and back */
		struct sdr_ack_entry e = {.seq = 7, .cum = cum, .off = off}, d;
		uint8_t msg[SDR_CTRL_HDR_WIRE + SDR_ACK_ENTRY_WIRE];
		struct sdr_ctrl_hdr h;
		memcpy(e.bits, bits, sizeof(bits));
		size_t len = sdr_ctrl_ack_encode(msg, 1, &e, 1);
		CHECK_OR_BREAK(sdr_ctrl_hdr_decode(msg, len, &h) == 0 && h.count == 1);
		CHECK_OR_BREAK(sdr_ctrl_ack_entry_decode(msg, 0, &d) == 0);
		/* the sender walks it (its message may have fewer chunks when the
		 * receive is larger, never more) */
		uint32_t nchunks = (uint32_t)t_range(cum < nbits ? cum : nbits, nbits);
		uint32_t from = (uint32_t)t_below(start + 1);
		struct walk_rec w = {hit, nchunks, 0};
		memset(hit, 0, nchunks);
		uint32_t from0 = from;
		CHECK_OR_BREAK(d.off == off);
		sdr_ack_walk(d.cum, d.off, d.bits, nchunks, &from, rec_fn, &w);
		CHECK_OR_BREAK(!w.bad);
		CHECK_OR_BREAK(from == (cum < nchunks ? cum : nchunks) || from == from0);
		CHECK_OR_BREAK(from >= from0);
		/* acknowledged = [from0, cum) plus the window bits, all really received;
		 * every received chunk in [from0, cum + window) is reported */
		for (uint32_t c = 0; c < nchunks; c++) {
			int got = (bm[c / 64] >> (c % 64)) & 1;
			want[c] = got && ((c >= from0 && c < cum) ||
					  (c >= ws && c < ws + SDR_ACK_WINDOW_BITS));
			CHECK_OR_BREAK(!hit[c] || got); /* never acknowledges a missing chunk */
			CHECK_OR_BREAK(hit[c] == want[c]);
		}
		BAIL_IF_MANY();
	}
	/* an ACK claiming more than the message has is clamped */
	{
		uint8_t bits[SDR_ACK_WINDOW_BITS / 8];
		struct walk_rec w = {hit, 10, 0};
		uint32_t from = 0;
		memset(bits, 0xFF, sizeof(bits));
		memset(hit, 0, 10);
		CHECK_EQ(sdr_ack_walk(0xFFFFFFF0u, 0, bits, 10, &from, rec_fn, &w), 10);
		CHECK(!w.bad && from == 10);
		CHECK_EQ(sdr_ack_walk(5, 0, bits, 10, &from, rec_fn, &w), 5);
		CHECK(!w.bad);
		/* a window offset past the message, or one that would wrap 32 bits */
		CHECK_EQ(sdr_ack_walk(5, 128, bits, 10, &from, rec_fn, &w), 0);
		CHECK_EQ(sdr_ack_walk(0xFFFFFFF0u, 0xFFFFFF, bits, 10, &from, rec_fn, &w), 0);
		CHECK(!w.bad);
	}
}

int main(void)
{
	t_seed("test_sr", 0x5EEDu);
	test_rtt();
	test_tq();
	test_ack_math();
	if (t_failures) {
		fprintf(stderr, "%d check(s) failed\n", t_failures);
		return 1;
	}
	printf("all SR tests passed\n");
	return 0;
}
