/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-dpu main: parse our options (before the EAL, so --help/--version work
 * anywhere), start the EAL, set up ports, launch workers, then run the
 * control plane and the periodic stats on the main lcore until SIGINT/SIGTERM.
 * Layer ctl/: the control plane (main lcore); it calls the layers below, nothing calls it.
 */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_ethdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include "bridge.h"
#include "ctrl.h"
#include "port.h"
#include "linkemu_glue.h"
#include "metrics.h"
#include "stats.h"
#include "worker.h"

struct sdr_dpu sdr_g;

static void on_signal(int sig)
{
	(void)sig;
	sdr_g.running = 0;
}

/* argv = prog [EAL...] [-- ours...]. Returns the index of "--" or argc. */
static int split_args(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--"))
			return i;
	return argc;
}

static int wants_info(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h") ||
		    !strcmp(argv[i], "--version"))
			return 1;
	return 0;
}

static int setup_workers(void)
{
	unsigned lcore, n = 0;
	char name[RTE_RING_NAMESIZE];

	RTE_LCORE_FOREACH_WORKER(lcore)
	{
		if (sdr_g.cfg.workers && n == sdr_g.cfg.workers)
			break;
		if (n == SDR_MAX_WORKERS)
			break;
		struct sdr_worker *w = &sdr_g.workers[n];
		w->idx = n;
		w->lcore = lcore;
		snprintf(name, sizeof(name), "sdr_cmd%u", n);
		w->cmd = rte_ring_create(name, 64, rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
		snprintf(name, sizeof(name), "sdr_hand%u", n);
		w->handoff = rte_ring_create(name, 4096, rte_socket_id(), RING_F_SC_DEQ);
		if (!w->cmd || !w->handoff) {
			fprintf(stderr, "sdr-dpu: cannot create worker rings: %s\n",
				rte_strerror(rte_errno));
			return -1;
		}
		n++;
	}
	if (n == 0 || (sdr_g.cfg.workers && n < sdr_g.cfg.workers)) {
		fprintf(stderr,
			"sdr-dpu: %u worker lcore(s) needed, the EAL gave %u besides the main lcore"
			" (use e.g. -l 0-%u)\n",
			sdr_g.cfg.workers ? sdr_g.cfg.workers : 1, n,
			sdr_g.cfg.workers ? sdr_g.cfg.workers : 1);
		return -1;
	}
	sdr_g.nworkers = n;
	if (sdr_g.cfg.channels > n) { /* a QP of the default would be refused (libsdr) */
		fprintf(stderr,
			"sdr-dpu: --channels %u needs %u workers (a worker per channel), there"
			" are %u\n",
			sdr_g.cfg.channels, sdr_g.cfg.channels, n);
		return -1;
	}
	for (unsigned i = 0; i < n; i++)
		if (sdr_worker_init(&sdr_g.workers[i], rte_get_tsc_cycles())) {
			fprintf(stderr, "sdr-dpu: out of memory for the workers' pacers\n");
			return -1;
		}
	return 0;
}

static void workers_fini(void)
{
	for (unsigned i = 0; i < sdr_g.nworkers; i++)
		sdr_worker_fini(&sdr_g.workers[i]);
}

int main(int argc, char **argv)
{
	int dd = split_args(argc, argv);
	int rc;
	uint64_t next_stats;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (sdr_bridge_wanted(argc, argv)) /* a bump in the wire, not a DPU (bridge.c) */
		return sdr_bridge_cli(argc, argv, dd);
	if (dd == argc && wants_info(argc, argv)) {
		/* `sdr-dpu --help` without EAL arguments */
		rc = sdr_cfg_parse(&sdr_g.cfg, argc, argv);
		return rc == 1 ? 0 : 1;
	}
	/* our options first, so that errors come before the EAL's noise */
	char **ours = &argv[dd < argc ? dd : argc - 1];
	int nours = dd < argc ? argc - dd : 1;
	char *prog = argv[0];
	if (dd < argc)
		ours[0] = prog;
	rc = sdr_cfg_parse(&sdr_g.cfg, nours, ours);
	if (rc)
		return rc == 1 ? 0 : 1;
	if (dd < argc)
		ours[0] = (char *)"--";

	rc = rte_eal_init(dd, argv);
	if (rc < 0) {
		fprintf(stderr, "sdr-dpu: EAL init failed: %s\n", rte_strerror(rte_errno));
		return 1;
	}
	sdr_g.tsc_hz = rte_get_tsc_hz();
	sdr_g.running = 1;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);

	if (setup_workers() || sdr_ports_init())
		goto fail;
	for (unsigned i = 0; i < sdr_g.ninst; i++)
		if (sdr_ctrl_init(&sdr_g.inst[i]))
			goto fail;
	sdr_telemetry_register();
	sdr_ct_hist_init(sdr_g.tsc_hz);
	if (sdr_g.cfg.metrics && sdr_metrics_start(sdr_g.cfg.metrics))
		goto fail;

	for (unsigned i = 0; i < sdr_g.nworkers; i++)
		rte_eal_remote_launch(sdr_worker_main, &sdr_g.workers[i], sdr_g.workers[i].lcore);
	for (unsigned i = 0; i < sdr_g.ninst; i++) {
		char mac[18], ip[16], pmac[18];
		struct sdr_inst *in = &sdr_g.inst[i];
		sdr_format_mac(in->mac, mac);
		sdr_format_mac(in->peer_mac, pmac);
		sdr_format_ipv4(in->ip, ip);
		printf("sdr-dpu[%s]: ready on port %u, ip %s mac %s peer-mac %s, mtu %u, QPNs from "
		       "0x%x,"
		       " %u worker(s)%s\n",
		       in->cfg.name, in->port, ip, mac, pmac, sdr_g.cfg.mtu, in->qpn_first,
		       sdr_g.nworkers, sdr_linkemu_on(in) ? ", link emulator on RX" : "");
	}

	next_stats = rte_get_tsc_cycles() + sdr_g.cfg.stats_interval * sdr_g.tsc_hz;
	while (sdr_g.running) {
		sdr_ctrl_poll(100);
		sdr_metrics_poll();
		if (sdr_g.cfg.stats_interval && rte_get_tsc_cycles() >= next_stats) {
			sdr_stats_print(stdout);
			next_stats = rte_get_tsc_cycles() + sdr_g.cfg.stats_interval * sdr_g.tsc_hz;
		}
	}
	printf("sdr-dpu: shutting down\n");
	sdr_metrics_stop();
	rte_eal_mp_wait_lcore();
	sdr_g.workers_stopped = 1;
	sdr_stats_print(stdout);
	if (sdr_g.cfg.stats_json && sdr_stats_json(sdr_g.cfg.stats_json))
		fprintf(stderr, "sdr-dpu: cannot write %s\n", sdr_g.cfg.stats_json);
	/* workers are stopped: tear down hosts without worker calls */
	sdr_ctrl_fini();
	sdr_ports_fini();
	workers_fini();
	rte_eal_cleanup();
	return 0;
fail:
	sdr_metrics_stop();
	sdr_g.running = 0;
	rte_eal_mp_wait_lcore();
	sdr_g.workers_stopped = 1;
	sdr_ctrl_fini();
	workers_fini();
	rte_eal_cleanup();
	return 1;
}
