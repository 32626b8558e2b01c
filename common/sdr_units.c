/* SPDX-License-Identifier: BSD-3-Clause */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sdr_units.h"

int sdr_parse_u64(const char *s, uint64_t *v, int suffixes)
{
	char *end;
	unsigned long long x;
	uint64_t mul = 1;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	x = strtoull(s, &end, 0);
	if (errno || end == s)
		return -1;
	if (suffixes && *end) {
		switch (*end) {
		case 'k':
		case 'K': mul = 1ull << 10; break;
		case 'm':
		case 'M': mul = 1ull << 20; break;
		case 'g':
		case 'G': mul = 1ull << 30; break;
		default: return -1;
		}
		end++;
		if (*end && strcmp(end, "B") && strcmp(end, "iB"))
			return -1;
		end += strlen(end);
		if (x > UINT64_MAX / mul)
			return -1;
	}
	if (*end)
		return -1;
	*v = x * mul;
	return 0;
}

int sdr_parse_rate(const char *s, uint64_t *bps)
{
	char *end;
	double v, mul = 1;

	if (!s || !*s || *s == '-')
		return -1;
	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || !(v >= 0))
		return -1;
	switch (*end) {
	case 'k':
	case 'K':
		mul = 1e3;
		end++;
		break;
	case 'm':
	case 'M':
		mul = 1e6;
		end++;
		break;
	case 'g':
	case 'G':
		mul = 1e9;
		end++;
		break;
	case 't':
	case 'T':
		mul = 1e12;
		end++;
		break;
	}
	if (*end && strcmp(end, "bit") && strcmp(end, "bps") && strcmp(end, "b"))
		return -1;
	if (v * mul > 1e13)
		return -1;
	*bps = (uint64_t)(v * mul);
	return 0;
}

int sdr_parse_duration(const char *s, int bare, enum sdr_time_unit out, double *v,
		       const char **rest)
{
	static const struct {
		const char *name;
		int exp;
	} units[] = {
		{"s", SDR_TIME_S}, {"ms", SDR_TIME_MS}, {"us", SDR_TIME_US}, {"ns", SDR_TIME_NS}};
	/* exact powers of ten, index 9 + (out - unit) */
	static const double p10[19] = {1e-9, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1,
				       1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9};
	char *e;
	double x;
	int unit;

	if (rest)
		*rest = s;
	/* digits, or a dot and a digit, first: strtod alone would also take a
	 * sign, spaces, "inf", "nan" and hex */
	if (!s || !(isdigit((unsigned char)s[0]) || (s[0] == '.' && isdigit((unsigned char)s[1]))))
		return SDR_TIME_ENUM;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return SDR_TIME_ENUM;
	errno = 0;
	x = strtod(s, &e);
	if (errno || !isfinite(x) || x < 0)
		return SDR_TIME_ENUM;
	if (rest)
		*rest = e;
	if (*e == '\0') {
		if (bare == SDR_TIME_UNIT_NEEDED && x != 0)
			return SDR_TIME_ENOUNIT;
		unit = bare == SDR_TIME_UNIT_NEEDED ? (int)out : bare;
	} else {
		unit = -1;
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
			if (strcmp(e, units[i].name) == 0)
				unit = units[i].exp;
		if (unit < 0)
			return SDR_TIME_EUNIT;
	}
	*v = x * p10[9 + (int)out - unit];
	return 0;
}
