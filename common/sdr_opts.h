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
 *
 * Typed entries need no handler: .kind says what the argument is, .min/.max
 * (or .fmin/.fmax) bound it, and the value lands in .var, or at .off in the
 * caller's struct (ctx, or what struct sdr_opts::base returns for the entry):
 *
 *   {.name = "mtu", .arg = "N", .kind = SDR_OPT_U32, .min = 1024, .max = 4096,
 *    .flags = SDR_OPTF_POW2, .off = offsetof(struct cfg, mtu), .help = "..."},
 *   {.name = "mode", .arg = "a|b", .kind = SDR_OPT_ENUM, .names = modes, .var = &mode},
 *
 * A refused value is reported as "PROG: --NAME: 'ARG' is not a number in
 * [MIN, MAX]" (a size, a rate, a duration, one of the names ...). A typed
 * entry may have a handler too: it runs after the value is stored.
 */
#ifndef SDR_OPTS_H
#define SDR_OPTS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sdr_units.h" /* the units of SDR_OPT_DURATION */

struct sdr_opt;

/** What a typed entry's argument is, and the type of its target. */
enum sdr_opt_kind {
	SDR_OPT_FN = 0,   /**< not typed: the handler .fn does it all */
	SDR_OPT_U32,      /**< uint32_t: decimal or 0x hex in [min, max] */
	SDR_OPT_U64,      /**< uint64_t: the same */
	SDR_OPT_INT,      /**< int: the same (a word of .names may give a negative) */
	SDR_OPT_SIZE,     /**< uint64_t: bytes, K/M/G suffixes (2^10..2^30), "B"/"iB" */
	SDR_OPT_SIZE32,   /**< uint32_t: the same */
	SDR_OPT_RATE,     /**< uint64_t: bits/s, k/M/G/T suffixes (sdr_parse_rate()) */
	SDR_OPT_DOUBLE,   /**< double in [fmin, fmax] */
	SDR_OPT_MILLI,    /**< uint32_t: a decimal number in [fmin, fmax] in thousandths */
	SDR_OPT_DURATION, /**< double in the unit .unit: a number and s, ms, us or ns
	                       (a bare number is in .bare; sdr_parse_duration()) */
	SDR_OPT_ENUM,     /**< int: the value of the word of .names */
	SDR_OPT_BOOL,     /**< int: without .arg the flag stores 1 (0 with
	                       SDR_OPTF_CLEAR); with one, yes/no on/off true/false 1/0 */
	SDR_OPT_STRING,   /**< const char *: the argument itself */
};

/** Flags of a typed entry. */
#define SDR_OPTF_POW2 0x1u   /**< integer kinds: a power of two as well */
#define SDR_OPTF_GT_MIN 0x2u /**< real kinds: above fmin, not at it */
#define SDR_OPTF_CLEAR 0x4u  /**< SDR_OPT_BOOL flag: stores 0 (--no-X) */

/** A word an entry takes: the enum's names, or special values of a number
 *  ("random" = -1 next to 0..1022). */
struct sdr_opt_name {
	const char *name;
	int64_t value;
};
#define SDR_OPT_NAMES_END \
	{                 \
		NULL, 0   \
	}

/**
 * Handler of an option: @p arg is its argument (NULL for one without),
 * @p ctx the caller's context of sdr_opts_parse().
 * @return 0; -1 bad value (sdr_opts_parse() prints "PROG: bad --NAME 'ARG'
 *         (see --help)"); -2 the handler printed its own message.
 */
typedef int (*sdr_opt_fn)(const struct sdr_opt *o, const char *arg, void *ctx);

struct sdr_opt {
	const char *name; /**< long name without "--"; NULL: a section heading
	                        (help printed as is) or, with help NULL too, the end */
	char short_name;  /**< -X alias, 0 = none */
	const char *arg;  /**< the argument's name in --help; NULL = takes none */
	const char *help; /**< help text; '\n' separates lines, each printed
	                        at the help column */
	const char *dflt; /**< appended to the help as "(default DFLT)"; NULL = no
	                        such note (the help may state it) */
	sdr_opt_fn fn;    /**< handler; NULL only for "help" */
	void *var;        /**< for the stock handlers and the caller's own */
	int id;           /**< free for the caller (one handler, many options) */
	unsigned only;    /**< 0: in every variant; else only in the variants
	                        whose bit is set (struct sdr_opts::variant): two
	                        programs can share one table */
	/* typed entries (.kind != SDR_OPT_FN) */
	enum sdr_opt_kind kind;
	uint64_t min, max; /**< integer kinds: the range; max 0 = the type's largest */
	double fmin, fmax; /**< real kinds (DOUBLE, MILLI, DURATION): the range;
	                        both 0 = [0, infinity) */
	unsigned flags;    /**< SDR_OPTF_* */
	const struct sdr_opt_name *names; /**< ENUM: its words; integer kinds:
	                        words taken besides numbers (end: SDR_OPT_NAMES_END) */
	size_t off;                       /**< with .var NULL: the target's offset in the base
	                        struct (ctx, or struct sdr_opts::base's answer) */
	signed char unit;                 /**< DURATION: the target's unit (enum sdr_time_unit) */
	signed char bare;                 /**< DURATION: the unit of a bare number, or
	                        SDR_TIME_UNIT_NEEDED; 0 = seconds */
};

/* (initializers: clang-format 14 would make blocks of them) */
/* clang-format off */
#define SDR_OPT_SECTION(text) {.name = NULL, .help = (text)}
#define SDR_OPT_END {.name = NULL, .help = NULL}
/* clang-format on */

struct sdr_opts {
	const char *prog;   /**< in messages: "PROG: ..." */
	const char *usage;  /**< printed before the options (synopsis, description) */
	const char *footer; /**< printed after them (may be NULL) */
	const struct sdr_opt *opt;
	int col;          /**< column of the help texts; 0 = 23 */
	unsigned variant; /**< which entries with 'only' set apply (a bit) */
	/** The struct a typed entry's .off indexes (NULL: ctx itself); e.g. the
	 *  current instance for per-instance options, the config otherwise. */
	void *(*base)(const struct sdr_opt *o, void *ctx);
};

#define SDR_OPTS_HELP (-2)

/** Stock handlers: *(int *)var = 1; *(const char **)var = arg. */
int sdr_opt_flag(const struct sdr_opt *o, const char *arg, void *ctx);
int sdr_opt_str(const struct sdr_opt *o, const char *arg, void *ctx);

/**
 * Apply one entry to its argument: a typed entry parses @p arg, checks its
 * range and stores it (then calls .fn if set); an untyped one calls .fn.
 * @return 0; -1 after printing why on stderr ("PROG: --NAME: 'ARG' is not
 *         a number in [MIN, MAX]", or the handler's message).
 */
int sdr_opt_apply(const struct sdr_opts *s, const struct sdr_opt *o, const char *arg, void *ctx);

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
