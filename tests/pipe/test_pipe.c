/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of sdr-pipe's schedules and discrete-event simulator: order
 * validity for every schedule over a grid of shapes, placements and delays;
 * dependency order and link timing of the DES, checked here directly from
 * its events (not only through pipe_events_check()); closed forms at zero
 * delay and for one micro-batch over a long link; memory budgets; payload
 * checksums; and that the checkers reject broken input.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipe.h"
#include "sdr_test.h"

static struct pipe_order ord;

static double xfer(const struct pipe_cfg *c, uint64_t bytes)
{
	return (double)pipe_wire_bytes(c, bytes) * 8 / (double)c->rate_bps;
}

/* peak in-flight activations allowed by the schedule at stage s */
static uint32_t bound(const struct pipe_cfg *c, uint32_t s)
{
	uint32_t p = c->stages - s < c->micro ? c->stages - s : c->micro,
		 b = pipe_stage_budget(c, s);

	switch (c->sched) {
	case PIPE_SCHED_GPIPE: return c->micro;
	case PIPE_SCHED_1F1B: return p;
	case PIPE_SCHED_GEOPIPE: return b > p ? b : p;
	default: return b;
	}
}

/* Independent checks of one DES run; returns the iteration time. */
static double check_des(const struct pipe_cfg *c, const char *tag)
{
	struct pipe_prog prog;
	struct pipe_des_out out;
	uint32_t S = c->stages, M = c->micro;
	double fs[PIPE_MAX_STAGES][64], fe[PIPE_MAX_STAGES][64], bs[PIPE_MAX_STAGES][64],
		be[PIPE_MAX_STAGES][64];
	int nf[PIPE_MAX_STAGES][64] = {{0}}, nb[PIPE_MAX_STAGES][64] = {{0}};
	double last_end[PIPE_MAX_STAGES];
	uint32_t infl[PIPE_MAX_STAGES] = {0}, peak[PIPE_MAX_STAGES] = {0};
	char why[256];
	double it = 0;
	int rc;

	rc = pipe_order_build(c, &ord);
	CHECK(rc == 0, "%s: order_build %d", tag, rc);
	rc = pipe_order_check(c, &ord, why, sizeof(why));
	CHECK(rc == 0, "%s: order_check: %s", tag, why);
	if (pipe_prog_build(c, &ord, &prog)) {
		CHECK(0, "%s: prog_build", tag);
		return 0;
	}
	rc = pipe_des_run(c, &prog, &out);
	CHECK(rc == 0, "%s: des %d", tag, rc);
	if (rc) {
		pipe_prog_free(&prog);
		return 0;
	}
	for (uint32_t s = 0; s < S; s++)
		last_end[s] = 0;
	for (size_t i = 0; i < out.ev.n; i++) {
		const struct pipe_event *x = &out.ev.ev[i];

		if (x->kind != PIPE_I_COMPUTE)
			continue;
		CHECK(x->t0 >= last_end[x->stage] - 1e-12, "%s: stage %u computes overlap", tag,
		      x->stage);
		last_end[x->stage] = x->t1;
		CHECK(fabs(x->t1 - x->t0 - (x->op == PIPE_F ? c->tf : c->tb)) < 1e-12,
		      "%s: duration", tag);
		if (x->op == PIPE_F) {
			nf[x->stage][x->m]++;
			fs[x->stage][x->m] = x->t0;
			fe[x->stage][x->m] = x->t1;
			if (++infl[x->stage] > peak[x->stage])
				peak[x->stage] = infl[x->stage];
		} else {
			nb[x->stage][x->m]++;
			bs[x->stage][x->m] = x->t0;
			be[x->stage][x->m] = x->t1;
			infl[x->stage]--;
		}
		if (x->t1 > it)
			it = x->t1;
	}
	for (uint32_t s = 0; s < S; s++) {
		CHECK(peak[s] <= bound(c, s), "%s: stage %u peak %u > bound %u", tag, s, peak[s],
		      bound(c, s));
		for (uint32_t m = 0; m < M; m++) {
			CHECK(nf[s][m] == 1 && nb[s][m] == 1, "%s: stage %u mb %u: %d F %d B", tag,
			      s, m, nf[s][m], nb[s][m]);
			if (nf[s][m] != 1 || nb[s][m] != 1)
				continue;
			CHECK(bs[s][m] >= fe[s][m] - 1e-12, "%s: B(%u,%u) before F ended", tag, s,
			      m);
			if (s > 0) {
				int x = c->dc_of[s] != c->dc_of[s - 1];
				double need = fe[s - 1][m] +
					      (x ? c->rtt / 2 + xfer(c, c->act_bytes) : 0);

				CHECK(fs[s][m] >= need - 1e-9,
				      "%s: F(%u,%u) at %.6f, input at %.6f", tag, s, m, fs[s][m],
				      need);
			}
			if (s < S - 1) {
				int x = c->dc_of[s] != c->dc_of[s + 1];
				double need = be[s + 1][m] +
					      (x ? c->rtt / 2 + xfer(c, c->grad_bytes) : 0);

				CHECK(bs[s][m] >= need - 1e-9,
				      "%s: B(%u,%u) at %.6f, input at %.6f", tag, s, m, bs[s][m],
				      need);
			}
		}
	}
	/* link: one transmission at a time per direction, each after its send */
	for (size_t i = 0; i < out.ntx; i++)
		for (size_t j = 0; j < out.ntx; j++) {
			const struct pipe_tx *a = &out.tx[i], *b = &out.tx[j];

			if (i == j ||
			    c->dc_of[pipe_ch_src(a->chan)] != c->dc_of[pipe_ch_src(b->chan)])
				continue;
			CHECK(a->t_end <= b->t_start + 1e-12 || b->t_end <= a->t_start + 1e-12,
			      "%s: link transmissions overlap", tag);
		}
	rc = pipe_events_check(c, &prog, &out.ev, 1, 0, why, sizeof(why));
	CHECK(rc == 0, "%s: events_check: %s", tag, why);
	pipe_des_free(&out);
	pipe_prog_free(&prog);
	return it;
}

static void test_grid(void)
{
	static const uint32_t Ss[] = {2, 3, 4, 8};
	static const uint32_t Ms[] = {1, 2, 3, 8, 17, 32};
	static const double rtts[] = {0, 0.01, 0.05};
	int n = 0;

	for (int sc = 0; sc < PIPE_SCHED_COUNT; sc++)
		for (size_t a = 0; a < sizeof(Ss) / sizeof(Ss[0]); a++)
			for (size_t b = 0; b < sizeof(Ms) / sizeof(Ms[0]); b++)
				for (size_t r = 0; r < 3; r++)
					for (int alt = 0; alt < 2; alt++)
						for (int comm = 1; comm <= 2; comm++) {
							struct pipe_cfg c;
							char tag[128];

							pipe_cfg_init(&c);
							c.sched = (enum pipe_sched)sc;
							c.stages = Ss[a];
							c.micro = Ms[b];
							c.rtt = rtts[r];
							c.comm = (enum pipe_comm)comm;
							c.rate_bps = r == 2 ? 100000000ull
									    : 1000000000ull;
							for (uint32_t s = 0; s < c.stages; s++)
								c.dc_of[s] =
									alt ? s & 1
									    : s >= c.stages / 2;
							if (alt && sc == PIPE_SCHED_GREEDY)
								c.mem_budget = 2;
							if (comm == 1 && sc >= PIPE_SCHED_GEOPIPE) {
								/* non-blocking by construction */
								CHECK(pipe_cfg_finish(&c) ==
									      -EINVAL,
								      "blocking %s accepted",
								      pipe_sched_name(c.sched));
								continue;
							}
							CHECK(pipe_cfg_finish(&c) == 0, "finish");
							snprintf(tag, sizeof(tag),
								 "%s S=%u M=%u rtt=%g %s %s",
								 pipe_sched_name(c.sched), c.stages,
								 c.micro, c.rtt,
								 alt ? "alt" : "half",
								 comm == 1 ? "blocking"
									   : "nonblocking");
							check_des(&c, tag);
							n++;
						}
	printf("grid: %d configurations\n", n);
}

/* zero link delay: every schedule (1F1B-family at its default memory) takes
 * (M + S - 1)(tf + tb) and each stage idles (S-1)/(M+S-1) */
static void test_closed_zero_delay(void)
{
	for (int sc = 0; sc < PIPE_SCHED_COUNT; sc++)
		for (uint32_t S = 2; S <= 8; S += 3)
			for (uint32_t M = 1; M <= 24; M += 7) {
				struct pipe_cfg c;
				struct pipe_prog prog;
				struct pipe_des_out out;
				struct pipe_metrics m;

				pipe_cfg_init(&c);
				c.sched = (enum pipe_sched)sc;
				c.stages = S;
				c.micro = M;
				c.rtt = 0;
				c.rate_bps = 10000000000000ull;
				c.act_bytes = c.grad_bytes = 64;
				c.tf = 0.01;
				c.tb = 0.02;
				CHECK(pipe_cfg_finish(&c) == 0, "finish");
				CHECK(pipe_order_build(&c, &ord) == 0, "order");
				CHECK(pipe_prog_build(&c, &ord, &prog) == 0, "prog");
				CHECK(pipe_des_run(&c, &prog, &out) == 0, "des");
				pipe_metrics_get(&c, &out.ev, 0, &m);
				double want = (M + S - 1) * (c.tf + c.tb),
				       bub = (S - 1.0) / (M + S - 1.0);

				CHECK(fabs(m.iter_time - want) < 1e-6,
				      "%s S=%u M=%u: iteration %.9f want %.9f",
				      pipe_sched_name(c.sched), S, M, m.iter_time, want);
				CHECK(fabs(m.bubble_all - bub) < 1e-6,
				      "%s S=%u M=%u: bubble %.6f want %.6f",
				      pipe_sched_name(c.sched), S, M, m.bubble_all, bub);
				for (uint32_t s = 0; s < S; s++)
					CHECK(fabs(m.bubble[s] - bub) < 1e-6, "stage bubble");
				pipe_des_free(&out);
				pipe_prog_free(&prog);
			}
}

/* S = 2 across the link, M = 1: F0, clear-to-send and transfer of the
 * activation, F1 B1, gradient back, B0. */
static void test_closed_one_micro(void)
{
	for (int comm = 1; comm <= 2; comm++)
		for (int rel = 0; rel < 2; rel++) {
			struct pipe_cfg c;
			struct pipe_prog prog;
			struct pipe_des_out out;
			struct pipe_metrics m;

			pipe_cfg_init(&c);
			c.stages = 2;
			c.dc_of[0] = 0;
			c.dc_of[1] = 1;
			c.micro = 1;
			c.tf = 0.010;
			c.tb = 0.020;
			c.rtt = 0.025;
			c.rate_bps = 100000000ull;
			c.act_bytes = 1 << 20;
			c.grad_bytes = 1 << 18;
			c.comm = (enum pipe_comm)comm;
			c.rel.rel = rel ? SDR_REL_SR : SDR_REL_NONE;
			CHECK(pipe_cfg_finish(&c) == 0, "finish");
			CHECK(pipe_order_build(&c, &ord) == 0, "order");
			CHECK(pipe_prog_build(&c, &ord, &prog) == 0, "prog");
			CHECK(pipe_des_run(&c, &prog, &out) == 0, "des");
			pipe_metrics_get(&c, &out.ev, 0, &m);
			double L = c.rtt / 2;
			double want = fmax(c.tf, L) + xfer(&c, c.act_bytes) + L + c.tf + c.tb +
				      xfer(&c, c.grad_bytes) + L + c.tb;

			CHECK(fabs(m.iter_time - want) < 1e-9, "comm %d rel %d: %.9f want %.9f",
			      comm, rel, m.iter_time, want);
			CHECK(m.bytes_cross == c.act_bytes + c.grad_bytes && m.bytes_local == 0,
			      "bytes");
			pipe_des_free(&out);
			pipe_prog_free(&prog);
		}
}

/* a bandwidth-bound link: the M activations queue, so the last stage's last
 * F cannot start before M transfers (plus rtt/2) after the first send */
static void test_link_queue(void)
{
	struct pipe_cfg c;
	struct pipe_prog prog;
	struct pipe_des_out out;

	pipe_cfg_init(&c);
	c.stages = 2;
	c.dc_of[0] = 0;
	c.dc_of[1] = 1;
	c.micro = 8;
	c.sched = PIPE_SCHED_GPIPE;
	c.comm = PIPE_COMM_NONBLOCKING;
	c.tf = 0.001;
	c.tb = 0.002;
	c.rtt = 0.01;
	c.rate_bps = 100000000ull;
	c.act_bytes = 1 << 20; /* ~86 ms per transfer */
	CHECK(pipe_cfg_finish(&c) == 0, "finish");
	CHECK(pipe_order_build(&c, &ord) == 0, "order");
	CHECK(pipe_prog_build(&c, &ord, &prog) == 0, "prog");
	CHECK(pipe_des_run(&c, &prog, &out) == 0, "des");
	for (size_t i = 0; i < out.ev.n; i++) {
		const struct pipe_event *x = &out.ev.ev[i];

		if (x->kind == PIPE_I_COMPUTE && x->stage == 1 && x->op == PIPE_F) {
			/* the first send waits for the clear-to-send (rtt/2) */
			double want = fmax(c.tf, c.rtt / 2) + (x->m + 1) * xfer(&c, c.act_bytes) +
				      c.rtt / 2;

			CHECK(fabs(x->t0 - want) < 1e-9, "F(1,%u) at %.6f want %.6f", x->m, x->t0,
			      want);
		}
	}
	CHECK(out.ntx == 2 * c.micro, "ntx %zu", out.ntx);
	pipe_des_free(&out);
	pipe_prog_free(&prog);
}

/* non-blocking never loses to blocking on the same order; GeoPipe and the
 * greedy schedule beat blocking 1F1B once the link is long */
static void test_orderings(void)
{
	struct pipe_cfg c;
	double t1, tnb, tgeo, tgr;

	pipe_cfg_init(&c);
	c.stages = 8;
	c.micro = 16;
	c.tf = 0.0125;
	c.tb = 0.025;
	c.rtt = 0.025;
	c.sched = PIPE_SCHED_1F1B;
	for (uint32_t s = 0; s < c.stages; s++)
		c.dc_of[s] = s >= 4;
	CHECK(pipe_cfg_finish(&c) == 0, "finish");
	t1 = check_des(&c, "1f1b");
	c.comm = PIPE_COMM_NONBLOCKING;
	tnb = check_des(&c, "1f1b nb");
	c.sched = PIPE_SCHED_GEOPIPE;
	tgeo = check_des(&c, "geopipe");
	c.sched = PIPE_SCHED_GREEDY;
	tgr = check_des(&c, "greedy");
	CHECK(tnb <= t1 + 1e-9, "non-blocking %.6f > blocking %.6f", tnb, t1);
	CHECK(tgeo < t1 && tgr < t1, "geopipe %.6f greedy %.6f 1f1b %.6f", tgeo, tgr, t1);
	/* GeoPipe's extras: only upstream of the link, not growing downstream */
	c.sched = PIPE_SCHED_GEOPIPE;
	for (uint32_t s = 0; s < c.stages; s++) {
		CHECK(s < 4 ? pipe_stage_delta(&c, s) >= 1 : pipe_stage_delta(&c, s) == 0,
		      "dN(%u) = %u", s, pipe_stage_delta(&c, s));
		if (s)
			CHECK(pipe_stage_delta(&c, s) <= pipe_stage_delta(&c, s - 1), "dN grows");
	}
	/* a budget caps them: stage 0 already holds S */
	c.mem_budget = c.stages;
	CHECK(pipe_stage_delta(&c, 0) == 0, "budget ignored");
	c.mem_budget = c.stages + 1;
	c.delta_n = 5;
	CHECK(pipe_stage_delta(&c, 0) == 1 && pipe_stage_delta(&c, 3) == 1, "budget S+1");
	check_des(&c, "geopipe budget S+1");
	c.sched = PIPE_SCHED_GREEDY;
	c.mem_budget = 1;
	check_des(&c, "greedy budget 1");
}

/* The defaults sdr-pipe --help states: --mem-budget is S for greedy and M
 * for geopipe; --delta-n is the auto rule ceil(k * (rtt + act/rate +
 * grad/rate) / (tf + tb) - 0.05) per stage with k crossings downstream,
 * capped by the budget and by M, non-increasing downstream. */
static void test_defaults(void)
{
	struct pipe_cfg c;

	pipe_cfg_init(&c);
	CHECK(c.mem_budget == 0 && c.delta_n == UINT32_MAX, "defaults not 'unset'");
	c.stages = 8;
	c.micro = 16;
	for (uint32_t s = 0; s < c.stages; s++)
		c.dc_of[s] = s >= 4;
	c.sched = PIPE_SCHED_GREEDY;
	CHECK(pipe_cfg_finish(&c) == 0, "finish");
	CHECK(pipe_stage_budget(&c, 0) == 8 && pipe_stage_budget(&c, 7) == 8, "greedy: S");
	c.sched = PIPE_SCHED_GEOPIPE;
	CHECK(pipe_stage_budget(&c, 0) == 16 && pipe_stage_budget(&c, 7) == 16, "geopipe: M");
	/* 25 ms RTT, 900 Mbit/s, 256 KiB each way (2.37 ms on the wire each),
	 * tf + tb = 37.5 ms: ceil(29.75 / 37.5 - 0.05) = 1 upstream of the link */
	for (uint32_t s = 0; s < c.stages; s++)
		CHECK(pipe_stage_delta(&c, s) == (s < 4 ? 1u : 0u), "auto dN(%u) = %u", s,
		      pipe_stage_delta(&c, s));
	/* 100 ms RTT: ceil(104.75 / 37.5 - 0.05) = 3 */
	c.rtt = 0.1;
	CHECK(pipe_stage_delta(&c, 0) == 3 && pipe_stage_delta(&c, 3) == 3 &&
		      pipe_stage_delta(&c, 4) == 0,
	      "auto dN at 100 ms: %u", pipe_stage_delta(&c, 0));
	/* two crossings downstream of stage 0 (0 1 1 1 0 0 0 0): k = 2 there */
	for (uint32_t s = 0; s < c.stages; s++)
		c.dc_of[s] = s >= 1 && s <= 3;
	c.rtt = 0.025;
	CHECK(pipe_stage_delta(&c, 0) == 2 && pipe_stage_delta(&c, 1) == 1 &&
		      pipe_stage_delta(&c, 4) == 0,
	      "auto dN, two crossings: %u %u", pipe_stage_delta(&c, 0), pipe_stage_delta(&c, 1));
	/* capped by M: M = S leaves stage 0 no room */
	c.micro = 8;
	CHECK(pipe_stage_budget(&c, 0) == 8 && pipe_stage_delta(&c, 0) == 0, "dN above M");
	/* an explicit --delta-n replaces the rule */
	c.micro = 16;
	c.delta_n = 2;
	CHECK(pipe_stage_delta(&c, 0) == 2, "explicit dN");
}

static void test_checkers_fail(void)
{
	struct pipe_cfg c;
	struct pipe_prog prog;
	struct pipe_des_out out;
	char why[256];

	pipe_cfg_init(&c);
	c.sched = PIPE_SCHED_1F1B;
	c.stages = 4;
	c.micro = 4;
	CHECK(pipe_cfg_finish(&c) == 0, "finish");
	CHECK(pipe_order_build(&c, &ord) == 0, "order");
	CHECK(pipe_order_check(&c, &ord, why, sizeof(why)) == 0, "valid order");
	/* swap F0 and B0... of stage 3 (F0 B0 F1 B1): B before F */
	uint16_t t = ord.ops[3][0];

	ord.ops[3][0] = ord.ops[3][1];
	ord.ops[3][1] = t;
	CHECK(pipe_order_check(&c, &ord, why, sizeof(why)) == -EINVAL, "B before F accepted");
	CHECK(pipe_order_build(&c, &ord) == 0, "order");
	ord.ops[0][0] = PIPE_OP(1, PIPE_F); /* F1 twice */
	CHECK(pipe_order_check(&c, &ord, why, sizeof(why)) == -EINVAL, "duplicate accepted");
	/* over budget: GPipe's order under 1F1B's bound */
	c.sched = PIPE_SCHED_GPIPE;
	CHECK(pipe_order_build(&c, &ord) == 0, "order");
	c.sched = PIPE_SCHED_1F1B;
	CHECK(pipe_order_check(&c, &ord, why, sizeof(why)) == -EINVAL, "budget not enforced");

	CHECK(pipe_order_build(&c, &ord) == 0, "order");
	CHECK(pipe_prog_build(&c, &ord, &prog) == 0, "prog");
	CHECK(pipe_des_run(&c, &prog, &out) == 0, "des");
	CHECK(pipe_events_check(&c, &prog, &out.ev, 1, 0, why, sizeof(why)) == 0, "%s", why);
	for (size_t i = 0; i < out.ev.n; i++) {
		struct pipe_event *x = &out.ev.ev[i];

		if (x->kind == PIPE_I_WAIT_RECV && x->stage == 2 && x->m == 1 && !(x->chan & 1)) {
			x->csum ^= 1; /* a payload the sender did not send */
			CHECK(pipe_events_check(&c, &prog, &out.ev, 1, 0, why, sizeof(why)) ==
				      -EINVAL,
			      "bad checksum accepted");
			x->csum ^= 1;
		}
		if (x->kind == PIPE_I_COMPUTE && x->stage == 1 && x->m == 2 && x->op == PIPE_F) {
			double t0 = x->t0, t1 = x->t1;

			x->t0 -= 0.5; /* before F(0,2) ended */
			x->t1 -= 0.5;
			CHECK(pipe_events_check(&c, &prog, &out.ev, 1, 0, why, sizeof(why)) ==
				      -EINVAL,
			      "early F accepted");
			x->t0 = t0;
			x->t1 = t1;
		}
	}
	/* a missing event */
	out.ev.n--;
	CHECK(pipe_events_check(&c, &prog, &out.ev, 1, 0, why, sizeof(why)) == -EINVAL,
	      "missing event accepted");
	out.ev.n++;
	/* one DC only: stages 2, 3 removed, partial check passes */
	{
		struct pipe_events e = {0};

		for (size_t i = 0; i < out.ev.n; i++)
			if (out.ev.ev[i].stage < 2)
				pipe_events_add(&e, &out.ev.ev[i]);
		CHECK(pipe_events_check(&c, &prog, &e, 1, 1, why, sizeof(why)) == 0, "partial: %s",
		      why);
		CHECK(pipe_events_check(&c, &prog, &e, 1, 0, why, sizeof(why)) == -EINVAL,
		      "incomplete log accepted");
		pipe_events_free(&e);
	}
	pipe_des_free(&out);
	/* stage 0 waiting for gradient 0 before its first forward: circular */
	memmove(prog.ins[0] + 1, prog.ins[0], prog.n[0] * sizeof(struct pipe_ins));
	prog.ins[0][0] = (struct pipe_ins){
		.kind = PIPE_I_WAIT_RECV, .m = 0, .chan = PIPE_CH_GRAD(0)};
	prog.n[0]++;
	CHECK(pipe_des_run(&c, &prog, &out) == -EDEADLK, "deadlock not detected");
	pipe_prog_free(&prog);
}

static void test_payload(void)
{
	static uint8_t b[5000];
	uint64_t cs, cs2;

	cs = pipe_payload_fill(b, sizeof(b), 7, 3, 5, 9);
	CHECK(pipe_payload_check(b, sizeof(b), 3, 5, 9, &cs2) == 0 && cs2 == cs, "roundtrip");
	CHECK(pipe_payload_check(b, sizeof(b), 3, 5, 8, &cs2) == -EPROTO, "wrong m");
	CHECK(pipe_payload_check(b, sizeof(b), 4, 5, 9, &cs2) == -EPROTO, "wrong iter");
	CHECK(pipe_payload_check(b, sizeof(b) - 1, 3, 5, 9, &cs2) == -EBADMSG, "wrong len");
	for (size_t i = PIPE_HDR_BYTES; i < sizeof(b); i += 613) {
		b[i] ^= 0x10;
		CHECK(pipe_payload_check(b, sizeof(b), 3, 5, 9, &cs2) == -EBADMSG, "flip %zu", i);
		b[i] ^= 0x10;
	}
	CHECK(pipe_payload_fill(b, sizeof(b), 7, 3, 5, 10) != cs,
	      "distinct messages same checksum");
}

static void test_parse(void)
{
	struct pipe_cfg c;
	struct sdr_scheme r;
	char buf[32];

	pipe_cfg_init(&c);
	CHECK(pipe_place_parse("4,4", &c) == 0 && c.stages == 8 && c.dc_of[3] == 0 &&
		      c.dc_of[4] == 1,
	      "4,4");
	CHECK(pipe_place_parse("0,1,0", &c) == 0 && c.stages == 3 && c.dc_of[1] == 1, "0,1,0");
	CHECK(pipe_place_parse("0,2,0", &c) == -EINVAL, "dc 2");
	CHECK(pipe_place_parse("0,", &c) == -EINVAL || c.stages == 1, "trailing comma");
	CHECK(pipe_place_parse("", &c) == -EINVAL, "empty");
	CHECK(pipe_place_parse("x", &c) == -EINVAL, "x");
	CHECK(pipe_rel_parse("sr", &r) == 0 && r.rel == SDR_REL_SR, "sr");
	CHECK(pipe_rel_parse("ec:rs:32:8", &r) == 0 && r.rel == SDR_REL_EC && r.k == 32 && r.m == 8,
	      "ec");
	CHECK(strcmp(pipe_rel_format(&r, buf, sizeof(buf)), "ec:rs:32:8") == 0, "format");
	CHECK(pipe_rel_parse("ec:rs:0:8", &r) == -EINVAL, "k 0");
	CHECK(pipe_rel_parse("ec:foo:4:2", &r) == -EINVAL, "code");
	CHECK(pipe_rel_parse("ec:rs:4:2x", &r) == -EINVAL, "trailing");
	CHECK(pipe_rel_parse("tcp", &r) == -EINVAL, "tcp");
	pipe_cfg_init(&c);
	c.stages = 1;
	CHECK(pipe_cfg_finish(&c) == -EINVAL, "S=1");
	pipe_cfg_init(&c);
	c.act_bytes = 8;
	CHECK(pipe_cfg_finish(&c) == -EINVAL, "act below header");
	pipe_cfg_init(&c);
	c.tf = NAN;
	CHECK(pipe_cfg_finish(&c) == -EINVAL, "nan");
	pipe_cfg_init(&c);
	struct pipe_cfg d = c;

	CHECK(pipe_cfg_finish(&c) == 0 && pipe_cfg_finish(&d) == 0, "finish");
	CHECK(pipe_cfg_digest(&c) == pipe_cfg_digest(&d), "digest");
	d.micro++;
	CHECK(pipe_cfg_digest(&c) != pipe_cfg_digest(&d), "digest ignores M");
}

int main(void)
{
	test_parse();
	test_payload();
	test_closed_zero_delay();
	test_closed_one_micro();
	test_link_queue();
	test_orderings();
	test_defaults();
	test_checkers_fail();
	test_grid();
	if (t_failures) {
		fprintf(stderr, "%d checks failed\n", t_failures);
		return 1;
	}
	printf("pipe: all checks passed\n");
	return 0;
}
