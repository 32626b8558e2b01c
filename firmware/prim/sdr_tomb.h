/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tombstones (layer prim; docs/reliability.md "Faults: link outages"): what
 * a destroyed QP leaves behind so that its peer learns that it is gone
 * (QP-CLOSED) instead of retransmitting into silence until its outage
 * horizon. One per QPN block of an instance, written by the main lcore when
 * the QP is destroyed (after its worker let go of it), read by the workers'
 * receive path under a sequence count. No DPDK.
 */
#ifndef SDR_TOMB_H
#define SDR_TOMB_H

#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#include "sdr_wire.h"

#define SDR_TOMB_GAP_MS 100 /* at most one QP-CLOSED per tombstone per this */

/** What a destroyed QP leaves: who its peer was and how to reach it, the
 *  peer's control key (the QP-CLOSED must pass the peer's key check), and
 *  which of its last 1024 receives completed FULL. */
struct sdr_tomb_data {
	uint32_t qpn_base;            /**< the destroyed QP's block base; 0 = no tombstone */
	uint32_t remote_qpn;          /**< its peer's block base */
	uint32_t remote_ip;           /**< (host order) */
	uint64_t remote_key;          /**< its peer's control key */
	uint64_t made_tsc;            /**< when it was destroyed */
	struct sdr_l2l3 l2;           /**< the frames' addresses towards the peer */
	struct sdr_closed_msg closed; /**< the answer's body */
};

struct sdr_tomb {
	_Atomic uint32_t wseq;        /**< odd while the main lcore writes */
	_Atomic uint64_t last_tx_tsc; /**< the last QP-CLOSED sent (workers; approximate) */
	struct sdr_tomb_data d;
};

/** Main lcore: write tombstone @p t (a QPN block's). */
static inline void sdr_tomb_write(struct sdr_tomb *t, const struct sdr_tomb_data *d)
{
	uint32_t s = atomic_load_explicit(&t->wseq, memory_order_relaxed);

	atomic_store_explicit(&t->wseq, s + 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_release);
	t->d = *d;
	atomic_store_explicit(&t->last_tx_tsc, 0, memory_order_relaxed);
	atomic_store_explicit(&t->wseq, s + 2, memory_order_release);
}

/** A worker: copy tombstone @p t into @p d. @return 1 when it holds one
 *  (qpn_base != 0) and the copy is consistent, else 0. */
static inline int sdr_tomb_read(const struct sdr_tomb *t, struct sdr_tomb_data *d)
{
	uint32_t s = atomic_load_explicit(&t->wseq, memory_order_acquire);

	if (s & 1)
		return 0;
	memcpy(d, &t->d, sizeof(*d));
	atomic_thread_fence(memory_order_acquire);
	return atomic_load_explicit(&t->wseq, memory_order_relaxed) == s && d->qpn_base;
}

/** A worker: may tombstone @p t answer now (@p gap cycles since the last
 *  answer)? Takes the turn when it may. */
static inline int sdr_tomb_turn(struct sdr_tomb *t, uint64_t now, uint64_t gap)
{
	uint64_t last = atomic_load_explicit(&t->last_tx_tsc, memory_order_relaxed);

	if (last && now - last < gap)
		return 0;
	return atomic_compare_exchange_strong_explicit(&t->last_tx_tsc, &last, now ? now : 1,
						       memory_order_relaxed, memory_order_relaxed);
}

#endif /* SDR_TOMB_H */
