/* SPDX-License-Identifier: BSD-3-Clause */
/* Control plane on the main lcore (ctrl.c): hosts attach over the unix
 * socket, register memory, create and connect QPs. */
#ifndef SDR_CTRL_H
#define SDR_CTRL_H

#include "sdr_types.h"

int sdr_ctrl_init(struct sdr_inst *in);
void sdr_ctrl_poll(int timeout_ms);
void sdr_ctrl_fini(void);

#endif /* SDR_CTRL_H */
