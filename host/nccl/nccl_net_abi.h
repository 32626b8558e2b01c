/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nccl_net_abi.h - the NCCL network plugin ABI as this project uses it, host
 * layer (host/nccl/, the plugin and its test harness; no NCCL header needed).
 * Our own declarations, written from the NCCL ext-net documentation and its
 * example headers (net plugin API v8, v9, v10): struct member order and types
 * are the ABI; names here are this project's.
 */
#ifndef SDR_NCCL_NET_ABI_H
#define SDR_NCCL_NET_ABI_H

#include <stddef.h>
#include <stdint.h>

/* Result codes (NCCL ext-net documentation, "Error codes"). */
typedef enum {
	NN_SUCCESS = 0,
	NN_UNHANDLED_CUDA_ERROR = 1,
	NN_SYSTEM_ERROR = 2,   /* a system call, the daemon, the network, the peer */
	NN_INTERNAL_ERROR = 3, /* NCCL used the plugin wrongly; sizes or tags do not match */
	NN_INVALID_ARGUMENT = 4,
	NN_INVALID_USAGE = 5,
	NN_REMOTE_ERROR = 6,
} nn_result_t;

/* Logger handed to init(): level, subsystem mask, file, line, printf format. */
enum {
	NN_LOG_NONE = 0,
	NN_LOG_VERSION = 1,
	NN_LOG_WARN = 2,
	NN_LOG_INFO = 3,
	NN_LOG_ABORT = 4,
	NN_LOG_TRACE = 5
};
#define NN_SUBSYS_INIT 0x1ul
#define NN_SUBSYS_NET 0x10ul
#define NN_SUBSYS_ALL (~0ul)
typedef void (*nn_logger_t)(int level, unsigned long flags, const char *file, int line,
			    const char *fmt, ...);
/* v10 init() also takes the profiler's callback (event handle, type, parent
 * handle, plugin id, extra data); this plugin reports no events. */
typedef nn_result_t (*nn_profiler_cb_t)(void **ev, int type, void *phandle, int64_t plugin_id,
					void *ext);

/* Constants (net plugin API v8..v10). */
#define NN_HANDLE_MAXSIZE 128 /* bytes of a listen handle */
#define NN_PTR_HOST 0x1       /* ptrSupport / regMr type: host memory */
#define NN_PTR_CUDA 0x2
#define NN_PTR_DMABUF 0x4
#define NN_MAX_REQUESTS 32 /* requests in flight per comm (older NCCL: 8) */
#define NN_DEVICE_HOST 0   /* netDeviceType: no device offload */

/* Device offload handle of connect/accept (unused: netDeviceType HOST). */
typedef struct {
	int type;
	int version;
	void *handle;
	size_t size;
	int needs_proxy_progress;
} nn_dev_handle_t;

/* getProperties, v8. */
typedef struct {
	char *name;        /* for logs */
	char *pci_path;    /* /sys PCI directory; NULL for a virtual device */
	uint64_t guid;     /* same guid = same port to the fabric */
	int ptr_support;   /* NN_PTR_* */
	int reg_is_global; /* regMr not tied to one comm */
	int speed;         /* Mbit/s */
	int port;
	float latency; /* microseconds */
	int max_comms;
	int max_recvs; /* receives grouped in one irecv */
	int dev_type;  /* NN_DEVICE_HOST */
	int dev_version;
} nn_props_v8_t;

/* getProperties, v9 and v10 (identical layout): v8 plus forceFlush after
 * regIsGlobal, then the virtual-NIC list and the largest transfers. */
#define NN_VDEV_MAX 4
typedef struct {
	int ndevs;
	int devs[NN_VDEV_MAX];
} nn_vdev_props_t;

typedef struct {
	char *name;
	char *pci_path;
	uint64_t guid;
	int ptr_support;
	int reg_is_global;
	int force_flush; /* flush every receive */
	int speed;
	int port;
	float latency;
	int max_comms;
	int max_recvs;
	int dev_type;
	int dev_version;
	nn_vdev_props_t vprops;
	size_t max_p2p_bytes;  /* largest isend/irecv of point-to-point operations */
	size_t max_coll_bytes; /* ... of collectives */
} nn_props_v9_t;

/* connect() config, v10: a traffic class (-1 undefined). */
typedef struct {
	int traffic_class;
} nn_comm_config_v10_t;

/* The plugin tables: function pointers in the order of the API version. */
typedef struct {
	const char *name;
	nn_result_t (*init)(nn_logger_t log);
	nn_result_t (*devices)(int *ndev);
	nn_result_t (*get_properties)(int dev, nn_props_v8_t *props);
	nn_result_t (*listen)(int dev, void *handle, void **listen_comm);
	nn_result_t (*connect)(int dev, void *handle, void **send_comm, nn_dev_handle_t **dev_comm);
	nn_result_t (*accept)(void *listen_comm, void **recv_comm, nn_dev_handle_t **dev_comm);
	nn_result_t (*reg_mr)(void *comm, void *data, size_t size, int type, void **mh);
	nn_result_t (*reg_mr_dmabuf)(void *comm, void *data, size_t size, int type, uint64_t offset,
				     int fd, void **mh);
	nn_result_t (*dereg_mr)(void *comm, void *mh);
	nn_result_t (*isend)(void *send_comm, void *data, int size, int tag, void *mh, void **req);
	nn_result_t (*irecv)(void *recv_comm, int n, void **data, int *sizes, int *tags, void **mhs,
			     void **req);
	nn_result_t (*iflush)(void *recv_comm, int n, void **data, int *sizes, void **mhs,
			      void **req);
	nn_result_t (*test)(void *req, int *done, int *sizes);
	nn_result_t (*close_send)(void *send_comm);
	nn_result_t (*close_recv)(void *recv_comm);
	nn_result_t (*close_listen)(void *listen_comm);
	nn_result_t (*get_device_mr)(void *comm, void *mh, void **dptr_mh);
	nn_result_t (*irecv_consumed)(void *recv_comm, int n, void *req);
} nn_net_v8_t;

/* v9: properties v9, isend/irecv sizes become size_t, makeVDevice at the end. */
typedef struct {
	const char *name;
	nn_result_t (*init)(nn_logger_t log);
	nn_result_t (*devices)(int *ndev);
	nn_result_t (*get_properties)(int dev, nn_props_v9_t *props);
	nn_result_t (*listen)(int dev, void *handle, void **listen_comm);
	nn_result_t (*connect)(int dev, void *handle, void **send_comm, nn_dev_handle_t **dev_comm);
	nn_result_t (*accept)(void *listen_comm, void **recv_comm, nn_dev_handle_t **dev_comm);
	nn_result_t (*reg_mr)(void *comm, void *data, size_t size, int type, void **mh);
	nn_result_t (*reg_mr_dmabuf)(void *comm, void *data, size_t size, int type, uint64_t offset,
				     int fd, void **mh);
	nn_result_t (*dereg_mr)(void *comm, void *mh);
	nn_result_t (*isend)(void *send_comm, void *data, size_t size, int tag, void *mh,
			     void **req);
	nn_result_t (*irecv)(void *recv_comm, int n, void **data, size_t *sizes, int *tags,
			     void **mhs, void **req);
	nn_result_t (*iflush)(void *recv_comm, int n, void **data, int *sizes, void **mhs,
			      void **req);
	nn_result_t (*test)(void *req, int *done, int *sizes);
	nn_result_t (*close_send)(void *send_comm);
	nn_result_t (*close_recv)(void *recv_comm);
	nn_result_t (*close_listen)(void *listen_comm);
	nn_result_t (*get_device_mr)(void *comm, void *mh, void **dptr_mh);
	nn_result_t (*irecv_consumed)(void *recv_comm, int n, void *req);
	nn_result_t (*make_vdevice)(int *dev, nn_vdev_props_t *props);
} nn_net_v9_t;

/* v10: init takes the profiler callback, connect a config; isend/irecv take
 * the profiler's parent handle(s) before the request. */
typedef struct {
	const char *name;
	nn_result_t (*init)(nn_logger_t log, nn_profiler_cb_t prof);
	nn_result_t (*devices)(int *ndev);
	nn_result_t (*get_properties)(int dev, nn_props_v9_t *props);
	nn_result_t (*listen)(int dev, void *handle, void **listen_comm);
	nn_result_t (*connect)(int dev, nn_comm_config_v10_t *config, void *handle,
			       void **send_comm, nn_dev_handle_t **dev_comm);
	nn_result_t (*accept)(void *listen_comm, void **recv_comm, nn_dev_handle_t **dev_comm);
	nn_result_t (*reg_mr)(void *comm, void *data, size_t size, int type, void **mh);
	nn_result_t (*reg_mr_dmabuf)(void *comm, void *data, size_t size, int type, uint64_t offset,
				     int fd, void **mh);
	nn_result_t (*dereg_mr)(void *comm, void *mh);
	nn_result_t (*isend)(void *send_comm, void *data, size_t size, int tag, void *mh,
			     void *phandle, void **req);
	nn_result_t (*irecv)(void *recv_comm, int n, void **data, size_t *sizes, int *tags,
			     void **mhs, void **phandles, void **req);
	nn_result_t (*iflush)(void *recv_comm, int n, void **data, int *sizes, void **mhs,
			      void **req);
	nn_result_t (*test)(void *req, int *done, int *sizes);
	nn_result_t (*close_send)(void *send_comm);
	nn_result_t (*close_recv)(void *recv_comm);
	nn_result_t (*close_listen)(void *listen_comm);
	nn_result_t (*get_device_mr)(void *comm, void *mh, void **dptr_mh);
	nn_result_t (*irecv_consumed)(void *recv_comm, int n, void *req);
	nn_result_t (*make_vdevice)(int *dev, nn_vdev_props_t *props);
} nn_net_v10_t;

/* The layouts on LP64 (x86-64, aarch64), as the documentation's structures
 * give them: a changed member shows here at build time. */
#if defined(__LP64__)
#include <stddef.h>
_Static_assert(sizeof(nn_props_v8_t) == 64, "ncclNetProperties_v8_t layout");
_Static_assert(offsetof(nn_props_v8_t, max_recvs) == 48, "ncclNetProperties_v8_t layout");
_Static_assert(offsetof(nn_props_v9_t, speed) == 36, "ncclNetProperties_v9_t layout");
_Static_assert(offsetof(nn_props_v9_t, vprops) == 64, "ncclNetProperties_v9_t layout");
_Static_assert(offsetof(nn_props_v9_t, max_p2p_bytes) == 88, "ncclNetProperties_v9_t layout");
_Static_assert(sizeof(nn_props_v9_t) == 104, "ncclNetProperties_v9_t layout");
_Static_assert(sizeof(nn_dev_handle_t) == 32, "ncclNetDeviceHandle_t layout");
_Static_assert(sizeof(nn_net_v8_t) == 19 * sizeof(void *), "ncclNet_v8_t: name + 18 calls");
_Static_assert(sizeof(nn_net_v9_t) == 20 * sizeof(void *), "ncclNet_v9_t: name + 19 calls");
_Static_assert(sizeof(nn_net_v10_t) == 20 * sizeof(void *), "ncclNet_v10_t: name + 19 calls");
_Static_assert(offsetof(nn_net_v10_t, test) == 13 * sizeof(void *), "ncclNet_v10_t layout");
#endif

/* The symbols NCCL looks up in libnccl-net-<NCCL_NET_PLUGIN>.so. */
#define NN_SYMBOL_V8 "ncclNetPlugin_v8"
#define NN_SYMBOL_V9 "ncclNetPlugin_v9"
#define NN_SYMBOL_V10 "ncclNetPlugin_v10"

#endif /* SDR_NCCL_NET_ABI_H */
