/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Equality of the link emulator's configuration structs, field by field
 * (tests of firmware/linkemu/): memcmp of a whole struct would read its
 * padding, which assignments and the parser need not preserve. Each field is
 * compared byte for byte, so a changed bit of a double or a bool counts.
 */
#ifndef SDR_LINK_EQ_H
#define SDR_LINK_EQ_H

#include <string.h>

#include "sdr_link.h"
#include "sdr_link_peers.h"

#define LINK_FEQ(a, b, f) (memcmp(&(a)->f, &(b)->f, sizeof((a)->f)) == 0)

static inline int link_cfg_eq(const struct sdr_link_cfg *a, const struct sdr_link_cfg *b)
{
	return LINK_FEQ(a, b, delay_ns) && LINK_FEQ(a, b, jitter_ns) && LINK_FEQ(a, b, rate_bps) &&
	       LINK_FEQ(a, b, buffer_bytes) && LINK_FEQ(a, b, loss) && LINK_FEQ(a, b, ge) &&
	       LINK_FEQ(a, b, ge_p_gb) && LINK_FEQ(a, b, ge_p_bg) && LINK_FEQ(a, b, ge_loss_good) &&
	       LINK_FEQ(a, b, ge_loss_bad) && LINK_FEQ(a, b, reorder) &&
	       LINK_FEQ(a, b, reorder_extra_ns) && LINK_FEQ(a, b, dup) && LINK_FEQ(a, b, corrupt) &&
	       LINK_FEQ(a, b, corrupt_max_bits) && LINK_FEQ(a, b, seed) && LINK_FEQ(a, b, limit);
}

static inline int link_profile_eq(const struct sdr_link_profile *a,
				  const struct sdr_link_profile *b)
{
	return LINK_FEQ(a, b, name) && link_cfg_eq(&a->cfg, &b->cfg) && LINK_FEQ(a, b, emulated) &&
	       LINK_FEQ(a, b, naddr) && LINK_FEQ(a, b, addr) && LINK_FEQ(a, b, npaths) &&
	       LINK_FEQ(a, b, path);
}

static inline int link_plan_eq(const struct sdr_link_plan *a, const struct sdr_link_plan *b)
{
	if (!LINK_FEQ(a, b, nlanes) || !LINK_FEQ(a, b, naddr) || !LINK_FEQ(a, b, addr) ||
	    !LINK_FEQ(a, b, lane_of))
		return 0;
	for (size_t i = 0; i < sizeof(a->lane) / sizeof(a->lane[0]); i++)
		if (!link_profile_eq(&a->lane[i], &b->lane[i]))
			return 0;
	return 1;
}

#endif /* SDR_LINK_EQ_H */
