/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion primitive: completions go into the host context's CQ ring, in
 * order, and are never lost. The completions of a loop pass are written to
 * the ring together at its end (sdr_cq_flush(): the entries, then one store
 * of the producer index, so the host's polling core fetches that cache line
 * once per pass, not once per completion). When the host is slow to poll
 * they wait in a FIFO sized at attach for every operation a context can
 * have outstanding (the SQ is not read while it is non-empty).
 */
#ifndef SDR_CQ_H
#define SDR_CQ_H

#include "sdr_ctx.h"
#include "sdr_qp.h"
#include "sdr_worker.h"

/** Capacity a context's overflow FIFO needs with @p nqps QPs: every send and
 *  receive they can have outstanding, and a ring of refused descriptors.
 *  Allocated at attach for one QP and grown (by the main lcore, before a QP
 *  is added; ctrl_qp.c) as QPs are created. */
#define SDR_CQ_OVF_FOR(nqps) ((uint32_t)(nqps)*2 * SDR_MAX_MSGS + SDR_SQ_ENTRIES)

/** Post completion @p e to context @p c (in the ring by the end of the loop
 *  pass, or when SDR_BURST are waiting). */
void sdr_cq_post(struct sdr_worker *w, struct sdr_hctx *c, const struct sdr_cqe *e);

/** Write the completions posted to @p c so far into its CQ ring (the rest,
 *  when it is full, into the FIFO). */
void sdr_cq_flush(struct sdr_worker *w, struct sdr_hctx *c);

/** Move waiting completions into the CQ as the host frees room. */
void sdr_cq_drain(struct sdr_hctx *c);

/** Send @p sm is over (status sm->status): drop its references on host
 *  memory, count it, post its completion. */
void sdr_cq_send(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_smsg *sm);

/** Receive in @p slot was completed in the receive table with @p status:
 *  drop its memory reference, count it, post its completion. */
void sdr_cq_recv(struct sdr_worker *w, struct sdr_qp *qp, uint32_t slot, int32_t status);

#endif /* SDR_CQ_H */
