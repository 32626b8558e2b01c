/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-pipe runtime. One process per DC: each local stage is a thread that
 * interprets its program (pipe_prog_build()); compute is emulated by
 * sleeping until the op's deadline (payload fill and checksum verification
 * happen inside that window). A boundary between two local stages is a
 * shared-memory mailbox per channel; a boundary between DCs is one libsdr QP
 * (activations one way, gradients the other; message n of a direction is
 * micro-batch n % M of iteration n / M). DC 0 is the TCP server of the
 * bootstrap: configuration digest, QP infos, per-iteration start times and,
 * at the end, DC 1's event log.
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

#include "pipe_run.h"
#include "sdr.h"
#include "sdr_app.h"

#define HELLO_MAGIC 0x50495045u /* "PIPE" */

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
	double t_start;
	uint32_t iter;
	struct pipe_events ev[PIPE_MAX_STAGES];
	uint64_t csum_out[PIPE_MAX_STAGES]; /* checksum of the last fill, per stage */
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

/* DC 0 accepts the bootstrap connection, DC 1 connects (HOST:PORT). */
static int tcp_bootstrap(const struct pipe_rt_opts *o)
{
	char why[300];
	int s = o->dc == 0 ? app_tcp_accept_one(o->bind, o->port, o->timeout + 1, why, sizeof(why))
			   : app_tcp_connect(o->connect, 0, o->timeout, why, sizeof(why));

	if (s < 0)
		fprintf(stderr, "sdr-pipe: bootstrap: %s\n", why);
	return s;
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

/* wait: recv (is_recv) or send completion of message m of channel k */
static void do_wait(struct rt *r, struct chan *k, uint32_t m, int is_recv)
{
	double t_end = pipe_now() + r->o->timeout;

	if (!k->cross) {
		uint32_t *g = is_recv ? k->full : k->posted;
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec += (time_t)r->o->timeout + 1;
		pthread_mutex_lock(&k->mu);
		while (g[m] != r->iter + 1)
			if (pthread_cond_timedwait(&k->cv, &k->mu, &ts) == ETIMEDOUT)
				fatal("timeout: %s ch %u m %u iteration %u", is_recv ? "recv" : "send",
				      k->ch, m, r->iter);
		pthread_mutex_unlock(&k->mu);
		return;
	}
	for (;;) {
		int rc;

		pthread_mutex_lock(&r->sdr_mu);
		rc = is_recv ? sdr_recv_poll(k->rh[m]) : sdr_send_poll(k->sh[m]);
		pthread_mutex_unlock(&r->sdr_mu);
		if (is_recv ? rc == SDR_POLL_DONE : rc == 1)
			return;
		if (rc != 0)
			fatal("%s ch %u m %u iteration %u failed: %s", is_recv ? "receive" : "send", k->ch,
			      m, r->iter,
			      rc == SDR_POLL_PARTIAL ? "partial message" : sdr_strerror(rc));
		if (pipe_now() > t_end)
			fatal("timeout: %s ch %u m %u iteration %u (rel none on a lossy link?)",
			      is_recv ? "recv" : "send", k->ch, m, r->iter);
		nap(r->o->poll_us);
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
			do_wait(r, k, in->m, 0);
			record(r, s, in, t0, pipe_now(), 0);
			break;
		case PIPE_I_WAIT_RECV:
			do_wait(r, k, in->m, 1);
			record(r, s, in, t0, pipe_now(), 0);
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

/* ---------------- setup ---------------- */

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static int hello(int fd, const struct pipe_cfg *c, const struct pipe_rt_opts *o)
{
	uint8_t me[24], peer[24];
	uint64_t d = pipe_cfg_digest(c);

	put32(me, HELLO_MAGIC);
	put32(me + 4, o->dc);
	memcpy(me + 8, &d, 8);
	put32(me + 16, o->iters);
	put32(me + 20, (uint32_t)o->seed);
	if (wr_full(fd, me, sizeof(me)) || rd_full(fd, peer, sizeof(peer)))
		return -EIO;
	if (memcmp(peer, me, 4) || memcmp(peer + 8, me + 8, 16)) {
		fprintf(stderr, "sdr-pipe: the peer runs another configuration (pass both the same "
				"--stages/--micro/--place/--tf/--tb/--act/--grad/--rtt/--rate/--sched/"
				"--comm/--delta-n/--mem-budget/--rel/--iters/--seed)\n");
		return -EPROTO;
	}
	uint32_t pdc;

	memcpy(&pdc, peer + 4, 4);
	if (pdc != 1 - o->dc) {
		fprintf(stderr, "sdr-pipe: both processes claim DC %u\n", pdc);
		return -EPROTO;
	}
	return 0;
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
		k->size = ch & 1 ? c->grad_bytes : c->act_bytes;
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

static int setup_qps(struct rt *r, int fd)
{
	const struct pipe_cfg *c = r->c;
	uint64_t mx = c->act_bytes > c->grad_bytes ? c->act_bytes : c->grad_bytes;
	uint32_t nb = 0, bs[PIPE_MAX_STAGES];
	int rc;

	for (uint32_t b = 0; b + 1 < c->stages; b++)
		if (c->dc_of[b] != c->dc_of[b + 1])
			bs[nb++] = b;
	if (nb == 0)
		return 0;
	r->ctx = sdr_ctx_open(r->o->dpu, NULL);
	if (!r->ctx) {
		fprintf(stderr, "sdr-pipe: cannot attach to %s: %s\n", r->o->dpu, strerror(errno));
		return -errno;
	}
	for (uint32_t i = 0; i < nb; i++) {
		struct sdr_qp_attr a = {0};
		struct sdr_qp_info mine, peer;
		uint8_t w[SDR_QP_INFO_WIRE];

		a.max_msg = (uint32_t)((mx + 65535) & ~(uint64_t)65535);
		rc = rel_apply(&a, &c->rel);
		if (rc) {
			fprintf(stderr, "sdr-pipe: --rel: not a scheme a QP runs\n");
			return rc;
		}
		r->qp_of[bs[i]] = sdr_qp_create(r->ctx, &a);
		if (!r->qp_of[bs[i]]) {
			fprintf(stderr, "sdr-pipe: sdr_qp_create: %s (%s)\n", strerror(errno),
				sdr_last_error(r->ctx));
			return -errno;
		}
		sdr_qp_info_get(r->qp_of[bs[i]], &mine);
		sdr_qp_info_encode(&mine, w);
		if (wr_full(fd, w, sizeof(w)) || rd_full(fd, w, sizeof(w)))
			return -EIO;
		if (sdr_qp_info_decode(w, &peer)) {
			fprintf(stderr, "sdr-pipe: malformed QP info from the peer\n");
			return -EPROTO;
		}
		rc = sdr_qp_connect(r->qp_of[bs[i]], &peer);
		if (rc) {
			fprintf(stderr, "sdr-pipe: sdr_qp_connect: %s (%s)\n", sdr_strerror(rc),
				sdr_last_error(r->ctx));
			return rc;
		}
	}
	return 0;
}

/* events over TCP: count, then 48-byte records (host byte order: both
 * processes run on the same kind of machine) */
static int send_events(int fd, const struct pipe_events *e)
{
	uint64_t n = e->n;

	if (wr_full(fd, &n, 8))
		return -EIO;
	for (size_t i = 0; i < e->n; i++) {
		uint8_t b[48] = {0};
		const struct pipe_event *x = &e->ev[i];

		memcpy(b, &x->iter, 4);
		memcpy(b + 4, &x->stage, 2);
		memcpy(b + 6, &x->m, 2);
		b[8] = x->kind;
		b[9] = x->op;
		memcpy(b + 10, &x->chan, 2);
		memcpy(b + 16, &x->t0, 8);
		memcpy(b + 24, &x->t1, 8);
		memcpy(b + 32, &x->csum, 8);
		if (wr_full(fd, b, sizeof(b)))
			return -EIO;
	}
	return 0;
}

static int recv_events(int fd, struct pipe_events *e, uint64_t max)
{
	uint64_t n;

	if (rd_full(fd, &n, 8) || n > max)
		return -EPROTO;
	for (uint64_t i = 0; i < n; i++) {
		uint8_t b[48];
		struct pipe_event x = {0};

		if (rd_full(fd, b, sizeof(b)))
			return -EIO;
		memcpy(&x.iter, b, 4);
		memcpy(&x.stage, b + 4, 2);
		memcpy(&x.m, b + 6, 2);
		x.kind = b[8];
		x.op = b[9];
		memcpy(&x.chan, b + 10, 2);
		memcpy(&x.t0, b + 16, 8);
		memcpy(&x.t1, b + 24, 8);
		memcpy(&x.csum, b + 32, 8);
		if (!isfinite(x.t0) || !isfinite(x.t1))
			return -EPROTO;
		if (pipe_events_add(e, &x))
			return -ENOMEM;
	}
	return 0;
}

int pipe_run(const struct pipe_cfg *c, const struct pipe_prog *p, const struct pipe_rt_opts *o,
	     struct pipe_events *local, struct pipe_events *all)
{
	static struct rt r; /* large; one run per process */
	struct targ ta[PIPE_MAX_STAGES];
	pthread_t th[PIPE_MAX_STAGES];
	uint32_t nloc = 0, mine[PIPE_MAX_STAGES];
	int fd, rc;

	if (o->dc > 1 || o->iters == 0 || (o->dc == 0 && o->connect) || (o->dc == 1 && !o->connect))
		return -EINVAL;
	memset(&r, 0, sizeof(r));
	r.c = c;
	r.p = p;
	r.o = o;
	pthread_mutex_init(&r.sdr_mu, NULL);
	for (uint32_t s = 0; s < c->stages; s++)
		if (c->dc_of[s] == o->dc)
			mine[nloc++] = s;
	if (nloc == 0)
		return -EINVAL;
	fd = tcp_bootstrap(o);
	if (fd < 0)
		return fd;
	if ((rc = hello(fd, c, o)) || (rc = setup_qps(&r, fd)) || (rc = setup_chans(&r)))
		goto out;
	pthread_barrier_init(&r.bar, NULL, nloc + 1);
	for (uint32_t i = 0; i < nloc; i++) {
		ta[i] = (struct targ){&r, mine[i]};
		if (pthread_create(&th[i], NULL, stage_main, &ta[i]))
			fatal("pthread_create failed");
	}
	for (uint32_t it = 0; it < o->iters; it++) {
		double t;
		uint8_t tok[8];

		/* DC 1 says ready, DC 0 answers with the start time (CLOCK_MONOTONIC:
		 * both processes share the machine's clock) */
		if (o->dc == 1) {
			memcpy(tok, &it, 4);
			if (wr_full(fd, tok, 4) || rd_full(fd, &t, 8))
				fatal("bootstrap connection lost before iteration %u", it);
		} else {
			uint32_t pit;

			if (rd_full(fd, &pit, 4) || pit != it)
				fatal("peer lost or out of step before iteration %u", it);
			t = pipe_now() + 0.02;
			if (wr_full(fd, &t, 8))
				fatal("bootstrap connection lost");
		}
		r.iter = it;
		r.t_start = t;
		pthread_barrier_wait(&r.bar);
		pthread_barrier_wait(&r.bar);
		if (o->verbose)
			fprintf(stderr, "dc%u: iteration %u done\n", o->dc, it);
	}
	for (uint32_t i = 0; i < nloc; i++)
		pthread_join(th[i], NULL);
	for (uint32_t i = 0; i < nloc; i++)
		for (size_t k = 0; k < r.ev[mine[i]].n; k++)
			if ((rc = pipe_events_add(local, &r.ev[mine[i]].ev[k])))
				goto out;
	if (o->dc == 1) {
		uint8_t bye;

		rc = send_events(fd, local);
		/* keep the QPs until DC 0 has everything */
		if (!rc && rd_full(fd, &bye, 1))
			rc = -EIO;
	} else {
		uint64_t max = 0;

		for (uint32_t s = 0; s < c->stages; s++)
			max += p->n[s];
		max *= o->iters;
		for (size_t k = 0; k < local->n && !rc; k++)
			rc = pipe_events_add(all, &local->ev[k]);
		if (!rc)
			rc = recv_events(fd, all, max);
		if (!rc) {
			uint8_t bye = 1;

			rc = wr_full(fd, &bye, 1);
		}
	}
out:
	close(fd);
	for (uint32_t s = 0; s < PIPE_MAX_STAGES; s++)
		pipe_events_free(&r.ev[s]);
	if (r.ctx)
		sdr_ctx_close(r.ctx);
	return rc;
}
