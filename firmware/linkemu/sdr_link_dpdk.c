/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Long-haul link emulator, DPDK glue: RX callback, holding structures
 * (a FIFO ring per lane for its in-order frames + one min-heap for the
 * reordered ones of every lane), release.
 * Layer linkemu/: the link emulator's DPDK RX callback; calls no firmware code.
 */
#include "sdr_link_dpdk.h"

#include <errno.h>
#include <string.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_malloc.h>

struct hold_ent {
	struct rte_mbuf *m;
	uint64_t depart_ns;
	uint64_t arrival_ns;
	uint64_t exit_ns;  /* ecnmark=dequeue: when it leaves the bottleneck */
	uint64_t seq : 55; /* tie-break: equal departures leave in arrival order */
	uint64_t mark : 1; /* its mark is decided at exit_ns (ce_at_exit) */
	uint64_t lane : 8;
};

/* One lane (per-peer profile or the default): its in-order frames and the
 * glue's counters. Its reordered frames sit in the instance's shared heap. */
struct lane {
	struct hold_ent *fifo; /* in-order frames, departure times non-decreasing */
	uint32_t fifo_mask;
	uint32_t fifo_head; /* next to release */
	uint32_t fifo_tail; /* next free */
	uint32_t fifo_mark; /* ecnmark=dequeue: next whose mark may be pending
			       (head <= mark <= tail; exits in FIFO order) */
	uint32_t cap;       /* cfg.limit: most frames the lane holds (FIFO and heap) */
	uint32_t held;
	uint64_t dropped_limit;
	uint64_t bytes_limit; /* bytes of dropped_limit frames */
	uint64_t dup_failed;
	uint64_t released;
	uint64_t max_held;
	uint64_t max_release_lag_ns;
};

struct sdr_link_rx {
	struct sdr_link_set set; /* the lanes' models + core counters */
	struct lane lane[SDR_LINK_LANES_MAX];
	unsigned nlanes;
	struct hold_ent *heap; /* reordered frames of every lane, min-heap on (depart, seq) */
	uint32_t heap_n;
	uint32_t held; /* over all lanes */
	uint64_t seq;
	/* setup */
	struct rte_mempool *dup_pool;
	const struct rte_eth_rxtx_callback *cb;
	uint16_t port;
	uint16_t queue;
	uint64_t tsc_hz;
	sdr_link_trace_fn trace;
	void *trace_arg;
	/* arrival=spread: the frames of full polls, not yet admitted, and
	 * the last time the port was found drained (0: not polled yet) */
	bool spread;
	uint32_t npend;
	uint64_t anchor_ns;
	struct rte_mbuf *pend[SDR_LINK_PEND_MAX];
} __rte_cache_aligned;

static inline uint64_t tsc_to_ns(uint64_t tsc, uint64_t hz)
{
	return (uint64_t)(((unsigned __int128)tsc * 1000000000u) / hz);
}

uint64_t sdr_link_now_ns(void)
{
	return tsc_to_ns(rte_rdtsc(), rte_get_tsc_hz());
}

/* ------------------------------------------------------------- heap -- */

static inline bool ent_before(const struct hold_ent *a, const struct hold_ent *b)
{
	return a->depart_ns < b->depart_ns || (a->depart_ns == b->depart_ns && a->seq < b->seq);
}

static void heap_push(struct sdr_link_rx *rx, const struct hold_ent *e)
{
	uint32_t i = rx->heap_n++;

	while (i > 0) {
		uint32_t p = (i - 1) / 2;

		if (!ent_before(e, &rx->heap[p]))
			break;
		rx->heap[i] = rx->heap[p];
		i = p;
	}
	rx->heap[i] = *e;
}

static void heap_pop(struct sdr_link_rx *rx)
{
	struct hold_ent last = rx->heap[--rx->heap_n];
	uint32_t i = 0, n = rx->heap_n;

	if (n == 0)
		return;
	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && ent_before(&rx->heap[c + 1], &rx->heap[c]))
			c++;
		if (!ent_before(&rx->heap[c], &last))
			break;
		rx->heap[i] = rx->heap[c];
		i = c;
	}
	rx->heap[i] = last;
}

/* ------------------------------------------------------------ create -- */

static void free_holding(struct sdr_link_rx *rx)
{
	for (unsigned i = 0; i < SDR_LINK_LANES_MAX; i++)
		rte_free(rx->lane[i].fifo);
	rte_free(rx->heap);
	rte_free(rx);
}

struct sdr_link_rx *sdr_link_rx_create_plan(const struct sdr_link_plan *plan, int socket_id,
					    struct rte_mempool *dup_pool)
{
	struct sdr_link_rx *rx;
	uint64_t heap_cap = 0;

	if (plan == NULL || plan->nlanes < 1 || plan->nlanes > SDR_LINK_LANES_MAX) {
		rte_errno = errno = EINVAL;
		return NULL;
	}
	for (unsigned i = 0; i < plan->nlanes; i++) {
		if (plan->lane[i].cfg.limit < 1 || plan->lane[i].cfg.limit > SDR_LINK_MAX_LIMIT) {
			rte_errno = errno = EINVAL;
			return NULL;
		}
		heap_cap += plan->lane[i].cfg.limit;
	}
	rx = rte_zmalloc_socket("sdr_link_rx", sizeof(*rx), RTE_CACHE_LINE_SIZE, socket_id);
	if (rx == NULL) {
		rte_errno = errno = ENOMEM;
		return NULL;
	}
	if (sdr_link_set_init(&rx->set, plan) != 0) {
		rte_free(rx);
		rte_errno = errno = EINVAL;
		return NULL;
	}
	rx->nlanes = plan->nlanes;
	for (unsigned i = 0; i < plan->nlanes; i++) {
		struct lane *l = &rx->lane[i];
		uint32_t fifo_size = rte_align32pow2(plan->lane[i].cfg.limit);

		l->fifo = rte_malloc_socket("sdr_link_fifo", sizeof(struct hold_ent) * fifo_size,
					    RTE_CACHE_LINE_SIZE, socket_id);
		if (l->fifo == NULL) {
			free_holding(rx);
			rte_errno = errno = ENOMEM;
			return NULL;
		}
		/* touched here, not on the fast path: the FIFO's tail walks
		 * through all of it once before wrapping, and on a direction
		 * with few frames (ACKs) that took hours of page faults in the
		 * worker and a resident size that grew by a page every few
		 * hundred frames until it wrapped (the soak's RSS slope) */
		memset(l->fifo, 0, sizeof(struct hold_ent) * fifo_size);
		l->fifo_mask = fifo_size - 1;
		l->cap = plan->lane[i].cfg.limit;
	}
	rx->heap = rte_malloc_socket("sdr_link_heap", sizeof(struct hold_ent) * heap_cap,
				     RTE_CACHE_LINE_SIZE, socket_id);
	if (rx->heap == NULL) {
		free_holding(rx);
		rte_errno = errno = ENOMEM;
		return NULL;
	}
	memset(rx->heap, 0, sizeof(struct hold_ent) * heap_cap); /* as the FIFO */
	rx->dup_pool = dup_pool;
	rx->tsc_hz = rte_get_tsc_hz();
	rx->port = UINT16_MAX;
	rx->spread = plan->lane[sdr_link_plan_default_lane(plan)].cfg.arrival_spread;
	return rx;
}

struct sdr_link_rx *sdr_link_rx_create(const struct sdr_link_cfg *cfg, int socket_id,
				       struct rte_mempool *dup_pool)
{
	struct sdr_link_plan plan;

	if (cfg == NULL) {
		rte_errno = errno = EINVAL;
		return NULL;
	}
	sdr_link_plan_init(&plan, cfg);
	return sdr_link_rx_create_plan(&plan, socket_id, dup_pool);
}

/* ------------------------------------------------------------ fast path -- */

void sdr_link_corrupt_mbuf(struct rte_mbuf *m, const struct sdr_link_verdict *v)
{
	for (unsigned i = 0; i < v->n_flips; i++) {
		uint32_t off = v->flip_bit[i] / 8;
		struct rte_mbuf *seg = m;

		if (off >= rte_pktmbuf_pkt_len(m))
			continue;
		while (seg != NULL && off >= seg->data_len) {
			off -= seg->data_len;
			seg = seg->next;
		}
		if (seg == NULL)
			continue;
		*rte_pktmbuf_mtod_offset(seg, uint8_t *,
					 off) ^= (uint8_t)(1u << (v->flip_bit[i] % 8));
	}
}

static inline void hold(struct sdr_link_rx *rx, unsigned li, struct rte_mbuf *m, uint64_t depart_ns,
			uint64_t arrival_ns, bool reordered, bool mark, uint64_t exit_ns)
{
	struct lane *l = &rx->lane[li];
	struct hold_ent e = {.m = m,
			     .depart_ns = depart_ns,
			     .arrival_ns = arrival_ns,
			     .exit_ns = exit_ns,
			     .seq = rx->seq++,
			     .mark = mark,
			     .lane = li};

	if (reordered)
		heap_push(rx, &e);
	else
		l->fifo[l->fifo_tail++ & l->fifo_mask] = e;
	rx->held++;
	if (++l->held > l->max_held)
		l->max_held = l->held;
}

static inline void admit(struct sdr_link_rx *rx, struct rte_mbuf *m, uint64_t now_ns)
{
	struct sdr_link_verdict v;
	struct rte_mbuf *copy = NULL;
	unsigned li = sdr_link_set_lane(&rx->set, rte_pktmbuf_mtod(m, const uint8_t *),
					rte_pktmbuf_data_len(m));
	struct lane *l = &rx->lane[li];
	int ecn;

	if (l->held >= l->cap) {
		l->dropped_limit++;
		l->bytes_limit += rte_pktmbuf_pkt_len(m);
		rte_pktmbuf_free(m);
		return;
	}
	ecn = sdr_link_frame_ecn(rte_pktmbuf_mtod(m, const uint8_t *), rte_pktmbuf_data_len(m));
	if (sdr_link_decide_ecn(&rx->set.link[li], now_ns, rte_pktmbuf_pkt_len(m),
				ecn > 0 ? (unsigned)ecn : 0, /* (-1: not IP, never marked) */
				&v) != SDR_LINK_DELIVER) {
		rte_pktmbuf_free(m);
		return;
	}
	/* (ecnmark=dequeue: ce_at_exit, the frame in its lane's FIFO is
	 * marked or not as it leaves the bottleneck, mark_exits(); the core
	 * has decided a reordered one, which sits in the heap, already) */
	if (v.ce) /* (the copy below is taken after: it carries the mark too) */
		sdr_link_frame_mark_ce(rte_pktmbuf_mtod(m, uint8_t *), rte_pktmbuf_data_len(m));
	if (v.duplicate) {
		/* deep copy before corruption: the copy is a clean frame */
		if (l->held + 2 <= l->cap)
			copy = rte_pktmbuf_copy(m, rx->dup_pool ? rx->dup_pool : m->pool, 0,
						UINT32_MAX);
		if (copy == NULL)
			l->dup_failed++;
	}
	if (v.n_flips != 0)
		sdr_link_corrupt_mbuf(m, &v);
	hold(rx, li, m, v.depart_ns, now_ns, v.reordered, v.ce_at_exit, v.bottleneck_exit_ns);
	if (copy != NULL)
		hold(rx, li, copy, v.dup_depart_ns, now_ns, v.reordered, v.ce_at_exit,
		     v.bottleneck_exit_ns);
}

/* ecnmark=dequeue: decide the marks of the frames that have left the
 * bottleneck by @p now_ns, in the order they arrived, before any later
 * arrival is fed to the lane's model (sdr_link_mark_at_exit is exact so) */
static inline void mark_exits(struct sdr_link_rx *rx, uint64_t now_ns)
{
	for (unsigned i = 0; i < rx->nlanes; i++) {
		struct lane *l = &rx->lane[i];

		if (!rx->set.link[i].cfg.ecn_dequeue)
			continue;
		if ((int32_t)(l->fifo_mark - l->fifo_head) < 0)
			l->fifo_mark = l->fifo_head;
		while (l->fifo_mark != l->fifo_tail) {
			struct hold_ent *e = &l->fifo[l->fifo_mark & l->fifo_mask];

			if (e->mark) {
				if (e->exit_ns > now_ns)
					break;
				e->mark = 0;
				if (sdr_link_mark_at_exit(&rx->set.link[i], e->exit_ns))
					sdr_link_frame_mark_ce(rte_pktmbuf_mtod(e->m, uint8_t *),
							       rte_pktmbuf_data_len(e->m));
			}
			l->fifo_mark++;
		}
	}
}

/* The held frame that departs first: the earliest of the lanes' FIFO heads
 * and the heap's top (ties: arrival order), or NULL. *lane_fifo is the
 * lane whose FIFO it heads, or -1 for the heap. */
static inline struct hold_ent *next_out(struct sdr_link_rx *rx, int *lane_fifo)
{
	struct hold_ent *best = rx->heap_n > 0 ? &rx->heap[0] : NULL;

	*lane_fifo = -1;
	for (unsigned i = 0; i < rx->nlanes; i++) {
		struct lane *l = &rx->lane[i];
		struct hold_ent *f;

		if (l->fifo_head == l->fifo_tail)
			continue;
		f = &l->fifo[l->fifo_head & l->fifo_mask];
		if (best == NULL || ent_before(f, best)) {
			best = f;
			*lane_fifo = (int)i;
		}
	}
	return best;
}

/* Hand out the held frames due at @p now_ns (their marks decided already:
 * mark_exits()) */
static uint16_t release_due(struct sdr_link_rx *rx, struct rte_mbuf **pkts, uint16_t max_pkts,
			    uint64_t now_ns)
{
	uint16_t out = 0;

	while (out < max_pkts && rx->held > 0) {
		int lf;
		struct hold_ent *h = next_out(rx, &lf);
		struct hold_ent e;
		struct lane *l;

		if (h == NULL || h->depart_ns > now_ns)
			break;
		e = *h;
		if (lf < 0)
			heap_pop(rx);
		else
			rx->lane[lf].fifo_head++;
		l = &rx->lane[e.lane];
		rx->held--;
		l->held--;
		l->released++;
		if (now_ns - e.depart_ns > l->max_release_lag_ns)
			l->max_release_lag_ns = now_ns - e.depart_ns;
		if (unlikely(rx->trace != NULL))
			rx->trace(e.m, e.arrival_ns, e.depart_ns, now_ns, rx->trace_arg);
		pkts[out++] = e.m;
	}
	return out;
}

uint16_t sdr_link_rx_release(struct sdr_link_rx *rx, struct rte_mbuf **pkts, uint16_t max_pkts,
			     uint64_t now_ns)
{
	mark_exits(rx, now_ns);
	return release_due(rx, pkts, max_pkts, now_ns);
}

/* arrival=spread: the frames one poll finds arrived at some time since
 * the port was last found drained (the anchor), not at the poll: where the
 * polling lcore was away (descheduled on a small host, a kernel path that
 * delivers late), taking them all at the poll would queue at the
 * bottleneck in one instant what arrived over milliseconds, and mark and
 * drop what the link never would. So they are admitted evenly over
 * (anchor, now]. A full poll may have left more of the same interval in
 * the port: its frames wait, unadmitted and unreleased, for the poll that
 * drains it (at most SDR_LINK_PEND_MAX of them). */
static uint16_t process_spread(struct sdr_link_rx *rx, struct rte_mbuf **pkts, uint16_t nb_pkts,
			       uint16_t max_pkts, uint64_t now_ns)
{
	uint32_t n;

	if (rx->anchor_ns == 0 || now_ns < rx->anchor_ns)
		rx->anchor_ns = now_ns;
	if (rx->npend + nb_pkts <= SDR_LINK_PEND_MAX) {
		memcpy(&rx->pend[rx->npend], pkts, sizeof(*pkts) * nb_pkts);
		rx->npend += nb_pkts;
		if (nb_pkts != 0 && nb_pkts == max_pkts &&
		    rx->npend + max_pkts <= SDR_LINK_PEND_MAX)
			return 0;
		nb_pkts = 0;
	}
	n = rx->npend;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t t = rx->anchor_ns +
			     (uint64_t)((unsigned __int128)(now_ns - rx->anchor_ns) * (i + 1) / n);

		if (i + 4 < n)
			rte_prefetch0(rte_pktmbuf_mtod(rx->pend[i + 4], void *));
		mark_exits(rx, t);
		admit(rx, rx->pend[i], t);
	}
	mark_exits(rx, now_ns);
	for (uint16_t i = 0; i < nb_pkts; i++) /* (a poll larger than the bound: at the poll) */
		admit(rx, pkts[i], now_ns);
	rx->npend = 0;
	rx->anchor_ns = now_ns;
	return release_due(rx, pkts, max_pkts, now_ns);
}

uint16_t sdr_link_rx_process(struct sdr_link_rx *rx, struct rte_mbuf **pkts, uint16_t nb_pkts,
			     uint16_t max_pkts, uint64_t now_ns)
{
	if (rx->spread)
		return process_spread(rx, pkts, nb_pkts, max_pkts, now_ns);
	mark_exits(rx, now_ns);
	for (uint16_t i = 0; i < nb_pkts; i++) {
		if (i + 4 < nb_pkts)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 4], void *));
		admit(rx, pkts[i], now_ns);
	}
	/* (the burst's own exits are later than now_ns: nothing more to mark) */
	return release_due(rx, pkts, max_pkts, now_ns);
}

static uint16_t rx_callback(uint16_t port, uint16_t queue, struct rte_mbuf *pkts[],
			    uint16_t nb_pkts, uint16_t max_pkts, void *arg)
{
	struct sdr_link_rx *rx = arg;

	RTE_SET_USED(port);
	RTE_SET_USED(queue);
	return sdr_link_rx_process(rx, pkts, nb_pkts, max_pkts, tsc_to_ns(rte_rdtsc(), rx->tsc_hz));
}

/* ------------------------------------------------------------ control -- */

struct sdr_link_rx *sdr_link_rx_attach_plan(uint16_t port, uint16_t queue,
					    const struct sdr_link_plan *plan,
					    struct rte_mempool *dup_pool)
{
	struct rte_eth_dev_info info;
	struct sdr_link_rx *rx;
	int rc, socket;

	if (!rte_eth_dev_is_valid_port(port)) {
		rte_errno = errno = ENODEV;
		return NULL;
	}
	rc = rte_eth_dev_info_get(port, &info);
	if (rc != 0) {
		rte_errno = errno = -rc;
		return NULL;
	}
	if (queue >= info.nb_rx_queues && queue >= info.max_rx_queues) {
		rte_errno = errno = EINVAL;
		return NULL;
	}
	socket = rte_eth_dev_socket_id(port);
	rx = sdr_link_rx_create_plan(plan, socket < 0 ? SOCKET_ID_ANY : socket, dup_pool);
	if (rx == NULL)
		return NULL;
	rx->port = port;
	rx->queue = queue;
	rx->cb = rte_eth_add_rx_callback(port, queue, rx_callback, rx);
	if (rx->cb == NULL) {
		int e = rte_errno ? rte_errno : EINVAL;

		free_holding(rx);
		rte_errno = errno = e;
		return NULL;
	}
	return rx;
}

struct sdr_link_rx *sdr_link_rx_attach(uint16_t port, uint16_t queue,
				       const struct sdr_link_cfg *cfg, struct rte_mempool *dup_pool)
{
	struct sdr_link_plan plan;

	if (cfg == NULL) {
		rte_errno = errno = EINVAL;
		return NULL;
	}
	sdr_link_plan_init(&plan, cfg);
	return sdr_link_rx_attach_plan(port, queue, &plan, dup_pool);
}

void sdr_link_rx_detach(struct sdr_link_rx *rx)
{
	if (rx == NULL)
		return;
	if (rx->cb != NULL) {
		/* ethdev unlinks it but never frees it; the caller guarantees no
		 * lcore is running it (see the header), so free it now. */
		if (rte_eth_remove_rx_callback(rx->port, rx->queue, rx->cb) == 0)
			rte_free((void *)(uintptr_t)rx->cb);
		rx->cb = NULL;
	}
	for (unsigned i = 0; i < rx->nlanes; i++) {
		struct lane *l = &rx->lane[i];

		while (l->fifo_head != l->fifo_tail)
			rte_pktmbuf_free(l->fifo[l->fifo_head++ & l->fifo_mask].m);
	}
	for (uint32_t i = 0; i < rx->heap_n; i++)
		rte_pktmbuf_free(rx->heap[i].m);
	for (uint32_t i = 0; i < rx->npend; i++)
		rte_pktmbuf_free(rx->pend[i]);
	free_holding(rx);
}

uint64_t sdr_link_rx_next_departure(const struct sdr_link_rx *rx)
{
	int lf;
	struct hold_ent *h = next_out((struct sdr_link_rx *)(uintptr_t)rx, &lf);

	return h != NULL ? h->depart_ns : UINT64_MAX;
}

unsigned sdr_link_rx_nlanes(const struct sdr_link_rx *rx)
{
	return rx->nlanes;
}

const struct sdr_link_plan *sdr_link_rx_plan(const struct sdr_link_rx *rx)
{
	return &rx->set.plan;
}

void sdr_link_rx_lane_stats(const struct sdr_link_rx *rx, unsigned lane, struct sdr_link_stats *s)
{
	const struct lane *l;

	if (lane >= rx->nlanes) {
		memset(s, 0, sizeof(*s));
		return;
	}
	l = &rx->lane[lane];
	*s = rx->set.link[lane].stats;
	/* frames refused for lack of room never reached the core model */
	s->pkts_in += l->dropped_limit;
	s->bytes_in += l->bytes_limit;
	s->dropped_limit = l->dropped_limit;
	s->dup_failed = l->dup_failed;
	s->released = l->released;
	s->held = l->held;
	s->max_held = l->max_held;
	s->max_release_lag_ns = l->max_release_lag_ns;
}

void sdr_link_rx_stats(const struct sdr_link_rx *rx, struct sdr_link_stats *s)
{
	struct sdr_link_stats x;

	memset(s, 0, sizeof(*s));
	for (unsigned i = 0; i < rx->nlanes; i++) {
		sdr_link_rx_lane_stats(rx, i, &x);
		sdr_link_stats_add(s, &x);
	}
}

void sdr_link_rx_set_trace(struct sdr_link_rx *rx, sdr_link_trace_fn fn, void *arg)
{
	rx->trace_arg = arg;
	rx->trace = fn;
}

const struct sdr_link_cfg *sdr_link_rx_cfg(const struct sdr_link_rx *rx)
{
	return &rx->set.plan.lane[sdr_link_plan_default_lane(&rx->set.plan)].cfg;
}
