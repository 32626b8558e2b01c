/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz harness for the link emulator's per-peer profiles
 * (common/link/sdr_link_peers.c): the lane of a received frame, read
 * from its Ethernet/IPv4 header, and the profile text of --link-peer.
 *
 * Byte 0 picks the mode:
 *   even  the rest is a frame: its lane under a fixed plan of four profiles
 *         (one of three paths) and a default lane of three paths (--link
 *         "A | B | C"), with every prefix length of the header (the glue
 *         reads only the first segment).
 *         Invariants: the lane is in range; when the source address parses,
 *         the lane is the one the plan lists for it (the default lane's
 *         first when none) plus the frame's path (the default lane's path 0
 *         otherwise); a frame too short
 *         for an IPv4 header never yields an address; the decision of the
 *         lane's link leaves the counters' identity intact.
 *   1, 5, ...  the rest is a --link-peer text (NUL-terminated here): added
 *         to a plan that has one profile already. Invariants: a refusal
 *         leaves the plan unchanged and says why; an accepted profile (of
 *         one or more paths, '|' or paths=N) takes a lane per path, and its
 *         canonical text, added to a fresh plan, gives the same lanes.
 *   3, 7, ...  the rest is a --link text (sdr_link_plan_init_spec()): a
 *         refusal says why; an accepted one makes a default lane of a lane
 *         per path, and its canonical text gives the same lanes back.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdr_fuzz.h"
#include "sdr_link_peers.h"

#define FUZZ_ASSERT(cond)                                                                 \
	do {                                                                              \
		if (!(cond)) {                                                            \
			fprintf(stderr, "fuzz_linkpeer: invariant failed at %s:%d: %s\n", \
				__FILE__, __LINE__, #cond);                               \
			abort();                                                          \
		}                                                                         \
	} while (0)

static struct sdr_link_plan plan, base;
static struct sdr_link_set set, set_text;
static int ready;

static void setup(void)
{
	static const char *const prof[] = {
		"a:10.100.1.2:delay=5ms",
		("shared:10.100.0.2+10.100.3.2:delay=25ms,rate=1gbit@0s,500mbit@20us,buffer=64KB,"
		 "loss=1e-2,ecn=1KB:30KB:0.5,bg=100mbit:10us:10us,down=30us+5us"),
		"10.100.4.2:",
		"multi:10.100.5.2:delay=1ms | delay=2ms,rate=1gbit,down=10us+5us | loss=0.1",
		"deq:10.100.6.2:rate=1gbit,buffer=64KB,ecn=1KB:8KB:0.5,ecnmark=dequeue,reorder=0.3",
	};
	if (ready)
		return;
	if (sdr_link_plan_init_spec(&plan, "delay=1ms | delay=2ms,loss=0.1 | ", NULL, 0))
		abort();
	for (unsigned i = 0; i < sizeof(prof) / sizeof(prof[0]); i++)
		if (sdr_link_plan_add(&plan, prof[i], NULL, 0))
			abort();
	if (sdr_link_set_init(&set, &plan))
		abort();
	sdr_link_plan_init(&base, NULL);
	if (sdr_link_plan_add(&base, "x:10.9.9.9:delay=1ms", NULL, 0))
		abort();
	ready = 1;
}

/* one's-complement sum of a 20-byte IPv4 header: 0xffff when its checksum is right */
static uint16_t ip4_fold(const uint8_t *h)
{
	uint32_t s = 0;

	for (int i = 0; i < 20; i += 2)
		s += (uint32_t)(h[i] << 8 | h[i + 1]);
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

static void frame(const uint8_t *f, size_t n)
{
	uint32_t len = n > 65535 ? 65535 : (uint32_t)n;
	uint64_t now = 0;

	for (uint32_t head = 0; head <= len && head <= 64; head++) {
		struct sdr_link_verdict v;
		unsigned lane;
		uint32_t ip;
		int have = sdr_link_frame_src_ipv4(f, head, &ip) == 0;
		const struct sdr_link_stats *s;

		FUZZ_ASSERT(!have || head >= 34);
		sdr_link_set_decide(&set, now += 1000, f, head, len, &lane, &v);
		FUZZ_ASSERT(lane < plan.nlanes);
		if (have) {
			unsigned first = sdr_link_plan_lane(&plan, ip);
			unsigned path = sdr_link_frame_path(f, head, plan.lane[first].npaths);

			FUZZ_ASSERT(plan.lane[first].path == 0 && path < plan.lane[first].npaths);
			FUZZ_ASSERT(lane == first + path && plan.lane[lane].path == path);
		} else {
			FUZZ_ASSERT(lane == sdr_link_plan_default_lane(&plan));
		}
		s = &set.link[lane].stats;
		FUZZ_ASSERT(s->pkts_in == s->delivered + s->dropped_buffer + s->dropped_loss +
						  s->dropped_ge + s->dropped_down);
		/* only an ECN-capable IP frame is marked (at the bottleneck: it may
		 * still be lost on the span after) */
		FUZZ_ASSERT(!v.ce || sdr_link_frame_ecn(f, head) > 0);
		/* ecnmark=dequeue: decided at its exit (not marked yet), or at
		 * once where it was reordered */
		FUZZ_ASSERT(!v.ce_at_exit ||
			    (sdr_link_frame_ecn(f, head) > 0 && !v.ce && !v.reordered));
		if (v.ce_at_exit && v.action == SDR_LINK_DELIVER) {
			uint64_t m = s->ce_marked;

			FUZZ_ASSERT(sdr_link_mark_at_exit(&set.link[lane], v.bottleneck_exit_ns) ==
				    (s->ce_marked == m + 1));
		}
	}
	/* the CE rewrite: only an ECN-capable IP frame changes, to CE, and
	 * an IPv4 header's checksum stays as right (or wrong) as it was */
	{
		uint8_t c[128];
		uint32_t m = len < sizeof(c) ? len : (uint32_t)sizeof(c);
		int before = sdr_link_frame_ecn(f, m);

		memcpy(c, f, m);
		if (sdr_link_frame_mark_ce(c, m) == 0) {
			FUZZ_ASSERT(before > 0 && sdr_link_frame_ecn(c, m) == 3);
			if (c[12] == 0x08 && c[13] == 0x00) /* untagged IPv4 */
				FUZZ_ASSERT((ip4_fold(f + 14) == 0xffff) ==
					    (ip4_fold(c + 14) == 0xffff));
		} else {
			FUZZ_ASSERT(before <= 0 && memcmp(c, f, m) == 0);
		}
	}
}

static void text(const uint8_t *d, size_t n)
{
	char spec[512], err[600], canon[16384];
	struct sdr_link_plan p = base, q;
	unsigned np;

	if (n >= sizeof(spec))
		n = sizeof(spec) - 1;
	memcpy(spec, d, n);
	spec[n] = '\0';
	if (sdr_link_plan_add(&p, spec, err, sizeof(err)) != 0) {
		FUZZ_ASSERT(memcmp(&p, &base, sizeof(p)) == 0);
		FUZZ_ASSERT(err[0] != '\0');
		return;
	}
	np = p.lane[1].npaths;
	FUZZ_ASSERT(np >= 1 && np <= SDR_LINK_PATHS_MAX);
	FUZZ_ASSERT(p.nlanes == base.nlanes + np && p.lane[1].naddr > 0);
	FUZZ_ASSERT(sdr_link_plan_format(&p, 1 + np - 1, canon, sizeof(canon)) <
		    (int)sizeof(canon));
	sdr_link_plan_init(&q, NULL);
	FUZZ_ASSERT(sdr_link_plan_add(&q, canon, err, sizeof(err)) == 0);
	FUZZ_ASSERT(q.nlanes == np + 1);
	for (unsigned k = 0; k < np; k++) {
		char a[2048], b[2048];

		FUZZ_ASSERT(strcmp(q.lane[k].name, p.lane[1 + k].name) == 0 &&
			    q.lane[k].naddr == p.lane[1 + k].naddr && q.lane[k].path == k &&
			    p.lane[1 + k].path == k && q.lane[k].npaths == np &&
			    p.lane[1 + k].npaths == np &&
			    memcmp(q.lane[k].addr, p.lane[1 + k].addr, sizeof(q.lane[k].addr)) ==
				    0);
		/* (the structs' padding differs; the canonical text covers every field) */
		sdr_link_cfg_format(&q.lane[k].cfg, a, sizeof(a));
		sdr_link_cfg_format(&p.lane[1 + k].cfg, b, sizeof(b));
		FUZZ_ASSERT(strcmp(a, b) == 0 && q.lane[k].cfg.limit == p.lane[1 + k].cfg.limit &&
			    q.lane[k].cfg.seed == p.lane[1 + k].cfg.seed);
	}
}

/* The text as --link: the default lane's paths. */
static void link_text(const uint8_t *d, size_t n)
{
	char spec[512], err[600], canon[16384];
	struct sdr_link_plan p, q;
	unsigned np;

	if (n >= sizeof(spec))
		n = sizeof(spec) - 1;
	memcpy(spec, d, n);
	spec[n] = '\0';
	if (sdr_link_plan_init_spec(&p, spec, err, sizeof(err)) != 0) {
		FUZZ_ASSERT(err[0] != '\0');
		return;
	}
	np = p.nlanes;
	FUZZ_ASSERT(np >= 1 && np <= SDR_LINK_PATHS_MAX && sdr_link_plan_default_lane(&p) == 0);
	FUZZ_ASSERT(sdr_link_plan_format(&p, np - 1, canon, sizeof(canon)) < (int)sizeof(canon));
	FUZZ_ASSERT(strncmp(canon, "default:", 8) == 0);
	FUZZ_ASSERT(sdr_link_plan_init_spec(&q, canon + 8, err, sizeof(err)) == 0);
	FUZZ_ASSERT(q.nlanes == np);
	for (unsigned k = 0; k < np; k++) {
		char a[2048], b[2048];

		FUZZ_ASSERT(strcmp(q.lane[k].name, p.lane[k].name) == 0 && q.lane[k].path == k &&
			    p.lane[k].npaths == np && p.lane[k].naddr == 0 && p.lane[k].emulated);
		sdr_link_cfg_format(&q.lane[k].cfg, a, sizeof(a));
		sdr_link_cfg_format(&p.lane[k].cfg, b, sizeof(b));
		FUZZ_ASSERT(strcmp(a, b) == 0 && q.lane[k].cfg.limit == p.lane[k].cfg.limit &&
			    q.lane[k].cfg.seed == p.lane[k].cfg.seed);
	}
	FUZZ_ASSERT(sdr_link_set_init(&set_text, &p) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	setup();
	if (size == 0)
		return 0;
	if ((data[0] & 3) == 3)
		link_text(data + 1, size - 1);
	else if (data[0] & 1)
		text(data + 1, size - 1);
	else
		frame(data + 1, size - 1);
	return 0;
}

void sdr_fuzz_seeds(sdr_fuzz_emit_fn emit, void *arg)
{
	static const char *const texts[] = {
		"y:10.1.1.1:delay=12.5ms,rate=2gbit,buffer=4MB",
		"10.1.1.1+10.1.1.2:loss=1e-3,ge=0.01:0.5",
		"z:10.1.1.3:",
		"bad name:10.1.1.1:",
		"w:10.9.9.9:delay=1ms",
		"v:10.1.1.4:reorder=0.1:2ms,dup=0.01,corrupt=0.01:3,seed=9,limit=100",
		"e:10.1.1.5:delay=5ms,rate=250mbit | delay=8ms,rate=250mbit,down=2s+3s | ",
		"f:10.1.1.6:delay=1ms,loss=1e-3,paths=4,seed=7",
		"g:10.1.1.7:paths=2|delay=1ms",
		"h:10.1.1.8:rate=1gbit,ecn=10KB,ecnmark=dequeue",
	};
	static const char *const links[] = {
		"delay=5ms,rate=250mbit | delay=8ms,rate=250mbit,down=2s+3s | ",
		"delay=1ms,loss=1e-3,paths=4,seed=7",
		"delay=12.5ms,rate=1gbit,buffer=4MB",
		"paths=9",
		"rate=1gbit,ecn=10KB:20KB:0.5,ecnmark=dequeue,reorder=0.1",
		"delay=12.5ms,rate=1gbit,buffer=4MB,ecn=100KB,arrival=spread",
	};
	uint8_t buf[80];

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++) {
		size_t n = strlen(texts[i]);

		buf[0] = 1;
		memcpy(buf + 1, texts[i], n);
		emit(buf, n + 1, arg);
	}
	for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++) {
		size_t n = strlen(links[i]);

		buf[0] = 3;
		memcpy(buf + 1, links[i], n);
		emit(buf, n + 1, arg);
	}
	/* frames from a listed, a shared and an unlisted source, one tagged,
	 * UDP/TCP frames of the profile of three paths, and an ECN-capable
	 * one of the profile that marks at dequeue */
	for (unsigned k = 0; k < 7; k++) {
		static const uint8_t src[7][4] = {{10, 100, 1, 2}, {10, 100, 3, 2}, {10, 7, 7, 7},
						  {10, 100, 0, 2}, {10, 100, 5, 2}, {10, 100, 5, 2},
						  {10, 100, 6, 2}};
		unsigned l3 = k == 3 ? 18 : 14;

		memset(buf, 0, sizeof(buf));
		buf[0] = 0;
		if (k == 3) {
			buf[1 + 12] = 0x81;
			buf[1 + 16] = 0x08;
		} else {
			buf[1 + 12] = 0x08;
		}
		buf[1 + l3] = 0x45;
		buf[1 + l3 + 1] = k == 6 ? 0x02 : 0; /* ECT(0) */
		memcpy(buf + 1 + l3 + 12, src[k], 4);
		if (k >= 4) {
			buf[1 + l3 + 9] = k == 4 ? 17 : 6;
			buf[1 + l3 + 20] = 0xc0; /* source port 0xc0 + k */
			buf[1 + l3 + 21] = (uint8_t)k;
			buf[1 + l3 + 22] = 0x12; /* destination port 4791 */
			buf[1 + l3 + 23] = 0xb7;
		}
		emit(buf, 1 + 64, arg);
	}
}
