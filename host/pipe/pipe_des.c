/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-pipe: discrete-event simulation of per-stage programs, the dependency
 * check of an executed event log, metrics and payload checksums.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipe.h"

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

/* ---------------- DES ---------------- */

enum { EV_STAGE = 0, EV_START, EV_ARRIVE, EV_COMPLETE };

struct hev {
	double t;
	uint64_t seq;
	uint32_t type, a; /* a: stage, or message index */
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

static int hpush(struct heap *h, double t, uint32_t type, uint32_t a)
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

	h->v[i] = (struct hev){t, h->seq++, type, a};
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
	uint8_t has_send, has_recv, started, arrived, completed;
};

struct dstage {
	uint32_t pc;
	int waiting; /* 0, or 1 + message index */
	double wait_t0;
};

uint64_t pipe_wire_bytes(const struct pipe_cfg *c, uint64_t payload);

static int cross(const struct pipe_cfg *c, uint32_t ch)
{
	return c->dc_of[pipe_ch_src(ch)] != c->dc_of[pipe_ch_dst(ch)];
}

static uint64_t ch_bytes(const struct pipe_cfg *c, uint32_t ch)
{
	return ch & 1 ? c->grad_bytes : c->act_bytes;
}

int pipe_des_run(const struct pipe_cfg *c, const struct pipe_prog *p, struct pipe_des_out *out)
{
	uint32_t S = c->stages, M = c->micro, nch = PIPE_NCHAN(S);
	struct dmsg *msg = calloc((size_t)nch * M, sizeof(*msg));
	struct dstage st[PIPE_MAX_STAGES];
	struct heap h = {0};
	double link_free[PIPE_MAX_DC] = {0}, L = c->rtt / 2;
	size_t txcap = 0;
	int rc = 0;

	memset(out, 0, sizeof(*out));
	memset(st, 0, sizeof(st));
	if (!msg)
		return -ENOMEM;
	for (uint32_t s = 0; s < S; s++)
		if ((rc = hpush(&h, 0, EV_STAGE, s)))
			goto out;
	while (h.n && !rc) {
		struct hev e = hpop(&h);
		double t = e.t;

		if (e.type == EV_STAGE) {
			uint32_t s = e.a;
			struct dstage *d = &st[s];

			if (d->waiting) { /* woken: the wait ends now */
				const struct pipe_ins *in = &p->ins[s][d->pc];
				struct pipe_event ev = {.stage = (uint16_t)s, .m = in->m, .kind = in->kind,
							.chan = in->chan, .t0 = d->wait_t0, .t1 = t};

				if ((rc = pipe_events_add(&out->ev, &ev)))
					break;
				d->waiting = 0;
				d->pc++;
			}
			while (d->pc < p->n[s]) {
				const struct pipe_ins *in = &p->ins[s][d->pc];
				struct pipe_event ev = {.stage = (uint16_t)s, .m = in->m, .kind = in->kind,
							.op = in->op, .chan = in->chan, .t0 = t, .t1 = t};
				uint32_t mi = (uint32_t)in->chan * M + in->m;
				struct dmsg *x = &msg[mi];

				if (in->kind == PIPE_I_COMPUTE) {
					ev.t1 = t + (in->op == PIPE_F ? pipe_tf(c, s) : pipe_tb(c, s));
					if ((rc = pipe_events_add(&out->ev, &ev)) ||
					    (rc = hpush(&h, ev.t1, EV_STAGE, s)))
						break;
					d->pc++;
					break;
				}
				if (in->kind == PIPE_I_WAIT_RECV || in->kind == PIPE_I_WAIT_SEND) {
					int ready = in->kind == PIPE_I_WAIT_RECV ? x->arrived : x->completed;

					if (!ready) {
						d->waiting = 1 + (int)mi;
						d->wait_t0 = t;
						break;
					}
				} else if (in->kind == PIPE_I_POST_RECV) {
					x->recv_post = t;
					x->has_recv = 1;
				} else {
					x->send_post = t;
					x->has_send = 1;
				}
				if ((rc = pipe_events_add(&out->ev, &ev)))
					break;
				d->pc++;
				if (x->has_send && x->has_recv && !x->started) {
					double r = fmax(x->send_post,
							x->recv_post + (cross(c, in->chan) ? L : 0));

					x->started = 1;
					if ((rc = hpush(&h, r, EV_START, mi)))
						break;
				}
			}
		} else if (e.type == EV_START) {
			uint32_t ch = e.a / M, m = e.a % M;
			double arr = t, comp = t;

			if (cross(c, ch)) {
				double dur = (double)pipe_wire_bytes(c, ch_bytes(c, ch)) * 8 /
					     (double)c->rate_bps;
				uint32_t dir = c->dc_of[pipe_ch_src(ch)];
				double ts = fmax(t, link_free[dir]);

				link_free[dir] = ts + dur;
				arr = ts + dur + L;
				comp = c->rel.rel == SDR_REL_NONE ? ts + dur : arr + L;
				if (out->ntx == txcap) {
					size_t nc = txcap ? 2 * txcap : 64;
					struct pipe_tx *nt = realloc(out->tx, nc * sizeof(*nt));

					if (!nt) {
						rc = -ENOMEM;
						break;
					}
					out->tx = nt;
					txcap = nc;
				}
				out->tx[out->ntx++] = (struct pipe_tx){(uint16_t)ch, (uint16_t)m, ts,
								       ts + dur, arr};
			}
			if ((rc = hpush(&h, arr, EV_ARRIVE, e.a)) ||
			    (rc = hpush(&h, comp, EV_COMPLETE, e.a)))
				break;
		} else {
			uint32_t ch = e.a / M;
			uint32_t s = e.type == EV_ARRIVE ? pipe_ch_dst(ch) : pipe_ch_src(ch);

			if (e.type == EV_ARRIVE)
				msg[e.a].arrived = 1;
			else
				msg[e.a].completed = 1;
			if (st[s].waiting == 1 + (int)e.a) {
				const struct pipe_ins *in = &p->ins[s][st[s].pc];

				if ((in->kind == PIPE_I_WAIT_RECV) == (e.type == EV_ARRIVE))
					rc = hpush(&h, t, EV_STAGE, s);
			}
		}
	}
	for (uint32_t s = 0; s < S && !rc; s++)
		if (st[s].pc < p->n[s])
			rc = -EDEADLK;
out:
	free(h.v);
	free(msg);
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

/* ---------------- event log check ---------------- */

/* tolerance of clock comparisons between stages (log resolution) */
#define PIPE_CLOCK_TOL 2e-6

int pipe_events_check(const struct pipe_cfg *c, const struct pipe_prog *p,
		      const struct pipe_events *e, uint32_t iters, int partial, char *why,
		      size_t whylen)
{
	uint32_t S = c->stages, M = c->micro, nch = PIPE_NCHAN(S);
	size_t nm = (size_t)S * M;
	struct pipe_event *v = malloc((e->n ? e->n : 1) * sizeof(*v));
	double *fend = malloc(nm * sizeof(double)), *bend = malloc(nm * sizeof(double));
	double *fst = malloc(nm * sizeof(double)), *bst = malloc(nm * sizeof(double));
	uint64_t *scs = malloc((size_t)nch * M * sizeof(uint64_t));
	uint64_t *rcs = malloc((size_t)nch * M * sizeof(uint64_t));
	uint8_t *shas = malloc((size_t)nch * M), *rhas = malloc((size_t)nch * M);
	int rc = -EINVAL;
	size_t i = 0;

	if (!v || !fend || !bend || !fst || !bst || !scs || !rcs || !shas || !rhas) {
		rc = -ENOMEM;
		goto out;
	}
	{
		/* bucket by (iter, stage), keeping each stage's log order */
		size_t *cnt = calloc((size_t)(iters + 1) * S + 1, sizeof(size_t));
		struct pipe_event *w = malloc((e->n ? e->n : 1) * sizeof(*w));

		if (!cnt || !w) {
			free(cnt);
			free(w);
			rc = -ENOMEM;
			goto out;
		}
		for (size_t k = 0; k < e->n; k++) {
			if (e->ev[k].iter >= iters || e->ev[k].stage >= S) {
				snprintf(why, whylen, "event %zu: iteration %u / stage %u out of range", k,
					 e->ev[k].iter, e->ev[k].stage);
				free(cnt);
				free(w);
				goto out;
			}
			cnt[(size_t)e->ev[k].iter * S + e->ev[k].stage + 1]++;
		}
		for (size_t k = 1; k <= (size_t)iters * S; k++)
			cnt[k] += cnt[k - 1];
		for (size_t k = 0; k < e->n; k++)
			w[cnt[(size_t)e->ev[k].iter * S + e->ev[k].stage]++] = e->ev[k];
		memcpy(v, w, e->n * sizeof(*v));
		free(w);
		free(cnt);
	}
	for (uint32_t it = 0; it < iters; it++) {
		uint8_t present[PIPE_MAX_STAGES] = {0};

		for (size_t k = 0; k < nm; k++)
			fend[k] = bend[k] = fst[k] = bst[k] = NAN;
		memset(shas, 0, (size_t)nch * M);
		memset(rhas, 0, (size_t)nch * M);
		for (uint32_t s = 0; s < S; s++) {
			size_t j = i;
			double tprev = -INFINITY;

			while (j < e->n && v[j].iter == it && v[j].stage == s)
				j++;
			if (j == i) {
				if (partial)
					continue;
				snprintf(why, whylen, "iteration %u: no events of stage %u", it, s);
				goto out;
			}
			present[s] = 1;
			if (j - i != p->n[s]) {
				snprintf(why, whylen, "iteration %u stage %u: %zu events, program has %u",
					 it, s, j - i, p->n[s]);
				goto out;
			}
			for (uint32_t k = 0; k < p->n[s]; k++) {
				const struct pipe_event *x = &v[i + k];
				const struct pipe_ins *in = &p->ins[s][k];
				size_t mi = (size_t)in->chan * M + in->m;

				if (x->kind != in->kind || x->m != in->m ||
				    (in->kind == PIPE_I_COMPUTE ? x->op != in->op : x->chan != in->chan)) {
					snprintf(why, whylen,
						 "iteration %u stage %u event %u: kind %u op %u m %u chan %u, "
						 "program says kind %u op %u m %u chan %u",
						 it, s, k, x->kind, x->op, x->m, x->chan, in->kind, in->op,
						 in->m, in->chan);
					goto out;
				}
				if (!(x->t1 >= x->t0) || x->t0 < tprev - PIPE_CLOCK_TOL) {
					snprintf(why, whylen, "iteration %u stage %u event %u: time goes back",
						 it, s, k);
					goto out;
				}
				tprev = x->t1;
				if (in->kind == PIPE_I_COMPUTE) {
					size_t q = (size_t)s * M + in->m;

					if (in->op == PIPE_F) {
						fst[q] = x->t0;
						fend[q] = x->t1;
					} else {
						if (isnan(fend[q])) {
							snprintf(why, whylen, "iteration %u: B(%u,%u) before F", it,
								 s, in->m);
							goto out;
						}
						bst[q] = x->t0;
						bend[q] = x->t1;
					}
				} else if (in->kind == PIPE_I_POST_SEND) {
					scs[mi] = x->csum;
					shas[mi] = 1;
				} else if (in->kind == PIPE_I_WAIT_RECV) {
					rcs[mi] = x->csum;
					rhas[mi] = 1;
				}
				/* the compute op using a received message waited for it first */
			}
			/* every input received before its compute started */
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
					if (p->ins[s][q].kind == PIPE_I_WAIT_RECV &&
					    p->ins[s][q].chan == ch && p->ins[s][q].m == in->m)
						seen = 1;
				if (!seen) {
					snprintf(why, whylen, "iteration %u: %c(%u,%u) ran before its input", it,
						 in->op == PIPE_F ? 'F' : 'B', s, in->m);
					goto out;
				}
			}
			i = j;
		}
		while (i < e->n && v[i].iter == it)
			i++;
		/* cross-stage true dependencies and checksums */
		for (uint32_t s = 0; s < S; s++)
			for (uint32_t m = 0; m < M; m++) {
				size_t q = (size_t)s * M + m;

				if (!present[s])
					continue;
				if (s > 0 && present[s - 1] &&
				    !(fst[q] >= fend[q - M] - PIPE_CLOCK_TOL)) {
					snprintf(why, whylen, "iteration %u: F(%u,%u) started before F(%u,%u) ended",
						 it, s, m, s - 1, m);
					goto out;
				}
				if (s < S - 1 && present[s + 1] &&
				    !(bst[q] >= bend[q + M] - PIPE_CLOCK_TOL)) {
					snprintf(why, whylen, "iteration %u: B(%u,%u) started before B(%u,%u) ended",
						 it, s, m, s + 1, m);
					goto out;
				}
				if (!(bst[q] >= fend[q] - PIPE_CLOCK_TOL)) {
					snprintf(why, whylen, "iteration %u: B(%u,%u) before F(%u,%u) ended", it, s,
						 m, s, m);
					goto out;
				}
			}
		for (uint32_t ch = 0; ch < nch; ch++)
			for (uint32_t m = 0; m < M; m++) {
				size_t mi = (size_t)ch * M + m;

				if (present[pipe_ch_dst(ch)] && !rhas[mi]) {
					snprintf(why, whylen, "iteration %u: channel %u message %u never received",
						 it, ch, m);
					goto out;
				}
				if (rhas[mi] && shas[mi] && rcs[mi] != scs[mi]) {
					snprintf(why, whylen,
						 "iteration %u: channel %u message %u checksum %016llx, sent %016llx",
						 it, ch, m, (unsigned long long)rcs[mi],
						 (unsigned long long)scs[mi]);
					goto out;
				}
			}
	}
	if (i != e->n) {
		snprintf(why, whylen, "events beyond iteration %u", iters);
		goto out;
	}
	rc = 0;
out:
	free(v);
	free(fend);
	free(bend);
	free(fst);
	free(bst);
	free(scs);
	free(rcs);
	free(shas);
	free(rhas);
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
			uint64_t b = x->chan & 1 ? c->grad_bytes : c->act_bytes;

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

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

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
	put32(p, PIPE_MAGIC);
	put32(p + 4, iter);
	put32(p + 8, ch);
	put32(p + 12, m);
	put64(p + 16, len);
	put64(p + 24, cs);
	put64(p + 32, seed);
	return cs;
}

int pipe_payload_check(const void *buf, uint64_t len, uint32_t iter, uint32_t ch, uint32_t m,
		       uint64_t *csum)
{
	const uint8_t *p = buf;
	uint64_t cs;

	if (len < PIPE_HDR_BYTES || get32(p) != PIPE_MAGIC || get64(p + 16) != len)
		return -EBADMSG;
	cs = body_sum(p + PIPE_HDR_BYTES, len - PIPE_HDR_BYTES);
	if (cs != get64(p + 24))
		return -EBADMSG;
	if (get32(p + 4) != iter || get32(p + 8) != ch || get32(p + 12) != m)
		return -EPROTO;
	*csum = cs;
	return 0;
}
