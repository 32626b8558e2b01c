/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nccl_xfer.c - the plugin's data path (host layer, NCCL net plugin over
 * libsdr): isend/irecv post one libsdr message each (a send copies into the
 * shadow), test polls the device's completions and routes each to its comm's
 * request by wr_id, copying a receive out in address order; iflush is a
 * no-op (host memory). docs/nccl.md.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/socket.h>

#include "nccl_priv.h"

/* The immediate of a zero-byte send (carried in a 1-byte message): libsdr
 * messages hold at least one byte. With SDR_NCCL_TAGS=1 every message carries
 * NS_IMM_TAG | (tag & 0x3fffffff) and the receive checks it. */
#define NS_IMM_ZERO 0x80000000u
#define NS_IMM_TAG 0x40000000u
#define NS_PEER_GRACE_MS 2000

static struct ns_req *ns_req_get(struct ns_comm *c)
{
	for (int i = 0; i < NN_MAX_REQUESTS; i++) {
		if (c->req[i].state == REQ_FREE) {
			struct ns_req *r = &c->req[i];
			memset(r, 0, sizeof(*r));
			r->comm = c;
			r->gen = ++c->gen & 0xffffff;
			return r;
		}
	}
	return NULL;
}

/* wr_id: comm id (32 bits) | request generation (24) | slot (8) */
static uint64_t ns_wr_id(struct ns_comm *c, struct ns_req *r)
{
	return (uint64_t)c->id << 32 | (uint64_t)r->gen << 8 | (uint64_t)(r - c->req);
}

static nn_result_t ns_fail_status(struct ns_comm *c, int rc, const char *what)
{
	if (rc == -EPIPE) {
		WARN("%s: the sdr-dpu daemon (%s) is gone", what, ns_sock[c->dev]);
		c->d->broken = c->broken = NN_SYSTEM_ERROR;
		return NN_SYSTEM_ERROR;
	}
	WARN("%s: %s", what, sdr_strerror(rc));
	return rc == -EMSGSIZE || rc == -EINVAL || rc == -ERANGE ? NN_INTERNAL_ERROR
								 : NN_SYSTEM_ERROR;
}

/* Post one send or receive of @p size bytes at @p data (inside @p m). */
static nn_result_t ns_post(struct ns_comm *c, int send, void *data, size_t size, int tag,
			   struct ns_mr *m, void **request)
{
	struct ns_req *r;
	uint64_t off = 0;
	struct sdr_mr *mr = c->scratch_mr;
	int rc;

	*request = NULL;
	if (c->d->broken && !c->broken) {
		WARN("%s: the sdr-dpu daemon (%s) is gone", send ? "isend" : "irecv",
		     ns_sock[c->dev]);
		c->broken = c->d->broken;
	}
	if (c->broken)
		return c->broken;
	if (size > c->max_msg) {
		WARN("%s of %zu bytes: larger than a message (%u bytes: the daemon's --max-msg, "
		     "SDR_MAX_MSG); lower NCCL_BUFFSIZE",
		     send ? "isend" : "irecv", size, c->max_msg);
		return NN_INTERNAL_ERROR;
	}
	if (size > 0) {
		if (!m || (char *)data < m->base || (char *)data + size > m->base + m->len) {
			WARN("%s: buffer %p+%zu not inside its registration",
			     send ? "isend" : "irecv", data, size);
			return NN_INTERNAL_ERROR;
		}
		off = (uint64_t)((char *)data - m->base);
		mr = m->mr;
	}
	r = ns_req_get(c);
	if (!r)
		return NN_SUCCESS; /* all NN_MAX_REQUESTS in flight: NCCL tries again */
	r->send = send;
	r->size = size;
	r->data = data;
	r->tag = tag;
	r->shadow = size ? m->shadow + off : NULL;
	if (send) {
		struct sdr_send_wr wr = {.mr = mr,
					 .offset = off,
					 .length = size ? size : 1,
					 .wr_id = ns_wr_id(c, r)};
		if (size == 0)
			wr.imm = NS_IMM_ZERO;
		else if (ns_check_tags)
			wr.imm = NS_IMM_TAG | ((uint32_t)tag & 0x3fffffffu);
		if (size)
			memcpy(r->shadow, data, size);
		rc = sdr_send_post(c->qp, &wr, NULL);
	} else {
		struct sdr_recv_wr wr = {.mr = mr,
					 .offset = off,
					 .length = size ? size : 1,
					 .wr_id = ns_wr_id(c, r)};
		rc = sdr_recv_post(c->qp, &wr, NULL);
	}
	if (rc == -EAGAIN)
		return NN_SUCCESS; /* ring full: back-pressure, slot stays free */
	if (rc != 0)
		return ns_fail_status(c, rc, send ? "isend" : "irecv");
	if (send && size)
		c->copied += size;
	r->state = REQ_POSTED;
	c->inflight++;
	*request = r;
	return NN_SUCCESS;
}

nn_result_t ns_isend(void *comm, void *data, size_t size, int tag, void *mh, void **req)
{
	struct ns_comm *c = comm;
	nn_result_t r;
	pthread_mutex_lock(c->lock);
	r = ns_post(c, 1, data, size, tag, mh, req);
	pthread_mutex_unlock(c->lock);
	return r;
}

nn_result_t ns_isend_v8(void *comm, void *data, int size, int tag, void *mh, void **req)
{
	if (size < 0)
		return NN_INTERNAL_ERROR;
	return ns_isend(comm, data, (size_t)size, tag, mh, req);
}

nn_result_t ns_isend_v10(void *comm, void *data, size_t size, int tag, void *mh, void *phandle,
			 void **req)
{
	(void)phandle;
	return ns_isend(comm, data, size, tag, mh, req);
}

nn_result_t ns_irecv(void *comm, int n, void **data, size_t *sizes, int *tags, void **mhs,
		     void **req)
{
	struct ns_comm *c = comm;
	nn_result_t r;
	if (n != 1) {
		WARN("irecv: %d grouped receives; this plugin announces maxRecvs 1", n);
		return NN_INTERNAL_ERROR;
	}
	pthread_mutex_lock(c->lock);
	r = ns_post(c, 0, data[0], sizes[0], tags ? tags[0] : 0, mhs ? mhs[0] : NULL, req);
	pthread_mutex_unlock(c->lock);
	return r;
}

nn_result_t ns_irecv_v8(void *comm, int n, void **data, int *sizes, int *tags, void **mhs,
			void **req)
{
	size_t s;
	if (n != 1 || sizes[0] < 0) {
		WARN("irecv: %d grouped receives; this plugin announces maxRecvs 1", n);
		return NN_INTERNAL_ERROR;
	}
	s = (size_t)sizes[0];
	return ns_irecv(comm, n, data, &s, tags, mhs, req);
}

nn_result_t ns_irecv_v10(void *comm, int n, void **data, size_t *sizes, int *tags, void **mhs,
			 void **phandles, void **req)
{
	(void)phandles;
	return ns_irecv(comm, n, data, sizes, tags, mhs, req);
}

nn_result_t ns_iflush(void *comm, int n, void **data, int *sizes, void **mhs, void **req)
{
	(void)comm;
	(void)n;
	(void)data;
	(void)sizes;
	(void)mhs;
	*req = NULL; /* host memory: the copy out of the shadow is the last write */
	return NN_SUCCESS;
}

/* Copy a received message out of its shadow into NCCL's buffer strictly
 * forward, 64 bytes at a time in address order: on x86 (TSO) the stores
 * become visible in that order, so a GPU polling NCCL's LL / LL128 flags
 * sees each flag after the data before it, as with a NIC writing in order
 * (memcpy may copy a block's end first). */
static void ns_copy_out(char *dst, const char *src, size_t n)
{
	size_t i = 0;
	for (; i + 64 <= n; i += 64) {
		__builtin_memcpy(dst + i, src + i, 64);
		__asm__ __volatile__("" ::: "memory");
	}
	for (; i < n; i++)
		dst[i] = src[i];
}

/* Apply one completion of the device's context to its comm's request. */
static void ns_complete(struct ns_dev *d, const struct sdr_wc *wc)
{
	unsigned idx = (unsigned)(wc->wr_id & 0xff);
	uint32_t id = (uint32_t)(wc->wr_id >> 32);
	struct ns_comm *c;
	struct ns_req *r;

	if (idx >= NN_MAX_REQUESTS || id == 0 || id > NS_MAX_COMMS || !(c = d->comms[id - 1]))
		return;
	r = &c->req[idx];
	if (r->state != REQ_POSTED || r->gen != (uint32_t)(wc->wr_id >> 8 & 0xffffff))
		return;
	if (wc->status != 0) {
		if (wc->status == -EMSGSIZE)
			WARN("%s of %zu bytes: size mismatch: %s", r->send ? "isend" : "irecv",
			     r->size,
			     r->send ? "the peer posted a smaller receive"
				     : "the peer sent more than this receive holds");
		else
			WARN("%s of %zu bytes failed: %s", r->send ? "isend" : "irecv", r->size,
			     sdr_strerror(wc->status));
		r->err = wc->status == -EMSGSIZE ? NN_INTERNAL_ERROR : NN_SYSTEM_ERROR;
		r->state = REQ_FAILED;
		c->broken = r->err; /* the QP's numbering is unknown from here */
		return;
	}
	if (r->send) {
		r->got = r->size;
	} else {
		int zero = (wc->flags & SDR_CQE_F_IMM) && wc->imm == NS_IMM_ZERO;
		if (wc->flags & (SDR_CQE_F_PARTIAL | SDR_CQE_F_IMM_PARTIAL)) {
			WARN("irecv of %zu bytes completed with data missing", r->size);
			r->err = NN_SYSTEM_ERROR;
			r->state = REQ_FAILED;
			c->broken = r->err;
			return;
		}
		if (ns_check_tags && !zero &&
		    (!(wc->flags & SDR_CQE_F_IMM) ||
		     wc->imm != (NS_IMM_TAG | ((uint32_t)r->tag & 0x3fffffffu)))) {
			WARN("irecv: tag mismatch: posted tag %d, the message carries %s0x%x",
			     r->tag, (wc->flags & SDR_CQE_F_IMM) ? "" : "no tag, ", wc->imm);
			r->err = NN_INTERNAL_ERROR;
			r->state = REQ_FAILED;
			c->broken = r->err;
			return;
		}
		r->got = zero ? 0 : wc->length;
		if (r->got > r->size) {
			WARN("irecv of %zu bytes: size mismatch: the peer sent %zu", r->size,
			     r->got);
			r->err = NN_INTERNAL_ERROR;
			r->state = REQ_FAILED;
			return;
		}
		if (r->got) {
			ns_copy_out(r->data, r->shadow, r->got);
			c->copied += r->got;
		}
	}
	c->msgs++;
	c->bytes += r->got;
	r->state = REQ_DONE;
}

/* The side channel closed while requests are pending: the peer exited (or
 * closed its comm) and they will never complete. */
static int ns_peer_gone(struct ns_comm *c)
{
	uint64_t now = ns_now_ms();
	char b;

	if (c->peer_eof_ms == 0) {
		ssize_t n;
		if (now - c->last_check_ms < 50)
			return 0;
		c->last_check_ms = now;
		n = recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
		if (n > 0 || (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)))
			return 0;
		c->peer_eof_ms = now;
	}
	return now - c->peer_eof_ms > NS_PEER_GRACE_MS;
}

nn_result_t ns_test(void *request, int *done, int *sizes)
{
	struct ns_req *r = request;
	struct ns_comm *c = r->comm;
	struct sdr_wc wc[16];
	nn_result_t res = NN_SUCCESS;
	int n;

	*done = 0;
	pthread_mutex_lock(c->lock);
	while (r->state == REQ_POSTED) {
		n = sdr_cq_poll(c->ctx, wc, 16);
		if (n < 0) {
			res = ns_fail_status(c, n, "test");
			goto out;
		}
		for (int i = 0; i < n; i++)
			ns_complete(c->d, &wc[i]);
		if (n < 16)
			break;
	}
	if (r->state == REQ_POSTED) {
		if (c->d->broken && !c->broken) {
			WARN("test: the sdr-dpu daemon (%s) is gone", ns_sock[c->dev]);
			c->broken = c->d->broken;
		}
		if (c->broken) {
			WARN("test: the connection failed earlier; this request cannot complete");
			res = c->broken;
		} else if (ns_peer_gone(c)) {
			WARN("test: the peer closed its connection (exited?) with this %s of %zu "
			     "bytes "
			     "pending",
			     r->send ? "send" : "receive", r->size);
			c->broken = res = NN_SYSTEM_ERROR;
		}
		goto out;
	}
	if (r->state == REQ_FAILED) {
		res = r->err;
		r->state = REQ_FREE;
		c->inflight--;
		goto out;
	}
	*done = 1;
	if (sizes)
		sizes[0] = (int)r->got;
	r->state = REQ_FREE;
	c->inflight--;
out:
	pthread_mutex_unlock(c->lock);
	return res;
}
