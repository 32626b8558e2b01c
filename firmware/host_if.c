/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Host interface on the worker: consume the context's SQ ring (copy each
 * descriptor out of shared memory, validate, act) and produce completions.
 * Every descriptor gets exactly one completion (SEND, RECV, STREAM_START);
 * RECV_COMPLETE, STREAM_DATA and STREAM_END fold into the completion of the
 * operation they refer to.
 */
#include <errno.h>
#include <string.h>

#include <rte_cycles.h>

#include "dpu.h"

static void err_cqe(struct sdr_worker *w, struct sdr_hctx *c, const struct sdr_sqe *d, int status,
		    enum sdr_ctr ctr)
{
	struct sdr_cqe e = {
		.wr_id = d->wr_id, .status = status, .qp_id = d->qp_id,
		.opcode = d->opcode == SDR_SQ_STREAM_START ? SDR_SQ_SEND : d->opcode,
	};
	w->ctr[ctr]++;
	sdr_qp_post_cqe(c, &e, w);
}

void sdr_host_recv_done(struct sdr_worker *w, struct sdr_qp *qp, uint32_t idx, int32_t status)
{
	struct sdr_rslot *s = &qp->rq.slot[idx];
	int full = sdr_rslot_full(s), data = s->last_known && s->pkts_got == s->npkts;
	struct sdr_cqe e = {
		.wr_id = s->wr_id, .seq = s->seq, .length = full ? s->msg_len : s->max_end,
		.imm = s->imm, .status = status, .qp_id = (uint16_t)qp->id, .opcode = SDR_SQ_RECV,
		.flags = (uint8_t)((s->imm_mask == 0xFF ? SDR_CQE_F_IMM : SDR_CQE_F_IMM_PARTIAL) |
				   (data ? 0 : SDR_CQE_F_PARTIAL)),
	};

	sdr_ec_rx_release(qp, idx);
	qp->ctx->mrs[s->mr_id].refcnt--;
	if (sdr_qp_sr(qp) && (status == 0 || status == -ETIMEDOUT)) {
		/* the sender learns the outcome from a final ACK entry, queued
		 * now and kept (rq.done) for its retransmissions */
		struct sdr_rdone *d = &qp->rq.done[idx];

		d->seq = s->seq;
		d->flags = full ? SDR_ACK_F_FULL : SDR_ACK_F_CLOSED;
		d->cum = full ? sdr_rslot_nchunks(&qp->rq, s) : s->ack_cum;
		d->lost = full ? s->lost : 0;
		d->reack_tsc = 0;
		sdr_sr_rx_fin(w, qp, d->seq, d->flags, d->cum, d->lost, rte_get_tsc_cycles());
	}
	if (full)
		qp->st.msgs_recv++;
	else
		qp->st.msgs_partial++;
	sdr_qp_post_cqe(qp->ctx, &e, w);
}

static struct sdr_qp *qp_of(struct sdr_hctx *c, uint16_t qp_id)
{
	struct sdr_qp *qp;

	if (qp_id >= SDR_MAX_QPS)
		return NULL;
	qp = atomic_load_explicit(&c->inst->qps[qp_id], memory_order_acquire);
	/* only the context's own, live QPs */
	if (!qp || qp->ctx != c || qp->state == SDR_QPS_DEAD)
		return NULL;
	return qp;
}

static void do_send(struct sdr_worker *w, struct sdr_hctx *c, struct sdr_qp *qp,
		    const struct sdr_sqe *d, struct sdr_mr_ent *mr)
{
	uint32_t seq = qp->send_next;
	struct sdr_smsg *sm = &qp->smsg[sdr_seq_msg_id(seq)];

	if (sm->state == SDR_SM_QUEUED) { /* 1024 sends outstanding */
		err_cqe(w, c, d, -EBUSY, SDR_CTR_sqe_busy);
		return;
	}
	memset(sm, 0, offsetof(struct sdr_smsg, r));
	sm->wr_id = d->wr_id;
	sm->seq = seq;
	sm->len = d->length;
	sm->imm = d->imm;
	sm->npkts = (d->length + qp->mtu - 1) / qp->mtu;
	sm->imm_next = sm->npkts < SDR_IMM_NIBBLES ? sm->npkts : SDR_IMM_NIBBLES;
	if (d->opcode != SDR_SQ_SEND)
		sm->stream = 1;
	if (sdr_qp_sr(qp)) {
		if (sdr_sr_send_prepare(qp, sm)) {
			err_cqe(w, c, d, -EIO, SDR_CTR_sr_nomem);
			return;
		}
		if (sdr_qp_ec(qp))
			sdr_ec_send_prepare(qp, sm);
		/* the global timeout counts from here when nothing was outstanding */
		if (qp->ack_cursor == qp->send_next)
			qp->progress_tsc = rte_get_tsc_cycles();
	}
	sm->state = SDR_SM_QUEUED;
	if (d->opcode == SDR_SQ_SEND) {
		sm->r[0].src = mr->addr + d->offset;
		sm->r[0].msg_off = 0;
		sm->r[0].len = d->length;
		sm->r[0].mr_id = (uint16_t)d->mr_id;
		sm->nranges = 1;
		sm->ended = 1;
		mr->refcnt++;
	} else {
		sm->stream = 1;
	}
	qp->send_next = seq + 1;
}

static struct sdr_smsg *stream_of(struct sdr_qp *qp, uint32_t seq)
{
	struct sdr_smsg *sm = &qp->smsg[sdr_seq_msg_id(seq)];
	if (sm->state != SDR_SM_QUEUED || sm->seq != seq || !sm->stream || sm->ended)
		return NULL;
	return sm;
}

static void do_stream_data(struct sdr_worker *w, struct sdr_qp *qp, const struct sdr_sqe *d,
			   struct sdr_mr_ent *mr)
{
	struct sdr_smsg *sm = stream_of(qp, d->seq);
	uint32_t end;

	if (!sm) {
		w->ctr[SDR_CTR_sqe_no_target]++;
		return;
	}
	if (sm->status)
		return;
	end = d->msg_offset + d->length;
	/* inside the message, and whole packets unless it ends the message */
	if (end > sm->len || (end != sm->len && d->length % qp->mtu)) {
		sm->status = -EINVAL;
		w->ctr[SDR_CTR_sqe_bad]++;
		return;
	}
	/* SR keeps every range for retransmissions: no compaction */
	if (sm->nranges == SDR_STREAM_RANGES && sm->cur > 0 && !sdr_qp_sr(qp)) {
		memmove(&sm->r[0], &sm->r[sm->cur], (sm->nranges - sm->cur) * sizeof(sm->r[0]));
		sm->nranges -= sm->cur;
		sm->cur = 0;
	}
	if (sm->nranges == SDR_STREAM_RANGES) {
		sm->status = -EBUSY;
		w->ctr[SDR_CTR_sqe_busy]++;
		return;
	}
	sm->r[sm->nranges].src = mr->addr + d->offset;
	sm->r[sm->nranges].msg_off = d->msg_offset;
	sm->r[sm->nranges].len = d->length;
	sm->r[sm->nranges].mr_id = (uint16_t)d->mr_id;
	sm->nranges++;
	mr->refcnt++;
}

/* Receive numbers are 32 bit and every data packet names its number
 * (docs/wire-format.md §4). A number may come back only after 2^32 receives
 * AND the maximum packet lifetime: when entering block b of 2^28 numbers,
 * the previous use of block b ended when block b + 1 began; that must be
 * SDR_SEQ_REUSE_S seconds (plus the global timeout, during which a sender
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
	life = ((uint64_t)SDR_SEQ_REUSE_S * 1000 + sdr_g.cfg.global_timeout_ms) * sdr_g.tsc_hz / 1000;
	if (qp->era_tsc[(b + 1) % 16] && now - qp->era_tsc[(b + 1) % 16] < life)
		return 0;
	qp->era_tsc[b] = now;
	return 1;
}

static void do_recv(struct sdr_worker *w, struct sdr_hctx *c, struct sdr_qp *qp,
		    const struct sdr_sqe *d, struct sdr_mr_ent *mr)
{
	int64_t seq;

	if (!seq_reuse_ok(qp, qp->rq.next_seq)) {
		err_cqe(w, c, d, -EAGAIN, SDR_CTR_seq_guard);
		return;
	}
	seq = sdr_rq_post(&qp->rq, mr->addr + d->offset, d->length, d->wr_id, (uint16_t)d->mr_id);
	if (seq < 0) {
		err_cqe(w, c, d, -EBUSY, SDR_CTR_sqe_busy);
		return;
	}
	mr->refcnt++;
	if (sdr_qp_ec(qp))
		qp->rq.slot[sdr_seq_msg_id((uint32_t)seq)].post_tsc = rte_get_tsc_cycles();
	qp->cts_out[qp->ncts_out].seq = (uint32_t)seq;
	qp->cts_out[qp->ncts_out].length = d->length;
	if (++qp->ncts_out == SDR_CTS_MAX_ENTRIES)
		sdr_tx_cts_flush(w, qp);
}

static void handle(struct sdr_worker *w, struct sdr_hctx *c, const struct sdr_sqe *d)
{
	struct sdr_qp *qp = qp_of(c, d->qp_id);
	struct sdr_qp_limits lim;
	struct sdr_mr_ent *mr;
	enum sdr_ctr ctr;
	int rc, idx;

	if (qp) {
		lim.max_msg = qp->max_msg;
		lim.mtu = qp->mtu;
		lim.connected = qp->state == SDR_QPS_CONNECTED;
	}
	rc = sdr_sqe_check(d, qp ? &lim : NULL, c->mrs, SDR_MAX_MRS, &mr, &ctr);
	if (rc) {
		if (d->opcode == SDR_SQ_RECV_COMPLETE || d->opcode == SDR_SQ_STREAM_DATA ||
		    d->opcode == SDR_SQ_STREAM_END)
			w->ctr[ctr]++; /* nothing of its own to complete */
		else
			err_cqe(w, c, d, rc, ctr);
		return;
	}
	switch (d->opcode) {
	case SDR_SQ_SEND:
	case SDR_SQ_STREAM_START:
		do_send(w, c, qp, d, mr);
		break;
	case SDR_SQ_STREAM_DATA:
		do_stream_data(w, qp, d, mr);
		break;
	case SDR_SQ_STREAM_END: {
		struct sdr_smsg *sm = stream_of(qp, d->seq);
		if (sm)
			sm->ended = 1;
		else
			w->ctr[SDR_CTR_sqe_no_target]++;
		break;
	}
	case SDR_SQ_RECV:
		do_recv(w, c, qp, d, mr);
		break;
	case SDR_SQ_RECV_COMPLETE:
		idx = sdr_rq_complete(&qp->rq, d->seq);
		if (idx >= 0)
			sdr_host_recv_done(w, qp, (uint32_t)idx, 0);
		else /* it completed on its own meanwhile, or never existed */
			w->ctr[SDR_CTR_sqe_no_target]++;
		break;
	}
}

unsigned sdr_host_poll(struct sdr_worker *w, struct sdr_hctx *c)
{
	struct sdr_sqe d;
	int64_t avail;
	unsigned n;

	if (c->broken || c->ovf_n)
		return 0;
	avail = sdr_ring_avail_checked(&c->sq);
	if (avail < 0) {
		w->ctr[SDR_CTR_sq_corrupt]++;
		c->broken = 1;
		return 0;
	}
	n = avail < SDR_BURST ? (unsigned)avail : SDR_BURST;
	for (unsigned i = 0; i < n; i++) {
		/* copy first: the host may rewrite shared memory under us */
		memcpy(&d, sdr_ring_peek(&c->sq, i), sizeof(d));
		handle(w, c, &d);
	}
	if (n)
		sdr_ring_consume(&c->sq, n);
	return n;
}

static void abort_recv_cb(void *arg, struct sdr_rslot *s)
{
	void **a = arg;
	struct sdr_worker *w = a[0];
	struct sdr_qp *qp = a[1];
	sdr_host_recv_done(w, qp, sdr_seq_msg_id(s->seq), *(int32_t *)a[2]);
}

void sdr_host_abort_qp(struct sdr_worker *w, struct sdr_qp *qp, int32_t status)
{
	void *arg[3] = {w, qp, &status};

	/* SR sends stay outstanding after transmission: start at the oldest */
	uint32_t seq = sdr_qp_sr(qp) ? qp->ack_cursor : qp->tx_cursor;

	for (; seq != qp->send_next; seq++) {
		struct sdr_smsg *sm = &qp->smsg[sdr_seq_msg_id(seq)];

		if (sm->state != SDR_SM_QUEUED || sm->seq != seq)
			continue; /* SR: already completed */
		sm->status = status;
		sdr_send_complete(w, qp, sm);
	}
	qp->tx_cursor = qp->ack_cursor = qp->send_next;
	sdr_rq_abort_all(&qp->rq, abort_recv_cb, arg);
	qp->ncts_out = 0;
	/* nothing of the SR machinery refers to anything live any more */
	qp->timers.n = qp->timers.head = 0;
	qp->retxq.n = qp->retxq.head = 0;
	qp->retx_pkt = UINT32_MAX;
	for (uint32_t i = 0; i < qp->nack_dirty; i++)
		qp->rq.slot[qp->ack_dirty[i]].ack_pending = 0;
	qp->nack_dirty = 0;
	qp->ack_due = 0;
	qp->fin_n = qp->fin_head = 0;
	qp->fin_next = 0;
	qp->ack_now = 0;
	qp->nabort_out = 0;
}
