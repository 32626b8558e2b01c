/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-perf's competing-flows mode (sdr-perf flows): --qps N independent
 * flows, each a QP pair with its own --window of sends and its own receives,
 * started --flow-gap apart, run for --duration; per flow its payload goodput
 * per --flow-win window, Jain's fairness index per window and over the steady
 * state, the link emulator's queue (sampled) and CE marks, and each flow's
 * controller rate and CE fraction (the daemons' telemetry). Host program,
 * beside the bw/lat engine (perf_engine.c), above perf_telemetry.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf.h"

#define FLOW_WIN_MAX 600    /* windows per run */
#define FLOW_Q_SAMPLES 8192 /* queue samples (every 100 ms) */
#define FLOW_SEQ_BITS 40    /* wr_id = flow << 40 | message number */
#define FLOW_DEC_KINDS 5    /* decisions counted per window (struct flow dec) */

struct flow {
	struct sdr_qp *qa, *qb;
	uint32_t qpn_a, qpn_b;
	unsigned c; /* context (both sides) */
	uint64_t sposted, sdone, rposted, rdone, ok, bad;
	double start;                  /* s after the run's start */
	double bytes[FLOW_WIN_MAX];    /* payload per window */
	double rate_bps[FLOW_WIN_MAX]; /* its controller's rate at the window's end */
	double goodput, ce_frac;       /* steady state; CE of its data at the receiver */
	double cuts[3];                /* its controller's cuts: ECN, delay, loss */
	double spared;                 /* ... delay cuts spared: the queue did not last */
	double dlv_cuts;               /* ... ECN cuts on a delivery that fell after a cut */
	double comp;                   /* times it entered the TCP-competitive mode */
	double incs, probes;           /* its controller's increases, probing ones among them */
	double holds[2];               /* its controller's holds: app-limited, draining */
	/* its controller's decisions up to each window's end: cuts, increases,
	 * holds app-limited, holds draining, delay cuts spared (telemetry's
	 * counters) */
	double dec[FLOW_WIN_MAX][FLOW_DEC_KINDS];
	double noise_us; /* its controller's noise estimate J at the end */
};

#define LINK_KEYS 5
static const char *const link_keys[LINK_KEYS] = {"pkts_in", "ce_marked", "dropped_buffer", "ect_in",
						 "rate_bps_now"};

struct flows {
	const struct rig *rig;
	struct flow *f;
	unsigned n, nc, nwin, w0; /* w0: first steady window */
	struct sdr_ctx *ca[MAX_CTXS], *cb[MAX_CTXS];
	struct sdr_mr *ma[MAX_CTXS], *mb[MAX_CTXS];
	uint8_t *ba[MAX_CTXS], *bb[MAX_CTXS];
	uint64_t nbs, nbr; /* message buffers per context: sends, receives */
	uint32_t window, ahead;
	double win, t0, dur;
	double q[FLOW_Q_SAMPLES]; /* the emulator's backlog (B), bytes */
	unsigned nq;
	/* link_keys: at w0, at the end, at each window's end (wlink[0]: start) */
	double link0[LINK_KEYS], link1[LINK_KEYS], wlink[FLOW_WIN_MAX + 1][LINK_KEYS];
	double max_backlog, buffer;
	char error[256];
};

/* Telemetry of side @p b (0 = a, 1 = b) */
static int side_query(const struct flows *fl, int b, const char *cmd, char *out, size_t len)
{
	return perf_tel_side(fl->rig, b, cmd, NULL, out, len);
}

/* The data direction's emulator: the receiving side's (b); @p v: the
 * LINK_KEYS values of link_keys */
static void link_read(const struct flows *fl, double v[LINK_KEYS], double *backlog)
{
	char buf[8192];

	for (int k = 0; k < LINK_KEYS; k++)
		v[k] = NAN;
	if (backlog)
		*backlog = NAN;
	if (side_query(fl, 1, "/sdr/link", buf, sizeof(buf)) < 0)
		return;
	for (int k = 0; k < LINK_KEYS; k++)
		v[k] = perf_tel_num(buf, link_keys[k]);
	if (backlog)
		*backlog = perf_tel_num(buf, "backlog_bytes");
}

/* In a /sdr/qps answer: @p key of QP @p qpn (NAN if absent) */
static double qp_num(const char *buf, uint32_t qpn, const char *key)
{
	char k[32];
	const char *p;

	snprintf(k, sizeof(k), "\"qp_0x%06x\"", qpn);
	p = strstr(buf, k);
	return p ? perf_tel_num(p, key) : NAN;
}

static void qps_read(struct flows *fl, unsigned w, int last)
{
	static char buf[1 << 20];

	if (side_query(fl, 0, "/sdr/qps", buf, sizeof(buf)) >= 0)
		for (unsigned i = 0; i < fl->n; i++) {
			struct flow *f = &fl->f[i];

			if (w < FLOW_WIN_MAX) {
				f->rate_bps[w] = qp_num(buf, f->qpn_a, "cc_rate_bps");
				f->dec[w][0] = qp_num(buf, f->qpn_a, "cc_dec_ecn") +
					       qp_num(buf, f->qpn_a, "cc_dec_delay") +
					       qp_num(buf, f->qpn_a, "cc_dec_loss");
				f->dec[w][1] = qp_num(buf, f->qpn_a, "cc_increases");
				f->dec[w][2] = qp_num(buf, f->qpn_a, "cc_holds_app");
				f->dec[w][3] = qp_num(buf, f->qpn_a, "cc_holds_drain");
				f->dec[w][4] = qp_num(buf, f->qpn_a, "cc_delay_spared");
			}
			if (last) {
				f->cuts[0] = qp_num(buf, f->qpn_a, "cc_dec_ecn");
				f->cuts[1] = qp_num(buf, f->qpn_a, "cc_dec_delay");
				f->cuts[2] = qp_num(buf, f->qpn_a, "cc_dec_loss");
				f->spared = qp_num(buf, f->qpn_a, "cc_delay_spared");
				f->dlv_cuts = qp_num(buf, f->qpn_a, "cc_dlv_cuts");
				f->comp = qp_num(buf, f->qpn_a, "cc_comp_enters");
				f->incs = qp_num(buf, f->qpn_a, "cc_increases");
				f->probes = qp_num(buf, f->qpn_a, "cc_probes");
				f->holds[0] = qp_num(buf, f->qpn_a, "cc_holds_app");
				f->holds[1] = qp_num(buf, f->qpn_a, "cc_holds_drain");
				f->noise_us = qp_num(buf, f->qpn_a, "cc_noise_us");
			}
		}
	if (last && side_query(fl, 1, "/sdr/qps", buf, sizeof(buf)) >= 0)
		for (unsigned i = 0; i < fl->n; i++) {
			struct flow *f = &fl->f[i];
			double pk = qp_num(buf, f->qpn_b, "cc_rx_pkts");

			f->ce_frac = pk > 0 ? qp_num(buf, f->qpn_b, "cc_rx_ce") / pk : NAN;
		}
}

static int fl_fail(struct flows *fl, const char *what, int rc, struct sdr_ctx *ctx)
{
	snprintf(fl->error, sizeof(fl->error), "%s: %s (%s)", what,
		 sdr_strerror(rc < 0 ? rc : -errno), ctx ? sdr_last_error(ctx) : "");
	return -1;
}

/* Contexts, buffers and the QP pairs (pair k on context k mod C) */
static int fl_setup(struct flows *fl, const struct run_params *p)
{
	struct sdr_scheme sch = sdr_scheme_of((unsigned)p->rel, p->ec);
	struct sdr_qp_attr attr = {0};
	uint64_t per = o.buf_budget / 2 / fl->nc / p->size;

	fl->nbs = per < 1 ? 1 : per > fl->window ? fl->window : per;
	fl->nbr = per < 1 ? 1 : per > fl->ahead ? fl->ahead : per;
	for (unsigned c = 0; c < fl->nc; c++) {
		if (!(fl->ca[c] = sdr_ctx_open(fl->rig->sock_a, NULL)) ||
		    !(fl->cb[c] = sdr_ctx_open(fl->rig->sock_b, NULL)))
			return fl_fail(fl, "sdr_ctx_open", -errno, NULL);
		fl->ba[c] = sdr_buf_alloc(fl->ca[c], fl->nbs * p->size);
		fl->bb[c] = sdr_buf_alloc(fl->cb[c], fl->nbr * p->size);
		if (!fl->ba[c] || !fl->bb[c])
			return fl_fail(fl, "sdr_buf_alloc", -errno, NULL);
		memset(fl->ba[c], 0x5a, fl->nbs * p->size);
		memset(fl->bb[c], 0, fl->nbr * p->size);
		fl->ma[c] = sdr_mr_reg(fl->ca[c], fl->ba[c], fl->nbs * p->size, 0);
		fl->mb[c] = sdr_mr_reg(fl->cb[c], fl->bb[c], fl->nbr * p->size, 0);
		if (!fl->ma[c] || !fl->mb[c])
			return fl_fail(fl, "sdr_mr_reg", -errno, fl->ca[c]);
	}
	qp_attr_for(&attr, p->size, &sch);
	for (unsigned k = 0; k < fl->n; k++) {
		struct flow *f = &fl->f[k];
		struct sdr_qp_info ia, ib;
		int rc;

		f->c = k % fl->nc;
		f->start = k * o.flow_gap;
		attr.rate_bps = o.rate_bps;
		f->qa = sdr_qp_create(fl->ca[f->c], &attr);
		attr.rate_bps = 0;
		f->qb = f->qa ? sdr_qp_create(fl->cb[f->c], &attr) : NULL;
		if (!f->qa || !f->qb)
			return fl_fail(fl, "sdr_qp_create", -errno, fl->ca[f->c]);
		if ((rc = sdr_qp_info_get(f->qa, &ia)) || (rc = sdr_qp_info_get(f->qb, &ib)) ||
		    (rc = sdr_qp_connect(f->qa, &ib)) || (rc = sdr_qp_connect(f->qb, &ia)))
			return fl_fail(fl, "connect", rc, fl->ca[f->c]);
		f->qpn_a = ia.qpn;
		f->qpn_b = ib.qpn;
	}
	return 0;
}

/* Flow f's receives ahead and its sends in its window (until its end) */
static int fl_post(struct flows *fl, struct flow *f, unsigned k, double t, uint64_t size)
{
	uint64_t id = (uint64_t)k << FLOW_SEQ_BITS;
	int live = t >= f->start && t < fl->dur;

	while (live && f->rposted - f->rdone < fl->ahead) {
		struct sdr_recv_wr wr = {.mr = fl->mb[f->c],
					 .addr = fl->bb[f->c] + (f->rposted % fl->nbr) * size,
					 .length = (uint32_t)size,
					 .wr_id = id | f->rposted};
		int rc = sdr_recv_post(f->qb, &wr, NULL);

		if (rc == -EAGAIN)
			break;
		if (rc)
			return fl_fail(fl, "sdr_recv_post", rc, fl->cb[f->c]);
		f->rposted++;
	}
	while (live && f->sposted < f->rposted && f->sposted - f->sdone < fl->window) {
		struct sdr_send_wr wr = {.mr = fl->ma[f->c],
					 .addr = fl->ba[f->c] + (f->sposted % fl->nbs) * size,
					 .length = (uint32_t)size,
					 .wr_id = id | f->sposted};
		int rc = sdr_send_post(f->qa, &wr, NULL);

		if (rc == -EAGAIN)
			break;
		if (rc)
			return fl_fail(fl, "sdr_send_post", rc, fl->ca[f->c]);
		f->sposted++;
	}
	return 0;
}

/* Both sides' completions; @return 1 if any */
static int fl_poll(struct flows *fl, double t, uint64_t size)
{
	struct sdr_wc wc[32];
	int any = 0;

	for (unsigned c = 0; c < fl->nc; c++) {
		int n = sdr_cq_poll(fl->ca[c], wc, 32);

		for (int i = 0; i < n; i++) {
			unsigned k = (unsigned)(wc[i].wr_id >> FLOW_SEQ_BITS);

			if (wc[i].opcode == SDR_SQ_SEND && k < fl->n)
				fl->f[k].sdone++, any = 1;
		}
		n = sdr_cq_poll(fl->cb[c], wc, 32);
		for (int i = 0; i < n; i++) {
			unsigned k = (unsigned)(wc[i].wr_id >> FLOW_SEQ_BITS), w;
			int whole = !(wc[i].flags & (SDR_CQE_F_PARTIAL | SDR_CQE_F_IMM_PARTIAL));

			if (wc[i].opcode != SDR_SQ_RECV || k >= fl->n)
				continue;
			any = 1;
			fl->f[k].rdone++;
			if (wc[i].status || !whole) {
				fl->f[k].bad++;
				continue;
			}
			fl->f[k].ok++;
			w = (unsigned)(t / fl->win);
			if (w < FLOW_WIN_MAX)
				fl->f[k].bytes[w] += (double)size;
		}
	}
	return any;
}

static double jain_of(const double *x, unsigned n)
{
	double a = 0, b = 0;

	for (unsigned i = 0; i < n; i++) {
		a += x[i];
		b += x[i] * x[i];
	}
	return b > 0 ? a * a / (n * b) : 0;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* The run: post and poll until --duration, then drain what is in flight.
 * A poll that finds no completion naps PERF_NAP_US (not with --busy-poll):
 * the flows' messages complete a few per millisecond at most, and a loop
 * that spun took a CPU from the daemons' workers on a small machine (on a
 * 2-vCPU host, 70 % of one: the receiving worker then polled frames late,
 * the link emulator queued them together, and its marks held two flows
 * under a 1 Gbit/s link to 25-30 % of it; docs/congestion.md). */
static int fl_loop(struct flows *fl, uint64_t size)
{
	double next_q = 0, t_prog, t;
	unsigned w_read = 0;
	int inflight = 1;

	link_read(fl, fl->wlink[0], NULL);
	fl->t0 = now_s();
	t_prog = fl->t0;
	while (!g_stop) {
		t = now_s() - fl->t0;
		if (t >= fl->dur && !inflight)
			break;
		inflight = 0;
		for (unsigned k = 0; k < fl->n; k++) {
			struct flow *f = &fl->f[k];

			if (fl_post(fl, f, k, t, size))
				return -1;
			if (f->sdone < f->sposted || f->rdone < f->sposted)
				inflight = 1;
		}
		if (fl_poll(fl, t, size))
			t_prog = now_s();
		else if (!o.busy_poll)
			sleep_us(PERF_NAP_US);
		if (t >= next_q && t < fl->dur) { /* the queue, every 100 ms */
			double v[LINK_KEYS], b;

			link_read(fl, v, &b);
			if (fl->nq < FLOW_Q_SAMPLES && !isnan(b) && t >= fl->w0 * fl->win)
				fl->q[fl->nq++] = b;
			next_q += 0.1;
		}
		while (w_read < fl->nwin && t >= (w_read + 1) * fl->win) {
			link_read(fl, fl->wlink[w_read + 1], NULL);
			if (w_read + 1 == fl->w0)
				memcpy(fl->link0, fl->wlink[w_read + 1], sizeof(fl->link0));
			qps_read(fl, w_read++, 0);
		}
		if (now_s() - t_prog > o.timeout) {
			snprintf(fl->error, sizeof(fl->error), "no progress for %.1f s", o.timeout);
			return -1;
		}
	}
	if (g_stop) {
		snprintf(fl->error, sizeof(fl->error), "interrupted");
		return -1;
	}
	link_read(fl, fl->link1, NULL);
	qps_read(fl, FLOW_WIN_MAX, 1);
	return 0;
}

static void fl_report(struct flows *fl, const struct run_params *p)
{
	double sum = 0, jmin = 1, jsum = 0, gp[MAX_QPS], cap = NAN;
	unsigned nj = 0, w1 = fl->nwin;
	double span = (w1 - fl->w0) * fl->win, d[4], q50 = NAN, q99 = NAN, qmax = NAN;
	struct sbuf j = {0};
	char sch[32];
	const char *r = strstr(fl->rig->link, "rate=");

	if (r) {
		char *e;
		double v = strtod(r + 5, &e);

		cap = v * (*e == 'g' ? 1e9 : *e == 'm' ? 1e6 : *e == 'k' ? 1e3 : 1);
	}
	for (unsigned i = 0; i < fl->n; i++) {
		double b = 0;

		for (unsigned w = fl->w0; w < w1; w++)
			b += fl->f[i].bytes[w];
		gp[i] = span > 0 ? b * 8 / span : 0;
		fl->f[i].goodput = gp[i];
		sum += gp[i];
	}
	for (unsigned w = fl->w0; w < w1; w++) {
		double x[MAX_QPS];

		for (unsigned i = 0; i < fl->n; i++)
			x[i] = fl->f[i].bytes[w];
		jsum += jain_of(x, fl->n);
		jmin = fmin(jmin, jain_of(x, fl->n));
		nj++;
	}
	for (int k = 0; k < 4; k++)
		d[k] = fl->link1[k] - fl->link0[k];
	if (fl->nq) {
		qsort(fl->q, fl->nq, sizeof(double), cmp_d);
		q50 = fl->q[fl->nq / 2];
		q99 = fl->q[(fl->nq * 99) / 100 < fl->nq ? (fl->nq * 99) / 100 : fl->nq - 1];
		qmax = fl->q[fl->nq - 1];
	}
	scheme_name(p->rel, p->ec, sch, sizeof(sch));
	if (!o.json_only) {
		printf("  ---------------- sdr-perf flows: rig %s, %u flows, rel %s "
		       "----------------\n",
		       rig_names[fl->rig->kind], fl->n, sch);
		printf("  size %" PRIu64 " B  window %u per flow  start gap %.2f s  duration %.1f s"
		       "  windows of %.2f s, steady from window %u\n",
		       p->size, fl->window, o.flow_gap, fl->dur, fl->win, fl->w0);
		if (fl->rig->link[0])
			printf("  link %s\n", fl->rig->link);
		for (unsigned i = 0; i < fl->n; i++)
			printf("  flow %-3u payload goodput %9.2f Mbit/s  msgs ok %" PRIu64
			       " bad %" PRIu64
			       "  CE %.4f  cuts ecn %.0f (on a delivery fall %.0f) delay %.0f"
			       " (spared %.0f) loss %.0f"
			       "  TCP-competitive %.0f  increases %.0f (probes %.0f)  holds "
			       "app-limited %.0f draining %.0f  noise %.0f us\n",
			       i, gp[i] / 1e6, fl->f[i].ok, fl->f[i].bad, fl->f[i].ce_frac,
			       fl->f[i].cuts[0], fl->f[i].dlv_cuts, fl->f[i].cuts[1],
			       fl->f[i].spared, fl->f[i].cuts[2], fl->f[i].comp, fl->f[i].incs,
			       fl->f[i].probes, fl->f[i].holds[0], fl->f[i].holds[1],
			       fl->f[i].noise_us);
		printf("  aggregate  %.2f Mbit/s (%.1f %% of the link)  Jain %.4f over the steady"
		       " state, per window min %.4f mean %.4f\n",
		       sum / 1e6, 100 * sum / cap, jain_of(gp, fl->n), jmin, nj ? jsum / nj : NAN);
		printf("  bottleneck (b): frames %.0f  CE %.0f (%.4f of ECT)  dropped_buffer %.0f"
		       " (%.2e)  queue p50 %.0f B p99 %.0f B max %.0f B (%u samples)\n",
		       d[0], d[1], d[1] / d[3], d[2], d[2] / d[0], q50, q99, qmax, fl->nq);
	}
	sb_add(&j, "{\"mode\":\"flows\",\"rig\":");
	sb_jstr(&j, rig_names[fl->rig->kind]);
	sb_add(&j, ",\"rel\":");
	sb_jstr(&j, sch);
	sb_add(&j, ",\"link\":");
	sb_jstr(&j, fl->rig->link);
	sb_add(&j, ",\"size\":%" PRIu64 ",\"window\":%u,\"flows\":%u", p->size, fl->window, fl->n);
	sb_jnum(&j, "flow_gap_s", o.flow_gap);
	sb_jnum(&j, "duration_s", fl->dur);
	sb_jnum(&j, "win_s", fl->win);
	sb_add(&j, ",\"steady_from_win\":%u", fl->w0);
	sb_jnum(&j, "link_bps", cap);
	sb_jnum(&j, "goodput_bps", sum);
	sb_jnum(&j, "jain", jain_of(gp, fl->n));
	sb_jnum(&j, "jain_win_min", jmin);
	sb_jnum(&j, "jain_win_mean", nj ? jsum / nj : NAN);
	sb_jnum(&j, "link_pkts", d[0]);
	sb_jnum(&j, "link_ce", d[1]);
	sb_jnum(&j, "link_ect", d[3]);
	sb_jnum(&j, "link_dropped_buffer", d[2]);
	sb_jnum(&j, "queue_p50_bytes", q50);
	sb_jnum(&j, "queue_p99_bytes", q99);
	sb_jnum(&j, "queue_max_bytes", qmax);
	{
		static const char *const wk[5] = {"win_link_pkts", "win_link_ce", "win_link_drops",
						  "win_link_ect", "win_link_rate_bps"};

		/* per window: frames, CE, drops, ECT frames; the capacity at its end */
		for (int k = 0; k < 5; k++) {
			sb_add(&j, ",\"%s\":[", wk[k]);
			for (unsigned w = 0; w < fl->nwin; w++) {
				double v = k == 4 ? fl->wlink[w + 1][k]
						  : fl->wlink[w + 1][k] - fl->wlink[w][k];

				sb_add(&j, "%s%.0f", w ? "," : "", isnan(v) ? -1 : v);
			}
			sb_add(&j, "]");
		}
	}
	sb_add(&j, ",\"per_flow\":[");
	for (unsigned i = 0; i < fl->n; i++) {
		struct flow *f = &fl->f[i];

		sb_add(&j, "%s{\"flow\":%u", i ? "," : "", i);
		sb_jnum(&j, "start_s", f->start);
		sb_jnum(&j, "goodput_bps", f->goodput);
		sb_add(&j, ",\"msgs_ok\":%" PRIu64 ",\"msgs_bad\":%" PRIu64, f->ok, f->bad);
		sb_jnum(&j, "ce_frac", f->ce_frac);
		sb_jnum(&j, "cc_cuts", f->cuts[0] + f->cuts[1] + f->cuts[2]);
		sb_jnum(&j, "cc_cuts_ecn", f->cuts[0]);
		sb_jnum(&j, "cc_cuts_delay", f->cuts[1]);
		sb_jnum(&j, "cc_cuts_loss", f->cuts[2]);
		sb_jnum(&j, "cc_delay_spared", f->spared);
		sb_jnum(&j, "cc_dlv_cuts", f->dlv_cuts);
		sb_jnum(&j, "cc_comp_enters", f->comp);
		sb_jnum(&j, "cc_increases", f->incs);
		sb_jnum(&j, "cc_probes", f->probes);
		sb_jnum(&j, "cc_holds_app", f->holds[0]);
		sb_jnum(&j, "cc_holds_drain", f->holds[1]);
		sb_jnum(&j, "cc_noise_us", f->noise_us);
		sb_add(&j, ",\"win_bps\":[");
		for (unsigned w = 0; w < fl->nwin; w++)
			sb_add(&j, "%s%.0f", w ? "," : "", f->bytes[w] * 8 / fl->win);
		sb_add(&j, "],\"cc_rate_bps\":[");
		for (unsigned w = 0; w < fl->nwin; w++)
			sb_add(&j, "%s%.0f", w ? "," : "",
			       isnan(f->rate_bps[w]) ? -1 : f->rate_bps[w]);
		sb_add(&j, "]");
		/* per window: the decisions its controller made in it (-1:
		 * no telemetry) */
		for (int k = 0; k < FLOW_DEC_KINDS; k++) {
			static const char *const dk[FLOW_DEC_KINDS] = {
				"cc_win_cuts", "cc_win_increases", "cc_win_holds_app",
				"cc_win_holds_drain", "cc_win_delay_spared"};

			sb_add(&j, ",\"%s\":[", dk[k]);
			for (unsigned w = 0; w < fl->nwin; w++) {
				double v = w ? f->dec[w][k] - f->dec[w - 1][k] : f->dec[w][k];

				sb_add(&j, "%s%.0f", w ? "," : "", isnan(v) ? -1 : v);
			}
			sb_add(&j, "]");
		}
		sb_add(&j, "}");
	}
	sb_add(&j, "]}");
	printf("%s\n", j.p ? j.p : "{}");
	free(j.p);
}

int run_flows(void)
{
	struct rig rig;
	struct run_params p;
	struct flows *fl = calloc(1, sizeof(*fl));
	int rc = 1;

	memset(&rig, 0, sizeof(rig));
	if (!fl)
		return 1;
	if (o.rel == SDR_REL_NONE) {
		fprintf(stderr,
			"sdr-perf flows: a flow needs a reliable scheme (--rel sr, ec, auto)\n");
		free(fl);
		return 2;
	}
	fill_params(&p, "bw", o.size, o.rel, o.rel_ec);
	fl->rig = &rig;
	fl->n = o.qps;
	fl->window = o.window_set ? o.window : 16;
	fl->ahead = fl->window * 2;
	fl->win = o.flow_win > 0 ? o.flow_win : 1.0;
	fl->dur = o.duration > 0 ? o.duration : 10.0;
	fl->nwin = (unsigned)(fl->dur / fl->win + 1e-9);
	if (fl->nwin > FLOW_WIN_MAX)
		fl->nwin = FLOW_WIN_MAX;
	/* steady state: from the window after the last flow started */
	fl->w0 = (unsigned)((fl->n - 1) * o.flow_gap / fl->win) + 1;
	if (fl->w0 >= fl->nwin) {
		fprintf(stderr, "sdr-perf flows: no steady window (--duration too short)\n");
		free(fl);
		return 2;
	}
	fl->nc = fl->n < (o.workers ? o.workers : 1) ? fl->n : (o.workers ? o.workers : 1);
	fl->f = calloc(fl->n, sizeof(*fl->f));
	if (fl->f && !rig_start(&rig, o.link, o.size)) {
		for (unsigned i = 0; i < fl->n; i++)
			for (unsigned w = 0; w < FLOW_WIN_MAX; w++) {
				fl->f[i].rate_bps[w] = NAN;
				for (int k = 0; k < FLOW_DEC_KINDS; k++)
					fl->f[i].dec[w][k] = NAN;
			}
		if (!fl_setup(fl, &p) && !fl_loop(fl, p.size)) {
			fl_report(fl, &p);
			rc = 0;
		} else {
			fprintf(stderr, "sdr-perf flows: FAILED: %s\n", fl->error);
		}
	}
	for (unsigned c = 0; c < fl->nc; c++) {
		if (fl->ca[c])
			sdr_ctx_close(fl->ca[c]);
		if (fl->cb[c])
			sdr_ctx_close(fl->cb[c]);
	}
	rig_stop(&rig);
	g_rig = NULL;
	free(fl->f);
	free(fl);
	return rc || g_stop;
}
