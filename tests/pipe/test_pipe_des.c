/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the DES over D DCs (host/pipe/pipe_des*.c): a shared
 * bottleneck of two senders into a third DC computed by hand (unpaced FIFO,
 * equal pacing, rates above the link's that take capacity in FIFO order,
 * a pair with no link), the clear-to-send over the reverse link, loss
 * through the completion-time model for single transfers against
 * sdr_model_eval() (SR, EC with its parity on the wire, AUTO's pick), rel
 * none refused over a lossy link, multi-iteration prediction under a
 * policy against the policy applied by hand to the previous iteration, and
 * links of several paths (a sprayed QP spread by rate, one port on one path,
 * the equal-share policy over the sum of the paths' rates).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipe.h"
#include "pipe_cba.h"
#include "pipe_net.h"
#include "sdr_model.h"
#include "sdr_test.h"

static void put(struct pipe_prog *p, uint32_t s, uint8_t kind, uint8_t op, uint32_t m, uint32_t ch)
{
	p->ins[s][p->n[s]++] = (struct pipe_ins){
		.kind = kind, .op = op, .m = (uint16_t)m, .chan = (uint16_t)ch};
}

static const struct pipe_tx *tx_of(const struct pipe_des_out *o, uint32_t ch, uint32_t m)
{
	for (size_t i = 0; i < o->ntx; i++)
		if (o->tx[i].chan == ch && o->tx[i].m == m)
			return &o->tx[i];
	return NULL;
}

static double wait_end(const struct pipe_des_out *o, uint32_t stage, uint8_t kind, uint32_t ch)
{
	for (size_t i = 0; i < o->ev.n; i++)
		if (o->ev.ev[i].stage == stage && o->ev.ev[i].kind == kind &&
		    o->ev.ev[i].chan == ch)
			return o->ev.ev[i].t1;
	return NAN;
}

/*
 * Three DCs: stage 0 in DC 0, stage 1 in DC 2, stage 2 in DC 1. Stage 0
 * sends activation 0 (channel 0: DC 0 -> DC 2), stage 2 sends gradient 0
 * (channel 3: DC 1 -> DC 2), both at t = 0; stage 1 posts both receives at
 * t = 0 and computes once both arrived. Channels 0 and 3 share link into2
 * (3 Gbit/s... here R); the clear-to-send comes back over to0 (1 ms) and
 * to1 (3 ms), so channel 0 is ready at 1 ms and channel 3 at 3 ms.
 */
#define R 1e9
#define BITS0 (8.0 * (1 << 20)) /* activation: 1 MiB, frame overhead 0 */
#define BITS3 (8.0 * (1 << 19)) /* gradient: 512 KiB */

static void shared_setup(struct pipe_cfg *c, struct pipe_net *n, struct pipe_prog *p, int with_to1)
{
	char why[256] = "";

	pipe_cfg_init(c);
	c->stages = 3;
	c->micro = 1;
	c->dc_of[0] = 0;
	c->dc_of[1] = 2;
	c->dc_of[2] = 1;
	c->act_bytes = 1 << 20;
	c->grad_bytes = 1 << 19;
	c->frame_overhead = 0;
	c->comm = PIPE_COMM_NONBLOCKING;
	c->rel.rel = SDR_REL_SR;
	c->rate_bps = 250000000ull; /* pairs without a link */
	REQUIRE(pipe_net_parse(with_to1 ? "link into2 to=2 from=0,1 delay=10ms rate=1gbit\n"
					  "link to0 to=0 from=2 delay=1ms rate=1gbit\n"
					  "link to1 to=1 from=2 delay=3ms rate=1gbit\n"
					: "link into2 to=2 from=0 delay=10ms rate=1gbit\n"
					  "link to0 to=0 from=2 delay=1ms rate=1gbit\n"
					  "link to1 to=1 from=2 delay=3ms rate=1gbit\n",
			       n, why, sizeof(why)) == 0,
		"%s", why);
	c->net = n;
	REQUIRE(pipe_cfg_finish(c) == 0 && c->dcs == 3, "finish");
	memset(p, 0, sizeof(*p));
	p->stages = 3;
	for (uint32_t s = 0; s < 3; s++)
		p->ins[s] = calloc(8, sizeof(struct pipe_ins));
	put(p, 0, PIPE_I_POST_SEND, 0, 0, PIPE_CH_ACT(0));
	put(p, 0, PIPE_I_WAIT_SEND, 0, 0, PIPE_CH_ACT(0));
	put(p, 2, PIPE_I_POST_SEND, 0, 0, PIPE_CH_GRAD(1));
	put(p, 2, PIPE_I_WAIT_SEND, 0, 0, PIPE_CH_GRAD(1));
	put(p, 1, PIPE_I_POST_RECV, 0, 0, PIPE_CH_ACT(0));
	put(p, 1, PIPE_I_POST_RECV, 0, 0, PIPE_CH_GRAD(1));
	put(p, 1, PIPE_I_WAIT_RECV, 0, 0, PIPE_CH_ACT(0));
	put(p, 1, PIPE_I_WAIT_RECV, 0, 0, PIPE_CH_GRAD(1));
	put(p, 1, PIPE_I_COMPUTE, PIPE_F, 0, 0);
}

static void check_pair(const struct pipe_des_out *o, double s0, double e0, double s3, double e3,
		       const char *tag)
{
	const struct pipe_tx *a = tx_of(o, PIPE_CH_ACT(0), 0), *g = tx_of(o, PIPE_CH_GRAD(1), 0);

	REQUIRE(a && g && o->ntx == 2, "%s: tx records", tag);
	CHECK(fabs(a->t_start - s0) < 1e-12 && fabs(a->t_end - e0) < 1e-12,
	      "%s: act %.9f..%.9f want "
	      "%.9f..%.9f",
	      tag, a->t_start, a->t_end, s0, e0);
	CHECK(fabs(g->t_start - s3) < 1e-12 && fabs(g->t_end - e3) < 1e-12,
	      "%s: grad %.9f..%.9f "
	      "want %.9f..%.9f",
	      tag, g->t_start, g->t_end, s3, e3);
	/* arrival one delay later, the sender's completion one reverse delay after */
	CHECK(fabs(a->t_arrive - (e0 + 0.010)) < 1e-12 && fabs(g->t_arrive - (e3 + 0.010)) < 1e-12,
	      "%s: arrivals", tag);
	CHECK(fabs(wait_end(o, 0, PIPE_I_WAIT_SEND, PIPE_CH_ACT(0)) - (e0 + 0.011)) < 1e-12,
	      "%s: act acknowledged", tag);
	CHECK(fabs(wait_end(o, 2, PIPE_I_WAIT_SEND, PIPE_CH_GRAD(1)) - (e3 + 0.013)) < 1e-12,
	      "%s: grad acknowledged", tag);
	CHECK(fabs(wait_end(o, 1, PIPE_I_WAIT_RECV, PIPE_CH_GRAD(1)) - fmax(e0, e3) - 0.010) <
		      1e-12,
	      "%s: consumer", tag);
}

static void test_shared_bottleneck(void)
{
	struct pipe_cfg c;
	struct pipe_net n;
	struct pipe_prog p;
	struct pipe_des_out o;
	struct pipe_alloc a;
	struct pipe_flows fl;

	shared_setup(&c, &n, &p, 1);
	pipe_flows_get(&c, &n, &fl);
	REQUIRE(fl.n == 4 && fl.of_chan[0] == 0 && fl.of_chan[3] == 3, "flows");
	/* unpaced: FIFO, the gradient (ready at 3 ms) waits for the activation */
	REQUIRE(pipe_des_run(&c, &p, &o) == 0, "des");
	check_pair(&o, 0.001, 0.001 + BITS0 / R, 0.001 + BITS0 / R, 0.001 + (BITS0 + BITS3) / R,
		   "fifo");
	pipe_des_free(&o);
	/* equal pacing: half each, concurrently: activation alone at R/2 for
	 * its whole transfer, the gradient too */
	memset(&a, 0, sizeof(a));
	a.n = 4;
	for (uint32_t i = 0; i < 4; i++)
		a.rate[i] = (uint64_t)(R / 2);
	REQUIRE(pipe_des_run_rates(&c, &p, &a, &o) == 0, "des equal");
	check_pair(&o, 0.001, 0.001 + BITS0 / (R / 2), 0.003, 0.003 + BITS3 / (R / 2), "equal");
	pipe_des_free(&o);
	/* 0.75 R and 0.5 R: the head (activation) takes its 0.75, the gradient
	 * the remaining 0.25 until the activation is done, then its 0.5 */
	a.rate[0] = (uint64_t)(0.75 * R);
	a.rate[3] = (uint64_t)(0.5 * R);
	REQUIRE(pipe_des_run_rates(&c, &p, &a, &o) == 0, "des over");
	{
		double e0 = 0.001 + BITS0 / (0.75 * R);
		double left = BITS3 - 0.25 * R * (e0 - 0.003);

		check_pair(&o, 0.001, e0, 0.003, e0 + left / (0.5 * R), "over capacity");
	}
	pipe_des_free(&o);
	a.n = 3;
	CHECK(pipe_des_run_rates(&c, &p, &a, &o) == -EINVAL, "rates of another flow count");
	pipe_prog_free(&p);
	/* DC 1 -> DC 2 in no link: not emulated, no delay, its own rate_bps;
	 * the two transfers do not share */
	shared_setup(&c, &n, &p, 0);
	REQUIRE(pipe_des_run(&c, &p, &o) == 0, "des unmapped");
	{
		const struct pipe_tx *g = tx_of(&o, PIPE_CH_GRAD(1), 0),
				     *x = tx_of(&o, PIPE_CH_ACT(0), 0);

		REQUIRE(g && x, "tx");
		CHECK(g->link == -1 && x->link == 0, "links %d %d", g->link, x->link);
		CHECK(fabs(g->t_start - 0.003) < 1e-12 &&
			      fabs(g->t_end - (0.003 + BITS3 / 250e6)) < 1e-12 &&
			      fabs(g->t_arrive - g->t_end) < 1e-12,
		      "unmapped pair %.9f %.9f %.9f", g->t_start, g->t_end, g->t_arrive);
		CHECK(fabs(x->t_end - (0.001 + BITS0 / R)) < 1e-12, "activation alone on into2");
	}
	pipe_des_free(&o);
	pipe_prog_free(&p);
}

/*
 * One transfer over a lossy link: S = 2 across, M = 1, 4 MiB activation,
 * 64 KiB chunks, no frame overhead (wire = payload). The time from its first
 * bit to the sender's acknowledgment is the completion-time model's mean
 * for the scheme at the link's RTT, rate and loss.
 */
static void test_loss_single(void)
{
	static struct pipe_order ord;
	static const char *const rels[] = {"sr", "ec:rs:32:8", "ec:xor:16:4", "auto"};
	static const double losses[] = {0, 1e-3, 1e-2, 3e-2};
	char why[256] = "";

	for (size_t r = 0; r < 4; r++)
		for (size_t l = 0; l < 4; l++) {
			struct pipe_cfg c;
			struct pipe_net n;
			struct pipe_prog p;
			struct pipe_des_out o;
			struct sdr_model_params prm = {0};
			struct sdr_model_result res;
			char text[256];
			double want;

			pipe_cfg_init(&c);
			c.stages = 2;
			c.micro = 1;
			c.dc_of[0] = 0;
			c.dc_of[1] = 1;
			c.act_bytes = 4 << 20;
			c.grad_bytes = 4096;
			c.frame_overhead = 0;
			c.comm = PIPE_COMM_NONBLOCKING;
			c.sched = PIPE_SCHED_GPIPE;
			REQUIRE(pipe_rel_parse(rels[r], &c.rel) == 0, "rel");
			snprintf(text, sizeof(text),
				 "link a to=1 from=0 delay=12ms rate=1gbit loss=%g; link b to=0 "
				 "from=1 "
				 "delay=13ms rate=1gbit",
				 losses[l]);
			REQUIRE(pipe_net_parse(text, &n, why, sizeof(why)) == 0, "%s", why);
			c.net = &n;
			REQUIRE(pipe_cfg_finish(&c) == 0, "finish");
			REQUIRE(pipe_order_build(&c, &ord) == 0 &&
					pipe_prog_build(&c, &ord, &p) == 0,
				"prog");
			REQUIRE(pipe_des_run(&c, &p, &o) == 0, "des");
			const struct pipe_tx *t = tx_of(&o, PIPE_CH_ACT(0), 0);

			REQUIRE(t, "tx");
			/* the model, independently: 1 Gbit/s of payload (no overhead) */
			prm.msg_bytes = 4 << 20;
			prm.chunk_bytes = 65536;
			prm.pkts_per_chunk = 16;
			prm.rate_bps = 1e9;
			prm.rtt_s = 0.025;
			prm.pkt_loss = losses[l];
			prm.alpha = 0.5;
			prm.beta = -1;
			prm.scheme = c.rel;
			if (c.rel.rel == SDR_REL_AUTO) {
				size_t best;

				REQUIRE(sdr_model_pick(&prm, NULL, 0, SDR_MODEL_OBJ_MEAN, NULL,
						       &best) == 0,
					"pick");
				prm.scheme = sdr_model_default_schemes[best];
				CHECK(t->scheme == prm.scheme.rel,
				      "%s at %g: sent with %u, the pick is %u", rels[r], losses[l],
				      t->scheme, prm.scheme.rel);
				/* at zero loss SR (no parity); at 1e-2 (15 % of the 16-packet
				 * chunks lost) an EC code; at 3e-2 (39 %) SR again */
				if (losses[l] == 0 || losses[l] == 3e-2)
					CHECK(prm.scheme.rel == SDR_REL_SR, "auto at %g picks EC",
					      losses[l]);
				if (losses[l] == 1e-2)
					CHECK(prm.scheme.rel == SDR_REL_EC,
					      "auto at 1e-2 picks SR");
			}
			REQUIRE(sdr_model_eval(&prm, &res) == 0, "model");
			want = res.mean;
			/* first bit to acknowledgment: arrival + the reverse delay */
			CHECK(fabs(t->t_arrive + 0.013 - t->t_start - want) < 1e-9 * want,
			      "%s loss %g: DES %.9f s, model %.9f s", rels[r], losses[l],
			      t->t_arrive + 0.013 - t->t_start, want);
			/* EC: data and parity on the wire */
			CHECK(fabs(t->t_end - t->t_start -
				   (double)((res.chunks + res.parity_chunks) * 65536) * 8 / 1e9) <
				      1e-12,
			      "%s loss %g: wire time %.9f", rels[r], losses[l],
			      t->t_end - t->t_start);
			CHECK((losses[l] > 0) == (t->loss_extra > 0), "loss_extra %g",
			      t->loss_extra);
			pipe_des_free(&o);
			pipe_prog_free(&p);
		}
}

/* Loss recovery drawn from the model's distribution (cfg.loss_seed): the
 * same seed gives the same run, and over many seeds a single SR transfer's
 * completion averages to the model's mean. */
static void test_loss_drawn(void)
{
	static struct pipe_order ord;
	struct pipe_cfg c;
	struct pipe_net n;
	struct pipe_prog p;
	struct pipe_des_out o;
	struct sdr_model_params prm = {0};
	struct sdr_model_result res;
	char why[256] = "";
	double sum = 0, first = 0, lo = INFINITY, hi = 0;
	const uint32_t N = 400;

	pipe_cfg_init(&c);
	c.stages = 2;
	c.micro = 1;
	c.dc_of[0] = 0;
	c.dc_of[1] = 1;
	c.act_bytes = 256 << 10;
	c.grad_bytes = 4096;
	c.frame_overhead = 0;
	c.chunk_bytes = 4096;
	c.comm = PIPE_COMM_NONBLOCKING;
	c.sched = PIPE_SCHED_GPIPE;
	c.rel.rel = SDR_REL_SR;
	REQUIRE(pipe_net_parse("link a to=1 from=0 delay=12.5ms rate=1gbit loss=1e-2; link b to=0 "
			       "from=1 delay=12.5ms rate=1gbit",
			       &n, why, sizeof(why)) == 0,
		"%s", why);
	c.net = &n;
	REQUIRE(pipe_cfg_finish(&c) == 0, "finish");
	REQUIRE(pipe_order_build(&c, &ord) == 0 && pipe_prog_build(&c, &ord, &p) == 0, "prog");
	for (uint32_t k = 1; k <= N; k++) {
		const struct pipe_tx *t;
		double d;

		c.loss_seed = k;
		REQUIRE(pipe_des_run(&c, &p, &o) == 0, "des");
		t = tx_of(&o, PIPE_CH_ACT(0), 0);
		REQUIRE(t, "tx");
		d = t->t_arrive + 0.0125 - t->t_start;
		sum += d;
		lo = fmin(lo, d);
		hi = fmax(hi, d);
		if (k == 1)
			first = d;
		pipe_des_free(&o);
	}
	c.loss_seed = 1;
	REQUIRE(pipe_des_run(&c, &p, &o) == 0, "des again");
	CHECK(tx_of(&o, PIPE_CH_ACT(0), 0)->t_arrive + 0.0125 -
			      tx_of(&o, PIPE_CH_ACT(0), 0)->t_start ==
		      first,
	      "seed 1 twice differs");
	pipe_des_free(&o);
	prm.msg_bytes = 256 << 10;
	prm.chunk_bytes = 4096;
	prm.pkts_per_chunk = 1;
	prm.rate_bps = 1e9;
	prm.rtt_s = 0.025;
	prm.pkt_loss = 1e-2;
	prm.alpha = 0.5;
	prm.beta = -1;
	prm.scheme.rel = SDR_REL_SR;
	REQUIRE(sdr_model_eval(&prm, &res) == 0, "model");
	CHECK(fabs(sum / N - res.mean) < 0.05 * res.mean, "drawn mean %.6f, model %.6f", sum / N,
	      res.mean);
	/* never faster than without loss; the slow tail shows up */
	CHECK(lo >= (double)(256 << 10) * 8 / 1e9 + 0.025 - 1e-9 && hi > res.p99 * 0.9,
	      "range %.6f .. %.6f (p99 %.6f)", lo, hi, res.p99);
	pipe_prog_free(&p);
}

static void test_loss_none_and_default(void)
{
	static struct pipe_order ord;
	struct pipe_cfg c;
	struct pipe_prog p;
	struct pipe_des_out o;
	double t_sr, t_clean;

	pipe_cfg_init(&c);
	c.stages = 4;
	c.micro = 8;
	c.loss = 1e-2; /* every link of the default network */
	REQUIRE(pipe_cfg_finish(&c) == 0, "finish");
	REQUIRE(pipe_order_build(&c, &ord) == 0 && pipe_prog_build(&c, &ord, &p) == 0, "prog");
	CHECK(pipe_des_run(&c, &p, &o) == -EPIPE, "rel none over a lossy link");
	c.rel.rel = SDR_REL_SR;
	REQUIRE(pipe_des_run(&c, &p, &o) == 0, "sr");
	{
		struct pipe_metrics m;

		pipe_metrics_get(&c, &o.ev, 0, &m);
		t_sr = m.iter_time;
	}
	pipe_des_free(&o);
	c.loss = 0;
	REQUIRE(pipe_des_run(&c, &p, &o) == 0, "sr clean");
	{
		struct pipe_metrics m;

		pipe_metrics_get(&c, &o.ev, 0, &m);
		t_clean = m.iter_time;
	}
	CHECK(t_sr > t_clean, "loss costs nothing: %.6f vs %.6f", t_sr, t_clean);
	/* the digest tells a lossy default network from a clean one */
	{
		struct pipe_cfg d = c;

		d.loss = 1e-3;
		CHECK(pipe_cfg_digest(&c) != pipe_cfg_digest(&d), "loss not in the digest");
	}
	pipe_des_free(&o);
	pipe_prog_free(&p);
}

/* pipe_predict() against the policy applied by hand between iterations */
static void test_predict(void)
{
	static struct pipe_order ord;
	static struct pipe_pred_iter it[4];
	struct pipe_cfg c;
	struct pipe_net n;
	struct pipe_prog p;
	struct pipe_des_out last, o;
	struct pipe_policy_cfg pc;
	struct pipe_flows fl;
	struct pipe_cba_label *lab;
	char why[256] = "";

	pipe_cfg_init(&c);
	REQUIRE(pipe_place_parse("0,0,1,2,1,2", &c) == 0, "place");
	c.micro = 8;
	c.tf = 0.005;
	c.tb = 0.01;
	c.act_bytes = c.grad_bytes = 2 << 20;
	c.comm = PIPE_COMM_NONBLOCKING;
	REQUIRE(pipe_net_parse("link l01 to=1 from=0 delay=2.5ms rate=1gbit; link l10 to=0 from=1 "
			       "delay=2.5ms rate=1gbit; link into2 to=2 from=0,1 delay=12.5ms "
			       "rate=2gbit; link from2 to=1 from=2 delay=12.5ms rate=2gbit",
			       &n, why, sizeof(why)) == 0,
		"%s", why);
	c.net = &n;
	REQUIRE(pipe_cfg_finish(&c) == 0, "finish");
	REQUIRE(pipe_order_build(&c, &ord) == 0 && pipe_prog_build(&c, &ord, &p) == 0, "prog");
	pipe_flows_get(&c, &n, &fl);
	lab = calloc((size_t)PIPE_NCHAN(6) * 8, sizeof(*lab));
	REQUIRE(lab, "lab");
	pipe_policy_cfg_init(&pc);
	pc.intra_lat = 1e-4;
	/* both CBA policies: the paper's rule and cba-shift */
	for (int pol = PIPE_POLICY_CBA; pol <= PIPE_POLICY_CBA_SHIFT; pol++) {
		pc.policy = (enum pipe_policy)pol;
		REQUIRE(pipe_predict(&c, &p, &pc, 4, it, &last, why, sizeof(why)) == 0, "%s", why);
		for (uint32_t i = 0; i < 4; i++) {
			struct pipe_alloc want;
			struct pipe_metrics m;
			int ncb;

			/* rates of iteration i: the policy on iteration i-1's events */
			REQUIRE(pipe_policy_alloc(&c, &n, &fl, &pc, i ? &it[i - 1].alloc : NULL,
						  i ? lab : NULL, &want, why, sizeof(why)) == 0,
				"%s", why);
			CHECK(memcmp(want.rate, it[i].alloc.rate, sizeof(want.rate)) == 0 &&
				      memcmp(want.blocked, it[i].alloc.blocked,
					     sizeof(want.blocked)) == 0,
			      "%s iteration %u: rates differ from the policy's",
			      pipe_policy_name(pc.policy), i);
			REQUIRE(pipe_des_run_rates(&c, &p, &it[i].alloc, &o) == 0, "des");
			pipe_metrics_get(&c, &o.ev, 0, &m);
			CHECK(fabs(m.iter_time - it[i].iter_time) < 1e-12, "iteration %u time", i);
			ncb = pipe_cba_label(&c, &o.ev, 0, pc.intra_lat, lab);
			CHECK(ncb == (int)it[i].ncb, "iteration %u labels %d vs %u", i, ncb,
			      it[i].ncb);
			if (i == 3)
				CHECK(last.ev.n == o.ev.n && memcmp(last.ev.ev, o.ev.ev,
								    o.ev.n * sizeof(*o.ev.ev)) == 0,
				      "last iteration's events");
			pipe_des_free(&o);
		}
		pipe_des_free(&last);
	}
	/* equal: the same rates every iteration, each link's rate split */
	pc.policy = PIPE_POLICY_EQUAL;
	REQUIRE(pipe_predict(&c, &p, &pc, 2, it, NULL, why, sizeof(why)) == 0, "%s", why);
	CHECK(memcmp(it[0].alloc.rate, it[1].alloc.rate, sizeof(it[0].alloc.rate)) == 0 &&
		      it[0].iter_time == it[1].iter_time,
	      "equal changes");
	free(lab);
	pipe_prog_free(&p);
}

/*
 * GeoPipe's dN by search, on a case with a known answer: S = 8 (4 + 4),
 * M = 16, 4 MiB activations and gradients at 400 Mbit/s, RTT 25 ms. The
 * closed form asks for 6 extra forwards upstream (a 195 ms loop over 37.5 ms
 * cycles), but the link is the bottleneck and 2 already give the shortest
 * iteration. The search must find the brute force's optimum: the shortest
 * time, then the fewest extra activations, over every non-increasing
 * vector of the four upstream stages.
 */
static void test_delta_search(void)
{
	struct pipe_cfg c;
	uint32_t d[PIPE_MAX_STAGES], runs, best_sum = UINT32_MAX, v[4];
	double t_search, t_rule, t_min = INFINITY;

	pipe_cfg_init(&c);
	REQUIRE(pipe_place_parse("4,4", &c) == 0, "place");
	c.micro = 16;
	c.sched = PIPE_SCHED_GEOPIPE;
	c.act_bytes = c.grad_bytes = 4 << 20;
	c.rate_bps = 400000000ull;
	REQUIRE(pipe_cfg_finish(&c) == 0, "finish");
	for (uint32_t s = 0; s < 8; s++)
		CHECK(pipe_stage_delta(&c, s) == (s < 4 ? 6u : 0u), "closed form dN(%u) = %u", s,
		      pipe_stage_delta(&c, s));
	REQUIRE(pipe_des_time(&c, &t_rule) == 0, "rule time");
	REQUIRE(pipe_delta_search(&c, d, &t_search, &runs) == 0, "search");
	CHECK(fabs(t_search - t_rule) < 1e-6, "search %.6f, rule %.6f", t_search, t_rule);
	CHECK(d[0] == 2 && d[1] == 2 && d[2] == 2 && d[3] == 2 && d[4] == 0 && d[7] == 0,
	      "search: %u %u %u %u %u", d[0], d[1], d[2], d[3], d[4]);
	CHECK(runs < 40, "runs %u", runs);
	/* brute force */
	for (v[0] = 0; v[0] <= pipe_stage_delta_max(&c, 0); v[0]++)
		for (v[1] = 0; v[1] <= v[0]; v[1]++)
			for (v[2] = 0; v[2] <= v[1]; v[2]++)
				for (v[3] = 0; v[3] <= v[2]; v[3]++) {
					struct pipe_cfg e = c;
					double t;

					e.delta_n = PIPE_DELTA_STAGE;
					memset(e.delta_stage, 0, sizeof(e.delta_stage));
					memcpy(e.delta_stage, v, sizeof(v));
					REQUIRE(pipe_des_time(&e, &t) == 0, "des");
					if (t < t_min - 1e-6 ||
					    (t <= t_min + 1e-6 &&
					     v[0] + v[1] + v[2] + v[3] < best_sum)) {
						if (t < t_min - 1e-6)
							t_min = t;
						best_sum = v[0] + v[1] + v[2] + v[3];
					}
				}
	CHECK(fabs(t_search - t_min) < 1e-6 && d[0] + d[1] + d[2] + d[3] == best_sum,
	      "brute force: %.6f s with %u extra, search %.6f s with %u", t_min, best_sum, t_search,
	      d[0] + d[1] + d[2] + d[3]);
	/* per-stage values are capped and kept non-increasing downstream */
	c.delta_n = PIPE_DELTA_STAGE;
	memset(c.delta_stage, 0, sizeof(c.delta_stage));
	c.delta_stage[0] = 1;
	c.delta_stage[1] = 3;
	c.delta_stage[4] = 5; /* downstream of the link: none */
	CHECK(pipe_stage_delta(&c, 0) == 1 && pipe_stage_delta(&c, 1) == 1 &&
		      pipe_stage_delta(&c, 4) == 0,
	      "per-stage clamp");
	c.delta_stage[0] = c.delta_stage[1] = 200;
	CHECK(pipe_stage_delta(&c, 0) == pipe_stage_delta_max(&c, 0) &&
		      pipe_stage_delta_max(&c, 0) == 8,
	      "cap %u", pipe_stage_delta(&c, 0));
	{
		struct pipe_cfg f = c;

		f.delta_stage[1] = 7;
		CHECK(pipe_cfg_digest(&c) != pipe_cfg_digest(&f), "per-stage dN not in the digest");
	}
	c.sched = PIPE_SCHED_1F1B;
	CHECK(pipe_delta_search(&c, d, NULL, NULL) == -EINVAL, "search of a non-geopipe schedule");
}

/* a configuration of 2 stages, one in each of 2 DCs, over the network @p net
 * (parsed into @p n) */
static void two_dc_cfg(const char *net, struct pipe_cfg *c, struct pipe_net *n)
{
	char why[256] = "";

	pipe_cfg_init(c);
	REQUIRE(pipe_place_parse("1,1", c) == 0, "place");
	REQUIRE(pipe_net_parse(net, n, why, sizeof(why)) == 0, "%s: %s", net, why);
	c->net = n;
}

/* iteration time of 2 stages over 2 DCs, 4 micro-batches of 4 MiB each way,
 * SR, with the network @p net and --paths @p paths; @p o: the DES run's
 * output */
static double two_dc(const char *net, uint32_t paths, struct pipe_des_out *o)
{
	static struct pipe_order ord;
	static struct pipe_net n;
	struct pipe_cfg c;
	struct pipe_prog p;
	double t = NAN;

	two_dc_cfg(net, &c, &n);
	c.micro = 4;
	c.act_bytes = c.grad_bytes = 4 << 20;
	c.tf = 0.010;
	c.tb = 0.020;
	c.paths = paths;
	c.sched = PIPE_SCHED_1F1B;
	REQUIRE(pipe_rel_parse("sr", &c.rel) == 0, "rel"); /* the schemes that spray */
	REQUIRE(pipe_cfg_finish(&c) == 0, "finish");
	REQUIRE(pipe_order_build(&c, &ord) == 0 && pipe_prog_build(&c, &ord, &p) == 0, "prog");
	REQUIRE(pipe_des_time(&c, &t) == 0, "des time");
	if (o)
		REQUIRE(pipe_des_run(&c, &p, o) == 0, "des");
	pipe_prog_free(&p);
	return t;
}

/*
 * A link of two paths (5 ms and 12.5 ms, 250 Mbit/s each) both ways. A QP
 * spraying over 4 ports spreads each message over both paths by their rates:
 * both parts finish together and the message arrives over the 12.5 ms path;
 * its clear-to-send and acknowledgments take one port, 8.75 ms (the mean).
 * So the iteration is longer than over an ideal 500 Mbit/s link of 5 ms,
 * shorter than over one of 12.5 ms, and much shorter than over one path of
 * 250 Mbit/s. Paths of one delay and unequal rates (100 + 400 Mbit/s) are
 * exactly one link of the summed rate. A QP of one port takes one path
 * (flow i: path i mod 2).
 */
static void test_paths(void)
{
	static const char *const two =
		"link f to=1 from=0 delay=5ms rate=250mbit | delay=12.5ms rate=250mbit\n"
		"link r to=0 from=1 delay=5ms rate=250mbit | delay=12.5ms rate=250mbit\n";
	struct pipe_des_out o;
	struct pipe_cfg wc; /* the defaults' wire bytes (mtu, frame overhead) */
	double t2 = two_dc(two, 4, &o);
	double t250 = two_dc("link f to=1 from=0 delay=5ms rate=250mbit;"
			     "link r to=0 from=1 delay=5ms rate=250mbit",
			     4, NULL);
	double t250s = two_dc("link f to=1 from=0 delay=12.5ms rate=250mbit;"
			      "link r to=0 from=1 delay=12.5ms rate=250mbit",
			      4, NULL);
	double t500 = two_dc("link f to=1 from=0 delay=5ms rate=500mbit;"
			     "link r to=0 from=1 delay=5ms rate=500mbit",
			     4, NULL);
	double t500s = two_dc("link f to=1 from=0 delay=12.5ms rate=500mbit;"
			      "link r to=0 from=1 delay=12.5ms rate=500mbit",
			      0, NULL);
	const struct pipe_tx *t = tx_of(&o, PIPE_CH_ACT(0), 1);

	pipe_cfg_init(&wc);
	printf("2 paths: %.3f ms; 250 Mbit/s: %.3f ms (12.5 ms: %.3f); 500 Mbit/s: %.3f ms "
	       "(12.5 ms: %.3f)\n",
	       t2 * 1e3, t250 * 1e3, t250s * 1e3, t500 * 1e3, t500s * 1e3);
	CHECK(t500 < t2 && t2 < t500s && t500s < t250 && t250 < t250s,
	      "2 paths %g not between %g and %g", t2, t500, t250);
	REQUIRE(t, "tx");
	CHECK(fabs(t->t_arrive - t->t_end - 0.0125) < 1e-12 && t->link == 0,
	      "arrives over the longer path: %g", t->t_arrive - t->t_end);
	pipe_des_free(&o);
	/* unequal paths, parts by rate: one link of the sum */
	t500s = two_dc("link f to=1 from=0 delay=10ms rate=500mbit;"
		       "link r to=0 from=1 delay=10ms rate=500mbit",
		       0, NULL);
	CHECK(fabs(two_dc("link f to=1 from=0 delay=10ms rate=100mbit | delay=10ms rate=400mbit;"
			  "link r to=0 from=1 delay=10ms rate=400mbit|delay=10ms rate=100mbit",
			  16, NULL) -
		   t500s) < 1e-9,
	      "100 + 400 Mbit/s");
	CHECK(fabs(two_dc("link f to=1 from=0 delay=10ms rate=250mbit paths=2;"
			  "link r to=0 from=1 delay=10ms rate=250mbit paths=2",
			  2, NULL) -
		   t500s) < 1e-9,
	      "paths=2 of 250 Mbit/s");
	/* one port: the activations (flow 0) on path 0 at 250 Mbit/s, the
	 * gradients (flow 1) on path 1; slower than spraying */
	CHECK(two_dc(two, 1, &o) > t2 + 0.05, "one port as fast as two paths");
	for (uint32_t m = 0; m < 4; m++) {
		const struct pipe_tx *ta = tx_of(&o, PIPE_CH_ACT(0), m);
		const struct pipe_tx *tg = tx_of(&o, PIPE_CH_GRAD(0), m);

		REQUIRE(ta && tg, "tx");
		CHECK(fabs(ta->t_arrive - ta->t_end - 0.005) < 1e-12 &&
			      fabs(tg->t_arrive - tg->t_end - 0.0125) < 1e-12,
		      "one port: act over %g, grad over %g", ta->t_arrive - ta->t_end,
		      tg->t_arrive - tg->t_end);
		CHECK(fabs(ta->t_end - ta->t_start -
			   (double)pipe_wire_bytes(&wc, 4 << 20) * 8 / 250e6) < 1e-9,
		      "one port: 250 Mbit/s");
	}
	pipe_des_free(&o);
	CHECK(two_dc(two, 0, NULL) == two_dc(two, 1, NULL), "--paths 0 is one port");
	{
		/* --rel none keeps one port whatever --paths says */
		static struct pipe_order ord;
		static struct pipe_net n;
		struct pipe_cfg c;
		struct pipe_prog p;
		double t[2];

		two_dc_cfg(two, &c, &n);
		for (int k = 0; k < 2; k++) {
			c.paths = k ? 16 : 1;
			REQUIRE(pipe_cfg_finish(&c) == 0 && pipe_order_build(&c, &ord) == 0 &&
					pipe_prog_build(&c, &ord, &p) == 0,
				"prog");
			REQUIRE(pipe_des_time(&c, &t[k]) == 0, "des");
			pipe_prog_free(&p);
		}
		CHECK(t[0] == t[1], "--rel none sprayed: %g %g", t[0], t[1]);
	}
	/* the policies see the sum of the rates */
	{
		struct pipe_cfg c;
		struct pipe_net n;
		struct pipe_flows fl;
		struct pipe_policy_cfg pc;
		struct pipe_alloc a;
		char why[256] = "";

		two_dc_cfg(two, &c, &n);
		REQUIRE(pipe_cfg_finish(&c) == 0, "finish");
		pipe_flows_get(&c, &n, &fl);
		pipe_policy_cfg_init(&pc);
		pc.policy = PIPE_POLICY_EQUAL;
		REQUIRE(pipe_policy_alloc(&c, &n, &fl, &pc, NULL, NULL, &a, why, sizeof(why)) == 0,
			"%s", why);
		CHECK(a.n == 2 && a.rate[0] == 500000000ull && a.rate[1] == 500000000ull,
		      "equal: %llu %llu", (unsigned long long)a.rate[0],
		      (unsigned long long)a.rate[1]);
	}
}

int main(void)
{
	test_delta_search();
	test_shared_bottleneck();
	test_loss_single();
	test_loss_drawn();
	test_loss_none_and_default();
	test_predict();
	test_paths();
	return t_finish("pipe_des");
}
