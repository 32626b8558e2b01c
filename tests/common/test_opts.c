/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * common/sdr_opts.c: one table drives the parser and --help. Parsing order,
 * handlers and their context, errors (unknown, missing argument, refused
 * value), --help, operands, and the usage layout; typed entries: each kind's
 * syntax, its range and the message that names the option and the range.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sdr_opts.h"
#include "sdr_test.h"

struct ctx {
	int verbose, n_eal;
	const char *name;
	unsigned size;
	const char *order[8];
	int norder;
};

static int on_size(const struct sdr_opt *o, const char *arg, void *p)
{
	struct ctx *c = p;
	char *e;
	unsigned long v = strtoul(arg, &e, 10);

	(void)o;
	if (*e || v == 0)
		return -1;
	c->size = (unsigned)v;
	c->order[c->norder++] = "size";
	return 0;
}

static int on_eal(const struct sdr_opt *o, const char *arg, void *p)
{
	struct ctx *c = p;

	(void)arg;
	c->order[c->norder++] = o->name;
	return ++c->n_eal > 2 ? (fprintf(stderr, "test: at most 2 --eal\n"), -2) : 0;
}

static struct ctx C;
static const struct sdr_opt opts[] = {
	SDR_OPT_SECTION("Group:"),
	{.name = "size", .arg = "N", .help = "a size", .dflt = "4", .fn = on_size},
	{.name = "verbose",
	 .short_name = 'v',
	 .help = "more",
	 .fn = sdr_opt_flag,
	 .var = &C.verbose},
	{.name = "name",
	 .arg = "S",
	 .help = "first line\nsecond line",
	 .fn = sdr_opt_str,
	 .var = &C.name},
	{.name = "a-very-long-option-name", .arg = "VALUE", .help = "long", .fn = on_eal},
	{.name = "eal", .arg = "ARG", .help = "repeatable", .fn = on_eal},
	{.name = "help", .short_name = 'h', .help = "this text"},
	SDR_OPT_END,
};
static const struct sdr_opts set = {.prog = "test",
				    .usage = "Usage: test [options]\n",
				    .footer = "end\n",
				    .opt = opts,
				    .col = 20};

static int parse(int argc, char **argv)
{
	memset(&C, 0, sizeof(C));
	return sdr_opts_parse(&set, argc, argv, &C);
}

/* typed entries: a config struct, one entry per kind */
struct tcfg {
	uint32_t mtu, max, milli;
	uint64_t quota, bps, big;
	int epoch, mode, on, off;
	double t_ms, prob;
	const char *path;
};

static const struct sdr_opt_name modes[] = {
	{"mean", 0}, {"p999", 1}, {"max", 2}, SDR_OPT_NAMES_END};
static const struct sdr_opt_name random_word[] = {{"random", -1}, SDR_OPT_NAMES_END};
static int posthook;

static int after(const struct sdr_opt *o, const char *arg, void *ctx)
{
	(void)o;
	(void)arg;
	posthook = ((struct tcfg *)ctx)->mtu;
	return 0;
}

#define OFF(f) .off = offsetof(struct tcfg, f)
static const struct sdr_opt typed[] = {
	{.name = "mtu",
	 .arg = "N",
	 .kind = SDR_OPT_U32,
	 .min = 1024,
	 .max = 4096,
	 .flags = SDR_OPTF_POW2,
	 OFF(mtu),
	 .fn = after},
	{.name = "max", .arg = "B", .kind = SDR_OPT_SIZE32, .min = 1, .max = 1u << 30, OFF(max)},
	{.name = "alpha", .arg = "A", .kind = SDR_OPT_MILLI, .fmin = 0, .fmax = 16, OFF(milli)},
	{.name = "quota", .arg = "B", .kind = SDR_OPT_SIZE, .max = 1ull << 50, OFF(quota)},
	{.name = "rate", .arg = "R", .kind = SDR_OPT_RATE, .min = 1000000, OFF(bps)},
	{.name = "big", .arg = "N", .kind = SDR_OPT_U64, OFF(big)},
	{.name = "epoch",
	 .arg = "N|random",
	 .kind = SDR_OPT_INT,
	 .max = 1022,
	 .names = random_word,
	 OFF(epoch)},
	{.name = "mode", .arg = "M", .kind = SDR_OPT_ENUM, .names = modes, OFF(mode)},
	{.name = "on", .kind = SDR_OPT_BOOL, OFF(on)},
	{.name = "no-off", .kind = SDR_OPT_BOOL, .flags = SDR_OPTF_CLEAR, OFF(off)},
	{.name = "set-on", .arg = "B", .kind = SDR_OPT_BOOL, OFF(on)},
	{.name = "time",
	 .arg = "T",
	 .kind = SDR_OPT_DURATION,
	 .unit = SDR_TIME_MS,
	 .bare = SDR_TIME_UNIT_NEEDED,
	 .fmin = 0,
	 .fmax = 60000,
	 .flags = SDR_OPTF_GT_MIN,
	 OFF(t_ms)},
	{.name = "prob", .arg = "P", .kind = SDR_OPT_DOUBLE, .fmin = 0, .fmax = 1, OFF(prob)},
	{.name = "path", .arg = "F", .kind = SDR_OPT_STRING, OFF(path)},
	SDR_OPT_END,
};
static const struct sdr_opts tset = {.prog = "t", .opt = typed};
static struct tcfg T;

/* apply --NAME ARG to T; the message on stderr, if any, in msg */
static int apply(const char *name, const char *arg, char *msg, size_t len)
{
	FILE *f = tmpfile();
	int fd = dup(2), rc;
	size_t n;

	fflush(stderr);
	dup2(fileno(f), 2);
	rc = sdr_opt_apply(&tset, sdr_opts_find(&tset, name), arg, &T);
	fflush(stderr);
	dup2(fd, 2);
	close(fd);
	rewind(f);
	n = fread(msg, 1, len - 1, f);
	msg[n] = '\0';
	fclose(f);
	return rc;
}

#define OK(name, arg) \
	CHECK(apply(name, arg, m, sizeof(m)) == 0 && !m[0], "%s %s: %s", name, arg ? arg : "", m)
#define NO(name, arg, want) \
	CHECK(apply(name, arg, m, sizeof(m)) == -1 && !strcmp(m, want), "%s %s: %s", name, arg, m)

static void test_typed(void)
{
	char m[256];

	/* integers: range, power of two, the handler after the store */
	OK("mtu", "2048");
	CHECK(T.mtu == 2048 && posthook == 2048);
	NO("mtu", "3000", "t: --mtu: '3000' is not a power of two in [1024, 4096]\n");
	NO("mtu", "8192", "t: --mtu: '8192' is not a power of two in [1024, 4096]\n");
	NO("mtu", "x", "t: --mtu: 'x' is not a power of two in [1024, 4096]\n");
	CHECK(T.mtu == 2048);
	OK("big", "0x10");
	CHECK(T.big == 16);
	OK("big", "18446744073709551615");
	CHECK(T.big == UINT64_MAX);
	NO("big", "-1", "t: --big: '-1' is not a number in [0, 18446744073709551615]\n");
	/* a word besides the numbers */
	OK("epoch", "random");
	CHECK(T.epoch == -1);
	OK("epoch", "1022");
	CHECK(T.epoch == 1022);
	NO("epoch", "1023", "t: --epoch: '1023' is not a number in [0, 1022] or random\n");
	/* sizes: binary suffixes, ranges printed with them */
	OK("max", "64K");
	CHECK(T.max == 65536);
	OK("max", "1GiB");
	CHECK(T.max == 1u << 30);
	NO("max", "2G", "t: --max: '2G' is not a size in [1, 1G] (K/M/G suffixes)\n");
	NO("max", "0", "t: --max: '0' is not a size in [1, 1G] (K/M/G suffixes)\n");
	OK("quota", "16G");
	CHECK(T.quota == 16ull << 30);
	NO("quota", "1048577G",
	   "t: --quota: '1048577G' is not a size in [0, 1048576G] (K/M/G suffixes)\n");
	/* rates: decimal suffixes */
	OK("rate", "2.5gbit");
	CHECK(T.bps == 2500000000ull);
	NO("rate", "999k",
	   "t: --rate: '999k' is not a rate in [1m, 18446744073709551615] "
	   "(bits/s: 10g, 2.5gbit, 800m, 1e9)\n");
	/* thousandths, doubles, durations (exclusive lower bound) */
	OK("alpha", "0.5");
	CHECK(T.milli == 500);
	OK("alpha", "16");
	CHECK(T.milli == 16000);
	NO("alpha", "16.5", "t: --alpha: '16.5' is not a number in [0, 16]\n");
	NO("alpha", "nan", "t: --alpha: 'nan' is not a number in [0, 16]\n");
	OK("prob", "1e-3");
	CHECK(T.prob == 1e-3);
	NO("prob", "1.5", "t: --prob: '1.5' is not a number in [0, 1]\n");
	OK("time", "2.5s");
	CHECK(T.t_ms == 2500);
	OK("time", "250us");
	CHECK(T.t_ms == 0.25);
	NO("time", "5",
	   "t: --time: '5' is not a duration in (0ms, 60000ms] "
	   "(a number and its unit: s, ms, us or ns)\n");
	NO("time", "0s",
	   "t: --time: '0s' is not a duration in (0ms, 60000ms] "
	   "(a number and its unit: s, ms, us or ns)\n");
	/* enums, booleans, strings */
	OK("mode", "p999");
	CHECK(T.mode == 1);
	NO("mode", "median", "t: --mode: 'median' is not mean, p999 or max\n");
	T.off = 1;
	OK("on", NULL);
	OK("no-off", NULL);
	CHECK(T.on == 1 && T.off == 0);
	OK("set-on", "off");
	CHECK(T.on == 0);
	NO("set-on", "maybe",
	   "t: --set-on: 'maybe' is not yes, no, on, off, true, false, 1 or 0\n");
	OK("path", "/tmp/x");
	CHECK(T.path && !strcmp(T.path, "/tmp/x"));
	/* through the parser: typed entries need no handler */
	{
		char *a[] = {"t", "--mtu=1024", "--mode", "max", "--path", "p", "op", NULL};
		char *b[] = {"t", "--mtu", "1000", NULL};

		memset(&T, 0, sizeof(T));
		CHECK(sdr_opts_parse(&tset, 7, a, &T) == 6 && T.mtu == 1024 && T.mode == 2 &&
		      !strcmp(T.path, "p"));
		CHECK(sdr_opts_parse(&tset, 3, b, &T) == -1 && T.mtu == 1024);
	}
}

/* .base: per-entry target structs (config.c's instance options) */
struct two {
	struct tcfg a, b;
};

static void *pick(const struct sdr_opt *o, void *ctx)
{
	struct two *t = ctx;

	return o->id ? &t->b : &t->a;
}

static void test_base(void)
{
	static const struct sdr_opt t[] = {
		{.name = "a", .arg = "N", .kind = SDR_OPT_U32, OFF(mtu)},
		{.name = "b", .arg = "N", .kind = SDR_OPT_U32, OFF(mtu), .id = 1},
		SDR_OPT_END,
	};
	const struct sdr_opts set2 = {.prog = "b", .opt = t, .base = pick};
	char *a[] = {"b", "--a", "1", "--b", "2", NULL};
	struct two x = {0};

	CHECK(sdr_opts_parse(&set2, 5, a, &x) == 5 && x.a.mtu == 1 && x.b.mtu == 2);
}

int main(void)
{
	char *a1[] = {"test", "--size", "7", "-v", "--name=x", "op1", "--eal", "e", "op2", NULL};
	char *a2[] = {"test", "--size", "0", NULL};
	char *a3[] = {"test", "--nope", NULL};
	char *a4[] = {"test", "--size", NULL};
	char *a5[] = {"test", "--eal", "1", "--eal", "2", "--eal", "3", NULL};
	char *a6[] = {"test", "-x", NULL};
	char *a7[] = {"mode", "--verbose", NULL};
	int i;

	/* handlers in command-line order, operands permuted to the end */
	i = parse(9, a1);
	CHECK(i == 7, "first operand at %d", i);
	CHECK(C.size == 7 && C.verbose == 1 && C.name && !strcmp(C.name, "x") && C.n_eal == 1);
	CHECK(!strcmp(a1[i], "op1") && !strcmp(a1[i + 1], "op2"));
	CHECK(C.norder == 2 && !strcmp(C.order[0], "size") && !strcmp(C.order[1], "eal"));
	/* refusals: a handler's -1 (message by the helper), -2 (its own),
	 * unknown options, missing arguments */
	CHECK(parse(3, a2) == -1);
	CHECK(parse(2, a3) == -1);
	CHECK(parse(2, a4) == -1);
	CHECK(parse(7, a5) == -1 && C.n_eal == 3);
	CHECK(parse(2, a6) == -1);
	/* argv[0] is skipped, whatever it is (sdr-perf passes MODE there) */
	CHECK(parse(2, a7) == 2 && C.verbose == 1);
	CHECK(sdr_opts_find(&set, "eal") == &opts[5] && sdr_opts_find(&set, "x") == NULL);
	/* the usage: sections, aliases, the help column, continuation lines,
	 * defaults, long names on a line of their own */
	{
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		const char *want = "Usage: test [options]\n"
				   "Group:\n"
				   "  --size N          a size (default 4)\n"
				   "  -v, --verbose     more\n"
				   "  --name S          first line\n"
				   "                    second line\n"
				   "  --a-very-long-option-name VALUE\n"
				   "                    long\n"
				   "  --eal ARG         repeatable\n"
				   "  -h, --help        this text\n"
				   "end\n";

		sdr_opts_usage(&set, f);
		fclose(f);
		CHECK(!strcmp(buf, want), "usage:\n%s", buf);
		free(buf);
	}
	/* variants: one table, two programs */
	{
		static int x;
		static const struct sdr_opt t[] = {
			{.name = "both", .fn = sdr_opt_flag, .var = &x, .help = "b"},
			{.name = "one", .fn = sdr_opt_flag, .var = &x, .help = "1", .only = 1},
			{.name = "two", .fn = sdr_opt_flag, .var = &x, .help = "2", .only = 2},
			SDR_OPT_END,
		};
		const struct sdr_opts v1 = {.prog = "v1", .opt = t, .variant = 1};
		const struct sdr_opts v2 = {.prog = "v2", .opt = t, .variant = 2};
		char *b1[] = {"v", "--both", "--one", NULL}, *b2[] = {"v", "--one", NULL};
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);

		CHECK(sdr_opts_parse(&v1, 3, b1, NULL) == 3 && x == 1);
		CHECK(sdr_opts_parse(&v2, 2, b2, NULL) == -1);
		CHECK(sdr_opts_find(&v2, "one") == NULL && sdr_opts_find(&v2, "two") == &t[2]);
		sdr_opts_usage(&v2, f);
		fclose(f);
		CHECK(strstr(buf, "--two") && strstr(buf, "--both") && !strstr(buf, "--one"));
		free(buf);
	}
	test_typed();
	test_base();
	return t_finish("test_opts");
}
