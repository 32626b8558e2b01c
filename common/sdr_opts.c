/* SPDX-License-Identifier: BSD-3-Clause */
/* Option tables: getopt_long() and --help from one table, typed entries
 * with their ranges (sdr_opts.h). Pure C, below every program of the tree. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sdr_opts.h"
#include "sdr_units.h"

#define MAX_OPTS 128
#define WIDTH 80 /* the right margin a default note may reach */

int sdr_opt_flag(const struct sdr_opt *o, const char *arg, void *ctx)
{
	(void)arg;
	(void)ctx;
	*(int *)o->var = 1;
	return 0;
}

int sdr_opt_str(const struct sdr_opt *o, const char *arg, void *ctx)
{
	(void)ctx;
	*(const char **)o->var = arg;
	return 0;
}

/* --- typed entries ------------------------------------------------------ */

static int is_int_kind(enum sdr_opt_kind k)
{
	return k == SDR_OPT_U32 || k == SDR_OPT_U64 || k == SDR_OPT_INT || k == SDR_OPT_SIZE ||
	       k == SDR_OPT_SIZE32;
}

/* the largest value the target of an integer kind holds */
static uint64_t type_max(enum sdr_opt_kind k)
{
	switch (k) {
	case SDR_OPT_U32:
	case SDR_OPT_SIZE32: return UINT32_MAX;
	case SDR_OPT_INT: return INT_MAX;
	default: return UINT64_MAX;
	}
}

static uint64_t int_max(const struct sdr_opt *o)
{
	uint64_t t = type_max(o->kind);

	return o->max && o->max < t ? o->max : t;
}

static double real_max(const struct sdr_opt *o)
{
	return o->fmin == 0 && o->fmax == 0 ? INFINITY : o->fmax;
}

static void *target(const struct sdr_opts *s, const struct sdr_opt *o, void *ctx)
{
	if (o->var)
		return o->var;
	return (char *)(s->base ? s->base(o, ctx) : ctx) + o->off;
}

static int find_name(const struct sdr_opt *o, const char *arg, int64_t *v)
{
	for (const struct sdr_opt_name *n = o->names; n && n->name; n++)
		if (strcmp(n->name, arg) == 0) {
			*v = n->value;
			return 1;
		}
	return 0;
}

/* "a, b or c" */
static void print_names(FILE *f, const struct sdr_opt_name *n)
{
	for (size_t i = 0; n[i].name; i++)
		fprintf(f, "%s%s", i == 0 ? "" : n[i + 1].name ? ", " : " or ", n[i].name);
}

/* v with the largest binary (size) or decimal (rate) suffix that divides it */
static const char *fmt_scaled(char *b, size_t len, uint64_t v, int rate)
{
	static const char sfx[] = "KMGT";
	uint64_t step = rate ? 1000 : 1024;
	int i = -1;

	while (v && v % step == 0 && i < (rate ? 3 : 2)) {
		v /= step;
		i++;
	}
	if (i < 0)
		snprintf(b, len, "%" PRIu64, v);
	else
		snprintf(b, len, "%" PRIu64 "%c", v, rate ? sfx[i] + 32 : sfx[i]);
	return b;
}

static const char *unit_name(int unit)
{
	return unit == SDR_TIME_NS   ? "ns"
	       : unit == SDR_TIME_US ? "us"
	       : unit == SDR_TIME_MS ? "ms"
				     : "s";
}

/* "PROG: --NAME: 'ARG' is not ... " on stderr */
static int refuse(const struct sdr_opts *s, const struct sdr_opt *o, const char *arg)
{
	char lo[32], hi[32];
	double fmax = real_max(o);
	const char *open = o->flags & SDR_OPTF_GT_MIN ? "(" : "[";

	fprintf(stderr, "%s: --%s: '%s' is not ", s->prog, o->name, arg ? arg : "");
	switch (o->kind) {
	case SDR_OPT_SIZE:
	case SDR_OPT_SIZE32:
		fprintf(stderr, "a size in [%s, %s] (K/M/G suffixes)",
			fmt_scaled(lo, sizeof(lo), o->min, 0),
			fmt_scaled(hi, sizeof(hi), int_max(o), 0));
		break;
	case SDR_OPT_RATE:
		fprintf(stderr, "a rate in [%s, %s] (bits/s: 10g, 2.5gbit, 800m, 1e9)",
			fmt_scaled(lo, sizeof(lo), o->min, 1),
			fmt_scaled(hi, sizeof(hi), int_max(o), 1));
		break;
	case SDR_OPT_DOUBLE:
	case SDR_OPT_MILLI:
		if (isinf(fmax))
			fprintf(stderr, "a number %s %g", *open == '(' ? ">" : ">=", o->fmin);
		else
			fprintf(stderr, "a number in %s%g, %g]", open, o->fmin, fmax);
		break;
	case SDR_OPT_DURATION: {
		const char *u = unit_name(o->unit);

		if (isinf(fmax))
			fprintf(stderr, "a duration %s %g%s", *open == '(' ? ">" : ">=", o->fmin,
				u);
		else
			fprintf(stderr, "a duration in %s%g%s, %g%s]", open, o->fmin, u, fmax, u);
		if (o->bare == SDR_TIME_UNIT_NEEDED)
			fprintf(stderr, " (a number and its unit: s, ms, us or ns)");
		else
			fprintf(stderr, " (a number and its unit: s, ms, us or ns; %s if none)",
				unit_name(o->bare));
		break;
	}
	case SDR_OPT_ENUM: print_names(stderr, o->names); break;
	case SDR_OPT_BOOL: fprintf(stderr, "yes, no, on, off, true, false, 1 or 0"); break;
	default: /* the integers */
		fprintf(stderr, "a %s in [%" PRIu64 ", %" PRIu64 "]",
			o->flags & SDR_OPTF_POW2 ? "power of two" : "number", o->min, int_max(o));
		if (o->names && o->names[0].name) {
			fprintf(stderr, " or ");
			print_names(stderr, o->names);
		}
		break;
	}
	fputc('\n', stderr);
	return -1;
}

static void store_int(const struct sdr_opt *o, void *t, int64_t v)
{
	switch (o->kind) {
	case SDR_OPT_U32:
	case SDR_OPT_SIZE32:
	case SDR_OPT_MILLI: *(uint32_t *)t = (uint32_t)v; break;
	case SDR_OPT_INT:
	case SDR_OPT_ENUM:
	case SDR_OPT_BOOL: *(int *)t = (int)v; break;
	default: *(uint64_t *)t = (uint64_t)v; break;
	}
}

/* a finite decimal number (strtod's syntax, no inf/nan) */
static int parse_real(const char *arg, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(arg, &end);
	return errno || end == arg || *end || !isfinite(*v) ? -1 : 0;
}

static int in_real_range(const struct sdr_opt *o, double v)
{
	if (o->flags & SDR_OPTF_GT_MIN ? !(v > o->fmin) : !(v >= o->fmin))
		return 0;
	return v <= real_max(o);
}

static int parse_bool(const char *arg, int64_t *v)
{
	static const struct sdr_opt_name words[] = {
		{"yes", 1},   {"no", 0}, {"on", 1}, {"off", 0},        {"true", 1},
		{"false", 0}, {"1", 1},  {"0", 0},  SDR_OPT_NAMES_END,
	};
	const struct sdr_opt o = {.names = words};

	return find_name(&o, arg, v);
}

int sdr_opt_apply(const struct sdr_opts *s, const struct sdr_opt *o, const char *arg, void *ctx)
{
	void *t;
	uint64_t u;
	int64_t w;
	double d;
	int rc;

	if (o->kind != SDR_OPT_FN) {
		t = target(s, o, ctx);
		if (is_int_kind(o->kind)) {
			if (o->names && find_name(o, arg, &w)) {
				store_int(o, t, w);
			} else {
				int sfx = o->kind == SDR_OPT_SIZE || o->kind == SDR_OPT_SIZE32;

				if (sdr_parse_u64(arg, &u, sfx) || u < o->min || u > int_max(o) ||
				    (o->flags & SDR_OPTF_POW2 && (u == 0 || (u & (u - 1)))))
					return refuse(s, o, arg);
				store_int(o, t, (int64_t)u);
			}
		} else {
			switch (o->kind) {
			case SDR_OPT_RATE:
				if (sdr_parse_rate(arg, &u) || u < o->min || u > int_max(o))
					return refuse(s, o, arg);
				*(uint64_t *)t = u;
				break;
			case SDR_OPT_DOUBLE:
			case SDR_OPT_MILLI:
				if (parse_real(arg, &d) || !in_real_range(o, d) ||
				    (o->kind == SDR_OPT_MILLI && d * 1000 + 0.5 > UINT32_MAX))
					return refuse(s, o, arg);
				if (o->kind == SDR_OPT_MILLI)
					*(uint32_t *)t = (uint32_t)(d * 1000 + 0.5);
				else
					*(double *)t = d;
				break;
			case SDR_OPT_DURATION:
				if (sdr_parse_duration(arg, o->bare, (enum sdr_time_unit)o->unit,
						       &d, NULL) ||
				    !in_real_range(o, d))
					return refuse(s, o, arg);
				*(double *)t = d;
				break;
			case SDR_OPT_ENUM:
				if (!find_name(o, arg, &w))
					return refuse(s, o, arg);
				*(int *)t = (int)w;
				break;
			case SDR_OPT_BOOL:
				if (arg == NULL)
					w = !(o->flags & SDR_OPTF_CLEAR);
				else if (!parse_bool(arg, &w))
					return refuse(s, o, arg);
				*(int *)t = (int)w;
				break;
			case SDR_OPT_STRING: *(const char **)t = arg; break;
			default:
				fprintf(stderr, "%s: --%s: unknown kind %d\n", s->prog, o->name,
					(int)o->kind);
				return -1;
			}
		}
	}
	if (o->fn == NULL)
		return 0;
	rc = o->fn(o, arg, ctx);
	if (rc == -1)
		fprintf(stderr, "%s: bad --%s '%s' (see --help)\n", s->prog, o->name,
			arg ? arg : "");
	return rc ? -1 : 0;
}

/* --- the table ------------------------------------------------------------ */

static int is_end(const struct sdr_opt *o)
{
	return o->name == NULL && o->help == NULL;
}

/* an entry of another variant of the table */
static int skip(const struct sdr_opts *s, const struct sdr_opt *o)
{
	return o->only && !(o->only & s->variant);
}

const struct sdr_opt *sdr_opts_find(const struct sdr_opts *s, const char *name)
{
	for (const struct sdr_opt *o = s->opt; !is_end(o); o++)
		if (o->name && !skip(s, o) && strcmp(o->name, name) == 0)
			return o;
	return NULL;
}

/* "  -h, --name ARG" */
static int left(const struct sdr_opt *o, FILE *f)
{
	int n = fprintf(f, "  ");

	if (o->short_name)
		n += fprintf(f, "-%c, ", o->short_name);
	n += fprintf(f, "--%s", o->name);
	if (o->arg)
		n += fprintf(f, " %s", o->arg);
	return n;
}

void sdr_opts_usage(const struct sdr_opts *s, FILE *f)
{
	int col = s->col > 0 ? s->col : 23;

	if (s->usage)
		fputs(s->usage, f);
	for (const struct sdr_opt *o = s->opt; !is_end(o); o++) {
		const char *h = o->help ? o->help : "", *nl;
		int n, last_len = 0;

		if (skip(s, o))
			continue;
		if (o->name == NULL) { /* section heading */
			fprintf(f, "%s\n", h);
			continue;
		}
		n = left(o, f);
		if (n >= col) {
			fputc('\n', f);
			n = 0;
		}
		fprintf(f, "%*s", col - n, "");
		for (;;) {
			nl = strchr(h, '\n');
			last_len = nl ? (int)(nl - h) : (int)strlen(h);
			fwrite(h, 1, (size_t)last_len, f);
			if (!nl || !nl[1])
				break;
			fprintf(f, "\n%*s", col, "");
			h = nl + 1;
		}
		if (o->dflt) {
			int note = (int)strlen(o->dflt) + 11; /* " (default X)" */

			if (last_len && col + last_len + note > WIDTH)
				fprintf(f, "\n%*s(default %s)", col, "", o->dflt);
			else
				fprintf(f, "%s(default %s)", last_len ? " " : "", o->dflt);
		}
		fputc('\n', f);
	}
	if (s->footer)
		fputs(s->footer, f);
}

int sdr_opts_parse(const struct sdr_opts *s, int argc, char **argv, void *ctx)
{
	struct option lo[MAX_OPTS + 1];
	const struct sdr_opt *by_index[MAX_OPTS];
	char shorts[2 * MAX_OPTS + 2] = ":";
	size_t n = 0, ns = 1;
	int c, idx;

	for (const struct sdr_opt *o = s->opt; !is_end(o); o++) {
		if (o->name == NULL || skip(s, o))
			continue;
		if (n == MAX_OPTS) {
			fprintf(stderr, "%s: option table too long\n", s->prog);
			return -1;
		}
		lo[n] = (struct option){o->name, o->arg ? required_argument : no_argument, NULL,
					(int)(256 + n)};
		by_index[n++] = o;
		if (o->short_name) {
			shorts[ns++] = o->short_name;
			if (o->arg)
				shorts[ns++] = ':';
		}
	}
	lo[n] = (struct option){NULL, 0, NULL, 0};
	shorts[ns] = '\0';
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, lo, &idx)) != -1) {
		const struct sdr_opt *o = NULL;

		if (c >= 256 && c < 256 + (int)n) {
			o = by_index[c - 256];
		} else if (c == ':' || c == '?') {
			const char *what = argv[optind - 1];

			if (c == ':')
				fprintf(stderr, "%s: %s needs an argument (see --help)\n", s->prog,
					what);
			else if (optopt && optopt != '?')
				fprintf(stderr, "%s: unknown option '-%c' (see --help)\n", s->prog,
					optopt);
			else
				fprintf(stderr,
					"%s: unknown or incomplete option '%s' (see --help)\n",
					s->prog, what);
			return -1;
		} else {
			for (size_t i = 0; i < n; i++)
				if (by_index[i]->short_name == c)
					o = by_index[i];
		}
		if (o == NULL) {
			fprintf(stderr, "%s: unknown option (see --help)\n", s->prog);
			return -1;
		}
		if (o->kind == SDR_OPT_FN && o->fn == NULL && strcmp(o->name, "help") == 0) {
			sdr_opts_usage(s, stdout);
			return SDR_OPTS_HELP;
		}
		if (sdr_opt_apply(s, o, optarg, ctx))
			return -1;
	}
	return optind;
}
