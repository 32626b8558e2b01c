/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Erasure-coding engine, sender side (layer ec; ec.h): the code of each
 * send, encoding a submessage when its data has left, parity packets, NACKs
 * from the receiver (hooks of the reliable-QP core, ec_int.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_mbuf.h>

#include "ec.h"
#include "ec_desc.h"
#include "ec_int.h"
#include "sr_desc.h"
#include "send.h"
#include "txq.h"

/* ---------------- sender ---------------- */

void sdr_eceng_use_code(struct sdr_eceng *ec, const struct sdr_smsg *sm, unsigned code, unsigned k,
			unsigned m)
{
	struct sdr_eceng_send *es = &ec->snd[sdr_seq_msg_id(sm->seq)];

	es->code = (uint8_t)code;
	es->k = (uint8_t)k;
	es->m = (uint8_t)m;
}

void sdr_eceng_send_prepared(void *ctx, struct sdr_qp *qp, const struct sdr_smsg *sm)
{
	struct sdr_eceng *ec = ctx;
	struct sdr_eceng_send *es = &ec->snd[sdr_seq_msg_id(sm->seq)];
	struct sdr_sr_send *ss = sdr_sr_send_of(ec->sr, sm->seq);
	uint64_t rtt = ec->sr->rtt.samples ? ec->sr->rtt.srtt
					   : sdr_ms_cycles(sdr_sr_cfg.init_rto_ms);

	es->sub = 0;
	es->par_pkt = UINT32_MAX;
	if (ec->per_message && !es->k) { /* a message without parity is plain SR */
		ss->hold = 0;
		ss->hold_bytes = 0;
		return;
	}
	/* The receiver NACKs one FTO after the first chunk, and the NACK needs
	 * half an RTT: the chunk timers wait that long on top of the RTO. The
	 * FTO's injection part is the pacing time of the message's data and
	 * parity at the rate in force when a timer is looked at (with --cc on
	 * the controller's, far below the configured one at times: the SR
	 * core adds it, sdr_sr_pace_cycles()); the rest is fixed here. */
	uint64_t par = es->k ? sdr_ec_msg_parity(es->code, es->k, es->m, ss->nchunks) : 0;

	ss->hold = sdr_ecfw_fto(ss->nchunks, par, 0, rtt, sdr_ec_cfg.beta_milli) + rtt;
	ss->hold_bytes = (ss->nchunks + par) * qp->ppc * sdr_wire_data_frame_bytes(qp->mtu, 1);
}

/* Encode submessage @p s of a one-shot send into ec->txpar. */
static int encode_sub(struct sdr_eceng *ec, const struct sdr_qp *qp, const struct sdr_smsg *sm,
		      const struct sdr_eceng_send *es, const struct sdr_ecfw_geom *g, uint32_t s)
{
	const struct sdr_stripe *st = &qp->rq.stripe; /* (a chunk lies in one stripe) */
	const uint8_t *data[SDR_EC_K_MAX];
	uint8_t *par[SDR_EC_M_MAX];
	uint32_t clen = sdr_ecfw_sub_clen(g, s), nreal = sdr_ecfw_sub_nreal(g, s);
	struct sdr_ec *cd = sdr_eceng_codec_of(ec, es->code, es->k, es->m);

	if (!cd || sm->nranges != 1 || sm->r[0].msg_off != 0)
		return -1;
	for (uint32_t i = 0; i < g->k; i++) {
		uint32_t c = s * g->k + i;
		if (i >= nreal) {
			data[i] = ec->zero;
		} else if (sdr_ecfw_chunk_len(g, c) < clen) {
			uint32_t l = sdr_ecfw_chunk_len(g, c);
			memcpy(ec->shortc,
			       sm->r[0].src + sdr_stripe_real(st, (size_t)c * g->cbytes), l);
			memset(ec->shortc + l, 0, clen - l);
			data[i] = ec->shortc;
		} else {
			data[i] = sm->r[0].src + sdr_stripe_real(st, (size_t)c * g->cbytes);
		}
	}
	for (uint32_t j = 0; j < g->m; j++)
		par[j] = ec->txpar + (size_t)j * g->cbytes;
	return sdr_ec_encode(cd, data, par, clen) ? -1 : 0;
}

void sdr_eceng_data_sent(void *ctx, struct sdr_worker *w, struct sdr_qp *qp,
			 const struct sdr_smsg *sm, uint32_t pkt)
{
	struct sdr_eceng *ec = ctx;
	struct sdr_eceng_send *es = &ec->snd[sdr_seq_msg_id(sm->seq)];
	struct sdr_ecfw_geom g;
	uint32_t spk, s, end;

	if (!es->k || sdr_ecfw_geom_init(&g, sm->len, qp->mtu, qp->ppc, es->k, es->m))
		return;
	spk = (uint32_t)es->k * qp->ppc;
	s = pkt / spk;
	end = (s + 1) * spk < sm->npkts ? (s + 1) * spk : sm->npkts;
	if (pkt + 1 != end)
		return;
	if (encode_sub(ec, qp, sm, es, &g, s)) {
		w->ctr[SDR_CTR_ec_encode_failed]++;
		return;
	}
	SDR_QP_CTR(qp, ec, subs_encoded)++;
	es->sub = s;
	es->par_pkt = 0;
}

int sdr_eceng_tx_parity(void *ctx, struct sdr_worker *w, struct sdr_qp *qp,
			const struct sdr_smsg *sm, uint64_t now, unsigned *budget)
{
	struct sdr_eceng *ec = ctx;
	struct sdr_eceng_send *es = &ec->snd[sdr_seq_msg_id(sm->seq)];
	struct sdr_ecfw_geom g;
	uint32_t npkt, total;

	if (es->par_pkt == UINT32_MAX)
		return 1;
	if (sdr_ecfw_geom_init(&g, sm->len, qp->mtu, qp->ppc, es->k, es->m)) {
		es->par_pkt = UINT32_MAX;
		return 1;
	}
	npkt = sdr_ecfw_par_npkt(&g, es->sub);
	/* (a short last submessage sends fewer than m: sdr_ec_sub_parity()) */
	total = npkt * sdr_ec_sub_parity(es->code, g.k, g.m, sdr_ecfw_sub_nreal(&g, es->sub));
	while (es->par_pkt < total && *budget) {
		uint32_t pidx = es->par_pkt / npkt, pkt = es->par_pkt % npkt;
		uint32_t plen = sdr_ecfw_par_pkt_len(&g, es->sub, pkt);
		size_t mlen = SDR_PARITY_DATA_OFF + plen;
		struct sdr_parity_hdr h = {
			.seq = sm->seq,
			.msg_len = sm->len,
			.imm = sm->imm,
			.code = es->code,
			.k = es->k,
			.m = es->m,
			.sub = (uint16_t)es->sub,
			.pidx = (uint8_t)pidx,
			.pkt = (uint16_t)pkt,
			.npkt = (uint16_t)npkt,
			.clen = sdr_ecfw_sub_clen(&g, es->sub),
		};
		struct rte_mbuf *m = sdr_txq_reserve(
			w, qp, sdr_wire_ctrl_frame_bytes((uint32_t)mlen), now);
		uint8_t *buf;

		if (!m)
			return 0;
		buf = rte_pktmbuf_mtod(m, uint8_t *);
		if (!sdr_ctrl_parity_encode(buf + SDR_CTRL_HDR_LEN, qp->qpn_base, &h)) {
			rte_pktmbuf_free(m); /* cannot happen: the geometry fits the wire */
			es->par_pkt = UINT32_MAX;
			return 1;
		}
		memcpy(buf + SDR_CTRL_HDR_LEN + SDR_PARITY_DATA_OFF,
		       ec->txpar + (size_t)pidx * g.cbytes + (size_t)pkt * g.mtu, plen);
		sdr_txq_ctrl(w, qp, m, mlen);
		SDR_QP_CTR(qp, ec, par_pkts_tx)++;
		es->par_pkt++;
		(*budget)--;
	}
	if (es->par_pkt < total)
		return 0;
	es->par_pkt = UINT32_MAX;
	/* (with the budget used up the caller sends nothing more in this
	 * call: a "go on" here let it send data past its budget, thousands of
	 * packets in one call, which overflowed the TX ring: tx_full) */
	return *budget != 0;
}

void sdr_eceng_rx_nack(void *ctx, struct sdr_worker *w, struct sdr_qp *qp, const uint8_t *msg,
		       const struct sdr_ctrl_hdr *h, uint64_t now)
{
	struct sdr_sr *sr = ((struct sdr_eceng *)ctx)->sr;
	struct sdr_nack_entry e;

	SDR_QP_CTR(qp, ec, nacks_rx)++;
	for (uint16_t i = 0; i < h->count; i++) {
		const struct sdr_smsg *sm;
		const struct sdr_sr_send *ss;

		if (sdr_ctrl_nack_entry_decode(msg, i, &e)) {
			w->ctr[SDR_CTR_nack_bad]++;
			continue;
		}
		SDR_QP_CTR(qp, ec, nack_entries_rx)++;
		sm = sdr_send_outstanding(qp, e.seq);
		ss = sdr_sr_send_of(sr, e.seq);
		if (!sm || !ss->u) {
			w->ctr[SDR_CTR_nack_stale]++;
			continue;
		}
		for (uint32_t b = 0; b <= e.k; b++) {
			uint64_t unit;

			if (b < e.k) {
				if (!((e.missing >> b) & 1))
					continue;
				unit = (uint64_t)e.sub * e.k + b;
				if (unit >= ss->nchunks)
					break;
			} else {
				if (!(e.flags & SDR_NACK_F_IMM) || ss->nunits == ss->nchunks)
					continue;
				unit = ss->nchunks;
			}
			if (sdr_sr_retransmit(w, sr, sm, (uint32_t)unit))
				SDR_QP_CTR(qp, ec, nack_retx_units)++;
		}
	}
	qp->progress_tsc = now;
}
