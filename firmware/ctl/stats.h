/* SPDX-License-Identifier: BSD-3-Clause */
/* Statistics: the stats block, the JSON dump, telemetry (stats.c). */
#ifndef SDR_STATS_H
#define SDR_STATS_H

#include <stdio.h>

void sdr_stats_print(FILE *f);
int sdr_stats_json(const char *path);
void sdr_telemetry_register(void);

#endif /* SDR_STATS_H */
