/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Paths of the link emulator (docs/link-emulator.md "Paths") on a simulated
 * clock: parsing of multi-path specs ('|', paths=N) and their errors, the
 * canonical text round trip of a profile of several paths, the path of a
 * frame by its UDP source port, paths of different delay each keeping its own
 * delay and bottleneck, an outage on one path only, counters per path and
 * mempool sizing summed over the paths; the same for the default lane's
 * paths (--link "A | B", paths=N).
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "link_eq.h"
#include "link_test.h"
#include "sdr_link_peers.h"

#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (uint32_t)(b) << 16 | (uint32_t)(c) << 8 | (d))
#define MS 1000000ull
#define US 1000ull

/* Ethernet + IPv4 (+ 4 bytes of L4 ports) from @p src, protocol @p proto. */
static void mk_frame(uint8_t *f, size_t len, uint32_t src, unsigned proto, uint16_t sport,
		     uint16_t dport)
{
	memset(f, 0, len);
	f[12] = 0x08;
	f[14] = 0x45;
	f[14 + 9] = (uint8_t)proto;
	f[14 + 12] = (uint8_t)(src >> 24);
	f[14 + 13] = (uint8_t)(src >> 16);
	f[14 + 14] = (uint8_t)(src >> 8);
	f[14 + 15] = (uint8_t)src;
	f[34] = (uint8_t)(sport >> 8);
	f[35] = (uint8_t)sport;
	f[36] = (uint8_t)(dport >> 8);
	f[37] = (uint8_t)dport;
}

/* A UDP source port whose frames take path @p path of @p n. */
static uint16_t port_for(unsigned path, unsigned n)
{
	for (unsigned p = 49152; p < 65536; p++)
		if (sdr_link_path_of_port((uint16_t)p, n) == path)
			return (uint16_t)p;
	REQUIRE(0, "no port for path %u of %u", path, n);
	return 0;
}

static void bad(const char *spec, const char *needle)
{
	struct sdr_link_cfg c[SDR_LINK_PATHS_MAX];
	unsigned n = 99;
	char err[512];
	int rc = sdr_link_parse_paths(spec, c, &n, err, sizeof(err));

	CHECK(rc == -EINVAL, "'%s': rc %d (%s)", spec, rc, err);
	CHECK(n == 99, "'%s': npaths written on error", spec);
	CHECK(strstr(err, needle) != NULL, "'%s': message '%s' lacks '%s'", spec, err, needle);
}

static void test_parse(void)
{
	static const char *four = "delay=5ms,rate=250mbit | delay=6ms,rate=250mbit | "
				  "delay=8ms,rate=250mbit,down=2s+3s | delay=12.5ms,rate=250mbit";
	struct sdr_link_cfg c[SDR_LINK_PATHS_MAX], d[SDR_LINK_PATHS_MAX];
	unsigned n = 0, m = 0;
	char buf[4096], err[512];

	REQUIRE(sdr_link_parse_paths(four, c, &n, err, sizeof(err)) == 0, "%s", err);
	CHECK_EQ(n, 4u);
	CHECK(c[0].delay_ns == 5 * MS && c[1].delay_ns == 6 * MS && c[2].delay_ns == 8 * MS &&
	      c[3].delay_ns == 12500 * US);
	for (unsigned k = 0; k < 4; k++)
		CHECK(c[k].rate_bps == 250000000ull && c[k].seed == 1, "path %u", k);
	CHECK(c[2].ndown == 1 && c[2].down[0].at_ns == 2000 * MS &&
	      c[2].down[0].len_ns == 3000 * MS && c[0].ndown == 0 && c[3].ndown == 0);
	/* canonical text, and back */
	CHECK(sdr_link_paths_format(c, n, buf, sizeof(buf)) < (int)sizeof(buf));
	CHECK(strstr(buf, " | ") != NULL && strstr(buf, "paths=") == NULL, "'%s'", buf);
	REQUIRE(sdr_link_parse_paths(buf, d, &m, err, sizeof(err)) == 0, "'%s': %s", buf, err);
	CHECK_EQ(m, n);
	for (unsigned k = 0; k < n; k++)
		CHECK(link_cfg_eq(&c[k], &d[k]) && c[k].ndown == d[k].ndown, "path %u", k);

	/* a plain spec is one path */
	REQUIRE(sdr_link_parse_paths("delay=1ms", c, &n, err, sizeof(err)) == 0, "%s", err);
	CHECK(n == 1 && c[0].delay_ns == MS);
	/* paths=N: N identical paths, seeds seed, seed+1, ... */
	REQUIRE(sdr_link_parse_paths("delay=2ms, paths = 3 ,loss=1e-3,seed=7", c, &n, err,
				     sizeof(err)) == 0,
		"%s", err);
	CHECK_EQ(n, 3u);
	for (unsigned k = 0; k < 3; k++)
		CHECK(c[k].delay_ns == 2 * MS && c[k].loss == 1e-3 && c[k].seed == 7 + k,
		      "path %u seed %" PRIu64, k, c[k].seed);
	sdr_link_paths_format(c, n, buf, sizeof(buf));
	CHECK(strstr(buf, "paths=3") != NULL && strchr(buf, '|') == NULL, "'%s'", buf);
	REQUIRE(sdr_link_parse_paths(buf, d, &m, err, sizeof(err)) == 0, "'%s': %s", buf, err);
	CHECK_EQ(m, 3u);
	for (unsigned k = 0; k < 3; k++)
		CHECK(link_cfg_eq(&c[k], &d[k]), "paths=3 round trip, path %u", k);
	REQUIRE(sdr_link_parse_paths("paths=2", c, &n, err, sizeof(err)) == 0, "%s", err);
	CHECK(n == 2 && c[0].seed == 1 && c[1].seed == 2 && c[1].delay_ns == 0);
	/* an empty path is a perfect one */
	REQUIRE(sdr_link_parse_paths("delay=1ms||", c, &n, err, sizeof(err)) == 0, "%s", err);
	CHECK(n == 3 && c[1].delay_ns == 0 && c[2].delay_ns == 0);
	sdr_link_paths_format(c, n, buf, sizeof(buf));
	REQUIRE(sdr_link_parse_paths(buf, d, &m, err, sizeof(err)) == 0, "'%s': %s", buf, err);
	CHECK(m == 3 && link_cfg_eq(&c[0], &d[0]) && link_cfg_eq(&c[2], &d[2]), "'%s'", buf);

	bad("a=1", "unknown key");
	bad("delay=1ms | delay=2ms,bogus=1", "path 1: ");
	bad("delay=1ms | delay=x", "path 1: ");
	bad("|||||||||", "more than 8 paths");
	bad("paths=0", "1..8");
	bad("paths=9", "1..8");
	bad("paths=2x", "1..8");
	bad("paths=", "1..8");
	bad("paths=2,paths=2", "given twice");
	bad("paths=2 | delay=1ms", "with '|'");
	bad("delay=1ms | paths=2", "with '|'");
}

static void test_profile(void)
{
	struct sdr_link_plan p, q;
	struct sdr_link_cfg dflt;
	char buf[4096], err[512];

	REQUIRE(sdr_link_parse("delay=1ms", &dflt, err, sizeof(err)) == 0);
	sdr_link_plan_init(&p, &dflt);
	REQUIRE(sdr_link_plan_add(&p, "one:10.0.0.1:delay=3ms", err, sizeof(err)) == 0, "%s", err);
	REQUIRE(sdr_link_plan_add(&p,
				  "wan:10.0.0.2+10.0.0.3:delay=5ms,rate=250mbit | delay=6ms,"
				  "rate=250mbit | delay=8ms,rate=250mbit,down=2s+3s",
				  err, sizeof(err)) == 0,
		"%s", err);
	REQUIRE(sdr_link_plan_add(&p, "10.0.0.4:delay=2ms,paths=2,seed=5", err, sizeof(err)) == 0,
		"%s", err);
	CHECK_EQ(p.nlanes, 1u + 3u + 2u + 1u);
	CHECK(strcmp(p.lane[0].name, "one") == 0 && p.lane[0].npaths == 1);
	for (unsigned k = 0; k < 3; k++) {
		char want[16];

		snprintf(want, sizeof(want), "wan/p%u", k);
		CHECK(strcmp(p.lane[1 + k].name, want) == 0, "'%s'", p.lane[1 + k].name);
		CHECK(p.lane[1 + k].npaths == 3 && p.lane[1 + k].path == k);
		CHECK(p.lane[1 + k].naddr == 2 && p.lane[1 + k].emulated);
	}
	CHECK(p.lane[1].cfg.delay_ns == 5 * MS && p.lane[3].cfg.delay_ns == 8 * MS);
	CHECK(strcmp(p.lane[4].name, "peer2/p0") == 0, "'%s'", p.lane[4].name);
	CHECK(p.lane[4].cfg.seed == 5 && p.lane[5].cfg.seed == 6);
	CHECK(strcmp(p.lane[6].name, "default") == 0 && p.lane[6].npaths == 1);
	/* both addresses map to the profile's first lane */
	CHECK_EQ(sdr_link_plan_lane(&p, IP(10, 0, 0, 2)), 1u);
	CHECK_EQ(sdr_link_plan_lane(&p, IP(10, 0, 0, 3)), 1u);
	CHECK_EQ(sdr_link_plan_lane(&p, IP(10, 0, 0, 4)), 4u);
	CHECK_EQ(sdr_link_plan_lane(&p, IP(10, 0, 0, 9)), 6u);

	/* every lane of a profile formats as the whole profile; it round-trips */
	sdr_link_plan_format(&p, 1, buf, sizeof(buf));
	CHECK(strncmp(buf, "wan:10.0.0.2+10.0.0.3:", 22) == 0 && strstr(buf, " | ") != NULL, "'%s'",
	      buf);
	for (unsigned k = 2; k <= 3; k++) {
		char other[4096];

		sdr_link_plan_format(&p, k, other, sizeof(other));
		CHECK(strcmp(buf, other) == 0, "lane %u: '%s'", k, other);
	}
	sdr_link_plan_init(&q, &dflt);
	REQUIRE(sdr_link_plan_add(&q, "one:10.0.0.1:delay=3ms", err, sizeof(err)) == 0);
	REQUIRE(sdr_link_plan_add(&q, buf, err, sizeof(err)) == 0, "'%s': %s", buf, err);
	sdr_link_plan_format(&p, 5, buf, sizeof(buf));
	CHECK(strcmp(buf, "peer2:10.0.0.4:delay=2ms,seed=5,paths=2") == 0, "'%s'", buf);
	REQUIRE(sdr_link_plan_add(&q, buf, err, sizeof(err)) == 0, "'%s': %s", buf, err);
	CHECK(link_plan_eq(&p, &q), "the canonical text gives back the same lanes");
	/* a lane alone, for counters */
	sdr_link_plan_format_lane(&p, 3, buf, sizeof(buf));
	CHECK(strncmp(buf, "wan/p2:10.0.0.2+10.0.0.3:delay=8ms", 34) == 0 &&
		      strchr(buf, '|') == NULL,
	      "'%s'", buf);
	sdr_link_plan_format_lane(&p, 0, buf, sizeof(buf));
	CHECK(strcmp(buf, "one:10.0.0.1:delay=3ms") == 0, "'%s'", buf);

	/* errors: the plan is untouched */
	q = p;
	CHECK(sdr_link_plan_add(&p, "wan:10.0.0.8:", err, sizeof(err)) == -EINVAL &&
		      strstr(err, "exists already") != NULL,
	      "'%s'", err);
	CHECK(sdr_link_plan_add(&p, "x:10.0.0.8:delay=1ms|rate=9", err, sizeof(err)) == -EINVAL &&
		      strstr(err, "path 1") != NULL,
	      "'%s'", err);
	CHECK(link_plan_eq(&p, &q));
	/* lanes run out before profiles do: 4 x 16 paths + the default */
	sdr_link_plan_init(&p, NULL);
	for (unsigned i = 0; i < 15; i++) {
		snprintf(buf, sizeof(buf), "10.1.0.%u:paths=4", i + 1);
		REQUIRE(sdr_link_plan_add(&p, buf, err, sizeof(err)) == 0, "%s", err);
	}
	q = p;
	CHECK(sdr_link_plan_add(&p, "10.1.1.1:paths=5", err, sizeof(err)) == -ENOSPC &&
		      strstr(err, "lanes") != NULL,
	      "'%s'", err);
	CHECK(link_plan_eq(&p, &q));
	REQUIRE(sdr_link_plan_add(&p, "10.1.1.1:paths=4", err, sizeof(err)) == 0, "%s", err);
	CHECK_EQ(p.nlanes, SDR_LINK_LANES_MAX);
}

static void test_path_of_frame(void)
{
	struct sdr_link_plan p;
	struct sdr_link_set *s = malloc(sizeof(*s));
	unsigned hits[4] = {0}, n = 4;
	uint8_t f[64];
	char err[256];

	REQUIRE(s != NULL);
	/* the documented hash */
	for (unsigned port = 0; port < 65536; port += 7)
		CHECK_EQ(sdr_link_path_of_port((uint16_t)port, 3),
			 (((uint32_t)port * 2654435761u) >> 16) % 3);
	CHECK_EQ(sdr_link_path_of_port(4791, 1), 0u);
	CHECK_EQ(sdr_link_path_of_port(4791, 0), 0u);
	/* consecutive ports spread evenly */
	for (unsigned port = 49152; port < 49152 + 4000; port++)
		hits[sdr_link_path_of_port((uint16_t)port, n)]++;
	for (unsigned k = 0; k < n; k++)
		CHECK(hits[k] >= 900 && hits[k] <= 1100, "path %u: %u of 4000 ports", k, hits[k]);

	/* UDP: its source port; TCP: source XOR destination; others path 0 */
	for (unsigned k = 0; k < n; k++) {
		uint16_t sp = port_for(k, n);

		mk_frame(f, sizeof(f), IP(10, 0, 0, 2), 17, sp, 4791);
		CHECK_EQ(sdr_link_frame_path(f, sizeof(f), n), k);
		CHECK_EQ(sdr_link_frame_path(f, 37, n), 0u); /* too short for the ports */
		mk_frame(f, sizeof(f), IP(10, 0, 0, 2), 6, (uint16_t)(sp ^ 80), 80);
		CHECK_EQ(sdr_link_frame_path(f, sizeof(f), n), k);
	}
	mk_frame(f, sizeof(f), IP(10, 0, 0, 2), 17, port_for(3, n), 4791);
	f[14 + 7] = 1; /* a fragment after the first */
	CHECK_EQ(sdr_link_frame_path(f, sizeof(f), n), 0u);
	mk_frame(f, sizeof(f), IP(10, 0, 0, 2), 1, port_for(3, n), 0); /* ICMP */
	CHECK_EQ(sdr_link_frame_path(f, sizeof(f), n), 0u);
	mk_frame(f, sizeof(f), IP(10, 0, 0, 2), 17, port_for(3, n), 4791);
	f[14] = 0x46; /* 4 bytes of options: the ports move */
	f[38] = f[34];
	f[39] = f[35];
	f[34] = f[35] = 0;
	CHECK_EQ(sdr_link_frame_path(f, sizeof(f), n), 3u);

	/* the set: the profile's first lane + the path; other sources: default */
	sdr_link_plan_init(&p, NULL);
	REQUIRE(sdr_link_plan_add(&p, "a:10.0.0.1:delay=1ms", err, sizeof(err)) == 0);
	REQUIRE(sdr_link_plan_add(&p, "b:10.0.0.2:paths=4", err, sizeof(err)) == 0);
	REQUIRE(sdr_link_set_init(s, &p) == 0);
	for (unsigned k = 0; k < n; k++) {
		mk_frame(f, sizeof(f), IP(10, 0, 0, 2), 17, port_for(k, n), 4791);
		CHECK_EQ(sdr_link_set_lane(s, f, sizeof(f)), 1u + k);
		mk_frame(f, sizeof(f), IP(10, 0, 0, 1), 17, port_for(k, n), 4791);
		CHECK_EQ(sdr_link_set_lane(s, f, sizeof(f)), 0u);
		mk_frame(f, sizeof(f), IP(10, 0, 0, 9), 17, port_for(k, n), 4791);
		CHECK_EQ(sdr_link_set_lane(s, f, sizeof(f)), 5u);
	}
	free(s);
}

/* Two paths of different delay, each with a 100 Mbit/s bottleneck of its
 * own: a burst into both at once queues per path, so frame k of either
 * path leaves its bottleneck at (k + 1) x 120 us and departs its own delay
 * later; an outage on path 1 loses only path 1's frames; the counters of
 * the paths add up to what was offered. */
static void test_two_paths(void)
{
	struct sdr_link_plan p;
	struct sdr_link_set *s = malloc(sizeof(*s));
	struct sdr_link_stats sum;
	uint16_t port[2];
	unsigned sent[2] = {0}, lost1 = 0;
	uint8_t f[64];
	char err[256];
	uint64_t now;

	REQUIRE(s != NULL);
	sdr_link_plan_init(&p, NULL);
	REQUIRE(sdr_link_plan_add(&p,
				  "w:10.0.0.2:delay=5ms,rate=100mbit,buffer=1MB | delay=12.5ms,"
				  "rate=100mbit,buffer=1MB,down=10ms+5ms",
				  err, sizeof(err)) == 0,
		"%s", err);
	REQUIRE(sdr_link_set_init(s, &p) == 0);
	port[0] = port_for(0, 2);
	port[1] = port_for(1, 2);
	/* t = 0: 10 frames of 1500 B into each path, interleaved */
	for (unsigned k = 0; k < 10; k++)
		for (unsigned j = 0; j < 2; j++) {
			struct sdr_link_verdict v;
			unsigned lane = 99;

			mk_frame(f, sizeof(f), IP(10, 0, 0, 2), 17, port[j], 4791);
			REQUIRE(sdr_link_set_decide(s, 0, f, sizeof(f), 1500, &lane, &v) ==
				SDR_LINK_DELIVER);
			sent[j]++;
			CHECK_EQ(lane, j);
			CHECK(v.bottleneck_exit_ns == (k + 1) * 120 * US,
			      "path %u frame %u: %" PRIu64, j, k, v.bottleneck_exit_ns);
			CHECK(v.depart_ns == v.bottleneck_exit_ns + (j ? 12500 : 5000) * US,
			      "path %u frame %u: depart %" PRIu64, j, k, v.depart_ns);
		}
	/* a frame into each path every 100 us for 30 ms: path 1 is down for
	 * [10 ms, 15 ms) of its own clock (origin: its first frame, t = 0) */
	for (now = 2 * MS; now < 30 * MS; now += 100 * US)
		for (unsigned j = 0; j < 2; j++) {
			struct sdr_link_verdict v;
			unsigned lane;
			enum sdr_link_action a;

			mk_frame(f, sizeof(f), IP(10, 0, 0, 2), 17, port[j], 4791);
			a = sdr_link_set_decide(s, now, f, sizeof(f), 1000, &lane, &v);
			sent[j]++;
			if (j == 0) {
				CHECK(a == SDR_LINK_DELIVER &&
					      v.depart_ns == now + 80 * US + 5 * MS,
				      "path 0 at %" PRIu64 ": %d", now, (int)a);
				continue;
			}
			if (now >= 10 * MS && now < 15 * MS) {
				CHECK(a == SDR_LINK_DROP_DOWN, "path 1 at %" PRIu64 ": %d", now,
				      (int)a);
				lost1++;
			} else {
				CHECK(a == SDR_LINK_DELIVER &&
					      v.depart_ns == now + 80 * US + 12500 * US,
				      "path 1 at %" PRIu64 ": %d", now, (int)a);
			}
		}
	CHECK_EQ(lost1, 50u);
	CHECK(s->link[0].stats.pkts_in == sent[0] && s->link[0].stats.delivered == sent[0] &&
	      s->link[0].stats.dropped_down == 0);
	CHECK(s->link[1].stats.pkts_in == sent[1] && s->link[1].stats.dropped_down == lost1 &&
	      s->link[1].stats.delivered == sent[1] - lost1);
	CHECK(s->link[2].stats.pkts_in == 0, "the default lane saw nothing");
	memset(&sum, 0, sizeof(sum));
	for (unsigned i = 0; i < p.nlanes; i++)
		sdr_link_stats_add(&sum, &s->link[i].stats);
	CHECK_EQ(sum.pkts_in, (uint64_t)sent[0] + sent[1]);
	CHECK_EQ(sum.delivered + sum.dropped_down, sum.pkts_in);
	CHECK_EQ(sum.bytes_in, s->link[0].stats.bytes_in + s->link[1].stats.bytes_in);
	/* mempool sizing: each path holds its own span and buffer */
	{
		unsigned a = sdr_link_mbufs_needed(&p.lane[0].cfg, 1500, 100e9);
		unsigned b = sdr_link_mbufs_needed(&p.lane[1].cfg, 1500, 100e9);
		unsigned d = sdr_link_mbufs_needed(&p.lane[2].cfg, 1500, 100e9);

		CHECK_EQ(sdr_link_plan_mbufs_needed(&p, 1500, 100e9), a + b + d);
		CHECK(b > a, "the longer path needs more: %u vs %u", b, a);
	}
	free(s);
}

/* --link with paths: the default lane's paths (sdr_link_plan_init_spec()),
 * parsed, named default/pK, formatted back, after the profiles' lanes,
 * steering an unlisted source by its UDP source port (a frame that is not
 * IPv4 to path 0), each path with its own delay and counters. */
static void test_default_paths(void)
{
	struct sdr_link_plan p, q;
	struct sdr_link_set *s = malloc(sizeof(*s));
	unsigned sent[3] = {0}, n = 3, d;
	uint8_t f[64];
	char buf[4096], err[512];

	REQUIRE(s != NULL);
	/* paths=N: N lanes, seeds seed, seed + 1, ... */
	REQUIRE(sdr_link_plan_init_spec(&p, "delay=4ms,paths=3,seed=3", err, sizeof(err)) == 0,
		"%s", err);
	CHECK_EQ(p.nlanes, 3u);
	CHECK_EQ(sdr_link_plan_default_lane(&p), 0u);
	for (unsigned k = 0; k < 3; k++) {
		char want[16];

		snprintf(want, sizeof(want), "default/p%u", k);
		CHECK(strcmp(p.lane[k].name, want) == 0, "'%s'", p.lane[k].name);
		CHECK(p.lane[k].npaths == 3 && p.lane[k].path == k && p.lane[k].emulated &&
		      p.lane[k].naddr == 0 && p.lane[k].cfg.seed == 3 + k &&
		      p.lane[k].cfg.delay_ns == 4 * MS);
	}
	CHECK(sdr_link_plan_active(&p));
	sdr_link_plan_format(&p, 2, buf, sizeof(buf));
	CHECK(strcmp(buf, "default:delay=4ms,seed=3,paths=3") == 0, "'%s'", buf);
	sdr_link_plan_format_lane(&p, 1, buf, sizeof(buf));
	CHECK(strcmp(buf, "default/p1:delay=4ms,seed=4") == 0, "'%s'", buf);
	/* a plain --link is the one default lane it always was */
	REQUIRE(sdr_link_plan_init_spec(&p, "delay=4ms", err, sizeof(err)) == 0, "%s", err);
	CHECK(p.nlanes == 1 && strcmp(p.lane[0].name, "default") == 0 && p.lane[0].npaths == 1);
	REQUIRE(sdr_link_plan_init_spec(&p, NULL, err, sizeof(err)) == 0);
	CHECK(p.nlanes == 1 && !p.lane[0].emulated && !sdr_link_plan_active(&p));
	/* errors: the parser's message, the plan untouched */
	q = p;
	CHECK(sdr_link_plan_init_spec(&p, "delay=1ms | bogus=1", err, sizeof(err)) == -EINVAL &&
		      strstr(err, "path 1: ") != NULL,
	      "'%s'", err);
	CHECK(sdr_link_plan_init_spec(&p, "paths=9", err, sizeof(err)) == -EINVAL &&
		      strstr(err, "1..8") != NULL,
	      "'%s'", err);
	CHECK(sdr_link_plan_init_paths(&p, &q.lane[0].cfg, 0) == -EINVAL &&
	      sdr_link_plan_init_paths(&p, &q.lane[0].cfg, 9) == -EINVAL);
	CHECK(link_plan_eq(&p, &q));

	/* "A | B | C" with profiles added after it: they go in front */
	REQUIRE(sdr_link_plan_init_spec(&p,
					"delay=5ms,rate=100mbit,buffer=1MB | delay=12.5ms,"
					"rate=100mbit,buffer=1MB,down=10ms+5ms | delay=1ms",
					err, sizeof(err)) == 0,
		"%s", err);
	REQUIRE(sdr_link_plan_add(&p, "a:10.0.0.1:delay=3ms", err, sizeof(err)) == 0, "%s", err);
	REQUIRE(sdr_link_plan_add(&p, "b:10.0.0.2:paths=2", err, sizeof(err)) == 0, "%s", err);
	CHECK_EQ(p.nlanes, 1u + 2u + 3u);
	d = sdr_link_plan_default_lane(&p);
	CHECK_EQ(d, 3u);
	CHECK(strcmp(p.lane[0].name, "a") == 0 && strcmp(p.lane[1].name, "b/p0") == 0 &&
	      strcmp(p.lane[3].name, "default/p0") == 0 &&
	      strcmp(p.lane[5].name, "default/p2") == 0);
	CHECK(p.lane[3].cfg.delay_ns == 5 * MS && p.lane[4].cfg.delay_ns == 12500 * US &&
	      p.lane[5].cfg.delay_ns == MS);
	CHECK_EQ(sdr_link_plan_lane(&p, IP(10, 0, 0, 2)), 1u);
	CHECK_EQ(sdr_link_plan_lane(&p, IP(10, 0, 0, 9)), d);
	/* the profiles' text round-trips on a plan with the same default */
	REQUIRE(sdr_link_plan_init_spec(&q,
					"delay=5ms,rate=100mbit,buffer=1MB | delay=12.5ms,"
					"rate=100mbit,buffer=1MB,down=10ms+5ms | delay=1ms",
					err, sizeof(err)) == 0);
	for (unsigned i = 0; i < d; i++)
		if (p.lane[i].path == 0) {
			sdr_link_plan_format(&p, i, buf, sizeof(buf));
			REQUIRE(sdr_link_plan_add(&q, buf, err, sizeof(err)) == 0, "'%s': %s", buf,
				err);
		}
	CHECK(link_plan_eq(&p, &q), "the canonical text gives back the same lanes");
	sdr_link_plan_format(&p, d + 1, buf, sizeof(buf));
	CHECK(strncmp(buf, "default:delay=5ms", 17) == 0 && strstr(buf, " | ") != NULL, "'%s'",
	      buf);
	REQUIRE(sdr_link_plan_init_spec(&q, buf + 8, err, sizeof(err)) == 0, "'%s': %s", buf, err);
	for (unsigned k = 0; k < 3; k++)
		CHECK(link_cfg_eq(&q.lane[k].cfg, &p.lane[d + k].cfg), "default path %u", k);

	/* steering: an unlisted source by its port, the listed ones as before */
	REQUIRE(sdr_link_set_init(s, &p) == 0);
	for (unsigned k = 0; k < n; k++) {
		mk_frame(f, sizeof(f), IP(10, 0, 0, 9), 17, port_for(k, n), 4791);
		CHECK_EQ(sdr_link_set_lane(s, f, sizeof(f)), d + k);
		mk_frame(f, sizeof(f), IP(10, 0, 0, 1), 17, port_for(k, n), 4791);
		CHECK_EQ(sdr_link_set_lane(s, f, sizeof(f)), 0u);
		mk_frame(f, sizeof(f), IP(10, 0, 0, 2), 17, port_for(k % 2, 2), 4791);
		CHECK_EQ(sdr_link_set_lane(s, f, sizeof(f)), 1u + k % 2);
	}
	mk_frame(f, sizeof(f), IP(10, 0, 0, 9), 17, port_for(2, n), 4791);
	f[12] = 0x08, f[13] = 0x06; /* ARP: path 0 */
	CHECK_EQ(sdr_link_set_lane(s, f, sizeof(f)), d);

	/* each path its delay, its bottleneck and its outage; counters per
	 * path; a frame every 100 us into each path for 30 ms */
	for (uint64_t now = 0; now < 30 * MS; now += 100 * US)
		for (unsigned k = 0; k < n; k++) {
			static const uint64_t delay[3] = {5 * MS, 12500 * US, MS};
			struct sdr_link_verdict v;
			unsigned lane = 99;
			enum sdr_link_action a;
			bool down = k == 1 && now >= 10 * MS && now < 15 * MS;

			mk_frame(f, sizeof(f), IP(10, 0, 0, 9), 17, port_for(k, n), 4791);
			a = sdr_link_set_decide(s, now, f, sizeof(f), 1000, &lane, &v);
			sent[k]++;
			CHECK_EQ(lane, d + k);
			CHECK(a == (down ? SDR_LINK_DROP_DOWN : SDR_LINK_DELIVER),
			      "path %u at %" PRIu64 ": %d", k, now, (int)a);
			if (!down)
				CHECK(v.depart_ns == now + (k < 2 ? 80 * US : 0) + delay[k],
				      "path %u at %" PRIu64 ": depart %" PRIu64, k, now,
				      v.depart_ns);
		}
	for (unsigned k = 0; k < n; k++) {
		const struct sdr_link_stats *st = &s->link[d + k].stats;

		CHECK(st->pkts_in == sent[k] && st->bytes_in == 1000ull * sent[k], "path %u", k);
		CHECK(st->dropped_down == (k == 1 ? 50u : 0u) &&
			      st->delivered == sent[k] - st->dropped_down,
		      "path %u: down %" PRIu64, k, st->dropped_down);
	}
	for (unsigned i = 0; i < d; i++)
		CHECK(s->link[i].stats.pkts_in == 0, "lane %u saw nothing", i);
	/* mempool sizing: each of the default lane's paths holds its own */
	{
		unsigned sum = 0;

		for (unsigned i = 0; i < p.nlanes; i++)
			sum += sdr_link_mbufs_needed(&p.lane[i].cfg, 1500, 100e9);
		CHECK_EQ(sdr_link_plan_mbufs_needed(&p, 1500, 100e9), sum);
	}

	/* the default lane's paths count among the 65 lanes */
	REQUIRE(sdr_link_plan_init_spec(&p, "paths=8", err, sizeof(err)) == 0);
	for (unsigned i = 0; i < 14; i++) {
		snprintf(buf, sizeof(buf), "10.1.0.%u:paths=4", i + 1);
		REQUIRE(sdr_link_plan_add(&p, buf, err, sizeof(err)) == 0, "%s", err);
	}
	q = p;
	CHECK(sdr_link_plan_add(&p, "10.1.1.1:paths=2", err, sizeof(err)) == -ENOSPC &&
		      strstr(err, "lanes") != NULL,
	      "'%s'", err);
	CHECK(link_plan_eq(&p, &q));
	REQUIRE(sdr_link_plan_add(&p, "10.1.1.1:", err, sizeof(err)) == 0, "%s", err);
	CHECK_EQ(p.nlanes, SDR_LINK_LANES_MAX);
	CHECK_EQ(sdr_link_plan_default_lane(&p), SDR_LINK_LANES_MAX - 8);
	CHECK(strcmp(p.lane[SDR_LINK_LANES_MAX - 1].name, "default/p7") == 0);
	REQUIRE(sdr_link_set_init(s, &p) == 0);
	free(s);
}

int main(void)
{
	test_parse();
	test_profile();
	test_path_of_frame();
	test_two_paths();
	test_default_paths();
	return lt_finish("link_paths");
}
