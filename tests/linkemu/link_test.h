/* SPDX-License-Identifier: BSD-3-Clause */
/* Confidence intervals for the link emulator tests (CHECK: tests/sdr_test.h). */
#ifndef SDR_LINK_TEST_H
#define SDR_LINK_TEST_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "sdr_link.h"
#include "sdr_test.h"

/* A link from a spec known to be good (a bad one ends the test: exit 2). */
static inline void lt_mk(struct sdr_link *l, const char *spec)
{
	struct sdr_link_cfg c;
	char err[256];

	if (sdr_link_parse(spec, &c, err, sizeof(err)) != 0 || sdr_link_init(l, &c) != 0) {
		fprintf(stderr, "bad spec in test: %s: %s\n", spec, err);
		exit(2);
	}
}

/* One's-complement sum of a 20-byte IPv4 header: 0xffff when its checksum
 * is right. */
static inline unsigned lt_ip4_fold(const unsigned char *h)
{
	unsigned s = 0;

	for (int i = 0; i < 20; i += 2)
		s += (unsigned)(h[i] << 8 | h[i + 1]);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return s;
}

/* z for a two-sided 99.9 % interval */
#define LT_Z999 3.2905

/* Wilson score interval of k successes out of n at z; is p inside? */
static inline int lt_wilson_contains(unsigned long long k, unsigned long long n, double p, double z,
				     double *lo, double *hi)
{
	double ph = (double)k / (double)n, nn = (double)n, z2 = z * z;
	double centre = (ph + z2 / (2 * nn)) / (1 + z2 / nn);
	double half = z / (1 + z2 / nn) * sqrt(ph * (1 - ph) / nn + z2 / (4 * nn * nn));

	*lo = centre - half;
	*hi = centre + half;
	return p >= *lo && p <= *hi;
}

/* CHECK that a binomial count matches probability p (99.9 % Wilson). */
#define CHECK_RATE(what, k, n, p)                                                            \
	do {                                                                                 \
		double lo_, hi_;                                                             \
		int ok_ = lt_wilson_contains((k), (n), (p), LT_Z999, &lo_, &hi_);            \
		CHECK(ok_, "%s: %llu/%llu = %.6g, 99.9%% interval [%.6g, %.6g] misses %.6g", \
		      (what), (unsigned long long)(k), (unsigned long long)(n),              \
		      (double)(k) / (double)(n), lo_, hi_, (double)(p));                     \
	} while (0)

static inline int lt_finish(const char *name)
{
	printf("%s: %u checks, %u failed\n", name, t_checks, (unsigned)t_failures);
	printf("%u passed, %u failed\n", t_checks - (unsigned)t_failures, (unsigned)t_failures);
	return (unsigned)t_failures == 0 ? 0 : 1;
}

#endif
