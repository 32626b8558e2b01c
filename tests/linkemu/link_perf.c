/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-link-perf: cost per frame of the link emulator's decision core
 * (sdr_link_decide) for a few option strings. A benchmark: it prints, it never
 * fails on a number. Usage: sdr-link-perf [FRAMES] [SPEC...]
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "sdr_link.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	static const char *const dflt[] = {
		"",
		"delay=12.5ms",
		"delay=12.5ms,jitter=0.2ms,rate=100gbit,buffer=4MB,loss=1e-3",
		("delay=12.5ms,jitter=0.2ms,rate=100gbit,buffer=4MB,loss=1e-3,ge=1e-4:0.3,"
		 "reorder=1e-3,dup=1e-3,corrupt=1e-4:4"),
	};
	unsigned long frames = argc > 1 ? strtoul(argv[1], NULL, 0) : 2000000;
	const char *const *specs = argc > 2 ? (const char *const *)&argv[2] : dflt;
	int n_specs = argc > 2 ? argc - 2 : (int)(sizeof(dflt) / sizeof(dflt[0]));

	if (frames == 0)
		frames = 1;
	printf("%-100s %12s %14s\n", "spec", "ns/frame", "Mframes/s");
	for (int i = 0; i < n_specs; i++) {
		struct sdr_link_cfg cfg;
		struct sdr_link l;
		struct sdr_link_verdict v;
		char err[256];
		uint64_t sink = 0;
		double t0, dt;

		if (sdr_link_parse(specs[i], &cfg, err, sizeof(err)) != 0 ||
		    sdr_link_init(&l, &cfg) != 0) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
		t0 = now_s();
		for (unsigned long k = 0; k < frames; k++) {
			/* 1500 B frames arriving at 100 Gbit/s: 120 ns apart */
			sdr_link_decide(&l, k * 120, 1500, &v);
			sink += v.depart_ns;
		}
		dt = now_s() - t0;
		printf("%-100s %12.1f %14.2f\n", specs[i][0] ? specs[i] : "(perfect link)",
		       dt * 1e9 / (double)frames, (double)frames / dt / 1e6);
		if (sink == 42)
			puts("");
	}
	return 0;
}
