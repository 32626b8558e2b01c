/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Timing-wheel pacer: the alternative to the token bucket of
 * common/sdr_pacer.h, measured against it by sdr-pacer-bench
 * (docs/benchmarks.md §4.6). Not used by the firmware.
 *
 * Each flow has a departure time t_next for its next frame; a frame of b
 * bytes advances it by b / rate (in TSC cycles, 32.32 fixed point, so no
 * division on the fast path and no drift). A backlogged flow sits in the
 * wheel slot of its t_next: 2^slot_shift cycles per slot, SDR_WHEEL_SLOTS
 * slots; a t_next beyond the horizon parks the flow in the farthest slot,
 * from where it is re-filed when the cursor reaches it. Polling walks the
 * slots from the last poll to now and moves every due flow to the ready
 * list (FIFO), so the cost is per due flow, not per flow.
 *
 * An idle flow earns no credit: t_next is at least "now" when it is
 * (re)scheduled, so a flow never bursts above its rate. (The token bucket
 * allows a burst of its depth by design.)
 *
 * Pure C, single-threaded, clock passed in by the caller.
 */
#ifndef SDR_WHEEL_H
#define SDR_WHEEL_H

#include <stdint.h>

#define SDR_WHEEL_SLOTS 1024u /* power of two */
#define SDR_WHEEL_NIL UINT32_MAX

struct sdr_wheel_flow {
	uint64_t t_next;  /**< departure time of the next frame, cycles */
	uint64_t frac;    /**< fractional cycles (2^-32), carried */
	uint64_t cpb_fp;  /**< cycles per byte, 32.32 fixed point; 0 = unpaced */
	uint32_t next;    /**< link in a slot list or the ready list */
	uint8_t queued;   /**< in the wheel or the ready list */
};

struct sdr_wheel {
	struct sdr_wheel_flow *f;
	uint32_t head[SDR_WHEEL_SLOTS], tail[SDR_WHEEL_SLOTS];
	uint32_t rhead, rtail;  /**< ready list */
	uint64_t cursor;        /**< absolute slot number polled last */
	unsigned shift;         /**< cycles per slot = 2^shift */
	uint64_t hz;
};

static inline uint64_t sdr_wheel_cpb(uint64_t hz, uint64_t rate_bytes)
{
	return rate_bytes ? (uint64_t)(((unsigned __int128)hz << 32) / rate_bytes) : 0;
}

static inline void sdr_wheel_init(struct sdr_wheel *w, struct sdr_wheel_flow *flows,
				  uint32_t nflows, uint64_t hz, unsigned shift, uint64_t now)
{
	w->f = flows;
	w->hz = hz;
	w->shift = shift;
	w->cursor = now >> shift;
	w->rhead = w->rtail = SDR_WHEEL_NIL;
	for (uint32_t i = 0; i < SDR_WHEEL_SLOTS; i++)
		w->head[i] = w->tail[i] = SDR_WHEEL_NIL;
	for (uint32_t i = 0; i < nflows; i++)
		flows[i] = (struct sdr_wheel_flow){.t_next = now, .next = SDR_WHEEL_NIL};
}

/** Set a flow's rate (bytes/s); takes effect from its next frame. */
static inline void sdr_wheel_set_rate(struct sdr_wheel *w, uint32_t i, uint64_t rate_bytes)
{
	w->f[i].cpb_fp = sdr_wheel_cpb(w->hz, rate_bytes);
}

static inline void sdr_wheel__push(uint32_t *head, uint32_t *tail, struct sdr_wheel_flow *f,
				   uint32_t i)
{
	f[i].next = SDR_WHEEL_NIL;
	if (*tail == SDR_WHEEL_NIL)
		*head = i;
	else
		f[*tail].next = i;
	*tail = i;
}

static inline void sdr_wheel__file(struct sdr_wheel *w, uint32_t i)
{
	uint64_t s = w->f[i].t_next >> w->shift;

	if (s <= w->cursor) {
		sdr_wheel__push(&w->rhead, &w->rtail, w->f, i);
		return;
	}
	if (s > w->cursor + SDR_WHEEL_SLOTS - 1)
		s = w->cursor + SDR_WHEEL_SLOTS - 1; /* beyond the horizon: re-filed later */
	s &= SDR_WHEEL_SLOTS - 1;
	sdr_wheel__push(&w->head[s], &w->tail[s], w->f, i);
}

/** Flow @p i has a frame to send: file it (no-op if already queued). */
static inline void sdr_wheel_schedule(struct sdr_wheel *w, uint32_t i, uint64_t now)
{
	struct sdr_wheel_flow *f = &w->f[i];

	if (f->queued)
		return;
	f->queued = 1;
	if (f->t_next < now) { /* idle: no credit */
		f->t_next = now;
		f->frac = 0;
	}
	sdr_wheel__file(w, i);
}

/** Advance to @p now: every flow whose slot is due moves to the ready list
 *  (flows parked at the horizon are re-filed). */
static inline void sdr_wheel_advance(struct sdr_wheel *w, uint64_t now)
{
	uint64_t to = now >> w->shift;

	if (to > w->cursor + SDR_WHEEL_SLOTS)
		to = w->cursor + SDR_WHEEL_SLOTS; /* one lap visits every slot */
	while (w->cursor < to) {
		uint32_t s = (uint32_t)(++w->cursor & (SDR_WHEEL_SLOTS - 1));
		uint32_t i = w->head[s];

		w->head[s] = w->tail[s] = SDR_WHEEL_NIL;
		while (i != SDR_WHEEL_NIL) {
			uint32_t nx = w->f[i].next;
			sdr_wheel__file(w, i);
			i = nx;
		}
	}
	if (w->cursor < now >> w->shift)
		w->cursor = now >> w->shift;
}

/** Pop the first ready flow (SDR_WHEEL_NIL if none). The caller then
 *  either sends with sdr_wheel_sent() or puts it back with
 *  sdr_wheel_requeue(). */
static inline uint32_t sdr_wheel_pop(struct sdr_wheel *w)
{
	uint32_t i = w->rhead;

	if (i != SDR_WHEEL_NIL) {
		w->rhead = w->f[i].next;
		if (w->rhead == SDR_WHEEL_NIL)
			w->rtail = SDR_WHEEL_NIL;
		w->f[i].queued = 0;
	}
	return i;
}

/** A popped flow may send now if its departure time has come. */
static inline int sdr_wheel_due(const struct sdr_wheel *w, uint32_t i, uint64_t now)
{
	return w->f[i].t_next <= now;
}

/** Advance a departure time by @p bytes at the flow's rate. */
static inline void sdr_wheel_flow_advance(struct sdr_wheel_flow *f, uint64_t bytes)
{
	unsigned __int128 d = (unsigned __int128)bytes * f->cpb_fp + f->frac;

	f->t_next += (uint64_t)(d >> 32);
	f->frac = (uint64_t)d & 0xffffffffu;
}

/** Account a frame of @p bytes sent by flow @p i (popped and due). */
static inline void sdr_wheel_sent(struct sdr_wheel *w, uint32_t i, uint64_t bytes)
{
	sdr_wheel_flow_advance(&w->f[i], bytes);
}

/** For a gate that is never filed (a port's overall rate): a departure time
 *  more than @p slack cycles in the past is pulled up to now - slack, so an
 *  idle port earns at most @p slack of credit. */
static inline void sdr_wheel_clamp(struct sdr_wheel_flow *f, uint64_t now, uint64_t slack)
{
	if (f->t_next + slack < now) {
		f->t_next = now - slack;
		f->frac = 0;
	}
}

/** Put a popped flow back (still backlogged). */
static inline void sdr_wheel_requeue(struct sdr_wheel *w, uint32_t i)
{
	w->f[i].queued = 1;
	sdr_wheel__file(w, i);
}

#endif /* SDR_WHEEL_H */
