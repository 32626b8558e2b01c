/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-pipe: event logs (host/pipe/, the pipe core; pure C, the lowest of
 * it with pipe_payload.c): the growable log, the dependency check of an
 * executed log against the programs (pipe_events_check()), and an
 * iteration's metrics.
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
			snprintf(x->why, x->whylen,
				 "event %zu: iteration %u / stage %u out of range", k,
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
				snprintf(x->why, x->whylen, "iteration %u: B(%u,%u) before F", it,
					 s, in->m);
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
			snprintf(x->why, x->whylen, "iteration %u: %c(%u,%u) ran before its input",
				 it, in->op == PIPE_F ? 'F' : 'B', s, in->m);
			return -EINVAL;
		}
	}
	return 0;
}

/* The events of stage s in iteration it, from x->v[*i]; *i moves past
 * them. A stage without events is an error unless @p partial.
 * @return 0 or -EINVAL. */
static int evchk_stage(struct evchk *x, size_t n, uint32_t it, uint32_t s, int partial, size_t *i)
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
			if (s > 0 && present[s - 1] &&
			    !(x->fst[q] >= x->fend[q - M] - PIPE_CLOCK_TOL)) {
				snprintf(x->why, x->whylen,
					 "iteration %u: F(%u,%u) started before F(%u,%u) ended", it,
					 s, m, s - 1, m);
				return -EINVAL;
			}
			if (s < S - 1 && present[s + 1] &&
			    !(x->bst[q] >= x->bend[q + M] - PIPE_CLOCK_TOL)) {
				snprintf(x->why, x->whylen,
					 "iteration %u: B(%u,%u) started before B(%u,%u) ended", it,
					 s, m, s + 1, m);
				return -EINVAL;
			}
			if (!(x->bst[q] >= x->fend[q] - PIPE_CLOCK_TOL)) {
				snprintf(x->why, x->whylen,
					 "iteration %u: B(%u,%u) before F(%u,%u) ended", it, s, m,
					 s, m);
				return -EINVAL;
			}
		}
	for (uint32_t ch = 0; ch < x->nch; ch++)
		for (uint32_t m = 0; m < M; m++) {
			size_t mi = (size_t)ch * M + m;

			if (present[pipe_ch_dst(ch)] && !x->rhas[mi]) {
				snprintf(x->why, x->whylen,
					 "iteration %u: channel %u message %u never received", it,
					 ch, m);
				return -EINVAL;
			}
			if (x->rhas[mi] && x->shas[mi] && x->rcs[mi] != x->scs[mi]) {
				snprintf(x->why, x->whylen,
					 "iteration %u: channel %u message %u checksum %016llx, "
					 "sent %016llx",
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
	struct evchk x = {.p = p,
			  .S = c->stages,
			  .M = c->micro,
			  .nch = PIPE_NCHAN(c->stages),
			  .why = why,
			  .whylen = whylen};
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

			if (pipe_ch_cross(c, x->chan))
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
