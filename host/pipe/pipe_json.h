/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file pipe_json.h
 * sdr-pipe --print-schedule: a schedule's per-stage programs, channels and
 * DES prediction as one JSON object, so that another runtime (the PyTorch
 * pipeline of host/python/sdr/pipeline.py) executes the programs compiled
 * here instead of a second copy of the schedules. Format: docs/pipeline.md
 * "Schedules for other runtimes".
 */
#ifndef SDR_PIPE_JSON_H
#define SDR_PIPE_JSON_H

#include <stdio.h>

#include "pipe.h"

/** Write @p c, its programs @p p and the DES prediction @p pred (iteration
 *  0) to @p f as one line. @return 0 or -EIO. */
int pipe_schedule_json(FILE *f, const struct pipe_cfg *c, const struct pipe_prog *p,
		       const struct pipe_des_out *pred);

#endif
