/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-pipe's runtime protocol (host/pipe/pipe_proto.h): the byte layout of
 * the header (little endian whatever the host), every payload's round trip,
 * every decoder's refusals (lengths, ranges, non-finite times, padding), and
 * the clock-offset estimator on synthetic ping-pongs with a known offset
 * and random, asymmetric one-way delays.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "pipe_proto.h"
#include "sdr_test.h"

static void test_header(void)
{
	static const uint8_t want[PIPE_PROTO_HDR] = {'P', 'I', 'P',  'M',  6, 0,
						     0,   0,   0x10, 0x20, 0, 0};
	uint8_t h[PIPE_PROTO_HDR];
	enum pipe_msg_type t;
	uint32_t len;

	pipe_msg_hdr_put(h, PIPE_MSG_START, 0x2010);
	CHECK(memcmp(h, want, sizeof(h)) == 0, "the header's bytes are little endian, magic PIPM");
	CHECK(pipe_msg_hdr_get(h, &t, &len) == 0 && t == PIPE_MSG_START && len == 0x2010);
	for (int k = 0; k < 4; k++) {
		uint8_t b[PIPE_PROTO_HDR];

		memcpy(b, h, sizeof(b));
		if (k == 0)
			b[0] ^= 1; /* magic */
		if (k == 1)
			b[4] = PIPE_MSG_TYPES; /* unknown type */
		if (k == 2)
			b[6] = 1; /* flags */
		if (k == 3)
			b[11] = 0x80; /* length over PIPE_PROTO_MAX_PAYLOAD */
		CHECK(pipe_msg_hdr_get(b, &t, &len) == -EPROTO, "bad header %d accepted", k);
	}
	h[4] = 0;
	CHECK(pipe_msg_hdr_get(h, &t, &len) == -EPROTO, "type 0");
	pipe_msg_hdr_put(h, PIPE_MSG_BYE, PIPE_PROTO_MAX_PAYLOAD);
	CHECK(pipe_msg_hdr_get(h, &t, &len) == 0 && len == PIPE_PROTO_MAX_PAYLOAD);
}

static void test_small(void)
{
	uint8_t b[64];
	struct pipe_hello h = {.version = PIPE_PROTO_VERSION,
			       .dc = 2,
			       .dcs = 3,
			       .digest = 0x0123456789abcdefull,
			       .iters = 7,
			       .seed = 99},
			  h2;
	struct pipe_ping p = {.seq = 5, .t0 = 12.5, .peer_t = -3.25}, p2;
	struct pipe_offset o = {.offset = -0.75, .rtt = 1e-4}, o2;

	CHECK(pipe_hello_put(b, &h) == PIPE_HELLO_BYTES);
	CHECK(b[4] == 2 && b[16] == 0xef, "hello layout");
	/* (field by field: the structs have padding, which no copy need keep) */
	CHECK(pipe_hello_get(b, PIPE_HELLO_BYTES, &h2) == 0 && h2.version == h.version &&
	      h2.dc == h.dc && h2.dcs == h.dcs && h2.digest == h.digest && h2.iters == h.iters &&
	      h2.seed == h.seed);
	CHECK(pipe_hello_get(b, PIPE_HELLO_BYTES - 1, &h2) == -EPROTO, "short hello");
	h.dc = 3;
	pipe_hello_put(b, &h);
	CHECK(pipe_hello_get(b, PIPE_HELLO_BYTES, &h2) == -EPROTO, "dc >= dcs");
	h.dc = 0;
	h.dcs = PIPE_MAX_DC + 1;
	pipe_hello_put(b, &h);
	CHECK(pipe_hello_get(b, PIPE_HELLO_BYTES, &h2) == -EPROTO, "dcs > PIPE_MAX_DC");
	h.dcs = 1;
	pipe_hello_put(b, &h);
	CHECK(pipe_hello_get(b, PIPE_HELLO_BYTES, &h2) == -EPROTO, "one DC");

	CHECK(pipe_ping_put(b, &p) == PIPE_PING_BYTES);
	CHECK(pipe_ping_get(b, PIPE_PING_BYTES, &p2) == 0 && p2.seq == 5 && p2.t0 == 12.5 &&
	      p2.peer_t == -3.25);
	p.t0 = NAN;
	pipe_ping_put(b, &p);
	CHECK(pipe_ping_get(b, PIPE_PING_BYTES, &p2) == -EPROTO, "NaN ping");
	p.t0 = 1;
	p.peer_t = INFINITY;
	pipe_ping_put(b, &p);
	CHECK(pipe_ping_get(b, PIPE_PING_BYTES, &p2) == -EPROTO, "inf pong");
	p.peer_t = 0;
	pipe_ping_put(b, &p);
	b[5] = 1;
	CHECK(pipe_ping_get(b, PIPE_PING_BYTES, &p2) == -EPROTO, "padding");

	CHECK(pipe_offset_put(b, &o) == PIPE_OFFSET_BYTES);
	CHECK(pipe_offset_get(b, PIPE_OFFSET_BYTES, &o2) == 0 && o2.offset == -0.75 &&
	      o2.rtt == 1e-4);
	o.rtt = -1e-9;
	pipe_offset_put(b, &o);
	CHECK(pipe_offset_get(b, PIPE_OFFSET_BYTES, &o2) == -EPROTO, "negative round trip");
	CHECK(pipe_offset_get(b, PIPE_OFFSET_BYTES + 1, &o2) == -EPROTO, "long offset");
}

static void test_qpinfo_start(void)
{
	static uint8_t b[8192];
	struct pipe_qpinfo q[3], q2[3];
	static struct pipe_start s, s2;
	uint32_t n;
	size_t len;

	memset(q, 0, sizeof(q)); /* padding too: the round trip is compared bytewise */
	memset(q2, 0, sizeof(q2));

	for (int i = 0; i < 3; i++) {
		q[i].boundary = (uint16_t)(10 * i + 1);
		q[i].dc = (uint8_t)i;
		for (unsigned k = 0; k < SDR_QP_INFO_WIRE; k++)
			q[i].info[k] = (uint8_t)(i * 31 + k);
	}
	len = pipe_qpinfo_put(b, q, 3);
	CHECK(len == 4 + 3 * PIPE_QPINFO_BYTES);
	CHECK(pipe_qpinfo_get(b, len, q2, 3, &n) == 0 && n == 3 && memcmp(q, q2, sizeof(q)) == 0,
	      "QP info round trip");
	CHECK(pipe_qpinfo_get(b, len, q2, 2, &n) == -EPROTO, "more entries than room");
	CHECK(pipe_qpinfo_get(b, len - 1, q2, 3, &n) == -EPROTO, "length");
	CHECK(pipe_qpinfo_get(b, 3, q2, 3, &n) == -EPROTO, "no count");
	q[1].boundary = PIPE_MAX_STAGES - 1;
	len = pipe_qpinfo_put(b, q, 3);
	CHECK(pipe_qpinfo_get(b, len, q2, 3, &n) == -EPROTO, "boundary out of range");
	q[1].boundary = 1;
	q[2].dc = PIPE_MAX_DC;
	len = pipe_qpinfo_put(b, q, 3);
	CHECK(pipe_qpinfo_get(b, len, q2, 3, &n) == -EPROTO, "dc out of range");
	q[2].dc = 0;
	len = pipe_qpinfo_put(b, q, 3);
	b[4 + 3] = 1;
	CHECK(pipe_qpinfo_get(b, len, q2, 3, &n) == -EPROTO, "padding");
	CHECK(pipe_qpinfo_get(b, pipe_qpinfo_put(b, q, 0), q2, 3, &n) == 0 && n == 0, "no entries");

	s.iter = 41;
	s.t_start = 1234.000125;
	s.n = PIPE_MAX_FLOWS;
	for (uint32_t i = 0; i < s.n; i++) {
		s.chan[i] = (uint16_t)i;
		s.rate[i] = 1000000ull * i + 7;
	}
	len = pipe_start_put(b, &s);
	CHECK(len == PIPE_START_BYTES(PIPE_MAX_FLOWS));
	CHECK(pipe_start_get(b, len, &s2) == 0 && s2.iter == 41 && s2.t_start == s.t_start &&
		      s2.n == s.n && memcmp(s2.chan, s.chan, sizeof(s.chan)) == 0 &&
		      memcmp(s2.rate, s.rate, sizeof(s.rate)) == 0,
	      "START round trip");
	CHECK(pipe_start_get(b, len - 16, &s2) == -EPROTO, "fewer rates than the count");
	s.n = 2;
	s.chan[1] = 2 * PIPE_MAX_STAGES;
	len = pipe_start_put(b, &s);
	CHECK(pipe_start_get(b, len, &s2) == -EPROTO, "channel out of range");
	s.chan[1] = 1;
	s.t_start = NAN;
	len = pipe_start_put(b, &s);
	CHECK(pipe_start_get(b, len, &s2) == -EPROTO, "NaN start");
	s.t_start = 1;
	len = pipe_start_put(b, &s);
	b[4] = 0xff; /* count */
	CHECK(pipe_start_get(b, len, &s2) == -EPROTO, "count over PIPE_MAX_FLOWS");
}

static int same_event(const struct pipe_event *a, const struct pipe_event *b)
{
	return a->iter == b->iter && a->stage == b->stage && a->m == b->m && a->kind == b->kind &&
	       a->op == b->op && a->chan == b->chan && a->t0 == b->t0 && a->t1 == b->t1 &&
	       a->csum == b->csum;
}

static void test_events(void)
{
	static uint8_t b[1 << 16];
	struct pipe_cfg c;
	struct pipe_events out = {0};
	struct pipe_event ev[4], bad;
	size_t len;

	pipe_cfg_init(&c);
	REQUIRE(pipe_place_parse("0,0,1,1,2,2", &c) == 0);
	c.micro = 4;
	REQUIRE(pipe_cfg_finish(&c) == 0 && c.dcs == 3);
	/* DC 1 runs stages 2 and 3 */
	ev[0] = (struct pipe_event){.iter = 3,
				    .stage = 2,
				    .m = 1,
				    .kind = PIPE_I_WAIT_RECV,
				    .chan = PIPE_CH_ACT(1),
				    .t0 = 0.001,
				    .t1 = 0.0125,
				    .csum = 0};
	ev[1] = (struct pipe_event){.iter = 3,
				    .stage = 2,
				    .m = 1,
				    .kind = PIPE_I_COMPUTE,
				    .op = PIPE_F,
				    .t0 = 0.0125,
				    .t1 = 0.0165};
	ev[2] = (struct pipe_event){.iter = 3,
				    .stage = 3,
				    .m = 3,
				    .kind = PIPE_I_POST_SEND,
				    .chan = PIPE_CH_ACT(3),
				    .t0 = 0.02,
				    .t1 = 0.02,
				    .csum = 0xfedcba9876543210ull};
	ev[3] = (struct pipe_event){.iter = 3,
				    .stage = 3,
				    .m = 0,
				    .kind = PIPE_I_COMPUTE,
				    .op = PIPE_B,
				    .t0 = -0.5,
				    .t1 = -0.25}; /* times may be negative (clock offset) */
	len = pipe_events_put(b, 3, ev, 4);
	CHECK(len == PIPE_EVENTS_BYTES(4));
	CHECK(pipe_events_get(b, len, &c, 1, 3, &out) == 4 && out.n == 4, "events round trip");
	for (int i = 0; i < 4 && out.n == 4; i++)
		CHECK(same_event(&out.ev[i], &ev[i]), "event %d differs", i);
	CHECK(pipe_events_get(b, len, &c, 1, 4, &out) == -EPROTO, "another iteration");
	CHECK(pipe_events_get(b, len, &c, 2, 3, &out) == -EPROTO, "stages of another DC");
	CHECK(pipe_events_get(b, len - 1, &c, 1, 3, &out) == -EPROTO, "length");
	CHECK(pipe_events_get(b, 7, &c, 1, 3, &out) == -EPROTO, "no header");
	CHECK(pipe_events_get(b, pipe_events_put(b, 3, ev, 0), &c, 1, 3, &out) == 0, "no events");
	for (int k = 0; k < 9; k++) {
		bad = ev[0];
		switch (k) {
		case 0: bad.iter = 4; break;
		case 1: bad.stage = 6; break;
		case 2: bad.kind = PIPE_I_WAIT_SEND + 1; break;
		case 3: bad.op = 2; break;
		case 4: bad.m = 4; break;
		case 5: bad.chan = PIPE_NCHAN(6); break;
		case 6: bad.t0 = NAN; break;
		case 7: bad.t1 = 0; break; /* before t0 */
		case 8: bad.t1 = INFINITY; break;
		}
		len = pipe_events_put(b, 3, &bad, 1);
		CHECK(pipe_events_get(b, len, &c, 1, 3, &out) == -EPROTO, "bad event %d accepted",
		      k);
	}
	len = pipe_events_put(b, 3, ev, 1);
	b[8 + 13] = 1; /* padding */
	CHECK(pipe_events_get(b, len, &c, 1, 3, &out) == -EPROTO, "padding");
	len = pipe_events_put(b, 3, ev, 1);
	b[8 + 47] = 1;
	CHECK(pipe_events_get(b, len, &c, 1, 3, &out) == -EPROTO, "trailing padding");
	pipe_events_free(&out);
}

static void test_clock(void)
{
	struct pipe_clock_sample s[PIPE_CLOCK_ROUNDS];
	double off, rtt;

	t_seed("pipe_proto", 7);
	for (int trial = 0; trial < 2000; trial++) {
		double theta = (t_rnd() % 2000000) * 1e-6 - 1.0; /* -1 .. +1 s */
		double best_rtt = INFINITY, best_off = 0;

		for (unsigned i = 0; i < PIPE_CLOCK_ROUNDS; i++) {
			double fwd = 1e-5 +
				     (t_rnd() % 100000) * 1e-8; /* 10 us .. 1 ms, asymmetric */
			double back = 1e-5 + (t_rnd() % 100000) * 1e-8;

			s[i].t0 = 100.0 + i * 0.01;
			s[i].t1 = s[i].t0 + fwd + theta;
			s[i].t2 = s[i].t0 + fwd + back;
			if (fwd + back < best_rtt) {
				best_rtt = fwd + back;
				best_off = s[i].t1 - (s[i].t0 + s[i].t2) / 2;
			}
		}
		CHECK_OR_BREAK(pipe_clock_offset(s, PIPE_CLOCK_ROUNDS, &off, &rtt) == 0);
		CHECK(fabs(rtt - best_rtt) < 1e-12, "not the smallest round trip");
		CHECK(off == best_off);
		CHECK(fabs(off - theta) <= rtt / 2 + 1e-12, "error %g over half the round trip %g",
		      off - theta, rtt);
		BAIL_IF_MANY();
	}
	/* one symmetric sample among slow ones gives the offset exactly */
	for (unsigned i = 0; i < PIPE_CLOCK_ROUNDS; i++) {
		s[i].t0 = i;
		s[i].t1 = i + 0.3 + 0.002;
		s[i].t2 = i + 0.003 + (i == 9 ? 0 : 0.001 * (i + 1));
	}
	s[9].t1 = 9 + 0.3 + 0.0015;
	CHECK(pipe_clock_offset(s, PIPE_CLOCK_ROUNDS, &off, &rtt) == 0 && fabs(off - 0.3) < 1e-12 &&
		      fabs(rtt - 0.003) < 1e-12,
	      "offset %.9f rtt %.9f", off, rtt);
	/* unusable samples are skipped; none at all is an error */
	s[0].t2 = s[0].t0 - 1; /* negative round trip */
	s[1].t2 = NAN;
	s[2].t1 = INFINITY;
	CHECK(pipe_clock_offset(s, 3, &off, &rtt) == -EINVAL);
	CHECK(pipe_clock_offset(s, 0, &off, &rtt) == -EINVAL);
	s[2].t1 = 4.25; /* 2 s ahead, at the midpoint of [2, 2.5] */
	s[2].t2 = 2.5;
	CHECK(pipe_clock_offset(s, 3, &off, &rtt) == 0 && off == 2.0 && rtt == 0.5);
}

int main(void)
{
	test_header();
	test_small();
	test_qpinfo_start();
	test_events();
	test_clock();
	return t_finish("pipe_proto");
}
