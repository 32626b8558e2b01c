/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Selective Repeat engine (docs/reliability.md): per-chunk retransmission
 * timers, the retransmit queue, ACK processing and generation, the global
 * outage horizon. The reliable-QP core (sr_qp.h) runs it on the QPs of the SR, EC
 * and AUTO schemes; it knows none of them.
 *
 * Sender: every chunk of a send (plus, for messages of fewer than 8
 * packets, one "immediate unit" made of the immediate-only packets) is a
 * retransmission unit. When a unit's last packet has left, (seq, unit, time)
 * goes to the timer FIFO; entries are pushed in transmit order, so the head
 * expires first. An expired, unacknowledged unit goes to the retransmit
 * queue, served before new data and through the same pacers; so does one
 * the RACK rule finds lost earlier (a unit sent later on its path was
 * acknowledged and the reordering window passed, or the receiver's hole
 * report shows a packet after a missing one of the unit arrived), and the
 * last unit sent as a tail-loss probe (RFC 8985; docs/reliability.md "Loss
 * detection"). A retransmission leaves out the packets a hole report
 * newer than the unit's last transmission shows arrived.
 * The send completes when the receiver reports the receive FULL.
 *
 * Receiver: slots with news are reported in one ACK per --sr-ack-us, with
 * hole reports of their incomplete chunks (docs/wire-format.md §6); the
 * final entry (FULL / CLOSED) of a completed receive is captured at
 * completion, sent in the same loop pass, and repeated to retransmissions.
 */
#ifndef SDR_SR_ENGINE_H
#define SDR_SR_ENGINE_H

#include "sdr_sr.h"
#include "sdr_spray.h"
#include "sr_cc.h"
#include "sr_counters.h"
#include "sdr_dpu.h"
#include "sdr_qp.h"
#include "sdr_worker.h"

/** Sender state of one chunk (or the immediate unit) of a send. */
struct sdr_sr_unit {
	uint64_t tx_tsc;          /* last (re)transmission of the unit's last packet */
	uint16_t sent;            /* packets transmitted in the first pass */
	uint8_t acked, inq, retx; /* inq: waiting in the retransmit queue; retx: times */
	uint8_t reprobe;          /* acked, sent again all the same: the receiver restarted
	                             and lost where the message ends (sdr_sr_rx_ack) */
	uint8_t path;             /* path index of its last transmission (sdr_sr::path) */
	uint8_t lost_by;          /* what queued its last retransmission: SDR_SR_LOST_* */
};

/* What found a unit lost (struct sdr_sr_unit::lost_by) */
enum { SDR_SR_LOST_NONE, SDR_SR_LOST_RACK, SDR_SR_LOST_TLP, SDR_SR_LOST_OTHER /* RTO, NACK */ };

/** Sender state of one send (per send slot). */
struct sdr_sr_send {
	struct sdr_sr_unit *u; /* [nunits]: the slot's part of sdr_sr::units */
	uint32_t nchunks;      /* chunks of the message */
	uint32_t nunits;       /* nchunks, + 1 for the immediate-only packets (npkts < 8) */
	uint32_t units_acked;
	uint32_t ack_from;    /* cumulative point already walked */
	uint32_t retx_chunks; /* data chunks retransmitted at least once */
	uint64_t hold;        /* extra wait of the timers (cycles; EC: parity first) ... */
	uint64_t hold_bytes;  /* ... and the pacing time of these bytes at the rate in
	                         force (EC: the message's data and parity) */
	uint8_t txdone;       /* every packet transmitted once; waits for the ACK */
};

/** Receiver state of one receive slot. */
struct sdr_sr_recv {
	uint32_t ack_cum;    /* chunks below this are all in (private bitmap) */
	uint8_t ack_pending; /* listed for the next ACK */
};

/** A final ACK entry waiting to be sent (receiver). */
struct sdr_sr_fin {
	uint64_t due; /* send at or after this TSC */
	uint32_t seq, cum, lost;
	uint8_t flags;  /* SDR_ACK_F_FULL or SDR_ACK_F_CLOSED */
	uint8_t copies; /* sent so far */
};
#define SDR_SR_FIN_CAP 4096
/* --cc-ack-pkts' ACKs: at most one per this many us (or per --sr-ack-us if
 * shorter) - at 25 ms and 100 Gbit/s still 250 a round trip */
#define SDR_SR_FB_GAP_US 100

/** A hole report of the receiver (docs/wire-format.md §6 "Holes"): the
 *  packets of a chunk that had arrived, kept until the chunk is sent again. */
struct sdr_sr_hole {
	uint64_t rx_tsc; /* when it arrived (0: slot free) */
	uint64_t due;    /* the chunk is lost at this TSC, unless acknowledged (0: no decision) */
	uint64_t have;   /* bit i: packet first + i of the chunk arrived */
	uint32_t seq, chunk;
	uint16_t first; /* packets of the chunk below it arrived */
};
#define SDR_SR_HOLES 64 /* reports kept per QP (direct-mapped by seq and chunk) */

struct sdr_sr_hooks; /* a plug-in's hooks (sr_qp.h) */

/* Paths of one QP (entropy values of its packets, docs/multipath.md); 1 unless spraying */
#define SDR_SR_PATHS_MAX 16

/** Per-path loss detection state (RACK, "The RACK-TLP Loss Detection
 *  Algorithm for TCP", RFC 8985; docs/reliability.md "Loss detection"). */
struct sdr_sr_path {
	uint64_t rack_tsc; /* send time of the most recently sent unit acked on this path */
	uint64_t rack_rtt; /* the RTT of that unit (RFC 8985 RACK.rtt; cycles) */
	uint32_t rack_seq, rack_chunk; /* that unit (ties of rack_tsc: the order of sending) */
	uint64_t srtt;                 /* smoothed RTT of its samples (cycles; 0 = none yet) */
	uint64_t min_rtt;              /* smallest RTT sample (cycles; 0 = none yet) */
	uint64_t reo_wnd;              /* reordering window (cycles; 0 = min_rtt / 4), widened by
	                       spurious retransmissions and reordering seen */
	uint32_t reo_left;             /* losses until a widened reo_wnd goes back to min_rtt / 4 */
	uint64_t samples;              /* RTT samples taken on it */
	uint64_t rack_lost;            /* units declared lost by RACK on it */
	uint64_t spurious;             /* retransmissions of units of it found spurious */
};

/** What a scheme on top wants to hear (AUTO's estimates). */
struct sdr_sr_events {
	void *ctx;
	/** An RTT sample of @p cycles (Karn). */
	void (*rtt)(void *ctx, struct sdr_qp *qp, uint64_t cycles);
	/** Send @p sm completed FULL; @p ss its SR state, @p rx_lost the
	 *  receiver's count of chunks lost on their first transmission. */
	void (*full)(void *ctx, struct sdr_qp *qp, const struct sdr_smsg *sm,
		     const struct sdr_sr_send *ss, uint32_t rx_lost);
};

struct sdr_sr {
	/* sender */
	struct sdr_sr_unit *units; /* [SDR_MAX_MSGS][units_max], sized at init */
	uint32_t units_max;        /* units of the longest message */
	struct sdr_rtt rtt;
	struct sdr_tq timers;       /* (seq, unit, tx time) in transmit order */
	struct sdr_tq retxq;        /* units to retransmit */
	struct sdr_tq_ent retx_cur; /* unit being retransmitted */
	uint32_t retx_pkt;          /* next packet of retx_cur; UINT32_MAX = none */
	uint64_t backoff_tsc;       /* no further RTO backoff before this */
	uint64_t probe_tsc;         /* probing: next unit may be retransmitted at this TSC */
	uint64_t ack_rx_tsc;        /* last ACK from the peer (0: none yet) */
	uint8_t probing;            /* no ACK for an RTO: one unit per RTO until the peer
	                         answers (RFC 6298 5.4/5.5) */
	uint8_t full_copies;        /* final FULL entries sent per receive (EC: 2) */
	/* stall: probing began with data outstanding (the peer silent for an
	 * RTO); it ends at the first ACK (docs/reliability.md "Faults: link
	 * outages"). Read by the main lcore for stats, JSON, metrics, /ops */
	uint64_t stall_tsc;         /* stalled since; 0 = not stalled */
	uint64_t outage_last_ms;    /* the last stall that ended */
	uint64_t outage_longest_ms; /* the longest one */
	uint64_t resume_tsc;        /* the last stall ended: units sent before give no RTT
	                               sample (their ACKs waited for the path) */
	/* loss detection (RACK-TLP, docs/reliability.md "Loss detection") */
	uint64_t rack_due;  /* re-check the RACK rule at this TSC (0 = nothing pending) */
	uint64_t tlp_base;  /* the last unit (re)transmitted: the probe's timer runs from it */
	uint64_t rto_after; /* a tail-loss probe re-armed the RTO: none expires before */
	uint8_t tlp_done;   /* the tail-loss probe went out; none again until progress */
	/* the receiver's hole reports (docs/reliability.md "Loss detection") */
	struct sdr_sr_hole holes[SDR_SR_HOLES];
	uint64_t holes_due;  /* the earliest decision a report waits for (0: none) */
	uint64_t retx_have;  /* retx_cur: bit i = packet retx_hbase + i arrived ... */
	uint32_t retx_hbase; /* ... (UINT32_MAX: no report, every packet goes) */
	/* late timers: the worker was off its CPU (sdr_sr_late()) */
	uint64_t wake_at;    /* the sender's earliest deadline after the last pass (0: none) */
	uint64_t late_until; /* the time missed: no RTO or probe before this ... */
	uint64_t late_len;   /* ... late_len after the late pass */
	uint64_t late_sum;   /* time excused since the last progress (at most 1 s) */
	struct sdr_sr_events events;
	/* paths: loss detection per path (RACK); path[0] unless spraying */
	struct sdr_sr_path path[SDR_SR_PATHS_MAX];
	uint8_t npaths; /* paths in use (>= 1) */
	/* the plug-in the reliable-QP core calls (sr_qp.h; the EC engine), or
	 * NULL: plain SR */
	const struct sdr_sr_hooks *hooks;
	void *hook_ctx;
	struct sdr_sr_send snd[SDR_MAX_MSGS];
	/* congestion control (sr_cc.h): its sender and receiver parts */
	struct sdr_sr_cc cc;
	/* multipath spraying (sr_path.h): the path of each unit */
	struct sdr_spray spray;
	uint8_t spray_want; /* paths asked (qp->paths, else --paths); spray.n once connected */
	uint8_t spray_retx; /* path of the unit being retransmitted (retx_cur) */
	uint32_t spray_qpn; /* the remote QPN spray's ports were made for */
	uint32_t spray_ce;  /* CE marks echoed, not yet shared among the paths (an
			       ACK between units acknowledges no unit) */
	/* receiver */
	uint16_t ack_dirty[SDR_MAX_MSGS]; /* slots with news for the sender */
	uint32_t nack_dirty;
	uint64_t ack_due;    /* send the pending ACK entries at this TSC */
	uint64_t ack_period; /* --sr-ack-us in cycles */
	uint64_t ack_tx_tsc; /* the last ACK left */
	uint64_t fb_gap;     /* --cc-ack-pkts: at most one of its ACKs per this */
	uint32_t fb_pkts;    /* --cc-ack-pkts (0: off) */
	uint8_t fb_due;      /* the ACK due was brought forward by it */
	/* Final entries (FULL / CLOSED) of completed receives, queued at
	 * completion: they do not live in the slot, so reposting it cannot
	 * lose them (docs/reliability.md "Acknowledgement is a guarantee") */
	struct sdr_sr_fin *fin; /* [SDR_SR_FIN_CAP] FIFO */
	uint32_t fin_head, fin_n;
	uint8_t ack_now;   /* a final entry is waiting: flush in this loop */
	uint64_t fin_next; /* earliest later-due final entry, 0 = none */
	struct sdr_sr_recv rcv[SDR_MAX_MSGS];
	struct sdr_rdone done[SDR_MAX_MSGS]; /* the last final entry of each slot */
};

/* ---- set-up (main lcore) ---- */
/** Everything the engine will use on @p qp's worker is allocated here,
 *  sized from the QP's limits (max_msg, MTU, chunk): unit state for every
 *  send slot, the timer and retransmit queues. */
int sdr_sr_init(struct sdr_sr *sr, const struct sdr_qp *qp);
void sdr_sr_fini(struct sdr_sr *sr);
/** Forget every live entry (the QP's sends and receives were completed). */
void sdr_sr_reset(struct sdr_sr *sr);

/* ---- sender ---- */
/** Per-send state for @p sm. @return 0 or -ENOMEM. */
int sdr_sr_send_prepare(struct sdr_qp *qp, struct sdr_sr *sr, struct sdr_smsg *sm);
static inline struct sdr_sr_send *sdr_sr_send_of(struct sdr_sr *sr, uint32_t seq)
{
	return &sr->snd[sdr_seq_msg_id(seq)];
}
/** Packet @p pkt_off of @p sm left on its first pass. */
void sdr_sr_unit_sent(struct sdr_qp *qp, struct sdr_sr *sr, const struct sdr_smsg *sm,
		      uint32_t pkt_off, uint64_t now);
/** The earliest TSC at which sdr_sr_tx() or sdr_sr_poll() has timer work
 *  (retransmission timers, ACKs due, the outage horizon); UINT64_MAX if
 *  none. */
uint64_t sdr_sr_next_due(const struct sdr_qp *qp, const struct sdr_sr *sr, uint64_t now);
/** Before the sender's pass (sdr_sr_qp_tx): when the pass comes more than
 *  max(2 ms, 4 ACK periods) after the sender's earliest deadline, the
 *  worker was off its CPU, and so were the ACKs it would have received:
 *  no RTO or tail-loss probe fires for the time missed (at most 1 s of it
 *  until something is acknowledged; sr_late_timers). */
void sdr_sr_late(struct sdr_qp *qp, struct sdr_sr *sr, uint64_t now);
/** Expired timers and retransmissions. @return packets sent. */
unsigned sdr_sr_tx(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_sr *sr, uint64_t now);
/** Queue unit @p unit of send @p sm for retransmission now (a NACK).
 *  @return 1 when queued (not already acknowledged, queued, or unsent). */
int sdr_sr_retransmit(struct sdr_worker *w, struct sdr_sr *sr, const struct sdr_smsg *sm,
		      uint32_t unit);
void sdr_sr_rx_ack(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_sr *sr, const uint8_t *msg,
		   size_t len, const struct sdr_ctrl_hdr *h, uint64_t now);

/* ---- receiver ---- */
/** Slot @p slot has news for the sender (a chunk, a duplicate). */
void sdr_sr_rx_note(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_sr *sr, uint32_t slot,
		    uint64_t now);
/** --cc-ack-pkts ECN-capable data packets arrived since the last ACK, the
 *  last one for slot @p slot: an ACK (of its progress, with the echo) goes
 *  one fb_gap after the last ACK at the latest (docs/congestion.md
 *  "Feedback between units"). */
void sdr_sr_rx_feedback(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_sr *sr, uint32_t slot,
			uint64_t now);
/** Receive @p slot completed with @p status (table state as completed):
 *  capture and queue its final entry (@p lost: EC's count, else 0). */
void sdr_sr_recv_final(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_sr *sr, uint32_t slot,
		       int32_t status, uint32_t lost, uint64_t now);
/** Receive @p slot of a restored QP completed before the restart (SQE flag
 *  DONE): its final ACK entry from the bitmap the host kept, FULL when its
 *  chunks are all set from the first to the last set one and its immediate
 *  is complete, else CLOSED; queued now and kept for retransmissions. */
void sdr_sr_recv_final_restored(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_sr *sr,
				uint32_t slot, uint64_t now);
/** A data packet of @p slot was dropped as @p drop: answer what it shows
 *  (the sender missed an ACK). */
void sdr_sr_rx_dropped(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_sr *sr,
		       const struct sdr_parsed *p, enum sdr_ctr drop, uint64_t now);

/* ---- timers ---- */
/** ACKs due, the send window, the outage horizon (qp->horizon_tsc: sets
 *  SDR_QPS_ERROR). */
void sdr_sr_poll(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_sr *sr, uint64_t now);
/** Receives that saw packets and then nothing for the outage horizon are
 *  completed in the receive table with -ETIMEDOUT: their slots go to
 *  @p slots (room for SDR_MAX_MSGS). @return how many. */
unsigned sdr_sr_recv_expired(struct sdr_qp *qp, struct sdr_sr *sr, uint64_t now, uint32_t *slots);

#endif /* SDR_SR_ENGINE_H */
