/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-send's and sdr-recv's shared code (host/tools/, host programs above
 * libsdr and host/apputil/): their option table and its handler, the message
 * plan (sizes, count, file mode) and its exchange over TCP, the end result's
 * exchange, and QP info on the command line or in a --qp-file.
 */
#include <errno.h>
#include <stddef.h> /* offsetof */
#include <getopt.h> /* optind */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sdr_tool.h"
#include "sdr_opts.h"
#include "sdr_units.h"

#define DEFAULT_SIZES "1,4K,64K,1M,16M,64M"
#define STR_(x) #x
#define STR(x) STR_(x)

static int parse_sizes(const char *s, struct tool_opts *o)
{
	char buf[1024], *tok, *save = NULL;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	o->nsizes = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;

		if (o->nsizes == TOOL_MAX_SIZES || sdr_parse_u64(tok, &v, 1) || v == 0 ||
		    v > UINT32_MAX)
			return -1;
		o->sizes[o->nsizes++] = v;
	}
	return o->nsizes ? 0 : -1;
}

/* ---------------- options: one table for both tools ---------------- */

enum { SEND = 1, RECV = 2 }; /* the variants of the table */

enum { O_SIZES = 1, O_REL, O_EC };

/* A refused value: its message here, and -2 (the usage follows, exit 2). */
#define BAD(...) (fprintf(stderr, __VA_ARGS__), -2)

/* What is more than one typed value: the size list, the scheme, the EC code. */
static int on_opt(const struct sdr_opt *d, const char *arg, void *ctx)
{
	struct tool_opts *o = ctx;

	switch (d->id) {
	case O_SIZES:
		if (parse_sizes(arg, o))
			return BAD("bad --sizes '%s' (1..4G each, at most %d)\n", arg,
				   TOOL_MAX_SIZES);
		break;
	case O_REL: {
		static const struct sdr_scheme ec_default = SDR_SCHEME_EC_DEFAULT;
		struct sdr_scheme sch;

		if (sdr_scheme_parse(arg, 0, &ec_default, &sch))
			return BAD("bad --rel '%s' (none, sr, ec, auto, or an EC code rs:K:M /"
				   " xor:K:M)\n",
				   arg);
		o->rel = sch.rel;
		if (sch.rel == SDR_REL_EC && strcmp(arg, "ec")) {
			o->ec = sdr_scheme_ec(&sch); /* --rel rs:8:2 = --rel ec --ec rs:8:2 */
			o->ec_in_rel = 1;
		}
		o->rel_set = 1;
		break;
	}
	case O_EC: {
		unsigned code, k, m;

		if (sdr_ec_param_parse(arg, &code, &k, &m))
			return BAD("bad --ec '%s' (rs:K:M or xor:K:M, 1 <= K <= 64, 1 <= M <= 32,"
				   " xor M <= K)\n",
				   arg);
		o->ec = sdr_ec_param_pack(code, k, m);
		o->ec_set = 1;
		break;
	}
	}
	return 0;
}

/* A typed entry's target in struct tool_opts (the parse context). */
#define OFF(field) .off = offsetof(struct tool_opts, field)

static const struct sdr_opt opts[] = {
	SDR_OPT_SECTION("Daemon:"),
	{.name = "dpu",
	 .arg = "PATH",
	 .kind = SDR_OPT_STRING,
	 OFF(dpu),
	 .dflt = SDR_DEFAULT_SOCKET,
	 .help = "sdr-dpu control socket"},
	SDR_OPT_SECTION("QP info exchange, either TCP bootstrap (perftest style):"),
	{.name = "connect",
	 .arg = "HOST[:PORT]",
	 .kind = SDR_OPT_STRING,
	 OFF(connect),
	 .only = SEND,
	 .help = "connect to 'sdr-recv --server' (port default --port;\n"
		 "retried until --timeout)"},
	{.name = "port",
	 .arg = "P",
	 .kind = SDR_OPT_U32,
	 .min = 1,
	 .max = 65535,
	 OFF(port),
	 .only = SEND,
	 .dflt = STR(TOOL_DEFAULT_PORT),
	 .help = "default port for --connect"},
	{.name = "server",
	 .kind = SDR_OPT_BOOL,
	 OFF(server),
	 .only = RECV,
	 .help = "wait for one sdr-send on TCP; the sender's plan then\n"
		 "sets sizes, count, seed, max-msg and file mode"},
	{.name = "port",
	 .arg = "P",
	 .kind = SDR_OPT_U32,
	 .min = 1,
	 .max = 65535,
	 OFF(port),
	 .only = RECV,
	 .dflt = STR(TOOL_DEFAULT_PORT),
	 .help = "TCP port"},
	{.name = "bind",
	 .arg = "ADDR",
	 .kind = SDR_OPT_STRING,
	 OFF(bind),
	 .only = RECV,
	 .dflt = "0.0.0.0",
	 .help = "listen address"},
	SDR_OPT_SECTION("or command line (no TCP; give both sides the same"
			" --sizes/--count/--seed):"),
	{.name = "local-qpn",
	 .arg = "N",
	 .kind = SDR_OPT_U32,
	 .max = 0xFFFFFF,
	 OFF(local_qpn),
	 .help = "request this QPN block base at QP create"},
	{.name = "local-rkey",
	 .arg = "K",
	 .kind = SDR_OPT_U32,
	 OFF(local_rkey),
	 .help = "request this R_Key at QP create"},
	{.name = "peer",
	 .arg = "TEXT|@FILE",
	 .kind = SDR_OPT_STRING,
	 OFF(peer),
	 .help = "peer QP info (text form, e.g. from its QPINFO line);\n"
		 "@FILE waits up to --timeout for the file to appear"},
	SDR_OPT_SECTION("Either mode:"),
	{.name = "print-qp",
	 .kind = SDR_OPT_BOOL,
	 OFF(print_qp),
	 .help = "print 'QPINFO <text>' with our own QP info"},
	{.name = "qp-file",
	 .arg = "F",
	 .kind = SDR_OPT_STRING,
	 OFF(qp_file),
	 .help = "write our QP info text to F"},
	SDR_OPT_SECTION("Messages:"),
	{.name = "sizes",
	 .arg = "LIST",
	 .fn = on_opt,
	 .id = O_SIZES,
	 .dflt = DEFAULT_SIZES,
	 .help = "comma list with K/M/G suffixes"},
	{.name = "count",
	 .arg = "N",
	 .kind = SDR_OPT_U32,
	 .min = 1,
	 OFF(count),
	 .dflt = "1",
	 .help = "repeat the size list N times"},
	{.name = "seed",
	 .arg = "S",
	 .kind = SDR_OPT_U64,
	 OFF(seed),
	 .dflt = "1",
	 .help = "pattern seed"},
	{.name = "no-imm",
	 .kind = SDR_OPT_BOOL,
	 OFF(no_imm),
	 .help = "messages without immediate (immediate 0; by default\n"
		 "message n carries n): one packet per MTU, no\n"
		 "immediate-only packets; the receiver expects 0 (with\n"
		 "--server it learns it from the sender)"},
	{.name = "max-msg",
	 .arg = "BYTES",
	 .kind = SDR_OPT_SIZE32,
	 .min = 1,
	 OFF(max_msg),
	 .help = "QP max message (default: largest size rounded up to\n"
		 "1 MiB; in file mode the daemon default)"},
	{.name = "chunk-pkts",
	 .arg = "N",
	 .kind = SDR_OPT_U32,
	 .min = 1,
	 OFF(chunk_pkts),
	 .help = "packets per bitmap chunk (default: daemon default)"},
	{.name = "channels",
	 .arg = "N",
	 .kind = SDR_OPT_U32,
	 .min = 1,
	 .max = SDR_CHANNELS_MAX,
	 OFF(channels),
	 .help = "one QP served by N DPU workers (default $SDR_CHANNELS,\n"
		 "else 1; both ends give the same N; TCP bootstrap only;\n"
		 "docs/architecture.md \"Channels\")"},
	{.name = "stripe-chunks",
	 .arg = "N",
	 .kind = SDR_OPT_U32,
	 .min = 1,
	 .max = 255,
	 OFF(stripe_chunks),
	 .help = "with --channels: stripe size in chunks (default 1)"},
	{.name = "window",
	 .arg = "N",
	 .kind = SDR_OPT_U32,
	 .min = 1,
	 .max = 1024,
	 OFF(window),
	 .dflt = "8",
	 .help = "messages in flight"},
	{.name = "rate",
	 .arg = "RATE",
	 .kind = SDR_OPT_RATE,
	 OFF(rate_bps),
	 .only = SEND,
	 .help = "pace this QP's sends (bit/s: 200m, 1.5gbit; default\n"
		 "unpaced; the daemon's --port-rate still applies)"},
	{.name = "rel",
	 .arg = "none|sr|ec|auto",
	 .fn = on_opt,
	 .id = O_REL,
	 .dflt = "none",
	 .help = "reliability of the QP: none (raw SDR), sr (Selective\n"
		 "Repeat on the DPU), ec (erasure coding with SR\n"
		 "fallback; an EC code rs:K:M / xor:K:M here is --rel ec\n"
		 "--ec CODE:K:M) or auto (the DPU picks SR or an EC code\n"
		 "per message from the measured RTT and loss, daemon\n"
		 "--auto-schemes); with TCP the sender's choice is sent in\n"
		 "the plan, without TCP give both sides the same"},
	{.name = "ec",
	 .arg = "CODE:K:M",
	 .fn = on_opt,
	 .id = O_EC,
	 .dflt = SDR_SCHEME_EC_DEFAULT_SPEC,
	 .help = "with --rel ec: rs:K:M (Reed-Solomon) or xor:K:M, K data\n"
		 "and M parity chunks per submessage, 1 <= K <= 64,\n"
		 "1 <= M <= 32"},
	{.name = "timeout",
	 .arg = "SEC",
	 .kind = SDR_OPT_DOUBLE,
	 .fmin = 0,
	 .fmax = 1e6,
	 .flags = SDR_OPTF_GT_MIN,
	 OFF(timeout),
	 .dflt = "10",
	 .help = "give up when nothing completes for SEC seconds,\n"
		 "report pending messages and partial bitmaps, exit 1"},
	{.name = "file",
	 .arg = "F",
	 .kind = SDR_OPT_STRING,
	 OFF(file),
	 .only = SEND,
	 .help = "send file F in messages of max_msg bytes; the plan\n"
		 "tells the receiver the file size (TCP mode)"},
	{.name = "out",
	 .arg = "F",
	 .kind = SDR_OPT_STRING,
	 OFF(out),
	 .only = RECV,
	 .help = "file mode: write the received file to F instead of\n"
		 "verifying a pattern"},
	{.name = "file-size",
	 .arg = "BYTES",
	 .kind = SDR_OPT_SIZE,
	 .min = 1,
	 OFF(file_size),
	 .only = RECV,
	 .help = "file mode without TCP: the size of the sender's file\n"
		 "(with the same --max-msg as the sender)"},
	{.name = "guard",
	 .kind = SDR_OPT_BOOL,
	 OFF(guard),
	 .only = RECV,
	 .help = "fill each buffer slot past its message with a guard\n"
		 "byte before the receive is posted, and fail a message\n"
		 "whose guard bytes changed (a write outside the posted\n"
		 "buffer)"},
	{.name = NULL,
	 .only = SEND,
	 .help = "Output: one line per completed message (a first line starting with '#' names\n"
		 "the columns): index, size, status,\n"
		 "  time = ms since this tool's first post (the same in sdr-send and sdr-recv),\n"
		 "  Gbit/s over the interval since the previous completion,\n"
		 "  completion = ms from this send's post to its completion;\n"
		 "then a summary."},
	{.name = NULL,
	 .only = RECV,
	 .help = "Output: one line per completed message (a first line starting with '#' names\n"
		 "the columns): index, size, status, chunks set/total,\n"
		 "  time = ms since this tool's first post (the same in sdr-send and sdr-recv),\n"
		 "  Gbit/s over the interval since the previous completion;\n"
		 "then a summary."},
	{.name = "json",
	 .kind = SDR_OPT_BOOL,
	 OFF(json),
	 .only = SEND,
	 .help = "one JSON object per line instead (\"t_ms\": time, \"ct_ms\":\n"
		 "completion, \"t_mono_s\": CLOCK_MONOTONIC seconds of the\n"
		 "completion), then the summary"},
	{.name = "json",
	 .kind = SDR_OPT_BOOL,
	 OFF(json),
	 .only = RECV,
	 .help = "one JSON object per line instead (\"t_ms\": time,\n"
		 "\"t_mono_s\": CLOCK_MONOTONIC seconds of the completion),\n"
		 "then the summary"},
	{.name = "quiet", .kind = SDR_OPT_BOOL, OFF(quiet), .help = "summary only"},
	{.name = "help", .help = "this text"},
	SDR_OPT_END,
};

static const struct sdr_opts send_opts = {
	.prog = "sdr-send",
	.usage = "Usage: sdr-send [options]\n"
		 "Send pattern messages (or a file) through libsdr to sdr-recv.\n\n",
	.footer = "Exit status: 0 only if every message completed without error (and, with TCP,"
		  " the\n"
		  "             receiver verified every message).\n",
	.opt = opts,
	.variant = SEND,
};

static const struct sdr_opts recv_opts = {
	.prog = "sdr-recv",
	.usage = "Usage: sdr-recv [options]\n"
		 "Receive messages through libsdr, verify them, report bitmaps.\n\n",
	.footer = "Exit status: 0 only if every message arrived complete and verified.\n",
	.opt = opts,
	.variant = RECV,
};

void tool_parse(struct tool_opts *o, int argc, char **argv)
{
	const struct sdr_opts *set = o->is_sender ? &send_opts : &recv_opts;
	int bad = 0, first;

	o->dpu = SDR_DEFAULT_SOCKET;
	o->port = TOOL_DEFAULT_PORT;
	o->count = 1;
	o->seed = 1;
	o->window = 8;
	o->timeout = 10;
	parse_sizes(DEFAULT_SIZES, o);
	first = sdr_opts_parse(set, argc, argv, o);
	if (first == SDR_OPTS_HELP)
		exit(0);
	if (first < 0)
		bad = 1;
	else
		optind = first;
	if (optind < argc)
		bad = fprintf(stderr, "unexpected argument '%s'\n", argv[optind]);
	if (!bad) {
		int tcp = o->server || o->connect;

		if (tcp && o->peer)
			bad = fprintf(stderr, "--peer is for command-line mode, not with TCP\n");
		else if (!tcp && !o->peer && !o->print_qp && !o->qp_file)
			bad = fprintf(stderr, "need %s or --peer (see --help)\n",
				      o->is_sender ? "--connect" : "--server");
		else if (!o->is_sender && o->out && !tcp && !o->file_size)
			bad = fprintf(stderr, "--out without TCP needs --file-size\n");
		else if (!o->is_sender && o->file_size && !o->out)
			bad = fprintf(stderr, "--file-size needs --out\n");
	}
	if (!bad && !o->channels && (o->server || o->connect) && getenv("SDR_CHANNELS")) {
		/* the default of --channels (the torch backend reads it too) */
		const char *e = getenv("SDR_CHANNELS");
		uint64_t w;

		if (sdr_parse_u64(e, &w, 0) || w < 1 || w > SDR_CHANNELS_MAX)
			bad = fprintf(stderr, "SDR_CHANNELS='%s': want 1..%u\n", e,
				      SDR_CHANNELS_MAX);
		else
			o->channels = (uint32_t)w;
	}
	if (!bad && o->rel_set && o->server)
		bad = fprintf(stderr, "--rel comes from the sender's plan with --server\n");
	if (!bad && o->ec_set && o->server)
		bad = fprintf(stderr, "--ec comes from the sender's plan with --server\n");
	if (!bad && o->ec_set && o->rel != SDR_REL_EC)
		bad = fprintf(stderr, "--ec needs --rel ec\n");
	if (!bad && o->ec_set && o->ec_in_rel)
		bad = fprintf(stderr, "--rel names the EC code already: no --ec\n");
	if (!bad && o->rel == SDR_REL_EC && !o->ec_set && !o->ec_in_rel) {
		static const struct sdr_scheme ec_default = SDR_SCHEME_EC_DEFAULT;

		o->ec = sdr_scheme_ec(&ec_default);
	}
	if (bad) {
		sdr_opts_usage(set, stderr);
		exit(2);
	}
}

/* ---------------- plan ---------------- */

int tool_plan_from_opts(const struct tool_opts *o, struct tool_plan *p, uint64_t file_size,
			uint32_t msg_size)
{
	memset(p, 0, sizeof(*p));
	p->seed = o->seed;
	p->max_msg = o->max_msg;
	p->chunk_pkts = o->chunk_pkts;
	p->rel = o->rel;
	p->ec = o->rel == SDR_REL_EC ? o->ec : 0;
	p->no_imm = o->no_imm != 0;
	if (file_size) {
		p->file_mode = 1;
		p->file_size = file_size;
		p->count = 1;
		p->nsizes = 1;
		p->sizes[0] = msg_size;
		p->max_msg = msg_size;
		return 0;
	}
	p->count = o->count;
	p->nsizes = o->nsizes;
	memcpy(p->sizes, o->sizes, sizeof(p->sizes));
	if (p->max_msg == 0)
		p->max_msg = tool_plan_default_max_msg(p);
	for (uint32_t i = 0; i < p->nsizes; i++)
		if (p->sizes[i] > p->max_msg) {
			fprintf(stderr, "size %llu exceeds --max-msg %u\n",
				(unsigned long long)p->sizes[i], p->max_msg);
			return -1;
		}
	return 0;
}

uint64_t tool_plan_messages(const struct tool_plan *p)
{
	if (p->file_mode)
		return (p->file_size + p->sizes[0] - 1) / p->sizes[0];
	return (uint64_t)p->count * p->nsizes;
}

uint64_t tool_plan_size(const struct tool_plan *p, uint64_t i)
{
	if (p->file_mode) {
		uint64_t off = i * p->sizes[0];

		return p->file_size - off < p->sizes[0] ? p->file_size - off : p->sizes[0];
	}
	return p->sizes[i % p->nsizes];
}

uint64_t tool_plan_max_size(const struct tool_plan *p)
{
	uint64_t m = 0;

	for (uint32_t i = 0; i < p->nsizes; i++)
		if (p->sizes[i] > m)
			m = p->sizes[i];
	if (p->file_mode && p->file_size < m)
		m = p->file_size;
	return m;
}

uint32_t tool_plan_default_max_msg(const struct tool_plan *p)
{
	uint64_t m = tool_plan_max_size(p), mib = 1u << 20;

	m = (m + mib - 1) / mib * mib;
	return m > UINT32_MAX ? UINT32_MAX : (uint32_t)m;
}

/* ---------------- TCP bootstrap ---------------- */

int tool_tcp_listen_accept(const struct tool_opts *o)
{
	char why[160];
	int s;

	if (!o->quiet && !o->json)
		fprintf(stderr, "waiting for sdr-send on port %u\n", o->port);
	s = app_tcp_accept_one(o->bind, o->port, 0, why, sizeof(why));
	if (s < 0)
		fprintf(stderr, "--bind/--port: %s\n", why);
	return s < 0 ? -1 : s;
}

int tool_tcp_connect(const struct tool_opts *o)
{
	char why[300];
	int s = app_tcp_connect(o->connect, o->port, o->timeout, why, sizeof(why));

	if (s < 0)
		fprintf(stderr, "--connect: %s\n", why);
	return s < 0 ? -1 : s;
}

static void put_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (24 - 8 * i));
}
static void put_u64(uint8_t *p, uint64_t v)
{
	put_u32(p, (uint32_t)(v >> 32));
	put_u32(p + 4, (uint32_t)v);
}
static uint32_t get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static uint64_t get_u64(const uint8_t *p)
{
	return (uint64_t)get_u32(p) << 32 | get_u32(p + 4);
}

/* plan: "SDRP" ver count nsizes seed(8) max_msg chunk_pkts flags
 *       file_size(8) sizes[64](8 each) rel; big-endian (version 2 added rel;
 *       its upper 16 bits carry the EC parameters, sdr_ec_param_pack).
 *       flags: bit 0 file mode, bit 1 no immediate (--no-imm; a receiver
 *       that knows only bit 0 refuses the plan) */
#define PLAN_MAGIC 0x53445250u
#define PLAN_VERSION 2
#define PLAN_LEN (48 + 8 * TOOL_MAX_SIZES)

int tool_send_plan(int fd, const struct tool_plan *p)
{
	uint8_t b[PLAN_LEN];

	memset(b, 0, sizeof(b));
	put_u32(b, PLAN_MAGIC);
	put_u32(b + 4, PLAN_VERSION);
	put_u32(b + 8, p->count);
	put_u32(b + 12, p->nsizes);
	put_u64(b + 16, p->seed);
	put_u32(b + 24, p->max_msg);
	put_u32(b + 28, p->chunk_pkts);
	put_u32(b + 32, p->file_mode | p->no_imm << 1);
	put_u64(b + 36, p->file_size);
	for (int i = 0; i < TOOL_MAX_SIZES; i++)
		put_u64(b + 44 + 8 * i, p->sizes[i]);
	put_u32(b + 44 + 8 * TOOL_MAX_SIZES, p->rel | (uint32_t)p->ec << 16);
	return app_write_full(fd, b, sizeof(b));
}

int tool_recv_plan(int fd, struct tool_plan *p)
{
	uint8_t b[PLAN_LEN];

	if (app_read_full(fd, b, sizeof(b)))
		return -1;
	memset(p, 0, sizeof(*p));
	if (get_u32(b) != PLAN_MAGIC || get_u32(b + 4) != PLAN_VERSION)
		return -1;
	p->rel = get_u32(b + 44 + 8 * TOOL_MAX_SIZES);
	p->ec = (uint16_t)(p->rel >> 16);
	p->rel &= 0xFFFF;
	if (sdr_scheme_unpack(p->rel, p->ec, NULL))
		return -1;
	p->count = get_u32(b + 8);
	p->nsizes = get_u32(b + 12);
	p->seed = get_u64(b + 16);
	p->max_msg = get_u32(b + 24);
	p->chunk_pkts = get_u32(b + 28);
	p->file_mode = get_u32(b + 32);
	p->no_imm = (p->file_mode >> 1) & 1;
	p->file_size = get_u64(b + 36);
	if (p->nsizes == 0 || p->nsizes > TOOL_MAX_SIZES || p->count == 0 || p->max_msg == 0 ||
	    p->file_mode > 3 || ((p->file_mode & 1) && (p->file_size == 0 || p->nsizes != 1)))
		return -1;
	p->file_mode &= 1;
	for (uint32_t i = 0; i < p->nsizes; i++) {
		p->sizes[i] = get_u64(b + 44 + 8 * i);
		if (p->sizes[i] == 0 || p->sizes[i] > p->max_msg)
			return -1;
	}
	return 0;
}

int tool_send_result(int fd, const struct tool_result *r)
{
	uint8_t b[36];

	put_u32(b, 0x53445252u); /* "SDRR" */
	put_u64(b + 4, r->ok);
	put_u64(b + 12, r->failed);
	put_u64(b + 20, r->bytes);
	put_u64(b + 28, r->elapsed_ns);
	return app_write_full(fd, b, sizeof(b));
}

int tool_recv_result(int fd, struct tool_result *r)
{
	uint8_t b[36];

	if (app_read_full(fd, b, sizeof(b)) || get_u32(b) != 0x53445252u)
		return -1;
	r->ok = get_u64(b + 4);
	r->failed = get_u64(b + 12);
	r->bytes = get_u64(b + 20);
	r->elapsed_ns = get_u64(b + 28);
	return 0;
}

/* ---------------- command-line exchange ---------------- */

struct sdr_qp *tool_qp_create(struct sdr_ctx *ctx, const struct tool_opts *o,
			      const struct sdr_qp_attr *a)
{
	struct sdr_qp_attr_ext x = {.size = sizeof(x),
				    .channels = o->channels ? o->channels : 1,
				    .stripe_chunks = o->stripe_chunks,
				    .attr = *a};
	struct sdr_qp *qp = x.channels > 1 ? sdr_qp_create_ext(ctx, &x) : sdr_qp_create(ctx, a);

	if (qp == NULL)
		fprintf(stderr, "sdr_qp_create: %s (%s)\n", strerror(errno), sdr_last_error(ctx));
	else if (x.channels > 1 && o->peer) {
		fprintf(stderr, "--channels %u needs the TCP bootstrap (--connect / --server)\n",
			x.channels);
		return NULL;
	}
	return qp;
}

int tool_send_infos(int fd, const struct sdr_qp_info *i, unsigned n)
{
	for (unsigned c = 0; c < n; c++)
		if (app_send_qp_info(fd, &i[c]))
			return -1;
	return 0;
}

int tool_recv_infos(int fd, struct sdr_qp_info *i, unsigned n)
{
	for (unsigned c = 0; c < n; c++)
		if (app_recv_qp_info(fd, &i[c]))
			return -1;
	return 0;
}

int tool_qp_connect(struct sdr_ctx *ctx, struct sdr_qp *qp, const struct sdr_qp_info *remote,
		    unsigned n)
{
	int rc;

	if (n <= 1)
		return app_qp_connect(ctx, qp, remote);
	rc = sdr_qp_connect_infos(qp, remote, n);
	if (rc)
		fprintf(stderr, "sdr_qp_connect_infos: %s (%s)\n", sdr_strerror(rc),
			sdr_last_error(ctx));
	return rc ? -1 : 0;
}

int tool_publish_qp(const struct tool_opts *o, const struct sdr_qp_info *info)
{
	char txt[256];

	if (sdr_qp_info_format(info, txt, sizeof(txt)) < 0)
		return -1;
	if (o->print_qp) {
		printf("QPINFO %s\n", txt);
		fflush(stdout);
	}
	if (o->qp_file) {
		/* write then rename, so a reader never sees half a line */
		char tmp[4096];
		FILE *f;

		snprintf(tmp, sizeof(tmp), "%s.tmp.%d", o->qp_file, (int)getpid());
		f = fopen(tmp, "w");
		if (f == NULL || fprintf(f, "%s\n", txt) < 0 || fclose(f) != 0 ||
		    rename(tmp, o->qp_file) != 0) {
			fprintf(stderr, "cannot write %s: %s\n", o->qp_file, strerror(errno));
			return -1;
		}
	}
	return 0;
}

int tool_peer_from_opts(const struct tool_opts *o, struct sdr_qp_info *info)
{
	char line[512];

	if (o->peer[0] != '@') {
		if (sdr_qp_info_parse(o->peer, info)) {
			fprintf(stderr, "malformed --peer '%s'\n", o->peer);
			return -1;
		}
		return 0;
	}
	double deadline = app_now() + o->timeout;
	for (;;) {
		FILE *f = fopen(o->peer + 1, "r");

		if (f) {
			char *ok = fgets(line, sizeof(line), f);

			fclose(f);
			if (ok) {
				line[strcspn(line, "\r\n")] = '\0';
				if (sdr_qp_info_parse(line, info) == 0)
					return 0;
				fprintf(stderr, "malformed QP info in %s\n", o->peer + 1);
				return -1;
			}
		}
		if (app_now() > deadline) {
			fprintf(stderr, "timed out waiting for %s\n", o->peer + 1);
			return -1;
		}
		usleep(50000);
	}
}
