/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of libsdr against a fake DPU written here: a thread serves the
 * control socket (memfd segments over SCM_RIGHTS); the test thread plays the
 * DPU data path (consumes the SQ, writes bitmaps and CQEs) with fake_step()
 * and fake_deliver().
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
	int used, connected;
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
};

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
	for (i = 1; i < F_MAX && f->qp[i].used; i++)
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
			fake_hello(f, &r, &fd_out);
		} else if (q.type == SDR_CTL_MR_REG) {
			int i;

			for (i = 1; i < F_MAX && f->mr_used[i]; i++)
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

static struct fake *fake_start(uint32_t cq_entries, int bad_magic)
{
	static int n;
	struct fake *f = calloc(1, sizeof(*f));
	struct sockaddr_un sa = {.sun_family = AF_UNIX};

	snprintf(f->path, sizeof(f->path), "/tmp/sdr-test-%d-%d.sock", (int)getpid(), n++);
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
		if (e.flags || q == NULL) {
			cqe_put(f, e.wr_id, 0, 0, 0, e.flags ? -EINVAL : -EBADF, e.qp_id, e.opcode,
				0);
			continue;
		}
		switch (e.opcode) {
		case SDR_SQ_SEND:
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
	e->qp = sdr_qp_create(e->ctx, NULL);
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
	test_desc_agreement();
	if (t_failures) {
		fprintf(stderr, "%d check(s) failed\n", t_failures);
		return 1;
	}
	printf("test_libsdr: ok\n");
	return 0;
}
