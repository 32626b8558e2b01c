/* SPDX-License-Identifier: BSD-3-Clause */
/* Receive side of a QP (recv.h).
 * Layer prim/: a primitive, the lowest firmware layer; calls only common/ code. */
#include <errno.h>

#include <rte_cycles.h>

#include <rte_mbuf.h>

#include "recv.h"
#include "sdr_dpu.h"
#include "txq.h"

/* Receive numbers are 32 bit and every data packet names its number
 * (docs/wire-format.md §4). A number may come back only after 2^32 receives
 * AND the maximum packet lifetime: when entering block b of 2^28 numbers,
 * the previous use of block b ended when block b + 1 began; that must be
 * SDR_SEQ_REUSE_S seconds (plus the QP's outage horizon, during which a sender
 * retransmits) ago. Never reached below 35 M receives/s per QP. */
#define SDR_SEQ_BLOCK_SHIFT 28
#define SDR_SEQ_REUSE_S 120
static int seq_reuse_ok(struct sdr_qp *qp, uint32_t seq)
{
	uint64_t now, life;
	unsigned b;

	if (seq & ((1u << SDR_SEQ_BLOCK_SHIFT) - 1))
		return 1;
	now = rte_get_tsc_cycles();
	b = seq >> SDR_SEQ_BLOCK_SHIFT;
	life = sdr_ms_cycles((uint64_t)SDR_SEQ_REUSE_S * 1000) + qp->horizon_tsc;
	if (qp->era_tsc[(b + 1) % 16] && now - qp->era_tsc[(b + 1) % 16] < life)
		return 0;
	qp->era_tsc[b] = now;
	return 1;
}

static int64_t recv_post(struct sdr_worker *w, struct sdr_qp *qp, uint8_t *dst, uint32_t len,
			 uint64_t wr_id, uint16_t mr_id, int resume)
{
	int64_t seq;

	if (!seq_reuse_ok(qp, qp->rq.next_seq)) {
		w->ctr[SDR_CTR_seq_guard]++;
		return -EAGAIN;
	}
	seq = resume ? sdr_rq_post_resume(&qp->rq, dst, len, wr_id, mr_id, rte_get_tsc_cycles())
		     : sdr_rq_post(&qp->rq, dst, len, wr_id, mr_id);
	if (seq < 0)
		return seq;
	qp->cts_out[qp->ncts_out].seq = (uint32_t)seq;
	qp->cts_out[qp->ncts_out].length = len;
	if (++qp->ncts_out == SDR_CTS_MAX_ENTRIES)
		sdr_recv_cts_flush(w, qp);
	return seq;
}

int64_t sdr_recv_post(struct sdr_worker *w, struct sdr_qp *qp, uint8_t *dst, uint32_t len,
		      uint64_t wr_id, uint16_t mr_id)
{
	return recv_post(w, qp, dst, len, wr_id, mr_id, 0);
}

int64_t sdr_recv_post_resume(struct sdr_worker *w, struct sdr_qp *qp, uint8_t *dst, uint32_t len,
			     uint64_t wr_id, uint16_t mr_id)
{
	return recv_post(w, qp, dst, len, wr_id, mr_id, 1);
}

/* @return 0, or -1 without an mbuf (the periodic re-send covers it) */
static int tx_cts(struct sdr_worker *w, struct sdr_qp *qp, const struct sdr_cts_entry *e,
		  unsigned n)
{
	struct rte_mbuf *m = sdr_txq_alloc(w, qp->inst);

	if (!m)
		return -1;
	sdr_txq_ctrl(w, qp, m,
		     sdr_ctrl_cts_encode(rte_pktmbuf_mtod(m, uint8_t *) + SDR_CTRL_HDR_LEN,
					 qp->qpn_base, e, (uint16_t)n));
	qp->st.cts_tx++;
	return 0;
}

void sdr_recv_cts_flush(struct sdr_worker *w, struct sdr_qp *qp)
{
	(void)tx_cts(w, qp, qp->cts_out, qp->ncts_out);
	qp->ncts_out = 0;
}

/* Completed receives a stuck sender may still need a CTS for, before the
 * oldest posted one (see sdr_recv_cts_resend()). */
#define CTS_DONE_BACK 64

void sdr_recv_cts_resend(struct sdr_worker *w, struct sdr_qp *qp, uint64_t now)
{
	struct sdr_cts_entry e[SDR_CTS_MAX_ENTRIES];
	unsigned n = 0;
	uint32_t span = sdr_rq_posted_span(&qp->rq), back = 0;
	uint64_t quiet = sdr_ms_cycles(5ull * sdr_g.cfg.cts_resend_ms);

	/* A sender that restarted (docs/reliability.md "Restarts") re-sends,
	 * in order, what its host does not know complete, and needs a CTS for
	 * each: for the receives that saw packets (it had theirs), and for
	 * those completed here that it did not learn of. So while a posted
	 * receive hears nothing for 5 periods, those get a CTS too (a sender
	 * that has it already takes it again; one whose send completed counts
	 * it cts_stale). */
	for (uint32_t k = 0; k < span; k++) {
		const struct sdr_rslot *s =
			&qp->rq.slot[(qp->rq.next_seq - span + k) % SDR_MAX_MSGS];
		uint64_t heard = s->last_tsc > s->post_tsc ? s->last_tsc : s->post_tsc;

		if (s->state == SDR_RS_POSTED && now - heard >= quiet) {
			back = CTS_DONE_BACK;
			break;
		}
	}
	if (back > SDR_MAX_MSGS - span)
		back = SDR_MAX_MSGS - span;
	/* Oldest receive first: the sender uses them in order, so when mbufs
	 * run short the ones it needs next must not be the ones left out. */
	for (uint32_t k = 0; k < span + back; k++) {
		uint32_t seq = qp->rq.next_seq - span - back + k;
		const struct sdr_rslot *s = &qp->rq.slot[seq % SDR_MAX_MSGS];

		if (s->seq != seq || s->state == SDR_RS_FREE)
			continue;
		if (s->state == SDR_RS_DONE ? !back || s->aborted
					    : (s->pkts_got || s->imm_mask) && !s->resumed && !back)
			continue;
		e[n].seq = s->seq;
		e[n].length = s->len;
		if (++n == SDR_CTS_MAX_ENTRIES) {
			if (tx_cts(w, qp, e, n))
				return; /* again from the oldest next period */
			n = 0;
		}
	}
	if (n)
		tx_cts(w, qp, e, n);
}

int sdr_recv_place(struct sdr_worker *w, struct sdr_qp *qp, const struct sdr_parsed *p,
		   uint32_t gen, uint64_t now, uint32_t *slot, enum sdr_ctr *drop)
{
	int rc = sdr_rq_place(&qp->rq, gen, p, now, drop, slot);

	if (rc < 0) {
		w->ctr[*drop]++;
		return -1;
	}
	qp->st.rx_pkts++;
	qp->st.rx_bytes += p->dma_len;
	if (rc & SDR_PLACE_CHUNK)
		qp->st.chunks_done++;
	return rc;
}
