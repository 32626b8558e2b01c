/* SPDX-License-Identifier: BSD-3-Clause */
/* Receive path of a worker (rx.c). */
#ifndef SDR_RX_H
#define SDR_RX_H

#include "sdr_inst.h"
#include "sdr_worker.h"

/** Handle one received frame of instance @p in at time @p now (the burst's
 *  clock). @return 1 when @p m was handed to another worker, 0 when the
 *  caller frees it (in bulk, with the rest of the burst). */
int sdr_rx_one(struct sdr_worker *w, struct sdr_inst *in, struct rte_mbuf *m, uint64_t now);

#endif /* SDR_RX_H */
