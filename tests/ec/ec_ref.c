/* SPDX-License-Identifier: BSD-3-Clause */
/* Reference erasure coding for the tests; see ec_ref.h. */
#include "ec_ref.h"

#include <stdlib.h>
#include <string.h>

static uint8_t gf_exp[512];
static uint8_t gf_log[256];

void ref_gf_init(void)
{
	unsigned int x = 1, i;

	/* 2 generates the multiplicative group of GF(2^8) mod x^8+x^4+x^3+x^2+1 */
	for (i = 0; i < 255; i++) {
		gf_exp[i] = (uint8_t)x;
		gf_log[x] = (uint8_t)i;
		x <<= 1;
		if (x & 0x100)
			x ^= 0x11D;
	}
	for (i = 255; i < 512; i++)
		gf_exp[i] = gf_exp[i - 255];
}

uint8_t ref_mul(uint8_t a, uint8_t b)
{
	if (a == 0 || b == 0)
		return 0;
	return gf_exp[gf_log[a] + gf_log[b]];
}

uint8_t ref_inv(uint8_t a)
{
	return gf_exp[255 - gf_log[a]];
}

void ref_generator(enum sdr_ec_code code, unsigned int k, unsigned int m, uint8_t *gen)
{
	unsigned int r, j;

	memset(gen, 0, (size_t)(k + m) * k);
	for (j = 0; j < k; j++)
		gen[j * k + j] = 1;
	for (r = 0; r < m; r++)
		for (j = 0; j < k; j++)
			gen[(size_t)(k + r) * k + j] = code == SDR_EC_RS
							       ? ref_inv((uint8_t)((k + r) ^ j))
							       : (uint8_t)(j % m == r);
}

int ref_invert(unsigned int n, const uint8_t *in, uint8_t *out)
{
	uint8_t *a = malloc((size_t)n * n);
	unsigned int c, r, j;
	int rc = 0;

	if (a == NULL)
		abort();
	memcpy(a, in, (size_t)n * n);
	memset(out, 0, (size_t)n * n);
	for (j = 0; j < n; j++)
		out[j * n + j] = 1;
	for (c = 0; c < n; c++) {
		uint8_t piv, f;

		for (r = c; r < n && a[r * n + c] == 0; r++)
			;
		if (r == n) {
			rc = -1;
			break;
		}
		if (r != c)
			for (j = 0; j < n; j++) {
				uint8_t t = a[r * n + j];
				a[r * n + j] = a[c * n + j];
				a[c * n + j] = t;
				t = out[r * n + j];
				out[r * n + j] = out[c * n + j];
				out[c * n + j] = t;
			}
		piv = ref_inv(a[c * n + c]);
		for (j = 0; j < n; j++) {
			a[c * n + j] = ref_mul(a[c * n + j], piv);
			out[c * n + j] = ref_mul(out[c * n + j], piv);
		}
		for (r = 0; r < n; r++) {
			if (r == c || (f = a[r * n + c]) == 0)
				continue;
			for (j = 0; j < n; j++) {
				a[r * n + j] ^= ref_mul(f, a[c * n + j]);
				out[r * n + j] ^= ref_mul(f, out[c * n + j]);
			}
		}
	}
	free(a);
	return rc;
}

/* Incremental row echelon basis: returns 1 and adds row if it is
 * independent of the basis (basis: nb rows of k, piv: pivot columns). */
static int basis_add(unsigned int k, uint8_t *basis, unsigned int *piv, unsigned int *nb,
		     const uint8_t *row)
{
	uint8_t *v = basis + (size_t)*nb * k;
	unsigned int b, j, p;

	memcpy(v, row, k);
	for (b = 0; b < *nb; b++) {
		uint8_t f = v[piv[b]];

		if (f == 0)
			continue;
		/* basis rows are normalised: 1 at their pivot */
		for (j = 0; j < k; j++)
			v[j] ^= ref_mul(f, basis[(size_t)b * k + j]);
	}
	for (p = 0; p < k && v[p] == 0; p++)
		;
	if (p == k)
		return 0;
	{
		uint8_t inv = ref_inv(v[p]);

		for (j = 0; j < k; j++)
			v[j] = ref_mul(v[j], inv);
	}
	piv[(*nb)++] = p;
	return 1;
}

unsigned int ref_rank(unsigned int k, unsigned int rows, const uint8_t *gen, const uint8_t *present)
{
	uint8_t *basis = malloc((size_t)(k + 1) * k);
	unsigned int *piv = malloc((k + 1) * sizeof(*piv));
	unsigned int nb = 0, r;

	if (basis == NULL || piv == NULL)
		abort();
	for (r = 0; r < rows && nb < k; r++)
		if (present[r])
			basis_add(k, basis, piv, &nb, gen + (size_t)r * k);
	free(basis);
	free(piv);
	return nb;
}

void ref_encode(unsigned int k, unsigned int m, const uint8_t *gen, uint8_t *const *data,
		uint8_t *const *parity, size_t len)
{
	unsigned int r, j;
	size_t b;

	for (r = 0; r < m; r++)
		for (b = 0; b < len; b++) {
			uint8_t acc = 0;

			for (j = 0; j < k; j++)
				acc ^= ref_mul(gen[(size_t)(k + r) * k + j], data[j][b]);
			parity[r][b] = acc;
		}
}

int ref_decode(unsigned int k, unsigned int m, const uint8_t *gen, uint8_t *const *chunks,
	       const uint8_t *present, size_t len, uint8_t *const *out)
{
	uint8_t *basis = malloc((size_t)(k + 1) * k);
	unsigned int *piv = malloc((k + 1) * sizeof(*piv));
	unsigned int *sel = malloc(k * sizeof(*sel));
	uint8_t *s = malloc((size_t)k * k), *inv = malloc((size_t)k * k);
	unsigned int nb = 0, r, i, j;
	size_t b;
	int rc = -1;

	if (basis == NULL || piv == NULL || sel == NULL || s == NULL || inv == NULL)
		abort();
	for (r = 0; r < k + m && nb < k; r++)
		if (present[r] && basis_add(k, basis, piv, &nb, gen + (size_t)r * k))
			sel[nb - 1] = r;
	if (nb == k) {
		for (i = 0; i < k; i++)
			memcpy(s + (size_t)i * k, gen + (size_t)sel[i] * k, k);
		if (ref_invert(k, s, inv) == 0) {
			/* data = S^-1 * selected chunks */
			for (j = 0; j < k; j++)
				for (b = 0; b < len; b++) {
					uint8_t acc = 0;

					for (i = 0; i < k; i++)
						acc ^= ref_mul(inv[(size_t)j * k + i],
							       chunks[sel[i]][b]);
					out[j][b] = acc;
				}
			rc = 0;
		}
	}
	free(basis);
	free(piv);
	free(sel);
	free(s);
	free(inv);
	return rc;
}
