/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-perf's command lines of the daemons it starts: EAL arguments, lcores,
 * the global and per-instance sdr-dpu options (docs/benchmarks.md).
 * Host program; used by perf_rig.c.
 */
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <inttypes.h>
#include <unistd.h>

#include "perf.h"
#include "sdr_scheme.h"

void av(struct argv_b *a, const char *s)
{
	if (a->n < 127)
		a->v[a->n++] = (char *)s;
	a->v[a->n] = NULL;
}

void avf(struct argv_b *a, const char *fmt, ...)
{
	va_list ap;
	if (a->ns == 64)
		return;
	va_start(ap, fmt);
	vsnprintf(a->store[a->ns], sizeof(a->store[0]), fmt, ap);
	va_end(ap);
	av(a, a->store[a->ns++]);
}

uint64_t max_msg_for(uint64_t size)
{
	uint64_t chunk = (uint64_t)o.mtu * o.chunk_pkts, mm = size;
	if (mm < 8ull * o.mtu)
		mm = 8ull * o.mtu;
	return (mm + chunk - 1) / chunk * chunk;
}

void qp_attr_for(struct sdr_qp_attr *attr, uint64_t size, const struct sdr_scheme *sch)
{
	attr->max_msg = (uint32_t)max_msg_for(size);
	attr->chunk_pkts = o.chunk_pkts;
	attr->reliability = sch->rel;
	attr->ec_code = sch->code;
	attr->ec_k = (uint8_t)sch->k;
	attr->ec_m = (uint8_t)sch->m;
}

void av_common_eal(struct argv_b *a, const char *prefix, int mem_mb)
{
	av(a, "--no-huge");
	av(a, "--no-shconf");
	av(a, "--no-pci");
	avf(a, "-m%d", mem_mb);
	avf(a, "--file-prefix=%s", prefix);
	av(a, "--log-level=lib.eal:warning");
	av(a, "--log-level=pmd.net.ring:warning");
	for (int i = 0; i < o.n_eal_extra; i++)
		av(a, o.eal_extra[i]);
}

/* lcores: main lcore 0 on cpu0, workers on cpu1, cpu0, ... (the machine may
 * have fewer CPUs than lcores: EAL maps them with --lcores). first_cpu
 * rotates the mapping so two daemons do not pile their workers on one CPU. */
void av_lcores(struct argv_b *a, unsigned workers, unsigned first_cpu)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	char buf[96];
	size_t len = 0;

	if (ncpu < 1)
		ncpu = 1;
	for (unsigned l = 0; l <= workers && len < sizeof(buf) - 16; l++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%u@%ld", l ? "," : "", l,
					(first_cpu + l) % (unsigned long)ncpu);
	avf(a, "--lcores=%s", buf);
}

/* Is pacing measured (a rate on the QPs or the port, or on/off traffic)?
 * Then the daemons keep their paced frames' departure times. */
int pacing_measured(void)
{
	return o.rate_bps || o.port_rate_bps || o.gap_us > 0;
}

void av_fw_global(struct argv_b *a, uint64_t max_msg)
{
	/* the daemons are ours: no per-client QP quota (--qps up to 1024) */
	av(a, "--quota-qps=0");
	if (pacing_measured())
		avf(a, "--pace-trace=%u", PACE_TRACE);
	avf(a, "--mtu=%u", o.mtu);
	avf(a, "--chunk-pkts=%u", o.chunk_pkts);
	if (o.paths)
		avf(a, "--paths=%u", o.paths);
	avf(a, "--max-msg=%" PRIu64, max_msg);
	avf(a, "--workers=%u", o.workers ? o.workers : 1);
	if (o.no_icrc)
		av(a, "--no-icrc");
	if (o.busy_poll)
		av(a, "--idle-us=0");
	for (int i = 0; i < o.n_dpu_extra; i++)
		av(a, o.dpu_extra[i]);
}

void av_fw_inst(struct argv_b *a, const struct rig *r)
{
	if (r->link[0]) { /* (two arguments: a spec of paths is longer than a store slot) */
		av(a, "--link");
		av(a, r->link);
	}
	if (o.port_rate)
		avf(a, "--port-rate=%s", o.port_rate);
}
