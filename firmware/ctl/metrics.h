/* SPDX-License-Identifier: BSD-3-Clause */
/* Prometheus metrics and the /ops page over HTTP (metrics.c; control
 * plane). */
#ifndef SDR_METRICS_H
#define SDR_METRICS_H

/** Listen on "[ADDR:]PORT" (--metrics). 0, or -1 with a message. */
int sdr_metrics_start(const char *spec);
/** Render the pages a scraper waits for (the control thread's loop). */
void sdr_metrics_poll(void);
void sdr_metrics_stop(void);

#endif /* SDR_METRICS_H */
