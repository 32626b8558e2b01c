/* SPDX-License-Identifier: BSD-3-Clause */
/* Statistics: the stats block, the JSON dump, telemetry (stats.c). */
#ifndef SDR_STATS_H
#define SDR_STATS_H

#include <stdio.h>

void sdr_stats_print(FILE *f);
int sdr_stats_json(const char *path);
void sdr_telemetry_register(void);

/*
 * Every statistic, one sample at a time, for exporters (metrics.c): @p name
 * is the metric's name without the "sdr_" prefix and, for counters, without
 * "_total"; @p labels the Prometheus label pairs ('k="v",...', escaped);
 * the histograms of message completion time per QP come to @p hist. A
 * statistic added here (or to SDR_QP_STATS, the worker or link-emulator
 * lists) reaches every exporter. Control thread (reads what workers write,
 * slightly stale).
 */
enum sdr_stat_kind { SDR_STAT_COUNTER, SDR_STAT_GAUGE };
struct sdr_ct_hist;
struct sdr_stats_sink {
	void (*sample)(void *arg, enum sdr_stat_kind kind, const char *name, const char *help,
		       const char *labels, double value);
	void (*hist)(void *arg, const char *labels, const struct sdr_ct_hist *h);
	void *arg;
};
void sdr_stats_walk(const struct sdr_stats_sink *s);

/* 'instance="NAME",qp="0x...",peer="IP",scheme="sr"' of a QP (escaped) */
struct sdr_qp;
void sdr_stats_qp_labels(const struct sdr_qp *qp, char *buf, size_t len);

/* Every operation not yet complete, per QP, in plain words (common/sdr_diag.h):
 * the /ops page that sdr-diag prints. Control thread. */
void sdr_stats_ops(FILE *f);

#endif /* SDR_STATS_H */
