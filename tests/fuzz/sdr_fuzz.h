/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Contract between a fuzz harness and the plain driver (fuzz_driver.c) used
 * when the compiler has no libFuzzer. Every harness defines both functions.
 */
#ifndef SDR_FUZZ_H
#define SDR_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/** libFuzzer entry point: must return 0 and abort() on a broken invariant. */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

typedef void (*sdr_fuzz_emit_fn)(const uint8_t *data, size_t len, void *arg);

/** Call @p emit once per built-in seed input (valid and near-valid frames). */
void sdr_fuzz_seeds(sdr_fuzz_emit_fn emit, void *arg);

#endif /* SDR_FUZZ_H */
