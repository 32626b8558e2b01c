/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The DPU's side of descriptor validation: its MR table entry and the
 * mapping of common/sdr_desc.c's verdict (the check libsdr runs too) onto
 * the firmware's counters. Pure C (unit-tested without the EAL).
 */
#ifndef SDR_HOSTDESC_H
#define SDR_HOSTDESC_H

#include <stdatomic.h>
#include <stdint.h>

#include "sdr_abi.h"
#include "sdr_counters.h"
#include "sdr_desc.h"

#define SDR_MAX_MRS 256 /* per host context */

/** A registered memory region as the DPU sees it. */
struct sdr_mr_ent {
	uint8_t *addr; /**< DPU-side mapping */
	uint64_t len;
	_Atomic uint32_t valid; /**< published by the control plane (release) */
	uint32_t refcnt;        /**< in-flight operations (owning worker only) */
	int fd;
	uint64_t map_len; /**< what was mmap'ed (for munmap) */
};

/** Limits a descriptor is checked against (per QP). */
#define sdr_qp_limits sdr_desc_qp

/**
 * Check a copied-out descriptor with sdr_desc_check(). @p qp may be NULL
 * (unknown qp_id).
 * @return 0, or a negative errno (the CQE status) with *ctr set:
 *  -EINVAL bad opcode/flags/reserved or stream offsets (sqe_bad); -EBADF
 *  unknown QP (sqe_bad_qp); -ENOENT unknown MR (sqe_bad_mr); -ERANGE outside
 *  the MR (sqe_bad_range); -EMSGSIZE zero/over-max (sqe_bad_len); -ENOTCONN
 *  unconnected QP (sqe_not_conn).
 * On success for SEND/RECV/STREAM_DATA, *mr_out is the MR (valid entry).
 */
static inline int sdr_sqe_check(const struct sdr_sqe *d, const struct sdr_qp_limits *qp,
				struct sdr_mr_ent *mrs, uint32_t nmrs, struct sdr_mr_ent **mr_out,
				enum sdr_ctr *ctr)
{
	static const enum sdr_ctr ctr_of[] = {
		[SDR_DESC_BAD] = SDR_CTR_sqe_bad,
		[SDR_DESC_BAD_QP] = SDR_CTR_sqe_bad_qp,
		[SDR_DESC_BAD_MR] = SDR_CTR_sqe_bad_mr,
		[SDR_DESC_BAD_RANGE] = SDR_CTR_sqe_bad_range,
		[SDR_DESC_BAD_LEN] = SDR_CTR_sqe_bad_len,
		[SDR_DESC_NOT_CONN] = SDR_CTR_sqe_not_conn,
	};
	struct sdr_mr_ent *mr = NULL;
	enum sdr_desc_why why;
	int rc;

	*mr_out = NULL;
	if (sdr_desc_uses_mr(d) && d->mr_id < nmrs &&
	    atomic_load_explicit(&mrs[d->mr_id].valid, memory_order_acquire))
		mr = &mrs[d->mr_id];
	rc = sdr_desc_check(d, qp, mr ? &mr->len : NULL, &why);
	if (rc) {
		*ctr = ctr_of[why];
		return rc;
	}
	if (sdr_desc_uses_mr(d))
		*mr_out = mr;
	return 0;
}

#endif /* SDR_HOSTDESC_H */
