/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Link emulator DPDK glue, under EAL (no hugepages):
 *  A. sdr_link_rx_process() with real mbufs on a simulated clock: counters
 *     add up, nothing leaves before its departure time, corruption spares the
 *     headers, duplicates are copies, the limit and a small dup pool are
 *     handled, and every mbuf goes back to its pool;
 *  B. the RX callback on a net_ring loopback port with the real TSC clock:
 *     frames sent through the port all come out (or are counted as dropped),
 *     also after the sender went idle, and never before their departure time
 *     as the emulator computed it.
 * Pass/fail never depends on how long anything took (a 10 s safety bound
 * only catches a hang).
 */
#include <inttypes.h>
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

static struct rte_mbuf *
mk_frame(uint64_t seq, uint32_t len)
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

static uint64_t
frame_seq(const struct rte_mbuf *m)
{
	uint64_t seq;

	memcpy(&seq, rte_pktmbuf_mtod_offset(m, const uint8_t *, SEQ_OFF), sizeof(seq));
	return seq;
}

/* counts differing bits against the pattern; *head_bad if any of bytes
 * 0..41 (outside the seq field) differ */
static unsigned
diff_bits(const struct rte_mbuf *m, unsigned *head_bad)
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
	uint64_t early;        /* released before departure */
	uint64_t too_fast;     /* departure earlier than arrival + min_delay */
	uint64_t max_lag;
};

static void
trace_cb(const struct rte_mbuf *m, uint64_t arrival, uint64_t depart, uint64_t release, void *arg)
{
	struct trace_state *t = arg;

	(void)m;
	t->releases++;
	t->early += release < depart;
	t->too_fast += depart < arrival + t->min_delay_ns;
	if (release - depart > t->max_lag)
		t->max_lag = release - depart;
}

static void
check_identities(const struct sdr_link_stats *s, const char *what)
{
	CHECK(s->pkts_in ==
		      s->delivered + s->dropped_buffer + s->dropped_loss + s->dropped_ge + s->dropped_limit,
	      "%s: in %" PRIu64 " != delivered %" PRIu64 " + drops", what, s->pkts_in, s->delivered);
	CHECK(s->delivered + s->duplicated - s->dup_failed == s->released + s->held,
	      "%s: delivered %" PRIu64 " + dup %" PRIu64 " - failed %" PRIu64 " != released %" PRIu64
	      " + held %" PRIu64,
	      what, s->delivered, s->duplicated, s->dup_failed, s->released, s->held);
}

/* ---------------------------------------------- A: simulated clock -- */

static uint64_t *seen; /* releases per frame number */

static void
consume(struct rte_mbuf **pkts, uint16_t n, unsigned *head_bad, unsigned *corrupt_frames)
{
	for (uint16_t i = 0; i < n; i++) {
		unsigned bits = diff_bits(pkts[i], head_bad);

		*corrupt_frames += bits != 0;
		seen[frame_seq(pkts[i])]++;
		rte_pktmbuf_free(pkts[i]);
	}
}

static void
test_sim_clock(void)
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
	/* drain: jump to each next departure */
	for (;;) {
		uint64_t t = sdr_link_rx_next_departure(rx);
		uint16_t out;

		if (t == UINT64_MAX)
			break;
		now = t > now ? t : now;
		out = sdr_link_rx_release(rx, pkts, RTE_DIM(pkts), now);
		consume(pkts, out, &head_bad, &corrupt_frames);
	}
	sdr_link_rx_stats(rx, &s);
	check_identities(&s, "sim");
	CHECK(s.pkts_in == n_frames && s.held == 0, "in %" PRIu64 " held %" PRIu64, s.pkts_in, s.held);
	CHECK(s.dropped_buffer > 0 && s.dropped_loss > 0 && s.reordered > 0 && s.duplicated > 0 &&
		      s.corrupted > 0,
	      "every feature fired");
	CHECK(s.dup_failed == 0, "dup failed %" PRIu64, s.dup_failed);
	CHECK(tr.releases == s.released, "trace saw %" PRIu64 " of %" PRIu64, tr.releases, s.released);
	CHECK(tr.early == 0, "%" PRIu64 " released before departure", tr.early);
	CHECK(tr.too_fast == 0, "%" PRIu64 " departed before arrival + delay + serialisation",
	      tr.too_fast);
	/* release is polled every step/5, so it is late by less than that */
	CHECK(tr.max_lag < step / 5 && s.max_release_lag_ns == tr.max_lag, "lag %" PRIu64, tr.max_lag);
	CHECK(head_bad == 0, "%u header bytes changed", head_bad);
	/* a corrupted original and its clean copy: corrupt_frames counts what
	 * came out with flipped bits, exactly the corrupted originals */
	CHECK(corrupt_frames == s.corrupted, "%u frames differ, %" PRIu64 " corrupted", corrupt_frames,
	      s.corrupted);
	for (unsigned i = 0; i < n_frames; i++) {
		twice += seen[i] == 2;
		more_than_twice += seen[i] > 2;
	}
	CHECK(twice == s.duplicated && more_than_twice == 0, "twice %u dup %" PRIu64, twice,
	      s.duplicated);
	sdr_link_rx_detach(rx);
	free(seen);
	CHECK(rte_mempool_avail_count(pool) == pool->size, "pool leak: %u of %u", rte_mempool_avail_count(pool),
	      pool->size);
	CHECK(rte_mempool_avail_count(dup_pool) == dup_pool->size, "dup pool leak");
}

/* limit=, a dup pool that runs dry, and detach with frames still held */
static void
test_limits(void)
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
	CHECK(s.duplicated == 32 && s.dup_failed == 16 && s.held == 48, "dup %" PRIu64 " failed %" PRIu64
	      " held %" PRIu64, s.duplicated, s.dup_failed, s.held);
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
	CHECK(sdr_link_rx_create(NULL, SOCKET_ID_ANY, NULL) == NULL && rte_errno == EINVAL, "NULL cfg");
	cfg.limit = 0;
	CHECK(sdr_link_rx_create(&cfg, SOCKET_ID_ANY, NULL) == NULL && rte_errno == EINVAL, "limit 0");
	sdr_link_cfg_default(&cfg);
	CHECK(sdr_link_rx_attach(RTE_MAX_ETHPORTS - 1, 0, &cfg, NULL) == NULL && rte_errno == ENODEV,
	      "bad port");
	sdr_link_rx_detach(NULL);
}

/* corruption reaches into the second segment of a chain */
static void
test_multiseg_corrupt(void)
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

/* -------------------------------------------- B: a real ring port -- */

static void
test_ring_port(void)
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
	CHECK(s.dropped_loss > 0 && s.duplicated > 0, "loss %" PRIu64 " dup %" PRIu64, s.dropped_loss,
	      s.duplicated);
	sdr_link_stats_print(stdout, "port loopback queue 0", &s);

	CHECK(rte_eth_dev_stop(port) == 0, "stop");
	sdr_link_rx_detach(rx);
	rte_eth_dev_close(port);
	rte_ring_free(ring);
	CHECK(rte_mempool_avail_count(pool) == pool->size, "pool leak: %u of %u",
	      rte_mempool_avail_count(pool), pool->size);
}

int
main(int argc, char **argv)
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
	test_ring_port();
	rte_eal_cleanup();
	return lt_finish("test_link_dpdk");
}
