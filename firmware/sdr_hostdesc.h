/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Validation of host-written submission descriptors. The host is hostile:
 * the descriptor is copied out of shared memory first, then every field is
 * checked here before the data path touches memory. Pure C (unit-tested and
 * fuzzed without the EAL).
 */
#ifndef SDR_HOSTDESC_H
#define SDR_HOSTDESC_H

#include <stdatomic.h>
#include <stdint.h>

#include "sdr_abi.h"
#include "sdr_counters.h"

#define SDR_MAX_MRS 256 /* per host context */

/** A registered memory region as the DPU sees it. */
struct sdr_mr_ent {
	uint8_t *addr;            /**< DPU-side mapping */
	uint64_t len;
	_Atomic uint32_t valid;   /**< published by the control plane (release) */
	uint32_t refcnt;          /**< in-flight operations (owning worker only) */
	int fd;
	uint64_t map_len;         /**< what was mmap'ed (for munmap) */
};

/** Limits a descriptor is checked against (per QP). */
struct sdr_qp_limits {
	uint32_t max_msg;
	uint32_t mtu;
	int connected;
};

/**
 * Check a copied-out descriptor. @p qp may be NULL (unknown qp_id).
 * @return 0, or a negative errno (the CQE status) with *ctr set:
 *  -EINVAL bad opcode/flags/reserved or stream offsets; -EBADF unknown QP;
 *  -ENOENT unknown MR; -ERANGE outside the MR; -EMSGSIZE zero/over-max;
 *  -ENOTCONN unconnected QP.
 * On success for SEND/RECV/STREAM_DATA, *mr_out is the MR (valid entry).
 */
int sdr_sqe_check(const struct sdr_sqe *d, const struct sdr_qp_limits *qp,
		  struct sdr_mr_ent *mrs, uint32_t nmrs, struct sdr_mr_ent **mr_out,
		  enum sdr_ctr *ctr);

#endif /* SDR_HOSTDESC_H */
