/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file pipe.h
 * sdr-pipe core: pipeline-parallel training schedules (GPipe, blocking 1F1B,
 * GeoPipe-style non-blocking 1F1B with extra warm-up forwards, CrossPipe-
 * style greedy delay-aware), the per-stage programs they compile to, a
 * discrete-event simulator (DES) of those programs, dependency checks of an
 * executed event log, metrics and an SVG Gantt chart. No network code: the
 * runtime over libsdr is pipe_run.c (pipe_rt.h). See docs/pipeline.md.
 *
 * Control functions return 0 or a negative errno; each lists its errnos.
 */
#ifndef SDR_PIPE_H
#define SDR_PIPE_H

#include <stdint.h>

#include "sdr_scheme.h"
#include <stdio.h>

#define PIPE_MAX_STAGES 64
#define PIPE_MAX_MICRO 256
/** Most datacenters of one pipeline (the placement and the network
 *  description, pipe_net.h). */
#define PIPE_MAX_DC 6
/** Cross-DC sending QPs of one pipeline at most: one per channel. */
#define PIPE_MAX_FLOWS (2 * (PIPE_MAX_STAGES - 1))

struct pipe_net;

/** cfg.delta_n: the extra warm-up forwards are cfg.delta_stage[] (still
 *  capped by the budget and M, and non-increasing downstream). */
#define PIPE_DELTA_STAGE (UINT32_MAX - 1)

enum pipe_sched {
	PIPE_SCHED_GPIPE = 0,
	PIPE_SCHED_1F1B = 1,    /**< Megatron-LM 1F1B, blocking batched send/recv */
	PIPE_SCHED_GEOPIPE = 2, /**< 1F1B order + dN extra warm-up F, non-blocking */
	PIPE_SCHED_GREEDY = 3,  /**< CrossPipe-style greedy list schedule, non-blocking */
	PIPE_SCHED_COUNT
};

enum pipe_comm {
	PIPE_COMM_DEFAULT = 0, /**< per schedule: gpipe/1f1b blocking, others not */
	PIPE_COMM_BLOCKING = 1,
	PIPE_COMM_NONBLOCKING = 2,
};

/** Everything both processes (and the DES) must agree on. */
struct pipe_cfg {
	uint32_t stages, micro;         /**< S, M */
	uint8_t dc_of[PIPE_MAX_STAGES]; /**< DC of each stage, < PIPE_MAX_DC; every DC
	                                        0..dcs-1 hosts a stage */
	uint32_t dcs;                   /**< D, resolved by pipe_cfg_finish() */
	double tf, tb;                  /**< forward / backward seconds per micro-batch */
	uint64_t act_bytes, grad_bytes; /**< activation (s -> s+1), gradient (s+1 -> s) */
	double rtt;                     /**< cross-DC round trip (s), without a net */
	uint64_t rate_bps;              /**< cross-DC bottleneck rate (bit/s of frame bytes)
	                                        without a net; with one, the rate of unpaced
	                                        QPs between DCs that no link (or a link
	                                        without a rate) carries */
	double loss;                    /**< per-packet loss of every link of the default
	                                        network (without a net; DES only) */
	const struct pipe_net *net;     /**< network description (pipe_net.h), not owned;
	                                        NULL = one link per ordered DC pair, delay
	                                        rtt/2, rate rate_bps (pipe_net_default()) */
	uint32_t mtu, frame_overhead;   /**< for wire bytes: per packet header bytes */
	enum pipe_sched sched;
	enum pipe_comm comm;                   /**< resolved by pipe_cfg_finish(): never DEFAULT */
	uint32_t delta_n;                      /**< GeoPipe extra warm-up forwards (UINT32_MAX =
	                                        the auto rule, pipe_stage_delta();
	                                        PIPE_DELTA_STAGE = delta_stage[]) */
	uint32_t delta_stage[PIPE_MAX_STAGES]; /**< per stage, when delta_n is
	                                        PIPE_DELTA_STAGE (pipe_delta_search()) */
	uint32_t mem_budget;              /**< max in-flight activations per stage (0 = default:
	                                        S for greedy, M otherwise) */
	struct sdr_scheme rel;            /**< reliability of the cross-DC QPs (--rel) */
	uint64_t loss_seed;               /**< 0: a lossy link adds the model's mean loss
	                                        recovery; else one drawn per message from
	                                        the model's distribution, seeded (DES only,
	                                        not in the digest) */
	uint32_t chunk_bytes;             /**< SDR chunk for the completion-time model of a
	                                        lossy link (the daemons' --chunk-pkts x mtu;
	                                        DES only, not in the digest) */
	double tf_stage[PIPE_MAX_STAGES]; /**< forward time of stage s (0 = tf); --tf-stage */
	double tb_stage[PIPE_MAX_STAGES]; /**< backward time of stage s (0 = tb); --tb-stage */
	uint32_t paths;                   /**< UDP source ports each cross-DC QP sprays over
	                                        (--paths, the QP attribute paths; 0 = the
	                                        daemon's --paths, else 1..PIPE_PATHS_MAX).
	                                        The DES: a QP of P >= 2 (SR, EC, AUTO) spreads
	                                        over P of its link's paths, 0 and 1 take one
	                                        (not in the digest) */
};

/** Most --paths (libsdr's SDR_PATHS_MAX). */
#define PIPE_PATHS_MAX 16u

/** Forward / backward time of stage @p s: its own (tf_stage, tb_stage) or
 *  the common tf / tb. The DES, the greedy schedule and GeoPipe's dN use
 *  these. */
static inline double pipe_tf(const struct pipe_cfg *c, uint32_t s)
{
	return c->tf_stage[s] > 0 ? c->tf_stage[s] : c->tf;
}
static inline double pipe_tb(const struct pipe_cfg *c, uint32_t s)
{
	return c->tb_stage[s] > 0 ? c->tb_stage[s] : c->tb;
}

/** Fill defaults. */
void pipe_cfg_init(struct pipe_cfg *c);
/** Resolve defaults (comm mode, budget, D) and validate.
 *  @return 0, -EINVAL (S < 2 or > PIPE_MAX_STAGES, M < 1 or > PIPE_MAX_MICRO,
 *  a DC >= PIPE_MAX_DC, a DC below the highest one that hosts no stage,
 *  a net with fewer DCs than the placement, non-positive or non-finite times (per-stage times: negative
 *  or non-finite; 0 means the common one), zero sizes, sizes below
 *  the payload header, zero rate, blocking comm with geopipe or greedy). */
int pipe_cfg_finish(struct pipe_cfg *c);
/** 64-bit digest of every field both processes must agree on (the
 *  placement, and the network description when there is one). */
uint64_t pipe_cfg_digest(const struct pipe_cfg *c);
/** In-flight activation bound of stage @p s (mem_budget resolved). */
uint32_t pipe_stage_budget(const struct pipe_cfg *c, uint32_t s);
/** Extra warm-up forwards stage @p s gets under GeoPipe (bounded by budget). */
uint32_t pipe_stage_delta(const struct pipe_cfg *c, uint32_t s);
/** The most extra warm-up forwards stage @p s may have: 0 downstream of the
 *  last crossing, else what its budget and M leave over 1F1B's own peak. */
uint32_t pipe_stage_delta_max(const struct pipe_cfg *c, uint32_t s);

/** Iteration time of @p c's schedule in the DES (order, programs,
 *  pipe_des_run()). @return 0 or an error of those. */
int pipe_des_time(const struct pipe_cfg *c, double *t);

/**
 * GeoPipe's dN chosen by searching the DES (pipe_des_run()) instead of the
 * closed form: the per-stage values (non-increasing downstream, within
 * pipe_stage_delta_max()) with the shortest predicted iteration and, among
 * those within 1 us of it, the fewest extra activations in total (memory).
 * Search: every uniform value 0..max, then single-stage steps of +-1 from the
 * best until none improves (time first, then memory).
 * @param delta  out: S values (0 for stages that get none)
 * @param t_best out (may be NULL): its iteration time
 * @param runs   out (may be NULL): DES runs it took
 * @return 0, -EINVAL (not a finished geopipe configuration), or a DES error.
 */
int pipe_delta_search(const struct pipe_cfg *c, uint32_t *delta, double *t_best, uint32_t *runs);

const char *pipe_sched_name(enum pipe_sched s);
/** @return 0 or -EINVAL (unknown name). */
int pipe_sched_parse(const char *s, enum pipe_sched *out);
/** --rel: sdr_scheme_parse() of "none", "sr", "auto", "ec[:CODE:K:M]"
 *  ("ec" alone: SDR_SCHEME_EC_DEFAULT, rs:32:8) or "CODE:K:M", with a QP's
 *  limits (1 <= K <= 64, 1 <= M <= 32, XOR M <= K).
 *  @return 0 or -EINVAL. */
int pipe_rel_parse(const char *s, struct sdr_scheme *r);
/** --rel's text form of @p r ("ec:rs:32:8" for EC) into @p buf. */
const char *pipe_rel_format(const struct sdr_scheme *r, char *buf, size_t len);
/** --place: "4,4" (exactly two numbers: stages in DC 0 and DC 1,
 *  contiguous) or "0,0,1,2,..." (the DC of each stage, length S >= 3, DCs
 *  < PIPE_MAX_DC, every DC up to the highest one used). Sets stages and
 *  dc_of. @return 0 or -EINVAL. */
int pipe_place_parse(const char *s, struct pipe_cfg *c);
/** A placement's DCs: each < PIPE_MAX_DC, every DC up to the highest one
 *  used hosts a stage (D = 1: no cross-DC traffic). @p dcs (may be NULL)
 *  gets D.
 *  @return 0 or -EINVAL. */
int pipe_place_check(const uint8_t *dc_of, uint32_t stages, uint32_t *dcs);

/* ---------------- operations and schedules ---------------- */

enum pipe_op { PIPE_F = 0, PIPE_B = 1 };

struct pipe_order {
	/** ops[s][i]: i-th compute op of stage s, encoded as m*2 + op. */
	uint16_t ops[PIPE_MAX_STAGES][2 * PIPE_MAX_MICRO];
	uint32_t n[PIPE_MAX_STAGES];
};
#define PIPE_OP_M(x) ((uint32_t)(x) >> 1)
#define PIPE_OP_KIND(x) ((enum pipe_op)((x)&1))
#define PIPE_OP(m, k) ((uint16_t)((m)*2 + (k)))

/**
 * Per-stage compute order of @p c->sched. The greedy schedule is computed
 * with the cost model (link latency rtt/2, size/rate, link occupancy).
 * @return 0, -EINVAL (config not finished), -ENOMEM.
 */
int pipe_order_build(const struct pipe_cfg *c, struct pipe_order *o);

/**
 * Check an order: every F and B of every micro-batch exactly once per stage,
 * F in micro-batch order, B in micro-batch order, B(s,m) after F(s,m), the
 * in-flight activations (F done, B not) never above the stage budget
 * (GPipe: no bound), and that the order is executable (no cross-stage
 * deadlock). On failure writes a reason into @p why.
 * @return 0, -EINVAL (violated), -ENOMEM.
 */
int pipe_order_check(const struct pipe_cfg *c, const struct pipe_order *o, char *why,
		     size_t whylen);

/* ---------------- programs ---------------- */

enum pipe_ins_kind {
	PIPE_I_COMPUTE = 0, /**< op, m */
	PIPE_I_POST_RECV,   /**< chan, m */
	PIPE_I_POST_SEND,   /**< chan, m */
	PIPE_I_WAIT_RECV,   /**< chan, m */
	PIPE_I_WAIT_SEND,   /**< chan, m */
};

/** Channel between neighbour stages: 2*s = activations s -> s+1,
 *  2*s + 1 = gradients s+1 -> s. */
#define PIPE_CH_ACT(s) (2 * (s))
#define PIPE_CH_GRAD(s) (2 * (s) + 1)
#define PIPE_NCHAN(S) (2 * ((S)-1))
static inline uint32_t pipe_ch_src(uint32_t ch)
{
	return ch & 1 ? ch / 2 + 1 : ch / 2;
}
static inline uint32_t pipe_ch_dst(uint32_t ch)
{
	return ch & 1 ? ch / 2 : ch / 2 + 1;
}
/** Whether channel @p ch runs between two DCs (its stages' DCs differ). */
static inline int pipe_ch_cross(const struct pipe_cfg *c, uint32_t ch)
{
	return c->dc_of[pipe_ch_src(ch)] != c->dc_of[pipe_ch_dst(ch)];
}
/** Payload bytes of one message of channel @p ch. */
static inline uint64_t pipe_ch_bytes(const struct pipe_cfg *c, uint32_t ch)
{
	return ch & 1 ? c->grad_bytes : c->act_bytes;
}

struct pipe_ins {
	uint8_t kind; /**< enum pipe_ins_kind */
	uint8_t op;   /**< enum pipe_op for COMPUTE */
	uint16_t m;
	uint16_t chan;
};

struct pipe_prog {
	uint32_t stages;
	struct pipe_ins *ins[PIPE_MAX_STAGES];
	uint32_t n[PIPE_MAX_STAGES];
};

/**
 * Compile an order to per-stage programs. Blocking: between consecutive
 * compute ops one batched communication point (post recv of the next op's
 * input, post send of the previous op's output, wait for both), as
 * Megatron-LM's batch_isend_irecv. Non-blocking: every receive posted at
 * the start, each compute waits only for its own input, sends are posted
 * after the compute and waited for at the end.
 * @return 0, -ENOMEM.
 */
int pipe_prog_build(const struct pipe_cfg *c, const struct pipe_order *o, struct pipe_prog *p);
void pipe_prog_free(struct pipe_prog *p);

/* ---------------- events, DES ---------------- */

/** One executed (or predicted) instruction. For WAIT_*: t0 = wait start,
 *  t1 = done. For COMPUTE: the compute window. POST_*: t0 = t1. */
struct pipe_event {
	uint32_t iter;
	uint16_t stage, m;
	uint8_t kind, op;
	uint16_t chan;
	double t0, t1; /**< seconds from the iteration start */
	uint64_t csum; /**< WAIT_RECV: checksum verified; POST_SEND: sent */
};

struct pipe_events {
	struct pipe_event *ev;
	size_t n, cap;
};
int pipe_events_add(struct pipe_events *e, const struct pipe_event *x);
void pipe_events_free(struct pipe_events *e);

/** Predicted transmission of one cross-DC message (for the chart). */
struct pipe_tx {
	uint16_t chan, m;
	int16_t link;                    /**< pipe_net link it crossed, -1 = not emulated */
	uint8_t scheme;                  /**< enum sdr_rel it was sent with (AUTO: the pick) */
	double t_start, t_end, t_arrive; /**< first bit sent, last bit sent, arrived
	                                      (loss recovery included) */
	double loss_extra;               /**< of t_arrive: the model's mean loss recovery (s) */
};

struct pipe_des_out {
	struct pipe_events ev;
	struct pipe_tx *tx;
	size_t ntx;
};

struct pipe_alloc;

/**
 * Simulate one iteration of @p p over the network of @p c (c->net, or one
 * link per DC pair at rtt/2 and rate_bps):
 *  - compute takes the stage's tf/tb; intra-DC messages take no time;
 *  - a cross-DC message from DC a to DC b is ready when its send is posted
 *    and its receive was posted one delay(b -> a) earlier (the
 *    clear-to-send);
 *  - each link is one FIFO server at its rate, shared by every sender it
 *    carries; a message is served in FIFO order at up to its QP's rate
 *    (@p rates from a policy, pipe_cba.h; unpaced: the link's rate), the
 *    head messages of a link take the capacity first, one message per QP at
 *    a time (the alpha-beta model with queuing; unpaced QPs on one link are
 *    served one message after another). A pair without a link, or a link
 *    without a rate, shares nothing: each QP at its rate, or rate_bps;
 *  - it arrives delay(a -> b) after its last bit, plus, on a link with
 *    loss and rel sr/ec/auto, the mean loss recovery of the completion-time
 *    model (common/sdr_model.h) for its scheme (EC: parity bytes are sent
 *    too; AUTO: the scheme sdr_model_pick() chooses among AUTO's candidates)
 *    at the link's round trip, loss and the rate the message got (with
 *    c->loss_seed: a recovery drawn from the model's distribution instead);
 *  - a send completes when its last byte left (rel none) or when
 *    acknowledged (arrival + delay(b -> a)).
 * @param rates  one rate per cross-DC flow (pipe_flows_get() order), or NULL:
 *               unpaced
 * @return 0, -EDEADLK (a program waits forever), -EPIPE (rel none over a
 *         lossy link: a message would never complete), -EINVAL (@p rates
 *         for another flow count), -ERANGE (loss too high for the model),
 *         -ENOMEM.
 */
int pipe_des_run_rates(const struct pipe_cfg *c, const struct pipe_prog *p,
		       const struct pipe_alloc *rates, struct pipe_des_out *out);
/** pipe_des_run_rates() with every QP unpaced. */
int pipe_des_run(const struct pipe_cfg *c, const struct pipe_prog *p, struct pipe_des_out *out);
void pipe_des_free(struct pipe_des_out *out);

/* ---- the DES engine, for transports other than the links above ---- */

/** The engine of one simulated iteration (opaque). */
struct pipe_des;

/** How cross-DC messages travel. The engine runs the programs; the
 *  transport decides when each cross-DC message arrives and completes. */
struct pipe_xport {
	void *ctx;
	/** Both ends of message (@p ch, @p m) have posted: the send at @p t_send,
	 *  the receive at @p t_recv (absolute times; now is the later). The
	 *  transport calls pipe_des_deliver() for it, now or from a timer.
	 *  @return 0 or -errno (ends the run). */
	int (*post)(void *ctx, struct pipe_des *d, uint32_t ch, uint32_t m, double t_send,
		    double t_recv);
	/** A timer set with pipe_des_timer() fired (pipe_des_now() is its time). */
	int (*timer)(void *ctx, struct pipe_des *d, uint64_t tag);
};

/** Current simulated time (absolute: @p t0 of pipe_des_exec() + offset). */
double pipe_des_now(const struct pipe_des *d);
/** Call the transport's timer with @p tag at time @p t (>= now).
 *  @return 0, -EINVAL (t in the past), -ENOMEM. */
int pipe_des_timer(struct pipe_des *d, double t, uint64_t tag);
/** Message (@p ch, @p m) was sent from @p t_start to @p t_end over @p link,
 *  arrives at @p t_arrive and its send completes at @p t_complete (absolute,
 *  >= now; @p extra: the part of t_arrive that is loss recovery).
 *  @return 0, -EINVAL (times before now or out of order, not a posted
 *  message, delivered twice), -ENOMEM. */
int pipe_des_deliver(struct pipe_des *d, uint32_t ch, uint32_t m, int link, uint8_t scheme,
		     double t_start, double t_end, double t_arrive, double t_complete,
		     double extra);
/**
 * Run one iteration of @p p starting at absolute time @p t0 with transport
 * @p x. Events in @p out are relative to @p t0; so are its tx records.
 * @return 0, -EDEADLK, -ENOMEM, or a transport's error.
 */
int pipe_des_exec(const struct pipe_cfg *c, const struct pipe_prog *p, double t0,
		  const struct pipe_xport *x, struct pipe_des_out *out);

/** Bytes a cross-DC message of @p payload bytes puts on the wire. */
uint64_t pipe_wire_bytes(const struct pipe_cfg *c, uint64_t payload);

/**
 * Verify an executed event log of @p iters iterations against the programs:
 * per stage and iteration every instruction exactly once and in program
 * order; each F(s,m) starts after the receive of its activation completed
 * and, by the clock, after F(s-1,m) ended; each B(s,m) after F(s,m), after
 * its gradient's receive and after B(s+1,m) ended; the checksum of every
 * received message equals the one its sender logged. Events of stages not
 * in the log are skipped when @p partial (one DC only).
 * @return 0, -EINVAL (violation, reason in @p why).
 */
int pipe_events_check(const struct pipe_cfg *c, const struct pipe_prog *p,
		      const struct pipe_events *e, uint32_t iters, int partial, char *why,
		      size_t whylen);

/* ---------------- metrics and output ---------------- */

struct pipe_metrics {
	double iter_time;                  /**< last compute end */
	double busy[PIPE_MAX_STAGES];      /**< compute time of the stage */
	double bubble[PIPE_MAX_STAGES];    /**< 1 - busy / iter_time */
	double bubble_all;                 /**< mean over stages */
	uint64_t bytes_cross, bytes_local; /**< payload bytes */
	uint32_t peak_inflight[PIPE_MAX_STAGES];
};

/** Metrics of iteration @p iter of @p e (events with that iter). */
void pipe_metrics_get(const struct pipe_cfg *c, const struct pipe_events *e, uint32_t iter,
		      struct pipe_metrics *m);

/** SVG Gantt: one panel per non-NULL event set (measured, predicted), one
 *  row per stage (F blue, B green, waits for communication red) and, for
 *  the prediction, one row per link direction. @return 0 or -errno. */
int pipe_svg_write(const char *path, const struct pipe_cfg *c, const struct pipe_events *meas,
		   uint32_t meas_iter, const struct pipe_des_out *pred, const char *title);

/* ---------------- payloads ---------------- */

/** Payload header (little endian, first 40 bytes of every message). */
#define PIPE_HDR_BYTES 40u
#define PIPE_MAGIC 0x53445250u /* "SDRP" */
/** Fill @p buf (len >= PIPE_HDR_BYTES) with the message of channel @p ch,
 *  micro-batch @p m, iteration @p iter. @return its checksum. */
uint64_t pipe_payload_fill(void *buf, uint64_t len, uint64_t seed, uint32_t iter, uint32_t ch,
			   uint32_t m);
/** Verify a received message. @return 0 and the checksum in @p csum, or
 *  -EBADMSG (bad magic / length / checksum), -EPROTO (header names another
 *  message). */
int pipe_payload_check(const void *buf, uint64_t len, uint32_t iter, uint32_t ch, uint32_t m,
		       uint64_t *csum);

double pipe_now(void);

#endif /* SDR_PIPE_H */
