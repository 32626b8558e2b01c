/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Multipath spraying in the SR engine (sr_path.h, docs/multipath.md): ports,
 * the path of each unit, dead paths' units moved to the others, stats.
 * Layer sr/: part of the SR engine; calls only the primitives (prim/) and common/.
 */
#include <inttypes.h>

#include "sdr_rss.h"
#include "send.h"
#include "sr_desc.h"
#include "sr_path.h"

_Static_assert(SDR_SPRAY_MAX == SDR_RSS_PATHS_MAX, "one port per path");
_Static_assert(SDR_SPRAY_MAX == SDR_PATHS_MAX, "the ABI's limit is the policy's");

void sdr_sr_path_setup(struct sdr_sr *sr, const struct sdr_qp *qp)
{
	unsigned n = qp->paths ? qp->paths : sdr_sr_cfg.paths;

	sr->spray_want = (uint8_t)(n < 1 ? 1 : n > SDR_SPRAY_MAX ? SDR_SPRAY_MAX : n);
	sr->spray.n = 0;
	sr->spray_qpn = 0;
}

static void ports(struct sdr_qp *qp, struct sdr_sr *sr, uint64_t now)
{
	uint16_t sp[SDR_SPRAY_MAX];
	/* a path's RTT before its first sample: the QP's, else the initial RTO;
	 * a stall is never shorter than 4 ACK periods or 2 ms */
	uint64_t rtt = sr->rtt.samples ? sr->rtt.srtt : sdr_ms_cycles(sdr_sr_cfg.init_rto_ms);
	uint64_t floor = 4 * sr->ack_period;

	if (floor < sdr_ms_cycles(2))
		floor = sdr_ms_cycles(2);
	for (unsigned k = 0; k < sr->spray_want; k++)
		sp[k] = sdr_rss_sport_path(qp->remote.qpn, k);
	sdr_spray_init(&sr->spray, sr->spray_want, sp, floor, rtt, now);
	sr->spray_qpn = qp->remote.qpn;
	sr->npaths = sr->spray.n; /* (rack: loss detection per path) */
	sr->spray.cur = (uint8_t)sdr_spray_pick(&sr->spray, now);
	qp->tx_sport = sr->spray.p[sr->spray.cur].sport;
}

/* The peer has not answered path @p p's units: every unit of it in the
 * timer queue goes to the retransmit queue (the next path). */
static void requeue(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_sr *sr, unsigned p)
{
	const struct sdr_tq *t = &sr->timers;

	for (uint32_t i = 0; i < t->n; i++) {
		const struct sdr_tq_ent *x = &t->e[(t->head + i) % t->cap];
		struct sdr_smsg *sm = sdr_send_outstanding(qp, x->seq);
		struct sdr_sr_send *ss = sdr_sr_send_of(sr, x->seq);
		struct sdr_sr_unit *u;

		if (!sm || !ss->u || x->chunk >= ss->nunits)
			continue;
		u = &ss->u[x->chunk];
		if (u->acked || u->inq || u->path != p || u->tx_tsc != x->tsc)
			continue;
		if (sdr_tq_push(&sr->retxq, x->seq, x->chunk, 0)) {
			w->ctr[SDR_CTR_sr_nomem]++;
			return; /* the timers bring the rest */
		}
		u->inq = 1;
		u->lost_by = SDR_SR_LOST_OTHER; /* (moved: not a loss RACK found) */
		sr->spray.p[p].moved++;
	}
}

void sdr_sr_path_tx_begin(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_sr *sr, uint64_t now)
{
	uint32_t gone;

	if (sr->spray_want <= 1 || qp->state != SDR_QPS_CONNECTED)
		return;
	if (sr->spray.n <= 1 || sr->spray_qpn != qp->remote.qpn)
		ports(qp, sr, now);
	/* (a path is not found stalled by the time the worker missed: sdr_sr_late()) */
	gone = sdr_spray_poll(&sr->spray, now,
			      sr->rtt.rto + (now < sr->late_until ? sr->late_len : 0));
	if (gone) /* one loss for the controller, not one per unit moved */
		sdr_sr_cc_lost(&sr->cc, now, 1, 0);
	for (unsigned p = 0; gone; p++, gone >>= 1)
		if (gone & 1)
			requeue(w, qp, sr, p);
	/* the current path may have been suspended */
	if (sr->spray.p[sr->spray.cur].state != SDR_SPRAY_ACTIVE &&
	    !sr->spray.p[sr->spray.cur].probing) {
		sr->spray.cur = (uint8_t)sdr_spray_pick(&sr->spray, now);
		qp->tx_sport = sr->spray.p[sr->spray.cur].sport;
	}
}

void sdr_sr_path_first_sent(struct sdr_qp *qp, struct sdr_sr *sr, struct sdr_sr_unit *u,
			    uint64_t now)
{
	if (sr->spray.n <= 1)
		return;
	u->path = sr->spray.cur;
	sdr_spray_sent(&sr->spray, u->path, now);
	sr->spray.cur = (uint8_t)sdr_spray_pick(&sr->spray, now);
	qp->tx_sport = sr->spray.p[sr->spray.cur].sport;
}

void sdr_sr_path_retx_start(struct sdr_qp *qp, struct sdr_sr *sr, uint64_t now)
{
	if (sr->spray.n <= 1)
		return;
	sr->spray_retx = (uint8_t)sdr_spray_pick(&sr->spray, now);
	qp->tx_sport = sr->spray.p[sr->spray_retx].sport;
}

void sdr_sr_path_retx_sent(struct sdr_qp *qp, struct sdr_sr *sr, struct sdr_sr_unit *u,
			   uint64_t now)
{
	(void)qp;
	if (sr->spray.n <= 1)
		return;
	u->path = sr->spray_retx;
	sdr_spray_sent(&sr->spray, u->path, now);
}

static uint64_t cyc_us(uint64_t c)
{
	return sdr_g.tsc_hz ? c * 1000000 / sdr_g.tsc_hz : 0;
}

/* a path's share of the units sent, in per mille */
static unsigned share(const struct sdr_sr *sr, unsigned p)
{
	uint64_t all = 0;

	for (unsigned i = 0; i < sr->spray.n; i++)
		all += sr->spray.p[i].units;
	return all ? (unsigned)(sr->spray.p[p].units * 1000 / all) : 0;
}

/* nothing sent on any path yet (a QP that only receives) */
static int idle(const struct sdr_sr *sr)
{
	for (unsigned i = 0; i < sr->spray.n; i++)
		if (sr->spray.p[i].units)
			return 0;
	return 1;
}

void sdr_sr_path_print(FILE *f, const struct sdr_sr *sr)
{
	if (sr->spray.n <= 1 || idle(sr))
		return;
	for (unsigned i = 0; i < sr->spray.n; i++) {
		const struct sdr_spray_path *q = &sr->spray.p[i];

		fprintf(f,
			"    path %u (port %u): %s weight %u share %u.%u %% | srtt %" PRIu64
			" us min %" PRIu64 " us | frames %" PRIu64 " retx %" PRIu64
			" | units %" PRIu64 " acked %" PRIu64 " lost %" PRIu64 " ce %" PRIu64
			" | loss %u.%u %% ce %u.%u %% | suspends %" PRIu64 " probes %" PRIu64
			" moved %" PRIu64 "\n",
			i, q->sport, sdr_spray_state_name(q->state), q->weight, share(sr, i) / 10,
			share(sr, i) % 10, cyc_us(q->srtt), cyc_us(q->min_rtt), q->frames,
			q->retx_frames, q->units, q->acked, q->lost, q->ce, q->loss_milli / 10,
			q->loss_milli % 10, q->ce_milli / 10, q->ce_milli % 10, q->suspends,
			q->probes_sent, q->moved);
	}
}

void sdr_sr_path_json(FILE *f, const struct sdr_sr *sr)
{
	if (sr->spray.n <= 1)
		return;
	fprintf(f, ",\"paths\":[");
	for (unsigned i = 0; i < sr->spray.n; i++) {
		const struct sdr_spray_path *q = &sr->spray.p[i];

		fprintf(f,
			"%s{\"port\":%u,\"state\":\"%s\",\"weight\":%u,\"share\":%.3f,\"srtt_us\":"
			"%" PRIu64 ",\"min_rtt_us\":%" PRIu64 ",\"frames\":%" PRIu64
			",\"retx_frames\":%" PRIu64 ",\"units\":%" PRIu64 ",\"acked\":%" PRIu64
			",\"lost\":%" PRIu64 ",\"ce\":%" PRIu64 ",\"loss\":%.3f,\"ce_frac\":%.3f"
			",\"suspends\":%" PRIu64 ",\"probes\":%" PRIu64 ",\"moved\":%" PRIu64 "}",
			i ? "," : "", q->sport, sdr_spray_state_name(q->state), q->weight,
			share(sr, i) / 1000.0, cyc_us(q->srtt), cyc_us(q->min_rtt), q->frames,
			q->retx_frames, q->units, q->acked, q->lost, q->ce, q->loss_milli / 1000.0,
			q->ce_milli / 1000.0, q->suspends, q->probes_sent, q->moved);
	}
	fprintf(f, "]");
}

void sdr_sr_path_kv(const struct sdr_sr *sr, const struct sdr_kv *kv)
{
	char k[32];

	if (sr->spray.n <= 1)
		return;
	for (unsigned i = 0; i < sr->spray.n; i++) {
		const struct sdr_spray_path *q = &sr->spray.p[i];

		snprintf(k, sizeof(k), "path%u_frames", i);
		kv->u64(kv->arg, k, q->frames);
		snprintf(k, sizeof(k), "path%u_retx_frames", i);
		kv->u64(kv->arg, k, q->retx_frames);
		snprintf(k, sizeof(k), "path%u_srtt_us", i);
		kv->u64(kv->arg, k, cyc_us(q->srtt));
		snprintf(k, sizeof(k), "path%u_min_rtt_us", i);
		kv->u64(kv->arg, k, cyc_us(q->min_rtt));
		snprintf(k, sizeof(k), "path%u_active", i);
		kv->u64(kv->arg, k, q->state == SDR_SPRAY_ACTIVE);
	}
}
