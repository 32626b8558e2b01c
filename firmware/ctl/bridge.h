/* SPDX-License-Identifier: BSD-3-Clause */
/* sdr-dpu --bridge: bump in the wire between two ports with the link
 * emulator in each direction (bridge.c). */
#ifndef SDR_BRIDGE_H
#define SDR_BRIDGE_H

#include <stdio.h>

/** 1 if "--bridge" is among the arguments. */
int sdr_bridge_wanted(int argc, char **argv);
/** Run the bridge: argv = prog [EAL...] -- --bridge [ours...]; @p dd is the
 *  index of "--" (argc if none). @return the process exit status. */
int sdr_bridge_cli(int argc, char **argv, int dd);
void sdr_bridge_usage(FILE *f);

#endif
