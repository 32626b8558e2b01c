/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libsdr's multi-channel QPs (host library layer): a group of W child QPs,
 * child c on a channel context of its own that a DPU worker of its own
 * serves, each carrying the stripes of every message it owns
 * (common/sdr_stripe.h). A post is W child posts; a group operation
 * completes when its W children did, in posting order through sdr_cq_poll()
 * (docs/architecture.md "Channels", docs/host-api.md "Channels").
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sdr_bitmap.h"
#include "sdr_priv.h"

struct sdr_qp *libsdr_qp_create_chan(struct sdr_ctx *ctx, const struct sdr_qp_attr *attr,
				     uint8_t chan, uint8_t stripe);

/* ---------------- contexts, MRs ---------------- */

/* Channel context @p c (>= 1) of @p ctx, attached the first time with worker
 * (w0 + c) mod N. NULL with the reason in ctx's last error. */
static struct sdr_ctx *chan_ctx(struct sdr_ctx *ctx, unsigned c)
{
	unsigned nw = SDR_EXT_NWORKERS(ctx->ext), w0 = SDR_EXT_WORKER(ctx->ext);
	struct sdr_ctx_attr a;

	if (c == 0)
		return ctx;
	if (ctx->chctx[c])
		return ctx->chctx[c];
	memset(&a, 0, sizeof(a));
	a.ctl_timeout_ms = ctx->ctl_timeout_ms;
	a.reattach_ms = ctx->reattach_ms;
	ctx->chctx[c] = libsdr_ctx_attach(ctx->path, &a, (w0 + c) % nw + 1);
	if (!ctx->chctx[c]) {
		libsdr_set_err(ctx, "cannot attach channel context %u: %s", c,
			       sdr_last_error(NULL));
		return NULL;
	}
	if (SDR_EXT_WORKER(ctx->chctx[c]->ext) != (w0 + c) % nw) {
		libsdr_set_err(ctx, "channel context %u got worker %u, not %u", c,
			       SDR_EXT_WORKER(ctx->chctx[c]->ext), (w0 + c) % nw);
		sdr_ctx_close(ctx->chctx[c]);
		ctx->chctx[c] = NULL;
		return NULL;
	}
	return ctx->chctx[c];
}

void libsdr_chan_ctx_close(struct sdr_ctx *ctx)
{
	for (uint32_t i = 0; i < ctx->ngroups; i++) {
		free(ctx->groups[i]->merged);
		free(ctx->groups[i]);
	}
	free(ctx->groups);
	ctx->groups = NULL;
	ctx->ngroups = 0;
	for (unsigned c = 1; c < SDR_CHANNELS_MAX; c++)
		if (ctx->chctx[c]) {
			sdr_ctx_close(ctx->chctx[c]);
			ctx->chctx[c] = NULL;
		}
}

/* The MR of child @p c's context that covers what @p mr covers (registered
 * there the first time: a control call). */
static struct sdr_mr *chan_mr(struct sdr_qp *g, unsigned c, struct sdr_mr *mr)
{
	struct sdr_ctx *cc = g->child[c]->ctx;

	if (c == 0 || mr == NULL)
		return mr;
	if (mr->chmr[c] && mr->chmr[c]->valid)
		return mr->chmr[c];
	if (!mr->valid)
		return NULL;
	mr->chmr[c] = sdr_mr_reg_fd(cc, mr->fd, mr->fd_off, mr->len, mr->addr);
	if (!mr->chmr[c])
		libsdr_set_err(g->ctx, "cannot register the MR on channel context %u: %s", c,
			       sdr_last_error(cc));
	return mr->chmr[c];
}

/* ---------------- short messages ----------------
 *
 * A message of L <= (W - 1) * S bytes leaves channel c without a byte where
 * sdr_stripe_owned(L, W, c, S) is 0, and the firmware has no message of 0
 * bytes (docs/architecture.md "Channels", "Short messages"). Such a channel
 * carries a one-byte **filler** instead, with the immediate FILL_IMM(imm),
 * never the message's own: that is how the receiver tells a filler from a
 * byte of the message (child 0 always carries a byte of it, so its
 * immediate is the message's). A filler's byte comes from, and a receive of
 * a channel that the posted length leaves without a byte goes to, the
 * group's **fill region**: a sealed memfd of (W - 1) * S + 1 bytes (a
 * channel's first byte lies at c * S), registered on each child's context,
 * never mapped here (its pages stay holes but W - 1). A receive that does
 * give channel c a byte cannot know whether a filler will come instead: a
 * filler writes the byte at c * S of the buffer, past the message, so the
 * post keeps that byte and the completion puts it back (an MR registered
 * without an address leaves it written). */
#define FILL_IMM(imm) ((imm) == 0 ? 1u : 0u)

static struct sdr_mr *fill_mr(struct sdr_qp *g, unsigned c)
{
	if (!g->fill) {
		long pg = sysconf(_SC_PAGESIZE);
		uint64_t len = (uint64_t)(g->nchan - 1) * g->stripe.s + 1;
		uint64_t alen = (len + (uint64_t)pg - 1) & ~((uint64_t)pg - 1);
		int fd = memfd_create("sdr-fill", MFD_CLOEXEC | MFD_ALLOW_SEALING);

		if (fd < 0 || ftruncate(fd, (off_t)alen) < 0 ||
		    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) < 0) {
			libsdr_set_err(g->ctx, "the fill region of short messages: %s",
				       strerror(errno));
			if (fd >= 0)
				close(fd);
			return NULL;
		}
		g->fill = sdr_mr_reg_fd(g->ctx, fd, 0, alen, NULL); /* (keeps its own fd) */
		close(fd);
		if (!g->fill)
			return NULL;
	}
	return chan_mr(g, c, g->fill);
}

/* Channel @p c (>= 1) of a done group operation @p gop carried a filler:
 * a byte whose immediate, known, is not child 0's. */
static int child_filler(const struct sdr_qp *g, const struct sdr_op *gop, unsigned c);

int libsdr_chan_mr_dereg(struct sdr_mr *mr)
{
	int rc = 0;

	for (unsigned c = 1; c < SDR_CHANNELS_MAX; c++)
		if (mr->chmr[c]) {
			if (mr->chmr[c]->valid) {
				int r = sdr_mr_dereg(mr->chmr[c]);
				if (r && !rc)
					rc = r;
			}
			mr->chmr[c] = NULL;
		}
	return rc;
}

/* ---------------- create, connect, destroy ---------------- */

static int group_add(struct sdr_ctx *ctx, struct sdr_qp *g)
{
	if (ctx->ngroups == ctx->cap_groups) {
		uint32_t cap = ctx->cap_groups ? 2 * ctx->cap_groups : 4;
		struct sdr_qp **n = realloc(ctx->groups, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		ctx->groups = n;
		ctx->cap_groups = cap;
	}
	ctx->groups[ctx->ngroups++] = g;
	return 0;
}

/* A channel's rate when its QP of @p w channels has @p rate_bps (0: none). */
static uint64_t chan_rate(uint64_t rate_bps, unsigned w)
{
	uint64_t per = rate_bps ? rate_bps / w : 0;

	return rate_bps && per < SDR_QP_RATE_MIN ? SDR_QP_RATE_MIN : per;
}

struct sdr_qp *sdr_qp_create_ext(struct sdr_ctx *ctx, const struct sdr_qp_attr_ext *x)
{
	struct sdr_qp_attr ca;
	unsigned w, nw;
	struct sdr_qp *g;
	int e;

	if (ctx == NULL || x == NULL) {
		errno = EINVAL;
		return NULL;
	}
	if (x->size < sizeof(*x) || x->reserved || x->channels > SDR_CHANNELS_MAX ||
	    x->stripe_chunks > 255) {
		libsdr_set_err(ctx,
			       "bad sdr_qp_attr_ext: size %u (>= %zu), reserved 0, channels"
			       " %u (0..%u), stripe_chunks %u (0..255)",
			       x->size, sizeof(*x), x->channels, SDR_CHANNELS_MAX,
			       x->stripe_chunks);
		errno = EINVAL;
		return NULL;
	}
	if (!(ctx->ext & SDR_EXT_VALID)) {
		if (x->channels > 1) {
			libsdr_set_err(ctx, "the daemon does not know channels (it is older than"
					    " libsdr 2.3): channels 1 only");
			errno = ENOTSUP;
			return NULL;
		}
		return sdr_qp_create(ctx, &x->attr);
	}
	w = x->channels ? x->channels : SDR_EXT_CHANNELS(ctx->ext);
	nw = SDR_EXT_NWORKERS(ctx->ext);
	if (w <= 1)
		return sdr_qp_create(ctx, &x->attr);
	if (w > SDR_CHANNELS_MAX) {
		libsdr_set_err(ctx, "channels %u above %u", w, SDR_CHANNELS_MAX);
		errno = EINVAL;
		return NULL;
	}
	if (w > nw) {
		libsdr_set_err(ctx,
			       "channels %u: the daemon has %u workers (each channel needs a"
			       " worker of its own; start it with --workers %u or more)",
			       w, nw, w);
		errno = ENOTSUP;
		return NULL;
	}
	g = calloc(1, sizeof(*g));
	if (!g)
		return NULL;
	g->ctx = ctx;
	g->nchan = (uint8_t)w;
	g->seg_fd = -1;
	/* the QP's rate shared by its channels (as libsdr_chan_rate_set()) */
	ca = x->attr;
	ca.rate_bps = chan_rate(x->attr.rate_bps, w);
	for (unsigned c = 0; c < w; c++) {
		struct sdr_ctx *cc = chan_ctx(ctx, c);
		struct sdr_qp *q;

		if (!cc) {
			e = EIO;
			goto fail;
		}
		q = libsdr_qp_create_chan(cc, &ca, SDR_CHAN(w, c), (uint8_t)x->stripe_chunks);
		if (!q) {
			e = errno;
			if (cc != ctx)
				libsdr_set_err(ctx, "channel %u: %s", c, sdr_last_error(cc));
			goto fail;
		}
		q->group = g;
		g->child[c] = q;
	}
	g->local = g->child[0]->local;
	g->chunk_bytes = g->child[0]->chunk_bytes;
	g->stripe = g->child[0]->stripe;
	g->merged_words = (uint32_t)SDR_BITMAP_WORDS(
		((uint64_t)g->local.max_msg + g->chunk_bytes - 1) / g->chunk_bytes);
	for (uint32_t i = 0; i < SDR_HANDLES; i++) {
		g->sh[i].op.qp = g;
		g->rh[i].op.qp = g;
		g->rh[i].op.is_recv = 1;
	}
	if (group_add(ctx, g)) {
		e = ENOMEM;
		goto fail;
	}
	return g;
fail:
	for (unsigned c = 0; c < w; c++)
		if (g->child[c])
			sdr_qp_destroy(g->child[c]);
	free(g);
	errno = e;
	return NULL;
}

int sdr_qp_channels(const struct sdr_qp *qp)
{
	if (qp == NULL)
		return -EINVAL;
	return qp->nchan ? qp->nchan : 1;
}

int sdr_qp_infos_get(const struct sdr_qp *qp, struct sdr_qp_info *infos, unsigned n)
{
	if (qp == NULL || infos == NULL || n != (unsigned)sdr_qp_channels(qp)) {
		if (qp)
			libsdr_set_err(qp->ctx, "the QP has %d channels, %u infos asked for",
				       sdr_qp_channels(qp), n);
		return -EINVAL;
	}
	if (!qp->nchan)
		return sdr_qp_info_get(qp, infos);
	for (unsigned c = 0; c < n; c++)
		infos[c] = qp->child[c]->local;
	return 0;
}

int sdr_qp_connect_infos(struct sdr_qp *qp, const struct sdr_qp_info *infos, unsigned n)
{
	int rc;

	if (qp == NULL || infos == NULL)
		return -EINVAL;
	if (n != (unsigned)sdr_qp_channels(qp)) {
		libsdr_set_err(qp->ctx,
			       "the QP has %d channels and %u peer infos were given: both ends"
			       " need the same channels",
			       sdr_qp_channels(qp), n);
		return -EINVAL;
	}
	if (!qp->nchan)
		return sdr_qp_connect(qp, infos);
	if (qp->connected)
		return -EISCONN;
	for (unsigned c = 0; c < n; c++) {
		if (qp->child[c]->connected)
			continue;
		rc = sdr_qp_connect(qp->child[c], &infos[c]);
		if (rc) {
			if (qp->child[c]->ctx != qp->ctx)
				libsdr_set_err(qp->ctx, "channel %u: %s", c,
					       sdr_last_error(qp->child[c]->ctx));
			return rc;
		}
	}
	qp->connected = 1;
	qp->remote = infos[0];
	qp->max_send = qp->child[0]->max_send;
	qp->mtu = qp->child[0]->mtu;
	return 0;
}

int libsdr_chan_destroy(struct sdr_qp *g)
{
	struct sdr_ctx *ctx = g->ctx;
	int rc = 0;

	for (unsigned c = 0; c < g->nchan; c++) {
		int r = sdr_qp_destroy(g->child[c]);
		if (r && !rc)
			rc = r;
	}
	if (g->fill && g->fill->valid) {
		int r = sdr_mr_dereg(g->fill);
		if (r && !rc)
			rc = r;
	}
	for (uint32_t i = 0; i < ctx->ngroups; i++)
		if (ctx->groups[i] == g) {
			ctx->groups[i] = ctx->groups[--ctx->ngroups];
			break;
		}
	free(g->merged);
	free(g);
	return rc;
}

int libsdr_chan_rate_set(struct sdr_qp *g, uint64_t rate_bps)
{
	/* the QP's rate shared by its channels */
	uint64_t per = chan_rate(rate_bps, g->nchan);

	for (unsigned c = 0; c < g->nchan; c++) {
		int rc = sdr_qp_rate_set(g->child[c], per);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---------------- posts ---------------- */

static inline struct sdr_op *child_op(const struct sdr_qp *g, unsigned c, const struct sdr_op *op)
{
	struct sdr_qp *q = g->child[c];

	return op->is_recv ? &q->rh[op->seq % SDR_HANDLES].op : &q->sh[op->seq % SDR_HANDLES].op;
}

/* What every group post checks before its first child post (the caller
 * found the group connected): its handle free; each child in step, alive,
 * its handle free and its SQ with room, with a byte of the message; then
 * each child's descriptor as the DPU will check it, with the MR each child
 * sees in @p mrs. */
static int group_precheck(struct sdr_qp *g, uint32_t len, int is_recv, const struct sdr_op *gop,
			  struct sdr_mr *mr, uint64_t off, struct sdr_mr **mrs)
{
	struct sdr_ctx *ctx = g->ctx;
	uint32_t seq = is_recv ? g->recv_seq : g->send_seq;

	if (gop->state == OP_PENDING || (gop->state == OP_DONE && !gop->reaped))
		return fail(ctx, -EAGAIN, "handle of message n-1024 not completed and reaped");
	for (unsigned c = 0; c < g->nchan; c++) {
		struct sdr_qp *q = g->child[c];
		struct sdr_op *o = is_recv ? &q->rh[seq % SDR_HANDLES].op
					   : &q->sh[seq % SDR_HANDLES].op;
		int rc;

		if ((is_recv ? q->recv_seq : q->send_seq) != seq)
			return fail(ctx, -EIO, "channels out of step (a child post failed)");
		if (q->ctx->dead)
			return -EPIPE;
		if (q->lost)
			return libsdr_qp_gone(q);
		if (qp_journal(q))
			return fail(ctx, -EAGAIN, "a channel context re-attaches");
		rc = budget_check(q->ctx, o);
		if (rc) {
			ctx->err_static = q->ctx->err_static;
			return rc;
		}
	}
	for (unsigned c = 0; c < g->nchan; c++) {
		struct sdr_qp *q = g->child[c];
		struct sdr_sqe sqe;
		int rc;

		uint32_t own = (uint32_t)sdr_stripe_owned(len, g->nchan, c, g->stripe.s);

		mrs[c] = own ? chan_mr(g, c, mr) : fill_mr(g, c);
		if (!mrs[c])
			return own ? -ENOENT : -ENOMEM;
		sqe_init(&sqe, q, is_recv ? SDR_SQ_RECV : SDR_SQ_SEND, mrs[c], own ? off : 0,
			 own ? own : 1);
		rc = desc_check(q, &sqe, mrs[c]);
		if (rc) {
			ctx->err_static = q->ctx->err_static;
			return rc;
		}
	}
	return 0;
}

int libsdr_chan_send(struct sdr_qp *g, const struct sdr_send_wr *wr, struct sdr_send_handle **h)
{
	struct sdr_op *gop = &g->sh[g->send_seq % SDR_HANDLES].op;
	struct sdr_mr *mrs[SDR_CHANNELS_MAX];
	uint64_t off;
	int rc;

	if (!g->connected)
		return fail(g->ctx, -ENOTCONN, "QP not connected");
	rc = mr_offset(g->ctx, wr->mr, wr->addr, wr->offset, &off);
	if (rc)
		return rc;
	if (wr->length == 0 || wr->length > g->max_send)
		return fail(g->ctx, -EMSGSIZE, "length 0 or above the peer's max_msg");
	rc = group_precheck(g, wr->length, 0, gop, wr->mr, off, mrs);
	if (rc)
		return rc;
	uint8_t fill = 0;

	for (unsigned c = 0; c < g->nchan; c++) {
		uint32_t own = (uint32_t)sdr_stripe_owned(wr->length, g->nchan, c, g->stripe.s);
		struct sdr_send_wr cw = {
			.mr = mrs[c],
			.offset = own ? off : 0,
			.length = own ? own : 1,
			.imm = own ? wr->imm : FILL_IMM(wr->imm),
			.wr_id = wr->wr_id,
		};

		if (!own)
			fill |= (uint8_t)(1u << c);
		rc = sdr_send_post(g->child[c], &cw, NULL);
		if (rc) /* (cannot happen after the checks: the group is out of step) */
			return fail(g->ctx, -EIO, "a channel refused a send the checks passed");
	}
	op_arm(gop, g->send_seq++, wr->length, wr->wr_id);
	gop->fill = fill;
	gop->mr = wr->mr;
	gop->off = off;
	gop->imm = wr->imm;
	gop->posted = 1;
	if (h)
		*h = (struct sdr_send_handle *)gop;
	return 0;
}

int libsdr_chan_recv(struct sdr_qp *g, const struct sdr_recv_wr *wr, struct sdr_recv_handle **h)
{
	struct sdr_op *gop = &g->rh[g->recv_seq % SDR_HANDLES].op;
	struct sdr_mr *mrs[SDR_CHANNELS_MAX];
	uint64_t off;
	int rc;

	if (wr->reserved)
		return fail(g->ctx, -EINVAL, "reserved field not 0");
	if (!g->connected)
		return fail(g->ctx, -ENOTCONN, "QP not connected");
	rc = mr_offset(g->ctx, wr->mr, wr->addr, wr->offset, &off);
	if (rc)
		return rc;
	if (wr->length == 0 || wr->length > g->local.max_msg)
		return fail(g->ctx, -EMSGSIZE, "length 0 or above max_msg");
	rc = group_precheck(g, wr->length, 1, gop, wr->mr, off, mrs);
	if (rc)
		return rc;
	uint8_t fill = 0, saved_mask = 0, saved[SDR_CHANNELS_MAX] = {0};

	for (unsigned c = 0; c < g->nchan; c++) {
		uint32_t own = (uint32_t)sdr_stripe_owned(wr->length, g->nchan, c, g->stripe.s);
		struct sdr_recv_wr cw = {
			.mr = mrs[c],
			.offset = own ? off : 0,
			.length = own ? own : 1,
			.wr_id = wr->wr_id,
		};

		if (!own) {
			fill |= (uint8_t)(1u << c);
		} else if (c && wr->mr->addr) { /* the byte a filler would overwrite */
			saved[c] = wr->mr->addr[off + sdr_stripe_real(&g->child[c]->stripe, 0)];
			saved_mask |= (uint8_t)(1u << c);
		}
		rc = sdr_recv_post(g->child[c], &cw, NULL);
		if (rc)
			return fail(g->ctx, -EIO, "a channel refused a receive the checks passed");
	}
	op_arm(gop, g->recv_seq++, wr->length, wr->wr_id);
	gop->fill = fill;
	gop->saved_mask = saved_mask;
	memcpy(gop->saved, saved, sizeof(saved));
	gop->mr = wr->mr;
	gop->off = off;
	gop->posted = 1;
	g->rh[gop->seq % SDR_HANDLES].posted_ns = g->child[0]->rh[gop->seq % SDR_HANDLES].posted_ns;
	if (h)
		*h = (struct sdr_recv_handle *)gop;
	return 0;
}

/* ---------------- completion ---------------- */

/* Drive every context of @p g's children (their CQ rings into their
 * handles); the entries of the channel contexts' own queues are theirs only
 * (the handles keep the state): drop them. */
static int group_progress(struct sdr_ctx *ctx)
{
	int rc = libsdr_progress(ctx);

	for (unsigned c = 1; c < SDR_CHANNELS_MAX; c++) {
		struct sdr_ctx *cc = ctx->chctx[c];
		int r;

		if (!cc)
			continue;
		r = libsdr_progress(cc);
		cc->wcq_head = cc->wcq_tail;
		if (r < 0 && rc >= 0)
			rc = r;
	}
	return rc;
}

static int child_filler(const struct sdr_qp *g, const struct sdr_op *gop, unsigned c)
{
	const struct sdr_op *o = child_op(g, c, gop), *o0 = child_op(g, 0, gop);
	const uint8_t known = SDR_CQE_F_IMM | SDR_CQE_F_IMM_PARTIAL;

	return o->state == OP_DONE && o0->state == OP_DONE && !o->status && o->clen == 1 &&
	       (o->cflags & known) == SDR_CQE_F_IMM && (o0->cflags & known) == SDR_CQE_F_IMM &&
	       o->cimm != o0->cimm;
}

/* All W children of @p gop complete: the group operation completes with
 * their sum (length), child 0's immediate, the first error and any child's
 * PARTIAL. @return 1 if it is complete. */
static int group_settle(struct sdr_op *gop)
{
	struct sdr_qp *g = gop->qp;
	uint32_t len = 0;
	int32_t status = 0;
	uint8_t fl = 0;

	if (gop->state != OP_PENDING)
		return gop->state == OP_DONE;
	for (unsigned c = 0; c < g->nchan; c++)
		if (child_op(g, c, gop)->state != OP_DONE)
			return 0;
	for (unsigned c = 0; c < g->nchan; c++) {
		const struct sdr_op *o = child_op(g, c, gop);
		int filler = c && (gop->is_recv ? child_filler(g, gop, c) : (gop->fill >> c) & 1);

		if (gop->is_recv && filler && ((gop->saved_mask >> c) & 1))
			gop->mr->addr[gop->off + sdr_stripe_real(&g->child[c]->stripe, 0)] =
				gop->saved[c];
		if (!filler)
			len += o->clen;
		if (o->status && !status)
			status = o->status;
		else if (!status && !filler && gop->is_recv && ((gop->fill >> c) & 1)) {
			/* bytes of the message where the receive had none */
			status = -EMSGSIZE;
			libsdr_set_err(g->ctx,
				       "channel %u carried bytes of a message longer than the"
				       " receive (%u bytes): they went to the fill region",
				       c, gop->length);
		}
		fl |= o->cflags & SDR_CQE_F_PARTIAL;
	}
	fl |= child_op(g, 0, gop)->cflags & (SDR_CQE_F_IMM | SDR_CQE_F_IMM_PARTIAL);
	gop->status = status;
	gop->clen = len;
	gop->cimm = child_op(g, 0, gop)->cimm;
	gop->cflags = fl;
	gop->opcode = gop->is_recv ? SDR_SQ_RECV : SDR_SQ_SEND;
	gop->state = OP_DONE;
	return 1;
}

static void group_reap(struct sdr_op *gop)
{
	struct sdr_qp *g = gop->qp;

	if (gop->reaped)
		return;
	gop->reaped = 1;
	for (unsigned c = 0; c < g->nchan; c++) {
		struct sdr_op *o = child_op(g, c, gop);

		if (!o->reaped) {
			o->reaped = 1;
			o->qp->ctx->outstanding--;
		}
	}
	if (gop->is_recv && (gop->status || (gop->cflags & SDR_CQE_F_PARTIAL)))
		for (unsigned c = 0; c < g->nchan; c++) {
			struct sdr_op *o = child_op(g, c, gop);

			if (o->status || (o->cflags & SDR_CQE_F_PARTIAL)) {
				libsdr_recv_err(o);
				if (o->qp->ctx != g->ctx) {
					snprintf(g->ctx->errmsg, sizeof(g->ctx->errmsg),
						 "channel %u: %s", c, sdr_last_error(o->qp->ctx));
					g->ctx->err_static = NULL;
				}
				break;
			}
		}
}

int libsdr_chan_op_poll(struct sdr_op *op)
{
	struct sdr_ctx *ctx = op->qp->ctx;

	if (op->state == OP_FREE)
		return -EINVAL;
	if (op->state == OP_PENDING && !group_settle(op)) {
		int rc = group_progress(ctx);

		if (!group_settle(op)) {
			if (rc < 0)
				return rc;
			return ctx->dead ? -EPIPE : SDR_POLL_PENDING;
		}
	}
	group_reap(op);
	if (op->status)
		return op->status;
	if (op->is_recv && (op->cflags & SDR_CQE_F_PARTIAL))
		return SDR_POLL_PARTIAL;
	return SDR_POLL_DONE;
}

static void wc_of(struct sdr_wc *wc, struct sdr_op *op)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = op->wr_id;
	wc->qp = op->qp;
	wc->handle = op;
	wc->seq = op->seq;
	wc->length = op->clen;
	wc->imm = op->cimm;
	wc->status = op->status;
	wc->opcode = (uint8_t)op->opcode;
	wc->flags = op->cflags;
}

/* One direction of @p g: its completions in posting order from *cur on. */
static int group_emit(struct sdr_qp *g, int is_recv, uint32_t *cur, uint32_t end, struct sdr_wc *wc,
		      int max)
{
	int n = 0;

	while (n < max && *cur != end) {
		struct sdr_op *op = is_recv ? &g->rh[*cur % SDR_HANDLES].op
					    : &g->sh[*cur % SDR_HANDLES].op;

		if (op->seq != *cur || op->state == OP_FREE) {
			(*cur)++;
			continue;
		}
		if (!op->reaped) {
			if (!group_settle(op))
				break; /* in posting order: a later one waits */
			group_reap(op);
			wc_of(&wc[n++], op);
		}
		(*cur)++;
	}
	return n;
}

int libsdr_chan_cq_poll(struct sdr_ctx *ctx, struct sdr_wc *wc, int max)
{
	int n = 0;

	if (!ctx->ngroups)
		return 0;
	group_progress(ctx);
	for (uint32_t i = 0; i < ctx->ngroups && n < max; i++) {
		struct sdr_qp *g = ctx->groups[i];

		n += group_emit(g, 0, &g->cq_send, g->send_seq, wc + n, max - n);
		n += group_emit(g, 1, &g->cq_recv, g->recv_seq, wc + n, max - n);
	}
	return n;
}

/* ---------------- receive state ---------------- */

int libsdr_chan_bitmap(const struct sdr_recv_handle *h, const uint64_t **bitmap, size_t *nchunks)
{
	struct sdr_qp *g = h->op.qp;
	uint32_t cb = g->chunk_bytes, n = (uint32_t)(((uint64_t)h->op.length + cb - 1) / cb);
	uint64_t *m;

	if (!g->merged) {
		g->merged = calloc((size_t)SDR_HANDLES * g->merged_words, sizeof(uint64_t));
		if (!g->merged)
			return -ENOMEM;
	}
	m = g->merged + (size_t)(h->op.seq % SDR_HANDLES) * g->merged_words;
	memset(m, 0, (size_t)g->merged_words * sizeof(uint64_t));
	for (unsigned c = 0; c < g->nchan; c++) {
		const struct sdr_recv_handle *ch = (const struct sdr_recv_handle *)child_op(g, c,
											    &h->op);
		const uint64_t *cbm;
		size_t cn;

		if (((h->op.fill >> c) & 1) || (c && child_filler(g, &h->op, c)) ||
		    sdr_recv_bitmap_get(ch, &cbm, &cn))
			continue;
		for (size_t v = 0; v < cn; v++)
			if (sdr_bitmap_load_shared(cbm, (uint32_t)(v / 64)) >> (v % 64) & 1) {
				uint64_t r = sdr_stripe_real(&g->child[c]->stripe, v * cb) / cb;

				if (r < n)
					m[r / 64] |= UINT64_C(1) << (r % 64);
			}
	}
	*bitmap = m;
	*nchunks = n;
	return 0;
}

int libsdr_chan_chunks_done(const struct sdr_recv_handle *h)
{
	int n = 0;

	for (unsigned c = 0; c < h->op.qp->nchan; c++) {
		int k;

		if (((h->op.fill >> c) & 1) || (c && child_filler(h->op.qp, &h->op, c)))
			continue; /* a filler or the fill region: no chunk of the message */
		k = sdr_recv_chunks_done(
			(const struct sdr_recv_handle *)child_op(h->op.qp, c, &h->op));
		if (k < 0)
			return k;
		n += k;
	}
	return n;
}

int libsdr_chan_imm_get(const struct sdr_recv_handle *h, uint32_t *imm)
{
	return sdr_recv_imm_get((const struct sdr_recv_handle *)child_op(h->op.qp, 0, &h->op), imm);
}

int libsdr_chan_recv_complete(struct sdr_recv_handle *h)
{
	int rc = 0, any = 0;

	if (h->op.state != OP_PENDING || h->op.complete_req)
		return -EALREADY;
	/* every child still pending completes now (one that did stays as it is) */
	for (unsigned c = 0; c < h->op.qp->nchan; c++) {
		int r = sdr_recv_complete((struct sdr_recv_handle *)child_op(h->op.qp, c, &h->op));

		if (r == 0)
			any = 1;
		else if (r != -EALREADY && !rc)
			rc = r;
	}
	if (rc)
		return rc;
	if (!any)
		return -EALREADY;
	h->op.complete_req = 1;
	return 0;
}
