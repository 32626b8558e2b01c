/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nccl_comm.c - the plugin's devices and comms (host layer, NCCL net plugin
 * over libsdr): one libsdr context per device and process, opened by its
 * first comm and closed with its last; a comm's QP on it and its slot (id)
 * that completions are routed by. docs/nccl.md.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nccl_priv.h"

static struct ns_dev ns_devs[NS_MAX_DEVS];
static pthread_once_t ns_devs_once = PTHREAD_ONCE_INIT;

static void ns_devs_init(void)
{
	for (int d = 0; d < NS_MAX_DEVS; d++)
		pthread_mutex_init(&ns_devs[d].lock, NULL);
}

/* The device's context (opened by its first comm) and a QP on it for a new
 * comm; with the device locked. 0 or -errno (logged). */
static int ns_dev_attach(int dev, struct ns_comm *c)
{
	struct ns_dev *d = &ns_devs[dev];
	uint32_t id = 0;

	if (!d->ctx) {
		d->broken = 0;
		d->ctx = sdr_ctx_open(ns_sock[dev], NULL);
		if (!d->ctx) {
			int e = errno;
			WARN("cannot attach to the sdr-dpu daemon at %s (SDR_DPU): %s: %s",
			     ns_sock[dev], strerror(e), sdr_last_error(NULL));
			return -e;
		}
		d->scratch = sdr_buf_alloc(d->ctx, 4096);
		if (!d->scratch || !(d->scratch_mr = sdr_mr_reg(d->ctx, d->scratch, 4096, 0))) {
			int e = errno;
			WARN("%s: scratch buffer: %s", ns_sock[dev], strerror(e));
			sdr_ctx_close(d->ctx);
			d->ctx = NULL;
			d->scratch = NULL;
			return -e;
		}
	}
	for (uint32_t i = 0; i < NS_MAX_COMMS; i++) {
		if (!d->comms[i]) {
			id = i + 1;
			break;
		}
	}
	if (!id) {
		WARN("%s: more than %d comms in this process", ns_sock[dev], NS_MAX_COMMS);
		goto unref;
	}
	c->qp = sdr_qp_create(d->ctx, &ns_attr);
	if (!c->qp) {
		WARN("%s: QP creation (SDR_REL=%s) failed: %s: %s", ns_sock[dev], ns_rel_text,
		     strerror(errno), sdr_last_error(d->ctx));
		goto unref;
	}
	d->comms[id - 1] = c;
	d->refs++;
	c->id = id;
	c->d = d;
	c->ctx = d->ctx;
	c->scratch = d->scratch;
	c->scratch_mr = d->scratch_mr;
	c->lock = &d->lock;
	return 0;
unref:
	if (d->refs == 0) {
		sdr_ctx_close(d->ctx); /* frees the scratch buffer too */
		d->ctx = NULL;
		d->scratch = NULL;
		d->scratch_mr = NULL;
	}
	return -EIO;
}

void ns_comm_free(struct ns_comm *c)
{
	struct ns_dev *d;

	if (!c)
		return;
	d = c->d;
	if (d) {
		pthread_mutex_lock(&d->lock);
		sdr_qp_destroy(c->qp);
		d->comms[c->id - 1] = NULL;
		if (--d->refs == 0) {
			sdr_ctx_close(d->ctx); /* frees every buffer left */
			d->ctx = NULL;
			d->scratch = NULL;
			d->scratch_mr = NULL;
		}
		pthread_mutex_unlock(&d->lock);
	}
	if (c->fd >= 0)
		close(c->fd);
	free(c);
}

struct ns_comm *ns_comm_new(int dev, int send)
{
	struct ns_comm *c = calloc(1, sizeof(*c));
	int rc;

	if (!c)
		return NULL;
	pthread_once(&ns_devs_once, ns_devs_init);
	c->dev = dev;
	c->send = send;
	c->fd = -1;
	pthread_mutex_lock(&ns_devs[dev].lock);
	rc = ns_dev_attach(dev, c);
	pthread_mutex_unlock(&ns_devs[dev].lock);
	if (rc != 0) {
		free(c);
		return NULL;
	}
	return c;
}
