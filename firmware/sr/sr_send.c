/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Selective Repeat engine, sender side (sr.h): per-unit timers, the
 * retransmit queue, RTO backoff and probing, ACK processing, time-based loss
 * detection and the tail-loss probe ("The RACK-TLP Loss Detection Algorithm
 * for TCP", RFC 8985).
 * Layer sr/: the SR engine (the reliable-QP core); calls only the primitives (prim/).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cq.h"
#include "send.h"
#include "sr.h"
#include "sr_desc.h"
#include "sr_path.h"
#include "txq.h"

#define SR_EXPIRE_MAX 256   /* timer entries looked at per loop iteration */
#define SR_REO_PERSIST 16   /* losses a widened reordering window lasts */
#define SR_LATE_MIN_US 2000 /* a pass this late after a deadline: the worker was off its CPU */
#define SR_LATE_MAX_MS 1000 /* time excused so (sdr_sr_late()) without progress, at most */

int sdr_sr_init(struct sdr_sr *sr, const struct sdr_qp *qp)
{
	/* a message has at most max_msg / chunk chunks, plus its immediate unit;
	 * a unit is at most twice in the timer queue (its entry and a NACK's
	 * retransmission) and once in the retransmit queue */
	uint32_t units = qp->max_msg / (qp->mtu * qp->ppc) + 1;

	sdr_rtt_init(&sr->rtt, sdr_ms_cycles(sdr_sr_cfg.init_rto_ms),
		     sdr_us_cycles(sdr_sr_cfg.min_rto_us), sdr_sr_cfg.alpha_milli,
		     sdr_sr_cfg.rttvar_k);
	sr->retx_pkt = UINT32_MAX;
	sr->retx_hbase = UINT32_MAX;
	sr->full_copies = 1;
	sr->npaths = 1;
	sr->ack_period = sdr_us_cycles(sdr_sr_cfg.ack_us);
	sr->fb_pkts = sdr_sr_cfg.cc_ack_pkts;
	sr->fb_gap = sdr_us_cycles(SDR_SR_FB_GAP_US);
	if (sr->fb_gap > sr->ack_period)
		sr->fb_gap = sr->ack_period;
	sr->fin = calloc(SDR_SR_FIN_CAP, sizeof(*sr->fin));
	sr->units_max = units;
	sr->units = calloc((size_t)SDR_MAX_MSGS * units, sizeof(*sr->units));
	if (!sr->fin || !sr->units || sdr_tq_init(&sr->timers, 2 * SDR_MAX_MSGS * units + 64) ||
	    sdr_tq_init(&sr->retxq, SDR_MAX_MSGS * units + 64))
		return -ENOMEM;
	for (unsigned i = 0; i < SDR_MAX_MSGS; i++)
		sr->snd[i].u = sr->units + (size_t)i * units;
	sdr_sr_cc_init(&sr->cc, qp, qp->cc_mode ? qp->cc_mode == SDR_QP_CC_ON : sdr_sr_cfg.cc);
	sdr_sr_path_setup(sr, qp);
	return 0;
}

void sdr_sr_fini(struct sdr_sr *sr)
{
	free(sr->fin);
	sr->fin = NULL;
	sdr_tq_fini(&sr->timers);
	sdr_tq_fini(&sr->retxq);
	free(sr->units);
	sr->units = NULL;
	for (unsigned i = 0; i < SDR_MAX_MSGS; i++)
		sr->snd[i].u = NULL;
}

void sdr_sr_reset(struct sdr_sr *sr)
{
	/* nothing of the SR machinery refers to anything live any more */
	sr->timers.n = sr->timers.head = 0;
	sr->retxq.n = sr->retxq.head = 0;
	sr->retx_pkt = UINT32_MAX;
	for (uint32_t i = 0; i < sr->nack_dirty; i++)
		sr->rcv[sr->ack_dirty[i]].ack_pending = 0;
	sr->nack_dirty = 0;
	sr->ack_due = 0;
	sr->fin_n = sr->fin_head = 0;
	sr->fin_next = 0;
	sr->ack_now = 0;
	sr->probing = 0;
	sr->rack_due = 0;
	sr->rto_after = 0;
	sr->tlp_done = 0;
	memset(sr->holes, 0, sizeof(sr->holes));
	sr->holes_due = 0;
	sr->retx_hbase = UINT32_MAX;
	sr->wake_at = sr->late_until = sr->late_sum = 0;
	sr->stall_tsc = 0; /* (the QP failed, or is going away: not an outage that ended) */
}

int sdr_sr_send_prepare(struct sdr_qp *qp, struct sdr_sr *sr, struct sdr_smsg *sm)
{
	struct sdr_sr_send *ss = sdr_sr_send_of(sr, sm->seq);

	ss->nchunks = (sm->npkts + qp->ppc - 1) / qp->ppc;
	ss->nunits = ss->nchunks + (sm->imm_next < SDR_IMM_NIBBLES ? 1 : 0);
	if (ss->nunits > sr->units_max) /* cannot happen: len <= max_msg */
		return -ENOMEM;
	memset(ss->u, 0, (size_t)ss->nunits * sizeof(*ss->u));
	ss->units_acked = 0;
	ss->ack_from = 0;
	ss->txdone = 0;
	ss->retx_chunks = 0;
	ss->hold = 0;
	ss->hold_bytes = 0;
	return 0;
}

/* Packets [*first, *end) of unit @p unit. */
static void unit_pkts(const struct sdr_qp *qp, const struct sdr_smsg *sm,
		      const struct sdr_sr_send *ss, uint32_t unit, uint32_t *first, uint32_t *end)
{
	if (unit < ss->nchunks) {
		*first = unit * qp->ppc;
		*end = *first + qp->ppc < sm->npkts ? *first + qp->ppc : sm->npkts;
	} else {
		*first = sm->npkts;
		*end = SDR_IMM_NIBBLES;
	}
}

void sdr_sr_unit_sent(struct sdr_qp *qp, struct sdr_sr *sr, const struct sdr_smsg *sm,
		      uint32_t pkt_off, uint64_t now)
{
	struct sdr_sr_send *ss = sdr_sr_send_of(sr, sm->seq);
	uint32_t unit = pkt_off < sm->npkts ? pkt_off / qp->ppc : ss->nchunks, first, end;
	struct sdr_sr_unit *u = &ss->u[unit];

	sdr_sr_path_pkt_sent(sr);
	unit_pkts(qp, sm, ss, unit, &first, &end);
	if (++u->sent != end - first)
		return;
	u->tx_tsc = now;
	sdr_sr_path_first_sent(qp, sr, u, now);
	sr->tlp_base = now;
	if (sdr_tq_push(&sr->timers, sm->seq, unit, now))
		u->tx_tsc = 0; /* no timer: the outage horizon is the backstop */
}

/* The send this (seq) names, if it is outstanding with SR state. */
static struct sdr_smsg *sr_msg(struct sdr_qp *qp, struct sdr_sr *sr, uint32_t seq)
{
	struct sdr_smsg *sm = sdr_send_outstanding(qp, seq);

	return sm && sdr_sr_send_of(sr, seq)->u ? sm : NULL;
}

/* Timer entry @p e names a unit that is outstanding (not acknowledged,
 * not queued, this entry its last transmission): it, else NULL. */
static struct sdr_sr_unit *live_unit(struct sdr_qp *qp, struct sdr_sr *sr,
				     const struct sdr_tq_ent *e)
{
	struct sdr_sr_send *ss = sdr_sr_send_of(sr, e->seq);
	struct sdr_sr_unit *u;

	if (!sr_msg(qp, sr, e->seq) || e->chunk >= ss->nunits)
		return NULL;
	u = &ss->u[e->chunk];
	return u->acked || u->inq || u->tx_tsc != e->tsc ? NULL : u;
}

/* Find the host bytes of packet @p pkt (data packets only). */
static const uint8_t *pkt_src(const struct sdr_qp *qp, const struct sdr_smsg *sm, uint32_t pkt)
{
	uint32_t off = pkt * qp->mtu;

	for (unsigned i = 0; i < sm->nranges; i++) {
		const struct sdr_srange *r = &sm->r[i];
		if (off >= r->msg_off && off - r->msg_off < r->len)
			return r->src + sdr_stripe_real(&qp->rq.stripe, off - r->msg_off);
	}
	return NULL;
}

/* Extra wait of the timers of send @p seq (EC: parity and NACKs first):
 * its fixed part and the time the pacer takes, at the rate in force now
 * (the controller's), to send the bytes it waits for. */
static uint64_t hold_of(const struct sdr_qp *qp, const struct sdr_sr *sr, uint32_t seq)
{
	const struct sdr_smsg *sm = &qp->smsg[sdr_seq_msg_id(seq)];
	const struct sdr_sr_send *ss = &sr->snd[sdr_seq_msg_id(seq)];

	if (sm->state != SDR_SM_QUEUED || sm->seq != seq)
		return 0;
	return ss->hold + sdr_sr_pace_cycles(qp, &sr->cc, ss->hold_bytes);
}

/* ---- loss detection: RACK-TLP (RFC 8985; docs/reliability.md "Loss detection") ---- */

static struct sdr_sr_path *path_of(struct sdr_sr *sr, const struct sdr_sr_unit *u)
{
	return &sr->path[u->path % SDR_SR_PATHS_MAX];
}

/* Unit @p chunk of send @p seq, last sent at @p tx, was sent before the
 * most recently sent unit acknowledged on @p q (RFC 8985 6.2: a tie of
 * transmit times is broken by the order of sending; units sent in one loop
 * pass share a TSC, and leave in (seq, unit) order). */
static int rack_sent_before(const struct sdr_sr_path *q, uint64_t tx, uint32_t seq, uint32_t chunk)
{
	if (tx != q->rack_tsc)
		return tx < q->rack_tsc;
	return seq != q->rack_seq ? (int32_t)(seq - q->rack_seq) < 0 : chunk < q->rack_chunk;
}

/* A unit of path @p q was taken for lost (RACK, RTO): a widened reordering
 * window goes back to min_rtt / 4 after SR_REO_PERSIST of them (RFC 8985
 * 6.2 step 4: reo_wnd_persist). */
static void reo_loss(struct sdr_sr_path *q)
{
	if (q->reo_left && !--q->reo_left)
		q->reo_wnd = 0;
}

/* The reordering window of path @p q: min_rtt / 4 until widened, at most its SRTT. */
static uint64_t reo_wnd_of(const struct sdr_sr_path *q)
{
	uint64_t w = q->reo_wnd ? q->reo_wnd : q->min_rtt / 4;

	return q->srtt && w > q->srtt ? q->srtt : w;
}

/* A unit of path @p q sent at @p tx is lost when a unit sent later on it was
 * acknowledged (rack_tsc > tx) and it is still missing at this TSC: the RTT
 * of that unit (which holds its wait for the receiver's ACK), the reordering
 * window, and one ACK period (a unit that arrives just after the receiver
 * sent an ACK is reported by the next one), and the send's hold (EC: parity
 * and its NACKs first). */
static uint64_t rack_deadline(const struct sdr_sr *sr, const struct sdr_sr_path *q, uint64_t tx,
			      uint64_t hold)
{
	return tx + q->rack_rtt + reo_wnd_of(q) + sr->ack_period + hold;
}

/* The oldest retransmission timer expires at this TSC (UINT64_MAX: none):
 * its unit's transmission + the RTO + the send's hold, not before the RTO
 * re-armed by a tail-loss probe. */
static uint64_t rto_due(const struct sdr_qp *qp, const struct sdr_sr *sr)
{
	const struct sdr_tq_ent *e = sdr_tq_peek(&sr->timers);
	uint64_t t;

	if (!e)
		return UINT64_MAX;
	t = e->tsc + sr->rtt.rto + hold_of(qp, sr, e->seq);
	if (t < sr->rto_after)
		t = sr->rto_after;
	return t > sr->late_until ? t : sr->late_until;
}

/* The tail-loss probe's timeout: RFC 8985 7.2 takes 2 SRTT, for TCP's
 * delayed ACKs of unknown length, under an RTO of at least 200 ms. Here the
 * receiver's ACK delay is bounded (the ACK period) and the RTO is as short
 * as 1.5 SRTT, so the probe comes when the RACK rule would find the last
 * unit lost had a later one been acknowledged: the path's SRTT (or its
 * latest RTT, if longer) + its reordering window + the ACK period, on the
 * slowest path (the last unit may be on any); the QP's SRTT + a quarter
 * before any path has a sample. */
static uint64_t pto_of(const struct sdr_sr *sr)
{
	uint64_t t = 0;

	for (unsigned p = 0; p < sr->npaths && p < SDR_SR_PATHS_MAX; p++) {
		const struct sdr_sr_path *q = &sr->path[p];

		/* (the latest RTT too: a queue that grows is ahead of SRTT) */
		uint64_t r = q->rack_rtt > q->srtt ? q->rack_rtt : q->srtt;

		if (q->srtt && r + reo_wnd_of(q) > t)
			t = r + reo_wnd_of(q);
	}
	if (!t)
		t = sr->rtt.srtt + sr->rtt.srtt / 4;
	return t + sr->ack_period;
}

/* The tail-loss probe is due at this TSC: a PTO after the last unit sent
 * (the RTT estimates hold the queueing a unit meets, so no ACK of it by then
 * is news); UINT64_MAX if none is armed, the RACK rule waits to decide on a
 * unit (RFC 8985 7.2: no probe while the reordering timer is armed), or the
 * RTO comes first. */
static uint64_t tlp_due(const struct sdr_qp *qp, const struct sdr_sr *sr)
{
	const struct sdr_tq *t = &sr->timers;
	uint64_t due;

	if (sr->tlp_done || sr->probing || sr->rack_due || sr->holes_due || !sr->rtt.samples ||
	    !t->n)
		return UINT64_MAX;
	due = sr->tlp_base + pto_of(sr) + hold_of(qp, sr, t->e[(t->head + t->n - 1) % t->cap].seq);
	if (due < sr->late_until)
		due = sr->late_until;
	return due < rto_due(qp, sr) ? due : UINT64_MAX;
}

/* Unit @p chunk of send @p seq (@p u) was found lost by the RACK rule, on a
 * unit or on a hole report: to the retransmit queue, as a loss of its path
 * (and of the spraying policy's estimate). @return 0, or -1 without room
 * (its RTO stays). */
static int rack_queue(struct sdr_worker *w, struct sdr_sr *sr, struct sdr_sr_unit *u, uint32_t seq,
		      uint32_t chunk)
{
	struct sdr_sr_path *q = path_of(sr, u);

	if (sdr_tq_push(&sr->retxq, seq, chunk, 0)) {
		w->ctr[SDR_CTR_sr_nomem]++;
		return -1;
	}
	u->inq = 1;
	u->lost_by = SDR_SR_LOST_RACK;
	q->rack_lost++;
	sdr_sr_path_lost(sr, u);
	reo_loss(q);
	return 0;
}

/* The RACK rule (RFC 8985 6.2 step 5) over the timer FIFO, oldest first:
 * the units it finds lost go to the retransmit queue; sr->rack_due is when
 * the first one still undecided must be looked at again. Stale entries at
 * the head are dropped on the way: on one path, O(units acknowledged);
 * sprayed, the units sent before the newest acknowledged on any path (a
 * slower path's units in flight), at most SR_EXPIRE_MAX. */
static void rack_detect(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_sr *sr, uint64_t now)
{
	struct sdr_tq *t = &sr->timers;
	uint64_t due_min = 0, newest = 0;
	uint32_t i = 0, looked = 0;

	sr->rack_due = 0;
	if (sr->probing)
		return;
	/* (sprayed: the most recently sent unit acknowledged on any path; the
	 * FIFO is in order of sending, and no path can find a unit sent after
	 * it lost, so the walk ends there) */
	for (unsigned p = 0; p < sr->npaths && p < SDR_SR_PATHS_MAX; p++)
		if (sr->path[p].rack_tsc > newest)
			newest = sr->path[p].rack_tsc;
	while (i < t->n) {
		const struct sdr_tq_ent *e = &t->e[(t->head + i) % t->cap];
		struct sdr_sr_unit *u = live_unit(qp, sr, e);
		struct sdr_sr_path *q;
		uint64_t due;

		if (looked++ == SR_EXPIRE_MAX) {
			due_min = now; /* more next time round */
			break;
		}
		if (!u) {
			if (i == 0)
				sdr_tq_pop(t);
			else
				i++;
			continue;
		}
		if (e->tsc > newest)
			break;
		q = path_of(sr, u);
		due = rack_sent_before(q, e->tsc, e->seq, e->chunk)
			      ? rack_deadline(sr, q, e->tsc, hold_of(qp, sr, e->seq))
			      : UINT64_MAX;
		if (due > now) {
			if (due != UINT64_MAX && (!due_min || due < due_min))
				due_min = due;
			if (sr->npaths <= 1)
				break; /* one path: the later entries were sent later */
			i++;
			continue;
		}
		if (rack_queue(w, sr, u, e->seq, e->chunk))
			break;
		SDR_QP_CTR(qp, sr, rack_retx)++;
		if (i == 0)
			sdr_tq_pop(t);
		else
			i++;
	}
	sr->rack_due = due_min;
}

/* Tail-loss probe (RFC 8985 7): nothing acknowledged for a PTO with units
 * outstanding: the last unit sent goes again, once until the next progress;
 * its ACK lets the RACK rule find the others. The RTO is re-armed (RFC 8985
 * 7.3): no timer expires before one RTO from now. */
static void tlp_fire(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_sr *sr, uint64_t now)
{
	const struct sdr_tq *t = &sr->timers;

	sr->tlp_done = 1;
	sr->rto_after = now + sr->rtt.rto;
	for (uint32_t i = t->n, looked = 0; i-- > 0 && looked++ < SR_EXPIRE_MAX;) {
		const struct sdr_tq_ent *e = &t->e[(t->head + i) % t->cap];
		struct sdr_sr_unit *u = live_unit(qp, sr, e);

		if (!u)
			continue;
		if (sdr_tq_push(&sr->retxq, e->seq, e->chunk, 0)) {
			w->ctr[SDR_CTR_sr_nomem]++;
			return;
		}
		u->inq = 1;
		u->lost_by = SDR_SR_LOST_TLP;
		SDR_QP_CTR(qp, sr, tlp)++;
		return;
	}
}

/* RACK's part of a newly acknowledged unit @p u (before it is marked):
 * the path's RTT estimates (Karn: @p rtt 0 = no sample), the most recently
 * sent unit delivered (RFC 8985 6.2 step 2: not from an ACK too fast for
 * the retransmission, which was spurious), the reordering it shows. */
static void rack_acked(struct sdr_qp *qp, struct sdr_sr *sr, const struct sdr_sr_unit *u,
		       uint32_t seq, uint32_t chunk, uint64_t rtt, uint64_t now)
{
	struct sdr_sr_path *q = path_of(sr, u);
	uint64_t since;

	if (rtt) {
		q->srtt = q->srtt ? (7 * q->srtt + rtt) / 8 : rtt;
		if (!q->min_rtt || rtt < q->min_rtt)
			q->min_rtt = rtt;
		q->samples++;
	}
	if (!u->tx_tsc || now < u->tx_tsc)
		return;
	since = now - u->tx_tsc;
	if (u->retx && since < q->min_rtt - q->min_rtt / 4) {
		/* well below the fastest round trip (a quarter of it is left
		 * for the loops' timing): the retransmission cannot have
		 * travelled, the original arrived; widen the window (RFC 8985
		 * 6.2 step 4) */
		SDR_QP_CTR(qp, sr, spurious_retx)++;
		q->spurious++;
		if (u->lost_by == SDR_SR_LOST_RACK) { /* (a probe, an RTO: not reordering) */
			q->reo_wnd = reo_wnd_of(q) + (q->min_rtt / 4 ? q->min_rtt / 4 : 1);
			q->reo_left = SR_REO_PERSIST;
		}
		return;
	}
	if (!u->retx && q->rack_tsc && rack_sent_before(q, u->tx_tsc, seq, chunk)) {
		/* delivered after a unit sent later: reordering. Later than the
		 * rule allowed (it was taken for lost, or would have been): the
		 * window grows to what was seen */
		uint64_t base = u->tx_tsc + q->rack_rtt + sr->ack_period;

		if (now > base && now - base > reo_wnd_of(q)) {
			q->reo_wnd = now - base;
			q->reo_left = SR_REO_PERSIST;
		}
	}
	if (!q->rack_tsc || !rack_sent_before(q, u->tx_tsc, seq, chunk)) {
		q->rack_tsc = u->tx_tsc;
		q->rack_seq = seq;
		q->rack_chunk = chunk;
		q->rack_rtt = since;
	}
}

/* The sender's earliest deadline (UINT64_MAX: none): the oldest timer
 * (sdr_sr_tx step 1 looks at the head), the unit RACK must look at again,
 * the tail-loss probe, a path's round or stall (sr_path.h), not before
 * @p floor. */
static uint64_t sender_due(const struct sdr_qp *qp, const struct sdr_sr *sr, uint64_t floor)
{
	uint64_t d = rto_due(qp, sr), t;

	if (sr->rack_due && sr->rack_due < d)
		d = sr->rack_due;
	if (sr->holes_due && sr->holes_due < d)
		d = sr->holes_due;
	if ((t = tlp_due(qp, sr)) < d)
		d = t;
	if (sr->spray.n > 1 && sr->timers.n && sr->spray.next_poll < d)
		d = sr->spray.next_poll > floor ? sr->spray.next_poll : floor;
	return d;
}

/* ---- the receiver's hole reports (docs/reliability.md "Loss detection") ---- */

static struct sdr_sr_hole *hole_slot(struct sdr_sr *sr, uint32_t seq, uint32_t chunk)
{
	return &sr->holes[(uint32_t)(seq * 0x9E3779B1u ^ chunk * 0x85EBCA6Bu) >> 26];
}

/* The hole reports of an ACK (after its entries were walked): kept for the
 * chunk's retransmission; one that shows a packet after a missing one
 * arrived decides the chunk lost a reordering window (and an ACK period,
 * and the send's hold) later: the packets of a unit leave in order on one
 * path, so that is the RACK rule on a packet (RFC 8985 6.2), not waiting
 * for a later unit's ACK - which the last unit sent never gets. */
static void holes_rx(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_sr *sr, const uint8_t *msg,
		     size_t len, const struct sdr_ctrl_hdr *h, uint64_t now)
{
	int n = sdr_ctrl_ack_holes_count(msg, len, h);

	if (n < 0)
		w->ctr[SDR_CTR_holes_bad]++;
	for (int i = 0; i < n; i++) {
		struct sdr_ack_hole x;
		struct sdr_smsg *sm;
		struct sdr_sr_send *ss;
		struct sdr_sr_unit *u;
		struct sdr_sr_hole *hs;
		uint32_t first, end;

		if (sdr_ctrl_ack_hole_decode(msg, h, (unsigned)i, &x)) {
			w->ctr[SDR_CTR_holes_bad]++;
			continue;
		}
		sm = sr_msg(qp, sr, x.seq);
		ss = sdr_sr_send_of(sr, x.seq);
		if (!sm || x.chunk >= ss->nchunks) {
			w->ctr[SDR_CTR_holes_stale]++;
			continue;
		}
		u = &ss->u[x.chunk];
		unit_pkts(qp, sm, ss, x.chunk, &first, &end);
		if (u->acked || !u->tx_tsc) { /* (or not yet sent whole) */
			w->ctr[SDR_CTR_holes_stale]++;
			continue;
		}
		if (x.first >= end - first) {
			w->ctr[SDR_CTR_holes_bad]++;
			continue;
		}
		if (end - first - x.first < 64) /* (bits past the chunk say nothing) */
			x.have &= (1ull << (end - first - x.first)) - 1;
		hs = hole_slot(sr, x.seq, x.chunk);
		*hs = (struct sdr_sr_hole){.rx_tsc = now,
					   .have = x.have,
					   .seq = x.seq,
					   .chunk = x.chunk,
					   .first = x.first};
		SDR_QP_CTR(qp, sr, holes_rx)++;
		/* a packet after the hole arrived in the unit's first transmission.
		 * Of a retransmission's packets a report says nothing until a
		 * packet sent after them is known to have arrived - which is the
		 * unit rule's own evidence (a later unit acknowledged); under a
		 * standing queue a report may be older than the retransmission's
		 * arrival by far more than any RTT estimate */
		const struct sdr_sr_path *q = path_of(sr, u);
		if (x.have && !u->inq && !u->retx && now > u->tx_tsc) {
			hs->due = now + reo_wnd_of(q) + sr->ack_period + hold_of(qp, sr, x.seq);
			if (!sr->holes_due || hs->due < sr->holes_due)
				sr->holes_due = hs->due;
		}
	}
}

/* The chunks whose hole reports' decisions are due go to the retransmit
 * queue, unless acknowledged or sent again since. */
static void holes_detect(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_sr *sr, uint64_t now)
{
	uint64_t next = 0;

	for (unsigned i = 0; i < SDR_SR_HOLES; i++) {
		struct sdr_sr_hole *hs = &sr->holes[i];
		struct sdr_smsg *sm;
		struct sdr_sr_send *ss;
		struct sdr_sr_unit *u;

		if (!hs->due)
			continue;
		if (hs->due > now || sr->probing) { /* (probing: the RTOs decide) */
			if (!next || hs->due < next)
				next = hs->due;
			continue;
		}
		hs->due = 0;
		sm = sr_msg(qp, sr, hs->seq);
		ss = sdr_sr_send_of(sr, hs->seq);
		if (!sm || hs->chunk >= ss->nchunks)
			continue;
		u = &ss->u[hs->chunk];
		if (u->acked || u->inq || u->tx_tsc >= hs->rx_tsc)
			continue;
		if (rack_queue(w, sr, u, hs->seq, hs->chunk) == 0)
			SDR_QP_CTR(qp, sr, holes_lost)++;
	}
	sr->holes_due = next;
}

/* The first packet of unit @p u ([first, end)) to retransmit: past what a
 * hole report newer than its last transmission shows arrived (once per
 * report; a third transmission goes whole, as does a probe of a restarted
 * receiver: a receiver that lost its packet bitmap still gets every
 * packet). sr->retx_have then says which packets retx_next() skips. */
static uint32_t retx_first(struct sdr_qp *qp, struct sdr_sr *sr, const struct sdr_sr_unit *u,
			   uint32_t first, uint32_t end)
{
	struct sdr_sr_hole *hs = hole_slot(sr, sr->retx_cur.seq, sr->retx_cur.chunk);
	uint32_t base;

	sr->retx_hbase = UINT32_MAX;
	if (!hs->rx_tsc || hs->seq != sr->retx_cur.seq || hs->chunk != sr->retx_cur.chunk ||
	    hs->rx_tsc <= u->tx_tsc || u->retx >= 2 || u->reprobe)
		return first;
	base = first + hs->first;
	if (base >= end) /* (checked at its arrival) */
		return first;
	sr->retx_hbase = base;
	sr->retx_have = hs->have; /* (its bits past the unit were cleared at arrival) */
	hs->rx_tsc = 0;
	hs->due = 0;
	SDR_QP_CTR(qp, sr, retx_pkts_saved) += hs->first + (uint32_t)__builtin_popcountll(hs->have);
	return base;
}

/* The next packet to retransmit at or after @p pkt (< end): not one the
 * report showed arrived. */
static uint32_t retx_next(const struct sdr_sr *sr, uint32_t pkt, uint32_t end)
{
	while (pkt < end && sr->retx_hbase != UINT32_MAX && pkt - sr->retx_hbase < 64 &&
	       ((sr->retx_have >> (pkt - sr->retx_hbase)) & 1))
		pkt++;
	return pkt;
}

/* A worker that was off its CPU (a shared machine: the daemon descheduled)
 * did not receive the ACKs of that time either, nor, in a ring pair, did
 * its peer send them: its timers must not take the time missed for an
 * unanswered round trip. The worker visits the QP at its earliest deadline
 * (wake_at, set by the last pass; an ACK or a post brings the pass earlier,
 * never later), so a pass that comes much later than that is the measure. */
void sdr_sr_late(struct sdr_qp *qp, struct sdr_sr *sr, uint64_t now)
{
	uint64_t at = sr->wake_at, min = sdr_us_cycles(SR_LATE_MIN_US), late;
	uint64_t cap = sdr_ms_cycles(SR_LATE_MAX_MS);

	sr->wake_at = 0;
	if (4 * sr->ack_period > min)
		min = 4 * sr->ack_period;
	if (!at || now <= at + min || sr->late_sum >= cap)
		return; /* (a worker late again and again, nothing acknowledged: fire anyway) */
	late = now - at < cap - sr->late_sum ? now - at : cap - sr->late_sum;
	sr->late_until = now + late;
	sr->late_len = late;
	sr->late_sum += late;
	SDR_QP_CTR(qp, sr, late_timers)++;
}

uint64_t sdr_sr_next_due(const struct sdr_qp *qp, const struct sdr_sr *sr, uint64_t now)
{
	uint64_t d = UINT64_MAX, t;

	/* receiver: ACKs (sdr_sr_poll) */
	if (sr->ack_now)
		return now;
	if (sr->nack_dirty)
		d = sr->ack_due;
	if (sr->fin_next && sr->fin_next < d)
		d = sr->fin_next;
	/* sender */
	if ((t = sender_due(qp, sr, now)) < d)
		d = t;
	/* the outage horizon (sdr_sr_poll) */
	if (qp->horizon_tsc && qp->ack_cursor != qp->send_next) {
		t = qp->progress_tsc + qp->horizon_tsc + 1;
		if (t < d)
			d = t;
	}
	return d;
}

unsigned sdr_sr_tx(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_sr *sr, uint64_t now)
{
	const struct sdr_tq_ent *e;
	unsigned sent = 0, budget = SDR_BURST, looked = 0;

	/* 0. loss detection: the RACK rule's re-check, the tail-loss probe */
	if (sr->rack_due && sr->rack_due <= now)
		rack_detect(w, qp, sr, now);
	if (sr->holes_due && sr->holes_due <= now)
		holes_detect(w, qp, sr, now);
	if (tlp_due(qp, sr) <= now)
		tlp_fire(w, qp, sr, now);

	/* 1. expired timers -> retransmit queue */
	while ((e = sdr_tq_peek(&sr->timers)) && rto_due(qp, sr) <= now &&
	       looked++ < SR_EXPIRE_MAX) {
		struct sdr_tq_ent x = *e;
		struct sdr_smsg *sm;
		struct sdr_sr_send *ss;

		sdr_tq_pop(&sr->timers);
		sm = sr_msg(qp, sr, x.seq);
		ss = sdr_sr_send_of(sr, x.seq);
		if (!sm || x.chunk >= ss->nunits)
			continue;
		struct sdr_sr_unit *u = &ss->u[x.chunk];
		if (u->acked || u->inq || u->tx_tsc != x.tsc)
			continue; /* acknowledged, or superseded */
		SDR_QP_CTR(qp, sr, rto_expiries)++;
		sr->tlp_done = 1; /* RFC 8985 7.3: no probe in an RTO's recovery */
		/* A retransmission went unanswered: back off (dead peer, or an RTO
		 * far too short). When the peer has not answered at all for an
		 * RTO (dead, or cut off), retransmit one unit per RTO instead of
		 * every expired one until it answers again (RFC 6298 5.4, 5.5) */
		if (u->retx && sdr_rtt_backoff(&sr->rtt, now, &sr->backoff_tsc,
					       sdr_ms_cycles(sdr_sr_cfg.probe_max_ms)))
			SDR_QP_CTR(qp, sr, rto_backoffs)++;
		uint64_t heard = RTE_MAX(sr->ack_rx_tsc, qp->progress_tsc);
		if (!sr->probing && now > heard && now - heard > sr->rtt.rto) {
			/* a stall (link down, peer silent) until the next ACK */
			sr->probing = 1;
			sr->stall_tsc = heard ? heard : now;
			SDR_QP_CTR(qp, sr, outages)++;
		}
		if (sr->probing) {
			if (now < sr->probe_tsc) {
				/* not this unit's turn: wait another RTO */
				u->tx_tsc = now;
				if (sdr_tq_push(&sr->timers, x.seq, x.chunk, now))
					u->tx_tsc = 0;
				SDR_QP_CTR(qp, sr, probe_defers)++;
				continue;
			}
			sr->probe_tsc = now + sr->rtt.rto;
		}
		if (sdr_tq_push(&sr->retxq, x.seq, x.chunk, 0) == 0) {
			u->inq = 1;
			sdr_sr_path_lost(sr, u);
			u->lost_by = SDR_SR_LOST_OTHER;
			reo_loss(path_of(sr, u));
		} else {
			w->ctr[SDR_CTR_sr_nomem]++;
			/* keep a timer: the unit is retried at the next RTO */
			u->tx_tsc = now;
			if (sdr_tq_push(&sr->timers, x.seq, x.chunk, now))
				u->tx_tsc = 0;
		}
	}

	/* 2. retransmissions, before any new data */
	while (budget) {
		struct sdr_smsg *sm;
		struct sdr_sr_send *ss;
		struct sdr_sr_unit *u;
		struct rte_mbuf *m;
		uint32_t first, end;

		if (sr->retx_pkt == UINT32_MAX) {
			if (!(e = sdr_tq_peek(&sr->retxq)))
				break;
			sr->retx_cur = *e;
			sdr_tq_pop(&sr->retxq);
			sm = sr_msg(qp, sr, sr->retx_cur.seq);
			ss = sdr_sr_send_of(sr, sr->retx_cur.seq);
			if (!sm || sr->retx_cur.chunk >= ss->nunits)
				continue;
			u = &ss->u[sr->retx_cur.chunk];
			u->inq = 0;
			if (u->acked && !u->reprobe)
				continue;
			unit_pkts(qp, sm, ss, sr->retx_cur.chunk, &first, &end);
			sr->retx_pkt = retx_first(qp, sr, u, first, end);
			/* a probe is no loss (RFC 8985 7.4): if it was one, the
			 * units RACK finds from its ACK say so; nor is a unit of a
			 * suspended path (the suspension told the controller once,
			 * sr_path.c) */
			if (u->lost_by != SDR_SR_LOST_TLP && !sdr_sr_path_moved(sr, u))
				sdr_sr_cc_lost(&sr->cc, now, end - first, u->tx_tsc);
			sdr_sr_path_retx_start(qp, sr, now);
		}
		sm = sr_msg(qp, sr, sr->retx_cur.seq);
		if (!sm) {
			sr->retx_pkt = UINT32_MAX;
			continue;
		}
		ss = sdr_sr_send_of(sr, sm->seq);
		u = &ss->u[sr->retx_cur.chunk];
		if (u->acked && !u->reprobe) { /* acknowledged while we were at it */
			sr->retx_pkt = UINT32_MAX;
			continue;
		}
		unit_pkts(qp, sm, ss, sr->retx_cur.chunk, &first, &end);

		uint32_t pkt = sr->retx_pkt, plen = 0;
		const uint8_t *src = NULL;
		if (pkt < sm->npkts) {
			plen = sm->len - pkt * qp->mtu < qp->mtu ? sm->len - pkt * qp->mtu
								 : qp->mtu;
			src = pkt_src(qp, sm, pkt);
			if (!src) { /* cannot happen: ranges stay until completion */
				sr->retx_pkt = UINT32_MAX;
				continue;
			}
		}
		m = sdr_txq_reserve(w, qp, sdr_wire_data_frame_bytes(plen, sm->imm != 0), now);
		if (!m)
			break;
		sdr_sr_path_retx_port(qp, sr);
		sdr_txq_data(w, qp, m, sm, pkt, src, plen, pkt + 1 == sm->npkts);
		sdr_sr_cc_sent(&sr->cc, sdr_wire_data_frame_bytes(plen, sm->imm != 0), now);
		SDR_QP_CTR(qp, sr, retx_pkts)++;
		sent++;
		budget--;
		sr->retx_pkt = retx_next(sr, sr->retx_pkt + 1, end);
		if (sr->retx_pkt == end) {
			u->tx_tsc = now;
			sr->tlp_base = now;
			u->reprobe = 0;
			sdr_sr_path_retx_sent(qp, sr, u, now);
			if (!u->retx && sr->retx_cur.chunk < ss->nchunks)
				ss->retx_chunks++; /* AUTO's loss: each data chunk once */
			if (u->retx < UINT8_MAX)
				u->retx++;
			SDR_QP_CTR(qp, sr, retx_units)++;
			if (sdr_tq_push(&sr->timers, sm->seq, sr->retx_cur.chunk, now))
				u->tx_tsc = 0;
			sr->retx_pkt = UINT32_MAX;
		}
	}
	sdr_sr_path_retx_end(qp, sr);
	sr->wake_at = sender_due(qp, sr, 0);
	if (sr->wake_at == UINT64_MAX)
		sr->wake_at = 0;
	return sent;
}

int sdr_sr_retransmit(struct sdr_worker *w, struct sdr_sr *sr, const struct sdr_smsg *sm,
		      uint32_t unit)
{
	struct sdr_sr_send *ss = sdr_sr_send_of(sr, sm->seq);
	struct sdr_sr_unit *u;

	if (!ss->u || unit >= ss->nunits)
		return 0;
	u = &ss->u[unit];
	/* not yet sent the first time: the first pass brings it */
	if (u->acked || u->inq || !u->tx_tsc)
		return 0;
	if (sdr_tq_push(&sr->retxq, sm->seq, unit, 0)) {
		w->ctr[SDR_CTR_sr_nomem]++;
		return 0;
	}
	u->inq = 1;
	sdr_sr_path_lost(sr, u);
	u->lost_by = SDR_SR_LOST_OTHER;
	return 1;
}

/* ---- ACKs at the sender ---- */

struct ack_ctx {
	struct sdr_qp *qp;
	struct sdr_sr *sr;
	struct sdr_smsg *sm;
	struct sdr_sr_send *ss;
	uint64_t now;
	int progress;
	uint32_t unsent;
	uint16_t on_path[SDR_SPRAY_MAX]; /* units newly acknowledged per path (CE share) */
};

/* Congestion control: unit [first, end) of a->sm was newly acknowledged
 * (its RTT sample @p rtt, 0 = none): its packets and their bytes on the wire. */
static void cc_unit_acked(struct ack_ctx *a, uint32_t first, uint32_t end, uint64_t rtt)
{
	const struct sdr_smsg *sm = a->sm;
	uint32_t mtu = a->qp->mtu, payload = 0;

	if (first < sm->npkts) {
		uint64_t lo = (uint64_t)first * mtu, hi = (uint64_t)end * mtu;

		if (hi > sm->len)
			hi = sm->len;
		payload = hi > lo ? (uint32_t)(hi - lo) : 0;
	}
	sdr_sr_cc_acked(&a->sr->cc, a->now, rtt, end - first,
			(end - first) * sdr_wire_data_frame_bytes(0, sm->imm != 0) + payload);
}

static void ack_unit(void *arg, uint32_t unit)
{
	struct ack_ctx *a = arg;
	struct sdr_sr_unit *u = &a->ss->u[unit];
	uint32_t first, end;

	if (u->acked)
		return;
	unit_pkts(a->qp, a->sm, a->ss, unit, &first, &end);
	if (!u->retx && u->sent < end - first) {
		/* not (fully) on the wire yet: no receiver can have it */
		a->unsent++;
		return;
	}
	/* Karn: only units transmitted exactly once give an RTT sample, and
	 * not those that were on the way when a stall ended (their ACK waited
	 * for the outage: a sample of its length would set the RTO to it) */
	uint64_t rtt = 0;
	int sample = !u->retx && u->tx_tsc && u->sent == end - first && a->now >= u->tx_tsc &&
		     u->tx_tsc >= a->sr->resume_tsc && !u->inq &&
		     !(a->sr->retx_pkt != UINT32_MAX && a->sr->retx_cur.seq == a->sm->seq &&
		       a->sr->retx_cur.chunk == unit); /* (nor one half retransmitted) */
	if (sample)
		rtt = a->now - u->tx_tsc;
	/* (first: the path's base RTT takes the sample before it is used) */
	sdr_sr_path_acked(a->sr, u, rtt, a->now);
	a->on_path[u->path % SDR_SPRAY_MAX]++;
	if (sample) {
		/* multipath: the RTO covers the slowest path (sr_path.h) */
		sdr_rtt_sample(&a->sr->rtt, sdr_sr_path_rtt_slowest(a->sr, u, rtt));
		SDR_QP_CTR(a->qp, sr, rtt_samples)++;
		if (a->sr->events.rtt)
			a->sr->events.rtt(a->sr->events.ctx, a->qp, a->now - u->tx_tsc);
	}
	rack_acked(a->qp, a->sr, u, a->sm->seq, unit, rtt, a->now);
	u->acked = 1;
	/* multipath: the controller sees each path's queueing over the fastest base */
	if (a->sr->cc.on)
		cc_unit_acked(a, first, end, rtt ? sdr_sr_path_rtt_fastest(a->sr, u, rtt) : 0);
	a->ss->units_acked++;
	SDR_QP_CTR(a->qp, sr, units_acked)++;
	a->progress = 1;
}

/* Every unit of a sent message acknowledged and no final word: a receiver
 * does not say that (its last chunk completes the receive and is answered
 * FULL), unless it restarted and took its state back from its host's
 * bitmap, which does not tell where the message ends (docs/reliability.md
 * "Restarts"). Its last data unit again, once per RTO, tells it. */
static void end_probe(struct sdr_sr *sr, struct sdr_sr_send *ss, uint32_t seq, uint64_t now)
{
	struct sdr_sr_unit *u = &ss->u[ss->nchunks - 1];

	if (u->inq || now - u->tx_tsc <= sr->rtt.rto ||
	    sdr_tq_push(&sr->retxq, seq, ss->nchunks - 1, 0))
		return;
	u->inq = 1;
	u->reprobe = 1;
}

/* The first ACK after a stall: the path is back. The RTO is the estimates'
 * again (it was backed off up to --probe-max-ms), and every unit whose
 * timer would have expired at that RTO goes to the retransmit queue now,
 * instead of each waiting for its backed-off timer (up to a probe interval
 * more); the younger ones keep their timers. */
static void sr_resume(struct sdr_qp *qp, struct sdr_sr *sr, uint64_t now)
{
	uint32_t n = sr->timers.n;
	uint64_t base;

	if (sr->stall_tsc) {
		uint64_t ms = now > sr->stall_tsc && sdr_g.tsc_hz
				      ? (now - sr->stall_tsc) * 1000 / sdr_g.tsc_hz
				      : 0;

		sr->outage_last_ms = ms;
		if (ms > sr->outage_longest_ms)
			sr->outage_longest_ms = ms;
		sr->stall_tsc = 0;
	}
	base = sr->rtt.samples ? sdr_rtt_base(&sr->rtt) : sdr_ms_cycles(sdr_sr_cfg.init_rto_ms);
	if (base < sr->rtt.min_rto)
		base = sr->rtt.min_rto;
	sr->rtt.rto = base;
	sr->backoff_tsc = 0;
	sdr_spray_resume(&sr->spray, now); /* suspended paths: probed at once */
	sr->rto_after = 0;
	/* (entries leave and come back in order: the head still expires first) */
	for (uint32_t i = 0; i < n; i++) {
		struct sdr_tq_ent x = *sdr_tq_peek(&sr->timers);
		struct sdr_smsg *sm;
		struct sdr_sr_send *ss;
		struct sdr_sr_unit *u;

		sdr_tq_pop(&sr->timers);
		sm = sr_msg(qp, sr, x.seq);
		ss = sdr_sr_send_of(sr, x.seq);
		if (!sm || x.chunk >= ss->nunits)
			continue;
		u = &ss->u[x.chunk];
		if (u->acked || u->inq || u->tx_tsc != x.tsc)
			continue; /* acknowledged, or superseded */
		if (x.tsc + base + hold_of(qp, sr, x.seq) <= now &&
		    sdr_tq_push(&sr->retxq, x.seq, x.chunk, 0) == 0) {
			u->inq = 1;
			u->lost_by = SDR_SR_LOST_OTHER;
			SDR_QP_CTR(qp, sr, resume_units)++;
		} else if (sdr_tq_push(&sr->timers, x.seq, x.chunk, x.tsc)) { /* (room: popped) */
			u->tx_tsc = 0;
		}
	}
}

void sdr_sr_rx_ack(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_sr *sr, const uint8_t *msg,
		   size_t len, const struct sdr_ctrl_hdr *h, uint64_t now)
{
	struct sdr_ack_entry e;
	struct ack_ctx a = {.qp = qp, .sr = sr, .now = now};
	int resume = sr->probing;
	uint64_t ce0 = sr->cc.ce_echoed;

	if (resume)
		sr->resume_tsc = now;
	SDR_QP_CTR(qp, sr, acks_rx)++;
	if (sr->cc.on)
		sdr_sr_cc_echo_in(&sr->cc, msg, len, h);
	sr->ack_rx_tsc = now; /* the peer answers: no probing */
	sr->probing = 0;
	for (uint16_t i = 0; i < h->count; i++) {
		if (sdr_ctrl_ack_entry_decode(msg, i, &e)) {
			w->ctr[SDR_CTR_ack_bad]++;
			continue;
		}
		SDR_QP_CTR(qp, sr, ack_entries_rx)++;
		a.sm = sr_msg(qp, sr, e.seq);
		a.ss = sdr_sr_send_of(sr, e.seq);
		if (!a.sm || (!a.ss->txdone && (e.flags & (SDR_ACK_F_FULL | SDR_ACK_F_CLOSED)))) {
			w->ctr[SDR_CTR_ack_stale]++;
			continue;
		}
		sdr_ack_walk(e.cum, e.off, e.bits, a.ss->nchunks, &a.ss->ack_from, ack_unit, &a);
		if (e.flags & SDR_ACK_F_FULL) {
			for (uint32_t u = 0; u < a.ss->nunits; u++)
				ack_unit(&a, u);
			if (sr->events.full && !a.sm->status)
				sr->events.full(sr->events.ctx, qp, a.sm, a.ss, e.lost);
			sdr_cq_send(w, qp, a.sm);
			a.progress = 1;
		} else if (e.flags & SDR_ACK_F_CLOSED) {
			/* the receiver's host completed the receive before it was full */
			a.sm->status = -EIO;
			SDR_QP_CTR(qp, sr, send_closed)++;
			sdr_cq_send(w, qp, a.sm);
			a.progress = 1;
		} else if (a.ss->txdone && a.ss->nchunks && a.ss->units_acked == a.ss->nunits) {
			end_probe(sr, a.ss, e.seq, now);
		}
	}
	if (a.unsent)
		w->ctr[SDR_CTR_ack_unsent] += a.unsent;
	holes_rx(w, qp, sr, msg, len, h, now);
	/* (the marks of ACKs that acknowledge no unit wait for one that does) */
	if (sr->spray.n > 1) {
		sr->spray_ce += (uint32_t)(sr->cc.ce_echoed - ce0);
		if (sr->spray_ce && sdr_spray_ce_share(&sr->spray, a.on_path, sr->spray_ce))
			sr->spray_ce = 0;
	}
	sdr_sr_cc_ack_end(&sr->cc, now);
	if (a.progress) {
		qp->progress_tsc = now;
		sr->tlp_done = 0;
		sr->late_sum = 0;
	}
	if (resume)
		sr_resume(qp, sr, now);
	else if (a.progress)
		rack_detect(w, qp, sr, now);
	sdr_sr_cc_apply(w, qp, &sr->cc);
}
