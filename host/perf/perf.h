/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-perf's own declarations, shared by its files (host/perf/, a host program
 * above libsdr): the options, the rig, one run's parameters and result, and the
 * entry points of each concern. Calls go main/sweep -> engine, report, codec ->
 * rig, telemetry, measure -> argv, opts, util.
 */
#ifndef SDR_PERF_H
#define SDR_PERF_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sdr.h"
#include "sdr_ec.h"
#include "sdr_opts.h"

#define MAX_LIST 32
#define TS_RING 1024u      /* >= messages outstanding (all QPs, each direction) */
#define MAX_QPS 1024       /* --qps: QP pairs (a daemon instance holds 1024) */
#define MAX_CTXS 16        /* contexts per side (one per worker, at most) */
#define PACE_TRACE 1048576 /* --pace-trace of the daemons when pacing is measured */
#define MAX_LAT_SAMPLES (4u << 20)
#define MAX_WINDOWS 64

/* ------------------------------------------------------------------ */
/* options (perf_opts.c, perf_optab.c)                                 */

enum rig_kind { RIG_RING, RIG_VETH, RIG_ATTACH };
extern const char *const rig_names[];
extern const char *const rig_pmds[];

struct opts {
	const char *mode;
	enum rig_kind rig;
	const char *dpu_a, *dpu_b, *dpu_bin;
	uint64_t size;
	uint64_t iters, warmup;
	int iters_set, warmup_set, window_set;
	uint32_t window;
	double duration;      /* s; 0 = use iters */
	int rel;              /* enum sdr_reliability */
	uint16_t rel_ec;      /* rel EC: its code (--rel CODE or --ec), packed */
	int rel_code;         /* --rel named the EC code */
	struct sdr_scheme ec; /* --ec (default SDR_SCHEME_EC_DEFAULT) */
	uint32_t chunk_pkts, mtu, workers;
	const char *port_rate; /* passed through */
	uint64_t port_rate_bps;
	uint64_t rate_bps; /* --rate: each sending QP's rate_bps */
	uint32_t qps;      /* --qps: QP pairs */
	double gap_us;     /* --gap-us: on/off traffic, idle time of a QP */
	uint32_t imm;      /* --imm: every send's user immediate */
	const char *link;
	int no_icrc;
	int busy_poll;
	uint32_t paths;         /* --paths: the daemons' --paths (0 = not given) */
	uint32_t channels;      /* --channels: of every QP (0/1 = an ordinary QP) */
	uint32_t stripe_chunks; /* --stripe: stripe of a channel, in chunks (0 = 1) */
	const char *eal_extra[16];
	int n_eal_extra;
	const char *dpu_extra[16];
	int n_dpu_extra;
	int json_only;
	double timeout;         /* s without progress before a run fails */
	double recv_timeout_ms; /* NONE: complete a stuck receive partially */
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
	/* flows (perf_flows.c) */
	double flow_gap; /* s between the starts of two flows */
	double flow_win; /* s: goodput windows (Jain's index per window) */
	/* --path-trace (perf_paths.c) */
	double path_trace; /* s between two samples of the per-path frames (0 = off) */
};

extern struct opts o;                /* perf_opts.c */
extern volatile sig_atomic_t g_stop; /* perf_util.c; set on SIGINT, SIGTERM, SIGHUP */

enum {
	O_RIG = 1,
	O_DPU_A,
	O_DPU_B,
	O_DPU_BIN,
	O_SIZE,
	O_ITERS,
	O_WARMUP,
	O_WINDOW,
	O_DURATION,
	O_REL,
	O_EC,
	O_CHUNK_PKTS,
	O_PATHS,
	O_CHANNELS,
	O_STRIPE,
	O_MTU,
	O_WORKERS,
	O_PORT_RATE,
	O_RATE,
	O_LINK,
	O_NO_ICRC,
	O_BUSY,
	O_EAL,
	O_JSON_ONLY,
	O_TIMEOUT,
	O_RTIMEOUT,
	O_CODE,
	O_K,
	O_M,
	O_CHUNK,
	O_SIZES,
	O_LOSS,
	O_SCHEMES,
	O_SWEEP_MODE,
	O_KEEP_LOGS,
	O_DPU_ARG,
	O_QPS,
	O_GAP,
	O_IMM,
	O_FLOW_GAP,
	O_FLOW_WIN,
	O_PATH_TRACE,
};

/* The options of the rig and of the daemons, of the runs, of codec and sweep. */
int perf_on_rig_opt(const struct sdr_opt *d, const char *arg, void *ctx);
int perf_on_run_opt(const struct sdr_opt *d, const char *arg, void *ctx);
int perf_on_list_opt(const struct sdr_opt *d, const char *arg, void *ctx);
/* The command line into o: 0, or -1 after a message (exit 2). */
int parse_opts(int argc, char **argv);
int parse_scheme(const char *s, int *rel, uint16_t *ec, int *named_code);
const char *scheme_name(int rel, uint16_t ec, char *buf, size_t len);

/* ------------------------------------------------------------------ */
/* clock and JSON text (perf_util.c)                                   */

double now_s(void);
void sleep_ms(unsigned ms);
void sleep_us(unsigned us);
/* The measuring loop naps PERF_NAP_US at a time once nothing completed for
 * PERF_NAP_AFTER_S (not with --busy-poll): a window waiting a long RTT
 * leaves the CPU to the daemons; a run with completions every few
 * microseconds never naps. */
#define PERF_NAP_AFTER_S 2e-3
#define PERF_NAP_US 100

/* A growable string for JSON / command lines. */
struct sbuf {
	char *p;
	size_t len, cap;
};

void sb_add(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void sb_jstr(struct sbuf *b, const char *s);
void sb_jnum(struct sbuf *b, const char *key, double v);

/* ------------------------------------------------------------------ */
/* the rig (perf_rig.c) and the daemons' command lines (perf_argv.c)   */

#define MAX_DAEMONS 2
/* The NAME=VALUE lines of 'rig.sh veth-up' that sdr-perf uses. */
enum { RV_NS_A, RV_NS_B, RV_DIP_A, RV_DIP_B, RV_DMAC_A, RV_DMAC_B, RV_VDEV_A, RV_VDEV_B, RV__N };

struct rig {
	enum rig_kind kind;
	char tmpdir[64];
	char sock_a[128], sock_b[128];
	pid_t pid[MAX_DAEMONS];
	char log[MAX_DAEMONS][160];
	int ndaemons;
	char ns_tag[16];              /* rig.sh veth-up TAG; "" = no namespaces */
	char vars[RV__N][128];        /* what rig.sh veth-up printed */
	char link[512];               /* effective --link spec ("" = none) */
	char prefix[MAX_DAEMONS][64]; /* EAL file prefixes (telemetry sockets) */
};

extern struct rig *g_rig; /* for cleanup at exit */

int rig_start(struct rig *r, const char *link, uint64_t max_size);
void rig_stop(struct rig *r);
void cleanup_at_exit(void);

struct argv_b {
	char *v[128];
	char store[64][96];
	int n, ns;
};

void av(struct argv_b *a, const char *s);
void avf(struct argv_b *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
uint64_t max_msg_for(uint64_t size);
struct sdr_scheme;
/** A QP's attributes for messages of @p size in scheme @p sch: max_msg,
 *  chunk, reliability and EC code (the rest left as they are). */
void qp_attr_for(struct sdr_qp_attr *attr, uint64_t size, const struct sdr_scheme *sch);
void av_common_eal(struct argv_b *a, const char *prefix, int mem_mb);
void av_lcores(struct argv_b *a, unsigned workers, unsigned first_cpu);
int pacing_measured(void);
void av_fw_global(struct argv_b *a, uint64_t max_msg);
void av_fw_inst(struct argv_b *a, const struct rig *r);

/* ------------------------------------------------------------------ */
/* one run (perf_engine.c), its figures (perf_measure.c, perf_telemetry.c) */

enum {
	WK_LOOPS,
	WK_WORK,
	WK_POLLS,
	WK_CYCLES,
	WK_FRAMES,
	WK_STALLS,
	WK_VPACED,
	WK_VTOUCHED,
	WK_VTIMER,
	WK_HANDOFF,
	WK__N
};

struct run_params {
	const char *mode; /* "bw" or "lat" */
	uint64_t size, iters, warmup;
	uint32_t window;
	double duration;
	int rel;
	uint16_t ec; /* rel EC: packed code, k, m */
};

struct run_result {
	int ok; /* 1 measured, 0 failed, -1 skipped */
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
	double bound_gbps;   /* 2 copies + 2 CRC passes per CPU-second (bound_baseline) */
	double cpu_s;        /* worker CPU seconds during the measurement */
	double gbps_per_cpu; /* goodput per worker CPU-second */
	double mpps_per_cpu; /* packets per worker CPU-second */
	unsigned qps, ctxs;
	double setup_s; /* creating and connecting every QP (both sides) */
	double rss_kib_qp, rss_kib_qp_end, vsz_kib_qp; /* daemons' memory per QP */
	double wk[WK__N];                    /* workers' counters during the measurement */
	double peak_win_us, peak, peak_idle; /* --gap-us / paced: peak over 10 frame times */
	int npeak;                           /* QPs whose departures were read */
};

double workers_cpu_s(const struct rig *r);
void workers_read(const struct rig *r, double *v);
void daemons_mem(const struct rig *r, double *rss, double *vsz);
void read_peaks(const struct rig *rig, const struct run_params *p, struct run_result *res);

void lat_stats(float *v, uint64_t n, double *out, int with_min);
uint64_t pkts_per_msg(uint64_t size);
double msg_wire_bytes(uint64_t size);
double memcpy_baseline(uint8_t *src, size_t src_len, uint8_t *dst, size_t dst_len, uint64_t bytes);
double bound_baseline(uint8_t *src, size_t src_len, uint8_t *dst, size_t dst_len, uint64_t bytes);

void run_engine(const struct rig *rig, const struct run_params *p, struct run_result *res);
void print_run(const struct rig *rig, const struct run_params *p, const struct run_result *r);
/* perf_opts.c: one run's parameters from the options */
void fill_params(struct run_params *p, const char *mode, uint64_t size, int rel, uint16_t ec);

/* ------------------------------------------------------------------ */
/* the modes                                                           */

int run_codec(void); /* perf_codec.c */
int run_sweep(void); /* perf_sweep.c */
int run_flows(void); /* perf_flows.c: competing flows */

/* A telemetry request to daemon @p d (0 = a, 1 = b) of the rig: bytes of the
 * answer in @p out, or -1 (perf_telemetry.c); the number after "key": in it. */
int perf_tel_query(const struct rig *r, int d, const char *cmd, char *out, size_t len);
double perf_tel_num(const char *json, const char *key);
/* The same for command @p cmd ("/sdr/link") of side @p b (0: a, the
 * sender; 1: b): a ring rig is one daemon with instances 0 and 1, a veth
 * rig a daemon per side (instance 0); the instance is the command's
 * parameter, followed by @p more (",LANE") unless NULL. */
int perf_tel_side(const struct rig *r, int b, const char *cmd, const char *more, char *out,
		  size_t len);

/* --path-trace (perf_paths.c): per-path frames sampled during a run */
void path_trace_start(const struct rig *rig, double now);
void path_trace_tick(const struct rig *rig, double now);
void path_trace_print(const struct rig *rig);

#endif
