/* SPDX-License-Identifier: BSD-3-Clause */
/* Option tables: getopt_long() and --help from one table (sdr_opts.h). */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "sdr_opts.h"

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

static int is_end(const struct sdr_opt *o) { return o->name == NULL && o->help == NULL; }

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
		int rc;

		if (c >= 256 && c < 256 + (int)n) {
			o = by_index[c - 256];
		} else if (c == ':' || c == '?') {
			const char *what = argv[optind - 1];

			if (c == ':')
				fprintf(stderr, "%s: %s needs an argument (see --help)\n", s->prog, what);
			else if (optopt && optopt != '?')
				fprintf(stderr, "%s: unknown option '-%c' (see --help)\n", s->prog, optopt);
			else
				fprintf(stderr, "%s: unknown or incomplete option '%s' (see --help)\n",
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
		if (o->fn == NULL && strcmp(o->name, "help") == 0) {
			sdr_opts_usage(s, stdout);
			return SDR_OPTS_HELP;
		}
		if (o->fn == NULL)
			continue;
		rc = o->fn(o, optarg, ctx);
		if (rc == -1)
			fprintf(stderr, "%s: bad --%s '%s' (see --help)\n", s->prog, o->name,
				optarg ? optarg : "");
		if (rc)
			return -1;
	}
	return optind;
}
