/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reliability "ec": every one-shot send carries the QP's code (Reed-Solomon
 * or XOR, k, m); streams carry no parity (their data may arrive from the
 * host in any order, so a submessage is never known to be whole) and are
 * protected by the Selective Repeat fallback (docs/reliability.md). The
 * reliable-QP core (sr_qp.h) with the EC engine plugged in (ec.h); this
 * scheme only chooses the code.
 * Layer rel/: a reliability scheme behind struct sdr_rel_ops; calls engines and primitives.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "ec.h"
#include "ec_desc.h"
#include "rel.h"
#include "sr_desc.h"

struct ec_qp {
	struct sdr_sr sr;     /* first: the reliable-QP core's state */
	struct sdr_eceng eng; /* the EC engine plugged into it */
};

static struct ec_qp *ec_of(const struct sdr_qp *qp)
{
	return qp->rel;
}

static int ec_qp_init(struct sdr_qp *qp, const struct sdr_qp_attr_abi *a, char *why, size_t len)
{
	struct ec_qp *e = calloc(1, sizeof(*e));
	const struct sdr_scheme code = {
		.rel = SDR_REL_EC, .code = a->ec_code, .k = a->ec_k, .m = a->ec_m};

	if (!e || sdr_sr_init(&e->sr, qp) || sdr_eceng_init(qp, &e->eng, &e->sr, &code, 1, 0)) {
		if (e) {
			sdr_eceng_fini(&e->eng);
			sdr_sr_fini(&e->sr);
		}
		free(e);
		snprintf(why, len, "out of memory for EC state");
		return -ENOMEM;
	}
	qp->rel = e;
	return 0;
}

static void ec_qp_fini(struct sdr_qp *qp)
{
	struct ec_qp *e = ec_of(qp);

	if (e) {
		sdr_eceng_fini(&e->eng);
		sdr_sr_fini(&e->sr);
	}
	free(e);
	qp->rel = NULL;
}

/* The code of one send: the QP's (a stream's: none). */
static int ec_send_prepare(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_smsg *sm,
			   uint64_t now)
{
	struct sdr_eceng *eng = &ec_of(qp)->eng;

	if (sm->stream)
		sdr_eceng_use_code(eng, sm, 0, 0, 0);
	else
		sdr_eceng_use_code(eng, sm, eng->code, eng->k, eng->m);
	return sdr_sr_qp_send_prepare(w, qp, sm, now);
}

/* its counters, options and stats: the SR engine's and the EC engine's
 * (sr_desc.c, ec_desc.c; the EC line comes through the plug-in's hook) */
static struct sdr_ctr_group *const ec_ctrs[] = {&sdr_qpc_sr, &sdr_qpc_ec, NULL};

static const struct sdr_rel_desc ec_desc = {
	.ctrs = ec_ctrs,
	.opts = sdr_ec_opts,
	.print = sdr_sr_qp_print,
	.json = sdr_sr_qp_json,
	.kv = sdr_sr_qp_kv,
	.metrics = sdr_sr_qp_metrics,
	.diag_send = sdr_sr_qp_diag_send,
	.prepare_failed = SDR_CTR_ec_send_nomem,
};

const struct sdr_rel_ops sdr_rel_ec = {
	.name = "ec",
	.reliability = SDR_REL_EC,
	.desc = &ec_desc,
	.qp_init = ec_qp_init,
	.qp_fini = ec_qp_fini,
	.send_prepare = ec_send_prepare,
	.set_rate = sdr_sr_qp_set_rate,
	SDR_SR_QP_OPS,
};
