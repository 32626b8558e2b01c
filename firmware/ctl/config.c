/* SPDX-License-Identifier: BSD-3-Clause */
/* Command line of sdr-dpu (the part after EAL's "--"). Parsed before the
 * EAL starts so that --help and --version work anywhere, even under qemu. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sdr_types.h"
#include "sdr_opts.h"
#include "sdr_units.h"

enum {
	OPT_NAME = 256, OPT_PORT, OPT_IP, OPT_MAC, OPT_PEER_MAC, OPT_LINK, OPT_INSTANCE,
	OPT_RING_PAIR, OPT_MTU, OPT_CHUNK, OPT_MAXMSG, OPT_GENS, OPT_WORKERS, OPT_IDLE_US,
	OPT_IDLE_SPINS, OPT_STATS_INT, OPT_STATS_JSON, OPT_CTS_MS, OPT_MBUFS, OPT_NO_ICRC,
	OPT_PORT_RATE, OPT_PACE_BURST, OPT_PACE_TRACE, OPT_HELP, OPT_VERSION, OPT_SR_ALPHA,
	OPT_SR_MIN_RTO,
	OPT_SR_INIT_RTO, OPT_SR_ACK_US, OPT_GTIMEOUT, OPT_QPN_EPOCH, OPT_SR_K,
	OPT_EC_BETA, OPT_EC_RTT, OPT_EC_POOL, OPT_AUTO_SCHEMES, OPT_AUTO_OBJ,
	OPT_QUOTA_KEY, OPT_QUOTA_CONNS, OPT_QUOTA_CTXS, OPT_QUOTA_QPS, OPT_QUOTA_MR,
	OPT_CTL_REPLY_TO, OPT_CTL_HELLO_TO, OPT_BRIDGE, OPT_LINK_PEER, OPT_ICRC_CRC,
};

#define SDR_STR_(x) #x
#define SDR_STR(x) SDR_STR_(x)
#define AUTO_SCHEMES_DEFAULT "sr,rs:32:8,rs:16:4,rs:8:2,xor:32:8"
/* Per-client quotas (docs/host-api.md "Limits and quotas"): a quarter of
 * the instance's context (64) and QP (1024) tables, so that one client never
 * fills them; connections: its contexts and as many idle ones. */
#define QUOTA_CONNS_DEFAULT 32
#define QUOTA_CTXS_DEFAULT 16
#define QUOTA_QPS_DEFAULT 256
#define QUOTA_MR_GB_DEFAULT 16
#define CTL_REPLY_TO_DEFAULT 1000
#define CTL_HELLO_TO_DEFAULT 3000

/* (the table of options is below, after their handler) */

static int opt_u32(const char *opt, const char *arg, uint32_t lo, uint32_t hi, uint32_t *out,
		   int suffixes)
{
	uint64_t v;
	if (sdr_parse_u64(arg, &v, suffixes) || v < lo || v > hi) {
		fprintf(stderr, "sdr-dpu: %s: '%s' is not a number in [%u, %u]\n", opt, arg, lo, hi);
		return -1;
	}
	*out = (uint32_t)v;
	return 0;
}

struct cfg_ctx {
	struct sdr_cfg *cfg;
	struct sdr_inst_cfg *ic; /* the instance options apply to (--instance moves it) */
	int done;                /* --version served */
};

/* One handler for every option of the table (by its id). */
static int cfg_opt(const struct sdr_opt *o, const char *arg, void *ctx)
{
	struct cfg_ctx *x = ctx;
	struct sdr_cfg *cfg = x->cfg;
	struct sdr_inst_cfg *ic = x->ic;
	uint32_t v;
	int c = o->id;

	switch (c) {
	case OPT_VERSION:
		printf("sdr-dpu %s (ABI %d.%d)\n", SDR_VERSION, SDR_ABI_MAJOR, SDR_ABI_MINOR);
		x->done = 1;
		break;
	case OPT_NAME:
		ic->name = arg;
		break;
	case OPT_PORT:
		if (opt_u32("--port", arg, 0, RTE_MAX_ETHPORTS - 1, &v, 0))
			return -2;
		ic->port = (int)v;
		break;
	case OPT_IP:
		if (sdr_parse_ipv4(arg, &ic->ip)) {
			fprintf(stderr, "sdr-dpu: --ip: '%s' is not an IPv4 address\n", arg);
			return -2;
		}
		ic->has_ip = 1;
		break;
	case OPT_MAC:
	case OPT_PEER_MAC:
		if (sdr_parse_mac(arg, c == OPT_MAC ? ic->mac : ic->peer_mac)) {
			fprintf(stderr, "sdr-dpu: %s: '%s' is not a MAC address (aa:bb:cc:dd:ee:ff)\n",
				c == OPT_MAC ? "--mac" : "--peer-mac", arg);
			return -2;
		}
		if (c == OPT_MAC)
			ic->has_mac = 1;
		else
			ic->has_peer_mac = 1;
		break;
	case OPT_LINK:
		ic->link = arg;
		break;
	case OPT_LINK_PEER:
		if (ic->n_link_peer == SDR_MAX_LINK_PEERS) {
			fprintf(stderr, "sdr-dpu: --link-peer: at most %u profiles per instance\n",
				SDR_MAX_LINK_PEERS);
			return -2;
		}
		ic->link_peer[ic->n_link_peer++] = arg;
		break;
	case OPT_INSTANCE:
		if (cfg->ninst == SDR_MAX_INST) {
			fprintf(stderr, "sdr-dpu: at most %d instances\n", SDR_MAX_INST);
			return -2;
		}
		ic = &cfg->inst[cfg->ninst++];
		ic->port = -1;
		ic->name = NULL;
		break;
	case OPT_RING_PAIR:
		cfg->ring_pair = 1;
		break;
	case OPT_BRIDGE: /* main() runs bridge.c before this parser sees it */
		fprintf(stderr, "sdr-dpu: --bridge is a mode of its own: sdr-dpu [EAL] -- --bridge "
				"[bridge options] (sdr-dpu --bridge --help)\n");
		return -2;
	case OPT_MTU:
		if (opt_u32("--mtu", arg, 1024, 4096, &cfg->mtu, 0))
			return -2;
		if (cfg->mtu != 1024 && cfg->mtu != 2048 && cfg->mtu != 4096) {
			fprintf(stderr, "sdr-dpu: --mtu must be 1024, 2048 or 4096\n");
			return -2;
		}
		break;
	case OPT_CHUNK:
		if (opt_u32("--chunk-pkts", arg, 1, 1024, &cfg->chunk_pkts, 0))
			return -2;
		break;
	case OPT_MAXMSG:
		if (opt_u32("--max-msg", arg, 1, 1u << 30, &cfg->max_msg, 1))
			return -2;
		break;
	case OPT_GENS:
		if (opt_u32("--generations", arg, 1, 16, &cfg->generations, 0))
			return -2;
		if (!sdr_is_pow2(cfg->generations)) {
			fprintf(stderr, "sdr-dpu: --generations must be a power of two\n");
			return -2;
		}
		break;
	case OPT_WORKERS:
		if (opt_u32("--workers", arg, 1, SDR_MAX_WORKERS, &v, 0))
			return -2;
		cfg->workers = v;
		break;
	case OPT_IDLE_US:
		if (opt_u32("--idle-us", arg, 0, 100000, &v, 0))
			return -2;
		cfg->idle_us = v;
		break;
	case OPT_IDLE_SPINS:
		if (opt_u32("--idle-spins", arg, 1, 1u << 30, &v, 0))
			return -2;
		cfg->idle_spins = v;
		break;
	case OPT_STATS_INT:
		if (opt_u32("--stats-interval", arg, 0, 86400, &v, 0))
			return -2;
		cfg->stats_interval = v;
		break;
	case OPT_STATS_JSON:
		cfg->stats_json = arg;
		break;
	case OPT_CTS_MS:
		if (opt_u32("--cts-resend-ms", arg, 0, 60000, &v, 0))
			return -2;
		cfg->cts_resend_ms = v;
		break;
	case OPT_MBUFS:
		if (opt_u32("--mbufs", arg, 511, 1u << 24, &v, 0))
			return -2;
		cfg->mbufs = v;
		break;
	case OPT_PORT_RATE:
		if (sdr_parse_rate(arg, &ic->port_rate)) {
			fprintf(stderr, "sdr-dpu: --port-rate: '%s' is not a rate (e.g. 10g, 800mbit)\n",
				arg);
			return -2;
		}
		break;
	case OPT_PACE_BURST:
		if (opt_u32("--pace-burst", arg, 2048, 1u << 30, &cfg->pace_burst, 1))
			return -2;
		break;
	case OPT_PACE_TRACE:
		if (opt_u32("--pace-trace", arg, 0, 1u << 24, &cfg->pace_trace, 1))
			return -2;
		break;
	case OPT_NO_ICRC:
		cfg->icrc = 0;
		break;
	case OPT_ICRC_CRC: { /* process-wide; parsing runs before any worker */
		int rc = sdr_icrc_select(arg);

		if (rc) {
			fprintf(stderr, "sdr-dpu: --icrc-crc: '%s' %s\n", arg,
				rc == -ENOTSUP ? "is not available on this CPU or build (PCLMULQDQ, x86-64)"
					       : "is not auto, isal or by8");
			return -2;
		}
		break;
	}
	case OPT_SR_ALPHA: {
		char *end;
		double a;
		errno = 0;
		a = strtod(arg, &end);
		if (errno || end == arg || *end || !(a >= 0 && a <= 16)) {
			fprintf(stderr, "sdr-dpu: --sr-alpha: '%s' is not a number in [0, 16]\n",
				arg);
			return -2;
		}
		cfg->sr_alpha_milli = (uint32_t)(a * 1000 + 0.5);
		break;
	}
	case OPT_SR_K:
		if (opt_u32("--sr-rttvar-k", arg, 0, 64, &cfg->sr_rttvar_k, 0))
			return -2;
		break;
	case OPT_SR_MIN_RTO:
		if (opt_u32("--sr-min-rto-us", arg, 1, 10000000, &cfg->sr_min_rto_us, 0))
			return -2;
		break;
	case OPT_SR_INIT_RTO:
		if (opt_u32("--sr-init-rto-ms", arg, 1, 60000, &cfg->sr_init_rto_ms, 0))
			return -2;
		break;
	case OPT_SR_ACK_US:
		if (opt_u32("--sr-ack-us", arg, 0, 1000000, &cfg->sr_ack_us, 0))
			return -2;
		break;
	case OPT_EC_BETA: {
		char *end;
		double b;
		errno = 0;
		b = strtod(arg, &end);
		if (errno || end == arg || *end || !(b >= 0 && b <= 16)) {
			fprintf(stderr, "sdr-dpu: --ec-beta: '%s' is not a number in [0, 16]\n",
				arg);
			return -2;
		}
		cfg->ec_beta_milli = (uint32_t)(b * 1000 + 0.5);
		break;
	}
	case OPT_EC_RTT:
		if (opt_u32("--ec-rtt-us", arg, 0, 10000000, &cfg->ec_rtt_us, 0))
			return -2;
		break;
	case OPT_EC_POOL:
		if (opt_u32("--ec-pool-mb", arg, 1, 65536, &cfg->ec_pool_mb, 0))
			return -2;
		break;
	case OPT_AUTO_SCHEMES:
		if (sdr_auto_schemes_parse(arg, cfg->auto_cands, &cfg->auto_ncands)) {
			fprintf(stderr, "sdr-dpu: --auto-schemes: '%s' is not a list of at most %u"
					" distinct schemes sr, rs:K:M, xor:K:M (1 <= K <= 64,"
					" 1 <= M <= 32, XOR M <= K)\n", arg, SDR_AUTO_MAX_CANDS);
			return -2;
		}
		break;
	case OPT_AUTO_OBJ:
		if (!strcmp(arg, "mean")) {
			cfg->auto_obj = SDR_MODEL_OBJ_MEAN;
		} else if (!strcmp(arg, "p999")) {
			cfg->auto_obj = SDR_MODEL_OBJ_P999;
		} else {
			fprintf(stderr, "sdr-dpu: --auto-objective: '%s' is not mean or p999\n",
				arg);
			return -2;
		}
		break;
	case OPT_QUOTA_KEY:
		if (!strcmp(arg, "uid")) {
			cfg->quota_by_pid = 0;
		} else if (!strcmp(arg, "pid")) {
			cfg->quota_by_pid = 1;
		} else {
			fprintf(stderr, "sdr-dpu: --quota-key: '%s' is not uid or pid\n", arg);
			return -2;
		}
		break;
	case OPT_QUOTA_CONNS:
		if (opt_u32("--quota-conns", arg, 0, 1u << 20, &cfg->quota_conns, 0))
			return -2;
		break;
	case OPT_QUOTA_CTXS:
		if (opt_u32("--quota-ctxs", arg, 0, 1u << 20, &cfg->quota_ctxs, 0))
			return -2;
		break;
	case OPT_QUOTA_QPS:
		if (opt_u32("--quota-qps", arg, 0, 1u << 20, &cfg->quota_qps, 0))
			return -2;
		break;
	case OPT_QUOTA_MR: {
		uint64_t b;
		if (sdr_parse_u64(arg, &b, 1) || b > (1ull << 50)) {
			fprintf(stderr, "sdr-dpu: --quota-mr-bytes: '%s' is not a size in [0, 1048576G]"
					" (K/M/G suffixes)\n", arg);
			return -2;
		}
		cfg->quota_mr_bytes = b;
		break;
	}
	case OPT_CTL_REPLY_TO:
		if (opt_u32("--ctl-reply-timeout-ms", arg, 1, 3600000, &cfg->ctl_reply_timeout_ms,
			    0))
			return -2;
		break;
	case OPT_CTL_HELLO_TO:
		if (opt_u32("--ctl-hello-timeout-ms", arg, 1, 3600000, &cfg->ctl_hello_timeout_ms,
			    0))
			return -2;
		break;
	case OPT_GTIMEOUT:
		if (opt_u32("--global-timeout-ms", arg, 0, 3600000, &cfg->global_timeout_ms, 0))
			return -2;
		break;
	case OPT_QPN_EPOCH:
		if (!strcmp(arg, "random")) {
			cfg->qpn_epoch = -1;
		} else {
			if (opt_u32("--qpn-epoch", arg, 0, SDR_QPN_EPOCHS - 1, &v, 0))
				return -2;
			cfg->qpn_epoch = (int)v;
		}
		break;
	default:
		return -1; /* cannot happen: every entry has its case */
	}
	x->ic = ic;
	return 0;
}

static const struct sdr_opt cfg_opts[] = {
	SDR_OPT_SECTION("\nPer-DPU-instance options (apply to the current instance; --instance starts the next):"),
	{.name = "name", .arg = "PATH", .help = "unix socket hosts attach to (default /tmp/sdr-dpu.sock)", .fn = cfg_opt, .id = OPT_NAME},
	{.name = "port", .arg = "N", .help = "DPDK port id of this instance (default: next unused port)", .fn = cfg_opt, .id = OPT_PORT},
	{.name = "ip", .arg = "A.B.C.D", .help = "this DPU's IPv4 address (required)", .fn = cfg_opt, .id = OPT_IP},
	{.name = "mac", .arg = "MAC", .help = "this DPU's MAC (default: the port's MAC; net_tap, whose\nport MAC is its kernel interface's: 02:53:44:52 + the\nport MAC's last two bytes; a port without a MAC, e.g.\nnet_ring: 02:53:44:52:PORT:INSTANCE+1)", .fn = cfg_opt, .id = OPT_MAC},
	{.name = "peer-mac", .arg = "MAC", .help = "static next-hop MAC for every peer (required, except with\n--ring-pair where it defaults to the other instance's MAC)", .fn = cfg_opt, .id = OPT_PEER_MAC},
	{.name = "link", .arg = "SPEC", .help = "long-haul link emulator on this port's receive side\n(e.g. delay=12.5ms,rate=1gbit,buffer=4MB,loss=1e-3,seed=7;\nsee docs/link-emulator.md); with --link-peer: the link of\nframes from sources no profile lists", .fn = cfg_opt, .id = OPT_LINK},
	{.name = "link-peer", .arg = "[NAME:]IP[+IP...]:SPEC", .help = "a per-peer link on the receive side (repeatable, at most\n16): frames whose source IPv4 address is one of IPs take\nthe link SPEC (--link's syntax; empty = perfect link);\nthe peers of one profile share one emulated link (one\nbottleneck FIFO). NAME labels its counters (default\npeerN). E.g. into2:10.100.0.2+10.100.1.2:delay=12.5ms,\nrate=2gbit,buffer=4MB", .fn = cfg_opt, .id = OPT_LINK_PEER},
	{.name = "port-rate", .arg = "RATE", .help = "pace everything this instance sends to RATE (bits/s:\n10g, 2.5gbit, 800m, 1e9; default 0 = unpaced). QPs may\nhave their own, lower rate (libsdr qp attr rate_bps)", .fn = cfg_opt, .id = OPT_PORT_RATE},
	{.name = "instance", .help = "start describing another DPU instance in this process", .fn = cfg_opt, .id = OPT_INSTANCE},
	SDR_OPT_SECTION("\nGlobal options:"),
	{.name = "bridge", .help = "run as a bump in the wire between two ports with the link\nemulator each way, not as a DPU (sdr-dpu --bridge --help)", .fn = cfg_opt, .id = OPT_BRIDGE},
	{.name = "ring-pair", .help = "create two ports joined back to back by a net_ring pair\n(two DPUs in one process; needs two instances)", .fn = cfg_opt, .id = OPT_RING_PAIR},
	{.name = "mtu", .arg = "N", .help = "RoCE path MTU: 1024, 2048 or 4096 (default 4096)", .fn = cfg_opt, .id = OPT_MTU},
	{.name = "chunk-pkts", .arg = "N", .help = "packets per bitmap chunk, 1..1024 (default 16)", .fn = cfg_opt, .id = OPT_CHUNK},
	{.name = "max-msg", .arg = "BYTES", .help = "default and upper bound of a QP's max message size M; K/M/G\nsuffixes (default 64M; at most 1G at 4096 MTU)", .fn = cfg_opt, .id = OPT_MAXMSG},
	{.name = "generations", .arg = "G", .help = "QPNs (message generations) per SDR QP, power of two 1..16\n(default 4)", .fn = cfg_opt, .id = OPT_GENS},
	{.name = "workers", .arg = "N", .help = "worker lcores (default: every non-main lcore of -l/-c, >= 1)", .fn = cfg_opt, .id = OPT_WORKERS},
	{.name = "idle-us", .arg = "US", .help = "sleep of an idle worker after --idle-spins empty polls\n(default 50; 0 = busy-poll)", .fn = cfg_opt, .id = OPT_IDLE_US},
	{.name = "idle-spins", .arg = "N", .help = "empty polls before an idle worker sleeps (default 256)", .fn = cfg_opt, .id = OPT_IDLE_SPINS},
	{.name = "cts-resend-ms", .arg = "MS", .help = "re-send clear-to-send for posted receives that saw no data\n(default 20; 0 = never)", .fn = cfg_opt, .id = OPT_CTS_MS},
	{.name = "mbufs", .arg = "N", .help = "packet buffers per instance (default 8191)", .fn = cfg_opt, .id = OPT_MBUFS},
	{.name = "pace-burst", .arg = "BYTES", .help = "how far a paced QP (or port) whose worker was late catches\nup, at line rate (default: 200 us of its rate, at least\n64K); an idle QP earns nothing", .fn = cfg_opt, .id = OPT_PACE_BURST},
	{.name = "pace-trace", .arg = "N", .help = "keep the departure times of the last N paced frames per\nworker (rounded up to a power of two; default 0 = off):\ntelemetry /sdr/pace_peak measures a QP's peak rate", .fn = cfg_opt, .id = OPT_PACE_TRACE},
	{.name = "no-icrc", .help = "neither generate nor verify the ICRC (benchmarks only)", .fn = cfg_opt, .id = OPT_NO_ICRC},
	{.name = "icrc-crc", .arg = "auto|by8|isal", .help = "the CRC-32 code of the ICRC (same CRC): isal = ISA-L's\ndispatcher (AVX-512 where present; auto, the default);\nby8 = its 128-bit PCLMUL variant (x86-64), for comparison", .fn = cfg_opt, .id = OPT_ICRC_CRC},
	{.name = "qpn-epoch", .arg = "N|random", .help = "QPN range of this boot: QPN blocks start at\n0x100 + N*0x4000, N in 0..1022 (default random 1..1022, so\npackets for an earlier incarnation count as stale_epoch)", .fn = cfg_opt, .id = OPT_QPN_EPOCH},
	{.name = "stats-interval", .arg = "S", .help = "print the stats block every S seconds (default 0 = only at exit)", .fn = cfg_opt, .id = OPT_STATS_INT},
	{.name = "stats-json", .arg = "FILE", .help = "write all counters as JSON to FILE at exit", .fn = cfg_opt, .id = OPT_STATS_JSON},
	{.name = "help", .help = "this text"},
	{.name = "version", .help = "print the version", .fn = cfg_opt, .id = OPT_VERSION},
	SDR_OPT_SECTION("\nSelective Repeat (QPs with reliability SR, and the SR part of EC and AUTO QPs;\ndocs/reliability.md):"),
	{.name = "sr-alpha", .arg = "A", .help = "RTO = (1 + A) * smoothed RTT (default 0.5; 0..16)", .fn = cfg_opt, .id = OPT_SR_ALPHA},
	{.name = "sr-rttvar-k", .arg = "K", .help = "... but at least SRTT + K * RTTVAR (RFC 6298 uses 4;\ndefault 4, 0 = off)", .fn = cfg_opt, .id = OPT_SR_K},
	{.name = "sr-min-rto-us", .arg = "US", .help = "RTO floor (default 2000)", .fn = cfg_opt, .id = OPT_SR_MIN_RTO},
	{.name = "sr-init-rto-ms", .arg = "MS", .help = "RTO before the first RTT sample (default 200)", .fn = cfg_opt, .id = OPT_SR_INIT_RTO},
	{.name = "sr-ack-us", .arg = "US", .help = "receiver ACK coalescing period (default 500); a completed\nreceive is acknowledged at once", .fn = cfg_opt, .id = OPT_SR_ACK_US},
	{.name = "global-timeout-ms", .arg = "MS", .help = "no progress of an SR/EC/AUTO QP's sends for MS puts it in\nthe error state (outstanding operations complete with\n-ETIMEDOUT); a receive without progress for MS completes\nwith -ETIMEDOUT (default 3000; 0 = never)", .fn = cfg_opt, .id = OPT_GTIMEOUT},
	SDR_OPT_SECTION("\nErasure coding (QPs with reliability EC, and AUTO's EC messages;\ndocs/reliability.md):"),
	{.name = "ec-beta", .arg = "B", .help = "fallback timeout FTO = (M + ceil(M*m/k)) * T_INJ + B * RTT\n(default 1.0; 0..16)", .fn = cfg_opt, .id = OPT_EC_BETA},
	{.name = "ec-rtt-us", .arg = "US", .help = "RTT of the FTO (default 0 = estimate: the QP's smoothed\nRTT, else the smallest CTS-to-first-packet time)", .fn = cfg_opt, .id = OPT_EC_RTT},
	{.name = "ec-pool-mb", .arg = "MB", .help = "parity buffers of one receiving EC or AUTO QP (default 64)", .fn = cfg_opt, .id = OPT_EC_POOL},
	SDR_OPT_SECTION("\nAUTO (QPs with reliability AUTO pick SR or an EC code per message from the\nmeasured RTT and chunk loss; docs/reliability.md \"AUTO\"):"),
	{.name = "auto-schemes", .arg = "LIST", .help = "candidates, comma-separated: sr, rs:K:M, xor:K:M (1 <= K\n<= 64, 1 <= M <= 32, XOR M <= K; at most 8)\n(default " AUTO_SCHEMES_DEFAULT ")", .fn = cfg_opt, .id = OPT_AUTO_SCHEMES},
	{.name = "auto-objective", .arg = "O", .help = "minimise the predicted mean or p999 completion time\n(default mean)", .fn = cfg_opt, .id = OPT_AUTO_OBJ},
	SDR_OPT_SECTION("\nHosts (control socket; docs/host-api.md \"Limits and quotas\"). Quotas hold per\nclient and instance; 0 = no limit. A refusal says which quota in its reason\n(sdr_last_error()) and counts in ctl_quota_*:"),
	{.name = "quota-key", .arg = "uid|pid", .help = "who a client is: the peer's uid (default; processes of\none user share its quotas) or its pid (SO_PEERCRED)", .fn = cfg_opt, .id = OPT_QUOTA_KEY},
	{.name = "quota-conns", .arg = "N", .help = "connections open at once, attached or not (default " SDR_STR(QUOTA_CONNS_DEFAULT) ")", .fn = cfg_opt, .id = OPT_QUOTA_CONNS},
	{.name = "quota-ctxs", .arg = "N", .help = "attached contexts (default " SDR_STR(QUOTA_CTXS_DEFAULT) ")", .fn = cfg_opt, .id = OPT_QUOTA_CTXS},
	{.name = "quota-qps", .arg = "N", .help = "QPs (default " SDR_STR(QUOTA_QPS_DEFAULT) ")", .fn = cfg_opt, .id = OPT_QUOTA_QPS},
	{.name = "quota-mr-bytes", .arg = "B", .help = "registered memory, K/M/G suffixes (default " SDR_STR(QUOTA_MR_GB_DEFAULT) "G)", .fn = cfg_opt, .id = OPT_QUOTA_MR},
	{.name = "ctl-reply-timeout-ms", .arg = "MS", .help = "drop a client that does not take a reply within MS\n(it does not read its socket; default " SDR_STR(CTL_REPLY_TO_DEFAULT) ")", .fn = cfg_opt, .id = OPT_CTL_REPLY_TO},
	{.name = "ctl-hello-timeout-ms", .arg = "MS", .help = "drop a connection that has not attached (HELLO)\nwithin MS of connecting (default " SDR_STR(CTL_HELLO_TO_DEFAULT) ")", .fn = cfg_opt, .id = OPT_CTL_HELLO_TO},
	SDR_OPT_END,
};

static const struct sdr_opts cfg_set = {
	.prog = "sdr-dpu",
	.usage =
"Usage: sdr-dpu [EAL options] -- [options]\n"
"\n"
"sdr-dpu: software-defined reliability firmware. Moves host messages as RoCEv2\n"
"UC RDMA WRITE (with immediate, or without for immediate 0) packets, one per\n"
"MTU, and keeps SDR receive bitmaps. Hosts attach through a unix socket\n"
"(libsdr).\n"
"\n"
"EAL options come first (e.g. --no-huge --no-shconf --no-pci -m 512\n"
"--file-prefix=dpu-a --vdev=net_af_packet0,iface=veth-a,framesz=9216,blocksz=36864).\n"
"Every DPDK port works: net_af_packet, net_tap, net_ring, net_pcap, net_null, mlx5.\n",
	.footer = "\n"
"Stats are printed at SIGINT/SIGTERM and exposed through DPDK telemetry\n"
"(/sdr/stats, /sdr/qps, /sdr/workers, /sdr/pace_peak; read them with\n"
"dpdk-telemetry.py -f <file-prefix>).\n",
	.opt = cfg_opts,
};

void sdr_cfg_usage(FILE *f, const char *prog)
{
	(void)prog;
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
	cfg->idle_us = 50;
	cfg->idle_spins = 256;
	cfg->cts_resend_ms = 20;
	cfg->mbufs = 8191;
	cfg->icrc = 1;
	cfg->ninst = 1;
	cfg->sr_alpha_milli = 500;
	cfg->sr_rttvar_k = 4;
	cfg->sr_min_rto_us = 2000;
	cfg->sr_init_rto_ms = 200;
	cfg->sr_ack_us = 500;
	cfg->ec_beta_milli = 1000;
	cfg->ec_rtt_us = 0;
	cfg->ec_pool_mb = 64;
	cfg->global_timeout_ms = 3000;
	cfg->qpn_epoch = -1;
	cfg->auto_obj = SDR_MODEL_OBJ_MEAN;
	cfg->quota_conns = QUOTA_CONNS_DEFAULT;
	cfg->quota_ctxs = QUOTA_CTXS_DEFAULT;
	cfg->quota_qps = QUOTA_QPS_DEFAULT;
	cfg->quota_mr_bytes = (uint64_t)QUOTA_MR_GB_DEFAULT << 30;
	cfg->ctl_reply_timeout_ms = CTL_REPLY_TO_DEFAULT;
	cfg->ctl_hello_timeout_ms = CTL_HELLO_TO_DEFAULT;
	if (sdr_auto_schemes_parse(AUTO_SCHEMES_DEFAULT, cfg->auto_cands, &cfg->auto_ncands))
		return -1; /* cannot happen */
	ic = &cfg->inst[0];
	ic->port = -1;
	ic->name = "/tmp/sdr-dpu.sock";

	{
		struct cfg_ctx x = {.cfg = cfg, .ic = ic};
		int first = sdr_opts_parse(&cfg_set, argc, argv, &x);

		if (first == SDR_OPTS_HELP || (first >= 0 && x.done))
			return 1;
		if (first < 0)
			return -1;
		if (first < argc) {
			fprintf(stderr, "sdr-dpu: unexpected argument '%s' (see --help)\n", argv[first]);
			return -1;
		}
		ic = x.ic;
	}

	/* cross-checks */
	uint32_t chunk = cfg->mtu * cfg->chunk_pkts;
	if (cfg->max_msg % chunk || cfg->max_msg < 8 * cfg->mtu) {
		fprintf(stderr,
			"sdr-dpu: --max-msg %u must be a multiple of the chunk (%u packets x %u B = %u B)"
			" and at least 8 packets\n", cfg->max_msg, cfg->chunk_pkts, cfg->mtu, chunk);
		return -1;
	}
	if (cfg->max_msg / cfg->mtu > SDR_MAX_PKTS) {
		fprintf(stderr, "sdr-dpu: --max-msg %u exceeds %u packets of %u B (18-bit packet offset)\n",
			cfg->max_msg, SDR_MAX_PKTS, cfg->mtu);
		return -1;
	}
	/* AUTO: the model must take every candidate (the parity pool is checked
	 * when an AUTO QP is created, as the chunk size of a QP may differ) */
	{
		struct sdr_auto_cfg ac;
		struct sdr_auto *a = malloc(sizeof(*a));
		int bad;

		sdr_auto_cfg_default(&ac);
		ac.rate_bps = 1e9;
		ac.chunk_bytes = chunk;
		ac.pkts_per_chunk = cfg->chunk_pkts;
		ac.ncands = cfg->auto_ncands;
		memcpy(ac.cands, cfg->auto_cands, sizeof(ac.cands));
		bad = !a || sdr_auto_init(a, &ac) != 0;
		free(a);
		if (bad) {
			fprintf(stderr, "sdr-dpu: --auto-schemes: the completion-time model rejects"
					" a candidate\n");
			return -1;
		}
		cfg->auto_max_m = 0;
		for (uint32_t i = 0; i < cfg->auto_ncands; i++)
			if (cfg->auto_cands[i].rel == SDR_REL_EC &&
			    cfg->auto_cands[i].m > cfg->auto_max_m)
				cfg->auto_max_m = cfg->auto_cands[i].m;
	}
	if (cfg->ring_pair && cfg->ninst != 2) {
		fprintf(stderr, "sdr-dpu: --ring-pair needs exactly two instances (use --instance)\n");
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
