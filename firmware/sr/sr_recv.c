/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Selective Repeat engine, receiver side and timers (sr.h): ACK
 * generation, final entries of completed receives, re-acknowledgement of
 * retransmissions, the outage horizon.
 * Layer sr/: the SR engine (the reliable-QP core); calls only the primitives (prim/).
 */
#include <errno.h>
#include <string.h>

#include <rte_mbuf.h>

#include "sdr_bitmap.h"
#include "send.h"
#include "sr.h"
#include "txq.h"

/* Windows per message and ACK: enough for the received part of a message
 * of 8 * 128 chunks (64 MiB at 16 x 4 KiB) past its cumulative point. */
#define SR_ACK_WINDOWS_MAX 8

struct ack_out {
	struct sdr_ack_entry e[SDR_ACK_MAX_ENTRIES];
	struct sdr_ack_hole h[SDR_ACK_HOLES_MAX]; /* hole reports (docs/wire-format.md §6) */
	unsigned n, nh;
};

static void tx_ack(struct sdr_worker *w, struct sdr_qp *qp, struct ack_out *o)
{
	struct rte_mbuf *m = sdr_txq_alloc(w, qp->inst);
	struct sdr_ack_echo echo;
	size_t room = SDR_CTRL_HDR_WIRE + (size_t)o->n * SDR_ACK_ENTRY_WIRE + SDR_ACK_ECHO_WIRE +
		      SDR_ACK_HOLES_HDR_WIRE;
	unsigned nh = o->nh;

	o->nh = 0;
	if (!m)
		return; /* the sender's timers cover it */
	/* hole reports only while the ACK stays within a data packet's payload:
	 * the link carries those (they are hints: what is left out costs the
	 * sender whole-chunk retransmissions) */
	if (nh && room + (size_t)nh * SDR_ACK_HOLE_WIRE > qp->mtu)
		nh = room < qp->mtu ? (unsigned)((qp->mtu - room) / SDR_ACK_HOLE_WIRE) : 0;
	/* every ACK echoes the CE marks (docs/wire-format.md §6 "ECN echo") */
	sdr_sr_cc_echo_out(&((const struct sdr_sr *)qp->rel)->cc, &echo);
	sdr_txq_ctrl(w, qp, m,
		     sdr_ctrl_ack_encode_holes(rte_pktmbuf_mtod(m, uint8_t *) + SDR_CTRL_HDR_LEN,
					       qp->qpn_base, o->e, (uint16_t)o->n, &echo, o->h,
					       nh));
	SDR_QP_CTR(qp, sr, acks_tx)++;
	SDR_QP_CTR(qp, sr, ack_entries_tx) += o->n;
	SDR_QP_CTR(qp, sr, holes_tx) += nh;
}

static struct sdr_ack_entry *ack_entry(struct sdr_worker *w, struct sdr_qp *qp, struct ack_out *o)
{
	if (o->n == SDR_ACK_MAX_ENTRIES) {
		tx_ack(w, qp, o);
		o->n = 0;
	}
	memset(&o->e[o->n], 0, sizeof(o->e[0]));
	return &o->e[o->n++];
}

/* The hole reports of the receive in @p slot (cumulative point @p cum, data
 * up to chunk @p hi): its chunks not yet whole that had a packet after a
 * missing one, or a later chunk's data, in the first window past @p cum.
 * Each goes with an ACK that carries entries of the slot. */
static void ack_holes(struct sdr_worker *w, struct sdr_qp *qp, struct ack_out *o, uint32_t slot,
		      uint32_t seq, uint32_t cum, uint32_t hi)
{
	const uint64_t *bm = sdr_rq_chunk_priv(&qp->rq, slot);
	uint32_t end = hi - cum > SDR_ACK_WINDOW_BITS ? cum + SDR_ACK_WINDOW_BITS : hi;

	for (uint32_t c = cum; c < end; c++) {
		struct sdr_ack_hole *x;

		if (sdr_bit_test(bm, c))
			continue;
		if (o->nh == SDR_ACK_HOLES_MAX) {
			if (!o->n)
				return;
			tx_ack(w, qp, o); /* (its entries: a hole report is about a slot listed) */
			o->n = 0;
			return;
		}
		x = &o->h[o->nh];
		if (sdr_rq_chunk_hole(&qp->rq, slot, c, &x->first, &x->have)) {
			x->seq = seq;
			x->chunk = c;
			o->nh++;
		}
	}
}

static void fin_push(struct sdr_sr *sr, const struct sdr_sr_fin *f)
{
	sr->fin[(sr->fin_head + sr->fin_n) % SDR_SR_FIN_CAP] = *f;
	sr->fin_n++;
}

/* Send every final entry that is due (all of them with @p force), then the
 * progress of the receives still open. Final entries are the (seq, flags,
 * cum, lost) captured when the receive completed: the slot may have been
 * posted again since. */
static void ack_flush(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_sr *sr, uint64_t now,
		      int force)
{
	struct ack_out o = {.n = 0, .nh = 0};
	uint32_t chunk_bytes = qp->mtu * qp->ppc, n0 = sr->fin_n;
	uint64_t next = 0, acks0 = SDR_QP_CTR(qp, sr, acks_tx);

	for (uint32_t i = 0; i < n0; i++) {
		struct sdr_sr_fin f = sr->fin[sr->fin_head];
		struct sdr_ack_entry *x;

		sr->fin_head = (sr->fin_head + 1) % SDR_SR_FIN_CAP;
		sr->fin_n--;
		if (f.due > now && !force) {
			fin_push(sr, &f); /* a repeat, later */
			if (!next || f.due < next)
				next = f.due;
			continue;
		}
		x = ack_entry(w, qp, &o);
		x->seq = f.seq;
		x->flags = f.flags;
		x->lost = f.lost; /* (docs/wire-format.md §6) */
		x->cum = f.cum;
		/* EC: a completed receive's FULL is sent twice, one ACK period
		 * apart. A lost FULL would otherwise cost the sender its backstop
		 * (RTO + one FTO + one RTT) on a message that arrived whole. */
		if (f.flags == SDR_ACK_F_FULL && ++f.copies < sr->full_copies && !force) {
			f.due = now + sr->ack_period;
			fin_push(sr, &f);
			if (!next || f.due < next)
				next = f.due;
		}
	}
	sr->fin_next = next;
	sr->ack_now = 0;

	for (uint32_t i = 0; i < sr->nack_dirty; i++) {
		uint32_t idx = sr->ack_dirty[i];
		struct sdr_rslot *s = &qp->rq.slot[idx];
		struct sdr_sr_recv *rs = &sr->rcv[idx];
		const uint64_t *bm = sdr_rq_chunk_priv(&qp->rq, idx);
		uint32_t nb, hi, cum;

		if (!rs->ack_pending)
			continue;
		rs->ack_pending = 0;
		if (s->state != SDR_RS_POSTED)
			continue; /* completed: its final entry went above */
		nb = sdr_rslot_nchunks(&qp->rq, s);
		rs->ack_cum = sdr_ack_cum_advance(bm, nb, rs->ack_cum);
		cum = rs->ack_cum;
		/* one past the highest chunk that has data */
		hi = s->max_end ? (s->max_end - 1) / chunk_bytes + 1 : 0;
		if (hi > nb)
			hi = nb;
		for (uint32_t k = 0, off = 0; k < SR_ACK_WINDOWS_MAX;
		     k++, off += SDR_ACK_WINDOW_BITS) {
			struct sdr_ack_entry *x;

			if (k && (uint64_t)cum + off >= hi)
				break;
			x = ack_entry(w, qp, &o);
			x->seq = s->seq;
			x->cum = cum;
			x->off = off;
			sdr_ack_window_get(bm, nb, cum + off, x->bits);
		}
		if (hi > cum)
			ack_holes(w, qp, &o, idx, s->seq, cum, hi);
	}
	if (o.n)
		tx_ack(w, qp, &o);
	if (SDR_QP_CTR(qp, sr, acks_tx) != acks0) {
		sr->ack_tx_tsc = now;
		sr->cc.rx_ect = 0; /* (the echo went: --cc-ack-pkts counts anew) */
		if (sr->fb_due)
			SDR_QP_CTR(qp, sr, fb_acks)++;
	}
	sr->fb_due = 0;
	sr->nack_dirty = 0;
	sr->ack_due = 0;
}

void sdr_sr_rx_feedback(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_sr *sr, uint32_t slot,
			uint64_t now)
{
	uint64_t due = sr->ack_tx_tsc + sr->fb_gap;

	sdr_sr_rx_note(w, qp, sr, slot, now);
	if (due < now)
		due = now;
	if (due < sr->ack_due) {
		sr->ack_due = due;
		sr->fb_due = 1;
	}
}

void sdr_sr_rx_note(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_sr *sr, uint32_t slot,
		    uint64_t now)
{
	struct sdr_sr_recv *rs = &sr->rcv[slot];

	if (!rs->ack_pending) {
		if (sr->nack_dirty == SDR_MAX_MSGS)
			ack_flush(w, qp, sr, now, 0);
		rs->ack_pending = 1;
		sr->ack_dirty[sr->nack_dirty++] = (uint16_t)slot;
	}
	if (!sr->ack_due)
		sr->ack_due = now + sr->ack_period;
}

static void fin_queue(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_sr *sr,
		      const struct sdr_rdone *d, uint64_t now)
{
	struct sdr_sr_fin f = {.seq = d->seq, .flags = d->flags, .cum = d->cum, .lost = d->lost};

	if (sr->fin_n == SDR_SR_FIN_CAP)
		ack_flush(w, qp, sr, now, 1);
	fin_push(sr, &f);
	sr->ack_now = 1; /* a completed receive is reported in this loop */
}

void sdr_sr_recv_final(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_sr *sr, uint32_t slot,
		       int32_t status, uint32_t lost, uint64_t now)
{
	const struct sdr_rslot *s = &qp->rq.slot[slot];
	struct sdr_rdone *d = &sr->done[slot];
	int full = sdr_rslot_full(s);

	/* the sender learns the outcome from a final ACK entry, queued now
	 * and kept (done[]) for its retransmissions; an aborted receive (the
	 * sender said so, or the QP is going away) has nobody to tell */
	if (status != 0 && status != -ETIMEDOUT)
		return;
	d->seq = s->seq;
	d->flags = full ? SDR_ACK_F_FULL : SDR_ACK_F_CLOSED;
	d->cum = full ? sdr_rslot_nchunks(&qp->rq, s) : sr->rcv[slot].ack_cum;
	d->lost = full ? lost : 0;
	d->reack_tsc = 0;
	fin_queue(w, qp, sr, d, now);
}

void sdr_sr_recv_final_restored(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_sr *sr,
				uint32_t slot, uint64_t now)
{
	const struct sdr_rslot *s = &qp->rq.slot[slot];
	const uint64_t *bm = sdr_rq_chunk_priv(&qp->rq, slot);
	struct sdr_rdone *d = &sr->done[slot];
	uint32_t nb = sdr_rslot_nchunks(&qp->rq, s), cum = sdr_ack_cum_advance(bm, nb, 0), high = 0;

	for (uint32_t c = cum; c < nb; c++)
		if (sdr_bit_test(bm, c))
			high = c + 1;
	d->seq = s->seq;
	d->flags = cum && high <= cum && s->imm_mask == 0xFF ? SDR_ACK_F_FULL : SDR_ACK_F_CLOSED;
	d->cum = cum;
	d->lost = 0;
	d->reack_tsc = 0;
	fin_queue(w, qp, sr, d, now);
}

void sdr_sr_rx_dropped(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_sr *sr,
		       const struct sdr_parsed *p, enum sdr_ctr drop, uint64_t now)
{
	uint32_t slot = p->msg_id, seq = sdr_psn_seq(p->psn, p->msg_id);
	struct sdr_rdone *d = &sr->done[slot];

	/* A repeat of what we have means the sender missed an ACK: of the open
	 * receive's progress, or of a completed receive (which the slot may
	 * hold again, reposted). */
	if (drop == SDR_CTR_dup_pkt || drop == SDR_CTR_dup_imm) {
		sdr_sr_rx_note(w, qp, sr, slot, now);
		return;
	}
	if (drop != SDR_CTR_late_pkt && drop != SDR_CTR_stale_gen && drop != SDR_CTR_stale_seq)
		return;
	/* Once per ACK period, however many packets it resends. */
	if (!d->flags || d->seq != seq || (d->reack_tsc && now - d->reack_tsc < sr->ack_period))
		return;
	d->reack_tsc = now;
	SDR_QP_CTR(qp, sr, reacks)++;
	fin_queue(w, qp, sr, d, now);
}

void sdr_sr_poll(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_sr *sr, uint64_t now)
{
	if (sr->ack_now || (sr->nack_dirty && now >= sr->ack_due) ||
	    (sr->fin_next && now >= sr->fin_next))
		ack_flush(w, qp, sr, now, 0);
	sdr_send_window_advance(qp);
	/* (progress_tsc may be a little after @now: it is set mid-iteration) */
	if (qp->horizon_tsc && qp->ack_cursor != qp->send_next && now > qp->progress_tsc &&
	    now - qp->progress_tsc > qp->horizon_tsc) {
		SDR_QP_CTR(qp, sr, send_timeouts)++;
		qp->state = SDR_QPS_ERROR; /* the worker aborts it: -ETIMEDOUT */
	}
}

unsigned sdr_sr_recv_expired(struct sdr_qp *qp, struct sdr_sr *sr, uint64_t now, uint32_t *slots)
{
	uint32_t span = sdr_rq_posted_span(&qp->rq);
	unsigned n = 0;

	(void)sr;
	if (!qp->horizon_tsc)
		return 0;
	for (uint32_t k = 0; k < span; k++) { /* (the posted receives only) */
		uint32_t i = (qp->rq.next_seq - span + k) % SDR_MAX_MSGS;
		struct sdr_rslot *s = &qp->rq.slot[i];
		if (s->state != SDR_RS_POSTED || (!s->pkts_got && !s->imm_mask) ||
		    now <= s->last_tsc || now - s->last_tsc <= qp->horizon_tsc)
			continue;
		if (sdr_rq_complete(&qp->rq, s->seq) >= 0) {
			SDR_QP_CTR(qp, sr, recv_timeouts)++;
			slots[n++] = i;
		}
	}
	return n;
}
