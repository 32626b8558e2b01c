/* SPDX-License-Identifier: BSD-3-Clause */
/* AUTO reliability: estimates and per-message pick (sdr_auto.h). */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "sdr_abi.h"
#include "sdr_auto.h"

void sdr_auto_cfg_default(struct sdr_auto_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->alpha = 0.5;
	cfg->beta = -1;
	cfg->obj = SDR_MODEL_OBJ_MEAN;
	cfg->initial = (struct sdr_scheme){.rel = SDR_REL_SR};
	cfg->min_rtt_samples = 1;
	cfg->prior_loss = 1e-3;
	cfg->prior_chunks = 1000;
	cfg->half_life_chunks = 20000;
}

int sdr_auto_init(struct sdr_auto *a, const struct sdr_auto_cfg *cfg)
{
	struct sdr_model_params prm;
	struct sdr_model_result res;

	if (!a || !cfg || !(cfg->rate_bps > 0) || !cfg->chunk_bytes || !cfg->pkts_per_chunk ||
	    !(cfg->alpha >= 0) || cfg->ncands > SDR_AUTO_MAX_CANDS ||
	    !(cfg->prior_loss >= 0 && cfg->prior_loss < 1) || !(cfg->prior_chunks >= 0) ||
	    !(cfg->half_life_chunks > 0))
		return -EINVAL;
	memset(a, 0, sizeof(*a));
	a->cfg = *cfg;
	if (!cfg->ncands) {
		for (uint32_t i = 0; i < SDR_MODEL_N_DEFAULT_SCHEMES; i++)
			a->cfg.cands[i] = sdr_model_default_schemes[i];
		a->cfg.ncands = SDR_MODEL_N_DEFAULT_SCHEMES;
	}
	/* every candidate (and the initial scheme) must be one the model takes */
	memset(&prm, 0, sizeof(prm));
	prm.msg_bytes = cfg->chunk_bytes;
	prm.chunk_bytes = cfg->chunk_bytes;
	prm.pkts_per_chunk = 1;
	prm.rate_bps = cfg->rate_bps;
	prm.rtt_s = 0.001;
	prm.alpha = cfg->alpha;
	prm.beta = cfg->beta;
	for (uint32_t i = 0; i <= a->cfg.ncands; i++) {
		prm.scheme = i < a->cfg.ncands ? a->cfg.cands[i] : cfg->initial;
		if (sdr_model_eval(&prm, &res))
			return -EINVAL;
	}
	a->lost = cfg->prior_loss * cfg->prior_chunks;
	a->sent = cfg->prior_chunks;
	a->last = cfg->initial;
	return 0;
}

void sdr_auto_rtt(struct sdr_auto *a, double r)
{
	if (!(r > 0) || isinf(r))
		return;
	if (!a->rtt_samples) {
		a->srtt = r;
		a->rttvar = r / 2;
	} else {
		a->rttvar = 0.75 * a->rttvar + 0.25 * fabs(a->srtt - r);
		a->srtt = 0.875 * a->srtt + 0.125 * r;
	}
	a->rtt_samples++;
}

void sdr_auto_chunks(struct sdr_auto *a, uint64_t sent, uint64_t lost)
{
	double d;

	if (!sent)
		return;
	if (lost > sent)
		lost = sent;
	/* decay the history by 2^(-sent / half-life), then add this message */
	d = exp2(-(double)sent / a->cfg.half_life_chunks);
	a->lost = a->lost * d + (double)lost;
	a->sent = a->sent * d + (double)sent;
	a->chunks_seen += sent;
}

double sdr_auto_loss(const struct sdr_auto *a)
{
	return a->sent > 0 ? a->lost / a->sent : a->cfg.prior_loss;
}

/* Quarter-octave class of a chunk count: floor(4 log2(chunks)). */
static unsigned size_class(uint64_t chunks)
{
	unsigned c = (unsigned)floor(4.0 * log2((double)chunks));
	return c < SDR_AUTO_CLASSES ? c : SDR_AUTO_CLASSES - 1;
}

static int moved(double now, double then, double tol)
{
	return fabs(now - then) > tol * then;
}

int sdr_auto_pick(struct sdr_auto *a, uint64_t msg_bytes, struct sdr_scheme *out)
{
	struct sdr_model_result res[SDR_AUTO_MAX_CANDS];
	struct sdr_model_params prm;
	struct sdr_auto_class *c;
	double loss = sdr_auto_loss(a);
	uint64_t chunks;
	size_t best;

	if (!msg_bytes)
		msg_bytes = 1;
	if (a->rtt_samples < a->cfg.min_rtt_samples || !a->rtt_samples)
		goto initial;
	chunks = (msg_bytes + a->cfg.chunk_bytes - 1) / a->cfg.chunk_bytes;
	c = &a->cls[size_class(chunks)];
	/* loss: relative tolerance, but never re-evaluate for moves below
	 * 1e-5 absolute (the model is flat there) */
	if (!c->valid || moved(a->srtt, c->srtt, 0.10) ||
	    (moved(loss, c->loss, 0.20) && fabs(loss - c->loss) > 1e-5)) {
		memset(&prm, 0, sizeof(prm));
		prm.msg_bytes = msg_bytes;
		prm.chunk_bytes = a->cfg.chunk_bytes;
		prm.pkts_per_chunk = 1; /* loss is per chunk already */
		prm.rate_bps = a->cfg.rate_bps;
		prm.rtt_s = a->srtt;
		prm.pkt_loss = loss < 0.5 ? loss : 0.5;
		prm.alpha = a->cfg.alpha;
		prm.beta = a->cfg.beta;
		a->evals++;
		/* (a message of fewer than k chunks is one short submessage
		 * with parity in proportion: the model counts it as the
		 * firmware sends it, sdr_ec_sub_parity()) */
		if (sdr_model_pick(&prm, a->cfg.cands, a->cfg.ncands, a->cfg.obj, res, &best)) {
			a->eval_errors++;
			goto initial;
		}
		c->srtt = a->srtt;
		c->loss = loss;
		c->pick = (uint8_t)best;
		c->mean = res[best].mean;
		c->p999 = res[best].p999;
		c->valid = 1;
	}
	if (!a->picks[c->pick] || msg_bytes < a->pick_min[c->pick])
		a->pick_min[c->pick] = msg_bytes;
	if (msg_bytes > a->pick_max[c->pick])
		a->pick_max[c->pick] = msg_bytes;
	a->picks[c->pick]++;
	a->last = a->cfg.cands[c->pick];
	a->last_mean = c->mean;
	a->last_p999 = c->p999;
	*out = a->last;
	return c->pick;
initial:
	a->initial_picks++;
	a->last = a->cfg.initial;
	a->last_mean = a->last_p999 = 0;
	*out = a->last;
	return -1;
}

void sdr_auto_set_rate(struct sdr_auto *a, double rate_bps)
{
	if (!(rate_bps > 0) || isinf(rate_bps) || rate_bps == a->cfg.rate_bps)
		return;
	a->cfg.rate_bps = rate_bps;
	for (unsigned i = 0; i < SDR_AUTO_CLASSES; i++)
		a->cls[i].valid = 0;
}

int sdr_auto_schemes_parse(const char *s, struct sdr_scheme *cands, uint32_t *n)
{
	char item[32];
	uint32_t cnt = 0;

	if (!s || !cands || !n || !*s)
		return -EINVAL;
	for (;;) {
		const char *end = strchr(s, ',');
		size_t len = end ? (size_t)(end - s) : strlen(s);
		struct sdr_scheme x;

		if (!len || len >= sizeof(item))
			return -EINVAL;
		memcpy(item, s, len);
		item[len] = 0;
		if (sdr_scheme_parse(item, SDR_SCHEME_SR_EC, NULL, &x))
			return -EINVAL;
		for (uint32_t i = 0; i < cnt; i++)
			if (cands[i].rel == x.rel && cands[i].code == x.code && cands[i].k == x.k &&
			    cands[i].m == x.m)
				return -EINVAL;
		if (cnt == SDR_AUTO_MAX_CANDS)
			return -E2BIG;
		cands[cnt++] = x;
		if (!end)
			break;
		s = end + 1;
	}
	*n = cnt;
	return 0;
}
