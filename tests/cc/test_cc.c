/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The congestion controller (common/sdr_cc.c) on a simulated clock: its
 * reactions one by one (delay, CE, loss, idle, ceilings, a longer route),
 * then closed loops of N paced flows through the link emulator's core
 * (common/link: one bottleneck FIFO with ECN marking and a capacity
 * schedule), where the figures the controller is held to are measured:
 * aggregate goodput, Jain's fairness index, bottleneck loss and queue,
 * re-convergence after the capacity halves and comes back. Exact
 * arithmetic, no wall clock: the same run gives the same numbers anywhere.
 */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdr_cc.h"
#include "sdr_link.h"
#include "sdr_test.h"

/* exact on every architecture: no fused multiply-add (as in sdr_cc.c) */
#if defined(__clang__)
#pragma clang fp contract(off)
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#define MS ((uint64_t)1000000)
#define US ((uint64_t)1000)
#define GBIT ((uint64_t)1000000000)

/* ---------------------------------------------------------- reactions -- */

/* Feed ACKs with RTT @p rtt (@p ce of every 100 packets marked, in packets
 * of 10), sending at the full rate, until the controller made @p n more
 * decisions (or ACKs of what was sent before a cut pass by: at most 100);
 * returns the time after. */
static uint64_t feed(struct sdr_cc *cc, uint64_t t, unsigned n, uint64_t rtt, unsigned ce)
{
	for (unsigned i = 0; i < n; i++) {
		uint64_t d0 = cc->intervals;
		unsigned k = 0;

		while (cc->intervals == d0 && k < 100) {
			uint64_t iv = cc->base_rtt > cc->p.min_interval_ns ? cc->base_rtt
									   : cc->p.min_interval_ns;

			sdr_cc_on_sent(cc, (uint32_t)(cc->rate * (double)iv / 80e9) + 1);
			t += iv / 10;
			sdr_cc_on_ack(cc, t, rtt, 10, k % 10 < ce / 10 ? 10 : 0, 0);
			k++;
		}
	}
	return t;
}

/* One interval of @p rtt samples in which the flow sent @p sent_frac and
 * had @p dlv_frac delivered of its rate x interval, @p ce of every 10
 * packets CE-marked. @return the time. */
static uint64_t sent_delivered_ce(struct sdr_cc *cc, uint64_t t, double sent_frac, double dlv_frac,
				  uint64_t rtt, unsigned ce)
{
	uint64_t d0 = cc->intervals, iv = cc->base_rtt;
	double b = cc->rate * (double)iv / 80e9; /* bytes at the rate per tenth */

	for (unsigned k = 0; k < 100 && cc->intervals == d0; k++) {
		sdr_cc_on_sent(cc, (uint32_t)(b * sent_frac));
		t += iv / 10;
		sdr_cc_on_ack(cc, t, rtt, 10, ce, (uint32_t)(b * dlv_frac));
	}
	return t;
}

static uint64_t sent_delivered(struct sdr_cc *cc, uint64_t t, double sent_frac, double dlv_frac,
			       uint64_t rtt)
{
	return sent_delivered_ce(cc, t, sent_frac, dlv_frac, rtt, 0);
}

#define NEAR(a, b) (fabs((double)(a) - (double)(b)) <= 2 + 1e-9 * (double)(b))

/* A flow under a 3 Gbit/s ceiling that learned a base RTT of 25 ms at
 * @p t, out of start-up at 500 Mbit/s, 25 % above its peak (the rate
 * before its last run of cuts), no calm interval yet. @return the time. */
static uint64_t above_peak(struct sdr_cc *cc, const struct sdr_cc_params *p, uint64_t t)
{
	sdr_cc_init(cc, p, 3 * GBIT, t);
	t = feed(cc, t, 1, 25 * MS, 0);
	cc->rate = 500e6;
	cc->peak = 400e6;
	cc->startup = false;
	cc->calm = 0;
	return t;
}

/* A flow under a 3 Gbit/s ceiling at 500 Mbit/s, base RTT 25 ms, out of
 * start-up, busy an interval without a queue. @return the time. */
static uint64_t busy_flow(struct sdr_cc *cc, const struct sdr_cc_params *p, uint64_t t)
{
	sdr_cc_init(cc, p, 3 * GBIT, t);
	t = feed(cc, t, 1, 25 * MS, 0);
	cc->rate = 500e6;
	cc->startup = false;
	return sent_delivered(cc, t, 1, 1.0, 25 * MS);
}

/* busy_flow(), then an interval with a queue of 20 ms, every packet
 * marked, 80 % of its rate delivered (a cut). @return the time. */
static uint64_t deep_cut(struct sdr_cc *cc, const struct sdr_cc_params *p, uint64_t t)
{
	return sent_delivered_ce(cc, busy_flow(cc, p, t), 1, 0.8, 45 * MS, 10);
}

/* busy_flow(), then an interval with every packet marked and a 5 ms queue
 * (@p sent_frac of its rate sent): a cut. */
static uint64_t fall_cut(struct sdr_cc *cc, const struct sdr_cc_params *p, uint64_t t,
			 double sent_frac)
{
	return sent_delivered_ce(cc, busy_flow(cc, p, t), sent_frac, 1.0, 30 * MS, 10);
}

/* ACKs of what was sent before the last cut (30 ms old, the cut younger),
 * one a millisecond for @p ms, delivering @p bps with @p ce of their 10
 * packets marked (@p bps 0: no bytes, unmeasured) */
static uint64_t stale_acks(struct sdr_cc *cc, uint64_t t, double bps, unsigned ce, unsigned ms)
{
	for (unsigned k = 0; k < ms; k++) {
		t += MS;
		sdr_cc_on_ack(cc, t, 30 * MS, 10, ce, (uint32_t)(bps * 1e-3 / 8));
	}
	return t;
}

static void test_reactions(void)
{
	struct sdr_cc_params p;
	struct sdr_cc cc;
	uint64_t t = 0, r0, c = 10 * GBIT;
	double ai, f;

	sdr_cc_params_default(&p);
	ai = p.ai_frac * (double)c;

	/* start-up grows by startup_gain per interval, up to the ceiling */
	sdr_cc_init(&cc, &p, c, 0);
	CHECK(NEAR(sdr_cc_rate(&cc), (double)c * p.init_frac), "initial rate %" PRIu64,
	      sdr_cc_rate(&cc));
	t = feed(&cc, t, 1, 25 * MS, 0); /* (the first interval learns the base RTT) */
	r0 = sdr_cc_rate(&cc);
	t = feed(&cc, t, 1, 25 * MS, 0);
	CHECK(cc.last == SDR_CC_STARTUP && NEAR(sdr_cc_rate(&cc), (double)r0 * p.startup_gain),
	      "start-up: %" PRIu64 " after %" PRIu64 " (%s)", sdr_cc_rate(&cc), r0,
	      sdr_cc_event_name(cc.last));
	t = feed(&cc, t, 40, 25 * MS, 0);
	CHECK(sdr_cc_rate(&cc) == c, "start-up stops at the ceiling: %" PRIu64, sdr_cc_rate(&cc));
	CHECK(cc.base_rtt == 25 * MS, "base RTT %" PRIu64, cc.base_rtt);

	/* queueing delay above the target: a cut that drains the excess over
	 * drain_rtts round trips (no delivery measure fed: of the rate) */
	r0 = sdr_cc_rate(&cc);
	t = feed(&cc, t, 1, 35 * MS, 0); /* q = 10 ms */
	f = 1 - (10e6 - (double)sdr_cc_target(&cc)) / (p.drain_rtts * 35e6) - p.cut_extra;
	CHECK(cc.last == SDR_CC_DEC_DELAY && NEAR(sdr_cc_rate(&cc), (double)r0 * f),
	      "delay cut: %" PRIu64 ", expected %.0f (%s)", sdr_cc_rate(&cc), (double)r0 * f,
	      sdr_cc_event_name(cc.last));
	CHECK(!cc.startup, "start-up over after a cut");
	/* ACKs of what was sent before the cut do not count again */
	r0 = sdr_cc_rate(&cc);
	{
		uint64_t d0 = cc.dec_delay;

		for (unsigned k = 0; k < 10; k++)
			sdr_cc_on_ack(&cc, t += 3 * MS, 35 * MS, 10, 0, 0);
		CHECK(cc.dec_delay == d0 && sdr_cc_rate(&cc) == r0 && cc.stale_acks >= 90,
		      "one cut per window of data: %" PRIu64 " cuts, %" PRIu64 " stale",
		      cc.dec_delay - d0, cc.stale_acks);
	}
	/* a delivery measure (70 % of the rate delivered): a flow that sent all
	 * along, this interval and the one before, is cut to what it
	 * delivered; one that paused (30 % of its rate sent: a pipeline
	 * between micro-batches) delivered less than its share and is cut
	 * from its rate */
	for (int paused = 0; paused < 2; paused++) {
		double sf = paused ? 0.3 : 1.0, want, dt;

		t += 50 * MS;
		sdr_cc_on_ack(&cc, t, 25 * MS, 1, 0, 0);      /* (the pause before) */
		t = sent_delivered(&cc, t, sf, 0.7, 25 * MS); /* (q = 0: the one before) */
		r0 = sdr_cc_rate(&cc);
		dt = (double)sdr_cc_delay_target(&cc, t);     /* (above T after a delay cut) */
		t = sent_delivered(&cc, t, sf, 0.7, 35 * MS); /* q = 10 ms */
		f = 1 - (10e6 - dt) / (p.drain_rtts * 35e6) - p.cut_extra;
		want = (double)r0 * f;
		/* (busy: the interval's 11 ACKs span 10 tenths of it, and the
		 * first one's bytes left before it opened: 70 % delivered) */
		if (paused)
			CHECK(cc.last == SDR_CC_DEC_DELAY &&
				      fabs((double)sdr_cc_rate(&cc) - want) < 1e-6 * want,
			      "paused: cut of the rate to %" PRIu64 ", expected %.0f (%s)",
			      sdr_cc_rate(&cc), want, sdr_cc_event_name(cc.last));
		else
			CHECK(cc.last == SDR_CC_DEC_DELAY &&
				      fabs((double)sdr_cc_rate(&cc) - 0.7 * want) < 1e-4 * want,
			      "busy: cut to the delivery, %" PRIu64 " of %.0f (%s)",
			      sdr_cc_rate(&cc), want, sdr_cc_event_name(cc.last));
	}

	/* calm: additive increase, accelerating while the queue is empty */
	sdr_cc_init(&cc, &p, c, t);
	t = feed(&cc, t, 1, 25 * MS, 0);
	t = feed(&cc, t, 1, 27 * MS, 0); /* a cut ends start-up */
	t = feed(&cc, t, 2, 27 * MS, 0); /* (its stale window) */
	r0 = sdr_cc_rate(&cc);
	t = feed(&cc, t, 1, 25 * MS, 0);
	CHECK(cc.last == SDR_CC_INCREASE && NEAR(sdr_cc_rate(&cc), (double)r0 + ai),
	      "AI: %" PRIu64 " after %" PRIu64 " (%s)", sdr_cc_rate(&cc), r0,
	      sdr_cc_event_name(cc.last));
	r0 = sdr_cc_rate(&cc);
	t = feed(&cc, t, 1, 25 * MS, 0);
	{
		/* 2 x AI, but at most accel_max_frac of sqrt(rate x ceiling) and
		 * accel_rel_max of the rate (never below AI) */
		double st = 2 * ai, cap = p.accel_max_frac * sqrt((double)r0 * (double)c);

		if (cap > p.accel_rel_max * (double)r0)
			cap = p.accel_rel_max * (double)r0;
		if (st > cap)
			st = cap > ai ? cap : ai;
		CHECK(NEAR(sdr_cc_rate(&cc), (double)r0 + st),
		      "AI accelerates: +%" PRIu64 " (expected %.0f)", sdr_cc_rate(&cc) - r0, st);
	}
	t = feed(&cc, t, 1, 25 * MS, 0);
	r0 = sdr_cc_rate(&cc);
	t = feed(&cc, t, 1, 25 * MS + sdr_cc_target(&cc) / 2, 0); /* a queue forms */
	CHECK(NEAR(sdr_cc_rate(&cc), (double)r0 + ai), "one step once a queue forms: %" PRIu64,
	      sdr_cc_rate(&cc) - r0);

	/* ai_ref_k: the step is ai_frac of sqrt(ceiling x ai_ref_k x
	 * max(rate, peak)) where that is below the ceiling - here at 32 and
	 * about 234 Mbit/s under 10 Gbit/s, 8.7 Mbit/s instead of 10 - and
	 * one of the ceiling where it is not (ai_ref_k 1024) */
	for (unsigned k = 32; k <= 1024; k *= 32) {
		struct sdr_cc_params pk = p;
		double ref, st;

		pk.ai_ref_k = k;
		sdr_cc_init(&cc, &pk, c, t);
		t = feed(&cc, t, 1, 25 * MS, 0);
		t = feed(&cc, t, 1, 27 * MS, 0); /* a cut ends start-up */
		t = feed(&cc, t, 2, 27 * MS, 0);
		r0 = sdr_cc_rate(&cc);
		ref = (double)r0 > cc.peak ? (double)r0 : cc.peak;
		st = sqrt((double)c * k * ref);
		st = p.ai_frac * (st < (double)c ? st : (double)c);
		t = feed(&cc, t, 1, 25 * MS, 0);
		CHECK(cc.last == SDR_CC_INCREASE && NEAR(sdr_cc_rate(&cc), (double)r0 + st),
		      "ai_ref_k %u: +%" PRIu64 " from %" PRIu64 " (expected %.0f, %s)", k,
		      sdr_cc_rate(&cc) - r0, r0, st, sdr_cc_event_name(cc.last));
		CHECK(k < 1024 ? st < 0.9 * ai : st == ai, "ai_ref_k %u: step %.0f of %.0f", k, st,
		      ai);
	}

	/* the accelerated increase of two flows on one calm link (ceiling 3
	 * Gbit/s, 600 and 150 Mbit/s): the smaller grows by a larger fraction
	 * of its rate, twice the other's by the square root (not the same
	 * fraction: that keeps their ratio), and both by more than one
	 * additive step per interval */
	{
		struct sdr_cc big, small;

		sdr_cc_init(&big, &p, 3 * GBIT, t);
		sdr_cc_init(&small, &p, 3 * GBIT, t);
		big.rate = 600e6;
		small.rate = 150e6;
		big.startup = small.startup = false;
		feed(&big, t, 20, 25 * MS, 0);
		feed(&small, t, 20, 25 * MS, 0);
		double gb = big.rate / 600e6 - 1, gs = small.rate / 150e6 - 1;

		CHECK(gs >= 1.5 * gb && big.rate - 600e6 > 20 * 3e6 && big.increases >= 19 &&
			      small.increases == big.increases,
		      "calm: 150 Mbit/s grew by %.1f %%, 600 Mbit/s by %.1f %% (%" PRIu64
		      " and %" PRIu64 " increases)",
		      100 * gs, 100 * gb, small.increases, big.increases);
	}

	/* the probe: calm above the peak (the rate before the last run of
	 * cuts) by probe_margin, the increase is probe_first of the rate, then
	 * twice that, at most probe_max; a cut after it goes to the delivered
	 * share less the drain (no cut_extra), and while the rate is below
	 * that the next congested interval holds instead of cutting again */
	{
		struct sdr_cc pr;
		uint64_t tp = t;
		double r[5], r0p, f0;

		tp = above_peak(&pr, &p, tp);
		for (unsigned k = 0; k < 5; k++) {
			r[k] = pr.rate;
			tp = feed(&pr, tp, 1, 25 * MS, 0);
		}
		/* (calm 1: the bounded step; from calm 2 on: 6 %, 10 %, 10 %) */
		CHECK(r[1] < r[0] * 1.05 && NEAR(r[2], r[1] * (1 + p.probe_first)) &&
			      NEAR(r[3], r[2] * (1 + p.probe_max)) &&
			      NEAR(pr.rate, r[4] * (1 + p.probe_max)) && pr.probes == 4 &&
			      pr.probe_ep,
		      "probe: %.0f -> %.0f -> %.0f -> %.0f -> %.0f Mbit/s, %" PRIu64 " probes",
		      r[0] / 1e6, r[1] / 1e6, r[2] / 1e6, r[3] / 1e6, pr.rate / 1e6, pr.probes);
		/* the overshoot: a queue of 20 ms, every packet marked, 80 % of
		 * the rate delivered (sent all along) */
		r0p = pr.rate;
		tp = sent_delivered_ce(&pr, tp, 1, 0.8, 45 * MS, 10);
		f0 = pr.rate / r0p;
		CHECK(pr.last == SDR_CC_DEC_ECN && f0 < 0.8 && f0 > 0.6 && pr.peak >= r0p,
		      "a probe's overshoot: cut to %.2f of the rate (%s), peak %.0f of %.0f Mbit/s",
		      f0, sdr_cc_event_name(pr.last), pr.peak / 1e6, r0p / 1e6);
		r0p = pr.rate;
		uint64_t hd = pr.holds_drain, ha = pr.holds_app;

		tp = sent_delivered_ce(&pr, tp, 1, 1.1, 40 * MS, 10);
		CHECK(pr.last == SDR_CC_HOLD && pr.rate == r0p && pr.holds_drain == hd + 1 &&
			      pr.holds_app == ha,
		      "the queue draining as the cut planned: %s, %.0f of %.0f Mbit/s, "
		      "holds draining +%" PRIu64 " app-limited +%" PRIu64,
		      sdr_cc_event_name(pr.last), pr.rate / 1e6, r0p / 1e6, pr.holds_drain - hd,
		      pr.holds_app - ha);
	}

	/* the same flow with RTT samples 2 ms above the base, all of them,
	 * and its noise estimate J at 2 ms (a host's scheduling noise): with
	 * noise_probe_k, where ECN leads, it is calm and probes as above (the
	 * marks are the queue signal, the probe's tests wait above
	 * noise_probe_k x J); where the path never marked, delay is the only
	 * signal, and the same samples are a queue it may not probe into: one
	 * additive step per interval; and so without noise_probe_k (the
	 * default) */
	for (unsigned c = 0; c < 3; c++) {
		struct sdr_cc_params pn = p;
		struct sdr_cc pr;
		uint64_t tp = t;
		double r[6];
		bool ecn = c != 0;

		pn.noise_probe_k = c < 2 ? 2 : 0;
		tp = above_peak(&pr, &pn, tp);
		pr.jit = 2e6;
		pr.ce_seen = ecn;
		pr.ce_at = tp;
		for (unsigned k = 0; k < 5; k++) {
			r[k] = pr.rate;
			tp = feed(&pr, tp, 1, 27 * MS, 0);
		}
		r[5] = pr.rate;
		if (c == 1)
			CHECK(NEAR(r[2], r[1] * (1 + p.probe_first)) &&
				      NEAR(r[3], r[2] * (1 + p.probe_max)) && pr.probes == 4,
			      "noise of 2 ms, ECN leading: %.0f -> %.0f -> %.0f -> %.0f Mbit/s, "
			      "%" PRIu64 " probes",
			      r[0] / 1e6, r[1] / 1e6, r[2] / 1e6, r[3] / 1e6, pr.probes);
		else
			CHECK(pr.probes == 0 && NEAR(r[5], r[0] + 5 * p.ai_frac * 3e9),
			      "noise of 2 ms, %s: %.0f -> %.0f Mbit/s (5 steps of %.0f), "
			      "%" PRIu64 " probes",
			      c ? "noise_probe_k 0" : "delay alone", r[0] / 1e6, r[5] / 1e6,
			      p.ai_frac * 3e3, pr.probes);
	}

	/* a marked interval whose samples are 2 ms above the base, J at 2 ms:
	 * with noise_probe_k, where ECN leads, q below noise_probe_k x J is
	 * the host's lateness, and the mark is DCQCN's cut by alpha / 2; else
	 * q above T is a queue, and the cut goes to the delivery less the
	 * drain and cut_extra */
	for (unsigned c = 0; c < 2; c++) {
		struct sdr_cc_params pn = p;
		struct sdr_cc pr;
		uint64_t tp = t;
		double r1;

		pn.noise_probe_k = c == 0 ? 2 : 0;
		sdr_cc_init(&pr, &pn, 3 * GBIT, tp);
		tp = feed(&pr, tp, 12, 25 * MS, 0);
		tp = feed(&pr, tp, 1, 25 * MS, 10); /* the start-up's end */
		tp = feed(&pr, tp, 8, 25 * MS, 0);
		pr.jit = 2e6;
		pr.alpha = 0.1;
		r1 = pr.rate;
		tp = feed(&pr, tp, 1, 27 * MS, 10); /* a tenth of the ACKs marked */
		if (c == 0)
			CHECK(sdr_cc_ecn_leads(&pr, tp) && pr.alpha < 0.15 &&
				      NEAR(pr.rate, r1 * (1 - pr.alpha / 2)),
			      "noise of 2 ms, a mark, noise_probe_k 2: %.0f -> %.0f Mbit/s "
			      "(alpha/2 of %.3f)",
			      r1 / 1e6, pr.rate / 1e6, pr.alpha);
		else
			CHECK(pr.rate <= r1 * (1 - p.cut_extra),
			      "noise of 2 ms, a mark, noise_probe_k 0: %.0f -> %.0f Mbit/s "
			      "(the delivery less the drain and cut_extra)",
			      r1 / 1e6, pr.rate / 1e6);
	}

	/* CE without queueing delay: DCQCN's cut by alpha / 2 */
	r0 = sdr_cc_rate(&cc);
	{
		double a = (1 - p.ecn_g) * cc.alpha + p.ecn_g * 1.0;

		t = feed(&cc, t, 1, 25 * MS, 100); /* every packet marked */
		CHECK(cc.last == SDR_CC_DEC_ECN && NEAR(sdr_cc_rate(&cc), (double)r0 * (1 - a / 2)),
		      "CE cut: %" PRIu64 " of %" PRIu64 " (alpha %.3f)", sdr_cc_rate(&cc), r0, a);
	}
	t = feed(&cc, t, 2, 25 * MS, 0);

	/* loss without queueing is not congestion; under queueing it is */
	r0 = sdr_cc_rate(&cc);
	sdr_cc_on_loss(&cc, t, 5);
	t = feed(&cc, t, 1, 25 * MS, 0);
	CHECK(cc.last == SDR_CC_INCREASE && sdr_cc_rate(&cc) > r0, "random loss ignored (%s)",
	      sdr_cc_event_name(cc.last));
	r0 = sdr_cc_rate(&cc);
	sdr_cc_on_loss(&cc, t, 5);
	/* T/2 < q < T, T the delay target in force (ECN leads: it saw CE):
	 * a queue below the target is no congestion, nor is loss beside it
	 * (a host's noise on the RTT samples is of that order) */
	CHECK(sdr_cc_ecn_leads(&cc, t) && sdr_cc_delay_target(&cc, t) > sdr_cc_target(&cc),
	      "ECN leads after a CE mark: delay target %" PRIu64 " > %" PRIu64,
	      sdr_cc_delay_target(&cc, t), sdr_cc_target(&cc));
	t = feed(&cc, t, 1, 25 * MS + sdr_cc_delay_target(&cc, t) * 3 / 4, 0);
	CHECK(cc.last != SDR_CC_DEC_LOSS && sdr_cc_rate(&cc) >= r0,
	      "loss below the delay target: %s %" PRIu64, sdr_cc_event_name(cc.last),
	      sdr_cc_rate(&cc));
	t = feed(&cc, t, 2, 25 * MS, 0);
	/* losses in an interval without an RTT sample (the timers of a full
	 * buffer expire before its ACKs come) are judged by the last
	 * sample's queue: above the target, congestion, by loss_md */
	sdr_cc_on_ack(&cc, t, 25 * MS + 2 * sdr_cc_delay_target(&cc, t), 1, 0, 0);
	t = feed(&cc, t, 1, 0, 0); /* (its ACKs carry no sample) */
	r0 = sdr_cc_rate(&cc);
	sdr_cc_on_loss(&cc, t, 5);
	t = feed(&cc, t, 1, 0, 0);
	CHECK(cc.last == SDR_CC_DEC_LOSS && NEAR(sdr_cc_rate(&cc), (double)r0 * (1 - p.loss_md)),
	      "loss under queueing: %s %" PRIu64 " of %" PRIu64, sdr_cc_event_name(cc.last),
	      sdr_cc_rate(&cc), r0);
	t = feed(&cc, t, 2, 25 * MS, 0);
	/* heavy loss is congestion whatever the delay says */
	r0 = sdr_cc_rate(&cc);
	sdr_cc_on_loss(&cc, t, 50);
	t = feed(&cc, t, 1, 25 * MS, 0);
	CHECK(cc.last == SDR_CC_DEC_LOSS, "heavy loss: %s", sdr_cc_event_name(cc.last));
	t = feed(&cc, t, 2, 25 * MS, 0);

	/* application-limited: no increase (an idle QP does not inflate) */
	r0 = sdr_cc_rate(&cc);
	uint64_t ha0 = cc.holds_app, hd0 = cc.holds_drain, i0 = cc.intervals;

	for (unsigned k = 0; k < 30; k++) {
		t += 3 * MS;
		sdr_cc_on_ack(&cc, t, 25 * MS, 1, 0, 0); /* sent nothing */
	}
	/* (every decision of the 90 ms held, and is counted as app-limited) */
	CHECK(sdr_cc_rate(&cc) == r0 && cc.last == SDR_CC_HOLD && cc.intervals - i0 >= 2 &&
		      cc.holds_app - ha0 == cc.intervals - i0 && cc.holds_drain == hd0,
	      "app-limited hold: %s, %" PRIu64 " of %" PRIu64 " decisions counted as app-limited",
	      sdr_cc_event_name(cc.last), cc.holds_app - ha0, cc.intervals - i0);

	/* at a rate where a frame takes longer than an interval (1 Mbit/s: 74 ms
	 * for 9216 B, intervals of 25 ms) the intervals that sent nothing are
	 * the pacer's granularity, not an idle application: the rate grows */
	{
		struct sdr_cc lo;
		uint64_t tl = t;

		sdr_cc_init(&lo, &p, GBIT, tl);
		lo.rate = 1e6;
		lo.startup = false;
		for (unsigned k = 0; k < 10; k++) {
			tl += 26 * MS;
			sdr_cc_on_ack(&lo, tl, 25 * MS, 1, 0, 0);
		}
		CHECK(sdr_cc_rate(&lo) > 2000000 && lo.last == SDR_CC_INCREASE,
		      "a QP at the floor that sends one frame per few intervals grows: %" PRIu64
		      " bit/s, %s",
		      sdr_cc_rate(&lo), sdr_cc_event_name(lo.last));
	}

	/* a QP that sends messages shorter than rate x interval (a pipeline's
	 * activations), each paced by its rate (frames held back), is
	 * rate-limited, not app-limited: it grows to the ceiling; the same
	 * sends without a held frame stay on hold, and so do they when their
	 * frames were held but left over the whole interval (a host that
	 * stalled in the middle of a backlog: it did not send at its rate) */
	{
		struct sdr_cc held, idle, slow;
		uint64_t th = t;

		sdr_cc_init(&held, &p, GBIT, th);
		sdr_cc_init(&idle, &p, GBIT, th);
		sdr_cc_init(&slow, &p, GBIT, th);
		held.rate = idle.rate = slow.rate = 200e6;
		held.startup = idle.startup = slow.startup = false;
		/* (a decision every other ACK; from 200 Mbit/s the accelerated
		 * step, 3.5-8 Mbit/s, reaches the ceiling in about 250) */
		for (unsigned k = 0; k < 300; k++) {
			th += 26 * MS;
			/* 256 KiB in the interval: 2.1 Mbit of the 5.2 Mbit allowed */
			sdr_cc_on_sent(&held, 262144);
			/* (sent at its rate: the span is the burst's time) */
			sdr_cc_on_held(&held, (uint64_t)(262144 * 8e9 / held.rate));
			sdr_cc_on_ack(&held, th, 25 * MS, 64, 0, 262144);
			sdr_cc_on_sent(&idle, 262144);
			sdr_cc_on_ack(&idle, th, 25 * MS, 64, 0, 262144);
			sdr_cc_on_sent(&slow, 262144);
			sdr_cc_on_held(&slow, 24 * MS);
			sdr_cc_on_ack(&slow, th, 25 * MS, 64, 0, 262144);
		}
		CHECK(sdr_cc_rate(&held) >= 900000000 && sdr_cc_rate(&idle) < 400000000 &&
			      idle.last == SDR_CC_HOLD && slow.last == SDR_CC_HOLD &&
			      sdr_cc_rate(&slow) < 400000000,
		      "rate-limited bursts grow to the ceiling (%" PRIu64
		      " bit/s), the same bursts unheld hold (%" PRIu64 " bit/s, %s), held"
		      " over the whole interval too (%" PRIu64 " bit/s, %s)",
		      sdr_cc_rate(&held), sdr_cc_rate(&idle), sdr_cc_event_name(idle.last),
		      sdr_cc_rate(&slow), sdr_cc_event_name(slow.last));
	}

	/* ceilings: lowered, the rate follows at once; raised, it is earned */
	sdr_cc_set_ceiling(&cc, r0 / 2);
	CHECK(sdr_cc_rate(&cc) == r0 / 2, "clamped to the new ceiling");
	sdr_cc_set_ceiling(&cc, c);
	CHECK(sdr_cc_rate(&cc) == r0 / 2, "a higher ceiling is not a jump");

	/* a longer route: the base RTT follows within one base window */
	sdr_cc_init(&cc, &p, GBIT, t);
	t = feed(&cc, t, 4, 10 * MS, 0);
	CHECK(cc.base_rtt == 10 * MS, "base 10 ms");
	t = feed(&cc, t, 1200, 30 * MS, 0); /* 36 s at 30 ms */
	CHECK(cc.base_rtt == 30 * MS, "base after the route change %" PRIu64, cc.base_rtt);
	CHECK(sdr_cc_rate(&cc) > GBIT / 2, "not starved by the longer route: %" PRIu64,
	      sdr_cc_rate(&cc));

	/* a low ceiling starts at init_min_bps (a decision needs ACKs), a
	 * ceiling below that at the ceiling */
	sdr_cc_init(&cc, &p, 33000000, 0);
	CHECK(sdr_cc_rate(&cc) == (uint64_t)p.init_min_bps, "33 Mbit/s starts at %" PRIu64,
	      sdr_cc_rate(&cc));
	sdr_cc_init(&cc, &p, 5000000, 0);
	CHECK(sdr_cc_rate(&cc) == 5000000, "5 Mbit/s starts at %" PRIu64, sdr_cc_rate(&cc));
	/* ... and heavy loss in every interval stops at min_bps (1e-4 of the
	 * ceiling would be 30 kbit/s: a unit's timer expires before it is sent) */
	sdr_cc_init(&cc, &p, 300000000, t);
	for (unsigned k = 0; k < 60; k++) {
		sdr_cc_on_loss(&cc, t, 50);
		t = feed(&cc, t, 1, 25 * MS, 0);
	}
	CHECK(sdr_cc_rate(&cc) == (uint64_t)p.min_bps && cc.dec_loss > 10,
	      "floor %" PRIu64 " after %" PRIu64 " loss cuts", sdr_cc_rate(&cc), cc.dec_loss);

	/* ECN leads from the first CE mark: q above T but below the delay
	 * target in force is no cut; above it, a delay cut; without a mark for
	 * base_window, T again */
	sdr_cc_init(&cc, &p, GBIT, t);
	t = feed(&cc, t, 12, 25 * MS, 0);
	CHECK(!sdr_cc_ecn_leads(&cc, t) && sdr_cc_delay_target(&cc, t) == sdr_cc_target(&cc),
	      "no CE yet: the delay target is T (%" PRIu64 ")", sdr_cc_delay_target(&cc, t));
	t = feed(&cc, t, 1, 25 * MS, 10); /* a CE mark */
	t = feed(&cc, t, 3, 25 * MS, 0);
	CHECK(sdr_cc_ecn_leads(&cc, t) &&
		      sdr_cc_delay_target(&cc, t) == (uint64_t)(p.ecn_delay_frac * 25e6),
	      "ECN leads: delay target %" PRIu64 " = %.0f of the base RTT",
	      sdr_cc_delay_target(&cc, t), p.ecn_delay_frac);
	r0 = sdr_cc_rate(&cc);
	t = feed(&cc, t, 1, 25 * MS + 3 * MS, 0); /* T < q = 3 ms < 6.25 ms */
	CHECK(cc.last == SDR_CC_INCREASE && sdr_cc_rate(&cc) > r0,
	      "ECN leads: 3 ms of queueing delay alone is no cut (%s)", sdr_cc_event_name(cc.last));
	t = feed(&cc, t, 1, 25 * MS + 10 * MS, 0); /* q = 10 ms > 6.25 ms */
	CHECK(cc.last == SDR_CC_DEC_DELAY, "ECN leads: 10 ms is a delay cut (%s)",
	      sdr_cc_event_name(cc.last));
	t = feed(&cc, t, (unsigned)(p.base_window_ns / (25 * MS)) + 1, 25 * MS, 0);
	CHECK(!sdr_cc_ecn_leads(&cc, t), "no CE for base_window: ECN no longer leads");

	/* without ECN, the delay target rises above the noise of q (jit_k J),
	 * at most noise_cap of the base RTT */
	sdr_cc_init(&cc, &p, GBIT, t);
	t = feed(&cc, t, 2, 25 * MS, 0);
	for (unsigned k = 0; k < 40; k++) /* q alternates 0 and 2 ms: J -> 1 ms */
		t = feed(&cc, t, 1, 25 * MS + (k & 1) * 2 * MS, 0);
	CHECK(sdr_cc_delay_target(&cc, t) > 2 * MS &&
		      sdr_cc_delay_target(&cc, t) <= (uint64_t)(p.noise_cap * 25e6),
	      "noise: delay target %" PRIu64 " above the 2 ms of noise",
	      sdr_cc_delay_target(&cc, t));
	CHECK(cc.dec_delay < 10, "noise: %" PRIu64 " delay cuts in 40 intervals", cc.dec_delay);
	for (unsigned k = 0; k < 10; k++) /* a standing 20 ms: capped */
		t = feed(&cc, t, 1, 45 * MS, 0);
	CHECK(sdr_cc_delay_target(&cc, t) == (uint64_t)(p.noise_cap * 25e6),
	      "noise: the delay target is capped at %" PRIu64, sdr_cc_delay_target(&cc, t));

	/* a deep queue (20 ms, above deep_hold_q of the 25 ms base RTT),
	 * every packet marked, 80 % of the rate delivered: a cut; then the
	 * queue shorter (15 ms) and the rate below what the flow delivers
	 * less the drain: a hold, counted as draining; a queue that grows
	 * again, or a shallow one (3 ms), is cut as before */
	{
		struct sdr_cc dq;
		uint64_t hd;
		double r1;

		t = deep_cut(&dq, &p, t);
		CHECK(dq.last == SDR_CC_DEC_ECN && !dq.probe_ep, "deep queue: cut (%s)",
		      sdr_cc_event_name(dq.last));
		r1 = dq.rate;
		hd = dq.holds_drain;
		t = sent_delivered_ce(&dq, t, 1, 1.2, 40 * MS, 10);
		CHECK(dq.last == SDR_CC_HOLD && dq.rate == r1 && dq.holds_drain == hd + 1,
		      "deep queue shrinking: %s, %.0f of %.0f Mbit/s, holds draining +%" PRIu64,
		      sdr_cc_event_name(dq.last), dq.rate / 1e6, r1 / 1e6, dq.holds_drain - hd);
		t = sent_delivered_ce(&dq, t, 1, 1.2, 45 * MS, 10);
		CHECK(dq.last == SDR_CC_DEC_ECN && dq.rate < r1,
		      "deep queue growing again: cut (%s, %.0f of %.0f Mbit/s)",
		      sdr_cc_event_name(dq.last), dq.rate / 1e6, r1 / 1e6);
		t = sent_delivered_ce(&dq, t, 1, 1.2, 30 * MS, 10);
		r1 = dq.rate;
		t = sent_delivered_ce(&dq, t, 1, 1.2, 28 * MS, 10);
		CHECK(dq.last == SDR_CC_DEC_ECN && dq.rate < r1,
		      "shallow queue (3 ms) shrinking: cut (%s)", sdr_cc_event_name(dq.last));
		p.deep_hold_q = 0;
		t = deep_cut(&dq, &p, t);
		r1 = dq.rate;
		t = sent_delivered_ce(&dq, t, 1, 1.2, 40 * MS, 10);
		CHECK(dq.last == SDR_CC_DEC_ECN && dq.rate < r1,
		      "deep_hold_q 0: the shrinking deep queue is cut (%s)",
		      sdr_cc_event_name(dq.last));
		sdr_cc_params_default(&p);
	}

	/* dlv_fall: after a cut, the ACKs of what was sent before it deliver
	 * 55 % of the rate the flow sent, marked, over a base RTT: the
	 * capacity fell, and the rate is cut again at once to that delivery
	 * less the drain (a 5 ms queue) and cut_extra (no deeper than
	 * max_mdf); the same delivery a base RTT more does not cut again (the
	 * rate is below it now); at 90 % of the cut's rate, without marks,
	 * unmeasured, after an app-limited interval, or with dlv_fall 0,
	 * nothing until the next decision */
	{
		struct sdr_cc fc;
		double r1, d = 0.55 * 500e6, tq;
		uint64_t e1;

		t = fall_cut(&fc, &p, t, 1);
		CHECK(fc.last == SDR_CC_DEC_ECN && fc.dlv_cuts == 0, "fall: the cut (%s)",
		      sdr_cc_event_name(fc.last));
		r1 = fc.rate;
		e1 = fc.dec_ecn;
		tq = (double)sdr_cc_target(&fc);
		t = stale_acks(&fc, t, d, 10, 27);
		f = d * (1 - (5e6 - tq) / (p.drain_rtts * 30e6) - p.cut_extra);
		CHECK(fc.dlv_cuts == 1 && fc.dec_ecn == e1 + 1 && fabs(fc.rate - f) < 0.01 * f,
		      "fall: delivering 55 %% after a cut to %.0f Mbit/s: cut again to %.1f Mbit/s "
		      "(%.1f expected), %" PRIu64 " such cuts",
		      r1 / 1e6, fc.rate / 1e6, f / 1e6, fc.dlv_cuts);
		r1 = fc.rate;
		t = stale_acks(&fc, t, d, 10, 27);
		CHECK(fc.dlv_cuts == 1 && fc.rate == r1,
		      "fall: the same delivery a base RTT more: no second cut (%" PRIu64
		      ", %.1f of %.1f Mbit/s)",
		      fc.dlv_cuts, fc.rate / 1e6, r1 / 1e6);

		struct {
			double dlv;
			unsigned ce;
			double sent;
			double fall;
			const char *what;
		} no[] = {
			{0.9, 10, 1, 0.7, "delivering 90 % of the cut's rate"},
			{0.4, 0, 1, 0.7, "no mark"},
			{0, 10, 1, 0.7, "no bytes counted"},
			{0.4, 10, 0.5, 0.7, "the cut's interval app-limited"},
			{0.4, 10, 1, 0, "dlv_fall 0"},
		};
		for (unsigned i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
			p.dlv_fall = no[i].fall;
			t = fall_cut(&fc, &p, t, no[i].sent);
			r1 = fc.rate;
			t = stale_acks(&fc, t, no[i].dlv * r1, no[i].ce, 27);
			CHECK(fc.dlv_cuts == 0 && fc.rate == r1,
			      "fall: %s: no cut (%.0f of %.0f Mbit/s)", no[i].what, fc.rate / 1e6,
			      r1 / 1e6);
		}
		sdr_cc_params_default(&p);
	}

	/* a hostile peer's CE count above what it acks is clipped */
	sdr_cc_init(&cc, &p, GBIT, 0);
	sdr_cc_on_ack(&cc, 1, 0, 1, 1000, 0);
	CHECK(cc.ce == 1, "CE clipped to acked: %" PRIu64, cc.ce);
}

/* ------------------------------------------------------ closed loops -- */

#define NFLOW_MAX 8
#define FRAME 4174u /* a 4096 B payload in a RoCEv2 frame */
#define PAYLOAD 4096u

struct ev {
	uint64_t at, sent_at;
	uint64_t depart, n; /* exit: when it reaches the receiver; its number */
	uint8_t flow, ce, lost;
	uint8_t exit; /* at its bottleneck exit (ecnmark=dequeue), not its ACK */
};

static struct ev *heap;
static size_t heap_n, heap_cap;

static void hpush(struct ev e)
{
	size_t i = heap_n++;

	if (heap_n > heap_cap) {
		heap_cap = heap_cap ? heap_cap * 2 : 4096;
		heap = realloc(heap, heap_cap * sizeof(*heap));
		if (!heap)
			abort();
	}
	while (i > 0 && heap[(i - 1) / 2].at > e.at) {
		heap[i] = heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	heap[i] = e;
}

static struct ev hpop(void)
{
	struct ev top = heap[0], last = heap[--heap_n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= heap_n)
			break;
		if (c + 1 < heap_n && heap[c + 1].at < heap[c].at)
			c++;
		if (heap[c].at >= last.at)
			break;
		heap[i] = heap[c];
		i = c;
	}
	if (heap_n)
		heap[i] = last;
	return top;
}

/* A kernel TCP flow as the competitor sdr-dpu meets on a shared link: Reno
 * (RFC 5681) in the rate form a paced simulation needs (cwnd / srtt per
 * second), its frames not ECN-capable (a queue marks none: it drops them
 * when full), one halving per window of data (RFC 6675's recovery point),
 * slow start until its first loss, then one segment per RTT. */
struct reno {
	double cwnd, srtt; /* bytes, ns */
	uint64_t recover;  /* losses of frames sent before this time are answered */
	bool ss;
};

static void reno_init(struct reno *r)
{
	r->cwnd = 10.0 * FRAME;
	r->srtt = 25e6;
	r->recover = 0;
	r->ss = true;
}

static void reno_ack(struct reno *r, uint64_t rtt)
{
	r->srtt = r->srtt * 7 / 8 + (double)rtt / 8;
	r->cwnd += r->ss ? FRAME : (double)FRAME * FRAME / r->cwnd;
}

static void reno_loss(struct reno *r, uint64_t now, uint64_t sent_at)
{
	if (sent_at < r->recover)
		return;
	r->cwnd = r->cwnd / 2 > 2.0 * FRAME ? r->cwnd / 2 : 2.0 * FRAME;
	r->ss = false;
	r->recover = now;
}

static uint64_t reno_rate(const struct reno *r)
{
	return (uint64_t)(r->cwnd * 8e9 / r->srtt) + 1;
}

struct sim {
	const char *link; /* link emulator spec of the bottleneck */
	unsigned nflows;
	uint64_t ceiling;   /* of every flow */
	uint64_t ret_ns;    /* ACK path delay */
	uint64_t start_gap; /* flow i starts at i * start_gap */
	uint64_t end;       /* simulated time */
	uint64_t win;       /* goodput windows */
	/* results */
	uint64_t bytes[NFLOW_MAX][64];      /* goodput per flow per window */
	uint64_t from;                      /* steady state: loss and queue from here */
	uint64_t pkts_in, drops;            /* from @c from on */
	uint64_t start_drops, start_max_q;  /* before @c from (start-up) */
	uint64_t q_samples, q_hist[1024];   /* backlog in 8 KB bins, every 1 ms */
	uint64_t buffer, rate_bps;          /* the link's (its first rate) */
	uint64_t jit_ns;                    /* host jitter: ACKs are processed up to this late */
	const struct sdr_cc_params *params; /* NULL: the defaults */
	struct sdr_cc cc[NFLOW_MAX];
	unsigned reno_mask; /* bit f: flow f is TCP Reno, not an sdr-dpu QP */
	bool reno_ecn;      /* Reno's frames are ECN-capable, CE halves it (RFC 3168) */
	struct reno reno[NFLOW_MAX];
	unsigned ack_pkts;   /* an ACK per this many packets of a flow (0, 1: each) */
	unsigned fb_pkts;    /* with ack_pkts: delivery and marks per this many
				packets, an RTT sample per ack_pkts (the
				firmware's --cc-ack-pkts; 0: all per ack_pkts) */
	unsigned floor_mask; /* bit f: flow f starts at its floor, alpha 1 (start-up lost) */
	uint32_t ack_n[NFLOW_MAX], ack_ce[NFLOW_MAX]; /* (not yet acknowledged) */
	FILE *trace;                                  /* every decision, where not NULL */
};

/* splitmix64: the simulation's deterministic noise */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* How late the sending host takes an ACK that arrives at @p t: a host whose
 * load changes every 50 ms (a level in [0, jit_ns)), plus up to jit_ns / 8
 * per ACK (its scheduling, the receiver's ACK coalescing) - what the RTT
 * samples of the firmware on a small shared machine look like (docs/
 * congestion.md "Host jitter"). */
static uint64_t host_delay(const struct sim *s, uint64_t t, uint64_t n)
{
	if (!s->jit_ns)
		return 0;
	return mix(t / (50 * MS)) % s->jit_ns + mix(n ^ 0x5a5a5a5a) % (s->jit_ns / 8 + 1);
}

/* One line per decision (TEST_CC_TRACE): time, flow, rate, what it
 * decided, the interval's queueing delay, alpha, the link's backlog */
static void trace_decision(const struct sim *s, struct sdr_link *l, unsigned f, uint64_t t)
{
	const struct sdr_cc *cc = &s->cc[f];

	fprintf(s->trace, "%.4f %u %.1f %s %.2f %.3f %.0f %.1f\n", (double)t / 1e9, f,
		cc->rate / 1e6, sdr_cc_event_name(cc->last), cc->last_q_ns / 1e6, cc->alpha,
		(double)sdr_link_backlog_at(l, t) / 1e3, cc->peak / 1e6);
}

static void run(struct sim *s)
{
	struct sdr_link l;
	struct sdr_link_cfg cfg;
	char err[256];
	uint64_t next_tx[NFLOW_MAX], t = 0, next_q = 0, base_in = 0, nsent = 0;

	if (sdr_link_parse(s->link, &cfg, err, sizeof(err)) || sdr_link_init(&l, &cfg)) {
		fprintf(stderr, "bad link %s: %s\n", s->link, err);
		exit(2);
	}
	sdr_link_set_origin(&l, 0);
	s->buffer = cfg.buffer_bytes;
	s->rate_bps = cfg.rate_bps;
	heap_n = 0;
	for (unsigned f = 0; f < s->nflows; f++) {
		next_tx[f] = f * s->start_gap;
		sdr_cc_init(&s->cc[f], s->params, s->ceiling, next_tx[f]);
		if (s->floor_mask >> f & 1) {
			s->cc[f].rate = 0; /* (clamped to the floor) */
			s->cc[f].startup = false;
			s->cc[f].alpha = 1;
			sdr_cc_set_ceiling(&s->cc[f], s->ceiling);
		}
		reno_init(&s->reno[f]);
	}
	while (t < s->end) {
		unsigned f = 0;

		for (unsigned i = 1; i < s->nflows; i++)
			if (next_tx[i] < next_tx[f])
				f = i;
		while (next_q <= next_tx[f] && (heap_n == 0 || next_q <= heap[0].at)) {
			uint64_t b = sdr_link_backlog_at(&l, next_q) / 8192;

			if (next_q == s->from) {
				s->start_drops = l.stats.dropped_buffer;
				s->start_max_q = l.stats.max_backlog_bytes;
				base_in = l.stats.pkts_in;
			}
			if (next_q >= s->from) {
				s->q_hist[b < 1023 ? b : 1023]++;
				s->q_samples++;
			}
			next_q += MS;
		}
		if (heap_n && heap[0].at <= next_tx[f]) {
			struct ev e = hpop();
			struct sdr_cc *cc = &s->cc[e.flow];
			bool reno = s->reno_mask >> e.flow & 1;
			uint64_t niv = cc->intervals;

			t = e.at;
			if (e.exit) {
				/* ecnmark=dequeue: the frame leaves the
				 * bottleneck now, its mark decided on the
				 * queue behind it; its ACK is on its way */
				e.exit = 0;
				e.ce = sdr_link_mark_at_exit(&l, t);
				e.at = e.depart + s->ret_ns +
				       host_delay(s, e.depart + s->ret_ns, e.n);
				hpush(e);
				continue;
			}
			if (e.lost) {
				if (reno)
					reno_loss(&s->reno[e.flow], t, e.sent_at);
				else
					sdr_cc_on_loss(cc, t, 1);
				continue;
			}
			if (reno && e.ce)
				reno_loss(&s->reno[e.flow], t, e.sent_at);
			else if (reno)
				reno_ack(&s->reno[e.flow], t - e.sent_at);
			else if (s->ack_pkts > 1 && s->fb_pkts) {
				/* the unit's ACK brings the sample, and the
				 * ACKs between tell what was delivered */
				s->ack_ce[e.flow] += e.ce;
				if (++s->ack_n[e.flow] % s->fb_pkts == 0) {
					if (s->ack_n[e.flow] == s->ack_pkts) {
						sdr_cc_on_rtt(cc, t, t - e.sent_at);
						s->ack_n[e.flow] = 0;
					}
					sdr_cc_on_delivered(cc, t, s->fb_pkts, s->ack_ce[e.flow],
							    s->fb_pkts * FRAME);
					s->ack_ce[e.flow] = 0;
				}
			} else if (s->ack_pkts > 1) {
				s->ack_ce[e.flow] += e.ce;
				if (++s->ack_n[e.flow] == s->ack_pkts) {
					sdr_cc_on_ack(cc, t, t - e.sent_at, s->ack_pkts,
						      s->ack_ce[e.flow], s->ack_pkts * FRAME);
					s->ack_n[e.flow] = s->ack_ce[e.flow] = 0;
				}
			} else
				sdr_cc_on_ack(cc, t, t - e.sent_at, 1, e.ce, FRAME);
			if (s->trace && cc->intervals != niv)
				trace_decision(s, &l, e.flow, t);
			if (t / s->win < 64)
				s->bytes[e.flow][t / s->win] += PAYLOAD;
			continue;
		}
		/* flow f sends one packet at its pace */
		struct sdr_link_verdict v;

		bool reno = s->reno_mask >> f & 1;

		t = next_tx[f];
		sdr_link_decide_ecn(&l, t, FRAME,
				    reno && !s->reno_ecn ? SDR_LINK_ECN_NOT_ECT : SDR_LINK_ECN_ECT0,
				    &v);
		if (!reno)
			sdr_cc_on_sent(&s->cc[f], FRAME);
		nsent++;
		if (v.action == SDR_LINK_DELIVER && v.ce_at_exit)
			hpush((struct ev){.at = v.bottleneck_exit_ns,
					  .sent_at = t,
					  .depart = v.depart_ns,
					  .n = nsent,
					  .flow = (uint8_t)f,
					  .exit = 1});
		else if (v.action == SDR_LINK_DELIVER)
			hpush((struct ev){.at = v.depart_ns + s->ret_ns +
						host_delay(s, v.depart_ns + s->ret_ns, nsent),
					  .sent_at = t,
					  .flow = (uint8_t)f,
					  .ce = v.ce});
		else /* the sender learns of the loss about an RTT later */
			hpush((struct ev){.at = t + 2 * (cfg.delay_ns + s->ret_ns),
					  .sent_at = t,
					  .flow = (uint8_t)f,
					  .lost = 1});
		next_tx[f] = t + (uint64_t)((double)FRAME * 8e9 /
					    (double)(reno ? reno_rate(&s->reno[f])
							  : sdr_cc_rate(&s->cc[f])));
	}
	s->pkts_in = l.stats.pkts_in - base_in;
	s->drops = l.stats.dropped_buffer - s->start_drops;
}

static double jain(const double *x, unsigned n)
{
	double a = 0, b = 0;

	for (unsigned i = 0; i < n; i++) {
		a += x[i];
		b += x[i] * x[i];
	}
	return b > 0 ? a * a / (n * b) : 0;
}

/* goodput of flow f (bit/s) over windows [w0, w1) */
static double gput(const struct sim *s, unsigned f, unsigned w0, unsigned w1)
{
	uint64_t b = 0;

	for (unsigned w = w0; w < w1; w++)
		b += s->bytes[f][w];
	return (double)b * 8 / ((double)(w1 - w0) * (double)s->win / 1e9);
}

static double q_p99(const struct sim *s)
{
	uint64_t acc = 0;

	for (unsigned b = 0; b < 1024; b++) {
		acc += s->q_hist[b];
		if (acc * 100 >= s->q_samples * 99)
			return (double)(b + 1) * 8192;
	}
	return 1e18;
}

enum { REPORT, LOOSE, STRICT }; /* what test_fairness asserts */

static void test_fairness(const char *link, unsigned n, const char *what, int check,
			  uint64_t jit_ns, const struct sdr_cc_params *p)
{
	static struct sim s;
	double g[NFLOW_MAX], sum = 0, worst = 1;
	double cap = 1e9 * PAYLOAD / FRAME; /* payload goodput of 1 Gbit/s of frames */

	memset(&s, 0, sizeof(s));
	s.link = link;
	s.nflows = n;
	s.ceiling = 10 * GBIT;
	s.ret_ns = 12500 * US;
	s.start_gap = 200 * MS;
	s.end = 14000 * MS;
	s.win = 1000 * MS;
	s.from = 4000 * MS;
	s.jit_ns = jit_ns;
	s.params = p;
	run(&s);
	/* measured over 4 s .. 14 s: 10 s, and per 1 s window */
	for (unsigned f = 0; f < n; f++) {
		g[f] = gput(&s, f, 4, 14);
		sum += g[f];
	}
	for (unsigned w = 4; w < 14; w++) {
		double x[NFLOW_MAX];

		for (unsigned f = 0; f < n; f++)
			x[f] = gput(&s, f, w, w + 1);
		if (jain(x, n) < worst)
			worst = jain(x, n);
	}
	uint64_t comp = 0;

	for (unsigned f = 0; f < n; f++)
		comp += s.cc[f].comp_enters;
	printf("%-10s %u flows, 4..14 s: aggregate %.1f %% of capacity, Jain %.4f over 10 s "
	       "(worst 1 s window %.4f), loss %.2e, queue p99 %.0f KB (%.1f %% of the buffer); "
	       "start-up: %" PRIu64 " drops, queue at most %" PRIu64 " KB; TCP-competitive mode "
	       "entered %" PRIu64 " times\n",
	       what, n, 100 * sum / cap, jain(g, n), worst, (double)s.drops / (double)s.pkts_in,
	       q_p99(&s) / 1000, 100 * q_p99(&s) / (double)s.buffer, s.start_drops,
	       s.start_max_q / 1000, comp);
	if (check == REPORT)
		return;
	CHECK(jain(g, n) >= 0.95, "%s %u flows: Jain %.4f < 0.95", what, n, jain(g, n));
	if (check == LOOSE) {
		/* delay alone: fair, but a standing queue inflates the base RTT
		 * (docs/congestion.md "Limits"): no flow starves */
		CHECK(sum >= 0.6 * cap, "%s %u flows: aggregate %.1f %%", what, n, 100 * sum / cap);
		return;
	}
	CHECK(sum >= 0.9 * cap, "%s %u flows: aggregate %.1f %% < 90 %%", what, n, 100 * sum / cap);
	/* (every flow here answers the marks: none keeps a queue the others
	 * cannot shrink; with delay alone, LOOSE, 8 flows entered once) */
	CHECK(comp == 0, "%s %u flows: TCP-competitive mode entered %" PRIu64 " times", what, n,
	      comp);
	CHECK((double)s.drops <= 1e-4 * (double)s.pkts_in,
	      "%s %u flows: loss %" PRIu64 " of %" PRIu64, what, n, s.drops, s.pkts_in);
	CHECK(q_p99(&s) <= 0.25 * (double)s.buffer, "%s %u flows: queue p99 %.0f B", what, n,
	      q_p99(&s));
}

/* Fairness where the ceiling is a few times the link, as on the rigs (a
 * QP paced by a 3 Gbit/s port rate through a 1 Gbit/s bottleneck). The
 * additive step is a fraction of the ceiling, so here the accelerated
 * increase meets its bound, and a bound in proportion to the rate kept
 * whatever ratio the flows left start-up with (Jain 0.68-0.97 over these
 * cases, docs/congestion.md). Five start gaps per row (flows start 100 to
 * 300 ms apart), each over 4..14 s: aggregate >= 90 %, no loss, queue p99
 * <= 25 % of the buffer, and Jain >= 0.95. */
static void test_fairness_ceiling(uint64_t ceiling, const struct sdr_cc_params *params, int check,
				  const char *what)
{
	static struct sim s;
	double cap = 1e9 * PAYLOAD / FRAME;

	for (unsigned n = 2; n <= 8; n *= 2) {
		double jmin = 1, jmax = 0, amin = 1e18, qmax = 0;
		uint64_t drops = 0;

		for (unsigned g = 0; g < 5; g++) {
			double x[NFLOW_MAX], sum = 0;

			memset(&s, 0, sizeof(s));
			s.link = "delay=12.5ms,rate=1gbit,buffer=4MB,ecn=100KB";
			s.nflows = n;
			s.ceiling = ceiling;
			s.params = params;
			s.ret_ns = 12500 * US;
			s.start_gap = (100 + 50 * g) * MS;
			s.end = 14000 * MS;
			s.win = 1000 * MS;
			s.from = 4000 * MS;
			run(&s);
			for (unsigned f = 0; f < n; f++) {
				x[f] = gput(&s, f, 4, 14);
				sum += x[f];
			}
			jmin = jain(x, n) < jmin ? jain(x, n) : jmin;
			jmax = jain(x, n) > jmax ? jain(x, n) : jmax;
			amin = sum < amin ? sum : amin;
			qmax = q_p99(&s) > qmax ? q_p99(&s) : qmax;
			drops += s.drops;
		}
		printf("ceiling %.1f Gbit/s (%s), %u flows started 100..300 ms apart, 4..14 s: "
		       "Jain %.4f..%.4f, aggregate at least %.1f %% of capacity, queue p99 at most "
		       "%.1f %% of the buffer, %" PRIu64 " drops\n",
		       (double)ceiling / 1e9, what, n, jmin, jmax, 100 * amin / cap,
		       100 * qmax / (double)s.buffer, drops);
		if (check == REPORT)
			continue;
		CHECK(jmin >= 0.95, "ceiling %.1f Gbit/s, %u flows: Jain %.4f",
		      (double)ceiling / 1e9, n, jmin);
		CHECK(amin >= 0.9 * cap && drops == 0 && qmax <= 0.25 * (double)s.buffer,
		      "ceiling %.1f Gbit/s, %u flows: aggregate %.1f %%, %" PRIu64
		      " drops, queue p99 %.0f B",
		      (double)ceiling / 1e9, n, 100 * amin / cap, drops, qmax);
	}
}

/* One sdr-dpu QP beside one TCP Reno flow. Without ECN (@p ecn false) the
 * link marks the QP's frames above its threshold and never Reno's, which
 * fills the buffer until it drops: the QP's TCP-competitive mode is what
 * gives it a share. With ECN both answer the marks, and the mode must not
 * take Reno's share. Each flow is to get at least half its fair share over
 * 20 s; sdr_first: the QP starts first (else Reno does, and the QP starts
 * into its queue), the other @p gap ns later. */
static void test_beside_reno(const char *link, bool ecn, bool sdr_first, uint64_t gap)
{
	static struct sim s;
	double cap = 1e9 * PAYLOAD / FRAME, g0, g1;

	memset(&s, 0, sizeof(s));
	s.link = link;
	s.nflows = 2;
	s.reno_mask = sdr_first ? 2 : 1;
	s.reno_ecn = ecn;
	s.ceiling = 10 * GBIT;
	s.ret_ns = 12500 * US;
	s.start_gap = gap;
	s.end = 26000 * MS;
	s.win = 1000 * MS;
	s.from = 6000 * MS;
	run(&s);
	unsigned q = sdr_first ? 0 : 1; /* the sdr flow */

	g0 = gput(&s, q, 6, 26);
	g1 = gput(&s, 1 - q, 6, 26);
	printf("beside Reno (%s), %s first, the other %.1f s later, 6..26 s: sdr %.1f %%, Reno "
	       "%.1f %% of capacity, "
	       "loss %.2e, queue p99 %.0f KB; sdr: %" PRIu64 " ECN, %" PRIu64 " delay, %" PRIu64
	       " loss cuts, TCP-competitive %" PRIu64 " times, %" PRIu64 " of %" PRIu64
	       " decisions\n",
	       ecn ? "ECN" : "no ECN", sdr_first ? "sdr" : "Reno", (double)gap / 1e9,
	       100 * g0 / cap, 100 * g1 / cap, (double)s.drops / (double)s.pkts_in,
	       q_p99(&s) / 1000, s.cc[q].dec_ecn, s.cc[q].dec_delay, s.cc[q].dec_loss,
	       s.cc[q].comp_enters, s.cc[q].comp_iv, s.cc[q].intervals);
	if (ecn) /* (REPORT: the controller's own share beside Reno with ECN) */
		return;
	CHECK(g0 >= 0.25 * cap && g1 >= 0.25 * cap,
	      "beside Reno (%s): sdr %.1f %%, Reno %.1f %% (each >= 25 %%)", ecn ? "ECN" : "no ECN",
	      100 * g0 / cap, 100 * g1 / cap);
	if (!ecn)
		CHECK(s.cc[q].comp_enters > 0, "beside Reno without ECN: no TCP-competitive mode");
}

/* One run of the capacity case: the figures test_capacity_change() reports,
 * of the capacity (cap) or of the halved capacity (half, hmin) */
struct cap_run {
	double half, hmin, full, w[3], loss;
	uint64_t probes[2], comp;
};

#define CAP_GAPS 7 /* start gaps 100, 107, ..., 142 ms: the trajectories */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* min, median, max of @p n values (sorted in place) */
static void spread(double *v, unsigned n, double out[3])
{
	qsort(v, n, sizeof(*v), cmp_double);
	out[0] = v[0];
	out[1] = v[n / 2];
	out[2] = v[n - 1];
}

static void capacity_run(struct sim *s, const char *link, uint64_t ceiling, uint64_t jit,
			 unsigned ack_pkts, unsigned fb_pkts, const struct sdr_cc_params *p,
			 uint64_t gap, struct cap_run *r, FILE *trace)
{
	double cap;

	memset(s, 0, sizeof(*s));
	s->trace = trace;
	s->link = link;
	s->nflows = 2;
	s->ceiling = ceiling;
	s->jit_ns = jit;
	s->params = p;
	s->ret_ns = 12500 * US;
	s->start_gap = gap;
	s->end = 12000 * MS;
	s->win = 250 * MS; /* = 10 RTT */
	s->from = 3000 * MS;
	s->ack_pkts = ack_pkts;
	s->fb_pkts = fb_pkts;
	run(s);
	cap = (double)s->rate_bps * PAYLOAD / FRAME;
	/* halved at 4 s (window 16), restored at 8 s (window 32) */
	r->half = (gput(s, 0, 17, 32) + gput(s, 1, 17, 32)) / (cap / 2);
	r->full = (gput(s, 0, 33, 48) + gput(s, 1, 33, 48)) / cap;
	for (unsigned k = 0; k < 3; k++)
		r->w[k] = (gput(s, 0, 33 + k, 34 + k) + gput(s, 1, 33 + k, 34 + k)) / cap;
	r->hmin = 1; /* (the halved phase's worst window, 4.25..6 s) */
	for (unsigned w = 17; w < 24; w++)
		r->hmin = fmin(r->hmin, (gput(s, 0, w, w + 1) + gput(s, 1, w, w + 1)) / (cap / 2));
	r->loss = (double)s->drops / (double)s->pkts_in;
	r->probes[0] = s->cc[0].probes;
	r->probes[1] = s->cc[1].probes;
	r->comp = s->cc[0].comp_enters + s->cc[1].comp_enters;
}

/* Two flows through @p link, every flow's ceiling @p ceiling, ACKs up to
 * @p jit late (host_delay()), one per @p ack_pkts packets (with @p fb_pkts,
 * an RTT sample per @p ack_pkts and the delivery and marks per @p fb_pkts:
 * the firmware's units and --cc-ack-pkts): the capacity
 * halved at 4 s and restored at 8 s, run from
 * CAP_GAPS start gaps (the second flow 100..142 ms after the first): one
 * trajectory's figures move by tens of points with the start (or with a
 * change of 0.01 % in one estimate: the decisions are thresholds), so the
 * figures are reported over the trajectories, and what is asserted holds
 * for every one of them. Level 0: reported; 1: loss at most 1 %, never
 * TCP-competitive, and the restored capacity >= 85 % used in RTT 20..30;
 * 2: and >= 90 % there, the halved one >= 85 % after its first 10 RTT. */
static void test_capacity_change(const char *link, uint64_t ceiling, uint64_t jit,
				 unsigned ack_pkts, unsigned fb_pkts, const struct sdr_cc_params *p,
				 unsigned level, const char *what)
{
	static struct sim s;
	struct cap_run r[CAP_GAPS];
	double v[CAP_GAPS], w1[3], w2[3], w3[3], half[3], hmin[3], full[3], loss[3];
	double gbit;
	char fb[48] = "";
	static unsigned ncase; /* (the capacity cases so far: TEST_CC_TRACE's case) */
	const char *tr = getenv("TEST_CC_TRACE"); /* "case,gap,file": one run's decisions */
	unsigned tc = ~0u, tg = ~0u;
	char tf[256] = "";

	if (tr && sscanf(tr, "%u,%u,%255s", &tc, &tg, tf) != 3) {
		fprintf(stderr, "TEST_CC_TRACE=%s: want case,gap,file\n", tr);
		exit(2);
	}
	for (unsigned g = 0; g < CAP_GAPS; g++) {
		bool traced = ncase == tc && g == tg;
		FILE *fp = traced ? fopen(tf, "w") : NULL;

		if (traced && !fp) {
			perror(tf);
			exit(2);
		}

		capacity_run(&s, link, ceiling, jit, ack_pkts, fb_pkts, p, (100 + 7 * g) * MS,
			     &r[g], fp);
		if (fp)
			fclose(fp);
	}
	ncase++;
	gbit = (double)s.rate_bps / 1e9;
#define SPREAD(field, out)                              \
	do {                                            \
		for (unsigned g = 0; g < CAP_GAPS; g++) \
			v[g] = r[g].field;              \
		spread(v, CAP_GAPS, out);               \
	} while (0)
	SPREAD(w[0], w1);
	SPREAD(w[1], w2);
	SPREAD(w[2], w3);
	SPREAD(half, half);
	SPREAD(hmin, hmin);
	SPREAD(full, full);
	SPREAD(loss, loss);
#undef SPREAD
	if (fb_pkts)
		snprintf(fb, sizeof(fb), ", the delivery per %u", fb_pkts);
	printf("%-10s capacity %g -> %g -> %g Gbit/s (ceiling %g, ACKs up to %g ms late, one per "
	       "%u packets%s), %u start gaps, min / median / max: the halved capacity after 10 RTT "
	       "%.1f / %.1f / %.1f %% (its worst 10 RTT in 4.25..6 s %.1f / %.1f / %.1f %%); "
	       "restored: after 10 RTT %.1f / %.1f / %.1f %%, RTT 10..20 %.1f / %.1f / %.1f %%, "
	       "20..30 %.1f / %.1f / %.1f %%, 30..40 %.1f / %.1f / %.1f %%; loss at most %.2e; "
	       "start gap 100 ms: %" PRIu64 " and %" PRIu64 " probing intervals\n",
	       what, gbit, gbit / 2, gbit, (double)ceiling / 1e9, (double)jit / 1e6,
	       ack_pkts > 1 ? ack_pkts : 1, fb, CAP_GAPS, 100 * half[0], 100 * half[1],
	       100 * half[2], 100 * hmin[0], 100 * hmin[1], 100 * hmin[2], 100 * full[0],
	       100 * full[1], 100 * full[2], 100 * w1[0], 100 * w1[1], 100 * w1[2], 100 * w2[0],
	       100 * w2[1], 100 * w2[2], 100 * w3[0], 100 * w3[1], 100 * w3[2], loss[2],
	       r[0].probes[0], r[0].probes[1]);
	if (level == 0)
		return;
	for (unsigned g = 0; g < CAP_GAPS; g++) {
		unsigned gap = 100 + 7 * g;

		CHECK(r[g].loss <= 0.01, "%s, start gap %u ms: loss %.2e", what, gap, r[g].loss);
		CHECK(r[g].comp == 0, "%s, start gap %u ms: TCP-competitive mode entered", what,
		      gap);
		CHECK(r[g].w[1] >= (level == 1 ? 0.85 : 0.9),
		      "%s, ACKs up to %g ms late, start gap %u ms: %.1f %% of the restored "
		      "capacity in RTT 20..30",
		      what, (double)jit / 1e6, gap, 100 * r[g].w[1]);
		if (level == 2)
			CHECK(r[g].half >= 0.85,
			      "%s, start gap %u ms: %.1f %% of the halved capacity", what, gap,
			      100 * r[g].half);
	}
}

/* A QP whose start-up lost its first units (its rate at the floor, alpha 1)
 * beside one that holds the bottleneck's queue at the marking threshold,
 * with an ACK per unit (16 packets) as SR sends them: at a low rate an
 * interval spans many round trips and nearly every one holds a mark. It
 * must climb, not stay at the floor: at least half its fair share over
 * 10..20 s (it had 1 % of the link when every interval was one round
 * trip's decision). */
static void test_floor(void)
{
	static struct sim s;
	double g[2], cap = 100e6 * PAYLOAD / FRAME;

	memset(&s, 0, sizeof(s));
	s.link = "delay=12.5ms,rate=100mbit,buffer=4MB,ecn=100KB";
	s.nflows = 2;
	s.ceiling = 300000000;
	s.ret_ns = 12500 * US;
	s.start_gap = 1000 * MS;
	s.end = 20000 * MS;
	s.win = 1000 * MS;
	s.from = 10000 * MS;
	s.ack_pkts = 16;
	s.floor_mask = 2;
	run(&s);
	g[0] = gput(&s, 0, 10, 20);
	g[1] = gput(&s, 1, 10, 20);
	printf("from the floor beside a flow at the threshold, 100 Mbit/s, an ACK per 16 packets, "
	       "10..20 s: %.1f and %.1f %% of capacity, Jain %.4f; the late flow: %" PRIu64
	       " ECN cuts in %" PRIu64 " decisions, alpha %.3f\n",
	       100 * g[0] / cap, 100 * g[1] / cap, jain(g, 2), s.cc[1].dec_ecn, s.cc[1].intervals,
	       s.cc[1].alpha);
	/* (the late flow's share stays below the other's: both steps are
	 * one per interval where an interval is under two round trips, and
	 * the late flow's ACKs, 16 packets apart, make its intervals longer
	 * - docs/congestion.md "Limits") */
	CHECK(g[1] >= 0.25 * cap, "from the floor: the late flow has %.1f %% (< half its share)",
	      100 * g[1] / cap);
	CHECK(g[0] + g[1] >= 0.85 * cap, "from the floor: aggregate %.1f %%",
	      100 * (g[0] + g[1]) / cap);
}

static void test_alone(void)
{
	static struct sim s;
	double cap = 1e9 * PAYLOAD / FRAME, g;

	/* the ceiling is the link: as much as the fixed pacer */
	memset(&s, 0, sizeof(s));
	s.link = "delay=12.5ms,rate=1gbit,buffer=4MB,ecn=100KB";
	s.nflows = 1;
	s.ceiling = GBIT;
	s.ret_ns = 12500 * US;
	s.end = 5000 * MS;
	s.win = 1000 * MS;
	run(&s);
	g = gput(&s, 0, 1, 5);
	printf("alone, ceiling 1 Gbit/s on 1 Gbit/s: %.1f %% of the fixed pacer's goodput\n",
	       100 * g / cap);
	CHECK(g >= 0.95 * cap, "alone: %.1f %%", 100 * g / cap);
}

/* feed() with the flow sending @p sent_frac of what its rate allows (a
 * window, not the pacer, holding it back), and @p lost packets lost at the
 * interval's start */
static uint64_t feed_held(struct sdr_cc *cc, uint64_t t, unsigned n, uint64_t rtt, unsigned ce,
			  double sent_frac, unsigned lost)
{
	for (unsigned i = 0; i < n; i++) {
		uint64_t d0 = cc->intervals, iv = cc->base_rtt;
		unsigned k = 0;

		if (lost)
			sdr_cc_on_loss(cc, t, lost);
		while (cc->intervals == d0 && k < 100) {
			sdr_cc_on_sent(cc,
				       (uint32_t)(sent_frac * cc->rate * (double)iv / 80e9) + 1);
			t += iv / 10;
			sdr_cc_on_ack(cc, t, rtt, 10, k % 10 < ce / 10 ? 10 : 0, 0);
			k++;
		}
	}
	return t;
}

/* One interval with a single RTT sample (@p rtt, at its start: the unit's
 * ACK) and the deliveries between units after it (sdr_cc_on_delivered, 10
 * packets every tenth of the base RTT, @p ce of them marked in the first),
 * sending at the full rate: the firmware with --cc-ack-pkts. @return the
 * time after the decision. */
static uint64_t feed_sparse(struct sdr_cc *cc, uint64_t t, uint64_t rtt, unsigned ce)
{
	uint64_t d0 = cc->intervals, iv = cc->base_rtt;

	for (unsigned k = 0; cc->intervals == d0 && k < 100; k++) {
		sdr_cc_on_sent(cc, (uint32_t)(cc->rate * (double)iv / 80e9) + 1);
		t += iv / 10;
		if (k == 0)
			sdr_cc_on_rtt(cc, t, rtt);
		sdr_cc_on_delivered(cc, t, 10, k == 0 ? ce : 0, 0);
	}
	return t;
}

/* The queueing delay over q_span_rtts: with one RTT sample an interval, a
 * single late one (a host's scheduling) is no delay cut where a sample of
 * the round trip before shows no queue; a queue that lasts is cut once it
 * outlasts the span; q_span_rtts 0 cuts on the single sample, as do the
 * start-up and a path where ECN leads (delay is its back-up there, above
 * its own target). */
static void test_span(void)
{
	struct sdr_cc_params p, p0;
	struct sdr_cc cc;
	uint64_t t = 0;

	sdr_cc_params_default(&p);
	p0 = p;
	p0.q_span_rtts = 0;
	for (int span = 1; span >= 0; span--) {
		sdr_cc_init(&cc, span ? &p : &p0, GBIT, t);
		t = feed(&cc, t, 12, 25 * MS, 0); /* at base, in start-up (no cut yet) */
		t = feed_sparse(&cc, t, 25 * MS, 0);
		t = feed_sparse(&cc, t, 35 * MS, 0);
		/* in the start-up one late sample cuts (and ends it) */
		CHECK(cc.dec_delay == 1 && !cc.startup && cc.delay_spared == 0,
		      "span: in the start-up one late sample cuts (%s, %" PRIu64 " spared)",
		      sdr_cc_event_name(cc.last), cc.delay_spared);
		for (unsigned k = 0; k < 6; k++)
			t = feed_sparse(&cc, t, 25 * MS, 0);
		uint64_t d0 = cc.dec_delay;

		CHECK(cc.delay_spared == 0, "span: %" PRIu64 " delay cuts spared at base",
		      cc.delay_spared);
		t = feed_sparse(&cc, t, 35 * MS, 0); /* one sample 10 ms late */
		if (span) {
			CHECK(cc.dec_delay == d0 && cc.last == SDR_CC_INCREASE &&
				      cc.delay_spared == 1,
			      "span: one late sample, the round trip before at base: %s (%" PRIu64
			      " spared)",
			      sdr_cc_event_name(cc.last), cc.delay_spared);
			t = feed_sparse(&cc, t, 35 * MS, 0); /* the queue lasts */
			CHECK(cc.dec_delay == d0 + 1 && cc.delay_spared == 1,
			      "span: 10 ms in two intervals in a row is a delay cut (%s)",
			      sdr_cc_event_name(cc.last));
		} else {
			CHECK(cc.dec_delay == d0 + 1 && cc.delay_spared == 0,
			      "q_span_rtts 0: one late sample cuts (%s)",
			      sdr_cc_event_name(cc.last));
		}
	}
	/* ECN leads: the interval's own sample above the delay target cuts */
	sdr_cc_init(&cc, &p, GBIT, t);
	t = feed(&cc, t, 12, 25 * MS, 0);
	t = feed(&cc, t, 1, 25 * MS, 10); /* a CE mark */
	for (unsigned k = 0; k < 4; k++)
		t = feed_sparse(&cc, t, 25 * MS, 0);
	uint64_t d1 = cc.dec_delay;

	t = feed_sparse(&cc, t, 25 * MS + 10 * MS, 0); /* above 6.25 ms */
	CHECK(sdr_cc_ecn_leads(&cc, t) && cc.dec_delay == d1 + 1,
	      "span: where ECN leads one sample above its delay target cuts (%s)",
	      sdr_cc_event_name(cc.last));
}

/* The TCP-competitive mode (sdr_cc.h) decision by decision: when it starts,
 * what it does, when it ends. */
static void test_competitive(void)
{
	struct sdr_cc_params p;
	struct sdr_cc cc;
	uint64_t t = 0;
	unsigned k;

	sdr_cc_params_default(&p);

	/* a queue that marks everything and does not shrink under the cuts:
	 * entered once the smoothed marked fraction reaches comp_alpha (from
	 * 0: not after comp_enter cuts), the cuts undone */
	sdr_cc_init(&cc, &p, GBIT, 0);
	t = feed(&cc, t, 30, 25 * MS, 0); /* base RTT, the rate up */
	double before = cc.rate;

	for (k = 0; k < 30 && !cc.comp; k++)
		t = feed(&cc, t, 1, 25 * MS + 10 * MS, 100);
	CHECK(cc.comp && k > p.comp_enter && cc.mark >= p.comp_alpha,
	      "standing marked queue: the mode entered after %u cuts (mark %.2f)", k, cc.mark);
	CHECK(cc.rate >= before, "entry undoes the cuts: %.1f of %.1f Mbit/s", cc.rate / 1e6,
	      before / 1e6);
	/* in the mode CE does not cut, loss cuts by comp_md of what the flow
	 * sent where that is less than its rate (a window held it back) */
	double r = cc.rate;

	t = feed(&cc, t, 3, 25 * MS + 10 * MS, 100);
	CHECK(cc.comp && cc.rate >= r, "in the mode CE does not cut: %.1f -> %.1f Mbit/s", r / 1e6,
	      cc.rate / 1e6);
	r = cc.rate;
	t = feed_held(&cc, t, 1, 25 * MS + 10 * MS, 100, 0.25, 1);
	CHECK(cc.comp && cc.last == SDR_CC_DEC_LOSS && cc.rate < 0.25 * r * (1 - p.comp_md) * 1.2,
	      "a loss in the mode halves what it sent: %.1f -> %.1f Mbit/s (sent a quarter)",
	      r / 1e6, cc.rate / 1e6);
	/* after comp_max_ns, the first loss ends it: an ordinary decision */
	for (k = 0; k < 400 && t - cc.comp_at < p.comp_max_ns; k++)
		t = feed(&cc, t, 1, 25 * MS + 10 * MS, 100);
	CHECK(cc.comp && cc.comp_expired == 0, "no loss: still in the mode after %.1f s",
	      (double)(t - cc.comp_at) / 1e9);
	t = feed_held(&cc, t, 1, 25 * MS + 10 * MS, 100, 1, 1);
	CHECK(!cc.comp && cc.comp_expired == 1 && cc.last == SDR_CC_DEC_ECN,
	      "the first loss after comp_max ends the mode (%s)", sdr_cc_event_name(cc.last));
	/* ... and comp_reenter cuts on the queue that stays enter it again */
	t = feed(&cc, t, p.comp_reenter + 1, 25 * MS + 10 * MS, 100);
	CHECK(cc.comp && cc.comp_enters == 2, "re-entered after %u cuts: %" PRIu64 " entries",
	      p.comp_reenter, cc.comp_enters);
	/* the queue gone: it ends at the first interval without CE */
	t = feed(&cc, t, 1, 25 * MS, 0);
	CHECK(!cc.comp, "an interval without CE or queue ends the mode");

	/* a queue that shrinks under the cuts (by comp_shrink of where the run
	 * began, every few cuts), if not from each cut to the next, is drained
	 * by flows that answer: never entered, however much it marks */
	sdr_cc_init(&cc, &p, GBIT, 0);
	t = feed(&cc, 0, 30, 25 * MS, 0);
	for (k = 0; k < 16; k++) { /* 200 ms, 210, 160, 168, 128, ... 35 ms: a
				      * noisy drain, up every other cut */
		double q = 200e6 * pow(0.8, k / 2) * (k % 2 ? 1.05 : 1);

		t = feed(&cc, t, 1, 25 * MS + (uint64_t)q, 100);
	}
	CHECK(cc.comp_enters == 0 && cc.dec_ecn >= 14 && cc.mark >= p.comp_alpha,
	      "a shrinking marked queue: %" PRIu64 " entries in %" PRIu64 " cuts (mark %.2f)",
	      cc.comp_enters, cc.dec_ecn, cc.mark);

	/* no ECN: a standing queue below comp_delay_frac of the base RTT is
	 * what a loaded host's RTT samples look like - cut on, never entered;
	 * one above it, entered after comp_enter cuts */
	sdr_cc_init(&cc, &p, GBIT, 0);
	t = feed(&cc, 0, 30, 25 * MS, 0);
	t = feed(&cc, t, 20, 25 * MS + 10 * MS, 0);
	CHECK(cc.comp_enters == 0 && cc.dec_delay >= 10,
	      "no ECN, 10 ms of queue: %" PRIu64 " delay cuts, %" PRIu64 " entries", cc.dec_delay,
	      cc.comp_enters);
	for (k = 0; k < 10 && !cc.comp; k++)
		t = feed(&cc, t, 1, 25 * MS + 20 * MS, 0);
	CHECK(cc.comp && k == p.comp_enter - 1,
	      "no ECN, 20 ms of queue: entered after %u more cuts", k);
}

/* Loss reacts at most once per interval (one round trip), as TCP's one
 * reduction per window: a burst of losses of packets sent before the cut,
 * however many intervals their detection spans, cuts once, by the
 * interval's loss fraction; a stall's probes (losses, no ACK) do not cut
 * one by one; a packet taken for lost within a base RTT of leaving (a timer
 * or NACK ahead of its delivery) is no loss signal. */
static void test_loss_once(void)
{
	struct sdr_cc_params p;
	struct sdr_cc cc;
	uint64_t t = 0, r0, d0, sent;

	sdr_cc_params_default(&p);
	sdr_cc_init(&cc, &p, GBIT, t);
	t = feed(&cc, t, 40, 10 * MS, 0);
	/* a burst: 100 packets sent over 1 ms, 50 of them lost, found lost
	 * one by one over the next two intervals among fresh ACKs */
	r0 = sdr_cc_rate(&cc);
	d0 = cc.dec_loss;
	sent = t;
	for (unsigned i = 0; i < 50; i++) {
		t += 400 * US;
		sdr_cc_on_loss_sent(&cc, t + 10 * MS, 1, sent + i * 10 * US);
		sdr_cc_on_sent(&cc, 1000);
		sdr_cc_on_ack(&cc, t + 10 * MS, 10 * MS, 10, 0, 10000);
	}
	t += 10 * MS;
	printf("burst of 50 lost: %" PRIu64 " loss cut(s), rate %.1f -> %.1f Mbit/s, "
	       "%" PRIu64 " of the losses stale\n",
	       cc.dec_loss - d0, r0 / 1e6, sdr_cc_rate(&cc) / 1e6, cc.stale_lost);
	CHECK(cc.dec_loss - d0 == 1, "burst of 50: %" PRIu64 " loss cuts", cc.dec_loss - d0);
	CHECK(sdr_cc_rate(&cc) >= r0 * (1 - p.loss_md) - 2, "cut %" PRIu64 " -> %" PRIu64, r0,
	      sdr_cc_rate(&cc));
	t = feed(&cc, t, 4, 10 * MS, 0);

	/* the cut is the interval's loss fraction when below loss_md */
	r0 = sdr_cc_rate(&cc);
	d0 = cc.dec_loss;
	sdr_cc_on_loss_sent(&cc, t, 10, t - 10 * MS);
	t = feed(&cc, t, 1, 10 * MS, 0); /* 100 acknowledged, 10 lost */
	CHECK(cc.dec_loss - d0 == 1 && NEAR(sdr_cc_rate(&cc), (double)r0 * (1 - 10.0 / 110)),
	      "cut by the loss fraction: %" PRIu64 " -> %" PRIu64, r0, sdr_cc_rate(&cc));
	t = feed(&cc, t, 4, 10 * MS, 0);

	/* a stall: no ACK for 2 s, a probe found lost every 200 ms */
	r0 = sdr_cc_rate(&cc);
	d0 = cc.dec_loss;
	for (unsigned i = 0; i < 10; i++) {
		t += 200 * MS;
		sdr_cc_on_loss_sent(&cc, t, 1, t - 200 * MS);
	}
	CHECK(cc.dec_loss - d0 <= 1, "stall: %" PRIu64 " cuts", cc.dec_loss - d0);
	t = feed(&cc, t, 1, 10 * MS, 0);
	printf("stall of 2 s: %" PRIu64 " loss cut(s), rate %.1f -> %.1f Mbit/s\n",
	       cc.dec_loss - d0, r0 / 1e6, sdr_cc_rate(&cc) / 1e6);
	CHECK(cc.dec_loss - d0 <= 1 && sdr_cc_rate(&cc) >= r0 * (1 - p.loss_md) - 2,
	      "after the stall: %" PRIu64 " cuts, rate %" PRIu64, cc.dec_loss - d0,
	      sdr_cc_rate(&cc));
	t = feed(&cc, t, 4, 10 * MS, 0);

	/* taken for lost 2 ms after leaving, on a 10 ms path: no signal */
	d0 = cc.stale_lost;
	sdr_cc_on_loss_sent(&cc, t, 50, t - 2 * MS);
	CHECK(cc.stale_lost - d0 == 50, "premature losses counted");
}

/* Random loss is not congestion. SR sends a unit (16 packets) again when
 * any of its packets is lost and tells the controller so
 * (sdr_cc_on_loss_unit()): 1 % random packet loss loses 15 % of the units,
 * 2 % loses 28 %. Run @p ivs intervals of one 25 ms round trip, each with
 * @p units units, each lost with the probability that one of its 16
 * packets is (exact: a fixed xorshift sequence, no clock); returns the
 * loss cuts. */
static uint64_t random_loss(double pkt_loss, unsigned units, unsigned ivs, double *rate)
{
	struct sdr_cc cc;
	uint64_t t = 0, x = 88172645463325252ull, rtt = 25 * MS;
	double pu = 1 - pow(1 - pkt_loss, 16);

	sdr_cc_init(&cc, NULL, GBIT, 0);
	for (unsigned i = 0; i < ivs; i++) {
		sdr_cc_on_sent(&cc, (uint32_t)(cc.rate * 25e-3 / 8)); /* not app-limited */
		for (unsigned u = 0; u < units; u++) {
			t += rtt / units;
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			if ((double)(x >> 11) / 9007199254740992.0 < pu)
				sdr_cc_on_loss_unit(&cc, t, 16, t - rtt);
			else
				sdr_cc_on_ack(&cc, t, rtt, 16, 0, 16 * 4096);
		}
	}
	*rate = (double)sdr_cc_rate(&cc);
	return cc.dec_loss;
}

static void test_random_loss(void)
{
	double r;
	uint64_t n;

	/* a fast QP: 40 units a round trip */
	n = random_loss(0.01, 40, 200, &r);
	printf("random loss 1 %%, 40 units a round trip: %" PRIu64 " loss cuts in 200, rate %.0f "
	       "Mbit/s\n",
	       n, r / 1e6);
	CHECK(n == 0, "1 %% random loss, 40 units an RTT: %" PRIu64 " loss cuts", n);
	n = random_loss(0.02, 40, 200, &r);
	printf("random loss 2 %%, 40 units a round trip: %" PRIu64 " loss cuts in 200, rate %.0f "
	       "Mbit/s\n",
	       n, r / 1e6);
	CHECK(n == 0, "2 %% random loss, 40 units an RTT: %" PRIu64 " loss cuts", n);
	/* a slow one: 2 units a round trip, where one lost unit is half of
	 * an interval's packets (the cut of every such interval took a QP
	 * to its floor) */
	n = random_loss(0.01, 2, 400, &r);
	printf("random loss 1 %%, 2 units a round trip: %" PRIu64 " loss cuts in 400\n", n);
	CHECK(n == 0, "1 %% random loss, 2 units an RTT: %" PRIu64 " loss cuts", n);
	/* 10 % of the packets (81 % of the units) is above loss_frac */
	n = random_loss(0.10, 40, 50, &r);
	printf("random loss 10 %%, 40 units a round trip: %" PRIu64 " loss cuts in 50, rate %.0f "
	       "Mbit/s\n",
	       n, r / 1e6);
	CHECK(n >= 10, "10 %% loss, 40 units an RTT: only %" PRIu64 " loss cuts", n);
}

int main(int argc, char **argv)
{
	/* --delay: also the bottleneck without ECN marking (by hand: about
	 * 40 s of simulated traffic more, docs/congestion.md) */
	bool delay = argc > 1 && strcmp(argv[1], "--delay") == 0;
	struct sdr_cc_params noisy; /* --cc-noise-probe on */

	sdr_cc_params_default(&noisy);
	noisy.noise_probe_k = 2;

	test_reactions();
	test_span();
	test_competitive();
	test_loss_once();
	test_random_loss();
	test_alone();
	test_floor();
	for (unsigned n = 2; n <= 8; n *= 2) {
		test_fairness("delay=12.5ms,rate=1gbit,buffer=4MB,ecn=100KB", n, "ECN+delay",
			      STRICT, 0, NULL);
		if (delay)
			test_fairness("delay=12.5ms,rate=1gbit,buffer=4MB", n, "delay", LOOSE, 0,
				      NULL);
	}
	/* the bottleneck marking the queue a frame leaves behind, not the one
	 * it finds (reported: docs/congestion.md "Re-convergence: what was
	 * tried") */
	for (unsigned n = 2; n <= 8; n *= 2)
		test_fairness("delay=12.5ms,rate=1gbit,buffer=4MB,ecn=100KB,ecnmark=dequeue", n,
			      "ECN deq", REPORT, 0, NULL);
	test_fairness_ceiling(3 * GBIT, NULL, STRICT, "defaults");
	test_fairness_ceiling(GBIT * 3 / 2, NULL, STRICT, "defaults");
	/* ceilings far above the link (a NIC's line rate, or the 10 Gbit/s
	 * default where no rate is set): the step of 0.1 % of a 30 Gbit/s
	 * ceiling is 30 Mbit/s a round trip per flow, and 8 flows' queue
	 * reaches 82 % of the buffer (reported); with ai_ref_k 32
	 * (--cc-ai-ref 32) the step is at most 0.1 % of sqrt(ceiling x 32 x
	 * max(rate, peak)) and the bounds hold (asserted at 30 Gbit/s) */
	{
		struct sdr_cc_params ref;

		sdr_cc_params_default(&ref);
		ref.ai_ref_k = 32;
		test_fairness_ceiling(30 * GBIT, NULL, REPORT, "defaults");
		test_fairness_ceiling(30 * GBIT, &ref, STRICT, "ai_ref_k 32");
		test_fairness_ceiling(10 * GBIT, NULL, REPORT, "defaults");
		test_fairness_ceiling(10 * GBIT, &ref, REPORT, "ai_ref_k 32");
		test_fairness_ceiling(3 * GBIT, &ref, REPORT, "ai_ref_k 32");
	}
	/* host jitter: ACKs processed up to 5 ms late (a level changing every
	 * 50 ms, as on a loaded 2-core host): ECN leads, delay waits above the
	 * noise; the same run with the delay target T alone (ecn_delay_frac and
	 * jit_k 0, the controller before ECN led) for comparison */
	for (unsigned n = 2; n <= 8; n *= 2) {
		struct sdr_cc_params old;

		sdr_cc_params_default(&old);
		old.ecn_delay_frac = 0;
		old.jit_k = 0;
		old.comp_enter = 0;
		test_fairness("delay=12.5ms,rate=1gbit,buffer=4MB,ecn=100KB", n, "jitter", STRICT,
			      5 * MS, NULL);
		test_fairness("delay=12.5ms,rate=1gbit,buffer=4MB,ecn=100KB", n, "jitter,T", REPORT,
			      5 * MS, &old);
		test_fairness("delay=12.5ms,rate=1gbit,buffer=4MB,ecn=100KB", n, "jitter,J", REPORT,
			      5 * MS, &noisy);
	}
	test_capacity_change("delay=12.5ms,rate=1gbit@0s,500mbit@4s,1gbit@8s,buffer=4MB,ecn=100KB",
			     10 * GBIT, 0, 1, 0, NULL, 2, "ECN+delay");
	/* where the rigs run: a ceiling of 3x the link, their 100 Mbit/s
	 * scale, a host's jitter on the ACKs; by default reported (with the
	 * jitter no calm interval, no probe: RTT 20..30 of the restored
	 * capacity at medians of 58 % and 92 %), with noise_probe_k
	 * ("jitter,J") its retaking within 20 RTT asserted */
	{
#define L1 "delay=12.5ms,rate=1gbit@0s,500mbit@4s,1gbit@8s,buffer=4MB,ecn=100KB"
#define L01 "delay=12.5ms,rate=100mbit@0s,50mbit@4s,100mbit@8s,buffer=4MB,ecn=100KB"
		static const char *const l1 = L1, *const l01 = L01;

		test_capacity_change(l1, 3 * GBIT, 0, 1, 0, NULL, 0, "ECN+delay");
		test_capacity_change(l1, 3 * GBIT, 5 * MS, 1, 0, NULL, 0, "jitter");
		test_capacity_change(l1, 3 * GBIT, 5 * MS, 1, 0, &noisy, 1, "jitter,J");
		test_capacity_change(l01, 3 * GBIT / 10, 0, 1, 0, NULL, 1, "ECN+delay");
		test_capacity_change(l01, 3 * GBIT / 10, 0, 1, 0, &noisy, 1, "ECN,J");
		test_capacity_change(l01, 3 * GBIT / 10, 3 * MS, 1, 0, NULL, 0, "jitter");
		test_capacity_change(l01, 3 * GBIT / 10, 3 * MS, 1, 0, &noisy, 1, "jitter,J");
		/* an ACK per unit, as SR sends them (16 packets: the default
		 * --chunk-pkts), and per 4 packets (--chunk-pkts 4): reported.
		 * At 100 Mbit/s a 16-packet unit at a flow's share takes 10 ms
		 * or more, and fewer, later decisions retake less (docs/
		 * congestion.md "The unit and the ACK rate") */
		for (unsigned a = 4; a <= 16; a *= 4) {
			test_capacity_change(l1, 3 * GBIT, 0, a, 0, NULL, 0, "ECN+delay");
			test_capacity_change(l01, 3 * GBIT / 10, 0, a, 0, NULL, 0, "ECN+delay");
			test_capacity_change(l01, 3 * GBIT / 10, 0, a, 0, &noisy, 0, "ECN,J");
		}
		/* as the firmware runs by default: an RTT sample per 16-packet
		 * unit, the delivery and the marks per 4 packets (--cc-ack-pkts
		 * 4: the receiver's ACKs between the units') - within 20 RTT
		 * asserted where the unit's ACK alone is not */
		test_capacity_change(l1, 3 * GBIT, 0, 16, 4, NULL, 1, "ECN+delay");
		test_capacity_change(l01, 3 * GBIT / 10, 0, 16, 4, NULL, 1, "ECN+delay");
		test_capacity_change(l01, 3 * GBIT / 10, 0, 16, 4, &noisy, 0, "ECN,J");
		/* the same two with the bottleneck marking at dequeue */
		test_capacity_change(L1 ",ecnmark=dequeue", 3 * GBIT, 0, 16, 4, NULL, 0, "ECN deq");
		test_capacity_change(L01 ",ecnmark=dequeue", 3 * GBIT / 10, 0, 16, 4, NULL, 0,
				     "ECN deq");
#undef L1
#undef L01
	}
	for (unsigned ecn = 0; ecn < 2; ecn++)
		for (unsigned g = 0; g < 3; g++) {
			static const uint64_t gap[] = {300 * MS, 1000 * MS, 2000 * MS};

			if (ecn && g != 1)
				continue;
			test_beside_reno("delay=12.5ms,rate=1gbit,buffer=4MB,ecn=100KB", ecn, true,
					 gap[g]);
			test_beside_reno("delay=12.5ms,rate=1gbit,buffer=4MB,ecn=100KB", ecn, false,
					 gap[g]);
		}

	free(heap);
	printf("test_cc: %u checks, %u failed\n", t_checks, (unsigned)t_failures);
	return t_failures ? 1 : 0;
}
