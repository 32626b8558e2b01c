/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * firmware/sr/sdr_spray.c, the multipath spraying policy (docs/multipath.md),
 * on a simulated QP: units picked every 100 us over 4 paths of RTT 10, 12, 16
 * and 25 ms (time in microseconds as cycles), acknowledged one RTT later
 * unless their path is dead or loses them:
 *  - equal weights: smooth WRR gives each path a quarter of the units;
 *  - a path that dies is suspended within a few RTTs (no unit picked on it
 *    but probes), the others keep going; when it comes back its probe
 *    revives it and it takes units again;
 *  - a path losing 5 % of its units gets a lower weight and fewer units;
 *    one losing 56 % is suspended and carries under 0.3 % of them;
 *  - half of the paths stay active whatever happens (a QP-wide stall is the
 *    SR engine's business); RTT samples shift to the slowest / fastest base;
 *  - a path's stall counts from the send of its unit that waits, not from
 *    the one before it (a path of low weight sends its units far apart).
 */
#include <stdio.h>
#include <string.h>

#include "sdr_spray.h"
#include "sdr_test.h"

#define NP 4
#define STEP 100 /* us between units */
static const uint64_t rtt_us[NP] = {10000, 12000, 16000, 25000};

struct ev {
	uint64_t at, tx;
	unsigned p;
};
static struct ev evq[1 << 16];
static unsigned nev;
static uint32_t gone_seen; /* paths sdr_spray_poll() found stalled */

/* run [t0, t1): one unit per STEP; @p dead: mask of dead paths, @p loss_pm:
 * per-mille unit loss per path. Counts units per path into @p got. */
static uint64_t run(struct sdr_spray *s, uint64_t t0, uint64_t t1, unsigned dead,
		    const unsigned *loss_pm, unsigned *got)
{
	for (uint64_t t = t0; t < t1; t += STEP) {
		/* ACKs due */
		for (unsigned i = 0; i < nev;) {
			if (evq[i].at <= t) {
				sdr_spray_acked(s, evq[i].p, evq[i].tx, evq[i].at - evq[i].tx, t);
				evq[i] = evq[--nev];
			} else {
				i++;
			}
		}
		gone_seen |= sdr_spray_poll(s, t, 30000);
		unsigned p = sdr_spray_pick(s, t);
		sdr_spray_sent(s, p, t);
		got[p]++;
		if (dead >> p & 1)
			continue;
		if (loss_pm && (unsigned)t_below(1000) < loss_pm[p]) {
			sdr_spray_lost(s, p); /* (found by the SR engine later; at once here) */
			continue;
		}
		if (nev < sizeof(evq) / sizeof(evq[0]))
			evq[nev++] = (struct ev){t + rtt_us[p], t, p};
	}
	return t1;
}

int main(void)
{
	struct sdr_spray s;
	uint16_t ports[NP] = {49152, 49153, 49154, 49155};
	unsigned got[NP] = {0};
	uint64_t t;

	t_seed("test_spray", 7);
	/* equal weights, no trouble: a quarter each */
	sdr_spray_init(&s, NP, ports, 2000, 20000, 0);
	for (unsigned i = 0; i < 4000; i++)
		got[sdr_spray_pick(&s, 0)]++;
	for (unsigned p = 0; p < NP; p++)
		CHECK(got[p] == 1000, "path %u: %u of 4000 picks", p, got[p]);

	/* a path dies at 2 s */
	memset(got, 0, sizeof(got));
	nev = 0;
	sdr_spray_init(&s, NP, ports, 2000, 20000, 0);
	t = run(&s, 0, 2000000, 0, NULL, got);
	for (unsigned p = 0; p < NP; p++)
		CHECK(s.p[p].state == SDR_SPRAY_ACTIVE && got[p] > 4000, "path %u: %u units", p,
		      got[p]);
	memset(got, 0, sizeof(got));
	uint64_t died = t;
	gone_seen = 0;
	t = run(&s, t, t + 200000, 1u << 2, NULL, got); /* 200 ms: 8 RTTs of the slowest */
	CHECK(s.p[2].state == SDR_SPRAY_SUSPENDED && s.p[2].suspends == 1 && gone_seen == 1u << 2,
	      "dead path 2 not suspended as stalled within 200 ms (state %u, stalled mask %#x)",
	      s.p[2].state, gone_seen);
	printf("dead path: suspended after %llu units on it in 200 ms\n",
	       (unsigned long long)got[2]);
	memset(got, 0, sizeof(got));
	t = run(&s, t, t + 1000000, 1u << 2, NULL, got);
	CHECK(got[2] <= 10 && s.p[2].probes_sent >= 1, "dead path: %u units (probes %llu) in 1 s",
	      got[2], (unsigned long long)s.p[2].probes_sent);
	for (unsigned p = 0; p < NP; p++)
		CHECK(p == 2 || (s.p[p].state == SDR_SPRAY_ACTIVE && got[p] > 2500),
		      "path %u: %u units while path 2 is dead", p, got[p]);
	printf("dead path: %u probe units in the next second; others %u %u %u (died at %.1f s)\n",
	       got[2], got[0], got[1], got[3], died / 1e6);
	/* it comes back: a probe revives it */
	memset(got, 0, sizeof(got));
	t = run(&s, t, t + 3000000, 0, NULL, got);
	CHECK(s.p[2].state == SDR_SPRAY_ACTIVE && got[2] > 1000, "path 2 back: %u units, state %u",
	      got[2], s.p[2].state);
	printf("path back: %u units in 3 s (others %u %u %u)\n", got[2], got[0], got[1], got[3]);

	/* a path losing 5 % of its units is used less */
	{
		const unsigned loss[NP] = {0, 50, 0, 0};

		memset(got, 0, sizeof(got));
		nev = 0;
		sdr_spray_init(&s, NP, ports, 2000, 20000, 0);
		run(&s, 0, 5000000, 0, loss, got);
		for (unsigned p = 0; p < NP; p++)
			CHECK(p == 1 || got[1] < got[p] * 3 / 4,
			      "lossy path 1: %u units, path %u: %u", got[1], p, got[p]);
		CHECK(s.p[1].state == SDR_SPRAY_ACTIVE, "a 5 %% loss path is not dead");
		printf("5 %% loss on path 1: units %u %u %u %u, weights %u %u %u %u\n", got[0],
		       got[1], got[2], got[3], s.p[0].weight, s.p[1].weight, s.p[2].weight,
		       s.p[3].weight);
	}

	/* a path losing 56 % of its units (5 % of the frames of 16-frame
	 * units): suspended, and its probes that come back do not bring it
	 * back for long: it carries under 0.3 % of the units */
	{
		const unsigned loss[NP] = {0, 560, 0, 0};
		unsigned all;

		memset(got, 0, sizeof(got));
		nev = 0;
		sdr_spray_init(&s, NP, ports, 2000, 20000, 0);
		run(&s, 0, 10000000, 0, loss, got);
		all = got[0] + got[1] + got[2] + got[3];
		CHECK(s.p[1].suspends >= 1 && got[1] * 1000 < all * 3,
		      "56 %% loss on path 1: %u of %u units (suspends %llu)", got[1], all,
		      (unsigned long long)s.p[1].suspends);
		for (unsigned p = 0; p < NP; p++)
			CHECK(p == 1 || (s.p[p].state == SDR_SPRAY_ACTIVE && got[p] > all / 4),
			      "path %u: %u of %u units beside the lossy path", p, got[p], all);
		printf("56 %% loss on path 1: units %u %u %u %u, suspends %llu, probes %llu\n",
		       got[0], got[1], got[2], got[3], (unsigned long long)s.p[1].suspends,
		       (unsigned long long)s.p[1].probes_sent);
	}

	/* three paths die: half of them stay active */
	memset(got, 0, sizeof(got));
	nev = 0;
	sdr_spray_init(&s, NP, ports, 2000, 20000, 0);
	t = run(&s, 0, 1000000, 0, NULL, got);
	t = run(&s, t, t + 2000000, 0x7, NULL, got);
	CHECK(sdr_spray_active(&s) == NP / 2, "%u paths active, want %u", sdr_spray_active(&s),
	      NP / 2);
	t = run(&s, t, t + 4000000, 0, NULL, got);
	CHECK(sdr_spray_active(&s) == NP, "%u paths active after they all came back",
	      sdr_spray_active(&s));

	/* RTT shift: path 3's sample moved to path 0's base (fastest), path 0's to path 3's */
	CHECK(sdr_spray_rtt_shift(&s, 3, 26000, 0) == 26000 - (s.p[3].min_rtt - s.p[0].min_rtt) ||
		      s.p[0].state != SDR_SPRAY_ACTIVE,
	      "fastest shift");
	CHECK(sdr_spray_rtt_shift(&s, 0, 10000, 1) >= 10000, "slowest shift");

	/* a sparse path: units A (T) and B (T + 25 ms) on path 0 of RTT 30 ms;
	 * A answered, B waits; path 1 answers a unit sent later. The stall
	 * time is max(3 SRTT, RTO) + floor = 92 ms after B's send, not A's */
	{
		const uint64_t T = 100000;

		sdr_spray_init(&s, 2, ports, 2000, 30000, 0);
		sdr_spray_sent(&s, 0, 0);
		sdr_spray_acked(&s, 0, 0, 30000, 30000);
		sdr_spray_sent(&s, 0, T);
		sdr_spray_sent(&s, 0, T + 25000);
		sdr_spray_acked(&s, 0, T, 30000, T + 30000);
		sdr_spray_sent(&s, 1, T + 40000);
		sdr_spray_acked(&s, 1, T + 40000, 10000, T + 50000);
		CHECK(sdr_spray_poll(&s, T + 110000, 30000) == 0 &&
			      s.p[0].state == SDR_SPRAY_ACTIVE,
		      "sparse path suspended 85 ms after its waiting unit's send");
		CHECK(sdr_spray_poll(&s, T + 120000, 30000) == 1 &&
			      s.p[0].state == SDR_SPRAY_SUSPENDED,
		      "sparse path not suspended 95 ms after its waiting unit's send");
	}
	return t_finish("test_spray");
}
