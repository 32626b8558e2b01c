/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libsdr: host side of the sdr-dpu ABI (common/sdr_abi.h).
 *
 * Control path: blocking request/response on the daemon's SOCK_SEQPACKET
 * socket. Data path: SQEs into the context's SQ ring, CQEs out of its CQ
 * ring, receive bitmaps read from the per-QP segment. No allocation and no
 * system call on the data path (except a rate-limited liveness probe of the
 * socket while idle).
 *
 * Numbering: the DPU numbers each QP's sends and receives in SQ order, so
 * libsdr counts the same way; it validates every descriptor exactly as the
 * DPU does, because a descriptor the DPU rejects consumes no number and
 * would shift libsdr's count.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "sdr.h"
#include "sdr_desc.h"
#include "sdr_fdpass.h"
#include "sdr_bitmap.h"
#include "sdr_internal.h"
#include "sdr_ring.h"

/* ---------------- objects ---------------- */

enum op_state { OP_FREE = 0, OP_PENDING, OP_DONE };

/* One send or receive; the handles of the public API wrap it. */
struct sdr_op {
	struct sdr_qp *qp;
	uint64_t wr_id;
	uint32_t seq;
	uint32_t length;      /* posted (receive) / total (send, stream) */
	uint8_t state;        /* enum op_state */
	uint8_t reaped;       /* completion returned to the user */
	uint8_t is_recv;
	uint8_t stream;       /* 1 = open stream, 2 = ended stream */
	uint8_t complete_req; /* RECV_COMPLETE posted */
	uint8_t cflags;       /* CQE flags */
	uint16_t opcode;      /* CQE opcode */
	int32_t status;
	uint32_t clen, cimm;
};

struct sdr_send_handle {
	struct sdr_op op;
};
struct sdr_recv_handle {
	struct sdr_op op;
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
};

struct wcq_ent {
	struct sdr_op *op; /* NULL: completion not tied to a handle */
	uint8_t dead;
	struct sdr_wc wc;
};

#define SDR_MAX_QPS 32768u
#define IDLE_PROBE_EVERY 64

struct sdr_ctx {
	int sock;
	int dead;
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
	char errmsg[192];
};

/* libsdr's wr_id in SQEs: marker | qp index | direction | seq. The user's
 * wr_id stays in the handle. */
#define COOKIE_MARK (UINT64_C(1) << 63)
static inline uint64_t cookie_make(uint32_t qp_idx, int is_recv, uint32_t seq)
{
	return COOKIE_MARK | (uint64_t)qp_idx << 48 | (uint64_t)(is_recv ? 1 : 0) << 47 | seq;
}

static void set_err(struct sdr_ctx *ctx, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void set_err(struct sdr_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ctx->errmsg, sizeof(ctx->errmsg), fmt, ap);
	va_end(ap);
	ctx->err_static = NULL;
}

/* Fast-path reasons are static strings: no formatting on the data path. */
static inline int fail(struct sdr_ctx *ctx, int err, const char *why)
{
	ctx->err_static = why;
	return err;
}

/* Reason of this thread's last failed sdr_ctx_open() (no context to keep it). */
static __thread char attach_err[256];

const char *sdr_last_error(const struct sdr_ctx *ctx)
{
	if (ctx == NULL)
		return attach_err;
	return ctx->err_static ? ctx->err_static : ctx->errmsg;
}

const char *sdr_strerror(int status)
{
	switch (status) {
	case 0: return "success";
	case -EINVAL: return "malformed descriptor or invalid argument";
	case -EBADF: return "unknown QP";
	case -ENOENT: return "unknown or deregistered MR";
	case -ERANGE: return "offset + length outside the MR";
	case -EMSGSIZE: return "zero length, longer than max_msg, or longer than the posted receive";
	case -ENOTCONN: return "QP not connected";
	case -EBUSY: return "resource busy (receive slot or MR in use)";
	case -ECANCELED: return "QP destroyed or context detached";
	case -ETIMEDOUT: return "timed out";
	case -EIO: return "peer or DPU error";
	case -EPIPE: return "daemon gone";
	case -EAGAIN: return "ring or completion budget full, try again";
	case -EALREADY: return "already done";
	case -EPROTO: return "protocol error talking to the daemon";
	case -EDQUOT: return "a per-client quota of the daemon is exhausted";
	default: return status < 0 ? strerror(-status) : "unknown status";
	}
}

/* ---------------- control socket ---------------- */

static void mark_dead(struct sdr_ctx *ctx)
{
	if (!ctx->dead)
		set_err(ctx, "daemon connection lost");
	ctx->dead = 1;
}

/* One request, one response. @p fd_in (or -1) travels with the request;
 * @p fd_out receives the response's descriptor (or -1). Returns 0 or -errno
 * (the daemon's status, with its reason in ctx->errmsg). */
static int ctl_call(struct sdr_ctx *ctx, struct sdr_ctl_req *req, int fd_in,
		    struct sdr_ctl_resp *resp, int *fd_out)
{
	uint16_t type = req->type;
	ssize_t n;
	int got_fd = -1, peer_gone = 0, resets = 0;

	if (fd_out)
		*fd_out = -1;
	if (ctx->dead)
		return -EPIPE;
	req->magic = SDR_CTL_MAGIC;
	req->abi_major = SDR_ABI_MAJOR;
	req->abi_minor = SDR_ABI_MINOR;

	/* both ways bounded by the socket's SO_SNDTIMEO / SO_RCVTIMEO
	 * (ctl_timeout_ms, set at open) */
	n = sdr_fd_send(ctx->sock, req, sizeof(*req), fd_in, -1);
	if (n) {
		if (n == -ETIMEDOUT) {
			mark_dead(ctx);
			set_err(ctx, "control request timed out");
			return -ETIMEDOUT;
		}
		if (n != -EPIPE && n != -ECONNRESET) {
			mark_dead(ctx);
			return -EPIPE;
		}
		/* The daemon hung up, maybe after telling why (it refuses a
		 * connection over a quota with a reply, then closes): read
		 * what is queued, without waiting. */
		peer_gone = 1;
	}

	memset(resp, 0, sizeof(*resp));
	do
		n = sdr_fd_recv(ctx->sock, resp, sizeof(*resp), &got_fd, peer_gone ? 0 : -1);
	while (n == -ECONNRESET && resets++ == 0);
	/* (ECONNRESET: the daemon closed with our request unread; a reply it
	 * sent before is still queued behind the error) */
	if (peer_gone && n <= 0 && n != -EMSGSIZE) {
		mark_dead(ctx);
		return -EPIPE;
	}
	if (n == -ETIMEDOUT) {
		/* A late answer would be taken for the next request's: give up
		 * on this connection. */
		mark_dead(ctx);
		set_err(ctx, "daemon did not answer within %u ms", ctx->ctl_timeout_ms);
		return -ETIMEDOUT;
	}
	if (n <= 0 && n != -EMSGSIZE) {
		mark_dead(ctx);
		return -EPIPE;
	}
	if (n != (ssize_t)sizeof(*resp) || resp->magic != SDR_CTL_MAGIC || resp->type != type) {
		if (got_fd >= 0)
			close(got_fd);
		mark_dead(ctx);
		set_err(ctx, "malformed control response");
		return -EPROTO;
	}
	resp->msg[sizeof(resp->msg) - 1] = '\0';
	if (resp->status != 0) {
		if (got_fd >= 0)
			close(got_fd);
		if (resp->status > 0 || resp->status < -4095) {
			set_err(ctx, "daemon returned invalid status %d", resp->status);
			return -EPROTO;
		}
		set_err(ctx, "%s", resp->msg[0] ? resp->msg : strerror(-resp->status));
		if (peer_gone)
			ctx->dead = 1; /* (keeping the daemon's reason) */
		return resp->status;
	}
	if (peer_gone) { /* a success reply and a hang-up: the hang-up counts */
		if (got_fd >= 0)
			close(got_fd);
		mark_dead(ctx);
		return -EPIPE;
	}
	if (fd_out)
		*fd_out = got_fd;
	else if (got_fd >= 0)
		close(got_fd);
	return 0;
}

/* mmap a daemon-provided segment, checking the fd really is that large. */
static void *map_segment(int fd, uint64_t size)
{
	struct stat sb;
	void *p;

	if (size == 0 || size > (UINT64_C(1) << 40) || fstat(fd, &sb) < 0 ||
	    (uint64_t)sb.st_size < size) {
		errno = EPROTO;
		return NULL;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	return p == MAP_FAILED ? NULL : p;
}

/* [off, off + len) inside a segment of @p size, aligned to @p align. */
static int in_seg(uint64_t off, uint64_t len, uint64_t size, uint64_t align)
{
	return off <= size && len <= size - off && off % align == 0;
}

/* ---------------- context ---------------- */

static int seg_attach(struct sdr_ctx *ctx)
{
	const struct sdr_seg_hdr *h = (const struct sdr_seg_hdr *)ctx->seg;
	/* copy once: the header lives in shared memory */
	struct sdr_seg_hdr hdr;

	if (ctx->seg_size < sizeof(hdr))
		return -1;
	memcpy(&hdr, h, offsetof(struct sdr_seg_hdr, heartbeat));
	if (hdr.magic != SDR_SEG_MAGIC) {
		set_err(ctx, "bad segment magic 0x%08x", hdr.magic);
		return -1;
	}
	if (hdr.abi_major != SDR_ABI_MAJOR) {
		set_err(ctx, "daemon ABI %u.%u, libsdr speaks %u.%u", hdr.abi_major,
			hdr.abi_minor, SDR_ABI_MAJOR, SDR_ABI_MINOR);
		return -1;
	}
	if (hdr.seg_size != ctx->seg_size || hdr.sq_esize != sizeof(struct sdr_sqe) ||
	    hdr.cq_esize != sizeof(struct sdr_cqe) || !sdr_is_pow2(hdr.sq_entries) ||
	    !sdr_is_pow2(hdr.cq_entries) || hdr.sq_entries > (1u << 20) ||
	    hdr.cq_entries > (1u << 20) ||
	    !in_seg(hdr.sq_idx_off, sizeof(struct sdr_ring_idx), ctx->seg_size, SDR_CACHE_LINE) ||
	    !in_seg(hdr.cq_idx_off, sizeof(struct sdr_ring_idx), ctx->seg_size, SDR_CACHE_LINE) ||
	    !in_seg(hdr.sq_off, (uint64_t)hdr.sq_entries * hdr.sq_esize, ctx->seg_size, 8) ||
	    !in_seg(hdr.cq_off, (uint64_t)hdr.cq_entries * hdr.cq_esize, ctx->seg_size, 8)) {
		set_err(ctx, "malformed context segment header");
		return -1;
	}
	if (sdr_ring_attach(&ctx->sq, (struct sdr_ring_idx *)(ctx->seg + hdr.sq_idx_off),
			    ctx->seg + hdr.sq_off, hdr.sq_entries, hdr.sq_esize, 1) ||
	    sdr_ring_attach(&ctx->cq, (struct sdr_ring_idx *)(ctx->seg + hdr.cq_idx_off),
			    ctx->seg + hdr.cq_off, hdr.cq_entries, hdr.cq_esize, 0))
		return -1;
	ctx->cq_entries = hdr.cq_entries;
	return 0;
}

struct sdr_ctx *sdr_ctx_open(const char *path, const struct sdr_ctx_attr *attr)
{
	struct sockaddr_un sa;
	struct sdr_ctx *ctx;
	struct sdr_ctl_req req;
	struct sdr_ctl_resp resp;
	struct timeval tv;
	int fd = -1, rc, e;

	attach_err[0] = '\0';
	if (path == NULL || path[0] == '\0') {
		snprintf(attach_err, sizeof(attach_err), "no socket path");
		errno = EINVAL;
		return NULL;
	}
	if (attr) {
		for (size_t i = 0; i < sizeof(attr->reserved) / sizeof(attr->reserved[0]); i++)
			if (attr->reserved[i]) {
				snprintf(attach_err, sizeof(attach_err), "attr.reserved[%zu] is not 0", i);
				errno = EINVAL;
				return NULL;
			}
	}
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(attach_err, sizeof(attach_err), "socket path longer than %zu bytes",
			 sizeof(sa.sun_path) - 1);
		errno = ENAMETOOLONG;
		return NULL;
	}
	ctx = calloc(1, sizeof(*ctx));
	if (ctx == NULL) {
		snprintf(attach_err, sizeof(attach_err), "out of memory");
		return NULL;
	}
	ctx->ctl_timeout_ms = attr && attr->ctl_timeout_ms ? attr->ctl_timeout_ms : 5000;
	ctx->sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (ctx->sock < 0)
		goto fail_errno;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (connect(ctx->sock, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		goto fail_errno;
	tv.tv_sec = ctx->ctl_timeout_ms / 1000;
	tv.tv_usec = (ctx->ctl_timeout_ms % 1000) * 1000;
	setsockopt(ctx->sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(ctx->sock, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));

	memset(&req, 0, sizeof(req));
	req.type = SDR_CTL_HELLO;
	rc = ctl_call(ctx, &req, -1, &resp, &fd);
	if (rc) {
		if (getenv("SDR_DEBUG"))
			fprintf(stderr, "libsdr: attach to %s: %s\n", path, ctx->errmsg);
		errno = -rc;
		goto fail;
	}
	if (fd < 0) {
		errno = EPROTO;
		goto fail;
	}
	ctx->seg_size = resp.seg_size;
	ctx->seg = map_segment(fd, resp.seg_size);
	e = errno;
	close(fd);
	if (ctx->seg == NULL) {
		errno = e == ENOMEM ? ENOMEM : EPROTO;
		goto fail;
	}
	if (seg_attach(ctx)) {
		if (getenv("SDR_DEBUG"))
			fprintf(stderr, "libsdr: %s\n", ctx->errmsg);
		errno = EPROTO;
		goto fail;
	}
	ctx->wcq_cap = 2 * ctx->cq_entries;
	ctx->wcq = calloc(ctx->wcq_cap, sizeof(*ctx->wcq));
	if (ctx->wcq == NULL)
		goto fail;
	return ctx;

fail_errno:
	/* errno from the failing call */
	e = errno;
	set_err(ctx, "cannot connect to %s: %s", path, strerror(e));
	errno = e;
fail:
	e = errno;
	snprintf(attach_err, sizeof(attach_err), "%s",
		 sdr_last_error(ctx)[0] ? sdr_last_error(ctx) : strerror(e));
	if (ctx->seg)
		munmap(ctx->seg, ctx->seg_size);
	if (ctx->sock >= 0)
		close(ctx->sock);
	free(ctx->wcq);
	free(ctx);
	errno = e;
	return NULL;
}

static void qp_free(struct sdr_qp *qp);

void sdr_ctx_close(struct sdr_ctx *ctx)
{
	struct sdr_buf *b, *nb;

	if (ctx == NULL)
		return;
	/* Closing the socket detaches: the daemon tears down our QPs and MRs. */
	for (uint32_t i = 0; i < ctx->cap_qps; i++)
		if (ctx->qps[i])
			qp_free(ctx->qps[i]);
	for (uint32_t i = 0; i < ctx->nmrs; i++)
		free(ctx->mrs[i]);
	for (b = ctx->bufs; b; b = nb) {
		nb = b->next;
		munmap(b->addr, b->len);
		close(b->fd);
		free(b);
	}
	if (ctx->seg)
		munmap(ctx->seg, ctx->seg_size);
	close(ctx->sock);
	free(ctx->qps);
	free(ctx->mrs);
	free(ctx->wcq);
	free(ctx);
}

int sdr_ctx_stats_get(const struct sdr_ctx *ctx, struct sdr_ctx_stats *st)
{
	if (ctx == NULL || st == NULL)
		return -EINVAL;
	*st = ctx->st;
	return 0;
}

/* ---------------- memory ---------------- */

void *sdr_buf_alloc(struct sdr_ctx *ctx, size_t len)
{
	long pg = sysconf(_SC_PAGESIZE);
	struct sdr_buf *b;
	size_t alen;
	int e;

	if (ctx == NULL || len == 0 || len > (SIZE_MAX >> 1)) {
		errno = EINVAL;
		return NULL;
	}
	alen = (len + (size_t)pg - 1) & ~((size_t)pg - 1);
	b = calloc(1, sizeof(*b));
	if (b == NULL)
		return NULL;
	b->fd = memfd_create("sdr-buf", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (b->fd < 0)
		goto fail;
	/* The DPU maps this file: seal it against shrinking, or a truncate
	 * would fault the daemon (it refuses unsealed memfds with EPERM). */
	if (ftruncate(b->fd, (off_t)alen) < 0 ||
	    fcntl(b->fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) < 0)
		goto fail;
	/* populated: faulting page by page is slow (and slower in a VM) */
	b->addr = mmap(NULL, alen, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, b->fd, 0);
	if (b->addr == MAP_FAILED)
		goto fail;
	b->len = alen;
	b->next = ctx->bufs;
	ctx->bufs = b;
	return b->addr;
fail:
	e = errno;
	if (b->fd >= 0)
		close(b->fd);
	free(b);
	errno = e;
	return NULL;
}

int sdr_buf_free(struct sdr_ctx *ctx, void *addr)
{
	struct sdr_buf **pp, *b;

	if (ctx == NULL)
		return -EINVAL;
	for (pp = &ctx->bufs; (b = *pp) != NULL; pp = &b->next)
		if (b->addr == addr)
			break;
	if (b == NULL)
		return -EINVAL;
	if (b->mr_refs)
		return -EBUSY;
	*pp = b->next;
	munmap(b->addr, b->len);
	close(b->fd);
	free(b);
	return 0;
}

static struct sdr_mr *mr_new(struct sdr_ctx *ctx)
{
	struct sdr_mr *mr = ctx->mr_free;

	if (mr) {
		ctx->mr_free = mr->next_free;
		return mr;
	}
	if (ctx->nmrs == ctx->cap_mrs) {
		uint32_t cap = ctx->cap_mrs ? 2 * ctx->cap_mrs : 16;
		struct sdr_mr **n = realloc(ctx->mrs, cap * sizeof(*n));

		if (n == NULL)
			return NULL;
		ctx->mrs = n;
		ctx->cap_mrs = cap;
	}
	mr = calloc(1, sizeof(*mr));
	if (mr)
		ctx->mrs[ctx->nmrs++] = mr;
	return mr;
}

static struct sdr_mr *mr_register(struct sdr_ctx *ctx, struct sdr_buf *b, int fd, uint64_t off,
				  uint64_t len, uint8_t *addr)
{
	struct sdr_ctl_req req;
	struct sdr_ctl_resp resp;
	struct sdr_mr *mr;
	int rc;

	mr = mr_new(ctx);
	if (mr == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	memset(&req, 0, sizeof(req));
	req.type = SDR_CTL_MR_REG;
	req.fd_offset = off;
	req.length = len;
	rc = ctl_call(ctx, &req, fd, &resp, NULL);
	if (rc) {
		mr->next_free = ctx->mr_free;
		ctx->mr_free = mr;
		errno = -rc;
		return NULL;
	}
	memset(mr, 0, sizeof(*mr));
	mr->ctx = ctx;
	mr->buf = b;
	mr->addr = addr;
	mr->len = len;
	mr->id = resp.id;
	mr->valid = 1;
	if (b)
		b->mr_refs++;
	return mr;
}

struct sdr_mr *sdr_mr_reg(struct sdr_ctx *ctx, void *addr, size_t len, uint32_t flags)
{
	struct sdr_buf *b;
	uint8_t *a = addr;

	if (ctx == NULL || addr == NULL || len == 0 || flags != 0) {
		errno = EINVAL;
		return NULL;
	}
	for (b = ctx->bufs; b; b = b->next)
		if (a >= b->addr && a < b->addr + b->len && len <= (size_t)(b->addr + b->len - a))
			break;
	if (b == NULL) {
		set_err(ctx, "address range is not inside an sdr_buf_alloc() buffer");
		errno = EINVAL;
		return NULL;
	}
	return mr_register(ctx, b, b->fd, (uint64_t)(a - b->addr), len, a);
}

struct sdr_mr *sdr_mr_reg_fd(struct sdr_ctx *ctx, int fd, uint64_t offset, size_t len, void *addr)
{
	if (ctx == NULL || fd < 0 || len == 0 || offset + len < offset) {
		errno = EINVAL;
		return NULL;
	}
	return mr_register(ctx, NULL, fd, offset, len, addr);
}

int sdr_mr_dereg(struct sdr_mr *mr)
{
	struct sdr_ctl_req req;
	struct sdr_ctl_resp resp;
	struct sdr_ctx *ctx;
	int rc;

	if (mr == NULL || !mr->valid)
		return -EINVAL;
	ctx = mr->ctx;
	memset(&req, 0, sizeof(req));
	req.type = SDR_CTL_MR_DEREG;
	req.mr_id = mr->id;
	rc = ctl_call(ctx, &req, -1, &resp, NULL);
	if (rc)
		return rc;
	mr->valid = 0;
	if (mr->buf)
		mr->buf->mr_refs--;
	mr->next_free = ctx->mr_free;
	ctx->mr_free = mr;
	return 0;
}

void *sdr_mr_addr(const struct sdr_mr *mr) { return mr ? mr->addr : NULL; }
size_t sdr_mr_length(const struct sdr_mr *mr) { return mr ? (size_t)mr->len : 0; }
uint32_t sdr_mr_id(const struct sdr_mr *mr) { return mr ? mr->id : 0; }

/* ---------------- QPs ---------------- */

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
	set_err(ctx, "malformed QP segment");
	return -1;
}

static void qp_free(struct sdr_qp *qp)
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
	free(qp);
}

/* The daemon's range of a QP rate (the same at create and at rate_set). */
static int rate_ok(uint64_t bps)
{
	return bps == 0 || (bps >= SDR_QP_RATE_MIN && bps <= SDR_QP_RATE_MAX);
}

struct sdr_qp *sdr_qp_create(struct sdr_ctx *ctx, const struct sdr_qp_attr *attr)
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
		for (int i = 0; i < 3; i++)
			if (attr->reserved[i]) {
				errno = EINVAL;
				return NULL;
			}
		if (!rate_ok(attr->rate_bps)) {
			set_err(ctx, "rate_bps %llu out of range (0 = unpaced, else %llu .. %llu bit/s)",
				(unsigned long long)attr->rate_bps, SDR_QP_RATE_MIN, SDR_QP_RATE_MAX);
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
	}
	rc = ctl_call(ctx, &req, -1, &resp, &fd);
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
		set_err(ctx, "malformed QP_CREATE response");
		e = EPROTO;
		goto fail;
	}
	qp->seg_size = resp.seg_size;
	qp->seg = map_segment(fd, resp.seg_size);
	if (qp->seg == NULL) {
		e = errno == ENOMEM ? ENOMEM : EPROTO;
		goto fail;
	}
	if (qseg_attach(ctx, qp)) {
		e = EPROTO;
		goto fail;
	}
	close(fd);
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
	ctl_call(ctx, &req, -1, &resp, NULL);
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
	memset(&req, 0, sizeof(req));
	req.type = SDR_CTL_QP_DESTROY;
	req.qp_id = qp->qp_id;
	rc = ctl_call(qp->ctx, &req, -1, &resp, NULL);
	qp_free(qp);
	return rc;
}

int sdr_qp_rate_set(struct sdr_qp *qp, uint64_t rate_bps)
{
	struct sdr_ctl_req req;
	struct sdr_ctl_resp resp;

	if (qp == NULL)
		return -EINVAL;
	if (!rate_ok(rate_bps)) {
		set_err(qp->ctx, "rate_bps %llu out of range (0 = unpaced, else %llu .. %llu bit/s)",
			(unsigned long long)rate_bps, SDR_QP_RATE_MIN, SDR_QP_RATE_MAX);
		return -EINVAL;
	}
	memset(&req, 0, sizeof(req));
	req.type = SDR_CTL_QP_SET_RATE;
	req.qp_id = qp->qp_id;
	req.qp_attr.rate_bps = rate_bps;
	return ctl_call(qp->ctx, &req, -1, &resp, NULL);
}

int sdr_qp_info_get(const struct sdr_qp *qp, struct sdr_qp_info *info)
{
	if (qp == NULL || info == NULL)
		return -EINVAL;
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
	if (!info_sane(remote)) {
		set_err(qp->ctx, "invalid remote QP info");
		return -EINVAL;
	}
	if (qp->connected)
		return -EISCONN;
	memset(&req, 0, sizeof(req));
	req.type = SDR_CTL_QP_CONNECT;
	req.qp_id = qp->qp_id;
	req.remote = *remote;
	rc = ctl_call(qp->ctx, &req, -1, &resp, NULL);
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
uint32_t sdr__qp_id(const struct sdr_qp *qp) { return qp ? qp->qp_id : 0; }
uint32_t sdr__outstanding(const struct sdr_ctx *ctx) { return ctx ? ctx->outstanding : 0; }
#endif

/* ---------------- completions ---------------- */

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
 * -1 when the queue has no room (leave the CQE in the ring). */
static int cqe_process(struct sdr_ctx *ctx, const struct sdr_cqe *c)
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
		mark_dead(ctx);
}

/* Drain the CQ ring. Returns CQEs processed, or -EIO on a corrupt ring. */
static int progress(struct sdr_ctx *ctx)
{
	int64_t avail = sdr_ring_avail_checked(&ctx->cq);
	int n = 0;

	if (avail < 0) {
		set_err(ctx, "CQ ring index corrupt");
		mark_dead(ctx);
		return -EIO;
	}
	while (avail-- > 0) {
		struct sdr_cqe c;

		memcpy(&c, sdr_ring_peek(&ctx->cq, 0), sizeof(c));
		if (cqe_process(ctx, &c))
			break;
		sdr_ring_consume(&ctx->cq, 1);
		ctx->st.cqe_seen++;
		n++;
	}
	if (n == 0 && !ctx->dead && ++ctx->idle % IDLE_PROBE_EVERY == 0)
		probe_daemon(ctx);
	return n;
}

static inline void reap(struct sdr_ctx *ctx, struct sdr_op *op)
{
	if (!op->reaped) {
		op->reaped = 1;
		ctx->outstanding--;
	}
}

int sdr_cq_poll(struct sdr_ctx *ctx, struct sdr_wc *wc, int max)
{
	int n = 0, rc;

	if (ctx == NULL || max < 0 || (max > 0 && wc == NULL))
		return -EINVAL;
	rc = progress(ctx);
	while (n < max && ctx->wcq_head != ctx->wcq_tail) {
		struct wcq_ent *e = &ctx->wcq[ctx->wcq_head++ % ctx->wcq_cap];

		if (e->dead || (e->op && e->op->reaped))
			continue;
		if (e->op)
			reap(ctx, e->op);
		wc[n++] = e->wc;
	}
	if (n == 0 && rc < 0)
		return rc;
	if (n == 0 && ctx->dead && ctx->wcq_head == ctx->wcq_tail)
		return -EPIPE;
	return n;
}

/* ---------------- posting ---------------- */

static inline int sq_post(struct sdr_ctx *ctx, const struct sdr_sqe *sqe)
{
	if (sdr_ring_enqueue_burst(&ctx->sq, sqe, 1) != 1) {
		ctx->st.sq_full++;
		return fail(ctx, -EAGAIN, "SQ ring full");
	}
	ctx->st.sq_posted++;
	return 0;
}

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
static int desc_check(struct sdr_qp *qp, const struct sdr_sqe *sqe, const struct sdr_mr *mr)
{
	struct sdr_desc_qp v = {qp->local.max_msg, qp->local.mtu, qp->connected};
	enum sdr_desc_why why;
	int rc = sdr_desc_check(sqe, &v, mr && mr->valid ? &mr->len : NULL, &why);

	return rc ? fail(qp->ctx, rc, sdr_desc_why_str(why)) : 0;
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
	if (sdr_ring_free(&ctx->sq) == 0) {
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
}

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

/* Post @p sqe as send number qp->send_seq and arm its handle. */
static int send_commit(struct sdr_qp *qp, struct sdr_op *op, struct sdr_sqe *sqe, uint64_t wr_id,
		       int stream, struct sdr_send_handle **h)
{
	int rc;

	sqe->qp_id = (uint16_t)qp->qp_id;
	sqe->wr_id = cookie_make(qp->idx, 0, qp->send_seq);
	rc = sq_post(qp->ctx, sqe);
	if (rc)
		return rc;
	op_arm(op, qp->send_seq++, sqe->length, wr_id);
	op->stream = stream;
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
	if (qp->ctx->dead)
		return -EPIPE;
	rc = mr_offset(qp->ctx, wr->mr, wr->addr, wr->offset, &off);
	if (rc)
		return rc;
	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = SDR_SQ_SEND;
	sqe.qp_id = (uint16_t)qp->qp_id;
	sqe.mr_id = wr->mr->id;
	sqe.offset = off;
	sqe.length = wr->length;
	sqe.imm = wr->imm;
	rc = send_check(qp, &sqe, wr->mr);
	if (rc)
		return rc;
	op = &qp->sh[qp->send_seq % SDR_HANDLES].op;
	rc = budget_check(qp->ctx, op);
	if (rc)
		return rc;
	return send_commit(qp, op, &sqe, wr->wr_id, 0, h);
}

int sdr_send_stream_start(struct sdr_qp *qp, const struct sdr_stream_start_wr *wr,
			  struct sdr_send_handle **h)
{
	struct sdr_sqe sqe;
	struct sdr_op *op;
	int rc;

	if (qp == NULL || wr == NULL)
		return -EINVAL;
	if (qp->ctx->dead)
		return -EPIPE;
	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = SDR_SQ_STREAM_START;
	sqe.qp_id = (uint16_t)qp->qp_id;
	sqe.length = wr->length;
	sqe.imm = wr->imm;
	rc = send_check(qp, &sqe, NULL);
	if (rc)
		return rc;
	op = &qp->sh[qp->send_seq % SDR_HANDLES].op;
	rc = budget_check(qp->ctx, op);
	if (rc)
		return rc;
	return send_commit(qp, op, &sqe, wr->wr_id, 1, h);
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
	if (ctx->dead)
		return -EPIPE;
	if (op->state != OP_PENDING || op->stream != 1)
		return fail(ctx, -EINVAL, "not an open stream");
	if (wr->msg_offset % qp->mtu)
		return fail(ctx, -EINVAL, "msg_offset not a multiple of the MTU");
	if (wr->length == 0 || wr->msg_offset > op->length || wr->length > op->length - wr->msg_offset)
		return fail(ctx, -EMSGSIZE, "length 0 or past the end of the stream");
	if (wr->msg_offset + wr->length != op->length && wr->length % qp->mtu)
		return fail(ctx, -EINVAL, "stream data must be whole packets unless it ends the message");
	rc = mr_offset(ctx, wr->mr, wr->addr, wr->offset, &off);
	if (rc)
		return rc;
	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = SDR_SQ_STREAM_DATA;
	sqe.qp_id = (uint16_t)qp->qp_id;
	sqe.mr_id = wr->mr->id;
	sqe.wr_id = cookie_make(qp->idx, 0, op->seq);
	sqe.offset = off;
	sqe.length = wr->length;
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
	if (ctx->dead)
		return -EPIPE;
	if (op->state != OP_PENDING || op->stream != 1)
		return fail(ctx, -EINVAL, "not an open stream");
	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = SDR_SQ_STREAM_END;
	sqe.qp_id = (uint16_t)op->qp->qp_id;
	sqe.wr_id = cookie_make(op->qp->idx, 0, op->seq);
	sqe.seq = op->seq;
	rc = desc_check(op->qp, &sqe, NULL);
	if (rc == 0)
		rc = sq_post(ctx, &sqe);
	if (rc == 0)
		op->stream = 2;
	return rc;
}

static int op_poll(struct sdr_op *op)
{
	struct sdr_ctx *ctx = op->qp->ctx;

	if (op->state == OP_FREE)
		return -EINVAL;
	if (op->state == OP_PENDING) {
		int rc = progress(ctx);

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

int sdr_send_poll(struct sdr_send_handle *h)
{
	return h ? op_poll(&h->op) : -EINVAL;
}

uint32_t sdr_send_seq(const struct sdr_send_handle *h) { return h ? h->op.seq : 0; }

/* ---------------- receives ---------------- */

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
	int rc;

	if (qp == NULL || wr == NULL)
		return -EINVAL;
	ctx = qp->ctx;
	if (ctx->dead)
		return -EPIPE;
	if (wr->reserved)
		return fail(ctx, -EINVAL, "reserved field not 0");
	rc = mr_offset(ctx, wr->mr, wr->addr, wr->offset, &off);
	if (rc)
		return rc;
	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = SDR_SQ_RECV;
	sqe.qp_id = (uint16_t)qp->qp_id;
	sqe.mr_id = wr->mr->id;
	sqe.offset = off;
	sqe.length = wr->length;
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
	rc = sq_post(ctx, &sqe);
	if (rc)
		return rc;
	op_arm(op, seq, wr->length, wr->wr_id);
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
	ctx = op->qp->ctx;
	if (ctx->dead)
		return -EPIPE;
	if (op->state == OP_PENDING)
		progress(ctx);
	if (op->state != OP_PENDING || op->complete_req)
		return -EALREADY;
	memset(&sqe, 0, sizeof(sqe));
	sqe.opcode = SDR_SQ_RECV_COMPLETE;
	sqe.qp_id = (uint16_t)op->qp->qp_id;
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
	return h ? op_poll(&h->op) : -EINVAL;
}

uint32_t sdr_recv_seq(const struct sdr_recv_handle *h) { return h ? h->op.seq : 0; }
