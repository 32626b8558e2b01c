/* SPDX-License-Identifier: BSD-3-Clause */
/* Worker lcores (worker.c): the loop, commands from the main lcore. */
#ifndef SDR_WORKER_H
#define SDR_WORKER_H

#include "sdr_types.h"

/* command from the main lcore to a worker */
enum sdr_cmd_type {
	SDR_CMD_NOP = 0,  /* quiescence barrier */
	SDR_CMD_ADD_CTX,
	SDR_CMD_DEL_CTX,
	SDR_CMD_ADD_QP,
	SDR_CMD_CONNECT_QP,
	SDR_CMD_DEL_QP,
	SDR_CMD_MR_DEREG,
	SDR_CMD_SET_RATE,
};

struct sdr_cmd {
	enum sdr_cmd_type type;
	void *obj;
	uint64_t arg;
	const struct sdr_qp_info *remote;
	_Atomic int done;
	int result;
};

int sdr_worker_main(void *arg);
/** Run @p cmd on worker @p worker and wait for it (main lcore). */
int sdr_worker_call(unsigned worker, struct sdr_cmd *cmd);
void sdr_worker_quiesce_all(void);
/** Complete every send and receive of @p qp with @p status and forget its
 *  live state (teardown, error). Worker lcore. */
void sdr_qp_abort(struct sdr_worker *w, struct sdr_qp *qp, int32_t status);

#endif /* SDR_WORKER_H */
