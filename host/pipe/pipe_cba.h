/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file pipe_cba.h
 * Communication-bound-aware (CBA) bandwidth assignment and the transport's
 * allocation policies, as pure functions: the DES uses them to predict
 * iteration i under rates decided from iteration i-1's events, and the
 * runtime's controller applies the same decisions to the QPs. After the CBA
 * paper (arXiv 2512.20080, docs/papers.md §4); every choice the paper leaves
 * open is in docs/pipeline.md "Multi-DC model".
 *
 *  1. Labels (pipe_cba_label()): a cross-DC transfer (channel, micro-batch)
 *     is communication-bound (CB) when the compute op that consumes it
 *     waited for it and started later than its producer's end plus the
 *     intra-DC latency: a "DCI-induced bubble". The cross-DC transfers of
 *     micro-batch 0 are CB too.
 *  2. The per-request rule (pipe_cba_rule()): blocked in the previous round
 *     -> one step less; CB -> one step more; otherwise unchanged; always
 *     within [min, max]. The unit is the caller's: frequency slots for the
 *     optical layer (pipe_optical.h), bit/s for the transport.
 *  3. Aggregation (pipe_cba_flow_labels()): the transport gives one rate
 *     per cross-DC sending QP, i.e. per channel (activations s -> s+1 and
 *     gradients s+1 -> s of a crossing are different senders). A channel is
 *     CB when at least one of its transfers of micro-batch >= 1 was CB
 *     (micro-batch 0 is CB by definition and carries no information; with
 *     M = 1 it alone decides); its weight is the sum of its CB transfers'
 *     waits.
 *  4. Policies (pipe_policy_alloc()), one rate per flow (cross-DC channel):
 *     none   - unpaced (rate 0: the QP sends at the link's rate, FIFO);
 *     equal  - each link's rate shared equally among the flows that cross it
 *              (a shared bottleneck counts the flows of all its senders);
 *     static - configured rates, refused if they exceed a link;
 *     cba    - round 0 equal; then each flow requests the rule's rate; cuts
 *              and unchanged requests are granted, increases are granted in
 *              decreasing order of the flow's DCI wait while the link has
 *              room; an increase that does not fit is refused: the flow keeps
 *              its previous rate and counts as blocked for the next round.
 *     cba-shift - round 0 equal; then a CB flow requests one step more and
 *              every other flow keeps its rate: a refused request is not cut
 *              (on a link whose rate is fully given out, the paper's
 *              "blocked -> less" only idles capacity, and makes cba cycle).
 *              Increases, most DCI wait first, take the link's free
 *              capacity, then are funded by the other flows on the same link
 *              that did not gain this round (donors). A donor gives at most
 *              one step per round, never goes below its min, and gives what
 *              the model of its transfers (pipe_cba_slack()) says costs it
 *              less DCI wait than it saves the CB flow: the whole step when
 *              that holds, else the part that keeps its slack >= shift_margin
 *              (free: a flow with slack); cheapest donors first, among free
 *              ones the largest slack first. An increase is granted in part
 *              when that is all the donors give; one that gets nothing is
 *              refused (blocked). A flow whose rate moves against its last
 *              move halves its step, so two flows cannot trade a step back
 *              and forth. When the iteration that ran with the last round's
 *              moves was slower than the one before (pipe_alloc.iter_time,
 *              which the caller fills in), those moves are undone first.
 *              Capacities hold; a saturated link's total is conserved.
 *     A link without a rate (and a pair with no link) has no shared
 *     capacity; its flows are limited by the configuration's rate_bps.
 */
#ifndef SDR_PIPE_CBA_H
#define SDR_PIPE_CBA_H

#include <stddef.h>
#include <stdint.h>

#include "pipe.h"
#include "pipe_net.h"

/* ---------------- labels ---------------- */

/** The label of one transfer (channel, micro-batch). */
struct pipe_cba_label {
	uint8_t cross;  /**< the channel crosses DCs */
	uint8_t known;  /**< its consumer is in the log (else cb = 0, wait = late = 0) */
	uint8_t cb;     /**< communication-bound */
	double wait;    /**< the consumer's wait for this transfer (s) */
	double late;    /**< consumer start - (producer end + intra_lat) (s); NAN when the
	                     producer is not in the log (then the wait alone decides:
	                     CB when wait > intra_lat) */
	double need;    /**< when the consumer looked for it: its wait's start (s) */
	double sent;    /**< the producer's send post (s); NAN when not in the log */
	double rposted; /**< the consumer's receive post (s); NAN when not in the log */
	uint8_t sblock; /**< the producer waits for the send's completion before a later
	                     compute (blocking schedules; not when the wait is its
	                     program's end or not in the log) */
	double sneed;   /**< with sblock: that wait's start (s) */
};

/**
 * Label the transfers of iteration @p iter of the event log @p e (the runtime's
 * or the DES's; times of all stages in one time base, or a partial log).
 * @param out  PIPE_NCHAN(S) * M labels, index chan * M + m
 * @return the number of CB transfers, or -EINVAL (iteration not in the log,
 *         a consumer without the wait for its input, negative intra_lat).
 */
int pipe_cba_label(const struct pipe_cfg *c, const struct pipe_events *e, uint32_t iter,
		   double intra_lat, struct pipe_cba_label *out);

/** The per-request rule: @p blocked -> prev - step, else @p cb -> prev +
 *  step, else prev; then clamped to [lo, hi] (lo <= hi). Saturates instead
 *  of wrapping. */
uint64_t pipe_cba_rule(uint64_t prev, int blocked, int cb, uint64_t step, uint64_t lo, uint64_t hi);

/* ---------------- flow labels and policies ----------------
 * (the flows themselves, struct pipe_flows, are pipe_net.h's) */

/** Aggregate per-transfer labels to one per flow (rule 3 above).
 *  @p cb and @p wait have fl->n entries. @return flows labelled CB. */
uint32_t pipe_cba_flow_labels(const struct pipe_cfg *c, const struct pipe_flows *fl,
			      const struct pipe_cba_label *lab, uint8_t *cb, double *wait);

/**
 * Slack of flow @p i (an index into @p fl) at @p rate_bps, from the labels
 * of one iteration: how early its transfers would have arrived before their
 * consumers looked for them (need), less @p margin; and, where the producer
 * waits for a send's completion before a later compute (sblock), how early
 * that completion would have come. The log has no arrival time of a
 * transfer nobody waited for, so the arrival is the network description's:
 * message m starts when it is ready (its send posted, and its receive posted
 * one reverse delay earlier: the clear-to-send) and the QP's message m-1 has
 * left, takes its frame bits at @p rate_bps (EC parity and loss recovery not
 * counted) and arrives one delay later; the send completes at its last bit
 * (rel none) or when acknowledged, one reverse delay after the arrival.
 * That is the DES's model of a paced QP on a link that is not
 * oversubscribed, so on a DES log, at the rate the iteration ran with and
 * margin 0, it is exact. The need times stay as logged (what the rate would
 * change downstream is not modelled). A lower rate never gives more slack.
 * @param wait  out (may be NULL): the waits those transfers would have caused,
 *              sum of max(0, arrival - (need - margin)) and of max(0,
 *              completion - (sneed - margin)) (s); NAN if unknown
 * @return the least of need - margin - arrival and sneed - margin -
 *         completion over the flow's transfers of micro-batch >= 1 (with
 *         M = 1: 0), in s (negative: a wait), or NAN (rate 0, a transfer's
 *         producer or consumer not in the log).
 */
double pipe_cba_slack(const struct pipe_cfg *c, const struct pipe_net *net,
		      const struct pipe_flows *fl, const struct pipe_cba_label *lab, uint32_t i,
		      uint64_t rate_bps, double margin, double *wait);

enum pipe_policy {
	PIPE_POLICY_NONE = 0,
	PIPE_POLICY_EQUAL,
	PIPE_POLICY_STATIC,
	PIPE_POLICY_CBA,
	PIPE_POLICY_CBA_SHIFT,
	PIPE_POLICY_COUNT
};

const char *pipe_policy_name(enum pipe_policy p);
/** @return 0 or -EINVAL. */
int pipe_policy_parse(const char *s, enum pipe_policy *p);

struct pipe_policy_cfg {
	enum pipe_policy policy;
	/** cba and cba-shift rule in bit/s; 0 = per flow: step = min = a
	 *  quarter of its equal share, max = its link's rate (or the
	 *  configuration's rate_bps) */
	uint64_t step_bps, min_bps, max_bps;
	double intra_lat;                    /**< labelling's intra-DC latency (s) */
	double shift_margin;                 /**< cba-shift: slack a donor keeps (s, >= 0) */
	uint32_t nstatic;                    /**< static: rates given, = flows */
	uint64_t static_bps[PIPE_MAX_FLOWS]; /**< static: per flow, in flow order */
};

/** Fill defaults: policy none, automatic cba steps, intra_lat 0. */
void pipe_policy_cfg_init(struct pipe_policy_cfg *pc);

/** One round's decision. */
struct pipe_alloc {
	uint32_t n;                         /**< flows */
	uint64_t rate[PIPE_MAX_FLOWS];      /**< granted bit/s of frames; 0 = unpaced */
	uint64_t req[PIPE_MAX_FLOWS];       /**< requested (= rate unless refused) */
	uint8_t blocked[PIPE_MAX_FLOWS];    /**< request refused: blocked for the next round */
	uint8_t cb[PIPE_MAX_FLOWS];         /**< the flow label the request came from */
	double wait[PIPE_MAX_FLOWS];        /**< DCI wait of its CB transfers (s) */
	double slack[PIPE_MAX_FLOWS];       /**< cba-shift: its slack at its previous rate
	                                       (pipe_cba_slack(); NAN: not known), 0 else */
	uint64_t gave[PIPE_MAX_FLOWS];      /**< cba-shift: bit/s it gave to CB flows */
	uint64_t step[PIPE_MAX_FLOWS];      /**< cba, cba-shift: its step for the next round
	                                       (cba-shift: halved at each reversal) */
	int8_t dir[PIPE_MAX_FLOWS];         /**< cba-shift: sign of its last rate change
	                                       (0: none yet) */
	uint64_t base_rate[PIPE_MAX_FLOWS]; /**< cba-shift: the rates it was decided from */
	double base_time;                   /**< cba-shift: the iteration time those gave (s) */
	double iter_time;                   /**< the iteration time these rates gave (s; 0 =
	                                       not known): the caller fills it in after
	                                       the iteration ran, before passing this as
	                                       the previous round */
	uint8_t undone;                     /**< cba-shift: these rates undo the previous
	                                       round's moves */
	uint32_t nblocked;
};

/**
 * Rates of the next round.
 * @param prev  the previous round's decision (NULL: round 0)
 * @param lab   the previous round's labels (pipe_cba_label(); NULL: none CB)
 * @return 0, -EINVAL (static rates missing or zero, bad rule bounds, a
 *         negative shift_margin: message in @p why), -ENOSPC (static rates
 *         above a link's rate).
 */
int pipe_policy_alloc(const struct pipe_cfg *c, const struct pipe_net *net,
		      const struct pipe_flows *fl, const struct pipe_policy_cfg *pc,
		      const struct pipe_alloc *prev, const struct pipe_cba_label *lab,
		      struct pipe_alloc *out, char *why, size_t whylen);

/* ---------------- prediction over iterations ---------------- */

/** One predicted iteration under a policy. */
struct pipe_pred_iter {
	double iter_time;        /**< s */
	double bubble;           /**< mean over stages */
	uint32_t ncb;            /**< CB transfers (labels of this iteration) */
	struct pipe_alloc alloc; /**< the rates it ran with (blocked: refused when they
	                               were decided) */
};

/**
 * Predict @p iters iterations of @p p under policy @p pc with the DES
 * (pipe_des_run_rates()): iteration 0 runs with the policy's round-0
 * rates, iteration i with the rates decided from iteration i-1's events
 * (pipe_cba_label() with pc->intra_lat, then pipe_policy_alloc()).
 * Iterations are independent runs from time 0 (a barrier between them).
 * @param it    @p iters results
 * @param last  NULL, or the DES output of the last iteration (free with
 *              pipe_des_free())
 * @return 0, an error of pipe_policy_alloc() (message in @p why) or of the
 *         DES.
 */
int pipe_predict(const struct pipe_cfg *c, const struct pipe_prog *p,
		 const struct pipe_policy_cfg *pc, uint32_t iters, struct pipe_pred_iter *it,
		 struct pipe_des_out *last, char *why, size_t whylen);

#endif /* SDR_PIPE_CBA_H */
