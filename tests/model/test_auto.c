/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * AUTO reliability estimates and pick (common/sdr_auto.h): configuration
 * checks, conservative start, RFC 6298 smoothing, the chunk-loss estimate
 * (prior, convergence, decay), the pick against sdr_model_pick() evaluated
 * directly at the same estimates over a grid, the decision cache, and the
 * shape the paper predicts (EC for messages below the bandwidth-delay
 * product at 1 % loss, SR for large ones).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sdr_auto.h"
#include "sdr_test.h"

static void base_cfg(struct sdr_auto_cfg *c)
{
	sdr_auto_cfg_default(c);
	c->rate_bps = 1e9;
	c->chunk_bytes = 4096;
	c->pkts_per_chunk = 1;
}

/* The model's parameters AUTO evaluates with base_cfg(): 4 KiB chunks (a
 * loss per chunk), 1 Gbit/s, 25 ms, alpha 0.5, beta alpha/2. */
static struct sdr_model_params model_prm(uint64_t msg_bytes, double loss)
{
	struct sdr_model_params prm = {0};

	prm.msg_bytes = msg_bytes;
	prm.chunk_bytes = 4096;
	prm.pkts_per_chunk = 1;
	prm.rate_bps = 1e9;
	prm.rtt_s = 0.025;
	prm.pkt_loss = loss;
	prm.alpha = 0.5;
	prm.beta = -1;
	return prm;
}

int main(void)
{
	struct sdr_auto_cfg c;
	struct sdr_auto a;
	struct sdr_scheme s;

	/* 1. configuration checks */
	base_cfg(&c);
	CHECK(sdr_auto_init(&a, &c) == 0);
	CHECK(a.cfg.ncands == SDR_MODEL_N_DEFAULT_SCHEMES);
	c.rate_bps = 0;
	CHECK(sdr_auto_init(&a, &c) == -EINVAL);
	base_cfg(&c);
	c.chunk_bytes = 0;
	CHECK(sdr_auto_init(&a, &c) == -EINVAL);
	base_cfg(&c);
	c.prior_loss = 1;
	CHECK(sdr_auto_init(&a, &c) == -EINVAL);
	base_cfg(&c);
	c.ncands = 1;
	c.cands[0] = (struct sdr_scheme){.rel = SDR_REL_EC, .code = SDR_EC_RS, .k = 200, .m = 100};
	CHECK(sdr_auto_init(&a, &c) == -EINVAL); /* k + m > 255 */
	base_cfg(&c);
	c.half_life_chunks = 0;
	CHECK(sdr_auto_init(&a, &c) == -EINVAL);
	CHECK(sdr_auto_init(NULL, &c) == -EINVAL);

	/* 2. conservative start: no RTT sample -> initial (SR) */
	base_cfg(&c);
	CHECK(sdr_auto_init(&a, &c) == 0);
	CHECK(sdr_auto_pick(&a, 256 * 1024, &s) == -1);
	CHECK(s.rel == SDR_REL_SR && a.initial_picks == 1 && a.evals == 0);
	c.min_rtt_samples = 3;
	CHECK(sdr_auto_init(&a, &c) == 0);
	sdr_auto_rtt(&a, 0.025);
	sdr_auto_rtt(&a, 0.025);
	CHECK(sdr_auto_pick(&a, 256 * 1024, &s) == -1);
	sdr_auto_rtt(&a, 0.025);
	CHECK(sdr_auto_pick(&a, 256 * 1024, &s) >= 0);

	/* 3. RFC 6298 smoothing; bad samples ignored */
	base_cfg(&c);
	sdr_auto_init(&a, &c);
	sdr_auto_rtt(&a, 0.020);
	CHECK(fabs(a.srtt - 0.020) < 1e-12 && fabs(a.rttvar - 0.010) < 1e-12);
	sdr_auto_rtt(&a, 0.030);
	CHECK(fabs(a.rttvar - (0.75 * 0.010 + 0.25 * 0.010)) < 1e-12);
	CHECK(fabs(a.srtt - (0.875 * 0.020 + 0.125 * 0.030)) < 1e-12);
	sdr_auto_rtt(&a, -1);
	sdr_auto_rtt(&a, 0);
	sdr_auto_rtt(&a, NAN);
	CHECK(a.rtt_samples == 2);

	/* 4. loss: prior, convergence to 1 %, decay back towards 0 */
	CHECK(fabs(sdr_auto_loss(&a) - 1e-3) < 1e-12);
	srand(7);
	for (int msg = 0; msg < 400; msg++) { /* 400 x 256 chunks at 1 % */
		uint64_t lost = 0;
		for (int i = 0; i < 256; i++)
			lost += rand() % 100 == 0;
		sdr_auto_chunks(&a, 256, lost);
	}
	CHECK(fabs(sdr_auto_loss(&a) - 0.01) < 0.002);
	for (int msg = 0; msg < 400; msg++)
		sdr_auto_chunks(&a, 256, 0); /* 102400 chunks = 5 half-lives */
	CHECK(sdr_auto_loss(&a) < 0.01 / 16);
	sdr_auto_chunks(&a, 10, 50); /* lost > sent is clamped */
	CHECK(sdr_auto_loss(&a) <= 1);
	CHECK(a.chunks_seen == 800 * 256 + 10);

	/* 5. the pick equals the model's pick at the same estimates */
	{
		const double losses[] = {1e-4, 1e-3, 1e-2, 5e-2};
		const uint64_t sizes[] = {4096, 256 << 10, 4 << 20, 32 << 20, 1ull << 30};
		for (unsigned li = 0; li < 4; li++) {
			for (unsigned si = 0; si < 5; si++) {
				struct sdr_model_params prm = model_prm(sizes[si], losses[li]);
				struct sdr_model_result r[SDR_MODEL_N_DEFAULT_SCHEMES];
				size_t best;
				base_cfg(&c);
				c.prior_loss = losses[li];
				c.prior_chunks = 1e9; /* hold the estimate at the prior */
				sdr_auto_init(&a, &c);
				sdr_auto_rtt(&a, 0.025);
				int got = sdr_auto_pick(&a, sizes[si], &s);
				const struct sdr_scheme *orig = sdr_model_default_schemes;
				CHECK(sdr_model_pick(&prm, orig, SDR_MODEL_N_DEFAULT_SCHEMES,
						     SDR_MODEL_OBJ_MEAN, r, &best) == 0);
				CHECK(got == (int)best);
				CHECK(s.code == orig[best].code && s.k == orig[best].k &&
				      s.m == orig[best].m);
				CHECK(a.last_mean == r[best].mean);
			}
		}
	}

	/* 5b. a message smaller than k chunks is one short submessage whose
	 * parity is in proportion to its chunks (Reed-Solomon) or one per
	 * group that holds a chunk (XOR): on 4 chunks RS(32,8), RS(16,4) and
	 * RS(8,2) each send one parity chunk, XOR(32,8) four. The model
	 * charges what is sent, and rebuilds from what is sent ... */
	{
		struct sdr_model_params prm = model_prm(4 * 4096, 0.01);
		struct sdr_model_result r[SDR_MODEL_N_DEFAULT_SCHEMES];
		size_t best;

		CHECK(sdr_model_pick(&prm, sdr_model_default_schemes, SDR_MODEL_N_DEFAULT_SCHEMES,
				     SDR_MODEL_OBJ_MEAN, r, &best) == 0);
		CHECK(sdr_model_default_schemes[1].k == 32 && sdr_model_default_schemes[3].k == 8);
		CHECK_EQ(r[1].parity_chunks, 1);
		CHECK_EQ(r[2].parity_chunks, 1);
		CHECK_EQ(r[3].parity_chunks, 1);
		CHECK_EQ(r[4].parity_chunks, 4);
		CHECK_EQ(r[1].submsgs, 1);
		/* the three RS codes are one code here, RS(4,1): same time */
		CHECK(r[1].mean == r[3].mean && r[1].p_fallback == r[3].p_fallback);
		/* a whole submessage and a short one after it: 40 chunks of
		 * RS(32,8) send 8 + ceil(8 * 8 / 32) = 10 */
		prm.msg_bytes = 40 * 4096;
		CHECK(sdr_model_pick(&prm, sdr_model_default_schemes, SDR_MODEL_N_DEFAULT_SCHEMES,
				     SDR_MODEL_OBJ_MEAN, r, &best) == 0);
		CHECK_EQ(r[1].parity_chunks, 10);
		CHECK_EQ(r[1].submsgs, 2);
		CHECK_EQ(r[4].parity_chunks, 16); /* XOR(32,8): 8 + min(8, 8) */
		/* ... and at 1 % chunk loss AUTO's pick for 4 chunks repairs at
		 * the cost of one parity chunk (any RS: they tie, the first wins) */
		base_cfg(&c);
		c.prior_loss = 0.01;
		c.prior_chunks = 1e9;
		sdr_auto_init(&a, &c);
		sdr_auto_rtt(&a, 0.025);
		sdr_auto_pick(&a, 4 * 4096, &s);
		CHECK(s.rel == SDR_REL_EC && s.code == SDR_EC_RS);
	}

	/* 6. the shape the SDR-RDMA paper reports (EC below the BDP, SR well
	 * above it), here at 1 % chunk loss, 25 ms, 1 Gbit/s, 4 KiB chunks: EC
	 * for 256 KiB, SR for 32 MiB (parity costs 25 % of injection) */
	base_cfg(&c);
	c.prior_loss = 0.01;
	c.prior_chunks = 1e9;
	sdr_auto_init(&a, &c);
	sdr_auto_rtt(&a, 0.025);
	sdr_auto_pick(&a, 256 << 10, &s);
	CHECK(s.rel != SDR_REL_SR);
	sdr_auto_pick(&a, 32 << 20, &s);
	CHECK(s.rel == SDR_REL_SR);

	/* 7. cache: same class and estimates -> no new evaluation; an RTT move
	 * of more than 10 % -> one */
	{
		uint64_t e0 = a.evals;
		for (int i = 0; i < 100; i++)
			sdr_auto_pick(&a, (256 << 10) + 4096 * (i % 3), &s);
		CHECK(a.evals == e0);
		CHECK(a.picks[0] + a.picks[1] + a.picks[2] + a.picks[3] + a.picks[4] == 102);
		/* sizes per candidate: 256 KiB .. 256 KiB + 8 KiB went to the EC
		 * pick, 32 MiB to SR (index 0) */
		int ec = -1;
		for (int i = 1; i < 5; i++)
			if (a.picks[i])
				ec = i;
		CHECK(ec > 0 && a.pick_min[ec] == 256 << 10 &&
		      a.pick_max[ec] == (256 << 10) + 8192);
		CHECK(a.picks[0] == 1 && a.pick_min[0] == 32 << 20 && a.pick_max[0] == 32 << 20);
		for (int i = 0; i < 20; i++)
			sdr_auto_rtt(&a, 0.050);
		sdr_auto_pick(&a, 256 << 10, &s);
		CHECK(a.evals == e0 + 1);
	}

	/* 8. set_rate drops the cached decisions; bad rates are ignored */
	{
		uint64_t e0 = a.evals;
		sdr_auto_pick(&a, 256 << 10, &s);
		CHECK(a.evals == e0);
		sdr_auto_set_rate(&a, 0);
		sdr_auto_set_rate(&a, -5);
		sdr_auto_set_rate(&a, INFINITY);
		CHECK(a.cfg.rate_bps == 1e9);
		sdr_auto_pick(&a, 256 << 10, &s);
		CHECK(a.evals == e0);
		sdr_auto_set_rate(&a, 1e9); /* same rate: the cache stays */
		sdr_auto_pick(&a, 256 << 10, &s);
		CHECK(a.evals == e0);
		sdr_auto_set_rate(&a, 1e8);
		CHECK(a.cfg.rate_bps == 1e8);
		sdr_auto_pick(&a, 256 << 10, &s);
		CHECK(a.evals == e0 + 1);
	}

	/* 9. candidate lists (the daemon's --auto-schemes) */
	{
		struct sdr_scheme l[SDR_AUTO_MAX_CANDS];
		uint32_t n = 99;
		CHECK(sdr_auto_schemes_parse("sr,rs:32:8,rs:16:4,rs:8:2,xor:32:8", l, &n) == 0);
		CHECK(n == 5);
		for (uint32_t i = 0; i < 5 && n == 5; i++)
			CHECK(l[i].code == sdr_model_default_schemes[i].code &&
			      (l[i].rel == SDR_REL_SR ||
			       (l[i].k == sdr_model_default_schemes[i].k &&
				l[i].m == sdr_model_default_schemes[i].m)));
		CHECK(sdr_auto_schemes_parse("xor:4:4", l, &n) == 0 && n == 1 &&
		      l[0].code == SDR_EC_XOR && l[0].k == 4 && l[0].m == 4);
		CHECK(sdr_auto_schemes_parse("rs:64:32", l, &n) == 0 && n == 1 &&
		      l[0].code == SDR_EC_RS && l[0].k == 64 && l[0].m == 32);
		n = 77;
		CHECK(sdr_auto_schemes_parse("", l, &n) == -EINVAL && n == 77);
		CHECK(sdr_auto_schemes_parse("sr,", l, &n) == -EINVAL);
		CHECK(sdr_auto_schemes_parse(",sr", l, &n) == -EINVAL);
		CHECK(sdr_auto_schemes_parse("sr,,rs:8:2", l, &n) == -EINVAL);
		CHECK(sdr_auto_schemes_parse("SR", l, &n) == -EINVAL);
		CHECK(sdr_auto_schemes_parse("rs:65:8", l, &n) == -EINVAL); /* k > 64 */
		CHECK(sdr_auto_schemes_parse("rs:8:33", l, &n) == -EINVAL); /* m > 32 */
		CHECK(sdr_auto_schemes_parse("xor:4:8", l, &n) == -EINVAL); /* XOR m > k */
		CHECK(sdr_auto_schemes_parse("rs:0:1", l, &n) == -EINVAL);
		CHECK(sdr_auto_schemes_parse("sr,rs:8:2,sr", l, &n) == -EINVAL); /* twice */
		CHECK(sdr_auto_schemes_parse("rs:8:2x", l, &n) == -EINVAL);
		CHECK(sdr_auto_schemes_parse("sr,rs:1:1,rs:2:1,rs:3:1,rs:4:1,rs:5:1,rs:6:1,rs:7:1",
					     l, &n) == 0 &&
		      n == SDR_AUTO_MAX_CANDS);
		CHECK(sdr_auto_schemes_parse("sr,rs:1:1,rs:2:1,rs:3:1,rs:4:1,rs:5:1,rs:6:1,rs:7:1,"
					     "rs:8:1",
					     l, &n) == -E2BIG);
		CHECK(sdr_auto_schemes_parse(NULL, l, &n) == -EINVAL);
		CHECK(sdr_auto_schemes_parse("sr", NULL, &n) == -EINVAL);
		/* a parsed list is a valid configuration */
		CHECK(sdr_auto_schemes_parse("sr,xor:16:4,rs:4:4", l, &n) == 0 && n == 3);
		base_cfg(&c);
		c.ncands = n;
		for (uint32_t i = 0; i < n; i++)
			c.cands[i] = l[i];
		CHECK(sdr_auto_init(&a, &c) == 0 && a.cfg.ncands == 3);
	}

	if (t_failures) {
		fprintf(stderr, "test_auto: %d failure(s)\n", t_failures);
		return 1;
	}
	printf("test_auto: ok\n");
	return 0;
}
