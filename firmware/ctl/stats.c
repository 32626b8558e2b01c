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
#include "sdr_diag.h"
#include "sdr_link.h"
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
		fprintf(f, "\n  ######## sdr-dpu %s %s: port %u ########\n", SDR_VERSION,
			in->cfg.name, in->port);
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
		/* per lane: the per-peer profiles' paths, then the default lane's */
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

/* ---- every statistic for exporters (sdr_stats_walk, metrics.c) ---- */

/* @p s into @p out as a Prometheus label value (\\, " and newline escaped) */
static void label_escape(const char *s, char *out, size_t len)
{
	size_t o = 0;

	for (; *s && o + 3 < len; s++) {
		if (*s == '\\' || *s == '"' || *s == '\n') {
			out[o++] = '\\';
			out[o++] = *s == '\n' ? 'n' : *s;
		} else {
			out[o++] = *s;
		}
	}
	out[o] = 0;
}

static void inst_label(const struct sdr_inst *in, char *buf, size_t len)
{
	char esc[256];

	label_escape(in->cfg.name ? in->cfg.name : "", esc, sizeof(esc));
	snprintf(buf, len, "dpu=\"%s\"", esc);
}

void sdr_stats_qp_labels(const struct sdr_qp *qp, char *buf, size_t len)
{
	char in[300], peer[16] = "";

	inst_label(qp->inst, in, sizeof(in));
	if (qp->state == SDR_QPS_CONNECTED || qp->state == SDR_QPS_ERROR)
		sdr_format_ipv4(qp->remote.ip, peer);
	snprintf(buf, len, "%s,qp=\"0x%06x\",peer=\"%s\",scheme=\"%s\"", in, qp->qpn_base, peer,
		 qp->ops && qp->ops->name ? qp->ops->name : "?");
}

struct link_walk {
	const struct sdr_stats_sink *s;
	const char *labels;
};

static void link_walk_cb(void *arg, const char *name, uint64_t v)
{
	const struct link_walk *lw = arg;
	const char *help = "link emulator";
	char n[64];
	size_t nl = strlen(name);
	/* levels (the rest count events since the start) */
	int gauge = !strcmp(name, "held") || !strncmp(name, "max_", 4) ||
		    !strcmp(name, "backlog_bytes");
	double val = (double)v;

	for (unsigned i = 0; i < sdr_link_stats_count(); i++)
		if (!strcmp(sdr_link_stats_name(i), name))
			help = sdr_link_stats_help(i);
	if (nl > 3 && !strcmp(name + nl - 3, "_ns")) { /* base units: seconds */
		snprintf(n, sizeof(n), "link_%.*s_seconds", (int)(nl - 3), name);
		val /= 1e9;
	} else {
		snprintf(n, sizeof(n), "link_%s", name);
	}
	lw->s->sample(lw->s->arg, gauge ? SDR_STAT_GAUGE : SDR_STAT_COUNTER, n, help, lw->labels,
		      val);
}

struct ctr_walk {
	const struct sdr_stats_sink *s;
	const char *labels;
};

/* every per-QP counter, each scheme's group included (sdr_stats_qp_foreach):
 * "qp_<name>" ("qp_sr_retx_pkts": the group's name leads the counter's) */
static void walk_ctr(void *arg, const char *name, uint64_t value, const char *scheme)
{
	const struct ctr_walk *cw = arg;
	char n[96], help[160];

	snprintf(n, sizeof(n), "qp_%s", name);
	if (scheme)
		snprintf(help, sizeof(help), "per-QP counter %s (counted by the %s engine)", name,
			 scheme);
	else
		snprintf(help, sizeof(help), "per-QP counter %s", name);
	cw->s->sample(cw->s->arg, SDR_STAT_COUNTER, n, help, cw->labels, (double)value);
}

static void walk_qp_stats(const struct sdr_stats_sink *s, const char *lb,
			  const struct sdr_qp_stats *st)
{
	struct ctr_walk cw = {s, lb};

	sdr_stats_qp_foreach(st, walk_ctr, &cw);
}

/* a scheme's metrics of a QP (struct sdr_rel_desc::metrics) as samples */
static void walk_metric(const struct ctr_walk *cw, enum sdr_stat_kind kind, const char *name,
			const char *help, const char *label, double v)
{
	char n[96], lb[700];

	snprintf(n, sizeof(n), "qp_%s", name);
	if (label)
		snprintf(lb, sizeof(lb), "%s,%s", cw->labels, label);
	cw->s->sample(cw->s->arg, kind, n, help, label ? lb : cw->labels, v);
}

static void walk_gauge(void *arg, const char *name, const char *help, const char *label, double v)
{
	walk_metric(arg, SDR_STAT_GAUGE, name, help, label, v);
}

static void walk_counter(void *arg, const char *name, const char *help, const char *label, double v)
{
	walk_metric(arg, SDR_STAT_COUNTER, name, help, label, v);
}

/* Sends posted and not complete (the window is advanced lazily: count) */
static uint32_t sends_outstanding(const struct sdr_qp *qp)
{
	uint32_t n = 0, to = *(const volatile uint32_t *)&qp->send_next;

	for (uint32_t seq = *(const volatile uint32_t *)&qp->ack_cursor; seq != to; seq++) {
		const struct sdr_smsg *sm = &qp->smsg[sdr_seq_msg_id(seq)];
		n += sm->state == SDR_SM_QUEUED && sm->seq == seq;
		if (n >= SDR_MAX_MSGS)
			break;
	}
	return n;
}

static void walk_qp(const struct sdr_stats_sink *s, const struct sdr_qp *qp)
{
	char lb[512];
	struct ctr_walk cw = {s, lb};
	const struct sdr_metric_sink m = {.arg = &cw, .gauge = walk_gauge, .counter = walk_counter};

	sdr_stats_qp_labels(qp, lb, sizeof(lb));
	walk_qp_stats(s, lb, &qp->st);
	s->sample(s->arg, SDR_STAT_GAUGE, "qp_connected", "1 while the QP is connected", lb,
		  qp->state == SDR_QPS_CONNECTED);
	s->sample(s->arg, SDR_STAT_GAUGE, "qp_error", "1 once the QP is in the error state", lb,
		  qp->state == SDR_QPS_ERROR);
	s->sample(s->arg, SDR_STAT_GAUGE, "qp_pacing_rate_bytes_per_second",
		  "the QP's pacing rate (0 = unpaced)", lb, (double)qp->rate_bps / 8);
	s->sample(s->arg, SDR_STAT_GAUGE, "qp_outstanding_sends",
		  "sends posted and not yet complete", lb, (double)sends_outstanding(qp));
	s->sample(s->arg, SDR_STAT_GAUGE, "qp_posted_receives", "receives posted and not complete",
		  lb, (double)*(volatile uint32_t *)&qp->rq.nposted);
	/* the scheme's own (the SR engine's RTT estimator, EC's pool, AUTO's
	 * estimates and picks) */
	if (qp->ops->desc && qp->ops->desc->metrics)
		qp->ops->desc->metrics(qp, &m);
	if (s->hist)
		s->hist(s->arg, lb, &qp->ct_hist);
}

void sdr_stats_walk(const struct sdr_stats_sink *s)
{
	char lb[512];

	snprintf(lb, sizeof(lb), "version=\"%s\"", SDR_VERSION);
	s->sample(s->arg, SDR_STAT_GAUGE, "build_info", "sdr-dpu version (always 1)", lb, 1);
	for (unsigned c = 0; c < SDR_CTR__MAX; c++) {
		snprintf(lb, sizeof(lb), "reason=\"%s\"", sdr_ctr_names[c]);
		s->sample(s->arg, SDR_STAT_COUNTER, "drops",
			  "packets and requests dropped or refused, by reason (sdr-dpu counters)",
			  lb, (double)ctr_sum(c));
	}
	for (unsigned i = 0; i < sdr_g.nworkers; i++) {
		const struct sdr_worker *w = &sdr_g.workers[i];

		snprintf(lb, sizeof(lb), "worker=\"%u\"", i);
#define W(n, v) \
	s->sample(s->arg, SDR_STAT_COUNTER, "worker_" #n, "worker loop: " #n, lb, (double)rd(&(v)));
		WORKER_STATS(W)
#undef W
	}
	for (unsigned i = 0; i < sdr_g.ninst; i++) {
		struct sdr_inst *in = &sdr_g.inst[i];
		struct sdr_port_stats p;
		struct rte_eth_stats es;
		char il[300];

		inst_label(in, il, sizeof(il));
		port_sum(i, &p);
		memset(&es, 0, sizeof(es));
		rte_eth_stats_get(in->port, &es);
		s->sample(s->arg, SDR_STAT_COUNTER, "port_rx_packets", "frames received", il,
			  (double)p.rx_pkts);
		s->sample(s->arg, SDR_STAT_COUNTER, "port_rx_bytes", "bytes received", il,
			  (double)p.rx_bytes);
		s->sample(s->arg, SDR_STAT_COUNTER, "port_tx_packets", "frames sent", il,
			  (double)p.tx_pkts);
		s->sample(s->arg, SDR_STAT_COUNTER, "port_tx_bytes", "bytes sent", il,
			  (double)p.tx_bytes);
		s->sample(s->arg, SDR_STAT_COUNTER, "port_rx_missed_packets",
			  "frames the port dropped: RX ring full (DPDK imissed)", il,
			  (double)es.imissed);
		s->sample(s->arg, SDR_STAT_COUNTER, "port_rx_nombuf", "RX without an mbuf", il,
			  (double)es.rx_nombuf);
		s->sample(s->arg, SDR_STAT_COUNTER, "port_tx_errors",
			  "frames the port failed to send", il, (double)es.oerrors);
		s->sample(s->arg, SDR_STAT_GAUGE, "port_mbufs_in_use",
			  "mbufs out of the port's pool", il,
			  in->pool ? (double)rte_mempool_in_use_count(in->pool) : 0);
		/* per lane (the per-peer profiles, then the default lane): a
		 * sum over lanes is the whole emulator */
		for (unsigned l = 0; sdr_linkemu_on(in) && l < sdr_linkemu_lanes(in); l++) {
			char desc[1024], esc[1100], ll[1500];
			struct link_walk lw = {s, ll};

			sdr_linkemu_lane_desc(in, l, desc, sizeof(desc));
			label_escape(desc, esc, sizeof(esc));
			snprintf(ll, sizeof(ll), "%s,lane=\"%s\"", il, esc);
			sdr_linkemu_foreach(in, (int)l, link_walk_cb, &lw);
		}
		/* the QPs destroyed since the start, folded together */
		snprintf(lb, sizeof(lb), "%s,qp=\"closed\",peer=\"\",scheme=\"\"", il);
		walk_qp_stats(s, lb, &in->closed);
		if (s->hist)
			s->hist(s->arg, lb, &in->closed_hist);
		for (unsigned q = 0; q < SDR_MAX_QPS; q++) {
			struct sdr_qp *qp = atomic_load(&in->qps[q]);
			if (qp)
				walk_qp(s, qp);
		}
	}
}

/* ---- operations not yet complete, in plain words (/ops, sdr-diag) ---- */

void sdr_stats_ops(FILE *f)
{
	const uint64_t now = rte_get_tsc_cycles();
	const double hz = sdr_g.tsc_hz ? (double)sdr_g.tsc_hz : 1.0;
	char line[1024];

#define AGO(t) ((t) ? (double)(now - (t)) / hz : -1.0)
	fprintf(f, "sdr-dpu %s: operations not yet complete\n", SDR_VERSION);
	for (unsigned i = 0; i < sdr_g.ninst; i++) {
		struct sdr_inst *in = &sdr_g.inst[i];

		fprintf(f, "instance %s\n", in->cfg.name);
		for (unsigned q = 0; q < SDR_MAX_QPS; q++) {
			struct sdr_qp *qp = atomic_load(&in->qps[q]);
			const struct sdr_rq *rq;
			char peer[16] = "";
			uint32_t from, to;
			unsigned shown = 0;

			if (!qp)
				continue;
			rq = &qp->rq;
			if (qp->state == SDR_QPS_CONNECTED || qp->state == SDR_QPS_ERROR)
				sdr_format_ipv4(qp->remote.ip, peer);
			fprintf(f,
				"  QP 0x%06x (%s, peer %s, %s): %u receive(s) posted,"
				" %u send(s) outstanding\n",
				qp->qpn_base, qp->ops->name, *peer ? peer : "-",
				qp->state == SDR_QPS_CONNECTED ? "connected"
				: qp->state == SDR_QPS_ERROR   ? "ERROR"
							       : "not connected",
				rq->nposted, sends_outstanding(qp));
			/* receives, oldest first */
			for (uint32_t k = sdr_rq_posted_span(rq); k > 0 && shown < 64; k--) {
				uint32_t idx = (rq->next_seq - k) % SDR_MAX_MSGS;
				const struct sdr_rslot *s = &rq->slot[idx];
				struct sdr_diag_recv d = {
					.seq = s->seq,
					.posted_ago = AGO(s->post_tsc),
					.chunks_got = s->chunks_got,
					.chunks = sdr_rslot_nchunks(rq, s),
					.chunk_bm = rq->chunk_priv + (size_t)idx * rq->chunk_words,
					.peer = peer,
					.last_pkt_ago = AGO(s->last_tsc),
					.no_rel = qp->reliability == SDR_REL_NONE,
				};
				if (s->state != SDR_RS_POSTED)
					continue;
				sdr_diag_recv_text(line, sizeof(line), &d);
				fprintf(f, "    %s\n", line);
				shown++;
			}
			/* sends, oldest first */
			from = qp->ack_cursor;
			to = qp->send_next;
			for (uint32_t seq = from; seq != to && shown < 128; seq++) {
				const struct sdr_smsg *sm = &qp->smsg[sdr_seq_msg_id(seq)];
				const struct sdr_cts_slot *cts = &qp->cts[sdr_seq_msg_id(seq)];
				struct sdr_diag_send d = {
					.seq = seq,
					.posted_ago = AGO(sm->post_tsc),
					.waiting_cts = !(cts->ok && cts->seq == seq),
					.pkts = sm->npkts,
					.pkts_sent = (int32_t)(seq - qp->tx_cursor) < 0 ? sm->npkts
											: sm->pkt,
					.last_ack_ago = -1.0,
				};
				if (sm->state != SDR_SM_QUEUED || sm->seq != seq)
					continue;
				/* retransmission and acknowledgement: the scheme's */
				if (qp->ops->desc && qp->ops->desc->diag_send)
					qp->ops->desc->diag_send(qp, sm, now, &d);
				sdr_diag_send_text(line, sizeof(line), &d);
				fprintf(f, "    %s\n", line);
				shown++;
			}
		}
	}
#undef AGO
}
