/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the control plane sees of the Selective Repeat engine (layer sr):
 * its options and their values (--sr-*), its per-QP counters
 * (sr_counters.h), its line of the stats block, its keys in --stats-json
 * and telemetry, its metrics and its part of /ops. The schemes that run the
 * engine (sr, ec, auto) put these in their descriptors (rel.h: struct
 * sdr_rel_desc).
 */
#ifndef SDR_SR_DESC_H
#define SDR_SR_DESC_H

#include <stdint.h>
#include <stdio.h>

#include "sr_qp.h"
#include "sdr_opts.h"
#include "sr_counters.h"

struct sdr_diag_send;

/** --sr-* (docs/reliability.md) */
struct sdr_sr_cfg {
	uint32_t alpha_milli; /* RTO = (1 + alpha) * SRTT, alpha * 1000 */
	uint32_t rttvar_k;    /* ... and >= SRTT + k * RTTVAR */
	uint32_t min_rto_us;
	uint32_t init_rto_ms;
	uint32_t ack_us;       /* ACK coalescing period */
	uint32_t probe_max_ms; /* RTO backoff ceiling: the probe interval of a stalled QP */
	int cc;                /* --cc: congestion control of every reliable QP (sr_cc.h) */
	uint32_t cc_target_us; /* --cc-target-us: its queueing-delay target; 0 = default */
	int cc_competitive;    /* --cc-competitive: its TCP-competitive mode (sdr_cc.h) */
	int cc_noise_probe;    /* --cc-noise-probe: calm and probe through the RTT noise */
	uint32_t cc_ai_ref;    /* --cc-ai-ref: the additive step's scale (sdr_cc.h ai_ref_k) */
	uint32_t cc_ack_pkts;  /* --cc-ack-pkts: an ACK per N ECN-capable data packets (0: off) */
	uint32_t paths;        /* --paths: paths (UDP source ports) of a QP (docs/multipath.md) */
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
/** qp_srtt_seconds, qp_rttvar_seconds, qp_rto_seconds, then the plug-in's
 *  (sdr_sr_hooks::stats_metrics) */
void sdr_sr_qp_metrics(const struct sdr_qp *qp, const struct sdr_metric_sink *m);
/** The retransmission state of send @p sm at TSC @p now for /ops: the RTO,
 *  the last ACK, probing, the backoff factor, its chunks not acknowledged,
 *  its last retransmission (common/sdr_diag.h) */
void sdr_sr_qp_diag_send(const struct sdr_qp *qp, const struct sdr_smsg *sm, uint64_t now,
			 struct sdr_diag_send *d);

#endif /* SDR_SR_DESC_H */
