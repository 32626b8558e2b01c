/* SPDX-License-Identifier: BSD-3-Clause */
/* Hook for the long-haul link emulator (firmware/linkemu/) on an instance's port. */
#ifndef SDR_LINKEMU_GLUE_H
#define SDR_LINKEMU_GLUE_H

#include <stdint.h>
#include <stdio.h>

struct sdr_inst;

/** Parse --link (before the mempool exists) and return how many extra
 *  mbufs its bandwidth-delay product holds. 0, or -1 with a message. */
int sdr_linkemu_prepare(struct sdr_inst *in, unsigned *extra_mbufs);
/** Explain a failed pool allocation in terms of the emulated link. */
void sdr_linkemu_pool_error(struct sdr_inst *in, unsigned pool_mbufs);
/** The pool got only @p extra_mbufs for the emulated path (fewer than
 *  sdr_linkemu_prepare() asked for): cap the emulator's held frames (its
 *  limit) to them, so that an overload is a counted drop (dropped_limit),
 *  never an mbuf shortage of the PMD; says so on stdout. */
void sdr_linkemu_cap(struct sdr_inst *in, unsigned extra_mbufs);
/** Attach the emulator configured by --link to every RX queue of the
 *  instance's port (before the port starts). 0, or -1 with a message. */
int sdr_linkemu_attach(struct sdr_inst *in);
void sdr_linkemu_detach(struct sdr_inst *in);
/** Print the emulator's counters for this instance (nothing without --link). */
void sdr_linkemu_print(FILE *f, struct sdr_inst *in);
/** Call fn(name, value) for every emulator counter of this instance. */
void sdr_linkemu_foreach(struct sdr_inst *in, void (*fn)(void *arg, const char *name, uint64_t v),
			 void *arg);

#endif
