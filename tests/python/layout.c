/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sizes and field offsets of the structures the Python binding declares
 * with ctypes (host/python/sdr/_capi.py), as the C compiler lays them out,
 * one JSON object: {"struct": {"__size__": N, "field": offset, ...}, ...}.
 * test_layout.py compares them with ctypes'.
 */
#include <stddef.h>
#include <stdio.h>

#include "sdr.h"

#define S(name) \
	printf("%s\"%s\":{\"__size__\":%zu", first++ ? "}," : "", #name, sizeof(struct name))
#define F(name, f) printf(",\"%s\":%zu", #f, offsetof(struct name, f))

int main(void)
{
	int first = 0;

	printf("{");
	S(sdr_ctx_attr);
	F(sdr_ctx_attr, ctl_timeout_ms);
	F(sdr_ctx_attr, reattach_ms);
	F(sdr_ctx_attr, reserved);
	S(sdr_qp_attr);
	F(sdr_qp_attr, max_msg);
	F(sdr_qp_attr, chunk_pkts);
	F(sdr_qp_attr, reliability);
	F(sdr_qp_attr, ec_code);
	F(sdr_qp_attr, ec_k);
	F(sdr_qp_attr, ec_m);
	F(sdr_qp_attr, want_qpn);
	F(sdr_qp_attr, want_rkey);
	F(sdr_qp_attr, reserved);
	F(sdr_qp_attr, rate_bps);
	S(sdr_qp_info);
	F(sdr_qp_info, qpn);
	F(sdr_qp_info, rkey);
	F(sdr_qp_info, ip);
	F(sdr_qp_info, mac);
	F(sdr_qp_info, mtu);
	F(sdr_qp_info, max_msg);
	F(sdr_qp_info, chunk_pkts);
	F(sdr_qp_info, generations);
	F(sdr_qp_info, reliability);
	F(sdr_qp_info, ec);
	F(sdr_qp_info, ctrl_key);
	S(sdr_send_wr);
	F(sdr_send_wr, mr);
	F(sdr_send_wr, addr);
	F(sdr_send_wr, offset);
	F(sdr_send_wr, length);
	F(sdr_send_wr, imm);
	F(sdr_send_wr, wr_id);
	S(sdr_recv_wr);
	F(sdr_recv_wr, mr);
	F(sdr_recv_wr, addr);
	F(sdr_recv_wr, offset);
	F(sdr_recv_wr, length);
	F(sdr_recv_wr, reserved);
	F(sdr_recv_wr, wr_id);
	S(sdr_wc);
	F(sdr_wc, wr_id);
	F(sdr_wc, qp);
	F(sdr_wc, handle);
	F(sdr_wc, seq);
	F(sdr_wc, length);
	F(sdr_wc, imm);
	F(sdr_wc, status);
	F(sdr_wc, opcode);
	F(sdr_wc, flags);
	F(sdr_wc, reserved);
	S(sdr_ctx_stats);
	F(sdr_ctx_stats, sq_posted);
	F(sdr_ctx_stats, sq_full);
	F(sdr_ctx_stats, cq_full);
	F(sdr_ctx_stats, slot_busy);
	F(sdr_ctx_stats, cqe_seen);
	F(sdr_ctx_stats, cqe_unmatched);
	F(sdr_ctx_stats, wc_dropped);
	F(sdr_ctx_stats, wc_orphaned);
	F(sdr_ctx_stats, reattaches);
	F(sdr_ctx_stats, reattach_expired);
	F(sdr_ctx_stats, reattach_last_ms);
	F(sdr_ctx_stats, qps_restored);
	F(sdr_ctx_stats, qps_lost);
	F(sdr_ctx_stats, mrs_lost);
	F(sdr_ctx_stats, ops_replayed);
	F(sdr_ctx_stats, ops_aborted);
	F(sdr_ctx_stats, wc_duplicate);
	printf("}}\n");
	printf("{\"SDR_REL_NONE\":%d,\"SDR_REL_SR\":%d,\"SDR_REL_EC\":%d,\"SDR_REL_AUTO\":%d,"
	       "\"SDR_EC_RS\":%d,\"SDR_EC_XOR\":%d,\"SDR_SQ_SEND\":%d,\"SDR_SQ_RECV\":%d,"
	       "\"SDR_CQE_F_PARTIAL\":%d,\"SDR_CQE_F_IMM\":%d,\"SDR_POLL_PENDING\":%d,"
	       "\"SDR_POLL_DONE\":%d,\"SDR_POLL_PARTIAL\":%d,\"SDR_HANDLES\":%d,"
	       "\"SDR_QP_INFO_WIRE\":%d}\n",
	       SDR_REL_NONE, SDR_REL_SR, SDR_REL_EC, SDR_REL_AUTO, SDR_EC_RS, SDR_EC_XOR,
	       SDR_SQ_SEND, SDR_SQ_RECV, SDR_CQE_F_PARTIAL, SDR_CQE_F_IMM, SDR_POLL_PENDING,
	       SDR_POLL_DONE, SDR_POLL_PARTIAL, SDR_HANDLES, SDR_QP_INFO_WIRE);
	return 0;
}
