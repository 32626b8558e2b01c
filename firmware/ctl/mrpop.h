/* SPDX-License-Identifier: BSD-3-Clause */
/* Populate MR mappings off the control thread (mrpop.c). */
#ifndef SDR_MRPOP_H
#define SDR_MRPOP_H

#include <stddef.h>

int sdr_mrpop_init(void);
void sdr_mrpop_fini(void);
void sdr_mrpop_add(const void *key, void *addr, size_t len);
void sdr_mrpop_cancel(const void *key);

#endif /* SDR_MRPOP_H */
