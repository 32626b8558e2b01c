/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the control plane sees of the erasure-coding engine (layer ec): its
 * options and their values (--ec-*), its per-QP counters (ec_counters.h),
 * its line of the stats block, its metrics. The schemes that run the
 * engine (ec, auto) put these in their descriptors (rel.h: struct
 * sdr_rel_desc).
 */
#ifndef SDR_EC_DESC_H
#define SDR_EC_DESC_H

#include <stdint.h>
#include <stdio.h>

#include "ec.h"
#include "ec_counters.h"
#include "sdr_opts.h"

/** --ec-* (docs/reliability.md) */
struct sdr_ec_cfg {
	uint32_t beta_milli; /* FTO = (M + ceil(M/R)) * T_INJ + beta * RTT */
	uint32_t rtt_us;     /* RTT of the FTO; 0 = estimate */
	uint32_t pool_mb;    /* parity pool of a receiving QP, MiB */
};
extern struct sdr_ec_cfg sdr_ec_cfg;
extern const struct sdr_opt sdr_ec_opts[];

/** "    EC RS(k,m): subs encoded ... | pool n/n bufs" of a QP whose EC
 *  engine state is @p ec */
void sdr_ec_stats_print(FILE *f, const struct sdr_qp *qp, const struct sdr_eceng *ec);
/** qp_ec_pool_buffers_in_use of a QP whose EC engine state is @p ec */
void sdr_ec_stats_metrics(const struct sdr_eceng *ec, const struct sdr_metric_sink *m);

#endif /* SDR_EC_DESC_H */
