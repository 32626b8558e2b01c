/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Single-producer / single-consumer ring in shared memory (host <-> DPU).
 *
 * Modelled on liburing's SQ/CQ rings: a tiny, stable layout, power-of-two
 * entries, free-running 32-bit head/tail counters on their own cache lines,
 * C11 acquire/release. The ring carries fixed-size entries; the entry array
 * lives next to the index block in the same shared segment.
 *
 * The consumer of a host-written ring (the DPU) must treat the producer's
 * index as hostile: sdr_ring_avail_checked() returns -1 when the producer
 * claims more entries than the ring holds.
 */
#ifndef SDR_RING_H
#define SDR_RING_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

#define SDR_CACHE_LINE 64

/** Index block of one ring. @c prod is written only by the producer,
 *  @c cons only by the consumer. Both count entries modulo 2^32. */
struct sdr_ring_idx {
	alignas(SDR_CACHE_LINE) _Atomic uint32_t prod;
	alignas(SDR_CACHE_LINE) _Atomic uint32_t cons;
	alignas(SDR_CACHE_LINE) uint32_t size; /**< entries, power of two */
	uint32_t esize;                        /**< bytes per entry */
};

/** Process-local view of a ring: cached copies of the shared indices. */
struct sdr_ring {
	struct sdr_ring_idx *idx;
	uint8_t *entries;
	uint32_t size; /**< trusted copy (never re-read from shared memory) */
	uint32_t mask;
	uint32_t esize;
	uint32_t local; /**< our own index (prod for a producer, cons for a consumer) */
	uint32_t peer;  /**< producer: the consumer's index as last read. Entries up
	                     to peer + size are free without reading the shared
	                     line, which the consumer writes on every poll: the
	                     producer reads it only when that is not enough */
};

static inline int sdr_is_pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

/** Initialise a ring's shared index block (done once by the segment's creator). */
static inline void sdr_ring_format(struct sdr_ring_idx *idx, uint32_t size, uint32_t esize)
{
	atomic_store_explicit(&idx->prod, 0, memory_order_relaxed);
	atomic_store_explicit(&idx->cons, 0, memory_order_relaxed);
	idx->size = size;
	idx->esize = esize;
}

/** Attach a local view. @p size and @p esize are the values the attacher
 *  trusts (from its own configuration), never re-read from the shared block.
 *  @p as_producer selects which index the view owns.
 *  @return 0, or -1 when the size is not a power of two. */
static inline int sdr_ring_attach(struct sdr_ring *r, struct sdr_ring_idx *idx, void *entries,
				  uint32_t size, uint32_t esize, int as_producer)
{
	if (!sdr_is_pow2(size) || esize == 0)
		return -1;
	r->idx = idx;
	r->entries = (uint8_t *)entries;
	r->size = size;
	r->mask = size - 1;
	r->esize = esize;
	r->local = as_producer ? atomic_load_explicit(&idx->prod, memory_order_relaxed)
			       : atomic_load_explicit(&idx->cons, memory_order_relaxed);
	r->peer = atomic_load_explicit(&idx->cons, memory_order_acquire);
	return 0;
}

static inline void *sdr_ring_slot(const struct sdr_ring *r, uint32_t pos)
{
	return r->entries + (size_t)(pos & r->mask) * r->esize;
}

/* ---- producer side ---- */

/* Free entries for consumer index @p cons: 0 when it claims to be ahead of
 * the producer (hostile or corrupt). */
static inline uint32_t sdr_ring__room(const struct sdr_ring *r, uint32_t cons)
{
	uint32_t used = r->local - cons;
	return used > r->size ? 0 : r->size - used;
}

/** Free entries as seen by the producer. A consumer index that claims to be
 *  ahead of the producer (hostile or corrupt) yields 0 free entries. */
static inline uint32_t sdr_ring_free(const struct sdr_ring *r)
{
	return sdr_ring__room(r, atomic_load_explicit(&r->idx->cons, memory_order_acquire));
}

/** Copy up to @p n entries in; returns the number enqueued (0 when full).
 *  The consumer's index is read only when its last known value leaves too
 *  little room (a stale value only ever shows less room). */
static inline uint32_t sdr_ring_enqueue_burst(struct sdr_ring *r, const void *objs, uint32_t n)
{
	uint32_t fr = sdr_ring__room(r, r->peer);

	if (n > fr) {
		r->peer = atomic_load_explicit(&r->idx->cons, memory_order_acquire);
		fr = sdr_ring__room(r, r->peer);
	}
	if (n > fr)
		n = fr;
	for (uint32_t i = 0; i < n; i++)
		memcpy(sdr_ring_slot(r, r->local + i), (const uint8_t *)objs + (size_t)i * r->esize,
		       r->esize);
	r->local += n;
	atomic_store_explicit(&r->idx->prod, r->local, memory_order_release);
	return n;
}

/* ---- consumer side ---- */

/** Entries ready for the consumer, or -1 when the producer index is
 *  impossible (more than @c size ahead): the shared block is corrupt. */
static inline int64_t sdr_ring_avail_checked(const struct sdr_ring *r)
{
	uint32_t prod = atomic_load_explicit(&r->idx->prod, memory_order_acquire);
	uint32_t n = prod - r->local;
	if (n > r->size)
		return -1;
	return n;
}

/** Pointer to the i-th ready entry (i < avail). Copy it out before validating:
 *  the producer may still scribble on shared memory. */
static inline const void *sdr_ring_peek(const struct sdr_ring *r, uint32_t i)
{
	return sdr_ring_slot(r, r->local + i);
}

/** Release @p n consumed entries back to the producer. */
static inline void sdr_ring_consume(struct sdr_ring *r, uint32_t n)
{
	r->local += n;
	atomic_store_explicit(&r->idx->cons, r->local, memory_order_release);
}

/** Copy out up to @p n entries; returns the count (0 when empty or corrupt). */
static inline uint32_t sdr_ring_dequeue_burst(struct sdr_ring *r, void *objs, uint32_t n)
{
	int64_t avail = sdr_ring_avail_checked(r);
	if (avail <= 0)
		return 0;
	if (n > (uint32_t)avail)
		n = (uint32_t)avail;
	for (uint32_t i = 0; i < n; i++)
		memcpy((uint8_t *)objs + (size_t)i * r->esize, sdr_ring_peek(r, i), r->esize);
	sdr_ring_consume(r, n);
	return n;
}

#endif /* SDR_RING_H */
