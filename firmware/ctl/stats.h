/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Statistics (layer ctl): the stats block, the JSON dump, telemetry
 * (stats.c), and what each QP shows in them (stats_qp.c): its counters and
 * its scheme's lines and keys, through the scheme table (rel.h: struct
 * sdr_rel_desc), so that adding a scheme adds its stats without a line here.
 */
#ifndef SDR_STATS_H
#define SDR_STATS_H

#include <stdint.h>
#include <stdio.h>

struct sdr_inst;
struct sdr_kv;
struct sdr_qp;
struct sdr_qp_stats;

void sdr_stats_print(FILE *f);
int sdr_stats_json(const char *path);
void sdr_telemetry_register(void);

/**
 * One per-QP counter: @p name as printed everywhere ("tx_pkts",
 * "sr_retx_pkts"), its value, and @p scheme, the name of the counter group
 * it belongs to ("sr", "ec", "auto", a registered scheme's), or NULL for
 * the counters every QP keeps.
 */
typedef void (*sdr_stats_ctr_fn)(void *arg, const char *name, uint64_t value, const char *scheme);

/**
 * Every per-QP counter of @p st, in the order of --stats-json: the
 * counters of every QP, then every scheme's group (zero for a group the QP
 * does not count in). @p st: a live QP's (&qp->st; read slightly stale,
 * as the workers write them) or an instance's destroyed QPs' (&in->closed).
 * Main lcore. For exporters (the JSON dump, telemetry, metrics).
 */
void sdr_stats_qp_foreach(const struct sdr_qp_stats *st, sdr_stats_ctr_fn fn, void *arg);

/** The QP's lines of the stats block (its own, then its scheme's). */
void sdr_stats_qp_print(FILE *f, const struct sdr_qp *qp);
/** The QP's object of --stats-json "qps": {"qpn":..,counters..,scheme keys} */
void sdr_stats_qp_json(FILE *f, const struct sdr_qp *qp);
/** ,"qp_totals":{..},"qps":[..] and the schemes' instance keys of @p in */
void sdr_stats_inst_qps_json(FILE *f, const struct sdr_inst *in);
/** The QP's keys of telemetry /sdr/qps (counters, rate, its scheme's). */
void sdr_stats_qp_kv(const struct sdr_qp *qp, const struct sdr_kv *kv);

#endif /* SDR_STATS_H */
