/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * GF(2^8) dot products with the x86 GFNI instruction VGF2P8AFFINEQB
 * (AVX-512), for the Reed-Solomon backend (sdr_ec_isal.c): multiplying a
 * byte by a constant c of GF(2^8) is linear over GF(2), so it is one 8x8
 * bit matrix, and one instruction applies it to 64 bytes. ISA-L 2.30 (the
 * version Debian 12 ships) multiplies with two table look-ups (VPSHUFB) per
 * nibble instead. Private to the codec; on other architectures, or on a CPU
 * without AVX-512BW and GFNI, sdr_ec_gfni_usable() is 0 and nothing else
 * may be called.
 */
#ifndef SDR_EC_GFNI_H
#define SDR_EC_GFNI_H

#include <stddef.h>
#include <stdint.h>

/** 1 when this CPU (and OS) runs the kernels below. */
int sdr_ec_gfni_usable(void);

/** The bit matrix of "multiply by @p c" in GF(2^8), polynomial 0x11D (the
 *  field of ISA-L and of sdr_ec.h), in VGF2P8AFFINEQB's layout. */
uint64_t sdr_ec_gfni_matrix(uint8_t c);

/** dst[r] = sum over j < k of coef(r, j) * src[j], for r < rows, each @p len
 *  bytes; mat[r * k + j] = sdr_ec_gfni_matrix(coef(r, j)). dst must not
 *  overlap src. */
void sdr_ec_gfni_dot(size_t len, unsigned k, unsigned rows, const uint64_t *mat,
		     const uint8_t *const *src, uint8_t *const *dst);

/** dst[r] ^= coef(r, i) * src, for r < rows (the term of source @p i);
 *  mat as above. */
void sdr_ec_gfni_mad(size_t len, unsigned k, unsigned rows, unsigned i, const uint64_t *mat,
		     const uint8_t *src, uint8_t *const *dst);

#endif /* SDR_EC_GFNI_H */
