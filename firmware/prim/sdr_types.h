/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-dpu firmware (layer prim): every runtime object at once, for a module
 * that uses most of them (the worker, the control plane). A module that
 * uses a few includes their headers instead: sdr_limits.h, sdr_qp.h (QP,
 * send window, counters: sdr_qpctr.h), sdr_ctx.h (host context), sdr_inst.h
 * (instance, QP lookup), sdr_worker.h (worker, touch, pacer timing),
 * sdr_dpu.h (sdr_g, TSC conversions).
 *
 * Threads (docs/architecture.md): the main lcore runs the control plane (host
 * attach, MR/QP setup, stats, telemetry); each worker lcore owns a set of
 * host contexts and their QPs and runs their fast path to completion. State
 * owned by a worker is touched by the main lcore only through the worker's
 * command ring (sdr_worker_call), so the fast path takes no locks.
 */
#ifndef SDR_TYPES_H
#define SDR_TYPES_H

#include "sdr_ctx.h"
#include "sdr_dpu.h"
#include "sdr_inst.h"
#include "sdr_limits.h"
#include "sdr_qp.h"
#include "sdr_worker.h"

#endif /* SDR_TYPES_H */
