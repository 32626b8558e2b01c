/* SPDX-License-Identifier: BSD-3-Clause */
/* Stats: testpmd-like block, JSON dump, DPDK telemetry. */
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

#define QP_STATS SDR_QP_STATS /* (sdr_types.h) */

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

/* RTT estimator of an SR QP, in microseconds */
static inline uint64_t cyc_us(uint64_t c) { return sdr_g.tsc_hz ? c * 1000000 / sdr_g.tsc_hz : 0; }

/* AUTO: the estimates and decisions of a QP (docs/reliability.md "AUTO").
 * Written by the worker; read here slightly stale, like the counters. */
struct auto_view {
	double srtt_us, rttvar_us, loss, last_mean_us, last_p999_us;
	uint64_t rtt_samples, chunks_seen, initial_picks, evals, eval_errors;
	char last[SDR_SCHEME_STR_MAX];
	char name[SDR_AUTO_MAX_CANDS][SDR_SCHEME_STR_MAX];
	uint64_t picks[SDR_AUTO_MAX_CANDS];
	uint64_t pmin[SDR_AUTO_MAX_CANDS], pmax[SDR_AUTO_MAX_CANDS];
	uint32_t ncands;
};

static void auto_view(const struct sdr_auto *a, struct auto_view *v)
{
	struct sdr_scheme last = a->last;

	memset(v, 0, sizeof(*v));
	v->srtt_us = a->srtt * 1e6;
	v->rttvar_us = a->rttvar * 1e6;
	v->rtt_samples = a->rtt_samples;
	v->loss = sdr_auto_loss(a);
	v->chunks_seen = a->chunks_seen;
	v->initial_picks = a->initial_picks;
	v->evals = a->evals;
	v->eval_errors = a->eval_errors;
	v->last_mean_us = a->last_mean * 1e6;
	v->last_p999_us = a->last_p999 * 1e6;
	if (sdr_scheme_format(&last, SDR_SCHEME_LABEL, v->last, sizeof(v->last)) < 0)
		snprintf(v->last, sizeof(v->last), "?");
	v->ncands = a->cfg.ncands <= SDR_AUTO_MAX_CANDS ? a->cfg.ncands : SDR_AUTO_MAX_CANDS;
	for (uint32_t i = 0; i < v->ncands; i++) {
		if (sdr_scheme_format(&a->cfg.cands[i], SDR_SCHEME_LABEL, v->name[i],
				      sizeof(v->name[i])) < 0)
			snprintf(v->name[i], sizeof(v->name[i]), "?");
		v->picks[i] = a->picks[i];
		v->pmin[i] = a->pick_min[i];
		v->pmax[i] = a->pick_max[i];
	}
}

/* ,"auto":{...} of a QP (live or closed) */
static void auto_json(FILE *f, const struct sdr_auto *a, const struct sdr_qp_stats *st)
{
	struct auto_view v;

	auto_view(a, &v);
	fprintf(f, ",\"auto\":{\"srtt_us\":%.1f,\"rttvar_us\":%.1f,"
		   "\"rtt_samples\":%" PRIu64 ",\"chunk_loss\":%.6g,"
		   "\"chunks_seen\":%" PRIu64 ",\"last_pick\":\"%s\","
		   "\"last_mean_us\":%.1f,\"last_p999_us\":%.1f,"
		   "\"initial_picks\":%" PRIu64 ",\"evals\":%" PRIu64
		   ",\"eval_errors\":%" PRIu64 ",\"msgs_ec\":%" PRIu64
		   ",\"msgs_sr\":%" PRIu64 ",\"chunks_fed\":%" PRIu64
		   ",\"lost_fed\":%" PRIu64 ",\"lost_rx\":%" PRIu64 ",\"picks\":{",
		v.srtt_us, v.rttvar_us, v.rtt_samples, v.loss, v.chunks_seen, v.last,
		v.last_mean_us, v.last_p999_us, v.initial_picks, v.evals,
		v.eval_errors, st->auto_msgs_ec, st->auto_msgs_sr,
		st->auto_chunks_fed, st->auto_lost_fed, st->auto_lost_rx);
	for (uint32_t i = 0; i < v.ncands; i++)
		fprintf(f, "%s\"%s\":%" PRIu64, i ? "," : "", v.name[i], v.picks[i]);
	fprintf(f, "},\"pick_min_bytes\":{");
	for (uint32_t i = 0; i < v.ncands; i++)
		fprintf(f, "%s\"%s\":%" PRIu64, i ? "," : "", v.name[i], v.pmin[i]);
	fprintf(f, "},\"pick_max_bytes\":{");
	for (uint32_t i = 0; i < v.ncands; i++)
		fprintf(f, "%s\"%s\":%" PRIu64, i ? "," : "", v.name[i], v.pmax[i]);
	fprintf(f, "}}");
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
		fprintf(f, "  RX-packets: %-12" PRIu64 " RX-bytes: %-14" PRIu64 " RX-missed: %-8" PRIu64
			   " RX-nombuf: %" PRIu64 "\n", p.rx_pkts, p.rx_bytes, es.imissed, es.rx_nombuf);
		fprintf(f, "  TX-packets: %-12" PRIu64 " TX-bytes: %-14" PRIu64 " TX-errors: %" PRIu64 "\n",
			p.tx_pkts, p.tx_bytes, es.oerrors);
		for (unsigned q = 0; q < SDR_MAX_QPS; q++) {
			struct sdr_qp *qp = atomic_load(&in->qps[q]);
			if (!qp)
				continue;
			fprintf(f, "  QP 0x%06x (ctx %u, worker %u, %s): msgs sent %" PRIu64 " recv %" PRIu64
				   " partial %" PRIu64 " send-errors %" PRIu64 " | pkts tx %" PRIu64
				   " rx %" PRIu64 " | chunks %" PRIu64 " | CTS tx %" PRIu64 " rx %" PRIu64 "\n",
				qp->qpn_base, qp->ctx->id, qp->worker,
				qp->state == SDR_QPS_CONNECTED ? "connected" : "created", qp->st.msgs_sent,
				qp->st.msgs_recv, qp->st.msgs_partial, qp->st.send_errors, qp->st.tx_pkts,
				qp->st.rx_pkts, qp->st.chunks_done, qp->st.cts_tx, qp->st.cts_rx);
			struct sdr_rel_view rv = {0};
			if (qp->ops->view)
				qp->ops->view(qp, &rv);
			if (rv.au) {
				struct auto_view v;
				auto_view(rv.au, &v);
				fprintf(f, "    AUTO: srtt %.0f us (%" PRIu64 " samples) chunk loss %.3g"
					   " (%" PRIu64 " chunks) | last pick %s (mean %.0f us) | evals %"
					   PRIu64 " | initial %" PRIu64 " | msgs EC %" PRIu64 " SR %" PRIu64
					   " |", v.srtt_us, v.rtt_samples, v.loss, v.chunks_seen, v.last,
					v.last_mean_us, v.evals, v.initial_picks, qp->st.auto_msgs_ec,
					qp->st.auto_msgs_sr);
				for (uint32_t i = 0; i < v.ncands; i++)
					fprintf(f, " %s %" PRIu64, v.name[i], v.picks[i]);
				fprintf(f, "\n");
			}
			if (rv.has_ec)
				fprintf(f, "    EC %s(%u,%u): subs encoded %" PRIu64 " parity pkts tx %" PRIu64
					   " rx %" PRIu64 " | decodes %" PRIu64 " chunks recovered %" PRIu64
					   " failures %" PRIu64 " | FTO expiries %" PRIu64 " NACKs tx %" PRIu64
					   " rx %" PRIu64 " | pool %u/%u bufs\n",
					rv.ec_per_message ? "per-message, max" :
					sdr_ec_code_name((enum sdr_ec_code)rv.ec_code), rv.ec_k, rv.ec_m,
					qp->st.ec_subs_encoded, qp->st.ec_par_pkts_tx, qp->st.ec_par_pkts_rx,
					qp->st.ec_decodes, qp->st.ec_chunks_recovered,
					qp->st.ec_decode_failures, qp->st.ec_fto_expiries, qp->st.ec_nacks_tx,
					qp->st.ec_nacks_rx, rv.pool_inuse, rv.pool_nalloc);
			if (rv.has_rtt)
				fprintf(f, "    SR: srtt %" PRIu64 " us rttvar %" PRIu64 " us rto %" PRIu64
					   " us (%" PRIu64 " samples) | retx pkts %" PRIu64 " units %" PRIu64
					   " rto-expiries %" PRIu64 " | ACKs tx %" PRIu64 " rx %" PRIu64
					   " | timeouts send %" PRIu64 " recv %" PRIu64 "%s\n",
					cyc_us(rv.srtt), cyc_us(rv.rttvar), cyc_us(rv.rto),
					rv.samples, qp->st.sr_retx_pkts, qp->st.sr_retx_units,
					qp->st.sr_rto_expiries, qp->st.sr_acks_tx, qp->st.sr_acks_rx,
					qp->st.sr_send_timeouts, qp->st.sr_recv_timeouts,
					qp->state == SDR_QPS_ERROR ? " | ERROR state" : "");
		}
		fprintf(f, "  QPs (live + closed): msgs sent %" PRIu64 " recv %" PRIu64 " partial %" PRIu64
			   " send-errors %" PRIu64 "\n", in->closed.msgs_sent, in->closed.msgs_recv,
			in->closed.msgs_partial, in->closed.send_errors);
		sdr_linkemu_print(f, in);
	}
	for (unsigned i = 0; i < sdr_g.nworkers; i++) {
		const struct sdr_worker *w = &sdr_g.workers[i];
		uint64_t polls = rd(&w->pace_polls);

		fprintf(f, "  worker %u: loops %" PRIu64 " idle-sleeps %" PRIu64 " | QP visits paced %"
			   PRIu64 " touched %" PRIu64 " timer %" PRIu64 " | pacer frames %" PRIu64
			   " stalls %" PRIu64 " %.0f cycles/loop | hand-off in %" PRIu64 "\n", i,
			rd(&w->loops), rd(&w->idle_sleeps), rd(&w->visits[SDR_VISIT_PACED]),
			rd(&w->visits[SDR_VISIT_TOUCHED]), rd(&w->visits[SDR_VISIT_TIMER]),
			rd(&w->pace_frames), rd(&w->pace_stalls),
			polls ? (double)rd(&w->pace_cycles) / (double)polls : 0.0, rd(&w->handoff_rx));
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
#define J(n, v)                                                                              \
	fprintf(f, "%s\"" #n "\":%" PRIu64, sep, rd(&(v)));                                     \
	sep = ",";
		WORKER_STATS(J)
#undef J
		fprintf(f, "}");
	}
	fprintf(f, "],\"instances\":[");
	for (unsigned i = 0; i < sdr_g.ninst; i++) {
		struct sdr_inst *in = &sdr_g.inst[i];
		port_sum(i, &p);
		fprintf(f, "%s{\"name\":\"%s\",\"port\":%u,\"rx_pkts\":%" PRIu64 ",\"rx_bytes\":%" PRIu64
			   ",\"tx_pkts\":%" PRIu64 ",\"tx_bytes\":%" PRIu64 ",\"link\":{\"on\":%d",
			i ? "," : "", in->cfg.name, in->port, p.rx_pkts, p.rx_bytes, p.tx_pkts, p.tx_bytes,
			sdr_linkemu_on(in));
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
		struct sdr_qp_stats tot = in->closed;
		for (unsigned q = 0; q < SDR_MAX_QPS; q++) {
			struct sdr_qp *qp = atomic_load(&in->qps[q]);
			if (!qp)
				continue;
#define ADD(n) tot.n += qp->st.n;
			QP_STATS(ADD)
#undef ADD
		}
		fprintf(f, "},\"qp_totals\":{");
		const char *sep = "";
#define J(n)                                                                                 \
	fprintf(f, "%s\"" #n "\":%" PRIu64, sep, tot.n);                                       \
	sep = ",";
		QP_STATS(J)
#undef J
		fprintf(f, "},\"qps\":[");
		int first = 1;
		for (unsigned q = 0; q < SDR_MAX_QPS; q++) {
			struct sdr_qp *qp = atomic_load(&in->qps[q]);
			if (!qp)
				continue;
			fprintf(f, "%s{\"qpn\":%u", first ? "" : ",", qp->qpn_base);
#define J(n) fprintf(f, ",\"" #n "\":%" PRIu64, qp->st.n);
			QP_STATS(J)
#undef J
			fprintf(f, ",\"reliability\":%u,\"state\":%d,\"rate_bps\":%" PRIu64, qp->reliability,
				qp->state, qp->rate_bps);
			struct sdr_rel_view rv = {0};
			if (qp->ops->view)
				qp->ops->view(qp, &rv);
			if (rv.has_rtt)
				fprintf(f, ",\"srtt_us\":%" PRIu64 ",\"rttvar_us\":%" PRIu64
					   ",\"rto_us\":%" PRIu64, cyc_us(rv.srtt),
					cyc_us(rv.rttvar), cyc_us(rv.rto));
			if (rv.au)
				auto_json(f, rv.au, &qp->st);
			fprintf(f, "}");
			first = 0;
		}
		/* AUTO QPs destroyed since the start (the last SDR_AUTO_CLOSED) */
		fprintf(f, "],\"auto_closed\":[");
		if (in->auto_closed) {
			unsigned n = in->n_auto_closed < SDR_AUTO_CLOSED ? in->n_auto_closed : SDR_AUTO_CLOSED;
			for (unsigned k = 0; k < n; k++) {
				const struct sdr_auto_closed *x =
					&in->auto_closed[(in->n_auto_closed - n + k) % SDR_AUTO_CLOSED];
				fprintf(f, "%s{\"qpn\":%u", k ? "," : "", x->qpn);
#define J(n) fprintf(f, ",\"" #n "\":%" PRIu64, x->st.n);
				QP_STATS(J)
#undef J
				auto_json(f, &x->au, &x->st);
				fprintf(f, "}");
			}
		}
		fprintf(f, "]}");
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
		rte_tel_data_add_dict_u64(d, k, sdr_g.inst[i].pool ?
					  rte_mempool_in_use_count(sdr_g.inst[i].pool) : 0);
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
#define T(n, v)                                                                              \
	{                                                                                    \
		uint64_t sum = 0;                                                            \
		for (unsigned i = 0; i < sdr_g.nworkers; i++) {                              \
			const struct sdr_worker *w = &sdr_g.workers[i];                      \
			snprintf(k, sizeof(k), "w%u_" #n, i);                                \
			rte_tel_data_add_dict_u64(d, k, rd(&(v)));                           \
			sum += rd(&(v));                                                     \
		}                                                                            \
		rte_tel_data_add_dict_u64(d, #n, sum);                                       \
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
	rte_tel_data_add_dict_u64(d, "span_ns",
				  (uint64_t)((unsigned __int128)(pk.last - pk.first) * 1000000000u /
					     sdr_g.tsc_hz));
	rte_tel_data_add_dict_u64(d, "rate_bps", qp ? qp->rate_bps : 0); /* (0: gone) */
	rte_tel_data_add_dict_u64(d, "recorded", pk.recorded);
	return 0;
}

static void tel_link_cb(void *arg, const char *name, uint64_t v)
{
	rte_tel_data_add_dict_u64(arg, name, v);
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
#define T(n) rte_tel_data_add_dict_u64(x, #n, qp->st.n);
		QP_STATS(T)
#undef T
		/* the QP's pacing rate (QP_CREATE / QP_SET_RATE; 0 = unpaced) */
		rte_tel_data_add_dict_u64(x, "rate_bps", qp->rate_bps);
		struct sdr_rel_view rv = {0};
		if (qp->ops->view)
			qp->ops->view(qp, &rv);
		if (rv.has_rtt) {
			rte_tel_data_add_dict_u64(x, "srtt_us", cyc_us(rv.srtt));
			rte_tel_data_add_dict_u64(x, "rttvar_us", cyc_us(rv.rttvar));
			rte_tel_data_add_dict_u64(x, "rto_us", cyc_us(rv.rto));
		}
		if (rv.au) {
			struct auto_view v;
			auto_view(rv.au, &v);
			rte_tel_data_add_dict_u64(x, "auto_srtt_us", (uint64_t)(v.srtt_us + 0.5));
			rte_tel_data_add_dict_u64(x, "auto_rtt_samples", v.rtt_samples);
			/* (no doubles in 22.11's telemetry: parts per million) */
			rte_tel_data_add_dict_u64(x, "auto_chunk_loss_ppm", (uint64_t)(v.loss * 1e6 + 0.5));
			rte_tel_data_add_dict_u64(x, "auto_chunks_seen", v.chunks_seen);
			rte_tel_data_add_dict_string(x, "auto_last_pick", v.last);
			rte_tel_data_add_dict_u64(x, "auto_last_mean_us", (uint64_t)(v.last_mean_us + 0.5));
			rte_tel_data_add_dict_u64(x, "auto_initial_picks", v.initial_picks);
			rte_tel_data_add_dict_u64(x, "auto_evals", v.evals);
			rte_tel_data_add_dict_u64(x, "auto_eval_errors", v.eval_errors);

			for (uint32_t i = 0; i < v.ncands; i++) {
				char key[48];
				int n = snprintf(key, sizeof(key), "auto_picks_%s", v.name[i]);
				/* "RS(32,8)" -> "rs_32_8": plain key characters */
				for (int j = 11; j < n && j < (int)sizeof(key); j++)
					key[j] = (key[j] >= 'A' && key[j] <= 'Z') ? (char)(key[j] + 32)
						 : ((key[j] >= '0' && key[j] <= '9') ||
						    (key[j] >= 'a' && key[j] <= 'z')) ? key[j] : '_';
				while (n > 11 && key[n - 1] == '_')
					key[--n] = 0;
				rte_tel_data_add_dict_u64(x, key, v.picks[i]);
			}
		}
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
	if (lane >= 0 && sdr_linkemu_lane_desc(&sdr_g.inst[inst], (unsigned)lane, desc, sizeof(desc)))
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
	rte_telemetry_register_cmd("/sdr/workers", tel_workers,
				   "Per-worker loop, QP-visit, pacer and hand-off counters (w<N>_...) and"
				   " their sums");
	rte_telemetry_register_cmd("/sdr/pace_peak", tel_pace_peak,
				   "Peak frame bytes of a QP in a window (--pace-trace). Parameters:"
				   " instance,qp_id,window_ns");
	rte_telemetry_register_cmd("/sdr/link", tel_link,
				   "Link-emulator counters of an instance, every lane together or one lane."
				   " Parameters: instance index[,lane index]");
}
