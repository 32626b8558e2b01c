/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers of the host <-> DPU ABI: text and binary forms of struct
 * sdr_qp_info (exchanged out of band between the two ends of a QP).
 * Both parsers treat their input as hostile.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdr_abi.h"
#include "sdr_wire.h"

/* Values a peer's QP info may take; shared by parse and decode. */
static int qp_info_valid(const struct sdr_qp_info *q)
{
	if (q->qpn > SDR_QPN_MASK)
		return 0;
	if (q->mtu != 1024 && q->mtu != 2048 && q->mtu != 4096)
		return 0;
	if (q->max_msg == 0 || q->chunk_pkts == 0)
		return 0;
	if (q->generations == 0 || (q->generations & (q->generations - 1)))
		return 0;
	/* the QPN block [qpn, qpn + gen) must be aligned and inside 24 bits */
	if (q->qpn % q->generations || q->qpn + q->generations - 1 > SDR_QPN_MASK)
		return 0;
	/* a known reliability; EC parameters only with EC, and valid ones */
	if (sdr_scheme_unpack(q->reliability, q->ec, NULL))
		return 0;
	return 1;
}

int sdr_qp_info_format(const struct sdr_qp_info *info, char *buf, size_t len)
{
	char ip[16], mac[18];
	int n;

	if (info == NULL || buf == NULL)
		return -1;
	sdr_format_ipv4(info->ip, ip);
	sdr_format_mac(info->mac, mac);
	n = snprintf(buf, len,
		     "qpn=0x%06x,rkey=0x%08x,key=0x%016llx,ip=%s,mac=%s,mtu=%u,max_msg=%u,"
		     "chunk_pkts=%u,gen=%u,rel=%u",
		     info->qpn, info->rkey, (unsigned long long)info->ctrl_key, ip, mac, info->mtu,
		     info->max_msg, info->chunk_pkts, info->generations, info->reliability);
	if (n < 0 || (size_t)n >= len)
		return -1;
	if (info->ec) {
		struct sdr_scheme s = sdr_scheme_of(SDR_REL_EC, info->ec);
		char spec[SDR_SCHEME_STR_MAX];
		int x;

		if (sdr_scheme_format(&s, SDR_SCHEME_SPEC, spec, sizeof(spec)) < 0)
			return -1;
		x = snprintf(buf + n, len - (size_t)n, ",ec=%s", spec);
		if (x < 0 || (size_t)x >= len - (size_t)n)
			return -1;
		n += x;
	}
	return n;
}

/* Unsigned number: decimal, or hex with a 0x prefix; the whole of [s, e)
 * must be digits. No sign, no spaces, no octal surprise. */
static int parse_num(const char *s, const char *e, uint64_t max, uint64_t *out)
{
	uint64_t v = 0;
	unsigned base = 10;

	if (e - s > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	if (s >= e || e - s > 20)
		return -1;
	for (; s < e; s++) {
		unsigned d;

		if (*s >= '0' && *s <= '9')
			d = (unsigned)(*s - '0');
		else if (base == 16 && *s >= 'a' && *s <= 'f')
			d = (unsigned)(*s - 'a' + 10);
		else if (base == 16 && *s >= 'A' && *s <= 'F')
			d = (unsigned)(*s - 'A' + 10);
		else
			return -1;
		if (v > (max - d) / base)
			return -1;
		v = v * base + d;
	}
	*out = v;
	return 0;
}

enum { K_QPN, K_RKEY, K_KEY, K_IP, K_MAC, K_MTU, K_MAX_MSG, K_CHUNK, K_GEN, K_REL, K_EC, K__N };
static const char *const qp_keys[K__N] = {"qpn",     "rkey",       "key", "ip",  "mac", "mtu",
					  "max_msg", "chunk_pkts", "gen", "rel", "ec"};

int sdr_qp_info_parse(const char *s, struct sdr_qp_info *info)
{
	struct sdr_qp_info q;
	unsigned seen = 0;
	const char *p;

	if (s == NULL || info == NULL || strlen(s) > 512)
		return -1;
	memset(&q, 0, sizeof(q));
	for (p = s;;) {
		const char *comma = strchr(p, ',');
		const char *end = comma ? comma : p + strlen(p);
		const char *eq = memchr(p, '=', (size_t)(end - p));
		char val[64];
		uint64_t v = 0;
		int k;

		if (eq == NULL || eq == p || end - eq - 1 <= 0 ||
		    (size_t)(end - eq - 1) >= sizeof(val))
			return -1;
		for (k = 0; k < K__N; k++)
			if (strlen(qp_keys[k]) == (size_t)(eq - p) &&
			    memcmp(qp_keys[k], p, (size_t)(eq - p)) == 0)
				break;
		if (k == K__N || (seen & (1u << k)))
			return -1; /* unknown or duplicate key */
		seen |= 1u << k;
		memcpy(val, eq + 1, (size_t)(end - eq - 1));
		val[end - eq - 1] = '\0';
		switch (k) {
		case K_IP:
			if (sdr_parse_ipv4(val, &q.ip))
				return -1;
			break;
		case K_MAC:
			if (sdr_parse_mac(val, q.mac))
				return -1;
			break;
		case K_EC: {
			unsigned c, ek, em;
			if (sdr_ec_param_parse(val, &c, &ek, &em))
				return -1;
			q.ec = sdr_ec_param_pack(c, ek, em);
			break;
		}
		default: {
			static const uint64_t maxv[K__N] = {
				[K_QPN] = SDR_QPN_MASK,   [K_RKEY] = UINT32_MAX,
				[K_KEY] = UINT64_MAX,     [K_MTU] = 4096,
				[K_MAX_MSG] = UINT32_MAX, [K_CHUNK] = UINT32_MAX,
				[K_GEN] = UINT8_MAX,      [K_REL] = SDR_REL_AUTO};
			if (parse_num(val, val + strlen(val), maxv[k], &v))
				return -1;
			break;
		}
		}
		switch (k) {
		case K_QPN: q.qpn = (uint32_t)v; break;
		case K_RKEY: q.rkey = (uint32_t)v; break;
		case K_KEY: q.ctrl_key = v; break;
		case K_MTU: q.mtu = (uint16_t)v; break;
		case K_MAX_MSG: q.max_msg = (uint32_t)v; break;
		case K_CHUNK: q.chunk_pkts = (uint32_t)v; break;
		case K_GEN: q.generations = (uint8_t)v; break;
		case K_REL: q.reliability = (uint8_t)v; break;
		default: break;
		}
		if (comma == NULL)
			break;
		p = comma + 1;
	}
	if ((seen | (1u << K_REL) | (1u << K_EC)) != (1u << K__N) - 1)
		return -1; /* a required key is missing */
	if (!qp_info_valid(&q))
		return -1;
	*info = q;
	return 0;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Layout: qpn(4) rkey(4) ip(4) mac(6) mtu(2) max_msg(4) chunk_pkts(4)
 *         gen(1) rel(1) ec(2, sdr_ec_param_pack or 0) ctrl_key(8); all
 *         big-endian. */
void sdr_qp_info_encode(const struct sdr_qp_info *info, uint8_t out[SDR_QP_INFO_WIRE])
{
	put32(out + 0, info->qpn);
	put32(out + 4, info->rkey);
	put32(out + 8, info->ip);
	memcpy(out + 12, info->mac, 6);
	out[18] = (uint8_t)(info->mtu >> 8);
	out[19] = (uint8_t)info->mtu;
	put32(out + 20, info->max_msg);
	put32(out + 24, info->chunk_pkts);
	out[28] = info->generations;
	out[29] = info->reliability;
	out[30] = (uint8_t)(info->ec >> 8);
	out[31] = (uint8_t)info->ec;
	put32(out + 32, (uint32_t)(info->ctrl_key >> 32));
	put32(out + 36, (uint32_t)info->ctrl_key);
}

int sdr_qp_info_decode(const uint8_t in[SDR_QP_INFO_WIRE], struct sdr_qp_info *info)
{
	struct sdr_qp_info q;

	memset(&q, 0, sizeof(q));
	q.qpn = get32(in + 0);
	q.rkey = get32(in + 4);
	q.ip = get32(in + 8);
	memcpy(q.mac, in + 12, 6);
	q.mtu = (uint16_t)(in[18] << 8 | in[19]);
	q.max_msg = get32(in + 20);
	q.chunk_pkts = get32(in + 24);
	q.generations = in[28];
	q.reliability = in[29];
	q.ec = (uint16_t)(in[30] << 8 | in[31]);
	q.ctrl_key = (uint64_t)get32(in + 32) << 32 | get32(in + 36);
	if (!qp_info_valid(&q))
		return -1;
	*info = q;
	return 0;
}
