/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-pipe: CBA labels, the per-request rule and the transport's allocation
 * policies (pipe_cba.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipe_cba.h"

/* ---------------- labels ---------------- */

int pipe_cba_label(const struct pipe_cfg *c, const struct pipe_events *e, uint32_t iter,
		   double intra_lat, struct pipe_cba_label *out)
{
	uint32_t S = c->stages, M = c->micro, nch = PIPE_NCHAN(S);
	size_t nop = (size_t)S * M * 2, nmsg = (size_t)nch * M;
	double *t0 = malloc(nop * sizeof(double)), *t1 = malloc(nop * sizeof(double));
	/* per transfer: the consumer's wait, its start, the send and receive
	 * posts, the sender's wait for the send (start, end); per stage: its
	 * last compute's start */
	double *wait = malloc((6 * nmsg + S) * sizeof(double)), *need = wait + nmsg;
	double *sent = need + nmsg, *rposted = sent + nmsg, *sw0 = rposted + nmsg,
	       *sw1 = sw0 + nmsg;
	double *clast = sw1 + nmsg;
	int ncb = 0, seen = 0;

	if (!t0 || !t1 || !wait) {
		ncb = -ENOMEM;
		goto out;
	}
	if (!(intra_lat >= 0)) {
		ncb = -EINVAL;
		goto out;
	}
	for (size_t i = 0; i < nop; i++)
		t0[i] = t1[i] = NAN;
	for (size_t i = 0; i < 6 * nmsg + S; i++)
		wait[i] = NAN;
	for (size_t i = 0; i < e->n; i++) {
		const struct pipe_event *x = &e->ev[i];

		if (x->iter != iter || x->stage >= S || x->m >= M)
			continue;
		seen = 1;
		if (x->kind == PIPE_I_COMPUTE) {
			size_t k = ((size_t)x->stage * M + x->m) * 2 + (x->op == PIPE_B);

			t0[k] = x->t0;
			t1[k] = x->t1;
			if (!(clast[x->stage] >= x->t0))
				clast[x->stage] = x->t0;
		} else if (x->chan < nch) {
			size_t k = (size_t)x->chan * M + x->m;
			int at_dst = x->stage == pipe_ch_dst(x->chan);

			if (x->kind == PIPE_I_WAIT_RECV && at_dst) {
				wait[k] = x->t1 - x->t0;
				need[k] = x->t0;
			} else if (x->kind == PIPE_I_POST_RECV && at_dst) {
				rposted[k] = x->t0;
			} else if (x->kind == PIPE_I_POST_SEND &&
				   x->stage == pipe_ch_src(x->chan)) {
				sent[k] = x->t0;
			} else if (x->kind == PIPE_I_WAIT_SEND &&
				   x->stage == pipe_ch_src(x->chan)) {
				sw0[k] = x->t0;
				sw1[k] = x->t1;
			}
		}
	}
	if (!seen) {
		ncb = -EINVAL;
		goto out;
	}
	for (uint32_t ch = 0; ch < nch; ch++) {
		uint32_t src = pipe_ch_src(ch), dst = pipe_ch_dst(ch), isb = ch & 1;

		for (uint32_t m = 0; m < M; m++) {
			struct pipe_cba_label *l = &out[(size_t)ch * M + m];
			double cons = t0[((size_t)dst * M + m) * 2 + isb];
			double prod = t1[((size_t)src * M + m) * 2 + isb];
			double w = wait[(size_t)ch * M + m];

			memset(l, 0, sizeof(*l));
			l->cross = c->dc_of[src] != c->dc_of[dst];
			if (!l->cross || isnan(cons))
				continue;
			if (isnan(w)) { /* a consumer that never waited for its input */
				ncb = -EINVAL;
				goto out;
			}
			l->known = 1;
			l->wait = w > 0 ? w : 0;
			l->need = need[(size_t)ch * M + m];
			l->sent = sent[(size_t)ch * M + m];
			l->rposted = rposted[(size_t)ch * M + m];
			/* a send wait holds the sender back when a compute follows it */
			l->sblock = sw1[(size_t)ch * M + m] <= clast[src];
			l->sneed = l->sblock ? sw0[(size_t)ch * M + m] : 0;
			l->late = isnan(prod) ? NAN : cons - (prod + intra_lat);
			if (m == 0)
				l->cb = 1;
			else if (isnan(l->late))
				l->cb = l->wait > intra_lat;
			else
				l->cb = l->wait > 0 && l->late > 0;
			ncb += l->cb;
		}
	}
out:
	free(t0);
	free(t1);
	free(wait);
	return ncb;
}

uint64_t pipe_cba_rule(uint64_t prev, int blocked, int cb, uint64_t step, uint64_t lo, uint64_t hi)
{
	uint64_t v = prev;

	if (blocked)
		v = prev > step ? prev - step : 0;
	else if (cb)
		v = prev > UINT64_MAX - step ? UINT64_MAX : prev + step;
	if (v < lo)
		v = lo;
	if (v > hi)
		v = hi;
	return v;
}

/* ---------------- flow labels ---------------- */

uint32_t pipe_cba_flow_labels(const struct pipe_cfg *c, const struct pipe_flows *fl,
			      const struct pipe_cba_label *lab, uint8_t *cb, double *wait)
{
	uint32_t M = c->micro, n = 0;

	for (uint32_t i = 0; i < fl->n; i++) {
		const struct pipe_cba_label *l = &lab[(size_t)fl->f[i].chan * M];

		cb[i] = 0;
		wait[i] = 0;
		for (uint32_t m = M > 1 ? 1 : 0; m < M; m++)
			if (l[m].cb) {
				cb[i] = 1;
				wait[i] += l[m].wait;
			}
		n += cb[i];
	}
	return n;
}

double pipe_cba_slack(const struct pipe_cfg *c, const struct pipe_net *net,
		      const struct pipe_flows *fl, const struct pipe_cba_label *lab, uint32_t i,
		      uint64_t rate_bps, double margin, double *wait)
{
	uint32_t M = c->micro;
	const struct pipe_flow *f;
	const struct pipe_cba_label *l;
	double d_ab, d_ba, tx, end = -INFINITY, slack = INFINITY, w = 0;
	int acked;

	if (wait)
		*wait = NAN;
	if (i >= fl->n || rate_bps == 0)
		return NAN;
	f = &fl->f[i];
	l = &lab[(size_t)f->chan * M];
	d_ab = pipe_net_delay(net, f->src_dc, f->dst_dc);
	d_ba = pipe_net_delay_ctl(net, f->dst_dc, f->src_dc); /* the DES's reverse delay */
	tx = (double)pipe_wire_bytes(c, pipe_ch_bytes(c, f->chan)) * 8 / (double)rate_bps;
	acked = c->rel.rel != SDR_REL_NONE; /* a send completes when acknowledged */
	/* the QP's messages one after another, in micro-batch order (the order
	 * their sends and receives are posted in) */
	for (uint32_t m = 0; m < M; m++) {
		double s;

		if (!l[m].cross || !l[m].known || isnan(l[m].sent) || isnan(l[m].rposted))
			return NAN;
		end = fmax(fmax(l[m].sent, l[m].rposted + d_ba), end) + tx;
		if (m == 0 && M > 1)
			continue;
		s = l[m].need - margin - (end + d_ab);
		slack = fmin(slack, s);
		w += s < 0 ? -s : 0;
		if (l[m].sblock) { /* the sender waits for it too */
			s = l[m].sneed - margin - (acked ? end + d_ab + d_ba : end);
			slack = fmin(slack, s);
			w += s < 0 ? -s : 0;
		}
	}
	if (wait)
		*wait = w;
	return slack;
}

/* ---------------- policies ---------------- */

static const char *const policy_names[PIPE_POLICY_COUNT] = {"none", "equal", "static", "cba",
							    "cba-shift"};

const char *pipe_policy_name(enum pipe_policy p)
{
	return (unsigned)p < PIPE_POLICY_COUNT ? policy_names[p] : "?";
}

int pipe_policy_parse(const char *s, enum pipe_policy *p)
{
	for (int i = 0; i < PIPE_POLICY_COUNT; i++)
		if (strcmp(s, policy_names[i]) == 0) {
			*p = (enum pipe_policy)i;
			return 0;
		}
	return -EINVAL;
}

void pipe_policy_cfg_init(struct pipe_policy_cfg *pc)
{
	memset(pc, 0, sizeof(*pc));
	pc->policy = PIPE_POLICY_NONE;
}

/* Shared capacity of flow i's link (a link of several paths: the sum of their rates),
 * 0 = none (limited by rate_bps alone). */
static uint64_t flow_cap(const struct pipe_net *net, const struct pipe_flows *fl, uint32_t i)
{
	return pipe_net_rate(net, fl->f[i].link);
}

/* equal share of every flow: its link's rate over the flows crossing it */
static void equal_shares(const struct pipe_cfg *c, const struct pipe_net *net,
			 const struct pipe_flows *fl, uint64_t *share)
{
	uint32_t cnt[PIPE_NET_MAX_LINKS] = {0};

	for (uint32_t i = 0; i < fl->n; i++)
		if (fl->f[i].link >= 0)
			cnt[fl->f[i].link]++;
	for (uint32_t i = 0; i < fl->n; i++) {
		uint64_t cap = flow_cap(net, fl, i);

		share[i] = cap ? cap / cnt[fl->f[i].link] : c->rate_bps;
	}
}

/* cba-shift: the largest cut g <= gmax of flow j (now at @p rate) that
 * leaves its slack >= margin; slack falls with the rate, so bisect */
static uint64_t shift_free_cut(const struct pipe_cfg *c, const struct pipe_net *net,
			       const struct pipe_flows *fl, const struct pipe_cba_label *lab,
			       uint32_t j, uint64_t rate, uint64_t gmax, double margin)
{
	uint64_t ok = 0, bad = gmax;

	if (gmax == 0 || !(pipe_cba_slack(c, net, fl, lab, j, rate, margin, NULL) >= 0))
		return 0;
	if (pipe_cba_slack(c, net, fl, lab, j, rate - gmax, margin, NULL) >= 0)
		return gmax;
	while (bad - ok > 1) { /* slack(rate - ok) >= 0 > slack(rate - bad) */
		uint64_t mid = ok + (bad - ok) / 2;

		if (pipe_cba_slack(c, net, fl, lab, j, rate - mid, margin, NULL) >= 0)
			ok = mid;
		else
			bad = mid;
	}
	return ok;
}

/* the change of flow i's DCI wait, as the model has it (pipe_cba_slack()),
 * from rate @p from to rate @p to */
static double shift_dwait(const struct pipe_cfg *c, const struct pipe_net *net,
			  const struct pipe_flows *fl, const struct pipe_cba_label *lab, uint32_t i,
			  uint64_t from, uint64_t to, double margin)
{
	double w0, w1;

	pipe_cba_slack(c, net, fl, lab, i, from, margin, &w0);
	pipe_cba_slack(c, net, fl, lab, i, to, margin, &w1);
	return w1 - w0;
}

/* what donor j may still give: the rest of its step, above its min, up to @p need */
static uint64_t shift_room(uint32_t j, const uint64_t *step, const uint64_t *lo,
			   const struct pipe_alloc *out, uint64_t need)
{
	uint64_t g = step[j] - out->gave[j];

	if (g > out->rate[j] - lo[j])
		g = out->rate[j] - lo[j];
	return g < need ? g : need;
}

/*
 * cba-shift: up to @p need bit/s more for CB flow @p i on link @p l, from
 * the flows there that did not gain this round (gained[]). A donor gives at
 * most one of its steps per round in total (out->gave), never goes below its
 * min, and gives only what the model (pipe_cba_slack()) says costs its
 * transfers less DCI wait than it saves flow i's: all of the step when that
 * holds, else the part that keeps its slack >= margin (which costs nothing).
 * Cheapest donors first; among free ones, the largest slack first.
 * @return bit/s given.
 */
static uint64_t shift_fund(const struct pipe_cfg *c, const struct pipe_net *net,
			   const struct pipe_flows *fl, const struct pipe_policy_cfg *pc,
			   const struct pipe_cba_label *lab, uint32_t i, int l, uint64_t need,
			   const uint64_t *step, const uint64_t *lo, const uint8_t *gained,
			   struct pipe_alloc *out)
{
	uint32_t cand[PIPE_MAX_FLOWS], n = 0;
	double cost[PIPE_MAX_FLOWS], mg = pc->shift_margin;
	uint64_t got = 0;

	for (uint32_t j = 0; j < fl->n; j++) {
		if (j == i || fl->f[j].link != l || gained[j] || out->gave[j] >= step[j] ||
		    out->rate[j] <= lo[j] || isnan(out->slack[j]))
			continue;
		cost[j] = shift_dwait(c, net, fl, lab, j, out->rate[j],
				      out->rate[j] - shift_room(j, step, lo, out, need), mg);
		cand[n++] = j;
	}
	/* cheapest first, then the largest slack, then flow order */
	for (uint32_t a = 1; a < n; a++)
		for (uint32_t b = a; b > 0; b--) {
			uint32_t x = cand[b - 1], y = cand[b];

			if (cost[y] < cost[x] ||
			    (cost[y] == cost[x] && out->slack[y] > out->slack[x])) {
				cand[b - 1] = y;
				cand[b] = x;
			} else {
				break;
			}
		}
	for (uint32_t k = 0; k < n && got < need; k++) {
		uint32_t j = cand[k];
		uint64_t g = shift_room(j, step, lo, out, need - got), base = out->rate[i] + got;

		if (!(shift_dwait(c, net, fl, lab, j, out->rate[j], out->rate[j] - g, mg) <
		      -shift_dwait(c, net, fl, lab, i, base, base + g, 0))) {
			/* not all of it: the part that costs nothing, if it helps */
			g = shift_free_cut(c, net, fl, lab, j, out->rate[j], g, mg);
			if (!g || !(shift_dwait(c, net, fl, lab, i, base, base + g, 0) < 0))
				continue;
		}
		out->rate[j] -= g;
		out->gave[j] += g;
		got += g;
	}
	return got;
}

/* cba-shift: when the iteration that ran with @p prev's rates was slower
 * than the one before it, and prev had moved rates (not by undoing), decide
 * the rates before prev's moves again. @return 1 if so. */
static int shift_undo(const struct pipe_alloc *prev, struct pipe_alloc *out)
{
	int moved = 0;

	for (uint32_t i = 0; i < prev->n; i++)
		moved |= prev->rate[i] != prev->base_rate[i];
	if (!moved || prev->undone || !(prev->iter_time > prev->base_time && prev->base_time > 0))
		return 0;
	for (uint32_t i = 0; i < prev->n; i++) {
		out->rate[i] = out->req[i] = prev->base_rate[i];
		out->gave[i] = prev->rate[i] > prev->base_rate[i]
				       ? prev->rate[i] - prev->base_rate[i]
				       : 0;
	}
	out->undone = 1;
	return 1;
}

/* pipe_policy_alloc()'s working set: the equal shares, each link's use,
 * each flow's step and floor, the increases to grant and who got one. */
struct alloc_ws {
	uint64_t share[PIPE_MAX_FLOWS], used[PIPE_NET_MAX_LINKS];
	uint64_t step[PIPE_MAX_FLOWS], lo[PIPE_MAX_FLOWS];
	uint8_t gained[PIPE_MAX_FLOWS];
	uint32_t order[PIPE_MAX_FLOWS], nord;
};

/* static: the given rates, which must fit every link. */
static int alloc_static(const struct pipe_net *net, const struct pipe_flows *fl,
			const struct pipe_policy_cfg *pc, struct alloc_ws *w,
			struct pipe_alloc *out, char *why, size_t whylen)
{
	if (pc->nstatic != fl->n) {
		sdr_link_seterr(why, whylen,
				"static: %u rates given, the pipeline has %u cross-DC flows",
				pc->nstatic, fl->n);
		return -EINVAL;
	}
	for (uint32_t i = 0; i < fl->n; i++) {
		if (pc->static_bps[i] == 0) {
			sdr_link_seterr(why, whylen, "static: flow %u (channel %u) has rate 0", i,
					fl->f[i].chan);
			return -EINVAL;
		}
		out->rate[i] = out->req[i] = pc->static_bps[i];
		if (fl->f[i].link >= 0)
			w->used[fl->f[i].link] += pc->static_bps[i];
	}
	for (uint32_t l = 0; l < net->nlinks; l++)
		if (pipe_net_rate(net, (int)l) && w->used[l] > pipe_net_rate(net, (int)l)) {
			sdr_link_seterr(why, whylen,
					"static: %llu bit/s over link %s of %llu bit/s",
					(unsigned long long)w->used[l], net->link[l].name,
					(unsigned long long)pipe_net_rate(net, (int)l));
			return -ENOSPC;
		}
	return 0;
}

/* cba, cba-shift: each flow's request by the rule, its rate for now (cuts
 * and unchanged requests: they fit where the previous round fit), and the
 * increases still to grant (w->order). */
static int alloc_requests(const struct pipe_cfg *c, const struct pipe_net *net,
			  const struct pipe_flows *fl, const struct pipe_policy_cfg *pc,
			  const struct pipe_alloc *prev, struct alloc_ws *w, struct pipe_alloc *out,
			  char *why, size_t whylen)
{
	const char *name = pipe_policy_name(pc->policy);
	int shift = pc->policy == PIPE_POLICY_CBA_SHIFT;

	for (uint32_t i = 0; i < fl->n; i++) {
		uint64_t cap = flow_cap(net, fl, i), lim = cap ? cap : c->rate_bps;
		uint64_t hi = pc->max_bps ? pc->max_bps : lim;

		w->step[i] = pc->step_bps ? pc->step_bps : w->share[i] / 4;
		w->lo[i] = pc->min_bps ? pc->min_bps : w->share[i] / 4;
		if (w->step[i] == 0 || w->lo[i] == 0 || w->lo[i] > hi) {
			sdr_link_seterr(why, whylen,
					"%s: flow %u: step %llu, bounds [%llu, %llu] bit/s", name,
					i, (unsigned long long)w->step[i],
					(unsigned long long)w->lo[i], (unsigned long long)hi);
			return -EINVAL;
		}
		/* cba-shift: the step as the flow's reversals left it */
		if (shift && prev->dir[i]) {
			w->step[i] = prev->step[i] < w->step[i] ? prev->step[i] : w->step[i];
			out->dir[i] = prev->dir[i];
		}
		out->step[i] = w->step[i];
		/* cba-shift: a refused request keeps its rate (see pipe_cba.h) */
		out->req[i] = pipe_cba_rule(prev->rate[i], shift ? 0 : prev->blocked[i], out->cb[i],
					    w->step[i], w->lo[i], hi);
		/* cuts and unchanged requests first: they fit where the previous round fit */
		out->rate[i] = out->req[i] < prev->rate[i] ? out->req[i] : prev->rate[i];
		if (fl->f[i].link >= 0)
			w->used[fl->f[i].link] += out->rate[i];
		if (out->req[i] > out->rate[i])
			w->order[w->nord++] = i;
	}
	return 0;
}

/* A previous round from elsewhere (another network) may not fit: scale. */
static void alloc_fit(const struct pipe_net *net, const struct pipe_flows *fl, struct alloc_ws *w,
		      struct pipe_alloc *out)
{
	for (uint32_t i = 0; i < fl->n; i++) {
		int l = fl->f[i].link;
		uint64_t cap = flow_cap(net, fl, i);

		if (l >= 0 && cap && w->used[l] > cap) {
			uint64_t tot = w->used[l], sum = 0;

			for (uint32_t j = 0; j < fl->n; j++)
				if (fl->f[j].link == l) {
					out->rate[j] = (uint64_t)((long double)out->rate[j] * cap /
								  tot);
					sum += out->rate[j];
				}
			w->used[l] = sum;
		}
	}
}

/* The increases, most DCI wait first, then flow order: granted where the
 * link has room; cba-shift also takes the free capacity, then the donors';
 * a request that gets nothing is blocked. */
static void alloc_grant(const struct pipe_cfg *c, const struct pipe_net *net,
			const struct pipe_flows *fl, const struct pipe_policy_cfg *pc,
			const struct pipe_cba_label *lab, struct alloc_ws *w,
			struct pipe_alloc *out)
{
	int shift = pc->policy == PIPE_POLICY_CBA_SHIFT;
	uint32_t *order = w->order, nord = w->nord;

	for (uint32_t a = 1; a < nord; a++)
		for (uint32_t b = a; b > 0; b--) {
			uint32_t x = order[b - 1], y = order[b];

			if (out->wait[y] > out->wait[x] ||
			    (out->wait[y] == out->wait[x] && y < x)) {
				order[b - 1] = y;
				order[b] = x;
			} else {
				break;
			}
		}
	for (uint32_t k = 0; k < nord; k++) {
		uint32_t i = order[k];
		int l = fl->f[i].link;
		uint64_t cap = flow_cap(net, fl, i), delta = out->req[i] - out->rate[i], got;

		if ((l < 0 || !cap || w->used[l] + delta <= cap) && !out->gave[i]) {
			if (l >= 0)
				w->used[l] += delta;
			out->rate[i] = out->req[i];
			w->gained[i] = 1;
			continue;
		}
		got = 0;
		if (shift && !out->gave[i]) { /* the free capacity, then the donors */
			got = w->used[l] < cap ? cap - w->used[l] : 0;
			w->used[l] += got;
			if (lab && out->cb[i] && got < delta)
				got += shift_fund(c, net, fl, pc, lab, i, l, delta - got, w->step,
						  w->lo, w->gained, out);
			out->rate[i] += got;
			w->gained[i] = got > 0;
		}
		if (!got) {
			out->blocked[i] = 1;
			out->nblocked++;
		}
	}
}

/* cba-shift: a flow whose rate moves against its last move (gives after
 * gaining, gains after giving) halves its step, so two flows that would
 * trade a step back and forth settle between the two rates. */
static void shift_steps(const struct pipe_flows *fl, const struct pipe_alloc *prev,
			struct pipe_alloc *out)
{
	for (uint32_t i = 0; i < fl->n; i++) {
		int8_t d = out->rate[i] > prev->rate[i] ? 1 : out->rate[i] < prev->rate[i] ? -1 : 0;

		if (d && d == -out->dir[i])
			out->step[i] /= 2;
		if (d)
			out->dir[i] = d;
	}
}

int pipe_policy_alloc(const struct pipe_cfg *c, const struct pipe_net *net,
		      const struct pipe_flows *fl, const struct pipe_policy_cfg *pc,
		      const struct pipe_alloc *prev, const struct pipe_cba_label *lab,
		      struct pipe_alloc *out, char *why, size_t whylen)
{
	struct alloc_ws w = {0};
	const char *name = pipe_policy_name(pc->policy);
	int shift = pc->policy == PIPE_POLICY_CBA_SHIFT, rc;

	memset(out, 0, sizeof(*out));
	out->n = fl->n;
	equal_shares(c, net, fl, w.share);
	switch (pc->policy) {
	case PIPE_POLICY_NONE: return 0;
	case PIPE_POLICY_EQUAL:
		for (uint32_t i = 0; i < fl->n; i++)
			out->rate[i] = out->req[i] = w.share[i];
		return 0;
	case PIPE_POLICY_STATIC: return alloc_static(net, fl, pc, &w, out, why, whylen);
	case PIPE_POLICY_CBA:
	case PIPE_POLICY_CBA_SHIFT: break;
	default: sdr_link_seterr(why, whylen, "unknown policy %d", (int)pc->policy); return -EINVAL;
	}
	if (!(pc->shift_margin >= 0)) {
		sdr_link_seterr(why, whylen, "%s: shift margin %g s", name, pc->shift_margin);
		return -EINVAL;
	}
	if (!prev) { /* round 0: equal */
		for (uint32_t i = 0; i < fl->n; i++)
			out->rate[i] = out->req[i] = w.share[i];
		return 0;
	}
	if (prev->n != fl->n) {
		sdr_link_seterr(why, whylen, "%s: previous round has %u flows, now %u", name,
				prev->n, fl->n);
		return -EINVAL;
	}
	if (lab)
		pipe_cba_flow_labels(c, fl, lab, out->cb, out->wait);
	memcpy(out->base_rate, prev->rate, sizeof(out->base_rate));
	out->base_time = prev->iter_time;
	if ((rc = alloc_requests(c, net, fl, pc, prev, &w, out, why, whylen)))
		return rc;
	/* donors' slack at the rate they ran with */
	for (uint32_t i = 0; i < fl->n && shift; i++)
		out->slack[i] = lab ? pipe_cba_slack(c, net, fl, lab, i, prev->rate[i], 0, NULL)
				    : NAN;
	/* cba-shift: the last round's moves made their iteration slower: undo */
	if (!(shift && shift_undo(prev, out))) {
		alloc_fit(net, fl, &w, out);
		alloc_grant(c, net, fl, pc, lab, &w, out);
	}
	if (shift)
		shift_steps(fl, prev, out);
	return 0;
}

/* ---------------- prediction over iterations ---------------- */

int pipe_predict(const struct pipe_cfg *c, const struct pipe_prog *p,
		 const struct pipe_policy_cfg *pc, uint32_t iters, struct pipe_pred_iter *it,
		 struct pipe_des_out *last, char *why, size_t whylen)
{
	struct pipe_net tmp;
	const struct pipe_net *net = pipe_net_of(c, &tmp);
	struct pipe_flows fl;
	struct pipe_cba_label *lab = calloc((size_t)PIPE_NCHAN(c->stages) * c->micro, sizeof(*lab));
	struct pipe_des_out out = {0};
	int rc = 0;

	if (!lab)
		return -ENOMEM;
	if (last)
		memset(last, 0, sizeof(*last));
	pipe_flows_get(c, net, &fl);
	for (uint32_t i = 0; i < iters && !rc; i++) {
		struct pipe_metrics m;
		int n;

		rc = pipe_policy_alloc(c, net, &fl, pc, i ? &it[i - 1].alloc : NULL, i ? lab : NULL,
				       &it[i].alloc, why, whylen);
		if (rc)
			break;
		rc = pipe_des_run_rates(c, p, pc->policy == PIPE_POLICY_NONE ? NULL : &it[i].alloc,
					&out);
		if (rc) {
			sdr_link_seterr(why, whylen, "DES: %s", strerror(-rc));
			break;
		}
		pipe_metrics_get(c, &out.ev, 0, &m);
		it[i].iter_time = it[i].alloc.iter_time = m.iter_time;
		it[i].bubble = m.bubble_all;
		n = pipe_cba_label(c, &out.ev, 0, pc->intra_lat, lab);
		if (n < 0) {
			rc = n;
			sdr_link_seterr(why, whylen, "labels: %s", strerror(-rc));
			pipe_des_free(&out);
			break;
		}
		it[i].ncb = (uint32_t)n;
		if (last && i + 1 == iters)
			*last = out;
		else
			pipe_des_free(&out);
	}
	free(lab);
	return rc;
}
