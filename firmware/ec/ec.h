/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Erasure-coding engine (layer ec; docs/reliability.md "Erasure coding"):
 * the plug-in of the reliable-QP core (sr_qp.h), Selective Repeat being its
 * fallback. The EC and AUTO schemes run the core with this plug-in and only
 * choose each send's code (sdr_eceng_use_code()).
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
 *
 * Names: sdr_eceng_* is this engine, sdr_ecfw_* its pure-C building blocks
 * (sdr_ecfw.h), sdr_ec_* the codec (common/sdr_ec.h).
 */
#ifndef SDR_EC_ENGINE_H
#define SDR_EC_ENGINE_H

#include "ec_counters.h"
#include "sdr_ec.h"
#include "sdr_ecfw.h"
#include "sr_qp.h"

/** Sender state of one send: its code (k == 0: no parity). */
struct sdr_eceng_send {
	uint8_t code, k, m;
	uint32_t sub;     /* submessage whose parity is being sent */
	uint32_t par_pkt; /* next parity packet of sub; UINT32_MAX = none pending */
};

/** Receiver state of one receive slot. */
struct sdr_eceng_recv {
	uint64_t post_tsc; /* when the receive was posted (RTT estimate) */
	uint64_t fto_due;  /* fallback timeout (0 = not armed) */
	uint32_t lost;     /* data chunks that did not arrive on their first
	                      transmission (decoded before the first FTO expiry,
	                      or missing at it); sent in the FULL ACK */
	uint8_t fto_fired; /* the fallback timeout expired once */
};

struct sdr_eceng_rmsg;

/** Codes of one QP at most: an EC QP's one, or AUTO's candidates. */
#define SDR_ECENG_CODES 8

/** A codec handle of the QP (created at QP creation, used by its worker
 *  only: decode has scratch space in the handle). */
struct sdr_eceng_codec {
	uint8_t code, k, m;
	struct sdr_ec *cd;
};

/** The engine's state of one QP. */
struct sdr_eceng {
	struct sdr_sr *sr;   /* the core it is plugged into (the QP's) */
	uint8_t code, k, m;  /* the QP's code (per message: the candidate with the
	                        most parity, which sizes the buffers) */
	uint8_t per_message; /* the sender picks the code per message (AUTO):
	                        receivers accept any of the QP's codes, learnt from
	                        parity */
	struct sdr_eceng_codec cd[SDR_ECENG_CODES]; /* the codes the QP sends and accepts */
	unsigned ncd;
	uint8_t *txpar;                         /* sender: m parity chunks being sent */
	uint8_t *zero;                          /* a zero chunk (padding of the last submessage) */
	uint8_t *shortc;                        /* a padded copy of a short last chunk */
	struct sdr_ecfw_pool pool;              /* receiver: parity chunks */
	struct sdr_eceng_rmsg *r[SDR_MAX_MSGS]; /* per receive slot, set at its first parity */
	uint8_t *rmsg_region; /* [SDR_MAX_MSGS][rmsg_stride]: the slots' receive state */
	size_t rmsg_stride;
	uint32_t nsub_max;            /* submessages of the largest message accepted */
	uint8_t k_min;                /* smallest k accepted (per message: of its candidates) */
	uint32_t armed[SDR_MAX_MSGS]; /* receives (numbers) with an armed FTO */
	uint32_t n_armed;
	uint64_t rtt_min; /* min CTS-to-first-packet time seen (cycles), 0 = none */
	uint64_t next_scan;
	struct sdr_eceng_send snd[SDR_MAX_MSGS];
	struct sdr_eceng_recv rcv[SDR_MAX_MSGS];
};

/* ---- set-up (main lcore) ---- */
/** Plug the engine into the core @p sr of @p qp (initialised): its hooks
 *  are installed, and a completed receive's FULL is sent twice. The QP's
 *  codes are the EC ones among @p codes (at most SDR_ECENG_CODES; the
 *  others are ignored): it sends with them and accepts parity of no other
 *  code. Everything is reserved here (codec handles, parity buffers,
 *  receive state sized for the smallest k and the largest m): the worker
 *  never allocates. @p per_message: the code is picked per message (AUTO).
 *  @return 0 or -ENOMEM (then sdr_eceng_fini()). */
int sdr_eceng_init(struct sdr_qp *qp, struct sdr_eceng *ec, struct sdr_sr *sr,
		   const struct sdr_scheme *codes, unsigned ncodes, int per_message);
/** Release what sdr_eceng_init() reserved (also after it failed). */
void sdr_eceng_fini(struct sdr_eceng *ec);

/* ---- sender (worker lcore) ---- */
/** Send @p sm (posted, about to be prepared by sdr_sr_qp_send_prepare())
 *  uses code (@p code, @p k, @p m); k == 0: no parity. */
void sdr_eceng_use_code(struct sdr_eceng *ec, const struct sdr_smsg *sm, unsigned code, unsigned k,
			unsigned m);

#endif /* SDR_EC_ENGINE_H */
