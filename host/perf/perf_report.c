/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-perf's report of one bw / lat run: the human block (unless
 * --json-only) and exactly one JSON line, keys in docs/benchmarks.md.
 * Host program, above perf_util.c.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sdr_wire.h"
#include "perf.h"

/* The human block: the run's set-up, then its figures (or why none). */
static void print_human(const struct rig *rig, const struct run_params *p,
			const struct run_result *r, const char *scheme)
{
	const char *pmd = rig_pmds[rig->kind];
	unsigned workers = o.workers ? o.workers : 1;

	printf("  ---------------- sdr-perf %s: rig %s (%s) ----------------\n", p->mode,
	       rig_names[rig->kind], pmd);
	printf("  size %" PRIu64 " B  window %u  mtu %u  chunk %u pkts  workers %u  rel %s"
	       "  icrc %s  imm 0x%x  QP pairs %u%s",
	       p->size, p->window, o.mtu, o.chunk_pkts, workers, scheme, o.no_icrc ? "off" : "on",
	       o.imm, o.qps, o.gap_us > 0 ? "  on/off" : "");
	if (o.channels > 1)
		printf("  channels %u (stripe %u chunks)", o.channels,
		       o.stripe_chunks ? o.stripe_chunks : 1);
	printf("\n");
	if (rig->link[0] || o.port_rate)
		printf("  link %s  port-rate %s\n", rig->link[0] ? rig->link : "-",
		       o.port_rate ? o.port_rate : "-");
	if (r->ok == -1) {
		printf("  SKIPPED: %s\n", r->error);
	} else if (r->ok == 0) {
		printf("  FAILED: %s\n", r->error);
	} else {
		printf("  messages   : %" PRIu64 " measured (%" PRIu64 " warm-up): ok %" PRIu64
		       "  partial %" PRIu64 "  error %" PRIu64 "\n",
		       r->measured, p->warmup, r->msgs_ok, r->msgs_partial, r->msgs_err);
		printf("  payload    : %" PRIu64 " B in %.6f s  goodput %.3f Gbit/s"
		       "  (wire %.3f Gbit/s)\n",
		       r->bytes, r->elapsed, r->goodput_gbps, r->wire_gbps);
		printf("  packets    : %" PRIu64 "  %.4f Mpps  %.0f msg/s\n", r->pkts, r->mpps,
		       r->msg_rate);
		printf("  completion : post -> receive complete (us): mean %.1f  p50 %.1f"
		       "  p99 %.1f  p99.9 %.1f  max %.1f  (%" PRIu64 " samples)\n",
		       r->lat[0], r->lat[1], r->lat[2], r->lat[3], r->lat[4], r->nlat);
		printf("  send done  : post -> on the wire (us):     mean %.1f  p50 %.1f"
		       "  p99 %.1f  p99.9 %.1f  max %.1f\n",
		       r->slat[0], r->slat[1], r->slat[2], r->slat[3], r->slat[4]);
		if (isfinite(r->cpu_s))
			printf("  workers    : %.3f CPU-s in %.3f s wall: %.3f Gbit/s and %.4f Mpps"
			       " per worker CPU-second\n",
			       r->cpu_s, r->elapsed, r->gbps_per_cpu, r->mpps_per_cpu);
		if (isfinite(r->memcpy_gbps))
			printf("  memcpy     : same bytes in MTU pieces, one copy: %.3f Gbit/s\n",
			       r->memcpy_gbps);
		if (isfinite(r->bound_gbps))
			printf("  bound      : same bytes, 2 copies + 2 CRC passes (%s) in MTU "
			       "pieces:"
			       " %.3f Gbit/s per CPU-second; goodput per worker CPU-second /"
			       " bound %.3f\n",
			       sdr_icrc_selected(), r->bound_gbps, r->gbps_per_cpu / r->bound_gbps);
		printf("  QPs        : %u pairs on %u contexts per side, set up in %.3f s"
		       " (%.1f us per QP); daemon memory per QP %.1f KiB resident"
		       " (%.1f KiB after the run), %.1f KiB virtual\n",
		       r->qps, r->ctxs, r->setup_s, r->setup_s * 1e6 / (2.0 * r->qps),
		       r->rss_kib_qp, r->rss_kib_qp_end, r->vsz_kib_qp);
		if (isfinite(r->wk[WK_LOOPS]) && r->wk[WK_LOOPS] > 0)
			printf("  workers    : %.0f loops, QP visits %.2f per loop (paced %.0f,"
			       " touched %.0f, timer %.0f); pacer %.0f cycles per loop (%.0f"
			       " sampled), %.0f frames, %.0f stalls; hand-off %.0f packets\n",
			       r->wk[WK_LOOPS],
			       (r->wk[WK_VPACED] + r->wk[WK_VTOUCHED] + r->wk[WK_VTIMER]) /
				       r->wk[WK_LOOPS],
			       r->wk[WK_VPACED], r->wk[WK_VTOUCHED], r->wk[WK_VTIMER],
			       r->wk[WK_POLLS] > 0 ? r->wk[WK_CYCLES] / r->wk[WK_POLLS] : NAN,
			       r->wk[WK_POLLS], r->wk[WK_FRAMES], r->wk[WK_STALLS],
			       r->wk[WK_HANDOFF]);
		if (isfinite(r->peak))
			printf("  pacing     : peak over 10 frame times (%.1f us) %.3fx the rate,"
			       " %.3fx in windows that begin after idle (%d QPs)\n",
			       r->peak_win_us, r->peak, r->peak_idle, r->npeak);
		if (r->nwin) {
			printf("  1 s windows (wire Gbit/s):");
			for (int i = 0; i < r->nwin; i++)
				printf(" %.3f", r->win[i]);
			printf("\n");
		}
	}
	printf("  -----------------------------------------------------------------\n");
}

/* The JSON line (docs/benchmarks.md), one per run. */
static void print_json(const struct rig *rig, const struct run_params *p,
		       const struct run_result *r, const char *scheme)
{
	struct sbuf j = {0};
	const char *pmd = rig_pmds[rig->kind];
	unsigned workers = o.workers ? o.workers : 1;

	sb_add(&j, "{\"mode\":");
	sb_jstr(&j, p->mode);
	sb_add(&j, ",\"rig\":");
	sb_jstr(&j, rig_names[rig->kind]);
	sb_add(&j, ",\"pmd\":");
	sb_jstr(&j, pmd);
	sb_add(&j,
	       ",\"size\":%" PRIu64 ",\"iters\":%" PRIu64 ",\"warmup\":%" PRIu64
	       ",\"window\":%u,\"mtu\":%u,\"chunk_pkts\":%u,\"workers\":%u,\"channels\":%u,"
	       "\"rel\":",
	       p->size, r->measured ? r->measured : p->iters, p->warmup, p->window, o.mtu,
	       o.chunk_pkts, workers, o.channels ? o.channels : 1);
	sb_jstr(&j, sdr_rel_name((unsigned)p->rel));
	sb_add(&j, ",\"scheme\":");
	sb_jstr(&j, scheme);
	sb_add(&j, ",\"icrc\":%s,\"link\":", o.no_icrc ? "false" : "true");
	sb_jstr(&j, rig->link);
	sb_add(&j, ",\"port_rate_bps\":%" PRIu64, o.port_rate_bps);
	sb_add(&j, ",\"qp_rate_bps\":%" PRIu64, o.rate_bps);
	sb_add(&j, ",\"qps\":%u", o.qps);
	sb_jnum(&j, "gap_us", o.gap_us);
	sb_add(&j, ",\"imm\":%" PRIu32, o.imm);
	if (r->ok != 1) {
		sb_add(&j, ",\"status\":\"%s\",\"error\":", r->ok < 0 ? "skipped" : "failed");
		sb_jstr(&j, r->error);
	} else {
		sb_add(&j,
		       ",\"status\":\"ok\",\"msgs_ok\":%" PRIu64 ",\"msgs_partial\":%" PRIu64
		       ",\"msgs_err\":%" PRIu64 ",\"send_err\":%" PRIu64 ",\"bytes\":%" PRIu64
		       ",\"pkts\":%" PRIu64,
		       r->msgs_ok, r->msgs_partial, r->msgs_err, r->send_err, r->bytes, r->pkts);
		sb_jnum(&j, "elapsed_s", r->elapsed);
		sb_jnum(&j, "goodput_gbps", r->goodput_gbps);
		sb_jnum(&j, "wire_gbps", r->wire_gbps);
		sb_jnum(&j, "mpps", r->mpps);
		sb_jnum(&j, "msg_rate", r->msg_rate);
		sb_jnum(&j, "lat_mean_us", r->lat[0]);
		sb_jnum(&j, "lat_p50_us", r->lat[1]);
		sb_jnum(&j, "lat_p99_us", r->lat[2]);
		sb_jnum(&j, "lat_p999_us", r->lat[3]);
		sb_jnum(&j, "lat_max_us", r->lat[4]);
		sb_jnum(&j, "lat_min_us", r->lat[5]);
		sb_add(&j, ",\"lat_samples\":%" PRIu64, r->nlat);
		sb_jnum(&j, "send_lat_mean_us", r->slat[0]);
		sb_jnum(&j, "send_lat_p50_us", r->slat[1]);
		sb_jnum(&j, "send_lat_p99_us", r->slat[2]);
		sb_jnum(&j, "send_lat_p999_us", r->slat[3]);
		sb_jnum(&j, "send_lat_max_us", r->slat[4]);
		sb_jnum(&j, "memcpy_gbps", r->memcpy_gbps);
		sb_add(&j, ",\"icrc_crc\":");
		sb_jstr(&j, sdr_icrc_selected());
		sb_jnum(&j, "bound_gbps", r->bound_gbps);
		sb_jnum(&j, "worker_cpu_s", r->cpu_s);
		sb_jnum(&j, "goodput_gbps_per_cpu", r->gbps_per_cpu);
		sb_jnum(&j, "mpps_per_cpu", r->mpps_per_cpu);
		sb_add(&j, ",\"ctxs\":%u", r->ctxs);
		sb_jnum(&j, "qp_setup_s", r->setup_s);
		sb_jnum(&j, "qp_setup_us_per_qp", r->setup_s * 1e6 / (2.0 * r->qps));
		sb_jnum(&j, "dpu_rss_kib_per_qp", r->rss_kib_qp);
		sb_jnum(&j, "dpu_rss_kib_per_qp_end", r->rss_kib_qp_end);
		sb_jnum(&j, "dpu_vsz_kib_per_qp", r->vsz_kib_qp);
		sb_jnum(&j, "worker_loops", r->wk[WK_LOOPS]);
		sb_jnum(&j, "worker_work_loops", r->wk[WK_WORK]);
		sb_jnum(&j, "qp_visits_per_loop",
			r->wk[WK_LOOPS] > 0
				? (r->wk[WK_VPACED] + r->wk[WK_VTOUCHED] + r->wk[WK_VTIMER]) /
					  r->wk[WK_LOOPS]
				: NAN);
		sb_jnum(&j, "visits_paced", r->wk[WK_VPACED]);
		sb_jnum(&j, "visits_touched", r->wk[WK_VTOUCHED]);
		sb_jnum(&j, "visits_timer", r->wk[WK_VTIMER]);
		sb_jnum(&j, "pace_cycles_per_poll",
			r->wk[WK_POLLS] > 0 ? r->wk[WK_CYCLES] / r->wk[WK_POLLS] : NAN);
		sb_jnum(&j, "pace_polls", r->wk[WK_POLLS]);
		sb_jnum(&j, "pace_frames", r->wk[WK_FRAMES]);
		sb_jnum(&j, "pace_stalls", r->wk[WK_STALLS]);
		sb_jnum(&j, "handoff_pkts", r->wk[WK_HANDOFF]);
		sb_jnum(&j, "peak_window_us", r->peak_win_us);
		sb_jnum(&j, "peak_rate", r->peak);
		sb_jnum(&j, "peak_rate_after_idle", r->peak_idle);
		sb_add(&j, ",\"win_wire_gbps\":[");
		for (int i = 0; i < r->nwin; i++)
			sb_add(&j, "%s%.6g", i ? "," : "", r->win[i]);
		sb_add(&j, "]");
	}
	sb_add(&j, "}");
	printf("%s\n", j.p);
	fflush(stdout);
	free(j.p);
}

void print_run(const struct rig *rig, const struct run_params *p, const struct run_result *r)
{
	char sbuf[32];
	const char *scheme = scheme_name(p->rel, p->ec, sbuf, sizeof(sbuf));

	if (!o.json_only)
		print_human(rig, p, r, scheme);
	print_json(rig, p, r, scheme);
}
