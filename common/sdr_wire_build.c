/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-dpu wire format, building (see sdr_wire.h and docs/wire-format.md):
 * frame sizes, the header template, data and control packet headers, the
 * pad and ICRC of a finished packet, and the ARP reply. Pure C, below the
 * firmware and every tool; the parser is sdr_wire_parse.c.
 */
#include <string.h>

#include "sdr_wire_priv.h"

uint32_t sdr_wire_data_frame_bytes(uint32_t payload, int with_imm)
{
	return (uint32_t)frame_len(SDR_RETH_LEN + (with_imm ? SDR_IMM_LEN : 0) + (size_t)payload);
}

uint32_t sdr_wire_ctrl_frame_bytes(uint32_t msg_len)
{
	return (uint32_t)frame_len(msg_len);
}

uint64_t sdr_wire_msg_pkts(uint64_t len, uint32_t mtu, int with_imm)
{
	uint64_t n;

	if (mtu == 0)
		return 0;
	n = len / mtu + (len % mtu ? 1 : 0);
	if (n == 0)
		n = 1;
	return n + sdr_wire_imm_only_pkts(n, with_imm);
}

/* ---- build ---- */

void sdr_hdr_tmpl_init(struct sdr_hdr_tmpl *t, const struct sdr_l2l3 *a)
{
	uint8_t *buf = t->b, *ip = buf + SDR_ETH_HLEN;
	uint8_t *udp = ip + SDR_IPV4_HLEN;
	uint8_t *bth = udp + SDR_UDP_HLEN;
	uint32_t sum = 0;

	memset(t, 0, sizeof(*t));
	memcpy(buf, a->dst_mac, 6);
	memcpy(buf + 6, a->src_mac, 6);
	wr16(buf + 12, SDR_ETHERTYPE_IPV4);

	ip[IP_OFF_VER_IHL] = 0x45;
	ip[IP_OFF_TOS] = (uint8_t)(a->dscp << 2); /* ECN bits 0: not ECN-capable */
	/* total length: per frame */
	wr16(ip + IP_OFF_ID, 0); /* DF set, never fragmented: id carries nothing */
	wr16(ip + IP_OFF_FRAG, IP_FLAG_DF);
	ip[IP_OFF_TTL] = a->ttl ? a->ttl : IP_DEFAULT_TTL;
	ip[IP_OFF_PROTO] = IP_PROTO_UDP;
	/* checksum: per frame, from the sum of the rest */
	wr32(ip + IP_OFF_SRC, a->src_ip);
	wr32(ip + IP_OFF_DST, a->dst_ip);
	for (size_t i = 0; i < SDR_IPV4_HLEN; i += 2)
		sum += rd16(ip + i);
	t->ip_sum = sum;

	wr16(udp + UDP_OFF_SPORT, a->udp_sport);
	wr16(udp + UDP_OFF_DPORT, SDR_ROCE_UDP_PORT);
	/* length: per frame */
	wr16(udp + UDP_OFF_CSUM, 0); /* RoCEv2 allows 0; the ICRC covers the data */

	/* opcode, SE and PadCnt, DestQP, PSN: per frame */
	wr16(bth + BTH_OFF_PKEY, SDR_PKEY_DEFAULT);
	bth[BTH_OFF_RESV8] = 0;
	bth[BTH_OFF_ACKREQ] = 0; /* UC: nobody acknowledges at the transport level */
}

/*
 * Eth + IPv4 + UDP + BTH of a packet whose BTH payload (everything after the
 * BTH up to, not including, the pad) is @p bth_payload bytes: the template
 * and the fields of this frame. Returns the frame length including pad and
 * ICRC.
 */
static size_t build_l2_to_bth(uint8_t *buf, const struct sdr_hdr_tmpl *t, uint8_t opcode,
			      uint8_t se, uint32_t dest_qpn, uint32_t psn, size_t bth_payload)
{
	uint32_t pad = pad_of(bth_payload);
	size_t udp_len = SDR_UDP_HLEN + SDR_BTH_LEN + bth_payload + pad + SDR_ICRC_LEN;
	size_t ip_len = SDR_IPV4_HLEN + udp_len;
	uint8_t *ip = buf + SDR_ETH_HLEN;
	uint8_t *udp = ip + SDR_IPV4_HLEN;
	uint8_t *bth = udp + SDR_UDP_HLEN;
	uint32_t sum = t->ip_sum + (uint32_t)ip_len;

	memcpy(buf, t->b, SDR_CTRL_HDR_LEN);
	wr16(ip + IP_OFF_TOTLEN, (uint16_t)ip_len);
	while (sum >> 16) /* the header's checksum: the template's sum and this length */
		sum = (sum & 0xFFFF) + (sum >> 16);
	wr16(ip + IP_OFF_CSUM, (uint16_t)~sum);
	wr16(udp + UDP_OFF_LEN, (uint16_t)udp_len);
	bth[BTH_OFF_OPCODE] = opcode;
	bth[BTH_OFF_FLAGS] = (uint8_t)((se ? SDR_BTH_SE : 0) | pad << SDR_BTH_PAD_SHIFT);
	wr24(bth + BTH_OFF_DQPN, dest_qpn & SDR_QPN_MASK);
	wr24(bth + BTH_OFF_PSN, psn & SDR_PSN_MASK);
	return frame_len(bth_payload); /* = SDR_ETH_HLEN + ip_len */
}

void sdr_udp_set_sport(uint8_t *frame, uint16_t sport)
{
	wr16(frame + SDR_ETH_HLEN + SDR_IPV4_HLEN + UDP_OFF_SPORT, sport);
}

void sdr_ip_set_ecn(uint8_t *frame, uint8_t ecn)
{
	uint8_t *ip = frame + SDR_ETH_HLEN;
	uint16_t old = rd16(ip), neu;
	uint32_t sum;

	ip[IP_OFF_TOS] = (uint8_t)((ip[IP_OFF_TOS] & ~SDR_ECN_MASK) | (ecn & SDR_ECN_MASK));
	neu = rd16(ip);
	/* RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m') */
	sum = (uint16_t)~rd16(ip + IP_OFF_CSUM) + (uint32_t)(uint16_t)~old + neu;
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	wr16(ip + IP_OFF_CSUM, (uint16_t)~sum);
}

size_t sdr_build_data_hdr_t(uint8_t *buf, const struct sdr_hdr_tmpl *t,
			    const struct sdr_data_hdr *h)
{
	size_t flen = build_l2_to_bth(
		buf, t, h->no_imm ? SDR_OP_UC_WRITE_ONLY : SDR_OP_UC_WRITE_ONLY_IMM, h->se,
		h->dest_qpn, h->psn, sdr_data_hdr_len(h) - SDR_CTRL_HDR_LEN + (size_t)h->dma_len);
	uint8_t *reth = buf + SDR_CTRL_HDR_LEN;

	wr64(reth + RETH_OFF_VA, h->va);
	wr32(reth + RETH_OFF_RKEY, h->rkey);
	wr32(reth + RETH_OFF_DMALEN, h->dma_len);
	if (!h->no_imm)
		wr32(reth + SDR_RETH_LEN, h->imm);
	return flen;
}

size_t sdr_build_ctrl_hdr_t(uint8_t *buf, const struct sdr_hdr_tmpl *t, uint32_t dest_qpn,
			    uint32_t psn, size_t msg_len)
{
	return build_l2_to_bth(buf, t, SDR_OP_UC_SEND_ONLY, 0, dest_qpn, psn, msg_len);
}

size_t sdr_build_data_hdr(uint8_t *buf, const struct sdr_l2l3 *a, const struct sdr_data_hdr *h)
{
	struct sdr_hdr_tmpl t;

	sdr_hdr_tmpl_init(&t, a);
	return sdr_build_data_hdr_t(buf, &t, h);
}

size_t sdr_build_ctrl_hdr(uint8_t *buf, const struct sdr_l2l3 *a, uint32_t dest_qpn, uint32_t psn,
			  size_t msg_len)
{
	struct sdr_hdr_tmpl t;

	sdr_hdr_tmpl_init(&t, a);
	return sdr_build_ctrl_hdr_t(buf, &t, dest_qpn, psn, msg_len);
}

void sdr_pkt_finish(uint8_t *buf, size_t frame_len, int icrc)
{
	const uint8_t *bth = buf + SDR_ETH_HLEN + SDR_IPV4_HLEN + SDR_UDP_HLEN;
	uint32_t pad = (bth[BTH_OFF_FLAGS] >> SDR_BTH_PAD_SHIFT) & BTH_PAD_MASK;
	uint8_t *icrc_p = buf + frame_len - SDR_ICRC_LEN;

	memset(icrc_p - pad, 0, pad);
	wr32le(icrc_p, icrc ? sdr_icrc_inplace(buf, frame_len - SDR_ICRC_LEN) : 0);
}

/* ---- ARP ---- */

size_t sdr_arp_reply(const uint8_t *frame, size_t len, uint32_t my_ip, const uint8_t my_mac[6],
		     uint8_t *reply)
{
	const uint8_t *arp = frame + SDR_ETH_HLEN;
	uint8_t *rarp = reply + SDR_ETH_HLEN;

	if (len < ARP_FRAME_LEN || rd16(frame + 12) != SDR_ETHERTYPE_ARP)
		return 0;
	/* Ethernet/IPv4 request only: htype 1, ptype 0x0800, hlen 6, plen 4. */
	if (rd16(arp) != 1 || rd16(arp + 2) != SDR_ETHERTYPE_IPV4 || arp[4] != 6 || arp[5] != 4 ||
	    rd16(arp + 6) != ARP_OP_REQUEST)
		return 0;
	if (rd32(arp + 24) != my_ip)
		return 0;
	/* A multicast sender hardware address is bogus; answering it would
	 * turn a unicast reply into a flood. */
	if (arp[8] & 0x01)
		return 0;

	memcpy(reply, arp + 8, 6);
	memcpy(reply + 6, my_mac, 6);
	wr16(reply + 12, SDR_ETHERTYPE_ARP);
	wr16(rarp, 1);
	wr16(rarp + 2, SDR_ETHERTYPE_IPV4);
	rarp[4] = 6;
	rarp[5] = 4;
	wr16(rarp + 6, ARP_OP_REPLY);
	memmove(rarp + 18, arp + 8, 10); /* target := requester (sha, spa) */
	memcpy(rarp + 8, my_mac, 6);
	wr32(rarp + 14, my_ip);
	return ARP_FRAME_LEN;
}
