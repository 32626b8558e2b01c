/* SPDX-License-Identifier: BSD-3-Clause */
#include <stdio.h>

#include "dpu.h"
#include "linkemu_glue.h"

int sdr_linkemu_attach(struct sdr_inst *in)
{
	if (in->cfg.link) {
		fprintf(stderr, "sdr-dpu: --link: the link emulator is not built in\n");
		return -1;
	}
	return 0;
}
void sdr_linkemu_detach(struct sdr_inst *in) { (void)in; }
void sdr_linkemu_print(FILE *f, struct sdr_inst *in) { (void)f; (void)in; }
void sdr_linkemu_foreach(struct sdr_inst *in, void (*fn)(void *, const char *, uint64_t), void *arg)
{
	(void)in; (void)fn; (void)arg;
}
