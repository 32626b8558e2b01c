/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What a QP shows in the stats (layer ctl): its counters (the ones of every
 * QP and its scheme's groups) and its scheme's keys, through the scheme
 * table (rel.h). No DPDK call: the engine rig's tests link it.
 */
#include <inttypes.h>

#include "rel.h"
#include "sdr_ctx.h"
#include "stats.h"

void sdr_stats_qp_print(FILE *f, const struct sdr_qp *qp)
{
	fprintf(f,
		"  QP 0x%06x (ctx %u, worker %u, %s): msgs sent %" PRIu64 " recv %" PRIu64
		" partial %" PRIu64 " send-errors %" PRIu64 " | pkts tx %" PRIu64 " rx %" PRIu64
		" | chunks %" PRIu64 " | CTS tx %" PRIu64 " rx %" PRIu64 "\n",
		qp->qpn_base, qp->ctx ? qp->ctx->id : 0, qp->worker,
		qp->state == SDR_QPS_CONNECTED ? "connected" : "created", qp->st.msgs_sent,
		qp->st.msgs_recv, qp->st.msgs_partial, qp->st.send_errors, qp->st.tx_pkts,
		qp->st.rx_pkts, qp->st.chunks_done, qp->st.cts_tx, qp->st.cts_rx);
	if (qp->ops->desc->print)
		qp->ops->desc->print(f, qp);
}

void sdr_stats_qp_foreach(const struct sdr_qp_stats *st, sdr_stats_ctr_fn fn, void *arg)
{
	sdr_rel_ctrs_foreach(st, fn, arg);
}

struct json_arg {
	FILE *f;
	const char *sep;
};

static void json_ctr(void *arg, const char *name, uint64_t v, const char *scheme)
{
	struct json_arg *j = arg;

	(void)scheme;
	fprintf(j->f, "%s\"%s\":%" PRIu64, j->sep, name, v);
	j->sep = ",";
}

void sdr_stats_qp_json(FILE *f, const struct sdr_qp *qp)
{
	struct json_arg j = {.f = f, .sep = ","};

	fprintf(f, "{\"qpn\":%u", qp->qpn_base);
	sdr_stats_qp_foreach(&qp->st, json_ctr, &j);
	fprintf(f, ",\"reliability\":%u,\"state\":%d,\"rate_bps\":%" PRIu64, qp->reliability,
		qp->state, qp->rate_bps);
	if (qp->ops->desc->json)
		qp->ops->desc->json(f, qp);
	fprintf(f, "}");
}

void sdr_stats_inst_qps_json(FILE *f, const struct sdr_inst *in)
{
	struct sdr_qp_stats tot = in->closed;
	struct json_arg j = {.f = f, .sep = ""};
	const struct sdr_rel_ops *o;
	int first = 1;

	for (unsigned q = 0; q < SDR_MAX_QPS; q++) {
		struct sdr_qp *qp = atomic_load(&in->qps[q]);
		if (qp)
			sdr_qp_stats_fold(&tot, &qp->st);
	}
	fprintf(f, ",\"qp_totals\":{");
	sdr_stats_qp_foreach(&tot, json_ctr, &j);
	fprintf(f, "},\"qps\":[");
	for (unsigned q = 0; q < SDR_MAX_QPS; q++) {
		struct sdr_qp *qp = atomic_load(&in->qps[q]);
		if (!qp)
			continue;
		fprintf(f, "%s", first ? "" : ",");
		sdr_stats_qp_json(f, qp);
		first = 0;
	}
	fprintf(f, "]");
	for (unsigned i = 0; (o = sdr_rel_scheme(i)); i++)
		if (o->desc->json_inst)
			o->desc->json_inst(f, in);
}

static void kv_ctr(void *arg, const char *name, uint64_t v, const char *scheme)
{
	const struct sdr_kv *kv = arg;

	(void)scheme;
	kv->u64(kv->arg, name, v);
}

void sdr_stats_qp_kv(const struct sdr_qp *qp, const struct sdr_kv *kv)
{
	sdr_stats_qp_foreach(&qp->st, kv_ctr, (void *)kv);
	/* the QP's pacing rate (QP_CREATE / QP_SET_RATE; 0 = unpaced) */
	kv->u64(kv->arg, "rate_bps", qp->rate_bps);
	if (qp->ops->desc->kv)
		qp->ops->desc->kv(qp, kv);
}
