/* SPDX-License-Identifier: BSD-3-Clause */
/* Host SQ of a worker (host_sq.c). */
#ifndef SDR_HOST_SQ_H
#define SDR_HOST_SQ_H

#include "sdr_ctx.h"
#include "sdr_worker.h"

/** Serve up to one burst of context @p c's SQ (fairly: refused descriptors
 *  cost more). @return descriptors consumed. */
unsigned sdr_host_poll(struct sdr_worker *w, struct sdr_hctx *c, uint64_t now);

#endif /* SDR_HOST_SQ_H */
