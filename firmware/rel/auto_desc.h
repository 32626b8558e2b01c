/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the control plane sees of the AUTO scheme (layer rel): its options
 * and their values (--auto-*), its per-QP counters (auto_counters.h), its
 * line of the stats block, its keys in --stats-json and telemetry, its
 * metrics, and the decisions of its last destroyed QPs ("auto_closed" of
 * --stats-json).
 */
#ifndef SDR_AUTO_DESC_H
#define SDR_AUTO_DESC_H

#include <stdint.h>
#include <stdio.h>

#include "auto_counters.h"
#include "rel.h"
#include "sdr_auto.h"
#include "sdr_opts.h"

/** --auto-* (docs/reliability.md "AUTO") */
struct sdr_auto_opts {
	struct sdr_scheme cands[SDR_AUTO_MAX_CANDS]; /* --auto-schemes */
	uint32_t ncands;
	uint32_t max_m; /* largest m of the EC candidates (0: SR only) */
	int obj;        /* enum sdr_model_objective, --auto-objective */
};
extern struct sdr_auto_opts sdr_auto_opts;
extern const struct sdr_opt sdr_auto_opt_table[];
/** The candidates through the completion-time model: 0, or -1 after
 *  printing why (struct sdr_rel_desc::opts_check). */
int sdr_auto_opts_check(const struct sdr_cfg *cfg);

/** "    AUTO: srtt ..." of a QP with estimates @p au */
void sdr_auto_stats_print(FILE *f, const struct sdr_qp *qp, const struct sdr_auto *au);
/** ,"auto":{...} of a QP (live or destroyed) with counters @p st */
void sdr_auto_stats_json(FILE *f, const struct sdr_auto *au, const struct sdr_qp_stats *st);
/** auto_srtt_us, ..., auto_picks_<candidate> */
void sdr_auto_stats_kv(const struct sdr_auto *au, const struct sdr_kv *kv);
/** qp_auto_srtt_seconds, ..., qp_auto_choice{choice}, qp_auto_picks{choice} */
void sdr_auto_stats_metrics(const struct sdr_auto *au, const struct sdr_metric_sink *m);

/** Keep a destroyed QP's counters and estimates for --stats-json (the
 *  last SDR_AUTO_CLOSED per instance). Main lcore. */
void sdr_auto_closed_keep(const struct sdr_qp *qp, const struct sdr_auto *au);
/** ,"auto_closed":[...] of instance @p in (struct sdr_rel_desc::json_inst) */
void sdr_auto_closed_json(FILE *f, const struct sdr_inst *in);
/** Forget what was kept (teardown; the test rigs). */
void sdr_auto_closed_free(void);

#endif /* SDR_AUTO_DESC_H */
