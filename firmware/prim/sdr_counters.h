/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Every drop and error of the firmware has one named counter. The list is an
 * X-macro (VPP style): adding a reason is one line and it shows up in the
 * stats block, the JSON dump and telemetry automatically.
 */
#ifndef SDR_COUNTERS_H
#define SDR_COUNTERS_H

#include <stdint.h>

#include "auto_counters.h"
#include "ec_counters.h"
#include "sr_counters.h"

/* The schemes' drop reasons, declared in their folders (sr/sr_counters.h,
 * ec/ec_counters.h, rel/auto_counters.h): one line per scheme here. They
 * index the workers' counter arrays in the fast path, so they are known at
 * build time (a scheme's per-QP counters are not: sdr_qpctr.h). */
#define SDR_SCHEME_RX_DROPS(X) SDR_SR_RX_DROPS(X) SDR_EC_RX_DROPS(X)
#define SDR_SCHEME_TX_ERRS(X) SDR_SR_TX_ERRS(X) SDR_EC_TX_ERRS(X) SDR_AUTO_TX_ERRS(X)

/* X(name, description) — receive-side packet drops */
#define SDR_RX_DROP_LIST(X)                                                                     \
	X(truncated, "frame shorter than its headers claim")                                    \
	X(not_ipv4, "not an IPv4 frame (incl. VLAN, IPv6)")                                     \
	X(ip_bad, "bad IPv4 version/IHL/length/checksum or a fragment")                         \
	X(not_udp, "IPv4 but not UDP")                                                          \
	X(not_roce, "UDP but not port 4791")                                                    \
	X(bad_bth, "unknown opcode, TVer != 0 or bad PadCnt")                                   \
	X(bad_icrc, "ICRC mismatch")                                                            \
	X(bad_dma_len, "RETH DMA length disagrees with the payload")                            \
	X(multiseg, "frame spans several mbufs")                                                \
	X(not_for_us, "destination MAC or IP is not this DPU's")                                \
	X(stale_epoch, "DestQP outside this boot's QPN range (an earlier incarnation)")         \
	X(unknown_qp, "DestQP names no QP of this DPU")                                         \
	X(tomb_pkts, "DestQP names a QP this DPU destroyed (tombstone): QP-CLOSED answers it")  \
	X(tomb_closed, "the peer's QP-CLOSED for a QP this DPU destroyed too (closed at once)") \
	X(qp_not_ready, "QP exists but is not connected")                                       \
	X(wrong_peer, "source IP or QPN is not the connected peer")                             \
	X(stale_gen, "packet of an old generation of its message slot")                         \
	X(stale_seq, "packet of an older message of its slot and generation (PSN)")             \
	X(early_seq, "packet of a later message than its slot's receive (PSN)")                 \
	X(no_recv, "msg_id with no posted receive")                                             \
	X(late_pkt, "packet for a completed receive (discard sink)")                            \
	X(bad_rkey, "R_Key is not the QP's")                                                    \
	X(bad_va, "VA disagrees with msg_id/pkt_offset")                                        \
	X(bad_len, "length/offset past the posted buffer or inconsistent with the last packet") \
	X(imm_mismatch, "user-immediate nibble disagrees with an earlier one")                  \
	X(dup_pkt, "duplicate packet (idempotent, not written again)")                          \
	X(dup_imm, "immediate-only packet whose nibble is already held (a repeat)")             \
	X(ctrl_bad, "malformed control message")                                                \
	X(ctrl_bad_key, "control message without the QP's control key (forged or misrouted)")   \
	X(ctrl_unknown, "control message of an unknown or unsupported type")                    \
	X(cts_bad, "CTS entry beyond the sender's window (1024 ahead)")                         \
	X(cts_stale, "re-sent CTS for a send already under way or done (harmless)")             \
	X(abort_stale, "ABORT entry for no posted receive of that number")                      \
	X(abort_bad, "ABORT entry with an impossible status or length")                         \
	SDR_SCHEME_RX_DROPS(X)                                                                  \
	X(arp_ignored, "ARP not addressed to this DPU")                                         \
	X(handoff_full, "inter-worker hand-off ring full")

/* host-interface errors (each also produces an error completion) */
#define SDR_HOST_ERR_LIST(X)                                                                      \
	X(sqe_bad, "malformed descriptor (opcode/flags/reserved)")                                \
	X(sqe_no_target, "RECV_COMPLETE/STREAM_* for a receive or stream that is not open (e.g. " \
			 "it just completed)")                                                    \
	X(sqe_bad_qp, "descriptor names an unknown QP")                                           \
	X(sqe_bad_mr, "descriptor names an unknown MR")                                           \
	X(sqe_bad_range, "offset+length outside the MR")                                          \
	X(sqe_bad_len, "zero length, over max_msg, or longer than the posted receive")            \
	X(sqe_not_conn, "QP not connected")                                                       \
	X(sqe_busy, "receive slot or send window still busy")                                     \
	X(sqe_bad_flags,                                                                          \
	  "SQE flags RESUME/DONE where they do not apply (QP not restored, opcode)")              \
	X(seq_guard, "receive refused: its number would come back within the packet lifetime")    \
	X(sq_corrupt, "SQ ring indices impossible; context shut down")                            \
	X(cq_lost, "completion not deliverable (context gone)")                                   \
	X(sq_throttled, "SQ service of a context deferred: its budget went to refused "           \
			"descriptors")

/* transmit side */
#define SDR_TX_ERR_LIST(X)                                             \
	X(tx_nombuf, "mbuf allocation failed (retried later)")         \
	X(tx_full, "TX queue refused packets after retries (dropped)") \
	X(closed_tx, "QP-CLOSED sent for a tombstone (not an error)")  \
	X(tx_at_exit, "frame not sent: the daemon was stopping")       \
	SDR_SCHEME_TX_ERRS(X)

/* control plane (main lcore): every refused or dropped host connection and
 * every refused request of a kind a hostile host would send; the reason is
 * also in the response's msg and the daemon's log */
#define SDR_CTL_ERR_LIST(X)                                                                    \
	X(ctl_table_full, "connection refused: the daemon's connection table is full")         \
	X(ctl_quota_conns, "connection refused: the client is at --quota-conns")               \
	X(ctl_quota_ctxs, "HELLO refused: the client is at --quota-ctxs")                      \
	X(ctl_quota_qps, "QP_CREATE refused: the client is at --quota-qps")                    \
	X(ctl_quota_mr_bytes, "MR_REG refused: the client would exceed --quota-mr-bytes")      \
	X(ctl_hello_timeout, "connection dropped: no HELLO within --ctl-hello-timeout-ms")     \
	X(ctl_reply_timeout,                                                                   \
	  "client dropped: its reply could not be sent within --ctl-reply-timeout-ms")         \
	X(ctl_malformed, "client dropped: malformed request")                                  \
	X(ctl_mr_refused,                                                                      \
	  "MR_REG refused: not a sealed shmem memfd (hugetlbfs, other file system, unsealed)") \
	X(ctl_attr_range, "QP_CREATE/QP_SET_RATE refused: an attribute out of range (max_msg " \
			  "above --max-msg, rate, ...)")                                       \
	X(ctl_connect_refused,                                                                 \
	  "QP_CONNECT refused: invalid peer (address, QPN, itself, parameters)")               \
	X(ctl_qpn_reserved, "QP_CREATE refused: want_qpn names a block reserved for restore")  \
	X(ctl_restore_refused,                                                                 \
	  "QP_RESTORE refused (token, uid, block in use, identity, segment; reason logged)")   \
	X(ctl_restore_ok,                                                                      \
	  "QP_RESTORE done: a QP of the previous incarnation is back (not an error)")

enum sdr_ctr {
#define SDR_CTR_ENUM(n, d) SDR_CTR_##n,
	SDR_RX_DROP_LIST(SDR_CTR_ENUM) SDR_HOST_ERR_LIST(SDR_CTR_ENUM) SDR_TX_ERR_LIST(SDR_CTR_ENUM)
		SDR_CTL_ERR_LIST(SDR_CTR_ENUM)
#undef SDR_CTR_ENUM
			SDR_CTR__MAX
};

extern const char *const sdr_ctr_names[SDR_CTR__MAX];
extern const char *const sdr_ctr_descs[SDR_CTR__MAX];

#endif /* SDR_COUNTERS_H */
