/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The reliability scheme module (common/sdr_scheme.c): every spelling, the
 * QP's and the model's limits (against the rules the callers used to spell
 * out themselves), format/parse round trips, the packed form of
 * struct sdr_qp_info::ec.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sdr_scheme.h"
#include "sdr_test.h"

/* two schemes are equal field by field (not memcmp: no padding assumed) */
#define SCHEME_EQ(a, b) \
	((a)->rel == (b)->rel && (a)->code == (b)->code && (a)->k == (b)->k && (a)->m == (b)->m)

/* the rules as sdr_ec_param_check() and the model spelled them before */
static int qp_ok(unsigned code, unsigned k, unsigned m)
{
	return (code == 1 || code == 2) && k >= 1 && k <= 64 && m >= 1 && m <= 32 &&
	       !(code == 2 && m > k);
}

static int model_ok(unsigned code, unsigned k, unsigned m)
{
	if (code == 1)
		return k >= 1 && m >= 1 && k + m <= 255;
	return code == 2 && k >= 1 && m >= 1 && m <= k && k <= 4096;
}

static void test_spellings(void)
{
	static const struct sdr_scheme dflt = SDR_SCHEME_EC_DEFAULT;
	struct sdr_scheme s;
	char buf[SDR_SCHEME_STR_MAX];

	CHECK(sdr_scheme_parse("none", 0, NULL, &s) == 0 && s.rel == SDR_REL_NONE && !s.code);
	CHECK(sdr_scheme_parse("sr", 0, NULL, &s) == 0 && s.rel == SDR_REL_SR);
	CHECK(sdr_scheme_parse("auto", 0, NULL, &s) == 0 && s.rel == SDR_REL_AUTO);
	CHECK(sdr_scheme_parse("rs:32:8", 0, NULL, &s) == 0 && s.rel == SDR_REL_EC &&
	      s.code == SDR_EC_RS && s.k == 32 && s.m == 8);
	CHECK(sdr_scheme_parse("xor:16:4", 0, NULL, &s) == 0 && s.code == SDR_EC_XOR && s.k == 16 &&
	      s.m == 4);
	CHECK(sdr_scheme_parse("ec:rs:8:2", 0, NULL, &s) == 0 && s.code == SDR_EC_RS && s.k == 8 &&
	      s.m == 2);
	CHECK(sdr_scheme_parse("ec", 0, NULL, &s) == -EINVAL);
	CHECK(sdr_scheme_parse("ec", 0, &dflt, &s) == 0 && s.rel == SDR_REL_EC && s.k == 32 &&
	      s.m == 8 && s.code == SDR_EC_RS);
	/* the model's names only when asked for, and then in any case */
	CHECK(sdr_scheme_parse("rs32x8", 0, NULL, &s) == -EINVAL);
	CHECK(sdr_scheme_parse("SR", 0, NULL, &s) == -EINVAL);
	CHECK(sdr_scheme_parse("RS32X8", SDR_SCHEME_MODEL_NAMES, NULL, &s) == 0 && s.k == 32);
	CHECK(sdr_scheme_parse("Mds8x2", SDR_SCHEME_MODEL_NAMES, NULL, &s) == 0 &&
	      s.code == SDR_EC_RS && s.k == 8 && s.m == 2);
	CHECK(sdr_scheme_parse("Auto", SDR_SCHEME_MODEL_NAMES, NULL, &s) == 0 &&
	      s.rel == SDR_REL_AUTO);
	CHECK(sdr_scheme_parse("auto", SDR_SCHEME_SR_EC, NULL, &s) == -EINVAL);
	CHECK(sdr_scheme_parse("none", SDR_SCHEME_SR_EC, NULL, &s) == -EINVAL);
	static const char *const bad[] = {
		"",     "s",       "srr",     "ec:",     "ec:rs",  "rs:8",         "rs:8:",
		":8:2", "rs:8:2:", "rs:+8:2", "rs: 8:2", "RS:8:2", "ec:ec:rs:8:2", "rs:8:2 ",
		" sr",  "xor:2:4", "rs:65:1", "rs:1:33", "rs:0:1", "rs:1:0",       "rs:70000:1",
		"tcp"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		s.rel = 99;
		CHECK(sdr_scheme_parse(bad[i], 0, &dflt, &s) == -EINVAL, "'%s'", bad[i]);
		CHECK(s.rel == 99, "'%s' wrote the result", bad[i]);
	}
	CHECK(sdr_scheme_parse(NULL, 0, NULL, &s) == -EINVAL);
	CHECK(sdr_scheme_parse("sr", 0, NULL, NULL) == -EINVAL);
	/* the model's limits are not a QP's */
	CHECK(sdr_scheme_parse("rs:200:50", 0, NULL, &s) == -EINVAL);
	CHECK(sdr_scheme_parse("rs:200:50", SDR_SCHEME_MODEL, NULL, &s) == 0);
	CHECK(sdr_scheme_parse("rs:200:56", SDR_SCHEME_MODEL, NULL, &s) == -EINVAL);
	CHECK(sdr_scheme_parse("xor:4096:8", SDR_SCHEME_MODEL, NULL, &s) == 0);
	CHECK(sdr_scheme_parse("xor:4097:8", SDR_SCHEME_MODEL, NULL, &s) == -EINVAL);
	/* formats */
	s = (struct sdr_scheme){SDR_REL_EC, SDR_EC_XOR, 32, 8};
	CHECK(sdr_scheme_format(&s, SDR_SCHEME_SPEC, buf, sizeof(buf)) == 8 &&
	      !strcmp(buf, "xor:32:8"));
	CHECK(sdr_scheme_format(&s, SDR_SCHEME_LABEL, buf, sizeof(buf)) > 0 &&
	      !strcmp(buf, "XOR(32,8)"));
	CHECK(sdr_scheme_format(&s, SDR_SCHEME_EC_PREFIX, buf, sizeof(buf)) > 0 &&
	      !strcmp(buf, "ec:xor:32:8"));
	CHECK(sdr_scheme_format(&s, SDR_SCHEME_SPEC, buf, 8) == -ENOSPC);
	CHECK(sdr_scheme_format(&s, 9, buf, sizeof(buf)) == -EINVAL);
	s = (struct sdr_scheme){SDR_REL_AUTO, 0, 0, 0};
	CHECK(sdr_scheme_format(&s, SDR_SCHEME_SPEC, buf, sizeof(buf)) == 4 &&
	      !strcmp(buf, "auto"));
	CHECK(sdr_scheme_format(&s, SDR_SCHEME_LABEL, buf, sizeof(buf)) > 0 &&
	      !strcmp(buf, "AUTO"));
	s.rel = 4;
	CHECK(sdr_scheme_format(&s, SDR_SCHEME_SPEC, buf, sizeof(buf)) == -EINVAL);
	CHECK(!strcmp(sdr_rel_name(SDR_REL_EC), "ec") && !strcmp(sdr_rel_name(7), "?"));
	CHECK(!strcmp(sdr_ec_code_name(SDR_EC_XOR), "xor") && !strcmp(sdr_ec_code_name(0), "?"));
}

/* every (code, k, m) in a box around the limits: the check equals the old
 * rules, and what passes survives format -> parse and pack -> unpack */
static void test_limits(void)
{
	unsigned n = 0;

	for (unsigned code = 0; code <= 3; code++)
		for (unsigned k = 0; k <= 300; k++)
			for (unsigned m = 0; m <= 70; m++) {
				struct sdr_scheme s = {SDR_REL_EC, (uint8_t)code, (uint16_t)k,
						       (uint16_t)m},
						  r;
				char buf[SDR_SCHEME_STR_MAX];
				int qp = qp_ok(code, k, m);

				CHECK_OR_BREAK((sdr_scheme_check(&s, 0) == 0) == qp);
				CHECK_OR_BREAK((sdr_ec_param_check(code, k, m) == 0) == qp);
				CHECK_OR_BREAK((sdr_scheme_check(&s, SDR_SCHEME_MODEL) == 0) ==
					       model_ok(code, k, m));
				if (!qp)
					continue;
				n++;
				CHECK_OR_BREAK(sdr_scheme_format(&s, SDR_SCHEME_SPEC, buf,
								 sizeof(buf)) > 0);
				CHECK_OR_BREAK(sdr_scheme_parse(buf, 0, NULL, &r) == 0 &&
					       SCHEME_EQ(&r, &s));
				CHECK_OR_BREAK(
					sdr_scheme_unpack(SDR_REL_EC, sdr_scheme_ec(&s), &r) == 0 &&
					SCHEME_EQ(&r, &s));
				CHECK_OR_BREAK(sdr_ec_param_code(sdr_scheme_ec(&s)) == code &&
					       sdr_ec_param_k(sdr_scheme_ec(&s)) == k &&
					       sdr_ec_param_m(sdr_scheme_ec(&s)) == m);
			}
	CHECK(n == 64 * 32 + 64 * 32 - 32 * 31 / 2);
	/* NONE, SR, AUTO carry no parameters; the packed form only with EC */
	for (unsigned rel = 0; rel <= 4; rel++) {
		struct sdr_scheme s = {(uint8_t)rel, 0, 0, 0};

		CHECK((sdr_scheme_check(&s, 0) == 0) == (rel <= SDR_REL_AUTO && rel != SDR_REL_EC));
		s.k = 1;
		CHECK(rel == SDR_REL_EC || sdr_scheme_check(&s, 0) == -EINVAL);
		CHECK(rel == SDR_REL_EC || sdr_scheme_unpack(rel, 1, NULL) == -EINVAL);
		CHECK(sdr_scheme_ec(&s) == 0 || rel == SDR_REL_EC);
	}
	CHECK(sdr_scheme_unpack(SDR_REL_EC, sdr_ec_param_pack(1, 8, 2) | 0x4000, NULL) == -EINVAL);
	CHECK(sdr_scheme_unpack(SDR_REL_EC, 0, NULL) == -EINVAL); /* code 0 */
	CHECK(sdr_scheme_unpack(SDR_REL_AUTO, 0, NULL) == 0);
}

int main(void)
{
	test_spellings();
	test_limits();
	return t_finish("test_scheme");
}
