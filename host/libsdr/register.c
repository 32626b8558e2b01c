/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libsdr's memory registration (host library layer): sealed memfd buffers
 * (sdr_buf_alloc/free) and the MRs the daemon maps from them or from a
 * caller's descriptor (sdr_mr_reg, sdr_mr_reg_fd, sdr_mr_dereg). Each MR keeps
 * its file and range, which restore.c registers again after a daemon restart.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sdr_priv.h"

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
	int rc, own = -1;

	mr = mr_new(ctx);
	if (mr == NULL) {
		errno = ENOMEM;
		return NULL;
	}
	/* the caller may close its fd: keep one to register it again after a
	 * daemon restart */
	if (b == NULL && ctx->reattach_ms != SDR_REATTACH_OFF) {
		own = fcntl(fd, F_DUPFD_CLOEXEC, 0);
		if (own < 0) {
			rc = -errno;
			goto fail;
		}
	}
	memset(&req, 0, sizeof(req));
	req.type = SDR_CTL_MR_REG;
	req.fd_offset = off;
	req.length = len;
	rc = libsdr_ctl(ctx, &req, fd, &resp, NULL);
	if (rc)
		goto fail;
	memset(mr, 0, sizeof(*mr));
	mr->ctx = ctx;
	mr->buf = b;
	mr->addr = addr;
	mr->len = len;
	mr->id = resp.id;
	mr->valid = 1;
	mr->fd = own >= 0 ? own : fd;
	mr->fd_own = own >= 0;
	mr->fd_off = off;
	if (b)
		b->mr_refs++;
	return mr;
fail:
	if (own >= 0)
		close(own);
	mr->next_free = ctx->mr_free;
	ctx->mr_free = mr;
	errno = -rc;
	return NULL;
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
		libsdr_set_err(ctx, "address range is not inside an sdr_buf_alloc() buffer");
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
	rc = libsdr_chan_mr_dereg(mr); /* its copies on the channel contexts */
	if (rc)
		return rc;
	restore_drive(ctx);
	/* the daemon is gone (re-attach pending): it has forgotten the MR
	 * already, and the re-attach will not register it again */
	if (ctx->rstate != R_DOWN || ctx->dead) {
		memset(&req, 0, sizeof(req));
		req.type = SDR_CTL_MR_DEREG;
		req.mr_id = mr->id;
		rc = libsdr_ctl(ctx, &req, -1, &resp, NULL);
		if (rc)
			return rc;
	}
	mr->valid = 0;
	if (mr->fd_own)
		close(mr->fd);
	mr->fd_own = 0;
	if (mr->buf)
		mr->buf->mr_refs--;
	mr->next_free = ctx->mr_free;
	ctx->mr_free = mr;
	return 0;
}

void *sdr_mr_addr(const struct sdr_mr *mr)
{
	return mr ? mr->addr : NULL;
}
size_t sdr_mr_length(const struct sdr_mr *mr)
{
	return mr ? (size_t)mr->len : 0;
}
uint32_t sdr_mr_id(const struct sdr_mr *mr)
{
	return mr ? mr->id : 0;
}
