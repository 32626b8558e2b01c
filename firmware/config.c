/* SPDX-License-Identifier: BSD-3-Clause */
/* Command line of sdr-dpu (the part after EAL's "--"). Parsed before the
 * EAL starts so that --help and --version work anywhere, even under qemu. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "sdr_types.h"
#include "sdr_units.h"

enum {
	OPT_NAME = 256, OPT_PORT, OPT_IP, OPT_MAC, OPT_PEER_MAC, OPT_LINK, OPT_INSTANCE,
	OPT_RING_PAIR, OPT_MTU, OPT_CHUNK, OPT_MAXMSG, OPT_GENS, OPT_WORKERS, OPT_IDLE_US,
	OPT_IDLE_SPINS, OPT_STATS_INT, OPT_STATS_JSON, OPT_CTS_MS, OPT_MBUFS, OPT_NO_ICRC,
	OPT_PORT_RATE, OPT_PACE_BURST, OPT_HELP, OPT_VERSION, OPT_SR_ALPHA, OPT_SR_MIN_RTO,
	OPT_SR_INIT_RTO, OPT_SR_ACK_US, OPT_GTIMEOUT, OPT_QPN_EPOCH, OPT_SR_K,
	OPT_EC_BETA, OPT_EC_RTT, OPT_EC_POOL, OPT_AUTO_SCHEMES, OPT_AUTO_OBJ,
	OPT_QUOTA_KEY, OPT_QUOTA_CONNS, OPT_QUOTA_CTXS, OPT_QUOTA_QPS, OPT_QUOTA_MR,
	OPT_CTL_REPLY_TO, OPT_CTL_HELLO_TO,
};

#define AUTO_SCHEMES_DEFAULT "sr,rs:32:8,rs:16:4,rs:8:2,xor:32:8"
/* Per-client quotas (docs/host-api.md "Limits and quotas"): a quarter of
 * the instance's context (64) and QP (256) tables, so that one client never
 * fills them; connections: its contexts and as many idle ones. */
#define QUOTA_CONNS_DEFAULT 32u
#define QUOTA_CTXS_DEFAULT 16u
#define QUOTA_QPS_DEFAULT 64u
#define QUOTA_MR_GB_DEFAULT 16u
#define CTL_REPLY_TO_DEFAULT 1000u
#define CTL_HELLO_TO_DEFAULT 3000u

static const struct option long_opts[] = {
	{"name", required_argument, NULL, OPT_NAME},
	{"port", required_argument, NULL, OPT_PORT},
	{"ip", required_argument, NULL, OPT_IP},
	{"mac", required_argument, NULL, OPT_MAC},
	{"peer-mac", required_argument, NULL, OPT_PEER_MAC},
	{"link", required_argument, NULL, OPT_LINK},
	{"instance", no_argument, NULL, OPT_INSTANCE},
	{"ring-pair", no_argument, NULL, OPT_RING_PAIR},
	{"mtu", required_argument, NULL, OPT_MTU},
	{"chunk-pkts", required_argument, NULL, OPT_CHUNK},
	{"max-msg", required_argument, NULL, OPT_MAXMSG},
	{"generations", required_argument, NULL, OPT_GENS},
	{"workers", required_argument, NULL, OPT_WORKERS},
	{"idle-us", required_argument, NULL, OPT_IDLE_US},
	{"idle-spins", required_argument, NULL, OPT_IDLE_SPINS},
	{"stats-interval", required_argument, NULL, OPT_STATS_INT},
	{"stats-json", required_argument, NULL, OPT_STATS_JSON},
	{"cts-resend-ms", required_argument, NULL, OPT_CTS_MS},
	{"mbufs", required_argument, NULL, OPT_MBUFS},
	{"no-icrc", no_argument, NULL, OPT_NO_ICRC},
	{"port-rate", required_argument, NULL, OPT_PORT_RATE},
	{"pace-burst", required_argument, NULL, OPT_PACE_BURST},
	{"sr-alpha", required_argument, NULL, OPT_SR_ALPHA},
	{"sr-min-rto-us", required_argument, NULL, OPT_SR_MIN_RTO},
	{"sr-rttvar-k", required_argument, NULL, OPT_SR_K},
	{"sr-init-rto-ms", required_argument, NULL, OPT_SR_INIT_RTO},
	{"sr-ack-us", required_argument, NULL, OPT_SR_ACK_US},
	{"global-timeout-ms", required_argument, NULL, OPT_GTIMEOUT},
	{"qpn-epoch", required_argument, NULL, OPT_QPN_EPOCH},
	{"ec-beta", required_argument, NULL, OPT_EC_BETA},
	{"ec-rtt-us", required_argument, NULL, OPT_EC_RTT},
	{"ec-pool-mb", required_argument, NULL, OPT_EC_POOL},
	{"auto-schemes", required_argument, NULL, OPT_AUTO_SCHEMES},
	{"auto-objective", required_argument, NULL, OPT_AUTO_OBJ},
	{"quota-key", required_argument, NULL, OPT_QUOTA_KEY},
	{"quota-conns", required_argument, NULL, OPT_QUOTA_CONNS},
	{"quota-ctxs", required_argument, NULL, OPT_QUOTA_CTXS},
	{"quota-qps", required_argument, NULL, OPT_QUOTA_QPS},
	{"quota-mr-bytes", required_argument, NULL, OPT_QUOTA_MR},
	{"ctl-reply-timeout-ms", required_argument, NULL, OPT_CTL_REPLY_TO},
	{"ctl-hello-timeout-ms", required_argument, NULL, OPT_CTL_HELLO_TO},
	{"help", no_argument, NULL, OPT_HELP},
	{"version", no_argument, NULL, OPT_VERSION},
	{NULL, 0, NULL, 0},
};

void sdr_cfg_usage(FILE *f, const char *prog)
{
	fprintf(f,
"Usage: %s [EAL options] -- [options]\n"
"\n"
"sdr-dpu: software-defined reliability firmware. Moves host messages as RoCEv2\n"
"UC RDMA WRITE-with-immediate packets, one per MTU, and keeps SDR receive\n"
"bitmaps. Hosts attach through a unix socket (libsdr).\n"
"\n"
"EAL options come first (e.g. --no-huge --no-shconf --no-pci -m 512\n"
"--file-prefix=dpu-a --vdev=net_af_packet0,iface=veth-a,framesz=9216,blocksz=36864).\n"
"Every DPDK port works: net_af_packet, net_tap, net_ring, net_pcap, net_null, mlx5.\n"
"\n"
"Per-DPU-instance options (apply to the current instance; --instance starts the next):\n"
"  --name PATH          unix socket hosts attach to (default /tmp/sdr-dpu.sock)\n"
"  --port N             DPDK port id of this instance (default: next unused port)\n"
"  --ip A.B.C.D         this DPU's IPv4 address (required)\n"
"  --mac MAC            this DPU's MAC (default: the port's MAC; net_tap, whose\n"
"                       port MAC is its kernel interface's: 02:53:44:52 + the\n"
"                       port MAC's last two bytes; a port without a MAC, e.g.\n"
"                       net_ring: 02:53:44:52:PORT:INSTANCE+1)\n"
"  --peer-mac MAC       static next-hop MAC for every peer (required, except with\n"
"                       --ring-pair where it defaults to the other instance's MAC)\n"
"  --link SPEC          long-haul link emulator on this port's receive side\n"
"                       (e.g. delay=12.5ms,rate=1gbit,buffer=4MB,loss=1e-3,seed=7;\n"
"                       see docs/link-emulator.md)\n"
"  --port-rate RATE     pace everything this instance sends to RATE (bits/s:\n"
"                       10g, 2.5gbit, 800m, 1e9; default 0 = unpaced). QPs may\n"
"                       have their own, lower rate (libsdr qp attr rate_bps)\n"
"  --instance           start describing another DPU instance in this process\n"
"\n"
"Global options:\n"
"  --bridge             run as a bump in the wire between two ports with the link\n"
"                       emulator each way, not as a DPU (sdr-dpu --bridge --help)\n"
"  --ring-pair          create two ports joined back to back by a net_ring pair\n"
"                       (two DPUs in one process; needs two instances)\n"
"  --mtu N              RoCE path MTU: 1024, 2048 or 4096 (default 4096)\n"
"  --chunk-pkts N       packets per bitmap chunk, 1..1024 (default 16)\n"
"  --max-msg BYTES      default and upper bound of a QP's max message size M; K/M/G\n"
"                       suffixes (default 64M; at most 1G at 4096 MTU)\n"
"  --generations G      QPNs (message generations) per SDR QP, power of two 1..16\n"
"                       (default 4)\n"
"  --workers N          worker lcores (default: every non-main lcore of -l/-c, >= 1)\n"
"  --idle-us US         sleep of an idle worker after --idle-spins empty polls\n"
"                       (default 50; 0 = busy-poll)\n"
"  --idle-spins N       empty polls before an idle worker sleeps (default 256)\n"
"  --cts-resend-ms MS   re-send clear-to-send for posted receives that saw no data\n"
"                       (default 20; 0 = never)\n"
"  --mbufs N            packet buffers per instance (default 8191)\n"
"  --pace-burst BYTES   token-bucket depth of every pacer (default: 200 us of the\n"
"                       pacer's rate, at least 64K)\n"
"  --no-icrc            neither generate nor verify the ICRC (benchmarks only)\n"
"  --qpn-epoch N|random QPN range of this boot: QPN blocks start at\n"
"                       0x100 + N*0x1000, N in 0..4094 (default random 1..4094, so\n"
"                       packets for an earlier incarnation count as stale_epoch)\n"

"  --stats-interval S   print the stats block every S seconds (default 0 = only at exit)\n"
"  --stats-json FILE    write all counters as JSON to FILE at exit\n"
"  --help               this text\n"
"  --version            print the version\n"
"\n"
"Selective Repeat (QPs with reliability SR, and the SR part of EC and AUTO QPs;\n"
"docs/reliability.md):\n"
"  --sr-alpha A         RTO = (1 + A) * smoothed RTT (default 0.5; 0..16)\n"
"  --sr-rttvar-k K      ... but at least SRTT + K * RTTVAR (RFC 6298 uses 4;\n"
"                       default 4, 0 = off)\n"
"  --sr-min-rto-us US   RTO floor (default 2000)\n"
"  --sr-init-rto-ms MS  RTO before the first RTT sample (default 200)\n"
"  --sr-ack-us US       receiver ACK coalescing period (default 500); a completed\n"
"                       receive is acknowledged at once\n"
"  --global-timeout-ms MS  no progress of an SR/EC/AUTO QP's sends for MS puts it in\n"
"                       the error state (outstanding operations complete with\n"
"                       -ETIMEDOUT); a receive without progress for MS completes\n"
"                       with -ETIMEDOUT (default 3000; 0 = never)\n"
"\n"
"Erasure coding (QPs with reliability EC, and AUTO's EC messages;\n"
"docs/reliability.md):\n"
"  --ec-beta B          fallback timeout FTO = (M + ceil(M*m/k)) * T_INJ + B * RTT\n"
"                       (default 1.0; 0..16)\n"
"  --ec-rtt-us US       RTT of the FTO (default 0 = estimate: the QP's smoothed\n"
"                       RTT, else the smallest CTS-to-first-packet time)\n"
"  --ec-pool-mb MB      parity buffers of one receiving EC or AUTO QP (default 64)\n"
"\n"
"AUTO (QPs with reliability AUTO pick SR or an EC code per message from the\n"
"measured RTT and chunk loss; docs/reliability.md \"AUTO\"):\n"
"  --auto-schemes LIST  candidates, comma-separated: sr, rs:K:M, xor:K:M (1 <= K\n"
"                       <= 64, 1 <= M <= 32, XOR M <= K; at most 8)\n"
"                       (default " AUTO_SCHEMES_DEFAULT ")\n"
"  --auto-objective O   minimise the predicted mean or p999 completion time\n"
"                       (default mean)\n"
"\n"
"Hosts (control socket; docs/host-api.md \"Limits and quotas\"). Quotas hold per\n"
"client and instance; 0 = no limit. A refusal says which quota in its reason\n"
"(sdr_last_error()) and counts in ctl_quota_*:\n"
"  --quota-key uid|pid  who a client is: the peer's uid (default; processes of\n"
"                       one user share its quotas) or its pid (SO_PEERCRED)\n"
"  --quota-conns N      connections open at once, attached or not (default %u)\n"
"  --quota-ctxs N       attached contexts (default %u)\n"
"  --quota-qps N        QPs (default %u)\n"
"  --quota-mr-bytes B   registered memory, K/M/G suffixes (default %uG)\n"
"  --ctl-reply-timeout-ms MS  drop a client that does not take a reply within MS\n"
"                       (it does not read its socket; default %u)\n"
"  --ctl-hello-timeout-ms MS  drop a connection that has not attached (HELLO)\n"
"                       within MS of connecting (default %u)\n"
"\n"
"Stats are printed at SIGINT/SIGTERM and exposed through DPDK telemetry\n"
"(/sdr/stats, /sdr/qps; read them with dpdk-telemetry.py -f <file-prefix>).\n",
		prog, QUOTA_CONNS_DEFAULT, QUOTA_CTXS_DEFAULT, QUOTA_QPS_DEFAULT,
		QUOTA_MR_GB_DEFAULT, CTL_REPLY_TO_DEFAULT, CTL_HELLO_TO_DEFAULT);
}

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

int sdr_cfg_parse(struct sdr_cfg *cfg, int argc, char **argv)
{
	struct sdr_inst_cfg *ic;
	uint32_t v;
	int c;

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

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", long_opts, NULL)) != -1) {
		switch (c) {
		case OPT_HELP:
			sdr_cfg_usage(stdout, "sdr-dpu");
			return 1;
		case OPT_VERSION:
			printf("sdr-dpu %s (ABI %d.%d)\n", SDR_VERSION, SDR_ABI_MAJOR, SDR_ABI_MINOR);
			return 1;
		case OPT_NAME:
			ic->name = optarg;
			break;
		case OPT_PORT:
			if (opt_u32("--port", optarg, 0, RTE_MAX_ETHPORTS - 1, &v, 0))
				return -1;
			ic->port = (int)v;
			break;
		case OPT_IP:
			if (sdr_parse_ipv4(optarg, &ic->ip)) {
				fprintf(stderr, "sdr-dpu: --ip: '%s' is not an IPv4 address\n", optarg);
				return -1;
			}
			ic->has_ip = 1;
			break;
		case OPT_MAC:
		case OPT_PEER_MAC:
			if (sdr_parse_mac(optarg, c == OPT_MAC ? ic->mac : ic->peer_mac)) {
				fprintf(stderr, "sdr-dpu: %s: '%s' is not a MAC address (aa:bb:cc:dd:ee:ff)\n",
					c == OPT_MAC ? "--mac" : "--peer-mac", optarg);
				return -1;
			}
			if (c == OPT_MAC)
				ic->has_mac = 1;
			else
				ic->has_peer_mac = 1;
			break;
		case OPT_LINK:
			ic->link = optarg;
			break;
		case OPT_INSTANCE:
			if (cfg->ninst == SDR_MAX_INST) {
				fprintf(stderr, "sdr-dpu: at most %d instances\n", SDR_MAX_INST);
				return -1;
			}
			ic = &cfg->inst[cfg->ninst++];
			ic->port = -1;
			ic->name = NULL;
			break;
		case OPT_RING_PAIR:
			cfg->ring_pair = 1;
			break;
		case OPT_MTU:
			if (opt_u32("--mtu", optarg, 1024, 4096, &cfg->mtu, 0))
				return -1;
			if (cfg->mtu != 1024 && cfg->mtu != 2048 && cfg->mtu != 4096) {
				fprintf(stderr, "sdr-dpu: --mtu must be 1024, 2048 or 4096\n");
				return -1;
			}
			break;
		case OPT_CHUNK:
			if (opt_u32("--chunk-pkts", optarg, 1, 1024, &cfg->chunk_pkts, 0))
				return -1;
			break;
		case OPT_MAXMSG:
			if (opt_u32("--max-msg", optarg, 1, 1u << 30, &cfg->max_msg, 1))
				return -1;
			break;
		case OPT_GENS:
			if (opt_u32("--generations", optarg, 1, 16, &cfg->generations, 0))
				return -1;
			if (!sdr_is_pow2(cfg->generations)) {
				fprintf(stderr, "sdr-dpu: --generations must be a power of two\n");
				return -1;
			}
			break;
		case OPT_WORKERS:
			if (opt_u32("--workers", optarg, 1, SDR_MAX_WORKERS, &v, 0))
				return -1;
			cfg->workers = v;
			break;
		case OPT_IDLE_US:
			if (opt_u32("--idle-us", optarg, 0, 100000, &v, 0))
				return -1;
			cfg->idle_us = v;
			break;
		case OPT_IDLE_SPINS:
			if (opt_u32("--idle-spins", optarg, 1, 1u << 30, &v, 0))
				return -1;
			cfg->idle_spins = v;
			break;
		case OPT_STATS_INT:
			if (opt_u32("--stats-interval", optarg, 0, 86400, &v, 0))
				return -1;
			cfg->stats_interval = v;
			break;
		case OPT_STATS_JSON:
			cfg->stats_json = optarg;
			break;
		case OPT_CTS_MS:
			if (opt_u32("--cts-resend-ms", optarg, 0, 60000, &v, 0))
				return -1;
			cfg->cts_resend_ms = v;
			break;
		case OPT_MBUFS:
			if (opt_u32("--mbufs", optarg, 511, 1u << 24, &v, 0))
				return -1;
			cfg->mbufs = v;
			break;
		case OPT_PORT_RATE:
			if (sdr_parse_rate(optarg, &ic->port_rate)) {
				fprintf(stderr, "sdr-dpu: --port-rate: '%s' is not a rate (e.g. 10g, 800mbit)\n",
					optarg);
				return -1;
			}
			break;
		case OPT_PACE_BURST:
			if (opt_u32("--pace-burst", optarg, 2048, 1u << 30, &cfg->pace_burst, 1))
				return -1;
			break;
		case OPT_NO_ICRC:
			cfg->icrc = 0;
			break;
		case OPT_SR_ALPHA: {
			char *end;
			double a;
			errno = 0;
			a = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(a >= 0 && a <= 16)) {
				fprintf(stderr, "sdr-dpu: --sr-alpha: '%s' is not a number in [0, 16]\n",
					optarg);
				return -1;
			}
			cfg->sr_alpha_milli = (uint32_t)(a * 1000 + 0.5);
			break;
		}
		case OPT_SR_K:
			if (opt_u32("--sr-rttvar-k", optarg, 0, 64, &cfg->sr_rttvar_k, 0))
				return -1;
			break;
		case OPT_SR_MIN_RTO:
			if (opt_u32("--sr-min-rto-us", optarg, 1, 10000000, &cfg->sr_min_rto_us, 0))
				return -1;
			break;
		case OPT_SR_INIT_RTO:
			if (opt_u32("--sr-init-rto-ms", optarg, 1, 60000, &cfg->sr_init_rto_ms, 0))
				return -1;
			break;
		case OPT_SR_ACK_US:
			if (opt_u32("--sr-ack-us", optarg, 0, 1000000, &cfg->sr_ack_us, 0))
				return -1;
			break;
		case OPT_EC_BETA: {
			char *end;
			double b;
			errno = 0;
			b = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(b >= 0 && b <= 16)) {
				fprintf(stderr, "sdr-dpu: --ec-beta: '%s' is not a number in [0, 16]\n",
					optarg);
				return -1;
			}
			cfg->ec_beta_milli = (uint32_t)(b * 1000 + 0.5);
			break;
		}
		case OPT_EC_RTT:
			if (opt_u32("--ec-rtt-us", optarg, 0, 10000000, &cfg->ec_rtt_us, 0))
				return -1;
			break;
		case OPT_EC_POOL:
			if (opt_u32("--ec-pool-mb", optarg, 1, 65536, &cfg->ec_pool_mb, 0))
				return -1;
			break;
		case OPT_AUTO_SCHEMES:
			if (sdr_auto_schemes_parse(optarg, cfg->auto_cands, &cfg->auto_ncands)) {
				fprintf(stderr, "sdr-dpu: --auto-schemes: '%s' is not a list of at most %u"
						" distinct schemes sr, rs:K:M, xor:K:M (1 <= K <= 64,"
						" 1 <= M <= 32, XOR M <= K)\n", optarg, SDR_AUTO_MAX_CANDS);
				return -1;
			}
			break;
		case OPT_AUTO_OBJ:
			if (!strcmp(optarg, "mean")) {
				cfg->auto_obj = SDR_MODEL_OBJ_MEAN;
			} else if (!strcmp(optarg, "p999")) {
				cfg->auto_obj = SDR_MODEL_OBJ_P999;
			} else {
				fprintf(stderr, "sdr-dpu: --auto-objective: '%s' is not mean or p999\n",
					optarg);
				return -1;
			}
			break;
		case OPT_QUOTA_KEY:
			if (!strcmp(optarg, "uid")) {
				cfg->quota_by_pid = 0;
			} else if (!strcmp(optarg, "pid")) {
				cfg->quota_by_pid = 1;
			} else {
				fprintf(stderr, "sdr-dpu: --quota-key: '%s' is not uid or pid\n", optarg);
				return -1;
			}
			break;
		case OPT_QUOTA_CONNS:
			if (opt_u32("--quota-conns", optarg, 0, 1u << 20, &cfg->quota_conns, 0))
				return -1;
			break;
		case OPT_QUOTA_CTXS:
			if (opt_u32("--quota-ctxs", optarg, 0, 1u << 20, &cfg->quota_ctxs, 0))
				return -1;
			break;
		case OPT_QUOTA_QPS:
			if (opt_u32("--quota-qps", optarg, 0, 1u << 20, &cfg->quota_qps, 0))
				return -1;
			break;
		case OPT_QUOTA_MR: {
			uint64_t b;
			if (sdr_parse_u64(optarg, &b, 1) || b > (1ull << 50)) {
				fprintf(stderr, "sdr-dpu: --quota-mr-bytes: '%s' is not a size in [0, 1048576G]"
						" (K/M/G suffixes)\n", optarg);
				return -1;
			}
			cfg->quota_mr_bytes = b;
			break;
		}
		case OPT_CTL_REPLY_TO:
			if (opt_u32("--ctl-reply-timeout-ms", optarg, 1, 3600000, &cfg->ctl_reply_timeout_ms,
				    0))
				return -1;
			break;
		case OPT_CTL_HELLO_TO:
			if (opt_u32("--ctl-hello-timeout-ms", optarg, 1, 3600000, &cfg->ctl_hello_timeout_ms,
				    0))
				return -1;
			break;
		case OPT_GTIMEOUT:
			if (opt_u32("--global-timeout-ms", optarg, 0, 3600000, &cfg->global_timeout_ms, 0))
				return -1;
			break;
		case OPT_QPN_EPOCH:
			if (!strcmp(optarg, "random")) {
				cfg->qpn_epoch = -1;
			} else {
				if (opt_u32("--qpn-epoch", optarg, 0, SDR_QPN_EPOCHS - 1, &v, 0))
					return -1;
				cfg->qpn_epoch = (int)v;
			}
			break;
		default:
			fprintf(stderr, "sdr-dpu: unknown or incomplete option '%s' (see --help)\n",
				argv[optind - 1]);
			return -1;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "sdr-dpu: unexpected argument '%s' (see --help)\n", argv[optind]);
		return -1;
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
			if (cfg->auto_cands[i].code != SDR_MODEL_SR &&
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
