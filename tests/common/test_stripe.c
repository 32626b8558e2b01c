/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of the stripe map of multi-channel QPs (common/sdr_stripe.h,
 * shared by the firmware's prim layer and libsdr): for random message
 * lengths L, channels W 1..8 and stripes S, the W virtual messages
 * [0, owned(L, W, c, S)) map one to one onto [0, L), each byte of [0, L)
 * exactly once, in order inside a channel, a stripe's bytes contiguous; the
 * extent is the last real byte + 1; W 1 is the identity.
 */
#include <string.h>

#include "sdr_stripe.h"
#include "sdr_test.h"

#define MAX_LEN (1u << 16)

/* CHECK, then leave the loop (the condition has no side effect) */
#define CHECK_BRK(cond, ...)              \
	{                                 \
		CHECK(cond, __VA_ARGS__); \
		if (!(cond))              \
			break;            \
	}

static uint8_t hit[MAX_LEN];

/* One (L, W, S): every byte of [0, L) once, every channel's map increasing
 * and inside [0, L); owned() sums to L. */
static void check_partition(uint32_t len, uint32_t w, uint32_t s)
{
	uint64_t sum = 0;

	memset(hit, 0, len);
	for (uint32_t c = 0; c < w; c++) {
		struct sdr_stripe m = {w, c, s};
		uint64_t owned = sdr_stripe_owned(len, w, c, s), prev = 0;

		sum += owned;
		for (uint64_t v = 0; v < owned; v++) {
			uint64_t r = sdr_stripe_real(&m, v);

			CHECK_BRK(r < len, "L %u W %u c %u S %u: v %llu -> %llu", len, w, c, s,
				  (unsigned long long)v, (unsigned long long)r);
			CHECK_BRK(v == 0 || r > prev, "not increasing");
			/* its stripe is c mod W; within a stripe the bytes are contiguous */
			CHECK_BRK(w <= 1 || (r / s) % w == c, "byte on another's stripe");
			CHECK_BRK(v == 0 || v % s == 0 || r == prev + 1, "stripe not contiguous");
			CHECK_BRK(!hit[r], "byte %llu twice", (unsigned long long)r);
			hit[r] = 1;
			prev = r;
		}
		CHECK(sdr_stripe_extent(&m, owned) == (owned ? prev + 1 : 0));
		BAIL_IF_MANY();
	}
	CHECK(sum == len, "L %u W %u S %u: owned sums to %llu", len, w, s, (unsigned long long)sum);
	for (uint32_t i = 0; i < len; i++)
		CHECK_BRK(hit[i], "L %u W %u S %u: byte %u of no channel", len, w, s, i);
}

static void test_identity(void)
{
	struct sdr_stripe z = {0, 0, 0}, one = {1, 0, 4096};

	for (int i = 0; i < 1000; i++) {
		uint64_t v = t_rnd() >> 4;
		CHECK_EQ(sdr_stripe_real(&z, v), v);
		CHECK_EQ(sdr_stripe_real(&one, v), v);
		CHECK_EQ(sdr_stripe_owned(v, 1, 0, 4096), v);
		CHECK_EQ(sdr_stripe_extent(&z, v), v);
	}
}

static void test_random(void)
{
	static const uint32_t chunks[] = {256, 1024, 2048, 4096, 8192};

	for (int i = 0; i < 3000; i++) {
		uint32_t w = (uint32_t)t_range(1, SDR_CHANNELS_MAX);
		uint32_t s = chunks[t_below(5)] * (uint32_t)t_range(1, 3);
		uint32_t len = (uint32_t)t_range(1, MAX_LEN);

		if (t_below(4) == 0) /* stripe boundaries and their neighbours */
			len = (uint32_t)(t_range(1, MAX_LEN / s) * s + t_range(0, 2)) - 1;
		if (len == 0 || len > MAX_LEN)
			len = s;
		check_partition(len, w, s);
		BAIL_IF_MANY();
	}
}

/* The small cases, every length: L 1 .. 3 W S with S 4, W 1..8 */
static void test_small(void)
{
	for (uint32_t w = 1; w <= SDR_CHANNELS_MAX; w++)
		for (uint32_t len = 1; len <= 3 * w * 4; len++)
			check_partition(len, w, 4);
}

/* A channel owns a byte of every message longer than (W - 1) S (libsdr's
 * rule for a multi-channel message), and not all of them own one below it */
static void test_min_len(void)
{
	for (uint32_t w = 2; w <= SDR_CHANNELS_MAX; w++)
		for (uint32_t s = 1024; s <= 4096; s *= 2) {
			uint32_t min = (w - 1) * s + 1;
			for (uint32_t c = 0; c < w; c++)
				CHECK(sdr_stripe_owned(min, w, c, s) > 0);
			CHECK(sdr_stripe_owned(min - 1, w, w - 1, s) == 0);
		}
}

int main(void)
{
	t_seed("test_stripe", 0x53545250);
	test_identity();
	test_small();
	test_random();
	test_min_len();
	return t_finish("test_stripe");
}
