/* SPDX-License-Identifier: BSD-3-Clause */
/* Receive path: validate, place payload into the host buffer, bitmaps,
 * completions; control messages (CTS). Every frame is hostile. */
#include <errno.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ring.h>

#include "dpu.h"

static const enum sdr_ctr parse_ctr[SDR_PARSE__MAX] = {
	[SDR_PARSE_TRUNCATED] = SDR_CTR_truncated, [SDR_PARSE_NOT_IPV4] = SDR_CTR_not_ipv4,
	[SDR_PARSE_IP_BAD] = SDR_CTR_ip_bad,       [SDR_PARSE_NOT_UDP] = SDR_CTR_not_udp,
	[SDR_PARSE_NOT_ROCE] = SDR_CTR_not_roce,   [SDR_PARSE_BAD_BTH] = SDR_CTR_bad_bth,
	[SDR_PARSE_BAD_ICRC] = SDR_CTR_bad_icrc,   [SDR_PARSE_BAD_LEN] = SDR_CTR_bad_dma_len,
};

static void rx_arp(struct sdr_worker *w, struct sdr_inst *in, const uint8_t *f, size_t len)
{
	uint8_t reply[64];
	size_t n = sdr_arp_reply(f, len, in->ip, in->mac, reply);
	struct rte_mbuf *m;

	if (!n) {
		w->ctr[SDR_CTR_arp_ignored]++;
		return;
	}
	m = sdr_tx_alloc(w, in);
	if (!m)
		return;
	memcpy(rte_pktmbuf_mtod(m, void *), reply, n);
	m->data_len = m->pkt_len = (uint32_t)n;
	sdr_tx_enqueue(w, in, m);
}

/* The peer aborted a send before (all of) its data went out: complete the
 * receive it was matched with, with the peer's status. */
static void rx_abort(struct sdr_worker *w, struct sdr_qp *qp, const uint8_t *msg,
		     const struct sdr_ctrl_hdr *h)
{
	struct sdr_abort_entry e;

	for (uint16_t i = 0; i < h->count; i++) {
		uint32_t idx;
		const struct sdr_rslot *s;

		sdr_ctrl_abort_entry_decode(msg, i, &e);
		idx = sdr_seq_msg_id(e.seq);
		s = &qp->rq.slot[idx];
		if (e.status >= 0 || e.status < -4095 ||
		    (e.status == -EMSGSIZE && e.length <= s->len)) {
			w->ctr[SDR_CTR_abort_bad]++;
			continue;
		}
		if (s->seq != e.seq || sdr_rq_complete(&qp->rq, e.seq) < 0) {
			w->ctr[SDR_CTR_abort_stale]++; /* a repeat, or unknown */
			continue;
		}
		sdr_host_recv_done(w, qp, idx, e.status);
	}
}

/* A CTS for a send that is over: if it ended aborted, the receiver has not
 * seen the ABORT (it still offers the receive); say it again. */
static void abort_again(struct sdr_worker *w, struct sdr_qp *qp, uint32_t seq)
{
	const struct sdr_smsg *sm = &qp->smsg[sdr_seq_msg_id(seq)];

	if (sm->state != SDR_SM_DONE || sm->seq != seq || !sm->aborted)
		return;
	sdr_tx_abort_queue(w, qp, seq, sm->status, sm->len);
}

static void rx_ctrl(struct sdr_worker *w, struct sdr_qp *qp, const struct sdr_parsed *p,
		    uint64_t now)
{
	struct sdr_ctrl_hdr h;
	struct sdr_cts_entry e;

	if (sdr_ctrl_hdr_decode(p->payload, p->payload_len, &h)) {
		w->ctr[SDR_CTR_ctrl_bad]++;
		return;
	}
	if (h.key != qp->ctrl_key) {
		/* 64 bits an off-path sender cannot know (docs/security.md) */
		w->ctr[SDR_CTR_ctrl_bad_key]++;
		return;
	}
	if (h.src_qpn != qp->remote.qpn) {
		w->ctr[SDR_CTR_wrong_peer]++;
		return;
	}
	if (h.type == SDR_CTRL_ACK && sdr_qp_sr(qp)) {
		sdr_sr_rx_ack(w, qp, p->payload, &h, now);
		return;
	}
	if (h.type == SDR_CTRL_PARITY) {
		sdr_ec_rx_parity(w, qp, p->payload, p->payload_len, now);
		return;
	}
	if (h.type == SDR_CTRL_NACK && sdr_qp_ec(qp)) {
		sdr_ec_rx_nack(w, qp, p->payload, &h, now);
		return;
	}
	if (h.type == SDR_CTRL_ABORT) {
		rx_abort(w, qp, p->payload, &h);
		return;
	}
	if (h.type != SDR_CTRL_CTS) {
		w->ctr[SDR_CTR_ctrl_unknown]++;
		return;
	}
	qp->st.cts_rx++;
	for (uint16_t i = 0; i < h.count; i++) {
		sdr_ctrl_cts_entry_decode(p->payload, i, &e);
		/* Only receives the sender can still use: its current send and
		 * the 1023 after it. Older ones are re-sent CTS we no longer need. */
		if (e.seq - qp->tx_cursor >= SDR_MAX_MSGS) {
			if ((int32_t)(e.seq - qp->tx_cursor) < 0) {
				w->ctr[SDR_CTR_cts_stale]++;
				abort_again(w, qp, e.seq);
			} else {
				w->ctr[SDR_CTR_cts_bad]++;
			}
			continue;
		}
		uint32_t slot = sdr_seq_msg_id(e.seq);
		/* news for the send at the head: progress (global timeout) */
		if (e.seq == qp->tx_cursor && (!qp->cts_ok[slot] || qp->cts_seq[slot] != e.seq))
			qp->progress_tsc = now;
		qp->cts_seq[slot] = e.seq;
		qp->cts_len[slot] = e.length;
		qp->cts_ok[slot] = 1;
	}
}

void sdr_rx_one(struct sdr_worker *w, struct sdr_inst *in, struct rte_mbuf *m)
{
	struct sdr_parsed p;
	enum sdr_parse_result r;
	enum sdr_ctr drop;
	struct sdr_qp *qp;
	uint32_t gen, slot;
	uint64_t now;
	int rc;

	if (m->nb_segs != 1) {
		w->ctr[SDR_CTR_multiseg]++;
		goto out;
	}
	r = sdr_parse(rte_pktmbuf_mtod(m, const uint8_t *), m->data_len, sdr_g.cfg.icrc, &p);
	if (r == SDR_PARSE_ARP) {
		rx_arp(w, in, rte_pktmbuf_mtod(m, const uint8_t *), m->data_len);
		goto out;
	}
	if (r != SDR_PARSE_OK_DATA && r != SDR_PARSE_OK_CTRL) {
		w->ctr[r < SDR_PARSE__MAX ? parse_ctr[r] : SDR_CTR_truncated]++;
		goto out;
	}
	if (p.dst_ip != in->ip || memcmp(p.dst_mac, in->mac, 6)) {
		w->ctr[SDR_CTR_not_for_us]++;
		goto out;
	}
	qp = sdr_qp_lookup(in, p.dest_qpn, sdr_g.cfg.generations, &gen);
	if (!qp) {
		/* outside this boot's QPN range: a packet for an earlier
		 * incarnation of this DPU (its peer has not noticed the restart) */
		if (!sdr_qpn_in_epoch(in, p.dest_qpn, sdr_g.cfg.generations))
			w->ctr[SDR_CTR_stale_epoch]++;
		else
			w->ctr[SDR_CTR_unknown_qp]++;
		goto out;
	}
	if (qp->worker != w->idx) {
		/* software spread: hand the packet to the QP's owner */
		m->hash.usr = in->idx;
		if (rte_ring_enqueue(sdr_g.workers[qp->worker].handoff, m)) {
			w->ctr[SDR_CTR_handoff_full]++;
			goto out;
		}
		return;
	}
	if (qp->state != SDR_QPS_CONNECTED) {
		w->ctr[SDR_CTR_qp_not_ready]++;
		goto out;
	}
	if (p.src_ip != qp->remote.ip) {
		w->ctr[SDR_CTR_wrong_peer]++;
		goto out;
	}
	now = rte_get_tsc_cycles();
	if (r == SDR_PARSE_OK_CTRL) {
		rx_ctrl(w, qp, &p, now);
		goto out;
	}
	rc = sdr_rq_place(&qp->rq, gen, &p, now, &drop, &slot);
	if (rc < 0) {
		w->ctr[drop]++;
		/* SR: a repeat of what we have means the sender missed an ACK:
		 * of the open receive's progress, or of a completed receive
		 * (which the slot may hold again, reposted) */
		if (sdr_qp_sr(qp)) {
			if (drop == SDR_CTR_dup_pkt || drop == SDR_CTR_dup_imm)
				sdr_sr_rx_note(w, qp, sdr_imm_msg_id(p.imm), now);
			else if (drop == SDR_CTR_late_pkt || drop == SDR_CTR_stale_gen ||
				 drop == SDR_CTR_stale_seq)
				sdr_sr_rx_stale(w, qp, sdr_imm_msg_id(p.imm),
						sdr_pkt_seq(p.psn, p.imm), now);
		}
		goto out;
	}
	if (sdr_qp_sr(qp) && (rc & SDR_PLACE_CHUNK) && !(rc & SDR_PLACE_COMPLETE))
		sdr_sr_rx_note(w, qp, sdr_imm_msg_id(p.imm), now);
	qp->st.rx_pkts++;
	qp->st.rx_bytes += p.dma_len;
	if (rc & SDR_PLACE_CHUNK)
		qp->st.chunks_done++;
	if (rc & SDR_PLACE_COMPLETE)
		sdr_host_recv_done(w, qp, slot, 0);
	else if (sdr_qp_ec(qp))
		sdr_ec_rx_data(w, qp, sdr_imm_msg_id(p.imm), sdr_imm_pkt_off(p.imm), rc, now);
out:
	rte_pktmbuf_free(m);
}
