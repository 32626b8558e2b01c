/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-perf's option values: each option's check and where it lands in the
 * options (struct opts), the scheme and list parsers the sweep shares.
 * Host program, above libsdr and common/ (sdr_opts, sdr_scheme, sdr_units).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdr_units.h"
#include "perf.h"

static int parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
	uint64_t v;

	if (sdr_parse_u64(s, &v, 1) || v < lo || v > hi)
		return -1;
	*out = (uint32_t)v;
	return 0;
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
	return sdr_parse_u64(s, &o.sizes[i], 1) || o.sizes[i] == 0 || o.sizes[i] > (1ull << 30) ? -1 : 0;
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

/* Rig: and Passed to the daemons: (the sdr_opt handler of those sections). */
int perf_on_rig_opt(const struct sdr_opt *d, const char *arg, void *ctx)
{
	(void)ctx;
	switch (d->id) {
	case O_RIG:
		if (!strcmp(arg, "ring"))
			o.rig = RIG_RING;
		else if (!strcmp(arg, "veth"))
			o.rig = RIG_VETH;
		else if (!strcmp(arg, "attach"))
			o.rig = RIG_ATTACH;
		else
			return bad_opt("--rig", arg);
		break;
	case O_DPU_A: o.dpu_a = arg; break;
	case O_DPU_B: o.dpu_b = arg; break;
	case O_DPU_BIN: o.dpu_bin = arg; break;
	case O_KEEP_LOGS: o.keep_logs = 1; break;
	case O_WORKERS:
		if (parse_u32(arg, 1, 64, &o.workers))
			return bad_opt("--workers", arg);
		break;
	case O_MTU:
		if (parse_u32(arg, 1024, 4096, &o.mtu) ||
		    (o.mtu != 1024 && o.mtu != 2048 && o.mtu != 4096))
			return bad_opt("--mtu (1024, 2048, 4096)", arg);
		break;
	case O_CHUNK_PKTS:
		if (parse_u32(arg, 1, 1024, &o.chunk_pkts))
			return bad_opt("--chunk-pkts", arg);
		break;
	case O_PORT_RATE:
		if (sdr_parse_rate(arg, &o.port_rate_bps))
			return bad_opt("--port-rate", arg);
		o.port_rate = arg;
		break;
	case O_LINK:
		if (strlen(arg) > 400 || strpbrk(arg, " \t\n"))
			return bad_opt("--link", arg);
		o.link = arg;
		break;
	case O_NO_ICRC: o.no_icrc = 1; break;
	case O_BUSY: o.busy_poll = 1; break;
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

/* Run: the engine's options. */
int perf_on_run_opt(const struct sdr_opt *d, const char *arg, void *ctx)
{
	char *end;

	(void)ctx;
	switch (d->id) {
	case O_SIZE:
		if (sdr_parse_u64(arg, &o.size, 1) || o.size == 0 || o.size > (1ull << 30))
			return bad_opt("--size (1 B .. 1 GiB)", arg);
		break;
	case O_ITERS:
		if (sdr_parse_u64(arg, &o.iters, 1) || o.iters == 0 || o.iters > (1ull << 32))
			return bad_opt("--iters", arg);
		o.iters_set = 1;
		break;
	case O_WARMUP:
		if (sdr_parse_u64(arg, &o.warmup, 1) || o.warmup > (1ull << 32))
			return bad_opt("--warmup", arg);
		o.warmup_set = 1;
		break;
	case O_WINDOW:
		if (parse_u32(arg, 1, 1024, &o.window))
			return bad_opt("--window (1..1024)", arg);
		o.window_set = 1;
		break;
	case O_DURATION:
		errno = 0;
		o.duration = strtod(arg, &end);
		if (errno || *end || !(o.duration > 0 && o.duration <= 3600))
			return bad_opt("--duration", arg);
		break;
	case O_EC:
		if (sdr_scheme_parse(arg, 0, NULL, &o.ec) || o.ec.rel != SDR_REL_EC ||
		    !strncmp(arg, "ec", 2))
			return bad_opt("--ec (rs:K:M or xor:K:M, e.g. rs:32:8)", arg);
		break;
	case O_REL:
		if (parse_scheme(arg, &o.rel, &o.rel_ec, &o.rel_code))
			return bad_opt("--rel (none, sr, ec, auto or an EC code rs:K:M)", arg);
		break;
	case O_RATE:
		if (sdr_parse_rate(arg, &o.rate_bps))
			return bad_opt("--rate", arg);
		break;
	case O_QPS:
		if (parse_u32(arg, 1, MAX_QPS, &o.qps))
			return bad_opt("--qps (1..1024)", arg);
		break;
	case O_GAP:
		errno = 0;
		o.gap_us = strtod(arg, &end);
		if (errno || *end || end == arg || !(o.gap_us >= 0 && o.gap_us <= 10e6))
			return bad_opt("--gap-us (0 .. 10 s)", arg);
		break;
	case O_IMM: {
		uint64_t v;
		if (sdr_parse_u64(arg, &v, 0) || v > UINT32_MAX)
			return bad_opt("--imm (0 .. 0xffffffff)", arg);
		o.imm = (uint32_t)v;
		break;
	}
	case O_JSON_ONLY: o.json_only = 1; break;
	case O_TIMEOUT:
		errno = 0;
		o.timeout = strtod(arg, &end);
		if (errno || *end || !(o.timeout > 0 && o.timeout <= 3600))
			return bad_opt("--timeout", arg);
		break;
	case O_RTIMEOUT:
		errno = 0;
		o.recv_timeout_ms = strtod(arg, &end);
		if (errno || *end || !(o.recv_timeout_ms >= 0 && o.recv_timeout_ms <= 3600e3))
			return bad_opt("--recv-timeout-ms", arg);
		break;
	}
	return 0;
}

/* Codec: and Sweep: (codec parameters, sweep lists). */
int perf_on_list_opt(const struct sdr_opt *d, const char *arg, void *ctx)
{
	(void)ctx;
	switch (d->id) {
	case O_CODE:
		if (sdr_ec_code_parse(arg, &o.code))
			return bad_opt("--code (rs, xor)", arg);
		break;
	case O_K:
		if (parse_u32(arg, 1, 254, &o.k))
			return bad_opt("--k", arg);
		break;
	case O_M:
		if (parse_u32(arg, 1, 254, &o.m))
			return bad_opt("--m", arg);
		break;
	case O_CHUNK:
		if (sdr_parse_u64(arg, &o.chunk, 1) || o.chunk == 0 || o.chunk > (64u << 20))
			return bad_opt("--chunk (1 B .. 64 MiB)", arg);
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
