/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-pipe: the payloads of its messages (host/pipe/, the pipe core; pure
 * C, no calls into the rest): a header naming iteration, channel and
 * micro-batch, a seeded body and its checksum, filled and checked.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipe.h"
#include "pipe_cba.h"
#include "pipe_le.h"
#include "pipe_net.h"
#include "sdr_auto.h"
#include "sdr_model.h"

static uint64_t body_sum(const uint8_t *p, uint64_t len)
{
	uint64_t h = 0xcbf29ce484222325ull, w;
	uint64_t i = 0;

	for (; i + 8 <= len; i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 29;
	}
	for (; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h ^ len;
}

uint64_t pipe_payload_fill(void *buf, uint64_t len, uint64_t seed, uint32_t iter, uint32_t ch,
			   uint32_t m)
{
	uint8_t *p = buf, *b = p + PIPE_HDR_BYTES;
	uint64_t n = len - PIPE_HDR_BYTES,
		 x = seed ^ ((uint64_t)iter << 40) ^ ((uint64_t)ch << 20) ^ m;
	uint64_t i = 0, cs;

	x = x * 0x9e3779b97f4a7c15ull + 1;
	for (; i + 8 <= n; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(b + i, &x, 8);
	}
	for (; i < n; i++)
		b[i] = (uint8_t)(x >> (i & 7));
	cs = body_sum(b, n);
	pipe_put32(p, PIPE_MAGIC);
	pipe_put32(p + 4, iter);
	pipe_put32(p + 8, ch);
	pipe_put32(p + 12, m);
	pipe_put64(p + 16, len);
	pipe_put64(p + 24, cs);
	pipe_put64(p + 32, seed);
	return cs;
}

int pipe_payload_check(const void *buf, uint64_t len, uint32_t iter, uint32_t ch, uint32_t m,
		       uint64_t *csum)
{
	const uint8_t *p = buf;
	uint64_t cs;

	if (len < PIPE_HDR_BYTES || pipe_get32(p) != PIPE_MAGIC || pipe_get64(p + 16) != len)
		return -EBADMSG;
	cs = body_sum(p + PIPE_HDR_BYTES, len - PIPE_HDR_BYTES);
	if (cs != pipe_get64(p + 24))
		return -EBADMSG;
	if (pipe_get32(p + 4) != iter || pipe_get32(p + 8) != ch || pipe_get32(p + 12) != m)
		return -EPROTO;
	*csum = cs;
	return 0;
}
