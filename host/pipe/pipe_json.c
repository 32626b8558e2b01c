/* SPDX-License-Identifier: BSD-3-Clause */
/* sdr-pipe --print-schedule: programs, channels and prediction as JSON. */
#include <errno.h>
#include <inttypes.h>

#include "pipe_json.h"

static const char *const ins_names[] = {"compute", "post_recv", "post_send", "wait_recv",
					"wait_send"};

int pipe_schedule_json(FILE *f, const struct pipe_cfg *c, const struct pipe_prog *p,
		       const struct pipe_des_out *pred)
{
	struct pipe_metrics m;
	char rel[32];
	uint32_t S = c->stages;

	pipe_metrics_get(c, &pred->ev, 0, &m);
	fprintf(f, "{\"sched\":\"%s\",\"comm\":\"%s\",\"stages\":%u,\"micro\":%u,\"place\":[",
		pipe_sched_name(c->sched),
		c->comm == PIPE_COMM_BLOCKING ? "blocking" : "nonblocking", S, c->micro);
	for (uint32_t s = 0; s < S; s++)
		fprintf(f, "%s%u", s ? "," : "", c->dc_of[s]);
	fprintf(f, "],\"tf_ms\":[");
	for (uint32_t s = 0; s < S; s++)
		fprintf(f, "%s%.6f", s ? "," : "", pipe_tf(c, s) * 1e3);
	fprintf(f, "],\"tb_ms\":[");
	for (uint32_t s = 0; s < S; s++)
		fprintf(f, "%s%.6f", s ? "," : "", pipe_tb(c, s) * 1e3);
	fprintf(f, "],\"delta_n\":[");
	for (uint32_t s = 0; s < S; s++)
		fprintf(f, "%s%u", s ? "," : "",
			c->sched == PIPE_SCHED_GEOPIPE ? pipe_stage_delta(c, s) : 0);
	fprintf(f, "],\"mem_budget\":[");
	for (uint32_t s = 0; s < S; s++)
		fprintf(f, "%s%u", s ? "," : "", pipe_stage_budget(c, s));
	fprintf(f,
		"],\"act_bytes\":%" PRIu64 ",\"grad_bytes\":%" PRIu64 ",\"rtt_ms\":%.6f,"
		"\"rate_bps\":%" PRIu64 ",\"rel\":\"%s\"",
		c->act_bytes, c->grad_bytes, c->rtt * 1e3, c->rate_bps,
		pipe_rel_format(&c->rel, rel, sizeof(rel)));
	fprintf(f, ",\"pred_iter_ms\":%.6f,\"pred_bubble\":%.6f,\"pred_bubble_stage\":[",
		m.iter_time * 1e3, m.bubble_all);
	for (uint32_t s = 0; s < S; s++)
		fprintf(f, "%s%.6f", s ? "," : "", m.bubble[s]);
	fprintf(f, "],\"channels\":[");
	for (uint32_t ch = 0; ch < PIPE_NCHAN(S); ch++) {
		uint32_t a = pipe_ch_src(ch), b = pipe_ch_dst(ch);

		fprintf(f, "%s{\"ch\":%u,\"kind\":\"%s\",\"src\":%u,\"dst\":%u,\"cross\":%s}",
			ch ? "," : "", ch, ch & 1 ? "grad" : "act", a, b,
			c->dc_of[a] != c->dc_of[b] ? "true" : "false");
	}
	fprintf(f, "],\"programs\":[");
	for (uint32_t s = 0; s < S; s++) {
		fprintf(f, "%s[", s ? "," : "");
		for (uint32_t i = 0; i < p->n[s]; i++) {
			const struct pipe_ins *in = &p->ins[s][i];

			if (in->kind == PIPE_I_COMPUTE)
				fprintf(f, "%s{\"i\":\"compute\",\"op\":\"%c\",\"m\":%u}",
					i ? "," : "", in->op == PIPE_F ? 'F' : 'B', in->m);
			else
				fprintf(f, "%s{\"i\":\"%s\",\"ch\":%u,\"m\":%u}", i ? "," : "",
					ins_names[in->kind], in->chan, in->m);
		}
		fprintf(f, "]");
	}
	fprintf(f, "]}\n");
	return ferror(f) || fflush(f) ? -EIO : 0;
}
