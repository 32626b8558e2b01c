/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The Selective Repeat engine as the control plane sees it (layer sr): its
 * counter group, its options (typed sdr_opts entries), its stats line and
 * keys, its metrics and its part of /ops (sr_desc.h).
 */
#include <inttypes.h>

#include <rte_cycles.h>

#include "sdr_diag.h"
#include "sdr_opts.h"
#include "sr_desc.h"
#include "sr_path.h"

SDR_QP_CTR_GROUP_DEFINE(sr, SDR_SR_QP_CTRS);

struct sdr_sr_cfg sdr_sr_cfg = {
	.alpha_milli = 500,
	.rttvar_k = 4,
	.min_rto_us = 2000,
	.init_rto_ms = 200,
	.ack_us = 500,
	.probe_max_ms = 1000,
	.paths = 1,
	.cc_competitive = 0,
	.cc_ack_pkts = 4,
};

const struct sdr_opt sdr_sr_opts[] = {
	SDR_OPT_SECTION("\nSelective Repeat (QPs with reliability SR, and the SR part of EC and "
			"AUTO QPs;\ndocs/reliability.md):"),
	{.name = "sr-alpha",
	 .arg = "A",
	 .kind = SDR_OPT_MILLI,
	 .fmin = 0,
	 .fmax = 16,
	 .var = &sdr_sr_cfg.alpha_milli,
	 .help = "RTO = (1 + A) * smoothed RTT (default 0.5; 0..16)"},
	{.name = "sr-rttvar-k",
	 .arg = "K",
	 .kind = SDR_OPT_U32,
	 .min = 0,
	 .max = 64,
	 .var = &sdr_sr_cfg.rttvar_k,
	 .help = "... but at least SRTT + K * RTTVAR (RFC 6298 uses 4;\ndefault 4, 0 = off)"},
	{.name = "sr-min-rto-us",
	 .arg = "US",
	 .kind = SDR_OPT_U32,
	 .min = 1,
	 .max = 10000000,
	 .var = &sdr_sr_cfg.min_rto_us,
	 .help = "RTO floor (default 2000)"},
	{.name = "sr-init-rto-ms",
	 .arg = "MS",
	 .kind = SDR_OPT_U32,
	 .min = 1,
	 .max = 60000,
	 .var = &sdr_sr_cfg.init_rto_ms,
	 .help = "RTO before the first RTT sample (default 200)"},
	{.name = "sr-ack-us",
	 .arg = "US",
	 .kind = SDR_OPT_U32,
	 .min = 0,
	 .max = 1000000,
	 .var = &sdr_sr_cfg.ack_us,
	 .help = "receiver ACK coalescing period (default 500); a completed\n"
		 "receive is acknowledged at once"},
	{.name = "probe-max-ms",
	 .arg = "MS",
	 .kind = SDR_OPT_U32,
	 .min = 1,
	 .max = 60000,
	 .var = &sdr_sr_cfg.probe_max_ms,
	 .help = "ceiling of the backed-off RTO, so the interval of\n"
		 "the probes of a stalled QP (link down, peer silent):\n"
		 "traffic resumes within about MS + 1 RTT after the\n"
		 "path returns (default 1000)"},
	{.name = "paths",
	 .arg = "N",
	 .kind = SDR_OPT_U32,
	 .min = 1,
	 .max = 16,
	 .var = &sdr_sr_cfg.paths,
	 .help = "paths (UDP source ports, all steering to the receiving QP's\n"
		 "queue) each QP sprays its units over, weighted by their RTT,\n"
		 "loss and ECN; a QP may ask for its own (docs/multipath.md;\n"
		 "default 1: one port, one path)"},
	{.name = "cc",
	 .arg = "off|on",
	 .kind = SDR_OPT_BOOL,
	 .var = &sdr_sr_cfg.cc,
	 .help = "congestion control of the sends of every SR, EC and AUTO QP\n"
		 "(docs/congestion.md): on paces each QP at the rate it learns\n"
		 "from delay and ECN, its configured rate (else --port-rate)\n"
		 "the ceiling; off paces at the configured rate (default off)"},
	{.name = "cc-target-us",
	 .arg = "US",
	 .kind = SDR_OPT_U32,
	 .min = 0,
	 .max = 1000000,
	 .var = &sdr_sr_cfg.cc_target_us,
	 .help = "its queueing-delay target: a delay above it is congestion\n"
		 "(default 0: 200 us + 2 % of the base RTT); above the hosts'\n"
		 "scheduling jitter, else ECN alone should be the signal"},
	{.name = "cc-competitive",
	 .arg = "off|on",
	 .kind = SDR_OPT_BOOL,
	 .var = &sdr_sr_cfg.cc_competitive,
	 .help = "its TCP-competitive mode: after cuts in a row that did not\n"
		 "shrink the queue (a flow that ignores ECN and delay keeps\n"
		 "it: TCP without ECN, BBR) it answers loss alone, as Reno,\n"
		 "until the queue drains or a loss comes after 4 s of it\n"
		 "(docs/congestion.md; default off: on for a link shared with\n"
		 "such flows, which then fill its buffer)"},
	{.name = "cc-noise-probe",
	 .arg = "off|on",
	 .kind = SDR_OPT_BOOL,
	 .var = &sdr_sr_cfg.cc_noise_probe,
	 .help = "where ECN marks and the hosts' RTT noise hides an empty\n"
		 "queue, judge calm, the capacity probe and the queue of a\n"
		 "marked interval by the marks and twice that noise: a\n"
		 "restored capacity retaken in fewer RTTs, and no deep cut on\n"
		 "every mark where the workers run late (docs/congestion.md;\n"
		 "default off)"},
	{.name = "cc-ai-ref",
	 .arg = "K",
	 .kind = SDR_OPT_U32,
	 .min = 0,
	 .max = 1024,
	 .var = &sdr_sr_cfg.cc_ai_ref,
	 .help = "its additive step, 0.1 % of the ceiling, is at most 0.1 %\n"
		 "of sqrt(ceiling x K x the QP's rate, or its peak if higher):\n"
		 "for ceilings far above the link's share (a NIC's line rate;\n"
		 "32 keeps the queue of 8 QPs under a 30x ceiling at a quarter\n"
		 "of the buffer, docs/congestion.md; default 0: the ceiling\n"
		 "alone)"},
	{.name = "cc-ack-pkts",
	 .arg = "N",
	 .kind = SDR_OPT_U32,
	 .min = 0,
	 .max = 65536,
	 .var = &sdr_sr_cfg.cc_ack_pkts,
	 .help = "receiver: while a QP's data comes ECN-capable (its sender's\n"
		 "congestion control is on), acknowledge at least every N of\n"
		 "its data packets, at most one such ACK per 100 us (or per\n"
		 "--sr-ack-us if shorter): the sender's controller learns the\n"
		 "delivery and the CE marks between units (docs/congestion.md;\n"
		 "default 4, 0 = only when a unit completes)"},
	SDR_OPT_END,
};

/* the RTT estimator, in microseconds */
static uint64_t cyc_us(uint64_t c)
{
	return sdr_g.tsc_hz ? c * 1000000 / sdr_g.tsc_hz : 0;
}

/* ms since the QP's stall began, 0 when it is not stalled (the worker's
 * TSC may be a little ahead of ours) */
static uint64_t stalled_ms(const struct sdr_sr *sr)
{
	uint64_t t = sr->stall_tsc, now = rte_get_tsc_cycles();

	if (!t)
		return 0;
	return now > t && sdr_g.tsc_hz ? (now - t) * 1000 / sdr_g.tsc_hz : 1;
}

void sdr_sr_qp_print(FILE *f, const struct sdr_qp *qp)
{
	const struct sdr_sr *sr = sdr_sr_of(qp);
	uint64_t st = stalled_ms(sr);

	if (sr->hooks && sr->hooks->stats_print)
		sr->hooks->stats_print(sr->hook_ctx, f, qp);
	fprintf(f,
		"    SR: srtt %" PRIu64 " us rttvar %" PRIu64 " us rto %" PRIu64 " us (%" PRIu64
		" samples) | retx pkts %" PRIu64 " (%" PRIu64 " left out) units %" PRIu64
		" (rack %" PRIu64 " holes %" PRIu64 " tlp %" PRIu64 " rto-expiries %" PRIu64
		") spurious %" PRIu64 " | ACKs tx %" PRIu64 " rx %" PRIu64
		" | timeouts send %" PRIu64 " recv %" PRIu64 "%s\n",
		cyc_us(sr->rtt.srtt), cyc_us(sr->rtt.rttvar), cyc_us(sr->rtt.rto),
		(uint64_t)sr->rtt.samples, SDR_QP_CTR(qp, sr, retx_pkts),
		SDR_QP_CTR(qp, sr, retx_pkts_saved), SDR_QP_CTR(qp, sr, retx_units),
		SDR_QP_CTR(qp, sr, rack_retx), SDR_QP_CTR(qp, sr, holes_lost),
		SDR_QP_CTR(qp, sr, tlp), SDR_QP_CTR(qp, sr, rto_expiries),
		SDR_QP_CTR(qp, sr, spurious_retx), SDR_QP_CTR(qp, sr, acks_tx),
		SDR_QP_CTR(qp, sr, acks_rx), SDR_QP_CTR(qp, sr, send_timeouts),
		SDR_QP_CTR(qp, sr, recv_timeouts),
		qp->state == SDR_QPS_ERROR ? " | ERROR state" : "");
	if (st || SDR_QP_CTR(qp, sr, outages))
		fprintf(f,
			"    stall: %s%" PRIu64 " ms | outages %" PRIu64 " (last %" PRIu64
			" ms, longest %" PRIu64 " ms) | horizon %u ms\n",
			st ? "STALLED for " : "not stalled, ", st, SDR_QP_CTR(qp, sr, outages),
			sr->outage_last_ms, sr->outage_longest_ms, qp->horizon_ms);
	sdr_sr_cc_print(f, &sr->cc);
	sdr_sr_path_print(f, sr);
}

void sdr_sr_qp_json(FILE *f, const struct sdr_qp *qp)
{
	const struct sdr_sr *sr = sdr_sr_of(qp);

	fprintf(f, ",\"srtt_us\":%" PRIu64 ",\"rttvar_us\":%" PRIu64 ",\"rto_us\":%" PRIu64,
		cyc_us(sr->rtt.srtt), cyc_us(sr->rtt.rttvar), cyc_us(sr->rtt.rto));
	fprintf(f,
		",\"stalled_since_ms\":%" PRIu64 ",\"outage_last_ms\":%" PRIu64
		",\"outage_longest_ms\":%" PRIu64 ",\"horizon_ms\":%u",
		stalled_ms(sr), sr->outage_last_ms, sr->outage_longest_ms, qp->horizon_ms);
	sdr_sr_cc_json(f, &sr->cc);
	sdr_sr_path_json(f, sr);
}

void sdr_sr_qp_kv(const struct sdr_qp *qp, const struct sdr_kv *kv)
{
	const struct sdr_sr *sr = sdr_sr_of(qp);

	kv->u64(kv->arg, "srtt_us", cyc_us(sr->rtt.srtt));
	kv->u64(kv->arg, "rttvar_us", cyc_us(sr->rtt.rttvar));
	kv->u64(kv->arg, "rto_us", cyc_us(sr->rtt.rto));
	kv->u64(kv->arg, "stalled_since_ms", stalled_ms(sr));
	kv->u64(kv->arg, "outage_last_ms", sr->outage_last_ms);
	kv->u64(kv->arg, "outage_longest_ms", sr->outage_longest_ms);
	kv->u64(kv->arg, "horizon_ms", qp->horizon_ms);
	sdr_sr_cc_kv(&sr->cc, kv);
	sdr_sr_path_kv(sr, kv);
}

void sdr_sr_qp_metrics(const struct sdr_qp *qp, const struct sdr_metric_sink *m)
{
	const struct sdr_sr *sr = sdr_sr_of(qp);
	const double hz = sdr_g.tsc_hz ? (double)sdr_g.tsc_hz : 1.0;

	m->gauge(m->arg, "srtt_seconds", "selective repeat: smoothed RTT", NULL,
		 (double)sr->rtt.srtt / hz);
	m->gauge(m->arg, "rttvar_seconds", "selective repeat: RTT variation", NULL,
		 (double)sr->rtt.rttvar / hz);
	m->gauge(m->arg, "rto_seconds", "selective repeat: retransmission timeout", NULL,
		 (double)sr->rtt.rto / hz);
	m->gauge(m->arg, "stalled_seconds",
		 "how long the QP has been stalled (no ACK from its peer for an RTO with sends"
		 " outstanding); 0 = not stalled",
		 NULL, (double)stalled_ms(sr) / 1e3);
	m->gauge(m->arg, "outage_last_seconds", "length of the QP's last stall that ended", NULL,
		 (double)sr->outage_last_ms / 1e3);
	m->gauge(m->arg, "outage_longest_seconds", "length of the QP's longest stall", NULL,
		 (double)sr->outage_longest_ms / 1e3);
	m->gauge(m->arg, "horizon_seconds",
		 "the QP's outage horizon: a stall this long fails it (0 = never)", NULL,
		 (double)qp->horizon_ms / 1e3);
	sdr_sr_cc_metrics(&sr->cc, m);
	if (sr->hooks && sr->hooks->stats_metrics)
		sr->hooks->stats_metrics(sr->hook_ctx, qp, m);
}

/* seconds from TSC @p t to @p now; -1: never (0); a worker's @p t past the
 * control thread's @p now is now */
static double ago_s(uint64_t t, uint64_t now)
{
	if (!t)
		return -1.0;
	return t < now && sdr_g.tsc_hz ? (double)(now - t) / (double)sdr_g.tsc_hz : 0.0;
}

void sdr_sr_qp_diag_send(const struct sdr_qp *qp, const struct sdr_smsg *sm, uint64_t now,
			 struct sdr_diag_send *d)
{
	const struct sdr_sr *sr = sdr_sr_of(qp);
	const struct sdr_sr_send *ss = &sr->snd[sdr_seq_msg_id(sm->seq)];
	const double hz = sdr_g.tsc_hz ? (double)sdr_g.tsc_hz : 1.0;
	/* the RTO without backoff: the estimates', before the first sample
	 * the initial one (--sr-init-rto-ms, at least the floor) */
	uint64_t rto = sr->rtt.rto, base = sr->rtt.samples
						   ? sdr_rtt_base(&sr->rtt)
						   : sdr_g.tsc_hz / 1000 * sdr_sr_cfg.init_rto_ms;
	uint64_t ack = sr->ack_rx_tsc, retx = 0;
	uint32_t n = ss->nchunks <= sr->units_max ? ss->nchunks : sr->units_max;

	if (base < sr->rtt.min_rto)
		base = sr->rtt.min_rto;
	d->rto = (double)rto / hz;
	d->last_ack_ago = ago_s(ack, now);
	d->probing = sr->probing;
	d->stalled = sr->stall_tsc ? ago_s(sr->stall_tsc, now) : 0.0;
	if (sr->stall_tsc && d->stalled <= 0.0)
		d->stalled = 1e-6;
	d->outage = (unsigned)SDR_QP_CTR(qp, sr, outages);
	d->backoff = base ? (unsigned)((rto + base / 2) / base) : 0;
	/* its chunks not acknowledged, its last retransmission (of any unit,
	 * the immediate-only one too); read as the worker left them */
	d->chunks = n;
	d->unacked = 0;
	for (uint32_t i = 0; ss->u && i < ss->nunits && i < sr->units_max; i++) {
		const struct sdr_sr_unit *u = &ss->u[i];

		if (i < n && !u->acked)
			d->unacked++;
		if (u->retx && u->tx_tsc > retx)
			retx = u->tx_tsc;
	}
	d->last_retx_ago = ago_s(retx, now);
}
