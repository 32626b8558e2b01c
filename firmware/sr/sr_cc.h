/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Congestion control of a reliable QP (layer sr; docs/congestion.md): the
 * decision core (common/sdr_cc.c) wired into the SR engine. The sender
 * feeds it what its ACKs say (units acknowledged, their bytes, the Karn RTT
 * sample, the receiver's ECN echo) and its retransmissions, and sets the
 * QP's pacer rate from it (the configured rate is the ceiling); the
 * receiver counts the CE-marked data packets and echoes the counts in every
 * ACK (docs/wire-format.md §6 "ECN echo"). No allocation: the state lives in
 * struct sdr_sr, allocated at QP set-up.
 */
#ifndef SDR_SR_CC_H
#define SDR_SR_CC_H

#include <stdint.h>
#include <stdio.h>

#include "sdr_cc.h"

struct sdr_qp;
struct sdr_sr;
struct sdr_worker;
struct sdr_kv;
struct sdr_metric_sink;
struct sdr_parsed;
struct sdr_ctrl_hdr;
struct sdr_ack_echo;

/** The ceiling of a QP whose rate and port rate are both 0 (unpaced). */
#define SDR_SR_CC_DEFAULT_CEILING 10000000000ull

/** Per-QP state (in struct sdr_sr). */
struct sdr_sr_cc {
	struct sdr_cc cc;
	uint8_t on;        /* the controller paces the QP's sends */
	uint8_t echo_seen; /* echo_ce/echo_pkts hold the last echo's counts */
	uint8_t started;   /* the controller's clock started (first event) */
	uint32_t echo_ce, echo_pkts;
	uint32_t fb_pkts, fb_ce;    /* this ACK's echo: new data packets, CE marks */
	uint32_t frame16;           /* 16 x the mean bytes of its data frames sent */
	uint64_t applied_bps;       /* rate the pacer has (0: give it) */
	uint32_t held_seen;         /* qp->pace_held when the controller last looked */
	uint64_t tx_iv;             /* the controller's interval tx_first/last are of */
	uint64_t tx_first, tx_last; /* TSC of its first and last data frame */
	/* sender counters (stats) */
	uint64_t echo_acks;    /* ACKs with an ECN echo */
	uint64_t ce_echoed;    /* CE marks the echoes reported */
	uint64_t rate_sets;    /* times the pacer's rate was changed */
	uint64_t echo_resyncs; /* echoes whose counts went back (the peer restarted) */
	/* receiver: running counts of the QP's data packets (echoed) */
	uint32_t rx_ce, rx_pkts;
	uint32_t rx_ect; /* ECN-capable ones since the last ACK (--cc-ack-pkts) */
};

/** Main lcore, at QP set-up (sdr_sr_init): on per --cc, ceiling from the
 *  QP's rate, else its port's rate, else SDR_SR_CC_DEFAULT_CEILING. */
void sdr_sr_cc_init(struct sdr_sr_cc *c, const struct sdr_qp *qp, int on);

/** The QP's configured rate changed (worker lcore): a new ceiling. */
void sdr_sr_cc_set_ceiling(struct sdr_sr_cc *c, const struct sdr_qp *qp);

/** Give the pacer the controller's rate when it differs from the one it
 *  has (worker lcore; cheap when nothing changed). */
void sdr_sr_cc_apply(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_sr_cc *c);

/** A data packet of @p bytes on the wire left (first pass or again) at
 *  @p now (TSC): the span of the controller's interval's sends. */
static inline void sdr_sr_cc_sent(struct sdr_sr_cc *c, uint32_t bytes, uint64_t now)
{
	if (!c->on)
		return;
	sdr_cc_on_sent(&c->cc, bytes);
	c->frame16 += bytes - c->frame16 / 16; /* (a mean over about 16 frames) */
	if (c->tx_iv != c->cc.intervals) {
		c->tx_iv = c->cc.intervals;
		c->tx_first = now;
	}
	c->tx_last = now;
}

/** Receiver: a data packet of the QP arrived (ICRC checked). @return the
 *  ECN-capable data packets since the last ACK (0 when it is not one). */
static inline uint32_t sdr_sr_cc_rx_data(struct sdr_sr_cc *c, uint8_t ecn)
{
	c->rx_pkts++;
	if (ecn == 3 /* SDR_ECN_CE */)
		c->rx_ce++;
	return ecn ? ++c->rx_ect : 0;
}

/** Receiver: the echo an ACK carries now. */
void sdr_sr_cc_echo_out(const struct sdr_sr_cc *c, struct sdr_ack_echo *e);

/** Sender: an ACK of @p len bytes arrived; take its ECN echo, if any: the
 *  data packets and CE marks the receiver counted since the echo before,
 *  given to the controller by sdr_sr_cc_ack_end() after the ACK's units. */
void sdr_sr_cc_echo_in(struct sdr_sr_cc *c, const uint8_t *msg, size_t len,
		       const struct sdr_ctrl_hdr *h);

/** Sender: a unit of @p pkts packets and @p bytes on the wire was newly
 *  acknowledged at TSC @p now; @p rtt_cyc its RTT sample (0: none, Karn).
 *  From a receiver that echoes, the sample alone (the echo tells what was
 *  delivered); from one that does not, the unit is the delivery. */
void sdr_sr_cc_acked(struct sdr_sr_cc *c, uint64_t now, uint64_t rtt_cyc, uint32_t pkts,
		     uint32_t bytes);

/** Sender: the ACK taken at TSC @p now is done: the delivery its echo
 *  counted goes to the controller, at the mean bytes of the QP's data
 *  frames (docs/congestion.md "Feedback between units"). */
void sdr_sr_cc_ack_end(struct sdr_sr_cc *c, uint64_t now);

/** Sender: a unit of @p pkts packets, last sent at TSC @p sent, is being
 *  retransmitted (a loss; sdr_cc_on_loss_unit()); @p sent 0: @p pkts
 *  losses of unknown age, each counted (sdr_cc_on_loss()). */
void sdr_sr_cc_lost(struct sdr_sr_cc *c, uint64_t now, uint32_t pkts, uint64_t sent);

/** TSC cycles the QP's pacer takes to send @p bytes on the wire at the rate
 *  in force: the controller's when it is on, else the QP's (its port's);
 *  0 when unpaced. Timers that wait for the QP's own transmissions (EC's
 *  parity) wait this long: at a low controller rate they do not expire
 *  before the packets they wait for have left. */
uint64_t sdr_sr_pace_cycles(const struct sdr_qp *qp, const struct sdr_sr_cc *c, uint64_t bytes);

/* stats (main lcore; the worker's values slightly stale) */
void sdr_sr_cc_print(FILE *f, const struct sdr_sr_cc *c);
void sdr_sr_cc_json(FILE *f, const struct sdr_sr_cc *c);
void sdr_sr_cc_kv(const struct sdr_sr_cc *c, const struct sdr_kv *kv);
void sdr_sr_cc_metrics(const struct sdr_sr_cc *c, const struct sdr_metric_sink *m);

#endif /* SDR_SR_CC_H */
