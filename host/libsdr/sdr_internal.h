/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libsdr internals for tests only (not installed, not a stable API): raw
 * access to the SQ ring so integration tests can inject descriptors libsdr
 * itself would refuse, and so the DPU's own validation can be exercised.
 * They exist only in the tests' static build of libsdr (libsdr_test_dep in
 * host/libsdr/meson.build, compiled with -DSDR_TEST_HOOKS), never in libsdr.so.
 */
#ifndef SDR_INTERNAL_H
#define SDR_INTERNAL_H

#include "sdr.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Write @p sqe to the SQ ring as is: no validation, no numbering, no
 * outstanding accounting. A descriptor the DPU accepts consumes a message
 * number that libsdr does not know about, so later libsdr posts on that QP
 * are mis-numbered: use on throw-away QPs.
 * Completions of such descriptors are returned by sdr_cq_poll() with
 * qp == NULL and the raw wr_id.
 * @return 0, -EINVAL (NULL), -EAGAIN (SQ ring full), -EPIPE (daemon gone).
 */
int sdr__sq_raw_post(struct sdr_ctx *ctx, const struct sdr_sqe *sqe);

/** The daemon's QP id of @p qp (for building raw descriptors). */
uint32_t sdr__qp_id(const struct sdr_qp *qp);

/** Operations posted whose completion was not reaped yet. */
uint32_t sdr__outstanding(const struct sdr_ctx *ctx);

#ifdef __cplusplus
}
#endif
#endif /* SDR_INTERNAL_H */
