/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Congestion control of a reliable QP (sr_cc.h): the SR engine's feeds into
 * the decision core (common/sdr_cc.c), the pacer's rate from it, the ECN
 * echo of the receiver, and the controller's stats.
 * Layer sr/: the SR engine (the reliable-QP core); calls only the primitives (prim/).
 */
#include <inttypes.h>
#include <string.h>

#include "sdr_wire.h"
#include "sr_cc.h"
#include "sr_desc.h"
#include "txq.h"

/* TSC cycles -> ns */
static uint64_t cyc_ns(uint64_t c)
{
	return sdr_g.tsc_hz ? (uint64_t)((unsigned __int128)c * 1000000000u / sdr_g.tsc_hz) : 0;
}

static uint64_t ceiling_of(const struct sdr_qp *qp)
{
	if (qp->rate_bps)
		return qp->rate_bps;
	if (qp->inst && qp->inst->cfg.port_rate)
		return qp->inst->cfg.port_rate;
	return SDR_SR_CC_DEFAULT_CEILING;
}

void sdr_sr_cc_init(struct sdr_sr_cc *c, const struct sdr_qp *qp, int on)
{
	struct sdr_cc_params p;

	memset(c, 0, sizeof(*c));
	c->on = on ? 1 : 0;
	sdr_cc_params_default(&p);
	/* the pacer releases one frame at a time: two of them are what an
	 * interval may fall short of at a low rate without being app-limited */
	p.quantum_bytes = 2.0 * sdr_wire_data_frame_bytes(qp->mtu, 1);
	c->frame16 = 16 * sdr_wire_data_frame_bytes(qp->mtu, 1);
	if (!sdr_sr_cfg.cc_competitive)
		p.comp_enter = 0;
	if (sdr_sr_cfg.cc_noise_probe)
		p.noise_probe_k = 2;
	p.ai_ref_k = sdr_sr_cfg.cc_ai_ref;
	if (sdr_sr_cfg.cc_target_us) {
		p.target_ns = (uint64_t)sdr_sr_cfg.cc_target_us * 1000;
		p.target_frac = 0;
	}
	sdr_cc_init(&c->cc, &p, ceiling_of(qp), 0);
}

/* the controller's clock starts at its QP's first event */
static void start(struct sdr_sr_cc *c, uint64_t now_ns)
{
	if (c->started)
		return;
	struct sdr_cc_params p = c->cc.p; /* (sdr_cc_init clears the struct first) */

	c->started = 1;
	sdr_cc_init(&c->cc, &p, c->cc.ceiling, now_ns);
}

void sdr_sr_cc_set_ceiling(struct sdr_sr_cc *c, const struct sdr_qp *qp)
{
	sdr_cc_set_ceiling(&c->cc, ceiling_of(qp));
	c->applied_bps = 0; /* the worker gave the pacer the configured rate */
}

void sdr_sr_cc_apply(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_sr_cc *c)
{
	uint64_t bps = sdr_cc_rate(&c->cc), rate = bps / 8;

	if (!c->on)
		return;
	/* a frame held since the last visit or ACK; or one was in this
	 * interval: the span of its sends so far */
	if (qp->pace_held != c->held_seen || c->cc.iv_held) {
		c->held_seen = qp->pace_held;
		sdr_cc_on_held(&c->cc,
			       c->tx_iv == c->cc.intervals ? cyc_ns(c->tx_last - c->tx_first) : 0);
	}
	if (bps == c->applied_bps)
		return;
	qp->ecn_tx = SDR_ECN_ECT0; /* its data is ECN-capable from its first packet */
	sdr_sched_flow_rate(&w->sched, sdr_qp_flow(qp), rate ? rate : 1, sdr_pace_burst(rate));
	c->applied_bps = bps;
	c->rate_sets++;
}

void sdr_sr_cc_echo_out(const struct sdr_sr_cc *c, struct sdr_ack_echo *e)
{
	e->ce = c->rx_ce;
	e->pkts = c->rx_pkts;
}

void sdr_sr_cc_echo_in(struct sdr_sr_cc *c, const uint8_t *msg, size_t len,
		       const struct sdr_ctrl_hdr *h)
{
	struct sdr_ack_echo e;
	uint32_t dce, dpk;

	if (sdr_ctrl_ack_echo_decode(msg, len, h, &e))
		return; /* an older receiver: delay alone */
	c->echo_acks++;
	dce = e.ce - c->echo_ce;
	dpk = e.pkts - c->echo_pkts;
	c->echo_ce = e.ce;
	c->echo_pkts = e.pkts;
	if (!c->echo_seen) {
		/* the receiver counts from its QP's creation: from a sender
		 * that started later (restored after its daemon restarted)
		 * that is history, not this ACK's delivery; a new QP's first
		 * ACK counts a few packets, given up here */
		c->echo_seen = 1;
		return;
	}
	if (dpk > 1u << 31 || dce > 1u << 31) {
		/* the counts went back: the receiver's QP started counting
		 * again (its daemon restarted and restored it), or an ACK older
		 * than one already taken (reordered: rare, and what it
		 * counts again is a few packets once). Counting from the new
		 * point: skipping every echo until the counts passed the old
		 * ones would blind the controller for as long. */
		c->echo_resyncs++;
		return;
	}
	if (dce > dpk)
		dce = dpk; /* (not trusted beyond what it counts) */
	c->ce_echoed += dce;
	c->fb_ce += dce;
	c->fb_pkts += dpk;
}

void sdr_sr_cc_acked(struct sdr_sr_cc *c, uint64_t now, uint64_t rtt_cyc, uint32_t pkts,
		     uint32_t bytes)
{
	uint64_t now_ns = cyc_ns(now);

	if (!c->on)
		return;
	start(c, now_ns);
	/* A receiver that echoes counts every data packet that reached it,
	 * and acknowledges at least every --cc-ack-pkts of them while they
	 * are ECN-capable: the echo is the delivery (sdr_sr_cc_ack_end()),
	 * finer than the units, and carries the marks with the packets they
	 * were counted on; the unit brings its RTT sample. */
	if (c->echo_seen)
		sdr_cc_on_rtt(&c->cc, now_ns, cyc_ns(rtt_cyc));
	else
		sdr_cc_on_ack(&c->cc, now_ns, cyc_ns(rtt_cyc), pkts, 0, bytes);
}

void sdr_sr_cc_ack_end(struct sdr_sr_cc *c, uint64_t now)
{
	uint64_t now_ns = cyc_ns(now), bytes;

	if (!c->on || !c->fb_pkts)
		return;
	start(c, now_ns);
	bytes = (uint64_t)c->fb_pkts * (c->frame16 / 16);
	sdr_cc_on_delivered(&c->cc, now_ns, c->fb_pkts, c->fb_ce,
			    bytes < UINT32_MAX ? (uint32_t)bytes : UINT32_MAX);
	c->fb_pkts = c->fb_ce = 0;
}

void sdr_sr_cc_lost(struct sdr_sr_cc *c, uint64_t now, uint32_t pkts, uint64_t sent)
{
	uint64_t now_ns = cyc_ns(now);

	if (!c->on)
		return;
	start(c, now_ns);
	if (sent) /* (a unit: all its packets are sent again) */
		sdr_cc_on_loss_unit(&c->cc, now_ns, pkts, cyc_ns(sent));
	else
		sdr_cc_on_loss(&c->cc, now_ns, pkts);
}

uint64_t sdr_sr_pace_cycles(const struct sdr_qp *qp, const struct sdr_sr_cc *c, uint64_t bytes)
{
	uint64_t bps = c->on ? sdr_cc_rate(&c->cc)
			     : (qp->rate_bps ? qp->rate_bps
					     : (qp->inst ? qp->inst->cfg.port_rate : 0));

	if (!bps || !bytes)
		return 0; /* unpaced */
	return (uint64_t)((unsigned __int128)bytes * 8 * sdr_g.tsc_hz / bps);
}

/* ---- stats ---- */

void sdr_sr_cc_print(FILE *f, const struct sdr_sr_cc *c)
{
	const struct sdr_cc *k = &c->cc;

	if (!c->on) {
		if (c->rx_ce)
			fprintf(f,
				"    CC: off | CE received %" PRIu32 " of %" PRIu32 " data pkts\n",
				c->rx_ce, c->rx_pkts);
		return;
	}
	fprintf(f,
		"    CC: rate %.1f Mbit/s ceiling %.1f | base rtt %.0f us srtt %.0f us | "
		"alpha %.3f | delay target %.0f us (jitter %.0f us) | last %s | cuts ecn %" PRIu64
		" (on a delivery fall %" PRIu64 ") delay %" PRIu64 " (spared %" PRIu64
		") loss %" PRIu64 " increases %" PRIu64 " (probes %" PRIu64
		", peak %.1f Mbit/s) holds app-limited %" PRIu64 " draining %" PRIu64
		" intervals %" PRIu64 " | TCP-competitive %s (entered %" PRIu64 ", %" PRIu64
		" intervals, %" PRIu64 " ended at the limit) | losses %" PRIu64 " (and %" PRIu64
		" sent before a cut;"
		" loss windows %" PRIu64 ", the last %.2f %% of the packets)"
		" | CE echoed %" PRIu64 " (taken %" PRIu64 ", echo ACKs %" PRIu64
		", restarted %" PRIu64 ") | CE received %" PRIu32 "\n",
		(double)sdr_cc_rate(k) / 1e6, (double)k->ceiling / 1e6, (double)k->base_rtt / 1e3,
		(double)k->srtt / 1e3, k->alpha, (double)sdr_cc_delay_target(k, k->iv_start) / 1e3,
		k->jit / 1e3, sdr_cc_event_name(k->last), k->dec_ecn, k->dlv_cuts, k->dec_delay,
		k->delay_spared, k->dec_loss, k->increases, k->probes, k->peak / 1e6, k->holds_app,
		k->holds_drain, k->intervals, k->comp ? "yes" : "no", k->comp_enters, k->comp_iv,
		k->comp_expired, k->lost_events, k->stale_lost, k->loss_windows, 100 * k->loss_est,
		c->ce_echoed, k->ce, c->echo_acks, c->echo_resyncs, c->rx_ce);
}

void sdr_sr_cc_json(FILE *f, const struct sdr_sr_cc *c)
{
	const struct sdr_cc *k = &c->cc;

	fprintf(f,
		",\"cc\":{\"on\":%u,\"rate_bps\":%" PRIu64 ",\"ceiling_bps\":%" PRIu64
		",\"base_rtt_us\":%.1f,\"srtt_us\":%.1f,\"alpha\":%.4f,\"last\":\"%s\""
		",\"dec_ecn\":%" PRIu64 ",\"dec_delay\":%" PRIu64 ",\"dec_loss\":%" PRIu64
		",\"increases\":%" PRIu64 ",\"intervals\":%" PRIu64 ",\"acked\":%" PRIu64
		",\"ce_echoed\":%" PRIu64 ",\"echo_acks\":%" PRIu64 ",\"lost_events\":%" PRIu64
		",\"rate_sets\":%" PRIu64 ",\"rx_pkts\":%" PRIu32 ",\"rx_ce\":%" PRIu32
		",\"ecn_leads\":%d,\"delay_target_us\":%.1f,\"jitter_us\":%.1f"
		",\"competitive\":%d,\"comp_enters\":%" PRIu64 ",\"comp_intervals\":%" PRIu64
		",\"comp_expired\":%" PRIu64 ",\"stale_lost\":%" PRIu64 ",\"loss_windows\":%" PRIu64
		",\"loss_est\":%.5f,\"probes\":%" PRIu64 ",\"peak_bps\":%.0f"
		",\"holds_app\":%" PRIu64 ",\"holds_drain\":%" PRIu64 ",\"echo_resyncs\":%" PRIu64
		",\"delay_spared\":%" PRIu64 ",\"dlv_cuts\":%" PRIu64 "}",
		c->on, c->on ? sdr_cc_rate(k) : 0, k->ceiling, (double)k->base_rtt / 1e3,
		(double)k->srtt / 1e3, k->alpha, sdr_cc_event_name(k->last), k->dec_ecn,
		k->dec_delay, k->dec_loss, k->increases, k->intervals, k->acked, c->ce_echoed,
		c->echo_acks, k->lost_events, c->rate_sets, c->rx_pkts, c->rx_ce,
		k->ce_seen ? 1 : 0, (double)sdr_cc_delay_target(k, k->iv_start) / 1e3, k->jit / 1e3,
		k->comp ? 1 : 0, k->comp_enters, k->comp_iv, k->comp_expired, k->stale_lost,
		k->loss_windows, k->loss_est, k->probes, k->peak, k->holds_app, k->holds_drain,
		c->echo_resyncs, k->delay_spared, k->dlv_cuts);
}

void sdr_sr_cc_kv(const struct sdr_sr_cc *c, const struct sdr_kv *kv)
{
	const struct sdr_cc *k = &c->cc;

	kv->u64(kv->arg, "cc_on", c->on);
	kv->u64(kv->arg, "cc_rate_bps", c->on ? sdr_cc_rate(k) : 0);
	kv->u64(kv->arg, "cc_ceiling_bps", k->ceiling);
	kv->u64(kv->arg, "cc_base_rtt_us", k->base_rtt / 1000);
	kv->u64(kv->arg, "cc_srtt_us", k->srtt / 1000);
	kv->u64(kv->arg, "cc_noise_us", (uint64_t)(k->jit / 1e3));
	kv->u64(kv->arg, "cc_delay_target_us", sdr_cc_delay_target(k, k->iv_start) / 1000);
	kv->u64(kv->arg, "cc_alpha_milli", (uint64_t)(k->alpha * 1000.0));
	kv->str(kv->arg, "cc_last", sdr_cc_event_name(k->last));
	kv->u64(kv->arg, "cc_dec_ecn", k->dec_ecn);
	kv->u64(kv->arg, "cc_dlv_cuts", k->dlv_cuts); /* (of them) */
	kv->u64(kv->arg, "cc_dec_delay", k->dec_delay);
	kv->u64(kv->arg, "cc_delay_spared", k->delay_spared);
	kv->u64(kv->arg, "cc_dec_loss", k->dec_loss);
	kv->u64(kv->arg, "cc_increases", k->increases);
	kv->u64(kv->arg, "cc_holds_app", k->holds_app);
	kv->u64(kv->arg, "cc_holds_drain", k->holds_drain);
	kv->u64(kv->arg, "cc_probes", k->probes);
	kv->u64(kv->arg, "cc_peak_bps", (uint64_t)k->peak);
	kv->u64(kv->arg, "cc_ce_echoed", c->ce_echoed);
	kv->u64(kv->arg, "cc_ce", k->ce); /* (of them, given to the decisions) */
	kv->u64(kv->arg, "cc_rx_ce", c->rx_ce);
	kv->u64(kv->arg, "cc_rx_pkts", c->rx_pkts);
	kv->u64(kv->arg, "cc_acked", k->acked);
	kv->u64(kv->arg, "cc_echo_resyncs", c->echo_resyncs);
	kv->u64(kv->arg, "cc_competitive", k->comp);
	kv->u64(kv->arg, "cc_comp_enters", k->comp_enters);
	kv->u64(kv->arg, "cc_comp_expired", k->comp_expired);
	kv->u64(kv->arg, "cc_lost", k->lost_events);
	kv->u64(kv->arg, "cc_stale_lost", k->stale_lost);
	kv->u64(kv->arg, "cc_loss_windows", k->loss_windows);
	kv->u64(kv->arg, "cc_loss_est_ppm", (uint64_t)(k->loss_est * 1e6));
}

void sdr_sr_cc_metrics(const struct sdr_sr_cc *c, const struct sdr_metric_sink *m)
{
	const struct sdr_cc *k = &c->cc;

	m->gauge(m->arg, "cc_rate_bytes_per_second",
		 "congestion control: the rate it paces the QP at (0 = off)", NULL,
		 c->on ? (double)sdr_cc_rate(k) / 8 : 0.0);
	m->gauge(m->arg, "cc_ceiling_bytes_per_second", "congestion control: its ceiling", NULL,
		 (double)k->ceiling / 8);
	m->gauge(m->arg, "cc_base_rtt_seconds", "congestion control: base RTT", NULL,
		 (double)k->base_rtt / 1e9);
	m->gauge(m->arg, "cc_srtt_seconds", "congestion control: smoothed RTT", NULL,
		 (double)k->srtt / 1e9);
	m->gauge(m->arg, "cc_alpha", "congestion control: smoothed CE fraction (DCQCN alpha)", NULL,
		 k->alpha);
	m->counter(m->arg, "cc_decisions", "congestion control: decisions by kind",
		   "kind=\"ecn-cut\"", (double)k->dec_ecn);
	m->counter(m->arg, "cc_decisions", "congestion control: decisions by kind",
		   "kind=\"delay-cut\"", (double)k->dec_delay);
	m->counter(m->arg, "cc_decisions", "congestion control: decisions by kind",
		   "kind=\"loss-cut\"", (double)k->dec_loss);
	m->counter(m->arg, "cc_decisions", "congestion control: decisions by kind",
		   "kind=\"increase\"", (double)k->increases);
	m->counter(m->arg, "cc_decisions", "congestion control: decisions by kind",
		   "kind=\"hold-app-limited\"", (double)k->holds_app);
	m->counter(m->arg, "cc_decisions", "congestion control: decisions by kind",
		   "kind=\"hold-draining\"", (double)k->holds_drain);
	m->counter(m->arg, "cc_dlv_cuts",
		   "congestion control: ECN cuts taken between decisions, the delivery after a "
		   "cut below dlv_fall of its rate (a capacity that fell)",
		   NULL, (double)k->dlv_cuts);
	m->counter(m->arg, "cc_delay_spared",
		   "congestion control: decisions whose queueing delay above the delay target "
		   "did not last over its span (no delay cut: a host's noise)",
		   NULL, (double)k->delay_spared);
	m->counter(m->arg, "cc_probes",
		   "congestion control: increases that probed above the rate of its last cuts",
		   NULL, (double)k->probes);
	m->gauge(m->arg, "cc_competitive",
		 "congestion control: 1 in the TCP-competitive mode (a queue its cuts did not "
		 "shrink)",
		 NULL, k->comp ? 1.0 : 0.0);
	m->counter(m->arg, "cc_competitive_entered",
		   "congestion control: times it entered the TCP-competitive mode", NULL,
		   (double)k->comp_enters);
	m->counter(
		m->arg, "cc_competitive_expired",
		"congestion control: times a loss after 4 s in the TCP-competitive mode ended it",
		NULL, (double)k->comp_expired);
	static const char lost_help[] = "congestion control: packets found lost, by whether it "
					"counted them (not those sent before its last cut)";

	m->counter(m->arg, "cc_lost_packets", lost_help, "kind=\"counted\"",
		   (double)k->lost_events);
	m->counter(m->arg, "cc_lost_packets", lost_help, "kind=\"sent-before-cut\"",
		   (double)k->stale_lost);
	m->counter(m->arg, "cc_ce_echoed", "congestion control: CE marks its peer echoed", NULL,
		   (double)c->ce_echoed);
	m->counter(m->arg, "cc_ce_received", "data packets that arrived CE-marked", NULL,
		   (double)c->rx_ce);
}
