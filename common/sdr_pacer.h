/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Token-bucket pacer on the TSC (docs/architecture.md "Pacing"). One bucket per QP (its
 * configured rate) and one per port and worker (the overall port rate); a
 * packet leaves only when both have tokens for its frame bytes. Pure C: the
 * caller passes the clock, so tests drive it with a synthetic TSC.
 *
 * Units: rate in bytes per second, tokens and burst in bytes, time in TSC
 * cycles of frequency hz. Refill is exact integer arithmetic
 * (dt * rate / hz in 128 bits, remainder carried), so no rate drifts.
 */
#ifndef SDR_PACER_H
#define SDR_PACER_H

#include <stdint.h>

struct sdr_pacer {
	uint64_t rate;   /**< bytes/s; 0 = unpaced */
	uint64_t burst;  /**< bucket depth, bytes */
	uint64_t tokens; /**< bytes available */
	uint64_t last;   /**< TSC of the last refill */
	uint64_t rem;    /**< refill remainder (bytes * hz units) */
	uint64_t hz;
};

/** Default bucket depth: 64 KiB, but at least two frames. */
#define SDR_PACER_DEFAULT_BURST (64u * 1024)

/** (Re)configure. A rate change keeps the tokens (capped at the new burst). */
static inline void sdr_pacer_set(struct sdr_pacer *p, uint64_t rate_bytes, uint64_t burst,
				 uint64_t hz, uint64_t now)
{
	p->rate = rate_bytes;
	p->burst = burst;
	p->hz = hz;
	if (p->tokens > burst)
		p->tokens = burst;
	p->last = now;
	p->rem = 0;
}

static inline void sdr_pacer_refill(struct sdr_pacer *p, uint64_t now)
{
	uint64_t dt;
	unsigned __int128 num;

	if (now <= p->last) /* TSC did not move (or went back: ignore) */
		return;
	dt = now - p->last;
	p->last = now;
	if (dt > p->hz) /* idle for more than 1 s: the bucket is full anyway */
		dt = p->hz;
	num = (unsigned __int128)dt * p->rate + p->rem;
	uint64_t add = (uint64_t)(num / p->hz);
	p->rem = (uint64_t)(num % p->hz);
	p->tokens = p->tokens + add > p->burst ? p->burst : p->tokens + add;
	if (p->tokens == p->burst)
		p->rem = 0;
}

/** May a frame of @p bytes leave now? Takes the tokens if so. */
static inline int sdr_pacer_take(struct sdr_pacer *p, uint64_t bytes, uint64_t now)
{
	if (!p->rate)
		return 1;
	if (p->tokens < bytes) {
		sdr_pacer_refill(p, now);
		/* a frame larger than the bucket may leave when it is full */
		if (p->tokens < bytes && p->tokens < p->burst)
			return 0;
	}
	p->tokens = p->tokens > bytes ? p->tokens - bytes : 0;
	return 1;
}

/** Give tokens back (the frame could not be built after all). */
static inline void sdr_pacer_refund(struct sdr_pacer *p, uint64_t bytes)
{
	if (p->rate)
		p->tokens = p->tokens + bytes > p->burst ? p->burst : p->tokens + bytes;
}

#endif /* SDR_PACER_H */
