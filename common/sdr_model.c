/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion-time model (see sdr_model.h and docs/model.md).
 *
 * SR distribution. With u = t - M*T and d = M - i (0..M-1), chunk i has
 * X_i <= t iff Y_i - 1 <= floor((u + d*T) / O). Let A_r(u) be the number of
 * chunks that have not yet reached retransmission round r at u:
 *     A_r(u) = clamp(ceil((r*O - u) / T), 0, M).
 * Then log P(max X <= t) = sum_{r>=1} w_r A_r(u), with
 *     c_r = log(1 - p^(r+1)),  w_r = c_(r-1) - c_r  (<= 0),
 * and rounds past R (where M p^(R+1) < 1e-16) are treated as certain.
 *
 * Exact mean. E[max X] = M*T + integral_0^inf (1 - F(u)) du. Write
 * u = n*T + phi, phi in [0, T). With r*O = q_r*T + ph_r*T (ph_r in [0,1)),
 * A_r(n*T + phi) = clamp(q_r + [phi < ph_r] - n, 0, M), which is constant in
 * phi between consecutive phases ph_r. For each such phase interval the sum
 * over n is piecewise a geometric series (log F is linear in n between the
 * points K_r - M and K_r), summed in closed form. Cost O(R^3), independent
 * of M and of the ratio O/T.
 */
#include "sdr_model.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Tail mass below which SR rounds and binomial terms are dropped. */
#define SDR_MODEL_TAIL 1e-16
/* A fallback mixture with more distinct chunk counts than this evaluates the
 * SR mean on a grid of this many points and interpolates linearly. */
#ifndef SDR_MODEL_MIX_DIRECT
#define SDR_MODEL_MIX_DIRECT 128
#endif

const struct sdr_scheme sdr_model_default_schemes[SDR_MODEL_N_DEFAULT_SCHEMES] = {
	{SDR_REL_SR, 0, 0, 0},           {SDR_REL_EC, SDR_EC_RS, 32, 8},
	{SDR_REL_EC, SDR_EC_RS, 16, 4},  {SDR_REL_EC, SDR_EC_RS, 8, 2},
	{SDR_REL_EC, SDR_EC_XOR, 32, 8},
};

/* ------------------------------------------------------------------ */
/* loss probabilities                                                   */

double sdr_model_p_chunk(double p, uint32_t n)
{
	if (!(p >= 0.0 && p <= 1.0))
		return NAN;
	if (p == 1.0)
		return n ? 1.0 : 0.0;
	return -expm1((double)n * log1p(-p));
}

/* sum_{i=j0..n} C(n,i) p^i (1-p)^(n-i), p in (0,1) */
static double binom_tail(uint32_t n, uint32_t j0, double p)
{
	double lp = log(p), lq = log1p(-p), ln = lgamma((double)n + 1.0);
	double sum = 0.0;

	for (uint32_t i = j0; i <= n; i++) {
		double term = exp(ln - lgamma((double)i + 1.0) - lgamma((double)(n - i) + 1.0) +
				  (double)i * lp + (double)(n - i) * lq);
		sum += term;
		/* terms fall geometrically once past the mode */
		if (term < sum * 1e-20 && (double)i > (double)n * p + 1.0)
			break;
	}
	return sum > 1.0 ? 1.0 : sum;
}

/* SR, or an EC code within the model's limits */
static int scheme_ok(const struct sdr_scheme *s)
{
	return sdr_scheme_check(s, SDR_SCHEME_MODEL | SDR_SCHEME_SR_EC) == 0;
}

/* fail and success probabilities, each computed directly (no 1 - x) */
static int p_ec_both(enum sdr_ec_code code, uint32_t k, uint32_t m, double p, double *fail,
		     double *ok)
{
	struct sdr_scheme s = {SDR_REL_EC, (uint8_t)code, (uint16_t)k, (uint16_t)m};

	if (code > 255 || k > 65535 || m > 65535 || !scheme_ok(&s) || !(p >= 0.0 && p <= 1.0))
		return -EINVAL;
	if (p == 0.0 || p == 1.0) {
		*fail = p;
		*ok = 1.0 - p;
		return 0;
	}
	if (code == SDR_EC_RS) {
		*fail = binom_tail(k + m, m + 1, p);
		/* head by symmetry: P(<= m of n lost) = P(>= k of n kept) */
		*ok = binom_tail(k + m, k, 1.0 - p);
		return 0;
	}
	/* XOR: group g = data j with j mod m == g, plus parity g */
	double log_ok = 0.0;
	for (uint32_t g = 0; g < m; g++) {
		uint32_t n = k / m + (g < k % m ? 1u : 0u) + 1u;
		/* P(0 or 1 of n lost) = (1-p)^(n-1) (1 + (n-1) p) */
		double lok = (double)(n - 1) * log1p(-p) + log1p((double)(n - 1) * p);
		double f = binom_tail(n, 2, p);

		log_ok += f < 0.5 ? log1p(-f) : lok;
	}
	*fail = -expm1(log_ok);
	*ok = exp(log_ok);
	return 0;
}

double sdr_model_p_ec_fail(enum sdr_ec_code code, uint32_t k, uint32_t m, double p)
{
	double f, ok;

	return p_ec_both(code, k, m, p, &f, &ok) ? NAN : f;
}

double sdr_model_p_ec(enum sdr_ec_code code, uint32_t k, uint32_t m, double p)
{
	double f, ok;

	return p_ec_both(code, k, m, p, &f, &ok) ? NAN : ok;
}

/* ------------------------------------------------------------------ */
/* SR: distribution of max X over the lattice                           */

struct sr_ctx {
	double t, o;
	unsigned rounds;                     /* R; 0 when p_chunk == 0 */
	double c0;                           /* log(1 - p) */
	double w[SDR_MODEL_MAX_ROUNDS + 1];  /* w[r], r = 1..R */
	double q[SDR_MODEL_MAX_ROUNDS + 1];  /* floor(r O / T) */
	double ph[SDR_MODEL_MAX_ROUNDS + 1]; /* r O / T - q[r], in [0, 1) */
};

static int sr_ctx_init(struct sr_ctx *c, uint64_t max_chunks, double t, double o, double pc)
{
	if (!(t > 0.0) || !isfinite(t) || !(o > 0.0) || !isfinite(o) || !(pc >= 0.0 && pc < 1.0) ||
	    max_chunks > SDR_MODEL_MAX_CHUNKS)
		return -EINVAL;
	c->t = t;
	c->o = o;
	c->rounds = 0;
	c->c0 = log1p(-pc);
	if (pc == 0.0 || max_chunks == 0)
		return 0;

	/* smallest R with M p^(R+1) <= tail */
	double need = (log(SDR_MODEL_TAIL) - log((double)max_chunks)) / log(pc) - 1.0;
	if (!(need <= (double)SDR_MODEL_MAX_ROUNDS))
		return -ERANGE;
	unsigned r_max = need < 1.0 ? 1u : (unsigned)ceil(need);

	double lp = log(pc), prev = c->c0;
	for (unsigned r = 1; r <= r_max; r++) {
		double cr = r < r_max ? log1p(-exp((double)(r + 1) * lp)) : 0.0;
		double x = (double)r * o / t;

		c->w[r] = prev - cr;
		prev = cr;
		c->q[r] = floor(x);
		c->ph[r] = x - c->q[r];
	}
	c->rounds = r_max;
	return 0;
}

/* F(t) = P(max X <= t) for m chunks */
static double sr_cdf(const struct sr_ctx *c, uint64_t m, double t)
{
	if (m == 0)
		return t >= 0.0 ? 1.0 : 0.0;
	double u = t - (double)m * c->t;
	if (u < 0.0)
		return 0.0;
	double lf = 0.0, mm = (double)m;
	for (unsigned r = 1; r <= c->rounds; r++) {
		double a = ceil(((double)r * c->o - u) / c->t);

		if (a <= 0.0)
			continue;
		lf += c->w[r] * (a > mm ? mm : a);
	}
	return exp(lf);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* sum_{i=0..n-1} (1 - exp(g0 + s i)), s >= 0, g0 + s n <= 0 (approximately) */
static double geo_gap(double n, double g0, double s)
{
	if (n <= 8.0) {
		double sum = 0.0;
		for (double i = 0.0; i < n; i += 1.0)
			sum += -expm1(g0 + s * i);
		return sum;
	}
	if (s * n < 1e-300)
		return n * -expm1(g0);
	double e = exp(g0 + s * n) * -expm1(-s * n) / expm1(s);
	double r = n - e;
	return r > 0.0 ? r : 0.0;
}

/* sum_{n>=0} (1 - exp(sum_r w_r clamp(K_r - n, 0, M))) */
static double sr_sum_n(const struct sr_ctx *c, const double *kr, double mm)
{
	double bp[2 * SDR_MODEL_MAX_ROUNDS + 2];
	unsigned nb = 0, R = c->rounds;
	double end = 0.0;

	bp[nb++] = 0.0;
	for (unsigned r = 1; r <= R; r++) {
		if (kr[r] - mm > 0.0)
			bp[nb++] = kr[r] - mm;
		if (kr[r] > 0.0)
			bp[nb++] = kr[r];
		if (kr[r] > end)
			end = kr[r];
	}
	if (end <= 0.0)
		return 0.0;
	qsort(bp, nb, sizeof(bp[0]), cmp_double);

	double sum = 0.0;
	for (unsigned a = 0; a + 1 < nb; a++) {
		double b0 = bp[a], b1 = bp[a + 1];

		if (b1 <= b0)
			continue;
		if (b0 >= end)
			break;
		double g0 = 0.0, s = 0.0;
		for (unsigned r = 1; r <= R; r++) {
			double v = kr[r] - b0;

			if (v <= 0.0)
				continue;
			g0 += c->w[r] * (v > mm ? mm : v);
			if (kr[r] - mm <= b0 && kr[r] >= b1)
				s -= c->w[r];
		}
		sum += geo_gap(b1 - b0, g0, s);
	}
	return sum;
}

/* E[max X] for m chunks */
static double sr_max_mean(const struct sr_ctx *c, uint64_t m)
{
	if (m == 0)
		return 0.0;
	double base = (double)m * c->t;
	unsigned R = c->rounds;
	if (R == 0)
		return base;

	double psi[SDR_MODEL_MAX_ROUNDS + 2], kr[SDR_MODEL_MAX_ROUNDS + 1];
	unsigned np = 0;

	psi[np++] = 0.0;
	for (unsigned r = 1; r <= R; r++)
		psi[np++] = c->ph[r];
	qsort(psi, np, sizeof(psi[0]), cmp_double);

	double integral = 0.0, mm = (double)m;
	for (unsigned j = 0; j < np; j++) {
		double hi = j + 1 < np ? psi[j + 1] : 1.0;
		double len = hi - psi[j];

		if (len <= 0.0)
			continue;
		for (unsigned r = 1; r <= R; r++)
			kr[r] = c->q[r] + (c->ph[r] > psi[j] ? 1.0 : 0.0);
		integral += len * sr_sum_n(c, kr, mm);
	}
	return base + integral * c->t;
}

/* smallest t with P(max X <= t) >= q */
static double sr_max_quantile(const struct sr_ctx *c, uint64_t m, double q)
{
	double base = (double)m * c->t;

	if (m == 0 || sr_cdf(c, m, base) >= q)
		return base;
	double lo = base, hi = base + (double)c->rounds * c->o + c->t;
	for (int it = 0; it < 200 && hi - lo > 1e-14 * hi; it++) {
		double mid = 0.5 * (lo + hi);

		if (sr_cdf(c, m, mid) >= q)
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

int sdr_model_sr_max_mean(uint64_t chunks, double t_inj, double o, double p_chunk, double *out)
{
	struct sr_ctx c;
	int rc;

	if (out == NULL)
		return -EINVAL;
	rc = sr_ctx_init(&c, chunks, t_inj, o, p_chunk);
	if (rc)
		return rc;
	*out = sr_max_mean(&c, chunks);
	return 0;
}

int sdr_model_sr_max_cdf(uint64_t chunks, double t_inj, double o, double p_chunk, double t,
			 double *out)
{
	struct sr_ctx c;
	int rc;

	if (out == NULL || isnan(t))
		return -EINVAL;
	rc = sr_ctx_init(&c, chunks, t_inj, o, p_chunk);
	if (rc)
		return rc;
	*out = sr_cdf(&c, chunks, t);
	return 0;
}

/* ------------------------------------------------------------------ */
/* EC: fallback mixture                                                 */

/* Failures of the L_full full submessages ~ Binomial(L_full, q_full); the
 * short last submessage (k' data chunks) fails with q_part. The fallback
 * resends f*k + b*k' data chunks. */
struct ec_mix {
	uint64_t l_full, k, k_part;
	double q_full, q_part;
	uint64_t lo, hi; /* support of f */
	double ln_fact_l, lq, lq1;
};

static double mix_pmf(const struct ec_mix *x, uint64_t f)
{
	if (x->q_full <= 0.0)
		return f == 0 ? 1.0 : 0.0;
	if (x->q_full >= 1.0)
		return f == x->l_full ? 1.0 : 0.0;
	return exp(x->ln_fact_l - lgamma((double)f + 1.0) - lgamma((double)(x->l_full - f) + 1.0) +
		   (double)f * x->lq + (double)(x->l_full - f) * x->lq1);
}

static void mix_init(struct ec_mix *x)
{
	x->ln_fact_l = lgamma((double)x->l_full + 1.0);
	x->lq = x->q_full > 0.0 ? log(x->q_full) : -INFINITY;
	x->lq1 = x->q_full < 1.0 ? log1p(-x->q_full) : -INFINITY;
	if (x->q_full <= 0.0 || x->l_full == 0) {
		x->lo = x->hi = 0;
		return;
	}
	if (x->q_full >= 1.0) {
		x->lo = x->hi = x->l_full;
		return;
	}
	double mode_d = floor(((double)x->l_full + 1.0) * x->q_full);
	uint64_t mode = mode_d > (double)x->l_full ? x->l_full : (uint64_t)mode_d;
	x->lo = mode;
	while (x->lo > 0 && mix_pmf(x, x->lo - 1) > SDR_MODEL_TAIL * 1e-2)
		x->lo--;
	x->hi = mode;
	while (x->hi < x->l_full && mix_pmf(x, x->hi + 1) > SDR_MODEL_TAIL * 1e-2)
		x->hi++;
}

struct ec_eval {
	struct sr_ctx sr;
	struct ec_mix mix;
	double t_inj, rtt, beta;
	double base; /* inj + RTT */
	double p0;   /* P(no submessage fails) */
	double p_fb;
};

/* P(T_EC <= t) */
static double ec_cdf(const struct ec_eval *e, double t)
{
	double cdf = t >= e->base ? e->p0 : 0.0;
	double off = e->base + (1.0 + e->beta) * e->rtt;

	if (t < off)
		return cdf;
	for (uint64_t f = e->mix.lo; f <= e->mix.hi; f++) {
		double pf = mix_pmf(&e->mix, f);

		for (int b = 0; b < 2; b++) {
			double pb = b ? e->mix.q_part : 1.0 - e->mix.q_part;
			uint64_t c = f * e->mix.k + (b ? e->mix.k_part : 0);

			if (c == 0 || pf * pb <= 0.0)
				continue;
			cdf += pf * pb * sr_cdf(&e->sr, c, t - off);
		}
	}
	return cdf;
}

static double ec_quantile(const struct ec_eval *e, double q)
{
	if (e->p0 >= q)
		return e->base;
	double lo = e->base + (1.0 + e->beta) * e->rtt;
	double hi = lo + (double)(e->mix.hi * e->mix.k + e->mix.k_part) * e->t_inj +
		    (double)e->sr.rounds * e->sr.o + e->t_inj;
	for (int it = 0; it < 200 && hi - lo > 1e-14 * hi; it++) {
		double mid = 0.5 * (lo + hi);

		if (ec_cdf(e, mid) >= q)
			hi = mid;
		else
			lo = mid;
	}
	return hi;
}

/* sum over the fallback mixture of P(f, b) * E[max X(c)] */
static double ec_mix_sr_mean(const struct ec_eval *e)
{
	const struct ec_mix *x = &e->mix;
	uint64_t nf = x->hi - x->lo + 1;
	uint64_t c_min = x->lo * x->k, c_max = x->hi * x->k + x->k_part;
	int direct = nf * (x->k_part ? 2 : 1) <= SDR_MODEL_MIX_DIRECT;
	double grid[SDR_MODEL_MIX_DIRECT + 1];
	double step = (double)(c_max - c_min) / SDR_MODEL_MIX_DIRECT;

	if (!direct)
		for (unsigned g = 0; g <= SDR_MODEL_MIX_DIRECT; g++)
			grid[g] = sr_max_mean(&e->sr, c_min + (uint64_t)llround(g * step));

	double sum = 0.0;
	for (uint64_t f = x->lo; f <= x->hi; f++) {
		double pf = mix_pmf(x, f);

		for (int b = 0; b < 2; b++) {
			double pb = b ? x->q_part : 1.0 - x->q_part;
			uint64_t c = f * x->k + (b ? x->k_part : 0);
			double v;

			if (c == 0 || pf * pb <= 0.0)
				continue;
			if (direct) {
				v = sr_max_mean(&e->sr, c);
			} else {
				double pos = (double)(c - c_min) / step;
				unsigned g = pos >= SDR_MODEL_MIX_DIRECT ? SDR_MODEL_MIX_DIRECT - 1
									 : (unsigned)pos;
				double c0 = (double)(c_min + (uint64_t)llround(g * step));
				double c1 = (double)(c_min + (uint64_t)llround((g + 1) * step));
				double fr = c1 > c0 ? ((double)c - c0) / (c1 - c0) : 0.0;
				v = grid[g] + fr * (grid[g + 1] - grid[g]);
			}
			sum += pf * pb * v;
		}
	}
	return sum;
}

/* ------------------------------------------------------------------ */
/* public evaluation                                                    */

struct derived {
	uint64_t m;
	uint32_t n;
	double t, pc, rto, o, beta;
};

static int derive(const struct sdr_model_params *p, struct derived *d)
{
	if (p == NULL || p->msg_bytes == 0 || p->chunk_bytes == 0)
		return -EINVAL;
	if (!(p->rate_bps > 0.0) || !isfinite(p->rate_bps) || !(p->rtt_s >= 0.0) ||
	    !isfinite(p->rtt_s) || !(p->pkt_loss >= 0.0 && p->pkt_loss < 1.0) ||
	    !(p->alpha >= 0.0) || !isfinite(p->alpha) || isnan(p->beta) || !isfinite(p->beta))
		return -EINVAL;
	d->m = p->msg_bytes / p->chunk_bytes + (p->msg_bytes % p->chunk_bytes ? 1 : 0);
	if (d->m > SDR_MODEL_MAX_CHUNKS)
		return -EINVAL;
	d->n = p->pkts_per_chunk
		       ? p->pkts_per_chunk
		       : (p->chunk_bytes + SDR_MODEL_MTU_DEFAULT - 1) / SDR_MODEL_MTU_DEFAULT;
	d->t = (double)p->chunk_bytes * 8.0 / p->rate_bps;
	if (!(d->t > 0.0) || !isfinite(d->t))
		return -EINVAL;
	d->pc = sdr_model_p_chunk(p->pkt_loss, d->n);
	if (!(d->pc < 1.0))
		return -ERANGE;
	d->rto = (1.0 + p->alpha) * p->rtt_s;
	d->o = d->rto + d->t;
	d->beta = p->beta < 0.0 ? 0.5 * p->alpha : p->beta;
	return 0;
}

static int eval_sr(const struct derived *d, const struct sdr_model_params *p,
		   struct sdr_model_result *res)
{
	struct sr_ctx c;
	int rc = sr_ctx_init(&c, d->m, d->t, d->o, d->pc);

	if (rc)
		return rc;
	res->p_ec = 1.0;
	res->mean = sr_max_mean(&c, d->m) + p->rtt_s;
	res->mean_paper = res->mean;
	res->p99 = sr_max_quantile(&c, d->m, 0.99) + p->rtt_s;
	res->p999 = sr_max_quantile(&c, d->m, 0.999) + p->rtt_s;
	return 0;
}

static int ec_setup(const struct derived *d, const struct sdr_model_params *p,
		    struct sdr_model_result *res, struct ec_eval *e)
{
	const struct sdr_scheme *s = &p->scheme;
	uint64_t k = s->k, m = s->m;
	uint64_t l_full = d->m / k, k_part = d->m % k;
	/* (the short last submessage's parity, as the firmware sends it) */
	uint64_t m_part = sdr_ec_sub_parity(s->code, s->k, s->m, (uint32_t)k_part);
	uint64_t parity = l_full * m + m_part;
	int rc;

	rc = sr_ctx_init(&e->sr, d->m, d->t, d->o, d->pc);
	if (rc)
		return rc;
	e->mix.l_full = l_full;
	e->mix.k = k;
	e->mix.k_part = k_part;
	e->mix.q_full = sdr_model_p_ec_fail(s->code, s->k, s->m, d->pc);
	e->mix.q_part = k_part ? sdr_model_p_ec_fail(s->code, (uint32_t)k_part, (uint32_t)m_part,
						     d->pc)
			       : 0.0;
	if (isnan(e->mix.q_full) || isnan(e->mix.q_part))
		return -EINVAL;
	mix_init(&e->mix);
	e->t_inj = d->t;
	e->rtt = p->rtt_s;
	e->beta = d->beta;
	e->base = (double)(d->m + parity) * d->t + p->rtt_s;
	double lp0 = (double)l_full * log1p(-e->mix.q_full) + log1p(-e->mix.q_part);
	e->p0 = exp(lp0);
	e->p_fb = -expm1(lp0);

	res->parity_chunks = parity;
	res->submsgs = l_full + (k_part ? 1 : 0);
	res->fto = (double)(d->m + parity) * d->t + d->beta * p->rtt_s;
	res->p_ec = 1.0 - e->mix.q_full;
	res->p_fallback = e->p_fb;
	return 0;
}

static int eval_ec(const struct derived *d, const struct sdr_model_params *p,
		   struct sdr_model_result *res)
{
	struct ec_eval e;
	int rc = ec_setup(d, p, res, &e);

	if (rc)
		return rc;
	double inj = e.base - p->rtt_s, fb_wait = (1.0 + d->beta) * p->rtt_s;

	res->mean = e.base + e.p_fb * fb_wait + ec_mix_sr_mean(&e);

	/* The SDR-RDMA paper's EC bound (docs/papers.md §1.4):
	 * inj + P_fb (RTT + beta RTT) + E[T_SR(E[failures] k)], where
	 * E[T_SR(x)] = E[max X(x)] + RTT, linear between integer chunk counts. */
	double x = (double)e.mix.l_full * e.mix.q_full * (double)e.mix.k +
		   e.mix.q_part * (double)e.mix.k_part;
	double x0 = floor(x), fr = x - x0;
	double sr0 = sr_max_mean(&e.sr, (uint64_t)x0);
	double sr1 = fr > 0.0 ? sr_max_mean(&e.sr, (uint64_t)x0 + 1) : sr0;
	res->mean_paper = inj + e.p_fb * fb_wait + p->rtt_s + sr0 + fr * (sr1 - sr0);

	res->p99 = ec_quantile(&e, 0.99);
	res->p999 = ec_quantile(&e, 0.999);
	return 0;
}

int sdr_model_eval(const struct sdr_model_params *prm, struct sdr_model_result *res)
{
	struct derived d;
	int rc;

	if (prm == NULL || res == NULL || !scheme_ok(&prm->scheme))
		return -EINVAL;
	rc = derive(prm, &d);
	if (rc)
		return rc;
	memset(res, 0, sizeof(*res));
	res->scheme = prm->scheme;
	res->chunks = d.m;
	res->pkts_per_chunk = d.n;
	res->t_inj = d.t;
	res->p_chunk = d.pc;
	res->rto = d.rto;
	res->beta = d.beta;
	res->exact_regime = (double)d.m * d.t <= d.rto;
	return prm->scheme.rel == SDR_REL_SR ? eval_sr(&d, prm, res) : eval_ec(&d, prm, res);
}

int sdr_model_quantile(const struct sdr_model_params *prm, double q, double *out)
{
	struct sdr_model_result res;
	struct derived d;
	int rc;

	if (prm == NULL || out == NULL || !(q > 0.0 && q < 1.0) || !scheme_ok(&prm->scheme))
		return -EINVAL;
	rc = derive(prm, &d);
	if (rc)
		return rc;
	if (prm->scheme.rel == SDR_REL_SR) {
		struct sr_ctx c;

		rc = sr_ctx_init(&c, d.m, d.t, d.o, d.pc);
		if (rc)
			return rc;
		*out = sr_max_quantile(&c, d.m, q) + prm->rtt_s;
		return 0;
	}
	struct ec_eval e;
	rc = ec_setup(&d, prm, &res, &e);
	if (rc)
		return rc;
	*out = ec_quantile(&e, q);
	return 0;
}

int sdr_model_pick(const struct sdr_model_params *prm, const struct sdr_scheme *cands, size_t n,
		   enum sdr_model_objective obj, struct sdr_model_result *results, size_t *best)
{
	struct sdr_model_params p;
	double best_v = INFINITY;
	size_t best_i = 0;

	if (prm == NULL || best == NULL || (obj != SDR_MODEL_OBJ_MEAN && obj != SDR_MODEL_OBJ_P999))
		return -EINVAL;
	if (cands == NULL) {
		cands = sdr_model_default_schemes;
		n = SDR_MODEL_N_DEFAULT_SCHEMES;
	}
	if (n == 0)
		return -EINVAL;
	p = *prm;
	for (size_t i = 0; i < n; i++) {
		struct sdr_model_result r;
		int rc;

		p.scheme = cands[i];
		rc = sdr_model_eval(&p, &r);
		if (rc)
			return rc;
		if (results != NULL)
			results[i] = r;
		double v = obj == SDR_MODEL_OBJ_MEAN ? r.mean : r.p999;
		if (v < best_v) {
			best_v = v;
			best_i = i;
		}
	}
	*best = best_i;
	return 0;
}
