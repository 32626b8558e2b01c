/* SPDX-License-Identifier: BSD-3-Clause */
/* Command line of sdr-dpu (the part after EAL's "--"), control-plane layer:
 * one table of typed, range-checked entries (common/sdr_opts.h) fills
 * struct sdr_cfg and its instances; a few handlers do what a type cannot.
 * Parsed before the EAL starts so that --help and --version work anywhere,
 * even under qemu. */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "rel.h"
#include "sdr_limits.h"
#include "sdr_opts.h"
#include "sdr_stripe.h"
#include "sdr_units.h"

#define SDR_STR_(x) #x
#define SDR_STR(x) SDR_STR_(x)
/* Per-client quotas (docs/host-api.md "Limits and quotas"): a quarter of
 * the instance's context (64) and QP (1024) tables, so that one client never
 * fills them; connections: its contexts and as many idle ones. */
#define QUOTA_CONNS_DEFAULT 32
#define QUOTA_CTXS_DEFAULT 16
#define QUOTA_QPS_DEFAULT 256
#define QUOTA_MR_GB_DEFAULT 16
#define CTL_REPLY_TO_DEFAULT 1000
#define CTL_HELLO_TO_DEFAULT 3000

struct cfg_ctx {
	struct sdr_cfg *cfg;
	struct sdr_inst_cfg *ic; /* the instance options apply to (--instance moves it) */
	int done;                /* --version served */
};

/* .id of the entries whose .off is in struct sdr_inst_cfg (the current
 * instance); the others' is in struct sdr_cfg */
enum { IN_CFG = 0, IN_INST = 1 };

static void *cfg_base(const struct sdr_opt *o, void *ctx)
{
	struct cfg_ctx *x = ctx;

	return o->id == IN_INST ? (void *)x->ic : (void *)x->cfg;
}

/* --- what a type cannot say ------------------------------------------- */

static int on_version(const struct sdr_opt *o, const char *arg, void *ctx)
{
	(void)o;
	(void)arg;
	printf("sdr-dpu %s (ABI %d.%d)\n", SDR_VERSION, SDR_ABI_MAJOR, SDR_ABI_MINOR);
	((struct cfg_ctx *)ctx)->done = 1;
	return 0;
}

static int on_ip(const struct sdr_opt *o, const char *arg, void *ctx)
{
	struct sdr_inst_cfg *ic = ((struct cfg_ctx *)ctx)->ic;

	(void)o;
	if (sdr_parse_ipv4(arg, &ic->ip)) {
		fprintf(stderr, "sdr-dpu: --ip: '%s' is not an IPv4 address\n", arg);
		return -2;
	}
	ic->has_ip = 1;
	return 0;
}

/* --mac (.id 0) and --peer-mac (.id 1) */
static int on_mac(const struct sdr_opt *o, const char *arg, void *ctx)
{
	struct sdr_inst_cfg *ic = ((struct cfg_ctx *)ctx)->ic;

	if (sdr_parse_mac(arg, o->id ? ic->peer_mac : ic->mac)) {
		fprintf(stderr, "sdr-dpu: --%s: '%s' is not a MAC address (aa:bb:cc:dd:ee:ff)\n",
			o->name, arg);
		return -2;
	}
	if (o->id)
		ic->has_peer_mac = 1;
	else
		ic->has_mac = 1;
	return 0;
}

static int on_link_peer(const struct sdr_opt *o, const char *arg, void *ctx)
{
	struct sdr_inst_cfg *ic = ((struct cfg_ctx *)ctx)->ic;

	(void)o;
	if (ic->n_link_peer == SDR_MAX_LINK_PEERS) {
		fprintf(stderr, "sdr-dpu: --link-peer: at most %u profiles per instance\n",
			SDR_MAX_LINK_PEERS);
		return -2;
	}
	ic->link_peer[ic->n_link_peer++] = arg;
	return 0;
}

static int on_instance(const struct sdr_opt *o, const char *arg, void *ctx)
{
	struct cfg_ctx *x = ctx;
	struct sdr_cfg *cfg = x->cfg;

	(void)o;
	(void)arg;
	if (cfg->ninst == SDR_MAX_INST) {
		fprintf(stderr, "sdr-dpu: at most %d instances\n", SDR_MAX_INST);
		return -2;
	}
	x->ic = &cfg->inst[cfg->ninst++];
	x->ic->port = -1;
	x->ic->name = NULL;
	return 0;
}

/* main() runs bridge.c before this parser sees --bridge */
static int on_bridge(const struct sdr_opt *o, const char *arg, void *ctx)
{
	(void)o;
	(void)arg;
	(void)ctx;
	fprintf(stderr, "sdr-dpu: --bridge is a mode of its own: sdr-dpu [EAL] -- --bridge "
			"[bridge options] (sdr-dpu --bridge --help)\n");
	return -2;
}

/* process-wide; parsing runs before any worker */
static int on_icrc_crc(const struct sdr_opt *o, const char *arg, void *ctx)
{
	int rc = sdr_icrc_select(arg);

	(void)o;
	(void)ctx;
	if (rc) {
		fprintf(stderr, "sdr-dpu: --icrc-crc: '%s' %s\n", arg,
			rc == -ENOTSUP ? "is not available on this CPU or build (PCLMULQDQ, x86-64)"
				       : "is not auto, isal or by8");
		return -2;
	}
	return 0;
}

static const struct sdr_opt_name qpn_random[] = {{"random", -1}, SDR_OPT_NAMES_END};
static const struct sdr_opt_name quota_keys[] = {{"uid", 0}, {"pid", 1}, SDR_OPT_NAMES_END};

/* the target: a field of the config, or of the current instance */
#define CFG(f) .off = offsetof(struct sdr_cfg, f), .id = IN_CFG
#define INST(f) .off = offsetof(struct sdr_inst_cfg, f), .id = IN_INST
#define U32(lo, hi) .kind = SDR_OPT_U32, .min = (lo), .max = (hi)
#define MS_MAX 3600000 /* an hour */

static const struct sdr_opt cfg_opts[] = {
	SDR_OPT_SECTION("\nPer-DPU-instance options (apply to the current instance; "
			"--instance starts the next):"),
	{.name = "name",
	 .arg = "PATH",
	 .kind = SDR_OPT_STRING,
	 INST(name),
	 .help = "unix socket hosts attach to (default /tmp/sdr-dpu.sock)"},
	{.name = "port",
	 .arg = "N",
	 .kind = SDR_OPT_INT,
	 .max = RTE_MAX_ETHPORTS - 1,
	 INST(port),
	 .help = "DPDK port id of this instance (default: next unused port)"},
	{.name = "ip", .arg = "A.B.C.D", .fn = on_ip, .help = "this DPU's IPv4 address (required)"},
	{.name = "mac",
	 .arg = "MAC",
	 .fn = on_mac,
	 .id = 0,
	 .help = "this DPU's MAC (default: the port's MAC; net_tap, whose\n"
		 "port MAC is its kernel interface's: 02:53:44:52 + the\n"
		 "port MAC's last two bytes; a port without a MAC, e.g.\n"
		 "net_ring: 02:53:44:52:PORT:INSTANCE+1)"},
	{.name = "peer-mac",
	 .arg = "MAC",
	 .fn = on_mac,
	 .id = 1,
	 .help = "static next-hop MAC for every peer (required, except with\n"
		 "--ring-pair where it defaults to the other instance's MAC)"},
	{.name = "link",
	 .arg = "SPEC",
	 .kind = SDR_OPT_STRING,
	 INST(link),
	 .help = "long-haul link emulator on this port's receive side\n"
		 "(e.g. delay=12.5ms,rate=1gbit,buffer=4MB,loss=1e-3,seed=7;\n"
		 "see docs/link-emulator.md); several paths (ECMP by the UDP\n"
		 "source port): SPEC | SPEC ..., or paths=N; with\n"
		 "--link-peer: the link of frames from sources no profile\n"
		 "lists"},
	{.name = "link-peer",
	 .arg = "[NAME:]IP[+IP...]:SPEC",
	 .fn = on_link_peer,
	 .help = "a per-peer link on the receive side (repeatable, at most\n"
		 "16): frames whose source IPv4 address is one of IPs take\n"
		 "the link SPEC (--link's syntax; empty = perfect link);\n"
		 "the peers of one profile share one emulated link (one\n"
		 "bottleneck FIFO). NAME labels its counters (default\n"
		 "peerN). E.g. into2:10.100.0.2+10.100.1.2:delay=12.5ms,\n"
		 "rate=2gbit,buffer=4MB"},
	{.name = "port-rate",
	 .arg = "RATE",
	 .kind = SDR_OPT_RATE,
	 .max = 10000000000000ull,
	 INST(port_rate),
	 .help = "pace everything this instance sends to RATE (bits/s:\n"
		 "10g, 2.5gbit, 800m, 1e9; default 0 = unpaced). QPs may\n"
		 "have their own, lower rate (libsdr qp attr rate_bps)"},
	{.name = "instance",
	 .fn = on_instance,
	 .help = "start describing another DPU instance in this process"},
	SDR_OPT_SECTION("\nGlobal options:"),
	{.name = "bridge",
	 .fn = on_bridge,
	 .help = "run as a bump in the wire between two ports with the link\n"
		 "emulator each way, not as a DPU (sdr-dpu --bridge --help)"},
	{.name = "ring-pair",
	 .kind = SDR_OPT_BOOL,
	 CFG(ring_pair),
	 .help = "create two ports joined back to back by a net_ring pair\n"
		 "(two DPUs in one process; needs two instances)"},
	{.name = "mtu",
	 .arg = "N",
	 U32(1024, 4096),
	 .flags = SDR_OPTF_POW2,
	 CFG(mtu),
	 .help = "RoCE path MTU: 1024, 2048 or 4096 (default 4096)"},
	{.name = "chunk-pkts",
	 .arg = "N",
	 U32(1, 1024),
	 CFG(chunk_pkts),
	 .help = "packets per bitmap chunk, 1..1024 (default 16)"},
	{.name = "max-msg",
	 .arg = "BYTES",
	 .kind = SDR_OPT_SIZE32,
	 .min = 1,
	 .max = 1u << 30,
	 CFG(max_msg),
	 .help = "default and upper bound of a QP's max message size M; K/M/G\n"
		 "suffixes (default 64M; at most 1G at 4096 MTU)"},
	{.name = "generations",
	 .arg = "G",
	 U32(1, 16),
	 .flags = SDR_OPTF_POW2,
	 CFG(generations),
	 .help = "QPNs (message generations) per SDR QP, power of two 1..16\n(default 4)"},
	{.name = "workers",
	 .arg = "N",
	 U32(1, SDR_MAX_WORKERS),
	 CFG(workers),
	 .help = "worker lcores (default: every non-main lcore of -l/-c, >= 1)"},
	{.name = "channels",
	 .arg = "N",
	 U32(1, SDR_CHANNELS_MAX),
	 CFG(channels),
	 .help = "channels of a QP whose host asks for the default (1..8,\n"
		 "default 1): one QP served by N workers, each with its share\n"
		 "of every message (docs/architecture.md \"Channels\")"},
	{.name = "idle-us",
	 .arg = "US",
	 U32(0, 100000),
	 CFG(idle_us),
	 .help = "sleep of an idle worker after --idle-spins empty polls\n"
		 "(default 50; 0 = busy-poll)"},
	{.name = "idle-spins",
	 .arg = "N",
	 U32(1, 1u << 30),
	 CFG(idle_spins),
	 .help = "empty polls before an idle worker sleeps (default 256)"},
	{.name = "cts-resend-ms",
	 .arg = "MS",
	 U32(0, 60000),
	 CFG(cts_resend_ms),
	 .help = "re-send clear-to-send for posted receives that saw no data\n"
		 "(default 20; 0 = never)"},
	{.name = "mbufs",
	 .arg = "N",
	 U32(511, 1u << 24),
	 CFG(mbufs),
	 .help = "packet buffers per instance (default 8191)"},
	{.name = "pace-burst",
	 .arg = "BYTES",
	 .kind = SDR_OPT_SIZE32,
	 .min = 2048,
	 .max = 1u << 30,
	 CFG(pace_burst),
	 .help = "how far a paced QP (or port) whose worker was late catches\n"
		 "up, at line rate (default: 200 us of its rate, at least\n"
		 "64K); an idle QP earns nothing"},
	{.name = "pace-trace",
	 .arg = "N",
	 .kind = SDR_OPT_SIZE32,
	 .max = 1u << 24,
	 CFG(pace_trace),
	 .help = "keep the departure times of the last N paced frames per\n"
		 "worker (rounded up to a power of two; default 0 = off):\n"
		 "telemetry /sdr/pace_peak measures a QP's peak rate"},
	{.name = "no-icrc",
	 .kind = SDR_OPT_BOOL,
	 .flags = SDR_OPTF_CLEAR,
	 CFG(icrc),
	 .help = "neither generate nor verify the ICRC (benchmarks only)"},
	{.name = "icrc-crc",
	 .arg = "auto|by8|isal",
	 .fn = on_icrc_crc,
	 .help = "the CRC-32 code of the ICRC (same CRC): isal = ISA-L's\n"
		 "dispatcher (AVX-512 where present; auto, the default);\n"
		 "by8 = its 128-bit PCLMUL variant (x86-64), for comparison"},
	{.name = "qpn-epoch",
	 .arg = "N|random",
	 .kind = SDR_OPT_INT,
	 .max = SDR_QPN_EPOCHS - 1,
	 .names = qpn_random,
	 CFG(qpn_epoch),
	 .help = "QPN range of this boot: QPN blocks start at\n"
		 "0x100 + N*0x4000, N in 0..1022 (default random 1..1022, so\n"
		 "packets for an earlier incarnation count as stale_epoch)"},
	{.name = "state-dir",
	 .arg = "DIR|none",
	 .kind = SDR_OPT_STRING,
	 CFG(state_dir),
	 .help = "instance state files (made 0700; default /run/sdr-dpu): the\n"
		 "key of the restore tokens, the QPN epoch (reused at a\n"
		 "restart) and the QP blocks hosts hold, so that hosts restore\n"
		 "their QPs after a restart (docs/security.md \"Restoring a\n"
		 "QP\"); none = no state, a random epoch per boot, no restore"},
	{.name = "restore-window-ms",
	 .arg = "MS",
	 U32(0, MS_MAX),
	 CFG(restore_window_ms),
	 .help = "after a restart, the QP blocks of the previous incarnation\n"
		 "are kept for their hosts' QP_RESTORE this long, then freed\n"
		 "(default 30000)"},
	{.name = "stats-interval",
	 .arg = "S",
	 U32(0, 86400),
	 CFG(stats_interval),
	 .help = "print the stats block every S seconds (default 0 = only at exit)"},
	{.name = "stats-json",
	 .arg = "FILE",
	 .kind = SDR_OPT_STRING,
	 CFG(stats_json),
	 .help = "write all counters as JSON to FILE at exit"},
	{.name = "metrics",
	 .arg = "[ADDR:]PORT",
	 .kind = SDR_OPT_STRING,
	 CFG(metrics),
	 .help = "serve Prometheus metrics over HTTP on PORT (ADDR default\n"
		 "0.0.0.0): GET /metrics, /ops (operations not complete,\n"
		 "sdr-diag); docs/operations.md"},
	{.name = "help", .help = "this text"},
	{.name = "version", .fn = on_version, .help = "print the version"},
	{.name = "outage-horizon-ms",
	 .arg = "MS",
	 U32(0, MS_MAX),
	 CFG(outage_horizon_ms),
	 .help = "an SR/EC/AUTO QP whose sends make no progress\n"
		 "(link down, peer silent) is stalled, not failed, for up\n"
		 "to MS; then it errors (outstanding operations complete\n"
		 "with -ETIMEDOUT, later posts -ENOTCONN); a receive that\n"
		 "saw packets and then nothing for MS completes with\n"
		 "-ETIMEDOUT. A QP may ask for its own (horizon_ms;\n"
		 "docs/reliability.md; default 60000; 0 = never)"},
	{.name = "global-timeout-ms",
	 .arg = "MS",
	 U32(0, MS_MAX),
	 CFG(outage_horizon_ms),
	 .help = "old name of --outage-horizon-ms"},
	SDR_OPT_END,
};

/* the schemes' options come here (struct sdr_rel_desc::opts; cfg_table()) */

static const struct sdr_opt cfg_opts_hosts[] = {
	SDR_OPT_SECTION(
		"\n"
		"Hosts (control socket; docs/host-api.md \"Limits and quotas\"). Quotas hold per\n"
		"client and instance; 0 = no limit. A refusal says which quota in its reason\n"
		"(sdr_last_error()) and counts in ctl_quota_*:"),
	{.name = "quota-key",
	 .arg = "uid|pid",
	 .kind = SDR_OPT_ENUM,
	 .names = quota_keys,
	 CFG(quota_by_pid),
	 .help = "who a client is: the peer's uid (default; processes of\n"
		 "one user share its quotas) or its pid (SO_PEERCRED)"},
	{.name = "quota-conns",
	 .arg = "N",
	 U32(0, 1u << 20),
	 CFG(quota_conns),
	 .help = "connections open at once, attached or not (default " SDR_STR(
		 QUOTA_CONNS_DEFAULT) ")"},
	{.name = "quota-ctxs",
	 .arg = "N",
	 U32(0, 1u << 20),
	 CFG(quota_ctxs),
	 .help = "attached contexts (default " SDR_STR(QUOTA_CTXS_DEFAULT) ")"},
	{.name = "quota-qps",
	 .arg = "N",
	 U32(0, 1u << 20),
	 CFG(quota_qps),
	 .help = "QPs (default " SDR_STR(QUOTA_QPS_DEFAULT) ")"},
	{.name = "quota-mr-bytes",
	 .arg = "B",
	 .kind = SDR_OPT_SIZE,
	 .max = 1ull << 50,
	 CFG(quota_mr_bytes),
	 .help = "registered memory, K/M/G suffixes (default " SDR_STR(QUOTA_MR_GB_DEFAULT) "G)"},
	{.name = "ctl-reply-timeout-ms",
	 .arg = "MS",
	 U32(1, MS_MAX),
	 CFG(ctl_reply_timeout_ms),
	 .help = "drop a client that does not take a reply within MS\n"
		 "(it does not read its socket; default " SDR_STR(CTL_REPLY_TO_DEFAULT) ")"},
	{.name = "ctl-hello-timeout-ms",
	 .arg = "MS",
	 U32(1, MS_MAX),
	 CFG(ctl_hello_timeout_ms),
	 .help = "drop a connection that has not attached (HELLO)\n"
		 "within MS of connecting (default " SDR_STR(CTL_HELLO_TO_DEFAULT) ")"},
	SDR_OPT_END,
};

static struct sdr_opts cfg_set = {
	.prog = "sdr-dpu",
	.usage = "Usage: sdr-dpu [EAL options] -- [options]\n"
		 "\n"
		 "sdr-dpu: software-defined reliability firmware. Moves host messages as RoCEv2\n"
		 "UC RDMA WRITE (with immediate, or without for immediate 0) packets, one per\n"
		 "MTU, and keeps SDR receive bitmaps. Hosts attach through a unix socket\n"
		 "(libsdr).\n"
		 "\n"
		 "EAL options come first (e.g. --no-huge --no-shconf --no-pci -m 512\n"
		 "--file-prefix=dpu-a "
		 "--vdev=net_af_packet0,iface=veth-a,framesz=9216,blocksz=36864).\n"
		 "Every DPDK port works: net_af_packet, net_tap, net_ring, net_pcap, net_null, "
		 "mlx5.\n",
	.footer = "\n"
		  "Stats are printed at SIGINT/SIGTERM and exposed through DPDK telemetry\n"
		  "(/sdr/stats, /sdr/qps,INST, /sdr/link,INST[,LANE], /sdr/workers,\n"
		  "/sdr/pace_peak,INST,QP,WINDOW_NS; read them with dpdk-telemetry.py -f\n"
		  "<file-prefix>) and, with --metrics, as Prometheus metrics over HTTP (sdr-top\n"
		  "and sdr-diag read those; docs/operations.md).\n",
	.base = cfg_base,
};

static size_t table_len(const struct sdr_opt *t)
{
	size_t n = 0;

	while (t[n].name || t[n].help)
		n++;
	return n;
}

/* The command line: the daemon's options, every scheme's (once each, in
 * the order of the scheme table: rel.c), the host options. Built once. */
static const struct sdr_opt *cfg_table(void)
{
	static struct sdr_opt *t;
	const struct sdr_opt *seen[32];
	unsigned nseen = 0;
	size_t n = table_len(cfg_opts) + table_len(cfg_opts_hosts) + 1, k = 0;
	const struct sdr_rel_ops *o;

	if (t)
		return t;
	for (unsigned i = 0; (o = sdr_rel_scheme(i)); i++)
		if (o->desc && o->desc->opts)
			n += table_len(o->desc->opts);
	t = calloc(n, sizeof(*t));
	if (!t)
		return NULL;
	memcpy(t, cfg_opts, table_len(cfg_opts) * sizeof(*t));
	k = table_len(cfg_opts);
	for (unsigned i = 0; (o = sdr_rel_scheme(i)); i++) {
		const struct sdr_opt *so = o->desc ? o->desc->opts : NULL;
		unsigned j;

		for (j = 0; j < nseen && seen[j] != so; j++)
			;
		if (!so || j < nseen || nseen == RTE_DIM(seen))
			continue;
		seen[nseen++] = so;
		memcpy(t + k, so, table_len(so) * sizeof(*t));
		k += table_len(so);
	}
	memcpy(t + k, cfg_opts_hosts, table_len(cfg_opts_hosts) * sizeof(*t));
	/* (the end: zeroed by calloc) */
	return t;
}

void sdr_cfg_usage(FILE *f, const char *prog)
{
	(void)prog;
	cfg_set.opt = cfg_table();
	if (cfg_set.opt)
		sdr_opts_usage(&cfg_set, f);
}

int sdr_cfg_parse(struct sdr_cfg *cfg, int argc, char **argv)
{
	struct sdr_inst_cfg *ic;

	memset(cfg, 0, sizeof(*cfg));
	cfg->mtu = 4096;
	cfg->chunk_pkts = 16;
	cfg->max_msg = 64u << 20;
	cfg->generations = 4;
	cfg->channels = 1;
	cfg->idle_us = 50;
	cfg->idle_spins = 256;
	cfg->cts_resend_ms = 20;
	cfg->mbufs = 8191;
	cfg->icrc = 1;
	cfg->ninst = 1;
	cfg->outage_horizon_ms = 60000;
	cfg->qpn_epoch = -1;
	cfg->state_dir = "/run/sdr-dpu";
	cfg->restore_window_ms = 30000;
	cfg->quota_conns = QUOTA_CONNS_DEFAULT;
	cfg->quota_ctxs = QUOTA_CTXS_DEFAULT;
	cfg->quota_qps = QUOTA_QPS_DEFAULT;
	cfg->quota_mr_bytes = (uint64_t)QUOTA_MR_GB_DEFAULT << 30;
	cfg->ctl_reply_timeout_ms = CTL_REPLY_TO_DEFAULT;
	cfg->ctl_hello_timeout_ms = CTL_HELLO_TO_DEFAULT;
	ic = &cfg->inst[0];
	ic->port = -1;
	ic->name = "/tmp/sdr-dpu.sock";

	{
		struct cfg_ctx x = {.cfg = cfg, .ic = ic};
		int first;

		cfg_set.opt = cfg_table();
		if (!cfg_set.opt)
			return -1;
		first = sdr_opts_parse(&cfg_set, argc, argv, &x);

		if (first == SDR_OPTS_HELP || (first >= 0 && x.done))
			return 1;
		if (first < 0)
			return -1;
		if (first < argc) {
			fprintf(stderr, "sdr-dpu: unexpected argument '%s' (see --help)\n",
				argv[first]);
			return -1;
		}
		ic = x.ic;
	}

	/* cross-checks */
	uint32_t chunk = cfg->mtu * cfg->chunk_pkts;
	if (cfg->max_msg % chunk || cfg->max_msg < 8 * cfg->mtu) {
		fprintf(stderr,
			"sdr-dpu: --max-msg %u must be a multiple of the chunk (%u packets x %u B "
			"= %u B)"
			" and at least 8 packets\n",
			cfg->max_msg, cfg->chunk_pkts, cfg->mtu, chunk);
		return -1;
	}
	if (cfg->max_msg / cfg->mtu > SDR_MAX_PKTS) {
		fprintf(stderr,
			"sdr-dpu: --max-msg %u exceeds %u packets of %u B (18-bit packet offset)\n",
			cfg->max_msg, SDR_MAX_PKTS, cfg->mtu);
		return -1;
	}
	/* every scheme's check of its options (struct sdr_rel_desc::opts_check) */
	{
		const struct sdr_rel_ops *o;

		for (unsigned i = 0; (o = sdr_rel_scheme(i)); i++)
			if (o->desc && o->desc->opts_check && o->desc->opts_check(cfg))
				return -1;
	}
	if (cfg->ring_pair && cfg->ninst != 2) {
		fprintf(stderr,
			"sdr-dpu: --ring-pair needs exactly two instances (use --instance)\n");
		return -1;
	}
	for (unsigned i = 0; i < cfg->ninst; i++) {
		struct sdr_inst_cfg *x = &cfg->inst[i];
		if (!x->name) {
			fprintf(stderr, "sdr-dpu: instance %u needs --name\n", i);
			return -1;
		}
		if (!x->has_ip) {
			fprintf(stderr, "sdr-dpu: instance %u (%s) needs --ip\n", i, x->name);
			return -1;
		}
		if (!x->has_peer_mac && !cfg->ring_pair) {
			fprintf(stderr, "sdr-dpu: instance %u (%s) needs --peer-mac\n", i, x->name);
			return -1;
		}
		for (unsigned j = 0; j < i; j++)
			if (!strcmp(cfg->inst[j].name, x->name)) {
				fprintf(stderr, "sdr-dpu: two instances use --name %s\n", x->name);
				return -1;
			}
	}
	return 0;
}
