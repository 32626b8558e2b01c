/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * common/sdr_units.c: the one duration parser (sdr-pipe, sdr-model and the
 * link emulator use it), and the size and rate parsers every tool shares.
 */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "sdr_test.h"
#include "sdr_units.h"

static int dur(const char *s, int bare, enum sdr_time_unit out, double want)
{
	double v = -1;
	int rc = sdr_parse_duration(s, bare, out, &v, NULL);

	return rc == 0 && v == want;
}

int main(void)
{
	const char *rest;
	double v;
	uint64_t u;

	/* seconds, a bare number in seconds (sdr-pipe, sdr-model) */
	CHECK(dur("1", SDR_TIME_S, SDR_TIME_S, 1.0));
	CHECK(dur("12.5ms", SDR_TIME_S, SDR_TIME_S, 12.5e-3));
	CHECK(dur("250us", SDR_TIME_S, SDR_TIME_S, 250e-6));
	CHECK(dur("77ns", SDR_TIME_S, SDR_TIME_S, 77e-9));
	CHECK(dur("0.025s", SDR_TIME_S, SDR_TIME_S, 0.025));
	CHECK(dur(".5", SDR_TIME_S, SDR_TIME_S, 0.5));
	CHECK(dur("1.5e-3s", SDR_TIME_S, SDR_TIME_S, 1.5e-3));
	/* nanoseconds, a unit required except for 0 (the link emulator),
	 * exact for the usual values */
	CHECK(dur("12.5ms", SDR_TIME_UNIT_NEEDED, SDR_TIME_NS, 12500000.0));
	CHECK(dur("1s", SDR_TIME_UNIT_NEEDED, SDR_TIME_NS, 1e9));
	CHECK(dur("250us", SDR_TIME_UNIT_NEEDED, SDR_TIME_NS, 250000.0));
	CHECK(dur("0", SDR_TIME_UNIT_NEEDED, SDR_TIME_NS, 0.0));
	CHECK(sdr_parse_duration("5", SDR_TIME_UNIT_NEEDED, SDR_TIME_NS, &v, NULL) ==
	      SDR_TIME_ENOUNIT);
	/* a bare number in milliseconds */
	CHECK(dur("20", SDR_TIME_MS, SDR_TIME_MS, 20.0));
	CHECK(dur("2s", SDR_TIME_MS, SDR_TIME_MS, 2000.0));
	/* refused: units in another case, unknown units, signs, specials, hex */
	CHECK(sdr_parse_duration("5MS", SDR_TIME_S, SDR_TIME_S, &v, &rest) == SDR_TIME_EUNIT &&
	      !strcmp(rest, "MS"));
	CHECK(sdr_parse_duration("5parsec", SDR_TIME_S, SDR_TIME_S, &v, &rest) == SDR_TIME_EUNIT &&
	      !strcmp(rest, "parsec"));
	static const char *const bad[] = {"",    "-1ms",   "+1ms", " 1ms", "inf",
					  "nan", "0x10ms", "ms",   ".ms",  "1e999s"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(sdr_parse_duration(bad[i], SDR_TIME_S, SDR_TIME_S, &v, NULL) == SDR_TIME_ENUM,
		      "'%s'", bad[i]);
	CHECK(sdr_parse_duration(NULL, SDR_TIME_S, SDR_TIME_S, &v, NULL) == SDR_TIME_ENUM);
	/* sizes and rates */
	CHECK(sdr_parse_u64("64K", &u, 1) == 0 && u == 65536);
	CHECK(sdr_parse_u64("1MiB", &u, 1) == 0 && u == 1u << 20);
	CHECK(sdr_parse_u64("64K", &u, 0) == -1);
	CHECK(sdr_parse_u64("-1", &u, 1) == -1);
	CHECK(sdr_parse_rate("2.5gbit", &u) == 0 && u == 2500000000ull);
	CHECK(sdr_parse_rate("900m", &u) == 0 && u == 900000000ull);
	CHECK(sdr_parse_rate("1zz", &u) == -1);
	return t_finish("test_units");
}
