/* SPDX-License-Identifier: BSD-3-Clause */
/* Ports: one DPDK port per DPU instance, one RX/TX queue pair per worker.
 * Layer ctl/: the control plane (main lcore); it calls the layers below, nothing calls it. */
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <rte_dev.h>
#include <rte_devargs.h>
#include <rte_ethdev.h>
#include <rte_eth_ring.h>
#include <rte_lcore.h>
#include <rte_malloc.h>

#include "port.h"
#include "sdr_rss.h"
#include "sdr_types.h"
#include "linkemu_glue.h"

#define SDR_NB_RXD 1024
#define SDR_NB_TXD 1024

/* Two ports joined back to back: A's TX rings are B's RX rings. */
static int make_ring_pair(void)
{
	struct rte_ring *ab[SDR_MAX_WORKERS], *ba[SDR_MAX_WORKERS];
	unsigned n = sdr_g.nworkers;
	char name[RTE_RING_NAMESIZE];
	int pa, pb;

	for (unsigned q = 0; q < n; q++) {
		snprintf(name, sizeof(name), "sdr_rp_ab%u", q);
		ab[q] = rte_ring_create(name, 4096, rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
		snprintf(name, sizeof(name), "sdr_rp_ba%u", q);
		ba[q] = rte_ring_create(name, 4096, rte_socket_id(), RING_F_SP_ENQ | RING_F_SC_DEQ);
		if (!ab[q] || !ba[q]) {
			fprintf(stderr, "sdr-dpu: cannot create ring-pair rings: %s\n",
				rte_strerror(rte_errno));
			return -1;
		}
	}
	pa = rte_eth_from_rings("sdr_ring_a", ba, n, ab, n, rte_socket_id());
	pb = rte_eth_from_rings("sdr_ring_b", ab, n, ba, n, rte_socket_id());
	if (pa < 0 || pb < 0) {
		fprintf(stderr, "sdr-dpu: rte_eth_from_rings failed: %s\n",
			rte_strerror(rte_errno));
		return -1;
	}
	sdr_g.cfg.inst[0].port = pa;
	sdr_g.cfg.inst[1].port = pb;
	return 0;
}

static int port_used(int port)
{
	for (unsigned i = 0; i < sdr_g.cfg.ninst; i++)
		if (sdr_g.cfg.inst[i].port == port)
			return 1;
	return 0;
}

static int is_pmd(const char *driver, const char *name)
{
	return driver && !strcmp(driver, name);
}

/* What to check when the port reports a smaller frame size than the RoCE
 * MTU needs, for the PMDs whose kernel side decides. */
static const char *frame_hint(const char *driver, uint16_t port, uint32_t need_l3)
{
	static char hint[192];
	char ifname[IF_NAMESIZE] = "";
	struct rte_eth_dev_info di;

	if (is_pmd(driver, "net_af_packet"))
		return "net_af_packet: framesz=9216,blocksz=36864 in the vdev and an interface MTU"
		       " of 9000";
	if (is_pmd(driver, "net_tap")) {
		if (rte_eth_dev_info_get(port, &di) || !di.if_index ||
		    !if_indextoname(di.if_index, ifname))
			snprintf(ifname, sizeof(ifname), "IFACE");
		snprintf(hint, sizeof(hint),
			 "net_tap: give its kernel interface an MTU of at least %u, e.g."
			 " ip link set %s mtu 9000",
			 need_l3, ifname);
		return hint;
	}
	return "lower --mtu, or give the port a larger MTU";
}

/* The MTU of kernel interface @p ifname in our network namespace (0: unknown) */
static unsigned if_mtu(const char *ifname)
{
	struct ifreq ifr;
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	unsigned mtu = 0;

	if (fd < 0)
		return 0;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (!ioctl(fd, SIOCGIFMTU, &ifr) && ifr.ifr_mtu > 0)
		mtu = (unsigned)ifr.ifr_mtu;
	close(fd);
	return mtu;
}

/* "KEY=VALUE" out of a vdev's argument string ("iface=veth-a,framesz=9216") */
static int devarg(const char *args, const char *key, char *val, size_t len)
{
	size_t kl = strlen(key);

	for (const char *p = args; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
		if (!strncmp(p, key, kl) && p[kl] == '=') {
			size_t n = strcspn(p + kl + 1, ",");
			if (n >= len)
				return -1;
			memcpy(val, p + kl + 1, n);
			val[n] = 0;
			return 0;
		}
	}
	return -1;
}

/* Whether a PMD that under-reports its frame size (net_af_packet, net_tap)
 * was set up to pass frames of @p need_l3 + Ethernet header anyway: the
 * kernel interface's MTU, and for net_af_packet the vdev's framesz. Then the
 * report is only the PMD's and there is nothing to say. */
static int frames_fit(const char *driver, const struct rte_eth_dev_info *di, uint32_t need_l3)
{
	char ifname[IF_NAMESIZE] = "", v[32];
	const struct rte_devargs *da = di->device ? rte_dev_devargs(di->device) : NULL;

	if (is_pmd(driver, "net_af_packet")) {
		/* TPACKET_V2 header and alignment come out of framesz */
		if (!da || devarg(da->args, "iface", ifname, sizeof(ifname)) ||
		    devarg(da->args, "framesz", v, sizeof(v)) ||
		    strtoul(v, NULL, 0) < need_l3 + SDR_ETH_HLEN + 128)
			return 0;
	} else if (is_pmd(driver, "net_tap")) {
		if (!di->if_index || !if_indextoname(di->if_index, ifname))
			return 0;
	} else {
		return 0;
	}
	return if_mtu(ifname) >= need_l3;
}

/* A DPU must not answer to its kernel interface's address: net_tap's port
 * MAC is the kernel tap interface's own. Derive a locally administered one,
 * 02:53:44:52 ("SDR") + the port MAC's last two bytes. */
static void tap_mac(const uint8_t *port_mac, uint8_t *mac)
{
	static const uint8_t base[4] = {0x02, 0x53, 0x44, 0x52};

	memcpy(mac, base, 4);
	mac[4] = port_mac[4];
	mac[5] = port_mac[5];
	if (!memcmp(mac, port_mac, 6))
		mac[5] ^= 0x01;
}

static struct rte_mempool *pool_create(const char *name, unsigned n)
{
	return rte_pktmbuf_pool_create(name, n, 256, 0, RTE_PKTMBUF_HEADROOM + SDR_MBUF_DATA,
				       rte_socket_id());
}

/*
 * A pool of the instance's own mbufs plus as many of @p extra as EAL memory
 * holds, in steps of 3/4, while room stays reserved for what is allocated
 * after it (the base pools of the instances set up later, rings, the
 * emulator's own tables). At least 1024 extra per queue. @p extra becomes
 * what the pool got.
 */
static struct rte_mempool *pool_create_fit(struct sdr_inst *in, const char *name, unsigned *extra)
{
	const size_t mbuf_bytes = RTE_PKTMBUF_HEADROOM + SDR_MBUF_DATA + 256;
	size_t reserve = (size_t)(sdr_g.cfg.ninst - in->idx - 1) * sdr_g.cfg.mbufs * mbuf_bytes +
			 (32u << 20);
	void *hold = rte_malloc("sdr_pool_reserve", reserve, 0);
	unsigned e = *extra, floor = 1024 * sdr_g.nworkers;
	struct rte_mempool *mp = NULL;

	while (!mp && e > floor) {
		e = e / 4 * 3 > floor ? e / 4 * 3 : floor;
		mp = pool_create(name, sdr_g.cfg.mbufs + e);
	}
	rte_free(hold);
	*extra = mp ? e : 0;
	return mp;
}

/* Redirection table entry i -> queue i mod nq (what sdr_rss_queue()
 * assumes). */
static int rss_reta_set(uint16_t port, uint16_t size, unsigned nq)
{
	struct rte_eth_rss_reta_entry64 reta[size / RTE_ETH_RETA_GROUP_SIZE + 1];

	memset(reta, 0, sizeof(reta));
	for (unsigned i = 0; i < size; i++) {
		reta[i / RTE_ETH_RETA_GROUP_SIZE].mask |= 1ull << (i % RTE_ETH_RETA_GROUP_SIZE);
		reta[i / RTE_ETH_RETA_GROUP_SIZE].reta[i % RTE_ETH_RETA_GROUP_SIZE] =
			(uint16_t)(i % nq);
	}
	return rte_eth_dev_rss_reta_update(port, reta, size);
}

/* The port's configuration for @p in: its limits checked against the
 * workers and the MTU, RSS on the UDP source port where it can steer. */
static int port_conf(struct sdr_inst *in, struct rte_eth_dev_info *info, struct rte_eth_conf *conf)
{
	unsigned nq = sdr_g.nworkers;
	uint16_t port = in->port;
	uint32_t need_l3 = sdr_wire_data_frame_bytes(sdr_g.cfg.mtu, 1) - SDR_ETH_HLEN;

	if (rte_eth_dev_info_get(port, info)) {
		fprintf(stderr, "sdr-dpu: port %u: cannot read device info\n", port);
		return -1;
	}
	if (info->max_rx_queues < nq || info->max_tx_queues < nq) {
		fprintf(stderr,
			"sdr-dpu: port %u (%s) has %u RX / %u TX queues, %u workers need %u each"
			" (net_af_packet: add qpairs=%u to the vdev; or lower --workers)\n",
			port, info->driver_name, info->max_rx_queues, info->max_tx_queues, nq, nq,
			nq);
		return -1;
	}
	if (info->max_mtu < need_l3) {
		fprintf(stderr,
			"sdr-dpu: port %u (%s) has a maximum MTU of %u; RoCE MTU %u needs an L3 "
			"MTU of %u"
			" (lower --mtu)\n",
			port, info->driver_name, info->max_mtu, sdr_g.cfg.mtu, need_l3);
		return -1;
	}
	memset(conf, 0, sizeof(*conf));
	if (need_l3 + SDR_ETH_HLEN <= info->max_rx_pktlen) {
		conf->rxmode.mtu = need_l3 > RTE_ETHER_MTU ? need_l3 : RTE_ETHER_MTU;
	} else if (!frames_fit(info->driver_name, info, need_l3)) {
		/* net_af_packet and net_tap report about 1518 B whatever the
		 * kernel interface allows; they pass frames up to what it does.
		 * Leave the MTU alone rather than shrink the kernel interface,
		 * and say what to check for this PMD (nothing when the kernel
		 * interface and the vdev are set up for the frames). */
		printf("sdr-dpu: note: port %u (%s) reports frames up to %u B; RoCE MTU %u needs "
		       "%u B"
		       " frames (%s)\n",
		       port, info->driver_name, info->max_rx_pktlen, sdr_g.cfg.mtu,
		       need_l3 + SDR_ETH_HLEN, frame_hint(info->driver_name, port, need_l3));
	}
	in->rss_steer = 0;
	if (nq > 1 && (info->flow_type_rss_offloads & RTE_ETH_RSS_NONFRAG_IPV4_UDP)) {
		/* RSS on the UDP source port (= per-QP flow entropy) */
		conf->rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
		conf->rx_adv_conf.rss_conf.rss_hf = RTE_ETH_RSS_NONFRAG_IPV4_UDP;
		/* on the source port alone, with our key: then a QP's QPN decides
		 * its queue (common/sdr_rss.h), and ctrl_qp.c picks one that lands on
		 * the QP's worker */
		if ((info->flow_type_rss_offloads & RTE_ETH_RSS_L4_SRC_ONLY) &&
		    info->hash_key_size == SDR_RSS_KEY_LEN && info->reta_size &&
		    !(info->reta_size & (info->reta_size - 1))) {
			conf->rx_adv_conf.rss_conf.rss_hf |= RTE_ETH_RSS_L4_SRC_ONLY;
			conf->rx_adv_conf.rss_conf.rss_key = (uint8_t *)(uintptr_t)sdr_rss_key;
			conf->rx_adv_conf.rss_conf.rss_key_len = SDR_RSS_KEY_LEN;
			in->rss_steer = 1;
			in->rss_reta = info->reta_size;
		}
	}
	return 0;
}

/* The instance's mbuf pool: --mbufs plus what the emulated link holds. */
static int port_pool(struct sdr_inst *in)
{
	char pname[RTE_MEMPOOL_NAMESIZE];
	uint16_t port = in->port;
	unsigned extra, nmbufs;

	/* The emulated link holds its bandwidth-delay product in mbufs. */
	if (sdr_linkemu_prepare(in, &extra))
		return -1;
	nmbufs = sdr_g.cfg.mbufs + extra;
	snprintf(pname, sizeof(pname), "sdr_pool%u", in->idx);
	in->pool = pool_create(pname, nmbufs);
	if (!in->pool && extra) {
		/* the emulated path's worst case does not fit: give it what does */
		in->pool = pool_create_fit(in, pname, &extra);
		if (in->pool)
			sdr_linkemu_cap(in, extra);
	}
	if (!in->pool) {
		fprintf(stderr,
			"sdr-dpu: cannot allocate %u mbufs of %u B (%u MB) for port %u: %s (raise "
			"EAL -m,"
			" or lower --mbufs)\n",
			nmbufs, RTE_PKTMBUF_HEADROOM + SDR_MBUF_DATA,
			(unsigned)((uint64_t)nmbufs *
					   (RTE_PKTMBUF_HEADROOM + SDR_MBUF_DATA + 256) >>
				   20),
			port, rte_strerror(rte_errno));
		if (extra)
			sdr_linkemu_pool_error(in, nmbufs);
		return -1;
	}
	return 0;
}

/* The address the instance answers to: --mac, or the port's (net_tap: one
 * beside its kernel interface's), or a locally administered one. */
static void port_mac(struct sdr_inst *in, const struct rte_eth_dev_info *info)
{
	uint16_t port = in->port;
	struct rte_ether_addr ea;

	/* We answer to our own MAC, which need not be the port's. */
	rte_eth_promiscuous_enable(port);
	if (!in->cfg.has_mac) {
		rte_eth_macaddr_get(port, &ea);
		memcpy(in->mac, ea.addr_bytes, 6);
		if (is_pmd(info->driver_name, "net_tap")) {
			char km[18], dm[18];

			tap_mac(ea.addr_bytes, in->mac);
			sdr_format_mac(ea.addr_bytes, km);
			sdr_format_mac(in->mac, dm);
			printf("sdr-dpu: note: port %u (net_tap) has its kernel interface's MAC %s;"
			       " this DPU uses %s (give --mac to choose)\n",
			       port, km, dm);
		}
	} else {
		memcpy(in->mac, in->cfg.mac, 6);
	}
	if (!(in->mac[0] | in->mac[1] | in->mac[2] | in->mac[3] | in->mac[4] | in->mac[5])) {
		/* net_ring ports have no address: use a locally administered one */
		static const uint8_t base[6] = {0x02, 0x53, 0x44, 0x52, 0x00, 0x00};
		memcpy(in->mac, base, 6);
		in->mac[4] = (uint8_t)port;
		in->mac[5] = (uint8_t)(in->idx + 1);
	}
}

static int setup_port(struct sdr_inst *in)
{
	struct rte_eth_conf conf;
	struct rte_eth_dev_info info;
	unsigned nq = sdr_g.nworkers;
	uint16_t port = in->port, nrxd = SDR_NB_RXD, ntxd = SDR_NB_TXD;
	int rc;

	if (port_conf(in, &info, &conf))
		return -1;
	rc = rte_eth_dev_configure(port, nq, nq, &conf);
	if (rc) {
		fprintf(stderr, "sdr-dpu: port %u: configure failed: %s\n", port,
			rte_strerror(-rc));
		return -1;
	}
	rte_eth_dev_adjust_nb_rx_tx_desc(port, &nrxd, &ntxd);

	if (port_pool(in))
		return -1;
	for (unsigned q = 0; q < nq; q++) {
		rc = rte_eth_rx_queue_setup(port, q, nrxd, rte_eth_dev_socket_id(port), NULL,
					    in->pool);
		if (!rc)
			rc = rte_eth_tx_queue_setup(port, q, ntxd, rte_eth_dev_socket_id(port),
						    NULL);
		if (rc) {
			fprintf(stderr, "sdr-dpu: port %u queue %u setup failed: %s\n", port, q,
				rte_strerror(-rc));
			return -1;
		}
	}
	if (sdr_linkemu_attach(in) < 0)
		return -1;
	rc = rte_eth_dev_start(port);
	if (rc) {
		fprintf(stderr, "sdr-dpu: port %u start failed: %s\n", port, rte_strerror(-rc));
		return -1;
	}
	if (in->rss_steer && rss_reta_set(port, in->rss_reta, nq)) {
		printf("sdr-dpu: note: port %u (%s): cannot set the RSS redirection table; packets"
		       " of another worker's QP are handed off\n",
		       port, info.driver_name);
		in->rss_steer = 0;
	}
	if (nq > 1)
		printf("sdr-dpu: port %u (%s): %s\n", port, info.driver_name,
		       in->rss_steer ? "RSS on the UDP source port steers each QP to its worker"
		       : conf.rxmode.mq_mode == RTE_ETH_MQ_RX_RSS
			       ? "RSS, but not on the UDP source port alone (packets that arrive on"
				 " another worker's queue are handed off)"
			       : "no RSS (packets that arrive on another worker's queue are handed "
				 "off)");
	port_mac(in, &info);
	return 0;
}

int sdr_ports_init(void)
{
	if (sdr_g.cfg.ring_pair && make_ring_pair())
		return -1;
	for (unsigned i = 0; i < sdr_g.cfg.ninst; i++) {
		struct sdr_inst_cfg *ic = &sdr_g.cfg.inst[i];
		if (ic->port < 0) {
			uint16_t p;
			RTE_ETH_FOREACH_DEV(p)
			{
				if (!port_used(p)) {
					ic->port = p;
					break;
				}
			}
		}
		if (ic->port < 0 || !rte_eth_dev_is_valid_port((uint16_t)ic->port)) {
			fprintf(stderr,
				"sdr-dpu: instance %u (%s): no DPDK port %s (give one with --vdev, "
				"e.g."
				" --vdev=net_af_packet0,iface=eth0, or use --ring-pair)\n",
				i, ic->name, ic->port < 0 ? "left" : "with that id");
			return -1;
		}
	}
	for (unsigned i = 0; i < sdr_g.cfg.ninst; i++) {
		struct sdr_inst *in = &sdr_g.inst[i];
		in->idx = i;
		in->cfg = sdr_g.cfg.inst[i];
		in->port = (uint16_t)in->cfg.port;
		in->ip = in->cfg.ip;
		in->listen_fd = -1;
		if (setup_port(in))
			return -1;
	}
	sdr_g.ninst = sdr_g.cfg.ninst;
	for (unsigned i = 0; i < sdr_g.ninst; i++) {
		struct sdr_inst *in = &sdr_g.inst[i];
		if (in->cfg.has_peer_mac)
			memcpy(in->peer_mac, in->cfg.peer_mac, 6);
		else /* --ring-pair: the other instance */
			memcpy(in->peer_mac, sdr_g.inst[1 - i].mac, 6);
	}
	return 0;
}

void sdr_ports_fini(void)
{
	for (unsigned i = 0; i < sdr_g.ninst; i++) {
		rte_eth_dev_stop(sdr_g.inst[i].port);
		sdr_linkemu_detach(&sdr_g.inst[i]);
		rte_eth_dev_close(sdr_g.inst[i].port);
	}
}
