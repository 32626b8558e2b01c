/* SPDX-License-Identifier: BSD-3-Clause */
/* Worker lcores (worker.c): the loop, commands from the main lcore. */
#ifndef SDR_WORKER_H
#define SDR_WORKER_H

#include "sdr_types.h"

/* command from the main lcore to a worker */
enum sdr_cmd_type {
	SDR_CMD_NOP = 0, /* quiescence barrier */
	SDR_CMD_ADD_CTX,
	SDR_CMD_DEL_CTX,
	SDR_CMD_ADD_QP,
	SDR_CMD_CONNECT_QP,
	SDR_CMD_DEL_QP, /* arg: SDR_CLOSED_* to tell the peer (one QP-CLOSED), or 0;
	                   | SDR_DEL_QP_QUIET */
	SDR_CMD_MR_DEREG,
	SDR_CMD_SET_RATE,
};

/* DEL_QP of a daemon that stops with a state file: the QP's operations end
 * without completions (its host restores it from the next incarnation) */
#define SDR_DEL_QP_QUIET 0x100

struct sdr_cmd {
	enum sdr_cmd_type type;
	void *obj;
	uint64_t arg;
	const struct sdr_qp_info *remote;
	void *aux; /* ADD_QP: a larger completion FIFO for the context, or NULL
	              (the worker hands the old one back here) */
	_Atomic int done;
	int result;
};

/** Allocate and set up worker @p w's transmit scheduling (main lcore, before
 *  the loop starts and before any QP exists). @return 0 or -ENOMEM. */
int sdr_worker_init(struct sdr_worker *w, uint64_t now);
void sdr_worker_fini(struct sdr_worker *w);
int sdr_worker_main(void *arg);
/** The QP part of one loop iteration at @p now: visit the QPs the pacer
 *  hands out, those touched in this loop, those whose deadline came.
 *  @return the work done (packets sent). Worker lcore (the engine unit
 *  tests run it too). */
unsigned sdr_worker_qps(struct sdr_worker *w, uint64_t now);
/** @p qp is now the worker's (SDR_CMD_ADD_QP). */
void sdr_worker_qp_add(struct sdr_worker *w, struct sdr_qp *qp, uint64_t now);
/** @p qp's rate is now @p rate_bps, 0 = unpaced (SDR_CMD_SET_RATE): at
 *  once, its next departure moves. */
void sdr_worker_qp_rate(struct sdr_worker *w, struct sdr_qp *qp, uint64_t rate_bps);
/** Connect @p qp to the peer @p r (SDR_CMD_CONNECT_QP). */
void sdr_worker_qp_connect(struct sdr_worker *w, struct sdr_qp *qp, const struct sdr_qp_info *r);
/** The second half of a loop pass at time @p now: each QP's transmit, CTS,
 *  ABORT and timers, the TX flush, the completions of the sends it put on
 *  the wire, the CQ writes of the pass. @return the work done. */
unsigned sdr_worker_qp_pass(struct sdr_worker *w, uint64_t now);
/** Run @p cmd on worker @p worker and wait for it (main lcore). */
int sdr_worker_call(unsigned worker, struct sdr_cmd *cmd);
void sdr_worker_quiesce_all(void);
/** Complete every send and receive of @p qp with @p status and forget its
 *  live state (teardown, error). Worker lcore. */
void sdr_qp_abort(struct sdr_worker *w, struct sdr_qp *qp, int32_t status);

#endif /* SDR_WORKER_H */
