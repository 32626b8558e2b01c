/* SPDX-License-Identifier: BSD-3-Clause */
/* Link emulator option string: every key, every unit, every error. */
#include <errno.h>
#include <string.h>

#include "link_eq.h"
#include "link_test.h"
#include "sdr_link.h"

static struct sdr_link_cfg ok(const char *spec)
{
	struct sdr_link_cfg c;
	char err[256];
	int rc = sdr_link_parse(spec, &c, err, sizeof(err));

	CHECK(rc == 0, "'%s' rejected: %s", spec, err);
	if (rc != 0)
		sdr_link_cfg_default(&c);
	return c;
}

/* The spec must be rejected with -EINVAL and a message containing @p needle. */
static void bad(const char *spec, const char *needle)
{
	struct sdr_link_cfg c, before;
	char err[256];
	int rc;

	memset(&c, 0xA5, sizeof(c));
	before = c;
	rc = sdr_link_parse(spec, &c, err, sizeof(err));
	CHECK(rc == -EINVAL, "'%s' accepted (rc %d)", spec, rc);
	if (rc != 0) {
		CHECK(strstr(err, needle) != NULL, "'%s': message '%s' lacks '%s'", spec, err,
		      needle);
		CHECK(link_cfg_eq(&c, &before), "'%s': cfg changed on error", spec);
	}
}

static void test_time_units(void)
{
	CHECK(ok("delay=1s").delay_ns == 1000000000ull, "s");
	CHECK(ok("delay=12.5ms").delay_ns == 12500000ull, "ms");
	CHECK(ok("delay=250us").delay_ns == 250000ull, "us");
	CHECK(ok("delay=77ns").delay_ns == 77ull, "ns");
	CHECK(ok("delay=0").delay_ns == 0, "bare 0");
	CHECK(ok("delay=1.5e-3s").delay_ns == 1500000ull, "exponent");
	CHECK(ok("delay=10s").delay_ns == 10000000000ull, "max");
	CHECK(ok("jitter=0.2ms").jitter_ns == 200000ull, "jitter");
	CHECK(ok("delay=.5us").delay_ns == 500, "leading dot");
}

static void test_rate_units(void)
{
	static const struct {
		const char *s;
		uint64_t bps;
	} t[] = {
		{"rate=2000bit", 2000ull},        {"rate=64kbit", 64000ull},
		{"rate=100mbit", 100000000ull},   {"rate=1gbit", 1000000000ull},
		{"rate=2.5Gbit", 2500000000ull},  {"rate=1tbit", 1000000000000ull},
		{"rate=9600bps", 9600ull},        {"rate=56kbps", 56000ull},
		{"rate=10mbps", 10000000ull},     {"rate=40gbps", 40000000000ull},
		{"rate=1TBPS", 1000000000000ull}, {"rate=10tbit", 10000000000000ull},
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		struct sdr_link_cfg c = ok(t[i].s);

		CHECK(c.rate_bps == t[i].bps, "%s -> %llu", t[i].s, (unsigned long long)c.rate_bps);
		CHECK(c.buffer_bytes == SDR_LINK_DEFAULT_BUFFER, "%s: default buffer", t[i].s);
	}
	CHECK(ok("rate=0").rate_bps == 0, "rate=0 means no bottleneck");
}

static void test_size_units(void)
{
	static const struct {
		const char *s;
		uint64_t bytes;
	} t[] = {
		{"rate=1gbit,buffer=1500B", 1500},      {"rate=1gbit,buffer=64KB", 64000},
		{"rate=1gbit,buffer=4MB", 4000000},     {"rate=1gbit,buffer=1GB", 1000000000},
		{"rate=1gbit,buffer=64KiB", 65536},     {"rate=1gbit,buffer=4MiB", 4194304},
		{"rate=1gbit,buffer=1GiB", 1073741824}, {"rate=1gbit,buffer=2.5kb", 2500},
		{"rate=1gbit,buffer=1mib", 1048576},    {"rate=1gbit,buffer=1TB", 1000000000000ull},
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		CHECK(ok(t[i].s).buffer_bytes == t[i].bytes, "%s", t[i].s);
}

static void test_probabilities_and_models(void)
{
	struct sdr_link_cfg c;

	CHECK(ok("loss=1e-3").loss == 1e-3, "loss");
	CHECK(ok("loss=0.5%").loss == 0.005, "loss percent");
	CHECK(ok("loss=1").loss == 1.0, "loss 1");
	CHECK(ok("loss=0").loss == 0.0, "loss 0");

	c = ok("ge=0.01:0.25");
	CHECK(c.ge && c.ge_p_gb == 0.01 && c.ge_p_bg == 0.25 && c.ge_loss_good == 0 &&
		      c.ge_loss_bad == 1,
	      "ge 2 fields");
	c = ok("ge=0.01:0.25:1e-4");
	CHECK(c.ge_loss_good == 1e-4 && c.ge_loss_bad == 1, "ge 3 fields");
	c = ok("ge=1%:20%:0:0.5");
	CHECK(c.ge_p_gb == 0.01 && c.ge_p_bg == 0.2 && c.ge_loss_bad == 0.5, "ge 4 fields");
	CHECK(ok("ge=0:0").ge, "ge never bad is allowed");

	c = ok("reorder=0.01");
	CHECK(c.reorder == 0.01 && c.reorder_extra_ns == SDR_LINK_DEFAULT_REORDER_NS, "reorder");
	c = ok("reorder=0.01:300us");
	CHECK(c.reorder_extra_ns == 300000, "reorder extra");
	CHECK(ok("dup=2e-2").dup == 0.02, "dup");
	c = ok("corrupt=1e-4");
	CHECK(c.corrupt == 1e-4 && c.corrupt_max_bits == 1, "corrupt");
	CHECK(ok("corrupt=1e-4:8").corrupt_max_bits == 8, "corrupt bits");
	CHECK(ok("seed=7").seed == 7, "seed");
	CHECK(ok("seed=0xdeadbeef").seed == 0xdeadbeefull, "seed hex");
	CHECK(ok("seed=18446744073709551615").seed == UINT64_MAX, "seed max");
	CHECK(ok("limit=1000").limit == 1000, "limit");
}

static void test_defaults_and_full(void)
{
	struct sdr_link_cfg d, c;

	sdr_link_cfg_default(&d);
	c = ok("");
	CHECK(link_cfg_eq(&c, &d), "empty spec is the default");
	c = ok("   ");
	CHECK(link_cfg_eq(&c, &d), "blank spec is the default");
	CHECK(d.seed == SDR_LINK_DEFAULT_SEED && d.limit == SDR_LINK_DEFAULT_LIMIT &&
		      d.rate_bps == 0 && d.loss == 0 && !d.ge && d.delay_ns == 0,
	      "defaults");

	c = ok(" delay = 12.5ms , jitter=0.2ms,rate=1gbit,buffer=4MB,loss=1e-3,seed=7 ");
	CHECK(c.delay_ns == 12500000 && c.jitter_ns == 200000 && c.rate_bps == 1000000000 &&
		      c.buffer_bytes == 4000000 && c.loss == 1e-3 && c.seed == 7,
	      "the example spec");
}

static void test_errors(void)
{
	bad("delay", "needs a value");
	bad("delay=", "empty value");
	bad("delay=5", "needs a unit");
	bad("delay=5xs", "unknown unit 'xs'");
	bad("delay=5MS", "unknown unit 'MS'"); /* time units are case-sensitive */
	bad("delay=-1ms", "not a non-negative number");
	bad("delay=inf", "not a non-negative number");
	bad("delay=nan", "not a non-negative number");
	bad("delay=0x10ms", "not a non-negative number");
	bad("delay=11s", "10 s");
	bad("jitter=abc", "'jitter'");
	bad("rate=1gbyte", "unknown unit 'gbyte'");
	bad("rate=100", "needs a unit");
	bad("rate=999bit", "outside 1kbit..10tbit");
	bad("rate=11tbit", "outside 1kbit..10tbit");
	bad("buffer=4MB", "needs a bottleneck rate");
	bad("rate=1gbit,buffer=4", "needs a unit");
	bad("rate=1gbit,buffer=4Mbit", "unknown unit 'Mbit'");
	bad("rate=1gbit,buffer=0.1B", "outside 1B..1TB");
	bad("rate=1gbit,buffer=2TB", "outside 1B..1TB");
	bad("rate=1gbit,buffer=1PB", "unknown unit 'PB'");
	bad("loss=1.5", "more than 1");
	bad("loss=150%", "more than 1");
	bad("loss=-0.1", "not a probability");
	bad("loss=1e-3x", "not a probability");
	bad("loss=nan", "not a probability");
	bad("ge=0.1", "p_gb:p_bg");
	bad("ge=0.1:0.2:0.3:0.4:0.5", "p_gb:p_bg");
	bad("ge=0.1:0", "p_bg must be > 0");
	bad("ge=2:0.5", "ge p_gb");
	bad("ge=0.1:x", "ge p_bg");
	bad("ge=0.1:0.5:7", "ge loss_good");
	bad("ge=0.1:0.5:0:1.1", "ge loss_bad");
	bad("reorder=0.1:0", "extra delay must be > 0");
	bad("reorder=0.1:5", "needs a unit");
	bad("reorder=0.1:1ms:2", "'reorder'");
	bad("dup=2", "'dup'");
	bad("corrupt=0.1:0", "outside 1..32");
	bad("corrupt=0.1:33", "outside 1..32");
	bad("corrupt=0.1:1:1", "'corrupt'");
	bad("seed=-1", "'seed'");
	bad("seed=12abc", "'seed'");
	bad("seed=99999999999999999999", "'seed'");
	bad("limit=0", "outside 1..");
	bad("limit=100000000", "outside 1..");
	bad("delay=1ms,delay=2ms", "given twice");
	bad("delay=1ms,,loss=0.1", "empty item");
	bad("delay=1ms,", "empty item");
	bad(",delay=1ms", "empty item");
	bad("latency=1ms", "unknown key 'latency'");
	bad("Delay=1ms", "unknown key 'Delay'");
	bad("=1ms", "unknown key ''");

	/* overlong spec */
	{
		static char big[5000];
		memset(big, 'a', sizeof(big) - 1);
		bad(big, "longer than");
	}
	/* NULL arguments and NULL err buffer */
	{
		struct sdr_link_cfg c;
		CHECK(sdr_link_parse(NULL, &c, NULL, 0) == -EINVAL, "NULL spec");
		CHECK(sdr_link_parse("delay=1ms", NULL, NULL, 0) == -EINVAL, "NULL cfg");
		CHECK(sdr_link_parse("delay=1", &c, NULL, 0) == -EINVAL, "NULL err");
	}
}

static void test_format_roundtrip(void)
{
	static const char *const specs[] = {
		"",
		"delay=12.5ms,jitter=0.2ms,rate=1gbit,buffer=4MB,loss=1e-3,seed=7",
		"delay=1234567ns,rate=2.5gbit,buffer=4MiB,ge=0.01:0.25:0.0001:0.9",
		"reorder=0.013:1.5ms,dup=0.25%,corrupt=1e-5:7,limit=77,seed=0",
		"rate=123456789bit,delay=3s,jitter=17ns",
	};

	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		struct sdr_link_cfg a = ok(specs[i]), b;
		char buf[512], err[256];
		int n = sdr_link_cfg_format(&a, buf, sizeof(buf));

		CHECK(n > 0 || specs[i][0] == '\0', "format of '%s'", specs[i]);
		CHECK((size_t)n < sizeof(buf), "format fits");
		CHECK(sdr_link_parse(buf, &b, err, sizeof(err)) == 0, "reparse '%s': %s", buf, err);
		CHECK(link_cfg_eq(&a, &b), "'%s' -> '%s' changes the cfg", specs[i], buf);
	}
	/* truncation reports the full length */
	{
		struct sdr_link_cfg a = ok("delay=12.5ms,loss=0.5");
		char small[4];
		int n = sdr_link_cfg_format(&a, small, sizeof(small));

		CHECK(n == (int)strlen("delay=12.5ms,loss=0.5"), "truncated length %d", n);
		CHECK(small[3] == '\0', "NUL-terminated");
	}
}

static void test_init_validates(void)
{
	struct sdr_link_cfg c;
	struct sdr_link l;

	sdr_link_cfg_default(&c);
	CHECK(sdr_link_init(&l, &c) == 0, "default ok");
	c.loss = 1.5;
	CHECK(sdr_link_init(&l, &c) == -EINVAL, "loss > 1");
	sdr_link_cfg_default(&c);
	c.rate_bps = 1000000000;
	c.buffer_bytes = 0;
	CHECK(sdr_link_init(&l, &c) == -EINVAL, "rate without buffer");
	sdr_link_cfg_default(&c);
	c.corrupt_max_bits = 0;
	CHECK(sdr_link_init(&l, &c) == -EINVAL, "0 bits");
	sdr_link_cfg_default(&c);
	c.ge = true;
	c.ge_p_gb = NAN;
	CHECK(sdr_link_init(&l, &c) == -EINVAL, "NaN");
	CHECK(sdr_link_init(NULL, &c) == -EINVAL, "NULL");
}

static void test_pool_sizing(void)
{
	struct sdr_link_cfg c = ok("delay=12.5ms,rate=1gbit,buffer=4MB");
	char err[512];
	/* span: 1e9 b/s * 12.5 ms / (1500*8 b) = 1041.67 -> 1042 frames;
	 * buffer: 4e6 B / 1500 B = 2666.67 -> 2667; sum 3709;
	 * margin: ceil(3709/8) = 464, + 512 -> 4685 */
	unsigned n = sdr_link_mbufs_needed(&c, 1500, 10e9);

	CHECK(n == 4685, "mbufs_needed = %u", n);
	/* line rate below the bottleneck rate bounds the span */
	c = ok("delay=12.5ms");
	n = sdr_link_mbufs_needed(&c, 1500, 1e9);
	CHECK(n == 1042 + 131 + 512, "no bottleneck: %u", n);
	c = ok("delay=12.5ms,dup=1");
	n = sdr_link_mbufs_needed(&c, 1500, 1e9);
	CHECK(n == 2084 + 261 + 512, "dup doubles: %u", n);
	c = ok("delay=1s,limit=1000");
	n = sdr_link_mbufs_needed(&c, 64, 100e9);
	CHECK(n == 1512, "capped by limit: %u", n);

	c = ok("delay=12.5ms,rate=1gbit,buffer=4MB");
	CHECK(sdr_link_check_pool(&c, 1500, 10e9, 4685, err, sizeof(err)) == 0, "fits");
	CHECK(sdr_link_check_pool(&c, 1500, 10e9, 4684, err, sizeof(err)) == -ENOSPC, "too small");
	CHECK(strstr(err, "needs 4685 mbufs") && strstr(err, "1gbit x 12.5ms") &&
		      strstr(err, "buffer 4MB") && strstr(err, "the pool has 4684") &&
		      strstr(err, "-m"),
	      "message: %s", err);
}

int main(void)
{
	test_time_units();
	test_rate_units();
	test_size_units();
	test_probabilities_and_models();
	test_defaults_and_full();
	test_errors();
	test_format_roundtrip();
	test_init_validates();
	test_pool_sizing();
	return lt_finish("test_link_parse");
}
