/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SipHash-2-4 with its 64- and 128-bit outputs (common, pure C): the keyed
 * PRF of "SipHash: a fast short-input PRF" (Aumasson, Bernstein 2012). The
 * daemon derives the restore tokens of its QPs with it (docs/security.md
 * "Restoring a QP"); tests/common/test_siphash.c checks the test vectors.
 */
#ifndef SDR_SIPHASH_H
#define SDR_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

#define SDR_SIPHASH_KEY_LEN 16

/** SipHash-2-4 of @p len bytes at @p in under the 16-byte key @p k: the
 *  64-bit output (the paper's), as an integer (its bytes little-endian). */
uint64_t sdr_siphash24_64(const uint8_t k[SDR_SIPHASH_KEY_LEN], const void *in, size_t len);

/** SipHash-2-4 with 128-bit output (the reference implementation's
 *  variant): 16 bytes into @p out, in the order of its test vectors. */
void sdr_siphash24_128(const uint8_t k[SDR_SIPHASH_KEY_LEN], const void *in, size_t len,
		       uint8_t out[16]);

#endif /* SDR_SIPHASH_H */
