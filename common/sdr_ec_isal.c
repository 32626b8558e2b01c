/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reed-Solomon backend on Intel ISA-L (x86 SIMD, aarch64 NEON/SVE, or its
 * portable base code; ISA-L picks at run time).
 *
 * Generator: gf_gen_cauchy1_matrix() (identity on top, parity row r, column
 * j = 1 / ((k + r) ^ j)). It is a Cauchy matrix, so every square submatrix of
 * the parity part is invertible; gf_gen_rs_matrix() (Vandermonde) is not
 * guaranteed invertible for large (k, m) such as (32, 8).
 *
 * Decode without a k x k inversion: with D the e missing data indices and P
 * the first e present parity rows, the parity equations restricted to D give
 *     B * d_D = p_P + A[P][not D] * d_notD,   B = A[P][D] (e x e),
 * so d_D = B^-1 * (p_P + A[P][not D] * d_notD). The decode matrix (e rows
 * over the k sources: surviving data, then the P parity chunks) costs one
 * e x e inversion (e <= m) plus e*e*(k-e) multiplications, then one
 * ec_init_tables() + ec_encode_data(). The tables of the last erasure
 * pattern are kept, so a repeated pattern skips all of that. The small
 * matrix work uses per-handle log/exp tables (same field as ISA-L:
 * polynomial 0x11D, generator 2) rather than ISA-L's out-of-line gf_mul(),
 * which made the table rebuild about twice as slow at (32, 8), e = 8.
 *
 * Two backends share this file: "isal-rs" (ISA-L's kernels throughout) and
 * "isal-rs-gfni" (the same generator, decode matrices and cache, but the
 * dot products of encode, incremental encode and decode run on the GFNI
 * kernels of sdr_ec_gfni.c: one instruction per 64 bytes and coefficient;
 * sdr_ec_default_ops() takes it when the CPU has AVX-512BW and GFNI).
 */
#include "sdr_ec.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <isa-l/erasure_code.h>

#include "sdr_ec_gfni.h"

struct ec_isal {
	unsigned int k, m;
	uint8_t gexp[512]; /* gexp[i] = 2^i, doubled to skip a modulo */
	uint8_t glog[256]; /* glog[2^i] = i; glog[0] unused */
	uint8_t *gen;      /* (k + m) x k generator; parity part at gen + k*k */
	uint8_t *plog;     /* m x k: glog of the parity part (all nonzero) */
	uint8_t *enc_tbls; /* 32 * k * m */
	uint64_t *genc;    /* GFNI backend: m x k bit matrices of the parity part */
	uint64_t *gdec;    /* GFNI backend: m x k, of the cached decode matrix */
	/* decode scratch (sdr_ec_decode is single-threaded per handle) */
	uint8_t *b;        /* e x e, destroyed by gf_invert() */
	uint8_t *binv;     /* e x e */
	uint8_t *dec_mat;  /* e x k */
	uint8_t *dec_tbls; /* 32 * k * m */
	uint8_t **src;     /* k */
	uint8_t **out;     /* m */
	uint8_t *d_idx;    /* missing data indices, m */
	uint8_t *p_idx;    /* parity rows used, m */
	/* one-entry cache: pattern that dec_tbls was built for */
	unsigned int cached_e; /* 0 = empty */
	uint8_t *cached_d;     /* m */
	uint8_t *cached_p;     /* m */
};

static void isal_fini(void *priv)
{
	struct ec_isal *s = priv;

	if (s == NULL)
		return;
	free(s->gen);
	free(s->plog);
	free(s->enc_tbls);
	free(s->genc);
	free(s->gdec);
	free(s->b);
	free(s->binv);
	free(s->dec_mat);
	free(s->dec_tbls);
	free(s->src);
	free(s->out);
	free(s->d_idx);
	free(s->p_idx);
	free(s->cached_d);
	free(s->cached_p);
	free(s);
}

static void gf_init_log(struct ec_isal *s)
{
	unsigned int x = 1, i;

	for (i = 0; i < 255; i++) {
		s->gexp[i] = s->gexp[i + 255] = (uint8_t)x;
		s->glog[x] = (uint8_t)i;
		x <<= 1;
		if (x & 0x100)
			x ^= 0x11D;
	}
	s->gexp[510] = s->gexp[0];
	s->gexp[511] = s->gexp[1];
}

static inline uint8_t gf_mul_log(const struct ec_isal *s, uint8_t a, uint8_t b)
{
	return (a == 0 || b == 0) ? 0 : s->gexp[s->glog[a] + s->glog[b]];
}

/* Gauss-Jordan: out = a^-1 (n x n); a is destroyed. 0, or -1 if singular. */
static int gf_invert(const struct ec_isal *s, uint8_t *a, uint8_t *out, unsigned int n)
{
	unsigned int c, r, j;

	memset(out, 0, (size_t)n * n);
	for (j = 0; j < n; j++)
		out[j * n + j] = 1;
	for (c = 0; c < n; c++) {
		uint8_t inv, f;

		for (r = c; r < n && a[r * n + c] == 0; r++)
			;
		if (r == n)
			return -1;
		if (r != c)
			for (j = 0; j < n; j++) {
				uint8_t t = a[r * n + j];

				a[r * n + j] = a[c * n + j];
				a[c * n + j] = t;
				t = out[r * n + j];
				out[r * n + j] = out[c * n + j];
				out[c * n + j] = t;
			}
		inv = s->gexp[255 - s->glog[a[c * n + c]]];
		for (j = 0; j < n; j++) {
			a[c * n + j] = gf_mul_log(s, a[c * n + j], inv);
			out[c * n + j] = gf_mul_log(s, out[c * n + j], inv);
		}
		for (r = 0; r < n; r++) {
			if (r == c || (f = a[r * n + c]) == 0)
				continue;
			for (j = 0; j < n; j++) {
				a[r * n + j] ^= gf_mul_log(s, f, a[c * n + j]);
				out[r * n + j] ^= gf_mul_log(s, f, out[c * n + j]);
			}
		}
	}
	return 0;
}

static int init_common(void **priv, unsigned int k, unsigned int m, int gfni)
{
	struct ec_isal *s = calloc(1, sizeof(*s));
	size_t i;

	if (s == NULL)
		return -ENOMEM;
	s->k = k;
	s->m = m;
	s->gen = malloc((size_t)(k + m) * k);
	s->plog = malloc((size_t)m * k);
	s->enc_tbls = malloc((size_t)32 * k * m);
	s->b = malloc((size_t)m * m);
	s->binv = malloc((size_t)m * m);
	s->dec_mat = malloc((size_t)m * k);
	s->dec_tbls = malloc((size_t)32 * k * m);
	s->src = calloc(k, sizeof(*s->src));
	s->out = calloc(m, sizeof(*s->out));
	s->d_idx = malloc(m);
	s->p_idx = malloc(m);
	s->cached_d = malloc(m);
	s->cached_p = malloc(m);
	if (s->gen == NULL || s->plog == NULL || s->enc_tbls == NULL || s->b == NULL ||
	    s->binv == NULL || s->dec_mat == NULL || s->dec_tbls == NULL || s->src == NULL ||
	    s->out == NULL || s->d_idx == NULL || s->p_idx == NULL || s->cached_d == NULL ||
	    s->cached_p == NULL) {
		isal_fini(s);
		return -ENOMEM;
	}
	gf_init_log(s);
	gf_gen_cauchy1_matrix(s->gen, (int)(k + m), (int)k);
	for (i = 0; i < (size_t)m * k; i++) {
		uint8_t a = s->gen[(size_t)k * k + i];

		if (a == 0) { /* not a Cauchy matrix: ISA-L changed? refuse */
			isal_fini(s);
			return -ENOTSUP;
		}
		s->plog[i] = s->glog[a];
	}
	ec_init_tables((int)k, (int)m, s->gen + (size_t)k * k, s->enc_tbls);
	if (gfni) {
		s->genc = malloc((size_t)m * k * sizeof(*s->genc));
		s->gdec = malloc((size_t)m * k * sizeof(*s->gdec));
		if (s->genc == NULL || s->gdec == NULL) {
			isal_fini(s);
			return -ENOMEM;
		}
		for (i = 0; i < (size_t)m * k; i++)
			s->genc[i] = sdr_ec_gfni_matrix(s->gen[(size_t)k * k + i]);
	}
	*priv = s;
	return 0;
}

static int isal_init(void **priv, unsigned int k, unsigned int m)
{
	return init_common(priv, k, m, 0);
}

static int gfni_init(void **priv, unsigned int k, unsigned int m)
{
	if (!sdr_ec_gfni_usable())
		return -ENOTSUP;
	return init_common(priv, k, m, 1);
}

static int isal_encode(void *priv, const uint8_t *const *data, uint8_t *const *parity, size_t len)
{
	const struct ec_isal *s = priv;

	/* ISA-L's prototypes lack const; it only reads data and the tables. */
	ec_encode_data((int)len, (int)s->k, (int)s->m, s->enc_tbls,
		       (unsigned char **)(uintptr_t)data, (unsigned char **)(uintptr_t)parity);
	return 0;
}

static int isal_encode_update(void *priv, unsigned int i, const uint8_t *data,
			      uint8_t *const *parity, size_t len)
{
	const struct ec_isal *s = priv;

	/* (ISA-L's prototype lacks const: it only reads data and the tables) */
	ec_encode_data_update((int)len, (int)s->k, (int)s->m, (int)i, s->enc_tbls,
			      (unsigned char *)(uintptr_t)data,
			      (unsigned char **)(uintptr_t)parity);
	return 0;
}

/* Build dec_tbls for missing data d_idx[0..e) using parity rows p_idx[0..e).
 * Returns 0, or -EIO if B is singular (impossible for a Cauchy matrix; kept
 * so that a corrupted table can never produce silent garbage). */
static int isal_build_tables(struct ec_isal *s, unsigned int e)
{
	const unsigned int k = s->k;
	const uint8_t *par = s->gen + (size_t)k * k; /* m x k */
	unsigned int a, b, j, col;

	for (a = 0; a < e; a++)
		for (b = 0; b < e; b++)
			s->b[a * e + b] = par[(size_t)s->p_idx[a] * k + s->d_idx[b]];
	if (gf_invert(s, s->b, s->binv, e) != 0)
		return -SDR_EC_ENOTRECOVERABLE;

	/* Source order: surviving data in index order, then the e parity rows. */
	for (b = 0; b < e; b++) {
		uint8_t *row = s->dec_mat + (size_t)b * k;
		unsigned int next_missing = 0;
		unsigned int lb[SDR_EC_MAX_CHUNKS]; /* glog of row b of B^-1, or ~0 for 0 */

		for (a = 0; a < e; a++) {
			uint8_t v = s->binv[b * e + a];

			lb[a] = v ? s->glog[v] : ~0u;
		}
		col = 0;
		for (j = 0; j < k; j++) {
			uint8_t c = 0;

			if (next_missing < e && s->d_idx[next_missing] == j) {
				next_missing++;
				continue;
			}
			for (a = 0; a < e; a++)
				if (lb[a] != ~0u)
					c ^= s->gexp[lb[a] + s->plog[(size_t)s->p_idx[a] * k + j]];
			row[col++] = c;
		}
		for (a = 0; a < e; a++)
			row[col++] = s->binv[b * e + a];
	}
	if (s->gdec != NULL)
		for (size_t i = 0; i < (size_t)e * k; i++)
			s->gdec[i] = sdr_ec_gfni_matrix(s->dec_mat[i]);
	else
		ec_init_tables((int)k, (int)e, s->dec_mat, s->dec_tbls);
	memcpy(s->cached_d, s->d_idx, e);
	memcpy(s->cached_p, s->p_idx, e);
	s->cached_e = e;
	return 0;
}

static int isal_decode(void *priv, uint8_t *const *chunks, const uint8_t *present, size_t len)
{
	struct ec_isal *s = priv;
	const unsigned int k = s->k, m = s->m;
	unsigned int e = 0, np = 0, i, ns = 0;
	int rc;

	for (i = 0; i < k; i++) {
		if (present[i]) {
			s->src[ns++] = chunks[i];
		} else {
			s->out[e] = chunks[i];
			s->d_idx[e++] = (uint8_t)i;
		}
	}
	for (i = 0; i < m && np < e; i++)
		if (present[k + i]) {
			s->src[ns++] = chunks[k + i];
			s->p_idx[np++] = (uint8_t)i;
		}
	if (e == 0)
		return 0;
	if (np < e) /* the front end guarantees this cannot happen */
		return -SDR_EC_ENOTRECOVERABLE;

	if (s->cached_e != e || memcmp(s->cached_d, s->d_idx, e) != 0 ||
	    memcmp(s->cached_p, s->p_idx, e) != 0) {
		s->cached_e = 0;
		rc = isal_build_tables(s, e);
		if (rc != 0)
			return rc;
	}
	if (s->gdec != NULL)
		sdr_ec_gfni_dot(len, k, e, s->gdec, (const uint8_t *const *)s->src, s->out);
	else
		ec_encode_data((int)len, (int)k, (int)e, s->dec_tbls, s->src, s->out);
	return 0;
}

static int gfni_encode(void *priv, const uint8_t *const *data, uint8_t *const *parity, size_t len)
{
	const struct ec_isal *s = priv;

	sdr_ec_gfni_dot(len, s->k, s->m, s->genc, data, parity);
	return 0;
}

static int gfni_encode_update(void *priv, unsigned int i, const uint8_t *data,
			      uint8_t *const *parity, size_t len)
{
	const struct ec_isal *s = priv;

	sdr_ec_gfni_mad(len, s->k, s->m, i, s->genc, data, parity);
	return 0;
}

const struct sdr_ec_ops sdr_ec_isal_rs_ops = {
	.name = "isal-rs",
	.code = SDR_EC_RS,
	.max_len = INT_MAX,
	.init = isal_init,
	.fini = isal_fini,
	.encode = isal_encode,
	.decode = isal_decode,
	.encode_update = isal_encode_update,
};

const struct sdr_ec_ops sdr_ec_gfni_rs_ops = {
	.name = "isal-rs-gfni",
	.code = SDR_EC_RS,
	.max_len = INT_MAX,
	.init = gfni_init,
	.fini = isal_fini,
	.encode = gfni_encode,
	.decode = isal_decode,
	.encode_update = gfni_encode_update,
};
