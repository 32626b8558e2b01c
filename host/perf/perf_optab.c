/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-perf's option table, usage text and command-line parse (MODE first,
 * then the options of perf_opts.c, then the checks across options).
 * Host program, above libsdr and common/sdr_opts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf.h"

/* --rig */
static const struct sdr_opt_name rig_words[] = {
	{"ring", RIG_RING},
	{"veth", RIG_VETH},
	{"attach", RIG_ATTACH},
	SDR_OPT_NAMES_END,
};

static const struct sdr_opt opts[] = {
	SDR_OPT_SECTION("Rig:"),
	{.name = "rig",
	 .arg = "ring|veth|attach",
	 .id = O_RIG,
	 .kind = SDR_OPT_ENUM,
	 .names = rig_words,
	 .var = &o.rig,
	 .dflt = "ring",
	 .help = "ring: one sdr-dpu with --ring-pair and two instances;\n"
		 "veth (root): two sdr-dpu in two network namespaces\n"
		 "joined by veth, net_af_packet (paced at --port-rate,\n"
		 "default 1g), set up by hw/x86/rig.sh ($SDR_RIG, else\n"
		 "the source tree's, else share/sdr-dpu/rig.sh);\n"
		 "attach: daemons already running (--dpu-a, --dpu-b)"},
	{.name = "dpu-a",
	 .arg = "SOCK",
	 .id = O_DPU_A,
	 .kind = SDR_OPT_STRING,
	 .var = &o.dpu_a,
	 .help = "--rig attach: the sending daemon's socket"},
	{.name = "dpu-b",
	 .arg = "SOCK",
	 .id = O_DPU_B,
	 .kind = SDR_OPT_STRING,
	 .var = &o.dpu_b,
	 .help = "--rig attach: the receiving daemon's socket"},
	{.name = "dpu-bin",
	 .arg = "PATH",
	 .id = O_DPU_BIN,
	 .kind = SDR_OPT_STRING,
	 .var = &o.dpu_bin,
	 .help = "sdr-dpu binary (default: $SDR_DPU, the build tree next to\n"
		 "this binary, the same directory, then PATH)"},
	{.name = "keep-logs",
	 .id = O_KEEP_LOGS,
	 .kind = SDR_OPT_BOOL,
	 .var = &o.keep_logs,
	 .help = "keep the daemons' logs in their temporary directory\n"
		 "(sdr-perf prints its name on stderr)"},
	SDR_OPT_SECTION("Passed to the daemons (ring / veth):"),
	{.name = "workers",
	 .arg = "N",
	 .id = O_WORKERS,
	 .kind = SDR_OPT_U32,
	 .min = 1,
	 .max = 64,
	 .var = &o.workers,
	 .dflt = "1",
	 .help = "fast-path lcores of each daemon (sdr-dpu --workers)"},
	{.name = "mtu",
	 .arg = "N",
	 .id = O_MTU,
	 .kind = SDR_OPT_U32,
	 .min = 1024,
	 .max = 4096,
	 .flags = SDR_OPTF_POW2,
	 .var = &o.mtu,
	 .dflt = "4096",
	 .help = "RoCE MTU: 1024, 2048 or 4096 (sdr-dpu --mtu)"},
	{.name = "chunk-pkts",
	 .arg = "N",
	 .id = O_CHUNK_PKTS,
	 .kind = SDR_OPT_U32,
	 .min = 1,
	 .max = 1024,
	 .var = &o.chunk_pkts,
	 .dflt = "16",
	 .help = "packets per bitmap chunk (sdr-dpu --chunk-pkts)"},
	{.name = "paths",
	 .arg = "N",
	 .id = O_PATHS,
	 .kind = SDR_OPT_U32,
	 .min = 1,
	 .max = 16,
	 .var = &o.paths,
	 .help = "UDP source ports (ECMP paths) each QP sprays over\n"
		 "(sdr-dpu --paths; docs/multipath.md)"},
	{.name = "channels",
	 .arg = "N",
	 .id = O_CHANNELS,
	 .kind = SDR_OPT_U32,
	 .min = 1,
	 .max = SDR_CHANNELS_MAX,
	 .var = &o.channels,
	 .help = "channels of every QP: one QP served by N workers (needs\n"
		 "--workers N or more; docs/architecture.md \"Channels\")"},
	{.name = "stripe",
	 .arg = "N",
	 .id = O_STRIPE,
	 .kind = SDR_OPT_U32,
	 .min = 1,
	 .max = 255,
	 .var = &o.stripe_chunks,
	 .help = "with --channels: stripe size in chunks (default 1)"},
	{.name = "port-rate",
	 .arg = "RATE",
	 .fn = perf_on_rig_opt,
	 .id = O_PORT_RATE,
	 .kind = SDR_OPT_RATE,
	 .var = &o.port_rate_bps,
	 .help = "pace each daemon's port (sdr-dpu --port-rate; default:\n"
		 "unpaced on the ring, 1g on veth)"},
	{.name = "link",
	 .arg = "SPEC",
	 .fn = perf_on_rig_opt,
	 .id = O_LINK,
	 .help = "link emulator on each daemon (sdr-dpu --link, e.g.\n"
		 "delay=12.5ms,rate=1gbit,buffer=4MB;\n"
		 "docs/link-emulator.md)"},
	{.name = "no-icrc",
	 .id = O_NO_ICRC,
	 .kind = SDR_OPT_BOOL,
	 .var = &o.no_icrc,
	 .help = "no ICRC generation/verification (sdr-dpu --no-icrc)"},
	{.name = "busy-poll",
	 .id = O_BUSY,
	 .kind = SDR_OPT_BOOL,
	 .var = &o.busy_poll,
	 .help = "daemons never sleep when idle (--idle-us 0), and sdr-perf's own loop"
		 " never naps (by default it naps 100 us at a time after 2 ms without a"
		 " completion; 'flows' after every poll that finds none)"},
	{.name = "eal",
	 .arg = "ARG",
	 .fn = perf_on_rig_opt,
	 .id = O_EAL,
	 .help = "extra EAL argument (repeatable)"},
	{.name = "dpu-arg",
	 .arg = "--OPT=VAL",
	 .fn = perf_on_rig_opt,
	 .id = O_DPU_ARG,
	 .help = "extra global sdr-dpu option, e.g. --dpu-arg=--pace-burst=1M\n"
		 "(repeatable; see sdr-dpu --help)"},
	SDR_OPT_SECTION("Run:"),
	{.name = "size",
	 .arg = "BYTES",
	 .id = O_SIZE,
	 .kind = SDR_OPT_SIZE,
	 .min = 1,
	 .max = 1ull << 30,
	 .var = &o.size,
	 .dflt = "64K",
	 .help = "message size, K/M/G suffixes"},
	{.name = "iters",
	 .arg = "N",
	 .fn = perf_on_run_opt,
	 .id = O_ITERS,
	 .kind = SDR_OPT_SIZE,
	 .min = 1,
	 .max = 1ull << 32,
	 .var = &o.iters,
	 .help = "measured messages (default 1000 bw, 200 lat)"},
	{.name = "warmup",
	 .arg = "N",
	 .fn = perf_on_run_opt,
	 .id = O_WARMUP,
	 .kind = SDR_OPT_SIZE,
	 .max = 1ull << 32,
	 .var = &o.warmup,
	 .help = "messages before the measurement (default iters/10, >=1)"},
	{.name = "duration",
	 .arg = "SEC",
	 .id = O_DURATION,
	 .kind = SDR_OPT_DOUBLE,
	 .fmax = 3600,
	 .flags = SDR_OPTF_GT_MIN,
	 .var = &o.duration,
	 .help = "measure for SEC seconds instead of --iters"},
	{.name = "window",
	 .arg = "N",
	 .fn = perf_on_run_opt,
	 .id = O_WINDOW,
	 .kind = SDR_OPT_U32,
	 .min = 1,
	 .max = 1024,
	 .var = &o.window,
	 .help = "sends in flight, 1..1024 (default 64 bw, 1 lat)"},
	{.name = "rel",
	 .arg = "none|sr|ec|auto",
	 .fn = perf_on_run_opt,
	 .id = O_REL,
	 .dflt = "none",
	 .help = "QP reliability; an EC code rs:K:M / xor:K:M here is\n"
		 "--rel ec --ec CODE:K:M"},
	{.name = "ec",
	 .arg = "rs:K:M|xor:K:M",
	 .fn = perf_on_run_opt,
	 .id = O_EC,
	 .dflt = SDR_SCHEME_EC_DEFAULT_SPEC,
	 .help = "code of --rel ec and of the scheme 'ec'"},
	{.name = "rate",
	 .arg = "RATE",
	 .id = O_RATE,
	 .kind = SDR_OPT_RATE,
	 .var = &o.rate_bps,
	 .help = "pace each sending QP at RATE (bit/s of frames: 500m, 2g;\n"
		 "libsdr rate_bps; default unpaced)"},
	{.name = "qps",
	 .arg = "N",
	 .id = O_QPS,
	 .kind = SDR_OPT_U32,
	 .min = 1,
	 .max = MAX_QPS,
	 .var = &o.qps,
	 .dflt = "1",
	 .help = "QP pairs, 1..1024: message n goes on pair n mod N\n"
		 "(--window counts the messages of all pairs); pair k is\n"
		 "on context k mod C of each side, C = min(N, --workers)"},
	{.name = "gap-us",
	 .arg = "US",
	 .id = O_GAP,
	 .kind = SDR_OPT_DOUBLE,
	 .fmax = 10e6,
	 .var = &o.gap_us,
	 .help = "on/off traffic: a QP posts its next send US after its\n"
		 "last one completed and has one in flight at most; the\n"
		 "peak rate of each paced QP over 10 of its frame times is\n"
		 "reported (default 0: sends back to back)"},
	{.name = "flow-gap",
	 .arg = "SEC",
	 .id = O_FLOW_GAP,
	 .kind = SDR_OPT_DOUBLE,
	 .fmax = 600,
	 .var = &o.flow_gap,
	 .help = "flows: flow k starts k x SEC after the first (default 0)"},
	{.name = "flow-win",
	 .arg = "SEC",
	 .id = O_FLOW_WIN,
	 .kind = SDR_OPT_DOUBLE,
	 .fmax = 60,
	 .flags = SDR_OPTF_GT_MIN,
	 .var = &o.flow_win,
	 .dflt = "1",
	 .help = "flows: goodput windows, Jain's index per window (default 1)"},
	{.name = "path-trace",
	 .arg = "SEC",
	 .id = O_PATH_TRACE,
	 .kind = SDR_OPT_DOUBLE,
	 .fmax = 60,
	 .flags = SDR_OPTF_GT_MIN,
	 .var = &o.path_trace,
	 .help = "bw/lat: every SEC, the sender's frames per path (--paths)\n"
		 "and the receiver's link emulator lanes (telemetry), printed\n"
		 "as a JSON line {\"mode\":\"paths\"} at the end\n"
		 "(host/perf/paths_plot.py: PNG; docs/multipath.md)"},
	{.name = "imm",
	 .arg = "VALUE",
	 .id = O_IMM,
	 .kind = SDR_OPT_U32,
	 .var = &o.imm,
	 .dflt = "0",
	 .help = "user immediate of every send (0 = none: a message of\n"
		 "n packets is n packets; else messages of fewer than 8\n"
		 "packets add immediate-only packets up to 8)"},
	{.name = "recv-timeout-ms",
	 .arg = "MS",
	 .id = O_RTIMEOUT,
	 .kind = SDR_OPT_DOUBLE,
	 .fmax = 3600e3,
	 .var = &o.recv_timeout_ms,
	 .help = "rel none: a receive whose send completed MS ago is\n"
		 "completed partially (default 200; 0 = wait for ever)"},
	{.name = "timeout",
	 .arg = "SEC",
	 .id = O_TIMEOUT,
	 .kind = SDR_OPT_DOUBLE,
	 .fmax = 3600,
	 .flags = SDR_OPTF_GT_MIN,
	 .var = &o.timeout,
	 .dflt = "10",
	 .help = "fail a run after SEC s without progress"},
	{.name = "json-only",
	 .id = O_JSON_ONLY,
	 .kind = SDR_OPT_BOOL,
	 .var = &o.json_only,
	 .help = "print only the JSON line of each run"},
	SDR_OPT_SECTION("Codec:"),
	{.name = "code",
	 .arg = "rs|xor",
	 .fn = perf_on_list_opt,
	 .id = O_CODE,
	 .dflt = "rs",
	 .help = "the erasure code"},
	{.name = "k",
	 .arg = "K",
	 .id = O_K,
	 .kind = SDR_OPT_U32,
	 .min = 1,
	 .max = 254,
	 .var = &o.k,
	 .dflt = "32",
	 .help = "data chunks per submessage"},
	{.name = "m",
	 .arg = "M",
	 .id = O_M,
	 .kind = SDR_OPT_U32,
	 .min = 1,
	 .max = 254,
	 .var = &o.m,
	 .dflt = "8",
	 .help = "parity chunks per submessage"},
	{.name = "chunk",
	 .arg = "BYTES",
	 .id = O_CHUNK,
	 .kind = SDR_OPT_SIZE,
	 .min = 1,
	 .max = 64u << 20,
	 .var = &o.chunk,
	 .dflt = "4K",
	 .help = "chunk size"},
	SDR_OPT_SECTION("Sweep (comma-separated lists):"),
	{.name = "sizes",
	 .arg = "LIST",
	 .fn = perf_on_list_opt,
	 .id = O_SIZES,
	 .dflt = "4K,64K,1M",
	 .help = "message sizes"},
	{.name = "loss",
	 .arg = "LIST",
	 .fn = perf_on_list_opt,
	 .id = O_LOSS,
	 .dflt = "0",
	 .help = "loss rates, appended to --link as loss=P"},
	{.name = "schemes",
	 .arg = "LIST",
	 .fn = perf_on_list_opt,
	 .id = O_SCHEMES,
	 .dflt = "none",
	 .help = "schemes: none, sr, auto, ec (= --ec) or an EC code\n"
		 "rs:K:M / xor:K:M"},
	{.name = "sweep-mode",
	 .arg = "bw|lat",
	 .fn = perf_on_list_opt,
	 .id = O_SWEEP_MODE,
	 .dflt = "lat",
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
		 "  flows   --qps competing flows, each its own --window (default 16), for\n"
		 "          --duration (default 10 s): per-flow goodput, Jain's index per\n"
		 "          --flow-win, the emulator's queue and CE marks, each flow's\n"
		 "          controller rate and CE fraction (host/perf/flows_plot.py: PNG)\n"
		 "\n",
	.footer = "\n"
		  "Output: a human block per run and exactly one JSON line (starting with '{');\n"
		  "keys in docs/benchmarks.md. Exit 0 if every run succeeded (skipped schemes\n"
		  "included), 1 otherwise, 2 on a usage error.\n",
	.opt = opts,
};

int parse_opts(int argc, char **argv)
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
	    strcmp(o.mode, "sweep") && strcmp(o.mode, "flows")) {
		fprintf(stderr, "sdr-perf: unknown mode '%s' (bw, lat, codec, sweep, flows)\n",
			o.mode);
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
