/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-pipe runtime. One process per DC: each local stage is a thread that
 * interprets its program (pipe_prog_build()); compute is emulated by
 * sleeping until the op's deadline (payload fill and checksum verification
 * happen inside that window). A boundary between two local stages is a
 * shared-memory mailbox per channel; a boundary between DCs is one libsdr QP
 * (activations one way, gradients the other; message n of a direction is
 * micro-batch n % M of iteration n / M). DC 0 is the coordinator: every
 * other DC connects to it (TCP); it checks their configuration digests,
 * measures their clock offsets, relays the QP infos, and every iteration
 * sends each DC the start time and its QPs' rates (the controller,
 * pipe_cba.h) and gets its events back (pipe_proto.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "pipe_net.h"
#include "pipe_proto.h"
#include "pipe_run.h"
#include "sdr.h"
#include "sdr_app.h"

/* DC 0 announces an iteration's start this long ahead (its own clock) */
#define START_AHEAD_S 0.02

struct chan {
	uint32_t ch, src, dst;
	uint64_t size;
	int cross;
	/* intra-DC mailbox: generation (iter + 1) per message */
	uint8_t *buf;
	uint32_t *posted, *full;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	/* cross-DC */
	struct sdr_qp *qp;
	struct sdr_mr *mr;
	uint8_t *sbuf;
	struct sdr_send_handle **sh;
	struct sdr_recv_handle **rh;
};

struct rt {
	const struct pipe_cfg *c;
	const struct pipe_prog *p;
	const struct pipe_rt_opts *o;
	struct sdr_ctx *ctx;
	pthread_mutex_t sdr_mu;
	struct chan ch[2 * PIPE_MAX_STAGES];
	struct sdr_qp *qp_of[PIPE_MAX_STAGES]; /* per boundary b (b | b+1) */
	pthread_barrier_t bar;
	double t_start;       /* this iteration's start, CLOCK_MONOTONIC of this process */
	uint32_t iter;
	struct pipe_events ev[PIPE_MAX_STAGES];
	size_t ev_mark[PIPE_MAX_STAGES];    /* where the current iteration's events start */
	uint64_t csum_out[PIPE_MAX_STAGES]; /* checksum of the last fill, per stage */
	uint64_t qp_rate[PIPE_MAX_STAGES];  /* rate set on the local QP of boundary b */
	/* the protocol (main thread only) */
	int fd[PIPE_MAX_DC];  /* DC 0: the connection of DC k; other DCs: fd[0] */
	uint8_t *in, *out;    /* message buffers */
	size_t in_cap, out_cap;
	double offset;        /* other DCs: this clock minus DC 0's, as DC 0 measured it */
	struct pipe_net net_tmp;
	const struct pipe_net *net;
	struct pipe_flows fl;
};

static void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
static void fatal(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "sdr-pipe: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	fflush(stdout);
	_exit(1);
}

static void sleep_until(double t)
{
	struct timespec ts = {.tv_sec = (time_t)t, .tv_nsec = (long)((t - floor(t)) * 1e9)};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static void nap(uint32_t us)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)us * 1000};

	nanosleep(&ts, NULL);
}

/* ---------------- TCP ---------------- */

/* The shared loops (host/apputil), as -EIO for this file's callers. */
static int wr_full(int fd, const void *b, size_t n)
{
	return app_write_full(fd, b, n) ? -EIO : 0;
}

static int rd_full(int fd, void *b, size_t n)
{
	return app_read_full(fd, b, n) ? -EIO : 0;
}

/* ---------------- reliability ---------------- */

/*
 * The single place that maps --rel to struct sdr_qp_attr. EC: code, k and m
 * are checked by the daemon (docs/host-api.md); AUTO lets the sender's DPU
 * pick SR or an EC code per message (docs/reliability.md).
 */
static int rel_apply(struct sdr_qp_attr *a, const struct sdr_scheme *r)
{
	if (sdr_scheme_check(r, 0))
		return -EINVAL;
	a->reliability = r->rel;
	a->ec_code = r->code;
	a->ec_k = (uint8_t)r->k;
	a->ec_m = (uint8_t)r->m;
	return 0;
}

/* ---------------- stage threads ---------------- */

static void record(struct rt *r, uint32_t s, const struct pipe_ins *in, double t0, double t1,
		   uint64_t cs)
{
	struct pipe_event e = {.iter = r->iter, .stage = (uint16_t)s, .m = in->m, .kind = in->kind,
			       .op = in->op, .chan = in->chan, .t0 = t0 - r->t_start,
			       .t1 = t1 - r->t_start, .csum = cs};

	if (pipe_events_add(&r->ev[s], &e))
		fatal("out of memory");
}

static uint64_t seq_of(const struct rt *r, uint32_t m)
{
	return (uint64_t)r->iter * r->c->micro + m;
}

/* Inside a DC: mark slot m of a mailbox array (posted[] or full[]) for
 * this iteration and wake the peer stage. */
static void local_mark(struct chan *k, uint32_t *slot, uint32_t v)
{
	pthread_mutex_lock(&k->mu);
	*slot = v;
	pthread_cond_broadcast(&k->cv);
	pthread_mutex_unlock(&k->mu);
}

/* Across DCs: post a receive (rwr) or a send (swr), retrying while libsdr's
 * rings are full (-EAGAIN) up to the run's timeout. */
static void sdr_post_retry(struct rt *r, struct chan *k, uint32_t m, const struct sdr_recv_wr *rwr,
			   const struct sdr_send_wr *swr)
{
	double t_end = pipe_now() + r->o->timeout;

	for (;;) {
		pthread_mutex_lock(&r->sdr_mu);
		int rc = rwr ? sdr_recv_post(k->qp, rwr, &k->rh[m]) : sdr_send_post(k->qp, swr, &k->sh[m]);

		pthread_mutex_unlock(&r->sdr_mu);
		if (rc == 0)
			return;
		if (rc != -EAGAIN || pipe_now() > t_end)
			fatal("%s post ch %u m %u: %s", rwr ? "recv" : "send", k->ch, m, sdr_strerror(rc));
		nap(r->o->poll_us);
	}
}

static void do_post_recv(struct rt *r, struct chan *k, uint32_t m)
{
	if (!k->cross) {
		local_mark(k, &k->posted[m], r->iter + 1);
		return;
	}
	struct sdr_recv_wr wr = {.mr = k->mr, .addr = k->buf + (uint64_t)m * k->size,
				 .length = (uint32_t)k->size, .wr_id = seq_of(r, m)};

	sdr_post_retry(r, k, m, &wr, NULL);
}

static void do_post_send(struct rt *r, struct chan *k, uint32_t m)
{
	if (!k->cross) {
		local_mark(k, &k->full[m], r->iter + 1);
		return;
	}
	struct sdr_send_wr wr = {.mr = k->mr, .addr = k->sbuf + (uint64_t)m * k->size,
				 .length = (uint32_t)k->size, .imm = (uint32_t)seq_of(r, m),
				 .wr_id = seq_of(r, m)};

	sdr_post_retry(r, k, m, NULL, &wr);
}

/* wait: recv (is_recv) or send completion of message m of channel k.
 * Returns 0 when the first look found it complete (it did not wait: the
 * event is logged with t1 = t0, as the DES has it), else 1. */
static int do_wait(struct rt *r, struct chan *k, uint32_t m, int is_recv)
{
	double t_end = pipe_now() + r->o->timeout;
	int waited = 0;

	if (!k->cross) {
		uint32_t *g = is_recv ? k->full : k->posted;
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += (time_t)r->o->timeout + 1;
		pthread_mutex_lock(&k->mu);
		while (g[m] != r->iter + 1) {
			waited = 1;
			if (pthread_cond_timedwait(&k->cv, &k->mu, &ts) == ETIMEDOUT)
				fatal("timeout: %s ch %u m %u iteration %u", is_recv ? "recv" : "send",
				      k->ch, m, r->iter);
		}
		pthread_mutex_unlock(&k->mu);
		return waited;
	}
	for (;;) {
		int rc;

		pthread_mutex_lock(&r->sdr_mu);
		rc = is_recv ? sdr_recv_poll(k->rh[m]) : sdr_send_poll(k->sh[m]);
		pthread_mutex_unlock(&r->sdr_mu);
		if (is_recv ? rc == SDR_POLL_DONE : rc == 1)
			return waited;
		if (rc != 0)
			fatal("%s ch %u m %u iteration %u failed: %s", is_recv ? "receive" : "send", k->ch,
			      m, r->iter,
			      rc == SDR_POLL_PARTIAL ? "partial message" : sdr_strerror(rc));
		if (pipe_now() > t_end)
			fatal("timeout: %s ch %u m %u iteration %u (rel none on a lossy link?)",
			      is_recv ? "recv" : "send", k->ch, m, r->iter);
		nap(r->o->poll_us);
		waited = 1;
	}
}

static uint8_t *send_slot(struct chan *k, uint32_t m)
{
	return (k->cross ? k->sbuf : k->buf) + (uint64_t)m * k->size;
}

static void run_stage_iter(struct rt *r, uint32_t s)
{
	const struct pipe_cfg *c = r->c;
	const struct pipe_ins *ins = r->p->ins[s];
	size_t verify_ev = SIZE_MAX;

	for (uint32_t i = 0; i < r->p->n[s]; i++) {
		const struct pipe_ins *in = &ins[i];
		struct chan *k = &r->ch[in->chan];
		double t0 = pipe_now();

		switch (in->kind) {
		case PIPE_I_COMPUTE: {
			double dl = t0 + (in->op == PIPE_F ? pipe_tf(c, s) : pipe_tb(c, s));
			int oc = in->op == PIPE_F ? (s < c->stages - 1 ? (int)PIPE_CH_ACT(s) : -1)
						  : (s > 0 ? (int)PIPE_CH_GRAD(s - 1) : -1);

			if (verify_ev != SIZE_MAX) {
				struct pipe_event *e = &r->ev[s].ev[verify_ev];
				struct chan *ik = &r->ch[e->chan];
				const uint8_t *b = (ik->cross ? ik->buf : ik->buf) +
						   (uint64_t)e->m * ik->size;
				int rc = pipe_payload_check(b, ik->size, r->iter, e->chan, e->m, &e->csum);

				if (rc)
					fatal("stage %u: payload ch %u m %u iteration %u: %s", s, e->chan,
					      e->m, r->iter,
					      rc == -EBADMSG ? "bad checksum/header" : "wrong message");
				verify_ev = SIZE_MAX;
			}
			if (oc >= 0) {
				struct chan *ok = &r->ch[oc];

				r->csum_out[s] = pipe_payload_fill(send_slot(ok, in->m), ok->size,
								   r->o->seed, r->iter, (uint32_t)oc, in->m);
			}
			sleep_until(dl);
			record(r, s, in, t0, pipe_now(), 0);
			break;
		}
		case PIPE_I_POST_RECV:
			do_post_recv(r, k, in->m);
			record(r, s, in, t0, t0, 0);
			break;
		case PIPE_I_POST_SEND:
			do_post_send(r, k, in->m);
			record(r, s, in, t0, t0, r->csum_out[s]);
			break;
		case PIPE_I_WAIT_SEND:
			record(r, s, in, t0, do_wait(r, k, in->m, 0) ? pipe_now() : t0, 0);
			break;
		case PIPE_I_WAIT_RECV:
			record(r, s, in, t0, do_wait(r, k, in->m, 1) ? pipe_now() : t0, 0);
			verify_ev = r->ev[s].n - 1; /* checked at the start of the compute */
			break;
		}
	}
}

struct targ {
	struct rt *r;
	uint32_t s;
};

static void *stage_main(void *arg)
{
	struct targ *a = arg;
	struct rt *r = a->r;

	for (uint32_t it = 0; it < r->o->iters; it++) {
		pthread_barrier_wait(&r->bar); /* start time set */
		sleep_until(r->t_start);
		run_stage_iter(r, a->s);
		pthread_barrier_wait(&r->bar); /* done */
	}
	return NULL;
}

/* ---------------- the protocol's messages ---------------- */

/* This process' clock as the protocol sees it (--clock-shift for tests). */
static double clk(const struct rt *r)
{
	return pipe_now() + r->o->clock_shift;
}

static int room(uint8_t **b, size_t *cap, size_t need)
{
	uint8_t *x;

	if (need <= *cap)
		return 0;
	x = realloc(*b, need);
	if (!x)
		return -ENOMEM;
	*b = x;
	*cap = need;
	return 0;
}

/* Send r->out[0..len) as one message of @p type. */
static int msg_send(struct rt *r, int fd, enum pipe_msg_type type, size_t len)
{
	uint8_t h[PIPE_PROTO_HDR];

	pipe_msg_hdr_put(h, type, (uint32_t)len);
	return wr_full(fd, h, sizeof(h)) || (len && wr_full(fd, r->out, len)) ? -EIO : 0;
}

/* Receive one message into r->in: of type @p want (0: any, type in *got).
 * -EIO (connection lost or timed out), -EPROTO (bad header or another type). */
static int msg_recv(struct rt *r, int fd, enum pipe_msg_type want, enum pipe_msg_type *got,
		    uint32_t *len)
{
	uint8_t h[PIPE_PROTO_HDR];
	enum pipe_msg_type t;

	if (rd_full(fd, h, sizeof(h)))
		return -EIO;
	if (pipe_msg_hdr_get(h, &t, len) || (want && t != want))
		return -EPROTO;
	if (room(&r->in, &r->in_cap, *len ? *len : 1))
		return -ENOMEM;
	if (*len && rd_full(fd, r->in, *len))
		return -EIO;
	if (got)
		*got = t;
	return 0;
}

static void proto_error(const char *what, uint32_t dc, int rc)
{
	fprintf(stderr, "sdr-pipe: %s (DC %u): %s\n", what, dc,
		rc == -EPROTO ? "protocol violated (another sdr-pipe version?)"
		: rc == -EIO  ? "connection lost or timed out"
			      : strerror(-rc));
}

/* A bootstrap connection must not wait for ever on a peer that stopped
 * without closing it: its longest silence is a whole iteration. */
static void sock_timeout(int fd, double s)
{
	struct timeval tv = {.tv_sec = (time_t)s, .tv_usec = 0};

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

/* ---------------- bootstrap ---------------- */

static void hello_mine(const struct rt *r, struct pipe_hello *h)
{
	*h = (struct pipe_hello){.version = PIPE_PROTO_VERSION, .dc = r->o->dc, .dcs = r->c->dcs,
				 .digest = pipe_cfg_digest(r->c), .iters = r->o->iters,
				 .seed = r->o->seed};
}

/* Compare a peer's HELLO with ours (each side does, so each prints why). */
static int hello_check(const struct pipe_hello *me, const struct pipe_hello *peer)
{
	if (peer->version != me->version) {
		fprintf(stderr, "sdr-pipe: DC %u runs protocol version %u, this one %u (another "
				"sdr-pipe build)\n", peer->dc, peer->version, me->version);
		return -EPROTO;
	}
	if (peer->dcs != me->dcs || peer->digest != me->digest || peer->iters != me->iters ||
	    peer->seed != me->seed) {
		fprintf(stderr, "sdr-pipe: DC %u runs another configuration (pass every DC the same "
				"--stages/--micro/--place/--tf/--tb/--act/--grad/--rtt/--rate/--net/"
				"--sched/--comm/--delta-n/--mem-budget/--rel/--iters/--seed)\n", peer->dc);
		return -EPROTO;
	}
	if (peer->dc == me->dc) {
		fprintf(stderr, "sdr-pipe: two processes claim DC %u\n", peer->dc);
		return -EPROTO;
	}
	return 0;
}

/* DC 0: accept the other D - 1 DCs, each says HELLO first; answer with ours. */
static int boot_coordinator(struct rt *r)
{
	uint32_t D = r->c->dcs;
	int fds[PIPE_MAX_DC], rc;
	struct pipe_hello me, peer;
	char why[300];
	uint32_t len;

	hello_mine(r, &me);
	rc = app_tcp_accept_n(r->o->bind, r->o->port, (int)D - 1, r->o->timeout + 1, fds, why,
			      sizeof(why));
	if (rc) {
		fprintf(stderr, "sdr-pipe: bootstrap: %s\n", why);
		return rc;
	}
	for (uint32_t i = 0; i + 1 < D; i++) {
		sock_timeout(fds[i], r->o->timeout + 30);
		if ((rc = msg_recv(r, fds[i], PIPE_MSG_HELLO, NULL, &len)) ||
		    (rc = pipe_hello_get(r->in, len, &peer))) {
			proto_error("bootstrap: HELLO", 0, rc);
			goto fail;
		}
		if (room(&r->out, &r->out_cap, PIPE_HELLO_BYTES) ||
		    (rc = msg_send(r, fds[i], PIPE_MSG_HELLO, pipe_hello_put(r->out, &me)))) {
			proto_error("bootstrap: HELLO", peer.dc, rc ? rc : -ENOMEM);
			rc = rc ? rc : -ENOMEM;
			goto fail;
		}
		if ((rc = hello_check(&me, &peer)))
			goto fail;
		if (r->fd[peer.dc] >= 0) {
			fprintf(stderr, "sdr-pipe: two processes claim DC %u\n", peer.dc);
			rc = -EPROTO;
			goto fail;
		}
		r->fd[peer.dc] = fds[i];
		fds[i] = -1;
	}
	return 0;
fail:
	for (uint32_t i = 0; i + 1 < D; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return rc;
}

/* Other DCs: connect to DC 0, HELLO both ways. */
static int boot_peer(struct rt *r)
{
	struct pipe_hello me, peer;
	char why[300];
	uint32_t len;
	int rc, s = app_tcp_connect(r->o->connect, 0, r->o->timeout, why, sizeof(why));

	if (s < 0) {
		fprintf(stderr, "sdr-pipe: bootstrap: %s\n", why);
		return s;
	}
	r->fd[0] = s;
	sock_timeout(s, r->o->timeout + 30);
	hello_mine(r, &me);
	if (room(&r->out, &r->out_cap, PIPE_HELLO_BYTES))
		return -ENOMEM;
	if ((rc = msg_send(r, s, PIPE_MSG_HELLO, pipe_hello_put(r->out, &me))) ||
	    (rc = msg_recv(r, s, PIPE_MSG_HELLO, NULL, &len)) ||
	    (rc = pipe_hello_get(r->in, len, &peer))) {
		proto_error("bootstrap: HELLO", 0, rc);
		return rc;
	}
	if (peer.dc != 0) {
		fprintf(stderr, "sdr-pipe: %s is DC %u, not DC 0\n", r->o->connect, peer.dc);
		return -EPROTO;
	}
	return hello_check(&me, &peer);
}

/* DC 0: measure DC k's clock offset (PIPE_CLOCK_ROUNDS ping-pongs, the
 * sample of the smallest round trip) and tell it. */
static int clock_coordinator(struct rt *r, uint32_t k, struct pipe_run_out *out)
{
	struct pipe_clock_sample smp[PIPE_CLOCK_ROUNDS];
	struct pipe_offset off;
	uint32_t len;
	int rc;

	if (room(&r->out, &r->out_cap, PIPE_PING_BYTES))
		return -ENOMEM;
	for (uint32_t i = 0; i < PIPE_CLOCK_ROUNDS; i++) {
		struct pipe_ping pg = {.seq = i, .t0 = clk(r)};

		if ((rc = msg_send(r, r->fd[k], PIPE_MSG_PING, pipe_ping_put(r->out, &pg))) ||
		    (rc = msg_recv(r, r->fd[k], PIPE_MSG_PONG, NULL, &len)) ||
		    (rc = pipe_ping_get(r->in, len, &pg)))
			return rc;
		smp[i].t2 = clk(r);
		if (pg.seq != i)
			return -EPROTO;
		smp[i].t0 = pg.t0;
		smp[i].t1 = pg.peer_t;
	}
	if (pipe_clock_offset(smp, PIPE_CLOCK_ROUNDS, &off.offset, &off.rtt))
		return -EPROTO;
	if (out) {
		out->clock_offset[k] = off.offset;
		out->clock_rtt[k] = off.rtt;
	}
	if (r->o->verbose)
		fprintf(stderr, "dc0: DC %u's clock is %+.6f ms from ours (round trip %.3f ms)\n", k,
			off.offset * 1e3, off.rtt * 1e3);
	return msg_send(r, r->fd[k], PIPE_MSG_OFFSET, pipe_offset_put(r->out, &off));
}

/* Other DCs: answer DC 0's pings until it sends the offset. */
static int clock_peer(struct rt *r)
{
	enum pipe_msg_type t;
	uint32_t len;
	int rc;

	if (room(&r->out, &r->out_cap, PIPE_PING_BYTES))
		return -ENOMEM;
	for (uint32_t i = 0; i <= PIPE_CLOCK_ROUNDS; i++) {
		struct pipe_ping pg;
		struct pipe_offset off;

		if ((rc = msg_recv(r, r->fd[0], 0, &t, &len)))
			return rc;
		if (t == PIPE_MSG_OFFSET) {
			if ((rc = pipe_offset_get(r->in, len, &off)))
				return rc;
			r->offset = off.offset;
			if (r->o->verbose)
				fprintf(stderr, "dc%u: our clock is %+.6f ms from DC 0's (round trip %.3f"
						" ms)\n", r->o->dc, off.offset * 1e3, off.rtt * 1e3);
			return 0;
		}
		if (t != PIPE_MSG_PING || (rc = pipe_ping_get(r->in, len, &pg)))
			return -EPROTO;
		pg.peer_t = clk(r);
		if ((rc = msg_send(r, r->fd[0], PIPE_MSG_PONG, pipe_ping_put(r->out, &pg))))
			return rc;
	}
	return -EPROTO;
}

/* ---------------- QPs and channels ---------------- */

/* The boundary b | b+1 crosses DCs and this process is one end. */
static int my_boundary(const struct rt *r, uint32_t b)
{
	const uint8_t *d = r->c->dc_of;

	return d[b] != d[b + 1] && (d[b] == r->o->dc || d[b + 1] == r->o->dc);
}

static int setup_chans(struct rt *r)
{
	const struct pipe_cfg *c = r->c;
	uint32_t me = r->o->dc;

	for (uint32_t ch = 0; ch < PIPE_NCHAN(c->stages); ch++) {
		struct chan *k = &r->ch[ch];
		uint32_t M = c->micro;

		k->ch = ch;
		k->src = pipe_ch_src(ch);
		k->dst = pipe_ch_dst(ch);
		k->size = pipe_ch_bytes(c, ch);
		k->cross = c->dc_of[k->src] != c->dc_of[k->dst];
		if (!k->cross) {
			if (c->dc_of[k->src] != me)
				continue;
			k->buf = malloc(M * k->size);
			k->posted = calloc(M, sizeof(uint32_t));
			k->full = calloc(M, sizeof(uint32_t));
			if (!k->buf || !k->posted || !k->full)
				return -ENOMEM;
			memset(k->buf, 0, M * k->size); /* fault the pages in now */
			pthread_mutex_init(&k->mu, NULL);
			pthread_cond_init(&k->cv, NULL);
			continue;
		}
		uint32_t b = ch / 2; /* boundary b | b+1 */
		int is_src = c->dc_of[k->src] == me;

		if (c->dc_of[k->src] != me && c->dc_of[k->dst] != me)
			continue;
		k->qp = r->qp_of[b];
		uint8_t *mem = sdr_buf_alloc(r->ctx, M * k->size);

		if (!mem)
			return -errno;
		memset(mem, 0, M * k->size);
		k->mr = sdr_mr_reg(r->ctx, mem, M * k->size, 0);
		if (!k->mr) {
			fprintf(stderr, "sdr-pipe: sdr_mr_reg: %s (%s)\n", strerror(errno),
				sdr_last_error(r->ctx));
			return -errno;
		}
		if (is_src) {
			k->sbuf = mem;
			k->sh = calloc(M, sizeof(*k->sh));
		} else {
			k->buf = mem;
			k->rh = calloc(M, sizeof(*k->rh));
		}
		if (!k->sh && !k->rh)
			return -ENOMEM;
	}
	return 0;
}

/* One QP per cross-DC boundary this DC is an end of. */
static int create_qps(struct rt *r)
{
	const struct pipe_cfg *c = r->c;
	uint64_t mx = c->act_bytes > c->grad_bytes ? c->act_bytes : c->grad_bytes;
	uint32_t nb = 0;

	for (uint32_t b = 0; b + 1 < c->stages; b++)
		nb += my_boundary(r, b);
	if (nb == 0)
		return 0;
	r->ctx = sdr_ctx_open(r->o->dpu, NULL);
	if (!r->ctx) {
		fprintf(stderr, "sdr-pipe: cannot attach to %s: %s\n", r->o->dpu, strerror(errno));
		return -errno;
	}
	for (uint32_t b = 0; b + 1 < c->stages; b++) {
		struct sdr_qp_attr a = {0};

		if (!my_boundary(r, b))
			continue;
		a.max_msg = (uint32_t)((mx + 65535) & ~(uint64_t)65535);
		if (rel_apply(&a, &c->rel)) {
			fprintf(stderr, "sdr-pipe: --rel: not a scheme a QP runs\n");
			return -EINVAL;
		}
		r->qp_of[b] = sdr_qp_create(r->ctx, &a);
		if (!r->qp_of[b]) {
			fprintf(stderr, "sdr-pipe: sdr_qp_create: %s (%s)\n", strerror(errno),
				sdr_last_error(r->ctx));
			return -errno;
		}
	}
	return 0;
}

/* This DC's QP infos (one per boundary it is an end of) into @p q. */
static uint32_t my_qpinfos(const struct rt *r, struct pipe_qpinfo *q)
{
	uint32_t n = 0;

	for (uint32_t b = 0; b + 1 < r->c->stages; b++) {
		struct sdr_qp_info i;

		if (!my_boundary(r, b))
			continue;
		sdr_qp_info_get(r->qp_of[b], &i);
		q[n].boundary = (uint16_t)b;
		q[n].dc = (uint8_t)r->o->dc;
		sdr_qp_info_encode(&i, q[n].info);
		n++;
	}
	return n;
}

/* Connect the local QP of every boundary to the other end's info, found in
 * @p q (exactly one entry per boundary of this DC, from the right DC). */
static int connect_qps(struct rt *r, const struct pipe_qpinfo *q, uint32_t n)
{
	const uint8_t *d = r->c->dc_of;

	for (uint32_t b = 0; b + 1 < r->c->stages; b++) {
		uint32_t other = d[b] == r->o->dc ? d[b + 1] : d[b], found = 0, at = 0;
		struct sdr_qp_info peer;
		int rc;

		if (!my_boundary(r, b))
			continue;
		for (uint32_t i = 0; i < n; i++)
			if (q[i].boundary == b && q[i].dc == other) {
				found++;
				at = i;
			}
		if (found != 1 || sdr_qp_info_decode(q[at].info, &peer)) {
			fprintf(stderr, "sdr-pipe: no valid QP info of DC %u for boundary %u|%u\n", other,
				b, b + 1);
			return -EPROTO;
		}
		rc = sdr_qp_connect(r->qp_of[b], &peer);
		if (rc) {
			fprintf(stderr, "sdr-pipe: sdr_qp_connect: %s (%s)\n", sdr_strerror(rc),
				sdr_last_error(r->ctx));
			return rc;
		}
	}
	return 0;
}

/* DC 0: collect every DC's QP infos, send each DC those of the other ends
 * of its boundaries, connect our own. Other DCs: send ours, get theirs. */
static int exchange_qps(struct rt *r)
{
	static struct pipe_qpinfo all[2 * PIPE_MAX_STAGES], sel[PIPE_MAX_STAGES];
	const uint8_t *d = r->c->dc_of;
	uint32_t n, k, len, got;
	int rc;

	n = my_qpinfos(r, all);
	if (room(&r->out, &r->out_cap, 4 + (size_t)2 * PIPE_MAX_STAGES * PIPE_QPINFO_BYTES))
		return -ENOMEM;
	if (r->o->dc != 0) {
		if ((rc = msg_send(r, r->fd[0], PIPE_MSG_QPINFO, pipe_qpinfo_put(r->out, all, n))) ||
		    (rc = msg_recv(r, r->fd[0], PIPE_MSG_QPINFO, NULL, &len)) ||
		    (rc = pipe_qpinfo_get(r->in, len, sel, PIPE_MAX_STAGES, &got))) {
			proto_error("QP infos", 0, rc);
			return rc;
		}
		return connect_qps(r, sel, got);
	}
	for (k = 1; k < r->c->dcs; k++) {
		uint32_t want = 0;

		for (uint32_t b = 0; b + 1 < r->c->stages; b++)
			want += d[b] != d[b + 1] && (d[b] == k || d[b + 1] == k);
		if ((rc = msg_recv(r, r->fd[k], PIPE_MSG_QPINFO, NULL, &len)) ||
		    (rc = pipe_qpinfo_get(r->in, len, all + n, 2 * PIPE_MAX_STAGES - n, &got))) {
			proto_error("QP infos", k, rc);
			return rc;
		}
		for (uint32_t i = 0; i < got; i++) {
			uint32_t b = all[n + i].boundary;

			if (all[n + i].dc != k || b + 1 >= r->c->stages || d[b] == d[b + 1] ||
			    (d[b] != k && d[b + 1] != k)) {
				fprintf(stderr, "sdr-pipe: DC %u sent a QP info for boundary %u it is "
						"not an end of\n", k, b);
				return -EPROTO;
			}
		}
		if (got != want) {
			fprintf(stderr, "sdr-pipe: DC %u sent %u QP infos, its boundaries are %u\n", k,
				got, want);
			return -EPROTO;
		}
		n += got;
	}
	for (k = 1; k < r->c->dcs; k++) {
		uint32_t m = 0;

		for (uint32_t i = 0; i < n; i++) {
			uint32_t b = all[i].boundary, other = d[b] == all[i].dc ? d[b + 1] : d[b];

			if (other == k && all[i].dc != k)
				sel[m++] = all[i];
		}
		if ((rc = msg_send(r, r->fd[k], PIPE_MSG_QPINFO, pipe_qpinfo_put(r->out, sel, m)))) {
			proto_error("QP infos", k, rc);
			return rc;
		}
	}
	return connect_qps(r, all, n);
}

/* ---------------- rates ---------------- */

/* Apply the rate of the flow of channel @p ch (this DC sends it) to its QP. */
static int apply_rate(struct rt *r, uint32_t ch, uint64_t rate)
{
	uint32_t b = ch / 2;
	int rc;

	if (rate && rate < SDR_QP_RATE_MIN)
		rate = SDR_QP_RATE_MIN;
	if (rate > SDR_QP_RATE_MAX)
		rate = SDR_QP_RATE_MAX;
	if (r->qp_rate[b] == rate)
		return 0;
	pthread_mutex_lock(&r->sdr_mu);
	rc = sdr_qp_rate_set(r->qp_of[b], rate);
	pthread_mutex_unlock(&r->sdr_mu);
	if (rc) {
		fprintf(stderr, "sdr-pipe: sdr_qp_rate_set(channel %u, %llu bit/s): %s (%s)\n", ch,
			(unsigned long long)rate, sdr_strerror(rc), sdr_last_error(r->ctx));
		return rc;
	}
	r->qp_rate[b] = rate;
	return 0;
}

/* The START message of iteration @p it for DC @p k: its flows' rates. */
static void start_for(const struct rt *r, uint32_t it, double t, const struct pipe_alloc *a,
		      uint32_t k, struct pipe_start *s)
{
	s->iter = it;
	s->t_start = t;
	s->n = 0;
	for (uint32_t f = 0; f < r->fl.n; f++)
		if (r->fl.f[f].src_dc == k) {
			s->chan[s->n] = r->fl.f[f].chan;
			s->rate[s->n++] = a->rate[f];
		}
}

/* Apply a START's rates: each must be a channel this DC sends across DCs. */
static int apply_start(struct rt *r, const struct pipe_start *s)
{
	for (uint32_t i = 0; i < s->n; i++) {
		uint32_t ch = s->chan[i];
		int f = ch < PIPE_NCHAN(r->c->stages) ? r->fl.of_chan[ch] : -1;
		int rc;

		if (f < 0 || r->fl.f[f].src_dc != r->o->dc) {
			fprintf(stderr, "sdr-pipe: a rate for channel %u, which DC %u does not send\n", ch,
				r->o->dc);
			return -EPROTO;
		}
		if ((rc = apply_rate(r, ch, s->rate[i])))
			return rc;
	}
	return 0;
}

/* ---------------- the controller's log ---------------- */

static void ctl_log_line(const struct rt *r, uint32_t it, const struct pipe_pred_iter *pi,
			 const struct pipe_cba_label *lab)
{
	FILE *f = r->o->ctl_log;
	const struct pipe_cfg *c = r->c;
	uint8_t cb[PIPE_MAX_FLOWS];
	double wait[PIPE_MAX_FLOWS], slack;
	int first = 1;

	if (!f)
		return;
	pipe_cba_flow_labels(c, &r->fl, lab, cb, wait);
	fprintf(f, "{\"iter\":%u,\"policy\":\"%s\",\"iter_ms\":%.3f,\"bubble\":%.4f,\"cb\":%u,"
		   "\"refused\":%u,\"undone\":%u,\"flows\":[",
		it, pipe_policy_name(r->o->policy ? r->o->policy->policy : PIPE_POLICY_NONE),
		pi->iter_time * 1e3, pi->bubble, pi->ncb, pi->alloc.nblocked, pi->alloc.undone);
	for (uint32_t i = 0; i < r->fl.n; i++) {
		const struct pipe_flow *x = &r->fl.f[i];

		fprintf(f, "%s{\"ch\":%u,\"src\":%u,\"dst\":%u,\"link\":", i ? "," : "", x->chan,
			x->src_dc, x->dst_dc);
		if (x->link >= 0)
			fprintf(f, "\"%s\"", r->net->link[x->link].name);
		else
			fprintf(f, "null");
		fprintf(f, ",\"rate_bps\":%" PRIu64 ",\"req_bps\":%" PRIu64 ",\"refused\":%u,"
			   "\"gave_bps\":%" PRIu64 ",\"cb\":%u,\"wait_ms\":%.3f",
			pi->alloc.rate[i], pi->alloc.req[i], pi->alloc.blocked[i], pi->alloc.gave[i],
			cb[i], wait[i] * 1e3);
		slack = pipe_cba_slack(c, r->net, &r->fl, lab, i, pi->alloc.rate[i], 0, NULL);
		if (isfinite(slack))
			fprintf(f, ",\"slack_ms\":%.3f", slack * 1e3);
		fprintf(f, "}");
	}
	fprintf(f, "],\"transfers\":[");
	for (uint32_t ch = 0; ch < PIPE_NCHAN(c->stages); ch++)
		for (uint32_t m = 0; m < c->micro; m++) {
			const struct pipe_cba_label *l = &lab[(size_t)ch * c->micro + m];

			if (!l->cross || !l->known)
				continue;
			fprintf(f, "%s{\"ch\":%u,\"m\":%u,\"cb\":%u,\"wait_ms\":%.3f", first ? "" : ",", ch,
				m, l->cb, l->wait * 1e3);
			if (isfinite(l->late))
				fprintf(f, ",\"late_ms\":%.3f", l->late * 1e3);
			fprintf(f, "}");
			first = 0;
		}
	fprintf(f, "]}\n");
	fflush(f);
}

/* ---------------- iterations ---------------- */

/* Append this DC's events of the current iteration to @p out. */
static int iter_events(struct rt *r, const uint32_t *mine, uint32_t nloc, struct pipe_events *out)
{
	for (uint32_t i = 0; i < nloc; i++) {
		const struct pipe_events *e = &r->ev[mine[i]];

		for (size_t k = r->ev_mark[mine[i]]; k < e->n; k++)
			if (pipe_events_add(out, &e->ev[k]))
				return -ENOMEM;
	}
	return 0;
}

/* Run iteration r->iter (start r->t_start) on the local stages. */
static void run_iter(struct rt *r, const uint32_t *mine, uint32_t nloc)
{
	for (uint32_t i = 0; i < nloc; i++)
		r->ev_mark[mine[i]] = r->ev[mine[i]].n;
	pthread_barrier_wait(&r->bar);
	pthread_barrier_wait(&r->bar);
	if (r->o->verbose)
		fprintf(stderr, "dc%u: iteration %u done\n", r->o->dc, r->iter);
}

/* DC 0's iteration loop: decide, announce, run, collect, label. */
static int iterate_coordinator(struct rt *r, const uint32_t *mine, uint32_t nloc,
			       struct pipe_events *all, struct pipe_run_out *out)
{
	const struct pipe_cfg *c = r->c;
	struct pipe_policy_cfg none;
	const struct pipe_policy_cfg *pol = r->o->policy;
	struct pipe_alloc cur, next;
	struct pipe_start st;
	struct pipe_cba_label *lab = calloc((size_t)PIPE_NCHAN(c->stages) * c->micro, sizeof(*lab));
	char why[300];
	int rc = 0;

	if (!lab)
		return -ENOMEM;
	if (!pol) {
		pipe_policy_cfg_init(&none);
		pol = &none;
	}
	if ((rc = pipe_policy_alloc(c, r->net, &r->fl, pol, NULL, NULL, &cur, why, sizeof(why)))) {
		fprintf(stderr, "sdr-pipe: --policy %s: %s\n", pipe_policy_name(pol->policy), why);
		goto out;
	}
	if (room(&r->out, &r->out_cap, PIPE_START_BYTES(PIPE_MAX_FLOWS))) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t it = 0; it < r->o->iters; it++) {
		double t = clk(r) + START_AHEAD_S;
		struct pipe_pred_iter pi;
		struct pipe_metrics m;
		uint32_t len;
		int n;

		for (uint32_t k = 1; k < c->dcs; k++) {
			start_for(r, it, t, &cur, k, &st);
			if ((rc = msg_send(r, r->fd[k], PIPE_MSG_START, pipe_start_put(r->out, &st)))) {
				proto_error("START", k, rc);
				goto out;
			}
		}
		start_for(r, it, t, &cur, 0, &st);
		if ((rc = apply_start(r, &st)))
			goto out;
		r->iter = it;
		r->t_start = t - r->o->clock_shift;
		run_iter(r, mine, nloc);
		if ((rc = iter_events(r, mine, nloc, all)))
			goto out;
		for (uint32_t k = 1; k < c->dcs; k++) {
			if ((rc = msg_recv(r, r->fd[k], PIPE_MSG_EVENTS, NULL, &len)) ||
			    (n = pipe_events_get(r->in, len, c, k, it, all)) < 0) {
				rc = rc ? rc : n;
				proto_error("events", k, rc);
				goto out;
			}
		}
		/* the merged log of this iteration: metrics, labels, the next rates */
		pipe_metrics_get(c, all, it, &m);
		n = pipe_cba_label(c, all, it, pol->intra_lat, lab);
		if (n < 0) {
			fprintf(stderr, "sdr-pipe: labels of iteration %u: %s\n", it, strerror(-n));
			rc = n;
			goto out;
		}
		cur.iter_time = m.iter_time; /* what these rates gave: the next decision's input */
		pi = (struct pipe_pred_iter){.iter_time = m.iter_time, .bubble = m.bubble_all,
					     .ncb = (uint32_t)n, .alloc = cur};
		if (out && out->it)
			out->it[it] = pi;
		ctl_log_line(r, it, &pi, lab);
		if (it + 1 < r->o->iters) {
			if ((rc = pipe_policy_alloc(c, r->net, &r->fl, pol, &cur, lab, &next, why,
						    sizeof(why)))) {
				fprintf(stderr, "sdr-pipe: --policy %s: %s\n",
					pipe_policy_name(pol->policy), why);
				goto out;
			}
			cur = next;
		}
	}
	for (uint32_t k = 1; k < c->dcs && !rc; k++)
		rc = msg_send(r, r->fd[k], PIPE_MSG_BYE, 0);
out:
	free(lab);
	return rc;
}

/* Other DCs: START, apply the rates, run, send the events; BYE at the end. */
static int iterate_peer(struct rt *r, const uint32_t *mine, uint32_t nloc, struct pipe_events *local)
{
	static struct pipe_start st;
	uint32_t len;
	int rc;

	for (uint32_t it = 0; it < r->o->iters; it++) {
		size_t from = local->n;

		if ((rc = msg_recv(r, r->fd[0], PIPE_MSG_START, NULL, &len)) ||
		    (rc = pipe_start_get(r->in, len, &st))) {
			proto_error("START", 0, rc);
			return rc;
		}
		if (st.iter != it) {
			fprintf(stderr, "sdr-pipe: DC 0 started iteration %u, we expected %u\n", st.iter, it);
			return -EPROTO;
		}
		if ((rc = apply_start(r, &st)))
			return rc;
		r->iter = it;
		/* DC 0's clock -> ours (offset), -> CLOCK_MONOTONIC (shift) */
		r->t_start = st.t_start + r->offset - r->o->clock_shift;
		run_iter(r, mine, nloc);
		if ((rc = iter_events(r, mine, nloc, local)))
			return rc;
		len = (uint32_t)(local->n - from);
		if (room(&r->out, &r->out_cap, PIPE_EVENTS_BYTES((size_t)len)))
			return -ENOMEM;
		if ((rc = msg_send(r, r->fd[0], PIPE_MSG_EVENTS,
				   pipe_events_put(r->out, it, local->ev + from, len)))) {
			proto_error("events", 0, rc);
			return rc;
		}
	}
	/* keep the QPs until DC 0 has everything */
	if ((rc = msg_recv(r, r->fd[0], PIPE_MSG_BYE, NULL, &len))) {
		proto_error("BYE", 0, rc);
		return rc;
	}
	return 0;
}

int pipe_run(const struct pipe_cfg *c, const struct pipe_prog *p, const struct pipe_rt_opts *o,
	     struct pipe_events *local, struct pipe_events *all, struct pipe_run_out *out)
{
	static struct rt r; /* large; one run per process */
	struct targ ta[PIPE_MAX_STAGES];
	pthread_t th[PIPE_MAX_STAGES];
	uint32_t nloc = 0, mine[PIPE_MAX_STAGES];
	int rc, threads = 0;

	if (c->dcs < 2 || o->dc >= c->dcs || o->iters == 0 || (o->dc == 0 && o->connect) ||
	    (o->dc != 0 && !o->connect) || !isfinite(o->clock_shift))
		return -EINVAL;
	memset(&r, 0, sizeof(r));
	r.c = c;
	r.p = p;
	r.o = o;
	for (uint32_t k = 0; k < PIPE_MAX_DC; k++)
		r.fd[k] = -1;
	pthread_mutex_init(&r.sdr_mu, NULL);
	r.net = pipe_net_of(c, &r.net_tmp);
	pipe_flows_get(c, r.net, &r.fl);
	if (out)
		memset(out->clock_offset, 0, sizeof(out->clock_offset)),
			memset(out->clock_rtt, 0, sizeof(out->clock_rtt));
	for (uint32_t s = 0; s < c->stages; s++)
		if (c->dc_of[s] == o->dc)
			mine[nloc++] = s;
	if (nloc == 0)
		return -EINVAL;
	rc = o->dc == 0 ? boot_coordinator(&r) : boot_peer(&r);
	if (rc)
		goto out;
	if (o->dc == 0) {
		for (uint32_t k = 1; k < c->dcs && !rc; k++)
			if ((rc = clock_coordinator(&r, k, out)))
				proto_error("clock offset", k, rc);
	} else if ((rc = clock_peer(&r))) {
		proto_error("clock offset", 0, rc);
	}
	if (rc || (rc = create_qps(&r)) || (rc = exchange_qps(&r)) || (rc = setup_chans(&r)))
		goto out;
	pthread_barrier_init(&r.bar, NULL, nloc + 1);
	for (uint32_t i = 0; i < nloc; i++) {
		ta[i] = (struct targ){&r, mine[i]};
		if (pthread_create(&th[i], NULL, stage_main, &ta[i]))
			fatal("pthread_create failed");
		threads++;
	}
	if (o->dc == 0) {
		/* our own events go to all as each iteration ends, and to local */
		rc = iterate_coordinator(&r, mine, nloc, all, out);
		for (size_t k = 0; k < all->n && !rc; k++)
			if (c->dc_of[all->ev[k].stage] == 0)
				rc = pipe_events_add(local, &all->ev[k]);
	} else {
		rc = iterate_peer(&r, mine, nloc, local);
	}
	if (rc)
		fatal("run failed: %s", strerror(-rc)); /* the stage threads wait at a barrier */
	for (int i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
out:
	for (uint32_t k = 0; k < PIPE_MAX_DC; k++)
		if (r.fd[k] >= 0)
			close(r.fd[k]);
	for (uint32_t s = 0; s < PIPE_MAX_STAGES; s++)
		pipe_events_free(&r.ev[s]);
	free(r.in);
	free(r.out);
	if (r.ctx)
		sdr_ctx_close(r.ctx);
	return rc;
}
