/* SPDX-License-Identifier: BSD-3-Clause */
/* --link: the long-haul link emulator (firmware/linkemu/) on an instance's RX. */
#include <stdio.h>
#include <string.h>

#include <rte_errno.h>
#include <rte_ethdev.h>

#include "sdr_types.h"
#include "linkemu_glue.h"
#include "sdr_link_dpdk.h"

/* Line rate assumed for the BDP when the spec sets no rate= and the port
 * reports no speed (the mbufs a fast sender can have in flight on the
 * emulated path). */
#define SDR_LINK_DEFAULT_LINE_BPS 10e9

static struct sdr_link_cfg link_cfg[SDR_MAX_INST];
static double line_bps[SDR_MAX_INST];

/* The rate frames can arrive at: the port's speed, else 10 Gbit/s. */
static double port_line_bps(uint16_t port)
{
	struct rte_eth_link l;

	memset(&l, 0, sizeof(l));
	if (rte_eth_link_get_nowait(port, &l) == 0 && l.link_speed != 0 &&
	    l.link_speed != RTE_ETH_SPEED_NUM_UNKNOWN)
		return (double)l.link_speed * 1e6;
	return SDR_LINK_DEFAULT_LINE_BPS;
}

static unsigned frame_bytes(void)
{
	return sdr_wire_data_frame_bytes(sdr_g.cfg.mtu);
}

int sdr_linkemu_prepare(struct sdr_inst *in, unsigned *extra_mbufs)
{
	char err[256];

	*extra_mbufs = 0;
	if (!in->cfg.link)
		return 0;
	if (sdr_link_parse(in->cfg.link, &link_cfg[in->idx], err, sizeof(err))) {
		fprintf(stderr, "sdr-dpu: --link '%s': %s\n", in->cfg.link, err);
		return -1;
	}
	line_bps[in->idx] = port_line_bps(in->port);
	*extra_mbufs = sdr_link_mbufs_needed(&link_cfg[in->idx], frame_bytes(), line_bps[in->idx]) *
		       sdr_g.nworkers;
	return 0;
}

void sdr_linkemu_pool_error(struct sdr_inst *in, unsigned pool_mbufs)
{
	char err[512];
	if (in->cfg.link &&
	    sdr_link_check_pool(&link_cfg[in->idx], frame_bytes(), line_bps[in->idx], 0, err,
				sizeof(err)))
		fprintf(stderr, "sdr-dpu: %s (asked for a pool of %u mbufs)\n", err, pool_mbufs);
}

void sdr_linkemu_cap(struct sdr_inst *in, unsigned extra_mbufs)
{
	struct sdr_link_cfg *c = &link_cfg[in->idx];
	unsigned per_q = extra_mbufs / sdr_g.nworkers;
	/* keep 512 mbufs per queue for bursts in flight and duplicates */
	unsigned lim = per_q > 1024 ? per_q - 512 : per_q / 2;
	char why[512] = "";

	sdr_link_check_pool(c, frame_bytes(), line_bps[in->idx], per_q, why, sizeof(why));
	if (lim < c->limit)
		c->limit = lim;
	printf("sdr-dpu[%s]: note: --link: EAL memory holds %u mbufs per RX queue for the emulated"
	       " path, less than its worst case (%s); the emulator holds at most %u frames per"
	       " queue and drops what exceeds that as dropped_limit\n",
	       in->cfg.name, per_q, why, c->limit);
}

int sdr_linkemu_attach(struct sdr_inst *in)
{
	char desc[256];

	if (!in->cfg.link)
		return 0;
	for (unsigned q = 0; q < sdr_g.nworkers; q++) {
		in->link[q] = sdr_link_rx_attach(in->port, (uint16_t)q, &link_cfg[in->idx], in->pool);
		if (!in->link[q]) {
			fprintf(stderr, "sdr-dpu: cannot attach the link emulator to port %u queue %u: %s\n",
				in->port, q, rte_strerror(rte_errno));
			return -1;
		}
	}
	if (sdr_link_cfg_format(&link_cfg[in->idx], desc, sizeof(desc)) >= 0)
		printf("sdr-dpu[%s]: link emulator on RX of port %u: %s%s\n", in->cfg.name, in->port,
		       desc, sdr_g.nworkers > 1 ? " (per RX queue)" : "");
	return 0;
}

void sdr_linkemu_detach(struct sdr_inst *in)
{
	for (unsigned q = 0; q < SDR_MAX_WORKERS; q++) {
		sdr_link_rx_detach(in->link[q]);
		in->link[q] = NULL;
	}
}

static void sum_stats(struct sdr_inst *in, struct sdr_link_stats *s)
{
	struct sdr_link_stats x;
	memset(s, 0, sizeof(*s));
	for (unsigned q = 0; q < SDR_MAX_WORKERS; q++) {
		if (!in->link[q])
			continue;
		sdr_link_rx_stats(in->link[q], &x);
		for (unsigned i = 0; i < sdr_link_stats_count(); i++)
			((uint64_t *)s)[i] += sdr_link_stats_value(&x, i);
	}
}

void sdr_linkemu_print(FILE *f, struct sdr_inst *in)
{
	struct sdr_link_stats s;
	if (!in->cfg.link)
		return;
	sum_stats(in, &s);
	sdr_link_stats_print(f, "  link emulator (RX)", &s);
}

void sdr_linkemu_foreach(struct sdr_inst *in, void (*fn)(void *, const char *, uint64_t), void *arg)
{
	struct sdr_link_stats s;
	if (!in->cfg.link)
		return;
	sum_stats(in, &s);
	for (unsigned i = 0; i < sdr_link_stats_count(); i++)
		fn(arg, sdr_link_stats_name(i), sdr_link_stats_value(&s, i));
}
