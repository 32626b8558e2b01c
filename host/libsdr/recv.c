/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libsdr's receives (host library layer): post a receive into a slot of the
 * QP segment, read its chunk bitmap and immediate while it lands, ask for
 * early completion (RECV_COMPLETE), poll it; the plain-words last error of
 * one that completed partial or in error. While the daemon restarts
 * (restore.c), receives go to the journal only.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "sdr_bitmap.h"
#include "sdr_diag.h"
#include "sdr_priv.h"
#include "sdr_wire.h" /* sdr_format_ipv4 */

/* CLOCK_MONOTONIC in ns (vDSO: no system call on the data path) */
static inline uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline uint64_t *slot_bitmap(const struct sdr_qp *qp, uint32_t seq)
{
	return qp->bitmaps + (size_t)(seq % SDR_HANDLES) * qp->bitmap_words;
}

int sdr_recv_post(struct sdr_qp *qp, const struct sdr_recv_wr *wr, struct sdr_recv_handle **h)
{
	struct sdr_qseg_slot *slot;
	struct sdr_ctx *ctx;
	struct sdr_sqe sqe;
	struct sdr_op *op;
	uint64_t off, *bm;
	uint32_t seq;
	int rc, journal;

	if (qp == NULL || wr == NULL)
		return -EINVAL;
	ctx = qp->ctx;
	restore_drive(ctx);
	if (ctx->dead)
		return -EPIPE;
	if (qp->lost)
		return libsdr_qp_gone(qp);
	if (qp->nchan)
		return libsdr_chan_recv(qp, wr, h);
	if (wr->reserved)
		return fail(ctx, -EINVAL, "reserved field not 0");
	rc = mr_offset(ctx, wr->mr, wr->addr, wr->offset, &off);
	if (rc)
		return rc;
	sqe_init(&sqe, qp, SDR_SQ_RECV, wr->mr, off, wr->length);
	rc = desc_check(qp, &sqe, wr->mr);
	if (rc)
		return rc;
	seq = qp->recv_seq;
	op = &qp->rh[seq % SDR_HANDLES].op;
	rc = budget_check(ctx, op);
	if (rc)
		return rc;
	/* The slot's previous receive is complete, so the DPU no longer writes
	 * there; the SQ producer's release store publishes these zeroes before
	 * the DPU sees the RECV. */
	slot = &qp->slots[seq % SDR_HANDLES];
	bm = slot_bitmap(qp, seq);
	for (uint32_t w = 0; w < qp->bitmap_words; w++)
		atomic_store_explicit((_Atomic uint64_t *)&bm[w], 0, memory_order_relaxed);
	atomic_store_explicit(&slot->chunks_set, 0, memory_order_relaxed);
	atomic_store_explicit(&slot->imm_mask, 0, memory_order_relaxed);
	atomic_store_explicit(&slot->imm, 0, memory_order_relaxed);
	atomic_store_explicit(&slot->seq, seq, memory_order_relaxed);

	sqe.wr_id = cookie_make(qp->idx, 1, seq);
	journal = qp_journal(qp);
	if (!journal) {
		rc = sq_post(ctx, &sqe);
		if (rc)
			return rc;
	}
	op_arm(op, seq, wr->length, wr->wr_id);
	op->mr = wr->mr;
	op->off = off;
	op->posted = !journal;
	qp->rh[seq % SDR_HANDLES].posted_ns = mono_ns();
	qp->recv_seq++;
	ctx->outstanding++;
	if (h)
		*h = (struct sdr_recv_handle *)op;
	return 0;
}

static inline uint32_t recv_nchunks(const struct sdr_op *op)
{
	uint32_t cb = op->qp->chunk_bytes;

	return (uint32_t)(((uint64_t)op->length + cb - 1) / cb);
}

int sdr_recv_bitmap_get(const struct sdr_recv_handle *h, const uint64_t **bitmap, size_t *nchunks)
{
	if (h == NULL || bitmap == NULL || nchunks == NULL || h->op.state == OP_FREE)
		return -EINVAL;
	if (h->op.qp->nchan)
		return libsdr_chan_bitmap(h, bitmap, nchunks);
	*bitmap = slot_bitmap(h->op.qp, h->op.seq);
	*nchunks = recv_nchunks(&h->op);
	return 0;
}

int sdr_recv_chunks_done(const struct sdr_recv_handle *h)
{
	const uint64_t *bm;
	uint32_t n, c = 0;

	if (h == NULL || h->op.state == OP_FREE)
		return -EINVAL;
	if (h->op.qp->nchan)
		return libsdr_chan_chunks_done(h);
	bm = slot_bitmap(h->op.qp, h->op.seq);
	n = recv_nchunks(&h->op);
	for (uint32_t w = 0; w < SDR_BITMAP_WORDS(n); w++) {
		uint64_t v = sdr_bitmap_load_shared(bm, w);

		if (w == n / 64)
			v &= (UINT64_C(1) << (n % 64)) - 1;
		c += (uint32_t)__builtin_popcountll(v);
	}
	return (int)c;
}

uint32_t sdr_recv_chunk_bytes(const struct sdr_recv_handle *h)
{
	return h ? h->op.qp->chunk_bytes : 0;
}

int sdr_recv_imm_get(const struct sdr_recv_handle *h, uint32_t *imm)
{
	const struct sdr_qseg_slot *slot;

	if (h == NULL || imm == NULL || h->op.state == OP_FREE)
		return -EINVAL;
	if (h->op.qp->nchan && !(h->op.state == OP_DONE && (h->op.cflags & SDR_CQE_F_IMM)))
		return libsdr_chan_imm_get(h, imm);
	if (h->op.state == OP_DONE && (h->op.cflags & SDR_CQE_F_IMM)) {
		*imm = h->op.cimm;
		return 0;
	}
	slot = &h->op.qp->slots[h->op.seq % SDR_HANDLES];
	if ((atomic_load_explicit(&slot->imm_mask, memory_order_acquire) & 0xFF) != 0xFF ||
	    atomic_load_explicit(&slot->seq, memory_order_relaxed) != h->op.seq)
		return -EAGAIN;
	*imm = atomic_load_explicit(&slot->imm, memory_order_relaxed);
	return 0;
}

int sdr_recv_complete(struct sdr_recv_handle *h)
{
	struct sdr_ctx *ctx;
	struct sdr_sqe sqe;
	struct sdr_op *op;
	int rc;

	if (h == NULL || h->op.state == OP_FREE)
		return -EINVAL;
	op = &h->op;
	if (op->qp->nchan)
		return libsdr_chan_recv_complete(h);
	ctx = op->qp->ctx;
	restore_drive(ctx);
	if (ctx->dead)
		return -EPIPE;
	if (op->state == OP_PENDING)
		libsdr_progress(ctx);
	if (op->state != OP_PENDING || op->complete_req)
		return -EALREADY;
	if (!op->posted) { /* journal only: restore.c posts it after the receive */
		op->complete_req = 1;
		return 0;
	}
	sqe_init(&sqe, op->qp, SDR_SQ_RECV_COMPLETE, NULL, 0, 0);
	sqe.wr_id = cookie_make(op->qp->idx, 1, op->seq);
	sqe.seq = op->seq;
	rc = desc_check(op->qp, &sqe, NULL);
	if (rc == 0)
		rc = sq_post(ctx, &sqe);
	if (rc == 0)
		op->complete_req = 1;
	return rc;
}

int sdr_recv_poll(struct sdr_recv_handle *h)
{
	return h ? libsdr_op_poll(&h->op) : -EINVAL;
}

uint32_t sdr_recv_seq(const struct sdr_recv_handle *h)
{
	return h ? h->op.seq : 0;
}

/* The receive's state in the words of the daemon's /ops page and the tools
 * (sdr_diag_recv_text()), behind the completion's status if it is an error:
 * "timed out: recv #12 posted 2.3 s ago, 17 of 64 chunks, missing 18-63, ..." */
void libsdr_recv_err(struct sdr_op *op)
{
	const struct sdr_recv_handle *h = (const struct sdr_recv_handle *)op;
	struct sdr_qp *qp = op->qp;
	struct sdr_ctx *ctx = qp->ctx;
	char peer[16] = "";
	int n = 0;
	struct sdr_diag_recv d = {
		.seq = op->seq,
		.posted_ago = (double)(mono_ns() - h->posted_ns) * 1e-9,
		.chunks_got = (uint32_t)sdr_recv_chunks_done(h),
		.chunks = recv_nchunks(op),
		.chunk_bm = slot_bitmap(qp, op->seq),
		.peer = peer,
		.last_pkt_ago = -1, /* the DPU knows, libsdr does not */
		.no_rel = qp->local.reliability == SDR_REL_NONE,
	};

	if (qp->connected)
		sdr_format_ipv4(qp->remote.ip, peer);
	if (op->status == -ECONNABORTED && qp->lost)
		n = snprintf(ctx->errmsg, sizeof(ctx->errmsg),
			     "aborted: its QP was not restored after the daemon restarted: %s; ",
			     qp->lost_why);
	else if (op->status)
		n = snprintf(ctx->errmsg, sizeof(ctx->errmsg), "%s: ", sdr_strerror(op->status));
	if (n >= 0 && (size_t)n < sizeof(ctx->errmsg))
		sdr_diag_recv_text(ctx->errmsg + n, sizeof(ctx->errmsg) - (size_t)n, &d);
	ctx->err_static = NULL;
}
