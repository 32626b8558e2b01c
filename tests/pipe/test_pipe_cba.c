/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of CBA (host/pipe/pipe_cba.h): labels on constructed event logs
 * (a transfer that arrived after its consumer's predecessor finished plus
 * the intra-DC latency is communication-bound, one that arrived before is
 * not, micro-batch 0 always is), the per-request rule, the aggregation to
 * flows, and the policies' invariants (capacities never exceeded, equal =
 * fair share on every link including a shared bottleneck, refused requests
 * reported and kept at their previous rate, cuts always granted); the slack
 * model against the DES; cba-shift on built labels (donors with slack,
 * costly donors, the margin, reversals, the undo), its invariants over
 * random rounds, and in the DES over iterations on a shared bottleneck.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipe.h"
#include "pipe_cba.h"
#include "pipe_net.h"
#include "sdr_test.h"

static void ev(struct pipe_events *e, uint32_t stage, uint8_t kind, uint8_t op, uint32_t m,
	       uint32_t chan, double t0, double t1)
{
	struct pipe_event x = {.iter = 0,
			       .stage = (uint16_t)stage,
			       .m = (uint16_t)m,
			       .kind = kind,
			       .op = op,
			       .chan = (uint16_t)chan,
			       .t0 = t0,
			       .t1 = t1};

	REQUIRE(pipe_events_add(e, &x) == 0, "add");
}

/*
 * S = 3: stages 0 and 1 in DC 0, stage 2 in DC 1; M = 4. Activations of
 * channel 2 (stage 1 -> 2) cross; channel 0 (stage 0 -> 1) is local.
 * F(1,m) ends at 10 m + 10 (ms). Stage 2's consumer F(2,m):
 *   m = 0: input there at once (no wait) - CB anyway (micro-batch 0)
 *   m = 1: waited 5 ms, starts 15 ms after F(1,1) ended - CB
 *   m = 2: did not wait - not CB
 *   m = 3: waited 0.5 ms but starts 0.8 ms after F(1,3) ended, within
 *          intra_lat = 1 ms - not CB (an intra-DC transfer would have
 *          taken as long)
 */
static void test_labels(void)
{
	struct pipe_cfg c;
	struct pipe_events e = {0};
	struct pipe_cba_label lab[PIPE_NCHAN(3) * 4];
	static const double wait[4] = {0, 0.005, 0, 0.0005};
	static const double start[4] = {0.011, 0.035, 0.045, 0.0408};
	int n;

	pipe_cfg_init(&c);
	c.stages = 3;
	c.micro = 4;
	c.dc_of[0] = c.dc_of[1] = 0;
	c.dc_of[2] = 1;
	REQUIRE(pipe_cfg_finish(&c) == 0, "finish");
	for (uint32_t m = 0; m < 4; m++) {
		double end1 = 0.010 * m + 0.010;

		ev(&e, 0, PIPE_I_COMPUTE, PIPE_F, m, 0, end1 - 0.008, end1 - 0.004);
		ev(&e, 1, PIPE_I_WAIT_RECV, 0, m, PIPE_CH_ACT(0), end1 - 0.004, end1 - 0.004);
		ev(&e, 1, PIPE_I_COMPUTE, PIPE_F, m, 0, end1 - 0.004, end1);
		ev(&e, 1, PIPE_I_POST_SEND, 0, m, PIPE_CH_ACT(1), end1, end1);
		ev(&e, 2, PIPE_I_POST_RECV, 0, m, PIPE_CH_ACT(1), 0.001 * m, 0.001 * m);
		ev(&e, 2, PIPE_I_WAIT_RECV, 0, m, PIPE_CH_ACT(1), start[m] - wait[m], start[m]);
		ev(&e, 2, PIPE_I_COMPUTE, PIPE_F, m, 0, start[m], start[m] + 0.004);
	}
	n = pipe_cba_label(&c, &e, 0, 0.001, lab);
	CHECK(n == 2, "CB transfers: %d", n);
	for (uint32_t m = 0; m < 4; m++) {
		const struct pipe_cba_label *l = &lab[PIPE_CH_ACT(1) * 4 + m];

		CHECK(l->cross && l->known, "m %u cross/known", m);
		CHECK(l->cb == (m <= 1), "m %u: cb %u", m, l->cb);
		CHECK(fabs(l->wait - wait[m]) < 1e-12, "m %u wait %g", m, l->wait);
		CHECK(fabs(l->late - (start[m] - (0.010 * m + 0.010) - 0.001)) < 1e-12,
		      "m %u late %g", m, l->late);
		/* what the slack is built from: need, send post, receive post */
		CHECK(l->need == start[m] - wait[m] && l->sent == 0.010 * m + 0.010 &&
			      l->rposted == 0.001 * m,
		      "m %u need %g sent %g rposted %g", m, l->need, l->sent, l->rposted);
		CHECK(!lab[PIPE_CH_ACT(0) * 4 + m].cross && !lab[PIPE_CH_ACT(0) * 4 + m].cb,
		      "local channel labelled");
	}
	/* gradients never consumed in this log: unknown, not CB */
	CHECK(lab[PIPE_CH_GRAD(1) * 4 + 2].cross && !lab[PIPE_CH_GRAD(1) * 4 + 2].known &&
		      !lab[PIPE_CH_GRAD(1) * 4 + 2].cb,
	      "unknown gradient");
	/* a larger intra-DC latency absorbs m = 1's 15 ms */
	CHECK(pipe_cba_label(&c, &e, 0, 0.016, lab) == 1 && !lab[PIPE_CH_ACT(1) * 4 + 1].cb,
	      "intra_lat 16 ms");
	/* DC 1's log alone (producer missing): the wait decides, > intra_lat */
	{
		struct pipe_events d = {0};

		for (size_t i = 0; i < e.n; i++)
			if (e.ev[i].stage == 2)
				pipe_events_add(&d, &e.ev[i]);
		CHECK(pipe_cba_label(&c, &d, 0, 0.001, lab) == 2, "partial");
		CHECK(isnan(lab[PIPE_CH_ACT(1) * 4 + 1].late) && lab[PIPE_CH_ACT(1) * 4 + 1].cb &&
			      !lab[PIPE_CH_ACT(1) * 4 + 3].cb,
		      "partial labels");
		CHECK(isnan(lab[PIPE_CH_ACT(1) * 4 + 1].sent) &&
			      lab[PIPE_CH_ACT(1) * 4 + 1].rposted == 0.001,
		      "partial: no send post");
		CHECK(pipe_cba_label(&c, &d, 0, 0.006, lab) == 1,
		      "partial, intra_lat above the wait");
		pipe_events_free(&d);
	}
	CHECK(pipe_cba_label(&c, &e, 1, 0.001, lab) == -EINVAL, "iteration not in the log");
	CHECK(pipe_cba_label(&c, &e, 0, -1, lab) == -EINVAL, "negative intra_lat");
	/* a consumer without its wait: a malformed log */
	for (size_t i = 0; i < e.n; i++)
		if (e.ev[i].kind == PIPE_I_WAIT_RECV && e.ev[i].stage == 2 && e.ev[i].m == 2)
			e.ev[i].kind = PIPE_I_POST_RECV;
	CHECK(pipe_cba_label(&c, &e, 0, 0.001, lab) == -EINVAL, "missing wait accepted");
	pipe_events_free(&e);
}

/* On a DES log: a bandwidth-bound link makes the receiver wait, a fast one
 * does not; labels agree with the waits the DES recorded. */
static void test_labels_des(void)
{
	static struct pipe_order ord;
	struct pipe_cfg c;
	struct pipe_prog prog;
	struct pipe_des_out out;
	struct pipe_cba_label lab[PIPE_NCHAN(4) * 8];
	int n_slow, n_fast;

	for (int fast = 0; fast < 2; fast++) {
		pipe_cfg_init(&c);
		c.stages = 4;
		c.micro = 8;
		c.sched = PIPE_SCHED_1F1B;
		c.comm = PIPE_COMM_NONBLOCKING;
		c.rtt = fast ? 0 : 0.01;
		c.rate_bps = fast ? 1000000000000ull : 100000000ull; /* 1 MiB: 84 ms or 8 us */
		c.act_bytes = c.grad_bytes = 1 << 20;
		REQUIRE(pipe_cfg_finish(&c) == 0, "finish");
		REQUIRE(pipe_order_build(&c, &ord) == 0 && pipe_prog_build(&c, &ord, &prog) == 0,
			"prog");
		REQUIRE(pipe_des_run(&c, &prog, &out) == 0, "des");
		int n = pipe_cba_label(&c, &out.ev, 0, 0.0001, lab);

		for (uint32_t i = 0; i < PIPE_NCHAN(4) * 8; i++) {
			CHECK(lab[i].cross == (i / 8 == PIPE_CH_ACT(1) || i / 8 == PIPE_CH_GRAD(1)),
			      "cross %u", i);
			if (lab[i].cb && i % 8)
				CHECK(lab[i].wait > 0 && lab[i].late > 0, "CB without a wait");
		}
		if (fast)
			n_fast = n;
		else
			n_slow = n;
		pipe_des_free(&out);
		pipe_prog_free(&prog);
	}
	/* fast: only micro-batch 0 of the two crossing channels */
	CHECK(n_fast == 2, "fast link: %d CB", n_fast);
	CHECK(n_slow > 8, "slow link: %d CB", n_slow);
}

static void test_rule(void)
{
	CHECK(pipe_cba_rule(4, 1, 0, 1, 1, 6) == 3, "blocked -> down");
	CHECK(pipe_cba_rule(4, 0, 1, 1, 1, 6) == 5, "CB -> up");
	CHECK(pipe_cba_rule(4, 0, 0, 1, 1, 6) == 4, "otherwise unchanged");
	CHECK(pipe_cba_rule(4, 1, 1, 1, 1, 6) == 3, "blocked wins over CB");
	CHECK(pipe_cba_rule(6, 0, 1, 1, 1, 6) == 6, "clamped at max");
	CHECK(pipe_cba_rule(1, 1, 0, 1, 1, 6) == 1, "clamped at min");
	CHECK(pipe_cba_rule(9, 0, 0, 1, 1, 6) == 6, "out of range brought in");
	CHECK(pipe_cba_rule(0, 1, 0, 5, 0, 10) == 0, "no wrap below 0");
	CHECK(pipe_cba_rule(UINT64_MAX - 1, 0, 1, 5, 0, UINT64_MAX) == UINT64_MAX, "no wrap above");
	CHECK(pipe_cba_rule(100000000, 0, 1, 25000000, 25000000, 1000000000) == 125000000, "bit/s");
}

/*
 * 0,2,1,2 on three DCs: flows (cross-DC channels)
 *   ch0 act 0->1 (DC 0 -> DC 2)    ch1 grad 1->0 (DC 2 -> DC 0)
 *   ch2 act 1->2 (DC 2 -> DC 1)    ch3 grad 2->1 (DC 1 -> DC 2)
 *   ch4 act 2->3 (DC 1 -> DC 2)    ch5 grad 3->2 (DC 2 -> DC 1)
 * into2 carries ch0, ch3 and ch4: a shared bottleneck of three senders'
 * flows from two DCs.
 */
static const char *const net3 = "link into2 to=2 from=0,1 delay=10ms rate=3gbit\n"
				"link l20 to=0 from=2 delay=10ms rate=1gbit\n"
				"link l21 to=1 from=2 delay=2ms rate=2gbit\n";

static void setup3(struct pipe_cfg *c, struct pipe_net *n, struct pipe_flows *fl)
{
	char why[256] = "";

	pipe_cfg_init(c);
	REQUIRE(pipe_place_parse("0,2,1,2", c) == 0, "place");
	c->micro = 4;
	REQUIRE(pipe_net_parse(net3, n, why, sizeof(why)) == 0, "%s", why);
	c->net = n;
	REQUIRE(pipe_cfg_finish(c) == 0, "finish");
	pipe_flows_get(c, n, fl);
}

/* every link's flows within its rate */
static void check_caps(const struct pipe_net *n, const struct pipe_flows *fl,
		       const struct pipe_alloc *a, const char *tag)
{
	uint64_t used[PIPE_NET_MAX_LINKS] = {0};

	for (uint32_t i = 0; i < fl->n; i++)
		if (fl->f[i].link >= 0)
			used[fl->f[i].link] += a->rate[i];
	for (uint32_t l = 0; l < n->nlinks; l++)
		CHECK(used[l] <= n->link[l].cfg.rate_bps, "%s: link %s %llu > %llu", tag,
		      n->link[l].name, (unsigned long long)used[l],
		      (unsigned long long)n->link[l].cfg.rate_bps);
}

static void test_flows_equal_static(void)
{
	struct pipe_cfg c;
	struct pipe_net n;
	struct pipe_flows fl;
	struct pipe_policy_cfg pc;
	struct pipe_alloc a;
	char why[256];

	setup3(&c, &n, &fl);
	REQUIRE(fl.n == 6, "flows %u", fl.n);
	static const int16_t link_of[6] = {0, 1, 2, 0, 0, 2};

	for (uint32_t i = 0; i < 6; i++) {
		CHECK(fl.f[i].chan == i && fl.f[i].link == link_of[i], "flow %u: chan %u link %d",
		      i, fl.f[i].chan, fl.f[i].link);
		CHECK(fl.of_chan[i] == (int16_t)i, "of_chan");
	}
	pipe_policy_cfg_init(&pc);
	CHECK(pipe_policy_alloc(&c, &n, &fl, &pc, NULL, NULL, &a, why, sizeof(why)) == 0 &&
		      a.n == 6,
	      "none");
	for (uint32_t i = 0; i < 6; i++)
		CHECK(a.rate[i] == 0, "none paces");
	pc.policy = PIPE_POLICY_EQUAL;
	REQUIRE(pipe_policy_alloc(&c, &n, &fl, &pc, NULL, NULL, &a, why, sizeof(why)) == 0,
		"equal");
	/* the shared bottleneck: 3 Gbit/s over three flows of two sending DCs */
	CHECK(a.rate[0] == 1000000000ull && a.rate[3] == 1000000000ull &&
		      a.rate[4] == 1000000000ull,
	      "into2 shares %llu %llu %llu", (unsigned long long)a.rate[0],
	      (unsigned long long)a.rate[3], (unsigned long long)a.rate[4]);
	CHECK(a.rate[1] == 1000000000ull, "l20 alone");
	CHECK(a.rate[2] == 1000000000ull && a.rate[5] == 1000000000ull, "l21 halves");
	check_caps(&n, &fl, &a, "equal");
	/* static */
	pc.policy = PIPE_POLICY_STATIC;
	CHECK(pipe_policy_alloc(&c, &n, &fl, &pc, NULL, NULL, &a, why, sizeof(why)) == -EINVAL,
	      "static without rates");
	pc.nstatic = 6;
	for (uint32_t i = 0; i < 6; i++)
		pc.static_bps[i] = 500000000ull;
	pc.static_bps[0] = 2000000000ull; /* into2: 2 + 0.5 + 0.5 = 3 Gbit/s: fits */
	CHECK(pipe_policy_alloc(&c, &n, &fl, &pc, NULL, NULL, &a, why, sizeof(why)) == 0 &&
		      a.rate[0] == 2000000000ull,
	      "static at capacity: %s", why);
	pc.static_bps[4]++;
	CHECK(pipe_policy_alloc(&c, &n, &fl, &pc, NULL, NULL, &a, why, sizeof(why)) == -ENOSPC &&
		      strstr(why, "into2"),
	      "static over into2: %s", why);
	pc.static_bps[4] = 0;
	CHECK(pipe_policy_alloc(&c, &n, &fl, &pc, NULL, NULL, &a, why, sizeof(why)) == -EINVAL,
	      "static rate 0");
}

/* labels with flow i's transfers of micro-batch 1 CB with the given wait */
static void make_labels(const struct pipe_cfg *c, const struct pipe_flows *fl, const double *w,
			struct pipe_cba_label *lab)
{
	memset(lab, 0, sizeof(*lab) * PIPE_NCHAN(c->stages) * c->micro);
	for (uint32_t i = 0; i < fl->n; i++) {
		struct pipe_cba_label *l = &lab[fl->f[i].chan * c->micro];

		for (uint32_t m = 0; m < c->micro; m++) {
			l[m].cross = l[m].known = 1;
			l[m].cb = m == 0 || (m == 1 && w[i] > 0);
			l[m].wait = m == 1 ? w[i] : 0;
		}
	}
}

static void test_cba(void)
{
	struct pipe_cfg c;
	struct pipe_net n;
	struct pipe_flows fl;
	struct pipe_policy_cfg pc;
	struct pipe_alloc a0, a1, a2, a3;
	struct pipe_cba_label lab[PIPE_NCHAN(4) * 4];
	uint8_t cb[PIPE_MAX_FLOWS];
	double wt[PIPE_MAX_FLOWS];
	char why[256];

	setup3(&c, &n, &fl);
	pipe_policy_cfg_init(&pc);
	pc.policy = PIPE_POLICY_CBA;
	pc.step_bps = 250000000ull;
	pc.min_bps = 250000000ull;
	REQUIRE(pipe_policy_alloc(&c, &n, &fl, &pc, NULL, NULL, &a0, why, sizeof(why)) == 0, "%s",
		why);
	for (uint32_t i = 0; i < 6; i++)
		CHECK(a0.rate[i] == 1000000000ull && !a0.blocked[i], "round 0 is equal");
	/* aggregation: micro-batch 0 alone does not make a flow CB */
	{
		static const double w[6] = {0, 0.002, 0, 0.003, 0, 0};

		make_labels(&c, &fl, w, lab);
		CHECK(pipe_cba_flow_labels(&c, &fl, lab, cb, wt) == 2 && cb[1] && cb[3] && !cb[0],
		      "flow labels");
		CHECK(wt[3] == 0.003, "flow wait");
	}
	/* round 1: flow 1 (alone on l20, already at its link's rate: the
	 * rule's max) and flow 3 (into2, full) are CB: flow 1's request is
	 * clamped to what it has, flow 3's increase is refused and reported */
	REQUIRE(pipe_policy_alloc(&c, &n, &fl, &pc, &a0, lab, &a1, why, sizeof(why)) == 0, "%s",
		why);
	CHECK(!a1.blocked[1] && a1.req[1] == 1000000000ull && a1.rate[1] == 1000000000ull,
	      "flow 1 at max");
	CHECK(a1.blocked[3] && a1.nblocked == 1, "refused: %u", a1.nblocked);
	CHECK(a1.req[3] == 1250000000ull && a1.rate[3] == 1000000000ull, "flow 3 keeps its rate");
	check_caps(&n, &fl, &a1, "cba round 1");
	/* round 2, nothing CB: the blocked flows step down (cuts: always granted) */
	{
		static const double w[6] = {0};

		make_labels(&c, &fl, w, lab);
	}
	REQUIRE(pipe_policy_alloc(&c, &n, &fl, &pc, &a1, lab, &a2, why, sizeof(why)) == 0, "%s",
		why);
	CHECK(a2.rate[3] == 750000000ull && a2.nblocked == 0, "blocked -> down: %llu",
	      (unsigned long long)a2.rate[3]);
	CHECK(a2.rate[0] == 1000000000ull && a2.rate[1] == 1000000000ull, "unchanged");
	/* round 3: flows 0 and 4 on into2 are CB, room for one step (0.25 of
	 * 3 Gbit/s is free): the one with the larger wait gets it */
	{
		static const double w[6] = {0.001, 0, 0, 0, 0.004, 0};

		make_labels(&c, &fl, w, lab);
	}
	REQUIRE(pipe_policy_alloc(&c, &n, &fl, &pc, &a2, lab, &a3, why, sizeof(why)) == 0, "%s",
		why);
	CHECK(a3.rate[4] == 1250000000ull && !a3.blocked[4], "larger wait first");
	CHECK(a3.rate[0] == 1000000000ull && a3.blocked[0], "no room left for flow 0");
	check_caps(&n, &fl, &a3, "cba round 3");
	/* bounds */
	pc.min_bps = 2000000000ull;
	pc.max_bps = 1000000000ull;
	CHECK(pipe_policy_alloc(&c, &n, &fl, &pc, &a2, lab, &a3, why, sizeof(why)) == -EINVAL,
	      "min > max accepted");
}

/* random rounds: capacities hold, refused increases keep their rate, cuts
 * and in-range requests behave as the rule says */
static void test_cba_random(void)
{
	struct pipe_cfg c;
	struct pipe_net n;
	struct pipe_flows fl;
	struct pipe_policy_cfg pc;
	struct pipe_alloc a, b;
	struct pipe_cba_label lab[PIPE_NCHAN(4) * 4];
	char why[256];

	setup3(&c, &n, &fl);
	pipe_policy_cfg_init(&pc);
	pc.policy = PIPE_POLICY_CBA; /* automatic steps: a quarter of the share */
	t_seed("pipe_cba", 7);
	REQUIRE(pipe_policy_alloc(&c, &n, &fl, &pc, NULL, NULL, &a, why, sizeof(why)) == 0, "%s",
		why);
	for (int round = 0; round < 2000; round++) {
		double w[6];

		for (uint32_t i = 0; i < 6; i++)
			w[i] = t_below(2) ? (double)t_range(1, 1000) * 1e-6 : 0;
		make_labels(&c, &fl, w, lab);
		REQUIRE(pipe_policy_alloc(&c, &n, &fl, &pc, &a, lab, &b, why, sizeof(why)) == 0,
			"%s", why);
		check_caps(&n, &fl, &b, "random");
		for (uint32_t i = 0; i < 6; i++) {
			if (b.blocked[i])
				CHECK(b.rate[i] == a.rate[i] && b.req[i] > a.rate[i], "refused");
			else
				CHECK(b.rate[i] == b.req[i], "granted");
			if (a.blocked[i])
				CHECK(b.req[i] <= a.rate[i], "blocked did not step down");
			else if (w[i] > 0)
				CHECK(b.req[i] >= a.rate[i], "CB did not step up");
			else
				CHECK(b.req[i] == a.rate[i], "unchanged");
		}
		BAIL_IF_MANY();
		a = b;
	}
}

/*
 * The slack's model against the DES: four DCs in a chain, paced QPs at
 * their equal shares (a link's flows fit side by side, so each QP is its own
 * server at its rate), rel none and SR (a send completes at its last bit or
 * when acknowledged). At the rate the iteration ran with, pipe_cba_slack()
 * must give exactly the least need - arrival of the DES's own transfers
 * (micro-batch >= 1) and, where a blocking producer waits for a send before
 * its next compute, sneed - completion; its wait, the logged waits of both
 * ends. A lower rate never gives more slack; rate 0 or a log without the
 * producers: NAN.
 */
static const char *const net4 = "link l01 to=1 from=0 delay=5ms rate=500mbit\n"
				"link l10 to=0 from=1 delay=5ms rate=500mbit\n"
				"link into2 to=2 from=1,3 delay=12.5ms rate=500mbit\n"
				"link l21 to=1 from=2 delay=12.5ms rate=1gbit\n"
				"link l23 to=3 from=2 delay=25ms rate=500mbit\n";

static void setup4(struct pipe_cfg *c, struct pipe_net *n, struct pipe_flows *fl,
		   enum pipe_sched sched, struct pipe_prog *p)
{
	static struct pipe_order ord;
	char why[256] = "";

	pipe_cfg_init(c);
	REQUIRE(pipe_place_parse("0,0,1,1,2,2,3,3", c) == 0, "place");
	c->micro = 16;
	c->tf = 0.004;
	c->tb = 0.008;
	c->act_bytes = 512 << 10;
	c->grad_bytes = 128 << 10;
	c->sched = sched;
	REQUIRE(pipe_net_parse(net4, n, why, sizeof(why)) == 0, "%s", why);
	c->net = n;
	REQUIRE(pipe_cfg_finish(c) == 0, "finish");
	REQUIRE(pipe_order_build(c, &ord) == 0 && pipe_prog_build(c, &ord, p) == 0, "prog");
	pipe_flows_get(c, n, fl);
}

static void test_slack_des(void)
{
	static const enum pipe_sched sch[] = {PIPE_SCHED_GEOPIPE, PIPE_SCHED_1F1B,
					      PIPE_SCHED_GPIPE};
	struct pipe_cfg c;
	struct pipe_net n;
	struct pipe_flows fl;
	struct pipe_prog p;
	struct pipe_policy_cfg pc;
	struct pipe_alloc a;
	struct pipe_des_out o;
	struct pipe_cba_label lab[PIPE_NCHAN(8) * 16];
	char why[256];

	for (size_t k = 0; k < 2 * sizeof(sch) / sizeof(sch[0]); k++) {
		uint32_t with_slack = 0, waited = 0, sblock = 0;
		int sr = k % 2;
		double back[PIPE_NCHAN(8) * 16] = {0}; /* logged send waits that block */

		setup4(&c, &n, &fl, sch[k / 2], &p);
		if (sr)
			REQUIRE(pipe_rel_parse("sr", &c.rel) == 0, "sr");
		pipe_policy_cfg_init(&pc);
		pc.policy = PIPE_POLICY_EQUAL;
		REQUIRE(pipe_policy_alloc(&c, &n, &fl, &pc, NULL, NULL, &a, why, sizeof(why)) == 0,
			"%s", why);
		REQUIRE(pipe_des_run_rates(&c, &p, &a, &o) == 0, "des");
		REQUIRE(pipe_cba_label(&c, &o.ev, 0, 0, lab) >= 0, "labels");
		for (size_t e = 0; e < o.ev.n; e++) {
			const struct pipe_event *x = &o.ev.ev[e];

			if (x->kind == PIPE_I_WAIT_SEND && lab[x->chan * c.micro + x->m].sblock)
				back[x->chan * c.micro + x->m] = x->t1 - x->t0;
		}
		for (uint32_t i = 0; i < fl.n; i++) {
			double want = INFINITY, wsum = 0, lsum = 0, w, s, w2, s2;
			double d_ba = pipe_net_delay(&n, fl.f[i].dst_dc, fl.f[i].src_dc);

			for (size_t t = 0; t < o.ntx; t++) {
				const struct pipe_tx *x = &o.tx[t];
				const struct pipe_cba_label *l = &lab[x->chan * c.micro + x->m];
				double done = sr ? x->t_arrive + d_ba : x->t_end;

				if (x->chan != fl.f[i].chan || x->m == 0)
					continue;
				want = fmin(want, l->need - x->t_arrive);
				wsum += fmax(0, x->t_arrive - l->need);
				lsum += l->wait + back[x->chan * c.micro + x->m];
				if (l->sblock) {
					want = fmin(want, l->sneed - done);
					wsum += fmax(0, done - l->sneed);
					sblock++;
				}
			}
			s = pipe_cba_slack(&c, &n, &fl, lab, i, a.rate[i], 0, &w);
			CHECK(fabs(s - want) < 1e-9, "%s %s flow %u: slack %.9f, DES %.9f",
			      pipe_sched_name(sch[k / 2]), sr ? "sr" : "none", i, s, want);
			CHECK(fabs(w - wsum) < 1e-9 && fabs(w - lsum) < 1e-9,
			      "%s %s flow %u: wait %.9f, DES %.9f, logged %.9f",
			      pipe_sched_name(sch[k / 2]), sr ? "sr" : "none", i, w, wsum, lsum);
			/* the margin moves every need earlier */
			CHECK(fabs(pipe_cba_slack(&c, &n, &fl, lab, i, a.rate[i], 0.002, NULL) -
				   (s - 0.002)) < 1e-12,
			      "margin");
			s2 = pipe_cba_slack(&c, &n, &fl, lab, i, a.rate[i] / 2, 0, &w2);
			CHECK(s2 <= s && w2 >= w, "%s flow %u: half the rate, slack %g > %g",
			      pipe_sched_name(sch[k / 2]), i, s2, s);
			CHECK(isnan(pipe_cba_slack(&c, &n, &fl, lab, i, 0, 0, &w)) && isnan(w),
			      "rate 0");
			for (uint32_t m = 1; m < c.micro; m++) {
				const struct pipe_cba_label *l = &lab[fl.f[i].chan * c.micro + m];

				with_slack += l->wait == 0;
				waited += l->wait > 0;
			}
		}
		/* the case has transfers of both kinds */
		CHECK(with_slack > 0 && waited > 0, "%s: %u transfers on time, %u waited",
		      pipe_sched_name(sch[k / 2]), with_slack, waited);
		/* blocking schedules wait for their sends between computes */
		CHECK((sblock > 0) == (c.comm == PIPE_COMM_BLOCKING), "%s: %u blocking send waits",
		      pipe_sched_name(sch[k / 2]), sblock);
		CHECK(isnan(pipe_cba_slack(&c, &n, &fl, lab, fl.n, a.rate[0], 0, NULL)),
		      "flow index");
		/* one DC's log: no producers, no slack */
		{
			struct pipe_events d = {0};

			for (size_t e = 0; e < o.ev.n; e++)
				if (c.dc_of[o.ev.ev[e].stage] == 2)
					pipe_events_add(&d, &o.ev.ev[e]);
			REQUIRE(pipe_cba_label(&c, &d, 0, 0, lab) >= 0, "partial labels");
			CHECK(isnan(pipe_cba_slack(&c, &n, &fl, lab, fl.of_chan[PIPE_CH_ACT(3)],
						   a.rate[0], 0, NULL)),
			      "partial log");
			pipe_events_free(&d);
		}
		pipe_des_free(&o);
		pipe_prog_free(&p);
	}
}

/*
 * Two flows on one link, labels built by hand. 0,1,0 on two DCs: into1
 * (1 Gbit/s) carries ch0 (activations 0 -> 1, flow 0) and ch3 (gradients
 * 2 -> 1, flow 3). Each flow's message m is posted every 10 ms, 2 ms one
 * way. Flow 0's messages take 10 ms at 500 Mbit/s and its consumer needs
 * each 7 ms after the send (CB: waits 5 ms); flow 3's take 2 ms and are
 * needed 10.5 ms after the send (slack 6.5 ms at 500 Mbit/s, 0.5 ms at
 * 125 Mbit/s, its min).
 */
#define TWO_US(ms) ((ms)*1e-3)
static const char *const net2 = "link into1 to=1 from=0 delay=2ms rate=1gbit\nlink into0 to=0 "
				"from=1 delay=2ms rate=1gbit\n";

static void setup2(struct pipe_cfg *c, struct pipe_net *n, struct pipe_flows *fl)
{
	char why[256] = "";

	pipe_cfg_init(c);
	REQUIRE(pipe_place_parse("0,1,0", c) == 0, "place");
	c->micro = 4;
	/* 10 ms and 2 ms at 500 Mbit/s of frames */
	c->mtu = 4096;
	c->frame_overhead = 0;
	c->act_bytes = 625000;
	c->grad_bytes = 125000;
	REQUIRE(pipe_net_parse(net2, n, why, sizeof(why)) == 0, "%s", why);
	c->net = n;
	REQUIRE(pipe_cfg_finish(c) == 0, "finish");
	pipe_flows_get(c, n, fl);
	REQUIRE(fl->n == 4 && fl->f[0].link == fl->f[3].link && fl->f[1].link == fl->f[2].link,
		"two flows per link");
}

/* flow i's transfers: send posted at 10 m + 5 ms (receives at 0, so the
 * clear-to-send is never later), needed @p need ms after it; a transfer
 * that arrives later (at the rate @p rate) waits and is CB */
static void two_labels(const struct pipe_cfg *c, const struct pipe_net *n,
		       const struct pipe_flows *fl, uint32_t i, double need, uint64_t rate,
		       struct pipe_cba_label *lab)
{
	struct pipe_cba_label *l = &lab[fl->f[i].chan * c->micro];
	double tx = (double)pipe_wire_bytes(c, pipe_ch_bytes(c, fl->f[i].chan)) * 8 / (double)rate;
	double d = pipe_net_delay(n, fl->f[i].src_dc, fl->f[i].dst_dc), end = 0;

	for (uint32_t m = 0; m < c->micro; m++) {
		double sent = TWO_US(10.0 * m + 5), arr;

		end = fmax(end, sent) + tx;
		arr = end + d;
		l[m] = (struct pipe_cba_label){.cross = 1,
					       .known = 1,
					       .sent = sent,
					       .rposted = 0,
					       .need = sent + TWO_US(need)};
		l[m].wait = fmax(0, arr - l[m].need);
		l[m].cb = m == 0 || l[m].wait > 0;
		l[m].late = l[m].need + l[m].wait - sent;
	}
}

static void test_shift_two(void)
{
	struct pipe_cfg c;
	struct pipe_net n;
	struct pipe_flows fl;
	struct pipe_policy_cfg pc;
	struct pipe_alloc a, b;
	struct pipe_cba_label lab[PIPE_NCHAN(3) * 4];
	char why[256];
	uint32_t still = 0;

	setup2(&c, &n, &fl);
	REQUIRE(pipe_wire_bytes(&c, c.act_bytes) * 8 == 5000000, "frame bits");
	pipe_policy_cfg_init(&pc);
	pc.policy = PIPE_POLICY_CBA_SHIFT;
	REQUIRE(pipe_policy_alloc(&c, &n, &fl, &pc, NULL, NULL, &a, why, sizeof(why)) == 0, "%s",
		why);
	CHECK(a.rate[0] == 500000000ull && a.rate[3] == 500000000ull, "round 0 is equal");
	/* every round: the labels the current rates give; into0's flows have
	 * slack (needed 20 ms after the send) */
	for (int round = 1; round <= 8; round++) {
		memset(lab, 0, sizeof(lab));
		two_labels(&c, &n, &fl, 0, 7, a.rate[0], lab);
		two_labels(&c, &n, &fl, 3, 10.5, a.rate[3], lab);
		two_labels(&c, &n, &fl, 1, 20, a.rate[1], lab);
		two_labels(&c, &n, &fl, 2, 20, a.rate[2], lab);
		REQUIRE(pipe_policy_alloc(&c, &n, &fl, &pc, &a, lab, &b, why, sizeof(why)) == 0,
			"%s", why);
		CHECK(b.cb[0] && !b.cb[3], "round %d: flow 0 CB, flow 3 not", round);
		CHECK(b.rate[0] + b.rate[3] == 1000000000ull, "round %d: into1 not conserved",
		      round);
		CHECK(b.rate[1] == a.rate[1] && b.rate[2] == a.rate[2], "round %d: into0 moved",
		      round);
		CHECK(b.rate[0] >= a.rate[0] && b.rate[3] <= a.rate[3] && b.rate[3] >= 125000000ull,
		      "round %d: %llu %llu", round, (unsigned long long)b.rate[0],
		      (unsigned long long)b.rate[3]);
		CHECK(a.rate[3] - b.rate[3] <= 125000000ull && b.gave[3] == a.rate[3] - b.rate[3],
		      "round %d: more than a step given", round);
		/* the donor gives only what keeps its own transfers on time */
		CHECK(pipe_cba_slack(&c, &n, &fl, lab, 3, b.rate[3], 0, NULL) >= 0,
		      "round %d: donor left without slack", round);
		if (b.rate[0] == a.rate[0])
			CHECK(b.blocked[0] && b.nblocked == 1, "round %d: no donor but not refused",
			      round);
		still = b.rate[0] == a.rate[0] ? still + 1 : 0;
		a = b;
	}
	/* three steps of 125 Mbit/s until flow 3 sits at its min, then refused,
	 * rates unchanged */
	CHECK(a.rate[0] == 875000000ull && a.rate[3] == 125000000ull, "converged to %llu / %llu",
	      (unsigned long long)a.rate[0], (unsigned long long)a.rate[3]);
	CHECK(still == 5, "unchanged for %u rounds", still);

	/* a margin: flow 3 keeps 3 ms of slack, its 1 Mbit messages may take
	 * 10.5 - 3 - 2 = 5.5 ms: 181.8 Mbit/s, a partial last step */
	pc.shift_margin = 0.003;
	REQUIRE(pipe_policy_alloc(&c, &n, &fl, &pc, NULL, NULL, &a, why, sizeof(why)) == 0, "%s",
		why);
	for (int round = 1; round <= 6; round++) {
		memset(lab, 0, sizeof(lab));
		two_labels(&c, &n, &fl, 0, 7, a.rate[0], lab);
		two_labels(&c, &n, &fl, 3, 10.5, a.rate[3], lab);
		two_labels(&c, &n, &fl, 1, 20, a.rate[1], lab);
		two_labels(&c, &n, &fl, 2, 20, a.rate[2], lab);
		REQUIRE(pipe_policy_alloc(&c, &n, &fl, &pc, &a, lab, &b, why, sizeof(why)) == 0,
			"%s", why);
		CHECK(pipe_cba_slack(&c, &n, &fl, lab, 3, b.rate[3], pc.shift_margin, NULL) >= 0,
		      "round %d: margin not kept", round);
		CHECK(b.rate[0] + b.rate[3] == 1000000000ull, "round %d: conservation", round);
		a = b;
	}
	CHECK(a.rate[3] >= 181818181ull && a.rate[3] <= 181818183ull &&
		      a.rate[0] == 1000000000ull - a.rate[3],
	      "margin: flow 3 at %llu", (unsigned long long)a.rate[3]);
	CHECK(a.blocked[0], "nothing left to give: refused");
	pc.shift_margin = -1;
	CHECK(pipe_policy_alloc(&c, &n, &fl, &pc, &a, lab, &b, why, sizeof(why)) == -EINVAL,
	      "negative margin accepted");
}

/*
 * Costly donors and reversals (0,1,0 as above, both flows CB or one with
 * slack as each case says). The model's wait of a flow is the sum over its
 * transfers of micro-batch >= 1 (three here) of arrival - need.
 */
static void test_shift_cost(void)
{
	struct pipe_cfg c;
	struct pipe_net n;
	struct pipe_flows fl;
	struct pipe_policy_cfg pc;
	struct pipe_alloc a0, a, b;
	struct pipe_cba_label lab[PIPE_NCHAN(3) * 4];
	char why[256];

	setup2(&c, &n, &fl);
	pipe_policy_cfg_init(&pc);
	pc.policy = PIPE_POLICY_CBA_SHIFT;
	REQUIRE(pipe_policy_alloc(&c, &n, &fl, &pc, NULL, NULL, &a0, why, sizeof(why)) == 0, "%s",
		why);
	/* 1. Both CB. Flow 0 waits 5 ms a transfer (10 ms messages needed
	 * 7 ms after the send, 2 ms away); flow 3 0.5 ms (2 ms messages needed
	 * after 3.5 ms). A step to flow 0 saves it 3 x 2 ms, costs flow 3
	 * 3 x 0.67 ms: flow 3 gives its whole step, and its own request is
	 * refused (flow 0, which gained, does not give). */
	memset(lab, 0, sizeof(lab));
	two_labels(&c, &n, &fl, 0, 7, a0.rate[0], lab);
	two_labels(&c, &n, &fl, 3, 3.5, a0.rate[3], lab);
	REQUIRE(pipe_policy_alloc(&c, &n, &fl, &pc, &a0, lab, &a, why, sizeof(why)) == 0, "%s",
		why);
	CHECK(a.cb[0] && a.cb[3] && a.wait[0] > a.wait[3], "both CB, flow 0 waits more");
	CHECK(a.rate[0] == 625000000ull && a.rate[3] == 375000000ull && !a.blocked[0] &&
		      a.blocked[3],
	      "costly donor, worth it: %llu / %llu", (unsigned long long)a.rate[0],
	      (unsigned long long)a.rate[3]);
	CHECK(a.gave[3] == 125000000ull && a.dir[0] == 1 && a.dir[3] == -1 &&
		      a.step[0] == 125000000ull && a.step[3] == 125000000ull,
	      "directions");
	/* 2. Flow 3 CB (waits 2.57 ms a transfer at 375 Mbit/s), flow 0 with
	 * 1 ms of slack (8 ms messages needed 11 ms after the send). A whole
	 * step back would cost flow 0 3 x 1 ms and save flow 3 3 x 0.67 ms:
	 * flow 0 gives only the free part, down to 9 ms messages (555.6
	 * Mbit/s), a partial grant. Both moved against their last move: their
	 * steps halve. */
	memset(lab, 0, sizeof(lab));
	two_labels(&c, &n, &fl, 0, 11, a.rate[0], lab);
	two_labels(&c, &n, &fl, 3, 2.1, a.rate[3], lab);
	REQUIRE(pipe_policy_alloc(&c, &n, &fl, &pc, &a, lab, &b, why, sizeof(why)) == 0, "%s", why);
	CHECK(!b.cb[0] && b.cb[3], "flow 3 CB now");
	CHECK(b.rate[0] > 555555000ull && b.rate[0] < 555556000ull &&
		      b.rate[0] + b.rate[3] == 1000000000ull && !b.blocked[3] &&
		      b.req[3] == 500000000ull,
	      "flow 3 gains the free part: %llu / %llu", (unsigned long long)b.rate[0],
	      (unsigned long long)b.rate[3]);
	CHECK(pipe_cba_slack(&c, &n, &fl, lab, 0, b.rate[0], 0, NULL) >= 0 &&
		      pipe_cba_slack(&c, &n, &fl, lab, 0, b.rate[0] - 1000, 0, NULL) < 0,
	      "the free part, all of it");
	CHECK(b.step[0] == 62500000ull && b.step[3] == 62500000ull && b.dir[0] == -1 &&
		      b.dir[3] == 1,
	      "reversal: steps %llu %llu", (unsigned long long)b.step[0],
	      (unsigned long long)b.step[3]);
	/* 3. Flow 0 CB again, flow 3 with plenty of slack: flow 0 asks its
	 * halved step, flow 3 gives it (free), both halve again */
	a = b;
	memset(lab, 0, sizeof(lab));
	two_labels(&c, &n, &fl, 0, 7, a.rate[0], lab);
	two_labels(&c, &n, &fl, 3, 20, a.rate[3], lab);
	REQUIRE(pipe_policy_alloc(&c, &n, &fl, &pc, &a, lab, &b, why, sizeof(why)) == 0, "%s", why);
	CHECK(b.rate[0] == a.rate[0] + 62500000ull && b.rate[3] == a.rate[3] - 62500000ull &&
		      b.step[0] == 31250000ull && b.step[3] == 31250000ull,
	      "second reversal: +%llu, steps %llu %llu",
	      (unsigned long long)(b.rate[0] - a.rate[0]), (unsigned long long)b.step[0],
	      (unsigned long long)b.step[3]);
	/* 4. Both CB, each would lose more than the other gains: flow 0 waits
	 * 0.5 ms a transfer (a step saves it at most 3 x 0.5 ms; flow 3 would
	 * lose 3 x 0.67), flow 3 0.4 ms (flow 0 would lose 3 x 3.33). Both
	 * refused, both keep their rates: no cycle. */
	memset(lab, 0, sizeof(lab));
	two_labels(&c, &n, &fl, 0, 11.5, a0.rate[0], lab);
	two_labels(&c, &n, &fl, 3, 3.6, a0.rate[3], lab);
	REQUIRE(pipe_policy_alloc(&c, &n, &fl, &pc, &a0, lab, &b, why, sizeof(why)) == 0, "%s",
		why);
	CHECK(b.cb[0] && b.cb[3] && b.blocked[0] && b.blocked[3] && b.nblocked == 2 &&
		      b.rate[0] == a0.rate[0] && b.rate[3] == a0.rate[3],
	      "both refused: %llu / %llu", (unsigned long long)b.rate[0],
	      (unsigned long long)b.rate[3]);
	/* and a round later, still the same (a refused request is not cut) */
	a = b;
	REQUIRE(pipe_policy_alloc(&c, &n, &fl, &pc, &a, lab, &b, why, sizeof(why)) == 0, "%s", why);
	CHECK(b.rate[0] == a0.rate[0] && b.rate[3] == a0.rate[3], "refused flows stepped down");
	/* cba, the paper's rule, on the same labels: refused, then cut */
	pc.policy = PIPE_POLICY_CBA;
	REQUIRE(pipe_policy_alloc(&c, &n, &fl, &pc, &a0, lab, &a, why, sizeof(why)) == 0 &&
			pipe_policy_alloc(&c, &n, &fl, &pc, &a, lab, &b, why, sizeof(why)) == 0,
		"%s", why);
	CHECK(a.nblocked == 2 && b.rate[0] == 375000000ull && b.rate[3] == 375000000ull,
	      "cba: %llu / %llu", (unsigned long long)b.rate[0], (unsigned long long)b.rate[3]);
}

/*
 * cba-shift's invariants over random rounds on the three-DC network of
 * setup3() (into2: three flows of two senders at 3 Gbit/s; l21: two flows;
 * l20: one), labels drawn at random: capacities hold and every link stays
 * at its rate (saturated by round 0, conserved after); rates within
 * [min, max]; only CB flows gain, each at most its step; a donor gives at
 * most its step and reports it; no flow both gains and gives; a refused
 * flow keeps its rate (less what it gave, as a donor, to a flow that
 * waited more).
 */
static void test_shift_random(void)
{
	struct pipe_cfg c;
	struct pipe_net n;
	struct pipe_flows fl;
	struct pipe_policy_cfg pc;
	struct pipe_alloc a, b;
	struct pipe_cba_label lab[PIPE_NCHAN(4) * 4];
	uint32_t moved = 0, refused = 0, partial = 0;
	char why[256];

	setup3(&c, &n, &fl);
	c.act_bytes = 1 << 20;
	c.grad_bytes = 256 << 10;
	pipe_policy_cfg_init(&pc);
	pc.policy = PIPE_POLICY_CBA_SHIFT;
	t_seed("pipe_cba", 11);
	REQUIRE(pipe_policy_alloc(&c, &n, &fl, &pc, NULL, NULL, &a, why, sizeof(why)) == 0, "%s",
		why);
	for (int round = 0; round < 3000; round++) {
		uint64_t sum[PIPE_NET_MAX_LINKS] = {0};

		pc.shift_margin = t_below(3) ? 0 : (double)t_range(0, 2000) * 1e-6;
		for (uint32_t i = 0; i < fl.n; i++) {
			struct pipe_cba_label *l = &lab[fl.f[i].chan * c.micro];
			int lazy = t_below(3) == 0; /* mostly on time */

			for (uint32_t m = 0; m < c.micro; m++) {
				l[m] = (struct pipe_cba_label){
					.cross = 1,
					.known = 1,
					.sent = (double)(10000 * m + t_range(0, 5000)) * 1e-6,
					.rposted = 0};
				l[m].need = l[m].sent +
					    (double)t_range(lazy ? 20000 : 1000, 30000) * 1e-6;
				l[m].wait = lazy || t_below(2) ? 0
							       : (double)t_range(1, 5000) * 1e-6;
				l[m].cb = m == 0 || l[m].wait > 0;
			}
		}
		REQUIRE(pipe_policy_alloc(&c, &n, &fl, &pc, &a, lab, &b, why, sizeof(why)) == 0,
			"%s", why);
		check_caps(&n, &fl, &b, "shift random");
		for (uint32_t i = 0; i < fl.n; i++) {
			uint64_t share = n.link[fl.f[i].link].cfg.rate_bps / (fl.f[i].link == 0 ? 3
									      : fl.f[i].link == 2
										      ? 2
										      : 1);
			uint64_t step = a.dir[i] ? a.step[i] : share / 4;

			sum[fl.f[i].link] += b.rate[i];
			CHECK(b.rate[i] >= share / 4 &&
				      b.rate[i] <= n.link[fl.f[i].link].cfg.rate_bps,
			      "flow %u out of [min, max]: %llu", i, (unsigned long long)b.rate[i]);
			if (b.rate[i] > a.rate[i]) {
				CHECK(b.cb[i] && !b.gave[i] && b.rate[i] - a.rate[i] <= step,
				      "flow %u gained %llu (cb %u, gave %llu, step %llu)", i,
				      (unsigned long long)(b.rate[i] - a.rate[i]), b.cb[i],
				      (unsigned long long)b.gave[i], (unsigned long long)step);
				moved++;
				partial += b.rate[i] < b.req[i];
			} else if (b.rate[i] < a.rate[i]) {
				CHECK(b.gave[i] == a.rate[i] - b.rate[i] && b.gave[i] <= step,
				      "flow %u gave %llu, reported %llu, step %llu", i,
				      (unsigned long long)(a.rate[i] - b.rate[i]),
				      (unsigned long long)b.gave[i], (unsigned long long)step);
			} else {
				CHECK(!b.gave[i], "flow %u gave without losing rate", i);
			}
			if (b.blocked[i]) {
				/* refused: no cut, unless it gave to a flow that waited more */
				CHECK(b.rate[i] == a.rate[i] - b.gave[i] && b.cb[i],
				      "flow %u refused but moved", i);
				refused++;
			}
		}
		for (uint32_t l = 0; l < n.nlinks; l++)
			CHECK(sum[l] == n.link[l].cfg.rate_bps, "round %d: link %s at %llu", round,
			      n.link[l].name, (unsigned long long)sum[l]);
		BAIL_IF_MANY();
		a = b;
	}
	/* the draws exercise every branch */
	CHECK(moved > 100 && refused > 100 && partial > 10, "moved %u, refused %u, partial %u",
	      moved, refused, partial);
}

/*
 * The scenario of docs/pipeline.md "cba-shift on a shared bottleneck", in
 * the DES over iterations (pipe_predict()), SR as on the rig: into2 carries
 * DC 1's 512 KiB activations (flow 2, communication-bound at its equal
 * 250 Mbit/s) and DC 3's 128 KiB gradients (flow 5, which can spare rate).
 * Over 12 iterations, non-blocking schedules: cba-shift moves rate from
 * flow 5 to flow 2, conserves the link, settles (the same rates in the last
 * three iterations) and ends more than 10 % below equal. Blocking 1F1B: the
 * model's first move makes the iteration slower, so it is undone, and the
 * tries that follow shrink (halved steps): no iteration more than 1 %
 * above equal, the last moves below 1/16 of a step. cba never does better
 * than equal.
 */
static void test_shift_des(void)
{
	static const enum pipe_sched sch[] = {PIPE_SCHED_GEOPIPE, PIPE_SCHED_GREEDY,
					      PIPE_SCHED_1F1B};
	static struct pipe_pred_iter eq[12], cb[12], sh[12];
	struct pipe_cfg c;
	struct pipe_net n;
	struct pipe_flows fl;
	struct pipe_prog p;
	struct pipe_policy_cfg pc;
	char why[256] = "";

	for (size_t k = 0; k < sizeof(sch) / sizeof(sch[0]); k++) {
		const char *name = pipe_sched_name(sch[k]);
		uint32_t undone = 0;

		setup4(&c, &n, &fl, sch[k], &p);
		REQUIRE(pipe_rel_parse("sr", &c.rel) == 0, "sr");
		REQUIRE(fl.f[2].chan == PIPE_CH_ACT(3) && fl.f[5].chan == PIPE_CH_GRAD(5) &&
				fl.f[2].link == fl.f[5].link,
			"flows 2 and 5 share into2");
		pipe_policy_cfg_init(&pc);
		pc.policy = PIPE_POLICY_EQUAL;
		REQUIRE(pipe_predict(&c, &p, &pc, 12, eq, NULL, why, sizeof(why)) == 0, "%s", why);
		pc.policy = PIPE_POLICY_CBA;
		REQUIRE(pipe_predict(&c, &p, &pc, 12, cb, NULL, why, sizeof(why)) == 0, "%s", why);
		pc.policy = PIPE_POLICY_CBA_SHIFT;
		REQUIRE(pipe_predict(&c, &p, &pc, 12, sh, NULL, why, sizeof(why)) == 0, "%s", why);
		for (int i = 0; i < 12; i++) {
			CHECK(cb[i].iter_time >= eq[i].iter_time - 1e-9, "%s: cba beat equal",
			      name);
			CHECK(sh[i].alloc.rate[2] + sh[i].alloc.rate[5] == 500000000ull,
			      "%s iteration %d: into2 not conserved", name, i);
			CHECK(sh[i].alloc.iter_time == sh[i].iter_time,
			      "%s: iteration time not kept", name);
			for (uint32_t f = 0; f < fl.n; f++)
				if (f != 2 && f != 5)
					CHECK(sh[i].alloc.rate[f] == eq[i].alloc.rate[f],
					      "%s iteration %d: flow %u moved", name, i, f);
			undone += sh[i].alloc.undone;
		}
		if (c.comm == PIPE_COMM_BLOCKING) {
			CHECK(undone >= 2, "%s: %u undone", name, undone);
			for (int i = 0; i < 12; i++)
				CHECK(sh[i].iter_time < 1.01 * eq[i].iter_time,
				      "%s iteration %d: %.2f ms vs %.2f", name, i,
				      sh[i].iter_time * 1e3, eq[i].iter_time * 1e3);
			for (int i = 9; i < 12; i++)
				CHECK(llabs((long long)sh[i].alloc.rate[2] -
					    (long long)sh[i - 1].alloc.rate[2]) < 62500000ll / 16,
				      "%s iteration %d: moved %llu", name, i,
				      (unsigned long long)sh[i].alloc.rate[2]);
		} else {
			CHECK(undone == 0, "%s: %u undone", name, undone);
			CHECK(memcmp(sh[9].alloc.rate, sh[11].alloc.rate,
				     sizeof(sh[9].alloc.rate)) == 0 &&
				      memcmp(sh[10].alloc.rate, sh[11].alloc.rate,
					     sizeof(sh[9].alloc.rate)) == 0,
			      "%s: not settled", name);
			CHECK(sh[11].alloc.rate[2] > 250000000ull &&
				      sh[11].alloc.rate[5] < 250000000ull,
			      "%s: rates %llu / %llu", name,
			      (unsigned long long)sh[11].alloc.rate[2],
			      (unsigned long long)sh[11].alloc.rate[5]);
			CHECK(sh[11].iter_time < 0.9 * eq[11].iter_time,
			      "%s: %.2f ms vs equal %.2f", name, sh[11].iter_time * 1e3,
			      eq[11].iter_time * 1e3);
		}
		pipe_prog_free(&p);
	}
}

/*
 * The undo (0,1,0 of test_shift_two): a round whose moves were followed by
 * a slower iteration is undone: the rates before it come back, the flows
 * that move back halve their steps; an undo is not undone; a faster or
 * equal iteration, or an unknown time (0), keeps the moves.
 */
static void test_shift_undo(void)
{
	struct pipe_cfg c;
	struct pipe_net n;
	struct pipe_flows fl;
	struct pipe_policy_cfg pc;
	struct pipe_alloc a0, a, b, u;
	struct pipe_cba_label lab[PIPE_NCHAN(3) * 4];
	char why[256];

	setup2(&c, &n, &fl);
	pipe_policy_cfg_init(&pc);
	pc.policy = PIPE_POLICY_CBA_SHIFT;
	REQUIRE(pipe_policy_alloc(&c, &n, &fl, &pc, NULL, NULL, &a0, why, sizeof(why)) == 0, "%s",
		why);
	a0.iter_time = 0.5;
	memset(lab, 0, sizeof(lab));
	two_labels(&c, &n, &fl, 0, 7, a0.rate[0], lab);
	two_labels(&c, &n, &fl, 3, 10.5, a0.rate[3], lab);
	REQUIRE(pipe_policy_alloc(&c, &n, &fl, &pc, &a0, lab, &a, why, sizeof(why)) == 0, "%s",
		why);
	REQUIRE(a.rate[0] == 625000000ull && a.base_rate[0] == 500000000ull && a.base_time == 0.5 &&
			!a.undone,
		"a move: %llu", (unsigned long long)a.rate[0]);
	/* as fast: kept, the next step taken */
	a.iter_time = 0.5;
	REQUIRE(pipe_policy_alloc(&c, &n, &fl, &pc, &a, lab, &b, why, sizeof(why)) == 0, "%s", why);
	CHECK(!b.undone && b.rate[0] == 750000000ull, "kept: %llu", (unsigned long long)b.rate[0]);
	/* not known: kept */
	a.iter_time = 0;
	REQUIRE(pipe_policy_alloc(&c, &n, &fl, &pc, &a, lab, &b, why, sizeof(why)) == 0, "%s", why);
	CHECK(!b.undone && b.rate[0] == 750000000ull, "time unknown: %llu",
	      (unsigned long long)b.rate[0]);
	/* slower: undone, steps halved, the link still at its rate */
	a.iter_time = 0.51;
	REQUIRE(pipe_policy_alloc(&c, &n, &fl, &pc, &a, lab, &u, why, sizeof(why)) == 0, "%s", why);
	CHECK(u.undone && u.rate[0] == 500000000ull && u.rate[3] == 500000000ull && u.nblocked == 0,
	      "undone: %llu / %llu", (unsigned long long)u.rate[0], (unsigned long long)u.rate[3]);
	CHECK(u.step[0] == 62500000ull && u.step[3] == 62500000ull && u.dir[0] == -1 &&
		      u.dir[3] == 1 && u.gave[0] == 125000000ull && u.gave[3] == 0,
	      "undo: steps %llu %llu", (unsigned long long)u.step[0],
	      (unsigned long long)u.step[3]);
	/* the undo's iteration slower still: not undone again; the next try is
	 * half a step, which halves the steps again */
	u.iter_time = 0.6;
	REQUIRE(pipe_policy_alloc(&c, &n, &fl, &pc, &u, lab, &b, why, sizeof(why)) == 0, "%s", why);
	CHECK(!b.undone && b.rate[0] == 562500000ull && b.step[0] == 31250000ull,
	      "after the undo: %llu, step %llu", (unsigned long long)b.rate[0],
	      (unsigned long long)b.step[0]);
	/* cba ignores iteration times */
	pc.policy = PIPE_POLICY_CBA;
	REQUIRE(pipe_policy_alloc(&c, &n, &fl, &pc, &a, lab, &b, why, sizeof(why)) == 0, "%s", why);
	CHECK(!b.undone && b.rate[0] == 625000000ull, "cba undid");
}

int main(void)
{
	test_labels();
	test_labels_des();
	test_rule();
	test_flows_equal_static();
	test_cba();
	test_cba_random();
	test_slack_des();
	test_shift_two();
	test_shift_cost();
	test_shift_random();
	test_shift_des();
	test_shift_undo();
	return t_finish("pipe_cba");
}
