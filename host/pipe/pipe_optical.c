/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-pipe: the optical layer in simulation (pipe_optical.h): topology, K
 * shortest paths, first-fit spectrum, the RSA algorithms, and a pipeline's
 * transfers as lightpath requests among background traffic, run on the DES
 * engine of pipe_des.c as a transport.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipe_cba.h"
#include "pipe_optical.h"

/* ---------------- topology ---------------- */

void opt_topo_init(struct opt_topo *t, uint32_t nodes)
{
	memset(t, 0, sizeof(*t));
	t->nodes = nodes <= OPT_MAX_NODES ? nodes : OPT_MAX_NODES;
}

int opt_topo_add(struct opt_topo *t, uint32_t a, uint32_t b, double km)
{
	if (a >= t->nodes || b >= t->nodes || a == b || !(km > 0) || t->nlinks == OPT_MAX_LINKS)
		return -EINVAL;
	for (uint32_t l = 0; l < t->nlinks; l++)
		if ((t->a[l] == a && t->b[l] == b) || (t->a[l] == b && t->b[l] == a))
			return -EINVAL;
	t->a[t->nlinks] = (uint8_t)a;
	t->b[t->nlinks] = (uint8_t)b;
	t->km[t->nlinks] = km;
	return (int)t->nlinks++;
}

void opt_topo_nsfnet(struct opt_topo *t)
{
	/* the literature's 1-based node numbers and km */
	static const uint16_t e[22][3] = {
		{1, 2, 2100},  {1, 3, 3000},  {1, 8, 4800},  {2, 3, 1200},   {2, 4, 1500},
		{3, 6, 3600},  {4, 5, 1200},  {4, 11, 3900}, {5, 6, 2400},   {5, 7, 1200},
		{6, 10, 2100}, {6, 14, 3600}, {7, 8, 1500},  {7, 10, 2700},  {8, 9, 1500},
		{9, 10, 1500}, {9, 12, 600},  {9, 13, 600},  {11, 12, 1200}, {11, 13, 1500},
		{12, 14, 600}, {13, 14, 300},
	};

	opt_topo_init(t, 14);
	for (size_t i = 0; i < 22; i++)
		opt_topo_add(t, e[i][0] - 1u, e[i][1] - 1u, e[i][2]);
}

/* fibre from node u over link l */
static uint16_t fib_of(const struct opt_topo *t, uint32_t l, uint32_t u)
{
	return (uint16_t)(2 * l + (t->a[l] != u));
}

/* path a before b: length, then hops, then node sequence */
static int path_less(const struct opt_path *a, const struct opt_path *b)
{
	if (a->km != b->km)
		return a->km < b->km;
	if (a->hops != b->hops)
		return a->hops < b->hops;
	return memcmp(a->node, b->node, a->hops + 1) < 0;
}

static int path_same(const struct opt_path *a, const struct opt_path *b)
{
	return a->hops == b->hops && memcmp(a->node, b->node, a->hops + 1) == 0;
}

/* Dijkstra from src to dst avoiding banned nodes and banned fibres; ties by
 * hops, then the lower predecessor. @return 0 and the path, or -1. */
static int dijkstra(const struct opt_topo *t, uint32_t src, uint32_t dst, const uint8_t *ban_node,
		    const uint8_t *ban_fib, struct opt_path *out)
{
	double dist[OPT_MAX_NODES];
	uint32_t hops[OPT_MAX_NODES];
	int prev_l[OPT_MAX_NODES];
	uint8_t done[OPT_MAX_NODES] = {0};

	for (uint32_t v = 0; v < t->nodes; v++) {
		dist[v] = INFINITY;
		hops[v] = UINT32_MAX;
		prev_l[v] = -1;
	}
	dist[src] = 0;
	hops[src] = 0;
	for (;;) {
		int u = -1;

		for (uint32_t v = 0; v < t->nodes; v++)
			if (!done[v] && isfinite(dist[v]) &&
			    (u < 0 || dist[v] < dist[u] ||
			     (dist[v] == dist[u] && hops[v] < hops[u])))
				u = (int)v;
		if (u < 0)
			return -1;
		done[u] = 1;
		if ((uint32_t)u == dst)
			break;
		for (uint32_t l = 0; l < t->nlinks; l++) {
			uint32_t v;

			if (t->a[l] == u)
				v = t->b[l];
			else if (t->b[l] == u)
				v = t->a[l];
			else
				continue;
			if (done[v] || ban_node[v] || ban_fib[fib_of(t, l, (uint32_t)u)])
				continue;
			double d = dist[u] + t->km[l];

			if (d < dist[v] || (d == dist[v] && hops[u] + 1 < hops[v])) {
				dist[v] = d;
				hops[v] = hops[u] + 1;
				prev_l[v] = (int)l;
			}
		}
	}
	if (hops[dst] > OPT_MAX_HOPS)
		return -1;
	out->hops = hops[dst];
	out->km = dist[dst];
	for (uint32_t v = dst, i = out->hops; i > 0; i--) {
		uint32_t l = (uint32_t)prev_l[v], u = t->a[l] == v ? t->b[l] : t->a[l];

		out->node[i] = (uint8_t)v;
		out->fib[i - 1] = fib_of(t, l, u);
		v = u;
	}
	out->node[0] = (uint8_t)src;
	return 0;
}

int opt_ksp(const struct opt_topo *t, uint32_t src, uint32_t dst, uint32_t K, struct opt_path *out)
{
	struct opt_path B[OPT_MAX_K * OPT_MAX_HOPS + 1];
	uint32_t nA = 0, nB = 0;

	if (src >= t->nodes || dst >= t->nodes || src == dst || K == 0 || K > OPT_MAX_K)
		return -EINVAL;
	{
		uint8_t bn[OPT_MAX_NODES] = {0}, bf[OPT_MAX_FIBERS] = {0};

		if (dijkstra(t, src, dst, bn, bf, &out[0]))
			return 0;
		nA = 1;
	}
	while (nA < K) {
		const struct opt_path *last = &out[nA - 1];

		for (uint32_t i = 0; i < last->hops; i++) {
			uint8_t bn[OPT_MAX_NODES] = {0}, bf[OPT_MAX_FIBERS] = {0};
			struct opt_path spur, tot;

			/* edges leaving the spur node on paths with the same root */
			for (uint32_t j = 0; j < nA; j++)
				if (out[j].hops > i && memcmp(out[j].node, last->node, i + 1) == 0)
					bf[out[j].fib[i]] = 1;
			for (uint32_t j = 0; j < i; j++)
				bn[last->node[j]] = 1;
			if (dijkstra(t, last->node[i], dst, bn, bf, &spur) ||
			    i + spur.hops > OPT_MAX_HOPS)
				continue;
			tot.hops = i + spur.hops;
			tot.km = spur.km;
			for (uint32_t j = 0; j < i; j++) {
				tot.fib[j] = last->fib[j];
				tot.km += t->km[last->fib[j] / 2];
			}
			memcpy(tot.node, last->node, i + 1);
			memcpy(tot.node + i, spur.node, spur.hops + 1);
			memcpy(tot.fib + i, spur.fib, spur.hops * sizeof(tot.fib[0]));
			int dup = 0;

			for (uint32_t j = 0; j < nB && !dup; j++)
				dup = path_same(&B[j], &tot);
			for (uint32_t j = 0; j < nA && !dup; j++)
				dup = path_same(&out[j], &tot);
			if (!dup && nB < sizeof(B) / sizeof(B[0]))
				B[nB++] = tot;
		}
		if (nB == 0)
			break;
		uint32_t best = 0;

		for (uint32_t j = 1; j < nB; j++)
			if (path_less(&B[j], &B[best]))
				best = j;
		out[nA++] = B[best];
		B[best] = B[--nB];
	}
	return (int)nA;
}

/* ---------------- spectrum ---------------- */

void opt_spec_init(struct opt_spec *s, uint32_t nfib, uint32_t nfs)
{
	memset(s, 0, sizeof(*s));
	s->nfib = nfib;
	s->nfs = nfs <= OPT_MAX_FS ? nfs : OPT_MAX_FS;
}

static int slot_used(const uint64_t *w, uint32_t j)
{
	return (int)(w[j >> 6] >> (j & 63) & 1);
}

int opt_first_fit(const struct opt_spec *s, const struct opt_path *p, uint32_t width)
{
	uint64_t w[2] = {0, 0};
	uint32_t run = 0;

	if (width == 0 || width > s->nfs)
		return -1;
	for (uint32_t h = 0; h < p->hops; h++) {
		w[0] |= s->used[p->fib[h]][0];
		w[1] |= s->used[p->fib[h]][1];
	}
	for (uint32_t j = 0; j < s->nfs; j++) {
		run = slot_used(w, j) ? 0 : run + 1;
		if (run == width)
			return (int)(j + 1 - width);
	}
	return -1;
}

void opt_spec_set(struct opt_spec *s, const struct opt_path *p, uint32_t start, uint32_t width,
		  int on)
{
	for (uint32_t h = 0; h < p->hops; h++)
		for (uint32_t j = start; j < start + width && j < s->nfs; j++) {
			uint64_t bit = 1ull << (j & 63);

			if (on)
				s->used[p->fib[h]][j >> 6] |= bit;
			else
				s->used[p->fib[h]][j >> 6] &= ~bit;
		}
}

uint32_t opt_spec_count(const struct opt_spec *s, uint32_t f)
{
	return (uint32_t)(__builtin_popcountll(s->used[f][0]) +
			  __builtin_popcountll(s->used[f][1]));
}

static const char *const alg_names[OPT_ALG_COUNT] = {"ksp-ff", "sd-ff", "cd"};

const char *opt_alg_name(enum opt_alg a)
{
	return (unsigned)a < OPT_ALG_COUNT ? alg_names[a] : "?";
}

int opt_alg_parse(const char *s, enum opt_alg *a)
{
	for (int i = 0; i < OPT_ALG_COUNT; i++)
		if (strcmp(s, alg_names[i]) == 0) {
			*a = (enum opt_alg)i;
			return 0;
		}
	return -EINVAL;
}

/* CD's cost of path p with the block at start: length over the shortest
 * candidate's, plus the mean slot use of its fibres (congestion), plus the
 * share of the block's neighbour slots that are free (a block that fills a
 * hole between used slots, or sits at a band edge, fragments less) */
static double cd_cost(const struct opt_spec *s, const struct opt_path *p, double km0,
		      uint32_t start, uint32_t width)
{
	uint32_t used = 0, free_nb = 0;

	for (uint32_t h = 0; h < p->hops; h++) {
		const uint64_t *w = s->used[p->fib[h]];

		used += opt_spec_count(s, p->fib[h]);
		if (start > 0 && !slot_used(w, start - 1))
			free_nb++;
		if (start + width < s->nfs && !slot_used(w, start + width))
			free_nb++;
	}
	return p->km / km0 + (double)used / ((double)p->hops * s->nfs) +
	       (double)free_nb / (2.0 * p->hops);
}

int opt_rsa(const struct opt_spec *s, enum opt_alg alg, const struct opt_path *cands, uint32_t n,
	    uint32_t width, uint32_t *start)
{
	int best = -1;
	double best_cost = INFINITY;

	if (alg == OPT_SD_FF)
		n = n ? 1 : 0;
	for (uint32_t k = 0; k < n; k++) {
		int st = opt_first_fit(s, &cands[k], width);

		if (st < 0)
			continue;
		if (alg != OPT_CD) {
			*start = (uint32_t)st;
			return (int)k;
		}
		double c = cd_cost(s, &cands[k], cands[0].km, (uint32_t)st, width);

		if (c < best_cost) {
			best_cost = c;
			best = (int)k;
			*start = (uint32_t)st;
		}
	}
	return best;
}

/* ---------------- the pipeline over the optical network ---------------- */

void opt_cfg_default(struct opt_cfg *oc)
{
	/* sites along the continent, west to east: the literature's nodes
	 * 2 (CA1), 4 (UT), 7 (NE), 8 (IL), 9 (PA), 13 (NJ) */
	static const uint32_t sites[6] = {1, 3, 6, 7, 8, 12};

	memset(oc, 0, sizeof(*oc));
	opt_topo_nsfnet(&oc->topo);
	oc->nfs = 80;
	oc->fs_bps = 75e9;
	oc->guard = 1;
	oc->K = 4;
	oc->s_per_km = 5e-6;
	oc->setup = 0;
	memcpy(oc->dc_node, sites, sizeof(sites));
	oc->alg = OPT_KSP_FF;
	oc->fs_init = 0;
	oc->fs_min = 1;
	oc->fs_max = 6;
	oc->fs_step = 1;
	oc->intra_lat = 1e-4;
	oc->blocked = OPT_BLOCKED_WAIT;
	oc->bg_prob = 0.95;
	oc->bg_count = 60;
	oc->bg_every = 1;
	oc->bg_fs_min = 4;
	oc->bg_fs_max = 20;
	oc->bg_hold = 0.2;
	oc->seed = 1;
}

/* splitmix64: one stream per purpose, reproducible from the seed */
static uint64_t rng_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double rng_unit(uint64_t *s) /* [0, 1) */
{
	return (double)(rng_next(s) >> 11) * 0x1.0p-53;
}

static uint32_t rng_range(uint64_t *s, uint32_t lo, uint32_t hi) /* [lo, hi] */
{
	return lo + (uint32_t)(rng_unit(s) * (hi - lo + 1));
}

/* a held lightpath, released at t */
struct lp {
	double t;
	struct opt_path p; /* only hops and fib are used */
	uint8_t start, width;
};

struct lpheap {
	struct lp *v;
	size_t n, cap;
};

static int lp_push(struct lpheap *h, const struct lp *x)
{
	if (h->n == h->cap) {
		size_t nc = h->cap ? 2 * h->cap : 1024;
		struct lp *nv = realloc(h->v, nc * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		h->v = nv;
		h->cap = nc;
	}
	size_t i = h->n++;

	h->v[i] = *x;
	while (i > 0 && h->v[i].t < h->v[(i - 1) / 2].t) {
		struct lp tmp = h->v[i];

		h->v[i] = h->v[(i - 1) / 2];
		h->v[(i - 1) / 2] = tmp;
		i = (i - 1) / 2;
	}
	return 0;
}

static void lp_pop(struct lpheap *h)
{
	size_t i = 0;

	h->v[0] = h->v[--h->n];
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;

		if (l < h->n && h->v[l].t < h->v[m].t)
			m = l;
		if (r < h->n && h->v[r].t < h->v[m].t)
			m = r;
		if (m == i)
			break;
		struct lp tmp = h->v[i];

		h->v[i] = h->v[m];
		h->v[m] = tmp;
		i = m;
	}
}

struct ochan {
	uint16_t q[PIPE_MAX_MICRO]; /* micro-batches ready to send, FIFO */
	uint32_t qh, qn;
	double busy_until;   /* the transfer on the wire until then */
	uint8_t busy, tried; /* head: requested once already */
	uint8_t low;         /* head: retry at fs_min (OPT_BLOCKED_MIN) */
	double blocked_since;
};

struct osim {
	const struct opt_cfg *oc;
	const struct pipe_cfg *pc;
	struct opt_spec spec;
	struct lpheap held;
	/* the K shortest paths of every node pair: the background's, and
	 * (between the DCs' nodes) the pipeline's */
	struct opt_path (*all)[OPT_MAX_NODES][OPT_MAX_K];
	uint8_t nall[OPT_MAX_NODES][OPT_MAX_NODES];
	struct ochan ch[2 * PIPE_MAX_STAGES];
	uint8_t *fs;      /* per request (chan * M + m): slots asked this iteration */
	uint8_t *blocked; /* per request: blocked at the first request this iteration */
	uint64_t rng_bg, rng_ev, rng_fs;
	uint32_t events;     /* first requests so far, for bg_every */
	struct opt_iter *it; /* this iteration's counters */
	double fs_sum;
	uint32_t fs_n;
};

/* release every lightpath that ended by t */
static void release_until(struct osim *o, double t)
{
	while (o->held.n && o->held.v[0].t <= t) {
		struct lp *x = &o->held.v[0];

		opt_spec_set(&o->spec, &x->p, x->start, x->width, 0);
		lp_pop(&o->held);
	}
}

static int hold(struct osim *o, const struct opt_path *p, uint32_t start, uint32_t width,
		double until)
{
	struct lp x = {.t = until, .start = (uint8_t)start, .width = (uint8_t)width};

	x.p.hops = p->hops;
	memcpy(x.p.fib, p->fib, p->hops * sizeof(p->fib[0]));
	opt_spec_set(&o->spec, p, start, width, 1);
	return lp_push(&o->held, &x);
}

/* one burst of background requests at time t */
static int background(struct osim *o, double t)
{
	const struct opt_cfg *oc = o->oc;
	uint32_t N = oc->topo.nodes;

	if (rng_unit(&o->rng_ev) >= oc->bg_prob)
		return 0;
	for (uint32_t i = 0; i < oc->bg_count; i++) {
		uint32_t s = rng_range(&o->rng_bg, 0, N - 1), d = rng_range(&o->rng_bg, 0, N - 2);
		uint32_t w = rng_range(&o->rng_bg, oc->bg_fs_min, oc->bg_fs_max) + oc->guard, start;
		double h = -log1p(-rng_unit(&o->rng_bg)) * oc->bg_hold;
		const struct opt_path *c;
		int n, k;

		d += d >= s; /* uniform over d != s */
		c = o->all[s][d];
		n = o->nall[s][d];
		o->it->bg_req++;
		k = n > 0 ? opt_rsa(&o->spec, oc->bg_same_alg ? oc->alg : OPT_KSP_FF, c,
				    (uint32_t)n, w, &start)
			  : -1;
		if (k < 0) {
			o->it->bg_blocked++;
			continue;
		}
		int rc = hold(o, &c[k], start, w, t + h);

		if (rc)
			return rc;
	}
	return 0;
}

#define OT_CHAN 0ull /* tag: (kind << 60) | channel */

/* try to start the head transfer of channel chn at now */
static int chan_try(struct osim *o, struct pipe_des *d, uint32_t chn)
{
	const struct opt_cfg *oc = o->oc;
	const struct pipe_cfg *pc = o->pc;
	struct ochan *q = &o->ch[chn];
	double now = pipe_des_now(d), bits, t_start, t_end;
	uint32_t M = pc->micro, a, b, m, n, start = 0, ncands;
	const struct opt_path *cands;
	int k, rc, first, event;

	if (q->busy || q->qn == 0)
		return 0;
	m = q->q[q->qh];
	a = oc->dc_node[pc->dc_of[pipe_ch_src(chn)]];
	b = oc->dc_node[pc->dc_of[pipe_ch_dst(chn)]];
	cands = o->all[a][b];
	ncands = o->nall[a][b];
	bits = (double)(pipe_ch_bytes(pc, chn) * 8);
	release_until(o, now);
	first = !q->tried;
	event = first && o->events++ % oc->bg_every == 0; /* a PP event */
	if (event && oc->bg_first && (rc = background(o, now)))
		return rc;
	n = q->low ? oc->fs_min : o->fs[chn * M + m];
	k = opt_rsa(&o->spec, oc->alg, cands, ncands, n + oc->guard, &start);
	if (k < 0 && oc->blocked == OPT_BLOCKED_MIN && n > oc->fs_min) {
		n = oc->fs_min;
		q->low = 1;
		k = opt_rsa(&o->spec, oc->alg, cands, ncands, n + oc->guard, &start);
	}
	if (first) {
		o->it->pp_req++;
		if (k < 0) {
			o->it->pp_blocked++;
			o->blocked[chn * M + m] = 1;
			q->blocked_since = now;
		}
	} else {
		o->it->pp_retries++;
	}
	q->tried = 1;
	t_start = now + oc->setup;
	t_end = t_start + bits / ((double)n * oc->fs_bps);
	/* the lightpath is held until the last bit arrived */
	if (k >= 0 &&
	    (rc = hold(o, &cands[k], start, n + oc->guard, t_end + cands[k].km * oc->s_per_km)))
		return rc;
	/* the burst comes right after the request that caused it */
	if (event && !oc->bg_first && (rc = background(o, now)))
		return rc;
	if (k < 0) {
		/* retry after a fixed time, or at the next release anywhere */
		if (oc->retry > 0)
			return pipe_des_timer(d, now + oc->retry, OT_CHAN << 60 | chn);
		if (o->held.n == 0)
			return -EINVAL; /* nothing will ever free a slot: too wide */
		return pipe_des_timer(d, o->held.v[0].t, OT_CHAN << 60 | chn);
	}
	if (!first)
		o->it->wait_blocked += now - q->blocked_since;
	o->fs_sum += n;
	o->fs_n++;
	q->busy = 1;
	q->busy_until = t_end;
	q->tried = 0;
	q->low = 0;
	q->qh = (q->qh + 1) % PIPE_MAX_MICRO;
	q->qn--;
	if ((rc = pipe_des_deliver(d, chn, m, -1, 0, t_start, t_end,
				   t_end + cands[k].km * oc->s_per_km, t_end, 0)))
		return rc;
	return pipe_des_timer(d, t_end, OT_CHAN << 60 | chn);
}

static int o_post(void *ctx, struct pipe_des *d, uint32_t chn, uint32_t m, double t_send,
		  double t_recv)
{
	struct osim *o = ctx;
	struct ochan *q = &o->ch[chn];

	(void)t_send;
	(void)t_recv;
	q->q[(q->qh + q->qn) % PIPE_MAX_MICRO] = (uint16_t)m;
	/* a channel that is sending, or whose head waits for a release, has
	 * its timer already */
	if (q->qn++ == 0 && !q->busy)
		return chan_try(o, d, chn);
	return 0;
}

static int o_timer(void *ctx, struct pipe_des *d, uint64_t tag)
{
	struct osim *o = ctx;
	uint32_t chn = (uint32_t)(tag & 0xffff);
	struct ochan *q = &o->ch[chn];

	if (q->busy && pipe_des_now(d) >= q->busy_until)
		q->busy = 0;
	return chan_try(o, d, chn);
}

int opt_run(const struct opt_cfg *oc, const struct pipe_cfg *pc, const struct pipe_prog *prog,
	    uint32_t iters, struct opt_iter *out)
{
	uint32_t M = pc->micro, nreq = PIPE_NCHAN(pc->stages) * M;
	struct osim *o = calloc(1, sizeof(*o));
	struct pipe_cba_label *lab = calloc(nreq, sizeof(*lab));
	struct pipe_xport xp = {.post = o_post, .timer = o_timer};
	double t0 = 0;
	int rc = 0;

	if (!o || !lab) {
		rc = -ENOMEM;
		goto out;
	}
	xp.ctx = o;
	o->oc = oc;
	o->pc = pc;
	o->fs = malloc(nreq);
	o->blocked = calloc(nreq, 1);
	if (!o->fs || !o->blocked) {
		rc = -ENOMEM;
		goto out;
	}
	if (oc->fs_min < 1 || oc->fs_min > oc->fs_max ||
	    (oc->fs_init && (oc->fs_init < oc->fs_min || oc->fs_init > oc->fs_max)) ||
	    oc->fs_max + oc->guard > oc->nfs || oc->nfs > OPT_MAX_FS || oc->fs_step < 1 ||
	    oc->K < 1 || oc->K > OPT_MAX_K || oc->bg_every < 1 || oc->bg_fs_min < 1 ||
	    oc->bg_fs_min > oc->bg_fs_max || !(oc->fs_bps > 0) ||
	    !(oc->bg_prob >= 0 && oc->bg_prob <= 1) || !(oc->bg_hold > 0) || !(oc->retry >= 0)) {
		rc = -EINVAL;
		goto out;
	}
	o->rng_fs = oc->seed * 0x2545f4914f6cdd1dull + 3;
	o->all = calloc(OPT_MAX_NODES, sizeof(*o->all));
	if (!o->all) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t a = 0; a < oc->topo.nodes; a++)
		for (uint32_t b = 0; b < oc->topo.nodes; b++) {
			int n = a == b ? 0 : opt_ksp(&oc->topo, a, b, oc->K, o->all[a][b]);

			o->nall[a][b] = (uint8_t)(n > 0 ? n : 0);
		}
	opt_spec_init(&o->spec, 2 * oc->topo.nlinks, oc->nfs);
	o->rng_bg = oc->seed * 0x9e3779b97f4a7c15ull + 1;
	o->rng_ev = oc->seed * 0xd1b54a32d192ed03ull + 2;
	for (uint32_t a = 0; a < pc->dcs; a++)
		for (uint32_t b = 0; b < pc->dcs; b++) {
			if (a == b)
				continue;
			if (oc->dc_node[a] >= oc->topo.nodes || oc->dc_node[b] >= oc->topo.nodes ||
			    oc->dc_node[a] == oc->dc_node[b] ||
			    !o->nall[oc->dc_node[a]][oc->dc_node[b]]) {
				rc = -EINVAL;
				goto out;
			}
		}
	for (uint32_t i = 0; i < iters && !rc; i++) {
		struct pipe_des_out ev;
		struct pipe_metrics m;
		int ncb;

		memset(&out[i], 0, sizeof(out[i]));
		/* slots per request: fixed, or drawn per request (every iteration
		 * without CBA; once, then the rule, with it) */
		if (i == 0 || !oc->cba)
			for (uint32_t r = 0; r < nreq; r++)
				o->fs[r] = (uint8_t)(oc->fs_init ? oc->fs_init
								 : rng_range(&o->rng_fs, oc->fs_min,
									     oc->fs_max));
		memset(o->ch, 0, sizeof(o->ch));
		memset(o->blocked, 0, nreq);
		o->it = &out[i];
		o->fs_sum = 0;
		o->fs_n = 0;
		rc = pipe_des_exec(pc, prog, t0, &xp, &ev);
		if (rc)
			break;
		pipe_metrics_get(pc, &ev.ev, 0, &m);
		out[i].iter_time = m.iter_time;
		out[i].bubble = m.bubble_all;
		out[i].fs_mean = o->fs_n ? o->fs_sum / o->fs_n : 0;
		ncb = pipe_cba_label(pc, &ev.ev, 0, oc->intra_lat, lab);
		pipe_des_free(&ev);
		if (ncb < 0) {
			rc = ncb;
			break;
		}
		out[i].ncb = (uint32_t)ncb;
		/* the next iteration's slots per request: the CBA rule */
		for (uint32_t r = 0; r < nreq && oc->cba; r++)
			if (lab[r].cross)
				o->fs[r] = (uint8_t)pipe_cba_rule(o->fs[r], o->blocked[r],
								  lab[r].cb, oc->fs_step,
								  oc->fs_min, oc->fs_max);
		/* the next iteration starts when this one ended (a barrier) */
		t0 += m.iter_time;
	}
out:
	if (o) {
		free(o->held.v);
		free(o->all);
		free(o->fs);
		free(o->blocked);
	}
	free(o);
	free(lab);
	return rc;
}
