/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Link emulator core, the features of a shared network (docs/link-emulator.md
 * "Shared bottleneck"): a capacity schedule, ECN marking at the bottleneck,
 * background traffic, outages; on a simulated clock with exact arithmetic,
 * plus the CE rewrite of IPv4/IPv6 headers. Unit suite.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "link_test.h"
#include "sdr_link.h"
#include "sdr_link_peers.h"

#define MS ((uint64_t)1000000)
#define US ((uint64_t)1000)

static void check_conservation(const struct sdr_link *l, const char *what)
{
	const struct sdr_link_stats *s = &l->stats;

	CHECK(s->pkts_in == s->delivered + s->dropped_buffer + s->dropped_loss + s->dropped_ge +
				    s->dropped_down,
	      "%s: in %" PRIu64 " != delivered %" PRIu64 " + drops", what, s->pkts_in,
	      s->delivered);
}

/* rate=1gbit@0s,250mbit@10ms,1gbit@20ms: a lone 1250 B frame (10,000 bits)
 * takes 10 us, then 40 us, then 10 us again; a frame queued across a step
 * is served at both rates. */
static void test_rate_schedule(void)
{
	struct sdr_link l;
	struct sdr_link_verdict v;

	lt_mk(&l, "rate=1gbit@0s,250mbit@10ms,1gbit@20ms,buffer=1MB");
	sdr_link_set_origin(&l, 1000 * MS);
	sdr_link_decide(&l, 1000 * MS, 1250, &v);
	CHECK(v.bottleneck_exit_ns == 1000 * MS + 10 * US, "1 Gbit/s: exit %" PRIu64,
	      v.bottleneck_exit_ns - 1000 * MS);
	CHECK(sdr_link_rate_at(&l, 1005 * MS) == 1000000000ull, "rate at 5 ms");
	sdr_link_decide(&l, 1012 * MS, 1250, &v);
	CHECK(v.bottleneck_exit_ns == 1012 * MS + 40 * US, "250 Mbit/s: exit +%" PRIu64,
	      v.bottleneck_exit_ns - 1012 * MS);
	CHECK(l.stats.rate_bps_now == 250000000ull, "rate gauge %" PRIu64, l.stats.rate_bps_now);
	/* 20 us before the step back to 1 Gbit/s: 5,000 bits at 250 Mbit/s,
	 * the other 5,000 at 1 Gbit/s (5 us) */
	sdr_link_decide(&l, 1020 * MS - 20 * US, 1250, &v);
	CHECK(v.bottleneck_exit_ns == 1020 * MS + 5 * US, "across the step: exit %" PRId64,
	      (int64_t)(v.bottleneck_exit_ns - 1020 * MS));
	sdr_link_decide(&l, 1030 * MS, 1250, &v);
	CHECK(v.bottleneck_exit_ns == 1030 * MS + 10 * US, "back to 1 Gbit/s");
	CHECK(sdr_link_rate_at(&l, 1030 * MS) == 1000000000ull, "rate at 30 ms");

	/* a backlog drains at the rate of its time: 100 frames at once at
	 * 1 Gbit/s then the rate halves at 0.5 ms: the last of them leaves at
	 * 0.5 ms + (1 ms - 0.5 ms) * 2 = 1.5 ms */
	lt_mk(&l, "rate=1gbit@0s,500mbit@500us,buffer=1MB");
	sdr_link_set_origin(&l, 0);
	for (int i = 0; i < 100; i++)
		sdr_link_decide(&l, 0, 1250, &v);
	CHECK(v.bottleneck_exit_ns == 1500 * US, "drain across a step: %" PRIu64,
	      v.bottleneck_exit_ns);
	CHECK(sdr_link_backlog_at(&l, 500 * US) == 62500, "backlog at the step %" PRIu64,
	      sdr_link_backlog_at(&l, 500 * US));
	CHECK(sdr_link_backlog_at(&l, 1500 * US) == 0, "empty at 1.5 ms");
	check_conservation(&l, "schedule");
}

/* A queue built by a burst: which ECN-capable frames find it at or above K. */
static void test_ecn_step(void)
{
	struct sdr_link l;
	struct sdr_link_verdict v;
	unsigned marked = 0, not_ect_marked = 0;

	/* 200 frames of 1000 B at one instant: frame i finds i*1000 B queued;
	 * K = 50 KB: frames 50..199 are marked */
	lt_mk(&l, "rate=1gbit,buffer=1MB,ecn=50KB");
	for (unsigned i = 0; i < 200; i++) {
		sdr_link_decide_ecn(&l, 0, 1000, SDR_LINK_ECN_ECT0, &v);
		if (v.ce != (i >= 50))
			CHECK(0, "frame %u with %u B queued: ce %d", i, i * 1000, v.ce);
		marked += v.ce;
	}
	CHECK(marked == 150 && l.stats.ce_marked == 150 && l.stats.ect_in == 200,
	      "marked %u, counter %" PRIu64 ", ect_in %" PRIu64, marked, l.stats.ce_marked,
	      l.stats.ect_in);
	/* a frame that is not ECN-capable is never marked, however long the queue */
	for (unsigned i = 0; i < 50; i++) {
		sdr_link_decide_ecn(&l, 0, 1000, SDR_LINK_ECN_NOT_ECT, &v);
		not_ect_marked += v.ce;
	}
	CHECK(not_ect_marked == 0, "not-ECT frames marked: %u", not_ect_marked);
	sdr_link_decide(&l, 0, 1000, &v);
	CHECK(!v.ce, "sdr_link_decide() is not-ECT");
	check_conservation(&l, "ecn step");
}

/* ecnmark=dequeue: the same burst, each frame's mark decided as it leaves on
 * the backlog behind it - the first frames of the burst are marked, not the
 * last; a later arrival counts once its time has come. */
static void test_ecn_dequeue(void)
{
	struct sdr_link l;
	struct sdr_link_verdict v, w;
	uint64_t exit_ns[200];
	unsigned marked = 0, pending = 0;

	/* 200 frames of 1000 B at one instant: frame i leaves at (i + 1) x
	 * 8 us with (199 - i) x 1000 B behind it; K = 50 KB: frames 0..149 */
	lt_mk(&l, "rate=1gbit,buffer=1MB,ecn=50KB,ecnmark=dequeue");
	for (unsigned i = 0; i < 200; i++) {
		sdr_link_decide_ecn(&l, 0, 1000, SDR_LINK_ECN_ECT0, &v);
		pending += v.ce_at_exit;
		exit_ns[i] = v.bottleneck_exit_ns;
		CHECK(!v.ce, "frame %u marked as it arrived", i);
	}
	CHECK(pending == 200 && l.stats.ce_marked == 0, "pending %u, marked %" PRIu64, pending,
	      l.stats.ce_marked);
	for (unsigned i = 0; i < 200; i++) {
		bool ce = sdr_link_mark_at_exit(&l, exit_ns[i]);

		if (ce != (i < 150))
			CHECK(0, "frame %u leaving %u B behind: ce %d", i, (199 - i) * 1000, ce);
		marked += ce;
	}
	CHECK(marked == 150 && l.stats.ce_marked == 150 && l.stats.ect_in == 200,
	      "marked %u, counter %" PRIu64 ", ect_in %" PRIu64, marked, l.stats.ce_marked,
	      l.stats.ect_in);
	/* a frame that is not ECN-capable has nothing to decide */
	sdr_link_decide_ecn(&l, 2 * MS, 1000, SDR_LINK_ECN_NOT_ECT, &v);
	CHECK(!v.ce && !v.ce_at_exit, "not-ECT: ce %d, at exit %d", v.ce, v.ce_at_exit);
	/* a lone frame leaves an empty queue: not marked (60 KB that come
	 * 1 us after it left are fed after its decision, as the glue does) */
	lt_mk(&l, "rate=1gbit,buffer=1MB,ecn=50KB,ecnmark=dequeue");
	sdr_link_decide_ecn(&l, 0, 1000, SDR_LINK_ECN_ECT0, &v);
	CHECK(v.bottleneck_exit_ns == 8 * US && !sdr_link_mark_at_exit(&l, v.bottleneck_exit_ns),
	      "lone frame marked");
	for (unsigned i = 0; i < 60; i++)
		sdr_link_decide(&l, 9 * US, 1000, &w);
	/* one that 60 KB follow within its 8 us leaves them behind: marked,
	 * though it found the queue empty */
	sdr_link_decide_ecn(&l, 1 * MS, 1000, SDR_LINK_ECN_ECT0, &v);
	for (unsigned i = 0; i < 60; i++)
		sdr_link_decide(&l, 1 * MS + 4 * US, 1000, &w);
	CHECK(sdr_link_mark_at_exit(&l, v.bottleneck_exit_ns), "frame leaving 60 KB not marked");
	check_conservation(&l, "ecn dequeue");
	/* a reordered frame is decided as it arrives, on what it finds (every
	 * frame reordered here: frames 50..199 of the burst, as enqueue) */
	lt_mk(&l, "rate=1gbit,buffer=1MB,ecn=50KB,ecnmark=dequeue,reorder=1");
	marked = pending = 0;
	for (unsigned i = 0; i < 200; i++) {
		sdr_link_decide_ecn(&l, 0, 1000, SDR_LINK_ECN_ECT0, &v);
		pending += v.ce_at_exit;
		if (v.ce != (i >= 50))
			CHECK(0, "reordered frame %u finding %u B: ce %d", i, i * 1000, v.ce);
		marked += v.ce;
	}
	CHECK(pending == 0 && marked == 150 && l.stats.ce_marked == 150,
	      "reordered: %u pending, %u marked, counter %" PRIu64, pending, marked,
	      l.stats.ce_marked);
}

/* RED-like: between KMIN and KMAX the probability rises linearly to PMAX. */
static void test_ecn_red(void)
{
	struct sdr_link l;
	struct sdr_link_verdict v;
	unsigned long long k = 0, n = 0;

	/* Keep the backlog at about 150 KB (midway between 100 and 200 KB:
	 * p = 0.5 * 0.5 = 0.25): refill a 1 Gbit/s bottleneck at its rate */
	lt_mk(&l, "rate=1gbit,buffer=1MB,ecn=100KB:200KB:0.5,seed=3");
	for (unsigned i = 0; i < 150; i++)
		sdr_link_decide(&l, 0, 1000, &v); /* not ECT: fills to 150 KB */
	for (uint64_t t = 8 * US; n < 20000; t += 8 * US) {
		uint64_t b = sdr_link_backlog_at(&l, t);

		sdr_link_decide_ecn(&l, t, 1000, SDR_LINK_ECN_ECT1, &v);
		if (b >= 149000 && b <= 151000) {
			n++;
			k += v.ce;
		}
	}
	CHECK_RATE("RED marking at 150 KB", k, n, 0.25);
	/* above KMAX every frame */
	for (unsigned i = 0; i < 100; i++)
		sdr_link_decide(&l, 160 * MS, 1000, &v);
	sdr_link_decide_ecn(&l, 160 * MS, 1000, SDR_LINK_ECN_ECT0, &v);
	CHECK(v.ce, "above KMAX: marked");
}

/* Background traffic takes its share of the bottleneck. */
static void test_background(void)
{
	struct sdr_link l;
	struct sdr_link_verdict v;
	uint64_t t;

	/* 1 Gbit/s with 500 Mbit/s of background: our 600 Mbit/s (1500 B every
	 * 20 us) is 100 Mbit/s too much, the queue grows by 12.5 KB per ms */
	lt_mk(&l, "rate=1gbit,buffer=10MB,bg=500mbit");
	sdr_link_set_origin(&l, 0);
	for (t = 0; t < 100 * MS; t += 20 * US)
		sdr_link_decide(&l, t, 1500, &v);
	uint64_t b = sdr_link_backlog_at(&l, t);
	CHECK(b > 1240000 && b < 1260000, "backlog after 100 ms %" PRIu64 " (1.25 MB expected)", b);
	CHECK(l.stats.bg_bytes > 6240000 && l.stats.bg_bytes <= 6250000,
	      "background bytes %" PRIu64, l.stats.bg_bytes);
	CHECK(l.stats.dropped_buffer == 0 && l.stats.bg_dropped_bytes == 0, "no drops yet");

	/* background alone overflows a small buffer: it is dropped, not us
	 * once the queue has room again; on/off: 2 ms on, 2 ms off */
	/* (fluid: 2 ms on at 200 - 100 Mbit/s net = 25 KB into a 20 KB buffer) */
	lt_mk(&l, "rate=100mbit,buffer=20KB,bg=200mbit:2ms:2ms");
	sdr_link_set_origin(&l, 0);
	CHECK(sdr_link_backlog_at(&l, 2 * MS) == 20000, "full after 2 ms on: %" PRIu64,
	      sdr_link_backlog_at(&l, 2 * MS));
	sdr_link_decide(&l, 2 * MS, 1000, &v);
	CHECK(v.action == SDR_LINK_DROP_BUFFER, "a frame into the full queue is dropped");
	CHECK(l.stats.bg_dropped_bytes == 5000 && l.stats.bg_bytes == 50000,
	      "background overflow %" PRIu64 " of %" PRIu64, l.stats.bg_dropped_bytes,
	      l.stats.bg_bytes);
	/* off: 1 ms at 100 Mbit/s drains 12.5 KB */
	CHECK(sdr_link_backlog_at(&l, 3 * MS) == 7500, "after 1 ms off: %" PRIu64,
	      sdr_link_backlog_at(&l, 3 * MS));
	sdr_link_decide(&l, 3 * MS, 1000, &v);
	CHECK(v.action == SDR_LINK_DELIVER, "room again in the off period");
	CHECK(v.bottleneck_exit_ns == 3 * MS + 680 * US, "behind 7.5 KB: exit %" PRIu64,
	      v.bottleneck_exit_ns);
}

/* Outages: frames arriving while down are lost, counted, nothing else. */
static void test_down(void)
{
	struct sdr_link l;
	struct sdr_link_verdict v;
	unsigned lost = 0, n = 0;

	lt_mk(&l, "delay=5ms,down=10ms+200ms,1s+50ms");
	sdr_link_set_origin(&l, 7);
	for (uint64_t t = 0; t < 2000 * MS; t += MS, n++) {
		int in1 = t >= 10 * MS && t < 210 * MS, in2 = t >= 1000 * MS && t < 1050 * MS;

		sdr_link_decide(&l, 7 + t, 100, &v);
		if ((v.action == SDR_LINK_DROP_DOWN) != (in1 || in2))
			CHECK(0, "t=%" PRIu64 " ms: action %d", t / MS, v.action);
		lost += v.action == SDR_LINK_DROP_DOWN;
	}
	CHECK(lost == 250 && l.stats.dropped_down == 250, "lost %u, counter %" PRIu64, lost,
	      l.stats.dropped_down);
	CHECK(sdr_link_is_down(&l, 7 + 10 * MS) && !sdr_link_is_down(&l, 7 + 210 * MS),
	      "is_down at the edges");
	check_conservation(&l, "down");
	(void)n;
}

static void test_parse(void)
{
	static const char *const good[] = {
		"rate=1gbit@0s,500mbit@10s,1gbit@20s,buffer=4MB",
		"rate=1gbit,buffer=4MB,ecn=100KB",
		"rate=1gbit,buffer=4MB,ecn=100KB:400KB:0.2",
		"rate=1gbit,buffer=4MB,ecn=100KB,ecnmark=dequeue",
		"rate=1gbit,buffer=4MB,ecn=100KB,ecnmark=enqueue",
		"rate=1gbit,bg=300mbit",
		"rate=1gbit,bg=300mbit:1s:500ms",
		"delay=12.5ms,down=2s+10s",
		"delay=12.5ms,down=2s+10s,30s+200ms,loss=1e-3",
		"rate=1gbit@0s,500mbit@10s,down=1s+1s,ecn=1KB,bg=1mbit,delay=1ms",
	};
	static const struct {
		const char *spec, *want;
	} bad[] = {
		{"rate=1gbit@1s", "starts at @0s"},
		{"rate=1gbit@0s,500mbit@0s", "must increase"},
		{"rate=1gbit@0s,2gbit@2s,1gbit@1s", "must increase"},
		{"rate=1gbit@0s,500mbit", "RATE@TIME"},
		{"rate=1gbit,500mbit@1s", "needs a value"},
		{"rate=0@0s", "rate > 0"},
		{"ecn=10KB", "needs a bottleneck"},
		{"bg=1mbit", "needs a bottleneck"},
		{"rate=1gbit,ecn=2KB:1KB", "below KMIN"},
		{"rate=1gbit,ecn=1KB:2KB:1.5", "more than 1"},
		{"rate=1gbit,ecnmark=dequeue", "needs a marking threshold"},
		{"rate=1gbit,ecn=1KB,ecnmark=exit", "enqueue or dequeue"},
		{"rate=1gbit,bg=1mbit:1s", "RATE:ON:OFF"},
		{"rate=1gbit,bg=1mbit:0s:1s", "ON must be > 0"},
		{"down=1s", "TIME+LENGTH"},
		{"down=1s+0s", "must be > 0"},
		{"down=2s+1s,1s+1s", "not overlap"},
		{"down=1s+2s,2s+1s", "not overlap"},
		{"delay=1ms,10ms+1s", "needs a value"},
	};
	char err[256], buf[2048];

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		struct sdr_link_cfg a, b;
		struct sdr_link l;

		CHECK(sdr_link_parse(good[i], &a, err, sizeof(err)) == 0, "'%s': %s", good[i], err);
		CHECK(sdr_link_init(&l, &a) == 0, "init '%s'", good[i]);
		sdr_link_cfg_format(&a, buf, sizeof(buf));
		CHECK(sdr_link_parse(buf, &b, err, sizeof(err)) == 0, "reparse '%s': %s", buf, err);
		CHECK(memcmp(&a, &b, sizeof(a)) == 0, "round trip of '%s' via '%s'", good[i], buf);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sdr_link_cfg a;

		CHECK(sdr_link_parse(bad[i].spec, &a, err, sizeof(err)) == -EINVAL, "'%s' taken",
		      bad[i].spec);
		CHECK(strstr(err, bad[i].want) != NULL, "'%s': message '%s' lacks '%s'",
		      bad[i].spec, err, bad[i].want);
	}
	{
		/* 17 steps: one too many */
		char s[1024];
		size_t o = (size_t)snprintf(s, sizeof(s), "rate=1gbit@0s");
		struct sdr_link_cfg a;

		for (int i = 1; i <= 17; i++)
			o += (size_t)snprintf(s + o, sizeof(s) - o, ",%dmbit@%ds", 100 + i, i);
		CHECK(sdr_link_parse(s, &a, err, sizeof(err)) == -EINVAL &&
			      strstr(err, "schedule steps"),
		      "17 steps: %s", err);
	}
}

static void test_mark_ce(void)
{
	uint8_t f[64] = {0};
	uint32_t s = 0;

	/* Ethernet + IPv4 (DSCP 26, ECT(0)) with a correct checksum */
	f[12] = 0x08;
	f[14] = 0x45;
	f[15] = (26 << 2) | SDR_LINK_ECN_ECT0;
	f[17] = 46;
	f[22] = 64;
	f[23] = 17;
	memcpy(f + 26, "\x0a\x00\x00\x01\x0a\x00\x00\x02", 8);
	for (int i = 14; i < 34; i += 2)
		s += (uint32_t)(f[i] << 8 | f[i + 1]);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	f[24] = (uint8_t)(~s >> 8);
	f[25] = (uint8_t)~s;
	CHECK(lt_ip4_fold(f + 14) == 0xffff, "test frame checksum");
	CHECK(sdr_link_frame_ecn(f, sizeof(f)) == SDR_LINK_ECN_ECT0, "ECT(0) read");
	CHECK(sdr_link_frame_mark_ce(f, sizeof(f)) == 0, "marked");
	CHECK(sdr_link_frame_ecn(f, sizeof(f)) == SDR_LINK_ECN_CE, "CE read back");
	CHECK(f[15] >> 2 == 26, "DSCP kept");
	CHECK(lt_ip4_fold(f + 14) == 0xffff, "checksum still right after the mark: %04x",
	      lt_ip4_fold(f + 14));
	f[15] = 26 << 2; /* not ECT */
	CHECK(sdr_link_frame_mark_ce(f, sizeof(f)) == -1 && f[15] == 26 << 2, "not-ECT left alone");
	CHECK(sdr_link_frame_ecn(f, 20) == -1, "short frame");
	/* IPv6 with traffic class ECT(1) */
	memset(f, 0, sizeof(f));
	f[12] = 0x86;
	f[13] = 0xdd;
	f[14] = 0x60;
	f[15] = SDR_LINK_ECN_ECT1 << 4;
	CHECK(sdr_link_frame_ecn(f, sizeof(f)) == SDR_LINK_ECN_ECT1, "IPv6 ECT(1)");
	CHECK(sdr_link_frame_mark_ce(f, sizeof(f)) == 0 &&
		      sdr_link_frame_ecn(f, sizeof(f)) == SDR_LINK_ECN_CE,
	      "IPv6 marked");
}

int main(void)
{
	test_rate_schedule();
	test_ecn_step();
	test_ecn_dequeue();
	test_ecn_red();
	test_background();
	test_down();
	test_parse();
	test_mark_ce();
	return lt_finish("test_link_shared");
}
