/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-dpu wire format, the ICRC (IBTA vol.1 annex A17): which CRC-32 code
 * computes it (ISA-L's dispatcher or its by8 variant, --icrc-crc), and the
 * ICRC of a frame with the variant fields masked. Pure C over ISA-L.
 */
#include <errno.h>
#include <string.h>

#include <isa-l/crc.h>

#include "sdr_wire_priv.h"

#ifdef SDR_HAVE_ISAL_CRC_BY8
uint32_t crc32_gzip_refl_by8(uint32_t crc, const unsigned char *buf, uint64_t len);
#endif

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
	return crc32_gzip_refl(crc, ip + covered, len_without_icrc - SDR_ETH_HLEN - covered);
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
