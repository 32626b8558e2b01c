/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Erasure coding on a QP (layer ec; docs/reliability.md "Erasure
 * coding"): the EC engine's pure-C building blocks, unit-tested without the
 * EAL. Every name here is sdr_ecfw_* (the engine is sdr_eceng_*, ec.h; the
 * codec sdr_ec_*, common/sdr_ec.h).
 *
 *  - Submessage geometry: a message of L bytes is N chunks of C bytes
 *    (C = MTU * chunk_pkts, the QP's bitmap chunk; the last chunk may be
 *    short); submessage s holds data chunks [s*k, min((s+1)*k, N)), the
 *    missing ones of the last submessage are zero chunks. All chunks of
 *    submessage s are coded at length clen(s) = min(C, L - s*k*C) (the
 *    length of its first chunk; shorter chunks are zero-padded), and each
 *    of its parity chunks travels as ceil(clen / MTU) parity packets: m of
 *    them, fewer for a short last submessage (sdr_ec_sub_parity(),
 *    common/sdr_scheme.h).
 *  - FTO arithmetic: FTO = (M + P) * T_INJ + beta * RTT, P the message's
 *    parity chunks (sdr_ec_msg_parity(): ceil(M * m / k) with Reed-Solomon).
 *  - The parity pool: fixed-size buffers (a packet bitmap and one chunk of
 *    parity bytes), reserved at QP creation, handed out up to a bound,
 *    recycled through a free list.
 */
#ifndef SDR_ECFW_H
#define SDR_ECFW_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---------------- submessage geometry ---------------- */

struct sdr_ecfw_geom {
	uint32_t len; /**< message bytes (>= 1) */
	uint32_t mtu;
	uint32_t cbytes;  /**< chunk bytes C = mtu * ppc */
	uint32_t nchunks; /**< N */
	uint32_t k, m;
	uint32_t nsub; /**< ceil(N / k) */
};

/** Fill @p g. @return 0, or -EINVAL (len, mtu, ppc, k or m is 0). */
static inline int sdr_ecfw_geom_init(struct sdr_ecfw_geom *g, uint32_t len, uint32_t mtu,
				     uint32_t ppc, uint32_t k, uint32_t m)
{
	uint64_t c = (uint64_t)mtu * ppc;

	if (!len || !mtu || !ppc || !k || !m || c > UINT32_MAX)
		return -EINVAL;
	g->len = len;
	g->mtu = mtu;
	g->cbytes = (uint32_t)c;
	g->nchunks = (uint32_t)((len + c - 1) / c);
	g->k = k;
	g->m = m;
	g->nsub = (g->nchunks + k - 1) / k;
	return 0;
}

/** Bytes of data chunk @p c (< nchunks): C, or less for the last one. */
static inline uint32_t sdr_ecfw_chunk_len(const struct sdr_ecfw_geom *g, uint32_t c)
{
	uint64_t off = (uint64_t)c * g->cbytes;
	return g->len - off < g->cbytes ? (uint32_t)(g->len - off) : g->cbytes;
}

/** Data chunks of submessage @p s that exist (the rest are zero padding). */
static inline uint32_t sdr_ecfw_sub_nreal(const struct sdr_ecfw_geom *g, uint32_t s)
{
	uint32_t first = s * g->k;
	return g->nchunks - first < g->k ? g->nchunks - first : g->k;
}

/** Coded length of submessage @p s (< nsub). */
static inline uint32_t sdr_ecfw_sub_clen(const struct sdr_ecfw_geom *g, uint32_t s)
{
	return sdr_ecfw_chunk_len(g, s * g->k);
}

/** Packets of one parity chunk of submessage @p s. */
static inline uint32_t sdr_ecfw_par_npkt(const struct sdr_ecfw_geom *g, uint32_t s)
{
	return (sdr_ecfw_sub_clen(g, s) + g->mtu - 1) / g->mtu;
}

/** Bytes of parity packet @p pkt of submessage @p s. */
static inline uint32_t sdr_ecfw_par_pkt_len(const struct sdr_ecfw_geom *g, uint32_t s, uint32_t pkt)
{
	uint32_t clen = sdr_ecfw_sub_clen(g, s), off = pkt * g->mtu;
	return clen - off < g->mtu ? clen - off : g->mtu;
}

/* ---------------- fallback timeout ---------------- */

/**
 * FTO = (M + P) * t_inj + beta * rtt (the SDR-RDMA paper's model form,
 * P = ceil(M / R), R = k/m; docs/papers.md §1.3): the time the message's
 * @p nchunks data chunks and their @p npar parity chunks
 * (sdr_ec_msg_parity()) take to arrive after the first one, plus a share
 * @p beta_milli / 1000 of the RTT for queueing. Times in any unit (TSC
 * cycles in the firmware); saturates instead of overflowing.
 */
static inline uint64_t sdr_ecfw_fto(uint32_t nchunks, uint64_t npar, uint64_t t_inj, uint64_t rtt,
				    uint32_t beta_milli)
{
	unsigned __int128 x = (unsigned __int128)((uint64_t)nchunks + npar) * t_inj +
			      (unsigned __int128)rtt * beta_milli / 1000;
	return x > UINT64_MAX / 4 ? UINT64_MAX / 4 : (uint64_t)x;
}

/** Time to inject @p bytes at @p rate_bytes per second, in cycles of
 *  @p hz; 0 when unpaced (rate 0). */
static inline uint64_t sdr_ecfw_t_inj(uint64_t bytes, uint64_t rate_bytes, uint64_t hz)
{
	if (!rate_bytes)
		return 0;
	return (uint64_t)((unsigned __int128)bytes * hz / rate_bytes);
}

/* ---------------- parity pool ---------------- */

/** One parity chunk being received. */
struct sdr_ecfw_buf {
	struct sdr_ecfw_buf *next; /**< free list */
	uint8_t *data;             /**< cbytes bytes, 64-byte aligned */
	uint32_t got;              /**< packets received */
	uint32_t npkt;             /**< packets expected */
	uint64_t bm[];             /**< packet bitmap, bm_words words */
};

struct sdr_ecfw_pool {
	struct sdr_ecfw_buf *free;
	void *mem;         /**< what was allocated (region is it, 64-aligned) */
	uint8_t *region;   /**< max buffers, reserved at init, handed out in order */
	size_t stride;     /**< bytes of one buffer in the region */
	uint32_t cbytes;   /**< bytes of a buffer's data */
	uint32_t bm_words; /**< words of a buffer's packet bitmap */
	uint32_t max;      /**< buffers at most */
	uint32_t nalloc;   /**< buffers allocated */
	uint32_t inuse;    /**< buffers handed out */
};

/** A pool of at most @p max buffers of @p cbytes bytes with @p ppc packet
 *  bits. Their memory is reserved here, once (the worker lcore that takes
 *  buffers never allocates; pages are only touched when a buffer is first
 *  used). @return 0 or -ENOMEM. */
static inline int sdr_ecfw_pool_init(struct sdr_ecfw_pool *p, uint32_t cbytes, uint32_t ppc,
				     uint32_t max)
{
	size_t hdr;

	memset(p, 0, sizeof(*p));
	p->cbytes = cbytes;
	p->bm_words = (ppc + 63) / 64;
	p->max = max;
	hdr = (sizeof(struct sdr_ecfw_buf) + (size_t)p->bm_words * 8 + 63) & ~(size_t)63;
	p->stride = hdr + ((cbytes + 63) & ~(size_t)63);
	/* (calloc: a large region is mapped, not touched, until buffers are
	 * used; aligned here to 64 bytes) */
	p->mem = calloc(1, (size_t)max * p->stride + 64);
	if (!p->mem)
		return -ENOMEM;
	p->region = (uint8_t *)(((uintptr_t)p->mem + 63) & ~(uintptr_t)63);
	return 0;
}

/** A cleared buffer (got = 0, bitmap zero; data undefined), or NULL when
 *  @p max buffers are out. */
static inline struct sdr_ecfw_buf *sdr_ecfw_pool_get(struct sdr_ecfw_pool *p)
{
	struct sdr_ecfw_buf *b = p->free;

	if (b) {
		p->free = b->next;
	} else {
		if (p->nalloc >= p->max || !p->region)
			return NULL;
		b = (struct sdr_ecfw_buf *)(p->region + (size_t)p->nalloc * p->stride);
		b->data = (uint8_t *)b + p->stride - ((p->cbytes + 63) & ~(size_t)63);
		p->nalloc++;
	}
	b->next = NULL;
	b->got = 0;
	b->npkt = 0;
	memset(b->bm, 0, (size_t)p->bm_words * 8);
	p->inuse++;
	return b;
}

static inline void sdr_ecfw_pool_put(struct sdr_ecfw_pool *p, struct sdr_ecfw_buf *b)
{
	if (!b)
		return;
	b->next = p->free;
	p->free = b;
	p->inuse--;
}

/** Release the pool's memory (no buffer may be used after this). */
static inline void sdr_ecfw_pool_fini(struct sdr_ecfw_pool *p)
{
	free(p->mem);
	p->mem = NULL;
	p->region = NULL;
	p->free = NULL;
	p->nalloc = p->inuse = 0;
}

#endif /* SDR_ECFW_H */
