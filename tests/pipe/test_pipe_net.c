/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the multi-DC configuration and the network description
 * (host/pipe/pipe_net.h): --place over up to 6 DCs, the text format and its
 * errors, pair lookups with a shared bottleneck, the default network of a
 * configuration, the receiving daemon's per-peer link arguments, the
 * canonical form and the digests; links of several paths (their spellings,
 * capacity, delay, loss, shares, canonical form and link arguments).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pipe.h"
#include "pipe_net.h"
#include "sdr_link_peers.h"
#include "sdr_test.h"

static const char *const example =
	"# three DCs: DC 2 is behind one shared bottleneck\n"
	"link l01 to=1 from=0 delay=2.5ms rate=1gbit buffer=2MB loss=0\n"
	"link l10 to=0 from=1 delay=2.5ms rate=1gbit buffer=2MB\n"
	"link into2 to=2 from=0,1 delay=12.5ms rate=2gbit buffer=4MB loss=1e-3   # shared\n"
	"\n"
	"link from2 to=0 from=2 delay=12.5ms rate=2gbit jitter=1ms\n";

static void test_place(void)
{
	struct pipe_cfg c;
	uint32_t d;

	pipe_cfg_init(&c);
	CHECK(pipe_place_parse("0,1,2,3,4,5", &c) == 0 && c.stages == 6 && c.dc_of[5] == 5,
	      "6 DCs");
	CHECK(pipe_cfg_finish(&c) == 0 && c.dcs == 6, "finish 6 DCs: %u", c.dcs);
	CHECK(pipe_place_parse("0,0,1,2,2,3,4,5", &c) == 0 && c.stages == 8, "8 stages on 6 DCs");
	CHECK(pipe_cfg_finish(&c) == 0 && c.dcs == 6, "dcs");
	/* the two-DC forms are unchanged */
	CHECK(pipe_place_parse("3,5", &c) == 0 && c.stages == 8 && c.dc_of[2] == 0 &&
		      c.dc_of[3] == 1,
	      "counts form");
	CHECK(pipe_cfg_finish(&c) == 0 && c.dcs == 2, "two DCs");
	CHECK(pipe_place_parse("0,1,0,1", &c) == 0 && c.stages == 4, "alternating");
	/* errors */
	CHECK(pipe_place_parse("0,6,1", &c) == -EINVAL, "DC 6");
	CHECK(pipe_place_parse("0,2,2", &c) == -EINVAL, "DC 1 hosts nothing");
	CHECK(pipe_place_parse("1,1,2", &c) == -EINVAL, "DC 0 hosts nothing");
	CHECK(pipe_place_parse("0,0,0", &c) == 0 && pipe_cfg_finish(&c) == 0 && c.dcs == 1,
	      "one DC (no crossing) as before");
	CHECK(pipe_place_parse("0,1,", &c) == -EINVAL, "trailing comma");
	CHECK(pipe_place_parse("0,-1,1", &c) == -EINVAL, "negative");
	CHECK(pipe_place_parse("0,1, 2", &c) == -EINVAL, "blank");
	CHECK(pipe_place_parse("0,4", &c) == -EINVAL, "counts with an empty DC");
	{
		uint8_t dc[3] = {0, 2, 1};

		CHECK(pipe_place_check(dc, 3, &d) == 0 && d == 3, "check");
		dc[2] = 3;
		CHECK(pipe_place_check(dc, 3, &d) == -EINVAL, "gap at DC 1");
	}
	/* finish refuses a hand-made placement with a gap */
	pipe_cfg_init(&c);
	c.stages = 3;
	c.dc_of[0] = 0;
	c.dc_of[1] = 2;
	c.dc_of[2] = 2;
	CHECK(pipe_cfg_finish(&c) == -EINVAL, "gap accepted by finish");
}

static void test_parse_ok(void)
{
	struct pipe_net n;
	char why[256] = "";

	REQUIRE(pipe_net_parse(example, &n, why, sizeof(why)) == 0, "%s", why);
	CHECK(n.dcs == 3 && n.nlinks == 4, "dcs %u links %u", n.dcs, n.nlinks);
	CHECK(pipe_net_lookup(&n, 0, 1) == 0 && pipe_net_lookup(&n, 1, 0) == 1, "pairs 0<->1");
	/* one link, two senders */
	CHECK(pipe_net_lookup(&n, 0, 2) == 2 && pipe_net_lookup(&n, 1, 2) == 2, "shared into2");
	CHECK(pipe_net_lookup(&n, 2, 0) == 3, "from2");
	CHECK(pipe_net_lookup(&n, 2, 1) == -1, "2 -> 1 not emulated");
	CHECK(pipe_net_lookup(&n, 0, 5) == -1, "outside the network");
	CHECK(fabs(pipe_net_delay(&n, 0, 2) - 0.0125) < 1e-12, "delay");
	CHECK(pipe_net_delay(&n, 2, 1) == 0, "no link, no delay");
	CHECK(pipe_net_rate(&n, 2) == 2000000000ull && pipe_net_rate(&n, -1) == 0, "rate");
	CHECK(fabs(pipe_net_loss(&n, 2) - 1e-3) < 1e-15 && pipe_net_loss(&n, 0) == 0, "loss");
	CHECK(n.link[2].cfg.buffer_bytes == 4000000 && n.link[3].cfg.jitter_ns == 1000000, "keys");
	CHECK(strcmp(n.link[2].spec, "delay=12.5ms,rate=2gbit,buffer=4MB,loss=0.001") == 0,
	      "spec %s", n.link[2].spec);
	/* ';' separates items as a newline does; dcs may add DCs without links */
	REQUIRE(pipe_net_parse("dcs 4; link a to=1 from=0 delay=1ms", &n, why, sizeof(why)) == 0,
		"%s", why);
	CHECK(n.dcs == 4 && n.nlinks == 1, "dcs line");
	/* Gilbert-Elliott: the long-run loss, combined with Bernoulli */
	REQUIRE(pipe_net_parse("link g to=1 from=0 ge=0.01:0.09:0:1 loss=0.1", &n, why,
			       sizeof(why)) == 0,
		"%s", why);
	CHECK(fabs(pipe_net_loss(&n, 0) - (1 - 0.9 * 0.9)) < 1e-12, "ge loss %g",
	      pipe_net_loss(&n, 0));
}

static void expect_error(const char *text, const char *needle)
{
	struct pipe_net n;
	char why[256] = "";
	int rc = pipe_net_parse(text, &n, why, sizeof(why));

	CHECK(rc == -EINVAL, "accepted: %s", text);
	CHECK(strstr(why, needle) != NULL, "'%s': message '%s' lacks '%s'", text, why, needle);
}

static void test_parse_errors(void)
{
	expect_error("", "no link");
	expect_error("# nothing\n\n", "no link");
	expect_error("link a to=1 from=0\nlink b to=1 from=2,0",
		     "line 2: link b: DC 0 -> DC 1 is already link a");
	expect_error("link a to=1 from=0\nlink a to=0 from=1", "line 2: link name 'a' used twice");
	expect_error("link 1a to=1 from=0", "needs a name");
	expect_error("link a-b_c.d to=1 from=0; link x/y to=0 from=1", "line 2");
	expect_error("link aaaaaaaaaaaaaaaaaaaaaaaa to=1 from=0", "at most 23");
	expect_error("link a to=1 from=1", "sends to itself");
	expect_error("link a to=1 from=0,0", "each once");
	expect_error("link a to=1 from=0,", "from=");
	expect_error("link a to=6 from=0", "to=");
	expect_error("link a to=1", "needs to=DC and from=");
	expect_error("link a to=1 to=2 from=0", "repeated");
	expect_error("link a to=1 from=0 latency=1ms", "unknown key 'latency'");
	expect_error("link a to=1 from=0 delay=1xs", "key 'delay'");
	expect_error("link a to=1 from=0 buffer=1MB", "needs a bottleneck rate");
	expect_error("link a to=1 from=0 delay=1ms delay=2ms", "delay");
	expect_error("route a to=1 from=0", "unknown item 'route'");
	expect_error("dcs 2\nlink a to=2 from=0", "DC 2 named, but 'dcs 2'");
	expect_error("dcs 7\nlink a to=1 from=0", "dcs N");
	expect_error("dcs 3\ndcs 3\nlink a to=1 from=0", "line 2");
}

static void test_default_and_check(void)
{
	struct pipe_cfg c;
	struct pipe_net n, d;
	uint64_t um;
	char why[256] = "";

	pipe_cfg_init(&c);
	REQUIRE(pipe_place_parse("0,1,2,1", &c) == 0, "place");
	c.rtt = 0.03;
	c.rate_bps = 500000000ull;
	REQUIRE(pipe_cfg_finish(&c) == 0, "finish");
	pipe_net_default(&c, &d);
	CHECK(d.dcs == 3 && d.nlinks == 6, "default: %u DCs %u links", d.dcs, d.nlinks);
	for (uint32_t a = 0; a < 3; a++)
		for (uint32_t b = 0; b < 3; b++)
			if (a != b) {
				int l = pipe_net_lookup(&d, a, b);

				CHECK(l >= 0 && pipe_net_rate(&d, l) == c.rate_bps &&
					      fabs(pipe_net_delay(&d, a, b) - 0.015) < 1e-12,
				      "default pair %u -> %u", a, b);
			}
	CHECK(pipe_net_of(&c, &n) == &n && n.nlinks == 6, "net_of without a net");
	/* a net with fewer DCs than the placement */
	REQUIRE(pipe_net_parse("link a to=1 from=0", &n, why, sizeof(why)) == 0, "%s", why);
	CHECK(pipe_net_check(&n, &c, &um, why, sizeof(why)) == -EINVAL, "2-DC net for 3 DCs");
	c.net = &n;
	CHECK(pipe_cfg_finish(&c) == -EINVAL, "finish with a smaller net");
	/* unmapped pairs are reported, not refused */
	REQUIRE(pipe_net_parse(example, &n, why, sizeof(why)) == 0, "%s", why);
	CHECK(pipe_cfg_finish(&c) == 0, "finish with the example net");
	CHECK(pipe_net_of(&c, &d) == &n, "net_of with a net");
	CHECK(pipe_net_check(&n, &c, &um, why, sizeof(why)) == 0, "check");
	/* 0,1,2,1 crosses 0<->1, 1<->2, 2<->1: 2 -> 1 has no link */
	CHECK(um == 1ull << (2 * PIPE_MAX_DC + 1), "unmapped %llx", (unsigned long long)um);
}

static void test_link_args(void)
{
	struct pipe_net n;
	const char *addr[3] = {"10.100.0.1", "10.100.1.1", "10.100.2.1"};
	const char *bad[3] = {"10.100.0.1", "10.100.1", "10.100.2.1"};
	char buf[512], why[256] = "";
	int rc;

	REQUIRE(pipe_net_parse(example, &n, why, sizeof(why)) == 0, "%s", why);
	rc = pipe_net_link_args(&n, 2, addr, buf, sizeof(buf));
	CHECK(rc > 0 &&
		      strcmp(buf, "into2:10.100.0.1+10.100.1.1:delay=12.5ms,rate=2gbit,buffer=4MB,"
				  "loss=0.001\n") == 0,
	      "DC 2: %s", buf);
	rc = pipe_net_link_args(&n, 0, addr, buf, sizeof(buf));
	CHECK(rc > 0 && strcmp(buf, "l10:10.100.1.1:delay=2.5ms,rate=1gbit,buffer=2MB\n"
				    "from2:10.100.2.1:delay=12.5ms,jitter=1ms,rate=2gbit,buffer=1."
				    "5MB\n") == 0,
	      "DC 0: %s", buf);
	CHECK(rc == (int)strlen(buf), "length");
	CHECK(pipe_net_link_args(&n, 0, bad, buf, sizeof(buf)) == -EINVAL, "bad sender address");
	/* DC 1's own (bad) address is not needed for its profile */
	CHECK(pipe_net_link_args(&n, 1, bad, buf, sizeof(buf)) > 0, "unused address looked at");
	CHECK(pipe_net_link_args(&n, 2, bad, buf, sizeof(buf)) == -EINVAL,
	      "bad shared sender address");
	CHECK(pipe_net_link_args(&n, 3, addr, buf, sizeof(buf)) == -EINVAL, "DC outside");
	CHECK(pipe_net_link_args(&n, 2, addr, buf, 20) == -ENOSPC, "short buffer");
	REQUIRE(pipe_net_parse("dcs 3; link a to=1 from=0", &n, why, sizeof(why)) == 0, "%s", why);
	CHECK(pipe_net_link_args(&n, 2, addr, buf, sizeof(buf)) == 0 && buf[0] == '\0',
	      "no link into DC 2: nothing");
}

static void test_canonical_and_digest(void)
{
	struct pipe_net n, m;
	struct pipe_cfg c, d;
	char *text = NULL, why[256] = "";
	size_t len = 0;
	FILE *f;

	REQUIRE(pipe_net_parse(example, &n, why, sizeof(why)) == 0, "%s", why);
	f = open_memstream(&text, &len);
	REQUIRE(f && pipe_net_write(f, &n) == 0, "write");
	fclose(f);
	REQUIRE(pipe_net_parse(text, &m, why, sizeof(why)) == 0, "re-parse: %s", why);
	CHECK(pipe_net_digest(&n) == pipe_net_digest(&m), "canonical form changes the digest:\n%s",
	      text);
	free(text);
	/* one key changes the digest */
	REQUIRE(pipe_net_parse("link l01 to=1 from=0 delay=2.5ms rate=1gbit", &m, why,
			       sizeof(why)) == 0,
		"%s", why);
	{
		uint64_t h = pipe_net_digest(&m);

		REQUIRE(pipe_net_parse("link l01 to=1 from=0 delay=2.6ms rate=1gbit", &m, why,
				       sizeof(why)) == 0,
			"%s", why);
		CHECK(pipe_net_digest(&m) != h, "delay ignored by the digest");
	}
	/* the configuration digest covers the network; without one it is the
	 * same digest as before networks existed */
	pipe_cfg_init(&c);
	REQUIRE(pipe_place_parse("0,1,2", &c) == 0, "place");
	d = c;
	REQUIRE(pipe_cfg_finish(&c) == 0, "finish");
	d.net = &n;
	REQUIRE(pipe_cfg_finish(&d) == 0, "finish net");
	CHECK(pipe_cfg_digest(&c) != pipe_cfg_digest(&d), "net not in the cfg digest");
	d.dc_of[1] = 2;
	d.dc_of[2] = 1;
	CHECK(pipe_cfg_finish(&d) == 0 && pipe_cfg_digest(&c) != pipe_cfg_digest(&d),
	      "placement not in the digest");
}

static void test_load(void)
{
	char path[] = "/tmp/test_pipe_net_XXXXXX", why[256] = "";
	struct pipe_net n;
	int fd = mkstemp(path);
	FILE *f;

	REQUIRE(fd >= 0, "mkstemp");
	f = fdopen(fd, "w");
	REQUIRE(f, "fdopen");
	fputs(example, f);
	fclose(f);
	CHECK(pipe_net_load(path, &n, why, sizeof(why)) == 0 && n.nlinks == 4, "load: %s", why);
	unlink(path);
	CHECK(pipe_net_load(path, &n, why, sizeof(why)) == -ENOENT && strstr(why, path),
	      "missing file");
}

/* the canonical text of @p n re-parses to the same network */
static void round_trip(const struct pipe_net *n, const char *what)
{
	struct pipe_net m;
	char *text = NULL, why[256] = "";
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	REQUIRE(f && pipe_net_write(f, n) == 0, "write");
	fclose(f);
	CHECK(pipe_net_parse(text, &m, why, sizeof(why)) == 0, "%s: re-parse: %s\n%s", what, why,
	      text);
	CHECK(pipe_net_digest(&m) == pipe_net_digest(n) && m.nlinks == n->nlinks &&
		      m.link[0].npaths == n->link[0].npaths,
	      "%s: canonical form differs:\n%s", what, text);
	free(text);
}

static void test_paths(void)
{
	static const char *const two[] = {
		"link m to=1 from=0 delay=5ms rate=250mbit | delay=12.5ms rate=250mbit",
		"link m to=1 from=0 delay=5ms rate=250mbit|delay=12.5ms rate=250mbit",
		"link m to=1 from=0 delay=5ms rate=250mbit| delay=12.5ms rate=250mbit",
		"link m to=1 from=0 delay=5ms rate=250mbit |delay=12.5ms rate=250mbit",
	};
	const char *addr[2] = {"10.100.0.1", "10.100.1.1"};
	struct pipe_net n;
	char why[256] = "", buf[512];
	uint64_t h = 0;

	/* every spelling of '|' gives the same two paths */
	for (size_t i = 0; i < sizeof(two) / sizeof(two[0]); i++) {
		REQUIRE(pipe_net_parse(two[i], &n, why, sizeof(why)) == 0, "%s: %s", two[i], why);
		CHECK(n.link[0].npaths == 2 && pipe_net_paths(&n, 0) == 2, "%s: %u paths", two[i],
		      n.link[0].npaths);
		CHECK(strcmp(n.link[0].spec, "delay=5ms,rate=250mbit,buffer=1.5MB | "
					     "delay=12.5ms,rate=250mbit,buffer=1.5MB") == 0,
		      "%s: spec %s", two[i], n.link[0].spec);
		CHECK(i == 0 || pipe_net_digest(&n) == h, "%s: another digest", two[i]);
		h = pipe_net_digest(&n);
	}
	/* capacity: the sum; delay: the longest path; shares by rate */
	CHECK(pipe_net_rate(&n, 0) == 500000000ull, "rate %llu",
	      (unsigned long long)pipe_net_rate(&n, 0));
	CHECK(fabs(pipe_net_delay(&n, 0, 1) - 0.0125) < 1e-12, "delay %g",
	      pipe_net_delay(&n, 0, 1));
	CHECK(n.link[0].path[0].delay_ns == 5000000 && n.link[0].path[1].delay_ns == 12500000,
	      "path delays");
	CHECK(fabs(pipe_net_delay_ctl(&n, 0, 1) - 0.00875) < 1e-12 &&
		      pipe_net_delay_ctl(&n, 1, 0) == 0,
	      "one port's delay: the mean %g", pipe_net_delay_ctl(&n, 0, 1));
	CHECK(pipe_net_path_share(&n, 0, 0) == 0.5 && pipe_net_path_share(&n, 0, 1) == 0.5 &&
		      pipe_net_path_share(&n, 0, 2) == 0,
	      "shares");
	round_trip(&n, "two paths");
	/* the daemon's argument: the same paths, one word */
	CHECK(pipe_net_link_args(&n, 1, addr, buf, sizeof(buf)) > 0 &&
		      strcmp(buf, "m:10.100.0.1:delay=5ms,rate=250mbit,buffer=1.5MB|"
				  "delay=12.5ms,rate=250mbit,buffer=1.5MB\n") == 0,
	      "link args %s", buf);
	{
		static struct sdr_link_plan plan;
		struct sdr_link_cfg c[SDR_LINK_PATHS_MAX];
		unsigned np = 0;
		char err[256];

		*strchr(buf, '\n') = '\0';
		CHECK(sdr_link_parse_paths(strrchr(buf, ':') + 1, c, &np, err, sizeof(err)) == 0 &&
			      np == 2 && c[1].delay_ns == 12500000 && c[0].rate_bps == 250000000,
		      "the emulator reads the argument: %s", err);
		/* the daemon's --link-peer takes it: one lane per path */
		sdr_link_plan_init(&plan, NULL);
		CHECK(sdr_link_plan_add(&plan, buf, err, sizeof(err)) == 0 && plan.nlanes == 3 &&
			      strcmp(plan.lane[1].name, "m/p1") == 0 &&
			      plan.lane[1].cfg.delay_ns == 12500000,
		      "--link-peer %s: %s", buf, err);
	}
	/* unequal rates: shares, the weighted loss */
	REQUIRE(pipe_net_parse("link u to=1 from=0 rate=300mbit loss=0.01 | rate=100mbit | "
			       "rate=600mbit ge=0.01:0.09:0:1",
			       &n, why, sizeof(why)) == 0,
		"%s", why);
	CHECK(n.link[0].npaths == 3 && pipe_net_rate(&n, 0) == 1000000000ull, "3 paths");
	CHECK(fabs(pipe_net_path_share(&n, 0, 0) - 0.3) < 1e-12 &&
		      fabs(pipe_net_path_share(&n, 0, 2) - 0.6) < 1e-12,
	      "rate shares");
	CHECK(fabs(pipe_net_loss(&n, 0) - (0.3 * 0.01 + 0.6 * 0.1)) < 1e-12, "loss %g",
	      pipe_net_loss(&n, 0));
	round_trip(&n, "three paths");
	/* paths=N: N identical paths, kept in that form */
	REQUIRE(pipe_net_parse("link p to=1 from=0 delay=2ms rate=1gbit paths=4 seed=3", &n, why,
			       sizeof(why)) == 0,
		"%s", why);
	CHECK(n.link[0].npaths == 4 && pipe_net_rate(&n, 0) == 4000000000ull &&
		      fabs(pipe_net_delay(&n, 0, 1) - 0.002) < 1e-12,
	      "paths=4");
	CHECK(strstr(n.link[0].spec, "paths=4") != NULL, "spec %s", n.link[0].spec);
	round_trip(&n, "paths=4");
	/* a path without a rate: the link has no bottleneck; equal shares */
	REQUIRE(pipe_net_parse("link e to=1 from=0 rate=1gbit | delay=1ms", &n, why, sizeof(why)) ==
			0,
		"%s", why);
	CHECK(pipe_net_rate(&n, 0) == 0 && pipe_net_path_share(&n, 0, 1) == 0.5, "no rate");
	round_trip(&n, "a path without a rate");
	/* a single path is what it was: one path, the plain canonical spec */
	REQUIRE(pipe_net_parse("link s to=1 from=0 delay=5ms rate=1gbit", &n, why, sizeof(why)) ==
			0,
		"%s", why);
	CHECK(pipe_net_delay_ctl(&n, 0, 1) == pipe_net_delay(&n, 0, 1), "single path: delay");
	CHECK(n.link[0].npaths == 1 && pipe_net_path_share(&n, 0, 0) == 1 &&
		      strcmp(n.link[0].spec, "delay=5ms,rate=1gbit,buffer=1.5MB") == 0,
	      "single path: %s", n.link[0].spec);
	/* errors name the line (and the path) */
	expect_error("dcs 2\nlink a to=1 from=0 delay=1ms | delay=2xs", "line 2: link a: path 1:");
	expect_error("link a to=1 from=0 delay=1ms | paths=2", "line 1: link a: ");
	expect_error("link a to=1 from=0 paths=9", "paths=");
	expect_error("link a to=1 from=0 paths=0", "paths=");
	expect_error("link a to=1 from=0 | | | | | | | | ", "more than 8 paths");
	expect_error("link a to=1 from=0 delay=1ms | buffer=1MB", "path 1: ");
}

int main(void)
{
	test_place();
	test_parse_ok();
	test_parse_errors();
	test_default_and_check();
	test_link_args();
	test_canonical_and_digest();
	test_load();
	test_paths();
	return t_finish("pipe_net");
}
