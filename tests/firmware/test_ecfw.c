/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of the erasure-coding building blocks of the firmware:
 * firmware/ec/sdr_ecfw.h (submessage geometry, FTO arithmetic, parity pool)
 * and the two EC entry points of the message table (sdr_rq_set_msg(),
 * sdr_rq_fill_chunk()). Random cases are reproducible (SDR_TEST_SEED).
 */
#include <stdlib.h>
#include <string.h>

#include "sdr_ecfw.h"
#include "sdr_msgtab.h"
#include "sdr_scheme.h"
#include "sdr_test.h"

static void test_geom_example(void)
{
	struct sdr_ecfw_geom g;

	/* the worked example of docs/reliability.md: 300000 B, MTU 4096,
	 * 4-packet chunks (16 KiB), RS(8,2) */
	CHECK_EQ(sdr_ecfw_geom_init(&g, 300000, 4096, 4, 8, 2), 0);
	CHECK_EQ(g.cbytes, 16384);
	CHECK_EQ(g.nchunks, 19); /* 18 full + 5088 B */
	CHECK_EQ(g.nsub, 3);     /* 8 + 8 + 3 (5 zero chunks) */
	CHECK_EQ(sdr_ecfw_chunk_len(&g, 18), 300000 - 18 * 16384);
	CHECK_EQ(sdr_ecfw_sub_nreal(&g, 2), 3);
	CHECK_EQ(sdr_ecfw_sub_clen(&g, 0), 16384);
	CHECK_EQ(sdr_ecfw_sub_clen(&g, 2), 16384); /* chunk 16 is full; 18 is padded */
	CHECK_EQ(sdr_ecfw_par_npkt(&g, 2), 4);
	/* parity 2 + 2 + ceil(3 x 2 / 8) = 5 chunks of 4 packets: 20 */
	CHECK_EQ(sdr_ec_sub_parity(SDR_EC_RS, g.k, g.m, sdr_ecfw_sub_nreal(&g, 2)), 1);
	CHECK_EQ(sdr_ec_msg_parity(SDR_EC_RS, g.k, g.m, g.nchunks) * sdr_ecfw_par_npkt(&g, 2), 20);
	/* a message of one short chunk: parity as long as the data */
	CHECK_EQ(sdr_ecfw_geom_init(&g, 5000, 4096, 16, 32, 8), 0);
	CHECK_EQ(g.nchunks, 1);
	CHECK_EQ(g.nsub, 1);
	CHECK_EQ(sdr_ecfw_sub_clen(&g, 0), 5000);
	CHECK_EQ(sdr_ecfw_par_npkt(&g, 0), 2);
	CHECK_EQ(sdr_ecfw_par_pkt_len(&g, 0, 0), 4096);
	CHECK_EQ(sdr_ecfw_par_pkt_len(&g, 0, 1), 904);
	/* invalid arguments */
	CHECK_EQ(sdr_ecfw_geom_init(&g, 0, 4096, 16, 32, 8), -EINVAL);
	CHECK_EQ(sdr_ecfw_geom_init(&g, 1, 4096, 16, 0, 8), -EINVAL);
	CHECK_EQ(sdr_ecfw_geom_init(&g, 1, 4096, 16, 32, 0), -EINVAL);
	CHECK_EQ(sdr_ecfw_geom_init(&g, 1, 0, 16, 32, 8), -EINVAL);
}

static void test_geom_random(void)
{
	static const uint32_t mtus[] = {1024, 2048, 4096};

	for (int it = 0; it < 20000; it++) {
		struct sdr_ecfw_geom g;
		uint32_t mtu = mtus[t_below(3)], ppc = (uint32_t)t_range(1, 32);
		uint32_t k = (uint32_t)t_range(1, 64), m = (uint32_t)t_range(1, 32);
		uint32_t len = (uint32_t)t_range(1, it % 4 ? 1u << 20 : 64u << 20);
		uint64_t sum = 0;

		CHECK_OR_BREAK(sdr_ecfw_geom_init(&g, len, mtu, ppc, k, m) == 0);
		CHECK_OR_BREAK((uint64_t)g.nchunks * g.cbytes >= len);
		CHECK_OR_BREAK((uint64_t)(g.nchunks - 1) * g.cbytes < len);
		CHECK_OR_BREAK((uint64_t)g.nsub * k >= g.nchunks && (g.nsub - 1) * k < g.nchunks);
		for (uint32_t s = 0; s < g.nsub; s++) {
			uint32_t clen = sdr_ecfw_sub_clen(&g, s), nreal = sdr_ecfw_sub_nreal(&g, s);
			uint32_t npkt = sdr_ecfw_par_npkt(&g, s), psum = 0;

			CHECK_OR_BREAK(nreal >= 1 && nreal <= k);
			CHECK_OR_BREAK(clen >= 1 && clen <= g.cbytes);
			/* every chunk of the submessage fits the coded length, and
			 * only the last submessage may be coded short */
			for (uint32_t i = 0; i < nreal; i++) {
				uint32_t l = sdr_ecfw_chunk_len(&g, s * k + i);
				CHECK_OR_BREAK(l <= clen);
				sum += l;
			}
			CHECK_OR_BREAK(s + 1 == g.nsub || clen == g.cbytes);
			CHECK_OR_BREAK(npkt >= 1 && (uint64_t)npkt * mtu >= clen &&
				       (uint64_t)(npkt - 1) * mtu < clen);
			for (uint32_t p = 0; p < npkt; p++) {
				uint32_t pl = sdr_ecfw_par_pkt_len(&g, s, p);
				CHECK_OR_BREAK(pl >= 1 && pl <= mtu &&
					       (p + 1 == npkt || pl == mtu));
				psum += pl;
			}
			CHECK_OR_BREAK(psum == clen);
			/* the parity header's fields fit the wire (16-bit counts) */
			CHECK_OR_BREAK(npkt <= 0xFFFF && s <= 0xFFFF);
		}
		CHECK_OR_BREAK(sum == len);
		BAIL_IF_MANY();
	}
}

static void test_fto(void)
{
	/* 64 chunks with RS(32,8): 64 + 16 chunk times + beta RTT */
	CHECK_EQ(sdr_ecfw_fto(64, sdr_ec_msg_parity(SDR_EC_RS, 32, 8, 64), 1000, 25000, 1000),
		 80 * 1000 + 25000);
	CHECK_EQ(sdr_ecfw_fto(64, 16, 1000, 25000, 500), 80 * 1000 + 12500);
	/* 1 chunk of RS(32,8) still brings a parity chunk time */
	CHECK_EQ(sdr_ecfw_fto(1, sdr_ec_msg_parity(SDR_EC_RS, 32, 8, 1), 7, 0, 1000), 2 * 7);
	CHECK_EQ(sdr_ecfw_fto(33, sdr_ec_msg_parity(SDR_EC_RS, 32, 8, 33), 1, 0, 1000), 33 + 9);
	/* XOR(4,4): as many parity as data */
	CHECK_EQ(sdr_ecfw_fto(10, sdr_ec_msg_parity(SDR_EC_XOR, 4, 4, 10), 3, 100, 2000),
		 20 * 3 + 200);
	/* no parity: retransmissions */
	CHECK_EQ(sdr_ecfw_fto(5, 0, 10, 50, 1000), 50 + 50);
	/* saturates, never wraps */
	CHECK(sdr_ecfw_fto(UINT32_MAX, 32ull * UINT32_MAX, UINT64_MAX / 2, UINT64_MAX, 16000) ==
	      UINT64_MAX / 4);
	/* T_INJ: bytes at a rate, in cycles */
	CHECK_EQ(sdr_ecfw_t_inj(4174, 125000000, 1000000000), 33392); /* 1 Gbit/s, 1 GHz */
	CHECK_EQ(sdr_ecfw_t_inj(4174, 0, 1000000000), 0);
	/* random: monotonic in every argument */
	for (int it = 0; it < 10000; it++) {
		uint32_t n = (uint32_t)t_range(1, 1u << 18), p = (uint32_t)t_below(1u << 18);
		uint32_t b = (uint32_t)t_range(0, 16000);
		uint64_t t = t_below(1u << 24), r = t_below(1ull << 36);
		uint64_t f = sdr_ecfw_fto(n, p, t, r, b);
		CHECK_OR_BREAK(f >= sdr_ecfw_fto(n - 1, p, t, r, b));
		CHECK_OR_BREAK(p == 0 || f >= sdr_ecfw_fto(n, p - 1, t, r, b));
		CHECK_OR_BREAK(f >= (uint64_t)n * t);
		CHECK_OR_BREAK(f == ((uint64_t)n + p) * t + r * b / 1000);
	}
}

/* Parity chunks per submessage and per message (common/sdr_scheme.h): a
 * whole submessage m, a short last one in proportion (Reed-Solomon: the
 * message's total is ceil(M m / k), the SDR-RDMA paper's count) or one per
 * group that holds a chunk (XOR). */
static void test_parity_count(void)
{
	/* 256 KiB in 64 KiB chunks, RS(32,8): 4 chunks, 1 parity chunk (was 8) */
	CHECK_EQ(sdr_ec_sub_parity(SDR_EC_RS, 32, 8, 4), 1);
	CHECK_EQ(sdr_ec_sub_parity(SDR_EC_RS, 32, 8, 32), 8);
	CHECK_EQ(sdr_ec_sub_parity(SDR_EC_RS, 32, 8, 33), 8); /* (at most a whole one) */
	CHECK_EQ(sdr_ec_sub_parity(SDR_EC_RS, 32, 8, 5), 2);
	CHECK_EQ(sdr_ec_sub_parity(SDR_EC_RS, 4, 8, 1), 2);
	CHECK_EQ(sdr_ec_sub_parity(SDR_EC_XOR, 32, 8, 4), 4);
	CHECK_EQ(sdr_ec_sub_parity(SDR_EC_XOR, 32, 8, 12), 8);
	CHECK_EQ(sdr_ec_sub_parity(SDR_EC_RS, 32, 8, 0), 0);
	CHECK_EQ(sdr_ec_sub_parity(SDR_EC_RS, 0, 8, 3), 0);
	CHECK_EQ(sdr_ec_msg_parity(SDR_EC_RS, 32, 8, 40), 10);
	CHECK_EQ(sdr_ec_msg_parity(SDR_EC_XOR, 32, 8, 40), 16);
	CHECK_EQ(sdr_ec_msg_parity(SDR_EC_RS, 32, 8, 64), 16);
	CHECK_EQ(sdr_ec_msg_parity(SDR_EC_RS, 32, 0, 64), 0);
	for (int it = 0; it < 20000; it++) {
		uint32_t k = (uint32_t)t_range(1, 64), m = (uint32_t)t_range(1, 32);
		uint64_t n = t_range(1, 1u << 20);
		uint32_t r = (uint32_t)t_range(1, k);
		uint32_t rs = sdr_ec_sub_parity(SDR_EC_RS, k, m, r);
		uint32_t x = sdr_ec_sub_parity(SDR_EC_XOR, k, m, r);

		CHECK_OR_BREAK(rs >= 1 && rs <= m && (uint64_t)rs * k >= (uint64_t)r * m &&
			       (uint64_t)(rs - 1) * k < (uint64_t)r * m);
		CHECK_OR_BREAK(r == k ? x == m : x == (r < m ? r : m));
		CHECK_OR_BREAK(sdr_ec_msg_parity(SDR_EC_RS, k, m, n) == (n * m + k - 1) / k);
		CHECK_OR_BREAK(m > k || sdr_ec_msg_parity(SDR_EC_XOR, k, m, n) >=
						sdr_ec_msg_parity(SDR_EC_RS, k, m, n));
		/* a message's parity is its submessages' */
		uint64_t sum = 0;
		for (uint64_t c = 0; c < n && c < 200 * (uint64_t)k; c += k)
			sum += sdr_ec_sub_parity(SDR_EC_XOR, k, m,
						 (uint32_t)(n - c < k ? n - c : k));
		if (n <= 200 * (uint64_t)k)
			CHECK_OR_BREAK(sum == sdr_ec_msg_parity(SDR_EC_XOR, k, m, n));
	}
}

static void test_pool(void)
{
	struct sdr_ecfw_pool p;
	struct sdr_ecfw_buf *b[5];

	CHECK(sdr_ecfw_pool_init(&p, 16384, 100, 4) == 0);
	CHECK_EQ(p.nalloc, 0); /* handed out on demand */
	CHECK_EQ(p.bm_words, 2);
	for (int i = 0; i < 4; i++) {
		b[i] = sdr_ecfw_pool_get(&p);
		CHECK(b[i] != NULL);
		if (!b[i])
			return;
		CHECK(((uintptr_t)b[i]->data & 63) == 0);
		CHECK_EQ(b[i]->got, 0);
		CHECK(b[i]->bm[0] == 0 && b[i]->bm[1] == 0);
		memset(b[i]->data, 0xA5, 16384); /* ASan: the data area is that long */
		b[i]->bm[1] = ~0ull;
		b[i]->got = 7;
	}
	CHECK_EQ(p.inuse, 4);
	b[4] = sdr_ecfw_pool_get(&p);
	CHECK(b[4] == NULL); /* bounded */
	sdr_ecfw_pool_put(&p, b[2]);
	CHECK_EQ(p.inuse, 3);
	b[4] = sdr_ecfw_pool_get(&p);
	CHECK(b[4] == b[2]); /* recycled, and cleared */
	CHECK(b[4] && b[4]->got == 0 && b[4]->bm[1] == 0);
	CHECK_EQ(p.nalloc, 4);
	for (int i = 0; i < 4; i++)
		sdr_ecfw_pool_put(&p, b[i]);
	sdr_ecfw_pool_put(&p, NULL);
	CHECK_EQ(p.inuse, 0);
	sdr_ecfw_pool_fini(&p);
	CHECK_EQ(p.nalloc, 0);
}

/* ---- message table: sdr_rq_set_msg(), sdr_rq_fill_chunk() ---- */

#define MTU 1024
#define PPC 4
#define MAXMSG (64 * MTU)

struct rqenv {
	struct sdr_rq rq;
	uint64_t chunk_bm[SDR_MAX_MSGS];
	struct sdr_qseg_slot shared[SDR_MAX_MSGS];
	uint8_t buf[MAXMSG];
};

static int place(struct rqenv *e, uint32_t pkt, uint32_t msg_len, uint32_t imm)
{
	struct sdr_parsed p;
	enum sdr_ctr drop;
	uint32_t slot, npk = (msg_len + MTU - 1) / MTU;
	uint32_t plen = pkt + 1 == npk ? msg_len - pkt * MTU : MTU;
	static uint8_t pay[MTU];

	memset(&p, 0, sizeof(p));
	p.va = (uint64_t)pkt * MTU;
	p.rkey = 7;
	p.dma_len = p.payload_len = plen;
	p.payload = pay;
	p.se = pkt + 1 == npk;
	sdr_parsed_set_imm(&p, sdr_imm_pack(0, pkt, sdr_user_imm_nibble(imm, pkt)));
	return sdr_rq_place(&e->rq, 0, &p, 1, &drop, &slot);
}

static void test_rq_ec(void)
{
	struct rqenv *e = calloc(1, sizeof(*e));
	enum sdr_ctr drop;
	int f;

	if (!e)
		return;
	CHECK_EQ(sdr_rq_init(&e->rq, MTU, MAXMSG, PPC, 1, 7, e->chunk_bm, e->shared), 0);
	CHECK_EQ(sdr_rq_post(&e->rq, e->buf, MAXMSG, 1, 0), 0);
	/* message of 10 packets + 100 B = 3 chunks; packets 0..3 (chunk 0) in */
	for (uint32_t p = 0; p < 4; p++)
		CHECK(place(e, p, 10 * MTU + 100, 0xCAFEF00D) >= 0);
	CHECK_EQ(e->rq.slot[0].chunks_got, 1);
	/* lengths that contradict the data or the buffer are refused */
	CHECK_EQ(sdr_rq_set_msg(&e->rq, 0, 4 * MTU - 1, 0xCAFEF00D, &drop), -1);
	CHECK_EQ(drop, SDR_CTR_bad_len);
	CHECK_EQ(sdr_rq_set_msg(&e->rq, 0, MAXMSG + 1, 0xCAFEF00D, &drop), -1);
	CHECK_EQ(sdr_rq_set_msg(&e->rq, 0, 0, 0xCAFEF00D, &drop), -1);
	/* an immediate that contradicts the nibbles already received */
	CHECK_EQ(sdr_rq_set_msg(&e->rq, 0, 10 * MTU + 100, 0xCAFEF00E, &drop), -1);
	CHECK_EQ(drop, SDR_CTR_imm_mismatch);
	/* fill before the length is known: refused */
	CHECK_EQ(sdr_rq_fill_chunk(&e->rq, 0, 1, 2), -1);
	f = sdr_rq_set_msg(&e->rq, 0, 10 * MTU + 100, 0xCAFEF00D, &drop);
	CHECK_EQ(f, 0);
	CHECK(e->rq.slot[0].last_known && e->rq.slot[0].npkts == 11);
	CHECK_EQ(e->rq.slot[0].imm_mask, 0xFF);
	CHECK_EQ(e->rq.slot[0].imm, 0xCAFEF00D);
	CHECK_EQ(atomic_load(&e->shared[0].imm), 0xCAFEF00D);
	/* the same again is fine; another length is not */
	CHECK_EQ(sdr_rq_set_msg(&e->rq, 0, 10 * MTU + 100, 0xCAFEF00D, &drop), 0);
	CHECK_EQ(sdr_rq_set_msg(&e->rq, 0, 10 * MTU + 101, 0xCAFEF00D, &drop), -1);
	/* decoded chunks: 1, then the short last chunk 2 -> complete */
	CHECK_EQ(sdr_rq_fill_chunk(&e->rq, 0, 3, 2), -1); /* past the message */
	f = sdr_rq_fill_chunk(&e->rq, 0, 1, 2);
	CHECK_EQ(f, SDR_PLACE_CHUNK);
	CHECK_EQ(sdr_rq_fill_chunk(&e->rq, 0, 1, 2), 0); /* again: nothing new */
	CHECK(e->chunk_bm[0] == 0x3);
	f = sdr_rq_fill_chunk(&e->rq, 0, 2, 3);
	CHECK_EQ(f, SDR_PLACE_CHUNK | SDR_PLACE_COMPLETE);
	CHECK_EQ(e->rq.slot[0].pkts_got, 11);
	CHECK_EQ(e->rq.slot[0].max_end, 10 * MTU + 100);
	CHECK_EQ(e->rq.slot[0].state, SDR_RS_DONE);
	CHECK(sdr_rslot_full(&e->rq.slot[0]));
	CHECK_EQ(atomic_load(&e->shared[0].chunks_set), 3);
	/* a data packet of a recovered chunk now is a duplicate (late) */
	CHECK(place(e, 5, 10 * MTU + 100, 0xCAFEF00D) < 0);
	CHECK_EQ(sdr_rq_fill_chunk(&e->rq, 0, 0, 4), -1); /* slot done */
	CHECK_EQ(sdr_rq_set_msg(&e->rq, 0, 10 * MTU + 100, 0xCAFEF00D, &drop), -1);
	CHECK_EQ(drop, SDR_CTR_no_recv);

	/* a short message (3 packets): the parity header completes the
	 * immediate, which the immediate-only packets would have carried */
	CHECK_EQ(sdr_rq_post(&e->rq, e->buf, MAXMSG, 2, 0), 1);
	for (uint32_t p = 0; p < 3; p++) {
		struct sdr_parsed x;
		uint32_t slot;
		static uint8_t pay[MTU];
		memset(&x, 0, sizeof(x));
		x.va = (uint64_t)MAXMSG + p * MTU;
		x.rkey = 7;
		x.dma_len = x.payload_len = MTU;
		x.payload = pay;
		x.se = p == 2;
		sdr_parsed_set_imm(&x, sdr_imm_pack(1, p, 0x5));
		CHECK(sdr_rq_place(&e->rq, 0, &x, 1, &drop, &slot) >= 0);
	}
	CHECK_EQ(e->rq.slot[1].state, SDR_RS_POSTED); /* immediate incomplete */
	f = sdr_rq_set_msg(&e->rq, 1, 3 * MTU, 0x55555555, &drop);
	CHECK_EQ(f, SDR_PLACE_COMPLETE);
	CHECK_EQ(e->rq.slot[1].state, SDR_RS_DONE);
	sdr_rq_fini(&e->rq);
	free(e);
}

int main(void)
{
	t_seed("test_ecfw", 4);
	test_geom_example();
	test_geom_random();
	test_fto();
	test_parity_count();
	test_pool();
	test_rq_ec();
	if (t_failures) {
		fprintf(stderr, "test_ecfw: %d failures\n", t_failures);
		return 1;
	}
	printf("test_ecfw: ok\n");
	return 0;
}
