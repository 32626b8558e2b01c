/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reliability schemes behind one interface (docs/architecture.md).
 *
 * Each scheme (none, sr, ec, auto) is one file exporting one
 * struct sdr_rel_ops; the worker, the receive path and the host SQ call
 * through the table and never name a scheme, and schemes never call each
 * other. A scheme is built from engines (sr_*.c, ec_*.c), which are built
 * from the primitives (txq.c: transmit, cq.c: completions, the receive
 * table in sdr_msgtab.c). Calls only go down that list.
 *
 * What the control plane sees of a scheme is its descriptor (struct
 * sdr_rel_desc, ops->desc): its per-QP counter groups (sdr_qpctr.h), its
 * options (typed sdr_opts entries), its lines of the stats block, its keys
 * in --stats-json and telemetry, its metrics and its part of /ops. stats.c
 * and config.c iterate the table (sdr_rel_scheme()) and never name a
 * scheme.
 *
 * Adding a scheme is one new folder (or file) and one line in the table in
 * rel.c; a scheme outside the firmware (a test's) calls sdr_rel_register()
 * (docs/architecture.md "Adding a scheme").
 */
#ifndef SDR_REL_H
#define SDR_REL_H

#include <stdio.h>

#include "sdr_dpu.h"
#include "sdr_inst.h"
#include "sdr_qp.h"
#include "sdr_worker.h"

struct sdr_cfg;
struct sdr_diag_send;
struct sdr_opt;

/** What the control plane sees of a scheme (ops->desc). Every member may be
 *  NULL / 0. The hooks run on the main lcore and read the worker's state
 *  slightly stale, like the counters. */
struct sdr_rel_desc {
	/** The counter groups its QPs count in (NULL-terminated). A group may
	 *  be in several schemes (SR's is in sr, ec and auto); the table gives
	 *  each group its slots once. */
	struct sdr_ctr_group *const *ctrs;
	/** Its daemon options (SDR_OPT_END-terminated typed entries storing into
	 *  the scheme's own configuration through .var), or NULL. config.c adds
	 *  every scheme's table to the command line once. */
	const struct sdr_opt *opts;
	/** Check its options once the command line is parsed (@p cfg: the
	 *  rest): 0, or -1 after printing why on stderr. */
	int (*opts_check)(const struct sdr_cfg *cfg);
	/** Its lines of the stats block for @p qp (after the QP's line). */
	void (*print)(FILE *f, const struct sdr_qp *qp);
	/** Its keys in the QP's --stats-json object: ",\"key\":value..." */
	void (*json)(FILE *f, const struct sdr_qp *qp);
	/** Its keys in the QP's telemetry dict (/sdr/qps). */
	void (*kv)(const struct sdr_qp *qp, const struct sdr_kv *kv);
	/** Its keys in an instance's --stats-json object: ",\"key\":value..." */
	void (*json_inst)(FILE *f, const struct sdr_inst *in);
	/** Its gauges and counters of the QP among the Prometheus metrics
	 *  (--metrics; stats.c: sdr_stats_walk). */
	void (*metrics)(const struct sdr_qp *qp, const struct sdr_metric_sink *m);
	/** Its part of the plain-words state of send @p sm, not complete, at
	 *  TSC @p now (the /ops page, sdr-diag: common/sdr_diag.h): the
	 *  members of @p d about retransmission and acknowledgement. */
	void (*diag_send)(const struct sdr_qp *qp, const struct sdr_smsg *sm, uint64_t now,
			  struct sdr_diag_send *d);
	/** The drop counter (enum sdr_ctr) host_sq.c counts a send in whose
	 *  send_prepare failed (the send completes with -EIO); a scheme whose
	 *  send_prepare cannot fail leaves it 0. */
	int prepare_failed;
};

struct sdr_rel_ops {
	const char *name;
	uint8_t reliability;             /* enum sdr_reliability */
	uint8_t keeps_ranges;            /* sends keep their host ranges referenced until they
	                         complete (retransmissions re-read them) */
	const struct sdr_rel_desc *desc; /* counters, options, stats (every scheme has one) */

	/* control plane (main lcore) */
	/** Create the scheme's per-QP state (qp->rel) for attributes @p a
	 *  (checked by the caller). @return 0, or a negative errno with
	 *  @p why filled. */
	int (*qp_init)(struct sdr_qp *qp, const struct sdr_qp_attr_abi *a, char *why,
		       size_t whylen);
	void (*qp_fini)(struct sdr_qp *qp);
	/** The QP's rate changed (bits/s, 0 = unpaced); worker lcore. */
	void (*set_rate)(struct sdr_qp *qp, uint64_t rate_bps);

	/* worker lcore */
	/** A send was posted into @p sm (generic fields set). @return 0, or a
	 *  negative errno (the send then fails). */
	int (*send_prepare)(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_smsg *sm,
			    uint64_t now);
	/** Transmit: retransmissions, then first transmissions of the sends
	 *  the receiver cleared. @return packets sent. */
	unsigned (*tx)(struct sdr_worker *w, struct sdr_qp *qp, uint64_t now);
	/** Receive @p slot was posted. */
	void (*recv_posted)(struct sdr_qp *qp, uint32_t slot, uint64_t now);
	/** Optional. Receive @p slot of a restored QP was re-posted with what
	 *  the host kept (SQE flag RESUME; @p done: flag DONE, the receive
	 *  completed before the restart and is DONE in the receive table
	 *  now, without a completion): take up its state (after recv_posted). */
	void (*recv_restored)(struct sdr_worker *w, struct sdr_qp *qp, uint32_t slot, int done,
			      uint64_t now);
	/** A data packet for this QP (addressing checked, generation @p gen). */
	void (*rx_data)(struct sdr_worker *w, struct sdr_qp *qp, const struct sdr_parsed *p,
			uint32_t gen, uint64_t now);
	/** A control message of a type the receive path does not handle itself
	 *  (ACK, NACK, PARITY), key and peer checked. */
	void (*rx_ctrl)(struct sdr_worker *w, struct sdr_qp *qp, const struct sdr_ctrl_hdr *h,
			const uint8_t *msg, size_t len, uint64_t now);
	/** Optional. A control message whose ICRC is not checked yet, from the
	 *  QP's peer with its key (rx.c checked them): @return 1 when the scheme
	 *  drops it on its header alone (counted) because it cannot matter,
	 *  0 to take the normal path (ICRC, then rx_ctrl). Changes nothing but
	 *  a drop counter: what rx_ctrl would have done for such a frame, it
	 *  may leave undone if nothing depends on it (EC: ec_recv.c) (docs/
	 *  security.md "Unneeded parity is dropped before its ICRC"). */
	int (*rx_ctrl_early)(struct sdr_worker *w, const struct sdr_qp *qp,
			     const struct sdr_ctrl_hdr *h, const uint8_t *msg, size_t len);
	/** Receive @p slot was completed in the receive table (by the host, an
	 *  ABORT, a timeout or teardown) with @p status: report it. */
	void (*recv_done)(struct sdr_worker *w, struct sdr_qp *qp, uint32_t slot, int32_t status,
			  uint64_t now);
	/** At every visit of the QP (next_due says when at the latest): timers.
	 *  May set qp->state to SDR_QPS_ERROR (the worker then aborts the QP). */
	void (*poll)(struct sdr_worker *w, struct sdr_qp *qp, uint64_t now);
	/** Every --cts-resend-ms (while receives are posted). */
	void (*periodic)(struct sdr_worker *w, struct sdr_qp *qp, uint64_t now);
	/** The earliest TSC at which tx() or poll() has timer work on this QP
	 *  (an early answer costs a visit, a late one delays the timer): the
	 *  worker visits it then. Packets, descriptors and commands bring
	 *  visits of their own, and so does the pacer for frames still to
	 *  send. UINT64_MAX: none; NULL: the scheme has no timers. Worker lcore,
	 *  after each visit. */
	uint64_t (*next_due)(struct sdr_qp *qp, uint64_t now);
	/** Teardown/error: every send and receive was completed; forget all
	 *  live state. */
	void (*reset)(struct sdr_qp *qp);
};

/** The scheme of @p reliability, or NULL when this firmware has none. */
const struct sdr_rel_ops *sdr_rel_ops_of(unsigned reliability);

/** The @p i-th scheme of the table (then the registered ones), or NULL
 *  past the last: for (i = 0; (o = sdr_rel_scheme(i)); i++). */
const struct sdr_rel_ops *sdr_rel_scheme(unsigned i);

/** Add a scheme that is not in the table (a test's toy scheme), before the
 *  command line is parsed (its options join it then) and before any QP
 *  exists: its counter groups get their slots. Main lcore.
 *  @return 0; -EEXIST (its reliability is taken); -ENOSPC (no room for it or
 *  its counters). */
int sdr_rel_register(const struct sdr_rel_ops *ops);

/** Counter @p name of scheme @p scheme (the group's name; NULL for the
 *  counters of every QP) has value @p v. */
typedef void (*sdr_rel_ctr_fn)(void *arg, const char *name, uint64_t v, const char *scheme);

/** Call @p fn for every per-QP counter of @p st, in print order: the
 *  counters of every QP (SDR_QP_BASE_CTRS), then every registered group's
 *  (zero for a group @p st's QP does not count in). */
void sdr_rel_ctrs_foreach(const struct sdr_qp_stats *st, sdr_rel_ctr_fn fn, void *arg);

extern const struct sdr_rel_ops sdr_rel_none, sdr_rel_sr, sdr_rel_ec, sdr_rel_auto;

#endif /* SDR_REL_H */
