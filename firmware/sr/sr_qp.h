/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The reliable-QP core (layer sr; docs/architecture.md "SR core and the EC
 * plug-in"): the skeleton every reliable scheme (SR, EC, AUTO) runs on a
 * QP, written once. Receive: place -> dropped -> note -> complete; send:
 * prepare + progress, the first pass with the SR timers; the ACK/PARITY/NACK
 * dispatch, the expiry loop, timers, reset, stats. Its entry points have the
 * shape of struct sdr_rel_ops' members: a scheme lists them in its table.
 *
 * A plug-in (the EC engine, ec.h) adds to the skeleton through a table of
 * hooks (struct sdr_sr_hooks) it installs in the QP's struct sdr_sr; the
 * core calls it only through that table. The plug-in may call the core
 * (its functions here and the SR engine's, sr.h): calls go down, hooks up.
 *
 * A scheme that runs the core keeps its struct sdr_sr first in its per-QP
 * state (qp->rel): sdr_sr_of().
 */
#ifndef SDR_SR_QP_H
#define SDR_SR_QP_H

#include <stdio.h>

#include "sr.h"

/**
 * What a plug-in adds to the core (every entry is filled; @p ctx is the
 * QP's struct sdr_sr::hook_ctx). The core calls each one at the point of
 * its skeleton named here.
 */
struct sdr_sr_hooks {
	/* sender */
	/** Send @p sm's SR state was prepared (sdr_sr_qp_send_prepare()):
	 *  set up the plug-in's own, and the extra wait of the SR timers
	 *  (struct sdr_sr_send::hold). */
	void (*send_prepared)(void *ctx, struct sdr_qp *qp, const struct sdr_smsg *sm);
	/** Before the next first-pass packet of @p sm (as struct
	 *  sdr_send_hooks::before): what must precede it (EC: parity). */
	int (*tx_before)(void *ctx, struct sdr_worker *w, struct sdr_qp *qp,
			 const struct sdr_smsg *sm, uint64_t now, unsigned *budget);
	/** Data packet @p pkt of @p sm left on its first pass (after the SR
	 *  timers took it). */
	void (*data_sent)(void *ctx, struct sdr_worker *w, struct sdr_qp *qp,
			  const struct sdr_smsg *sm, uint32_t pkt);
	/** A NACK arrived (key and peer checked). */
	void (*rx_nack)(void *ctx, struct sdr_worker *w, struct sdr_qp *qp, const uint8_t *msg,
			const struct sdr_ctrl_hdr *h, uint64_t now);
	/* receiver */
	/** Receive @p slot was posted. */
	void (*recv_posted)(void *ctx, uint32_t slot, uint64_t now);
	/** A data packet was placed into @p slot (placement flags @p rc), the
	 *  receive is not complete; the SR receiver has noted it. */
	void (*data_placed)(void *ctx, struct sdr_worker *w, struct sdr_qp *qp, uint32_t slot,
			    uint32_t pkt_off, int rc, uint64_t now);
	/** A PARITY message arrived (key and peer checked). */
	void (*rx_parity)(void *ctx, struct sdr_worker *w, struct sdr_qp *qp, const uint8_t *msg,
			  size_t len, uint64_t now);
	/** A PARITY message before its ICRC (struct sdr_rel_ops::rx_ctrl_early):
	 *  @return 1 when it is dropped now (counted). Reads only. */
	int (*rx_parity_early)(const void *ctx, struct sdr_worker *w, const struct sdr_qp *qp,
			       const uint8_t *msg, size_t len);
	/** Receive @p slot completes (before its final ACK entry and its
	 *  completion): release its state. @return the data chunks lost on
	 *  their first transmission, for the FULL entry. */
	uint32_t (*recv_done)(void *ctx, uint32_t slot);
	/* timers */
	/** The earliest TSC at which poll has work; UINT64_MAX if none. */
	uint64_t (*next_due)(const void *ctx);
	/** At every visit, before the SR timers (EC: fallback timeouts). */
	void (*poll)(void *ctx, struct sdr_worker *w, struct sdr_qp *qp, uint64_t now);
	/** Teardown/error, after the SR state was reset: forget all live state. */
	void (*reset)(void *ctx);
	/** Optional: the plug-in's lines of the stats block, before the
	 *  core's (sr_desc.c: sdr_sr_qp_print). Main lcore. */
	void (*stats_print)(const void *ctx, FILE *f, const struct sdr_qp *qp);
	/** Optional: the plug-in's metrics of the QP, after the core's
	 *  (sr_desc.c: sdr_sr_qp_metrics). Main lcore. */
	void (*stats_metrics)(const void *ctx, const struct sdr_qp *qp,
			      const struct sdr_metric_sink *m);
};

/** The core's state of @p qp (first in the scheme's per-QP state). */
static inline struct sdr_sr *sdr_sr_of(const struct sdr_qp *qp)
{
	return qp->rel;
}

/* ---- the skeleton, as struct sdr_rel_ops' members (rel.h) ---- */
/** The scheme chose the send's code (a plug-in's own call) before. */
int sdr_sr_qp_send_prepare(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_smsg *sm,
			   uint64_t now);
unsigned sdr_sr_qp_tx(struct sdr_worker *w, struct sdr_qp *qp, uint64_t now);
void sdr_sr_qp_recv_posted(struct sdr_qp *qp, uint32_t slot, uint64_t now);
/* a restored QP's re-posted receive: what it holds is acknowledged; one
 * that completed before the restart keeps its final ACK entry */
void sdr_sr_qp_recv_restored(struct sdr_worker *w, struct sdr_qp *qp, uint32_t slot, int done,
			     uint64_t now);
void sdr_sr_qp_rx_data(struct sdr_worker *w, struct sdr_qp *qp, const struct sdr_parsed *p,
		       uint32_t gen, uint64_t now);
void sdr_sr_qp_rx_ctrl(struct sdr_worker *w, struct sdr_qp *qp, const struct sdr_ctrl_hdr *h,
		       const uint8_t *msg, size_t len, uint64_t now);
int sdr_sr_qp_rx_ctrl_early(struct sdr_worker *w, const struct sdr_qp *qp,
			    const struct sdr_ctrl_hdr *h, const uint8_t *msg, size_t len);
/** Receive @p slot was completed in the receive table with @p status (by
 *  the host, an ABORT, a timeout, teardown, or the plug-in's decoding):
 *  the plug-in releases it, its final ACK entry is queued, its completion
 *  posted. */
void sdr_sr_qp_recv_done(struct sdr_worker *w, struct sdr_qp *qp, uint32_t slot, int32_t status,
			 uint64_t now);
void sdr_sr_qp_poll(struct sdr_worker *w, struct sdr_qp *qp, uint64_t now);
void sdr_sr_qp_periodic(struct sdr_worker *w, struct sdr_qp *qp, uint64_t now);
uint64_t sdr_sr_qp_next_due(struct sdr_qp *qp, uint64_t now);
void sdr_sr_qp_reset(struct sdr_qp *qp);
/** The QP's configured rate changed (struct sdr_rel_ops::set_rate): the
 *  congestion controller's ceiling follows (sr_cc.h). A scheme's table names
 *  it, or its own set_rate calls it. */
void sdr_sr_qp_set_rate(struct sdr_qp *qp, uint64_t rate_bps);

/** Main lcore, a QP its worker let go of: which of the 1024 receives
 *  before @c c->recv_next completed FULL (their final entries), into
 *  @c c->full (the QP-CLOSED its tombstone answers with). */
void sdr_sr_qp_closed_full(const struct sdr_qp *qp, struct sdr_closed_msg *c);

/* The entries of struct sdr_rel_ops that every scheme built on the SR core
 * takes from it as they are (SR, EC, AUTO): a scheme's table names its own
 * qp_init/qp_fini/send_prepare and then SDR_SR_QP_OPS. */
/* clang-format off */
#define SDR_SR_QP_OPS                                   \
	.keeps_ranges = 1,                              \
	.tx = sdr_sr_qp_tx,                             \
	.recv_posted = sdr_sr_qp_recv_posted,           \
	.recv_restored = sdr_sr_qp_recv_restored,       \
	.rx_data = sdr_sr_qp_rx_data,                   \
	.rx_ctrl = sdr_sr_qp_rx_ctrl,                   \
	.rx_ctrl_early = sdr_sr_qp_rx_ctrl_early,       \
	.recv_done = sdr_sr_qp_recv_done,               \
	.poll = sdr_sr_qp_poll,                         \
	.periodic = sdr_sr_qp_periodic,                 \
	.next_due = sdr_sr_qp_next_due,                 \
	.reset = sdr_sr_qp_reset
/* clang-format on */

#endif /* SDR_SR_QP_H */
