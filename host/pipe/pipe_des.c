/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-pipe: discrete-event simulation of per-stage programs, the engine
 * (host/pipe/, the pipe core; pure C). An event heap, each stage stepping
 * through its program, messages handed to a transport interface (pipe.h:
 * pipe_des_exec()); pipe_des_net.c is the transport of a pipe_net's links.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipe.h"
#include "pipe_cba.h"
#include "pipe_net.h"
#include "sdr_auto.h"
#include "sdr_model.h"

enum { EV_STAGE = 0, EV_LOCAL, EV_ARRIVE, EV_COMPLETE, EV_TIMER };

struct hev {
	double t;
	uint64_t seq;
	uint64_t a; /* stage, message index, or a transport's timer tag */
	uint32_t type;
};

struct heap {
	struct hev *v;
	size_t n, cap;
	uint64_t seq;
};

static int hless(const struct hev *x, const struct hev *y)
{
	return x->t < y->t || (x->t == y->t && x->seq < y->seq);
}

static int hpush(struct heap *h, double t, uint32_t type, uint64_t a)
{
	if (h->n == h->cap) {
		size_t nc = h->cap ? 2 * h->cap : 256;
		struct hev *nv = realloc(h->v, nc * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		h->v = nv;
		h->cap = nc;
	}
	size_t i = h->n++;

	h->v[i] = (struct hev){t, h->seq++, a, type};
	while (i > 0 && hless(&h->v[i], &h->v[(i - 1) / 2])) {
		struct hev tmp = h->v[i];

		h->v[i] = h->v[(i - 1) / 2];
		h->v[(i - 1) / 2] = tmp;
		i = (i - 1) / 2;
	}
	return 0;
}

static struct hev hpop(struct heap *h)
{
	struct hev top = h->v[0];
	size_t i = 0;

	h->v[0] = h->v[--h->n];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < h->n && hless(&h->v[l], &h->v[m]))
			m = l;
		if (r < h->n && hless(&h->v[r], &h->v[m]))
			m = r;
		if (m == i)
			break;
		struct hev tmp = h->v[i];

		h->v[i] = h->v[m];
		h->v[m] = tmp;
		i = m;
	}
	return top;
}

struct dmsg {
	double send_post, recv_post;
	uint8_t has_send, has_recv, started, delivered, arrived, completed;
};

struct dstage {
	uint32_t pc;
	int waiting; /* 0, or 1 + message index */
	double wait_t0;
};

struct pipe_des {
	const struct pipe_cfg *c;
	const struct pipe_prog *p;
	const struct pipe_xport *x;
	double t0, now;
	struct heap h;
	struct dmsg *msg;
	struct dstage st[PIPE_MAX_STAGES];
	struct pipe_des_out *out;
	size_t txcap;
};

double pipe_des_now(const struct pipe_des *d)
{
	return d->now;
}

int pipe_des_timer(struct pipe_des *d, double t, uint64_t tag)
{
	if (!(t >= d->now))
		return -EINVAL;
	return hpush(&d->h, t, EV_TIMER, tag);
}

int pipe_des_deliver(struct pipe_des *d, uint32_t ch, uint32_t m, int link, uint8_t scheme,
		     double t_start, double t_end, double t_arrive, double t_complete, double extra)
{
	uint32_t M = d->c->micro;
	struct dmsg *x;
	int rc;

	if (ch >= PIPE_NCHAN(d->c->stages) || m >= M)
		return -EINVAL;
	x = &d->msg[(size_t)ch * M + m];
	if (!x->started || x->delivered || !(t_start <= t_end) || !(t_end <= t_arrive) ||
	    !(t_end <= t_complete) || !(t_arrive >= d->now) || !(t_complete >= d->now))
		return -EINVAL;
	x->delivered = 1;
	if (d->out->ntx == d->txcap) {
		size_t nc = d->txcap ? 2 * d->txcap : 64;
		struct pipe_tx *nt = realloc(d->out->tx, nc * sizeof(*nt));

		if (!nt)
			return -ENOMEM;
		d->out->tx = nt;
		d->txcap = nc;
	}
	d->out->tx[d->out->ntx++] = (struct pipe_tx){.chan = (uint16_t)ch,
						     .m = (uint16_t)m,
						     .link = (int16_t)link,
						     .scheme = scheme,
						     .t_start = t_start - d->t0,
						     .t_end = t_end - d->t0,
						     .t_arrive = t_arrive - d->t0,
						     .loss_extra = extra};
	if ((rc = hpush(&d->h, t_arrive, EV_ARRIVE, (uint64_t)ch * M + m)))
		return rc;
	return hpush(&d->h, t_complete, EV_COMPLETE, (uint64_t)ch * M + m);
}

/* Stage s runs its program from d->now until it computes or waits. */
static int stage_step(struct pipe_des *d, uint32_t s)
{
	const struct pipe_cfg *c = d->c;
	const struct pipe_prog *p = d->p;
	struct dstage *st = &d->st[s];
	double t = d->now, t0 = d->t0;
	uint32_t M = c->micro;
	int rc = 0;

	if (st->waiting) { /* woken: the wait ends now */
		const struct pipe_ins *in = &p->ins[s][st->pc];
		struct pipe_event ev = {.stage = (uint16_t)s,
					.m = in->m,
					.kind = in->kind,
					.chan = in->chan,
					.t0 = st->wait_t0 - t0,
					.t1 = t - t0};

		if ((rc = pipe_events_add(&d->out->ev, &ev)))
			return rc;
		st->waiting = 0;
		st->pc++;
	}
	while (st->pc < p->n[s]) {
		const struct pipe_ins *in = &p->ins[s][st->pc];
		struct pipe_event ev = {.stage = (uint16_t)s,
					.m = in->m,
					.kind = in->kind,
					.op = in->op,
					.chan = in->chan,
					.t0 = t - t0,
					.t1 = t - t0};
		uint32_t mi = (uint32_t)in->chan * M + in->m;
		struct dmsg *x = &d->msg[mi];

		if (in->kind == PIPE_I_COMPUTE) {
			double end = t + (in->op == PIPE_F ? pipe_tf(c, s) : pipe_tb(c, s));

			ev.t1 = end - t0;
			if ((rc = pipe_events_add(&d->out->ev, &ev)) ||
			    (rc = hpush(&d->h, end, EV_STAGE, s)))
				return rc;
			st->pc++;
			return 0;
		}
		if (in->kind == PIPE_I_WAIT_RECV || in->kind == PIPE_I_WAIT_SEND) {
			int ready = in->kind == PIPE_I_WAIT_RECV ? x->arrived : x->completed;

			if (!ready) {
				st->waiting = 1 + (int)mi;
				st->wait_t0 = t;
				return 0;
			}
		} else if (in->kind == PIPE_I_POST_RECV) {
			x->recv_post = t;
			x->has_recv = 1;
		} else {
			x->send_post = t;
			x->has_send = 1;
		}
		if ((rc = pipe_events_add(&d->out->ev, &ev)))
			return rc;
		st->pc++;
		if (x->has_send && x->has_recv && !x->started) {
			x->started = 1;
			if (pipe_ch_cross(c, in->chan))
				rc = d->x->post(d->x->ctx, d, in->chan, in->m, x->send_post,
						x->recv_post);
			else
				rc = hpush(&d->h, fmax(x->send_post, x->recv_post), EV_LOCAL, mi);
			if (rc)
				return rc;
		}
	}
	return 0;
}

int pipe_des_exec(const struct pipe_cfg *c, const struct pipe_prog *p, double t0,
		  const struct pipe_xport *x, struct pipe_des_out *out)
{
	uint32_t S = c->stages, M = c->micro, nch = PIPE_NCHAN(S);
	struct pipe_des d = {.c = c, .p = p, .x = x, .t0 = t0, .now = t0, .out = out};
	int rc = 0;

	memset(out, 0, sizeof(*out));
	d.msg = calloc((size_t)nch * M, sizeof(*d.msg));
	if (!d.msg)
		return -ENOMEM;
	for (uint32_t s = 0; s < S && !rc; s++)
		rc = hpush(&d.h, t0, EV_STAGE, s);
	while (d.h.n && !rc) {
		struct hev e = hpop(&d.h);

		d.now = e.t;
		switch (e.type) {
		case EV_STAGE: rc = stage_step(&d, (uint32_t)e.a); break;
		case EV_LOCAL:
			if (!(rc = hpush(&d.h, e.t, EV_ARRIVE, e.a)))
				rc = hpush(&d.h, e.t, EV_COMPLETE, e.a);
			break;
		case EV_TIMER: rc = x->timer(x->ctx, &d, e.a); break;
		default: { /* EV_ARRIVE, EV_COMPLETE */
			uint32_t ch = (uint32_t)(e.a / M);
			uint32_t s = e.type == EV_ARRIVE ? pipe_ch_dst(ch) : pipe_ch_src(ch);

			if (e.type == EV_ARRIVE)
				d.msg[e.a].arrived = 1;
			else
				d.msg[e.a].completed = 1;
			if (d.st[s].waiting == 1 + (int)e.a) {
				const struct pipe_ins *in = &p->ins[s][d.st[s].pc];

				if ((in->kind == PIPE_I_WAIT_RECV) == (e.type == EV_ARRIVE))
					rc = hpush(&d.h, e.t, EV_STAGE, s);
			}
		}
		}
	}
	for (uint32_t s = 0; s < S && !rc; s++)
		if (d.st[s].pc < p->n[s])
			rc = -EDEADLK;
	free(d.h.v);
	free(d.msg);
	if (rc)
		pipe_des_free(out);
	return rc;
}

void pipe_des_free(struct pipe_des_out *out)
{
	pipe_events_free(&out->ev);
	free(out->tx);
	out->tx = NULL;
	out->ntx = 0;
}
