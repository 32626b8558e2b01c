/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Time-based loss detection of the SR sender (firmware/sr/sr_send.c: the
 * RACK rule and the tail-loss probe of "The RACK-TLP Loss Detection
 * Algorithm for TCP", RFC 8985; docs/reliability.md "Loss detection") on
 * the engine rig's virtual clock (tests/firmware/engine_rig.h). Geometry:
 * MTU 1024, chunks of 4 packets (4 KiB units), 64 KiB messages, 10 Gbit/s,
 * 10 ms of RTT, the default ACK period (500 us).
 *
 *   single  one packet of a message lost: retransmitted about one RTT
 *           later by the RACK rule (not an RTO: rto_expiries unchanged,
 *           within 1.5 RTT + the ACK period of its loss), nothing spurious;
 *   reorder up to 1 ms of random extra delay on the data (within the
 *           reordering window): no retransmission at all, no duplicate;
 *   tail    the last two units of the last message lost, an RTO floor of
 *           50 ms (as TCP's): the tail-loss probe sends the last one again
 *           one PTO after it was sent, its ACK lets the RACK rule find the
 *           other; no RTO;
 *   tailhole one packet inside the last unit lost: the receiver's hole
 *           report finds it (no probe), and only it goes again;
 *   liar    forged hole reports that name packets as arrived which never
 *           did: the message still arrives whole;
 *   random  1 % of every frame lost both ways, 200 messages: all bit-exact,
 *           recovered by RACK, spurious retransmissions few;
 *   ec      EC (RS 4+2) with one packet lost per message: parity repairs it,
 *           RACK waits for the send's hold and retransmits nothing;
 *   lat16, lat4  (suite bench) a measurement: 20000 messages of 128 KiB one
 *           at a time over 25 ms of RTT and 1 % loss, units of 16 / 4
 *           packets of 4 KiB: completion-time percentiles and counters.
 *
 * `test_rack NAME` runs one (meson: rack_NAME).
 */
#include <stdlib.h>
#include <string.h>

#include "engine_rig.h"
#include "sdr_test.h"
#include "sr_counters.h"
#include "ec_counters.h"
#include "sr_qp.h"

#define MTU 1024u
#define MSG 65536u
#define WINDOW 16u
#define US 1000ull
#define MS 1000000ull
#define RTT (10 * MS)
#define ACK_PERIOD (500 * US) /* --sr-ack-us default */

/* A stream of messages A -> B: WINDOW sends and receives posted, each
 * receive checked bit-exact at its completion and posted again. */
struct stream {
	uint32_t total, len;
	uint32_t sent, recvd;            /* posted */
	uint32_t sends_done, recvs_done; /* completed */
	uint32_t bad_status, bad_data;   /* each must stay 0 */
	uint64_t last_done;              /* time of the last receive completion */
};
static struct stream st;

/* wr_id: the message number, and the buffer slot above bit 32 (a completion
 * frees its slot: they may complete out of order) */
static void post_send(struct rig *r, uint32_t slot)
{
	uint8_t *m = r->s[RIG_A].mem + (size_t)slot * MSG;

	rig_pattern(m, st.len, 1000 + st.sent);
	rig_send(r, RIG_A, (uint64_t)slot * MSG, st.len, 0, st.sent | (uint64_t)slot << 32);
	st.sent++;
}

static void post_recv(struct rig *r, uint32_t slot)
{
	rig_recv(r, RIG_B, (uint64_t)slot * MSG, MSG, st.recvd | (uint64_t)slot << 32);
	st.recvd++;
}

static void on_cqe(struct rig *r, int side, const struct sdr_cqe *e, void *arg)
{
	uint32_t n = (uint32_t)e->wr_id, slot = (uint32_t)(e->wr_id >> 32);

	(void)arg;
	if (e->status)
		st.bad_status++;
	if (side == RIG_B) {
		const uint8_t *m = r->s[RIG_B].mem + (size_t)slot * MSG;

		if (e->length != st.len || rig_pattern_diff(m, st.len, 1000 + n))
			st.bad_data++;
		st.recvs_done++;
		st.last_done = r->now;
		if (st.recvd < st.total)
			post_recv(r, slot);
	} else {
		st.sends_done++;
		if (st.sent < st.total)
			post_send(r, slot);
	}
}

static int stream_done(struct rig *r, void *arg)
{
	(void)r;
	(void)arg;
	return st.sends_done == st.total && st.recvs_done == st.total;
}

static struct rig *mk(uint8_t rel, uint64_t jitter, const char *extra)
{
	char args[256];
	struct rig_opts o = {.args = args, .mem_bytes = (size_t)WINDOW * MSG, .seed = t_rnd()};
	struct rig *r;

	snprintf(args, sizeof(args), "--mtu 1024 --chunk-pkts 4 --max-msg 65536 --port-rate 10g %s",
		 extra);

	o.attr.reliability = rel;
	if (rel == SDR_REL_EC) {
		o.attr.ec_code = SDR_EC_RS;
		o.attr.ec_k = 4;
		o.attr.ec_m = 2;
	}
	r = rig_new(&o);
	r->link[RIG_A].delay_ns = r->link[RIG_B].delay_ns = RTT / 2;
	r->link[RIG_A].jitter_ns = jitter;
	r->on_cqe = on_cqe;
	return r;
}

/* Run @p total messages of @p len through the stream; @return 0 when all
 * completed within @p limit_ns. */
static int stream_run(struct rig *r, uint32_t total, uint32_t len, uint64_t limit_ns)
{
	int rc;

	memset(&st, 0, sizeof(st));
	st.total = total;
	st.len = len;
	for (uint32_t i = 0; i < WINDOW && i < total; i++) {
		post_recv(r, i);
		post_send(r, i);
	}
	rc = rig_run_until(r, stream_done, NULL, limit_ns);
	CHECK(rc == 0, "%u of %u sends, %u receives done", st.sends_done, total, st.recvs_done);
	CHECK(st.bad_status == 0 && st.bad_data == 0, "%u bad status, %u receives not bit-exact",
	      st.bad_status, st.bad_data);
	return rc;
}

#define SR(r, name) SDR_QP_CTR((r)->s[RIG_A].qp, sr, name)

/* ---------------- one lost packet ---------------- */

struct one_loss {
	uint32_t seq, pkt;  /* the packet to lose (seq UINT32_MAX: the next message's) */
	int armed, dropped; /* dropped: 1 lost, 2 its retransmission seen */
	uint64_t t_lost, t_retx;
	unsigned nlose; /* lose this many packets from pkt on (tail) */
};

static enum rig_verdict lose_one(struct rig *r, const struct rig_frame_info *fi, void *arg)
{
	struct one_loss *l = arg;

	(void)r;
	if (!l->armed || fi->from != RIG_A || fi->kind != RIG_K_DATA)
		return RIG_PASS;
	if (l->seq == UINT32_MAX)
		l->seq = fi->seq; /* the first data frame after arming: its message */
	if (fi->seq != l->seq || fi->pkt_off < l->pkt || fi->pkt_off >= l->pkt + l->nlose)
		return RIG_PASS;
	if (l->dropped < (int)l->nlose) {
		if (!l->dropped)
			l->t_lost = fi->now;
		l->dropped++;
		return RIG_DROP;
	}
	if (!l->t_retx)
		l->t_retx = fi->now;
	return RIG_PASS;
}

/* Eight messages (RTT samples), then one with @p l's frames lost; @p rto0
 * and @p rack0 (if not NULL) take the sender's RTO expiries and RACK
 * retransmissions before it. @return when that message was posted. */
static uint64_t run_one_lossy(struct rig *r, struct one_loss *l, uint64_t *rto0, uint64_t *rack0)
{
	uint64_t t0;

	stream_run(r, 8, MSG, 1000 * MS);
	rig_run_for(r, 5 * MS);
	if (rto0)
		*rto0 = SR(r, rto_expiries);
	if (rack0)
		*rack0 = SR(r, rack_retx);
	r->filter = lose_one;
	r->filter_arg = l;
	l->armed = 1;
	t0 = r->now;
	stream_run(r, 1, MSG, 1000 * MS);
	return t0;
}

static void t_single(void)
{
	struct rig *r = mk(SDR_REL_SR, 0, "");
	struct one_loss l = {.seq = UINT32_MAX, .pkt = 21, .nlose = 1};
	uint64_t rto0, rack0, t0, delay;

	t0 = run_one_lossy(r, &l, &rto0, &rack0);
	delay = l.t_retx - l.t_lost;
	printf("single loss: srtt %.3f ms; lost at %.3f ms, retransmitted %.3f ms later (%.2f RTT),"
	       " message done after %.3f ms; rack_retx %llu rto_expiries %llu spurious %llu\n",
	       (double)sdr_sr_of(r->s[RIG_A].qp)->rtt.srtt / 1e6, (double)(l.t_lost - t0) / 1e6,
	       (double)delay / 1e6, (double)delay / RTT, (double)(st.last_done - t0) / 1e6,
	       (unsigned long long)(SR(r, rack_retx) - rack0),
	       (unsigned long long)(SR(r, rto_expiries) - rto0),
	       (unsigned long long)SR(r, spurious_retx));
	CHECK(l.dropped == 1 && l.t_retx, "lost %d, retransmitted at %llu", l.dropped,
	      (unsigned long long)l.t_retx);
	CHECK(delay >= RTT, "retransmitted %llu ns after the loss: before an ACK could say",
	      (unsigned long long)delay);
	CHECK(delay < RTT + RTT / 2 + ACK_PERIOD, "retransmitted %llu ns after the loss",
	      (unsigned long long)delay);
	CHECK(SR(r, rto_expiries) == rto0, "an RTO expired");
	CHECK(SR(r, rack_retx) == rack0 + 1, "rack_retx %llu",
	      (unsigned long long)(SR(r, rack_retx) - rack0));
	CHECK(SR(r, retx_units) == 1 && SR(r, tlp) == 0 && SR(r, spurious_retx) == 0,
	      "retx_units %llu tlp %llu spurious %llu", (unsigned long long)SR(r, retx_units),
	      (unsigned long long)SR(r, tlp), (unsigned long long)SR(r, spurious_retx));
	/* the receiver's hole report: the one packet goes again, not its unit's 4 */
	CHECK(SR(r, retx_pkts) == 1 && SR(r, retx_pkts_saved) == 3 && SR(r, holes_rx) >= 1,
	      "retx_pkts %llu retx_pkts_saved %llu holes_rx %llu",
	      (unsigned long long)SR(r, retx_pkts), (unsigned long long)SR(r, retx_pkts_saved),
	      (unsigned long long)SR(r, holes_rx));
	/* the message: one RTT, the retransmission's delay, its round trip */
	CHECK(st.last_done - t0 < 2 * RTT + RTT / 2 + 2 * ACK_PERIOD, "done after %llu ns",
	      (unsigned long long)(st.last_done - t0));
	CHECK(rig_check_invariants(r) == 0, "rig invariants");
	rig_free(r);
}

/* ---------------- reordering within the window ---------------- */

static void t_reorder(void)
{
	/* the reordering window is a quarter of the minimum RTT (2.5 ms) */
	struct rig *r = mk(SDR_REL_SR, 1 * MS, "");

	stream_run(r, 200, MSG, 20000 * MS);
	rig_run_for(r, 5 * MS);
	printf("reorder: %llu frames reordered; retx_units %llu rack_retx %llu tlp %llu"
	       " spurious %llu rto_expiries %llu; receiver dup_pkt %llu\n",
	       (unsigned long long)r->ws[RIG_A].reordered, (unsigned long long)SR(r, retx_units),
	       (unsigned long long)SR(r, rack_retx), (unsigned long long)SR(r, tlp),
	       (unsigned long long)SR(r, spurious_retx), (unsigned long long)SR(r, rto_expiries),
	       (unsigned long long)rig_ctr(r, RIG_B, SDR_CTR_dup_pkt));
	CHECK(r->ws[RIG_A].reordered > 1000, "reordered %llu",
	      (unsigned long long)r->ws[RIG_A].reordered);
	CHECK(SR(r, retx_pkts) == 0 && SR(r, spurious_retx) == 0 && SR(r, tlp) == 0,
	      "retx_pkts %llu spurious %llu tlp %llu", (unsigned long long)SR(r, retx_pkts),
	      (unsigned long long)SR(r, spurious_retx), (unsigned long long)SR(r, tlp));
	CHECK(rig_ctr(r, RIG_B, SDR_CTR_dup_pkt) == 0, "the receiver saw duplicates");
	CHECK(rig_check_invariants(r) == 0, "rig invariants");
	rig_free(r);
}

/* ---------------- tail loss ---------------- */

static void t_tail(void)
{
	/* an RTO floor far above the RTT (as TCP's): the probe comes first */
	struct rig *r = mk(SDR_REL_SR, 0, "--sr-min-rto-us 50000");
	/* the last two units of a message of 64 packets: packets 56..63 */
	struct one_loss l = {.seq = UINT32_MAX, .pkt = 56, .nlose = 8};
	uint64_t rto0, t0;

	t0 = run_one_lossy(r, &l, &rto0, NULL);
	printf("tail loss: first lost at %.3f ms, the message done %.3f ms later (%.2f RTT);"
	       " tlp %llu rack_retx %llu rto_expiries %llu retx_units %llu spurious %llu\n",
	       (double)(l.t_lost - t0) / 1e6, (double)(st.last_done - l.t_lost) / 1e6,
	       (double)(st.last_done - l.t_lost) / RTT, (unsigned long long)SR(r, tlp),
	       (unsigned long long)SR(r, rack_retx),
	       (unsigned long long)(SR(r, rto_expiries) - rto0),
	       (unsigned long long)SR(r, retx_units), (unsigned long long)SR(r, spurious_retx));
	CHECK(l.dropped == 8, "dropped %d", l.dropped);
	CHECK(SR(r, tlp) == 1 && SR(r, rack_retx) == 1 && SR(r, retx_units) == 2,
	      "tlp %llu rack_retx %llu retx_units %llu", (unsigned long long)SR(r, tlp),
	      (unsigned long long)SR(r, rack_retx), (unsigned long long)SR(r, retx_units));
	CHECK(SR(r, rto_expiries) == rto0, "an RTO expired");
	CHECK(SR(r, spurious_retx) == 0, "spurious");
	/* from the loss: the probe one PTO after the last unit (1.25 SRTT + 2
	 * RTTVAR + an ACK period), its ACK, the other unit's way to the
	 * receiver: about 3 RTT, where the RTO (50 ms) alone takes 5.5 */
	CHECK(st.last_done - l.t_lost < 3 * RTT + 2 * ACK_PERIOD, "done %llu ns after the loss",
	      (unsigned long long)(st.last_done - l.t_lost));
	CHECK(rig_check_invariants(r) == 0, "rig invariants");
	rig_free(r);
}

/* ---------------- a hole in the last unit ---------------- */

static void t_tailhole(void)
{
	/* as tail, but one packet inside the last unit (60..63) is lost: the
	 * receiver's hole report (a packet after it arrived) decides it lost
	 * a reordering window after it came; no probe, no RTO, one packet */
	struct rig *r = mk(SDR_REL_SR, 0, "--sr-min-rto-us 50000");
	struct one_loss l = {.seq = UINT32_MAX, .pkt = 61, .nlose = 1};
	uint64_t rto0, t0;

	t0 = run_one_lossy(r, &l, &rto0, NULL);
	printf("hole in the last unit: lost at %.3f ms, the message done %.3f ms later (%.2f RTT);"
	       " holes_rx %llu holes_lost %llu tlp %llu rack_retx %llu rto_expiries %llu"
	       " retx_pkts %llu saved %llu spurious %llu\n",
	       (double)(l.t_lost - t0) / 1e6, (double)(st.last_done - l.t_lost) / 1e6,
	       (double)(st.last_done - l.t_lost) / RTT, (unsigned long long)SR(r, holes_rx),
	       (unsigned long long)SR(r, holes_lost), (unsigned long long)SR(r, tlp),
	       (unsigned long long)SR(r, rack_retx),
	       (unsigned long long)(SR(r, rto_expiries) - rto0),
	       (unsigned long long)SR(r, retx_pkts), (unsigned long long)SR(r, retx_pkts_saved),
	       (unsigned long long)SR(r, spurious_retx));
	CHECK(l.dropped == 1, "dropped %d", l.dropped);
	CHECK(SR(r, holes_lost) == 1 && SR(r, tlp) == 0 && SR(r, rack_retx) == 0,
	      "holes_lost %llu tlp %llu rack_retx %llu", (unsigned long long)SR(r, holes_lost),
	      (unsigned long long)SR(r, tlp), (unsigned long long)SR(r, rack_retx));
	CHECK(SR(r, retx_pkts) == 1 && SR(r, retx_pkts_saved) == 3, "retx_pkts %llu saved %llu",
	      (unsigned long long)SR(r, retx_pkts), (unsigned long long)SR(r, retx_pkts_saved));
	CHECK(SR(r, rto_expiries) == rto0 && SR(r, spurious_retx) == 0, "an RTO, or spurious");
	/* from the loss: the report's round trip, the reordering window
	 * (a quarter of 10 ms), ACK periods, the packet's way: about 1.8 RTT,
	 * where the probe takes 2.9 (tail) */
	CHECK(st.last_done - l.t_lost < 2 * RTT, "done %llu ns after the loss",
	      (unsigned long long)(st.last_done - l.t_lost));
	CHECK(rig_check_invariants(r) == 0, "rig invariants");
	rig_free(r);
}

/* ---------------- a receiver that lies in its hole reports ---------------- */

static uint32_t liar_seq = UINT32_MAX;

/* The data of message liar_seq's unit 5 (packets 20..23) but packet 23
 * lost on its first transmission (the seq learnt from the first frame). */
static enum rig_verdict lose_unit5(struct rig *r, const struct rig_frame_info *fi, void *arg)
{
	int *first_pass = arg;

	(void)r;
	if (fi->from != RIG_A || fi->kind != RIG_K_DATA)
		return RIG_PASS;
	if (liar_seq == UINT32_MAX)
		liar_seq = fi->seq;
	if (fi->seq == liar_seq && fi->pkt_off >= 20 && fi->pkt_off < 23 && *first_pass < 3) {
		(*first_pass)++;
		return RIG_DROP;
	}
	return RIG_PASS;
}

static void t_liar(void)
{
	/* Forged hole reports (with B's key: a hostile receiver) keep saying
	 * that packets 21..23 of unit 5 arrived, which never did: the sender
	 * still delivers the message whole - a report is used once, only when
	 * newer than the unit's last transmission, and the third transmission
	 * of a unit goes whole */
	struct rig *r = mk(SDR_REL_SR, 0, "");
	const struct sdr_qp *qa = r->s[RIG_A].qp, *qb = r->s[RIG_B].qp;
	int dropped = 0;
	uint8_t buf[2048];

	stream_run(r, 8, MSG, 1000 * MS);
	rig_run_for(r, 5 * MS);
	r->filter = lose_unit5;
	r->filter_arg = &dropped;
	memset(&st, 0, sizeof(st));
	st.total = 1;
	st.len = MSG;
	post_recv(r, 0);
	post_send(r, 0);
	for (int i = 0; i < 200 && !stream_done(r, NULL); i++) {
		rig_run_for(r, 1 * MS);
		if (liar_seq == UINT32_MAX)
			continue;
		struct sdr_ack_echo echo = {0};
		struct sdr_ack_hole h = {.seq = liar_seq, .chunk = 5, .first = 0, .have = 0xE};
		size_t n = sdr_ctrl_ack_encode_holes(buf + SDR_CTRL_HDR_LEN, qb->qpn_base, NULL, 0,
						     &echo, &h, 1);
		size_t flen = sdr_build_ctrl_hdr(buf, &qb->l2, qb->remote.qpn, 0, n);

		sdr_ctrl_key_put(buf + SDR_CTRL_HDR_LEN, qa->ctrl_key);
		sdr_pkt_finish(buf, flen, sdr_g.cfg.icrc);
		rig_inject(r, RIG_A, buf, flen);
	}
	printf("liar: dropped %d; done %u; holes_rx %llu holes_lost %llu retx_units %llu"
	       " retx_pkts %llu saved %llu\n",
	       dropped, st.recvs_done, (unsigned long long)SR(r, holes_rx),
	       (unsigned long long)SR(r, holes_lost), (unsigned long long)SR(r, retx_units),
	       (unsigned long long)SR(r, retx_pkts), (unsigned long long)SR(r, retx_pkts_saved));
	CHECK(dropped == 3, "dropped %d", dropped);
	CHECK(st.sends_done == 1 && st.recvs_done == 1, "send %u receive %u done", st.sends_done,
	      st.recvs_done);
	CHECK(st.bad_status == 0 && st.bad_data == 0, "not bit-exact");
	CHECK(SR(r, holes_rx) >= 10 && SR(r, retx_units) < 10, "holes_rx %llu retx_units %llu",
	      (unsigned long long)SR(r, holes_rx), (unsigned long long)SR(r, retx_units));
	CHECK(rig_check_invariants(r) == 0, "rig invariants");
	rig_free(r);
}

/* ---------------- random loss ---------------- */

static void t_random(void)
{
	struct rig *r = mk(SDR_REL_SR, 0, "");

	for (int s = 0; s < 2; s++)
		r->link[s].loss_data = r->link[s].loss_ctrl = 0.01;
	stream_run(r, 200, MSG, 60000 * MS);
	rig_run_for(r, 5 * MS);
	printf("random 1 %%: %llu data frames lost; retx_units %llu: rack_retx %llu tlp %llu"
	       " rto_expiries %llu; spurious %llu; %.1f ms for 200 messages\n",
	       (unsigned long long)r->ws[RIG_A].lost[RIG_K_DATA],
	       (unsigned long long)SR(r, retx_units), (unsigned long long)SR(r, rack_retx),
	       (unsigned long long)SR(r, tlp), (unsigned long long)SR(r, rto_expiries),
	       (unsigned long long)SR(r, spurious_retx), (double)r->now / 1e6);
	CHECK(r->ws[RIG_A].lost[RIG_K_DATA] > 20, "lost %llu",
	      (unsigned long long)r->ws[RIG_A].lost[RIG_K_DATA]);
	/* most losses found by RACK, not by timers */
	CHECK(SR(r, rack_retx) > 2 * SR(r, rto_expiries), "rack_retx %llu rto_expiries %llu",
	      (unsigned long long)SR(r, rack_retx), (unsigned long long)SR(r, rto_expiries));
	CHECK(SR(r, spurious_retx) * 10 <= SR(r, retx_units) + 10, "spurious %llu of %llu",
	      (unsigned long long)SR(r, spurious_retx), (unsigned long long)SR(r, retx_units));
	CHECK(rig_check_invariants(r) == 0, "rig invariants");
	rig_free(r);
}

/* ---------------- EC: parity first ---------------- */

static void t_ec(void)
{
	struct rig *r = mk(SDR_REL_EC, 0, "");
	struct one_loss l = {.seq = UINT32_MAX, .pkt = 21, .nlose = 1};

	(void)run_one_lossy(r, &l, NULL, NULL);
	rig_run_for(r, 5 * MS);
	printf("ec: lost %d; decodes %llu; retx_units %llu rack_retx %llu tlp %llu\n", l.dropped,
	       (unsigned long long)SDR_QP_CTR(r->s[RIG_B].qp, ec, decodes),
	       (unsigned long long)SR(r, retx_units), (unsigned long long)SR(r, rack_retx),
	       (unsigned long long)SR(r, tlp));
	CHECK(l.dropped == 1, "dropped %d", l.dropped);
	CHECK(SDR_QP_CTR(r->s[RIG_B].qp, ec, decodes) > 0, "no decode");
	CHECK(SR(r, retx_units) == 0 && SR(r, rack_retx) == 0 && SR(r, tlp) == 0,
	      "retx_units %llu rack_retx %llu tlp %llu", (unsigned long long)SR(r, retx_units),
	      (unsigned long long)SR(r, rack_retx), (unsigned long long)SR(r, tlp));
	CHECK(rig_check_invariants(r) == 0, "rig invariants");
	rig_free(r);
}

/* ---------------- measurement: one message in flight ---------------- */

/* 20000 messages of 128 KiB, one in flight (as `sdr-perf lat`), 4 KiB MTU,
 * @p chunk packets per unit, RTT 25 ms, 1 % loss of every frame both ways:
 * the completion times (send post to receive complete) and the counters
 * (docs/reliability.md "Loss detection: measured"). */
#define LAT_MSG 131072u
static struct {
	uint64_t t_post, *lat;
	uint32_t total, sends, recvs, bad;
} lm;

static void lat_cqe(struct rig *r, int side, const struct sdr_cqe *e, void *arg)
{
	(void)arg;
	if (e->status)
		lm.bad++;
	if (side == RIG_B) {
		if (rig_pattern_diff(r->s[RIG_B].mem, LAT_MSG, 7 + lm.recvs))
			lm.bad++;
		lm.lat[lm.recvs++] = r->now - lm.t_post;
		if (lm.recvs < lm.total)
			rig_recv(r, RIG_B, 0, LAT_MSG, lm.recvs);
	} else if (++lm.sends < lm.total) {
		rig_pattern(r->s[RIG_A].mem, LAT_MSG, 7 + lm.sends);
		lm.t_post = r->now;
		rig_send(r, RIG_A, 0, LAT_MSG, 0, lm.sends);
	}
}

static int lat_done(struct rig *r, void *arg)
{
	(void)r;
	(void)arg;
	return lm.sends == lm.total && lm.recvs == lm.total;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static void lat_run(unsigned chunk)
{
	char args[128];
	struct rig_opts o = {.args = args, .mem_bytes = LAT_MSG, .seed = t_rnd()};
	struct rig *r;
	double mean = 0;

	snprintf(args, sizeof(args), "--mtu 4096 --chunk-pkts %u --max-msg %u --port-rate 10g",
		 chunk, LAT_MSG);
	o.attr.reliability = SDR_REL_SR;
	r = rig_new(&o);
	memset(&lm, 0, sizeof(lm));
	lm.total = 20000;
	lm.lat = calloc(lm.total, sizeof(*lm.lat));
	REQUIRE(lm.lat != NULL, "no memory");
	for (int s = 0; s < 2; s++) {
		r->link[s].delay_ns = 12500 * US;
		r->link[s].loss_data = r->link[s].loss_ctrl = 0.01;
	}
	r->on_cqe = lat_cqe;
	rig_recv(r, RIG_B, 0, LAT_MSG, 0);
	rig_run_for(r, 20 * MS); /* the CTS is there before the first send */
	rig_pattern(r->s[RIG_A].mem, LAT_MSG, 7);
	lm.t_post = r->now;
	rig_send(r, RIG_A, 0, LAT_MSG, 0, 0);
	CHECK(rig_run_until(r, lat_done, NULL, 3600000 * MS) == 0, "%u of %u done", lm.recvs,
	      lm.total);
	CHECK(lm.bad == 0, "%u completions with an error or not bit-exact", lm.bad);
	qsort(lm.lat, lm.recvs, sizeof(*lm.lat), cmp_u64);
	for (uint32_t i = 0; i < lm.recvs; i++)
		mean += (double)lm.lat[i];
	if (lm.recvs == lm.total)
		printf("lat chunk %u, %u messages: mean %.1f ms p50 %.1f p90 %.1f p99 %.1f max %.1f"
		       " | retx_units %llu rack_retx %llu holes_lost %llu tlp %llu rto_expiries "
		       "%llu"
		       " spurious %llu | retx_pkts %llu retx_pkts_saved %llu | receiver dup_pkt "
		       "%llu\n",
		       chunk, lm.total, mean / lm.total / 1e6, (double)lm.lat[lm.total / 2] / 1e6,
		       (double)lm.lat[lm.total * 9 / 10] / 1e6,
		       (double)lm.lat[lm.total * 99 / 100] / 1e6,
		       (double)lm.lat[lm.total - 1] / 1e6, (unsigned long long)SR(r, retx_units),
		       (unsigned long long)SR(r, rack_retx), (unsigned long long)SR(r, holes_lost),
		       (unsigned long long)SR(r, tlp), (unsigned long long)SR(r, rto_expiries),
		       (unsigned long long)SR(r, spurious_retx),
		       (unsigned long long)SR(r, retx_pkts),
		       (unsigned long long)SR(r, retx_pkts_saved),
		       (unsigned long long)rig_ctr(r, RIG_B, SDR_CTR_dup_pkt));
	if (lm.recvs == lm.total && getenv("RACK_LAT_TAIL"))
		for (uint32_t q = 950; q < 1000; q += 5)
			printf("  p%.1f %.1f ms\n", q / 10.0,
			       (double)lm.lat[(uint64_t)lm.total * q / 1000] / 1e6);
	free(lm.lat);
	CHECK(rig_check_invariants(r) == 0, "rig invariants");
	rig_free(r);
}

static void t_lat16(void)
{
	lat_run(16);
}
static void t_lat4(void)
{
	lat_run(4);
}

static const struct t_case tests[] = {
	{"single", t_single}, {"reorder", t_reorder}, {"tail", t_tail}, {"tailhole", t_tailhole},
	{"liar", t_liar},     {"random", t_random},   {"ec", t_ec},     {"lat16", t_lat16},
	{"lat4", t_lat4},
};

T_MAIN("test_rack", tests)
