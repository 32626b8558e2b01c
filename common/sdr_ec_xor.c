/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * XOR backend: parity g = XOR of data j with j % m == g. Portable C (builds
 * for x86-64 and aarch64 alike): 64-bit words, 4 words per step, unaligned
 * accesses through memcpy (compiled to plain loads/stores), a byte tail for
 * any length. Each output is written once, after all its sources were read.
 * Stateless: the handle only records (k, m).
 */
#include "sdr_ec.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct ec_xor {
	unsigned int k, m;
};

static inline uint64_t ld64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, sizeof(v));
	return v;
}

static inline void st64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

/* dst = src[0] ^ src[1] ^ ... ^ src[n-1], n >= 1, dst not among src. */
static void xor_n(uint8_t *dst, const uint8_t *const *src, unsigned int n, size_t len)
{
	size_t off = 0;
	unsigned int s;

	if (n == 1) {
		memcpy(dst, src[0], len);
		return;
	}
	for (; off + 32 <= len; off += 32) {
		const uint8_t *p = src[0] + off;
		uint64_t a0 = ld64(p), a1 = ld64(p + 8), a2 = ld64(p + 16), a3 = ld64(p + 24);

		for (s = 1; s < n; s++) {
			p = src[s] + off;
			a0 ^= ld64(p);
			a1 ^= ld64(p + 8);
			a2 ^= ld64(p + 16);
			a3 ^= ld64(p + 24);
		}
		st64(dst + off, a0);
		st64(dst + off + 8, a1);
		st64(dst + off + 16, a2);
		st64(dst + off + 24, a3);
	}
	for (; off + 8 <= len; off += 8) {
		uint64_t a = ld64(src[0] + off);

		for (s = 1; s < n; s++)
			a ^= ld64(src[s] + off);
		st64(dst + off, a);
	}
	for (; off < len; off++) {
		uint8_t a = src[0][off];

		for (s = 1; s < n; s++)
			a ^= src[s][off];
		dst[off] = a;
	}
}

/* dst ^= src, len bytes (dst and src do not overlap). */
static void xor_into(uint8_t *dst, const uint8_t *src, size_t len)
{
	size_t off = 0;

	for (; off + 32 <= len; off += 32) {
		st64(dst + off, ld64(dst + off) ^ ld64(src + off));
		st64(dst + off + 8, ld64(dst + off + 8) ^ ld64(src + off + 8));
		st64(dst + off + 16, ld64(dst + off + 16) ^ ld64(src + off + 16));
		st64(dst + off + 24, ld64(dst + off + 24) ^ ld64(src + off + 24));
	}
	for (; off + 8 <= len; off += 8)
		st64(dst + off, ld64(dst + off) ^ ld64(src + off));
	for (; off < len; off++)
		dst[off] ^= src[off];
}

static int xor_init(void **priv, unsigned int k, unsigned int m)
{
	struct ec_xor *s = malloc(sizeof(*s));

	if (s == NULL)
		return -ENOMEM;
	s->k = k;
	s->m = m;
	*priv = s;
	return 0;
}

static void xor_fini(void *priv)
{
	free(priv);
}

static int xor_encode(void *priv, const uint8_t *const *data, uint8_t *const *parity, size_t len)
{
	const struct ec_xor *s = priv;
	const uint8_t *src[SDR_EC_MAX_CHUNKS];
	unsigned int g, j, n;

	for (g = 0; g < s->m; g++) {
		n = 0;
		for (j = g; j < s->k; j += s->m)
			src[n++] = data[j];
		xor_n(parity[g], src, n, len);
	}
	return 0;
}

static int xor_encode_update(void *priv, unsigned int i, const uint8_t *data,
			     uint8_t *const *parity, size_t len)
{
	const struct ec_xor *s = priv;

	xor_into(parity[i % s->m], data, len);
	return 0;
}

static int xor_decode(void *priv, uint8_t *const *chunks, const uint8_t *present, size_t len)
{
	const struct ec_xor *s = priv;
	const uint8_t *src[SDR_EC_MAX_CHUNKS];
	unsigned int g, j, n, lost;
	uint8_t *dst;

	/* The front end checked recoverability; checked again, before writing
	 * anything, so that a broken caller can never make us write a chunk
	 * from an incomplete group. */
	for (g = 0; g < s->m; g++) {
		lost = 0;
		for (j = g; j < s->k; j += s->m)
			lost += !present[j];
		if (lost > 1 || (lost == 1 && !present[s->k + g]))
			return -SDR_EC_ENOTRECOVERABLE;
	}
	for (g = 0; g < s->m; g++) {
		n = 0;
		dst = NULL;
		for (j = g; j < s->k; j += s->m) {
			if (present[j])
				src[n++] = chunks[j];
			else
				dst = chunks[j];
		}
		if (dst == NULL)
			continue;
		src[n++] = chunks[s->k + g];
		xor_n(dst, src, n, len);
	}
	return 0;
}

const struct sdr_ec_ops sdr_ec_xor_ops = {
	.name = "xor-u64",
	.code = SDR_EC_XOR,
	.max_len = SIZE_MAX,
	.init = xor_init,
	.fini = xor_fini,
	.encode = xor_encode,
	.decode = xor_decode,
	.encode_update = xor_encode_update,
};
