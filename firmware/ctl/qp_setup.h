/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * QP set-up (layer ctl, no socket): the objects of one QP (its memory, the
 * segment it shares with the host, the receive table, the scheme's state)
 * made from attributes the control plane has checked, and taken apart
 * again. ctrl_qp.c calls it for QP_CREATE/QP_DESTROY; the engine rig
 * (tests/firmware) builds its QPs with it too.
 */
#ifndef SDR_QP_SETUP_H
#define SDR_QP_SETUP_H

#include "sdr_types.h"

/** The QP's message size and chunk (packets): the attribute, or the
 *  daemon's default (--max-msg, --chunk-pkts) for 0. */
void sdr_qp_attr_sizes(const struct sdr_qp_attr_abi *a, uint32_t *max_msg, uint32_t *ppc);

/** What the caller chose besides the attributes. */
struct sdr_qp_ids {
	uint32_t id;              /**< QPN block index in the instance (free) */
	uint32_t rkey;            /**< R_Key of its window */
	uint64_t ctrl_key;        /**< its control packets' key */
	uint32_t horizon_ms;      /**< its outage horizon as asked (sdr_qp_horizon_set()) */
	uint8_t cc;               /**< its congestion control as asked (SDR_QP_CC_*) */
	uint8_t paths;            /**< its paths as asked (0 = --paths; docs/multipath.md) */
	struct sdr_stripe stripe; /**< its stripe map: a channel of a multi-channel QP
	                               (checked: ctl_qp_chan()); w 0 = an ordinary QP */
};

/** Make QP @p ids->id of context @p c with attributes @p a (already
 *  checked: scheme known, sizes in range): its memory, the QP segment, the
 *  receive table and the scheme's state (ops->qp_init), in state CREATED
 *  on the context's worker. Not yet in c->qps, the worker or the
 *  instance's table: the caller hands it over. @return 0 and the QP in
 *  *out, or -errno with the reason in @p why. */
int sdr_qp_setup(struct sdr_qp **out, struct sdr_hctx *c, const struct sdr_qp_attr_abi *a,
		 const struct sdr_qp_ids *ids, char *why, size_t why_len);

/** QP_RESTORE: use the host's QP segment @p fd (the one an earlier
 *  incarnation made for this QP, with the receive bitmaps it holds) instead
 *  of the fresh one of sdr_qp_setup(), before the QP goes to its worker.
 *  The descriptor must be a sealed shmem memfd of the QP's segment size
 *  whose header says what ours says. @return 0 (the QP owns @p fd now), or
 *  -errno with the reason in @p why (nothing changed). */
int sdr_qp_adopt_seg(struct sdr_qp *qp, int fd, char *why, size_t why_len);

/** The outage horizon of @p qp from what its host asked for (the
 *  request's horizon_ms, at QP_CREATE and QP_RESTORE alike): 0 = the
 *  daemon's --outage-horizon-ms, UINT32_MAX = never, else that many ms.
 *  Sets qp->horizon_ms (what the reply tells: 0 = never) and
 *  qp->horizon_tsc. sdr_qp_setup() calls it with @c ids->horizon_ms. */
void sdr_qp_horizon_set(struct sdr_qp *qp, uint32_t req_ms);

/** Take apart a QP of sdr_qp_setup() that no worker holds any more. */
void sdr_qp_teardown(struct sdr_qp *qp);

/** The QP's info as the host and its peer see it (sets the fields of
 *  @p x; what else it holds is the caller's). */
void sdr_qp_info_fill(const struct sdr_qp *qp, struct sdr_qp_info *x);

#endif /* SDR_QP_SETUP_H */
