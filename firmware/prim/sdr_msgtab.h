/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receive message table of one SDR QP: 1024 slots, order-based matching,
 * generations, per-packet bitmaps (DPU memory) coalesced into per-chunk
 * bitmaps (host-shared memory), user-immediate reassembly, discard sink
 * after completion.
 *
 * Pure C: no DPDK, so unit tests and the fuzzer drive it directly. Every
 * packet is hostile: sdr_rq_place() validates before it writes a byte, and
 * it only ever writes inside [dst, dst + posted length) of the slot.
 */
#ifndef SDR_MSGTAB_H
#define SDR_MSGTAB_H

#include <stdint.h>

#include "sdr_abi.h"
#include "sdr_counters.h"
#include "sdr_stripe.h"
#include "sdr_wire.h"

enum sdr_rslot_state { SDR_RS_FREE = 0, SDR_RS_POSTED, SDR_RS_DONE };

struct sdr_rslot {
	uint8_t *dst; /**< start of the posted buffer (host memory, mapped) */
	uint64_t wr_id;
	uint64_t first_tsc; /**< first packet seen (reliability timers) */
	uint64_t last_tsc;  /**< last packet placed (global timeout) */
	uint64_t post_tsc;  /**< when the receive was posted (host_sq.c; sdr-diag) */
	uint64_t fto_due;   /**< EC: fallback timeout (0 = not armed) */
	uint32_t ack_cum;   /**< SR: chunks below this are all in (private bitmap) */
	uint32_t seq;       /**< receive number owning the slot */
	uint32_t len;       /**< posted length */
	uint32_t posted_pkts;
	uint32_t npkts;   /**< packets of the message, once the last one is seen */
	uint32_t msg_len; /**< message length, once the last packet is seen */
	uint32_t pkts_got;
	uint32_t max_end; /**< highest byte end placed so far */
	uint32_t chunks_got;
	uint32_t imm;
	uint16_t mr_id;
	uint8_t imm_mask;
	uint8_t last_known;
	uint8_t state;       /**< enum sdr_rslot_state */
	uint8_t ack_pending; /**< SR: listed for the next ACK */
	uint8_t fto_fired;   /**< EC: the fallback timeout expired once */
	uint8_t resumed;     /**< re-posted on a restored QP with what the host kept
	                          (sdr_rq_post_resume()): CTS even after packets */
	uint8_t aborted;     /**< completed by the sender's ABORT (rx.c) */
	uint8_t len_unsure;  /**< resumed with chunks whose packets were counted up to
	                          the posted length: the message's end is not known */
	uint32_t lost;       /**< EC: data chunks that did not arrive on their first
	                          transmission (decoded before the first FTO expiry,
	                          or missing at it); sent in the FULL ACK */
};

/** The last receive a slot completed, kept when the slot is posted again:
 *  a retransmission of it (the sender missed the final ACK) is answered
 *  from here even after the host reused the slot. */
struct sdr_rdone {
	uint64_t reack_tsc; /**< last re-acknowledgement (rate limit) */
	uint32_t seq;       /**< receive number */
	uint32_t cum;       /**< the final entry's cumulative point */
	uint32_t lost;      /**< EC: the FULL entry's lost count */
	uint8_t flags;      /**< SDR_ACK_F_FULL or SDR_ACK_F_CLOSED; 0 = none */
};

struct sdr_rq {
	uint32_t mtu, max_msg, ppc, gens, rkey;
	/** the QP's stripe map (a channel of a multi-channel QP; identity
	 *  otherwise): where a message offset lies in the posted buffer; the
	 *  senders of the QP read it too */
	struct sdr_stripe stripe;
	uint32_t pkt_words;           /**< 64-bit words of one slot's packet bitmap */
	uint32_t chunk_words;         /**< 64-bit words of one slot's chunk bitmap */
	uint32_t next_seq;            /**< number the next posted receive gets */
	uint32_t nposted;             /**< receives posted and not completed */
	uint64_t *pkt_bm;             /**< [SDR_MAX_MSGS][pkt_words], private */
	uint64_t *chunk_bm;           /**< [SDR_MAX_MSGS][chunk_words], host-shared */
	uint64_t *chunk_priv;         /**< [SDR_MAX_MSGS][chunk_words], private copy (ACKs trust
	                           only DPU memory) */
	struct sdr_qseg_slot *shared; /**< [SDR_MAX_MSGS], host-shared */
	struct sdr_rslot slot[SDR_MAX_MSGS];
	struct sdr_rdone done[SDR_MAX_MSGS]; /**< written by the reliability layer */
};

/** How many of the most recent receive numbers (next_seq - span ..
 *  next_seq - 1) hold every posted receive: walks back from the newest until
 *  all nposted are seen, so a scan of the posted receives costs their
 *  spread, not the 1024 slots. */
static inline uint32_t sdr_rq_posted_span(const struct sdr_rq *rq)
{
	uint32_t left = rq->nposted, span = 0;

	while (left && span < SDR_MAX_MSGS) {
		span++;
		left -= rq->slot[(rq->next_seq - span) % SDR_MAX_MSGS].state == SDR_RS_POSTED;
	}
	return span;
}

/** Words a slot needs for @p bits bits. */
static inline uint32_t sdr_words_for(uint32_t bits)
{
	return (bits + 63) / 64;
}

/**
 * Initialise @p rq. @p chunk_bm and @p shared live in the QP's shared
 * segment (sized by the caller from chunk_words); the packet bitmaps are
 * allocated here. Preconditions (checked by the caller): mtu in
 * {1024,2048,4096}, max_msg a multiple of mtu*ppc and >= 8*mtu,
 * max_msg/mtu <= 2^18, gens a power of two.
 * @return 0 or -ENOMEM.
 */
int sdr_rq_init(struct sdr_rq *rq, uint32_t mtu, uint32_t max_msg, uint32_t ppc, uint32_t gens,
		uint32_t rkey, uint64_t *chunk_bm, struct sdr_qseg_slot *shared);
void sdr_rq_fini(struct sdr_rq *rq);

/**
 * Post a receive of @p len bytes (1..max_msg, checked by the caller) landing
 * at @p dst. It takes number rq->next_seq.
 * @return the receive number, or -EBUSY when the slot still holds an
 * uncompleted receive (nothing changes then).
 */
int64_t sdr_rq_post(struct sdr_rq *rq, uint8_t *dst, uint32_t len, uint64_t wr_id, uint16_t mr_id);

/**
 * Post a receive as sdr_rq_post() does, on a QP restored after a daemon
 * restart (SQE flag RESUME): the slot's bitmap, chunks_set and immediate in
 * the host-shared segment are kept, not cleared, and seed the receive: every
 * chunk bit below the posted buffer's chunk count counts as received (its
 * packets, up to the posted length), bits beyond it are cleared, chunks_set
 * is recomputed from the bitmap (the host's count is not trusted), the
 * immediate keeps the nibbles its mask names. Until the message's last
 * packet (or, EC, its length) arrives, packets past its end may be counted:
 * that packet corrects them (len_unsure). @return as sdr_rq_post().
 */
int64_t sdr_rq_post_resume(struct sdr_rq *rq, uint8_t *dst, uint32_t len, uint64_t wr_id,
			   uint16_t mr_id, uint64_t now_tsc);

/** Result flags of sdr_rq_place(). */
#define SDR_PLACE_DATA 0x1     /**< payload written, packet bit set */
#define SDR_PLACE_CHUNK 0x2    /**< a chunk bit became set */
#define SDR_PLACE_COMPLETE 0x4 /**< the receive is now complete (slot index in *slot_out) */
#define SDR_PLACE_IMM 0x8      /**< an immediate-only packet was accepted */

/**
 * Validate a parsed data packet (opcode 0x2B, or 0x2A placed by
 * sdr_data_locate()) that arrived on generation @p gen of this QP and place
 * it. The packet must name the slot's receive number (PSN and msg_id,
 * sdr_psn_seq()): a packet of another use of the slot is dropped as
 * stale_gen / stale_seq / early_seq, never placed. A 0x2A packet tells the
 * receive that its user immediate is 0 (imm_mismatch when a non-zero
 * nibble arrived).
 * @return flags >= 0, or -1 with *drop set to the counter of the reason.
 * On SDR_PLACE_COMPLETE, *slot_out is the completed slot (now DONE).
 */
int sdr_rq_place(struct sdr_rq *rq, uint32_t gen, const struct sdr_parsed *p, uint64_t now_tsc,
		 enum sdr_ctr *drop, uint32_t *slot_out);

/**
 * Erasure coding: the message in slot @p idx (posted, not completed) is
 * @p msg_len bytes long with user immediate @p imm (from a parity header).
 * Checks it against what arrived: msg_len <= posted length, >= the highest
 * byte placed, equal to the length the last packet gave; every immediate
 * nibble already received agrees. Then the last packet is known (as if the
 * SE packet had arrived) and the immediate is complete.
 * @return flags >= 0 (SDR_PLACE_CHUNK, SDR_PLACE_COMPLETE), or -1 with
 * *drop set (bad_len, imm_mismatch, no_recv).
 */
int sdr_rq_set_msg(struct sdr_rq *rq, uint32_t idx, uint32_t msg_len, uint32_t imm,
		   enum sdr_ctr *drop);

/**
 * Erasure coding: the bytes of chunk @p chunk of slot @p idx were written
 * into the posted buffer by the decoder. Marks its packets received and the
 * chunk bit set (host and private bitmaps). Requires the message length to
 * be known (sdr_rq_set_msg()). @return flags >= 0 (SDR_PLACE_CHUNK when the
 * bit became set, SDR_PLACE_COMPLETE), or -1 (slot not posted, length
 * unknown, chunk past the message).
 */
int sdr_rq_fill_chunk(struct sdr_rq *rq, uint32_t idx, uint32_t chunk, uint64_t now_tsc);

/**
 * Selective Repeat's hole report (docs/wire-format.md §6 "Holes") of chunk
 * @p chunk of the posted receive in slot @p idx: when the chunk is not whole
 * but some of its packets arrived, and either one of them came after a
 * missing one or data of a later chunk arrived (its packets were all due),
 * *first is its first missing packet (an index within the chunk) and bit i
 * of *have says whether packet *first + i arrived. @return 1 then, else 0
 * (whole, nothing of it arrived, or its packets may still be on the way).
 */
int sdr_rq_chunk_hole(const struct sdr_rq *rq, uint32_t idx, uint32_t chunk, uint16_t *first,
		      uint64_t *have);

/** Private chunk bitmap of slot @p idx. */
static inline const uint64_t *sdr_rq_chunk_priv(const struct sdr_rq *rq, uint32_t idx)
{
	return rq->chunk_priv + (size_t)idx * rq->chunk_words;
}

/** Chunks of the receive in @p s as far as known (the message's, once its
 *  last packet arrived, else the posted buffer's). */
static inline uint32_t sdr_rslot_nchunks(const struct sdr_rq *rq, const struct sdr_rslot *s)
{
	uint32_t np = s->last_known ? s->npkts : s->posted_pkts;
	return (np + rq->ppc - 1) / rq->ppc;
}

/** Is the receive in @p slot complete (all packets incl. the last, all
 *  immediate nibbles)? */
int sdr_rslot_full(const struct sdr_rslot *s);

/** A resumed receive (sdr_rq_post_resume()) in slot @p idx that already
 *  holds its whole message (the end the daemon before knew, every packet
 *  and nibble): marked done. @return 1 then (the caller completes it, as
 *  at SDR_PLACE_COMPLETE), else 0. */
int sdr_rq_resumed_full(struct sdr_rq *rq, uint32_t idx);

/**
 * Complete receive @p seq now (host asked, or a timeout). The slot becomes a
 * discard sink. @return slot index, or -ENOENT when @p seq is not a posted,
 * uncompleted receive.
 */
int sdr_rq_complete(struct sdr_rq *rq, uint32_t seq);

/** Abort every posted receive (QP teardown); calls @p cb for each. */
void sdr_rq_abort_all(struct sdr_rq *rq, void (*cb)(void *arg, struct sdr_rslot *s), void *arg);

#endif /* SDR_MSGTAB_H */
