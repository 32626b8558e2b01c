/* SPDX-License-Identifier: BSD-3-Clause */
/* Command-line numbers shared by the daemon and every tool: sizes and rates. */
#ifndef SDR_UNITS_H
#define SDR_UNITS_H

#include <stdint.h>

/**
 * Parse an unsigned integer (decimal, or 0x hex). With @p suffixes, a K, M or
 * G suffix (binary: 2^10, 2^20, 2^30), optionally followed by "B" or "iB",
 * multiplies it ("64K", "1MiB", "2GB").
 * @return 0, or -1 (empty, negative, trailing garbage, overflow).
 */
int sdr_parse_u64(const char *s, uint64_t *v, int suffixes);

/**
 * Parse a rate in bits per second: a number (may be fractional or 1e9
 * style) with an optional k/M/G/T suffix (decimal: 10^3 .. 10^12) and an
 * optional "bit", "bps" or "b": "10g", "2.5gbit", "800mbps", "1e9".
 * @return 0, or -1 (malformed, negative, above 10 Tbit/s).
 */
int sdr_parse_rate(const char *s, uint64_t *bps);

/** Units of a duration: the power of ten below a second. */
enum sdr_time_unit { SDR_TIME_S = 0, SDR_TIME_MS = 3, SDR_TIME_US = 6, SDR_TIME_NS = 9 };
/** sdr_parse_duration(): a bare number (no unit) is refused, except 0. */
#define SDR_TIME_UNIT_NEEDED (-1)
/** What sdr_parse_duration() found wrong. */
#define SDR_TIME_ENUM (-1)    /**< not a non-negative decimal number */
#define SDR_TIME_ENOUNIT (-2) /**< a number without the unit it needs */
#define SDR_TIME_EUNIT (-3)   /**< an unknown unit (the text after the number) */

/**
 * Parse a duration: a non-negative decimal number (digits, optional
 * fraction and exponent: "12.5", ".5", "1.5e-3"; no sign, "inf", "nan" or
 * hex) followed by a unit, s, ms, us or ns (lower case): "12.5ms", "250us".
 * The one duration parser of every command line and the link emulator.
 * @param bare  the unit of a number given without one (SDR_TIME_S ...), or
 *              SDR_TIME_UNIT_NEEDED
 * @param out   the unit of *v (SDR_TIME_S for seconds, SDR_TIME_NS for ns)
 * @param rest  if not NULL, set to the text after the number (the unit)
 * @return 0 and *v set; SDR_TIME_ENUM, SDR_TIME_ENOUNIT or SDR_TIME_EUNIT.
 */
int sdr_parse_duration(const char *s, int bare, enum sdr_time_unit out, double *v,
		       const char **rest);

#endif /* SDR_UNITS_H */
