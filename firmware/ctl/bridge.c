/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-dpu --bridge: a bump in the wire. Frames received on DPDK port 0 go
 * out of port 1 and the other way round, each direction through its own
 * instance of the long-haul link emulator (firmware/linkemu, the same model as
 * --link). Nothing else of the firmware runs: no hosts, no QPs. Put between
 * two network namespaces (two veth pairs, net_af_packet on the bridge's
 * ends), it gives kernel TCP (gloo, PyTorch's store) the same emulated link
 * the DPUs see. docs/link-emulator.md "Bump in the wire".
 * Layer ctl/: the control plane (main lcore); it calls the layers below, nothing calls it.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "bridge.h"
#include "sdr_link_dpdk.h"

#define BR_BURST 32
#define BR_DATA_ROOM 9216 /* a 9000-byte MTU frame */
#define BR_NB_DESC 1024
#define BR_LINE_BPS 10e9   /* BDP of a link spec without rate= */
#define BR_FRAME_EST 1024u /* frame size for the pool estimate (ACKs are small) */

struct br_dir {
	const char *spec;          /* --link-ab / --link-ba (or --link) */
	struct sdr_link_plan plan; /* its paths: the default lane's */
	struct sdr_link_rx *link;
	uint16_t in, out; /* ports */
	uint64_t rx, rx_bytes, tx, tx_drop;
};

static volatile sig_atomic_t br_running = 1;

static void br_signal(int sig)
{
	(void)sig;
	br_running = 0;
}

void sdr_bridge_usage(FILE *f)
{
	fprintf(f,
		"Usage: sdr-dpu [EAL options] -- --bridge [options]\n"
		"\n"
		"Bump in the wire: forward every frame between DPDK ports 0 and 1 (port 0's\n"
		"frames out of port 1 and back), each direction through the long-haul link\n"
		"emulator. No hosts attach. The EAL needs exactly two ports, e.g.\n"
		"  --no-huge --no-shconf --no-pci -m 1024 -l 0 --file-prefix=br\n"
		"  --vdev=net_af_packet0,iface=brA,framesz=9216,blocksz=36864,framecnt=8192\n"
		"  --vdev=net_af_packet1,iface=brB,framesz=9216,blocksz=36864,framecnt=8192\n"
		"Both ports are put in promiscuous mode.\n"
		"\n"
		"Options:\n"
		"  --link SPEC          emulate SPEC in both directions (docs/link-emulator.md);\n"
		"                       the B->A direction uses seed+1 so that the two\n"
		"                       directions lose independently\n"
		"  --link-ab SPEC       the port 0 -> port 1 direction (overrides --link)\n"
		"  --link-ba SPEC       the port 1 -> port 0 direction (overrides --link)\n"
		"  --mbufs N            packet buffers (default 16384, raised to what the\n"
		"                       emulated links hold: their bandwidth-delay products)\n"
		"  --idle-us US         sleep after --idle-spins empty polls (default 20; 0 =\n"
		"                       busy-poll); held frames are released on the next poll\n"
		"  --idle-spins N       (default 256)\n"
		"  --stats-interval S   print the counters every S seconds (default 0 = at exit)\n"
		"  --stats-json FILE    write the counters as JSON at exit\n"
		"  --help\n");
}

enum {
	B_BRIDGE = 1,
	B_LINK,
	B_LINK_AB,
	B_LINK_BA,
	B_MBUFS,
	B_IDLE_US,
	B_IDLE_SPINS,
	B_STATS,
	B_JSON,
	B_HELP
};

struct br_opts {
	const char *link, *link_ab, *link_ba, *json;
	unsigned mbufs, idle_us, idle_spins, stats_interval;
};

static int parse_uint(const char *s, unsigned lo, unsigned hi, unsigned *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = (unsigned)v;
	return 0;
}

/* 0, 1 (--help printed), or -1 (message printed) */
static int br_parse(int argc, char **argv, struct br_opts *o)
{
	static const struct option lo[] = {{"bridge", 0, 0, B_BRIDGE},
					   {"link", 1, 0, B_LINK},
					   {"link-ab", 1, 0, B_LINK_AB},
					   {"link-ba", 1, 0, B_LINK_BA},
					   {"mbufs", 1, 0, B_MBUFS},
					   {"idle-us", 1, 0, B_IDLE_US},
					   {"idle-spins", 1, 0, B_IDLE_SPINS},
					   {"stats-interval", 1, 0, B_STATS},
					   {"stats-json", 1, 0, B_JSON},
					   {"help", 0, 0, B_HELP},
					   {0, 0, 0, 0}};
	int c;

	memset(o, 0, sizeof(*o));
	o->mbufs = 16384;
	o->idle_us = 20;
	o->idle_spins = 256;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case B_BRIDGE: break;
		case B_LINK: o->link = optarg; break;
		case B_LINK_AB: o->link_ab = optarg; break;
		case B_LINK_BA: o->link_ba = optarg; break;
		case B_MBUFS:
			if (parse_uint(optarg, 1024, 1u << 22, &o->mbufs))
				goto bad;
			break;
		case B_IDLE_US:
			if (parse_uint(optarg, 0, 100000, &o->idle_us))
				goto bad;
			break;
		case B_IDLE_SPINS:
			if (parse_uint(optarg, 1, 1u << 30, &o->idle_spins))
				goto bad;
			break;
		case B_STATS:
			if (parse_uint(optarg, 0, 86400, &o->stats_interval))
				goto bad;
			break;
		case B_JSON: o->json = optarg; break;
		case B_HELP: sdr_bridge_usage(stdout); return 1;
		default:
			fprintf(stderr,
				"sdr-dpu --bridge: unknown or incomplete option '%s' (--help lists "
				"the bridge's options; the DPU options do not apply)\n",
				argv[optind - 1]);
			return -1;
		}
		continue;
bad:
		fprintf(stderr, "sdr-dpu --bridge: bad value '%s' for %s\n", optarg,
			argv[optind - 2]);
		return -1;
	}
	if (optind != argc) {
		fprintf(stderr, "sdr-dpu --bridge: unexpected argument '%s'\n", argv[optind]);
		return -1;
	}
	return 0;
}

/* The direction's plan: only the default lane, of one or several paths;
 * @p second (the B->A direction of one --link) moves every seed by the
 * number of paths, so no path shares its random streams with the other
 * direction's. */
static int br_link_cfg(struct br_dir *d, const char *spec, int second)
{
	char err[600];

	d->spec = spec;
	if (sdr_link_plan_init_spec(&d->plan, spec, err, sizeof(err))) {
		fprintf(stderr, "sdr-dpu --bridge: link '%s': %s\n", spec, err);
		return -1;
	}
	for (unsigned i = 0; second && i < d->plan.nlanes; i++)
		d->plan.lane[i].cfg.seed += d->plan.nlanes;
	return 0;
}

static int br_port(uint16_t port, struct rte_mempool *pool)
{
	struct rte_eth_conf conf;
	uint16_t nrxd = BR_NB_DESC, ntxd = BR_NB_DESC;
	int rc;

	memset(&conf, 0, sizeof(conf));
	if ((rc = rte_eth_dev_configure(port, 1, 1, &conf)) ||
	    (rc = rte_eth_dev_adjust_nb_rx_tx_desc(port, &nrxd, &ntxd)) ||
	    (rc = rte_eth_rx_queue_setup(port, 0, nrxd, rte_eth_dev_socket_id(port), NULL, pool)) ||
	    (rc = rte_eth_tx_queue_setup(port, 0, ntxd, rte_eth_dev_socket_id(port), NULL))) {
		fprintf(stderr, "sdr-dpu --bridge: port %u: setup failed: %s\n", port,
			rte_strerror(-rc));
		return -1;
	}
	return 0;
}

static void br_print(FILE *f, struct br_dir *d, int n)
{
	for (int i = 0; i < n; i++) {
		struct sdr_link_stats st;
		char title[1200], lane[1100];

		fprintf(f,
			"bridge port %u -> port %u: %" PRIu64 " frames (%" PRIu64
			" bytes) in, %" PRIu64 " out, %" PRIu64 " dropped at TX\n",
			d[i].in, d[i].out, d[i].rx, d[i].rx_bytes, d[i].tx, d[i].tx_drop);
		if (!d[i].link)
			continue;
		sdr_link_rx_stats(d[i].link, &st);
		snprintf(title, sizeof(title), "link emulator port %u -> %u%s", d[i].in, d[i].out,
			 d[i].plan.nlanes > 1 ? " (every path)" : "");
		sdr_link_stats_print(f, title, &st);
		for (unsigned l = 0; d[i].plan.nlanes > 1 && l < d[i].plan.nlanes; l++) {
			sdr_link_rx_lane_stats(d[i].link, l, &st);
			sdr_link_plan_format_lane(&d[i].plan, l, lane, sizeof(lane));
			snprintf(title, sizeof(title), "link emulator port %u -> %u, %s", d[i].in,
				 d[i].out, lane);
			sdr_link_stats_print(f, title, &st);
		}
	}
}

static void br_json_counters(FILE *f, const struct sdr_link_stats *st)
{
	int k = 0;

#define BR_JSON_FIELD_(name, help) fprintf(f, "%s\"%s\":%" PRIu64, k++ ? "," : "", #name, st->name);
	SDR_LINK_STATS(BR_JSON_FIELD_)
#undef BR_JSON_FIELD_
}

static int br_json(const char *path, struct br_dir *d, int n)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -errno;
	fprintf(f, "{\"bridge\":[");
	for (int i = 0; i < n; i++) {
		struct sdr_link_stats st;

		memset(&st, 0, sizeof(st));
		if (d[i].link)
			sdr_link_rx_stats(d[i].link, &st);
		fprintf(f,
			"%s{\"in\":%u,\"out\":%u,\"rx\":%" PRIu64 ",\"rx_bytes\":%" PRIu64
			",\"tx\":%" PRIu64 ",\"tx_drop\":%" PRIu64 ",\"link\":{",
			i ? "," : "", d[i].in, d[i].out, d[i].rx, d[i].rx_bytes, d[i].tx,
			d[i].tx_drop);
		br_json_counters(f, &st);
		/* one object per path (one with a single path), as the daemon's
		 * "lanes" */
		fprintf(f, "},\"lanes\":[");
		for (unsigned l = 0; d[i].link && l < d[i].plan.nlanes; l++) {
			char lane[1100];

			sdr_link_rx_lane_stats(d[i].link, l, &st);
			sdr_link_plan_format_lane(&d[i].plan, l, lane, sizeof(lane));
			fprintf(f, "%s{\"lane\":\"%s\",", l ? "," : "", lane);
			br_json_counters(f, &st);
			fprintf(f, "}");
		}
		fprintf(f, "]}");
	}
	fprintf(f, "]}\n");
	return fclose(f) ? -errno : 0;
}

/* Forward one burst from d->in to d->out; returns frames moved. */
static unsigned br_forward(struct br_dir *d)
{
	struct rte_mbuf *pkts[BR_BURST];
	uint16_t n = rte_eth_rx_burst(d->in, 0, pkts, BR_BURST), sent = 0;

	if (n == 0)
		return 0;
	d->rx += n;
	for (uint16_t i = 0; i < n; i++)
		d->rx_bytes += rte_pktmbuf_pkt_len(pkts[i]);
	for (int tries = 0; sent < n && tries < 64; tries++)
		sent += rte_eth_tx_burst(d->out, 0, pkts + sent, (uint16_t)(n - sent));
	d->tx += sent;
	if (sent < n) {
		d->tx_drop += n - sent;
		rte_pktmbuf_free_bulk(pkts + sent, n - sent);
	}
	return n;
}

static int sdr_bridge_main(int eal_argc, char **eal_argv, int argc, char **argv)
{
	struct br_opts o;
	struct br_dir d[2];
	struct rte_mempool *pool = NULL;
	char desc[8192]; /* every path */
	int rc = br_parse(argc, argv, &o), status = 1;

	if (rc)
		return rc > 0 ? 0 : 1;
	memset(d, 0, sizeof(d));
	d[0].in = 0, d[0].out = 1, d[1].in = 1, d[1].out = 0;
	if (br_link_cfg(&d[0], o.link_ab ? o.link_ab : o.link, 0) ||
	    br_link_cfg(&d[1], o.link_ba ? o.link_ba : o.link, !o.link_ba && o.link))
		return 1;
	if (rte_eal_init(eal_argc, eal_argv) < 0) {
		fprintf(stderr, "sdr-dpu --bridge: EAL init failed: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	signal(SIGINT, br_signal);
	signal(SIGTERM, br_signal);
	if (rte_eth_dev_count_avail() != 2) {
		fprintf(stderr,
			"sdr-dpu --bridge: needs exactly two DPDK ports (two --vdev), the EAL "
			"has %u\n",
			rte_eth_dev_count_avail());
		goto out;
	}
	unsigned need = 0;

	for (int i = 0; i < 2; i++)
		if (d[i].spec)
			need += sdr_link_plan_mbufs_needed(&d[i].plan, BR_FRAME_EST, BR_LINE_BPS);
	unsigned nmbufs = o.mbufs > need + 2 * BR_NB_DESC + 1024 ? o.mbufs
								 : need + 2 * BR_NB_DESC + 1024;

	pool = rte_pktmbuf_pool_create("sdr_bridge", nmbufs, 256, 0,
				       RTE_PKTMBUF_HEADROOM + BR_DATA_ROOM, rte_socket_id());
	if (!pool) {
		fprintf(stderr,
			"sdr-dpu --bridge: cannot allocate %u mbufs of %u B (%u MB): %s (raise "
			"EAL -m, or lower the links' delay x rate and buffer)\n",
			nmbufs, RTE_PKTMBUF_HEADROOM + BR_DATA_ROOM,
			(unsigned)((uint64_t)nmbufs * (RTE_PKTMBUF_HEADROOM + BR_DATA_ROOM + 256) >>
				   20),
			rte_strerror(rte_errno));
		goto out;
	}
	for (uint16_t p = 0; p < 2; p++)
		if (br_port(p, pool))
			goto out;
	for (int i = 0; i < 2; i++) {
		if (!d[i].spec)
			continue;
		d[i].link = sdr_link_rx_attach_plan(d[i].in, 0, &d[i].plan, pool);
		if (!d[i].link) {
			fprintf(stderr,
				"sdr-dpu --bridge: cannot attach the link emulator to port %u: "
				"%s\n",
				d[i].in, rte_strerror(rte_errno));
			goto out;
		}
	}
	for (uint16_t p = 0; p < 2; p++) {
		if ((rc = rte_eth_dev_start(p))) {
			fprintf(stderr, "sdr-dpu --bridge: port %u: start failed: %s\n", p,
				rte_strerror(-rc));
			goto out;
		}
		if ((rc = rte_eth_promiscuous_enable(p)))
			fprintf(stderr, "sdr-dpu --bridge: note: port %u: promiscuous mode: %s\n",
				p, rte_strerror(-rc));
	}
	for (int i = 0; i < 2; i++) {
		const char *spec = "no emulation";

		/* (the default lane's text without its name) */
		if (d[i].spec && sdr_link_plan_format(&d[i].plan, 0, desc, sizeof(desc)) >= 0)
			spec = desc + strlen(SDR_LINK_DEFAULT_LANE_NAME) + 1;
		printf("sdr-dpu --bridge: port %u -> port %u: %s\n", d[i].in, d[i].out, spec);
	}
	printf("sdr-dpu --bridge: forwarding, %u mbufs\n", nmbufs);

	uint64_t hz = rte_get_tsc_hz(), next = rte_get_tsc_cycles() + o.stats_interval * hz;
	unsigned idle = 0;

	while (br_running) {
		unsigned moved = br_forward(&d[0]) + br_forward(&d[1]);

		if (moved) {
			idle = 0;
		} else if (o.idle_us && ++idle >= o.idle_spins) {
			usleep(o.idle_us);
		}
		if (o.stats_interval && rte_get_tsc_cycles() >= next) {
			br_print(stdout, d, 2);
			next = rte_get_tsc_cycles() + o.stats_interval * hz;
		}
	}
	printf("sdr-dpu --bridge: shutting down\n");
	br_print(stdout, d, 2);
	status = 0;
	if (o.json && (rc = br_json(o.json, d, 2))) {
		fprintf(stderr, "sdr-dpu --bridge: %s: %s\n", o.json, strerror(-rc));
		status = 1;
	}
out:
	for (uint16_t p = 0; p < rte_eth_dev_count_avail() && p < 2; p++)
		rte_eth_dev_stop(p);
	for (int i = 0; i < 2; i++)
		sdr_link_rx_detach(d[i].link);
	rte_eal_cleanup();
	return status;
}

int sdr_bridge_wanted(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--bridge"))
			return 1;
	return 0;
}

int sdr_bridge_cli(int argc, char **argv, int dd)
{
	if (dd == argc) { /* no EAL arguments: only --help makes sense */
		for (int i = 1; i < argc; i++)
			if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
				sdr_bridge_usage(stdout);
				return 0;
			}
		fprintf(stderr,
			"sdr-dpu --bridge: give the EAL arguments (two ports), then --, then "
			"--bridge and its options (sdr-dpu --bridge --help)\n");
		return 2;
	}
	char *prog = argv[0], *dash = argv[dd];
	int rc;

	argv[dd] = prog; /* our options: prog --bridge ... */
	rc = br_parse(argc - dd, &argv[dd], &(struct br_opts){0});
	argv[dd] = dash;
	if (rc)
		return rc > 0 ? 0 : 1;
	argv[dd] = prog;
	rc = sdr_bridge_main(dd, argv, argc - dd, &argv[dd]);
	return rc;
}
