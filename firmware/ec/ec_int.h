/* SPDX-License-Identifier: BSD-3-Clause */
/* Erasure-coding engine, inside (layer ec): what its files share (ec_core.c,
 * ec_send.c, ec_recv.c) and the hooks they implement for the reliable-QP
 * core (struct sdr_sr_hooks, installed by ec_core.c); not for other
 * modules. A hook's @p ctx is the QP's struct sdr_eceng. */
#ifndef SDR_EC_INT_H
#define SDR_EC_INT_H

#include "ec.h"

/* Receive-side EC state of one message (in the slot's part of
 * sdr_eceng::rmsg_region, set at its first parity). */
struct sdr_eceng_rmsg {
	uint32_t seq, msg_len, imm;
	uint8_t code, k, m;
	uint32_t par_pkts; /* parity packets accepted */
	struct sdr_ecfw_geom g;
	uint8_t *sub_done;         /* [nsub] complete or decoded */
	uint8_t *sub_par;          /* [nsub] parity buffers the submessage holds */
	struct sdr_ecfw_buf **par; /* [nsub * m] parity chunks being received */
};

/** Bytes of the receive state of a message of @p nsub submessages with
 *  @p m parity chunks each. */
static inline size_t sdr_eceng_rmsg_bytes(uint32_t nsub, uint32_t m)
{
	return sizeof(struct sdr_eceng_rmsg) + (size_t)nsub * m * sizeof(struct sdr_ecfw_buf *) +
	       2 * (size_t)nsub + 8;
}

/** The QP's codec for (code, k, m), or NULL: not one of its codes. */
struct sdr_ec *sdr_eceng_codec_of(const struct sdr_eceng *ec, unsigned code, unsigned k,
				  unsigned m);
/** Time one chunk (its frames) takes to inject at the QP's rate (cycles). */
uint64_t sdr_eceng_chunk_t_inj(const struct sdr_qp *qp);

/* ---- hooks, sender (ec_send.c) ---- */
/** The send's code (sdr_eceng_use_code()) and the SR timers' hold. */
void sdr_eceng_send_prepared(void *ctx, struct sdr_qp *qp, const struct sdr_smsg *sm);
/** Send pending parity of @p sm, at most *@p budget packets (each taken
 *  off it). @return 1 when none is pending (any more) and budget is left
 *  for data; 0 when the pacer or the mbuf pool stalled it, or it used the
 *  last of the budget (the caller must not send more now). */
int sdr_eceng_tx_parity(void *ctx, struct sdr_worker *w, struct sdr_qp *qp,
			const struct sdr_smsg *sm, uint64_t now, unsigned *budget);
/** Data packet @p pkt of @p sm left: encode a submessage it completed. */
void sdr_eceng_data_sent(void *ctx, struct sdr_worker *w, struct sdr_qp *qp,
			 const struct sdr_smsg *sm, uint32_t pkt);
/** A NACK: queue the chunks it lists for retransmission. */
void sdr_eceng_rx_nack(void *ctx, struct sdr_worker *w, struct sdr_qp *qp, const uint8_t *msg,
		       const struct sdr_ctrl_hdr *h, uint64_t now);

/* ---- hooks, receiver and fallback timeout (ec_recv.c) ---- */
void sdr_eceng_recv_posted(void *ctx, uint32_t slot, uint64_t now);
/** A data packet was placed into @p slot (not complete): decode what it
 *  makes decodable, arm the FTO. */
void sdr_eceng_data_placed(void *ctx, struct sdr_worker *w, struct sdr_qp *qp, uint32_t slot,
			   uint32_t pkt_off, int rc, uint64_t now);
void sdr_eceng_rx_parity(void *ctx, struct sdr_worker *w, struct sdr_qp *qp, const uint8_t *msg,
			 size_t len, uint64_t now);
/** A parity packet before its ICRC is checked (from the QP's peer, with its
 *  key): @return 1 when it is dropped now (ec_parity_early) because its
 *  receive or submessage is complete; 0: take the full path. Reads only. */
int sdr_eceng_rx_parity_early(const void *ctx, struct sdr_worker *w, const struct sdr_qp *qp,
			      const uint8_t *msg, size_t len);
/** Receive @p slot completes: release its EC state. @return its lost count. */
uint32_t sdr_eceng_recv_done(void *ctx, uint32_t slot);
/** The earliest TSC at which sdr_eceng_poll() has work (fallback timeouts
 *  armed); UINT64_MAX if none. */
uint64_t sdr_eceng_next_due(const void *ctx);
/** Fallback timeouts: NACK what cannot be decoded. */
void sdr_eceng_poll(void *ctx, struct sdr_worker *w, struct sdr_qp *qp, uint64_t now);
/** Forget every live receive state (the QP's receives were completed). */
void sdr_eceng_reset(void *ctx);

#endif /* SDR_EC_INT_H */
