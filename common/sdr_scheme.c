/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reliability schemes (sdr_scheme.h): the one parser, formatter and checker
 * of "none", "sr", "auto", "rs:K:M", "xor:K:M" and their other spellings.
 * Every input is treated as hostile.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "sdr_scheme.h"

int sdr_scheme_check(const struct sdr_scheme *s, unsigned flags)
{
	if (s == NULL)
		return -EINVAL;
	if ((flags & SDR_SCHEME_SR_EC) && s->rel != SDR_REL_SR && s->rel != SDR_REL_EC)
		return -EINVAL;
	switch (s->rel) {
	case SDR_REL_NONE:
	case SDR_REL_SR:
	case SDR_REL_AUTO: return s->code || s->k || s->m ? -EINVAL : 0;
	case SDR_REL_EC: break;
	default: return -EINVAL;
	}
	if (s->code != SDR_EC_RS && s->code != SDR_EC_XOR)
		return -EINVAL;
	if (s->k < 1 || s->m < 1 || (s->code == SDR_EC_XOR && s->m > s->k))
		return -EINVAL;
	if (flags & SDR_SCHEME_MODEL)
		return s->code == SDR_EC_RS ? (s->k + s->m > SDR_SCHEME_MODEL_KM_MAX ? -EINVAL : 0)
					    : (s->k > SDR_SCHEME_MODEL_XOR_K_MAX ? -EINVAL : 0);
	return s->k > SDR_EC_K_MAX || s->m > SDR_EC_M_MAX ? -EINVAL : 0;
}

/* Decimal digits only (no sign, no spaces, no 0x), at most 65535; *p moves
 * past them. */
static int number(const char **p, unsigned *v)
{
	const char *s = *p;
	unsigned x = 0;

	if (!isdigit((unsigned char)*s))
		return -1;
	for (; isdigit((unsigned char)*s); s++) {
		x = x * 10 + (unsigned)(*s - '0');
		if (x > 65535)
			return -1;
	}
	*p = s;
	*v = x;
	return 0;
}

/* "K<sep>M" and nothing after it */
static int km(const char *s, char sep, int fold, unsigned *k, unsigned *m)
{
	if (number(&s, k))
		return -1;
	if (fold ? tolower((unsigned char)*s) != sep : *s != sep)
		return -1;
	s++;
	return number(&s, m) || *s ? -1 : 0;
}

static int model_name(const char *s, struct sdr_scheme *r)
{
	static const struct {
		const char *prefix;
		uint8_t code;
	} names[] = {{"rs", SDR_EC_RS}, {"mds", SDR_EC_RS}, {"xor", SDR_EC_XOR}};
	unsigned k, m;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		size_t n = strlen(names[i].prefix);

		if (strncasecmp(s, names[i].prefix, n) == 0 && km(s + n, 'x', 1, &k, &m) == 0) {
			*r = (struct sdr_scheme){SDR_REL_EC, names[i].code, (uint16_t)k,
						 (uint16_t)m};
			return 0;
		}
	}
	return -1;
}

int sdr_scheme_parse(const char *s, unsigned flags, const struct sdr_scheme *ec_default,
		     struct sdr_scheme *out)
{
	static const char *const kw[] = {
		[SDR_REL_NONE] = "none", [SDR_REL_SR] = "sr", [SDR_REL_AUTO] = "auto"};
	int fold = (flags & SDR_SCHEME_MODEL_NAMES) != 0;
	struct sdr_scheme r = {0, 0, 0, 0};
	enum sdr_ec_code code;
	const char *colon;
	char name[8];
	unsigned k, m;

	if (s == NULL || out == NULL)
		return -EINVAL;
	for (unsigned i = 0; i < sizeof(kw) / sizeof(kw[0]); i++)
		if (kw[i] && (fold ? strcasecmp(s, kw[i]) : strcmp(s, kw[i])) == 0) {
			r.rel = (uint8_t)i;
			goto done;
		}
	if (strcmp(s, "ec") == 0) {
		if (ec_default == NULL || ec_default->rel != SDR_REL_EC)
			return -EINVAL;
		r = *ec_default;
		goto done;
	}
	if (strncmp(s, "ec:", 3) == 0)
		s += 3;
	colon = strchr(s, ':');
	if (colon && (size_t)(colon - s) < sizeof(name)) {
		memcpy(name, s, (size_t)(colon - s));
		name[colon - s] = '\0';
		if (sdr_ec_code_parse(name, &code) || km(colon + 1, ':', 0, &k, &m))
			return -EINVAL;
		r = (struct sdr_scheme){SDR_REL_EC, (uint8_t)code, (uint16_t)k, (uint16_t)m};
		goto done;
	}
	if (!fold || model_name(s, &r))
		return -EINVAL;
done:
	if (sdr_scheme_check(&r, flags))
		return -EINVAL;
	*out = r;
	return 0;
}

int sdr_scheme_format(const struct sdr_scheme *s, unsigned style, char *buf, size_t len)
{
	static const char *const spec[] = {"none", "sr", "ec", "auto"};
	static const char *const label[] = {"NONE", "SR", "EC", "AUTO"};
	int n;

	if (s == NULL || buf == NULL || s->rel > SDR_REL_AUTO || style > SDR_SCHEME_EC_PREFIX)
		return -EINVAL;
	if (s->rel != SDR_REL_EC)
		n = snprintf(buf, len, "%s",
			     style == SDR_SCHEME_LABEL ? label[s->rel] : spec[s->rel]);
	else if (style == SDR_SCHEME_LABEL)
		n = snprintf(buf, len, "%s(%u,%u)", s->code == SDR_EC_XOR ? "XOR" : "RS", s->k,
			     s->m);
	else
		n = snprintf(buf, len, "%s%s:%u:%u", style == SDR_SCHEME_EC_PREFIX ? "ec:" : "",
			     sdr_ec_code_name(s->code), s->k, s->m);
	if (n < 0)
		return -EINVAL;
	return (size_t)n >= len ? -ENOSPC : n;
}

int sdr_ec_param_check(unsigned code, unsigned k, unsigned m)
{
	struct sdr_scheme s = {SDR_REL_EC, (uint8_t)code, (uint16_t)k, (uint16_t)m};

	if (code > 255 || k > 65535 || m > 65535)
		return -EINVAL;
	return sdr_scheme_check(&s, 0);
}

int sdr_ec_param_parse(const char *s, unsigned *code, unsigned *k, unsigned *m)
{
	struct sdr_scheme r;

	/* the canonical EC spelling only: not "ec:rs:K:M", "none", ... */
	if (s == NULL || code == NULL || k == NULL || m == NULL || strncmp(s, "ec", 2) == 0 ||
	    sdr_scheme_parse(s, 0, NULL, &r) || r.rel != SDR_REL_EC)
		return -EINVAL;
	*code = r.code;
	*k = r.k;
	*m = r.m;
	return 0;
}

#ifdef SDR_LIBSDR_SYMVER
/* Built into libsdr.so (host/libsdr/meson.build): these three are of
 * LIBSDR_2.1 (host/libsdr/libsdr.map); host/libsdr/compat.c answers the
 * LIBSDR_2 names that programs linked before 2.1 ask for. */
__asm__(".symver sdr_scheme_check, sdr_scheme_check@@@LIBSDR_2.1");
__asm__(".symver sdr_scheme_parse, sdr_scheme_parse@@@LIBSDR_2.1");
__asm__(".symver sdr_scheme_format, sdr_scheme_format@@@LIBSDR_2.1");
#endif
