/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reliability "auto": per one-shot send, Selective Repeat or one of the
 * --auto-schemes EC codes, whichever the completion-time model predicts
 * best at the QP's measured RTT and chunk loss (sdr_auto.h;
 * docs/reliability.md "AUTO"). The receiver learns each message's code from
 * its parity packets; a message without parity is an SR message. Streams
 * are plain SR. The reliable-QP core (sr_qp.h) with the EC engine plugged
 * in (ec.h); this scheme chooses each send's code and feeds the model.
 * Layer rel/: a reliability scheme behind struct sdr_rel_ops; calls engines and primitives.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>

#include "auto_desc.h"
#include "ec.h"
#include "ec_desc.h"
#include "rel.h"
#include "sr_desc.h"

struct auto_qp {
	struct sdr_sr sr;     /* first: the reliable-QP core's state */
	struct sdr_eceng eng; /* the EC engine plugged into it */
	struct sdr_auto au;   /* estimates and per-message pick */
	double base_bps;      /* model rate when the QP has none (port/link) */
};

static struct auto_qp *auto_of(const struct sdr_qp *qp)
{
	return qp->rel;
}

/* The rate the model assumes when the QP has none: the port's pacing rate,
 * else the link speed, else 10 Gbit/s. */
static double auto_base_rate(const struct sdr_inst *in)
{
	struct rte_eth_link link;

	if (in->cfg.port_rate)
		return (double)in->cfg.port_rate;
	memset(&link, 0, sizeof(link));
	if (rte_eth_link_get_nowait(in->port, &link) == 0 &&
	    link.link_speed != RTE_ETH_SPEED_NUM_NONE &&
	    link.link_speed != RTE_ETH_SPEED_NUM_UNKNOWN)
		return link.link_speed * 1e6;
	return 10e9;
}

/* Estimator feeds from the SR engine. */
static void auto_rtt(void *ctx, struct sdr_qp *qp, uint64_t cycles)
{
	struct auto_qp *a = ctx;

	(void)qp;
	sdr_auto_rtt(&a->au, (double)cycles / (double)sdr_g.tsc_hz);
}

/* Feed one completed send's first-pass chunks and those of them that did
 * not arrive the first time. The sender knows the chunks it retransmitted
 * (each once); the receiver reports in the FULL entry the chunks it rebuilt
 * from parity or found missing at its first FTO, which the sender cannot
 * see. Both count mostly the same chunks (the ones the receiver NACKed are
 * then retransmitted): the larger of the two, not the sum. */
static void auto_full(void *ctx, struct sdr_qp *qp, const struct sdr_smsg *sm,
		      const struct sdr_sr_send *ss, uint32_t rx_lost)
{
	struct auto_qp *a = ctx;
	uint32_t lost = rx_lost > ss->retx_chunks ? rx_lost : ss->retx_chunks;

	(void)sm;
	if (lost > ss->nchunks)
		lost = ss->nchunks;
	sdr_auto_chunks(&a->au, ss->nchunks, lost);
	SDR_QP_CTR(qp, auto, lost_rx) += rx_lost;
	SDR_QP_CTR(qp, auto, lost_fed) += lost;
	SDR_QP_CTR(qp, auto, chunks_fed) += ss->nchunks;
}

static int auto_qp_init(struct sdr_qp *qp, const struct sdr_qp_attr_abi *at, char *why, size_t len)
{
	struct auto_qp *a = calloc(1, sizeof(*a));
	struct sdr_auto_cfg ac;

	/* the EC engine takes the EC candidates (codec handles, buffers sized
	 * for the one with the most parity) */
	if (!a || sdr_sr_init(&a->sr, qp) ||
	    sdr_eceng_init(qp, &a->eng, &a->sr, sdr_auto_opts.cands, sdr_auto_opts.ncands, 1))
		goto nomem;
	a->sr.events = (struct sdr_sr_events){.ctx = a, .rtt = auto_rtt, .full = auto_full};
	a->base_bps = auto_base_rate(qp->inst);
	sdr_auto_cfg_default(&ac);
	ac.rate_bps = at->rate_bps ? (double)at->rate_bps : a->base_bps;
	ac.chunk_bytes = qp->mtu * qp->ppc;
	ac.pkts_per_chunk = qp->ppc;
	ac.ncands = sdr_auto_opts.ncands;
	memcpy(ac.cands, sdr_auto_opts.cands, sizeof(ac.cands));
	ac.obj = (enum sdr_model_objective)sdr_auto_opts.obj;
	if (sdr_auto_init(&a->au, &ac)) { /* cannot happen: --auto-schemes was checked */
		sdr_eceng_fini(&a->eng);
		sdr_sr_fini(&a->sr);
		free(a);
		snprintf(why, len, "AUTO: the --auto-schemes candidates are invalid");
		return -EINVAL;
	}
	qp->rel = a;
	return 0;
nomem:
	if (a) {
		sdr_eceng_fini(&a->eng);
		sdr_sr_fini(&a->sr);
	}
	free(a);
	snprintf(why, len, "out of memory for AUTO state");
	return -ENOMEM;
}

static void auto_qp_fini(struct sdr_qp *qp)
{
	struct auto_qp *a = auto_of(qp);

	if (!a)
		return;
	/* keep its decisions for --stats-json (the worker is done with it) */
	sdr_auto_closed_keep(qp, &a->au);
	sdr_eceng_fini(&a->eng);
	sdr_sr_fini(&a->sr);
	free(a);
	qp->rel = NULL;
}

/* stats: AUTO's line, then the core's (the EC line, the SR line); its keys
 * after the SR engine's (auto_desc.c, sr_desc.c) */
static void auto_print(FILE *f, const struct sdr_qp *qp)
{
	sdr_auto_stats_print(f, qp, &auto_of(qp)->au);
	sdr_sr_qp_print(f, qp);
}

static void auto_json(FILE *f, const struct sdr_qp *qp)
{
	sdr_sr_qp_json(f, qp);
	sdr_auto_stats_json(f, &auto_of(qp)->au, &qp->st);
}

static void auto_kv(const struct sdr_qp *qp, const struct sdr_kv *kv)
{
	sdr_sr_qp_kv(qp, kv);
	sdr_auto_stats_kv(&auto_of(qp)->au, kv);
}

static void auto_metrics(const struct sdr_qp *qp, const struct sdr_metric_sink *m)
{
	sdr_sr_qp_metrics(qp, m);
	sdr_auto_stats_metrics(&auto_of(qp)->au, m);
}

static struct sdr_ctr_group *const auto_ctrs[] = {&sdr_qpc_sr, &sdr_qpc_ec, &sdr_qpc_auto, NULL};

static const struct sdr_rel_desc auto_desc = {
	.ctrs = auto_ctrs,
	.opts = sdr_auto_opt_table,
	.opts_check = sdr_auto_opts_check,
	.print = auto_print,
	.json = auto_json,
	.kv = auto_kv,
	.json_inst = sdr_auto_closed_json,
	.metrics = auto_metrics,
	.diag_send = sdr_sr_qp_diag_send,
	.prepare_failed = SDR_CTR_auto_send_nomem,
};

static void auto_set_rate(struct sdr_qp *qp, uint64_t rate_bps)
{
	struct auto_qp *a = auto_of(qp);

	/* the model follows the QP's rate; the congestion controller's
	 * ceiling too */
	sdr_auto_set_rate(&a->au, rate_bps ? (double)rate_bps : a->base_bps);
	sdr_sr_qp_set_rate(qp, rate_bps);
}

/* The scheme of one send: the pick of the completion-time model at the
 * QP's current estimates (cached per size class, so the model runs only
 * when a class is new or the estimates moved). */
static int auto_send_prepare(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_smsg *sm,
			     uint64_t now)
{
	struct auto_qp *a = auto_of(qp);
	struct sdr_scheme s;

	if (sm->stream) {
		sdr_eceng_use_code(&a->eng, sm, 0, 0, 0);
		return sdr_sr_qp_send_prepare(w, qp, sm, now);
	}
	sdr_auto_pick(&a->au, sm->len, &s);
	/* (m <= the QP's m: the parity buffer is sized for the candidates) */
	if (s.rel != SDR_REL_EC || s.m > a->eng.m || !s.k) {
		SDR_QP_CTR(qp, auto, msgs_sr)++;
		sdr_eceng_use_code(&a->eng, sm, 0, 0, 0);
	} else {
		SDR_QP_CTR(qp, auto, msgs_ec)++;
		sdr_eceng_use_code(&a->eng, sm, s.code, s.k, s.m);
	}
	return sdr_sr_qp_send_prepare(w, qp, sm, now);
}

const struct sdr_rel_ops sdr_rel_auto = {
	.name = "auto",
	.reliability = SDR_REL_AUTO,
	.desc = &auto_desc,
	.qp_init = auto_qp_init,
	.qp_fini = auto_qp_fini,
	.set_rate = auto_set_rate,
	.send_prepare = auto_send_prepare,
	SDR_SR_QP_OPS,
};
