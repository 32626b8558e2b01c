/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion primitive: completions go into the host context's CQ ring, in
 * order, and are never lost. When the host is slow to poll they wait in a
 * FIFO sized at attach for every operation a context can have outstanding
 * (the SQ is not read while it is non-empty).
 */
#ifndef SDR_CQ_H
#define SDR_CQ_H

#include "sdr_types.h"

/** Capacity of a context's overflow FIFO (allocated at attach). */
#define SDR_CQ_OVF_CAP (SDR_MAX_QPS_PER_CTX * 2 * SDR_MAX_MSGS + SDR_SQ_ENTRIES)

/** Post completion @p e to context @p c. */
void sdr_cq_post(struct sdr_worker *w, struct sdr_hctx *c, const struct sdr_cqe *e);

/** Move waiting completions into the CQ as the host frees room. */
void sdr_cq_drain(struct sdr_hctx *c);

/** Send @p sm is over (status sm->status): drop its references on host
 *  memory, count it, post its completion. */
void sdr_cq_send(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_smsg *sm);

/** Receive in @p slot was completed in the receive table with @p status:
 *  drop its memory reference, count it, post its completion. */
void sdr_cq_recv(struct sdr_worker *w, struct sdr_qp *qp, uint32_t slot, int32_t status);

#endif /* SDR_CQ_H */
