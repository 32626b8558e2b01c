/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz harness for sdr-pipe's runtime protocol (host/pipe/pipe_proto.c): the
 * bytes a DC reads from another over its bootstrap connection.
 *
 * Byte 0 picks the decoder (header, HELLO, PING, OFFSET, QPINFO, START,
 * EVENTS of DC 1 of a fixed 3-DC configuration); the rest is its input.
 * Invariants: a decoder never reads past the input; an accepted message
 * encodes back to exactly the same bytes (every field is checked, padding
 * included, so there is one encoding); accepted events are in range.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipe_proto.h"
#include "sdr_fuzz.h"

#define FUZZ_ASSERT(cond)                                                                  \
	do {                                                                               \
		if (!(cond)) {                                                             \
			fprintf(stderr, "fuzz_pipeproto: invariant failed at %s:%d: %s\n", \
				__FILE__, __LINE__, #cond);                                \
			abort();                                                           \
		}                                                                          \
	} while (0)

static uint8_t out[PIPE_EVENTS_BYTES(4096)];

static void same(const uint8_t *in, size_t len, size_t outlen)
{
	FUZZ_ASSERT(outlen == len && memcmp(in, out, len) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct pipe_cfg c;
	static int ready;
	const uint8_t *b = data + 1;
	size_t n = size ? size - 1 : 0;

	if (!ready) {
		pipe_cfg_init(&c);
		if (pipe_place_parse("0,0,1,1,2,2", &c) || (c.micro = 4, pipe_cfg_finish(&c)))
			abort();
		ready = 1;
	}
	if (size == 0)
		return 0;
	/* the decoders get a heap copy of exactly n bytes: ASan sees an overread */
	uint8_t *in = malloc(n ? n : 1);

	if (!in)
		return 0;
	memcpy(in, b, n);
	switch (data[0] % 7) {
	case 0: {
		enum pipe_msg_type t;
		uint32_t len;

		if (n >= PIPE_PROTO_HDR && pipe_msg_hdr_get(in, &t, &len) == 0) {
			pipe_msg_hdr_put(out, t, len);
			same(in, PIPE_PROTO_HDR, PIPE_PROTO_HDR);
		}
		break;
	}
	case 1: {
		struct pipe_hello h;

		if (pipe_hello_get(in, n, &h) == 0) {
			FUZZ_ASSERT(h.dc < h.dcs && h.dcs <= PIPE_MAX_DC);
			same(in, n, pipe_hello_put(out, &h));
		}
		break;
	}
	case 2: {
		struct pipe_ping p;

		if (pipe_ping_get(in, n, &p) == 0)
			same(in, n, pipe_ping_put(out, &p));
		break;
	}
	case 3: {
		struct pipe_offset o;

		if (pipe_offset_get(in, n, &o) == 0)
			same(in, n, pipe_offset_put(out, &o));
		break;
	}
	case 4: {
		static struct pipe_qpinfo q[8];
		uint32_t k;

		if (pipe_qpinfo_get(in, n, q, 8, &k) == 0) {
			FUZZ_ASSERT(k <= 8);
			same(in, n, pipe_qpinfo_put(out, q, k));
		}
		break;
	}
	case 5: {
		static struct pipe_start s;

		if (pipe_start_get(in, n, &s) == 0) {
			FUZZ_ASSERT(s.n <= PIPE_MAX_FLOWS);
			same(in, n, pipe_start_put(out, &s));
		}
		break;
	}
	case 6: {
		struct pipe_events e = {0};
		int k = n >= 4 ? pipe_events_get(in, n, &c, 1,
						 in[0] | in[1] << 8 | in[2] << 16 |
							 (uint32_t)in[3] << 24,
						 &e)
			       : -1;

		if (k >= 0) {
			FUZZ_ASSERT((size_t)k == e.n && e.n <= 4096);
			for (size_t i = 0; i < e.n; i++)
				FUZZ_ASSERT(e.ev[i].stage >= 2 && e.ev[i].stage <= 3 &&
					    e.ev[i].m < 4 && e.ev[i].t1 >= e.ev[i].t0);
			same(in, n,
			     pipe_events_put(out,
					     e.n ? e.ev[0].iter
						 : in[0] | in[1] << 8 | in[2] << 16 |
							     (uint32_t)in[3] << 24,
					     e.ev, (uint32_t)e.n));
		}
		pipe_events_free(&e);
		break;
	}
	}
	free(in);
	return 0;
}

void sdr_fuzz_seeds(sdr_fuzz_emit_fn emit, void *arg)
{
	static uint8_t buf[1 + PIPE_EVENTS_BYTES(4)];
	struct pipe_hello h = {.version = PIPE_PROTO_VERSION,
			       .dc = 1,
			       .dcs = 3,
			       .digest = 5,
			       .iters = 3,
			       .seed = 1};
	struct pipe_ping p = {.seq = 1, .t0 = 10.5, .peer_t = 10.6};
	struct pipe_offset o = {.offset = 0.1, .rtt = 0.001};
	struct pipe_qpinfo q[2] = {{.boundary = 1, .dc = 0}, {.boundary = 3, .dc = 2}};
	static struct pipe_start s = {
		.iter = 2, .t_start = 5.0, .n = 2, .chan = {2, 7}, .rate = {250000000, 0}};
	struct pipe_event ev[2] = {
		{.iter = 2,
		 .stage = 2,
		 .m = 1,
		 .kind = PIPE_I_WAIT_RECV,
		 .chan = 2,
		 .t0 = 0.1,
		 .t1 = 0.2},
		{.iter = 2,
		 .stage = 3,
		 .m = 0,
		 .kind = PIPE_I_COMPUTE,
		 .op = 1,
		 .t0 = 0.2,
		 .t1 = 0.3},
	};

	buf[0] = 0;
	pipe_msg_hdr_put(buf + 1, PIPE_MSG_EVENTS, 100);
	emit(buf, 1 + PIPE_PROTO_HDR, arg);
	buf[0] = 1;
	emit(buf, 1 + pipe_hello_put(buf + 1, &h), arg);
	buf[0] = 2;
	emit(buf, 1 + pipe_ping_put(buf + 1, &p), arg);
	buf[0] = 3;
	emit(buf, 1 + pipe_offset_put(buf + 1, &o), arg);
	buf[0] = 4;
	emit(buf, 1 + pipe_qpinfo_put(buf + 1, q, 2), arg);
	buf[0] = 5;
	emit(buf, 1 + pipe_start_put(buf + 1, &s), arg);
	buf[0] = 6;
	emit(buf, 1 + pipe_events_put(buf + 1, 2, ev, 2), arg);
}
