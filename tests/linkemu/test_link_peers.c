/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-peer profiles of the link emulator (sdr_link_peers.h) on a simulated
 * clock: parsing and its errors, the canonical text, the lane of a frame by
 * its source address (untagged, 802.1Q, not IPv4), the default lane with and
 * without --link, a shared bottleneck (two sources of one profile queue in
 * one FIFO at one rate) next to a profile of its own, mempool sizing and
 * capping of a plan, and the sum of counters.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "link_eq.h"
#include "link_test.h"
#include "sdr_link_peers.h"

#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))

/* An Ethernet + IPv4 header from @p src (the rest of the frame is zero). */
static void mk_frame(uint8_t *f, size_t len, uint32_t src, int vlan)
{
	size_t l3 = vlan ? 18 : 14;

	memset(f, 0, len);
	if (vlan) {
		f[12] = 0x81;
		f[13] = 0x00;
		f[16] = 0x08;
	} else {
		f[12] = 0x08;
	}
	f[l3] = 0x45;
	f[l3 + 12] = (uint8_t)(src >> 24);
	f[l3 + 13] = (uint8_t)(src >> 16);
	f[l3 + 14] = (uint8_t)(src >> 8);
	f[l3 + 15] = (uint8_t)src;
}

static void add_ok(struct sdr_link_plan *p, const char *spec)
{
	char err[512];
	int rc = sdr_link_plan_add(p, spec, err, sizeof(err));

	REQUIRE(rc == 0, "'%s' refused: %s", spec, err);
}

static void add_bad(struct sdr_link_plan *p, const char *spec, int want, const char *needle)
{
	char err[512];
	struct sdr_link_plan before = *p;
	int rc = sdr_link_plan_add(p, spec, err, sizeof(err));

	CHECK(rc == want, "'%s': rc %d, want %d (%s)", spec, rc, want, err);
	CHECK(strstr(err, needle) != NULL, "'%s': message '%s' lacks '%s'", spec, err, needle);
	CHECK(link_plan_eq(&before, p), "'%s': a refused profile changed the plan", spec);
}

static void test_parse(void)
{
	struct sdr_link_plan p;
	struct sdr_link_cfg d;
	char buf[1024], err[256];

	REQUIRE(sdr_link_parse("delay=1ms", &d, err, sizeof(err)) == 0);
	sdr_link_plan_init(&p, &d);
	CHECK_EQ(p.nlanes, 1u);
	CHECK(strcmp(p.lane[0].name, "default") == 0);
	CHECK(p.lane[0].emulated && p.lane[0].cfg.delay_ns == 1000000);
	CHECK(sdr_link_plan_active(&p));

	add_ok(&p, "l12:10.100.1.2:delay=2.5ms,rate=1gbit,buffer=2MB");
	add_ok(&p, " 10.100.0.2 + 10.100.2.2 :delay=12.5ms,rate=2gbit,buffer=4MB,ge=0.01:0.5");
	add_ok(&p, "clean:10.100.3.2:"); /* empty SPEC: a perfect link */
	CHECK_EQ(p.nlanes, 4u);
	CHECK(strcmp(p.lane[0].name, "l12") == 0);
	CHECK(strcmp(p.lane[1].name, "peer1") == 0, "default name '%s'", p.lane[1].name);
	CHECK(strcmp(p.lane[2].name, "clean") == 0);
	CHECK(strcmp(p.lane[3].name, "default") == 0, "the default lane stays last");
	CHECK(p.lane[0].cfg.delay_ns == 2500000 && p.lane[0].cfg.rate_bps == 1000000000ull &&
	      p.lane[0].cfg.buffer_bytes == 2000000);
	CHECK(p.lane[1].naddr == 2 && p.lane[1].addr[0] == IP(10, 100, 0, 2) &&
	      p.lane[1].addr[1] == IP(10, 100, 2, 2));
	CHECK(p.lane[1].cfg.ge && p.lane[1].cfg.ge_p_gb == 0.01);
	CHECK(p.lane[2].cfg.delay_ns == 0 && p.lane[2].cfg.rate_bps == 0 && p.lane[2].emulated);
	CHECK_EQ(p.naddr, 4u);

	/* canonical text, and adding it back gives the same profile */
	sdr_link_plan_format(&p, 1, buf, sizeof(buf));
	CHECK(strcmp(buf, "peer1:10.100.0.2+10.100.2.2:delay=12.5ms,rate=2gbit,buffer=4MB,"
			  "ge=0.01:0.5:0:1") == 0,
	      "format '%s'", buf);
	{
		struct sdr_link_plan q;

		sdr_link_plan_init(&q, NULL);
		add_ok(&q, buf);
		char again[1024];

		sdr_link_plan_format(&q, 0, again, sizeof(again));
		CHECK(strcmp(again, buf) == 0 && q.lane[0].cfg.ge_p_bg == p.lane[1].cfg.ge_p_bg &&
			      q.lane[0].cfg.delay_ns == p.lane[1].cfg.delay_ns &&
			      strcmp(q.lane[0].name, "peer1") == 0 && q.lane[0].naddr == 2,
		      "round trip of '%s': '%s'", buf, again);
	}
	sdr_link_plan_format(&p, 2, buf, sizeof(buf));
	CHECK(strcmp(buf, "clean:10.100.3.2:") == 0, "format '%s'", buf);
	sdr_link_plan_format(&p, 3, buf, sizeof(buf));
	CHECK(strcmp(buf, "default:delay=1ms") == 0, "format '%s'", buf);
	CHECK(sdr_link_plan_format(&p, 0, buf, 4) > 4, "truncation reports the full length");

	/* errors name what is wrong; the plan is left alone */
	add_bad(&p, "x:10.100.1.2:delay=1ms", -EINVAL, "already in profile 'l12'");
	add_bad(&p, "l12:10.9.9.9:delay=1ms", -EINVAL, "named 'l12' exists");
	add_bad(&p, "default:10.9.9.9:", -EINVAL, "default lane");
	add_bad(&p, "y:10.9.9.9+10.9.9.9:", -EINVAL, "given twice");
	add_bad(&p, "y:10.9.9:", -EINVAL, "not an IPv4 address");
	add_bad(&p, "y:10.9.9.9", -EINVAL, "no ':'");
	add_bad(&p, "10.9.9.9", -EINVAL, "no ':'");
	add_bad(&p, "1bad:10.9.9.9:", -EINVAL, "not an IPv4 address");
	add_bad(&p, "b@d:10.9.9.9:", -EINVAL, "NAME is a letter");
	add_bad(&p, "averyveryverylongprofilename:10.9.9.9:", -EINVAL, "at most 23");
	add_bad(&p, "y:10.9.9.9:delay=5xs", -EINVAL, "unknown unit 'xs'");
	add_bad(&p, "y:10.9.9.9:latency=5ms", -EINVAL, "unknown key 'latency'");
	add_bad(&p, "y:+10.9.9.9:", -EINVAL, "not an IPv4 address");

	/* capacity: 16 profiles, then -ENOSPC */
	sdr_link_plan_init(&p, NULL);
	CHECK(!sdr_link_plan_active(&p), "a perfect default lane alone is not worth attaching");
	CHECK(p.lane[0].cfg.limit == SDR_LINK_PERFECT_LIMIT && !p.lane[0].emulated);
	for (unsigned i = 0; i < SDR_LINK_PROFILES_MAX; i++) {
		snprintf(buf, sizeof(buf), "10.1.%u.1:delay=%ums", i, i + 1);
		add_ok(&p, buf);
	}
	CHECK(sdr_link_plan_active(&p));
	add_bad(&p, "10.2.0.1:", -ENOSPC, "more than 16 profiles");
	/* and 64 addresses over all profiles */
	sdr_link_plan_init(&p, NULL);
	{
		char big[2048];
		size_t off = 0;

		for (unsigned i = 0; i < SDR_LINK_PEER_ADDRS_MAX; i++)
			off += (size_t)snprintf(big + off, sizeof(big) - off, "%s10.3.0.%u",
						i ? "+" : "", i + 1);
		snprintf(big + off, sizeof(big) - off, ":");
		add_ok(&p, big);
		CHECK_EQ(p.naddr, SDR_LINK_PEER_ADDRS_MAX);
		add_bad(&p, "10.4.0.1:", -ENOSPC, "more than 64 addresses");
	}
}

static void test_lane_of_frame(void)
{
	struct sdr_link_plan p;
	static struct sdr_link_set s;
	uint8_t f[64];
	uint32_t ip = 0;

	sdr_link_plan_init(&p, NULL);
	add_ok(&p, "a:10.100.1.2:delay=5ms");
	add_ok(&p, "shared:10.100.0.2+10.100.2.2:delay=25ms");
	REQUIRE(sdr_link_set_init(&s, &p) == 0);

	mk_frame(f, sizeof(f), IP(10, 100, 1, 2), 0);
	CHECK(sdr_link_frame_src_ipv4(f, sizeof(f), &ip) == 0 && ip == IP(10, 100, 1, 2));
	CHECK_EQ(sdr_link_set_lane(&s, f, sizeof(f)), 0u);
	mk_frame(f, sizeof(f), IP(10, 100, 2, 2), 0);
	CHECK_EQ(sdr_link_set_lane(&s, f, sizeof(f)), 1u);
	mk_frame(f, sizeof(f), IP(10, 100, 0, 2), 1); /* 802.1Q */
	CHECK(sdr_link_frame_src_ipv4(f, sizeof(f), &ip) == 0 && ip == IP(10, 100, 0, 2));
	CHECK_EQ(sdr_link_set_lane(&s, f, sizeof(f)), 1u);
	mk_frame(f, sizeof(f), IP(10, 100, 9, 2), 0); /* unlisted: the default lane */
	CHECK_EQ(sdr_link_set_lane(&s, f, sizeof(f)), 2u);
	mk_frame(f, sizeof(f), IP(10, 100, 1, 2), 0);
	CHECK_EQ(sdr_link_set_lane(&s, f, sizeof(f)), 0u); /* the cache follows the source */
	f[12] = 0x08;
	f[13] = 0x06; /* ARP */
	CHECK(sdr_link_frame_src_ipv4(f, sizeof(f), &ip) == -1);
	CHECK_EQ(sdr_link_set_lane(&s, f, sizeof(f)), 2u);
	mk_frame(f, sizeof(f), IP(10, 100, 1, 2), 0);
	f[14] = 0x65; /* IP version 6 in an IPv4 ethertype */
	CHECK_EQ(sdr_link_set_lane(&s, f, sizeof(f)), 2u);
	mk_frame(f, sizeof(f), IP(10, 100, 1, 2), 0);
	CHECK(sdr_link_frame_src_ipv4(f, 33, &ip) == -1, "a truncated IPv4 header");
	CHECK(sdr_link_frame_src_ipv4(f, 34, &ip) == 0);
	CHECK_EQ(sdr_link_set_lane(&s, f, 20), 2u);
	CHECK(sdr_link_frame_src_ipv4(f, 13, &ip) == -1);
	mk_frame(f, sizeof(f), IP(10, 100, 1, 2), 1);
	CHECK(sdr_link_frame_src_ipv4(f, 37, &ip) == -1 &&
	      sdr_link_frame_src_ipv4(f, 38, &ip) == 0);
	CHECK(sdr_link_frame_src_ipv4(f, 17, &ip) == -1);

	/* an invalid plan is refused */
	p.lane_of[0] = 7;
	CHECK(sdr_link_set_init(&s, &p) == -EINVAL);
}

/* Two sources in one profile share its bottleneck: frames offered at the same
 * instants leave one serialisation time apart in arrival order, whichever
 * source they come from; a third source in a profile of its own, at the same
 * rate, is not slowed down by them; the default lane delays unlisted sources
 * by --link's delay (or not at all without --link). */
static void test_shared_bottleneck(void)
{
	struct sdr_link_plan p;
	static struct sdr_link_set s;
	struct sdr_link_cfg d;
	struct sdr_link_verdict v;
	uint8_t fa[64], fb[64], fc[64], fu[64];
	const uint32_t len = 1250; /* 10000 bits: 10 us at 1 Gbit/s */
	const uint64_t ser = 10000, delay = 25000000, t0 = 1000000;
	uint64_t last_shared = 0;
	unsigned lane;
	char err[256];

	REQUIRE(sdr_link_parse("delay=5ms", &d, err, sizeof(err)) == 0);
	sdr_link_plan_init(&p, &d);
	add_ok(&p, "into2:10.100.0.2+10.100.1.2:delay=25ms,rate=1gbit,buffer=1MB");
	add_ok(&p, "own:10.100.3.2:delay=25ms,rate=1gbit,buffer=1MB");
	REQUIRE(sdr_link_set_init(&s, &p) == 0);
	mk_frame(fa, sizeof(fa), IP(10, 100, 0, 2), 0);
	mk_frame(fb, sizeof(fb), IP(10, 100, 1, 2), 0);
	mk_frame(fc, sizeof(fc), IP(10, 100, 3, 2), 0);
	mk_frame(fu, sizeof(fu), IP(10, 100, 7, 2), 0);

	/* 100 rounds: A and B each offer a frame at the same instant (a burst
	 * of 200 frames, 2 MB of line rate worth at 2x the bottleneck) */
	for (unsigned i = 0; i < 100; i++) {
		uint64_t now = t0 +
			       i * ser; /* both together offer 2 frames per serialisation time */
		for (int k = 0; k < 2; k++) {
			enum sdr_link_action a = sdr_link_set_decide(&s, now, k ? fb : fa,
								     sizeof(fa), len, &lane, &v);

			CHECK_EQ(lane, 0u);
			CHECK_OR_BREAK(a == SDR_LINK_DELIVER);
			/* the n-th frame of the shared FIFO (n = 2i + k) leaves after
			 * n + 1 serialisation times, minus what drained since t0 */
			uint64_t n = 2 * i + (unsigned)k;
			uint64_t want = t0 + (n + 1) * ser + delay;
			CHECK(v.depart_ns == want,
			      "frame %" PRIu64 " from %c departs %" PRIu64 " want %" PRIu64, n,
			      k ? 'B' : 'A', v.depart_ns, want);
			CHECK(v.depart_ns > last_shared);
			last_shared = v.depart_ns;
		}
		/* C, alone in its profile, at the same rate and the same instants */
		CHECK(sdr_link_set_decide(&s, now, fc, sizeof(fc), len, &lane, &v) ==
		      SDR_LINK_DELIVER);
		CHECK_EQ(lane, 1u);
		CHECK(v.depart_ns == now + ser + delay, "own lane: %" PRIu64 " want %" PRIu64,
		      v.depart_ns, now + ser + delay);
	}
	/* the shared FIFO drained at exactly one rate: 200 frames, 2 ms */
	CHECK(last_shared == t0 + 200 * ser + delay);
	CHECK(s.link[0].stats.pkts_in == 200 && s.link[0].stats.delivered == 200);
	CHECK(s.link[0].stats.max_backlog_bytes == 101 * len,
	      "the backlog of a 2:1 overload grows by one frame per round: %" PRIu64,
	      s.link[0].stats.max_backlog_bytes);
	CHECK(s.link[1].stats.max_backlog_bytes == len);
	/* an unlisted source: the default lane, --link's 5 ms, no bottleneck */
	CHECK(sdr_link_set_decide(&s, t0, fu, sizeof(fu), len, &lane, &v) == SDR_LINK_DELIVER);
	CHECK_EQ(lane, 2u);
	CHECK(v.depart_ns == t0 + 5000000);
	CHECK(s.link[2].stats.pkts_in == 1);

	/* the shared buffer overflows for both sources together: 1 MB holds
	 * 800 frames; 1000 frames at one instant from A and B alternately
	 * (backlog left from above has drained by t = 1 s) */
	for (unsigned i = 0; i < 1000; i++)
		sdr_link_set_decide(&s, 1000000000ull, i & 1 ? fb : fa, sizeof(fa), len, &lane, &v);
	CHECK(s.link[0].stats.dropped_buffer == 200, "dropped %" PRIu64,
	      s.link[0].stats.dropped_buffer);
	CHECK(s.link[1].stats.dropped_buffer == 0);

	/* without --link, the default lane is a perfect link */
	sdr_link_plan_init(&p, NULL);
	add_ok(&p, "into2:10.100.0.2:delay=25ms");
	REQUIRE(sdr_link_set_init(&s, &p) == 0);
	CHECK(sdr_link_set_decide(&s, t0, fu, sizeof(fu), len, &lane, &v) == SDR_LINK_DELIVER);
	CHECK(lane == 1 && v.depart_ns == t0, "perfect default lane: %" PRIu64, v.depart_ns);
	CHECK(sdr_link_set_decide(&s, t0, fa, sizeof(fa), len, &lane, &v) == SDR_LINK_DELIVER);
	CHECK(lane == 0 && v.depart_ns == t0 + delay);
}

/* Loss is per lane: each lane draws from its own seeded streams, so a lossy
 * profile does not make another lane lose, and a lane's decisions do not
 * depend on the other lanes' traffic. */
static void test_lanes_independent(void)
{
	struct sdr_link_plan p;
	static struct sdr_link_set s, t;
	struct sdr_link_verdict v, w;
	uint8_t fa[64], fb[64];
	unsigned lane, lost_a = 0, lost_b = 0, same = 1;
	const unsigned n = 100000;

	sdr_link_plan_init(&p, NULL);
	add_ok(&p, "lossy:10.0.0.1:loss=1e-2,seed=5");
	add_ok(&p, "clean:10.0.0.2:delay=1ms");
	REQUIRE(sdr_link_set_init(&s, &p) == 0);
	REQUIRE(sdr_link_set_init(&t, &p) == 0);
	mk_frame(fa, sizeof(fa), IP(10, 0, 0, 1), 0);
	mk_frame(fb, sizeof(fb), IP(10, 0, 0, 2), 0);
	for (unsigned i = 0; i < n; i++) {
		uint64_t now = 1000 + (uint64_t)i * 1000;

		lost_a += sdr_link_set_decide(&s, now, fa, sizeof(fa), 1000, &lane, &v) !=
			  SDR_LINK_DELIVER;
		lost_b += sdr_link_set_decide(&s, now, fb, sizeof(fb), 1000, &lane, &v) !=
			  SDR_LINK_DELIVER;
		/* t sees A's frames only: A's decisions must be the same */
		sdr_link_set_decide(&t, now, fa, sizeof(fa), 1000, &lane, &w);
		same &= s.link[0].stats.dropped_loss == t.link[0].stats.dropped_loss;
	}
	CHECK_RATE("lossy lane", lost_a, n, 1e-2);
	CHECK(lost_b == 0, "the clean lane lost %u", lost_b);
	CHECK(same, "a lane's decisions depend on another lane's traffic");
}

static void test_sizing_and_stats(void)
{
	struct sdr_link_plan p;
	struct sdr_link_cfg d;
	struct sdr_link_stats a, b;
	char err[256];
	unsigned need_a, need_b, need_d, total;

	REQUIRE(sdr_link_parse("delay=5ms,rate=1gbit,buffer=1MB", &d, err, sizeof(err)) == 0);
	sdr_link_plan_init(&p, &d);
	add_ok(&p, "a:10.0.0.1:delay=12.5ms,rate=2gbit,buffer=4MB");
	add_ok(&p, "b:10.0.0.2:delay=25ms,rate=500mbit,buffer=2MB");
	need_a = sdr_link_mbufs_needed(&p.lane[0].cfg, 4174, 10e9);
	need_b = sdr_link_mbufs_needed(&p.lane[1].cfg, 4174, 10e9);
	need_d = sdr_link_mbufs_needed(&p.lane[2].cfg, 4174, 10e9);
	total = sdr_link_plan_mbufs_needed(&p, 4174, 10e9);
	CHECK(total == need_a + need_b + need_d, "plan needs %u, lanes %u + %u + %u", total, need_a,
	      need_b, need_d);
	CHECK(need_d < need_b && need_b < need_a, "the test wants d < b < a: %u %u %u", need_d,
	      need_b, need_a);
	/* capping is max-min fair: room for the smallest lane and a bit more
	 * than equal shares for the others - the smallest keeps its limit, the
	 * two others get the same, everything fits */
	{
		struct sdr_link_plan q = p;
		unsigned frames = need_d * 3 + 300;

		sdr_link_plan_cap(&q, frames, 4174, 10e9);
		CHECK(q.lane[2].cfg.limit == SDR_LINK_DEFAULT_LIMIT,
		      "the small lane was capped to %u", q.lane[2].cfg.limit);
		CHECK(q.lane[0].cfg.limit == q.lane[1].cfg.limit &&
			      q.lane[0].cfg.limit == (frames - need_d) / 2,
		      "a %u b %u, want %u each", q.lane[0].cfg.limit, q.lane[1].cfg.limit,
		      (frames - need_d) / 2);
		CHECK(q.lane[0].cfg.limit < need_a && q.lane[1].cfg.limit < need_b);
		/* room for all: nothing changes */
		q = p;
		sdr_link_plan_cap(&q, total, 4174, 10e9);
		CHECK(link_plan_eq(&q, &p), "a cap that fits changed a limit");
	}
	/* half of the total: every lane wants more than a third, so thirds */
	sdr_link_plan_cap(&p, total / 2, 4174, 10e9);
	CHECK(p.lane[0].cfg.limit == total / 2 / 3 && p.lane[2].cfg.limit == total / 2 / 3,
	      "a %u d %u want %u", p.lane[0].cfg.limit, p.lane[2].cfg.limit, total / 2 / 3);
	CHECK(p.lane[0].cfg.limit + p.lane[1].cfg.limit + p.lane[2].cfg.limit <= total / 2);
	sdr_link_plan_cap(&p, 0, 4174, 10e9);
	CHECK(p.lane[0].cfg.limit == 1 && p.lane[2].cfg.limit == 1, "at least one frame per lane");
	sdr_link_plan_cap(&p, 1000000, 4174, 10e9);
	CHECK(p.lane[0].cfg.limit == 1, "a cap never raises a limit");

	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a.pkts_in = 10, a.max_held = 7, a.max_backlog_bytes = 100, a.max_release_lag_ns = 5,
	a.held = 2;
	b.pkts_in = 5, b.max_held = 3, b.max_backlog_bytes = 900, b.max_release_lag_ns = 50,
	b.held = 1;
	sdr_link_stats_add(&a, &b);
	CHECK(a.pkts_in == 15 && a.held == 3, "counts add");
	CHECK(a.max_held == 7 && a.max_backlog_bytes == 900 && a.max_release_lag_ns == 50,
	      "high-water marks take the larger: %" PRIu64 " %" PRIu64 " %" PRIu64, a.max_held,
	      a.max_backlog_bytes, a.max_release_lag_ns);
}

int main(void)
{
	test_parse();
	test_lane_of_frame();
	test_shared_bottleneck();
	test_lanes_independent();
	test_sizing_and_stats();
	return lt_finish("link_peers");
}
