/* SPDX-License-Identifier: BSD-3-Clause */
/* Transmit primitive (txq.h), the part above the queue: an mbuf reserved
 * together with both pacers' bytes, and the frames built into it. It only
 * calls sdr_txq_alloc() and sdr_txq_enqueue() below it, so the engine unit
 * tests (tests/firmware) run this code over their own fake queue. */
#include <string.h>

#include "txq.h"

struct rte_mbuf *sdr_txq_reserve(struct sdr_worker *w, struct sdr_qp *qp, uint32_t bytes,
				 uint64_t now)
{
	struct sdr_pacer *port = &w->port_pacer[qp->inst->idx];
	struct rte_mbuf *m;

	if (!sdr_pacer_take(&qp->pacer, bytes, now))
		goto stall;
	if (!sdr_pacer_take(port, bytes, now)) {
		sdr_pacer_refund(&qp->pacer, bytes);
		goto stall;
	}
	m = sdr_txq_alloc(w, qp->inst);
	if (!m) { /* give both buckets back: nothing left */
		sdr_pacer_refund(&qp->pacer, bytes);
		sdr_pacer_refund(port, bytes);
	}
	return m;
stall:
	w->pace_stalls++;
	return NULL;
}

void sdr_txq_data(struct sdr_worker *w, struct sdr_qp *qp, struct rte_mbuf *m,
		  const struct sdr_smsg *sm, uint32_t pkt_off, const uint8_t *src, uint32_t plen,
		  int se)
{
	uint32_t msg_id = sdr_seq_msg_id(sm->seq);
	struct sdr_data_hdr h;
	uint8_t *buf = rte_pktmbuf_mtod(m, uint8_t *);
	size_t flen;

	h.dest_qpn = qp->remote.qpn + sdr_seq_gen(sm->seq, qp->remote.generations);
	h.psn = sdr_seq_psn(sm->seq); /* names the message (docs/wire-format.md §4) */
	h.va = (uint64_t)msg_id * qp->remote.max_msg + (uint64_t)pkt_off * qp->mtu;
	h.rkey = qp->remote.rkey;
	h.dma_len = plen;
	h.imm = sdr_imm_pack(msg_id, pkt_off, sdr_user_imm_nibble(sm->imm, pkt_off));
	h.se = (uint8_t)se;
	flen = sdr_build_data_hdr(buf, &qp->l2, &h);
	if (plen)
		memcpy(buf + SDR_DATA_HDR_LEN, src, plen);
	sdr_pkt_finish(buf, flen, sdr_g.cfg.icrc);
	m->data_len = m->pkt_len = (uint32_t)flen;
	sdr_txq_enqueue(w, qp->inst, m);
	qp->st.tx_pkts++;
	qp->st.tx_bytes += plen;
}

void sdr_txq_ctrl(struct sdr_worker *w, struct sdr_qp *qp, struct rte_mbuf *m, size_t mlen)
{
	uint8_t *buf = rte_pktmbuf_mtod(m, uint8_t *);
	size_t flen = sdr_build_ctrl_hdr(buf, &qp->l2, qp->remote.qpn, qp->psn++ & SDR_PSN_MASK, mlen);

	sdr_ctrl_key_put(buf + SDR_CTRL_HDR_LEN, qp->remote.ctrl_key);
	sdr_pkt_finish(buf, flen, sdr_g.cfg.icrc);
	m->data_len = m->pkt_len = (uint32_t)flen;
	sdr_txq_enqueue(w, qp->inst, m);
}
