/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-pipe: GeoPipe's per-stage dN found by search over DES runs, and one
 * iteration's DES time (host/pipe/, the pipe core; pure C, above
 * pipe_des_net.c's pipe_des_run() and the metrics of pipe_events.c).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipe.h"
#include "pipe_cba.h"
#include "pipe_net.h"
#include "sdr_auto.h"
#include "sdr_model.h"

int pipe_des_time(const struct pipe_cfg *c, double *t)
{
	static struct pipe_order ord;
	struct pipe_prog p;
	struct pipe_des_out out;
	struct pipe_metrics m;
	int rc;

	if ((rc = pipe_order_build(c, &ord)) || (rc = pipe_prog_build(c, &ord, &p)))
		return rc;
	rc = pipe_des_run(c, &p, &out);
	pipe_prog_free(&p);
	if (rc)
		return rc;
	pipe_metrics_get(c, &out.ev, 0, &m);
	pipe_des_free(&out);
	*t = m.iter_time;
	return 0;
}

/* iteration time of c with per-stage extra forwards d (one DES run) */
static int delta_eval(const struct pipe_cfg *c0, const uint32_t *d, double *t)
{
	struct pipe_cfg c = *c0;

	c.delta_n = PIPE_DELTA_STAGE;
	memcpy(c.delta_stage, d, sizeof(c.delta_stage));
	return pipe_des_time(&c, t);
}

/* The best per-stage vector so far and the DES runs it took. */
struct delta_best {
	uint32_t d[PIPE_MAX_STAGES];
	double t;     /* its iteration time */
	uint32_t sum; /* its extra forwards in all */
	uint32_t runs;
};

/* Evaluate @p d (extra forwards @p sum in all); it becomes the best when it
 * is shorter by more than 1 us, or as short with fewer extra forwards.
 * @return 1 (it did), 0, or the DES's error. */
static int delta_try(const struct pipe_cfg *c, const uint32_t *d, uint32_t sum,
		     struct delta_best *b)
{
	double t;
	int rc = delta_eval(c, d, &t);

	if (rc)
		return rc;
	b->runs++;
	if (!(t < b->t - 1e-6 || (t <= b->t + 1e-6 && sum < b->sum)))
		return 0;
	b->t = t;
	b->sum = sum;
	memcpy(b->d, d, sizeof(b->d));
	return 1;
}

int pipe_delta_search(const struct pipe_cfg *c, uint32_t *delta, double *t_best, uint32_t *runs)
{
	uint32_t S = c->stages, cap[PIPE_MAX_STAGES], d[PIPE_MAX_STAGES];
	uint32_t maxcap = 0;
	struct delta_best b = {.t = INFINITY};
	int rc, moved;

	if (c->sched != PIPE_SCHED_GEOPIPE || c->comm != PIPE_COMM_NONBLOCKING)
		return -EINVAL;
	for (uint32_t s = 0; s < S; s++) {
		cap[s] = pipe_stage_delta_max(c, s);
		if (cap[s] > maxcap)
			maxcap = cap[s];
	}
	/* every uniform value (each stage capped, non-increasing: the caps are) */
	for (uint32_t u = 0; u <= maxcap; u++) {
		uint32_t sum = 0;

		memset(d, 0, sizeof(d));
		for (uint32_t s = 0; s < S; s++) {
			d[s] = u < cap[s] ? u : cap[s];
			if (s && d[s] > d[s - 1])
				d[s] = d[s - 1];
			sum += d[s];
		}
		if ((rc = delta_try(c, d, sum, &b)) < 0)
			return rc;
	}
	/* then single-stage steps while one improves */
	do {
		moved = 0;
		for (uint32_t s = 0; s < S && !moved; s++)
			for (int step = -1; step <= 1 && !moved; step += 2) {
				uint32_t v = b.d[s] + (uint32_t)step;

				if ((step < 0 && b.d[s] == 0) || (step > 0 && b.d[s] >= cap[s]) ||
				    (s && v > b.d[s - 1]) || (s + 1 < S && v < b.d[s + 1]))
					continue;
				memcpy(d, b.d, sizeof(d));
				d[s] = v;
				if ((moved = delta_try(c, d, b.sum + (uint32_t)step, &b)) < 0)
					return moved;
			}
	} while (moved);
	memcpy(delta, b.d, S * sizeof(*delta));
	if (t_best)
		*t_best = b.t;
	if (runs)
		*runs = b.runs;
	return 0;
}
