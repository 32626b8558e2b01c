/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Congestion control of one sending QP: the decision core (common/, pure C,
 * no clock of its own). See sdr_cc.h and docs/congestion.md.
 */
#include "sdr_cc.h"

/* The same decisions on every architecture: no fused multiply-add (aarch64
 * compilers contract a * b + c by default, and a closed loop amplifies the
 * last bit; the tests' figures are exact on x86 and under qemu alike). */
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <math.h>
#include <string.h>

void sdr_cc_params_default(struct sdr_cc_params *p)
{
	memset(p, 0, sizeof(*p));
	p->min_interval_ns = 100000;      /* 100 us */
	p->base_window_ns = 10000000000u; /* 10 s */
	p->target_ns = 200000;            /* 200 us + 2 % of the base RTT */
	p->target_frac = 0.02;
	p->beta = 0.8;
	p->max_mdf = 0.5;
	p->ecn_g = 1.0 / 16;
	p->alpha0 = 1.0;
	p->ai_frac = 0.001;
	p->ai_ref_k = 0; /* (off: --cc-ai-ref K sets K) */
	p->ai_accel = 16;
	p->span_max = 16;
	p->init_frac = 1.0 / 64;
	p->init_min_bps = 10e6;
	p->startup_gain = 1.5;
	p->drain_rtts = 4.5;
	p->deep_hold_q = 0.5;
	p->dlv_fall = 0.7;
	p->accel_max_frac = 0.008;
	p->accel_rel_max = 0.04;
	p->probe_margin = 0.05;
	p->probe_first = 0.06;
	p->probe_max = 0.1;
	p->noise_probe_k = 0; /* (off: --cc-noise-probe on sets 2) */
	p->cut_extra = 0.1;
	p->dlv_busy = 0.9;
	p->min_frac = 0.0001;
	p->min_bps = 1e6;
	p->loss_md = 0.3;
	p->loss_frac = 0.05;
	p->loss_min_units = 32;
	p->loss_win_rtts = 8;
	p->app_limited = 0.5;
	p->quantum_bytes = 2 * 9216;
	p->ecn_delay_frac = 0.25;
	p->jit_k = 3;
	p->jit_g = 1.0 / 8;
	p->q_span_rtts = 2;
	p->ecn_delay_cap = 1.0;
	p->noise_cap = 0.25;
	p->comp_enter = 4;
	p->comp_md = 0.5;
	p->comp_ai_bytes = 9000;
	p->comp_reenter = 2;
	p->comp_alpha = 0.5;
	p->comp_mark_rtts = 16;
	p->comp_memory_ns = 1000000000u; /* 1 s */
	p->comp_delay_frac = 0.5;
	p->comp_max_ns = 4000000000u; /* 4 s */
	p->comp_shrink = 0.3;
}

static double floor_of(const struct sdr_cc *cc)
{
	double f = (double)cc->ceiling * cc->p.min_frac;

	/* (at a few kbit/s a unit takes seconds to send, its timer expires,
	 * and the loss cuts again: the floor keeps a QP's units moving) */
	if (f < cc->p.min_bps)
		f = cc->p.min_bps < (double)cc->ceiling ? cc->p.min_bps : (double)cc->ceiling;
	return f < 1 ? 1 : f;
}

static void clamp(struct sdr_cc *cc)
{
	double lo = floor_of(cc);

	if (cc->rate > (double)cc->ceiling)
		cc->rate = (double)cc->ceiling;
	if (cc->rate < lo)
		cc->rate = lo;
}

void sdr_cc_init(struct sdr_cc *cc, const struct sdr_cc_params *p, uint64_t ceiling_bps,
		 uint64_t now_ns)
{
	memset(cc, 0, sizeof(*cc));
	if (p)
		cc->p = *p;
	else
		sdr_cc_params_default(&cc->p);
	cc->ceiling = ceiling_bps ? ceiling_bps : 1;
	cc->rate = (double)cc->ceiling * cc->p.init_frac;
	/* a decision needs ACKs: a low ceiling's 1/64 would acknowledge one
	 * unit (chunk) a second and start up over minutes */
	if (cc->rate < cc->p.init_min_bps)
		cc->rate = cc->p.init_min_bps;
	cc->startup = true;
	cc->alpha = cc->p.alpha0;
	cc->win_start = now_ns;
	cc->iv_start = now_ns;
	clamp(cc);
}

void sdr_cc_set_ceiling(struct sdr_cc *cc, uint64_t ceiling_bps)
{
	cc->ceiling = ceiling_bps ? ceiling_bps : 1;
	clamp(cc);
}

uint64_t sdr_cc_target(const struct sdr_cc *cc)
{
	return cc->p.target_ns + (uint64_t)(cc->p.target_frac * (double)cc->base_rtt);
}

bool sdr_cc_ecn_leads(const struct sdr_cc *cc, uint64_t now)
{
	return cc->ce_seen && (now < cc->ce_at || now - cc->ce_at < cc->p.base_window_ns);
}

uint64_t sdr_cc_delay_target(const struct sdr_cc *cc, uint64_t now)
{
	double t = (double)sdr_cc_target(cc), e, cap;

	if (!sdr_cc_ecn_leads(cc, now)) {
		/* delay is the only signal: above its noise, at most
		 * noise_cap of the base RTT (J follows a standing queue too:
		 * the cap bounds the queue it tolerates) */
		e = cc->p.jit_k * cc->jit;
		cap = cc->p.noise_cap * (double)cc->base_rtt;
		if (e > cap)
			e = cap;
		return (uint64_t)(e > t ? e : t);
	}
	/* ECN marks the bottleneck's queue: delay is the back-up signal (a
	 * queue that does not mark), so it waits above the noise the host
	 * adds to the RTT samples, and above a fraction of the base RTT */
	e = cc->p.ecn_delay_frac * (double)cc->base_rtt;
	if (cc->p.jit_k * cc->jit > e)
		e = cc->p.jit_k * cc->jit;
	cap = cc->p.ecn_delay_cap * (double)cc->base_rtt;
	if (e > cap)
		e = cap;
	return (uint64_t)(e > t ? e : t);
}

/* The base RTT: the smallest sample of two half-windows (the current one and
 * the one before), so a sample leaves it between half a window and a window
 * after it was taken. */
static void base_sample(struct sdr_cc *cc, uint64_t now, uint64_t rtt)
{
	if (now - cc->win_start >= cc->p.base_window_ns / 2) {
		cc->win_min[1] = cc->win_min[0];
		cc->win_min[0] = 0;
		cc->win_start = now;
	}
	if (cc->win_min[0] == 0 || rtt < cc->win_min[0])
		cc->win_min[0] = rtt;
	cc->base_rtt = cc->win_min[0];
	if (cc->win_min[1] != 0 && cc->win_min[1] < cc->base_rtt)
		cc->base_rtt = cc->win_min[1];
}

static double mdf(const struct sdr_cc *cc, double f)
{
	return f < 1 - cc->p.max_mdf ? 1 - cc->p.max_mdf : f;
}

/* A decision that cut the rate (on CE, delay or loss). */
static bool is_cut(enum sdr_cc_event ev)
{
	return ev >= SDR_CC_DEC_ECN && ev <= SDR_CC_DEC_LOSS;
}

/* The interval of @p len ns sent less than app_limited of what its rate
 * allowed: over the whole interval or, when the rate held a frame back, over
 * the span its frames left in (and a quantum's time). Not judged where rate
 * x interval is below the quantum: there the pacer's granularity decides
 * what an interval sends. */
static bool app_limited(const struct sdr_cc *cc, uint64_t len)
{
	double over = (double)len;

	if (cc->rate * (double)len / 8e9 < cc->p.quantum_bytes)
		return false;
	if (cc->iv_held) {
		double span = (double)cc->iv_span + cc->p.quantum_bytes * 8e9 / cc->rate;

		if (span < over)
			over = span;
	}
	return (double)cc->iv_sent_bytes * 8 < cc->p.app_limited * cc->rate * over / 1e9;
}

/* The TCP-competitive mode's decision (sdr_cc.h): Reno's congestion
 * avoidance, in rate form. Loss cuts by comp_md (once per window: the stale
 * rules of sdr_cc_on_loss_sent()); otherwise the rate grows by comp_ai_bytes
 * per smoothed RTT, for every RTT the interval spanned (Reno's one segment
 * per RTT, of a jumbo frame). CE and queueing delay do not cut. */
static enum sdr_cc_event decide_comp(struct sdr_cc *cc, uint64_t len)
{
	double rtt = (double)(cc->srtt ? cc->srtt : cc->base_rtt);

	cc->comp_iv++;
	if (cc->iv_lost > 0) {
		/* (of what it sent in the interval, where that is less: Reno
		 * halves what it has in flight; a rate above what a window
		 * (the host's messages in flight) lets out is halved without
		 * effect, and flows held back by their windows keep the
		 * buffer full) */
		double snd = len ? (double)cc->iv_sent_bytes * 8e9 / (double)len : 0;

		if (snd > 0 && snd < cc->rate)
			cc->rate = snd;
		cc->rate *= 1 - cc->p.comp_md;
		cc->dec_loss++;
		return SDR_CC_DEC_LOSS;
	}
	if (app_limited(cc, len)) {
		cc->holds_app++;
		return SDR_CC_HOLD;
	}
	cc->increases++;
	if (rtt > 0)
		cc->rate += cc->p.comp_ai_bytes * 8e9 / rtt * ((double)len / rtt);
	return SDR_CC_INCREASE;
}

/* After decision @p ev (queueing delay @p q, the target T @p target, the
 * rate before it @p rate0):
 * does the TCP-competitive mode start? A queue that comp_enter cuts in a
 * row did not shrink is kept by a flow that does not answer CE or delay
 * (Copa's mode switch, "Copa: Practical Delay-Based Congestion Control for
 * the Internet", NSDI 2018); a start-up's overshoot drains under the cuts,
 * and flows that all answer share the draining. */
static void comp_watch(struct sdr_cc *cc, enum sdr_cc_event ev, double q, uint64_t target,
		       double rate0, uint64_t now)
{
	bool ecn = sdr_cc_ecn_leads(cc, now);

	if (ev == SDR_CC_DEC_ECN || ev == SDR_CC_DEC_DELAY) {
		if (cc->cong_run == 0) {
			cc->run_rate = rate0;
			cc->run_q0 = q;
			cc->cong_run = 1;
		} else if (q + (double)target < (1 - cc->p.comp_shrink) * cc->run_q0 ||
			   (!ecn && q < cc->p.comp_delay_frac * (double)cc->base_rtt)) {
			/* the run starts again from this cut (the rate before
			 * its first stays what an entry restores) where since
			 * its first the queue shrank by more than comp_shrink
			 * (and T): the cuts drain it, as flows that answer do
			 * over drain_rtts round trips, and a decision to the
			 * next may see less of that than the noise; or where
			 * the path does not mark and the queue is below
			 * comp_delay_frac of the base RTT: the RTT samples of a
			 * loaded host vary by milliseconds, and cuts on that
			 * noise are no sign of a competitor */
			cc->run_q0 = q;
			cc->cong_run = 1;
		} else if (q + (double)target >= cc->prev_q) {
			/* the cut before did not shrink the queue (by more than
			 * the target: noise) */
			cc->cong_run++;
		}
	} else {
		cc->cong_run = 0;
	}
	/* (within comp_memory of leaving the mode, comp_reenter cuts where
	 * the path marks: after a loss both flows halved and the queue
	 * drained, and the flow that does not answer takes the link back
	 * while this one cuts on every mark again; delay alone is noisier,
	 * and 8 flows on a bottleneck that does not mark re-entered on it) */
	bool again = cc->comp_left && now - cc->comp_left < cc->p.comp_memory_ns && ecn;

	/* (the first time, where the path marks, the queue must also have
	 * stood above the marking threshold: the smoothed marked fraction
	 * at least comp_alpha - from 0, about 11 fully marked intervals,
	 * longer than a newcomer's start-up; flows that answer ECN keep it at
	 * a few per cent) */
	if (!cc->comp && cc->p.comp_enter &&
	    cc->cong_run >= (again ? cc->p.comp_reenter : cc->p.comp_enter) &&
	    (again || !ecn || cc->mark >= cc->p.comp_alpha)) {
		/* the cuts answered a queue another flow keeps: undone (as
		 * TCP undoes a reduction found spurious, RFC 3522) */
		cc->comp = true;
		cc->comp_at = now;
		if (cc->rate < cc->run_rate)
			cc->rate = cc->run_rate;
		cc->comp_enters++;
	}
}

/* The queueing delay that judges the interval's losses: its own (@p q), or
 * where it had no RTT sample (losses alone: the timers of a full buffer
 * expire before any ACK) the last sample's. */
static double loss_q(const struct sdr_cc *cc, double q)
{
	if (cc->iv_min_rtt || cc->last_rtt <= cc->base_rtt)
		return q;
	return (double)(cc->last_rtt - cc->base_rtt);
}

/* Loss without queueing (the interval's @p seen packets, acknowledged or
 * lost): random loss on a long-haul path (SR and EC repair it) or a
 * policer's. One interval is a small sample at a low rate (a dozen packets
 * at tens of Mbit/s and 25 ms: one loss is 8 %), so the losses gather in a
 * window from the first interval with a loss until it holds loss_min_units
 * units' packets or has lasted loss_win_rtts base RTTs; then the packet
 * loss fraction it estimates (sdr_cc_on_loss_unit()) is judged against
 * loss_frac. @return true: a cut, by cc->loss_est. */
static bool loss_window(struct sdr_cc *cc, uint64_t now, uint64_t seen)
{
	double u, k, p;

	if (!cc->lw_seen && !cc->iv_lost)
		return false;
	if (!cc->lw_seen)
		cc->lw_start = cc->iv_start;
	cc->lw_seen += seen;
	cc->lw_lost += cc->iv_lost;
	cc->lw_units += cc->iv_lost_units;
	k = cc->lw_units ? (double)cc->lw_lost / (double)cc->lw_units : 1;
	if ((double)cc->lw_seen < cc->p.loss_min_units * k &&
	    (double)(now - cc->lw_start) < cc->p.loss_win_rtts * (double)cc->base_rtt)
		return false;
	u = (double)cc->lw_lost / (double)cc->lw_seen;
	p = k > 1 ? 1 - pow(1 - (u < 1 ? u : 1), 1 / k) : u;
	cc->loss_windows++;
	cc->loss_est = p;
	cc->lw_seen = cc->lw_lost = cc->lw_units = 0;
	return p > cc->p.loss_frac;
}

/* A sample taken at @p at of what was sent @p rtt before: sent after the
 * last cut (what was sent before it tells of the queue that cut answered). */
static bool sent_after_cut(const struct sdr_cc *cc, uint64_t at, uint64_t rtt)
{
	return at - rtt >= cc->cut_at;
}

/* The RTT that judges a delay cut where ECN does not lead (delay
 * is the only signal there): the interval's smallest RTT sample, or a
 * smaller one taken in the q_span_rtts base RTTs before it (and sent after
 * the last cut, as the interval's own). A queue shows in every sample while
 * it lasts, a host's scheduling noise in one here and there. With an ACK
 * between units (--cc-ack-pkts) an interval closes at the first delivery
 * after a base RTT and holds one sample or none, and one descheduled sample
 * was a cut: one QP alone under its ceiling on the veth rig cut on delay
 * 12-32 times in 12 s, 42-45 times with both vCPUs loaded (at 82-91 % of the
 * fixed pacer's goodput; 0-3 and 2-4 times with the span). Two base RTTs
 * reach the sample before at the unit rates there (one unit's ACK every 1-2
 * base RTTs). A queue that forms is cut once it outlasts the span; where
 * ECN leads, delay is the back-up above its own target
 * (sdr_cc_delay_target()) and the interval's own minimum judges, at once;
 * and so in the start-up, whose rate grows by half an interval, and whose
 * queue grew into a full buffer while the span waited (the veth rig, 2 QPs
 * through a 100 Mbit/s bottleneck without ECN: 1920-2772 drops in its
 * first 3 s, none without the span). */
static uint64_t span_min_rtt(const struct sdr_cc *cc, uint64_t now)
{
	uint64_t m = cc->iv_min_rtt;
	double from = (double)cc->iv_start - cc->p.q_span_rtts * (double)cc->base_rtt;

	for (unsigned i = 0; i < SDR_CC_RTT_KEEP; i++) {
		uint64_t at = cc->rs_at[i], rtt = cc->rs_rtt[i];

		if (rtt && rtt < m && rtt <= at && at <= now && (double)at >= from &&
		    sent_after_cut(cc, at, rtt))
			m = rtt;
	}
	return m;
}

/* The fraction of the rate a cut gives up to drain a queue of @p q ns
 * above @p qt over drain_rtts round trips (qx, docs/congestion.md "The
 * decision", 1) */
static double drain(const struct sdr_cc *cc, double q, double qt)
{
	return q > qt ? (q - qt) / (cc->p.drain_rtts * ((double)cc->base_rtt + q)) : 0;
}

static void decide(struct sdr_cc *cc, uint64_t now)
{
	double rate0 = cc->rate;
	uint64_t len = now - cc->iv_start, target = sdr_cc_target(cc);
	uint64_t dt = sdr_cc_delay_target(cc, now); /* = target unless ECN leads */
	uint64_t seen = cc->iv_acked + cc->iv_lost;
	double q = 0, frac = cc->iv_acked ? (double)cc->iv_ce / (double)cc->iv_acked : 0;
	enum sdr_cc_event ev;

	if (cc->iv_min_rtt > cc->base_rtt)
		q = (double)(cc->iv_min_rtt - cc->base_rtt);
	cc->last_q_ns = q;
	/* The round trips the interval spans: one, unless ACKs come further
	 * apart than a base RTT - an ACK per unit at a low rate, where a 64 KiB
	 * unit at 1 Mbit/s takes half a second. DCTCP reacts per window of
	 * data: alpha's gain, one cut per marked round trip and one additive
	 * step per round trip, and so does the decision, per round trip the
	 * interval spans (at most span_max). Else a QP at its floor beside a
	 * flow that holds the queue at the marking threshold finds a mark in
	 * nearly every interval of many round trips, cuts by alpha/2 each time
	 * with alpha decaying one step a second, and stays at the floor (seen
	 * on the veth rig: 89.6 and 0.0 Mbit/s). */
	double n = cc->base_rtt ? floor((double)len / (double)cc->base_rtt) : 1;

	if (n < 1)
		n = 1;
	if (cc->p.span_max >= 1 && n > cc->p.span_max)
		n = cc->p.span_max;
	double g = n > 1 ? 1 - pow(1 - cc->p.ecn_g, n) : cc->p.ecn_g;
	double ai = cc->p.ai_frac * (double)cc->ceiling; /* (an additive step) */

	if (cc->p.ai_ref_k > 0) {
		double ref = cc->rate > cc->peak ? cc->rate : cc->peak;
		double eff = sqrt((double)cc->ceiling * cc->p.ai_ref_k * ref);

		if (eff < (double)cc->ceiling)
			ai = cc->p.ai_frac * eff;
	}

	if (ai < 1e6)
		ai = 1e6;
	cc->alpha = (1 - g) * cc->alpha + g * frac;
	/* (with alpha's gain per interval, or per comp_mark_rtts base RTTs of
	 * time where an interval spans more: at a low rate an interval lasts
	 * many round trips, and beside BBR a flow at its floor made 17
	 * decisions in 14 s) */
	double mg = cc->base_rtt ? (double)len / ((double)cc->base_rtt * cc->p.comp_mark_rtts) : 0;

	mg = mg < cc->p.ecn_g ? cc->p.ecn_g : mg > 1 ? 1 : mg;
	cc->mark += mg * (frac - cc->mark);
	cc->intervals++;
	/* A cut goes to what the flow delivered in the interval (its share of
	 * a busy bottleneck: the rate above it only made the queue), less
	 * what drains the queue above the target over drain_rtts round
	 * trips; without a delivery measure, the same fraction of the rate.
	 * What it delivered is its share only where it sent all along, this
	 * interval and the one before (whose sends this one's ACKs are): a
	 * flow that paused - a pipeline between its micro-batches, a burst
	 * after an idle period - delivered less than its share, and its rate
	 * fell to half of it at every queue its bursts met (sdr-pipe,
	 * host/pipe/compete.sh: 55 % of the link where the fixed rate had
	 * 70 %). */
	/* (with CE marks the queue is real: drained above T; a cut on delay
	 * alone drains above the delay target in force) */
	/* (with noise_probe_k, where ECN leads and the RTT samples' noise J
	 * is above T/4, q above T is the host's lateness as much as a queue:
	 * a marked interval is judged as a queue, and drained, above
	 * noise_probe_k x J, as calm is judged below. Judged above T, every
	 * mark was a cut to the delivery less the drain of that noise and
	 * cut_extra: on the veth rig at 1 Gbit/s, where the workers of a
	 * 2-vCPU host run late by up to 10-12 ms, four flows that had met
	 * lost half the link with hardly a mark; docs/congestion.md "At 1
	 * Gbit/s on the veth and bridge rigs") */
	double ce_q = (double)target;

	if (cc->p.noise_probe_k > 0 && sdr_cc_ecn_leads(cc, now) && cc->jit > ce_q / 4 &&
	    cc->p.noise_probe_k * cc->jit > ce_q)
		ce_q = cc->p.noise_probe_k * cc->jit;
	double qx = drain(cc, q, cc->iv_ce > 0 ? ce_q : (double)dt);
	bool busy = len &&
		    (double)cc->iv_sent_bytes * 8e9 >= cc->p.dlv_busy * cc->rate * (double)len;
	double dlv = busy && cc->busy_prev ? (double)cc->iv_bytes * 8e9 / (double)len : 0;

	cc->busy_prev = busy;
	/* After a probe (below) the queue is the probe's overshoot: the cut
	 * goes to the share the interval delivered less the drain, without
	 * cut_extra, and is not taken again while the rate is already below
	 * that: the queue drains as that cut planned. Cut by cut from the
	 * rate instead, the marks of the draining queue compounded two or
	 * three cuts on one overshoot (the simulation: RTT 20-30 after a
	 * restored capacity at 67-72 % of it). */
	bool ep;

	/* (the episode lasts until its queue is gone, or 2 x drain_rtts base
	 * RTTs from its first congested decision: beside flows that keep the
	 * queue at the marking threshold it would never be gone, and a flow
	 * whose cuts skip cut_extra keeps a larger share) */
	if (cc->probe_ep && cc->ep_at &&
	    now - cc->ep_at > 2 * cc->p.drain_rtts * (double)cc->base_rtt)
		cc->probe_ep = false;
	ep = cc->probe_ep;
	double to = (dlv > 0 && (ep || dlv < cc->rate) ? dlv : cc->rate) *
		    (1 - qx - (ep ? 0 : cc->p.cut_extra));

	/* the TCP-competitive mode ends when an interval without CE finds
	 * the queue below the delay target in force (T, or above the host's
	 * noise): the flow that kept it full is gone or answers; and at the
	 * first loss after comp_max_ns in it, the decision is the ordinary
	 * one again: flows that all answer ECN but entered the mode (a
	 * start-up on a loaded host) keep a full buffer between them, which
	 * no interval finds below the target, and its overflow reaches all of
	 * them at once - they cut together and drain it, and the run that
	 * would enter again starts over as the queue shrinks. Beside TCP that
	 * does not answer, the queue stays, and comp_reenter cuts enter
	 * again, undone. */
	bool drained = cc->iv_ce == 0 && q < (double)dt;
	bool expired = !drained && cc->iv_lost > 0 && cc->p.comp_max_ns &&
		       now - cc->comp_at >= cc->p.comp_max_ns;

	if (cc->comp && (drained || expired)) {
		cc->comp = false;
		cc->cong_run = 0;
		cc->comp_left = now;
		cc->comp_expired += expired;
	}
	/* a queue above the delay target, and one that lasts ("Signals") */
	bool over = q > (double)dt;
	bool lasting = over && (cc->startup || sdr_cc_ecn_leads(cc, now) ||
				(double)span_min_rtt(cc, now) > (double)cc->base_rtt + (double)dt);

	if (!cc->comp && cc->iv_ce == 0 && over && !lasting)
		cc->delay_spared++;
	if (cc->comp) {
		ev = decide_comp(cc, len);
	} else if (cc->iv_ce > 0 || lasting) {
		/* (a probe's first congested decision: the rate that made the
		 * queue is the peak, cut or not) */
		if (ep && !cc->ep_at) {
			cc->ep_at = now;
			if (rate0 > cc->peak)
				cc->peak = rate0;
		}
		double m = cc->iv_ce < n ? cc->iv_ce : n;
		bool ce_alone = cc->iv_ce > 0 && q <= ce_q;

		/* CE alone: DCQCN's alpha/2, once per marked round trip (at
		 * most one per CE), and a step for each round trip without a
		 * mark, as DCTCP's window grows in those */
		if (ce_alone)
			to = (ep && dlv > 0 ? dlv : cc->rate) * pow(1 - cc->alpha / 2, m) +
			     ai * (n - m);
		if (to < cc->rate * (1 - cc->p.max_mdf))
			to = cc->rate * (1 - cc->p.max_mdf);
		/* A deep queue that shrinks, the rate already at or below the
		 * delivered share less the drain: the cuts so far drain it, and
		 * its frames were marked as they arrived, so its marks come back
		 * for as long as it takes to drain (a 4 MB buffer at 50 Mbit/s:
		 * 640 ms). Cut on each of them, two flows whose capacity halved
		 * fell to 3-10 Mbit/s (the veth rig) */
		bool deep = cc->p.deep_hold_q > 0 && dlv > 0 &&
			    q > cc->p.deep_hold_q * (double)cc->base_rtt &&
			    q + (double)target < cc->prev_q && cc->rate <= dlv * (1 - qx);

		if ((ep && dlv > 0 && to >= cc->rate) || deep) {
			ev = SDR_CC_HOLD; /* (draining: a probe's overshoot, a deep queue) */
			cc->holds_drain++;
			cc->calm = 0;
		} else if (ce_alone && to >= cc->rate && n > m) {
			/* (the unmarked round trips outweigh; a mark still
			 * ends the start-up) */
			cc->rate = to;
			cc->startup = false;
			ev = SDR_CC_INCREASE;
			cc->increases++;
		} else {
			if (to < cc->rate)
				cc->rate = to;
			if (cc->iv_ce > 0) {
				ev = SDR_CC_DEC_ECN;
				cc->dec_ecn++;
			} else {
				ev = SDR_CC_DEC_DELAY;
				cc->dec_delay++;
			}
		}
	} else if (cc->iv_lost > 0 && loss_q(cc, q) > (double)dt) {
		/* loss under queueing: congestion, one reaction per interval
		 * (one round trip), as TCP's one reduction per window of data
		 * (RFC 5681 3.1, RFC 6675 5), by loss_md */
		cc->rate *= mdf(cc, 1 - cc->p.loss_md);
		cc->lw_seen = cc->lw_lost = cc->lw_units = 0; /* (answered) */
		ev = SDR_CC_DEC_LOSS;
		cc->dec_loss++;
	} else if (loss_window(cc, now, seen)) {
		/* more than loss_frac of the packets lost over the window
		 * whatever the delay says (a policer, a shallow buffer): by
		 * that fraction (what did not get through), at most loss_md */
		double lf = cc->loss_est;

		cc->rate *= mdf(cc, 1 - (lf > cc->p.loss_md ? cc->p.loss_md : lf));
		ev = SDR_CC_DEC_LOSS;
		cc->dec_loss++;
	} else if (app_limited(cc, len)) {
		ev = SDR_CC_HOLD; /* it did not use what it had */
		cc->holds_app++;
	} else if (cc->startup) {
		cc->rate *= cc->p.startup_gain;
		ev = SDR_CC_STARTUP;
		cc->increases++;
	} else {
		/* accelerate while the queue is empty (capacity unused), back
		 * to one step once it forms */
		unsigned k;
		double step;

		/* (by T, not the delay target in force: an increase in
		 * proportion to the rate would keep the ratio between flows)
		 * With noise_probe_k (0: off), where ECN leads and the RTT
		 * samples' noise J is above T/4, no interval's q can show an
		 * empty queue: the marks are the queue signal there, and an
		 * interval without one is calm; the probe's tests wait above
		 * noise_probe_k x J. Without it, a host's noise of
		 * milliseconds keeps every flow to one additive step a round
		 * trip and the probe from starting (the simulation with the
		 * ACKs up to 5 ms late: a restored capacity 51 % used in RTT
		 * 10..20, 93.6 % with it); with it, 4 QPs on the veth rig
		 * shared less evenly (docs/congestion.md). */
		bool ecn = cc->p.noise_probe_k > 0 && sdr_cc_ecn_leads(cc, now);
		double calm_q = (double)target / 4, empty_q = calm_q;

		if (ecn && cc->p.noise_probe_k * cc->jit > empty_q)
			empty_q = cc->p.noise_probe_k * cc->jit;
		cc->calm = q < calm_q || (ecn && cc->jit > calm_q) ? cc->calm + 1 : 1;
		cc->quiet = q < empty_q ? cc->quiet + 1 : 1;
		k = cc->calm < cc->p.ai_accel ? cc->calm : cc->p.ai_accel;
		/* the acceleration is bounded so that N flows together
		 * overshoot by a fraction of what they send, not by N
		 * accelerated steps: by accel_max_frac of sqrt(rate x
		 * ceiling), at most accel_rel_max of the rate. A bound in
		 * proportion to the rate made the increase multiplicative
		 * and kept whatever ratio the flows left start-up with (the
		 * simulation with a ceiling of 3x the link: Jain 0.78-0.89
		 * for 2 and 4 flows); with the square root a flow at a quarter
		 * of another's rate grows by twice its fraction, and N flows
		 * of C/N overshoot by about accel_max_frac x sqrt(N x
		 * ceiling / C) of the link */
		step = ai * k;
		if (step > ai) {
			double cap = cc->p.accel_max_frac * sqrt(cc->rate * (double)cc->ceiling);

			if (cap > cc->p.accel_rel_max * cc->rate)
				cap = cc->p.accel_rel_max * cc->rate;
			if (step > cap)
				step = cap > ai ? cap : ai;
		}
		/* Probe: two intervals in a row without a queue (q below T/4,
		 * or the noise's bound above), the last RTT sample without one
		 * either, and the rate probe_margin above the peak (the
		 * rate before the last run of cuts): room nobody takes - the
		 * capacity back, a flow gone. The j-th such interval adds
		 * probe_first x 2^j of the rate, at most probe_max: every flow
		 * in proportion to its rate, so N flows overshoot together by
		 * the fraction one does. Short of the peak, a flow is
		 * regaining what its cut gave up, and the bound above holds. */
		bool empty = cc->quiet >= 2 &&
			     (double)cc->last_rtt < (double)cc->base_rtt + empty_q;
		bool above = cc->peak > 0 && cc->rate >= cc->peak * (1 + cc->p.probe_margin);

		if (cc->p.probe_max > 0 && empty && above) {
			double f = cc->p.probe_first * ldexp(1, cc->probe < 8 ? (int)cc->probe : 8);

			if (f > cc->p.probe_max)
				f = cc->p.probe_max;
			if (cc->rate * f > step)
				step = cc->rate * f;
			cc->probe++;
			cc->probes++;
			cc->probe_ep = true;
			cc->ep_at = 0;
		} else {
			cc->probe = 0;
			/* (the episode ends where the queue is gone) */
			if (empty && !above)
				cc->probe_ep = false;
		}
		cc->rate += step * n; /* (per round trip) */
		ev = SDR_CC_INCREASE;
		cc->increases++;
	}
	if (is_cut(ev)) {
		cc->startup = false;
		cc->calm = 0;
		cc->quiet = 0;
		/* (the peak: the rate before the first cut of a run, and of
		 * all the cuts of a probe's episode) */
		if ((!ep && !is_cut(cc->last)) || rate0 > cc->peak)
			cc->peak = rate0;
		cc->probe = 0;
		cc->cut_at = now;
		cc->cut_busy = cc->busy_prev;
		cc->st_first = 0;
	}
	comp_watch(cc, ev, q, target, rate0, now);
	/* (an interval with no RTT sample of its own - its deliveries came
	 * between the units' ACKs - measured no delay: its q of 0 would pull
	 * the noise estimate, and the delay target with it, to 0) */
	if (cc->iv_ce == 0 && cc->iv_min_rtt)
		cc->jit = (1 - cc->p.jit_g) * cc->jit + cc->p.jit_g * q;
	cc->prev_q = q;
	cc->last = ev;
	clamp(cc);
}

/* The interval's decision, when it is over and saw something. Losses
 * alone decide only when an ACK came since the last cut: in a stall (the
 * peer or the path silent, the sender's probes expiring one by one) the
 * first cut stands, and the next losses wait for an ACK to take part in
 * one decision, instead of a cut per probe. */
static void tick(struct sdr_cc *cc, uint64_t now)
{
	uint64_t iv = cc->base_rtt > cc->p.min_interval_ns ? cc->base_rtt : cc->p.min_interval_ns;

	if (now - cc->iv_start < iv || cc->iv_acked + cc->iv_lost == 0)
		return;
	if (cc->iv_acked == 0 && cc->ack_at <= cc->cut_at)
		return;
	decide(cc, now);
	cc->lost_events += cc->iv_lost;
	cc->iv_start = now;
	cc->iv_min_rtt = 0;
	cc->iv_acked = cc->iv_ce = cc->iv_lost = cc->iv_sent_bytes = cc->iv_bytes = 0;
	cc->iv_lost_units = 0;
	cc->iv_held = false;
	cc->iv_span = 0;
}

static void on_loss(struct sdr_cc *cc, uint64_t now, uint32_t n, uint32_t units, uint64_t sent)
{
	/* A packet sent before the last cut, or lost sooner than one base
	 * RTT after it left (it cannot have been missed yet: a timer or a
	 * NACK ahead of its delivery), is no news of the rate in force: the
	 * cut answered it (one reduction per window, RFC 6675's recovery
	 * point); nor is one found lost while no ACK came since the cut (a
	 * stall: its probes expire one by one, the cut answered the first) */
	if (sent < cc->cut_at || (cc->cut_at && cc->ack_at <= cc->cut_at) ||
	    (cc->base_rtt && now >= sent && now - sent < cc->base_rtt)) {
		cc->stale_lost += n;
		return;
	}
	cc->iv_lost += n;
	cc->iv_lost_units += units;
	tick(cc, now);
}

void sdr_cc_on_loss_sent(struct sdr_cc *cc, uint64_t now, uint32_t n, uint64_t sent)
{
	on_loss(cc, now, n, n, sent);
}

void sdr_cc_on_loss_unit(struct sdr_cc *cc, uint64_t now, uint32_t n, uint64_t sent)
{
	on_loss(cc, now, n, n ? 1 : 0, sent);
}

void sdr_cc_on_loss(struct sdr_cc *cc, uint64_t now, uint32_t n)
{
	cc->iv_lost += n;
	cc->iv_lost_units += n;
	tick(cc, now);
}

static void rtt_sample(struct sdr_cc *cc, uint64_t now, uint64_t rtt)
{
	base_sample(cc, now, rtt);
	cc->srtt = cc->srtt ? cc->srtt - cc->srtt / 8 + rtt / 8 : rtt;
	cc->last_rtt = rtt;
	/* (a sample of what was sent before the last cut is not the
	 * interval's: see delivered()) */
	if (sent_after_cut(cc, now, rtt) && (cc->iv_min_rtt == 0 || rtt < cc->iv_min_rtt))
		cc->iv_min_rtt = rtt;
	cc->rs_at[cc->rs_next] = now;
	cc->rs_rtt[cc->rs_next] = rtt;
	cc->rs_next = (cc->rs_next + 1) % SDR_CC_RTT_KEEP;
}

/* An ACK since the last cut of what was sent before it (@p ce marks, @p
 * bytes): the bottleneck's share for this flow, measured while the cut
 * takes effect. Over a base RTT, with marks, below dlv_fall of the cut's
 * rate: the capacity fell (or flows joined) and the cut went to a share
 * that no longer holds; waiting for the cut's own ACKs (a round trip and
 * the queue's delay) let the queue grow on - two flows whose 1 Gbit/s
 * link halved overflowed its 4 MB buffer on the ring rig (510 frames lost,
 * 10 % of a 0.25 s window). Cut again to that delivery less the drain. */
static void fall(struct sdr_cc *cc, uint64_t now, uint32_t ce, uint32_t bytes)
{
	if (cc->p.dlv_fall <= 0 || cc->comp || !cc->cut_busy || !cc->cut_at || !cc->base_rtt)
		return;
	if (!cc->st_first) {
		cc->st_first = now; /* (its bytes arrived before: k ACKs, k - 1 gaps) */
		cc->st_bytes = 0;
		cc->st_ce = ce;
		return;
	}
	cc->st_bytes += bytes;
	cc->st_ce += ce;
	if (now - cc->st_first < cc->base_rtt)
		return;

	double d = (double)cc->st_bytes * 8e9 / (double)(now - cc->st_first);
	bool fell = cc->st_ce > 0 && d > 0 && d < cc->p.dlv_fall * cc->rate; /* (0: unmeasured) */

	cc->st_first = now; /* (the next base RTT of them, if they go on) */
	cc->st_bytes = 0;
	cc->st_ce = 0;
	if (!fell)
		return;

	double q = cc->last_rtt > cc->base_rtt ? (double)(cc->last_rtt - cc->base_rtt) : 0;
	double to = d * (1 - drain(cc, q, (double)sdr_cc_target(cc)) - cc->p.cut_extra);

	if (to < cc->rate * (1 - cc->p.max_mdf))
		to = cc->rate * (1 - cc->p.max_mdf);
	if (to >= cc->rate)
		return;
	cc->rate = to;
	clamp(cc);
	cc->dec_ecn++;
	cc->dlv_cuts++;
	cc->last = SDR_CC_DEC_ECN;
	cc->calm = cc->quiet = 0;
	cc->probe = 0;
	cc->cut_at = now;
}

/* @p acked packets (@p bytes, @p ce of them marked) delivered, sent about
 * @p age before @p now (0: unknown, taken as fresh) */
static void delivered(struct sdr_cc *cc, uint64_t now, uint64_t age, uint32_t acked, uint32_t ce,
		      uint32_t bytes)
{
	if (ce > acked)
		ce = acked; /* (a peer's count is not trusted beyond what it acks) */
	cc->acked += acked;
	cc->ce += ce;
	cc->ack_at = now;
	if (ce) { /* the path marks (stale ACKs too: ECN leads from the first) */
		cc->ce_seen = true;
		cc->ce_at = now;
	}
	/* What was sent before the last cut tells of the queue that cut
	 * answered: it does not count again (one reaction per window of data,
	 * as TCP's CWR state) */
	if (age && now - age < cc->cut_at) {
		cc->stale_acks += acked;
		fall(cc, now, ce, bytes);
	} else {
		/* (an interval measures fresh ACKs only; the bytes of the one
		 * that opens it left before it opened: k ACKs span k - 1 gaps,
		 * and its delivery rate counts the k - 1 after the first) */
		if (cc->iv_acked + cc->iv_lost == 0)
			cc->iv_start = now;
		else
			cc->iv_bytes += bytes;
		cc->iv_acked += acked;
		cc->iv_ce += ce;
	}
	tick(cc, now);
}

void sdr_cc_on_rtt(struct sdr_cc *cc, uint64_t now, uint64_t rtt)
{
	if (rtt)
		rtt_sample(cc, now, rtt);
}

uint64_t sdr_cc_on_ack(struct sdr_cc *cc, uint64_t now, uint64_t rtt, uint32_t acked, uint32_t ce,
		       uint32_t bytes)
{
	sdr_cc_on_rtt(cc, now, rtt);
	delivered(cc, now, rtt, acked, ce, bytes);
	return sdr_cc_rate(cc);
}

uint64_t sdr_cc_on_delivered(struct sdr_cc *cc, uint64_t now, uint32_t acked, uint32_t ce,
			     uint32_t bytes)
{
	delivered(cc, now, cc->last_rtt, acked, ce, bytes);
	return sdr_cc_rate(cc);
}

const char *sdr_cc_event_name(enum sdr_cc_event e)
{
	static const char *const n[] = {"none",    "startup",   "increase", "hold",
					"ecn-cut", "delay-cut", "loss-cut"};

	return (unsigned)e < sizeof(n) / sizeof(n[0]) ? n[e] : "?";
}
