/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-perf's bw / lat engine: both ends' contexts and QPs through libsdr,
 * then one loop posting receives ahead and sends in a window, polling both
 * sides' completions on one clock, and the figures of the run. Host program,
 * above perf_telemetry.c and perf_measure.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf.h"

static void fail(struct run_result *res, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void fail(struct run_result *res, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(res->error, sizeof(res->error), fmt, ap);
	va_end(ap);
	res->ok = 0;
}

struct ends {
	struct sdr_ctx *ctx[MAX_CTXS];
	struct sdr_mr *mr[MAX_CTXS];
	uint8_t *buf[MAX_CTXS];
	size_t len[MAX_CTXS];
	uint64_t nbuf; /* message buffers per context */
	struct sdr_qp **qp;
};

static int ends_buffers(struct ends *e, unsigned nctx, uint64_t size, uint64_t want, int fill,
			struct run_result *res)
{
	uint64_t n = o.buf_budget / nctx / size;

	e->nbuf = n < 1 ? 1 : n > want ? want : n;
	for (unsigned c = 0; c < nctx; c++) {
		e->len[c] = (size_t)(e->nbuf * size);
		e->buf[c] = sdr_buf_alloc(e->ctx[c], e->len[c]);
		if (!e->buf[c]) {
			fail(res, "sdr_buf_alloc(%zu): %s", e->len[c], strerror(errno));
			return -1;
		}
		for (size_t i = 0; i < e->len[c]; i++) /* touch every page before timing */
			e->buf[c][i] = fill ? (uint8_t)(i * 131 + 7) : 0;
		e->mr[c] = sdr_mr_reg(e->ctx[c], e->buf[c], e->len[c], 0);
		if (!e->mr[c]) {
			fail(res, "sdr_mr_reg: %s (%s)", strerror(errno),
			     sdr_last_error(e->ctx[c]));
			return -1;
		}
	}
	return 0;
}

/* One run's state: both ends, the ring of messages in flight (indexed by
 * message number mod TS_RING) and the samples. */
struct eng {
	const struct rig *rig;
	const struct run_params *p;
	struct run_result *res;
	struct ends ea, eb;
	uint64_t total, sposted, sdone, rposted, rdone, rlow;
	uint64_t mpm;
	uint32_t ahead, nq, nc;
	double t_post[TS_RING], t_sdone[TS_RING], t_meas, t_last, t_progress, t_dur_end;
	double *q_free;      /* --gap-us: when each QP may post its next send */
	uint8_t st[TS_RING]; /* bit0 send done, bit1 recv done, bit2 partial requested */
	struct sdr_recv_handle *rh[TS_RING];
	float *lat, *slat;
	uint64_t nlat, nslat, lat_cap;
	double wbytes[MAX_WINDOWS + 1];
	uint64_t spin;
	double cpu0, wk0[WK__N], rss0, vsz0;
};

/* The run's sizes and its arrays; -1 when out of memory. */
static int eng_init(struct eng *e)
{
	const struct run_params *p = e->p;
	struct run_result *res = e->res;
	uint32_t w = o.workers ? o.workers : 1;

	e->total = p->duration > 0 ? UINT64_MAX : p->warmup + p->iters;
	e->mpm = pkts_per_msg(p->size);
	e->nq = o.qps;
	e->nc = o.qps < w ? o.qps : w;
	e->cpu0 = NAN;
	memset(res, 0, sizeof(*res));
	res->ok = 1;
	res->qps = e->nq;
	res->ctxs = e->nc;
	for (int k = 0; k < WK__N; k++)
		e->wk0[k] = res->wk[k] = NAN;
	e->ahead = p->window * 2 > 64 ? p->window * 2 : 64;
	if (e->ahead > TS_RING)
		e->ahead = TS_RING;
	if (p->warmup + p->iters < e->ahead && p->duration <= 0)
		e->ahead = (uint32_t)(p->warmup + p->iters);
	e->lat_cap = p->duration > 0 ? MAX_LAT_SAMPLES
				     : (p->iters < MAX_LAT_SAMPLES ? p->iters : MAX_LAT_SAMPLES);
	e->lat = malloc((e->lat_cap ? e->lat_cap : 1) * sizeof(*e->lat));
	e->slat = malloc((e->lat_cap ? e->lat_cap : 1) * sizeof(*e->slat));
	e->ea.qp = calloc(e->nq, sizeof(*e->ea.qp));
	e->eb.qp = calloc(e->nq, sizeof(*e->eb.qp));
	e->q_free = calloc(e->nq, sizeof(*e->q_free));
	if (!e->lat || !e->slat || !e->ea.qp || !e->eb.qp || !e->q_free) {
		fail(res, "out of memory");
		return -1;
	}
	return 0;
}

/* Contexts: the k-th of each side goes to worker k mod workers (the daemons
 * assign them round robin per instance), so a QP pair shares its worker. */
static int eng_open(struct eng *e)
{
	for (unsigned c = 0; c < e->nc; c++) {
		if (!(e->ea.ctx[c] = sdr_ctx_open(e->rig->sock_a, NULL))) {
			fail(e->res, "sdr_ctx_open(%s): %s", e->rig->sock_a, strerror(errno));
			return -1;
		}
		if (!(e->eb.ctx[c] = sdr_ctx_open(e->rig->sock_b, NULL))) {
			fail(e->res, "sdr_ctx_open(%s): %s", e->rig->sock_b, strerror(errno));
			return -1;
		}
	}
	return 0;
}

/* A QP of @p nch channels (--channels, --stripe; 1: sdr_qp_create()). */
static struct sdr_qp *qp_make(struct sdr_ctx *c, const struct sdr_qp_attr *a, unsigned nch)
{
	struct sdr_qp_attr_ext x = {
		.size = sizeof(x), .channels = nch, .stripe_chunks = o.stripe_chunks, .attr = *a};

	return nch > 1 ? sdr_qp_create_ext(c, &x) : sdr_qp_create(c, a);
}

/* QP pair k on context k mod nc; the time and daemon memory it takes. A
 * scheme the daemon refuses makes the run "skipped" (ok -1). */
static int eng_connect(struct eng *e)
{
	const struct run_params *p = e->p;
	struct run_result *res = e->res;
	struct sdr_scheme sch = sdr_scheme_of((unsigned)p->rel, p->ec);
	struct sdr_qp_attr attr = {0};
	struct ends *ea = &e->ea, *eb = &e->eb;
	double rss1, vsz1, t0;
	unsigned nc = e->nc, nch = o.channels ? o.channels : 1;
	int rc;

	qp_attr_for(&attr, p->size, &sch);
	daemons_mem(e->rig, &e->rss0, &e->vsz0);
	t0 = now_s();
	if (nch > (o.workers ? o.workers : 1)) {
		fail(res, "--channels %u needs --workers %u or more (a worker per channel)", nch,
		     nch);
		return -1;
	}
	for (unsigned k = 0; k < e->nq; k++) {
		struct sdr_qp_info ia[SDR_CHANNELS_MAX], ib[SDR_CHANNELS_MAX];

		attr.rate_bps = o.rate_bps; /* the sending QPs only */
		ea->qp[k] = qp_make(ea->ctx[k % nc], &attr, nch);
		attr.rate_bps = 0;
		eb->qp[k] = ea->qp[k] ? qp_make(eb->ctx[k % nc], &attr, nch) : NULL;
		if (!ea->qp[k] || !eb->qp[k]) {
			int err = errno;
			snprintf(res->error, sizeof(res->error),
				 "sdr_qp_create(rel=%s, QP %u): %s (%s)",
				 sdr_rel_name((unsigned)p->rel), k, strerror(err),
				 sdr_last_error(ea->qp[k] ? eb->ctx[k % nc] : ea->ctx[k % nc]));
			res->ok = (err == EOPNOTSUPP || err == ENOTSUP) && p->rel != SDR_REL_NONE
					  ? -1
					  : 0;
			return -1;
		}
		if ((rc = sdr_qp_infos_get(ea->qp[k], ia, nch)) ||
		    (rc = sdr_qp_infos_get(eb->qp[k], ib, nch)) ||
		    (rc = sdr_qp_connect_infos(ea->qp[k], ib, nch)) ||
		    (rc = sdr_qp_connect_infos(eb->qp[k], ia, nch))) {
			fail(res, "connect (QP %u): %s (%s / %s)", k, sdr_strerror(rc),
			     sdr_last_error(ea->ctx[k % nc]), sdr_last_error(eb->ctx[k % nc]));
			return -1;
		}
	}
	res->setup_s = now_s() - t0;
	daemons_mem(e->rig, &rss1, &vsz1);
	res->rss_kib_qp = (rss1 - e->rss0) / (2.0 * e->nq);
	res->vsz_kib_qp = (vsz1 - e->vsz0) / (2.0 * e->nq);
	return 0;
}

/* The measurement starts: the workers' CPU time and counters, the end of a
 * --duration run. */
static void eng_mark(struct eng *e, double t)
{
	e->cpu0 = workers_cpu_s(e->rig);
	workers_read(e->rig, e->wk0);
	if (e->p->duration > 0)
		e->t_dur_end = t + e->p->duration;
}

/* Receives ahead (CTS leaves long before the send is posted). */
static int eng_post_recvs(struct eng *e, int *progress)
{
	const struct run_params *p = e->p;

	while (e->rposted < e->total && e->rposted - e->rdone < e->ahead) {
		unsigned k = (unsigned)(e->rposted % e->nq), c = k % e->nc;
		struct sdr_recv_wr wr = {.mr = e->eb.mr[c],
					 .addr = e->eb.buf[c] + (e->rposted % e->eb.nbuf) * p->size,
					 .length = (uint32_t)p->size,
					 .wr_id = e->rposted};
		struct sdr_recv_handle *h;
		int rc = sdr_recv_post(e->eb.qp[k], &wr, &h);
		if (rc == -EAGAIN)
			break;
		if (rc) {
			fail(e->res, "sdr_recv_post(%" PRIu64 "): %s", e->rposted,
			     sdr_strerror(rc));
			return -1;
		}
		e->rh[e->rposted % TS_RING] = h;
		e->st[e->rposted % TS_RING] = 0;
		e->rposted++;
		*progress = 1;
	}
	return 0;
}

/* Sends: --window in flight; with --gap-us one per QP, after its gap. */
static int eng_post_sends(struct eng *e, int *progress)
{
	const struct run_params *p = e->p;
	double t = now_s();

	while (e->sposted < e->rposted && e->sposted < e->total &&
	       e->sposted - e->sdone < p->window) {
		unsigned k = (unsigned)(e->sposted % e->nq), c = k % e->nc;
		struct sdr_send_wr wr = {.mr = e->ea.mr[c],
					 .addr = e->ea.buf[c] + (e->sposted % e->ea.nbuf) * p->size,
					 .length = (uint32_t)p->size,
					 .imm = o.imm,
					 .wr_id = e->sposted};
		int rc;
		/* q_free: 0 never sent, < 0 in flight, else free from then */
		if (o.gap_us > 0 && e->q_free[k] != 0 && !(e->q_free[k] > 0 && t >= e->q_free[k]))
			break; /* in flight, or idling */
		e->t_post[e->sposted % TS_RING] = now_s();
		rc = sdr_send_post(e->ea.qp[k], &wr, NULL);
		if (rc == -EAGAIN)
			break;
		if (rc) {
			fail(e->res, "sdr_send_post(%" PRIu64 "): %s", e->sposted,
			     sdr_strerror(rc));
			return -1;
		}
		e->q_free[k] = -1; /* in flight */
		e->sposted++;
		*progress = 1;
	}
	return 0;
}

/* The senders' completions: send latency samples, the QPs' gaps. */
static int eng_poll_sends(struct eng *e, int *progress)
{
	struct sdr_wc wc[32];

	for (unsigned c = 0; c < e->nc; c++) {
		int n = sdr_cq_poll(e->ea.ctx[c], wc, 32);
		double t;

		if (n < 0) {
			fail(e->res, "sdr_cq_poll(a): %s", sdr_strerror(n));
			return -1;
		}
		t = now_s();
		for (int i = 0; i < n; i++) {
			uint64_t id = wc[i].wr_id;
			if (wc[i].opcode != SDR_SQ_SEND || id >= e->sposted)
				continue;
			e->t_sdone[id % TS_RING] = t;
			e->st[id % TS_RING] |= 1;
			e->q_free[id % e->nq] = t + o.gap_us * 1e-6;
			if (wc[i].status)
				e->res->send_err++;
			if (id >= e->p->warmup && e->nslat < e->lat_cap)
				e->slat[e->nslat++] = (float)((t - e->t_post[id % TS_RING]) * 1e6);
			e->sdone++;
			*progress = 1;
		}
	}
	return 0;
}

/* One receive completion at time t: the bytes that arrived, the start of
 * the measurement after the warm-up, then the counts and samples. */
static void eng_on_recv(struct eng *e, const struct sdr_wc *wc, double t)
{
	const struct run_params *p = e->p;
	struct run_result *res = e->res;
	uint64_t id = wc->wr_id, bytes = 0;
	/* data or immediate missing: the message did not arrive whole */
	int partial = !!(wc->flags & (SDR_CQE_F_PARTIAL | SDR_CQE_F_IMM_PARTIAL));

	if (wc->status == 0 && partial && wc->handle) {
		int cd = sdr_recv_chunks_done(wc->handle);
		uint64_t cbytes = sdr_recv_chunk_bytes(wc->handle);
		bytes = cd > 0 ? (uint64_t)cd * cbytes : 0;
		if (bytes > p->size)
			bytes = p->size;
	} else if (wc->status == 0) {
		bytes = p->size;
	}
	if (id + 1 == p->warmup) {
		e->t_meas = t;
		eng_mark(e, t);
	}
	if (id < p->warmup)
		return;
	if (p->warmup == 0 && e->t_meas == 0)
		e->t_meas = e->t_post[0 % TS_RING];
	res->measured++;
	if (wc->status)
		res->msgs_err++;
	else if (partial)
		res->msgs_partial++;
	else
		res->msgs_ok++;
	res->bytes += bytes;
	res->pkts += e->mpm;
	res->wire_bytes += msg_wire_bytes(bytes);
	if (t > e->t_last)
		e->t_last = t;
	if (!wc->status && !partial && e->nlat < e->lat_cap)
		e->lat[e->nlat++] = (float)((t - e->t_post[id % TS_RING]) * 1e6);
	if (e->t_meas > 0) {
		double w = floor(t - e->t_meas);
		if (w >= 0 && w < MAX_WINDOWS)
			e->wbytes[(int)w] += msg_wire_bytes(bytes);
	}
}

/* The receivers' completions. */
static int eng_poll_recvs(struct eng *e, int *progress)
{
	struct sdr_wc wc[32];

	for (unsigned c = 0; c < e->nc; c++) {
		int n = sdr_cq_poll(e->eb.ctx[c], wc, 32);
		double t;

		if (n < 0) {
			fail(e->res, "sdr_cq_poll(b): %s", sdr_strerror(n));
			return -1;
		}
		t = now_s();
		for (int i = 0; i < n; i++) {
			if (wc[i].opcode != SDR_SQ_RECV || wc[i].wr_id >= e->rposted)
				continue;
			e->st[wc[i].wr_id % TS_RING] |= 2;
			e->rdone++;
			*progress = 1;
			eng_on_recv(e, &wc[i], t);
		}
	}
	return 0;
}

/* rel none: a message that lost a packet never completes by itself; a
 * receive whose send completed --recv-timeout-ms ago is completed partially. */
static int eng_expire(struct eng *e, double t)
{
	while (e->rlow < e->rposted && (e->st[e->rlow % TS_RING] & 2))
		e->rlow++;
	for (uint64_t i = e->rlow; i < e->rposted && i < e->rlow + 64; i++) {
		uint8_t s = e->st[i % TS_RING];
		int rc;

		if (!(s & 1) || (s & 6) || (t - e->t_sdone[i % TS_RING]) * 1e3 <= o.recv_timeout_ms)
			continue;
		rc = sdr_recv_complete(e->rh[i % TS_RING]);
		e->st[i % TS_RING] |= 4;
		if (rc && rc != -EALREADY && rc != -EAGAIN) {
			fail(e->res, "sdr_recv_complete: %s", sdr_strerror(rc));
			return -1;
		}
		if (rc == -EAGAIN)
			e->st[i % TS_RING] &= (uint8_t)~4;
	}
	return 0;
}

/* The loop: post, poll, until every message is done, a stop or a stall. */
static int eng_loop(struct eng *e)
{
	const struct run_params *p = e->p;

	e->t_progress = now_s();
	path_trace_start(e->rig, e->t_progress);
	if (p->warmup == 0)
		eng_mark(e, e->t_progress);
	while (!g_stop && (e->rdone < e->total || e->sdone < e->total)) {
		int progress = 0;
		double t;

		if (eng_post_recvs(e, &progress) || eng_post_sends(e, &progress) ||
		    eng_poll_sends(e, &progress) || eng_poll_recvs(e, &progress))
			return -1;
		t = now_s();
		path_trace_tick(e->rig, t);
		if (progress) {
			e->t_progress = t;
			e->spin = 0;
		} else if (!o.busy_poll && t - e->t_progress > PERF_NAP_AFTER_S) {
			/* nothing for a while (a long RTT): nap as the daemons do,
			 * not to take a CPU from their workers on a small machine */
			sleep_us(PERF_NAP_US);
		}
		/* duration mode: stop posting once the measurement time is over */
		if (p->duration > 0 && e->t_dur_end > 0 && t >= e->t_dur_end &&
		    e->total == UINT64_MAX)
			e->total = e->sposted;
		if (p->rel == SDR_REL_NONE && o.recv_timeout_ms > 0 && (++e->spin & 255) == 0 &&
		    eng_expire(e, t))
			return -1;
		if (t - e->t_progress > o.timeout) {
			fail(e->res,
			     "no progress for %.1f s: sends posted %" PRIu64 " done %" PRIu64
			     ", receives posted %" PRIu64 " done %" PRIu64,
			     o.timeout, e->sposted, e->sdone, e->rposted, e->rdone);
			return -1;
		}
	}
	if (g_stop) {
		fail(e->res, "interrupted");
		return -1;
	}
	return 0;
}

/* The figures of a completed run. */
static void eng_results(struct eng *e)
{
	struct run_result *res = e->res;
	double rss1, vsz1;

	res->elapsed = e->t_last - e->t_meas;
	res->cpu_s = workers_cpu_s(e->rig) - e->cpu0;
	workers_read(e->rig, res->wk);
	for (int k = 0; k < WK__N; k++)
		res->wk[k] -= e->wk0[k];
	daemons_mem(e->rig, &rss1, &vsz1);
	res->rss_kib_qp_end = (rss1 - e->rss0) / (2.0 * e->nq);
	read_peaks(e->rig, e->p, res);
	res->gbps_per_cpu = res->cpu_s > 0 ? (double)res->bytes * 8 / res->cpu_s / 1e9 : NAN;
	res->mpps_per_cpu = res->cpu_s > 0 ? (double)res->pkts / res->cpu_s / 1e6 : NAN;
	if (res->elapsed > 0) {
		res->goodput_gbps = (double)res->bytes * 8 / res->elapsed / 1e9;
		res->wire_gbps = res->wire_bytes * 8 / res->elapsed / 1e9;
		res->mpps = (double)res->pkts / res->elapsed / 1e6;
		res->msg_rate = (double)res->measured / res->elapsed;
	} else {
		res->goodput_gbps = res->wire_gbps = res->mpps = res->msg_rate = NAN;
	}
	/* whole 1 s windows only */
	for (int w = 0; w < MAX_WINDOWS && e->t_meas + w + 1 <= e->t_last; w++)
		res->win[res->nwin++] = e->wbytes[w] * 8 / 1e9;
	res->nlat = e->nlat;
	lat_stats(e->lat, e->nlat, res->lat, 1);
	lat_stats(e->slat, e->nslat, res->slat, 0);
	if (!strcmp(e->p->mode, "bw")) {
		res->memcpy_gbps = memcpy_baseline(e->ea.buf[0], e->ea.len[0], e->eb.buf[0],
						   e->eb.len[0], res->bytes);
		res->bound_gbps = bound_baseline(e->ea.buf[0], e->ea.len[0], e->eb.buf[0],
						 e->eb.len[0], res->bytes);
	} else {
		res->memcpy_gbps = res->bound_gbps = NAN;
	}
}

void run_engine(const struct rig *rig, const struct run_params *p, struct run_result *res)
{
	struct eng e = {.rig = rig, .p = p, .res = res};

	/* Buffers: distinct per in-flight message up to the budget, then
	 * reused round-robin (a benchmark does not verify payload). */
	if (!eng_init(&e) && !eng_open(&e) && !eng_connect(&e) &&
	    !ends_buffers(&e.ea, e.nc, p->size, p->window, 1, res) &&
	    !ends_buffers(&e.eb, e.nc, p->size, e.ahead, 0, res) && !eng_loop(&e))
		eng_results(&e);
	if (res->ok == 1 && res->measured == 0)
		fail(res, "nothing measured");
	path_trace_print(rig);
	free(e.lat);
	free(e.slat);
	free(e.ea.qp);
	free(e.eb.qp);
	free(e.q_free);
	/* sdr_ctx_close() destroys the QPs, MRs and buffers */
	for (unsigned c = 0; c < e.nc; c++) {
		sdr_ctx_close(e.ea.ctx[c]);
		sdr_ctx_close(e.eb.ctx[c]);
	}
}
