/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-dpu firmware (layer prim): a QP - its send window (struct sdr_smsg),
 * its receive table, its counters (sdr_qpctr.h), its completion-time
 * histogram (sdr_hist.h) and its scheme's state
 * (qp->rel, owned by the scheme behind qp->ops: rel.h). Nothing here names
 * a scheme. No DPDK.
 */
#ifndef SDR_QP_H
#define SDR_QP_H

#include <stddef.h>
#include <stdint.h>

#include "sdr_abi.h"
#include "sdr_hist.h"
#include "sdr_limits.h"
#include "sdr_msgtab.h"
#include "sdr_qpctr.h"
#include "sdr_wire.h"

/* ERROR: a QP whose peer stopped answering for its outage horizon, or
 * whose peer said it is gone (QP-CLOSED); every operation on it fails with
 * -ENOTCONN until it is destroyed. */
enum sdr_qp_state { SDR_QPS_CREATED = 0, SDR_QPS_CONNECTED, SDR_QPS_DEAD, SDR_QPS_ERROR };

enum sdr_smsg_state { SDR_SM_FREE = 0, SDR_SM_QUEUED, SDR_SM_DONE };

struct sdr_srange {
	uint8_t *src;     /* host memory (mapped) */
	uint32_t msg_off; /* MTU aligned */
	uint32_t len;
	uint16_t mr_id;
};

/** The receiver's clear-to-send for a send slot (one cache line holds it). */
struct sdr_cts_slot {
	uint32_t seq, len; /* the receive number it offers, its posted length */
	uint8_t ok;        /* received */
};

/** One send (one-shot or stream) in the QP's send window. */
struct sdr_smsg {
	uint64_t wr_id;
	uint32_t seq, len, imm;
	uint32_t npkts;    /* data packets of the whole message */
	uint32_t pkt;      /* next packet within the current range */
	uint32_t imm_next; /* next immediate-only offset to send (npkts < 8) */
	int32_t status;    /* error to report at completion (streams) */
	uint8_t state, stream, ended, nranges, cur;
	uint8_t aborted;   /* ended with an error on the sender; ABORT told the receiver */
	uint8_t keep_refs; /* ranges stay referenced until completion (retransmissions) */
	uint64_t post_tsc; /* when the worker took it from the SQ (completion time) */
	struct sdr_srange r[SDR_STREAM_RANGES];
};

struct sdr_inst;
struct sdr_hctx;
struct sdr_rel_ops;

struct sdr_qp {
	uint32_t id;
	uint32_t qpn_base, rkey, max_msg, ppc, mtu, gens;
	uint8_t reliability;
	uint16_t info_ec;              /* EC parameters its QP info publishes (packed) */
	const struct sdr_rel_ops *ops; /* the QP's reliability scheme */
	void *rel;                     /* the scheme's per-QP state (rel.h) */
	struct sdr_inst *inst;
	struct sdr_hctx *ctx;
	unsigned worker;
	int state;             /* enum sdr_qp_state; written by the owning worker */
	int32_t error_status;  /* -ECONNRESET: the error state came from the peer's
	                         QP-CLOSED (0: from the outage horizon, -ETIMEDOUT) */
	uint8_t restored;      /* made by QP_RESTORE: SQE flags RESUME/DONE accepted */
	uint64_t cts_idle_tsc; /* last CTS re-send of a restored QP with no receive posted */
	struct sdr_qp_info remote;
	uint64_t ctrl_key; /* ours: control packets to this QP must carry it */
	struct sdr_l2l3 l2;
	struct sdr_hdr_tmpl tmpl; /* headers of l2's frames (sdr_hdr_tmpl_init at connect) */
	uint32_t psn;             /* control packets sent (their PSN) */
	uint8_t cc_mode;          /* its congestion control as its host asked (SDR_QP_CC_*) */
	uint8_t ecn_tx;           /* ECN bits of its data and parity packets (SDR_ECN_ECT0 with
	                   congestion control: sr_cc.h), 0 = not ECN-capable */
	uint8_t paths;            /* its paths as its host asked (0 = --paths; docs/multipath.md) */
	uint16_t tx_sport;        /* UDP source port of its next data / parity packet: the
	                             path the SR engine chose (0 = the template's, l2.udp_sport) */
	uint64_t rate_bps;        /* its rate (0 = unpaced): the worker's pacer (w->sched) */
	uint64_t touch_loop;      /* worker loop + 1 in which it was last touched / visited */
	uint64_t visit_loop;
	/* (what a visit reads of every QP comes first, in the first page or two;
	 * the per-message tables follow) */
	unsigned ncts_out; /* receive side: CTS entries waiting */
	unsigned nabort_out;
	uint64_t next_rects_tsc;
	uint32_t send_next;    /* number of the next posted send */
	uint32_t tx_cursor;    /* send being transmitted (all older are on the wire) */
	uint32_t ack_cursor;   /* oldest send not yet completed */
	uint64_t progress_tsc; /* last progress of the sends (outage horizon) */
	uint32_t pace_held;    /* a frame waited for the pacer (rate-limited, txframe.c) */
	uint64_t horizon_tsc;  /* outage horizon (cycles; 0 = never): sdr_qp_horizon_set() */
	uint32_t horizon_ms;   /* the same in ms, as the host is told (0 = never) */
	struct sdr_qp_stats st;
	struct sdr_qp *next_on_worker;
	/* shared segment (chunk bitmaps) */
	void *qseg;
	size_t qseg_size;
	int qseg_fd;
	uint64_t era_tsc[16]; /* receive numbers: when each 2^28 block was entered */
	struct sdr_cts_entry cts_out[SDR_CTS_MAX_ENTRIES];
	/* sends that ended before their data went out, whose ABORT the
	 * receiver may not have seen yet */
	struct sdr_abort_entry abort_out[SDR_ABORT_MAX_ENTRIES];

	/* receive side: the receive table */
	struct sdr_rq rq;

	/* send side: clear-to-send per message slot, the sends */
	struct sdr_cts_slot cts[SDR_MAX_MSGS];
	struct sdr_smsg smsg[SDR_MAX_MSGS];
	struct sdr_ct_hist ct_hist; /* completion times of its sends (worker writes) */
};

#endif /* SDR_QP_H */
