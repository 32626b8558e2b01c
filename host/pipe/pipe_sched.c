/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-pipe: configuration, schedules (per-stage compute orders) and their
 * compilation to per-stage programs of compute / post / wait instructions.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pipe.h"
#include "pipe_net.h"
#include "sdr_wire.h"

static const char *const sched_names[PIPE_SCHED_COUNT] = {"gpipe", "1f1b", "geopipe", "greedy"};

const char *pipe_sched_name(enum pipe_sched s)
{
	return (unsigned)s < PIPE_SCHED_COUNT ? sched_names[s] : "?";
}

int pipe_sched_parse(const char *s, enum pipe_sched *out)
{
	for (int i = 0; i < PIPE_SCHED_COUNT; i++)
		if (strcmp(s, sched_names[i]) == 0) {
			*out = (enum pipe_sched)i;
			return 0;
		}
	return -EINVAL;
}

double pipe_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void pipe_cfg_init(struct pipe_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->stages = 4;
	c->micro = 8;
	for (uint32_t s = 0; s < PIPE_MAX_STAGES; s++)
		c->dc_of[s] = s >= 2;
	c->tf = 0.0125;
	c->tb = 0.025;
	c->act_bytes = c->grad_bytes = 256 * 1024;
	c->rtt = 0.025;
	c->rate_bps = 900000000ull;
	c->mtu = 4096;
	c->chunk_bytes = 16 * 4096;                          /* sdr-dpu's default --chunk-pkts 16 */
	c->frame_overhead = sdr_wire_data_frame_bytes(0, 1); /* headers + ICRC: 78 */
	c->sched = PIPE_SCHED_1F1B;
	c->comm = PIPE_COMM_DEFAULT;
	c->delta_n = UINT32_MAX;
	c->rel = (struct sdr_scheme){SDR_REL_NONE, 0, 0, 0};
}

int pipe_cfg_finish(struct pipe_cfg *c)
{
	if (c->stages < 2 || c->stages > PIPE_MAX_STAGES || c->micro < 1 ||
	    c->micro > PIPE_MAX_MICRO)
		return -EINVAL;
	if (pipe_place_check(c->dc_of, c->stages, &c->dcs))
		return -EINVAL;
	if (c->net && c->net->dcs < c->dcs)
		return -EINVAL;
	for (uint32_t s = 0; s < c->stages; s++)
		if (!isfinite(c->tf_stage[s]) || !isfinite(c->tb_stage[s]) || c->tf_stage[s] < 0 ||
		    c->tb_stage[s] < 0 || c->tf_stage[s] > 60 || c->tb_stage[s] > 60)
			return -EINVAL;
	if (!isfinite(c->tf) || !isfinite(c->tb) || c->tf <= 0 || c->tb <= 0 || c->tf > 60 ||
	    c->tb > 60 || !isfinite(c->rtt) || c->rtt < 0 || c->rtt > 10 || !(c->loss >= 0) ||
	    !(c->loss < 1))
		return -EINVAL;
	if (c->act_bytes < PIPE_HDR_BYTES || c->grad_bytes < PIPE_HDR_BYTES ||
	    c->act_bytes > (1u << 30) || c->grad_bytes > (1u << 30) || c->rate_bps == 0 ||
	    c->mtu < 256 || c->mtu > 9000 || c->frame_overhead > 1024 || c->chunk_bytes < 1 ||
	    c->chunk_bytes > (1u << 30) || c->paths > PIPE_PATHS_MAX)
		return -EINVAL;
	if ((unsigned)c->sched >= PIPE_SCHED_COUNT)
		return -EINVAL;
	if (c->comm == PIPE_COMM_DEFAULT)
		c->comm = c->sched == PIPE_SCHED_GPIPE || c->sched == PIPE_SCHED_1F1B
				  ? PIPE_COMM_BLOCKING
				  : PIPE_COMM_NONBLOCKING;
	if (c->comm != PIPE_COMM_BLOCKING && c->comm != PIPE_COMM_NONBLOCKING)
		return -EINVAL;
	/* batched blocking communication points deadlock on orders that are
	 * not 1F1B-symmetric (extra warm-ups, greedy): those are non-blocking
	 * by construction */
	if (c->comm == PIPE_COMM_BLOCKING &&
	    (c->sched == PIPE_SCHED_GEOPIPE || c->sched == PIPE_SCHED_GREEDY))
		return -EINVAL;
	if (sdr_scheme_check(&c->rel, 0))
		return -EINVAL;
	return 0;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

uint64_t pipe_cfg_digest(const struct pipe_cfg *c)
{
	uint64_t h = 0x5344522d50495045ull;

	h = mix(h, c->stages);
	h = mix(h, c->micro);
	for (uint32_t s = 0; s < c->stages; s++)
		h = mix(h, c->dc_of[s]);
	h = mix(h, (uint64_t)llround(c->tf * 1e9));
	h = mix(h, (uint64_t)llround(c->tb * 1e9));
	h = mix(h, c->act_bytes);
	h = mix(h, c->grad_bytes);
	h = mix(h, (uint64_t)llround(c->rtt * 1e9));
	h = mix(h, c->rate_bps);
	h = mix(h, c->mtu);
	h = mix(h, c->frame_overhead);
	h = mix(h, c->sched);
	h = mix(h, c->comm);
	h = mix(h, c->delta_n);
	if (c->delta_n == PIPE_DELTA_STAGE)
		for (uint32_t s = 0; s < c->stages; s++)
			h = mix(h, c->delta_stage[s]);
	h = mix(h, c->mem_budget);
	h = mix(h, c->rel.rel);
	h = mix(h, c->rel.code);
	h = mix(h, c->rel.k);
	h = mix(h, c->rel.m);
	for (uint32_t s = 0; s < c->stages; s++) /* per-stage times, when set */
		if (c->tf_stage[s] > 0 || c->tb_stage[s] > 0)
			h = mix(mix(h, (uint64_t)llround(pipe_tf(c, s) * 1e9)),
				(uint64_t)llround(pipe_tb(c, s) * 1e9));
	/* absent before: two-DC digests without a net or loss are unchanged */
	if (c->net)
		h = mix(h, pipe_net_digest(c->net));
	else if (c->loss > 0)
		h = mix(h, (uint64_t)llround(c->loss * 1e15));
	return h;
}

uint32_t pipe_stage_budget(const struct pipe_cfg *c, uint32_t s)
{
	(void)s;
	if (c->mem_budget)
		return c->mem_budget;
	/* default: greedy gets 1F1B's peak (stage 0: S), GeoPipe is bounded
	 * only by its dN */
	return c->sched == PIPE_SCHED_GREEDY ? c->stages : c->micro;
}

/* in-flight activations of plain 1F1B at stage s */
static uint32_t peak_1f1b(const struct pipe_cfg *c, uint32_t s)
{
	uint32_t w = c->stages - s;

	return w < c->micro ? w : c->micro;
}

/* seconds a message of @p bytes takes on the link from DC a to DC b */
static double xfer_time(const struct pipe_cfg *c, const struct pipe_net *net, uint32_t a,
			uint32_t b, uint64_t bytes)
{
	uint64_t r = pipe_net_rate(net, pipe_net_lookup(net, a, b));

	return (double)pipe_wire_bytes(c, bytes) * 8 / (double)(r ? r : c->rate_bps);
}

/* the loop delay crossing x | x+1 adds to a 1F1B cycle: the round trip and
 * both transfers (activation there, gradient back) */
static double crossing_delay(const struct pipe_cfg *c, const struct pipe_net *net, uint32_t x)
{
	uint32_t a = c->dc_of[x], b = c->dc_of[x + 1];

	return pipe_net_delay(net, a, b) + pipe_net_delay(net, b, a) +
	       xfer_time(c, net, a, b, c->act_bytes) + xfer_time(c, net, b, a, c->grad_bytes);
}

/* extra forwards the budget and M leave stage s over 1F1B's own peak, if
 * any crossing is downstream (k of them, loop delay extra) */
static uint32_t delta_room(const struct pipe_cfg *c, const struct pipe_net *net, uint32_t s,
			   uint32_t *k, double *extra)
{
	uint32_t b = pipe_stage_budget(c, s), p = peak_1f1b(c, s), d;

	/* extra forwards only help a stage whose gradients come back over a
	 * cross-DC link: k = cross-DC boundaries downstream of s */
	*k = 0;
	*extra = 0;
	for (uint32_t x = s; x + 1 < c->stages; x++)
		if (c->dc_of[x] != c->dc_of[x + 1]) {
			(*k)++;
			if (net)
				*extra += crossing_delay(c, net, x);
		}
	if (*k == 0)
		return 0;
	d = b > p ? b - p : 0;
	if (p + d > c->micro) /* cannot warm up more than M */
		d = c->micro - p;
	return d;
}

uint32_t pipe_stage_delta_max(const struct pipe_cfg *c, uint32_t s)
{
	uint32_t k;
	double extra;

	return delta_room(c, NULL, s, &k, &extra);
}

/* extra forwards stage s wants and may have, before the monotone clamp */
static uint32_t delta_cap(const struct pipe_cfg *c, const struct pipe_net *net, uint32_t s)
{
	uint32_t k, d;
	double extra;
	uint32_t room = delta_room(c, net, s, &k, &extra);

	if (k == 0)
		return 0;
	if (c->delta_n == UINT32_MAX) {
		/* auto: cover the extra loop delay (rtt plus both transfers per
		 * crossing) with whole 1F1B cycles of tf + tb */
		d = (uint32_t)ceil(extra / (pipe_tf(c, s) + pipe_tb(c, s)) - 0.05);
	} else if (c->delta_n == PIPE_DELTA_STAGE) {
		d = c->delta_stage[s];
	} else {
		d = c->delta_n;
	}
	return d < room ? d : room;
}

uint32_t pipe_stage_delta(const struct pipe_cfg *c, uint32_t s)
{
	/* stage s can only run F(m + w_s) before B(m) if stage s-1 ran it
	 * before needing B(m): dN must not grow downstream */
	struct pipe_net tmp;
	/* (only the closed form reads the links: the default network is not
	 * built for the others) */
	const struct pipe_net *net = c->delta_n == UINT32_MAX ? pipe_net_of(c, &tmp) : NULL;
	uint32_t d = delta_cap(c, net, 0);

	for (uint32_t x = 1; x <= s; x++) {
		uint32_t e = delta_cap(c, net, x);

		if (e < d)
			d = e;
	}
	return d;
}

int pipe_rel_parse(const char *s, struct sdr_scheme *r)
{
	static const struct sdr_scheme ec_default = SDR_SCHEME_EC_DEFAULT;

	return sdr_scheme_parse(s, 0, &ec_default, r);
}

const char *pipe_rel_format(const struct sdr_scheme *r, char *buf, size_t len)
{
	if (sdr_scheme_format(r, SDR_SCHEME_EC_PREFIX, buf, len) < 0)
		snprintf(buf, len, "?");
	return buf;
}

int pipe_place_check(const uint8_t *dc_of, uint32_t stages, uint32_t *dcs)
{
	uint32_t used = 0, d = 0;

	for (uint32_t s = 0; s < stages; s++) {
		if (dc_of[s] >= PIPE_MAX_DC)
			return -EINVAL;
		used |= 1u << dc_of[s];
		if (dc_of[s] + 1u > d)
			d = dc_of[s] + 1u;
	}
	/* DCs are numbered densely: no DC without a stage below the highest
	 * (one DC: a pipeline without cross-DC traffic) */
	if (d < 1 || used != (1u << d) - 1)
		return -EINVAL;
	if (dcs)
		*dcs = d;
	return 0;
}

int pipe_place_parse(const char *s, struct pipe_cfg *c)
{
	unsigned v[PIPE_MAX_STAGES];
	uint8_t dc[PIPE_MAX_STAGES];
	uint32_t n = 0;
	const char *p = s;

	while (*p) {
		char *end;
		unsigned long x;

		if (*p < '0' || *p > '9')
			return -EINVAL;
		x = strtoul(p, &end, 10);
		if (end == p || n >= PIPE_MAX_STAGES || x > PIPE_MAX_STAGES)
			return -EINVAL;
		v[n++] = (unsigned)x;
		if (*end == ',' && end[1])
			end++;
		else if (*end)
			return -EINVAL;
		p = end;
	}
	if (n == 0)
		return -EINVAL;
	if (n == 2) { /* stages per DC: "A,B" */
		uint32_t s0 = v[0], s1 = v[1];

		if (s0 == 0 || s1 == 0 || s0 + s1 > PIPE_MAX_STAGES)
			return -EINVAL;
		/* "1,1" is ambiguous only for S = 2 where both readings agree */
		c->stages = s0 + s1;
		for (uint32_t i = 0; i < c->stages; i++)
			c->dc_of[i] = i >= s0;
		return 0;
	}
	for (uint32_t i = 0; i < n; i++) {
		if (v[i] >= PIPE_MAX_DC)
			return -EINVAL;
		dc[i] = (uint8_t)v[i];
	}
	if (pipe_place_check(dc, n, NULL))
		return -EINVAL;
	c->stages = n;
	memcpy(c->dc_of, dc, n);
	return 0;
}

/* ---------------- orders ---------------- */

static void order_1f1b(const struct pipe_cfg *c, struct pipe_order *o, int extra)
{
	uint32_t S = c->stages, M = c->micro;

	for (uint32_t s = 0; s < S; s++) {
		uint32_t w = peak_1f1b(c, s) - 1, n = 0, f = 0, b = 0;

		if (extra)
			w += pipe_stage_delta(c, s);
		if (w > M)
			w = M;
		while (f < w)
			o->ops[s][n++] = PIPE_OP(f++, PIPE_F);
		while (f < M) {
			o->ops[s][n++] = PIPE_OP(f++, PIPE_F);
			o->ops[s][n++] = PIPE_OP(b++, PIPE_B);
		}
		while (b < M)
			o->ops[s][n++] = PIPE_OP(b++, PIPE_B);
		o->n[s] = n;
	}
}

static void order_gpipe(const struct pipe_cfg *c, struct pipe_order *o)
{
	for (uint32_t s = 0; s < c->stages; s++) {
		uint32_t n = 0;

		for (uint32_t m = 0; m < c->micro; m++)
			o->ops[s][n++] = PIPE_OP(m, PIPE_F);
		for (uint32_t m = 0; m < c->micro; m++)
			o->ops[s][n++] = PIPE_OP(m, PIPE_B);
		o->n[s] = n;
	}
}

uint64_t pipe_wire_bytes(const struct pipe_cfg *c, uint64_t payload)
{
	uint64_t pkts = (payload + c->mtu - 1) / c->mtu;

	return payload + pkts * c->frame_overhead;
}

/* Range-based occupancy of one link direction: sorted busy intervals. */
struct occ {
	double *a, *b;
	size_t n, cap;
};

static int occ_reserve(struct occ *l, double ready, double dur, double *start)
{
	double t = ready;
	size_t i = 0;

	while (i < l->n && l->b[i] <= t)
		i++;
	/* first gap at or after t of length dur */
	for (; i < l->n; i++) {
		if (l->a[i] >= t + dur)
			break;
		if (l->b[i] > t)
			t = l->b[i];
	}
	if (l->n == l->cap) {
		size_t nc = l->cap ? 2 * l->cap : 64;
		double *na = realloc(l->a, nc * sizeof(double)), *nb;

		if (!na)
			return -ENOMEM;
		l->a = na;
		nb = realloc(l->b, nc * sizeof(double));
		if (!nb)
			return -ENOMEM;
		l->b = nb;
		l->cap = nc;
	}
	memmove(l->a + i + 1, l->a + i, (l->n - i) * sizeof(double));
	memmove(l->b + i + 1, l->b + i, (l->n - i) * sizeof(double));
	l->a[i] = t;
	l->b[i] = t + dur;
	l->n++;
	*start = t;
	return 0;
}

/*
 * CrossPipe-style greedy list scheduler (without sub-blocks and without a
 * separate W): repeatedly take the stage with the earliest time at which it
 * can start a ready operation; among its operations ready at that time,
 * prefer F during warm-up (no B done yet), then alternate F and B; F is not
 * ready while the stage holds its activation budget. A finished operation
 * releases its successor at end + link transfer (earliest free window of the
 * link direction, range-based occupancy) + rtt/2 when the boundary crosses
 * DCs, at end otherwise.
 */
static int order_greedy(const struct pipe_cfg *c, struct pipe_order *o)
{
	uint32_t S = c->stages, M = c->micro;
	static const double eps = 1e-12;
	double *act = calloc((size_t)S * M, sizeof(double));
	double *grad = calloc((size_t)S * M, sizeof(double));
	double free_t[PIPE_MAX_STAGES] = {0};
	uint32_t nf[PIPE_MAX_STAGES] = {0}, nb[PIPE_MAX_STAGES] = {0};
	int last[PIPE_MAX_STAGES];
	struct occ link[PIPE_NET_MAX_LINKS] = {{0}};
	struct pipe_net tmp;
	const struct pipe_net *net = pipe_net_of(c, &tmp);
	int rc = 0;

	if (!act || !grad) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t s = 0; s < S; s++) {
		last[s] = -1;
		o->n[s] = 0;
	}
	for (uint32_t done = 0; done < 2 * S * M; done++) {
		double best = INFINITY, tF = 0, tB = 0;
		int bs = -1, okF = 0, okB = 0;

		for (uint32_t s = 0; s < S; s++) {
			int f = nf[s] < M && nf[s] - nb[s] < pipe_stage_budget(c, s) &&
				(s == 0 || nf[s - 1] > nf[s]);
			int b = nb[s] < nf[s] && (s == S - 1 || nb[s + 1] > nb[s]);
			double a = INFINITY, bt = INFINITY;

			if (f)
				a = fmax(free_t[s], s ? act[s * M + nf[s]] : 0);
			if (b)
				bt = fmax(free_t[s], s < S - 1 ? grad[s * M + nb[s]] : 0);
			if (fmin(a, bt) < best - eps) {
				best = fmin(a, bt);
				bs = (int)s;
				tF = a;
				tB = bt;
				okF = f;
				okB = b;
			}
		}
		if (bs < 0) { /* cannot happen with budget >= 1 */
			rc = -EDEADLK;
			goto out;
		}
		uint32_t s = (uint32_t)bs;
		int pickB;

		okF = okF && tF <= best + eps;
		okB = okB && tB <= best + eps;
		/* both ready: F in warm-up (nothing done yet), then alternate */
		pickB = okF && okB ? last[s] == PIPE_F : okB;
		double end;
		uint32_t m;
		int out_ch;
		uint64_t bytes;

		if (pickB) {
			m = nb[s]++;
			end = best + pipe_tb(c, s);
			o->ops[s][o->n[s]++] = PIPE_OP(m, PIPE_B);
			last[s] = PIPE_B;
			out_ch = s > 0 ? (int)PIPE_CH_GRAD(s - 1) : -1;
			bytes = c->grad_bytes;
		} else {
			m = nf[s]++;
			end = best + pipe_tf(c, s);
			o->ops[s][o->n[s]++] = PIPE_OP(m, PIPE_F);
			last[s] = PIPE_F;
			out_ch = s < S - 1 ? (int)PIPE_CH_ACT(s) : -1;
			bytes = c->act_bytes;
		}
		free_t[s] = end;
		if (out_ch >= 0) {
			uint32_t src = pipe_ch_src((uint32_t)out_ch),
				 dst = pipe_ch_dst((uint32_t)out_ch);
			double arr = end;

			if (c->dc_of[src] != c->dc_of[dst]) {
				uint32_t a = c->dc_of[src], b = c->dc_of[dst];
				int l = pipe_net_lookup(net, a, b);
				double dur = xfer_time(c, net, a, b, bytes), st = end;

				/* a pair no link carries has no shared occupancy */
				if (l >= 0 && (rc = occ_reserve(&link[l], end, dur, &st)))
					goto out;
				arr = st + dur + pipe_net_delay(net, a, b);
			}
			if (pickB)
				grad[dst * M + m] = arr;
			else
				act[dst * M + m] = arr;
		}
	}
out:
	for (int i = 0; i < (int)PIPE_NET_MAX_LINKS; i++) {
		free(link[i].a);
		free(link[i].b);
	}
	free(act);
	free(grad);
	return rc;
}

int pipe_order_build(const struct pipe_cfg *c, struct pipe_order *o)
{
	if (c->comm == PIPE_COMM_DEFAULT)
		return -EINVAL;
	memset(o->n, 0, sizeof(o->n));
	switch (c->sched) {
	case PIPE_SCHED_GPIPE: order_gpipe(c, o); return 0;
	case PIPE_SCHED_1F1B: order_1f1b(c, o, 0); return 0;
	case PIPE_SCHED_GEOPIPE: order_1f1b(c, o, 1); return 0;
	case PIPE_SCHED_GREEDY: return order_greedy(c, o);
	default: return -EINVAL;
	}
}

static uint32_t order_bound(const struct pipe_cfg *c, uint32_t s)
{
	switch (c->sched) {
	case PIPE_SCHED_GPIPE: return c->micro;
	case PIPE_SCHED_1F1B: return peak_1f1b(c, s);
	case PIPE_SCHED_GEOPIPE: {
		/* extras only up to the budget; plain 1F1B's own peak is allowed */
		uint32_t b = pipe_stage_budget(c, s), p = peak_1f1b(c, s);

		return b > p ? b : p;
	}
	default: return pipe_stage_budget(c, s);
	}
}

int pipe_order_check(const struct pipe_cfg *c, const struct pipe_order *o, char *why, size_t whylen)
{
	uint32_t S = c->stages, M = c->micro;
	uint32_t pos[PIPE_MAX_STAGES] = {0};
	uint8_t *fdone, *bdone;
	int rc = 0;

	for (uint32_t s = 0; s < S; s++) {
		uint32_t nf = 0, nb = 0, peak = 0;

		if (o->n[s] != 2 * M) {
			snprintf(why, whylen, "stage %u has %u ops, want %u", s, o->n[s], 2 * M);
			return -EINVAL;
		}
		for (uint32_t i = 0; i < o->n[s]; i++) {
			uint32_t m = PIPE_OP_M(o->ops[s][i]);

			if (PIPE_OP_KIND(o->ops[s][i]) == PIPE_F) {
				if (m != nf) {
					snprintf(why, whylen, "stage %u op %u: F%u, want F%u", s, i,
						 m, nf);
					return -EINVAL;
				}
				nf++;
			} else {
				if (m != nb) {
					snprintf(why, whylen, "stage %u op %u: B%u, want B%u", s, i,
						 m, nb);
					return -EINVAL;
				}
				if (m >= nf) {
					snprintf(why, whylen, "stage %u: B%u before F%u", s, m, m);
					return -EINVAL;
				}
				nb++;
			}
			if (nf - nb > peak)
				peak = nf - nb;
		}
		if (nf != M || nb != M) {
			snprintf(why, whylen, "stage %u: %u F and %u B", s, nf, nb);
			return -EINVAL;
		}
		if (peak > order_bound(c, s)) {
			snprintf(why, whylen, "stage %u: %u activations in flight, budget %u", s,
				 peak, order_bound(c, s));
			return -EINVAL;
		}
	}
	/* executability: run the true dependencies with unit progress */
	fdone = calloc((size_t)S * M, 1);
	bdone = calloc((size_t)S * M, 1);
	if (!fdone || !bdone) {
		rc = -ENOMEM;
		goto out;
	}
	for (;;) {
		int progress = 0, left = 0;

		for (uint32_t s = 0; s < S; s++) {
			while (pos[s] < o->n[s]) {
				uint32_t x = o->ops[s][pos[s]], m = PIPE_OP_M(x);

				if (PIPE_OP_KIND(x) == PIPE_F) {
					if (s > 0 && !fdone[(s - 1) * M + m])
						break;
					fdone[s * M + m] = 1;
				} else {
					if (s < S - 1 && !bdone[(s + 1) * M + m])
						break;
					bdone[s * M + m] = 1;
				}
				pos[s]++;
				progress = 1;
			}
			left |= pos[s] < o->n[s];
		}
		if (!left)
			break;
		if (!progress) {
			snprintf(why, whylen, "order deadlocks");
			rc = -EINVAL;
			break;
		}
	}
out:
	free(fdone);
	free(bdone);
	return rc;
}

/* ---------------- programs ---------------- */

static int in_chan(const struct pipe_cfg *c, uint32_t s, enum pipe_op op)
{
	if (op == PIPE_F)
		return s > 0 ? (int)PIPE_CH_ACT(s - 1) : -1;
	return s < c->stages - 1 ? (int)PIPE_CH_GRAD(s) : -1;
}

static int out_chan(const struct pipe_cfg *c, uint32_t s, enum pipe_op op)
{
	if (op == PIPE_F)
		return s < c->stages - 1 ? (int)PIPE_CH_ACT(s) : -1;
	return s > 0 ? (int)PIPE_CH_GRAD(s - 1) : -1;
}

static void put(struct pipe_prog *p, uint32_t s, uint8_t kind, uint8_t op, uint32_t m, int ch)
{
	struct pipe_ins *i = &p->ins[s][p->n[s]++];

	i->kind = kind;
	i->op = op;
	i->m = (uint16_t)m;
	i->chan = (uint16_t)(ch < 0 ? 0 : ch);
}

int pipe_prog_build(const struct pipe_cfg *c, const struct pipe_order *o, struct pipe_prog *p)
{
	memset(p, 0, sizeof(*p));
	p->stages = c->stages;
	for (uint32_t s = 0; s < c->stages; s++) {
		/* at most: compute + 2 posts + 2 waits per op, plus posts up front */
		p->ins[s] = calloc((size_t)o->n[s] * 6 + 8, sizeof(struct pipe_ins));
		if (!p->ins[s]) {
			pipe_prog_free(p);
			return -ENOMEM;
		}
		if (c->comm == PIPE_COMM_NONBLOCKING) {
			/* every receive up front, per channel in message order */
			for (int op = PIPE_F; op <= PIPE_B; op++) {
				int ch = in_chan(c, s, (enum pipe_op)op);

				if (ch >= 0)
					for (uint32_t m = 0; m < c->micro; m++)
						put(p, s, PIPE_I_POST_RECV, 0, m, ch);
			}
			for (uint32_t i = 0; i < o->n[s]; i++) {
				enum pipe_op op = PIPE_OP_KIND(o->ops[s][i]);
				uint32_t m = PIPE_OP_M(o->ops[s][i]);
				int ic = in_chan(c, s, op), oc = out_chan(c, s, op);

				if (ic >= 0)
					put(p, s, PIPE_I_WAIT_RECV, 0, m, ic);
				put(p, s, PIPE_I_COMPUTE, (uint8_t)op, m, -1);
				if (oc >= 0)
					put(p, s, PIPE_I_POST_SEND, 0, m, oc);
			}
			for (uint32_t i = 0; i < o->n[s]; i++) {
				enum pipe_op op = PIPE_OP_KIND(o->ops[s][i]);
				int oc = out_chan(c, s, op);

				if (oc >= 0)
					put(p, s, PIPE_I_WAIT_SEND, 0, PIPE_OP_M(o->ops[s][i]), oc);
			}
		} else {
			int prev_oc = -1;
			uint32_t prev_m = 0;

			for (uint32_t i = 0; i <= o->n[s]; i++) {
				int ic = -1;
				uint32_t m = 0;
				enum pipe_op op = PIPE_F;

				if (i < o->n[s]) {
					op = PIPE_OP_KIND(o->ops[s][i]);
					m = PIPE_OP_M(o->ops[s][i]);
					ic = in_chan(c, s, op);
				}
				/* one batched communication point */
				if (ic >= 0)
					put(p, s, PIPE_I_POST_RECV, 0, m, ic);
				if (prev_oc >= 0)
					put(p, s, PIPE_I_POST_SEND, 0, prev_m, prev_oc);
				if (prev_oc >= 0)
					put(p, s, PIPE_I_WAIT_SEND, 0, prev_m, prev_oc);
				if (ic >= 0)
					put(p, s, PIPE_I_WAIT_RECV, 0, m, ic);
				if (i == o->n[s])
					break;
				put(p, s, PIPE_I_COMPUTE, (uint8_t)op, m, -1);
				prev_oc = out_chan(c, s, op);
				prev_m = m;
			}
		}
	}
	return 0;
}

void pipe_prog_free(struct pipe_prog *p)
{
	for (uint32_t s = 0; s < PIPE_MAX_STAGES; s++) {
		free(p->ins[s]);
		p->ins[s] = NULL;
		p->n[s] = 0;
	}
}
