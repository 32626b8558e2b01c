/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of libsdr against a fake DPU written here: a thread serves the
 * control socket (memfd segments over SCM_RIGHTS); the test thread plays the
 * DPU data path (consumes the SQ, writes bitmaps and CQEs) with fake_step()
 * and fake_deliver(). A fake can die (fake_kill()) and a new one start on
 * its path (fake_restart()): libsdr's re-attach, with the fake's QP_RESTORE
 * and its share of the SQE flags of a restored QP.
 */
#include <errno.h>
#include <stddef.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "sdr.h"
#include "sdr_bitmap.h"
#include "sdr_internal.h"
#include "sdr_fdpass.h"
#include "sdr_hostdesc.h" /* the firmware's side of the check */
#include "sdr_test.h"

/* Two SQEs are equal field by field (the reserved bytes too). */
#define SQE_FEQ(a, b, f) (memcmp(&(a)->f, &(b)->f, sizeof((a)->f)) == 0)
static int sqe_eq(const struct sdr_sqe *a, const struct sdr_sqe *b)
{
	return SQE_FEQ(a, b, opcode) && SQE_FEQ(a, b, flags) && SQE_FEQ(a, b, qp_id) &&
	       SQE_FEQ(a, b, mr_id) && SQE_FEQ(a, b, wr_id) && SQE_FEQ(a, b, offset) &&
	       SQE_FEQ(a, b, length) && SQE_FEQ(a, b, imm) && SQE_FEQ(a, b, seq) &&
	       SQE_FEQ(a, b, msg_offset) && SQE_FEQ(a, b, reserved);
}

/* ---------------- fake DPU ---------------- */

#define F_MAX 8
#define F_SLOTS 1024
#define F_MTU 1024
#define F_CHUNK_PKTS 2
#define F_CHUNK (F_MTU * F_CHUNK_PKTS)
#define F_MAX_MSG (64 * 1024)
#define F_WORDS 1

struct fake_recv {
	int posted;
	uint32_t mr, length;
	uint64_t offset, wr_id;
};

struct fake_qp {
	int used, connected, restored;
	uint64_t send_wr[F_SLOTS];
	uint8_t *seg;
	size_t seg_size;
	struct sdr_qseg_slot *slots;
	uint64_t *bm;
	uint32_t send_seq, recv_seq;
	struct fake_recv recv[F_SLOTS];
};

struct fake {
	char path[108];
	int lsock, conn;
	pthread_t th;
	atomic_int stop;
	uint32_t cq_entries;
	int bad_magic;
	uint8_t *seg;
	size_t seg_size;
	struct sdr_ring sq, cq;
	struct fake_qp qp[F_MAX];
	int mr_used[F_MAX];
	uint64_t mr_len[F_MAX];
	int hold_send_cqe; /* do not complete sends */
	int nsqe;          /* SQEs consumed so far */
	/* restarts */
	uint32_t first_id;              /* MR and QP ids start here (a new daemon's) */
	int restore_status;             /* QP_RESTORE answers this (0: restores) */
	uint32_t restore_ip_xor;        /* ... with this IP (identity change) */
	struct sdr_ctl_req restore_req; /* the last QP_RESTORE */
	int nrestore, nhello;
	struct { /* every SQE consumed: what a restored QP saw */
		uint8_t opcode, flags;
		uint16_t qp_id;
		uint32_t mr_id, number;
	} log[64];
	int nlog;
};

/* The fake's restore token of a QP: derived from its identity. */
static void fake_token(uint32_t qpn, uint8_t token[SDR_RESTORE_TOKEN_LEN])
{
	for (int i = 0; i < SDR_RESTORE_TOKEN_LEN; i++)
		token[i] = (uint8_t)(qpn * 7 + (uint32_t)i + 1);
}

static int send_resp(int s, struct sdr_ctl_resp *r, int fd)
{
	return sdr_fd_send(s, r, sizeof(*r), fd, -1) ? -1 : 0;
}

static int make_memfd(size_t len, uint8_t **map)
{
	int fd = memfd_create("fake", MFD_CLOEXEC);

	if (fd < 0 || ftruncate(fd, (off_t)len) < 0)
		abort();
	*map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (*map == MAP_FAILED)
		abort();
	return fd;
}

static void fake_hello(struct fake *f, struct sdr_ctl_resp *r, int *fd)
{
	struct sdr_seg_hdr *h;
	uint64_t sq_idx = 256, sq = 512, cq_idx = sq + SDR_SQ_ENTRIES * 64, cq = cq_idx + 256;

	f->seg_size = cq + (size_t)f->cq_entries * 32;
	*fd = make_memfd(f->seg_size, &f->seg);
	h = (struct sdr_seg_hdr *)f->seg;
	h->magic = f->bad_magic ? 0xdeadbeef : SDR_SEG_MAGIC;
	h->abi_major = SDR_ABI_MAJOR;
	h->abi_minor = SDR_ABI_MINOR;
	h->seg_size = f->seg_size;
	h->sq_entries = SDR_SQ_ENTRIES;
	h->sq_esize = 64;
	h->cq_entries = f->cq_entries;
	h->cq_esize = 32;
	h->sq_idx_off = sq_idx;
	h->sq_off = sq;
	h->cq_idx_off = cq_idx;
	h->cq_off = cq;
	sdr_ring_format((struct sdr_ring_idx *)(f->seg + sq_idx), SDR_SQ_ENTRIES, 64);
	sdr_ring_format((struct sdr_ring_idx *)(f->seg + cq_idx), f->cq_entries, 32);
	sdr_ring_attach(&f->sq, (void *)(f->seg + sq_idx), f->seg + sq, SDR_SQ_ENTRIES, 64, 0);
	sdr_ring_attach(&f->cq, (void *)(f->seg + cq_idx), f->seg + cq, f->cq_entries, 32, 1);
	r->seg_size = f->seg_size;
}

static void fake_qp_create(struct fake *f, const struct sdr_ctl_req *q, struct sdr_ctl_resp *r,
			   int *fd)
{
	struct sdr_qseg_hdr *h;
	struct fake_qp *fq;
	int i;

	if (q->qp_attr.want_qpn % 4) {
		r->status = -EINVAL;
		snprintf(r->msg, sizeof(r->msg), "want_qpn 0x%x not aligned to 4 generations",
			 q->qp_attr.want_qpn);
		return;
	}
	for (i = (int)f->first_id; i < F_MAX && f->qp[i].used; i++)
		;
	if (i == F_MAX) {
		r->status = -ENOSPC;
		return;
	}
	fq = &f->qp[i];
	memset(fq, 0, sizeof(*fq));
	fq->used = 1;
	fq->seg_size = 4096 + F_SLOTS * sizeof(struct sdr_qseg_slot) + F_SLOTS * F_WORDS * 8;
	*fd = make_memfd(fq->seg_size, &fq->seg);
	h = (struct sdr_qseg_hdr *)fq->seg;
	h->magic = SDR_QSEG_MAGIC;
	h->slots = F_SLOTS;
	h->bitmap_words = F_WORDS;
	h->chunk_bytes = F_CHUNK;
	h->slot_off = 4096;
	h->bitmap_off = 4096 + F_SLOTS * sizeof(struct sdr_qseg_slot);
	fq->slots = (void *)(fq->seg + h->slot_off);
	fq->bm = (void *)(fq->seg + h->bitmap_off);
	r->id = (uint32_t)i;
	r->seg_size = fq->seg_size;
	r->info.qpn = q->qp_attr.want_qpn ? q->qp_attr.want_qpn : 0x100u + 4u * (uint32_t)i;
	r->info.rkey = q->qp_attr.want_rkey ? q->qp_attr.want_rkey : 0x1234;
	r->info.ip = 0x0A000001;
	memcpy(r->info.mac, "\x02\0\0\0\0\x01", 6);
	r->info.mtu = F_MTU;
	r->info.max_msg = F_MAX_MSG;
	r->info.chunk_pkts = F_CHUNK_PKTS;
	r->info.generations = 4;
	fake_token(r->info.qpn, r->token);
}

/* QP_RESTORE: the QP again, on the host's segment, numbered from the bases. */
static void fake_qp_restore(struct fake *f, const struct sdr_ctl_req *q, int fd_in,
			    struct sdr_ctl_resp *r)
{
	const struct sdr_qseg_hdr *h;
	uint8_t token[SDR_RESTORE_TOKEN_LEN];
	struct fake_qp *fq;
	int i;

	f->restore_req = *q;
	f->nrestore++;
	fake_token(q->restore.local.qpn, token);
	if (f->restore_status || memcmp(token, q->restore.token, sizeof(token)) || fd_in < 0) {
		r->status = f->restore_status ? f->restore_status : -EPERM;
		snprintf(r->msg, sizeof(r->msg), "restore token does not match");
		return;
	}
	for (i = (int)f->first_id; i < F_MAX && f->qp[i].used; i++)
		;
	if (i == F_MAX) {
		r->status = -ENOSPC;
		return;
	}
	fq = &f->qp[i];
	memset(fq, 0, sizeof(*fq));
	fq->used = fq->restored = 1;
	fq->connected = q->restore.connected;
	fq->seg_size = 4096 + F_SLOTS * sizeof(struct sdr_qseg_slot) + F_SLOTS * F_WORDS * 8;
	fq->seg = mmap(NULL, fq->seg_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd_in, 0);
	if (fq->seg == MAP_FAILED)
		abort();
	h = (const struct sdr_qseg_hdr *)fq->seg;
	fq->slots = (void *)(fq->seg + h->slot_off);
	fq->bm = (void *)(fq->seg + h->bitmap_off);
	fq->send_seq = q->restore.send_base;
	fq->recv_seq = q->restore.recv_base;
	r->id = (uint32_t)i;
	r->info = q->restore.local;
	r->info.ip ^= f->restore_ip_xor;
	memcpy(r->token, q->restore.token, sizeof(r->token));
}

static void *fake_thread(void *arg)
{
	struct fake *f = arg;

	while (!atomic_load(&f->stop)) {
		struct sdr_ctl_req q;
		struct sdr_ctl_resp r;
		int fd_in = -1, fd_out = -1;
		ssize_t n;

		if (f->conn < 0) {
			struct pollfd p = {.fd = f->lsock, .events = POLLIN};

			if (poll(&p, 1, 20) > 0)
				f->conn = accept(f->lsock, NULL, NULL);
			continue;
		}
		/* one request (and its memfd), the same code as libsdr's */
		n = sdr_fd_recv(f->conn, &q, sizeof(q), &fd_in, 20);
		if (n == -ETIMEDOUT)
			continue;
		if (n <= 0 && n != -EMSGSIZE)
			break;
		memset(&r, 0, sizeof(r));
		r.magic = SDR_CTL_MAGIC;
		r.type = q.type;
		if (n != sizeof(q) || q.magic != SDR_CTL_MAGIC || q.abi_major != SDR_ABI_MAJOR) {
			r.status = -EPROTO;
		} else if (q.type == SDR_CTL_HELLO) {
			f->nhello++;
			fake_hello(f, &r, &fd_out);
		} else if (q.type == SDR_CTL_QP_RESTORE) {
			fake_qp_restore(f, &q, fd_in, &r);
		} else if (q.type == SDR_CTL_MR_REG) {
			int i;

			for (i = (int)f->first_id; i < F_MAX && f->mr_used[i]; i++)
				;
			if (fd_in < 0 || i == F_MAX) {
				r.status = -EINVAL;
			} else {
				f->mr_used[i] = 1;
				f->mr_len[i] = q.length;
				r.id = (uint32_t)i;
			}
		} else if (q.type == SDR_CTL_MR_DEREG) {
			if (q.mr_id < F_MAX && f->mr_used[q.mr_id])
				f->mr_used[q.mr_id] = 0;
			else
				r.status = -ENOENT;
		} else if (q.type == SDR_CTL_QP_CREATE) {
			fake_qp_create(f, &q, &r, &fd_out);
		} else if (q.type == SDR_CTL_QP_CONNECT) {
			if (q.qp_id < F_MAX && f->qp[q.qp_id].used)
				f->qp[q.qp_id].connected = 1;
			else
				r.status = -EBADF;
		} else if (q.type == SDR_CTL_QP_DESTROY) {
			if (q.qp_id < F_MAX && f->qp[q.qp_id].used)
				f->qp[q.qp_id].used = 0;
			else
				r.status = -EBADF;
		} else {
			r.status = -EOPNOTSUPP;
		}
		if (fd_in >= 0)
			close(fd_in);
		send_resp(f->conn, &r, fd_out);
		if (fd_out >= 0)
			close(fd_out);
	}
	return NULL;
}

static struct fake *fake_start_at(const char *path, uint32_t cq_entries, int bad_magic,
				  uint32_t first_id)
{
	static int n;
	struct fake *f = calloc(1, sizeof(*f));
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	if (path)
		snprintf(f->path, sizeof(f->path), "%s", path);
	else
		snprintf(f->path, sizeof(f->path), "/tmp/sdr-test-%d-%d.sock", (int)getpid(), n++);
	f->first_id = first_id;
	unlink(f->path);
	f->cq_entries = cq_entries;
	f->bad_magic = bad_magic;
	f->conn = -1;
	f->lsock = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	memcpy(sa.sun_path, f->path, strlen(f->path) + 1);
	if (bind(f->lsock, (void *)&sa, sizeof(sa)) || listen(f->lsock, 4))
		abort();
	pthread_create(&f->th, NULL, fake_thread, f);
	return f;
}

static struct fake *fake_start(uint32_t cq_entries, int bad_magic)
{
	return fake_start_at(NULL, cq_entries, bad_magic, 1);
}

/* Daemon death: stop serving and close everything. */
static void fake_kill(struct fake *f)
{
	atomic_store(&f->stop, 1);
	pthread_join(f->th, NULL);
	if (f->conn >= 0)
		close(f->conn);
	f->conn = -1;
	close(f->lsock);
	unlink(f->path);
}

static void fake_free(struct fake *f)
{
	if (!atomic_load(&f->stop))
		fake_kill(f);
	free(f);
}

static void cqe_put(struct fake *f, uint64_t wr_id, uint32_t seq, uint32_t len, uint32_t imm,
		    int32_t status, uint16_t qp, uint8_t op, uint8_t flags)
{
	struct sdr_cqe c = {.wr_id = wr_id,
			    .seq = seq,
			    .length = len,
			    .imm = imm,
			    .status = status,
			    .qp_id = qp,
			    .opcode = op,
			    .flags = flags};

	if (sdr_ring_enqueue_burst(&f->cq, &c, 1) != 1)
		abort();
}

/* Consume the SQ like the DPU would (simplified). */
static void fake_step(struct fake *f)
{
	struct sdr_sqe e;

	while (sdr_ring_dequeue_burst(&f->sq, &e, 1) == 1) {
		struct fake_qp *q = e.qp_id < F_MAX && f->qp[e.qp_id].used ? &f->qp[e.qp_id] : NULL;

		f->nsqe++;
		if (f->nlog < (int)(sizeof(f->log) / sizeof(f->log[0]))) {
			f->log[f->nlog].opcode = e.opcode;
			f->log[f->nlog].flags = e.flags;
			f->log[f->nlog].qp_id = e.qp_id;
			f->log[f->nlog].mr_id = e.mr_id;
			f->log[f->nlog].number = !q                        ? 0
						 : e.opcode == SDR_SQ_SEND ? q->send_seq
						 : e.opcode == SDR_SQ_RECV ? q->recv_seq
									   : e.seq;
			f->nlog++;
		}
		if (q && q->restored && (e.flags & SDR_SQE_F_DONE) &&
		    (e.opcode == SDR_SQ_SEND || e.opcode == SDR_SQ_RECV)) {
			/* completed before the restart: its number, nothing else */
			if (e.opcode == SDR_SQ_SEND)
				q->send_wr[q->send_seq++ % F_SLOTS] = e.wr_id;
			else
				q->recv_seq++;
			continue;
		}
		if (q && q->restored && e.flags == SDR_SQE_F_RESUME && e.opcode == SDR_SQ_RECV)
			e.flags = 0; /* the slot's bitmap stays: a receive as any other */
		if (e.flags || q == NULL) {
			cqe_put(f, e.wr_id, 0, 0, 0, e.flags ? -EINVAL : -EBADF, e.qp_id, e.opcode,
				0);
			continue;
		}
		switch (e.opcode) {
		case SDR_SQ_SEND:
			q->send_wr[q->send_seq % F_SLOTS] = e.wr_id;
			if (!f->hold_send_cqe)
				cqe_put(f, e.wr_id, q->send_seq, e.length, 0, 0, e.qp_id,
					SDR_SQ_SEND, 0);
			q->send_seq++;
			break;
		case SDR_SQ_RECV: {
			struct fake_recv *r = &q->recv[q->recv_seq % F_SLOTS];

			r->posted = 1;
			r->mr = e.mr_id;
			r->offset = e.offset;
			r->length = e.length;
			r->wr_id = e.wr_id;
			q->recv_seq++;
			break;
		}
		case SDR_SQ_RECV_COMPLETE: {
			struct fake_recv *r = &q->recv[e.seq % F_SLOTS];
			uint32_t n = (r->length + F_CHUNK - 1) / F_CHUNK;
			int full = sdr_bitmap_range_full(q->bm + (e.seq % F_SLOTS) * F_WORDS, 0, n);

			if (r->posted) {
				/* as the DPU: the fake never delivers an immediate early */
				cqe_put(f, r->wr_id, e.seq, r->length, 0, 0, e.qp_id, SDR_SQ_RECV,
					(full ? 0 : SDR_CQE_F_PARTIAL) | SDR_CQE_F_IMM_PARTIAL);
				r->posted = 0;
			}
			break;
		}
		default: cqe_put(f, e.wr_id, 0, 0, 0, -EINVAL, e.qp_id, e.opcode, 0);
		}
	}
}

/* Land chunk @p chunk of receive @p seq; complete it when all are in. */
static void fake_deliver(struct fake *f, uint32_t qp_id, uint32_t seq, uint32_t chunk)
{
	struct fake_qp *q = &f->qp[qp_id];
	struct fake_recv *r = &q->recv[seq % F_SLOTS];
	uint64_t *bm = q->bm + (seq % F_SLOTS) * F_WORDS;
	uint32_t n = (r->length + F_CHUNK - 1) / F_CHUNK;

	sdr_bit_set_shared(bm, chunk);
	atomic_fetch_add(&q->slots[seq % F_SLOTS].chunks_set, 1);
	if (r->posted && sdr_bitmap_range_full(bm, 0, n)) {
		cqe_put(f, r->wr_id, seq, r->length, 0xC0FFEE, 0, (uint16_t)qp_id, SDR_SQ_RECV,
			SDR_CQE_F_IMM);
		r->posted = 0;
	}
}

/* The completion of send @p seq (held by hold_send_cqe). */
static void fake_send_done(struct fake *f, uint32_t qp_id, uint32_t seq)
{
	cqe_put(f, f->qp[qp_id].send_wr[seq % F_SLOTS], seq, 100, 0, 0, (uint16_t)qp_id,
		SDR_SQ_SEND, 0);
}

static uint32_t sq_pending(struct fake *f)
{
	return (uint32_t)sdr_ring_avail_checked(&f->sq);
}

/* ---------------- tests ---------------- */

struct env {
	struct fake *f;
	struct sdr_ctx *ctx;
	uint8_t *buf;
	struct sdr_mr *mr;
	struct sdr_qp *qp;
};

/* the attributes env_up_attr() creates its QP with (NULL: the defaults) */
static const struct sdr_qp_attr *env_qp_attr;

static void env_up_attr(struct env *e, uint32_t cq_entries, int connect,
			const struct sdr_ctx_attr *attr)
{
	struct sdr_qp_info peer;

	e->f = fake_start(cq_entries, 0);
	e->ctx = sdr_ctx_open(e->f->path, attr);
	if (e->ctx == NULL) {
		perror("sdr_ctx_open");
		abort();
	}
	e->buf = sdr_buf_alloc(e->ctx, 1 << 20);
	e->mr = sdr_mr_reg(e->ctx, e->buf, 1 << 20, 0);
	e->qp = sdr_qp_create(e->ctx, env_qp_attr);
	if (e->buf == NULL || e->mr == NULL || e->qp == NULL)
		abort();
	sdr_qp_info_get(e->qp, &peer);
	peer.qpn += 0x100;
	if (connect && sdr_qp_connect(e->qp, &peer))
		abort();
}

static void env_up(struct env *e, uint32_t cq_entries, int connect)
{
	env_up_attr(e, cq_entries, connect, NULL);
}

static void env_down(struct env *e)
{
	sdr_ctx_close(e->ctx);
	fake_free(e->f);
}

static void test_open_errors(void)
{
	struct fake *f;

	errno = 0;
	CHECK(sdr_ctx_open("/tmp/sdr-test-does-not-exist.sock", NULL) == NULL && errno == ENOENT);
	CHECK(sdr_ctx_open(NULL, NULL) == NULL && errno == EINVAL);
	f = fake_start(SDR_CQ_ENTRIES, 1);
	errno = 0;
	CHECK(sdr_ctx_open(f->path, NULL) == NULL && errno == EPROTO);
	fake_free(f);
}

static void test_control(void)
{
	struct env e;
	struct sdr_qp_attr a = {.want_qpn = 0x203};
	struct sdr_qp_info info, bad;
	struct sdr_mr *m2;
	uint8_t *other;

	env_up(&e, SDR_CQ_ENTRIES, 0);
	/* EC parameters: checked locally, and 0 unless reliability is EC (the
	 * old name of the three bytes still compiles and still means "must be
	 * 0" for NONE and SR) */
	{
		struct sdr_qp_attr x = {.reliability = SDR_REL_SR, .ec_k = 1};
		errno = 0;
		CHECK(sdr_qp_create(e.ctx, &x) == NULL && errno == EINVAL);
		memset(&x, 0, sizeof(x));
		x.reserved8[0] = 1;
		errno = 0;
		CHECK(sdr_qp_create(e.ctx, &x) == NULL && errno == EINVAL);
		x = (struct sdr_qp_attr){
			.reliability = SDR_REL_EC, .ec_code = SDR_EC_RS, .ec_k = 65, .ec_m = 8};
		errno = 0;
		CHECK(sdr_qp_create(e.ctx, &x) == NULL && errno == EINVAL);
		x.ec_k = 32;
		x.ec_code = 3;
		errno = 0;
		CHECK(sdr_qp_create(e.ctx, &x) == NULL && errno == EINVAL);
		x.ec_code = SDR_EC_XOR;
		x.ec_k = 4; /* XOR: m <= k */
		errno = 0;
		CHECK(sdr_qp_create(e.ctx, &x) == NULL && errno == EINVAL);
		CHECK(sizeof(struct sdr_qp_attr) == 40 &&
		      offsetof(struct sdr_qp_attr, ec_code) == 9 &&
		      offsetof(struct sdr_qp_attr, ec_m) == 11);
	}
	/* daemon refusal surfaces errno and the daemon's reason */
	errno = 0;
	CHECK(sdr_qp_create(e.ctx, &a) == NULL && errno == EINVAL);
	CHECK(strstr(sdr_last_error(e.ctx), "want_qpn") != NULL);
	a.want_qpn = 0x200;
	a.want_rkey = 0xabcd;
	struct sdr_qp *q2 = sdr_qp_create(e.ctx, &a);
	CHECK(q2 != NULL);
	CHECK(sdr_qp_info_get(q2, &info) == 0 && info.qpn == 0x200 && info.rkey == 0xabcd &&
	      info.mtu == F_MTU);
	/* only sdr_buf_alloc memory can be registered */
	other = malloc(4096);
	errno = 0;
	CHECK(sdr_mr_reg(e.ctx, other, 4096, 0) == NULL && errno == EINVAL);
	CHECK(sdr_mr_reg(e.ctx, e.buf + (1 << 20) - 10, 20, 0) == NULL && errno == EINVAL);
	free(other);
	m2 = sdr_mr_reg(e.ctx, e.buf + 4096, 4096, 0);
	CHECK(m2 != NULL && sdr_mr_addr(m2) == e.buf + 4096 && sdr_mr_length(m2) == 4096);
	CHECK(sdr_buf_free(e.ctx, e.buf) == -EBUSY);
	CHECK(sdr_mr_dereg(m2) == 0);
	/* connect validates the remote info */
	bad = info;
	bad.mtu = 1500;
	CHECK(sdr_qp_connect(q2, &bad) == -EINVAL);
	bad = info; /* EC parameters on a QP that is not EC */
	bad.ec = sdr_ec_param_pack(1, 32, 8);
	CHECK(sdr_qp_connect(q2, &bad) == -EINVAL);
	bad.reliability = SDR_REL_EC; /* EC with invalid parameters */
	bad.ec = sdr_ec_param_pack(2, 4, 8);
	CHECK(sdr_qp_connect(q2, &bad) == -EINVAL);
	CHECK(sdr_qp_connect(q2, &info) == 0);
	CHECK(sdr_qp_connect(q2, &info) == -EISCONN);
	CHECK(sdr_qp_destroy(q2) == 0);
	env_down(&e);
}

static void test_validation(void)
{
	struct env e;
	struct sdr_send_wr w = {0};
	struct sdr_recv_wr r = {0};
	struct sdr_mr *gone;
	struct sdr_qp_info peer;
	struct sdr_send_handle *h;

	env_up(&e, SDR_CQ_ENTRIES, 0);
	w.mr = e.mr;
	w.length = 100;
	r.mr = e.mr;
	r.length = 100;
	CHECK(sdr_send_post(e.qp, &w, &h) == -ENOTCONN);
	CHECK(sdr_recv_post(e.qp, &r, NULL) == -ENOTCONN);
	sdr_qp_info_get(e.qp, &peer);
	CHECK(sdr_qp_connect(e.qp, &peer) == 0);

	w.length = 0;
	CHECK(sdr_send_post(e.qp, &w, &h) == -EMSGSIZE);
	w.length = F_MAX_MSG + 1;
	CHECK(sdr_send_post(e.qp, &w, &h) == -EMSGSIZE);
	r.length = F_MAX_MSG + 1;
	CHECK(sdr_recv_post(e.qp, &r, NULL) == -EMSGSIZE);
	w.length = 100;
	w.offset = (1 << 20) - 99;
	CHECK(sdr_send_post(e.qp, &w, &h) == -ERANGE);
	w.offset = 0;
	w.addr = e.buf + (1 << 20);
	CHECK(sdr_send_post(e.qp, &w, &h) == -EINVAL);
	w.addr = NULL;
	w.mr = NULL;
	CHECK(sdr_send_post(e.qp, &w, &h) == -EINVAL);
	gone = sdr_mr_reg(e.ctx, e.buf, 8192, 0);
	CHECK(gone && sdr_mr_dereg(gone) == 0);
	w.mr = gone;
	CHECK(sdr_send_post(e.qp, &w, &h) == -ENOENT);
	r.mr = gone;
	r.length = 100;
	CHECK(sdr_recv_post(e.qp, &r, NULL) == -ENOENT);
	r.mr = e.mr;
	r.reserved = 1;
	CHECK(sdr_recv_post(e.qp, &r, NULL) == -EINVAL);
	/* nothing reached the DPU */
	CHECK(sq_pending(e.f) == 0);
	CHECK(sdr__outstanding(e.ctx) == 0);

	/* streams */
	struct sdr_stream_start_wr ss = {.length = 3 * F_MTU, .wr_id = 9};
	struct sdr_stream_wr sd = {.mr = e.mr, .length = F_MTU, .msg_offset = 100};
	CHECK(sdr_send_stream_start(e.qp, &ss, &h) == 0);
	CHECK(sdr_send_stream_continue(h, &sd) == -EINVAL); /* not MTU aligned */
	sd.msg_offset = 2 * F_MTU;
	sd.length = F_MTU + 1;
	CHECK(sdr_send_stream_continue(h, &sd) == -EMSGSIZE); /* past the end */
	sd.msg_offset = 0;
	sd.length = F_MTU / 2;
	CHECK(sdr_send_stream_continue(h, &sd) == -EINVAL); /* not whole packets */
	sd.msg_offset = 2 * F_MTU;
	sd.length = F_MTU;
	CHECK(sdr_send_stream_continue(h, &sd) == 0);
	CHECK(sdr_send_stream_end(h) == 0);
	CHECK(sdr_send_stream_continue(h, &sd) == -EINVAL); /* ended */
	CHECK(sq_pending(e.f) == 3);
	env_down(&e);
}

static void test_send_recv(void)
{
	struct env e;
	struct sdr_send_wr w = {0};
	struct sdr_recv_wr r = {0};
	struct sdr_send_handle *sh, *sh2;
	struct sdr_recv_handle *rh;
	const uint64_t *bm;
	size_t nch;
	uint32_t imm;
	struct sdr_wc wc[8];
	struct sdr_qp_info peer;

	env_up(&e, SDR_CQ_ENTRIES, 1);
	sdr_qp_info_get(e.qp, &peer);
	w.mr = e.mr;
	w.length = 5000;
	w.wr_id = 77;
	CHECK(sdr_send_post(e.qp, &w, &sh) == 0);
	CHECK(sdr_send_seq(sh) == 0);
	CHECK(sdr_send_poll(sh) == 0);
	fake_step(e.f);
	CHECK(sdr_send_poll(sh) == 1);
	CHECK(sdr__outstanding(e.ctx) == 0);
	CHECK(sdr_cq_poll(e.ctx, wc, 8) == 0); /* reaped through the handle */

	w.wr_id = 78;
	w.addr = e.buf + 100;
	CHECK(sdr_send_post(e.qp, &w, &sh2) == 0 && sdr_send_seq(sh2) == 1);
	fake_step(e.f);
	CHECK(sdr_cq_poll(e.ctx, wc, 8) == 1);
	CHECK(wc[0].wr_id == 78 && wc[0].status == 0 && wc[0].opcode == SDR_SQ_SEND &&
	      wc[0].qp == e.qp && wc[0].seq == 1 && wc[0].length == 5000 && wc[0].handle == sh2);
	CHECK(sdr_send_poll(sh2) == 1);

	/* receive: bitmap, imm, completion */
	r.mr = e.mr;
	r.length = 3 * F_CHUNK + 1; /* 4 chunks */
	r.wr_id = 5;
	CHECK(sdr_recv_post(e.qp, &r, &rh) == 0);
	fake_step(e.f);
	CHECK(sdr_recv_bitmap_get(rh, &bm, &nch) == 0 && nch == 4);
	CHECK(sdr_recv_chunk_bytes(rh) == F_CHUNK);
	CHECK(sdr_recv_chunks_done(rh) == 0);
	CHECK(sdr_recv_imm_get(rh, &imm) == -EAGAIN);
	fake_deliver(e.f, sdr__qp_id(e.qp), 0, 2);
	CHECK(sdr_recv_chunks_done(rh) == 1 && sdr_bit_test(bm, 2) && !sdr_bit_test(bm, 0));
	CHECK(sdr_recv_poll(rh) == SDR_POLL_PENDING);
	{
		struct sdr_qseg_slot *s = &e.f->qp[sdr__qp_id(e.qp)].slots[0];

		atomic_store(&s->imm, 0xABCD1234);
		atomic_store(&s->imm_mask, 0x7F);
		CHECK(sdr_recv_imm_get(rh, &imm) == -EAGAIN);
		atomic_store(&s->imm_mask, 0xFF);
		CHECK(sdr_recv_imm_get(rh, &imm) == 0 && imm == 0xABCD1234);
	}
	fake_deliver(e.f, sdr__qp_id(e.qp), 0, 0);
	fake_deliver(e.f, sdr__qp_id(e.qp), 0, 1);
	fake_deliver(e.f, sdr__qp_id(e.qp), 0, 3);
	CHECK(sdr_cq_poll(e.ctx, wc, 8) == 1);
	CHECK(wc[0].opcode == SDR_SQ_RECV && wc[0].wr_id == 5 && wc[0].length == r.length &&
	      (wc[0].flags & SDR_CQE_F_IMM) && wc[0].imm == 0xC0FFEE && wc[0].handle == rh);
	CHECK(sdr_recv_poll(rh) == SDR_POLL_DONE);
	CHECK(sdr_recv_imm_get(rh, &imm) == 0 && imm == 0xC0FFEE);
	CHECK(sdr_recv_complete(rh) == -EALREADY);

	/* partial completion through sdr_recv_complete */
	r.wr_id = 6;
	CHECK(sdr_recv_post(e.qp, &r, &rh) == 0 && sdr_recv_seq(rh) == 1);
	fake_step(e.f);
	fake_deliver(e.f, sdr__qp_id(e.qp), 1, 0);
	CHECK(sdr_recv_complete(rh) == 0);
	CHECK(sdr_recv_complete(rh) == -EALREADY);
	fake_step(e.f);
	CHECK(sdr_recv_poll(rh) == SDR_POLL_PARTIAL);
	CHECK(sdr_cq_poll(e.ctx, wc, 8) == 0);
	CHECK(sdr_recv_imm_get(rh, &imm) == -EAGAIN);
	/* the last error says what is missing, in the words of the daemon's /ops
	 * page; the fake's QP has no reliability: the hint follows */
	printf("partial receive: %s\n", sdr_last_error(e.ctx));
	CHECK(strstr(sdr_last_error(e.ctx), "recv #1 posted ") == sdr_last_error(e.ctx));
	CHECK(strstr(sdr_last_error(e.ctx), "1 of 4 chunks, missing 1-3") != NULL);
	CHECK(strstr(sdr_last_error(e.ctx), "no reliability scheme") != NULL);

	/* every byte in but the immediate incomplete: DONE, no immediate */
	r.wr_id = 7;
	CHECK(sdr_recv_post(e.qp, &r, &rh) == 0 && sdr_recv_seq(rh) == 2);
	fake_step(e.f);
	cqe_put(e.f, e.f->qp[sdr__qp_id(e.qp)].recv[2].wr_id, 2, r.length, 0, 0,
		(uint16_t)sdr__qp_id(e.qp), SDR_SQ_RECV, SDR_CQE_F_IMM_PARTIAL);
	e.f->qp[sdr__qp_id(e.qp)].recv[2].posted = 0;
	CHECK(sdr_cq_poll(e.ctx, wc, 8) == 1);
	CHECK(wc[0].handle == rh && wc[0].wr_id == 7 && wc[0].length == r.length &&
	      wc[0].flags == SDR_CQE_F_IMM_PARTIAL);
	CHECK(sdr_recv_poll(rh) == SDR_POLL_DONE);
	CHECK(sdr_recv_imm_get(rh, &imm) == -EAGAIN);

	/* a receive completing in error, reaped by sdr_cq_poll: the status, then
	 * the receive's state with the peer's address */
	r.wr_id = 8;
	CHECK(sdr_recv_post(e.qp, &r, &rh) == 0 && sdr_recv_seq(rh) == 3);
	fake_step(e.f);
	fake_deliver(e.f, sdr__qp_id(e.qp), 3, 0);
	fake_deliver(e.f, sdr__qp_id(e.qp), 3, 2);
	cqe_put(e.f, e.f->qp[sdr__qp_id(e.qp)].recv[3].wr_id, 3, 0, 0, -ETIMEDOUT,
		(uint16_t)sdr__qp_id(e.qp), SDR_SQ_RECV, SDR_CQE_F_PARTIAL);
	e.f->qp[sdr__qp_id(e.qp)].recv[3].posted = 0;
	CHECK(sdr_cq_poll(e.ctx, wc, 8) == 1 && wc[0].handle == rh && wc[0].status == -ETIMEDOUT);
	printf("receive in error: %s\n", sdr_last_error(e.ctx));
	CHECK(strstr(sdr_last_error(e.ctx), "timed out: recv #3 posted ") == sdr_last_error(e.ctx));
	CHECK(strstr(sdr_last_error(e.ctx), "2 of 4 chunks, missing 1, 3") != NULL);
	CHECK(strstr(sdr_last_error(e.ctx), "no reliability scheme") != NULL);
	CHECK(sdr_recv_poll(rh) == -ETIMEDOUT);
	/* no chunk of it in: the peer's address (the connected remote QP info) */
	r.wr_id = 10;
	CHECK(sdr_recv_post(e.qp, &r, &rh) == 0 && sdr_recv_seq(rh) == 4);
	fake_step(e.f);
	cqe_put(e.f, e.f->qp[sdr__qp_id(e.qp)].recv[4].wr_id, 4, 0, 0, -EIO,
		(uint16_t)sdr__qp_id(e.qp), SDR_SQ_RECV, SDR_CQE_F_PARTIAL);
	e.f->qp[sdr__qp_id(e.qp)].recv[4].posted = 0;
	CHECK(sdr_recv_poll(rh) == -EIO);
	printf("receive in error, nothing in: %s\n", sdr_last_error(e.ctx));
	CHECK(strstr(sdr_last_error(e.ctx), "recv #4 posted ") != NULL);
	CHECK(strstr(sdr_last_error(e.ctx), "0 of 4 chunks, no packet of it yet from 10.0.0.1") !=
	      NULL);
	/* a complete receive leaves the last error alone */
	r.wr_id = 9;
	CHECK(sdr_recv_post(e.qp, &r, &rh) == 0 && sdr_recv_seq(rh) == 5);
	fake_step(e.f);
	for (uint32_t c = 0; c < 4; c++)
		fake_deliver(e.f, sdr__qp_id(e.qp), 5, c);
	CHECK(sdr_recv_poll(rh) == SDR_POLL_DONE);
	CHECK(strstr(sdr_last_error(e.ctx), "recv #4 posted ") != NULL);

	/* hostile / unknown completions are reported, not attributed */
	cqe_put(e.f, 12345, 3, 0, 0, -EIO, 99, SDR_SQ_SEND, 0);
	CHECK(sdr_cq_poll(e.ctx, wc, 8) == 1 && wc[0].qp == NULL && wc[0].wr_id == 12345 &&
	      wc[0].status == -EIO);
	struct sdr_sqe raw = {.opcode = SDR_SQ_SEND,
			      .flags = 1,
			      .qp_id = (uint16_t)sdr__qp_id(e.qp),
			      .wr_id = 4242,
			      .length = 1};
	CHECK(sdr__sq_raw_post(e.ctx, &raw) == 0);
	fake_step(e.f);
	CHECK(sdr_cq_poll(e.ctx, wc, 8) == 1 && wc[0].qp == NULL && wc[0].wr_id == 4242 &&
	      wc[0].status == -EINVAL);
	struct sdr_ctx_stats st;
	CHECK(sdr_ctx_stats_get(e.ctx, &st) == 0 && st.cqe_unmatched == 2);
	env_down(&e);
}

static void test_eagain(void)
{
	struct env e;
	struct sdr_send_wr w = {0};
	struct sdr_recv_wr r = {0};
	struct sdr_recv_handle *rh0 = NULL, *rh;
	struct sdr_ctx_stats st;
	int n, rc;

	/* SQ ring full: the fake does not consume. 600 receives + 424 sends
	 * fill the 1024 entries while both directions still have free handles. */
	env_up(&e, SDR_CQ_ENTRIES, 1);
	w.mr = e.mr;
	w.length = 10;
	r.mr = e.mr;
	r.length = 10;
	for (n = 0; n < 600; n++)
		CHECK(sdr_recv_post(e.qp, &r, NULL) == 0);
	for (n = 0; (rc = sdr_send_post(e.qp, &w, NULL)) == 0 && n < 5000; n++)
		;
	CHECK(rc == -EAGAIN && n == SDR_SQ_ENTRIES - 600);
	CHECK(sdr_ctx_stats_get(e.ctx, &st) == 0 && st.sq_full == 1 && st.slot_busy == 0 &&
	      st.sq_posted == SDR_SQ_ENTRIES);
	CHECK(sq_pending(e.f) == SDR_SQ_ENTRIES);
	fake_step(e.f);
	struct sdr_wc wc[64];
	int got = 0;
	while ((rc = sdr_cq_poll(e.ctx, wc, 64)) > 0)
		got += rc;
	CHECK(got == SDR_SQ_ENTRIES - 600);
	CHECK(sdr_send_post(e.qp, &w, NULL) == 0);
	env_down(&e);

	/* completion budget: cq_entries outstanding */
	env_up(&e, 64, 1);
	e.f->hold_send_cqe = 1;
	w.mr = e.mr;
	for (n = 0; (rc = sdr_send_post(e.qp, &w, NULL)) == 0 && n < 5000; n++)
		fake_step(e.f);
	CHECK(rc == -EAGAIN && n == 64);
	CHECK(sdr_ctx_stats_get(e.ctx, &st) == 0 && st.cq_full == 1);
	env_down(&e);

	/* busy receive slot: receive n-1024 not completed, then not reaped */
	env_up(&e, SDR_CQ_ENTRIES, 1);
	r.mr = e.mr;
	r.length = F_CHUNK;
	for (n = 0; n < SDR_HANDLES; n++) {
		CHECK(sdr_recv_post(e.qp, &r, n == 0 ? &rh0 : NULL) == 0);
		fake_step(e.f);
	}
	CHECK(sdr_recv_post(e.qp, &r, &rh) == -EAGAIN);
	fake_deliver(e.f, sdr__qp_id(e.qp), 0, 0); /* completes receive 0 */
	CHECK(sdr_recv_post(e.qp, &r, &rh) == -EAGAIN);
	CHECK(sdr_ctx_stats_get(e.ctx, &st) == 0 && st.slot_busy == 2);
	CHECK(sdr_recv_poll(rh0) == SDR_POLL_DONE);
	CHECK(sdr_recv_post(e.qp, &r, &rh) == 0);
	CHECK(rh == rh0 && sdr_recv_seq(rh) == SDR_HANDLES);
	CHECK(sdr_recv_chunks_done(rh) == 0); /* bitmap zeroed for the new receive */
	env_down(&e);
}

/* Re-attach off (the attribute, or SDR_REATTACH_MS=0): a daemon death is
 * final, every call says -EPIPE. */
static void test_daemon_death(int by_env)
{
	struct sdr_ctx_attr a = {.reattach_ms = SDR_REATTACH_OFF};
	struct env e;
	struct sdr_send_wr w = {0};
	struct sdr_send_handle *h;
	struct sdr_wc wc[4];
	int rc = 0, i;

	if (by_env)
		setenv("SDR_REATTACH_MS", "0", 1);
	env_up_attr(&e, SDR_CQ_ENTRIES, 1, by_env ? NULL : &a);
	unsetenv("SDR_REATTACH_MS");
	w.mr = e.mr;
	w.length = 10;
	CHECK(sdr_send_post(e.qp, &w, &h) == 0);
	fake_kill(e.f);
	for (i = 0; i < 100000 && (rc = sdr_cq_poll(e.ctx, wc, 4)) == 0; i++)
		if (i % 64 == 63)
			usleep(100);
	CHECK(rc == -EPIPE);
	CHECK(sdr_send_poll(h) == -EPIPE);
	CHECK(sdr_send_post(e.qp, &w, NULL) == -EPIPE);
	errno = 0;
	CHECK(sdr_mr_reg(e.ctx, e.buf, 4096, 0) == NULL && errno == EPIPE);
	CHECK(sdr_qp_create(e.ctx, NULL) == NULL && errno == EPIPE);
	env_down(&e);
}

/* ---------------- re-attach after a daemon restart ---------------- */

/* Completions seen per direction and message number (exactly once). */
struct seen_wc {
	int n[2][8];
	uint8_t flags[2][8];
	int32_t status[2][8];
};

static int poll_all(struct sdr_ctx *ctx, struct seen_wc *s)
{
	struct sdr_wc wc[16];
	int n = sdr_cq_poll(ctx, wc, 16);

	for (int i = 0; i < n; i++) {
		int d = wc[i].opcode == SDR_SQ_RECV;

		if (wc[i].seq < 8) {
			s->n[d][wc[i].seq]++;
			s->flags[d][wc[i].seq] = wc[i].flags;
			s->status[d][wc[i].seq] = wc[i].status;
		}
	}
	return n;
}

/* Poll until the context notices the death (its idle probe). */
static void until_down(struct env *e, struct seen_wc *s)
{
	for (int i = 0; i < 1000 && sdr_ctx_state(e->ctx) == SDR_CTX_LIVE; i++)
		poll_all(e->ctx, s);
	CHECK(sdr_ctx_state(e->ctx) == SDR_CTX_REATTACHING);
}

/* Poll (and play the new daemon's data path) until re-attached. */
static void until_live(struct env *e, struct fake *f, struct seen_wc *s)
{
	for (int i = 0; i < 3000 && sdr_ctx_state(e->ctx) != SDR_CTX_LIVE; i++) {
		poll_all(e->ctx, s);
		if (f->nhello)
			fake_step(f);
		usleep(1000);
	}
	CHECK(sdr_ctx_state(e->ctx) == SDR_CTX_LIVE);
}

/* Sends 0..3 and receives 0..3 outstanding; 0, 1, 3 of the sends and 0, 2 of
 * the receives complete, receive 1 has one chunk of three. The daemon dies;
 * send 4, receive 4 and the early completion of receive 3 are posted while it
 * is gone. A new daemon: QP_RESTORE from send 2 and receive 0 (receive 0
 * completed, but a sender that restarted too may send it again), then in
 * order sends 2, 3 (done), 4 and receives 0 (done), 1 (resumed), 2 (done), 3
 * (resumed, with its RECV_COMPLETE), 4 under the new MR and QP ids; every
 * completion once. */
static void test_restore(void)
{
	struct sdr_ctx_attr a = {.reattach_ms = 10000};
	struct sdr_stream_start_wr ss = {.length = 10};
	struct sdr_send_handle *sh[5];
	struct sdr_recv_handle *rh[5];
	struct sdr_send_wr w = {0};
	struct sdr_recv_wr r = {0};
	struct seen_wc s = {0};
	struct sdr_ctx_stats st;
	struct sdr_qp_info info;
	struct env e;
	struct fake *f2;
	uint32_t qid;
	int i, k;
	static const struct {
		uint8_t opcode, flags;
		uint32_t number;
	} want[] = {
		{SDR_SQ_SEND, 0, 2},
		{SDR_SQ_SEND, SDR_SQE_F_DONE, 3},
		{SDR_SQ_SEND, 0, 4},
		{SDR_SQ_RECV, SDR_SQE_F_DONE, 0},
		{SDR_SQ_RECV, SDR_SQE_F_RESUME, 1},
		{SDR_SQ_RECV, SDR_SQE_F_DONE, 2},
		{SDR_SQ_RECV, SDR_SQE_F_RESUME, 3},
		{SDR_SQ_RECV_COMPLETE, 0, 3},
		{SDR_SQ_RECV, SDR_SQE_F_RESUME, 4},
	};

	/* (its congestion control and paths must come back with it) */
	env_qp_attr = &(const struct sdr_qp_attr){.cc = SDR_QP_CC_ON, .paths = 4};
	env_up_attr(&e, SDR_CQ_ENTRIES, 1, &a);
	env_qp_attr = NULL;
	sdr_qp_info_get(e.qp, &info);
	qid = sdr__qp_id(e.qp);
	e.f->hold_send_cqe = 1;
	w.mr = e.mr;
	w.length = 100;
	r.mr = e.mr;
	r.length = 3 * F_CHUNK;
	r.offset = 65536;
	for (i = 0; i < 4; i++) {
		w.wr_id = 100 + (uint64_t)i;
		r.wr_id = 200 + (uint64_t)i;
		CHECK(sdr_send_post(e.qp, &w, &sh[i]) == 0);
		CHECK(sdr_recv_post(e.qp, &r, &rh[i]) == 0);
	}
	fake_step(e.f);
	fake_send_done(e.f, qid, 0);
	fake_send_done(e.f, qid, 1);
	fake_send_done(e.f, qid, 3);
	for (k = 0; k < 3; k++) {
		fake_deliver(e.f, qid, 0, (uint32_t)k);
		fake_deliver(e.f, qid, 2, (uint32_t)k);
	}
	fake_deliver(e.f, qid, 1, 0);
	CHECK(sdr_send_poll(sh[0]) == SDR_POLL_DONE);
	CHECK(sdr_recv_poll(rh[0]) == SDR_POLL_DONE);

	fake_kill(e.f);
	until_down(&e, &s);
	/* what the daemon wrote before it died still comes, once */
	CHECK(s.n[0][1] == 1 && s.n[0][3] == 1 && s.n[1][2] == 1 && s.n[0][2] == 0);
	/* no error within the window: pending stays pending, posts are kept */
	CHECK(sdr_send_poll(sh[2]) == SDR_POLL_PENDING);
	CHECK(sdr_recv_poll(rh[1]) == SDR_POLL_PENDING);
	w.wr_id = 104;
	r.wr_id = 204;
	CHECK(sdr_send_post(e.qp, &w, &sh[4]) == 0 && sdr_send_seq(sh[4]) == 4);
	CHECK(sdr_recv_post(e.qp, &r, &rh[4]) == 0 && sdr_recv_seq(rh[4]) == 4);
	CHECK(sdr_recv_complete(rh[3]) == 0);
	CHECK(sdr_recv_complete(rh[3]) == -EALREADY);
	CHECK(sdr_send_stream_start(e.qp, &ss, NULL) == -EAGAIN);
	CHECK(poll_all(e.ctx, &s) == 0);

	/* the new daemon gives other MR and QP ids */
	f2 = fake_start_at(e.f->path, SDR_CQ_ENTRIES, 0, 3);
	f2->hold_send_cqe = 1;
	until_live(&e, f2, &s);
	CHECK(f2->nrestore == 1 && f2->restore_req.restore.send_base == 2 &&
	      f2->restore_req.restore.recv_base == 0 && f2->restore_req.restore.connected == 1);
	CHECK(memcmp(&f2->restore_req.restore.local, &info, sizeof(info)) == 0);
	CHECK(f2->restore_req.remote.qpn == info.qpn + 0x100);
	CHECK(f2->restore_req.cc == SDR_QP_CC_ON && f2->restore_req.paths == 4,
	      " restored with cc %u paths %u", f2->restore_req.cc, f2->restore_req.paths);
	fake_step(f2);
	CHECK(f2->nlog == (int)(sizeof(want) / sizeof(want[0])), "%d SQEs", f2->nlog);
	for (i = 0; i < f2->nlog && i < (int)(sizeof(want) / sizeof(want[0])); i++)
		CHECK(f2->log[i].opcode == want[i].opcode && f2->log[i].flags == want[i].flags &&
			      f2->log[i].number == want[i].number && f2->log[i].qp_id == 3 &&
			      f2->log[i].mr_id ==
				      (want[i].opcode == SDR_SQ_RECV_COMPLETE ? 0u : 3u),
		      "SQE %d: op %u flags %u number %u qp %u mr %u", i, f2->log[i].opcode,
		      f2->log[i].flags, f2->log[i].number, f2->log[i].qp_id, f2->log[i].mr_id);
	/* receive 1's chunk survived the restart (its slot was not cleared) */
	CHECK(sdr_recv_chunks_done(rh[1]) == 1);

	/* the new daemon completes what was outstanding; a second completion of
	 * send 3 (done before the restart) is dropped */
	fake_send_done(f2, 3, 2);
	fake_send_done(f2, 3, 3);
	fake_send_done(f2, 3, 4);
	fake_deliver(f2, 3, 1, 1);
	fake_deliver(f2, 3, 1, 2);
	for (k = 0; k < 3; k++)
		fake_deliver(f2, 3, 4, (uint32_t)k);
	while (poll_all(e.ctx, &s) > 0)
		;
	for (i = 1; i < 5; i++)
		CHECK(s.n[0][i] == 1 && s.n[1][i] == 1 && s.status[0][i] == 0 &&
			      s.status[1][i] == 0,
		      "message %d: %d send, %d receive completions", i, s.n[0][i], s.n[1][i]);
	CHECK(s.flags[1][3] & SDR_CQE_F_PARTIAL);
	CHECK(!(s.flags[1][1] & SDR_CQE_F_PARTIAL) && !(s.flags[1][4] & SDR_CQE_F_PARTIAL));
	CHECK(sdr_ctx_stats_get(e.ctx, &st) == 0 && st.reattaches == 1 && st.qps_restored == 1 &&
		      st.qps_lost == 0 && st.ops_replayed == 8 && st.wc_duplicate == 1 &&
		      st.ops_aborted == 0 && st.reattach_expired == 0,
	      "reattaches %llu restored %llu lost %llu replayed %llu dup %llu aborted %llu",
	      (unsigned long long)st.reattaches, (unsigned long long)st.qps_restored,
	      (unsigned long long)st.qps_lost, (unsigned long long)st.ops_replayed,
	      (unsigned long long)st.wc_duplicate, (unsigned long long)st.ops_aborted);

	/* a new post goes to the new daemon, numbered on */
	CHECK(sdr_send_post(e.qp, &w, NULL) == 0);
	fake_step(f2);
	CHECK(f2->nlog == 10 && f2->log[9].number == 5 && f2->log[9].flags == 0);
	env_down(&e);
	fake_free(f2);
}

/* A control call while the daemon is gone waits for the re-attach. */
static void *restart_later(void *arg)
{
	struct fake **f = arg;

	usleep(150000);
	f[1] = fake_start_at(f[0]->path, SDR_CQ_ENTRIES, 0, 1);
	return NULL;
}

/* What is not carried over: @p how 0, the daemon refuses QP_RESTORE; 1, its
 * IP changed; 2, the QP is restored, but the stream open at the restart is
 * not (and an MR registration waits for the daemon). */
static void test_restore_refused(int how)
{
	struct sdr_ctx_attr a = {.reattach_ms = 10000};
	struct sdr_stream_start_wr ss = {.length = 3000, .wr_id = 7};
	struct sdr_stream_wr sw = {0};
	struct sdr_send_handle *sh, *hs;
	struct sdr_recv_handle *rh;
	struct sdr_send_wr w = {0};
	struct sdr_recv_wr r = {0};
	struct seen_wc s = {0};
	struct sdr_ctx_stats st;
	struct fake *f[2] = {0};
	struct sdr_mr *mr2;
	struct env e;
	pthread_t th;

	env_up_attr(&e, SDR_CQ_ENTRIES, 1, &a);
	e.f->hold_send_cqe = 1;
	w.mr = e.mr;
	w.length = 100;
	r.mr = e.mr;
	r.length = 100;
	CHECK(sdr_send_post(e.qp, &w, &sh) == 0);
	CHECK(sdr_send_stream_start(e.qp, &ss, &hs) == 0);
	CHECK(sdr_recv_post(e.qp, &r, &rh) == 0);
	fake_step(e.f);
	fake_kill(e.f);
	until_down(&e, &s);
	/* the stream's data is not kept: it fails at once */
	sw.mr = e.mr;
	sw.length = 1024;
	CHECK(sdr_send_stream_continue(hs, &sw) == -ECONNABORTED);
	CHECK(sdr_send_poll(hs) == -ECONNABORTED);
	CHECK(sdr_send_poll(sh) == SDR_POLL_PENDING);
	f[0] = e.f;
	if (how == 2) {
		pthread_create(&th, NULL, restart_later, f);
		mr2 = sdr_mr_reg(e.ctx, e.buf + 4096, 4096, 0);
		pthread_join(th, NULL);
		CHECK(mr2 != NULL && sdr_ctx_state(e.ctx) != SDR_CTX_DEAD);
	} else {
		f[1] = fake_start_at(e.f->path, SDR_CQ_ENTRIES, 0, 1);
		f[1]->restore_status = how == 0 ? -EPERM : 0;
		f[1]->restore_ip_xor = how == 1 ? 1 : 0;
	}
	f[1]->hold_send_cqe = 1; /* (read by fake_step(), in this thread) */
	until_live(&e, f[1], &s);
	CHECK(sdr_ctx_stats_get(e.ctx, &st) == 0 && st.reattaches == 1);
	if (how == 2) {
		CHECK(st.qps_restored == 1 && st.ops_aborted == 1 && st.ops_replayed == 3);
		/* send 0 again, the stream (send 1) takes its number, done, described
		 * with an MR of the context (it has none); receive 0 resumed */
		fake_step(f[1]);
		CHECK(f[1]->nlog == 3 && f[1]->log[0].opcode == SDR_SQ_SEND &&
		      f[1]->log[0].flags == 0 && f[1]->log[0].number == 0 &&
		      f[1]->log[1].opcode == SDR_SQ_SEND && f[1]->log[1].flags == SDR_SQE_F_DONE &&
		      f[1]->log[1].number == 1 && f[1]->log[1].mr_id != 0 &&
		      f[1]->log[2].opcode == SDR_SQ_RECV && f[1]->log[2].flags == SDR_SQE_F_RESUME);
		fake_send_done(f[1], 1, 0);
		CHECK(sdr_send_poll(sh) == SDR_POLL_DONE);
	} else {
		CHECK(st.qps_lost == 1 && st.qps_restored == 0 && st.ops_aborted == 3);
		CHECK(strstr(sdr_last_error(e.ctx), how == 0 ? "restore token does not match"
							     : "IP changed from 10.0.0.1 to "
							       "10.0.0.0") != NULL,
		      "%s", sdr_last_error(e.ctx));
		CHECK(sdr_send_poll(sh) == -ECONNABORTED);
		CHECK(sdr_recv_poll(rh) == -ECONNABORTED);
		CHECK(sdr_send_post(e.qp, &w, NULL) == -ECONNABORTED);
		CHECK(strstr(sdr_last_error(e.ctx), "was not restored") != NULL);
		/* the QP the daemon made for the wrong identity was given back */
		CHECK(how == 0 || f[1]->qp[1].used == 0);
		CHECK(sdr_qp_destroy(e.qp) == 0);
		e.qp = sdr_qp_create(e.ctx, NULL); /* the context itself works */
		CHECK(e.qp != NULL);
	}
	env_down(&e);
	fake_free(f[1]);
}

/* The daemon does not come back: pending within the window, then -EPIPE. */
static void test_restore_window(void)
{
	struct sdr_ctx_attr a = {.reattach_ms = 150};
	struct sdr_send_handle *sh;
	struct sdr_send_wr w = {0};
	struct seen_wc s = {0};
	struct sdr_ctx_stats st;
	struct env e;
	int rc = 0;

	env_up_attr(&e, SDR_CQ_ENTRIES, 1, &a);
	e.f->hold_send_cqe = 1;
	w.mr = e.mr;
	w.length = 100;
	CHECK(sdr_send_post(e.qp, &w, &sh) == 0);
	fake_step(e.f);
	fake_kill(e.f);
	until_down(&e, &s);
	CHECK(sdr_send_poll(sh) == SDR_POLL_PENDING);
	for (int i = 0; i < 400 && (rc = sdr_send_poll(sh)) == SDR_POLL_PENDING; i++)
		usleep(1000);
	CHECK(rc == -EPIPE && sdr_ctx_state(e.ctx) == SDR_CTX_DEAD);
	CHECK(strstr(sdr_last_error(e.ctx), "did not come back within 150 ms") != NULL, "%s",
	      sdr_last_error(e.ctx));
	CHECK(sdr_send_post(e.qp, &w, NULL) == -EPIPE);
	CHECK(sdr_cq_poll(e.ctx, NULL, 0) == -EPIPE);
	CHECK(sdr_ctx_stats_get(e.ctx, &st) == 0 && st.reattach_expired == 1 && st.reattaches == 0);
	env_down(&e);
}

/* ---------------- one descriptor check for libsdr and the DPU ----------------
 *
 * test_libsdr is linked with -Wl,--wrap=sdr_desc_check (tests/host/
 * meson.build): every call of the check, libsdr's (host/libsdr/send.c and
 * recv.c) and the firmware's (sdr_sqe_check() of firmware/prim/sdr_hostdesc.h)
 * alike, passes through __wrap_sdr_desc_check, which counts it and records
 * what it saw.
 */
int __real_sdr_desc_check(const struct sdr_sqe *d, const struct sdr_desc_qp *qp,
			  const uint64_t *mr_len, enum sdr_desc_why *why);
int __wrap_sdr_desc_check(const struct sdr_sqe *d, const struct sdr_desc_qp *qp,
			  const uint64_t *mr_len, enum sdr_desc_why *why);

static struct {
	unsigned calls;
	struct sdr_sqe sqe;
	int rc;
} seen;

int __wrap_sdr_desc_check(const struct sdr_sqe *d, const struct sdr_desc_qp *qp,
			  const uint64_t *mr_len, enum sdr_desc_why *why)
{
	int rc = __real_sdr_desc_check(d, qp, mr_len, why);

	seen.calls++;
	seen.sqe = *d;
	seen.rc = rc;
	return rc;
}

/* The firmware's verdict on @p d, from the fake DPU's own records of the QPs
 * and MRs (what the daemon would know), through the firmware's code. */
static int fw_verdict(struct fake *f, const struct sdr_sqe *d)
{
	struct sdr_mr_ent mrs[F_MAX];
	struct sdr_qp_limits lim;
	struct sdr_mr_ent *mr;
	enum sdr_ctr ctr;
	int known = d->qp_id < F_MAX && f->qp[d->qp_id].used;

	memset(mrs, 0, sizeof(mrs));
	memset(&lim, 0, sizeof(lim)); /* (an ordinary QP: no stripe map) */
	for (int i = 0; i < F_MAX; i++) {
		mrs[i].len = f->mr_len[i];
		atomic_store(&mrs[i].valid, (uint32_t)f->mr_used[i]);
	}
	if (known) {
		lim.max_msg = F_MAX_MSG;
		lim.mtu = F_MTU;
		lim.connected = f->qp[d->qp_id].connected;
	}
	return sdr_sqe_check(d, known ? &lim : NULL, mrs, F_MAX, &mr, &ctr);
}

static uint64_t pick_len(void)
{
	static const uint64_t edge[] = {0,
					1,
					F_MTU,
					F_MAX_MSG - 1,
					F_MAX_MSG,
					F_MAX_MSG + 1,
					(uint64_t)F_MAX_MSG * 3,
					UINT32_MAX};
	return t_below(3) ? t_below(F_MAX_MSG + 2) : edge[t_below(8)];
}

static void test_desc_agreement(void)
{
	struct env e;
	struct sdr_qp *q2;
	struct sdr_mr *mrs[4], *gone;
	struct sdr_send_handle *stream = NULL;
	unsigned checked = 0, posted = 0, refused = 0, fw_calls = 0;
	int kinds[5] = {0};

	t_seed("test_libsdr descriptors", 0xde5c);
	env_up(&e, SDR_CQ_ENTRIES, 1);
	q2 = sdr_qp_create(e.ctx, NULL); /* never connected */
	gone = sdr_mr_reg(e.ctx, e.buf + 8192, 4096, 0);
	REQUIRE(q2 && gone && sdr_mr_dereg(gone) == 0);
	mrs[0] = e.mr;
	mrs[1] = sdr_mr_reg(e.ctx, e.buf, 8192, 0);
	mrs[2] = sdr_mr_reg(e.ctx, e.buf + 4096, 3 * F_MTU + 100, 0);
	mrs[3] = gone;
	REQUIRE(mrs[1] && mrs[2]);
	for (int i = 0; i < 20000; i++) {
		struct sdr_qp *qp = t_below(4) ? e.qp : q2;
		struct sdr_mr *mr = mrs[t_below(4)];
		uint64_t mlen = sdr_mr_length(mr), off;
		uint32_t len = (uint32_t)pick_len();
		unsigned before = seen.calls;
		int kind = (int)t_below(5), rc = 0;

		switch (t_below(5)) {
		case 0: off = 0; break;
		case 1: off = t_below(mlen + 1); break;
		case 2: off = mlen >= len ? mlen - len : 0; break;
		case 3: off = mlen - (len < mlen ? len : mlen) + 1; break;
		default: off = t_rnd(); break;
		}
		if (kind == 0) {
			struct sdr_send_wr w = {.mr = mr, .offset = off, .length = len, .imm = 7};
			struct sdr_send_handle *h;

			rc = sdr_send_post(qp, &w, &h);
		} else if (kind == 1) {
			struct sdr_recv_wr w = {.mr = mr, .offset = off, .length = len};

			rc = sdr_recv_post(qp, &w, NULL);
		} else if (kind == 2) {
			struct sdr_stream_start_wr w = {.length = len};
			struct sdr_send_handle *h;

			rc = sdr_send_stream_start(qp, &w, &h);
			if (rc == 0 && !stream && qp == e.qp && len == F_MAX_MSG)
				stream = h;
		} else if (kind == 3 && stream) {
			/* whole packets inside the stream: only the MR can be wrong */
			uint32_t pk = (uint32_t)t_below(F_MAX_MSG / F_MTU);
			uint32_t n = 1 + (uint32_t)t_below(F_MAX_MSG / F_MTU - pk);
			struct sdr_stream_wr w = {.mr = mr,
						  .offset = off,
						  .length = n * F_MTU,
						  .msg_offset = pk * F_MTU};

			rc = sdr_send_stream_continue(stream, &w);
		} else if (kind == 4) {
			struct sdr_sqe d; /* a raw descriptor: only the firmware checks it */

			memset(&d, 0, sizeof(d));
			d.opcode = (uint8_t)t_below(8);
			d.qp_id = (uint16_t)t_below(F_MAX);
			d.mr_id = (uint32_t)t_below(F_MAX + 1);
			d.offset = off;
			d.length = len;
			d.msg_offset = (uint32_t)(t_below(2)
							  ? t_below(F_MAX_MSG / F_MTU + 1) * F_MTU
							  : t_below(F_MAX_MSG * 2));
			if (t_below(8) == 0)
				d.flags = 1;
			if (t_below(8) == 0)
				d.reserved[t_below(sizeof(d.reserved))] = 1;
			/* the firmware's verdict equals the one function's */
			rc = fw_verdict(e.f, &d);
			CHECK_OR_BREAK(seen.calls == before + 1 && seen.rc == rc &&
				       sqe_eq(&seen.sqe, &d));
			fw_calls++;
			continue;
		} else {
			continue;
		}
		kinds[kind]++;
		if (seen.calls == before)
			continue; /* refused before a descriptor existed (no MR, ...) */
		/* libsdr checked one descriptor, with the one function */
		CHECK_OR_BREAK(seen.calls == before + 1);
		int lib_rc = seen.rc;
		struct sdr_sqe d = seen.sqe;
		int fw_rc = fw_verdict(e.f, &d);

		checked++;
		/* ... and the firmware's path runs that same function ... */
		CHECK_OR_BREAK(seen.calls == before + 2);
		fw_calls++;
		/* ... and agrees: accepted by one, accepted by the other */
		CHECK(lib_rc == fw_rc, "op %u len %u off %llu mr %u qp %u: libsdr %d, firmware %d",
		      d.opcode, d.length, (unsigned long long)d.offset, d.mr_id, d.qp_id, lib_rc,
		      fw_rc);
		if (lib_rc)
			CHECK(rc == lib_rc, "the post returned %d, the check %d", rc, lib_rc);
		if (rc == 0) {
			/* what went into the SQ is the checked descriptor */
			struct sdr_sqe q;

			posted++;
			REQUIRE(sdr_ring_dequeue_burst(&e.f->sq, &q, 1) == 1);
			d.wr_id = q.wr_id; /* numbered after the check */
			CHECK(sqe_eq(&q, &d));
			CHECK(fw_verdict(e.f, &q) == 0);
			fw_calls++;
		} else if (lib_rc) {
			refused++;
		}
		BAIL_IF_MANY();
	}
	printf("descriptors: %u checked by libsdr and the firmware alike (%u posted, %u refused"
	       " by both), %u firmware checks through the same function; sends %d, receives %d,"
	       " stream starts %d, stream data %d\n",
	       checked, posted, refused, fw_calls, kinds[0], kinds[1], kinds[2], kinds[3]);
	CHECK(posted > 100 && refused > 1000 && kinds[3] > 100);
	env_down(&e);
}

int main(void)
{
	test_open_errors();
	test_control();
	test_validation();
	test_send_recv();
	test_eagain();
	test_daemon_death(0);
	test_daemon_death(1);
	test_restore();
	test_restore_refused(0);
	test_restore_refused(1);
	test_restore_refused(2);
	test_restore_window();
	test_desc_agreement();
	if (t_failures) {
		fprintf(stderr, "%d check(s) failed\n", t_failures);
		return 1;
	}
	printf("test_libsdr: ok\n");
	return 0;
}
