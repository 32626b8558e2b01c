/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * SipHash-2-4 (common, pure C; sdr_siphash.h): two compression rounds per
 * 8-byte word, four finalisation rounds; the 128-bit variant xors 0xee into
 * v1 at the start and 0xee (not 0xff) into v2 before finalising, then
 * 0xdd into v1 before its second half. Written
 * from the paper "SipHash: a fast short-input PRF" (Aumasson, Bernstein).
 */
#include <string.h>

#include "sdr_siphash.h"

static inline uint64_t rotl(uint64_t x, unsigned b)
{
	return (x << b) | (x >> (64 - b));
}

static inline uint64_t load_le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (unsigned i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static inline void store_le64(uint8_t *p, uint64_t v)
{
	for (unsigned i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

struct sip {
	uint64_t v0, v1, v2, v3;
};

static inline void sip_round(struct sip *s)
{
	s->v0 += s->v1;
	s->v1 = rotl(s->v1, 13);
	s->v1 ^= s->v0;
	s->v0 = rotl(s->v0, 32);
	s->v2 += s->v3;
	s->v3 = rotl(s->v3, 16);
	s->v3 ^= s->v2;
	s->v0 += s->v3;
	s->v3 = rotl(s->v3, 21);
	s->v3 ^= s->v0;
	s->v2 += s->v1;
	s->v1 = rotl(s->v1, 17);
	s->v1 ^= s->v2;
	s->v2 = rotl(s->v2, 32);
}

static inline void sip_word(struct sip *s, uint64_t m)
{
	s->v3 ^= m;
	sip_round(s);
	sip_round(s);
	s->v0 ^= m;
}

/* Initialise and compress everything, the padded last word included. */
static void sip_absorb(struct sip *s, const uint8_t k[SDR_SIPHASH_KEY_LEN], const uint8_t *in,
		       size_t len, int wide)
{
	uint64_t k0 = load_le64(k), k1 = load_le64(k + 8);
	uint8_t last[8] = {0};
	size_t full = len & ~(size_t)7;

	s->v0 = k0 ^ 0x736f6d6570736575ull;
	s->v1 = k1 ^ 0x646f72616e646f6dull;
	s->v2 = k0 ^ 0x6c7967656e657261ull;
	s->v3 = k1 ^ 0x7465646279746573ull;
	if (wide)
		s->v1 ^= 0xee;
	for (size_t i = 0; i < full; i += 8)
		sip_word(s, load_le64(in + i));
	memcpy(last, in + full, len - full);
	last[7] = (uint8_t)len;
	sip_word(s, load_le64(last));
}

static uint64_t sip_final(struct sip *s, uint64_t mark)
{
	s->v2 ^= mark;
	for (unsigned i = 0; i < 4; i++)
		sip_round(s);
	return s->v0 ^ s->v1 ^ s->v2 ^ s->v3;
}

uint64_t sdr_siphash24_64(const uint8_t k[SDR_SIPHASH_KEY_LEN], const void *in, size_t len)
{
	struct sip s;

	sip_absorb(&s, k, in, len, 0);
	return sip_final(&s, 0xff);
}

void sdr_siphash24_128(const uint8_t k[SDR_SIPHASH_KEY_LEN], const void *in, size_t len,
		       uint8_t out[16])
{
	struct sip s;

	sip_absorb(&s, k, in, len, 1);
	store_le64(out, sip_final(&s, 0xee));
	s.v1 ^= 0xdd;
	store_le64(out + 8, sip_final(&s, 0));
}
