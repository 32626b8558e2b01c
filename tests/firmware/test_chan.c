/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The stripe map in the firmware (docs/architecture.md "Channels") on the
 * engine rig's virtual clock (tests/firmware/engine_rig.h): two channel QP
 * pairs of one multi-channel QP (W 2, stripes of one 4 KiB chunk: MTU 1024,
 * chunks of 4 packets), each sending the bytes it owns of every message
 * from the same host buffer into the same receive buffer, over a link with
 * 2 % loss of every frame, duplication and up to 150 us of reordering.
 * Every message lands bit-exact in real order, nothing past its end is
 * written, every channel completes every message (the same length as
 * owned()), retransmission (SR), decoding (EC) and AUTO on the virtual
 * messages place the right bytes, and per channel its data packets are its
 * first pass (its virtual messages' packets, immediate-only ones included)
 * plus its retransmissions. Cases: sr, ec_rs, auto.
 * `test_chan NAME` runs one (meson: chan_NAME). Layer: tests of firmware/.
 */
#include <stdlib.h>
#include <string.h>

#include "engine_rig.h"
#include "sdr_stripe.h"
#include "sdr_test.h"
#include "sr_counters.h"

#define W 2
#define S 4096u         /* stripe: one chunk */
#define SLOT (1u << 17) /* real bytes per message slot */
#define NMSG 24
#define US 1000ull
#define MS 1000000ull

static uint32_t len_of(unsigned i)
{
	static const uint32_t l[] = {4097, 8192, 12289, 65536, 100003, SLOT, 40961, 5000};
	return l[i % 8];
}

struct st {
	unsigned done[2]; /* completions with status 0: [side] */
	unsigned bad;
};

static void on_cqe(struct rig *r, int side, const struct sdr_cqe *e, void *arg)
{
	struct st *s = arg;

	(void)r;
	if (e->status) {
		s->bad++;
		fprintf(stderr, "side %d: wr_id %llu status %d\n", side,
			(unsigned long long)e->wr_id, e->status);
		return;
	}
	/* wr_id: message * W + channel; the length is the channel's share */
	if (side == RIG_B && e->length != sdr_stripe_owned(len_of((unsigned)(e->wr_id / W)), W,
							   (uint32_t)(e->wr_id % W), S)) {
		s->bad++;
		fprintf(stderr, "recv %llu: length %u\n", (unsigned long long)e->wr_id, e->length);
	}
	s->done[side]++;
}

static int all_done(struct rig *r, void *arg)
{
	struct st *s = arg;

	(void)r;
	return s->bad || (s->done[RIG_A] == NMSG * W && s->done[RIG_B] == NMSG * W);
}

static void run(uint8_t rel, uint8_t code, uint8_t k, uint8_t m)
{
	struct rig_opts o = {.args = "--mtu 1024 --chunk-pkts 4 --max-msg 131072 --port-rate 10g",
			     .mem_bytes = (size_t)NMSG * SLOT,
			     .seed = t_rnd()};
	struct sdr_qp_attr_abi a = {.reliability = rel, .ec_code = code, .ec_k = k, .ec_m = m};
	uint32_t q[W];
	struct st s = {{0, 0}, 0};
	struct rig *r;

	o.attr = a;
	r = rig_new(&o);
	for (int d = 0; d < 2; d++) {
		r->link[d].delay_ns = 50 * US;
		r->link[d].jitter_ns = 150 * US;
		r->link[d].loss_data = 0.02;
		r->link[d].loss_ctrl = 0.02;
		r->link[d].dup = 0.01;
	}
	for (unsigned c = 0; c < W; c++) {
		struct sdr_stripe st = {W, c, S};
		q[c] = rig_add_pair_stripe(r, &a, &st);
	}
	r->on_cqe = on_cqe;
	r->on_cqe_arg = &s;
	memset(r->s[RIG_B].mem, 0xEE, r->s[RIG_B].mem_len);
	for (unsigned i = 0; i < NMSG; i++) {
		uint64_t off = (uint64_t)i * SLOT;

		rig_pattern(r->s[RIG_A].mem + off, len_of(i), 100 + i);
		for (unsigned c = 0; c < W; c++) {
			rig_recv_on(r, RIG_B, q[c], off, (uint32_t)sdr_stripe_owned(SLOT, W, c, S),
				    (uint64_t)i * W + c);
			rig_send_on(r, RIG_A, q[c], off,
				    (uint32_t)sdr_stripe_owned(len_of(i), W, c, S), i + 1,
				    (uint64_t)i * W + c);
		}
	}
	CHECK(rig_run_until(r, all_done, &s, 20000 * MS) == 0, " all completions in time");
	rig_run_for(r, 5 * MS);
	CHECK_EQ(s.bad, 0);
	CHECK_EQ(s.done[RIG_A], NMSG * W);
	CHECK_EQ(s.done[RIG_B], NMSG * W);
	for (unsigned i = 0; i < NMSG; i++) {
		const uint8_t *p = r->s[RIG_B].mem + (uint64_t)i * SLOT;
		size_t past = 0;

		CHECK(rig_pattern_diff(p, len_of(i), 100 + i) == 0, " message %u: %zu bytes differ",
		      i, rig_pattern_diff(p, len_of(i), 100 + i));
		for (size_t b = len_of(i); b < SLOT; b++)
			past += p[b] != 0xEE;
		CHECK(past == 0, " message %u: %zu bytes written past its end", i, past);
	}
	for (unsigned c = 0; c < W; c++) {
		const struct sdr_qp *tx = atomic_load(&r->s[RIG_A].in->qps[q[c]]);
		const struct sdr_qp *rx = atomic_load(&r->s[RIG_B].in->qps[q[c]]);
		uint64_t first = 0;

		for (unsigned i = 0; i < NMSG; i++) {
			uint64_t n = (sdr_stripe_owned(len_of(i), W, c, S) + 1023) / 1024;
			first += n < 8 ? 8 : n; /* (every message has an immediate) */
		}
		CHECK(tx->st.tx_pkts == first + SDR_QP_CTR(tx, sr, retx_pkts),
		      " channel %u: data packets %llu != first pass %llu + retransmitted %llu", c,
		      (unsigned long long)tx->st.tx_pkts, (unsigned long long)first,
		      (unsigned long long)SDR_QP_CTR(tx, sr, retx_pkts));
		CHECK_EQ(tx->st.msgs_sent, NMSG);
		CHECK_EQ(rx->st.msgs_recv, NMSG);
	}
	CHECK(r->ws[RIG_A].lost[RIG_K_DATA] > 0, " the link lost data");
	CHECK_EQ(rig_check_invariants(r), 0);
	rig_dump(r, t_failures ? stderr : stdout);
	rig_free(r);
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_chan sr|ec_rs|auto\n");
		return 2;
	}
	t_seed(argv[1], 0xC4A9);
	if (!strcmp(argv[1], "sr"))
		run(SDR_REL_SR, 0, 0, 0);
	else if (!strcmp(argv[1], "ec_rs"))
		run(SDR_REL_EC, SDR_EC_RS, 4, 2);
	else if (!strcmp(argv[1], "auto"))
		run(SDR_REL_AUTO, 0, 0, 0);
	else
		return 2;
	return t_finish(argv[1]);
}
