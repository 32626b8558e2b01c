/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of common/sdr_siphash.c: the test vector of the paper
 * "SipHash: a fast short-input PRF" (Aumasson, Bernstein 2012; key
 * 00..0f, message 00..0e) and vectors of the reference implementation for
 * both outputs (message i = bytes 00..i-1), every length class around the
 * 8-byte words.
 */
#include <string.h>

#include "sdr_siphash.h"
#include "sdr_test.h"

static const uint8_t v128[][17] = {
	/* length, then the 16 output bytes */
	{0, 0xa3, 0x81, 0x7f, 0x04, 0xba, 0x25, 0xa8, 0xe6, 0x6d, 0xf6, 0x72, 0x14, 0xc7, 0x55,
	 0x02, 0x93},
	{1, 0xda, 0x87, 0xc1, 0xd8, 0x6b, 0x99, 0xaf, 0x44, 0x34, 0x76, 0x59, 0x11, 0x9b, 0x22,
	 0xfc, 0x45},
	{7, 0xa1, 0xf1, 0xeb, 0xbe, 0xd8, 0xdb, 0xc1, 0x53, 0xc0, 0xb8, 0x4a, 0xa6, 0x1f, 0xf0,
	 0x82, 0x39},
	{8, 0x3b, 0x62, 0xa9, 0xba, 0x62, 0x58, 0xf5, 0x61, 0x0f, 0x83, 0xe2, 0x64, 0xf3, 0x14,
	 0x97, 0xb4},
	{15, 0x54, 0x93, 0xe9, 0x99, 0x33, 0xb0, 0xa8, 0x11, 0x7e, 0x08, 0xec, 0x0f, 0x97, 0xcf,
	 0xc3, 0xd9},
	{16, 0x6e, 0xe2, 0xa4, 0xca, 0x67, 0xb0, 0x54, 0xbb, 0xfd, 0x33, 0x15, 0xbf, 0x85, 0x23,
	 0x05, 0x77},
	{63, 0x51, 0x50, 0xd1, 0x77, 0x2f, 0x50, 0x83, 0x4a, 0x50, 0x3e, 0x06, 0x9a, 0x97, 0x3f,
	 0xbd, 0x7c},
};

static const struct {
	unsigned len;
	uint64_t out;
} v64[] = {
	{15, 0xa129ca6149be45e5ull}, /* the paper's, Appendix A */
	{0, 0x726fdb47dd0e0e31ull},
	{8, 0x93f5f5799a932462ull},
	{63, 0x958a324ceb064572ull},
};

int main(void)
{
	uint8_t key[16], msg[64], out[16];

	t_seed("test_siphash", 0x53495048);
	for (unsigned i = 0; i < 16; i++)
		key[i] = (uint8_t)i;
	for (unsigned i = 0; i < 64; i++)
		msg[i] = (uint8_t)i;
	for (unsigned i = 0; i < sizeof(v64) / sizeof(v64[0]); i++)
		CHECK(sdr_siphash24_64(key, msg, v64[i].len) == v64[i].out,
		      "SipHash-2-4-64 of %u bytes: %016llx", v64[i].len,
		      (unsigned long long)sdr_siphash24_64(key, msg, v64[i].len));
	for (unsigned i = 0; i < sizeof(v128) / sizeof(v128[0]); i++) {
		sdr_siphash24_128(key, msg, v128[i][0], out);
		CHECK(!memcmp(out, &v128[i][1], 16), "SipHash-2-4-128 of %u bytes", v128[i][0]);
	}
	/* another key, another output; one bit of the message, another output */
	{
		uint8_t a[16], b[16];
		sdr_siphash24_128(key, msg, 32, a);
		key[3] ^= 1;
		sdr_siphash24_128(key, msg, 32, b);
		CHECK(memcmp(a, b, 16), "the key changes the output");
		key[3] ^= 1;
		msg[31] ^= 0x80;
		sdr_siphash24_128(key, msg, 32, b);
		CHECK(memcmp(a, b, 16), "the message changes the output");
	}
	return t_finish("test_siphash");
}
