/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The reliability schemes end to end on the engine rig (engine_rig.h): two
 * QPs back to back, the firmware's own stages, schemes and engines, a
 * simulated wire and a virtual clock. Every scenario runs per scheme:
 * `test_engines SCENARIO_SCHEME` (e.g. loss_ec_rs); `test_engines list`.
 *
 * Geometry of every test: MTU 1024, chunks of 4 packets (4 KiB), max_msg
 * 64 KiB (16 chunks), 10 Gbit/s port pacing, one-way delay 50 us. EC codes:
 * RS and XOR with k = 4, m = 2 (a submessage is 16 KiB); AUTO with the
 * daemon's default candidates. Every third message of a flow has user
 * immediate 0 (no immediate: opcode 0x2A packets, no immediate-only
 * packets), the others a non-zero one.
 *
 * Every test checks, besides its own assertions:
 *  - every completion exactly once, with the status, length, immediate and
 *    flags it must have; receive buffers bit-exact and untouched past the
 *    message;
 *  - conservation on the wire: every data frame that arrived was placed
 *    once (rx_pkts) or counted by exactly one drop counter; every parity
 *    frame was taken (ec_par_pkts_rx) or counted; every CTS, ACK and NACK
 *    that arrived was counted (cts_rx, sr_acks_rx, ec_nacks_rx);
 *  - the rig's invariants (no mbuf leak, no MR reference underflow, no
 *    completion of a send that is not outstanding or of a receive the
 *    table did not complete, every transmitted frame well-formed).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine_rig.h"
#include "auto_counters.h"
#include "ec_counters.h"
#include "rel.h"
#include "sr_counters.h"
#include "sdr_test.h"

#define MTU 1024u
#define PPC 4u
#define CHUNK (MTU * PPC)
#define MAXMSG 65536u
#define BASE_ARGS "--mtu 1024 --chunk-pkts 4 --max-msg 65536 --port-rate 10g"
#define US 1000ull
#define MS 1000000ull

struct scheme {
	const char *name;
	uint8_t rel, code, k, m;
};

static const struct scheme schemes[] = {
	{"none", SDR_REL_NONE, 0, 0, 0},        {"sr", SDR_REL_SR, 0, 0, 0},
	{"ec_rs", SDR_REL_EC, SDR_EC_RS, 4, 2}, {"ec_xor", SDR_REL_EC, SDR_EC_XOR, 4, 2},
	{"auto", SDR_REL_AUTO, 0, 0, 0},
};

static const struct scheme *sc; /* the scheme under test */
static unsigned mk_mbufs;       /* mbufs per side of the next rig (0: the rig's default) */
static uint64_t mk_rx_lag;      /* rx_lag_ns of the next rig */

static int is_ec(void)
{
	return sc->rel == SDR_REL_EC;
}
static int has_sr(void)
{
	return sc->rel != SDR_REL_NONE;
}

static struct rig *mk(const char *extra, size_t mem)
{
	char args[512];
	struct rig_opts o = {.args = args, .mem_bytes = mem, .seed = t_rnd()};
	struct rig *r;

	snprintf(args, sizeof(args), "%s %s", BASE_ARGS, extra ? extra : "");
	o.mbufs = mk_mbufs;
	o.rx_lag_ns = mk_rx_lag;
	o.attr.reliability = sc->rel;
	o.attr.ec_code = sc->code;
	o.attr.ec_k = sc->k;
	o.attr.ec_m = sc->m;
	r = rig_new(&o);
	r->link[RIG_A].delay_ns = r->link[RIG_B].delay_ns = 50 * US;
	return r;
}

static void finish_rig(struct rig *r)
{
	CHECK_EQ(rig_check_invariants(r), 0);
	rig_dump(r, t_failures ? stderr : stdout);
	rig_free(r);
}

/* ---------------- message geometry ---------------- */

static uint32_t npkts_of(uint32_t len)
{
	return (len + MTU - 1) / MTU;
}
static uint32_t nchunks_of(uint32_t len)
{
	return (len + CHUNK - 1) / CHUNK;
}
/* data frames of a message: its packets, and with an immediate (@p imm not
 * 0) immediate-only ones up to 8 */
static uint32_t frames_of(uint32_t len, uint32_t imm)
{
	return imm && npkts_of(len) < 8 ? 8 : npkts_of(len);
}
/* the message has immediate-only packets */
static int has_imm_only(uint32_t len, uint32_t imm)
{
	return imm && npkts_of(len) < 8;
}
/* parity frames of a message under code (k, m) */
static uint32_t parity_frames_of(uint32_t len, unsigned code, uint32_t k, uint32_t m)
{
	uint32_t nch = nchunks_of(len), n = 0;

	for (uint32_t s = 0; s * k < nch; s++) {
		uint32_t first = s * k * CHUNK, clen = len - first < CHUNK ? len - first : CHUNK;
		uint32_t nreal = nch - s * k < k ? nch - s * k : k;
		/* (a short last submessage: fewer than m) */
		n += sdr_ec_sub_parity(code, k, m, nreal) * ((clen + MTU - 1) / MTU);
	}
	return n;
}

/* ---------------- flows: messages from one side to the other ---------------- */

#define WR_SEND (1ull << 40)
#define WR_RECV (2ull << 40)

struct dir {
	uint32_t total, window, stride;
	uint32_t *len; /* [total] */
	uint32_t next_send, next_recv;
	uint32_t send_limit, recv_limit;     /* post numbers below these only */
	uint32_t max_out_send, max_out_recv; /* most outstanding at once */
	uint32_t sends_done, recvs_done;
	uint8_t *send_seen, *recv_seen;
	uint32_t *send_reg, *recv_reg;   /* region of each message */
	uint32_t *free_send, *free_recv; /* free region stacks */
	uint32_t nfree_send, nfree_recv;
	uint64_t base_send, base_recv; /* offsets in the sender's / receiver's memory */
	int32_t want_status;           /* of every completion */
	/* mismatches (each must stay 0) */
	uint32_t bad_status, bad_len, bad_seq, bad_imm, bad_flags, bad_data, bad_canary, twice;
};

struct flow {
	struct dir d[2]; /* [sending side] */
	int repost;      /* post the next operations from the completions */
};

static uint64_t tag_of(int from, uint32_t n)
{
	return ((uint64_t)(from + 1) << 32) | n;
}
/* every third message without immediate (0), the others with one */
static uint32_t imm_of(int from, uint32_t n)
{
	if (n % 3 == 0)
		return 0;
	return ((uint32_t)(tag_of(from, n) * 2654435761u) ^ 0xC0FFEE11u) | 1u;
}

static void dir_init(struct dir *d, uint32_t total, uint32_t window, uint32_t stride, uint64_t base)
{
	memset(d, 0, sizeof(*d));
	d->total = d->send_limit = d->recv_limit = total;
	d->window = window;
	d->stride = stride;
	d->len = calloc(total + 1, sizeof(*d->len));
	d->send_seen = calloc(total + 1, 1);
	d->recv_seen = calloc(total + 1, 1);
	d->send_reg = calloc(total + 1, sizeof(uint32_t));
	d->recv_reg = calloc(total + 1, sizeof(uint32_t));
	d->free_send = calloc(window + 1, sizeof(uint32_t));
	d->free_recv = calloc(window + 1, sizeof(uint32_t));
	if (!d->len || !d->send_seen || !d->recv_seen || !d->send_reg || !d->recv_reg ||
	    !d->free_send || !d->free_recv)
		abort();
	for (uint32_t i = 0; i < window; i++) {
		d->free_send[d->nfree_send++] = window - 1 - i;
		d->free_recv[d->nfree_recv++] = window - 1 - i;
	}
	d->base_send = base;
	d->base_recv = base + (uint64_t)window * stride;
}

static void dir_fini(struct dir *d)
{
	free(d->len);
	free(d->send_seen);
	free(d->recv_seen);
	free(d->send_reg);
	free(d->recv_reg);
	free(d->free_send);
	free(d->free_recv);
}

/* Post what the window and the slots allow: a send or receive number comes
 * back to its slot 1024 later, so number n waits for n - 1024. */
static void pump(struct rig *r, struct flow *f, int from)
{
	struct dir *d = &f->d[from];

	while (d->next_send < d->send_limit && d->nfree_send &&
	       (d->next_send < SDR_MAX_MSGS || d->send_seen[d->next_send - SDR_MAX_MSGS])) {
		uint32_t n = d->next_send++, reg = d->free_send[--d->nfree_send];
		uint64_t off = d->base_send + (uint64_t)reg * d->stride;

		d->send_reg[n] = reg;
		rig_pattern(r->s[from].mem + off, d->len[n], tag_of(from, n));
		rig_send(r, from, off, d->len[n], imm_of(from, n), WR_SEND | n);
		if (d->next_send - d->sends_done > d->max_out_send)
			d->max_out_send = d->next_send - d->sends_done;
	}
	while (d->next_recv < d->recv_limit && d->nfree_recv &&
	       (d->next_recv < SDR_MAX_MSGS || d->recv_seen[d->next_recv - SDR_MAX_MSGS])) {
		uint32_t n = d->next_recv++, reg = d->free_recv[--d->nfree_recv];
		uint64_t off = d->base_recv + (uint64_t)reg * d->stride;

		d->recv_reg[n] = reg;
		memset(r->s[!from].mem + off, 0xA5, d->stride);
		rig_recv(r, !from, off, d->stride, WR_RECV | n);
		if (d->next_recv - d->recvs_done > d->max_out_recv)
			d->max_out_recv = d->next_recv - d->recvs_done;
	}
}

static void on_cqe(struct rig *r, int side, const struct sdr_cqe *e, void *arg)
{
	struct flow *f = arg;
	uint32_t n = (uint32_t)(e->wr_id & 0xFFFFFFFF);

	if ((e->wr_id & ~0xFFFFFFFFull) == WR_SEND) {
		struct dir *d = &f->d[side];
		if (n >= d->total || e->opcode != SDR_SQ_SEND) {
			d->bad_seq++;
			return;
		}
		d->twice += d->send_seen[n];
		d->send_seen[n] = 1;
		d->sends_done++;
		d->bad_status += e->status != d->want_status;
		d->bad_len += e->length != d->len[n];
		d->bad_seq += e->seq != n;
		d->free_send[d->nfree_send++] = d->send_reg[n];
		if (f->repost)
			pump(r, f, side);
	} else if ((e->wr_id & ~0xFFFFFFFFull) == WR_RECV) {
		int from = !side;
		struct dir *d = &f->d[from];
		const uint8_t *buf;
		if (n >= d->total || e->opcode != SDR_SQ_RECV) {
			d->bad_seq++;
			return;
		}
		buf = r->s[side].mem + d->base_recv + (uint64_t)d->recv_reg[n] * d->stride;
		d->twice += d->recv_seen[n];
		d->recv_seen[n] = 1;
		d->recvs_done++;
		d->bad_seq += e->seq != n;
		d->bad_status += e->status != d->want_status;
		if (d->want_status == 0) {
			d->bad_len += e->length != d->len[n];
			d->bad_flags += e->flags != SDR_CQE_F_IMM;
			d->bad_imm += e->imm != imm_of(from, n);
			d->bad_data += rig_pattern_diff(buf, d->len[n], tag_of(from, n)) != 0;
			for (uint32_t i = d->len[n]; i < d->stride; i++)
				if (buf[i] != 0xA5) {
					d->bad_canary++;
					break;
				}
		}
		d->free_recv[d->nfree_recv++] = d->recv_reg[n];
		if (f->repost)
			pump(r, f, from);
	}
}

static int flow_done(struct rig *r, void *arg)
{
	struct flow *f = arg;

	(void)r;
	for (int s = 0; s < 2; s++)
		if (f->d[s].sends_done < f->d[s].total || f->d[s].recvs_done < f->d[s].total)
			return 0;
	return 1;
}

/* Everything of direction @p from completed as it must. */
static void check_dir(const struct dir *d, int from)
{
	printf("  %c->%c: %u/%u sends, %u/%u receives completed\n", "AB"[from], "AB"[!from],
	       d -> sends_done, d -> total, d -> recvs_done, d -> total);
	CHECK_EQ(d->sends_done, d->total);
	CHECK_EQ(d->recvs_done, d->total);
	CHECK_EQ(d->twice, 0);
	CHECK_EQ(d->bad_status, 0);
	CHECK_EQ(d->bad_len, 0);
	CHECK_EQ(d->bad_seq, 0);
	CHECK_EQ(d->bad_imm, 0);
	CHECK_EQ(d->bad_flags, 0);
	CHECK_EQ(d->bad_data, 0);
	CHECK_EQ(d->bad_canary, 0);
}

/* ---------------- conservation ---------------- */

/* Drop counters a data packet that reached a QP's scheme may end in. */
static const enum sdr_ctr data_drops[] = {
	SDR_CTR_no_recv,      SDR_CTR_stale_gen, SDR_CTR_stale_seq, SDR_CTR_early_seq,
	SDR_CTR_late_pkt,     SDR_CTR_bad_rkey,  SDR_CTR_bad_va,    SDR_CTR_bad_len,
	SDR_CTR_imm_mismatch, SDR_CTR_dup_pkt,   SDR_CTR_dup_imm,   SDR_CTR_bad_dma_len,
};
/* ... and a parity packet. */
static const enum sdr_ctr parity_drops[] = {
	SDR_CTR_ec_parity_bad,     SDR_CTR_ec_parity_not_ec,  SDR_CTR_ec_param_mismatch,
	SDR_CTR_ec_parity_unknown, SDR_CTR_ec_parity_late,    SDR_CTR_ec_parity_sub,
	SDR_CTR_ec_parity_len,     SDR_CTR_ec_parity_dup,     SDR_CTR_ec_parity_unused,
	SDR_CTR_ec_parity_early,   SDR_CTR_ec_pool_exhausted, SDR_CTR_ec_nomem,
};

static uint64_t sum_ctrs(const struct rig *r, int side, const enum sdr_ctr *c, size_t n)
{
	uint64_t s = 0;

	for (size_t i = 0; i < n; i++)
		s += rig_ctr(r, side, c[i]);
	return s;
}

/* What side @p to got from its peer, all accounted for (no frame was
 * refused before the QP: addresses, state, key). */
static void check_conservation(const struct rig *r, int to)
{
	const struct rig_wire_stats *ws = &r->ws[!to];
	const struct sdr_qp *qp = r->s[to].qp;
	uint64_t frame_drops = rig_ctr(r, to, SDR_CTR_qp_not_ready) +
			       rig_ctr(r, to, SDR_CTR_wrong_peer) +
			       rig_ctr(r, to, SDR_CTR_ctrl_bad_key) +
			       rig_ctr(r, to, SDR_CTR_ctrl_bad);

	CHECK_EQ(frame_drops, 0);
	CHECK_EQ(ws->delivered[RIG_K_DATA],
		 qp->st.rx_pkts + sum_ctrs(r, to, data_drops, RTE_DIM(data_drops)));
	CHECK_EQ(ws->delivered[RIG_K_PARITY],
		 SDR_QP_CTR(qp, ec, par_pkts_rx) +
			 sum_ctrs(r, to, parity_drops, RTE_DIM(parity_drops)));
	CHECK_EQ(ws->delivered[RIG_K_CTS], qp->st.cts_rx);
	CHECK_EQ(ws->delivered[RIG_K_ACK],
		 SDR_QP_CTR(qp, sr, acks_rx) + rig_ctr(r, to, SDR_CTR_ctrl_unknown));
	CHECK_EQ(ws->delivered[RIG_K_NACK], SDR_QP_CTR(qp, ec, nacks_rx));
	CHECK_EQ(ws->delivered[RIG_K_ABORT], qp->st.aborts_rx);
	CHECK_EQ(ws->sent[RIG_K_OTHER], 0);
	/* the frames a side sent are what its counters say it sent */
	CHECK_EQ(r->ws[to].sent[RIG_K_DATA], qp->st.tx_pkts);
	CHECK_EQ(r->ws[to].sent[RIG_K_PARITY], SDR_QP_CTR(qp, ec, par_pkts_tx));
	CHECK_EQ(r->ws[to].sent[RIG_K_CTS], qp->st.cts_tx);
	CHECK_EQ(r->ws[to].sent[RIG_K_ACK], SDR_QP_CTR(qp, sr, acks_tx));
	CHECK_EQ(r->ws[to].sent[RIG_K_NACK], SDR_QP_CTR(qp, ec, nacks_tx));
	CHECK_EQ(r->ws[to].sent[RIG_K_ABORT], qp->st.aborts_tx);
}

/* ---------------- transfers both ways ---------------- */

/* Sizes that hit every boundary of the geometry, then random ones. */
static const uint32_t edge_sizes[] = {
	1,       2,           100,           MTU - 1,   MTU,           MTU + 1,
	3 * MTU, CHUNK - 1,   CHUNK,         CHUNK + 1, 7 * MTU,       8 * MTU - 1,
	8 * MTU, 8 * MTU + 1, 4 * CHUNK - 1, 4 * CHUNK, 4 * CHUNK + 1, 5 * CHUNK + 100,
	40000,   MAXMSG - 1,  MAXMSG,
};

static void sizes_fill(struct dir *d, uint32_t max)
{
	for (uint32_t n = 0; n < d->total; n++)
		d->len[n] = n < RTE_DIM(edge_sizes) && edge_sizes[n] <= max
				    ? edge_sizes[n]
				    : (uint32_t)t_range(1, max);
}

static void flow_start(struct rig *r, struct flow *f)
{
	f->repost = 1;
	r->on_cqe = on_cqe;
	r->on_cqe_arg = f;
	for (int s = 0; s < 2; s++)
		pump(r, f, s);
}

/* @p n messages each way, all posted at once; run until every one
 * completed (or @p limit_ns). */
static int transfer(struct rig *r, struct flow *f, uint32_t n, uint64_t limit_ns)
{
	int rc;

	for (int s = 0; s < 2; s++) {
		dir_init(&f->d[s], n, n, MAXMSG, 0);
		sizes_fill(&f->d[s], MAXMSG);
	}
	flow_start(r, f);
	rc = rig_run_until(r, flow_done, f, limit_ns);
	CHECK_EQ(rc, 0);
	for (int s = 0; s < 2; s++)
		check_dir(&f->d[s], s);
	return rc;
}

static void flow_fini(struct flow *f)
{
	for (int s = 0; s < 2; s++)
		dir_fini(&f->d[s]);
}

/* ---------------- clean ---------------- */

/* No loss: exact frame counts of every kind, no recovery at all. */
static void t_clean(void)
{
	struct rig *r = mk(NULL, 2 * 40 * MAXMSG);
	struct flow f;

	transfer(r, &f, 40, 2000 * MS);
	rig_run_for(r, 5 * MS); /* let the last ACKs (and repeats) arrive */
	for (int from = 0; from < 2; from++) {
		const struct dir *d = &f.d[from];
		const struct sdr_qp *tx = r->s[from].qp, *rx = r->s[!from].qp;
		uint64_t frames = 0, bytes = 0, chunks = 0, units = 0, parity = 0, small = 0;

		for (uint32_t n = 0; n < d->total; n++) {
			small += has_imm_only(d->len[n], imm_of(from, n));
			frames += frames_of(d->len[n], imm_of(from, n));
			bytes += d->len[n];
			chunks += nchunks_of(d->len[n]);
			units += nchunks_of(d->len[n]) + has_imm_only(d->len[n], imm_of(from, n));
			if (is_ec())
				parity += parity_frames_of(d->len[n], sc->code, sc->k, sc->m);
		}
		CHECK_EQ(tx->st.tx_pkts, frames);
		CHECK_EQ(tx->st.tx_bytes, bytes);
		CHECK_EQ(tx->st.msgs_sent, d->total);
		CHECK_EQ(tx->st.send_errors, 0);
		CHECK_EQ(rx->st.msgs_recv, d->total);
		CHECK_EQ(rx->st.msgs_partial, 0);
		CHECK_EQ(rx->st.chunks_done, chunks);
		CHECK_EQ(r->ws[from].lost[RIG_K_DATA] + r->ws[from].lost[RIG_K_CTS], 0);
		CHECK_EQ(SDR_QP_CTR(tx, sr, retx_pkts), 0);
		CHECK_EQ(SDR_QP_CTR(tx, sr, rto_expiries), 0);
		CHECK_EQ(SDR_QP_CTR(rx, ec, decodes), 0);
		CHECK_EQ(SDR_QP_CTR(rx, ec, nacks_tx), 0);
		CHECK_EQ(SDR_QP_CTR(rx, sr, recv_timeouts), 0);
		if (has_sr())
			CHECK_EQ(SDR_QP_CTR(tx, sr, units_acked), units);
		if (sc->rel == SDR_REL_NONE || sc->rel == SDR_REL_SR) {
			/* every frame placed, nothing dropped */
			CHECK_EQ(rx->st.rx_pkts, frames);
			CHECK_EQ(rx->st.rx_bytes, bytes);
			CHECK_EQ(sum_ctrs(r, !from, data_drops, RTE_DIM(data_drops)), 0);
			CHECK_EQ(SDR_QP_CTR(tx, ec, par_pkts_tx), 0);
		}
		if (sc->rel == SDR_REL_SR) {
			CHECK_EQ(rig_ctr(r, from, SDR_CTR_ack_stale), 0);
			CHECK_EQ(SDR_QP_CTR(rx, sr, reacks), 0);
		}
		if (is_ec()) {
			/* A submessage's parity follows its data: it finds the
			 * submessage or the receive complete. The message's first
			 * parity packet takes the full path (ICRC, length and
			 * immediate, EC state) and is unused; every later one is
			 * dropped on its header (early), and so is the parity of a
			 * message of one submessage, which all arrives after its
			 * receive completed. A message of fewer than 8 packets with
			 * an immediate is completed by its first parity packet
			 * (length and immediate), before its immediate-only
			 * packets, which then arrive late; one without immediate by
			 * its data. */
			uint64_t rx_pkts = 0, late = 0, unused = 0, early = 0, prx = 0, subs = 0;
			for (uint32_t n = 0; n < d->total; n++) {
				uint32_t len = d->len[n], np = npkts_of(len);
				uint32_t nsub = (nchunks_of(len) + sc->k - 1) / sc->k;
				uint32_t par = parity_frames_of(len, sc->code, sc->k, sc->m);
				subs += nsub;
				rx_pkts += np;
				if (has_imm_only(len, imm_of(from, n))) {
					late += 8 - np;
					prx += 1;
					early += par - 1;
				} else {
					unused += nsub > 1;
					early += par - (nsub > 1);
				}
			}
			CHECK_EQ(SDR_QP_CTR(tx, ec, par_pkts_tx), parity);
			CHECK_EQ(SDR_QP_CTR(tx, ec, subs_encoded), subs);
			CHECK_EQ(rx->st.rx_pkts, rx_pkts);
			CHECK_EQ(rig_ctr(r, !from, SDR_CTR_late_pkt), late);
			CHECK_EQ(SDR_QP_CTR(rx, ec, par_pkts_rx), prx);
			CHECK_EQ(rig_ctr(r, !from, SDR_CTR_ec_parity_unused), unused);
			CHECK_EQ(rig_ctr(r, !from, SDR_CTR_ec_parity_early), early);
			CHECK_EQ(rig_ctr(r, !from, SDR_CTR_ec_parity_late), 0);
			/* The immediate-only packets of a message of fewer than 8
			 * packets come after its completion (late_pkt above), and
			 * the receiver answers the first of them as if the sender
			 * had missed the final ACK: one re-ACK per such message. */
			CHECK_EQ(SDR_QP_CTR(rx, sr, reacks), small);
			/* A FULL goes out twice, one ACK period apart, and so does
			 * a re-ACK: every entry after the first finds the send done. */
			CHECK_EQ(rig_ctr(r, from, SDR_CTR_ack_stale),
				 d->total + 2 * SDR_QP_CTR(rx, sr, reacks));
		}
		if (sc->rel == SDR_REL_AUTO) {
			CHECK_EQ(SDR_QP_CTR(tx, auto, msgs_sr) + SDR_QP_CTR(tx, auto, msgs_ec),
				 d->total);
			CHECK_EQ(rig_ctr(r, from, SDR_CTR_ack_stale),
				 d->total + 2 * SDR_QP_CTR(rx, sr, reacks));
		}
		check_conservation(r, !from);
	}
	flow_fini(&f);
	finish_rig(r);
}

/* ---------------- loss, reordering, duplication ---------------- */

/* Evidence that the scheme recovered something on both receivers. */
static void check_recovered(const struct rig *r)
{
	for (int from = 0; from < 2; from++) {
		const struct sdr_qp *tx = r->s[from].qp, *rx = r->s[!from].qp;
		if (sc->rel == SDR_REL_SR) {
			/* found lost by the RACK rule (a unit sent later was
			 * acknowledged), not only by retransmission timers */
			CHECK(SDR_QP_CTR(tx, sr, retx_pkts) > 0);
			CHECK(SDR_QP_CTR(tx, sr, rack_retx) > 0);
		} else if (is_ec()) {
			CHECK(SDR_QP_CTR(rx, ec, decodes) > 0);
			CHECK(SDR_QP_CTR(rx, ec, chunks_recovered) > 0);
		} else {
			CHECK(SDR_QP_CTR(tx, sr, retx_pkts) + SDR_QP_CTR(rx, ec, decodes) > 0);
		}
	}
}

/* Drops the first CTS and the first ACK each side sends. */
static enum rig_verdict drop_first_ctrl(struct rig *r, const struct rig_frame_info *fi, void *arg)
{
	int *seen = arg; /* [side][CTS, ACK] */

	(void)r;
	if (fi->kind == RIG_K_CTS || fi->kind == RIG_K_ACK) {
		int *x = &seen[fi->from * 2 + (fi->kind == RIG_K_ACK)];
		if (!(*x)++)
			return RIG_DROP;
	}
	return RIG_PASS;
}

/* 5 % of the data (and parity) and 5 % of the control frames lost, both
 * ways, and for sure the first CTS and ACK of each side: everything
 * completes bit-exact, by retransmission or decoding. */
static void t_loss(void)
{
	struct rig *r = mk(NULL, 2 * 60 * MAXMSG);
	int seen[4] = {0};
	struct flow f;

	for (int s = 0; s < 2; s++) {
		r->link[s].loss_data = 0.05;
		r->link[s].loss_ctrl = 0.05;
	}
	r->filter = drop_first_ctrl;
	r->filter_arg = seen;
	transfer(r, &f, 60, 20000 * MS);
	rig_run_for(r, 5 * MS);
	for (int s = 0; s < 2; s++) {
		CHECK(r->ws[s].lost[RIG_K_DATA] > 0);
		CHECK(r->ws[s].lost[RIG_K_CTS] > 0);
		if (has_sr())
			CHECK(r->ws[s].lost[RIG_K_ACK] > 0);
		CHECK_EQ(r->s[s].qp->st.msgs_sent, 60);
		CHECK_EQ(r->s[s].qp->st.msgs_recv, 60);
		CHECK_EQ(SDR_QP_CTR(r->s[s].qp, sr, send_timeouts) +
				 SDR_QP_CTR(r->s[s].qp, sr, recv_timeouts),
			 0);
		if (sc->rel == SDR_REL_AUTO)
			CHECK_EQ(SDR_QP_CTR(r->s[s].qp, auto, msgs_sr) +
					 SDR_QP_CTR(r->s[s].qp, auto, msgs_ec),
				 60);
		check_conservation(r, s);
	}
	check_recovered(r);
	flow_fini(&f);
	finish_rig(r);
}

/* Up to 200 us of random extra delay per frame (the one-way delay is
 * 50 us; frames leave about 1 us apart): heavy reordering, no loss. */
static void t_reorder(void)
{
	struct rig *r = mk(NULL, 2 * 60 * MAXMSG);
	struct flow f;

	for (int s = 0; s < 2; s++)
		r->link[s].jitter_ns = 200 * US;
	transfer(r, &f, 60, 20000 * MS);
	rig_run_for(r, 5 * MS);
	for (int s = 0; s < 2; s++) {
		const struct sdr_qp *qp = r->s[s].qp;
		CHECK(r->ws[s].reordered > 100);
		CHECK_EQ(qp->st.msgs_sent, 60);
		CHECK_EQ(qp->st.msgs_recv, 60);
		if (sc->rel == SDR_REL_SR) {
			/* reordered within the RTO is not lost */
			CHECK_EQ(SDR_QP_CTR(qp, sr, rto_expiries), 0);
			CHECK_EQ(SDR_QP_CTR(qp, sr, retx_pkts), 0);
		}
		check_conservation(r, s);
	}
	flow_fini(&f);
	finish_rig(r);
}

/* 10 % of all frames arrive twice (the copy up to 100 us later), both
 * ways: every duplicate is dropped and counted, nothing is placed twice. */
static void t_dup(void)
{
	struct rig *r = mk(NULL, 2 * 60 * MAXMSG);
	struct flow f;

	for (int s = 0; s < 2; s++) {
		r->link[s].dup = 0.10;
		r->link[s].jitter_ns = 100 * US;
	}
	transfer(r, &f, 60, 20000 * MS);
	rig_run_for(r, 5 * MS);
	for (int s = 0; s < 2; s++) {
		const struct sdr_qp *qp = r->s[s].qp;
		CHECK(r->ws[s].dup[RIG_K_DATA] > 0);
		CHECK(rig_ctr(r, s, SDR_CTR_dup_pkt) + rig_ctr(r, s, SDR_CTR_dup_imm) > 0);
		CHECK_EQ(qp->st.msgs_sent, 60);
		CHECK_EQ(qp->st.msgs_recv, 60);
		check_conservation(r, s);
	}
	flow_fini(&f);
	finish_rig(r);
}

/* ---------------- dead peer ---------------- */

struct count_cqes {
	int side;
	size_t want;
};

static int have_cqes(struct rig *r, void *arg)
{
	const struct count_cqes *c = arg;
	return r->s[c->side].ncqe >= c->want;
}

/* Warm up (RTT samples); A posts 50 sends of 16 KiB towards receives B
 * posted, and 4 receives; B dies (stops, and the wire in both directions
 * is cut) once 5 of the sends completed. A's other sends and its receives
 * complete -ETIMEDOUT all at once, one global timeout after the last
 * progress, and A retransmits no more than one round of the units then
 * outstanding plus one unit per RTO, backed off (doubling, at most 1 s)
 * from the RTO at the cut, until then (docs/reliability.md, "Probing"). */
/* the QP's RTO in cycles, from its scheme's telemetry key rto_us */
static void rto_key(void *arg, const char *key, uint64_t v)
{
	if (!strcmp(key, "rto_us"))
		*(uint64_t *)arg = v * (sdr_g.tsc_hz / 1000000);
}

static void no_str(void *arg, const char *key, const char *v)
{
	(void)arg;
	(void)key;
	(void)v;
}

static uint64_t rto_of(const struct sdr_qp *qp)
{
	uint64_t rto = 0;

	qp->ops->desc->kv(qp, &(struct sdr_kv){.arg = &rto, .u64 = rto_key, .str = no_str});
	return rto;
}

static void t_deadpeer(void)
{
	const uint64_t T = 500 * MS; /* --global-timeout-ms */
	const uint32_t big = 4 * CHUNK, nbig = 50;
	struct rig *r = mk("--global-timeout-ms 500", 8u << 20);
	struct sdr_qp *qa = r->s[RIG_A].qp;
	struct count_cqes cc = {.side = RIG_A};
	uint64_t t_cut, retx0, bound, units = 0, t, rto, rto_cut, ok = 0;
	size_t c0, c1;
	int nrecv = 0;

	/* warm-up: 10 messages A -> B */
	for (uint32_t i = 0; i < 60; i++)
		rig_recv(r, RIG_B, (uint64_t)i * big, big, WR_RECV | i);
	rig_pattern(r->s[RIG_A].mem, (size_t)nbig * big, 77);
	for (uint32_t i = 0; i < 10; i++)
		rig_send(r, RIG_A, (uint64_t)i * 1000, 1000, i, WR_SEND | i);
	cc.want = 10;
	CHECK_EQ(rig_run_until(r, have_cqes, &cc, 1000 * MS), 0);
	for (size_t i = 0; i < r->s[RIG_A].ncqe; i++)
		CHECK_EQ(r->s[RIG_A].cqe[i].e.status, 0);
	rig_run_for(r, 2 * MS);
	CHECK(SDR_QP_CTR(qa, sr, rtt_samples) > 0);

	/* 50 sends and 4 receives; B dies after 5 sends completed */
	c0 = r->s[RIG_A].ncqe;
	for (uint32_t i = 0; i < nbig; i++)
		rig_send(r, RIG_A, (uint64_t)i * big, big, 100 + i, WR_SEND | (100 + i));
	for (uint32_t i = 0; i < 4; i++)
		rig_recv(r, RIG_A, (8u << 20) - (i + 1) * (uint64_t)big, big, WR_RECV | i);
	cc.want = c0 + 5;
	CHECK_EQ(rig_run_until(r, have_cqes, &cc, 1000 * MS), 0);
	r->s[RIG_B].stopped = 1;
	r->link[RIG_A].cut = r->link[RIG_B].cut = 1;
	t_cut = r->now;
	c1 = r->s[RIG_A].ncqe;
	rto_cut = rto_of(qa);
	retx0 = SDR_QP_CTR(qa, sr, retx_units);
	units = (uint64_t)(nbig - (c1 - c0)) * nchunks_of(big);
	cc.want = c0 + nbig + 4;
	CHECK_EQ(rig_run_until(r, have_cqes, &cc, 10 * T), 0);

	/* the rest failed -ETIMEDOUT, all at once */
	for (size_t i = c0; i < r->s[RIG_A].ncqe; i++) {
		const struct rig_cqe *x = &r->s[RIG_A].cqe[i];
		if (i < c1) {
			CHECK_EQ(x->e.status, 0);
			ok++;
			continue;
		}
		CHECK_EQ(x->e.status, -ETIMEDOUT);
		CHECK_EQ(x->tsc, r->s[RIG_A].cqe[c1].tsc);
		if (x->e.opcode == SDR_SQ_RECV) {
			CHECK_EQ(x->e.flags, SDR_CQE_F_PARTIAL | SDR_CQE_F_IMM_PARTIAL);
			CHECK_EQ(x->e.length, 0);
			nrecv++;
		}
	}
	CHECK_EQ(ok, 5);
	CHECK_EQ(nrecv, 4);
	CHECK_EQ(qa->state, SDR_QPS_ERROR);
	CHECK_EQ(SDR_QP_CTR(qa, sr, send_timeouts), 1);
	CHECK_EQ(qa->st.send_errors, nbig - 5);
	CHECK_EQ(qa->st.msgs_sent, 10 + 5);
	/* nothing progressed after the cut; the error came one timeout later */
	CHECK(qa->progress_tsc <= t_cut);
	t = r->s[RIG_A].cqe[c1].tsc;
	CHECK(t > qa->progress_tsc + T);
	CHECK(t <= qa->progress_tsc + T + 100 * US);
	/* retransmissions after the cut */
	bound = units;
	rto = rto_cut;
	for (uint64_t x = rto; x<T; rto = rto * 2> 1000 * MS ? 1000 * MS : rto * 2, x += rto)
		bound++;
	printf("dead peer: rto %.3f ms at the cut, %llu units outstanding, %llu retransmitted"
	       " after the cut (bound %llu), %llu probe defers, %llu backoffs\n",
	       (double)rto_cut / 1e6, (unsigned long long)units,
	       (unsigned long long)(SDR_QP_CTR(qa, sr, retx_units) - retx0),
	       (unsigned long long)bound, (unsigned long long)SDR_QP_CTR(qa, sr, probe_defers),
	       (unsigned long long)SDR_QP_CTR(qa, sr, rto_backoffs));
	CHECK(SDR_QP_CTR(qa, sr, retx_units) - retx0 > 0);
	CHECK(SDR_QP_CTR(qa, sr, retx_units) - retx0 <= bound);
	CHECK(SDR_QP_CTR(qa, sr, probe_defers) > 0);
	CHECK(SDR_QP_CTR(qa, sr, rto_backoffs) > 0);

	/* the QP is in error: new operations fail -ENOTCONN */
	c0 = r->s[RIG_A].ncqe;
	rig_send(r, RIG_A, 0, 100, 1, WR_SEND | 999);
	rig_recv(r, RIG_A, 0, 100, WR_RECV | 999);
	rig_run_for(r, 1 * MS);
	CHECK_EQ(r->s[RIG_A].ncqe, c0 + 2);
	for (size_t i = c0; i < r->s[RIG_A].ncqe; i++)
		CHECK_EQ(r->s[RIG_A].cqe[i].e.status, -ENOTCONN);
	CHECK_EQ(rig_ctr(r, RIG_A, SDR_CTR_sqe_not_conn), 2);
	finish_rig(r);
}

/* A link outage is a stall, not a failure: A posts 40 sends of 64 KiB
 * towards receives B posted; after 5 completed, the wire is cut both ways
 * for 3 s (far below the outage horizon, 60 s by default). During the cut
 * the QP is stalled (one outage, probing); after it, the first ACK ends
 * the stall and every unit that waited for its backed-off timer goes out
 * at once (sr_resume_units): all sends complete within 50 ms of that ACK,
 * none with an error, the receives bit-exact, and the outage recorded
 * (docs/reliability.md "Faults: link outages"). */
/* one of the QP's telemetry keys (its scheme's struct sdr_rel_desc::kv) */
struct kv_pick {
	const char *key;
	uint64_t v;
};

static void kv_pick_u64(void *arg, const char *key, uint64_t v)
{
	struct kv_pick *k = arg;

	if (!strcmp(key, k->key))
		k->v = v;
}

static uint64_t kv_of(const struct sdr_qp *qp, const char *key)
{
	struct kv_pick k = {key, UINT64_MAX};

	qp->ops->desc->kv(qp, &(struct sdr_kv){.arg = &k, .u64 = kv_pick_u64, .str = no_str});
	CHECK(k.v != UINT64_MAX);
	return k.v;
}

static int acks_past(struct rig *r, void *arg)
{
	return SDR_QP_CTR(r->s[RIG_A].qp, sr, acks_rx) > *(uint64_t *)arg;
}

static void t_outage(void)
{
	const uint32_t big = 4 * CHUNK, nbig = 40;
	struct rig *r = mk(NULL, 8u << 20);
	struct sdr_qp *qa = r->s[RIG_A].qp;
	struct count_cqes cc = {.side = RIG_A};
	uint64_t t_up, t_ack, acks, last;
	size_t c0;

	rig_pattern(r->s[RIG_A].mem, (size_t)nbig * big, 91);
	for (uint32_t i = 0; i < nbig; i++)
		rig_recv(r, RIG_B, (uint64_t)i * big, big, WR_RECV | i);
	c0 = r->s[RIG_A].ncqe;
	for (uint32_t i = 0; i < nbig; i++)
		rig_send(r, RIG_A, (uint64_t)i * big, big, i, WR_SEND | i);
	cc.want = c0 + 5;
	CHECK_EQ(rig_run_until(r, have_cqes, &cc, 1000 * MS), 0);
	CHECK(r->s[RIG_A].ncqe < c0 + nbig);
	r->link[RIG_A].cut = r->link[RIG_B].cut = 1;
	rig_run_for(r, 3000 * MS);
	/* stalled, not failed */
	CHECK_EQ(qa->state, SDR_QPS_CONNECTED);
	CHECK(kv_of(qa, "stalled_since_ms") > 0);
	CHECK_EQ(SDR_QP_CTR(qa, sr, outages), 1);
	CHECK_EQ(SDR_QP_CTR(qa, sr, send_timeouts), 0);
	r->link[RIG_A].cut = r->link[RIG_B].cut = 0;
	t_up = r->now;
	acks = SDR_QP_CTR(qa, sr, acks_rx);
	CHECK_EQ(rig_run_until(r, acks_past, &acks, 1100 * MS), 0); /* one probe interval */
	t_ack = r->now;
	cc.want = c0 + nbig;
	CHECK_EQ(rig_run_until(r, have_cqes, &cc, 50 * MS), 0);
	last = kv_of(qa, "outage_last_ms");
	printf("outage: 3 s cut; first ACK %.1f ms after the link came back, all %u sends"
	       " complete %.1f ms after it; %llu units retransmitted at once, outage %llu ms\n",
	       (double)(t_ack - t_up) / 1e6, nbig, (double)(r->now - t_ack) / 1e6,
	       (unsigned long long)SDR_QP_CTR(qa, sr, resume_units), (unsigned long long)last);
	CHECK(SDR_QP_CTR(qa, sr, resume_units) > 0);
	for (size_t i = c0; i < r->s[RIG_A].ncqe; i++)
		CHECK_EQ(r->s[RIG_A].cqe[i].e.status, 0);
	CHECK_EQ(kv_of(qa, "stalled_since_ms"), 0);
	/* no RTT sample of a unit whose ACK waited for the cut */
	CHECK(kv_of(qa, "srtt_us") < 100000);
	CHECK(kv_of(qa, "rto_us") < 1000000);
	CHECK(last >= 3000 && last <= 4200);
	CHECK_EQ(kv_of(qa, "outage_longest_ms"), last);
	rig_run_for(r, 5 * MS);
	CHECK_EQ(memcmp(r->s[RIG_B].mem, r->s[RIG_A].mem, (size_t)nbig * big), 0);
	CHECK_EQ(qa->st.send_errors, 0);
	finish_rig(r);
}

/* ---------------- many outstanding ---------------- */

/* 3000 messages each way with 1000 sends and 1000 receives outstanding at
 * all times, every completion reposted at once: no completion is lost,
 * none comes twice, every receive lands bit-exact. */
static void window(double loss)
{
	const uint32_t total = 3000, win = 1000, stride = CHUNK;
	struct rig *r = mk(NULL, 2 * (size_t)win * stride);
	struct flow f;
	int rc;

	for (int s = 0; s < 2; s++) {
		r->link[s].loss_data = r->link[s].loss_ctrl = loss;
		dir_init(&f.d[s], total, win, stride, 0);
		sizes_fill(&f.d[s], stride);
	}
	flow_start(r, &f);
	rc = rig_run_until(r, flow_done, &f, 30000 * MS);
	CHECK_EQ(rc, 0);
	rig_run_for(r, 5 * MS);
	for (int s = 0; s < 2; s++) {
		const struct sdr_qp *qp = r->s[s].qp;
		check_dir(&f.d[s], s);
		CHECK_EQ(f.d[s].max_out_send, win);
		CHECK_EQ(f.d[s].max_out_recv, win);
		CHECK_EQ(r->s[s].ncqe, 2 * total);
		CHECK_EQ(qp->st.msgs_sent, total);
		CHECK_EQ(qp->st.msgs_recv, total);
		CHECK_EQ(qp->st.send_errors + qp->st.msgs_partial, 0);
		CHECK_EQ(rig_ctr(r, s, SDR_CTR_sqe_busy) + rig_ctr(r, s, SDR_CTR_seq_guard), 0);
		CHECK_EQ(rig_ctr(r, s, SDR_CTR_cq_lost), 0);
		if (loss > 0)
			CHECK(r->ws[s].lost[RIG_K_DATA] > 0);
		check_conservation(r, s);
	}
	if (loss > 0)
		check_recovered(r);
	flow_fini(&f);
	finish_rig(r);
}

static void t_window(void)
{
	window(0);
}
static void t_window_loss(void)
{
	window(0.02);
}

/* Everything at once, with 1000 outstanding each way and messages of up to
 * 64 KiB: 5 % loss of data and control, 5 % duplicates, up to 300 us of
 * reordering. */
static void t_chaos(void)
{
	const uint32_t total = 1500, win = 1000, stride = MAXMSG;
	struct rig *r = mk(NULL, 2 * (size_t)win * stride);
	struct flow f;

	for (int s = 0; s < 2; s++) {
		r->link[s].loss_data = r->link[s].loss_ctrl = 0.05;
		r->link[s].dup = 0.05;
		r->link[s].jitter_ns = 300 * US;
		dir_init(&f.d[s], total, win, stride, 0);
		for (uint32_t n = 0; n < total; n++)
			f.d[s].len[n] = (uint32_t)(t_below(4) ? t_range(1, 8 * MTU)
							      : t_range(1, MAXMSG));
	}
	flow_start(r, &f);
	CHECK_EQ(rig_run_until(r, flow_done, &f, 60000 * MS), 0);
	rig_run_for(r, 5 * MS);
	for (int s = 0; s < 2; s++) {
		const struct sdr_qp *qp = r->s[s].qp;
		check_dir(&f.d[s], s);
		CHECK_EQ(r->s[s].ncqe, 2 * total);
		CHECK_EQ(qp->st.msgs_sent, total);
		CHECK_EQ(qp->st.msgs_recv, total);
		CHECK_EQ(SDR_QP_CTR(qp, sr, send_timeouts) + SDR_QP_CTR(qp, sr, recv_timeouts), 0);
		CHECK(r->ws[s].reordered > 0);
		CHECK(r->ws[s].dup[RIG_K_DATA] > 0);
		check_conservation(r, s);
	}
	check_recovered(r);
	flow_fini(&f);
	finish_rig(r);
}

/* ---------------- ABORT: a send longer than the posted receive ---------------- */

struct msgsize_filter {
	int drop_abort;       /* drop the next ABORT */
	uint32_t seq_data[8]; /* data frames seen per message (A -> B) */
};

static enum rig_verdict msgsize_filter(struct rig *r, const struct rig_frame_info *fi, void *arg)
{
	struct msgsize_filter *m = arg;

	if (fi->from == RIG_A && fi->kind == RIG_K_DATA && fi->seq < 8)
		m->seq_data[fi->seq]++;
	(void)r;
	if (m->drop_abort && fi->kind == RIG_K_ABORT) {
		m->drop_abort = 0;
		return RIG_DROP;
	}
	return RIG_PASS;
}

static int have_both(struct rig *r, void *arg)
{
	const size_t *want = arg;
	return r->s[RIG_A].ncqe >= want[0] && r->s[RIG_B].ncqe >= want[1];
}

static const struct sdr_cqe *cqe_of(const struct rig *r, int side, uint64_t wr_id)
{
	for (size_t i = 0; i < r->s[side].ncqe; i++)
		if (r->s[side].cqe[i].e.wr_id == wr_id)
			return &r->s[side].cqe[i].e;
	return NULL;
}

/* A send longer than the receive it is matched with completes -EMSGSIZE
 * at the sender, and the receive -EMSGSIZE through an ABORT, without a
 * data packet; the next pair works. A lost ABORT is repeated when the
 * receiver re-sends its CTS. */
static void t_msgsize(void)
{
	struct rig *r = mk(NULL, 1u << 20);
	struct msgsize_filter mf = {0};
	static const uint32_t rlen[4] = {2000, 4096, 100, 8192};
	static const uint32_t slen[4] = {5000, 3000, 9000, 8192};
	const struct sdr_cqe *e;
	size_t want[2];
	uint64_t t0;

	r->filter = msgsize_filter;
	r->filter_arg = &mf;
	for (uint32_t i = 0; i < 4; i++)
		rig_pattern(r->s[RIG_A].mem + i * 65536, slen[i], 500 + i);
	memset(r->s[RIG_B].mem, 0xA5, 4 * 65536);

	/* 0: too long, 1: fits */
	for (uint32_t i = 0; i < 2; i++) {
		rig_recv(r, RIG_B, i * 65536, rlen[i], WR_RECV | i);
		rig_send(r, RIG_A, i * 65536, slen[i], 0x1234567u + i, WR_SEND | i);
	}
	want[0] = want[1] = 2;
	CHECK_EQ(rig_run_until(r, have_both, want, 1000 * MS), 0);
	rig_run_for(r, 2 * MS);
	CHECK((e = cqe_of(r, RIG_A, WR_SEND | 0)) && e->status == -EMSGSIZE &&
	      e->length == slen[0]);
	CHECK((e = cqe_of(r, RIG_B, WR_RECV | 0)) && e->status == -EMSGSIZE && e->length == 0 &&
	      e->seq == 0 && e->flags == (SDR_CQE_F_PARTIAL | SDR_CQE_F_IMM_PARTIAL));
	CHECK((e = cqe_of(r, RIG_A, WR_SEND | 1)) && e->status == 0);
	CHECK((e = cqe_of(r, RIG_B, WR_RECV | 1)) && e->status == 0 && e->length == slen[1] &&
	      e->imm == 0x1234567u + 1 && e->flags == SDR_CQE_F_IMM);
	CHECK_EQ(rig_pattern_diff(r->s[RIG_B].mem + 65536, slen[1], 501), 0);
	CHECK_EQ(mf.seq_data[0], 0);
	CHECK_EQ(mf.seq_data[1], frames_of(slen[1], 0x1234567u + 1));
	CHECK_EQ(r->ws[RIG_A].sent[RIG_K_ABORT], 1);
	CHECK_EQ(r->s[RIG_A].ncqe, 2);
	CHECK_EQ(r->s[RIG_B].ncqe, 2);

	/* 2: too long, its ABORT lost: the receiver's CTS re-send (every
	 * --cts-resend-ms, 20) makes the sender say it again; 3: fits */
	mf.drop_abort = 1;
	t0 = r->now;
	for (uint32_t i = 2; i < 4; i++) {
		rig_recv(r, RIG_B, i * 65536, rlen[i], WR_RECV | i);
		rig_send(r, RIG_A, i * 65536, slen[i], 0x1234567u + i, WR_SEND | i);
	}
	want[0] = want[1] = 4;
	CHECK_EQ(rig_run_until(r, have_both, want, 1000 * MS), 0);
	rig_run_for(r, 2 * MS);
	CHECK((e = cqe_of(r, RIG_A, WR_SEND | 2)) && e->status == -EMSGSIZE);
	CHECK((e = cqe_of(r, RIG_B, WR_RECV | 2)) && e->status == -EMSGSIZE && e->seq == 2);
	/* "a lost ABORT costs one CTS period" */
	CHECK(r->s[RIG_B].cqe[2].tsc - t0 <= 21 * MS && r->s[RIG_B].cqe[3].tsc - t0 <= 21 * MS);
	CHECK((e = cqe_of(r, RIG_A, WR_SEND | 3)) && e->status == 0);
	CHECK((e = cqe_of(r, RIG_B, WR_RECV | 3)) && e->status == 0 && e->length == slen[3]);
	CHECK_EQ(rig_pattern_diff(r->s[RIG_B].mem + 3 * 65536, slen[3], 503), 0);
	CHECK_EQ(mf.seq_data[2], 0);
	CHECK_EQ(r->ws[RIG_A].sent[RIG_K_ABORT], 3);
	CHECK_EQ(r->ws[RIG_A].lost[RIG_K_ABORT], 1);
	CHECK_EQ(r->s[RIG_A].qp->st.aborts_tx, 3);
	CHECK_EQ(r->s[RIG_B].qp->st.aborts_rx, 2);
	CHECK(rig_ctr(r, RIG_A, SDR_CTR_cts_stale) >= 1);
	CHECK_EQ(rig_ctr(r, RIG_B, SDR_CTR_abort_stale) + rig_ctr(r, RIG_B, SDR_CTR_abort_bad), 0);
	CHECK_EQ(r->s[RIG_A].qp->st.send_errors, 2);
	CHECK_EQ(r->s[RIG_A].qp->st.msgs_sent, 2);
	CHECK_EQ(r->s[RIG_B].qp->st.msgs_partial, 2);
	CHECK_EQ(r->s[RIG_B].qp->st.msgs_recv, 2);
	CHECK_EQ(r->s[RIG_A].ncqe, 4);
	CHECK_EQ(r->s[RIG_B].ncqe, 4);
	/* nothing was written into the aborted receives' buffers */
	for (uint32_t i = 0; i < 4; i += 2)
		for (uint32_t b = 0; b < rlen[i]; b++)
			if (r->s[RIG_B].mem[i * 65536 + b] != 0xA5) {
				CHECK(!"aborted receive buffer written");
				break;
			}
	for (int s = 0; s < 2; s++)
		check_conservation(r, s);
	finish_rig(r);
}

/* ---------------- a late packet 4096 messages on ---------------- */

struct hold_one {
	uint32_t seq;
	int held;
};

static enum rig_verdict hold_first_pkt0(struct rig *r, const struct rig_frame_info *fi, void *arg)
{
	struct hold_one *h = arg;

	(void)r;
	if (!h->held && fi->from == RIG_A && fi->kind == RIG_K_DATA && fi->seq == h->seq &&
	    fi->pkt_off == 0) {
		h->held = 1;
		return RIG_HOLD;
	}
	return RIG_PASS;
}

static int sent_recvd(struct rig *r, void *arg)
{
	const struct dir *d = arg;
	(void)r;
	return d->sends_done == d->send_limit && d->recvs_done == d->send_limit;
}

/* The first transmission of packet 0 of message 5 is held on the wire
 * (SR retransmits it, EC decodes it) until message 5 + 1024 x G (same slot
 * 5, same generation; 4101 with the default G = 4 generations) is posted
 * and has seen nothing: then it arrives and is dropped as stale_seq,
 * without touching the posted buffer or re-acknowledging anything; that
 * message then lands normally. */
static void t_stale(void)
{
	const uint32_t win = 1000, stride = 3000;
	struct rig *r = mk(NULL, 2 * (size_t)win * stride);
	const uint32_t total = SDR_MAX_MSGS * sdr_g.cfg.generations + 6;
	struct hold_one h = {.seq = 5};
	struct flow f;
	struct dir *d = &f.d[RIG_A];
	const uint8_t *buf;
	uint64_t reacks, stale;
	size_t ncqe;

	dir_init(&f.d[RIG_A], total, win, stride, 0);
	dir_init(&f.d[RIG_B], 0, 1, stride, 0);
	sizes_fill(d, stride);
	d->send_limit = total - 1; /* the last message waits */
	r->filter = hold_first_pkt0;
	r->filter_arg = &h;
	flow_start(r, &f);
	CHECK_EQ(rig_run_until(r, sent_recvd, d, 30000 * MS), 0);
	rig_run_for(r, 2 * MS);
	CHECK_EQ(h.held, 1);
	CHECK_EQ(rig_held_count(r), 1);
	CHECK_EQ(d->next_recv, total); /* its receive is posted */
	CHECK_EQ(d->recvs_done, total - 1);
	CHECK_EQ(rig_ctr(r, RIG_B, SDR_CTR_stale_seq), 0);

	reacks = SDR_QP_CTR(r->s[RIG_B].qp, sr, reacks);
	stale = rig_ctr(r, RIG_B, SDR_CTR_stale_seq);
	ncqe = r->s[RIG_B].ncqe;
	rig_release_held(r, 0);
	rig_run_for(r, 2 * MS);
	CHECK_EQ(rig_ctr(r, RIG_B, SDR_CTR_stale_seq), stale + 1);
	CHECK_EQ(SDR_QP_CTR(r->s[RIG_B].qp, sr, reacks), reacks);
	CHECK_EQ(r->s[RIG_B].ncqe, ncqe);
	buf = r->s[RIG_B].mem + d->base_recv + (uint64_t)d->recv_reg[total - 1] * stride;
	for (uint32_t i = 0; i < stride; i++)
		if (buf[i] != 0xA5) {
			CHECK(!"the late packet was placed");
			break;
		}

	d->send_limit = total;
	pump(r, &f, RIG_A);
	CHECK_EQ(rig_run_until(r, sent_recvd, d, 1000 * MS), 0);
	rig_run_for(r, 2 * MS);
	check_dir(d, RIG_A);
	CHECK_EQ(rig_ctr(r, RIG_B, SDR_CTR_stale_seq), 1);
	if (sc->rel == SDR_REL_SR)
		CHECK(SDR_QP_CTR(r->s[RIG_A].qp, sr, retx_pkts) >= 1);
	if (is_ec())
		CHECK(SDR_QP_CTR(r->s[RIG_B].qp, ec, decodes) >= 1);
	check_conservation(r, RIG_B);
	flow_fini(&f);
	finish_rig(r);
}

/* ---------------- forged control packets ---------------- */

/* A control frame as side @p from's QP would send it, with @p key. */
static size_t forge(const struct rig *r, int from, uint8_t *buf, size_t mlen, uint64_t key)
{
	const struct sdr_qp *qp = r->s[from].qp;
	size_t flen = sdr_build_ctrl_hdr(buf, &qp->l2, qp->remote.qpn, 0, mlen);

	sdr_ctrl_key_put(buf + SDR_CTRL_HDR_LEN, key);
	sdr_pkt_finish(buf, flen, sdr_g.cfg.icrc);
	return flen;
}

/* (EC would decode the message from its parity alone) */
static enum rig_verdict hold_data(struct rig *r, const struct rig_frame_info *fi, void *arg)
{
	(void)r, (void)arg;
	return (fi->kind == RIG_K_DATA || fi->kind == RIG_K_PARITY) && fi->from == RIG_A ? RIG_HOLD
											 : RIG_PASS;
}

/* Control packets of every type, well-formed and addressed right but
 * without the receiving QP's key, are dropped before anything looks at
 * them (ctrl_bad_key): a forged FULL does not complete a send, a forged
 * ABORT does not complete a receive, a forged CTS does not open one. The
 * same CTS with the key is taken. */
static void t_badkey(void)
{
	struct rig *r = mk(NULL, 1u << 20);
	const struct sdr_qp *qa = r->s[RIG_A].qp, *qb = r->s[RIG_B].qp;
	uint64_t key_a = qb->remote.ctrl_key, key_b = qa->remote.ctrl_key;
	uint8_t buf[2048];
	size_t n, ncqe[2], held;
	uint64_t cts_rx;
	struct count_cqes cc;

	rig_pattern(r->s[RIG_A].mem, 4096, 900);
	memset(r->s[RIG_B].mem, 0xA5, 65536);
	rig_recv(r, RIG_B, 0, 4096, WR_RECV | 0);
	rig_send(r, RIG_A, 0, 4096, 0xABCDEF01u, WR_SEND | 0);
	r->filter = hold_data; /* send 0 stays outstanding, receive 0 open */
	r->filter_arg = NULL;
	rig_run_for(r, 5 * MS);
	held = rig_held_count(r);
	CHECK_EQ(held, frames_of(4096, 0xABCDEF01u) +
			       (is_ec() ? parity_frames_of(4096, sc->code, sc->k, sc->m) : 0));
	CHECK_EQ(r->s[RIG_B].ncqe, 0);
	CHECK_EQ(r->s[RIG_A].ncqe, sc->rel == SDR_REL_NONE ? 1u : 0u);
	ncqe[0] = r->s[RIG_A].ncqe;
	ncqe[1] = r->s[RIG_B].ncqe;
	cts_rx = qa->st.cts_rx;

	/* to A: FULL for send 0, a CTS, a NACK */
	{
		struct sdr_ack_entry e = {.seq = 0, .cum = 1, .flags = SDR_ACK_F_FULL};
		n = sdr_ctrl_ack_encode(buf + SDR_CTRL_HDR_LEN, qb->qpn_base, &e, 1);
		rig_inject(r, RIG_A, buf, forge(r, RIG_B, buf, n, key_a ^ 1));
	}
	{
		struct sdr_cts_entry e = {.seq = 1, .length = MAXMSG};
		n = sdr_ctrl_cts_encode(buf + SDR_CTRL_HDR_LEN, qb->qpn_base, &e, 1);
		rig_inject(r, RIG_A, buf, forge(r, RIG_B, buf, n, key_a ^ (1ull << 63)));
	}
	{
		struct sdr_nack_entry e = {.seq = 0, .sub = 0, .k = 4, .missing = 1};
		n = sdr_ctrl_nack_encode(buf + SDR_CTRL_HDR_LEN, qb->qpn_base, &e, 1);
		rig_inject(r, RIG_A, buf, forge(r, RIG_B, buf, n, 0));
	}
	/* to B: ABORT of receive 0, a PARITY of message 0, an ACK */
	{
		struct sdr_abort_entry e = {.seq = 0, .status = -EMSGSIZE, .length = 99999};
		n = sdr_ctrl_abort_encode(buf + SDR_CTRL_HDR_LEN, qa->qpn_base, &e, 1);
		rig_inject(r, RIG_B, buf, forge(r, RIG_A, buf, n, key_b + 1));
	}
	{
		struct sdr_parity_hdr h = {.seq = 0,
					   .msg_len = 4096,
					   .imm = 1,
					   .code = SDR_EC_RS,
					   .k = 4,
					   .m = 2,
					   .npkt = 4,
					   .clen = 4096};
		n = sdr_ctrl_parity_encode(buf + SDR_CTRL_HDR_LEN, qa->qpn_base, &h);
		memset(buf + SDR_CTRL_HDR_LEN + n, 0x77, MTU);
		rig_inject(r, RIG_B, buf, forge(r, RIG_A, buf, n + MTU, ~key_b));
	}
	{
		struct sdr_ack_entry e = {.seq = 0, .cum = 0};
		n = sdr_ctrl_ack_encode(buf + SDR_CTRL_HDR_LEN, qa->qpn_base, &e, 1);
		rig_inject(r, RIG_B, buf, forge(r, RIG_A, buf, n, key_b ^ 0x100));
	}
	rig_run_for(r, 5 * MS);
	CHECK_EQ(rig_ctr(r, RIG_A, SDR_CTR_ctrl_bad_key), 3);
	CHECK_EQ(rig_ctr(r, RIG_B, SDR_CTR_ctrl_bad_key), 3);
	CHECK_EQ(r->s[RIG_A].ncqe, ncqe[0]);
	CHECK_EQ(r->s[RIG_B].ncqe, ncqe[1]);
	CHECK_EQ(qa->st.cts_rx, cts_rx);
	CHECK_EQ(SDR_QP_CTR(qa, sr, acks_rx) + SDR_QP_CTR(qa, ec, nacks_rx) +
			 SDR_QP_CTR(qb, ec, par_pkts_rx),
		 0);
	CHECK_EQ(SDR_QP_CTR(qb, sr, acks_rx), 0);
	CHECK_EQ(rig_ctr(r, RIG_A, SDR_CTR_ctrl_unknown) + rig_ctr(r, RIG_B, SDR_CTR_ctrl_unknown),
		 0);

	/* the same CTS with A's key is taken */
	{
		struct sdr_cts_entry e = {.seq = 1, .length = 100};
		n = sdr_ctrl_cts_encode(buf + SDR_CTRL_HDR_LEN, qb->qpn_base, &e, 1);
		rig_inject(r, RIG_A, buf, forge(r, RIG_B, buf, n, key_a));
	}
	rig_run_for(r, 1 * MS);
	CHECK_EQ(qa->st.cts_rx, cts_rx + 1);
	CHECK_EQ(rig_ctr(r, RIG_A, SDR_CTR_ctrl_bad_key), 3);

	/* the held data arrives: message 0 completes as if nothing happened */
	r->filter = NULL;
	for (size_t i = 0; i < held; i++)
		rig_release_held(r, i);
	cc.side = RIG_B;
	cc.want = 1;
	CHECK_EQ(rig_run_until(r, have_cqes, &cc, 100 * MS), 0);
	cc.side = RIG_A;
	CHECK_EQ(rig_run_until(r, have_cqes, &cc, 100 * MS), 0);
	{
		const struct sdr_cqe *e;
		CHECK((e = cqe_of(r, RIG_A, WR_SEND | 0)) && e->status == 0);
		CHECK((e = cqe_of(r, RIG_B, WR_RECV | 0)) && e->status == 0 && e->length == 4096 &&
		      e->imm == 0xABCDEF01u && e->flags == SDR_CQE_F_IMM);
		CHECK_EQ(rig_pattern_diff(r->s[RIG_B].mem, 4096, 900), 0);
	}
	finish_rig(r);
}

/* ---------------- the receiver's host completes early ---------------- */

struct hold_from {
	uint32_t pkt;  /* A's data packets from this offset on are held (and parity) */
	uint32_t data; /* data frames held, retransmissions included */
};

static enum rig_verdict hold_tail(struct rig *r, const struct rig_frame_info *fi, void *arg)
{
	struct hold_from *h = arg;

	(void)r;
	if (fi->from != RIG_A)
		return RIG_PASS;
	if (fi->kind == RIG_K_DATA && fi->pkt_off >= h->pkt) {
		h->data++;
		return RIG_HOLD;
	}
	return fi->kind == RIG_K_PARITY ? RIG_HOLD : RIG_PASS;
}

/* Half of a 64 KiB message arrives (the rest, and any parity, is held);
 * the receiver's host completes the receive (sdr_recv_complete): PARTIAL,
 * length the bytes that arrived, the immediate whole. The sender hears
 * CLOSED and completes -EIO (sr_send_closed); under NONE it had completed
 * on the wire. The held packets then arrive late and are dropped; the next
 * message works. */
static void t_closed(void)
{
	struct rig *r = mk(NULL, 1u << 20);
	struct hold_from h = {.pkt = 32};
	const struct sdr_qp *qa = r->s[RIG_A].qp, *qb = r->s[RIG_B].qp;
	const struct sdr_cqe *e;
	size_t want[2], held;

	rig_pattern(r->s[RIG_A].mem, 2 * MAXMSG, 31);
	memset(r->s[RIG_B].mem, 0xA5, 2 * MAXMSG);
	r->filter = hold_tail;
	r->filter_arg = &h;
	rig_recv(r, RIG_B, 0, MAXMSG, WR_RECV | 0);
	rig_send(r, RIG_A, 0, MAXMSG, 0x5EED1234u, WR_SEND | 0);
	rig_run_for(r, 5 * MS);
	CHECK_EQ(r->s[RIG_B].ncqe, 0);
	CHECK_EQ(qb->st.rx_pkts, 32);
	rig_recv_complete(r, RIG_B, 0);
	want[0] = want[1] = 1;
	CHECK_EQ(rig_run_until(r, have_both, want, 1000 * MS), 0);
	rig_run_for(r, 2 * MS);
	CHECK((e = cqe_of(r, RIG_B, WR_RECV | 0)) && e->status == 0 && e->length == 32 * MTU &&
	      e->flags == (SDR_CQE_F_PARTIAL | SDR_CQE_F_IMM) && e->imm == 0x5EED1234u);
	CHECK_EQ(rig_pattern_diff(r->s[RIG_B].mem, 32 * MTU, 31), 0);
	CHECK_EQ(qb->st.msgs_partial, 1);
	if (has_sr()) {
		CHECK((e = cqe_of(r, RIG_A, WR_SEND | 0)) && e->status == -EIO);
		CHECK_EQ(SDR_QP_CTR(qa, sr, send_closed), 1);
		CHECK_EQ(qa->st.send_errors, 1);
	} else {
		CHECK((e = cqe_of(r, RIG_A, WR_SEND | 0)) && e->status == 0);
	}
	/* the rest arrives after the completion: dropped, nothing written */
	r->filter = NULL;
	held = rig_held_count(r);
	for (size_t i = 0; i < held; i++)
		rig_release_held(r, i);
	rig_run_for(r, 5 * MS);
	CHECK(h.data >= 32);
	CHECK_EQ(rig_ctr(r, RIG_B, SDR_CTR_late_pkt), h.data);
	CHECK_EQ(qb->st.rx_pkts, 32);
	for (uint32_t i = 32 * MTU; i < MAXMSG; i++)
		if (r->s[RIG_B].mem[i] != 0xA5) {
			CHECK(!"a packet of the completed receive was placed");
			break;
		}
	/* the next message lands whole */
	rig_recv(r, RIG_B, MAXMSG, MAXMSG, WR_RECV | 1);
	rig_send(r, RIG_A, MAXMSG, 5000, 7, WR_SEND | 1);
	want[0] = want[1] = 2;
	CHECK_EQ(rig_run_until(r, have_both, want, 1000 * MS), 0);
	CHECK((e = cqe_of(r, RIG_A, WR_SEND | 1)) && e->status == 0);
	CHECK((e = cqe_of(r, RIG_B, WR_RECV | 1)) && e->status == 0 && e->length == 5000 &&
	      e->flags == SDR_CQE_F_IMM);
	CHECK(!memcmp(r->s[RIG_B].mem + MAXMSG, r->s[RIG_A].mem + MAXMSG, 5000));
	finish_rig(r);
}

/* ---------------- the sender dies mid-message ---------------- */

/* A dies after the first half of a 64 KiB message: B's receive, which saw
 * packets, completes -ETIMEDOUT one global timeout (checked every
 * --cts-resend-ms) after its last packet, PARTIAL with what arrived;
 * B's other receive, which saw nothing, waits; B's QP stays connected. */
static void t_deadsender(void)
{
	const uint64_t T = 500 * MS;
	struct rig *r = mk("--global-timeout-ms 500", 1u << 20);
	struct hold_from h = {.pkt = 32};
	const struct sdr_qp *qb = r->s[RIG_B].qp;
	struct count_cqes cc = {.side = RIG_B, .want = 1};
	const struct rig_cqe *x;
	uint64_t last;

	rig_pattern(r->s[RIG_A].mem, MAXMSG, 32);
	r->filter = hold_tail;
	r->filter_arg = &h;
	rig_recv(r, RIG_B, 0, MAXMSG, WR_RECV | 0);
	rig_recv(r, RIG_B, MAXMSG, MAXMSG, WR_RECV | 1);
	rig_send(r, RIG_A, 0, MAXMSG, 1, WR_SEND | 0);
	rig_run_for(r, 2 * MS);
	CHECK_EQ(qb->st.rx_pkts, 32);
	last = qb->rq.slot[0].last_tsc;
	r->s[RIG_A].stopped = 1;
	r->link[RIG_A].cut = r->link[RIG_B].cut = 1;
	CHECK_EQ(rig_run_until(r, have_cqes, &cc, 10 * T), 0);
	rig_run_for(r, 100 * MS);
	CHECK_EQ(r->s[RIG_B].ncqe, 1);
	x = &r->s[RIG_B].cqe[0];
	CHECK_EQ(x->e.wr_id, WR_RECV | 0);
	CHECK_EQ(x->e.status, -ETIMEDOUT);
	CHECK_EQ(x->e.length, 32 * MTU);
	CHECK_EQ(x->e.flags, SDR_CQE_F_PARTIAL | SDR_CQE_F_IMM);
	CHECK(x->tsc > last + T && x->tsc <= last + T + 21 * MS);
	CHECK_EQ(rig_pattern_diff(r->s[RIG_B].mem, 32 * MTU, 32), 0);
	CHECK_EQ(SDR_QP_CTR(qb, sr, recv_timeouts), 1);
	CHECK_EQ(SDR_QP_CTR(qb, sr, send_timeouts), 0);
	CHECK_EQ(qb->state, SDR_QPS_CONNECTED);
	CHECK_EQ(qb->rq.slot[1].state, SDR_RS_POSTED);
	finish_rig(r);
}

/* ---------------- regressions of firmware bugs these tests found ---------------- */

/*
 * Regression: the CTS re-send starved under mbuf shortage.
 * sdr_recv_cts_resend() (recv.c) walked the slots from 0 and sent 64
 * entries per control packet; when sdr_txq_alloc() failed (tx_nombuf) the
 * packet's entries were dropped and the walk went on. With more idle posted
 * receives than 64 x the free mbufs, the same highest slots lost their CTS
 * in every period. (Now it walks oldest receive first and stops at the
 * first missing mbuf.) Here (1000 receives outstanding and
 * reposted at once, 12 mbufs per side, no loss) receive 1000's first CTS
 * is dropped for want of an mbuf, its slot is never re-sent, the sender
 * (in order) stalls behind send 1000, and both QPs end in the global
 * timeout (-ETIMEDOUT) after about 3 s. The same transfer passes with 16
 * mbufs or more.
 */
static void t_bug_cts_nombuf(void)
{
	mk_mbufs = 12;
	window(0);
}

struct fto_drop {
	uint32_t seq, data_left;
};

/* Drops the first transmission of message seq's data packets, and the first
 * packet of each of its parity chunks. */
static enum rig_verdict fto_filter(struct rig *r, const struct rig_frame_info *fi, void *arg)
{
	struct fto_drop *d = arg;

	(void)r;
	if (fi->from != RIG_A || fi->seq != d->seq)
		return RIG_PASS;
	if (fi->kind == RIG_K_DATA && fi->dma_len && d->data_left) {
		d->data_left--;
		return RIG_DROP;
	}
	if (fi->kind == RIG_K_PARITY && fi->ppkt == 0)
		return RIG_DROP;
	return RIG_PASS;
}

/*
 * Regression: the EC fallback timeout was postponed by about the TSC's
 * absolute value when a receive had parity (or immediate-only) packets but
 * no data packet. still_arriving() (ec_recv.c) took the inter-arrival time
 * as (last_tsc - first_tsc) / (got - 1) with got counting parity packets,
 * but first_tsc is set only by a placed data packet (sdr_msgtab.c): it was
 * 0, so the FTO was pushed back by (expected - got) x last_tsc / (got - 1)
 * cycles (ec_fto_postponed) and no NACK was ever sent; on a DPU whose TSC
 * counts since boot, that is days. Only the SR backstop (RTO + hold)
 * recovered such a message. (Now a receive without a data packet has no
 * pace to wait for.) Here a
 * 2-packet message loses both data packets and the first packet of each
 * parity chunk (nothing can be decoded); the receiver should NACK within
 * its FTO (well under a millisecond here) and the message complete within
 * 50 ms; with SR's minimum RTO at 2 s, it takes more than 2 s.
 */
static void t_bug_fto_parity(void)
{
	struct rig *r = mk("--sr-min-rto-us 2000000", 1u << 20);
	struct fto_drop d = {.seq = 0, .data_left = 2};
	const uint32_t len = 2 * MTU - 26;
	const struct sdr_qp *qa = r->s[RIG_A].qp, *qb = r->s[RIG_B].qp;
	size_t want[2] = {1, 1};
	const struct sdr_cqe *e;
	uint64_t t0;

	r->filter = fto_filter;
	r->filter_arg = &d;
	rig_pattern(r->s[RIG_A].mem, len, 4242);
	rig_recv(r, RIG_B, 0, CHUNK, WR_RECV | 0);
	rig_send(r, RIG_A, 0, len, 0x600DF00Du, WR_SEND | 0);
	t0 = r->now;
	CHECK_EQ(rig_run_until(r, have_both, want, 10000 * MS), 0);
	printf("fto: message complete after %.3f ms; receiver: %llu FTO expiries, %llu postponed,"
	       " %llu NACKs\n",
	       (double)(r->s[RIG_B].cqe[0].tsc - t0) / 1e6,
	       (unsigned long long)SDR_QP_CTR(qb, ec, fto_expiries),
	       (unsigned long long)SDR_QP_CTR(qb, ec, fto_postponed),
	       (unsigned long long)SDR_QP_CTR(qb, ec, nacks_tx));
	CHECK((e = cqe_of(r, RIG_A, WR_SEND | 0)) && e->status == 0);
	CHECK((e = cqe_of(r, RIG_B, WR_RECV | 0)) && e->status == 0 && e->length == len);
	CHECK_EQ(rig_pattern_diff(r->s[RIG_B].mem, len, 4242), 0);
	CHECK_EQ(d.data_left, 0);
	CHECK_EQ(SDR_QP_CTR(qb, ec, decodes), 0);
	CHECK(SDR_QP_CTR(qb, ec, nacks_tx) >= 1);
	CHECK(SDR_QP_CTR(qa, ec, nack_retx_units) >= 1);
	CHECK(r->s[RIG_B].cqe[0].tsc - t0 < 50 * MS);
	finish_rig(r);
}

/* ---------------- early drop of parity nobody needs ---------------- */

#define EARLY_MSGS 8u

/* Drops the first transmission of data chunk 1 (message n even) or 9 (n
 * odd) of every message A sends: index 1 of submessage 0 or 2. */
static enum rig_verdict early_filter(struct rig *r, const struct rig_frame_info *fi, void *arg)
{
	uint8_t *dropped = arg; /* [EARLY_MSGS][PPC] */
	uint32_t c = fi->seq % 2 ? 9 : 1;

	(void)r;
	if (fi->from != RIG_A || fi->kind != RIG_K_DATA || fi->seq >= EARLY_MSGS ||
	    fi->pkt_off / PPC != c || dropped[fi->seq * PPC + fi->pkt_off % PPC]++)
		return RIG_PASS;
	return RIG_DROP;
}

/* A parity packet of message @p seq (submessage 0, chunk 0, packet 0) as A
 * would send it, with @p key, its ICRC flipped when @p bad_icrc. */
static size_t early_parity(const struct rig *r, uint8_t *buf, uint32_t seq, uint64_t key,
			   int bad_icrc)
{
	const struct sdr_qp *qa = r->s[RIG_A].qp;
	struct sdr_parity_hdr h = {.seq = seq,
				   .msg_len = MAXMSG,
				   .imm = imm_of(RIG_A, seq),
				   .code = sc->code,
				   .k = sc->k,
				   .m = sc->m,
				   .npkt = PPC,
				   .clen = CHUNK};
	size_t n = sdr_ctrl_parity_encode(buf + SDR_CTRL_HDR_LEN, qa->qpn_base, &h), flen;

	memset(buf + SDR_CTRL_HDR_LEN + n, 0x77, MTU);
	flen = forge(r, RIG_A, buf, n + MTU, key);
	if (bad_icrc)
		buf[flen - 1] ^= 0x40;
	return flen;
}

/*
 * Parity of a submessage or receive that is complete is dropped on its
 * header, before its ICRC (ec_parity_early); parity that is needed is not.
 * Eight 64 KiB messages (4 submessages of k = 4 chunks, 8 parity packets
 * each) lose data chunk 1 of submessage 0 or 2 on the first pass: exact
 * counts per message. Then frames injected at B: for a completed receive,
 * with the key, the ICRC right or wrong: early; without the key: refused
 * (ctrl_bad_key, or bad_icrc when the ICRC is wrong too), never early; for
 * a posted receive that has nothing yet, with the key and a wrong ICRC:
 * bad_icrc, and the receive learnt nothing from it.
 */
static void t_early(void)
{
	struct rig *r = mk(NULL, 2 * EARLY_MSGS * MAXMSG + MAXMSG);
	const struct sdr_qp *qa = r->s[RIG_A].qp, *qb = r->s[RIG_B].qp;
	uint64_t key = qa->remote.ctrl_key, early = 0, acc = 0, unused = 0;
	uint8_t dropped[EARLY_MSGS * PPC] = {0}, buf[2048];
	const uint32_t ppar = sc->m * PPC; /* parity packets of a submessage */
	const uint64_t off8 = 2 * EARLY_MSGS * MAXMSG;
	const struct sdr_rslot *s8 = &qb->rq.slot[EARLY_MSGS];
	struct count_cqes cc;
	struct flow f;

	r->filter = early_filter;
	r->filter_arg = dropped;
	dir_init(&f.d[RIG_A], EARLY_MSGS, EARLY_MSGS, MAXMSG, 0);
	dir_init(&f.d[RIG_B], 0, 1, MAXMSG, 0);
	for (uint32_t n = 0; n < EARLY_MSGS; n++)
		f.d[RIG_A].len[n] = MAXMSG;
	flow_start(r, &f);
	CHECK_EQ(rig_run_until(r, flow_done, &f, 1000 * MS), 0);
	rig_run_for(r, 2 * MS);
	check_dir(&f.d[RIG_A], RIG_A);
	for (uint32_t n = 0; n < EARLY_MSGS; n++) {
		/* the lost chunk's submessage keeps the parity that repairs it:
		 * RS one chunk (then the rest is early), XOR the lost chunk's
		 * group's chunk, the second of two (both kept) */
		uint32_t need = sc->code == SDR_EC_RS ? PPC : 2 * PPC;
		/* the message's first parity packet takes the full path: it is
		 * unused when submessage 0 is whole (n odd) */
		unused += n % 2;
		acc += need;
		early += 4 * ppar - need - n % 2;
	}
	printf("early: accepted %llu, unused %llu, early %llu parity packets\n",
	       (unsigned long long)SDR_QP_CTR(qb, ec, par_pkts_rx),
	       (unsigned long long)rig_ctr(r, RIG_B, SDR_CTR_ec_parity_unused),
	       (unsigned long long)rig_ctr(r, RIG_B, SDR_CTR_ec_parity_early));
	CHECK_EQ(SDR_QP_CTR(qa, ec, par_pkts_tx), EARLY_MSGS * 4 * ppar);
	CHECK_EQ(r->ws[RIG_A].lost[RIG_K_DATA], EARLY_MSGS * PPC);
	CHECK_EQ(SDR_QP_CTR(qb, ec, par_pkts_rx), acc);
	CHECK_EQ(rig_ctr(r, RIG_B, SDR_CTR_ec_parity_unused), unused);
	CHECK_EQ(rig_ctr(r, RIG_B, SDR_CTR_ec_parity_early), early);
	CHECK_EQ(rig_ctr(r, RIG_B, SDR_CTR_ec_parity_late), 0);
	CHECK_EQ(SDR_QP_CTR(qb, ec, decodes), EARLY_MSGS);
	CHECK_EQ(SDR_QP_CTR(qb, ec, chunks_recovered), EARLY_MSGS);
	CHECK_EQ(SDR_QP_CTR(qa, sr, retx_pkts) + SDR_QP_CTR(qb, ec, nacks_tx), 0);
	check_conservation(r, RIG_B);

	/* injected: receive 0 is complete */
	rig_inject(r, RIG_B, buf, early_parity(r, buf, 0, key, 0));
	rig_inject(r, RIG_B, buf, early_parity(r, buf, 0, key, 1));
	rig_inject(r, RIG_B, buf, early_parity(r, buf, 0, key ^ 1, 0));
	rig_inject(r, RIG_B, buf, early_parity(r, buf, 0, key ^ 1, 1));
	/* receive 8 is posted and has nothing yet: a parity packet would give
	 * it its length and immediate, but not with a wrong ICRC */
	memset(r->s[RIG_B].mem + off8, 0xA5, MAXMSG);
	rig_recv(r, RIG_B, off8, MAXMSG, WR_RECV | EARLY_MSGS);
	rig_run_for(r, 1 * MS);
	rig_inject(r, RIG_B, buf, early_parity(r, buf, EARLY_MSGS, key, 1));
	rig_run_for(r, 1 * MS);
	CHECK_EQ(rig_ctr(r, RIG_B, SDR_CTR_ec_parity_early), early + 2);
	CHECK_EQ(rig_ctr(r, RIG_B, SDR_CTR_ctrl_bad_key), 1);
	CHECK_EQ(rig_ctr(r, RIG_B, SDR_CTR_bad_icrc), 2);
	CHECK_EQ(SDR_QP_CTR(qb, ec, par_pkts_rx), acc);
	CHECK_EQ(rig_ctr(r, RIG_B, SDR_CTR_ec_parity_unused) +
			 rig_ctr(r, RIG_B, SDR_CTR_ec_parity_late),
		 unused);
	CHECK(s8->seq == EARLY_MSGS && s8->state == SDR_RS_POSTED && !s8->last_known &&
	      !s8->imm_mask && !s8->pkts_got && !s8->fto_due);
	CHECK_EQ(r->s[RIG_B].ncqe, EARLY_MSGS);
	/* and message 8 arrives whole */
	rig_pattern(r->s[RIG_A].mem, MAXMSG, 4343);
	rig_send(r, RIG_A, 0, MAXMSG, 0x5EED5EEDu, WR_SEND | EARLY_MSGS);
	cc.side = RIG_B;
	cc.want = EARLY_MSGS + 1;
	CHECK_EQ(rig_run_until(r, have_cqes, &cc, 100 * MS), 0);
	CHECK(r->s[RIG_B].cqe[EARLY_MSGS].e.status == 0 &&
	      r->s[RIG_B].cqe[EARLY_MSGS].e.imm == 0x5EED5EEDu);
	CHECK_EQ(rig_pattern_diff(r->s[RIG_B].mem + off8, MAXMSG, 4343), 0);
	cc.side = RIG_A;
	CHECK_EQ(rig_run_until(r, have_cqes, &cc, 100 * MS), 0);
	flow_fini(&f);
	finish_rig(r);
}

/*
 * Regression: on a loss-free link the EC receiver NACKed chunks that were
 * still arriving (on the ring rig, unpaced, thousands of needless
 * retransmissions a second). worker.c reads the clock once per loop for
 * the timers and again for each RX burst, so a receive that got a packet
 * in this very loop has last_tsc > the timers' now; still_arriving()
 * (ec_recv.c) took that for "not arriving", and a receive whose packets
 * so far came in one burst (last_tsc == first_tsc) had no pace to wait
 * for: both went to the NACK. Here: unpaced, an FTO RTT of 1 us (the FTO
 * expires while messages are arriving), 1000 messages of 64 KiB, frames
 * received 100 ns after the loop's clock read; nothing may be NACKed or
 * retransmitted.
 */
static void t_bug_fto_now(void)
{
	struct rig *r;
	struct flow f;

	mk_rx_lag = 100;
	r = mk("--port-rate 0 --ec-beta 0", 2 * 64 * MAXMSG);
	/* (a 10 us RTT and 64 messages in flight: the stream has no gap, and
	 * the FTO scans, every 200 us, find receives half-way) */
	r->link[RIG_A].delay_ns = r->link[RIG_B].delay_ns = 5 * US;
	dir_init(&f.d[RIG_A], 1000, 64, MAXMSG, 0);
	dir_init(&f.d[RIG_B], 0, 1, MAXMSG, 0);
	for (uint32_t n = 0; n < 1000; n++)
		f.d[RIG_A].len[n] = MAXMSG;
	flow_start(r, &f);
	CHECK_EQ(rig_run_until(r, flow_done, &f, 1000 * MS), 0);
	rig_run_for(r, 2 * MS);
	check_dir(&f.d[RIG_A], RIG_A);
	printf("fto_now: %llu FTO expiries, %llu postponed, %llu NACKs, %llu packets "
	       "retransmitted\n",
	       (unsigned long long)SDR_QP_CTR(r->s[RIG_B].qp, ec, fto_expiries),
	       (unsigned long long)SDR_QP_CTR(r->s[RIG_B].qp, ec, fto_postponed),
	       (unsigned long long)SDR_QP_CTR(r->s[RIG_B].qp, ec, nacks_tx),
	       (unsigned long long)SDR_QP_CTR(r->s[RIG_A].qp, sr, retx_pkts));
	CHECK(SDR_QP_CTR(r->s[RIG_B].qp, ec, fto_postponed) >
	      0); /* the FTO did expire while arriving */
	CHECK_EQ(SDR_QP_CTR(r->s[RIG_B].qp, ec, nacks_tx), 0);
	CHECK_EQ(SDR_QP_CTR(r->s[RIG_A].qp, sr, retx_pkts), 0);
	CHECK_EQ(rig_ctr(r, RIG_B, SDR_CTR_dup_pkt) + rig_ctr(r, RIG_B, SDR_CTR_late_pkt), 0);
	check_conservation(r, RIG_B);
	flow_fini(&f);
	finish_rig(r);
}

/*
 * Regression: a send's first pass could put far more than its budget of
 * SDR_BURST frames on the wire in one loop pass. When what goes before a
 * send's next packet (EC parity) used the last of the budget and reported
 * itself done, the next packet went out anyway and the budget, decremented
 * below 0, wrapped around: the rest of the window left at once, past what
 * a TX queue holds (the integration test rel_window lost thousands of
 * frames as tx_full behind a 4096-frame net_ring and then recovered them at
 * one probe per RTO, for minutes). It takes a message whose parity ends
 * exactly at the end of the budget with packets still to send after it
 * (immediate-only packets, or the next submessage's data). Here 600 1-byte
 * messages each way, all posted at once, every third without immediate
 * (3 frames: data, 2 parity) and the others with (10: data, 2 parity, 7
 * immediate-only), which moves the parity's end across the budget's: no
 * loop pass may send more than SDR_BURST data and parity frames of a QP.
 */
static void t_bug_budget(void)
{
	const uint32_t total = 600;
	struct rig *r = mk(NULL, 2 * (size_t)total * MTU);
	uint64_t most = 0, prev[2] = {0, 0};
	struct flow f;

	for (int s = 0; s < 2; s++) {
		dir_init(&f.d[s], total, total, MTU, 0);
		for (uint32_t n = 0; n < total; n++)
			f.d[s].len[n] = 1;
	}
	flow_start(r, &f);
	while (!flow_done(r, &f) && r->now < 10000 * MS) {
		rig_iter(r);
		for (int s = 0; s < 2; s++) {
			uint64_t sent = r->ws[s].sent[RIG_K_DATA] + r->ws[s].sent[RIG_K_PARITY];
			if (sent - prev[s] > most)
				most = sent - prev[s];
			prev[s] = sent;
		}
	}
	rig_run_for(r, 5 * MS);
	printf("budget: at most %llu data and parity frames of a QP in one loop pass\n",
	       (unsigned long long)most);
	CHECK(most <= SDR_BURST);
	for (int s = 0; s < 2; s++) {
		check_dir(&f.d[s], s);
		CHECK_EQ(r->ws[s].lost[RIG_K_DATA] + r->ws[s].lost[RIG_K_PARITY], 0);
		CHECK_EQ(SDR_QP_CTR(r->s[s].qp, sr, retx_pkts), 0);
		check_conservation(r, s);
	}
	flow_fini(&f);
	finish_rig(r);
}

/* ---------------- the codes an AUTO receiver accepts ---------------- */

/* Parity of receive 0 in code (code, k, m), with the key, as A would send it. */
static size_t code_parity(const struct rig *r, uint8_t *buf, uint8_t code, uint8_t k, uint8_t m)
{
	const struct sdr_qp *qa = r->s[RIG_A].qp;
	struct sdr_parity_hdr h = {.seq = 0,
				   .msg_len = MAXMSG,
				   .imm = 5,
				   .code = code,
				   .k = k,
				   .m = m,
				   .npkt = PPC,
				   .clen = CHUNK};
	size_t n = sdr_ctrl_parity_encode(buf + SDR_CTRL_HDR_LEN, qa->qpn_base, &h);

	memset(buf + SDR_CTRL_HDR_LEN + n, 0x5C, MTU);
	return forge(r, RIG_A, buf, n + MTU, qa->remote.ctrl_key);
}

/* An AUTO receiver accepts parity of its own candidates only (the codec
 * handles are made for them when the QP is created; nothing is made on
 * the worker): RS(20, 5) and XOR(16, 4) fit its buffers (k at least the
 * smallest k, m at most the largest m of the default candidates) but are
 * none of them; RS(16, 4) is one. */
static void t_codes(void)
{
	struct rig *r = mk(NULL, 1u << 20);
	const struct sdr_qp *qb = r->s[RIG_B].qp;
	uint8_t buf[2048];
	struct count_cqes cc = {.side = RIG_B, .want = 1};

	rig_recv(r, RIG_B, 0, MAXMSG, WR_RECV | 0);
	rig_run_for(r, 1 * MS);
	rig_inject(r, RIG_B, buf, code_parity(r, buf, SDR_EC_RS, 20, 5));
	rig_inject(r, RIG_B, buf, code_parity(r, buf, SDR_EC_XOR, 16, 4));
	rig_run_for(r, 1 * MS);
	CHECK_EQ(rig_ctr(r, RIG_B, SDR_CTR_ec_param_mismatch), 2);
	CHECK_EQ(SDR_QP_CTR(qb, ec, par_pkts_rx), 0);
	rig_inject(r, RIG_B, buf, code_parity(r, buf, SDR_EC_RS, 16, 4));
	rig_run_for(r, 1 * MS);
	CHECK_EQ(rig_ctr(r, RIG_B, SDR_CTR_ec_param_mismatch), 2);
	CHECK_EQ(SDR_QP_CTR(qb, ec, par_pkts_rx), 1);
	rig_recv_complete(r, RIG_B, 0);
	CHECK_EQ(rig_run_until(r, have_cqes, &cc, 10 * MS), 0);
	finish_rig(r);
}

/* ---------------- main ---------------- */

struct scenario {
	const char *name;
	void (*fn)(void);
	unsigned schemes; /* bit i: schemes[i] */
};

#define ALL 0x1Fu
#define RELIABLE 0x1Eu

static const struct scenario scenarios[] = {
	{"clean", t_clean, ALL},
	{"loss", t_loss, RELIABLE},
	{"reorder", t_reorder, ALL},
	{"dup", t_dup, ALL},
	{"deadpeer", t_deadpeer, RELIABLE},
	{"outage", t_outage, RELIABLE},
	{"window", t_window, RELIABLE},
	{"window_loss", t_window_loss, RELIABLE},
	{"chaos", t_chaos, RELIABLE},
	{"msgsize", t_msgsize, ALL},
	{"stale", t_stale, RELIABLE},
	{"badkey", t_badkey, ALL},
	{"closed", t_closed, ALL},
	{"deadsender", t_deadsender, RELIABLE},
	{"early", t_early, 0x0Cu},
	/* regressions of firmware bugs these tests found */
	{"bug_cts_nombuf", t_bug_cts_nombuf, RELIABLE},
	{"bug_fto_parity", t_bug_fto_parity, 0x0Cu},
	{"bug_fto_now", t_bug_fto_now, 0x0Cu},
	{"codes", t_codes, 0x10u},
	{"bug_budget", t_bug_budget, 0x0Cu},
};

/* Default seed of a test: its name's FNV-1a hash. */
static uint64_t seed_of(const char *name)
{
	uint64_t h = 0xCBF29CE484222325ull;

	while (*name)
		h = (h ^ (uint8_t)*name++) * 0x100000001B3ull;
	return h;
}

int main(int argc, char **argv)
{
	char name[64];

	if (argc != 2) {
		fprintf(stderr, "usage: test_engines SCENARIO_SCHEME | list\n");
		return 2;
	}
	for (size_t i = 0; i < RTE_DIM(scenarios); i++)
		for (size_t j = 0; j < RTE_DIM(schemes); j++) {
			if (!(scenarios[i].schemes & (1u << j)))
				continue;
			snprintf(name, sizeof(name), "%s_%s", scenarios[i].name, schemes[j].name);
			if (!strcmp(argv[1], "list")) {
				printf("%s\n", name);
				continue;
			}
			if (strcmp(argv[1], name))
				continue;
			t_seed(name, seed_of(name));
			sc = &schemes[j];
			scenarios[i].fn();
			return t_finish(name);
		}
	if (!strcmp(argv[1], "list"))
		return 0;
	fprintf(stderr, "test_engines: no test %s\n", argv[1]);
	return 2;
}
