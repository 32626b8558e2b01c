/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The message loop of sdr-send and sdr-recv (host tools layer): a window of
 * buffer slots, posts ahead while a slot is free, completions matched to
 * their slot, the give-up report. What differs between the two (post,
 * completion report, pending report) comes in struct tool_loop_ops.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdr_tool.h"

/* One completion: 1 if it is of a message in flight of this QP. */
static int loop_wc_ours(const struct tool_loop *l, const struct tool_slot *slots,
			const struct sdr_wc *wc, uint64_t total)
{
	uint32_t w = l->opt->window;

	return wc->qp == l->qp && wc->opcode == l->ops->opcode && wc->wr_id < total &&
	       slots[wc->wr_id % w].busy && slots[wc->wr_id % w].idx == wc->wr_id;
}

int tool_loop_run(struct tool_loop *l, struct tool_result *res)
{
	const struct tool_opts *opt = l->opt;
	uint64_t total = tool_plan_messages(l->plan);
	uint64_t next = 0, done = 0, bytes = 0, okc = 0, unexpected = 0;
	uint32_t w = opt->window, idle = 0;
	struct tool_slot *slots = calloc(w, sizeof(*slots));
	double tprev, tlast;

	l->maxsz = tool_plan_max_size(l->plan);
	l->buf = sdr_buf_alloc(l->ctx, w * l->maxsz);
	if (slots == NULL || l->buf == NULL) {
		fprintf(stderr, "cannot allocate %" PRIu64 " bytes of buffers: %s\n", w * l->maxsz,
			strerror(errno));
		free(slots);
		return -1;
	}
	l->mr = sdr_mr_reg(l->ctx, l->buf, w * l->maxsz, 0);
	if (l->mr == NULL) {
		fprintf(stderr, "sdr_mr_reg: %s (%s)\n", strerror(errno), sdr_last_error(l->ctx));
		free(slots);
		return -1;
	}
	if (!opt->quiet && !opt->json)
		printf("%s\n", l->ops->header);
	l->t0 = tprev = tlast = app_now();
	while (done < total) {
		struct sdr_wc wc[16];
		int n;

		/* keep up to `window` messages posted ahead */
		while (next < total && !slots[next % w].busy) {
			struct tool_slot *s = &slots[next % w];
			int rc = l->ops->post(l, s, next, l->buf + (next % w) * l->maxsz);

			if (rc == -EAGAIN)
				break;
			if (rc) {
				free(slots);
				return -1;
			}
			s->busy = 1;
			s->idx = next++;
		}
		n = app_cq_wait(l->ctx, wc, 16, &idle, tlast, opt->timeout);
		if (n < 0)
			break;
		for (int i = 0; i < n; i++) {
			double t = app_now(), dt;
			struct tool_slot *s = &slots[wc[i].wr_id % w];

			if (!loop_wc_ours(l, slots, &wc[i], total)) {
				unexpected++;
				fprintf(stderr,
					"unexpected completion wr_id %" PRIu64 " status %d\n",
					wc[i].wr_id, wc[i].status);
				continue;
			}
			dt = t - tprev > 1e-9 ? t - tprev : 1e-9;
			tprev = tlast = t;
			done++;
			if (l->ops->complete(l, s, &wc[i], t, dt)) {
				okc++;
				bytes += tool_plan_size(l->plan, s->idx);
			}
			s->busy = 0;
		}
	}
	if (done < total) /* give up: what is still pending */
		for (uint32_t i = 0; i < w; i++)
			if (slots[i].busy)
				l->ops->pending(l, &slots[i]);
	free(slots);
	res->ok = okc;
	res->failed = total - okc;
	res->bytes = bytes;
	res->elapsed_ns = (uint64_t)((tlast - l->t0) * 1e9);
	res->unexpected = unexpected;
	res->t0 = l->t0;
	return 0;
}
