/* SPDX-License-Identifier: BSD-3-Clause */
/* A deliberate interposer for tests/bluefield/check_interpose.py: it defines
 * ISA-L's gf_mul() and links libisal, so the check must report it. Never run. */
#include <isa-l/erasure_code.h>

unsigned char gf_mul(unsigned char a, unsigned char b)
{
	return (unsigned char)(a ^ b);
}

int main(void)
{
	unsigned char m[4];

	gf_gen_cauchy1_matrix(m, 2, 2);
	return gf_mul(m[0], m[1]);
}
