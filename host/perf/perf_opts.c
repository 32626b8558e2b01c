/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-perf's options beyond the typed entries of perf_optab.c: the checks
 * that need code (schemes, lists, repeated and passed-through options) and
 * the scheme parsers the sweep shares; the options themselves (`o`) and a
 * run's parameters from them (fill_params).
 * Host program, above libsdr and common/ (sdr_opts, sdr_scheme, sdr_units).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdr_units.h"
#include "perf.h"

struct opts o;

/* One run's parameters: the options, with the defaults of its mode where unset. */
void fill_params(struct run_params *p, const char *mode, uint64_t size, int rel, uint16_t ec)
{
	int lat = !strcmp(mode, "lat");
	memset(p, 0, sizeof(*p));
	p->mode = mode;
	p->size = size;
	p->rel = rel;
	p->ec = rel == SDR_REL_EC ? ec : 0;
	p->window = o.window_set ? o.window : lat ? 1 : 64;
	p->iters = o.iters_set ? o.iters : lat ? 200 : 1000;
	p->warmup = o.warmup_set ? o.warmup : (p->iters / 10 ? p->iters / 10 : 1);
	p->duration = o.duration;
}

/* A scheme (--rel, a sweep's --schemes item): none, sr, auto, ec (= --ec) or
 * an EC code rs:K:M / xor:K:M, parsed by common/sdr_scheme.c; as (rel, the
 * packed EC parameters of struct sdr_qp_info::ec). */
int parse_scheme(const char *s, int *rel, uint16_t *ec, int *named_code)
{
	struct sdr_scheme sch;

	if (sdr_scheme_parse(s, 0, &o.ec, &sch))
		return -1;
	*rel = sch.rel;
	*ec = sdr_scheme_ec(&sch);
	if (named_code)
		*named_code = sch.rel == SDR_REL_EC && strcmp(s, "ec") != 0;
	return 0;
}

/* "none", "sr", "auto", or the EC code "rs:32:8" */
const char *scheme_name(int rel, uint16_t ec, char *buf, size_t len)
{
	struct sdr_scheme sch = sdr_scheme_of((unsigned)rel, ec);

	if (sdr_scheme_format(&sch, SDR_SCHEME_SPEC, buf, len) < 0)
		snprintf(buf, len, "?");
	return buf;
}

/* Split a comma list; each item is checked by the callback. */
static int split_list(const char *arg, int max, int (*cb)(const char *item, int i, void *ud),
		      void *ud)
{
	char buf[1024], *save = NULL, *tok;
	int n = 0;

	if (strlen(arg) >= sizeof(buf))
		return -1;
	strcpy(buf, arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (n == max || cb(tok, n, ud))
			return -1;
		n++;
	}
	return n ? n : -1;
}

static int cb_size(const char *s, int i, void *ud)
{
	(void)ud;
	return sdr_parse_u64(s, &o.sizes[i], 1) || o.sizes[i] == 0 || o.sizes[i] > (1ull << 30) ? -1
												: 0;
}

static int cb_loss(const char *s, int i, void *ud)
{
	char *end;
	(void)ud;
	errno = 0;
	o.loss[i] = strtod(s, &end);
	return errno || end == s || *end || !(o.loss[i] >= 0 && o.loss[i] <= 1) ? -1 : 0;
}

static int cb_scheme(const char *s, int i, void *ud)
{
	(void)ud;
	if (strlen(s) >= sizeof(o.schemes[0]))
		return -1;
	strcpy(o.schemes[i], s);
	return 0;
}

/* A refused value: the message, then -2 for sdr_opts_parse() (printed). */
static int bad_opt(const char *name, const char *arg)
{
	fprintf(stderr, "sdr-perf: bad %s '%s' (see --help)\n", name, arg ? arg : "");
	return -2;
}

/* The rig's and the daemons' options that are not typed entries (and the
 * text of --port-rate, passed through, once the typed entry has its rate). */
int perf_on_rig_opt(const struct sdr_opt *d, const char *arg, void *ctx)
{
	(void)ctx;
	switch (d->id) {
	case O_PORT_RATE: o.port_rate = arg; break;
	case O_LINK:
		if (strlen(arg) > 400 || strpbrk(arg, " \t\n"))
			return bad_opt("--link", arg);
		o.link = arg;
		break;
	case O_EAL:
		if (o.n_eal_extra == (int)(sizeof(o.eal_extra) / sizeof(o.eal_extra[0])))
			return bad_opt("--eal (at most 16)", arg);
		o.eal_extra[o.n_eal_extra++] = arg;
		break;
	case O_DPU_ARG:
		if (o.n_dpu_extra == (int)(sizeof(o.dpu_extra) / sizeof(o.dpu_extra[0])) ||
		    strncmp(arg, "--", 2))
			return bad_opt("--dpu-arg (an sdr-dpu --option=value, at most 16)", arg);
		o.dpu_extra[o.n_dpu_extra++] = arg;
		break;
	}
	return 0;
}

/* The run's schemes, and which of --iters, --warmup, --window were given
 * (their typed entries stored the values). */
int perf_on_run_opt(const struct sdr_opt *d, const char *arg, void *ctx)
{
	(void)ctx;
	switch (d->id) {
	case O_ITERS: o.iters_set = 1; break;
	case O_WARMUP: o.warmup_set = 1; break;
	case O_WINDOW: o.window_set = 1; break;
	case O_EC:
		if (sdr_scheme_parse(arg, 0, NULL, &o.ec) || o.ec.rel != SDR_REL_EC ||
		    !strncmp(arg, "ec", 2))
			return bad_opt("--ec (rs:K:M or xor:K:M, e.g. rs:32:8)", arg);
		break;
	case O_REL:
		if (parse_scheme(arg, &o.rel, &o.rel_ec, &o.rel_code))
			return bad_opt("--rel (none, sr, ec, auto or an EC code rs:K:M)", arg);
		break;
	}
	return 0;
}

/* Codec: the code; Sweep: the lists and the mode of its runs. */
int perf_on_list_opt(const struct sdr_opt *d, const char *arg, void *ctx)
{
	(void)ctx;
	switch (d->id) {
	case O_CODE:
		if (sdr_ec_code_parse(arg, &o.code))
			return bad_opt("--code (rs, xor)", arg);
		break;
	case O_SIZES:
		if ((o.nsizes = split_list(arg, MAX_LIST, cb_size, NULL)) < 0)
			return bad_opt("--sizes", arg);
		break;
	case O_LOSS:
		if ((o.nloss = split_list(arg, MAX_LIST, cb_loss, NULL)) < 0)
			return bad_opt("--loss (probabilities 0..1)", arg);
		break;
	case O_SCHEMES:
		if ((o.nschemes = split_list(arg, MAX_LIST, cb_scheme, NULL)) < 0)
			return bad_opt("--schemes", arg);
		break;
	case O_SWEEP_MODE:
		if (strcmp(arg, "bw") && strcmp(arg, "lat"))
			return bad_opt("--sweep-mode (bw, lat)", arg);
		o.sweep_mode = arg;
		break;
	}
	return 0;
}
