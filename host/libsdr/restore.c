/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libsdr's re-attach after a daemon restart (host library layer): the journal
 * (what each MR, QP and outstanding operation needs to be carried over to the
 * daemon's next incarnation) and the state machine that every call of the API
 * drives while the daemon is gone: reconnect, HELLO, MR_REG of every MR,
 * QP_RESTORE of every QP, then the outstanding descriptors posted again in
 * message order as the SQ ring has room (docs/host-api.md §6). No thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "sdr_priv.h"
#include "sdr_wire.h" /* sdr_format_ipv4 */

/* connect attempts while the daemon is gone: at most one per RETRY_NS */
#define RETRY_NS (50 * 1000000ull)

uint32_t libsdr_reattach_window(const struct sdr_ctx_attr *attr)
{
	const char *env;
	unsigned long v;
	char *end;

	if (attr && attr->reattach_ms)
		return attr->reattach_ms;
	env = getenv("SDR_REATTACH_MS");
	if (env == NULL || env[0] == '\0')
		return SDR_REATTACH_DEFAULT_MS;
	if (strcmp(env, "off") == 0)
		return SDR_REATTACH_OFF;
	errno = 0;
	v = strtoul(env, &end, 10);
	if (*end != '\0' || errno || v >= SDR_REATTACH_OFF) {
		fprintf(stderr,
			"libsdr: SDR_REATTACH_MS=%s is not a number of ms (0 = off): %u ms\n", env,
			SDR_REATTACH_DEFAULT_MS);
		return SDR_REATTACH_DEFAULT_MS;
	}
	return v == 0 ? SDR_REATTACH_OFF : (uint32_t)v;
}

void libsdr_journal_qp(struct sdr_qp *qp, const struct sdr_ctl_req *req,
		       const struct sdr_ctl_resp *resp, int seg_fd)
{
	qp->jreq = *req;
	memcpy(qp->token, resp->token, sizeof(qp->token));
	if (qp->ctx->reattach_ms == SDR_REATTACH_OFF) {
		close(seg_fd);
		seg_fd = -1;
	}
	qp->seg_fd = seg_fd;
}

int libsdr_qp_gone(struct sdr_qp *qp)
{
	struct sdr_ctx *ctx = qp->ctx;

	if (ctx->dead)
		return -EPIPE;
	libsdr_set_err(ctx, "QP 0x%06x was not restored after the daemon restarted: %s",
		       qp->local.qpn, qp->lost_why);
	return -ECONNABORTED;
}

static inline struct sdr_op *op_of(struct sdr_qp *qp, int is_recv, uint32_t seq)
{
	return is_recv ? &qp->rh[seq % SDR_HANDLES].op : &qp->sh[seq % SDR_HANDLES].op;
}

/* Complete @p op with -ECONNABORTED, as a CQE would (handle and queue). */
static void op_abort(struct sdr_ctx *ctx, struct sdr_op *op)
{
	struct sdr_qp *qp = op->qp;
	struct sdr_cqe c = {
		.wr_id = cookie_make(qp->idx, op->is_recv, op->seq),
		.seq = op->seq,
		.length = 0,
		.status = -ECONNABORTED,
		.qp_id = (uint16_t)qp->qp_id,
		.opcode = op->is_recv ? SDR_SQ_RECV : SDR_SQ_SEND,
	};

	if (libsdr_cqe_process(ctx, &c)) { /* queue full: the handle only */
		op->status = c.status;
		op->opcode = c.opcode;
		op->stream = 0;
		op->state = OP_DONE;
	}
	ctx->st.ops_aborted++;
}

/* @p qp is not carried over: its outstanding operations fail, later calls
 * on it return -ECONNABORTED (libsdr_qp_gone()). */
static void qp_lose(struct sdr_ctx *ctx, struct sdr_qp *qp, const char *why)
{
	snprintf(qp->lost_why, sizeof(qp->lost_why), "%s", why);
	qp->lost = 1;
	qp->replay = 0;
	ctx->st.qps_lost++;
	for (uint32_t i = 0; i < SDR_HANDLES; i++) {
		if (qp->sh[i].op.state == OP_PENDING)
			op_abort(ctx, &qp->sh[i].op);
		if (qp->rh[i].op.state == OP_PENDING)
			op_abort(ctx, &qp->rh[i].op);
	}
	libsdr_set_err(ctx, "QP 0x%06x was not restored after the daemon restarted: %s",
		       qp->local.qpn, why);
	if (getenv("SDR_DEBUG"))
		fprintf(stderr, "libsdr: %s\n", ctx->errmsg);
}

/* The daemon hung up. */
void libsdr_conn_lost(struct sdr_ctx *ctx)
{
	if (ctx->attaching) {
		ctx->attach_lost = 1;
		return;
	}
	if (ctx->dead || ctx->rstate == R_DOWN)
		return;
	if (ctx->reattach_ms == SDR_REATTACH_OFF) {
		libsdr_mark_dead(ctx);
		return;
	}
	/* the CQEs the daemon wrote before it died */
	libsdr_cq_drain(ctx);
	if (ctx->dead)
		return;
	ctx->rstate = R_DOWN;
	ctx->down_ns = libsdr_now_ns();
	ctx->try_ns = ctx->down_ns;
	for (uint32_t q = 0; q < ctx->cap_qps; q++) {
		struct sdr_qp *qp = ctx->qps[q];

		if (qp == NULL)
			continue;
		qp->replay = 0;
		for (uint32_t i = 0; i < SDR_HANDLES; i++) {
			struct sdr_op *s = &qp->sh[i].op;

			s->posted = 0;
			qp->rh[i].op.posted = 0;
			/* a stream's data descriptors are not journaled */
			if (s->state == OP_PENDING && s->stream)
				op_abort(ctx, s);
		}
	}
	libsdr_set_err(ctx, "daemon connection lost: re-attaching (window %u ms)",
		       ctx->reattach_ms);
	if (getenv("SDR_DEBUG"))
		fprintf(stderr, "libsdr: %s\n", ctx->errmsg);
}

/* First message number of @p qp's direction whose operation is not known to
 * be complete (the next one when none is outstanding). */
static uint32_t base_of(struct sdr_qp *qp, int is_recv)
{
	uint32_t next = is_recv ? qp->recv_seq : qp->send_seq;
	uint32_t s = next >= SDR_HANDLES ? next - SDR_HANDLES : 0;

	for (; s != next; s++) {
		const struct sdr_op *op = op_of(qp, is_recv, s);

		if (op->seq == s && op->state == OP_PENDING)
			return s;
	}
	return next;
}

/* Receives: from @p base back over the completed receives whose slots still
 * hold their bitmaps (no later receive took the slot). A sender that died
 * too may not know they completed and send them again: posted again DONE,
 * the daemon answers those retransmissions from the bitmap. */
static uint32_t recv_floor(struct sdr_qp *qp, uint32_t base)
{
	uint32_t lo = qp->recv_seq >= SDR_HANDLES ? qp->recv_seq - SDR_HANDLES : 0;

	while (base != lo) {
		const struct sdr_op *op = op_of(qp, 1, base - 1);

		if (op->seq != base - 1 || op->state != OP_DONE)
			break;
		base--;
	}
	return base;
}

static void mr_lose(struct sdr_ctx *ctx, struct sdr_mr *mr)
{
	mr->valid = 0;
	if (mr->fd_own)
		close(mr->fd);
	mr->fd_own = 0;
	if (mr->buf)
		mr->buf->mr_refs--;
	ctx->st.mrs_lost++;
	if (getenv("SDR_DEBUG"))
		fprintf(stderr, "libsdr: MR of %llu bytes not registered again: %s\n",
			(unsigned long long)mr->len, ctx->errmsg);
}

/* The restored QP must be the same QP: the daemon's identity and the QP's. */
static int identity_check(const struct sdr_qp_info *was, const struct sdr_qp_info *is, char *why,
			  size_t len)
{
	char a[16], b[16];

	if (was->ip != is->ip) {
		sdr_format_ipv4(was->ip, a);
		sdr_format_ipv4(is->ip, b);
		snprintf(why, len, "the daemon's IP changed from %s to %s", a, b);
	} else if (memcmp(was->mac, is->mac, sizeof(was->mac))) {
		snprintf(why, len, "the daemon's MAC changed");
	} else if (was->mtu != is->mtu) {
		snprintf(why, len, "the daemon's MTU changed from %u to %u", was->mtu, is->mtu);
	} else if (was->max_msg != is->max_msg) {
		snprintf(why, len, "max_msg changed from %u to %u", was->max_msg, is->max_msg);
	} else if (was->chunk_pkts != is->chunk_pkts || was->generations != is->generations ||
		   was->reliability != is->reliability || was->ec != is->ec) {
		snprintf(why, len, "the QP's chunk, generations or reliability changed");
	} else if (was->qpn != is->qpn || was->rkey != is->rkey || was->ctrl_key != is->ctrl_key) {
		snprintf(why, len, "the daemon answered with another QPN, R_Key or key");
	} else {
		return 0;
	}
	return -1;
}

/* QP_RESTORE of @p qp. Returns -1 when the connection is lost again. */
static int qp_restore(struct sdr_ctx *ctx, struct sdr_qp *qp)
{
	struct sdr_ctl_req req;
	struct sdr_ctl_resp resp;
	char why[160];
	int rc, fd = -1;

	memset(&req, 0, sizeof(req));
	req.type = SDR_CTL_QP_RESTORE;
	req.qp_attr = qp->jreq.qp_attr;
	req.horizon_ms = qp->jreq.horizon_ms;
	req.cc = qp->jreq.cc; /* its congestion control and paths, as created */
	req.paths = qp->jreq.paths;
	req.chan = qp->jreq.chan; /* a channel: its stripe map again */
	req.stripe = qp->jreq.stripe;
	req.remote = qp->remote;
	req.restore.local = qp->local;
	memcpy(req.restore.token, qp->token, sizeof(req.restore.token));
	req.restore.send_base = base_of(qp, 0);
	req.restore.recv_base = recv_floor(qp, base_of(qp, 1));
	req.restore.connected = (uint8_t)qp->connected;
	rc = libsdr_ctl_call(ctx, &req, qp->seg_fd, &resp, &fd);
	if (fd >= 0)
		close(fd);
	if (ctx->attach_lost)
		return -1;
	if (rc) {
		snprintf(why, sizeof(why), "the daemon refused QP_RESTORE: %.100s (%s)",
			 ctx->errmsg, strerror(-rc));
		qp_lose(ctx, qp, why);
		return 0;
	}
	if (resp.id > UINT16_MAX) {
		snprintf(why, sizeof(why), "malformed QP_RESTORE response");
	} else if (req.chan && resp.ext != SDR_EXT_QP(req.chan, req.stripe ? req.stripe : 1)) {
		snprintf(why, sizeof(why),
			 "the restarted daemon did not apply the channel's stripe"
			 " map (older than channels?)");
	} else if (identity_check(&qp->local, &resp.info, why, sizeof(why)) == 0) {
		qp->qp_id = resp.id;
		for (size_t i = 0; i < sizeof(resp.token); i++)
			if (resp.token[i]) {
				memcpy(qp->token, resp.token, sizeof(qp->token));
				break;
			}
		qp->rp_send = req.restore.send_base;
		qp->rp_recv = req.restore.recv_base;
		qp->replay = 1;
		qp->restores++;
		ctx->st.qps_restored++;
		return 0;
	}
	/* not the QP we had: give the daemon's back */
	memset(&req, 0, sizeof(req));
	req.type = SDR_CTL_QP_DESTROY;
	req.qp_id = resp.id;
	libsdr_ctl_call(ctx, &req, -1, &resp, NULL);
	if (ctx->attach_lost)
		return -1;
	qp_lose(ctx, qp, why);
	return 0;
}

/* A connected socket to the daemon's path, or -1. */
static int sock_connect(struct sdr_ctx *ctx)
{
	struct sockaddr_un sa;
	struct timeval tv;
	int s, fl;

	s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (s < 0)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, ctx->path, sizeof(ctx->path));
	fl = fcntl(s, F_GETFL);
	if (connect(s, (struct sockaddr *)&sa, sizeof(sa)) < 0 || fl < 0 ||
	    fcntl(s, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		close(s);
		return -1;
	}
	tv.tv_sec = ctx->ctl_timeout_ms / 1000;
	tv.tv_usec = (ctx->ctl_timeout_ms % 1000) * 1000;
	setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	return s;
}

/* HELLO and the new context segment. Returns 0, or -1 (try again later). */
static int hello(struct sdr_ctx *ctx)
{
	struct sdr_ctl_req req;
	struct sdr_ctl_resp resp;
	uint8_t *oseg = ctx->seg;
	size_t osize = ctx->seg_size;
	struct sdr_ring osq = ctx->sq, ocq = ctx->cq;
	uint32_t ocqe = ctx->cq_entries;
	int fd = -1, rc;

	memset(&req, 0, sizeof(req));
	req.type = SDR_CTL_HELLO;
	/* a channel context, and a context with channel contexts: the worker
	 * it had (the channels' are chosen from it) */
	req.want_worker = ctx->want_worker;
	if (!req.want_worker && ctx->ngroups && (ctx->ext & SDR_EXT_VALID))
		req.want_worker = SDR_EXT_WORKER(ctx->ext) + 1;
	rc = libsdr_ctl_call(ctx, &req, -1, &resp, &fd);
	if (rc || fd < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	ctx->ext = resp.ext;
	ctx->seg_size = resp.seg_size;
	ctx->seg = libsdr_map_segment(fd, resp.seg_size);
	close(fd);
	if (ctx->seg == NULL || libsdr_seg_attach(ctx)) {
		if (ctx->seg)
			munmap(ctx->seg, ctx->seg_size);
		ctx->seg = oseg;
		ctx->seg_size = osize;
		ctx->sq = osq;
		ctx->cq = ocq;
		ctx->cq_entries = ocqe;
		return -1;
	}
	munmap(oseg, osize);
	/* the completion queue was sized for the first daemon's CQ */
	if (ctx->cq_entries > ctx->wcq_cap / 2)
		ctx->cq_entries = ctx->wcq_cap / 2;
	return 0;
}

/* One attempt: connect, HELLO, MRs, QPs. Leaves R_REPLAY when the daemon
 * answered throughout. */
static void attach_try(struct sdr_ctx *ctx)
{
	struct sdr_ctl_req req;
	struct sdr_ctl_resp resp;
	uint32_t restored = 0, lost = 0;
	int s, rc;

	/* the last CQEs of the dead daemon, before its rings go */
	libsdr_cq_drain(ctx);
	if (ctx->dead)
		return;
	s = sock_connect(ctx);
	if (s < 0)
		return;
	close(ctx->sock);
	ctx->sock = s;
	ctx->attaching = 1;
	ctx->attach_lost = 0;
	if (hello(ctx))
		goto out;
	for (uint32_t i = 0; i < ctx->nmrs; i++) {
		struct sdr_mr *mr = ctx->mrs[i];

		if (!mr->valid)
			continue;
		memset(&req, 0, sizeof(req));
		req.type = SDR_CTL_MR_REG;
		req.fd_offset = mr->fd_off;
		req.length = mr->len;
		rc = libsdr_ctl_call(ctx, &req, mr->fd, &resp, NULL);
		if (ctx->attach_lost)
			goto out;
		if (rc)
			mr_lose(ctx, mr);
		else
			mr->id = resp.id;
	}
	for (uint32_t q = 0; q < ctx->cap_qps; q++) {
		struct sdr_qp *qp = ctx->qps[q];

		if (qp == NULL || qp->lost)
			continue;
		if (qp_restore(ctx, qp))
			goto out;
		if (qp->lost)
			lost++;
		else
			restored++;
	}
	ctx->attaching = 0;
	ctx->rstate = R_REPLAY;
	ctx->idle = 0;
	ctx->st.reattaches++;
	ctx->st.reattach_last_ms = (libsdr_now_ns() - ctx->down_ns) / 1000000u;
	if (getenv("SDR_DEBUG"))
		fprintf(stderr,
			"libsdr: daemon restarted: re-attached after %llu ms, %u QP(s) restored, "
			"%u not\n",
			(unsigned long long)ctx->st.reattach_last_ms, restored, lost);
	return;
out:
	/* gone again: everything again at the next attempt */
	ctx->attaching = 0;
	for (uint32_t q = 0; q < ctx->cap_qps; q++)
		if (ctx->qps[q])
			ctx->qps[q]->replay = 0;
}

/* Some valid MR of @p ctx for the descriptor of an operation whose own MR
 * is gone (a send that completes at once carries no data). */
static struct sdr_mr *any_mr(struct sdr_ctx *ctx)
{
	for (uint32_t i = 0; i < ctx->nmrs; i++)
		if (ctx->mrs[i]->valid)
			return ctx->mrs[i];
	return NULL;
}

/* Post @p op again to the new daemon: complete ones with F_DONE (they take
 * their number, nothing else), outstanding receives with F_RESUME (their
 * bitmaps were kept), outstanding sends from scratch. Needs 2 SQ entries.
 * Returns 0, or -1 when @p qp got lost. */
static int op_replay(struct sdr_ctx *ctx, struct sdr_qp *qp, struct sdr_op *op)
{
	struct sdr_mr *mr = op->mr;
	uint64_t off = op->off;
	uint32_t len = op->length;
	struct sdr_sqe sqe;

	if (mr == NULL || !mr->valid) {
		if (op->state == OP_PENDING) /* its MR was refused */
			op_abort(ctx, op);
		mr = any_mr(ctx);
		if (mr == NULL) {
			qp_lose(ctx, qp, "no MR left to describe its operations with");
			return -1;
		}
		off = 0;
		if (len > mr->len)
			len = (uint32_t)mr->len;
	}
	sqe_init(&sqe, qp, op->is_recv ? SDR_SQ_RECV : SDR_SQ_SEND, mr, off, len);
	if (op->state != OP_PENDING)
		sqe.flags = SDR_SQE_F_DONE;
	else if (op->is_recv)
		sqe.flags = SDR_SQE_F_RESUME;
	sqe.imm = op->is_recv ? 0 : op->imm;
	sqe.wr_id = cookie_make(qp->idx, op->is_recv, op->seq);
	sq_post(ctx, &sqe);
	op->posted = 1;
	ctx->st.ops_replayed++;
	if (op->is_recv && op->state == OP_PENDING && op->complete_req) {
		sqe_init(&sqe, qp, SDR_SQ_RECV_COMPLETE, NULL, 0, 0);
		sqe.wr_id = cookie_make(qp->idx, 1, op->seq);
		sqe.seq = op->seq;
		sq_post(ctx, &sqe);
	}
	return 0;
}

/* Post what @p qp still has to post again; returns 1 when all is posted. */
static int qp_replay(struct sdr_ctx *ctx, struct sdr_qp *qp)
{
	while (sdr_ring_free(&ctx->sq) >= 2) {
		if (qp->rp_send != qp->send_seq) {
			if (op_replay(ctx, qp, op_of(qp, 0, qp->rp_send)))
				return 1;
			qp->rp_send++;
		} else if (qp->rp_recv != qp->recv_seq) {
			if (op_replay(ctx, qp, op_of(qp, 1, qp->rp_recv)))
				return 1;
			qp->rp_recv++;
		} else {
			qp->replay = 0;
			return 1;
		}
	}
	return 0;
}

void libsdr_restore_drive(struct sdr_ctx *ctx)
{
	uint64_t now;
	int left = 0;

	if (ctx->dead || ctx->attaching)
		return;
	if (ctx->rstate == R_DOWN) {
		now = libsdr_now_ns();
		if (now - ctx->down_ns > (uint64_t)ctx->reattach_ms * 1000000u) {
			ctx->rstate = R_LIVE;
			ctx->dead = 1;
			ctx->st.reattach_expired++;
			libsdr_set_err(ctx, "daemon did not come back within %u ms",
				       ctx->reattach_ms);
			if (getenv("SDR_DEBUG"))
				fprintf(stderr, "libsdr: %s\n", ctx->errmsg);
			return;
		}
		if (now - ctx->try_ns < RETRY_NS)
			return;
		ctx->try_ns = now;
		attach_try(ctx);
		if (ctx->rstate != R_REPLAY)
			return;
	}
	for (uint32_t q = 0; q < ctx->cap_qps; q++) {
		struct sdr_qp *qp = ctx->qps[q];

		if (qp && qp->replay && !qp_replay(ctx, qp))
			left = 1;
	}
	if (!left)
		ctx->rstate = R_LIVE;
}

/* Control calls of the API wait (up to the window) while the daemon is gone,
 * and are tried again once after a re-attach when the daemon died under
 * them. */
int libsdr_ctl(struct sdr_ctx *ctx, struct sdr_ctl_req *req, int fd_in, struct sdr_ctl_resp *resp,
	       int *fd_out)
{
	int rc, tries = 0;

	for (;;) {
		while (!ctx->dead && ctx->rstate == R_DOWN) {
			libsdr_restore_drive(ctx);
			if (!ctx->dead && ctx->rstate == R_DOWN)
				usleep(10000);
		}
		rc = libsdr_ctl_call(ctx, req, fd_in, resp, fd_out);
		if (rc != -EPIPE || ctx->dead || ctx->rstate != R_DOWN || ++tries > 2)
			return rc;
	}
}
