/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the optical layer (host/pipe/pipe_optical.h) on small
 * graphs: the K shortest paths of a 5-node graph found by hand, first fit
 * under continuity and contiguity with a guard slot, blocking when no
 * contiguous block is free on every link of a path, the three RSA
 * algorithms' choices, NSFNET's size, and a pipeline over a 2-node line
 * whose iteration (with a blocked transfer waiting for the release of its
 * own channel's previous lightpath) is computed by hand, plus the CBA rule
 * raising the slots of communication-bound requests.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipe.h"
#include "pipe_optical.h"
#include "sdr_test.h"

/*
 *      1
 *    / | \         0-1: 1   1-4: 1   0-2: 1   2-4: 2
 *   0--2--4        0-3: 2   3-4: 2   1-2: 1
 *    \   /
 *      3
 * 0 -> 4 by length: 0-1-4 (2), 0-2-4 (3, 2 hops), 0-2-1-4 (3, 3 hops),
 * 0-3-4 (4, 2 hops), 0-1-2-4 (4, 3 hops).
 */
static void small(struct opt_topo *t)
{
	opt_topo_init(t, 5);
	REQUIRE(opt_topo_add(t, 0, 1, 1) == 0, "add");
	opt_topo_add(t, 1, 4, 1);
	opt_topo_add(t, 0, 2, 1);
	opt_topo_add(t, 2, 4, 2);
	opt_topo_add(t, 0, 3, 2);
	opt_topo_add(t, 3, 4, 2);
	opt_topo_add(t, 1, 2, 1);
}

static int path_is(const struct opt_path *p, const uint8_t *nodes, uint32_t n, double km)
{
	return p->hops + 1 == n && memcmp(p->node, nodes, n) == 0 && p->km == km;
}

static void test_ksp(void)
{
	struct opt_topo t;
	struct opt_path p[OPT_MAX_K];
	static const uint8_t a[] = {0, 1, 4}, b[] = {0, 2, 4}, c[] = {0, 2, 1, 4}, d[] = {0, 3, 4},
			     e[] = {0, 1, 2, 4};

	small(&t);
	CHECK(opt_topo_add(&t, 1, 0, 5) == -EINVAL && opt_topo_add(&t, 2, 2, 1) == -EINVAL &&
		      opt_topo_add(&t, 0, 9, 1) == -EINVAL && opt_topo_add(&t, 3, 2, 0) == -EINVAL,
	      "bad links accepted");
	REQUIRE(opt_ksp(&t, 0, 4, 5, p) == 5, "five paths");
	CHECK(path_is(&p[0], a, 3, 2), "1st");
	CHECK(path_is(&p[1], b, 3, 3), "2nd");
	CHECK(path_is(&p[2], c, 4, 3), "3rd (tie on length: more hops)");
	CHECK(path_is(&p[3], d, 3, 4), "4th");
	CHECK(path_is(&p[4], e, 4, 4), "5th");
	/* fibres follow the nodes: 0-1 is link 0 in the a -> b direction */
	CHECK(p[0].fib[0] == 0 && p[0].fib[1] == 2, "fibres %u %u", p[0].fib[0], p[0].fib[1]);
	REQUIRE(opt_ksp(&t, 4, 0, 1, p) == 1, "reverse");
	CHECK(p[0].fib[0] == 3 && p[0].fib[1] == 1, "reverse fibres %u %u", p[0].fib[0],
	      p[0].fib[1]);
	CHECK(opt_ksp(&t, 0, 0, 4, p) == -EINVAL && opt_ksp(&t, 0, 4, 0, p) == -EINVAL, "bad args");
	/* the five above are every loopless path 0 -> 4: a larger K finds no more */
	{
		struct opt_path q[OPT_MAX_K];
		int n = opt_ksp(&t, 0, 4, OPT_MAX_K, q);

		CHECK(n == 5, "paths 0 -> 4: %d", n);
		for (int i = 1; i < n; i++)
			CHECK(q[i].km >= q[i - 1].km, "order");
	}
	/* unreachable */
	opt_topo_init(&t, 3);
	opt_topo_add(&t, 0, 1, 1);
	CHECK(opt_ksp(&t, 0, 2, 4, p) == 0, "unreachable");
	/* NSFNET */
	opt_topo_nsfnet(&t);
	CHECK(t.nodes == 14 && t.nlinks == 22, "nsfnet %u nodes %u links", t.nodes, t.nlinks);
	{
		double sum = 0;

		for (uint32_t l = 0; l < t.nlinks; l++)
			sum += t.km[l];
		CHECK(sum == 42600, "nsfnet total %g km", sum);
	}
}

static void test_spectrum(void)
{
	struct opt_topo t;
	struct opt_spec s;
	struct opt_path p[OPT_MAX_K];
	uint32_t start;

	small(&t);
	REQUIRE(opt_ksp(&t, 0, 4, 4, p) == 4, "paths");
	opt_spec_init(&s, 2 * t.nlinks, 8);
	CHECK(opt_first_fit(&s, &p[0], 3) == 0, "empty: slot 0");
	/* 0-1 has slots 0..2 in use, 1-4 has 4..7: along 0-1-4 only slot 3
	 * is free on both (continuity) */
	{
		struct opt_path one = p[0];

		one.hops = 1; /* fibre 0-1 only */
		opt_spec_set(&s, &one, 0, 3, 1);
		one.fib[0] = p[0].fib[1];
		opt_spec_set(&s, &one, 4, 4, 1);
		CHECK(opt_spec_count(&s, p[0].fib[0]) == 3 && opt_spec_count(&s, p[0].fib[1]) == 4,
		      "counts");
	}
	CHECK(opt_first_fit(&s, &p[0], 1) == 3, "one slot at 3");
	CHECK(opt_first_fit(&s, &p[0], 2) == -1, "no 2 contiguous on both: blocked");
	/* KSP-FF: path 0 blocked for width 2, path 1 (0-2-4) is empty */
	CHECK(opt_rsa(&s, OPT_KSP_FF, p, 4, 2, &start) == 1 && start == 0, "ksp-ff -> path 1");
	CHECK(opt_rsa(&s, OPT_SD_FF, p, 4, 2, &start) == -1, "sd-ff: shortest only, blocked");
	CHECK(opt_rsa(&s, OPT_SD_FF, p, 4, 1, &start) == 0 && start == 3, "sd-ff: fits at 3");
	/* contiguity: a width-1 block at slot 3 of path 0 sits between used
	 * slots on both fibres; CD takes it although path 1 is emptier */
	CHECK(opt_rsa(&s, OPT_CD, p, 4, 1, &start) == 0 && start == 3, "cd prefers the hole");
	/* with width 2, CD weighs length and congestion: path 1 (3 km, empty,
	 * block at the band edge) before 0-2-1-4 and 0-3-4 */
	CHECK(opt_rsa(&s, OPT_CD, p, 4, 2, &start) == 1 && start == 0, "cd width 2");
	/* release frees exactly what was taken */
	opt_spec_set(&s, &p[1], 0, 2, 1);
	CHECK(opt_first_fit(&s, &p[1], 2) == 2, "next fit after a taken block");
	opt_spec_set(&s, &p[1], 0, 2, 0);
	CHECK(opt_first_fit(&s, &p[1], 8) == 0, "released");
	CHECK(opt_first_fit(&s, &p[1], 9) == -1 && opt_first_fit(&s, &p[1], 0) == -1, "widths");
	/* a full band blocks every algorithm */
	opt_spec_set(&s, &p[0], 0, 8, 1);
	opt_spec_set(&s, &p[1], 0, 8, 1);
	opt_spec_set(&s, &p[3], 0, 8, 1);
	CHECK(opt_rsa(&s, OPT_KSP_FF, p, 4, 1, &start) == -1 &&
		      opt_rsa(&s, OPT_CD, p, 4, 1, &start) == -1,
	      "full band: 0-2-1-4 shares full fibres");
	{
		enum opt_alg a;

		CHECK(opt_alg_parse("cd", &a) == 0 && a == OPT_CD &&
			      opt_alg_parse("x", &a) == -EINVAL,
		      "alg names");
	}
}

/*
 * Two DCs on a 2-node line of 1000 km (5 ms), 1 slot of 75 Gbit/s per
 * request plus 1 guard, 2 slots per fibre: one lightpath per direction at
 * a time. S = 2, M = 2, GPipe (non-blocking), tf 10 ms, tb 12 ms, 128 MiB:
 * T = 14.3165... ms per transfer, P = 5 ms. The second activation finds its
 * channel's first lightpath still held (until it arrived) and waits P; the
 * second gradient too. Iteration = 2 tf + 2 tb + 4 T + 4 P.
 */
static void line_setup(struct opt_cfg *oc, struct pipe_cfg *pc, struct pipe_prog *prog)
{
	static struct pipe_order ord;

	opt_cfg_default(oc);
	opt_topo_init(&oc->topo, 2);
	opt_topo_add(&oc->topo, 0, 1, 1000);
	oc->nfs = 2;
	oc->fs_init = oc->fs_min = 1;
	oc->fs_max = 1;
	oc->bg_prob = 0;
	oc->dc_node[0] = 0;
	oc->dc_node[1] = 1;
	pipe_cfg_init(pc);
	pc->stages = 2;
	pc->dc_of[0] = 0;
	pc->dc_of[1] = 1;
	pc->micro = 2;
	pc->sched = PIPE_SCHED_GPIPE;
	pc->comm = PIPE_COMM_NONBLOCKING;
	pc->tf = 0.010;
	pc->tb = 0.012;
	pc->act_bytes = pc->grad_bytes = 128u << 20;
	REQUIRE(pipe_cfg_finish(pc) == 0, "finish");
	REQUIRE(pipe_order_build(pc, &ord) == 0 && pipe_prog_build(pc, &ord, prog) == 0, "prog");
}

static void test_line(void)
{
	struct opt_cfg oc;
	struct pipe_cfg pc;
	struct pipe_prog prog;
	struct opt_iter it[3];
	double T = (double)(128u << 20) * 8 / 75e9, P = 0.005;

	line_setup(&oc, &pc, &prog);
	REQUIRE(opt_run(&oc, &pc, &prog, 2, it) == 0, "run");
	for (int i = 0; i < 2; i++) {
		double want = 2 * pc.tf + 2 * pc.tb + 4 * T + 4 * P;

		CHECK(fabs(it[i].iter_time - want) < 1e-12, "iteration %d: %.9f want %.9f", i,
		      it[i].iter_time, want);
		CHECK(it[i].pp_req == 4 && it[i].pp_blocked == 2 && it[i].pp_retries == 2,
		      "requests %u blocked %u retries %u", it[i].pp_req, it[i].pp_blocked,
		      it[i].pp_retries);
		CHECK(fabs(it[i].wait_blocked - 2 * P) < 1e-12, "blocked wait %.9f",
		      it[i].wait_blocked);
		CHECK(it[i].fs_mean == 1 && it[i].bg_req == 0, "slots, background");
	}
	/* a fixed retry of 2 ms: retries at +2, +4, +6 ms, the third succeeds */
	oc.retry = 0.002;
	REQUIRE(opt_run(&oc, &pc, &prog, 1, it) == 0, "run retry");
	CHECK(fabs(it[0].iter_time - (2 * pc.tf + 2 * pc.tb + 4 * T + 4 * P + 0.002)) < 1e-9,
	      "retry: %.9f", it[0].iter_time);
	CHECK(it[0].pp_retries == 6 && fabs(it[0].wait_blocked - 0.012) < 1e-9,
	      "retries %u wait %g", it[0].pp_retries, it[0].wait_blocked);
	/* CBA with room (8 slots): in iteration 0 every transfer is
	 * communication-bound (micro-batch 0 by definition, 1 because its
	 * consumer waited) and none is blocked, so iteration 1 asks 2 slots
	 * everywhere; then micro-batch 1's transfers arrive just as their
	 * consumers get ready (a tie: CB or not by rounding) and micro-batch
	 * 0's go to 3 */
	oc.retry = 0;
	oc.nfs = 8;
	oc.fs_max = 3;
	oc.cba = 1;
	REQUIRE(opt_run(&oc, &pc, &prog, 3, it) == 0, "run cba");
	CHECK(it[0].fs_mean == 1 && it[1].fs_mean == 2 && it[2].fs_mean >= 2.5 &&
		      it[2].fs_mean <= 3,
	      "slots %g %g %g", it[0].fs_mean, it[1].fs_mean, it[2].fs_mean);
	CHECK(it[0].ncb == 4 && it[0].pp_blocked == 0, "cb %u blocked %u", it[0].ncb,
	      it[0].pp_blocked);
	CHECK(it[2].iter_time < it[1].iter_time && it[1].iter_time < it[0].iter_time,
	      "more slots, shorter iterations");
	/* configuration errors */
	oc.fs_max = 8; /* plus the guard: wider than the band */
	CHECK(opt_run(&oc, &pc, &prog, 1, it) == -EINVAL, "request wider than a fibre");
	oc.fs_max = 3;
	oc.dc_node[1] = 0;
	CHECK(opt_run(&oc, &pc, &prog, 1, it) == -EINVAL, "two DCs on one node");
	pipe_prog_free(&prog);
}

/* Background: reproducible from the seed; blocking counted. */
static void test_background(void)
{
	struct opt_cfg oc;
	struct pipe_cfg pc;
	struct pipe_prog prog;
	struct opt_iter a[2], b[2];

	line_setup(&oc, &pc, &prog);
	opt_topo_nsfnet(&oc.topo);
	oc.nfs = 80;
	oc.fs_max = 6;
	oc.fs_init = 0; /* random per request */
	oc.bg_prob = 0.95;
	oc.dc_node[1] = 12;
	REQUIRE(opt_run(&oc, &pc, &prog, 2, a) == 0 && opt_run(&oc, &pc, &prog, 2, b) == 0, "runs");
	CHECK(memcmp(a, b, sizeof(a)) == 0, "same seed, same run");
	CHECK(a[0].bg_req > 0 && a[0].bg_req % 60 == 0 && a[0].bg_req <= 60 * a[0].pp_req,
	      "background %u for %u PP requests", a[0].bg_req, a[0].pp_req);
	oc.seed = 2;
	REQUIRE(opt_run(&oc, &pc, &prog, 2, b) == 0, "seed 2");
	CHECK(memcmp(a, b, sizeof(a)) != 0, "another seed, the same run");
	pipe_prog_free(&prog);
}

int main(void)
{
	test_ksp();
	test_spectrum();
	test_line();
	test_background();
	return t_finish("pipe_optical");
}
