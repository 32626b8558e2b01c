/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-pipe's command line (host/pipe/, the program's edge above the pipe
 * core and the runtime): what the options fill in, and the steps that turn
 * them into a configuration (pipe_opts.c). sdr_pipe.c's main runs them.
 */
#ifndef PIPE_OPTS_H
#define PIPE_OPTS_H

#include <stdint.h>

#include "pipe.h"
#include "pipe_cba.h"
#include "pipe_run.h"

/* Most iterations --pred-iters predicts. */
#define PRED_ITERS_MAX 1000

/* What the command line says. */
struct cli {
	struct pipe_cfg cfg;
	struct pipe_rt_opts ro;
	int sim, json, quiet, all_sched, tb_set, place_set, stages_set;
	const char *svg, *evpath, *check;
	const char *tf_stage, *tb_stage; /* per-stage times, parsed once S is known */
	int print_sched;
	uint32_t stages;
	const char *net_file, *net_text; /* --net / --net-text */
	int print_net;
	int link_args_dc;           /* --print-link-args DC, -1 = not asked */
	const char *dc_addrs;       /* --dc-addrs A0,A1,... */
	struct pipe_policy_cfg pol; /* --policy and its parameters */
	const char *static_rates;   /* parsed once the flows are known */
	uint32_t pred_iters;        /* --pred-iters */
	int dn_search;              /* --delta-n search */
	uint32_t loss_draws;        /* --loss-draws */
	const char *ctl_log;        /* --ctl-log FILE */
};

/* The command line into @p cl. @return -1 to go on, else the exit code. */
int cli_parse(int argc, char **argv, struct cli *cl);
/* The pipeline of the options: --stages against --place, --tb's default,
 * the per-stage times. @return -1 to go on, else the exit code. */
int cli_pipeline(const struct cli *cl, struct pipe_cfg *cfg);
/* --policy static and --static-rates (one rate per flow, known once the
 * configuration is), then the options that need --simulate.
 * @return -1 to go on, else the exit code. */
int cli_policy(struct cli *cl, const struct pipe_cfg *cfg);

#endif
