/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Congestion control wired into the SR engine (firmware/sr/sr_cc.c), on the
 * engine rig's virtual clock (tests/firmware/engine_rig.h): a stream of
 * 64 KiB sends from A to B over 10 ms of RTT, the rig's wire marking CE on
 * ECN-capable data frames when told to.
 *
 *   on    --cc on: A's data frames are ECT(0); while the wire marks CE the
 *         receiver counts the marks, its ACKs echo them and the sender's
 *         controller learns every one (ce_echoed = the receiver's count once
 *         the wire is quiet) and cuts on them; the pacer's rate is always
 *         the controller's (the wheel's cycles per byte), never above the
 *         ceiling; a lower configured rate (QP_SET_RATE's worker half) is a
 *         new ceiling at once, and the frames that leave keep under it;
 *   off   --cc off: not ECN-capable, the pacer at the configured rate, no
 *         controller decision; the receiver still counts and echoes;
 *   perqp the QP's own setting (the request's cc) over the daemon's;
 *   settle marks echoed for duplicates (counted by the receiver, acknowledged
 *         once) go to the controller with their ACK: no cut after the marks
 *         end, every echoed packet and mark taken;
 *   noise --cc-noise-probe on reaches the controllers (off by default);
 *   airef --cc-ai-ref K reaches the controllers (0 by default);
 *   fb    the receiver's ACKs between units (--cc-ack-pkts, 4 by default);
 *   echo  the echo's running counts as the sender takes them: the first, then
 *         the differences, counts that went back (a restored receiver).
 *
 * `test_ccwire NAME` runs one (meson: ccwire_NAME).
 */
#include <stdlib.h>
#include <string.h>

#include "engine_rig.h"
#include "sdr_test.h"
#include "sr_qp.h"
#include "worker.h"

#define MSG 65536u
#define WINDOW 16u
#define US 1000ull
#define MS 1000000ull
#define RATE 1000000000ull /* the QPs' configured rate: the ceiling */

struct stream {
	uint64_t sent, recvd; /* posted */
	uint64_t a_bytes_since;
};
static struct stream st;

/* receives that completed, and those not bit-exact or in error */
static uint64_t b_done, b_bad;

/* keep WINDOW sends and receives posted; receive n takes send n, whose
 * pattern is that of its send slot, n % WINDOW. Receives may complete out
 * of posting order (host-api.md §2): a receive's wr_id carries its number
 * and its buffer slot (number << 8 | slot), each completed receive is
 * checked against the pattern of its number, cleared, and its slot posted
 * again for the next number */
#define RX_WRID(n, slot) ((uint64_t)(n) << 8 | (slot))
static void on_cqe(struct rig *r, int side, const struct sdr_cqe *e, void *arg)
{
	(void)arg;
	if (side == RIG_B) {
		unsigned slot = (unsigned)(e->wr_id & 0xff);
		uint64_t n = e->wr_id >> 8;
		uint8_t *buf = r->s[RIG_B].mem + (size_t)slot * MSG;

		b_done++;
		if (e->status || e->length != MSG ||
		    rig_pattern_diff(buf, MSG, (unsigned)(n % WINDOW)) != 0) {
			b_bad++;
			printf("bad recv %llu: status %d len %u diff %zu\n", (unsigned long long)n,
			       e->status, e->length,
			       rig_pattern_diff(buf, MSG, (unsigned)(n % WINDOW)));
		}
		memset(buf, 0, MSG);
		rig_recv(r, RIG_B, (size_t)slot * MSG, MSG, RX_WRID(st.recvd, slot));
		st.recvd++;
	} else {
		rig_send(r, RIG_A, (st.sent % WINDOW) * MSG, MSG, 0, st.sent);
		st.sent++;
	}
}

/* data frames A sent, and their bytes on the wire, while counting */
static uint64_t a_frames, a_ect, a_bytes;
static enum rig_verdict on_frame(struct rig *r, const struct rig_frame_info *fi, void *arg)
{
	(void)r;
	(void)arg;
	if (fi->from == RIG_A && fi->kind == RIG_K_DATA) {
		a_frames++;
		a_ect += fi->p->ecn == SDR_ECN_ECT0;
		a_bytes += sdr_wire_data_frame_bytes(fi->dma_len,
						     fi->p->opcode == SDR_OP_UC_WRITE_ONLY_IMM);
	}
	return RIG_PASS;
}

/* the scheme of the next rig's QPs (SR unless a test sets it) */
static uint8_t mk_rel = SDR_REL_SR, mk_code, mk_k, mk_m;

static struct rig *mk_qp(const char *cc, uint8_t qp_cc)
{
	char args[256];
	struct rig_opts o = {.args = args,
			     .mem_bytes = (size_t)WINDOW * MSG,
			     .seed = t_rnd(),
			     .mbufs = 4096,
			     .busy_ns = 1000,
			     .idle_ns = 1000,
			     .qp_cc = qp_cc};
	struct rig *r;

	snprintf(args, sizeof(args),
		 "--mtu 4096 --chunk-pkts 1 --max-msg 65536 --sr-ack-us 50 --cc %s", cc);
	o.attr.reliability = mk_rel;
	o.attr.ec_code = mk_code;
	o.attr.ec_k = mk_k;
	o.attr.ec_m = mk_m;
	o.attr.rate_bps = RATE;
	r = rig_new(&o);
	r->link[RIG_A].delay_ns = r->link[RIG_B].delay_ns = 5 * MS;
	r->filter = on_frame;
	r->on_cqe = on_cqe;
	memset(&st, 0, sizeof(st));
	b_done = b_bad = 0;
	for (unsigned i = 0; i < WINDOW; i++) {
		rig_recv(r, RIG_B, (size_t)i * MSG, MSG, RX_WRID(st.recvd, i));
		st.recvd++;
		rig_pattern(r->s[RIG_A].mem + (size_t)i * MSG, MSG, i);
		rig_send(r, RIG_A, (st.sent % WINDOW) * MSG, MSG, 0, st.sent);
		st.sent++;
	}
	return r;
}

static struct rig *mk(const char *cc)
{
	return mk_qp(cc, SDR_QP_CC_DEFAULT);
}

static const struct sdr_sr_cc *cc_of(const struct rig *r, int side)
{
	return &sdr_sr_of(r->s[side].qp)->cc;
}

/* the wheel's cycles per byte of A's QP */
static uint64_t a_cpb(const struct rig *r)
{
	return r->s[RIG_A].w->sched.wheel.f[sdr_qp_flow(r->s[RIG_A].qp)].cpb_fp;
}

/* Run @p ns, checking at every iteration that the pacer has the rate the
 * controller gave it and that it is within the ceiling. */
static unsigned run_checked(struct rig *r, uint64_t ns, uint64_t ceiling)
{
	const struct sdr_sr_cc *c = cc_of(r, RIG_A);
	uint64_t end = r->now + ns;
	unsigned bad = 0;

	while (r->now < end) {
		rig_iter(r);
		if (!c->applied_bps)
			continue;
		if (a_cpb(r) != sdr_wheel_cpb(1000000000ull, c->applied_bps / 8) ||
		    c->applied_bps > ceiling || sdr_cc_rate(&c->cc) > ceiling)
			bad++;
	}
	return bad;
}

static void t_on(void)
{
	struct rig *r = mk("on");
	const struct sdr_sr_cc *ca = cc_of(r, RIG_A), *cb = cc_of(r, RIG_B);
	uint64_t f0, b0, t0, rate_before;
	double got;

	/* start-up: the rate grows from 1/64 of the ceiling */
	CHECK(run_checked(r, 200 * MS, RATE) == 0, "pacer rate != controller rate");
	printf("start-up: rate %.1f Mbit/s after 200 ms, %llu intervals, last %s, "
	       "base rtt %.0f us\n",
	       sdr_cc_rate(&ca->cc) / 1e6, (unsigned long long)ca->cc.intervals,
	       sdr_cc_event_name(ca->cc.last), ca->cc.base_rtt / 1e3);
	CHECK(ca->on && ca->cc.intervals > 10, "%llu intervals",
	      (unsigned long long)ca->cc.intervals);
	CHECK(sdr_cc_rate(&ca->cc) > RATE / 4, "rate %llu after start-up",
	      (unsigned long long)sdr_cc_rate(&ca->cc));
	CHECK(a_frames > 100 && a_ect == a_frames, "%llu of %llu data frames ECT(0)",
	      (unsigned long long)a_ect, (unsigned long long)a_frames);
	CHECK(cb->rx_ce == 0 && ca->ce_echoed == 0 && ca->echo_acks > 0,
	      "no CE yet: rx_ce %u echoed %llu, %llu ACKs with an echo", cb->rx_ce,
	      (unsigned long long)ca->ce_echoed, (unsigned long long)ca->echo_acks);

	/* a lower configured rate is a ceiling at once */
	sdr_worker_qp_rate(r->s[RIG_A].w, r->s[RIG_A].qp, RATE / 5);
	CHECK(ca->cc.ceiling == RATE / 5 && sdr_cc_rate(&ca->cc) <= RATE / 5, "ceiling %llu",
	      (unsigned long long)ca->cc.ceiling);
	CHECK(run_checked(r, 20 * MS, RATE / 5) == 0, "over the new ceiling");
	f0 = a_frames;
	b0 = a_bytes;
	t0 = r->now;
	CHECK(run_checked(r, 100 * MS, RATE / 5) == 0, "over the new ceiling");
	got = (double)(a_bytes - b0) * 8e9 / (double)(r->now - t0);
	printf("ceiling %.0f Mbit/s: %llu frames, %.1f Mbit/s sent, controller at %.1f\n",
	       RATE / 5 / 1e6, (unsigned long long)(a_frames - f0), got / 1e6,
	       sdr_cc_rate(&ca->cc) / 1e6);
	CHECK(got <= RATE / 5 * 1.02 && got > RATE / 5 * 0.6, "%.1f Mbit/s", got / 1e6);

	/* a queue marks half the data: the marks reach the controller */
	rate_before = sdr_cc_rate(&ca->cc);
	r->link[RIG_A].ce_data = 0.5;
	CHECK(run_checked(r, 50 * MS, RATE / 5) == 0, "pacer rate != controller rate");
	r->link[RIG_A].ce_data = 0;
	CHECK(run_checked(r, 20 * MS, RATE / 5) == 0, "pacer rate != controller rate");
	printf("CE: wire marked %llu, receiver counted %u of %u, sender learnt %llu; "
	       "ecn cuts %llu, alpha %.3f, rate %.1f -> %.1f Mbit/s\n",
	       (unsigned long long)r->ws[RIG_A].ce_marked, cb->rx_ce, cb->rx_pkts,
	       (unsigned long long)ca->ce_echoed, (unsigned long long)ca->cc.dec_ecn, ca->cc.alpha,
	       rate_before / 1e6, sdr_cc_rate(&ca->cc) / 1e6);
	CHECK(r->ws[RIG_A].ce_marked > 50 && cb->rx_ce == r->ws[RIG_A].ce_marked,
	      "receiver counted %u of %llu marks", cb->rx_ce,
	      (unsigned long long)r->ws[RIG_A].ce_marked);
	CHECK(ca->ce_echoed == cb->rx_ce, "sender learnt %llu of %u marks",
	      (unsigned long long)ca->ce_echoed, cb->rx_ce);
	CHECK(ca->cc.ce > 0 && ca->cc.ce <= ca->ce_echoed, "controller took %llu marks",
	      (unsigned long long)ca->cc.ce);
	CHECK(ca->cc.dec_ecn > 0 && sdr_cc_rate(&ca->cc) < rate_before,
	      "no ECN cut (%llu), rate %llu", (unsigned long long)ca->cc.dec_ecn,
	      (unsigned long long)sdr_cc_rate(&ca->cc));
	CHECK(ca->cc.alpha > 0.05, "alpha %.3f", ca->cc.alpha);
	CHECK(rig_check_invariants(r) == 0, "rig invariants");
	rig_free(r);
}

static void t_off(void)
{
	struct rig *r = mk("off");
	const struct sdr_sr_cc *ca = cc_of(r, RIG_A), *cb = cc_of(r, RIG_B);

	rig_run_for(r, 50 * MS);
	CHECK(!ca->on && ca->cc.intervals == 0 && ca->applied_bps == 0, "controller ran");
	CHECK(a_frames > 100 && a_ect == 0, "%llu of %llu data frames ECN-capable",
	      (unsigned long long)a_ect, (unsigned long long)a_frames);
	CHECK(a_cpb(r) == sdr_wheel_cpb(1000000000ull, RATE / 8), "pacer not at the QP's rate");
	/* a receiver counts and echoes whatever its sender does */
	CHECK(cb->rx_pkts > 100 && ca->echo_acks == 0, "rx_pkts %u", cb->rx_pkts);
	CHECK(rig_check_invariants(r) == 0, "rig invariants");
	rig_free(r);
}

/* The QP's own setting (sdr_qp_attr.cc, the request's cc) over the
 * daemon's: on under --cc off, off under --cc on. */
static void t_perqp(void)
{
	struct rig *r = mk_qp("off", SDR_QP_CC_ON);

	rig_run_for(r, 200 * MS);
	CHECK(cc_of(r, RIG_A)->on && cc_of(r, RIG_A)->cc.intervals > 0 && a_ect == a_frames &&
		      a_frames > 100,
	      "QP on under --cc off: %llu of %llu ECT", (unsigned long long)a_ect,
	      (unsigned long long)a_frames);
	rig_free(r);
	r = mk_qp("on", SDR_QP_CC_OFF);
	a_frames = a_ect = 0;
	rig_run_for(r, 50 * MS);
	CHECK(!cc_of(r, RIG_A)->on && a_ect == 0 && a_frames > 100,
	      "QP off under --cc on: %llu of %llu ECT", (unsigned long long)a_ect,
	      (unsigned long long)a_frames);
	CHECK(a_cpb(r) == sdr_wheel_cpb(1000000000ull, RATE / 8), "pacer not at the QP's rate");
	rig_free(r);
}

/* Run @p ns; the lowest rate of A's controller in its second half. */
static uint64_t run_low(struct rig *r, uint64_t ns)
{
	const struct sdr_sr_cc *c = cc_of(r, RIG_A);
	uint64_t end = r->now + ns, half = r->now + ns / 2, low = UINT64_MAX;

	while (r->now < end) {
		rig_iter(r);
		if (r->now >= half && sdr_cc_rate(&c->cc) < low)
			low = sdr_cc_rate(&c->cc);
	}
	return low;
}

/* --cc on under 1 % random loss of the data (and parity) frames both ways
 * on an uncongested link: every message completes bit-exact, and the
 * controller does not take the repaired loss for congestion (its rate stays
 * above a quarter of the ceiling; with timers that expired before the
 * parity had left at a low rate, and a cut per lost unit, it sank to its
 * 1 Mbit/s floor). */
static void lossy(uint8_t rel, uint8_t code, uint8_t k, uint8_t m)
{
	struct rig *r;
	const struct sdr_sr_cc *ca;
	uint64_t low;

	mk_rel = rel;
	mk_code = code;
	mk_k = k;
	mk_m = m;
	r = mk("on");
	ca = cc_of(r, RIG_A);
	r->link[RIG_A].loss_data = r->link[RIG_B].loss_data = 0.01;
	low = run_low(r, 1000 * MS);
	printf("1 %% loss: %llu receives (%llu bad), %llu data frames lost, rate %.1f Mbit/s "
	       "(lowest of the last 500 ms %.1f), cuts loss %llu ecn %llu delay %llu, "
	       "losses counted %llu, stale %llu, rto expiries %llu\n",
	       (unsigned long long)b_done, (unsigned long long)b_bad,
	       (unsigned long long)r->ws[RIG_A].lost[RIG_K_DATA], sdr_cc_rate(&ca->cc) / 1e6,
	       low / 1e6, (unsigned long long)ca->cc.dec_loss, (unsigned long long)ca->cc.dec_ecn,
	       (unsigned long long)ca->cc.dec_delay, (unsigned long long)ca->cc.lost_events,
	       (unsigned long long)ca->cc.stale_lost,
	       (unsigned long long)SDR_QP_CTR(r->s[RIG_A].qp, sr, rto_expiries));
	CHECK(r->ws[RIG_A].lost[RIG_K_DATA] > 20, "%llu data frames lost",
	      (unsigned long long)r->ws[RIG_A].lost[RIG_K_DATA]);
	CHECK(b_done > 100 && b_bad == 0, "%llu receives, %llu not bit-exact",
	      (unsigned long long)b_done, (unsigned long long)b_bad);
	CHECK(low > RATE / 4, "rate fell to %.1f Mbit/s", low / 1e6);
	CHECK(rig_check_invariants(r) == 0, "rig invariants");
	rig_free(r);
	mk_rel = SDR_REL_SR;
	mk_code = mk_k = mk_m = 0;
}

static void t_ec(void)
{
	lossy(SDR_REL_EC, SDR_EC_RS, 4, 2);
}

static void t_auto(void)
{
	lossy(SDR_REL_AUTO, 0, 0, 0);
}

/* drops the next burst_left data frames of A */
static unsigned burst_left;
static enum rig_verdict burst_frame(struct rig *r, const struct rig_frame_info *fi, void *arg)
{
	on_frame(r, fi, arg);
	if (burst_left && fi->from == RIG_A && fi->kind == RIG_K_DATA) {
		burst_left--;
		return RIG_DROP;
	}
	return RIG_PASS;
}

/* A burst of 50 data frames (units) lost within one RTT (a start-up
 * overshoot into a path's buffer): one reaction, one or two cuts at most,
 * not one per unit or per interval its retransmissions span. */
static void t_burst(void)
{
	struct rig *r = mk("on");
	const struct sdr_sr_cc *ca = cc_of(r, RIG_A);
	uint64_t d0, r0, low;

	rig_run_for(r, 300 * MS);
	r0 = sdr_cc_rate(&ca->cc);
	d0 = ca->cc.dec_loss + ca->cc.dec_ecn + ca->cc.dec_delay;
	r->filter = burst_frame;
	burst_left = 50;
	low = run_low(r, 400 * MS);
	printf("burst of 50: rate %.1f -> %.1f Mbit/s (lowest of the last 200 ms %.1f), "
	       "cuts %llu (loss %llu), losses counted %llu, stale %llu, %llu receives\n",
	       r0 / 1e6, sdr_cc_rate(&ca->cc) / 1e6, low / 1e6,
	       (unsigned long long)(ca->cc.dec_loss + ca->cc.dec_ecn + ca->cc.dec_delay - d0),
	       (unsigned long long)ca->cc.dec_loss, (unsigned long long)ca->cc.lost_events,
	       (unsigned long long)ca->cc.stale_lost, (unsigned long long)b_done);
	CHECK(burst_left == 0 && r0 > RATE / 4, "burst not sent (%u left), rate %llu", burst_left,
	      (unsigned long long)r0);
	CHECK(ca->cc.dec_loss + ca->cc.dec_ecn + ca->cc.dec_delay - d0 <= 2, "%llu cuts",
	      (unsigned long long)(ca->cc.dec_loss + ca->cc.dec_ecn + ca->cc.dec_delay - d0));
	CHECK(low > RATE / 4, "rate fell to %.1f Mbit/s", low / 1e6);
	CHECK(b_bad == 0, "%llu receives not bit-exact", (unsigned long long)b_bad);
	CHECK(rig_check_invariants(r) == 0, "rig invariants");
	rig_free(r);
}

/* Marks echoed for packets no ACK of a unit covers - duplicates, which
 * the receiver counts and the sender acknowledges once - go to the
 * controller with the ACK that echoed them: once the wire stops marking,
 * the cuts on CE stop and no mark is left over, however many duplicates
 * the echoes counted (a pool that kept them for units gave a burst's marks
 * out a few at every ACK for seconds after the queue had gone). */
static void t_settle(void)
{
	struct rig *r = mk("on");
	const struct sdr_sr_cc *ca = cc_of(r, RIG_A), *cb = cc_of(r, RIG_B);
	uint64_t d0, d1;

	r->link[RIG_A].dup = 0.2;
	rig_run_for(r, 200 * MS);
	r->link[RIG_A].ce_data = 0.5;
	rig_run_for(r, 50 * MS);
	r->link[RIG_A].ce_data = 0;
	rig_run_for(r, 60 * MS); /* (an RTT of 10 ms, a decision's stale window) */
	d0 = ca->cc.dec_ecn;
	rig_run_for(r, 300 * MS);
	d1 = ca->cc.dec_ecn;
	printf("settle: %llu duplicates; receiver counted %u packets, %u marked; the "
	       "controller took %llu packets and %llu marks of the %u and %llu echoed; ECN cuts "
	       "%llu, of them %llu in the 300 ms after the marks\n",
	       (unsigned long long)r->ws[RIG_A].dup[RIG_K_DATA], cb->rx_pkts, cb->rx_ce,
	       (unsigned long long)ca->cc.acked, (unsigned long long)ca->cc.ce, ca->echo_pkts,
	       (unsigned long long)ca->ce_echoed, (unsigned long long)d1,
	       (unsigned long long)(d1 - d0));
	CHECK(r->ws[RIG_A].dup[RIG_K_DATA] > 100 && cb->rx_ce > 50, "%llu duplicates, %u marks",
	      (unsigned long long)r->ws[RIG_A].dup[RIG_K_DATA], cb->rx_ce);
	CHECK(ca->ce_echoed == cb->rx_ce && d0 > 0, "echoed %llu of %u marks, %llu ECN cuts",
	      (unsigned long long)ca->ce_echoed, cb->rx_ce, (unsigned long long)d0);
	CHECK(d1 == d0, "%llu ECN cuts after the marks ended", (unsigned long long)(d1 - d0));
	/* every echoed packet and mark went to the controller with its ACK
	 * (but the first echo's, where the counting starts: a unit or two) */
	CHECK(ca->echo_pkts - ca->cc.acked <= 40 && ca->cc.ce == ca->ce_echoed && ca->fb_pkts == 0,
	      "the controller took %llu of %u packets, %llu of %llu marks",
	      (unsigned long long)ca->cc.acked, ca->echo_pkts, (unsigned long long)ca->cc.ce,
	      (unsigned long long)ca->ce_echoed);
	CHECK(b_bad == 0, "%llu receives not bit-exact", (unsigned long long)b_bad);
	CHECK(rig_check_invariants(r) == 0, "rig invariants");
	rig_free(r);
}

/* The receiver's ACKs between units (--cc-ack-pkts): with 16-packet units
 * (one a message) and ACKs coalesced over 500 us, the receiver acknowledges
 * every 4 ECN-capable data packets, at most one such ACK per 100 us, and the
 * sender's controller takes each echo's packets and marks at that ACK; with
 * --cc-ack-pkts 0 only the units' ACKs go, and the echo in them is still
 * the delivery. @return B's ACKs per data packet it received. */
static double fb_run(const char *cc, unsigned n)
{
	struct rig *r = mk(cc);
	const struct sdr_sr_cc *ca = cc_of(r, RIG_A), *cb = cc_of(r, RIG_B);
	const struct sdr_qp *qb = r->s[RIG_B].qp;
	uint64_t acks, fb, t0;
	double per;

	rig_run_for(r, 200 * MS); /* (the start-up) */
	t0 = r->now;
	acks = SDR_QP_CTR(qb, sr, acks_tx);
	fb = SDR_QP_CTR(qb, sr, fb_acks);
	r->link[RIG_A].ce_data = 0.1;
	CHECK(run_checked(r, 50 * MS, RATE) == 0, "pacer rate != controller rate");
	r->link[RIG_A].ce_data = 0;
	CHECK(run_checked(r, 150 * MS, RATE) == 0, "pacer rate != controller rate");
	acks = SDR_QP_CTR(qb, sr, acks_tx) - acks;
	fb = SDR_QP_CTR(qb, sr, fb_acks) - fb;
	per = (double)SDR_QP_CTR(qb, sr, acks_tx) / cb->rx_pkts;
	printf("--cc-ack-pkts %u: B received %u data packets (%u CE), sent %llu ACKs (%.3f a "
	       "packet), %llu of them in 200 ms, %llu between units; A's controller took %llu "
	       "packets and %llu marks of the %u and %llu echoed, rate %.1f Mbit/s\n",
	       n, cb->rx_pkts, cb->rx_ce, (unsigned long long)SDR_QP_CTR(qb, sr, acks_tx), per,
	       (unsigned long long)acks, (unsigned long long)fb, (unsigned long long)ca->cc.acked,
	       (unsigned long long)ca->cc.ce, ca->echo_pkts, (unsigned long long)ca->ce_echoed,
	       sdr_cc_rate(&ca->cc) / 1e6);
	CHECK(ca->echo_pkts - ca->cc.acked <= 40 && ca->cc.ce == ca->ce_echoed && ca->ce_echoed > 0,
	      "the controller took %llu of %u packets, %llu of %llu marks",
	      (unsigned long long)ca->cc.acked, ca->echo_pkts, (unsigned long long)ca->cc.ce,
	      (unsigned long long)ca->ce_echoed);
	if (n) {
		CHECK(fb > 0, "no ACK between units");
		/* (no two of them closer than 100 us) */
		CHECK(fb <= (r->now - t0) / (100 * US) + 1, "%llu ACKs between units in %llu us",
		      (unsigned long long)fb, (unsigned long long)((r->now - t0) / US));
	} else {
		CHECK(fb == 0, "%llu ACKs between units with --cc-ack-pkts 0",
		      (unsigned long long)fb);
	}
	CHECK(b_done > 0 && b_bad == 0, "%llu receives, %llu not bit-exact",
	      (unsigned long long)b_done, (unsigned long long)b_bad);
	CHECK(rig_check_invariants(r) == 0, "rig invariants");
	rig_free(r);
	return per;
}

static void t_fb(void)
{
	double with = fb_run("on --chunk-pkts 16 --sr-ack-us 500", 4);
	double without = fb_run("on --chunk-pkts 16 --sr-ack-us 500 --cc-ack-pkts 0", 0);

	/* 16 packets a unit: a unit's ACK and its FULL against one per 4 */
	CHECK(with > 2 * without, "%.3f ACKs a packet against %.3f", with, without);
}

/* One ACK with the ECN echo (@p ce, @p pkts) - or without one (@p echo 0,
 * an older receiver) - taken by @p c at TSC @p now. */
static void echo_ack(struct sdr_sr_cc *c, int echo, uint32_t ce, uint32_t pkts, uint64_t now)
{
	uint8_t msg[256];
	struct sdr_ack_entry e = {.seq = 7, .cum = 1};
	struct sdr_ack_echo x = {.ce = ce, .pkts = pkts};
	struct sdr_ctrl_hdr h;
	size_t len = echo ? sdr_ctrl_ack_encode_echo(msg, 0x100, &e, 1, &x)
			  : sdr_ctrl_ack_encode(msg, 0x100, &e, 1);

	CHECK(len > 0 && sdr_ctrl_hdr_decode(msg, len, &h) == 0, "ACK not built");
	sdr_sr_cc_echo_in(c, msg, len, &h);
	sdr_sr_cc_ack_end(c, now);
}

/* The echo's running counts as the sender's controller takes them: the
 * first echo is where the counting starts (a restored sender meets counts
 * from before), each later one gives the packets, marks and bytes since
 * the one before; counts that went back (the receiving QP restored, its
 * counts from 0 again) start it again from there, with nothing given,
 * instead of ignoring every echo until the counts pass the old ones; an
 * ACK without an echo gives nothing. */
static void t_echo(void)
{
	struct rig *r = mk("on");
	struct sdr_sr_cc c;
	uint64_t now = r->now, frame = sdr_wire_data_frame_bytes(4096, 1);

	sdr_sr_cc_init(&c, r->s[RIG_A].qp, 1);
	echo_ack(&c, 1, 5, 100000, now); /* (history: a restored sender) */
	CHECK(c.echo_acks == 1 && c.cc.acked == 0 && c.ce_echoed == 0,
	      "first echo: %llu packets, %llu marks given", (unsigned long long)c.cc.acked,
	      (unsigned long long)c.ce_echoed);
	echo_ack(&c, 1, 7, 100040, now);
	echo_ack(&c, 1, 7, 100060, now);
	CHECK(c.cc.acked == 60 && c.cc.ce == 2 && c.ce_echoed == 2,
	      "%llu packets, %llu marks given (60, 2)", (unsigned long long)c.cc.acked,
	      (unsigned long long)c.cc.ce);
	/* (the ACK that opens the interval does not count its bytes) */
	CHECK(c.cc.iv_bytes == 20 * frame, "interval bytes %llu, not 20 frames of %llu",
	      (unsigned long long)c.cc.iv_bytes, (unsigned long long)frame);
	echo_ack(&c, 1, 0, 10, now); /* the receiver restarted */
	CHECK(c.echo_resyncs == 1 && c.cc.acked == 60, "resyncs %llu, %llu packets given",
	      (unsigned long long)c.echo_resyncs, (unsigned long long)c.cc.acked);
	echo_ack(&c, 1, 1, 30, now);
	CHECK(c.cc.acked == 80 && c.cc.ce == 3, "after the restart: %llu packets, %llu marks",
	      (unsigned long long)c.cc.acked, (unsigned long long)c.cc.ce);
	echo_ack(&c, 0, 0, 0, now);
	CHECK(c.echo_acks == 5 && c.cc.acked == 80, "an ACK without an echo: %llu echoes",
	      (unsigned long long)c.echo_acks);
	/* more marks than packets are not believed */
	echo_ack(&c, 1, 11, 35, now);
	CHECK(c.cc.acked == 85 && c.cc.ce == 8, "%llu packets, %llu marks (85, 8)",
	      (unsigned long long)c.cc.acked, (unsigned long long)c.cc.ce);
	rig_free(r);
}

/* A daemon option of the controller reaches every QP's controller: the
 * parameter @p get reads is @p def without @p args and @p want with them,
 * and the stream still completes bit-exact at the controller's rate. */
static void option_reaches(const char *args, double (*get)(const struct sdr_cc_params *),
			   double def, double want)
{
	char cc[128];
	struct rig *r = mk("on");

	CHECK(get(&cc_of(r, RIG_A)->cc.p) == def, "default: %.1f, not %.1f",
	      get(&cc_of(r, RIG_A)->cc.p), def);
	rig_free(r);
	snprintf(cc, sizeof(cc), "on %s", args);
	r = mk(cc);
	CHECK(get(&cc_of(r, RIG_A)->cc.p) == want, "%s: %.1f, not %.1f", args,
	      get(&cc_of(r, RIG_A)->cc.p), want);
	CHECK(run_checked(r, 300 * MS, RATE) == 0, "pacer rate != controller rate");
	CHECK(b_done > 0 && b_bad == 0, "%llu receives, %llu not bit-exact",
	      (unsigned long long)b_done, (unsigned long long)b_bad);
	CHECK(rig_check_invariants(r) == 0, "rig invariants");
	rig_free(r);
}

static double noise_probe_k(const struct sdr_cc_params *p)
{
	return p->noise_probe_k;
}

static double ai_ref_k(const struct sdr_cc_params *p)
{
	return p->ai_ref_k;
}

/* --cc-noise-probe on: noise_probe_k 2 (0 by default) */
static void t_noise(void)
{
	option_reaches("--cc-noise-probe on", noise_probe_k, 0, 2);
}

/* --cc-ai-ref K: ai_ref_k K (0 by default) */
static void t_airef(void)
{
	option_reaches("--cc-ai-ref 32", ai_ref_k, 0, 32);
}

static const struct t_case tests[] = {{"on", t_on},         {"off", t_off},     {"perqp", t_perqp},
				      {"ec", t_ec},         {"auto", t_auto},   {"burst", t_burst},
				      {"settle", t_settle}, {"noise", t_noise}, {"airef", t_airef},
				      {"fb", t_fb},         {"echo", t_echo}};

T_MAIN("test_ccwire", tests)
