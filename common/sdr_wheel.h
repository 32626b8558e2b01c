/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The pacer of sdr-dpu (docs/architecture.md "Pacing"): a timing wheel and
 * the transmit scheduler built on it. The firmware's workers, sdr-pacer-bench
 * (docs/benchmarks.md) and tests/common/test_wheel.c run this same code.
 *
 * The wheel. Each flow has a departure time t_next for its next frame; a
 * frame of b bytes advances it by b / rate (in TSC cycles, 32.32 fixed
 * point, so no division on the fast path and no drift). A queued flow sits
 * in the wheel slot of its t_next: 2^shift cycles per slot, SDR_WHEEL_SLOTS
 * slots; a t_next beyond the horizon parks the flow in the farthest slot,
 * from where it is re-filed when the cursor reaches it. Advancing walks the
 * slots from the last poll to now and moves every due flow to the ready
 * list (FIFO), so the cost is per due flow, not per flow. Lists are doubly
 * linked: a flow is taken out of any of them in O(1). The worker also keeps
 * a second wheel of QPs by their next timer deadline (sdr_wheel_arm()).
 *
 * The scheduler (struct sdr_sched, one per worker). A flow is a QP; each
 * port has a gate (a flow that is never filed) for the worker's share of
 * the port rate. A visit of a QP reserves each frame with sdr_sched_ready()
 * (the QP's and its port's departure times have come) and
 * sdr_sched_charge() (both advance by the frame's bytes); after the visit,
 * sdr_sched_done() files the QP at its t_next if it still has frames
 * (backlogged) or marks it idle. A poll (sdr_sched_begin(), then
 * sdr_sched_next() until SDR_WHEEL_NIL) hands out the QPs that are due and
 * whose port gate is due, each once per poll; the others are not visited.
 * QPs due while their port's gate is not wait in the port's list, and are
 * handed out from its head while the gate is due (one per frame the port
 * may send, whatever the length of the list).
 *
 * No credit while idle: the first frame of an idle flow leaves at
 * max(t_next, now), so a QP never bursts above its rate after a pause (a
 * token bucket lets it send its depth at line rate). The same holds for a
 * port gate while none of its flows is active.
 *
 * Catch-up: a backlogged flow (or port) whose worker was late, e.g. off its
 * CPU, keeps its schedule and sends what it missed, but never more than
 * `slack` cycles' worth: t_next is pulled up to now - slack first (sdr-dpu:
 * --pace-burst). Frames never leave before their place in the schedule.
 *
 * A rate change takes effect at once: t_next is re-derived from the last
 * frame's departure and bytes at the new rate, and a queued flow is moved.
 *
 * Pure C, single-threaded, clock passed in by the caller.
 */
#ifndef SDR_WHEEL_H
#define SDR_WHEEL_H

#include <stdint.h>

#define SDR_WHEEL_SLOTS 4096u /* power of two */
#define SDR_WHEEL_NIL UINT32_MAX
/* where a queued flow is (struct sdr_wheel_flow::where): a slot index
 * below SDR_WHEEL_SLOTS, the ready list, or a port's blocked list (sched) */
#define SDR_WHEEL_IN_READY 0xFFFFu
#define SDR_WHEEL_IN_BLOCKED 0x10000u /* + port */

struct sdr_wheel_flow {
	uint64_t t_next;     /**< departure time of the next frame, cycles */
	uint64_t frac;       /**< fractional cycles (2^-32), carried */
	uint64_t cpb_fp;     /**< cycles per byte, 32.32 fixed point; 0 = unpaced */
	uint64_t slack;      /**< catch-up bound, cycles (sched) */
	uint64_t t_last;     /**< departure time of the last frame (sched: rate changes) */
	uint32_t last_bytes; /**< its bytes; 0 = none yet */
	uint32_t next, prev; /**< links in a slot list, the ready list or a blocked list */
	uint32_t where;      /**< which list, while queued */
	uint8_t queued;      /**< in one of the lists */
	uint8_t active;      /**< sched: has sent since it was last idle */
	uint8_t port;        /**< sched: its port gate */
};

struct sdr_wheel {
	struct sdr_wheel_flow *f;
	uint32_t head[SDR_WHEEL_SLOTS], tail[SDR_WHEEL_SLOTS];
	uint32_t rhead, rtail; /**< ready list */
	uint32_t nready;       /**< flows in it */
	uint64_t cursor;       /**< absolute slot number polled last */
	unsigned shift;        /**< cycles per slot = 2^shift */
	uint64_t hz;
};

static inline uint64_t sdr_wheel_cpb(uint64_t hz, uint64_t rate_bytes)
{
	return rate_bytes ? (uint64_t)(((unsigned __int128)hz << 32) / rate_bytes) : 0;
}

/** Cycles @p bytes take at @p cpb_fp cycles per byte (rounded down). */
static inline uint64_t sdr_wheel_cycles(uint64_t cpb_fp, uint64_t bytes)
{
	return (uint64_t)(((unsigned __int128)bytes * cpb_fp) >> 32);
}

static inline void sdr_wheel_init(struct sdr_wheel *w, struct sdr_wheel_flow *flows,
				  uint32_t nflows, uint64_t hz, unsigned shift, uint64_t now)
{
	w->f = flows;
	w->hz = hz;
	w->shift = shift;
	w->cursor = now >> shift;
	w->rhead = w->rtail = SDR_WHEEL_NIL;
	w->nready = 0;
	for (uint32_t i = 0; i < SDR_WHEEL_SLOTS; i++)
		w->head[i] = w->tail[i] = SDR_WHEEL_NIL;
	for (uint32_t i = 0; i < nflows; i++)
		flows[i] = (struct sdr_wheel_flow){
			.t_next = now, .t_last = now, .next = SDR_WHEEL_NIL, .prev = SDR_WHEEL_NIL};
}

/** Set a flow's rate (bytes/s); takes effect from its next frame. (The
 *  scheduler's sdr_sched_flow_rate() also moves its departure time.) */
static inline void sdr_wheel_set_rate(struct sdr_wheel *w, uint32_t i, uint64_t rate_bytes)
{
	w->f[i].cpb_fp = sdr_wheel_cpb(w->hz, rate_bytes);
}

static inline void sdr_wheel__push(struct sdr_wheel_flow *f, uint32_t *head, uint32_t *tail,
				   uint32_t i)
{
	f[i].next = SDR_WHEEL_NIL;
	f[i].prev = *tail;
	if (*tail == SDR_WHEEL_NIL)
		*head = i;
	else
		f[*tail].next = i;
	*tail = i;
}

static inline void sdr_wheel__remove(struct sdr_wheel_flow *f, uint32_t *head, uint32_t *tail,
				     uint32_t i)
{
	uint32_t p = f[i].prev, n = f[i].next;

	if (p == SDR_WHEEL_NIL)
		*head = n;
	else
		f[p].next = n;
	if (n == SDR_WHEEL_NIL)
		*tail = p;
	else
		f[n].prev = p;
	f[i].next = f[i].prev = SDR_WHEEL_NIL;
}

static inline void sdr_wheel__ready(struct sdr_wheel *w, uint32_t i)
{
	w->f[i].where = SDR_WHEEL_IN_READY;
	sdr_wheel__push(w->f, &w->rhead, &w->rtail, i);
	w->nready++;
}

/* File a queued flow by its t_next: the ready list when its slot is due. */
static inline void sdr_wheel__file(struct sdr_wheel *w, uint32_t i)
{
	uint64_t s = w->f[i].t_next >> w->shift;

	if (s <= w->cursor) {
		sdr_wheel__ready(w, i);
		return;
	}
	if (s > w->cursor + SDR_WHEEL_SLOTS - 1)
		s = w->cursor + SDR_WHEEL_SLOTS - 1; /* beyond the horizon: re-filed later */
	s &= SDR_WHEEL_SLOTS - 1;
	w->f[i].where = (uint32_t)s;
	sdr_wheel__push(w->f, &w->head[s], &w->tail[s], i);
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
 *  (flows parked at the horizon, or whose t_next moved later, are re-filed). */
static inline void sdr_wheel_advance(struct sdr_wheel *w, uint64_t now)
{
	uint64_t to = now >> w->shift;

	/* More than a lap since the last poll (a worker off its CPU): one lap
	 * ending at @p now visits every slot, and files what it re-files
	 * relative to the cursors of that lap. */
	if (to > w->cursor + SDR_WHEEL_SLOTS)
		w->cursor = to - SDR_WHEEL_SLOTS;
	while (w->cursor < to) {
		uint32_t s = (uint32_t)(++w->cursor & (SDR_WHEEL_SLOTS - 1));
		uint32_t i = w->head[s];

		if (i == SDR_WHEEL_NIL)
			continue;
		w->head[s] = w->tail[s] = SDR_WHEEL_NIL;
		while (i != SDR_WHEEL_NIL) {
			uint32_t nx = w->f[i].next;
			sdr_wheel__file(w, i);
			i = nx;
		}
	}
}

/** Pop the first ready flow (SDR_WHEEL_NIL if none). The caller then
 *  either sends with sdr_wheel_sent() or puts it back with
 *  sdr_wheel_requeue(). */
static inline uint32_t sdr_wheel_pop(struct sdr_wheel *w)
{
	uint32_t i = w->rhead;

	if (i != SDR_WHEEL_NIL) {
		sdr_wheel__remove(w->f, &w->rhead, &w->rtail, i);
		w->nready--;
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

/** A departure time more than @p slack cycles in the past is pulled up to
 *  now - slack: a late gate catches up at most @p slack. */
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

/** Take a queued flow out of the wheel or the ready list (no-op if it is
 *  not queued). */
static inline void sdr_wheel_unlink(struct sdr_wheel *w, uint32_t i)
{
	struct sdr_wheel_flow *f = &w->f[i];

	if (!f->queued)
		return;
	if (f->where == SDR_WHEEL_IN_READY) {
		sdr_wheel__remove(w->f, &w->rhead, &w->rtail, i);
		w->nready--;
	} else if (f->where < SDR_WHEEL_SLOTS) {
		sdr_wheel__remove(w->f, &w->head[f->where], &w->tail[f->where], i);
	}
	f->queued = 0;
}

/** Timer use: flow @p i is due at @p t (queued or not). A later time than
 *  the one it is filed at is only noted (it is re-filed when its slot
 *  comes); an earlier one moves it. */
static inline void sdr_wheel_arm(struct sdr_wheel *w, uint32_t i, uint64_t t)
{
	struct sdr_wheel_flow *f = &w->f[i];

	if (f->queued) {
		if (t >= f->t_next && f->where < SDR_WHEEL_SLOTS) {
			f->t_next = t;
			return;
		}
		sdr_wheel_unlink(w, i);
	}
	f->t_next = t;
	sdr_wheel_requeue(w, i);
}

/** Is a queued flow's slot at most @p horizon cycles ahead of @p now (or
 *  ready)? Looks at the slots, not at every flow. */
static inline int sdr_wheel_pending(const struct sdr_wheel *w, uint64_t now, uint64_t horizon)
{
	uint64_t last = (now + horizon) >> w->shift;

	if (w->nready)
		return 1;
	if (last > w->cursor + SDR_WHEEL_SLOTS - 1)
		last = w->cursor + SDR_WHEEL_SLOTS - 1;
	for (uint64_t s = w->cursor + 1; s <= last; s++)
		if (w->head[s & (SDR_WHEEL_SLOTS - 1)] != SDR_WHEEL_NIL)
			return 1;
	return 0;
}

/* ======================= the transmit scheduler ======================= */

#define SDR_SCHED_MAX_PORTS 4

struct sdr_sched {
	struct sdr_wheel wheel;                          /**< backlogged flows by t_next */
	struct sdr_wheel_flow port[SDR_SCHED_MAX_PORTS]; /**< port gates */
	uint32_t nactive[SDR_SCHED_MAX_PORTS];           /**< active flows per port */
	uint32_t bhead[SDR_SCHED_MAX_PORTS], btail[SDR_SCHED_MAX_PORTS]; /**< due flows
	                                               waiting for their port gate */
	unsigned nports;
	uint32_t pass; /**< flows still to hand out in this poll */
	uint8_t stall; /**< sdr_sched_ready() refused since the caller cleared it */
};

/** @p nflows flows, all idle and unpaced, of port 0; @p nports unpaced
 *  ports. */
static inline void sdr_sched_init(struct sdr_sched *s, struct sdr_wheel_flow *flows,
				  uint32_t nflows, unsigned nports, uint64_t hz, unsigned shift,
				  uint64_t now)
{
	sdr_wheel_init(&s->wheel, flows, nflows, hz, shift, now);
	s->nports = nports < SDR_SCHED_MAX_PORTS ? nports : SDR_SCHED_MAX_PORTS;
	for (unsigned p = 0; p < SDR_SCHED_MAX_PORTS; p++) {
		s->port[p] = (struct sdr_wheel_flow){
			.t_next = now, .next = SDR_WHEEL_NIL, .prev = SDR_WHEEL_NIL};
		s->nactive[p] = 0;
		s->bhead[p] = s->btail[p] = SDR_WHEEL_NIL;
	}
	s->pass = 0;
	s->stall = 0;
}

/** Port @p p's rate (bytes/s, 0 = unpaced) and catch-up bound. */
static inline void sdr_sched_port_rate(struct sdr_sched *s, unsigned p, uint64_t rate_bytes,
				       uint64_t slack_bytes)
{
	struct sdr_wheel_flow *g = &s->port[p];

	g->cpb_fp = sdr_wheel_cpb(s->wheel.hz, rate_bytes);
	g->slack = sdr_wheel_cycles(g->cpb_fp, slack_bytes);
}

/* take a queued flow out of whatever list holds it */
static inline void sdr_sched__unlink(struct sdr_sched *s, uint32_t i)
{
	struct sdr_wheel_flow *f = &s->wheel.f[i];

	if (f->queued && f->where >= SDR_WHEEL_IN_BLOCKED) {
		unsigned p = f->where - SDR_WHEEL_IN_BLOCKED;
		sdr_wheel__remove(s->wheel.f, &s->bhead[p], &s->btail[p], i);
		f->queued = 0;
	}
	sdr_wheel_unlink(&s->wheel, i);
}

/** Flow @p i is (again) a new QP of port @p port: idle, unpaced, nothing
 *  queued. */
static inline void sdr_sched_flow_reset(struct sdr_sched *s, uint32_t i, unsigned port,
					uint64_t now)
{
	struct sdr_wheel_flow *f = &s->wheel.f[i];

	sdr_sched__unlink(s, i);
	if (f->active && s->nactive[f->port])
		s->nactive[f->port]--;
	*f = (struct sdr_wheel_flow){.t_next = now,
				     .t_last = now,
				     .next = SDR_WHEEL_NIL,
				     .prev = SDR_WHEEL_NIL,
				     .port = (uint8_t)port};
}

/** Flow @p i's rate (bytes/s, 0 = unpaced) and catch-up bound, at once: the
 *  next frame leaves at the last one's departure plus its bytes at the new
 *  rate, and a queued flow is moved there. */
static inline void sdr_sched_flow_rate(struct sdr_sched *s, uint32_t i, uint64_t rate_bytes,
				       uint64_t slack_bytes)
{
	struct sdr_wheel_flow *f = &s->wheel.f[i];

	f->cpb_fp = sdr_wheel_cpb(s->wheel.hz, rate_bytes);
	f->slack = sdr_wheel_cycles(f->cpb_fp, slack_bytes);
	if (f->last_bytes) {
		f->t_next = f->t_last + sdr_wheel_cycles(f->cpb_fp, f->last_bytes);
		f->frac = 0;
	}
	if (f->queued && f->where < SDR_WHEEL_SLOTS) {
		sdr_wheel_unlink(&s->wheel, i);
		sdr_wheel_requeue(&s->wheel, i);
	}
}

/** Start a poll at @p now: due flows become ready. */
static inline void sdr_sched_begin(struct sdr_sched *s, uint64_t now)
{
	sdr_wheel_advance(&s->wheel, now);
	s->pass = s->wheel.nready;
}

/** The next flow to visit in this poll: due, and its port gate due; each
 *  flow at most once. First the flows that waited for a port gate that is
 *  due now (in their order, only as long as it stays due: the others are
 *  not touched), then the ready ones that were ready when the poll began
 *  (one whose port gate is not due waits in the port's list).
 *  SDR_WHEEL_NIL when there is none left. The caller visits it and then
 *  calls sdr_sched_done(). */
static inline uint32_t sdr_sched_next(struct sdr_sched *s, uint64_t now)
{
	struct sdr_wheel *w = &s->wheel;

	for (unsigned p = 0; p < s->nports; p++) {
		uint32_t i = s->bhead[p];

		if (i != SDR_WHEEL_NIL && s->port[p].t_next <= now) {
			sdr_wheel__remove(w->f, &s->bhead[p], &s->btail[p], i);
			w->f[i].queued = 0;
			return i;
		}
	}
	while (s->pass) {
		uint32_t i = sdr_wheel_pop(w);
		struct sdr_wheel_flow *f;

		s->pass--;
		if (i == SDR_WHEEL_NIL)
			break;
		f = &w->f[i];
		if (f->t_next > now) { /* its slot is due, its time not yet */
			sdr_wheel_requeue(w, i);
			continue;
		}
		if (s->port[f->port].t_next > now) {
			f->queued = 1;
			f->where = SDR_WHEEL_IN_BLOCKED + f->port;
			sdr_wheel__push(w->f, &s->bhead[f->port], &s->btail[f->port], i);
			continue;
		}
		return i;
	}
	s->pass = 0;
	return SDR_WHEEL_NIL;
}

/** May flow @p i send a frame now (its departure time and its port's have
 *  come)? Sets s->stall when not. */
static inline int sdr_sched_ready(struct sdr_sched *s, uint32_t i, uint64_t now)
{
	const struct sdr_wheel_flow *f = &s->wheel.f[i];

	if (f->t_next <= now && s->port[f->port].t_next <= now)
		return 1;
	s->stall = 1;
	return 0;
}

/** Flow @p i sends a frame of @p bytes now (sdr_sched_ready() said yes).
 *  @return 1 when it is the first frame after idle. */
static inline int sdr_sched_charge(struct sdr_sched *s, uint32_t i, uint32_t bytes, uint64_t now)
{
	struct sdr_wheel_flow *f = &s->wheel.f[i], *g = &s->port[f->port];
	int first = !f->active;

	if (first) { /* no credit for the time it was idle */
		if (f->t_next < now) {
			f->t_next = now;
			f->frac = 0;
		}
		f->active = 1;
		if (!s->nactive[f->port]++ && g->t_next < now) { /* nor for an idle port */
			g->t_next = now;
			g->frac = 0;
		}
	} else {
		sdr_wheel_clamp(f, now, f->slack);
	}
	sdr_wheel_clamp(g, now, g->slack);
	f->t_last = f->t_next;
	f->last_bytes = bytes;
	sdr_wheel_flow_advance(f, bytes);
	sdr_wheel_flow_advance(g, bytes);
	return first;
}

/** A visit of flow @p i is over: @p backlogged when it still has frames
 *  to send (it stalled on a pacer or a buffer, or used its whole budget):
 *  it is filed at its departure time; else it is idle. */
static inline void sdr_sched_done(struct sdr_sched *s, uint32_t i, int backlogged)
{
	struct sdr_wheel_flow *f = &s->wheel.f[i];

	if (backlogged) {
		if (!f->queued)
			sdr_wheel_requeue(&s->wheel, i);
	} else if (f->active) {
		f->active = 0;
		s->nactive[f->port]--;
	}
}

/** Is a flow ready, or due within @p horizon cycles (its own departure, or
 *  the gate of the port it waits for)? (Whether a worker may sleep that
 *  long.) */
static inline int sdr_sched_pending(const struct sdr_sched *s, uint64_t now, uint64_t horizon)
{
	for (unsigned p = 0; p < s->nports; p++)
		if (s->bhead[p] != SDR_WHEEL_NIL && s->port[p].t_next <= now + horizon)
			return 1;
	return sdr_wheel_pending(&s->wheel, now, horizon);
}

#endif /* SDR_WHEEL_H */
