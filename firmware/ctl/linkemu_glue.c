/* SPDX-License-Identifier: BSD-3-Clause */
/* --link and --link-peer: the long-haul link emulator (firmware/linkemu/) on
 * an instance's RX, one lane per path of each per-peer profile and of the
 * default lane (--link).
 * Layer ctl/: the control plane (main lcore); it calls the layers below, nothing calls it. */
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

_Static_assert(SDR_MAX_LINK_PEERS == SDR_LINK_PROFILES_MAX,
	       "config.c takes as many --link-peer as the emulator has profiles");

static struct sdr_link_plan link_plan[SDR_MAX_INST];
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
	return sdr_wire_data_frame_bytes(sdr_g.cfg.mtu, 1);
}

int sdr_linkemu_on(const struct sdr_inst *in)
{
	return in->cfg.link != NULL || in->cfg.n_link_peer > 0;
}

int sdr_linkemu_prepare(struct sdr_inst *in, unsigned *extra_mbufs)
{
	struct sdr_link_plan *p = &link_plan[in->idx];
	char err[600];

	*extra_mbufs = 0;
	if (!sdr_linkemu_on(in))
		return 0;
	if (sdr_link_plan_init_spec(p, in->cfg.link, err, sizeof(err))) {
		fprintf(stderr, "sdr-dpu: --link '%s': %s\n", in->cfg.link, err);
		return -1;
	}
	for (unsigned i = 0; i < in->cfg.n_link_peer; i++)
		if (sdr_link_plan_add(p, in->cfg.link_peer[i], err, sizeof(err))) {
			fprintf(stderr, "sdr-dpu: --link-peer: %s\n", err);
			return -1;
		}
	line_bps[in->idx] = port_line_bps(in->port);
	*extra_mbufs = sdr_link_plan_mbufs_needed(p, frame_bytes(), line_bps[in->idx]) *
		       sdr_g.nworkers;
	return 0;
}

void sdr_linkemu_pool_error(struct sdr_inst *in, unsigned pool_mbufs)
{
	const struct sdr_link_plan *p = &link_plan[in->idx];
	char err[512];

	if (!sdr_linkemu_on(in))
		return;
	for (unsigned i = 0; i < p->nlanes; i++)
		if (sdr_link_check_pool(&p->lane[i].cfg, frame_bytes(), line_bps[in->idx], 0, err,
					sizeof(err)))
			fprintf(stderr, "sdr-dpu: lane %s: %s (asked for a pool of %u mbufs)\n",
				p->lane[i].name, err, pool_mbufs);
}

void sdr_linkemu_cap(struct sdr_inst *in, unsigned extra_mbufs)
{
	struct sdr_link_plan *p = &link_plan[in->idx];
	unsigned per_q = extra_mbufs / sdr_g.nworkers;
	/* keep 512 mbufs per queue for bursts in flight and duplicates */
	unsigned lim = per_q > 1024 ? per_q - 512 : per_q / 2;
	unsigned need = sdr_link_plan_mbufs_needed(p, frame_bytes(), line_bps[in->idx]);

	sdr_link_plan_cap(p, lim, frame_bytes(), line_bps[in->idx]);
	printf("sdr-dpu[%s]: note: --link: EAL memory holds %u mbufs per RX queue for the emulated"
	       " path, less than its worst case (%u mbufs: each lane's bandwidth-delay product,"
	       " buffer and margin); the lanes hold at most",
	       in->cfg.name, per_q, need);
	for (unsigned i = 0; i < p->nlanes; i++)
		printf("%s %u (%s)", i ? "," : "", p->lane[i].cfg.limit, p->lane[i].name);
	printf(" frames per queue and drop what exceeds that as dropped_limit\n");
}

int sdr_linkemu_attach(struct sdr_inst *in)
{
	const struct sdr_link_plan *p = &link_plan[in->idx];
	char desc[8192]; /* a profile of several paths: all of them */

	if (!sdr_linkemu_on(in))
		return 0;
	for (unsigned q = 0; q < sdr_g.nworkers; q++) {
		in->link[q] = sdr_link_rx_attach_plan(in->port, (uint16_t)q, p, in->pool);
		if (!in->link[q]) {
			fprintf(stderr,
				"sdr-dpu: cannot attach the link emulator to port %u queue %u: "
				"%s\n",
				in->port, q, rte_strerror(rte_errno));
			return -1;
		}
	}
	for (unsigned i = 0; i < p->nlanes; i++) /* one line per profile (all its paths) */
		if (p->lane[i].path == 0 && sdr_link_plan_format(p, i, desc, sizeof(desc)) >= 0)
			printf("sdr-dpu[%s]: link emulator on RX of port %u: %s%s\n", in->cfg.name,
			       in->port,
			       sdr_link_plan_default_lane(p) > 0
				       ? desc
				       : desc + strlen(SDR_LINK_DEFAULT_LANE_NAME) + 1,
			       sdr_g.nworkers > 1 ? " (per RX queue)" : "");
	return 0;
}

void sdr_linkemu_detach(struct sdr_inst *in)
{
	for (unsigned q = 0; q < SDR_MAX_WORKERS; q++) {
		sdr_link_rx_detach(in->link[q]);
		in->link[q] = NULL;
	}
}

/* Counters of lane @p lane (or of every lane when lane < 0), summed over
 * the RX queues. */
static void sum_stats(struct sdr_inst *in, int lane, struct sdr_link_stats *s)
{
	struct sdr_link_stats x;

	memset(s, 0, sizeof(*s));
	for (unsigned q = 0; q < SDR_MAX_WORKERS; q++) {
		if (!in->link[q])
			continue;
		if (lane < 0)
			sdr_link_rx_stats(in->link[q], &x);
		else
			sdr_link_rx_lane_stats(in->link[q], (unsigned)lane, &x);
		sdr_link_stats_add(s, &x);
	}
}

unsigned sdr_linkemu_lanes(struct sdr_inst *in)
{
	return sdr_linkemu_on(in) ? link_plan[in->idx].nlanes : 0;
}

const char *sdr_linkemu_lane_desc(struct sdr_inst *in, unsigned lane, char *buf, size_t len)
{
	if (lane >= sdr_linkemu_lanes(in))
		return NULL;
	sdr_link_plan_format_lane(&link_plan[in->idx], lane, buf, len);
	return buf;
}

void sdr_linkemu_print(FILE *f, struct sdr_inst *in)
{
	const struct sdr_link_plan *p = &link_plan[in->idx];
	struct sdr_link_stats s;
	char title[1100], desc[1024];

	if (!sdr_linkemu_on(in))
		return;
	sum_stats(in, -1, &s);
	sdr_link_stats_print(
		f, p->nlanes > 1 ? "  link emulator (RX, every lane)" : "  link emulator (RX)", &s);
	if (p->nlanes == 1)
		return;
	for (unsigned i = 0; i < p->nlanes; i++) {
		sum_stats(in, (int)i, &s);
		sdr_link_plan_format_lane(p, i, desc, sizeof(desc));
		snprintf(title, sizeof(title), "(RX) lane %s", desc);
		sdr_link_stats_print(f, title, &s);
	}
}

void sdr_linkemu_foreach(struct sdr_inst *in, int lane, void (*fn)(void *, const char *, uint64_t),
			 void *arg)
{
	struct sdr_link_stats s;

	if (!sdr_linkemu_on(in) || lane >= (int)link_plan[in->idx].nlanes)
		return;
	sum_stats(in, lane, &s);
	for (unsigned i = 0; i < sdr_link_stats_count(); i++)
		fn(arg, sdr_link_stats_name(i), sdr_link_stats_value(&s, i));
}
