/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers the two halves of the erasure-coding engine share (ec_send.c,
 * ec_recv.c); not for other modules. */
#ifndef SDR_EC_INT_H
#define SDR_EC_INT_H

#include "ec.h"

/* Receive-side EC state of one message (in the slot's part of sdr_ecq::rmsg_region, set at its first parity). */
struct sdr_ec_rmsg {
	uint32_t seq, msg_len, imm;
	uint8_t code, k, m;
	uint32_t par_pkts;      /* parity packets accepted */
	struct sdr_ec_geom g;
	uint8_t *sub_done;      /* [nsub] complete or decoded */
	uint8_t *sub_par;       /* [nsub] parity buffers the submessage holds */
	struct sdr_ecbuf **par; /* [nsub * m] parity chunks being received */
};

/** Bytes of the receive state of a message of @p nsub submessages with
 *  @p m parity chunks each. */
static inline size_t sdr_ec_rmsg_bytes(uint32_t nsub, uint32_t m)
{
	return sizeof(struct sdr_ec_rmsg) + (size_t)nsub * m * sizeof(struct sdr_ecbuf *) +
	       2 * (size_t)nsub + 8;
}

/** The QP's codec for (code, k, m), or NULL: not one of its codes. */
struct sdr_ec *sdr_ec_codec(const struct sdr_ecq *ec, unsigned code, unsigned k, unsigned m);
/** Time one chunk (its frames) takes to inject at the QP's rate (cycles). */
uint64_t sdr_ec_chunk_t_inj(const struct sdr_qp *qp);

#endif /* SDR_EC_INT_H */
