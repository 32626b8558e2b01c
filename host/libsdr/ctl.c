/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libsdr's control channel (host library layer): one blocking request and
 * one response on the daemon's SOCK_SEQPACKET socket, with a descriptor either
 * way; mapping the segments the daemon hands out; error strings and reasons.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sdr_fdpass.h"
#include "sdr_priv.h"

void libsdr_set_err(struct sdr_ctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ctx->errmsg, sizeof(ctx->errmsg), fmt, ap);
	va_end(ap);
	ctx->err_static = NULL;
}

const char *sdr_strerror(int status)
{
	switch (status) {
	case 0: return "success";
	case -EINVAL: return "malformed descriptor or invalid argument";
	case -EBADF: return "unknown QP";
	case -ENOENT: return "unknown or deregistered MR";
	case -ERANGE: return "offset + length outside the MR";
	case -EMSGSIZE:
		return "zero length, longer than max_msg, or longer than the posted receive";
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
	case -ECONNABORTED:
		return "aborted by a daemon restart (QP not restored, or a stream open at the "
		       "restart)";
	default: return status < 0 ? strerror(-status) : "unknown status";
	}
}

void libsdr_mark_dead(struct sdr_ctx *ctx)
{
	if (ctx->attaching) { /* restore.c tries again later */
		ctx->attach_lost = 1;
		return;
	}
	if (!ctx->dead)
		libsdr_set_err(ctx, "daemon connection lost");
	ctx->dead = 1;
}

/* One request, one response. @p fd_in (or -1) travels with the request;
 * @p fd_out receives the response's descriptor (or -1). Returns 0 or -errno
 * (the daemon's status, with its reason in ctx->errmsg). */
int libsdr_ctl_call(struct sdr_ctx *ctx, struct sdr_ctl_req *req, int fd_in,
		    struct sdr_ctl_resp *resp, int *fd_out)
{
	uint16_t type = req->type;
	ssize_t n;
	int got_fd = -1, peer_gone = 0, resets = 0;

	if (fd_out)
		*fd_out = -1;
	if (ctx->dead || (ctx->rstate == R_DOWN && !ctx->attaching))
		return -EPIPE;
	req->magic = SDR_CTL_MAGIC;
	req->abi_major = SDR_ABI_MAJOR;
	req->abi_minor = SDR_ABI_MINOR;

	/* both ways bounded by the socket's SO_SNDTIMEO / SO_RCVTIMEO
	 * (ctl_timeout_ms, set at open) */
	n = sdr_fd_send(ctx->sock, req, sizeof(*req), fd_in, -1);
	if (n) {
		if (n == -ETIMEDOUT) {
			libsdr_mark_dead(ctx);
			libsdr_set_err(ctx, "control request timed out");
			return -ETIMEDOUT;
		}
		if (n != -EPIPE && n != -ECONNRESET) {
			libsdr_conn_lost(ctx);
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
		libsdr_conn_lost(ctx);
		return -EPIPE;
	}
	if (n == -ETIMEDOUT) {
		/* A late answer would be taken for the next request's: give up
		 * on this connection. */
		libsdr_mark_dead(ctx);
		libsdr_set_err(ctx, "daemon did not answer within %u ms", ctx->ctl_timeout_ms);
		return -ETIMEDOUT;
	}
	if (n <= 0 && n != -EMSGSIZE) {
		libsdr_conn_lost(ctx);
		return -EPIPE;
	}
	if (n != (ssize_t)sizeof(*resp) || resp->magic != SDR_CTL_MAGIC || resp->type != type) {
		if (got_fd >= 0)
			close(got_fd);
		libsdr_mark_dead(ctx);
		libsdr_set_err(ctx, "malformed control response");
		return -EPROTO;
	}
	resp->msg[sizeof(resp->msg) - 1] = '\0';
	if (resp->status != 0) {
		if (got_fd >= 0)
			close(got_fd);
		if (resp->status > 0 || resp->status < -4095) {
			libsdr_set_err(ctx, "daemon returned invalid status %d", resp->status);
			return -EPROTO;
		}
		libsdr_set_err(ctx, "%s", resp->msg[0] ? resp->msg : strerror(-resp->status));
		if (peer_gone && ctx->attaching)
			ctx->attach_lost = 1;
		else if (peer_gone)
			ctx->dead = 1; /* (keeping the daemon's reason) */
		return resp->status;
	}
	if (peer_gone) { /* a success reply and a hang-up: the hang-up counts */
		if (got_fd >= 0)
			close(got_fd);
		libsdr_conn_lost(ctx);
		return -EPIPE;
	}
	if (fd_out)
		*fd_out = got_fd;
	else if (got_fd >= 0)
		close(got_fd);
	return 0;
}

/* mmap a daemon-provided segment, checking the fd really is that large. */
void *libsdr_map_segment(int fd, uint64_t size)
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
