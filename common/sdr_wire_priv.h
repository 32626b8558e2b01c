/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inside the wire format (common/sdr_wire_*.c only, not an API): the header
 * offsets, unaligned big-endian byte access and the frame-length arithmetic
 * that the builders, the parser, the ICRC and the control codecs share.
 */
#ifndef SDR_WIRE_PRIV_H
#define SDR_WIRE_PRIV_H

#include <stddef.h>
#include <stdint.h>

#include "sdr_wire.h"

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

static inline uint16_t rd16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}
static inline uint32_t rd24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}
static inline uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint64_t rd64(const uint8_t *p)
{
	return (uint64_t)rd32(p) << 32 | rd32(p + 4);
}
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
static inline uint16_t ip_csum(const uint8_t *p, size_t len)
{
	uint32_t sum = 0;

	for (size_t i = 0; i + 1 < len; i += 2)
		sum += rd16(p + i);
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	return (uint16_t)~sum;
}

static inline uint32_t pad_of(size_t len)
{
	return (uint32_t)((4 - (len & 3)) & 3);
}

/* Frame length, Ethernet header to ICRC, of a packet whose BTH payload
 * (everything after the BTH up to, not including, the pad) is @p bth_payload. */
static inline size_t frame_len(size_t bth_payload)
{
	return SDR_ETH_HLEN + SDR_IPV4_HLEN + SDR_UDP_HLEN + SDR_BTH_LEN + bth_payload +
	       pad_of(bth_payload) + SDR_ICRC_LEN;
}

#endif /* SDR_WIRE_PRIV_H */
