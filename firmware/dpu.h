/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-dpu firmware: shared definitions of the daemon.
 *
 * Threads (docs/architecture.md): the main lcore runs the control plane (host
 * attach, MR/QP setup, stats, telemetry); each worker lcore owns a set of
 * host contexts and their QPs and runs their fast path to completion. State
 * owned by a worker is touched by the main lcore only through the worker's
 * command ring (sdr_worker_call), so the fast path takes no locks.
 */
#ifndef SDR_DPU_H
#define SDR_DPU_H

#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include <rte_common.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>
#include <rte_ring.h>

#include "sdr_abi.h"
#include "sdr_auto.h"
#include "sdr_counters.h"
#include "sdr_ec.h"
#include "sdr_ecfw.h"
#include "sdr_hostdesc.h"
#include "sdr_msgtab.h"
#include "sdr_pacer.h"
#include "sdr_sr.h"
#include "sdr_wire.h"

#define SDR_MAX_WORKERS 16
#define SDR_MAX_INST 4
#define SDR_MAX_QPS 256        /* per instance; qp_id = QPN block index */
#define SDR_MAX_CTX 64         /* host contexts per instance */
#define SDR_MAX_QPS_PER_CTX 64
#define SDR_QPN_FIRST 0x100    /* first QPN block base of epoch 0 */
#define SDR_QPN_EPOCH_SPAN 0x1000 /* QPNs per epoch (>= SDR_MAX_QPS * 16 generations) */
#define SDR_QPN_EPOCHS 4095    /* epochs 0..4094 fit 24-bit QPNs */
#define SDR_BURST 32
#define SDR_STREAM_RANGES 16   /* STREAM_DATA descriptors queued per stream */
#define SDR_MBUF_DATA 9216     /* room for a 9000-byte MTU frame */

/* ---------------- configuration ---------------- */

struct sdr_inst_cfg {
	const char *name;      /* unix socket path */
	int port;              /* DPDK port id, -1 = next unused */
	uint32_t ip;
	uint8_t mac[6], peer_mac[6];
	int has_ip, has_mac, has_peer_mac;
	const char *link;      /* link emulator spec (RX of this port), NULL = none */
	uint64_t port_rate;    /* bits/s, 0 = unpaced */
};

struct sdr_cfg {
	uint32_t mtu;
	uint32_t chunk_pkts;
	uint32_t max_msg;
	uint32_t generations;
	unsigned workers;      /* 0 = one per available worker lcore */
	unsigned idle_us;
	unsigned idle_spins;
	unsigned stats_interval;
	const char *stats_json;
	unsigned cts_resend_ms;
	unsigned mbufs;
	uint32_t pace_burst;   /* token-bucket depth, bytes; 0 = by rate */
	int icrc;
	int ring_pair;
	/* Selective Repeat (docs/reliability.md) */
	uint32_t sr_alpha_milli;   /* RTO = (1 + alpha) * SRTT, alpha * 1000 */
	uint32_t sr_rttvar_k;      /* ... and >= SRTT + k * RTTVAR */
	uint32_t sr_min_rto_us;
	uint32_t sr_init_rto_ms;
	uint32_t sr_ack_us;        /* ACK coalescing period */
	uint32_t global_timeout_ms;
	/* Erasure coding (docs/reliability.md) */
	uint32_t ec_beta_milli;    /* FTO = (M + ceil(M/R)) * T_INJ + beta * RTT */
	uint32_t ec_rtt_us;        /* RTT of the FTO; 0 = estimate */
	uint32_t ec_pool_mb;       /* parity pool of a receiving QP, MiB */
	/* AUTO (docs/reliability.md "AUTO") */
	struct sdr_model_scheme auto_cands[SDR_AUTO_MAX_CANDS]; /* --auto-schemes */
	uint32_t auto_ncands;
	uint32_t auto_max_m;       /* largest m of the EC candidates (0: SR only) */
	int auto_obj;              /* enum sdr_model_objective, --auto-objective */
	int qpn_epoch;             /* -1 = random per boot */
	unsigned ninst;
	struct sdr_inst_cfg inst[SDR_MAX_INST];
};

/** Parse our own arguments (after EAL's "--"). Returns 0 to run, 1 when
 *  --help/--version was served (exit 0), -1 on error (message printed). */
int sdr_cfg_parse(struct sdr_cfg *cfg, int argc, char **argv);
void sdr_cfg_usage(FILE *f, const char *prog);

/* ---------------- runtime objects ---------------- */

/* ERROR: an SR QP whose peer stopped answering (global timeout); every
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
	/* Selective Repeat (reliability SR only) */
	uint8_t txdone;    /* every packet transmitted once; waits for the ACK */
	uint32_t nchunks;  /* chunks of the message */
	uint32_t nunits;   /* nchunks, + 1 for the immediate-only packets (npkts < 8) */
	uint32_t units_acked;
	uint32_t ack_from; /* cumulative point already walked */
	/* Erasure coding (reliability EC): this message's scheme, chosen by
	 * ec_pick() in ec.c; ec_k == 0 = no parity (streams) */
	uint8_t ec_code, ec_k, ec_m;
	uint32_t ec_sub;     /* submessage whose parity is being sent */
	uint32_t ec_par_pkt; /* next parity packet of ec_sub; UINT32_MAX = none pending */
	uint64_t ec_hold;    /* extra wait of the SR backstop timers (cycles) */
	uint32_t retx_chunks; /* data chunks retransmitted at least once (AUTO loss) */
	struct sdr_srange r[SDR_STREAM_RANGES];
	struct sdr_sr_unit *u; /* [nunits], reused across messages of the slot */
	uint32_t u_cap;
};

/** A final ACK entry waiting to be sent (receiver). */
struct sdr_sr_fin {
	uint64_t due;      /* send at or after this TSC */
	uint32_t seq, cum, lost;
	uint8_t flags;     /* SDR_ACK_F_FULL or SDR_ACK_F_CLOSED */
	uint8_t copies;    /* sent so far (EC repeats a FULL once) */
};
#define SDR_SR_FIN_CAP 4096

/** Sender state of one chunk (or the immediate unit) of an SR send. */
struct sdr_sr_unit {
	uint64_t tx_tsc;   /* last (re)transmission of the unit's last packet */
	uint16_t sent;     /* packets transmitted in the first pass */
	uint8_t acked, inq, retx; /* inq: waiting in the retransmit queue; retx: times */
	uint8_t pad[3];
};

struct sdr_qp_stats {
	uint64_t tx_pkts, tx_bytes, rx_pkts, rx_bytes;
	uint64_t msgs_sent, msgs_recv, msgs_partial, send_errors;
	uint64_t cts_tx, cts_rx, chunks_done;
	/* Selective Repeat */
	uint64_t sr_retx_pkts, sr_retx_units, sr_rto_expiries, sr_acks_tx, sr_ack_entries_tx;
	uint64_t sr_acks_rx, sr_ack_entries_rx, sr_units_acked, sr_rtt_samples;
	uint64_t sr_send_timeouts, sr_recv_timeouts, sr_send_closed, sr_rto_backoffs;
	uint64_t sr_probe_defers, sr_reacks;
	/* Erasure coding */
	uint64_t ec_subs_encoded, ec_par_pkts_tx, ec_par_pkts_rx, ec_par_chunks_rx;
	uint64_t ec_decodes, ec_chunks_recovered, ec_decode_failures, ec_fto_expiries, ec_fto_postponed;
	uint64_t ec_nacks_tx, ec_nack_entries_tx, ec_nacks_rx, ec_nack_entries_rx, ec_nack_retx_units;
	/* AUTO: one-shot sends per kind of pick (streams are not picked), and
	 * what the loss estimator was fed at send completions */
	uint64_t auto_msgs_ec, auto_msgs_sr, auto_chunks_fed, auto_lost_fed, auto_lost_rx;
};

struct sdr_ec_rmsg;

struct sdr_inst;
struct sdr_hctx;

struct sdr_qp {
	uint32_t id;
	uint32_t qpn_base, rkey, max_msg, ppc, mtu, gens;
	uint8_t reliability;
	struct sdr_inst *inst;
	struct sdr_hctx *ctx;
	unsigned worker;
	int state; /* enum sdr_qp_state; written by the owning worker */
	struct sdr_qp_info remote;
	uint64_t ctrl_key;    /* ours: control packets to this QP must carry it */
	struct sdr_l2l3 l2;
	uint32_t psn;
	struct sdr_pacer pacer; /* this QP's rate */

	/* receive side */
	struct sdr_rq rq;
	struct sdr_cts_entry cts_out[SDR_CTS_MAX_ENTRIES];
	unsigned ncts_out;
	uint64_t next_rects_tsc;

	/* send side */
	uint32_t send_next;  /* number of the next posted send */
	uint32_t tx_cursor;  /* send being transmitted (all older are done) */
	uint32_t cts_seq[SDR_MAX_MSGS];
	uint32_t cts_len[SDR_MAX_MSGS];
	uint8_t cts_ok[SDR_MAX_MSGS];
	struct sdr_smsg smsg[SDR_MAX_MSGS];

	/* Selective Repeat: sender */
	uint32_t ack_cursor;  /* oldest send not yet completed (SR); tx_cursor for NONE */
	struct sdr_rtt rtt;
	struct sdr_tq timers; /* (seq, unit, tx time) in transmit order */
	struct sdr_tq retxq;  /* units to retransmit */
	struct sdr_tq_ent retx_cur; /* unit being retransmitted */
	uint32_t retx_pkt;    /* next packet of retx_cur; UINT32_MAX = none */
	uint64_t progress_tsc; /* last progress of the sends (global timeout) */
	uint64_t backoff_tsc; /* no further RTO backoff before this */
	uint64_t probe_tsc;   /* probing: next unit may be retransmitted at this TSC */
	uint64_t ack_rx_tsc;  /* last ACK from the peer (0: none yet) */
	uint8_t probing;      /* no ACK for an RTO: one unit per RTO until the peer
	                         answers (RFC 6298 5.4/5.5) */
	uint64_t global_timeout; /* cycles, 0 = none */
	/* Selective Repeat: receiver */
	uint16_t *ack_dirty;  /* [SDR_MAX_MSGS] slots with news for the sender */
	uint32_t nack_dirty;
	uint64_t ack_due;     /* send the pending ACK entries at this TSC */
	/* Final entries (FULL / CLOSED) of completed receives, queued at
	 * completion: they do not live in the slot, so reposting it cannot
	 * lose them (docs/reliability.md "Acknowledgement is a guarantee") */
	struct sdr_sr_fin *fin; /* [SDR_SR_FIN_CAP] FIFO */
	uint32_t fin_head, fin_n;
	uint8_t ack_now;      /* a final entry is waiting: flush in this loop */
	uint64_t fin_next;    /* earliest later-due final entry (EC repeat), 0 = none */
	uint64_t era_tsc[16]; /* receive numbers: when each 2^28 block was entered */
	/* sender: sends that ended before any data (-EMSGSIZE) whose ABORT the
	 * receiver may not have seen yet */
	struct sdr_abort_entry abort_out[SDR_ABORT_MAX_ENTRIES];
	unsigned nabort_out;

	/* Erasure coding (reliability EC, and AUTO's EC messages) */
	uint8_t ec_code, ec_k, ec_m; /* the QP's parameters (AUTO: the EC candidate
	                                with the most parity; sizes the buffers) */
	uint8_t *ec_txpar;    /* sender: m parity chunks being sent */
	uint8_t *ec_zero;     /* a zero chunk (padding of the last submessage) */
	uint8_t *ec_short;    /* a padded copy of a short last chunk */
	struct sdr_ec_pool ec_pool;   /* receiver: parity chunks */
	struct sdr_ec_rmsg **ec_r;    /* [SDR_MAX_MSGS] per receive slot, on demand */
	uint32_t *ec_armed;   /* [SDR_MAX_MSGS] receives (numbers) with an armed FTO */
	uint32_t n_armed;
	uint64_t ec_rtt_min;  /* min CTS-to-first-packet time seen (cycles), 0 = none */
	uint64_t ec_next_scan;

	/* AUTO: estimates and per-message pick (sdr_auto.h); worker-owned */
	struct sdr_auto *au;
	double auto_base_bps;    /* model rate when the QP has none (port/link) */

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
	/* completions waiting for room in the CQ (worker only) */
	struct sdr_cqe *ovf;
	uint32_t ovf_head, ovf_n, ovf_cap;
	int broken;               /* SQ corrupt: stop serving it */
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

/* command from the main lcore to a worker */
enum sdr_cmd_type {
	SDR_CMD_NOP = 0,  /* quiescence barrier */
	SDR_CMD_ADD_CTX,
	SDR_CMD_DEL_CTX,
	SDR_CMD_ADD_QP,
	SDR_CMD_CONNECT_QP,
	SDR_CMD_DEL_QP,
	SDR_CMD_MR_DEREG,
	SDR_CMD_SET_RATE,
};

struct sdr_cmd {
	enum sdr_cmd_type type;
	void *obj;
	uint64_t arg;
	const struct sdr_qp_info *remote;
	_Atomic int done;
	int result;
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
};

extern struct sdr_dpu sdr_g;

/* worker.c */
int sdr_worker_main(void *arg);
int sdr_worker_call(unsigned worker, struct sdr_cmd *cmd);
void sdr_worker_quiesce_all(void);
void sdr_qp_post_cqe(struct sdr_hctx *c, const struct sdr_cqe *e, struct sdr_worker *w);

/* rx.c */
void sdr_rx_one(struct sdr_worker *w, struct sdr_inst *in, struct rte_mbuf *m);

/* tx.c */
unsigned sdr_tx_qp(struct sdr_worker *w, struct sdr_qp *qp);
void sdr_tx_flush(struct sdr_worker *w, unsigned inst_idx);
void sdr_tx_cts_flush(struct sdr_worker *w, struct sdr_qp *qp);
void sdr_tx_rects(struct sdr_worker *w, struct sdr_qp *qp, uint64_t now);
void sdr_tx_abort_queue(struct sdr_worker *w, struct sdr_qp *qp, uint32_t seq, int32_t status,
			uint32_t len);
void sdr_tx_abort_flush(struct sdr_worker *w, struct sdr_qp *qp);
/* Selective Repeat (sr.c) */
int sdr_sr_qp_init(struct sdr_qp *qp);
void sdr_sr_qp_fini(struct sdr_qp *qp);
int sdr_sr_send_prepare(struct sdr_qp *qp, struct sdr_smsg *sm);
void sdr_sr_unit_sent(struct sdr_qp *qp, struct sdr_smsg *sm, uint32_t pkt_off, uint64_t now);
unsigned sdr_sr_tx(struct sdr_worker *w, struct sdr_qp *qp, uint64_t now);
void sdr_sr_rx_ack(struct sdr_worker *w, struct sdr_qp *qp, const uint8_t *msg,
		   const struct sdr_ctrl_hdr *h, uint64_t now);
void sdr_sr_rx_note(struct sdr_worker *w, struct sdr_qp *qp, uint32_t slot, uint64_t now);
void sdr_sr_rx_fin(struct sdr_worker *w, struct sdr_qp *qp, uint32_t seq, uint8_t flags,
		   uint32_t cum, uint32_t lost, uint64_t now);
void sdr_sr_rx_stale(struct sdr_worker *w, struct sdr_qp *qp, uint32_t slot, uint32_t seq,
		     uint64_t now);
void sdr_sr_poll(struct sdr_worker *w, struct sdr_qp *qp, uint64_t now);
void sdr_sr_periodic(struct sdr_worker *w, struct sdr_qp *qp, uint64_t now);
void sdr_smsg_release(struct sdr_qp *qp, struct sdr_smsg *sm);
void sdr_send_complete(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_smsg *sm);
int sdr_tx_data_pkt(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_smsg *sm, uint32_t pkt_off,
		    const uint8_t *src, uint32_t plen, int se);
int sdr_tx_paced(struct sdr_worker *w, struct sdr_qp *qp, uint32_t bytes, uint64_t now);
uint32_t sdr_frame_bytes(uint32_t plen);
struct rte_mbuf *sdr_tx_alloc(struct sdr_worker *w, struct sdr_inst *in);
void sdr_tx_enqueue(struct sdr_worker *w, struct sdr_inst *in, struct rte_mbuf *m);
/** Send the control message of @p mlen bytes the caller encoded at
 *  SDR_CTRL_HDR_LEN of @p m (from sdr_tx_alloc()): Ethernet..BTH headers
 *  to the QP's peer, ICRC, TX queue. */
void sdr_tx_ctrl_send(struct sdr_worker *w, struct sdr_qp *qp, struct rte_mbuf *m, size_t mlen);

/* Erasure coding (ec.c) */
static inline int sdr_qp_sr(const struct sdr_qp *qp)
{
	/* the Selective Repeat machinery runs on SR, EC and AUTO QPs */
	return qp->reliability == SDR_REL_SR || qp->reliability == SDR_REL_EC ||
	       qp->reliability == SDR_REL_AUTO;
}
static inline int sdr_qp_ec(const struct sdr_qp *qp)
{
	/* the EC sender/receiver machinery runs on EC and AUTO QPs */
	return qp->reliability == SDR_REL_EC || qp->reliability == SDR_REL_AUTO;
}
int sdr_ec_qp_init(struct sdr_qp *qp, unsigned code, unsigned k, unsigned m);
void sdr_ec_qp_fini(struct sdr_qp *qp);
void sdr_ec_send_prepare(struct sdr_qp *qp, struct sdr_smsg *sm);
void sdr_ec_data_sent(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_smsg *sm, uint32_t pkt);
int sdr_ec_tx_parity(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_smsg *sm, uint64_t now,
		     unsigned *budget);
uint64_t sdr_ec_hold(struct sdr_qp *qp, uint32_t seq);
void sdr_ec_rx_parity(struct sdr_worker *w, struct sdr_qp *qp, const uint8_t *msg, size_t len,
		      uint64_t now);
void sdr_ec_rx_nack(struct sdr_worker *w, struct sdr_qp *qp, const uint8_t *msg,
		    const struct sdr_ctrl_hdr *h, uint64_t now);
void sdr_ec_rx_data(struct sdr_worker *w, struct sdr_qp *qp, uint32_t slot, uint32_t pkt_off,
		    int rc, uint64_t now);
void sdr_ec_rx_release(struct sdr_qp *qp, uint32_t slot);
void sdr_ec_poll(struct sdr_worker *w, struct sdr_qp *qp, uint64_t now);
void sdr_ec_worker_fini(struct sdr_worker *w);

/* host_if.c */
unsigned sdr_host_poll(struct sdr_worker *w, struct sdr_hctx *c);
void sdr_host_recv_done(struct sdr_worker *w, struct sdr_qp *qp, uint32_t idx, int32_t status);
void sdr_host_abort_qp(struct sdr_worker *w, struct sdr_qp *qp, int32_t status);

/* ctrl.c (main lcore) */
int sdr_ctrl_init(struct sdr_inst *in);
void sdr_ctrl_poll(int timeout_ms);
void sdr_ctrl_fini(void);

/* stats.c */
void sdr_stats_print(FILE *f);
int sdr_stats_json(const char *path);
void sdr_telemetry_register(void);

/* port.c */
int sdr_ports_init(void);
void sdr_ports_fini(void);

/** Is @p qpn inside this boot's QPN range (see --qpn-epoch)? */
static inline int sdr_qpn_in_epoch(const struct sdr_inst *in, uint32_t qpn, uint32_t gens)
{
	return qpn >= in->qpn_first && (qpn - in->qpn_first) / gens < SDR_MAX_QPS;
}

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

#endif /* SDR_DPU_H */
