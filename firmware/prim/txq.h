/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Transmit primitive: packet buffers, the pacer (the worker's timing wheel,
 * common/sdr_wheel.h: the QP's departure time and the worker's share of the
 * port rate), frame building and the per-port TX burst of a worker. A paced
 * frame is reserved as one step: both departure times must have come and an
 * mbuf must be free; only then are both advanced.
 */
#ifndef SDR_TXQ_H
#define SDR_TXQ_H

#include "sdr_dpu.h"
#include "sdr_inst.h"
#include "sdr_qp.h"
#include "sdr_worker.h"

/** How far a paced QP or port may catch up after its worker was late (off
 *  the CPU), in bytes at @p rate_bytes per second: --pace-burst, or by
 *  default 200 us of the rate (at least 64 KiB), so that a worker that is
 *  descheduled for a scheduler tick does not lose the time it missed. An
 *  idle QP earns nothing (common/sdr_wheel.h). */
static inline uint64_t sdr_pace_burst(uint64_t rate_bytes)
{
	uint64_t b = rate_bytes / 5000;
	if (sdr_g.cfg.pace_burst)
		return sdr_g.cfg.pace_burst;
	return b > SDR_PACE_BURST_MIN ? b : SDR_PACE_BURST_MIN;
}

/** An mbuf for an unpaced frame (control packets, ARP), or NULL (counted
 *  tx_nombuf). */
struct rte_mbuf *sdr_txq_alloc(struct sdr_worker *w, struct sdr_inst *in);

/** Reserve a paced frame of @p bytes for @p qp: its departure time and its
 *  port's have come, and an mbuf. @return the mbuf (both departure times
 *  advanced), or NULL when the pacer says not yet (counted pace_stalls),
 *  the worker reserved SDR_LOOP_TX frames in this loop already (counted
 *  loop_tx_full) or no mbuf is free (tx_nombuf); nothing is taken then, and
 *  the worker files the QP in its pacer for later (w->sched.stall). */
struct rte_mbuf *sdr_txq_reserve(struct sdr_worker *w, struct sdr_qp *qp, uint32_t bytes,
				 uint64_t now);

/** Build data packet @p pkt_off of send @p sm (payload @p src, @p plen
 *  bytes, SE @p se) into @p m and queue it. */
void sdr_txq_data(struct sdr_worker *w, struct sdr_qp *qp, struct rte_mbuf *m,
		  const struct sdr_smsg *sm, uint32_t pkt_off, const uint8_t *src, uint32_t plen,
		  int se);

/** Queue the control message of @p mlen bytes the caller encoded at
 *  SDR_CTRL_HDR_LEN of @p m: the peer's control key, Ethernet..BTH headers,
 *  ICRC. */
void sdr_txq_ctrl(struct sdr_worker *w, struct sdr_qp *qp, struct rte_mbuf *m, size_t mlen);

/** Queue the control message of @p mlen bytes the caller encoded at
 *  SDR_CTRL_HDR_LEN of @p m to QP @p dest_qpn at @p l2 with control key
 *  @p key, without a QP (a tombstone's QP-CLOSED; PSN 0). */
void sdr_txq_ctrl_to(struct sdr_worker *w, struct sdr_inst *in, const struct sdr_l2l3 *l2,
		     uint32_t dest_qpn, uint64_t key, struct rte_mbuf *m, size_t mlen);

/** Queue a finished frame. */
void sdr_txq_enqueue(struct sdr_worker *w, struct sdr_inst *in, struct rte_mbuf *m);

/** Hand the worker's queued frames of instance @p inst_idx to the PMD. */
void sdr_txq_flush(struct sdr_worker *w, unsigned inst_idx);

#endif /* SDR_TXQ_H */
