/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Link emulator DPDK glue, under EAL (no hugepages):
 *  A. sdr_link_rx_process() with real mbufs on a simulated clock: counters
 *     add up, nothing leaves before its departure time, corruption spares the
 *     headers, duplicates are copies, the limit and a small dup pool are
 *     handled, and every mbuf goes back to its pool;
 *  C. per-peer lanes (sdr_link_rx_create_plan()) with real mbufs on a
 *     simulated clock: each source takes its profile's delay, two sources
 *     share one bottleneck, unlisted sources take the default lane, release
 *     is in departure order across the lanes, counters per lane add up to
 *     the totals, and every mbuf goes back to its pool;
 *  E. arrival=spread: frames a poll finds are taken to have arrived evenly
 *     since the port was last found drained, full polls wait for the poll
 *     that drains it, no mark where the spread arrivals found no queue;
 *  D. paths (a profile of two paths, then a default lane of two: --link
 *     "A | B"; docs/link-emulator.md "Paths") with
 *     real mbufs on a simulated clock: a frame takes the path of its UDP
 *     source port, each path keeps its own delay and bottleneck, an outage
 *     on one path loses only its frames, release is in departure order
 *     across the paths, counters per path add up, no mbuf is lost;
 *  B. the RX callback on a net_ring loopback port with the real TSC clock:
 *     frames sent through the port all come out (or are counted as dropped),
 *     also after the sender went idle, and never before their departure time
 *     as the emulator computed it.
 * Pass/fail never depends on how long anything took (a 10 s safety bound
 * only catches a hang).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include "link_test.h"
#include "sdr_link_dpdk.h"

#define FRAME_LEN 1000u
#define SEQ_OFF 14u /* the frame number lives in the "IP header", never corrupted */

static struct rte_mempool *pool, *dup_pool;

static struct rte_mbuf *mk_frame(uint64_t seq, uint32_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	uint8_t *p;

	if (m == NULL)
		return NULL;
	p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
	for (uint32_t i = 0; i < len; i++)
		p[i] = (uint8_t)(i * 13 + 5);
	memcpy(p + SEQ_OFF, &seq, sizeof(seq));
	return m;
}

static uint64_t frame_seq(const struct rte_mbuf *m)
{
	uint64_t seq;

	memcpy(&seq, rte_pktmbuf_mtod_offset(m, const uint8_t *, SEQ_OFF), sizeof(seq));
	return seq;
}

/* counts differing bits against the pattern; *head_bad if any of bytes
 * 0..41 (outside the seq field) differ */
static unsigned diff_bits(const struct rte_mbuf *m, unsigned *head_bad)
{
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	unsigned bits = 0;

	for (uint32_t i = 0; i < rte_pktmbuf_pkt_len(m); i++) {
		uint8_t want = (uint8_t)(i * 13 + 5);

		if (i >= SEQ_OFF && i < SEQ_OFF + 8)
			continue;
		if (p[i] != want && i < SDR_LINK_CORRUPT_MIN_OFFSET)
			(*head_bad)++;
		bits += (unsigned)__builtin_popcount(p[i] ^ want);
	}
	return bits;
}

struct trace_state {
	uint64_t min_delay_ns; /* delay + serialisation of one frame */
	uint64_t releases;
	uint64_t early;    /* released before departure */
	uint64_t too_fast; /* departure earlier than arrival + min_delay */
	uint64_t max_lag;
};

static void trace_cb(const struct rte_mbuf *m, uint64_t arrival, uint64_t depart, uint64_t release,
		     void *arg)
{
	struct trace_state *t = arg;

	(void)m;
	t->releases++;
	t->early += release < depart;
	t->too_fast += depart < arrival + t->min_delay_ns;
	if (release - depart > t->max_lag)
		t->max_lag = release - depart;
}

static void check_identities(const struct sdr_link_stats *s, const char *what)
{
	CHECK(s->pkts_in == s->delivered + s->dropped_buffer + s->dropped_loss + s->dropped_ge +
				    s->dropped_down + s->dropped_limit,
	      "%s: in %" PRIu64 " != delivered %" PRIu64 " + drops", what, s->pkts_in,
	      s->delivered);
	CHECK(s->delivered + s->duplicated - s->dup_failed == s->released + s->held,
	      "%s: delivered %" PRIu64 " + dup %" PRIu64 " - failed %" PRIu64
	      " != released %" PRIu64 " + held %" PRIu64,
	      what, s->delivered, s->duplicated, s->dup_failed, s->released, s->held);
}

/* ---------------------------------------------- A: simulated clock -- */

static uint64_t *seen; /* releases per frame number */

static void consume(struct rte_mbuf **pkts, uint16_t n, unsigned *head_bad,
		    unsigned *corrupt_frames)
{
	for (uint16_t i = 0; i < n; i++) {
		unsigned bits = diff_bits(pkts[i], head_bad);

		*corrupt_frames += bits != 0;
		seen[frame_seq(pkts[i])]++;
		rte_pktmbuf_free(pkts[i]);
	}
}

struct consume_arg {
	unsigned *head_bad, *corrupt_frames;
};

static void consume_cb(struct rte_mbuf **pkts, uint16_t n, void *arg)
{
	struct consume_arg *c = arg;

	consume(pkts, n, c->head_bad, c->corrupt_frames);
}

static void free_cb(struct rte_mbuf **pkts, uint16_t n, void *arg)
{
	(void)arg;
	rte_pktmbuf_free_bulk(pkts, n);
}

/* Release everything still held, moving the clock to each next departure;
 * take() gets every batch. Returns the clock at the end. */
static uint64_t drain(struct sdr_link_rx *rx, uint64_t now,
		      void (*take)(struct rte_mbuf **, uint16_t, void *), void *arg)
{
	struct rte_mbuf *pkts[64];

	for (;;) {
		uint64_t t = sdr_link_rx_next_departure(rx);

		if (t == UINT64_MAX)
			return now;
		now = t > now ? t : now;
		take(pkts, sdr_link_rx_release(rx, pkts, RTE_DIM(pkts), now), arg);
	}
}

static void test_sim_clock(void)
{
	const unsigned n_frames = 20000, burst = 32;
	const uint64_t step = 200000; /* one burst every 200 us */
	struct sdr_link_cfg cfg;
	struct sdr_link_rx *rx;
	struct sdr_link_stats s;
	struct trace_state tr = {.min_delay_ns = 1000000 + FRAME_LEN * 8};
	struct rte_mbuf *pkts[64];
	char err[256];
	unsigned head_bad = 0, corrupt_frames = 0, more_than_twice = 0, twice = 0;
	uint64_t now = 1000000000ull, seq = 0;

	CHECK(sdr_link_parse("delay=1ms,rate=1gbit,buffer=64KB,loss=0.01,reorder=0.02:200us,"
			     "dup=0.02,corrupt=0.02:3,seed=5",
			     &cfg, err, sizeof(err)) == 0,
	      "%s", err);
	rx = sdr_link_rx_create(&cfg, SOCKET_ID_ANY, dup_pool);
	CHECK(rx != NULL, "create: %s", rte_strerror(rte_errno));
	if (rx == NULL)
		return;
	sdr_link_rx_set_trace(rx, trace_cb, &tr);
	seen = calloc(n_frames, sizeof(*seen));

	while (seq < n_frames) {
		uint16_t nb = 0, out;

		while (nb < burst && seq < n_frames)
			pkts[nb++] = mk_frame(seq++, FRAME_LEN);
		out = sdr_link_rx_process(rx, pkts, nb, RTE_DIM(pkts), now);
		consume(pkts, out, &head_bad, &corrupt_frames);
		/* idle polls in between, as a worker would do */
		for (int k = 1; k <= 4; k++) {
			out = sdr_link_rx_release(rx, pkts, RTE_DIM(pkts), now + k * step / 5);
			consume(pkts, out, &head_bad, &corrupt_frames);
		}
		now += step;
	}
	{
		struct consume_arg ca = {&head_bad, &corrupt_frames};

		now = drain(rx, now, consume_cb, &ca);
	}
	sdr_link_rx_stats(rx, &s);
	check_identities(&s, "sim");
	CHECK(s.pkts_in == n_frames && s.held == 0, "in %" PRIu64 " held %" PRIu64, s.pkts_in,
	      s.held);
	CHECK(s.dropped_buffer > 0 && s.dropped_loss > 0 && s.reordered > 0 && s.duplicated > 0 &&
		      s.corrupted > 0,
	      "every feature fired");
	CHECK(s.dup_failed == 0, "dup failed %" PRIu64, s.dup_failed);
	CHECK(tr.releases == s.released, "trace saw %" PRIu64 " of %" PRIu64, tr.releases,
	      s.released);
	CHECK(tr.early == 0, "%" PRIu64 " released before departure", tr.early);
	CHECK(tr.too_fast == 0, "%" PRIu64 " departed before arrival + delay + serialisation",
	      tr.too_fast);
	/* release is polled every step/5, so it is late by less than that */
	CHECK(tr.max_lag < step / 5 && s.max_release_lag_ns == tr.max_lag, "lag %" PRIu64,
	      tr.max_lag);
	CHECK(head_bad == 0, "%u header bytes changed", head_bad);
	/* a corrupted original and its clean copy: corrupt_frames counts what
	 * came out with flipped bits, exactly the corrupted originals */
	CHECK(corrupt_frames == s.corrupted, "%u frames differ, %" PRIu64 " corrupted",
	      corrupt_frames, s.corrupted);
	for (unsigned i = 0; i < n_frames; i++) {
		twice += seen[i] == 2;
		more_than_twice += seen[i] > 2;
	}
	CHECK(twice == s.duplicated && more_than_twice == 0, "twice %u dup %" PRIu64, twice,
	      s.duplicated);
	sdr_link_rx_detach(rx);
	free(seen);
	CHECK(rte_mempool_avail_count(pool) == pool->size, "pool leak: %u of %u",
	      rte_mempool_avail_count(pool), pool->size);
	CHECK(rte_mempool_avail_count(dup_pool) == dup_pool->size, "dup pool leak");
}

/* limit=, a dup pool that runs dry, and detach with frames still held */
static void test_limits(void)
{
	struct sdr_link_cfg cfg;
	struct sdr_link_rx *rx;
	struct sdr_link_stats s;
	struct rte_mempool *tiny;
	struct rte_mbuf *pkts[32];
	char err[256];
	uint64_t seq = 0;

	CHECK(sdr_link_parse("delay=10ms,limit=100", &cfg, err, sizeof(err)) == 0, "%s", err);
	rx = sdr_link_rx_create(&cfg, SOCKET_ID_ANY, NULL);
	for (int b = 0; b < 16; b++) {
		for (int i = 0; i < 32; i++)
			pkts[i] = mk_frame(seq++, 100);
		CHECK(sdr_link_rx_process(rx, pkts, 32, 32, 1000) == 0, "released early");
	}
	sdr_link_rx_stats(rx, &s);
	CHECK(s.held == 100 && s.dropped_limit == 512 - 100 && s.max_held == 100,
	      "held %" PRIu64 " limit drops %" PRIu64, s.held, s.dropped_limit);
	check_identities(&s, "limit");
	sdr_link_rx_detach(rx); /* frees the 100 held mbufs */
	CHECK(rte_mempool_avail_count(pool) == pool->size, "detach leaked %u",
	      pool->size - rte_mempool_avail_count(pool));

	/* dup=1 with a 16-mbuf dup pool: 16 copies, the rest counted as failed */
	tiny = rte_pktmbuf_pool_create("tiny", 16, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
	CHECK(tiny != NULL, "tiny pool");
	CHECK(sdr_link_parse("delay=1ms,dup=1", &cfg, err, sizeof(err)) == 0, "%s", err);
	rx = sdr_link_rx_create(&cfg, SOCKET_ID_ANY, tiny);
	for (int i = 0; i < 32; i++)
		pkts[i] = mk_frame(seq++, 200);
	CHECK(sdr_link_rx_process(rx, pkts, 32, 32, 0) == 0, "released early");
	sdr_link_rx_stats(rx, &s);
	CHECK(s.duplicated == 32 && s.dup_failed == 16 && s.held == 48,
	      "dup %" PRIu64 " failed %" PRIu64 " held %" PRIu64, s.duplicated, s.dup_failed,
	      s.held);
	{
		uint16_t got = 0, n;
		while ((n = sdr_link_rx_release(rx, pkts, 32, 1000000)) > 0) {
			got += n;
			rte_pktmbuf_free_bulk(pkts, n);
		}
		CHECK(got == 48, "released %u", got);
	}
	sdr_link_rx_stats(rx, &s);
	check_identities(&s, "dup pool");
	sdr_link_rx_detach(rx);
	CHECK(rte_mempool_avail_count(tiny) == 16, "tiny pool leak");
	rte_mempool_free(tiny);

	/* bad arguments */
	CHECK(sdr_link_rx_create(NULL, SOCKET_ID_ANY, NULL) == NULL && rte_errno == EINVAL,
	      "NULL cfg");
	cfg.limit = 0;
	CHECK(sdr_link_rx_create(&cfg, SOCKET_ID_ANY, NULL) == NULL && rte_errno == EINVAL,
	      "limit 0");
	sdr_link_cfg_default(&cfg);
	CHECK(sdr_link_rx_attach(RTE_MAX_ETHPORTS - 1, 0, &cfg, NULL) == NULL &&
		      rte_errno == ENODEV,
	      "bad port");
	sdr_link_rx_detach(NULL);
}

/* corruption reaches into the second segment of a chain */
static void test_multiseg_corrupt(void)
{
	struct rte_mbuf *a = mk_frame(1, 100), *b = mk_frame(2, 100);
	struct sdr_link_verdict v = {.n_flips = 3, .flip_bit = {42 * 8, 150 * 8 + 3, 199 * 8 + 7}};
	const uint8_t *pa, *pb;
	uint8_t a42, b50, b99;

	pa = rte_pktmbuf_mtod(a, const uint8_t *);
	pb = rte_pktmbuf_mtod(b, const uint8_t *);
	a42 = pa[42];
	b50 = pb[50];
	b99 = pb[99];
	CHECK(rte_pktmbuf_chain(a, b) == 0, "chain");
	sdr_link_corrupt_mbuf(a, &v);
	CHECK(pa[42] == (a42 ^ 1) && pb[50] == (b50 ^ 8) && pb[99] == (b99 ^ 0x80),
	      "bits in the chain not flipped");
	v.flip_bit[0] = 200 * 8; /* beyond the frame: ignored */
	v.n_flips = 1;
	sdr_link_corrupt_mbuf(a, &v);
	rte_pktmbuf_free(a);
}

/* ------------------------------------ C: per-peer lanes, simulated clock -- */

#define PEER_SEQ_OFF 50u /* in the payload, behind Ethernet + IPv4 + UDP */
#define PEER_SRCS 4

struct peer_trace {
	uint64_t releases, early, too_fast, out_of_order, last_depart;
	uint64_t min_delay[PEER_SRCS]; /* per source: its lane's delay (+ serialisation) */
	uint64_t per_src[PEER_SRCS];
	uint64_t max_depart[PEER_SRCS];
};

static const uint32_t peer_src[PEER_SRCS] = {
	0x0a000001,             /* 10.0.0.1: "near" */
	0x0a000002,             /* 10.0.0.2: "far", shared with .3 */
	0x0a000003, 0x0a000009, /* unlisted: the default lane */
};

static struct rte_mbuf *mk_peer_frame(unsigned src, uint64_t seq, uint32_t len)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(pool);
	uint8_t *p;

	if (m == NULL)
		return NULL;
	p = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)len);
	memset(p, 0, len);
	p[12] = 0x08; /* IPv4 */
	p[14] = 0x45;
	p[26] = (uint8_t)(peer_src[src] >> 24);
	p[27] = (uint8_t)(peer_src[src] >> 16);
	p[28] = (uint8_t)(peer_src[src] >> 8);
	p[29] = (uint8_t)peer_src[src];
	p[PEER_SEQ_OFF] = (uint8_t)src;
	memcpy(p + PEER_SEQ_OFF + 1, &seq, sizeof(seq));
	return m;
}

/* A 1000 B IPv4 frame of peer 0, number @p seq, its ECN field @p ecn, its
 * header checksum right (NULL: no mbuf) */
static struct rte_mbuf *mk_ecn_frame(uint64_t seq, uint8_t ecn)
{
	struct rte_mbuf *m = mk_peer_frame(0, seq, 1000);
	uint8_t *p;
	uint32_t s = 0;

	if (m == NULL)
		return NULL;
	p = rte_pktmbuf_mtod(m, uint8_t *);
	p[15] = ecn;
	for (int k = 14; k < 34; k += 2)
		s += (uint32_t)(p[k] << 8 | p[k + 1]);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	p[24] = (uint8_t)(~s >> 8);
	p[25] = (uint8_t)~s;
	return m;
}

/* ECN through the glue: with a queue at the bottleneck, ECN-capable frames
 * come out marked CE in their IPv4 header (checksum still right), other
 * frames untouched; down= drops what arrives during the outage. */
static void test_ecn_down(void)
{
	struct sdr_link_cfg cfg;
	struct sdr_link_stats st;
	struct rte_mbuf *pkts[64];
	char err[256];
	unsigned ce = 0, ect_out = 0, not_ect_ce = 0, bad_sum = 0, out = 0;
	struct sdr_link_rx *rx;

	/* 1 Gbit/s, marking from 10 KB: a burst of 40 frames of 1000 B, odd
	 * ones ECT(0): those from the 11th frame on find 10 KB queued */
	CHECK(sdr_link_parse("rate=1gbit,buffer=1MB,ecn=10KB,down=1s+1s", &cfg, err, sizeof(err)) ==
		      0,
	      "%s", err);
	rx = sdr_link_rx_create(&cfg, SOCKET_ID_ANY, dup_pool);
	REQUIRE(rx != NULL);
	for (unsigned i = 0; i < 40; i++) {
		pkts[i] = mk_ecn_frame(i, i & 1 ? 0x02 : 0x00); /* ECT(0) / not ECT */
		REQUIRE(pkts[i] != NULL);
	}
	sdr_link_rx_process(rx, pkts, 40, 40, 1000);
	for (uint64_t t = 1000; out < 40 && t < 10000000; t += 10000) {
		uint16_t n = sdr_link_rx_release(rx, pkts, 64, t);

		for (uint16_t i = 0; i < n; i++) {
			const uint8_t *p = rte_pktmbuf_mtod(pkts[i], const uint8_t *);
			uint64_t seq;

			memcpy(&seq, p + PEER_SEQ_OFF + 1, sizeof(seq));
			if ((p[15] & 3) == 3) {
				ce++;
				not_ect_ce += !(seq & 1);
				if (seq < 10)
					CHECK(0, "frame %" PRIu64 " marked with < 10 KB queued",
					      seq);
			} else if (seq & 1) {
				ect_out++;
				if (seq >= 10)
					CHECK(0, "frame %" PRIu64 " not marked", seq);
			}
			bad_sum += lt_ip4_fold(p + 14) != 0xffff;
			rte_pktmbuf_free(pkts[i]);
			out++;
		}
	}
	CHECK(out == 40, "released %u of 40", out);
	CHECK(ce == 15 && ect_out == 5 && not_ect_ce == 0, "CE %u, ECT unmarked %u, not-ECT CE %u",
	      ce, ect_out, not_ect_ce);
	CHECK(bad_sum == 0, "%u IPv4 checksums broken by the mark", bad_sum);
	/* the outage: 1 s .. 2 s after the first frame (time 1000 ns) */
	for (unsigned i = 0; i < 10; i++)
		pkts[i] = mk_peer_frame(0, 100 + i, 100);
	sdr_link_rx_process(rx, pkts, 10, 10, 1000 + 1500000000ull);
	sdr_link_rx_stats(rx, &st);
	CHECK(st.dropped_down == 10 && st.ce_marked == 15 && st.ect_in == 20,
	      "dropped_down %" PRIu64 ", ce_marked %" PRIu64 ", ect_in %" PRIu64, st.dropped_down,
	      st.ce_marked, st.ect_in);
	sdr_link_rx_detach(rx);
}

/* ecnmark=dequeue through the glue: a burst of 40 ECT(0) frames of 1000 B
 * at 1 Gbit/s, marking from 10 KB: frame i leaves (39 - i) x 1000 B behind,
 * so frames 0..29 come out CE (on arrival it would be 10..39), each
 * decided when its exit time has come (a release call, or the next
 * arrivals), checksum right. */
static void test_ecn_dequeue(void)
{
	struct sdr_link_cfg cfg;
	struct sdr_link_stats st;
	struct rte_mbuf *pkts[64];
	char err[256];
	unsigned ce = 0, out = 0, wrong = 0, bad_sum = 0;
	struct sdr_link_rx *rx;

	CHECK(sdr_link_parse("rate=1gbit,buffer=1MB,ecn=10KB,ecnmark=dequeue,delay=1ms", &cfg, err,
			     sizeof(err)) == 0,
	      "%s", err);
	rx = sdr_link_rx_create(&cfg, SOCKET_ID_ANY, dup_pool);
	REQUIRE(rx != NULL);
	for (unsigned i = 0; i < 40; i++) {
		pkts[i] = mk_ecn_frame(i, 0x02); /* ECT(0) */
		REQUIRE(pkts[i] != NULL);
	}
	sdr_link_rx_process(rx, pkts, 40, 40, 1000);
	sdr_link_rx_stats(rx, &st);
	CHECK(st.ce_marked == 0 && st.ect_in == 40, "marked on arrival: %" PRIu64, st.ce_marked);
	/* halfway through the burst's exits (20 frames, 160 us): 20 decided */
	CHECK(sdr_link_rx_release(rx, pkts, 64, 1000 + 160000) == 0, "released before the delay");
	sdr_link_rx_stats(rx, &st);
	CHECK(st.ce_marked == 20, "20 frames left, %" PRIu64 " marked", st.ce_marked);
	for (uint64_t t = 1000; out < 40 && t < 10000000; t += 10000) {
		uint16_t n = sdr_link_rx_release(rx, pkts, 64, t);

		for (uint16_t i = 0; i < n; i++) {
			const uint8_t *p = rte_pktmbuf_mtod(pkts[i], const uint8_t *);
			uint64_t seq;
			bool marked = (p[15] & 3) == 3;

			memcpy(&seq, p + PEER_SEQ_OFF + 1, sizeof(seq));
			ce += marked;
			wrong += marked != (seq < 30);
			bad_sum += lt_ip4_fold(p + 14) != 0xffff;
			rte_pktmbuf_free(pkts[i]);
			out++;
		}
	}
	sdr_link_rx_stats(rx, &st);
	CHECK(out == 40 && ce == 30 && wrong == 0 && st.ce_marked == 30,
	      "released %u, CE %u (%u not frames 0..29), ce_marked %" PRIu64, out, ce, wrong,
	      st.ce_marked);
	CHECK(bad_sum == 0, "%u IPv4 checksums broken by the mark", bad_sum);
	sdr_link_rx_detach(rx);
}

/* arrival=spread: what a poll finds arrived since the port was last found
 * drained. 40 ECT(0) frames of 1000 B found together 400 us after an empty
 * poll, through 1 Gbit/s (8 us a frame) marking from 10 KB: at the poll
 * (arrival=poll) 30 are marked, spread one per 10 us none is. Then two
 * full polls of 32 (max_pkts 32) are kept, unadmitted, and the poll of 8
 * that drains the port 900 us after the last drained one admits all 72,
 * one per 12.5 us in order (the trace's arrival times), unmarked; every
 * frame comes out, and frames kept at detach go back to the pool. */
struct spread_trace {
	uint64_t first, last, prev;
	unsigned n, unordered;
};

static void spread_trace_cb(const struct rte_mbuf *m, uint64_t arrival, uint64_t depart,
			    uint64_t release, void *arg)
{
	struct spread_trace *t = arg;

	RTE_SET_USED(m);
	RTE_SET_USED(depart);
	RTE_SET_USED(release);
	if (t->n++ == 0)
		t->first = arrival;
	t->unordered += arrival <= t->prev;
	t->prev = t->last = arrival;
}

static uint64_t spread_ce(const char *spec)
{
	struct sdr_link_cfg cfg;
	struct sdr_link_stats st;
	struct rte_mbuf *pkts[64];
	char err[256];
	struct sdr_link_rx *rx;
	unsigned out = 0;

	CHECK(sdr_link_parse(spec, &cfg, err, sizeof(err)) == 0, "%s", err);
	rx = sdr_link_rx_create(&cfg, SOCKET_ID_ANY, dup_pool);
	REQUIRE(rx != NULL);
	CHECK(sdr_link_rx_process(rx, pkts, 0, 64, 1000) == 0, "released from nothing");
	for (unsigned i = 0; i < 40; i++)
		REQUIRE((pkts[i] = mk_ecn_frame(i, 0x02)) != NULL);
	out += sdr_link_rx_process(rx, pkts, 40, 64, 1000 + 400000);
	for (uint16_t i = 0; i < out; i++)
		rte_pktmbuf_free(pkts[i]);
	for (uint64_t t = 1000 + 400000; out < 40 && t < 10000000; t += 10000) {
		uint16_t n = sdr_link_rx_release(rx, pkts, 64, t);

		for (uint16_t i = 0; i < n; i++)
			rte_pktmbuf_free(pkts[i]);
		out += n;
	}
	sdr_link_rx_stats(rx, &st);
	CHECK(out == 40 && st.pkts_in == 40, "%s: released %u, in %" PRIu64, spec, out, st.pkts_in);
	sdr_link_rx_detach(rx);
	return st.ce_marked;
}

static void test_arrival_spread(void)
{
	const char *spec = "rate=1gbit,buffer=1MB,ecn=10KB,arrival=spread";
	struct spread_trace tr = {0};
	struct sdr_link_cfg cfg;
	struct sdr_link_stats st;
	struct rte_mbuf *pkts[64];
	char err[256], back[256];
	uint64_t ce_poll = spread_ce("rate=1gbit,buffer=1MB,ecn=10KB,arrival=poll");
	uint64_t ce_spread = spread_ce(spec), t0 = 5000, t;
	struct sdr_link_rx *rx;
	unsigned out = 0;

	CHECK(ce_poll == 30 && ce_spread == 0, "CE at the poll %" PRIu64 " (30), spread %" PRIu64,
	      ce_poll, ce_spread);
	CHECK(sdr_link_parse(spec, &cfg, err, sizeof(err)) == 0 && cfg.arrival_spread, "%s", err);
	CHECK(sdr_link_cfg_format(&cfg, back, sizeof(back)) > 0 && strstr(back, "arrival=spread"),
	      "formatted: %s", back);
	CHECK(sdr_link_parse("rate=1gbit,arrival=late", &cfg, err, sizeof(err)) != 0 &&
		      strstr(err, "poll or spread") != NULL,
	      "arrival=late: %s", err);

	CHECK(sdr_link_parse(spec, &cfg, err, sizeof(err)) == 0, "%s", err);
	rx = sdr_link_rx_create(&cfg, SOCKET_ID_ANY, dup_pool);
	REQUIRE(rx != NULL);
	sdr_link_rx_set_trace(rx, spread_trace_cb, &tr);
	CHECK(sdr_link_rx_process(rx, pkts, 0, 32, t0) == 0, "released from nothing");
	for (unsigned p = 0; p < 2; p++) {
		for (unsigned i = 0; i < 32; i++)
			REQUIRE((pkts[i] = mk_ecn_frame(p * 32 + i, 0x02)) != NULL);
		CHECK(sdr_link_rx_process(rx, pkts, 32, 32, t0 + 300000 + p * 1000) == 0,
		      "a full poll released frames");
		sdr_link_rx_stats(rx, &st);
		CHECK(st.pkts_in == 0, "a full poll admitted %" PRIu64, st.pkts_in);
	}
	for (unsigned i = 0; i < 8; i++)
		REQUIRE((pkts[i] = mk_ecn_frame(64 + i, 0x02)) != NULL);
	out += sdr_link_rx_process(rx, pkts, 8, 32, t0 + 900000);
	for (uint16_t i = 0; i < out; i++)
		rte_pktmbuf_free(pkts[i]);
	sdr_link_rx_stats(rx, &st);
	CHECK(st.pkts_in == 72 && st.ce_marked == 0, "drained: in %" PRIu64 ", CE %" PRIu64,
	      st.pkts_in, st.ce_marked);
	for (t = t0 + 900000; out < 72 && t < 10000000; t += 10000) {
		uint16_t n = sdr_link_rx_release(rx, pkts, 32, t);

		for (uint16_t i = 0; i < n; i++)
			rte_pktmbuf_free(pkts[i]);
		out += n;
	}
	CHECK(out == 72 && tr.n == 72 && tr.unordered == 0, "released %u, traced %u, %u unordered",
	      out, tr.n, tr.unordered);
	CHECK(tr.first == t0 + 12500 && tr.last == t0 + 900000,
	      "arrivals %" PRIu64 "..%" PRIu64 " (12500..900000 after the drained poll)",
	      tr.first - t0, tr.last - t0);
	/* kept at detach: back to the pool */
	for (unsigned i = 0; i < 32; i++)
		REQUIRE((pkts[i] = mk_ecn_frame(100 + i, 0x02)) != NULL);
	CHECK(sdr_link_rx_process(rx, pkts, 32, 32, t + 1000) == 0, "a full poll released frames");
	sdr_link_rx_detach(rx);
	CHECK(rte_mempool_avail_count(pool) == pool->size, "pool leak: %u of %u",
	      rte_mempool_avail_count(pool), pool->size);
}

static void peer_trace_cb(const struct rte_mbuf *m, uint64_t arrival, uint64_t depart,
			  uint64_t release, void *arg)
{
	struct peer_trace *t = arg;
	unsigned src = *rte_pktmbuf_mtod_offset(m, const uint8_t *, PEER_SEQ_OFF);

	t->releases++;
	t->early += release < depart;
	t->out_of_order += depart < t->last_depart;
	t->last_depart = depart;
	if (src < PEER_SRCS) {
		t->too_fast += depart < arrival + t->min_delay[src];
		t->per_src[src]++;
		if (depart > t->max_depart[src])
			t->max_depart[src] = depart;
	}
}

static void test_peers(void)
{
	const unsigned rounds = 400;
	const uint64_t step = 100000; /* a burst every 100 us */
	const uint32_t len = 1250;    /* 10 us at 1 Gbit/s */
	struct sdr_link_plan plan;
	struct sdr_link_cfg dflt;
	struct sdr_link_rx *rx;
	struct sdr_link_stats tot, lane[3], sum;
	struct peer_trace tr = {
		.min_delay = {2000000, 10000000 + 10000, 10000000 + 10000, 1000000}};
	struct rte_mbuf *pkts[64];
	char err[512];
	uint64_t now = 1000000000ull, seq = 0, offered[PEER_SRCS] = {0};

	CHECK(sdr_link_parse("delay=1ms", &dflt, err, sizeof(err)) == 0, "%s", err);
	sdr_link_plan_init(&plan, &dflt);
	CHECK(sdr_link_plan_add(&plan, "near:10.0.0.1:delay=2ms", err, sizeof(err)) == 0, "%s",
	      err);
	CHECK(sdr_link_plan_add(&plan,
				"far:10.0.0.2+10.0.0.3:delay=10ms,rate=1gbit,buffer=1MB,"
				"reorder=0.05:3ms,seed=3",
				err, sizeof(err)) == 0,
	      "%s", err);
	rx = sdr_link_rx_create_plan(&plan, SOCKET_ID_ANY, NULL);
	CHECK(rx != NULL, "create: %s", rte_strerror(rte_errno));
	if (rx == NULL)
		return;
	CHECK(sdr_link_rx_nlanes(rx) == 3);
	sdr_link_rx_set_trace(rx, peer_trace_cb, &tr);

	/* each round: 8 frames from .2 and 8 from .3 (together 160 us of the
	 * far bottleneck per 100 us: it queues), 4 from .1 and 4 unlisted */
	for (unsigned r = 0; r < rounds; r++) {
		uint16_t nb = 0, out;

		for (unsigned k = 0; k < 24; k++) {
			unsigned src = k < 16 ? 1 + (k & 1) : (k < 20 ? 0 : 3);

			pkts[nb++] = mk_peer_frame(src, seq++, len);
			offered[src]++;
		}
		out = sdr_link_rx_process(rx, pkts, nb, RTE_DIM(pkts), now);
		rte_pktmbuf_free_bulk(pkts, out);
		for (int k = 1; k <= 4; k++) {
			while ((out = sdr_link_rx_release(rx, pkts, RTE_DIM(pkts),
							  now + k * step / 5)) > 0)
				rte_pktmbuf_free_bulk(pkts, out);
		}
		now += step;
	}
	now = drain(rx, now, free_cb, NULL);
	sdr_link_rx_stats(rx, &tot);
	memset(&sum, 0, sizeof(sum));
	for (unsigned i = 0; i < 3; i++) {
		sdr_link_rx_lane_stats(rx, i, &lane[i]);
		check_identities(&lane[i], sdr_link_rx_plan(rx)->lane[i].name);
		sdr_link_stats_add(&sum, &lane[i]);
	}
	check_identities(&tot, "every lane");
	CHECK(memcmp(&sum, &tot, sizeof(sum)) == 0, "the totals are the lanes' sum");
	CHECK(lane[0].pkts_in == offered[0], "near: in %" PRIu64 " offered %" PRIu64,
	      lane[0].pkts_in, offered[0]);
	CHECK(lane[1].pkts_in == offered[1] + offered[2], "far: in %" PRIu64, lane[1].pkts_in);
	CHECK(lane[2].pkts_in == offered[3], "default: in %" PRIu64, lane[2].pkts_in);
	CHECK(lane[0].dropped_buffer == 0 && lane[2].dropped_buffer == 0 &&
		      lane[0].delivered == offered[0],
	      "the lanes without a bottleneck lose nothing");
	/* the shared bottleneck: 1.6x overload fills 1 MB, then drops */
	CHECK(lane[1].dropped_buffer > 0 && lane[1].max_backlog_bytes > 900000,
	      "far: dropped %" PRIu64 " max backlog %" PRIu64, lane[1].dropped_buffer,
	      lane[1].max_backlog_bytes);
	CHECK(lane[1].reordered > 0 && lane[0].reordered == 0);
	CHECK(tot.held == 0 && tot.released == tr.releases);
	CHECK(tr.early == 0, "%" PRIu64 " released before departure", tr.early);
	CHECK(tr.too_fast == 0, "%" PRIu64 " departed before their lane's delay", tr.too_fast);
	CHECK(tr.out_of_order == 0, "%" PRIu64 " released out of departure order", tr.out_of_order);
	CHECK(tr.per_src[0] == offered[0] && tr.per_src[3] == offered[3]);
	CHECK(tr.per_src[1] + tr.per_src[2] == lane[1].delivered);
	/* both far sources got through, each about half (they alternate) */
	CHECK(tr.per_src[1] > lane[1].delivered / 3 && tr.per_src[2] > lane[1].delivered / 3,
	      "far: .2 got %" PRIu64 ", .3 got %" PRIu64, tr.per_src[1], tr.per_src[2]);
	/* the shared FIFO served both at 1 Gbit/s together: the last far frame
	 * left no earlier than all delivered far bytes take at that rate after
	 * the first arrival (+ the delay) */
	CHECK(tr.max_depart[1] >= 1000000000ull + lane[1].bytes_delivered * 8 + 10000000 ||
		      tr.max_depart[2] >= 1000000000ull + lane[1].bytes_delivered * 8 + 10000000,
	      "far lane drained faster than its rate");
	sdr_link_rx_detach(rx);
	CHECK(rte_mempool_avail_count(pool) == pool->size, "pool leak: %u of %u",
	      rte_mempool_avail_count(pool), pool->size);

	/* a plan without a default --link: unlisted frames are not held back */
	sdr_link_plan_init(&plan, NULL);
	CHECK(sdr_link_plan_add(&plan, "near:10.0.0.1:delay=2ms", err, sizeof(err)) == 0, "%s",
	      err);
	rx = sdr_link_rx_create_plan(&plan, SOCKET_ID_ANY, NULL);
	CHECK(rx != NULL);
	if (rx == NULL)
		return;
	pkts[0] = mk_peer_frame(3, 1, 200);
	pkts[1] = mk_peer_frame(0, 2, 200);
	CHECK(sdr_link_rx_process(rx, pkts, 2, RTE_DIM(pkts), 5000) == 1,
	      "the unlisted frame passes");
	CHECK(*rte_pktmbuf_mtod_offset(pkts[0], uint8_t *, PEER_SEQ_OFF) == 3);
	rte_pktmbuf_free(pkts[0]);
	CHECK(sdr_link_rx_release(rx, pkts, RTE_DIM(pkts), 5000 + 1999999) == 0);
	CHECK(sdr_link_rx_release(rx, pkts, RTE_DIM(pkts), 5000 + 2000000) == 1);
	rte_pktmbuf_free(pkts[0]);
	sdr_link_rx_detach(rx);
	CHECK(rte_mempool_avail_count(pool) == pool->size, "pool leak");
}

/* ------------------------------------------------------ D: paths -- */

struct path_trace {
	uint64_t releases, out_of_order, last_depart, bad_delay[2], per_path[2];
};

static void path_trace_cb(const struct rte_mbuf *m, uint64_t arrival, uint64_t depart,
			  uint64_t release, void *arg)
{
	static const uint64_t delay[2] = {2000000, 5000000};
	struct path_trace *t = arg;
	const uint8_t *p = rte_pktmbuf_mtod(m, const uint8_t *);
	unsigned path = p[PEER_SEQ_OFF] & 1, k = p[PEER_SEQ_OFF + 1];

	(void)release;
	t->releases++;
	t->out_of_order += depart < t->last_depart;
	t->last_depart = depart;
	t->per_path[path]++;
	/* 1250 B at 1 Gbit/s is 10 us; frame k of a burst waits for k ahead */
	t->bad_delay[path] += depart != arrival + (k + 1) * 10000 + delay[path];
}

/* Two paths in a profile (@p dflt false: lanes w/p0, w/p1 and a perfect
 * default lane), or as the default lane itself (--link "A | B": lanes
 * default/p0, default/p1), the frames' source unlisted. */
static void test_paths(bool dflt)
{
	static const char *two = "delay=2ms,rate=1gbit,buffer=1MB,limit=4096 | delay=5ms,"
				 "rate=1gbit,buffer=1MB,limit=4096,down=10ms+5ms";
	const uint64_t step = 100000, t0 = 1000000000ull;
	const unsigned nl = dflt ? 2 : 3;
	struct sdr_link_plan plan;
	struct sdr_link_rx *rx;
	struct sdr_link_stats tot, lane[3], sum;
	struct path_trace tr = {0};
	struct rte_mbuf *pkts[64];
	uint16_t port[2] = {0, 0};
	uint64_t now = t0, offered[2] = {0}, down_offered = 0;
	char err[512], prof[600];

	if (dflt) {
		CHECK(sdr_link_plan_init_spec(&plan, two, err, sizeof(err)) == 0, "%s", err);
	} else {
		sdr_link_plan_init(&plan, NULL);
		snprintf(prof, sizeof(prof), "w:10.0.0.1:%s", two);
		CHECK(sdr_link_plan_add(&plan, prof, err, sizeof(err)) == 0, "%s", err);
	}
	rx = sdr_link_rx_create_plan(&plan, SOCKET_ID_ANY, NULL);
	CHECK(rx != NULL, "create: %s", rte_strerror(rte_errno));
	if (rx == NULL)
		return;
	CHECK(sdr_link_rx_nlanes(rx) == nl);
	CHECK(strcmp(sdr_link_rx_plan(rx)->lane[0].name, dflt ? "default/p0" : "w/p0") == 0 &&
	      strcmp(sdr_link_rx_plan(rx)->lane[1].name, dflt ? "default/p1" : "w/p1") == 0);
	CHECK(sdr_link_rx_cfg(rx)->delay_ns == (dflt ? 2000000u : 0u), "the default lane's path 0");
	for (unsigned p = 49152; p < 65536 && (port[0] == 0 || port[1] == 0); p++)
		if (port[sdr_link_path_of_port((uint16_t)p, 2)] == 0)
			port[sdr_link_path_of_port((uint16_t)p, 2)] = (uint16_t)p;
	sdr_link_rx_set_trace(rx, path_trace_cb, &tr);
	/* every 100 us: 4 frames into each path, interleaved (40 us of each
	 * bottleneck: each path queues only its own burst, 5000 B; one shared
	 * bottleneck would hold both, 10000 B) */
	for (unsigned r = 0; r < 300; r++) {
		uint16_t nb = 0, out;

		for (unsigned k = 0; k < 8; k++) {
			unsigned path = k & 1;
			struct rte_mbuf *m = mk_peer_frame(0, r, 1250);
			uint8_t *p;

			REQUIRE(m != NULL);
			p = rte_pktmbuf_mtod(m, uint8_t *);
			p[23] = 17; /* UDP, source port: the path's */
			p[34] = (uint8_t)(port[path] >> 8);
			p[35] = (uint8_t)port[path];
			p[36] = 0x12;
			p[37] = 0xb7;
			p[PEER_SEQ_OFF] = (uint8_t)path;
			p[PEER_SEQ_OFF + 1] = (uint8_t)(k / 2);
			pkts[nb++] = m;
			offered[path]++;
			if (path == 1 && now - t0 >= 10000000 && now - t0 < 15000000)
				down_offered++;
		}
		out = sdr_link_rx_process(rx, pkts, nb, RTE_DIM(pkts), now);
		rte_pktmbuf_free_bulk(pkts, out);
		for (int k = 1; k <= 4; k++)
			while ((out = sdr_link_rx_release(rx, pkts, RTE_DIM(pkts),
							  now + k * step / 5)) > 0)
				rte_pktmbuf_free_bulk(pkts, out);
		now += step;
	}
	now = drain(rx, now, free_cb, NULL);
	sdr_link_rx_stats(rx, &tot);
	memset(&sum, 0, sizeof(sum));
	memset(lane, 0, sizeof(lane));
	for (unsigned i = 0; i < nl; i++) {
		sdr_link_rx_lane_stats(rx, i, &lane[i]);
		check_identities(&lane[i], sdr_link_rx_plan(rx)->lane[i].name);
		sdr_link_stats_add(&sum, &lane[i]);
	}
	CHECK(memcmp(&sum, &tot, sizeof(sum)) == 0, "the totals are the paths' sum");
	CHECK(lane[0].pkts_in == offered[0] && lane[1].pkts_in == offered[1] &&
		      lane[2].pkts_in == 0,
	      "in: %" PRIu64 " %" PRIu64 " %" PRIu64, lane[0].pkts_in, lane[1].pkts_in,
	      lane[2].pkts_in);
	CHECK(down_offered == 200 && lane[1].dropped_down == down_offered &&
		      lane[0].dropped_down == 0,
	      "down: offered %" PRIu64 ", dropped %" PRIu64 " / %" PRIu64, down_offered,
	      lane[1].dropped_down, lane[0].dropped_down);
	CHECK(lane[0].delivered == offered[0] && lane[1].delivered == offered[1] - down_offered);
	CHECK(lane[0].dropped_buffer == 0 && lane[1].dropped_buffer == 0 &&
		      lane[0].max_backlog_bytes <= 5000 && lane[1].max_backlog_bytes <= 5000,
	      "each path queues only its own burst: %" PRIu64 " / %" PRIu64,
	      lane[0].max_backlog_bytes, lane[1].max_backlog_bytes);
	CHECK(tr.per_path[0] == lane[0].delivered && tr.per_path[1] == lane[1].delivered);
	CHECK(tr.bad_delay[0] == 0 && tr.bad_delay[1] == 0,
	      "not the path's exact delay: %" PRIu64 " / %" PRIu64, tr.bad_delay[0],
	      tr.bad_delay[1]);
	CHECK(tr.out_of_order == 0, "%" PRIu64 " released out of departure order", tr.out_of_order);
	CHECK(tot.held == 0 && tot.released == tr.releases);
	sdr_link_rx_detach(rx);
	CHECK(rte_mempool_avail_count(pool) == pool->size, "pool leak: %u of %u",
	      rte_mempool_avail_count(pool), pool->size);
}

/* -------------------------------------------- B: a real ring port -- */

static void test_ring_port(void)
{
	const unsigned n_frames = 3000;
	struct rte_eth_conf conf;
	struct rte_ring *ring;
	struct sdr_link_cfg cfg;
	struct sdr_link_rx *rx;
	struct sdr_link_stats s;
	struct trace_state tr = {.min_delay_ns = 2000000};
	struct rte_mbuf *pkts[32];
	char err[256];
	uint64_t seq = 0, received = 0, deadline;
	int port;

	memset(&conf, 0, sizeof(conf));
	ring = rte_ring_create("sdr_link_lo", 4096, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ);
	CHECK(ring != NULL, "ring");
	port = rte_eth_from_rings("sdr_link_lo", &ring, 1, &ring, 1, SOCKET_ID_ANY);
	CHECK(port >= 0, "rte_eth_from_rings: %s", rte_strerror(rte_errno));
	if (ring == NULL || port < 0)
		return;
	CHECK(rte_eth_dev_configure(port, 1, 1, &conf) == 0, "configure");
	CHECK(rte_eth_rx_queue_setup(port, 0, 512, SOCKET_ID_ANY, NULL, pool) == 0, "rxq");
	CHECK(rte_eth_tx_queue_setup(port, 0, 512, SOCKET_ID_ANY, NULL) == 0, "txq");

	CHECK(sdr_link_parse("delay=2ms,jitter=100us,loss=0.05,dup=0.02,reorder=0.02:500us,seed=3",
			     &cfg, err, sizeof(err)) == 0,
	      "%s", err);
	CHECK(sdr_link_check_pool(&cfg, 200, 1e9, pool->size, err, sizeof(err)) == 0, "%s", err);
	rx = sdr_link_rx_attach((uint16_t)port, 0, &cfg, NULL);
	CHECK(rx != NULL, "attach: %s", rte_strerror(rte_errno));
	if (rx == NULL)
		return;
	sdr_link_rx_set_trace(rx, trace_cb, &tr);
	CHECK(rte_eth_dev_start(port) == 0, "start");

	while (seq < n_frames) {
		uint16_t nb = 0, sent, got;

		while (nb < 32 && seq < n_frames)
			pkts[nb++] = mk_frame(seq++, 200);
		sent = rte_eth_tx_burst(port, 0, pkts, nb);
		CHECK(sent == nb, "tx %u of %u", sent, nb);
		got = rte_eth_rx_burst(port, 0, pkts, 32);
		received += got;
		rte_pktmbuf_free_bulk(pkts, got);
		rte_delay_us_sleep(20);
	}
	/* every frame has entered the emulator; the last ones cannot have left
	 * yet (2 ms delay), so what follows is release on an idle port */
	sdr_link_rx_stats(rx, &s);
	CHECK(s.pkts_in == n_frames, "in %" PRIu64, s.pkts_in);
	CHECK(s.held > 0, "nothing held after the last burst");

	deadline = rte_get_timer_cycles() + 10 * rte_get_timer_hz();
	do {
		uint16_t got = rte_eth_rx_burst(port, 0, pkts, 32);

		received += got;
		rte_pktmbuf_free_bulk(pkts, got);
		sdr_link_rx_stats(rx, &s);
		if (s.held == 0)
			break;
		rte_delay_us_sleep(200);
	} while (rte_get_timer_cycles() < deadline);

	check_identities(&s, "port");
	CHECK(s.held == 0, "still holding %" PRIu64 " after 10 s", s.held);
	CHECK(received == s.released && tr.releases == s.released,
	      "received %" PRIu64 " released %" PRIu64, received, s.released);
	CHECK(tr.early == 0, "%" PRIu64 " released before departure", tr.early);
	CHECK(tr.too_fast == 0, "%" PRIu64 " departures under 2 ms", tr.too_fast);
	CHECK(s.dropped_loss > 0 && s.duplicated > 0, "loss %" PRIu64 " dup %" PRIu64,
	      s.dropped_loss, s.duplicated);
	sdr_link_stats_print(stdout, "port loopback queue 0", &s);

	CHECK(rte_eth_dev_stop(port) == 0, "stop");
	sdr_link_rx_detach(rx);
	rte_eth_dev_close(port);
	rte_ring_free(ring);
	CHECK(rte_mempool_avail_count(pool) == pool->size, "pool leak: %u of %u",
	      rte_mempool_avail_count(pool), pool->size);
}

int main(int argc, char **argv)
{
	if (rte_eal_init(argc, argv) < 0) {
		fprintf(stderr, "EAL init failed: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	pool = rte_pktmbuf_pool_create("sdr_link_pool", 8191, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				       SOCKET_ID_ANY);
	dup_pool = rte_pktmbuf_pool_create("sdr_link_dup", 2047, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
					   SOCKET_ID_ANY);
	if (pool == NULL || dup_pool == NULL) {
		fprintf(stderr, "mempool: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	test_sim_clock();
	test_limits();
	test_multiseg_corrupt();
	test_peers();
	test_ecn_down();
	test_ecn_dequeue();
	test_arrival_spread();
	test_paths(false);
	test_paths(true);
	test_ring_port();
	rte_eal_cleanup();
	return lt_finish("test_link_dpdk");
}
