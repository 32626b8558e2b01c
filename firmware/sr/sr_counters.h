/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Selective Repeat engine's per-QP counters (layer sr), printed as
 * sr_<name> in the stats block, --stats-json and telemetry /sdr/qps. Every
 * QP whose scheme runs the SR engine (sr, ec, auto) counts here:
 * SDR_QP_CTR(qp, sr, retx_pkts)++. The group is defined in sr_desc.c.
 */
#ifndef SDR_SR_COUNTERS_H
#define SDR_SR_COUNTERS_H

#include "sdr_qpctr.h"

/* clang-format off */
#define SDR_SR_QP_CTRS(X)                                                                    \
	X(sr, retx_pkts) X(sr, retx_units) X(sr, rto_expiries) X(sr, acks_tx)                \
	X(sr, ack_entries_tx) X(sr, acks_rx) X(sr, ack_entries_rx) X(sr, units_acked)        \
	X(sr, rtt_samples) X(sr, send_timeouts) X(sr, recv_timeouts) X(sr, send_closed)      \
	X(sr, rto_backoffs) X(sr, probe_defers) X(sr, reacks) X(sr, outages)                 \
	X(sr, resume_units) X(sr, rack_retx) X(sr, tlp) X(sr, spurious_retx)                 \
	X(sr, late_timers) X(sr, holes_tx) X(sr, holes_rx) X(sr, holes_lost)                 \
	X(sr, retx_pkts_saved) X(sr, fb_acks)
/* clang-format on */

SDR_QP_CTR_GROUP_DECLARE(sr, SDR_SR_QP_CTRS);

/* its drop reasons (prim/sdr_counters.h: X(name, description)): receive, transmit */
#define SDR_SR_RX_DROPS(X)                                                               \
	X(ack_bad, "ACK entry with reserved bits or unknown flags")                      \
	X(ack_stale, "ACK entry for no outstanding SR send (old, unknown or premature)") \
	X(ack_unsent, "ACK bit for a chunk not yet transmitted (ignored)")               \
	X(holes_bad, "ACK hole report (or their trailer) malformed (ignored)")           \
	X(holes_stale, "ACK hole report for no outstanding chunk (ignored)")
#define SDR_SR_TX_ERRS(X) \
	X(sr_nomem,       \
	  "no memory for SR state (a send failed with -EIO, or a retransmission was not queued)")

#endif /* SDR_SR_COUNTERS_H */
