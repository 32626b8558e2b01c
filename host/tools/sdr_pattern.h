/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Test-data pattern shared by the host tools, the scapy builders and the
 * tests (documented in docs/host-api.md):
 *
 *   splitmix64(state): state += 0x9E3779B97F4A7C15; z = state;
 *     z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9;
 *     z = (z ^ (z >> 27)) * 0x94D049BB133111EB; return z ^ (z >> 31)
 *   Message n (0-based, posting order), seed s:
 *     state = s ^ ((n + 1) * 0x9E3779B97F4A7C15);
 *     word w = the (w+1)-th splitmix64 output;
 *     byte i = byte (i % 8) of the little-endian encoding of word (i / 8).
 */
#ifndef SDR_PATTERN_H
#define SDR_PATTERN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define SDR_PATTERN_GOLDEN UINT64_C(0x9E3779B97F4A7C15)

static inline uint64_t sdr_splitmix64(uint64_t *state)
{
	uint64_t z;

	*state += SDR_PATTERN_GOLDEN;
	z = *state;
	z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
	z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
	return z ^ (z >> 31);
}

static inline uint64_t sdr_pattern_state(uint64_t seed, uint64_t n)
{
	return seed ^ ((n + 1) * SDR_PATTERN_GOLDEN);
}

static inline void sdr_pattern_word_le(uint64_t w, uint8_t out[8])
{
	for (int k = 0; k < 8; k++)
		out[k] = (uint8_t)(w >> (8 * k));
}

/** Fill @p len bytes with message @p n of seed @p seed. */
static inline void sdr_pattern_fill(void *buf, size_t len, uint64_t seed, uint64_t n)
{
	uint64_t st = sdr_pattern_state(seed, n);
	uint8_t *p = buf, w[8];
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		sdr_pattern_word_le(sdr_splitmix64(&st), w);
		memcpy(p + i, w, 8);
	}
	if (i < len) {
		sdr_pattern_word_le(sdr_splitmix64(&st), w);
		memcpy(p + i, w, len - i);
	}
}

/** Offset of the first byte of @p buf that differs from message @p n, or
 *  @p len when all match. */
static inline size_t sdr_pattern_check(const void *buf, size_t len, uint64_t seed, uint64_t n)
{
	uint64_t st = sdr_pattern_state(seed, n);
	const uint8_t *p = buf;
	uint8_t w[8];

	for (size_t i = 0; i < len; i += 8) {
		size_t take = len - i < 8 ? len - i : 8;

		sdr_pattern_word_le(sdr_splitmix64(&st), w);
		if (memcmp(p + i, w, take)) {
			for (size_t k = 0; k < take; k++)
				if (p[i + k] != w[k])
					return i + k;
		}
	}
	return len;
}

#endif /* SDR_PATTERN_H */
