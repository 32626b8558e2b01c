/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reference erasure coding for the tests: GF(2^8) with polynomial 0x11D
 * (as ISA-L) from log/exp tables built at run time, the Cauchy generator
 * from its formula, byte-at-a-time encode and decode by full k x k
 * Gauss-Jordan inversion. Deliberately simple and independent of ISA-L and
 * of common/sdr_ec*.c, so that comparing them is a real cross-check.
 */
#ifndef SDR_EC_REF_H
#define SDR_EC_REF_H

#include <stddef.h>
#include <stdint.h>

#include "sdr_ec.h"

void ref_gf_init(void);
uint8_t ref_mul(uint8_t a, uint8_t b);
uint8_t ref_inv(uint8_t a); /* a != 0 */

/* (k + m) x k systematic generator of the code, row-major. RS: identity then
 * 1 / ((k + r) ^ j); XOR: identity then row r has 1 where j % m == r. */
void ref_generator(enum sdr_ec_code code, unsigned int k, unsigned int m, uint8_t *gen);

/* Gauss-Jordan over GF(2^8): out = in^-1 (n x n, in is preserved).
 * Returns 0, or -1 if singular. */
int ref_invert(unsigned int n, const uint8_t *in, uint8_t *out);

/* Rank over GF(2^8) of the rows of gen (rows x k) flagged in present. */
unsigned int ref_rank(unsigned int k, unsigned int rows, const uint8_t *gen,
		      const uint8_t *present);

/* parity[r][b] = sum_j gen[k + r][j] * data[j][b] */
void ref_encode(unsigned int k, unsigned int m, const uint8_t *gen, uint8_t *const *data,
		uint8_t *const *parity, size_t len);

/* Recover all k data chunks into out[0..k-1] from the first k linearly
 * independent present chunks. Returns 0, or -1 if the present rows have
 * rank < k. */
int ref_decode(unsigned int k, unsigned int m, const uint8_t *gen, uint8_t *const *chunks,
	       const uint8_t *present, size_t len, uint8_t *const *out);

#endif /* SDR_EC_REF_H */
