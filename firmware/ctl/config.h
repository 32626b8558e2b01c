/* SPDX-License-Identifier: BSD-3-Clause */
/* Configuration of the daemon (layer ctl): the command line after EAL's
 * "--" (config.c), read by every module through sdr_g.cfg. A scheme's own
 * options live in its folder (struct sdr_rel_desc::opts, e.g. sr_desc.h). */
#ifndef SDR_CONFIG_H
#define SDR_CONFIG_H

#include <stdint.h>
#include <stdio.h>

#define SDR_MAX_INST 4
/* --link-peer profiles per instance: as many as the link emulator takes
 * (SDR_LINK_PROFILES_MAX, checked in linkemu_glue.c) */
#define SDR_MAX_LINK_PEERS 16

struct sdr_inst_cfg {
	const char *name; /* unix socket path */
	int port;         /* DPDK port id, -1 = next unused */
	uint32_t ip;
	uint8_t mac[6], peer_mac[6];
	int has_ip, has_mac, has_peer_mac;
	const char *link; /* link emulator spec (RX of this port), NULL = none */
	const char *link_peer[SDR_MAX_LINK_PEERS]; /* --link-peer profiles */
	unsigned n_link_peer;
	uint64_t port_rate; /* bits/s, 0 = unpaced */
};

struct sdr_cfg {
	uint32_t mtu;
	uint32_t chunk_pkts;
	uint32_t max_msg;
	uint32_t generations;
	unsigned workers;  /* 0 = one per available worker lcore */
	unsigned channels; /* --channels: a host's default channels of a QP (libsdr reads it
	                      in the HELLO reply; docs/architecture.md "Channels") */
	unsigned idle_us;
	unsigned idle_spins;
	unsigned stats_interval;
	const char *stats_json;
	const char *metrics; /* --metrics [ADDR:]PORT (metrics.c) */
	unsigned cts_resend_ms;
	unsigned mbufs;
	uint32_t pace_burst; /* pacer catch-up bound, bytes; 0 = by rate */
	uint32_t pace_trace; /* paced frames recorded per worker; 0 = none */
	int icrc;
	int ring_pair;
	uint32_t outage_horizon_ms; /* a reliable QP stalled this long errors (0 = never) */
	int qpn_epoch;              /* -1 = random per boot */
	const char *state_dir;      /* instance state files (restore_state.c); "none" = off */
	uint32_t restore_window_ms; /* blocks of the previous incarnation wait this long */
	/* control plane: per-client quotas (per instance; 0 = no limit) and
	 * timeouts (docs/host-api.md "Limits and quotas") */
	int quota_by_pid;              /* --quota-key: 0 = peer uid, 1 = peer pid */
	uint32_t quota_conns;          /* connections open at once */
	uint32_t quota_ctxs;           /* attached contexts */
	uint32_t quota_qps;            /* QPs */
	uint64_t quota_mr_bytes;       /* registered bytes */
	uint32_t ctl_reply_timeout_ms; /* a reply the client does not take: drop it */
	uint32_t ctl_hello_timeout_ms; /* a connection that does not say HELLO: drop it */
	unsigned ninst;
	struct sdr_inst_cfg inst[SDR_MAX_INST];
};

/** Parse our own arguments (after EAL's "--"). Returns 0 to run, 1 when
 *  --help/--version was served (exit 0), -1 on error (message printed). */
int sdr_cfg_parse(struct sdr_cfg *cfg, int argc, char **argv);
void sdr_cfg_usage(FILE *f, const char *prog);

#endif /* SDR_CONFIG_H */
