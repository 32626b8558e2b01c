/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libsdr's context set-up (host library layer): attach to the daemon
 * (sdr_ctx_open: connect, HELLO, map and check the context segment with its
 * SQ/CQ rings), detach (sdr_ctx_close), the context's counters and the reason
 * of the last failure. (Re-attaching to a restarted daemon: restore.c.)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "sdr_priv.h"

/* Reason of this thread's last failed sdr_ctx_open() (no context to keep it). */
static __thread char attach_err[256];

const char *sdr_last_error(const struct sdr_ctx *ctx)
{
	if (ctx == NULL)
		return attach_err;
	return ctx->err_static ? ctx->err_static : ctx->errmsg;
}

uint64_t libsdr_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int libsdr_seg_attach(struct sdr_ctx *ctx)
{
	const struct sdr_seg_hdr *h = (const struct sdr_seg_hdr *)ctx->seg;
	/* copy once: the header lives in shared memory */
	struct sdr_seg_hdr hdr;

	if (ctx->seg_size < sizeof(hdr))
		return -1;
	memcpy(&hdr, h, offsetof(struct sdr_seg_hdr, heartbeat));
	if (hdr.magic != SDR_SEG_MAGIC) {
		libsdr_set_err(ctx, "bad segment magic 0x%08x", hdr.magic);
		return -1;
	}
	if (hdr.abi_major != SDR_ABI_MAJOR) {
		libsdr_set_err(ctx, "daemon ABI %u.%u, libsdr speaks %u.%u", hdr.abi_major,
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
		libsdr_set_err(ctx, "malformed context segment header");
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
	return libsdr_ctx_attach(path, attr, 0);
}

/* sdr_ctx_open(), and a channel context (chan.c) with the worker it asks for
 * (@p want_worker: worker + 1; 0 = the daemon's round robin) */
struct sdr_ctx *libsdr_ctx_attach(const char *path, const struct sdr_ctx_attr *attr,
				  uint32_t want_worker)
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
				snprintf(attach_err, sizeof(attach_err),
					 "attr.reserved[%zu] is not 0", i);
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
	ctx->reattach_ms = libsdr_reattach_window(attr);
	memcpy(ctx->path, path, strlen(path) + 1);
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
	req.want_worker = ctx->want_worker = want_worker;
	rc = libsdr_ctl_call(ctx, &req, -1, &resp, &fd);
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
	ctx->ext = resp.ext;
	if (want_worker && !(ctx->ext & SDR_EXT_VALID)) {
		close(fd);
		libsdr_set_err(ctx, "the daemon does not know channels (older than libsdr 2.3)");
		errno = ENOTSUP;
		goto fail;
	}
	ctx->seg_size = resp.seg_size;
	ctx->seg = libsdr_map_segment(fd, resp.seg_size);
	e = errno;
	close(fd);
	if (ctx->seg == NULL) {
		errno = e == ENOMEM ? ENOMEM : EPROTO;
		goto fail;
	}
	if (libsdr_seg_attach(ctx)) {
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
	libsdr_set_err(ctx, "cannot connect to %s: %s", path, strerror(e));
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

void sdr_ctx_close(struct sdr_ctx *ctx)
{
	struct sdr_buf *b, *nb;

	if (ctx == NULL)
		return;
	libsdr_chan_ctx_close(ctx); /* its multi-channel QPs and channel contexts */
	/* Closing the socket detaches: the daemon tears down our QPs and MRs. */
	for (uint32_t i = 0; i < ctx->cap_qps; i++)
		if (ctx->qps[i])
			libsdr_qp_free(ctx->qps[i]);
	for (uint32_t i = 0; i < ctx->nmrs; i++) {
		if (ctx->mrs[i]->valid && ctx->mrs[i]->fd_own)
			close(ctx->mrs[i]->fd);
		free(ctx->mrs[i]);
	}
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

#ifdef SDR_LIBSDR_SYMVER
/* libsdr.so: of LIBSDR_2.2 (the struct grew); compat.c answers @LIBSDR_2 */
__asm__(".symver sdr_ctx_stats_get, sdr_ctx_stats_get@@@LIBSDR_2.2");
#endif
int sdr_ctx_stats_get(const struct sdr_ctx *ctx, struct sdr_ctx_stats *st)
{
	if (ctx == NULL || st == NULL)
		return -EINVAL;
	*st = ctx->st;
	return 0;
}

/* sdr_ctx_stats_get@LIBSDR_2 (compat.c): the callers linked against 2.0/2.1
 * have the struct as it was, up to wc_orphaned. */
int libsdr_ctx_stats_get_2_0(const struct sdr_ctx *ctx, struct sdr_ctx_stats *st);
int libsdr_ctx_stats_get_2_0(const struct sdr_ctx *ctx, struct sdr_ctx_stats *st)
{
	if (ctx == NULL || st == NULL)
		return -EINVAL;
	memcpy(st, &ctx->st, offsetof(struct sdr_ctx_stats, reattaches));
	return 0;
}

int sdr_ctx_state(const struct sdr_ctx *ctx)
{
	if (ctx == NULL)
		return -EINVAL;
	if (ctx->dead)
		return SDR_CTX_DEAD;
	return ctx->rstate == R_LIVE ? SDR_CTX_LIVE : SDR_CTX_REATTACHING;
}
