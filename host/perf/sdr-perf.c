/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-perf: testpmd / ib_write_bw style benchmark of sdr-dpu (docs/benchmarks.md): one
 * host process drives both ends through libsdr, on one clock. This file: main, the signals
 * and the bw / lat mode; the others in host/perf/ are one concern each (perf.h lists them):
 * options, rig, daemons' argv, telemetry, engine, measure, report, codec, sweep.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf.h"

struct opts o;
volatile sig_atomic_t g_stop;

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

void fill_params(struct run_params *p, const char *mode, uint64_t size, int rel, uint16_t ec)
{
	int lat = !strcmp(mode, "lat");
	memset(p, 0, sizeof(*p));
	p->mode = mode;
	p->size = size;
	p->rel = rel;
	p->ec = rel == SDR_REL_EC ? ec : 0;
	p->window = o.window_set ? o.window : lat ? 1 : 64;
	p->iters = o.iters_set ? o.iters : lat ? 200 : 1000;
	p->warmup = o.warmup_set ? o.warmup : (p->iters / 10 ? p->iters / 10 : 1);
	p->duration = o.duration;
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
	return run_one_mode();
}
