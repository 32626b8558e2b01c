/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-dpu wire format: build and parse RoCEv2 UC packets (see sdr_wire.h and
 * docs/wire-format.md). Everything here handles untrusted bytes: every read
 * of a received frame is bounds-checked against the length the caller gave.
 */
#include "sdr_wire.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <isa-l/crc.h>

#ifdef SDR_HAVE_ISAL_CRC_BY8
uint32_t crc32_gzip_refl_by8(uint32_t crc, const unsigned char *buf, uint64_t len);
#endif

/* Offsets inside the headers we touch (RFC 791, RFC 768, IBTA vol.1 9.2-9.5). */
#define IP_OFF_VER_IHL 0
#define IP_OFF_TOS 1
#define IP_OFF_TOTLEN 2
#define IP_OFF_ID 4
#define IP_OFF_FRAG 6
#define IP_OFF_TTL 8
#define IP_OFF_PROTO 9
#define IP_OFF_CSUM 10
#define IP_OFF_SRC 12
#define IP_OFF_DST 16
#define IP_FLAG_DF 0x4000
#define IP_FLAG_MF 0x2000
#define IP_FRAG_OFF_MASK 0x1FFF
#define IP_PROTO_UDP 17
#define IP_DEFAULT_TTL 64
#define IP_MAX_HLEN 60

#define UDP_OFF_SPORT 0
#define UDP_OFF_DPORT 2
#define UDP_OFF_LEN 4
#define UDP_OFF_CSUM 6

#define BTH_OFF_OPCODE 0
#define BTH_OFF_FLAGS 1 /* SE | MigReq | PadCnt(2) | TVer(4) */
#define BTH_OFF_PKEY 2
#define BTH_OFF_RESV8 4 /* FECN | BECN | resv6: masked in the ICRC */
#define BTH_OFF_DQPN 5
#define BTH_OFF_ACKREQ 8
#define BTH_OFF_PSN 9
#define BTH_TVER_MASK 0x0F
#define BTH_PAD_MASK 0x03

#define RETH_OFF_VA 0
#define RETH_OFF_RKEY 8
#define RETH_OFF_DMALEN 12

#define ARP_LEN 28
#define ARP_FRAME_LEN (SDR_ETH_HLEN + ARP_LEN)
#define ARP_OP_REQUEST 1
#define ARP_OP_REPLY 2

/* ---- byte access: unaligned, explicit byte order ---- */

static inline uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] << 8 | p[1]); }
static inline uint32_t rd24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}
static inline uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t rd64(const uint8_t *p) { return (uint64_t)rd32(p) << 32 | rd32(p + 4); }
static inline uint32_t rd32le(const uint8_t *p)
{
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

static inline void wr16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}
static inline void wr24(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 16);
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)v;
}
static inline void wr32(uint8_t *p, uint32_t v)
{
	wr16(p, (uint16_t)(v >> 16));
	wr16(p + 2, (uint16_t)v);
}
static inline void wr64(uint8_t *p, uint64_t v)
{
	wr32(p, (uint32_t)(v >> 32));
	wr32(p + 4, (uint32_t)v);
}
static inline void wr32le(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

/* Internet checksum (RFC 1071) of an even-length header. */
static uint16_t ip_csum(const uint8_t *p, size_t len)
{
	uint32_t sum = 0;

	for (size_t i = 0; i + 1 < len; i += 2)
		sum += rd16(p + i);
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	return (uint16_t)~sum;
}

static inline uint32_t pad_of(size_t len) { return (uint32_t)((4 - (len & 3)) & 3); }

/* Frame length, Ethernet header to ICRC, of a packet whose BTH payload
 * (everything after the BTH up to, not including, the pad) is @p bth_payload. */
static inline size_t frame_len(size_t bth_payload)
{
	return SDR_ETH_HLEN + SDR_IPV4_HLEN + SDR_UDP_HLEN + SDR_BTH_LEN + bth_payload +
	       pad_of(bth_payload) + SDR_ICRC_LEN;
}

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

size_t sdr_build_data_hdr_t(uint8_t *buf, const struct sdr_hdr_tmpl *t, const struct sdr_data_hdr *h)
{
	size_t flen = build_l2_to_bth(buf, t, h->no_imm ? SDR_OP_UC_WRITE_ONLY : SDR_OP_UC_WRITE_ONLY_IMM,
				      h->se, h->dest_qpn, h->psn,
				      sdr_data_hdr_len(h) - SDR_CTRL_HDR_LEN + (size_t)h->dma_len);
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

size_t sdr_build_ctrl_hdr(uint8_t *buf, const struct sdr_l2l3 *a, uint32_t dest_qpn,
			  uint32_t psn, size_t msg_len)
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

/* ---- ICRC ---- */

/* The CRC-32 of the ICRC. Two implementations of the same CRC on x86-64
 * (sdr_icrc_select(), sdr-dpu --icrc-crc):
 *  - "isal" (and "auto", the default): crc32_gzip_refl, ISA-L's
 *    dispatcher, its AVX-512 variant on a core that has it, followed by
 *    VZEROUPPER (below);
 *  - "by8": ISA-L's 128-bit PCLMUL variant, 2.4x slower per byte.
 * Measured side by side in docs/benchmarks.md section 8: with the
 * VZEROUPPER, isal did 1.27x the 4 KiB messages and 1.30x the 4 KiB
 * packets of by8 per worker CPU-second, and the same 64 B messages.
 * Without it, the stalls after each call had cost what the faster CRC
 * saves (and had been taken for a wake-up penalty of the vector unit). */
typedef uint32_t (*crc_fn)(uint32_t, const unsigned char *, uint64_t);
static crc_fn icrc_fn;

#if defined(__x86_64__)
/* ISA-L 2.30's AVX-512 CRC (crc32_gzip_refl_by16_10) returns without
 * VZEROUPPER: the upper halves of the vector registers stay dirty, and the
 * first legacy-SSE instructions of the caller (this code is built for
 * baseline x86-64) then stall on them; a profile put 9 % of the worker's
 * samples on the first SSE instruction after each call. Clear them. */
static uint32_t crc_isal_clean(uint32_t crc, const unsigned char *buf, uint64_t len)
{
	crc = crc32_gzip_refl(crc, buf, len);
	__asm__ volatile("vzeroupper" ::: "memory");
	return crc;
}

static crc_fn icrc_isal(void)
{
	__builtin_cpu_init();
	return __builtin_cpu_supports("avx") ? crc_isal_clean : crc32_gzip_refl;
}
#else
static crc_fn icrc_isal(void)
{
	return crc32_gzip_refl;
}
#endif

static crc_fn icrc_by8(void)
{
#ifdef SDR_HAVE_ISAL_CRC_BY8
	__builtin_cpu_init();
	if (__builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1"))
		return crc32_gzip_refl_by8;
#endif
	return NULL;
}

int sdr_icrc_select(const char *name)
{
	crc_fn f;

	if (!strcmp(name, "auto") || !strcmp(name, "isal"))
		f = icrc_isal();
	else if (!strcmp(name, "by8")) {
		if (!(f = icrc_by8()))
			return -ENOTSUP;
	} else
		return -EINVAL;
	__atomic_store_n(&icrc_fn, f, __ATOMIC_RELAXED);
	return 0;
}

const char *sdr_icrc_selected(void)
{
	crc_fn f = __atomic_load_n(&icrc_fn, __ATOMIC_RELAXED);

	if (!f)
		f = icrc_isal();
	return f == icrc_isal() ? "isal" : "by8";
}

uint32_t sdr_icrc_crc32(uint32_t crc, const uint8_t *buf, size_t len)
{
	crc_fn f = __atomic_load_n(&icrc_fn, __ATOMIC_RELAXED);

	if (!f) { /* (every thread finds the same: a benign race) */
		f = icrc_isal();
		__atomic_store_n(&icrc_fn, f, __ATOMIC_RELAXED);
	}
	return f(crc, buf, len);
}

/* 8 B of ones stand in for the InfiniBand LRH that RoCEv2 replaced. */
#define ICRC_PSEUDO_LRH 8
#define ICRC_MASKED_MAX (ICRC_PSEUDO_LRH + IP_MAX_HLEN + SDR_UDP_HLEN + SDR_BTH_LEN)

/* IPv4 header length of a frame the ICRC can cover (Ethernet, IPv4, UDP
 * and BTH within @p len), else 0. Defensive: callers pass frames
 * sdr_parse() or the builders vetted. */
static size_t icrc_ihl(const uint8_t *frame, size_t len)
{
	size_t ihl;

	if (len < SDR_ETH_HLEN + SDR_IPV4_HLEN + SDR_UDP_HLEN + SDR_BTH_LEN)
		return 0;
	ihl = (size_t)(frame[SDR_ETH_HLEN + IP_OFF_VER_IHL] & 0x0F) * 4;
	if (ihl < SDR_IPV4_HLEN || len < SDR_ETH_HLEN + ihl + SDR_UDP_HLEN + SDR_BTH_LEN)
		return 0;
	return ihl;
}

uint32_t sdr_icrc_compute(const uint8_t *frame, size_t len_without_icrc)
{
	uint8_t hdr[ICRC_MASKED_MAX];
	const uint8_t *ip = frame + SDR_ETH_HLEN;
	size_t ihl = icrc_ihl(frame, len_without_icrc), masked, covered;
	uint32_t crc;

	if (!ihl)
		return 0;

	/* The fields routers may rewrite (TOS, TTL, checksums) and the BTH
	 * congestion bits are replaced by ones so the CRC is end-to-end. */
	covered = ihl + SDR_UDP_HLEN + SDR_BTH_LEN;
	masked = ICRC_PSEUDO_LRH + covered;
	memset(hdr, 0xFF, ICRC_PSEUDO_LRH);
	memcpy(hdr + ICRC_PSEUDO_LRH, ip, covered);
	{
		uint8_t *mip = hdr + ICRC_PSEUDO_LRH;
		uint8_t *mudp = mip + ihl;
		uint8_t *mbth = mudp + SDR_UDP_HLEN;

		mip[IP_OFF_TOS] = 0xFF;
		mip[IP_OFF_TTL] = 0xFF;
		mip[IP_OFF_CSUM] = 0xFF;
		mip[IP_OFF_CSUM + 1] = 0xFF;
		mudp[UDP_OFF_CSUM] = 0xFF;
		mudp[UDP_OFF_CSUM + 1] = 0xFF;
		mbth[BTH_OFF_RESV8] = 0xFF;
	}
	crc = crc32_gzip_refl(0, hdr, masked);
	return crc32_gzip_refl(crc, ip + covered,
			       len_without_icrc - SDR_ETH_HLEN - covered);
}

uint32_t sdr_icrc_inplace(uint8_t *frame, size_t len_without_icrc)
{
	uint8_t *ip = frame + SDR_ETH_HLEN, *lrh = ip - ICRC_PSEUDO_LRH, *udp, *bth;
	uint8_t save_lrh[ICRC_PSEUDO_LRH], tos, ttl, csum0, csum1, ucsum0, ucsum1, resv;
	size_t ihl = icrc_ihl(frame, len_without_icrc);
	uint32_t crc;

	if (!ihl)
		return 0;
	udp = ip + ihl;
	bth = udp + SDR_UDP_HLEN;

	/* the LRH stand-in over the end of the Ethernet header, the masked
	 * fields as ones: the CRC input of sdr_icrc_compute(), contiguous */
	memcpy(save_lrh, lrh, ICRC_PSEUDO_LRH);
	tos = ip[IP_OFF_TOS];
	ttl = ip[IP_OFF_TTL];
	csum0 = ip[IP_OFF_CSUM];
	csum1 = ip[IP_OFF_CSUM + 1];
	ucsum0 = udp[UDP_OFF_CSUM];
	ucsum1 = udp[UDP_OFF_CSUM + 1];
	resv = bth[BTH_OFF_RESV8];
	memset(lrh, 0xFF, ICRC_PSEUDO_LRH);
	ip[IP_OFF_TOS] = ip[IP_OFF_TTL] = ip[IP_OFF_CSUM] = ip[IP_OFF_CSUM + 1] = 0xFF;
	udp[UDP_OFF_CSUM] = udp[UDP_OFF_CSUM + 1] = 0xFF;
	bth[BTH_OFF_RESV8] = 0xFF;

	crc = sdr_icrc_crc32(0, lrh, len_without_icrc - (size_t)(lrh - frame));

	memcpy(lrh, save_lrh, ICRC_PSEUDO_LRH);
	ip[IP_OFF_TOS] = tos;
	ip[IP_OFF_TTL] = ttl;
	ip[IP_OFF_CSUM] = csum0;
	ip[IP_OFF_CSUM + 1] = csum1;
	udp[UDP_OFF_CSUM] = ucsum0;
	udp[UDP_OFF_CSUM + 1] = ucsum1;
	bth[BTH_OFF_RESV8] = resv;
	return crc;
}

/* ---- parse ---- */

static const char *const parse_names[SDR_PARSE__MAX] = {
	[SDR_PARSE_OK_DATA] = "ok_data",   [SDR_PARSE_OK_CTRL] = "ok_ctrl",
	[SDR_PARSE_ARP] = "arp",           [SDR_PARSE_TRUNCATED] = "truncated",
	[SDR_PARSE_NOT_IPV4] = "not_ipv4", [SDR_PARSE_IP_BAD] = "ip_bad",
	[SDR_PARSE_NOT_UDP] = "not_udp",   [SDR_PARSE_NOT_ROCE] = "not_roce",
	[SDR_PARSE_BAD_BTH] = "bad_bth",   [SDR_PARSE_BAD_ICRC] = "bad_icrc",
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

/* ---- control messages ---- */

static void ctrl_hdr_put(uint8_t *msg, uint8_t type, uint16_t n, uint32_t src_qpn)
{
	wr32(msg, SDR_CTRL_MAGIC);
	msg[4] = SDR_CTRL_VERSION;
	msg[5] = type;
	wr16(msg + 6, n);
	wr32(msg + 8, src_qpn);
	wr64(msg + SDR_CTRL_KEY_OFF, 0);
}

void sdr_ctrl_key_put(uint8_t *msg, uint64_t key)
{
	wr64(msg + SDR_CTRL_KEY_OFF, key);
}

size_t sdr_ctrl_cts_encode(uint8_t *msg, uint32_t src_qpn, const struct sdr_cts_entry *e,
			   uint16_t n)
{
	uint8_t *p = msg + SDR_CTRL_HDR_WIRE;

	/* Receivers reject more entries; do not emit what nobody accepts. */
	if (n > SDR_CTS_MAX_ENTRIES)
		return 0;
	ctrl_hdr_put(msg, SDR_CTRL_CTS, n, src_qpn);
	for (uint16_t i = 0; i < n; i++, p += SDR_CTS_ENTRY_WIRE) {
		wr32(p, e[i].seq);
		wr32(p + 4, e[i].length);
	}
	return SDR_CTRL_HDR_WIRE + (size_t)n * SDR_CTS_ENTRY_WIRE;
}

int sdr_ctrl_hdr_decode(const uint8_t *msg, size_t len, struct sdr_ctrl_hdr *h)
{
	if (len < SDR_CTRL_HDR_WIRE)
		return -1;
	h->magic = rd32(msg);
	h->version = msg[4];
	h->type = msg[5];
	h->count = rd16(msg + 6);
	h->src_qpn = rd32(msg + 8);
	h->key = rd64(msg + SDR_CTRL_KEY_OFF);
	if (h->magic != SDR_CTRL_MAGIC || h->version != SDR_CTRL_VERSION)
		return -1;
	if (h->type == 0 || h->type >= SDR_CTRL__MAX)
		return -1;
	if (h->type == SDR_CTRL_NACK &&
	    (h->count > SDR_NACK_MAX_ENTRIES ||
	     (size_t)h->count * SDR_NACK_ENTRY_WIRE > len - SDR_CTRL_HDR_WIRE))
		return -1;
	if (h->type == SDR_CTRL_PARITY && (h->count != 1 || len <= SDR_PARITY_DATA_OFF))
		return -1;
	if (h->type == SDR_CTRL_CTS &&
	    (h->count > SDR_CTS_MAX_ENTRIES ||
	     (size_t)h->count * SDR_CTS_ENTRY_WIRE > len - SDR_CTRL_HDR_WIRE))
		return -1;
	if (h->type == SDR_CTRL_ACK &&
	    (h->count > SDR_ACK_MAX_ENTRIES ||
	     (size_t)h->count * SDR_ACK_ENTRY_WIRE > len - SDR_CTRL_HDR_WIRE))
		return -1;
	if (h->type == SDR_CTRL_ABORT &&
	    (h->count > SDR_ABORT_MAX_ENTRIES ||
	     (size_t)h->count * SDR_ABORT_ENTRY_WIRE > len - SDR_CTRL_HDR_WIRE))
		return -1;
	return 0;
}

size_t sdr_ctrl_abort_encode(uint8_t *msg, uint32_t src_qpn, const struct sdr_abort_entry *e,
			     uint16_t n)
{
	uint8_t *p = msg + SDR_CTRL_HDR_WIRE;

	if (n > SDR_ABORT_MAX_ENTRIES)
		return 0;
	ctrl_hdr_put(msg, SDR_CTRL_ABORT, n, src_qpn);
	for (uint16_t i = 0; i < n; i++, p += SDR_ABORT_ENTRY_WIRE) {
		wr32(p, e[i].seq);
		wr32(p + 4, (uint32_t)e[i].status);
		wr32(p + 8, e[i].length);
	}
	return SDR_CTRL_HDR_WIRE + (size_t)n * SDR_ABORT_ENTRY_WIRE;
}

void sdr_ctrl_abort_entry_decode(const uint8_t *msg, uint16_t i, struct sdr_abort_entry *e)
{
	const uint8_t *p = msg + SDR_CTRL_HDR_WIRE + (size_t)i * SDR_ABORT_ENTRY_WIRE;

	e->seq = rd32(p);
	e->status = (int32_t)rd32(p + 4);
	e->length = rd32(p + 8);
}

size_t sdr_ctrl_ack_encode(uint8_t *msg, uint32_t src_qpn, const struct sdr_ack_entry *e,
			   uint16_t n)
{
	uint8_t *p = msg + SDR_CTRL_HDR_WIRE;

	if (n > SDR_ACK_MAX_ENTRIES)
		return 0;
	for (uint16_t i = 0; i < n; i++)
		if (e[i].off > SDR_ACK_OFF_MAX)
			return 0;
	ctrl_hdr_put(msg, SDR_CTRL_ACK, n, src_qpn);
	for (uint16_t i = 0; i < n; i++, p += SDR_ACK_ENTRY_WIRE) {
		wr32(p, e[i].seq);
		wr32(p + 4, e[i].cum);
		p[8] = e[i].flags;
		p[9] = (uint8_t)(e[i].off >> 16);
		p[10] = (uint8_t)(e[i].off >> 8);
		p[11] = (uint8_t)e[i].off;
		memcpy(p + 12, e[i].bits, sizeof(e[i].bits));
		if ((e[i].flags & SDR_ACK_F_FULL) && e[i].lost)
			wr32(p + 12, e[i].lost);
	}
	return SDR_CTRL_HDR_WIRE + (size_t)n * SDR_ACK_ENTRY_WIRE;
}

int sdr_ctrl_ack_entry_decode(const uint8_t *msg, uint16_t i, struct sdr_ack_entry *e)
{
	const uint8_t *p = msg + SDR_CTRL_HDR_WIRE + (size_t)i * SDR_ACK_ENTRY_WIRE;

	e->seq = rd32(p);
	e->cum = rd32(p + 4);
	e->flags = p[8];
	e->off = (uint32_t)p[9] << 16 | (uint32_t)p[10] << 8 | p[11];
	memcpy(e->bits, p + 12, sizeof(e->bits));
	e->lost = (e->flags & SDR_ACK_F_FULL) ? rd32(p + 12) : 0;
	if (e->flags & ~SDR_ACK_F_MASK)
		return -1;
	return 0;
}


static int parity_hdr_ok(const struct sdr_parity_hdr *h)
{
	return (h->code == SDR_EC_RS || h->code == SDR_EC_XOR) && h->k >= 1 &&
	       h->k <= SDR_EC_K_MAX && h->m >= 1 && h->m <= SDR_EC_M_MAX && h->pidx < h->m &&
	       h->npkt >= 1 && h->pkt < h->npkt && !h->flags && !h->resv && h->clen >= 1 &&
	       h->msg_len >= 1;
}

size_t sdr_ctrl_parity_encode(uint8_t *msg, uint32_t src_qpn, const struct sdr_parity_hdr *h)
{
	uint8_t *p = msg + SDR_CTRL_HDR_WIRE;

	if (!parity_hdr_ok(h))
		return 0;
	ctrl_hdr_put(msg, SDR_CTRL_PARITY, 1, src_qpn);
	wr32(p, h->seq);
	wr32(p + 4, h->msg_len);
	wr32(p + 8, h->imm);
	p[12] = h->code;
	p[13] = h->k;
	p[14] = h->m;
	p[15] = h->flags;
	wr16(p + 16, h->sub);
	p[18] = h->pidx;
	p[19] = h->resv;
	wr16(p + 20, h->pkt);
	wr16(p + 22, h->npkt);
	wr32(p + 24, h->clen);
	return SDR_PARITY_DATA_OFF;
}

int sdr_ctrl_parity_decode(const uint8_t *msg, size_t len, struct sdr_parity_hdr *h,
			   const uint8_t **data, uint32_t *dlen)
{
	const uint8_t *p = msg + SDR_CTRL_HDR_WIRE;

	if (len <= SDR_PARITY_DATA_OFF)
		return -1;
	h->seq = rd32(p);
	h->msg_len = rd32(p + 4);
	h->imm = rd32(p + 8);
	h->code = p[12];
	h->k = p[13];
	h->m = p[14];
	h->flags = p[15];
	h->sub = rd16(p + 16);
	h->pidx = p[18];
	h->resv = p[19];
	h->pkt = rd16(p + 20);
	h->npkt = rd16(p + 22);
	h->clen = rd32(p + 24);
	*data = msg + SDR_PARITY_DATA_OFF;
	*dlen = (uint32_t)(len - SDR_PARITY_DATA_OFF);
	return parity_hdr_ok(h) ? 0 : -1;
}

size_t sdr_ctrl_nack_encode(uint8_t *msg, uint32_t src_qpn, const struct sdr_nack_entry *e,
			    uint16_t n)
{
	uint8_t *p = msg + SDR_CTRL_HDR_WIRE;

	if (n > SDR_NACK_MAX_ENTRIES)
		return 0;
	for (uint16_t i = 0; i < n; i++)
		if (e[i].k < 1 || e[i].k > SDR_EC_K_MAX || (e[i].flags & ~SDR_NACK_F_MASK))
			return 0;
	ctrl_hdr_put(msg, SDR_CTRL_NACK, n, src_qpn);
	for (uint16_t i = 0; i < n; i++, p += SDR_NACK_ENTRY_WIRE) {
		wr32(p, e[i].seq);
		wr16(p + 4, e[i].sub);
		p[6] = e[i].k;
		p[7] = e[i].flags;
		wr64(p + 8, e[i].missing);
	}
	return SDR_CTRL_HDR_WIRE + (size_t)n * SDR_NACK_ENTRY_WIRE;
}

int sdr_ctrl_nack_entry_decode(const uint8_t *msg, uint16_t i, struct sdr_nack_entry *e)
{
	const uint8_t *p = msg + SDR_CTRL_HDR_WIRE + (size_t)i * SDR_NACK_ENTRY_WIRE;

	e->seq = rd32(p);
	e->sub = rd16(p + 4);
	e->k = p[6];
	e->flags = p[7];
	e->missing = rd64(p + 8);
	if (e->k < 1 || e->k > SDR_EC_K_MAX || (e->flags & ~SDR_NACK_F_MASK))
		return -1;
	if (e->k < 64 && (e->missing >> e->k))
		return -1;
	return 0;
}

void sdr_ctrl_cts_entry_decode(const uint8_t *msg, uint16_t i, struct sdr_cts_entry *e)
{
	const uint8_t *p = msg + SDR_CTRL_HDR_WIRE + (size_t)i * SDR_CTS_ENTRY_WIRE;

	e->seq = rd32(p);
	e->length = rd32(p + 4);
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
	if (rd16(arp) != 1 || rd16(arp + 2) != SDR_ETHERTYPE_IPV4 || arp[4] != 6 ||
	    arp[5] != 4 || rd16(arp + 6) != ARP_OP_REQUEST)
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

/* ---- text helpers ---- */

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int sdr_parse_mac(const char *s, uint8_t mac[6])
{
	uint8_t m[6];

	if (s == NULL)
		return -1;
	for (int i = 0; i < 6; i++) {
		int hi = hexval(s[0]), lo = hi < 0 ? -1 : hexval(s[1]);

		if (hi < 0 || lo < 0)
			return -1;
		m[i] = (uint8_t)(hi << 4 | lo);
		s += 2;
		if (*s != (i == 5 ? '\0' : ':'))
			return -1;
		s += i < 5;
	}
	memcpy(mac, m, 6);
	return 0;
}

int sdr_parse_ipv4(const char *s, uint32_t *ip)
{
	struct in_addr a;

	/* inet_pton, unlike inet_aton, accepts exactly a dotted quad. */
	if (s == NULL || inet_pton(AF_INET, s, &a) != 1)
		return -1;
	*ip = ntohl(a.s_addr);
	return 0;
}

void sdr_format_mac(const uint8_t mac[6], char out[18])
{
	snprintf(out, 18, "%02x:%02x:%02x:%02x:%02x:%02x", mac[0], mac[1], mac[2], mac[3],
		 mac[4], mac[5]);
}

void sdr_format_ipv4(uint32_t ip, char out[16])
{
	snprintf(out, 16, "%u.%u.%u.%u", ip >> 24, (ip >> 16) & 0xFF, (ip >> 8) & 0xFF,
		 ip & 0xFF);
}
