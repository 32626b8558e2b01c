/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Selective Repeat building blocks (docs/reliability.md), pure C so that
 * unit tests drive them without the EAL:
 *
 *  - sdr_rtt: RFC 6298 smoothed RTT / RTT variance from samples of chunks
 *    transmitted once (Karn); RTO = max(min_rto, (1 + alpha) * SRTT,
 *    SRTT + k * RTTVAR), and an initial RTO until the first sample.
 *  - sdr_tq: a growable FIFO of (seq, chunk, tsc) entries: the per-QP
 *    retransmission timer queue (entries pushed in transmit order, so the
 *    head expires first) and the queue of chunks waiting for retransmission.
 *  - ACK window math on a chunk bitmap: advance the cumulative point, cut
 *    the selective window, walk what an ACK newly acknowledges.
 *
 * Time is in TSC cycles; the caller passes the clock.
 */
#ifndef SDR_SR_H
#define SDR_SR_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sdr_wire.h"

/* ---------------- RTT / RTO ---------------- */

struct sdr_rtt {
	uint64_t srtt;        /**< smoothed RTT (cycles), valid once samples > 0 */
	uint64_t rttvar;      /**< RTT variance (cycles) */
	uint64_t rto;         /**< current retransmission timeout (cycles) */
	uint64_t min_rto;     /**< floor (cycles) */
	uint64_t samples;     /**< RTT samples taken */
	uint32_t alpha_milli; /**< alpha * 1000 */
	uint32_t k;           /**< RTTVAR multiplier of the RFC 6298 bound (0 = off) */
};

/** Start with @p init_rto until the first sample; never below @p min_rto.
 *  @p k: the RTO is also at least SRTT + k * RTTVAR (RFC 6298's own
 *  formula, k = 4 there), which protects against spurious timeouts when
 *  the RTT jitters; 0 gives the plain (1 + alpha) * SRTT. */
static inline void sdr_rtt_init(struct sdr_rtt *r, uint64_t init_rto, uint64_t min_rto,
				uint32_t alpha_milli, uint32_t k)
{
	memset(r, 0, sizeof(*r));
	r->min_rto = min_rto;
	r->alpha_milli = alpha_milli;
	r->k = k;
	r->rto = init_rto > min_rto ? init_rto : min_rto;
}

/** Take one RTT sample @p m (cycles): RFC 6298 section 2 with
 *  alpha = 1/8, beta = 1/4; then RTO = max(min_rto, (1 + alpha) * SRTT,
 *  SRTT + k * RTTVAR). */
static inline void sdr_rtt_sample(struct sdr_rtt *r, uint64_t m)
{
	if (r->samples == 0) {
		r->srtt = m;
		r->rttvar = m / 2;
	} else {
		uint64_t d = r->srtt > m ? r->srtt - m : m - r->srtt;
		r->rttvar = (3 * r->rttvar + d) / 4;
		r->srtt = (7 * r->srtt + m) / 8;
	}
	r->samples++;
	unsigned __int128 x = (unsigned __int128)r->srtt * (1000u + r->alpha_milli) / 1000u;
	unsigned __int128 y = (unsigned __int128)r->rttvar * r->k + r->srtt;
	if (y > x)
		x = y;
	uint64_t rto = x > UINT64_MAX / 2 ? UINT64_MAX / 2 : (uint64_t)x;
	r->rto = rto > r->min_rto ? rto : r->min_rto;
}

/** Exponential backoff (RFC 6298 5.5) when a retransmission went
 *  unanswered: RTO doubles, at most once per current RTO (@p now, cycles)
 *  and up to @p max_rto; the next RTT sample recomputes it. @return 1 if it
 *  backed off. */
static inline int sdr_rtt_backoff(struct sdr_rtt *r, uint64_t now, uint64_t *next_ok,
				  uint64_t max_rto)
{
	if (now < *next_ok || r->rto >= max_rto)
		return 0;
	r->rto = r->rto * 2 < max_rto ? r->rto * 2 : max_rto;
	*next_ok = now + r->rto;
	return 1;
}

/* ---------------- FIFO of chunk references ---------------- */

struct sdr_tq_ent {
	uint32_t seq;   /**< message number */
	uint32_t chunk; /**< chunk index (or the immediate unit) */
	uint64_t tsc;   /**< transmit time (timer queue) */
};

struct sdr_tq {
	struct sdr_tq_ent *e;
	uint32_t cap, head, n;
	uint8_t fixed; /**< sized once by sdr_tq_init(): never grows */
};

static inline void sdr_tq_fini(struct sdr_tq *q)
{
	free(q->e);
	memset(q, 0, sizeof(*q));
}

/** Size @p q once for @p cap entries (a queue that never allocates after
 *  this: the firmware's worker lcores). @return 0 or -ENOMEM. */
static inline int sdr_tq_init(struct sdr_tq *q, uint32_t cap)
{
	memset(q, 0, sizeof(*q));
	q->e = calloc(cap, sizeof(*q->e));
	if (!q->e)
		return -ENOMEM;
	q->cap = cap;
	q->fixed = 1;
	return 0;
}

/** Append; a zero-initialised queue grows (doubling) as needed, one from
 *  sdr_tq_init() does not. @return 0, or -ENOMEM (full, or no memory). */
static inline int sdr_tq_push(struct sdr_tq *q, uint32_t seq, uint32_t chunk, uint64_t tsc)
{
	if (q->n == q->cap) {
		if (q->fixed)
			return -ENOMEM;
		uint32_t ncap = q->cap ? q->cap * 2 : 256;
		struct sdr_tq_ent *ne;

		if (ncap < q->cap)
			return -ENOMEM;
		ne = malloc((size_t)ncap * sizeof(*ne));
		if (!ne)
			return -ENOMEM;
		for (uint32_t i = 0; i < q->n; i++)
			ne[i] = q->e[(q->head + i) % q->cap];
		free(q->e);
		q->e = ne;
		q->cap = ncap;
		q->head = 0;
	}
	q->e[(q->head + q->n) % q->cap] = (struct sdr_tq_ent){seq, chunk, tsc};
	q->n++;
	return 0;
}

static inline const struct sdr_tq_ent *sdr_tq_peek(const struct sdr_tq *q)
{
	return q->n ? &q->e[q->head] : NULL;
}

static inline void sdr_tq_pop(struct sdr_tq *q)
{
	if (q->n) {
		q->head = (q->head + 1) % q->cap;
		q->n--;
	}
}

/* ---------------- ACK window math ---------------- */

static inline int sdr_sr_bit(const uint64_t *bm, uint32_t i)
{
	return (int)((bm[i / 64] >> (i % 64)) & 1);
}

/** First index >= @p cum whose bit is clear (or @p nbits). */
static inline uint32_t sdr_ack_cum_advance(const uint64_t *bm, uint32_t nbits, uint32_t cum)
{
	while (cum < nbits) {
		uint64_t w = ~bm[cum / 64] >> (cum % 64);
		if (w) {
			cum += (uint32_t)__builtin_ctzll(w);
			return cum < nbits ? cum : nbits;
		}
		cum = (cum / 64 + 1) * 64;
	}
	return nbits;
}

/** The selective window: bit i of @p out = bit (cum + i) of @p bm, for
 *  i < SDR_ACK_WINDOW_BITS; bits at or past @p nbits are 0. */
static inline void sdr_ack_window_get(const uint64_t *bm, uint32_t nbits, uint32_t cum,
				      uint8_t out[SDR_ACK_WINDOW_BITS / 8])
{
	memset(out, 0, SDR_ACK_WINDOW_BITS / 8);
	for (uint32_t i = 0; i < SDR_ACK_WINDOW_BITS && cum + i < nbits; i++)
		if (sdr_sr_bit(bm, cum + i))
			out[i / 8] |= (uint8_t)(1u << (i % 8));
}

/**
 * What an ACK (@p cum, @p off, @p bits) acknowledges among @p nchunks
 * chunks: calls @p fn for every chunk in [0, min(cum, nchunks)) at or above
 * @p *from, then for chunk cum + off + i of every window bit i set, below
 * nchunks. Chunks may be
 * reported again (the caller ignores already acknowledged ones). *from
 * moves to the cumulative point, so the cumulative part is walked once in
 * total (O(chunks) over the life of a message, O(window) per ACK).
 * @return the number of calls.
 */
static inline uint32_t sdr_ack_walk(uint32_t cum, uint32_t off,
				    const uint8_t bits[SDR_ACK_WINDOW_BITS / 8], uint32_t nchunks,
				    uint32_t *from, void (*fn)(void *arg, uint32_t chunk),
				    void *arg)
{
	uint32_t calls = 0, end = cum < nchunks ? cum : nchunks;

	for (uint32_t c = *from; c < end; c++, calls++)
		fn(arg, c);
	if (end > *from)
		*from = end;
	for (uint32_t i = 0; i < SDR_ACK_WINDOW_BITS; i++) {
		uint64_t c = (uint64_t)cum + off + i;
		if (!(bits[i / 8] & (1u << (i % 8))))
			continue;
		if (c >= nchunks)
			break;
		fn(arg, (uint32_t)c);
		calls++;
	}
	return calls;
}

#endif /* SDR_SR_H */
