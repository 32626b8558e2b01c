/* SPDX-License-Identifier: BSD-3-Clause */
/* The drop counters' names (sdr_counters.h: one X-macro list).
 * Layer prim/: a primitive, the lowest firmware layer; calls only common/ code. */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "sdr_bitmap.h"
#include "sdr_msgtab.h"

int sdr_rq_init(struct sdr_rq *rq, uint32_t mtu, uint32_t max_msg, uint32_t ppc, uint32_t gens,
		uint32_t rkey, uint64_t *chunk_bm, struct sdr_qseg_slot *shared)
{
	uint32_t max_pkts = max_msg / mtu;

	memset(rq, 0, sizeof(*rq));
	rq->mtu = mtu;
	rq->max_msg = max_msg;
	rq->ppc = ppc;
	rq->gens = gens;
	rq->rkey = rkey;
	rq->pkt_words = sdr_words_for(max_pkts);
	rq->chunk_words = sdr_words_for((max_pkts + ppc - 1) / ppc);
	rq->chunk_bm = chunk_bm;
	rq->shared = shared;
	rq->pkt_bm = calloc((size_t)SDR_MAX_MSGS * rq->pkt_words, sizeof(uint64_t));
	rq->chunk_priv = calloc((size_t)SDR_MAX_MSGS * rq->chunk_words, sizeof(uint64_t));
	if (!rq->pkt_bm || !rq->chunk_priv) {
		sdr_rq_fini(rq);
		return -ENOMEM;
	}
	return 0;
}

void sdr_rq_fini(struct sdr_rq *rq)
{
	free(rq->pkt_bm);
	free(rq->chunk_priv);
	rq->pkt_bm = NULL;
	rq->chunk_priv = NULL;
}

static inline uint64_t *pkt_bm_of(struct sdr_rq *rq, uint32_t slot)
{
	return rq->pkt_bm + (size_t)slot * rq->pkt_words;
}

static inline uint64_t *chunk_bm_of(struct sdr_rq *rq, uint32_t slot)
{
	return rq->chunk_bm + (size_t)slot * rq->chunk_words;
}

/* Slot @p idx knows its message's end: the host's segment keeps it (a
 * restarted daemon resumes the receive from it, sdr_rq_post_resume()). */
static inline void end_known(struct sdr_rq *rq, uint32_t idx, const struct sdr_rslot *s)
{
	atomic_store_explicit(&rq->shared[idx].msg_len, s->msg_len, memory_order_release);
}

static int64_t rq_post(struct sdr_rq *rq, uint8_t *dst, uint32_t len, uint64_t wr_id,
		       uint16_t mr_id, int keep)
{
	uint32_t seq = rq->next_seq;
	uint32_t idx = sdr_seq_msg_id(seq);
	struct sdr_rslot *s = &rq->slot[idx];
	struct sdr_qseg_slot *sh = &rq->shared[idx];
	uint32_t pkts = (len + rq->mtu - 1) / rq->mtu;

	if (s->state == SDR_RS_POSTED)
		return -EBUSY;
	memset(s, 0, sizeof(*s));
	s->dst = dst;
	s->wr_id = wr_id;
	s->seq = seq;
	s->len = len;
	s->posted_pkts = pkts;
	s->mr_id = mr_id;
	s->state = SDR_RS_POSTED;
	rq->nposted++;
	memset(pkt_bm_of(rq, idx), 0, sdr_words_for(pkts) * sizeof(uint64_t));
	memset(rq->chunk_priv + (size_t)idx * rq->chunk_words, 0,
	       rq->chunk_words * sizeof(uint64_t));
	/* The host cleared these too; clear again so a careless host cannot
	 * make a fresh receive look partly done. */
	if (!keep) {
		for (uint32_t w = 0; w < rq->chunk_words; w++)
			atomic_store_explicit((_Atomic uint64_t *)&chunk_bm_of(rq, idx)[w], 0,
					      memory_order_relaxed);
		atomic_store_explicit(&sh->chunks_set, 0, memory_order_relaxed);
		atomic_store_explicit(&sh->imm_mask, 0, memory_order_relaxed);
		atomic_store_explicit(&sh->imm, 0, memory_order_relaxed);
		atomic_store_explicit(&sh->msg_len, 0, memory_order_relaxed);
	}
	atomic_store_explicit(&sh->seq, seq, memory_order_release);
	rq->next_seq = seq + 1;
	return seq;
}

int64_t sdr_rq_post(struct sdr_rq *rq, uint8_t *dst, uint32_t len, uint64_t wr_id, uint16_t mr_id)
{
	return rq_post(rq, dst, len, wr_id, mr_id, 0);
}

static int learn_end(struct sdr_rq *rq, uint32_t idx, struct sdr_rslot *s, uint32_t npkts,
		     uint32_t msg_len);

int64_t sdr_rq_post_resume(struct sdr_rq *rq, uint8_t *dst, uint32_t len, uint64_t wr_id,
			   uint16_t mr_id, uint64_t now_tsc)
{
	int64_t seq = rq_post(rq, dst, len, wr_id, mr_id, 1);
	uint32_t idx, nch, imm, mask, ml, keepn = 0;
	struct sdr_qseg_slot *sh;
	struct sdr_rslot *s;
	uint64_t *cbm, *pbm, *priv;

	if (seq < 0)
		return seq;
	idx = sdr_seq_msg_id((uint32_t)seq);
	s = &rq->slot[idx];
	sh = &rq->shared[idx];
	cbm = chunk_bm_of(rq, idx);
	pbm = pkt_bm_of(rq, idx);
	priv = rq->chunk_priv + (size_t)idx * rq->chunk_words;
	nch = (s->posted_pkts + rq->ppc - 1) / rq->ppc;
	s->resumed = 1;
	for (uint32_t w = 0; w < rq->chunk_words; w++) {
		uint64_t v = atomic_load_explicit((_Atomic uint64_t *)&cbm[w],
						  memory_order_relaxed);

		/* (host memory: read once; what we count is what it sees) */
		if ((uint64_t)w * 64 >= nch)
			v = 0;
		else if (nch - w * 64 < 64)
			v &= (1ull << (nch - w * 64)) - 1;
		atomic_store_explicit((_Atomic uint64_t *)&cbm[w], v, memory_order_relaxed);
		priv[w] = v;
		while (v) {
			uint32_t c = w * 64 + (uint32_t)__builtin_ctzll(v);
			uint32_t first = c * rq->ppc;
			uint32_t end = first + rq->ppc < s->posted_pkts ? first + rq->ppc
									: s->posted_pkts;
			uint64_t e = (uint64_t)end * rq->mtu;

			v &= v - 1;
			for (uint32_t p = first; p < end; p++)
				sdr_bit_set(pbm, p);
			s->pkts_got += end - first;
			s->chunks_got++;
			keepn++;
			if (e > s->len)
				e = s->len;
			if (e > s->max_end)
				s->max_end = (uint32_t)e;
		}
	}
	mask = atomic_load_explicit(&sh->imm_mask, memory_order_relaxed) & 0xFF;
	imm = atomic_load_explicit(&sh->imm, memory_order_relaxed);
	for (uint32_t b = 0; b < SDR_IMM_NIBBLES; b++)
		if (!(mask & (1u << b)))
			imm &= ~(0xFu << (4 * b));
	s->imm = imm;
	s->imm_mask = (uint8_t)mask;
	atomic_store_explicit(&sh->imm, imm, memory_order_relaxed);
	atomic_store_explicit(&sh->imm_mask, mask, memory_order_relaxed);
	atomic_store_explicit(&sh->chunks_set, s->chunks_got, memory_order_release);
	ml = atomic_load_explicit(&sh->msg_len, memory_order_acquire);
	atomic_store_explicit(&sh->msg_len, 0, memory_order_relaxed);
	if (keepn) {
		s->len_unsure = 1;
		s->first_tsc = s->last_tsc = now_tsc;
		/* the end the daemon before knew (host memory: a length past
		 * the posted buffer is not taken; a shorter one only shortens
		 * this receive) takes back what was counted past it, and
		 * a receive that had all of its message completes at once
		 * (sdr_rq_resumed_full()): its sender may have nothing to send
		 * again */
		if (ml && ml <= s->len)
			(void)learn_end(rq, idx, s, (ml + rq->mtu - 1) / rq->mtu, ml);
	} else if (mask) {
		s->last_tsc = now_tsc;
	}
	return seq;
}

static int try_chunk(struct sdr_rq *rq, uint32_t idx, struct sdr_rslot *s, uint32_t chunk);

/* A resumed receive learns where its message ends (@p npkts packets,
 * @p msg_len bytes): what was counted past that end is taken back. */
static int learn_end(struct sdr_rq *rq, uint32_t idx, struct sdr_rslot *s, uint32_t npkts,
		     uint32_t msg_len)
{
	uint64_t *pbm = pkt_bm_of(rq, idx), *cbm = chunk_bm_of(rq, idx);
	uint64_t *priv = rq->chunk_priv + (size_t)idx * rq->chunk_words;
	uint32_t last = (npkts - 1) / rq->ppc, nch = (s->posted_pkts + rq->ppc - 1) / rq->ppc;

	for (uint32_t p = npkts; p < s->posted_pkts; p++)
		if (sdr_bit_test(pbm, p)) {
			pbm[p / 64] &= ~(1ull << (p % 64));
			s->pkts_got--;
		}
	for (uint32_t c = last + 1; c < nch; c++)
		if (sdr_bit_test(priv, c)) {
			priv[c / 64] &= ~(1ull << (c % 64));
			atomic_fetch_and_explicit((_Atomic uint64_t *)&cbm[c / 64],
						  ~(1ull << (c % 64)), memory_order_relaxed);
			s->chunks_got--;
		}
	atomic_store_explicit(&rq->shared[idx].chunks_set, s->chunks_got, memory_order_release);
	if (s->max_end > msg_len)
		s->max_end = msg_len;
	s->len_unsure = 0;
	s->last_known = 1;
	s->npkts = npkts;
	s->msg_len = msg_len;
	end_known(rq, idx, s);
	return try_chunk(rq, idx, s, last);
}

/* Slot @p s is done: it no longer counts among the posted receives
 * (sdr_rq_posted_span() scans by that count). */
static inline void rslot_done(struct sdr_rq *rq, struct sdr_rslot *s)
{
	s->state = SDR_RS_DONE;
	rq->nposted--;
}

int sdr_rslot_full(const struct sdr_rslot *s)
{
	return s->last_known && s->pkts_got == s->npkts && s->imm_mask == 0xFF;
}

int sdr_rq_resumed_full(struct sdr_rq *rq, uint32_t idx)
{
	struct sdr_rslot *s = &rq->slot[idx & (SDR_MAX_MSGS - 1)];

	if (s->state != SDR_RS_POSTED || !s->resumed || !sdr_rslot_full(s))
		return 0;
	rslot_done(rq, s);
	return 1;
}

/* Set chunk bit @c chunk if all of its packets (below the message's packet
 * count, or the posted count while the last packet is unknown) are in. */
static int try_chunk(struct sdr_rq *rq, uint32_t idx, struct sdr_rslot *s, uint32_t chunk)
{
	uint32_t npk = s->last_known ? s->npkts : s->posted_pkts;
	uint32_t first = chunk * rq->ppc;
	uint64_t *cbm = chunk_bm_of(rq, idx);

	if (first >= npk || sdr_bit_test(cbm, chunk))
		return 0;
	if (!sdr_bitmap_range_full(pkt_bm_of(rq, idx), first,
				   npk - first < rq->ppc ? npk - first : rq->ppc))
		return 0;
	sdr_bit_set_shared(cbm, chunk);
	sdr_bit_set(rq->chunk_priv + (size_t)idx * rq->chunk_words, chunk);
	s->chunks_got++;
	atomic_store_explicit(&rq->shared[idx].chunks_set, s->chunks_got, memory_order_release);
	return SDR_PLACE_CHUNK;
}

static int note_imm(struct sdr_rq *rq, uint32_t idx, struct sdr_rslot *s, uint32_t pkt_off,
		    uint32_t nib, enum sdr_ctr *drop)
{
	uint32_t bit = pkt_off % SDR_IMM_NIBBLES;

	if (s->imm_mask & (1u << bit)) {
		if (((s->imm >> (4 * bit)) & 0xF) != nib) {
			*drop = SDR_CTR_imm_mismatch;
			return -1;
		}
		return 0;
	}
	s->imm |= nib << (4 * bit);
	s->imm_mask |= (uint8_t)(1u << bit);
	atomic_store_explicit(&rq->shared[idx].imm, s->imm, memory_order_relaxed);
	atomic_store_explicit(&rq->shared[idx].imm_mask, s->imm_mask, memory_order_release);
	return 0;
}

/* A 0x2A packet: the user immediate is 0, every nibble of it. */
static int note_imm_zero(struct sdr_rq *rq, uint32_t idx, struct sdr_rslot *s, enum sdr_ctr *drop)
{
	if (s->imm) { /* a non-zero nibble arrived before */
		*drop = SDR_CTR_imm_mismatch;
		return -1;
	}
	if (s->imm_mask == 0xFF)
		return 0;
	s->imm_mask = 0xFF;
	atomic_store_explicit(&rq->shared[idx].imm, 0, memory_order_relaxed);
	atomic_store_explicit(&rq->shared[idx].imm_mask, s->imm_mask, memory_order_release);
	return 0;
}

int sdr_rq_place(struct sdr_rq *rq, uint32_t gen, const struct sdr_parsed *p, uint64_t now_tsc,
		 enum sdr_ctr *drop, uint32_t *slot_out)
{
	uint32_t idx = p->msg_id & (SDR_MAX_MSGS - 1);
	uint32_t off = p->pkt_off & (SDR_MAX_PKTS - 1);
	uint32_t nib = p->imm_nib & 0xF;
	struct sdr_rslot *s = &rq->slot[idx];
	uint64_t *pbm = pkt_bm_of(rq, idx);
	uint32_t len = p->dma_len;
	uint64_t start = (uint64_t)off * rq->mtu;
	int flags = 0;

	if (s->state == SDR_RS_FREE) {
		*drop = SDR_CTR_no_recv;
		return -1;
	}
	if (sdr_seq_gen(s->seq, rq->gens) != gen) {
		*drop = SDR_CTR_stale_gen;
		return -1;
	}
	if (sdr_psn_seq(p->psn, idx) != s->seq) {
		/* same slot and generation, another message: 4096 (1024 slots x
		 * G generations) or more messages apart */
		*drop = (int32_t)(sdr_psn_seq(p->psn, idx) - s->seq) < 0 ? SDR_CTR_stale_seq
									 : SDR_CTR_early_seq;
		return -1;
	}
	if (s->state == SDR_RS_DONE) {
		*drop = SDR_CTR_late_pkt;
		return -1;
	}
	if (p->rkey != rq->rkey) {
		*drop = SDR_CTR_bad_rkey;
		return -1;
	}
	/* (a 0x2A packet was placed by its VA: this holds when
	 * sdr_data_locate() placed it) */
	if (p->va != (uint64_t)idx * rq->max_msg + start) {
		*drop = SDR_CTR_bad_va;
		return -1;
	}
	if (p->payload_len != len) { /* sdr_parse guarantees it; keep the invariant local */
		*drop = SDR_CTR_bad_dma_len;
		return -1;
	}

	if (s->len_unsure && p->se && len) {
		/* a resumed receive: its last packet says where it ends */
		if (len > rq->mtu || start + len > s->len) {
			*drop = SDR_CTR_bad_len;
			return -1;
		}
		flags |= learn_end(rq, idx, s, off + 1, (uint32_t)(start + len));
		if (sdr_bit_test(pbm, off)) {
			if (sdr_rslot_full(s))
				goto check_complete;
			*drop = SDR_CTR_dup_pkt;
			return -1;
		}
	}
	if (len == 0) {
		/* Immediate-only packet: carries nibble off % 8, never data; a
		 * 0x2A packet (no immediate) always carries data. */
		if (off >= SDR_IMM_NIBBLES || p->se || p->imm_zero) {
			*drop = SDR_CTR_bad_len;
			return -1;
		}
		uint8_t had = s->imm_mask;
		if (note_imm(rq, idx, s, off, nib, drop) < 0)
			return -1;
		if (s->imm_mask == had) { /* a repeat of a nibble we hold: adds nothing */
			*drop = SDR_CTR_dup_imm;
			return -1;
		}
		s->last_tsc = now_tsc;
		flags |= SDR_PLACE_IMM;
		goto check_complete;
	}

	/* A data packet: inside the posted buffer, full MTU unless it is the
	 * last one, consistent with what the last packet told us. */
	if (len > rq->mtu || start + len > s->len || (!p->se && len != rq->mtu)) {
		*drop = SDR_CTR_bad_len;
		return -1;
	}
	if (s->last_known) {
		if (p->se ? (off + 1 != s->npkts || start + len != s->msg_len)
			  : off + 1 >= s->npkts) {
			*drop = SDR_CTR_bad_len;
			return -1;
		}
	} else if (p->se && start + len < s->max_end) {
		/* claims to end before bytes that already arrived */
		*drop = SDR_CTR_bad_len;
		return -1;
	}
	if (sdr_bit_test(pbm, off)) {
		*drop = SDR_CTR_dup_pkt;
		return -1;
	}
	if ((p->imm_zero ? note_imm_zero(rq, idx, s, drop) : note_imm(rq, idx, s, off, nib, drop)) <
	    0)
		return -1;

	/* (a packet lies in one stripe: its bytes stay contiguous) */
	memcpy(s->dst + sdr_stripe_real(&rq->stripe, start), p->payload, len);
	sdr_bit_set(pbm, off);
	s->pkts_got++;
	if (s->pkts_got == 1)
		s->first_tsc = now_tsc;
	s->last_tsc = now_tsc;
	if (start + len > s->max_end)
		s->max_end = (uint32_t)(start + len);
	flags |= SDR_PLACE_DATA;
	if (p->se && !s->last_known) {
		s->last_known = 1;
		s->npkts = off + 1;
		s->msg_len = (uint32_t)(start + len);
		end_known(rq, idx, s);
		/* The last chunk may be short: look at it again now. */
		if (off / rq->ppc != (s->npkts - 1) / rq->ppc)
			flags |= try_chunk(rq, idx, s, (s->npkts - 1) / rq->ppc);
	}
	flags |= try_chunk(rq, idx, s, off / rq->ppc);

check_complete:
	if (sdr_rslot_full(s)) {
		rslot_done(rq, s);
		*slot_out = idx;
		flags |= SDR_PLACE_COMPLETE;
	}
	return flags;
}

int sdr_rq_set_msg(struct sdr_rq *rq, uint32_t idx, uint32_t msg_len, uint32_t imm,
		   enum sdr_ctr *drop)
{
	struct sdr_rslot *s = &rq->slot[idx & (SDR_MAX_MSGS - 1)];
	int flags = 0;

	idx &= SDR_MAX_MSGS - 1;
	if (s->state != SDR_RS_POSTED) {
		*drop = SDR_CTR_no_recv;
		return -1;
	}
	if (s->len_unsure) { /* a resumed receive: now it knows its end */
		if (msg_len == 0 || msg_len > s->len) {
			*drop = SDR_CTR_bad_len;
			return -1;
		}
		flags |= learn_end(rq, idx, s, (msg_len + rq->mtu - 1) / rq->mtu, msg_len);
	}
	if (msg_len == 0 || msg_len > s->len || msg_len < s->max_end ||
	    (s->last_known && s->msg_len != msg_len)) {
		*drop = SDR_CTR_bad_len;
		return -1;
	}
	for (uint32_t b = 0; b < SDR_IMM_NIBBLES; b++)
		if ((s->imm_mask & (1u << b)) &&
		    ((s->imm >> (4 * b)) & 0xF) != ((imm >> (4 * b)) & 0xF)) {
			*drop = SDR_CTR_imm_mismatch;
			return -1;
		}
	if (s->imm_mask != 0xFF) {
		s->imm = imm;
		s->imm_mask = 0xFF;
		atomic_store_explicit(&rq->shared[idx].imm, s->imm, memory_order_relaxed);
		atomic_store_explicit(&rq->shared[idx].imm_mask, s->imm_mask, memory_order_release);
	}
	if (!s->last_known) {
		s->last_known = 1;
		s->npkts = (msg_len + rq->mtu - 1) / rq->mtu;
		s->msg_len = msg_len;
		end_known(rq, idx, s);
		/* the last chunk may be short and complete already */
		flags |= try_chunk(rq, idx, s, (s->npkts - 1) / rq->ppc);
	}
	if (sdr_rslot_full(s)) {
		rslot_done(rq, s);
		flags |= SDR_PLACE_COMPLETE;
	}
	return flags;
}

/* Bits [from, from + n) of @p bm (n <= 64) as a number, bit 0 = bit from;
 * reads no word past the one holding bit from + n - 1. */
static uint64_t bits_at(const uint64_t *bm, uint32_t from, uint32_t n)
{
	uint32_t w = from >> 6, off = from & 63;
	uint64_t v = bm[w] >> off;

	if (off && n > 64 - off)
		v |= bm[w + 1] << (64 - off);
	return n < 64 ? v & ((UINT64_C(1) << n) - 1) : v;
}

int sdr_rq_chunk_hole(const struct sdr_rq *rq, uint32_t idx, uint32_t chunk, uint16_t *first,
		      uint64_t *have)
{
	const struct sdr_rslot *s = &rq->slot[idx];
	const uint64_t *pbm = rq->pkt_bm + (size_t)idx * rq->pkt_words;
	uint32_t npk = s->last_known ? s->npkts : s->posted_pkts;
	uint32_t lo = chunk * rq->ppc, end, miss = UINT32_MAX, chunk_bytes = rq->mtu * rq->ppc;
	int after;

	if (s->state != SDR_RS_POSTED || lo >= npk)
		return 0;
	end = npk - lo < rq->ppc ? npk : lo + rq->ppc;
	/* (64 packets at a time: chunks of up to 1024 packets, on every ACK) */
	for (uint32_t p = lo; p < end && miss == UINT32_MAX; p += 64) {
		uint32_t n = end - p < 64 ? end - p : 64;
		uint64_t gone = ~bits_at(pbm, p, n) &
				(n < 64 ? (UINT64_C(1) << n) - 1 : ~UINT64_C(0));

		if (gone)
			miss = p + (uint32_t)__builtin_ctzll(gone);
	}
	if (miss == UINT32_MAX)
		return 0; /* whole (its chunk bit comes with the last packet) */
	*have = bits_at(pbm, miss, end - miss < 64 ? end - miss : 64);
	after = *have != 0;
	for (uint32_t p = miss + 64; p < end && !after; p += 64)
		after = bits_at(pbm, p, end - p < 64 ? end - p : 64) != 0;
	/* nothing after the hole: a chunk in flight, unless a later one has data */
	if (!after && (miss == lo || s->max_end <= (uint64_t)(chunk + 1) * chunk_bytes))
		return 0;
	*first = (uint16_t)(miss - lo);
	return 1;
}

int sdr_rq_fill_chunk(struct sdr_rq *rq, uint32_t idx, uint32_t chunk, uint64_t now_tsc)
{
	struct sdr_rslot *s;
	uint64_t *pbm;
	uint32_t first, end;
	int flags;

	if (idx >= SDR_MAX_MSGS)
		return -1;
	s = &rq->slot[idx];
	if (s->state != SDR_RS_POSTED || !s->last_known || (uint64_t)chunk * rq->ppc >= s->npkts)
		return -1;
	pbm = pkt_bm_of(rq, idx);
	first = chunk * rq->ppc;
	end = s->npkts - first < rq->ppc ? s->npkts : first + rq->ppc;
	for (uint32_t p = first; p < end; p++)
		if (!sdr_bit_test(pbm, p)) {
			sdr_bit_set(pbm, p);
			s->pkts_got++;
		}
	if (s->pkts_got && !s->first_tsc)
		s->first_tsc = now_tsc;
	s->last_tsc = now_tsc;
	{
		uint64_t e = (uint64_t)end * rq->mtu;
		if (e > s->msg_len)
			e = s->msg_len;
		if (e > s->max_end)
			s->max_end = (uint32_t)e;
	}
	flags = try_chunk(rq, idx, s, chunk);
	if (sdr_rslot_full(s)) {
		rslot_done(rq, s);
		flags |= SDR_PLACE_COMPLETE;
	}
	return flags;
}

int sdr_rq_complete(struct sdr_rq *rq, uint32_t seq)
{
	uint32_t idx = sdr_seq_msg_id(seq);
	struct sdr_rslot *s = &rq->slot[idx];

	if (s->state != SDR_RS_POSTED || s->seq != seq)
		return -ENOENT;
	rslot_done(rq, s);
	return (int)idx;
}

void sdr_rq_abort_all(struct sdr_rq *rq, void (*cb)(void *arg, struct sdr_rslot *s), void *arg)
{
	for (uint32_t i = 0; i < SDR_MAX_MSGS; i++) {
		struct sdr_rslot *s = &rq->slot[i];
		if (s->state != SDR_RS_POSTED)
			continue;
		rslot_done(rq, s);
		if (cb)
			cb(arg, s);
	}
}
