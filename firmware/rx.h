/* SPDX-License-Identifier: BSD-3-Clause */
/* Receive path of a worker (rx.c). */
#ifndef SDR_RX_H
#define SDR_RX_H

#include "sdr_types.h"

/** Handle one received frame of instance @p in at time @p now (the burst's
 *  clock). @return 1 when @p m was handed to another worker, 0 when the
 *  caller frees it (in bulk, with the rest of the burst). */
int sdr_rx_one(struct sdr_worker *w, struct sdr_inst *in, struct rte_mbuf *m, uint64_t now);

/** A control packet @p p for @p qp (parsed; addressed to this DPU, QP
 *  connected, peer IP checked): check its header, key and source QP, then
 *  CTS to the send window, ABORT to the receive table, the rest to the QP's
 *  scheme. Part of sdr_rx_one(); tests/firmware drives it directly with its
 *  own clock. */
void sdr_rx_ctrl(struct sdr_worker *w, struct sdr_qp *qp, const struct sdr_parsed *p, uint64_t now);

#endif /* SDR_RX_H */
