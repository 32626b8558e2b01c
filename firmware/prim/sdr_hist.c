/* SPDX-License-Identifier: BSD-3-Clause */
/* Message completion-time histograms: the bucket bounds (sdr_hist.h;
 * primitive layer). */
#include "sdr_hist.h"

const double sdr_ct_bound_s[SDR_CT_BUCKETS] = {
	50e-6, 100e-6, 250e-6, 500e-6, 1e-3, 2.5e-3, 5e-3, 10e-3, 25e-3,
	50e-3, 100e-3, 250e-3, 500e-3, 1.0,  2.5,    5.0,  7.5,   10.0,
};
/* (no worker sees these before sdr_ct_hist_init: all above 10 s until then) */
uint64_t sdr_ct_bound_cyc[SDR_CT_BUCKETS];
const uint32_t sdr_ct_class_max[SDR_CT_CLASSES] = {4096, 65536, 1u << 20, 16u << 20, UINT32_MAX};
const char *const sdr_ct_class_name[SDR_CT_CLASSES] = {"4KiB", "64KiB", "1MiB", "16MiB", "larger"};

void sdr_ct_hist_init(uint64_t tsc_hz)
{
	for (unsigned b = 0; b < SDR_CT_BUCKETS; b++)
		sdr_ct_bound_cyc[b] = (uint64_t)(sdr_ct_bound_s[b] * (double)tsc_hz);
}
