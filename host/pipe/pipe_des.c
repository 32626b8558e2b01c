/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-pipe: discrete-event simulation of per-stage programs (an engine with
 * a transport interface, and the links of a pipe_net with the completion-
 * time model as the transport), the dependency check of an executed event
 * log, metrics and payload checksums.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipe.h"
#include "pipe_cba.h"
#include "pipe_le.h"
#include "pipe_net.h"
#include "sdr_auto.h"
#include "sdr_model.h"

int pipe_events_add(struct pipe_events *e, const struct pipe_event *x)
{
	if (e->n == e->cap) {
		size_t nc = e->cap ? 2 * e->cap : 256;
		struct pipe_event *ne = realloc(e->ev, nc * sizeof(*ne));

		if (!ne)
			return -ENOMEM;
		e->ev = ne;
		e->cap = nc;
	}
	e->ev[e->n++] = *x;
	return 0;
}

void pipe_events_free(struct pipe_events *e)
{
	free(e->ev);
	memset(e, 0, sizeof(*e));
}

/* ---------------- DES engine ---------------- */

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

static int cross(const struct pipe_cfg *c, uint32_t ch)
{
	return c->dc_of[pipe_ch_src(ch)] != c->dc_of[pipe_ch_dst(ch)];
}

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
	d->out->tx[d->out->ntx++] = (struct pipe_tx){
		.chan = (uint16_t)ch, .m = (uint16_t)m, .link = (int16_t)link, .scheme = scheme,
		.t_start = t_start - d->t0, .t_end = t_end - d->t0, .t_arrive = t_arrive - d->t0,
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
		struct pipe_event ev = {.stage = (uint16_t)s, .m = in->m, .kind = in->kind,
					.chan = in->chan, .t0 = st->wait_t0 - t0, .t1 = t - t0};

		if ((rc = pipe_events_add(&d->out->ev, &ev)))
			return rc;
		st->waiting = 0;
		st->pc++;
	}
	while (st->pc < p->n[s]) {
		const struct pipe_ins *in = &p->ins[s][st->pc];
		struct pipe_event ev = {.stage = (uint16_t)s, .m = in->m, .kind = in->kind,
					.op = in->op, .chan = in->chan, .t0 = t - t0, .t1 = t - t0};
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
			if (cross(c, in->chan))
				rc = d->x->post(d->x->ctx, d, in->chan, in->m, x->send_post, x->recv_post);
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
		case EV_STAGE:
			rc = stage_step(&d, (uint32_t)e.a);
			break;
		case EV_LOCAL:
			if (!(rc = hpush(&d.h, e.t, EV_ARRIVE, e.a)))
				rc = hpush(&d.h, e.t, EV_COMPLETE, e.a);
			break;
		case EV_TIMER:
			rc = x->timer(x->ctx, &d, e.a);
			break;
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

/* ---------------- the links of a pipe_net as a transport ---------------- */

/*
 * Each link with a rate is one server: a FIFO of messages, each served at up
 * to its QP's rate, the capacity going to the messages in FIFO order, one
 * message per QP at a time; rates change only when a message enters or
 * leaves, so the fluid state advances exactly between those events. A pair
 * without a link, or a link without a rate, gives each flow a server of its
 * own with no shared capacity.
 */
#define LX_ENQ 0ull
#define LX_FIN 1ull
#define LX_TAG(kind, srv, v) ((kind) << 62 | (uint64_t)(srv) << 40 | ((v) & ((1ull << 40) - 1)))
#define LX_SERVERS (PIPE_NET_MAX_LINKS + PIPE_MAX_FLOWS)

struct lx_msg {
	double bits, rem, rate, first;
	int32_t next;      /* FIFO chain of its server, -1 = end */
	uint8_t started;
};

struct lx_server {
	double cap;        /* bit/s; INFINITY = shares nothing */
	double last;       /* rem of its messages is exact at this time */
	int32_t head, tail;
	uint64_t version;  /* a FIN timer of an older version is stale */
};

struct lx_flow {
	uint32_t a, b;
	int link, server;
	double cap;                /* bit/s one message of the flow may take */
	double d_ab, d_ba, loss;
	struct sdr_scheme scheme;  /* what its messages are sent with */
	double bits;               /* on the wire per message, parity included */
	uint64_t payload_total;    /* payload + parity chunks (bytes) */
};

struct lx {
	const struct pipe_cfg *c;
	uint64_t rng;      /* c->loss_seed's stream: draws of loss recovery */
	const struct pipe_net *net;
	struct pipe_flows fl;
	struct lx_flow f[PIPE_MAX_FLOWS];
	struct lx_server sv[LX_SERVERS];
	struct lx_msg *msg;
};

/* the completion-time model's parameters of flow @p f at goodput @p rate */
static void lx_model_params(const struct lx *x, const struct lx_flow *f, double rate, double loss,
			    struct sdr_model_params *prm)
{
	const struct pipe_cfg *c = x->c;
	struct sdr_auto_cfg ac;

	sdr_auto_cfg_default(&ac); /* AUTO's alpha and beta: the firmware's model */
	memset(prm, 0, sizeof(*prm));
	prm->msg_bytes = pipe_ch_bytes(c, x->fl.f[f - x->f].chan);
	prm->chunk_bytes = c->chunk_bytes;
	prm->pkts_per_chunk = (c->chunk_bytes + c->mtu - 1) / c->mtu;
	prm->rate_bps = rate;
	prm->rtt_s = f->d_ab + f->d_ba;
	prm->pkt_loss = loss;
	prm->alpha = ac.alpha;
	prm->beta = ac.beta;
	prm->scheme = f->scheme;
}

/* scheme, parity and wire bits of flow i's messages */
static int lx_flow_setup(struct lx *x, uint32_t i, const struct pipe_alloc *rates)
{
	const struct pipe_cfg *c = x->c;
	struct lx_flow *f = &x->f[i];
	const struct pipe_flow *pf = &x->fl.f[i];
	uint64_t payload = pipe_ch_bytes(c, pf->chan), r = pipe_net_rate(x->net, pf->link);
	struct sdr_model_params prm;
	struct sdr_model_result res;
	int rc;

	f->a = pf->src_dc;
	f->b = pf->dst_dc;
	f->link = pf->link;
	f->server = r ? pf->link : (int)(PIPE_NET_MAX_LINKS + i);
	f->cap = rates && rates->rate[i] ? (double)rates->rate[i] : (double)(r ? r : c->rate_bps);
	f->d_ab = pipe_net_delay(x->net, f->a, f->b);
	f->d_ba = pipe_net_delay(x->net, f->b, f->a);
	f->loss = pipe_net_loss(x->net, pf->link);
	f->scheme = c->rel;
	f->bits = (double)pipe_wire_bytes(c, payload) * 8;
	f->payload_total = payload;
	if (c->rel.rel == SDR_REL_NONE)
		return f->loss > 0 ? -EPIPE : 0;
	/* the model at the QP's goodput (payload share of its wire rate) */
	lx_model_params(x, f, f->cap * (double)payload / ((double)pipe_wire_bytes(c, payload)),
			f->loss, &prm);
	if (c->rel.rel == SDR_REL_AUTO) {
		size_t best;

		if ((rc = sdr_model_pick(&prm, NULL, 0, SDR_MODEL_OBJ_MEAN, NULL, &best)))
			return rc;
		f->scheme = sdr_model_default_schemes[best];
		prm.scheme = f->scheme;
	}
	if (f->scheme.rel == SDR_REL_EC) {
		if ((rc = sdr_model_eval(&prm, &res)))
			return rc;
		f->bits += (double)(res.parity_chunks * pipe_wire_bytes(c, c->chunk_bytes)) * 8;
		f->payload_total += res.parity_chunks * c->chunk_bytes;
	}
	return 0;
}

/* loss recovery of one message of flow @p f sent at wire rate @p eff: the
 * model's mean, or (loss_seed) a draw from its distribution */
static int lx_loss_extra(struct lx *x, const struct lx_flow *f, double eff, double *extra)
{
	struct sdr_model_params prm;
	struct sdr_model_result lossy, clean;
	double t;
	int rc;

	*extra = 0;
	if (f->loss <= 0 || f->scheme.rel == SDR_REL_NONE)
		return 0;
	lx_model_params(x, f, eff * (double)f->payload_total * 8 / f->bits, f->loss, &prm);
	if ((rc = sdr_model_eval(&prm, &lossy)))
		return rc;
	t = lossy.mean;
	if (x->c->loss_seed) {
		/* splitmix64; u in (0, 1) */
		uint64_t z = (x->rng += 0x9e3779b97f4a7c15ull);
		double u;

		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		u = ((double)((z ^ (z >> 31)) >> 11) + 0.5) * 0x1.0p-53;
		if ((rc = sdr_model_quantile(&prm, u, &t)))
			return rc;
	}
	prm.pkt_loss = 0;
	if ((rc = sdr_model_eval(&prm, &clean)))
		return rc;
	*extra = fmax(0, t - clean.mean);
	return 0;
}

/* bring server @p s's remaining bits to time @p t */
static void lx_advance(struct lx *x, struct lx_server *sv, double t)
{
	for (int32_t k = sv->head; k >= 0; k = x->msg[k].next)
		if (x->msg[k].rate > 0)
			x->msg[k].rem -= x->msg[k].rate * (t - sv->last);
	sv->last = t;
}

/* FIFO order, one message per flow, each up to its flow's rate; then the
 * timer of the next message to finish */
static int lx_schedule(struct lx *x, struct pipe_des *d, uint32_t s)
{
	struct lx_server *sv = &x->sv[s];
	uint8_t busy[PIPE_MAX_FLOWS] = {0};
	double avail = sv->cap, next = INFINITY, now = pipe_des_now(d);
	uint32_t M = x->c->micro;

	for (int32_t k = sv->head; k >= 0; k = x->msg[k].next) {
		struct lx_msg *mm = &x->msg[k];
		int fi = x->fl.of_chan[(uint32_t)k / M];

		mm->rate = 0;
		if (busy[fi] || avail <= 0)
			continue;
		busy[fi] = 1;
		mm->rate = fmin(x->f[fi].cap, avail);
		avail -= mm->rate;
		if (!mm->started) {
			mm->started = 1;
			mm->first = now;
		}
		next = fmin(next, now + fmax(mm->rem, 0) / mm->rate);
	}
	sv->version++;
	return isfinite(next) ? pipe_des_timer(d, next, LX_TAG(LX_FIN, s, sv->version)) : 0;
}

static int lx_post(void *ctx, struct pipe_des *d, uint32_t ch, uint32_t m, double t_send,
		   double t_recv)
{
	struct lx *x = ctx;
	const struct lx_flow *f = &x->f[x->fl.of_chan[ch]];

	/* ready when the clear-to-send, sent at the receive's post, got back */
	return pipe_des_timer(d, fmax(t_send, t_recv + f->d_ba),
			      LX_TAG(LX_ENQ, 0, (uint64_t)ch * x->c->micro + m));
}

static int lx_timer(void *ctx, struct pipe_des *d, uint64_t tag)
{
	struct lx *x = ctx;
	uint32_t M = x->c->micro;
	double now = pipe_des_now(d);
	int rc;

	if (tag >> 62 == LX_ENQ) {
		uint32_t k = (uint32_t)(tag & ((1ull << 40) - 1));
		const struct lx_flow *f = &x->f[x->fl.of_chan[k / M]];
		struct lx_server *sv = &x->sv[f->server];
		struct lx_msg *mm = &x->msg[k];

		lx_advance(x, sv, now);
		*mm = (struct lx_msg){.bits = f->bits, .rem = f->bits, .next = -1};
		if (sv->tail >= 0)
			x->msg[sv->tail].next = (int32_t)k;
		else
			sv->head = (int32_t)k;
		sv->tail = (int32_t)k;
		return lx_schedule(x, d, (uint32_t)f->server);
	}
	/* LX_FIN */
	uint32_t s = (uint32_t)(tag >> 40 & ((1ull << 22) - 1));
	struct lx_server *sv = &x->sv[s];

	if ((tag & ((1ull << 40) - 1)) != (sv->version & ((1ull << 40) - 1)))
		return 0; /* superseded */
	lx_advance(x, sv, now);
	for (int32_t k = sv->head, prev = -1, next; k >= 0; k = next) {
		struct lx_msg *mm = &x->msg[k];
		uint32_t ch = (uint32_t)k / M;
		const struct lx_flow *f = &x->f[x->fl.of_chan[ch]];
		double extra, ta;

		next = mm->next;
		/* done: (almost) no bits left, or too few for the clock to move */
		if (mm->rate <= 0 || (mm->rem > 1e-9 * mm->bits && now + mm->rem / mm->rate > now)) {
			prev = k;
			continue;
		}
		/* done: unlink, then deliver with the model's loss recovery at the
		 * rate it got */
		if (prev >= 0)
			x->msg[prev].next = next;
		else
			sv->head = next;
		if (sv->tail == k)
			sv->tail = prev;
		rc = lx_loss_extra(x, f, now > mm->first ? mm->bits / (now - mm->first) : f->cap,
				   &extra);
		if (rc)
			return rc;
		ta = now + f->d_ab + extra;
		rc = pipe_des_deliver(d, ch, (uint32_t)k % M, f->link, (uint8_t)f->scheme.rel, mm->first,
				      now, ta, x->c->rel.rel == SDR_REL_NONE ? now : ta + f->d_ba, extra);
		if (rc)
			return rc;
	}
	return lx_schedule(x, d, s);
}

int pipe_des_run_rates(const struct pipe_cfg *c, const struct pipe_prog *p,
		       const struct pipe_alloc *rates, struct pipe_des_out *out)
{
	struct pipe_net tmp;
	struct lx *x = calloc(1, sizeof(*x));
	struct pipe_xport xp = {.ctx = x, .post = lx_post, .timer = lx_timer};
	int rc = 0;

	memset(out, 0, sizeof(*out));
	if (!x)
		return -ENOMEM;
	x->c = c;
	x->rng = c->loss_seed * 0xd1b54a32d192ed03ull;
	x->net = pipe_net_of(c, &tmp);
	pipe_flows_get(c, x->net, &x->fl);
	x->msg = calloc((size_t)PIPE_NCHAN(c->stages) * c->micro, sizeof(*x->msg));
	if (!x->msg) {
		rc = -ENOMEM;
		goto out;
	}
	if (rates && rates->n != x->fl.n) {
		rc = -EINVAL;
		goto out;
	}
	for (uint32_t s = 0; s < LX_SERVERS; s++) {
		x->sv[s].head = x->sv[s].tail = -1;
		x->sv[s].cap = s < PIPE_NET_MAX_LINKS && s < x->net->nlinks &&
					       pipe_net_rate(x->net, (int)s)
				       ? (double)pipe_net_rate(x->net, (int)s)
				       : INFINITY;
	}
	for (uint32_t i = 0; i < x->fl.n && !rc; i++)
		rc = lx_flow_setup(x, i, rates);
	if (!rc)
		rc = pipe_des_exec(c, p, 0, &xp, out);
out:
	free(x->msg);
	free(x);
	return rc;
}

int pipe_des_run(const struct pipe_cfg *c, const struct pipe_prog *p, struct pipe_des_out *out)
{
	return pipe_des_run_rates(c, p, NULL, out);
}

/* ---------------- GeoPipe's dN by search ---------------- */

int pipe_des_time(const struct pipe_cfg *c, double *t)
{
	static struct pipe_order ord;
	struct pipe_prog p;
	struct pipe_des_out out;
	struct pipe_metrics m;
	int rc;

	if ((rc = pipe_order_build(c, &ord)) || (rc = pipe_prog_build(c, &ord, &p)))
		return rc;
	rc = pipe_des_run(c, &p, &out);
	pipe_prog_free(&p);
	if (rc)
		return rc;
	pipe_metrics_get(c, &out.ev, 0, &m);
	pipe_des_free(&out);
	*t = m.iter_time;
	return 0;
}

/* iteration time of c with per-stage extra forwards d (one DES run) */
static int delta_eval(const struct pipe_cfg *c0, const uint32_t *d, double *t)
{
	struct pipe_cfg c = *c0;

	c.delta_n = PIPE_DELTA_STAGE;
	memcpy(c.delta_stage, d, sizeof(c.delta_stage));
	return pipe_des_time(&c, t);
}

/* The best per-stage vector so far and the DES runs it took. */
struct delta_best {
	uint32_t d[PIPE_MAX_STAGES];
	double t;     /* its iteration time */
	uint32_t sum; /* its extra forwards in all */
	uint32_t runs;
};

/* Evaluate @p d (extra forwards @p sum in all); it becomes the best when it
 * is shorter by more than 1 us, or as short with fewer extra forwards.
 * @return 1 (it did), 0, or the DES's error. */
static int delta_try(const struct pipe_cfg *c, const uint32_t *d, uint32_t sum,
		     struct delta_best *b)
{
	double t;
	int rc = delta_eval(c, d, &t);

	if (rc)
		return rc;
	b->runs++;
	if (!(t < b->t - 1e-6 || (t <= b->t + 1e-6 && sum < b->sum)))
		return 0;
	b->t = t;
	b->sum = sum;
	memcpy(b->d, d, sizeof(b->d));
	return 1;
}

int pipe_delta_search(const struct pipe_cfg *c, uint32_t *delta, double *t_best, uint32_t *runs)
{
	uint32_t S = c->stages, cap[PIPE_MAX_STAGES], d[PIPE_MAX_STAGES];
	uint32_t maxcap = 0;
	struct delta_best b = {.t = INFINITY};
	int rc, moved;

	if (c->sched != PIPE_SCHED_GEOPIPE || c->comm != PIPE_COMM_NONBLOCKING)
		return -EINVAL;
	for (uint32_t s = 0; s < S; s++) {
		cap[s] = pipe_stage_delta_max(c, s);
		if (cap[s] > maxcap)
			maxcap = cap[s];
	}
	/* every uniform value (each stage capped, non-increasing: the caps are) */
	for (uint32_t u = 0; u <= maxcap; u++) {
		uint32_t sum = 0;

		memset(d, 0, sizeof(d));
		for (uint32_t s = 0; s < S; s++) {
			d[s] = u < cap[s] ? u : cap[s];
			if (s && d[s] > d[s - 1])
				d[s] = d[s - 1];
			sum += d[s];
		}
		if ((rc = delta_try(c, d, sum, &b)) < 0)
			return rc;
	}
	/* then single-stage steps while one improves */
	do {
		moved = 0;
		for (uint32_t s = 0; s < S && !moved; s++)
			for (int step = -1; step <= 1 && !moved; step += 2) {
				uint32_t v = b.d[s] + (uint32_t)step;

				if ((step < 0 && b.d[s] == 0) || (step > 0 && b.d[s] >= cap[s]) ||
				    (s && v > b.d[s - 1]) || (s + 1 < S && v < b.d[s + 1]))
					continue;
				memcpy(d, b.d, sizeof(d));
				d[s] = v;
				if ((moved = delta_try(c, d, b.sum + (uint32_t)step, &b)) < 0)
					return moved;
			}
	} while (moved);
	memcpy(delta, b.d, S * sizeof(*delta));
	if (t_best)
		*t_best = b.t;
	if (runs)
		*runs = b.runs;
	return 0;
}

/* ---------------- event log check ---------------- */

/* tolerance of clock comparisons between stages (log resolution) */
#define PIPE_CLOCK_TOL 2e-6

/* pipe_events_check()'s state: the events in (iteration, stage) order and,
 * per iteration, each op's times and each message's checksums. */
struct evchk {
	const struct pipe_prog *p;
	uint32_t S, M, nch;
	size_t nm;
	struct pipe_event *v;
	double *fend, *bend, *fst, *bst;
	uint64_t *scs, *rcs;
	uint8_t *shas, *rhas;
	uint8_t present[PIPE_MAX_STAGES];
	char *why;
	size_t whylen;
};

/* Bucket the events by (iter, stage) into x->v, keeping each stage's log
 * order. @return 0, -EINVAL (an event out of range), -ENOMEM. */
static int evchk_bucket(struct evchk *x, const struct pipe_events *e, uint32_t iters)
{
	uint32_t S = x->S;
	size_t *cnt = calloc((size_t)(iters + 1) * S + 1, sizeof(size_t));
	struct pipe_event *w = malloc((e->n ? e->n : 1) * sizeof(*w));
	int rc = 0;

	if (!cnt || !w) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t k = 0; k < e->n; k++) {
		if (e->ev[k].iter >= iters || e->ev[k].stage >= S) {
			snprintf(x->why, x->whylen, "event %zu: iteration %u / stage %u out of range", k,
				 e->ev[k].iter, e->ev[k].stage);
			rc = -EINVAL;
			goto out;
		}
		cnt[(size_t)e->ev[k].iter * S + e->ev[k].stage + 1]++;
	}
	for (size_t k = 1; k <= (size_t)iters * S; k++)
		cnt[k] += cnt[k - 1];
	for (size_t k = 0; k < e->n; k++)
		w[cnt[(size_t)e->ev[k].iter * S + e->ev[k].stage]++] = e->ev[k];
	memcpy(x->v, w, e->n * sizeof(*x->v));
out:
	free(w);
	free(cnt);
	return rc;
}

/* Event k of stage s in iteration it against the program's instruction k:
 * the same op, time going forward; records the compute times and the
 * checksums. @return 0 or -EINVAL. */
static int evchk_event(struct evchk *x, uint32_t it, uint32_t s, uint32_t k,
		       const struct pipe_event *ev, double *tprev)
{
	const struct pipe_ins *in = &x->p->ins[s][k];
	size_t mi = (size_t)in->chan * x->M + in->m;

	if (ev->kind != in->kind || ev->m != in->m ||
	    (in->kind == PIPE_I_COMPUTE ? ev->op != in->op : ev->chan != in->chan)) {
		snprintf(x->why, x->whylen,
			 "iteration %u stage %u event %u: kind %u op %u m %u chan %u, "
			 "program says kind %u op %u m %u chan %u",
			 it, s, k, ev->kind, ev->op, ev->m, ev->chan, in->kind, in->op, in->m,
			 in->chan);
		return -EINVAL;
	}
	if (!(ev->t1 >= ev->t0) || ev->t0 < *tprev - PIPE_CLOCK_TOL) {
		snprintf(x->why, x->whylen, "iteration %u stage %u event %u: time goes back", it, s,
			 k);
		return -EINVAL;
	}
	*tprev = ev->t1;
	if (in->kind == PIPE_I_COMPUTE) {
		size_t q = (size_t)s * x->M + in->m;

		if (in->op == PIPE_F) {
			x->fst[q] = ev->t0;
			x->fend[q] = ev->t1;
		} else {
			if (isnan(x->fend[q])) {
				snprintf(x->why, x->whylen, "iteration %u: B(%u,%u) before F", it, s,
					 in->m);
				return -EINVAL;
			}
			x->bst[q] = ev->t0;
			x->bend[q] = ev->t1;
		}
	} else if (in->kind == PIPE_I_POST_SEND) {
		x->scs[mi] = ev->csum;
		x->shas[mi] = 1;
	} else if (in->kind == PIPE_I_WAIT_RECV) {
		x->rcs[mi] = ev->csum;
		x->rhas[mi] = 1;
	}
	/* the compute op using a received message waited for it first */
	return 0;
}

/* Stage s's program: every input received before its compute started.
 * @return 0 or -EINVAL. */
static int evchk_inputs(struct evchk *x, uint32_t it, uint32_t s)
{
	const struct pipe_prog *p = x->p;
	uint32_t S = x->S;

	for (uint32_t k = 0; k < p->n[s]; k++) {
		const struct pipe_ins *in = &p->ins[s][k];

		if (in->kind != PIPE_I_COMPUTE)
			continue;
		int need = in->op == PIPE_F ? s > 0 : s < S - 1;
		uint32_t ch = in->op == PIPE_F ? PIPE_CH_ACT(s - (s > 0))
					       : PIPE_CH_GRAD(s < S - 1 ? s : 0);
		int seen = 0;

		if (!need)
			continue;
		for (uint32_t q = 0; q < k; q++)
			if (p->ins[s][q].kind == PIPE_I_WAIT_RECV && p->ins[s][q].chan == ch &&
			    p->ins[s][q].m == in->m)
				seen = 1;
		if (!seen) {
			snprintf(x->why, x->whylen, "iteration %u: %c(%u,%u) ran before its input", it,
				 in->op == PIPE_F ? 'F' : 'B', s, in->m);
			return -EINVAL;
		}
	}
	return 0;
}

/* The events of stage s in iteration it, from x->v[*i]; *i moves past
 * them. A stage without events is an error unless @p partial.
 * @return 0 or -EINVAL. */
static int evchk_stage(struct evchk *x, size_t n, uint32_t it, uint32_t s, int partial,
		       size_t *i)
{
	size_t j = *i;
	double tprev = -INFINITY;
	int rc;

	while (j < n && x->v[j].iter == it && x->v[j].stage == s)
		j++;
	if (j == *i) {
		if (partial)
			return 0;
		snprintf(x->why, x->whylen, "iteration %u: no events of stage %u", it, s);
		return -EINVAL;
	}
	x->present[s] = 1;
	if (j - *i != x->p->n[s]) {
		snprintf(x->why, x->whylen, "iteration %u stage %u: %zu events, program has %u", it,
			 s, j - *i, x->p->n[s]);
		return -EINVAL;
	}
	for (uint32_t k = 0; k < x->p->n[s]; k++)
		if ((rc = evchk_event(x, it, s, k, &x->v[*i + k], &tprev)))
			return rc;
	if ((rc = evchk_inputs(x, it, s)))
		return rc;
	*i = j;
	return 0;
}

/* Iteration it across stages: the true dependencies by the clock, every
 * message received, its checksum the one sent. @return 0 or -EINVAL. */
static int evchk_cross(struct evchk *x, uint32_t it)
{
	uint32_t S = x->S, M = x->M;
	const uint8_t *present = x->present;

	for (uint32_t s = 0; s < S; s++)
		for (uint32_t m = 0; m < M; m++) {
			size_t q = (size_t)s * M + m;

			if (!present[s])
				continue;
			if (s > 0 && present[s - 1] && !(x->fst[q] >= x->fend[q - M] - PIPE_CLOCK_TOL)) {
				snprintf(x->why, x->whylen,
					 "iteration %u: F(%u,%u) started before F(%u,%u) ended", it, s, m,
					 s - 1, m);
				return -EINVAL;
			}
			if (s < S - 1 && present[s + 1] &&
			    !(x->bst[q] >= x->bend[q + M] - PIPE_CLOCK_TOL)) {
				snprintf(x->why, x->whylen,
					 "iteration %u: B(%u,%u) started before B(%u,%u) ended", it, s, m,
					 s + 1, m);
				return -EINVAL;
			}
			if (!(x->bst[q] >= x->fend[q] - PIPE_CLOCK_TOL)) {
				snprintf(x->why, x->whylen, "iteration %u: B(%u,%u) before F(%u,%u) ended",
					 it, s, m, s, m);
				return -EINVAL;
			}
		}
	for (uint32_t ch = 0; ch < x->nch; ch++)
		for (uint32_t m = 0; m < M; m++) {
			size_t mi = (size_t)ch * M + m;

			if (present[pipe_ch_dst(ch)] && !x->rhas[mi]) {
				snprintf(x->why, x->whylen,
					 "iteration %u: channel %u message %u never received", it, ch, m);
				return -EINVAL;
			}
			if (x->rhas[mi] && x->shas[mi] && x->rcs[mi] != x->scs[mi]) {
				snprintf(x->why, x->whylen,
					 "iteration %u: channel %u message %u checksum %016llx, sent %016llx",
					 it, ch, m, (unsigned long long)x->rcs[mi],
					 (unsigned long long)x->scs[mi]);
				return -EINVAL;
			}
		}
	return 0;
}

/* Every iteration of the bucketed log, then nothing beyond. */
static int evchk_iters(struct evchk *x, size_t n, uint32_t iters, int partial)
{
	size_t i = 0, nmsg = (size_t)x->nch * x->M;
	int rc;

	for (uint32_t it = 0; it < iters; it++) {
		memset(x->present, 0, sizeof(x->present));
		for (size_t k = 0; k < x->nm; k++)
			x->fend[k] = x->bend[k] = x->fst[k] = x->bst[k] = NAN;
		memset(x->shas, 0, nmsg);
		memset(x->rhas, 0, nmsg);
		for (uint32_t s = 0; s < x->S; s++)
			if ((rc = evchk_stage(x, n, it, s, partial, &i)))
				return rc;
		while (i < n && x->v[i].iter == it)
			i++;
		/* cross-stage true dependencies and checksums */
		if ((rc = evchk_cross(x, it)))
			return rc;
	}
	if (i != n) {
		snprintf(x->why, x->whylen, "events beyond iteration %u", iters);
		return -EINVAL;
	}
	return 0;
}

int pipe_events_check(const struct pipe_cfg *c, const struct pipe_prog *p,
		      const struct pipe_events *e, uint32_t iters, int partial, char *why,
		      size_t whylen)
{
	struct evchk x = {.p = p, .S = c->stages, .M = c->micro,
			  .nch = PIPE_NCHAN(c->stages), .why = why, .whylen = whylen};
	size_t nmsg = (size_t)x.nch * x.M;
	int rc;

	x.nm = (size_t)x.S * x.M;
	x.v = malloc((e->n ? e->n : 1) * sizeof(*x.v));
	x.fend = malloc(x.nm * sizeof(double));
	x.bend = malloc(x.nm * sizeof(double));
	x.fst = malloc(x.nm * sizeof(double));
	x.bst = malloc(x.nm * sizeof(double));
	x.scs = malloc(nmsg * sizeof(uint64_t));
	x.rcs = malloc(nmsg * sizeof(uint64_t));
	x.shas = malloc(nmsg);
	x.rhas = malloc(nmsg);
	if (!x.v || !x.fend || !x.bend || !x.fst || !x.bst || !x.scs || !x.rcs || !x.shas ||
	    !x.rhas)
		rc = -ENOMEM;
	else if (!(rc = evchk_bucket(&x, e, iters)))
		rc = evchk_iters(&x, e->n, iters, partial);
	free(x.v);
	free(x.fend);
	free(x.bend);
	free(x.fst);
	free(x.bst);
	free(x.scs);
	free(x.rcs);
	free(x.shas);
	free(x.rhas);
	return rc;
}

/* ---------------- metrics ---------------- */

void pipe_metrics_get(const struct pipe_cfg *c, const struct pipe_events *e, uint32_t iter,
		      struct pipe_metrics *m)
{
	uint32_t infl[PIPE_MAX_STAGES] = {0};

	memset(m, 0, sizeof(*m));
	for (size_t i = 0; i < e->n; i++) {
		const struct pipe_event *x = &e->ev[i];

		if (x->iter != iter || x->stage >= c->stages)
			continue;
		if (x->kind == PIPE_I_COMPUTE) {
			m->busy[x->stage] += x->t1 - x->t0;
			if (x->t1 > m->iter_time)
				m->iter_time = x->t1;
			if (x->op == PIPE_F) {
				if (++infl[x->stage] > m->peak_inflight[x->stage])
					m->peak_inflight[x->stage] = infl[x->stage];
			} else if (infl[x->stage]) {
				infl[x->stage]--;
			}
		} else if (x->kind == PIPE_I_POST_SEND) {
			uint64_t b = pipe_ch_bytes(c, x->chan);

			if (cross(c, x->chan))
				m->bytes_cross += b;
			else
				m->bytes_local += b;
		}
	}
	for (uint32_t s = 0; s < c->stages; s++) {
		m->bubble[s] = m->iter_time > 0 ? 1 - m->busy[s] / m->iter_time : 0;
		m->bubble_all += m->bubble[s] / c->stages;
	}
}

/* ---------------- payloads ---------------- */

static uint64_t body_sum(const uint8_t *p, uint64_t len)
{
	uint64_t h = 0xcbf29ce484222325ull, w;
	uint64_t i = 0;

	for (; i + 8 <= len; i += 8) {
		memcpy(&w, p + i, 8);
		h = (h ^ w) * 0x100000001b3ull;
		h ^= h >> 29;
	}
	for (; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h ^ len;
}

uint64_t pipe_payload_fill(void *buf, uint64_t len, uint64_t seed, uint32_t iter, uint32_t ch,
			   uint32_t m)
{
	uint8_t *p = buf, *b = p + PIPE_HDR_BYTES;
	uint64_t n = len - PIPE_HDR_BYTES, x = seed ^ ((uint64_t)iter << 40) ^ ((uint64_t)ch << 20) ^ m;
	uint64_t i = 0, cs;

	x = x * 0x9e3779b97f4a7c15ull + 1;
	for (; i + 8 <= n; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(b + i, &x, 8);
	}
	for (; i < n; i++)
		b[i] = (uint8_t)(x >> (i & 7));
	cs = body_sum(b, n);
	pipe_put32(p, PIPE_MAGIC);
	pipe_put32(p + 4, iter);
	pipe_put32(p + 8, ch);
	pipe_put32(p + 12, m);
	pipe_put64(p + 16, len);
	pipe_put64(p + 24, cs);
	pipe_put64(p + 32, seed);
	return cs;
}

int pipe_payload_check(const void *buf, uint64_t len, uint32_t iter, uint32_t ch, uint32_t m,
		       uint64_t *csum)
{
	const uint8_t *p = buf;
	uint64_t cs;

	if (len < PIPE_HDR_BYTES || pipe_get32(p) != PIPE_MAGIC || pipe_get64(p + 16) != len)
		return -EBADMSG;
	cs = body_sum(p + PIPE_HDR_BYTES, len - PIPE_HDR_BYTES);
	if (cs != pipe_get64(p + 24))
		return -EBADMSG;
	if (pipe_get32(p + 4) != iter || pipe_get32(p + 8) != ch || pipe_get32(p + 12) != m)
		return -EPROTO;
	*csum = cs;
	return 0;
}
