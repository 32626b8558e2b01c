/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-dpu firmware (layer prim): a worker lcore - its host contexts and
 * QPs, drop counters, per-port packet counts, transmit batches, pacer and
 * timer wheel, and what it times of itself (DPDK: rings, mbufs, the TSC).
 */
#ifndef SDR_WORKER_T_H
#define SDR_WORKER_T_H

#include <stdatomic.h>
#include <stdint.h>

#include <rte_common.h>
#include <rte_cycles.h>

#include "sdr_counters.h"
#include "sdr_limits.h"
#include "sdr_qp.h"
#include "sdr_wheel.h"

struct rte_mbuf;
struct rte_ring;
struct sdr_hctx;

struct sdr_port_stats {
	uint64_t rx_pkts, rx_bytes, tx_pkts, tx_bytes;
};

/* Why a worker visited a QP (struct sdr_worker::visits) */
enum { SDR_VISIT_PACED = 0, SDR_VISIT_TOUCHED, SDR_VISIT_TIMER };

/** A paced frame as --pace-trace records it (stats.c: /sdr/pace_peak). */
struct sdr_pace_rec {
	uint64_t tsc;   /* departure (reservation) */
	uint32_t flow;  /* sdr_qp_flow() */
	uint32_t bytes; /* frame bytes; bit 31: the first after the QP was idle */
};
#define SDR_PACE_REC_FIRST 0x80000000u
/** A send whose packets are queued for transmission: it completes once the
 *  loop pass has handed them to the PMD (send.c). */
struct sdr_txdone {
	struct sdr_qp *qp;
	uint32_t seq;
};
#define SDR_TXDONE_MAX 128

struct sdr_worker {
	unsigned idx;
	unsigned lcore;
	struct rte_ring *cmd;
	struct rte_ring *handoff;
	struct sdr_hctx *ctxs;
	struct sdr_qp *qps;
	uint64_t ctr[SDR_CTR__MAX];
	struct sdr_port_stats port[SDR_MAX_INST];
	uint64_t loops, idle_sleeps;
	uint64_t work_loops; /* loops that did something */
	struct sdr_txdone txdone[SDR_TXDONE_MAX];
	unsigned ntxdone;
	struct rte_mbuf *txb[SDR_MAX_INST][SDR_BURST];
	unsigned ntxb[SDR_MAX_INST];
	/* transmit scheduling (worker.c): the pacer (QPs with frames to send by
	 * departure time, the port gates of this worker's share of each port
	 * rate), QPs by timer deadline, QPs touched in this loop (a packet, a
	 * descriptor, a command); all sized at start-up for SDR_FLOWS */
	struct sdr_sched sched;
	struct sdr_wheel timers;
	struct sdr_wheel_flow *flows, *tflows; /* [SDR_FLOWS] */
	struct sdr_qp **flow_qp;               /* [SDR_FLOWS]: this worker's QPs */
	struct sdr_qp **touched;               /* [SDR_FLOWS] */
	unsigned ntouched;
	uint64_t pace_stalls;
	unsigned loop_tx;           /* data frames reserved in this loop (SDR_LOOP_TX) */
	uint64_t loop_tx_full;      /* reservations deferred to the next loop for it */
	uint64_t visits[3];         /* QP visits: SDR_VISIT_PACED, _TOUCHED, _TIMER */
	uint64_t rects_period;      /* --cts-resend-ms in cycles */
	uint64_t pace_cycles;       /* TSC cycles in the pacer in sampled loops ... */
	uint64_t pace_polls;        /* ... and how many loops were sampled */
	uint64_t pace_frames;       /* frames reserved through the pacer */
	unsigned pace_tsc_cost;     /* cycles of one pair of TSC reads (subtracted) */
	uint64_t pace_sample_max;   /* a longer interval was not the pacer's (20 us) */
	uint64_t pace_outliers;     /* intervals left out for that */
	uint8_t pace_sample;        /* this loop is sampled */
	uint64_t handoff_rx;        /* packets other workers handed to this one */
	struct sdr_pace_rec *trace; /* --pace-trace: the last trace_cap paced frames */
	uint64_t ntrace;
	uint32_t trace_cap; /* a power of two */
	_Atomic int exited; /* the loop returned (shutdown): commands run inline */
	uint8_t tx_off;     /* shutdown drain: frames are freed, not sent (tx_at_exit) */
} __rte_cache_aligned;

/** Something happened to @p qp (a packet, a descriptor, a command): the
 *  worker visits it in this loop (worker.c). Worker lcore. */
static inline void sdr_qp_touch(struct sdr_worker *w, struct sdr_qp *qp)
{
	if (qp->touch_loop != w->loops + 1) {
		qp->touch_loop = w->loops + 1;
		w->touched[w->ntouched++] = qp;
	}
}

/** Time a part of the pacer in a sampled loop: sdr_pace_t1(w, sdr_pace_t0(w))
 *  adds the cycles between them (less the cost of reading the TSC twice) to
 *  w->pace_cycles; an interval longer than w->pace_sample_max (the worker
 *  was descheduled in it) is counted in w->pace_outliers instead. */
static inline uint64_t sdr_pace_t0(const struct sdr_worker *w)
{
	return w->pace_sample ? rte_get_tsc_cycles() : 0;
}

static inline void sdr_pace_t1(struct sdr_worker *w, uint64_t t0)
{
	if (t0) {
		uint64_t d = rte_get_tsc_cycles() - t0;
		if (d > w->pace_sample_max)
			w->pace_outliers++;
		else
			w->pace_cycles += d > w->pace_tsc_cost ? d - w->pace_tsc_cost : 0;
	}
}

#endif /* SDR_WORKER_T_H */
