/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * nccl_harness.c - drives libnccl-net-sdr.so the way NCCL's proxy does, with
 * no GPU and no NCCL (test layer, integration suite: tests/nccl/nccl_plugin.sh).
 * Two ranks (processes) over two sdr-dpu instances: dlopen + dlsym of the
 * versioned table, listen / handle through a pipe / connect + accept spun
 * together, registered ring buffers, batches of isend/irecv within NCCL's
 * request limit, test() until done, bytes verified, everything closed; and
 * the errors NCCL must see (size mismatch, peer gone, dead daemon, no daemon).
 */
#include <dlfcn.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "nccl_net_abi.h"

#define RING_BYTES (24u << 20) /* per comm: holds 2 x 8 MiB + the small ones */
#define MAX_MSG_BYTES (8u << 20)
#define STEPS NN_MAX_REQUESTS /* requests in flight per comm, as NCCL allows */
#define MAX_PAIRS 4           /* send + receive comms per rank (NCCL: per channel) */

static const char *o_plugin, *o_dpu[2], *o_mode = "ok", *o_ready;
static int o_api = 10, o_rounds = 2, o_timeout = 60, o_pairs = 1;
static int g_rank;
static int g_warns;
static int g_catch; /* dead-daemon mode: record the first error */
static nn_result_t g_caught = NN_SUCCESS;
static void *g_lib;
static const nn_net_v8_t *t8;
static const nn_net_v9_t *t9;
static const nn_net_v10_t *t10;

static void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void die(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "nccl_harness: rank %d: FAIL: ", g_rank);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void logger(int level, unsigned long flags, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	(void)flags;
	if (level == NN_LOG_WARN)
		g_warns++;
	fprintf(stderr, "[rank %d] NCCL %s %s:%d ", g_rank, level == NN_LOG_WARN ? "WARN" : "INFO",
		file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---------------- the API version chosen, behind one set of calls */

static nn_result_t p_init(void)
{
	return t10 ? t10->init(logger, NULL) : t9 ? t9->init(logger) : t8->init(logger);
}
static nn_result_t p_devices(int *n)
{
	return t10 ? t10->devices(n) : t9 ? t9->devices(n) : t8->devices(n);
}
static nn_result_t p_props(int dev, nn_props_v9_t *p)
{
	nn_props_v8_t q;
	nn_result_t r;
	if (t10)
		return t10->get_properties(dev, p);
	if (t9)
		return t9->get_properties(dev, p);
	r = t8->get_properties(dev, &q);
	memset(p, 0, sizeof(*p));
	p->name = q.name;
	p->ptr_support = q.ptr_support;
	p->max_recvs = q.max_recvs;
	p->max_comms = q.max_comms;
	p->speed = q.speed;
	p->max_p2p_bytes = MAX_MSG_BYTES;
	return r;
}
static nn_result_t p_listen(void *h, void **l)
{
	return t10 ? t10->listen(0, h, l) : t9 ? t9->listen(0, h, l) : t8->listen(0, h, l);
}
static nn_result_t p_connect(void *h, void **s)
{
	nn_dev_handle_t *dh = NULL;
	nn_comm_config_v10_t cfg = {.traffic_class = -1};
	return t10  ? t10->connect(0, &cfg, h, s, &dh)
	       : t9 ? t9->connect(0, h, s, &dh)
		    : t8->connect(0, h, s, &dh);
}
static nn_result_t p_accept(void *l, void **r)
{
	nn_dev_handle_t *dh = NULL;
	return t10 ? t10->accept(l, r, &dh) : t9 ? t9->accept(l, r, &dh) : t8->accept(l, r, &dh);
}
static nn_result_t p_regmr(void *c, void *d, size_t n, void **mh)
{
	return t10  ? t10->reg_mr(c, d, n, NN_PTR_HOST, mh)
	       : t9 ? t9->reg_mr(c, d, n, NN_PTR_HOST, mh)
		    : t8->reg_mr(c, d, n, NN_PTR_HOST, mh);
}
static nn_result_t p_deregmr(void *c, void *mh)
{
	return t10 ? t10->dereg_mr(c, mh) : t9 ? t9->dereg_mr(c, mh) : t8->dereg_mr(c, mh);
}
static nn_result_t p_isend(void *c, void *d, size_t n, int tag, void *mh, void **rq)
{
	if (t10)
		return t10->isend(c, d, n, tag, mh, NULL, rq);
	if (t9)
		return t9->isend(c, d, n, tag, mh, rq);
	return t8->isend(c, d, (int)n, tag, mh, rq);
}
static nn_result_t p_irecv(void *c, void *d, size_t n, int tag, void *mh, void **rq)
{
	void *dp[1] = {d}, *mp[1] = {mh}, *ph[1] = {NULL};
	int tg[1] = {tag}, is[1] = {(int)n};
	size_t ss[1] = {n};
	if (t10)
		return t10->irecv(c, 1, dp, ss, tg, mp, ph, rq);
	if (t9)
		return t9->irecv(c, 1, dp, ss, tg, mp, rq);
	return t8->irecv(c, 1, dp, is, tg, mp, rq);
}
static nn_result_t p_test(void *rq, int *done, int *size)
{
	return t10  ? t10->test(rq, done, size)
	       : t9 ? t9->test(rq, done, size)
		    : t8->test(rq, done, size);
}
static nn_result_t p_close_send(void *c)
{
	return t10 ? t10->close_send(c) : t9 ? t9->close_send(c) : t8->close_send(c);
}
static nn_result_t p_close_recv(void *c)
{
	return t10 ? t10->close_recv(c) : t9 ? t9->close_recv(c) : t8->close_recv(c);
}
static nn_result_t p_close_listen(void *c)
{
	return t10 ? t10->close_listen(c) : t9 ? t9->close_listen(c) : t8->close_listen(c);
}

static void load(void)
{
	char sym[32];
	g_lib = dlopen(o_plugin, RTLD_NOW | RTLD_LOCAL);
	if (!g_lib)
		die("dlopen %s: %s", o_plugin, dlerror());
	snprintf(sym, sizeof(sym), "ncclNetPlugin_v%d", o_api);
	void *t = dlsym(g_lib, sym);
	if (!t)
		die("%s: no symbol %s", o_plugin, sym);
	if (o_api == 10)
		t10 = t;
	else if (o_api == 9)
		t9 = t;
	else
		t8 = t;
	if (strcmp(*(const char *const *)t, "sdr") != 0)
		die("%s: plugin name '%s', want 'sdr'", sym, *(const char *const *)t);
}

/* ---------------- traffic */

static const size_t k_sizes[] = {
	0, 1, 2, 3, 100, 4095, 4096, 4097, 65536, 100003, 1u << 20, (4u << 20) - 1, 8u << 20};
#define NSIZES (sizeof(k_sizes) / sizeof(k_sizes[0]))

static uint8_t pat(unsigned msg, size_t j, int dir)
{
	return (uint8_t)(msg * 131u + j * 7u + (j >> 8) + (unsigned)dir * 59u + 1u);
}

struct ring { /* NCCL-like: a registered buffer, requests at consecutive places */
	char *buf;
	void *mh;
	size_t head, tail; /* bytes posted / retired (mod RING_BYTES at placement) */
};

struct slot {
	void *req;
	size_t off, size, posted;
	unsigned msg;
};

struct dir_state {
	void *comm;
	struct ring ring;
	struct slot s[STEPS];
	unsigned next, done, total, head_slot, tail_slot;
	int send;
	uint64_t bytes, backpressure;
};

/* Place @p n bytes contiguously in the ring; SIZE_MAX if it does not fit now. */
static size_t ring_place(struct ring *r, size_t n)
{
	size_t pos = r->head % RING_BYTES, need = n ? n : 1;
	if (pos + need > RING_BYTES)
		need += RING_BYTES - pos, pos = 0; /* skip the tail end */
	if (r->head + need - r->tail > RING_BYTES)
		return SIZE_MAX;
	r->head += need;
	return pos;
}

static size_t msg_size(unsigned i)
{
	return k_sizes[i % NSIZES];
}

static void dir_post(struct dir_state *d, int peer_dir)
{
	while (d->next < d->total && d->head_slot - d->tail_slot < STEPS) {
		struct slot *s = &d->s[d->head_slot % STEPS];
		size_t n = msg_size(d->next), posted = n;
		size_t head0 = d->ring.head;
		nn_result_t r;
		if (!d->send) /* NCCL posts the whole slot: a receive larger than the send */
			posted = n + (d->next % 3) * 37;
		if (posted > MAX_MSG_BYTES)
			posted = MAX_MSG_BYTES;
		size_t off = ring_place(&d->ring, posted);
		if (off == SIZE_MAX)
			return;
		if (d->send)
			for (size_t j = 0; j < n; j++)
				d->ring.buf[off + j] = (char)pat(d->next, j, peer_dir);
		else
			memset(d->ring.buf + off, 0xee, posted);
		s->req = NULL;
		r = d->send ? p_isend(d->comm, d->ring.buf + off, n, 7, d->ring.mh, &s->req)
			    : p_irecv(d->comm, d->ring.buf + off, posted, 7, d->ring.mh, &s->req);
		if (r != NN_SUCCESS && g_catch) {
			g_caught = r;
			d->ring.head = head0;
			return;
		}
		if (r != NN_SUCCESS)
			die("%s of %zu bytes (message %u): error %d", d->send ? "isend" : "irecv",
			    n, d->next, r);
		if (!s->req) { /* back-pressure: give the place back, retry later */
			d->ring.head = head0;
			d->backpressure++;
			return;
		}
		s->off = off;
		s->size = n;
		s->posted = posted;
		s->msg = d->next++;
		s->off += 0;
		d->head_slot++;
	}
}

static void dir_test(struct dir_state *d, int dir)
{
	/* NCCL tests its oldest request of each connection first and retires in order */
	while (d->tail_slot < d->head_slot) {
		struct slot *s = &d->s[d->tail_slot % STEPS];
		int done = 0, size = -1;
		nn_result_t r = p_test(s->req, &done, &size);
		if (r != NN_SUCCESS && g_catch) {
			g_caught = r;
			return;
		}
		if (r != NN_SUCCESS)
			die("test of %s message %u (%zu bytes): error %d",
			    d->send ? "send" : "receive", s->msg, s->size, r);
		if (!done)
			return;
		if ((size_t)size != s->size)
			die("%s message %u: test() says %d bytes, %zu were sent",
			    d->send ? "send" : "receive", s->msg, size, s->size);
		if (!d->send) {
			for (size_t j = 0; j < s->size; j++)
				if ((uint8_t)d->ring.buf[s->off + j] != pat(s->msg, j, dir))
					die("message %u of %zu bytes: byte %zu is 0x%02x, want "
					    "0x%02x",
					    s->msg, s->size, j, (uint8_t)d->ring.buf[s->off + j],
					    pat(s->msg, j, dir));
		}
		d->bytes += s->size;
		/* retire its ring space (placement was contiguous, in order) */
		size_t posted = s->posted ? s->posted : 1;
		size_t pos = d->ring.tail % RING_BYTES;
		if (pos + posted > RING_BYTES)
			d->ring.tail += RING_BYTES - pos;
		d->ring.tail += posted;
		d->tail_slot++;
		d->done++;
	}
}

/* NCCL's request limit on pair 0 before the traffic: 32 receives posted
 * (their sends not yet there), a 33rd gets a NULL request (back-pressure,
 * not an error); the peer's 32 one-byte sends then complete them all. */
static void limit_check(struct dir_state *tx, struct dir_state *rx)
{
	void *rq[STEPS + 1], *sq[STEPS];
	double t0 = now_s();
	int left;

	for (int i = 0; i < STEPS; i++) {
		rq[i] = NULL;
		if (p_irecv(rx->comm, rx->ring.buf + i * 64, 64, 7, rx->ring.mh, &rq[i]) !=
			    NN_SUCCESS ||
		    !rq[i])
			die("limit check: receive %d of %d refused", i + 1, STEPS);
	}
	rq[STEPS] = NULL;
	if (p_irecv(rx->comm, rx->ring.buf + STEPS * 64, 64, 7, rx->ring.mh, &rq[STEPS]) !=
	    NN_SUCCESS)
		die("limit check: receive %d: an error, want a NULL request", STEPS + 1);
	if (rq[STEPS])
		die("limit check: receive %d beyond NCCL's limit got a request", STEPS + 1);
	for (int i = 0; i < STEPS; i++) {
		tx->ring.buf[i * 64] = (char)(0x40 + i);
		sq[i] = NULL;
		while (!sq[i]) {
			if (p_isend(tx->comm, tx->ring.buf + i * 64, 1, 7, tx->ring.mh, &sq[i]) !=
			    NN_SUCCESS)
				die("limit check: send %d failed", i);
			if (now_s() - t0 > o_timeout)
				die("limit check: send %d gets no request", i);
		}
	}
	for (left = 2 * STEPS; left > 0;) {
		left = 0;
		for (int i = 0; i < STEPS; i++) {
			int done = 0, size = -1;
			if (sq[i]) {
				if (p_test(sq[i], &done, &size) != NN_SUCCESS)
					die("limit check: test of send %d", i);
				if (done)
					sq[i] = NULL;
				else
					left++;
			}
			if (rq[i]) {
				if (p_test(rq[i], &done, &size) != NN_SUCCESS)
					die("limit check: test of receive %d", i);
				if (done) {
					if (size != 1 || rx->ring.buf[i * 64] != (char)(0x40 + i))
						die("limit check: receive %d: %d bytes, 0x%02x", i,
						    size, (uint8_t)rx->ring.buf[i * 64]);
					rq[i] = NULL;
				} else {
					left++;
				}
			}
		}
		if (now_s() - t0 > o_timeout)
			die("limit check: %d requests still pending after %d s", left, o_timeout);
	}
	rx->backpressure++;
}

/* ---------------- one rank */

static void xwrite(int fd, const void *b, size_t n)
{
	if (write(fd, b, n) != (ssize_t)n)
		die("handle pipe: write: %s", strerror(errno));
}
static void xread(int fd, void *b, size_t n)
{
	size_t got = 0;
	while (got < n) {
		ssize_t k = read(fd, (char *)b + got, n - got);
		if (k <= 0)
			die("handle pipe: read: %s", k ? strerror(errno) : "peer closed it");
		got += (size_t)k;
	}
}

static void touch_ready(void)
{
	char p[512];
	FILE *f;
	if (!o_ready)
		return;
	snprintf(p, sizeof(p), "%s.%d", o_ready, g_rank);
	f = fopen(p, "w");
	if (f)
		fclose(f);
}

/* Wait for one request to fail (error modes). Returns the error. */
static nn_result_t wait_error(void *req, const char *what)
{
	double t0 = now_s();
	for (;;) {
		int done = 0, size = 0;
		nn_result_t r = p_test(req, &done, &size);
		if (r != NN_SUCCESS)
			return r;
		if (done)
			die("%s: completed (%d bytes), an error was expected", what, size);
		if (now_s() - t0 > o_timeout)
			die("%s: no error after %d s", what, o_timeout);
		usleep(200);
	}
}

static int rank_main(int rank, int wfd, int rfd)
{
	char myh[MAX_PAIRS][NN_HANDLE_MAXSIZE], peerh[MAX_PAIRS][NN_HANDLE_MAXSIZE];
	void *lc[MAX_PAIRS] = {0}, *sc[MAX_PAIRS] = {0}, *rc[MAX_PAIRS] = {0};
	int ndev = 0;
	nn_props_v9_t props;
	nn_result_t r;
	double t0;
	static struct dir_state txs[MAX_PAIRS], rxs[MAX_PAIRS];
	struct dir_state *tx = &txs[0], *rx = &rxs[0];
	int all;

	g_rank = rank;
	setenv("SDR_DPU", o_dpu[rank], 1);
	load();
	r = p_init();
	if (!strcmp(o_mode, "no-daemon")) {
		if (r == NN_SUCCESS)
			die("init succeeded without a daemon");
		if (!g_warns)
			die("init failed (%d) without a log line", r);
		printf("nccl_harness: rank %d: init without a daemon: error %d, logged\n", rank, r);
		dlclose(g_lib);
		return 0;
	}
	if (r != NN_SUCCESS)
		die("init: error %d", r);
	if (p_devices(&ndev) != NN_SUCCESS || ndev != 1)
		die("devices: %d, want 1", ndev);
	if (p_props(0, &props) != NN_SUCCESS || props.ptr_support != NN_PTR_HOST ||
	    props.max_recvs != 1 || strcmp(props.name, "sdr0") ||
	    props.max_p2p_bytes < MAX_MSG_BYTES)
		die("getProperties: name %s ptrSupport %d maxRecvs %d maxP2pBytes %zu", props.name,
		    props.ptr_support, props.max_recvs, props.max_p2p_bytes);

	/* connection set-up as NCCL does it: listen, handle to the peer, then
	 * connect and accept called again and again until both return comms */
	memset(myh, 0, sizeof(myh));
	for (int k = 0; k < o_pairs; k++)
		if (p_listen(myh[k], &lc[k]) != NN_SUCCESS || !lc[k])
			die("listen failed");
	xwrite(wfd, myh, sizeof(myh[0]) * (size_t)o_pairs);
	xread(rfd, peerh, sizeof(peerh[0]) * (size_t)o_pairs);
	t0 = now_s();
	unsigned spins = 0;
	do {
		all = 1;
		for (int k = 0; k < o_pairs; k++) {
			if (!sc[k] && p_connect(peerh[k], &sc[k]) != NN_SUCCESS)
				die("connect failed");
			if (!rc[k] && p_accept(lc[k], &rc[k]) != NN_SUCCESS)
				die("accept failed");
			all &= sc[k] && rc[k];
		}
		spins++;
		if (now_s() - t0 > o_timeout)
			die("connect/accept: no comms after %d s", o_timeout);
		if (!all)
			usleep(100);
	} while (!all);
	printf("nccl_harness: rank %d: %d comm pair(s) connected after %u calls (API v%d)\n", rank,
	       o_pairs, spins, o_api);

	for (int k = 0; k < o_pairs; k++) {
		memset(&txs[k], 0, sizeof(txs[k]));
		memset(&rxs[k], 0, sizeof(rxs[k]));
		txs[k].send = 1;
		txs[k].comm = sc[k];
		rxs[k].comm = rc[k];
		txs[k].ring.buf = malloc(RING_BYTES);
		rxs[k].ring.buf = malloc(RING_BYTES);
		if (!txs[k].ring.buf || !rxs[k].ring.buf)
			die("out of memory");
		if (p_regmr(sc[k], txs[k].ring.buf, RING_BYTES, &txs[k].ring.mh) != NN_SUCCESS ||
		    p_regmr(rc[k], rxs[k].ring.buf, RING_BYTES, &rxs[k].ring.mh) != NN_SUCCESS)
			die("regMr failed");
	}

	if (!strcmp(o_mode, "mismatch")) {
		/* rank 0 sends 8192 bytes into rank 1's 4096-byte receive */
		void *req = NULL;
		nn_result_t e;
		if (rank == 0) {
			memset(tx->ring.buf, 1, 8192);
			while (!req)
				if (p_isend(sc[0], tx->ring.buf, 8192, 7, tx->ring.mh, &req) !=
				    NN_SUCCESS)
					die("isend failed at once");
			e = wait_error(req, "send larger than the receive");
		} else {
			while (!req)
				if (p_irecv(rc[0], rx->ring.buf, 4096, 7, rx->ring.mh, &req) !=
				    NN_SUCCESS)
					die("irecv failed at once");
			e = wait_error(req, "receive smaller than the send");
		}
		if (!g_warns)
			die("size mismatch: error %d without a log line", e);
		printf("nccl_harness: rank %d: size mismatch: error %d, logged\n", rank, e);
		goto close_all;
	}
	if (!strcmp(o_mode, "peer-gone")) {
		/* rank 1 exits without a receive; rank 0's send must fail */
		void *req = NULL;
		nn_result_t e;
		if (rank == 1) {
			printf("nccl_harness: rank 1: exiting without closing\n");
			fflush(stdout);
			_exit(0);
		}
		memset(tx->ring.buf, 2, 65536);
		while (!req)
			if (p_isend(sc[0], tx->ring.buf, 65536, 7, tx->ring.mh, &req) != NN_SUCCESS)
				die("isend failed at once");
		e = wait_error(req, "send to an exited peer");
		if (e != NN_SYSTEM_ERROR || !g_warns)
			die("peer gone: error %d (want %d, ncclSystemError) logged %d", e,
			    NN_SYSTEM_ERROR, g_warns);
		printf("nccl_harness: rank 0: peer gone: ncclSystemError, logged\n");
		goto close_all;
	}

	if (!strcmp(o_mode, "ok"))
		limit_check(tx, rx);
	for (int k = 0; k < o_pairs; k++) {
		txs[k].total = rxs[k].total = (unsigned)(o_rounds * (int)NSIZES);
		if (!strcmp(o_mode, "dead-daemon"))
			txs[k].total = rxs[k].total = 1u << 30; /* until the daemon dies */
	}
	t0 = now_s();
	int readied = 0;
	for (;;) {
		all = 1;
		for (int k = 0; k < o_pairs; k++)
			all &= txs[k].done >= txs[k].total && rxs[k].done >= rxs[k].total;
		if (all)
			break;
		if (!strcmp(o_mode, "dead-daemon")) {
			/* traffic goes on until the daemon (killed by the script once
			 * both ranks are ready) is gone: then a call must fail */
			if (!readied && tx->done >= NSIZES && rx->done >= NSIZES) {
				touch_ready();
				readied = 1;
				g_catch = 1;
			}
			if (g_caught != NN_SUCCESS) {
				if (g_caught != NN_SYSTEM_ERROR || !g_warns)
					die("dead daemon: error %d (want ncclSystemError), logged "
					    "%d",
					    g_caught, g_warns);
				printf("nccl_harness: rank %d: dead daemon: ncclSystemError, "
				       "logged\n",
				       rank);
				goto close_all;
			}
		}
		for (int k = 0; k < o_pairs; k++) { /* pattern: pair k offsets the direction */
			dir_post(&rxs[k], (rank ^ 1) + 2 * k);
			dir_post(&txs[k], rank + 2 * k);
			dir_test(&txs[k], rank + 2 * k);
			dir_test(&rxs[k], (rank ^ 1) + 2 * k);
		}
		if (now_s() - t0 > o_timeout)
			die("traffic: after %d s, %u/%u sent, %u/%u received", o_timeout, tx->done,
			    tx->total, rx->done, rx->total);
	}
	double dt = now_s() - t0;
	unsigned msgs = 0;
	uint64_t sent = 0, got = 0, bp = 0;
	for (int k = 0; k < o_pairs; k++) {
		msgs += txs[k].done;
		sent += txs[k].bytes;
		got += rxs[k].bytes;
		bp += txs[k].backpressure + rxs[k].backpressure;
	}
	printf("nccl_harness: rank %d: %u messages each way (0 B - 8 MiB) over %d comm pair(s), "
	       "%.1f MiB sent and %.1f MiB received bit-exact in %.2f s, NULL requests %llu "
	       "(one: the 33rd receive), "
	       "API v%d\n",
	       rank, msgs, o_pairs, sent / 1048576.0, got / 1048576.0, dt, (unsigned long long)bp,
	       o_api);
	if (g_warns)
		die("%d warnings on a good run", g_warns);

close_all:
	for (int k = 0; k < o_pairs; k++) {
		if (txs[k].ring.mh && p_deregmr(sc[k], txs[k].ring.mh) != NN_SUCCESS)
			die("deregMr");
		if (rxs[k].ring.mh && p_deregmr(rc[k], rxs[k].ring.mh) != NN_SUCCESS)
			die("deregMr");
		if (p_close_send(sc[k]) != NN_SUCCESS || p_close_recv(rc[k]) != NN_SUCCESS ||
		    p_close_listen(lc[k]) != NN_SUCCESS)
			die("close failed");
		free(txs[k].ring.buf);
		free(rxs[k].ring.buf);
	}
	dlclose(g_lib);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: nccl_harness --plugin SO --dpu0 SOCK --dpu1 SOCK [--api 8|9|10]\n"
			"       [--mode ok|mismatch|peer-gone|dead-daemon|no-daemon] [--rounds N]\n"
			"       [--timeout S] [--ready PATH] [--pairs 1..4]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int p01[2], p10[2], st, fails = 0;
	pid_t pid[2];

	for (int i = 1; i < argc; i += 2) { /* --option VALUE pairs */
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!v)
			usage();
		if (!strcmp(a, "--plugin"))
			o_plugin = v;
		else if (!strcmp(a, "--dpu0"))
			o_dpu[0] = v;
		else if (!strcmp(a, "--dpu1"))
			o_dpu[1] = v;
		else if (!strcmp(a, "--api"))
			o_api = atoi(v);
		else if (!strcmp(a, "--mode"))
			o_mode = v;
		else if (!strcmp(a, "--rounds"))
			o_rounds = atoi(v);
		else if (!strcmp(a, "--timeout"))
			o_timeout = atoi(v);
		else if (!strcmp(a, "--pairs"))
			o_pairs = atoi(v);
		else if (!strcmp(a, "--ready"))
			o_ready = v;
		else
			usage();
	}
	if (!o_plugin || !o_dpu[0] || !o_dpu[1] || (o_api != 8 && o_api != 9 && o_api != 10) ||
	    o_rounds < 1 || o_pairs < 1 || o_pairs > MAX_PAIRS)
		usage();
	signal(SIGPIPE, SIG_IGN);
	if (pipe(p01) || pipe(p10))
		die("pipe: %s", strerror(errno));
	fflush(stdout);
	for (int r = 0; r < 2; r++) {
		pid[r] = fork();
		if (pid[r] < 0)
			die("fork: %s", strerror(errno));
		if (pid[r] == 0) {
			int w = r == 0 ? p01[1] : p10[1], rd = r == 0 ? p10[0] : p01[0];
			close(r == 0 ? p01[0] : p10[0]);
			close(r == 0 ? p10[1] : p01[1]);
			exit(rank_main(r, w, rd));
		}
	}
	close(p01[0]);
	close(p01[1]);
	close(p10[0]);
	close(p10[1]);
	for (int r = 0; r < 2; r++) {
		if (waitpid(pid[r], &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
			fprintf(stderr, "nccl_harness: rank %d failed (status 0x%x)\n", r, st);
			fails++;
		}
	}
	if (fails)
		return 1;
	printf("nccl_harness: mode %s, API v%d: pass\n", o_mode, o_api);
	return 0;
}
