/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Message completion-time histograms (primitive layer): fixed buckets per
 * QP and message size class, counted by the QP's worker at each send
 * completion (cq.c) without allocation or locks, read slightly stale by the
 * control thread (metrics.c, stats.c). Completion time = post to completion,
 * the quantity the completion-time model predicts (common/sdr_model.h).
 */
#ifndef SDR_HIST_H
#define SDR_HIST_H

#include <stdint.h>

#define SDR_CT_CLASSES 5  /* message sizes: <=4K, <=64K, <=1M, <=16M, larger */
#define SDR_CT_BUCKETS 18 /* finite upper bounds, 50 us .. 10 s; then +Inf */

struct sdr_ct_hist {
	uint64_t n[SDR_CT_CLASSES][SDR_CT_BUCKETS + 1]; /* per bucket (not cumulative) */
	uint64_t sum_cyc[SDR_CT_CLASSES];
};

/* Upper bounds in seconds and (after sdr_ct_hist_init) in TSC cycles */
extern const double sdr_ct_bound_s[SDR_CT_BUCKETS];
extern uint64_t sdr_ct_bound_cyc[SDR_CT_BUCKETS];
/* Largest message of each class (the last: UINT32_MAX) and its label */
extern const uint32_t sdr_ct_class_max[SDR_CT_CLASSES];
extern const char *const sdr_ct_class_name[SDR_CT_CLASSES];

/** Convert the bounds to cycles of a @p tsc_hz clock (once, at start). */
void sdr_ct_hist_init(uint64_t tsc_hz);

/** Add @p src's counts to @p dst (a destroyed QP into its instance). */
static inline void sdr_ct_hist_fold(struct sdr_ct_hist *dst, const struct sdr_ct_hist *src)
{
	for (unsigned c = 0; c < SDR_CT_CLASSES; c++) {
		for (unsigned b = 0; b <= SDR_CT_BUCKETS; b++)
			dst->n[c][b] += src->n[c][b];
		dst->sum_cyc[c] += src->sum_cyc[c];
	}
}

/** Count one completion of a @p len byte message that took @p cyc cycles. */
static inline void sdr_ct_hist_add(struct sdr_ct_hist *h, uint32_t len, uint64_t cyc)
{
	unsigned c = 0, b = 0;

	while (c < SDR_CT_CLASSES - 1 && len > sdr_ct_class_max[c])
		c++;
	while (b < SDR_CT_BUCKETS && cyc > sdr_ct_bound_cyc[b])
		b++;
	h->n[c][b]++;
	h->sum_cyc[c] += cyc;
}

#endif /* SDR_HIST_H */
