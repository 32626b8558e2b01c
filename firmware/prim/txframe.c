/* SPDX-License-Identifier: BSD-3-Clause */
/* Transmit primitive (txq.h), the part above the queue: an mbuf reserved
 * together with the pacer's departure times, and the frames built into it.
 * It only calls sdr_txq_alloc() and sdr_txq_enqueue() below it, so the
 * engine unit tests (tests/firmware) run this code over their own fake
 * queue.
 * Layer prim/: a primitive, the lowest firmware layer; calls only common/ code. */
#include <string.h>

#include <rte_mbuf.h>

#include "txq.h"

/* --pace-trace: the frame in the worker's ring of the last paced frames */
static void trace(struct sdr_worker *w, uint32_t flow, uint32_t bytes, int first, uint64_t now)
{
	struct sdr_pace_rec *r = &w->trace[w->ntrace++ & (w->trace_cap - 1)];

	r->tsc = now;
	r->flow = flow;
	r->bytes = bytes | (first ? SDR_PACE_REC_FIRST : 0);
}

struct rte_mbuf *sdr_txq_reserve(struct sdr_worker *w, struct sdr_qp *qp, uint32_t bytes,
				 uint64_t now)
{
	uint32_t flow = sdr_qp_flow(qp);
	uint64_t t = sdr_pace_t0(w);
	struct rte_mbuf *m;
	int ok = sdr_sched_ready(&w->sched, flow, now), first;

	sdr_pace_t1(w, t);
	if (!ok) {
		w->pace_stalls++;
		qp->pace_held++; /* it had a frame to send: not app-limited */
		return NULL;
	}
	if (w->loop_tx >= SDR_LOOP_TX) { /* enough for this loop: the next one */
		w->loop_tx_full++;
		w->sched.stall = 1;
		return NULL;
	}
	m = sdr_txq_alloc(w, qp->inst);
	if (!m) { /* nothing taken; the QP tries again in the next loop */
		w->sched.stall = 1;
		return NULL;
	}
	t = sdr_pace_t0(w);
	first = sdr_sched_charge(&w->sched, flow, bytes, now);
	sdr_pace_t1(w, t);
	w->pace_frames++;
	w->loop_tx++;
	if (w->trace)
		trace(w, flow, bytes, first, now);
	return m;
}

/* Start the frame in @p m so that its payload, after @p hdr_len bytes of
 * headers, begins on a cache line: the copy into the mbuf (and out of it on
 * a ring pair) then never splits a line per store, ~25 % faster for 4 KiB
 * than at the default headroom's odd offset (docs/benchmarks.md §8). */
static uint8_t *frame_start(struct rte_mbuf *m, size_t hdr_len)
{
	uintptr_t base = (uintptr_t)m->buf_addr;
	uintptr_t pay = RTE_ALIGN_CEIL(base + RTE_PKTMBUF_HEADROOM + hdr_len, RTE_CACHE_LINE_SIZE);

	m->data_off = (uint16_t)(pay - hdr_len - base);
	return (uint8_t *)pay - hdr_len;
}

void sdr_txq_data(struct sdr_worker *w, struct sdr_qp *qp, struct rte_mbuf *m,
		  const struct sdr_smsg *sm, uint32_t pkt_off, const uint8_t *src, uint32_t plen,
		  int se)
{
	uint32_t msg_id = sdr_seq_msg_id(sm->seq);
	struct sdr_data_hdr h;
	uint8_t *buf;
	size_t flen;

	h.dest_qpn = qp->remote.qpn + sdr_seq_gen(sm->seq, qp->remote.generations);
	h.psn = sdr_seq_psn(sm->seq); /* names the message (docs/wire-format.md §4) */
	h.va = (uint64_t)msg_id * qp->remote.max_msg + (uint64_t)pkt_off * qp->mtu;
	h.rkey = qp->remote.rkey;
	h.dma_len = plen;
	h.imm = sdr_imm_pack(msg_id, pkt_off, sdr_user_imm_nibble(sm->imm, pkt_off));
	h.se = (uint8_t)se;
	h.no_imm = sm->imm == 0; /* opcode 0x2A: the immediate is absent */
	buf = frame_start(m, sdr_data_hdr_len(&h));
	flen = sdr_build_data_hdr_t(buf, &qp->tmpl, &h);
	if (qp->ecn_tx)
		sdr_ip_set_ecn(buf, qp->ecn_tx);
	if (qp->tx_sport) /* multipath: the path of its unit (the ICRC below covers it) */
		sdr_udp_set_sport(buf, qp->tx_sport);
	if (plen)
		memcpy(buf + sdr_data_hdr_len(&h), src, plen);
	sdr_pkt_finish(buf, flen, sdr_g.cfg.icrc);
	m->data_len = m->pkt_len = (uint32_t)flen;
	sdr_txq_enqueue(w, qp->inst, m);
	qp->st.tx_pkts++;
	qp->st.tx_bytes += plen;
}

void sdr_txq_ctrl_to(struct sdr_worker *w, struct sdr_inst *in, const struct sdr_l2l3 *l2,
		     uint32_t dest_qpn, uint64_t key, struct rte_mbuf *m, size_t mlen)
{
	uint8_t *buf = rte_pktmbuf_mtod(m, uint8_t *);
	size_t flen = sdr_build_ctrl_hdr(buf, l2, dest_qpn, 0, mlen);

	sdr_ctrl_key_put(buf + SDR_CTRL_HDR_LEN, key);
	sdr_pkt_finish(buf, flen, sdr_g.cfg.icrc);
	m->data_len = m->pkt_len = (uint32_t)flen;
	sdr_txq_enqueue(w, in, m);
}

void sdr_txq_ctrl(struct sdr_worker *w, struct sdr_qp *qp, struct rte_mbuf *m, size_t mlen)
{
	uint8_t *buf = rte_pktmbuf_mtod(m, uint8_t *);
	size_t flen = sdr_build_ctrl_hdr_t(buf, &qp->tmpl, qp->remote.qpn, qp->psn++ & SDR_PSN_MASK,
					   mlen);

	sdr_ctrl_key_put(buf + SDR_CTRL_HDR_LEN, qp->remote.ctrl_key);
	/* parity is data too: ECN-capable like the data packets */
	if (buf[SDR_CTRL_HDR_LEN + 5] == SDR_CTRL_PARITY) {
		if (qp->ecn_tx)
			sdr_ip_set_ecn(buf, qp->ecn_tx);
		if (qp->tx_sport) /* sprayed like the data (docs/multipath.md) */
			sdr_udp_set_sport(buf, qp->tx_sport);
	}
	sdr_pkt_finish(buf, flen, sdr_g.cfg.icrc);
	m->data_len = m->pkt_len = (uint32_t)flen;
	sdr_txq_enqueue(w, qp->inst, m);
}
