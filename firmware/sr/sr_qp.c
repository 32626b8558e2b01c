/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The reliable-QP core (layer sr; sr_qp.h): the Selective Repeat engine on
 * every send and receive of a QP, and the points where a plug-in (the EC
 * engine) adds to it, called through its hooks only.
 */
#include <errno.h>
#include <string.h>

#include "cq.h"
#include "recv.h"
#include "rel.h"
#include "send.h"
#include "sr_path.h"
#include "sr_qp.h"

/* ---------------- sender ---------------- */

int sdr_sr_qp_send_prepare(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_smsg *sm,
			   uint64_t now)
{
	struct sdr_sr *sr = sdr_sr_of(qp);

	(void)w;
	if (sdr_sr_send_prepare(qp, sr, sm))
		return -ENOMEM;
	if (sr->hooks)
		sr->hooks->send_prepared(sr->hook_ctx, qp, sm);
	/* the outage horizon counts from here when nothing was outstanding */
	if (qp->ack_cursor == qp->send_next)
		qp->progress_tsc = now;
	return 0;
}

/* the plug-in's packets go before a send's next data packet (they are work
 * too: the worker must not idle-sleep) */
static int core_before(void *ctx, struct sdr_worker *w, struct sdr_qp *qp, struct sdr_smsg *sm,
		       uint64_t now, unsigned *budget)
{
	struct sdr_sr *sr = ctx;

	return sr->hooks->tx_before(sr->hook_ctx, w, qp, sm, now, budget);
}

/* payload bytes of data packet @p pkt of @p sm */
static uint32_t pkt_len(const struct sdr_qp *qp, const struct sdr_smsg *sm, uint32_t pkt)
{
	uint32_t off = pkt * qp->mtu;

	return sm->len - off < qp->mtu ? sm->len - off : qp->mtu;
}

static void core_sent(void *ctx, struct sdr_worker *w, struct sdr_qp *qp, struct sdr_smsg *sm,
		      uint32_t pkt, int data, uint64_t now)
{
	struct sdr_sr *sr = ctx;

	sdr_sr_unit_sent(qp, sr, sm, pkt, now);
	if (sr->cc.on)
		sdr_sr_cc_sent(&sr->cc,
			       sdr_wire_data_frame_bytes(pkt < sm->npkts ? pkt_len(qp, sm, pkt) : 0,
							 sm->imm != 0),
			       now);
	if (data && sr->hooks)
		sr->hooks->data_sent(sr->hook_ctx, w, qp, sm, pkt);
}

static void core_passed(void *ctx, struct sdr_qp *qp, struct sdr_smsg *sm)
{
	(void)qp;
	sdr_sr_send_of(ctx, sm->seq)->txdone = 1; /* completes on the receiver's FULL */
}

unsigned sdr_sr_qp_tx(struct sdr_worker *w, struct sdr_qp *qp, uint64_t now)
{
	struct sdr_sr *sr = sdr_sr_of(qp);
	const struct sdr_send_hooks h = {
		.ctx = sr,
		.before = sr->hooks ? core_before : NULL,
		.sent = core_sent,
		.passed = core_passed,
	};
	unsigned sent;

	sdr_sr_cc_apply(w, qp, &sr->cc);
	sdr_sr_late(qp, sr, now);
	sdr_sr_path_tx_begin(w, qp, sr, now);
	sent = sdr_sr_tx(w, qp, sr, now);
	return sent + sdr_send_first_pass(w, qp, SDR_BURST - sent, now, &h);
}

/* ---------------- receiver ---------------- */

void sdr_sr_qp_recv_posted(struct sdr_qp *qp, uint32_t slot, uint64_t now)
{
	struct sdr_sr *sr = sdr_sr_of(qp);

	sr->rcv[slot] = (struct sdr_sr_recv){0};
	if (sr->hooks)
		sr->hooks->recv_posted(sr->hook_ctx, slot, now);
}

void sdr_sr_qp_recv_restored(struct sdr_worker *w, struct sdr_qp *qp, uint32_t slot, int done,
			     uint64_t now)
{
	struct sdr_sr *sr = sdr_sr_of(qp);

	if (!done) {
		/* it had all of its message before the restart (its sender
		 * may have had the final ACK: nothing comes again) */
		if (sdr_rq_resumed_full(&qp->rq, slot)) {
			sdr_sr_qp_recv_done(w, qp, slot, 0, now);
			return;
		}
		/* the sender learns what survived at the next ACK */
		if (qp->rq.slot[slot].chunks_got)
			sdr_sr_rx_note(w, qp, sr, slot, now);
		return;
	}
	if (sr->hooks) /* the plug-in forgets the slot as at a completion */
		(void)sr->hooks->recv_done(sr->hook_ctx, slot);
	sdr_sr_recv_final_restored(w, qp, sr, slot, now);
}

void sdr_sr_qp_recv_done(struct sdr_worker *w, struct sdr_qp *qp, uint32_t slot, int32_t status,
			 uint64_t now)
{
	struct sdr_sr *sr = sdr_sr_of(qp);
	uint32_t lost = sr->hooks ? sr->hooks->recv_done(sr->hook_ctx, slot) : 0;

	sdr_sr_recv_final(w, qp, sr, slot, status, lost, now);
	sdr_cq_recv(w, qp, slot, status);
}

void sdr_sr_qp_rx_data(struct sdr_worker *w, struct sdr_qp *qp, const struct sdr_parsed *p,
		       uint32_t gen, uint64_t now)
{
	struct sdr_sr *sr = sdr_sr_of(qp);
	enum sdr_ctr drop;
	uint32_t slot, ect;
	int rc = sdr_recv_place(w, qp, p, gen, now, &slot, &drop);

	/* (the sender's controller learns the delivery from the echo: an ACK
	 * every --cc-ack-pkts ECN-capable packets, placed or not) */
	ect = sdr_sr_cc_rx_data(&sr->cc, p->ecn);
	if (sr->fb_pkts && ect >= sr->fb_pkts)
		sdr_sr_rx_feedback(w, qp, sr, p->msg_id, now);
	if (rc < 0) {
		sdr_sr_rx_dropped(w, qp, sr, p, drop, now);
		return;
	}
	if ((rc & SDR_PLACE_CHUNK) && !(rc & SDR_PLACE_COMPLETE))
		sdr_sr_rx_note(w, qp, sr, p->msg_id, now);
	else if ((rc & SDR_PLACE_DATA) && !(rc & SDR_PLACE_COMPLETE) &&
		 (p->se || (p->pkt_off + 1) % qp->ppc == 0))
		/* the last packet of a chunk that is not whole: the ACK's hole
		 * report lets the sender resend only what is missing, at once
		 * (docs/reliability.md "Loss detection") */
		sdr_sr_rx_note(w, qp, sr, p->msg_id, now);
	if (rc & SDR_PLACE_COMPLETE)
		sdr_sr_qp_recv_done(w, qp, slot, 0, now);
	else if (sr->hooks)
		sr->hooks->data_placed(sr->hook_ctx, w, qp, p->msg_id, p->pkt_off, rc, now);
}

void sdr_sr_qp_rx_ctrl(struct sdr_worker *w, struct sdr_qp *qp, const struct sdr_ctrl_hdr *h,
		       const uint8_t *msg, size_t len, uint64_t now)
{
	struct sdr_sr *sr = sdr_sr_of(qp);

	if (h->type == SDR_CTRL_ACK)
		sdr_sr_rx_ack(w, qp, sr, msg, len, h, now);
	else if (h->type == SDR_CTRL_PARITY && sr->hooks)
		sr->hooks->rx_parity(sr->hook_ctx, w, qp, msg, len, now);
	else if (h->type == SDR_CTRL_NACK && sr->hooks)
		sr->hooks->rx_nack(sr->hook_ctx, w, qp, msg, h, now);
	else if (h->type == SDR_CTRL_PARITY) /* parity on a QP without the EC plug-in */
		w->ctr[SDR_CTR_ec_parity_not_ec]++;
	else
		w->ctr[SDR_CTR_ctrl_unknown]++;
}

int sdr_sr_qp_rx_ctrl_early(struct sdr_worker *w, const struct sdr_qp *qp,
			    const struct sdr_ctrl_hdr *h, const uint8_t *msg, size_t len)
{
	const struct sdr_sr *sr = sdr_sr_of(qp);

	return h->type == SDR_CTRL_PARITY && sr->hooks &&
	       sr->hooks->rx_parity_early(sr->hook_ctx, w, qp, msg, len);
}

/* ---------------- timers ---------------- */

void sdr_sr_qp_poll(struct sdr_worker *w, struct sdr_qp *qp, uint64_t now)
{
	struct sdr_sr *sr = sdr_sr_of(qp);

	if (sr->hooks)
		sr->hooks->poll(sr->hook_ctx, w, qp, now);
	sdr_sr_poll(w, qp, sr, now);
}

uint64_t sdr_sr_qp_next_due(struct sdr_qp *qp, uint64_t now)
{
	const struct sdr_sr *sr = sdr_sr_of(qp);
	uint64_t d = sdr_sr_next_due(qp, sr, now), p;

	if (sr->hooks && (p = sr->hooks->next_due(sr->hook_ctx)) < d)
		d = p;
	return d;
}

void sdr_sr_qp_periodic(struct sdr_worker *w, struct sdr_qp *qp, uint64_t now)
{
	uint32_t slots[SDR_MAX_MSGS];
	unsigned n = sdr_sr_recv_expired(qp, sdr_sr_of(qp), now, slots);

	for (unsigned i = 0; i < n; i++)
		sdr_sr_qp_recv_done(w, qp, slots[i], -ETIMEDOUT, now);
}

void sdr_sr_qp_set_rate(struct sdr_qp *qp, uint64_t rate_bps)
{
	(void)rate_bps; /* (qp->rate_bps is it already) */
	sdr_sr_cc_set_ceiling(&sdr_sr_of(qp)->cc, qp);
}

void sdr_sr_qp_reset(struct sdr_qp *qp)
{
	struct sdr_sr *sr = sdr_sr_of(qp);

	sdr_sr_reset(sr);
	if (sr->hooks)
		sr->hooks->reset(sr->hook_ctx);
}

void sdr_sr_qp_closed_full(const struct sdr_qp *qp, struct sdr_closed_msg *c)
{
	const struct sdr_sr *sr = sdr_sr_of(qp);

	memset(c->full, 0, sizeof(c->full));
	for (uint32_t i = 0; i < SDR_CLOSED_FULL_BITS; i++) {
		uint32_t seq = c->recv_next - SDR_CLOSED_FULL_BITS + i;
		const struct sdr_rdone *d = &sr->done[sdr_seq_msg_id(seq)];

		if (d->flags == SDR_ACK_F_FULL && d->seq == seq)
			c->full[i / 8] |= (uint8_t)(1u << (i % 8));
	}
}
