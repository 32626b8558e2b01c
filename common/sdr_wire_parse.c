/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-dpu wire format, parsing received frames (see sdr_wire.h and
 * docs/wire-format.md). Everything here handles untrusted bytes: every read
 * of a received frame is bounds-checked against the length the caller gave.
 * Pure C; the fuzz harnesses in tests/fuzz drive it.
 */
#include <string.h>

#include "sdr_wire_priv.h"

static const char *const parse_names[SDR_PARSE__MAX] = {
	[SDR_PARSE_OK_DATA] = "ok_data",
	[SDR_PARSE_OK_CTRL] = "ok_ctrl",
	[SDR_PARSE_ARP] = "arp",
	[SDR_PARSE_TRUNCATED] = "truncated",
	[SDR_PARSE_NOT_IPV4] = "not_ipv4",
	[SDR_PARSE_IP_BAD] = "ip_bad",
	[SDR_PARSE_NOT_UDP] = "not_udp",
	[SDR_PARSE_NOT_ROCE] = "not_roce",
	[SDR_PARSE_BAD_BTH] = "bad_bth",
	[SDR_PARSE_BAD_ICRC] = "bad_icrc",
	[SDR_PARSE_BAD_LEN] = "bad_dma_len",
};

const char *sdr_parse_result_name(enum sdr_parse_result r)
{
	if ((unsigned)r >= SDR_PARSE__MAX || parse_names[r] == NULL)
		return "unknown";
	return parse_names[r];
}

enum sdr_parse_result sdr_parse_hdr(const uint8_t *frame, size_t len, struct sdr_parsed *out)
{
	const uint8_t *ip, *udp, *bth, *end, *body;
	size_t ihl, ip_len, udp_len, body_len, hdrs;
	uint16_t ethertype, frag;
	uint32_t pad;

	memset(out, 0, sizeof(*out));
	if (len < SDR_ETH_HLEN)
		return SDR_PARSE_TRUNCATED;
	memcpy(out->dst_mac, frame, 6);
	memcpy(out->src_mac, frame + 6, 6);
	ethertype = rd16(frame + 12);
	if (ethertype == SDR_ETHERTYPE_ARP)
		return SDR_PARSE_ARP;
	/* VLAN tags are stripped by the NIC or not used on the link at all. */
	if (ethertype != SDR_ETHERTYPE_IPV4)
		return SDR_PARSE_NOT_IPV4;

	/* IPv4 */
	ip = frame + SDR_ETH_HLEN;
	if (len < SDR_ETH_HLEN + SDR_IPV4_HLEN)
		return SDR_PARSE_TRUNCATED;
	if ((ip[IP_OFF_VER_IHL] >> 4) != 4)
		return SDR_PARSE_IP_BAD;
	ihl = (size_t)(ip[IP_OFF_VER_IHL] & 0x0F) * 4;
	if (ihl < SDR_IPV4_HLEN)
		return SDR_PARSE_IP_BAD;
	if (len < SDR_ETH_HLEN + ihl)
		return SDR_PARSE_TRUNCATED;
	if (ip_csum(ip, ihl) != 0)
		return SDR_PARSE_IP_BAD;
	ip_len = rd16(ip + IP_OFF_TOTLEN);
	if (ip_len < ihl)
		return SDR_PARSE_IP_BAD;
	/* Anything past total length is Ethernet minimum-frame padding. */
	if (ip_len > len - SDR_ETH_HLEN)
		return SDR_PARSE_TRUNCATED;
	frag = rd16(ip + IP_OFF_FRAG);
	if (frag & (IP_FLAG_MF | IP_FRAG_OFF_MASK))
		return SDR_PARSE_IP_BAD;
	out->ecn = ip[IP_OFF_TOS] & SDR_ECN_MASK;
	out->src_ip = rd32(ip + IP_OFF_SRC);
	out->dst_ip = rd32(ip + IP_OFF_DST);
	if (ip[IP_OFF_PROTO] != IP_PROTO_UDP)
		return SDR_PARSE_NOT_UDP;
	end = ip + ip_len;

	/* UDP */
	udp = ip + ihl;
	if ((size_t)(end - udp) < SDR_UDP_HLEN)
		return SDR_PARSE_TRUNCATED;
	out->udp_sport = rd16(udp + UDP_OFF_SPORT);
	if (rd16(udp + UDP_OFF_DPORT) != SDR_ROCE_UDP_PORT)
		return SDR_PARSE_NOT_ROCE;
	udp_len = rd16(udp + UDP_OFF_LEN);
	if (udp_len > (size_t)(end - udp))
		return SDR_PARSE_TRUNCATED;
	/* RoCEv2 ends the UDP datagram with the ICRC at the end of the IP
	 * packet; a shorter UDP length would leave bytes nobody covers. */
	if (udp_len != (size_t)(end - udp))
		return SDR_PARSE_BAD_LEN;

	/* BTH */
	bth = udp + SDR_UDP_HLEN;
	if ((size_t)(end - bth) < SDR_BTH_LEN + SDR_ICRC_LEN)
		return SDR_PARSE_TRUNCATED;
	if (bth[BTH_OFF_FLAGS] & BTH_TVER_MASK)
		return SDR_PARSE_BAD_BTH;
	out->opcode = bth[BTH_OFF_OPCODE];
	if (out->opcode == SDR_OP_UC_WRITE_ONLY_IMM)
		hdrs = SDR_BTH_LEN + SDR_RETH_LEN + SDR_IMM_LEN;
	else if (out->opcode == SDR_OP_UC_WRITE_ONLY)
		hdrs = SDR_BTH_LEN + SDR_RETH_LEN;
	else if (out->opcode == SDR_OP_UC_SEND_ONLY)
		hdrs = SDR_BTH_LEN;
	else
		return SDR_PARSE_BAD_BTH;
	out->se = (bth[BTH_OFF_FLAGS] & SDR_BTH_SE) != 0;
	out->dest_qpn = rd24(bth + BTH_OFF_DQPN);
	out->psn = rd24(bth + BTH_OFF_PSN);
	if ((size_t)(end - bth) < hdrs + SDR_ICRC_LEN)
		return SDR_PARSE_TRUNCATED;
	body = bth + hdrs;
	body_len = (size_t)(end - SDR_ICRC_LEN - body);
	pad = (bth[BTH_OFF_FLAGS] >> SDR_BTH_PAD_SHIFT) & BTH_PAD_MASK;
	if (pad > body_len)
		return SDR_PARSE_BAD_BTH;

	out->icrc_off = (uint32_t)(end - SDR_ICRC_LEN - frame);
	out->payload = body;
	out->payload_len = (uint32_t)(body_len - pad);
	return out->opcode == SDR_OP_UC_SEND_ONLY ? SDR_PARSE_OK_CTRL : SDR_PARSE_OK_DATA;
}

int sdr_parse_icrc_ok(uint8_t *frame, const struct sdr_parsed *p)
{
	return sdr_icrc_inplace(frame, p->icrc_off) == rd32le(frame + p->icrc_off);
}

enum sdr_parse_result sdr_parse_reth(struct sdr_parsed *p)
{
	const uint8_t *reth = p->payload - SDR_RETH_LEN;

	if (p->opcode == SDR_OP_UC_WRITE_ONLY_IMM) {
		reth -= SDR_IMM_LEN;
		sdr_parsed_set_imm(p, rd32(reth + SDR_RETH_LEN));
	} else {
		p->imm = 0;
		p->imm_zero = 1; /* placed by sdr_data_locate() */
	}
	p->va = rd64(reth + RETH_OFF_VA);
	p->rkey = rd32(reth + RETH_OFF_RKEY);
	p->dma_len = rd32(reth + RETH_OFF_DMALEN);
	if (p->dma_len != p->payload_len)
		return SDR_PARSE_BAD_LEN;
	return SDR_PARSE_OK_DATA;
}

int sdr_data_locate(struct sdr_parsed *p, uint32_t mtu, uint32_t max_msg)
{
	uint64_t msg;

	if (p->opcode != SDR_OP_UC_WRITE_ONLY)
		return 0;
	if (!mtu || !max_msg || p->va % mtu || (p->va % max_msg) % mtu)
		return -1;
	msg = p->va / max_msg;
	if (msg >= SDR_MAX_MSGS || (p->va % max_msg) / mtu >= SDR_MAX_PKTS)
		return -1;
	p->msg_id = (uint32_t)msg;
	p->pkt_off = (uint32_t)((p->va % max_msg) / mtu);
	return 0;
}

enum sdr_parse_result sdr_parse(const uint8_t *frame, size_t len, int verify_icrc,
				struct sdr_parsed *out)
{
	enum sdr_parse_result r = sdr_parse_hdr(frame, len, out);

	if (r != SDR_PARSE_OK_DATA && r != SDR_PARSE_OK_CTRL)
		return r;
	/* Check the CRC before believing any field the sender's RETH claims. */
	if (verify_icrc && sdr_icrc_compute(frame, out->icrc_off) != rd32le(frame + out->icrc_off))
		return SDR_PARSE_BAD_ICRC;
	return r == SDR_PARSE_OK_CTRL ? r : sdr_parse_reth(out);
}
