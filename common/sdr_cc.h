/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Congestion control of one sending QP, the pure-C decision core (no DPDK,
 * no clock of its own): it is fed what the ACKs say (RTT samples, packets
 * acknowledged, packets the network marked CE, losses) and what the QP sent,
 * and it answers one number, the rate the QP's pacer may send at, never above
 * the ceiling it is given (the QP's configured rate, the controller's
 * policy, the port). The firmware's SR engine drives it; the tests drive it
 * on a simulated clock. docs/congestion.md has the algorithm, its formulas
 * and its constants.
 *
 * Signals, on two timescales:
 *   - delay: queueing delay q = (smallest RTT sample of the decision
 *     interval) - base RTT, where the base RTT is the smallest sample of the
 *     last base_window (two half-windows, so a route that got longer is
 *     learnt within one window and one that got shorter at once);
 *   - ECN: the fraction F of acknowledged packets that arrived CE-marked,
 *     smoothed into alpha (DCQCN's estimator).
 * One decision per interval of max(base RTT, min_interval): decrease by
 * alpha/2 on CE (DCQCN), by beta * (q - T) / q on delay above the target T
 * (Swift), at most by max_mdf; otherwise increase: doubling per interval
 * until the first congestion signal (start-up), then additively by
 * ai_frac of the ceiling per interval, accelerated by the number of calm
 * intervals in a row (so a freed capacity is retaken in a few RTTs) up to
 * accel_max_frac of sqrt(rate x ceiling): a smaller flow grows by a larger
 * fraction of its rate, so competing flows still meet on AIMD's fair
 * point. An interval that spans
 * n >= 2 base RTTs (ACKs per unit at a low rate) decides as n round trips:
 * alpha's gain, a cut per marked round trip, a step per unmarked one.
 * Loss alone is not congestion on a long-haul link (SR and EC repair random
 * loss); loss while the queueing delay is above the delay target in force
 * is, and so is more than loss_frac of the packets over a loss window (the
 * packet loss estimated from lost units). Once the path marks CE, ECN leads: delay alone cuts only above max(T, ecn_delay_frac * base RTT,
 * jit_k * the delay signal's noise), so host scheduling jitter in the RTT
 * samples does not starve the flow.
 */
#ifndef SDR_CC_H
#define SDR_CC_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Constants of the controller (sdr_cc_params_default() fills them). */
struct sdr_cc_params {
	uint64_t min_interval_ns; /**< shortest decision interval (a short RTT) */
	uint64_t base_window_ns;  /**< base RTT forgets samples older than this */
	uint64_t target_ns;       /**< T = target_ns + target_frac * base RTT */
	double target_frac;
	double beta;           /**< delay decrease gain (Swift's beta) */
	double max_mdf;        /**< largest multiplicative decrease per interval */
	double ecn_g;          /**< gain of alpha's EWMA (DCQCN's g) */
	double alpha0;         /**< alpha at the start (DCQCN: 1, the first CE halves) */
	double ai_frac;        /**< additive increase per interval, of the ceiling ... */
	double ai_ref_k;       /**< ... or of sqrt(ceiling x ai_ref_k x max(rate,
	                            peak)), where that is lower: a ceiling far
	                            above the link (a NIC's line rate) does not
	                            make the step a large part of the flow's
	                            share (0: the ceiling alone; --cc-ai-ref) */
	unsigned ai_accel;     /**< cap of the calm-interval acceleration factor */
	double span_max;       /**< an interval that spans n base RTTs (an ACK per
	                            unit, seconds apart at a low rate) counts as
	                            min(n, span_max) of them: alpha's gain, the
	                            marked round trips a CE cut compounds, the
	                            additive steps (DCTCP's per-window reaction) */
	double accel_max_frac; /**< an accelerated step adds at most this fraction of
	                            sqrt(rate x ceiling) ... */
	double accel_rel_max;  /**< ... and at most this fraction of the rate */
	double probe_margin;   /**< a calm flow this fraction above its peak (the
	                            rate before its last run of cuts) probes: ... */
	double probe_first;    /**< ... its j-th such interval adds this x 2^j of
	                            the rate ... */
	double probe_max;      /**< ... at most this fraction (0: no probe) */
	double noise_probe_k;  /**< where ECN leads, the probe's "no queue" test of
	                            the RTT samples waits above this x the noise J
	                            (when that is above T/4), and an unmarked
	                            interval is calm when J is above T/4 (0: off,
	                            the default; --cc-noise-probe on: 2) */
	/** a congested decision also holds where the queue is deeper than this
	 *  fraction of the base RTT, shorter (by more than T) than at the
	 *  decision before, and the rate already at or below the delivered
	 *  share less the drain: the cuts so far are draining it, and the marks
	 *  of a deep queue last as long as it drains (0: never) */
	double deep_hold_q;
	/** after a cut, where the ACKs of what was sent before it show the
	 *  flow delivering, over a base RTT and with CE marks, less than this
	 *  fraction of the cut's rate (its sends were not app-limited), the
	 *  rate is cut again to that delivery less the drain at once: the
	 *  capacity fell or flows joined, and the cut was taken from a share
	 *  that no longer holds (0: off) */
	double dlv_fall;
	double cut_extra;      /**< a cut takes this fraction more: the larger flow
	                            gives more in absolute terms (AIMD's fairness) */
	double dlv_busy;       /**< a cut goes to what the flow delivered only where
	                            this interval and the one before each sent at
	                            least this fraction of rate x interval */
	double init_frac;      /**< first rate, of the ceiling ... */
	double init_min_bps;   /**< ... and at least this (bit/s; not above the ceiling) */
	double startup_gain;   /**< start-up: the rate grows by this factor per interval */
	double drain_rtts;     /**< a cut drains the queue above the target over this
	                          many round trips */
	double min_frac;       /**< floor, of the ceiling, ... */
	double min_bps;        /**< ... and at least this (bit/s; not above the ceiling) */
	double loss_md;        /**< decrease on loss that is congestion: */
	double loss_frac;      /**< ... under queueing, or more than this fraction of
	                          the packets lost (estimated from the units lost:
	                          sdr_cc_on_loss_unit()) over a loss window: */
	double loss_min_units; /**< ... that holds this many units' packets ... */
	double loss_win_rtts;  /**< ... or has lasted this many base RTTs */
	double app_limited;    /**< an interval that sent less than this fraction of
	                          rate x interval does not increase the rate ... */
	double quantum_bytes;  /**< ... unless rate x interval is below this (two
	                          frames: what the pacer releases at once): then
	                          an interval may be shorter than a frame's time
	                          and send nothing, which is the pacer's
	                          granularity, not the application's limit */
	double ecn_delay_frac; /**< while ECN leads (a CE mark within base_window):
	                          delay alone cuts only above this fraction of the
	                          base RTT ... */
	double jit_k;          /**< ... or jit_k times the delay signal's noise (the
	                          smoothed q of the intervals without a CE mark),
	                          whichever is larger (never below T) */
	double jit_g;          /**< gain of that noise estimate's EWMA */
	double q_span_rtts;    /**< where ECN does not lead, a delay cut needs the
	                          queueing delay in the interval's smallest RTT
	                          sample and in every one of the q_span_rtts
	                          base RTTs before it (0: the interval's alone):
	                          a sample late on the host's noise alone is not
	                          a queue that lasts */
	double ecn_delay_cap;  /**< that target is at most this fraction of the base
	                          RTT (a queue ECN does not mark still cuts) */
	double noise_cap;      /**< without ECN: max(T, jit_k * jit), at most this
	                          fraction of the base RTT */
	unsigned comp_enter;   /**< this many decisions in a row that cut on CE or
	                          delay, each finding the queue no shorter (within
	                          T) than the one before, enter the TCP-competitive
	                          mode (0: never) */
	double comp_md;        /**< TCP-competitive mode: decrease on loss ... */
	double comp_ai_bytes;  /**< ... and increase per RTT (Reno's segment; a jumbo
	                          one: the QP's own frame may be smaller than a TCP
	                          competitor's segment, and AIMD shares go as the
	                          increases) */
	unsigned comp_reenter; /**< within comp_memory_ns of leaving the mode, this
	                            many such cuts enter it again */
	uint64_t comp_memory_ns;
	double comp_alpha; /**< where the path marks, the marked fraction
	                            smoothed (from 0, gain ecn_g per interval or
	                            per comp_mark_rtts base RTTs, whichever is the
	                            larger) must be at least this to enter the mode */
	double comp_mark_rtts;
	double comp_delay_frac; /**< where it does not mark, a cut whose queueing
	                             delay is below this fraction of the base RTT
	                             starts the run again (host noise on the RTT
	                             samples stays below it) */
	double comp_shrink;     /**< a cut whose queue is below (1 - this) of the
	                             run's first, less T, starts the run again */
	uint64_t comp_max_ns;   /**< after this long in the mode, the first loss
	                             ends it (0: only the queue's draining) */
};

/** Defaults (docs/congestion.md "Constants"). */
void sdr_cc_params_default(struct sdr_cc_params *p);

/** What the controller decided last, for stats. */
enum sdr_cc_event {
	SDR_CC_NONE = 0,
	SDR_CC_STARTUP,   /**< doubled (start-up) */
	SDR_CC_INCREASE,  /**< additive increase (or a probe, docs/congestion.md) */
	SDR_CC_HOLD,      /**< unchanged: calm but application-limited, or a
	                       probe's overshoot draining as its cut planned */
	SDR_CC_DEC_ECN,   /**< decreased on CE marks */
	SDR_CC_DEC_DELAY, /**< decreased on queueing delay above the target */
	SDR_CC_DEC_LOSS,  /**< decreased on loss under queueing */
};

/** RTT samples kept for the queueing delay's minimum over q_span_rtts (at
 * high rates the last of them: an interval's own many samples filter there). */
#define SDR_CC_RTT_KEEP 8

/** One QP's controller. Fields are read-only outside sdr_cc.c. */
struct sdr_cc {
	struct sdr_cc_params p;
	double rate;       /**< bit/s the pacer may send at */
	uint64_t ceiling;  /**< bit/s, never exceeded */
	bool startup;      /**< no congestion signal seen yet */
	uint64_t base_rtt; /**< ns; 0 = no sample yet */
	uint64_t win_min[2], win_start;
	uint64_t srtt;       /**< ns, EWMA 1/8 of the samples (stats) */
	uint64_t last_rtt;   /**< ns, the last sample */
	double alpha;        /**< smoothed CE fraction */
	double mark;         /**< the marked fraction smoothed over time, from 0
	                           (alpha, per interval, starts at alpha0): the
	                           TCP-competitive mode's test */
	unsigned calm;       /**< calm intervals in a row */
	unsigned quiet;      /**< intervals in a row without a queue for the probe */
	double peak;         /**< bit/s: the rate before the last run of cuts */
	unsigned probe;      /**< probing intervals in a row */
	bool probe_ep;       /**< from a probe until its queue is gone: cuts go
	                          to the delivered share, not compounded ... */
	uint64_t ep_at;      /**< ... (ns: its first congested decision; the
	                          episode lasts 2 x drain_rtts base RTTs from
	                          it) */
	uint64_t probes;     /**< probing intervals (stats) */
	uint64_t cut_at;     /**< ns: the last cut (ACKs of packets sent before it
	                          do not count towards the next) */
	uint64_t stale_acks; /**< packets acknowledged that were sent before a cut */
	uint64_t ack_at;     /**< ns: the last ACK (0: none yet) */
	uint64_t stale_lost; /**< packets lost that were sent before a cut, or
	                          declared lost within a base RTT of leaving */
	double prev_q;       /**< queueing delay of the decision before, ns */
	bool busy_prev;      /**< the interval before sent dlv_busy of its rate */
	bool cut_busy;       /**< ... and the one the last cut decided (dlv_fall) */
	/* the ACKs since the last cut of what was sent before it (dlv_fall):
	 * the first one's time (0: none yet), the bytes and CE marks after it */
	uint64_t st_first, st_bytes, st_ce;
	/* the last RTT samples (ns: when taken, the RTT), oldest overwritten,
	 * for the queueing delay over q_span_rtts */
	uint64_t rs_at[SDR_CC_RTT_KEEP], rs_rtt[SDR_CC_RTT_KEEP];
	unsigned rs_next;
	/* the interval being measured */
	uint64_t iv_start, iv_min_rtt, iv_acked, iv_ce, iv_lost, iv_sent_bytes;
	uint64_t iv_bytes;      /**< acknowledged, but the ACK that opened it */
	uint64_t iv_lost_units; /**< the units iv_lost's packets were lost in */
	/* the loss window: from the first interval with a loss (not under
	 * queueing), its packets seen, lost and the units they were lost in */
	uint64_t lw_start, lw_seen, lw_lost, lw_units;
	bool iv_held;     /**< the rate held a frame back in this interval ... */
	uint64_t iv_span; /**< ... and the interval's frames left over this span (ns) */
	/* counters (stats, JSON, telemetry) */
	uint64_t acked, ce, lost_events, intervals;
	uint64_t loss_windows; /**< loss windows judged (not under queueing) */
	double loss_est;       /**< the packet loss fraction of the last one */
	uint64_t dec_ecn, dec_delay, dec_loss, increases;
	uint64_t holds_app;    /**< decisions that held: the interval sent less
	                           than its rate let it (app-limited) */
	uint64_t delay_spared; /**< decisions whose interval's queueing delay was
	                            above the delay target but not in every
	                            sample of q_span_rtts before it: no delay
	                            cut (a host's noise) */
	uint64_t dlv_cuts;     /**< ECN cuts (in dec_ecn) taken between
	                           decisions: the delivery after a cut fell
	                           below dlv_fall of its rate */
	uint64_t holds_drain;  /**< ... congested, but the rate already at or
	                           below the share a probe's cut planned (its
	                           overshoot draining), or a deep queue
	                           draining (deep_hold_q) */
	enum sdr_cc_event last;
	double last_q_ns; /**< queueing delay of the last decision, ns */
	double jit;       /**< ns: smoothed q of the intervals without CE (noise of
	                       the delay signal: host scheduling, ACK coalescing) */
	uint64_t ce_at;   /**< ns: the last interval with a CE mark (0: none yet) */
	bool ce_seen;     /**< the path has marked CE (ECN leads while ce_at is
	                       within base_window) */
	/* TCP-competitive mode: a flow that keeps the queue above the marking
	 * threshold whatever this one does (TCP without ECN, BBR) would starve
	 * it. After comp_enter congested decisions in a row, those cuts are
	 * undone (the rate before the first), CE and delay no longer cut, loss
	 * cuts by comp_md, and the rate grows as Reno's does, comp_ai_bytes
	 * per RTT, until an interval without CE finds the queue below the
	 * delay target in force, or a loss comes after comp_max_ns in it */
	bool comp;             /**< in the TCP-competitive mode */
	unsigned cong_run;     /**< congested decisions (CE or delay) in a row,
	                           the queue not shrinking */
	double run_rate;       /**< the rate before the first of them */
	double run_q0;         /**< ns: the queueing delay at its first cut */
	uint64_t comp_enters;  /**< times the mode was entered */
	uint64_t comp_left;    /**< ns: when it last left the mode (0: never) */
	uint64_t comp_iv;      /**< decisions made in the mode */
	uint64_t comp_at;      /**< ns: when it last entered the mode */
	uint64_t comp_expired; /**< times a loss after comp_max_ns ended it */
};

/** Start at init_frac of @p ceiling_bps (> 0) at @p now_ns. */
void sdr_cc_init(struct sdr_cc *cc, const struct sdr_cc_params *p, uint64_t ceiling_bps,
		 uint64_t now_ns);

/** A new ceiling (the QP's rate was set, the policy moved): the rate is
 *  clamped to it at once. */
void sdr_cc_set_ceiling(struct sdr_cc *cc, uint64_t ceiling_bps);

/** The QP put @p bytes on the wire (data and parity). */
static inline void sdr_cc_on_sent(struct sdr_cc *cc, uint32_t bytes)
{
	cc->iv_sent_bytes += bytes;
}

/** The QP had a frame to send that its rate held back, and it sent this
 *  interval's frames over @p span_ns (first to last): the app-limited test
 *  then asks whether it sent at its rate over that span, not over the whole
 *  interval (RFC 7661's "cwnd-limited", Linux's is_cwnd_limited). A QP that
 *  sends messages shorter than rate x interval would otherwise stay
 *  app-limited at about twice its message size per round trip, never
 *  reaching the ceiling; a host that stalls in the middle of a backlog
 *  stretches the span and still holds. */
static inline void sdr_cc_on_held(struct sdr_cc *cc, uint64_t span_ns)
{
	cc->iv_held = true;
	cc->iv_span = span_ns;
}

/**
 * An ACK: @p acked packets (@p bytes on the wire) newly acknowledged, @p ce
 * of them marked CE on the way, @p rtt_ns an RTT sample (0 = none: Karn's
 * rule kept it out).
 * Makes the interval's decision when it is over. @return the rate (bit/s).
 */
uint64_t sdr_cc_on_ack(struct sdr_cc *cc, uint64_t now_ns, uint64_t rtt_ns, uint32_t acked,
		       uint32_t ce, uint32_t bytes);

/** sdr_cc_on_ack() in two parts, for a sender whose feedback of delivery
 *  (packets, bytes, CE marks: the receiver's running counts) comes more
 *  often than its RTT samples (a unit's ACK): an RTT sample alone... */
void sdr_cc_on_rtt(struct sdr_cc *cc, uint64_t now_ns, uint64_t rtt_ns);

/** ... and @p acked packets (@p bytes on the wire, @p ce of them marked CE)
 *  delivered, with no sample of their own: taken as sent one RTT (the
 *  last sample) before @p now_ns, so that what left before the last cut
 *  does not count again. Makes the interval's decision when it is over.
 *  @return the rate (bit/s). */
uint64_t sdr_cc_on_delivered(struct sdr_cc *cc, uint64_t now_ns, uint32_t acked, uint32_t ce,
			     uint32_t bytes);

/** @p n packets were declared lost at @p now_ns (retransmitted on a timeout
 *  or a NACK), each on its own. They count in the interval's loss fraction;
 *  an interval of losses alone decides only if an ACK came since the last
 *  cut (a stall cuts once, not once per probe that expires). */
void sdr_cc_on_loss(struct sdr_cc *cc, uint64_t now_ns, uint32_t n);

/** sdr_cc_on_loss() for packets last sent at @p sent_ns: not counted
 *  (stale_lost) when sent before the last cut (that cut answered them: one
 *  reduction per window), while no ACK came since the last cut (a stall's
 *  probes), or declared lost less than a base RTT after they left (a
 *  timer or NACK ahead of their delivery is no loss signal). */
void sdr_cc_on_loss_sent(struct sdr_cc *cc, uint64_t now_ns, uint32_t n, uint64_t sent_ns);

/** sdr_cc_on_loss_sent() for one *unit* of @p n packets: the sender knows
 *  only that at least one of them was lost and sends all @p n again (SR's
 *  chunk, whose ACK bitmap bit covers all its packets). Outside queueing
 *  the loss window then takes the packet loss fraction p that explains the
 *  fraction u of packets in lost units under independent loss,
 *  p = 1 - (1 - u)^(1/k), k the mean packets per lost unit: random loss of
 *  1 % loses 15 % of 16-packet units, which is not 15 % of the packets. */
void sdr_cc_on_loss_unit(struct sdr_cc *cc, uint64_t now_ns, uint32_t n, uint64_t sent_ns);

/** The rate in force (bit/s), at least 1. */
static inline uint64_t sdr_cc_rate(const struct sdr_cc *cc)
{
	return cc->rate < 1 ? 1 : (uint64_t)cc->rate;
}

/** The queueing-delay target T (ns): target_ns + target_frac * base RTT. */
uint64_t sdr_cc_target(const struct sdr_cc *cc);

/** The delay target in force at @p now_ns (ns): max(T, min(jit_k * jit,
 *  noise_cap * base RTT)), or while ECN leads max(T, min(max(ecn_delay_frac
 *  * base RTT, jit_k * jit), ecn_delay_cap * base RTT)). */
uint64_t sdr_cc_delay_target(const struct sdr_cc *cc, uint64_t now_ns);

/** ECN leads at @p now_ns: the path marked CE within the last base_window. */
bool sdr_cc_ecn_leads(const struct sdr_cc *cc, uint64_t now_ns);

/** Name of an event ("startup", "increase", ...). */
const char *sdr_cc_event_name(enum sdr_cc_event e);

#ifdef __cplusplus
}
#endif

#endif /* SDR_CC_H */
