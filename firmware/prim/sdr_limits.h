/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-dpu firmware (layer prim): the sizes and limits of the runtime objects
 * (QPs, contexts, workers, flows, bursts), shared by every layer. Plain
 * constants; no DPDK.
 */
#ifndef SDR_LIMITS_H
#define SDR_LIMITS_H

#include "config.h" /* SDR_MAX_INST */

#define SDR_MAX_WORKERS 16
#define SDR_MAX_QPS 1024                /* per instance; qp_id = QPN block index */
#define SDR_MAX_CTX 64                  /* host contexts per instance */
#define SDR_MAX_QPS_PER_CTX SDR_MAX_QPS /* one context may hold all of them */
#define SDR_QPN_FIRST 0x100             /* first QPN block base of epoch 0 */
#define SDR_QPN_EPOCH_SPAN 0x4000       /* QPNs per epoch (>= SDR_MAX_QPS * 16 generations) */
#define SDR_QPN_EPOCHS 1023             /* epochs 0..1022 fit 24-bit QPNs */
/* Transmit scheduling (worker.c, docs/architecture.md "Pacing"): flows are
 * per instance and QP (sdr_qp_flow()); pacing wheel slots of 2^12 cycles
 * (about 2 us at 2 GHz: 4096 of them reach 8 ms, the frame time of a 4 KiB
 * frame at 4 Mbit/s; slower QPs park at the horizon and are re-filed once
 * a lap), timer wheel slots of 2^15 cycles (16 us, 64 ms ahead). */
#define SDR_FLOWS (SDR_MAX_INST * SDR_MAX_QPS)
#define SDR_PACE_SHIFT 12
#define SDR_TIMER_SHIFT 15
#define SDR_PACE_BURST_MIN (64u * 1024) /* default --pace-burst floor (txq.h) */
#define SDR_BURST 32
/* Per worker loop: RX bursts per port at most, while they come full; data
 * frames reserved at most (then the QPs wait for the next loop: what is sent
 * in a loop is received, checked and placed while it is still in the
 * cache, docs/architecture.md "The worker loop") */
#define SDR_RX_BURSTS 8
#define SDR_LOOP_TX (2 * SDR_BURST)
#define SDR_STREAM_RANGES 16 /* STREAM_DATA descriptors queued per stream */
#define SDR_MBUF_DATA 9216   /* room for a 9000-byte MTU frame */

#endif /* SDR_LIMITS_H */
