/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A QP that runs the erasure-coding engine on top of the Selective Repeat
 * engine: the glue the EC and AUTO schemes share (they differ in how each
 * send's code is chosen). Engine level: it calls engines and primitives,
 * never a scheme.
 */
#ifndef SDR_EC_QP_H
#define SDR_EC_QP_H

#include "ec.h"
#include "rel.h" /* struct sdr_parsed, ... through sdr_types.h */

struct sdr_ecqp {
	struct sdr_sr sr;
	struct sdr_ecq ec;
};

/** @p codes: as sdr_ec_init(). */
int sdr_ecqp_init(struct sdr_qp *qp, struct sdr_ecqp *e, const struct sdr_scheme *codes,
		  unsigned ncodes, int per_message);
void sdr_ecqp_fini(struct sdr_ecqp *e);
/** Send @p sm with code (@p code, @p k, @p m), k == 0: without parity. */
int sdr_ecqp_send_prepare(struct sdr_qp *qp, struct sdr_ecqp *e, struct sdr_smsg *sm,
			  unsigned code, unsigned k, unsigned m, uint64_t now);
unsigned sdr_ecqp_tx(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_ecqp *e, uint64_t now);
void sdr_ecqp_recv_posted(struct sdr_ecqp *e, uint32_t slot, uint64_t now);
void sdr_ecqp_rx_data(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_ecqp *e,
		      const struct sdr_parsed *p, uint32_t gen, uint64_t now);
void sdr_ecqp_rx_ctrl(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_ecqp *e,
		      const struct sdr_ctrl_hdr *h, const uint8_t *msg, size_t len, uint64_t now);
int sdr_ecqp_rx_ctrl_early(struct sdr_worker *w, const struct sdr_qp *qp, const struct sdr_ecqp *e,
			   const struct sdr_ctrl_hdr *h, const uint8_t *msg, size_t len);
void sdr_ecqp_recv_done(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_ecqp *e,
			uint32_t slot, int32_t status, uint64_t now);
void sdr_ecqp_poll(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_ecqp *e, uint64_t now);
uint64_t sdr_ecqp_next_due(const struct sdr_qp *qp, const struct sdr_ecqp *e, uint64_t now);
void sdr_ecqp_periodic(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_ecqp *e, uint64_t now);
void sdr_ecqp_reset(struct sdr_ecqp *e);

#endif /* SDR_EC_QP_H */
