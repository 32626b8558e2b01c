/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-dpu firmware (layer prim): a host context - a host attached over the
 * unix socket, its shared segment, SQ/CQ rings, MRs and QPs. No DPDK.
 */
#ifndef SDR_CTX_H
#define SDR_CTX_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "sdr_abi.h"
#include "sdr_hostdesc.h"
#include "sdr_limits.h"

struct sdr_inst;
struct sdr_qp;

/** A host attached over the unix socket. */
struct sdr_hctx {
	unsigned id;
	int sock;
	pid_t pid;
	struct sdr_inst *inst;
	unsigned worker;
	void *seg;
	size_t seg_size;
	int seg_fd;
	struct sdr_ring sq, cq; /* worker-side views */
	struct sdr_seg_hdr *hdr;
	struct sdr_mr_ent mrs[SDR_MAX_MRS];
	struct sdr_qp *qps[SDR_MAX_QPS_PER_CTX];
	unsigned nqps;
	/* completions waiting for room in the CQ (worker only; cq.c) */
	struct sdr_cqe *ovf;
	uint32_t ovf_head, ovf_n, ovf_cap;
	/* completions of this loop pass, written to the CQ ring together at
	 * its end (one producer-index store per pass; cq.c) */
	struct sdr_cqe cqb[SDR_BURST];
	unsigned ncqb;
	int broken;        /* SQ corrupt: stop serving it */
	int quiet;         /* the daemon stops with a state file: no more completions */
	int32_t sq_credit; /* fair SQ service (host_sq.c; worker only) */
	struct sdr_hctx *next_on_worker;
};

#endif /* SDR_CTX_H */
