/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Resources of the host socket (layer ctl; ctrl_int.h): what each client
 * holds per instance (its quota entry) and the memory regions it registers
 * (a sealed shmem memfd: checked, mapped without populating, its resident
 * pages then mapped in the background by mrpop.c, and unmapped).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "ctrl_int.h"
#include "mrpop.h"
#include "worker.h"

static struct quota quotas[MAX_CLIENTS];

struct quota *ctl_quota_get(unsigned inst, uint32_t key)
{
	struct quota *fr = NULL;

	for (unsigned i = 0; i < MAX_CLIENTS; i++) {
		struct quota *q = &quotas[i];
		if (q->used && q->inst == inst && q->key == key)
			return q;
		if (!q->used && !fr)
			fr = q;
	}
	if (fr) { /* there is one: a quota per connection at most */
		memset(fr, 0, sizeof(*fr));
		fr->used = 1;
		fr->inst = inst;
		fr->key = key;
	}
	return fr;
}

/* Memory the daemon maps must never fault it. MR memory is written by the
 * workers as packets land and read as they leave; if a page of it could
 * disappear (hugetlbfs: a punched hole refaults only while free huge pages
 * are left; a size-limited tmpfs: only while the mount has room), the next
 * packet would kill the daemon with SIGBUS. A shmem memfd cannot: it is
 * sealed against shrinking (F_SEAL_SHRINK: no truncate), and a fault on a
 * punched hole allocates a page from the unlimited internal mount (at worst
 * the kernel's OOM handling, never SIGBUS). Only memfd_create() makes
 * files that accept seals (any other tmpfs file carries F_SEAL_SEAL from
 * birth), so F_SEAL_SHRINK + TMPFS_MAGIC = a shmem memfd. */
static int mr_memory_check(int fd, const struct stat *st, struct sdr_ctl_resp *r)
{
	struct statfs sfs;
	int seals;

	if (!S_ISREG(st->st_mode))
		return ctl_fail(r, EBADF, "passed descriptor is not a memfd/regular file");
	if (fstatfs(fd, &sfs))
		return ctl_fail(r, EBADF, "fstatfs of the passed descriptor failed: %s",
				strerror(errno));
	if ((uint32_t)sfs.f_type == (uint32_t)HUGETLBFS_MAGIC)
		return ctl_fail(r, EINVAL,
				"memfd on hugetlbfs (MFD_HUGETLB) refused: a page punched out"
				" of it refaults only while huge pages are free, else SIGBUS");
	if ((uint32_t)sfs.f_type != (uint32_t)TMPFS_MAGIC)
		return ctl_fail(r, EINVAL,
				"memory on file system 0x%lx refused: only a plain (shmem)"
				" memfd cannot lose pages under the DPU",
				(unsigned long)sfs.f_type);
	/* A host that shrinks the file under our mapping would fault the DPU. */
	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0 || !(seals & F_SEAL_SHRINK))
		return ctl_fail(r, EPERM,
				"memfd must be sealed with F_SEAL_SHRINK (libsdr does this)");
	return 0;
}

int ctl_req_mr_reg(struct client *cl, const struct sdr_ctl_req *q, int fd, struct sdr_ctl_resp *r)
{
	struct sdr_hctx *c = cl->ctx;
	struct stat st;
	long pg = sysconf(_SC_PAGESIZE);
	uint64_t aoff = q->fd_offset & ~(uint64_t)(pg - 1);
	struct sdr_mr_ent *mr = NULL;
	unsigned id;
	void *p;

	if (fd < 0)
		return ctl_fail(r, EBADF, "MR_REG needs a memfd passed with SCM_RIGHTS");
	if (q->length == 0 || q->length > (1ull << 40))
		return ctl_fail(r, EINVAL, "MR length %llu out of range",
				(unsigned long long)q->length);
	if (fstat(fd, &st))
		return ctl_fail(r, EBADF, "passed descriptor is not a memfd/regular file");
	if (mr_memory_check(fd, &st, r)) {
		ctl_note(SDR_CTR_ctl_mr_refused, c->inst->cfg.name,
			 "MR_REG of host pid %d refused: %s", (int)cl->pid, r->msg);
		return r->status;
	}
	if (q->fd_offset > (uint64_t)st.st_size || q->length > (uint64_t)st.st_size - q->fd_offset)
		return ctl_fail(r, ERANGE, "range [%llu, +%llu) lies outside the %lld-byte memfd",
				(unsigned long long)q->fd_offset, (unsigned long long)q->length,
				(long long)st.st_size);
	if (sdr_g.cfg.quota_mr_bytes && cl->q->mr_bytes + q->length > sdr_g.cfg.quota_mr_bytes) {
		char w[48], wl[64];
		ctl_note(SDR_CTR_ctl_quota_mr_bytes, c->inst->cfg.name,
			 "MR_REG of %s refused: %llu + %llu bytes (--quota-mr-bytes)",
			 ctl_who_log(cl, wl), (unsigned long long)cl->q->mr_bytes,
			 (unsigned long long)q->length);
		return ctl_fail(r, EDQUOT,
				"%s has %llu bytes registered on this DPU; %llu more exceed"
				" --quota-mr-bytes %llu",
				ctl_who(cl, w), (unsigned long long)cl->q->mr_bytes,
				(unsigned long long)q->length,
				(unsigned long long)sdr_g.cfg.quota_mr_bytes);
	}
	for (id = 0; id < SDR_MAX_MRS; id++)
		if (!atomic_load(&c->mrs[id].valid) && c->mrs[id].fd < 0) {
			mr = &c->mrs[id];
			break;
		}
	if (!mr)
		return ctl_fail(r, ENOSPC, "too many memory regions (%d)", SDR_MAX_MRS);
	/* No MAP_POPULATE here: it would make this thread (and every other
	 * host) wait for the whole MR and allocate pages the host never
	 * touched. mrpop.c maps the resident pages in the background instead. */
	p = mmap(NULL, q->length + (q->fd_offset - aoff), PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 (off_t)aoff);
	if (p == MAP_FAILED)
		return ctl_fail(r, errno, "mmap of the MR failed: %s", strerror(errno));
	mr->addr = (uint8_t *)p + (q->fd_offset - aoff);
	mr->len = q->length;
	mr->map_len = q->length + (q->fd_offset - aoff);
	mr->fd = fd;
	mr->refcnt = 0;
	cl->q->mr_bytes += mr->len;
	sdr_mrpop_add(mr, p, mr->map_len);
	atomic_store_explicit(&mr->valid, 1, memory_order_release);
	r->id = id;
	return 1; /* fd is now owned by the MR */
}

void ctl_mr_unmap(struct sdr_mr_ent *mr)
{
	long pg = sysconf(_SC_PAGESIZE);
	if (mr->fd < 0)
		return;
	sdr_mrpop_cancel(mr); /* the populate thread no longer touches it */
	munmap((void *)((uintptr_t)mr->addr & ~(uintptr_t)(pg - 1)), mr->map_len);
	close(mr->fd);
	mr->fd = -1;
	mr->addr = NULL;
	atomic_store(&mr->valid, 0);
}

int ctl_req_mr_dereg(struct client *cl, const struct sdr_ctl_req *q, struct sdr_ctl_resp *r)
{
	struct sdr_hctx *c = cl->ctx;
	struct sdr_cmd cmd = {.type = SDR_CMD_MR_DEREG};
	int rc;

	if (q->mr_id >= SDR_MAX_MRS || !atomic_load(&c->mrs[q->mr_id].valid))
		return ctl_fail(r, ENOENT, "no MR %u", q->mr_id);
	cmd.obj = &c->mrs[q->mr_id];
	rc = sdr_worker_call(c->worker, &cmd);
	if (rc == -EBUSY)
		return ctl_fail(r, EBUSY, "MR %u is used by posted operations", q->mr_id);
	if (rc)
		return ctl_fail(r, -rc, "worker did not answer");
	cl->q->mr_bytes -= c->mrs[q->mr_id].len;
	ctl_mr_unmap(&c->mrs[q->mr_id]);
	return 0;
}
