/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * common/sdr_opts.c: one table drives the parser and --help. Parsing order,
 * handlers and their context, errors (unknown, missing argument, refused
 * value), --help, operands, and the usage layout.
 */
#include <stdlib.h>
#include <string.h>

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
	{.name = "verbose", .short_name = 'v', .help = "more", .fn = sdr_opt_flag, .var = &C.verbose},
	{.name = "name", .arg = "S", .help = "first line\nsecond line", .fn = sdr_opt_str,
	 .var = &C.name},
	{.name = "a-very-long-option-name", .arg = "VALUE", .help = "long", .fn = on_eal},
	{.name = "eal", .arg = "ARG", .help = "repeatable", .fn = on_eal},
	{.name = "help", .short_name = 'h', .help = "this text"},
	SDR_OPT_END,
};
static const struct sdr_opts set = {.prog = "test", .usage = "Usage: test [options]\n",
				    .footer = "end\n", .opt = opts, .col = 20};

static int parse(int argc, char **argv)
{
	memset(&C, 0, sizeof(C));
	return sdr_opts_parse(&set, argc, argv, &C);
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
		const char *want =
			"Usage: test [options]\n"
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
	return t_finish("test_opts");
}
