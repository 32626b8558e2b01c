/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the control plane sees of the Selective Repeat engine (layer sr):
 * its options and their values (--sr-*), its per-QP counters
 * (sr_counters.h), its line of the stats block and its keys in
 * --stats-json and telemetry. The schemes that run the engine (sr, ec,
 * auto) put these in their descriptors (rel.h: struct sdr_rel_desc).
 */
#ifndef SDR_SR_DESC_H
#define SDR_SR_DESC_H

#include <stdint.h>
#include <stdio.h>

#include "sr_qp.h"
#include "sdr_opts.h"
#include "sr_counters.h"

/** --sr-* (docs/reliability.md) */
struct sdr_sr_cfg {
	uint32_t alpha_milli; /* RTO = (1 + alpha) * SRTT, alpha * 1000 */
	uint32_t rttvar_k;    /* ... and >= SRTT + k * RTTVAR */
	uint32_t min_rto_us;
	uint32_t init_rto_ms;
	uint32_t ack_us; /* ACK coalescing period */
};
extern struct sdr_sr_cfg sdr_sr_cfg;
extern const struct sdr_opt sdr_sr_opts[];

/* The reliable-QP core's stats hooks (struct sdr_rel_desc), for the schemes
 * that run on it (sr, ec, auto: their state begins with the core's) */
/** The plug-in's lines (sdr_sr_hooks::stats_print), then "    SR: srtt ..." */
void sdr_sr_qp_print(FILE *f, const struct sdr_qp *qp);
/** ,"srtt_us":..,"rttvar_us":..,"rto_us":.. */
void sdr_sr_qp_json(FILE *f, const struct sdr_qp *qp);
/** srtt_us, rttvar_us, rto_us */
void sdr_sr_qp_kv(const struct sdr_qp *qp, const struct sdr_kv *kv);

#endif /* SDR_SR_DESC_H */
