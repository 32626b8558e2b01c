/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libsdr's completions (host library layer): drain the CQ ring into handle
 * state and the context's completion queue, matching each CQE to its
 * operation by libsdr's wr_id cookie; sdr_cq_poll and the handles' poll.
 */
#include <poll.h>
#include <string.h>

#include "sdr_priv.h"

/* Make room in the completion queue by dropping entries already reaped
 * through their handle. */
static void wcq_compact(struct sdr_ctx *ctx)
{
	uint32_t w = ctx->wcq_head;

	for (uint32_t r = ctx->wcq_head; r != ctx->wcq_tail; r++) {
		struct wcq_ent *e = &ctx->wcq[r % ctx->wcq_cap];

		if (e->dead || (e->op && e->op->reaped))
			continue;
		if (w != r)
			ctx->wcq[w % ctx->wcq_cap] = *e;
		w++;
	}
	ctx->wcq_tail = w;
}

static struct sdr_op *cqe_match(struct sdr_ctx *ctx, const struct sdr_cqe *c)
{
	uint32_t qidx, seq;
	struct sdr_qp *qp;
	struct sdr_op *op;
	int is_recv;

	if (!(c->wr_id & COOKIE_MARK))
		return NULL;
	qidx = (uint32_t)(c->wr_id >> 48) & 0x7FFF;
	is_recv = (int)(c->wr_id >> 47) & 1;
	seq = (uint32_t)c->wr_id;
	if ((c->wr_id >> 32 & 0x7FFF) != 0 || qidx >= ctx->cap_qps ||
	    (qp = ctx->qps[qidx]) == NULL || c->qp_id != qp->qp_id)
		return NULL;
	op = is_recv ? &qp->rh[seq % SDR_HANDLES].op : &qp->sh[seq % SDR_HANDLES].op;
	if (op->seq != seq || op->state == OP_FREE)
		return NULL;
	return op;
}

/* Move one CQE into handle state and the completion queue. Returns 0, or
 * -1 when the queue has no room (leave the CQE in the ring). restore.c
 * completes operations a restart aborted through it too. */
int libsdr_cqe_process(struct sdr_ctx *ctx, const struct sdr_cqe *c)
{
	struct sdr_op *op = cqe_match(ctx, c);
	struct wcq_ent *e;
	int completes;

	/* one of our own cookies that no longer names an operation: the QP was
	 * destroyed (its pending completions are discarded, sdr.h) */
	if (!op && (c->wr_id & COOKIE_MARK)) {
		ctx->st.wc_orphaned++;
		return 0;
	}

	/* Exactly once across a daemon restart: a second completion of an
	 * operation already complete (the first came from the daemon before) */
	if (op && op->state == OP_DONE && op->qp->restores &&
	    c->opcode == (op->is_recv ? SDR_SQ_RECV : SDR_SQ_SEND) && c->seq == op->seq) {
		ctx->st.wc_duplicate++;
		return 0;
	}

	/* Completions of the operation itself (not of an auxiliary descriptor
	 * such as RECV_COMPLETE / STREAM_DATA, which only get error CQEs). */
	completes = op && op->state == OP_PENDING &&
		    c->opcode == (op->is_recv ? SDR_SQ_RECV : SDR_SQ_SEND) &&
		    (c->status != 0 || c->seq == op->seq);
	if (ctx->wcq_tail - ctx->wcq_head == ctx->wcq_cap)
		wcq_compact(ctx);
	if (ctx->wcq_tail - ctx->wcq_head == ctx->wcq_cap) {
		if (completes)
			return -1;
		ctx->st.wc_dropped++;
		return 0;
	}
	e = &ctx->wcq[ctx->wcq_tail++ % ctx->wcq_cap];
	e->dead = 0;
	e->op = completes ? op : NULL;
	e->wc.qp = op ? op->qp : NULL;
	e->wc.handle = op ? (void *)op : NULL; /* op is the handle's first member */
	e->wc.wr_id = op ? op->wr_id : c->wr_id;
	e->wc.seq = op ? op->seq : c->seq;
	e->wc.length = c->length;
	e->wc.imm = c->imm;
	e->wc.status = c->status;
	e->wc.opcode = c->opcode;
	e->wc.flags = c->flags;
	e->wc.reserved = 0;
	if (completes) {
		op->status = c->status;
		op->clen = c->length;
		op->cimm = c->imm;
		op->cflags = c->flags;
		op->opcode = c->opcode;
		op->stream = 0;
		op->state = OP_DONE;
	} else {
		ctx->st.cqe_unmatched++;
	}
	return 0;
}

static void probe_daemon(struct sdr_ctx *ctx)
{
	struct pollfd p = {.fd = ctx->sock, .events = POLLIN | POLLRDHUP};

	if (poll(&p, 1, 0) > 0 && (p.revents & (POLLHUP | POLLERR | POLLRDHUP | POLLNVAL)))
		libsdr_conn_lost(ctx);
}

/* Drain the CQ ring. Returns CQEs processed, or -EIO on a corrupt ring. */
int libsdr_progress(struct sdr_ctx *ctx)
{
	restore_drive(ctx);
	return libsdr_cq_drain(ctx);
}

int libsdr_cq_drain(struct sdr_ctx *ctx)
{
	int64_t avail = sdr_ring_avail_checked(&ctx->cq);
	int n = 0;

	if (avail < 0) {
		libsdr_set_err(ctx, "CQ ring index corrupt");
		libsdr_mark_dead(ctx);
		return -EIO;
	}
	while (avail-- > 0) {
		struct sdr_cqe c;

		memcpy(&c, sdr_ring_peek(&ctx->cq, 0), sizeof(c));
		if (libsdr_cqe_process(ctx, &c))
			break;
		sdr_ring_consume(&ctx->cq, 1);
		ctx->st.cqe_seen++;
		n++;
	}
	if (n == 0 && !ctx->dead && ctx->rstate != R_DOWN && ++ctx->idle % IDLE_PROBE_EVERY == 0)
		probe_daemon(ctx);
	return n;
}

/* Return @p op's completion to the user (once); a receive that completed
 * partial or in error leaves its plain-words state as the last error. */
static inline void reap(struct sdr_ctx *ctx, struct sdr_op *op)
{
	if (!op->reaped) {
		op->reaped = 1;
		ctx->outstanding--;
		if (op->is_recv && (op->status || (op->cflags & SDR_CQE_F_PARTIAL)))
			libsdr_recv_err(op);
	}
}

int sdr_cq_poll(struct sdr_ctx *ctx, struct sdr_wc *wc, int max)
{
	int n = 0, rc;

	if (ctx == NULL || max < 0 || (max > 0 && wc == NULL))
		return -EINVAL;
	rc = libsdr_progress(ctx);
	while (n < max && ctx->wcq_head != ctx->wcq_tail) {
		struct wcq_ent *e = &ctx->wcq[ctx->wcq_head++ % ctx->wcq_cap];

		if (e->dead || (e->op && e->op->reaped))
			continue;
		if (e->wc.qp && e->wc.qp->group)
			continue; /* a channel's: its group completes (below) */
		if (e->op)
			reap(ctx, e->op);
		wc[n++] = e->wc;
	}
	if (n < max && ctx->ngroups) /* multi-channel QPs, in posting order (chan.c) */
		n += libsdr_chan_cq_poll(ctx, wc + n, max - n);
	if (n == 0 && rc < 0)
		return rc;
	if (n == 0 && ctx->dead && ctx->wcq_head == ctx->wcq_tail)
		return -EPIPE;
	return n;
}

int libsdr_op_poll(struct sdr_op *op)
{
	struct sdr_ctx *ctx = op->qp->ctx;

	if (op->qp->nchan)
		return libsdr_chan_op_poll(op);
	if (op->state == OP_FREE)
		return -EINVAL;
	if (op->state == OP_PENDING) {
		int rc = libsdr_progress(ctx);

		if (op->state == OP_PENDING) {
			if (rc < 0)
				return rc;
			return ctx->dead ? -EPIPE : SDR_POLL_PENDING;
		}
	}
	reap(ctx, op);
	if (op->status)
		return op->status;
	if (op->is_recv && (op->cflags & SDR_CQE_F_PARTIAL))
		return SDR_POLL_PARTIAL;
	return SDR_POLL_DONE;
}
