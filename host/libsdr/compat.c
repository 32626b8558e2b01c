/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libsdr's compatibility symbols (host/libsdr/, the library's edge): the
 * sdr_scheme_* functions were first released under LIBSDR_2 and now belong
 * to LIBSDR_2.1 (libsdr.map). Programs linked then ask for
 * sdr_scheme_*@LIBSDR_2: these entries answer them with the same code.
 * sdr_ctx_stats_get@LIBSDR_2 fills struct sdr_ctx_stats as it was before 2.2.
 */
#include <stddef.h>

#include "sdr.h"
#include "sdr_scheme.h"

#define SDR_COMPAT(name, ver) __asm__(".symver " #name "_compat, " #name "@" ver)

SDR_COMPAT(sdr_scheme_check, "LIBSDR_2");
SDR_COMPAT(sdr_scheme_parse, "LIBSDR_2");
SDR_COMPAT(sdr_scheme_format, "LIBSDR_2");
SDR_COMPAT(sdr_ctx_stats_get, "LIBSDR_2");

/* setup.c: the 2.0 fields only */
int libsdr_ctx_stats_get_2_0(const struct sdr_ctx *ctx, struct sdr_ctx_stats *st);

#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

int sdr_scheme_check_compat(const struct sdr_scheme *s, unsigned flags);
int sdr_scheme_parse_compat(const char *s, unsigned flags, const struct sdr_scheme *ec_default,
			    struct sdr_scheme *out);
int sdr_scheme_format_compat(const struct sdr_scheme *s, unsigned style, char *buf, size_t len);
int sdr_ctx_stats_get_compat(const struct sdr_ctx *ctx, struct sdr_ctx_stats *st);

int sdr_ctx_stats_get_compat(const struct sdr_ctx *ctx, struct sdr_ctx_stats *st)
{
	return libsdr_ctx_stats_get_2_0(ctx, st);
}

int sdr_scheme_check_compat(const struct sdr_scheme *s, unsigned flags)
{
	return sdr_scheme_check(s, flags);
}

int sdr_scheme_parse_compat(const char *s, unsigned flags, const struct sdr_scheme *ec_default,
			    struct sdr_scheme *out)
{
	return sdr_scheme_parse(s, flags, ec_default, out);
}

int sdr_scheme_format_compat(const struct sdr_scheme *s, unsigned style, char *buf, size_t len)
{
	return sdr_scheme_format(s, style, buf, len);
}

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif
