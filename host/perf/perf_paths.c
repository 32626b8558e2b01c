/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-perf --path-trace SEC: during a bw or lat run, every SEC, the sending
 * side's frames per path (telemetry /sdr/qps: path<K>_frames and
 * path<K>_active of its QPs, summed over them; docs/multipath.md) and the
 * receiving side's link emulator per lane (/sdr/link,INST,LANE: delivered),
 * printed at the end as one JSON line {"mode":"paths",...} that
 * host/perf/paths_plot.py charts. Host program, beside the engine
 * (perf_engine.c), above perf_telemetry.c.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf.h"

#define PT_SAMPLES 4096
#define PT_PATHS 16 /* SDR_PATHS_MAX */
#define PT_LANES 16
#define PT_ANSWER (256 * 1024)

static struct {
	int on;
	double t0, next;
	unsigned n, npaths, nlanes;
	double t[PT_SAMPLES];
	double frames[PT_SAMPLES][PT_PATHS];
	unsigned char active[PT_SAMPLES][PT_PATHS];
	double lane[PT_SAMPLES][PT_LANES];
	char lane_name[PT_LANES][48];
} pt;

static char answer[PT_ANSWER];

/* Telemetry of side @p b (0: the sender, 1: the receiver) into answer */
static int side_query(const struct rig *rig, int b, const char *cmd)
{
	return perf_tel_side(rig, b, cmd, NULL, answer, sizeof(answer));
}

/* The receiver's emulator lane @p l into answer */
static int lane_query(const struct rig *rig, unsigned l)
{
	char more[16];

	snprintf(more, sizeof(more), ",%u", l);
	return perf_tel_side(rig, 1, "/sdr/link", more, answer, sizeof(answer));
}

/* Sum of every "key": number in the answer (the QPs' values). */
static double sum_key(const char *key, int *found)
{
	char k[48];
	double s = 0;

	snprintf(k, sizeof(k), "\"%s\":", key);
	*found = 0;
	for (const char *p = strstr(answer, k); p; p = strstr(p + 1, k)) {
		s += strtod(p + strlen(k), NULL);
		(*found)++;
	}
	return s;
}

void path_trace_start(const struct rig *rig, double now)
{
	memset(&pt, 0, sizeof(pt));
	if (!(o.path_trace > 0))
		return;
	pt.on = 1;
	pt.t0 = pt.next = now;
	/* the receiving side's lanes and their names (NAME of NAME:...) */
	if (side_query(rig, 1, "/sdr/link") > 0) {
		double n = perf_tel_num(answer, "lanes");

		pt.nlanes = isnan(n) ? 0 : n > PT_LANES ? PT_LANES : (unsigned)n;
	}
	for (unsigned l = 0; l < pt.nlanes; l++) {
		const char *p;

		if (lane_query(rig, l) < 0 || !(p = strstr(answer, "\"lane\":\"")))
			snprintf(pt.lane_name[l], sizeof(pt.lane_name[l]), "lane%u", l);
		else
			snprintf(pt.lane_name[l], sizeof(pt.lane_name[l]), "%.*s",
				 (int)strcspn(p + 8, ":\""), p + 8);
	}
}

void path_trace_tick(const struct rig *rig, double now)
{
	char key[32];
	unsigned i = pt.n;

	if (!pt.on || now < pt.next || i >= PT_SAMPLES)
		return;
	pt.next += o.path_trace;
	if (pt.next < now)
		pt.next = now + o.path_trace;
	if (side_query(rig, 0, "/sdr/qps") < 0)
		return;
	pt.t[i] = now - pt.t0;
	for (unsigned k = 0; k < PT_PATHS; k++) {
		int found;

		snprintf(key, sizeof(key), "path%u_frames", k);
		pt.frames[i][k] = sum_key(key, &found);
		if (found && k + 1 > pt.npaths)
			pt.npaths = k + 1;
		snprintf(key, sizeof(key), "path%u_active", k);
		pt.active[i][k] = (unsigned char)sum_key(key, &found);
	}
	for (unsigned l = 0; l < pt.nlanes; l++)
		pt.lane[i][l] = lane_query(rig, l) < 0 ? NAN : perf_tel_num(answer, "delivered");
	pt.n++;
}

static void print_rows(const char *name, unsigned cols, int lanes)
{
	printf(",\"%s\":[", name);
	for (unsigned i = 0; i < pt.n; i++) {
		printf("%s[", i ? "," : "");
		for (unsigned k = 0; k < cols; k++) {
			double v = lanes ? pt.lane[i][k] : pt.frames[i][k];

			printf(isnan(v) ? "%snull" : "%s%.0f", k ? "," : "", v);
		}
		printf("]");
	}
	printf("]");
}

void path_trace_print(const struct rig *rig)
{
	if (!pt.on)
		return;
	printf("{\"mode\":\"paths\",\"interval_s\":%g,\"paths\":%u,\"link\":\"%s\",\"t\":[",
	       o.path_trace, pt.npaths, rig->link);
	for (unsigned i = 0; i < pt.n; i++)
		printf("%s%.3f", i ? "," : "", pt.t[i]);
	printf("]");
	print_rows("frames", pt.npaths, 0);
	printf(",\"active\":[");
	for (unsigned i = 0; i < pt.n; i++) {
		printf("%s[", i ? "," : "");
		for (unsigned k = 0; k < pt.npaths; k++)
			printf("%s%u", k ? "," : "", pt.active[i][k]);
		printf("]");
	}
	printf("],\"lanes\":[");
	for (unsigned l = 0; l < pt.nlanes; l++)
		printf("%s\"%s\"", l ? "," : "", pt.lane_name[l]);
	printf("]");
	print_rows("lane_delivered", pt.nlanes, 1);
	printf("}\n");
	fflush(stdout);
}
