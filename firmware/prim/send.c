/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Send window (send.h): one RoCEv2 UC RDMA WRITE-with-immediate per MTU
 * packet, in send order, each send only after the receiver's clear-to-send
 * for it.
 * Layer prim/: a primitive, the lowest firmware layer; calls only common/ code.
 */
#include <errno.h>
#include <string.h>

#include <rte_mbuf.h>

#include "cq.h"
#include "send.h"
#include "txq.h"

/* "A send completes locally when every packet is on the wire": handed to
 * the PMD by the TX flush at the end of the loop pass, so it completes
 * right after that (sdr_send_flushed()), with the other sends of the pass,
 * in order. */
static void send_done(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_smsg *sm)
{
	if (w->ntxdone == SDR_TXDONE_MAX)
		sdr_send_flushed(w);
	w->txdone[w->ntxdone++] = (struct sdr_txdone){.qp = qp, .seq = sm->seq};
	qp->tx_cursor++;
}

void sdr_send_flushed(struct sdr_worker *w)
{
	for (unsigned i = 0; i < sdr_g.ninst; i++)
		if (w->ntxb[i])
			sdr_txq_flush(w, i);
	for (unsigned i = 0; i < w->ntxdone; i++) {
		struct sdr_qp *qp = w->txdone[i].qp;
		struct sdr_smsg *sm = &qp->smsg[sdr_seq_msg_id(w->txdone[i].seq)];

		/* (unless an abort completed it meanwhile) */
		if (sm->state == SDR_SM_QUEUED && sm->seq == w->txdone[i].seq)
			sdr_cq_send(w, qp, sm);
	}
	w->ntxdone = 0;
}

unsigned sdr_send_first_pass(struct sdr_worker *w, struct sdr_qp *qp, unsigned budget, uint64_t now,
			     const struct sdr_send_hooks *h)
{
	unsigned sent = 0;

	while (budget && qp->tx_cursor != qp->send_next) {
		uint32_t seq = qp->tx_cursor, slot = sdr_seq_msg_id(seq);
		struct sdr_smsg *sm = &qp->smsg[slot];
		struct rte_mbuf *m;

		if (sm->state != SDR_SM_QUEUED && sm->seq == seq) {
			/* a restored QP's send that completed before the restart
			 * (SQE flag DONE): its number only */
			qp->tx_cursor++;
			continue;
		}
		if (!qp->cts[slot].ok || qp->cts[slot].seq != seq)
			break; /* wait for the receiver's clear-to-send */
		if (!sm->status && sm->len > qp->cts[slot].len)
			sm->status = -EMSGSIZE; /* longer than the posted receive */
		if (sm->status) {
			/* the receive matched with it would wait for data that
			 * never comes: tell the receiver (ABORT) */
			sm->aborted = 1;
			sdr_send_abort_queue(w, qp, seq, sm->status, sm->len);
			send_done(w, qp, sm);
			continue;
		}
		if (h && h->before) {
			unsigned before = budget;
			int done = h->before(h->ctx, w, qp, sm, now, &budget);
			sent += before - budget;
			/* (what went before may have used the last of the budget:
			 * budget-- below would wrap and send the whole window in
			 * one pass, past what the TX queue holds) */
			if (!done || !budget)
				break;
		}
		if (sm->cur < sm->nranges) {
			struct sdr_srange *r = &sm->r[sm->cur];
			uint32_t at = sm->pkt * qp->mtu;
			uint32_t plen = r->len - at < qp->mtu ? r->len - at : qp->mtu;
			uint32_t moff = r->msg_off + at;

			m = sdr_txq_reserve(w, qp, sdr_wire_data_frame_bytes(plen, sm->imm != 0),
					    now);
			if (!m)
				break;
			sdr_txq_data(w, qp, m, sm, moff / qp->mtu,
				     r->src + sdr_stripe_real(&qp->rq.stripe, at), plen,
				     moff + plen == sm->len);
			if (h && h->sent)
				h->sent(h->ctx, w, qp, sm, moff / qp->mtu, 1, now);
			sent++;
			budget--;
			if (at + plen == r->len) {
				if (!sm->keep_refs)
					qp->ctx->mrs[r->mr_id].refcnt--;
				sm->cur++;
				sm->pkt = 0;
			} else {
				sm->pkt++;
			}
			continue;
		}
		if (sm->stream && !sm->ended)
			break; /* more STREAM_DATA may come */
		/* Messages of fewer than 8 packets carry the rest of a non-zero
		 * user immediate in zero-length packets (imm_next is 8 for the
		 * others). */
		if (sm->imm_next < SDR_IMM_NIBBLES) {
			m = sdr_txq_reserve(w, qp, sdr_wire_data_frame_bytes(0, 1), now);
			if (!m)
				break;
			sdr_txq_data(w, qp, m, sm, sm->imm_next, NULL, 0, 0);
			if (h && h->sent)
				h->sent(h->ctx, w, qp, sm, sm->imm_next, 0, now);
			sm->imm_next++;
			sent++;
			budget--;
			continue;
		}
		if (h && h->passed) {
			/* on the wire once; the scheme completes it */
			h->passed(h->ctx, qp, sm);
			qp->tx_cursor++;
			continue;
		}
		send_done(w, qp, sm);
	}
	return sent;
}

void sdr_send_window_advance(struct sdr_qp *qp)
{
	while (qp->ack_cursor != qp->tx_cursor) {
		const struct sdr_smsg *sm = &qp->smsg[sdr_seq_msg_id(qp->ack_cursor)];
		if (sm->state == SDR_SM_QUEUED && sm->seq == qp->ack_cursor)
			break;
		qp->ack_cursor++;
	}
}

void sdr_send_abort_flush(struct sdr_worker *w, struct sdr_qp *qp)
{
	struct rte_mbuf *m;

	if (!qp->nabort_out)
		return;
	m = sdr_txq_alloc(w, qp->inst);
	if (m) { /* (else: the receiver's CTS re-send brings us back here) */
		sdr_txq_ctrl(w, qp, m,
			     sdr_ctrl_abort_encode(
				     rte_pktmbuf_mtod(m, uint8_t *) + SDR_CTRL_HDR_LEN,
				     qp->qpn_base, qp->abort_out, (uint16_t)qp->nabort_out));
		qp->st.aborts_tx++;
	}
	qp->nabort_out = 0;
}

void sdr_send_abort_queue(struct sdr_worker *w, struct sdr_qp *qp, uint32_t seq, int32_t status,
			  uint32_t len)
{
	if (qp->nabort_out == SDR_ABORT_MAX_ENTRIES)
		sdr_send_abort_flush(w, qp);
	qp->abort_out[qp->nabort_out++] = (struct sdr_abort_entry){seq, status, len};
}

/* A CTS for a send that is over: if it ended aborted, the receiver has not
 * seen the ABORT (it still offers the receive); say it again. */
static void abort_again(struct sdr_worker *w, struct sdr_qp *qp, uint32_t seq)
{
	const struct sdr_smsg *sm = &qp->smsg[sdr_seq_msg_id(seq)];

	if (sm->state != SDR_SM_DONE || sm->seq != seq || !sm->aborted)
		return;
	sdr_send_abort_queue(w, qp, seq, sm->status, sm->len);
}

void sdr_send_rx_cts(struct sdr_worker *w, struct sdr_qp *qp, const uint8_t *msg,
		     const struct sdr_ctrl_hdr *h, uint64_t now)
{
	struct sdr_cts_entry e;

	qp->st.cts_rx++;
	for (uint16_t i = 0; i < h->count; i++) {
		sdr_ctrl_cts_entry_decode(msg, i, &e);
		/* Only receives the sender can still use: its current send and
		 * the 1023 after it. Older ones are re-sent CTS we no longer need. */
		if (e.seq - qp->tx_cursor >= SDR_MAX_MSGS) {
			if ((int32_t)(e.seq - qp->tx_cursor) < 0) {
				w->ctr[SDR_CTR_cts_stale]++;
				abort_again(w, qp, e.seq);
			} else {
				w->ctr[SDR_CTR_cts_bad]++;
			}
			continue;
		}
		uint32_t slot = sdr_seq_msg_id(e.seq);
		/* news for the send at the head: progress (global timeout) */
		if (e.seq == qp->tx_cursor && (!qp->cts[slot].ok || qp->cts[slot].seq != e.seq))
			qp->progress_tsc = now;
		qp->cts[slot] = (struct sdr_cts_slot){.seq = e.seq, .len = e.length, .ok = 1};
	}
}
