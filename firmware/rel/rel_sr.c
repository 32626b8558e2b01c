/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reliability "sr": Selective Repeat (docs/reliability.md), the SR engine
 * (sr.h) on every send and receive of the QP.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "cq.h"
#include "recv.h"
#include "rel.h"
#include "send.h"
#include "sr.h"
#include "sr_desc.h"

static struct sdr_sr *sr_of(const struct sdr_qp *qp)
{
	return qp->rel;
}

static int sr_init(struct sdr_qp *qp, const struct sdr_qp_attr_abi *a, char *why, size_t len)
{
	struct sdr_sr *sr = calloc(1, sizeof(*sr));

	(void)a;
	if (!sr || sdr_sr_init(sr, qp)) {
		free(sr);
		snprintf(why, len, "out of memory for SR state");
		return -ENOMEM;
	}
	qp->rel = sr;
	return 0;
}

static void sr_fini(struct sdr_qp *qp)
{
	if (qp->rel)
		sdr_sr_fini(sr_of(qp));
	free(qp->rel);
	qp->rel = NULL;
}

/* stats: the SR engine's line and keys (sr_desc.c) */
static void sr_print(FILE *f, const struct sdr_qp *qp)
{
	sdr_sr_stats_print(f, qp, sr_of(qp));
}

static void sr_json(FILE *f, const struct sdr_qp *qp)
{
	sdr_sr_stats_json(f, sr_of(qp));
}

static void sr_kv(const struct sdr_qp *qp, const struct sdr_kv *kv)
{
	sdr_sr_stats_kv(sr_of(qp), kv);
}

static struct sdr_ctr_group *const sr_ctrs[] = {&sdr_qpc_sr, NULL};

static const struct sdr_rel_desc sr_desc = {
	.ctrs = sr_ctrs,
	.opts = sdr_sr_opts,
	.print = sr_print,
	.json = sr_json,
	.kv = sr_kv,
	.prepare_failed = SDR_CTR_sr_nomem,
};

static int sr_send_prepare(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_smsg *sm,
			   uint64_t now)
{
	(void)w;
	if (sdr_sr_send_prepare(qp, sr_of(qp), sm))
		return -ENOMEM;
	/* the global timeout counts from here when nothing was outstanding */
	if (qp->ack_cursor == qp->send_next)
		qp->progress_tsc = now;
	return 0;
}

static void sr_sent(void *ctx, struct sdr_worker *w, struct sdr_qp *qp, struct sdr_smsg *sm,
		    uint32_t pkt, int data, uint64_t now)
{
	(void)w, (void)data;
	sdr_sr_unit_sent(qp, ctx, sm, pkt, now);
}

static void sr_passed(void *ctx, struct sdr_qp *qp, struct sdr_smsg *sm)
{
	(void)qp;
	sdr_sr_send_of(ctx, sm->seq)->txdone = 1; /* completes on the receiver's FULL */
}

static unsigned sr_tx(struct sdr_worker *w, struct sdr_qp *qp, uint64_t now)
{
	struct sdr_sr *sr = sr_of(qp);
	const struct sdr_send_hooks h = {.ctx = sr, .sent = sr_sent, .passed = sr_passed};
	unsigned sent = sdr_sr_tx(w, qp, sr, now);

	return sent + sdr_send_first_pass(w, qp, SDR_BURST - sent, now, &h);
}

static void sr_recv_posted(struct sdr_qp *qp, uint32_t slot, uint64_t now)
{
	(void)now;
	sr_of(qp)->rcv[slot] = (struct sdr_sr_recv){0};
}

static void sr_recv_done(struct sdr_worker *w, struct sdr_qp *qp, uint32_t slot, int32_t status,
			 uint64_t now)
{
	sdr_sr_recv_final(w, qp, sr_of(qp), slot, status, 0, now);
	sdr_cq_recv(w, qp, slot, status);
}

static void sr_rx_data(struct sdr_worker *w, struct sdr_qp *qp, const struct sdr_parsed *p,
		       uint32_t gen, uint64_t now)
{
	struct sdr_sr *sr = sr_of(qp);
	enum sdr_ctr drop;
	uint32_t slot;
	int rc = sdr_recv_place(w, qp, p, gen, now, &slot, &drop);

	if (rc < 0) {
		sdr_sr_rx_dropped(w, qp, sr, p, drop, now);
		return;
	}
	if ((rc & SDR_PLACE_CHUNK) && !(rc & SDR_PLACE_COMPLETE))
		sdr_sr_rx_note(w, qp, sr, p->msg_id, now);
	if (rc & SDR_PLACE_COMPLETE)
		sr_recv_done(w, qp, slot, 0, now);
}

static void sr_rx_ctrl(struct sdr_worker *w, struct sdr_qp *qp, const struct sdr_ctrl_hdr *h,
		       const uint8_t *msg, size_t len, uint64_t now)
{
	(void)len;
	if (h->type == SDR_CTRL_ACK)
		sdr_sr_rx_ack(w, qp, sr_of(qp), msg, h, now);
	else
		w->ctr[h->type == SDR_CTRL_PARITY ? SDR_CTR_ec_parity_not_ec : SDR_CTR_ctrl_unknown]++;
}

static void sr_poll(struct sdr_worker *w, struct sdr_qp *qp, uint64_t now)
{
	sdr_sr_poll(w, qp, sr_of(qp), now);
}

static uint64_t sr_next_due(struct sdr_qp *qp, uint64_t now)
{
	return sdr_sr_next_due(qp, sr_of(qp), now);
}

static void sr_periodic(struct sdr_worker *w, struct sdr_qp *qp, uint64_t now)
{
	uint32_t slots[SDR_MAX_MSGS];
	unsigned n = sdr_sr_recv_expired(qp, sr_of(qp), now, slots);

	for (unsigned i = 0; i < n; i++)
		sr_recv_done(w, qp, slots[i], -ETIMEDOUT, now);
}

static void sr_reset(struct sdr_qp *qp)
{
	sdr_sr_reset(sr_of(qp));
}

const struct sdr_rel_ops sdr_rel_sr = {
	.name = "sr",
	.reliability = SDR_REL_SR,
	.keeps_ranges = 1,
	.desc = &sr_desc,
	.qp_init = sr_init,
	.qp_fini = sr_fini,
	.send_prepare = sr_send_prepare,
	.tx = sr_tx,
	.recv_posted = sr_recv_posted,
	.rx_data = sr_rx_data,
	.rx_ctrl = sr_rx_ctrl,
	.recv_done = sr_recv_done,
	.poll = sr_poll,
	.periodic = sr_periodic,
	.next_due = sr_next_due,
	.reset = sr_reset,
};
