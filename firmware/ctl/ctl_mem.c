/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The control plane's memory (layer ctl, its lowest part; ctl_mem.h):
 * memfd segments for hosts and populated QP memory, made and given back on
 * the main lcore. The engine rig links fakes of these instead.
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ctl_mem.h"
#include "sdr_types.h"

void *sdr_seg_create(const char *name, size_t size, int *fd_out)
{
	int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	void *p;

	if (fd < 0)
		return NULL;
	if (ftruncate(fd, (off_t)size) ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL)) {
		close(fd);
		return NULL;
	}
	/* populated now, not at the worker's first touch (see sdr_qp_mem_alloc()) */
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	if (p == MAP_FAILED) {
		close(fd);
		return NULL;
	}
	*fd_out = fd;
	return p;
}

void sdr_seg_free(void *seg, size_t size, int fd)
{
	munmap(seg, size);
	close(fd);
}

/* A QP's memory (about 600 KiB, most of it tables of 1024 message slots)
 * comes straight from mmap, populated here on the control thread: the
 * worker takes no page fault when a message first uses a slot (with 1024
 * QPs taking turns, first touches of slots had been 10 % of the worker's
 * time, the kernel clearing pages: docs/benchmarks.md section 8.7). The
 * price is that all of it is resident from creation on. */
struct sdr_qp *sdr_qp_mem_alloc(void)
{
	void *p = mmap(NULL, sizeof(struct sdr_qp), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

void sdr_qp_mem_free(struct sdr_qp *qp)
{
	munmap(qp, sizeof(*qp));
}
