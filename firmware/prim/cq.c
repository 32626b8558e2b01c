/* SPDX-License-Identifier: BSD-3-Clause */
/* Completion primitive (cq.h).
 * Layer prim/: a primitive, the lowest firmware layer; calls only common/ code. */
#include <rte_cycles.h>

#include "cq.h"

static int cq_push(struct sdr_hctx *c, const struct sdr_cqe *e)
{
	return sdr_ring_enqueue_burst(&c->cq, e, 1) == 1;
}

void sdr_cq_drain(struct sdr_hctx *c)
{
	while (c->ovf_n) {
		if (!cq_push(c, &c->ovf[c->ovf_head]))
			return;
		c->ovf_head = (c->ovf_head + 1) % c->ovf_cap;
		c->ovf_n--;
	}
}

/* The host is slow to poll: keep the completion, in order, and never lose
 * it. The bound is the number of operations a context can have outstanding
 * (the SQ is not read while this FIFO is non-empty). */
static void ovf_push(struct sdr_worker *w, struct sdr_hctx *c, const struct sdr_cqe *e)
{
	if (!c->ovf || c->ovf_n == c->ovf_cap) {
		w->ctr[SDR_CTR_cq_lost]++;
		return;
	}
	c->ovf[(c->ovf_head + c->ovf_n) % c->ovf_cap] = *e;
	c->ovf_n++;
}

void sdr_cq_flush(struct sdr_worker *w, struct sdr_hctx *c)
{
	unsigned n = c->ncqb, k = 0;

	if (!n)
		return;
	/* (the FIFO holds older completions: they go first, sdr_cq_drain()) */
	if (!c->ovf_n)
		k = sdr_ring_enqueue_burst(&c->cq, c->cqb, n);
	for (; k < n; k++)
		ovf_push(w, c, &c->cqb[k]);
	c->ncqb = 0;
}

void sdr_cq_post(struct sdr_worker *w, struct sdr_hctx *c, const struct sdr_cqe *e)
{
	if (c->quiet) /* (its host restores what is pending: no completion) */
		return;
	if (c->ovf_n) { /* after the older ones that wait (then nothing is staged) */
		ovf_push(w, c, e);
		return;
	}
	c->cqb[c->ncqb++] = *e;
	if (c->ncqb == SDR_BURST)
		sdr_cq_flush(w, c);
}

void sdr_cq_send(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_smsg *sm)
{
	struct sdr_cqe e = {
		.wr_id = sm->wr_id,
		.seq = sm->seq,
		.length = sm->len,
		.status = sm->status,
		.qp_id = (uint16_t)qp->id,
		.opcode = SDR_SQ_SEND,
	};
	/* sends that keep their ranges release them all now; the others
	 * released each range once it was on the wire */
	unsigned from = sm->keep_refs ? 0 : sm->cur;

	for (unsigned i = from; i < sm->nranges; i++)
		qp->ctx->mrs[sm->r[i].mr_id].refcnt--;
	sm->cur = sm->nranges = 0;
	sm->state = SDR_SM_DONE;
	if (sm->status)
		qp->st.send_errors++;
	else {
		qp->st.msgs_sent++;
		sdr_ct_hist_add(&qp->ct_hist, sm->len, rte_rdtsc() - sm->post_tsc);
	}
	sdr_cq_post(w, qp->ctx, &e);
}

void sdr_cq_recv(struct sdr_worker *w, struct sdr_qp *qp, uint32_t slot, int32_t status)
{
	const struct sdr_rslot *s = &qp->rq.slot[slot];
	int full = sdr_rslot_full(s), data = s->last_known && s->pkts_got == s->npkts;
	struct sdr_cqe e = {
		.wr_id = s->wr_id,
		.seq = s->seq,
		.length = full ? s->msg_len : s->max_end,
		.imm = s->imm,
		.status = status,
		.qp_id = (uint16_t)qp->id,
		.opcode = SDR_SQ_RECV,
		.flags = (uint8_t)((s->imm_mask == 0xFF ? SDR_CQE_F_IMM : SDR_CQE_F_IMM_PARTIAL) |
				   (data ? 0 : SDR_CQE_F_PARTIAL)),
	};

	qp->ctx->mrs[s->mr_id].refcnt--;
	if (full)
		qp->st.msgs_recv++;
	else
		qp->st.msgs_partial++;
	sdr_cq_post(w, qp->ctx, &e);
}
