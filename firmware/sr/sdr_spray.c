/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Multipath spraying policy (sdr_spray.h, docs/multipath.md): weighted round
 * robin over a QP's paths, per-path rounds of RTT / loss / CE, suspension
 * of stalled paths and their probes. Pure C.
 * Layer sr/ (a building block of the SR engine).
 */
#include <stdbool.h>
#include <string.h>

#include "sdr_spray.h"

static uint64_t path_rtt(const struct sdr_spray *s, const struct sdr_spray_path *q)
{
	return q->srtt ? q->srtt : s->dflt_rtt;
}

void sdr_spray_init(struct sdr_spray *s, unsigned n, const uint16_t *sports, uint64_t floor,
		    uint64_t dflt_rtt, uint64_t now)
{
	memset(s, 0, sizeof(*s));
	if (n > SDR_SPRAY_MAX)
		n = SDR_SPRAY_MAX;
	s->n = (uint8_t)n;
	s->floor = floor;
	s->dflt_rtt = dflt_rtt ? dflt_rtt : 1;
	for (unsigned i = 0; i < n; i++) {
		s->p[i].sport = sports[i];
		s->p[i].weight = SDR_SPRAY_W_INIT;
		s->p[i].round_end = now + s->dflt_rtt;
	}
	s->next_poll = now;
}

unsigned sdr_spray_active(const struct sdr_spray *s)
{
	unsigned a = 0;

	for (unsigned i = 0; i < s->n; i++)
		a += s->p[i].state == SDR_SPRAY_ACTIVE;
	return a;
}

uint64_t sdr_spray_rtt_shift(const struct sdr_spray *s, unsigned p, uint64_t rtt, int slowest)
{
	uint64_t lo = UINT64_MAX, hi = 0, mine;

	if (p >= s->n || !(mine = s->p[p].min_rtt))
		return rtt;
	for (unsigned i = 0; i < s->n; i++) {
		const struct sdr_spray_path *q = &s->p[i];

		if (q->state != SDR_SPRAY_ACTIVE || !q->min_rtt)
			continue;
		if (q->min_rtt < lo)
			lo = q->min_rtt;
		if (q->min_rtt > hi)
			hi = q->min_rtt;
	}
	if (slowest)
		return hi > mine ? rtt + (hi - mine) : rtt;
	if (lo < mine)
		return rtt > mine - lo ? rtt - (mine - lo) : 1;
	return rtt;
}

const char *sdr_spray_state_name(unsigned state)
{
	return state == SDR_SPRAY_ACTIVE ? "active" : "suspended";
}

unsigned sdr_spray_pick(struct sdr_spray *s, uint64_t now)
{
	int32_t total = 0;
	int best = -1;

	if (s->n <= 1)
		return 0;
	for (unsigned i = 0; i < s->n; i++) {
		struct sdr_spray_path *q = &s->p[i];

		if (q->state == SDR_SPRAY_SUSPENDED && !q->probing && now >= q->probe_tsc) {
			q->probing = 1;
			q->probes_sent++;
			return i;
		}
	}
	for (unsigned i = 0; i < s->n; i++) {
		struct sdr_spray_path *q = &s->p[i];

		if (q->state != SDR_SPRAY_ACTIVE)
			continue;
		q->credit += q->weight;
		total += q->weight;
		if (best < 0 || q->credit > s->p[best].credit)
			best = (int)i;
	}
	if (best < 0) /* (cannot happen: half the paths stay active) */
		return 0;
	s->p[best].credit -= total;
	return (unsigned)best;
}

void sdr_spray_sent(struct sdr_spray *s, unsigned p, uint64_t now)
{
	struct sdr_spray_path *q;

	if (p >= s->n)
		return;
	q = &s->p[p];
	q->tx_ring[q->units % SDR_SPRAY_TX_RING] = now;
	q->units++;
	q->last_tx_tsc = now;
	if (!q->pend_tsc)
		q->pend_tsc = now;
}

/* The send time of the first unit path @p q sent after @p tx (its units are
 * answered in order: the one that waits now); tx + 1 when that one is no
 * longer in its ring (it sent many units since: not long after tx). */
static uint64_t sent_after(const struct sdr_spray_path *q, uint64_t tx)
{
	uint64_t n = q->units < SDR_SPRAY_TX_RING ? q->units : SDR_SPRAY_TX_RING;

	for (uint64_t k = 0; k < n; k++) { /* oldest first */
		uint64_t t = q->tx_ring[(q->units - n + k) % SDR_SPRAY_TX_RING];

		if (t > tx)
			return k || n < SDR_SPRAY_TX_RING ? t : tx + 1;
	}
	return tx + 1;
}

/* A probe came back: the path takes units again from weight 1. It keeps
 * half of its loss estimate and its failed probes until clean rounds bring
 * its weight back to SDR_SPRAY_W_INIT (round_end()): a path that loses at
 * random answers some probes, and with a clean slate it would be used for
 * rounds before its estimate crossed SDR_SPRAY_DEAD_LOSS_MILLI again. */
static void activate(struct sdr_spray_path *q, uint64_t now, uint64_t rtt)
{
	q->state = SDR_SPRAY_ACTIVE;
	q->weight = 1;
	q->credit = 0;
	q->probing = 0;
	q->revived = 1;
	q->cong = 0;
	q->loss_milli /= 2;
	q->ce_milli = 0;
	q->r_acked = q->r_lost = q->r_ce = q->r_delayed = 0;
	q->round_end = now + rtt;
}

void sdr_spray_acked(struct sdr_spray *s, unsigned p, uint64_t tx_tsc, uint64_t rtt, uint64_t now)
{
	struct sdr_spray_path *q;

	if (p >= s->n)
		return;
	q = &s->p[p];
	q->acked++;
	q->r_acked++;
	if (tx_tsc > s->newest_acked)
		s->newest_acked = tx_tsc;
	if (rtt) {
		q->srtt = q->srtt ? q->srtt - (q->srtt >> 3) + (rtt >> 3) : rtt;
		if (!q->min_rtt || rtt < q->min_rtt)
			q->min_rtt = rtt;
		/* queueing above a quarter of the path's base RTT: a delayed unit */
		if (rtt > q->min_rtt + q->min_rtt / 4 + s->floor / 4)
			q->r_delayed++;
	}
	/* units sent up to tx_tsc are answered: what waits was sent after it */
	if (tx_tsc >= q->last_tx_tsc)
		q->pend_tsc = 0;
	else if (q->pend_tsc && tx_tsc >= q->pend_tsc)
		q->pend_tsc = sent_after(q, tx_tsc);
	if (q->state == SDR_SPRAY_SUSPENDED && rtt)
		activate(q, now, rtt); /* its probe (or a late unit) came back */
}

void sdr_spray_lost(struct sdr_spray *s, unsigned p)
{
	if (p >= s->n)
		return;
	s->p[p].lost++;
	s->p[p].r_lost++;
}

void sdr_spray_ce(struct sdr_spray *s, unsigned p, uint32_t n)
{
	if (p >= s->n)
		return;
	s->p[p].ce += n;
	s->p[p].r_ce += n;
}

int sdr_spray_ce_share(struct sdr_spray *s, const uint16_t *units, uint32_t n)
{
	uint32_t all = 0, given = 0, last = 0;

	for (unsigned i = 0; i < s->n; i++)
		all += units[i];
	if (!all)
		return 0;
	for (unsigned i = 0; i < s->n; i++) {
		uint32_t k = (uint32_t)((uint64_t)n * units[i] / all);

		if (units[i])
			last = i;
		sdr_spray_ce(s, i, k);
		given += k;
	}
	sdr_spray_ce(s, last, n - given); /* (the rounding) */
	return 1;
}

void sdr_spray_resume(struct sdr_spray *s, uint64_t now)
{
	for (unsigned i = 0; i < s->n; i++) {
		struct sdr_spray_path *q = &s->p[i];

		q->pend_tsc = 0;
		if (q->state == SDR_SPRAY_SUSPENDED) {
			q->probes = 0;
			q->probing = 0;
			q->probe_tsc = now;
		}
	}
}

static void suspend(struct sdr_spray *s, struct sdr_spray_path *q, uint64_t now)
{
	unsigned shift;

	if (q->state == SDR_SPRAY_ACTIVE) {
		q->suspends++;
		/* suspended again before it proved itself: as a failed probe */
		if (q->revived && q->probes < UINT8_MAX)
			q->probes++;
		q->revived = 0;
	}
	shift = q->probes < SDR_SPRAY_PROBE_SHIFT_MAX ? q->probes : SDR_SPRAY_PROBE_SHIFT_MAX;
	q->state = SDR_SPRAY_SUSPENDED;
	q->probing = 0;
	q->pend_tsc = 0;
	q->probe_tsc = now + (SDR_SPRAY_PROBE_SRTT * path_rtt(s, q) << shift);
}

/* the end of a round of path @p q: its estimates and its weight */
static void round_end(struct sdr_spray *s, struct sdr_spray_path *q, uint64_t now)
{
	uint32_t done = q->r_acked + q->r_lost, lf, cf, df;

	q->round_end = now + path_rtt(s, q);
	if (!done)
		return; /* nothing learnt */
	lf = q->r_lost * 1000 / done;
	cf = q->r_acked ? (q->r_ce > q->r_acked ? 1000 : q->r_ce * 1000 / q->r_acked) : 0;
	df = q->r_acked ? q->r_delayed * 1000 / q->r_acked : 0;
	q->loss_milli = (3 * q->loss_milli + lf) / 4;
	q->ce_milli = (3 * q->ce_milli + cf) / 4;
	q->r_acked = q->r_lost = q->r_ce = q->r_delayed = 0;
	if (lf > SDR_SPRAY_LOSS_MILLI || cf > 500 || df > 500) {
		/* PLB: a path is moved away from after rounds congested in a
		 * row; a loss counts at once */
		if (lf > SDR_SPRAY_LOSS_MILLI || ++q->cong >= SDR_SPRAY_CONG_ROUNDS) {
			q->cong = 0;
			if (q->weight > 1) {
				q->weight = (uint8_t)(q->weight / 2);
				q->halvings++;
			}
		}
	} else {
		q->cong = 0;
		if (q->weight < SDR_SPRAY_W_MAX)
			q->weight++;
		if (q->weight >= SDR_SPRAY_W_INIT)
			q->revived = q->probes = 0; /* it proved itself */
	}
}

uint32_t sdr_spray_poll(struct sdr_spray *s, uint64_t now, uint64_t rto)
{
	uint32_t gone = 0;
	uint64_t next = UINT64_MAX;

	if (s->n <= 1 || now < s->next_poll)
		return 0;
	for (unsigned i = 0; i < s->n; i++) {
		struct sdr_spray_path *q = &s->p[i];
		uint64_t wait = SDR_SPRAY_STALL_SRTT * path_rtt(s, q), t;

		wait = (wait > rto ? wait : rto) + s->floor;

		if (q->state == SDR_SPRAY_ACTIVE) {
			if (now >= q->round_end)
				round_end(s, q, now);
			/* stalled: silent for a while, though units sent after its
			 * waiting one came back on other paths (a stall of the whole
			 * QP, its peer or the host, is the SR engine's business) */
			bool stalled = q->pend_tsc && now - q->pend_tsc > wait &&
				       s->newest_acked > q->pend_tsc;

			if ((stalled || q->loss_milli > SDR_SPRAY_DEAD_LOSS_MILLI) &&
			    2 * (sdr_spray_active(s) - 1) >= s->n) {
				suspend(s, q, now);
				/* (a lossy path delivers most of what it carries:
				 * its units wait for their ACKs, and their losses
				 * were told one by one) */
				if (stalled)
					gone |= 1u << i;
			}
		} else if (q->probing && q->pend_tsc && now - q->pend_tsc > wait) {
			/* its probe went unanswered: later, twice as late */
			if (q->probes < UINT8_MAX)
				q->probes++;
			suspend(s, q, now);
			gone |= 1u << i;
		}
		t = q->state == SDR_SPRAY_ACTIVE ? q->round_end
		    : q->probing                 ? now + s->floor
						 : q->probe_tsc;
		if (q->pend_tsc && q->pend_tsc + wait + 1 < t)
			t = q->pend_tsc + wait + 1;
		if (t < next)
			next = t;
	}
	/* (at least every floor: the SR engine calls us from its loop) */
	s->next_poll = next < now + s->floor ? next : now + s->floor;
	return gone;
}
