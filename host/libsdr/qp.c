/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libsdr's QP lifecycle (host library layer): create (map and check the QP's
 * segment of receive slots and bitmaps), connect to the peer's QP info, pace,
 * destroy; and the QP test hooks of sdr_internal.h. What a QP_RESTORE after a
 * daemon restart needs is kept through restore.c (libsdr_journal_qp()).
 */
#include <errno.h>
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sdr_bitmap.h"
#include "sdr_internal.h"
#include "sdr_priv.h"

static int info_sane(const struct sdr_qp_info *q)
{
	return (q->mtu == 1024 || q->mtu == 2048 || q->mtu == 4096) && q->max_msg > 0 &&
	       q->chunk_pkts > 0 && q->generations > 0 &&
	       !(q->generations & (q->generations - 1)) && q->qpn <= 0xFFFFFFu &&
	       q->qpn % q->generations == 0 && q->qpn + q->generations - 1 <= 0xFFFFFFu &&
	       sdr_scheme_unpack(q->reliability, q->ec, NULL) == 0;
}

static int qseg_attach(struct sdr_ctx *ctx, struct sdr_qp *qp)
{
	struct sdr_qseg_hdr h;
	uint64_t chunk = (uint64_t)qp->local.chunk_pkts * qp->local.mtu;
	uint64_t nchunks, words;

	if (qp->seg_size < sizeof(h))
		goto bad;
	memcpy(&h, qp->seg, sizeof(h));
	if (h.magic != SDR_QSEG_MAGIC || h.slots != SDR_HANDLES || chunk > UINT32_MAX ||
	    h.chunk_bytes != chunk)
		goto bad;
	nchunks = (qp->local.max_msg + chunk - 1) / chunk;
	words = SDR_BITMAP_WORDS(nchunks);
	if (h.bitmap_words < words || h.bitmap_words > (1u << 20) ||
	    !in_seg(h.slot_off, (uint64_t)h.slots * sizeof(struct sdr_qseg_slot), qp->seg_size,
		    alignof(struct sdr_qseg_slot)) ||
	    !in_seg(h.bitmap_off, (uint64_t)h.slots * h.bitmap_words * 8, qp->seg_size, 8))
		goto bad;
	qp->slots = (struct sdr_qseg_slot *)(qp->seg + h.slot_off);
	qp->bitmaps = (uint64_t *)(qp->seg + h.bitmap_off);
	qp->bitmap_words = h.bitmap_words;
	qp->chunk_bytes = (uint32_t)chunk;
	return 0;
bad:
	libsdr_set_err(ctx, "malformed QP segment");
	return -1;
}

void libsdr_qp_free(struct sdr_qp *qp)
{
	struct sdr_ctx *ctx = qp->ctx;

	/* Forget its unreaped operations and queued completions. */
	for (uint32_t i = 0; i < SDR_HANDLES; i++) {
		struct sdr_op *ops[2] = {&qp->sh[i].op, &qp->rh[i].op};

		for (int k = 0; k < 2; k++)
			if (ops[k]->state != OP_FREE && !ops[k]->reaped)
				ctx->outstanding--;
	}
	for (uint32_t p = ctx->wcq_head; p != ctx->wcq_tail; p++) {
		struct wcq_ent *e = &ctx->wcq[p % ctx->wcq_cap];

		if (e->wc.qp == qp) {
			e->dead = 1;
			e->op = NULL;
		}
	}
	ctx->qps[qp->idx] = NULL;
	if (qp->seg)
		munmap(qp->seg, qp->seg_size);
	if (qp->seg_fd >= 0)
		close(qp->seg_fd);
	free(qp);
}

/* The daemon's range of a QP rate (the same at create and at rate_set). */
static int rate_ok(uint64_t bps)
{
	return bps == 0 || (bps >= SDR_QP_RATE_MIN && bps <= SDR_QP_RATE_MAX);
}

struct sdr_qp *libsdr_qp_create_chan(struct sdr_ctx *ctx, const struct sdr_qp_attr *attr,
				     uint8_t chan, uint8_t stripe);

struct sdr_qp *sdr_qp_create(struct sdr_ctx *ctx, const struct sdr_qp_attr *attr)
{
	return libsdr_qp_create_chan(ctx, attr, 0, 0);
}

/* sdr_qp_create(), and channel SDR_CHAN_C(@p chan) of a multi-channel QP
 * (chan.c) with stripes of @p stripe chunks */
struct sdr_qp *libsdr_qp_create_chan(struct sdr_ctx *ctx, const struct sdr_qp_attr *attr,
				     uint8_t chan, uint8_t stripe)
{
	struct sdr_ctl_req req;
	struct sdr_ctl_resp resp;
	struct sdr_qp *qp;
	uint32_t idx;
	int rc, fd, e;

	if (ctx == NULL) {
		errno = EINVAL;
		return NULL;
	}
	if (attr) {
		/* a known reliability, EC parameters only with EC and valid */
		struct sdr_scheme s = {attr->reliability, attr->ec_code, attr->ec_k, attr->ec_m};

		if (sdr_scheme_check(&s, 0)) {
			errno = EINVAL;
			return NULL;
		}
		if (attr->paths > SDR_PATHS_MAX || attr->cc > SDR_QP_CC_ON) {
			errno = EINVAL;
			return NULL;
		}
		if (!rate_ok(attr->rate_bps)) {
			libsdr_set_err(
				ctx,
				"rate_bps %llu out of range (0 = unpaced, else %llu .. %llu bit/s)",
				(unsigned long long)attr->rate_bps, SDR_QP_RATE_MIN,
				SDR_QP_RATE_MAX);
			errno = EINVAL;
			return NULL;
		}
	}
	for (idx = 0; idx < ctx->cap_qps && ctx->qps[idx]; idx++)
		;
	if (idx == ctx->cap_qps) {
		uint32_t cap = ctx->cap_qps ? 2 * ctx->cap_qps : 8;
		struct sdr_qp **n;

		if (cap > SDR_MAX_QPS) {
			errno = ENOSPC;
			return NULL;
		}
		n = realloc(ctx->qps, cap * sizeof(*n));
		if (n == NULL)
			return NULL;
		memset(n + ctx->cap_qps, 0, (cap - ctx->cap_qps) * sizeof(*n));
		ctx->qps = n;
		ctx->cap_qps = cap;
	}
	qp = calloc(1, sizeof(*qp));
	if (qp == NULL)
		return NULL;
	qp->seg_fd = -1;
	memset(&req, 0, sizeof(req));
	req.type = SDR_CTL_QP_CREATE;
	if (attr) {
		req.qp_attr.max_msg = attr->max_msg;
		req.qp_attr.chunk_pkts = attr->chunk_pkts;
		req.qp_attr.reliability = attr->reliability;
		req.qp_attr.ec_code = attr->ec_code;
		req.qp_attr.ec_k = attr->ec_k;
		req.qp_attr.ec_m = attr->ec_m;
		req.qp_attr.want_qpn = attr->want_qpn;
		req.qp_attr.want_rkey = attr->want_rkey;
		req.qp_attr.rate_bps = attr->rate_bps;
		req.horizon_ms = attr->horizon_ms;
		req.cc = (uint8_t)attr->cc;
		req.paths = (uint8_t)attr->paths;
	}
	req.chan = chan;
	req.stripe = stripe;
	rc = libsdr_ctl(ctx, &req, -1, &resp, &fd);
	if (rc) {
		free(qp);
		errno = -rc;
		return NULL;
	}
	qp->ctx = ctx;
	qp->idx = idx;
	qp->qp_id = resp.id;
	qp->local = resp.info;
	if (fd < 0 || resp.id > UINT16_MAX || !info_sane(&qp->local)) {
		libsdr_set_err(ctx, "malformed QP_CREATE response");
		e = EPROTO;
		goto fail;
	}
	if (chan && resp.ext != SDR_EXT_QP(chan, stripe ? stripe : 1)) {
		/* a daemon that ignored the stripe map would mix up the bytes */
		libsdr_set_err(ctx, "the daemon did not apply the channel's stripe map"
				    " (older than libsdr 2.3?)");
		e = ENOTSUP;
		goto fail;
	}
	if (chan) {
		qp->stripe.w = SDR_CHAN_W(chan);
		qp->stripe.c = SDR_CHAN_C(chan);
		qp->stripe.s = (stripe ? stripe : 1u) * qp->local.chunk_pkts * qp->local.mtu;
	}
	qp->seg_size = resp.seg_size;
	qp->seg = libsdr_map_segment(fd, resp.seg_size);
	if (qp->seg == NULL) {
		e = errno == ENOMEM ? ENOMEM : EPROTO;
		goto fail;
	}
	if (qseg_attach(ctx, qp)) {
		e = EPROTO;
		goto fail;
	}
	libsdr_journal_qp(qp, &req, &resp, fd);
	for (uint32_t i = 0; i < SDR_HANDLES; i++) {
		qp->sh[i].op.qp = qp;
		qp->rh[i].op.qp = qp;
		qp->rh[i].op.is_recv = 1;
	}
	ctx->qps[idx] = qp;
	return qp;
fail:
	if (fd >= 0)
		close(fd);
	if (qp->seg)
		munmap(qp->seg, qp->seg_size);
	/* the daemon has the QP: ask it to drop it again */
	memset(&req, 0, sizeof(req));
	req.type = SDR_CTL_QP_DESTROY;
	req.qp_id = resp.id;
	libsdr_ctl_call(ctx, &req, -1, &resp, NULL);
	free(qp);
	errno = e;
	return NULL;
}

int sdr_qp_destroy(struct sdr_qp *qp)
{
	struct sdr_ctl_req req;
	struct sdr_ctl_resp resp;
	int rc;

	if (qp == NULL)
		return -EINVAL;
	if (qp->nchan)
		return libsdr_chan_destroy(qp);
	restore_drive(qp->ctx);
	/* not restored, or the daemon is gone (re-attach pending): the daemon
	 * does not know it (any more), and it will not be restored */
	if (qp->lost || (qp->ctx->rstate == R_DOWN && !qp->ctx->dead)) {
		libsdr_qp_free(qp);
		return 0;
	}
	memset(&req, 0, sizeof(req));
	req.type = SDR_CTL_QP_DESTROY;
	req.qp_id = qp->qp_id;
	rc = libsdr_ctl(qp->ctx, &req, -1, &resp, NULL);
	libsdr_qp_free(qp);
	return rc;
}

int sdr_qp_rate_set(struct sdr_qp *qp, uint64_t rate_bps)
{
	struct sdr_ctl_req req;
	struct sdr_ctl_resp resp;
	int rc;

	if (qp == NULL)
		return -EINVAL;
	if (!rate_ok(rate_bps)) {
		libsdr_set_err(qp->ctx,
			       "rate_bps %llu out of range (0 = unpaced, else %llu .. %llu bit/s)",
			       (unsigned long long)rate_bps, SDR_QP_RATE_MIN, SDR_QP_RATE_MAX);
		return -EINVAL;
	}
	if (qp->nchan)
		return libsdr_chan_rate_set(qp, rate_bps);
	if (qp->lost)
		return libsdr_qp_gone(qp);
	memset(&req, 0, sizeof(req));
	req.type = SDR_CTL_QP_SET_RATE;
	req.qp_id = qp->qp_id;
	req.qp_attr.rate_bps = rate_bps;
	rc = libsdr_ctl(qp->ctx, &req, -1, &resp, NULL);
	if (rc == 0)
		qp->jreq.qp_attr.rate_bps = rate_bps; /* a restore keeps the rate */
	return rc;
}

int sdr_qp_info_get(const struct sdr_qp *qp, struct sdr_qp_info *info)
{
	if (qp == NULL || info == NULL)
		return -EINVAL;
	if (qp->nchan) {
		libsdr_set_err(qp->ctx, "a QP of %u channels has %u infos: sdr_qp_infos_get()",
			       qp->nchan, qp->nchan);
		return -EINVAL;
	}
	*info = qp->local;
	return 0;
}

int sdr_qp_connect(struct sdr_qp *qp, const struct sdr_qp_info *remote)
{
	struct sdr_ctl_req req;
	struct sdr_ctl_resp resp;
	int rc;

	if (qp == NULL || remote == NULL)
		return -EINVAL;
	if (qp->nchan) {
		libsdr_set_err(qp->ctx,
			       "a QP of %u channels connects to %u infos: sdr_qp_connect_infos()",
			       qp->nchan, qp->nchan);
		return -EINVAL;
	}
	if (!info_sane(remote)) {
		libsdr_set_err(qp->ctx, "invalid remote QP info");
		return -EINVAL;
	}
	if (qp->connected)
		return -EISCONN;
	if (qp->lost)
		return libsdr_qp_gone(qp);
	memset(&req, 0, sizeof(req));
	req.type = SDR_CTL_QP_CONNECT;
	req.qp_id = qp->qp_id;
	req.remote = *remote;
	rc = libsdr_ctl(qp->ctx, &req, -1, &resp, NULL);
	if (rc)
		return rc;
	qp->remote = *remote;
	qp->connected = 1;
	qp->send_seq = 0;
	qp->recv_seq = 0;
	qp->max_send = remote->max_msg < qp->local.max_msg ? remote->max_msg : qp->local.max_msg;
	qp->mtu = remote->mtu > qp->local.mtu ? remote->mtu : qp->local.mtu;
	return 0;
}

#ifdef SDR_TEST_HOOKS /* the tests' build only (sdr_internal.h) */
uint32_t sdr__qp_id(const struct sdr_qp *qp)
{
	return qp ? qp->qp_id : 0;
}
uint32_t sdr__outstanding(const struct sdr_ctx *ctx)
{
	return ctx ? ctx->outstanding : 0;
}
#endif
