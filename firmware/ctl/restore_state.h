/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Instance state file (layer ctl; restore_state.c): what a daemon keeps
 * across its restarts so that hosts can restore their QPs (docs/security.md
 * "Restoring a QP", docs/reliability.md "Restarts"): a random instance key
 * (restore tokens), the QPN epoch and the QP blocks hosts hold. Main lcore.
 */
#ifndef SDR_RESTORE_STATE_H
#define SDR_RESTORE_STATE_H

#include <stdint.h>
#include <sys/types.h>

#include "sdr_abi.h"

struct sdr_inst;

/** Open (or make) the state file of instance @p in under --state-dir.
 *  @return 1 and the epoch to reuse in *epoch (the file existed), 0 when
 *  the daemon picks its epoch (new file, --state-dir none, or the file
 *  cannot be used: said on stderr; restore is then off for @p in). */
int sdr_rstate_open(struct sdr_inst *in, uint32_t *epoch);

/** The epoch this boot uses (written to the file). */
void sdr_rstate_set_epoch(struct sdr_inst *in, uint32_t epoch);

/** Is restore on for @p in (a state file is in use)? */
int sdr_rstate_enabled(const struct sdr_inst *in);

/** Is block @p id reserved for the restore of a QP of the previous
 *  incarnation (in use then, not restored yet, window open)? Frees every
 *  reserved block once --restore-window-ms has passed. */
int sdr_rstate_reserved(struct sdr_inst *in, uint32_t id);

/** Ms left of the restore window (0: over). */
uint64_t sdr_rstate_window_left_ms(struct sdr_inst *in);

/** Block @p id is held by a host now (1) or free (0): the file says so. A
 *  restored block stops being reserved. */
void sdr_rstate_mark(struct sdr_inst *in, uint32_t id, int used);

/** The daemon stops: blocks still held stay marked (the next incarnation
 *  reserves them). */
void sdr_rstate_close_all(void);

/** Did the daemon stop (sdr_rstate_close_all()) with a state file for
 *  @p in? Its QPs then go without a QP-CLOSED to their peers. */
int sdr_rstate_stopping(const struct sdr_inst *in);

/** Restore token of a QP: SipHash-2-4-128 under the instance key over the
 *  instance name, the QPN, R_Key, control key and the creator's uid.
 *  Zero when restore is off. */
void sdr_rstate_token(const struct sdr_inst *in, uint32_t qpn, uint32_t rkey, uint64_t ctrl_key,
		      uid_t uid, uint8_t out[SDR_RESTORE_TOKEN_LEN]);

#endif /* SDR_RESTORE_STATE_H */
