/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reliability "sr": Selective Repeat (docs/reliability.md), the
 * reliable-QP core (sr_qp.h) with no plug-in on every send and receive of
 * the QP.
 * Layer rel/: a reliability scheme behind struct sdr_rel_ops; calls engines and primitives.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "rel.h"
#include "sr_desc.h"
#include "sr_qp.h"

static int sr_init(struct sdr_qp *qp, const struct sdr_qp_attr_abi *a, char *why, size_t len)
{
	struct sdr_sr *sr = calloc(1, sizeof(*sr));

	(void)a;
	if (!sr || sdr_sr_init(sr, qp)) {
		if (sr)
			sdr_sr_fini(sr);
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
		sdr_sr_fini(sdr_sr_of(qp));
	free(qp->rel);
	qp->rel = NULL;
}

/* its counters, options and stats: the SR engine's (sr_desc.c) */
static struct sdr_ctr_group *const sr_ctrs[] = {&sdr_qpc_sr, NULL};

static const struct sdr_rel_desc sr_desc = {
	.ctrs = sr_ctrs,
	.opts = sdr_sr_opts,
	.print = sdr_sr_qp_print,
	.json = sdr_sr_qp_json,
	.kv = sdr_sr_qp_kv,
	.metrics = sdr_sr_qp_metrics,
	.diag_send = sdr_sr_qp_diag_send,
	.prepare_failed = SDR_CTR_sr_nomem,
};

const struct sdr_rel_ops sdr_rel_sr = {
	.name = "sr",
	.reliability = SDR_REL_SR,
	.desc = &sr_desc,
	.qp_init = sr_init,
	.qp_fini = sr_fini,
	.send_prepare = sdr_sr_qp_send_prepare,
	.set_rate = sdr_sr_qp_set_rate,
	SDR_SR_QP_OPS,
};
