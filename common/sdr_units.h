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

#endif /* SDR_UNITS_H */
