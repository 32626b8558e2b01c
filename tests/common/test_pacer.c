/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Pacer arithmetic (common/sdr_pacer.h) on a synthetic TSC: exact token
 * accounting (no drift over long runs, odd hz/rate ratios), burst bound,
 * frames larger than the bucket, a clock that stands still or goes back,
 * rate changes keep tokens capped, refunds, unpaced = always yes, and the
 * long-run rate of a sender that always wants to send.
 */
#include <stdint.h>
#include <stdio.h>

#include "sdr_pacer.h"
#include "sdr_test.h"

/* Simulate a greedy sender of @frame bytes polling every @step cycles for
 * @cycles cycles; returns bytes sent. */
static uint64_t greedy(struct sdr_pacer *p, uint64_t t0, uint64_t cycles, uint64_t step,
		       uint32_t frame)
{
	uint64_t sent = 0;
	for (uint64_t t = t0; t < t0 + cycles; t += step)
		while (sdr_pacer_take(p, frame, t))
			sent += frame;
	return sent;
}

int main(void)
{
	struct sdr_pacer p = {0};
	const uint64_t hz = 2400000007ull; /* odd on purpose: remainders matter */

	/* unpaced: always allowed, tokens untouched */
	sdr_pacer_set(&p, 0, 65536, hz, 0);
	for (int i = 0; i < 1000; i++)
		CHECK(sdr_pacer_take(&p, 9000, (uint64_t)i));

	/* 1 Gbit/s = 125e6 B/s. Start empty: nothing leaves at t = 0. */
	sdr_pacer_set(&p, 125000000, 65536, hz, 1000);
	p.tokens = 0;
	CHECK(!sdr_pacer_take(&p, 4170, 1000));
	/* after exactly the time for 4170 bytes (rounded up) it may leave */
	uint64_t need = (4170ull * hz + 125000000 - 1) / 125000000;
	CHECK(!sdr_pacer_take(&p, 4170, 1000 + need - 1));
	CHECK(sdr_pacer_take(&p, 4170, 1000 + need));

	/* exact long-run rate: 10 simulated seconds, polled every 10 us,
	 * frames of 4170 B: sent bytes within one frame + one burst of rate*T.
	 * (Above burst/poll interval = 6.5 GB/s the bucket, not the rate,
	 * limits a sender that polls this slowly: that is what a burst bound is.) */
	for (uint64_t rate = 1000; rate <= 6000000000ull; rate *= 7) {
		struct sdr_pacer q = {0};
		sdr_pacer_set(&q, rate, 65536, hz, 0);
		q.tokens = 0;
		uint64_t T = 10 * hz;
		uint64_t step = hz / 100000; /* 10 us polls */
		uint64_t sent = greedy(&q, 1, T, step, 4170);
		long double ideal = (long double)rate * 10.0L;
		long double slack = 4170.0L + 65536.0L + (long double)rate * step / hz;
		if (!((long double)sent <= ideal + slack && (long double)sent + slack >= ideal)) {
			fprintf(stderr, "rate %llu B/s: sent %llu in 10 s, ideal %.0Lf\n",
				(unsigned long long)rate, (unsigned long long)sent, ideal);
			t_failures++;
		}
	}

	/* burst bound: after a long idle time at most burst bytes leave at once */
	sdr_pacer_set(&p, 125000000, 65536, hz, 0);
	p.tokens = 0;
	uint64_t t = 100 * hz; /* 100 s idle (refill is capped at 1 s of dt) */
	uint64_t burst = 0;
	while (sdr_pacer_take(&p, 1000, t))
		burst += 1000;
	CHECK(burst <= 65536 && burst >= 65000);

	/* a frame larger than the bucket leaves when the bucket is full */
	sdr_pacer_set(&p, 125000000, 4096, hz, 0);
	p.tokens = 0;
	CHECK(!sdr_pacer_take(&p, 9000, 1));
	CHECK(sdr_pacer_take(&p, 9000, hz)); /* a full second later: full bucket */
	CHECK_EQ(p.tokens, 0);

	/* a clock that stands still or goes backwards adds nothing */
	sdr_pacer_set(&p, 125000000, 65536, hz, 5000000);
	p.tokens = 100;
	sdr_pacer_refill(&p, 5000000);
	CHECK_EQ(p.tokens, 100);
	sdr_pacer_refill(&p, 4000000);
	CHECK_EQ(p.tokens, 100);
	CHECK_EQ(p.last, 5000000);

	/* refund never exceeds the burst */
	p.tokens = 65000;
	sdr_pacer_refund(&p, 9000);
	CHECK_EQ(p.tokens, 65536);

	/* rate change: tokens capped at the new burst, new rate from now on */
	sdr_pacer_set(&p, 125000000, 65536, hz, 0);
	p.tokens = 65536;
	sdr_pacer_set(&p, 12500000, 8192, hz, 10);
	CHECK_EQ(p.tokens, 8192);
	p.tokens = 0;
	uint64_t sent = greedy(&p, 11, hz, hz / 100000, 1000);
	CHECK(sent <= 12500000 + 8192 + 1000 && sent >= 12500000 - 8192 - 1000);

	/* TSC near 2^64: no overflow in dt * rate (128-bit product) */
	sdr_pacer_set(&p, 50000000000ull, 1u << 30, hz, UINT64_MAX - hz);
	p.tokens = 0;
	sdr_pacer_refill(&p, UINT64_MAX);
	CHECK(p.tokens == (1u << 30)); /* 1 s at 50 GB/s > burst: capped */

	if (t_failures) {
		fprintf(stderr, "test_pacer: %d failures\n", t_failures);
		return 1;
	}
	printf("test_pacer: ok\n");
	return 0;
}
