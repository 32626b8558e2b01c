/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of common/sdr_ec*.c, ISA-L style: the codec (ISA-L RS, XOR
 * word loop, front end) against the independent reference in ec_ref.c on
 * random data, random chunk lengths and alignments, and random or exhaustive
 * erasure patterns.
 *
 *   test_ec           all tests (a few seconds; longer under ASan)
 *   test_ec --quick   fewer random patterns per case
 *
 * SDR_TEST_SEED=N overrides the random seed (printed at start).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <isa-l/erasure_code.h>

#include "sdr_test.h"
#include "ec_ref.h"
#include "sdr_ec.h"
#include "sdr_ec_gfni.h"

#define GUARD 16 /* bytes checked on both sides of every chunk */
#define MAXC SDR_EC_MAX_CHUNKS

static int quick;
static unsigned long n_encoded, n_recovered, n_refused, n_intact, n_ref_decoded;

struct stripe {
	enum sdr_ec_code code;
	unsigned int k, m;
	size_t len, span;
	uint8_t *gen;         /* reference generator */
	uint8_t *base[MAXC];  /* span bytes: guard | align | chunk | guard */
	uint8_t *chunk[MAXC]; /* data then parity, len bytes, random alignment */
	uint8_t *orig[MAXC];  /* data as generated, parity as the reference computed */
	uint8_t *snap[MAXC];  /* copy of base[] before a decode */
	uint8_t *ref_out[MAXC];
};

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);

	if (p == NULL) {
		fprintf(stderr, "out of memory\n");
		exit(2);
	}
	return p;
}

static void fill_random(uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)t_rnd();
}

static void stripe_init(struct stripe *s, enum sdr_ec_code code, unsigned int k, unsigned int m,
			size_t len)
{
	unsigned int i;

	memset(s, 0, sizeof(*s));
	s->code = code;
	s->k = k;
	s->m = m;
	s->len = len;
	s->span = len + 2 * GUARD + 8;
	s->gen = xmalloc((size_t)(k + m) * k);
	ref_generator(code, k, m, s->gen);
	for (i = 0; i < k + m; i++) {
		s->base[i] = xmalloc(s->span);
		fill_random(s->base[i], s->span);
		s->chunk[i] = s->base[i] + GUARD + t_below(8);
		s->orig[i] = xmalloc(len);
		s->snap[i] = xmalloc(s->span);
		s->ref_out[i] = xmalloc(len);
	}
	for (i = 0; i < k; i++)
		memcpy(s->orig[i], s->chunk[i], len);
	ref_encode(k, m, s->gen, s->orig, s->orig + k, len);
}

static void stripe_free(struct stripe *s)
{
	unsigned int i;

	for (i = 0; i < s->k + s->m; i++) {
		free(s->base[i]);
		free(s->orig[i]);
		free(s->snap[i]);
		free(s->ref_out[i]);
	}
	free(s->gen);
}

/* Encode with the codec; parity must equal the reference and the data
 * buffers (and all guards) must be unchanged. */
static void check_encode(struct sdr_ec *ec, struct stripe *s)
{
	unsigned int i, k = s->k, m = s->m;
	int rc;

	for (i = 0; i < k + m; i++)
		memcpy(s->snap[i], s->base[i], s->span);
	rc = sdr_ec_encode(ec, (const uint8_t *const *)s->chunk, s->chunk + k, s->len);
	CHECK_EQ(rc, 0);
	n_encoded++;
	for (i = 0; i < k; i++)
		CHECK(memcmp(s->base[i], s->snap[i], s->span) == 0);
	for (i = k; i < k + m; i++) {
		size_t off = (size_t)(s->chunk[i] - s->base[i]);

		if (memcmp(s->chunk[i], s->orig[i], s->len) != 0) {
			fprintf(stderr,
				"encode %s k=%u m=%u len=%zu: parity %u differs from reference\n",
				sdr_ec_code_name(s->code), k, m, s->len, i - k);
			t_failures++;
		}
		CHECK(memcmp(s->base[i], s->snap[i], off) == 0);
		CHECK(memcmp(s->chunk[i] + s->len, s->snap[i] + off + s->len,
			     s->span - off - s->len) == 0);
	}
}

/* One decode trial: erase the chunks not flagged in present (fill them with
 * garbage, sometimes pass NULL for missing parity), decode, and check the
 * result against the original and the reference's own verdict. Assumes the
 * chunks hold the encoded stripe on entry; restores it on exit. */
static void check_pattern(struct sdr_ec *ec, struct stripe *s, const uint8_t *present,
			  int with_ref_decode)
{
	unsigned int i, k = s->k, m = s->m, lost_data = 0;
	uint8_t *ptr[MAXC];
	int recoverable, rc, rc_can;

	for (i = 0; i < k + m; i++) {
		ptr[i] = s->chunk[i];
		if (!present[i]) {
			fill_random(s->chunk[i], s->len);
			lost_data += i < k;
			if (i >= k && (t_rnd() & 1))
				ptr[i] = NULL;
		}
		memcpy(s->snap[i], s->base[i], s->span);
	}
	/* Independent verdict: all data recoverable iff present rows have rank k. */
	recoverable = ref_rank(k, k + m, s->gen, present) == k;

	rc_can = sdr_ec_can_decode(ec, present);
	rc = sdr_ec_decode(ec, ptr, present, s->len);
	if (lost_data == 0)
		n_intact++;
	else if (recoverable)
		n_recovered++;
	else
		n_refused++;
	if (recoverable || lost_data == 0) {
		CHECK_EQ(rc, lost_data);
		CHECK_EQ(rc_can, lost_data);
	} else {
		CHECK_EQ(rc, -EIO);
		CHECK_EQ(rc_can, -EIO);
	}
	for (i = 0; i < k + m; i++) {
		size_t off = (size_t)(s->chunk[i] - s->base[i]);

		if (i < k && !present[i] && rc >= 0) {
			if (memcmp(s->chunk[i], s->orig[i], s->len) != 0) {
				fprintf(stderr,
					"decode %s k=%u m=%u len=%zu: data chunk %u not "
					"recovered\n",
					sdr_ec_code_name(s->code), k, m, s->len, i);
				t_failures++;
			}
			CHECK(memcmp(s->base[i], s->snap[i], off) == 0);
			CHECK(memcmp(s->chunk[i] + s->len, s->snap[i] + off + s->len,
				     s->span - off - s->len) == 0);
		} else if (memcmp(s->base[i], s->snap[i], s->span) != 0) {
			fprintf(stderr, "decode %s k=%u m=%u len=%zu rc=%d: chunk %u written\n",
				sdr_ec_code_name(s->code), k, m, s->len, rc, i);
			t_failures++;
		}
	}
	if (with_ref_decode) {
		/* The reference must agree on recoverability and on the data. */
		int ref_rc = ref_decode(k, m, s->gen, s->chunk, present, s->len, s->ref_out);

		n_ref_decoded++;
		CHECK_EQ(ref_rc == 0, recoverable);
		if (ref_rc == 0)
			for (i = 0; i < k; i++)
				CHECK(memcmp(s->ref_out[i], s->orig[i], s->len) == 0);
	}
	/* restore the encoded stripe */
	for (i = 0; i < k + m; i++)
		memcpy(s->chunk[i], s->orig[i], s->len);
	BAIL_IF_MANY();
}

static void random_pattern(uint8_t *present, unsigned int n, unsigned int erasures)
{
	unsigned int i, e = 0;

	memset(present, 1, n);
	while (e < erasures && e < n) {
		i = (unsigned int)t_below(n);
		if (present[i]) {
			present[i] = 0;
			e++;
		}
	}
}

/* XOR: at most one erasure in each group (data or parity): always repairable. */
static void xor_one_per_group(uint8_t *present, unsigned int k, unsigned int m)
{
	unsigned int g, size;

	memset(present, 1, k + m);
	for (g = 0; g < m; g++) {
		size = (k - g + m - 1) / m; /* data chunks in group g */
		if (t_rnd() & 1) {
			unsigned int pick = (unsigned int)t_below(size + 1);

			present[pick == size ? k + g : g + pick * m] = 0;
		}
	}
}

static void run_case(const struct sdr_ec_ops *ops, unsigned int k, unsigned int m, size_t len,
		     unsigned int n_random, int exhaustive)
{
	enum sdr_ec_code code = ops->code;
	struct sdr_ec *ec = sdr_ec_create_with(ops, k, m);
	struct stripe s;
	uint8_t present[MAXC];
	unsigned int t, n = k + m;
	int ref_budget;

	CHECK(ec != NULL);
	if (ec == NULL)
		return;
	CHECK_EQ(sdr_ec_k(ec), k);
	CHECK_EQ(sdr_ec_m(ec), m);
	stripe_init(&s, code, k, m, len);
	check_encode(ec, &s);
	/* keep the slow reference decode (k^2 * len multiplications) cheap */
	ref_budget = (size_t)k * k * len <= 2000000 ? 3 : 0;

	if (exhaustive) {
		uint32_t mask;

		for (mask = 0; mask < (UINT32_C(1) << n); mask++) {
			for (t = 0; t < n; t++)
				present[t] = (mask >> t) & 1;
			check_pattern(ec, &s, present, ref_budget-- > 0 || len <= 64);
		}
	}
	for (t = 0; t < n_random; t++) {
		unsigned int kind = t % 4;

		if (code == SDR_EC_XOR && kind == 3)
			xor_one_per_group(present, k, m);
		else if (kind == 2)
			/* beyond the code's guarantee (RS: always refused) */
			random_pattern(present, n, m + 1 + (unsigned int)t_below(3));
		else
			random_pattern(present, n, (unsigned int)t_range(1, m));
		check_pattern(ec, &s, present, ref_budget-- > 0);
	}
	/* XOR: two erasures in one group (when the group has two members) */
	if (code == SDR_EC_XOR) {
		memset(present, 1, n);
		present[0] = 0;
		present[k < m + 1 ? k : m] = 0; /* data m, else parity 0 */
		check_pattern(ec, &s, present, 0);
	}
	stripe_free(&s);
	sdr_ec_free(ec);
}

/*
 * A short last submessage (sdr_ec_sub_parity(), common/sdr_scheme.h): nreal
 * real data chunks, the rest zeros the receiver knows, and only the first
 * np parity chunks sent. Reed-Solomon rebuilds any np lost real chunks from
 * them; XOR one lost chunk of each group (every group that holds a real
 * chunk has its parity sent). Checked for every nreal < k, against the
 * reference's rank as well as by decoding.
 */
static void test_short_sub(const struct sdr_ec_ops *ops, unsigned int k, unsigned int m, size_t len)
{
	enum sdr_ec_code code = ops->code;
	uint8_t present[MAXC];
	struct stripe s;
	struct sdr_ec *ec;

	if (sdr_ec_check_params(code, k, m) != 0)
		return;
	ec = sdr_ec_create_with(ops, k, m);
	CHECK(ec != NULL);
	if (!ec)
		return;
	for (unsigned int nreal = 1; nreal < k; nreal++) {
		unsigned int np = sdr_ec_sub_parity(code, k, m, nreal);

		CHECK(np >= 1 && np <= m && np <= (code == SDR_EC_XOR ? nreal : m));
		stripe_init(&s, code, k, m, len);
		for (unsigned int i = nreal; i < k; i++) {
			memset(s.chunk[i], 0, len);
			memset(s.orig[i], 0, len);
		}
		ref_encode(k, m, s.gen, s.orig, s.orig + k, len);
		for (unsigned int j = 0; j < m; j++)
			memcpy(s.chunk[k + j], s.orig[k + j], len);
		check_encode(ec, &s);
		for (unsigned int t = 0; t < 8; t++) {
			unsigned int lost = 0;

			memset(present, 1, k + m);
			for (unsigned int j = np; j < m; j++)
				present[k + j] = 0; /* not sent */
			if (code == SDR_EC_RS) {
				/* np of the real chunks and the sent parity */
				while (lost < np) {
					unsigned int i = (unsigned int)t_below(nreal + np);
					unsigned int c = i < nreal ? i : k + i - nreal;
					if (present[c]) {
						present[c] = 0;
						lost++;
					}
				}
			} else {
				/* one of each group's real chunks and its parity */
				for (unsigned int g = 0; g < np; g++) {
					unsigned int size = (nreal - g + m - 1) / m;
					unsigned int pick = (unsigned int)t_below(size + 1);
					present[pick == size ? k + g : g + pick * m] = 0;
				}
			}
			CHECK_EQ(ref_rank(k, k + m, s.gen, present), k);
			check_pattern(ec, &s, present, t == 0 && (size_t)k * k * len <= 2000000);
		}
		stripe_free(&s);
	}
	sdr_ec_free(ec);
}

/* The reference itself against ISA-L's GF helpers and generator: if these
 * agree, the reference encode is the same code as ISA-L's. */
static void test_reference(void)
{
	static const unsigned int km[][2] = {{2, 1}, {4, 2}, {32, 8}, {200, 55}, {1, 254}};
	unsigned int a, b, i;

	for (a = 0; a < 256; a++) {
		for (b = 0; b < 256; b++)
			if (ref_mul((uint8_t)a, (uint8_t)b) != gf_mul((uint8_t)a, (uint8_t)b)) {
				fprintf(stderr, "ref_mul(%u,%u) != gf_mul\n", a, b);
				t_failures++;
				break;
			}
		if (a)
			CHECK_EQ(ref_mul((uint8_t)a, ref_inv((uint8_t)a)), 1);
	}
	CHECK_EQ(ref_mul(2, 0x80), 0x1D); /* polynomial 0x11D */
	for (i = 0; i < sizeof(km) / sizeof(km[0]); i++) {
		unsigned int k = km[i][0], m = km[i][1];
		uint8_t *g1 = xmalloc((size_t)(k + m) * k), *g2 = xmalloc((size_t)(k + m) * k);
		uint8_t *sq = xmalloc((size_t)k * k), *inv = xmalloc((size_t)k * k);

		gf_gen_cauchy1_matrix(g1, (int)(k + m), (int)k);
		ref_generator(SDR_EC_RS, k, m, g2);
		CHECK(memcmp(g1, g2, (size_t)(k + m) * k) == 0);
		/* MDS: the last k rows (some parity, the rest identity) invert */
		memcpy(sq, g2 + (size_t)m * k, (size_t)k * k);
		CHECK_EQ(ref_invert(k, sq, inv), 0);
		free(g1);
		free(g2);
		free(sq);
		free(inv);
	}
	{
		/* a singular matrix is detected */
		const uint8_t sing[4] = {3, 5, 3, 5};
		uint8_t out[4];

		CHECK_EQ(ref_invert(2, sing, out), -1);
	}
}

static void test_params(void)
{
	struct sdr_ec *ec;
	enum sdr_ec_code c;

	errno = 0;
	CHECK(sdr_ec_create(SDR_EC_RS, 0, 1) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(sdr_ec_create(SDR_EC_RS, 1, 0) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(sdr_ec_create(SDR_EC_RS, 200, 56) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(sdr_ec_create(SDR_EC_RS, UINT_MAX, 2) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(sdr_ec_create(SDR_EC_XOR, 2, 3) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(sdr_ec_create((enum sdr_ec_code)7, 4, 2) == NULL && errno == EINVAL);
	errno = 0;
	CHECK(sdr_ec_create_with(NULL, 4, 2) == NULL && errno == EINVAL);
	CHECK_EQ(sdr_ec_check_params(SDR_EC_RS, 200, 55), 0);
	CHECK_EQ(sdr_ec_check_params(SDR_EC_RS, 1, 254), 0);
	CHECK_EQ(sdr_ec_check_params(SDR_EC_XOR, 5, 5), 0);
	CHECK_EQ(sdr_ec_check_params(SDR_EC_XOR, 5, 6), -EINVAL);

	ec = sdr_ec_create(SDR_EC_RS, 200, 55);
	CHECK(ec != NULL);
	if (ec) {
		/* GFNI where the CPU has it, ISA-L's kernels elsewhere */
		CHECK(strcmp(sdr_ec_backend_name(ec),
			     sdr_ec_gfni_usable() ? "isal-rs-gfni" : "isal-rs") == 0);
		CHECK_EQ(sdr_ec_code_of(ec), SDR_EC_RS);
	}
	sdr_ec_free(ec);
	sdr_ec_free(NULL);
	if (!sdr_ec_gfni_usable()) {
		errno = 0;
		CHECK(sdr_ec_create_with(&sdr_ec_gfni_rs_ops, 4, 2) == NULL && errno == ENOTSUP);
	}

	CHECK(sdr_ec_code_parse("rs", &c) == 0 && c == SDR_EC_RS);
	CHECK(sdr_ec_code_parse("xor", &c) == 0 && c == SDR_EC_XOR);
	CHECK_EQ(sdr_ec_code_parse("RS ", &c), -EINVAL);
	CHECK_EQ(sdr_ec_code_parse(NULL, &c), -EINVAL);
	CHECK(strcmp(sdr_ec_code_name(SDR_EC_XOR), "xor") == 0);
	CHECK(sdr_ec_default_ops(SDR_EC_RS) ==
	      (sdr_ec_gfni_usable() ? &sdr_ec_gfni_rs_ops : &sdr_ec_isal_rs_ops));
	CHECK(sdr_ec_default_ops(SDR_EC_XOR) == &sdr_ec_xor_ops);
	CHECK(sdr_ec_default_ops((enum sdr_ec_code)0) == NULL);
}

/* Invalid arguments: -EINVAL and nothing written. */
static void test_bad_args(enum sdr_ec_code code)
{
	struct sdr_ec *ec = sdr_ec_create(code, 4, 2);
	struct stripe s;
	uint8_t present[6] = {1, 0, 1, 1, 1, 1};
	uint8_t *ptr[6];
	unsigned int i;

	if (ec == NULL) {
		CHECK(ec != NULL);
		return;
	}
	stripe_init(&s, code, 4, 2, 100);
	check_encode(ec, &s);
	CHECK_EQ(sdr_ec_encode(ec, (const uint8_t *const *)s.chunk, s.chunk + 4, 0), -EINVAL);
	CHECK_EQ(sdr_ec_encode(NULL, (const uint8_t *const *)s.chunk, s.chunk + 4, 1), -EINVAL);
	CHECK_EQ(sdr_ec_encode(ec, NULL, s.chunk + 4, 1), -EINVAL);
	CHECK_EQ(sdr_ec_encode(ec, (const uint8_t *const *)s.chunk, NULL, 1), -EINVAL);
	if (code == SDR_EC_RS) /* ISA-L takes an int length */
		CHECK_EQ(sdr_ec_encode(ec, (const uint8_t *const *)s.chunk, s.chunk + 4,
				       (size_t)INT_MAX + 1),
			 -EINVAL);

	for (i = 0; i < 6; i++) {
		ptr[i] = s.chunk[i];
		memcpy(s.snap[i], s.base[i], s.span);
	}
	CHECK_EQ(sdr_ec_decode(ec, ptr, present, 0), -EINVAL);
	CHECK_EQ(sdr_ec_decode(ec, ptr, NULL, 100), -EINVAL);
	CHECK_EQ(sdr_ec_decode(ec, NULL, present, 100), -EINVAL);
	CHECK_EQ(sdr_ec_decode(NULL, ptr, present, 100), -EINVAL);
	CHECK_EQ(sdr_ec_can_decode(ec, NULL), -EINVAL);
	CHECK_EQ(sdr_ec_can_decode(NULL, present), -EINVAL);
	ptr[1] = NULL; /* missing data needs a destination */
	CHECK_EQ(sdr_ec_decode(ec, ptr, present, 100), -EINVAL);
	ptr[1] = s.chunk[1];
	ptr[0] = NULL; /* present chunk needs its bytes */
	CHECK_EQ(sdr_ec_decode(ec, ptr, present, 100), -EINVAL);
	ptr[0] = s.chunk[0];
	for (i = 0; i < 6; i++)
		CHECK(memcmp(s.base[i], s.snap[i], s.span) == 0);
	/* nothing missing: 0, nothing written, even with NULL missing parity */
	memset(present, 1, 4);
	present[4] = 0;
	ptr[4] = NULL;
	CHECK_EQ(sdr_ec_decode(ec, ptr, present, 100), 0);
	for (i = 0; i < 6; i++)
		CHECK(memcmp(s.base[i], s.snap[i], s.span) == 0);
	stripe_free(&s);
	sdr_ec_free(ec);
}

/* The RS decode-table cache must key on the parity rows used, not only on
 * the missing data: same lost data chunk, different surviving parity. */
static void test_rs_cache(void)
{
	struct sdr_ec *ec = sdr_ec_create(SDR_EC_RS, 6, 3);
	struct stripe s;
	static const uint8_t seq[][9] = {
		{0, 1, 1, 1, 1, 1, 0, 1, 1}, /* d0 lost, parity 0 lost: uses p1 */
		{0, 1, 1, 1, 1, 1, 1, 1, 1}, /* d0 lost: uses p0 */
		{0, 1, 1, 1, 1, 1, 0, 1, 1}, {0, 1, 1, 1, 1, 1, 0, 0, 1}, /* uses p2 */
		{0, 0, 1, 1, 1, 1, 0, 1, 1},                              /* d0, d1 from p1, p2 */
		{0, 0, 1, 1, 1, 1, 1, 1, 0},                              /* d0, d1 from p0, p1 */
		{1, 0, 0, 1, 1, 1, 1, 1, 0},
	};
	unsigned int i, rep;

	if (ec == NULL) {
		CHECK(ec != NULL);
		return;
	}
	stripe_init(&s, SDR_EC_RS, 6, 3, 333);
	check_encode(ec, &s);
	for (rep = 0; rep < 2; rep++)
		for (i = 0; i < sizeof(seq) / sizeof(seq[0]); i++)
			check_pattern(ec, &s, seq[i], 0);
	stripe_free(&s);
	sdr_ec_free(ec);
}

/* A backend plugged in through sdr_ec_ops (what a hardware engine would
 * do): here the reference code. The front end must validate for it and
 * never call its decode for unrecoverable patterns. */
static unsigned int mock_k, mock_m, mock_decode_calls;
static int mock_init_rc;
static uint8_t mock_gen[(32 + 8) * 32];

static int mock_init(void **priv, unsigned int k, unsigned int m)
{
	if (mock_init_rc)
		return mock_init_rc;
	if (k > 32 || m > 8)
		return -ENOTSUP;
	mock_k = k;
	mock_m = m;
	ref_generator(SDR_EC_RS, k, m, mock_gen);
	*priv = mock_gen;
	return 0;
}

static void mock_fini(void *priv)
{
	(void)priv;
}

static int mock_encode(void *priv, const uint8_t *const *data, uint8_t *const *parity, size_t len)
{
	ref_encode(mock_k, mock_m, priv, (uint8_t *const *)(uintptr_t)data, parity, len);
	return 0;
}

static int mock_decode(void *priv, uint8_t *const *chunks, const uint8_t *present, size_t len)
{
	uint8_t *out[32];
	unsigned int i;
	int rc;

	mock_decode_calls++;
	for (i = 0; i < mock_k; i++)
		out[i] = xmalloc(len);
	rc = ref_decode(mock_k, mock_m, priv, chunks, present, len, out);
	for (i = 0; i < mock_k; i++) {
		if (rc == 0 && !present[i])
			memcpy(chunks[i], out[i], len);
		free(out[i]);
	}
	return rc == 0 ? 0 : -ENODEV;
}

static void test_plugin_backend(void)
{
	const struct sdr_ec_ops mock = {
		.name = "mock-ref",
		.code = SDR_EC_RS,
		.max_len = 1 << 20,
		.init = mock_init,
		.fini = mock_fini,
		.encode = mock_encode,
		.decode = mock_decode,
	};
	struct sdr_ec_ops broken = mock;
	struct sdr_ec *ec, *isal;
	struct stripe s;
	uint8_t present[40];
	unsigned int t;

	broken.decode = NULL;
	errno = 0;
	CHECK(sdr_ec_create_with(&broken, 4, 2) == NULL && errno == EINVAL);
	mock_init_rc = -ENODEV;
	errno = 0;
	CHECK(sdr_ec_create_with(&mock, 4, 2) == NULL && errno == ENODEV);
	mock_init_rc = 0;

	ec = sdr_ec_create_with(&mock, 32, 8);
	isal = sdr_ec_create(SDR_EC_RS, 32, 8);
	CHECK(ec != NULL && isal != NULL);
	if (ec == NULL || isal == NULL) {
		sdr_ec_free(ec);
		sdr_ec_free(isal);
		return;
	}
	CHECK(strcmp(sdr_ec_backend_name(ec), "mock-ref") == 0);
	stripe_init(&s, SDR_EC_RS, 32, 8, 77);
	/* no incremental encode in this backend: the caller is told so */
	CHECK(!sdr_ec_has_update(ec) && sdr_ec_has_update(isal));
	CHECK_EQ(sdr_ec_encode_update(ec, 0, s.chunk[0], s.chunk + 32, 77), -ENOTSUP);
	check_encode(ec, &s);
	check_encode(isal, &s);
	CHECK_EQ(sdr_ec_encode(ec, (const uint8_t *const *)s.chunk, s.chunk + 32, (1 << 20) + 1),
		 -EINVAL);
	for (t = 0; t < 8; t++) {
		unsigned int before = mock_decode_calls;

		random_pattern(present, 40, t < 4 ? 9 + t : 1 + t);
		check_pattern(ec, &s, present, 0);
		if (t < 4)
			CHECK_EQ(mock_decode_calls, before); /* refused by the front end */
	}
	stripe_free(&s);
	sdr_ec_free(ec);
	sdr_ec_free(isal);
}

/*
 * Incremental encode (sdr_ec_encode_update()) against the reference encoder:
 * the parity of k random data chunks of @p len bytes, some of them zero
 * chunks (never added) and some with a zero tail (added with their real
 * length only: the firmware's padded last chunk), each added in one to
 * three pieces, the chunks in a random order, into zeroed parity. Guard
 * bytes around every parity chunk stay untouched; the data too.
 */
static void check_update(struct sdr_ec *ec, enum sdr_ec_code code, unsigned int k, unsigned int m,
			 size_t len)
{
	uint8_t *data[SDR_EC_K_MAX], *par[SDR_EC_M_MAX], *ref[SDR_EC_M_MAX], *pbase[SDR_EC_M_MAX];
	uint8_t *dcopy[SDR_EC_K_MAX];
	size_t real[SDR_EC_K_MAX];
	unsigned int order[SDR_EC_K_MAX], i, j;
	uint8_t *gen = xmalloc((size_t)(k + m) * k);

	ref_generator(code, k, m, gen);
	for (i = 0; i < k; i++) {
		unsigned int kind = t_below(8); /* 0: zero chunk, 1: zero tail, else whole */

		data[i] = xmalloc(len);
		dcopy[i] = xmalloc(len);
		real[i] = kind == 0 ? 0 : kind == 1 ? t_below((uint32_t)len) + 1 : len;
		if (i == 0 && real[i] == 0)
			real[i] = len; /* (a submessage's first chunk is real) */
		memset(data[i], 0, len);
		fill_random(data[i], real[i]);
		memcpy(dcopy[i], data[i], len);
		order[i] = i;
	}
	for (j = 0; j < m; j++) {
		pbase[j] = xmalloc(len + 2 * GUARD);
		memset(pbase[j], 0xEE, len + 2 * GUARD);
		par[j] = pbase[j] + GUARD;
		memset(par[j], 0, len);
		ref[j] = xmalloc(len);
	}
	ref_encode(k, m, gen, data, ref, len);
	for (i = k; i > 1; i--) { /* shuffle */
		unsigned int r = t_below(i), t = order[i - 1];

		order[i - 1] = order[r];
		order[r] = t;
	}
	for (i = 0; i < k; i++) {
		unsigned int c = order[i];
		size_t off = 0, n = real[c];

		while (off < n) {
			size_t piece = t_below(3) ? n - off : t_below((uint32_t)(n - off)) + 1;
			uint8_t *p[SDR_EC_M_MAX];

			for (j = 0; j < m; j++)
				p[j] = par[j] + off;
			CHECK_EQ(sdr_ec_encode_update(ec, c, data[c] + off, p, piece), 0);
			off += piece;
		}
	}
	n_encoded++;
	for (j = 0; j < m; j++) {
		if (memcmp(par[j], ref[j], len) != 0) {
			fprintf(stderr,
				"update %s k=%u m=%u len=%zu: parity %u differs from reference\n",
				sdr_ec_code_name(code), k, m, len, j);
			t_failures++;
		}
		for (size_t b = 0; b < GUARD; b++)
			CHECK_OR_BREAK(pbase[j][b] == 0xEE && pbase[j][GUARD + len + b] == 0xEE);
		free(pbase[j]);
		free(ref[j]);
	}
	for (i = 0; i < k; i++) {
		CHECK(memcmp(data[i], dcopy[i], len) == 0);
		free(data[i]);
		free(dcopy[i]);
	}
	free(gen);
}

/* Every (k, m) the firmware accepts (k <= SDR_EC_K_MAX, m <= SDR_EC_M_MAX),
 * both codes, short random lengths; then chunk-sized ones. And the errors. */
static void test_update(const struct sdr_ec_ops *const *backends, unsigned int nb)
{
	static const unsigned int big[][2] = {{32, 8}, {4, 2}, {64, 32}, {16, 4}};
	static const size_t big_len[] = {4096, 4097, 1000};
	unsigned long before = n_encoded;
	uint8_t buf[3][64], *p[3] = {buf[0], buf[1], buf[2]};
	struct sdr_ec *ec;

	for (unsigned int c = 0; c < nb; c++) {
		enum sdr_ec_code code = backends[c]->code;

		for (unsigned int k = 1; k <= SDR_EC_K_MAX; k++)
			for (unsigned int m = 1; m <= SDR_EC_M_MAX; m++) {
				if (sdr_ec_check_params(code, k, m) != 0 ||
				    (quick && (k + m) % 5 != 0))
					continue;
				ec = sdr_ec_create_with(backends[c], k, m);
				CHECK(ec != NULL && sdr_ec_has_update(ec));
				if (ec == NULL)
					continue;
				check_update(ec, code, k, m, 1 + t_below(40));
				sdr_ec_free(ec);
			}
		for (unsigned int i = 0; i < sizeof(big) / sizeof(big[0]); i++) {
			ec = sdr_ec_create_with(backends[c], big[i][0], big[i][1]);
			CHECK(ec != NULL);
			if (ec == NULL)
				continue;
			for (unsigned int l = 0; l < sizeof(big_len) / sizeof(big_len[0]); l++)
				check_update(ec, code, big[i][0], big[i][1], big_len[l]);
			sdr_ec_free(ec);
		}
	}
	printf("test_ec: incremental encode checked on %lu stripes\n", n_encoded - before);

	ec = sdr_ec_create(SDR_EC_RS, 2, 3);
	CHECK(ec != NULL);
	memset(buf, 0, sizeof(buf));
	CHECK_EQ(sdr_ec_encode_update(ec, 2, buf[0], p, 8), -EINVAL); /* i >= k */
	CHECK_EQ(sdr_ec_encode_update(ec, 0, buf[0], p, 0), -EINVAL);
	CHECK_EQ(sdr_ec_encode_update(ec, 0, NULL, p, 8), -EINVAL);
	CHECK_EQ(sdr_ec_encode_update(ec, 0, buf[0], NULL, 8), -EINVAL);
	CHECK_EQ(sdr_ec_encode_update(NULL, 0, buf[0], p, 8), -EINVAL);
	p[2] = NULL;
	CHECK_EQ(sdr_ec_encode_update(ec, 0, buf[0], p, 8), -EINVAL);
	CHECK(!sdr_ec_has_update(NULL));
	sdr_ec_free(ec);
}

int main(int argc, char **argv)
{
	static const unsigned int km[][2] = {
		{1, 1},  {2, 1},  {3, 1},  {3, 2},  {4, 2},  {5, 2},  {6, 3},
		{7, 3},  {8, 4},  {9, 4},  {10, 4}, {12, 4}, {16, 4}, {20, 5},
		{24, 6}, {28, 7}, {32, 7}, {32, 8}, {32, 1}, {1, 8},  {8, 8},
	};
	static const size_t lens[] = {1,  2,  3,  7,   8,   15,  16,   17,   31,   32,  33,
				      63, 64, 65, 100, 255, 256, 1000, 4095, 4096, 4097};
	static const unsigned int exh[][2] = {{2, 1}, {4, 2}, {5, 2}, {6, 3}, {8, 4}};
	/* every software backend this CPU runs: ISA-L's RS, its GFNI variant, XOR */
	const struct sdr_ec_ops *backends[3] = {&sdr_ec_isal_rs_ops, &sdr_ec_xor_ops,
						&sdr_ec_gfni_rs_ops};
	unsigned int nb = sdr_ec_gfni_usable() ? 3 : 2, c, i, j;

	quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
	t_seed("test_ec", 0x5EC0DE);
	ref_gf_init();

	test_reference();
	test_params();
	test_bad_args(SDR_EC_RS);
	test_bad_args(SDR_EC_XOR);
	test_rs_cache();
	test_plugin_backend();
	test_update(backends, nb);

	for (c = 0; c < nb; c++) {
		const struct sdr_ec_ops *ops = backends[c];

		printf("test_ec: backend %s\n", ops->name);
		/* every erasure pattern of small codes */
		for (i = 0; i < sizeof(exh) / sizeof(exh[0]); i++) {
			run_case(ops, exh[i][0], exh[i][1], 1, 0, 1);
			run_case(ops, exh[i][0], exh[i][1], 17 + t_below(64), 0, 1);
		}
		/* random patterns, every length, random alignment */
		for (i = 0; i < sizeof(km) / sizeof(km[0]); i++) {
			unsigned int k = km[i][0], m = km[i][1];

			if (sdr_ec_check_params(ops->code, k, m) != 0)
				continue;
			for (j = 0; j < sizeof(lens) / sizeof(lens[0]); j++)
				run_case(ops, k, m, lens[j], quick ? 4 : 12, 0);
		}
		/* short last submessages, parity in proportion */
		test_short_sub(ops, 32, 8, 100);
		test_short_sub(ops, 8, 2, 4097);
		test_short_sub(ops, 16, 4, 33);
		test_short_sub(ops, 5, 8, 17);
		/* large codes, few lengths */
		run_case(ops, 128, 64, 33, quick ? 4 : 8, 0);
		run_case(ops, 200, 55, 5, quick ? 4 : 8, 0);
		if (ops->code == SDR_EC_RS)
			run_case(ops, 1, 254, 19, quick ? 4 : 8, 0);
		run_case(ops, 32, 8, 65536 + 13, 4, 0);
	}
	printf("test_ec: %lu encodes checked; decode patterns: %lu recovered, %lu refused, "
	       "%lu with no data lost; %lu also decoded by the reference\n",
	       n_encoded, n_recovered, n_refused, n_intact, n_ref_decoded);
	return t_finish("test_ec");
}
