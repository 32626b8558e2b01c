/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Worker lcore: run to completion over its ports' RX queue, the hand-off
 * ring, its host contexts' SQ rings and the QPs that have something to do;
 * back off (pause, then sleep) when idle so several daemons share a small
 * machine.
 *
 * Which QPs a loop visits (docs/architecture.md "Pacing"): those the pacer
 * hands out (frames to send, their departure time and their port's come:
 * common/sdr_wheel.h), those touched in this loop (a packet, a descriptor,
 * a command: sdr_qp_touch()) and those whose timer deadline has come (the
 * scheme's next_due, the periodic CTS re-send), each at most once. A QP with
 * nothing to do costs nothing, however many there are.
 * Layer loop/: the worker and its stages; calls schemes (rel/) and what lies below them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_cycles.h>
#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_pause.h>

#include "cq.h"
#include "sdr_rss.h"
#include "host_sq.h"
#include "recv.h"
#include "rel.h"
#include "rx.h"
#include "send.h"
#include "sr_qp.h"
#include "txq.h"
#include "worker.h"

/* ---- abort: every send and receive of a QP completes with @status ---- */

static void abort_recv_cb(void *arg, struct sdr_rslot *s)
{
	void **a = arg;
	struct sdr_worker *w = a[0];
	struct sdr_qp *qp = a[1];

	qp->ops->recv_done(w, qp, sdr_seq_msg_id(s->seq), *(int32_t *)a[2], *(uint64_t *)a[3]);
}

void sdr_qp_abort(struct sdr_worker *w, struct sdr_qp *qp, int32_t status)
{
	uint64_t now = rte_get_tsc_cycles();
	void *arg[4] = {w, qp, &status, &now};

	sdr_send_window_advance(qp);
	for (uint32_t seq = qp->ack_cursor; seq != qp->send_next; seq++) {
		struct sdr_smsg *sm = &qp->smsg[sdr_seq_msg_id(seq)];

		if (sm->state != SDR_SM_QUEUED || sm->seq != seq)
			continue; /* already completed */
		sm->status = status;
		sdr_cq_send(w, qp, sm);
	}
	qp->tx_cursor = qp->ack_cursor = qp->send_next;
	sdr_rq_abort_all(&qp->rq, abort_recv_cb, arg);
	qp->ncts_out = 0;
	qp->nabort_out = 0;
	if (qp->ops->reset)
		qp->ops->reset(qp);
}

/* A QP its host destroyed (@p why: SDR_CLOSED_*) tells its peer at once:
 * one QP-CLOSED (docs/reliability.md "Faults: link outages"), so that a
 * peer with nothing to retransmit (its sends wait for clear-to-send) learns
 * it too; the tombstone (ctrl_qp.c) answers what the peer sends later. */
static void closed_announce(struct sdr_worker *w, struct sdr_qp *qp, uint8_t why)
{
	struct sdr_closed_msg c = {.recv_next = qp->rq.next_seq, .reason = why};
	struct rte_mbuf *m;

	if (qp->state != SDR_QPS_CONNECTED && qp->state != SDR_QPS_ERROR)
		return; /* no peer */
	if (qp->reliability != SDR_REL_NONE)
		sdr_sr_qp_closed_full(qp, &c);
	m = sdr_txq_alloc(w, qp->inst);
	if (!m)
		return; /* the tombstone answers the peer's next packet */
	sdr_txq_ctrl(w, qp, m,
		     sdr_ctrl_closed_encode(rte_pktmbuf_mtod(m, uint8_t *) + SDR_CTRL_HDR_LEN,
					    qp->qpn_base, &c));
	w->ctr[SDR_CTR_closed_tx]++;
}

/* ---- commands from the main lcore ---- */

static void run_cmd(struct sdr_worker *w, struct sdr_cmd *cmd);

int sdr_worker_call(unsigned worker, struct sdr_cmd *cmd)
{
	struct sdr_worker *w = &sdr_g.workers[worker];
	uint64_t deadline = rte_get_tsc_cycles() + 5 * sdr_g.tsc_hz;

	atomic_store(&cmd->done, 0);
	cmd->result = 0;
	if (sdr_g.workers_stopped) {
		/* shutdown: the workers are gone, nobody races with us */
		run_cmd(w, cmd);
		return cmd->result;
	}
	while (rte_ring_enqueue(w->cmd, cmd)) {
		if (rte_get_tsc_cycles() > deadline)
			return -ETIMEDOUT;
		rte_delay_us_sleep(100);
	}
	while (!atomic_load_explicit(&cmd->done, memory_order_acquire)) {
		if (atomic_load_explicit(&w->exited, memory_order_acquire)) {
			/* Shutdown began (SIGINT) while the main lcore was still
			 * tearing something down: the worker left its loop and
			 * will not read its ring again, so run what is queued
			 * (our command included) here; nobody races with us. */
			void *obj;
			while (rte_ring_dequeue(w->cmd, &obj) == 0)
				run_cmd(w, obj);
			continue;
		}
		if (rte_get_tsc_cycles() > deadline) {
			/* The worker is wedged; the command stays owned by it, so
			 * callers must not free @cmd: they allocate it statically
			 * or leak it on this path. */
			fprintf(stderr, "sdr-dpu: worker %u did not answer a command in 5 s\n",
				worker);
			return -ETIMEDOUT;
		}
		rte_delay_us_sleep(50);
	}
	return cmd->result;
}

void sdr_worker_quiesce_all(void)
{
	for (unsigned i = 0; i < sdr_g.nworkers; i++) {
		struct sdr_cmd *c = calloc(1, sizeof(*c));
		c->type = SDR_CMD_NOP;
		if (sdr_worker_call(i, c) != -ETIMEDOUT)
			free(c);
	}
}

static void list_del_ctx(struct sdr_hctx *c, struct sdr_worker *w)
{
	for (struct sdr_hctx **pp = &w->ctxs; *pp; pp = &(*pp)->next_on_worker)
		if (*pp == c) {
			*pp = c->next_on_worker;
			return;
		}
}

/* ---- the QPs of a worker ---- */

/* @p qp's flow out of the pacer and the timer wheel (added, deleted, or
 * failed) */
static void flow_clear(struct sdr_worker *w, struct sdr_qp *qp, uint32_t flow, uint64_t now)
{
	sdr_sched_flow_reset(&w->sched, flow, qp->inst->idx, now);
	sdr_wheel_unlink(&w->timers, flow);
}

void sdr_worker_qp_add(struct sdr_worker *w, struct sdr_qp *qp, uint64_t now)
{
	uint32_t flow = sdr_qp_flow(qp);
	uint64_t rate = qp->rate_bps / 8;

	qp->next_on_worker = w->qps;
	w->qps = qp;
	w->flow_qp[flow] = qp;
	flow_clear(w, qp, flow, now);
	sdr_sched_flow_rate(&w->sched, flow, rate, sdr_pace_burst(rate));
}

static void qp_del(struct sdr_worker *w, struct sdr_qp *qp, uint64_t now)
{
	uint32_t flow = sdr_qp_flow(qp);

	for (struct sdr_qp **pp = &w->qps; *pp; pp = &(*pp)->next_on_worker)
		if (*pp == qp) {
			*pp = qp->next_on_worker;
			break;
		}
	flow_clear(w, qp, flow, now);
	w->flow_qp[flow] = NULL;
}

void sdr_worker_qp_rate(struct sdr_worker *w, struct sdr_qp *qp, uint64_t rate_bps)
{
	uint64_t rate = rate_bps / 8;

	/* at once: the pacer moves the QP's next departure */
	qp->rate_bps = rate_bps;
	sdr_sched_flow_rate(&w->sched, sdr_qp_flow(qp), rate, sdr_pace_burst(rate));
	if (qp->ops->set_rate)
		qp->ops->set_rate(qp, rate_bps);
	sdr_qp_touch(w, qp);
}

void sdr_worker_qp_connect(struct sdr_worker *w, struct sdr_qp *qp, const struct sdr_qp_info *r)
{
	struct sdr_inst *in = qp->inst;

	qp->remote = *r;
	memset(&qp->l2, 0, sizeof(qp->l2));
	memcpy(qp->l2.src_mac, in->mac, 6);
	memcpy(qp->l2.dst_mac, in->peer_mac, 6);
	qp->l2.src_ip = in->ip;
	qp->l2.dst_ip = r->ip;
	/* the receiver's QPN picks the source port: where its port steers by
	 * it, the packets land on the queue of the QP's worker (sdr_rss.h) */
	qp->l2.udp_sport = sdr_rss_sport(r->qpn);
	qp->l2.ttl = 64;
	sdr_hdr_tmpl_init(&qp->tmpl, &qp->l2);
	qp->state = SDR_QPS_CONNECTED;
	/* Receives posted before connect get their CTS now. */
	qp->next_rects_tsc = 0;
	sdr_qp_touch(w, qp);
}

/* The context's completion FIFO grew (ctrl_qp.c allocated the room for one
 * more QP's completions): move what waits into it, in order. The old
 * buffer goes back to the main lcore in cmd->aux. */
static void ovf_swap(struct sdr_hctx *c, struct sdr_cmd *cmd)
{
	struct sdr_cqe *nb = cmd->aux;

	for (uint32_t k = 0; k < c->ovf_n; k++)
		nb[k] = c->ovf[(c->ovf_head + k) % c->ovf_cap];
	cmd->aux = c->ovf;
	c->ovf = nb;
	c->ovf_head = 0;
	c->ovf_cap = (uint32_t)cmd->arg;
}

static void run_cmd(struct sdr_worker *w, struct sdr_cmd *cmd)
{
	uint64_t now = rte_get_tsc_cycles();
	struct sdr_hctx *c;
	struct sdr_qp *qp;

	cmd->result = 0;
	switch (cmd->type) {
	case SDR_CMD_NOP: break;
	case SDR_CMD_ADD_CTX:
		c = cmd->obj;
		c->next_on_worker = w->ctxs;
		w->ctxs = c;
		break;
	case SDR_CMD_DEL_CTX:
		sdr_cq_flush(w, cmd->obj);
		list_del_ctx(cmd->obj, w);
		break;
	case SDR_CMD_ADD_QP:
		qp = cmd->obj;
		if (cmd->aux)
			ovf_swap(qp->ctx, cmd);
		sdr_worker_qp_add(w, qp, now);
		break;
	case SDR_CMD_CONNECT_QP: sdr_worker_qp_connect(w, cmd->obj, cmd->remote); break;
	case SDR_CMD_DEL_QP:
		qp = cmd->obj;
		if (cmd->arg & SDR_DEL_QP_QUIET) {
			sdr_cq_flush(w, qp->ctx); /* what completed before goes out */
			qp->ctx->quiet = 1;
		}
		sdr_qp_abort(w, qp, -ECANCELED);
		if (cmd->arg & 0xff) /* (SDR_CLOSED_*) */
			closed_announce(w, qp, (uint8_t)cmd->arg);
		sdr_cq_flush(w, qp->ctx);
		qp->state = SDR_QPS_DEAD;
		qp_del(w, qp, now);
		break;
	case SDR_CMD_SET_RATE: sdr_worker_qp_rate(w, cmd->obj, cmd->arg); break;
	case SDR_CMD_MR_DEREG: {
		struct sdr_mr_ent *mr = cmd->obj;
		if (mr->refcnt)
			cmd->result = -EBUSY;
		else
			atomic_store_explicit(&mr->valid, 0, memory_order_release);
		break;
	}
	}
	atomic_store_explicit(&cmd->done, 1, memory_order_release);
}

/* ---- start-up ---- */

int sdr_worker_init(struct sdr_worker *w, uint64_t now)
{
	uint64_t best = UINT64_MAX;

	w->flows = calloc(SDR_FLOWS, sizeof(*w->flows));
	w->tflows = calloc(SDR_FLOWS, sizeof(*w->tflows));
	w->flow_qp = calloc(SDR_FLOWS, sizeof(*w->flow_qp));
	w->touched = calloc(SDR_FLOWS, sizeof(*w->touched));
	if (sdr_g.cfg.pace_trace) {
		w->trace_cap = 1;
		while (w->trace_cap < sdr_g.cfg.pace_trace)
			w->trace_cap <<= 1;
		w->trace = calloc(w->trace_cap, sizeof(*w->trace));
	}
	if (!w->flows || !w->tflows || !w->flow_qp || !w->touched ||
	    (sdr_g.cfg.pace_trace && !w->trace)) {
		sdr_worker_fini(w);
		return -ENOMEM;
	}
	/* (ports: the instances; the engine rig sets sdr_g.ninst itself) */
	sdr_sched_init(&w->sched, w->flows, SDR_FLOWS,
		       sdr_g.cfg.ninst > sdr_g.ninst ? sdr_g.cfg.ninst : sdr_g.ninst, sdr_g.tsc_hz,
		       SDR_PACE_SHIFT, now);
	sdr_wheel_init(&w->timers, w->tflows, SDR_FLOWS, sdr_g.tsc_hz, SDR_TIMER_SHIFT, now);
	/* each worker paces its own TX queue at its share of the port rate */
	for (unsigned i = 0; i < sdr_g.cfg.ninst; i++) {
		uint64_t rate = sdr_g.cfg.inst[i].port_rate / 8 /
				(sdr_g.nworkers ? sdr_g.nworkers : 1);
		sdr_sched_port_rate(&w->sched, i, rate, sdr_pace_burst(rate));
	}
	/* what two TSC reads cost (taken off the pacer's sampled cycles) */
	for (int k = 0; k < 64; k++) {
		uint64_t a = rte_get_tsc_cycles(), b = rte_get_tsc_cycles();
		if (b - a < best)
			best = b - a;
	}
	w->pace_tsc_cost = (unsigned)best;
	w->pace_sample_max = sdr_us_cycles(20);
	w->rects_period = (uint64_t)sdr_g.cfg.cts_resend_ms * sdr_g.tsc_hz / 1000;
	return 0;
}

void sdr_worker_fini(struct sdr_worker *w)
{
	free(w->flows);
	free(w->tflows);
	free(w->flow_qp);
	free(w->touched);
	free(w->trace);
	w->flows = w->tflows = NULL;
	w->flow_qp = w->touched = NULL;
	w->trace = NULL;
}

/* ---- the loop ---- */

/* Frames of a burst: the next frame's headers are fetched while this one
 * is handled (its mbuf two ahead); one bulk free. */
static void rx_burst(struct sdr_worker *w, struct rte_mbuf **pkts, unsigned n, int from_ring,
		     struct sdr_inst *in, uint64_t now)
{
	struct rte_mbuf *done[SDR_BURST];
	unsigned nd = 0;

	for (unsigned k = 0; k < n; k++) {
		struct rte_mbuf *m = pkts[k];
		struct sdr_inst *at = in;

		if (k + 2 < n)
			rte_prefetch0(pkts[k + 2]);
		if (k + 1 < n)
			rte_prefetch0(rte_pktmbuf_mtod(pkts[k + 1], void *));
		if (from_ring) /* the instance index travels in the mbuf's hash field */
			at = &sdr_g.inst[m->hash.usr % sdr_g.ninst];
		else {
			w->port[in->idx].rx_pkts++;
			w->port[in->idx].rx_bytes += m->pkt_len;
		}
		if (!sdr_rx_one(w, at, m, now))
			done[nd++] = m;
	}
	rte_pktmbuf_free_bulk(done, nd);
}

/* RX bursts of every port, then the hand-off ring. A burst that brought
 * frames reads the clock again, and the rest of the pass goes on with that
 * time (*now): a worker descheduled between the pass's clock read and the
 * burst (a loaded host, milliseconds) would otherwise date an ACK before it
 * arrived, and an RTT sample shorter than the path's propagation delay
 * would set the controller's base RTT below it for its whole window (every
 * later interval then looks queued: delay cuts down to the floor). */
static unsigned poll_rx(struct sdr_worker *w, uint64_t *now)
{
	struct rte_mbuf *pkts[SDR_BURST];
	unsigned work = 0, n;

	for (unsigned i = 0; i < sdr_g.ninst; i++) {
		unsigned b = 0;

		do {
			n = rte_eth_rx_burst(sdr_g.inst[i].port, (uint16_t)w->idx, pkts, SDR_BURST);
			if (n) {
				*now = rte_get_tsc_cycles();
				rx_burst(w, pkts, n, 0, &sdr_g.inst[i], *now);
			}
			work += n;
		} while (n == SDR_BURST && ++b < SDR_RX_BURSTS);
	}
	/* packets other workers received for our QPs */
	n = rte_ring_dequeue_burst(w->handoff, (void **)pkts, SDR_BURST, NULL);
	if (n) {
		w->handoff_rx += n;
		*now = rte_get_tsc_cycles();
		rx_burst(w, pkts, n, 1, NULL, *now);
	}
	return work + n;
}

/* Everything a QP may have to do in a loop: transmit (through the pacer),
 * clear-to-send and ABORT messages, the send window, the scheme's timers,
 * the periodic CTS re-send. Then it is filed again: in the pacer while it
 * has frames left, in the timer wheel at its next deadline. */
static unsigned visit(struct sdr_worker *w, struct sdr_qp *qp, uint64_t now, unsigned via)
{
	uint32_t flow = sdr_qp_flow(qp);
	uint64_t due, t;
	unsigned sent;

	qp->visit_loop = w->loops + 1;
	if (qp->state != SDR_QPS_CONNECTED) {
		/* the peer's QP-CLOSED (rx.c) put it in the error state: what
		 * is outstanding completes with its status, once */
		if (qp->state == SDR_QPS_ERROR && qp->error_status &&
		    (qp->ack_cursor != qp->send_next || qp->rq.nposted)) {
			sdr_qp_abort(w, qp, qp->error_status);
			flow_clear(w, qp, flow, now);
		}
		return 0;
	}
	w->visits[via]++;
	w->sched.stall = 0;
	sent = qp->ops->tx(w, qp, now);
	t = sdr_pace_t0(w);
	sdr_sched_done(&w->sched, flow, w->sched.stall || sent >= SDR_BURST);
	sdr_pace_t1(w, t);
	if (qp->ncts_out)
		sdr_recv_cts_flush(w, qp);
	if (qp->nabort_out)
		sdr_send_abort_flush(w, qp);
	sdr_send_window_advance(qp);
	if (qp->ops->poll) {
		qp->ops->poll(w, qp, now);
		if (qp->state == SDR_QPS_ERROR) { /* stalled past its outage horizon */
			sdr_qp_abort(w, qp, -ETIMEDOUT);
			flow_clear(w, qp, flow, now);
			return sent;
		}
	}
	if (now >= qp->next_rects_tsc) {
		if (w->rects_period)
			sdr_recv_cts_resend(w, qp, now);
		if (qp->ops->periodic)
			qp->ops->periodic(w, qp, now);
		qp->next_rects_tsc = now + (w->rects_period ? w->rects_period : sdr_g.tsc_hz / 50);
	}
	/* the next visit that no event brings: the scheme's timers, and the
	 * periodic re-send while receives are posted */
	due = qp->ops->next_due ? qp->ops->next_due(qp, now) : UINT64_MAX;
	if (qp->rq.nposted && qp->next_rects_tsc < due)
		due = qp->next_rects_tsc;
	if (!qp->rq.nposted && qp->restored) {
		uint64_t idle = sdr_recv_idle_cts_due(qp, now);

		if (idle != UINT64_MAX && idle < qp->next_rects_tsc)
			idle = qp->next_rects_tsc;
		if (idle < due)
			due = idle;
	}
	if (due == UINT64_MAX)
		sdr_wheel_unlink(&w->timers, flow);
	else
		sdr_wheel_arm(&w->timers, flow, due);
	return sent;
}

unsigned sdr_worker_qps(struct sdr_worker *w, uint64_t now)
{
	unsigned work = 0;
	uint64_t t;
	uint32_t i;

	w->loop_tx = 0;
	/* the pacer's own cycles are counted in one loop of 8 */
	w->pace_sample = (w->loops & 7) == 0;
	w->pace_polls += w->pace_sample;
	t = sdr_pace_t0(w);
	sdr_sched_begin(&w->sched, now);
	sdr_pace_t1(w, t);
	for (;;) { /* due QPs of due ports */
		t = sdr_pace_t0(w);
		i = sdr_sched_next(&w->sched, now);
		sdr_pace_t1(w, t);
		if (i == SDR_WHEEL_NIL)
			break;
		if (w->flow_qp[i])
			work += visit(w, w->flow_qp[i], now, SDR_VISIT_PACED);
	}
	for (unsigned k = 0; k < w->ntouched; k++) { /* events */
		struct sdr_qp *qp = w->touched[k];
		if (qp->visit_loop != w->loops + 1)
			work += visit(w, qp, now, SDR_VISIT_TOUCHED);
	}
	w->ntouched = 0;
	sdr_wheel_advance(&w->timers, now);
	for (uint32_t n = w->timers.nready; n; n--) { /* deadlines */
		struct sdr_qp *qp;

		i = sdr_wheel_pop(&w->timers);
		qp = w->flow_qp[i];
		if (!qp)
			continue;
		if (w->tflows[i].t_next > now || qp->visit_loop == w->loops + 1) {
			sdr_wheel_requeue(&w->timers, i); /* not yet, or seen: next loop */
			continue;
		}
		work += visit(w, qp, now, SDR_VISIT_TIMER);
	}
	w->pace_sample = 0;
	return work;
}

unsigned sdr_worker_qp_pass(struct sdr_worker *w, uint64_t now)
{
	unsigned work = sdr_worker_qps(w, now);

	for (unsigned i = 0; i < sdr_g.ninst; i++)
		work += w->ntxb[i] != 0;
	/* the TX flush, then the sends it put on the wire complete */
	sdr_send_flushed(w);
	for (struct sdr_hctx *c = w->ctxs; c; c = c->next_on_worker)
		sdr_cq_flush(w, c);
	return work;
}

/* Shutdown drain. Frames a port sent before the daemon stopped may still
 * sit in a peer port's receive queue (a ring pair: the other instance of
 * this process); left there they would be counted sent and never received,
 * and the --stats-json frame accounting would not balance. So a worker that
 * leaves its loop sends what its last pass built, stops sending (what it
 * would send now is freed, counted tx_at_exit), and, once every worker has
 * stopped sending, receives as usual until its ports are empty; then, once
 * every worker did, takes what other workers handed it. Bounded by
 * SDR_DRAIN_MS: a peer daemon that is still sending does not hold it up. */
#define SDR_DRAIN_MS 50
static void drain(struct sdr_worker *w)
{
	uint64_t end = rte_get_tsc_cycles() + sdr_ms_cycles(SDR_DRAIN_MS), now;
	struct rte_mbuf *pkts[SDR_BURST];
	unsigned empty = 0, n;

	sdr_send_flushed(w);
	w->tx_off = 1;
	atomic_fetch_add_explicit(&sdr_g.drain_tx_off, 1, memory_order_acq_rel);
	while ((now = rte_get_tsc_cycles()) < end) {
		int all = atomic_load_explicit(&sdr_g.drain_tx_off, memory_order_acquire) ==
			  sdr_g.nworkers;

		if (poll_rx(w, &now))
			empty = 0;
		else if (all && ++empty >= 2)
			break;
	}
	atomic_fetch_add_explicit(&sdr_g.drain_rx_done, 1, memory_order_acq_rel);
	while (atomic_load_explicit(&sdr_g.drain_rx_done, memory_order_acquire) < sdr_g.nworkers &&
	       rte_get_tsc_cycles() < end)
		rte_pause();
	while ((n = rte_ring_dequeue_burst(w->handoff, (void **)pkts, SDR_BURST, NULL))) {
		w->handoff_rx += n;
		rx_burst(w, pkts, n, 1, NULL, rte_get_tsc_cycles());
	}
	sdr_send_flushed(w); /* (what the frames received made: tx_at_exit) */
	w->tx_off = 0;
}

int sdr_worker_main(void *arg)
{
	struct sdr_worker *w = arg;
	unsigned idle = 0;
	uint64_t idle_cyc = sdr_us_cycles(sdr_g.cfg.idle_us);

	while (sdr_g.running) {
		unsigned work = 0;
		void *cmd;
		uint64_t now = rte_get_tsc_cycles(); /* the pass's clock (poll_rx: again) */

		while (rte_ring_dequeue(w->cmd, &cmd) == 0) {
			run_cmd(w, cmd);
			work++;
		}
		work += poll_rx(w, &now);
		for (struct sdr_hctx *c = w->ctxs; c; c = c->next_on_worker) {
			if (c->ovf_n)
				sdr_cq_drain(c);
			work += sdr_host_poll(w, c, now);
			/* (one writer: a plain store, no locked add) */
			if (c->hdr)
				atomic_store_explicit(&c->hdr->heartbeat,
						      atomic_load_explicit(&c->hdr->heartbeat,
									   memory_order_relaxed) +
							      1,
						      memory_order_relaxed);
		}
		work += sdr_worker_qp_pass(w, now);
		w->loops++;
		if (work) {
			w->work_loops++;
			idle = 0;
		} else if (++idle >= sdr_g.cfg.idle_spins && sdr_g.cfg.idle_us &&
			   !sdr_sched_pending(&w->sched, now, idle_cyc)) {
			/* (not while a paced QP is due before the sleep would end) */
			w->idle_sleeps++;
			rte_delay_us_sleep(sdr_g.cfg.idle_us);
		} else {
			rte_pause();
		}
	}
	drain(w);
	atomic_store_explicit(&w->exited, 1, memory_order_release);
	return 0;
}
