/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit test of common/sdr_diag.c (common layer): the plain-words sentences
 * of sdr-diag, the tools and the Python binding (sdr.core.describe_recv
 * must say the same: tests/python/test_describe.py checks the same cases). */
#include <string.h>

#include "sdr_diag.h"
#include "sdr_test.h"

static void expect(const char *got, const char *want)
{
	if (strcmp(got, want)) {
		fprintf(stderr, "got:  %s\nwant: %s\n", got, want);
		CHECK(0);
	}
}

int main(void)
{
	char buf[1024];
	uint64_t bm[2] = {0};
	struct sdr_diag_recv r = {.seq = 1234,
				  .posted_ago = 2.3,
				  .chunk_bm = bm,
				  .chunks = 64,
				  .peer = "10.99.1.1",
				  .last_pkt_ago = 1.9};
	struct sdr_diag_send s = {.seq = 88, .posted_ago = 4.0, .waiting_cts = 1};

	for (int i = 0; i < 18; i++)
		bm[0] |= 1ull << i;
	bm[0] &= ~(1ull << 3);
	r.chunks_got = 17;
	sdr_diag_recv_text(buf, sizeof(buf), &r);
	expect(buf, "recv #1234 posted 2.3 s ago, 17 of 64 chunks, missing 3, 18-63, last packet"
		    " from 10.99.1.1 1.9 s ago");
	r.chunks_got = 0;
	bm[0] = 0;
	r.last_pkt_ago = -1;
	r.posted_ago = 0.04;
	sdr_diag_recv_text(buf, sizeof(buf), &r);
	expect(buf, "recv #1234 posted 40 ms ago, 0 of 64 chunks, no packet of it yet from"
		    " 10.99.1.1");
	/* a QP without reliability, part of it in: the hint */
	bm[0] = 0x5555555555555555ull;
	r.chunks_got = 32;
	r.no_rel = 1;
	sdr_diag_recv_text(buf, sizeof(buf), &r);
	CHECK(strstr(buf, "missing 1, 3, 5, 7, 9, 11, ..."));
	CHECK(strstr(buf, sdr_diag_no_rel_hint));
	sdr_diag_send_text(buf, sizeof(buf), &s);
	expect(buf, "send #88 waiting for the peer's clear-to-send for 4.0 s: the peer has not"
		    " posted its receive");
	s = (struct sdr_diag_send){.seq = 90,
				   .posted_ago = 1.5,
				   .pkts = 64,
				   .pkts_sent = 64,
				   .rto = 0.04,
				   .last_ack_ago = -1};
	sdr_diag_send_text(buf, sizeof(buf), &s);
	expect(buf, "send #90 posted 1.5 s ago, all 64 packets sent, no acknowledgement from the"
		    " peer yet (retransmission timeout 40 ms)");
	s.last_ack_ago = 0.3;
	s.probing = 1;
	s.backoff = 8;
	sdr_diag_send_text(buf, sizeof(buf), &s);
	expect(buf,
	       "send #90 posted 1.5 s ago, all 64 packets sent, waiting for the peer's"
	       " acknowledgement (last one 300 ms ago, retransmission timeout 40 ms, backoff 8x;"
	       " probing: one retransmission per timeout)");
	/* the chunks not acknowledged, the last retransmission */
	s.chunks = 16;
	s.unacked = 12;
	s.last_retx_ago = 0.04;
	sdr_diag_send_text(buf, sizeof(buf), &s);
	expect(buf,
	       "send #90 posted 1.5 s ago, all 64 packets sent, waiting for the peer's"
	       " acknowledgement (last one 300 ms ago, retransmission timeout 40 ms, backoff 8x;"
	       " probing: one retransmission per timeout): 12 of 16 chunks unacknowledged, last"
	       " retransmission 40 ms ago");
	s.last_ack_ago = -1;
	s.last_retx_ago = -1;
	s.unacked = 16;
	sdr_diag_send_text(buf, sizeof(buf), &s);
	expect(buf, "send #90 posted 1.5 s ago, all 64 packets sent, no acknowledgement from the"
		    " peer yet (retransmission timeout 40 ms, backoff 8x): 16 of 16 chunks"
		    " unacknowledged, none retransmitted yet");
	/* a stalled QP (link down): how long, which outage */
	s.stalled = 4.2;
	s.outage = 3;
	sdr_diag_send_text(buf, sizeof(buf), &s);
	expect(buf, "send #90 posted 1.5 s ago, all 64 packets sent, no acknowledgement from the"
		    " peer yet (retransmission timeout 40 ms, backoff 8x): 16 of 16 chunks"
		    " unacknowledged, none retransmitted yet; stalled 4.2 s (link silent),"
		    " outage 3 of this QP");
	CHECK(sdr_diag_send_text(buf, 20, &s) >= 20); /* truncated, terminated */
	CHECK(strlen(buf) == 19);
	s.stalled = 0;
	sdr_diag_missing(buf, 8, bm, 64, 6); /* truncated, terminated */
	CHECK(strlen(buf) <= 7);
	return t_finish("sdr_diag");
}
