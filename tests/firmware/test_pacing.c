/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The firmware's pacer (the timing wheel in worker.c / txframe.c,
 * common/sdr_wheel.h) on the engine rig's virtual clock: the departure time
 * of every data frame A sends is recorded on the wire.
 *
 *   idle     a QP paced at 200 Mbit/s sends messages of 16 frames with idle
 *            gaps: no frame ever leaves before its place in the schedule that
 *            starts at the message's first frame (so the first 10 frames
 *            after idle take at least 9 frame times, and no window of 10
 *            frame times that begins after idle holds more than its rate
 *            plus one frame); a long message keeps the rate;
 *   rate     QP_SET_RATE's worker half (sdr_worker_qp_rate) in the middle of
 *            a paced message takes effect at the next frame, up and down;
 *   port     unpaced QPs under --port-rate: the port's share holds the
 *            aggregate, and a port idle for a while earns nothing either;
 *   visits   200 idle QP pairs beside a busy one cost one visit each (their
 *            connect) and nothing after it; 64 paced QPs, all backlogged, are
 *            visited only when due: every visit the pacer hands out sends a
 *            frame.
 *
 * `test_pacing NAME` runs one (meson: pacing_NAME).
 */
#include <stdlib.h>
#include <string.h>

#include "engine_rig.h"
#include "sdr_test.h"
#include "worker.h"

#define MTU 1024u
#define FRAME \
	1102u /* sdr_wire_data_frame_bytes(1024, 1): 78 B around 1 KiB (every
                       * send here carries a non-zero immediate: opcode 0x2B) */
#define ARGS "--mtu 1024 --chunk-pkts 4 --max-msg 65536"
#define US 1000ull /* the rig's TSC runs at 1 GHz: one cycle is 1 ns */
#define MS 1000000ull

/* ---- departures of A's data frames ---- */

#define MAXDEP 100000
struct deps {
	uint64_t t[MAXDEP];
	uint32_t bytes[MAXDEP], qp[MAXDEP];
	size_t n;
};
static struct deps dep;

static enum rig_verdict on_frame(struct rig *r, const struct rig_frame_info *fi, void *arg)
{
	(void)arg;
	if (fi->from == RIG_A && fi->kind == RIG_K_DATA && dep.n < MAXDEP) {
		dep.t[dep.n] = fi->now;
		dep.bytes[dep.n] = sdr_wire_data_frame_bytes(
			fi->dma_len, fi->p->opcode == SDR_OP_UC_WRITE_ONLY_IMM);
		dep.qp[dep.n] = (fi->p->dest_qpn - r->s[RIG_B].in->qpn_first) /
				sdr_g.cfg.generations;
		dep.n++;
	}
	return RIG_PASS;
}

static struct rig *mk(const char *extra, uint64_t rate_bps, uint64_t mem)
{
	char args[256];
	struct rig_opts o = {.args = args,
			     .mem_bytes = mem,
			     .seed = t_rnd(),
			     .mbufs = 1024,
			     .busy_ns = 1000,
			     .idle_ns = 1000};
	struct rig *r;

	snprintf(args, sizeof(args), "%s %s", ARGS, extra);
	o.attr.reliability = SDR_REL_NONE;
	o.attr.rate_bps = rate_bps;
	r = rig_new(&o);
	r->link[RIG_A].delay_ns = r->link[RIG_B].delay_ns = 10 * US;
	r->filter = on_frame;
	memset(&dep, 0, sizeof(dep));
	return r;
}

/* completions of one kind on a side so far */
static size_t cqes(const struct rig *r, int side, uint8_t op)
{
	size_t n = 0;

	for (size_t i = 0; i < r->s[side].ncqe; i++)
		n += r->s[side].cqe[i].e.opcode == op;
	return n;
}

struct want {
	int side;
	uint8_t op;
	size_t n;
};

static int have(struct rig *r, void *arg)
{
	const struct want *w = arg;
	return cqes(r, w->side, w->op) >= w->n;
}

static void run_until(struct rig *r, int side, uint8_t op, size_t n, uint64_t max_ns)
{
	struct want w = {side, op, n};
	if (rig_run_until(r, have, &w, max_ns)) {
		rig_dump(r, stderr);
		REQUIRE(0, "%zu completions (op %u) on %c", n, op, "AB"[side]);
	}
}

static uint64_t cyc(uint64_t bytes, uint64_t rate_bps)
{
	return bytes * 8 * 1000000000ull / rate_bps; /* 1 GHz */
}

/* Frames [from, to) of QP @p qp: never before their place in the schedule
 * that starts at frame @p from, and at most @p rate plus one frame in the
 * window of 10 frame times that begins there. @return the span of the
 * first 10. */
static uint64_t check_schedule(size_t from, size_t to, uint64_t rate_bps)
{
	uint64_t t0 = dep.t[from], sent = 0, in_win = 0, win = 10 * cyc(FRAME, rate_bps);

	for (size_t k = from; k < to; k++) {
		/* (a slot-exact schedule: one cycle per frame of rounding) */
		CHECK(dep.t[k] + (k - from) >= t0 + cyc(sent, rate_bps),
		      "frame %zu left %lld ns early", k - from,
		      (long long)(t0 + cyc(sent, rate_bps) - dep.t[k]));
		if (dep.t[k] < t0 + win)
			in_win += dep.bytes[k];
		sent += dep.bytes[k];
	}
	CHECK(in_win * 8 * 1000000000ull <= (uint64_t)rate_bps * win + FRAME * 8 * 1000000000ull,
	      "%llu bytes in 10 frame times after idle", (unsigned long long)in_win);
	return to - from >= 10 ? dep.t[from + 9] - t0 : 0;
}

static void post_recvs(struct rig *r, uint32_t qp, unsigned n, uint32_t len, uint64_t base)
{
	for (unsigned i = 0; i < n; i++)
		rig_recv_on(r, RIG_B, qp, base + (uint64_t)i * len, len, i);
}

/* ---- idle ---- */

static void t_idle(void)
{
	const uint64_t rate = 200000000ull, T = cyc(FRAME, rate);
	struct rig *r = mk("--port-rate 10g", rate, 1u << 20);
	uint32_t qa = r->s[RIG_A].qp->id, qb = r->s[RIG_B].qp->id;
	size_t first[6];

	post_recvs(r, qb, 6, 65536, 0);
	rig_run_for(r, 200 * US); /* the CTS are there */
	for (unsigned m = 0; m < 5; m++) {
		first[m] = dep.n;
		rig_send_on(r, RIG_A, qa, 0, 16 * MTU, m + 1, m);
		run_until(r, RIG_A, SDR_SQ_SEND, m + 1, 100 * MS);
		REQUIRE(dep.n == first[m] + 16, "message %u: %zu frames", m, dep.n - first[m]);
		rig_run_for(r, 2 * MS + m * 313 * US); /* idle */
	}
	for (unsigned m = 0; m < 5; m++) {
		uint64_t span = check_schedule(first[m], first[m] + 16, rate);
		/* at most one frame time plus a loop of jitter less than 9 T */
		CHECK(span + 2000 >= 9 * T, "message %u: first 10 frames in %llu ns, 9 T = %llu", m,
		      (unsigned long long)span, (unsigned long long)(9 * T));
		CHECK(dep.t[first[m]] <= dep.t[first[m] - (m ? 1 : 0)] + 3 * MS,
		      "message %u waited", m);
	}
	/* a long message keeps the rate: 64 frames in 63 T (+ a loop) */
	first[5] = dep.n;
	rig_send_on(r, RIG_A, qa, 0, 64 * MTU, 5, 5);
	run_until(r, RIG_A, SDR_SQ_SEND, 6, 100 * MS);
	REQUIRE(dep.n == first[5] + 64);
	check_schedule(first[5], dep.n, rate);
	{
		uint64_t span = dep.t[dep.n - 1] - dep.t[first[5]];
		CHECK(span >= 63 * T - 63 && span <= 63 * T + 2000,
		      "64 frames in %llu ns, 63 T = %llu", (unsigned long long)span,
		      (unsigned long long)(63 * T));
	}
	run_until(r, RIG_B, SDR_SQ_RECV, 6, 100 * MS);
	CHECK_EQ(rig_check_invariants(r), 0);
	rig_free(r);
}

/* ---- rate ---- */

/* Frames [from, to) one frame time at @p rate apart, each and in all
 * (frames leave at loop times, 1 us apart: one loop of jitter). */
static void check_gaps(size_t from, size_t to, uint64_t rate)
{
	for (size_t k = from; k < to; k++) {
		uint64_t gap = dep.t[k] - dep.t[k - 1];
		CHECK(gap + 1000 >= cyc(FRAME, rate) && gap <= cyc(FRAME, rate) + 1000,
		      "frame %zu: %llu ns after the one before, want %llu", k,
		      (unsigned long long)gap, (unsigned long long)cyc(FRAME, rate));
	}
	CHECK(dep.t[to - 1] - dep.t[from] + 1000 >= (to - 1 - from) * cyc(FRAME, rate) &&
	      dep.t[to - 1] - dep.t[from] <= (to - 1 - from) * cyc(FRAME, rate) + 1000);
}

static void t_rate(void)
{
	const uint64_t r1 = 100000000ull, r2 = 400000000ull;
	struct rig *r = mk("--port-rate 10g", r1, 1u << 20);
	uint32_t qa = r->s[RIG_A].qp->id, qb = r->s[RIG_B].qp->id;

	post_recvs(r, qb, 1, 65536, 0);
	rig_run_for(r, 200 * US);
	rig_send_on(r, RIG_A, qa, 0, 64 * MTU, 1, 1);
	while (dep.n < 20)
		rig_iter(r);
	/* up: the next frame 1 frame time at the new rate after the last one,
	 * not at the old one */
	sdr_worker_qp_rate(r->s[RIG_A].w, r->s[RIG_A].qp, r2);
	while (dep.n < 40)
		rig_iter(r);
	check_gaps(20, 40, r2);
	/* down again */
	sdr_worker_qp_rate(r->s[RIG_A].w, r->s[RIG_A].qp, r1);
	run_until(r, RIG_A, SDR_SQ_SEND, 1, 100 * MS);
	check_gaps(40, 64, r1);
	CHECK_EQ(dep.n, 64);
	/* unpaced: only the port's share (10 Gbit/s) holds it */
	post_recvs(r, qb, 1, 65536, 65536);
	rig_run_for(r, 200 * US);
	sdr_worker_qp_rate(r->s[RIG_A].w, r->s[RIG_A].qp, 0);
	rig_send_on(r, RIG_A, qa, 0, 64 * MTU, 2, 2);
	run_until(r, RIG_A, SDR_SQ_SEND, 2, 100 * MS);
	CHECK(dep.t[127] - dep.t[64] <= 63 * cyc(FRAME, 10000000000ull) + 1000,
	      "unpaced: 64 frames in %llu ns", (unsigned long long)(dep.t[127] - dep.t[64]));
	CHECK_EQ(rig_check_invariants(r), 0);
	rig_free(r);
}

/* ---- port ---- */

static void t_port(void)
{
	const uint64_t rate = 200000000ull, T = cyc(FRAME, rate);
	struct rig *r = mk("--port-rate 200m", 0, 4u << 20);
	struct sdr_qp_attr_abi a = {.reliability = SDR_REL_NONE};
	/* (the first pair's QPs are A's 3 and B's 5; the others have one id) */
	uint32_t q[3] = {r->s[RIG_A].qp->id, rig_add_pair(r, &a), rig_add_pair(r, &a)};
	uint32_t qb[3] = {r->s[RIG_B].qp->id, q[1], q[2]};
	size_t first;

	for (int i = 0; i < 3; i++)
		post_recvs(r, qb[i], 2, 65536, (uint64_t)i * 2 * 65536);
	rig_run_for(r, 1 * MS);
	/* three unpaced QPs at once: the aggregate leaves at the port's rate */
	for (int i = 0; i < 3; i++)
		rig_send_on(r, RIG_A, q[i], (uint64_t)i * 65536, 32 * MTU, i + 1, i);
	run_until(r, RIG_A, SDR_SQ_SEND, 3, 100 * MS);
	REQUIRE(dep.n == 96);
	check_schedule(0, 96, rate);
	{
		uint64_t span = dep.t[95] - dep.t[0];
		CHECK(span >= 95 * T - 95 && span <= 95 * T + 2000,
		      "96 frames in %llu ns, 95 T = %llu", (unsigned long long)span,
		      (unsigned long long)(95 * T));
	}
	/* each QP got its share of the port (round robin of the due QPs) */
	{
		unsigned per[3] = {0};
		for (size_t k = 0; k < 48; k++)
			for (int i = 0; i < 3; i++)
				per[i] += dep.qp[k] == qb[i];
		for (int i = 0; i < 3; i++)
			CHECK(per[i] >= 14 && per[i] <= 18, "QP %u: %u of the first 48 frames",
			      q[i], per[i]);
	}
	/* the port idles 5 ms: the next message leaves at the rate, no burst */
	rig_run_for(r, 5 * MS);
	first = dep.n;
	rig_send_on(r, RIG_A, q[1], 65536, 32 * MTU, 7, 7);
	run_until(r, RIG_A, SDR_SQ_SEND, 4, 100 * MS);
	REQUIRE(dep.n == first + 32);
	CHECK(check_schedule(first, dep.n, rate) + 2000 >= 9 * T);
	CHECK_EQ(rig_check_invariants(r), 0);
	rig_free(r);
}

/* ---- visits ---- */

static uint64_t visits(const struct rig *r, int side, int kind)
{
	return kind < 0
		       ? r->s[side].w->visits[0] + r->s[side].w->visits[1] + r->s[side].w->visits[2]
		       : r->s[side].w->visits[kind];
}

/* A busy pair beside @p idle idle ones: visits of both sides. */
static uint64_t busy_beside(unsigned idle, uint64_t seed)
{
	struct sdr_qp_attr_abi a = {.reliability = SDR_REL_NONE};
	struct rig *r;
	uint64_t v;

	t_seed("visits", seed);
	r = mk("--port-rate 10g", 0, 1u << 20);
	for (unsigned i = 0; i < idle; i++)
		rig_add_pair(r, &a);
	post_recvs(r, r->s[RIG_B].qp->id, 10, 16384, 0);
	rig_run_for(r, 100 * US);
	for (unsigned m = 0; m < 10; m++)
		rig_send(r, RIG_A, 0, 16384, m + 1, m);
	run_until(r, RIG_B, SDR_SQ_RECV, 10, 100 * MS);
	rig_run_for(r, 50 * MS); /* past the periodic re-send: still nothing for the idle ones */
	v = visits(r, RIG_A, -1) + visits(r, RIG_B, -1);
	printf("  %u idle QP pairs: %llu visits (A: paced %llu touched %llu timer %llu; B: %llu "
	       "%llu"
	       " %llu), %llu loops\n",
	       idle, (unsigned long long)v, (unsigned long long)visits(r, RIG_A, 0),
	       (unsigned long long)visits(r, RIG_A, 1), (unsigned long long)visits(r, RIG_A, 2),
	       (unsigned long long)visits(r, RIG_B, 0), (unsigned long long)visits(r, RIG_B, 1),
	       (unsigned long long)visits(r, RIG_B, 2), (unsigned long long)r->s[RIG_A].w->loops);
	CHECK_EQ(rig_check_invariants(r), 0);
	rig_free(r);
	return v;
}

static void t_visits(void)
{
	enum { NQ = 64 };
	const uint64_t rate = 50000000ull; /* 50 Mbit/s each: a frame per 176 us */
	uint64_t v0 = busy_beside(0, 7), v200 = busy_beside(200, 7);
	struct sdr_qp_attr_abi a = {.reliability = SDR_REL_NONE, .rate_bps = rate};
	uint32_t q[NQ], qb[NQ];
	uint64_t posted;
	struct rig *r;
	size_t frames;

	/* the idle pairs: one touched visit each at connect, per side */
	CHECK_EQ(v200, v0 + 2 * 200);

	/* 64 paced QPs, every one backlogged with a 16-frame message */
	r = mk("--port-rate 10g", rate, 8u << 20);
	q[0] = r->s[RIG_A].qp->id;
	qb[0] = r->s[RIG_B].qp->id;
	for (int i = 1; i < NQ; i++)
		qb[i] = q[i] = rig_add_pair(r, &a);
	for (int i = 0; i < NQ; i++)
		post_recvs(r, qb[i], 1, 16384, (uint64_t)i * 16384);
	rig_run_for(r, 1 * MS);
	posted = r->now;
	for (int i = 0; i < NQ; i++)
		rig_send_on(r, RIG_A, q[i], (uint64_t)i * 16384, 16 * MTU, i + 1, i);
	run_until(r, RIG_A, SDR_SQ_SEND, NQ, 200 * MS);
	frames = dep.n;
	printf("  %d paced QPs: %zu frames, %llu visits handed out by the pacer, %llu touched, %llu"
	       " by a timer, %llu loops\n",
	       NQ, frames, (unsigned long long)visits(r, RIG_A, 0),
	       (unsigned long long)visits(r, RIG_A, 1), (unsigned long long)visits(r, RIG_A, 2),
	       (unsigned long long)r->s[RIG_A].w->loops);
	CHECK_EQ(frames, (size_t)NQ * 16);
	/* every visit the pacer hands out sends a frame (a QP is handed out
	 * only when its departure and its port's have come); the rest of the
	 * frames left in the visit a send descriptor brought */
	CHECK(visits(r, RIG_A, SDR_VISIT_PACED) <= frames);
	CHECK(visits(r, RIG_A, SDR_VISIT_PACED) >= frames - NQ);
	/* and no QP ever ran ahead of its rate from the time its send was
	 * posted: its k-th frame leaves k frame times after that at the
	 * earliest (the port's share delays some; none catches up past that) */
	for (int i = 0; i < NQ; i++) {
		size_t n = 0;
		for (size_t k = 0; k < frames; k++)
			if (dep.qp[k] == qb[i]) {
				CHECK_OR_BREAK(dep.t[k] + n >= posted + n * cyc(FRAME, rate));
				n++;
			}
		CHECK_EQ(n, 16);
	}
	CHECK_EQ(rig_check_invariants(r), 0);
	rig_free(r);
}

/* ---- the data frames of one worker loop ---- */

/* 16 unpaced QP pairs, each with a 32-frame send posted at once: no loop
 * puts more than SDR_LOOP_TX data frames on the wire (the rest wait for the
 * next loop, counted loop_tx_full), and every frame still goes. */
static void t_loop_budget(void)
{
	enum { NQ = 16, PKTS = 32 };
	struct sdr_qp_attr_abi a = {.reliability = SDR_REL_NONE};
	uint32_t q[NQ], qb[NQ];
	size_t most = 0, run = 0;
	struct rig *r;

	r = mk("", 0, 8u << 20);
	q[0] = r->s[RIG_A].qp->id;
	qb[0] = r->s[RIG_B].qp->id;
	for (int i = 1; i < NQ; i++)
		qb[i] = q[i] = rig_add_pair(r, &a);
	for (int i = 0; i < NQ; i++)
		post_recvs(r, qb[i], 1, PKTS * MTU, (uint64_t)i * PKTS * MTU);
	rig_run_for(r, 1 * MS);
	for (int i = 0; i < NQ; i++)
		rig_send_on(r, RIG_A, q[i], (uint64_t)i * PKTS * MTU, PKTS * MTU, i + 1, i);
	run_until(r, RIG_B, SDR_SQ_RECV, NQ, 200 * MS);
	CHECK_EQ(dep.n, (size_t)NQ * PKTS);
	/* the frames of one loop leave at its clock reading */
	for (size_t k = 0; k < dep.n; k++) {
		run = k && dep.t[k] == dep.t[k - 1] ? run + 1 : 1;
		if (run > most)
			most = run;
	}
	printf("  %d QPs x %d frames: at most %zu data frames in a loop (SDR_LOOP_TX %d), %llu"
	       " deferred to the next loop\n",
	       NQ, PKTS, most, SDR_LOOP_TX, (unsigned long long)r->s[RIG_A].w->loop_tx_full);
	CHECK(most <= SDR_LOOP_TX);
	CHECK(most >= SDR_BURST); /* (and the budget was used) */
	CHECK(r->s[RIG_A].w->loop_tx_full > 0);
	CHECK_EQ(rig_check_invariants(r), 0);
	rig_free(r);
}

static const struct t_case tests[] = {
	{"idle", t_idle},
	{"rate", t_rate},
	{"port", t_port},
	{"visits", t_visits},
	{"loop_budget", t_loop_budget},
};

T_MAIN("test_pacing", tests)
