/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control plane's memory (layer ctl, its lowest part): the shared
 * segments handed to hosts (a sealed memfd, mapped and populated) and a
 * QP's own memory. Nothing else here: the engine rig (tests/firmware)
 * replaces this file with allocations of its own, as it does txq.c.
 */
#ifndef SDR_CTL_MEM_H
#define SDR_CTL_MEM_H

#include <stddef.h>

struct sdr_qp;

/** A shared segment of @p size bytes (a memfd named @p name, sealed against
 *  resizing, mapped and populated): its address, its descriptor in
 *  *fd_out; NULL with errno set on failure. */
void *sdr_seg_create(const char *name, size_t size, int *fd_out);

/** Unmap and close a segment of sdr_seg_create(). */
void sdr_seg_free(void *seg, size_t size, int fd);

/** Memory for one QP, zeroed and populated; NULL on failure. */
struct sdr_qp *sdr_qp_mem_alloc(void);

/** Give back the memory of sdr_qp_mem_alloc(). */
void sdr_qp_mem_free(struct sdr_qp *qp);

#endif /* SDR_CTL_MEM_H */
