/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control plane on the main lcore (layer ctl): the host socket's sessions.
 * Hosts attach over a SOCK_SEQPACKET unix socket and receive their context
 * segment (memfd); their requests go to ctrl_res.c (memory regions: memfds,
 * which we map; quotas) and ctrl_qp.c (create/connect/destroy QPs). A host
 * that hangs up or dies loses its QPs and mappings; the others keep working.
 *
 * No host can stall or starve the others (docs/host-api.md "Limits and
 * quotas"): client sockets are non-blocking, and a reply the client does
 * not take within --ctl-reply-timeout-ms drops it; a connection must say
 * HELLO within --ctl-hello-timeout-ms; nothing on this thread waits for a
 * host's memory (MRs are mapped lazily, mrpop.c maps resident pages in the
 * background); connections, contexts, QPs and registered bytes are limited
 * per client (the peer's uid, or its pid with --quota-key pid) and instance.
 */
#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_random.h>

#include "cq.h"
#include "ctl_mem.h"
#include "ctrl.h"
#include "ctrl_int.h"
#include "mrpop.h"
#include "restore_state.h"
#include "sdr_tomb.h"
#include "sdr_fdpass.h"
#include "worker.h"

#define ACCEPT_BURST 64 /* connections accepted per poll */

static struct client clients[MAX_CLIENTS];
static unsigned nclients;
static unsigned next_worker[SDR_MAX_INST];

/* ---------- socket helpers ---------- */

/* Send a reply of @p size bytes (a 2.0 request gets SDR_CTL_RESP_SIZE_2_0,
 * a 2.1 one the whole struct) without blocking: 0 sent, 1 the socket is
 * full, -1 error. */
static int send_resp(int fd, struct sdr_ctl_resp *r, int pass_fd, size_t size)
{
	int rc;

	r->magic = SDR_CTL_MAGIC;
	rc = sdr_fd_send(fd, r, size, pass_fd, 0); /* never waits */
	if (rc == 0)
		return 0;
	return rc == -EAGAIN ? 1 : -1;
}

/* Receive one request; *fd_out gets a passed descriptor or -1. A 2.0
 * request (SDR_CTL_REQ_SIZE_2_0 bytes) is taken with the 2.1 fields zero;
 * *rsize gets the size of the response it is owed.
 * Returns 1 on a request, 0 on hang-up, -1 on a malformed message, -2 when
 * there was nothing to read after all. */
static int recv_req(int fd, struct sdr_ctl_req *q, int *fd_out, size_t *rsize)
{
	ssize_t n;

	memset(q, 0, sizeof(*q));
	n = sdr_fd_recv(fd, q, sizeof(*q), fd_out, 0);
	*rsize = n == (ssize_t)SDR_CTL_REQ_SIZE_2_0 ? SDR_CTL_RESP_SIZE_2_0
						    : sizeof(struct sdr_ctl_resp);
	if (n == -EAGAIN)
		return -2;
	if (n == -EMSGSIZE ||
	    (n > 0 && (((size_t)n != sizeof(*q) && (size_t)n != SDR_CTL_REQ_SIZE_2_0) ||
		       q->magic != SDR_CTL_MAGIC))) {
		if (*fd_out >= 0)
			close(*fd_out);
		*fd_out = -1;
		return -1;
	}
	return n > 0 ? 1 : 0; /* 0: hang-up, or the socket failed */
}

/* ---------- requests ---------- */

static int do_hello(struct client *cl, const struct sdr_ctl_req *q, struct sdr_ctl_resp *r,
		    int *pass)
{
	struct sdr_inst *in = cl->in;
	struct sdr_hctx *c;
	struct sdr_seg_hdr *h;
	size_t off, size;
	unsigned slot;
	struct sdr_cmd cmd = {.type = SDR_CMD_ADD_CTX};

	if (cl->ctx)
		return ctl_fail(r, EISCONN, "already attached");
	if (q->abi_major != SDR_ABI_MAJOR)
		return ctl_fail(r, EPROTO, "ABI %u.x, this daemon speaks %u.%u", q->abi_major,
				SDR_ABI_MAJOR, SDR_ABI_MINOR);
	if (sdr_g.cfg.quota_ctxs && cl->q->ctxs >= sdr_g.cfg.quota_ctxs) {
		char w[48], wl[64];
		ctl_note(SDR_CTR_ctl_quota_ctxs, in->cfg.name,
			 "HELLO of %s refused: %u contexts"
			 " attached (--quota-ctxs)",
			 ctl_who_log(cl, wl), cl->q->ctxs);
		return ctl_fail(r, EDQUOT,
				"%s has %u contexts attached to this DPU (--quota-ctxs %u)",
				ctl_who(cl, w), cl->q->ctxs, sdr_g.cfg.quota_ctxs);
	}
	for (slot = 0; slot < SDR_MAX_CTX && in->ctxs[slot]; slot++)
		;
	if (slot == SDR_MAX_CTX)
		return ctl_fail(r, EUSERS, "too many hosts attached (%d)", SDR_MAX_CTX);
	c = calloc(1, sizeof(*c));
	/* completions waiting for CQ room: sized now for everything a context
	 * can have outstanding (the worker never allocates; pages are only
	 * touched when the host falls that far behind) */
	if (c)
		c->ovf = calloc(SDR_CQ_OVF_FOR(1), sizeof(*c->ovf));
	if (!c || !c->ovf) {
		free(c);
		return ctl_fail(r, ENOMEM, "out of memory");
	}
	c->ovf_cap = SDR_CQ_OVF_FOR(1);
	off = RTE_ALIGN_CEIL(sizeof(struct sdr_seg_hdr), SDR_CACHE_LINE);
	size_t sq_idx = off;
	off += RTE_ALIGN_CEIL(sizeof(struct sdr_ring_idx), SDR_CACHE_LINE);
	size_t sq = off;
	off += SDR_SQ_ENTRIES * sizeof(struct sdr_sqe);
	size_t cq_idx = off;
	off += RTE_ALIGN_CEIL(sizeof(struct sdr_ring_idx), SDR_CACHE_LINE);
	size_t cq = off;
	off += SDR_CQ_ENTRIES * sizeof(struct sdr_cqe);
	size = RTE_ALIGN_CEIL(off, 4096);
	c->seg = sdr_seg_create("sdr-ctx", size, &c->seg_fd);
	if (!c->seg) {
		free(c->ovf);
		free(c);
		return ctl_fail(r, ENOMEM, "cannot create the shared segment: %s", strerror(errno));
	}
	c->seg_size = size;
	h = c->hdr = c->seg;
	h->magic = SDR_SEG_MAGIC;
	h->abi_major = SDR_ABI_MAJOR;
	h->abi_minor = SDR_ABI_MINOR;
	h->seg_size = size;
	h->sq_entries = SDR_SQ_ENTRIES;
	h->sq_esize = sizeof(struct sdr_sqe);
	h->cq_entries = SDR_CQ_ENTRIES;
	h->cq_esize = sizeof(struct sdr_cqe);
	h->sq_idx_off = sq_idx;
	h->sq_off = sq;
	h->cq_idx_off = cq_idx;
	h->cq_off = cq;
	sdr_ring_format((void *)((uint8_t *)c->seg + sq_idx), SDR_SQ_ENTRIES,
			sizeof(struct sdr_sqe));
	sdr_ring_format((void *)((uint8_t *)c->seg + cq_idx), SDR_CQ_ENTRIES,
			sizeof(struct sdr_cqe));
	/* our views use our own sizes, never the (host-writable) header's */
	sdr_ring_attach(&c->sq, (void *)((uint8_t *)c->seg + sq_idx), (uint8_t *)c->seg + sq,
			SDR_SQ_ENTRIES, sizeof(struct sdr_sqe), 0);
	sdr_ring_attach(&c->cq, (void *)((uint8_t *)c->seg + cq_idx), (uint8_t *)c->seg + cq,
			SDR_CQ_ENTRIES, sizeof(struct sdr_cqe), 1);
	for (unsigned i = 0; i < SDR_MAX_MRS; i++)
		c->mrs[i].fd = -1;
	c->id = slot;
	c->sock = cl->fd;
	c->inst = in;
	/* round robin per instance: the k-th context of every instance is on
	 * worker k mod N, so two QPs that talk through a ring pair (whose queue
	 * q leads to the other instance's queue q) share their worker and need
	 * no hand-off (docs/architecture.md "multiple workers") */
	c->worker = next_worker[in->idx]++ % sdr_g.nworkers;
	/* a channel context (docs/architecture.md "Channels") asks for its
	 * worker and leaves the round robin as it was */
	if (q->want_worker) {
		next_worker[in->idx]--;
		/* (modulo: a context re-attaching to a daemon restarted with fewer
		 * workers still attaches; the reply says where) */
		c->worker = (q->want_worker - 1) % sdr_g.nworkers;
	}
	c->pid = cl->pid;
	in->ctxs[slot] = c;
	cl->ctx = c;
	cl->q->ctxs++;
	cmd.obj = c;
	sdr_worker_call(c->worker, &cmd);
	r->id = slot;
	r->seg_size = size;
	r->ext = SDR_EXT_HELLO(c->worker, sdr_g.nworkers, sdr_g.cfg.channels);
	*pass = c->seg_fd;
	printf("sdr-dpu[%s]: host pid %d uid %u attached (context %u, worker %u)\n", in->cfg.name,
	       (int)c->pid, (unsigned)cl->uid, slot, c->worker);
	return 0;
}

static void ctx_destroy(struct sdr_hctx *c)
{
	struct sdr_cmd cmd = {.type = SDR_CMD_DEL_CTX, .obj = c};

	while (c->nqps)
		ctl_qp_destroy(c, c->qps[c->nqps - 1], SDR_CLOSED_DETACHED);
	sdr_worker_call(c->worker, &cmd);
	sdr_worker_quiesce_all();
	for (unsigned i = 0; i < SDR_MAX_MRS; i++)
		ctl_mr_unmap(&c->mrs[i]);
	c->inst->ctxs[c->id] = NULL;
	sdr_seg_free(c->seg, c->seg_size, c->seg_fd);
	free(c->ovf);
	free(c);
}

static void client_drop(unsigned i)
{
	struct client *cl = &clients[i];
	struct sdr_hctx *c = cl->ctx;

	if (c) {
		printf("sdr-dpu[%s]: host pid %d detached (context %u): tearing down its QPs and "
		       "MRs\n",
		       cl->in->cfg.name, (int)c->pid, c->id);
		cl->q->qps -= c->nqps;
		for (unsigned k = 0; k < SDR_MAX_MRS; k++)
			if (c->mrs[k].fd >= 0)
				cl->q->mr_bytes -= c->mrs[k].len;
		cl->q->ctxs--;
		ctx_destroy(c);
	}
	if (--cl->q->conns == 0)
		cl->q->used = 0;
	close(cl->fd);
	clients[i] = clients[--nclients];
}

/* Send @p r, or keep it for later when the socket is full (see struct
 * client). Returns -1 when the client is to be dropped. */
static int client_reply(struct client *cl, struct sdr_ctl_resp *r, int pass, size_t size)
{
	int rc = send_resp(cl->fd, r, pass, size);

	if (rc == 1) {
		cl->pending = 1;
		cl->pend = *r;
		cl->pend_fd = pass;
		cl->pend_size = size;
		cl->pend_by = ctl_now_ms() + sdr_g.cfg.ctl_reply_timeout_ms;
		return 0;
	}
	return rc;
}

/* returns 0 to keep the client, -1 to drop it */
static int client_serve(struct client *cl)
{
	struct sdr_ctl_req q;
	struct sdr_ctl_resp r;
	size_t rsize;
	int fd, pass = -1, rc = recv_req(cl->fd, &q, &fd, &rsize);

	if (rc == -2)
		return 0;
	if (rc == 0)
		return -1;
	memset(&r, 0, sizeof(r));
	if (rc < 0) {
		char wl[64];
		ctl_note(SDR_CTR_ctl_malformed, cl->in->cfg.name, "%s dropped: malformed request",
			 ctl_who_log(cl, wl));
		ctl_fail(&r, EPROTO, "malformed request");
		send_resp(cl->fd, &r, -1, rsize);
		return -1;
	}
	r.type = q.type;
	if (q.type != SDR_CTL_HELLO && !cl->ctx) {
		ctl_fail(&r, ENOTCONN, "send HELLO first");
	} else if (q.abi_major != SDR_ABI_MAJOR) {
		ctl_fail(&r, EPROTO, "ABI %u.x, this daemon speaks %u.%u", q.abi_major,
			 SDR_ABI_MAJOR, SDR_ABI_MINOR);
	} else {
		switch (q.type) {
		case SDR_CTL_HELLO: do_hello(cl, &q, &r, &pass); break;
		case SDR_CTL_MR_REG:
			if (ctl_req_mr_reg(cl, &q, fd, &r) == 1)
				fd = -1; /* kept */
			break;
		case SDR_CTL_MR_DEREG: ctl_req_mr_dereg(cl, &q, &r); break;
		case SDR_CTL_QP_CREATE: ctl_req_qp_create(cl, &q, &r, &pass); break;
		case SDR_CTL_QP_CONNECT: ctl_req_qp_connect(cl->ctx, &q, &r); break;
		case SDR_CTL_QP_DESTROY: ctl_req_qp_destroy(cl, &q, &r); break;
		case SDR_CTL_QP_SET_RATE: ctl_req_qp_set_rate(cl->ctx, &q, &r); break;
		case SDR_CTL_QP_RESTORE:
			if (ctl_req_qp_restore(cl, &q, fd, &r) == 1)
				fd = -1; /* the QP's segment now */
			break;
		default: ctl_fail(&r, EOPNOTSUPP, "request type %u not supported", q.type);
		}
	}
	if (fd >= 0)
		close(fd);
	return client_reply(cl, &r, pass, rsize);
}

/* A connection we do not serve: tell the client why (its first request is
 * a HELLO, so the reply is one), then hang up. */
static void conn_refuse(struct sdr_inst *in, int cfd, int err, enum sdr_ctr ctr, const char *fmt,
			...) __attribute__((format(printf, 5, 6)));
static void conn_refuse(struct sdr_inst *in, int cfd, int err, enum sdr_ctr ctr, const char *fmt,
			...)
{
	struct sdr_ctl_resp r;
	struct sdr_ctl_req q;
	size_t rsize;
	va_list ap;
	int fd;

	memset(&r, 0, sizeof(r));
	r.type = SDR_CTL_HELLO;
	r.status = -err;
	va_start(ap, fmt);
	vsnprintf(r.msg, sizeof(r.msg), fmt, ap);
	va_end(ap);
	send_resp(cfd, &r, -1, sizeof(r)); /* (before any request: a 2.1 reply) */
	/* a request already queued would turn our close into ECONNRESET at
	 * the client before it reads the reason: take it */
	while (recv_req(cfd, &q, &fd, &rsize) != -2 && fd >= 0)
		close(fd);
	close(cfd);
	ctl_note(ctr, in->cfg.name, "connection refused: %s", r.msg);
}

static void accept_clients(struct sdr_inst *in)
{
	for (unsigned k = 0; k < ACCEPT_BURST; k++) {
		int cfd = accept4(in->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		struct ucred cr = {.pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1};
		socklen_t l = sizeof(cr);
		struct client *cl;
		struct quota *q;
		char w[48];

		if (cfd < 0)
			return;
		getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cr, &l);
		if (nclients == MAX_CLIENTS) {
			conn_refuse(in, cfd, EUSERS, SDR_CTR_ctl_table_full,
				    "the daemon has %d connections"
				    " open, its maximum; pid %d refused",
				    MAX_CLIENTS, (int)cr.pid);
			continue;
		}
		q = ctl_quota_get((unsigned)(in - sdr_g.inst),
				  sdr_g.cfg.quota_by_pid ? (uint32_t)cr.pid : (uint32_t)cr.uid);
		if (!q) { /* cannot happen: one quota per connection at most */
			conn_refuse(in, cfd, EUSERS, SDR_CTR_ctl_table_full, "no quota entry free");
			continue;
		}
		cl = &clients[nclients];
		memset(cl, 0, sizeof(*cl));
		cl->pid = cr.pid;
		cl->uid = cr.uid;
		if (sdr_g.cfg.quota_conns && q->conns >= sdr_g.cfg.quota_conns) {
			conn_refuse(in, cfd, EDQUOT, SDR_CTR_ctl_quota_conns,
				    "%s has %u connections open"
				    " to this DPU (--quota-conns %u)",
				    ctl_who(cl, w), q->conns, sdr_g.cfg.quota_conns);
			if (!q->conns)
				q->used = 0;
			continue;
		}
		q->conns++;
		cl->fd = cfd;
		cl->in = in;
		cl->q = q;
		cl->pend_fd = -1;
		cl->hello_by = ctl_now_ms() + sdr_g.cfg.ctl_hello_timeout_ms;
		nclients++;
	}
}

/* ---------- listening ---------- */

/* QPN epoch: without a state file, a restarted daemon numbers its QPs
 * differently, so the packets its peers still send to the old incarnation
 * are recognised (stale_epoch) instead of landing in new QPs. With one
 * (--state-dir), it reuses the epoch of the file: the QPs of the previous
 * incarnation can be restored, and their blocks are reserved until then
 * (restore_state.c). */
static uint32_t ctrl_epoch(struct sdr_inst *in)
{
	uint32_t e;

	if (sdr_g.cfg.qpn_epoch >= 0)
		e = (uint32_t)sdr_g.cfg.qpn_epoch;
	else if (!sdr_rstate_open(in, &e))
		e = 1 + (uint32_t)(rte_rand() % (SDR_QPN_EPOCHS - 1));
	if (sdr_g.cfg.qpn_epoch >= 0) /* explicit: the file follows (or is made) */
		(void)sdr_rstate_open(in, &(uint32_t){0});
	sdr_rstate_set_epoch(in, e);
	return e;
}

int sdr_ctrl_init(struct sdr_inst *in)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	/* what destroyed QPs leave for their peers (ctrl_qp.c) */
	in->tombs = calloc(SDR_MAX_QPS, sizeof(*in->tombs));
	if (!in->tombs)
		return -1;

	in->qpn_first = SDR_QPN_FIRST + SDR_QPN_EPOCH_SPAN * ctrl_epoch(in);
	if (strlen(in->cfg.name) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "sdr-dpu: --name %s is too long for a unix socket path\n",
			in->cfg.name);
		return -1;
	}
	strcpy(sa.sun_path, in->cfg.name);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	/* A live daemon on this path? Then refuse; a stale socket file we replace. */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		fprintf(stderr, "sdr-dpu: another daemon is serving %s\n", in->cfg.name);
		close(fd);
		return -1;
	}
	close(fd);
	unlink(in->cfg.name);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 16)) {
		fprintf(stderr, "sdr-dpu: cannot listen on %s: %s\n", in->cfg.name,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	chmod(in->cfg.name, 0660);
	in->listen_fd = fd;
	if (sdr_mrpop_init()) /* without it, the workers fault MR pages in as packets land */
		fprintf(stderr, "sdr-dpu: cannot start the MR populate thread: %s\n",
			strerror(errno));
	return 0;
}

void sdr_ctrl_poll(int timeout_ms)
{
	struct pollfd pfd[SDR_MAX_INST + MAX_CLIENTS];
	unsigned n = 0, i, nc = nclients;
	uint64_t t = ctl_now_ms();

	for (i = 0; i < sdr_g.ninst; i++) {
		pfd[n].fd = sdr_g.inst[i].listen_fd;
		pfd[n++].events = POLLIN;
	}
	for (i = 0; i < nc; i++) {
		struct client *cl = &clients[i];
		uint64_t by = cl->pending ? cl->pend_by : cl->ctx ? 0 : cl->hello_by;
		pfd[n].fd = cl->fd;
		pfd[n++].events = cl->pending ? POLLOUT : POLLIN;
		if (by && (int64_t)(by - t) < timeout_ms)
			timeout_ms = by > t ? (int)(by - t) : 0;
	}
	if (poll(pfd, n, timeout_ms) < 0)
		return;
	t = ctl_now_ms();
	/* serve clients from the end so that dropping one (swap with last)
	 * does not skip another; before accepting new connections, so that a
	 * client that hung up and connects again is not counted twice against
	 * its quota */
	for (i = nc; i-- > 0;) {
		struct client *cl = &clients[i];
		short ev = pfd[sdr_g.ninst + i].revents;
		char w[64];

		if (cl->pending) {
			int rc = 1;
			if (ev & POLLOUT)
				rc = send_resp(cl->fd, &cl->pend, cl->pend_fd, cl->pend_size);
			if (rc == 0) {
				cl->pending = 0;
			} else if (rc < 0 || (ev & (POLLHUP | POLLERR))) {
				client_drop(i);
			} else if ((int64_t)(t - cl->pend_by) >= 0) {
				ctl_note(
					SDR_CTR_ctl_reply_timeout, cl->in->cfg.name,
					"%s dropped: it did"
					" not take its reply within %u ms (--ctl-reply-timeout-ms)",
					ctl_who_log(cl, w), sdr_g.cfg.ctl_reply_timeout_ms);
				client_drop(i);
			}
			continue;
		}
		if (!cl->ctx && (int64_t)(t - cl->hello_by) >= 0 && !(ev & POLLIN)) {
			ctl_note(SDR_CTR_ctl_hello_timeout, cl->in->cfg.name,
				 "%s dropped: no HELLO"
				 " within %u ms (--ctl-hello-timeout-ms)",
				 ctl_who_log(cl, w), sdr_g.cfg.ctl_hello_timeout_ms);
			client_drop(i);
			continue;
		}
		if (!ev)
			continue;
		if ((ev & (POLLHUP | POLLERR)) && !(ev & POLLIN)) {
			client_drop(i);
			continue;
		}
		if (client_serve(cl))
			client_drop(i);
	}
	for (i = 0; i < sdr_g.ninst; i++)
		if (pfd[i].revents & POLLIN)
			accept_clients(&sdr_g.inst[i]);
}

void sdr_ctrl_fini(void)
{
	sdr_mrpop_fini(); /* before any MR is unmapped */
	/* the QPs hosts hold stay in the state file: the next incarnation
	 * keeps them for their restore (a planned restart is one too) */
	sdr_rstate_close_all();
	while (nclients)
		client_drop(nclients - 1);
	for (unsigned i = 0; i < sdr_g.ninst; i++)
		if (sdr_g.inst[i].listen_fd >= 0) {
			close(sdr_g.inst[i].listen_fd);
			unlink(sdr_g.inst[i].cfg.name);
		}
}
