/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Send window of a QP: the first transmission of every send, in posting
 * order and only after the receiver's clear-to-send for it; sends that end
 * before their data went out are reported to the receiver (ABORT).
 *
 * A scheme passes hooks: what must go before a send's next data packet
 * (EC parity), what happens when a packet left (SR timers), and what
 * happens when a send's first pass is over. Without the last hook a send
 * completes as soon as it is on the wire (reliability none).
 */
#ifndef SDR_SEND_H
#define SDR_SEND_H

#include "sdr_qp.h"
#include "sdr_worker.h"

struct sdr_send_hooks {
	void *ctx;
	/** Before the next packet of @p sm (called again until it returns 1):
	 *  send what must precede it; @p budget counts down packets sent.
	 *  @return 0 when stalled (pacer, mbufs). NULL = nothing. */
	int (*before)(void *ctx, struct sdr_worker *w, struct sdr_qp *qp, struct sdr_smsg *sm,
		      uint64_t now, unsigned *budget);
	/** Packet @p pkt of @p sm left (@p data: it carries payload; else an
	 *  immediate-only packet). NULL = nothing. */
	void (*sent)(void *ctx, struct sdr_worker *w, struct sdr_qp *qp, struct sdr_smsg *sm,
		     uint32_t pkt, int data, uint64_t now);
	/** The first pass of @p sm is over; the send stays outstanding until
	 *  the scheme completes it. NULL: it completes now. */
	void (*passed)(void *ctx, struct sdr_qp *qp, struct sdr_smsg *sm);
};

/** Transmit first passes, at most @p budget packets. @return packets sent. */
unsigned sdr_send_first_pass(struct sdr_worker *w, struct sdr_qp *qp, unsigned budget, uint64_t now,
			     const struct sdr_send_hooks *h);

/** Move qp->ack_cursor past sends that are over. */
void sdr_send_window_advance(struct sdr_qp *qp);

/** Hand every queued frame of the worker to the PMD, then complete the
 *  sends that were waiting for it (reliability none; end of a loop pass). */
void sdr_send_flushed(struct sdr_worker *w);

/** The send @p seq is outstanding (posted, not completed)? */
static inline struct sdr_smsg *sdr_send_outstanding(struct sdr_qp *qp, uint32_t seq)
{
	struct sdr_smsg *sm = &qp->smsg[sdr_seq_msg_id(seq)];

	if (sm->state != SDR_SM_QUEUED || sm->seq != seq ||
	    seq - qp->ack_cursor >= qp->send_next - qp->ack_cursor)
		return NULL;
	return sm;
}

/** Tell the receiver that send @p seq of @p len bytes ended with @p status
 *  (queued; sent by sdr_send_abort_flush()). */
void sdr_send_abort_queue(struct sdr_worker *w, struct sdr_qp *qp, uint32_t seq, int32_t status,
			  uint32_t len);
void sdr_send_abort_flush(struct sdr_worker *w, struct sdr_qp *qp);

/** A CTS message arrived (key and peer checked): record which receives the
 *  sender may use; re-send the ABORT of an aborted send it names. */
void sdr_send_rx_cts(struct sdr_worker *w, struct sdr_qp *qp, const uint8_t *msg,
		     const struct sdr_ctrl_hdr *h, uint64_t now);

#endif /* SDR_SEND_H */
