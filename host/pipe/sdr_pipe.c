/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-pipe: pipeline-parallel training traffic across two datacenters over
 * libsdr, with a discrete-event prediction of the same schedule. See
 * docs/pipeline.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipe.h"
#include "pipe_json.h"
#include "pipe_run.h"
#include "sdr_opts.h"
#include "sdr_units.h"

/* seconds; "12.5ms", "250us", "0.5" (common/sdr_units.c) */
static int parse_time(const char *s, double *out)
{
	return sdr_parse_duration(s, SDR_TIME_S, SDR_TIME_S, out, NULL) ? -1 : 0;
}

static int write_events(const char *path, const struct pipe_events *e)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	fprintf(f, "# iter stage kind op m chan t0 t1 csum (kind: 0 compute 1 post_recv 2 post_send "
		   "3 wait_recv 4 wait_send; op: 0 F 1 B)\n");
	for (size_t i = 0; i < e->n; i++) {
		const struct pipe_event *x = &e->ev[i];

		fprintf(f, "%u %u %u %u %u %u %.9f %.9f %016" PRIx64 "\n", x->iter, x->stage, x->kind,
			x->op, x->m, x->chan, x->t0, x->t1, x->csum);
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
		if (sscanf(line, "%u %u %u %u %u %u %lf %lf %" SCNx64 " %c", &it, &st, &k, &op, &m, &ch,
			   &x.t0, &x.t1, &x.csum, &tail) != 9 ||
		    st >= PIPE_MAX_STAGES || k > PIPE_I_WAIT_SEND || op > 1 || m >= PIPE_MAX_MICRO ||
		    ch >= 2 * PIPE_MAX_STAGES || !isfinite(x.t0) || !isfinite(x.t1)) {
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

	printf("\"sched\":\"%s\",\"comm\":\"%s\",\"stages\":%u,\"micro\":%u,\"place\":\"", pipe_sched_name(c->sched),
	       c->comm == PIPE_COMM_BLOCKING ? "blocking" : "nonblocking", c->stages, c->micro);
	for (uint32_t s = 0; s < c->stages; s++)
		printf("%u", c->dc_of[s]);
	printf("\",\"tf_ms\":%.3f,\"tb_ms\":%.3f,\"act_bytes\":%" PRIu64 ",\"grad_bytes\":%" PRIu64
	       ",\"rtt_ms\":%.3f,\"rate_bps\":%" PRIu64 ",\"delta_n\":[",
	       c->tf * 1e3, c->tb * 1e3, c->act_bytes, c->grad_bytes, c->rtt * 1e3, c->rate_bps);
	for (uint32_t s = 0; s < c->stages; s++)
		printf("%s%u", s ? "," : "", c->sched == PIPE_SCHED_GEOPIPE ? pipe_stage_delta(c, s) : 0);
	printf("],\"mem_budget\":%u,\"rel\":\"%s\"", pipe_stage_budget(c, 0), pipe_rel_format(&c->rel, rel, sizeof(rel)));
}

/* DES of one configuration; fills prog and pred. */
static int predict(const struct pipe_cfg *c, struct pipe_prog *prog, struct pipe_des_out *pred)
{
	static struct pipe_order ord;
	char why[256];
	int rc = pipe_order_build(c, &ord);

	if (rc) {
		fprintf(stderr, "sdr-pipe: schedule: %s\n", strerror(-rc));
		return rc;
	}
	if ((rc = pipe_order_check(c, &ord, why, sizeof(why)))) {
		fprintf(stderr, "sdr-pipe: internal: %s schedule invalid: %s\n", pipe_sched_name(c->sched),
			why);
		return rc;
	}
	if ((rc = pipe_prog_build(c, &ord, prog)))
		return rc;
	rc = pipe_des_run(c, prog, pred);
	if (rc)
		fprintf(stderr, "sdr-pipe: DES: %s\n", strerror(-rc));
	return rc;
}

/* What main() builds; freed at exit whichever way main() returns. */
static struct pipe_prog prog;
static struct pipe_des_out pred;
static struct pipe_events local, all, checked;

static void free_at_exit(void)
{
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

/* ---------------- options ---------------- */

enum {
	O_STAGES = 1, O_PLACE, O_MICRO, O_TF, O_TB, O_ACT, O_GRAD, O_SCHED, O_COMM, O_DN, O_MEM,
	O_RTT, O_RATE, O_MTU, O_FOH, O_SIM, O_DC, O_DPU, O_SERVER, O_PORT, O_CONNECT, O_REL,
	O_ITERS, O_TIMEOUT, O_SEED, O_POLL, O_JSON, O_SVG, O_EVENTS, O_CHECK, O_QUIET, O_VERBOSE,
	O_TF_STAGE, O_TB_STAGE, O_PRINT_SCHED,
};

struct cli {
	struct pipe_cfg cfg;
	struct pipe_rt_opts ro;
	int sim, json, quiet, all_sched, tb_set, place_set, stages_set;
	const char *svg, *evpath, *check;
	const char *tf_stage, *tb_stage; /* per-stage times, parsed once S is known */
	int print_sched;
	uint32_t stages;
};

/* "T0,T1,..." with exactly @p n times into @p out. */
static int parse_stage_times(const char *s, uint32_t n, double *out)
{
	char buf[4096], *save = NULL, *tok;
	uint32_t i = 0;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (i == n || parse_time(tok, &out[i]) || out[i] > 60)
			return -1;
		i++;
	}
	return i == n ? 0 : -1;
}

static int on_opt(const struct sdr_opt *o, const char *arg, void *ctx)
{
	struct cli *c = ctx;
	uint64_t v;

	switch (o->id) {
	case O_STAGES:
		if (sdr_parse_u64(arg, &v, 0) || v < 2 || v > PIPE_MAX_STAGES)
			return -1;
		c->stages = (uint32_t)v;
		c->stages_set = 1;
		break;
	case O_PLACE:
		if (pipe_place_parse(arg, &c->cfg))
			return -1;
		c->place_set = 1;
		break;
	case O_MICRO:
		if (sdr_parse_u64(arg, &v, 0) || v < 1 || v > PIPE_MAX_MICRO)
			return -1;
		c->cfg.micro = (uint32_t)v;
		break;
	case O_TF:
		if (parse_time(arg, &c->cfg.tf) || c->cfg.tf <= 0)
			return -1;
		break;
	case O_TB:
		if (parse_time(arg, &c->cfg.tb) || c->cfg.tb <= 0)
			return -1;
		c->tb_set = 1;
		break;
	case O_ACT:
		if (sdr_parse_u64(arg, &c->cfg.act_bytes, 1))
			return -1;
		break;
	case O_GRAD:
		if (sdr_parse_u64(arg, &c->cfg.grad_bytes, 1))
			return -1;
		break;
	case O_SCHED:
		if (strcmp(arg, "all") == 0)
			c->all_sched = 1;
		else if (pipe_sched_parse(arg, &c->cfg.sched))
			return -1;
		break;
	case O_COMM:
		if (strcmp(arg, "blocking") == 0)
			c->cfg.comm = PIPE_COMM_BLOCKING;
		else if (strcmp(arg, "nonblocking") == 0)
			c->cfg.comm = PIPE_COMM_NONBLOCKING;
		else
			return -1;
		break;
	case O_DN:
		if (sdr_parse_u64(arg, &v, 0) || v > PIPE_MAX_MICRO)
			return -1;
		c->cfg.delta_n = (uint32_t)v;
		break;
	case O_MEM:
		if (sdr_parse_u64(arg, &v, 0) || v < 1 || v > PIPE_MAX_MICRO)
			return -1;
		c->cfg.mem_budget = (uint32_t)v;
		break;
	case O_RTT:
		if (parse_time(arg, &c->cfg.rtt))
			return -1;
		break;
	case O_RATE:
		if (sdr_parse_rate(arg, &c->cfg.rate_bps) || c->cfg.rate_bps == 0)
			return -1;
		break;
	case O_MTU:
		if (sdr_parse_u64(arg, &v, 0) || v < 256 || v > 9000)
			return -1;
		c->cfg.mtu = (uint32_t)v;
		break;
	case O_FOH:
		if (sdr_parse_u64(arg, &v, 0) || v > 1024)
			return -1;
		c->cfg.frame_overhead = (uint32_t)v;
		break;
	case O_SIM: c->sim = 1; break;
	case O_DC:
		if (strcmp(arg, "0") && strcmp(arg, "1"))
			return -1;
		c->ro.dc = (uint32_t)(arg[0] - '0');
		break;
	case O_DPU: c->ro.dpu = arg; break;
	case O_SERVER: c->ro.bind = arg; break;
	case O_PORT:
		if (sdr_parse_u64(arg, &v, 0) || v == 0 || v > 65535)
			return -1;
		c->ro.port = (uint16_t)v;
		break;
	case O_CONNECT: c->ro.connect = arg; break;
	case O_REL:
		if (pipe_rel_parse(arg, &c->cfg.rel))
			return -1;
		break;
	case O_ITERS:
		if (sdr_parse_u64(arg, &v, 0) || v < 1 || v > 10000)
			return -1;
		c->ro.iters = (uint32_t)v;
		break;
	case O_TIMEOUT:
		if (parse_time(arg, &c->ro.timeout) || c->ro.timeout <= 0 || c->ro.timeout > 3600)
			return -1;
		break;
	case O_SEED:
		if (sdr_parse_u64(arg, &c->ro.seed, 0))
			return -1;
		break;
	case O_POLL:
		if (sdr_parse_u64(arg, &v, 0) || v < 1 || v > 100000)
			return -1;
		c->ro.poll_us = (uint32_t)v;
		break;
	case O_JSON: c->json = 1; break;
	case O_SVG: c->svg = arg; break;
	case O_EVENTS: c->evpath = arg; break;
	case O_CHECK: c->check = arg; break;
	case O_QUIET: c->quiet = 1; break;
	case O_VERBOSE: c->ro.verbose = 1; break;
	case O_TF_STAGE: c->tf_stage = arg; break;
	case O_TB_STAGE: c->tb_stage = arg; break;
	case O_PRINT_SCHED: c->print_sched = 1; break;
	}
	return 0;
}

#define STR_(x) #x
#define STR(x) STR_(x)

static const struct sdr_opt opts[] = {
	SDR_OPT_SECTION("pipeline:"),
	{.name = "stages", .arg = "S", .fn = on_opt, .id = O_STAGES,
	 .help = "pipeline stages (default 4), placed half/half unless --place"},
	{.name = "place", .arg = "LIST", .fn = on_opt, .id = O_PLACE,
	 .help = "'A,B' stages per DC (contiguous) or 'd0,d1,...' DC of each stage"},
	{.name = "micro", .arg = "M", .fn = on_opt, .id = O_MICRO,
	 .help = "micro-batches per iteration (default 8, max " STR(PIPE_MAX_MICRO) ")"},
	{.name = "tf", .arg = "T", .fn = on_opt, .id = O_TF, .dflt = "12.5ms",
	 .help = "forward time per micro-batch"},
	{.name = "tb", .arg = "T", .fn = on_opt, .id = O_TB, .dflt = "2*tf",
	 .help = "backward time per micro-batch"},
	{.name = "tf-stage", .arg = "LIST", .fn = on_opt, .id = O_TF_STAGE,
	 .help = "per-stage forward times 'T0,T1,...', one per stage (0 = --tf);\n"
		 "the DES, the greedy order and GeoPipe's dN use them"},
	{.name = "tb-stage", .arg = "LIST", .fn = on_opt, .id = O_TB_STAGE,
	 .help = "per-stage backward times, as --tf-stage (0 = --tb)"},
	{.name = "act", .arg = "SIZE", .fn = on_opt, .id = O_ACT, .dflt = "256K",
	 .help = "activation bytes (stage s -> s+1)"},
	{.name = "grad", .arg = "SIZE", .fn = on_opt, .id = O_GRAD, .dflt = "256K",
	 .help = "gradient bytes (stage s+1 -> s)"},
	{.name = "sched", .arg = "NAME", .fn = on_opt, .id = O_SCHED,
	 .help = "gpipe | 1f1b | geopipe | greedy (--simulate: also 'all')"},
	{.name = "comm", .arg = "MODE", .fn = on_opt, .id = O_COMM,
	 .help = "blocking | nonblocking (default: gpipe/1f1b blocking)"},
	{.name = "delta-n", .arg = "N", .fn = on_opt, .id = O_DN,
	 .help = "GeoPipe extra warm-up forwards (default: per stage, enough\n"
		 "1F1B cycles to cover the link: ceil(k*(rtt + act/rate +\n"
		 "grad/rate)/(tf+tb) - 0.05), k = crossings downstream;\n"
		 "capped by --mem-budget and M, non-increasing downstream)"},
	{.name = "mem-budget", .arg = "K", .fn = on_opt, .id = O_MEM,
	 .help = "in-flight activations per stage for geopipe/greedy\n"
		 "(default: greedy S, geopipe M)"},
	SDR_OPT_SECTION("link model (DES; match the daemons' --link / --port-rate):"),
	{.name = "rtt", .arg = "T", .fn = on_opt, .id = O_RTT, .dflt = "25ms",
	 .help = "cross-DC round trip"},
	{.name = "rate", .arg = "R", .fn = on_opt, .id = O_RATE, .dflt = "900m",
	 .help = "cross-DC bottleneck, bit/s of frames"},
	{.name = "mtu", .arg = "N", .fn = on_opt, .id = O_MTU, .dflt = "4096",
	 .help = "payload bytes per packet, for wire bytes"},
	{.name = "frame-overhead", .arg = "N", .fn = on_opt, .id = O_FOH,
	 .dflt = "78, sdr-dpu's data packets",
	 .help = "bytes of headers and ICRC per packet, for wire bytes"},
	SDR_OPT_SECTION("run:"),
	{.name = "simulate", .fn = on_opt, .id = O_SIM, .help = "DES only, no daemons"},
	{.name = "print-schedule", .fn = on_opt, .id = O_PRINT_SCHED,
	 .help = "print the per-stage programs, channels and the DES\n"
		 "prediction as one JSON line, then exit (no daemons)"},
	{.name = "dc", .arg = "0|1", .fn = on_opt, .id = O_DC,
	 .help = "this process' DC; 0 is the TCP server (--server, --port),\n"
		 "1 connects (--connect)"},
	{.name = "server", .arg = "ADDR", .fn = on_opt, .id = O_SERVER,
	 .help = "--dc 0: the address to accept DC 1's connection on"},
	{.name = "port", .arg = "P", .fn = on_opt, .id = O_PORT, .dflt = "18600",
	 .help = "--dc 0: its TCP port"},
	{.name = "connect", .arg = "HOST:PORT", .fn = on_opt, .id = O_CONNECT,
	 .help = "--dc 1: DC 0's address"},
	{.name = "dpu", .arg = "SOCK", .fn = on_opt, .id = O_DPU, .dflt = "/tmp/sdr-dpu.sock",
	 .help = "daemon socket"},
	{.name = "rel", .arg = "SCHEME", .fn = on_opt, .id = O_REL,
	 .help = "none | sr | ec[:rs:K:M | :xor:K:M] (ec alone: rs:32:8;\n"
		 "1 <= K <= 64, 1 <= M <= 32, xor M <= K; also rs:K:M) |\n"
		 "auto (cross-DC QPs; default none)"},
	{.name = "iters", .arg = "N", .fn = on_opt, .id = O_ITERS,
	 .help = "iterations (default 3; the first is excluded from the stats)"},
	{.name = "timeout", .arg = "T", .fn = on_opt, .id = O_TIMEOUT, .dflt = "10s",
	 .help = "longest wait for one message"},
	{.name = "seed", .arg = "N", .fn = on_opt, .id = O_SEED, .dflt = "1",
	 .help = "payload pattern seed"},
	{.name = "poll-us", .arg = "N", .fn = on_opt, .id = O_POLL, .dflt = "100",
	 .help = "sleep between completion polls"},
	SDR_OPT_SECTION("output:"),
	{.name = "json", .fn = on_opt, .id = O_JSON, .help = "one JSON line per schedule / run"},
	{.name = "svg", .arg = "FILE", .fn = on_opt, .id = O_SVG,
	 .help = "Gantt chart (measured and predicted)"},
	{.name = "events", .arg = "FILE", .fn = on_opt, .id = O_EVENTS,
	 .help = "executed events (DC 0: both DCs), one per line"},
	{.name = "check-events", .arg = "FILE", .fn = on_opt, .id = O_CHECK,
	 .help = "verify a log written by --events (needs the same options)"},
	{.name = "quiet", .fn = on_opt, .id = O_QUIET,
	 .help = "no human-readable lines (JSON and errors only)"},
	{.name = "verbose", .fn = on_opt, .id = O_VERBOSE,
	 .help = "one line per finished iteration on stderr"},
	{.name = "help", .short_name = 'h', .help = "this text"},
	SDR_OPT_END,
};

static const struct sdr_opts opt_set = {
	.prog = "sdr-pipe",
	.usage = "usage: sdr-pipe [options]\n",
	.opt = opts,
	.col = 23,
};

int main(int argc, char **argv)
{
	struct pipe_cfg cfg;
	struct pipe_rt_opts ro = {.dpu = "/tmp/sdr-dpu.sock", .port = 18600, .iters = 3,
				  .timeout = 10, .seed = 1, .poll_us = 100};
	int sim = 0, json = 0, quiet = 0, all_sched = 0, tb_set = 0, place_set = 0, stages_set = 0;
	const char *svg = NULL, *evpath = NULL, *check = NULL;
	uint32_t stages = 0;
	struct cli cl;
	int nopt, rc;

	atexit(free_at_exit); /* every return of main() frees what it built */

	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&cl, 0, sizeof(cl));
	pipe_cfg_init(&cl.cfg);
	cl.ro = ro;
	nopt = sdr_opts_parse(&opt_set, argc, argv, &cl);
	if (nopt == SDR_OPTS_HELP)
		return 0;
	if (nopt != argc) {
		if (nopt >= 0)
			sdr_opts_usage(&opt_set, stderr);
		return 2;
	}
	cfg = cl.cfg;
	ro = cl.ro;
	sim = cl.sim, json = cl.json, quiet = cl.quiet, all_sched = cl.all_sched;
	tb_set = cl.tb_set, place_set = cl.place_set, stages_set = cl.stages_set;
	svg = cl.svg, evpath = cl.evpath, check = cl.check;
	stages = cl.stages;
	if (stages_set && place_set && stages != cfg.stages) {
		fprintf(stderr, "sdr-pipe: --stages %u disagrees with --place (%u stages)\n", stages,
			cfg.stages);
		return 2;
	}
	if (stages_set && !place_set) {
		cfg.stages = stages;
		for (uint32_t s = 0; s < stages; s++)
			cfg.dc_of[s] = s >= stages / 2;
	}
	if (!tb_set)
		cfg.tb = 2 * cfg.tf;
	for (int k = 0; k < 2; k++) {
		const char *arg = k ? cl.tb_stage : cl.tf_stage;

		if (arg && parse_stage_times(arg, cfg.stages, k ? cfg.tb_stage : cfg.tf_stage)) {
			fprintf(stderr, "sdr-pipe: bad --%s '%s': want %u times T0,T1,... (s, ms, us; "
					"0 = --%s)\n", k ? "tb-stage" : "tf-stage", arg, cfg.stages,
				k ? "tb" : "tf");
			return 2;
		}
	}
	if (cl.print_sched) {
		if (pipe_cfg_finish(&cfg)) {
			fprintf(stderr, "sdr-pipe: invalid configuration (geopipe and greedy are "
					"non-blocking only)\n");
			return 2;
		}
		if (predict(&cfg, &prog, &pred))
			return 1;
		return pipe_schedule_json(stdout, &cfg, &prog, &pred) ? 1 : 0;
	}
	if (all_sched && !sim) {
		fprintf(stderr, "sdr-pipe: --sched all needs --simulate\n");
		return 2;
	}

	if (sim) {
		for (int k = 0; k < PIPE_SCHED_COUNT; k++) {
			struct pipe_cfg c = cfg;
			struct pipe_metrics m;

			if (all_sched)
				c.sched = (enum pipe_sched)k;
			else if (k != (int)cfg.sched)
				continue;
			if (pipe_cfg_finish(&c)) {
				fprintf(stderr, "sdr-pipe: invalid configuration (geopipe and greedy are non-blocking only)\n");
				return 2;
			}
			if (predict(&c, &prog, &pred))
				return 1;
			pipe_metrics_get(&c, &pred.ev, 0, &m);
			if (json) {
				printf("{\"mode\":\"simulate\",");
				json_cfg(&c);
				printf(",\"pred_iter_ms\":%.3f,\"pred_bubble\":%.4f", m.iter_time * 1e3,
				       m.bubble_all);
				json_stages("pred_bubble_stage", m.bubble, c.stages);
				printf(",\"bytes_cross\":%" PRIu64 ",\"bytes_local\":%" PRIu64 "}\n",
				       m.bytes_cross, m.bytes_local);
			} else if (!quiet) {
				printf("%-8s %-11s S=%u M=%u  iteration %8.2f ms  bubble %5.1f %%  "
				       "cross-DC %" PRIu64 " B  local %" PRIu64 " B\n",
				       pipe_sched_name(c.sched),
				       c.comm == PIPE_COMM_BLOCKING ? "blocking" : "nonblocking", c.stages,
				       c.micro, m.iter_time * 1e3, m.bubble_all * 100, m.bytes_cross,
				       m.bytes_local);
			}
			if (svg && !all_sched && (rc = pipe_svg_write(svg, &c, NULL, 0, &pred, pipe_sched_name(c.sched)))) {
				fprintf(stderr, "sdr-pipe: %s: %s\n", svg, strerror(-rc));
				return 1;
			}
			pipe_des_free(&pred);
			pipe_prog_free(&prog);
		}
		return 0;
	}

	struct pipe_metrics pm, mm;
	struct pipe_events *ev;
	char why[512];

	if (pipe_cfg_finish(&cfg)) {
		fprintf(stderr, "sdr-pipe: invalid configuration (geopipe and greedy are non-blocking only)\n");
		return 2;
	}
	if (predict(&cfg, &prog, &pred))
		return 1;
	pipe_metrics_get(&cfg, &pred.ev, 0, &pm);
	if (check) {
		struct pipe_events *e_ = &checked, e;
		uint32_t iters = 0;
		int partial = 0;

		if ((rc = read_events(check, e_))) {
			fprintf(stderr, "sdr-pipe: %s: %s\n", check, rc == -EINVAL ? "malformed" : strerror(-rc));
			return 1;
		}
		e = *e_;
		for (size_t i = 0; i < e.n; i++)
			if (e.ev[i].iter + 1 > iters)
				iters = e.ev[i].iter + 1;
		for (uint32_t s = 0; s < cfg.stages; s++) {
			int seen = 0;

			for (size_t i = 0; i < e.n && !seen; i++)
				seen = e.ev[i].stage == s;
			partial |= !seen;
		}
		if (pipe_events_check(&cfg, &prog, &e, iters, partial, why, sizeof(why))) {
			printf("dependency check FAILED: %s\n", why);
			return 1;
		}
		printf("dependency check ok: %zu events, %u iterations%s\n", e.n, iters,
		       partial ? " (one DC only)" : "");
		return 0;
	}

	rc = pipe_run(&cfg, &prog, &ro, &local, &all);
	if (rc) {
		fprintf(stderr, "sdr-pipe: run failed: %s\n", strerror(-rc));
		return 1;
	}
	ev = ro.dc == 0 ? &all : &local;
	if (evpath && (rc = write_events(evpath, ev))) {
		fprintf(stderr, "sdr-pipe: %s: %s\n", evpath, strerror(-rc));
		return 1;
	}
	rc = pipe_events_check(&cfg, &prog, ev, ro.iters, ro.dc != 0, why, sizeof(why));
	if (rc) {
		printf("dependency check FAILED: %s\n", why);
		return 1;
	}
	if (ro.dc != 0) {
		if (!quiet)
			printf("dc1: %u iterations, %zu events, every payload verified, dependency check ok "
			       "(local stages)\n", ro.iters, local.n);
		return 0;
	}
	/* stats over iterations 1.. (iteration 0 warms up), or 0 alone */
	uint32_t first = ro.iters > 1 ? 1 : 0, n = ro.iters - first, med_it = first;
	double *t = malloc(n * sizeof(double)), tmin = INFINITY, med;

	if (!t)
		return 1;
	for (uint32_t i = 0; i < n; i++) {
		pipe_metrics_get(&cfg, ev, first + i, &mm);
		t[i] = mm.iter_time;
		if (t[i] < tmin)
			tmin = t[i];
	}
	qsort(t, n, sizeof(double), cmp_d);
	med = t[(n - 1) / 2];
	for (uint32_t i = 0; i < n; i++) {
		pipe_metrics_get(&cfg, ev, first + i, &mm);
		if (mm.iter_time == med)
			med_it = first + i;
	}
	pipe_metrics_get(&cfg, ev, med_it, &mm);
	if (json) {
		printf("{\"mode\":\"run\",");
		json_cfg(&cfg);
		printf(",\"iters\":%u,\"meas_iter_ms\":%.3f,\"meas_iter_min_ms\":%.3f,"
		       "\"meas_bubble\":%.4f",
		       ro.iters, med * 1e3, tmin * 1e3, mm.bubble_all);
		json_stages("meas_bubble_stage", mm.bubble, cfg.stages);
		printf(",\"pred_iter_ms\":%.3f,\"pred_bubble\":%.4f", pm.iter_time * 1e3, pm.bubble_all);
		json_stages("pred_bubble_stage", pm.bubble, cfg.stages);
		printf(",\"meas_over_pred\":%.4f,\"bytes_cross\":%" PRIu64 ",\"bytes_local\":%" PRIu64
		       ",\"payloads_verified\":true,\"deps_ok\":true}\n",
		       med / pm.iter_time, mm.bytes_cross, mm.bytes_local);
	} else if (!quiet) {
		char rel[32];

		printf("sdr-pipe %s (%s), S=%u M=%u, tf %.2f ms tb %.2f ms, act %" PRIu64 " B grad %" PRIu64
		       " B, rtt %.2f ms, rate %.3g bit/s, rel %s\n",
		       pipe_sched_name(cfg.sched),
		       cfg.comm == PIPE_COMM_BLOCKING ? "blocking" : "nonblocking", cfg.stages, cfg.micro,
		       cfg.tf * 1e3, cfg.tb * 1e3, cfg.act_bytes, cfg.grad_bytes, cfg.rtt * 1e3,
		       (double)cfg.rate_bps, pipe_rel_format(&cfg.rel, rel, sizeof(rel)));
		printf("iterations: %u (stats over %u): median %.2f ms, min %.2f ms; predicted %.2f ms "
		       "(measured/predicted %.3f)\n",
		       ro.iters, n, med * 1e3, tmin * 1e3, pm.iter_time * 1e3, med / pm.iter_time);
		printf("bubble: measured %.1f %%, predicted %.1f %%\n", mm.bubble_all * 100,
		       pm.bubble_all * 100);
		for (uint32_t s = 0; s < cfg.stages; s++)
			printf("  stage %u (dc%u): bubble measured %5.1f %% predicted %5.1f %%\n", s,
			       cfg.dc_of[s], mm.bubble[s] * 100, pm.bubble[s] * 100);
		printf("bytes per iteration: cross-DC %" PRIu64 ", local %" PRIu64 "\n", mm.bytes_cross,
		       mm.bytes_local);
		printf("every payload verified, dependency order ok (%zu events)\n", ev->n);
	}
	if (svg && (rc = pipe_svg_write(svg, &cfg, ev, med_it, &pred, pipe_sched_name(cfg.sched)))) {
		fprintf(stderr, "sdr-pipe: %s: %s\n", svg, strerror(-rc));
		return 1;
	}
	free(t);
	pipe_events_free(&local);
	pipe_events_free(&all);
	pipe_des_free(&pred);
	pipe_prog_free(&prog);
	return 0;
}
