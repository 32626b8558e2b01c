/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libsdr's private header (host library layer, not installed): the objects
 * behind the public handles, the calls its files make of each other, and the
 * data-path helpers every post uses (static inline: no call on the data path).
 */
#ifndef SDR_PRIV_H
#define SDR_PRIV_H

#include <errno.h>
#include <string.h>

#include "sdr.h"
#include "sdr_desc.h"
#include "sdr_ring.h"
#include "sdr_stripe.h"

/*
 * Control path: blocking request/response on the daemon's SOCK_SEQPACKET
 * socket (ctl.c). Data path: SQEs into the context's SQ ring (send.c,
 * recv.c), CQEs out of its CQ ring (cq.c), receive bitmaps read from the
 * per-QP segment (recv.c). No allocation and no system call on the data path
 * (except a rate-limited liveness probe of the socket while idle).
 *
 * Numbering: the DPU numbers each QP's sends and receives in SQ order, so
 * libsdr counts the same way; it validates every descriptor exactly as the
 * DPU does, because a descriptor the DPU rejects consumes no number and
 * would shift libsdr's count.
 */

/* ---------------- objects ---------------- */

enum op_state { OP_FREE = 0, OP_PENDING, OP_DONE };

/* One send or receive; the handles of the public API wrap it. */
struct sdr_op {
	struct sdr_qp *qp;
	uint64_t wr_id;
	uint32_t seq;
	uint32_t length; /* posted (receive) / total (send, stream) */
	uint8_t state;   /* enum op_state */
	uint8_t reaped;  /* completion returned to the user */
	uint8_t is_recv;
	uint8_t stream;       /* 1 = open stream, 2 = ended stream */
	uint8_t complete_req; /* RECV_COMPLETE posted */
	uint8_t cflags;       /* CQE flags */
	uint16_t opcode;      /* CQE opcode */
	int32_t status;
	uint32_t clen, cimm;
	/* the journal (restore.c): what posting it again to a new daemon takes */
	struct sdr_mr *mr; /* NULL for a stream */
	uint64_t off;
	uint32_t imm;
	uint8_t posted; /* its SQE went to the current daemon (0: journal only) */
	/* a group's short message (chan.c "Short messages"): the channels that
	 * carry a filler (send) or were posted on the fill region (receive);
	 * the bytes a filler may overwrite in the receive buffer, kept */
	uint8_t fill, saved_mask;
	uint8_t saved[SDR_CHANNELS_MAX];
};

struct sdr_send_handle {
	struct sdr_op op;
};
struct sdr_recv_handle {
	struct sdr_op op;
	uint64_t posted_ns; /* CLOCK_MONOTONIC at sdr_recv_post (the error text's "posted ago") */
};

struct sdr_buf {
	struct sdr_buf *next;
	uint8_t *addr;
	size_t len;
	int fd;
	uint32_t mr_refs;
};

struct sdr_mr {
	struct sdr_ctx *ctx;
	struct sdr_mr *next_free;
	struct sdr_buf *buf; /* NULL for sdr_mr_reg_fd() */
	uint8_t *addr;
	uint64_t len;
	uint32_t id;
	uint8_t valid;
	/* the journal: the file and range to register again after a restart */
	int fd;          /* buf->fd, or libsdr's dup of an sdr_mr_reg_fd() fd */
	uint8_t fd_own;  /* fd is libsdr's dup: close it with the MR */
	uint64_t fd_off; /* offset of the range in fd */
	/* the same range registered on the context's channel contexts (chan.c,
	 * made at the first post of a multi-channel QP that names it) */
	struct sdr_mr *chmr[SDR_CHANNELS_MAX];
};

struct sdr_qp {
	struct sdr_ctx *ctx;
	uint32_t qp_id;
	uint32_t idx; /* in ctx->qps */
	struct sdr_qp_info local, remote;
	int connected;
	uint32_t send_seq, recv_seq;
	uint32_t max_send; /* min(local, remote max_msg) */
	uint32_t mtu;      /* stream alignment: the larger of both MTUs */
	uint8_t *seg;
	size_t seg_size;
	struct sdr_qseg_slot *slots;
	uint64_t *bitmaps;
	uint32_t bitmap_words;
	uint32_t chunk_bytes;
	struct sdr_send_handle sh[SDR_HANDLES];
	struct sdr_recv_handle rh[SDR_HANDLES];
	/* the journal (restore.c) */
	struct sdr_ctl_req jreq; /* the QP_CREATE request (attributes, horizon) */
	uint8_t token[SDR_RESTORE_TOKEN_LEN];
	int seg_fd;                /* the QP segment's memfd, kept for QP_RESTORE */
	uint8_t replay;            /* restored: descriptors left to post again */
	uint8_t lost;              /* not restored: everything fails -ECONNABORTED */
	uint32_t rp_send, rp_recv; /* replay cursors (message numbers) */
	uint32_t restores;         /* QP_RESTOREs accepted */
	char lost_why[160];        /* why it was not restored */
	/* channels (chan.c): a group (nchan > 1) has no QP of the daemon itself,
	 * its children do (child[c] on ctx->chctx[c], child 0 on ctx); a child
	 * knows its group and its stripe map */
	uint8_t nchan;
	struct sdr_qp *child[SDR_CHANNELS_MAX];
	struct sdr_qp *group;
	struct sdr_stripe stripe;
	uint32_t cq_send, cq_recv; /* a group: next send / receive sdr_cq_poll() returns */
	uint64_t *merged;          /* a group: [SDR_HANDLES][merged_words] bitmaps in real chunks */
	uint32_t merged_words;
	struct sdr_mr *fill; /* a group: the fill region of short messages (chan.c) */
};

struct wcq_ent {
	struct sdr_op *op; /* NULL: completion not tied to a handle */
	uint8_t dead;
	struct sdr_wc wc;
};

#define SDR_MAX_QPS 32768u
#define IDLE_PROBE_EVERY 64

/* ctx->rstate: re-attach after a daemon restart (restore.c) */
enum { R_LIVE = 0, R_DOWN, R_REPLAY };

struct sdr_ctx {
	int sock;
	int dead;
	uint8_t rstate;       /* R_*: not R_LIVE sends every call to restore.c */
	uint8_t attaching;    /* restore.c talks to a new daemon (ctl calls allowed) */
	uint8_t attach_lost;  /* ... and lost it again: try later */
	uint32_t reattach_ms; /* SDR_REATTACH_OFF = off */
	uint64_t down_ns;     /* CLOCK_MONOTONIC of the death */
	uint64_t try_ns;      /* of the last connect attempt */
	char path[108];       /* the daemon's socket */
	uint32_t ctl_timeout_ms;
	uint8_t *seg;
	size_t seg_size;
	struct sdr_ring sq, cq;
	uint32_t cq_entries;
	uint32_t outstanding;
	uint32_t idle;
	struct sdr_buf *bufs;
	struct sdr_mr **mrs; /* every MR object ever made; freed at close */
	uint32_t nmrs, cap_mrs;
	struct sdr_mr *mr_free;
	struct sdr_qp **qps;
	uint32_t cap_qps;
	struct wcq_ent *wcq;
	uint32_t wcq_cap, wcq_head, wcq_tail; /* head/tail free running */
	struct sdr_ctx_stats st;
	const char *err_static;
	char errmsg[512]; /* room for a receive's sdr_diag_recv_text() with its hint */
	/* channels (chan.c) */
	uint32_t want_worker; /* HELLO's (a channel context: worker + 1) */
	uint32_t ext;         /* the HELLO reply's SDR_EXT_* (0: an older daemon) */
	struct sdr_ctx *chctx[SDR_CHANNELS_MAX]; /* channel contexts 1.. (opened once) */
	struct sdr_qp **groups;                  /* its multi-channel QPs */
	uint32_t ngroups, cap_groups;
};

/* libsdr's wr_id in SQEs: marker | qp index | direction | seq. The user's
 * wr_id stays in the handle. */
#define COOKIE_MARK (UINT64_C(1) << 63)
static inline uint64_t cookie_make(uint32_t qp_idx, int is_recv, uint32_t seq)
{
	return COOKIE_MARK | (uint64_t)qp_idx << 48 | (uint64_t)(is_recv ? 1 : 0) << 47 | seq;
}

/* Fast-path reasons are static strings: no formatting on the data path. */
static inline int fail(struct sdr_ctx *ctx, int err, const char *why)
{
	ctx->err_static = why;
	return err;
}

/* [off, off + len) inside a segment of @p size, aligned to @p align. */
static inline int in_seg(uint64_t off, uint64_t len, uint64_t size, uint64_t align)
{
	return off <= size && len <= size - off && off % align == 0;
}

/* ---------------- calls between the files ---------------- */

/* ctl.c: the control channel */
void libsdr_set_err(struct sdr_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void libsdr_mark_dead(struct sdr_ctx *ctx);
/* the daemon hung up: re-attach (restore.c) or, when that is off, dead */
void libsdr_conn_lost(struct sdr_ctx *ctx);
int libsdr_ctl_call(struct sdr_ctx *ctx, struct sdr_ctl_req *req, int fd_in,
		    struct sdr_ctl_resp *resp, int *fd_out);
void *libsdr_map_segment(int fd, uint64_t size);

/* qp.c */
void libsdr_qp_free(struct sdr_qp *qp);

/* setup.c */
int libsdr_seg_attach(struct sdr_ctx *ctx);
uint64_t libsdr_now_ns(void);

/* restore.c: re-attach after a daemon restart */
uint32_t libsdr_reattach_window(const struct sdr_ctx_attr *attr);
void libsdr_restore_drive(struct sdr_ctx *ctx);
/* a control call of the API: waits for the re-attach, retried once after it */
int libsdr_ctl(struct sdr_ctx *ctx, struct sdr_ctl_req *req, int fd_in, struct sdr_ctl_resp *resp,
	       int *fd_out);
/* the QP's journal entries from its QP_CREATE (takes @p seg_fd) */
void libsdr_journal_qp(struct sdr_qp *qp, const struct sdr_ctl_req *req,
		       const struct sdr_ctl_resp *resp, int seg_fd);
/* posts while the QP is journal-only: -ECONNABORTED (lost), -EPIPE (dead) or 0 */
int libsdr_qp_gone(struct sdr_qp *qp);

/* recv.c: the last error of a receive that completed partial or in error
 * (sdr_diag_recv_text(), the wording of the daemon's /ops page) */
void libsdr_recv_err(struct sdr_op *op);

/* chan.c: multi-channel QPs (a group's calls; ctx teardown) */
struct sdr_ctx *libsdr_ctx_attach(const char *path, const struct sdr_ctx_attr *attr,
				  uint32_t want_worker);
void libsdr_chan_ctx_close(struct sdr_ctx *ctx);
int libsdr_chan_send(struct sdr_qp *g, const struct sdr_send_wr *wr, struct sdr_send_handle **h);
int libsdr_chan_recv(struct sdr_qp *g, const struct sdr_recv_wr *wr, struct sdr_recv_handle **h);
int libsdr_chan_op_poll(struct sdr_op *op);
int libsdr_chan_cq_poll(struct sdr_ctx *ctx, struct sdr_wc *wc, int max);
int libsdr_chan_bitmap(const struct sdr_recv_handle *h, const uint64_t **bitmap, size_t *nchunks);
int libsdr_chan_chunks_done(const struct sdr_recv_handle *h);
int libsdr_chan_imm_get(const struct sdr_recv_handle *h, uint32_t *imm);
int libsdr_chan_recv_complete(struct sdr_recv_handle *h);
int libsdr_chan_destroy(struct sdr_qp *g);
int libsdr_chan_rate_set(struct sdr_qp *g, uint64_t rate_bps);
int libsdr_chan_mr_dereg(struct sdr_mr *mr);

/* cq.c: completions */
int libsdr_progress(struct sdr_ctx *ctx);
int libsdr_cq_drain(struct sdr_ctx *ctx);
int libsdr_cqe_process(struct sdr_ctx *ctx, const struct sdr_cqe *c);
int libsdr_op_poll(struct sdr_op *op);

/* ---------------- data-path helpers (send.c, recv.c) ---------------- */

/* A descriptor of @p opcode on @p qp; @p mr (or NULL), @p off and @p length
 * name the bytes it moves. Every post builds its SQE here. */
static inline void sqe_init(struct sdr_sqe *sqe, const struct sdr_qp *qp, uint8_t opcode,
			    const struct sdr_mr *mr, uint64_t off, uint32_t length)
{
	memset(sqe, 0, sizeof(*sqe));
	sqe->opcode = opcode;
	sqe->qp_id = (uint16_t)qp->qp_id;
	sqe->mr_id = mr ? mr->id : 0;
	sqe->offset = off;
	sqe->length = length;
}

static inline int sq_post(struct sdr_ctx *ctx, const struct sdr_sqe *sqe)
{
	if (sdr_ring_enqueue_burst(&ctx->sq, sqe, 1) != 1) {
		ctx->st.sq_full++;
		return fail(ctx, -EAGAIN, "SQ ring full");
	}
	ctx->st.sq_posted++;
	return 0;
}

/* Resolve (mr, addr|offset) to an MR offset. Whether the MR is valid and
 * the range fits is the descriptor check's (desc_check()). */
static inline int mr_offset(struct sdr_ctx *ctx, const struct sdr_mr *mr, const void *addr,
			    uint64_t offset, uint64_t *off)
{
	if (mr == NULL || mr->ctx != ctx)
		return fail(ctx, -EINVAL, "MR missing or of another context");
	if (addr) {
		const uint8_t *a = addr;

		if (!mr->valid)
			return fail(ctx, -ENOENT, "MR deregistered");
		if (mr->addr == NULL || a < mr->addr || a >= mr->addr + mr->len)
			return fail(ctx, -EINVAL, "address outside the MR");
		offset = (uint64_t)(a - mr->addr);
	}
	*off = offset;
	return 0;
}

/* The DPU's own check (common/sdr_desc.c, the same function), run on every
 * descriptor before it is posted: what libsdr refuses here the DPU would
 * refuse with the same errno, and what it posts the DPU accepts (as long as
 * the QP and the MR stay as they are). */
static inline int desc_check(struct sdr_qp *qp, const struct sdr_sqe *sqe, const struct sdr_mr *mr)
{
	struct sdr_desc_qp v = {qp->local.max_msg, qp->local.mtu, qp->connected, qp->stripe};
	enum sdr_desc_why why;
	int rc = sdr_desc_check(sqe, &v, mr && mr->valid ? &mr->len : NULL, &why);

	return rc ? fail(qp->ctx, rc, sdr_desc_why_str(why)) : 0;
}

/* Posts on @p qp go to the journal only (the daemon is gone, or it is back
 * and the QP's earlier descriptors are not all posted again yet). */
static inline int qp_journal(const struct sdr_qp *qp)
{
	return qp->ctx->rstate == R_DOWN || qp->replay;
}
static inline int op_journal(const struct sdr_op *op)
{
	return qp_journal(op->qp);
}

/* Every call of the API on @p ctx first: restore.c's state machine while a
 * restart is handled (a branch on the data path otherwise). */
static inline void restore_drive(struct sdr_ctx *ctx)
{
	if (__builtin_expect(ctx->rstate != R_LIVE, 0))
		libsdr_restore_drive(ctx);
}

static inline int budget_check(struct sdr_ctx *ctx, const struct sdr_op *op)
{
	if (ctx->outstanding >= ctx->cq_entries) {
		ctx->st.cq_full++;
		return fail(ctx, -EAGAIN, "cq_entries operations outstanding");
	}
	if (op->state == OP_PENDING || (op->state == OP_DONE && !op->reaped)) {
		ctx->st.slot_busy++;
		return fail(ctx, -EAGAIN, "handle of message n-1024 not completed and reaped");
	}
	if (!op_journal(op) && sdr_ring_free(&ctx->sq) == 0) {
		ctx->st.sq_full++;
		return fail(ctx, -EAGAIN, "SQ ring full");
	}
	return 0;
}

static inline void op_arm(struct sdr_op *op, uint32_t seq, uint32_t length, uint64_t wr_id)
{
	op->seq = seq;
	op->length = length;
	op->wr_id = wr_id;
	op->state = OP_PENDING;
	op->reaped = 0;
	op->stream = 0;
	op->complete_req = 0;
	op->status = 0;
	op->clen = op->cimm = 0;
	op->cflags = 0;
	op->opcode = 0;
	op->mr = NULL;
	op->off = 0;
	op->imm = 0;
	op->posted = 0;
	op->fill = op->saved_mask = 0;
}

#endif /* SDR_PRIV_H */
