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
 * Adding a scheme is one new file and one line in sdr_rel_ops_of() (rel.c).
 */
#ifndef SDR_REL_H
#define SDR_REL_H

#include "sdr_types.h"

/** What stats and telemetry show of a QP's scheme (filled by ops->view). */
struct sdr_rel_view {
	int has_rtt;                       /* SR engine: RTT estimator below */
	uint64_t srtt, rttvar, rto, samples; /* cycles */
	int has_ec;                        /* EC engine: code below */
	int ec_per_message;                /* the code is picked per message (AUTO) */
	unsigned ec_code, ec_k, ec_m;
	unsigned pool_inuse, pool_nalloc;  /* receive parity pool */
	const struct sdr_auto *au;         /* AUTO's estimates, or NULL */
};

struct sdr_rel_ops {
	const char *name;
	uint8_t reliability;  /* enum sdr_reliability */
	uint8_t keeps_ranges; /* sends keep their host ranges referenced until they
	                         complete (retransmissions re-read them) */

	/* control plane (main lcore) */
	/** Create the scheme's per-QP state (qp->rel) for attributes @p a
	 *  (checked by the caller). @return 0, or a negative errno with
	 *  @p why filled. */
	int (*qp_init)(struct sdr_qp *qp, const struct sdr_qp_attr_abi *a, char *why, size_t whylen);
	void (*qp_fini)(struct sdr_qp *qp);
	/** The QP's rate changed (bits/s, 0 = unpaced); worker lcore. */
	void (*set_rate)(struct sdr_qp *qp, uint64_t rate_bps);
	void (*view)(const struct sdr_qp *qp, struct sdr_rel_view *v);

	/* worker lcore */
	/** A send was posted into @p sm (generic fields set). @return 0, or a
	 *  negative errno (the send then fails). */
	int (*send_prepare)(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_smsg *sm, uint64_t now);
	/** Transmit: retransmissions, then first transmissions of the sends
	 *  the receiver cleared. @return packets sent. */
	unsigned (*tx)(struct sdr_worker *w, struct sdr_qp *qp, uint64_t now);
	/** Receive @p slot was posted. */
	void (*recv_posted)(struct sdr_qp *qp, uint32_t slot, uint64_t now);
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

extern const struct sdr_rel_ops sdr_rel_none, sdr_rel_sr, sdr_rel_ec, sdr_rel_auto;

#endif /* SDR_REL_H */
