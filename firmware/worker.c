/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Worker lcore: run to completion over its ports' RX queue, the hand-off
 * ring, its host contexts' SQ rings and its QPs' transmit engines; back off
 * (pause, then sleep) when idle so several daemons share a small machine.
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
#include "ec.h"
#include "host_sq.h"
#include "recv.h"
#include "rel.h"
#include "rx.h"
#include "send.h"
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
			fprintf(stderr, "sdr-dpu: worker %u did not answer a command in 5 s\n", worker);
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

static void list_del_qp(struct sdr_worker *w, struct sdr_qp *qp)
{
	for (struct sdr_qp **pp = &w->qps; *pp; pp = &(*pp)->next_on_worker)
		if (*pp == qp) {
			*pp = qp->next_on_worker;
			return;
		}
}

static void list_del_ctx(struct sdr_worker *w, struct sdr_hctx *c)
{
	for (struct sdr_hctx **pp = &w->ctxs; *pp; pp = &(*pp)->next_on_worker)
		if (*pp == c) {
			*pp = c->next_on_worker;
			return;
		}
}

static void connect_qp(struct sdr_qp *qp, const struct sdr_qp_info *r)
{
	struct sdr_inst *in = qp->inst;

	qp->remote = *r;
	memset(&qp->l2, 0, sizeof(qp->l2));
	memcpy(qp->l2.src_mac, in->mac, 6);
	memcpy(qp->l2.dst_mac, in->peer_mac, 6);
	qp->l2.src_ip = in->ip;
	qp->l2.dst_ip = r->ip;
	qp->l2.udp_sport = (uint16_t)(SDR_UDP_SPORT_BASE | (qp->qpn_base & 0x3FFF));
	qp->l2.ttl = 64;
	qp->state = SDR_QPS_CONNECTED;
	/* Receives posted before connect get their CTS now. */
	qp->next_rects_tsc = 0;
}

static void run_cmd(struct sdr_worker *w, struct sdr_cmd *cmd)
{
	struct sdr_hctx *c;
	struct sdr_qp *qp;

	cmd->result = 0;
	switch (cmd->type) {
	case SDR_CMD_NOP:
		break;
	case SDR_CMD_ADD_CTX:
		c = cmd->obj;
		c->next_on_worker = w->ctxs;
		w->ctxs = c;
		break;
	case SDR_CMD_DEL_CTX:
		list_del_ctx(w, cmd->obj);
		break;
	case SDR_CMD_ADD_QP:
		qp = cmd->obj;
		qp->next_on_worker = w->qps;
		w->qps = qp;
		break;
	case SDR_CMD_CONNECT_QP:
		connect_qp(cmd->obj, cmd->remote);
		break;
	case SDR_CMD_DEL_QP:
		qp = cmd->obj;
		sdr_qp_abort(w, qp, -ECANCELED);
		qp->state = SDR_QPS_DEAD;
		list_del_qp(w, qp);
		break;
	case SDR_CMD_SET_RATE:
		qp = cmd->obj;
		sdr_pacer_set(&qp->pacer, cmd->arg / 8, sdr_pace_burst(cmd->arg / 8), sdr_g.tsc_hz,
			      rte_get_tsc_cycles());
		qp->rate_bps = cmd->arg;
		if (qp->ops->set_rate)
			qp->ops->set_rate(qp, cmd->arg);
		break;
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

/* ---- the loop ---- */

/* One clock read and one bulk free per burst. */
static unsigned poll_rx(struct sdr_worker *w)
{
	struct rte_mbuf *pkts[SDR_BURST], *done[SDR_BURST];
	unsigned work = 0, nd;
	uint64_t now;

	for (unsigned i = 0; i < sdr_g.ninst; i++) {
		struct sdr_inst *in = &sdr_g.inst[i];
		uint16_t n = rte_eth_rx_burst(in->port, (uint16_t)w->idx, pkts, SDR_BURST);

		if (!n)
			continue;
		now = rte_get_tsc_cycles();
		nd = 0;
		for (uint16_t k = 0; k < n; k++) {
			if (k + 1 < n)
				rte_prefetch0(rte_pktmbuf_mtod(pkts[k + 1], void *));
			w->port[i].rx_pkts++;
			w->port[i].rx_bytes += pkts[k]->pkt_len;
			if (!sdr_rx_one(w, in, pkts[k], now))
				done[nd++] = pkts[k];
		}
		rte_pktmbuf_free_bulk(done, nd);
		work += n;
	}
	/* packets other workers received for our QPs */
	void *objs[SDR_BURST];
	unsigned n = rte_ring_dequeue_burst(w->handoff, objs, SDR_BURST, NULL);
	if (n) {
		now = rte_get_tsc_cycles();
		nd = 0;
		for (unsigned k = 0; k < n; k++) {
			struct rte_mbuf *m = objs[k];
			/* the instance index travels in the mbuf's hash field */
			if (!sdr_rx_one(w, &sdr_g.inst[m->hash.usr % sdr_g.ninst], m, now))
				done[nd++] = m;
		}
		rte_pktmbuf_free_bulk(done, nd);
	}
	return work + n;
}

int sdr_worker_main(void *arg)
{
	struct sdr_worker *w = arg;
	unsigned idle = 0;
	uint64_t hz = sdr_g.tsc_hz;
	uint64_t rects_period = (uint64_t)sdr_g.cfg.cts_resend_ms * hz / 1000;

	/* each worker paces its own TX queue at its share of the port rate */
	for (unsigned i = 0; i < sdr_g.ninst; i++)
		sdr_pacer_set(&w->port_pacer[i], sdr_g.inst[i].cfg.port_rate / 8 / sdr_g.nworkers,
			      sdr_pace_burst(sdr_g.inst[i].cfg.port_rate / 8 / sdr_g.nworkers), hz,
			      rte_get_tsc_cycles());

	while (sdr_g.running) {
		unsigned work = 0;
		void *cmd;
		uint64_t now = rte_get_tsc_cycles();

		while (rte_ring_dequeue(w->cmd, &cmd) == 0) {
			run_cmd(w, cmd);
			work++;
		}
		work += poll_rx(w);
		for (struct sdr_hctx *c = w->ctxs; c; c = c->next_on_worker) {
			if (c->ovf_n)
				sdr_cq_drain(c);
			work += sdr_host_poll(w, c, now);
			if (c->hdr)
				atomic_fetch_add_explicit(&c->hdr->heartbeat, 1, memory_order_relaxed);
		}
		for (struct sdr_qp *qp = w->qps; qp; qp = qp->next_on_worker) {
			if (qp->state != SDR_QPS_CONNECTED)
				continue;
			work += qp->ops->tx(w, qp, rte_get_tsc_cycles());
			if (qp->ncts_out)
				sdr_recv_cts_flush(w, qp);
			if (qp->nabort_out)
				sdr_send_abort_flush(w, qp);
			sdr_send_window_advance(qp);
			if (qp->ops->poll) {
				qp->ops->poll(w, qp, now);
				if (qp->state == SDR_QPS_ERROR) { /* the peer stopped answering */
					sdr_qp_abort(w, qp, -ETIMEDOUT);
					continue;
				}
			}
			if (now >= qp->next_rects_tsc) {
				if (rects_period)
					sdr_recv_cts_resend(w, qp);
				if (qp->ops->periodic)
					qp->ops->periodic(w, qp, now);
				qp->next_rects_tsc = now + (rects_period ? rects_period : hz / 50);
			}
		}
		for (unsigned i = 0; i < sdr_g.ninst; i++)
			if (w->ntxb[i]) {
				sdr_txq_flush(w, i);
				work++;
			}
		w->loops++;
		if (work) {
			idle = 0;
		} else if (++idle >= sdr_g.cfg.idle_spins && sdr_g.cfg.idle_us) {
			w->idle_sleeps++;
			rte_delay_us_sleep(sdr_g.cfg.idle_us);
		} else {
			rte_pause();
		}
	}
	sdr_ec_worker_fini(w);
	atomic_store_explicit(&w->exited, 1, memory_order_release);
	return 0;
}
