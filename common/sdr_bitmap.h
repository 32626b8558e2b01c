/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Bitmaps of the SDR receive path.
 *
 * Layout (part of the host ABI): an array of 64-bit little-endian words,
 * bit i is bit (i % 64) of word (i / 64); equivalently bit (i % 8) of byte
 * (i / 8) on a little-endian host. The DPU keeps a per-packet bitmap per
 * message in its own memory and coalesces it into the per-chunk bitmap that
 * the host reads: a chunk bit is set (with release ordering) once every
 * packet of that chunk has landed.
 */
#ifndef SDR_BITMAP_H
#define SDR_BITMAP_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define SDR_BITMAP_WORDS(nbits) (((size_t)(nbits) + 63) / 64)

static inline int sdr_bit_test(const uint64_t *bm, uint32_t i)
{
	return (bm[i >> 6] >> (i & 63)) & 1;
}

/** Set bit @p i; returns 1 if it was newly set, 0 if already set. Plain
 *  (owner-only) memory. */
static inline int sdr_bit_set(uint64_t *bm, uint32_t i)
{
	uint64_t m = UINT64_C(1) << (i & 63);
	uint64_t old = bm[i >> 6];
	bm[i >> 6] = old | m;
	return !(old & m);
}

/** Set bit @p i of a bitmap that another process reads, with release
 *  ordering: everything written before (the payload) is visible to a reader
 *  that observes the bit with acquire ordering. */
static inline void sdr_bit_set_shared(uint64_t *bm, uint32_t i)
{
	atomic_fetch_or_explicit((_Atomic uint64_t *)&bm[i >> 6], UINT64_C(1) << (i & 63),
				 memory_order_release);
}

/** Read a word of a shared bitmap with acquire ordering. */
static inline uint64_t sdr_bitmap_load_shared(const uint64_t *bm, size_t word)
{
	return atomic_load_explicit((const _Atomic uint64_t *)&bm[word], memory_order_acquire);
}

/** Number of set bits among the first @p nbits. */
static inline uint32_t sdr_bitmap_count(const uint64_t *bm, uint32_t nbits)
{
	uint32_t c = 0, w, full = nbits / 64;
	for (w = 0; w < full; w++)
		c += (uint32_t)__builtin_popcountll(bm[w]);
	if (nbits & 63)
		c += (uint32_t)__builtin_popcountll(bm[full] & ((UINT64_C(1) << (nbits & 63)) - 1));
	return c;
}

/** Are bits [first, first+n) all set? */
static inline int sdr_bitmap_range_full(const uint64_t *bm, uint32_t first, uint32_t n)
{
	while (n) {
		uint32_t off = first & 63;
		uint32_t take = 64 - off < n ? 64 - off : n;
		uint64_t mask = (take == 64 ? ~UINT64_C(0) : ((UINT64_C(1) << take) - 1)) << off;
		if ((bm[first >> 6] & mask) != mask)
			return 0;
		first += take;
		n -= take;
	}
	return 1;
}

/** Index of the first clear bit below @p nbits, or @p nbits if all are set. */
static inline uint32_t sdr_bitmap_first_zero(const uint64_t *bm, uint32_t nbits)
{
	for (uint32_t w = 0; w < SDR_BITMAP_WORDS(nbits); w++) {
		uint64_t inv = ~bm[w];
		if (inv) {
			uint32_t i = w * 64 + (uint32_t)__builtin_ctzll(inv);
			return i < nbits ? i : nbits;
		}
	}
	return nbits;
}

/**
 * Coalescing rule of the SDR backend: packet @p pkt has just been set in
 * @p pkt_bm; if that completes its chunk (all of the chunk's packets that lie
 * below @p npkts are set), return the chunk index, else -1.
 * @p ppc packets per chunk; @p npkts packets in the message (the last chunk
 * may be short).
 */
static inline int64_t sdr_bitmap_chunk_done(const uint64_t *pkt_bm, uint32_t pkt, uint32_t ppc,
					    uint32_t npkts)
{
	uint32_t chunk = pkt / ppc;
	uint32_t first = chunk * ppc;
	uint32_t n = npkts - first < ppc ? npkts - first : ppc;
	return sdr_bitmap_range_full(pkt_bm, first, n) ? (int64_t)chunk : -1;
}

#endif /* SDR_BITMAP_H */
