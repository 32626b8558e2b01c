/* SPDX-License-Identifier: BSD-3-Clause */
/* Receive path: parse and validate every frame (every frame is hostile),
 * find its QP, then hand data and reliability control messages to the QP's
 * scheme (rel.h); clear-to-send, ABORT and QP-CLOSED are the send window's
 * and the receive table's business for every scheme. A packet for a QP
 * this DPU destroyed is answered from its tombstone (sdr_tomb.h).
 * Layer loop/: the worker and its stages; calls schemes (rel/) and what lies below them. */
#include <errno.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_ring.h>

#include <rte_mbuf.h>

#include "cq.h"
#include "rel.h"
#include "rx.h"
#include "sdr_tomb.h"
#include "send.h"
#include "txq.h"

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
	m = sdr_txq_alloc(w, in);
	if (!m)
		return;
	memcpy(rte_pktmbuf_mtod(m, void *), reply, n);
	m->data_len = m->pkt_len = (uint32_t)n;
	sdr_txq_enqueue(w, in, m);
}

/* The peer aborted a send before (all of) its data went out: complete the
 * receive it was matched with, with the peer's status. */
static void rx_abort(struct sdr_worker *w, struct sdr_qp *qp, const uint8_t *msg,
		     const struct sdr_ctrl_hdr *h, uint64_t now)
{
	struct sdr_abort_entry e;

	qp->st.aborts_rx++;
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
		qp->rq.slot[idx].aborted = 1; /* (no CTS for it again) */
		qp->ops->recv_done(w, qp, idx, e.status, now);
	}
}

/* The peer's QP is gone: its DPU's tombstone answered (docs/reliability.md
 * "Faults: link outages"). The sends it received whole complete as its FULL
 * would have completed them; every other send and receive completes
 * -ECONNRESET (worker.c: visit(), in this loop), and later posts fail -ENOTCONN
 * (the error state). */
static void rx_closed(struct sdr_worker *w, struct sdr_qp *qp, const uint8_t *msg)
{
	struct sdr_closed_msg c;

	if (sdr_ctrl_closed_decode(msg, &c)) {
		w->ctr[SDR_CTR_ctrl_bad]++;
		return;
	}
	sdr_send_window_advance(qp);
	for (uint32_t seq = qp->ack_cursor; seq != qp->send_next; seq++) {
		struct sdr_smsg *sm = &qp->smsg[sdr_seq_msg_id(seq)];

		if (sm->state != SDR_SM_QUEUED || sm->seq != seq || !sdr_closed_full(&c, seq))
			continue;
		qp->st.closed_full++;
		sdr_cq_send(w, qp, sm);
	}
	qp->st.peer_closed++;
	qp->error_status = -ECONNRESET;
	qp->state = SDR_QPS_ERROR; /* the worker's visit in this loop aborts it */
}

/* A packet for a QP this DPU destroyed, from that QP's peer: answer with
 * QP-CLOSED, keyed with the peer's control key (at most once per
 * SDR_TOMB_GAP_MS per tombstone; never a QP-CLOSED, which two tombstones
 * would bounce forever: one is the peer's own close crossing this one, both
 * ends destroyed at once, counted tomb_closed). @return 1 when a tombstone
 * took the packet. */
static int rx_tomb(struct sdr_worker *w, struct sdr_inst *in, const struct sdr_parsed *p, int ctrl,
		   uint64_t now)
{
	struct sdr_tomb *t;
	struct sdr_tomb_data d;
	struct sdr_ctrl_hdr h;
	struct rte_mbuf *m;
	size_t n;

	if (!in->tombs)
		return 0;
	t = &in->tombs[(p->dest_qpn - in->qpn_first) / sdr_g.cfg.generations];
	if (!sdr_tomb_read(t, &d) || p->src_ip != d.remote_ip)
		return 0;
	if (ctrl) {
		if (sdr_ctrl_hdr_decode(p->payload, p->payload_len, &h) ||
		    h.src_qpn != d.remote_qpn)
			return 0;
		if (h.type == SDR_CTRL_CLOSED) {
			w->ctr[SDR_CTR_tomb_closed]++;
			return 1;
		}
	}
	w->ctr[SDR_CTR_tomb_pkts]++;
	if (!sdr_tomb_turn(t, now, sdr_ms_cycles(SDR_TOMB_GAP_MS)) || !(m = sdr_txq_alloc(w, in)))
		return 1;
	n = sdr_ctrl_closed_encode(rte_pktmbuf_mtod(m, uint8_t *) + SDR_CTRL_HDR_LEN, d.qpn_base,
				   &d.closed);
	sdr_txq_ctrl_to(w, in, &d.l2, d.remote_qpn, d.remote_key, m, n);
	w->ctr[SDR_CTR_closed_tx]++;
	return 1;
}

static void rx_ctrl(struct sdr_worker *w, struct sdr_qp *qp, const struct sdr_parsed *p,
		    uint64_t now)
{
	struct sdr_ctrl_hdr h;

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
	if (h.type == SDR_CTRL_CTS)
		sdr_send_rx_cts(w, qp, p->payload, &h, now);
	else if (h.type == SDR_CTRL_ABORT)
		rx_abort(w, qp, p->payload, &h, now);
	else if (h.type == SDR_CTRL_CLOSED)
		rx_closed(w, qp, p->payload);
	else
		qp->ops->rx_ctrl(w, qp, &h, p->payload, p->payload_len, now);
}

/* Before its ICRC is checked: may the scheme drop this control frame on its
 * header (parity nobody needs)? Only a frame for a connected QP this worker
 * owns, from its peer, with its key; it changes nothing but a drop counter
 * (docs/security.md). Otherwise the frame takes the normal path. */
static int rx_ctrl_early(struct sdr_worker *w, struct sdr_inst *in, const struct sdr_parsed *p)
{
	struct sdr_ctrl_hdr h;
	const struct sdr_qp *qp;
	uint32_t gen;

	if (p->dst_ip != in->ip || memcmp(p->dst_mac, in->mac, 6))
		return 0;
	qp = sdr_qp_lookup(in, p->dest_qpn, sdr_g.cfg.generations, &gen);
	if (!qp || qp->worker != w->idx || qp->state != SDR_QPS_CONNECTED ||
	    !qp->ops->rx_ctrl_early || p->src_ip != qp->remote.ip ||
	    sdr_ctrl_hdr_decode(p->payload, p->payload_len, &h) || h.key != qp->ctrl_key ||
	    h.src_qpn != qp->remote.qpn)
		return 0;
	return qp->ops->rx_ctrl_early(w, qp, &h, p->payload, p->payload_len);
}

/* Parse a frame in three steps (common/sdr_wire.h): headers, the ICRC in
 * one pass over the frame in place (the mbuf is ours; every byte is
 * restored), then the RETH, which nothing believes before the ICRC. Between
 * the first two the frame's headers are known and nothing of it is
 * verified: a control frame its scheme can drop on its header (unneeded
 * parity, rx_ctrl_early()) is dropped there, before the ICRC is paid for;
 * *early says so. */
static enum sdr_parse_result rx_parse(struct sdr_worker *w, struct sdr_inst *in, uint8_t *f,
				      size_t len, struct sdr_parsed *p, int *early)
{
	enum sdr_parse_result r = sdr_parse_hdr(f, len, p);

	*early = 0;
	if (r != SDR_PARSE_OK_DATA && r != SDR_PARSE_OK_CTRL)
		return r;
	if (r == SDR_PARSE_OK_CTRL && rx_ctrl_early(w, in, p)) {
		*early = 1;
		return r;
	}
	if (sdr_g.cfg.icrc && !sdr_parse_icrc_ok(f, p))
		return SDR_PARSE_BAD_ICRC;
	return r == SDR_PARSE_OK_CTRL ? r : sdr_parse_reth(p);
}

int sdr_rx_one(struct sdr_worker *w, struct sdr_inst *in, struct rte_mbuf *m, uint64_t now)
{
	uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);
	struct sdr_parsed p;
	enum sdr_parse_result r;
	struct sdr_qp *qp;
	uint32_t gen;
	int early;

	if (m->nb_segs != 1) {
		w->ctr[SDR_CTR_multiseg]++;
		goto out;
	}
	r = rx_parse(w, in, f, m->data_len, &p, &early);
	if (early)
		goto out;
	if (r == SDR_PARSE_ARP) {
		rx_arp(w, in, f, m->data_len);
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
		else if (!rx_tomb(w, in, &p, r == SDR_PARSE_OK_CTRL, now))
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
		return 1;
	}
	if (qp->state != SDR_QPS_CONNECTED) {
		w->ctr[SDR_CTR_qp_not_ready]++;
		goto out;
	}
	if (p.src_ip != qp->remote.ip) {
		w->ctr[SDR_CTR_wrong_peer]++;
		goto out;
	}
	sdr_qp_touch(w, qp); /* the worker visits it in this loop (worker.c) */
	if (r == SDR_PARSE_OK_CTRL) {
		rx_ctrl(w, qp, &p, now);
		goto out;
	}
	/* a 0x2A packet's slot and offset come from its VA and the QP's M */
	if (sdr_data_locate(&p, qp->rq.mtu, qp->rq.max_msg)) {
		w->ctr[SDR_CTR_bad_va]++;
		goto out;
	}
	qp->ops->rx_data(w, qp, &p, gen, now);
out:
	return 0; /* the caller frees it, with the rest of its burst */
}
