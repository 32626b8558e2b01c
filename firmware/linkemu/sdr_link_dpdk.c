/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Long-haul link emulator, DPDK glue: RX callback, holding structures
 * (FIFO ring for in-order frames + min-heap for reordered ones), release.
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
	uint64_t seq; /* tie-break: equal departures leave in arrival order */
};

struct sdr_link_rx {
	struct sdr_link link; /* core model + core counters */
	/* holding structures */
	struct hold_ent *fifo; /* in-order frames, departure times non-decreasing */
	uint32_t fifo_mask;
	uint32_t fifo_head; /* next to release */
	uint32_t fifo_tail; /* next free */
	struct hold_ent *heap; /* reordered frames, min-heap on (depart, seq) */
	uint32_t heap_n;
	uint32_t cap;  /* cfg.limit: most frames held in both together */
	uint32_t held;
	uint64_t seq;
	/* glue counters */
	uint64_t dropped_limit;
	uint64_t bytes_limit; /* bytes of dropped_limit frames */
	uint64_t dup_failed;
	uint64_t released;
	uint64_t max_held;
	uint64_t max_release_lag_ns;
	/* setup */
	struct rte_mempool *dup_pool;
	const struct rte_eth_rxtx_callback *cb;
	uint16_t port;
	uint16_t queue;
	uint64_t tsc_hz;
	sdr_link_trace_fn trace;
	void *trace_arg;
} __rte_cache_aligned;

static inline uint64_t
tsc_to_ns(uint64_t tsc, uint64_t hz)
{
	return (uint64_t)(((unsigned __int128)tsc * 1000000000u) / hz);
}

uint64_t
sdr_link_now_ns(void)
{
	return tsc_to_ns(rte_rdtsc(), rte_get_tsc_hz());
}

/* ------------------------------------------------------------- heap -- */

static inline bool
ent_before(const struct hold_ent *a, const struct hold_ent *b)
{
	return a->depart_ns < b->depart_ns || (a->depart_ns == b->depart_ns && a->seq < b->seq);
}

static void
heap_push(struct sdr_link_rx *rx, const struct hold_ent *e)
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

static void
heap_pop(struct sdr_link_rx *rx)
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

struct sdr_link_rx *
sdr_link_rx_create(const struct sdr_link_cfg *cfg, int socket_id, struct rte_mempool *dup_pool)
{
	struct sdr_link_rx *rx;
	uint32_t fifo_size;

	if (cfg == NULL || cfg->limit < 1 || cfg->limit > SDR_LINK_MAX_LIMIT) {
		rte_errno = errno = EINVAL;
		return NULL;
	}
	rx = rte_zmalloc_socket("sdr_link_rx", sizeof(*rx), RTE_CACHE_LINE_SIZE, socket_id);
	if (rx == NULL) {
		rte_errno = errno = ENOMEM;
		return NULL;
	}
	if (sdr_link_init(&rx->link, cfg) != 0) {
		rte_free(rx);
		rte_errno = errno = EINVAL;
		return NULL;
	}
	fifo_size = rte_align32pow2(cfg->limit);
	rx->fifo = rte_malloc_socket("sdr_link_fifo", sizeof(struct hold_ent) * fifo_size,
				     RTE_CACHE_LINE_SIZE, socket_id);
	rx->heap = rte_malloc_socket("sdr_link_heap", sizeof(struct hold_ent) * cfg->limit,
				     RTE_CACHE_LINE_SIZE, socket_id);
	if (rx->fifo == NULL || rx->heap == NULL) {
		rte_free(rx->fifo);
		rte_free(rx->heap);
		rte_free(rx);
		rte_errno = errno = ENOMEM;
		return NULL;
	}
	rx->fifo_mask = fifo_size - 1;
	rx->cap = cfg->limit;
	rx->dup_pool = dup_pool;
	rx->tsc_hz = rte_get_tsc_hz();
	rx->port = UINT16_MAX;
	return rx;
}

/* ------------------------------------------------------------ fast path -- */

void
sdr_link_corrupt_mbuf(struct rte_mbuf *m, const struct sdr_link_verdict *v)
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
		*rte_pktmbuf_mtod_offset(seg, uint8_t *, off) ^= (uint8_t)(1u << (v->flip_bit[i] % 8));
	}
}

static inline void
hold(struct sdr_link_rx *rx, struct rte_mbuf *m, uint64_t depart_ns, uint64_t arrival_ns,
     bool reordered)
{
	struct hold_ent e = {.m = m, .depart_ns = depart_ns, .arrival_ns = arrival_ns,
			     .seq = rx->seq++};

	if (reordered)
		heap_push(rx, &e);
	else
		rx->fifo[rx->fifo_tail++ & rx->fifo_mask] = e;
	if (++rx->held > rx->max_held)
		rx->max_held = rx->held;
}

static inline void
admit(struct sdr_link_rx *rx, struct rte_mbuf *m, uint64_t now_ns)
{
	struct sdr_link_verdict v;
	struct rte_mbuf *copy = NULL;

	if (rx->held >= rx->cap) {
		rx->dropped_limit++;
		rx->bytes_limit += rte_pktmbuf_pkt_len(m);
		rte_pktmbuf_free(m);
		return;
	}
	if (sdr_link_decide(&rx->link, now_ns, rte_pktmbuf_pkt_len(m), &v) != SDR_LINK_DELIVER) {
		rte_pktmbuf_free(m);
		return;
	}
	if (v.duplicate) {
		/* deep copy before corruption: the copy is a clean frame */
		if (rx->held + 2 <= rx->cap)
			copy = rte_pktmbuf_copy(m, rx->dup_pool ? rx->dup_pool : m->pool, 0, UINT32_MAX);
		if (copy == NULL)
			rx->dup_failed++;
	}
	if (v.n_flips != 0)
		sdr_link_corrupt_mbuf(m, &v);
	hold(rx, m, v.depart_ns, now_ns, v.reordered);
	if (copy != NULL)
		hold(rx, copy, v.dup_depart_ns, now_ns, v.reordered);
}

uint16_t
sdr_link_rx_release(struct sdr_link_rx *rx, struct rte_mbuf **pkts, uint16_t max_pkts,
		    uint64_t now_ns)
{
	uint16_t out = 0;

	while (out < max_pkts && rx->held > 0) {
		struct hold_ent *f = rx->fifo_head != rx->fifo_tail
					     ? &rx->fifo[rx->fifo_head & rx->fifo_mask]
					     : NULL;
		struct hold_ent *h = rx->heap_n > 0 ? &rx->heap[0] : NULL;
		struct hold_ent e;

		if (f == NULL || (h != NULL && ent_before(h, f))) {
			if (h->depart_ns > now_ns)
				break;
			e = *h;
			heap_pop(rx);
		} else {
			if (f->depart_ns > now_ns)
				break;
			e = *f;
			rx->fifo_head++;
		}
		rx->held--;
		rx->released++;
		if (now_ns - e.depart_ns > rx->max_release_lag_ns)
			rx->max_release_lag_ns = now_ns - e.depart_ns;
		if (unlikely(rx->trace != NULL))
			rx->trace(e.m, e.arrival_ns, e.depart_ns, now_ns, rx->trace_arg);
		pkts[out++] = e.m;
	}
	return out;
}

uint16_t
sdr_link_rx_process(struct sdr_link_rx *rx, struct rte_mbuf **pkts, uint16_t nb_pkts,
		    uint16_t max_pkts, uint64_t now_ns)
{
	for (uint16_t i = 0; i < nb_pkts; i++) {
		if (i + 4 < nb_pkts)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[i + 4], void *));
		admit(rx, pkts[i], now_ns);
	}
	return sdr_link_rx_release(rx, pkts, max_pkts, now_ns);
}

static uint16_t
rx_callback(uint16_t port, uint16_t queue, struct rte_mbuf *pkts[], uint16_t nb_pkts,
	    uint16_t max_pkts, void *arg)
{
	struct sdr_link_rx *rx = arg;

	RTE_SET_USED(port);
	RTE_SET_USED(queue);
	return sdr_link_rx_process(rx, pkts, nb_pkts, max_pkts, tsc_to_ns(rte_rdtsc(), rx->tsc_hz));
}

/* ------------------------------------------------------------ control -- */

struct sdr_link_rx *
sdr_link_rx_attach(uint16_t port, uint16_t queue, const struct sdr_link_cfg *cfg,
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
	rx = sdr_link_rx_create(cfg, socket < 0 ? SOCKET_ID_ANY : socket, dup_pool);
	if (rx == NULL)
		return NULL;
	rx->port = port;
	rx->queue = queue;
	rx->cb = rte_eth_add_rx_callback(port, queue, rx_callback, rx);
	if (rx->cb == NULL) {
		int e = rte_errno ? rte_errno : EINVAL;

		rte_free(rx->fifo);
		rte_free(rx->heap);
		rte_free(rx);
		rte_errno = errno = e;
		return NULL;
	}
	return rx;
}

void
sdr_link_rx_detach(struct sdr_link_rx *rx)
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
	while (rx->fifo_head != rx->fifo_tail)
		rte_pktmbuf_free(rx->fifo[rx->fifo_head++ & rx->fifo_mask].m);
	for (uint32_t i = 0; i < rx->heap_n; i++)
		rte_pktmbuf_free(rx->heap[i].m);
	rte_free(rx->fifo);
	rte_free(rx->heap);
	rte_free(rx);
}

uint64_t
sdr_link_rx_next_departure(const struct sdr_link_rx *rx)
{
	uint64_t t = UINT64_MAX;

	if (rx->fifo_head != rx->fifo_tail)
		t = rx->fifo[rx->fifo_head & rx->fifo_mask].depart_ns;
	if (rx->heap_n > 0 && rx->heap[0].depart_ns < t)
		t = rx->heap[0].depart_ns;
	return t;
}

void
sdr_link_rx_stats(const struct sdr_link_rx *rx, struct sdr_link_stats *s)
{
	*s = rx->link.stats;
	/* frames refused for lack of room never reached the core model */
	s->pkts_in += rx->dropped_limit;
	s->bytes_in += rx->bytes_limit;
	s->dropped_limit = rx->dropped_limit;
	s->dup_failed = rx->dup_failed;
	s->released = rx->released;
	s->held = rx->held;
	s->max_held = rx->max_held;
	s->max_release_lag_ns = rx->max_release_lag_ns;
}

void
sdr_link_rx_set_trace(struct sdr_link_rx *rx, sdr_link_trace_fn fn, void *arg)
{
	rx->trace_arg = arg;
	rx->trace = fn;
}

const struct sdr_link_cfg *
sdr_link_rx_cfg(const struct sdr_link_rx *rx)
{
	return &rx->link.cfg;
}
