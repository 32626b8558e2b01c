/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-pipe runtime: the stage threads (host/pipe/, runtime above libsdr).
 * Each local stage interprets its program (pipe_prog_build()); compute is
 * emulated by sleeping until the op's deadline (payload fill and checksum
 * verification happen inside that window); sends and receives go to a
 * shared-memory mailbox (same DC) or a libsdr QP (across DCs).
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

#include "pipe_rt.h"
#include "sdr.h"
#include "sdr_app.h"

void rt_fatal(const char *fmt, ...)
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

void rt_sleep_until(double t)
{
	struct timespec ts = {.tv_sec = (time_t)t, .tv_nsec = (long)((t - floor(t)) * 1e9)};

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

void rt_nap(uint32_t us)
{
	struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)us * 1000};

	nanosleep(&ts, NULL);
}

/* ---------------- stage threads ---------------- */

static void record(struct rt *r, uint32_t s, const struct pipe_ins *in, double t0, double t1,
		   uint64_t cs)
{
	struct pipe_event e = {.iter = r->iter,
			       .stage = (uint16_t)s,
			       .m = in->m,
			       .kind = in->kind,
			       .op = in->op,
			       .chan = in->chan,
			       .t0 = t0 - r->t_start,
			       .t1 = t1 - r->t_start,
			       .csum = cs};

	if (pipe_events_add(&r->ev[s], &e))
		rt_fatal("out of memory");
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
		int rc = rwr ? sdr_recv_post(k->qp, rwr, &k->rh[m])
			     : sdr_send_post(k->qp, swr, &k->sh[m]);

		pthread_mutex_unlock(&r->sdr_mu);
		if (rc == 0)
			return;
		if (rc != -EAGAIN || pipe_now() > t_end)
			rt_fatal("%s post ch %u m %u: %s", rwr ? "recv" : "send", k->ch, m,
				 sdr_strerror(rc));
		rt_nap(r->o->poll_us);
	}
}

static void do_post_recv(struct rt *r, struct chan *k, uint32_t m)
{
	if (!k->cross) {
		local_mark(k, &k->posted[m], r->iter + 1);
		return;
	}
	struct sdr_recv_wr wr = {.mr = k->mr,
				 .addr = k->buf + (uint64_t)m * k->size,
				 .length = (uint32_t)k->size,
				 .wr_id = seq_of(r, m)};

	sdr_post_retry(r, k, m, &wr, NULL);
}

static void do_post_send(struct rt *r, struct chan *k, uint32_t m)
{
	if (!k->cross) {
		local_mark(k, &k->full[m], r->iter + 1);
		return;
	}
	struct sdr_send_wr wr = {.mr = k->mr,
				 .addr = k->sbuf + (uint64_t)m * k->size,
				 .length = (uint32_t)k->size,
				 .imm = (uint32_t)seq_of(r, m),
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
				rt_fatal("timeout: %s ch %u m %u iteration %u",
					 is_recv ? "recv" : "send", k->ch, m, r->iter);
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
			rt_fatal("%s ch %u m %u iteration %u failed: %s",
				 is_recv ? "receive" : "send", k->ch, m, r->iter,
				 rc == SDR_POLL_PARTIAL ? "partial message" : sdr_strerror(rc));
		/* a daemon restart (libsdr re-attaches) does not count against
		 * the iteration's timeout: the run goes on */
		pthread_mutex_lock(&r->sdr_mu);
		if (app_restart_note(r->ctx, NULL) != SDR_CTX_LIVE)
			t_end = pipe_now() + r->o->timeout;
		pthread_mutex_unlock(&r->sdr_mu);
		if (pipe_now() > t_end)
			rt_fatal("timeout: %s ch %u m %u iteration %u (rel none on a lossy link?)",
				 is_recv ? "recv" : "send", k->ch, m, r->iter);
		rt_nap(r->o->poll_us);
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
				int rc = pipe_payload_check(b, ik->size, r->iter, e->chan, e->m,
							    &e->csum);

				if (rc)
					rt_fatal("stage %u: payload ch %u m %u iteration %u: %s", s,
						 e->chan, e->m, r->iter,
						 rc == -EBADMSG ? "bad checksum/header"
								: "wrong message");
				verify_ev = SIZE_MAX;
			}
			if (oc >= 0) {
				struct chan *ok = &r->ch[oc];

				r->csum_out[s] = pipe_payload_fill(send_slot(ok, in->m), ok->size,
								   r->o->seed, r->iter,
								   (uint32_t)oc, in->m);
			}
			rt_sleep_until(dl);
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

void *rt_stage_main(void *arg)
{
	struct targ *a = arg;
	struct rt *r = a->r;

	for (uint32_t it = 0; it < r->o->iters; it++) {
		pthread_barrier_wait(&r->bar); /* start time set */
		rt_sleep_until(r->t_start);
		run_stage_iter(r, a->s);
		pthread_barrier_wait(&r->bar); /* done */
	}
	return NULL;
}
