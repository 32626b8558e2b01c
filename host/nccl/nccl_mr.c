/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nccl_mr.c - memory registration of the plugin (host layer, NCCL net
 * plugin over libsdr): regMr gives each NCCL host buffer a libsdr-registered
 * shadow of its size that isend/irecv stage through (nccl_xfer.c); deregMr
 * frees it. docs/nccl.md.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "nccl_priv.h"

nn_result_t ns_reg_mr(void *comm, void *data, size_t size, int type, void **mh)
{
	struct ns_comm *c = comm;
	struct ns_mr *m;
	size_t n = size ? size : 1;

	*mh = NULL;
	if (type != NN_PTR_HOST) {
		WARN("regMr: host memory only (type %d)", type);
		return NN_INTERNAL_ERROR;
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return NN_SYSTEM_ERROR;
	m->base = data;
	m->len = size;
	pthread_mutex_lock(c->lock);
	m->shadow = sdr_buf_alloc(c->ctx, n);
	if (m->shadow)
		m->mr = sdr_mr_reg(c->ctx, m->shadow, n, 0);
	if (!m->mr) {
		int e = errno;
		WARN("regMr of %zu bytes: staging memory: %s: %s", size, strerror(e),
		     sdr_last_error(c->ctx));
		if (m->shadow)
			sdr_buf_free(c->ctx, m->shadow);
		pthread_mutex_unlock(c->lock);
		free(m);
		return NN_SYSTEM_ERROR;
	}
	pthread_mutex_unlock(c->lock);
	*mh = m;
	return NN_SUCCESS;
}

nn_result_t ns_reg_mr_dmabuf(void *comm, void *data, size_t size, int type, uint64_t offset, int fd,
			     void **mh)
{
	(void)offset;
	(void)fd;
	if (type != NN_PTR_HOST) {
		WARN("regMrDmaBuf: host memory only");
		return NN_INTERNAL_ERROR;
	}
	return ns_reg_mr(comm, data, size, type, mh);
}

nn_result_t ns_dereg_mr(void *comm, void *mh)
{
	struct ns_comm *c = comm;
	struct ns_mr *m = mh;
	int rc;

	if (!m)
		return NN_SUCCESS;
	pthread_mutex_lock(c->lock);
	rc = sdr_mr_dereg(m->mr);
	if (rc == 0)
		sdr_buf_free(c->ctx, m->shadow);
	pthread_mutex_unlock(c->lock);
	free(m);
	if (rc != 0 && rc != -EPIPE) {
		/* the context's close frees it in any case */
		WARN("deregMr: %s", sdr_strerror(rc));
	}
	return NN_SUCCESS;
}
