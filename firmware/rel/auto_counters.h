/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The AUTO scheme's per-QP counters (layer rel), printed as auto_<name> in
 * the stats block, --stats-json and telemetry /sdr/qps:
 * SDR_QP_CTR(qp, auto, msgs_ec)++. The group is defined in auto_desc.c.
 */
#ifndef SDR_AUTO_COUNTERS_H
#define SDR_AUTO_COUNTERS_H

#include "sdr_qpctr.h"

#define SDR_AUTO_QP_CTRS(X) \
	X(auto, msgs_ec) X(auto, msgs_sr) X(auto, chunks_fed) X(auto, lost_fed) X(auto, lost_rx)

SDR_QP_CTR_GROUP_DECLARE(auto, SDR_AUTO_QP_CTRS);

/* its drop reasons (prim/sdr_counters.h: X(name, description)) */
#define SDR_AUTO_TX_ERRS(X) \
	X(auto_send_nomem, "an AUTO send's state could not be set up (the send failed with -EIO)")

#endif /* SDR_AUTO_COUNTERS_H */
