/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-perf's client of the daemons' own figures: DPDK telemetry requests
 * (workers' counters, pacing peaks), the workers' CPU time and the daemons'
 * memory from /proc. Host program, below the engine.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "perf.h"

/* ------------------------------------------------------------------ */
/* the daemons' own figures: telemetry, memory                         */

/* One DPDK telemetry request to the daemon with EAL file prefix @p prefix
 * (its socket is in the EAL runtime directory, as rte_eal_init() makes
 * it). @return bytes of the JSON answer in @p out, or -1. */
static int tel_query(const char *prefix, const char *cmd, char *out, size_t len)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	struct timeval tv = {.tv_sec = 2};
	char hello[1024];
	ssize_t n;
	int fd;

	if (!prefix[0] || len < 2)
		return -1;
	if (geteuid() == 0)
		snprintf(sa.sun_path, sizeof(sa.sun_path), "/var/run/dpdk/%s/dpdk_telemetry.v2",
			 prefix);
	else
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/dpdk/%s/dpdk_telemetry.v2",
			 xdg && *xdg ? xdg : "/tmp", prefix);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    read(fd, hello, sizeof(hello)) <= 0 || write(fd, cmd, strlen(cmd)) < 0 ||
	    (n = read(fd, out, len - 1)) <= 0) {
		close(fd);
		return -1;
	}
	close(fd);
	out[n] = 0;
	return (int)n;
}

/* The number after "key": in a telemetry answer (NAN if absent). */
static double tel_num(const char *json, const char *key)
{
	char k[80];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\":", key);
	p = strstr(json, k);
	return p ? strtod(p + strlen(k), NULL) : NAN;
}

int perf_tel_query(const struct rig *r, int d, const char *cmd, char *out, size_t len)
{
	if (d < 0 || d >= r->ndaemons)
		return -1;
	return tel_query(r->prefix[d], cmd, out, len);
}

double perf_tel_num(const char *json, const char *key)
{
	return tel_num(json, key);
}

/* The workers' counters (telemetry /sdr/workers), summed over the daemons
 * of the rig; NANs when a daemon does not answer (--rig attach). */

double workers_cpu_s(const struct rig *r)
{
	double sum = 0;
	long hz = sysconf(_SC_CLK_TCK);
	int found = 0;

	for (int i = 0; i < r->ndaemons; i++) {
		char path[64];
		DIR *d;

		if (r->pid[i] <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task", (int)r->pid[i]);
		d = opendir(path);
		struct dirent *de;
		if (!d)
			continue;
		while ((de = readdir(d))) {
			char sp[384], buf[512], *rp;
			unsigned long ut, st;
			FILE *f;
			if (de->d_name[0] == '.')
				continue;
			snprintf(sp, sizeof(sp), "%s/%s/stat", path, de->d_name);
			f = fopen(sp, "r");
			if (!f)
				continue;
			buf[0] = 0;
			if (!fgets(buf, sizeof(buf), f))
				buf[0] = 0;
			fclose(f);
			/* pid (comm) state ppid ... field 14 utime, 15 stime */
			if (!strstr(buf, "(rte-worker") || !(rp = strrchr(buf, ')')))
				continue;
			if (sscanf(rp + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu",
				   &ut, &st) == 2) {
				sum += (double)(ut + st) / (double)hz;
				found = 1;
			}
		}
		closedir(d);
	}
	return found ? sum : NAN;
}

static const char *const wk_keys[WK__N] = {
	"loops",       "work_loops",   "pace_polls",     "pace_cycles",  "pace_frames",
	"pace_stalls", "visits_paced", "visits_touched", "visits_timer", "handoff_rx"};

void workers_read(const struct rig *r, double *v)
{
	char buf[16384];

	for (int k = 0; k < WK__N; k++)
		v[k] = r->ndaemons ? 0 : NAN;
	for (int i = 0; i < r->ndaemons; i++) {
		if (tel_query(r->prefix[i], "/sdr/workers", buf, sizeof(buf)) < 0) {
			for (int k = 0; k < WK__N; k++)
				v[k] = NAN;
			return;
		}
		for (int k = 0; k < WK__N; k++)
			v[k] += tel_num(buf, wk_keys[k]);
	}
}

/* Resident and virtual memory of the daemons we started (KiB, summed). */
void daemons_mem(const struct rig *r, double *rss, double *vsz)
{
	*rss = *vsz = r->ndaemons ? 0 : NAN;
	for (int i = 0; i < r->ndaemons; i++) {
		char path[64], line[256];
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/status", (int)r->pid[i]);
		if (!(f = fopen(path, "r"))) {
			*rss = *vsz = NAN;
			return;
		}
		while (fgets(line, sizeof(line), f)) {
			unsigned long kb;
			if (sscanf(line, "VmRSS: %lu", &kb) == 1)
				*rss += (double)kb;
			else if (sscanf(line, "VmSize: %lu", &kb) == 1)
				*vsz += (double)kb;
		}
		fclose(f);
	}
}

/* The rate a sending QP is paced at (bits/s): its own, else its worker's
 * share of the port; 0 = unpaced. */
static uint64_t qp_pace_bps(void)
{
	if (o.rate_bps)
		return o.rate_bps;
	return o.port_rate_bps / (o.workers ? o.workers : 1);
}

/* Peak rate of the sending QPs over 10 of their frame times, from the
 * departures the sending daemon recorded (telemetry /sdr/pace_peak; the QP
 * ids of a fresh instance are 0..N-1 in creation order): the largest bytes
 * in such a window over what the rate allows there, over all windows and
 * over those that begin with a frame sent after the QP was idle. */
void read_peaks(const struct rig *rig, const struct run_params *p, struct run_result *res)
{
	uint64_t bps = qp_pace_bps(), pkts = pkts_per_msg(p->size);
	double frame = msg_wire_bytes(p->size) / (double)pkts, win_ns, allow;
	char cmd[96], buf[4096];

	res->peak = res->peak_idle = res->peak_win_us = NAN;
	if (!bps || !rig->ndaemons || !pacing_measured())
		return;
	win_ns = 10 * frame * 8 / (double)bps * 1e9;
	allow = (double)bps / 8 * win_ns / 1e9;
	res->peak_win_us = win_ns / 1e3;
	res->peak = res->peak_idle = 0;
	for (unsigned k = 0; k < res->qps && k < 64; k++) {
		snprintf(cmd, sizeof(cmd), "/sdr/pace_peak,0,%u,%llu", k,
			 (unsigned long long)win_ns);
		if (tel_query(rig->prefix[0], cmd, buf, sizeof(buf)) < 0 ||
		    !(tel_num(buf, "frames") > 0))
			continue;
		res->npeak++;
		res->peak = fmax(res->peak, tel_num(buf, "peak_bytes") / allow);
		res->peak_idle = fmax(res->peak_idle,
				      tel_num(buf, "peak_bytes_after_idle") / allow);
	}
	if (!res->npeak)
		res->peak = res->peak_idle = NAN;
}

int perf_tel_side(const struct rig *r, int b, const char *cmd, const char *more, char *out,
		  size_t len)
{
	char c[96];
	int two = r->ndaemons >= 2;

	snprintf(c, sizeof(c), "%s,%d%s", cmd, two ? 0 : b, more ? more : "");
	return perf_tel_query(r, two ? b : 0, c, out, len);
}
