/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-pacer-bench: the pacer of sdr-dpu (common/sdr_wheel.h's transmit
 * scheduler, the code the firmware's workers run) driven the way a worker
 * drives it, side by side with the same loop without a pacer: what pacing
 * costs per poll and per frame, and how precise it is (docs/benchmarks.md
 * §4.6, §8).
 *
 * The work: N flows (QPs) of frames of B bytes, each at share/N of the port
 * rate, under the port rate, always backlogged or fed messages (--msg),
 * served by a worker loop that polls every --poll-ns of virtual time and may
 * emit at most --budget frames per poll (a TX burst). As in the firmware, a
 * poll visits the flows the scheduler hands out (due, port due), and a flow
 * that gets a message is visited at once (a touched QP). Virtual time: a TSC
 * of --hz cycles/s that the loop advances itself, so the emitted schedule is
 * exact and repeatable; the CPU cost is the wall time of the loop.
 *
 * "null" is the same loop without a pacer (every poll emits --budget
 * frames): the cost of the loop and the bookkeeping, to subtract.
 *
 * Precision figures (virtual time): per flow and 1 ms window, the
 * largest deviation of the bytes sent from rate x window (after the first
 * window); the largest bytes of one flow in a window of 10 of its frame
 * times over what its rate allows there; the aggregate rate over the run
 * against the sum of the rates (or the bytes offered).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sdr_units.h"
#include "sdr_wheel.h"
#include "sdr_opts.h"
#include "sdr_wire.h"

struct opts {
	char flows[128];
	char frames[128];
	uint64_t port_bps;
	double share;
	uint64_t poll_ns;
	uint64_t sim_ms;
	uint64_t hz;
	unsigned budget;
	uint64_t burst; /* catch-up bound (sdr-dpu --pace-burst); 0 = its default */
	unsigned shift; /* wheel: 2^shift cycles per slot */
	unsigned reps;
	uint64_t msg; /* 0 = always backlogged; else message bytes */
	double load;  /* offered load per flow, fraction of its rate */
	int json_only;
};

static struct opts o = {
	.flows = "1,16,256",
	.port_bps = 10000000000ull,
	.share = 0.95,
	.poll_ns = 200,
	.sim_ms = 100,
	.hz = 2000000000ull,
	.budget = 32,
	.shift = 12,
	.reps = 3,
	.load = 0.5,
};

/* ---------------- per-flow bookkeeping (same for every variant) ------ */

struct fstat {
	uint64_t rate;             /* bytes/s configured */
	uint64_t bytes;            /* sent in total */
	uint64_t win, win_bytes;   /* deviation window (index, bytes) */
	uint64_t pwin, pwin_bytes; /* peak window */
	double max_dev;            /* max |window bytes - expected| / expected, windows >= 1 */
	double max_peak;           /* max peak-window bytes / (rate x peak window) */
	uint64_t backlog;          /* frames waiting (--msg) */
};

static struct fstat *fs;
static uint32_t nf;
static uint64_t win_cyc, pwin_cyc;

static inline void close_window(struct fstat *s)
{
	double exp = (double)s->rate * (double)win_cyc / (double)o.hz;
	if (s->win >= 1 && exp > 0) {
		double d = fabs((double)s->win_bytes - exp) / exp;
		if (d > s->max_dev)
			s->max_dev = d;
	}
}

static inline void record(uint32_t i, uint64_t now, uint64_t b)
{
	struct fstat *s = &fs[i];
	uint64_t wi = now / win_cyc, pi = now / pwin_cyc;

	if (wi != s->win) {
		close_window(s);
		/* windows without a frame count as empty ones */
		for (uint64_t k = s->win + 1; k < wi; k++) {
			s->win = k;
			s->win_bytes = 0;
			close_window(s);
		}
		s->win = wi;
		s->win_bytes = 0;
	}
	if (pi != s->pwin) {
		s->pwin = pi;
		s->pwin_bytes = 0;
	}
	s->win_bytes += b;
	s->pwin_bytes += b;
	s->bytes += b;
	double peak = (double)s->pwin_bytes * (double)o.hz / ((double)s->rate * (double)pwin_cyc);
	if (peak > s->max_peak)
		s->max_peak = peak;
}

static void reset_stats(uint64_t qp_rate)
{
	for (uint32_t i = 0; i < nf; i++)
		fs[i] = (struct fstat){.rate = qp_rate};
}

/* Offered load (--msg): flow k mod N gets a message of msg_frames frames at
 * k x period / N, so each flow sees one message per period, staggered. */
static uint64_t arr_k, arr_next, arr_period, msg_frames, fs_frame;

static void arrivals_reset(void)
{
	arr_k = 0;
	arr_next = 0;
}

/* Returns the flow that just got a message, or UINT32_MAX. */
static inline uint32_t arrival(uint64_t now)
{
	uint32_t i;

	if (!o.msg || arr_next > now)
		return UINT32_MAX;
	i = (uint32_t)(arr_k % nf);
	fs[i].backlog += msg_frames;
	arr_k++;
	arr_next = (uint64_t)((unsigned __int128)arr_k * arr_period / nf);
	return i;
}

static inline int has_work(uint32_t i)
{
	return !o.msg || fs[i].backlog;
}

static inline void took(uint32_t i)
{
	if (o.msg)
		fs[i].backlog--;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---------------- the three loops ------------------------------------ */

struct result {
	double wall_s;
	uint64_t frames, polls, checks, visits;
};

static void run_null(uint64_t b, uint64_t end, uint64_t step, struct result *r)
{
	uint32_t rr = 0;
	arrivals_reset();
	for (uint64_t t = 0; t < end; t += step) {
		while (arrival(t) != UINT32_MAX)
			;
		for (unsigned k = 0; k < o.budget; k++) {
			record(rr, t, b);
			rr = rr + 1 == nf ? 0 : rr + 1;
			r->frames++;
		}
		r->polls++;
	}
}

/* sdr-dpu's default catch-up bound (firmware/prim/txq.h sdr_pace_burst()):
 * 200 us of the rate, at least 64 KiB; or --burst */
static uint64_t slack_of(uint64_t rate)
{
	if (o.burst)
		return o.burst;
	return rate / 5000 > 64 * 1024 ? rate / 5000 : 64 * 1024;
}

/* One visit of flow @p i at @p t, as the worker's (firmware/loop/worker.c):
 * frames while it has some, the budget lasts and the pacer says yes; then
 * it is filed again (backlogged) or idle. */
static void visit(struct sdr_sched *s, uint32_t i, uint64_t t, uint64_t b, unsigned *budget,
		  struct result *r)
{
	s->stall = 0;
	r->visits++;
	while (has_work(i) && *budget) {
		r->checks++;
		if (!sdr_sched_ready(s, i, t))
			break;
		sdr_sched_charge(s, i, (uint32_t)b, t);
		record(i, t, b);
		took(i);
		r->frames++;
		(*budget)--;
	}
	sdr_sched_done(s, i, has_work(i));
}

static void run_wheel(uint64_t b, uint64_t end, uint64_t step, uint64_t qp_rate,
		      struct sdr_sched *s, struct sdr_wheel_flow *f, uint32_t *touched,
		      struct result *r)
{
	uint64_t port_rate = o.port_bps / 8;

	sdr_sched_init(s, f, nf, 1, o.hz, o.shift, 0);
	sdr_sched_port_rate(s, 0, port_rate, slack_of(port_rate));
	for (uint32_t i = 0; i < nf; i++) {
		sdr_sched_flow_rate(s, i, qp_rate, slack_of(qp_rate));
		if (!o.msg)
			sdr_sched_done(s, i, 1); /* backlogged from the start */
	}
	arrivals_reset();
	for (uint64_t t = 0; t < end; t += step) {
		unsigned budget = o.budget, nt = 0;
		uint32_t i;

		while ((i = arrival(t)) != UINT32_MAX)
			touched[nt++] = i;
		sdr_sched_begin(s, t);
		while (budget && (i = sdr_sched_next(s, t)) != SDR_WHEEL_NIL)
			visit(s, i, t, b, &budget, r);
		for (unsigned k = 0; k < nt && budget; k++) /* messages: visited at once */
			if (!f[touched[k]].queued)
				visit(s, touched[k], t, b, &budget, r);
		r->polls++;
	}
}

/* ---------------- driver --------------------------------------------- */

struct summary {
	double ns_per_frame, ns_per_poll, agg_ratio, max_dev, max_peak, visits_per_frame;
	uint64_t frames, checks;
};

static void summarise(const struct result *r, uint64_t end, uint64_t qp_rate, struct summary *s)
{
	double secs = (double)end / (double)o.hz, dev = 0, peak = 0, offered;
	uint64_t bytes = 0;

	for (uint32_t i = 0; i < nf; i++) {
		if ((fs[i].win + 1) * win_cyc <= end) /* only whole windows */
			close_window(&fs[i]);
		bytes += fs[i].bytes;
		if (fs[i].max_dev > dev)
			dev = fs[i].max_dev;
		if (fs[i].max_peak > peak)
			peak = fs[i].max_peak;
	}
	s->frames = r->frames;
	s->checks = r->checks;
	s->ns_per_frame = r->frames ? r->wall_s * 1e9 / (double)r->frames : 0;
	s->ns_per_poll = r->polls ? r->wall_s * 1e9 / (double)r->polls : 0;
	s->visits_per_frame = r->frames ? (double)r->visits / (double)r->frames : 0;
	/* backlogged: against the sum of the rates; --msg: against the bytes
	 * offered (messages that arrived) */
	offered = o.msg ? (double)arr_k * (double)msg_frames * (double)fs_frame
			: secs * (double)qp_rate * nf;
	s->agg_ratio = (double)bytes / offered;
	s->max_dev = dev;
	s->max_peak = peak;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int run_one(uint32_t flows, uint64_t b)
{
	uint64_t step = o.poll_ns * o.hz / 1000000000ull, end = o.sim_ms * o.hz / 1000;
	uint64_t qp_rate = (uint64_t)((double)o.port_bps / 8 * o.share / flows);
	struct sdr_sched *s = calloc(1, sizeof(*s));
	struct sdr_wheel_flow *wf = calloc(flows, sizeof(*wf));
	uint32_t *touched = calloc(flows, sizeof(*touched));
	struct summary sm[2];
	double wall[2][16];
	static const char *const name[2] = {"null", "timing_wheel"};

	nf = flows;
	fs = calloc(flows, sizeof(*fs));
	fs_frame = b;
	/* deviation window: 1 ms, or 100 frames of one flow if longer; peak
	 * window: 10 frames of one flow */
	win_cyc = (uint64_t)((double)b * 100 * (double)o.hz / (double)qp_rate);
	if (win_cyc < o.hz / 1000)
		win_cyc = o.hz / 1000;
	pwin_cyc = (uint64_t)((double)b * 10 * (double)o.hz / (double)qp_rate);
	/* payload: the frame less the headers and ICRC of a data packet */
	uint64_t pay = b - sdr_wire_data_frame_bytes(0, 1);
	msg_frames = o.msg ? (o.msg + pay - 1) / pay : 0;
	arr_period = o.msg ? (uint64_t)((double)msg_frames * (double)b * (double)o.hz /
					((double)qp_rate * o.load))
			   : 0;
	if (!s || !wf || !touched || !fs || !step) {
		fprintf(stderr, "sdr-pacer-bench: out of memory or --poll-ns too small\n");
		return -1;
	}
	/* Interleave the variants, o.reps times each; report the median. */
	for (unsigned rep = 0; rep < o.reps; rep++) {
		for (int v = 0; v < 2; v++) {
			struct result r = {0};
			double t0;
			reset_stats(qp_rate);
			t0 = now_s();
			if (v == 0)
				run_null(b, end, step, &r);
			else
				run_wheel(b, end, step, qp_rate, s, wf, touched, &r);
			r.wall_s = now_s() - t0;
			wall[v][rep] = r.wall_s;
			if (rep + 1 == o.reps) {
				qsort(wall[v], o.reps, sizeof(double), cmp_d);
				r.wall_s = wall[v][o.reps / 2];
				summarise(&r, end, qp_rate, &sm[v]);
			}
		}
	}
	if (!o.json_only) {
		printf("  ---- flows %u, frame %" PRIu64
		       " B, port %.3g Gbit/s, each flow %.4g Mbit/s,"
		       " poll %" PRIu64 " ns, %" PRIu64 " ms virtual, median of %u ----\n",
		       flows, b, o.port_bps / 1e9, qp_rate * 8 / 1e6, o.poll_ns, o.sim_ms, o.reps);
		if (o.msg)
			printf("  offered: a %" PRIu64
			       " B message per flow every %.1f us (load %.2f)\n",
			       o.msg, (double)arr_period * 1e6 / (double)o.hz, o.load);
		printf("  %-13s %10s %9s %9s %8s %10s %12s %12s\n", "pacer", "frames", "ns/frame",
		       "ns/poll", "visits/f", "rate", "max dev", "max peak");
		printf("  %-13s %10" PRIu64 " %9.2f %9.1f %8s %10s %12s %12s\n", name[0],
		       sm[0].frames, sm[0].ns_per_frame, sm[0].ns_per_poll, "-", "-", "-", "-");
		if (o.msg) /* on/off traffic: window deviation means nothing */
			printf("  %-13s %10" PRIu64 " %9.2f %9.1f %8.3f %10.5f %12s %11.2fx\n",
			       name[1], sm[1].frames, sm[1].ns_per_frame, sm[1].ns_per_poll,
			       sm[1].visits_per_frame, sm[1].agg_ratio, "-", sm[1].max_peak);
		else
			printf("  %-13s %10" PRIu64 " %9.2f %9.1f %8.3f %10.5f %11.3f%% %11.2fx\n",
			       name[1], sm[1].frames, sm[1].ns_per_frame, sm[1].ns_per_poll,
			       sm[1].visits_per_frame, sm[1].agg_ratio, sm[1].max_dev * 100,
			       sm[1].max_peak);
	}
	printf("{\"mode\":\"pacer\",\"pacer\":\"%s\",\"flows\":%u,\"frame_bytes\":%" PRIu64
	       ",\"port_bps\":%" PRIu64 ",\"flow_bps\":%" PRIu64 ",\"poll_ns\":%" PRIu64
	       ",\"sim_ms\":%" PRIu64 ",\"frames\":%" PRIu64 ",\"checks\":%" PRIu64
	       ",\"visits_per_frame\":%.4f,\"ns_per_frame\":%.3f,\"ns_per_poll\":%.3f"
	       ",\"null_ns_per_frame\":%.3f,\"null_ns_per_poll\":%.3f"
	       ",\"rate_ratio\":%.6f,\"max_window_dev\":%.6f,\"max_peak\":%.4f"
	       ",\"msg_bytes\":%" PRIu64 ",\"load\":%.3f"
	       ",\"wheel_slot_cycles\":%u,\"hz\":%" PRIu64 "}\n",
	       name[1], flows, b, o.port_bps, qp_rate * 8, o.poll_ns, o.sim_ms, sm[1].frames,
	       sm[1].checks, sm[1].visits_per_frame, sm[1].ns_per_frame, sm[1].ns_per_poll,
	       sm[0].ns_per_frame, sm[0].ns_per_poll, sm[1].agg_ratio, sm[1].max_dev,
	       sm[1].max_peak, o.msg, o.msg ? o.load : 1.0, 1u << o.shift, o.hz);
	fflush(stdout);
	free(s);
	free(wf);
	free(touched);
	free(fs);
	return 0;
}

/* Comma-separated list of at most 16 numbers in [lo, hi]; count or -1. */
static int parse_list(const char *opt, const char *str, uint64_t lo, uint64_t hi, uint64_t *out)
{
	char buf[128], *sp = NULL;
	int n = 0;

	snprintf(buf, sizeof(buf), "%s", str);
	for (char *a = strtok_r(buf, ",", &sp); a; a = strtok_r(NULL, ",", &sp)) {
		if (n == 16 || sdr_parse_u64(a, &out[n], 0) || out[n] < lo || out[n] > hi) {
			fprintf(stderr,
				"sdr-pacer-bench: %s: '%s' is not in [%" PRIu64 ", %" PRIu64
				"] (or more than 16 values)\n",
				opt, a, lo, hi);
			return -1;
		}
		n++;
	}
	if (!n)
		fprintf(stderr, "sdr-pacer-bench: %s: empty list\n", opt);
	return n ? n : -1;
}

/* ---------------- options ---------------- */

/* --flows and --frames: kept as text, parsed against their ranges later */
static int on_list(const struct sdr_opt *d, const char *arg, void *ctx)
{
	(void)ctx;
	if (strlen(arg) >= sizeof(o.flows) || !*arg) {
		fprintf(stderr, "sdr-pacer-bench: list too long or empty\n");
		return -2;
	}
	strcpy(d->var, arg);
	return 0;
}

#define U64(f, lo, hi) .kind = SDR_OPT_U64, .min = (lo), .max = (hi), .var = &o.f
#define U32(f, lo, hi) .kind = SDR_OPT_U32, .min = (lo), .max = (hi), .var = &o.f
/* share and load: a fraction in (0, 1] */
#define FRACTION(f) \
	.kind = SDR_OPT_DOUBLE, .fmin = 0, .fmax = 1, .flags = SDR_OPTF_GT_MIN, .var = &o.f

static const struct sdr_opt opts[] = {
	{.name = "flows",
	 .arg = "LIST",
	 .fn = on_list,
	 .var = o.flows,
	 .dflt = "1,16,256",
	 .help = "flow (QP) counts"},
	{.name = "frames",
	 .arg = "LIST",
	 .fn = on_list,
	 .var = o.frames,
	 .help = "frame sizes in bytes (default 4174,142: 4 KiB and 64 B of\n"
		 "payload plus 78 B of headers and ICRC)"},
	{.name = "port-rate",
	 .arg = "RATE",
	 .kind = SDR_OPT_RATE,
	 .min = 1000000,
	 .var = &o.port_bps,
	 .dflt = "10g",
	 .help = "port rate, bits/s"},
	{.name = "share",
	 .arg = "F",
	 FRACTION(share),
	 .dflt = "0.95",
	 .help = "the flows' rates add up to F x port rate"},
	{.name = "poll-ns",
	 .arg = "N",
	 U64(poll_ns, 1, 0),
	 .dflt = "200",
	 .help = "virtual time between worker polls"},
	{.name = "budget",
	 .arg = "N",
	 U32(budget, 1, 4096),
	 .dflt = "32",
	 .help = "frames per poll at most"},
	{.name = "sim-ms",
	 .arg = "N",
	 U64(sim_ms, 1, 100000),
	 .dflt = "100",
	 .help = "virtual duration of each run"},
	{.name = "hz",
	 .arg = "N",
	 U64(hz, 1000000, 10000000000ull),
	 .dflt = "2000000000",
	 .help = "virtual TSC frequency"},
	{.name = "burst",
	 .arg = "BYTES",
	 .kind = SDR_OPT_SIZE,
	 .min = 1,
	 .var = &o.burst,
	 .help = "catch-up bound of a late flow or port (sdr-dpu --pace-burst;\n"
		 "default as sdr-dpu: 200 us of the rate, at least 64 KiB)"},
	{.name = "slot-shift",
	 .arg = "N",
	 U32(shift, 1, 30),
	 .help = "timing wheel: 2^N cycles per slot (default 12, as sdr-dpu;\n"
		 "4096 slots)"},
	{.name = "reps",
	 .arg = "N",
	 U32(reps, 1, 15),
	 .help = "runs of each variant, interleaved; median wall time (default 3)"},
	{.name = "json", .kind = SDR_OPT_BOOL, .var = &o.json_only, .help = "JSON lines only"},
	{.name = "help", .short_name = 'h', .help = "this text"},
	{.name = "msg",
	 .arg = "BYTES",
	 .kind = SDR_OPT_SIZE,
	 .max = 1ull << 30,
	 .var = &o.msg,
	 .help = "offered load instead of backlogged flows: each flow gets a\n"
		 "message of BYTES of payload (frame - 78 B each) once per\n"
		 "period, periods staggered across flows (default 0: always\n"
		 "backlogged)"},
	{.name = "load",
	 .arg = "F",
	 FRACTION(load),
	 .help = "with --msg: offered load of each flow, fraction of its rate\n(default 0.5)"},
	SDR_OPT_END,
};

static const struct sdr_opts opt_set = {
	.prog = "sdr-pacer-bench",
	.usage = "usage: sdr-pacer-bench [options]\n"
		 "sdr-dpu's pacer (the timing wheel's transmit scheduler, common/sdr_wheel.h)\n"
		 "driven as a worker drives it, beside the same loop without a pacer: CPU\n"
		 "cost (wall time of the loop) and precision (virtual time) of pacing N flows\n"
		 "under a port rate.\n",
	.footer = "Output: a block per configuration and one JSON line. ns/frame and ns/poll\n"
		  "are wall time (the null row is the loop and bookkeeping alone: every poll\n"
		  "emits --budget frames, no pacer); visits/f = QP visits the scheduler handed\n"
		  "out per frame (1.0: only due QPs are visited); rate = bytes sent / (sum of\n"
		  "rates x time), or / bytes offered with --msg; max dev = the largest\n"
		  "deviation of one flow's bytes in a window of max(1 ms, 100 frames) from its\n"
		  "rate; max peak = the largest bytes of one flow in a window of 10 of its\n"
		  "frame times, over what its rate allows there (1.0x = never faster than the\n"
		  "rate).\n",
	.opt = opts,
	.col = 20,
};

int main(int argc, char **argv)
{
	int first;

	/* 4 KiB and 64 B of payload: the frames the firmware sends for them
	 * (with an immediate, opcode 0x2B; 4 B less without) */
	snprintf(o.frames, sizeof(o.frames), "%u,%u", sdr_wire_data_frame_bytes(4096, 1),
		 sdr_wire_data_frame_bytes(64, 1));
	first = sdr_opts_parse(&opt_set, argc, argv, NULL);
	if (first == SDR_OPTS_HELP)
		return 0;
	if (first < 0)
		return 2;
	if (first < argc) {
		fprintf(stderr, "sdr-pacer-bench: unexpected argument '%s'\n", argv[first]);
		return 2;
	}
	uint64_t fl[16], fr[16];
	int nfl = parse_list("--flows", o.flows, 1, 65536, fl);
	int nfr = parse_list("--frames", o.frames, 60, 10000, fr);
	if (nfl < 0 || nfr < 0)
		return 2;
	for (int i = 0; i < nfl; i++)
		for (int j = 0; j < nfr; j++)
			if (run_one((uint32_t)fl[i], fr[j]))
				return 1;
	return 0;
}
