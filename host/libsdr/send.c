/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libsdr's send posts (host library layer): one-shot sends and streams
 * (start, data, end), each SQE checked as the DPU checks it before it takes
 * the next send number; and the raw SQ post of the test hooks. While the
 * daemon restarts (restore.c), sends go to the journal only.
 */
#include <errno.h>
#include <string.h>

#include "sdr_internal.h"
#include "sdr_priv.h"

#ifdef SDR_TEST_HOOKS
int sdr__sq_raw_post(struct sdr_ctx *ctx, const struct sdr_sqe *sqe)
{
	if (ctx == NULL || sqe == NULL)
		return -EINVAL;
	if (ctx->dead)
		return -EPIPE;
	return sq_post(ctx, sqe);
}
#endif

/* What every new send (one-shot or stream) must satisfy besides the
 * descriptor check, before it may take the next send number: the peer's
 * receive slots are max_send bytes (the DPU learns that from the CTS). */
static int send_check(struct sdr_qp *qp, const struct sdr_sqe *sqe, const struct sdr_mr *mr)
{
	int rc = desc_check(qp, sqe, mr);

	if (rc)
		return rc;
	if (sqe->length > qp->max_send)
		return fail(qp->ctx, -EMSGSIZE, "length above the peer's max_msg");
	return 0;
}

/* Post @p sqe as send number qp->send_seq and arm its handle (journal only
 * while the daemon restarts: restore.c posts it later). */
static int send_commit(struct sdr_qp *qp, struct sdr_op *op, struct sdr_sqe *sqe, uint64_t wr_id,
		       int stream, struct sdr_send_handle **h, struct sdr_mr *mr)
{
	int rc, journal = qp_journal(qp);

	sqe->qp_id = (uint16_t)qp->qp_id;
	sqe->wr_id = cookie_make(qp->idx, 0, qp->send_seq);
	if (!journal) {
		rc = sq_post(qp->ctx, sqe);
		if (rc)
			return rc;
	}
	op_arm(op, qp->send_seq++, sqe->length, wr_id);
	op->stream = stream;
	op->mr = mr;
	op->off = sqe->offset;
	op->imm = sqe->imm;
	op->posted = !journal;
	qp->ctx->outstanding++;
	if (h)
		*h = (struct sdr_send_handle *)op;
	return 0;
}

int sdr_send_post(struct sdr_qp *qp, const struct sdr_send_wr *wr, struct sdr_send_handle **h)
{
	struct sdr_sqe sqe;
	struct sdr_op *op;
	uint64_t off;
	int rc;

	if (qp == NULL || wr == NULL)
		return -EINVAL;
	restore_drive(qp->ctx);
	if (qp->ctx->dead)
		return -EPIPE;
	if (qp->lost)
		return libsdr_qp_gone(qp);
	if (qp->nchan)
		return libsdr_chan_send(qp, wr, h);
	rc = mr_offset(qp->ctx, wr->mr, wr->addr, wr->offset, &off);
	if (rc)
		return rc;
	sqe_init(&sqe, qp, SDR_SQ_SEND, wr->mr, off, wr->length);
	sqe.imm = wr->imm;
	rc = send_check(qp, &sqe, wr->mr);
	if (rc)
		return rc;
	op = &qp->sh[qp->send_seq % SDR_HANDLES].op;
	rc = budget_check(qp->ctx, op);
	if (rc)
		return rc;
	return send_commit(qp, op, &sqe, wr->wr_id, 0, h, wr->mr);
}

int sdr_send_stream_start(struct sdr_qp *qp, const struct sdr_stream_start_wr *wr,
			  struct sdr_send_handle **h)
{
	struct sdr_sqe sqe;
	struct sdr_op *op;
	int rc;

	if (qp == NULL || wr == NULL)
		return -EINVAL;
	restore_drive(qp->ctx);
	if (qp->ctx->dead)
		return -EPIPE;
	if (qp->lost)
		return libsdr_qp_gone(qp);
	if (qp->nchan)
		return fail(qp->ctx, -EOPNOTSUPP,
			    "no streams on a multi-channel QP (pieces in any order would"
			    " need a stripe map per piece)");
	/* a stream's data descriptors are not journaled */
	if (qp_journal(qp))
		return fail(qp->ctx, -EAGAIN, "no stream starts while the daemon restarts");
	sqe_init(&sqe, qp, SDR_SQ_STREAM_START, NULL, 0, wr->length);
	sqe.imm = wr->imm;
	rc = send_check(qp, &sqe, NULL);
	if (rc)
		return rc;
	op = &qp->sh[qp->send_seq % SDR_HANDLES].op;
	rc = budget_check(qp->ctx, op);
	if (rc)
		return rc;
	return send_commit(qp, op, &sqe, wr->wr_id, 1, h, NULL);
}

int sdr_send_stream_continue(struct sdr_send_handle *h, const struct sdr_stream_wr *wr)
{
	struct sdr_ctx *ctx;
	struct sdr_sqe sqe;
	struct sdr_op *op;
	struct sdr_qp *qp;
	uint64_t off;
	int rc;

	if (h == NULL || wr == NULL)
		return -EINVAL;
	op = &h->op;
	qp = op->qp;
	ctx = qp->ctx;
	restore_drive(ctx);
	if (ctx->dead)
		return -EPIPE;
	if (op->status == -ECONNABORTED)
		return fail(ctx, -ECONNABORTED, "stream aborted by a daemon restart");
	if (op->state != OP_PENDING || op->stream != 1)
		return fail(ctx, -EINVAL, "not an open stream");
	if (wr->msg_offset % qp->mtu)
		return fail(ctx, -EINVAL, "msg_offset not a multiple of the MTU");
	if (wr->length == 0 || wr->msg_offset > op->length ||
	    wr->length > op->length - wr->msg_offset)
		return fail(ctx, -EMSGSIZE, "length 0 or past the end of the stream");
	if (wr->msg_offset + wr->length != op->length && wr->length % qp->mtu)
		return fail(ctx, -EINVAL,
			    "stream data must be whole packets unless it ends the message");
	rc = mr_offset(ctx, wr->mr, wr->addr, wr->offset, &off);
	if (rc)
		return rc;
	sqe_init(&sqe, qp, SDR_SQ_STREAM_DATA, wr->mr, off, wr->length);
	sqe.wr_id = cookie_make(qp->idx, 0, op->seq);
	sqe.seq = op->seq;
	sqe.msg_offset = wr->msg_offset;
	rc = desc_check(qp, &sqe, wr->mr);
	if (rc)
		return rc;
	return sq_post(ctx, &sqe);
}

int sdr_send_stream_end(struct sdr_send_handle *h)
{
	struct sdr_ctx *ctx;
	struct sdr_sqe sqe;
	struct sdr_op *op;
	int rc;

	if (h == NULL)
		return -EINVAL;
	op = &h->op;
	ctx = op->qp->ctx;
	restore_drive(ctx);
	if (ctx->dead)
		return -EPIPE;
	if (op->status == -ECONNABORTED)
		return fail(ctx, -ECONNABORTED, "stream aborted by a daemon restart");
	if (op->state != OP_PENDING || op->stream != 1)
		return fail(ctx, -EINVAL, "not an open stream");
	sqe_init(&sqe, op->qp, SDR_SQ_STREAM_END, NULL, 0, 0);
	sqe.wr_id = cookie_make(op->qp->idx, 0, op->seq);
	sqe.seq = op->seq;
	rc = desc_check(op->qp, &sqe, NULL);
	if (rc == 0)
		rc = sq_post(ctx, &sqe);
	if (rc == 0)
		op->stream = 2;
	return rc;
}

int sdr_send_poll(struct sdr_send_handle *h)
{
	return h ? libsdr_op_poll(&h->op) : -EINVAL;
}

uint32_t sdr_send_seq(const struct sdr_send_handle *h)
{
	return h ? h->op.seq : 0;
}
