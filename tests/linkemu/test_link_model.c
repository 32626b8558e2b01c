/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Link emulator core against the statistics it promises, on a simulated clock
 * (exact arithmetic, no wall clock). Rates are checked with 99.9 % Wilson
 * intervals on a fixed seed; burst statistics with their own variance.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "link_test.h"
#include "sdr_link.h"

static void check_conservation(const struct sdr_link *l, const char *what)
{
	const struct sdr_link_stats *s = &l->stats;

	CHECK(s->pkts_in == s->delivered + s->dropped_buffer + s->dropped_loss + s->dropped_ge,
	      "%s: in %" PRIu64 " != delivered %" PRIu64 " + drops", what, s->pkts_in,
	      s->delivered);
}

static void test_prng(void)
{
	/* xoshiro256** from state {1,2,3,4}, worked by hand: the first output is
	 * rotl(2*5,7)*9 = 11520; the step leaves s1 = 2 ^ (3 ^ 1) = 0, so the
	 * second is rotl(0,7)*9 = 0 */
	struct sdr_link_rng r = {{1, 2, 3, 4}};
	uint64_t a = sdr_link_rng_next(&r), b = sdr_link_rng_next(&r);
	struct sdr_link_rng x, y;
	double sum = 0;
	int same = 0;

	CHECK(a == 11520, "first output %" PRIu64, a);
	CHECK(b == 0, "second output %" PRIu64, b);

	sdr_link_rng_seed(&x, 7, 0);
	sdr_link_rng_seed(&y, 7, 1);
	for (int i = 0; i < 1000; i++)
		same += sdr_link_rng_next(&x) == sdr_link_rng_next(&y);
	CHECK(same == 0, "streams of one seed coincide %d times", same);

	/* unit(): in [0,1), mean 1/2 (sd of the mean 0.289/sqrt(n)) */
	sdr_link_rng_seed(&x, 99, 0);
	for (int i = 0; i < 100000; i++) {
		double u = sdr_link_rng_unit(&x);
		CHECK(u >= 0 && u < 1, "unit %g", u);
		sum += u;
	}
	CHECK(fabs(sum / 100000 - 0.5) < 3.3 * 0.2887 / sqrt(100000), "mean %g", sum / 100000);
}

static void test_bernoulli_loss(void)
{
	static const double ps[] = {1e-3, 1e-2, 0.3};
	const unsigned n = 400000;

	for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++) {
		struct sdr_link l;
		struct sdr_link_verdict v;
		char spec[64];

		snprintf(spec, sizeof(spec), "loss=%g,seed=42", ps[i]);
		lt_mk(&l, spec);
		for (unsigned k = 0; k < n; k++)
			sdr_link_decide(&l, k * 1000ull, 1000, &v);
		CHECK_RATE(spec, l.stats.dropped_loss, n, ps[i]);
		check_conservation(&l, spec);
	}
	{
		struct sdr_link l;
		struct sdr_link_verdict v;
		unsigned lost = 0;

		lt_mk(&l, "loss=1");
		for (unsigned k = 0; k < 1000; k++)
			lost += sdr_link_decide(&l, k, 100, &v) == SDR_LINK_DROP_LOSS;
		CHECK(lost == 1000, "loss=1 lost %u", lost);
		lt_mk(&l, "loss=0,dup=0.5");
		for (unsigned k = 0; k < 1000; k++)
			sdr_link_decide(&l, k, 100, &v);
		CHECK(l.stats.dropped_loss == 0 && l.stats.delivered == 1000, "loss=0");
	}
}

/* Gilbert-Elliott with loss_good = 0, loss_bad = 1: losses come in bursts whose
 * length is geometric with mean 1/p_bg; the stationary loss rate is
 * p_gb / (p_gb + p_bg). */
static void test_gilbert_elliott(void)
{
	const double p_gb = 0.01, p_bg = 0.25;
	const unsigned n = 1000000;
	struct sdr_link l;
	struct sdr_link_verdict v;
	unsigned long long bursts = 0, burst_frames = 0, run = 0;

	lt_mk(&l, "ge=0.01:0.25,seed=3");
	for (unsigned k = 0; k < n; k++) {
		if (sdr_link_decide(&l, k * 100ull, 500, &v) == SDR_LINK_DROP_GE) {
			run++;
		} else if (run > 0) {
			bursts++;
			burst_frames += run;
			run = 0;
		}
	}
	CHECK(l.stats.dropped_ge == l.stats.ge_bad_frames,
	      "loss_bad=1, loss_good=0: losses = bad frames");
	{
		/* mean burst length: sd of a geometric with mean m is sqrt(m(m-1)) */
		double m = (double)burst_frames / (double)bursts, want = 1 / p_bg;
		double sd = sqrt(want * (want - 1)) / sqrt((double)bursts);

		CHECK(fabs(m - want) < LT_Z999 * sd,
		      "mean burst %.4f, want %.4f +- %.4f (%llu bursts)", m, want, LT_Z999 * sd,
		      bursts);
	}
	{
		/* stationary loss rate, with the Markov-chain variance of a time
		 * average: pi_b pi_g (1 + lambda) / (1 - lambda) / n, lambda =
		 * 1 - p_gb - p_bg */
		double pib = p_gb / (p_gb + p_bg), lam = 1 - p_gb - p_bg;
		double sd = sqrt(pib * (1 - pib) * (1 + lam) / (1 - lam) / n);
		double rate = (double)l.stats.dropped_ge / n;

		CHECK(fabs(rate - pib) < LT_Z999 * sd, "GE loss %.5f, want %.5f +- %.5f", rate, pib,
		      LT_Z999 * sd);
	}
	check_conservation(&l, "ge");

	/* per-state loss: given how many frames saw the bad state, losses are
	 * binomial in each state */
	{
		const double lg = 0.001, lb = 0.6;
		unsigned long long bad;
		double mean, sd;

		lt_mk(&l, "ge=0.02:0.1:0.001:0.6,seed=11");
		for (unsigned k = 0; k < n; k++)
			sdr_link_decide(&l, k * 100ull, 500, &v);
		bad = l.stats.ge_bad_frames;
		mean = lb * bad + lg * (n - bad);
		sd = sqrt(lb * (1 - lb) * bad + lg * (1 - lg) * (n - bad));
		CHECK(fabs((double)l.stats.dropped_ge - mean) < LT_Z999 * sd,
		      "GE lossy states: %" PRIu64 " lost, want %.0f +- %.0f", l.stats.dropped_ge,
		      mean, LT_Z999 * sd);
		{
			double pib = 0.02 / 0.12, lam = 1 - 0.12;
			double sdb = sqrt(pib * (1 - pib) * (1 + lam) / (1 - lam) / n);

			CHECK(fabs((double)bad / n - pib) < LT_Z999 * sdb,
			      "bad-state share %.4f want %.4f", (double)bad / n, pib);
		}
	}
}

static void test_delay_exact(void)
{
	struct sdr_link l;
	struct sdr_link_verdict v;
	int bad = 0;

	lt_mk(&l, "delay=12.5ms");
	for (uint64_t k = 0; k < 10000; k++) {
		uint64_t t = 1000000000ull + k * 777;
		sdr_link_decide(&l, t, 1500, &v);
		bad += v.action != SDR_LINK_DELIVER || v.depart_ns != t + 12500000ull;
	}
	CHECK(bad == 0, "%d frames not delivered at arrival + 12.5 ms", bad);
	CHECK(l.stats.delayed == 10000, "delayed %" PRIu64, l.stats.delayed);

	/* idle bottleneck: arrival + serialisation + delay */
	lt_mk(&l, "delay=1ms,rate=1gbit");
	sdr_link_decide(&l, 5000, 1500, &v);
	CHECK(v.depart_ns == 5000 + 12000 + 1000000, "depart %" PRIu64, v.depart_ns);
	sdr_link_decide(&l, 1000000, 1500, &v); /* long after: idle again */
	CHECK(v.depart_ns == 1000000 + 12000 + 1000000, "depart %" PRIu64, v.depart_ns);

	/* no delay, no rate: departs on arrival and is not counted as delayed */
	lt_mk(&l, "loss=0");
	sdr_link_decide(&l, 123, 60, &v);
	CHECK(v.depart_ns == 123 && l.stats.delayed == 0, "zero delay");
	/* arrivals going back in time are clamped */
	sdr_link_decide(&l, 50, 60, &v);
	CHECK(v.depart_ns == 123, "clamped arrival %" PRIu64, v.depart_ns);
}

static void test_jitter(void)
{
	const uint64_t jit = 200000, delay = 5000000;
	const unsigned n = 100000;
	struct sdr_link l;
	struct sdr_link_verdict v;
	uint64_t prev = 0, min = UINT64_MAX, max = 0;
	double sum = 0;
	int nonmono = 0, out_of_range = 0;

	/* sparse arrivals (spacing > jitter): no clamping, pure uniform jitter */
	lt_mk(&l, "delay=5ms,jitter=0.2ms,seed=5");
	for (unsigned k = 0; k < n; k++) {
		uint64_t t = k * 1000000ull, j;
		sdr_link_decide(&l, t, 1000, &v);
		j = v.depart_ns - t - delay;
		out_of_range += v.depart_ns < t + delay || j > jit;
		min = j < min ? j : min;
		max = j > max ? j : max;
		sum += (double)j;
	}
	CHECK(out_of_range == 0, "%d jitters outside [0, jitter]", out_of_range);
	/* uniform on {0..J}: mean J/2, sd (J+1)/sqrt(12) */
	CHECK(fabs(sum / n - jit / 2.0) < LT_Z999 * (jit + 1) / sqrt(12.0) / sqrt((double)n),
	      "jitter mean %.1f want %.1f", sum / n, jit / 2.0);
	CHECK(min < jit / 100 && max > jit - jit / 100, "jitter spans [%" PRIu64 ", %" PRIu64 "]",
	      min, max);

	/* dense arrivals (spacing << jitter): jitter must not reorder */
	lt_mk(&l, "delay=5ms,jitter=0.2ms,seed=5");
	for (unsigned k = 0; k < n; k++) {
		uint64_t t = k * 1000ull;
		sdr_link_decide(&l, t, 100, &v);
		nonmono += v.depart_ns < prev;
		out_of_range += v.depart_ns < t + delay;
		prev = v.depart_ns;
	}
	CHECK(nonmono == 0, "jitter reordered %d frames", nonmono);
	CHECK(out_of_range == 0, "departed before arrival + delay");
}

static void test_rate(void)
{
	struct sdr_link l;
	struct sdr_link_verdict v;
	int bad = 0;

	/* a burst at t=0 leaves the bottleneck one serialisation time apart:
	 * 1500 B at 1 Gbit/s = 12 us */
	lt_mk(&l, "rate=1gbit,buffer=1GB,delay=1ms");
	for (uint64_t k = 0; k < 1000; k++) {
		sdr_link_decide(&l, 0, 1500, &v);
		bad += v.bottleneck_exit_ns != (k + 1) * 12000 ||
		       v.depart_ns != (k + 1) * 12000 + 1000000;
	}
	CHECK(bad == 0, "%d burst frames off the 12 us grid", bad);

	/* non-integer serialisation: 1000 B at 3 Gbit/s = 2666.67 ns; exits are
	 * ceil(k * 8000 / 3) with no drift after a million frames */
	lt_mk(&l, "rate=3gbit,buffer=1TB");
	bad = 0;
	for (uint64_t k = 1; k <= 1000000; k++) {
		sdr_link_decide(&l, 0, 1000, &v);
		bad += v.bottleneck_exit_ns != (k * 8000 + 2) / 3;
	}
	CHECK(bad == 0, "%d exits off ceil(k*8000/3)", bad);

	/* arrivals slower than the rate never queue; arrivals at exactly the
	 * rate keep at most one frame in the bottleneck */
	lt_mk(&l, "rate=1gbit,buffer=1500B");
	for (uint64_t k = 0; k < 10000; k++)
		sdr_link_decide(&l, k * 12000, 1500, &v);
	CHECK(l.stats.dropped_buffer == 0 && l.stats.max_backlog_bytes == 1500,
	      "at line rate: drops %" PRIu64 " max backlog %" PRIu64, l.stats.dropped_buffer,
	      l.stats.max_backlog_bytes);

	/* mixed sizes in a burst: exit of frame k = sum of sizes * 8 / rate */
	lt_mk(&l, "rate=10gbit,buffer=1GB");
	{
		uint64_t bits = 0;
		bad = 0;
		for (unsigned k = 0; k < 5000; k++) {
			uint32_t len = 64 + (k * 37) % 1437;
			bits += (uint64_t)len * 8;
			sdr_link_decide(&l, 1000, len, &v);
			bad += v.bottleneck_exit_ns != 1000 + (bits + 9) / 10;
		}
		CHECK(bad == 0, "%d mixed-size exits wrong", bad);
	}
}

static void test_buffer(void)
{
	struct sdr_link l;
	struct sdr_link_verdict v;
	unsigned admitted = 0;

	/* 100 frames of 1000 B at once into 10 KB: exactly 10 get in */
	lt_mk(&l, "rate=1gbit,buffer=10KB");
	for (unsigned k = 0; k < 100; k++)
		admitted += sdr_link_decide(&l, 0, 1000, &v) == SDR_LINK_DELIVER;
	CHECK(admitted == 10 && l.stats.dropped_buffer == 90, "admitted %u drops %" PRIu64,
	      admitted, l.stats.dropped_buffer);
	CHECK(l.stats.max_backlog_bytes == 10000, "max backlog %" PRIu64,
	      l.stats.max_backlog_bytes);
	/* after 3 serialisation times (24 us) exactly 3 more fit */
	CHECK(sdr_link_backlog_at(&l, 24000) == 7000, "backlog %" PRIu64,
	      sdr_link_backlog_at(&l, 24000));
	admitted = 0;
	for (unsigned k = 0; k < 100; k++)
		admitted += sdr_link_decide(&l, 24000, 1000, &v) == SDR_LINK_DELIVER;
	CHECK(admitted == 3, "after drain admitted %u", admitted);
	/* one ns before the 4th frame is out, still only those 3 */
	admitted = sdr_link_decide(&l, 24000 + 8000 - 1, 1000, &v) == SDR_LINK_DELIVER;
	CHECK(admitted == 0, "admitted before the slot opened");
	admitted = sdr_link_decide(&l, 24000 + 8000, 1000, &v) == SDR_LINK_DELIVER;
	CHECK(admitted == 1, "not admitted when the slot opened");
	check_conservation(&l, "buffer");

	/* binary units: 10 KiB = 10240 B holds 10 frames of 1000 B and 240 B more */
	lt_mk(&l, "rate=1gbit,buffer=10KiB");
	admitted = 0;
	for (unsigned k = 0; k < 20; k++)
		admitted += sdr_link_decide(&l, 0, 1000, &v) == SDR_LINK_DELIVER;
	admitted += sdr_link_decide(&l, 0, 240, &v) == SDR_LINK_DELIVER;
	admitted += sdr_link_decide(&l, 0, 1, &v) == SDR_LINK_DELIVER;
	CHECK(admitted == 11, "KiB buffer admitted %u", admitted);

	/* a frame larger than the buffer never fits */
	lt_mk(&l, "rate=1gbit,buffer=1000B");
	CHECK(sdr_link_decide(&l, 0, 1001, &v) == SDR_LINK_DROP_BUFFER, "oversize frame admitted");
	CHECK(sdr_link_decide(&l, 0, 1000, &v) == SDR_LINK_DELIVER, "exact-fit frame dropped");
}

static void test_reorder(void)
{
	const unsigned n = 200000;
	struct sdr_link l;
	struct sdr_link_verdict v;
	uint64_t pending_depart = 0;
	unsigned overtaken = 0, checked = 0, bad_extra = 0;
	bool pending = false;

	lt_mk(&l, "delay=1ms,reorder=0.02:100us,seed=9");
	for (unsigned k = 0; k < n; k++) {
		uint64_t t = k * 10000ull; /* 10 us apart */
		sdr_link_decide(&l, t, 1000, &v);
		if (pending && !v.reordered) {
			/* the next in-order frame must leave before the held-back one */
			overtaken += v.depart_ns < pending_depart;
			checked++;
			pending = false;
		}
		if (v.reordered) {
			bad_extra += v.depart_ns != t + 1000000 + 100000;
			pending = true;
			pending_depart = v.depart_ns;
		} else {
			bad_extra += v.depart_ns != t + 1000000;
		}
	}
	CHECK_RATE("reorder", l.stats.reordered, n, 0.02);
	CHECK(checked > 0 && overtaken == checked, "overtaken %u of %u", overtaken, checked);
	CHECK(bad_extra == 0, "%u departures wrong", bad_extra);
}

static void test_dup(void)
{
	const unsigned n = 200000;
	struct sdr_link l;
	struct sdr_link_verdict v;
	unsigned same = 0, dups = 0;

	lt_mk(&l, "dup=0.05,delay=2ms,jitter=10us,seed=13");
	for (unsigned k = 0; k < n; k++) {
		sdr_link_decide(&l, k * 3000ull, 700, &v);
		if (v.duplicate) {
			dups++;
			same += v.dup_depart_ns == v.depart_ns;
		}
	}
	CHECK(dups == l.stats.duplicated, "counter");
	CHECK(same == dups, "copy departs with the original");
	CHECK_RATE("dup", l.stats.duplicated, n, 0.05);
	check_conservation(&l, "dup");
}

static void test_corrupt(void)
{
	const unsigned n = 100000, maxbits = 5;
	struct sdr_link l;
	struct sdr_link_verdict v;
	unsigned hist[SDR_LINK_CORRUPT_MAX_BITS + 1] = {0};
	unsigned bad_off = 0, bad_apply = 0, not_distinct = 0;
	uint8_t frame[300], orig[300];

	lt_mk(&l, "corrupt=0.1:5,seed=21");
	for (unsigned k = 0; k < n; k++) {
		uint32_t len = 43 + k % 258; /* 43..300: down to a 1-byte payload */
		sdr_link_decide(&l, k * 1000ull, len, &v);
		if (v.n_flips == 0)
			continue;
		hist[v.n_flips]++;
		for (unsigned i = 0; i < v.n_flips; i++) {
			bad_off += v.flip_bit[i] < 42 * 8 || v.flip_bit[i] >= len * 8;
			for (unsigned j = 0; j < i; j++)
				not_distinct += v.flip_bit[i] == v.flip_bit[j];
		}
		for (uint32_t b = 0; b < len; b++)
			orig[b] = frame[b] = (uint8_t)(b * 7 + k);
		sdr_link_corrupt_apply(frame, len, &v);
		{
			unsigned diff_bits = 0, head_changed = 0;

			for (uint32_t b = 0; b < len; b++) {
				diff_bits += (unsigned)__builtin_popcount(frame[b] ^ orig[b]);
				head_changed += b < 42 && frame[b] != orig[b];
			}
			bad_apply += diff_bits != v.n_flips || head_changed != 0;
		}
	}
	CHECK(bad_off == 0, "%u flips outside [42, len)", bad_off);
	CHECK(not_distinct == 0, "%u repeated bits", not_distinct);
	CHECK(bad_apply == 0, "%u frames changed wrongly", bad_apply);
	CHECK(hist[0] == 0 && hist[maxbits + 1] == 0, "flip counts out of 1..%u", maxbits);
	/* frames of 43 B have only 8 bits to flip, all others >= 16: each count
	 * in 1..5 is (close to) uniform: check each against 1/5 of the corrupted */
	for (unsigned b = 1; b <= maxbits; b++)
		CHECK_RATE("flip count", hist[b], l.stats.corrupted, 1.0 / maxbits);
	CHECK_RATE("corrupt", l.stats.corrupted, n, 0.1);

	/* frames of 42 bytes or less have no payload to corrupt */
	lt_mk(&l, "corrupt=1");
	sdr_link_decide(&l, 0, 42, &v);
	CHECK(v.n_flips == 0 && l.stats.corrupt_short == 1 && l.stats.corrupted == 0,
	      "short frame");
	sdr_link_decide(&l, 0, 43, &v);
	CHECK(v.n_flips == 1 && v.flip_bit[0] >= 336 && v.flip_bit[0] < 344, "43-byte frame");
}

/* All the random features at once, on a bottleneck, fed a fixed arrival
 * pattern: returns a hash of the verdict sequence. */
static uint64_t run_hash(const char *spec, unsigned n, struct sdr_link_stats *st,
			 uint64_t *loss_hash)
{
	struct sdr_link l;
	struct sdr_link_verdict v;
	uint64_t h = 1469598103934665603ull, lh = h;

	lt_mk(&l, spec);
	for (unsigned k = 0; k < n; k++) {
		uint64_t t = k * 900ull + (k % 7) * 50;
		sdr_link_decide(&l, t, 64 + (k * 131) % 1400, &v);
		uint64_t fields[] = {v.action,  v.reordered, v.duplicate,
				     v.n_flips, v.depart_ns, v.n_flips ? v.flip_bit[0] : 0};
		for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
			h = (h ^ fields[i]) * 1099511628211ull;
		lh = (lh ^ (v.action == SDR_LINK_DROP_LOSS)) * 1099511628211ull;
	}
	if (st)
		*st = l.stats;
	if (loss_hash)
		*loss_hash = lh;
	return h;
}

static void test_reproducible(void)
{
	const char *a = "delay=3ms,jitter=50us,rate=5gbit,buffer=20KB,loss=0.01,ge=0.001:0.3,"
			"reorder=0.01:200us,dup=0.01,corrupt=0.01:4,seed=77";
	const char *b = "delay=3ms,jitter=50us,rate=5gbit,buffer=20KB,loss=0.01,ge=0.001:0.3,"
			"reorder=0.01:200us,dup=0.01,corrupt=0.01:4,seed=78";
	struct sdr_link_stats s1, s2;
	uint64_t l1, l2, l3;

	CHECK(run_hash(a, 100000, &s1, &l1) == run_hash(a, 100000, &s2, &l2), "same seed differs");
	CHECK(memcmp(&s1, &s2, sizeof(s1)) == 0, "same seed: counters differ");
	CHECK(run_hash(a, 100000, NULL, NULL) != run_hash(b, 100000, NULL, NULL),
	      "seeds 77/78 agree");
	/* all kinds of decision really happened in this run */
	CHECK(s1.dropped_buffer > 0 && s1.dropped_loss > 0 && s1.dropped_ge > 0 &&
		      s1.reordered > 0 && s1.duplicated > 0 && s1.corrupted > 0,
	      "run lacks some decision kinds");
	{
		struct sdr_link l;
		lt_mk(&l, a);
		check_conservation(&l, "fresh");
	}
	/* switching other features off leaves the Bernoulli loss decisions alone
	 * (own stream) as long as the frames reaching the loss stage are the same */
	run_hash("loss=0.01,seed=77", 100000, NULL, &l1);
	run_hash("loss=0.01,dup=0.3,corrupt=0.2:3,reorder=0.1,jitter=1ms,seed=77", 100000, NULL,
		 &l3);
	CHECK(l1 == l3, "other features changed loss decisions");
}

static void test_stats_names(void)
{
	unsigned n = sdr_link_stats_count();
	struct sdr_link_stats s;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	CHECK(n == sizeof(s) / sizeof(uint64_t), "count %u", n);
	for (unsigned i = 0; i < n; i++) {
		CHECK(sdr_link_stats_name(i) && sdr_link_stats_help(i), "name %u", i);
		for (unsigned j = 0; j < i; j++)
			CHECK(strcmp(sdr_link_stats_name(i), sdr_link_stats_name(j)) != 0,
			      "dup name");
	}
	CHECK(sdr_link_stats_name(n) == NULL && sdr_link_stats_value(&s, n) == 0, "out of range");
	for (unsigned i = 0; i < n; i++)
		((uint64_t *)&s)[i] = 1000 + i;
	CHECK(sdr_link_stats_value(&s, 0) == s.pkts_in && s.pkts_in == 1000, "value 0");
	for (unsigned i = 0; i < n; i++)
		if (strcmp(sdr_link_stats_name(i), "dropped_buffer") == 0)
			CHECK(sdr_link_stats_value(&s, i) == s.dropped_buffer, "by name");
	f = open_memstream(&buf, &len);
	sdr_link_stats_print(f, "port 0 queue 0", &s);
	fclose(f);
	CHECK(strstr(buf, "link emulator port 0 queue 0") && strstr(buf, "buffer: 1005") &&
		      strstr(buf, "reordered: 1009"),
	      "print:\n%s", buf);
	free(buf);
}

int main(void)
{
	test_prng();
	test_bernoulli_loss();
	test_gilbert_elliott();
	test_delay_exact();
	test_jitter();
	test_rate();
	test_buffer();
	test_reorder();
	test_dup();
	test_corrupt();
	test_reproducible();
	test_stats_names();
	return lt_finish("test_link_model");
}
