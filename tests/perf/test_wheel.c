/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Timing-wheel pacer (common/sdr_wheel.h, the alternative sdr-pacer-bench
 * measures against the token bucket) on a synthetic clock: a backlogged
 * flow never runs ahead of its rate line by more than one frame and keeps
 * its rate exactly over a long run (odd hz/rate); several flows share the
 * wheel fairly; a flow slower than the wheel's horizon is re-filed and not
 * released early; an idle flow earns no credit; a rate change applies from
 * the next frame; the port clamp bounds credit.
 */
#include <stdint.h>
#include <stdio.h>

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
				fprintf(stderr, "flow %u ahead of its rate at t=%llu: %llu B > %.0f + %u\n",
					i, (unsigned long long)t, (unsigned long long)bytes[i], line,
					frame);
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
	 * lives beyond the 1024-slot horizon: served at its rate, never early
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

	CHECK_EQ(early, 0);
	if (t_failures) {
		fprintf(stderr, "test_wheel: %d failure(s)\n", t_failures);
		return 1;
	}
	printf("test_wheel: ok\n");
	return 0;
}
