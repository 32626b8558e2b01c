/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-pipe's options (host/pipe/, the program's edge above the pipe core and
 * the runtime): the option table and its help text, the handlers of the
 * options that need code, and the checks that need the whole command line
 * (pipe_opts.h). Parsing only: nothing here runs a mode.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipe_opts.h"
#include "sdr_opts.h"
#include "sdr_units.h"

enum {
	O_STAGES = 1,
	O_PLACE,
	O_MICRO,
	O_TF,
	O_TB,
	O_ACT,
	O_GRAD,
	O_SCHED,
	O_COMM,
	O_DN,
	O_MEM,
	O_RTT,
	O_RATE,
	O_MTU,
	O_FOH,
	O_SIM,
	O_DC,
	O_DPU,
	O_SERVER,
	O_PORT,
	O_CONNECT,
	O_REL,
	O_ITERS,
	O_TIMEOUT,
	O_SEED,
	O_POLL,
	O_JSON,
	O_SVG,
	O_EVENTS,
	O_CHECK,
	O_QUIET,
	O_VERBOSE,
	O_TF_STAGE,
	O_TB_STAGE,
	O_PRINT_SCHED,
	O_NET,
	O_NET_TEXT,
	O_PRINT_NET,
	O_LINK_ARGS,
	O_DC_ADDRS,
	O_LOSS,
	O_CHUNK,
	O_POLICY,
	O_STATIC_RATES,
	O_CBA_STEP,
	O_CBA_MIN,
	O_CBA_MAX,
	O_INTRA_LAT,
	O_PRED_ITERS,
	O_LOSS_DRAWS,
	O_CLOCK_SHIFT,
	O_CTL_LOG,
	O_SHIFT_MARGIN,
	O_PATHS,
};

/* seconds; "12.5ms", "250us", "0.5" (common/sdr_units.c) */
static int parse_time(const char *s, double *out)
{
	return sdr_parse_duration(s, SDR_TIME_S, SDR_TIME_S, out, NULL) ? -1 : 0;
}

/* "R0,R1,..." rates, one per cross-DC flow, into @p pc. */
static int parse_static_rates(const char *s, uint32_t n, struct pipe_policy_cfg *pc)
{
	char buf[4096], *save = NULL, *tok;

	pc->nstatic = 0;
	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save))
		if (pc->nstatic == n || pc->nstatic == PIPE_MAX_FLOWS ||
		    sdr_parse_rate(tok, &pc->static_bps[pc->nstatic++]))
			return -1;
	return pc->nstatic == n ? 0 : -1;
}

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

/* pipeline: the stages, their times and sizes, the schedule. */
static int on_pipe_opt(const struct sdr_opt *o, const char *arg, void *ctx)
{
	struct cli *c = ctx;
	uint64_t v;

	switch (o->id) {
	case O_STAGES: c->stages_set = 1; break;
	case O_PLACE:
		if (pipe_place_parse(arg, &c->cfg))
			return -1;
		c->place_set = 1;
		break;
	case O_TB: c->tb_set = 1; break;
	case O_SCHED:
		if (strcmp(arg, "all") == 0)
			c->all_sched = 1;
		else if (pipe_sched_parse(arg, &c->cfg.sched))
			return -1;
		break;
	case O_DN:
		c->dn_search = 0;
		if (strcmp(arg, "auto") == 0)
			c->cfg.delta_n = UINT32_MAX;
		else if (strcmp(arg, "search") == 0)
			c->dn_search = 1;
		else if (sdr_parse_u64(arg, &v, 0) || v > PIPE_MAX_MICRO)
			return -1;
		else
			c->cfg.delta_n = (uint32_t)v;
		break;
	}
	return 0;
}

/* link model: the network between the DCs as the DES sees it. */
static int on_link_opt(const struct sdr_opt *o, const char *arg, void *ctx)
{
	struct cli *c = ctx;

	switch (o->id) {
	case O_NET:
	case O_NET_TEXT:
		if (c->net_file || c->net_text)
			return -1; /* one description */
		*(o->id == O_NET ? &c->net_file : &c->net_text) = arg;
		break;
	case O_LOSS: {
		char *e;

		c->cfg.loss = strtod(arg, &e);
		if (e == arg || *e || !(c->cfg.loss >= 0 && c->cfg.loss < 1))
			return -1;
		break;
	}
	}
	return 0;
}

/* rates of the cross-DC QPs: the policy and its parameters. */
static int on_rate_opt(const struct sdr_opt *o, const char *arg, void *ctx)
{
	struct cli *c = ctx;

	switch (o->id) {
	case O_POLICY:
		if (pipe_policy_parse(arg, &c->pol.policy))
			return -1;
		break;
	}
	return 0;
}

/* run: and output: the mode, this DC's process, what it writes. */
static int on_run_opt(const struct sdr_opt *o, const char *arg, void *ctx)
{
	struct cli *c = ctx;
	uint64_t v;

	switch (o->id) {
	case O_PORT:
		if (sdr_parse_u64(arg, &v, 0) || v == 0 || v > 65535)
			return -1;
		c->ro.port = (uint16_t)v;
		break;
	case O_CLOCK_SHIFT: {
		double sh;
		int neg = arg[0] == '-';

		if (parse_time(arg + neg, &sh) || sh > 3600)
			return -1;
		c->ro.clock_shift = neg ? -sh : sh;
		break;
	}
	case O_REL:
		if (pipe_rel_parse(arg, &c->cfg.rel))
			return -1;
		break;
	}
	return 0;
}

/* --comm */
static const struct sdr_opt_name comm_words[] = {
	{"blocking", PIPE_COMM_BLOCKING},
	{"nonblocking", PIPE_COMM_NONBLOCKING},
	SDR_OPT_NAMES_END,
};

#define STR_(x) #x
#define STR(x) STR_(x)
#define PIPE_MAX_DC_LAST 5 /* PIPE_MAX_DC - 1, for the help text */
_Static_assert(PIPE_MAX_DC_LAST == PIPE_MAX_DC - 1, "help text");

static const struct sdr_opt opts[] = {
	SDR_OPT_SECTION("pipeline:"),
	{.name = "stages",
	 .arg = "S",
	 .fn = on_pipe_opt,
	 .id = O_STAGES,
	 .kind = SDR_OPT_U32,
	 .min = 2,
	 .max = PIPE_MAX_STAGES,
	 .off = offsetof(struct cli, stages),
	 .help = "pipeline stages (default 4), placed half/half unless --place"},
	{.name = "place",
	 .arg = "LIST",
	 .fn = on_pipe_opt,
	 .id = O_PLACE,
	 .help = "'A,B' stages in DC 0 and DC 1 (contiguous), or 'd0,d1,...'\n"
		 "the DC of each stage (DCs 0.." STR(
			 PIPE_MAX_DC_LAST) ", every DC up to the\n"
					   "highest used hosts a stage)"},
	{.name = "micro",
	 .arg = "M",
	 .id = O_MICRO,
	 .kind = SDR_OPT_U32,
	 .min = 1,
	 .max = PIPE_MAX_MICRO,
	 .off = offsetof(struct cli, cfg.micro),
	 .help = "micro-batches per iteration (default 8, max " STR(PIPE_MAX_MICRO) ")"},
	{.name = "tf",
	 .arg = "T",
	 .id = O_TF,
	 .kind = SDR_OPT_DURATION,
	 .flags = SDR_OPTF_GT_MIN,
	 .off = offsetof(struct cli, cfg.tf),
	 .dflt = "12.5ms",
	 .help = "forward time per micro-batch"},
	{.name = "tb",
	 .arg = "T",
	 .fn = on_pipe_opt,
	 .id = O_TB,
	 .kind = SDR_OPT_DURATION,
	 .flags = SDR_OPTF_GT_MIN,
	 .off = offsetof(struct cli, cfg.tb),
	 .dflt = "2*tf",
	 .help = "backward time per micro-batch"},
	{.name = "tf-stage",
	 .arg = "LIST",
	 .id = O_TF_STAGE,
	 .kind = SDR_OPT_STRING,
	 .off = offsetof(struct cli, tf_stage),
	 .help = "per-stage forward times 'T0,T1,...', one per stage (0 = --tf);\n"
		 "the DES, the greedy order and GeoPipe's dN use them"},
	{.name = "tb-stage",
	 .arg = "LIST",
	 .id = O_TB_STAGE,
	 .kind = SDR_OPT_STRING,
	 .off = offsetof(struct cli, tb_stage),
	 .help = "per-stage backward times, as --tf-stage (0 = --tb)"},
	{.name = "act",
	 .arg = "SIZE",
	 .id = O_ACT,
	 .kind = SDR_OPT_SIZE,
	 .off = offsetof(struct cli, cfg.act_bytes),
	 .dflt = "256K",
	 .help = "activation bytes (stage s -> s+1)"},
	{.name = "grad",
	 .arg = "SIZE",
	 .id = O_GRAD,
	 .kind = SDR_OPT_SIZE,
	 .off = offsetof(struct cli, cfg.grad_bytes),
	 .dflt = "256K",
	 .help = "gradient bytes (stage s+1 -> s)"},
	{.name = "sched",
	 .arg = "NAME",
	 .fn = on_pipe_opt,
	 .id = O_SCHED,
	 .help = "gpipe | 1f1b | geopipe | greedy (--simulate: also 'all')"},
	{.name = "comm",
	 .arg = "MODE",
	 .id = O_COMM,
	 .kind = SDR_OPT_ENUM,
	 .names = comm_words,
	 .off = offsetof(struct cli, cfg.comm),
	 .help = "blocking | nonblocking (default: gpipe/1f1b blocking)"},
	{.name = "delta-n",
	 .arg = "N",
	 .fn = on_pipe_opt,
	 .id = O_DN,
	 .dflt = "auto",
	 .help = "GeoPipe extra warm-up forwards: N for every stage, or\n"
		 "auto: per stage, enough 1F1B cycles to cover the link:\n"
		 "ceil(k*(rtt + act/rate + grad/rate)/(tf+tb) - 0.05), k =\n"
		 "crossings downstream; or search: per stage, the shortest\n"
		 "DES iteration with the fewest extra forwards (prints both\n"
		 "and the iteration time each gives); always capped by\n"
		 "--mem-budget and M, non-increasing downstream"},
	{.name = "mem-budget",
	 .arg = "K",
	 .id = O_MEM,
	 .kind = SDR_OPT_U32,
	 .min = 1,
	 .max = PIPE_MAX_MICRO,
	 .off = offsetof(struct cli, cfg.mem_budget),
	 .help = "in-flight activations per stage for geopipe/greedy\n"
		 "(default: greedy S, geopipe M)"},
	SDR_OPT_SECTION("link model (DES; match the daemons' --link / --port-rate):"),
	{.name = "rtt",
	 .arg = "T",
	 .id = O_RTT,
	 .kind = SDR_OPT_DURATION,
	 .off = offsetof(struct cli, cfg.rtt),
	 .dflt = "25ms",
	 .help = "cross-DC round trip (without --net: every DC pair)"},
	{.name = "rate",
	 .arg = "R",
	 .id = O_RATE,
	 .kind = SDR_OPT_RATE,
	 .min = 1,
	 .off = offsetof(struct cli, cfg.rate_bps),
	 .dflt = "900m",
	 .help = "cross-DC bottleneck, bit/s of frames (without --net);\n"
		 "with --net the rate of the unpaced QPs between DCs that\n"
		 "no link, or a link without rate=, carries"},
	{.name = "net",
	 .arg = "FILE",
	 .fn = on_link_opt,
	 .id = O_NET,
	 .help = "network description: directed links between DCs\n"
		 "('link NAME to=D from=A[,B..] delay=.. rate=.. buffer=..\n"
		 "loss=..', docs/pipeline.md \"Multi-DC model\"); several paths:\n"
		 "'KEYS | KEYS' or paths=N (--paths); replaces --rtt/--rate\n"
		 "for the pairs it names"},
	{.name = "net-text",
	 .arg = "TEXT",
	 .fn = on_link_opt,
	 .id = O_NET_TEXT,
	 .help = "the same description inline, items separated by ';'"},
	{.name = "loss",
	 .arg = "P",
	 .fn = on_link_opt,
	 .id = O_LOSS,
	 .dflt = "0",
	 .help = "per-packet loss of every cross-DC link (without --net;\n"
		 "with it, each link's loss=): the DES adds the completion-time\n"
		 "model's mean loss recovery of --rel's scheme"},
	{.name = "chunk",
	 .arg = "SIZE",
	 .id = O_CHUNK,
	 .kind = SDR_OPT_SIZE32,
	 .min = 1,
	 .max = 1u << 30,
	 .off = offsetof(struct cli, cfg.chunk_bytes),
	 .dflt = "64K",
	 .help = "SDR chunk for that model (the daemons' --chunk-pkts x mtu)"},
	{.name = "loss-draws",
	 .arg = "N",
	 .id = O_LOSS_DRAWS,
	 .kind = SDR_OPT_U32,
	 .max = 10000,
	 .off = offsetof(struct cli, loss_draws),
	 .dflt = "0",
	 .help = "--simulate, --policy none: also N DES runs with each message's\n"
		 "loss recovery drawn from the model's distribution instead of\n"
		 "its mean (seeds 1..N); prints their mean, min and max"},
	{.name = "mtu",
	 .arg = "N",
	 .id = O_MTU,
	 .kind = SDR_OPT_U32,
	 .min = 256,
	 .max = 9000,
	 .off = offsetof(struct cli, cfg.mtu),
	 .dflt = "4096",
	 .help = "payload bytes per packet, for wire bytes"},
	{.name = "frame-overhead",
	 .arg = "N",
	 .id = O_FOH,
	 .kind = SDR_OPT_U32,
	 .max = 1024,
	 .off = offsetof(struct cli, cfg.frame_overhead),
	 .dflt = "78, sdr-dpu's data packets",
	 .help = "bytes of headers and ICRC per packet, for wire bytes"},
	SDR_OPT_SECTION("rates of the cross-DC QPs: the DES and, in a run, DC 0's controller, "
			"which\nsets them every iteration (docs/pipeline.md \"Multi-DC model\", "
			"\"Multi-DC rig and\nruntime\"):"),
	{.name = "policy",
	 .arg = "NAME",
	 .fn = on_rate_opt,
	 .id = O_POLICY,
	 .dflt = "none",
	 .help = "none (unpaced) | equal (each link's rate shared by the QPs\n"
		 "crossing it) | static (--static-rates) | cba (CB QPs up,\n"
		 "refused ones down, from the previous iteration's events) |\n"
		 "cba-shift (CB QPs up, funded by the QPs on the same link\n"
		 "that lose less than they gain, at most one step each;\n"
		 "refused ones keep their rate; moves after which the\n"
		 "iteration got slower are undone)"},
	{.name = "static-rates",
	 .arg = "LIST",
	 .id = O_STATIC_RATES,
	 .kind = SDR_OPT_STRING,
	 .off = offsetof(struct cli, static_rates),
	 .help = "static: 'R0,R1,...' one rate per cross-DC channel, in\n"
		 "channel order (activations of boundary b = 2b, gradients\n"
		 "2b+1)"},
	{.name = "cba-step",
	 .arg = "R",
	 .id = O_CBA_STEP,
	 .kind = SDR_OPT_RATE,
	 .min = 1,
	 .off = offsetof(struct cli, pol.step_bps),
	 .help = "cba, cba-shift: step of the rule (default: a quarter of\n"
		 "the QP's equal share)"},
	{.name = "cba-min",
	 .arg = "R",
	 .id = O_CBA_MIN,
	 .kind = SDR_OPT_RATE,
	 .min = 1,
	 .off = offsetof(struct cli, pol.min_bps),
	 .help = "cba, cba-shift: lowest rate (default: a quarter of the\n"
		 "equal share)"},
	{.name = "cba-max",
	 .arg = "R",
	 .id = O_CBA_MAX,
	 .kind = SDR_OPT_RATE,
	 .min = 1,
	 .off = offsetof(struct cli, pol.max_bps),
	 .help = "cba, cba-shift: highest rate (default: the QP's link rate)"},
	{.name = "shift-margin",
	 .arg = "T",
	 .id = O_SHIFT_MARGIN,
	 .kind = SDR_OPT_DURATION,
	 .fmax = 10,
	 .off = offsetof(struct cli, pol.shift_margin),
	 .dflt = "0",
	 .help = "cba-shift: slack a donor QP keeps: it gives rate only while\n"
		 "its transfers, as the network description times them at the\n"
		 "lower rate, still arrive T before their consumers need them"},
	{.name = "intra-lat",
	 .arg = "T",
	 .id = O_INTRA_LAT,
	 .kind = SDR_OPT_DURATION,
	 .fmax = 10,
	 .off = offsetof(struct cli, pol.intra_lat),
	 .dflt = "0",
	 .help = "cba labels: intra-DC latency; a transfer is CB when its\n"
		 "consumer waited and started later than producer end + T"},
	{.name = "pred-iters",
	 .arg = "N",
	 .id = O_PRED_ITERS,
	 .kind = SDR_OPT_U32,
	 .min = 1,
	 .max = PRED_ITERS_MAX,
	 .off = offsetof(struct cli, pred_iters),
	 .dflt = "1",
	 .help = "--simulate: iterations to predict, each with the rates the\n"
		 "policy decided from the previous one (max " STR(PRED_ITERS_MAX) ")"},
	SDR_OPT_SECTION("run:"),
	{.name = "simulate",
	 .id = O_SIM,
	 .kind = SDR_OPT_BOOL,
	 .off = offsetof(struct cli, sim),
	 .help = "DES only, no daemons"},
	{.name = "print-schedule",
	 .id = O_PRINT_SCHED,
	 .kind = SDR_OPT_BOOL,
	 .off = offsetof(struct cli, print_sched),
	 .help = "print the per-stage programs, channels and the DES\n"
		 "prediction as one JSON line, then exit (no daemons)"},
	{.name = "print-net",
	 .id = O_PRINT_NET,
	 .kind = SDR_OPT_BOOL,
	 .off = offsetof(struct cli, print_net),
	 .help = "print the network description in canonical form (the\n"
		 "default network without --net), then exit"},
	{.name = "print-link-args",
	 .arg = "DC",
	 .id = O_LINK_ARGS,
	 .kind = SDR_OPT_INT,
	 .max = PIPE_MAX_DC - 1,
	 .off = offsetof(struct cli, link_args_dc),
	 .help = "print the per-peer link profiles of DC's receiving\n"
		 "daemon, one 'NAME:IP[+IP..]:SPEC' per line (the values of\n"
		 "sdr-dpu --link-peer), then exit; needs --dc-addrs"},
	{.name = "dc-addrs",
	 .arg = "LIST",
	 .id = O_DC_ADDRS,
	 .kind = SDR_OPT_STRING,
	 .off = offsetof(struct cli, dc_addrs),
	 .help = "IPv4 address of each DC's daemon, 'A0,A1,...'"},
	{.name = "dc",
	 .arg = "K",
	 .id = O_DC,
	 .kind = SDR_OPT_U32,
	 .max = PIPE_MAX_DC - 1,
	 .off = offsetof(struct cli, ro.dc),
	 .dflt = "0",
	 .help = "this process' DC, 0.." STR(
		 PIPE_MAX_DC_LAST) " (one process per DC of the\n"
				   "placement); 0 is the coordinator (--server, --port), the\n"
				   "others connect to it (--connect)"},
	{.name = "server",
	 .arg = "ADDR",
	 .id = O_SERVER,
	 .kind = SDR_OPT_STRING,
	 .off = offsetof(struct cli, ro.bind),
	 .help = "--dc 0: the address to accept the other DCs' connections on"},
	{.name = "port",
	 .arg = "P",
	 .fn = on_run_opt,
	 .id = O_PORT,
	 .dflt = "18600",
	 .help = "--dc 0: its TCP port"},
	{.name = "connect",
	 .arg = "HOST:PORT",
	 .id = O_CONNECT,
	 .kind = SDR_OPT_STRING,
	 .off = offsetof(struct cli, ro.connect),
	 .help = "--dc 1.." STR(PIPE_MAX_DC_LAST) ": DC 0's address"},
	{.name = "ctl-log",
	 .arg = "FILE",
	 .id = O_CTL_LOG,
	 .kind = SDR_OPT_STRING,
	 .off = offsetof(struct cli, ctl_log),
	 .help = "--dc 0: the controller's log, one JSON line per iteration\n"
		 "(its rates, refused requests, labels and waits per\n"
		 "cross-DC transfer, iteration time, bubble)"},
	{.name = "clock-shift",
	 .arg = "T",
	 .fn = on_run_opt,
	 .id = O_CLOCK_SHIFT,
	 .dflt = "0",
	 .help = "add T (may be negative) to this process' clock as the\n"
		 "bootstrap sees it: DC 0 must measure it as the clock offset\n"
		 "(tests)"},
	{.name = "dpu",
	 .arg = "SOCK",
	 .id = O_DPU,
	 .kind = SDR_OPT_STRING,
	 .off = offsetof(struct cli, ro.dpu),
	 .dflt = "/tmp/sdr-dpu.sock",
	 .help = "daemon socket"},
	{.name = "rel",
	 .arg = "SCHEME",
	 .fn = on_run_opt,
	 .id = O_REL,
	 .help = "none | sr | ec[:rs:K:M | :xor:K:M] (ec alone: rs:32:8;\n"
		 "1 <= K <= 64, 1 <= M <= 32, xor M <= K; also rs:K:M) |\n"
		 "auto (cross-DC QPs; default none)"},
	{.name = "paths",
	 .arg = "P",
	 .id = O_PATHS,
	 .kind = SDR_OPT_U32,
	 .max = PIPE_PATHS_MAX,
	 .off = offsetof(struct cli, cfg.paths),
	 .dflt = "0",
	 .help = "UDP source ports each cross-DC QP sprays over (the QP\n"
		 "attribute paths, docs/multipath.md; 0 = the daemon's --paths;\n"
		 "SR, EC and AUTO QPs); the DES spreads a QP of P >= 2 over\n"
		 "its link's paths (--net: 'A | B' or paths=N)"},
	{.name = "iters",
	 .arg = "N",
	 .id = O_ITERS,
	 .kind = SDR_OPT_U32,
	 .min = 1,
	 .max = 10000,
	 .off = offsetof(struct cli, ro.iters),
	 .help = "iterations (default 3; the first is excluded from the stats)"},
	{.name = "timeout",
	 .arg = "T",
	 .id = O_TIMEOUT,
	 .kind = SDR_OPT_DURATION,
	 .fmax = 3600,
	 .flags = SDR_OPTF_GT_MIN,
	 .off = offsetof(struct cli, ro.timeout),
	 .dflt = "10s",
	 .help = "longest wait for one message"},
	{.name = "seed",
	 .arg = "N",
	 .id = O_SEED,
	 .kind = SDR_OPT_U64,
	 .off = offsetof(struct cli, ro.seed),
	 .dflt = "1",
	 .help = "payload pattern seed"},
	{.name = "poll-us",
	 .arg = "N",
	 .id = O_POLL,
	 .kind = SDR_OPT_U32,
	 .min = 1,
	 .max = 100000,
	 .off = offsetof(struct cli, ro.poll_us),
	 .dflt = "100",
	 .help = "sleep between completion polls"},
	SDR_OPT_SECTION("output:"),
	{.name = "json",
	 .id = O_JSON,
	 .kind = SDR_OPT_BOOL,
	 .off = offsetof(struct cli, json),
	 .help = "one JSON line per schedule / run"},
	{.name = "svg",
	 .arg = "FILE",
	 .id = O_SVG,
	 .kind = SDR_OPT_STRING,
	 .off = offsetof(struct cli, svg),
	 .help = "Gantt chart (measured and predicted)"},
	{.name = "events",
	 .arg = "FILE",
	 .id = O_EVENTS,
	 .kind = SDR_OPT_STRING,
	 .off = offsetof(struct cli, evpath),
	 .help = "executed events (DC 0: every DC's), one per line"},
	{.name = "check-events",
	 .arg = "FILE",
	 .id = O_CHECK,
	 .kind = SDR_OPT_STRING,
	 .off = offsetof(struct cli, check),
	 .help = "verify a log written by --events (needs the same options)"},
	{.name = "quiet",
	 .id = O_QUIET,
	 .kind = SDR_OPT_BOOL,
	 .off = offsetof(struct cli, quiet),
	 .help = "no human-readable lines (JSON and errors only)"},
	{.name = "verbose",
	 .id = O_VERBOSE,
	 .kind = SDR_OPT_BOOL,
	 .off = offsetof(struct cli, ro.verbose),
	 .help = "on stderr: one line per finished iteration (with the wall-clock time), "
		 "the clock offsets, and each cross-DC QP's number and its peer's"},
	{.name = "help", .short_name = 'h', .help = "this text"},
	SDR_OPT_END,
};

static const struct sdr_opts opt_set = {
	.prog = "sdr-pipe",
	.usage = "usage: sdr-pipe [options]\n",
	.opt = opts,
	.col = 23,
};

/* The command line into @p cl. @return -1 to go on, else the exit code. */
int cli_parse(int argc, char **argv, struct cli *cl)
{
	struct pipe_rt_opts ro = {.dpu = "/tmp/sdr-dpu.sock",
				  .port = 18600,
				  .iters = 3,
				  .timeout = 10,
				  .seed = 1,
				  .poll_us = 100};
	int nopt;

	memset(cl, 0, sizeof(*cl));
	pipe_cfg_init(&cl->cfg);
	cl->ro = ro;
	cl->link_args_dc = -1;
	pipe_policy_cfg_init(&cl->pol);
	cl->pred_iters = 1;
	nopt = sdr_opts_parse(&opt_set, argc, argv, cl);
	if (nopt == SDR_OPTS_HELP)
		return 0;
	if (nopt != argc) {
		if (nopt >= 0)
			sdr_opts_usage(&opt_set, stderr);
		return 2;
	}
	return -1;
}

/* The pipeline of the options: --stages against --place, --tb's default,
 * the per-stage times. @return -1 to go on, else the exit code. */
int cli_pipeline(const struct cli *cl, struct pipe_cfg *cfg)
{
	if (cl->stages_set && cl->place_set && cl->stages != cfg->stages) {
		fprintf(stderr, "sdr-pipe: --stages %u disagrees with --place (%u stages)\n",
			cl->stages, cfg->stages);
		return 2;
	}
	if (cl->stages_set && !cl->place_set) {
		cfg->stages = cl->stages;
		for (uint32_t s = 0; s < cl->stages; s++)
			cfg->dc_of[s] = s >= cl->stages / 2;
	}
	if (!cl->tb_set)
		cfg->tb = 2 * cfg->tf;
	for (int k = 0; k < 2; k++) {
		const char *arg = k ? cl->tb_stage : cl->tf_stage;

		if (arg && parse_stage_times(arg, cfg->stages, k ? cfg->tb_stage : cfg->tf_stage)) {
			fprintf(stderr,
				"sdr-pipe: bad --%s '%s': want %u times T0,T1,... (s, ms, us; "
				"0 = --%s)\n",
				k ? "tb-stage" : "tf-stage", arg, cfg->stages, k ? "tb" : "tf");
			return 2;
		}
	}
	return -1;
}

/* --policy static and --static-rates (one rate per flow, known once the
 * configuration is), then the options that need --simulate.
 * @return -1 to go on, else the exit code. */
int cli_policy(struct cli *cl, const struct pipe_cfg *cfg)
{
	if (cl->pol.policy == PIPE_POLICY_STATIC || cl->static_rates) {
		struct pipe_net tmp;
		struct pipe_flows fl;
		struct pipe_cfg c = *cfg;

		if (pipe_cfg_finish(&c)) {
			fprintf(stderr, "sdr-pipe: invalid configuration\n");
			return 2;
		}
		pipe_flows_get(&c, pipe_net_of(&c, &tmp), &fl);
		if (cl->pol.policy != PIPE_POLICY_STATIC || !cl->static_rates ||
		    parse_static_rates(cl->static_rates, fl.n, &cl->pol)) {
			fprintf(stderr,
				"sdr-pipe: --policy static takes --static-rates R0,R1,...: one "
				"rate per cross-DC channel, %u here\n",
				fl.n);
			return 2;
		}
	}
	if (cl->loss_draws && (!cl->sim || cl->pol.policy != PIPE_POLICY_NONE)) {
		fprintf(stderr, "sdr-pipe: --loss-draws needs --simulate and --policy none\n");
		return 2;
	}
	if (cl->pred_iters > 1 && !cl->sim) {
		fprintf(stderr, "sdr-pipe: --pred-iters needs --simulate\n");
		return 2;
	}
	return -1;
}
