/* SPDX-License-Identifier: BSD-3-Clause */
/* Engine rig (engine_rig.h): fake primitives (transmit, the control plane's
 * memory), the host's SQ and CQ memory, a simulated wire, the worker loop on
 * a virtual clock, two connected QPs. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "auto_desc.h"
#include "cq.h"
#include "ctl_mem.h"
#include "ec_counters.h"
#include "engine_rig.h"
#include "host_sq.h"
#include "recv.h"
#include "rel.h"
#include "qp_setup.h"
#include "rx.h"
#include "send.h"
#include "txq.h"
#include "worker.h"

struct sdr_dpu sdr_g;

static struct rig *cur; /* the fake primitives find the rig here */

#define RIG_HZ 1000000000ull
#define RIG_SQ_ENTRIES SDR_SQ_ENTRIES
#define RIG_CQ_ENTRIES SDR_CQ_ENTRIES
#define RIG_MBUF_ROOM (RTE_PKTMBUF_HEADROOM + SDR_MBUF_DATA)

/* ---------------- private state ---------------- */

struct rig_frame {
	uint64_t due, serial;
	int from, to; /* from = -1: injected */
	enum rig_kind kind;
	uint32_t len;
	uint8_t data[];
};

struct frame_heap {
	struct rig_frame **v;
	size_t n, cap;
};

enum { MB_FREE = 0, MB_TAKEN, MB_QUEUED };

struct mbuf_pool {
	struct rte_mbuf *m;
	uint8_t *room;
	uint8_t *state;
	struct rte_mbuf **free;
	unsigned n, nfree, taken;
};

struct host {
	struct sdr_ring_idx *idx; /* the SQ ring's shared index block */
	struct sdr_sqe *ent;
	struct sdr_ring prod;    /* the host's producer view */
	struct sdr_sqe *backlog; /* FIFO waiting for room in the ring */
	size_t head, n, cap;
	struct sdr_ring_idx *cq_idx; /* the CQ ring (cq.c writes it) */
	struct sdr_cqe *cq_ent;
	struct sdr_ring cq; /* the host's consumer view */
};

struct rig_priv {
	uint64_t rng;
	uint64_t serial;
	struct frame_heap q[2]; /* by destination */
	struct rig_frame **held;
	size_t nheld, held_cap;
	struct mbuf_pool pool[2];
	struct host host[2];
	uint64_t last_serial[2]; /* latest frame delivered, per sending side */
	uint32_t npairs;         /* rig_add_pair() */
};

static void die(const char *what)
{
	fprintf(stderr, "engine_rig: %s\n", what);
	exit(2);
}

static void *xcalloc(size_t n, size_t sz)
{
	void *p = calloc(n, sz);
	if (!p)
		die("out of memory");
	return p;
}

/* ---------------- randomness ---------------- */

static uint64_t rnd(struct rig_priv *pv)
{
	/* xorshift64*: reproducible from the seed */
	pv->rng ^= pv->rng >> 12;
	pv->rng ^= pv->rng << 25;
	pv->rng ^= pv->rng >> 27;
	return pv->rng * 0x2545F4914F6CDD1Dull;
}

uint64_t rig_rand(struct rig *r, uint64_t n)
{
	return n ? rnd(r->priv) % n : 0;
}

static int chance(struct rig_priv *pv, double p)
{
	if (p <= 0)
		return 0;
	return (double)(rnd(pv) >> 11) * (1.0 / 9007199254740992.0) < p;
}

static uint64_t splitmix(uint64_t *x)
{
	uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

void rig_pattern(uint8_t *dst, size_t len, uint64_t tag)
{
	uint64_t x = tag * 0x100000001B3ull + 1;

	for (size_t i = 0; i < len; i += 8) {
		uint64_t v = splitmix(&x);
		memcpy(dst + i, &v, len - i < 8 ? len - i : 8);
	}
}

size_t rig_pattern_diff(const uint8_t *buf, size_t len, uint64_t tag)
{
	uint64_t x = tag * 0x100000001B3ull + 1;
	size_t bad = 0;

	for (size_t i = 0; i < len; i += 8) {
		uint64_t v = splitmix(&x);
		size_t n = len - i < 8 ? len - i : 8;
		for (size_t j = 0; j < n; j++)
			bad += buf[i + j] != ((uint8_t *)&v)[j];
	}
	return bad;
}

/* ---------------- frames in flight ---------------- */

static int before(const struct rig_frame *a, const struct rig_frame *b)
{
	return a->due < b->due || (a->due == b->due && a->serial < b->serial);
}

static void heap_push(struct frame_heap *h, struct rig_frame *f)
{
	size_t i;

	if (h->n == h->cap) {
		h->cap = h->cap ? h->cap * 2 : 1024;
		h->v = realloc(h->v, h->cap * sizeof(*h->v));
		if (!h->v)
			die("out of memory");
	}
	i = h->n++;
	while (i && before(f, h->v[(i - 1) / 2])) {
		h->v[i] = h->v[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	h->v[i] = f;
}

static struct rig_frame *heap_pop(struct frame_heap *h)
{
	struct rig_frame *top = h->v[0], *last = h->v[--h->n];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;
		if (c >= h->n)
			break;
		if (c + 1 < h->n && before(h->v[c + 1], h->v[c]))
			c++;
		if (!before(h->v[c], last))
			break;
		h->v[i] = h->v[c];
		i = c;
	}
	if (h->n)
		h->v[i] = last;
	return top;
}

static struct rig_frame *frame_new(struct rig *r, int from, int to, enum rig_kind kind,
				   const uint8_t *f, size_t len, uint64_t due)
{
	struct rig_frame *x = malloc(sizeof(*x) + len);

	if (!x)
		die("out of memory");
	x->due = due;
	x->serial = r->priv->serial++;
	x->from = from;
	x->to = to;
	x->kind = kind;
	x->len = (uint32_t)len;
	memcpy(x->data, f, len);
	return x;
}

size_t rig_in_flight(const struct rig *r, int to)
{
	return r->priv->q[to].n;
}

size_t rig_held_count(const struct rig *r)
{
	return r->priv->nheld;
}

void rig_release_held(struct rig *r, size_t i)
{
	struct rig_frame *f;

	if (i >= r->priv->nheld || !r->priv->held[i])
		die("rig_release_held: no such frame");
	f = r->priv->held[i];
	r->priv->held[i] = NULL;
	f->due = r->now;
	f->serial = r->priv->serial++;
	heap_push(&r->priv->q[f->to], f);
}

void rig_inject(struct rig *r, int to, const uint8_t *frame, size_t len)
{
	heap_push(&r->priv->q[to], frame_new(r, -1, to, RIG_K_OTHER, frame, len, r->now));
}

/* One line per frame transmitted (SDR_RIG_TRACE=1). */
static void trace_frame(const struct rig *r, const struct rig_frame_info *fi)
{
	static const char *const kn[RIG_K__MAX] = {"DATA",   "CTS",   "ACK",  "NACK",
						   "PARITY", "ABORT", "OTHER"};
	const struct sdr_parsed *p = fi->p;
	struct sdr_ctrl_hdr h;

	fprintf(r->trace, "%12.3f us %c->%c %-6s", (double)(r->now - 1000000000ull) / 1e3,
		"AB"[fi->from], "AB"[!fi->from], kn[fi->kind]);
	if (fi->kind == RIG_K_DATA)
		fprintf(r->trace, " seq %u pkt %u len %u%s", fi->seq, fi->pkt_off, fi->dma_len,
			p->se ? " SE" : "");
	else if (fi->kind == RIG_K_PARITY)
		fprintf(r->trace, " seq %u sub %u parity %u pkt %u", fi->seq, fi->pkt_off, fi->pidx,
			fi->ppkt);
	else if (fi->kind != RIG_K_OTHER && !sdr_ctrl_hdr_decode(p->payload, p->payload_len, &h))
		for (uint16_t i = 0; i < h.count; i++) {
			if (h.type == SDR_CTRL_CTS) {
				struct sdr_cts_entry e;
				sdr_ctrl_cts_entry_decode(p->payload, i, &e);
				fprintf(r->trace, " %u", e.seq);
			} else if (h.type == SDR_CTRL_ACK) {
				struct sdr_ack_entry e;
				if (sdr_ctrl_ack_entry_decode(p->payload, i, &e) == 0)
					fprintf(r->trace, " [%u%s cum %u off %u]", e.seq,
						e.flags & SDR_ACK_F_FULL     ? " FULL"
						: e.flags & SDR_ACK_F_CLOSED ? " CLOSED"
									     : "",
						e.cum, e.off);
			} else if (h.type == SDR_CTRL_NACK) {
				struct sdr_nack_entry e;
				if (sdr_ctrl_nack_entry_decode(p->payload, i, &e) == 0)
					fprintf(r->trace, " [%u sub %u miss %llx%s]", e.seq, e.sub,
						(unsigned long long)e.missing,
						e.flags & SDR_NACK_F_IMM ? " imm" : "");
			} else if (h.type == SDR_CTRL_ABORT) {
				struct sdr_abort_entry e;
				sdr_ctrl_abort_entry_decode(p->payload, i, &e);
				fprintf(r->trace, " [%u %d len %u]", e.seq, e.status, e.length);
			}
		}
	fprintf(r->trace, "\n");
}

/* The wire: what side @p from transmits. */
static void wire_tx(struct rig *r, int from, const uint8_t *f, size_t len)
{
	struct rig_priv *pv = r->priv;
	struct rig_wire_stats *ws = &r->ws[from];
	const struct rig_link *l = &r->link[from];
	struct rig_frame_info fi = {.from = from, .kind = RIG_K_OTHER, .now = r->now};
	struct sdr_parsed p;
	enum sdr_parse_result pr = sdr_parse(f, len, sdr_g.cfg.icrc, &p);
	enum rig_verdict v = RIG_PASS;
	int to = !from;
	double loss;

	fi.p = &p;
	/* (a 0x2A packet is placed by its VA in the receiver's window) */
	if (pr == SDR_PARSE_OK_DATA &&
	    sdr_data_locate(&p, r->s[to].qp->rq.mtu, r->s[to].qp->rq.max_msg))
		pr = SDR_PARSE__MAX;
	if (pr == SDR_PARSE_OK_DATA) {
		fi.kind = RIG_K_DATA;
		fi.seq = sdr_psn_seq(p.psn, p.msg_id);
		fi.pkt_off = p.pkt_off;
		fi.dma_len = p.dma_len;
		ws->data_bytes += p.dma_len;
	} else if (pr == SDR_PARSE_OK_CTRL) {
		struct sdr_ctrl_hdr h;
		if (sdr_ctrl_hdr_decode(p.payload, p.payload_len, &h) == 0) {
			static const enum rig_kind k[SDR_CTRL__MAX] = {
				[SDR_CTRL_CTS] = RIG_K_CTS,     [SDR_CTRL_ACK] = RIG_K_ACK,
				[SDR_CTRL_NACK] = RIG_K_NACK,   [SDR_CTRL_PARITY] = RIG_K_PARITY,
				[SDR_CTRL_ABORT] = RIG_K_ABORT,
			};
			fi.kind = h.type < SDR_CTRL__MAX && k[h.type] ? k[h.type] : RIG_K_OTHER;
		}
		if (fi.kind == RIG_K_PARITY) {
			struct sdr_parity_hdr ph;
			const uint8_t *d;
			uint32_t dl;
			if (sdr_ctrl_parity_decode(p.payload, p.payload_len, &ph, &d, &dl) == 0) {
				fi.seq = ph.seq;
				fi.pkt_off = ph.sub;
				fi.pidx = ph.pidx;
				fi.ppkt = ph.pkt;
			}
		}
		if (fi.kind == RIG_K_OTHER)
			r->bug.malformed_tx++;
	} else {
		r->bug.malformed_tx++;
	}
	ws->sent[fi.kind]++;
	if (r->trace)
		trace_frame(r, &fi);
	if (r->filter)
		v = r->filter(r, &fi, r->filter_arg);
	if (v == RIG_DROP) {
		ws->lost[fi.kind]++;
		return;
	}
	if (v == RIG_HOLD) {
		if (pv->nheld == pv->held_cap) {
			pv->held_cap = pv->held_cap ? pv->held_cap * 2 : 16;
			pv->held = realloc(pv->held, pv->held_cap * sizeof(*pv->held));
			if (!pv->held)
				die("out of memory");
		}
		pv->held[pv->nheld++] = frame_new(r, from, to, fi.kind, f, len, 0);
		ws->held++;
		return;
	}
	loss = fi.kind == RIG_K_DATA || fi.kind == RIG_K_PARITY ? l->loss_data : l->loss_ctrl;
	if (l->cut || chance(pv, loss)) {
		ws->lost[fi.kind]++;
		return;
	}
	struct rig_frame *x = frame_new(r, from, to, fi.kind, f, len,
					r->now + l->delay_ns + rig_rand(r, l->jitter_ns + 1));
	if ((fi.kind == RIG_K_DATA || fi.kind == RIG_K_PARITY) && p.ecn != SDR_ECN_NOT_ECT) {
		ws->ect++;
		if (chance(pv, l->ce_data)) {
			sdr_ip_set_ecn(x->data, SDR_ECN_CE);
			ws->ce_marked++;
		}
	}
	heap_push(&pv->q[to], x);
	if (chance(pv, l->dup)) {
		ws->dup[fi.kind]++;
		heap_push(&pv->q[to],
			  frame_new(r, from, to, fi.kind, f, len,
				    r->now + l->delay_ns + rig_rand(r, l->jitter_ns + 1)));
	}
}

/* ---------------- fake transmit primitive (txq.h) ---------------- */

static struct mbuf_pool *pool_of(const struct sdr_inst *in)
{
	return &cur->priv->pool[in->idx];
}

struct rte_mbuf *sdr_txq_alloc(struct sdr_worker *w, struct sdr_inst *in)
{
	struct mbuf_pool *p = pool_of(in);
	struct rte_mbuf *m;

	if (!p->nfree) {
		w->ctr[SDR_CTR_tx_nombuf]++;
		return NULL;
	}
	m = p->free[--p->nfree];
	/* one reference more than the firmware holds: its rte_pktmbuf_free()
	 * then only drops that reference (no mempool behind these), and the
	 * loop sees refcnt 1 and takes the buffer back */
	rte_mbuf_refcnt_set(m, 2);
	m->data_off = RTE_PKTMBUF_HEADROOM;
	m->data_len = 0;
	m->pkt_len = 0;
	m->nb_segs = 1;
	m->next = NULL;
	m->ol_flags = 0;
	p->state[m - p->m] = MB_TAKEN;
	p->taken++;
	return m;
}

static void pool_put(struct mbuf_pool *p, struct rte_mbuf *m)
{
	p->state[m - p->m] = MB_FREE;
	p->free[p->nfree++] = m;
}

void sdr_txq_flush(struct sdr_worker *w, unsigned i)
{
	struct mbuf_pool *p = &cur->priv->pool[i];
	unsigned n = w->ntxb[i];

	for (unsigned j = 0; j < n; j++) {
		struct rte_mbuf *m = w->txb[i][j];
		w->port[i].tx_bytes += m->pkt_len;
		wire_tx(cur, (int)i, rte_pktmbuf_mtod(m, const uint8_t *), m->data_len);
		pool_put(p, m);
	}
	w->port[i].tx_pkts += n;
	w->ntxb[i] = 0;
}

void sdr_txq_enqueue(struct sdr_worker *w, struct sdr_inst *in, struct rte_mbuf *m)
{
	struct mbuf_pool *p = pool_of(in);

	p->state[m - p->m] = MB_QUEUED;
	p->taken--;
	w->txb[in->idx][w->ntxb[in->idx]++] = m;
	if (w->ntxb[in->idx] == SDR_BURST)
		sdr_txq_flush(w, in->idx);
}

/* After a loop iteration the firmware holds no mbuf: each one it took was
 * queued (and flushed) or freed. */
static void pool_check(struct rig *r, struct mbuf_pool *p)
{
	if (!p->taken)
		return;
	for (unsigned i = 0; i < p->n; i++) {
		if (p->state[i] != MB_TAKEN)
			continue;
		if (rte_mbuf_refcnt_read(&p->m[i]) == 1) {
			r->fw_freed++;
			pool_put(p, &p->m[i]);
		} else {
			r->bug.mbuf_leak++;
			p->state[i] = MB_FREE; /* counted once; never handed out again */
		}
		p->taken--;
	}
}

/* ---------------- the completion primitive, watched ---------------- */

/* cq.c is the firmware's own, writing the host's CQ ring (the rig's
 * memory, read by host_reap()). The rig links it with -Wl,--wrap for
 * sdr_cq_send and sdr_cq_recv, so that every completion the engines make
 * passes here first: what is completed must be outstanding, and no MR
 * reference may drop below zero. */
void __real_sdr_cq_send(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_smsg *sm);
void __real_sdr_cq_recv(struct sdr_worker *w, struct sdr_qp *qp, uint32_t slot, int32_t status);
void __wrap_sdr_cq_send(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_smsg *sm);
void __wrap_sdr_cq_recv(struct sdr_worker *w, struct sdr_qp *qp, uint32_t slot, int32_t status);

static void mr_refs_save(const struct sdr_hctx *c, uint32_t *refs)
{
	for (unsigned k = 0; k < SDR_MAX_MRS; k++)
		refs[k] = c->mrs[k].refcnt;
}

/* cq.c only drops references: one that grew went below zero (it is put
 * back at zero, as a reference count that cannot underflow would be) */
static void mr_refs_check(struct sdr_hctx *c, const uint32_t *refs)
{
	for (unsigned k = 0; k < SDR_MAX_MRS; k++)
		if (c->mrs[k].refcnt > refs[k]) {
			cur->bug.mr_ref_underflow++;
			c->mrs[k].refcnt = 0;
		}
}

void __wrap_sdr_cq_send(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_smsg *sm)
{
	uint32_t refs[SDR_MAX_MRS];

	if (sm->state != SDR_SM_QUEUED)
		cur->bug.send_not_queued++;
	mr_refs_save(qp->ctx, refs);
	__real_sdr_cq_send(w, qp, sm);
	mr_refs_check(qp->ctx, refs);
}

void __wrap_sdr_cq_recv(struct sdr_worker *w, struct sdr_qp *qp, uint32_t slot, int32_t status)
{
	uint32_t refs[SDR_MAX_MRS];

	if (qp->rq.slot[slot].state != SDR_RS_DONE)
		cur->bug.recv_not_done++;
	mr_refs_save(qp->ctx, refs);
	__real_sdr_cq_recv(w, qp, slot, status);
	mr_refs_check(qp->ctx, refs);
}

/* The host polls side @p side's CQ ring: every completion is recorded, at
 * the rig's clock, and handed to the test (r->on_cqe). */
static void host_reap(struct rig *r, int side)
{
	struct rig_side *s = &r->s[side];
	struct host *h = &r->priv->host[side];
	struct sdr_cqe e;

	while (sdr_ring_dequeue_burst(&h->cq, &e, 1) == 1) {
		if (!(s->ncqe & (s->ncqe + 1))) { /* grow at 2^n - 1 */
			s->cqe = realloc(s->cqe, (s->ncqe + 1) * 2 * sizeof(*s->cqe));
			if (!s->cqe)
				die("out of memory");
		}
		s->cqe[s->ncqe].e = e;
		s->cqe[s->ncqe].tsc = r->now;
		s->ncqe++;
		if (r->on_cqe)
			r->on_cqe(r, side, &e, r->on_cqe_arg);
	}
}

/* ---------------- fake memory of the control plane (ctl_mem.h) ---------------- */

/* the rig's own heap (a fault past the end shows under ASan); no memfd */
void *sdr_seg_create(const char *name, size_t size, int *fd_out)
{
	void *p = aligned_alloc(4096, size);

	(void)name;
	if (!p)
		return NULL;
	memset(p, 0, size);
	*fd_out = -1;
	return p;
}

void sdr_seg_free(void *seg, size_t size, int fd)
{
	(void)size, (void)fd;
	free(seg);
}

struct sdr_qp *sdr_qp_mem_alloc(void)
{
	return calloc(1, sizeof(struct sdr_qp));
}

void sdr_qp_mem_free(struct sdr_qp *qp)
{
	free(qp);
}

/* ---------------- receive path ---------------- */

/* A frame arrives at side @p side: rx.c's sdr_rx_one() on an mbuf that
 * points at the frame (worker.c's poll_rx counts it first). */
static void rx_frame(struct rig *r, int side, uint8_t *f, size_t len)
{
	struct sdr_worker *w = r->s[side].w;
	struct sdr_inst *in = r->s[side].in;
	struct rte_mbuf m;

	memset(&m, 0, sizeof(m));
	m.buf_addr = f;
	m.buf_len = (uint16_t)len;
	m.data_len = (uint16_t)len;
	m.pkt_len = (uint32_t)len;
	m.nb_segs = 1;
	m.port = in->port;
	w->port[in->idx].rx_pkts++;
	w->port[in->idx].rx_bytes += m.pkt_len;
	if (sdr_rx_one(w, in, &m, r->now + r->rx_lag_ns))
		die("sdr_rx_one handed a frame to another worker"); /* (one per DPU) */
}

/* ---------------- host ---------------- */

static void host_push(struct rig *r, int side, const struct sdr_sqe *d)
{
	struct host *h = &r->priv->host[side];

	if (h->n == h->cap) {
		struct sdr_sqe *nb = malloc((h->cap ? h->cap * 2 : 256) * sizeof(*nb));
		if (!nb)
			die("out of memory");
		for (size_t i = 0; i < h->n; i++)
			nb[i] = h->backlog[(h->head + i) % (h->cap ? h->cap : 1)];
		free(h->backlog);
		h->backlog = nb;
		h->head = 0;
		h->cap = h->cap ? h->cap * 2 : 256;
	}
	h->backlog[(h->head + h->n) % h->cap] = *d;
	h->n++;
}

static void host_feed(struct rig *r, int side)
{
	struct host *h = &r->priv->host[side];

	while (h->n && sdr_ring_enqueue_burst(&h->prod, &h->backlog[h->head], 1) == 1) {
		h->head = (h->head + 1) % h->cap;
		h->n--;
	}
}

size_t rig_sq_pending(const struct rig *r, int side)
{
	const struct host *h = &r->priv->host[side];

	return h->n + (h->prod.local - atomic_load(&h->idx->cons));
}

void rig_send_on(struct rig *r, int side, uint32_t qp_id, uint64_t off, uint32_t len, uint32_t imm,
		 uint64_t wr_id)
{
	struct sdr_sqe d = {
		.opcode = SDR_SQ_SEND,
		.qp_id = (uint16_t)qp_id,
		.mr_id = 0,
		.wr_id = wr_id,
		.offset = off,
		.length = len,
		.imm = imm,
	};
	host_push(r, side, &d);
	r->s[side].sends_posted++;
}

void rig_recv_on(struct rig *r, int side, uint32_t qp_id, uint64_t off, uint32_t len,
		 uint64_t wr_id)
{
	struct sdr_sqe d = {
		.opcode = SDR_SQ_RECV,
		.qp_id = (uint16_t)qp_id,
		.mr_id = 0,
		.wr_id = wr_id,
		.offset = off,
		.length = len,
	};
	host_push(r, side, &d);
	r->s[side].recvs_posted++;
}

void rig_send(struct rig *r, int side, uint64_t off, uint32_t len, uint32_t imm, uint64_t wr_id)
{
	rig_send_on(r, side, r->s[side].qp->id, off, len, imm, wr_id);
}

void rig_recv(struct rig *r, int side, uint64_t off, uint32_t len, uint64_t wr_id)
{
	rig_recv_on(r, side, r->s[side].qp->id, off, len, wr_id);
}

void rig_recv_complete(struct rig *r, int side, uint32_t seq)
{
	struct sdr_sqe d = {
		.opcode = SDR_SQ_RECV_COMPLETE,
		.qp_id = (uint16_t)r->s[side].qp->id,
		.seq = seq,
	};
	host_push(r, side, &d);
}

/* ---------------- the worker loop (worker.c's, clock passed in) ---------------- */

static unsigned worker_iter(struct rig *r, int side)
{
	struct rig_priv *pv = r->priv;
	struct sdr_worker *w = r->s[side].w;
	struct frame_heap *q = &pv->q[side];
	uint64_t now = r->now;
	unsigned work = 0, n = 0;

	/* RX burst */
	while (n < SDR_BURST && q->n && q->v[0]->due <= now) {
		struct rig_frame *f = heap_pop(q);
		if (f->from >= 0 && r->link[f->from].cut) {
			r->ws[f->from].lost[f->kind]++;
		} else {
			if (f->from >= 0) {
				r->ws[f->from].delivered[f->kind]++;
				if (f->serial < pv->last_serial[f->from])
					r->ws[f->from].reordered++;
				else
					pv->last_serial[f->from] = f->serial;
			}
			rx_frame(r, side, f->data, f->len);
		}
		free(f);
		n++;
	}
	work += n;
	/* host SQ */
	for (struct sdr_hctx *c = w->ctxs; c; c = c->next_on_worker) {
		if (c->ovf_n)
			sdr_cq_drain(c);
		host_feed(r, side);
		work += sdr_host_poll(w, c, now);
	}
	/* the QPs with something to do (worker.c visits each at most once per
	 * loop), the TX flush, send completions, CQ writes; no transmit call may
	 * send more than SDR_BURST data and parity packets (tx_over_budget) */
	{
		struct rig_side *rs = &r->s[side];
		uint64_t before[SDR_MAX_QPS_PER_CTX];

		for (unsigned k = 0; k < rs->c->nqps; k++)
			before[k] = rs->c->qps[k]->st.tx_pkts +
				    SDR_QP_CTR(rs->c->qps[k], ec, par_pkts_tx);
		work += sdr_worker_qp_pass(w, now);
		for (unsigned k = 0; k < rs->c->nqps; k++)
			if (rs->c->qps[k]->st.tx_pkts + SDR_QP_CTR(rs->c->qps[k], ec, par_pkts_tx) -
				    before[k] >
			    SDR_BURST)
				r->bug.tx_over_budget++;
	}
	/* the host polls what the pass completed */
	host_reap(r, side);
	w->loops++;
	for (unsigned i = 0; i < sdr_g.ninst; i++)
		pool_check(r, &pv->pool[i]);
	return work;
}

unsigned rig_iter(struct rig *r)
{
	struct rig_priv *pv = r->priv;
	unsigned work = 0;
	uint64_t next;

	for (int i = 0; i < 2; i++) {
		if (!r->s[i].stopped) {
			work += worker_iter(r, i);
			continue;
		}
		/* a stopped DPU receives nothing */
		while (pv->q[i].n && pv->q[i].v[0]->due <= r->now) {
			struct rig_frame *f = heap_pop(&pv->q[i]);
			if (f->from >= 0)
				r->ws[f->from].lost[f->kind]++;
			free(f);
		}
	}
	if (work) {
		r->now += r->busy_ns;
		return work;
	}
	next = r->now + r->idle_ns;
	for (int i = 0; i < 2; i++)
		if (pv->q[i].n && pv->q[i].v[0]->due < next)
			next = pv->q[i].v[0]->due;
	r->now = next > r->now ? next : r->now + 1;
	return 0;
}

int rig_run_until(struct rig *r, int (*done)(struct rig *r, void *arg), void *arg, uint64_t max_ns)
{
	uint64_t end = r->now + max_ns;

	while (!done(r, arg)) {
		if (r->now >= end)
			return -1;
		rig_iter(r);
	}
	return 0;
}

void rig_run_for(struct rig *r, uint64_t ns)
{
	uint64_t end = r->now + ns;

	while (r->now < end)
		rig_iter(r);
}

/* ---------------- set-up (qp_setup.c's QPs, worker.c's connect) ---------------- */

static void parse_cfg(const char *args)
{
	char *copy = strdup(args ? args : ""), *save = NULL, *tok;
	char *argv[96] = {"sdr-dpu",    "--name",           "rig", "--ip", "10.0.0.1",
			  "--peer-mac", "02:53:44:52:00:02"};
	int argc = 7;

	if (!copy)
		die("out of memory");
	for (tok = strtok_r(copy, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		if (argc == 95)
			die("too many options");
		argv[argc++] = tok;
	}
	argv[argc] = NULL;
	optind = 0; /* glibc: start over */
	if (sdr_cfg_parse(&sdr_g.cfg, argc, argv))
		die("sdr_cfg_parse refused the options");
	free(copy);
}

/* A QP the way QP_CREATE makes one (ctrl_qp.c): qp_setup.c's objects,
 * given to the worker and the instance's table; the keys from the rig's
 * generator. */
static struct sdr_qp *make_qp(struct rig *r, int side, uint32_t id, const struct sdr_qp_attr_abi *a,
			      const struct sdr_stripe *st)
{
	struct rig_side *s = &r->s[side];
	struct sdr_qp_ids ids = {.id = id};
	struct sdr_qp *qp;
	char why[128];

	ids.rkey = (uint32_t)rnd(r->priv) | 1;
	ids.ctrl_key = rnd(r->priv) | 1;
	ids.cc = r->qp_cc;
	if (st)
		ids.stripe = *st;
	if (sdr_qp_setup(&qp, s->c, a, &ids, why, sizeof(why))) {
		fprintf(stderr, "engine_rig: sdr_qp_setup: %s\n", why);
		exit(2);
	}
	s->c->qps[s->c->nqps++] = qp;
	sdr_worker_qp_add(s->w, qp, r->now);
	atomic_store(&s->in->qps[id], qp);
	return qp;
}

/* a non-zero per-QP counter, for the dump */
static void dump_ctr(void *arg, const char *name, uint64_t v, const char *scheme)
{
	(void)scheme;
	if (v)
		fprintf(arg, " %s=%llu", name, (unsigned long long)v);
}

static struct sdr_qp_info qp_info(const struct sdr_qp *qp)
{
	struct sdr_qp_info x;

	memset(&x, 0, sizeof(x));
	sdr_qp_info_fill(qp, &x);
	return x;
}

struct rig *rig_new(const struct rig_opts *o)
{
	struct rig *r = xcalloc(1, sizeof(*r));
	struct rig_priv *pv = xcalloc(1, sizeof(*pv));
	unsigned nmb = o->mbufs ? o->mbufs : 256;

	if (cur)
		die("one rig at a time");
	memset(&sdr_g, 0, sizeof(sdr_g));
	cur = r;
	r->priv = pv;
	pv->rng = o->seed ? o->seed : 1;
	r->busy_ns = o->busy_ns ? o->busy_ns : 1000;
	r->idle_ns = o->idle_ns ? o->idle_ns : 50000;
	r->rx_lag_ns = o->rx_lag_ns < r->busy_ns ? o->rx_lag_ns : r->busy_ns - 1;
	r->qp_cc = o->qp_cc;
	r->now = 1000000000ull; /* 1 s: no timestamp of the firmware is 0 */
	if (getenv("SDR_RIG_TRACE"))
		r->trace = stderr;
	parse_cfg(o->args);
	sdr_g.tsc_hz = RIG_HZ;
	sdr_g.ninst = 2;
	sdr_g.nworkers = 2;
	sdr_g.running = 1;

	for (int i = 0; i < 2; i++) {
		struct rig_side *s = &r->s[i];
		struct sdr_inst *in = &sdr_g.inst[i];
		struct sdr_worker *w = &sdr_g.workers[i];
		struct mbuf_pool *p = &pv->pool[i];
		struct host *h = &pv->host[i];
		struct sdr_hctx *c = xcalloc(1, sizeof(*c));
		uint64_t rate = sdr_g.cfg.inst[0].port_rate / 8;

		/* two daemons of one worker each, back to back */
		in->idx = (unsigned)i;
		in->cfg = sdr_g.cfg.inst[0];
		in->port = (uint16_t)i;
		in->ip = 0x0A000001u + (uint32_t)i;
		memcpy(in->mac, (uint8_t[6]){0x02, 0x53, 0x44, 0x52, 0x00, (uint8_t)(1 + i)}, 6);
		memcpy(in->peer_mac, (uint8_t[6]){0x02, 0x53, 0x44, 0x52, 0x00, (uint8_t)(2 - i)},
		       6);
		in->qpn_first = SDR_QPN_FIRST + (uint32_t)i * SDR_QPN_EPOCH_SPAN; /* epochs 0, 1 */
		in->listen_fd = -1;
		w->idx = (unsigned)i;
		w->lcore = (unsigned)i;
		if (sdr_worker_init(w, r->now))
			die("out of memory");
		/* one worker per daemon: the whole port rate (and its instance only) */
		sdr_sched_port_rate(&w->sched, (unsigned)i, rate, sdr_pace_burst(rate));

		p->n = nmb;
		p->m = xcalloc(nmb, sizeof(*p->m));
		p->room = xcalloc(nmb, RIG_MBUF_ROOM);
		p->state = xcalloc(nmb, 1);
		p->free = xcalloc(nmb, sizeof(*p->free));
		for (unsigned k = 0; k < nmb; k++) {
			struct rte_mbuf *m = &p->m[k];
			m->buf_addr = p->room + (size_t)k * RIG_MBUF_ROOM;
			m->buf_len = RIG_MBUF_ROOM;
			m->data_off = RTE_PKTMBUF_HEADROOM;
			m->nb_segs = 1;
			m->port = (uint16_t)i;
			p->free[p->nfree++] = &p->m[nmb - 1 - k];
		}

		s->mem_len = o->mem_bytes ? o->mem_bytes : (1u << 20);
		s->mem = aligned_alloc(4096, RTE_ALIGN_CEIL(s->mem_len, 4096));
		if (!s->mem)
			die("out of memory");
		memset(s->mem, 0, s->mem_len);
		c->id = (unsigned)i;
		c->sock = -1;
		c->inst = in;
		c->worker = w->idx;
		c->seg_fd = -1;
		c->mrs[0].addr = s->mem;
		c->mrs[0].len = s->mem_len;
		c->mrs[0].fd = -1;
		atomic_store(&c->mrs[0].valid, 1);
		h->idx = aligned_alloc(SDR_CACHE_LINE,
				       RTE_ALIGN_CEIL(sizeof(*h->idx), SDR_CACHE_LINE));
		h->ent = xcalloc(RIG_SQ_ENTRIES, sizeof(*h->ent));
		if (!h->idx)
			die("out of memory");
		sdr_ring_format(h->idx, RIG_SQ_ENTRIES, sizeof(struct sdr_sqe));
		if (sdr_ring_attach(&c->sq, h->idx, h->ent, RIG_SQ_ENTRIES, sizeof(struct sdr_sqe),
				    0) ||
		    sdr_ring_attach(&h->prod, h->idx, h->ent, RIG_SQ_ENTRIES,
				    sizeof(struct sdr_sqe), 1))
			die("SQ ring");
		/* the CQ ring and the completions waiting for room in it (sized
		 * as ctrl.c's HELLO does; the rig's host polls every pass) */
		h->cq_idx = aligned_alloc(SDR_CACHE_LINE,
					  RTE_ALIGN_CEIL(sizeof(*h->cq_idx), SDR_CACHE_LINE));
		h->cq_ent = xcalloc(RIG_CQ_ENTRIES, sizeof(*h->cq_ent));
		if (!h->cq_idx)
			die("out of memory");
		sdr_ring_format(h->cq_idx, RIG_CQ_ENTRIES, sizeof(struct sdr_cqe));
		if (sdr_ring_attach(&c->cq, h->cq_idx, h->cq_ent, RIG_CQ_ENTRIES,
				    sizeof(struct sdr_cqe), 1) ||
		    sdr_ring_attach(&h->cq, h->cq_idx, h->cq_ent, RIG_CQ_ENTRIES,
				    sizeof(struct sdr_cqe), 0))
			die("CQ ring");
		c->ovf = xcalloc(SDR_CQ_OVF_FOR(1), sizeof(*c->ovf));
		c->ovf_cap = SDR_CQ_OVF_FOR(1);
		w->ctxs = c;
		sdr_g.inst[i].ctxs[0] = c;
		s->in = in;
		s->w = w;
		s->c = c;
	}
	r->s[RIG_A].qp = make_qp(r, RIG_A, 3, &o->attr, NULL);
	r->s[RIG_B].qp = make_qp(r, RIG_B, 5, &o->attr, NULL);
	{
		struct sdr_qp_info a = qp_info(r->s[RIG_A].qp), b = qp_info(r->s[RIG_B].qp);
		sdr_worker_qp_connect(r->s[RIG_A].w, r->s[RIG_A].qp, &b);
		sdr_worker_qp_connect(r->s[RIG_B].w, r->s[RIG_B].qp, &a);
	}
	return r;
}

uint32_t rig_add_pair(struct rig *r, const struct sdr_qp_attr_abi *a)
{
	return rig_add_pair_stripe(r, a, NULL);
}

uint32_t rig_add_pair_stripe(struct rig *r, const struct sdr_qp_attr_abi *a,
			     const struct sdr_stripe *st)
{
	struct rig_priv *pv = r->priv;
	uint32_t id = 16 + pv->npairs; /* (ids 3 and 5 are the first pair's) */
	struct sdr_qp *qa, *qb;
	struct sdr_qp_info ia, ib;

	if (id >= SDR_MAX_QPS || r->s[RIG_A].c->nqps == SDR_MAX_QPS_PER_CTX)
		die("rig_add_pair: no room");
	qa = make_qp(r, RIG_A, id, a, st);
	qb = make_qp(r, RIG_B, id, a, st);
	ia = qp_info(qa);
	ib = qp_info(qb);
	sdr_worker_qp_connect(r->s[RIG_A].w, qa, &ib);
	sdr_worker_qp_connect(r->s[RIG_B].w, qb, &ia);
	pv->npairs++;
	return id;
}

void rig_free(struct rig *r)
{
	struct rig_priv *pv = r->priv;

	for (int i = 0; i < 2; i++) {
		struct rig_side *s = &r->s[i];
		struct mbuf_pool *p = &pv->pool[i];

		for (unsigned k = 0; k < s->c->nqps; k++)
			sdr_qp_teardown(s->c->qps[k]);
		sdr_worker_fini(s->w);
		free(s->c->ovf);
		free(s->c);
		free(s->mem);
		free(s->cqe);
		sdr_auto_closed_free();
		while (pv->q[i].n)
			free(heap_pop(&pv->q[i]));
		free(pv->q[i].v);
		free(p->m);
		free(p->room);
		free(p->state);
		free(p->free);
		free(pv->host[i].idx);
		free(pv->host[i].ent);
		free(pv->host[i].backlog);
		free(pv->host[i].cq_idx);
		free(pv->host[i].cq_ent);
	}
	for (size_t i = 0; i < pv->nheld; i++)
		free(pv->held[i]);
	free(pv->held);
	free(pv);
	free(r);
	memset(&sdr_g, 0, sizeof(sdr_g));
	cur = NULL;
}

/* ---------------- reports ---------------- */

uint64_t rig_ctr(const struct rig *r, int side, enum sdr_ctr c)
{
	return r->s[side].w->ctr[c];
}

unsigned rig_check_invariants(const struct rig *r)
{
	const struct rig_bugs *b = &r->bug;
	unsigned n = 0;

#define BUG(f)                                                                   \
	if (b->f) {                                                              \
		fprintf(stderr, "engine_rig: invariant broken: %s = %llu\n", #f, \
			(unsigned long long)b->f);                               \
		n++;                                                             \
	}
	/* clang-format off */
	BUG(malformed_tx) BUG(mbuf_leak) BUG(mr_ref_underflow) BUG(send_not_queued)
	BUG(recv_not_done) BUG(tx_over_budget)
	/* clang-format on */
#undef BUG
			return n;
}

void rig_dump(const struct rig *r, FILE *f)
{
	static const char *const kn[RIG_K__MAX] = {"data",   "cts",   "ack",  "nack",
						   "parity", "abort", "other"};

	fprintf(f, "t = %.3f ms\n", (double)(r->now - 1000000000ull) / 1e6);
	for (int i = 0; i < 2; i++) {
		const struct sdr_qp *qp = r->s[i].qp;
		uint32_t hs = qp->tx_cursor % SDR_MAX_MSGS;

		fprintf(f,
			"side %c: qp state %d, cqes %zu; sends: next %u tx_cursor %u ack_cursor %u"
			" (head: cts %s), progress %.3f ms ago; receives: next %u\n ",
			"AB"[i], qp -> state, r -> s[i].ncqe, qp->send_next, qp->tx_cursor,
			qp->ack_cursor,
			qp->cts[hs].ok && qp->cts[hs].seq == qp->tx_cursor ? "yes" : "no",
			(double)(r->now - qp->progress_tsc) / 1e6, qp->rq.next_seq);
		sdr_rel_ctrs_foreach(&qp->st, dump_ctr, f);
		fprintf(f, "\n  ctr:");
		for (unsigned c = 0; c < SDR_CTR__MAX; c++)
			if (r->s[i].w->ctr[c])
				fprintf(f, " %s=%llu", sdr_ctr_names[c],
					(unsigned long long)r->s[i].w->ctr[c]);
		fprintf(f, "\n  wire from %c:", "AB"[i]);
		for (int k = 0; k < RIG_K__MAX; k++)
			if (r->ws[i].sent[k])
				fprintf(f, " %s %llu (lost %llu, dup %llu)", kn[k],
					(unsigned long long)r->ws[i].sent[k],
					(unsigned long long)r->ws[i].lost[k],
					(unsigned long long)r->ws[i].dup[k]);
		fprintf(f, "\n");
	}
}
