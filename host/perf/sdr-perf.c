/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-perf: testpmd / ib_write_bw style benchmark of sdr-dpu (docs/benchmarks.md): one
 * host process drives both ends through libsdr, on one clock. This file: main, the signals
 * and the bw / lat mode; the others in host/perf/ are one concern each (perf.h lists them):
 * options, rig, daemons' argv, telemetry, engine, measure, report, codec, sweep. Nothing
 * here is called from those files: calls run from main down.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf.h"

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

static int run_one_mode(void)
{
	struct rig rig;
	struct run_params p;
	struct run_result r;

	if (rig_start(&rig, o.link, o.size)) {
		rig_stop(&rig);
		return 1;
	}
	fill_params(&p, o.mode, o.size, o.rel, o.rel_ec);
	run_engine(&rig, &p, &r);
	print_run(&rig, &p, &r);
	rig_stop(&rig);
	g_rig = NULL;
	return r.ok == 0 || g_stop;
}

int main(int argc, char **argv)
{
	struct sigaction sa = {.sa_handler = on_signal};

	if (parse_opts(argc, argv))
		return 2;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	atexit(cleanup_at_exit);
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (!strcmp(o.mode, "codec"))
		return run_codec();
	if (!strcmp(o.mode, "sweep"))
		return run_sweep();
	if (!strcmp(o.mode, "flows"))
		return run_flows();
	return run_one_mode();
}
