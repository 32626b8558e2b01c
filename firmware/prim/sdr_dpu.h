/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-dpu firmware (layer prim): the global state (sdr_g) - the
 * configuration, the instances and the workers - and the TSC conversions.
 */
#ifndef SDR_DPU_H
#define SDR_DPU_H

#include <stdint.h>

#include "config.h"
#include "sdr_counters.h"
#include "sdr_inst.h"
#include "sdr_worker.h"

struct sdr_dpu {
	struct sdr_cfg cfg;
	unsigned ninst;
	struct sdr_inst inst[SDR_MAX_INST];
	unsigned nworkers;
	struct sdr_worker workers[SDR_MAX_WORKERS];
	uint64_t tsc_hz;
	volatile int running;
	int workers_stopped; /* set by main after the workers returned */
	/* shutdown drain (worker.c): workers that stopped sending, and those
	 * that then found their ports empty */
	_Atomic unsigned drain_tx_off, drain_rx_done;
	uint64_t ctl_ctr[SDR_CTR__MAX]; /* counters of the control plane (main lcore only) */
};

extern struct sdr_dpu sdr_g;

/** Microseconds, milliseconds of the TSC. */
static inline uint64_t sdr_us_cycles(uint64_t us)
{
	return us * sdr_g.tsc_hz / 1000000;
}
static inline uint64_t sdr_ms_cycles(uint64_t ms)
{
	return ms * sdr_g.tsc_hz / 1000;
}

#endif /* SDR_DPU_H */
