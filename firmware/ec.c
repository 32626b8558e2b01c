/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Erasure coding on a QP (reliability EC; docs/reliability.md "Erasure
 * coding", docs/wire-format.md "Parity", "NACK"). EC runs on top of the
 * Selective Repeat machinery of sr.c (ACK windows, per-chunk timers,
 * retransmission queue, global timeout), which is its fallback.
 *
 * Sender: a one-shot send is cut into submessages of k chunks (sdr_ecfw.h);
 * when the first transmission of a submessage's data has left, its m parity
 * chunks are encoded from the host buffer (the lcore's codec handle) and
 * sent, through the same pacers, before the next submessage's data. Data
 * never waits for the encoder. The chunk timers of SR stay armed but wait
 * an extra "hold" of one FTO + RTT, so that they only fire when parity and
 * NACKs did not do the job (everything lost). A NACK queues the chunks it
 * lists for retransmission at once.
 *
 * Receiver: parity packets fill buffers of a bounded per-QP pool; as soon
 * as any k of a submessage's k + m chunks are in, the missing data chunks
 * are decoded straight into the posted host buffer and marked in the
 * bitmaps; the completion ACK (FULL) follows when every chunk is in or
 * recovered. The fallback timeout, armed at the first packet of a receive,
 * sends a NACK for the submessages that cannot be decoded, and re-arms.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>

#include "dpu.h"

/* Receive-side EC state of one message (allocated at its first parity). */
struct sdr_ec_rmsg {
	uint32_t seq, msg_len, imm;
	uint8_t code, k, m;
	uint32_t par_pkts;      /* parity packets accepted */
	struct sdr_ec_geom g;
	uint8_t *sub_done;      /* [nsub] complete or decoded */
	struct sdr_ecbuf **par; /* [nsub * m] parity chunks being received */
};

#define EC_SCAN_US 200      /* FTO list scanned at most this often */
#define EC_NACK_MAX_PER_MSG 256

/* ---------------- parameters and clocks ---------------- */

static struct sdr_ec *codec(struct sdr_worker *w, unsigned code, unsigned k, unsigned m)
{
	struct sdr_ec *ec;
	unsigned n = RTE_DIM(w->ec_cache);

	for (unsigned i = 0; i < n; i++) {
		ec = w->ec_cache[i];
		if (ec && (unsigned)sdr_ec_code_of(ec) == code && sdr_ec_k(ec) == k && sdr_ec_m(ec) == m)
			return ec;
	}
	ec = sdr_ec_create((enum sdr_ec_code)code, k, m);
	if (!ec)
		return NULL;
	n = w->ec_cache_next++ % n;
	sdr_ec_free(w->ec_cache[n]);
	w->ec_cache[n] = ec;
	return ec;
}

void sdr_ec_worker_fini(struct sdr_worker *w)
{
	for (unsigned i = 0; i < RTE_DIM(w->ec_cache); i++) {
		sdr_ec_free(w->ec_cache[i]);
		w->ec_cache[i] = NULL;
	}
}

/* The rate packets of this QP leave at (bytes/s): its own pacer, else the
 * port's (--port-rate); 0 = unpaced. */
static uint64_t qp_rate(const struct sdr_qp *qp)
{
	if (qp->pacer.rate)
		return qp->pacer.rate;
	return qp->inst->cfg.port_rate / 8;
}

/* Time one chunk (its frames) takes to inject. */
static uint64_t chunk_t_inj(const struct sdr_qp *qp)
{
	return sdr_ec_t_inj((uint64_t)qp->ppc * sdr_frame_bytes(qp->mtu), qp_rate(qp),
			    sdr_g.tsc_hz);
}

/* RTT used by the FTO: --ec-rtt-us; else the QP's smoothed RTT when it
 * sends too; else the smallest CTS-to-first-packet time seen (a receive's
 * CTS travels to the sender and its first packet back: at least one RTT);
 * else the initial RTO. */
static uint64_t ec_rtt(const struct sdr_qp *qp)
{
	if (sdr_g.cfg.ec_rtt_us)
		return (uint64_t)sdr_g.cfg.ec_rtt_us * sdr_g.tsc_hz / 1000000;
	if (qp->rtt.samples)
		return qp->rtt.srtt;
	if (qp->ec_rtt_min)
		return qp->ec_rtt_min;
	return (uint64_t)sdr_g.cfg.sr_init_rto_ms * sdr_g.tsc_hz / 1000;
}

/* ---------------- QP ---------------- */

int sdr_ec_qp_init(struct sdr_qp *qp, unsigned code, unsigned k, unsigned m)
{
	uint32_t c = qp->mtu * qp->ppc;
	uint64_t pool = (uint64_t)sdr_g.cfg.ec_pool_mb << 20;

	qp->ec_code = (uint8_t)code;
	qp->ec_k = (uint8_t)k;
	qp->ec_m = (uint8_t)m;
	qp->ec_txpar = aligned_alloc(64, (size_t)m * c);
	qp->ec_zero = aligned_alloc(64, c);
	qp->ec_short = aligned_alloc(64, c);
	qp->ec_r = calloc(SDR_MAX_MSGS, sizeof(*qp->ec_r));
	qp->ec_armed = calloc(SDR_MAX_MSGS, sizeof(*qp->ec_armed));
	if (!qp->ec_txpar || !qp->ec_zero || !qp->ec_short || !qp->ec_r || !qp->ec_armed)
		return -ENOMEM;
	memset(qp->ec_zero, 0, c);
	sdr_ec_pool_init(&qp->ec_pool, c, qp->ppc, (uint32_t)(pool / c ? pool / c : 1));
	return 0;
}

void sdr_ec_qp_fini(struct sdr_qp *qp)
{
	if (qp->ec_r)
		for (uint32_t i = 0; i < SDR_MAX_MSGS; i++)
			sdr_ec_rx_release(qp, i);
	sdr_ec_pool_fini(&qp->ec_pool);
	free(qp->ec_txpar);
	free(qp->ec_zero);
	free(qp->ec_short);
	free(qp->ec_r);
	free(qp->ec_armed);
	qp->ec_txpar = qp->ec_zero = qp->ec_short = NULL;
	qp->ec_r = NULL;
	qp->ec_armed = NULL;
}

/* ---------------- sender ---------------- */

/* The scheme of one send. EC QPs: the QP's code. AUTO QPs: the pick of the
 * completion-time model at the QP's current estimates (sdr_auto.h; the
 * decision is cached per size class, so the model runs only when a class
 * is new or the estimates moved). Streams carry no parity: their data may
 * arrive from the host in any order, so a submessage is never known to be
 * whole; on EC QPs the SR fallback (FTO NACK, chunk timers) protects them,
 * on AUTO QPs they are plain SR. */
static void ec_pick(struct sdr_qp *qp, struct sdr_smsg *sm)
{
	if (sm->stream || !qp->ec_k) {
		sm->ec_code = sm->ec_k = sm->ec_m = 0;
		return;
	}
	if (qp->au) {
		struct sdr_model_scheme s;

		sdr_auto_pick(qp->au, sm->len, &s);
		/* (m <= qp->ec_m: the parity buffer is sized for the candidates) */
		if (s.code == SDR_MODEL_SR || s.m > qp->ec_m || !s.k) {
			sm->ec_code = sm->ec_k = sm->ec_m = 0;
			qp->st.auto_msgs_sr++;
			return;
		}
		sm->ec_code = s.code == SDR_MODEL_MDS ? SDR_EC_RS : SDR_EC_XOR;
		sm->ec_k = (uint8_t)s.k;
		sm->ec_m = (uint8_t)s.m;
		qp->st.auto_msgs_ec++;
		return;
	}
	sm->ec_code = qp->ec_code;
	sm->ec_k = qp->ec_k;
	sm->ec_m = qp->ec_m;
}

void sdr_ec_send_prepare(struct sdr_qp *qp, struct sdr_smsg *sm)
{
	uint64_t rtt = qp->rtt.samples ? qp->rtt.srtt
				       : (uint64_t)sdr_g.cfg.sr_init_rto_ms * sdr_g.tsc_hz / 1000;

	ec_pick(qp, sm);
	sm->ec_sub = 0;
	sm->ec_par_pkt = UINT32_MAX;
	if (qp->au && !sm->ec_k) { /* AUTO: an SR message is plain SR */
		sm->ec_hold = 0;
		return;
	}
	/* The receiver NACKs one FTO after the first chunk, and the NACK needs
	 * half an RTT: the chunk timers wait that long on top of the RTO. */
	sm->ec_hold = sdr_ec_fto(sm->nchunks, sm->ec_k ? sm->ec_k : 1, sm->ec_k ? sm->ec_m : 0,
				 chunk_t_inj(qp), rtt, sdr_g.cfg.ec_beta_milli) + rtt;
}

uint64_t sdr_ec_hold(struct sdr_qp *qp, uint32_t seq)
{
	const struct sdr_smsg *sm = &qp->smsg[sdr_seq_msg_id(seq)];

	if (!sdr_qp_ec(qp) || sm->state != SDR_SM_QUEUED || sm->seq != seq)
		return 0;
	return sm->ec_hold;
}

/* Encode submessage @p s of a one-shot send into qp->ec_txpar. */
static int encode_sub(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_smsg *sm,
		      const struct sdr_ec_geom *g, uint32_t s)
{
	const uint8_t *data[SDR_EC_K_MAX];
	uint8_t *par[SDR_EC_M_MAX];
	uint32_t clen = sdr_ec_sub_clen(g, s), nreal = sdr_ec_sub_nreal(g, s);
	struct sdr_ec *ec = codec(w, sm->ec_code, sm->ec_k, sm->ec_m);

	if (!ec || sm->nranges != 1 || sm->r[0].msg_off != 0)
		return -1;
	for (uint32_t i = 0; i < g->k; i++) {
		uint32_t c = s * g->k + i;
		if (i >= nreal) {
			data[i] = qp->ec_zero;
		} else if (sdr_ec_chunk_len(g, c) < clen) {
			uint32_t l = sdr_ec_chunk_len(g, c);
			memcpy(qp->ec_short, sm->r[0].src + (size_t)c * g->cbytes, l);
			memset(qp->ec_short + l, 0, clen - l);
			data[i] = qp->ec_short;
		} else {
			data[i] = sm->r[0].src + (size_t)c * g->cbytes;
		}
	}
	for (uint32_t j = 0; j < g->m; j++)
		par[j] = qp->ec_txpar + (size_t)j * g->cbytes;
	return sdr_ec_encode(ec, data, par, clen) ? -1 : 0;
}

void sdr_ec_data_sent(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_smsg *sm, uint32_t pkt)
{
	struct sdr_ec_geom g;
	uint32_t spk, s, end;

	if (!sm->ec_k || sdr_ec_geom_init(&g, sm->len, qp->mtu, qp->ppc, sm->ec_k, sm->ec_m))
		return;
	spk = (uint32_t)sm->ec_k * qp->ppc;
	s = pkt / spk;
	end = (s + 1) * spk < sm->npkts ? (s + 1) * spk : sm->npkts;
	if (pkt + 1 != end)
		return;
	if (encode_sub(w, qp, sm, &g, s)) {
		w->ctr[SDR_CTR_ec_encode_failed]++;
		return;
	}
	qp->st.ec_subs_encoded++;
	sm->ec_sub = s;
	sm->ec_par_pkt = 0;
}

/* Send pending parity of @p sm. @return 1 when none is pending (any
 * more), 0 when the pacer or the mbuf pool stalled it. */
int sdr_ec_tx_parity(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_smsg *sm, uint64_t now,
		     unsigned *budget)
{
	struct sdr_ec_geom g;
	uint32_t npkt, total;

	if (sm->ec_par_pkt == UINT32_MAX)
		return 1;
	if (sdr_ec_geom_init(&g, sm->len, qp->mtu, qp->ppc, sm->ec_k, sm->ec_m)) {
		sm->ec_par_pkt = UINT32_MAX;
		return 1;
	}
	npkt = sdr_ec_par_npkt(&g, sm->ec_sub);
	total = npkt * g.m;
	while (sm->ec_par_pkt < total && *budget) {
		uint32_t pidx = sm->ec_par_pkt / npkt, pkt = sm->ec_par_pkt % npkt;
		uint32_t plen = sdr_ec_par_pkt_len(&g, sm->ec_sub, pkt);
		size_t mlen = SDR_PARITY_DATA_OFF + plen;
		uint32_t fbytes = (uint32_t)(SDR_CTRL_HDR_LEN + ((mlen + 3) & ~(size_t)3) + SDR_ICRC_LEN);
		struct sdr_parity_hdr h = {
			.seq = sm->seq, .msg_len = sm->len, .imm = sm->imm, .code = sm->ec_code,
			.k = sm->ec_k, .m = sm->ec_m, .sub = (uint16_t)sm->ec_sub, .pidx = (uint8_t)pidx,
			.pkt = (uint16_t)pkt, .npkt = (uint16_t)npkt,
			.clen = sdr_ec_sub_clen(&g, sm->ec_sub),
		};
		struct rte_mbuf *m;
		uint8_t *buf;

		if (!sdr_tx_paced(w, qp, fbytes, now))
			return 0;
		m = sdr_tx_alloc(w, qp->inst);
		if (!m) {
			sdr_pacer_refund(&qp->pacer, fbytes);
			return 0;
		}
		buf = rte_pktmbuf_mtod(m, uint8_t *);
		if (!sdr_ctrl_parity_encode(buf + SDR_CTRL_HDR_LEN, qp->qpn_base, &h)) {
			rte_pktmbuf_free(m); /* cannot happen: the geometry fits the wire */
			sm->ec_par_pkt = UINT32_MAX;
			return 1;
		}
		memcpy(buf + SDR_CTRL_HDR_LEN + SDR_PARITY_DATA_OFF,
		       qp->ec_txpar + (size_t)pidx * g.cbytes + (size_t)pkt * g.mtu, plen);
		sdr_tx_ctrl_send(w, qp, m, mlen);
		qp->st.ec_par_pkts_tx++;
		sm->ec_par_pkt++;
		(*budget)--;
	}
	if (sm->ec_par_pkt < total)
		return 0;
	sm->ec_par_pkt = UINT32_MAX;
	return 1;
}

void sdr_ec_rx_nack(struct sdr_worker *w, struct sdr_qp *qp, const uint8_t *msg,
		    const struct sdr_ctrl_hdr *h, uint64_t now)
{
	struct sdr_nack_entry e;

	qp->st.ec_nacks_rx++;
	for (uint16_t i = 0; i < h->count; i++) {
		struct sdr_smsg *sm = &qp->smsg[0];

		if (sdr_ctrl_nack_entry_decode(msg, i, &e)) {
			w->ctr[SDR_CTR_nack_bad]++;
			continue;
		}
		qp->st.ec_nack_entries_rx++;
		sm = &qp->smsg[sdr_seq_msg_id(e.seq)];
		if (sm->state != SDR_SM_QUEUED || sm->seq != e.seq || !sm->u ||
		    e.seq - qp->ack_cursor >= qp->send_next - qp->ack_cursor) {
			w->ctr[SDR_CTR_nack_stale]++;
			continue;
		}
		for (uint32_t b = 0; b <= e.k; b++) {
			uint64_t unit;
			struct sdr_sr_unit *u;

			if (b < e.k) {
				if (!((e.missing >> b) & 1))
					continue;
				unit = (uint64_t)e.sub * e.k + b;
				if (unit >= sm->nchunks)
					break;
			} else {
				if (!(e.flags & SDR_NACK_F_IMM) || sm->nunits == sm->nchunks)
					continue;
				unit = sm->nchunks;
			}
			u = &sm->u[unit];
			/* not yet sent the first time: the first pass brings it */
			if (u->acked || u->inq || !u->tx_tsc)
				continue;
			if (sdr_tq_push(&qp->retxq, sm->seq, (uint32_t)unit, 0)) {
				w->ctr[SDR_CTR_sr_nomem]++;
				continue;
			}
			u->inq = 1;
			qp->st.ec_nack_retx_units++;
		}
	}
	qp->progress_tsc = now;
}

/* ---------------- receiver ---------------- */

void sdr_ec_rx_release(struct sdr_qp *qp, uint32_t slot)
{
	struct sdr_ec_rmsg *r;

	if (!qp->ec_r || !(r = qp->ec_r[slot]))
		return;
	for (uint32_t i = 0; i < r->g.nsub * r->g.m; i++)
		sdr_ec_pool_put(&qp->ec_pool, r->par[i]);
	free(r);
	qp->ec_r[slot] = NULL;
}

static void release_sub(struct sdr_qp *qp, struct sdr_ec_rmsg *r, uint32_t s)
{
	r->sub_done[s] = 1;
	for (uint32_t j = 0; j < r->g.m; j++) {
		sdr_ec_pool_put(&qp->ec_pool, r->par[s * r->g.m + j]);
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
static void note_flags(struct sdr_worker *w, struct sdr_qp *qp, uint32_t slot, int rc, uint64_t now)
{
	if (rc < 0)
		return;
	if (rc & SDR_PLACE_CHUNK)
		qp->st.chunks_done++;
	if ((rc & SDR_PLACE_CHUNK) && !(rc & SDR_PLACE_COMPLETE))
		sdr_sr_rx_note(w, qp, slot, now);
}

/* Decode submessage @p s of @p slot if it lacks data and can be repaired.
 * @return flags of the fills (SDR_PLACE_COMPLETE when the receive is now
 * complete: the caller completes it). */
static int try_sub(struct sdr_worker *w, struct sdr_qp *qp, uint32_t slot, struct sdr_ec_rmsg *r,
		   uint32_t s, uint64_t now)
{
	struct sdr_rslot *rs = &qp->rq.slot[slot];
	const struct sdr_ec_geom *g = &r->g;
	uint8_t *chunks[SDR_EC_K_MAX + SDR_EC_M_MAX];
	uint8_t present[SDR_EC_K_MAX + SDR_EC_M_MAX];
	uint32_t first = s * g->k, nreal = sdr_ec_sub_nreal(g, s), clen = sdr_ec_sub_clen(g, s);
	uint32_t npar = 0, short_c = UINT32_MAX, short_len = 0;
	uint64_t miss;
	struct sdr_ec *ec;
	int rc, flags = 0;

	if (r->sub_done[s] || rs->state != SDR_RS_POSTED)
		return 0;
	miss = sub_missing(qp, slot, first, nreal);
	if (!miss) {
		release_sub(qp, r, s);
		return 0;
	}
	for (uint32_t j = 0; j < g->m; j++) {
		struct sdr_ecbuf *b = r->par[s * g->m + j];
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
			chunks[i] = qp->ec_zero;
			continue;
		}
		present[i] = !((miss >> i) & 1);
		if (sdr_ec_chunk_len(g, c) < clen) {
			short_c = c;
			short_len = sdr_ec_chunk_len(g, c);
			if (present[i]) {
				memcpy(qp->ec_short, rs->dst + (size_t)c * g->cbytes, short_len);
				memset(qp->ec_short + short_len, 0, clen - short_len);
			}
			chunks[i] = qp->ec_short;
		} else {
			/* (c + 1) * C <= msg_len <= posted length: inside the buffer */
			chunks[i] = rs->dst + (size_t)c * g->cbytes;
		}
	}
	ec = codec(w, r->code, g->k, g->m);
	if (!ec) {
		w->ctr[SDR_CTR_ec_nomem]++;
		return 0;
	}
	if (sdr_ec_can_decode(ec, present) < 0)
		return 0; /* XOR: a group lost two; wait for more or the NACK */
	rc = sdr_ec_decode(ec, chunks, present, clen);
	if (rc < 0) {
		qp->st.ec_decode_failures++;
		return 0;
	}
	qp->st.ec_decodes++;
	if (short_c != UINT32_MAX && ((miss >> (short_c - first)) & 1))
		memcpy(rs->dst + (size_t)short_c * g->cbytes, qp->ec_short, short_len);
	release_sub(qp, r, s);
	for (uint32_t i = 0; i < nreal; i++) {
		int f;
		if (!((miss >> i) & 1))
			continue;
		f = sdr_rq_fill_chunk(&qp->rq, slot, first + i, now);
		if (f < 0)
			continue;
		qp->st.ec_chunks_recovered++;
		if (!rs->fto_fired) /* (after it, the FTO counted it as missing) */
			rs->lost++;
		note_flags(w, qp, slot, f & ~SDR_PLACE_COMPLETE, now);
		flags |= f;
	}
	return flags;
}

/* The CTS-to-first-packet time of a receive bounds the RTT from above. */
static void note_rtt_min(struct sdr_qp *qp, const struct sdr_rslot *s, uint64_t now)
{
	if (s->post_tsc && now > s->post_tsc &&
	    (!qp->ec_rtt_min || now - s->post_tsc < qp->ec_rtt_min))
		qp->ec_rtt_min = now - s->post_tsc;
}

/* FTO of a receive: armed at its first packet (data or parity); on AUTO
 * QPs at its first parity packet (a message without parity is SR). */
static void arm_fto(struct sdr_qp *qp, uint32_t slot, uint64_t now)
{
	struct sdr_rslot *s = &qp->rq.slot[slot];
	const struct sdr_ec_rmsg *r = qp->ec_r[slot];
	uint32_t k = r ? r->k : qp->ec_k, m = r ? r->m : qp->ec_m;

	if (s->fto_due)
		return;
	note_rtt_min(qp, s, now);
	s->fto_due = now + sdr_ec_fto(sdr_rslot_nchunks(&qp->rq, s), k, m, chunk_t_inj(qp),
				      ec_rtt(qp), sdr_g.cfg.ec_beta_milli);
	if (qp->n_armed < SDR_MAX_MSGS)
		qp->ec_armed[qp->n_armed++] = s->seq;
}

void sdr_ec_rx_data(struct sdr_worker *w, struct sdr_qp *qp, uint32_t slot, uint32_t pkt_off,
		    int rc, uint64_t now)
{
	struct sdr_rslot *s = &qp->rq.slot[slot];
	struct sdr_ec_rmsg *r = qp->ec_r[slot];
	int flags = 0;

	if (rc & SDR_PLACE_COMPLETE)
		return; /* done: the caller completes it (and releases our state) */
	if (qp->au && (!r || r->seq != s->seq)) {
		/* AUTO: no parity seen (yet): SR so far */
		if (s->pkts_got == 1)
			note_rtt_min(qp, s, now);
		return;
	}
	arm_fto(qp, slot, now);
	if (!r || !(rc & SDR_PLACE_CHUNK) || r->seq != s->seq)
		return;
	/* the packet's chunk, and the last chunk (an SE packet may complete it) */
	if (pkt_off < s->posted_pkts)
		flags |= try_sub(w, qp, slot, r, pkt_off / qp->ppc / r->k, now);
	if (s->state == SDR_RS_POSTED && r->g.nsub)
		flags |= try_sub(w, qp, slot, r, r->g.nsub - 1, now);
	if (flags & SDR_PLACE_COMPLETE)
		sdr_host_recv_done(w, qp, slot, 0);
}

void sdr_ec_rx_parity(struct sdr_worker *w, struct sdr_qp *qp, const uint8_t *msg, size_t len,
		      uint64_t now)
{
	struct sdr_parity_hdr h;
	const uint8_t *data;
	uint32_t dlen, slot, nreal;
	struct sdr_rslot *s;
	struct sdr_ec_rmsg *r;
	struct sdr_ec_geom g;
	struct sdr_ecbuf **bp, *b;
	enum sdr_ctr drop;
	int flags = 0, f;

	if (!sdr_qp_ec(qp)) {
		w->ctr[SDR_CTR_ec_parity_not_ec]++;
		return;
	}
	if (sdr_ctrl_parity_decode(msg, len, &h, &data, &dlen)) {
		w->ctr[SDR_CTR_ec_parity_bad]++;
		return;
	}
	/* EC: the QP's scheme only. AUTO: any valid scheme, chosen per message
	 * by the sender; the message's first parity packet fixes it (later
	 * ones that disagree are dropped below) */
	if (qp->au ? sdr_ec_param_check(h.code, h.k, h.m) != 0
		   : (h.code != qp->ec_code || h.k != qp->ec_k || h.m != qp->ec_m)) {
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
	if (h.msg_len > s->len ||
	    sdr_ec_geom_init(&g, h.msg_len, qp->mtu, qp->ppc, h.k, h.m)) {
		w->ctr[SDR_CTR_ec_parity_len]++;
		return;
	}
	if (h.sub >= g.nsub || h.npkt != sdr_ec_par_npkt(&g, h.sub)) {
		w->ctr[SDR_CTR_ec_parity_sub]++;
		return;
	}
	if (h.clen != sdr_ec_sub_clen(&g, h.sub) || dlen != sdr_ec_par_pkt_len(&g, h.sub, h.pkt)) {
		w->ctr[SDR_CTR_ec_parity_len]++;
		return;
	}
	r = qp->ec_r[slot];
	if (r && r->seq != h.seq) { /* left over from an earlier receive of the slot */
		sdr_ec_rx_release(qp, slot);
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
		r = calloc(1, sizeof(*r) + g.nsub + (size_t)g.nsub * g.m * sizeof(*r->par) + 8);
		if (!r) {
			note_flags(w, qp, slot, f & ~SDR_PLACE_COMPLETE, now);
			if (f & SDR_PLACE_COMPLETE) {
				qp->st.ec_par_pkts_rx++;
				sdr_host_recv_done(w, qp, slot, 0);
			} else {
				w->ctr[SDR_CTR_ec_nomem]++;
			}
			return;
		}
		r->seq = h.seq;
		r->msg_len = h.msg_len;
		r->imm = h.imm;
		r->code = h.code;
		r->k = h.k;
		r->m = h.m;
		r->g = g;
		r->par = (struct sdr_ecbuf **)(r + 1);
		r->sub_done = (uint8_t *)(r->par + (size_t)g.nsub * g.m);
		qp->ec_r[slot] = r;
		note_flags(w, qp, slot, f & ~SDR_PLACE_COMPLETE, now);
		if (f & SDR_PLACE_COMPLETE) {
			/* it brought the last missing piece (length, immediate) */
			qp->st.ec_par_pkts_rx++;
			sdr_host_recv_done(w, qp, slot, 0);
			return;
		}
		arm_fto(qp, slot, now);
	}
	s->last_tsc = now;
	nreal = sdr_ec_sub_nreal(&g, h.sub);
	if (r->sub_done[h.sub] || !sub_missing(qp, slot, h.sub * g.k, nreal)) {
		if (!r->sub_done[h.sub])
			release_sub(qp, r, h.sub);
		w->ctr[SDR_CTR_ec_parity_unused]++;
		return;
	}
	bp = &r->par[(size_t)h.sub * g.m + h.pidx];
	if (!*bp) {
		*bp = sdr_ec_pool_get(&qp->ec_pool);
		if (!*bp) {
			w->ctr[SDR_CTR_ec_pool_exhausted]++;
			return;
		}
		(*bp)->npkt = h.npkt;
	}
	b = *bp;
	if (sdr_sr_bit(b->bm, h.pkt)) {
		w->ctr[SDR_CTR_ec_parity_dup]++;
		return;
	}
	memcpy(b->data + (size_t)h.pkt * g.mtu, data, dlen);
	b->bm[h.pkt / 64] |= 1ull << (h.pkt % 64);
	qp->st.ec_par_pkts_rx++; /* accepted (every other path counts a drop) */
	r->par_pkts++;
	if (++b->got < b->npkt)
		return;
	qp->st.ec_par_chunks_rx++;
	flags = try_sub(w, qp, slot, r, h.sub, now);
	if (flags & SDR_PLACE_COMPLETE)
		sdr_host_recv_done(w, qp, slot, 0);
}

/* ---- fallback timeout: NACK what cannot be decoded ---- */

static void tx_nack(struct sdr_worker *w, struct sdr_qp *qp, const struct sdr_nack_entry *e,
		    unsigned n)
{
	struct rte_mbuf *m = sdr_tx_alloc(w, qp->inst);
	size_t mlen;

	if (!m)
		return; /* re-armed FTO and the sender's timers cover it */
	mlen = sdr_ctrl_nack_encode(rte_pktmbuf_mtod(m, uint8_t *) + SDR_CTRL_HDR_LEN, qp->qpn_base,
				    e, (uint16_t)n);
	if (!mlen) {
		rte_pktmbuf_free(m);
		return;
	}
	sdr_tx_ctrl_send(w, qp, m, mlen);
	qp->st.ec_nacks_tx++;
	qp->st.ec_nack_entries_tx += n;
}

/* The FTO of @p slot expired: NACK its submessages that cannot be decoded.
 * @return chunks listed. */
static uint32_t fto_expired(struct sdr_worker *w, struct sdr_qp *qp, uint32_t slot, uint64_t now)
{
	struct sdr_rslot *s = &qp->rq.slot[slot];
	struct sdr_ec_rmsg *r = qp->ec_r[slot];
	struct sdr_nack_entry e[SDR_NACK_MAX_ENTRIES];
	uint32_t nch = sdr_rslot_nchunks(&qp->rq, s), k, nsub, n = 0, total = 0, listed = 0;
	int imm = s->imm_mask != 0xFF && (!s->last_known || s->npkts < SDR_IMM_NIBBLES);
	uint32_t cbytes = qp->mtu * qp->ppc;
	uint32_t hi_chunk = s->max_end ? (s->max_end - 1) / cbytes : 0; /* holds the last byte */

	if (r && r->seq != s->seq)
		r = NULL;
	k = r ? r->k : qp->ec_k;
	nsub = (nch + k - 1) / k;
	qp->st.ec_fto_expiries++;
	for (uint32_t sub = 0; sub < nsub && total < EC_NACK_MAX_PER_MSG; sub++) {
		uint32_t first = sub * k, nreal = nch - first < k ? nch - first : k;
		uint64_t miss;

		if (r && r->sub_done[sub])
			continue;
		miss = sub_missing(qp, slot, first, nreal);
		if (!miss)
			continue;
		if (r) {
			int f = try_sub(w, qp, slot, r, sub, now);
			if (f & SDR_PLACE_COMPLETE) {
				s->fto_fired = 1;
				sdr_host_recv_done(w, qp, slot, 0);
				return 0;
			}
			if (r->sub_done[sub])
				continue;
		}
		/* lost on the first pass: missing at the first FTO, below the
		 * highest chunk that has data (past it, the sender may not have
		 * sent yet when it is slower than the FTO assumes; a lost tail is
		 * the sender's count: it retransmits it) */
		if (!s->fto_fired && first < hi_chunk)
			s->lost += (uint32_t)__builtin_popcountll(
				hi_chunk - first >= 64 ? miss : miss & ((1ull << (hi_chunk - first)) - 1));
		e[n] = (struct sdr_nack_entry){.seq = s->seq, .sub = (uint16_t)sub, .k = (uint8_t)k,
					       .missing = miss};
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
	s->fto_fired = 1;
	if (imm) { /* every chunk is in; only the immediate-only packets are not */
		e[n++] = (struct sdr_nack_entry){.seq = s->seq, .k = (uint8_t)k,
						 .flags = SDR_NACK_F_IMM};
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
static int still_arriving(struct sdr_qp *qp, struct sdr_rslot *s, uint64_t now)
{
	const struct sdr_ec_rmsg *r = qp->ec_r[sdr_seq_msg_id(s->seq)];
	uint32_t nch = sdr_rslot_nchunks(&qp->rq, s), k = r ? r->k : qp->ec_k;
	uint32_t m = r ? r->m : qp->ec_m;
	uint64_t got = s->pkts_got + (r && r->seq == s->seq ? r->par_pkts : 0);
	uint64_t npk = s->last_known ? s->npkts : s->posted_pkts;
	uint64_t expect = npk + ((uint64_t)nch * m + k - 1) / k * qp->ppc, ipt;

	if (got < 2 || got >= expect || s->last_tsc <= s->first_tsc || now < s->last_tsc)
		return 0;
	ipt = (s->last_tsc - s->first_tsc) / (got - 1);
	if (now - s->last_tsc >= 4 * ipt + (uint64_t)EC_SCAN_US * sdr_g.tsc_hz / 1000000)
		return 0;
	s->fto_due = now + (expect - got) * ipt;
	return 1;
}

void sdr_ec_poll(struct sdr_worker *w, struct sdr_qp *qp, uint64_t now)
{
	uint64_t rtt;

	if (!qp->n_armed || now < qp->ec_next_scan)
		return;
	qp->ec_next_scan = now + (uint64_t)EC_SCAN_US * sdr_g.tsc_hz / 1000000;
	rtt = ec_rtt(qp);
	for (uint32_t i = 0; i < qp->n_armed;) {
		uint32_t seq = qp->ec_armed[i], slot = sdr_seq_msg_id(seq);
		struct sdr_rslot *s = &qp->rq.slot[slot];
		uint32_t listed;

		/* gone: completed, or the slot holds a newer receive now */
		if (s->seq != seq || s->state != SDR_RS_POSTED || !s->fto_due) {
			qp->ec_armed[i] = qp->ec_armed[--qp->n_armed];
			continue;
		}
		i++;
		if (now < s->fto_due)
			continue;
		if (still_arriving(qp, s, now)) {
			qp->st.ec_fto_postponed++;
			continue;
		}
		listed = fto_expired(w, qp, slot, now);
		if (s->state != SDR_RS_POSTED)
			continue; /* decoded just now; dropped from the list next scan */
		/* re-armed: the retransmissions' injection, one RTT, beta RTT */
		s->fto_due = now + sdr_ec_fto(listed, 1, 0, chunk_t_inj(qp), rtt,
					      sdr_g.cfg.ec_beta_milli) + rtt;
	}
}
