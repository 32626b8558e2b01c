/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reliability "none": raw SDR. Packets go out once; a send completes when
 * it is on the wire, a receive when its bitmap is full (or its host
 * completes it); the host sees the bitmap and decides.
 * Layer rel/: a reliability scheme behind struct sdr_rel_ops; calls engines and primitives.
 */
#include "cq.h"
#include "recv.h"
#include "rel.h"
#include "send.h"

static int none_init(struct sdr_qp *qp, const struct sdr_qp_attr_abi *a, char *why, size_t len)
{
	(void)a, (void)why, (void)len;
	qp->rel = NULL;
	return 0;
}

static void none_fini(struct sdr_qp *qp)
{
	(void)qp;
}

static int none_send_prepare(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_smsg *sm,
			     uint64_t now)
{
	(void)w, (void)qp, (void)sm, (void)now;
	return 0;
}

static unsigned none_tx(struct sdr_worker *w, struct sdr_qp *qp, uint64_t now)
{
	return sdr_send_first_pass(w, qp, SDR_BURST, now, NULL);
}

static void none_rx_data(struct sdr_worker *w, struct sdr_qp *qp, const struct sdr_parsed *p,
			 uint32_t gen, uint64_t now)
{
	enum sdr_ctr drop;
	uint32_t slot;
	int rc = sdr_recv_place(w, qp, p, gen, now, &slot, &drop);

	if (rc >= 0 && (rc & SDR_PLACE_COMPLETE))
		sdr_cq_recv(w, qp, slot, 0);
}

static void none_rx_ctrl(struct sdr_worker *w, struct sdr_qp *qp, const struct sdr_ctrl_hdr *h,
			 const uint8_t *msg, size_t len, uint64_t now)
{
	(void)qp, (void)msg, (void)len, (void)now;
	w->ctr[h->type == SDR_CTRL_PARITY ? SDR_CTR_ec_parity_not_ec : SDR_CTR_ctrl_unknown]++;
}

static void none_recv_done(struct sdr_worker *w, struct sdr_qp *qp, uint32_t slot, int32_t status,
			   uint64_t now)
{
	(void)now;
	sdr_cq_recv(w, qp, slot, status);
}

/* no counters, options or stats of its own; its sends cannot fail */
static const struct sdr_rel_desc none_desc = {.ctrs = NULL};

const struct sdr_rel_ops sdr_rel_none = {
	.name = "none",
	.reliability = SDR_REL_NONE,
	.keeps_ranges = 0,
	.desc = &none_desc,
	.qp_init = none_init,
	.qp_fini = none_fini,
	.send_prepare = none_send_prepare,
	.tx = none_tx,
	.rx_data = none_rx_data,
	.rx_ctrl = none_rx_ctrl,
	.recv_done = none_recv_done,
};
