/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * common/sdr_rss.c, the steering of a QP's packets to its worker's queue,
 * without a PMD (none of the vdevs on the test machines hashes the UDP
 * source port alone):
 *  - the Toeplitz hash against the test vectors of Microsoft's RSS
 *    specification (IPv4 addresses alone and with TCP ports; the same key);
 *  - a one-bit input hashes to the key window at its position, and the hash
 *    is linear (hash(a ^ b) = hash(a) ^ hash(b)): what a NIC computes;
 *  - the queue of a source port is its hash's low bits through a table of
 *    entry i = queue i mod nq, for 2..16 queues and tables of 64..512;
 *  - the daemon's choice (ctrl_qp.c): for QPN blocks of a boot's range, the
 *    first free block whose source port lands on the worker's queue exists
 *    within a few blocks for every worker, and about 1/nq of all blocks land
 *    on each queue;
 *  - multipath (docs/multipath.md): every port of a QP's set lands on the
 *    queue of its port 0 for every queue count and table of up to 512, the
 *    ports are distinct and in the QP's range, and the link emulator's ECMP
 *    hash (sdr_link_path_of_port()) spreads a set of 16 over 4 paths.
 */
#include <stdio.h>
#include <string.h>

#include "sdr_link_peers.h"
#include "sdr_rss.h"
#include "sdr_test.h"

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

int main(void)
{
	/* Microsoft's "Verifying the RSS Hash Calculation": source, destination,
	 * source port, destination port; IPv4 only and IPv4 with TCP */
	static const struct {
		uint32_t src, dst;
		uint16_t sport, dport;
		uint32_t h_ip, h_tcp;
	} v[] = {
		{0x420995bb, 0xa18e6450, 2794, 1766, 0x323e8fc2, 0x51ccc178},   /* 66.9.149.187 */
		{0xc75c6f02, 0x41458c53, 14230, 4739, 0xd718262a, 0xc626b0ea},  /* 199.92.111.2 */
		{0x1813c65f, 0x0c16cfb8, 12898, 38024, 0xd2d0a5de, 0x5c2b394a}, /* 24.19.198.95 */
		{0x261bcd1e, 0xd18ea306, 48228, 2217, 0x82989176, 0xafc7327f},  /* 38.27.205.30 */
		{0x9927a3bf, 0xcabc7f02, 44251, 1303, 0x5d1809c5, 0x10e828a2},  /* 153.39.163.191 */
	};

	t_seed("test_rss", 1);
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		uint8_t in[12];
		put32(in, v[i].src);
		put32(in + 4, v[i].dst);
		in[8] = (uint8_t)(v[i].sport >> 8);
		in[9] = (uint8_t)v[i].sport;
		in[10] = (uint8_t)(v[i].dport >> 8);
		in[11] = (uint8_t)v[i].dport;
		CHECK_EQ(sdr_toeplitz(sdr_rss_key, in, 8), v[i].h_ip);
		CHECK_EQ(sdr_toeplitz(sdr_rss_key, in, 12), v[i].h_tcp);
	}

	/* bit j of the input selects the 32 key bits that start at bit j */
	for (unsigned j = 0; j < 16; j++) {
		uint8_t in[2] = {0, 0};
		uint32_t want = 0;
		in[j / 8] = (uint8_t)(0x80 >> (j % 8));
		for (unsigned b = 0; b < 32; b++)
			want |= (uint32_t)(sdr_rss_key[(j + b) / 8] >> (7 - (j + b) % 8) & 1)
				<< (31 - b);
		CHECK_EQ(sdr_toeplitz(sdr_rss_key, in, 2), want);
	}
	for (int k = 0; k < 1000; k++) {
		uint8_t a[12], b[12], c[12];
		for (int i = 0; i < 12; i++) {
			a[i] = (uint8_t)t_rnd();
			b[i] = (uint8_t)t_rnd();
			c[i] = a[i] ^ b[i];
		}
		CHECK_OR_BREAK(
			sdr_toeplitz(sdr_rss_key, c, 12) ==
			(sdr_toeplitz(sdr_rss_key, a, 12) ^ sdr_toeplitz(sdr_rss_key, b, 12)));
	}

	/* the source port of a QP, and the queue it lands on */
	CHECK_EQ(sdr_rss_sport(0x100), 0xC100);
	CHECK_EQ(sdr_rss_sport(0x4123), 0xC123);
	CHECK_EQ(sdr_rss_sport(0xFFFFFF), 0xFFFF);
	for (unsigned reta = 64; reta <= 512; reta *= 2)
		for (unsigned nq = 2; nq <= 16; nq++)
			for (unsigned sport = 0xC000; sport <= 0xFFFF; sport += 97) {
				uint8_t in[2] = {(uint8_t)(sport >> 8), (uint8_t)sport};
				unsigned q = (sdr_toeplitz(sdr_rss_key, in, 2) & (reta - 1)) % nq;
				CHECK_OR_BREAK(sdr_rss_queue((uint16_t)sport, reta, nq) == q);
			}

	/* the daemon's choice: QPN blocks 0x100 + k*G of an epoch, G = 4 */
	for (unsigned nq = 2; nq <= 8; nq *= 2) {
		const unsigned reta = 128, G = 4, nblocks = 1024;
		uint32_t first = 0x100 + 0x4000 * 37; /* an epoch */
		unsigned per[8] = {0}, longest = 0;

		for (unsigned w = 0; w < nq; w++) {
			unsigned k = 0;
			while (k < nblocks && !sdr_rss_steers(first + k * G, w, reta, nq))
				k++;
			CHECK(k < nblocks, "worker %u of %u: no QPN steers there", w, nq);
			if (k > longest)
				longest = k;
		}
		for (unsigned k = 0; k < nblocks; k++)
			per[sdr_rss_queue(sdr_rss_sport(first + k * G), reta, nq)]++;
		for (unsigned w = 0; w < nq; w++)
			CHECK(per[w] > nblocks / nq / 2 && per[w] < nblocks * 3 / nq / 2,
			      "%u queues: %u of %u blocks on queue %u", nq, per[w], nblocks, w);
		printf("%u queues: blocks per queue", nq);
		for (unsigned w = 0; w < nq; w++)
			printf(" %u", per[w]);
		printf("; the first block of a worker at most %u blocks in\n", longest);
	}

	/* multipath: the deltas are the 16 smallest of the kernel */
	for (unsigned x = 0, k = 0; x < 0x4000 && k < SDR_RSS_PATHS_MAX; x++) {
		uint8_t in[2] = {(uint8_t)(x >> 8), (uint8_t)x};

		if (sdr_toeplitz(sdr_rss_key, in, 2) & ((1u << SDR_RSS_SPRAY_BITS) - 1))
			continue;
		CHECK_EQ(sdr_rss_path_delta[k], x);
		k++;
	}
	CHECK_EQ(sdr_rss_sport_path(0x4123, 0), sdr_rss_sport(0x4123));
	{
		double distinct = 0;
		unsigned fewest = 4, nqpn = 0;

		for (uint32_t qpn = 0x100; qpn < 0x100 + 0x4000 * 3; qpn += 7, nqpn++) {
			unsigned hit[4] = {0};

			for (unsigned k = 0; k < SDR_RSS_PATHS_MAX; k++) {
				uint16_t sp = sdr_rss_sport_path(qpn, k);

				CHECK_OR_BREAK(sp >= 0xC000);
				for (unsigned j = 0; j < k; j++)
					CHECK_OR_BREAK(sdr_rss_sport_path(qpn, j) != sp);
				for (unsigned reta = 64; reta <= 512; reta *= 2)
					for (unsigned nq = 1; nq <= 16; nq++)
						CHECK_OR_BREAK(sdr_rss_queue(sp, reta, nq) ==
							       sdr_rss_queue(sdr_rss_sport(qpn),
									     reta, nq));
				hit[sdr_link_path_of_port(sp, 4)] = 1;
			}
			unsigned n = hit[0] + hit[1] + hit[2] + hit[3];
			distinct += n;
			if (n < fewest)
				fewest = n;
		}
		/* 16 random ports miss one of 4 paths with p ~ 4 * (3/4)^16 = 4 % */
		CHECK(fewest >= 3 && distinct / nqpn > 3.9, "fewest %u, mean %.3f", fewest,
		      distinct / nqpn);
		printf("16 ports of a QP over 4 ECMP paths: %.3f distinct on average, fewest %u\n",
		       distinct / nqpn, fewest);
	}
	return t_finish("test_rss");
}
