/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reliability schemes: the one definition of what a QP's reliability is
 * (none, selective repeat, erasure coding with a code, k and m, or AUTO),
 * how it is spelled on command lines and in logs, and how it is packed into
 * struct sdr_qp_info::ec. Installed with libsdr (its functions are part of
 * libsdr's API, host/libsdr/libsdr.map); pure C, no DPDK.
 *
 * Spellings (sdr_scheme_parse, sdr_scheme_format):
 *   none | sr | auto          the reliability without parameters
 *   rs:K:M | xor:K:M          erasure coding: Reed-Solomon (Cauchy, ISA-L) or
 *                             XOR parity, K data and M parity chunks per
 *                             submessage (the canonical form, e.g. rs:32:8)
 *   ec:rs:K:M | ec:xor:K:M    the same (sdr-pipe's --rel spelling)
 *   ec                        only where the caller names a default code
 * With SDR_SCHEME_MODEL_NAMES also the completion-time model's names (any
 * case): SR, rs<K>x<M> (alias mds<K>x<M>), xor<K>x<M>, e.g. RS32x8.
 * Labels (SDR_SCHEME_LABEL): NONE, SR, AUTO, RS(32,8), XOR(32,8).
 */
#ifndef SDR_SCHEME_H
#define SDR_SCHEME_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Reliability of a QP (struct sdr_qp_attr::reliability, sdr_qp_info::reliability). */
enum sdr_reliability {
	SDR_REL_NONE = 0, /**< raw SDR: bitmap only */
	SDR_REL_SR = 1,   /**< selective repeat on the DPU */
	SDR_REL_EC = 2,   /**< erasure coding (code, k, m), SR fallback */
	SDR_REL_AUTO = 3, /**< SR or an EC code per message, picked by the DPU */
};

/** Erasure code (struct sdr_qp_attr::ec_code, the parity header's code,
 *  the codec of sdr_ec.h, the completion-time model). */
enum sdr_ec_code {
	SDR_EC_RS = 1,  /**< MDS Reed-Solomon, Cauchy matrix (ISA-L): any k of k + m chunks */
	SDR_EC_XOR = 2, /**< parity i = XOR of data chunks j, j % m == i */
};

/** What a QP (and the wire format) can run: k data chunks per submessage
 *  (the NACK bitmap has 64 bits), m parity chunks; XOR also m <= k. */
#define SDR_EC_K_MAX 64
#define SDR_EC_M_MAX 32
/** What the completion-time model evaluates: RS k + m <= 255 (distinct
 *  nonzero elements of GF(2^8)); XOR m <= k <= 4096. */
#define SDR_SCHEME_MODEL_KM_MAX 255
#define SDR_SCHEME_MODEL_XOR_K_MAX 4096

/** A reliability scheme. code, k and m are 0 unless rel is SDR_REL_EC. */
struct sdr_scheme {
	uint8_t rel;  /**< enum sdr_reliability */
	uint8_t code; /**< enum sdr_ec_code (0 = no code: NONE, SR, AUTO) */
	uint16_t k;   /**< data chunks per submessage */
	uint16_t m;   /**< parity chunks per submessage */
};

/** Flags of sdr_scheme_parse() / sdr_scheme_check(). */
#define SDR_SCHEME_MODEL 0x1u       /**< the model's limits, not a QP's */
#define SDR_SCHEME_MODEL_NAMES 0x2u /**< also accept the model's names (any case) */
#define SDR_SCHEME_SR_EC 0x4u       /**< only SR and EC schemes (not none, auto) */
/** Styles of sdr_scheme_format(). */
#define SDR_SCHEME_SPEC 0u      /**< none, sr, auto, rs:32:8 */
#define SDR_SCHEME_LABEL 1u     /**< NONE, SR, AUTO, RS(32,8) */
#define SDR_SCHEME_EC_PREFIX 2u /**< none, sr, auto, ec:rs:32:8 */
/** The EC code the programs use when only "ec" is said: rs:32:8. */
/* clang-format off */
#define SDR_SCHEME_EC_DEFAULT {SDR_REL_EC, SDR_EC_RS, 32, 8}
/* clang-format on */
#define SDR_SCHEME_EC_DEFAULT_SPEC "rs:32:8"
/** Longest text sdr_scheme_format() writes, with the NUL. */
#define SDR_SCHEME_STR_MAX 24u

/** "none", "sr", "ec", "auto" for a reliability, "?" otherwise. */
static inline const char *sdr_rel_name(unsigned rel)
{
	static const char *const n[] = {"none", "sr", "ec", "auto"};

	return rel <= SDR_REL_AUTO ? n[rel] : "?";
}

/** "rs" / "xor" for a code, "?" otherwise. */
static inline const char *sdr_ec_code_name(unsigned code)
{
	return code == SDR_EC_RS ? "rs" : code == SDR_EC_XOR ? "xor" : "?";
}

/** Parse "rs" or "xor" (as in configuration files and command lines).
 *  @return 0 and *code set, or -EINVAL (NULL or unknown name). */
static inline int sdr_ec_code_parse(const char *name, enum sdr_ec_code *code)
{
	if (name == NULL || code == NULL)
		return -EINVAL;
	if (strcmp(name, "rs") == 0)
		*code = SDR_EC_RS;
	else if (strcmp(name, "xor") == 0)
		*code = SDR_EC_XOR;
	else
		return -EINVAL;
	return 0;
}

/* ---- parity per submessage ---- */
/**
 * Parity chunks sent for a submessage of @p nreal data chunks (1..k) under
 * code (@p code, @p k, @p m): m for a whole submessage. A short last one
 * (the message's chunks not a multiple of k; the code sees the missing
 * chunks as zeros) sends parity in proportion to its chunks, as the
 * SDR-RDMA paper's model counts it (ceil(M m / k) for a message of M):
 * Reed-Solomon the first ceil(nreal m / k) parity rows (any nreal of
 * nreal + that many rebuild it), XOR the parity of every group that holds
 * a real chunk, min(m, nreal) (parity i >= nreal is the XOR of zeros).
 * Every submessage sends at least one parity chunk.
 */
static inline uint32_t sdr_ec_sub_parity(unsigned code, uint32_t k, uint32_t m, uint32_t nreal)
{
	if (!k || !m || !nreal)
		return 0;
	if (nreal >= k)
		return m;
	if (code == SDR_EC_XOR)
		return nreal < m ? nreal : m;
	return (uint32_t)(((uint64_t)nreal * m + k - 1) / k);
}

/** Parity chunks of a message of @p nchunks data chunks (sdr_ec_sub_parity()
 *  for each of its ceil(nchunks / k) submessages). */
static inline uint64_t sdr_ec_msg_parity(unsigned code, uint32_t k, uint32_t m, uint64_t nchunks)
{
	if (!k || !m)
		return 0;
	return nchunks / k * m + sdr_ec_sub_parity(code, k, m, (uint32_t)(nchunks % k));
}

/* ---- struct sdr_qp_info::ec ---- */
/** Pack (code, k, m) into the 16-bit form of struct sdr_qp_info::ec:
 *  bits 13..12 code (1 RS, 2 XOR), 11..6 k - 1, 5..0 m - 1. Arguments must
 *  pass sdr_ec_param_check(). */
static inline uint16_t sdr_ec_param_pack(unsigned code, unsigned k, unsigned m)
{
	return (uint16_t)((code & 3) << 12 | ((k - 1) & 63) << 6 | ((m - 1) & 63));
}
static inline unsigned sdr_ec_param_code(uint16_t v)
{
	return (v >> 12) & 3;
}
static inline unsigned sdr_ec_param_k(uint16_t v)
{
	return ((v >> 6) & 63) + 1;
}
static inline unsigned sdr_ec_param_m(uint16_t v)
{
	return (v & 63) + 1;
}

/** struct sdr_qp_info::ec of a scheme: packed (code, k, m) for EC, else 0. */
static inline uint16_t sdr_scheme_ec(const struct sdr_scheme *s)
{
	return s->rel == SDR_REL_EC ? sdr_ec_param_pack(s->code, s->k, s->m) : 0;
}

/** The scheme of a QP info's reliability and ec fields (not checked: see
 *  sdr_scheme_unpack()). */
static inline struct sdr_scheme sdr_scheme_of(unsigned rel, uint16_t ec)
{
	struct sdr_scheme s = {(uint8_t)(rel > 255 ? 255 : rel), 0, 0, 0};

	if (rel == SDR_REL_EC) {
		s.code = (uint8_t)sdr_ec_param_code(ec);
		s.k = (uint16_t)sdr_ec_param_k(ec);
		s.m = (uint16_t)sdr_ec_param_m(ec);
	}
	return s;
}

/* Part of libsdr's API (host/libsdr/libsdr.map): default visibility, also when
 * compiled with -fvisibility=hidden. */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

/**
 * Check a scheme: rel one of enum sdr_reliability; for EC a known code and
 * k, m within the QP's limits (1 <= k <= SDR_EC_K_MAX, 1 <= m <=
 * SDR_EC_M_MAX) or, with SDR_SCHEME_MODEL in @p flags, the model's (RS
 * k + m <= SDR_SCHEME_MODEL_KM_MAX, XOR k <= SDR_SCHEME_MODEL_XOR_K_MAX),
 * and for XOR m <= k; code, k and m 0 otherwise. With SDR_SCHEME_SR_EC,
 * only SR and EC schemes pass.
 * @return 0, or -EINVAL.
 */
int sdr_scheme_check(const struct sdr_scheme *s, unsigned flags);

/**
 * Parse a scheme (spellings at the top of this file), checked with
 * sdr_scheme_check(@p flags).
 * @param ec_default what "ec" alone means; NULL: "ec" alone is refused
 * @return 0, or -EINVAL (NULL, unknown spelling, trailing characters,
 *         numbers out of range).
 */
int sdr_scheme_parse(const char *s, unsigned flags, const struct sdr_scheme *ec_default,
		     struct sdr_scheme *out);

/**
 * Write @p s in a style (SDR_SCHEME_SPEC, SDR_SCHEME_LABEL or
 * SDR_SCHEME_EC_PREFIX) into @p buf.
 * @return characters written (without the NUL), -EINVAL (NULL argument,
 *         unknown rel or style), or -ENOSPC (@p len too small).
 */
int sdr_scheme_format(const struct sdr_scheme *s, unsigned style, char *buf, size_t len);

/**
 * Limits of the EC parameters of a QP: sdr_scheme_check() of the EC scheme
 * (code, k, m) with a QP's limits.
 * @return 0, or -EINVAL.
 */
int sdr_ec_param_check(unsigned code, unsigned k, unsigned m);

/**
 * Parse "rs:K:M" or "xor:K:M" (e.g. "rs:32:8") into (code, k, m), checked
 * with sdr_ec_param_check(). @return 0, or -EINVAL.
 */
int sdr_ec_param_parse(const char *s, unsigned *code, unsigned *k, unsigned *m);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

/** The scheme of a QP info's reliability and ec fields, checked: a known
 *  reliability, ec 0 unless it is EC, and then EC parameters a QP can run
 *  (the packed form's spare bits 0). @return 0, or -EINVAL. */
static inline int sdr_scheme_unpack(unsigned rel, uint16_t ec, struct sdr_scheme *out)
{
	struct sdr_scheme s = sdr_scheme_of(rel, ec);

	if (rel == SDR_REL_EC ? (ec >> 14) != 0 : ec != 0)
		return -EINVAL;
	if (sdr_scheme_check(&s, 0))
		return -EINVAL;
	if (out)
		*out = s;
	return 0;
}

#ifdef __cplusplus
}
#endif
#endif /* SDR_SCHEME_H */
