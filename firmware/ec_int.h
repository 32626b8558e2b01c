/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers the two halves of the erasure-coding engine share (ec_send.c,
 * ec_recv.c); not for other modules. */
#ifndef SDR_EC_INT_H
#define SDR_EC_INT_H

#include "ec.h"

/** The lcore's codec for (code, k, m), or NULL (no memory). */
struct sdr_ec *sdr_ec_codec(struct sdr_worker *w, unsigned code, unsigned k, unsigned m);
/** Time one chunk (its frames) takes to inject at the QP's rate (cycles). */
uint64_t sdr_ec_chunk_t_inj(const struct sdr_qp *qp);

#endif /* SDR_EC_INT_H */
