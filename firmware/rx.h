/* SPDX-License-Identifier: BSD-3-Clause */
/* Receive path of a worker (rx.c). */
#ifndef SDR_RX_H
#define SDR_RX_H

#include "sdr_types.h"

/** Handle one received frame of instance @p in; consumes @p m. */
void sdr_rx_one(struct sdr_worker *w, struct sdr_inst *in, struct rte_mbuf *m);

#endif /* SDR_RX_H */
