/* SPDX-License-Identifier: BSD-3-Clause */
/* Toeplitz hash and the QP-to-queue steering of sdr_rss.h. */
#include "sdr_rss.h"

const uint8_t sdr_rss_key[SDR_RSS_KEY_LEN] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
	0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
	0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

/* The 16 smallest x < 0x4000 with (toeplitz(x) & 0x1FF) == 0, in order (a
 * 5-dimensional space: 32 such values); tests/common/test_rss.c checks them */
const uint16_t sdr_rss_path_delta[SDR_RSS_PATHS_MAX] = {
	0x0000, 0x0131, 0x0651, 0x0760, 0x0891, 0x09a0, 0x0ec0, 0x0ff1,
	0x1013, 0x1122, 0x1642, 0x1773, 0x1882, 0x19b3, 0x1ed3, 0x1fe2,
};

uint32_t sdr_toeplitz(const uint8_t *key, const uint8_t *in, size_t len)
{
	/* for every set input bit, XOR in the 32 key bits that start at it */
	uint32_t h = 0, win = (uint32_t)key[0] << 24 | (uint32_t)key[1] << 16 |
			      (uint32_t)key[2] << 8 | key[3];

	for (size_t i = 0; i < len; i++) {
		uint8_t next = key[i + 4];

		for (int b = 7; b >= 0; b--) {
			if (in[i] >> b & 1)
				h ^= win;
			win = win << 1 | (uint32_t)(next >> b & 1);
		}
	}
	return h;
}

unsigned sdr_rss_queue(uint16_t sport, unsigned reta_size, unsigned nq)
{
	uint8_t in[2] = {(uint8_t)(sport >> 8), (uint8_t)sport};

	if (!nq || !reta_size)
		return 0;
	return (sdr_toeplitz(sdr_rss_key, in, 2) & (reta_size - 1)) % nq;
}
