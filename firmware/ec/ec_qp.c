/* SPDX-License-Identifier: BSD-3-Clause */
/* Erasure coding over Selective Repeat on one QP (ec_qp.h). */
#include <errno.h>
#include <string.h>

#include "ec_qp.h"
#include "recv.h"
#include "send.h"

int sdr_ecqp_init(struct sdr_qp *qp, struct sdr_ecqp *e, const struct sdr_scheme *codes,
		  unsigned ncodes, int per_message)
{
	if (sdr_sr_init(&e->sr, qp) || sdr_ec_init(qp, &e->ec, codes, ncodes, per_message))
		return -ENOMEM;
	/* a completed receive's FULL is sent twice, one ACK period apart */
	e->sr.full_copies = 2;
	return 0;
}

void sdr_ecqp_fini(struct sdr_ecqp *e)
{
	sdr_ec_fini(&e->ec);
	sdr_sr_fini(&e->sr);
}

int sdr_ecqp_send_prepare(struct sdr_qp *qp, struct sdr_ecqp *e, struct sdr_smsg *sm,
			  unsigned code, unsigned k, unsigned m, uint64_t now)
{
	if (sdr_sr_send_prepare(qp, &e->sr, sm))
		return -ENOMEM;
	sdr_ec_send_prepare(qp, &e->ec, &e->sr, sm, code, k, m);
	/* the global timeout counts from here when nothing was outstanding */
	if (qp->ack_cursor == qp->send_next)
		qp->progress_tsc = now;
	return 0;
}

/* a submessage's parity goes out before the next one's data (parity
 * packets are work too: the worker must not idle-sleep) */
static int ecqp_before(void *ctx, struct sdr_worker *w, struct sdr_qp *qp, struct sdr_smsg *sm,
		       uint64_t now, unsigned *budget)
{
	struct sdr_ecqp *e = ctx;

	return sdr_ec_tx_parity(w, qp, &e->ec, sm, now, budget);
}

static void ecqp_sent(void *ctx, struct sdr_worker *w, struct sdr_qp *qp, struct sdr_smsg *sm,
		      uint32_t pkt, int data, uint64_t now)
{
	struct sdr_ecqp *e = ctx;

	sdr_sr_unit_sent(qp, &e->sr, sm, pkt, now);
	if (data)
		sdr_ec_data_sent(w, qp, &e->ec, sm, pkt);
}

static void ecqp_passed(void *ctx, struct sdr_qp *qp, struct sdr_smsg *sm)
{
	struct sdr_ecqp *e = ctx;

	(void)qp;
	sdr_sr_send_of(&e->sr, sm->seq)->txdone = 1; /* completes on the receiver's FULL */
}

unsigned sdr_ecqp_tx(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_ecqp *e, uint64_t now)
{
	const struct sdr_send_hooks h = {
		.ctx = e, .before = ecqp_before, .sent = ecqp_sent, .passed = ecqp_passed,
	};
	unsigned sent = sdr_sr_tx(w, qp, &e->sr, now);

	return sent + sdr_send_first_pass(w, qp, SDR_BURST - sent, now, &h);
}

void sdr_ecqp_recv_posted(struct sdr_ecqp *e, uint32_t slot, uint64_t now)
{
	e->sr.rcv[slot] = (struct sdr_sr_recv){0};
	sdr_ec_recv_posted(&e->ec, slot, now);
}

void sdr_ecqp_recv_done(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_ecqp *e,
			uint32_t slot, int32_t status, uint64_t now)
{
	sdr_ec_recv_done(w, qp, &e->ec, &e->sr, slot, status, now);
}

void sdr_ecqp_rx_data(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_ecqp *e,
		      const struct sdr_parsed *p, uint32_t gen, uint64_t now)
{
	enum sdr_ctr drop;
	uint32_t slot;
	int rc = sdr_recv_place(w, qp, p, gen, now, &slot, &drop);

	if (rc < 0) {
		sdr_sr_rx_dropped(w, qp, &e->sr, p, drop, now);
		return;
	}
	if ((rc & SDR_PLACE_CHUNK) && !(rc & SDR_PLACE_COMPLETE))
		sdr_sr_rx_note(w, qp, &e->sr, p->msg_id, now);
	if (rc & SDR_PLACE_COMPLETE)
		sdr_ec_recv_done(w, qp, &e->ec, &e->sr, slot, 0, now);
	else
		sdr_ec_rx_data(w, qp, &e->ec, &e->sr, p->msg_id, p->pkt_off, rc, now);
}

void sdr_ecqp_rx_ctrl(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_ecqp *e,
		      const struct sdr_ctrl_hdr *h, const uint8_t *msg, size_t len, uint64_t now)
{
	if (h->type == SDR_CTRL_ACK)
		sdr_sr_rx_ack(w, qp, &e->sr, msg, h, now);
	else if (h->type == SDR_CTRL_PARITY)
		sdr_ec_rx_parity(w, qp, &e->ec, &e->sr, msg, len, now);
	else if (h->type == SDR_CTRL_NACK)
		sdr_ec_rx_nack(w, qp, &e->sr, msg, h, now);
	else
		w->ctr[SDR_CTR_ctrl_unknown]++;
}

int sdr_ecqp_rx_ctrl_early(struct sdr_worker *w, const struct sdr_qp *qp, const struct sdr_ecqp *e,
			   const struct sdr_ctrl_hdr *h, const uint8_t *msg, size_t len)
{
	return h->type == SDR_CTRL_PARITY && sdr_ec_rx_parity_early(w, qp, &e->ec, msg, len);
}

void sdr_ecqp_poll(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_ecqp *e, uint64_t now)
{
	sdr_ec_poll(w, qp, &e->ec, &e->sr, now);
	sdr_sr_poll(w, qp, &e->sr, now);
}

uint64_t sdr_ecqp_next_due(const struct sdr_qp *qp, const struct sdr_ecqp *e, uint64_t now)
{
	uint64_t a = sdr_ec_next_due(&e->ec), b = sdr_sr_next_due(qp, &e->sr, now);

	return a < b ? a : b;
}

void sdr_ecqp_periodic(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_ecqp *e, uint64_t now)
{
	uint32_t slots[SDR_MAX_MSGS];
	unsigned n = sdr_sr_recv_expired(qp, &e->sr, now, slots);

	for (unsigned i = 0; i < n; i++)
		sdr_ec_recv_done(w, qp, &e->ec, &e->sr, slots[i], -ETIMEDOUT, now);
}

void sdr_ecqp_reset(struct sdr_ecqp *e)
{
	sdr_sr_reset(&e->sr);
	sdr_ec_reset(&e->ec);
}
