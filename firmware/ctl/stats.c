/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stats (layer ctl): the testpmd-like block, the JSON dump, DPDK telemetry.
 * What a QP shows (its counters, its scheme's lines and keys) is
 * stats_qp.c's, through the scheme table: nothing here names a scheme.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_telemetry.h>

#include "rel.h"
#include "stats.h"
#include "linkemu_glue.h"

/* Counters are written by their worker only; readers here accept a
 * slightly stale (but never torn, on 64-bit targets) value. */
static uint64_t ctr_sum(enum sdr_ctr c)
{
	uint64_t s = *(volatile uint64_t *)&sdr_g.ctl_ctr[c];
	for (unsigned i = 0; i < sdr_g.nworkers; i++)
		s += *(volatile uint64_t *)&sdr_g.workers[i].ctr[c];
	return s;
}

static void port_sum(unsigned inst, struct sdr_port_stats *p)
{
	memset(p, 0, sizeof(*p));
	for (unsigned i = 0; i < sdr_g.nworkers; i++) {
		const struct sdr_port_stats *x = &sdr_g.workers[i].port[inst];
		p->rx_pkts += x->rx_pkts;
		p->rx_bytes += x->rx_bytes;
		p->tx_pkts += x->tx_pkts;
		p->tx_bytes += x->tx_bytes;
	}
}

/* What each worker counts of its loop and its pacer (read slightly stale,
 * like the counters): the stats block, --stats-json "workers", telemetry
 * /sdr/workers. pace_cycles / pace_polls is the pacer's cost per loop
 * (docs/architecture.md "Pacing"). */
/* clang-format off */
#define WORKER_STATS(X)                                                                      \
	X(loops, w->loops) X(work_loops, w->work_loops) X(idle_sleeps, w->idle_sleeps)         \
	X(pace_polls, w->pace_polls)                                                             \
	X(pace_cycles, w->pace_cycles) X(pace_frames, w->pace_frames)                            \
	X(pace_stalls, w->pace_stalls) X(visits_paced, w->visits[SDR_VISIT_PACED])               \
	X(visits_touched, w->visits[SDR_VISIT_TOUCHED])                                          \
	X(visits_timer, w->visits[SDR_VISIT_TIMER]) X(handoff_rx, w->handoff_rx)             \
	X(pace_outliers, w->pace_outliers) X(loop_tx_full, w->loop_tx_full)
/* clang-format on */

static uint64_t rd(const uint64_t *p)
{
	return *(const volatile uint64_t *)p;
}

void sdr_stats_print(FILE *f)
{
	struct sdr_port_stats p;
	struct rte_eth_stats es;

	for (unsigned i = 0; i < sdr_g.ninst; i++) {
		struct sdr_inst *in = &sdr_g.inst[i];
		port_sum(i, &p);
		memset(&es, 0, sizeof(es));
		rte_eth_stats_get(in->port, &es);
		fprintf(f, "\n  ######## sdr-dpu %s: port %u ########\n", in->cfg.name, in->port);
		fprintf(f,
			"  RX-packets: %-12" PRIu64 " RX-bytes: %-14" PRIu64
			" RX-missed: %-8" PRIu64 " RX-nombuf: %" PRIu64 "\n",
			p.rx_pkts, p.rx_bytes, es.imissed, es.rx_nombuf);
		fprintf(f,
			"  TX-packets: %-12" PRIu64 " TX-bytes: %-14" PRIu64 " TX-errors: %" PRIu64
			"\n",
			p.tx_pkts, p.tx_bytes, es.oerrors);
		for (unsigned q = 0; q < SDR_MAX_QPS; q++) {
			struct sdr_qp *qp = atomic_load(&in->qps[q]);
			if (!qp)
				continue;
			sdr_stats_qp_print(f, qp);
		}
		fprintf(f,
			"  QPs (live + closed): msgs sent %" PRIu64 " recv %" PRIu64
			" partial %" PRIu64 " send-errors %" PRIu64 "\n",
			in->closed.msgs_sent, in->closed.msgs_recv, in->closed.msgs_partial,
			in->closed.send_errors);
		sdr_linkemu_print(f, in);
	}
	for (unsigned i = 0; i < sdr_g.nworkers; i++) {
		const struct sdr_worker *w = &sdr_g.workers[i];
		uint64_t polls = rd(&w->pace_polls);

		fprintf(f,
			"  worker %u: loops %" PRIu64 " idle-sleeps %" PRIu64
			" | QP visits paced %" PRIu64 " touched %" PRIu64 " timer %" PRIu64
			" | pacer frames %" PRIu64 " stalls %" PRIu64
			" %.0f cycles/loop | hand-off in %" PRIu64 "\n",
			i, rd(&w->loops), rd(&w->idle_sleeps), rd(&w->visits[SDR_VISIT_PACED]),
			rd(&w->visits[SDR_VISIT_TOUCHED]), rd(&w->visits[SDR_VISIT_TIMER]),
			rd(&w->pace_frames), rd(&w->pace_stalls),
			polls ? (double)rd(&w->pace_cycles) / (double)polls : 0.0,
			rd(&w->handoff_rx));
	}
	fprintf(f, "  ---- drops and errors (all ports, non-zero) ----\n");
	int any = 0;
	for (unsigned c = 0; c < SDR_CTR__MAX; c++) {
		uint64_t v = ctr_sum(c);
		if (!v)
			continue;
		fprintf(f, "  %-14s %-12" PRIu64 " %s\n", sdr_ctr_names[c], v, sdr_ctr_descs[c]);
		any = 1;
	}
	if (!any)
		fprintf(f, "  (none)\n");
	fprintf(f, "  ##############################################\n");
	fflush(f);
}

static void json_link_cb(void *arg, const char *name, uint64_t v)
{
	FILE *f = arg;
	fprintf(f, ",\"%s\":%" PRIu64, name, v);
}

int sdr_stats_json(const char *path)
{
	FILE *f = fopen(path, "w");
	struct sdr_port_stats p;

	if (!f)
		return -1;
	fprintf(f, "{\"version\":\"%s\",\"drops\":{", SDR_VERSION);
	for (unsigned c = 0; c < SDR_CTR__MAX; c++)
		fprintf(f, "%s\"%s\":%" PRIu64, c ? "," : "", sdr_ctr_names[c], ctr_sum(c));
	fprintf(f, "},\"tsc_hz\":%" PRIu64 ",\"workers\":[", sdr_g.tsc_hz);
	for (unsigned i = 0; i < sdr_g.nworkers; i++) {
		const struct sdr_worker *w = &sdr_g.workers[i];
		const char *sep = "";

		fprintf(f, "%s{", i ? "," : "");
#define J(n, v)                                             \
	fprintf(f, "%s\"" #n "\":%" PRIu64, sep, rd(&(v))); \
	sep = ",";
		WORKER_STATS(J)
#undef J
		fprintf(f, "}");
	}
	fprintf(f, "],\"instances\":[");
	for (unsigned i = 0; i < sdr_g.ninst; i++) {
		struct sdr_inst *in = &sdr_g.inst[i];
		port_sum(i, &p);
		fprintf(f,
			"%s{\"name\":\"%s\",\"port\":%u,\"rx_pkts\":%" PRIu64
			",\"rx_bytes\":%" PRIu64 ",\"tx_pkts\":%" PRIu64 ",\"tx_bytes\":%" PRIu64
			",\"link\":{\"on\":%d",
			i ? "," : "", in->cfg.name, in->port, p.rx_pkts, p.rx_bytes, p.tx_pkts,
			p.tx_bytes, sdr_linkemu_on(in));
		sdr_linkemu_foreach(in, -1, json_link_cb, f);
		/* per lane: the per-peer profiles, then the default lane */
		fprintf(f, ",\"lanes\":[");
		for (unsigned l = 0; l < sdr_linkemu_lanes(in); l++) {
			char desc[1024];

			sdr_linkemu_lane_desc(in, l, desc, sizeof(desc));
			fprintf(f, "%s{\"lane\":\"", l ? "," : "");
			/* NAME:IP+IP:SPEC - no quotes or backslashes can be in it */
			fputs(desc, f);
			fprintf(f, "\"");
			sdr_linkemu_foreach(in, (int)l, json_link_cb, f);
			fprintf(f, "}");
		}
		fprintf(f, "]");
		fprintf(f, "}");
		sdr_stats_inst_qps_json(f, in);
		fprintf(f, "}");
	}
	fprintf(f, "]}\n");
	return fclose(f);
}

static int tel_stats(const char *cmd, const char *params, struct rte_tel_data *d)
{
	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	for (unsigned c = 0; c < SDR_CTR__MAX; c++)
		rte_tel_data_add_dict_u64(d, sdr_ctr_names[c], ctr_sum(c));
	for (unsigned i = 0; i < sdr_g.ninst; i++) {
		struct sdr_port_stats p;
		char k[64];
		port_sum(i, &p);
		snprintf(k, sizeof(k), "inst%u_rx_pkts", i);
		rte_tel_data_add_dict_u64(d, k, p.rx_pkts);
		snprintf(k, sizeof(k), "inst%u_tx_pkts", i);
		rte_tel_data_add_dict_u64(d, k, p.tx_pkts);
		snprintf(k, sizeof(k), "inst%u_rx_bytes", i);
		rte_tel_data_add_dict_u64(d, k, p.rx_bytes);
		snprintf(k, sizeof(k), "inst%u_tx_bytes", i);
		rte_tel_data_add_dict_u64(d, k, p.tx_bytes);
		/* mbufs out of the port's pool (per-lcore caches count as free):
		 * what RX, the link emulator and TX hold; a leak shows here */
		snprintf(k, sizeof(k), "inst%u_mbufs_in_use", i);
		rte_tel_data_add_dict_u64(
			d, k,
			sdr_g.inst[i].pool ? rte_mempool_in_use_count(sdr_g.inst[i].pool) : 0);
		snprintf(k, sizeof(k), "inst%u_mbufs", i);
		rte_tel_data_add_dict_u64(d, k, sdr_g.inst[i].pool ? sdr_g.inst[i].pool->size : 0);
	}
	return 0;
}

/* Per worker and summed: "loops", "w0_loops", ... */
static int tel_workers(const char *cmd, const char *params, struct rte_tel_data *d)
{
	char k[48];

	(void)cmd;
	(void)params;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "workers", sdr_g.nworkers);
	rte_tel_data_add_dict_u64(d, "tsc_hz", sdr_g.tsc_hz);
#define T(n, v)                                                         \
	{                                                               \
		uint64_t sum = 0;                                       \
		for (unsigned i = 0; i < sdr_g.nworkers; i++) {         \
			const struct sdr_worker *w = &sdr_g.workers[i]; \
			snprintf(k, sizeof(k), "w%u_" #n, i);           \
			rte_tel_data_add_dict_u64(d, k, rd(&(v)));      \
			sum += rd(&(v));                                \
		}                                                       \
		rte_tel_data_add_dict_u64(d, #n, sum);                  \
	}
	WORKER_STATS(T)
#undef T
	return 0;
}

/* The records of flow @p flow in worker @p w's --pace-trace ring: frames,
 * first and last departure, and the most bytes in any window of @p win
 * cycles (all windows, and those that begin with a frame sent after the
 * flow was idle). Two pointers over the ring: O(records). */
struct peak {
	uint64_t frames, starts, peak, peak_idle, first, last, recorded;
};

static void pace_peak(const struct sdr_worker *w, uint32_t flow, uint64_t win, struct peak *pk)
{
	uint64_t n = rd(&w->ntrace), from, sum = 0;
	uint32_t mask = w->trace_cap - 1;

	from = n > w->trace_cap ? n - w->trace_cap : 0;
	pk->recorded += n - from;
	for (uint64_t i = from, j = from; i < n; i++) {
		const struct sdr_pace_rec *a = &w->trace[i & mask];
		if (a->flow != flow)
			continue;
		if (!pk->frames++ || a->tsc < pk->first)
			pk->first = a->tsc;
		if (a->tsc > pk->last)
			pk->last = a->tsc;
		if (j < i) /* (sum holds the flow's bytes in [i, j)) */
			j = i;
		while (j < n && w->trace[j & mask].tsc < a->tsc + win) {
			if (w->trace[j & mask].flow == flow)
				sum += w->trace[j & mask].bytes & ~SDR_PACE_REC_FIRST;
			j++;
		}
		if (sum > pk->peak)
			pk->peak = sum;
		if (a->bytes & SDR_PACE_REC_FIRST) {
			pk->starts++;
			if (sum > pk->peak_idle)
				pk->peak_idle = sum;
		}
		sum -= a->bytes & ~SDR_PACE_REC_FIRST;
	}
}

/*
 * /sdr/pace_peak,INST,QP,WINDOW_NS: from the departure times --pace-trace
 * kept of QP id QP of instance INST (also after the QP was destroyed, until
 * the records are overwritten), the most frame bytes it sent in any window
 * of WINDOW_NS (peak_bytes), and in the windows that begin with a frame sent
 * after the QP was idle (peak_bytes_after_idle). A benchmark (sdr-perf
 * --gap-us) divides them by what the QP's rate allows in the window. Read it
 * once the QP's traffic has stopped (the workers write their record rings
 * without waiting for us).
 */
static int tel_pace_peak(const char *cmd, const char *params, struct rte_tel_data *d)
{
	unsigned inst, qid;
	unsigned long long win_ns;
	const struct sdr_qp *qp;
	struct peak pk = {0};
	uint64_t win;
	int traced = 0;

	(void)cmd;
	if (!params || sscanf(params, "%u,%u,%llu", &inst, &qid, &win_ns) != 3 ||
	    inst >= sdr_g.ninst || qid >= SDR_MAX_QPS || !win_ns)
		return -EINVAL;
	win = (uint64_t)((unsigned __int128)win_ns * sdr_g.tsc_hz / 1000000000u);
	for (unsigned i = 0; i < sdr_g.nworkers; i++)
		if (sdr_g.workers[i].trace) {
			pace_peak(&sdr_g.workers[i], inst * SDR_MAX_QPS + qid, win, &pk);
			traced = 1;
		}
	if (!traced)
		return -ENOTSUP;
	qp = atomic_load(&sdr_g.inst[inst].qps[qid]);
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "frames", pk.frames);
	rte_tel_data_add_dict_u64(d, "idle_starts", pk.starts);
	rte_tel_data_add_dict_u64(d, "window_ns", win_ns);
	rte_tel_data_add_dict_u64(d, "peak_bytes", pk.peak);
	rte_tel_data_add_dict_u64(d, "peak_bytes_after_idle", pk.peak_idle);
	rte_tel_data_add_dict_u64(
		d, "span_ns",
		(uint64_t)((unsigned __int128)(pk.last - pk.first) * 1000000000u / sdr_g.tsc_hz));
	rte_tel_data_add_dict_u64(d, "rate_bps", qp ? qp->rate_bps : 0); /* (0: gone) */
	rte_tel_data_add_dict_u64(d, "recorded", pk.recorded);
	return 0;
}

static void tel_link_cb(void *arg, const char *name, uint64_t v)
{
	rte_tel_data_add_dict_u64(arg, name, v);
}

static void tel_u64(void *arg, const char *key, uint64_t v)
{
	rte_tel_data_add_dict_u64(arg, key, v);
}

static void tel_str(void *arg, const char *key, const char *v)
{
	rte_tel_data_add_dict_string(arg, key, v);
}

static int tel_qps(const char *cmd, const char *params, struct rte_tel_data *d)
{
	unsigned inst = params && *params ? (unsigned)atoi(params) : 0;
	(void)cmd;
	if (inst >= sdr_g.ninst)
		return -EINVAL;
	rte_tel_data_start_dict(d);
	for (unsigned q = 0; q < SDR_MAX_QPS; q++) {
		struct sdr_qp *qp = atomic_load(&sdr_g.inst[inst].qps[q]);
		struct rte_tel_data *x;
		char k[32];
		if (!qp)
			continue;
		x = rte_tel_data_alloc();
		if (!x)
			return -ENOMEM;
		rte_tel_data_start_dict(x);
		sdr_stats_qp_kv(qp, &(struct sdr_kv){.arg = x, .u64 = tel_u64, .str = tel_str});
		snprintf(k, sizeof(k), "qp_0x%06x", qp->qpn_base);
		rte_tel_data_add_dict_container(d, k, x, 0);
	}
	return 0;
}

/* "/sdr/link,INST" - every lane together; "/sdr/link,INST,LANE" - lane
 * LANE alone (0.. the per-peer profiles in the order given, then the
 * default lane), with its description under "lane". */
static int tel_link(const char *cmd, const char *params, struct rte_tel_data *d)
{
	unsigned inst = 0;
	int lane = -1;
	char desc[1024];
	(void)cmd;
	if (params && *params) {
		const char *comma = strchr(params, ',');
		inst = (unsigned)atoi(params);
		if (comma)
			lane = atoi(comma + 1);
	}
	if (inst >= sdr_g.ninst)
		return -EINVAL;
	if (lane >= 0 && (unsigned)lane >= sdr_linkemu_lanes(&sdr_g.inst[inst]))
		return -EINVAL;
	rte_tel_data_start_dict(d);
	rte_tel_data_add_dict_u64(d, "lanes", sdr_linkemu_lanes(&sdr_g.inst[inst]));
	if (lane >= 0 &&
	    sdr_linkemu_lane_desc(&sdr_g.inst[inst], (unsigned)lane, desc, sizeof(desc)))
		rte_tel_data_add_dict_string(d, "lane", desc);
	sdr_linkemu_foreach(&sdr_g.inst[inst], lane, tel_link_cb, d);
	return 0;
}

void sdr_telemetry_register(void)
{
	rte_telemetry_register_cmd("/sdr/stats", tel_stats,
				   "sdr-dpu drop/error counters and per-instance packet counts");
	rte_telemetry_register_cmd("/sdr/qps", tel_qps,
				   "Per-QP counters of an instance. Parameters: instance index");
	rte_telemetry_register_cmd(
		"/sdr/workers", tel_workers,
		"Per-worker loop, QP-visit, pacer and hand-off counters (w<N>_...) and"
		" their sums");
	rte_telemetry_register_cmd(
		"/sdr/pace_peak", tel_pace_peak,
		"Peak frame bytes of a QP in a window (--pace-trace). Parameters:"
		" instance,qp_id,window_ns");
	rte_telemetry_register_cmd(
		"/sdr/link", tel_link,
		"Link-emulator counters of an instance, every lane together or one lane."
		" Parameters: instance index[,lane index]");
}
