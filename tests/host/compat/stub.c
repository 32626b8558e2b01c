/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stand-in for an old libsdr.so.2 (tests only): the sdr_scheme_* entries
 * and sdr_ctx_stats_get (its struct before 2.2) under LIBSDR_2
 * (libsdr_2_0.map), to link test_compat against. Each answers -99, so a run
 * that reached this library instead of the real one fails.
 */
#include <stddef.h>

#include "sdr_scheme.h"

int sdr_ctx_stats_get(const void *ctx, void *st);
int sdr_ctx_stats_get(const void *ctx, void *st)
{
	(void)ctx;
	(void)st;
	return -99;
}

int sdr_scheme_check(const struct sdr_scheme *s, unsigned flags)
{
	(void)s;
	(void)flags;
	return -99;
}

int sdr_scheme_parse(const char *s, unsigned flags, const struct sdr_scheme *ec_default,
		     struct sdr_scheme *out)
{
	(void)s;
	(void)flags;
	(void)ec_default;
	(void)out;
	return -99;
}

int sdr_scheme_format(const struct sdr_scheme *s, unsigned style, char *buf, size_t len)
{
	(void)s;
	(void)style;
	(void)buf;
	(void)len;
	return -99;
}
