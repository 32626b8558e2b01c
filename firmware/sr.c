/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Selective Repeat on a QP (reliability SR; docs/reliability.md).
 *
 * Sender: every chunk of a send (plus, for messages of fewer than 8
 * packets, one "immediate unit" made of the immediate-only packets) is a
 * retransmission unit. When a unit's last packet has left, (seq, unit, time)
 * goes to the QP's timer FIFO; entries are pushed in transmit order, so
 * the head expires first and a loop iteration only looks at expired heads.
 * An expired, unacknowledged unit goes to the retransmit queue, served
 * before new data and through the same pacers. The send completes when the
 * receiver reports the receive FULL.
 *
 * Receiver: slots with news (a chunk completed, the receive completed, or
 * a duplicate/late packet showed the sender missed an ACK) are listed and
 * reported in one ACK packet at most every --sr-ack-us, or at once when a
 * receive completes.
 *
 * Global timeout: no progress of the QP's sends for --global-timeout-ms puts
 * the QP in the error state (every outstanding operation completes with
 * -ETIMEDOUT); a receive that saw packets and then nothing for that long
 * completes with -ETIMEDOUT (partial bitmap kept).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>

#include "dpu.h"

#define SR_EXPIRE_MAX 256 /* timer entries looked at per loop iteration */
#define SR_MAX_RTO_MS 1000 /* backoff ceiling */

int sdr_sr_qp_init(struct sdr_qp *qp)
{
	uint64_t hz = sdr_g.tsc_hz;

	sdr_rtt_init(&qp->rtt, (uint64_t)sdr_g.cfg.sr_init_rto_ms * hz / 1000,
		     (uint64_t)sdr_g.cfg.sr_min_rto_us * hz / 1000000, sdr_g.cfg.sr_alpha_milli,
		     sdr_g.cfg.sr_rttvar_k);
	qp->retx_pkt = UINT32_MAX;
	qp->global_timeout = (uint64_t)sdr_g.cfg.global_timeout_ms * hz / 1000;
	qp->ack_dirty = calloc(SDR_MAX_MSGS, sizeof(*qp->ack_dirty));
	qp->fin = calloc(SDR_SR_FIN_CAP, sizeof(*qp->fin));
	return qp->ack_dirty && qp->fin ? 0 : -ENOMEM;
}

void sdr_sr_qp_fini(struct sdr_qp *qp)
{
	free(qp->ack_dirty);
	qp->ack_dirty = NULL;
	free(qp->fin);
	qp->fin = NULL;
	sdr_tq_fini(&qp->timers);
	sdr_tq_fini(&qp->retxq);
	for (unsigned i = 0; i < SDR_MAX_MSGS; i++) {
		free(qp->smsg[i].u);
		qp->smsg[i].u = NULL;
		qp->smsg[i].u_cap = 0;
	}
}

int sdr_sr_send_prepare(struct sdr_qp *qp, struct sdr_smsg *sm)
{
	sm->nchunks = (sm->npkts + qp->ppc - 1) / qp->ppc;
	sm->nunits = sm->nchunks + (sm->npkts < SDR_IMM_NIBBLES ? 1 : 0);
	if (sm->u_cap < sm->nunits) {
		struct sdr_sr_unit *u = realloc(sm->u, (size_t)sm->nunits * sizeof(*u));
		if (!u)
			return -ENOMEM;
		sm->u = u;
		sm->u_cap = sm->nunits;
	}
	memset(sm->u, 0, (size_t)sm->nunits * sizeof(*sm->u));
	sm->units_acked = 0;
	sm->ack_from = 0;
	sm->txdone = 0;
	return 0;
}

/* Packets [*first, *end) of unit @p unit. */
static void unit_pkts(const struct sdr_qp *qp, const struct sdr_smsg *sm, uint32_t unit,
		      uint32_t *first, uint32_t *end)
{
	if (unit < sm->nchunks) {
		*first = unit * qp->ppc;
		*end = *first + qp->ppc < sm->npkts ? *first + qp->ppc : sm->npkts;
	} else {
		*first = sm->npkts;
		*end = SDR_IMM_NIBBLES;
	}
}

static inline uint32_t unit_of(const struct sdr_qp *qp, const struct sdr_smsg *sm, uint32_t pkt)
{
	return pkt < sm->npkts ? pkt / qp->ppc : sm->nchunks;
}

void sdr_sr_unit_sent(struct sdr_qp *qp, struct sdr_smsg *sm, uint32_t pkt_off, uint64_t now)
{
	uint32_t unit = unit_of(qp, sm, pkt_off), first, end;
	struct sdr_sr_unit *u = &sm->u[unit];

	unit_pkts(qp, sm, unit, &first, &end);
	if (++u->sent != end - first)
		return;
	u->tx_tsc = now;
	if (sdr_tq_push(&qp->timers, sm->seq, unit, now))
		u->tx_tsc = 0; /* no timer: the global timeout is the backstop */
}

/* The send this (seq) names, if it is an outstanding SR send. */
static struct sdr_smsg *sr_msg(struct sdr_qp *qp, uint32_t seq)
{
	struct sdr_smsg *sm = &qp->smsg[sdr_seq_msg_id(seq)];

	if (sm->state != SDR_SM_QUEUED || sm->seq != seq || !sm->u ||
	    seq - qp->ack_cursor >= qp->send_next - qp->ack_cursor)
		return NULL;
	return sm;
}

/* Find the host bytes of packet @p pkt (data packets only). */
static const uint8_t *pkt_src(const struct sdr_qp *qp, const struct sdr_smsg *sm, uint32_t pkt)
{
	uint32_t off = pkt * qp->mtu;

	for (unsigned i = 0; i < sm->nranges; i++) {
		const struct sdr_srange *r = &sm->r[i];
		if (off >= r->msg_off && off - r->msg_off < r->len)
			return r->src + (off - r->msg_off);
	}
	return NULL;
}

unsigned sdr_sr_tx(struct sdr_worker *w, struct sdr_qp *qp, uint64_t now)
{
	const struct sdr_tq_ent *e;
	unsigned sent = 0, budget = SDR_BURST, looked = 0;

	/* 1. expired timers -> retransmit queue */
	/* (EC: the timers are the backstop behind parity and NACKs and wait an
	 * extra hold per message; sdr_ec_hold() is 0 for SR) */
	while ((e = sdr_tq_peek(&qp->timers)) &&
	       e->tsc + qp->rtt.rto + sdr_ec_hold(qp, e->seq) <= now && looked++ < SR_EXPIRE_MAX) {
		struct sdr_tq_ent x = *e;
		struct sdr_smsg *sm;

		sdr_tq_pop(&qp->timers);
		sm = sr_msg(qp, x.seq);
		if (!sm || x.chunk >= sm->nunits)
			continue;
		struct sdr_sr_unit *u = &sm->u[x.chunk];
		if (u->acked || u->inq || u->tx_tsc != x.tsc)
			continue; /* acknowledged, or superseded */
		qp->st.sr_rto_expiries++;
		/* A retransmission went unanswered: back off (dead peer, or an RTO
		 * far too short). When the peer has not answered at all for an
		 * RTO (dead, or cut off), retransmit one unit per RTO instead of
		 * every expired one until it answers again (RFC 6298 5.4, 5.5) */
		if (u->retx && sdr_rtt_backoff(&qp->rtt, now, &qp->backoff_tsc,
					       (uint64_t)SR_MAX_RTO_MS * sdr_g.tsc_hz / 1000))
			qp->st.sr_rto_backoffs++;
		uint64_t heard = RTE_MAX(qp->ack_rx_tsc, qp->progress_tsc);
		if (!qp->probing && now > heard && now - heard > qp->rtt.rto)
			qp->probing = 1;
		if (qp->probing) {
			if (now < qp->probe_tsc) {
				/* not this unit's turn: wait another RTO */
				u->tx_tsc = now;
				if (sdr_tq_push(&qp->timers, x.seq, x.chunk, now))
					u->tx_tsc = 0;
				qp->st.sr_probe_defers++;
				continue;
			}
			qp->probe_tsc = now + qp->rtt.rto;
		}
		if (sdr_tq_push(&qp->retxq, x.seq, x.chunk, 0) == 0)
			u->inq = 1;
		else
			w->ctr[SDR_CTR_sr_nomem]++;
	}

	/* 2. retransmissions, before any new data */
	while (budget) {
		struct sdr_smsg *sm;
		struct sdr_sr_unit *u;
		uint32_t first, end;

		if (qp->retx_pkt == UINT32_MAX) {
			if (!(e = sdr_tq_peek(&qp->retxq)))
				break;
			qp->retx_cur = *e;
			sdr_tq_pop(&qp->retxq);
			sm = sr_msg(qp, qp->retx_cur.seq);
			if (!sm || qp->retx_cur.chunk >= sm->nunits)
				continue;
			u = &sm->u[qp->retx_cur.chunk];
			u->inq = 0;
			if (u->acked)
				continue;
			unit_pkts(qp, sm, qp->retx_cur.chunk, &first, &end);
			qp->retx_pkt = first;
		}
		sm = sr_msg(qp, qp->retx_cur.seq);
		if (!sm) {
			qp->retx_pkt = UINT32_MAX;
			continue;
		}
		u = &sm->u[qp->retx_cur.chunk];
		if (u->acked) { /* acknowledged while we were at it */
			qp->retx_pkt = UINT32_MAX;
			continue;
		}
		unit_pkts(qp, sm, qp->retx_cur.chunk, &first, &end);

		uint32_t pkt = qp->retx_pkt, plen = 0;
		const uint8_t *src = NULL;
		if (pkt < sm->npkts) {
			plen = sm->len - pkt * qp->mtu < qp->mtu ? sm->len - pkt * qp->mtu : qp->mtu;
			src = pkt_src(qp, sm, pkt);
			if (!src) { /* cannot happen: ranges stay until completion */
				qp->retx_pkt = UINT32_MAX;
				continue;
			}
		}
		if (!sdr_tx_paced(w, qp, sdr_frame_bytes(plen), now))
			break;
		if (sdr_tx_data_pkt(w, qp, sm, pkt, src, plen, pkt + 1 == sm->npkts))
			break;
		qp->st.sr_retx_pkts++;
		sent++;
		budget--;
		if (++qp->retx_pkt == end) {
			u->tx_tsc = now;
			if (!u->retx && qp->retx_cur.chunk < sm->nchunks)
				sm->retx_chunks++; /* AUTO's loss: each data chunk once */
			if (u->retx < UINT8_MAX)
				u->retx++;
			qp->st.sr_retx_units++;
			if (sdr_tq_push(&qp->timers, sm->seq, qp->retx_cur.chunk, now))
				u->tx_tsc = 0;
			qp->retx_pkt = UINT32_MAX;
		}
	}
	return sent;
}

/* ---- ACKs at the sender ---- */

struct ack_ctx {
	struct sdr_qp *qp;
	struct sdr_smsg *sm;
	uint64_t now;
	int progress;
	uint32_t unsent;
};

static void ack_unit(void *arg, uint32_t unit)
{
	struct ack_ctx *a = arg;
	struct sdr_sr_unit *u = &a->sm->u[unit];
	uint32_t first, end;

	if (u->acked)
		return;
	unit_pkts(a->qp, a->sm, unit, &first, &end);
	if (!u->retx && u->sent < end - first) {
		/* not (fully) on the wire yet: no receiver can have it */
		a->unsent++;
		return;
	}
	/* Karn: only units transmitted exactly once give an RTT sample */
	if (!u->retx && u->tx_tsc && u->sent == end - first && a->now >= u->tx_tsc) {
		sdr_rtt_sample(&a->qp->rtt, a->now - u->tx_tsc);
		a->qp->st.sr_rtt_samples++;
		if (a->qp->au)
			sdr_auto_rtt(a->qp->au, (double)(a->now - u->tx_tsc) / (double)sdr_g.tsc_hz);
	}
	u->acked = 1;
	a->sm->units_acked++;
	a->qp->st.sr_units_acked++;
	a->progress = 1;
}

/* AUTO: feed one completed send's first-pass chunks and those of them
 * that did not arrive the first time. The sender knows the chunks it
 * retransmitted (each once); the receiver reports in the FULL entry the
 * chunks it rebuilt from parity or found missing at its first FTO, which
 * the sender cannot see. Both count mostly the same chunks (the ones the
 * receiver NACKed are then retransmitted): the larger of the two, not the
 * sum, so that nothing is counted twice. */
static void auto_loss(struct sdr_qp *qp, const struct sdr_smsg *sm, uint32_t rx_lost)
{
	uint32_t lost = rx_lost > sm->retx_chunks ? rx_lost : sm->retx_chunks;

	if (lost > sm->nchunks)
		lost = sm->nchunks;
	sdr_auto_chunks(qp->au, sm->nchunks, lost);
	qp->st.auto_lost_rx += rx_lost;
	qp->st.auto_lost_fed += lost;
	qp->st.auto_chunks_fed += sm->nchunks;
}

void sdr_sr_rx_ack(struct sdr_worker *w, struct sdr_qp *qp, const uint8_t *msg,
		   const struct sdr_ctrl_hdr *h, uint64_t now)
{
	struct sdr_ack_entry e;
	struct ack_ctx a = {.qp = qp, .now = now};

	qp->st.sr_acks_rx++;
	qp->ack_rx_tsc = now; /* the peer answers: no probing */
	qp->probing = 0;
	for (uint16_t i = 0; i < h->count; i++) {
		if (sdr_ctrl_ack_entry_decode(msg, i, &e)) {
			w->ctr[SDR_CTR_ack_bad]++;
			continue;
		}
		qp->st.sr_ack_entries_rx++;
		a.sm = sr_msg(qp, e.seq);
		if (!a.sm || (!a.sm->txdone && (e.flags & (SDR_ACK_F_FULL | SDR_ACK_F_CLOSED)))) {
			w->ctr[SDR_CTR_ack_stale]++;
			continue;
		}
		sdr_ack_walk(e.cum, e.off, e.bits, a.sm->nchunks, &a.sm->ack_from, ack_unit, &a);
		if (e.flags & SDR_ACK_F_FULL) {
			for (uint32_t u = 0; u < a.sm->nunits; u++)
				ack_unit(&a, u);
			if (qp->au && !a.sm->status)
				auto_loss(qp, a.sm, e.lost);
			sdr_send_complete(w, qp, a.sm);
			a.progress = 1;
		} else if (e.flags & SDR_ACK_F_CLOSED) {
			/* the receiver's host completed the receive before it was full */
			a.sm->status = -EIO;
			qp->st.sr_send_closed++;
			sdr_send_complete(w, qp, a.sm);
			a.progress = 1;
		}
	}
	if (a.unsent)
		w->ctr[SDR_CTR_ack_unsent] += a.unsent;
	if (a.progress)
		qp->progress_tsc = now;
}

/* ---- ACKs at the receiver ---- */

static void tx_ack(struct sdr_worker *w, struct sdr_qp *qp, const struct sdr_ack_entry *e,
		   unsigned n)
{
	struct rte_mbuf *m = sdr_tx_alloc(w, qp->inst);

	if (!m)
		return; /* the sender's timers cover it */
	sdr_tx_ctrl_send(w, qp, m,
			 sdr_ctrl_ack_encode(rte_pktmbuf_mtod(m, uint8_t *) + SDR_CTRL_HDR_LEN,
					     qp->qpn_base, e, (uint16_t)n));
	qp->st.sr_acks_tx++;
	qp->st.sr_ack_entries_tx += n;
}

/* Windows per message and ACK: enough for the received part of a message
 * of 8 * 128 chunks (64 MiB at 16 x 4 KiB) past its cumulative point. */
#define SR_ACK_WINDOWS_MAX 8

/* EC: a completed receive's FULL is sent twice, one ACK period apart. A
 * lost FULL would otherwise cost the sender its backstop (RTO + one FTO +
 * one RTT) on a message that arrived whole; SR QPs keep one FULL. */
#define EC_FULL_COPIES 2

static uint64_t ack_period(void)
{
	return (uint64_t)sdr_g.cfg.sr_ack_us * sdr_g.tsc_hz / 1000000;
}

struct ack_out {
	struct sdr_ack_entry e[SDR_ACK_MAX_ENTRIES];
	unsigned n;
};

static struct sdr_ack_entry *ack_entry(struct sdr_worker *w, struct sdr_qp *qp, struct ack_out *o)
{
	if (o->n == SDR_ACK_MAX_ENTRIES) {
		tx_ack(w, qp, o->e, o->n);
		o->n = 0;
	}
	memset(&o->e[o->n], 0, sizeof(o->e[0]));
	return &o->e[o->n++];
}

static void fin_push(struct sdr_qp *qp, const struct sdr_sr_fin *f)
{
	qp->fin[(qp->fin_head + qp->fin_n) % SDR_SR_FIN_CAP] = *f;
	qp->fin_n++;
}

/* Send every final entry that is due (all of them with @p force), then the
 * progress of the receives still open. Final entries are the (seq, flags,
 * lost) captured when the receive completed: the slot may have been
 * posted again since. */
static void ack_flush(struct sdr_worker *w, struct sdr_qp *qp, uint64_t now, int force)
{
	struct ack_out o = {.n = 0};
	uint32_t chunk_bytes = qp->mtu * qp->ppc, n0 = qp->fin_n;
	uint64_t next = 0;

	for (uint32_t i = 0; i < n0; i++) {
		struct sdr_sr_fin f = qp->fin[qp->fin_head];
		struct sdr_ack_entry *x;

		qp->fin_head = (qp->fin_head + 1) % SDR_SR_FIN_CAP;
		qp->fin_n--;
		if (f.due > now && !force) {
			fin_push(qp, &f); /* an EC repeat, later */
			if (!next || f.due < next)
				next = f.due;
			continue;
		}
		x = ack_entry(w, qp, &o);
		x->seq = f.seq;
		x->flags = f.flags;
		x->lost = f.lost; /* (docs/wire-format.md §6) */
		x->cum = f.cum;
		if (f.flags == SDR_ACK_F_FULL && sdr_qp_ec(qp) && ++f.copies < EC_FULL_COPIES &&
		    !force) {
			f.due = now + ack_period();
			fin_push(qp, &f);
			if (!next || f.due < next)
				next = f.due;
		}
	}
	qp->fin_next = next;
	qp->ack_now = 0;

	for (uint32_t i = 0; i < qp->nack_dirty; i++) {
		uint32_t idx = qp->ack_dirty[i];
		struct sdr_rslot *s = &qp->rq.slot[idx];
		const uint64_t *bm = sdr_rq_chunk_priv(&qp->rq, idx);
		uint32_t nb, hi, cum;

		if (!s->ack_pending)
			continue;
		s->ack_pending = 0;
		if (s->state != SDR_RS_POSTED)
			continue; /* completed: its final entry went above */
		nb = sdr_rslot_nchunks(&qp->rq, s);
		s->ack_cum = sdr_ack_cum_advance(bm, nb, s->ack_cum);
		cum = s->ack_cum;
		/* one past the highest chunk that has data */
		hi = s->max_end ? (s->max_end - 1) / chunk_bytes + 1 : 0;
		if (hi > nb)
			hi = nb;
		for (uint32_t k = 0, off = 0; k < SR_ACK_WINDOWS_MAX; k++, off += SDR_ACK_WINDOW_BITS) {
			struct sdr_ack_entry *x;

			if (k && (uint64_t)cum + off >= hi)
				break;
			x = ack_entry(w, qp, &o);
			x->seq = s->seq;
			x->cum = cum;
			x->off = off;
			sdr_ack_window_get(bm, nb, cum + off, x->bits);
		}
	}
	if (o.n)
		tx_ack(w, qp, o.e, o.n);
	qp->nack_dirty = 0;
	qp->ack_due = 0;
}

void sdr_sr_rx_note(struct sdr_worker *w, struct sdr_qp *qp, uint32_t slot, uint64_t now)
{
	struct sdr_rslot *s = &qp->rq.slot[slot];

	if (!s->ack_pending) {
		if (qp->nack_dirty == SDR_MAX_MSGS)
			ack_flush(w, qp, now, 0);
		s->ack_pending = 1;
		qp->ack_dirty[qp->nack_dirty++] = (uint16_t)slot;
	}
	if (!qp->ack_due)
		qp->ack_due = now + ack_period();
}

void sdr_sr_rx_fin(struct sdr_worker *w, struct sdr_qp *qp, uint32_t seq, uint8_t flags,
		   uint32_t cum, uint32_t lost, uint64_t now)
{
	struct sdr_sr_fin f = {.seq = seq, .flags = flags, .cum = cum, .lost = lost};

	if (qp->fin_n == SDR_SR_FIN_CAP)
		ack_flush(w, qp, now, 1);
	fin_push(qp, &f);
	qp->ack_now = 1; /* a completed receive is reported in this loop */
}

void sdr_sr_rx_stale(struct sdr_worker *w, struct sdr_qp *qp, uint32_t slot, uint32_t seq,
		     uint64_t now)
{
	struct sdr_rdone *d = &qp->rq.done[slot];

	/* A packet of a receive this slot completed: the sender missed the
	 * final ACK. Once per ACK period, however many packets it resends. */
	if (!d->flags || d->seq != seq || (d->reack_tsc && now - d->reack_tsc < ack_period()))
		return;
	d->reack_tsc = now;
	qp->st.sr_reacks++;
	sdr_sr_rx_fin(w, qp, d->seq, d->flags, d->cum, d->lost, now);
}

/* ---- error state ---- */

static void qp_error(struct sdr_worker *w, struct sdr_qp *qp, int32_t status)
{
	qp->state = SDR_QPS_ERROR;
	sdr_host_abort_qp(w, qp, status);
}

void sdr_sr_poll(struct sdr_worker *w, struct sdr_qp *qp, uint64_t now)
{
	if (qp->ack_now || (qp->nack_dirty && now >= qp->ack_due) ||
	    (qp->fin_next && now >= qp->fin_next))
		ack_flush(w, qp, now, 0);
	while (qp->ack_cursor != qp->tx_cursor) {
		const struct sdr_smsg *sm = &qp->smsg[sdr_seq_msg_id(qp->ack_cursor)];
		if (sm->state == SDR_SM_QUEUED && sm->seq == qp->ack_cursor)
			break;
		qp->ack_cursor++;
	}
	/* (progress_tsc may be a little after @now: it is set mid-iteration) */
	if (qp->global_timeout && qp->ack_cursor != qp->send_next && now > qp->progress_tsc &&
	    now - qp->progress_tsc > qp->global_timeout) {
		qp->st.sr_send_timeouts++;
		qp_error(w, qp, -ETIMEDOUT);
	}
}

/* Every --cts-resend-ms: receives that saw packets and then nothing for the
 * global timeout complete with -ETIMEDOUT. */
void sdr_sr_periodic(struct sdr_worker *w, struct sdr_qp *qp, uint64_t now)
{
	if (!qp->global_timeout)
		return;
	for (uint32_t i = 0; i < SDR_MAX_MSGS; i++) {
		struct sdr_rslot *s = &qp->rq.slot[i];
		if (s->state != SDR_RS_POSTED || (!s->pkts_got && !s->imm_mask) ||
		    now <= s->last_tsc || now - s->last_tsc <= qp->global_timeout)
			continue;
		if (sdr_rq_complete(&qp->rq, s->seq) >= 0) {
			qp->st.sr_recv_timeouts++;
			sdr_host_recv_done(w, qp, i, -ETIMEDOUT);
		}
	}
}
