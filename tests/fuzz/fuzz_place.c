/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz harness for the receive placement path: sdr_parse() followed by
 * sdr_rq_place() (firmware/prim/sdr_msgtab.c), interleaved with sdr_rq_post(),
 * sdr_rq_complete() and sdr_rq_abort_all().
 *
 * The input is a script. Byte 0 picks the table's configuration (MTU 1024,
 * max_msg 16 KiB, packets per chunk 1..16, generations 1/2/4/16, and a
 * stripe map: none, or channel 0 or 1 of 2, or 2 of 3, with stripes of one
 * chunk, as a channel of a multi-channel QP places its packets); then
 * each op is one byte followed by its arguments:
 *   op % 8 in 0..2  synthesised data packet: 5 argument bytes choose the
 *                   target receive, offset, length, SE, generation,
 *                   R_Key/VA/immediate corruption; with op bit 3 set it is
 *                   an opcode 0x2A packet (no immediate). Built with
 *                   sdr_build_data_hdr() + sdr_pkt_finish(), so it passes the
 *                   parser and exercises the table's own checks.
 *   3               raw frame: 2-byte big-endian length + bytes, parsed with
 *                   verify_icrc 0 and 1 alternately, placed if it is data
 *   4               post a receive (2 bytes: length)
 *   5               complete a receive (1 byte: which)
 *   6               post + complete N receives at once (1 byte: N), which
 *                   moves the table across slot wrap and generations
 *   7               abort all (when the next byte is odd); else (even) an
 *                   erasure-coding op on a recent or any receive, 3 more
 *                   bytes: sdr_rq_set_msg() with a fuzzed length and a right
 *                   or corrupt immediate, or sdr_rq_fill_chunk() of a chunk
 *                   (what the decoder does after writing a chunk)
 *
 * Invariants (abort() on violation): posted buffers (own heap blocks, with
 * guard bytes) are never written outside the real bytes of their virtual
 * [0, posted length) (with a stripe map: the channel's stripes of it; else
 * [dst, dst + posted length)) nor after completion; an accepted data packet's payload is what landed; a
 * drop changes nothing; flags agree with a model of post/complete (never
 * COMPLETE twice for one post, never accepted for a free/done slot);
 * -EBUSY / -ENOENT exactly when the model says so; shared counters agree
 * with the bitmaps. The EC ops never write the buffer, change nothing when
 * they fail, and leave the slot consistent when they succeed.
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sdr_bitmap.h"
#include "sdr_fuzz.h"
#include "sdr_msgtab.h"
#include "sdr_wire.h"

#define FUZZ_ASSERT(cond)                                                                        \
	do {                                                                                     \
		if (!(cond)) {                                                                   \
			fprintf(stderr, "fuzz_place: invariant failed at %s:%d: %s\n", __FILE__, \
				__LINE__, #cond);                                                \
			abort();                                                                 \
		}                                                                                \
	} while (0)

#define F_MTU 1024
#define F_MAX_MSG 16384
#define F_NBUF 6
#define F_REAL (3 * F_MAX_MSG) /* the real bytes of F_MAX_MSG virtual ones, W <= 3 */
#define F_GUARD 64
#define F_CANARY 0xC5
#define F_FRESH 0x3C
#define F_QPN_BASE 0x100
#define F_RKEY 0x5EC0DE01u
#define F_RECENT 8

static const struct sdr_l2l3 f_addr = {
	.src_mac = {0x02, 0, 0, 0, 0, 1},
	.dst_mac = {0x02, 0x5D, 0x52, 0, 0, 1},
	.src_ip = 0x0A000001,
	.dst_ip = 0x0A000002,
	.udp_sport = 0xC101,
};

enum { M_FREE = 0, M_POSTED, M_DONE };

struct fbuf {
	uint8_t *base; /* F_GUARD | F_REAL | F_GUARD, its own heap block */
	int slot;      /* model slot using it, or -1 */
};

struct fstate {
	struct sdr_rq rq;
	uint64_t *chunk_bm;
	struct sdr_qseg_slot *shared;
	uint32_t chunk_words;
	struct fbuf buf[F_NBUF];
	uint8_t *sink; /* for bulk post+complete: never written */
	struct {
		uint32_t seq;
		uint8_t state;
		int8_t buf;
	} m[SDR_MAX_MSGS];
	uint32_t recent[F_RECENT];
	uint32_t nrecent;
	int verify;
	uint64_t tsc;
	const uint8_t *in;
	size_t left;
};

static uint8_t get8(struct fstate *s)
{
	if (s->left == 0)
		return 0;
	s->left--;
	return *s->in++;
}

static uint8_t *dst_of(const struct fbuf *b)
{
	return b->base + F_GUARD;
}

static uint8_t f_canary_ref[F_GUARD], f_fresh_ref[F_REAL];

static int guards_ok(const struct fbuf *b)
{
	return memcmp(b->base, f_canary_ref, F_GUARD) == 0 &&
	       memcmp(b->base + F_GUARD + F_REAL, f_canary_ref, F_GUARD) == 0;
}

/* Is real byte @p r of a buffer one of the virtual [0, @p len) under @p m? */
static int owned_real(const struct sdr_stripe *m, uint32_t r, uint32_t len)
{
	uint32_t k;

	if (m->w <= 1)
		return r < len;
	k = r / m->s;
	return k % m->w == m->c && (k / m->w) * m->s + r % m->s < len;
}

static void buf_check(const struct sdr_stripe *m, const struct fbuf *b, uint32_t posted_len)
{
	const uint8_t *d = dst_of(b);

	FUZZ_ASSERT(guards_ok(b));
	/* outside the posted length (its real bytes): nobody may write */
	if (m->w <= 1) {
		FUZZ_ASSERT(memcmp(d + posted_len, f_fresh_ref, F_REAL - posted_len) == 0);
		return;
	}
	for (uint32_t k = 0; k < F_REAL / m->s; k++) { /* stripe by stripe */
		uint32_t v0 = (k / m->w) * m->s, own = 0;

		if (k % m->w == m->c && posted_len > v0)
			own = posted_len - v0 < m->s ? posted_len - v0 : m->s;
		FUZZ_ASSERT(own == 0 || owned_real(m, k * m->s + own - 1, posted_len));
		FUZZ_ASSERT(memcmp(d + k * m->s + own, f_fresh_ref, m->s - own) == 0);
	}
}

static void buf_reset(struct fbuf *b)
{
	memset(b->base, F_CANARY, F_GUARD);
	memset(b->base + F_GUARD, F_FRESH, F_REAL);
	memset(b->base + F_GUARD + F_REAL, F_CANARY, F_GUARD);
	b->slot = -1;
}

/* The model says slot @p idx is finished: check and free its buffer. */
static void release(struct fstate *s, uint32_t idx)
{
	int bi = s->m[idx].buf;

	s->m[idx].state = M_DONE;
	s->m[idx].buf = -1;
	if (bi < 0)
		return;
	FUZZ_ASSERT(s->buf[bi].slot == (int)idx);
	buf_check(&s->rq.stripe, &s->buf[bi], s->rq.slot[idx].len);
	buf_reset(&s->buf[bi]);
}

static void check_slot(struct fstate *s, uint32_t idx)
{
	const struct sdr_rslot *sl = &s->rq.slot[idx];
	const uint64_t *cbm = s->chunk_bm + (size_t)idx * s->chunk_words;
	const uint64_t *pbm = s->rq.pkt_bm + (size_t)idx * s->rq.pkt_words;
	uint32_t nchunks = (F_MAX_MSG / F_MTU + s->rq.ppc - 1) / s->rq.ppc;

	if (s->m[idx].state == M_FREE) {
		FUZZ_ASSERT(sl->state == SDR_RS_FREE);
		return;
	}
	FUZZ_ASSERT(sl->seq == s->m[idx].seq);
	FUZZ_ASSERT(sl->state == (s->m[idx].state == M_POSTED ? SDR_RS_POSTED : SDR_RS_DONE));
	FUZZ_ASSERT(atomic_load(&s->shared[idx].seq) == sl->seq);
	FUZZ_ASSERT(atomic_load(&s->shared[idx].chunks_set) == sl->chunks_got);
	FUZZ_ASSERT(sdr_bitmap_count(cbm, nchunks) == sl->chunks_got);
	FUZZ_ASSERT(atomic_load(&s->shared[idx].imm_mask) == sl->imm_mask);
	FUZZ_ASSERT(atomic_load(&s->shared[idx].imm) == sl->imm);
	FUZZ_ASSERT(sdr_bitmap_count(pbm, sl->posted_pkts) == sl->pkts_got);
	FUZZ_ASSERT(sl->pkts_got <= sl->posted_pkts && sl->max_end <= sl->len);
	if (sl->last_known) {
		FUZZ_ASSERT(sl->npkts >= 1 && sl->npkts <= sl->posted_pkts);
		FUZZ_ASSERT(sl->msg_len <= sl->len && sl->msg_len > (sl->npkts - 1) * F_MTU);
		FUZZ_ASSERT(sl->max_end <= sl->msg_len && sl->pkts_got <= sl->npkts);
	}
	/* every set chunk bit: all of its packets are in */
	for (uint32_t c = 0; c < nchunks; c++) {
		uint32_t first = c * s->rq.ppc, n = s->rq.ppc, end;

		if (!sdr_bit_test(cbm, c))
			continue;
		end = sl->last_known ? sl->npkts : sl->posted_pkts;
		FUZZ_ASSERT(first < end);
		if (first + n > end)
			n = end - first;
		FUZZ_ASSERT(sdr_bitmap_range_full(pbm, first, n));
	}
}

struct snap {
	struct sdr_rslot sl;
	uint64_t pkt[1], chunk[1];
	uint32_t sh[4];
};

static void snap(const struct fstate *s, uint32_t idx, struct snap *n)
{
	memcpy(&n->sl, &s->rq.slot[idx], sizeof(n->sl));
	n->pkt[0] = s->rq.pkt_bm[(size_t)idx * s->rq.pkt_words];
	n->chunk[0] = s->chunk_bm[(size_t)idx * s->chunk_words];
	n->sh[0] = atomic_load(&s->shared[idx].seq);
	n->sh[1] = atomic_load(&s->shared[idx].chunks_set);
	n->sh[2] = atomic_load(&s->shared[idx].imm_mask);
	n->sh[3] = atomic_load(&s->shared[idx].imm);
}

static int is_rx_drop(enum sdr_ctr c)
{
	switch (c) {
	case SDR_CTR_stale_gen:
	case SDR_CTR_stale_seq:
	case SDR_CTR_early_seq:
	case SDR_CTR_no_recv:
	case SDR_CTR_late_pkt:
	case SDR_CTR_bad_rkey:
	case SDR_CTR_bad_va:
	case SDR_CTR_bad_len:
	case SDR_CTR_imm_mismatch:
	case SDR_CTR_dup_pkt:
	case SDR_CTR_dup_imm:
	case SDR_CTR_bad_dma_len: return 1;
	default: return 0;
	}
}

static void place(struct fstate *s, const struct sdr_parsed *parsed)
{
	struct sdr_parsed q = *parsed, *p = &q;
	uint32_t gen = p->dest_qpn - F_QPN_BASE, idx, slot = UINT32_MAX, off;
	enum sdr_ctr drop = SDR_CTR__MAX;
	struct snap before, after;
	int bi, rc;
	static uint8_t copy[F_REAL];

	if (gen >= s->rq.gens)
		return; /* the firmware counts this as unknown_qp before the table */
	/* rx.c places a 0x2A packet by its VA first (bad_va when it cannot) */
	if (sdr_data_locate(p, F_MTU, F_MAX_MSG)) {
		FUZZ_ASSERT(p->opcode == SDR_OP_UC_WRITE_ONLY &&
			    (p->va % F_MTU || p->va / F_MAX_MSG >= SDR_MAX_MSGS));
		return;
	}
	idx = p->msg_id;
	off = p->pkt_off;
	FUZZ_ASSERT(idx < SDR_MAX_MSGS && off < SDR_MAX_PKTS);
	bi = s->m[idx].buf;
	snap(s, idx, &before);
	if (bi >= 0)
		memcpy(copy, dst_of(&s->buf[bi]), F_REAL);
	rc = sdr_rq_place(&s->rq, gen, p, ++s->tsc, &drop, &slot);
	if (rc < 0) {
		FUZZ_ASSERT(rc == -1 && is_rx_drop(drop));
		snap(s, idx, &after);
		FUZZ_ASSERT(memcmp(&before, &after, sizeof(before)) == 0);
		if (bi >= 0)
			FUZZ_ASSERT(memcmp(copy, dst_of(&s->buf[bi]), F_REAL) == 0);
		if (s->m[idx].state == M_FREE)
			FUZZ_ASSERT(drop == SDR_CTR_no_recv);
		/* a repeated nibble is dropped only when the slot already held it */
		if (drop == SDR_CTR_dup_imm)
			FUZZ_ASSERT(p->dma_len == 0 && !p->imm_zero &&
				    (before.sl.imm_mask & (1u << (off % SDR_IMM_NIBBLES))));
		/* a 0x2A packet never carries an immediate-only nibble */
		if (p->imm_zero && p->dma_len == 0)
			FUZZ_ASSERT(drop != SDR_CTR__MAX);
		check_slot(s, idx);
		return;
	}
	FUZZ_ASSERT((rc & ~(SDR_PLACE_DATA | SDR_PLACE_CHUNK | SDR_PLACE_COMPLETE |
			    SDR_PLACE_IMM)) == 0);
	/* accepted only for a posted, not yet completed receive of its generation */
	FUZZ_ASSERT(s->m[idx].state == M_POSTED);
	FUZZ_ASSERT(sdr_seq_gen(s->m[idx].seq, s->rq.gens) == gen);
	FUZZ_ASSERT(p->rkey == F_RKEY);
	FUZZ_ASSERT(!!(rc & SDR_PLACE_DATA) != !!(rc & SDR_PLACE_IMM));
	if (rc & SDR_PLACE_DATA) {
		uint32_t start = off * F_MTU;

		FUZZ_ASSERT(p->dma_len > 0 && p->dma_len <= F_MTU);
		FUZZ_ASSERT(start + p->dma_len <= s->rq.slot[idx].len);
		FUZZ_ASSERT(sdr_bit_test(s->rq.pkt_bm + (size_t)idx * s->rq.pkt_words, off));
		FUZZ_ASSERT(!sdr_bit_test(&before.pkt[0], off) || off >= 64);
		if (bi >= 0) {
			uint8_t *d = dst_of(&s->buf[bi]);
			/* where the stripe map puts it: the packet lies in one stripe */
			uint32_t rs = (uint32_t)sdr_stripe_real(&s->rq.stripe, start);

			FUZZ_ASSERT(s->rq.stripe.w <= 1 ||
				    sdr_stripe_real(&s->rq.stripe, start + p->dma_len - 1) ==
					    rs + p->dma_len - 1);
			FUZZ_ASSERT(rs + p->dma_len <= F_REAL);
			FUZZ_ASSERT(memcmp(d + rs, p->payload, p->dma_len) == 0);
			/* nothing else changed */
			FUZZ_ASSERT(memcmp(d, copy, rs) == 0);
			FUZZ_ASSERT(memcmp(d + rs + p->dma_len, copy + rs + p->dma_len,
					   F_REAL - rs - p->dma_len) == 0);
		}
		/* a 0x2A packet: the immediate is 0, all of it (accepted only
		 * when no non-zero nibble came before) */
		if (p->imm_zero)
			FUZZ_ASSERT(before.sl.imm == 0 && s->rq.slot[idx].imm == 0 &&
				    s->rq.slot[idx].imm_mask == 0xFF);
	} else {
		FUZZ_ASSERT(p->dma_len == 0 && off < SDR_IMM_NIBBLES && !(rc & SDR_PLACE_CHUNK));
		/* accepted only when it brings a nibble the slot did not hold */
		FUZZ_ASSERT(!(before.sl.imm_mask & (1u << off)) &&
			    (s->rq.slot[idx].imm_mask & (1u << off)));
	}
	if (rc & SDR_PLACE_CHUNK)
		FUZZ_ASSERT(s->rq.slot[idx].chunks_got > before.sl.chunks_got);
	else
		FUZZ_ASSERT(s->rq.slot[idx].chunks_got == before.sl.chunks_got);
	if (rc & SDR_PLACE_COMPLETE) {
		const struct sdr_rslot *sl = &s->rq.slot[idx];

		FUZZ_ASSERT(slot == idx && sl->state == SDR_RS_DONE && sdr_rslot_full(sl));
		FUZZ_ASSERT(sl->imm_mask == 0xFF && sl->msg_len <= sl->len && sl->msg_len > 0);
		FUZZ_ASSERT(sl->chunks_got == (sl->npkts + s->rq.ppc - 1) / s->rq.ppc);
		FUZZ_ASSERT(sl->pkts_got == sl->npkts);
		release(s, idx); /* a second COMPLETE would now fail the POSTED check */
	} else {
		FUZZ_ASSERT(s->rq.slot[idx].state == SDR_RS_POSTED);
		FUZZ_ASSERT(!sdr_rslot_full(&s->rq.slot[idx]));
	}
	check_slot(s, idx);
}

static void op_synth(struct fstate *s, int no_imm)
{
	uint8_t a = get8(s), b = get8(s), c = get8(s), d = get8(s), e = get8(s);
	static uint8_t frame[SDR_DATA_HDR_LEN + F_MTU + 64];
	uint32_t seq, idx, off, len;
	struct sdr_data_hdr h;
	struct sdr_parsed p;
	size_t n;

	/* target: a recent post (usually) or any slot number */
	if ((a & 0x08) || s->nrecent == 0)
		seq = ((uint32_t)a << 8 | b) & 0x3FFF;
	else
		seq = s->recent[(s->nrecent - 1 - (a & 7) % s->nrecent) % F_RECENT];
	idx = sdr_seq_msg_id(seq);
	off = (b & 0x80) && (a & 0x08) ? (uint32_t)b << 10 : b & 0x1F;
	switch (c & 3) {
	case 0: len = 0; break;
	case 1: len = F_MTU; break;
	case 2: /* the last packet of a message */
		len = 1 + (uint32_t)((c >> 2) | (e << 6)) % F_MTU;
		break;
	default: len = (uint32_t)(c >> 2) * 17 % (F_MTU + 9); break;
	}
	h.dest_qpn = F_QPN_BASE +
		     ((d & 0x06) ? (uint32_t)(d >> 4) % s->rq.gens : sdr_seq_gen(seq, s->rq.gens));
	/* the message's PSN, or (rarely) one of another use of the slot */
	h.psn = sdr_seq_psn(seq) + ((d & 0x06) == 0x06 && (e & 0x40) ? 4 : 0);
	h.va = (uint64_t)idx * F_MAX_MSG + (uint64_t)off * F_MTU;
	if (d & 0x08)
		h.va += (uint64_t)(e % 3) * F_MTU + (e & 0x80 ? F_MAX_MSG : 1);
	h.rkey = (d & 0x10) && (e & 1) ? F_RKEY ^ e : F_RKEY;
	h.dma_len = len;
	/* the nibble: from a per-seq user immediate, or a corrupt one */
	{
		uint32_t user_imm = seq * 0x9E3779B1u;
		uint32_t nib = sdr_user_imm_nibble(user_imm, off);

		if ((d & 0x20) && (e & 2))
			nib ^= 1u + (e >> 4) % 15;
		h.imm = sdr_imm_pack(idx, off, nib);
	}
	h.se = (d & 1) != 0;
	h.no_imm = (uint8_t)no_imm;
	n = sdr_build_data_hdr(frame, &f_addr, &h);
	FUZZ_ASSERT(n <= sizeof(frame));
	for (uint32_t i = 0; i < len; i++)
		frame[sdr_data_hdr_len(&h) + i] = (uint8_t)(seq * 7 + off * 131 + i);
	sdr_pkt_finish(frame, n, s->verify);
	/* our own builder's frames always parse, ICRC verified or not */
	FUZZ_ASSERT(sdr_parse(frame, n, s->verify, &p) == SDR_PARSE_OK_DATA);
	FUZZ_ASSERT(p.dma_len == len && p.payload_len == len && p.imm == (no_imm ? 0 : h.imm) &&
		    p.imm_zero == no_imm);
	s->verify ^= 1;
	place(s, &p);
}

static void op_raw(struct fstate *s)
{
	size_t len = (size_t)get8(s) << 8;
	uint8_t *f;
	struct sdr_parsed p;

	len |= get8(s);
	if (len > s->left)
		len = s->left;
	/* exact-size copy: a parser over-read is an ASan report */
	f = malloc(len ? len : 1);
	if (f == NULL)
		return;
	memcpy(f, s->in, len);
	s->in += len;
	s->left -= len;
	if (sdr_parse(f, len, s->verify, &p) == SDR_PARSE_OK_DATA) {
		FUZZ_ASSERT(p.payload >= f && p.payload + p.payload_len <= f + len);
		place(s, &p);
	}
	s->verify ^= 1;
	free(f);
}

static void note_recent(struct fstate *s, uint32_t seq)
{
	s->recent[s->nrecent % F_RECENT] = seq;
	s->nrecent++;
}

static void op_post(struct fstate *s)
{
	uint32_t v = (uint32_t)get8(s) << 8 | get8(s);
	uint32_t len = 1 + v % F_MAX_MSG, seq = s->rq.next_seq, idx = sdr_seq_msg_id(seq);
	int bi = -1;
	int64_t r;

	for (int i = 0; i < F_NBUF; i++)
		if (s->buf[i].slot < 0) {
			bi = i;
			break;
		}
	if (bi < 0)
		return;
	r = sdr_rq_post(&s->rq, dst_of(&s->buf[bi]), len, seq, 0);
	if (s->m[idx].state == M_POSTED) {
		FUZZ_ASSERT(r == -EBUSY && s->rq.next_seq == seq);
		return;
	}
	FUZZ_ASSERT(r == seq && s->rq.next_seq == seq + 1);
	s->m[idx].seq = seq;
	s->m[idx].state = M_POSTED;
	s->m[idx].buf = (int8_t)bi;
	s->buf[bi].slot = (int)idx;
	note_recent(s, seq);
	check_slot(s, idx);
}

static void op_complete(struct fstate *s)
{
	uint8_t a = get8(s);
	uint32_t seq, idx;
	int r, want;

	if ((a & 0x80) || s->nrecent == 0)
		seq = s->rq.next_seq - 1 - (uint32_t)(a & 0x7F) * 9;
	else
		seq = s->recent[(s->nrecent - 1 - a % s->nrecent) % F_RECENT];
	idx = sdr_seq_msg_id(seq);
	want = s->m[idx].state == M_POSTED && s->m[idx].seq == seq;
	r = sdr_rq_complete(&s->rq, seq);
	if (!want) {
		FUZZ_ASSERT(r == -ENOENT);
		return;
	}
	FUZZ_ASSERT(r == (int)idx && s->rq.slot[idx].state == SDR_RS_DONE);
	release(s, idx);
	check_slot(s, idx);
}

static void op_bulk(struct fstate *s)
{
	uint32_t n = 1 + (uint32_t)get8(s) * 4;

	for (uint32_t i = 0; i < n; i++) {
		uint32_t seq = s->rq.next_seq, idx = sdr_seq_msg_id(seq);
		int64_t r = sdr_rq_post(&s->rq, s->sink, 1, seq, 0);

		if (s->m[idx].state == M_POSTED) {
			FUZZ_ASSERT(r == -EBUSY);
			return;
		}
		FUZZ_ASSERT(r == seq);
		FUZZ_ASSERT(sdr_rq_complete(&s->rq, seq) == (int)idx);
		s->m[idx].seq = seq;
		s->m[idx].state = M_DONE;
		s->m[idx].buf = -1;
	}
}

static int abort_count;

static void on_abort(void *arg, struct sdr_rslot *sl)
{
	struct fstate *s = arg;
	uint32_t idx = sdr_seq_msg_id(sl->seq);

	FUZZ_ASSERT(sl == &s->rq.slot[idx] && sl->state == SDR_RS_DONE);
	FUZZ_ASSERT(s->m[idx].state == M_POSTED && s->m[idx].seq == sl->seq);
	release(s, idx);
	abort_count++;
}

static void op_ec(struct fstate *s, uint8_t b)
{
	uint8_t a = get8(s), c = get8(s), d = get8(s);
	uint32_t seq, idx;
	struct snap before, after;
	enum sdr_ctr drop = SDR_CTR__MAX;
	int bi, rc;
	static uint8_t copy[F_REAL];

	if ((d & 0x80) || s->nrecent == 0)
		seq = s->rq.next_seq - 1 - (uint32_t)(d & 0x7F) * 3;
	else
		seq = s->recent[(s->nrecent - 1 - d % s->nrecent) % F_RECENT];
	idx = sdr_seq_msg_id(seq);
	bi = s->m[idx].buf;
	snap(s, idx, &before);
	if (bi >= 0)
		memcpy(copy, dst_of(&s->buf[bi]), F_REAL);
	if (b & 2) {
		uint32_t len = ((uint32_t)a << 8 | c) % (F_MAX_MSG + 2);
		uint32_t imm = s->m[idx].seq * 0x9E3779B1u; /* the synthesised packets' */

		if (d & 0x40)
			imm ^= 1u << (c % 32);
		rc = sdr_rq_set_msg(&s->rq, idx, len, imm, &drop);
		if (rc >= 0) {
			const struct sdr_rslot *sl = &s->rq.slot[idx];
			FUZZ_ASSERT(s->m[idx].state == M_POSTED);
			FUZZ_ASSERT(len >= 1 && len <= sl->len && sl->last_known &&
				    sl->msg_len == len);
			FUZZ_ASSERT(sl->npkts == (len + F_MTU - 1) / F_MTU &&
				    sl->imm_mask == 0xFF && sl->imm == imm);
		} else {
			FUZZ_ASSERT(drop == SDR_CTR_bad_len || drop == SDR_CTR_imm_mismatch ||
				    drop == SDR_CTR_no_recv);
			if (s->m[idx].state != M_POSTED)
				FUZZ_ASSERT(drop == SDR_CTR_no_recv);
		}
	} else {
		uint32_t chunk = a % 20;

		rc = sdr_rq_fill_chunk(&s->rq, idx, chunk, ++s->tsc);
		if (rc >= 0) {
			const struct sdr_rslot *sl = &s->rq.slot[idx];
			FUZZ_ASSERT(s->m[idx].state == M_POSTED && before.sl.last_known);
			FUZZ_ASSERT(chunk * s->rq.ppc < sl->npkts);
			FUZZ_ASSERT(
				sdr_bit_test(s->chunk_bm + (size_t)idx * s->chunk_words, chunk));
			FUZZ_ASSERT(!!(rc & SDR_PLACE_CHUNK) ==
				    (sl->chunks_got == before.sl.chunks_got + 1));
		}
	}
	/* the table never writes the buffer here (the decoder did, before) */
	if (bi >= 0)
		FUZZ_ASSERT(memcmp(copy, dst_of(&s->buf[bi]), F_REAL) == 0);
	if (rc < 0) {
		FUZZ_ASSERT(rc == -1);
		snap(s, idx, &after);
		FUZZ_ASSERT(memcmp(&before, &after, sizeof(before)) == 0);
	} else {
		FUZZ_ASSERT((rc & ~(SDR_PLACE_CHUNK | SDR_PLACE_COMPLETE)) == 0);
		if (rc & SDR_PLACE_COMPLETE) {
			const struct sdr_rslot *sl = &s->rq.slot[idx];
			FUZZ_ASSERT(sl->state == SDR_RS_DONE && sdr_rslot_full(sl));
			FUZZ_ASSERT(sl->chunks_got == (sl->npkts + s->rq.ppc - 1) / s->rq.ppc);
			release(s, idx);
		} else {
			FUZZ_ASSERT(s->rq.slot[idx].state == SDR_RS_POSTED);
		}
	}
	check_slot(s, idx);
}

static void op_abort(struct fstate *s)
{
	int posted = 0;
	uint8_t b = get8(s);

	if (!(b & 1)) {
		op_ec(s, b);
		return;
	}
	for (uint32_t i = 0; i < SDR_MAX_MSGS; i++)
		posted += s->m[i].state == M_POSTED;
	abort_count = 0;
	sdr_rq_abort_all(&s->rq, on_abort, s);
	FUZZ_ASSERT(abort_count == posted);
}

/* Long-lived allocations, reused by every input (fresh heap blocks per
 * input would make the ASan build ten times slower); each is reset below. */
static struct fstate *f_state;
static uint64_t *f_chunk_bm;
static struct sdr_qseg_slot *f_shared;
static uint8_t *f_bufs[F_NBUF], *f_sink;

static int alloc_once(void)
{
	if (f_state)
		return 0;
	memset(f_canary_ref, F_CANARY, sizeof(f_canary_ref));
	memset(f_fresh_ref, F_FRESH, sizeof(f_fresh_ref));
	f_chunk_bm = malloc((size_t)SDR_MAX_MSGS * sdr_words_for(F_MAX_MSG / F_MTU) *
			    sizeof(uint64_t));
	f_shared = malloc(SDR_MAX_MSGS * sizeof(*f_shared));
	f_sink = malloc(1);
	for (int i = 0; i < F_NBUF; i++) {
		struct fbuf b;

		if ((f_bufs[i] = malloc(F_REAL + 2 * F_GUARD)) == NULL)
			return -1;
		b.base = f_bufs[i];
		buf_reset(&b);
	}
	if (f_chunk_bm == NULL || f_shared == NULL || f_sink == NULL)
		return -1;
	f_state = malloc(sizeof(*f_state));
	return f_state ? 0 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t gens[] = {1, 2, 4, 16};
	struct fstate *s;
	uint8_t cfg;
	uint32_t ppc, G;

	if (size < 1 || size > 65536 || alloc_once() != 0)
		return 0;
	s = f_state;
	/* sdr_rq_init() clears s->rq itself */
	memset((uint8_t *)s + offsetof(struct fstate, chunk_bm), 0,
	       sizeof(*s) - offsetof(struct fstate, chunk_bm));
	cfg = data[0];
	ppc = 1u << (cfg % 5); /* 1..16: max_msg is a multiple of MTU * ppc */
	G = gens[(cfg >> 3) & 3];
	s->chunk_words = sdr_words_for((F_MAX_MSG / F_MTU + ppc - 1) / ppc);
	s->chunk_bm = f_chunk_bm;
	s->shared = f_shared;
	s->sink = f_sink;
	/* garbage, as a careless host might leave it: posting must clear it */
	memset(s->chunk_bm, 0xA5, (size_t)SDR_MAX_MSGS * s->chunk_words * sizeof(uint64_t));
	memset(s->shared, 0x5A, SDR_MAX_MSGS * sizeof(*s->shared));
	if (sdr_rq_init(&s->rq, F_MTU, F_MAX_MSG, ppc, G, F_RKEY, s->chunk_bm, s->shared) != 0)
		return 0;
	FUZZ_ASSERT(s->rq.chunk_words == s->chunk_words);
	/* bits 7..6: a channel's stripe map, stripes of one chunk */
	switch (cfg >> 6) {
	case 1: s->rq.stripe = (struct sdr_stripe){2, 0, ppc * F_MTU}; break;
	case 2: s->rq.stripe = (struct sdr_stripe){2, 1, ppc * F_MTU}; break;
	case 3: s->rq.stripe = (struct sdr_stripe){3, 2, ppc * F_MTU}; break;
	default: break;
	}
	for (int i = 0; i < F_NBUF; i++) {
		s->buf[i].base = f_bufs[i];
		s->buf[i].slot = -1; /* clean: reset when released or below */
	}
	for (uint32_t i = 0; i < SDR_MAX_MSGS; i++)
		s->m[i].buf = -1;
	s->sink[0] = F_FRESH;
	s->verify = (cfg >> 5) & 1;
	s->in = data + 1;
	s->left = size - 1;

	while (s->left) {
		uint8_t op = get8(s);

		switch (op % 8) {
		case 0:
		case 1:
		case 2: op_synth(s, (op >> 3) & 1); break;
		case 3: op_raw(s); break;
		case 4: op_post(s); break;
		case 5: op_complete(s); break;
		case 6: op_bulk(s); break;
		default: op_abort(s); break;
		}
		for (int i = 0; i < F_NBUF; i++)
			FUZZ_ASSERT(guards_ok(&s->buf[i]));
		FUZZ_ASSERT(s->sink[0] == F_FRESH);
		{ /* the table's count of posted receives (the worker's timers use it)
		   * and the span of numbers that holds them (its scans) */
			uint32_t posted = 0, span = sdr_rq_posted_span(&s->rq);
			for (uint32_t i = 0; i < SDR_MAX_MSGS; i++)
				if (s->rq.slot[i].state == SDR_RS_POSTED) {
					posted++;
					FUZZ_ASSERT(s->rq.next_seq - s->rq.slot[i].seq <= span);
				}
			FUZZ_ASSERT(s->rq.nposted == posted);
			FUZZ_ASSERT(!span ||
				    s->rq.slot[(s->rq.next_seq - span) % SDR_MAX_MSGS].state ==
					    SDR_RS_POSTED);
		}
	}
	/* the end: every buffer still posted only holds writes inside its length */
	for (int i = 0; i < F_NBUF; i++)
		if (s->buf[i].slot >= 0) {
			buf_check(&s->rq.stripe, &s->buf[i], s->rq.slot[s->buf[i].slot].len);
			buf_reset(&s->buf[i]);
		}
	sdr_rq_fini(&s->rq);
	return 0;
}

/* ---- seeds ---- */

static void put(uint8_t *b, size_t *n, uint8_t v)
{
	b[(*n)++] = v;
}

/* post a receive of @p len, then its packets in order (data + imm-only;
 * with @p no_imm, 0x2A data packets only) */
static void seed_msg(uint8_t *b, size_t *n, uint32_t len, int no_imm)
{
	uint32_t v = len - 1, npkts = (len + F_MTU - 1) / F_MTU;

	put(b, n, 4);
	put(b, n, (uint8_t)(v >> 8));
	put(b, n, (uint8_t)v);
	for (uint32_t p = 0; p < npkts || (p < SDR_IMM_NIBBLES && !no_imm); p++) {
		uint32_t plen = p < npkts ? (len - p * F_MTU < F_MTU ? len - p * F_MTU : F_MTU) : 0;
		int last = p + 1 == npkts;
		uint32_t x = plen - 1; /* case 2 length: 1 + ((c >> 2) | (e << 6)) */

		put(b, n, no_imm ? 8 : 0); /* synth (0x2A with bit 3) */
		put(b, n, 0);              /* a: most recent post */
		put(b, n, (uint8_t)p);     /* b: offset */
		if (plen == 0)
			put(b, n, 0);
		else if (plen == F_MTU && !last)
			put(b, n, 1);
		else
			put(b, n, (uint8_t)(2 | (x & 0x3F) << 2));
		put(b, n, last ? 1 : 0);      /* d: SE, right gen, no corruption */
		put(b, n, (uint8_t)(x >> 6)); /* e */
	}
}

void sdr_fuzz_seeds(sdr_fuzz_emit_fn emit, void *arg)
{
	static uint8_t b[8192];
	static const uint32_t lens[] = {1, 100, 1024, 1500, 5000, 8192, 16384};
	size_t n;

	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		n = 0;
		put(b, &n, (uint8_t)(i * 9)); /* vary ppc / generations */
		seed_msg(b, &n, lens[i], 0);
		seed_msg(b, &n, lens[(i + 3) % 7], 1);
		seed_msg(b, &n, lens[(i + 5) % 7], (int)(i & 1));
		put(b, &n, 5); /* complete the most recent (already done: -ENOENT) */
		put(b, &n, 0);
		emit(b, n, arg);
	}
	/* the same through a channel's stripe map (cfg bits 7..6) */
	for (uint8_t k = 1; k <= 3; k++) {
		n = 0;
		put(b, &n, (uint8_t)(k << 6 | (k * 9) % 32));
		seed_msg(b, &n, lens[k + 2], 0);
		seed_msg(b, &n, 16384, 1);
		emit(b, n, arg);
	}
	/* erasure coding: 2 of 5 packets placed, the length and immediate from
	 * "parity", then the decoder fills chunks 2..4: complete */
	n = 0;
	put(b, &n, 0); /* ppc 1, G 1 */
	put(b, &n, 4);
	put(b, &n, (uint8_t)(4999 >> 8));
	put(b, &n, (uint8_t)4999);
	for (uint8_t p = 0; p < 2; p++) {
		static const uint8_t syn[6] = {0, 0, 0, 1, 0, 0};
		for (int i = 0; i < 6; i++)
			put(b, &n, i == 2 ? p : syn[i]);
	}
	put(b, &n, 7);
	put(b, &n, 2); /* set_msg */
	put(b, &n, (uint8_t)(5000 >> 8));
	put(b, &n, (uint8_t)5000);
	put(b, &n, 0);
	for (uint8_t c = 2; c < 5; c++) {
		put(b, &n, 7);
		put(b, &n, 0); /* fill_chunk */
		put(b, &n, c);
		put(b, &n, 0);
		put(b, &n, 0);
	}
	emit(b, n, arg);
	/* wrap: bulk post+complete, then a message in the next generation */
	n = 0;
	put(b, &n, 0x18); /* G = 16 */
	for (int k = 0; k < 4; k++) {
		put(b, &n, 6);
		put(b, &n, 255);
	}
	seed_msg(b, &n, 3000, 1);
	emit(b, n, arg);
	/* a raw, valid frame for the most recent post */
	{
		static uint8_t fr[SDR_DATA_HDR_LEN + 64];
		struct sdr_data_hdr h = {
			.dest_qpn = F_QPN_BASE,
			.va = 0,
			.rkey = F_RKEY,
			.dma_len = 40,
			.imm = sdr_imm_pack(0, 0, 0),
			.se = 1,
		};
		size_t fl = sdr_build_data_hdr(fr, &f_addr, &h);

		memset(fr + SDR_DATA_HDR_LEN, 0xAB, 40);
		sdr_pkt_finish(fr, fl, 1);
		n = 0;
		put(b, &n, 0x20); /* verify ICRC first */
		put(b, &n, 4);
		put(b, &n, 0);
		put(b, &n, 99);
		put(b, &n, 3);
		put(b, &n, (uint8_t)(fl >> 8));
		put(b, &n, (uint8_t)fl);
		memcpy(b + n, fr, fl);
		n += fl;
		put(b, &n, 3);
		put(b, &n, (uint8_t)(fl >> 8));
		put(b, &n, (uint8_t)fl);
		memcpy(b + n, fr, fl);
		n += fl;
		emit(b, n, arg);
	}
}
