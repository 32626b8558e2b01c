/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nccl_priv.h - what the files of libnccl-net-sdr.so share (host layer, the
 * NCCL net plugin over libsdr): the device, comm, request and registration
 * objects, the configuration read at init, logging, and the functions the
 * exported tables (nccl_net_sdr.c) point to. Everything here is hidden in
 * the .so; only the ncclNetPlugin_v* tables are exported. docs/nccl.md.
 */
#ifndef NCCL_PRIV_H
#define NCCL_PRIV_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "sdr.h"
#include "nccl_net_abi.h"

#pragma GCC visibility push(hidden)

#define NS_MAX_DEVS 16
#define NS_MAX_COMMS 4096 /* comms per device and process */

/* ------------------------------------------------------------ objects */

/* A registration: NCCL's buffer and the libsdr shadow it is staged in. */
struct ns_mr {
	char *base; /* NCCL's buffer */
	size_t len;
	char *shadow; /* libsdr memory of the same size */
	struct sdr_mr *mr;
};

enum { REQ_FREE = 0, REQ_POSTED, REQ_DONE, REQ_FAILED };

struct ns_req {
	struct ns_comm *comm;
	int state;
	int send;
	uint32_t gen;
	size_t size;  /* posted */
	size_t got;   /* completed */
	char *data;   /* NCCL's buffer */
	char *shadow; /* staging (NULL: scratch, zero-byte message) */
	int tag;
	int err; /* nn_result_t when failed */
};

/* Sent by the connector on the TCP side channel, answered by a status. */
struct ns_hello {
	uint32_t magic;
	uint32_t version;
	uint64_t nonce;
	struct sdr_qp_info qp; /* the sending QP */
};

/* One libsdr context per device, shared by the device's comms (the
 * daemon's per-client quota counts contexts): its lock serialises every
 * libsdr call on it; completions carry the comm's id in their wr_id. */
struct ns_dev {
	pthread_mutex_t lock;
	struct sdr_ctx *ctx;
	int refs;
	int broken;    /* the daemon died */
	char *scratch; /* zero-byte messages */
	struct sdr_mr *scratch_mr;
	struct ns_comm *comms[NS_MAX_COMMS]; /* by id - 1 */
};

struct ns_comm {
	pthread_mutex_t *lock; /* the device's */
	struct ns_dev *d;
	uint32_t id; /* index + 1 in d->comms */
	int dev;
	int send;
	int fd; /* TCP side channel (peer liveness) */
	int state;
	struct sdr_ctx *ctx;
	struct sdr_qp *qp;
	struct sdr_qp_info peer;
	char *scratch; /* zero-byte messages */
	struct sdr_mr *scratch_mr;
	uint32_t max_msg;
	struct ns_req req[NN_MAX_REQUESTS];
	uint32_t gen;
	int inflight;
	uint64_t peer_eof_ms; /* when the side channel saw EOF, 0 = not yet */
	uint64_t last_check_ms;
	int broken; /* nn_result_t of a failure that leaves the QP unusable */
	uint64_t msgs, bytes, copied;
	/* handshake buffers */
	struct ns_hello hello;
	size_t io_done;
	int32_t ack;
	uint64_t nonce;
	int accepted;
};

/* ------------------------------------------------------------ configuration (init) */

extern int ns_ndev;
extern char *ns_sock[NS_MAX_DEVS];
extern char ns_name[NS_MAX_DEVS][16];
extern struct sdr_qp_attr ns_attr; /* SDR_REL, SDR_MAX_MSG, SDR_CHUNK_PKTS */
extern char ns_rel_text[SDR_SCHEME_STR_MAX];
extern int ns_check_tags;

/* ------------------------------------------------------------ logging */

void ns_log(int level, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
#define WARN(...) ns_log(NN_LOG_WARN, __FILE__, __LINE__, __VA_ARGS__)
#define INFO(...) ns_log(NN_LOG_INFO, __func__, __LINE__, __VA_ARGS__)

static inline uint64_t ns_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ------------------------------------------------------------ functions */

/* nccl_comm.c: a comm on device @p dev with its QP on the device's context
 * (NULL: logged), and its release. */
struct ns_comm *ns_comm_new(int dev, int send);
void ns_comm_free(struct ns_comm *c);

/* nccl_conn.c */
nn_result_t ns_listen(int dev, void *handle, void **listen_comm);
nn_result_t ns_connect_v8(int dev, void *handle, void **send_comm, nn_dev_handle_t **dc);
nn_result_t ns_connect_v10(int dev, nn_comm_config_v10_t *cfg, void *handle, void **send_comm,
			   nn_dev_handle_t **dc);
nn_result_t ns_accept(void *listen_comm, void **recv_comm, nn_dev_handle_t **dc);
nn_result_t ns_close_listen(void *listen_comm);
nn_result_t ns_close(void *comm);

/* nccl_mr.c */
nn_result_t ns_reg_mr(void *comm, void *data, size_t size, int type, void **mh);
nn_result_t ns_reg_mr_dmabuf(void *comm, void *data, size_t size, int type, uint64_t offset, int fd,
			     void **mh);
nn_result_t ns_dereg_mr(void *comm, void *mh);

/* nccl_xfer.c */
nn_result_t ns_isend(void *comm, void *data, size_t size, int tag, void *mh, void **req);
nn_result_t ns_isend_v8(void *comm, void *data, int size, int tag, void *mh, void **req);
nn_result_t ns_isend_v10(void *comm, void *data, size_t size, int tag, void *mh, void *phandle,
			 void **req);
nn_result_t ns_irecv(void *comm, int n, void **data, size_t *sizes, int *tags, void **mhs,
		     void **req);
nn_result_t ns_irecv_v8(void *comm, int n, void **data, int *sizes, int *tags, void **mhs,
			void **req);
nn_result_t ns_irecv_v10(void *comm, int n, void **data, size_t *sizes, int *tags, void **mhs,
			 void **phandles, void **req);
nn_result_t ns_iflush(void *comm, int n, void **data, int *sizes, void **mhs, void **req);
nn_result_t ns_test(void *request, int *done, int *sizes);

#pragma GCC visibility pop

#endif /* NCCL_PRIV_H */
