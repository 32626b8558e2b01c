/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Validation of submission descriptors (struct sdr_sqe, sdr_abi.h): the one
 * definition of what a descriptor must satisfy. The DPU runs it on every
 * descriptor it copies out of a host's SQ ring (the host is hostile); libsdr
 * runs the same function on every descriptor before it posts one, so what
 * libsdr refuses the DPU would refuse with the same errno and what it posts
 * the DPU accepts (tests/host/test_libsdr.c checks both over random
 * descriptors). Pure C, no DPDK.
 */
#ifndef SDR_DESC_H
#define SDR_DESC_H

#include <stdint.h>

#include "sdr_abi.h"
#include "sdr_stripe.h"

/** What a descriptor is checked against on its QP. */
struct sdr_desc_qp {
	uint32_t max_msg; /**< the QP's message slot size M */
	uint32_t mtu;     /**< its MTU (stream offsets are multiples) */
	int connected;
	/** a channel of a multi-channel QP: SEND and RECV lengths are virtual,
	 *  their real extent (sdr_stripe_extent()) must lie in the MR; no
	 *  streams. Zero (w 0) for an ordinary QP. */
	struct sdr_stripe stripe;
};

/** Why a descriptor was refused (the DPU counts each under its own name). */
enum sdr_desc_why {
	SDR_DESC_OK = 0,
	SDR_DESC_BAD,       /**< opcode, flags, reserved bytes, stream offsets */
	SDR_DESC_BAD_QP,    /**< no such QP */
	SDR_DESC_BAD_MR,    /**< no such MR, or deregistered */
	SDR_DESC_BAD_RANGE, /**< offset + length outside the MR */
	SDR_DESC_BAD_LEN,   /**< length 0 or above max_msg */
	SDR_DESC_NOT_CONN,  /**< the QP is not connected */
};

/**
 * Check a descriptor (already copied out of shared memory).
 * @param qp      the QP d->qp_id names; NULL if there is none
 * @param mr_len  the length of the registered, valid MR d->mr_id names;
 *                NULL if there is none (unknown id, deregistered). Looked at
 *                for SEND, RECV and STREAM_DATA only.
 * @param[out] why the reason of a refusal (SDR_DESC_OK on success)
 * @return 0, or the negative errno the operation completes with:
 *  -EINVAL bad opcode/flags/reserved or stream offsets; -EBADF unknown QP;
 *  -ENOENT unknown MR; -ERANGE outside the MR; -EMSGSIZE zero or over
 *  max_msg; -ENOTCONN unconnected QP. RECV_COMPLETE and STREAM_END (which
 *  name an existing operation) need only a valid opcode and a QP.
 */
int sdr_desc_check(const struct sdr_sqe *d, const struct sdr_desc_qp *qp, const uint64_t *mr_len,
		   enum sdr_desc_why *why);

/** Does the descriptor's operation use an MR (SEND, RECV, STREAM_DATA)? */
static inline int sdr_desc_uses_mr(const struct sdr_sqe *d)
{
	return d->opcode == SDR_SQ_SEND || d->opcode == SDR_SQ_RECV ||
	       d->opcode == SDR_SQ_STREAM_DATA;
}

/** A short text for a reason ("length 0 or above max_msg", ...). */
const char *sdr_desc_why_str(enum sdr_desc_why why);

#endif /* SDR_DESC_H */
