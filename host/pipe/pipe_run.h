/* SPDX-License-Identifier: BSD-3-Clause */
/* sdr-pipe runtime: one DC's stages as threads, cross-DC boundaries over
 * libsdr, intra-DC boundaries through shared memory. See docs/pipeline.md. */
#ifndef SDR_PIPE_RUN_H
#define SDR_PIPE_RUN_H

#include "pipe.h"

struct pipe_rt_opts {
	uint32_t dc;          /**< which DC this process is (0 = TCP server) */
	const char *dpu;      /**< daemon socket */
	const char *bind;     /**< server: address to listen on (NULL = any) */
	const char *connect;  /**< client: HOST:PORT of the server */
	uint16_t port;        /**< server: port */
	uint32_t iters;
	double timeout;       /**< seconds a wait may take / bootstrap may take */
	uint64_t seed;
	uint32_t poll_us;     /**< sleep between polls of a pending cross-DC op */
	int verbose;
};

/**
 * Run @p o->iters iterations of @p p for the stages of DC @p o->dc. Events
 * of the local stages go to @p local; DC 0 also receives DC 1's events at the
 * end and returns the merge of both in @p all (DC 1: @p all stays empty).
 * Every received payload is verified (header and checksum); a bad payload,
 * a failed completion or a wait longer than the timeout ends the run.
 * @return 0, -EINVAL (bad options), -EPROTO (peer disagrees on the
 *  configuration or breaks the bootstrap protocol), -ETIMEDOUT, -EIO (a
 *  transfer failed or a payload was bad; message on stderr), -ENOTSUP
 *  (reliability scheme not available in this libsdr), or -errno.
 */
int pipe_run(const struct pipe_cfg *c, const struct pipe_prog *p, const struct pipe_rt_opts *o,
	     struct pipe_events *local, struct pipe_events *all);

#endif /* SDR_PIPE_RUN_H */
