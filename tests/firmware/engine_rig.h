/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Engine rig: two DPUs ("A" and "B"), one QP each (more pairs with
 * rig_add_pair()), connected back to back,
 * running the firmware's real worker stages, reliability schemes and
 * engines (rx.c, host_sq.c, rel_*.c, sr_*.c, ec_*.c, send.c, recv.c, the
 * receive table, txframe.c, cq.c, worker.c's QP visits and abort, the QP
 * set-up of qp_setup.c) on a virtual clock, without the EAL, hugepages or
 * root.
 *
 * What is fake (engine_rig.c):
 *  - the transmit queue (txq.c's sdr_txq_alloc, _enqueue, _flush; the
 *    pacer's reservation and the frames are txframe.c's own): a fixed
 *    pool of struct rte_mbuf in the rig's own memory; a flush puts the
 *    frames on a simulated wire instead of a PMD;
 *  - the control plane's memory (ctl_mem.c's segments and QP memory): the
 *    rig's heap, no memfd;
 *  - the host's CQ memory: cq.c writes a CQ ring in the rig's memory, which
 *    the rig's host reads after each loop pass of its worker, recording
 *    every CQE (sdr_cq_send/sdr_cq_recv are linked with -Wl,--wrap, so the
 *    rig sees each completion first and checks what it completes);
 *  - the wire: per direction a one-way delay, random jitter (reordering),
 *    loss of data (data and parity) and of control frames, duplication, a
 *    cut, CE marks on ECN-capable data, and a filter the test may use to drop or hold single frames;
 *  - the worker loop: frames arrive through rx.c's own sdr_rx_one(), on
 *    an mbuf that points at them, the host SQ is served, then worker.c's
 *    own sdr_worker_qps() visits the QPs (pacer, touched, timers) at the
 *    rig's clock;
 *  - the control plane: the QPs are made by qp_setup.c's sdr_qp_setup(),
 *    as QP_CREATE makes them (memory, QP segment, receive table,
 *    ops->qp_init; the QP info of sdr_qp_info_fill()), with keys from the
 *    rig's generator, and handed to worker.c's sdr_worker_qp_add() and
 *    sdr_worker_qp_connect().
 *
 * The host side is real: the test posts descriptors into each context's SQ
 * ring (an unbounded backlog in front of it) and the real sdr_host_poll()
 * serves them. The configuration is the daemon's own: sdr_cfg_parse() with
 * the options the test gives.
 *
 * Time: sdr_g.tsc_hz is 10^9 (one cycle is one nanosecond). A loop
 * iteration of both workers takes busy_ns of virtual time when either did
 * work, else the clock jumps to the next frame's arrival, at most idle_ns
 * ahead (the real worker's idle sleep). Nothing reads the real clock except
 * recv.c's receive-number guard (once per 2^28 receives) and
 * sdr_qp_abort()'s timestamp, which none of the schemes keeps after an
 * abort, and the pacer's own cost counters (w->pace_cycles), which count
 * real cycles and change nothing.
 *
 * One rig at a time (the firmware state is the global sdr_g).
 */
#ifndef SDR_ENGINE_RIG_H
#define SDR_ENGINE_RIG_H

#include <stddef.h>
#include <stdint.h>

#include "sdr_types.h"

#define RIG_A 0
#define RIG_B 1

/** What a frame on the wire is. */
enum rig_kind {
	RIG_K_DATA, /* UC RDMA WRITE Only, with immediate (0x2B) or without (0x2A) */
	RIG_K_CTS,
	RIG_K_ACK,
	RIG_K_NACK,
	RIG_K_PARITY,
	RIG_K_ABORT,
	RIG_K_OTHER, /* control of another type, or not parseable */
	RIG_K__MAX
};

/** One direction of the wire: frames leaving a side. */
struct rig_link {
	uint64_t delay_ns;  /* one way */
	uint64_t jitter_ns; /* each copy is delayed by a further random [0, jitter] */
	double loss_data;   /* probability of losing a data or parity frame */
	double loss_ctrl;   /* ... a CTS, ACK, NACK or ABORT frame */
	double dup;         /* probability that a frame arrives twice */
	double ce_data;     /* probability that an ECN-capable data or parity frame
	                       arrives marked CE (a queue on the way) */
	int cut;            /* nothing passes; frames in flight are lost on arrival */
};

/** Per direction (index: the sending side). */
struct rig_wire_stats {
	uint64_t sent[RIG_K__MAX];      /* frames the side transmitted */
	uint64_t lost[RIG_K__MAX];      /* lost at random, cut, or dropped by the filter */
	uint64_t dup[RIG_K__MAX];       /* extra copies made */
	uint64_t delivered[RIG_K__MAX]; /* handed to the other side's receive path */
	uint64_t held;                  /* kept by the filter (RIG_HOLD) */
	uint64_t reordered;             /* delivered after a frame sent later */
	uint64_t data_bytes;            /* payload of the data frames sent */
	uint64_t ect;                   /* data and parity frames sent ECN-capable */
	uint64_t ce_marked;             /* ... of them marked CE on the way (ce_data) */
};

/** What the filter sees of a frame being transmitted. */
struct rig_frame_info {
	int from; /* RIG_A or RIG_B */
	enum rig_kind kind;
	const struct sdr_parsed *p;
	uint32_t seq;        /* data: the message number it names; PARITY: its seq */
	uint32_t pkt_off;    /* data: packet offset; PARITY: submessage */
	uint32_t dma_len;    /* data: payload bytes */
	uint32_t pidx, ppkt; /* PARITY: parity chunk, packet within it */
	uint64_t now;
};

enum rig_verdict {
	RIG_PASS, /* the link's loss, jitter and duplication apply */
	RIG_DROP, /* lost (counted in lost[]) */
	RIG_HOLD, /* kept aside; the test releases it with rig_release_held() */
};

struct rig_opts {
	/** sdr-dpu options after "--" (besides --name/--ip/--peer-mac, which
	 *  the rig adds), e.g. "--mtu 1024 --chunk-pkts 4 --max-msg 65536". */
	const char *args;
	struct sdr_qp_attr_abi attr; /* both QPs (reliability, EC code, rate) */
	size_t mem_bytes;            /* host memory (one MR) per side */
	unsigned mbufs;              /* mbuf pool per side; 0 = 256 */
	uint64_t seed;               /* keys, wire randomness */
	uint64_t busy_ns, idle_ns;   /* 0 = 1000, 50000 */
	uint8_t qp_cc;               /* the QPs' congestion control (SDR_QP_CC_*; 0 = --cc) */
	uint64_t rx_lag_ns;          /* frames are received this long after the loop
	                                iteration's clock read (worker.c reads the clock
	                                again for each RX burst); < busy_ns */
};

/** A completion as the host saw it. */
struct rig_cqe {
	struct sdr_cqe e;
	uint64_t tsc;
};

struct rig;

/** Called for every CQE the firmware posts, as the host reads it from the CQ
 *  ring after the loop pass that posted it (the test may post new
 *  descriptors from here: they wait in the host's backlog). */
typedef void (*rig_cqe_fn)(struct rig *r, int side, const struct sdr_cqe *e, void *arg);
typedef enum rig_verdict (*rig_filter_fn)(struct rig *r, const struct rig_frame_info *f, void *arg);

struct rig_side {
	struct sdr_inst *in;
	struct sdr_worker *w;
	struct sdr_hctx *c;
	struct sdr_qp *qp;
	uint8_t *mem; /* host memory = MR 0 */
	size_t mem_len;
	int stopped;         /* its worker does not run (a dead DPU) */
	struct rig_cqe *cqe; /* every completion, in order */
	size_t ncqe;
	uint64_t sends_posted, recvs_posted; /* descriptors handed to the SQ */
};

/** Invariant violations the fake primitives and the loop detect (each
 *  must stay 0; checked by rig_check_invariants()). */
struct rig_bugs {
	uint64_t malformed_tx;     /* a transmitted frame sdr_parse() refused */
	uint64_t mbuf_leak;        /* mbuf taken and neither queued nor freed */
	uint64_t mr_ref_underflow; /* an MR reference dropped below zero (per MR and completion) */
	uint64_t send_not_queued;  /* sdr_cq_send() of a send that is not outstanding */
	uint64_t recv_not_done;    /* sdr_cq_recv() of a slot the table did not complete */
	uint64_t tx_over_budget;   /* one ops->tx() call sent more than SDR_BURST data and
	                              parity packets (what one RX burst takes in) */
};

struct rig {
	uint64_t now;
	uint64_t busy_ns, idle_ns, rx_lag_ns;
	struct rig_side s[2];
	struct rig_link link[2];     /* [from] */
	struct rig_wire_stats ws[2]; /* [from] */
	uint64_t fw_freed;           /* mbufs the firmware freed (rte_pktmbuf_free) */
	struct rig_bugs bug;
	rig_cqe_fn on_cqe;
	void *on_cqe_arg;
	rig_filter_fn filter;
	void *filter_arg;
	FILE *trace;   /* every frame sent, one line (SDR_RIG_TRACE=1) */
	uint8_t qp_cc; /* the QPs' congestion control as their hosts ask (SDR_QP_CC_*):
	                  rig_opts::qp_cc for the first pair, then as set */
	struct rig_priv *priv;
};

/** Build the two DPUs, QPs connected. Exits the process on a set-up error
 *  (a broken rig is not a test result). */
struct rig *rig_new(const struct rig_opts *o);
void rig_free(struct rig *r);

/* ---- host ---- */
/** Another pair of connected QPs (A's and B's, the same id, @p a their
 *  attributes), beside the first: @return their QP id. */
uint32_t rig_add_pair(struct rig *r, const struct sdr_qp_attr_abi *a);
/** rig_add_pair() of a channel: both QPs with the stripe map @p st
 *  (common/sdr_stripe.h; NULL: an ordinary pair). */
uint32_t rig_add_pair_stripe(struct rig *r, const struct sdr_qp_attr_abi *a,
			     const struct sdr_stripe *st);
/** rig_send() / rig_recv() on the side's QP @p qp_id. */
void rig_send_on(struct rig *r, int side, uint32_t qp_id, uint64_t off, uint32_t len, uint32_t imm,
		 uint64_t wr_id);
void rig_recv_on(struct rig *r, int side, uint32_t qp_id, uint64_t off, uint32_t len,
		 uint64_t wr_id);
/** Post a one-shot send of [off, off + len) of the side's memory. */
void rig_send(struct rig *r, int side, uint64_t off, uint32_t len, uint32_t imm, uint64_t wr_id);
/** Post a receive into [off, off + len). */
void rig_recv(struct rig *r, int side, uint64_t off, uint32_t len, uint64_t wr_id);
/** Ask for receive @p seq to complete now (sdr_recv_complete). */
void rig_recv_complete(struct rig *r, int side, uint32_t seq);
/** Descriptors still waiting for room in the SQ ring, or in it. */
size_t rig_sq_pending(const struct rig *r, int side);

/* ---- clock and loop ---- */
/** One iteration of each running worker at r->now, then the clock moves.
 *  @return the work done (as worker.c counts it). */
unsigned rig_iter(struct rig *r);
/** Iterate until @p done returns nonzero or @p max_ns of virtual time
 *  passed. @return 0, or -1 on the time limit. */
int rig_run_until(struct rig *r, int (*done)(struct rig *r, void *arg), void *arg, uint64_t max_ns);
void rig_run_for(struct rig *r, uint64_t ns);

/* ---- wire ---- */
/** Frames the filter held so far. */
size_t rig_held_count(const struct rig *r);
/** Deliver held frame @p i (in hold order) to its destination now. */
void rig_release_held(struct rig *r, size_t i);
/** Put a frame of @p len bytes on the wire to side @p to, arriving now
 *  (forged traffic). */
void rig_inject(struct rig *r, int to, const uint8_t *frame, size_t len);
/** Frames in flight towards @p to. */
size_t rig_in_flight(const struct rig *r, int to);

/* ---- helpers ---- */
/** Deterministic bytes for message @p tag (fill and check). */
void rig_pattern(uint8_t *dst, size_t len, uint64_t tag);
/** Number of bytes where @p buf differs from rig_pattern(tag). */
size_t rig_pattern_diff(const uint8_t *buf, size_t len, uint64_t tag);
/** Uniform in [0, n) from the rig's generator. */
uint64_t rig_rand(struct rig *r, uint64_t n);
/** Worker counter @p c of side @p side (w->ctr[]). */
uint64_t rig_ctr(const struct rig *r, int side, enum sdr_ctr c);
/** Print the rig's bugs and return their number. */
unsigned rig_check_invariants(const struct rig *r);
/** Print both QPs' counters and the wire (debugging). */
void rig_dump(const struct rig *r, FILE *f);

#endif /* SDR_ENGINE_RIG_H */
