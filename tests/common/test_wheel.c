/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pacer (common/sdr_wheel.h, what sdr-dpu's workers run) on a synthetic
 * clock.
 * The wheel: a backlogged flow never runs ahead of its rate line by more
 * than one frame and keeps its rate exactly over a long run (odd hz/rate);
 * several flows share the wheel fairly; a flow slower than the wheel's
 * horizon is re-filed and not released early; an idle flow earns no credit;
 * a rate change applies from the next frame; the port clamp bounds credit;
 * timers (arm later, arm earlier, unlink) and the pending check.
 * The scheduler (struct sdr_sched, the worker's loop in miniature): the
 * first 10 frames after idle leave at the rate; a late worker's catch-up is
 * bounded by the slack and frames never leave before their schedule; a rate
 * change moves a queued flow at once; the port gate holds the aggregate and
 * the flows it blocked go first; of 256 flows only the due ones are handed
 * out (visits = frames); a reset flow is gone from every list.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "sdr_wheel.h"
#include "sdr_test.h"

#define NF 5

static unsigned early; /* frames that left before their time */

/* Serve every due flow at each poll; count bytes per flow. Checks that no
 * flow is ever more than one frame above rate x (t - t0). */
static void serve(struct sdr_wheel *w, uint64_t t0, uint64_t t1, uint64_t step, uint32_t frame,
		  const uint64_t *rate, uint64_t *bytes, uint32_t n, uint64_t hz)
{
	uint32_t stash[NF];

	for (uint64_t t = t0; t < t1; t += step) {
		unsigned ns = 0;
		sdr_wheel_advance(w, t);
		for (;;) {
			uint32_t i = sdr_wheel_pop(w);
			if (i == SDR_WHEEL_NIL)
				break;
			if (!sdr_wheel_due(w, i, t)) {
				stash[ns++] = i;
				continue;
			}
			bytes[i] += frame;
			/* the frame leaves at t; the rate line at t allows
			 * rate*(t-t0) bytes, the first frame leaves at t0 */
			/* + two cycles: t_next is the floor of a time whose cycles per
			 * byte are truncated to 2^-32 */
			double line = (double)rate[i] * (double)(t - t0 + 2) / (double)hz;
			if ((double)bytes[i] > line + frame + 1e-6 && !early++)
				fprintf(stderr,
					"flow %u ahead of its rate at t=%llu: %llu B > %.0f + %u\n",
					i, (unsigned long long)t, (unsigned long long)bytes[i],
					line, frame);
			sdr_wheel_sent(w, i, frame);
			sdr_wheel_requeue(w, i);
			CHECK(ns < n);
		}
		for (unsigned k = 0; k < ns; k++)
			sdr_wheel_requeue(w, stash[k]);
	}
}

int main(void)
{
	static struct sdr_wheel w;
	struct sdr_wheel_flow f[NF];
	const uint64_t hz = 2400000007ull; /* odd: fractions matter */
	uint64_t rate[NF] = {125000000, 125000000 / 3, 7777777, 1000000, 1250000000};
	uint64_t bytes[NF] = {0};
	const uint32_t frame = 4174;
	const uint64_t secs = 2, step = 2000;

	/* 1. five flows at different rates, 2 s of virtual time */
	sdr_wheel_init(&w, f, NF, hz, 11, 0);
	for (uint32_t i = 0; i < NF; i++) {
		sdr_wheel_set_rate(&w, i, rate[i]);
		sdr_wheel_schedule(&w, i, 0);
	}
	serve(&w, 0, secs * hz, step, frame, rate, bytes, NF, hz);
	for (uint32_t i = 0; i < NF; i++) {
		/* exact: frames that started by the end = floor(rate*T/frame) + 1 */
		uint64_t want = (rate[i] * secs) / frame + 1;
		uint64_t got = bytes[i] / frame;
		if (got + 1 < want || got > want) {
			fprintf(stderr, "flow %u: %llu frames, want %llu\n", i,
				(unsigned long long)got, (unsigned long long)want);
			t_failures++;
		}
	}
	/* flow 3 (1 MB/s, one frame per 4.17 ms = ~4900 slots of 2048 cycles)
	 * lives beyond the 4096-slot horizon: served at its rate, never early
	 * (the per-frame CHECK in serve() covers "never early"). */
	CHECK(bytes[3] >= 2 * 1000000 - frame);

	/* 2. idle earns no credit: after 1 s without backlog, a flow's next
	 * frames still leave at its rate, not in a burst. */
	{
		uint64_t t = secs * hz + hz, b2[NF] = {0}, r2[NF] = {0};
		struct sdr_wheel_flow g[1];
		static struct sdr_wheel w2;
		r2[0] = 125000000;
		sdr_wheel_init(&w2, g, 1, hz, 11, 0);
		sdr_wheel_set_rate(&w2, 0, r2[0]);
		sdr_wheel_schedule(&w2, 0, 0);
		serve(&w2, 0, hz / 100, step, frame, r2, b2, 1, hz); /* 10 ms busy */
		/* the flow stays queued in the wheel: pop it out to make it idle */
		sdr_wheel_advance(&w2, t);
		uint32_t i = sdr_wheel_pop(&w2);
		CHECK_EQ(i, 0);
		CHECK(g[0].t_next < t);
		b2[0] = 0;
		sdr_wheel_schedule(&w2, 0, t); /* back after 1 s idle */
		CHECK(g[0].t_next == t);
		serve(&w2, t, t + hz / 100, step, frame, r2, b2, 1, hz);
		CHECK(b2[0] <= 1250000 + frame);
		CHECK(b2[0] >= 1250000 - frame);
	}

	/* 3. rate change: halving the rate halves the bytes of the next 100 ms */
	{
		uint64_t r3[NF] = {125000000}, b3[NF] = {0};
		struct sdr_wheel_flow g[1];
		static struct sdr_wheel w3;
		sdr_wheel_init(&w3, g, 1, hz, 11, 0);
		sdr_wheel_set_rate(&w3, 0, r3[0]);
		sdr_wheel_schedule(&w3, 0, 0);
		serve(&w3, 0, hz / 10, step, frame, r3, b3, 1, hz);
		uint64_t first = b3[0];
		sdr_wheel_set_rate(&w3, 0, r3[0] / 2);
		b3[0] = 0;
		r3[0] /= 2;
		serve(&w3, hz / 10, hz / 5, step, frame, r3, b3, 1, hz);
		CHECK(b3[0] * 2 <= first + 2 * frame);
		CHECK(b3[0] * 2 + 2 * frame >= first);
	}

	/* 4. clamp: a gate idle for long has at most `slack` of credit */
	{
		struct sdr_wheel_flow port = {.cpb_fp = sdr_wheel_cpb(hz, 125000000)};
		sdr_wheel_clamp(&port, hz, 2048);
		CHECK_EQ(port.t_next, hz - 2048);
		port.t_next = hz + 5;
		sdr_wheel_clamp(&port, hz, 2048); /* in the future: untouched */
		CHECK_EQ(port.t_next, hz + 5);
		CHECK_EQ(sdr_wheel_cpb(hz, 0), 0);
	}

	/* 5. timers: arm later is lazy, arm earlier moves, unlink removes */
	{
		static struct sdr_wheel tw;
		struct sdr_wheel_flow tf[3];
		uint64_t t0 = 1000000, slot = 1u << 11;
		uint32_t got[3], n = 0, i;

		sdr_wheel_init(&tw, tf, 3, hz, 11, t0);
		sdr_wheel_arm(&tw, 0, t0 + 100 * slot);
		sdr_wheel_arm(&tw, 1, t0 + 50 * slot);
		sdr_wheel_arm(&tw, 2, t0 + 10 * slot);
		sdr_wheel_arm(&tw, 0, t0 + 200 * slot); /* later: noted */
		sdr_wheel_arm(&tw, 1, t0 + 5 * slot);   /* earlier: moved */
		sdr_wheel_unlink(&tw, 2);
		CHECK(!tf[2].queued);
		CHECK(sdr_wheel_pending(&tw, t0, 6 * slot));
		CHECK(!sdr_wheel_pending(&tw, t0, 3 * slot));
		sdr_wheel_advance(&tw, t0 + 20 * slot);
		while ((i = sdr_wheel_pop(&tw)) != SDR_WHEEL_NIL)
			got[n++] = i;
		CHECK_EQ(n, 1);
		CHECK_EQ(got[0], 1);
		sdr_wheel_advance(&tw, t0 + 150 * slot); /* 0's old slot: re-filed, not due */
		CHECK_EQ(sdr_wheel_pop(&tw), SDR_WHEEL_NIL);
		CHECK(tf[0].queued);
		sdr_wheel_advance(&tw, t0 + 201 * slot);
		CHECK_EQ(sdr_wheel_pop(&tw), 0);
		CHECK_EQ(tw.nready, 0);
	}

	/* 6. the scheduler: one worker, flows on port 0 (1 Gbit/s), port 1
	 * unpaced */
	{
		static struct sdr_sched s;
		enum { NS = 256 };
		static struct sdr_wheel_flow sf[NS];
		const uint64_t r = 125000000 / 4;                                 /* 250 Mbit/s */
		const uint64_t T = sdr_wheel_cycles(sdr_wheel_cpb(hz, r), frame); /* frame time */
		const uint64_t slack = 64 * 1024;
		uint64_t t = 5 * hz, dep[16];
		unsigned nd = 0;
		uint32_t i;

		sdr_sched_init(&s, sf, NS, 2, hz, 11, t);
		sdr_sched_port_rate(&s, 0, 125000000, slack);
		sdr_sched_flow_rate(&s, 0, r, slack);
		/* a. the first frames after idle: one at once, then one per T;
		 * the worker polls every 2000 cycles and the flow wants 12 frames */
		for (uint64_t now = t; nd < 12 && now < t + 20 * T; now += 2000) {
			sdr_sched_begin(&s, now);
			while ((i = sdr_sched_next(&s, now)) != SDR_WHEEL_NIL)
				CHECK_EQ(i, 0);
			/* (every poll may try: a visit outside the wheel, e.g. a packet) */
			s.stall = 0;
			while (nd < 12 && sdr_sched_ready(&s, 0, now)) {
				sdr_sched_charge(&s, 0, frame, now);
				dep[nd++] = now;
			}
			sdr_sched_done(&s, 0, nd < 12);
		}
		CHECK_EQ(nd, 12);
		CHECK_EQ(dep[0], t);
		for (unsigned k = 1; k < nd; k++)
			CHECK(dep[k] >= t + k * T && dep[k] < t + k * T + 2000 + 2,
			      "frame %u at +%llu, T %llu", k, (unsigned long long)(dep[k] - t),
			      (unsigned long long)T);
		/* idle now (done(0)): 1 s later the next frame leaves at once and
		 * the one after it a whole T later: no credit for the second */
		sdr_sched_done(&s, 0, 0);
		CHECK(!sf[0].active && s.nactive[0] == 0);
		t += hz;
		CHECK(sdr_sched_ready(&s, 0, t));
		CHECK_EQ(sdr_sched_charge(&s, 0, frame, t), 1);
		CHECK(!sdr_sched_ready(&s, 0, t + T - 1));
		CHECK(sdr_sched_ready(&s, 0, t + T + 1));

		/* b. a late worker (off the CPU for 100 T) catches up at most the
		 * slack: frames that may leave at once <= slack / frame + 1, and
		 * none before its place in the schedule */
		sdr_sched_charge(&s, 0, frame, t + T + 1);
		{
			uint64_t late = t + 100 * T, sched0 = sf[0].t_next;
			unsigned burst = 0;
			while (sdr_sched_ready(&s, 0, late)) {
				CHECK(sf[0].t_next <= late);
				sdr_sched_charge(&s, 0, frame, late);
				burst++;
			}
			uint64_t slack_cyc = sdr_wheel_cycles(sdr_wheel_cpb(hz, r), slack);
			CHECK(burst <= slack / frame + 2, "caught up %u frames", burst);
			CHECK(burst >= slack / frame, "caught up only %u frames", burst);
			CHECK(sched0 < late - slack_cyc);
		}
		sdr_sched_done(&s, 0, 0);

		/* c. a rate change takes effect at once: a flow queued one second
		 * ahead at 33 kbyte/s moves to its new, earlier time */
		t += 2 * hz;
		sdr_sched_flow_rate(&s, 1, frame, slack); /* 1 frame per second */
		CHECK(sdr_sched_ready(&s, 1, t));
		sdr_sched_charge(&s, 1, frame, t);
		s.stall = 0;
		CHECK(!sdr_sched_ready(&s, 1, t + 1) && s.stall);
		sdr_sched_done(&s, 1, 1); /* backlogged: filed a second ahead */
		CHECK(sf[1].queued && sf[1].where < SDR_WHEEL_SLOTS);
		sdr_sched_flow_rate(&s, 1, r, slack);
		CHECK_EQ(sf[1].t_next, t + T);
		{
			uint32_t got = SDR_WHEEL_NIL;
			for (uint64_t now = t; now <= t + T + 4096 && got == SDR_WHEEL_NIL;
			     now += 512) {
				sdr_sched_begin(&s, now);
				got = sdr_sched_next(&s, now);
				if (got != SDR_WHEEL_NIL)
					CHECK(now >= t + T && now < t + T + 512 + 1);
			}
			CHECK_EQ(got, 1);
			sdr_sched_done(&s, 1, 0);
		}

		/* d. 256 paced flows: only due ones are handed out, one frame per
		 * visit, and each keeps its rate; over 20 ms of 1 us polls */
		{
			static uint64_t bytes[NS];
			uint64_t visits = 0, frames = 0, t1 = t + 3 * hz, end = t1 + hz / 50;
			const uint64_t fr = 1250000; /* 10 Mbit/s each, 2.56 Gbit/s in all */

			sdr_sched_port_rate(&s, 0, 0, slack); /* port unpaced here */
			for (uint32_t k = 0; k < NS; k++) {
				sdr_sched_flow_reset(&s, k, 0, t1);
				sdr_sched_flow_rate(&s, k, fr, slack);
				sdr_sched_done(&s, k, 1); /* all backlogged */
			}
			for (uint64_t now = t1; now < end; now += hz / 1000000) {
				sdr_sched_begin(&s, now);
				while ((i = sdr_sched_next(&s, now)) != SDR_WHEEL_NIL) {
					visits++;
					s.stall = 0;
					CHECK_OR_BREAK(sdr_sched_ready(&s, i, now));
					sdr_sched_charge(&s, i, frame, now);
					bytes[i] += frame;
					frames++;
					CHECK_OR_BREAK(!sdr_sched_ready(&s, i, now));
					sdr_sched_done(&s, i, 1);
				}
			}
			CHECK_EQ(visits, frames);
			for (uint32_t k = 0; k < NS; k++) {
				uint64_t want = fr * (end - t1) / hz;
				if (bytes[k] + frame < want || bytes[k] > want + frame) {
					CHECK(0, "flow %u: %llu bytes, want %llu", k,
					      (unsigned long long)bytes[k],
					      (unsigned long long)want);
					break;
				}
			}
			for (uint32_t k = 0; k < NS; k++)
				sdr_sched_flow_reset(&s, k, 0, end);
			CHECK_EQ(s.wheel.nready, 0);
			CHECK_EQ(s.nactive[0], 0);
			for (uint32_t k = 0; k < SDR_WHEEL_SLOTS; k++)
				CHECK_OR_BREAK(s.wheel.head[k] == SDR_WHEEL_NIL);
			t = end;
		}

		/* e. the port gate: 4 unpaced flows under a 1 Gbit/s port; the
		 * aggregate keeps the port rate, flows blocked on it wait in its
		 * list and go first when it is due */
		{
			uint64_t pb = 0, t2 = t + hz, end = t2 + hz / 100;
			unsigned blocked_seen = 0;

			sdr_sched_port_rate(&s, 0, 125000000, slack);
			s.port[0].t_next = t2;
			for (uint32_t k = 0; k < 4; k++) {
				sdr_sched_flow_reset(&s, k, 0, t2);
				sdr_sched_flow_rate(&s, k, 0, slack);
				sdr_sched_done(&s, k, 1);
			}
			for (uint64_t now = t2; now < end; now += 2000) {
				sdr_sched_begin(&s, now);
				while ((i = sdr_sched_next(&s, now)) != SDR_WHEEL_NIL) {
					s.stall = 0;
					while (sdr_sched_ready(&s, i, now)) {
						sdr_sched_charge(&s, i, frame, now);
						pb += frame;
					}
					CHECK_OR_BREAK(s.stall);
					sdr_sched_done(&s, i, 1);
				}
				if (s.bhead[0] != SDR_WHEEL_NIL)
					blocked_seen++;
			}
			uint64_t want = 125000000ull * (end - t2) / hz;
			CHECK(pb >= want && pb <= want + 2 * frame + slack,
			      "port: %llu bytes, want %llu", (unsigned long long)pb,
			      (unsigned long long)want);
			CHECK(blocked_seen > 0);
			/* a worker may sleep while the flows only wait for a port gate
			 * that is not due before the sleep ends (not: while there are
			 * flows waiting) */
			{
				uint64_t now = end;
				sdr_sched_begin(&s, now);
				while ((i = sdr_sched_next(&s, now)) != SDR_WHEEL_NIL) {
					while (sdr_sched_ready(&s, i, now))
						sdr_sched_charge(&s, i, frame, now);
					sdr_sched_done(&s, i, 1);
				}
				sdr_sched_begin(&s, now);
				while ((i = sdr_sched_next(&s, now)) != SDR_WHEEL_NIL)
					sdr_sched_done(&s, i, 1);
				CHECK(s.bhead[0] != SDR_WHEEL_NIL && s.wheel.nready == 0);
				uint64_t gap = s.port[0].t_next - now;
				CHECK(gap > 1000);
				CHECK(!sdr_sched_pending(&s, now, gap - 1000));
				CHECK(sdr_sched_pending(&s, now, gap));
			}
		}
	}

	CHECK_EQ(early, 0);
	if (t_failures) {
		fprintf(stderr, "test_wheel: %d failure(s)\n", t_failures);
		return 1;
	}
	printf("test_wheel: ok\n");
	return 0;
}
