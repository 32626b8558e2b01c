/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * eal_probe: does the DPDK EAL work in this build (e.g. aarch64 under
 * qemu-aarch64-static)? Initialises the EAL with the caller's arguments,
 * takes the first ethdev (expected: a net_ring vdev, whose TX ring is its own
 * RX ring), sends a burst of SDR data packets built with common/sdr_wire.h,
 * receives them back and checks every byte and the parsed headers, then checks
 * that a corrupted packet is rejected by the ICRC check.
 *
 * Usage: eal_probe <EAL args, e.g. --no-huge --no-pci --vdev=net_ring0>
 * Exit: 0 all checks passed, 1 a check failed, 2 EAL/port set-up failed.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "sdr_wire.h"
#include "sdr_test.h"

#define PROBE_PKTS 32
#define PROBE_PAYLOAD 1024

static void probe_addrs(struct sdr_l2l3 *a)
{
	static const uint8_t src[6] = {0x02, 0, 0, 0, 0, 1};
	static const uint8_t dst[6] = {0x02, 0, 0, 0, 0, 2};

	memset(a, 0, sizeof(*a));
	memcpy(a->src_mac, src, 6);
	memcpy(a->dst_mac, dst, 6);
	a->src_ip = 0x0a000001; /* only written into frames, never sent anywhere */
	a->dst_ip = 0x0a000002;
	a->udp_sport = SDR_UDP_SPORT_BASE + 7;
}

/* Build data packet i of a message into a fresh mbuf; NULL on failure. */
static struct rte_mbuf *probe_build(struct rte_mempool *mp, uint32_t i, uint8_t *expect,
				    size_t *len)
{
	struct sdr_l2l3 a;
	struct sdr_data_hdr h;
	struct rte_mbuf *m;
	uint8_t *buf;
	size_t flen, k;

	probe_addrs(&a);
	memset(&h, 0, sizeof(h));
	h.dest_qpn = 0x100 + (i & 3);
	h.psn = i;
	h.va = (uint64_t)5 * (1u << 20) + (uint64_t)i * PROBE_PAYLOAD;
	h.rkey = 0xabcd;
	h.dma_len = PROBE_PAYLOAD;
	h.imm = sdr_imm_pack(5, i, i & 0xF);
	h.se = (i == PROBE_PKTS - 1);

	m = rte_pktmbuf_alloc(mp);
	if (m == NULL)
		return NULL;
	flen = sdr_build_data_hdr(expect, &a, &h);
	for (k = 0; k < PROBE_PAYLOAD; k++)
		expect[SDR_DATA_HDR_LEN + k] = (uint8_t)(k * 31 + i * 7);
	sdr_pkt_finish(expect, flen, 1);
	buf = (uint8_t *)rte_pktmbuf_append(m, (uint16_t)flen);
	if (buf == NULL) {
		rte_pktmbuf_free(m);
		return NULL;
	}
	memcpy(buf, expect, flen);
	*len = flen;
	return m;
}

static int probe_port_setup(uint16_t port, struct rte_mempool *mp)
{
	struct rte_eth_conf conf;

	memset(&conf, 0, sizeof(conf));
	if (rte_eth_dev_configure(port, 1, 1, &conf) < 0)
		return -1;
	if (rte_eth_rx_queue_setup(port, 0, 256, rte_eth_dev_socket_id(port), NULL, mp) < 0)
		return -1;
	if (rte_eth_tx_queue_setup(port, 0, 256, rte_eth_dev_socket_id(port), NULL) < 0)
		return -1;
	return rte_eth_dev_start(port);
}

int main(int argc, char **argv)
{
	static uint8_t expect[PROBE_PKTS][SDR_DATA_HDR_LEN + PROBE_PAYLOAD + 8];
	size_t len[PROBE_PKTS];
	struct rte_mbuf *tx[PROBE_PKTS], *rx[PROBE_PKTS];
	struct rte_mempool *mp;
	struct sdr_parsed p;
	uint16_t port, n, got = 0;
	uint32_t i;
	int tries;

	if (rte_eal_init(argc, argv) < 0) {
		fprintf(stderr, "eal_probe: rte_eal_init failed\n");
		return 2;
	}
	printf("eal_probe: EAL up, %u lcore(s), %u port(s)\n", rte_lcore_count(),
	       rte_eth_dev_count_avail());
	if (rte_eth_dev_count_avail() < 1) {
		fprintf(stderr, "eal_probe: no ethdev (pass --vdev=net_ring0)\n");
		rte_eal_cleanup();
		return 2;
	}
	port = 0;
	while (!rte_eth_dev_is_valid_port(port))
		port++;
	mp = rte_pktmbuf_pool_create("probe_pool", 1023, 32, 0, RTE_MBUF_DEFAULT_BUF_SIZE,
				     rte_socket_id());
	if (mp == NULL || probe_port_setup(port, mp) != 0) {
		fprintf(stderr, "eal_probe: mempool/port set-up failed\n");
		rte_eal_cleanup();
		return 2;
	}

	for (i = 0; i < PROBE_PKTS; i++) {
		tx[i] = probe_build(mp, i, expect[i], &len[i]);
		if (tx[i] == NULL) {
			fprintf(stderr, "eal_probe: mbuf allocation failed\n");
			rte_eal_cleanup();
			return 2;
		}
	}
	n = rte_eth_tx_burst(port, 0, tx, PROBE_PKTS);
	CHECK(n == PROBE_PKTS, "tx_burst sent %u of %u", n, PROBE_PKTS);
	for (i = n; i < PROBE_PKTS; i++)
		rte_pktmbuf_free(tx[i]);

	for (tries = 0; tries < 1000 && got < n; tries++)
		got += rte_eth_rx_burst(port, 0, rx + got, (uint16_t)(n - got));
	CHECK(got == n, "rx_burst returned %u of %u", got, n);

	for (i = 0; i < got; i++) {
		const uint8_t *d = rte_pktmbuf_mtod(rx[i], const uint8_t *);
		enum sdr_parse_result r;

		CHECK(rte_pktmbuf_data_len(rx[i]) == len[i], "pkt %u: length %u != %zu", i,
		      rte_pktmbuf_data_len(rx[i]), len[i]);
		if (rte_pktmbuf_data_len(rx[i]) != len[i])
			continue;
		CHECK(memcmp(d, expect[i], len[i]) == 0, "pkt %u: bytes differ", i);
		r = sdr_parse(d, len[i], 1, &p);
		CHECK(r == SDR_PARSE_OK_DATA, "pkt %u: parse %s", i, sdr_parse_result_name(r));
		if (r != SDR_PARSE_OK_DATA)
			continue;
		CHECK(p.psn == i, "pkt %u: psn %" PRIu32, i, p.psn);
		CHECK(sdr_imm_pkt_off(p.imm) == i, "pkt %u: imm offset %" PRIu32, i,
		      sdr_imm_pkt_off(p.imm));
		CHECK(p.payload_len == PROBE_PAYLOAD, "pkt %u: payload %" PRIu32, i, p.payload_len);
		CHECK(p.se == (i == PROBE_PKTS - 1), "pkt %u: SE bit %u", i, p.se);
	}
	/* One bit flipped in the payload: the ICRC check must reject it. */
	if (got > 0 && rte_pktmbuf_data_len(rx[0]) == len[0]) {
		uint8_t *d = rte_pktmbuf_mtod(rx[0], uint8_t *);
		enum sdr_parse_result r;

		d[SDR_DATA_HDR_LEN + 3] ^= 0x10;
		r = sdr_parse(d, len[0], 1, &p);
		CHECK(r == SDR_PARSE_BAD_ICRC, "corrupted pkt parsed as %s",
		      sdr_parse_result_name(r));
	}
	rte_pktmbuf_free_bulk(rx, got);

	rte_eth_dev_stop(port);
	rte_eth_dev_close(port);
	rte_eal_cleanup();
	if (t_failures) {
		fprintf(stderr, "eal_probe: %d check(s) failed\n", t_failures);
		return 1;
	}
	printf("eal_probe: %u packets looped through port %u and verified; "
	       "corrupted packet rejected\n",
	       got, port);
	return 0;
}
