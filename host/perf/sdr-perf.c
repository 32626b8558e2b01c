/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-perf: testpmd / ib_write_bw style benchmark of sdr-dpu.
 *
 * One host process drives both ends through libsdr: a context on DPU "a"
 * (sender) and one on DPU "b" (receiver), polled by the same thread, so the
 * sender's post time and the receiver's completion time are read from the
 * same clock. The rig is either started here (one sdr-dpu process with a
 * net_ring pair, or two daemons in two network namespaces over veth +
 * net_af_packet) or attached to (two running daemons).
 *
 * Modes: bw, lat (one engine, different defaults), codec (ISA-L / XOR
 * erasure codec through common/sdr_ec.h), sweep (lists of sizes, loss
 * rates, reliability schemes). Every run prints a human block (unless
 * --json-only) and exactly one JSON line; the keys are documented in
 * docs/benchmarks.md.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sdr_units.h"
#include "sdr.h"
#include "sdr_ec.h"
#include "sdr_opts.h"
#include "sdr_wire.h"

#define MAX_LIST 32
#define TS_RING 1024u          /* >= messages outstanding (all QPs, each direction) */
#define MAX_QPS 1024           /* --qps: QP pairs (a daemon instance holds 1024) */
#define MAX_CTXS 16            /* contexts per side (one per worker, at most) */
#define PACE_TRACE 1048576     /* --pace-trace of the daemons when pacing is measured */
#define MAX_LAT_SAMPLES (4u << 20)
#define MAX_WINDOWS 64

/* ------------------------------------------------------------------ */
/* options                                                             */

enum rig_kind { RIG_RING, RIG_VETH, RIG_ATTACH };
static const char *const rig_names[] = {"ring", "veth", "attach"};
static const char *const rig_pmds[] = {"net_ring", "net_af_packet", "unknown"};

struct opts {
	const char *mode;
	enum rig_kind rig;
	const char *dpu_a, *dpu_b, *dpu_bin;
	uint64_t size;
	uint64_t iters, warmup;
	int iters_set, warmup_set, window_set;
	uint32_t window;
	double duration;          /* s; 0 = use iters */
	int rel;                  /* enum sdr_reliability */
	uint16_t rel_ec;          /* rel EC: its code (--rel CODE or --ec), packed */
	int rel_code;             /* --rel named the EC code */
	struct sdr_scheme ec;     /* --ec (default SDR_SCHEME_EC_DEFAULT) */
	uint32_t chunk_pkts, mtu, workers;
	const char *port_rate;    /* passed through */
	uint64_t port_rate_bps;
	uint64_t rate_bps;        /* --rate: each sending QP's rate_bps */
	uint32_t qps;             /* --qps: QP pairs */
	double gap_us;            /* --gap-us: on/off traffic, idle time of a QP */
	uint32_t imm;             /* --imm: every send's user immediate */
	const char *link;
	int no_icrc;
	int busy_poll;
	const char *eal_extra[16];
	int n_eal_extra;
	const char *dpu_extra[16];
	int n_dpu_extra;
	int json_only;
	double timeout;           /* s without progress before a run fails */
	double recv_timeout_ms;   /* NONE: complete a stuck receive partially */
	uint32_t recv_ahead;
	uint64_t buf_budget;
	/* codec */
	enum sdr_ec_code code;
	uint32_t k, m;
	uint64_t chunk;
	/* sweep */
	uint64_t sizes[MAX_LIST];
	int nsizes;
	double loss[MAX_LIST];
	int nloss;
	char schemes[MAX_LIST][16];
	int nschemes;
	const char *sweep_mode;
	int keep_logs;
};

static struct opts o;
static volatile sig_atomic_t g_stop;

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
static int parse_scheme(const char *s, int *rel, uint16_t *ec, int *named_code)
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
static const char *scheme_name(int rel, uint16_t ec, char *buf, size_t len)
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

enum {
	O_RIG = 1, O_DPU_A, O_DPU_B, O_DPU_BIN, O_SIZE, O_ITERS, O_WARMUP, O_WINDOW, O_DURATION,
	O_REL, O_EC, O_CHUNK_PKTS, O_MTU, O_WORKERS, O_PORT_RATE, O_RATE, O_LINK, O_NO_ICRC, O_BUSY,
	O_EAL, O_JSON_ONLY, O_TIMEOUT, O_RTIMEOUT, O_CODE, O_K, O_M, O_CHUNK, O_SIZES, O_LOSS,
	O_SCHEMES, O_SWEEP_MODE, O_KEEP_LOGS, O_DPU_ARG, O_QPS, O_GAP, O_IMM,
};

static int on_opt(const struct sdr_opt *d, const char *arg, void *ctx)
{
	char *end;

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
	case O_CHUNK_PKTS:
		if (parse_u32(arg, 1, 1024, &o.chunk_pkts))
			return bad_opt("--chunk-pkts", arg);
		break;
	case O_MTU:
		if (parse_u32(arg, 1024, 4096, &o.mtu) ||
		    (o.mtu != 1024 && o.mtu != 2048 && o.mtu != 4096))
			return bad_opt("--mtu (1024, 2048, 4096)", arg);
		break;
	case O_WORKERS:
		if (parse_u32(arg, 1, 64, &o.workers))
			return bad_opt("--workers", arg);
		break;
	case O_PORT_RATE:
		if (sdr_parse_rate(arg, &o.port_rate_bps))
			return bad_opt("--port-rate", arg);
		o.port_rate = arg;
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
	case O_KEEP_LOGS: o.keep_logs = 1; break;
	}
	return 0;
}

static const struct sdr_opt opts[] = {
	SDR_OPT_SECTION("Rig:"),
	{.name = "rig", .arg = "ring|veth|attach", .fn = on_opt, .id = O_RIG, .dflt = "ring",
	 .help = "ring: one sdr-dpu with --ring-pair and two instances;\n"
		 "veth (root): two sdr-dpu in two network namespaces\n"
		 "joined by veth, net_af_packet (paced at --port-rate,\n"
		 "default 1g), set up by hw/x86/rig.sh ($SDR_RIG, else\n"
		 "the source tree's, else share/sdr-dpu/rig.sh);\n"
		 "attach: daemons already running (--dpu-a, --dpu-b)"},
	{.name = "dpu-a", .arg = "SOCK", .fn = on_opt, .id = O_DPU_A,
	 .help = "--rig attach: the sending daemon's socket"},
	{.name = "dpu-b", .arg = "SOCK", .fn = on_opt, .id = O_DPU_B,
	 .help = "--rig attach: the receiving daemon's socket"},
	{.name = "dpu-bin", .arg = "PATH", .fn = on_opt, .id = O_DPU_BIN,
	 .help = "sdr-dpu binary (default: $SDR_DPU, the build tree next to\n"
		 "this binary, the same directory, then PATH)"},
	{.name = "keep-logs", .fn = on_opt, .id = O_KEEP_LOGS,
	 .help = "keep the daemons' logs in their temporary directory\n"
		 "(sdr-perf prints its name on stderr)"},
	SDR_OPT_SECTION("Passed to the daemons (ring / veth):"),
	{.name = "workers", .arg = "N", .fn = on_opt, .id = O_WORKERS, .dflt = "1",
	 .help = "fast-path lcores of each daemon (sdr-dpu --workers)"},
	{.name = "mtu", .arg = "N", .fn = on_opt, .id = O_MTU, .dflt = "4096",
	 .help = "RoCE MTU: 1024, 2048 or 4096 (sdr-dpu --mtu)"},
	{.name = "chunk-pkts", .arg = "N", .fn = on_opt, .id = O_CHUNK_PKTS, .dflt = "16",
	 .help = "packets per bitmap chunk (sdr-dpu --chunk-pkts)"},
	{.name = "port-rate", .arg = "RATE", .fn = on_opt, .id = O_PORT_RATE,
	 .help = "pace each daemon's port (sdr-dpu --port-rate; default:\n"
		 "unpaced on the ring, 1g on veth)"},
	{.name = "link", .arg = "SPEC", .fn = on_opt, .id = O_LINK,
	 .help = "link emulator on each daemon (sdr-dpu --link, e.g.\n"
		 "delay=12.5ms,rate=1gbit,buffer=4MB;\n"
		 "docs/link-emulator.md)"},
	{.name = "no-icrc", .fn = on_opt, .id = O_NO_ICRC,
	 .help = "no ICRC generation/verification (sdr-dpu --no-icrc)"},
	{.name = "busy-poll", .fn = on_opt, .id = O_BUSY,
	 .help = "daemons never sleep when idle (--idle-us 0)"},
	{.name = "eal", .arg = "ARG", .fn = on_opt, .id = O_EAL,
	 .help = "extra EAL argument (repeatable)"},
	{.name = "dpu-arg", .arg = "--OPT=VAL", .fn = on_opt, .id = O_DPU_ARG,
	 .help = "extra global sdr-dpu option, e.g. --dpu-arg=--pace-burst=1M\n"
		 "(repeatable; see sdr-dpu --help)"},
	SDR_OPT_SECTION("Run:"),
	{.name = "size", .arg = "BYTES", .fn = on_opt, .id = O_SIZE, .dflt = "64K",
	 .help = "message size, K/M/G suffixes"},
	{.name = "iters", .arg = "N", .fn = on_opt, .id = O_ITERS,
	 .help = "measured messages (default 1000 bw, 200 lat)"},
	{.name = "warmup", .arg = "N", .fn = on_opt, .id = O_WARMUP,
	 .help = "messages before the measurement (default iters/10, >=1)"},
	{.name = "duration", .arg = "SEC", .fn = on_opt, .id = O_DURATION,
	 .help = "measure for SEC seconds instead of --iters"},
	{.name = "window", .arg = "N", .fn = on_opt, .id = O_WINDOW,
	 .help = "sends in flight, 1..1024 (default 64 bw, 1 lat)"},
	{.name = "rel", .arg = "none|sr|ec|auto", .fn = on_opt, .id = O_REL, .dflt = "none",
	 .help = "QP reliability; an EC code rs:K:M / xor:K:M here is\n"
		 "--rel ec --ec CODE:K:M"},
	{.name = "ec", .arg = "rs:K:M|xor:K:M", .fn = on_opt, .id = O_EC,
	 .dflt = SDR_SCHEME_EC_DEFAULT_SPEC, .help = "code of --rel ec and of the scheme 'ec'"},
	{.name = "rate", .arg = "RATE", .fn = on_opt, .id = O_RATE,
	 .help = "pace each sending QP at RATE (bit/s of frames: 500m, 2g;\n"
		 "libsdr rate_bps; default unpaced)"},
	{.name = "qps", .arg = "N", .fn = on_opt, .id = O_QPS, .dflt = "1",
	 .help = "QP pairs, 1..1024: message n goes on pair n mod N\n"
		 "(--window counts the messages of all pairs); pair k is\n"
		 "on context k mod C of each side, C = min(N, --workers)"},
	{.name = "gap-us", .arg = "US", .fn = on_opt, .id = O_GAP,
	 .help = "on/off traffic: a QP posts its next send US after its\n"
		 "last one completed and has one in flight at most; the\n"
		 "peak rate of each paced QP over 10 of its frame times is\n"
		 "reported (default 0: sends back to back)"},
	{.name = "imm", .arg = "VALUE", .fn = on_opt, .id = O_IMM, .dflt = "0",
	 .help = "user immediate of every send (0 = none: a message of\n"
		 "n packets is n packets; else messages of fewer than 8\n"
		 "packets add immediate-only packets up to 8)"},
	{.name = "recv-timeout-ms", .arg = "MS", .fn = on_opt, .id = O_RTIMEOUT,
	 .help = "rel none: a receive whose send completed MS ago is\n"
		 "completed partially (default 200; 0 = wait for ever)"},
	{.name = "timeout", .arg = "SEC", .fn = on_opt, .id = O_TIMEOUT, .dflt = "10",
	 .help = "fail a run after SEC s without progress"},
	{.name = "json-only", .fn = on_opt, .id = O_JSON_ONLY,
	 .help = "print only the JSON line of each run"},
	SDR_OPT_SECTION("Codec:"),
	{.name = "code", .arg = "rs|xor", .fn = on_opt, .id = O_CODE, .dflt = "rs",
	 .help = "the erasure code"},
	{.name = "k", .arg = "K", .fn = on_opt, .id = O_K, .dflt = "32",
	 .help = "data chunks per submessage"},
	{.name = "m", .arg = "M", .fn = on_opt, .id = O_M, .dflt = "8",
	 .help = "parity chunks per submessage"},
	{.name = "chunk", .arg = "BYTES", .fn = on_opt, .id = O_CHUNK, .dflt = "4K",
	 .help = "chunk size"},
	SDR_OPT_SECTION("Sweep (comma-separated lists):"),
	{.name = "sizes", .arg = "LIST", .fn = on_opt, .id = O_SIZES, .dflt = "4K,64K,1M",
	 .help = "message sizes"},
	{.name = "loss", .arg = "LIST", .fn = on_opt, .id = O_LOSS, .dflt = "0",
	 .help = "loss rates, appended to --link as loss=P"},
	{.name = "schemes", .arg = "LIST", .fn = on_opt, .id = O_SCHEMES, .dflt = "none",
	 .help = "schemes: none, sr, auto, ec (= --ec) or an EC code\n"
		 "rs:K:M / xor:K:M"},
	{.name = "sweep-mode", .arg = "bw|lat", .fn = on_opt, .id = O_SWEEP_MODE, .dflt = "lat",
	 .help = "the runs of the sweep"},
	{.name = "help", .help = "this text"},
	SDR_OPT_END,
};

static const struct sdr_opts opt_set = {
	.prog = "sdr-perf",
	.usage = "Usage: sdr-perf MODE [options]\n"
		 "\n"
		 "Benchmark of sdr-dpu through libsdr (ib_write_bw / testpmd style). One process\n"
		 "drives both ends (a context on DPU a sends, one on DPU b receives), so send\n"
		 "post and receive completion are timed with the same clock.\n"
		 "\n"
		 "Modes:\n"
		 "  bw      N messages of --size with --window sends in flight: goodput, Mpps\n"
		 "  lat     the same engine with --window 1: message completion times\n"
		 "  codec   erasure-codec encode/decode throughput (common/sdr_ec.h)\n"
		 "  sweep   every combination of --schemes x --loss x --sizes (bw or lat runs)\n"
		 "\n",
	.footer = "\n"
		  "Output: a human block per run and exactly one JSON line (starting with '{');\n"
		  "keys in docs/benchmarks.md. Exit 0 if every run succeeded (skipped schemes\n"
		  "included), 1 otherwise, 2 on a usage error.\n",
	.opt = opts,
};

static int parse_opts(int argc, char **argv)
{
	int first;

	o.rig = RIG_RING;
	o.qps = 1;
	o.size = 64 << 10;
	o.mtu = 4096;
	o.chunk_pkts = 16;
	o.ec = (struct sdr_scheme)SDR_SCHEME_EC_DEFAULT;
	o.timeout = 10;
	o.recv_timeout_ms = 200;
	o.buf_budget = 256ull << 20;
	o.code = SDR_EC_RS;
	o.k = 32;
	o.m = 8;
	o.chunk = 4096;
	o.sweep_mode = "lat";

	if (argc < 2 || argv[1][0] == '-') {
		if (argc >= 2 && !strcmp(argv[1], "--help")) {
			sdr_opts_usage(&opt_set, stdout);
			exit(0);
		}
		sdr_opts_usage(&opt_set, stderr);
		return -1;
	}
	o.mode = argv[1];
	if (strcmp(o.mode, "bw") && strcmp(o.mode, "lat") && strcmp(o.mode, "codec") &&
	    strcmp(o.mode, "sweep")) {
		fprintf(stderr, "sdr-perf: unknown mode '%s' (bw, lat, codec, sweep)\n", o.mode);
		return -1;
	}
	first = sdr_opts_parse(&opt_set, argc - 1, argv + 1, NULL); /* argv[1] is MODE */
	if (first == SDR_OPTS_HELP)
		exit(0);
	if (first < 0)
		return -1;
	if (first < argc - 1) {
		fprintf(stderr, "sdr-perf: unexpected argument '%s'\n", argv[first + 1]);
		return -1;
	}
	if (o.rel == SDR_REL_EC && !o.rel_code)
		o.rel_ec = sdr_scheme_ec(&o.ec); /* --rel ec: the code of --ec */
	if (o.rig == RIG_ATTACH && (!o.dpu_a || !o.dpu_b)) {
		fprintf(stderr, "sdr-perf: --rig attach needs --dpu-a and --dpu-b\n");
		return -1;
	}
	if (o.rig != RIG_ATTACH && (o.dpu_a || o.dpu_b)) {
		fprintf(stderr, "sdr-perf: --dpu-a/--dpu-b only with --rig attach\n");
		return -1;
	}
	if (!strcmp(o.mode, "codec") && sdr_ec_check_params(o.code, o.k, o.m)) {
		fprintf(stderr, "sdr-perf: (k, m) = (%u, %u) out of range for %s\n", o.k, o.m,
			sdr_ec_code_name(o.code));
		return -1;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* small helpers                                                       */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void sleep_ms(unsigned ms)
{
	struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static void on_signal(int sig)
{
	(void)sig;
	g_stop = 1;
}

/* A growable string for JSON / command lines. */
struct sbuf {
	char *p;
	size_t len, cap;
};

static void sb_add(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_add(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		size_t room = b->cap - b->len;
		va_start(ap, fmt);
		n = vsnprintf(b->p ? b->p + b->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0)
			return;
		if ((size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		size_t ncap = (b->cap ? b->cap * 2 : 512) + (size_t)n;
		char *np = realloc(b->p, ncap);
		if (!np)
			abort();
		b->p = np;
		b->cap = ncap;
	}
}

/* JSON string value (escapes quotes, backslashes, control characters). */
static void sb_jstr(struct sbuf *b, const char *s)
{
	sb_add(b, "\"");
	for (; s && *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			sb_add(b, "\\%c", ch);
		else if (ch < 0x20)
			sb_add(b, "\\u%04x", ch);
		else
			sb_add(b, "%c", ch);
	}
	sb_add(b, "\"");
}

static void sb_jnum(struct sbuf *b, const char *key, double v)
{
	if (isfinite(v))
		sb_add(b, ",\"%s\":%.6g", key, v);
	else
		sb_add(b, ",\"%s\":null", key);
}

/* ------------------------------------------------------------------ */
/* rig: start / stop daemons                                           */

#define MAX_DAEMONS 2
/* The NAME=VALUE lines of 'rig.sh veth-up' that sdr-perf uses. */
enum { RV_NS_A, RV_NS_B, RV_DIP_A, RV_DIP_B, RV_DMAC_A, RV_DMAC_B, RV_VDEV_A, RV_VDEV_B, RV__N };
static const char *const rv_names[RV__N] = {"NS_A", "NS_B", "DIP_A", "DIP_B",
					    "DMAC_A", "DMAC_B", "VDEV_A", "VDEV_B"};

struct rig {
	enum rig_kind kind;
	char tmpdir[64];
	char sock_a[128], sock_b[128];
	pid_t pid[MAX_DAEMONS];
	char log[MAX_DAEMONS][160];
	int ndaemons;
	char ns_tag[16];  /* rig.sh veth-up TAG; "" = no namespaces */
	char vars[RV__N][128]; /* what rig.sh veth-up printed */
	char link[512];  /* effective --link spec ("" = none) */
	char prefix[MAX_DAEMONS][64]; /* EAL file prefixes (telemetry sockets) */
};

static struct rig *g_rig; /* for cleanup at exit */

static int run_cmd(char *const argv[], int quiet)
{
	pid_t p = fork();
	int st;

	if (p < 0)
		return -1;
	if (p == 0) {
		if (quiet) {
			int fd = open("/dev/null", O_WRONLY);
			if (fd >= 0) {
				dup2(fd, 1);
				dup2(fd, 2);
			}
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	while (waitpid(p, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int find_dpu_bin(char *out, size_t n)
{
	char self[PATH_MAX - 64], *slash;
	ssize_t len;
	const char *env = getenv("SDR_DPU");

	if (o.dpu_bin) {
		snprintf(out, n, "%s", o.dpu_bin);
		return access(out, X_OK) ? -1 : 0;
	}
	if (env && *env && !access(env, X_OK)) {
		snprintf(out, n, "%s", env);
		return 0;
	}
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len > 0) {
		self[len] = 0;
		slash = strrchr(self, '/');
		if (slash) {
			*slash = 0;
			/* build tree: <build>/host/perf/sdr-perf -> <build>/firmware/sdr-dpu */
			snprintf(out, n, "%s/../../firmware/sdr-dpu", self);
			if (!access(out, X_OK))
				return 0;
			snprintf(out, n, "%s/sdr-dpu", self);
			if (!access(out, X_OK))
				return 0;
		}
	}
	snprintf(out, n, "sdr-dpu"); /* PATH */
	return 0;
}

/* CPU seconds (user + system) used so far by the fast-path threads
 * ("rte-worker-N") of the daemons we started; NAN for --rig attach. On a
 * shared machine the workers do not get a whole CPU each, so throughput per
 * worker CPU-second is the figure that survives the noise. */
static double workers_cpu_s(const struct rig *r)
{
	double sum = 0;
	long hz = sysconf(_SC_CLK_TCK);
	int found = 0;

	for (int i = 0; i < r->ndaemons; i++) {
		char path[64];
		DIR *d;

		if (r->pid[i] <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/task", (int)r->pid[i]);
		d = opendir(path);
		struct dirent *de;
		if (!d)
			continue;
		while ((de = readdir(d))) {
			char sp[384], buf[512], *rp;
			unsigned long ut, st;
			FILE *f;
			if (de->d_name[0] == '.')
				continue;
			snprintf(sp, sizeof(sp), "%s/%s/stat", path, de->d_name);
			f = fopen(sp, "r");
			if (!f)
				continue;
			buf[0] = 0;
			if (!fgets(buf, sizeof(buf), f))
				buf[0] = 0;
			fclose(f);
			/* pid (comm) state ppid ... field 14 utime, 15 stime */
			if (!strstr(buf, "(rte-worker") || !(rp = strrchr(buf, ')')))
				continue;
			if (sscanf(rp + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut,
				   &st) == 2) {
				sum += (double)(ut + st) / (double)hz;
				found = 1;
			}
		}
		closedir(d);
	}
	return found ? sum : NAN;
}

static void dump_log(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512];
	long lines = 0;

	if (!f)
		return;
	fprintf(stderr, "---- %s ----\n", path);
	while (fgets(line, sizeof(line), f) && lines++ < 60)
		fputs(line, stderr);
	fclose(f);
}

/* The rig script (hw/x86/rig.sh): $SDR_RIG, the source tree this binary
 * was built from, then where it is installed. */
static int find_rig_sh(char *out, size_t n)
{
	const char *env = getenv("SDR_RIG");
	const char *cand[] = {env, SDR_RIG_SH_SOURCE, SDR_RIG_SH_INSTALLED};

	for (size_t i = 0; i < sizeof(cand) / sizeof(cand[0]); i++)
		if (cand[i] && *cand[i] && access(cand[i], R_OK) == 0) {
			snprintf(out, n, "%s", cand[i]);
			return 0;
		}
	return -1;
}

/* 'rig.sh veth-up TAG QPAIRS': the namespaces and veth pair of the rig; its
 * NAME=VALUE lines go to r->vars. */
static int rig_veth_up(struct rig *r, unsigned qpairs)
{
	char rig_sh[PATH_MAX], qp[16], line[256];
	int fds[2], st, got = 0;
	pid_t p;
	FILE *f;

	if (find_rig_sh(rig_sh, sizeof(rig_sh))) {
		fprintf(stderr, "sdr-perf: the rig script (hw/x86/rig.sh) is not at %s or %s; set "
			"SDR_RIG\n", SDR_RIG_SH_SOURCE, SDR_RIG_SH_INSTALLED);
		return -1;
	}
	snprintf(r->ns_tag, sizeof(r->ns_tag), "p%u", (unsigned)getpid() % 1000000);
	snprintf(qp, sizeof(qp), "%u", qpairs);
	if (pipe(fds))
		return -1;
	p = fork();
	if (p < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (p == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		close(fds[1]);
		execlp("bash", "bash", rig_sh, "veth-up", r->ns_tag, qp, (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	f = fdopen(fds[0], "r");
	while (f && fgets(line, sizeof(line), f)) {
		char *eq = strchr(line, '=');

		line[strcspn(line, "\n")] = 0;
		if (!eq)
			continue;
		*eq = 0;
		for (int i = 0; i < RV__N; i++)
			if (!strcmp(line, rv_names[i])) {
				snprintf(r->vars[i], sizeof(r->vars[i]), "%s", eq + 1);
				got |= 1 << i;
			}
	}
	if (f)
		fclose(f);
	else
		close(fds[0]);
	while (waitpid(p, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	if (!WIFEXITED(st) || WEXITSTATUS(st) || got != (1 << RV__N) - 1) {
		fprintf(stderr, "sdr-perf: %s veth-up %s failed\n", rig_sh, r->ns_tag);
		return -1;
	}
	return 0;
}

static void rig_stop(struct rig *r)
{
	/* Let the daemons finish tearing down the contexts we just closed:
	 * a SIGINT that lands while the main lcore waits for a worker to
	 * acknowledge a teardown command costs the daemon's 5 s command
	 * timeout (the worker has already left its loop). */
	if (r->ndaemons)
		sleep_ms(300);
	for (int i = 0; i < r->ndaemons; i++) {
		if (r->pid[i] <= 0)
			continue;
		kill(r->pid[i], SIGINT);
	}
	for (int i = 0; i < r->ndaemons; i++) {
		int st, done = 0;
		if (r->pid[i] <= 0)
			continue;
		for (int t = 0; t < 160 && !done; t++) { /* 8 s */
			pid_t w = waitpid(r->pid[i], &st, WNOHANG);
			if (w == r->pid[i] || (w < 0 && errno == ECHILD))
				done = 1;
			else
				sleep_ms(50);
		}
		if (!done) {
			kill(r->pid[i], SIGKILL);
			waitpid(r->pid[i], &st, 0);
		}
		r->pid[i] = 0;
	}
	r->ndaemons = 0;
	if (r->ns_tag[0]) {
		char rig_sh[PATH_MAX];
		char *a[] = {"bash", rig_sh, "veth-down", r->ns_tag, NULL};

		if (find_rig_sh(rig_sh, sizeof(rig_sh)) == 0)
			run_cmd(a, 1);
		r->ns_tag[0] = 0;
	}
	if (r->tmpdir[0] && !o.keep_logs) {
		char p[256];
		const char *names[] = {"a.sock", "b.sock", "dpu0.log", "dpu1.log"};
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			snprintf(p, sizeof(p), "%s/%s", r->tmpdir, names[i]);
			unlink(p);
		}
		rmdir(r->tmpdir);
		r->tmpdir[0] = 0;
	} else if (r->tmpdir[0]) {
		fprintf(stderr, "sdr-perf: daemon logs kept in %s\n", r->tmpdir);
		r->tmpdir[0] = 0;
	}
}

static void cleanup_at_exit(void)
{
	if (g_rig)
		rig_stop(g_rig);
}

/* Start one daemon with argv; stdout/stderr into log. */
static int spawn(struct rig *r, char **argv)
{
	int i = r->ndaemons;
	pid_t p;

	snprintf(r->log[i], sizeof(r->log[i]), "%s/dpu%d.log", r->tmpdir, i);
	p = fork();
	if (p < 0)
		return -errno;
	if (p == 0) {
		int fd = open(r->log[i], O_WRONLY | O_CREAT | O_TRUNC, 0644);
		sigset_t s;
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
		}
		/* the daemon dies with us, even on SIGKILL */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		sigemptyset(&s);
		sigprocmask(SIG_SETMASK, &s, NULL);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execvp(argv[0], argv);
		fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	r->pid[i] = p;
	r->ndaemons++;
	return 0;
}

static int wait_socks(struct rig *r)
{
	double deadline = now_s() + 30;

	while (now_s() < deadline && !g_stop) {
		struct stat st;
		int ok = !stat(r->sock_a, &st) && S_ISSOCK(st.st_mode) && !stat(r->sock_b, &st) &&
			 S_ISSOCK(st.st_mode);
		if (ok)
			return 0;
		for (int i = 0; i < r->ndaemons; i++) {
			int ws;
			if (waitpid(r->pid[i], &ws, WNOHANG) == r->pid[i]) {
				r->pid[i] = 0;
				fprintf(stderr, "sdr-perf: sdr-dpu exited during start-up\n");
				dump_log(r->log[i]);
				return -1;
			}
		}
		sleep_ms(20);
	}
	fprintf(stderr, "sdr-perf: daemon sockets did not appear within 30 s\n");
	for (int i = 0; i < r->ndaemons; i++)
		dump_log(r->log[i]);
	return -1;
}

/* Arguments common to every instance / daemon. */
struct argv_b {
	char *v[128];
	char store[64][96];
	int n, ns;
};

static void av(struct argv_b *a, const char *s)
{
	if (a->n < 127)
		a->v[a->n++] = (char *)s;
	a->v[a->n] = NULL;
}

static void avf(struct argv_b *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void avf(struct argv_b *a, const char *fmt, ...)
{
	va_list ap;
	if (a->ns == 64)
		return;
	va_start(ap, fmt);
	vsnprintf(a->store[a->ns], sizeof(a->store[0]), fmt, ap);
	va_end(ap);
	av(a, a->store[a->ns++]);
}

static uint64_t max_msg_for(uint64_t size)
{
	uint64_t chunk = (uint64_t)o.mtu * o.chunk_pkts, mm = size;
	if (mm < 8ull * o.mtu)
		mm = 8ull * o.mtu;
	return (mm + chunk - 1) / chunk * chunk;
}

static void av_common_eal(struct argv_b *a, const char *prefix, int mem_mb)
{
	av(a, "--no-huge");
	av(a, "--no-shconf");
	av(a, "--no-pci");
	avf(a, "-m%d", mem_mb);
	avf(a, "--file-prefix=%s", prefix);
	av(a, "--log-level=lib.eal:warning");
	av(a, "--log-level=pmd.net.ring:warning");
	for (int i = 0; i < o.n_eal_extra; i++)
		av(a, o.eal_extra[i]);
}

/* lcores: main lcore 0 on cpu0, workers on cpu1, cpu0, ... (the machine may
 * have fewer CPUs than lcores: EAL maps them with --lcores). first_cpu
 * rotates the mapping so two daemons do not pile their workers on one CPU. */
static void av_lcores(struct argv_b *a, unsigned workers, unsigned first_cpu)
{
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	char buf[96];
	size_t len = 0;

	if (ncpu < 1)
		ncpu = 1;
	for (unsigned l = 0; l <= workers && len < sizeof(buf) - 16; l++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%u@%ld", l ? "," : "", l,
					(first_cpu + l) % (unsigned long)ncpu);
	avf(a, "--lcores=%s", buf);
}

/* Is pacing measured (a rate on the QPs or the port, or on/off traffic)?
 * Then the daemons keep their paced frames' departure times. */
static int pacing_measured(void)
{
	return o.rate_bps || o.port_rate_bps || o.gap_us > 0;
}

static void av_fw_global(struct argv_b *a, uint64_t max_msg)
{
	/* the daemons are ours: no per-client QP quota (--qps up to 1024) */
	av(a, "--quota-qps=0");
	if (pacing_measured())
		avf(a, "--pace-trace=%u", PACE_TRACE);
	avf(a, "--mtu=%u", o.mtu);
	avf(a, "--chunk-pkts=%u", o.chunk_pkts);
	avf(a, "--max-msg=%" PRIu64, max_msg);
	avf(a, "--workers=%u", o.workers ? o.workers : 1);
	if (o.no_icrc)
		av(a, "--no-icrc");
	if (o.busy_poll)
		av(a, "--idle-us=0");
	for (int i = 0; i < o.n_dpu_extra; i++)
		av(a, o.dpu_extra[i]);
}

static void av_fw_inst(struct argv_b *a, const struct rig *r)
{
	if (r->link[0])
		avf(a, "--link=%s", r->link);
	if (o.port_rate)
		avf(a, "--port-rate=%s", o.port_rate);
}

static int rig_start(struct rig *r, const char *link, uint64_t max_size)
{
	char bin[PATH_MAX];
	uint64_t max_msg = max_msg_for(max_size);
	unsigned workers = o.workers ? o.workers : 1;

	memset(r, 0, sizeof(*r));
	r->kind = o.rig;
	snprintf(r->link, sizeof(r->link), "%s", link ? link : "");
	if (r->kind == RIG_ATTACH) {
		snprintf(r->sock_a, sizeof(r->sock_a), "%s", o.dpu_a);
		snprintf(r->sock_b, sizeof(r->sock_b), "%s", o.dpu_b);
		return 0;
	}
	if (max_msg < (64u << 20))
		max_msg = 64u << 20; /* the daemon default; QPs ask for less */
	snprintf(r->tmpdir, sizeof(r->tmpdir), "/tmp/sdr-perf.XXXXXX");
	if (!mkdtemp(r->tmpdir)) {
		fprintf(stderr, "sdr-perf: mkdtemp: %s\n", strerror(errno));
		r->tmpdir[0] = 0;
		return -1;
	}
	snprintf(r->sock_a, sizeof(r->sock_a), "%s/a.sock", r->tmpdir);
	snprintf(r->sock_b, sizeof(r->sock_b), "%s/b.sock", r->tmpdir);
	if (find_dpu_bin(bin, sizeof(bin))) {
		fprintf(stderr, "sdr-perf: sdr-dpu binary not found (use --dpu-bin)\n");
		return -1;
	}
	g_rig = r;
	if (r->kind == RIG_RING) {
		struct argv_b a = {0};
		av(&a, bin);
		av_common_eal(&a, r->tmpdir + 5, 512);
		snprintf(r->prefix[0], sizeof(r->prefix[0]), "%s", r->tmpdir + 5);
		av_lcores(&a, workers, 0);
		av(&a, "--");
		av(&a, "--ring-pair");
		av_fw_global(&a, max_msg);
		avf(&a, "--name=%s", r->sock_a);
		av(&a, "--ip=10.0.0.1");
		av_fw_inst(&a, r);
		av(&a, "--instance");
		avf(&a, "--name=%s", r->sock_b);
		av(&a, "--ip=10.0.0.2");
		av_fw_inst(&a, r);
		if (spawn(r, a.v))
			return -1;
		return wait_socks(r);
	}
	/* veth: the namespaces, veth ends, addresses and vdevs of the rig
	 * script (hw/x86/rig.sh veth-up); only the daemons are started here */
	if (geteuid() != 0) {
		fprintf(stderr, "sdr-perf: --rig veth needs root (ip netns)\n");
		return -1;
	}
	if (rig_veth_up(r, workers))
		return -1;
	if (!o.port_rate) {
		o.port_rate = "1g";
		o.port_rate_bps = 1000000000ull;
	}
	for (int side = 0; side < 2; side++) {
		struct argv_b a = {0};
		av(&a, "ip");
		av(&a, "netns");
		av(&a, "exec");
		av(&a, r->vars[side ? RV_NS_B : RV_NS_A]);
		av(&a, bin);
		av(&a, "--no-huge");
		av(&a, "--no-shconf");
		av(&a, "--no-pci");
		av(&a, "-m512");
		avf(&a, "--file-prefix=%s-%c", r->tmpdir + 5, side ? 'b' : 'a');
		snprintf(r->prefix[side], sizeof(r->prefix[side]), "%s-%c", r->tmpdir + 5,
			 side ? 'b' : 'a');
		av(&a, "--log-level=lib.eal:warning");
		for (int i = 0; i < o.n_eal_extra; i++)
			av(&a, o.eal_extra[i]);
		av_lcores(&a, workers, side ? 1 : 0);
		av(&a, r->vars[side ? RV_VDEV_B : RV_VDEV_A]);
		av(&a, "--");
		av_fw_global(&a, max_msg);
		avf(&a, "--name=%s", side ? r->sock_b : r->sock_a);
		avf(&a, "--ip=%s", r->vars[side ? RV_DIP_B : RV_DIP_A]);
		avf(&a, "--mac=%s", r->vars[side ? RV_DMAC_B : RV_DMAC_A]);
		avf(&a, "--peer-mac=%s", r->vars[side ? RV_DMAC_A : RV_DMAC_B]);
		av_fw_inst(&a, r);
		if (spawn(r, a.v))
			return -1;
	}
	return wait_socks(r);
}

/* ------------------------------------------------------------------ */
/* the daemons' own figures: telemetry, memory                         */

/* One DPDK telemetry request to the daemon with EAL file prefix @p prefix
 * (its socket is in the EAL runtime directory, as rte_eal_init() makes
 * it). @return bytes of the JSON answer in @p out, or -1. */
static int tel_query(const char *prefix, const char *cmd, char *out, size_t len)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	struct timeval tv = {.tv_sec = 2};
	char hello[1024];
	ssize_t n;
	int fd;

	if (!prefix[0] || len < 2)
		return -1;
	if (geteuid() == 0)
		snprintf(sa.sun_path, sizeof(sa.sun_path), "/var/run/dpdk/%s/dpdk_telemetry.v2",
			 prefix);
	else
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/dpdk/%s/dpdk_telemetry.v2",
			 xdg && *xdg ? xdg : "/tmp", prefix);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) ||
	    read(fd, hello, sizeof(hello)) <= 0 || write(fd, cmd, strlen(cmd)) < 0 ||
	    (n = read(fd, out, len - 1)) <= 0) {
		close(fd);
		return -1;
	}
	close(fd);
	out[n] = 0;
	return (int)n;
}

/* The number after "key": in a telemetry answer (NAN if absent). */
static double tel_num(const char *json, const char *key)
{
	char k[80];
	const char *p;

	snprintf(k, sizeof(k), "\"%s\":", key);
	p = strstr(json, k);
	return p ? strtod(p + strlen(k), NULL) : NAN;
}

/* The workers' counters (telemetry /sdr/workers), summed over the daemons
 * of the rig; NANs when a daemon does not answer (--rig attach). */
enum { WK_LOOPS, WK_WORK, WK_POLLS, WK_CYCLES, WK_FRAMES, WK_STALLS, WK_VPACED, WK_VTOUCHED,
       WK_VTIMER, WK_HANDOFF, WK__N };
static const char *const wk_keys[WK__N] = {"loops", "work_loops", "pace_polls", "pace_cycles",
					   "pace_frames", "pace_stalls", "visits_paced",
					   "visits_touched", "visits_timer", "handoff_rx"};

static void workers_read(const struct rig *r, double *v)
{
	char buf[16384];

	for (int k = 0; k < WK__N; k++)
		v[k] = r->ndaemons ? 0 : NAN;
	for (int i = 0; i < r->ndaemons; i++) {
		if (tel_query(r->prefix[i], "/sdr/workers", buf, sizeof(buf)) < 0) {
			for (int k = 0; k < WK__N; k++)
				v[k] = NAN;
			return;
		}
		for (int k = 0; k < WK__N; k++)
			v[k] += tel_num(buf, wk_keys[k]);
	}
}

/* Resident and virtual memory of the daemons we started (KiB, summed). */
static void daemons_mem(const struct rig *r, double *rss, double *vsz)
{
	*rss = *vsz = r->ndaemons ? 0 : NAN;
	for (int i = 0; i < r->ndaemons; i++) {
		char path[64], line[256];
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/status", (int)r->pid[i]);
		if (!(f = fopen(path, "r"))) {
			*rss = *vsz = NAN;
			return;
		}
		while (fgets(line, sizeof(line), f)) {
			unsigned long kb;
			if (sscanf(line, "VmRSS: %lu", &kb) == 1)
				*rss += (double)kb;
			else if (sscanf(line, "VmSize: %lu", &kb) == 1)
				*vsz += (double)kb;
		}
		fclose(f);
	}
}

/* ------------------------------------------------------------------ */
/* the bw / lat engine                                                 */

struct run_params {
	const char *mode; /* "bw" or "lat" */
	uint64_t size, iters, warmup;
	uint32_t window;
	double duration;
	int rel;
	uint16_t ec; /* rel EC: packed code, k, m */
};

struct run_result {
	int ok;               /* 1 measured, 0 failed, -1 skipped */
	char error[256];
	uint64_t measured, msgs_ok, msgs_partial, msgs_err, send_err;
	uint64_t bytes, pkts;
	double wire_bytes; /* frame bytes of those packets (msg_wire_bytes) */
	double elapsed;
	double goodput_gbps, wire_gbps, mpps, msg_rate;
	double lat[6];  /* mean p50 p99 p999 max min (us), post -> receive completion */
	double slat[5]; /* mean p50 p99 p999 max, post -> local send completion */
	uint64_t nlat;
	double win[MAX_WINDOWS]; /* wire Gbit/s per whole 1 s window */
	int nwin;
	double memcpy_gbps;
	double bound_gbps;    /* 2 copies + 2 CRC passes per CPU-second (bound_baseline) */
	double cpu_s;         /* worker CPU seconds during the measurement */
	double gbps_per_cpu;  /* goodput per worker CPU-second */
	double mpps_per_cpu;  /* packets per worker CPU-second */
	unsigned qps, ctxs;
	double setup_s;       /* creating and connecting every QP (both sides) */
	double rss_kib_qp, rss_kib_qp_end, vsz_kib_qp; /* daemons' memory per QP */
	double wk[WK__N];     /* workers' counters during the measurement */
	double peak_win_us, peak, peak_idle; /* --gap-us / paced: peak over 10 frame times */
	int npeak;            /* QPs whose departures were read */
};

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return x < y ? -1 : x > y;
}

static void lat_stats(float *v, uint64_t n, double *out, int with_min)
{
	double sum = 0;

	if (!n) {
		for (int i = 0; i < (with_min ? 6 : 5); i++)
			out[i] = NAN;
		return;
	}
	qsort(v, n, sizeof(*v), cmp_float);
	for (uint64_t i = 0; i < n; i++)
		sum += v[i];
	/* nearest-rank percentiles */
#define PCT(p) v[(uint64_t)ceil((p) * (double)n) ? (uint64_t)ceil((p) * (double)n) - 1 : 0]
	out[0] = sum / (double)n;
	out[1] = PCT(0.50);
	out[2] = PCT(0.99);
	out[3] = PCT(0.999);
	out[4] = v[n - 1];
	if (with_min)
		out[5] = v[0];
#undef PCT
}

/* Data packets of a message (immediate-only ones included: only with a
 * non-zero --imm) and their frame bytes, what the pacers charge:
 * common/sdr_wire.h's one definition. */
static uint64_t pkts_per_msg(uint64_t size)
{
	return sdr_wire_msg_pkts(size, o.mtu, o.imm != 0);
}

static double msg_wire_bytes(uint64_t size)
{
	uint64_t full = size / o.mtu, rem = size % o.mtu;
	int imm = o.imm != 0;

	return (double)full * sdr_wire_data_frame_bytes(o.mtu, imm) +
	       (rem ? (double)sdr_wire_data_frame_bytes((uint32_t)rem, imm) : 0.0) +
	       (double)sdr_wire_imm_only_pkts(full + (rem ? 1 : 0), imm) *
		       sdr_wire_data_frame_bytes(0, 1);
}

static void fail(struct run_result *res, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(struct run_result *res, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(res->error, sizeof(res->error), fmt, ap);
	va_end(ap);
	res->ok = 0;
}

/* Copy the measured payload once, in MTU pieces, from the send buffers to
 * the receive buffers: the cost of one of the two copies the DPU makes per
 * payload byte (host -> mbuf on TX, mbuf -> host on RX). */
static double memcpy_baseline(uint8_t *src, size_t src_len, uint8_t *dst, size_t dst_len,
			      uint64_t bytes)
{
	uint64_t done = 0;
	size_t so = 0, d_o = 0;
	double t0;

	if (!bytes || src_len < o.mtu || dst_len < o.mtu)
		return NAN;
	t0 = now_s();
	while (done < bytes) {
		size_t piece = bytes - done < o.mtu ? (size_t)(bytes - done) : o.mtu;
		if (so + piece > src_len)
			so = 0;
		if (d_o + piece > dst_len)
			d_o = 0;
		memcpy(dst + d_o, src + so, piece);
		__asm__ volatile("" ::: "memory");
		so += piece;
		d_o += piece;
		done += piece;
	}
	return (double)bytes * 8 / (now_s() - t0) / 1e9;
}

/* The rate a sending QP is paced at (bits/s): its own, else its worker's
 * share of the port; 0 = unpaced. */
static uint64_t qp_pace_bps(void)
{
	if (o.rate_bps)
		return o.rate_bps;
	return o.port_rate_bps / (o.workers ? o.workers : 1);
}

/* Peak rate of the sending QPs over 10 of their frame times, from the
 * departures the sending daemon recorded (telemetry /sdr/pace_peak; the QP
 * ids of a fresh instance are 0..N-1 in creation order): the largest bytes
 * in such a window over what the rate allows there, over all windows and
 * over those that begin with a frame sent after the QP was idle. */
static void read_peaks(const struct rig *rig, const struct run_params *p, struct run_result *res)
{
	uint64_t bps = qp_pace_bps(), pkts = pkts_per_msg(p->size);
	double frame = msg_wire_bytes(p->size) / (double)pkts, win_ns, allow;
	char cmd[96], buf[4096];

	res->peak = res->peak_idle = res->peak_win_us = NAN;
	if (!bps || !rig->ndaemons || !pacing_measured())
		return;
	win_ns = 10 * frame * 8 / (double)bps * 1e9;
	allow = (double)bps / 8 * win_ns / 1e9;
	res->peak_win_us = win_ns / 1e3;
	res->peak = res->peak_idle = 0;
	for (unsigned k = 0; k < res->qps && k < 64; k++) {
		snprintf(cmd, sizeof(cmd), "/sdr/pace_peak,0,%u,%llu", k, (unsigned long long)win_ns);
		if (tel_query(rig->prefix[0], cmd, buf, sizeof(buf)) < 0 ||
		    !(tel_num(buf, "frames") > 0))
			continue;
		res->npeak++;
		res->peak = fmax(res->peak, tel_num(buf, "peak_bytes") / allow);
		res->peak_idle = fmax(res->peak_idle, tel_num(buf, "peak_bytes_after_idle") / allow);
	}
	if (!res->npeak)
		res->peak = res->peak_idle = NAN;
}

struct ends {
	struct sdr_ctx *ctx[MAX_CTXS];
	struct sdr_mr *mr[MAX_CTXS];
	uint8_t *buf[MAX_CTXS];
	size_t len[MAX_CTXS];
	uint64_t nbuf; /* message buffers per context */
	struct sdr_qp **qp;
};

static int ends_buffers(struct ends *e, unsigned nctx, uint64_t size, uint64_t want, int fill,
			struct run_result *res)
{
	uint64_t n = o.buf_budget / nctx / size;

	e->nbuf = n < 1 ? 1 : n > want ? want : n;
	for (unsigned c = 0; c < nctx; c++) {
		e->len[c] = (size_t)(e->nbuf * size);
		e->buf[c] = sdr_buf_alloc(e->ctx[c], e->len[c]);
		if (!e->buf[c]) {
			fail(res, "sdr_buf_alloc(%zu): %s", e->len[c], strerror(errno));
			return -1;
		}
		for (size_t i = 0; i < e->len[c]; i++) /* touch every page before timing */
			e->buf[c][i] = fill ? (uint8_t)(i * 131 + 7) : 0;
		e->mr[c] = sdr_mr_reg(e->ctx[c], e->buf[c], e->len[c], 0);
		if (!e->mr[c]) {
			fail(res, "sdr_mr_reg: %s (%s)", strerror(errno), sdr_last_error(e->ctx[c]));
			return -1;
		}
	}
	return 0;
}

/* The bound of the data path on this core, in the same process right after
 * the run: each MTU piece of the measured payload is copied from the send
 * buffers into one of 32 frame buffers (an mbuf of a burst), CRC'd twice with
 * the function the ICRC uses (sdr_icrc_crc32(): once as TX computes it, once
 * as RX verifies it) and copied into the receive buffers. That is the work
 * no data path can skip; everything else it does (headers, parse, rings,
 * placement, bitmaps, completions) comes on top. Per CPU-second of this
 * thread (CLOCK_THREAD_CPUTIME_ID), like the worker's figures; the payload
 * is capped at 2 GiB. */
#define BOUND_BUFS 32

/* The daemon's ICRC code (sdr-dpu --icrc-crc, given with --dpu-arg; else
 * its default), chosen the same way here for the bound. With --rig attach
 * the daemons' own choice is unknown: the default is taken. */
static const char *bound_crc(void)
{
	const char *crc = "auto";

	for (int i = 0; i < o.n_dpu_extra; i++)
		if (!strncmp(o.dpu_extra[i], "--icrc-crc=", 11))
			crc = o.dpu_extra[i] + 11;
	return crc;
}

static volatile uint32_t bound_sink; /* the CRCs are used: not optimised away */
static double bound_baseline(uint8_t *src, size_t src_len, uint8_t *dst, size_t dst_len,
			     uint64_t bytes)
{
	static uint8_t frame[BOUND_BUFS][4096 + 128];
	uint64_t done = 0;
	size_t so = 0, d_o = 0;
	struct timespec t0, t1;
	unsigned b = 0;

	if (bytes > (2ull << 30))
		bytes = 2ull << 30;
	if (!bytes || src_len < o.mtu || dst_len < o.mtu || o.mtu > 4096)
		return NAN;
	if (sdr_icrc_select(bound_crc()))
		return NAN;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	while (done < bytes) {
		size_t piece = bytes - done < o.mtu ? (size_t)(bytes - done) : o.mtu;
		uint8_t *f = frame[b++ % BOUND_BUFS];

		if (so + piece > src_len)
			so = 0;
		if (d_o + piece > dst_len)
			d_o = 0;
		memcpy(f, src + so, piece);
		bound_sink ^= sdr_icrc_crc32(0, f, piece);
		bound_sink ^= sdr_icrc_crc32(0, f, piece);
		memcpy(dst + d_o, f, piece);
		__asm__ volatile("" ::: "memory");
		so += piece;
		d_o += piece;
		done += piece;
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
	return (double)done * 8 /
	       ((double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9) / 1e9;
}

static void run_engine(const struct rig *rig, const struct run_params *p, struct run_result *res)
{
	struct ends ea = {0}, eb = {0};
	struct sdr_qp_attr attr = {0};
	uint64_t total = p->duration > 0 ? UINT64_MAX : p->warmup + p->iters;
	uint64_t sposted = 0, sdone = 0, rposted = 0, rdone = 0, rlow = 0;
	uint64_t mpm = pkts_per_msg(p->size);
	uint32_t ahead, nq = o.qps, nc = o.qps < (o.workers ? o.workers : 1) ? o.qps : (o.workers ? o.workers : 1);
	double t_post[TS_RING], t_sdone[TS_RING], t_meas = 0, t_last = 0, t_progress, t_dur_end = 0;
	double *q_free = NULL; /* --gap-us: when each QP may post its next send */
	uint8_t st[TS_RING]; /* bit0 send done, bit1 recv done, bit2 partial requested */
	struct sdr_recv_handle *rh[TS_RING];
	float *lat = NULL, *slat = NULL;
	uint64_t nlat = 0, nslat = 0, lat_cap;
	double wbytes[MAX_WINDOWS + 1] = {0};
	uint64_t spin = 0;
	double cpu0 = NAN, wk0[WK__N], rss0, vsz0, rss1, vsz1, t0;
	int rc;

	memset(res, 0, sizeof(*res));
	res->ok = 1;
	res->qps = nq;
	res->ctxs = nc;
	for (int k = 0; k < WK__N; k++)
		wk0[k] = res->wk[k] = NAN;
	ahead = p->window * 2 > 64 ? p->window * 2 : 64;
	if (ahead > TS_RING)
		ahead = TS_RING;
	if (p->warmup + p->iters < ahead && p->duration <= 0)
		ahead = (uint32_t)(p->warmup + p->iters);
	lat_cap = p->duration > 0 ? MAX_LAT_SAMPLES : (p->iters < MAX_LAT_SAMPLES ? p->iters : MAX_LAT_SAMPLES);
	lat = malloc((lat_cap ? lat_cap : 1) * sizeof(*lat));
	slat = malloc((lat_cap ? lat_cap : 1) * sizeof(*slat));
	ea.qp = calloc(nq, sizeof(*ea.qp));
	eb.qp = calloc(nq, sizeof(*eb.qp));
	q_free = calloc(nq, sizeof(*q_free));
	if (!lat || !slat || !ea.qp || !eb.qp || !q_free) {
		fail(res, "out of memory");
		goto out;
	}
	/* contexts: the k-th of each side goes to worker k mod workers (the
	 * daemons assign them round robin per instance), so a QP pair shares
	 * its worker */
	for (unsigned c = 0; c < nc; c++) {
		if (!(ea.ctx[c] = sdr_ctx_open(rig->sock_a, NULL))) {
			fail(res, "sdr_ctx_open(%s): %s", rig->sock_a, strerror(errno));
			goto out;
		}
		if (!(eb.ctx[c] = sdr_ctx_open(rig->sock_b, NULL))) {
			fail(res, "sdr_ctx_open(%s): %s", rig->sock_b, strerror(errno));
			goto out;
		}
	}
	attr.max_msg = (uint32_t)max_msg_for(p->size);
	attr.chunk_pkts = o.chunk_pkts;
	{
		struct sdr_scheme sch = sdr_scheme_of((unsigned)p->rel, p->ec);

		attr.reliability = sch.rel;
		attr.ec_code = sch.code;
		attr.ec_k = (uint8_t)sch.k;
		attr.ec_m = (uint8_t)sch.m;
	}
	/* QP pair k on context k mod nc; the time and daemon memory it takes */
	daemons_mem(rig, &rss0, &vsz0);
	t0 = now_s();
	for (unsigned k = 0; k < nq; k++) {
		struct sdr_qp_info ia, ib;

		attr.rate_bps = o.rate_bps; /* the sending QPs only */
		ea.qp[k] = sdr_qp_create(ea.ctx[k % nc], &attr);
		attr.rate_bps = 0;
		eb.qp[k] = ea.qp[k] ? sdr_qp_create(eb.ctx[k % nc], &attr) : NULL;
		if (!ea.qp[k] || !eb.qp[k]) {
			int e = errno;
			snprintf(res->error, sizeof(res->error), "sdr_qp_create(rel=%s, QP %u): %s (%s)",
				 sdr_rel_name((unsigned)p->rel), k, strerror(e),
				 sdr_last_error(ea.qp[k] ? eb.ctx[k % nc] : ea.ctx[k % nc]));
			res->ok = (e == EOPNOTSUPP || e == ENOTSUP) && p->rel != SDR_REL_NONE ? -1 : 0;
			goto out;
		}
		if ((rc = sdr_qp_info_get(ea.qp[k], &ia)) || (rc = sdr_qp_info_get(eb.qp[k], &ib)) ||
		    (rc = sdr_qp_connect(ea.qp[k], &ib)) || (rc = sdr_qp_connect(eb.qp[k], &ia))) {
			fail(res, "connect (QP %u): %s (%s / %s)", k, sdr_strerror(rc),
			     sdr_last_error(ea.ctx[k % nc]), sdr_last_error(eb.ctx[k % nc]));
			goto out;
		}
	}
	res->setup_s = now_s() - t0;
	daemons_mem(rig, &rss1, &vsz1);
	res->rss_kib_qp = (rss1 - rss0) / (2.0 * nq);
	res->vsz_kib_qp = (vsz1 - vsz0) / (2.0 * nq);

	/* Buffers: distinct per in-flight message up to the budget, then
	 * reused round-robin (a benchmark does not verify payload). */
	if (ends_buffers(&ea, nc, p->size, p->window, 1, res) ||
	    ends_buffers(&eb, nc, p->size, ahead, 0, res))
		goto out;

	t_progress = now_s();
	if (p->warmup == 0) {
		cpu0 = workers_cpu_s(rig);
		workers_read(rig, wk0);
	}
	if (p->duration > 0 && p->warmup == 0)
		t_dur_end = t_progress + p->duration;
	while (!g_stop && (rdone < total || sdone < total)) {
		struct sdr_wc wc[32];
		int n, progress = 0;
		double t;

		/* receives ahead (CTS leaves long before the send is posted) */
		while (rposted < total && rposted - rdone < ahead) {
			unsigned k = (unsigned)(rposted % nq), c = k % nc;
			struct sdr_recv_wr wr = {.mr = eb.mr[c],
						 .addr = eb.buf[c] + (rposted % eb.nbuf) * p->size,
						 .length = (uint32_t)p->size, .wr_id = rposted};
			struct sdr_recv_handle *h;
			rc = sdr_recv_post(eb.qp[k], &wr, &h);
			if (rc == -EAGAIN)
				break;
			if (rc) {
				fail(res, "sdr_recv_post(%" PRIu64 "): %s", rposted, sdr_strerror(rc));
				goto out;
			}
			rh[rposted % TS_RING] = h;
			st[rposted % TS_RING] = 0;
			rposted++;
			progress = 1;
		}
		/* sends: --window in flight; with --gap-us one per QP, after its gap */
		t = now_s();
		while (sposted < rposted && sposted < total && sposted - sdone < p->window) {
			unsigned k = (unsigned)(sposted % nq), c = k % nc;
			struct sdr_send_wr wr = {.mr = ea.mr[c],
						 .addr = ea.buf[c] + (sposted % ea.nbuf) * p->size,
						 .length = (uint32_t)p->size,
						 .imm = o.imm, .wr_id = sposted};
			/* q_free: 0 never sent, < 0 in flight, else free from then */
			if (o.gap_us > 0 && q_free[k] != 0 && !(q_free[k] > 0 && t >= q_free[k]))
				break; /* in flight, or idling */
			t_post[sposted % TS_RING] = now_s();
			rc = sdr_send_post(ea.qp[k], &wr, NULL);
			if (rc == -EAGAIN)
				break;
			if (rc) {
				fail(res, "sdr_send_post(%" PRIu64 "): %s", sposted, sdr_strerror(rc));
				goto out;
			}
			q_free[k] = -1; /* in flight */
			sposted++;
			progress = 1;
		}
		for (unsigned c = 0; c < nc; c++) {
			n = sdr_cq_poll(ea.ctx[c], wc, 32);
			if (n < 0) {
				fail(res, "sdr_cq_poll(a): %s", sdr_strerror(n));
				goto out;
			}
			t = now_s();
			for (int i = 0; i < n; i++) {
				uint64_t id = wc[i].wr_id;
				if (wc[i].opcode != SDR_SQ_SEND || id >= sposted)
					continue;
				t_sdone[id % TS_RING] = t;
				st[id % TS_RING] |= 1;
				q_free[id % nq] = t + o.gap_us * 1e-6;
				if (wc[i].status)
					res->send_err++;
				if (id >= p->warmup && nslat < lat_cap)
					slat[nslat++] = (float)((t - t_post[id % TS_RING]) * 1e6);
				sdone++;
				progress = 1;
			}
		}
		for (unsigned c = 0; c < nc; c++) {
			n = sdr_cq_poll(eb.ctx[c], wc, 32);
			if (n < 0) {
				fail(res, "sdr_cq_poll(b): %s", sdr_strerror(n));
				goto out;
			}
			t = now_s();
			for (int i = 0; i < n; i++) {
				uint64_t id = wc[i].wr_id, bytes = 0;
				/* data or immediate missing: the message did not arrive whole */
				int partial = !!(wc[i].flags & (SDR_CQE_F_PARTIAL | SDR_CQE_F_IMM_PARTIAL));
				if (wc[i].opcode != SDR_SQ_RECV || id >= rposted)
					continue;
				st[id % TS_RING] |= 2;
				rdone++;
				progress = 1;
				if (wc[i].status == 0 && partial && wc[i].handle) {
					int cd = sdr_recv_chunks_done(wc[i].handle);
					uint64_t cbytes = sdr_recv_chunk_bytes(wc[i].handle);
					bytes = cd > 0 ? (uint64_t)cd * cbytes : 0;
					if (bytes > p->size)
						bytes = p->size;
				} else if (wc[i].status == 0) {
					bytes = p->size;
				}
				if (id + 1 == p->warmup) {
					t_meas = t;
					cpu0 = workers_cpu_s(rig);
					workers_read(rig, wk0);
					if (p->duration > 0)
						t_dur_end = t + p->duration;
				}
				if (id < p->warmup)
					continue;
				if (p->warmup == 0 && t_meas == 0)
					t_meas = t_post[0 % TS_RING];
				res->measured++;
				if (wc[i].status)
					res->msgs_err++;
				else if (partial)
					res->msgs_partial++;
				else
					res->msgs_ok++;
				res->bytes += bytes;
				res->pkts += mpm;
				res->wire_bytes += msg_wire_bytes(bytes);
				if (t > t_last)
					t_last = t;
				if (!wc[i].status && !partial && nlat < lat_cap)
					lat[nlat++] = (float)((t - t_post[id % TS_RING]) * 1e6);
				if (t_meas > 0) {
					double w = floor(t - t_meas);
					if (w >= 0 && w < MAX_WINDOWS)
						wbytes[(int)w] += msg_wire_bytes(bytes);
				}
			}
		}
		t = now_s();
		if (progress) {
			t_progress = t;
			spin = 0;
		}
		/* duration mode: stop posting once the measurement time is over */
		if (p->duration > 0 && t_dur_end > 0 && t >= t_dur_end && total == UINT64_MAX)
			total = sposted;
		/* rel none: a message that lost a packet never completes by itself */
		if (p->rel == SDR_REL_NONE && o.recv_timeout_ms > 0 && (++spin & 255) == 0) {
			while (rlow < rposted && (st[rlow % TS_RING] & 2))
				rlow++;
			for (uint64_t i = rlow; i < rposted && i < rlow + 64; i++) {
				uint8_t s = st[i % TS_RING];
				if ((s & 1) && !(s & 6) &&
				    (t - t_sdone[i % TS_RING]) * 1e3 > o.recv_timeout_ms) {
					rc = sdr_recv_complete(rh[i % TS_RING]);
					st[i % TS_RING] |= 4;
					if (rc && rc != -EALREADY && rc != -EAGAIN) {
						fail(res, "sdr_recv_complete: %s", sdr_strerror(rc));
						goto out;
					}
					if (rc == -EAGAIN)
						st[i % TS_RING] &= (uint8_t)~4;
				}
			}
		}
		if (t - t_progress > o.timeout) {
			fail(res, "no progress for %.1f s: sends posted %" PRIu64 " done %" PRIu64
			     ", receives posted %" PRIu64 " done %" PRIu64, o.timeout, sposted, sdone,
			     rposted, rdone);
			goto out;
		}
	}
	if (g_stop) {
		fail(res, "interrupted");
		goto out;
	}
	res->elapsed = t_last - t_meas;
	res->cpu_s = workers_cpu_s(rig) - cpu0;
	workers_read(rig, res->wk);
	for (int k = 0; k < WK__N; k++)
		res->wk[k] -= wk0[k];
	daemons_mem(rig, &rss1, &vsz1);
	res->rss_kib_qp_end = (rss1 - rss0) / (2.0 * nq);
	read_peaks(rig, p, res);
	res->gbps_per_cpu = res->cpu_s > 0 ? (double)res->bytes * 8 / res->cpu_s / 1e9 : NAN;
	res->mpps_per_cpu = res->cpu_s > 0 ? (double)res->pkts / res->cpu_s / 1e6 : NAN;
	if (res->elapsed > 0) {
		res->goodput_gbps = (double)res->bytes * 8 / res->elapsed / 1e9;
		res->wire_gbps = res->wire_bytes * 8 / res->elapsed / 1e9;
		res->mpps = (double)res->pkts / res->elapsed / 1e6;
		res->msg_rate = (double)res->measured / res->elapsed;
	} else {
		res->goodput_gbps = res->wire_gbps = res->mpps = res->msg_rate = NAN;
	}
	/* whole 1 s windows only */
	for (int w = 0; w < MAX_WINDOWS && t_meas + w + 1 <= t_last; w++)
		res->win[res->nwin++] = wbytes[w] * 8 / 1e9;
	res->nlat = nlat;
	lat_stats(lat, nlat, res->lat, 1);
	lat_stats(slat, nslat, res->slat, 0);
	if (!strcmp(p->mode, "bw")) {
		res->memcpy_gbps = memcpy_baseline(ea.buf[0], ea.len[0], eb.buf[0], eb.len[0],
						   res->bytes);
		res->bound_gbps = bound_baseline(ea.buf[0], ea.len[0], eb.buf[0], eb.len[0],
						 res->bytes);
	} else {
		res->memcpy_gbps = res->bound_gbps = NAN;
	}
out:
	if (res->ok == 1 && res->measured == 0)
		fail(res, "nothing measured");
	free(lat);
	free(slat);
	free(ea.qp);
	free(eb.qp);
	free(q_free);
	/* sdr_ctx_close() destroys the QPs, MRs and buffers */
	for (unsigned c = 0; c < nc; c++) {
		sdr_ctx_close(ea.ctx[c]);
		sdr_ctx_close(eb.ctx[c]);
	}
}

static void print_run(const struct rig *rig, const struct run_params *p, const struct run_result *r)
{
	struct sbuf j = {0};
	const char *pmd = rig_pmds[rig->kind];
	unsigned workers = o.workers ? o.workers : 1;
	char sbuf[32];
	const char *scheme = scheme_name(p->rel, p->ec, sbuf, sizeof(sbuf));

	if (!o.json_only) {
		printf("  ---------------- sdr-perf %s: rig %s (%s) ----------------\n", p->mode,
		       rig_names[rig->kind], pmd);
		printf("  size %" PRIu64 " B  window %u  mtu %u  chunk %u pkts  workers %u  rel %s"
		       "  icrc %s  imm 0x%x  QP pairs %u%s\n", p->size, p->window, o.mtu, o.chunk_pkts,
		       workers, scheme, o.no_icrc ? "off" : "on", o.imm, o.qps,
		       o.gap_us > 0 ? "  on/off" : "");
		if (rig->link[0] || o.port_rate)
			printf("  link %s  port-rate %s\n", rig->link[0] ? rig->link : "-",
			       o.port_rate ? o.port_rate : "-");
		if (r->ok == -1) {
			printf("  SKIPPED: %s\n", r->error);
		} else if (r->ok == 0) {
			printf("  FAILED: %s\n", r->error);
		} else {
			printf("  messages   : %" PRIu64 " measured (%" PRIu64 " warm-up): ok %" PRIu64
			       "  partial %" PRIu64 "  error %" PRIu64 "\n", r->measured, p->warmup,
			       r->msgs_ok, r->msgs_partial, r->msgs_err);
			printf("  payload    : %" PRIu64 " B in %.6f s  goodput %.3f Gbit/s"
			       "  (wire %.3f Gbit/s)\n", r->bytes, r->elapsed, r->goodput_gbps,
			       r->wire_gbps);
			printf("  packets    : %" PRIu64 "  %.4f Mpps  %.0f msg/s\n", r->pkts, r->mpps,
			       r->msg_rate);
			printf("  completion : post -> receive complete (us): mean %.1f  p50 %.1f"
			       "  p99 %.1f  p99.9 %.1f  max %.1f  (%" PRIu64 " samples)\n", r->lat[0],
			       r->lat[1], r->lat[2], r->lat[3], r->lat[4], r->nlat);
			printf("  send done  : post -> on the wire (us):     mean %.1f  p50 %.1f"
			       "  p99 %.1f  p99.9 %.1f  max %.1f\n", r->slat[0], r->slat[1],
			       r->slat[2], r->slat[3], r->slat[4]);
			if (isfinite(r->cpu_s))
				printf("  workers    : %.3f CPU-s in %.3f s wall: %.3f Gbit/s and %.4f Mpps"
				       " per worker CPU-second\n", r->cpu_s, r->elapsed, r->gbps_per_cpu,
				       r->mpps_per_cpu);
			if (isfinite(r->memcpy_gbps))
				printf("  memcpy     : same bytes in MTU pieces, one copy: %.3f Gbit/s\n",
				       r->memcpy_gbps);
			if (isfinite(r->bound_gbps))
				printf("  bound      : same bytes, 2 copies + 2 CRC passes (%s) in MTU pieces:"
				       " %.3f Gbit/s per CPU-second; goodput per worker CPU-second /"
				       " bound %.3f\n", sdr_icrc_selected(), r->bound_gbps,
				       r->gbps_per_cpu / r->bound_gbps);
			printf("  QPs        : %u pairs on %u contexts per side, set up in %.3f s"
			       " (%.1f us per QP); daemon memory per QP %.1f KiB resident"
			       " (%.1f KiB after the run), %.1f KiB virtual\n", r->qps, r->ctxs,
			       r->setup_s, r->setup_s * 1e6 / (2.0 * r->qps), r->rss_kib_qp,
			       r->rss_kib_qp_end, r->vsz_kib_qp);
			if (isfinite(r->wk[WK_LOOPS]) && r->wk[WK_LOOPS] > 0)
				printf("  workers    : %.0f loops, QP visits %.2f per loop (paced %.0f,"
				       " touched %.0f, timer %.0f); pacer %.0f cycles per loop (%.0f"
				       " sampled), %.0f frames, %.0f stalls; hand-off %.0f packets\n",
				       r->wk[WK_LOOPS],
				       (r->wk[WK_VPACED] + r->wk[WK_VTOUCHED] + r->wk[WK_VTIMER]) /
					       r->wk[WK_LOOPS], r->wk[WK_VPACED], r->wk[WK_VTOUCHED],
				       r->wk[WK_VTIMER],
				       r->wk[WK_POLLS] > 0 ? r->wk[WK_CYCLES] / r->wk[WK_POLLS] : NAN,
				       r->wk[WK_POLLS], r->wk[WK_FRAMES], r->wk[WK_STALLS],
				       r->wk[WK_HANDOFF]);
			if (isfinite(r->peak))
				printf("  pacing     : peak over 10 frame times (%.1f us) %.3fx the rate,"
				       " %.3fx in windows that begin after idle (%d QPs)\n",
				       r->peak_win_us, r->peak, r->peak_idle, r->npeak);
			if (r->nwin) {
				printf("  1 s windows (wire Gbit/s):");
				for (int i = 0; i < r->nwin; i++)
					printf(" %.3f", r->win[i]);
				printf("\n");
			}
		}
		printf("  -----------------------------------------------------------------\n");
	}
	sb_add(&j, "{\"mode\":");
	sb_jstr(&j, p->mode);
	sb_add(&j, ",\"rig\":");
	sb_jstr(&j, rig_names[rig->kind]);
	sb_add(&j, ",\"pmd\":");
	sb_jstr(&j, pmd);
	sb_add(&j, ",\"size\":%" PRIu64 ",\"iters\":%" PRIu64 ",\"warmup\":%" PRIu64
	       ",\"window\":%u,\"mtu\":%u,\"chunk_pkts\":%u,\"workers\":%u,\"rel\":",
	       p->size, r->measured ? r->measured : p->iters, p->warmup, p->window, o.mtu,
	       o.chunk_pkts, workers);
	sb_jstr(&j, sdr_rel_name((unsigned)p->rel));
	sb_add(&j, ",\"scheme\":");
	sb_jstr(&j, scheme);
	sb_add(&j, ",\"icrc\":%s,\"link\":", o.no_icrc ? "false" : "true");
	sb_jstr(&j, rig->link);
	sb_add(&j, ",\"port_rate_bps\":%" PRIu64, o.port_rate_bps);
	sb_add(&j, ",\"qp_rate_bps\":%" PRIu64, o.rate_bps);
	sb_add(&j, ",\"qps\":%u", o.qps);
	sb_jnum(&j, "gap_us", o.gap_us);
	sb_add(&j, ",\"imm\":%" PRIu32, o.imm);
	if (r->ok != 1) {
		sb_add(&j, ",\"status\":\"%s\",\"error\":", r->ok < 0 ? "skipped" : "failed");
		sb_jstr(&j, r->error);
	} else {
		sb_add(&j, ",\"status\":\"ok\",\"msgs_ok\":%" PRIu64 ",\"msgs_partial\":%" PRIu64
		       ",\"msgs_err\":%" PRIu64 ",\"send_err\":%" PRIu64 ",\"bytes\":%" PRIu64
		       ",\"pkts\":%" PRIu64, r->msgs_ok, r->msgs_partial, r->msgs_err, r->send_err,
		       r->bytes, r->pkts);
		sb_jnum(&j, "elapsed_s", r->elapsed);
		sb_jnum(&j, "goodput_gbps", r->goodput_gbps);
		sb_jnum(&j, "wire_gbps", r->wire_gbps);
		sb_jnum(&j, "mpps", r->mpps);
		sb_jnum(&j, "msg_rate", r->msg_rate);
		sb_jnum(&j, "lat_mean_us", r->lat[0]);
		sb_jnum(&j, "lat_p50_us", r->lat[1]);
		sb_jnum(&j, "lat_p99_us", r->lat[2]);
		sb_jnum(&j, "lat_p999_us", r->lat[3]);
		sb_jnum(&j, "lat_max_us", r->lat[4]);
		sb_jnum(&j, "lat_min_us", r->lat[5]);
		sb_add(&j, ",\"lat_samples\":%" PRIu64, r->nlat);
		sb_jnum(&j, "send_lat_mean_us", r->slat[0]);
		sb_jnum(&j, "send_lat_p50_us", r->slat[1]);
		sb_jnum(&j, "send_lat_p99_us", r->slat[2]);
		sb_jnum(&j, "send_lat_p999_us", r->slat[3]);
		sb_jnum(&j, "send_lat_max_us", r->slat[4]);
		sb_jnum(&j, "memcpy_gbps", r->memcpy_gbps);
		sb_add(&j, ",\"icrc_crc\":");
		sb_jstr(&j, sdr_icrc_selected());
		sb_jnum(&j, "bound_gbps", r->bound_gbps);
		sb_jnum(&j, "worker_cpu_s", r->cpu_s);
		sb_jnum(&j, "goodput_gbps_per_cpu", r->gbps_per_cpu);
		sb_jnum(&j, "mpps_per_cpu", r->mpps_per_cpu);
		sb_add(&j, ",\"ctxs\":%u", r->ctxs);
		sb_jnum(&j, "qp_setup_s", r->setup_s);
		sb_jnum(&j, "qp_setup_us_per_qp", r->setup_s * 1e6 / (2.0 * r->qps));
		sb_jnum(&j, "dpu_rss_kib_per_qp", r->rss_kib_qp);
		sb_jnum(&j, "dpu_rss_kib_per_qp_end", r->rss_kib_qp_end);
		sb_jnum(&j, "dpu_vsz_kib_per_qp", r->vsz_kib_qp);
		sb_jnum(&j, "worker_loops", r->wk[WK_LOOPS]);
		sb_jnum(&j, "worker_work_loops", r->wk[WK_WORK]);
		sb_jnum(&j, "qp_visits_per_loop",
			r->wk[WK_LOOPS] > 0 ? (r->wk[WK_VPACED] + r->wk[WK_VTOUCHED] +
					       r->wk[WK_VTIMER]) / r->wk[WK_LOOPS] : NAN);
		sb_jnum(&j, "visits_paced", r->wk[WK_VPACED]);
		sb_jnum(&j, "visits_touched", r->wk[WK_VTOUCHED]);
		sb_jnum(&j, "visits_timer", r->wk[WK_VTIMER]);
		sb_jnum(&j, "pace_cycles_per_poll",
			r->wk[WK_POLLS] > 0 ? r->wk[WK_CYCLES] / r->wk[WK_POLLS] : NAN);
		sb_jnum(&j, "pace_polls", r->wk[WK_POLLS]);
		sb_jnum(&j, "pace_frames", r->wk[WK_FRAMES]);
		sb_jnum(&j, "pace_stalls", r->wk[WK_STALLS]);
		sb_jnum(&j, "handoff_pkts", r->wk[WK_HANDOFF]);
		sb_jnum(&j, "peak_window_us", r->peak_win_us);
		sb_jnum(&j, "peak_rate", r->peak);
		sb_jnum(&j, "peak_rate_after_idle", r->peak_idle);
		sb_add(&j, ",\"win_wire_gbps\":[");
		for (int i = 0; i < r->nwin; i++)
			sb_add(&j, "%s%.6g", i ? "," : "", r->win[i]);
		sb_add(&j, "]");
	}
	sb_add(&j, "}");
	printf("%s\n", j.p);
	fflush(stdout);
	free(j.p);
}

/* ------------------------------------------------------------------ */
/* codec                                                               */

static int run_codec(void)
{
	unsigned k = o.k, m = o.m;
	struct sdr_ec *ec = sdr_ec_create(o.code, k, m);
	uint8_t *mem, *ptr[SDR_EC_MAX_CHUNKS], present[SDR_EC_MAX_CHUNKS];
	uint64_t it, enc_iters = 0, dec_iters = 0;
	double t0, enc_s, dec_s, budget = o.duration > 0 ? o.duration : 0.5;
	int erased = 0, rc;
	struct sbuf j = {0};

	if (!ec) {
		fprintf(stderr, "sdr-perf: sdr_ec_create: %s\n", strerror(errno));
		return 1;
	}
	mem = aligned_alloc(64, ((k + m) * o.chunk + 63) / 64 * 64);
	if (!mem) {
		sdr_ec_free(ec);
		return 1;
	}
	for (uint64_t i = 0; i < (k + m) * o.chunk; i++)
		mem[i] = (uint8_t)(i * 2654435761u >> 13);
	for (unsigned i = 0; i < k + m; i++)
		ptr[i] = mem + i * o.chunk;
	/* encode: --iters calls, or as many as fit in --duration (default 0.5 s) */
	t0 = now_s();
	for (it = 0; !g_stop; it++) {
		if (o.iters_set ? it >= o.iters : (it & 15) == 0 && now_s() - t0 >= budget)
			break;
		rc = sdr_ec_encode(ec, (const uint8_t *const *)ptr, ptr + k, o.chunk);
		if (rc) {
			fprintf(stderr, "sdr-perf: sdr_ec_encode: %s\n", strerror(-rc));
			return 1;
		}
		enc_iters++;
	}
	enc_s = now_s() - t0;
	/* decode: erase m data chunks (one per XOR group: chunks 0..m-1) */
	memset(present, 1, sizeof(present));
	for (unsigned i = 0; i < m && i < k; i++, erased++)
		present[i] = 0;
	t0 = now_s();
	for (it = 0; !g_stop; it++) {
		if (o.iters_set ? it >= o.iters : (it & 15) == 0 && now_s() - t0 >= budget)
			break;
		rc = sdr_ec_decode(ec, ptr, present, o.chunk);
		if (rc < 0) {
			fprintf(stderr, "sdr-perf: sdr_ec_decode: %s\n", strerror(-rc));
			return 1;
		}
		dec_iters++;
	}
	dec_s = now_s() - t0;
	double enc_data = (double)enc_iters * k * o.chunk / enc_s / 1e9;
	double enc_all = (double)enc_iters * (k + m) * o.chunk / enc_s / 1e9;
	double dec_data = (double)dec_iters * k * o.chunk / dec_s / 1e9;
	if (!o.json_only) {
		printf("  ---------------- sdr-perf codec: %s(%u,%u) chunk %" PRIu64 " B, backend %s"
		       " ----------------\n", sdr_ec_code_name(o.code), k, m, o.chunk,
		       sdr_ec_backend_name(ec));
		printf("  encode : %" PRIu64 " calls in %.6f s  %.3f GB/s of data (k chunks)"
		       "  %.3f GB/s data+parity\n", enc_iters, enc_s, enc_data, enc_all);
		printf("  decode : %" PRIu64 " calls in %.6f s  %.3f GB/s of data (k chunks),"
		       " %d data chunks erased\n", dec_iters, dec_s, dec_data, erased);
		printf("  -----------------------------------------------------------------\n");
	}
	sb_add(&j, "{\"mode\":\"codec\",\"code\":");
	sb_jstr(&j, sdr_ec_code_name(o.code));
	sb_add(&j, ",\"backend\":");
	sb_jstr(&j, sdr_ec_backend_name(ec));
	sb_add(&j, ",\"k\":%u,\"m\":%u,\"chunk\":%" PRIu64 ",\"status\":\"ok\",\"encode_iters\":%"
	       PRIu64 ",\"decode_iters\":%" PRIu64 ",\"erasures\":%d", k, m, o.chunk, enc_iters,
	       dec_iters, erased);
	sb_jnum(&j, "encode_GBps", enc_data);
	sb_jnum(&j, "encode_GBps_all", enc_all);
	sb_jnum(&j, "decode_GBps", dec_data);
	sb_add(&j, "}");
	printf("%s\n", j.p);
	free(j.p);
	free(mem);
	sdr_ec_free(ec);
	return g_stop ? 1 : 0;
}

/* ------------------------------------------------------------------ */
/* main                                                                */

static void fill_params(struct run_params *p, const char *mode, uint64_t size, int rel,
			uint16_t ec)
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

static int run_one_mode(void)
{
	struct rig rig;
	struct run_params p;
	struct run_result r;

	if (rig_start(&rig, o.link, o.size)) {
		rig_stop(&rig);
		return 1;
	}
	fill_params(&p, o.mode, o.size, o.rel, o.rel_ec);
	run_engine(&rig, &p, &r);
	print_run(&rig, &p, &r);
	rig_stop(&rig);
	g_rig = NULL;
	return r.ok == 0 || g_stop;
}

static int run_sweep(void)
{
	int nsz = o.nsizes ? o.nsizes : 3, nl = o.nloss ? o.nloss : 1;
	int nsch = o.nschemes ? o.nschemes : 1, total, idx = 0, failed = 0;
	uint64_t maxsz = 0;

	if (!o.nsizes) {
		o.sizes[0] = 4096;
		o.sizes[1] = 64 << 10;
		o.sizes[2] = 1 << 20;
	}
	if (!o.nschemes)
		strcpy(o.schemes[0], "none");
	total = nsz * nl * nsch;
	for (int i = 0; i < nsz; i++)
		if (o.sizes[i] > maxsz)
			maxsz = o.sizes[i];
	for (int li = 0; li < nl && !g_stop; li++) {
		struct rig rig;
		char link[512] = "";

		if (o.nloss && o.loss[li] > 0) {
			snprintf(link, sizeof(link), "%s%sloss=%g", o.link ? o.link : "",
				 o.link ? "," : "", o.loss[li]);
		} else if (o.link) {
			snprintf(link, sizeof(link), "%s", o.link);
		}
		if (rig_start(&rig, link, maxsz)) {
			rig_stop(&rig);
			return 1;
		}
		for (int si = 0; si < nsch && !g_stop; si++) {
			for (int zi = 0; zi < nsz && !g_stop; zi++) {
				struct run_params p;
				struct run_result r;
				int rel;
				uint16_t ec;

				idx++;
				fprintf(stderr, "sdr-perf: sweep [%d/%d] scheme=%s loss=%g size=%" PRIu64
					" ...\n", idx, total, o.schemes[si], o.nloss ? o.loss[li] : 0.0,
					o.sizes[zi]);
				if (parse_scheme(o.schemes[si], &rel, &ec, NULL)) {
					fill_params(&p, o.sweep_mode, o.sizes[zi], 0, 0);
					memset(&r, 0, sizeof(r));
					r.ok = -1;
					snprintf(r.error, sizeof(r.error), "unknown scheme '%s'",
						 o.schemes[si]);
					print_run(&rig, &p, &r);
					continue;
				}
				fill_params(&p, o.sweep_mode, o.sizes[zi], rel, ec);
				run_engine(&rig, &p, &r);
				print_run(&rig, &p, &r);
				if (r.ok == 0)
					failed++;
				if (r.ok == -1) /* the scheme is refused: skip its other sizes */
					for (zi++; zi < nsz; zi++) {
						idx++;
						fill_params(&p, o.sweep_mode, o.sizes[zi], rel, ec);
						print_run(&rig, &p, &r);
					}
			}
		}
		rig_stop(&rig);
		g_rig = NULL;
	}
	fprintf(stderr, "sdr-perf: sweep done, %d run(s), %d failed\n", idx, failed);
	return failed || g_stop;
}

int main(int argc, char **argv)
{
	struct sigaction sa = {.sa_handler = on_signal};

	if (parse_opts(argc, argv))
		return 2;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	atexit(cleanup_at_exit);
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (!strcmp(o.mode, "codec"))
		return run_codec();
	if (!strcmp(o.mode, "sweep"))
		return run_sweep();
	return run_one_mode();
}
