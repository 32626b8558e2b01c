/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nccl_conn.c - connection set-up of the plugin (host layer, NCCL net
 * plugin over libsdr): listen() and its handle, connect() and accept()
 * pairing the two QPs over a TCP side channel (kept open afterwards to see
 * the peer exit), and close. docs/nccl.md.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include "nccl_priv.h"

#define NS_MAGIC 0x5344524eu /* "SDRN" */
#define NS_VERSION 1

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

enum { ST_NEW = 0, ST_CONNECTING, ST_HELLO, ST_WAIT_ACK, ST_READY };

struct ns_listen {
	int dev;
	int fd;
	struct ns_comm *rc; /* the receive comm prepared by listen() */
};

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

nn_result_t ns_listen(int dev, void *handle, void **listen_comm)
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

nn_result_t ns_connect_v8(int dev, void *handle, void **send_comm, nn_dev_handle_t **dc)
{
	if (dc)
		*dc = NULL;
	return ns_connect_step(dev, handle, send_comm);
}

nn_result_t ns_connect_v10(int dev, nn_comm_config_v10_t *cfg, void *handle, void **send_comm,
			   nn_dev_handle_t **dc)
{
	(void)cfg;
	return ns_connect_v8(dev, handle, send_comm, dc);
}

nn_result_t ns_accept(void *listen_comm, void **recv_comm, nn_dev_handle_t **dc)
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

nn_result_t ns_close_listen(void *listen_comm)
{
	struct ns_listen *l = listen_comm;
	if (!l)
		return NN_SUCCESS;
	ns_comm_free(l->rc);
	close(l->fd);
	free(l);
	return NN_SUCCESS;
}

nn_result_t ns_close(void *comm)
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
