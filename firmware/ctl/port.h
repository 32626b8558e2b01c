/* SPDX-License-Identifier: BSD-3-Clause */
/* DPDK ports of the instances (port.c). */
#ifndef SDR_PORT_H
#define SDR_PORT_H

int sdr_ports_init(void);
void sdr_ports_fini(void);

#endif /* SDR_PORT_H */
