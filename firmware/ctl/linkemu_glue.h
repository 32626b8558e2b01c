/* SPDX-License-Identifier: BSD-3-Clause */
/* Hook for the long-haul link emulator (firmware/linkemu/) on an instance's
 * port: --link (the default lane) and --link-peer (per-peer lanes). */
#ifndef SDR_LINKEMU_GLUE_H
#define SDR_LINKEMU_GLUE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct sdr_inst;

/** The instance emulates a link (--link or --link-peer given). */
int sdr_linkemu_on(const struct sdr_inst *in);
/** Parse --link and --link-peer (before the mempool exists) and return how
 *  many extra mbufs the lanes' bandwidth-delay products hold. 0, or -1
 *  with a message. */
int sdr_linkemu_prepare(struct sdr_inst *in, unsigned *extra_mbufs);
/** Explain a failed pool allocation in terms of the emulated links. */
void sdr_linkemu_pool_error(struct sdr_inst *in, unsigned pool_mbufs);
/** The pool got only @p extra_mbufs for the emulated path (fewer than
 *  sdr_linkemu_prepare() asked for): cap the lanes' held frames (their
 *  limits, shared in proportion to their needs) to them, so that an
 *  overload is a counted drop (dropped_limit), never an mbuf shortage of
 *  the PMD; says so on stdout. */
void sdr_linkemu_cap(struct sdr_inst *in, unsigned extra_mbufs);
/** Attach the emulator to every RX queue of the instance's port (before the
 *  port starts). 0, or -1 with a message. */
int sdr_linkemu_attach(struct sdr_inst *in);
void sdr_linkemu_detach(struct sdr_inst *in);
/** Print the emulator's counters for this instance: every lane together,
 *  then each lane when there are per-peer profiles (nothing without one). */
void sdr_linkemu_print(FILE *f, struct sdr_inst *in);
/** Lanes of the instance: per-peer profiles + the default lane (0 when the
 *  emulator is off). */
unsigned sdr_linkemu_lanes(struct sdr_inst *in);
/** "NAME:IP+IP:SPEC" of lane @p lane into @p buf (NULL if no such lane). */
const char *sdr_linkemu_lane_desc(struct sdr_inst *in, unsigned lane, char *buf, size_t len);
/** Call fn(name, value) for every emulator counter of lane @p lane of this
 *  instance, or of every lane together when @p lane < 0. */
void sdr_linkemu_foreach(struct sdr_inst *in, int lane,
			 void (*fn)(void *arg, const char *name, uint64_t v), void *arg);

#endif
