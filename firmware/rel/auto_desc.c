/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The AUTO scheme as the control plane sees it (layer rel): its counter
 * group, its options (typed sdr_opts entries), its stats line and keys, and
 * the ring of its destroyed QPs' decisions (auto_desc.h).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "auto_desc.h"
#include "sdr_opts.h"

#define AUTO_SCHEMES_DEFAULT "sr,rs:32:8,rs:16:4,rs:8:2,xor:32:8"
#define SDR_AUTO_CLOSED 8

SDR_QP_CTR_GROUP_DEFINE(auto, SDR_AUTO_QP_CTRS);

struct sdr_auto_opts sdr_auto_opts = {.obj = SDR_MODEL_OBJ_MEAN};
static int cands_given; /* --auto-schemes was given */

static int on_auto_schemes(const struct sdr_opt *o, const char *arg, void *ctx)
{
	(void)o;
	(void)ctx;
	if (sdr_auto_schemes_parse(arg, sdr_auto_opts.cands, &sdr_auto_opts.ncands)) {
		fprintf(stderr,
			"sdr-dpu: --auto-schemes: '%s' is not a list of at most %u"
			" distinct schemes sr, rs:K:M, xor:K:M (1 <= K <= 64,"
			" 1 <= M <= 32, XOR M <= K)\n",
			arg, SDR_AUTO_MAX_CANDS);
		return -2;
	}
	cands_given = 1;
	return 0;
}

static const struct sdr_opt_name objectives[] = {
	{"mean", SDR_MODEL_OBJ_MEAN}, {"p999", SDR_MODEL_OBJ_P999}, SDR_OPT_NAMES_END};

const struct sdr_opt sdr_auto_opt_table[] = {
	SDR_OPT_SECTION("\nAUTO (QPs with reliability AUTO pick SR or an EC code per message "
			"from the\nmeasured RTT and chunk loss; docs/reliability.md \"AUTO\"):"),
	{.name = "auto-schemes",
	 .arg = "LIST",
	 .fn = on_auto_schemes,
	 .help = "candidates, comma-separated: sr, rs:K:M, xor:K:M (1 <= K\n"
		 "<= 64, 1 <= M <= 32, XOR M <= K; at most 8)\n"
		 "(default " AUTO_SCHEMES_DEFAULT ")"},
	{.name = "auto-objective",
	 .arg = "O",
	 .kind = SDR_OPT_ENUM,
	 .names = objectives,
	 .var = &sdr_auto_opts.obj,
	 .help = "minimise the predicted mean or p999 completion time\n(default mean)"},
	SDR_OPT_END,
};

/* AUTO: the model must take every candidate (the parity pool is checked
 * when an AUTO QP is created, as the chunk size of a QP may differ) */
int sdr_auto_opts_check(const struct sdr_cfg *cfg)
{
	struct sdr_auto_opts *o = &sdr_auto_opts;
	struct sdr_auto_cfg ac;
	struct sdr_auto *a;
	int bad;

	if (!cands_given && sdr_auto_schemes_parse(AUTO_SCHEMES_DEFAULT, o->cands, &o->ncands))
		return -1; /* cannot happen */
	a = malloc(sizeof(*a));
	sdr_auto_cfg_default(&ac);
	ac.rate_bps = 1e9;
	ac.chunk_bytes = cfg->mtu * cfg->chunk_pkts;
	ac.pkts_per_chunk = cfg->chunk_pkts;
	ac.ncands = o->ncands;
	memcpy(ac.cands, o->cands, sizeof(ac.cands));
	bad = !a || sdr_auto_init(a, &ac) != 0;
	free(a);
	if (bad) {
		fprintf(stderr, "sdr-dpu: --auto-schemes: the completion-time model rejects"
				" a candidate\n");
		return -1;
	}
	o->max_m = 0;
	for (uint32_t i = 0; i < o->ncands; i++)
		if (o->cands[i].rel == SDR_REL_EC && o->cands[i].m > o->max_m)
			o->max_m = o->cands[i].m;
	return 0;
}

/* AUTO: the estimates and decisions of a QP (docs/reliability.md "AUTO").
 * Written by the worker; read here slightly stale, like the counters. */
struct auto_view {
	double srtt_us, rttvar_us, loss, last_mean_us, last_p999_us;
	uint64_t rtt_samples, chunks_seen, initial_picks, evals, eval_errors;
	char last[SDR_SCHEME_STR_MAX];
	char name[SDR_AUTO_MAX_CANDS][SDR_SCHEME_STR_MAX];
	uint64_t picks[SDR_AUTO_MAX_CANDS];
	uint64_t pmin[SDR_AUTO_MAX_CANDS], pmax[SDR_AUTO_MAX_CANDS];
	uint32_t ncands;
};

static void auto_view(const struct sdr_auto *a, struct auto_view *v)
{
	struct sdr_scheme last = a->last;

	memset(v, 0, sizeof(*v));
	v->srtt_us = a->srtt * 1e6;
	v->rttvar_us = a->rttvar * 1e6;
	v->rtt_samples = a->rtt_samples;
	v->loss = sdr_auto_loss(a);
	v->chunks_seen = a->chunks_seen;
	v->initial_picks = a->initial_picks;
	v->evals = a->evals;
	v->eval_errors = a->eval_errors;
	v->last_mean_us = a->last_mean * 1e6;
	v->last_p999_us = a->last_p999 * 1e6;
	if (sdr_scheme_format(&last, SDR_SCHEME_LABEL, v->last, sizeof(v->last)) < 0)
		snprintf(v->last, sizeof(v->last), "?");
	v->ncands = a->cfg.ncands <= SDR_AUTO_MAX_CANDS ? a->cfg.ncands : SDR_AUTO_MAX_CANDS;
	for (uint32_t i = 0; i < v->ncands; i++) {
		if (sdr_scheme_format(&a->cfg.cands[i], SDR_SCHEME_LABEL, v->name[i],
				      sizeof(v->name[i])) < 0)
			snprintf(v->name[i], sizeof(v->name[i]), "?");
		v->picks[i] = a->picks[i];
		v->pmin[i] = a->pick_min[i];
		v->pmax[i] = a->pick_max[i];
	}
}

void sdr_auto_stats_json(FILE *f, const struct sdr_auto *a, const struct sdr_qp_stats *st)
{
	struct auto_view v;

	auto_view(a, &v);
	fprintf(f,
		",\"auto\":{\"srtt_us\":%.1f,\"rttvar_us\":%.1f,"
		"\"rtt_samples\":%" PRIu64 ",\"chunk_loss\":%.6g,"
		"\"chunks_seen\":%" PRIu64 ",\"last_pick\":\"%s\","
		"\"last_mean_us\":%.1f,\"last_p999_us\":%.1f,"
		"\"initial_picks\":%" PRIu64 ",\"evals\":%" PRIu64 ",\"eval_errors\":%" PRIu64
		",\"msgs_ec\":%" PRIu64 ",\"msgs_sr\":%" PRIu64 ",\"chunks_fed\":%" PRIu64
		",\"lost_fed\":%" PRIu64 ",\"lost_rx\":%" PRIu64 ",\"picks\":{",
		v.srtt_us, v.rttvar_us, v.rtt_samples, v.loss, v.chunks_seen, v.last,
		v.last_mean_us, v.last_p999_us, v.initial_picks, v.evals, v.eval_errors,
		SDR_QPS_CTR(st, auto, msgs_ec), SDR_QPS_CTR(st, auto, msgs_sr),
		SDR_QPS_CTR(st, auto, chunks_fed), SDR_QPS_CTR(st, auto, lost_fed),
		SDR_QPS_CTR(st, auto, lost_rx));
	for (uint32_t i = 0; i < v.ncands; i++)
		fprintf(f, "%s\"%s\":%" PRIu64, i ? "," : "", v.name[i], v.picks[i]);
	fprintf(f, "},\"pick_min_bytes\":{");
	for (uint32_t i = 0; i < v.ncands; i++)
		fprintf(f, "%s\"%s\":%" PRIu64, i ? "," : "", v.name[i], v.pmin[i]);
	fprintf(f, "},\"pick_max_bytes\":{");
	for (uint32_t i = 0; i < v.ncands; i++)
		fprintf(f, "%s\"%s\":%" PRIu64, i ? "," : "", v.name[i], v.pmax[i]);
	fprintf(f, "}}");
}

void sdr_auto_stats_print(FILE *f, const struct sdr_qp *qp, const struct sdr_auto *au)
{
	struct auto_view v;

	auto_view(au, &v);
	fprintf(f,
		"    AUTO: srtt %.0f us (%" PRIu64 " samples) chunk loss %.3g"
		" (%" PRIu64 " chunks) | last pick %s (mean %.0f us) | evals %" PRIu64
		" | initial %" PRIu64 " | msgs EC %" PRIu64 " SR %" PRIu64 " |",
		v.srtt_us, v.rtt_samples, v.loss, v.chunks_seen, v.last, v.last_mean_us, v.evals,
		v.initial_picks, SDR_QP_CTR(qp, auto, msgs_ec), SDR_QP_CTR(qp, auto, msgs_sr));
	for (uint32_t i = 0; i < v.ncands; i++)
		fprintf(f, " %s %" PRIu64, v.name[i], v.picks[i]);
	fprintf(f, "\n");
}

void sdr_auto_stats_kv(const struct sdr_auto *au, const struct sdr_kv *kv)
{
	struct auto_view v;

	auto_view(au, &v);
	kv->u64(kv->arg, "auto_srtt_us", (uint64_t)(v.srtt_us + 0.5));
	kv->u64(kv->arg, "auto_rtt_samples", v.rtt_samples);
	/* (no doubles in 22.11's telemetry: parts per million) */
	kv->u64(kv->arg, "auto_chunk_loss_ppm", (uint64_t)(v.loss * 1e6 + 0.5));
	kv->u64(kv->arg, "auto_chunks_seen", v.chunks_seen);
	kv->str(kv->arg, "auto_last_pick", v.last);
	kv->u64(kv->arg, "auto_last_mean_us", (uint64_t)(v.last_mean_us + 0.5));
	kv->u64(kv->arg, "auto_initial_picks", v.initial_picks);
	kv->u64(kv->arg, "auto_evals", v.evals);
	kv->u64(kv->arg, "auto_eval_errors", v.eval_errors);
	for (uint32_t i = 0; i < v.ncands; i++) {
		char key[48];
		int n = snprintf(key, sizeof(key), "auto_picks_%s", v.name[i]);
		/* "RS(32,8)" -> "rs_32_8": plain key characters */
		for (int j = 11; j < n && j < (int)sizeof(key); j++)
			key[j] = (key[j] >= 'A' && key[j] <= 'Z') ? (char)(key[j] + 32)
				 : ((key[j] >= '0' && key[j] <= '9') ||
				    (key[j] >= 'a' && key[j] <= 'z'))
					 ? key[j]
					 : '_';
		while (n > 11 && key[n - 1] == '_')
			key[--n] = 0;
		kv->u64(kv->arg, key, v.picks[i]);
	}
}

/* the last SDR_AUTO_CLOSED AUTO QPs destroyed, per instance (main lcore) */
struct auto_closed {
	uint32_t qpn;
	struct sdr_qp_stats st;
	struct sdr_auto au;
};
static struct auto_closed *closed[SDR_MAX_INST];
static unsigned nclosed[SDR_MAX_INST]; /* destroyed so far (ring index) */

void sdr_auto_closed_keep(const struct sdr_qp *qp, const struct sdr_auto *au)
{
	unsigned i = qp->inst->idx;

	if (i >= SDR_MAX_INST)
		return;
	if (!closed[i])
		closed[i] = calloc(SDR_AUTO_CLOSED, sizeof(*closed[i]));
	if (closed[i]) {
		struct auto_closed *x = &closed[i][nclosed[i]++ % SDR_AUTO_CLOSED];
		x->qpn = qp->qpn_base;
		x->st = qp->st;
		x->au = *au;
	}
}

static void json_ctr(void *arg, const char *name, uint64_t v, const char *scheme)
{
	(void)scheme;
	fprintf(arg, ",\"%s\":%" PRIu64, name, v);
}

void sdr_auto_closed_json(FILE *f, const struct sdr_inst *in)
{
	unsigned i = in->idx;

	fprintf(f, ",\"auto_closed\":[");
	if (i < SDR_MAX_INST && closed[i]) {
		unsigned n = nclosed[i] < SDR_AUTO_CLOSED ? nclosed[i] : SDR_AUTO_CLOSED;
		for (unsigned k = 0; k < n; k++) {
			const struct auto_closed *x =
				&closed[i][(nclosed[i] - n + k) % SDR_AUTO_CLOSED];
			fprintf(f, "%s{\"qpn\":%u", k ? "," : "", x->qpn);
			sdr_rel_ctrs_foreach(&x->st, json_ctr, f);
			sdr_auto_stats_json(f, &x->au, &x->st);
			fprintf(f, "}");
		}
	}
	fprintf(f, "]");
}

void sdr_auto_closed_free(void)
{
	for (unsigned i = 0; i < SDR_MAX_INST; i++) {
		free(closed[i]);
		closed[i] = NULL;
		nclosed[i] = 0;
	}
}
