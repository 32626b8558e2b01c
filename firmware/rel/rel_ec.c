/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reliability "ec": every one-shot send carries the QP's code (Reed-Solomon
 * or XOR, k, m); streams carry no parity (their data may arrive from the
 * host in any order, so a submessage is never known to be whole) and are
 * protected by the Selective Repeat fallback (docs/reliability.md).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "ec_desc.h"
#include "ec_qp.h"
#include "sr_desc.h"

static struct sdr_ecqp *ecqp_of(const struct sdr_qp *qp)
{
	return qp->rel;
}

static int ec_qp_init(struct sdr_qp *qp, const struct sdr_qp_attr_abi *a, char *why, size_t len)
{
	struct sdr_ecqp *e = calloc(1, sizeof(*e));
	const struct sdr_scheme code = {.rel = SDR_REL_EC, .code = a->ec_code, .k = a->ec_k,
					.m = a->ec_m};

	if (!e || sdr_ecqp_init(qp, e, &code, 1, 0)) {
		if (e)
			sdr_ecqp_fini(e);
		free(e);
		snprintf(why, len, "out of memory for EC state");
		return -ENOMEM;
	}
	qp->rel = e;
	return 0;
}

static void ec_qp_fini(struct sdr_qp *qp)
{
	if (qp->rel)
		sdr_ecqp_fini(ecqp_of(qp));
	free(qp->rel);
	qp->rel = NULL;
}

/* stats: the EC engine's line, then the SR engine's (ec_desc.c, sr_desc.c) */
static void ec_print(FILE *f, const struct sdr_qp *qp)
{
	sdr_ec_stats_print(f, qp, &ecqp_of(qp)->ec);
	sdr_sr_stats_print(f, qp, &ecqp_of(qp)->sr);
}

static void ec_json(FILE *f, const struct sdr_qp *qp)
{
	sdr_sr_stats_json(f, &ecqp_of(qp)->sr);
}

static void ec_kv(const struct sdr_qp *qp, const struct sdr_kv *kv)
{
	sdr_sr_stats_kv(&ecqp_of(qp)->sr, kv);
}

static struct sdr_ctr_group *const ec_ctrs[] = {&sdr_qpc_sr, &sdr_qpc_ec, NULL};

static const struct sdr_rel_desc ec_desc = {
	.ctrs = ec_ctrs,
	.opts = sdr_ec_opts,
	.print = ec_print,
	.json = ec_json,
	.kv = ec_kv,
	.prepare_failed = SDR_CTR_ec_send_nomem,
};

static int ec_send_prepare(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_smsg *sm,
			   uint64_t now)
{
	struct sdr_ecqp *e = ecqp_of(qp);

	(void)w;
	if (sm->stream)
		return sdr_ecqp_send_prepare(qp, e, sm, 0, 0, 0, now);
	return sdr_ecqp_send_prepare(qp, e, sm, e->ec.code, e->ec.k, e->ec.m, now);
}

static unsigned ec_tx(struct sdr_worker *w, struct sdr_qp *qp, uint64_t now)
{
	return sdr_ecqp_tx(w, qp, ecqp_of(qp), now);
}

static void ec_recv_posted(struct sdr_qp *qp, uint32_t slot, uint64_t now)
{
	sdr_ecqp_recv_posted(ecqp_of(qp), slot, now);
}

static void ec_rx_data(struct sdr_worker *w, struct sdr_qp *qp, const struct sdr_parsed *p,
		       uint32_t gen, uint64_t now)
{
	sdr_ecqp_rx_data(w, qp, ecqp_of(qp), p, gen, now);
}

static void ec_rx_ctrl(struct sdr_worker *w, struct sdr_qp *qp, const struct sdr_ctrl_hdr *h,
		       const uint8_t *msg, size_t len, uint64_t now)
{
	sdr_ecqp_rx_ctrl(w, qp, ecqp_of(qp), h, msg, len, now);
}

static int ec_rx_ctrl_early(struct sdr_worker *w, const struct sdr_qp *qp,
			    const struct sdr_ctrl_hdr *h, const uint8_t *msg, size_t len)
{
	return sdr_ecqp_rx_ctrl_early(w, qp, ecqp_of(qp), h, msg, len);
}

static void ec_recv_done(struct sdr_worker *w, struct sdr_qp *qp, uint32_t slot, int32_t status,
			 uint64_t now)
{
	sdr_ecqp_recv_done(w, qp, ecqp_of(qp), slot, status, now);
}

static void ec_poll(struct sdr_worker *w, struct sdr_qp *qp, uint64_t now)
{
	sdr_ecqp_poll(w, qp, ecqp_of(qp), now);
}

static void ec_periodic(struct sdr_worker *w, struct sdr_qp *qp, uint64_t now)
{
	sdr_ecqp_periodic(w, qp, ecqp_of(qp), now);
}

static uint64_t ec_next_due(struct sdr_qp *qp, uint64_t now)
{
	return sdr_ecqp_next_due(qp, ecqp_of(qp), now);
}

static void ec_reset(struct sdr_qp *qp)
{
	sdr_ecqp_reset(ecqp_of(qp));
}

const struct sdr_rel_ops sdr_rel_ec = {
	.name = "ec",
	.reliability = SDR_REL_EC,
	.keeps_ranges = 1,
	.desc = &ec_desc,
	.qp_init = ec_qp_init,
	.qp_fini = ec_qp_fini,
	.send_prepare = ec_send_prepare,
	.tx = ec_tx,
	.recv_posted = ec_recv_posted,
	.rx_data = ec_rx_data,
	.rx_ctrl = ec_rx_ctrl,
	.rx_ctrl_early = ec_rx_ctrl_early,
	.recv_done = ec_recv_done,
	.poll = ec_poll,
	.periodic = ec_periodic,
	.next_due = ec_next_due,
	.reset = ec_reset,
};
