/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
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
		case 'k': case 'K': mul = 1ull << 10; break;
		case 'm': case 'M': mul = 1ull << 20; break;
		case 'g': case 'G': mul = 1ull << 30; break;
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
	case 'k': case 'K': mul = 1e3; end++; break;
	case 'm': case 'M': mul = 1e6; end++; break;
	case 'g': case 'G': mul = 1e9; end++; break;
	case 't': case 'T': mul = 1e12; end++; break;
	}
	if (*end && strcmp(end, "bit") && strcmp(end, "bps") && strcmp(end, "b"))
		return -1;
	if (v * mul > 1e13)
		return -1;
	*bps = (uint64_t)(v * mul);
	return 0;
}
