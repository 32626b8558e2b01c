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
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "config.h"
#include "sdr_abi.h"
#include "sdr_counters.h"
#include "sdr_ec.h"
#include "sdr_hostdesc.h"
#include "sdr_msgtab.h"
#include "sdr_pacer.h"
#include "sdr_wire.h"

#define SDR_MAX_WORKERS 16
#define SDR_MAX_QPS 256        /* per instance; qp_id = QPN block index */
#define SDR_MAX_CTX 64         /* host contexts per instance */
#define SDR_MAX_QPS_PER_CTX 64
#define SDR_QPN_FIRST 0x100    /* first QPN block base of epoch 0 */
#define SDR_QPN_EPOCH_SPAN 0x1000 /* QPNs per epoch (>= SDR_MAX_QPS * 16 generations) */
#define SDR_QPN_EPOCHS 4095    /* epochs 0..4094 fit 24-bit QPNs */
#define SDR_BURST 32
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
#define SDR_QP_STATS(X)                                                                      \
	X(tx_pkts) X(tx_bytes) X(rx_pkts) X(rx_bytes) X(msgs_sent) X(msgs_recv) X(msgs_partial) \
	X(send_errors) X(cts_tx) X(cts_rx) X(aborts_tx) X(aborts_rx) X(chunks_done) X(sr_retx_pkts) X(sr_retx_units)  \
	X(sr_rto_expiries) X(sr_acks_tx) X(sr_ack_entries_tx) X(sr_acks_rx) X(sr_ack_entries_rx) \
	X(sr_units_acked) X(sr_rtt_samples) X(sr_send_timeouts) X(sr_recv_timeouts)          \
	X(sr_send_closed) X(sr_rto_backoffs) X(sr_probe_defers) X(sr_reacks)                 \
	X(ec_subs_encoded) X(ec_par_pkts_tx)                                                 \
	X(ec_par_pkts_rx) X(ec_par_chunks_rx) X(ec_decodes) X(ec_chunks_recovered)           \
	X(ec_decode_failures) X(ec_fto_expiries) X(ec_fto_postponed) X(ec_nacks_tx) X(ec_nack_entries_tx) \
	X(ec_nacks_rx) X(ec_nack_entries_rx) X(ec_nack_retx_units) X(auto_msgs_ec)           \
	X(auto_msgs_sr) X(auto_chunks_fed) X(auto_lost_fed) X(auto_lost_rx)

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
	uint32_t psn;         /* control packets sent (their PSN) */
	struct sdr_pacer pacer; /* this QP's rate */
	uint64_t rate_bps;    /* the rate it was given (0 = unpaced) */

	/* receive side */
	struct sdr_rq rq;
	struct sdr_cts_entry cts_out[SDR_CTS_MAX_ENTRIES];
	unsigned ncts_out;
	uint64_t next_rects_tsc;
	uint64_t era_tsc[16]; /* receive numbers: when each 2^28 block was entered */

	/* send side */
	uint32_t send_next;  /* number of the next posted send */
	uint32_t tx_cursor;  /* send being transmitted (all older are on the wire) */
	uint32_t ack_cursor; /* oldest send not yet completed */
	uint64_t progress_tsc; /* last progress of the sends (global timeout) */
	uint32_t cts_seq[SDR_MAX_MSGS];
	uint32_t cts_len[SDR_MAX_MSGS];
	uint8_t cts_ok[SDR_MAX_MSGS];
	struct sdr_smsg smsg[SDR_MAX_MSGS];
	/* sends that ended before their data went out, whose ABORT the
	 * receiver may not have seen yet */
	struct sdr_abort_entry abort_out[SDR_ABORT_MAX_ENTRIES];
	unsigned nabort_out;

	/* shared segment (chunk bitmaps) */
	void *qseg;
	size_t qseg_size;
	int qseg_fd;

	struct sdr_qp_stats st;
	struct sdr_qp *next_on_worker;
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
	struct rte_mbuf *txb[SDR_MAX_INST][SDR_BURST];
	unsigned ntxb[SDR_MAX_INST];
	struct sdr_pacer port_pacer[SDR_MAX_INST]; /* this worker's share of the port rate */
	uint64_t pace_stalls;
	struct sdr_ec *ec_cache[8]; /* codec handles of this lcore (decode is per lcore) */
	unsigned ec_cache_next;
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

/** Microseconds, milliseconds of the TSC. */
static inline uint64_t sdr_us_cycles(uint64_t us) { return us * sdr_g.tsc_hz / 1000000; }
static inline uint64_t sdr_ms_cycles(uint64_t ms) { return ms * sdr_g.tsc_hz / 1000; }

#endif /* SDR_TYPES_H */
