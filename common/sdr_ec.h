/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Erasure coding of SDR submessages (k data chunks + m parity chunks).
 *
 * Two codes:
 *  - SDR_EC_RS:  MDS Reed-Solomon over GF(2^8) (polynomial 0x11D) with the
 *    systematic Cauchy generator of ISA-L's gf_gen_cauchy1_matrix():
 *    parity row r (0 <= r < m), data column j: 1 / ((k + r) XOR j). Any k of
 *    the k + m chunks recover the data. Limits: k >= 1, m >= 1, k + m <= 255.
 *  - SDR_EC_XOR: parity i = XOR of the data chunks j with j % m == i
 *    (RAID-like groups). Survives at most one lost chunk (data or parity) per
 *    group that has lost data. Limits: 1 <= m <= k, k + m <= 255. When
 *    k % m != 0 the groups have unequal sizes: groups i < k % m hold
 *    k / m + 1 data chunks, the others k / m.
 *
 * A code is implemented by a backend (struct sdr_ec_ops): the software
 * backends are ISA-L (RS) and a portable word-wise loop (XOR); a hardware
 * engine can provide its own ops table and be used through
 * sdr_ec_create_with() without changing any caller. The front end in
 * sdr_ec.c validates every argument and decides recoverability itself, so a
 * backend only ever sees valid, recoverable requests and every backend of a
 * code refuses exactly the same patterns.
 *
 * Chunk arrays: "chunks" is always k + m pointers, data first (index 0..k-1)
 * then parity (index k..k+m-1); "present" is k + m flags, nonzero = the
 * chunk holds valid bytes. All chunks of one call have the same length len
 * (any len >= 1; no alignment requirement).
 *
 * Threads: sdr_ec_encode() and sdr_ec_can_decode() only read the handle and
 * may run concurrently on one handle. sdr_ec_decode() uses scratch space and
 * a decode-table cache inside the handle: use one handle per lcore (or lock).
 * sdr_ec_decode() does not allocate memory.
 */
#ifndef SDR_EC_H
#define SDR_EC_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "sdr_scheme.h" /* enum sdr_ec_code, sdr_ec_code_name(), sdr_ec_code_parse() */

#ifdef __cplusplus
extern "C" {
#endif

/** Largest k + m of every code (RS needs distinct nonzero field elements). */
#define SDR_EC_MAX_CHUNKS 255

/** Error returned by decode when the erasure pattern cannot be repaired. */
#define SDR_EC_ENOTRECOVERABLE EIO

struct sdr_ec; /* opaque handle */

/**
 * Backend interface. A backend implements one code; the front end has
 * already checked, before any call:
 *  - init: (k, m) satisfy the code's limits (sdr_ec_check_params()).
 *  - encode: every pointer is non-NULL, 1 <= len <= max_len.
 *  - decode: every present chunk and every missing data chunk has a non-NULL
 *    pointer, at least one data chunk is missing, the pattern is recoverable
 *    for the code, 1 <= len <= max_len. Missing parity pointers may be NULL.
 * Decode must write the missing data chunks and nothing else (no other
 * chunk, no byte outside [chunk, chunk + len)). Output buffers never overlap
 * inputs (caller's contract).
 */
struct sdr_ec_ops {
	const char *name;      /**< e.g. "isal-rs", "xor-u64" */
	enum sdr_ec_code code; /**< the code this backend implements */
	size_t max_len;        /**< largest chunk length accepted */
	/** Allocate backend state for (k, m) into *priv. 0, -ENOMEM, or
	 *  -ENOTSUP / -ENODEV for a hardware backend that cannot serve (k, m). */
	int (*init)(void **priv, unsigned int k, unsigned int m);
	/** Free what init allocated. */
	void (*fini)(void *priv);
	/** parity[0..m-1] = code(data[0..k-1]). 0 or -errno (hardware). */
	int (*encode)(void *priv, const uint8_t *const *data, uint8_t *const *parity, size_t len);
	/** Recover missing data chunks in place. 0 or -errno (hardware). Must
	 *  not use SDR_EC_ENOTRECOVERABLE for other failures. */
	int (*decode)(void *priv, uint8_t *const *chunks, const uint8_t *present, size_t len);
	/** Optional (NULL: sdr_ec_encode_update() says -ENOTSUP): add data
	 *  chunk @p i (< k) to the parity, parity[j] ^= its term of parity row
	 *  j, for every j < m. 0 or -errno (hardware). */
	int (*encode_update)(void *priv, unsigned int i, const uint8_t *data,
			     uint8_t *const *parity, size_t len);
};

/** Software backends, usable with sdr_ec_create_with(). isal_rs: ISA-L;
 *  gfni_rs: the same code with its dot products on x86 GFNI (AVX-512BW),
 *  whose init says -ENOTSUP on a CPU without them. */
extern const struct sdr_ec_ops sdr_ec_isal_rs_ops;
extern const struct sdr_ec_ops sdr_ec_gfni_rs_ops;
extern const struct sdr_ec_ops sdr_ec_xor_ops;

/**
 * Default (software) backend of a code: for RS the GFNI one when the CPU
 * has AVX-512BW and GFNI, else ISA-L's.
 * @return the ops table, or NULL if @p code is unknown.
 */
const struct sdr_ec_ops *sdr_ec_default_ops(enum sdr_ec_code code);

/**
 * Check the limits of a code (see the file comment).
 * @return 0, or -EINVAL if the code is unknown or (k, m) is out of range.
 */
int sdr_ec_check_params(enum sdr_ec_code code, unsigned int k, unsigned int m);

/**
 * Create a codec for @p code with its default software backend.
 * Precomputes the encode tables.
 * @return the handle, or NULL with errno set to:
 *   EINVAL (unknown code, (k, m) out of range), ENOMEM.
 */
struct sdr_ec *sdr_ec_create(enum sdr_ec_code code, unsigned int k, unsigned int m);

/**
 * Create a codec with an explicit backend (e.g. a hardware engine).
 * @return the handle, or NULL with errno set to:
 *   EINVAL (ops NULL or incomplete, (k, m) out of range for ops->code),
 *   ENOMEM, or the positive errno returned by ops->init.
 */
struct sdr_ec *sdr_ec_create_with(const struct sdr_ec_ops *ops, unsigned int k, unsigned int m);

/** Free a handle (NULL is a no-op). */
void sdr_ec_free(struct sdr_ec *ec);

/** Accessors. */
unsigned int sdr_ec_k(const struct sdr_ec *ec);
unsigned int sdr_ec_m(const struct sdr_ec *ec);
enum sdr_ec_code sdr_ec_code_of(const struct sdr_ec *ec);
const char *sdr_ec_backend_name(const struct sdr_ec *ec);

/**
 * Encode: parity[0..m-1] from data[0..k-1], each @p len bytes.
 * Parity buffers must not overlap data buffers.
 * @return 0, or -EINVAL (NULL handle/array/pointer, len == 0,
 *   len > backend max_len (INT_MAX for ISA-L)), or a backend's -errno.
 */
int sdr_ec_encode(const struct sdr_ec *ec, const uint8_t *const *data, uint8_t *const *parity,
		  size_t len);

/**
 * Incremental encode: add data chunk @p i (0 <= i < k) of @p len bytes to
 * the m parity chunks (parity[j] ^= the term of data chunk i in parity row
 * j, for every j < m; XOR touches only parity[i % m]). Starting from zeroed
 * parity, adding each data chunk once, in any order and in any pieces (the
 * same byte range of every parity chunk as of the data chunk), gives what
 * sdr_ec_encode() gives; a zero chunk adds nothing, so a chunk shorter than
 * the others is added with its own length. The firmware does not use it:
 * encoding the submessage at its end (sdr_ec_encode()) measured faster
 * (docs/benchmarks.md section 8.5); tests/ec/ec_perf.c measures both.
 * @return 0, -EINVAL (as sdr_ec_encode(), or i >= k), -ENOTSUP (the backend
 *   has no incremental encode: use sdr_ec_encode()), or a backend's -errno.
 */
int sdr_ec_encode_update(const struct sdr_ec *ec, unsigned int i, const uint8_t *data,
			 uint8_t *const *parity, size_t len);

/** Does the handle's backend encode incrementally (sdr_ec_encode_update())? */
int sdr_ec_has_update(const struct sdr_ec *ec);

/**
 * Can the data be recovered from the chunks flagged in @p present?
 * RS: at least k of the k + m chunks present. XOR: every group that lost a
 * data chunk lost exactly one chunk in total (its parity is present).
 * Missing parity alone never prevents recovery (decode does not rebuild
 * parity).
 * @return the number of data chunks decode would write (0 = nothing
 *   missing), -SDR_EC_ENOTRECOVERABLE (-EIO) if not recoverable,
 *   -EINVAL (NULL argument).
 */
int sdr_ec_can_decode(const struct sdr_ec *ec, const uint8_t *present);

/**
 * Decode: write every missing data chunk (present[i] == 0, i < k) into
 * chunks[i] from the present chunks. Writes nothing else: present chunks and
 * missing parity chunks are left untouched. On any error nothing at all is
 * written. Missing data buffers must not overlap any other chunk.
 * @param chunks  k + m pointers (data, then parity). Must be non-NULL for
 *                every present chunk and every missing data chunk; missing
 *                parity pointers may be NULL.
 * @param present k + m flags, nonzero = present.
 * @return the number of data chunks recovered (0 if none was missing),
 *   -EIO (SDR_EC_ENOTRECOVERABLE) if the pattern cannot be repaired,
 *   -EINVAL (NULL handle/array, a required pointer NULL, len == 0,
 *   len > backend max_len), or a backend's -errno.
 */
int sdr_ec_decode(struct sdr_ec *ec, uint8_t *const *chunks, const uint8_t *present, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* SDR_EC_H */
