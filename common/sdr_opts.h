/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One option table per program: the same table drives getopt_long() and
 * prints --help, so the help cannot name an option the parser does not take
 * (or miss one it does). Pure C; any program of the tree can use it (sdr-dpu
 * too: the table's handlers get the caller's context, e.g. its config).
 *
 *   static const struct sdr_opt opts[] = {
 *       SDR_OPT_SECTION("Run:"),
 *       {.name = "size", .arg = "BYTES", .help = "message size", .dflt = "64K",
 *        .fn = on_size},
 *       {.name = "json", .help = "JSON only", .fn = sdr_opt_flag, .var = &json},
 *       {.name = "help", .short_name = 'h', .help = "this text"},
 *       SDR_OPT_END,
 *   };
 *   static const struct sdr_opts set = {.prog = "prog", .usage = "Usage: ...\n",
 *                                       .opt = opts};
 *   int i = sdr_opts_parse(&set, argc, argv, &ctx);
 *   if (i == SDR_OPTS_HELP) return 0;   (usage printed on stdout)
 *   if (i < 0) return 2;                (message printed on stderr)
 *   ... argv[i..argc-1] are the operands
 *
 * Two programs with mostly the same options (sdr-send, sdr-recv) share one
 * table: entries with .only set belong to some variants only, each program's
 * struct sdr_opts names its variant.
 *
 * --help is built in: an entry named "help" without a handler prints the
 * usage on stdout and makes sdr_opts_parse() return SDR_OPTS_HELP.
 */
#ifndef SDR_OPTS_H
#define SDR_OPTS_H

#include <stdio.h>

struct sdr_opt;

/**
 * Handler of an option: @p arg is its argument (NULL for one without),
 * @p ctx the caller's context of sdr_opts_parse().
 * @return 0; -1 bad value (sdr_opts_parse() prints "PROG: bad --NAME 'ARG'
 *         (see --help)"); -2 the handler printed its own message.
 */
typedef int (*sdr_opt_fn)(const struct sdr_opt *o, const char *arg, void *ctx);

struct sdr_opt {
	const char *name;  /**< long name without "--"; NULL: a section heading
	                        (help printed as is) or, with help NULL too, the end */
	char short_name;   /**< -X alias, 0 = none */
	const char *arg;   /**< the argument's name in --help; NULL = takes none */
	const char *help;  /**< help text; '\n' separates lines, each printed
	                        at the help column */
	const char *dflt;  /**< appended to the help as "(default DFLT)"; NULL = no
	                        such note (the help may state it) */
	sdr_opt_fn fn;     /**< handler; NULL only for "help" */
	void *var;         /**< for the stock handlers and the caller's own */
	int id;            /**< free for the caller (one handler, many options) */
	unsigned only;     /**< 0: in every variant; else only in the variants
	                        whose bit is set (struct sdr_opts::variant): two
	                        programs can share one table */
};

/* (initializers: clang-format 14 would make blocks of them) */
/* clang-format off */
#define SDR_OPT_SECTION(text) {.name = NULL, .help = (text)}
#define SDR_OPT_END {.name = NULL, .help = NULL}
/* clang-format on */

struct sdr_opts {
	const char *prog;        /**< in messages: "PROG: ..." */
	const char *usage;       /**< printed before the options (synopsis, description) */
	const char *footer;      /**< printed after them (may be NULL) */
	const struct sdr_opt *opt;
	int col;                 /**< column of the help texts; 0 = 23 */
	unsigned variant;        /**< which entries with 'only' set apply (a bit) */
};

#define SDR_OPTS_HELP (-2)

/** Stock handlers: *(int *)var = 1; *(const char **)var = arg. */
int sdr_opt_flag(const struct sdr_opt *o, const char *arg, void *ctx);
int sdr_opt_str(const struct sdr_opt *o, const char *arg, void *ctx);

/**
 * Parse argv[1..argc-1] (argv[0] is the program, or anything to skip) with
 * getopt_long() built from the table; each option's handler is called in
 * command-line order.
 * @return the index of the first operand (argc if none); SDR_OPTS_HELP after
 *         printing the usage on stdout (--help); -1 after printing why on
 *         stderr (unknown option, missing argument, a handler's refusal).
 */
int sdr_opts_parse(const struct sdr_opts *s, int argc, char **argv, void *ctx);

/** Print the usage: s->usage, every option and section of the table with
 *  its help and default, s->footer. */
void sdr_opts_usage(const struct sdr_opts *s, FILE *f);

/** The table's entry for --NAME, or NULL. */
const struct sdr_opt *sdr_opts_find(const struct sdr_opts *s, const char *name);

#endif /* SDR_OPTS_H */
