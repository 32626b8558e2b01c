/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nccl_net_sdr.c - libnccl-net-sdr.so, an NCCL network plugin over libsdr
 * (host layer: NCCL's proxy -> this plugin -> libsdr -> the sdr-dpu daemon):
 * the exported v8/v9/v10 tables, init (the SDR_* environment, one probe of
 * each daemon), devices (one per sdr-dpu socket in SDR_DPU) and their
 * properties, logging. Comms: nccl_comm.c, nccl_conn.c; staging: nccl_mr.c;
 * the data path: nccl_xfer.c. docs/nccl.md.
 */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nccl_priv.h"

#define EXPORT __attribute__((visibility("default")))

static nn_logger_t ns_logger;
static pthread_mutex_t ns_init_lock = PTHREAD_MUTEX_INITIALIZER;
int ns_ndev = -1;
char *ns_sock[NS_MAX_DEVS];
char ns_name[NS_MAX_DEVS][16];
struct sdr_qp_attr ns_attr; /* SDR_REL, SDR_MAX_MSG, SDR_CHUNK_PKTS */
char ns_rel_text[SDR_SCHEME_STR_MAX];
static uint32_t ns_max_msg[NS_MAX_DEVS]; /* the daemon's, probed once */
static int ns_speed_mbps = 100000;
int ns_check_tags;

void ns_log(int level, const char *file, int line, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (ns_logger)
		ns_logger(level, level == NN_LOG_WARN ? NN_SUBSYS_ALL : NN_SUBSYS_NET, file, line,
			  "NET/sdr : %s", msg);
	else if (level == NN_LOG_WARN || getenv("SDR_NCCL_DEBUG"))
		fprintf(stderr, "NET/sdr : %s\n", msg);
}

/* ------------------------------------------------------------ init */

static int ns_parse_env(void)
{
	const char *list = getenv("SDR_DPU");
	char *copy, *save = NULL, *tok;
	struct sdr_scheme sch, ecd = SDR_SCHEME_EC_DEFAULT;
	const char *rel = getenv("SDR_REL");
	const char *v;

	if (!list || !*list)
		list = SDR_DEFAULT_SOCKET;
	copy = strdup(list);
	if (!copy)
		return -ENOMEM;
	ns_ndev = 0;
	for (tok = strtok_r(copy, ",", &save); tok && ns_ndev < NS_MAX_DEVS;
	     tok = strtok_r(NULL, ",", &save)) {
		ns_sock[ns_ndev] = strdup(tok);
		if (!ns_sock[ns_ndev]) {
			free(copy);
			return -ENOMEM;
		}
		snprintf(ns_name[ns_ndev], sizeof(ns_name[0]), "sdr%d", ns_ndev);
		ns_ndev++;
	}
	free(copy);
	if (!rel || !*rel)
		rel = "auto";
	if (sdr_scheme_parse(rel, 0, &ecd, &sch) != 0) {
		WARN("SDR_REL=%s: want none, sr, auto, ec, ec:rs:K:M or ec:xor:K:M", rel);
		return -EINVAL;
	}
	sdr_scheme_format(&sch, SDR_SCHEME_EC_PREFIX, ns_rel_text, sizeof(ns_rel_text));
	memset(&ns_attr, 0, sizeof(ns_attr));
	ns_attr.reliability = sch.rel;
	ns_attr.ec_code = sch.code;
	ns_attr.ec_k = (uint8_t)sch.k;
	ns_attr.ec_m = (uint8_t)sch.m;
	if ((v = getenv("SDR_MAX_MSG")) && *v)
		ns_attr.max_msg = (uint32_t)strtoul(v, NULL, 0);
	if ((v = getenv("SDR_CHUNK_PKTS")) && *v)
		ns_attr.chunk_pkts = (uint32_t)strtoul(v, NULL, 0);
	if ((v = getenv("SDR_NCCL_SPEED_MBPS")) && *v)
		ns_speed_mbps = atoi(v);
	if ((v = getenv("SDR_NCCL_TAGS")) && *v)
		ns_check_tags = atoi(v) != 0;
	return 0;
}

/* At unload (dlclose, exit): the configuration read at init. NCCL has no
 * finalize call before API v11. */
__attribute__((destructor)) static void ns_fini(void)
{
	for (int d = 0; d < NS_MAX_DEVS; d++) {
		free(ns_sock[d]);
		ns_sock[d] = NULL;
	}
}

/* Open a context and a QP on device @p dev; logs why not. */
static int ns_open(int dev, struct sdr_ctx **ctx, struct sdr_qp **qp)
{
	*qp = NULL;
	*ctx = sdr_ctx_open(ns_sock[dev], NULL);
	if (!*ctx) {
		int e = errno;
		WARN("cannot attach to the sdr-dpu daemon at %s (SDR_DPU): %s: %s", ns_sock[dev],
		     strerror(e), sdr_last_error(NULL));
		return -e;
	}
	*qp = sdr_qp_create(*ctx, &ns_attr);
	if (!*qp) {
		int e = errno;
		WARN("%s: QP creation (SDR_REL=%s) failed: %s: %s", ns_sock[dev], ns_rel_text,
		     strerror(e), sdr_last_error(*ctx));
		sdr_ctx_close(*ctx);
		*ctx = NULL;
		return -e;
	}
	return 0;
}

static nn_result_t ns_init(nn_logger_t log)
{
	nn_result_t r = NN_SUCCESS;

	pthread_mutex_lock(&ns_init_lock);
	ns_logger = log;
	if (ns_ndev < 0) {
		if (ns_parse_env() != 0) {
			ns_ndev = -1;
			r = NN_INTERNAL_ERROR;
		}
	}
	/* probe every daemon once: NCCL falls back to its own transports if
	 * init fails, so a missing daemon is said here */
	for (int d = 0; r == NN_SUCCESS && d < ns_ndev; d++) {
		struct sdr_ctx *ctx;
		struct sdr_qp *qp;
		struct sdr_qp_info info;
		if (ns_max_msg[d])
			continue;
		if (ns_open(d, &ctx, &qp) != 0) {
			r = NN_SYSTEM_ERROR;
			break;
		}
		sdr_qp_info_get(qp, &info);
		ns_max_msg[d] = info.max_msg;
		sdr_qp_destroy(qp);
		sdr_ctx_close(ctx);
		INFO("device %d: %s, reliability %s, max message %u bytes", d, ns_sock[d],
		     ns_rel_text, info.max_msg);
	}
	pthread_mutex_unlock(&ns_init_lock);
	return r;
}

static nn_result_t ns_init_v10(nn_logger_t log, nn_profiler_cb_t prof)
{
	(void)prof;
	return ns_init(log);
}

static nn_result_t ns_devices(int *ndev)
{
	*ndev = ns_ndev < 0 ? 0 : ns_ndev;
	return NN_SUCCESS;
}

static nn_result_t ns_props_v9(int dev, nn_props_v9_t *p)
{
	if (dev < 0 || dev >= ns_ndev)
		return NN_INTERNAL_ERROR;
	memset(p, 0, sizeof(*p));
	p->name = ns_name[dev];
	p->pci_path = NULL; /* a daemon, not a PCI function of this host */
	p->guid = (uint64_t)dev;
	p->ptr_support = NN_PTR_HOST;
	p->speed = ns_speed_mbps;
	p->port = 0;
	p->latency = 0;
	p->max_comms = 1024;
	p->max_recvs = 1;
	p->dev_type = NN_DEVICE_HOST;
	p->vprops.ndevs = 1;
	p->vprops.devs[0] = dev;
	p->max_p2p_bytes = ns_max_msg[dev];
	p->max_coll_bytes = ns_max_msg[dev];
	return NN_SUCCESS;
}

static nn_result_t ns_props_v8(int dev, nn_props_v8_t *p)
{
	nn_props_v9_t q;
	nn_result_t r = ns_props_v9(dev, &q);
	if (r != NN_SUCCESS)
		return r;
	memset(p, 0, sizeof(*p));
	p->name = q.name;
	p->pci_path = q.pci_path;
	p->guid = q.guid;
	p->ptr_support = q.ptr_support;
	p->speed = q.speed;
	p->port = q.port;
	p->latency = q.latency;
	p->max_comms = q.max_comms;
	p->max_recvs = q.max_recvs;
	p->dev_type = q.dev_type;
	return NN_SUCCESS;
}

/* ------------------------------------------------------------ tables */

EXPORT const nn_net_v8_t ncclNetPlugin_v8 = {
	.name = "sdr",
	.init = ns_init,
	.devices = ns_devices,
	.get_properties = ns_props_v8,
	.listen = ns_listen,
	.connect = ns_connect_v8,
	.accept = ns_accept,
	.reg_mr = ns_reg_mr,
	.reg_mr_dmabuf = ns_reg_mr_dmabuf,
	.dereg_mr = ns_dereg_mr,
	.isend = ns_isend_v8,
	.irecv = ns_irecv_v8,
	.iflush = ns_iflush,
	.test = ns_test,
	.close_send = ns_close,
	.close_recv = ns_close,
	.close_listen = ns_close_listen,
};

EXPORT const nn_net_v9_t ncclNetPlugin_v9 = {
	.name = "sdr",
	.init = ns_init,
	.devices = ns_devices,
	.get_properties = ns_props_v9,
	.listen = ns_listen,
	.connect = ns_connect_v8,
	.accept = ns_accept,
	.reg_mr = ns_reg_mr,
	.reg_mr_dmabuf = ns_reg_mr_dmabuf,
	.dereg_mr = ns_dereg_mr,
	.isend = ns_isend,
	.irecv = ns_irecv,
	.iflush = ns_iflush,
	.test = ns_test,
	.close_send = ns_close,
	.close_recv = ns_close,
	.close_listen = ns_close_listen,
};

EXPORT const nn_net_v10_t ncclNetPlugin_v10 = {
	.name = "sdr",
	.init = ns_init_v10,
	.devices = ns_devices,
	.get_properties = ns_props_v9,
	.listen = ns_listen,
	.connect = ns_connect_v10,
	.accept = ns_accept,
	.reg_mr = ns_reg_mr,
	.reg_mr_dmabuf = ns_reg_mr_dmabuf,
	.dereg_mr = ns_dereg_mr,
	.isend = ns_isend_v10,
	.irecv = ns_irecv_v10,
	.iflush = ns_iflush,
	.test = ns_test,
	.close_send = ns_close,
	.close_recv = ns_close,
	.close_listen = ns_close_listen,
};
