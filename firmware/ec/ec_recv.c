/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Erasure-coding engine, receiver side (layer ec; ec.h): parity packets
 * into the per-QP pool, decoding into the host buffer, the fallback timeout
 * and its NACKs (hooks of the reliable-QP core, ec_int.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "ec.h"
#include "ec_desc.h"
#include "ec_int.h"
#include "sr_desc.h"
#include "txq.h"

#define EC_SCAN_US 200 /* FTO list scanned at most this often */
#define EC_NACK_MAX_PER_MSG 256

/* RTT used by the FTO: --ec-rtt-us; else the QP's smoothed RTT when it
 * sends too; else the smallest CTS-to-first-packet time seen (a receive's
 * CTS travels to the sender and its first packet back: at least one RTT);
 * else the initial RTO. */
static uint64_t ec_rtt(const struct sdr_eceng *ec)
{
	if (sdr_ec_cfg.rtt_us)
		return sdr_us_cycles(sdr_ec_cfg.rtt_us);
	if (ec->sr->rtt.samples)
		return ec->sr->rtt.srtt;
	if (ec->rtt_min)
		return ec->rtt_min;
	return sdr_ms_cycles(sdr_sr_cfg.init_rto_ms);
}

/* ---------------- receiver ---------------- */

static void rx_release(struct sdr_eceng *ec, uint32_t slot)
{
	struct sdr_eceng_rmsg *r;

	if (!(r = ec->r[slot]))
		return;
	for (uint32_t i = 0; i < r->g.nsub * r->g.m; i++)
		sdr_ecfw_pool_put(&ec->pool, r->par[i]);
	ec->r[slot] = NULL; /* (its memory is the slot's, reserved at init) */
}

void sdr_eceng_fini(struct sdr_eceng *ec)
{
	sdr_eceng_reset(ec);
	sdr_ecfw_pool_fini(&ec->pool);
	free(ec->rmsg_region);
	ec->rmsg_region = NULL;
	free(ec->txpar);
	free(ec->zero);
	free(ec->shortc);
	ec->txpar = ec->zero = ec->shortc = NULL;
	for (unsigned i = 0; i < ec->ncd; i++)
		sdr_ec_free(ec->cd[i].cd);
	ec->ncd = 0;
}

void sdr_eceng_reset(void *ctx)
{
	struct sdr_eceng *ec = ctx;

	for (uint32_t i = 0; i < SDR_MAX_MSGS; i++)
		rx_release(ec, i);
	ec->n_armed = 0;
}

void sdr_eceng_recv_posted(void *ctx, uint32_t slot, uint64_t now)
{
	struct sdr_eceng *ec = ctx;

	ec->rcv[slot] = (struct sdr_eceng_recv){.post_tsc = now};
}

uint32_t sdr_eceng_recv_done(void *ctx, uint32_t slot)
{
	struct sdr_eceng *ec = ctx;

	rx_release(ec, slot);
	return ec->rcv[slot].lost;
}

static void release_sub(struct sdr_eceng *ec, struct sdr_eceng_rmsg *r, uint32_t s)
{
	r->sub_done[s] = 1;
	r->sub_par[s] = 0;
	for (uint32_t j = 0; j < r->g.m; j++) {
		sdr_ecfw_pool_put(&ec->pool, r->par[s * r->g.m + j]);
		r->par[s * r->g.m + j] = NULL;
	}
}

/* Bitmap (bit i = data chunk s*k + i) of the real chunks of submessage s
 * not yet in. */
static uint64_t sub_missing(const struct sdr_qp *qp, uint32_t slot, uint32_t first, uint32_t n)
{
	const uint64_t *bm = sdr_rq_chunk_priv(&qp->rq, slot);
	uint64_t miss = 0;

	for (uint32_t i = 0; i < n; i++)
		if (!sdr_sr_bit(bm, first + i))
			miss |= 1ull << i;
	return miss;
}

/* Report chunk/complete flags of a fill to the SR receiver and host. */
static void note_flags(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_sr *sr, uint32_t slot,
		       int rc, uint64_t now)
{
	if (rc < 0)
		return;
	if (rc & SDR_PLACE_CHUNK)
		qp->st.chunks_done++;
	if ((rc & SDR_PLACE_CHUNK) && !(rc & SDR_PLACE_COMPLETE))
		sdr_sr_rx_note(w, qp, sr, slot, now);
}

/* Decode submessage @p s of @p slot if it lacks data and can be repaired.
 * @return flags of the fills (SDR_PLACE_COMPLETE when the receive is now
 * complete: the caller completes it). */
static int try_sub(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_eceng *ec, uint32_t slot,
		   struct sdr_eceng_rmsg *r, uint32_t s, uint64_t now)
{
	struct sdr_rslot *rs = &qp->rq.slot[slot];
	const struct sdr_stripe *st = &qp->rq.stripe; /* (a chunk lies in one stripe) */
	const struct sdr_ecfw_geom *g = &r->g;
	uint8_t *chunks[SDR_EC_K_MAX + SDR_EC_M_MAX];
	uint8_t present[SDR_EC_K_MAX + SDR_EC_M_MAX];
	uint32_t first = s * g->k, nreal = sdr_ecfw_sub_nreal(g, s), clen = sdr_ecfw_sub_clen(g, s);
	uint32_t npar = 0, short_c = UINT32_MAX, short_len = 0;
	uint64_t miss;
	struct sdr_ec *cd;
	int rc, flags = 0;

	if (r->sub_done[s] || rs->state != SDR_RS_POSTED)
		return 0;
	miss = sub_missing(qp, slot, first, nreal);
	if (!miss) {
		release_sub(ec, r, s);
		return 0;
	}
	for (uint32_t j = 0; j < g->m; j++) {
		struct sdr_ecfw_buf *b = r->par[s * g->m + j];
		present[g->k + j] = b && b->got == b->npkt;
		chunks[g->k + j] = b ? b->data : NULL;
		npar += present[g->k + j];
	}
	/* any k of k + m: the cheap test before looking closer */
	if ((uint32_t)__builtin_popcountll(miss) > npar)
		return 0;
	for (uint32_t i = 0; i < g->k; i++) {
		uint32_t c = first + i;
		if (i >= nreal) {
			present[i] = 1;
			chunks[i] = ec->zero;
			continue;
		}
		present[i] = !((miss >> i) & 1);
		if (sdr_ecfw_chunk_len(g, c) < clen) {
			short_c = c;
			short_len = sdr_ecfw_chunk_len(g, c);
			if (present[i]) {
				memcpy(ec->shortc,
				       rs->dst + sdr_stripe_real(st, (size_t)c * g->cbytes),
				       short_len);
				memset(ec->shortc + short_len, 0, clen - short_len);
			}
			chunks[i] = ec->shortc;
		} else {
			/* (c + 1) * C <= msg_len <= posted length: inside the buffer */
			chunks[i] = rs->dst + sdr_stripe_real(st, (size_t)c * g->cbytes);
		}
	}
	cd = sdr_eceng_codec_of(ec, r->code, g->k, g->m);
	if (!cd) { /* cannot happen: the parity's code was one of the QP's */
		w->ctr[SDR_CTR_ec_nomem]++;
		return 0;
	}
	if (sdr_ec_can_decode(cd, present) < 0)
		return 0; /* XOR: a group lost two; wait for more or the NACK */
	rc = sdr_ec_decode(cd, chunks, present, clen);
	if (rc < 0) {
		SDR_QP_CTR(qp, ec, decode_failures)++;
		return 0;
	}
	SDR_QP_CTR(qp, ec, decodes)++;
	if (short_c != UINT32_MAX && ((miss >> (short_c - first)) & 1))
		memcpy(rs->dst + sdr_stripe_real(st, (size_t)short_c * g->cbytes), ec->shortc,
		       short_len);
	release_sub(ec, r, s);
	for (uint32_t i = 0; i < nreal; i++) {
		int f;
		if (!((miss >> i) & 1))
			continue;
		f = sdr_rq_fill_chunk(&qp->rq, slot, first + i, now);
		if (f < 0)
			continue;
		SDR_QP_CTR(qp, ec, chunks_recovered)++;
		if (!ec->rcv[slot].fto_fired) /* (after it, the FTO counted it as missing) */
			ec->rcv[slot].lost++;
		note_flags(w, qp, ec->sr, slot, f & ~SDR_PLACE_COMPLETE, now);
		flags |= f;
	}
	return flags;
}

/* The CTS-to-first-packet time of a receive bounds the RTT from above. */
static void note_rtt_min(struct sdr_eceng *ec, uint32_t slot, uint64_t now)
{
	uint64_t post = ec->rcv[slot].post_tsc;

	if (post && now > post && (!ec->rtt_min || now - post < ec->rtt_min))
		ec->rtt_min = now - post;
}

/* Parity chunks the sender of a receive of @p nch chunks sends: by the
 * message's code once a parity packet named it, else by the QP's. */
static uint64_t expected_parity(const struct sdr_eceng *ec, const struct sdr_eceng_rmsg *r,
				uint32_t nch)
{
	return r ? sdr_ec_msg_parity(r->code, r->k, r->m, nch)
		 : sdr_ec_msg_parity(ec->code, ec->k, ec->m, nch);
}

/* FTO of a receive: armed at its first packet (data or parity); on AUTO
 * QPs at its first parity packet (a message without parity is SR). */
static void arm_fto(struct sdr_qp *qp, struct sdr_eceng *ec, uint32_t slot, uint64_t now)
{
	struct sdr_rslot *s = &qp->rq.slot[slot];
	const struct sdr_eceng_rmsg *r = ec->r[slot];
	uint32_t nch = sdr_rslot_nchunks(&qp->rq, s);

	if (ec->rcv[slot].fto_due)
		return;
	note_rtt_min(ec, slot, now);
	ec->rcv[slot].fto_due = now + sdr_ecfw_fto(nch, expected_parity(ec, r, nch),
						   sdr_eceng_chunk_t_inj(qp), ec_rtt(ec),
						   sdr_ec_cfg.beta_milli);
	if (ec->n_armed < SDR_MAX_MSGS)
		ec->armed[ec->n_armed++] = s->seq;
}

void sdr_eceng_data_placed(void *ctx, struct sdr_worker *w, struct sdr_qp *qp, uint32_t slot,
			   uint32_t pkt_off, int rc, uint64_t now)
{
	struct sdr_eceng *ec = ctx;
	struct sdr_rslot *s = &qp->rq.slot[slot];
	struct sdr_eceng_rmsg *r = ec->r[slot];
	int flags = 0;

	if (rc & SDR_PLACE_COMPLETE)
		return; /* done: the caller completes it (and releases our state) */
	if (ec->per_message && (!r || r->seq != s->seq)) {
		/* code per message, no parity seen (yet): SR so far */
		if (s->pkts_got == 1)
			note_rtt_min(ec, slot, now);
		return;
	}
	arm_fto(qp, ec, slot, now);
	if (!r || !(rc & SDR_PLACE_CHUNK) || r->seq != s->seq)
		return;
	/* the packet's chunk, and the last chunk (an SE packet may complete it);
	 * a submessage without parity cannot be decoded (its state needs no
	 * update either: the bitmap says when it is complete) */
	if (pkt_off < s->posted_pkts && r->sub_par[pkt_off / qp->ppc / r->k])
		flags |= try_sub(w, qp, ec, slot, r, pkt_off / qp->ppc / r->k, now);
	if (s->state == SDR_RS_POSTED && r->g.nsub && r->sub_par[r->g.nsub - 1])
		flags |= try_sub(w, qp, ec, slot, r, r->g.nsub - 1, now);
	if (flags & SDR_PLACE_COMPLETE)
		sdr_sr_qp_recv_done(w, qp, slot, 0, now);
}

/* The parity header's code is one the QP accepts: one of its codes (EC:
 * the QP's code; AUTO: a candidate, chosen per message by the sender; the
 * message's first parity packet fixes it, later ones that disagree are
 * dropped). */
static int code_ok(const struct sdr_eceng *ec, const struct sdr_parity_hdr *h)
{
	return sdr_eceng_codec_of(ec, h->code, h->k, h->m) != NULL;
}

/*
 * The early drop (before the frame's ICRC is checked; rx.c checked the QP,
 * its owner, state, peer and key): exactly the parity packets that the full
 * path below would drop as ec_parity_late (their receive is complete) or,
 * once the message's EC state exists, as ec_parity_unused (their
 * submessage is complete). Two things the full path would also do are left
 * out: the receive's quiet timer (last_tsc) is not refreshed, and a
 * submessage complete but not yet marked done keeps its parity buffers
 * until its receive completes (the full path releases them at once). Only
 * reads; a packet that fails any check here takes the full path, which
 * checks everything again after the ICRC.
 */
int sdr_eceng_rx_parity_early(const void *ctx, struct sdr_worker *w, const struct sdr_qp *qp,
			      const uint8_t *msg, size_t len)
{
	const struct sdr_eceng *ec = ctx;
	struct sdr_parity_hdr h;
	const uint8_t *data;
	uint32_t dlen, slot;
	const struct sdr_rslot *s;
	const struct sdr_eceng_rmsg *r;

	if (sdr_ctrl_parity_decode(msg, len, &h, &data, &dlen) || !code_ok(ec, &h))
		return 0;
	slot = sdr_seq_msg_id(h.seq);
	s = &qp->rq.slot[slot];
	if (s->seq != h.seq || s->state == SDR_RS_FREE)
		return 0;
	if (s->state == SDR_RS_POSTED) {
		/* the message's first parity packet (length, immediate, FTO)
		 * takes the full path: it creates the state checked here */
		r = ec->r[slot];
		if (!r || r->seq != h.seq || r->code != h.code || r->k != h.k || r->m != h.m ||
		    r->imm != h.imm || r->msg_len != h.msg_len || h.sub >= r->g.nsub ||
		    h.npkt != sdr_ecfw_par_npkt(&r->g, h.sub) ||
		    h.clen != sdr_ecfw_sub_clen(&r->g, h.sub) ||
		    dlen != sdr_ecfw_par_pkt_len(&r->g, h.sub, h.pkt))
			return 0;
		if (!r->sub_done[h.sub] &&
		    sub_missing(qp, slot, h.sub * r->g.k, sdr_ecfw_sub_nreal(&r->g, h.sub)))
			return 0;
	}
	w->ctr[SDR_CTR_ec_parity_early]++;
	return 1;
}

void sdr_eceng_rx_parity(void *ctx, struct sdr_worker *w, struct sdr_qp *qp, const uint8_t *msg,
			 size_t len, uint64_t now)
{
	struct sdr_eceng *ec = ctx;
	struct sdr_parity_hdr h;
	const uint8_t *data;
	uint32_t dlen, slot, nreal;
	struct sdr_rslot *s;
	struct sdr_eceng_rmsg *r;
	struct sdr_ecfw_geom g;
	struct sdr_ecfw_buf **bp, *b;
	enum sdr_ctr drop;
	int flags = 0, f;

	if (sdr_ctrl_parity_decode(msg, len, &h, &data, &dlen)) {
		w->ctr[SDR_CTR_ec_parity_bad]++;
		return;
	}
	if (!code_ok(ec, &h)) {
		w->ctr[SDR_CTR_ec_param_mismatch]++;
		return;
	}
	slot = sdr_seq_msg_id(h.seq);
	s = &qp->rq.slot[slot];
	if (s->seq != h.seq || s->state == SDR_RS_FREE) {
		w->ctr[SDR_CTR_ec_parity_unknown]++;
		return;
	}
	if (s->state != SDR_RS_POSTED) {
		w->ctr[SDR_CTR_ec_parity_late]++;
		return;
	}
	if (h.msg_len > s->len || sdr_ecfw_geom_init(&g, h.msg_len, qp->mtu, qp->ppc, h.k, h.m)) {
		w->ctr[SDR_CTR_ec_parity_len]++;
		return;
	}
	if (g.nsub > ec->nsub_max) { /* cannot happen: msg_len <= max_msg */
		w->ctr[SDR_CTR_ec_parity_len]++;
		return;
	}
	if (h.sub >= g.nsub || h.npkt != sdr_ecfw_par_npkt(&g, h.sub)) {
		w->ctr[SDR_CTR_ec_parity_sub]++;
		return;
	}
	if (h.clen != sdr_ecfw_sub_clen(&g, h.sub) ||
	    dlen != sdr_ecfw_par_pkt_len(&g, h.sub, h.pkt)) {
		w->ctr[SDR_CTR_ec_parity_len]++;
		return;
	}
	r = ec->r[slot];
	if (r && r->seq != h.seq) { /* left over from an earlier receive of the slot */
		rx_release(ec, slot);
		r = NULL;
	}
	if (r) {
		if (r->code != h.code || r->k != h.k || r->m != h.m || r->imm != h.imm) {
			w->ctr[SDR_CTR_ec_param_mismatch]++;
			return;
		}
		if (r->msg_len != h.msg_len) {
			w->ctr[SDR_CTR_ec_parity_len]++;
			return;
		}
	} else {
		/* the first parity of the message: its length and immediate */
		f = sdr_rq_set_msg(&qp->rq, slot, h.msg_len, h.imm, &drop);
		if (f < 0) {
			w->ctr[drop == SDR_CTR_imm_mismatch ? SDR_CTR_ec_param_mismatch
							    : SDR_CTR_ec_parity_len]++;
			return;
		}
		/* the slot's receive state, reserved at QP creation for the
		 * largest geometry the QP accepts (checked above) */
		r = (struct sdr_eceng_rmsg *)(ec->rmsg_region + (size_t)slot * ec->rmsg_stride);
		memset(r, 0, sdr_eceng_rmsg_bytes(g.nsub, g.m));
		r->seq = h.seq;
		r->msg_len = h.msg_len;
		r->imm = h.imm;
		r->code = h.code;
		r->k = h.k;
		r->m = h.m;
		r->g = g;
		r->par = (struct sdr_ecfw_buf **)(r + 1);
		r->sub_done = (uint8_t *)(r->par + (size_t)g.nsub * g.m);
		r->sub_par = r->sub_done + g.nsub;
		ec->r[slot] = r;
		note_flags(w, qp, ec->sr, slot, f & ~SDR_PLACE_COMPLETE, now);
		if (f & SDR_PLACE_COMPLETE) {
			/* it brought the last missing piece (length, immediate) */
			SDR_QP_CTR(qp, ec, par_pkts_rx)++;
			sdr_sr_qp_recv_done(w, qp, slot, 0, now);
			return;
		}
		arm_fto(qp, ec, slot, now);
	}
	s->last_tsc = now;
	nreal = sdr_ecfw_sub_nreal(&g, h.sub);
	if (r->sub_done[h.sub] || !sub_missing(qp, slot, h.sub * g.k, nreal)) {
		if (!r->sub_done[h.sub])
			release_sub(ec, r, h.sub);
		w->ctr[SDR_CTR_ec_parity_unused]++;
		return;
	}
	bp = &r->par[(size_t)h.sub * g.m + h.pidx];
	if (!*bp) {
		*bp = sdr_ecfw_pool_get(&ec->pool);
		if (!*bp) {
			w->ctr[SDR_CTR_ec_pool_exhausted]++;
			return;
		}
		(*bp)->npkt = h.npkt;
		r->sub_par[h.sub]++;
	}
	b = *bp;
	if (sdr_sr_bit(b->bm, h.pkt)) {
		w->ctr[SDR_CTR_ec_parity_dup]++;
		return;
	}
	memcpy(b->data + (size_t)h.pkt * g.mtu, data, dlen);
	b->bm[h.pkt / 64] |= 1ull << (h.pkt % 64);
	SDR_QP_CTR(qp, ec, par_pkts_rx)++; /* accepted (every other path counts a drop) */
	r->par_pkts++;
	if (++b->got < b->npkt)
		return;
	SDR_QP_CTR(qp, ec, par_chunks_rx)++;
	flags = try_sub(w, qp, ec, slot, r, h.sub, now);
	if (flags & SDR_PLACE_COMPLETE)
		sdr_sr_qp_recv_done(w, qp, slot, 0, now);
}

/* ---- fallback timeout: NACK what cannot be decoded ---- */

static void tx_nack(struct sdr_worker *w, struct sdr_qp *qp, const struct sdr_nack_entry *e,
		    unsigned n)
{
	struct rte_mbuf *m = sdr_txq_alloc(w, qp->inst);
	size_t mlen;

	if (!m)
		return; /* re-armed FTO and the sender's timers cover it */
	mlen = sdr_ctrl_nack_encode(rte_pktmbuf_mtod(m, uint8_t *) + SDR_CTRL_HDR_LEN, qp->qpn_base,
				    e, (uint16_t)n);
	if (!mlen) {
		rte_pktmbuf_free(m);
		return;
	}
	sdr_txq_ctrl(w, qp, m, mlen);
	SDR_QP_CTR(qp, ec, nacks_tx)++;
	SDR_QP_CTR(qp, ec, nack_entries_tx) += n;
}

/* The FTO of @p slot expired: NACK its submessages that cannot be decoded.
 * @return chunks listed. */
static uint32_t fto_expired(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_eceng *ec,
			    uint32_t slot, uint64_t now)
{
	struct sdr_rslot *s = &qp->rq.slot[slot];
	struct sdr_eceng_rmsg *r = ec->r[slot];
	struct sdr_nack_entry e[SDR_NACK_MAX_ENTRIES];
	uint32_t nch = sdr_rslot_nchunks(&qp->rq, s), k, nsub, n = 0, total = 0, listed = 0;
	int imm = s->imm_mask != 0xFF && (!s->last_known || s->npkts < SDR_IMM_NIBBLES);
	uint32_t cbytes = qp->mtu * qp->ppc;
	uint32_t hi_chunk = s->max_end ? (s->max_end - 1) / cbytes : 0; /* holds the last byte */

	if (r && r->seq != s->seq)
		r = NULL;
	k = r ? r->k : ec->k;
	nsub = (nch + k - 1) / k;
	SDR_QP_CTR(qp, ec, fto_expiries)++;
	for (uint32_t sub = 0; sub < nsub && total < EC_NACK_MAX_PER_MSG; sub++) {
		uint32_t first = sub * k, nreal = nch - first < k ? nch - first : k;
		uint64_t miss;

		if (r && r->sub_done[sub])
			continue;
		miss = sub_missing(qp, slot, first, nreal);
		if (!miss)
			continue;
		if (r) {
			int f = try_sub(w, qp, ec, slot, r, sub, now);
			if (f & SDR_PLACE_COMPLETE) {
				ec->rcv[slot].fto_fired = 1;
				sdr_sr_qp_recv_done(w, qp, slot, 0, now);
				return 0;
			}
			if (r->sub_done[sub])
				continue;
		}
		/* lost on the first pass: missing at the first FTO, below the
		 * highest chunk that has data (past it, the sender may not have
		 * sent yet when it is slower than the FTO assumes; a lost tail is
		 * the sender's count: it retransmits it) */
		if (!ec->rcv[slot].fto_fired && first < hi_chunk)
			ec->rcv[slot].lost += (uint32_t)__builtin_popcountll(
				hi_chunk - first >= 64 ? miss
						       : miss & ((1ull << (hi_chunk - first)) - 1));
		e[n] = (struct sdr_nack_entry){
			.seq = s->seq, .sub = (uint16_t)sub, .k = (uint8_t)k, .missing = miss};
		if (imm) {
			e[n].flags = SDR_NACK_F_IMM;
			imm = 0;
		}
		listed += (uint32_t)__builtin_popcountll(miss);
		total++;
		if (++n == SDR_NACK_MAX_ENTRIES) {
			tx_nack(w, qp, e, n);
			n = 0;
		}
	}
	ec->rcv[slot].fto_fired = 1;
	if (imm) { /* every chunk is in; only the immediate-only packets are not */
		e[n++] = (struct sdr_nack_entry){
			.seq = s->seq, .k = (uint8_t)k, .flags = SDR_NACK_F_IMM};
		listed++;
	}
	if (n)
		tx_nack(w, qp, e, n);
	return listed;
}

/*
 * The FTO assumes the sender injects at the configured rate. A sender that
 * is slower (a busy CPU, a slower peer port) would be NACKed for chunks it
 * has not sent yet. So at expiry, a receive whose packets are still coming
 * in (the last one arrived less than 4 measured inter-arrival times ago)
 * and that has not seen as many packets as its data and parity make is
 * given the time those need at the measured pace; the fallback only starts
 * once the stream has gone quiet. Returns 1 when the FTO was pushed back.
 */
static int still_arriving(struct sdr_qp *qp, struct sdr_eceng *ec, struct sdr_rslot *s,
			  uint64_t now)
{
	const struct sdr_eceng_rmsg *r = ec->r[sdr_seq_msg_id(s->seq)];
	uint32_t nch = sdr_rslot_nchunks(&qp->rq, s);
	uint64_t got = s->pkts_got + (r && r->seq == s->seq ? r->par_pkts : 0);
	uint64_t npk = s->last_known ? s->npkts : s->posted_pkts;
	uint64_t expect = npk + expected_parity(ec, r, nch) * qp->ppc, ipt;
	uint64_t scan = (uint64_t)EC_SCAN_US * sdr_g.tsc_hz / 1000000;

	/* (the pace is known from data packets only: first_tsc is the first
	 * one's; a receive that got only parity or immediate-only packets has
	 * no pace to wait for) */
	if (got < 2 || got >= expect || !s->first_tsc)
		return 0;
	/* The worker reads the clock for its timers once per loop and again
	 * for each RX burst: a packet of this very loop is newer than now, and
	 * the receive is as arriving as can be. */
	if (now < s->last_tsc)
		now = s->last_tsc;
	if (s->last_tsc <= s->first_tsc) {
		/* every packet so far came in one burst (one clock read): no
		 * pace yet; give it a scan period to show one */
		if (now - s->last_tsc >= scan)
			return 0;
		ec->rcv[sdr_seq_msg_id(s->seq)].fto_due = now + scan;
		return 1;
	}
	ipt = (s->last_tsc - s->first_tsc) / (got - 1);
	if (now - s->last_tsc >= 4 * ipt + scan)
		return 0;
	ec->rcv[sdr_seq_msg_id(s->seq)].fto_due = now + (expect - got) * ipt;
	return 1;
}

uint64_t sdr_eceng_next_due(const void *ctx)
{
	const struct sdr_eceng *ec = ctx;

	return ec->n_armed ? ec->next_scan : UINT64_MAX;
}

void sdr_eceng_poll(void *ctx, struct sdr_worker *w, struct sdr_qp *qp, uint64_t now)
{
	struct sdr_eceng *ec = ctx;
	uint64_t rtt;

	if (!ec->n_armed || now < ec->next_scan)
		return;
	ec->next_scan = now + (uint64_t)EC_SCAN_US * sdr_g.tsc_hz / 1000000;
	rtt = ec_rtt(ec);
	for (uint32_t i = 0; i < ec->n_armed;) {
		uint32_t seq = ec->armed[i], slot = sdr_seq_msg_id(seq);
		struct sdr_rslot *s = &qp->rq.slot[slot];
		uint32_t listed;

		/* gone: completed, or the slot holds a newer receive now */
		if (s->seq != seq || s->state != SDR_RS_POSTED || !ec->rcv[slot].fto_due) {
			ec->armed[i] = ec->armed[--ec->n_armed];
			continue;
		}
		i++;
		if (now < ec->rcv[slot].fto_due)
			continue;
		if (still_arriving(qp, ec, s, now)) {
			SDR_QP_CTR(qp, ec, fto_postponed)++;
			continue;
		}
		listed = fto_expired(w, qp, ec, slot, now);
		if (s->state != SDR_RS_POSTED)
			continue; /* decoded just now; dropped from the list next scan */
		/* re-armed: the retransmissions' injection, one RTT, beta RTT */
		ec->rcv[slot].fto_due = now +
					sdr_ecfw_fto(listed, 0, sdr_eceng_chunk_t_inj(qp), rtt,
						     sdr_ec_cfg.beta_milli) +
					rtt;
	}
}
