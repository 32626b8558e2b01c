/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Transmit engine: one RoCEv2 UC RDMA WRITE-with-immediate per MTU packet,
 * in send order, each send only after the receiver's clear-to-send for it.
 * Also clear-to-send (and its periodic re-send) for our posted receives.
 */
#include <string.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>

#include "dpu.h"

struct rte_mbuf *sdr_tx_alloc(struct sdr_worker *w, struct sdr_inst *in)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(in->pool);
	if (!m)
		w->ctr[SDR_CTR_tx_nombuf]++;
	return m;
}

void sdr_tx_flush(struct sdr_worker *w, unsigned i)
{
	struct sdr_inst *in = &sdr_g.inst[i];
	unsigned n = w->ntxb[i], sent = 0, tries = 0;

	while (sent < n && tries++ < 64) {
		uint16_t k = rte_eth_tx_burst(in->port, (uint16_t)w->idx, &w->txb[i][sent],
					      (uint16_t)(n - sent));
		for (unsigned j = sent; j < sent + k; j++)
			w->port[i].tx_bytes += w->txb[i][j]->pkt_len;
		sent += k;
		if (sent < n)
			rte_pause();
	}
	w->port[i].tx_pkts += sent;
	if (sent < n) {
		w->ctr[SDR_CTR_tx_full] += n - sent;
		rte_pktmbuf_free_bulk(&w->txb[i][sent], n - sent);
	}
	w->ntxb[i] = 0;
}

void sdr_tx_enqueue(struct sdr_worker *w, struct sdr_inst *in, struct rte_mbuf *m)
{
	w->txb[in->idx][w->ntxb[in->idx]++] = m;
	if (w->ntxb[in->idx] == SDR_BURST)
		sdr_tx_flush(w, in->idx);
}

/* Build and queue one data packet; returns 0, or -1 without an mbuf. */
int sdr_tx_data_pkt(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_smsg *sm,
		       uint32_t pkt_off, const uint8_t *src, uint32_t plen, int se)
{
	struct sdr_inst *in = qp->inst;
	struct rte_mbuf *m = sdr_tx_alloc(w, in);
	uint32_t msg_id = sdr_seq_msg_id(sm->seq);
	struct sdr_data_hdr h;
	uint8_t *buf;
	size_t flen;

	if (!m)
		return -1;
	h.dest_qpn = qp->remote.qpn + sdr_seq_gen(sm->seq, qp->remote.generations);
	h.psn = sdr_seq_psn(sm->seq); /* names the message (docs/wire-format.md §4) */
	h.va = (uint64_t)msg_id * qp->remote.max_msg + (uint64_t)pkt_off * qp->mtu;
	h.rkey = qp->remote.rkey;
	h.dma_len = plen;
	h.imm = sdr_imm_pack(msg_id, pkt_off, sdr_user_imm_nibble(sm->imm, pkt_off));
	h.se = (uint8_t)se;
	buf = rte_pktmbuf_mtod(m, uint8_t *);
	flen = sdr_build_data_hdr(buf, &qp->l2, &h);
	if (plen)
		memcpy(buf + SDR_DATA_HDR_LEN, src, plen);
	sdr_pkt_finish(buf, flen, sdr_g.cfg.icrc);
	m->data_len = m->pkt_len = (uint32_t)flen;
	sdr_tx_enqueue(w, in, m);
	qp->st.tx_pkts++;
	qp->st.tx_bytes += plen;
	return 0;
}

/* Drop the send's references on the host memory it reads: NONE sends
 * release each range once it is on the wire, SR sends keep every range
 * (retransmissions re-read it) until completion. */
void sdr_smsg_release(struct sdr_qp *qp, struct sdr_smsg *sm)
{
	unsigned from = sdr_qp_sr(qp) ? 0 : sm->cur;

	for (unsigned i = from; i < sm->nranges; i++)
		qp->ctx->mrs[sm->r[i].mr_id].refcnt--;
	sm->cur = sm->nranges = 0;
}

void sdr_send_complete(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_smsg *sm)
{
	struct sdr_cqe e = {
		.wr_id = sm->wr_id, .seq = sm->seq, .length = sm->len, .status = sm->status,
		.qp_id = (uint16_t)qp->id, .opcode = SDR_SQ_SEND,
	};

	sdr_smsg_release(qp, sm);
	sm->state = SDR_SM_DONE;
	if (sm->status)
		qp->st.send_errors++;
	else
		qp->st.msgs_sent++;
	sdr_qp_post_cqe(qp->ctx, &e, w);
}

static void send_done(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_smsg *sm)
{
	/* "Send completes locally when every packet is on the wire." */
	sdr_tx_flush(w, qp->inst->idx);
	sdr_send_complete(w, qp, sm);
	qp->tx_cursor++;
}

/* Both the QP's and the port's pacer must allow a frame of @p bytes. */
int sdr_tx_paced(struct sdr_worker *w, struct sdr_qp *qp, uint32_t bytes, uint64_t now)
{
	struct sdr_pacer *port = &w->port_pacer[qp->inst->idx];

	if (!sdr_pacer_take(&qp->pacer, bytes, now))
		goto stall;
	if (!sdr_pacer_take(port, bytes, now)) {
		sdr_pacer_refund(&qp->pacer, bytes);
		goto stall;
	}
	return 1;
stall:
	w->pace_stalls++;
	return 0;
}

uint32_t sdr_frame_bytes(uint32_t plen)
{
	return SDR_DATA_HDR_LEN + ((plen + 3) & ~3u) + SDR_ICRC_LEN;
}

unsigned sdr_tx_qp(struct sdr_worker *w, struct sdr_qp *qp)
{
	unsigned budget = SDR_BURST, sent = 0;
	uint64_t now = rte_get_tsc_cycles();
	int sr = sdr_qp_sr(qp), ec = sdr_qp_ec(qp);

	if (sr) {
		sent = sdr_sr_tx(w, qp, now);
		budget -= sent;
	}

	while (budget && qp->tx_cursor != qp->send_next) {
		uint32_t seq = qp->tx_cursor, slot = sdr_seq_msg_id(seq);
		struct sdr_smsg *sm = &qp->smsg[slot];

		if (!qp->cts_ok[slot] || qp->cts_seq[slot] != seq)
			break; /* wait for the receiver's clear-to-send */
		if (!sm->status && sm->len > qp->cts_len[slot])
			sm->status = -EMSGSIZE; /* longer than the posted receive */
		if (sm->status) {
			/* the receive matched with it would wait for data that
			 * never comes: tell the receiver (ABORT) */
			sm->aborted = 1;
			sdr_tx_abort_queue(w, qp, seq, sm->status, sm->len);
			send_done(w, qp, sm);
			continue;
		}
		/* EC: a submessage's parity goes out before the next one's data
		 * (parity packets are work too: the worker must not idle-sleep) */
		if (ec) {
			unsigned before = budget;
			int done = sdr_ec_tx_parity(w, qp, sm, now, &budget);
			sent += before - budget;
			if (!done)
				break;
		}
		if (sm->cur < sm->nranges) {
			struct sdr_srange *r = &sm->r[sm->cur];
			uint32_t at = sm->pkt * qp->mtu;
			uint32_t plen = r->len - at < qp->mtu ? r->len - at : qp->mtu;
			uint32_t moff = r->msg_off + at;

			if (!sdr_tx_paced(w, qp, sdr_frame_bytes(plen), now))
				break;
			if (sdr_tx_data_pkt(w, qp, sm, moff / qp->mtu, r->src + at, plen,
					    moff + plen == sm->len))
				break;
			if (sr)
				sdr_sr_unit_sent(qp, sm, moff / qp->mtu, now);
			if (ec)
				sdr_ec_data_sent(w, qp, sm, moff / qp->mtu);
			sent++;
			budget--;
			if (at + plen == r->len) {
				if (!sr)
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
		/* Messages of fewer than 8 packets carry the rest of the user
		 * immediate in zero-length packets. */
		if (sm->imm_next < SDR_IMM_NIBBLES) {
			if (!sdr_tx_paced(w, qp, sdr_frame_bytes(0), now))
				break;
			if (sdr_tx_data_pkt(w, qp, sm, sm->imm_next, NULL, 0, 0))
				break;
			if (sr)
				sdr_sr_unit_sent(qp, sm, sm->imm_next, now);
			sm->imm_next++;
			sent++;
			budget--;
			continue;
		}
		if (sr) {
			/* on the wire once; completes when the receiver says FULL */
			sm->txdone = 1;
			qp->tx_cursor++;
			continue;
		}
		send_done(w, qp, sm);
	}
	return sent;
}

void sdr_tx_ctrl_send(struct sdr_worker *w, struct sdr_qp *qp, struct rte_mbuf *m, size_t mlen)
{
	uint8_t *buf = rte_pktmbuf_mtod(m, uint8_t *);
	size_t flen = sdr_build_ctrl_hdr(buf, &qp->l2, qp->remote.qpn, qp->psn++ & SDR_PSN_MASK, mlen);

	sdr_ctrl_key_put(buf + SDR_CTRL_HDR_LEN, qp->remote.ctrl_key);

	sdr_pkt_finish(buf, flen, sdr_g.cfg.icrc);
	m->data_len = m->pkt_len = (uint32_t)flen;
	sdr_tx_enqueue(w, qp->inst, m);
}

static void tx_cts(struct sdr_worker *w, struct sdr_qp *qp, const struct sdr_cts_entry *e,
		   unsigned n)
{
	struct rte_mbuf *m = sdr_tx_alloc(w, qp->inst);

	if (!m)
		return; /* the periodic re-send covers it */
	sdr_tx_ctrl_send(w, qp, m,
			 sdr_ctrl_cts_encode(rte_pktmbuf_mtod(m, uint8_t *) + SDR_CTRL_HDR_LEN,
					     qp->qpn_base, e, (uint16_t)n));
	qp->st.cts_tx++;
}

void sdr_tx_cts_flush(struct sdr_worker *w, struct sdr_qp *qp)
{
	tx_cts(w, qp, qp->cts_out, qp->ncts_out);
	qp->ncts_out = 0;
}

void sdr_tx_rects(struct sdr_worker *w, struct sdr_qp *qp, uint64_t now)
{
	struct sdr_cts_entry e[SDR_CTS_MAX_ENTRIES];
	unsigned n = 0;

	(void)now;
	for (uint32_t i = 0; i < SDR_MAX_MSGS; i++) {
		const struct sdr_rslot *s = &qp->rq.slot[i];
		if (s->state != SDR_RS_POSTED || s->pkts_got || s->imm_mask)
			continue;
		e[n].seq = s->seq;
		e[n].length = s->len;
		if (++n == SDR_CTS_MAX_ENTRIES) {
			tx_cts(w, qp, e, n);
			n = 0;
		}
	}
	if (n)
		tx_cts(w, qp, e, n);
}

void sdr_tx_abort_flush(struct sdr_worker *w, struct sdr_qp *qp)
{
	struct rte_mbuf *m;

	if (!qp->nabort_out)
		return;
	m = sdr_tx_alloc(w, qp->inst);
	if (m) /* (else: the receiver's CTS re-send brings us back here) */
		sdr_tx_ctrl_send(w, qp, m,
				 sdr_ctrl_abort_encode(rte_pktmbuf_mtod(m, uint8_t *) +
							       SDR_CTRL_HDR_LEN,
						       qp->qpn_base, qp->abort_out,
						       (uint16_t)qp->nabort_out));
	qp->nabort_out = 0;
}

void sdr_tx_abort_queue(struct sdr_worker *w, struct sdr_qp *qp, uint32_t seq, int32_t status,
			uint32_t len)
{
	if (qp->nabort_out == SDR_ABORT_MAX_ENTRIES)
		sdr_tx_abort_flush(w, qp);
	qp->abort_out[qp->nabort_out++] = (struct sdr_abort_entry){seq, status, len};
}
