/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The erasure-coding engine's per-QP counters (layer ec), printed as
 * ec_<name> in the stats block, --stats-json and telemetry /sdr/qps. Every
 * QP whose scheme runs the EC engine (ec, auto) counts here:
 * SDR_QP_CTR(qp, ec, decodes)++. The group is defined in ec_desc.c.
 */
#ifndef SDR_EC_COUNTERS_H
#define SDR_EC_COUNTERS_H

#include "sdr_qpctr.h"

#define SDR_EC_QP_CTRS(X)                                                                    \
	X(ec, subs_encoded) X(ec, par_pkts_tx) X(ec, par_pkts_rx) X(ec, par_chunks_rx)       \
	X(ec, decodes) X(ec, chunks_recovered) X(ec, decode_failures) X(ec, fto_expiries)    \
	X(ec, fto_postponed) X(ec, nacks_tx) X(ec, nack_entries_tx) X(ec, nacks_rx)          \
	X(ec, nack_entries_rx) X(ec, nack_retx_units)

SDR_QP_CTR_GROUP_DECLARE(ec, SDR_EC_QP_CTRS);

#endif /* SDR_EC_COUNTERS_H */
