/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-pipe: the links of a pipe_net (each of its paths) as the DES's transport, with the
 * completion-time model of each flow (host/pipe/, the pipe core; pure C,
 * above the DES engine of pipe_des.c, pipe_net and common/'s model).
 * pipe_des_run() and pipe_des_run_rates() run a program over them.
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

/*
 * Each path of a link with a rate is one server: a FIFO of messages (parts of
 * messages), each served at up to its QP's rate, the capacity going to the
 * messages in FIFO order, one message per QP at a time; rates change only
 * when a message enters or leaves, so the fluid state advances exactly
 * between those events. A pair without a link, or a path without a rate,
 * gives each flow a server of its own with no shared capacity.
 *
 * A QP that sprays (c->paths = P >= 2, not --rel none) over a link of N
 * paths sends each message as min(P, N) parts, one per path, in proportion
 * to the paths' rates (equal parts when a path has no rate) and at that
 * share of its own rate: the sender's weighted round robin once its weights
 * have settled (docs/pipeline.md "Links of several paths"). The message is
 * sent when its last part is,
 * and arrives when the last part has crossed its path's delay. A QP of one
 * port (P <= 1) takes one path: flow i's path i mod N (the ECMP hash of its
 * port, which the QPN decides, is not known here). Its clear-to-send and
 * acknowledgments keep one port: the reverse link's mean path delay
 * (pipe_net_delay_ctl()).
 */
#define LX_ENQ 0ull
#define LX_FIN 1ull
#define LX_TAG(kind, srv, v) ((kind) << 62 | (uint64_t)(srv) << 40 | ((v) & ((1ull << 40) - 1)))
#define LX_NP PIPE_NET_PATHS_MAX
#define LX_SERVERS ((PIPE_NET_MAX_LINKS + PIPE_MAX_FLOWS) * LX_NP)

/* one part of a message: what one path's server serves */
struct lx_msg {
	double bits, rem, rate, first;
	int32_t next; /* FIFO chain of its server, -1 = end */
	uint8_t started;
};

/* a whole message: its parts so far */
struct lx_whole {
	double first, done, arrive;
	uint32_t left; /* parts not yet sent */
};

struct lx_server {
	double cap;  /* bit/s; INFINITY = shares nothing */
	double last; /* rem of its messages is exact at this time */
	int32_t head, tail;
	uint64_t version; /* a FIN timer of an older version is stale */
};

struct lx_flow {
	uint32_t a, b;
	int link;
	double cap; /* bit/s one message of the flow may take */
	double d_ab, d_ba, loss;
	uint32_t np;              /* parts of a message: the paths it takes */
	int server[LX_NP];        /* of each part */
	double share[LX_NP];      /* of its bits and its rate */
	double pd_ab[LX_NP];      /* one-way delay of each part's path */
	struct sdr_scheme scheme; /* what its messages are sent with */
	double bits;              /* on the wire per message, parity included */
	uint64_t payload_total;   /* payload + parity chunks (bytes) */
};

struct lx {
	const struct pipe_cfg *c;
	uint64_t rng; /* c->loss_seed's stream: draws of loss recovery */
	const struct pipe_net *net;
	struct pipe_flows fl;
	struct lx_flow f[PIPE_MAX_FLOWS];
	struct lx_server sv[LX_SERVERS];
	uint32_t npx;           /* parts per message in msg[]: the most np */
	struct lx_msg *msg;     /* part j of message k: msg[k * npx + j] */
	struct lx_whole *whole; /* message k: whole[k] */
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

/* source ports of a cross-DC QP: --paths, for the schemes that spray (SR,
 * EC, AUTO); a QP without reliability keeps one (docs/multipath.md) */
static uint32_t lx_ports(const struct pipe_cfg *c)
{
	return c->paths >= 2 && c->rel.rel != SDR_REL_NONE ? c->paths : 1;
}

/* the paths of flow i's messages: which, their shares, servers, delays and
 * the flow's loss (the parts' losses weighted by their shares) */
static void lx_flow_paths(struct lx *x, uint32_t i)
{
	struct lx_flow *f = &x->f[i];
	const struct pipe_net_link *l = f->link >= 0 ? &x->net->link[f->link] : NULL;
	uint32_t n = pipe_net_paths(x->net, f->link), p = lx_ports(x->c);
	uint64_t sum = 0;
	int unbounded = 0;

	f->np = p < n ? p : n;
	f->d_ab = 0;
	f->loss = 0;
	for (uint32_t j = 0; j < f->np && l; j++) {
		const struct pipe_net_path *q = &l->path[(i + j) % n];

		sum += q->rate_bps;
		unbounded |= !q->rate_bps;
	}
	for (uint32_t j = 0; j < f->np; j++) {
		uint32_t k = f->np == n ? j : (i + j) % n; /* all of them: in order */
		const struct pipe_net_path *q = l ? &l->path[k] : NULL;

		f->share[j] = f->np == 1  ? 1
			      : unbounded ? 1.0 / f->np
					  : (double)q->rate_bps / (double)sum;
		f->server[j] = q && q->rate_bps ? (int)(f->link * LX_NP + k)
						: (int)((PIPE_NET_MAX_LINKS + i) * LX_NP + j);
		f->pd_ab[j] = q ? (double)q->delay_ns * 1e-9 : 0;
		f->d_ab = fmax(f->d_ab, f->pd_ab[j]);
		f->loss += f->np == 1 ? (q ? q->loss : 0) : f->share[j] * q->loss;
	}
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
	f->cap = rates && rates->rate[i] ? (double)rates->rate[i] : (double)(r ? r : c->rate_bps);
	f->d_ba = pipe_net_delay_ctl(x->net, f->b, f->a); /* CTS, ACK: one port */
	lx_flow_paths(x, i);
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

/* bring server @p sv's remaining bits to time @p t */
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
		int fi = x->fl.of_chan[(uint32_t)k / x->npx / M];
		const struct lx_flow *f = &x->f[fi];

		mm->rate = 0;
		if (busy[fi] || avail <= 0)
			continue;
		busy[fi] = 1;
		mm->rate = fmin(f->np == 1 ? f->cap : f->cap * f->share[(uint32_t)k % x->npx],
				avail);
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

		x->whole[k] = (struct lx_whole){.first = INFINITY, .left = f->np};
		for (uint32_t j = 0; j < f->np; j++) {
			struct lx_server *sv = &x->sv[f->server[j]];
			int32_t q = (int32_t)(k * x->npx + j);
			struct lx_msg *mm = &x->msg[q];
			double bits = f->np == 1 ? f->bits : f->bits * f->share[j];

			lx_advance(x, sv, now);
			*mm = (struct lx_msg){.bits = bits, .rem = bits, .next = -1};
			if (sv->tail >= 0)
				x->msg[sv->tail].next = q;
			else
				sv->head = q;
			sv->tail = q;
			if ((rc = lx_schedule(x, d, (uint32_t)f->server[j])))
				return rc;
		}
		return 0;
	}
	/* LX_FIN */
	uint32_t s = (uint32_t)(tag >> 40 & ((1ull << 22) - 1));
	struct lx_server *sv = &x->sv[s];

	if ((tag & ((1ull << 40) - 1)) != (sv->version & ((1ull << 40) - 1)))
		return 0; /* superseded */
	lx_advance(x, sv, now);
	for (int32_t q = sv->head, prev = -1, next; q >= 0; q = next) {
		struct lx_msg *mm = &x->msg[q];
		uint32_t k = (uint32_t)q / x->npx, ch = k / M;
		const struct lx_flow *f = &x->f[x->fl.of_chan[ch]];
		struct lx_whole *wm = &x->whole[k];
		double extra, ta;

		next = mm->next;
		/* done: (almost) no bits left, or too few for the clock to move */
		if (mm->rate <= 0 ||
		    (mm->rem > 1e-9 * mm->bits && now + mm->rem / mm->rate > now)) {
			prev = q;
			continue;
		}
		/* done: unlink; the last part delivers the message with the
		 * model's loss recovery at the rate it got */
		if (prev >= 0)
			x->msg[prev].next = next;
		else
			sv->head = next;
		if (sv->tail == q)
			sv->tail = prev;
		wm->first = fmin(wm->first, mm->first);
		wm->done = now;
		wm->arrive = fmax(wm->arrive, now + f->pd_ab[(uint32_t)q % x->npx]);
		if (--wm->left)
			continue;
		rc = lx_loss_extra(x, f, now > wm->first ? f->bits / (now - wm->first) : f->cap,
				   &extra);
		if (rc)
			return rc;
		ta = wm->arrive + extra;
		rc = pipe_des_deliver(d, ch, k % M, f->link, (uint8_t)f->scheme.rel, wm->first, now,
				      ta, x->c->rel.rel == SDR_REL_NONE ? now : ta + f->d_ba,
				      extra);
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
	x->npx = 1;
	for (uint32_t i = 0; i < x->fl.n; i++) {
		uint32_t n = pipe_net_paths(x->net, x->fl.f[i].link);
		uint32_t p = lx_ports(c);

		x->npx = n < p ? (n > x->npx ? n : x->npx) : (p > x->npx ? p : x->npx);
	}
	x->msg = calloc((size_t)PIPE_NCHAN(c->stages) * c->micro * x->npx, sizeof(*x->msg));
	x->whole = calloc((size_t)PIPE_NCHAN(c->stages) * c->micro, sizeof(*x->whole));
	if (!x->msg || !x->whole) {
		rc = -ENOMEM;
		goto out;
	}
	if (rates && rates->n != x->fl.n) {
		rc = -EINVAL;
		goto out;
	}
	for (uint32_t s = 0; s < LX_SERVERS; s++) {
		uint32_t l = s / LX_NP, p = s % LX_NP;

		x->sv[s].head = x->sv[s].tail = -1;
		x->sv[s].cap = l < PIPE_NET_MAX_LINKS && l < x->net->nlinks &&
					       p < pipe_net_paths(x->net, (int)l) &&
					       x->net->link[l].path[p].rate_bps
				       ? (double)x->net->link[l].path[p].rate_bps
				       : INFINITY;
	}
	for (uint32_t i = 0; i < x->fl.n && !rc; i++)
		rc = lx_flow_setup(x, i, rates);
	if (!rc)
		rc = pipe_des_exec(c, p, 0, &xp, out);
out:
	free(x->whole);
	free(x->msg);
	free(x);
	return rc;
}

int pipe_des_run(const struct pipe_cfg *c, const struct pipe_prog *p, struct pipe_des_out *out)
{
	return pipe_des_run_rates(c, p, NULL, out);
}
