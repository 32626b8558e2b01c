/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz harness for the untrusted-frame entry points of the wire format
 * (common/sdr_wire_parse.c, sdr_wire_ctl.c): sdr_parse(), the firmware's
 * three steps (sdr_parse_hdr(),
 * sdr_parse_icrc_ok() in place, sdr_parse_reth(): the same verdict, the
 * frame restored), sdr_data_locate(), sdr_ctrl_hdr_decode() / sdr_ctrl_cts_entry_decode() /
 * sdr_ctrl_ack_entry_decode() / sdr_ctrl_ack_echo_decode() /
 * sdr_ctrl_ack_holes_count() / sdr_ctrl_ack_hole_decode() / sdr_ctrl_nack_entry_decode() /
 * sdr_ctrl_parity_decode() and sdr_arp_reply().
 *
 * Out-of-bounds reads are found by ASan (the input lives in a buffer of
 * exactly its size); logic errors by the invariants below, which abort().
 * Random bytes rarely carry a valid IP checksum or ICRC, so every input is
 * also parsed a second time with both checksums repaired: that lets the
 * fuzzer reach the checks behind them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdr_fuzz.h"
#include "sdr_wire.h"

#define FUZZ_ASSERT(cond)                                                                        \
	do {                                                                                     \
		if (!(cond)) {                                                                   \
			fprintf(stderr, "fuzz_parse: invariant failed at %s:%d: %s\n", __FILE__, \
				__LINE__, #cond);                                                \
			abort();                                                                 \
		}                                                                                \
	} while (0)

static int is_ok(enum sdr_parse_result r)
{
	return r == SDR_PARSE_OK_DATA || r == SDR_PARSE_OK_CTRL;
}

/* The hole reports after an ACK's ECN echo: none without the echo; a
 * count only from a well-formed header whose entries lie within the
 * message; -1 only for a trailer with the holes tag; an accepted entry has
 * first <= SDR_ACK_HOLE_FIRST_MAX and bit 0 of have clear, and encodes back
 * to the same 20 bytes (all of them accepted: the whole trailer). */
static void check_ack_holes(const uint8_t *msg, size_t len, const struct sdr_ctrl_hdr *h)
{
	size_t at = SDR_CTRL_HDR_WIRE + (size_t)h->count * SDR_ACK_ENTRY_WIRE + SDR_ACK_ECHO_WIRE;
	enum { ENTRY0 = SDR_CTRL_HDR_WIRE + SDR_ACK_ECHO_WIRE + SDR_ACK_HOLES_HDR_WIRE };
	uint8_t re[ENTRY0 + SDR_ACK_HOLES_MAX * SDR_ACK_HOLE_WIRE];
	struct sdr_ack_hole hs[SDR_ACK_HOLES_MAX];
	struct sdr_ack_echo x;
	int n = sdr_ctrl_ack_holes_count(msg, len, h), all = 1;

	FUZZ_ASSERT(n >= -1 && n <= SDR_ACK_HOLES_MAX);
	if (sdr_ctrl_ack_echo_decode(msg, len, h, &x) != 0) {
		FUZZ_ASSERT(n == 0);
		return;
	}
	if (n == 0) {
		FUZZ_ASSERT(len <= at || msg[at] != SDR_ACK_HOLES_TAG);
		return;
	}
	FUZZ_ASSERT(at < len && msg[at] == SDR_ACK_HOLES_TAG);
	if (n < 0)
		return; /* (a header cut short counts: it has the tag) */
	FUZZ_ASSERT(at + SDR_ACK_HOLES_HDR_WIRE + (size_t)n * SDR_ACK_HOLE_WIRE <= len);
	FUZZ_ASSERT(msg[at + 1] == SDR_ACK_HOLES_VERSION && msg[at + 2] == n && !msg[at + 3]);
	for (int i = 0; i < n; i++) {
		const uint8_t *w = msg + at + SDR_ACK_HOLES_HDR_WIRE +
				   (size_t)i * SDR_ACK_HOLE_WIRE;

		if (sdr_ctrl_ack_hole_decode(msg, h, (unsigned)i, &hs[i]) != 0) {
			all = 0;
			continue;
		}
		FUZZ_ASSERT(hs[i].first <= SDR_ACK_HOLE_FIRST_MAX && !(hs[i].have & 1));
		/* alone, after the decoded echo: the same 20 bytes */
		FUZZ_ASSERT(sdr_ctrl_ack_encode_holes(re, h->src_qpn, NULL, 0, &x, &hs[i], 1) ==
			    ENTRY0 + SDR_ACK_HOLE_WIRE);
		FUZZ_ASSERT(memcmp(re + ENTRY0, w, SDR_ACK_HOLE_WIRE) == 0);
	}
	if (!all)
		return;
	/* every entry accepted: the echo and the whole trailer encode back */
	FUZZ_ASSERT(sdr_ctrl_ack_encode_holes(re, h->src_qpn, NULL, 0, &x, hs, (unsigned)n) ==
		    ENTRY0 + (size_t)n * SDR_ACK_HOLE_WIRE);
	FUZZ_ASSERT(memcmp(re + SDR_CTRL_HDR_WIRE, msg + at - SDR_ACK_ECHO_WIRE,
			   SDR_ACK_ECHO_WIRE + SDR_ACK_HOLES_HDR_WIRE +
				   (size_t)n * SDR_ACK_HOLE_WIRE) == 0);
}

static void check_ctrl(const uint8_t *msg, size_t len)
{
	struct sdr_ctrl_hdr h;
	struct sdr_cts_entry e;

	if (sdr_ctrl_hdr_decode(msg, len, &h) != 0)
		return;
	FUZZ_ASSERT(len >= SDR_CTRL_HDR_WIRE && h.magic == SDR_CTRL_MAGIC);
	FUZZ_ASSERT(h.version == SDR_CTRL_VERSION && h.type > 0 && h.type < SDR_CTRL__MAX);
	if (h.type == SDR_CTRL_NACK) {
		struct sdr_nack_entry n;

		FUZZ_ASSERT(h.count <= SDR_NACK_MAX_ENTRIES);
		FUZZ_ASSERT(SDR_CTRL_HDR_WIRE + (size_t)h.count * SDR_NACK_ENTRY_WIRE <= len);
		for (uint16_t i = 0; i < h.count; i++) {
			if (sdr_ctrl_nack_entry_decode(msg, i, &n))
				continue;
			/* what the sender acts on: k chunks at most, known flags */
			FUZZ_ASSERT(n.k >= 1 && n.k <= SDR_EC_K_MAX);
			FUZZ_ASSERT(!(n.flags & ~SDR_NACK_F_MASK));
			FUZZ_ASSERT(n.k == 64 || !(n.missing >> n.k));
		}
		return;
	}
	if (h.type == SDR_CTRL_ACK) {
		struct sdr_ack_entry a;

		FUZZ_ASSERT(h.count <= SDR_ACK_MAX_ENTRIES);
		FUZZ_ASSERT(SDR_CTRL_HDR_WIRE + (size_t)h.count * SDR_ACK_ENTRY_WIRE <= len);
		for (uint16_t i = 0; i < h.count; i++)
			if (sdr_ctrl_ack_entry_decode(msg, i, &a) == 0)
				FUZZ_ASSERT(!(a.flags & ~SDR_ACK_F_MASK) &&
					    a.off <= SDR_ACK_OFF_MAX);
		/* the ECN echo: only from the 12 bytes after the entries, and
		 * what decodes encodes back byte for byte */
		struct sdr_ack_echo x;
		if (sdr_ctrl_ack_echo_decode(msg, len, &h, &x) == 0) {
			size_t at = SDR_CTRL_HDR_WIRE + (size_t)h.count * SDR_ACK_ENTRY_WIRE;

			FUZZ_ASSERT(at + SDR_ACK_ECHO_WIRE <= len);
			FUZZ_ASSERT(msg[at] == SDR_ACK_ECHO_TAG &&
				    msg[at + 1] == SDR_ACK_ECHO_VERSION);
			uint8_t re[SDR_CTRL_HDR_WIRE + SDR_ACK_ECHO_WIRE];
			FUZZ_ASSERT(sdr_ctrl_ack_encode_echo(re, h.src_qpn, NULL, 0, &x) ==
				    sizeof(re));
			FUZZ_ASSERT(memcmp(re + SDR_CTRL_HDR_WIRE, msg + at, SDR_ACK_ECHO_WIRE) ==
				    0);
		}
		check_ack_holes(msg, len, &h);
		return;
	}
	if (h.type == SDR_CTRL_PARITY) {
		struct sdr_parity_hdr ph;
		const uint8_t *data;
		uint32_t dlen;
		uint8_t re[SDR_PARITY_DATA_OFF];

		FUZZ_ASSERT(h.count == 1 && len > SDR_PARITY_DATA_OFF);
		if (sdr_ctrl_parity_decode(msg, len, &ph, &data, &dlen))
			return;
		FUZZ_ASSERT(data == msg + SDR_PARITY_DATA_OFF && dlen == len - SDR_PARITY_DATA_OFF);
		FUZZ_ASSERT(ph.k >= 1 && ph.k <= SDR_EC_K_MAX && ph.m >= 1 && ph.m <= SDR_EC_M_MAX);
		FUZZ_ASSERT(ph.pidx < ph.m && ph.pkt < ph.npkt && ph.clen && ph.msg_len);
		/* what decode accepts, encode writes back byte for byte */
		FUZZ_ASSERT(sdr_ctrl_parity_encode(re, h.src_qpn, &ph) == SDR_PARITY_DATA_OFF);
		sdr_ctrl_key_put(re, h.key);
		FUZZ_ASSERT(memcmp(re, msg, SDR_PARITY_DATA_OFF) == 0);
		volatile uint8_t x = 0;
		for (uint32_t i = 0; i < dlen; i++) /* ASan: the parity bytes are there */
			x ^= data[i];
		(void)x;
		return;
	}
	if (h.type == SDR_CTRL_ABORT) {
		struct sdr_abort_entry ab;

		FUZZ_ASSERT(h.count <= SDR_ABORT_MAX_ENTRIES);
		FUZZ_ASSERT(SDR_CTRL_HDR_WIRE + (size_t)h.count * SDR_ABORT_ENTRY_WIRE <= len);
		for (uint16_t i = 0; i < h.count; i++) /* ASan: every promised entry is there */
			sdr_ctrl_abort_entry_decode(msg, i, &ab);
		return;
	}
	if (h.type == SDR_CTRL_CLOSED) {
		struct sdr_closed_msg c;
		uint8_t re[SDR_CTRL_HDR_WIRE + SDR_CLOSED_ENTRY_WIRE];

		FUZZ_ASSERT(h.count == 1);
		FUZZ_ASSERT(SDR_CTRL_HDR_WIRE + SDR_CLOSED_ENTRY_WIRE <= len);
		if (sdr_ctrl_closed_decode(msg, &c))
			return;
		/* what decode accepts, encode writes back byte for byte */
		FUZZ_ASSERT(sdr_ctrl_closed_encode(re, h.src_qpn, &c) == sizeof(re));
		sdr_ctrl_key_put(re, h.key);
		FUZZ_ASSERT(memcmp(re, msg, sizeof(re)) == 0);
		return;
	}
	if (h.type != SDR_CTRL_CTS)
		return;
	FUZZ_ASSERT(h.count <= SDR_CTS_MAX_ENTRIES);
	FUZZ_ASSERT(SDR_CTRL_HDR_WIRE + (size_t)h.count * SDR_CTS_ENTRY_WIRE <= len);
	/* decode reads every promised entry: ASan objects if decode lied */
	for (uint16_t i = 0; i < h.count; i++)
		sdr_ctrl_cts_entry_decode(msg, i, &e);
}

static void check_parsed(const uint8_t *f, size_t len, enum sdr_parse_result r,
			 const struct sdr_parsed *p)
{
	FUZZ_ASSERT((unsigned)r < SDR_PARSE__MAX);
	FUZZ_ASSERT(strcmp(sdr_parse_result_name(r), "unknown") != 0);
	if (!is_ok(r))
		return;
	FUZZ_ASSERT(p->payload >= f && p->payload <= f + len);
	FUZZ_ASSERT(p->payload_len <= (size_t)(f + len - p->payload));
	FUZZ_ASSERT(p->dest_qpn <= SDR_QPN_MASK && p->psn <= SDR_PSN_MASK);
	if (r == SDR_PARSE_OK_DATA) {
		FUZZ_ASSERT(p->dma_len == p->payload_len);
		if (p->opcode == SDR_OP_UC_WRITE_ONLY) {
			static const uint32_t geo[][2] = {
				{4096, 65536}, {1024, 1u << 28}, {2048, 6144}};
			FUZZ_ASSERT(p->imm_zero && p->imm == 0);
			for (int g = 0; g < 3; g++) {
				struct sdr_parsed q = *p;
				/* what locate accepts is exactly the window's layout */
				if (sdr_data_locate(&q, geo[g][0], geo[g][1]) == 0)
					FUZZ_ASSERT(q.msg_id < SDR_MAX_MSGS &&
						    q.va == (uint64_t)q.msg_id * geo[g][1] +
								    (uint64_t)q.pkt_off *
									    geo[g][0]);
				else
					FUZZ_ASSERT(q.va % geo[g][0] ||
						    q.va / geo[g][1] >= SDR_MAX_MSGS);
			}
		} else {
			FUZZ_ASSERT(p->opcode == SDR_OP_UC_WRITE_ONLY_IMM && !p->imm_zero);
			FUZZ_ASSERT(p->msg_id == sdr_imm_msg_id(p->imm) &&
				    p->pkt_off == sdr_imm_pkt_off(p->imm) &&
				    p->imm_nib == sdr_imm_frag(p->imm));
		}
	} else {
		FUZZ_ASSERT(p->opcode == SDR_OP_UC_SEND_ONLY);
		check_ctrl(p->payload, p->payload_len);
	}
}

/* The firmware's way (rx.c): headers, ICRC in place, RETH. It must give
 * sdr_parse()'s verdict and leave the frame as it was. */
static void parse_steps(uint8_t *f, size_t len, enum sdr_parse_result want,
			const struct sdr_parsed *pw)
{
	static uint8_t before[65536];
	struct sdr_parsed p;
	enum sdr_parse_result r;

	memcpy(before, f, len);
	r = sdr_parse_hdr(f, len, &p);
	if (is_ok(r)) {
		if (!sdr_parse_icrc_ok(f, &p))
			r = SDR_PARSE_BAD_ICRC;
		else if (r == SDR_PARSE_OK_DATA)
			r = sdr_parse_reth(&p);
	}
	FUZZ_ASSERT(memcmp(before, f, len) == 0);
	FUZZ_ASSERT(r == want);
	if (is_ok(r))
		FUZZ_ASSERT(memcmp(&p, pw, sizeof(p)) == 0);
}

/* Both parses of one frame must agree except where only the ICRC differs. */
static enum sdr_parse_result parse_both(uint8_t *f, size_t len)
{
	struct sdr_parsed p0, p1;
	enum sdr_parse_result r0 = sdr_parse(f, len, 0, &p0);
	enum sdr_parse_result r1 = sdr_parse(f, len, 1, &p1);

	check_parsed(f, len, r0, &p0);
	check_parsed(f, len, r1, &p1);
	if (r1 == SDR_PARSE_BAD_ICRC)
		FUZZ_ASSERT(is_ok(r0) || r0 == SDR_PARSE_BAD_LEN);
	else
		FUZZ_ASSERT(r0 == r1);
	parse_steps(f, len, r1, &p1);
	/* the ECN bits a parsed packet reports are its TOS byte's; a CE mark
	 * (a queue on the way) changes neither the verdict nor the ICRC */
	if (is_ok(r1)) {
		uint8_t tos = f[SDR_ETH_HLEN + 1], c0 = f[SDR_ETH_HLEN + 10];
		uint8_t c1 = f[SDR_ETH_HLEN + 11];

		FUZZ_ASSERT(p1.ecn == (tos & SDR_ECN_MASK));
		sdr_ip_set_ecn(f, SDR_ECN_CE);
		FUZZ_ASSERT(sdr_parse(f, len, 1, &p0) == r1 && p0.ecn == SDR_ECN_CE);
		sdr_ip_set_ecn(f, tos & SDR_ECN_MASK);
		FUZZ_ASSERT(f[SDR_ETH_HLEN + 1] == tos);
		f[SDR_ETH_HLEN + 10] = c0; /* (one's complement: 0 and -0 alike) */
		f[SDR_ETH_HLEN + 11] = c1;
	}
	return r1;
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void put16(uint8_t *p, size_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

/* Recompute the IPv4 header checksum and the ICRC in place, when the frame
 * has room for them. With @p fix_lengths the IP total length and UDP length
 * are first made to match the frame, so a mutation that cuts or grows the
 * frame reaches the BTH/pad/RETH checks instead of "truncated". */
static void repair(uint8_t *f, size_t len, int fix_lengths)
{
	uint8_t *ip = f + SDR_ETH_HLEN;
	size_t ihl, end;
	uint32_t sum = 0, icrc;

	if (len < SDR_ETH_HLEN + SDR_IPV4_HLEN)
		return;
	ihl = (size_t)(ip[0] & 0x0F) * 4;
	if (ihl < SDR_IPV4_HLEN || SDR_ETH_HLEN + ihl > len)
		return;
	if (fix_lengths && len - SDR_ETH_HLEN <= 0xFFFF) {
		put16(ip + 2, len - SDR_ETH_HLEN);
		if (len >= SDR_ETH_HLEN + ihl + SDR_UDP_HLEN)
			put16(ip + ihl + 4, len - SDR_ETH_HLEN - ihl);
	}
	ip[10] = ip[11] = 0;
	for (size_t i = 0; i < ihl; i += 2)
		sum += get16(ip + i);
	while (sum >> 16)
		sum = (sum & 0xFFFF) + (sum >> 16);
	ip[10] = (uint8_t)(~sum >> 8);
	ip[11] = (uint8_t)~sum;

	end = SDR_ETH_HLEN + (size_t)get16(ip + 2);
	if (end > len || end < SDR_ETH_HLEN + ihl + SDR_UDP_HLEN + SDR_BTH_LEN + SDR_ICRC_LEN)
		return;
	icrc = sdr_icrc_compute(f, end - SDR_ICRC_LEN);
	for (int i = 0; i < 4; i++)
		f[end - SDR_ICRC_LEN + i] = (uint8_t)(icrc >> (8 * i));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint8_t my_mac[6] = {0x02, 0x5D, 0x52, 0, 0, 1};
	uint8_t reply[64];
	uint8_t *copy;
	size_t rlen;
	uint32_t target_ip;

	if (size > 65536)
		return 0;
	/* exact-size heap copy: one byte too far is an ASan report */
	copy = malloc(size ? size : 1);
	if (copy == NULL)
		return 0;
	memcpy(copy, data, size);

	parse_both(copy, size);
	check_ctrl(copy, size); /* the control decoder alone, on raw bytes */

	/* ask for the IP the frame targets so the reply path is reachable */
	target_ip = size >= 42 ? (uint32_t)copy[38] << 24 | (uint32_t)copy[39] << 16 |
					 (uint32_t)copy[40] << 8 | copy[41]
			       : 0;
	rlen = sdr_arp_reply(copy, size, target_ip, my_mac, reply);
	FUZZ_ASSERT(rlen == 0 || rlen == 42);
	if (rlen) {
		struct sdr_parsed p;

		FUZZ_ASSERT(sdr_parse(reply, rlen, 1, &p) == SDR_PARSE_ARP);
		FUZZ_ASSERT(memcmp(reply + 6, my_mac, 6) == 0 && reply[21] == 2);
		/* a reply is never itself a request we would answer */
		FUZZ_ASSERT(sdr_arp_reply(reply, rlen, target_ip, my_mac, reply + 0) == 0);
	}

	/* with checksums repaired, verification may no longer be what fails */
	repair(copy, size, 0);
	FUZZ_ASSERT(parse_both(copy, size) != SDR_PARSE_BAD_ICRC);
	repair(copy, size, 1);
	FUZZ_ASSERT(parse_both(copy, size) != SDR_PARSE_BAD_ICRC);
	free(copy);
	return 0;
}

/* ---- seeds: our own well-formed frames and a few near misses ---- */

static void seed_data(sdr_fuzz_emit_fn emit, void *arg, uint32_t len, int icrc, int se, int no_imm)
{
	static uint8_t buf[SDR_DATA_HDR_LEN + 4096 + 8];
	struct sdr_l2l3 a = {
		.src_mac = {0x02, 0, 0, 0, 0, 1},
		.dst_mac = {0x02, 0x5D, 0x52, 0, 0, 1},
		.src_ip = 0x0A000001,
		.dst_ip = 0x0A000002,
		.udp_sport = 0xC101,
	};
	struct sdr_data_hdr h = {
		.dest_qpn = 0x101,
		.psn = 42,
		.va = 5ull * 65536 + 1024,
		.rkey = 0x1234,
		.dma_len = len,
		.imm = sdr_imm_pack(5, 1, 0xA),
		.se = (uint8_t)se,
		.no_imm = (uint8_t)no_imm, /* opcode 0x2A */
	};
	size_t n = sdr_build_data_hdr(buf, &a, &h);

	for (uint32_t i = 0; i < len; i++)
		buf[sdr_data_hdr_len(&h) + i] = (uint8_t)(i * 7 + 3);
	sdr_pkt_finish(buf, n, icrc);
	emit(buf, n, arg);
}

void sdr_fuzz_seeds(sdr_fuzz_emit_fn emit, void *arg)
{
	static const uint32_t sizes[] = {0, 1, 3, 4, 61, 1024};
	/* clang-format off */
	static const uint8_t arp[42] = {
		0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x02, 0, 0, 0, 0, 1, 0x08, 0x06,
		0x00, 0x01, 0x08, 0x00, 6, 4, 0x00, 0x01, 0x02, 0, 0, 0, 0, 1,
		10, 0, 0, 1, 0, 0, 0, 0, 0, 0, 10, 0, 0, 2,
	};
	/* clang-format on */
	uint8_t buf[SDR_CTRL_HDR_LEN + SDR_CTRL_HDR_WIRE + 4 * SDR_CTS_ENTRY_WIRE + 8];
	struct sdr_cts_entry e[4] = {{0, 4096}, {1, 65536}, {2, 1}, {1023, 0}};
	struct sdr_l2l3 a = {
		.src_mac = {0x02, 0, 0, 0, 0, 2},
		.dst_mac = {0x02, 0, 0, 0, 0, 1},
		.src_ip = 0x0A000002,
		.dst_ip = 0x0A000001,
		.udp_sport = 0xC200,
	};

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		seed_data(emit, arg, sizes[i], 1, (int)(i & 1), 0);
		seed_data(emit, arg, sizes[i], 1, (int)(i & 1), 1);
	}
	seed_data(emit, arg, 100, 0, 1, 0); /* no ICRC */
	seed_data(emit, arg, 100, 0, 1, 1);
	for (uint16_t n = 0; n <= 4; n += 2) {
		size_t mlen = sdr_ctrl_cts_encode(buf + SDR_CTRL_HDR_LEN, 0x200, e, n);
		size_t flen = sdr_build_ctrl_hdr(buf, &a, 0x100, n, mlen);

		sdr_pkt_finish(buf, flen, 1);
		emit(buf, flen, arg);
		emit(buf + SDR_CTRL_HDR_LEN, mlen, arg); /* bare control message */
	}
	/* EC: a parity packet and a NACK */
	{
		static uint8_t
			pb[SDR_CTRL_HDR_LEN + SDR_CTRL_HDR_WIRE + SDR_CLOSED_ENTRY_WIRE + 100 + 8];
		struct sdr_parity_hdr ph = {.seq = 5,
					    .msg_len = 300000,
					    .imm = 0xCAFEF00D,
					    .code = SDR_EC_RS,
					    .k = 8,
					    .m = 2,
					    .sub = 2,
					    .pidx = 1,
					    .pkt = 3,
					    .npkt = 4,
					    .clen = 16384};
		struct sdr_nack_entry ne[2] = {
			{.seq = 5, .sub = 1, .k = 8, .missing = 0x81},
			{.seq = 6, .sub = 0, .k = 64, .flags = SDR_NACK_F_IMM, .missing = ~0ull}};
		size_t mlen = sdr_ctrl_parity_encode(pb + SDR_CTRL_HDR_LEN, 0x200, &ph) + 100;
		size_t flen = sdr_build_ctrl_hdr(pb, &a, 0x100, 7, mlen);

		memset(pb + SDR_CTRL_HDR_LEN + SDR_PARITY_DATA_OFF, 0x3C, 100);
		sdr_pkt_finish(pb, flen, 1);
		emit(pb, flen, arg);
		emit(pb + SDR_CTRL_HDR_LEN, mlen, arg);
		mlen = sdr_ctrl_nack_encode(pb + SDR_CTRL_HDR_LEN, 0x200, ne, 2);
		flen = sdr_build_ctrl_hdr(pb, &a, 0x100, 8, mlen);
		sdr_pkt_finish(pb, flen, 1);
		emit(pb, flen, arg);
		emit(pb + SDR_CTRL_HDR_LEN, mlen, arg);
		struct sdr_abort_entry ab[2] = {{.seq = 9, .status = -90, .length = 1u << 20},
						{.seq = 10, .status = -22, .length = 5}};
		mlen = sdr_ctrl_abort_encode(pb + SDR_CTRL_HDR_LEN, 0x200, ab, 2);
		sdr_ctrl_key_put(pb + SDR_CTRL_HDR_LEN, 0x0123456789ABCDEFull);
		flen = sdr_build_ctrl_hdr(pb, &a, 0x100, 10, mlen);
		sdr_pkt_finish(pb, flen, 1);
		emit(pb, flen, arg);
		emit(pb + SDR_CTRL_HDR_LEN, mlen, arg);
		/* an ACK with its ECN echo and two hole reports */
		struct sdr_ack_entry ae[2] = {{.seq = 5, .cum = 2, .bits = {0x0A}},
					      {.seq = 6, .cum = 8, .flags = SDR_ACK_F_FULL}};
		struct sdr_ack_echo ax = {.ce = 0x56, .pkts = 0x1234};
		struct sdr_ack_hole ah[2] = {{.seq = 5, .chunk = 2, .first = 5, .have = 0x7FE},
					     {.seq = 5, .chunk = 4, .first = 0, .have = ~1ull}};
		mlen = sdr_ctrl_ack_encode_holes(pb + SDR_CTRL_HDR_LEN, 0x200, ae, 2, &ax, ah, 2);
		sdr_ctrl_key_put(pb + SDR_CTRL_HDR_LEN, 0x0123456789ABCDEFull);
		flen = sdr_build_ctrl_hdr(pb, &a, 0x100, 12, mlen);
		sdr_pkt_finish(pb, flen, 1);
		emit(pb, flen, arg);
		emit(pb + SDR_CTRL_HDR_LEN, mlen, arg);
		struct sdr_closed_msg cl = {.recv_next = 1500, .reason = SDR_CLOSED_DETACHED};
		cl.full[3] = 0x5A;
		mlen = sdr_ctrl_closed_encode(pb + SDR_CTRL_HDR_LEN, 0x200, &cl);
		sdr_ctrl_key_put(pb + SDR_CTRL_HDR_LEN, 0x0123456789ABCDEFull);
		flen = sdr_build_ctrl_hdr(pb, &a, 0x100, 11, mlen);
		sdr_pkt_finish(pb, flen, 1);
		emit(pb, flen, arg);
		emit(pb + SDR_CTRL_HDR_LEN, mlen, arg);
	}
	/* a control packet whose 1-byte message needs 3 bytes of pad */
	{
		size_t flen = sdr_build_ctrl_hdr(buf, &a, 0x100, 9, 1);

		buf[SDR_CTRL_HDR_LEN] = 0x53;
		sdr_pkt_finish(buf, flen, 1);
		emit(buf, flen, arg);
	}
	emit(arp, sizeof(arp), arg);
}
