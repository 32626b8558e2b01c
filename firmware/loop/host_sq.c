/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Host SQ on the worker: consume the context's SQ ring (copy each
 * descriptor out of shared memory, validate, act) and produce completions.
 * Every descriptor gets exactly one completion (SEND, RECV, STREAM_START);
 * RECV_COMPLETE, STREAM_DATA and STREAM_END fold into the completion of the
 * operation they refer to.
 * Layer loop/: the worker and its stages; calls schemes (rel/) and what lies below them.
 */
#include <errno.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_per_lcore.h>

#include "cq.h"
#include "host_sq.h"
#include "recv.h"
#include "rel.h"

/* Descriptors this lcore refused: sdr_host_poll() charges them more. */
static RTE_DEFINE_PER_LCORE(unsigned, sq_refused);

static inline void sq_refuse(struct sdr_worker *w, enum sdr_ctr ctr)
{
	w->ctr[ctr]++;
	RTE_PER_LCORE(sq_refused)++;
}

static void err_cqe(struct sdr_worker *w, struct sdr_hctx *c, const struct sdr_sqe *d, int status,
		    enum sdr_ctr ctr)
{
	struct sdr_cqe e = {
		.wr_id = d->wr_id,
		.status = status,
		.qp_id = d->qp_id,
		.opcode = d->opcode == SDR_SQ_STREAM_START ? SDR_SQ_SEND : d->opcode,
	};
	sq_refuse(w, ctr);
	sdr_cq_post(w, c, &e);
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
		    const struct sdr_sqe *d, struct sdr_mr_ent *mr, uint64_t now)
{
	uint32_t seq = qp->send_next;
	struct sdr_smsg *sm = &qp->smsg[sdr_seq_msg_id(seq)];

	if (sm->state == SDR_SM_QUEUED) { /* 1024 sends outstanding */
		err_cqe(w, c, d, -EBUSY, SDR_CTR_sqe_busy);
		return;
	}
	memset(sm, 0, offsetof(struct sdr_smsg, r));
	sm->wr_id = d->wr_id;
	sm->post_tsc = now;
	sm->seq = seq;
	sm->len = d->length;
	sm->imm = d->imm;
	sm->npkts = (d->length + qp->mtu - 1) / qp->mtu;
	/* immediate-only packets at offsets imm_next..7: none for a message
	 * without immediate (0x2A packets say "immediate 0" themselves) */
	sm->imm_next = SDR_IMM_NIBBLES - sdr_wire_imm_only_pkts(sm->npkts, sm->imm != 0);
	if (d->opcode != SDR_SQ_SEND)
		sm->stream = 1;
	sm->keep_refs = qp->ops->keeps_ranges;
	if (qp->ops->send_prepare(w, qp, sm, now)) {
		/* counted by the scheme's own counter (its descriptor) */
		err_cqe(w, c, d, -EIO, (enum sdr_ctr)qp->ops->desc->prepare_failed);
		return;
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
		sq_refuse(w, SDR_CTR_sqe_no_target);
		return;
	}
	if (sm->status)
		return;
	end = d->msg_offset + d->length;
	/* inside the message, and whole packets unless it ends the message */
	if (end > sm->len || (end != sm->len && d->length % qp->mtu)) {
		sm->status = -EINVAL;
		sq_refuse(w, SDR_CTR_sqe_bad);
		return;
	}
	/* a send that keeps its ranges (retransmissions): no compaction */
	if (sm->nranges == SDR_STREAM_RANGES && sm->cur > 0 && !sm->keep_refs) {
		memmove(&sm->r[0], &sm->r[sm->cur], (sm->nranges - sm->cur) * sizeof(sm->r[0]));
		sm->nranges -= sm->cur;
		sm->cur = 0;
	}
	if (sm->nranges == SDR_STREAM_RANGES) {
		sm->status = -EBUSY;
		sq_refuse(w, SDR_CTR_sqe_busy);
		return;
	}
	sm->r[sm->nranges].src = mr->addr + d->offset;
	sm->r[sm->nranges].msg_off = d->msg_offset;
	sm->r[sm->nranges].len = d->length;
	sm->r[sm->nranges].mr_id = (uint16_t)d->mr_id;
	sm->nranges++;
	mr->refcnt++;
}

/* SEND or STREAM_START with flag DONE (a restored QP's send that completed
 * before the restart): it takes its number, nothing else (send.c's first
 * pass steps over it). */
static void do_send_done(struct sdr_worker *w, struct sdr_hctx *c, struct sdr_qp *qp,
			 const struct sdr_sqe *d)
{
	uint32_t seq = qp->send_next;
	struct sdr_smsg *sm = &qp->smsg[sdr_seq_msg_id(seq)];

	if (sm->state == SDR_SM_QUEUED) {
		err_cqe(w, c, d, -EBUSY, SDR_CTR_sqe_busy);
		return;
	}
	memset(sm, 0, offsetof(struct sdr_smsg, r));
	sm->wr_id = d->wr_id;
	sm->seq = seq;
	sm->len = d->length;
	sm->state = SDR_SM_DONE;
	qp->send_next = seq + 1;
}

static void do_recv(struct sdr_worker *w, struct sdr_hctx *c, struct sdr_qp *qp,
		    const struct sdr_sqe *d, struct sdr_mr_ent *mr, uint64_t now, uint8_t fl)
{
	int64_t seq = fl ? sdr_recv_post_resume(w, qp, mr->addr + d->offset, d->length, d->wr_id,
						(uint16_t)d->mr_id)
			 : sdr_recv_post(w, qp, mr->addr + d->offset, d->length, d->wr_id,
					 (uint16_t)d->mr_id);

	if (seq == -EAGAIN) {
		err_cqe(w, c, d, -EAGAIN, SDR_CTR_seq_guard);
		return;
	}
	if (seq < 0) {
		err_cqe(w, c, d, -EBUSY, SDR_CTR_sqe_busy);
		return;
	}
	qp->rq.slot[sdr_seq_msg_id((uint32_t)seq)].post_tsc = now; /* (sdr-diag) */
	if (qp->ops->recv_posted)
		qp->ops->recv_posted(qp, sdr_seq_msg_id((uint32_t)seq), now);
	if (fl & SDR_SQE_F_DONE) /* done before the restart: no completion, no data */
		sdr_rq_complete(&qp->rq, (uint32_t)seq);
	else
		mr->refcnt++;
	if (fl && qp->ops->recv_restored)
		qp->ops->recv_restored(w, qp, sdr_seq_msg_id((uint32_t)seq),
				       !!(fl & SDR_SQE_F_DONE), now);
}

/* The flags of a restored QP's re-posted descriptors (sdr_abi.h): RESUME on
 * RECV, DONE on SEND, STREAM_START and RECV; only on a QP QP_RESTORE made.
 * @return 0 (allowed), or -1 (refused: *ctr sqe_bad for bits no flag has,
 * sqe_bad_flags for a flag where it does not apply). */
static int flags_ok(const struct sdr_qp *qp, const struct sdr_sqe *d, enum sdr_ctr *ctr)
{
	uint8_t f = d->flags;

	*ctr = SDR_CTR_sqe_bad;
	if (f & ~(SDR_SQE_F_RESUME | SDR_SQE_F_DONE))
		return -1;
	*ctr = SDR_CTR_sqe_bad_flags;
	if (!qp || !qp->restored)
		return -1;
	if ((f & SDR_SQE_F_RESUME) && d->opcode != SDR_SQ_RECV)
		return -1;
	if ((f & SDR_SQE_F_DONE) && d->opcode != SDR_SQ_RECV && d->opcode != SDR_SQ_SEND &&
	    d->opcode != SDR_SQ_STREAM_START)
		return -1;
	return 0;
}

static void handle(struct sdr_worker *w, struct sdr_hctx *c, const struct sdr_sqe *sqe,
		   uint64_t now)
{
	struct sdr_qp *qp = qp_of(c, sqe->qp_id);
	struct sdr_qp_limits lim;
	struct sdr_sqe dd = *sqe, *d = &dd;
	struct sdr_mr_ent *mr;
	enum sdr_ctr ctr;
	uint8_t fl = d->flags;
	int rc, idx;

	if (fl) {
		if (flags_ok(qp, d, &ctr)) {
			if (d->opcode == SDR_SQ_RECV_COMPLETE || d->opcode == SDR_SQ_STREAM_DATA ||
			    d->opcode == SDR_SQ_STREAM_END)
				sq_refuse(w, ctr);
			else
				err_cqe(w, c, d, -EINVAL, ctr);
			return;
		}
		dd.flags = 0; /* checked: the rest is an ordinary descriptor */
	}

	if (qp) {
		lim.max_msg = qp->max_msg;
		lim.mtu = qp->mtu;
		lim.connected = qp->state == SDR_QPS_CONNECTED;
		lim.stripe = qp->rq.stripe;
	}
	rc = sdr_sqe_check(d, qp ? &lim : NULL, c->mrs, SDR_MAX_MRS, &mr, &ctr);
	if (qp)
		sdr_qp_touch(w, qp); /* the worker visits it in this loop (worker.c) */
	if (rc) {
		if (d->opcode == SDR_SQ_RECV_COMPLETE || d->opcode == SDR_SQ_STREAM_DATA ||
		    d->opcode == SDR_SQ_STREAM_END)
			sq_refuse(w, ctr); /* nothing of its own to complete */
		else
			err_cqe(w, c, d, rc, ctr);
		return;
	}
	switch (d->opcode) {
	case SDR_SQ_SEND:
	case SDR_SQ_STREAM_START:
		if (fl & SDR_SQE_F_DONE)
			do_send_done(w, c, qp, d);
		else
			do_send(w, c, qp, d, mr, now);
		break;
	case SDR_SQ_STREAM_DATA: do_stream_data(w, qp, d, mr); break;
	case SDR_SQ_STREAM_END: {
		struct sdr_smsg *sm = stream_of(qp, d->seq);
		if (sm)
			sm->ended = 1;
		else
			sq_refuse(w, SDR_CTR_sqe_no_target);
		break;
	}
	case SDR_SQ_RECV: do_recv(w, c, qp, d, mr, now, fl); break;
	case SDR_SQ_RECV_COMPLETE:
		idx = sdr_rq_complete(&qp->rq, d->seq);
		if (idx >= 0)
			qp->ops->recv_done(w, qp, (uint32_t)idx, 0, now);
		else /* it completed on its own meanwhile, or never existed */
			sq_refuse(w, SDR_CTR_sqe_no_target);
		break;
	}
}

/*
 * Fair SQ service: each loop of the worker gives every context SQ_CREDITS
 * credits (none are saved beyond that). A descriptor costs 1, a refused one
 * SQ_BAD_COST, and credits may go negative: a context that floods refused
 * descriptors runs into debt and is skipped (sq_throttled) until it has paid
 * it off, i.e. it gets about SQ_CREDITS / SQ_BAD_COST descriptors per loop
 * while it misbehaves, against SQ_CREDITS (one burst) for a well-behaved one.
 */
#define SQ_CREDITS ((int32_t)SDR_BURST)
#define SQ_BAD_COST 16

unsigned sdr_host_poll(struct sdr_worker *w, struct sdr_hctx *c, uint64_t now)
{
	struct sdr_sqe d;
	int64_t avail;
	unsigned n, i;

	if (c->broken || c->ovf_n)
		return 0;
	avail = sdr_ring_avail_checked(&c->sq);
	if (avail < 0) {
		w->ctr[SDR_CTR_sq_corrupt]++;
		c->broken = 1;
		return 0;
	}
	c->sq_credit = c->sq_credit + SQ_CREDITS > SQ_CREDITS ? SQ_CREDITS
							      : c->sq_credit + SQ_CREDITS;
	n = avail < SDR_BURST ? (unsigned)avail : SDR_BURST;
	for (i = 0; i < n && c->sq_credit > 0; i++) {
		unsigned refused = RTE_PER_LCORE(sq_refused);
		/* copy first: the host may rewrite shared memory under us */
		memcpy(&d, sdr_ring_peek(&c->sq, i), sizeof(d));
		handle(w, c, &d, now);
		c->sq_credit -= RTE_PER_LCORE(sq_refused) != refused ? SQ_BAD_COST : 1;
	}
	if (i)
		sdr_ring_consume(&c->sq, i);
	if (i < n) /* descriptors left waiting for want of credit */
		w->ctr[SDR_CTR_sq_throttled]++;
	return i;
}
