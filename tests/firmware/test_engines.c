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
 * daemon's default candidates.
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
#include "rel.h"
#include "test_util.h"

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
	{"none", SDR_REL_NONE, 0, 0, 0},
	{"sr", SDR_REL_SR, 0, 0, 0},
	{"ec_rs", SDR_REL_EC, SDR_EC_RS, 4, 2},
	{"ec_xor", SDR_REL_EC, SDR_EC_XOR, 4, 2},
	{"auto", SDR_REL_AUTO, 0, 0, 0},
};

static const struct scheme *sc; /* the scheme under test */
static unsigned mk_mbufs;       /* mbufs per side of the next rig (0: the rig's default) */

static int is_ec(void) { return sc->rel == SDR_REL_EC; }
static int has_sr(void) { return sc->rel != SDR_REL_NONE; }

static struct rig *mk(const char *extra, size_t mem)
{
	char args[512];
	struct rig_opts o = {.args = args, .mem_bytes = mem, .seed = t_rnd()};
	struct rig *r;

	snprintf(args, sizeof(args), "%s %s", BASE_ARGS, extra ? extra : "");
	o.mbufs = mk_mbufs;
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

static uint32_t npkts_of(uint32_t len) { return (len + MTU - 1) / MTU; }
static uint32_t nchunks_of(uint32_t len) { return (len + CHUNK - 1) / CHUNK; }
/* data frames of a message: its packets, and immediate-only ones up to 8 */
static uint32_t frames_of(uint32_t len)
{
	return npkts_of(len) < 8 ? 8 : npkts_of(len);
}
/* parity frames of a message under code (k, m) */
static uint32_t parity_frames_of(uint32_t len, uint32_t k, uint32_t m)
{
	uint32_t nch = nchunks_of(len), n = 0;

	for (uint32_t s = 0; s * k < nch; s++) {
		uint32_t first = s * k * CHUNK, clen = len - first < CHUNK ? len - first : CHUNK;
		n += m * ((clen + MTU - 1) / MTU);
	}
	return n;
}

/* ---------------- flows: messages from one side to the other ---------------- */

#define WR_SEND (1ull << 40)
#define WR_RECV (2ull << 40)

struct dir {
	uint32_t total, window, stride;
	uint32_t *len;           /* [total] */
	uint32_t next_send, next_recv;
	uint32_t send_limit, recv_limit; /* post numbers below these only */
	uint32_t max_out_send, max_out_recv; /* most outstanding at once */
	uint32_t sends_done, recvs_done;
	uint8_t *send_seen, *recv_seen;
	uint32_t *send_reg, *recv_reg;   /* region of each message */
	uint32_t *free_send, *free_recv; /* free region stacks */
	uint32_t nfree_send, nfree_recv;
	uint64_t base_send, base_recv;   /* offsets in the sender's / receiver's memory */
	int32_t want_status;             /* of every completion */
	/* mismatches (each must stay 0) */
	uint32_t bad_status, bad_len, bad_seq, bad_imm, bad_flags, bad_data, bad_canary, twice;
};

struct flow {
	struct dir d[2]; /* [sending side] */
	int repost;      /* post the next operations from the completions */
};

static uint64_t tag_of(int from, uint32_t n) { return ((uint64_t)(from + 1) << 32) | n; }
static uint32_t imm_of(int from, uint32_t n)
{
	return (uint32_t)(tag_of(from, n) * 2654435761u) ^ 0xC0FFEE11u;
}

static void dir_init(struct dir *d, uint32_t total, uint32_t window, uint32_t stride,
		     uint64_t base)
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
	printf("  %c->%c: %u/%u sends, %u/%u receives completed\n", "AB"[from],
		"AB"[!from], d->sends_done, d->total, d->recvs_done, d->total);
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
	SDR_CTR_no_recv, SDR_CTR_stale_gen, SDR_CTR_stale_seq, SDR_CTR_early_seq,
	SDR_CTR_late_pkt, SDR_CTR_bad_rkey, SDR_CTR_bad_va, SDR_CTR_bad_len,
	SDR_CTR_imm_mismatch, SDR_CTR_dup_pkt, SDR_CTR_dup_imm, SDR_CTR_bad_dma_len,
};
/* ... and a parity packet. */
static const enum sdr_ctr parity_drops[] = {
	SDR_CTR_ec_parity_bad, SDR_CTR_ec_parity_not_ec, SDR_CTR_ec_param_mismatch,
	SDR_CTR_ec_parity_unknown, SDR_CTR_ec_parity_late, SDR_CTR_ec_parity_sub,
	SDR_CTR_ec_parity_len, SDR_CTR_ec_parity_dup, SDR_CTR_ec_parity_unused,
	SDR_CTR_ec_pool_exhausted, SDR_CTR_ec_nomem,
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
			       rig_ctr(r, to, SDR_CTR_ctrl_bad_key) + rig_ctr(r, to, SDR_CTR_ctrl_bad);

	CHECK_EQ(frame_drops, 0);
	CHECK_EQ(ws->delivered[RIG_K_DATA],
		 qp->st.rx_pkts + sum_ctrs(r, to, data_drops, RTE_DIM(data_drops)));
	CHECK_EQ(ws->delivered[RIG_K_PARITY],
		 qp->st.ec_par_pkts_rx + sum_ctrs(r, to, parity_drops, RTE_DIM(parity_drops)));
	CHECK_EQ(ws->delivered[RIG_K_CTS], qp->st.cts_rx);
	CHECK_EQ(ws->delivered[RIG_K_ACK], qp->st.sr_acks_rx + rig_ctr(r, to, SDR_CTR_ctrl_unknown));
	CHECK_EQ(ws->delivered[RIG_K_NACK], qp->st.ec_nacks_rx);
	CHECK_EQ(ws->sent[RIG_K_OTHER], 0);
	/* the frames a side sent are what its counters say it sent */
	CHECK_EQ(r->ws[to].sent[RIG_K_DATA], qp->st.tx_pkts);
	CHECK_EQ(r->ws[to].sent[RIG_K_PARITY], qp->st.ec_par_pkts_tx);
	CHECK_EQ(r->ws[to].sent[RIG_K_CTS], qp->st.cts_tx);
	CHECK_EQ(r->ws[to].sent[RIG_K_ACK], qp->st.sr_acks_tx);
	CHECK_EQ(r->ws[to].sent[RIG_K_NACK], qp->st.ec_nacks_tx);
}

/* ---------------- transfers both ways ---------------- */

/* Sizes that hit every boundary of the geometry, then random ones. */
static const uint32_t edge_sizes[] = {
	1, 2, 100, MTU - 1, MTU, MTU + 1, 3 * MTU, CHUNK - 1, CHUNK, CHUNK + 1, 7 * MTU,
	8 * MTU - 1, 8 * MTU, 8 * MTU + 1, 4 * CHUNK - 1, 4 * CHUNK, 4 * CHUNK + 1,
	5 * CHUNK + 100, 40000, MAXMSG - 1, MAXMSG,
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
			small += npkts_of(d->len[n]) < 8;
			frames += frames_of(d->len[n]);
			bytes += d->len[n];
			chunks += nchunks_of(d->len[n]);
			units += nchunks_of(d->len[n]) + (npkts_of(d->len[n]) < 8);
			if (is_ec())
				parity += parity_frames_of(d->len[n], sc->k, sc->m);
		}
		CHECK_EQ(tx->st.tx_pkts, frames);
		CHECK_EQ(tx->st.tx_bytes, bytes);
		CHECK_EQ(tx->st.msgs_sent, d->total);
		CHECK_EQ(tx->st.send_errors, 0);
		CHECK_EQ(rx->st.msgs_recv, d->total);
		CHECK_EQ(rx->st.msgs_partial, 0);
		CHECK_EQ(rx->st.chunks_done, chunks);
		CHECK_EQ(r->ws[from].lost[RIG_K_DATA] + r->ws[from].lost[RIG_K_CTS], 0);
		CHECK_EQ(tx->st.sr_retx_pkts, 0);
		CHECK_EQ(tx->st.sr_rto_expiries, 0);
		CHECK_EQ(rx->st.ec_decodes, 0);
		CHECK_EQ(rx->st.ec_nacks_tx, 0);
		CHECK_EQ(rx->st.sr_recv_timeouts, 0);
		if (has_sr())
			CHECK_EQ(tx->st.sr_units_acked, units);
		if (sc->rel == SDR_REL_NONE || sc->rel == SDR_REL_SR) {
			/* every frame placed, nothing dropped */
			CHECK_EQ(rx->st.rx_pkts, frames);
			CHECK_EQ(rx->st.rx_bytes, bytes);
			CHECK_EQ(sum_ctrs(r, !from, data_drops, RTE_DIM(data_drops)), 0);
			CHECK_EQ(tx->st.ec_par_pkts_tx, 0);
		}
		if (sc->rel == SDR_REL_SR) {
			CHECK_EQ(rig_ctr(r, from, SDR_CTR_ack_stale), 0);
			CHECK_EQ(rx->st.sr_reacks, 0);
		}
		if (is_ec()) {
			/* A submessage's parity follows its data: it finds the
			 * submessage complete (unused), or the receive complete
			 * (late). A message of fewer than 8 packets is completed by
			 * its first parity packet (length and immediate), before its
			 * immediate-only packets, which then arrive late. */
			uint64_t rx_pkts = 0, late = 0, unused = 0, plate = 0, prx = 0, subs = 0;
			for (uint32_t n = 0; n < d->total; n++) {
				uint32_t len = d->len[n], np = npkts_of(len);
				uint32_t nsub = (nchunks_of(len) + sc->k - 1) / sc->k;
				subs += nsub;
				uint32_t last = parity_frames_of(len, sc->k, sc->m) -
						(nsub > 1 ? parity_frames_of((nsub - 1) * sc->k * CHUNK,
									     sc->k, sc->m)
							  : 0);
				rx_pkts += np;
				if (np < 8) {
					late += 8 - np;
					prx += 1;
					plate += last - 1;
				} else {
					unused += parity_frames_of(len, sc->k, sc->m) - last;
					plate += last;
				}
			}
			CHECK_EQ(tx->st.ec_par_pkts_tx, parity);
			CHECK_EQ(tx->st.ec_subs_encoded, subs);
			CHECK_EQ(rx->st.rx_pkts, rx_pkts);
			CHECK_EQ(rig_ctr(r, !from, SDR_CTR_late_pkt), late);
			CHECK_EQ(rx->st.ec_par_pkts_rx, prx);
			CHECK_EQ(rig_ctr(r, !from, SDR_CTR_ec_parity_unused), unused);
			CHECK_EQ(rig_ctr(r, !from, SDR_CTR_ec_parity_late), plate);
			/* The immediate-only packets of a message of fewer than 8
			 * packets come after its completion (late_pkt above), and
			 * the receiver answers the first of them as if the sender
			 * had missed the final ACK: one re-ACK per such message. */
			CHECK_EQ(rx->st.sr_reacks, small);
			/* A FULL goes out twice, one ACK period apart, and so does
			 * a re-ACK: every entry after the first finds the send done. */
			CHECK_EQ(rig_ctr(r, from, SDR_CTR_ack_stale), d->total + 2 * rx->st.sr_reacks);
		}
		if (sc->rel == SDR_REL_AUTO) {
			CHECK_EQ(tx->st.auto_msgs_sr + tx->st.auto_msgs_ec, d->total);
			CHECK_EQ(rig_ctr(r, from, SDR_CTR_ack_stale), d->total + 2 * rx->st.sr_reacks);
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
			CHECK(tx->st.sr_retx_pkts > 0);
			CHECK(tx->st.sr_rto_expiries > 0);
		} else if (is_ec()) {
			CHECK(rx->st.ec_decodes > 0);
			CHECK(rx->st.ec_chunks_recovered > 0);
		} else {
			CHECK(tx->st.sr_retx_pkts + rx->st.ec_decodes > 0);
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
		CHECK_EQ(r->s[s].qp->st.sr_send_timeouts + r->s[s].qp->st.sr_recv_timeouts, 0);
		if (sc->rel == SDR_REL_AUTO)
			CHECK_EQ(r->s[s].qp->st.auto_msgs_sr + r->s[s].qp->st.auto_msgs_ec, 60);
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
			CHECK_EQ(qp->st.sr_rto_expiries, 0);
			CHECK_EQ(qp->st.sr_retx_pkts, 0);
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
static void t_deadpeer(void)
{
	const uint64_t T = 500 * MS; /* --global-timeout-ms */
	const uint32_t big = 4 * CHUNK, nbig = 50;
	struct rig *r = mk("--global-timeout-ms 500", 8u << 20);
	struct sdr_qp *qa = r->s[RIG_A].qp;
	struct count_cqes cc = {.side = RIG_A};
	struct sdr_rel_view v;
	uint64_t t_cut, retx0, bound, units = 0, t, rto, ok = 0;
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
	CHECK(qa->st.sr_rtt_samples > 0);

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
	memset(&v, 0, sizeof(v));
	qa->ops->view(qa, &v);
	retx0 = qa->st.sr_retx_units;
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
	CHECK_EQ(qa->st.sr_send_timeouts, 1);
	CHECK_EQ(qa->st.send_errors, nbig - 5);
	CHECK_EQ(qa->st.msgs_sent, 10 + 5);
	/* nothing progressed after the cut; the error came one timeout later */
	CHECK(qa->progress_tsc <= t_cut);
	t = r->s[RIG_A].cqe[c1].tsc;
	CHECK(t > qa->progress_tsc + T);
	CHECK(t <= qa->progress_tsc + T + 100 * US);
	/* retransmissions after the cut */
	bound = units;
	rto = v.rto;
	for (uint64_t x = rto; x < T; rto = rto * 2 > 1000 * MS ? 1000 * MS : rto * 2, x += rto)
		bound++;
	printf("dead peer: rto %.3f ms at the cut, %llu units outstanding, %llu retransmitted"
	       " after the cut (bound %llu), %llu probe defers, %llu backoffs\n",
	       (double)v.rto / 1e6, (unsigned long long)units,
	       (unsigned long long)(qa->st.sr_retx_units - retx0), (unsigned long long)bound,
	       (unsigned long long)qa->st.sr_probe_defers,
	       (unsigned long long)qa->st.sr_rto_backoffs);
	CHECK(qa->st.sr_retx_units - retx0 > 0);
	CHECK(qa->st.sr_retx_units - retx0 <= bound);
	CHECK(qa->st.sr_probe_defers > 0);
	CHECK(qa->st.sr_rto_backoffs > 0);

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

static void t_window(void) { window(0); }
static void t_window_loss(void) { window(0.02); }

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
			f.d[s].len[n] = (uint32_t)(t_below(4) ? t_range(1, 8 * MTU) : t_range(1, MAXMSG));
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
		CHECK_EQ(qp->st.sr_send_timeouts + qp->st.sr_recv_timeouts, 0);
		CHECK(r->ws[s].reordered > 0);
		CHECK(r->ws[s].dup[RIG_K_DATA] > 0);
		check_conservation(r, s);
	}
	check_recovered(r);
	flow_fini(&f);
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
	{"window", t_window, RELIABLE},
	{"window_loss", t_window_loss, RELIABLE},
	{"chaos", t_chaos, RELIABLE},
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
