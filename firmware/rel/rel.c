/* SPDX-License-Identifier: BSD-3-Clause */
/* The reliability schemes of this firmware (rel.h). */
#include "rel.h"

static const struct sdr_rel_ops *const schemes[] = {
	&sdr_rel_none,
	&sdr_rel_sr,
	&sdr_rel_ec,
	&sdr_rel_auto,
};

const struct sdr_rel_ops *sdr_rel_ops_of(unsigned reliability)
{
	for (unsigned i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++)
		if (schemes[i]->reliability == reliability)
			return schemes[i];
	return 0;
}
