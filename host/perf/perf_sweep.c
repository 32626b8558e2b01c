/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-perf sweep: every combination of --schemes x --loss x --sizes, one
 * rig per loss rate, one engine run and report per scheme and size.
 * Host program, above the engine, report and rig.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "perf.h"

int run_sweep(void)
{
	int nsz = o.nsizes ? o.nsizes : 3, nl = o.nloss ? o.nloss : 1;
	int nsch = o.nschemes ? o.nschemes : 1, total, idx = 0, failed = 0;
	uint64_t maxsz = 0;

	if (!o.nsizes) {
		o.sizes[0] = 4096;
		o.sizes[1] = 64 << 10;
		o.sizes[2] = 1 << 20;
	}
	if (!o.nschemes)
		strcpy(o.schemes[0], "none");
	total = nsz * nl * nsch;
	for (int i = 0; i < nsz; i++)
		if (o.sizes[i] > maxsz)
			maxsz = o.sizes[i];
	for (int li = 0; li < nl && !g_stop; li++) {
		struct rig rig;
		char link[512] = "";

		if (o.nloss && o.loss[li] > 0) {
			snprintf(link, sizeof(link), "%s%sloss=%g", o.link ? o.link : "",
				 o.link ? "," : "", o.loss[li]);
		} else if (o.link) {
			snprintf(link, sizeof(link), "%s", o.link);
		}
		if (rig_start(&rig, link, maxsz)) {
			rig_stop(&rig);
			return 1;
		}
		for (int si = 0; si < nsch && !g_stop; si++) {
			for (int zi = 0; zi < nsz && !g_stop; zi++) {
				struct run_params p;
				struct run_result r;
				int rel;
				uint16_t ec;

				idx++;
				fprintf(stderr,
					"sdr-perf: sweep [%d/%d] scheme=%s loss=%g size=%" PRIu64
					" ...\n",
					idx, total, o.schemes[si], o.nloss ? o.loss[li] : 0.0,
					o.sizes[zi]);
				if (parse_scheme(o.schemes[si], &rel, &ec, NULL)) {
					fill_params(&p, o.sweep_mode, o.sizes[zi], 0, 0);
					memset(&r, 0, sizeof(r));
					r.ok = -1;
					snprintf(r.error, sizeof(r.error), "unknown scheme '%s'",
						 o.schemes[si]);
					print_run(&rig, &p, &r);
					continue;
				}
				fill_params(&p, o.sweep_mode, o.sizes[zi], rel, ec);
				run_engine(&rig, &p, &r);
				print_run(&rig, &p, &r);
				if (r.ok == 0)
					failed++;
				if (r.ok == -1) /* the scheme is refused: skip its other sizes */
					for (zi++; zi < nsz; zi++) {
						idx++;
						fill_params(&p, o.sweep_mode, o.sizes[zi], rel, ec);
						print_run(&rig, &p, &r);
					}
			}
		}
		rig_stop(&rig);
		g_rig = NULL;
	}
	fprintf(stderr, "sdr-perf: sweep done, %d run(s), %d failed\n", idx, failed);
	return failed || g_stop;
}
