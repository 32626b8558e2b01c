/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-dpu firmware: the runtime objects every module shares (instances,
 * host contexts, QPs and their send window, workers) and the global state.
 *
 * Threads (docs/architecture.md): the main lcore runs the control plane (host
 * attach, MR/QP setup, stats, telemetry); each worker lcore owns a set of
 * host contexts and their QPs and runs their fast path to completion. State
 * owned by a worker is touched by the main lcore only through the worker's
 * command ring (sdr_worker_call), so the fast path takes no locks.
 *
 * What a reliability scheme keeps per QP is its own (struct sdr_qp::rel,
 * see rel.h); nothing here names a scheme.
 */
#ifndef SDR_TYPES_H
#define SDR_TYPES_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "config.h"
#include "sdr_abi.h"
#include "sdr_counters.h"
#include "sdr_ec.h"
#include "sdr_hostdesc.h"
#include "sdr_msgtab.h"
#include "sdr_wheel.h"
#include "sdr_wire.h"

#define SDR_MAX_WORKERS 16
#define SDR_MAX_QPS 1024       /* per instance; qp_id = QPN block index */
#define SDR_MAX_CTX 64         /* host contexts per instance */
#define SDR_MAX_QPS_PER_CTX SDR_MAX_QPS /* one context may hold all of them */
#define SDR_QPN_FIRST 0x100    /* first QPN block base of epoch 0 */
#define SDR_QPN_EPOCH_SPAN 0x4000 /* QPNs per epoch (>= SDR_MAX_QPS * 16 generations) */
#define SDR_QPN_EPOCHS 1023    /* epochs 0..1022 fit 24-bit QPNs */
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
#define SDR_STREAM_RANGES 16   /* STREAM_DATA descriptors queued per stream */
#define SDR_MBUF_DATA 9216     /* room for a 9000-byte MTU frame */

/* ERROR: a QP whose peer stopped answering (global timeout); every
 * operation on it fails with -ENOTCONN until it is destroyed. */
enum sdr_qp_state { SDR_QPS_CREATED = 0, SDR_QPS_CONNECTED, SDR_QPS_DEAD, SDR_QPS_ERROR };

enum sdr_smsg_state { SDR_SM_FREE = 0, SDR_SM_QUEUED, SDR_SM_DONE };

struct sdr_srange {
	uint8_t *src;      /* host memory (mapped) */
	uint32_t msg_off;  /* MTU aligned */
	uint32_t len;
	uint16_t mr_id;
};

/** The receiver's clear-to-send for a send slot (one cache line holds it). */
struct sdr_cts_slot {
	uint32_t seq, len; /* the receive number it offers, its posted length */
	uint8_t ok;        /* received */
};

/** One send (one-shot or stream) in the QP's send window. */
struct sdr_smsg {
	uint64_t wr_id;
	uint32_t seq, len, imm;
	uint32_t npkts;    /* data packets of the whole message */
	uint32_t pkt;      /* next packet within the current range */
	uint32_t imm_next; /* next immediate-only offset to send (npkts < 8) */
	int32_t status;    /* error to report at completion (streams) */
	uint8_t state, stream, ended, nranges, cur;
	uint8_t aborted;   /* ended with an error on the sender; ABORT told the receiver */
	uint8_t keep_refs; /* ranges stay referenced until completion (retransmissions) */
	struct sdr_srange r[SDR_STREAM_RANGES];
};

/* Per-QP counters: one list, which generates the struct, the fold of a
 * destroyed QP into its instance, the JSON dump and telemetry (stats.c). */
/* clang-format off */
#define SDR_QP_STATS(X)                                                                          \
	X(tx_pkts) X(tx_bytes) X(rx_pkts) X(rx_bytes) X(msgs_sent) X(msgs_recv)                  \
	X(msgs_partial) X(send_errors) X(cts_tx) X(cts_rx) X(aborts_tx) X(aborts_rx)             \
	X(chunks_done) X(sr_retx_pkts) X(sr_retx_units) X(sr_rto_expiries) X(sr_acks_tx)         \
	X(sr_ack_entries_tx) X(sr_acks_rx) X(sr_ack_entries_rx) X(sr_units_acked)                \
	X(sr_rtt_samples) X(sr_send_timeouts) X(sr_recv_timeouts) X(sr_send_closed)              \
	X(sr_rto_backoffs) X(sr_probe_defers) X(sr_reacks) X(ec_subs_encoded)                    \
	X(ec_par_pkts_tx) X(ec_par_pkts_rx) X(ec_par_chunks_rx) X(ec_decodes)                    \
	X(ec_chunks_recovered) X(ec_decode_failures) X(ec_fto_expiries) X(ec_fto_postponed)      \
	X(ec_nacks_tx) X(ec_nack_entries_tx) X(ec_nacks_rx) X(ec_nack_entries_rx)                \
	X(ec_nack_retx_units) X(auto_msgs_ec) X(auto_msgs_sr) X(auto_chunks_fed)                 \
	X(auto_lost_fed) X(auto_lost_rx)
/* clang-format on */

struct sdr_qp_stats {
#define SDR_QP_STAT_FIELD(n) uint64_t n;
	SDR_QP_STATS(SDR_QP_STAT_FIELD)
#undef SDR_QP_STAT_FIELD
};

/** Add every counter of @p src to @p dst. */
static inline void sdr_qp_stats_fold(struct sdr_qp_stats *dst, const struct sdr_qp_stats *src)
{
#define SDR_QP_STAT_ADD(n) dst->n += src->n;
	SDR_QP_STATS(SDR_QP_STAT_ADD)
#undef SDR_QP_STAT_ADD
}

struct sdr_inst;
struct sdr_hctx;
struct sdr_rel_ops;

struct sdr_qp {
	uint32_t id;
	uint32_t qpn_base, rkey, max_msg, ppc, mtu, gens;
	uint8_t reliability;
	uint16_t info_ec;              /* EC parameters its QP info publishes (packed) */
	const struct sdr_rel_ops *ops; /* the QP's reliability scheme */
	void *rel;                     /* the scheme's per-QP state (rel.h) */
	struct sdr_inst *inst;
	struct sdr_hctx *ctx;
	unsigned worker;
	int state; /* enum sdr_qp_state; written by the owning worker */
	struct sdr_qp_info remote;
	uint64_t ctrl_key;    /* ours: control packets to this QP must carry it */
	struct sdr_l2l3 l2;
	struct sdr_hdr_tmpl tmpl; /* headers of l2's frames (sdr_hdr_tmpl_init at connect) */
	uint32_t psn;         /* control packets sent (their PSN) */
	uint64_t rate_bps;    /* its rate (0 = unpaced): the worker's pacer (w->sched) */
	uint64_t touch_loop;  /* worker loop + 1 in which it was last touched / visited */
	uint64_t visit_loop;
	/* (what a visit reads of every QP comes first, in the first page or two;
	 * the per-message tables follow) */
	unsigned ncts_out;    /* receive side: CTS entries waiting */
	unsigned nabort_out;
	uint64_t next_rects_tsc;
	uint32_t send_next;  /* number of the next posted send */
	uint32_t tx_cursor;  /* send being transmitted (all older are on the wire) */
	uint32_t ack_cursor; /* oldest send not yet completed */
	uint64_t progress_tsc; /* last progress of the sends (global timeout) */
	struct sdr_qp_stats st;
	struct sdr_qp *next_on_worker;
	/* shared segment (chunk bitmaps) */
	void *qseg;
	size_t qseg_size;
	int qseg_fd;
	uint64_t era_tsc[16]; /* receive numbers: when each 2^28 block was entered */
	struct sdr_cts_entry cts_out[SDR_CTS_MAX_ENTRIES];
	/* sends that ended before their data went out, whose ABORT the
	 * receiver may not have seen yet */
	struct sdr_abort_entry abort_out[SDR_ABORT_MAX_ENTRIES];

	/* receive side: the receive table */
	struct sdr_rq rq;

	/* send side: clear-to-send per message slot, the sends */
	struct sdr_cts_slot cts[SDR_MAX_MSGS];
	struct sdr_smsg smsg[SDR_MAX_MSGS];
};

/** A host attached over the unix socket. */
struct sdr_hctx {
	unsigned id;
	int sock;
	pid_t pid;
	struct sdr_inst *inst;
	unsigned worker;
	void *seg;
	size_t seg_size;
	int seg_fd;
	struct sdr_ring sq, cq;   /* worker-side views */
	struct sdr_seg_hdr *hdr;
	struct sdr_mr_ent mrs[SDR_MAX_MRS];
	struct sdr_qp *qps[SDR_MAX_QPS_PER_CTX];
	unsigned nqps;
	/* completions waiting for room in the CQ (worker only; cq.c) */
	struct sdr_cqe *ovf;
	uint32_t ovf_head, ovf_n, ovf_cap;
	/* completions of this loop pass, written to the CQ ring together at
	 * its end (one producer-index store per pass; cq.c) */
	struct sdr_cqe cqb[SDR_BURST];
	unsigned ncqb;
	int broken;               /* SQ corrupt: stop serving it */
	int32_t sq_credit;        /* fair SQ service (host_sq.c; worker only) */
	struct sdr_hctx *next_on_worker;
};

struct sdr_port_stats {
	uint64_t rx_pkts, rx_bytes, tx_pkts, tx_bytes;
};

struct sdr_inst {
	unsigned idx;
	struct sdr_inst_cfg cfg;
	uint16_t port;
	uint8_t mac[6], peer_mac[6];
	uint32_t ip;
	int listen_fd;
	struct rte_mempool *pool;
	struct sdr_hctx *ctxs[SDR_MAX_CTX];
	struct sdr_qp *_Atomic qps[SDR_MAX_QPS];
	void *link[SDR_MAX_WORKERS]; /* struct sdr_link_rx * per queue, or NULL */
	struct sdr_qp_stats closed; /* folded in from destroyed QPs (main lcore) */
	uint32_t qpn_first;         /* QPN of block 0 in this boot (epoch) */
	/* the port steers each QP's packets to its worker's queue (RSS on the
	 * UDP source port alone, common/sdr_rss.h): QPNs are chosen for it */
	uint8_t rss_steer;
	uint16_t rss_reta;          /* its redirection table's size */
	/* the last SDR_AUTO_CLOSED AUTO QPs destroyed (main lcore; --stats-json) */
	struct sdr_auto_closed *auto_closed;
	unsigned n_auto_closed;     /* destroyed so far (ring index) */
};

#define SDR_AUTO_CLOSED 8
struct sdr_auto_closed {
	uint32_t qpn;
	struct sdr_qp_stats st;
	struct sdr_auto au;
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
	uint64_t work_loops;     /* loops that did something */
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
	unsigned loop_tx;        /* data frames reserved in this loop (SDR_LOOP_TX) */
	uint64_t loop_tx_full;   /* reservations deferred to the next loop for it */
	uint64_t visits[3];      /* QP visits: SDR_VISIT_PACED, _TOUCHED, _TIMER */
	uint64_t rects_period;   /* --cts-resend-ms in cycles */
	uint64_t pace_cycles;    /* TSC cycles in the pacer in sampled loops ... */
	uint64_t pace_polls;     /* ... and how many loops were sampled */
	uint64_t pace_frames;    /* frames reserved through the pacer */
	unsigned pace_tsc_cost;  /* cycles of one pair of TSC reads (subtracted) */
	uint64_t pace_sample_max; /* a longer interval was not the pacer's (20 us) */
	uint64_t pace_outliers;  /* intervals left out for that */
	uint8_t pace_sample;     /* this loop is sampled */
	uint64_t handoff_rx;     /* packets other workers handed to this one */
	struct sdr_pace_rec *trace; /* --pace-trace: the last trace_cap paced frames */
	uint64_t ntrace;
	uint32_t trace_cap;      /* a power of two */
	_Atomic int exited; /* the loop returned (shutdown): commands run inline */
} __rte_cache_aligned;

struct sdr_dpu {
	struct sdr_cfg cfg;
	unsigned ninst;
	struct sdr_inst inst[SDR_MAX_INST];
	unsigned nworkers;
	struct sdr_worker workers[SDR_MAX_WORKERS];
	uint64_t tsc_hz;
	volatile int running;
	int workers_stopped; /* set by main after the workers returned */
	uint64_t ctl_ctr[SDR_CTR__MAX]; /* counters of the control plane (main lcore only) */
};

extern struct sdr_dpu sdr_g;

/** Is @p qpn inside this boot's QPN range (see --qpn-epoch)? */
static inline int sdr_qpn_in_epoch(const struct sdr_inst *in, uint32_t qpn, uint32_t gens)
{
	return qpn >= in->qpn_first && (qpn - in->qpn_first) / gens < SDR_MAX_QPS;
}

static inline struct sdr_qp *sdr_qp_lookup(struct sdr_inst *in, uint32_t qpn, uint32_t gens,
					   uint32_t *gen)
{
	uint32_t rel = qpn - in->qpn_first;
	struct sdr_qp *qp;

	if (!sdr_qpn_in_epoch(in, qpn, gens))
		return NULL;
	qp = atomic_load_explicit(&in->qps[rel / gens], memory_order_acquire);
	*gen = rel % gens;
	return qp;
}

/** A QP's flow in its worker's pacer and timer wheel. */
static inline uint32_t sdr_qp_flow(const struct sdr_qp *qp)
{
	return qp->inst->idx * SDR_MAX_QPS + qp->id;
}

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

/** Microseconds, milliseconds of the TSC. */
static inline uint64_t sdr_us_cycles(uint64_t us) { return us * sdr_g.tsc_hz / 1000000; }
static inline uint64_t sdr_ms_cycles(uint64_t ms) { return ms * sdr_g.tsc_hz / 1000; }

#endif /* SDR_TYPES_H */
