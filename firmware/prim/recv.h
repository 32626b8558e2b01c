/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receive side of a QP on top of the receive table (sdr_msgtab.h): posting
 * a receive (with the guard on reused receive numbers), clear-to-send to
 * the sender, and placing a data packet with its counters.
 */
#ifndef SDR_RECV_H
#define SDR_RECV_H

#include "sdr_qp.h"
#include "sdr_worker.h"

/** Post a receive of @p len bytes at @p dst. @return its number, -EBUSY
 *  (the slot still holds an open receive) or -EAGAIN (the number would come
 *  back within the packet lifetime, counted seq_guard). Queues its CTS. */
int64_t sdr_recv_post(struct sdr_worker *w, struct sdr_qp *qp, uint8_t *dst, uint32_t len,
		      uint64_t wr_id, uint16_t mr_id);

/** sdr_recv_post() of a receive that a restored QP's host re-posts with
 *  what its segment kept of it (SQE flag RESUME; sdr_rq_post_resume()). */
int64_t sdr_recv_post_resume(struct sdr_worker *w, struct sdr_qp *qp, uint8_t *dst, uint32_t len,
			     uint64_t wr_id, uint16_t mr_id);

/** Send the queued CTS entries. */
void sdr_recv_cts_flush(struct sdr_worker *w, struct sdr_qp *qp);

/** Re-send CTS for every posted receive that has seen nothing yet, or
 *  nothing for 5 x --cts-resend-ms, and every resumed one; while one is
 *  that quiet, also those that saw packets and up to 64 completed ones
 *  before the oldest posted (not those the sender aborted). */
void sdr_recv_cts_resend(struct sdr_worker *w, struct sdr_qp *qp, uint64_t now);

/** Place data packet @p p (generation @p gen) into the receive table and
 *  count it. @return the flags of sdr_rq_place() (>= 0; *slot on
 *  SDR_PLACE_COMPLETE), or -1 with the drop counted in w->ctr and returned
 *  in *drop. */
int sdr_recv_place(struct sdr_worker *w, struct sdr_qp *qp, const struct sdr_parsed *p,
		   uint32_t gen, uint64_t now, uint32_t *slot, enum sdr_ctr *drop);

#endif /* SDR_RECV_H */
