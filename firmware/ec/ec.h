/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Erasure-coding engine (docs/reliability.md "Erasure coding"), on top of
 * the Selective Repeat engine (its fallback). Used by the EC and AUTO
 * schemes, which pass the code of each send.
 *
 * Sender: a one-shot send is cut into submessages of k chunks (sdr_ecfw.h);
 * when the first transmission of a submessage's data has left, its m parity
 * chunks are encoded from the host buffer and sent, through the same
 * pacers, before the next submessage's data. The SR timers wait an extra
 * hold of one FTO + RTT. A NACK queues the chunks it lists for
 * retransmission at once.
 *
 * Receiver: parity packets fill buffers of a bounded per-QP pool; as soon
 * as any k of a submessage's k + m chunks are in, the missing data chunks
 * are decoded straight into the posted host buffer. The fallback timeout
 * (FTO), armed at the first packet of a receive, NACKs the submessages that
 * cannot be decoded, and re-arms.
 */
#ifndef SDR_EC_ENGINE_H
#define SDR_EC_ENGINE_H

#include "sdr_ec.h"
#include "sdr_ecfw.h"
#include "ec_counters.h"
#include "sr.h"

/** Sender state of one send: its code (k == 0: no parity). */
struct sdr_ec_send {
	uint8_t code, k, m;
	uint32_t sub;     /* submessage whose parity is being sent */
	uint32_t par_pkt; /* next parity packet of sub; UINT32_MAX = none pending */
};

/** Receiver state of one receive slot. */
struct sdr_ec_recv {
	uint64_t post_tsc; /* when the receive was posted (RTT estimate) */
	uint64_t fto_due;  /* fallback timeout (0 = not armed) */
	uint32_t lost;     /* data chunks that did not arrive on their first
	                      transmission (decoded before the first FTO expiry,
	                      or missing at it); sent in the FULL ACK */
	uint8_t fto_fired; /* the fallback timeout expired once */
};

struct sdr_ec_rmsg;

/** Codes of one QP at most: an EC QP's one, or AUTO's candidates. */
#define SDR_EC_QP_CODES 8

/** A codec handle of the QP (created at QP creation, used by its worker
 *  only: decode has scratch space in the handle). */
struct sdr_ec_qpcodec {
	uint8_t code, k, m;
	struct sdr_ec *cd;
};

struct sdr_ecq {
	uint8_t code, k, m;  /* the QP's code (per message: the candidate with the
	                        most parity, which sizes the buffers) */
	uint8_t per_message; /* the sender picks the code per message (AUTO):
	                        receivers accept any of the QP's codes, learnt from
	                        parity */
	struct sdr_ec_qpcodec cd[SDR_EC_QP_CODES]; /* the codes the QP sends and accepts */
	unsigned ncd;
	uint8_t *txpar;      /* sender: m parity chunks being sent */
	uint8_t *zero;       /* a zero chunk (padding of the last submessage) */
	uint8_t *shortc;     /* a padded copy of a short last chunk */
	struct sdr_ec_pool pool;            /* receiver: parity chunks */
	struct sdr_ec_rmsg *r[SDR_MAX_MSGS]; /* per receive slot, set at its first parity */
	uint8_t *rmsg_region; /* [SDR_MAX_MSGS][rmsg_stride]: the slots' receive state */
	size_t rmsg_stride;
	uint32_t nsub_max;    /* submessages of the largest message accepted */
	uint8_t k_min;        /* smallest k accepted (per message: of its candidates) */
	uint32_t armed[SDR_MAX_MSGS];       /* receives (numbers) with an armed FTO */
	uint32_t n_armed;
	uint64_t rtt_min;    /* min CTS-to-first-packet time seen (cycles), 0 = none */
	uint64_t next_scan;
	struct sdr_ec_send snd[SDR_MAX_MSGS];
	struct sdr_ec_recv rcv[SDR_MAX_MSGS];
};

/* ---- set-up (main lcore) ---- */
/** The QP's codes are the EC ones among @p codes (at most SDR_EC_QP_CODES;
 *  the others are ignored): it sends with them and accepts parity of no
 *  other code. Everything is reserved here (codec handles, parity buffers,
 *  receive state sized for the smallest k and the largest m): the worker
 *  never allocates. @p per_message: the code is picked per message (AUTO).
 *  @return 0 or -ENOMEM. */
int sdr_ec_init(struct sdr_qp *qp, struct sdr_ecq *ec, const struct sdr_scheme *codes,
		unsigned ncodes, int per_message);
void sdr_ec_fini(struct sdr_ecq *ec);
/** Forget every live receive state (the QP's receives were completed). */
void sdr_ec_reset(struct sdr_ecq *ec);

/* ---- sender ---- */
/** Send @p sm uses code (@p code, @p k, @p m); k == 0: no parity. Sets the
 *  SR timers' hold. */
void sdr_ec_send_prepare(struct sdr_qp *qp, struct sdr_ecq *ec, struct sdr_sr *sr,
			 struct sdr_smsg *sm, unsigned code, unsigned k, unsigned m);
/** Data packet @p pkt of @p sm left: encode a submessage it completed. */
void sdr_ec_data_sent(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_ecq *ec,
		      const struct sdr_smsg *sm, uint32_t pkt);
/** Send pending parity of @p sm, at most *@p budget packets (each taken
 *  off it). @return 1 when none is pending (any more) and budget is left
 *  for data; 0 when the pacer or the mbuf pool stalled it, or it used the
 *  last of the budget (the caller must not send more now). */
int sdr_ec_tx_parity(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_ecq *ec,
		     const struct sdr_smsg *sm, uint64_t now, unsigned *budget);
void sdr_ec_rx_nack(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_sr *sr, const uint8_t *msg,
		    const struct sdr_ctrl_hdr *h, uint64_t now);

/* ---- receiver ---- */
void sdr_ec_recv_posted(struct sdr_ecq *ec, uint32_t slot, uint64_t now);
/** A data packet was placed into @p slot (flags @p rc of the placement;
 *  not complete). */
void sdr_ec_rx_data(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_ecq *ec, struct sdr_sr *sr,
		    uint32_t slot, uint32_t pkt_off, int rc, uint64_t now);
void sdr_ec_rx_parity(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_ecq *ec,
		      struct sdr_sr *sr, const uint8_t *msg, size_t len, uint64_t now);
/** A parity packet before its ICRC is checked (from the QP's peer, with its
 *  key): @return 1 when it is dropped now (ec_parity_early) because its
 *  receive or submessage is complete; 0: take the full path. Reads only. */
int sdr_ec_rx_parity_early(struct sdr_worker *w, const struct sdr_qp *qp, const struct sdr_ecq *ec,
			   const uint8_t *msg, size_t len);
/** Receive @p slot completed (in the receive table) with @p status:
 *  release its EC state, queue its final ACK entry, post its completion. */
void sdr_ec_recv_done(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_ecq *ec,
		      struct sdr_sr *sr, uint32_t slot, int32_t status, uint64_t now);
/** Fallback timeouts. */
/** The earliest TSC at which sdr_ec_poll() has work (fallback timeouts
 *  armed); UINT64_MAX if none. */
uint64_t sdr_ec_next_due(const struct sdr_ecq *ec);
void sdr_ec_poll(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_ecq *ec, struct sdr_sr *sr,
		 uint64_t now);

#endif /* SDR_EC_ENGINE_H */
