/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Transmit primitive: packet buffers, the two pacers (the QP's rate and the
 * worker's share of the port rate), frame building and the per-port TX
 * burst of a worker. A paced frame is reserved as one step: the mbuf and
 * the tokens of both buckets, all rolled back when any of them is missing.
 */
#ifndef SDR_TXQ_H
#define SDR_TXQ_H

#include "sdr_types.h"

/** Bucket depth for a pacer of @p rate_bytes per second: --pace-burst, or by
 *  default 200 us worth of the rate (at least 64 KiB), so that a worker that
 *  is off the CPU for a scheduler tick does not lose the tokens it missed. */
static inline uint64_t sdr_pace_burst(uint64_t rate_bytes)
{
	uint64_t b = rate_bytes / 5000;
	if (sdr_g.cfg.pace_burst)
		return sdr_g.cfg.pace_burst;
	return b > SDR_PACER_DEFAULT_BURST ? b : SDR_PACER_DEFAULT_BURST;
}

/** An mbuf for an unpaced frame (control packets, ARP), or NULL (counted
 *  tx_nombuf). */
struct rte_mbuf *sdr_txq_alloc(struct sdr_worker *w, struct sdr_inst *in);

/** Reserve a paced frame of @p bytes for @p qp: tokens of the QP's and the
 *  port's pacer and an mbuf. @return the mbuf, or NULL when a pacer stalls
 *  (counted pace_stalls) or no mbuf is free (tx_nombuf); nothing is taken
 *  then. */
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

/** Queue a finished frame. */
void sdr_txq_enqueue(struct sdr_worker *w, struct sdr_inst *in, struct rte_mbuf *m);

/** Hand the worker's queued frames of instance @p inst_idx to the PMD. */
void sdr_txq_flush(struct sdr_worker *w, unsigned inst_idx);

#endif /* SDR_TXQ_H */
