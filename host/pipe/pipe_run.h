/* SPDX-License-Identifier: BSD-3-Clause */
/* sdr-pipe runtime: one DC's stages as threads, cross-DC boundaries over
 * libsdr, intra-DC boundaries through shared memory; D DCs, DC 0 the
 * coordinator and the controller of the cross-DC QPs' rates. See
 * docs/pipeline.md "Multi-DC rig and runtime"; the protocol is pipe_proto.h. */
#ifndef SDR_PIPE_RUN_H
#define SDR_PIPE_RUN_H

#include <stdio.h>

#include "pipe.h"
#include "pipe_cba.h"

struct pipe_rt_opts {
	uint32_t dc;         /**< which DC this process is (0 = coordinator, TCP server) */
	const char *dpu;     /**< daemon socket */
	const char *bind;    /**< DC 0: address to listen on (NULL = any) */
	const char *connect; /**< other DCs: HOST:PORT of DC 0 */
	uint16_t port;       /**< DC 0: port */
	uint32_t iters;
	double timeout; /**< seconds a wait may take / bootstrap may take */
	uint64_t seed;
	uint32_t poll_us; /**< sleep between polls of a pending cross-DC op */
	int verbose;
	double clock_shift; /**< added to this process' clock wherever the protocol
	                           reads it (the clock-offset test: DC 0 must measure it
	                           and the run must still line up); 0 normally */
	const struct pipe_policy_cfg *policy; /**< DC 0: the controller's policy
	                           (NULL: none, every QP unpaced) */
	FILE *ctl_log;                        /**< DC 0: one JSON line per iteration (NULL: none) */
};

/** What DC 0 measured (the other DCs leave it alone). */
struct pipe_run_out {
	double clock_offset[PIPE_MAX_DC]; /**< DC k's clock minus DC 0's (s); [0] = 0 */
	double clock_rtt[PIPE_MAX_DC];    /**< round trip of the sample it came from (s) */
	/** per iteration (o->iters entries, the caller's): measured iteration time
	 *  and bubble of the merged log, CB transfers, the rates it ran with
	 *  (the same record the DES's pipe_predict() fills) */
	struct pipe_pred_iter *it;
};

/**
 * Run @p o->iters iterations of @p p for the stages of DC @p o->dc of D =
 * c->dcs DCs (2..PIPE_MAX_DC). DC 0 accepts one bootstrap connection from
 * every other DC, checks their configuration digests, measures their clock
 * offsets, relays the QP infos of every cross-DC boundary, and every
 * iteration decides the rates of every cross-DC sending QP from the
 * previous iteration's merged event log (o->policy, pipe_policy_alloc())
 * and sends each DC its QPs' rates and the start time; each DC applies them
 * with sdr_qp_rate_set() before the iteration starts, runs it, and sends its
 * events to DC 0.
 * Events of the local stages go to @p local (times relative to each
 * iteration's common start); DC 0 also returns the merge of every DC's in
 * @p all (other DCs: @p all stays empty) and fills @p out (may be NULL).
 * Every received payload is verified (header and checksum); a bad payload,
 * a failed completion or a wait longer than the timeout ends the run.
 * @return 0, -EINVAL (bad options), -EPROTO (a peer disagrees on the
 *  configuration or breaks the protocol), -ETIMEDOUT, -EIO (a transfer
 *  failed or a payload was bad; message on stderr), -ENOTSUP (reliability
 *  scheme not available in this libsdr), or -errno.
 */
int pipe_run(const struct pipe_cfg *c, const struct pipe_prog *p, const struct pipe_rt_opts *o,
	     struct pipe_events *local, struct pipe_events *all, struct pipe_run_out *out);

#endif /* SDR_PIPE_RUN_H */
