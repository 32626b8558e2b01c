/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-pipe: pipeline-parallel training traffic across two datacenters over
 * libsdr, with a discrete-event prediction of the same schedule. See
 * docs/pipeline.md. This file: main and its steps, the modes (print, simulate,
 * check, run) and their reports; the options are pipe_opts.c's. Host program,
 * above the pipe core (pipe.h, pipe_cba.h, pipe_net.h) and the runtime.
 */
#include <errno.h>
#include <stddef.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipe.h"
#include "pipe_cba.h"
#include "pipe_json.h"
#include "pipe_net.h"
#include "pipe_opts.h"
#include "pipe_run.h"

static int write_events(const char *path, const struct pipe_events *e)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	fprintf(f,
		"# iter stage kind op m chan t0 t1 csum (kind: 0 compute 1 post_recv 2 post_send "
		"3 wait_recv 4 wait_send; op: 0 F 1 B)\n");
	for (size_t i = 0; i < e->n; i++) {
		const struct pipe_event *x = &e->ev[i];

		fprintf(f, "%u %u %u %u %u %u %.9f %.9f %016" PRIx64 "\n", x->iter, x->stage,
			x->kind, x->op, x->m, x->chan, x->t0, x->t1, x->csum);
	}
	return fclose(f) ? -errno : 0;
}

static int read_events(const char *path, struct pipe_events *e)
{
	FILE *f = fopen(path, "r");
	char line[256];

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		struct pipe_event x = {0};
		unsigned it, st, k, op, m, ch;
		char tail;

		if (line[0] == '#')
			continue;
		if (sscanf(line, "%u %u %u %u %u %u %lf %lf %" SCNx64 " %c", &it, &st, &k, &op, &m,
			   &ch, &x.t0, &x.t1, &x.csum, &tail) != 9 ||
		    st >= PIPE_MAX_STAGES || k > PIPE_I_WAIT_SEND || op > 1 ||
		    m >= PIPE_MAX_MICRO || ch >= 2 * PIPE_MAX_STAGES || !isfinite(x.t0) ||
		    !isfinite(x.t1)) {
			fclose(f);
			return -EINVAL;
		}
		x.iter = it;
		x.stage = (uint16_t)st;
		x.kind = (uint8_t)k;
		x.op = (uint8_t)op;
		x.m = (uint16_t)m;
		x.chan = (uint16_t)ch;
		if (pipe_events_add(e, &x)) {
			fclose(f);
			return -ENOMEM;
		}
	}
	fclose(f);
	return 0;
}

static void json_stages(const char *key, const double *v, uint32_t n)
{
	printf(",\"%s\":[", key);
	for (uint32_t s = 0; s < n; s++)
		printf("%s%.4f", s ? "," : "", v[s]);
	printf("]");
}

static void json_cfg(const struct pipe_cfg *c)
{
	char rel[32];

	printf("\"sched\":\"%s\",\"comm\":\"%s\",\"stages\":%u,\"micro\":%u,\"place\":[",
	       pipe_sched_name(c->sched),
	       c->comm == PIPE_COMM_BLOCKING ? "blocking" : "nonblocking", c->stages, c->micro);
	for (uint32_t s = 0; s < c->stages; s++)
		printf("%s%u", s ? "," : "", c->dc_of[s]);
	printf("],\"tf_ms\":%.3f,\"tb_ms\":%.3f,\"act_bytes\":%" PRIu64 ",\"grad_bytes\":%" PRIu64
	       ",\"rtt_ms\":%.3f,\"rate_bps\":%" PRIu64 ",\"delta_n\":[",
	       c->tf * 1e3, c->tb * 1e3, c->act_bytes, c->grad_bytes, c->rtt * 1e3, c->rate_bps);
	for (uint32_t s = 0; s < c->stages; s++)
		printf("%s%u", s ? "," : "",
		       c->sched == PIPE_SCHED_GEOPIPE ? pipe_stage_delta(c, s) : 0);
	printf("],\"mem_budget\":%u,\"rel\":\"%s\"", pipe_stage_budget(c, 0),
	       pipe_rel_format(&c->rel, rel, sizeof(rel)));
}

/* DES of one configuration: @p iters iterations under policy @p pol (it[],
 * the last one's events in pred); fills prog and pred. */
static int predict(const struct pipe_cfg *c, const struct pipe_policy_cfg *pol, uint32_t iters,
		   struct pipe_prog *prog, struct pipe_des_out *pred, struct pipe_pred_iter *it)
{
	static struct pipe_order ord;
	char why[256];
	int rc = pipe_order_build(c, &ord);

	if (rc) {
		fprintf(stderr, "sdr-pipe: schedule: %s\n", strerror(-rc));
		return rc;
	}
	if ((rc = pipe_order_check(c, &ord, why, sizeof(why)))) {
		fprintf(stderr, "sdr-pipe: internal: %s schedule invalid: %s\n",
			pipe_sched_name(c->sched), why);
		return rc;
	}
	if ((rc = pipe_prog_build(c, &ord, prog)))
		return rc;
	why[0] = '\0';
	rc = pipe_predict(c, prog, pol, iters, it, pred, why, sizeof(why));
	if (rc)
		fprintf(stderr, "sdr-pipe: %s: %s\n", pipe_policy_name(pol->policy),
			why[0] ? why : strerror(-rc));
	return rc;
}

/* ,"KEY":[{"iter_ms","bubble","cb","refused","undone","rates_bps"},...]: per iteration,
 * measured (the runtime's merged log) or predicted (the DES) */
static void json_iters(const char *key, const struct pipe_pred_iter *it, uint32_t n)
{
	printf(",\"%s\":[", key);
	for (uint32_t i = 0; i < n; i++) {
		printf("%s{\"iter_ms\":%.3f,\"bubble\":%.4f,\"cb\":%u,\"refused\":%u,\"undone\":%u,"
		       "\"rates_bps\":[",
		       i ? "," : "", it[i].iter_time * 1e3, it[i].bubble, it[i].ncb,
		       it[i].alloc.nblocked, it[i].alloc.undone);
		for (uint32_t f = 0; f < it[i].alloc.n; f++)
			printf("%s%" PRIu64, f ? "," : "", it[i].alloc.rate[f]);
		printf("]}");
	}
	printf("]");
}

/* ,"policy":...,"pred_iters":[...] */
static void json_pred_iters(const struct pipe_policy_cfg *pol, const struct pipe_pred_iter *it,
			    uint32_t n)
{
	printf(",\"policy\":\"%s\"", pipe_policy_name(pol->policy));
	json_iters("pred_iters", it, n);
}

/* What main() builds; freed at exit whichever way main() returns. */
static struct pipe_net net;
static struct pipe_pred_iter *meas_it; /* per measured iteration (DC 0) */
static struct pipe_run_out run_out;
static struct pipe_prog prog;
static struct pipe_pred_iter pred_it[PRED_ITERS_MAX];
static struct pipe_des_out pred;
static struct pipe_events local, all, checked;

static void free_at_exit(void)
{
	free(meas_it);
	pipe_prog_free(&prog);
	pipe_des_free(&pred);
	pipe_events_free(&local);
	pipe_events_free(&all);
	pipe_events_free(&checked);
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* --print-link-args DC --dc-addrs A0,A1,... */
static int print_link_args(const struct pipe_net *n, uint32_t dc, const char *addrs)
{
	char list[PIPE_MAX_DC * 16 + 8], *addr[PIPE_MAX_DC] = {0}, *save = NULL, *tok;
	static char out[PIPE_NET_MAX_LINKS *
			(PIPE_NET_SPEC_MAX + PIPE_NET_NAME_MAX + PIPE_MAX_DC * 16)];
	uint32_t k = 0;
	int rc;

	if (!addrs || strlen(addrs) >= sizeof(list)) {
		fprintf(stderr, "sdr-pipe: --print-link-args needs --dc-addrs A0,A1,... (one IPv4 "
				"address per DC)\n");
		return 2;
	}
	strcpy(list, addrs);
	for (tok = strtok_r(list, ",", &save); tok && k < PIPE_MAX_DC;
	     tok = strtok_r(NULL, ",", &save))
		addr[k++] = tok;
	if (tok || k < n->dcs) {
		fprintf(stderr,
			"sdr-pipe: --dc-addrs: want %u addresses (one per DC of the network)\n",
			n->dcs);
		return 2;
	}
	if (dc >= n->dcs) {
		fprintf(stderr, "sdr-pipe: --print-link-args %u: the network has DCs 0..%u\n", dc,
			n->dcs - 1);
		return 2;
	}
	rc = pipe_net_link_args(n, dc, (const char *const *)addr, out, sizeof(out));
	if (rc < 0) {
		fprintf(stderr, "sdr-pipe: --dc-addrs: %s\n",
			rc == -EINVAL ? "not an IPv4 address (dotted quad)" : strerror(-rc));
		return 2;
	}
	fputs(out, stdout);
	return 0;
}

/* GeoPipe's dN both ways: the closed form's and the search's, with the
 * iteration time each gives (--delta-n search) */
struct dn_report {
	int have;
	uint32_t rule[PIPE_MAX_STAGES], found[PIPE_MAX_STAGES], runs;
	double t_rule, t_found;
};

/* --delta-n search: search the DES for geopipe's dN and make @p c use it. */
static int resolve_delta(struct pipe_cfg *c, int search, struct dn_report *r)
{
	struct pipe_cfg a = *c;
	int rc;

	r->have = 0;
	if (!search || c->sched != PIPE_SCHED_GEOPIPE)
		return 0;
	a.delta_n = UINT32_MAX; /* the closed form */
	for (uint32_t s = 0; s < c->stages; s++)
		r->rule[s] = pipe_stage_delta(&a, s);
	if ((rc = pipe_des_time(&a, &r->t_rule)) ||
	    (rc = pipe_delta_search(c, r->found, &r->t_found, &r->runs))) {
		fprintf(stderr, "sdr-pipe: dN search: %s\n", strerror(-rc));
		return rc;
	}
	c->delta_n = PIPE_DELTA_STAGE;
	memcpy(c->delta_stage, r->found, sizeof(c->delta_stage));
	r->have = 1;
	return 0;
}

/* Finish @p c for a DES or a run: 2 (the exit status) for a configuration
 * the schedules refuse, 1 for a failed dN search, 0 when ready. */
static int cfg_ready(struct pipe_cfg *c, int search, struct dn_report *r)
{
	if (pipe_cfg_finish(c)) {
		fprintf(stderr, "sdr-pipe: invalid configuration (geopipe and greedy are "
				"non-blocking only)\n");
		return 2;
	}
	return resolve_delta(c, search, r) ? 1 : 0;
}

static void print_list(const char *pre, const uint32_t *v, uint32_t n)
{
	printf("%s", pre);
	for (uint32_t s = 0; s < n; s++)
		printf("%s%u", s ? "," : "", v[s]);
	printf("]");
}

static void dn_report_print(const struct dn_report *r, uint32_t S, int json)
{
	if (!r->have)
		return;
	if (json) {
		print_list(",\"delta_n_rule\":[", r->rule, S);
		printf(",\"delta_n_rule_ms\":%.3f", r->t_rule * 1e3);
		print_list(",\"delta_n_search\":[", r->found, S);
		printf(",\"delta_n_search_ms\":%.3f,\"delta_n_search_runs\":%u", r->t_found * 1e3,
		       r->runs);
		return;
	}
	print_list("  geopipe dN: closed form [", r->rule, S);
	printf(" %.2f ms; by search [", r->t_rule * 1e3);
	for (uint32_t s = 0; s < S; s++)
		printf("%s%u", s ? "," : "", r->found[s]);
	printf("] %.2f ms (%u DES runs)\n", r->t_found * 1e3, r->runs);
}

/* --net / --net-text, checked against the placement; --print-net and
 * --print-link-args end here. @return -1 to go on, else the exit code. */
static int cli_net(const struct cli *cl, struct pipe_cfg *cfg)
{
	struct pipe_net tmp;
	const struct pipe_net *n;
	struct pipe_cfg c;
	uint64_t um = 0;
	char why[300];

	if (cl->net_file || cl->net_text) {
		int rc = cl->net_file ? pipe_net_load(cl->net_file, &net, why, sizeof(why))
				      : pipe_net_parse(cl->net_text, &net, why, sizeof(why));
		if (rc) {
			fprintf(stderr, "sdr-pipe: --%s: %s\n", cl->net_file ? "net" : "net-text",
				rc == -ENOMEM ? strerror(ENOMEM) : why);
			return 2;
		}
		cfg->net = &net;
	}
	if (!cl->print_net && cl->link_args_dc < 0 && !cfg->net)
		return -1;
	c = *cfg;
	if (pipe_cfg_finish(&c)) {
		fprintf(stderr, "sdr-pipe: invalid configuration%s\n",
			cfg->net && pipe_place_check(c.dc_of, c.stages, &c.dcs) == 0 &&
					cfg->net->dcs < c.dcs
				? ": the placement has more DCs than the network"
				: "");
		return 2;
	}
	n = pipe_net_of(&c, &tmp);
	if (pipe_net_check(n, &c, &um, why, sizeof(why))) {
		fprintf(stderr, "sdr-pipe: --net: %s\n", why);
		return 2;
	}
	for (uint32_t k = 0; k < PIPE_MAX_DC * PIPE_MAX_DC && !cl->quiet; k++)
		if (um >> k & 1)
			fprintf(stderr,
				"sdr-pipe: note: no link carries DC %u -> DC %u: not "
				"emulated (no delay, rate --rate)\n",
				k / PIPE_MAX_DC, k % PIPE_MAX_DC);
	if (cl->print_net)
		return pipe_net_write(stdout, n) ? 1 : 0;
	if (cl->link_args_dc >= 0)
		return print_link_args(n, (uint32_t)cl->link_args_dc, cl->dc_addrs);
	return -1;
}

/* --print-sched: the schedule and its DES timing as JSON. */
static int mode_print_sched(const struct cli *cl, struct pipe_cfg *cfg)
{
	struct dn_report dr;
	int rc;

	if ((rc = cfg_ready(cfg, cl->dn_search, &dr)))
		return rc;
	if (predict(cfg, &cl->pol, 1, &prog, &pred, pred_it))
		return 1;
	return pipe_schedule_json(stdout, cfg, &prog, &pred) ? 1 : 0;
}

/* --loss-draws: the iteration time over that many loss seeds (the same
 * program, which the loss seed does not change). */
struct draws {
	double mean, min, max;
};

static int loss_draws(const struct cli *cl, const struct pipe_cfg *c, struct draws *d)
{
	d->mean = 0;
	d->min = INFINITY;
	d->max = 0;
	for (uint32_t k = 1; k <= cl->loss_draws; k++) {
		struct pipe_cfg e = *c;
		struct pipe_des_out o;
		struct pipe_metrics dm;
		double t;
		int rc;

		e.loss_seed = k;
		if ((rc = pipe_des_run(&e, &prog, &o))) {
			fprintf(stderr, "sdr-pipe: DES: %s\n", strerror(-rc));
			return 1;
		}
		pipe_metrics_get(&e, &o.ev, 0, &dm);
		pipe_des_free(&o);
		t = dm.iter_time;
		d->mean += t / cl->loss_draws;
		d->min = fmin(d->min, t);
		d->max = fmax(d->max, t);
	}
	return 0;
}

/* One simulated configuration's JSON line. */
static void sim_json(const struct cli *cl, const struct pipe_cfg *c, const struct pipe_metrics *m,
		     const struct dn_report *dr, const struct draws *d)
{
	printf("{\"mode\":\"simulate\",");
	json_cfg(c);
	printf(",\"pred_iter_ms\":%.3f,\"pred_bubble\":%.4f", m->iter_time * 1e3, m->bubble_all);
	json_stages("pred_bubble_stage", m->bubble, c->stages);
	printf(",\"bytes_cross\":%" PRIu64 ",\"bytes_local\":%" PRIu64, m->bytes_cross,
	       m->bytes_local);
	json_pred_iters(&cl->pol, pred_it, cl->pred_iters);
	dn_report_print(dr, c->stages, 1);
	if (cl->loss_draws)
		printf(",\"pred_iter_ms_drawn\":{\"n\":%u,\"mean\":%.3f,\"min\":%.3f,"
		       "\"max\":%.3f}",
		       cl->loss_draws, d->mean * 1e3, d->min * 1e3, d->max * 1e3);
	printf("}\n");
}

/* One simulated configuration's text: one line, or one per predicted
 * iteration under a policy; then dN and the loss draws. */
static void sim_text(const struct cli *cl, const struct pipe_cfg *c, const struct pipe_metrics *m,
		     const struct dn_report *dr, const struct draws *d)
{
	const char *comm = c->comm == PIPE_COMM_BLOCKING ? "blocking" : "nonblocking";

	if (cl->pol.policy == PIPE_POLICY_NONE && cl->pred_iters == 1) {
		printf("%-8s %-11s S=%u M=%u  iteration %8.2f ms  bubble %5.1f %%  "
		       "cross-DC %" PRIu64 " B  local %" PRIu64 " B\n",
		       pipe_sched_name(c->sched), comm, c->stages, c->micro, m->iter_time * 1e3,
		       m->bubble_all * 100, m->bytes_cross, m->bytes_local);
	} else {
		for (uint32_t i = 0; i < cl->pred_iters; i++) {
			const struct pipe_alloc *a = &pred_it[i].alloc;

			printf("%-8s %-11s S=%u M=%u  policy %s iter %u  %8.2f ms  bubble "
			       "%5.1f %%  CB %u  refused %u  rates",
			       pipe_sched_name(c->sched), comm, c->stages, c->micro,
			       pipe_policy_name(cl->pol.policy), i, pred_it[i].iter_time * 1e3,
			       pred_it[i].bubble * 100, pred_it[i].ncb, a->nblocked);
			for (uint32_t f = 0; f < a->n; f++)
				printf("%s%.4g", f ? "," : " ", (double)a->rate[f] / 1e6);
			printf(" Mbit/s%s\n", a->undone ? "  (undoes the last moves)" : "");
		}
	}
	dn_report_print(dr, c->stages, 0);
	if (cl->loss_draws)
		printf("  loss recovery drawn from the model, %u runs: mean %.2f ms, min "
		       "%.2f, max %.2f\n",
		       cl->loss_draws, d->mean * 1e3, d->min * 1e3, d->max * 1e3);
}

/* --simulate: the DES of one schedule, or of every one (--sched all). */
static int mode_simulate(const struct cli *cl, const struct pipe_cfg *cfg)
{
	for (int k = 0; k < PIPE_SCHED_COUNT; k++) {
		struct pipe_cfg c = *cfg;
		struct pipe_metrics m;
		struct dn_report dr;
		struct draws d;
		int rc;

		if (cl->all_sched)
			c.sched = (enum pipe_sched)k;
		else if (k != (int)cfg->sched)
			continue;
		if ((rc = cfg_ready(&c, cl->dn_search, &dr)))
			return rc;
		if (predict(&c, &cl->pol, cl->pred_iters, &prog, &pred, pred_it))
			return 1;
		pipe_metrics_get(&c, &pred.ev, 0, &m);
		if (loss_draws(cl, &c, &d))
			return 1;
		if (cl->json)
			sim_json(cl, &c, &m, &dr, &d);
		else if (!cl->quiet)
			sim_text(cl, &c, &m, &dr, &d);
		if (cl->svg && !cl->all_sched &&
		    (rc = pipe_svg_write(cl->svg, &c, NULL, 0, &pred, pipe_sched_name(c.sched)))) {
			fprintf(stderr, "sdr-pipe: %s: %s\n", cl->svg, strerror(-rc));
			return 1;
		}
		pipe_des_free(&pred);
		pipe_prog_free(&prog);
	}
	return 0;
}

/* --check-events: a merged event log against the program's dependencies
 * (one DC's log: its stages only). */
static int mode_check(const struct cli *cl, const struct pipe_cfg *cfg)
{
	struct pipe_events *e_ = &checked, e;
	uint32_t iters = 0;
	int partial = 0, rc;
	char why[512];

	if ((rc = read_events(cl->check, e_))) {
		fprintf(stderr, "sdr-pipe: %s: %s\n", cl->check,
			rc == -EINVAL ? "malformed" : strerror(-rc));
		return 1;
	}
	e = *e_;
	for (size_t i = 0; i < e.n; i++)
		if (e.ev[i].iter + 1 > iters)
			iters = e.ev[i].iter + 1;
	for (uint32_t s = 0; s < cfg->stages; s++) {
		int seen = 0;

		for (size_t i = 0; i < e.n && !seen; i++)
			seen = e.ev[i].stage == s;
		partial |= !seen;
	}
	if (pipe_events_check(cfg, &prog, &e, iters, partial, why, sizeof(why))) {
		printf("dependency check FAILED: %s\n", why);
		return 1;
	}
	printf("dependency check ok: %zu events, %u iterations%s\n", e.n, iters,
	       partial ? " (one DC only)" : "");
	return 0;
}

/* This DC's run (pipe_run()), its event log written and checked.
 * @return -1 to go on (DC 0: the report), else the exit code. */
static int run_dc(struct cli *cl, const struct pipe_cfg *cfg, struct pipe_events **ev)
{
	struct pipe_rt_opts *ro = &cl->ro;
	char why[512];
	int rc;

	if (ro->dc >= cfg->dcs) {
		fprintf(stderr, "sdr-pipe: --dc %u: the placement has DCs 0..%u\n", ro->dc,
			cfg->dcs - 1);
		return 2;
	}
	if (cl->ctl_log && ro->dc != 0) {
		fprintf(stderr, "sdr-pipe: --ctl-log is DC 0's (the controller)\n");
		return 2;
	}
	if (cl->ctl_log && !(ro->ctl_log = fopen(cl->ctl_log, "w"))) {
		fprintf(stderr, "sdr-pipe: %s: %s\n", cl->ctl_log, strerror(errno));
		return 1;
	}
	ro->policy = &cl->pol;
	run_out.it = meas_it = calloc(ro->iters, sizeof(*meas_it));
	if (!meas_it)
		return 1;
	rc = pipe_run(cfg, &prog, ro, &local, &all, &run_out);
	if (ro->ctl_log)
		fclose(ro->ctl_log);
	if (rc) {
		fprintf(stderr, "sdr-pipe: run failed: %s\n", strerror(-rc));
		return 1;
	}
	*ev = ro->dc == 0 ? &all : &local;
	if (cl->evpath && (rc = write_events(cl->evpath, *ev))) {
		fprintf(stderr, "sdr-pipe: %s: %s\n", cl->evpath, strerror(-rc));
		return 1;
	}
	if (pipe_events_check(cfg, &prog, *ev, ro->iters, ro->dc != 0, why, sizeof(why))) {
		printf("dependency check FAILED: %s\n", why);
		return 1;
	}
	if (ro->dc != 0) {
		if (!cl->quiet)
			printf("dc%u: %u iterations, %zu events, every payload verified, "
			       "dependency "
			       "check ok (local stages)\n",
			       ro->dc, ro->iters, local.n);
		return 0;
	}
	return -1;
}

/* The measured figures of DC 0's run: over iterations 1.. (iteration 0
 * warms up), or 0 alone; the median iteration's metrics and the DES's
 * median over the same iterations (they differ under cba). */
struct run_stats {
	uint32_t first, n, med_it, npred;
	double med, tmin;
	struct pipe_metrics mm, pm;
};

static int run_stats(const struct pipe_cfg *cfg, const struct pipe_events *ev, uint32_t iters,
		     struct run_stats *st)
{
	uint32_t first = iters > 1 ? 1 : 0, n = iters - first, npred = st->npred;
	double *t = malloc(n * sizeof(double));

	st->first = first;
	st->n = n;
	st->med_it = first;
	st->tmin = INFINITY;
	if (!t)
		return 1;
	for (uint32_t i = 0; i < n; i++) {
		pipe_metrics_get(cfg, ev, first + i, &st->mm);
		t[i] = st->mm.iter_time;
		if (t[i] < st->tmin)
			st->tmin = t[i];
	}
	qsort(t, n, sizeof(double), cmp_d);
	st->med = t[(n - 1) / 2];
	free(t);
	for (uint32_t i = 0; i < n; i++) {
		pipe_metrics_get(cfg, ev, first + i, &st->mm);
		if (st->mm.iter_time == st->med)
			st->med_it = first + i;
	}
	pipe_metrics_get(cfg, ev, st->med_it, &st->mm);
	if (npred > first) {
		double *pt = malloc((npred - first) * sizeof(double));

		if (!pt)
			return 1;
		for (uint32_t i = first; i < npred; i++)
			pt[i - first] = pred_it[i].iter_time;
		qsort(pt, npred - first, sizeof(double), cmp_d);
		st->pm.iter_time = pt[(npred - first - 1) / 2];
		for (uint32_t i = first; i < npred; i++)
			if (pred_it[i].iter_time == st->pm.iter_time)
				st->pm.bubble_all = pred_it[i].bubble;
		free(pt);
	}
	return 0;
}

/* DC 0's run as one JSON line. */
static void run_json(const struct cli *cl, const struct pipe_cfg *cfg, const struct run_stats *st)
{
	const struct pipe_metrics *mm = &st->mm, *pm = &st->pm;
	double off_ms[PIPE_MAX_DC], rtt_ms[PIPE_MAX_DC];

	printf("{\"mode\":\"run\",");
	json_cfg(cfg);
	printf(",\"dcs\":%u,\"iters\":%u,\"meas_iter_ms\":%.3f,\"meas_iter_min_ms\":%.3f,"
	       "\"meas_bubble\":%.4f",
	       cfg->dcs, cl->ro.iters, st->med * 1e3, st->tmin * 1e3, mm->bubble_all);
	json_stages("meas_bubble_stage", mm->bubble, cfg->stages);
	printf(",\"pred_iter_ms\":%.3f,\"pred_bubble\":%.4f", pm->iter_time * 1e3, pm->bubble_all);
	json_stages("pred_bubble_stage", pm->bubble, cfg->stages);
	printf(",\"meas_over_pred\":%.4f,\"bytes_cross\":%" PRIu64 ",\"bytes_local\":%" PRIu64,
	       st->med / pm->iter_time, mm->bytes_cross, mm->bytes_local);
	for (uint32_t k = 0; k < cfg->dcs; k++) {
		off_ms[k] = run_out.clock_offset[k] * 1e3;
		rtt_ms[k] = run_out.clock_rtt[k] * 1e3;
	}
	json_stages("clock_offset_ms", off_ms, cfg->dcs);
	json_stages("clock_rtt_ms", rtt_ms, cfg->dcs);
	json_iters("meas_iters", meas_it, cl->ro.iters);
	json_pred_iters(&cl->pol, pred_it, st->npred);
	printf(",\"payloads_verified\":true,\"deps_ok\":true}\n");
}

/* DC 0's run as text. */
static void run_text(const struct cli *cl, const struct pipe_cfg *cfg, const struct run_stats *st,
		     const struct pipe_events *ev)
{
	const struct pipe_metrics *mm = &st->mm, *pm = &st->pm;
	char rel[32];

	printf("sdr-pipe %s (%s), S=%u M=%u, tf %.2f ms tb %.2f ms, act %" PRIu64 " B grad %" PRIu64
	       " B, rtt %.2f ms, rate %.3g bit/s, rel %s\n",
	       pipe_sched_name(cfg->sched),
	       cfg->comm == PIPE_COMM_BLOCKING ? "blocking" : "nonblocking", cfg->stages,
	       cfg->micro, cfg->tf * 1e3, cfg->tb * 1e3, cfg->act_bytes, cfg->grad_bytes,
	       cfg->rtt * 1e3, (double)cfg->rate_bps, pipe_rel_format(&cfg->rel, rel, sizeof(rel)));
	printf("iterations: %u (stats over %u): median %.2f ms, min %.2f ms; predicted %.2f ms "
	       "(measured/predicted %.3f)\n",
	       cl->ro.iters, st->n, st->med * 1e3, st->tmin * 1e3, pm->iter_time * 1e3,
	       st->med / pm->iter_time);
	printf("bubble: measured %.1f %%, predicted %.1f %%\n", mm->bubble_all * 100,
	       pm->bubble_all * 100);
	for (uint32_t s = 0; s < cfg->stages; s++)
		printf("  stage %u (dc%u): bubble measured %5.1f %% predicted %5.1f %%\n", s,
		       cfg->dc_of[s], mm->bubble[s] * 100, pm->bubble[s] * 100);
	printf("bytes per iteration: cross-DC %" PRIu64 ", local %" PRIu64 "\n", mm->bytes_cross,
	       mm->bytes_local);
	printf("every payload verified, dependency order ok (%zu events)\n", ev->n);
}

/* A run (or --check-events): the DES next to it, this DC's part, and on
 * DC 0 the report. */
static int mode_run(struct cli *cl, struct pipe_cfg *cfg)
{
	struct pipe_events *ev = NULL;
	struct run_stats st = {0};
	struct dn_report dr;
	int rc;

	/* every DC searches alike: the result is part of the digest */
	if ((rc = cfg_ready(cfg, cl->dn_search, &dr)))
		return rc;
	/* the DES next to the run: as many iterations, the same policy */
	st.npred = cl->check ? 1 : cl->ro.iters < PRED_ITERS_MAX ? cl->ro.iters : PRED_ITERS_MAX;
	if (predict(cfg, &cl->pol, st.npred, &prog, &pred, pred_it))
		return 1;
	pipe_metrics_get(cfg, &pred.ev, 0, &st.pm);
	if (cl->check)
		return mode_check(cl, cfg);
	if ((rc = run_dc(cl, cfg, &ev)) >= 0)
		return rc;
	if (run_stats(cfg, ev, cl->ro.iters, &st))
		return 1;
	if (cl->json)
		run_json(cl, cfg, &st);
	else if (!cl->quiet)
		run_text(cl, cfg, &st, ev);
	if (cl->svg && (rc = pipe_svg_write(cl->svg, cfg, ev, st.med_it, &pred,
					    pipe_sched_name(cfg->sched)))) {
		fprintf(stderr, "sdr-pipe: %s: %s\n", cl->svg, strerror(-rc));
		return 1;
	}
	pipe_events_free(&local);
	pipe_events_free(&all);
	pipe_des_free(&pred);
	pipe_prog_free(&prog);
	return 0;
}

int main(int argc, char **argv)
{
	struct pipe_cfg cfg;
	struct cli cl;
	int rc;

	atexit(free_at_exit); /* every return of main() frees what it built */
	setvbuf(stdout, NULL, _IOLBF, 0);
	if ((rc = cli_parse(argc, argv, &cl)) >= 0)
		return rc;
	cfg = cl.cfg;
	if ((rc = cli_pipeline(&cl, &cfg)) >= 0 || (rc = cli_net(&cl, &cfg)) >= 0 ||
	    (rc = cli_policy(&cl, &cfg)) >= 0)
		return rc;
	if (cl.print_sched)
		return mode_print_sched(&cl, &cfg);
	if (cl.all_sched && !cl.sim) {
		fprintf(stderr, "sdr-pipe: --sched all needs --simulate\n");
		return 2;
	}
	if (cl.sim)
		return mode_simulate(&cl, &cfg);
	return mode_run(&cl, &cfg);
}
