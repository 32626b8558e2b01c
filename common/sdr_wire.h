/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-dpu wire format: RoCEv2 (Ethernet / IPv4 / UDP 4791 / BTH ...) as SDR
 * uses it. Pure C, no DPDK types: the host tools, the fuzzers and the
 * firmware all build and parse packets through this module.
 *
 * Every byte is described in docs/wire-format.md. Summary:
 *
 *  data:    Eth | IPv4 | UDP | BTH(op 0x2B UC RDMA WRITE Only w/ Imm) | RETH | ImmDt
 *           | payload | pad to 4 B (BTH.PadCnt) | ICRC
 *           or, for a message whose user immediate is 0:
 *           Eth | IPv4 | UDP | BTH(op 0x2A UC RDMA WRITE Only) | RETH
 *           | payload | pad | ICRC
 *  control: Eth | IPv4 | UDP | BTH(op 0x24 UC SEND Only) | SDR control message
 *           | pad | ICRC
 *
 * All multi-byte header fields are big-endian on the wire; the ICRC is
 * transmitted least-significant byte first (as Ethernet's FCS), see
 * sdr_icrc_compute().
 */
#ifndef SDR_WIRE_H
#define SDR_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "sdr_scheme.h" /* enum sdr_ec_code, SDR_EC_K_MAX, SDR_EC_M_MAX */

#ifdef __cplusplus
extern "C" {
#endif

/* ---- constants ---- */
#define SDR_ETH_HLEN 14
#define SDR_IPV4_HLEN 20 /* we emit no options; the parser skips options */
#define SDR_UDP_HLEN 8
#define SDR_BTH_LEN 12
#define SDR_RETH_LEN 16
#define SDR_IMM_LEN 4
#define SDR_ICRC_LEN 4
#define SDR_ROCE_UDP_PORT 4791
#define SDR_ETHERTYPE_IPV4 0x0800
#define SDR_ETHERTYPE_ARP 0x0806

/** Offset of the payload in a data packet we build (no IP options) that
 *  carries an immediate (opcode 0x2B). */
#define SDR_DATA_HDR_LEN \
	(SDR_ETH_HLEN + SDR_IPV4_HLEN + SDR_UDP_HLEN + SDR_BTH_LEN + SDR_RETH_LEN + SDR_IMM_LEN)
/** Offset of the payload in a data packet of a message without immediate
 *  (opcode 0x2A: no ImmDt). */
#define SDR_WRITE_HDR_LEN (SDR_DATA_HDR_LEN - SDR_IMM_LEN)
/** Offset of the control message in a control packet we build. */
#define SDR_CTRL_HDR_LEN (SDR_ETH_HLEN + SDR_IPV4_HLEN + SDR_UDP_HLEN + SDR_BTH_LEN)

/* BTH opcodes (IBTA: UC class = 0x20) */
#define SDR_OP_UC_SEND_ONLY 0x24
#define SDR_OP_UC_WRITE_ONLY 0x2A     /**< data of a message whose user immediate is 0 */
#define SDR_OP_UC_WRITE_ONLY_IMM 0x2B /**< data of a message with a user immediate */

/* BTH byte 1 flags */
#define SDR_BTH_SE 0x80 /**< set on the last data packet of a message */
#define SDR_BTH_MIGREQ 0x40
#define SDR_BTH_PAD_SHIFT 4 /**< PadCnt, bits 5..4 */

#define SDR_PKEY_DEFAULT 0xFFFF
#define SDR_QPN_MASK 0xFFFFFFu
#define SDR_PSN_MASK 0xFFFFFFu

/* UDP source port = flow entropy in [49152, 65535] */
#define SDR_UDP_SPORT_BASE 0xC000

/* ---- immediate: msg_id 31..22 | pkt_offset 21..4 | user-imm nibble 3..0 ---- */
#define SDR_IMM_MSG_BITS 10
#define SDR_IMM_OFF_BITS 18
#define SDR_IMM_FRAG_BITS 4
#define SDR_MAX_MSGS (1u << SDR_IMM_MSG_BITS) /**< 1024 slots per QP */
#define SDR_MAX_PKTS (1u << SDR_IMM_OFF_BITS) /**< packets per message */
/** The user's 32-bit immediate travels as 8 nibbles; packet p carries
 *  nibble (p % 8), least significant nibble first. Messages of fewer than 8
 *  packets add zero-length "immediate-only" packets for offsets npkts..7.
 *  A user immediate of 0 is the absent immediate: such a message travels as
 *  opcode 0x2A packets (no ImmDt, position from the VA), each of which says
 *  "the immediate is 0", and has no immediate-only packets. */
#define SDR_IMM_NIBBLES 8

static inline uint32_t sdr_imm_pack(uint32_t msg_id, uint32_t pkt_off, uint32_t frag)
{
	return ((msg_id & (SDR_MAX_MSGS - 1)) << 22) | ((pkt_off & (SDR_MAX_PKTS - 1)) << 4) |
	       (frag & 0xF);
}
static inline uint32_t sdr_imm_msg_id(uint32_t imm)
{
	return imm >> 22;
}
static inline uint32_t sdr_imm_pkt_off(uint32_t imm)
{
	return (imm >> 4) & (SDR_MAX_PKTS - 1);
}
static inline uint32_t sdr_imm_frag(uint32_t imm)
{
	return imm & 0xF;
}
/** Nibble of the user immediate carried by packet @p pkt_off. */
static inline uint32_t sdr_user_imm_nibble(uint32_t user_imm, uint32_t pkt_off)
{
	return (user_imm >> (4 * (pkt_off % SDR_IMM_NIBBLES))) & 0xF;
}

/* ---- generations: each SDR QP owns a block of G consecutive QPNs ---- */
/** Message sequence number n (counted from 0 per direction after connect)
 *  maps to slot n % 1024 and generation (n / 1024) % G. */
static inline uint32_t sdr_seq_msg_id(uint32_t seq)
{
	return seq & (SDR_MAX_MSGS - 1);
}
static inline uint32_t sdr_seq_gen(uint32_t seq, uint32_t generations)
{
	return (seq >> SDR_IMM_MSG_BITS) & (generations - 1);
}

/* ---- data-packet PSN: the high bits of the message sequence number ----
 * A data packet's PSN is seq >> 10 (22 significant bits of the 24): with
 * msg_id (seq % 1024, in the immediate) the packet names its full 32-bit
 * message number, so a late packet can never be placed into a later use
 * of the same slot and generation (docs/wire-format.md §4). */
static inline uint32_t sdr_seq_psn(uint32_t seq)
{
	return seq >> SDR_IMM_MSG_BITS;
}
/** The message number a data packet names: its PSN and its msg_id (from
 *  the ImmDt of a 0x2B packet, from the VA of a 0x2A one). */
static inline uint32_t sdr_psn_seq(uint32_t psn, uint32_t msg_id)
{
	return (psn << SDR_IMM_MSG_BITS) | (msg_id & (SDR_MAX_MSGS - 1));
}

/* ---- addresses of one endpoint ---- */
struct sdr_l2l3 {
	uint8_t src_mac[6];
	uint8_t dst_mac[6];
	uint32_t src_ip; /**< host byte order */
	uint32_t dst_ip; /**< host byte order */
	uint16_t udp_sport;
	uint8_t ttl; /**< 0 means 64 */
	uint8_t dscp;
};

/* ---- data packet ---- */
struct sdr_data_hdr {
	uint32_t dest_qpn; /**< 24 bit: receiver block base + generation */
	uint32_t psn;      /**< 24 bit */
	uint64_t va;       /**< msg_id * M + pkt_off * MTU */
	uint32_t rkey;
	uint32_t dma_len; /**< payload bytes in this packet (0 for imm-only) */
	uint32_t imm;     /**< host order; sent big-endian (0x2B only) */
	uint8_t se;       /**< last data packet of the message */
	uint8_t no_imm;   /**< 1: a packet of a message whose user immediate is 0:
	                        opcode 0x2A, no ImmDt (imm is not sent) */
};

/* ---- frame and message sizes (one definition: the firmware's pacers and
 * buffers, the benchmarks and the models all count with these) ---- */
/** Bytes of a data packet carrying @p payload bytes, Ethernet header to ICRC
 *  (no preamble, FCS or gap): headers (SDR_DATA_HDR_LEN with @p with_imm,
 *  opcode 0x2B; SDR_WRITE_HDR_LEN without, 0x2A), payload, its pad to 4
 *  bytes, ICRC. What sdr_build_data_hdr() returns and what the pacers take
 *  tokens for; with @p with_imm, the largest data frame of a payload size. */
uint32_t sdr_wire_data_frame_bytes(uint32_t payload, int with_imm);
/** Bytes of a control packet carrying a control message of @p msg_len bytes
 *  (SDR_CTRL_HDR_LEN, message, pad to 4, ICRC): what sdr_build_ctrl_hdr()
 *  returns. */
uint32_t sdr_wire_ctrl_frame_bytes(uint32_t msg_len);
/** Data packets of a message of @p len bytes at @p mtu: ceil(len / mtu) and
 *  at least 1; with a user immediate (@p with_imm: it is not 0) at least
 *  SDR_IMM_NIBBLES (a shorter message is padded with immediate-only
 *  packets, one nibble of the 32-bit immediate each). @p mtu 0 gives 0. */
uint64_t sdr_wire_msg_pkts(uint64_t len, uint32_t mtu, int with_imm);
/** Immediate-only packets of a message of @p npkts data packets: the
 *  offsets npkts .. 7 when it carries a user immediate, else none. */
static inline uint32_t sdr_wire_imm_only_pkts(uint64_t npkts, int with_imm)
{
	return with_imm && npkts < SDR_IMM_NIBBLES ? SDR_IMM_NIBBLES - (uint32_t)npkts : 0;
}

/** The headers of one sender's frames to one peer that never change
 *  (Ethernet, IPv4 but its total length and checksum, UDP but its length,
 *  the BTH's P_Key and reserved bytes), built once (sdr_hdr_tmpl_init()):
 *  a frame's headers are a copy of it and the frame's own fields
 *  (sdr_build_*_hdr_t(), the same bytes as sdr_build_*_hdr()). */
struct sdr_hdr_tmpl {
	uint8_t b[SDR_CTRL_HDR_LEN];
	uint32_t ip_sum; /**< 16-bit sum of the IPv4 header with total length and
	                      checksum 0 (the checksum follows the length) */
};
void sdr_hdr_tmpl_init(struct sdr_hdr_tmpl *t, const struct sdr_l2l3 *a);

/** Offset of the payload in a data packet built from @p h. */
static inline size_t sdr_data_hdr_len(const struct sdr_data_hdr *h)
{
	return h->no_imm ? SDR_WRITE_HDR_LEN : SDR_DATA_HDR_LEN;
}

/**
 * Write the headers of a data packet into @p buf (room for
 * SDR_DATA_HDR_LEN bytes): opcode 0x2B, or 0x2A with @c h->no_imm. The
 * payload then goes at buf + sdr_data_hdr_len(h), followed by the pad and
 * the ICRC that sdr_pkt_finish() writes.
 * @return total frame length (headers + payload + pad + ICRC).
 */
size_t sdr_build_data_hdr(uint8_t *buf, const struct sdr_l2l3 *a, const struct sdr_data_hdr *h);
/** The same from a template of @p a (sdr_hdr_tmpl_init()). */
size_t sdr_build_data_hdr_t(uint8_t *buf, const struct sdr_hdr_tmpl *t,
			    const struct sdr_data_hdr *h);

/**
 * Write headers of a control packet (UC SEND Only) for a control message of
 * @p msg_len bytes; the message goes at buf + SDR_CTRL_HDR_LEN.
 * @return total frame length.
 */
size_t sdr_build_ctrl_hdr(uint8_t *buf, const struct sdr_l2l3 *a, uint32_t dest_qpn, uint32_t psn,
			  size_t msg_len);
/** The same from a template (sdr_hdr_tmpl_init()). */
size_t sdr_build_ctrl_hdr_t(uint8_t *buf, const struct sdr_hdr_tmpl *t, uint32_t dest_qpn,
			    uint32_t psn, size_t msg_len);

/**
 * Zero the pad bytes and write the ICRC of a frame built by the functions
 * above (frame length @p frame_len as they returned), in one CRC pass
 * (sdr_icrc_inplace()). With @p icrc == 0 the ICRC field is written as
 * zero (benchmarks only; receivers configured to verify will drop such
 * packets).
 */
void sdr_pkt_finish(uint8_t *buf, size_t frame_len, int icrc);

/**
 * RoCEv2 ICRC of a frame (Ethernet header included in @p frame, ICRC field
 * excluded from @p len_without_icrc): CRC-32 (reflected, as Ethernet and
 * zlib) over 8 bytes of 0xFF, the IPv4 header with TOS, TTL and checksum
 * set to all ones, the UDP header with checksum all ones, the BTH with its
 * byte 4 (FECN/BECN/resv6) set to all ones, and the rest of the packet.
 * Returns the CRC as a number; on the wire it is stored LSB first.
 */
uint32_t sdr_icrc_compute(const uint8_t *frame, size_t len_without_icrc);

/**
 * The same ICRC as sdr_icrc_compute(), in ONE CRC pass over the frame
 * itself: the 8 bytes before the IPv4 header (the end of the Ethernet
 * header) stand in for the LRH and the masked fields are set to ones for
 * the duration of the call; every byte is restored before it returns, so
 * the frame is unchanged (it must be writable and not read by anyone else
 * meanwhile). sdr_icrc_compute() is the reference it is tested against.
 */
uint32_t sdr_icrc_inplace(uint8_t *frame, size_t len_without_icrc);

/** The CRC-32 (reflected 0xEDB88320, as crc32_gzip_refl) that
 *  sdr_icrc_inplace() runs over a frame: the implementation
 *  sdr_icrc_select() chose, by default ISA-L's dispatched crc32_gzip_refl
 *  (see sdr_wire_icrc.c). sdr-perf's bound runs the same function. */
uint32_t sdr_icrc_crc32(uint32_t crc, const uint8_t *buf, size_t len);

/** Choose the implementation of sdr_icrc_crc32() for the whole process,
 *  before any thread computes an ICRC: "isal" or "auto" (ISA-L's
 *  dispatcher: AVX-512 where the CPU has it), "by8" (ISA-L's 128-bit
 *  PCLMUL CRC; x86-64 with PCLMULQDQ only). Same CRC, other speed. @return 0, -EINVAL (unknown name) or -ENOTSUP (by8
 *  not available on this CPU or build). */
int sdr_icrc_select(const char *name);

/** The name ("by8" or "isal") of the implementation in use. */
const char *sdr_icrc_selected(void);

/* ---- ECN (IPv4 TOS bits 1..0; docs/wire-format.md §1) ---- */
#define SDR_ECN_NOT_ECT 0 /**< not ECN-capable (control frames, cc off) */
#define SDR_ECN_ECT1 1
#define SDR_ECN_ECT0 2 /**< what a QP with congestion control sends data with */
#define SDR_ECN_CE 3   /**< congestion experienced: a queue marked it */
#define SDR_ECN_MASK 3

/** Set the ECN bits of the IPv4 header of a frame built by the functions
 *  above to @p ecn (SDR_ECN_*), updating the header checksum (RFC 1624).
 *  The ICRC does not cover the TOS byte (sdr_icrc_compute()): before or
 *  after sdr_pkt_finish() alike. */
void sdr_ip_set_ecn(uint8_t *frame, uint8_t ecn);

/** Set the UDP source port of a frame built by the functions above (the
 *  path of a sprayed packet, docs/multipath.md). The UDP checksum is 0 and
 *  the IPv4 header does not cover it; the ICRC does: call it before
 *  sdr_pkt_finish(). */
void sdr_udp_set_sport(uint8_t *frame, uint16_t sport);

/* ---- parse ---- */

/** Why a frame was rejected. One counter per reason in the firmware. */
enum sdr_parse_result {
	SDR_PARSE_OK_DATA = 0,
	SDR_PARSE_OK_CTRL,
	SDR_PARSE_ARP,       /**< ARP frame (firmware may answer it) */
	SDR_PARSE_TRUNCATED, /**< shorter than its headers claim */
	SDR_PARSE_NOT_IPV4,  /**< other ethertype */
	SDR_PARSE_IP_BAD,    /**< bad version/IHL/total length/checksum/fragment */
	SDR_PARSE_NOT_UDP,
	SDR_PARSE_NOT_ROCE, /**< UDP but not dst port 4791 */
	SDR_PARSE_BAD_BTH,  /**< unknown opcode, TVer != 0, bad pad */
	SDR_PARSE_BAD_ICRC,
	SDR_PARSE_BAD_LEN, /**< DMA length disagrees with the payload */
	SDR_PARSE__MAX
};

/** Result of parsing one frame. Pointers point into the caller's buffer. */
struct sdr_parsed {
	uint8_t src_mac[6];
	uint8_t dst_mac[6];
	uint32_t src_ip, dst_ip; /**< host byte order */
	uint16_t udp_sport;
	uint8_t opcode;
	uint8_t se;
	uint8_t ecn; /**< the IPv4 TOS's ECN bits (SDR_ECN_*): CE = marked on the way */
	uint32_t dest_qpn, psn;
	uint32_t icrc_off; /**< offset of the ICRC in the frame */
	/* data packets (sdr_parse_reth()) */
	uint64_t va;
	uint32_t rkey, dma_len;
	uint32_t imm; /**< ImmDt (0x2B); 0 for 0x2A */
	/* the packet's place in its receiver's window: from the ImmDt (0x2B,
	 * sdr_parse_reth()) or from the VA (0x2A, sdr_data_locate()) */
	uint32_t msg_id, pkt_off;
	uint8_t imm_nib;  /**< 0x2B: nibble pkt_off % 8 of the user immediate */
	uint8_t imm_zero; /**< 0x2A: the user immediate is 0 (all nibbles) */
	/* payload (data) or control message (ctrl), pad stripped */
	const uint8_t *payload;
	uint32_t payload_len;
};

/** The ImmDt of a 0x2B packet and what it names: msg_id, pkt_off, imm_nib
 *  (sdr_parse_reth(); tests that make packets by hand use it too). */
static inline void sdr_parsed_set_imm(struct sdr_parsed *p, uint32_t imm)
{
	p->opcode = SDR_OP_UC_WRITE_ONLY_IMM;
	p->imm = imm;
	p->msg_id = sdr_imm_msg_id(imm);
	p->pkt_off = sdr_imm_pkt_off(imm);
	p->imm_nib = (uint8_t)sdr_imm_frag(imm);
	p->imm_zero = 0;
}

/**
 * Parse and validate a frame of @p len bytes. @p verify_icrc selects
 * whether the ICRC is checked. Never reads outside [frame, frame+len).
 * The three steps below in one call, with the reference ICRC
 * (sdr_icrc_compute(): the frame stays const).
 */
enum sdr_parse_result sdr_parse(const uint8_t *frame, size_t len, int verify_icrc,
				struct sdr_parsed *out);

/**
 * Step 1: Ethernet, IPv4, UDP and BTH checked, the payload or control
 * message located (and the pad stripped); nothing is verified by the ICRC
 * yet and no RETH field is read. @return SDR_PARSE_OK_DATA /
 * SDR_PARSE_OK_CTRL (step 2 next), SDR_PARSE_ARP or a rejection. A receiver
 * may look at the headers here (and drop the frame: dropping is all an
 * unverified header can make it do) before it pays for the ICRC.
 */
enum sdr_parse_result sdr_parse_hdr(const uint8_t *frame, size_t len, struct sdr_parsed *out);
/**
 * Step 2: is the ICRC of a frame step 1 accepted right? One CRC pass over
 * the frame in place (sdr_icrc_inplace(); the frame is restored).
 * @return 1 when it matches.
 */
int sdr_parse_icrc_ok(uint8_t *frame, const struct sdr_parsed *p);
/**
 * Step 3 (data packets, after step 2): read the RETH (and the ImmDt of a
 * 0x2B packet: msg_id, pkt_off, imm_nib) and check the DMA length against
 * the payload. @return SDR_PARSE_OK_DATA or SDR_PARSE_BAD_LEN.
 */
enum sdr_parse_result sdr_parse_reth(struct sdr_parsed *p);

/**
 * Place a data packet in its receiver's window of slots of @p max_msg (M)
 * bytes at @p mtu: for a 0x2A packet, msg_id = VA / M and pkt_off =
 * (VA mod M) / MTU. @return 0, or -1 when the VA is not of that form
 * (not a multiple of the MTU, or past slot 1023): bad_va. A 0x2B packet is
 * placed by its ImmDt already (its VA is checked against it on placement).
 */
int sdr_data_locate(struct sdr_parsed *p, uint32_t mtu, uint32_t max_msg);

/** Static name of a parse result ("truncated", "bad_icrc", ...). */
const char *sdr_parse_result_name(enum sdr_parse_result r);

/* ---- SDR control messages (payload of UC SEND Only) ---- */
#define SDR_CTRL_MAGIC 0x53445243u /* "SDRC" */
#define SDR_CTRL_VERSION 2         /* 2: 64-bit key in the header, ABORT */

enum sdr_ctrl_type {
	SDR_CTRL_CTS = 1,    /**< receiver -> sender: receive slots posted */
	SDR_CTRL_ACK = 2,    /**< receiver -> sender: SR acknowledgements */
	SDR_CTRL_NACK = 3,   /**< receiver -> sender: EC chunks that cannot be decoded */
	SDR_CTRL_PARITY = 4, /**< sender -> receiver: one packet of an EC parity chunk */
	SDR_CTRL_ABORT = 5,  /**< sender -> receiver: a send ended before its data went out */
	SDR_CTRL_CLOSED = 6, /**< a destroyed QP's DPU -> its peer: the QP is gone (tombstone) */
	SDR_CTRL__MAX
};

#define SDR_CLOSED_FULL_BITS 1024 /**< receives a QP-CLOSED reports (SDR_MAX_MSGS) */

/** Header of a control message, 20 bytes on the wire (big-endian). */
struct sdr_ctrl_hdr {
	uint32_t magic;   /**< SDR_CTRL_MAGIC */
	uint8_t version;  /**< SDR_CTRL_VERSION */
	uint8_t type;     /**< enum sdr_ctrl_type */
	uint16_t count;   /**< entries that follow */
	uint32_t src_qpn; /**< sender's QP block base */
	uint64_t key;     /**< the destination QP's control key (struct sdr_qp_info) */
};
#define SDR_CTRL_HDR_WIRE 20
#define SDR_CTRL_KEY_OFF 12 /**< offset of the key in the control message */

/** Write the destination QP's control @p key into the header of the
 *  control message at @p msg (the encoders below leave it zero). */
void sdr_ctrl_key_put(uint8_t *msg, uint64_t key);

/** CTS entry, 8 bytes on the wire: receive number @c seq (per QP, from 0)
 *  was posted with a buffer of @c length bytes. */
struct sdr_cts_entry {
	uint32_t seq;
	uint32_t length;
};
#define SDR_CTS_ENTRY_WIRE 8
#define SDR_CTS_MAX_ENTRIES 64

/** Encode a CTS message; returns its length in bytes (room needed:
 *  SDR_CTRL_HDR_WIRE + n * SDR_CTS_ENTRY_WIRE). */
size_t sdr_ctrl_cts_encode(uint8_t *msg, uint32_t src_qpn, const struct sdr_cts_entry *e,
			   uint16_t n);

/** ACK entry (Selective Repeat), 28 bytes on the wire: for message
 *  (receive number) @c seq, every chunk below @c cum has arrived, and bit i
 *  of @c bits (byte i / 8, bit i % 8, least significant first) says whether
 *  chunk cum + off + i has arrived (@c off: 24 bits, 0 for the first window;
 *  a receiver sends several entries for a message whose received chunks
 *  reach past one window). @c flags: SDR_ACK_F_FULL = the receive is
 *  complete (every chunk and the whole immediate; the sender may complete
 *  the send); SDR_ACK_F_CLOSED = the receive was completed by its host
 *  before it was full (the sender stops and reports an error).
 *  A FULL entry has no window: its first 4 window bytes carry @c lost
 *  instead (big-endian), the number of the message's data chunks that did
 *  not arrive on their first transmission as far as the receiver knows
 *  (recovered from parity, or missing when its EC fallback timeout first
 *  expired); 0 when unknown (SR messages, older firmware). */
struct sdr_ack_entry {
	uint32_t seq;
	uint32_t cum;
	uint32_t off; /**< window start - cum, < 2^24 */
	uint8_t flags;
	uint8_t bits[16];
	uint32_t lost; /**< FULL only: encoded when non-zero over bits[0..3];
	                     decoded from them (other entries: 0) */
};
#define SDR_ACK_OFF_MAX 0xFFFFFFu
#define SDR_ACK_ENTRY_WIRE 28
#define SDR_ACK_MAX_ENTRIES 32
#define SDR_ACK_WINDOW_BITS 128
#define SDR_ACK_F_FULL 0x01
#define SDR_ACK_F_CLOSED 0x02
#define SDR_ACK_F_MASK 0x03

/** Encode an ACK message; returns its length in bytes (room needed:
 *  SDR_CTRL_HDR_WIRE + n * SDR_ACK_ENTRY_WIRE), or 0 when @p n exceeds
 *  SDR_ACK_MAX_ENTRIES or an entry's @c off exceeds SDR_ACK_OFF_MAX. */
size_t sdr_ctrl_ack_encode(uint8_t *msg, uint32_t src_qpn, const struct sdr_ack_entry *e,
			   uint16_t n);
/** Decode ACK entry @p i of a message sdr_ctrl_hdr_decode() accepted.
 *  @return 0, or -1 when the entry has unknown flags (the entry must then
 *  be ignored). */
int sdr_ctrl_ack_entry_decode(const uint8_t *msg, uint16_t i, struct sdr_ack_entry *e);

/** ECN echo of an ACK (docs/wire-format.md §6 "ECN echo"): the receiver's
 *  running counts, for the QP, of the data packets that arrived and of
 *  those that arrived marked CE (both mod 2^32, from 0 when the QP was
 *  created). 12 bytes after the ACK's last entry: tag SDR_ACK_ECHO_TAG, a
 *  version (1), two bytes 0, @c ce, @c pkts (big-endian). Running counts
 *  rather than counts since the previous ACK: a lost ACK loses no marks,
 *  the next one's difference carries them. A peer that does not know the
 *  trailer ignores it (sdr_ctrl_hdr_decode() takes bytes past the entries);
 *  an ACK without it (an older receiver) has no echo, and a sender's
 *  congestion control then runs on delay alone. */
struct sdr_ack_echo {
	uint32_t ce;   /**< data packets that arrived CE-marked */
	uint32_t pkts; /**< data packets that arrived */
};
#define SDR_ACK_ECHO_WIRE 12
#define SDR_ACK_ECHO_TAG 0xEC
#define SDR_ACK_ECHO_VERSION 1

/** sdr_ctrl_ack_encode() followed by the ECN echo @p echo. @return the
 *  length (room: SDR_CTRL_HDR_WIRE + n * SDR_ACK_ENTRY_WIRE +
 *  SDR_ACK_ECHO_WIRE), or 0 as sdr_ctrl_ack_encode(). */
size_t sdr_ctrl_ack_encode_echo(uint8_t *msg, uint32_t src_qpn, const struct sdr_ack_entry *e,
				uint16_t n, const struct sdr_ack_echo *echo);
/** The ECN echo of an ACK message of @p len bytes that sdr_ctrl_hdr_decode()
 *  accepted (@p h). @return 0 with @p echo filled, or -1 when it has none
 *  (no room after the entries, another tag or version, reserved bytes not
 *  0): the sender then has no ECN feedback from this ACK. */
int sdr_ctrl_ack_echo_decode(const uint8_t *msg, size_t len, const struct sdr_ctrl_hdr *h,
			     struct sdr_ack_echo *echo);

/** A hole report of an ACK (docs/wire-format.md §6 "Holes"): chunk @c chunk
 *  of message @c seq has not arrived whole, but packets after a missing one
 *  have. Every packet of the chunk below @c first (a packet index within
 *  the chunk) has arrived; bit i of @c have (least significant first) says
 *  whether packet first + i arrived; of packets at or past first + 64 the
 *  entry says nothing. The sender retransmits only what the entry does not
 *  show arrived, and takes the missing packets below the last one shown for
 *  lost a reordering window and an ACK period after the report came (the
 *  packets of a chunk leave in order on one path). 20 bytes on the wire: seq, chunk, first (16 bit), two
 *  zero bytes, have (64 bit), big-endian. They follow the ECN echo, after a
 *  4-byte header: tag SDR_ACK_HOLES_TAG, version 1, the entry count
 *  (1..SDR_ACK_HOLES_MAX), a zero byte. Older senders ignore them as they
 *  ignore the echo. */
struct sdr_ack_hole {
	uint32_t seq;   /**< message (receive number) */
	uint32_t chunk; /**< chunk of the message */
	uint16_t first; /**< packets of the chunk below this one have arrived (< 1024) */
	uint64_t have;  /**< bit i: packet first + i of the chunk has arrived */
};
#define SDR_ACK_HOLE_WIRE 20
#define SDR_ACK_HOLES_HDR_WIRE 4
#define SDR_ACK_HOLES_TAG 0x48 /* 'H' */
#define SDR_ACK_HOLES_VERSION 1
#define SDR_ACK_HOLES_MAX 16
#define SDR_ACK_HOLE_FIRST_MAX 1023 /* packets per chunk are at most 1024 */

/** sdr_ctrl_ack_encode_echo() followed, when @p nh > 0, by @p nh hole
 *  reports. @return the length (room: SDR_CTRL_HDR_WIRE + n *
 *  SDR_ACK_ENTRY_WIRE + SDR_ACK_ECHO_WIRE + SDR_ACK_HOLES_HDR_WIRE + nh *
 *  SDR_ACK_HOLE_WIRE), or 0 as sdr_ctrl_ack_encode(), or when @p nh exceeds
 *  SDR_ACK_HOLES_MAX, an entry's @c first exceeds SDR_ACK_HOLE_FIRST_MAX or
 *  its @c have has bit 0 set (what sdr_ctrl_ack_hole_decode() refuses). */
size_t sdr_ctrl_ack_encode_holes(uint8_t *msg, uint32_t src_qpn, const struct sdr_ack_entry *e,
				 uint16_t n, const struct sdr_ack_echo *echo,
				 const struct sdr_ack_hole *hole, unsigned nh);
/** The hole reports of an ACK message of @p len bytes that
 *  sdr_ctrl_hdr_decode() accepted (@p h): @return their number (0: none,
 *  also when the ACK has no ECN echo), or -1 when a trailer with the holes
 *  tag is malformed (cut short, another version, a count of 0 or past
 *  SDR_ACK_HOLES_MAX, entries past the message, a reserved byte not 0). */
int sdr_ctrl_ack_holes_count(const uint8_t *msg, size_t len, const struct sdr_ctrl_hdr *h);
/** Hole report @p i (< sdr_ctrl_ack_holes_count()) of the ACK @p h.
 *  @return 0, or -1 when the entry is malformed (its reserved bytes are
 *  not 0, @c first past SDR_ACK_HOLE_FIRST_MAX, or bit 0 of @c have set:
 *  @c first is the first missing packet) and must be ignored. */
int sdr_ctrl_ack_hole_decode(const uint8_t *msg, const struct sdr_ctrl_hdr *h, unsigned i,
			     struct sdr_ack_hole *x);

/* ---- Erasure coding (reliability EC; docs/wire-format.md "Parity", "NACK") ---- */

/* The parity header's code is an enum sdr_ec_code; k and m are limited by
 * SDR_EC_K_MAX (the NACK bitmap has 64 bits) and SDR_EC_M_MAX
 * (common/sdr_scheme.h). */

/** Parity header, 28 bytes on the wire after the control header (whose
 *  count is 1); the parity bytes follow. The packet carries bytes
 *  [pkt * mtu, min((pkt + 1) * mtu, clen)) of parity chunk @c pidx of
 *  submessage @c sub of message (send number) @c seq. */
struct sdr_parity_hdr {
	uint32_t seq;     /**< message number (the receive's number) */
	uint32_t msg_len; /**< message length in bytes */
	uint32_t imm;     /**< the whole 32-bit user immediate */
	uint8_t code;     /**< enum sdr_ec_code: SDR_EC_RS or SDR_EC_XOR */
	uint8_t k, m;     /**< data / parity chunks per submessage */
	uint8_t flags;    /**< 0 */
	uint16_t sub;     /**< submessage index */
	uint8_t pidx;     /**< parity chunk index, < m */
	uint8_t resv;     /**< 0 */
	uint16_t pkt;     /**< packet index within the parity chunk */
	uint16_t npkt;    /**< packets of the parity chunk = ceil(clen / mtu) */
	uint32_t clen;    /**< coded chunk length of the submessage (bytes) */
};
#define SDR_PARITY_HDR_WIRE 28
/** Offset of the parity bytes in a control message. */
#define SDR_PARITY_DATA_OFF (SDR_CTRL_HDR_WIRE + SDR_PARITY_HDR_WIRE)

/** Encode the control header and parity header of a parity packet at
 *  @p msg; the caller then writes @p h->... payload bytes at
 *  msg + SDR_PARITY_DATA_OFF. @return SDR_PARITY_DATA_OFF, or 0 when a
 *  field is out of its wire range (code, k, m, pidx >= m, pkt >= npkt,
 *  npkt == 0, flags/resv != 0). */
size_t sdr_ctrl_parity_encode(uint8_t *msg, uint32_t src_qpn, const struct sdr_parity_hdr *h);

/** Decode the parity header of a PARITY message that sdr_ctrl_hdr_decode()
 *  accepted (it guarantees the header is there). @p data / @p dlen: the
 *  parity bytes. Checks only what needs no QP context: known code,
 *  1 <= k <= SDR_EC_K_MAX, 1 <= m <= SDR_EC_M_MAX, pidx < m, pkt < npkt,
 *  flags and resv 0, clen >= 1, msg_len >= 1, dlen >= 1.
 *  @return 0, or -1 (the packet must be dropped). */
int sdr_ctrl_parity_decode(const uint8_t *msg, size_t len, struct sdr_parity_hdr *h,
			   const uint8_t **data, uint32_t *dlen);

/** NACK entry, 16 bytes on the wire: of message @c seq, submessage @c sub
 *  (of @c k data chunks) cannot be decoded; bit i of @c missing (least
 *  significant first) = data chunk sub * k + i is missing.
 *  SDR_NACK_F_IMM: the immediate-only packets (messages of fewer than 8
 *  packets and a non-zero immediate) are missing too; a sender whose
 *  message has none ignores the flag. */
struct sdr_nack_entry {
	uint32_t seq;
	uint16_t sub;
	uint8_t k;
	uint8_t flags;
	uint64_t missing;
};
#define SDR_NACK_ENTRY_WIRE 16
#define SDR_NACK_MAX_ENTRIES 64
#define SDR_NACK_F_IMM 0x01
#define SDR_NACK_F_MASK 0x01

/** Encode a NACK message; returns its length (room: SDR_CTRL_HDR_WIRE +
 *  n * SDR_NACK_ENTRY_WIRE), or 0 when @p n exceeds SDR_NACK_MAX_ENTRIES
 *  or an entry has k out of [1, SDR_EC_K_MAX] or unknown flags. */
size_t sdr_ctrl_nack_encode(uint8_t *msg, uint32_t src_qpn, const struct sdr_nack_entry *e,
			    uint16_t n);
/** Decode NACK entry @p i of a message sdr_ctrl_hdr_decode() accepted.
 *  @return 0, or -1 (k out of range, unknown flags, bits at or past k):
 *  ignore the entry. */
int sdr_ctrl_nack_entry_decode(const uint8_t *msg, uint16_t i, struct sdr_nack_entry *e);

/** ABORT entry, 12 bytes on the wire: send @c seq ended with @c status (a
 *  negative errno; today only -EMSGSIZE: the send is @c length bytes, more
 *  than the posted receive) before any of its data went out; the receiver
 *  completes receive @c seq with that status. */
struct sdr_abort_entry {
	uint32_t seq;
	int32_t status;
	uint32_t length;
};
#define SDR_ABORT_ENTRY_WIRE 12
#define SDR_ABORT_MAX_ENTRIES 64

/** Encode an ABORT message; returns its length, or 0 when @p n exceeds
 *  SDR_ABORT_MAX_ENTRIES. */
size_t sdr_ctrl_abort_encode(uint8_t *msg, uint32_t src_qpn, const struct sdr_abort_entry *e,
			     uint16_t n);
void sdr_ctrl_abort_entry_decode(const uint8_t *msg, uint16_t i, struct sdr_abort_entry *e);

/** QP-CLOSED, one entry of 136 bytes (docs/wire-format.md §6): the QP
 *  that sent it (src_qpn) was destroyed by its host; a packet of its peer
 *  reached its tombstone. @c recv_next is the QP's next receive number at
 *  destroy (the first never posted); bit i of @c full (byte i / 8, bit
 *  i % 8) says that receive recv_next - 1024 + i completed FULL, so that
 *  the peer completes those sends as delivered and fails the others. */
struct sdr_closed_msg {
	uint32_t recv_next;
	uint8_t reason; /**< SDR_CLOSED_DESTROYED or SDR_CLOSED_DETACHED */
	uint8_t full[SDR_CLOSED_FULL_BITS / 8];
};
#define SDR_CLOSED_DESTROYED 1 /**< its host destroyed it (QP_DESTROY) */
#define SDR_CLOSED_DETACHED 2  /**< its host detached or died */
#define SDR_CLOSED_ENTRY_WIRE 136

/** Encode a QP-CLOSED message (room: SDR_CTRL_HDR_WIRE +
 *  SDR_CLOSED_ENTRY_WIRE); returns its length, or 0 for an unknown reason. */
size_t sdr_ctrl_closed_encode(uint8_t *msg, uint32_t src_qpn, const struct sdr_closed_msg *c);
/** Decode the entry of a QP-CLOSED message sdr_ctrl_hdr_decode() accepted.
 *  @return 0, or -1 (unknown reason, reserved bytes not zero). */
int sdr_ctrl_closed_decode(const uint8_t *msg, struct sdr_closed_msg *c);
/** Did receive @p seq complete FULL by @p c? (0 outside its 1024 receives) */
static inline int sdr_closed_full(const struct sdr_closed_msg *c, uint32_t seq)
{
	uint32_t i = seq - (c->recv_next - SDR_CLOSED_FULL_BITS);

	return i < SDR_CLOSED_FULL_BITS && (c->full[i / 8] >> (i % 8)) & 1;
}

/** Decode a control header; returns 0, or -1 when the message is too short,
 *  has the wrong magic/version, an unknown type, or (CTS, ACK, NACK, ABORT,
 *  CLOSED) more entries than allowed (64 CTS, 32 ACK, 64 NACK, 64 ABORT, 1
 *  CLOSED) or than fit @p len (CLOSED: exactly 1), or
 *  (PARITY) a count other than 1 or no room for the parity header and at
 *  least one parity byte. The entries start at msg + SDR_CTRL_HDR_WIRE. */
int sdr_ctrl_hdr_decode(const uint8_t *msg, size_t len, struct sdr_ctrl_hdr *h);
void sdr_ctrl_cts_entry_decode(const uint8_t *msg, uint16_t i, struct sdr_cts_entry *e);

/* ---- ARP (the firmware answers requests for its own IP) ---- */
/** If @p frame is an ARP request for @p my_ip, write the reply into
 *  @p reply (>= 42 bytes) and return its length; else return 0. */
size_t sdr_arp_reply(const uint8_t *frame, size_t len, uint32_t my_ip, const uint8_t my_mac[6],
		     uint8_t *reply);

/* ---- small helpers ---- */
int sdr_parse_mac(const char *s, uint8_t mac[6]); /**< "aa:bb:..", 0 or -1 */
int sdr_parse_ipv4(const char *s, uint32_t *ip);  /**< dotted quad -> host order */
void sdr_format_mac(const uint8_t mac[6], char out[18]);
void sdr_format_ipv4(uint32_t ip, char out[16]);

#ifdef __cplusplus
}
#endif
#endif /* SDR_WIRE_H */
