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

#define NS_MAX_DEVS 16
#define NS_MAGIC 0x5344524eu /* "SDRN" */
#define NS_VERSION 1
/* The immediate of a zero-byte send (carried in a 1-byte message): libsdr
 * messages hold at least one byte. With SDR_NCCL_TAGS=1 every message carries
 * NS_IMM_TAG | (tag & 0x3fffffff) and the receive checks it. */
#define NS_IMM_ZERO 0x80000000u
#define NS_IMM_TAG 0x40000000u
#define NS_PEER_GRACE_MS 2000
#define NS_MAX_COMMS 4096 /* comms per device and process */

static nn_logger_t ns_logger;
static pthread_mutex_t ns_init_lock = PTHREAD_MUTEX_INITIALIZER;
static int ns_ndev = -1;
static char *ns_sock[NS_MAX_DEVS];
static char ns_name[NS_MAX_DEVS][16];
static struct sdr_qp_attr ns_attr; /* SDR_REL, SDR_MAX_MSG, SDR_CHUNK_PKTS */
static char ns_rel_text[SDR_SCHEME_STR_MAX];
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
#define WARN(...) ns_log(NN_LOG_WARN, __FILE__, __LINE__, __VA_ARGS__)
#define INFO(...) ns_log(NN_LOG_INFO, __func__, __LINE__, __VA_ARGS__)

static uint64_t ns_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* ------------------------------------------------------------ objects */

/* The handle NCCL carries from listen() to connect() (<= 128 bytes). */
struct ns_handle {
	uint32_t magic;
	uint16_t version;
	uint16_t port; /* TCP port of the listener, network order */
	uint32_t addr; /* IPv4 of the listener, network order */
	uint32_t reserved;
	uint64_t nonce;        /* pairs the connector's hello with this listen */
	struct sdr_qp_info qp; /* the receiving QP (the listener's) */
	void *stage;           /* connect(): the comm being set up (local only) */
};
_Static_assert(sizeof(struct ns_handle) <= NN_HANDLE_MAXSIZE, "NCCL handle too large");

/* Sent by the connector on the TCP side channel, answered by a status. */
struct ns_hello {
	uint32_t magic;
	uint32_t version;
	uint64_t nonce;
	struct sdr_qp_info qp; /* the sending QP */
};

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

enum { ST_NEW = 0, ST_CONNECTING, ST_HELLO, ST_WAIT_ACK, ST_READY };

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
static struct ns_dev ns_devs[NS_MAX_DEVS];
static pthread_once_t ns_devs_once = PTHREAD_ONCE_INIT;

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

struct ns_listen {
	int dev;
	int fd;
	struct ns_comm *rc; /* the receive comm prepared by listen() */
};

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

/* ------------------------------------------------------------ comms */

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

static void ns_comm_free(struct ns_comm *c)
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

static struct ns_comm *ns_comm_new(int dev, int send)
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

/* An IPv4 address of this host the peer can reach: SDR_NCCL_ADDR, else the
 * first up, non-loopback interface's, else 127.0.0.1. Network order. */
static uint32_t ns_local_addr(void)
{
	const char *v = getenv("SDR_NCCL_ADDR");
	struct in_addr a;
	struct ifaddrs *ifs, *i;
	uint32_t r = htonl(INADDR_LOOPBACK);

	if (v && *v && inet_pton(AF_INET, v, &a) == 1)
		return a.s_addr;
	if (getifaddrs(&ifs) != 0)
		return r;
	for (i = ifs; i; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP) ||
		    (i->ifa_flags & IFF_LOOPBACK))
			continue;
		r = ((struct sockaddr_in *)(void *)i->ifa_addr)->sin_addr.s_addr;
		break;
	}
	freeifaddrs(ifs);
	return r;
}

static nn_result_t ns_listen(int dev, void *handle, void **listen_comm)
{
	struct ns_handle *h = handle;
	struct ns_listen *l;
	struct sockaddr_in sa = {.sin_family = AF_INET};
	socklen_t sl = sizeof(sa);

	if (dev < 0 || dev >= ns_ndev)
		return NN_INTERNAL_ERROR;
	l = calloc(1, sizeof(*l));
	if (!l)
		return NN_SYSTEM_ERROR;
	l->dev = dev;
	l->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (l->fd < 0 || bind(l->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    listen(l->fd, 16) != 0 || getsockname(l->fd, (struct sockaddr *)&sa, &sl) != 0) {
		WARN("listen: side-channel socket: %s", strerror(errno));
		goto fail;
	}
	l->rc = ns_comm_new(dev, 0);
	if (!l->rc)
		goto fail;
	memset(h, 0, NN_HANDLE_MAXSIZE);
	h->magic = NS_MAGIC;
	h->version = NS_VERSION;
	h->port = sa.sin_port;
	h->addr = ns_local_addr();
	if (getrandom(&h->nonce, sizeof(h->nonce), 0) != (ssize_t)sizeof(h->nonce))
		h->nonce = ns_now_ms() ^ (uint64_t)getpid() << 32;
	l->rc->nonce = h->nonce;
	sdr_qp_info_get(l->rc->qp, &h->qp);
	*listen_comm = l;
	return NN_SUCCESS;
fail:
	if (l->fd >= 0)
		close(l->fd);
	free(l);
	return NN_SYSTEM_ERROR;
}

/* Nonblocking I/O of a fixed-size message: 1 done, 0 again, -errno. */
static int ns_io(int fd, void *buf, size_t len, size_t *done, int out)
{
	while (*done < len) {
		ssize_t n = out ? send(fd, (char *)buf + *done, len - *done, MSG_NOSIGNAL)
				: recv(fd, (char *)buf + *done, len - *done, 0);
		if (n > 0) {
			*done += (size_t)n;
			continue;
		}
		if (n == 0)
			return -ECONNRESET;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return 0;
		if (errno != EINTR)
			return -errno;
	}
	return 1;
}

static int ns_same_dpu(const struct sdr_qp_info *a, const struct sdr_qp_info *b)
{
	return a->ip == b->ip && memcmp(a->mac, b->mac, sizeof(a->mac)) == 0;
}

static nn_result_t ns_connect_step(int dev, struct ns_handle *h, void **send_comm)
{
	struct ns_comm *c = h->stage;
	int rc;

	*send_comm = NULL;
	if (!c) {
		struct sockaddr_in sa = {.sin_family = AF_INET};
		struct sdr_qp_info mine;
		if (dev < 0 || dev >= ns_ndev || h->magic != NS_MAGIC || h->version != NS_VERSION) {
			WARN("connect: not an sdr handle (or another version of the plugin)");
			return NN_INTERNAL_ERROR;
		}
		c = ns_comm_new(dev, 1);
		if (!c)
			return NN_SYSTEM_ERROR;
		sdr_qp_info_get(c->qp, &mine);
		if (ns_same_dpu(&mine, &h->qp)) {
			WARN("connect: both ranks use the same sdr-dpu instance (%s); a DPU does "
			     "not "
			     "send to itself: give each rank (host) its own SDR_DPU",
			     ns_sock[dev]);
			ns_comm_free(c);
			return NN_SYSTEM_ERROR;
		}
		pthread_mutex_lock(c->lock);
		rc = sdr_qp_connect(c->qp, &h->qp);
		pthread_mutex_unlock(c->lock);
		if (rc != 0) {
			WARN("connect: QP connect: %s: %s", sdr_strerror(rc),
			     sdr_last_error(c->ctx));
			ns_comm_free(c);
			return NN_SYSTEM_ERROR;
		}
		c->peer = h->qp;
		c->max_msg = mine.max_msg < h->qp.max_msg ? mine.max_msg : h->qp.max_msg;
		c->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		sa.sin_port = h->port;
		sa.sin_addr.s_addr = h->addr;
		if (c->fd < 0 || (connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 &&
				  errno != EINPROGRESS)) {
			WARN("connect: side channel to %s:%u: %s", inet_ntoa(sa.sin_addr),
			     ntohs(h->port), strerror(errno));
			ns_comm_free(c);
			return NN_SYSTEM_ERROR;
		}
		c->hello.magic = NS_MAGIC;
		c->hello.version = NS_VERSION;
		c->hello.nonce = h->nonce;
		c->hello.qp = mine;
		c->state = ST_CONNECTING;
		h->stage = c;
	}
	if (c->state == ST_CONNECTING) {
		struct pollfd p = {.fd = c->fd, .events = POLLOUT};
		int err = 0;
		socklen_t el = sizeof(err);
		if (poll(&p, 1, 0) <= 0)
			return NN_SUCCESS;
		getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &el);
		if (err) {
			WARN("connect: side channel: %s", strerror(err));
			goto fail;
		}
		c->state = ST_HELLO;
		c->io_done = 0;
	}
	if (c->state == ST_HELLO) {
		rc = ns_io(c->fd, &c->hello, sizeof(c->hello), &c->io_done, 1);
		if (rc < 0) {
			WARN("connect: side channel: %s", strerror(-rc));
			goto fail;
		}
		if (rc == 0)
			return NN_SUCCESS;
		c->state = ST_WAIT_ACK;
		c->io_done = 0;
	}
	if (c->state == ST_WAIT_ACK) {
		rc = ns_io(c->fd, &c->ack, sizeof(c->ack), &c->io_done, 0);
		if (rc < 0) {
			WARN("connect: side channel: %s (the peer refused or exited)",
			     strerror(-rc));
			goto fail;
		}
		if (rc == 0)
			return NN_SUCCESS;
		if (c->ack != 0) {
			WARN("connect: the receiving rank refused: %s", sdr_strerror(c->ack));
			goto fail;
		}
		c->state = ST_READY;
		h->stage = NULL;
		*send_comm = c;
	}
	return NN_SUCCESS;
fail:
	h->stage = NULL;
	ns_comm_free(c);
	return NN_SYSTEM_ERROR;
}

static nn_result_t ns_connect_v8(int dev, void *handle, void **send_comm, nn_dev_handle_t **dc)
{
	if (dc)
		*dc = NULL;
	return ns_connect_step(dev, handle, send_comm);
}

static nn_result_t ns_connect_v10(int dev, nn_comm_config_v10_t *cfg, void *handle,
				  void **send_comm, nn_dev_handle_t **dc)
{
	(void)cfg;
	return ns_connect_v8(dev, handle, send_comm, dc);
}

static nn_result_t ns_accept(void *listen_comm, void **recv_comm, nn_dev_handle_t **dc)
{
	struct ns_listen *l = listen_comm;
	struct ns_comm *c = l->rc;
	int rc;

	*recv_comm = NULL;
	if (dc)
		*dc = NULL;
	if (!c) {
		WARN("accept: this listen handle was already accepted (one connection each)");
		return NN_INTERNAL_ERROR;
	}
	if (c->fd < 0) {
		c->fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (c->fd < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
				return NN_SUCCESS;
			WARN("accept: side channel: %s", strerror(errno));
			return NN_SYSTEM_ERROR;
		}
		c->io_done = 0;
		c->state = ST_HELLO;
	}
	if (c->state == ST_HELLO) {
		rc = ns_io(c->fd, &c->hello, sizeof(c->hello), &c->io_done, 0);
		if (rc < 0) {
			WARN("accept: side channel: %s", strerror(-rc));
			return NN_SYSTEM_ERROR;
		}
		if (rc == 0)
			return NN_SUCCESS;
		c->ack = 0;
		if (c->hello.magic != NS_MAGIC || c->hello.version != NS_VERSION ||
		    c->hello.nonce != c->nonce) {
			WARN("accept: a connection that is not this handle's sdr connector");
			c->ack = -EPROTO;
		} else {
			pthread_mutex_lock(c->lock);
			rc = sdr_qp_connect(c->qp, &c->hello.qp);
			pthread_mutex_unlock(c->lock);
			if (rc != 0) {
				WARN("accept: QP connect: %s: %s", sdr_strerror(rc),
				     sdr_last_error(c->ctx));
				c->ack = rc;
			}
		}
		c->peer = c->hello.qp;
		c->max_msg = c->hello.qp.max_msg;
		{
			struct sdr_qp_info mine;
			sdr_qp_info_get(c->qp, &mine);
			if (mine.max_msg < c->max_msg)
				c->max_msg = mine.max_msg;
		}
		c->io_done = 0;
		c->state = ST_WAIT_ACK;
	}
	if (c->state == ST_WAIT_ACK) {
		rc = ns_io(c->fd, &c->ack, sizeof(c->ack), &c->io_done, 1);
		if (rc < 0) {
			WARN("accept: side channel: %s", strerror(-rc));
			return NN_SYSTEM_ERROR;
		}
		if (rc == 0)
			return NN_SUCCESS;
		if (c->ack != 0)
			return NN_SYSTEM_ERROR;
		c->state = ST_READY;
		l->rc = NULL;
		*recv_comm = c;
	}
	return NN_SUCCESS;
}

static nn_result_t ns_close_listen(void *listen_comm)
{
	struct ns_listen *l = listen_comm;
	if (!l)
		return NN_SUCCESS;
	ns_comm_free(l->rc);
	close(l->fd);
	free(l);
	return NN_SUCCESS;
}

static nn_result_t ns_close(void *comm)
{
	struct ns_comm *c = comm;
	if (!c)
		return NN_SUCCESS;
	INFO("%s comm on %s closed: %llu messages, %llu bytes, %llu bytes staged (copied)",
	     c->send ? "send" : "receive", ns_name[c->dev], (unsigned long long)c->msgs,
	     (unsigned long long)c->bytes, (unsigned long long)c->copied);
	if (c->inflight)
		INFO("%d requests still in flight at close", c->inflight);
	ns_comm_free(c);
	return NN_SUCCESS;
}

/* ------------------------------------------------------------ memory */

static nn_result_t ns_reg_mr(void *comm, void *data, size_t size, int type, void **mh)
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

static nn_result_t ns_reg_mr_dmabuf(void *comm, void *data, size_t size, int type, uint64_t offset,
				    int fd, void **mh)
{
	(void)offset;
	(void)fd;
	if (type != NN_PTR_HOST) {
		WARN("regMrDmaBuf: host memory only");
		return NN_INTERNAL_ERROR;
	}
	return ns_reg_mr(comm, data, size, type, mh);
}

static nn_result_t ns_dereg_mr(void *comm, void *mh)
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

/* ------------------------------------------------------------ data path */

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

static nn_result_t ns_isend(void *comm, void *data, size_t size, int tag, void *mh, void **req)
{
	struct ns_comm *c = comm;
	nn_result_t r;
	pthread_mutex_lock(c->lock);
	r = ns_post(c, 1, data, size, tag, mh, req);
	pthread_mutex_unlock(c->lock);
	return r;
}

static nn_result_t ns_isend_v8(void *comm, void *data, int size, int tag, void *mh, void **req)
{
	if (size < 0)
		return NN_INTERNAL_ERROR;
	return ns_isend(comm, data, (size_t)size, tag, mh, req);
}

static nn_result_t ns_isend_v10(void *comm, void *data, size_t size, int tag, void *mh,
				void *phandle, void **req)
{
	(void)phandle;
	return ns_isend(comm, data, size, tag, mh, req);
}

static nn_result_t ns_irecv(void *comm, int n, void **data, size_t *sizes, int *tags, void **mhs,
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

static nn_result_t ns_irecv_v8(void *comm, int n, void **data, int *sizes, int *tags, void **mhs,
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

static nn_result_t ns_irecv_v10(void *comm, int n, void **data, size_t *sizes, int *tags,
				void **mhs, void **phandles, void **req)
{
	(void)phandles;
	return ns_irecv(comm, n, data, sizes, tags, mhs, req);
}

static nn_result_t ns_iflush(void *comm, int n, void **data, int *sizes, void **mhs, void **req)
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

static nn_result_t ns_test(void *request, int *done, int *sizes)
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
