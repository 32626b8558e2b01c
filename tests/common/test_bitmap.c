/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of common/sdr_bitmap.h against a naive one-byte-per-bit
 * reference: set/test/count/range_full/first_zero on random bitmaps of
 * random lengths (with garbage past the end), and the chunk coalescing rule
 * with a short last chunk.
 */
#include <string.h>

#include "sdr_bitmap.h"
#include "sdr_test.h"

#define MAX_BITS 3000

static uint64_t bm[SDR_BITMAP_WORDS(MAX_BITS) + 1];
static uint8_t ref[MAX_BITS + 64];

/* Fill ref[0..nbits) with density @p pct percent and mirror it into bm;
 * bits past nbits in the last word get random garbage (must be ignored). */
static void make_random(uint32_t nbits, unsigned pct)
{
	memset(bm, 0, sizeof(bm));
	for (uint32_t i = 0; i < nbits; i++) {
		ref[i] = t_below(100) < pct;
		if (ref[i])
			bm[i / 64] |= UINT64_C(1) << (i % 64);
	}
	for (uint32_t i = nbits; i < SDR_BITMAP_WORDS(nbits) * 64; i++)
		if (t_below(2))
			bm[i / 64] |= UINT64_C(1) << (i % 64);
}

static uint32_t ref_count(uint32_t nbits)
{
	uint32_t c = 0;
	for (uint32_t i = 0; i < nbits; i++)
		c += ref[i];
	return c;
}

static int ref_range_full(uint32_t first, uint32_t n)
{
	for (uint32_t i = first; i < first + n; i++)
		if (!ref[i])
			return 0;
	return 1;
}

static uint32_t ref_first_zero(uint32_t nbits)
{
	for (uint32_t i = 0; i < nbits; i++)
		if (!ref[i])
			return i;
	return nbits;
}

static void test_words_macro(void)
{
	CHECK(SDR_BITMAP_WORDS(0) == 0);
	CHECK(SDR_BITMAP_WORDS(1) == 1);
	CHECK(SDR_BITMAP_WORDS(64) == 1);
	CHECK(SDR_BITMAP_WORDS(65) == 2);
	CHECK(SDR_BITMAP_WORDS(262144) == 4096);
}

static void test_set_test(void)
{
	uint64_t b[4] = {0};

	CHECK(sdr_bit_set(b, 0) == 1);
	CHECK(sdr_bit_set(b, 0) == 0);
	CHECK(sdr_bit_set(b, 63) == 1);
	CHECK(sdr_bit_set(b, 64) == 1);
	CHECK(sdr_bit_set(b, 255) == 1);
	CHECK(b[0] == (UINT64_C(1) | UINT64_C(1) << 63));
	CHECK(b[1] == 1 && b[2] == 0 && b[3] == UINT64_C(1) << 63);
	CHECK(sdr_bit_test(b, 0) && sdr_bit_test(b, 63) && sdr_bit_test(b, 64) &&
	      sdr_bit_test(b, 255));
	CHECK(!sdr_bit_test(b, 1) && !sdr_bit_test(b, 62) && !sdr_bit_test(b, 65) &&
	      !sdr_bit_test(b, 254));
	/* ABI: bit i is bit i%8 of byte i/8 on a little-endian host */
	{
		uint64_t c[2] = {0};
		const uint8_t *bytes = (const uint8_t *)c;

		sdr_bit_set_shared(c, 77);
		CHECK(bytes[77 / 8] == (1u << (77 % 8)));
		CHECK(sdr_bitmap_load_shared(c, 1) == UINT64_C(1) << 13);
		CHECK(sdr_bitmap_load_shared(c, 0) == 0);
		sdr_bit_set_shared(c, 77); /* idempotent */
		CHECK(c[1] == UINT64_C(1) << 13);
	}
}

static void test_random_ops(void)
{
	for (int iter = 0; iter < 4000; iter++) {
		uint32_t nbits = (uint32_t)t_range(1, MAX_BITS);
		static const unsigned dens[] = {0, 1, 10, 50, 90, 99, 100};
		unsigned pct = dens[t_below(sizeof(dens) / sizeof(dens[0]))];

		make_random(nbits, pct);
		CHECK_OR_BREAK(sdr_bitmap_count(bm, nbits) == ref_count(nbits));
		CHECK_OR_BREAK(sdr_bitmap_first_zero(bm, nbits) == ref_first_zero(nbits));
		for (int k = 0; k < 20; k++) {
			uint32_t first = (uint32_t)t_below(nbits + 1);
			uint32_t n = (uint32_t)t_below(nbits - first + 1);
			uint32_t i = (uint32_t)t_below(nbits);

			CHECK_OR_BREAK(sdr_bitmap_range_full(bm, first, n) ==
				       ref_range_full(first, n));
			CHECK_OR_BREAK(sdr_bit_test(bm, i) == ref[i]);
			/* count of a prefix */
			CHECK_OR_BREAK(sdr_bitmap_count(bm, first) == ref_count(first));
		}
		/* set random bits: return value and effect */
		for (int k = 0; k < 10; k++) {
			uint32_t i = (uint32_t)t_below(nbits);
			int was = ref[i];

			CHECK_OR_BREAK(sdr_bit_set(bm, i) == !was);
			ref[i] = 1;
			CHECK_OR_BREAK(sdr_bit_test(bm, i));
			CHECK_OR_BREAK(sdr_bitmap_count(bm, nbits) == ref_count(nbits));
		}
		/* a fully set prefix: first_zero at the end, range_full over all */
		if (iter % 7 == 0) {
			for (uint32_t i = 0; i < nbits; i++) {
				ref[i] = 1;
				sdr_bit_set(bm, i);
			}
			CHECK_OR_BREAK(sdr_bitmap_first_zero(bm, nbits) == nbits);
			CHECK_OR_BREAK(sdr_bitmap_range_full(bm, 0, nbits));
			CHECK_OR_BREAK(sdr_bitmap_count(bm, nbits) == nbits);
		}
		BAIL_IF_MANY();
	}
}

/* Exhaustive-ish edges of range_full around word boundaries. */
static void test_range_edges(void)
{
	uint64_t b[3];

	for (uint32_t hole = 0; hole < 192; hole++) {
		memset(b, 0xFF, sizeof(b));
		b[hole / 64] &= ~(UINT64_C(1) << (hole % 64));
		for (uint32_t first = 0; first < 192; first += 7) {
			for (uint32_t n = 0; first + n <= 192; n += 5) {
				int want = !(hole >= first && hole < first + n);
				CHECK_OR_BREAK(sdr_bitmap_range_full(b, first, n) == want);
			}
		}
		CHECK_OR_BREAK(sdr_bitmap_first_zero(b, 192) == hole);
		CHECK_OR_BREAK(sdr_bitmap_first_zero(b, hole) == hole);
		CHECK_OR_BREAK(sdr_bitmap_count(b, 192) == 191);
	}
}

static int64_t ref_chunk_done(uint32_t pkt, uint32_t ppc, uint32_t npkts)
{
	uint32_t chunk = pkt / ppc;
	for (uint32_t i = chunk * ppc; i < (chunk + 1) * ppc && i < npkts; i++)
		if (!ref[i])
			return -1;
	return chunk;
}

static void test_chunk_done(void)
{
	/* fixed case: 10 packets, 4 per chunk -> chunks {0-3} {4-7} {8,9} */
	{
		uint64_t b[1] = {0};

		for (uint32_t i = 0; i < 10; i++)
			sdr_bit_set(b, i == 9 ? 8 : i); /* everything but 9 */
		CHECK(sdr_bitmap_chunk_done(b, 3, 4, 10) == 0);
		CHECK(sdr_bitmap_chunk_done(b, 7, 4, 10) == 1);
		CHECK(sdr_bitmap_chunk_done(b, 8, 4, 10) == -1);
		sdr_bit_set(b, 9);
		CHECK(sdr_bitmap_chunk_done(b, 9, 4, 10) == 2);
		CHECK(sdr_bitmap_chunk_done(b, 8, 4, 10) == 2);
		/* message of 9 packets: last chunk {8} alone; bit 9 is not ours */
		b[0] &= ~(UINT64_C(1) << 9);
		CHECK(sdr_bitmap_chunk_done(b, 8, 4, 9) == 2);
		/* one packet per chunk */
		CHECK(sdr_bitmap_chunk_done(b, 5, 1, 10) == 5);
		CHECK(sdr_bitmap_chunk_done(b, 9, 1, 10) == -1);
	}
	/* random: packets arrive one by one in random order; chunk_done says
	 * "done" exactly once per chunk, when its last packet lands */
	for (int iter = 0; iter < 500; iter++) {
		uint32_t npkts = (uint32_t)t_range(1, 2000);
		uint32_t ppc = (uint32_t)t_range(1, 20);
		uint32_t nchunks = (npkts + ppc - 1) / ppc;
		static uint32_t order[2000];
		static uint8_t seen_done[2000];
		uint32_t done_count = 0;

		memset(bm, 0, sizeof(bm));
		memset(ref, 0, sizeof(ref));
		memset(seen_done, 0, sizeof(seen_done));
		/* garbage past the message must not count */
		for (uint32_t i = npkts; i < SDR_BITMAP_WORDS(npkts) * 64; i++)
			if (t_below(2))
				bm[i / 64] |= UINT64_C(1) << (i % 64);
		for (uint32_t i = 0; i < npkts; i++)
			order[i] = i;
		for (uint32_t i = npkts - 1; i > 0; i--) {
			uint32_t j = (uint32_t)t_below(i + 1), t = order[i];
			order[i] = order[j];
			order[j] = t;
		}
		for (uint32_t k = 0; k < npkts; k++) {
			uint32_t p = order[k];
			int64_t got, want;

			CHECK_OR_BREAK(sdr_bit_set(bm, p) == 1);
			ref[p] = 1;
			got = sdr_bitmap_chunk_done(bm, p, ppc, npkts);
			want = ref_chunk_done(p, ppc, npkts);
			CHECK_OR_BREAK(got == want);
			if (got >= 0) {
				CHECK_OR_BREAK(got == p / ppc && !seen_done[got]);
				seen_done[got] = 1;
				done_count++;
			}
		}
		CHECK_OR_BREAK(done_count == nchunks);
		BAIL_IF_MANY();
	}
}

int main(void)
{
	t_seed("test_bitmap", 0x4249544D);
	test_words_macro();
	test_set_test();
	test_random_ops();
	test_range_edges();
	test_chunk_done();
	return t_finish("test_bitmap");
}
