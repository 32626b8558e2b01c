/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Control plane on the main lcore: hosts attach over a SOCK_SEQPACKET unix
 * socket, receive their context segment (memfd), register memory (memfds,
 * which we map), create/connect/destroy QPs. A host that hangs up or dies
 * loses its QPs and mappings; the others keep working.
 *
 * No host can stall or starve the others (docs/host-api.md "Limits and
 * quotas"): client sockets are non-blocking, and a reply the client does
 * not take within --ctl-reply-timeout-ms drops it; a connection must say
 * HELLO within --ctl-hello-timeout-ms; nothing on this thread waits for a
 * host's memory (MRs are mapped lazily, mrpop.c maps resident pages in the
 * background); connections, contexts, QPs and registered bytes are limited
 * per client (the peer's uid, or its pid with --quota-key pid) and instance.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <poll.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include <rte_ethdev.h>
#include <rte_random.h>

#include "cq.h"
#include "sdr_fdpass.h"
#include "sdr_rss.h"
#include "ctrl.h"
#include "mrpop.h"
#include "auto_desc.h"
#include "ec_desc.h"
#include "rel.h"
#include "txq.h"
#include "worker.h"

#define MAX_CLIENTS (SDR_MAX_INST * SDR_MAX_CTX)
#define ACCEPT_BURST 64 /* connections accepted per poll */

/** What one client (uid or pid, --quota-key) holds on one instance. */
struct quota {
	int used;
	unsigned inst;
	uint32_t key;
	unsigned conns, ctxs, qps;
	uint64_t mr_bytes;
};

struct client {
	int fd;
	struct sdr_inst *in;
	struct sdr_hctx *ctx; /* after HELLO */
	struct quota *q;
	pid_t pid;
	uid_t uid;
	uint64_t hello_by;    /* ms: dropped if not attached by then */
	/* A reply the socket could not take (the client does not read): no
	 * further request is read from the client until it is sent, and the
	 * client is dropped if that does not happen by pend_by. */
	int pending;
	int pend_fd;          /* descriptor to pass (owned by its ctx/QP) or -1 */
	uint64_t pend_by;
	struct sdr_ctl_resp pend;
};

static struct client clients[MAX_CLIENTS];
static unsigned nclients;
static unsigned next_worker[SDR_MAX_INST];
static struct quota quotas[MAX_CLIENTS];

static uint64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Count a refusal or drop and log it, at most one line per second and
 * counter (a hostile host must not flood the log); the suppressed lines
 * are counted in the next one. */
static void ctl_note(enum sdr_ctr ctr, const char *inst, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void ctl_note(enum sdr_ctr ctr, const char *inst, const char *fmt, ...)
{
	static uint64_t last[SDR_CTR__MAX], quiet[SDR_CTR__MAX];
	uint64_t t = now_ms();
	char buf[256];
	va_list ap;

	sdr_g.ctl_ctr[ctr]++;
	if (last[ctr] && t - last[ctr] < 1000) {
		quiet[ctr]++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (quiet[ctr])
		printf("sdr-dpu[%s]: %s (%s; %llu more not logged)\n", inst, buf, sdr_ctr_names[ctr],
		       (unsigned long long)quiet[ctr]);
	else
		printf("sdr-dpu[%s]: %s (%s)\n", inst, buf, sdr_ctr_names[ctr]);
	last[ctr] = t;
	quiet[ctr] = 0;
}

static const char *who(const struct client *cl, char buf[48])
{
	if (sdr_g.cfg.quota_by_pid)
		snprintf(buf, 48, "client pid %d", (int)cl->pid);
	else
		snprintf(buf, 48, "client uid %u", (unsigned)cl->uid);
	return buf;
}

/* ... and for the log, with the pid in uid mode */
static const char *who_log(const struct client *cl, char buf[64])
{
	if (sdr_g.cfg.quota_by_pid)
		snprintf(buf, 64, "client pid %d", (int)cl->pid);
	else
		snprintf(buf, 64, "client uid %u (pid %d)", (unsigned)cl->uid, (int)cl->pid);
	return buf;
}

static struct quota *quota_get(unsigned inst, uint32_t key)
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

/* ---------- socket helpers ---------- */

/* Send a reply without blocking: 0 sent, 1 the socket is full, -1 error. */
static int send_resp(int fd, struct sdr_ctl_resp *r, int pass_fd)
{
	int rc;

	r->magic = SDR_CTL_MAGIC;
	rc = sdr_fd_send(fd, r, sizeof(*r), pass_fd, 0); /* never waits */
	if (rc == 0)
		return 0;
	return rc == -EAGAIN ? 1 : -1;
}

/* Receive one request; *fd_out gets a passed descriptor or -1.
 * Returns 1 on a request, 0 on hang-up, -1 on a malformed message, -2 when
 * there was nothing to read after all. */
static int recv_req(int fd, struct sdr_ctl_req *q, int *fd_out)
{
	ssize_t n = sdr_fd_recv(fd, q, sizeof(*q), fd_out, 0);

	if (n == -EAGAIN)
		return -2;
	if (n == -EMSGSIZE || (n > 0 && ((size_t)n != sizeof(*q) || q->magic != SDR_CTL_MAGIC))) {
		if (*fd_out >= 0)
			close(*fd_out);
		*fd_out = -1;
		return -1;
	}
	return n > 0 ? 1 : 0; /* 0: hang-up, or the socket failed */
}

static int fail(struct sdr_ctl_resp *r, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int fail(struct sdr_ctl_resp *r, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
	va_end(ap);
	r->status = -err;
	return -err;
}

static void *memfd_segment(const char *name, size_t size, int *fd_out)
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
	/* populated now, not at the worker's first touch (see qp_alloc()) */
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	if (p == MAP_FAILED) {
		close(fd);
		return NULL;
	}
	*fd_out = fd;
	return p;
}

/* ---------- requests ---------- */

static int do_hello(struct client *cl, const struct sdr_ctl_req *q, struct sdr_ctl_resp *r,
		    int *pass)
{
	struct sdr_inst *in = cl->in;
	struct sdr_hctx *c;
	struct sdr_seg_hdr *h;
	size_t off, size;
	unsigned slot;
	struct sdr_cmd cmd = {.type = SDR_CMD_ADD_CTX};

	if (cl->ctx)
		return fail(r, EISCONN, "already attached");
	if (q->abi_major != SDR_ABI_MAJOR)
		return fail(r, EPROTO, "ABI %u.x, this daemon speaks %u.%u", q->abi_major,
			    SDR_ABI_MAJOR, SDR_ABI_MINOR);
	if (sdr_g.cfg.quota_ctxs && cl->q->ctxs >= sdr_g.cfg.quota_ctxs) {
		char w[48], wl[64];
		ctl_note(SDR_CTR_ctl_quota_ctxs, in->cfg.name, "HELLO of %s refused: %u contexts"
			 " attached (--quota-ctxs)", who_log(cl, wl), cl->q->ctxs);
		return fail(r, EDQUOT, "%s has %u contexts attached to this DPU (--quota-ctxs %u)",
			    who(cl, w), cl->q->ctxs, sdr_g.cfg.quota_ctxs);
	}
	for (slot = 0; slot < SDR_MAX_CTX && in->ctxs[slot]; slot++)
		;
	if (slot == SDR_MAX_CTX)
		return fail(r, EUSERS, "too many hosts attached (%d)", SDR_MAX_CTX);
	c = calloc(1, sizeof(*c));
	/* completions waiting for CQ room: sized now for everything a context
	 * can have outstanding (the worker never allocates; pages are only
	 * touched when the host falls that far behind) */
	if (c)
		c->ovf = calloc(SDR_CQ_OVF_FOR(1), sizeof(*c->ovf));
	if (!c || !c->ovf) {
		free(c);
		return fail(r, ENOMEM, "out of memory");
	}
	c->ovf_cap = SDR_CQ_OVF_FOR(1);
	off = RTE_ALIGN_CEIL(sizeof(struct sdr_seg_hdr), SDR_CACHE_LINE);
	size_t sq_idx = off;
	off += RTE_ALIGN_CEIL(sizeof(struct sdr_ring_idx), SDR_CACHE_LINE);
	size_t sq = off;
	off += SDR_SQ_ENTRIES * sizeof(struct sdr_sqe);
	size_t cq_idx = off;
	off += RTE_ALIGN_CEIL(sizeof(struct sdr_ring_idx), SDR_CACHE_LINE);
	size_t cq = off;
	off += SDR_CQ_ENTRIES * sizeof(struct sdr_cqe);
	size = RTE_ALIGN_CEIL(off, 4096);
	c->seg = memfd_segment("sdr-ctx", size, &c->seg_fd);
	if (!c->seg) {
		free(c->ovf);
		free(c);
		return fail(r, ENOMEM, "cannot create the shared segment: %s", strerror(errno));
	}
	c->seg_size = size;
	h = c->hdr = c->seg;
	h->magic = SDR_SEG_MAGIC;
	h->abi_major = SDR_ABI_MAJOR;
	h->abi_minor = SDR_ABI_MINOR;
	h->seg_size = size;
	h->sq_entries = SDR_SQ_ENTRIES;
	h->sq_esize = sizeof(struct sdr_sqe);
	h->cq_entries = SDR_CQ_ENTRIES;
	h->cq_esize = sizeof(struct sdr_cqe);
	h->sq_idx_off = sq_idx;
	h->sq_off = sq;
	h->cq_idx_off = cq_idx;
	h->cq_off = cq;
	sdr_ring_format((void *)((uint8_t *)c->seg + sq_idx), SDR_SQ_ENTRIES, sizeof(struct sdr_sqe));
	sdr_ring_format((void *)((uint8_t *)c->seg + cq_idx), SDR_CQ_ENTRIES, sizeof(struct sdr_cqe));
	/* our views use our own sizes, never the (host-writable) header's */
	sdr_ring_attach(&c->sq, (void *)((uint8_t *)c->seg + sq_idx), (uint8_t *)c->seg + sq,
			SDR_SQ_ENTRIES, sizeof(struct sdr_sqe), 0);
	sdr_ring_attach(&c->cq, (void *)((uint8_t *)c->seg + cq_idx), (uint8_t *)c->seg + cq,
			SDR_CQ_ENTRIES, sizeof(struct sdr_cqe), 1);
	for (unsigned i = 0; i < SDR_MAX_MRS; i++)
		c->mrs[i].fd = -1;
	c->id = slot;
	c->sock = cl->fd;
	c->inst = in;
	/* round robin per instance: the k-th context of every instance is on
	 * worker k mod N, so two QPs that talk through a ring pair (whose queue
	 * q leads to the other instance's queue q) share their worker and need
	 * no hand-off (docs/architecture.md "multiple workers") */
	c->worker = next_worker[in->idx]++ % sdr_g.nworkers;
	c->pid = cl->pid;
	in->ctxs[slot] = c;
	cl->ctx = c;
	cl->q->ctxs++;
	cmd.obj = c;
	sdr_worker_call(c->worker, &cmd);
	r->id = slot;
	r->seg_size = size;
	*pass = c->seg_fd;
	printf("sdr-dpu[%s]: host pid %d uid %u attached (context %u, worker %u)\n", in->cfg.name,
	       (int)c->pid, (unsigned)cl->uid, slot, c->worker);
	return 0;
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
		return fail(r, EBADF, "passed descriptor is not a memfd/regular file");
	if (fstatfs(fd, &sfs))
		return fail(r, EBADF, "fstatfs of the passed descriptor failed: %s", strerror(errno));
	if ((uint32_t)sfs.f_type == (uint32_t)HUGETLBFS_MAGIC)
		return fail(r, EINVAL, "memfd on hugetlbfs (MFD_HUGETLB) refused: a page punched out"
			    " of it refaults only while huge pages are free, else SIGBUS");
	if ((uint32_t)sfs.f_type != (uint32_t)TMPFS_MAGIC)
		return fail(r, EINVAL, "memory on file system 0x%lx refused: only a plain (shmem)"
			    " memfd cannot lose pages under the DPU", (unsigned long)sfs.f_type);
	/* A host that shrinks the file under our mapping would fault the DPU. */
	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0 || !(seals & F_SEAL_SHRINK))
		return fail(r, EPERM, "memfd must be sealed with F_SEAL_SHRINK (libsdr does this)");
	return 0;
}

static int do_mr_reg(struct client *cl, const struct sdr_ctl_req *q, int fd,
		     struct sdr_ctl_resp *r)
{
	struct sdr_hctx *c = cl->ctx;
	struct stat st;
	long pg = sysconf(_SC_PAGESIZE);
	uint64_t aoff = q->fd_offset & ~(uint64_t)(pg - 1);
	struct sdr_mr_ent *mr = NULL;
	unsigned id;
	void *p;

	if (fd < 0)
		return fail(r, EBADF, "MR_REG needs a memfd passed with SCM_RIGHTS");
	if (q->length == 0 || q->length > (1ull << 40))
		return fail(r, EINVAL, "MR length %llu out of range", (unsigned long long)q->length);
	if (fstat(fd, &st))
		return fail(r, EBADF, "passed descriptor is not a memfd/regular file");
	if (mr_memory_check(fd, &st, r)) {
		ctl_note(SDR_CTR_ctl_mr_refused, c->inst->cfg.name, "MR_REG of host pid %d refused: %s",
			 (int)cl->pid, r->msg);
		return r->status;
	}
	if (q->fd_offset > (uint64_t)st.st_size || q->length > (uint64_t)st.st_size - q->fd_offset)
		return fail(r, ERANGE, "range [%llu, +%llu) lies outside the %lld-byte memfd",
			    (unsigned long long)q->fd_offset, (unsigned long long)q->length,
			    (long long)st.st_size);
	if (sdr_g.cfg.quota_mr_bytes && cl->q->mr_bytes + q->length > sdr_g.cfg.quota_mr_bytes) {
		char w[48], wl[64];
		ctl_note(SDR_CTR_ctl_quota_mr_bytes, c->inst->cfg.name,
			 "MR_REG of %s refused: %llu + %llu bytes (--quota-mr-bytes)",
			 who_log(cl, wl), (unsigned long long)cl->q->mr_bytes,
			 (unsigned long long)q->length);
		return fail(r, EDQUOT, "%s has %llu bytes registered on this DPU; %llu more exceed"
			    " --quota-mr-bytes %llu", who(cl, w), (unsigned long long)cl->q->mr_bytes,
			    (unsigned long long)q->length, (unsigned long long)sdr_g.cfg.quota_mr_bytes);
	}
	for (id = 0; id < SDR_MAX_MRS; id++)
		if (!atomic_load(&c->mrs[id].valid) && c->mrs[id].fd < 0) {
			mr = &c->mrs[id];
			break;
		}
	if (!mr)
		return fail(r, ENOSPC, "too many memory regions (%d)", SDR_MAX_MRS);
	/* No MAP_POPULATE here: it would make this thread (and every other
	 * host) wait for the whole MR and allocate pages the host never
	 * touched. mrpop.c maps the resident pages in the background instead. */
	p = mmap(NULL, q->length + (q->fd_offset - aoff), PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 (off_t)aoff);
	if (p == MAP_FAILED)
		return fail(r, errno, "mmap of the MR failed: %s", strerror(errno));
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

static void mr_unmap(struct sdr_mr_ent *mr)
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

static int do_mr_dereg(struct client *cl, const struct sdr_ctl_req *q, struct sdr_ctl_resp *r)
{
	struct sdr_hctx *c = cl->ctx;
	struct sdr_cmd cmd = {.type = SDR_CMD_MR_DEREG};
	int rc;

	if (q->mr_id >= SDR_MAX_MRS || !atomic_load(&c->mrs[q->mr_id].valid))
		return fail(r, ENOENT, "no MR %u", q->mr_id);
	cmd.obj = &c->mrs[q->mr_id];
	rc = sdr_worker_call(c->worker, &cmd);
	if (rc == -EBUSY)
		return fail(r, EBUSY, "MR %u is used by posted operations", q->mr_id);
	if (rc)
		return fail(r, -rc, "worker did not answer");
	cl->q->mr_bytes -= c->mrs[q->mr_id].len;
	mr_unmap(&c->mrs[q->mr_id]);
	return 0;
}

/* The rate AUTO's model assumes when the QP has no rate of its own: the
 * port's --port-rate, else the link speed the PMD reports, else 10 Gbit/s. */
/* A secret (R_Key, control key): from the kernel's CSPRNG, not rte_rand(). */
static uint64_t sdr_secret64(void)
{
	uint64_t v = 0;

	while (getrandom(&v, sizeof(v), 0) != (ssize_t)sizeof(v))
		;
	return v;
}

/* Which attributes qp_attr_check() looks at. */
#define ATTR_RATE 1u  /* rate_bps: QP_CREATE and QP_SET_RATE */
#define ATTR_ALL (~0u)

static int attr_refused(struct sdr_ctl_resp *r, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int attr_refused(struct sdr_ctl_resp *r, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
	va_end(ap);
	r->status = -err;
	sdr_g.ctl_ctr[SDR_CTR_ctl_attr_range]++;
	return -err;
}

/* The range of every QP attribute a host sets, in one place: QP_CREATE
 * checks them all (ATTR_ALL), and every later change of an attribute
 * (QP_SET_RATE: ATTR_RATE) goes through the same check, so that no value is
 * refused at one and accepted at the other. On success *max_msg and *ppc
 * are the QP's values (the daemon's defaults for 0). */
static int qp_attr_check(const struct sdr_qp_attr_abi *a, unsigned which, struct sdr_ctl_resp *r,
			 uint32_t *max_msg_out, uint32_t *ppc_out)
{
	uint32_t mtu = sdr_g.cfg.mtu;
	uint32_t max_msg = a->max_msg ? a->max_msg : sdr_g.cfg.max_msg;
	uint32_t ppc = a->chunk_pkts ? a->chunk_pkts : sdr_g.cfg.chunk_pkts;
	uint64_t pool = (uint64_t)sdr_ec_cfg.pool_mb << 20;

	if ((which & ATTR_RATE) && a->rate_bps &&
	    (a->rate_bps < SDR_QP_RATE_MIN || a->rate_bps > SDR_QP_RATE_MAX))
		return attr_refused(r, EINVAL, "rate_bps %llu out of range (0 = unpaced, else %llu .."
				    " %llu bit/s)", (unsigned long long)a->rate_bps,
				    SDR_QP_RATE_MIN, SDR_QP_RATE_MAX);
	if (which != ATTR_ALL)
		return 0;
	if (!sdr_rel_ops_of(a->reliability))
		return attr_refused(r, EOPNOTSUPP, "reliability %u is not available in this firmware"
				    " (NONE, SR, EC or AUTO)", a->reliability);
	if (ppc < 1 || ppc > 1024)
		return attr_refused(r, EINVAL, "chunk_pkts %u out of [1, 1024]", ppc);
	if (max_msg > sdr_g.cfg.max_msg)
		return attr_refused(r, EINVAL, "max_msg %u exceeds the daemon's --max-msg %u", max_msg,
				    sdr_g.cfg.max_msg);
	if (max_msg % (mtu * ppc) || max_msg < 8 * mtu || max_msg / mtu > SDR_MAX_PKTS)
		return attr_refused(r, EINVAL, "max_msg %u must be a multiple of the chunk (%u B),"
				    " >= 8 packets and <= %u packets", max_msg, mtu * ppc, SDR_MAX_PKTS);
	if (a->reliability == SDR_REL_EC) {
		if (sdr_ec_param_check(a->ec_code, a->ec_k, a->ec_m))
			return attr_refused(r, EINVAL, "EC parameters code %u k %u m %u invalid (code 1"
					    " RS or 2 XOR, 1 <= k <= 64, 1 <= m <= 32, XOR m <= k)",
					    a->ec_code, a->ec_k, a->ec_m);
		/* parity memory of the pool: at least one submessage's parity */
		if ((uint64_t)a->ec_m * mtu * ppc > pool)
			return attr_refused(r, EINVAL, "EC: m (%u) parity chunks of %u B exceed"
					    " --ec-pool-mb %u", a->ec_m, mtu * ppc, sdr_ec_cfg.pool_mb);
	} else if (a->ec_code || a->ec_k || a->ec_m) {
		return attr_refused(r, EINVAL, "EC parameters given for reliability %u (must be 0)",
				    a->reliability);
	} else if (a->reliability == SDR_REL_AUTO &&
		   (uint64_t)sdr_auto_opts.max_m * mtu * ppc > pool) {
		return attr_refused(r, EINVAL, "AUTO: m (%u) parity chunks of %u B (--auto-schemes)"
				    " exceed --ec-pool-mb %u", sdr_auto_opts.max_m, mtu * ppc,
				    sdr_ec_cfg.pool_mb);
	}
	*max_msg_out = max_msg;
	*ppc_out = ppc;
	return 0;
}

/* A QP's memory (about 600 KiB, most of it tables of 1024 message slots)
 * comes straight from mmap, populated here on the control thread: the
 * worker takes no page fault when a message first uses a slot (with 1024
 * QPs taking turns, first touches of slots had been 10 % of the worker's
 * time, the kernel clearing pages: docs/benchmarks.md section 8.7). The
 * price is that all of it is resident from creation on. */
static struct sdr_qp *qp_alloc(void)
{
	void *p = mmap(NULL, sizeof(struct sdr_qp), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void qp_release(struct sdr_qp *qp)
{
	munmap(qp, sizeof(*qp));
}

static int do_qp_create(struct client *cl, const struct sdr_ctl_req *q, struct sdr_ctl_resp *r,
			int *pass)
{
	struct sdr_hctx *c = cl->ctx;
	struct sdr_inst *in = c->inst;
	const struct sdr_qp_attr_abi *a = &q->qp_attr;
	uint32_t gens = sdr_g.cfg.generations;
	uint32_t mtu = sdr_g.cfg.mtu;
	uint32_t max_msg = 0, ppc = 0;
	struct sdr_cmd cmd = {.type = SDR_CMD_ADD_QP};
	struct sdr_qseg_hdr *qh;
	struct sdr_qp *qp;
	uint32_t id, chunk_words;
	size_t slot_off, bm_off, size;

	if (qp_attr_check(a, ATTR_ALL, r, &max_msg, &ppc))
		return r->status;
	if (sdr_g.cfg.quota_qps && cl->q->qps >= sdr_g.cfg.quota_qps) {
		char w[48], wl[64];
		ctl_note(SDR_CTR_ctl_quota_qps, in->cfg.name, "QP_CREATE of %s refused: %u QPs"
			 " (--quota-qps)", who_log(cl, wl), cl->q->qps);
		return fail(r, EDQUOT, "%s has %u QPs on this DPU (--quota-qps %u)", who(cl, w),
			    cl->q->qps, sdr_g.cfg.quota_qps);
	}
	if (c->nqps == SDR_MAX_QPS_PER_CTX)
		return fail(r, ENOSPC, "too many QPs in this context (%d)", SDR_MAX_QPS_PER_CTX);
	if (a->want_qpn) {
		/* Either a block base of this boot's range, or one of the epoch-0
		 * range 0x100 + k*G, which names block k of this boot (so that a
		 * fixed --local-qpn works whatever the epoch; the QP info tells
		 * the actual QPN). */
		uint32_t base = a->want_qpn >= in->qpn_first ? in->qpn_first : SDR_QPN_FIRST;
		if (a->want_qpn < base || (a->want_qpn - base) % gens ||
		    (a->want_qpn - base) / gens >= SDR_MAX_QPS)
			return fail(r, EINVAL,
				    "QPN 0x%x is not a block base (0x%x + k*%u or 0x%x + k*%u, k < %d)",
				    a->want_qpn, in->qpn_first, gens, SDR_QPN_FIRST, gens, SDR_MAX_QPS);
		id = (a->want_qpn - base) / gens;
		if (atomic_load(&in->qps[id]))
			return fail(r, EADDRINUSE, "QPN 0x%x (block %u) is in use", a->want_qpn, id);
	} else {
		/* where the port steers by QPN (port.c), the first free one whose
		 * packets land on the context's worker; else the first free one
		 * (the hand-off ring brings the others) */
		uint32_t any = SDR_MAX_QPS;

		for (id = 0; id < SDR_MAX_QPS; id++) {
			if (atomic_load(&in->qps[id]))
				continue;
			if (any == SDR_MAX_QPS)
				any = id;
			if (!in->rss_steer || sdr_rss_steers(in->qpn_first + id * gens, c->worker,
							     in->rss_reta, sdr_g.nworkers))
				break;
		}
		if (id == SDR_MAX_QPS)
			id = any;
		if (id == SDR_MAX_QPS)
			return fail(r, ENOSPC, "no free QP (%d)", SDR_MAX_QPS);
	}
	if (SDR_CQ_OVF_FOR(c->nqps + 1) > c->ovf_cap) {
		/* room for this QP's completions too: doubled, handed to the
		 * worker with the QP (it moves what waits) */
		uint32_t n = c->nqps ? 2 * c->nqps : 1;

		if (n > SDR_MAX_QPS_PER_CTX)
			n = SDR_MAX_QPS_PER_CTX;
		cmd.arg = SDR_CQ_OVF_FOR(n);
		cmd.aux = calloc(cmd.arg, sizeof(struct sdr_cqe));
		if (!cmd.aux)
			return fail(r, ENOMEM, "out of memory");
	}
	qp = qp_alloc();
	if (!qp) {
		free(cmd.aux);
		return fail(r, ENOMEM, "out of memory");
	}
	chunk_words = sdr_words_for((max_msg / mtu + ppc - 1) / ppc);
	slot_off = RTE_ALIGN_CEIL(sizeof(*qh), SDR_CACHE_LINE);
	bm_off = RTE_ALIGN_CEIL(slot_off + SDR_MAX_MSGS * sizeof(struct sdr_qseg_slot), SDR_CACHE_LINE);
	size = RTE_ALIGN_CEIL(bm_off + (size_t)SDR_MAX_MSGS * chunk_words * 8, 4096);
	qp->qseg = memfd_segment("sdr-qp", size, &qp->qseg_fd);
	if (!qp->qseg) {
		qp_release(qp);
		free(cmd.aux);
		return fail(r, ENOMEM, "cannot create the QP segment: %s", strerror(errno));
	}
	qp->qseg_size = size;
	qh = qp->qseg;
	qh->magic = SDR_QSEG_MAGIC;
	qh->slots = SDR_MAX_MSGS;
	qh->bitmap_words = chunk_words;
	qh->chunk_bytes = mtu * ppc;
	qh->slot_off = slot_off;
	qh->bitmap_off = bm_off;

	qp->id = id;
	qp->qpn_base = in->qpn_first + id * gens;
	qp->rkey = a->want_rkey ? a->want_rkey : (uint32_t)sdr_secret64();
	qp->ctrl_key = sdr_secret64();
	qp->max_msg = max_msg;
	qp->ppc = ppc;
	qp->mtu = mtu;
	qp->gens = gens;
	qp->reliability = a->reliability;
	qp->ops = sdr_rel_ops_of(a->reliability);
	qp->info_ec = a->reliability == SDR_REL_EC ? sdr_ec_param_pack(a->ec_code, a->ec_k, a->ec_m)
						   : 0;
	qp->rate_bps = a->rate_bps;
	qp->inst = in;
	qp->ctx = c;
	qp->worker = c->worker;
	qp->state = SDR_QPS_CREATED;
	if (sdr_rq_init(&qp->rq, mtu, max_msg, ppc, gens, qp->rkey,
			(uint64_t *)((uint8_t *)qp->qseg + bm_off),
			(struct sdr_qseg_slot *)((uint8_t *)qp->qseg + slot_off))) {
		munmap(qp->qseg, size);
		close(qp->qseg_fd);
		qp_release(qp);
		free(cmd.aux);
		return fail(r, ENOMEM, "out of memory for packet bitmaps");
	}
	{
		char why[96];
		int err = qp->ops->qp_init(qp, a, why, sizeof(why));

		if (err) {
			sdr_rq_fini(&qp->rq);
			munmap(qp->qseg, size);
			close(qp->qseg_fd);
			qp_release(qp);
			free(cmd.aux);
			return fail(r, -err, "%s", why);
		}
	}
	c->qps[c->nqps++] = qp;
	cl->q->qps++;
	cmd.obj = qp;
	/* (the worker sets up its pacing at the QP's rate_bps) */
	if (sdr_worker_call(qp->worker, &cmd) == 0)
		free(cmd.aux); /* the old FIFO, or NULL */
	atomic_store_explicit(&in->qps[id], qp, memory_order_release);

	r->id = id;
	r->seg_size = size;
	r->info.qpn = qp->qpn_base;
	r->info.rkey = qp->rkey;
	r->info.ctrl_key = qp->ctrl_key;
	r->info.ip = in->ip;
	memcpy(r->info.mac, in->mac, 6);
	r->info.mtu = (uint16_t)mtu;
	r->info.max_msg = max_msg;
	r->info.chunk_pkts = ppc;
	r->info.generations = (uint8_t)gens;
	r->info.reliability = qp->reliability;
	r->info.ec = qp->info_ec;
	*pass = qp->qseg_fd;
	return 0;
}

static struct sdr_qp *own_qp(struct sdr_hctx *c, uint32_t qp_id)
{
	for (unsigned i = 0; i < c->nqps; i++)
		if (c->qps[i]->id == qp_id)
			return c->qps[i];
	return NULL;
}

static int connect_refused(struct sdr_qp *qp, struct sdr_ctl_resp *r, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int connect_refused(struct sdr_qp *qp, struct sdr_ctl_resp *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
	va_end(ap);
	r->status = -EINVAL;
	ctl_note(SDR_CTR_ctl_connect_refused, qp->inst->cfg.name, "QP_CONNECT of QP 0x%06x refused: %s",
		 qp->qpn_base, r->msg);
	return -EINVAL;
}

/* The peer a QP is to send to and accept packets from: an sdr-dpu QP on
 * a unicast address, agreeing with ours; never the QP itself. */
static int peer_check(struct sdr_qp *qp, const struct sdr_qp_info *x, struct sdr_ctl_resp *r)
{
	const struct sdr_inst *in = qp->inst;
	static const uint8_t zero_mac[6];
	char ip[16], mac[18];

	sdr_format_ipv4(x->ip, ip);
	sdr_format_mac(x->mac, mac);
	if ((x->ip >> 24) == 0)
		return connect_refused(qp, r, "peer IP %s is not a host address (0.0.0.0/8)", ip);
	if (x->ip == 0xFFFFFFFFu)
		return connect_refused(qp, r, "peer IP %s is the broadcast address", ip);
	if ((x->ip >> 28) == 0xE)
		return connect_refused(qp, r, "peer IP %s is multicast (224.0.0.0/4): RC/UC peers are"
				       " unicast", ip);
	if ((x->ip >> 28) == 0xF)
		return connect_refused(qp, r, "peer IP %s is reserved (240.0.0.0/4)", ip);
	if ((x->ip >> 24) == 127)
		return connect_refused(qp, r, "peer IP %s is loopback (127.0.0.0/8): the DPU's packets"
				       " leave through its port", ip);
	if (!memcmp(x->mac, zero_mac, 6) || (x->mac[0] & 1))
		return connect_refused(qp, r, "peer MAC %s is %s", mac,
				       x->mac[0] & 1 ? "multicast/broadcast" : "zero");
	if (x->generations == 0 || (x->generations & (x->generations - 1)))
		return connect_refused(qp, r, "peer generations %u is not a power of two",
				       x->generations);
	if (x->qpn > SDR_QPN_MASK || x->qpn + x->generations - 1 > SDR_QPN_MASK ||
	    x->qpn % x->generations || x->qpn < SDR_QPN_FIRST)
		return connect_refused(qp, r, "peer QPN 0x%x is not a QPN block base (24 bits, aligned"
				       " to its %u generations, >= 0x%x)", x->qpn, x->generations,
				       SDR_QPN_FIRST);
	if (x->ip == in->ip && x->qpn == qp->qpn_base)
		return connect_refused(qp, r, "peer is this QP itself (IP %s, QPN 0x%x)", ip, x->qpn);
	if (x->mtu != qp->mtu || x->max_msg != qp->max_msg || x->chunk_pkts != qp->ppc ||
	    x->generations != qp->gens || x->reliability != qp->reliability)
		return connect_refused(qp, r, "peer QP disagrees: mtu %u/%u max_msg %u/%u chunk_pkts"
				       " %u/%u gens %u/%u rel %u/%u (ours/peer's)", qp->mtu, x->mtu,
				       qp->max_msg, x->max_msg, qp->ppc, x->chunk_pkts, qp->gens,
				       x->generations, qp->reliability, x->reliability);
	if (qp->info_ec && x->ec != qp->info_ec)
		return connect_refused(qp, r, "peer QP's EC parameters disagree: code %u k %u m %u /"
				       " code %u k %u m %u (ours/peer's)", sdr_ec_param_code(qp->info_ec),
				       sdr_ec_param_k(qp->info_ec), sdr_ec_param_m(qp->info_ec),
				       sdr_ec_param_code(x->ec), sdr_ec_param_k(x->ec),
				       sdr_ec_param_m(x->ec));
	if (!qp->info_ec && x->ec)
		return connect_refused(qp, r, "peer info carries EC parameters 0x%x with reliability %u",
				       x->ec, x->reliability);
	return 0;
}

static int do_qp_connect(struct sdr_hctx *c, const struct sdr_ctl_req *q, struct sdr_ctl_resp *r)
{
	struct sdr_qp *qp = own_qp(c, q->qp_id);
	struct sdr_qp_info remote = q->remote;
	struct sdr_cmd cmd = {.type = SDR_CMD_CONNECT_QP, .remote = &remote};

	if (!qp)
		return fail(r, ENOENT, "no QP %u in this context", q->qp_id);
	if (qp->state != SDR_QPS_CREATED)
		return fail(r, EISCONN, "QP %u is already connected", q->qp_id);
	if (peer_check(qp, &remote, r))
		return r->status;
	cmd.obj = qp;
	return sdr_worker_call(qp->worker, &cmd) ? fail(r, ETIMEDOUT, "worker did not answer") : 0;
}

static int do_qp_set_rate(struct sdr_hctx *c, const struct sdr_ctl_req *q, struct sdr_ctl_resp *r)
{
	struct sdr_qp *qp = own_qp(c, q->qp_id);
	struct sdr_cmd cmd = {.type = SDR_CMD_SET_RATE, .arg = q->qp_attr.rate_bps};

	if (!qp)
		return fail(r, ENOENT, "no QP %u in this context", q->qp_id);
	if (qp_attr_check(&q->qp_attr, ATTR_RATE, r, NULL, NULL))
		return r->status;
	cmd.obj = qp;
	return sdr_worker_call(qp->worker, &cmd) ? fail(r, ETIMEDOUT, "worker did not answer") : 0;
}

static void qp_free(struct sdr_qp *qp)
{
	sdr_qp_stats_fold(&qp->inst->closed, &qp->st);
	qp->ops->qp_fini(qp);
	sdr_rq_fini(&qp->rq);
	munmap(qp->qseg, qp->qseg_size);
	close(qp->qseg_fd);
	qp_release(qp);
}

static void qp_destroy(struct sdr_hctx *c, struct sdr_qp *qp)
{
	struct sdr_cmd cmd = {.type = SDR_CMD_DEL_QP, .obj = qp};
	unsigned i;

	atomic_store_explicit(&qp->inst->qps[qp->id], NULL, memory_order_release);
	sdr_worker_call(qp->worker, &cmd);
	sdr_worker_quiesce_all(); /* no worker still holds a pointer from a lookup */
	for (i = 0; i < c->nqps && c->qps[i] != qp; i++)
		;
	c->qps[i] = c->qps[--c->nqps];
	qp_free(qp);
}

static int do_qp_destroy(struct client *cl, const struct sdr_ctl_req *q, struct sdr_ctl_resp *r)
{
	struct sdr_qp *qp = own_qp(cl->ctx, q->qp_id);
	if (!qp)
		return fail(r, ENOENT, "no QP %u in this context", q->qp_id);
	qp_destroy(cl->ctx, qp);
	cl->q->qps--;
	return 0;
}

static void ctx_destroy(struct sdr_hctx *c)
{
	struct sdr_cmd cmd = {.type = SDR_CMD_DEL_CTX, .obj = c};

	while (c->nqps)
		qp_destroy(c, c->qps[c->nqps - 1]);
	sdr_worker_call(c->worker, &cmd);
	sdr_worker_quiesce_all();
	for (unsigned i = 0; i < SDR_MAX_MRS; i++)
		mr_unmap(&c->mrs[i]);
	c->inst->ctxs[c->id] = NULL;
	munmap(c->seg, c->seg_size);
	close(c->seg_fd);
	free(c->ovf);
	free(c);
}

static void client_drop(unsigned i)
{
	struct client *cl = &clients[i];
	struct sdr_hctx *c = cl->ctx;

	if (c) {
		printf("sdr-dpu[%s]: host pid %d detached (context %u): tearing down its QPs and MRs\n",
		       cl->in->cfg.name, (int)c->pid, c->id);
		cl->q->qps -= c->nqps;
		for (unsigned k = 0; k < SDR_MAX_MRS; k++)
			if (c->mrs[k].fd >= 0)
				cl->q->mr_bytes -= c->mrs[k].len;
		cl->q->ctxs--;
		ctx_destroy(c);
	}
	if (--cl->q->conns == 0)
		cl->q->used = 0;
	close(cl->fd);
	clients[i] = clients[--nclients];
}

/* Send @p r, or keep it for later when the socket is full (see struct
 * client). Returns -1 when the client is to be dropped. */
static int client_reply(struct client *cl, struct sdr_ctl_resp *r, int pass)
{
	int rc = send_resp(cl->fd, r, pass);

	if (rc == 1) {
		cl->pending = 1;
		cl->pend = *r;
		cl->pend_fd = pass;
		cl->pend_by = now_ms() + sdr_g.cfg.ctl_reply_timeout_ms;
		return 0;
	}
	return rc;
}

/* returns 0 to keep the client, -1 to drop it */
static int client_serve(struct client *cl)
{
	struct sdr_ctl_req q;
	struct sdr_ctl_resp r;
	int fd, pass = -1, rc = recv_req(cl->fd, &q, &fd);

	if (rc == -2)
		return 0;
	if (rc == 0)
		return -1;
	memset(&r, 0, sizeof(r));
	if (rc < 0) {
		char wl[64];
		ctl_note(SDR_CTR_ctl_malformed, cl->in->cfg.name, "%s dropped: malformed request",
			 who_log(cl, wl));
		fail(&r, EPROTO, "malformed request");
		send_resp(cl->fd, &r, -1);
		return -1;
	}
	r.type = q.type;
	if (q.type != SDR_CTL_HELLO && !cl->ctx) {
		fail(&r, ENOTCONN, "send HELLO first");
	} else if (q.abi_major != SDR_ABI_MAJOR) {
		fail(&r, EPROTO, "ABI %u.x, this daemon speaks %u.%u", q.abi_major, SDR_ABI_MAJOR,
		     SDR_ABI_MINOR);
	} else {
		switch (q.type) {
		case SDR_CTL_HELLO:
			do_hello(cl, &q, &r, &pass);
			break;
		case SDR_CTL_MR_REG:
			if (do_mr_reg(cl, &q, fd, &r) == 1)
				fd = -1; /* kept */
			break;
		case SDR_CTL_MR_DEREG:
			do_mr_dereg(cl, &q, &r);
			break;
		case SDR_CTL_QP_CREATE:
			do_qp_create(cl, &q, &r, &pass);
			break;
		case SDR_CTL_QP_CONNECT:
			do_qp_connect(cl->ctx, &q, &r);
			break;
		case SDR_CTL_QP_DESTROY:
			do_qp_destroy(cl, &q, &r);
			break;
		case SDR_CTL_QP_SET_RATE:
			do_qp_set_rate(cl->ctx, &q, &r);
			break;
		default:
			fail(&r, EOPNOTSUPP, "request type %u not supported", q.type);
		}
	}
	if (fd >= 0)
		close(fd);
	return client_reply(cl, &r, pass);
}

/* A connection we do not serve: tell the client why (its first request is
 * a HELLO, so the reply is one), then hang up. */
static void conn_refuse(struct sdr_inst *in, int cfd, int err, enum sdr_ctr ctr, const char *fmt,
			...) __attribute__((format(printf, 5, 6)));
static void conn_refuse(struct sdr_inst *in, int cfd, int err, enum sdr_ctr ctr, const char *fmt,
			...)
{
	struct sdr_ctl_resp r;
	struct sdr_ctl_req q;
	va_list ap;
	int fd;

	memset(&r, 0, sizeof(r));
	r.type = SDR_CTL_HELLO;
	r.status = -err;
	va_start(ap, fmt);
	vsnprintf(r.msg, sizeof(r.msg), fmt, ap);
	va_end(ap);
	send_resp(cfd, &r, -1);
	/* a request already queued would turn our close into ECONNRESET at
	 * the client before it reads the reason: take it */
	while (recv_req(cfd, &q, &fd) != -2 && fd >= 0)
		close(fd);
	close(cfd);
	ctl_note(ctr, in->cfg.name, "connection refused: %s", r.msg);
}

static void accept_clients(struct sdr_inst *in)
{
	for (unsigned k = 0; k < ACCEPT_BURST; k++) {
		int cfd = accept4(in->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		struct ucred cr = {.pid = 0, .uid = (uid_t)-1, .gid = (gid_t)-1};
		socklen_t l = sizeof(cr);
		struct client *cl;
		struct quota *q;
		char w[48];

		if (cfd < 0)
			return;
		getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cr, &l);
		if (nclients == MAX_CLIENTS) {
			conn_refuse(in, cfd, EUSERS, SDR_CTR_ctl_table_full, "the daemon has %d connections"
				    " open, its maximum; pid %d refused", MAX_CLIENTS, (int)cr.pid);
			continue;
		}
		q = quota_get((unsigned)(in - sdr_g.inst),
			      sdr_g.cfg.quota_by_pid ? (uint32_t)cr.pid : (uint32_t)cr.uid);
		if (!q) { /* cannot happen: one quota per connection at most */
			conn_refuse(in, cfd, EUSERS, SDR_CTR_ctl_table_full, "no quota entry free");
			continue;
		}
		cl = &clients[nclients];
		memset(cl, 0, sizeof(*cl));
		cl->pid = cr.pid;
		cl->uid = cr.uid;
		if (sdr_g.cfg.quota_conns && q->conns >= sdr_g.cfg.quota_conns) {
			conn_refuse(in, cfd, EDQUOT, SDR_CTR_ctl_quota_conns, "%s has %u connections open"
				    " to this DPU (--quota-conns %u)", who(cl, w), q->conns,
				    sdr_g.cfg.quota_conns);
			if (!q->conns)
				q->used = 0;
			continue;
		}
		q->conns++;
		cl->fd = cfd;
		cl->in = in;
		cl->q = q;
		cl->pend_fd = -1;
		cl->hello_by = now_ms() + sdr_g.cfg.ctl_hello_timeout_ms;
		nclients++;
	}
}

/* ---------- listening ---------- */

int sdr_ctrl_init(struct sdr_inst *in)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	int fd;

	/* QPN epoch: a restarted daemon numbers its QPs differently, so the
	 * packets its peers still send to the old incarnation are recognised
	 * (stale_epoch) instead of landing in new QPs. */
	in->qpn_first = SDR_QPN_FIRST + SDR_QPN_EPOCH_SPAN *
		(uint32_t)(sdr_g.cfg.qpn_epoch >= 0 ? (uint64_t)sdr_g.cfg.qpn_epoch
						    : 1 + rte_rand() % (SDR_QPN_EPOCHS - 1));
	if (strlen(in->cfg.name) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "sdr-dpu: --name %s is too long for a unix socket path\n", in->cfg.name);
		return -1;
	}
	strcpy(sa.sun_path, in->cfg.name);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	/* A live daemon on this path? Then refuse; a stale socket file we replace. */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		fprintf(stderr, "sdr-dpu: another daemon is serving %s\n", in->cfg.name);
		close(fd);
		return -1;
	}
	close(fd);
	unlink(in->cfg.name);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, 16)) {
		fprintf(stderr, "sdr-dpu: cannot listen on %s: %s\n", in->cfg.name, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	chmod(in->cfg.name, 0660);
	in->listen_fd = fd;
	if (sdr_mrpop_init()) /* without it, the workers fault MR pages in as packets land */
		fprintf(stderr, "sdr-dpu: cannot start the MR populate thread: %s\n", strerror(errno));
	return 0;
}

void sdr_ctrl_poll(int timeout_ms)
{
	struct pollfd pfd[SDR_MAX_INST + MAX_CLIENTS];
	unsigned n = 0, i, nc = nclients;
	uint64_t t = now_ms();

	for (i = 0; i < sdr_g.ninst; i++) {
		pfd[n].fd = sdr_g.inst[i].listen_fd;
		pfd[n++].events = POLLIN;
	}
	for (i = 0; i < nc; i++) {
		struct client *cl = &clients[i];
		uint64_t by = cl->pending ? cl->pend_by : cl->ctx ? 0 : cl->hello_by;
		pfd[n].fd = cl->fd;
		pfd[n++].events = cl->pending ? POLLOUT : POLLIN;
		if (by && (int64_t)(by - t) < timeout_ms)
			timeout_ms = by > t ? (int)(by - t) : 0;
	}
	if (poll(pfd, n, timeout_ms) < 0)
		return;
	t = now_ms();
	/* serve clients from the end so that dropping one (swap with last)
	 * does not skip another; before accepting new connections, so that a
	 * client that hung up and connects again is not counted twice against
	 * its quota */
	for (i = nc; i-- > 0;) {
		struct client *cl = &clients[i];
		short ev = pfd[sdr_g.ninst + i].revents;
		char w[64];

		if (cl->pending) {
			int rc = 1;
			if (ev & POLLOUT)
				rc = send_resp(cl->fd, &cl->pend, cl->pend_fd);
			if (rc == 0) {
				cl->pending = 0;
			} else if (rc < 0 || (ev & (POLLHUP | POLLERR))) {
				client_drop(i);
			} else if ((int64_t)(t - cl->pend_by) >= 0) {
				ctl_note(SDR_CTR_ctl_reply_timeout, cl->in->cfg.name, "%s dropped: it did"
					 " not take its reply within %u ms (--ctl-reply-timeout-ms)",
					 who_log(cl, w), sdr_g.cfg.ctl_reply_timeout_ms);
				client_drop(i);
			}
			continue;
		}
		if (!cl->ctx && (int64_t)(t - cl->hello_by) >= 0 && !(ev & POLLIN)) {
			ctl_note(SDR_CTR_ctl_hello_timeout, cl->in->cfg.name, "%s dropped: no HELLO"
				 " within %u ms (--ctl-hello-timeout-ms)", who_log(cl, w),
				 sdr_g.cfg.ctl_hello_timeout_ms);
			client_drop(i);
			continue;
		}
		if (!ev)
			continue;
		if ((ev & (POLLHUP | POLLERR)) && !(ev & POLLIN)) {
			client_drop(i);
			continue;
		}
		if (client_serve(cl))
			client_drop(i);
	}
	for (i = 0; i < sdr_g.ninst; i++)
		if (pfd[i].revents & POLLIN)
			accept_clients(&sdr_g.inst[i]);
}

void sdr_ctrl_fini(void)
{
	sdr_mrpop_fini(); /* before any MR is unmapped */
	while (nclients)
		client_drop(nclients - 1);
	for (unsigned i = 0; i < sdr_g.ninst; i++)
		if (sdr_g.inst[i].listen_fd >= 0) {
			close(sdr_g.inst[i].listen_fd);
			unlink(sdr_g.inst[i].cfg.name);
		}
}
