/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The stripe map of a multi-channel QP (docs/architecture.md "Channels"):
 * channel c of W owns the message bytes of stripes c, c+W, c+2W, ... of S
 * bytes; its virtual message is exactly those bytes, in order. Pure C,
 * shared by the firmware (prim/ applies it where a host address is computed
 * from a message offset) and libsdr (the lengths of a group's children).
 */
#ifndef SDR_STRIPE_H
#define SDR_STRIPE_H

#include <stdint.h>

#include "sdr_abi.h" /* SDR_CHANNELS_MAX */

/** A QP's stripe map; w <= 1 is the identity (an ordinary QP). */
struct sdr_stripe {
	uint32_t w; /**< channels of the group, 0 or 1 = not a channel */
	uint32_t c; /**< this channel, 0..w-1 */
	uint32_t s; /**< stripe bytes, a multiple of the chunk bytes */
};

/** The real message offset of virtual offset @p v of channel m->c. An
 *  ordinary QP pays one predictable branch. */
static inline uint64_t sdr_stripe_real(const struct sdr_stripe *m, uint64_t v)
{
	if (__builtin_expect(m->w <= 1, 1))
		return v;
	return (v / m->s * m->w + m->c) * m->s + v % m->s;
}

/** Bytes of a message of @p len bytes that channel @p c of @p w owns with
 *  stripes of @p s bytes (its virtual message's length). */
static inline uint64_t sdr_stripe_owned(uint64_t len, uint32_t w, uint32_t c, uint64_t s)
{
	uint64_t full = len / s, n;

	if (w <= 1)
		return len;
	n = full > c ? (full - c + w - 1) / w : 0; /* whole stripes k < full, k % w == c */
	return n * s + (full % w == c ? len % s : 0);
}

/** One past the last real byte a virtual message of @p vlen bytes of
 *  channel m->c touches (0 for 0): what must lie inside the MR. */
static inline uint64_t sdr_stripe_extent(const struct sdr_stripe *m, uint64_t vlen)
{
	return vlen ? sdr_stripe_real(m, vlen - 1) + 1 : 0;
}

#endif /* SDR_STRIPE_H */
