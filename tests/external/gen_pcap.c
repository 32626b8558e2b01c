/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * gen_pcap: write a pcap of packets built by OUR builder (sdr_build_data_hdr,
 * sdr_build_ctrl_hdr, sdr_pkt_finish) so that scapy (check_pcap.py) and
 * tshark (tshark_check.sh) can judge it. The messages follow the same rules
 * and payload pattern as build_packets.py (--user-imm 0: opcode 0x2A, no
 * immediate-only packets), so with the same arguments the two tools must
 * write identical packets.
 *
 *   gen_pcap OUT.pcap [--src-mac M] [--dst-mac M] [--src-ip A] [--dst-ip A]
 *            [--src-qpn Q] [--dest-qpn Q] [--generations G] [--rkey K]
 *            [--mtu MTU] [--max-msg M] [--msg-seq N] [--messages K]
 *            [--msg-len L] [--user-imm X] [--pattern-seed S] [--psn P (of the CTS)]
 *            [--cts N]
 *
 * --cts N puts one CTS control packet with N entries first.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdr_rss.h"
#include "sdr_wire.h"

#define PCAP_MAGIC 0xA1B2C3D4u
#define PCAP_LINKTYPE_ETHERNET 1
#define PCAP_SNAPLEN 65535

struct gen_cfg {
	struct sdr_l2l3 l2;
	uint32_t src_qpn, dest_qpn, generations, rkey, mtu, max_msg;
	uint32_t msg_seq, messages, msg_len, user_imm, pattern_seed, psn, cts;
};

static FILE *out;
static uint32_t n_written;

/* Classic libpcap format in host byte order; readers detect it by the magic. */
static int pcap_header(void)
{
	uint32_t h[6] = {PCAP_MAGIC, 2 | 4u << 16, 0, 0, PCAP_SNAPLEN, PCAP_LINKTYPE_ETHERNET};

	return fwrite(h, sizeof(h), 1, out) == 1 ? 0 : -1;
}

static int pcap_record(const uint8_t *frame, size_t len)
{
	/* deterministic timestamps: 1 us apart, so two runs give equal files */
	uint32_t r[4] = {1700000000u, n_written, (uint32_t)len, (uint32_t)len};

	n_written++;
	if (fwrite(r, sizeof(r), 1, out) != 1 || fwrite(frame, 1, len, out) != len)
		return -1;
	return 0;
}

static uint8_t pattern_byte(const struct gen_cfg *c, uint32_t seq, uint32_t i)
{
	return (uint8_t)(c->pattern_seed + seq * 131u + i * 7u + (i >> 8));
}

static int write_message(const struct gen_cfg *c, uint32_t seq)
{
	static uint8_t buf[SDR_DATA_HDR_LEN + 4096 + 8];
	uint32_t npkts = (c->msg_len + c->mtu - 1) / c->mtu; /* msg_len >= 1 */
	uint32_t total = (uint32_t)sdr_wire_msg_pkts(c->msg_len, c->mtu, c->user_imm != 0);
	uint32_t msg_id = sdr_seq_msg_id(seq);

	for (uint32_t off = 0; off < total; off++) {
		uint32_t done = off * c->mtu, len = 0;
		struct sdr_data_hdr h;
		size_t flen;

		if (off < npkts)
			len = c->msg_len - done < c->mtu ? c->msg_len - done : c->mtu;
		h.dest_qpn = c->dest_qpn + sdr_seq_gen(seq, c->generations);
		h.psn = sdr_seq_psn(seq);
		h.va = (uint64_t)msg_id * c->max_msg + (uint64_t)off * c->mtu;
		h.rkey = c->rkey;
		h.dma_len = len;
		h.imm = sdr_imm_pack(msg_id, off, sdr_user_imm_nibble(c->user_imm, off));
		h.se = off == npkts - 1;
		h.no_imm = c->user_imm == 0; /* 0x2A: the immediate is absent */
		flen = sdr_build_data_hdr(buf, &c->l2, &h);
		for (uint32_t i = 0; i < len; i++)
			buf[sdr_data_hdr_len(&h) + i] = pattern_byte(c, seq, done + i);
		sdr_pkt_finish(buf, flen, 1);
		if (pcap_record(buf, flen) != 0)
			return -1;
	}
	return 0;
}

static int write_cts(const struct gen_cfg *c, uint32_t *psn)
{
	uint8_t buf[SDR_CTRL_HDR_LEN + SDR_CTRL_HDR_WIRE +
		    SDR_CTS_MAX_ENTRIES * SDR_CTS_ENTRY_WIRE + 8];
	struct sdr_cts_entry e[SDR_CTS_MAX_ENTRIES];
	size_t mlen, flen;

	for (uint32_t i = 0; i < c->cts; i++) {
		e[i].seq = c->msg_seq + i;
		e[i].length = c->max_msg;
	}
	mlen = sdr_ctrl_cts_encode(buf + SDR_CTRL_HDR_LEN, c->src_qpn, e, (uint16_t)c->cts);
	flen = sdr_build_ctrl_hdr(buf, &c->l2, c->dest_qpn, (*psn)++, mlen);
	sdr_pkt_finish(buf, flen, 1);
	return pcap_record(buf, flen);
}

static int parse_u32(const char *s, uint32_t *v)
{
	char *end;
	unsigned long long x;

	errno = 0;
	x = strtoull(s, &end, 0);
	if (errno || end == s || *end || x > 0xFFFFFFFFull || s[0] == '-')
		return -1;
	*v = (uint32_t)x;
	return 0;
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s OUT.pcap [--src-mac M] [--dst-mac M] [--src-ip A] [--dst-ip A]\n"
		"       [--src-qpn Q] [--dest-qpn Q] [--generations G] [--rkey K] [--mtu MTU]\n"
		"       [--max-msg M] [--msg-seq N] [--messages K] [--msg-len L]\n"
		"       [--user-imm X] [--pattern-seed S] [--psn P] [--cts N]\n",
		prog);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{"src-mac", required_argument, NULL, 'a'},
		{"dst-mac", required_argument, NULL, 'b'},
		{"src-ip", required_argument, NULL, 'c'},
		{"dst-ip", required_argument, NULL, 'd'},
		{"src-qpn", required_argument, NULL, 'e'},
		{"dest-qpn", required_argument, NULL, 'f'},
		{"generations", required_argument, NULL, 'g'},
		{"rkey", required_argument, NULL, 'h'},
		{"mtu", required_argument, NULL, 'i'},
		{"max-msg", required_argument, NULL, 'j'},
		{"msg-seq", required_argument, NULL, 'k'},
		{"messages", required_argument, NULL, 'l'},
		{"msg-len", required_argument, NULL, 'm'},
		{"user-imm", required_argument, NULL, 'n'},
		{"pattern-seed", required_argument, NULL, 'o'},
		{"psn", required_argument, NULL, 'p'},
		{"cts", required_argument, NULL, 'q'},
		{NULL, 0, NULL, 0},
	};
	struct gen_cfg c = {
		.l2 = {.src_mac = {0x02, 0, 0, 0, 0, 1},
		       .dst_mac = {0x02, 0, 0, 0, 0, 2},
		       .src_ip = 0x0A000001,
		       .dst_ip = 0x0A000002},
		.src_qpn = 0x200,
		.dest_qpn = 0x100,
		.generations = 4,
		.rkey = 0x5D12,
		.mtu = 1024,
		.max_msg = 65536,
		.messages = 4,
		.msg_len = 3000,
		.user_imm = 0x89ABCDEF,
	};
	uint32_t psn;
	int opt, bad = 0;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		/* options 'e'..'q' in order */
		uint32_t *num[] = {&c.src_qpn, &c.dest_qpn, &c.generations,  &c.rkey,
				   &c.mtu,     &c.max_msg,  &c.msg_seq,      &c.messages,
				   &c.msg_len, &c.user_imm, &c.pattern_seed, &c.psn,
				   &c.cts};

		if (opt == 'a')
			bad |= sdr_parse_mac(optarg, c.l2.src_mac);
		else if (opt == 'b')
			bad |= sdr_parse_mac(optarg, c.l2.dst_mac);
		else if (opt == 'c')
			bad |= sdr_parse_ipv4(optarg, &c.l2.src_ip);
		else if (opt == 'd')
			bad |= sdr_parse_ipv4(optarg, &c.l2.dst_ip);
		else if (opt >= 'e' && opt <= 'q')
			bad |= parse_u32(optarg, num[opt - 'e']);
		else
			bad = -1;
		if (bad) {
			fprintf(stderr, "gen_pcap: bad argument %s\n", argv[optind - 1]);
			usage(argv[0]);
			return 2;
		}
	}
	if (optind != argc - 1) {
		usage(argv[0]);
		return 2;
	}
	if ((c.mtu != 256 && c.mtu != 512 && c.mtu != 1024 && c.mtu != 2048 && c.mtu != 4096) ||
	    c.generations == 0 || (c.generations & (c.generations - 1)) || c.msg_len == 0 ||
	    c.msg_len > c.max_msg || c.cts > SDR_CTS_MAX_ENTRIES ||
	    c.msg_len / c.mtu >= SDR_MAX_PKTS || c.dest_qpn + c.generations > SDR_QPN_MASK) {
		fprintf(stderr, "gen_pcap: inconsistent arguments\n");
		return 2;
	}
	c.l2.udp_sport = sdr_rss_sport(c.dest_qpn); /* as the firmware: the receiver's block */

	out = fopen(argv[optind], "wb");
	if (out == NULL) {
		fprintf(stderr, "gen_pcap: %s: %s\n", argv[optind], strerror(errno));
		return 1;
	}
	psn = c.psn;
	if (pcap_header() != 0 || (c.cts && write_cts(&c, &psn) != 0))
		goto fail;
	for (uint32_t k = 0; k < c.messages; k++)
		if (write_message(&c, c.msg_seq + k) != 0)
			goto fail;
	if (fclose(out) != 0) {
		out = NULL;
		goto fail;
	}
	printf("gen_pcap: %u packets to %s\n", n_written, argv[optind]);
	return 0;
fail:
	fprintf(stderr, "gen_pcap: writing %s failed\n", argv[optind]);
	if (out)
		fclose(out);
	return 1;
}
