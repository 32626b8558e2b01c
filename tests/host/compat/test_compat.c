/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A program linked against libsdr.so.2 as first released (sdr_scheme_* under
 * LIBSDR_2, the stand-in of stub.c) runs against today's library, where they
 * moved to LIBSDR_2.1, and sdr_ctx_stats_get, whose struct grew in 2.2 (of
 * LIBSDR_2.2 now): its compat entries (host/libsdr/compat.c) answer.
 * Run with the real library first on the search path (meson.build).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sdr_scheme.h"
#include "sdr_test.h"

/* as the program knew it: struct sdr_ctx_stats of 2.0 (not from sdr.h) */
int sdr_ctx_stats_get(const void *ctx, void *st);

int main(void)
{
	unsigned char st[64];

	struct sdr_scheme s, ec = SDR_SCHEME_EC_DEFAULT, bad = {SDR_REL_EC, SDR_EC_RS, 0, 0};
	char buf[SDR_SCHEME_STR_MAX];
	int n;

	CHECK(sdr_scheme_parse("rs:8:2", 0, &ec, &s) == 0);
	CHECK(s.rel == SDR_REL_EC && s.code == SDR_EC_RS && s.k == 8 && s.m == 2);
	n = sdr_scheme_parse("nonsense", 0, &ec, &s);
	CHECK(n < 0 && n != -99, "%d", n); /* -99: the stand-in answered */
	CHECK(sdr_scheme_check(&s, 0) == 0);
	n = sdr_scheme_check(&bad, 0);
	CHECK(n < 0 && n != -99, "%d", n);
	n = sdr_scheme_format(&s, SDR_SCHEME_SPEC, buf, sizeof(buf));
	CHECK(n == 6 && strcmp(buf, "rs:8:2") == 0);
	n = sdr_ctx_stats_get(NULL, st); /* -EINVAL from libsdr; -99 from the stand-in */
	CHECK(n == -EINVAL, "%d", n);
	if (t_failures) {
		fprintf(stderr, "test_compat: %d of %u checks failed\n", t_failures, t_checks);
		return 1;
	}
	printf("PASS: sdr_scheme_*@LIBSDR_2, sdr_ctx_stats_get@LIBSDR_2 answered by the current "
	       "libsdr.so.2\n");
	return 0;
}
