/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-stage compute times of sdr-pipe (pipe_cfg.tf_stage / tb_stage,
 * --tf-stage / --tb-stage; the PyTorch pipeline feeds the DES with the
 * times it measured per stage): times equal to the common tf / tb change
 * nothing (orders, programs, DES events); the one-micro-batch closed form
 * over a long link with a different time per stage; a slow stage sets the
 * pace of a zero-delay pipeline; the greedy schedule and GeoPipe's dN
 * follow the per-stage times; bad values are refused; the digest tells
 * configurations apart only when per-stage times are set.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pipe.h"

static int fails;
#define CHECK(c, ...)                                                                         \
	do {                                                                                  \
		if (!(c)) {                                                                   \
			fails++;                                                              \
			fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #c); \
			fprintf(stderr, __VA_ARGS__);                                         \
			fprintf(stderr, "\n");                                                \
		}                                                                             \
	} while (0)

static struct pipe_order o1, o2;

/* DES iteration time of @p c (finished), -1 on error */
static double des(const struct pipe_cfg *c, struct pipe_des_out *out, struct pipe_order *o)
{
	struct pipe_prog p;
	double t;

	if (pipe_order_build(c, o) || pipe_prog_build(c, o, &p))
		return -1;
	if (pipe_des_run(c, &p, out)) {
		pipe_prog_free(&p);
		return -1;
	}
	struct pipe_metrics m;

	pipe_metrics_get(c, &out->ev, 0, &m);
	t = m.iter_time;
	pipe_prog_free(&p);
	return t;
}

static void same_as_common(void)
{
	static const uint32_t Ss[] = {2, 3, 4, 8}, Ms[] = {1, 3, 8, 17};
	int n = 0;

	for (int k = 0; k < PIPE_SCHED_COUNT; k++)
		for (size_t i = 0; i < 4; i++)
			for (size_t j = 0; j < 4; j++) {
				struct pipe_cfg a, b;
				struct pipe_des_out da = {0}, db = {0};

				pipe_cfg_init(&a);
				a.sched = (enum pipe_sched)k;
				a.stages = Ss[i];
				a.micro = Ms[j];
				for (uint32_t s = 0; s < a.stages; s++)
					a.dc_of[s] = s >= a.stages / 2;
				b = a;
				for (uint32_t s = 0; s < b.stages; s++) {
					b.tf_stage[s] = b.tf;
					b.tb_stage[s] = b.tb;
				}
				CHECK(!pipe_cfg_finish(&a) && !pipe_cfg_finish(&b), "finish");
				double ta = des(&a, &da, &o1), tb = des(&b, &db, &o2);

				CHECK(ta > 0 && ta == tb, "%s S=%u M=%u: %g vs %g",
				      pipe_sched_name(a.sched), a.stages, a.micro, ta, tb);
				for (uint32_t s = 0; s < a.stages; s++)
					CHECK(o1.n[s] == o2.n[s] &&
						      !memcmp(o1.ops[s], o2.ops[s],
							      o1.n[s] * sizeof(o1.ops[s][0])),
					      "same order");
				CHECK(da.ev.n == db.ev.n, "same number of events");
				for (size_t e = 0; e < da.ev.n && e < db.ev.n; e++)
					CHECK(da.ev.ev[e].t0 == db.ev.ev[e].t0 &&
						      da.ev.ev[e].t1 == db.ev.ev[e].t1,
					      "event %zu", e);
				pipe_des_free(&da);
				pipe_des_free(&db);
				n++;
			}
	printf("per-stage times equal to tf/tb: %d configurations unchanged\n", n);
}

static double xfer(const struct pipe_cfg *c, uint64_t bytes)
{
	return (double)pipe_wire_bytes(c, bytes) * 8 / (double)c->rate_bps;
}

static void closed_form(void)
{
	/* S=2 (one stage per DC), M=1: F0, activation over the link, F1, B1,
	 * gradient back, B0. Stage 1 posted its receive at 0: the CTS reaches
	 * stage 0 at rtt/2. */
	static const double tf0s[] = {0.002, 0.020}, tf1s[] = {0.004, 0.031};
	for (int k = 0; k < PIPE_SCHED_COUNT; k++)
		for (int i = 0; i < 2; i++)
			for (int j = 0; j < 2; j++) {
				struct pipe_cfg c;
				struct pipe_des_out d = {0};

				pipe_cfg_init(&c);
				c.sched = (enum pipe_sched)k;
				c.stages = 2;
				c.micro = 1;
				c.dc_of[0] = 0;
				c.dc_of[1] = 1;
				c.rtt = 0.010;
				c.tf_stage[0] = tf0s[i];
				c.tf_stage[1] = tf1s[j];
				c.tb_stage[0] = 3 * tf0s[i];
				c.tb_stage[1] = 0.5 * tf1s[j];
				CHECK(!pipe_cfg_finish(&c), "finish");
				double want = fmax(tf0s[i], c.rtt / 2) + xfer(&c, c.act_bytes) +
					      c.rtt / 2 + tf1s[j] + 0.5 * tf1s[j] +
					      xfer(&c, c.grad_bytes) + c.rtt / 2 + 3 * tf0s[i];
				double got = des(&c, &d, &o1);

				CHECK(fabs(got - want) < 1e-9, "%s tf0 %g tf1 %g: %.9f want %.9f",
				      pipe_sched_name(c.sched), tf0s[i], tf1s[j], got, want);
				pipe_des_free(&d);
			}
	printf("one micro-batch over a long link: closed form with per-stage times ok\n");
}

static void slow_stage(void)
{
	/* zero delay, 1F1B, stage 2 of 4 twice as slow: in steady state every
	 * cycle waits for it, so the iteration is at least M (tf2 + tb2) and
	 * the slow stage has the smallest bubble */
	struct pipe_cfg c;
	struct pipe_des_out d = {0};

	pipe_cfg_init(&c);
	c.stages = 4;
	c.micro = 16;
	for (uint32_t s = 0; s < 4; s++)
		c.dc_of[s] = 0;
	c.rtt = 0;
	c.tf = 0.001;
	c.tb = 0.002;
	c.tf_stage[2] = 0.002;
	c.tb_stage[2] = 0.004;
	CHECK(!pipe_cfg_finish(&c), "finish");
	double t = des(&c, &d, &o1);
	struct pipe_metrics m;

	pipe_metrics_get(&c, &d.ev, 0, &m);
	CHECK(t >= 16 * 0.006 - 1e-12, "iteration %g below M x slow cycle", t);
	for (uint32_t s = 0; s < 4; s++)
		CHECK(s == 2 || m.bubble[s] > m.bubble[2], "stage %u bubble %g vs slow stage %g", s,
		      m.bubble[s], m.bubble[2]);
	CHECK(fabs(m.busy[2] - 16 * 0.006) < 1e-9, "slow stage busy %g", m.busy[2]);
	pipe_des_free(&d);
	printf("a slow stage paces the pipeline: %.1f ms for 16 x 6 ms\n", t * 1e3);
}

static void schedules_follow(void)
{
	/* GeoPipe's dN covers the loop delay with whole cycles of the stage's
	 * own tf + tb: faster stages upstream of the link get more extra
	 * forwards than with the common (slower) times */
	struct pipe_cfg c;

	pipe_cfg_init(&c);
	c.sched = PIPE_SCHED_GEOPIPE;
	c.stages = 4;
	c.micro = 32;
	c.tf = 0.010;
	c.tb = 0.020;
	CHECK(!pipe_cfg_finish(&c), "finish");
	uint32_t d_common = pipe_stage_delta(&c, 0);

	for (uint32_t s = 0; s < 4; s++) {
		c.tf_stage[s] = 0.0025;
		c.tb_stage[s] = 0.005;
	}
	uint32_t d_fast = pipe_stage_delta(&c, 0);

	CHECK(d_fast > d_common, "dN with faster stages %u, common %u", d_fast, d_common);

	/* greedy: the cost model sees the per-stage times (a different order
	 * when one stage is much slower) and its DES stays valid */
	struct pipe_cfg g, h;
	char why[256];

	pipe_cfg_init(&g);
	g.sched = PIPE_SCHED_GREEDY;
	g.stages = 4;
	g.micro = 8;
	h = g;
	h.tf_stage[1] = 0.05;
	h.tb_stage[1] = 0.1;
	CHECK(!pipe_cfg_finish(&g) && !pipe_cfg_finish(&h), "finish");
	CHECK(!pipe_order_build(&g, &o1) && !pipe_order_build(&h, &o2), "build");
	CHECK(!pipe_order_check(&h, &o2, why, sizeof(why)), "greedy order with a slow stage: %s",
	      why);
	int differ = 0;

	for (uint32_t s = 0; s < 4; s++)
		differ |= o1.n[s] != o2.n[s] ||
			  memcmp(o1.ops[s], o2.ops[s], o1.n[s] * sizeof(uint16_t));
	CHECK(differ, "the greedy order ignores a stage 5x slower");
	printf("GeoPipe dN %u -> %u with 4x faster stages; greedy reorders around a slow stage\n",
	       d_common, d_fast);
}

static void refused(void)
{
	struct pipe_cfg c, d;

	pipe_cfg_init(&c);
	d = c;
	c.tf_stage[1] = -0.001;
	CHECK(pipe_cfg_finish(&c) == -EINVAL, "negative per-stage time accepted");
	c = d;
	c.tb_stage[0] = NAN;
	CHECK(pipe_cfg_finish(&c) == -EINVAL, "NaN per-stage time accepted");
	c = d;
	c.tf_stage[2] = 61;
	CHECK(pipe_cfg_finish(&c) == -EINVAL, "per-stage time above 60 s accepted");
	c = d;
	CHECK(!pipe_cfg_finish(&c) && !pipe_cfg_finish(&d), "defaults");
	uint64_t h0 = pipe_cfg_digest(&c);

	c.tf_stage[1] = c.tf;
	c.tb_stage[1] = c.tb;
	CHECK(pipe_cfg_digest(&c) != h0, "digest ignores per-stage times");
	c.tf_stage[1] = 0.5;
	CHECK(pipe_cfg_digest(&c) != h0, "digest ignores per-stage times");
	printf("bad per-stage times refused; digest covers them\n");
}

int main(void)
{
	same_as_common();
	closed_form();
	slow_stage();
	schedules_follow();
	refused();
	if (fails) {
		fprintf(stderr, "%d check(s) failed\n", fails);
		return 1;
	}
	printf("per-stage times: all checks passed\n");
	return 0;
}
