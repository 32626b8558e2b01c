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

/* clang-format off */
#define SDR_EC_QP_CTRS(X)                                                                    \
	X(ec, subs_encoded) X(ec, par_pkts_tx) X(ec, par_pkts_rx) X(ec, par_chunks_rx)       \
	X(ec, decodes) X(ec, chunks_recovered) X(ec, decode_failures) X(ec, fto_expiries)    \
	X(ec, fto_postponed) X(ec, nacks_tx) X(ec, nack_entries_tx) X(ec, nacks_rx)          \
	X(ec, nack_entries_rx) X(ec, nack_retx_units)
/* clang-format on */

SDR_QP_CTR_GROUP_DECLARE(ec, SDR_EC_QP_CTRS);

/* its drop reasons (prim/sdr_counters.h: X(name, description)): receive, transmit */
#define SDR_EC_RX_DROPS(X)                                                                        \
	X(ec_parity_bad, "malformed parity header (code, k, m, indices, reserved bits)")          \
	X(ec_parity_not_ec, "parity packet on a QP whose reliability is neither EC nor AUTO")     \
	X(ec_param_mismatch,                                                                      \
	  "parity code/k/m disagree with the QP's or the message's first parity")                 \
	X(ec_parity_unknown, "parity for no posted receive of that message number")               \
	X(ec_parity_late, "parity for a receive already completed (harmless)")                    \
	X(ec_parity_sub, "parity submessage or packet index out of the message's range")          \
	X(ec_parity_len, "parity lengths disagree (message, coded chunk, packet, received data)") \
	X(ec_parity_dup, "duplicate parity packet")                                               \
	X(ec_parity_unused, "parity for a submessage already complete (harmless)")                \
	X(ec_parity_early, "parity dropped on its header, ICRC unchecked: its receive or "        \
			   "submessage was complete (harmless)")                                  \
	X(ec_pool_exhausted, "no parity buffer free (packet dropped; the fallback recovers)")     \
	X(nack_bad, "NACK entry with k out of range, unknown flags or bits past k")               \
	X(nack_stale, "NACK entry for no outstanding send (old or unknown)")
#define SDR_EC_TX_ERRS(X)                                                                        \
	X(ec_encode_failed, "parity of a submessage not encoded (no codec/memory); SR fallback") \
	X(ec_nomem, "no memory for a receive's EC state (parity dropped; SR fallback)")          \
	X(ec_send_nomem, "an EC send's state could not be set up (the send failed with -EIO)")

#endif /* SDR_EC_COUNTERS_H */
