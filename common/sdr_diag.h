/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * "Where is it stuck": one sentence per operation not yet complete, in
 * plain words (common layer, no DPDK). One wording for the daemon's /ops
 * page (sdr-diag), the tools' timeout reports and libsdr's error texts.
 */
#ifndef SDR_DIAG_H
#define SDR_DIAG_H

#include <stddef.h>
#include <stdint.h>

/** A posted receive. Times in seconds before now; < 0 = never. */
struct sdr_diag_recv {
	uint32_t seq;
	double posted_ago;
	uint32_t chunks_got, chunks; /**< bitmap chunks landed / of the message */
	const uint64_t *chunk_bm;    /**< chunk bitmap (NULL: no missing ranges) */
	const char *peer;            /**< peer DPU address ("" or NULL: not known) */
	double last_pkt_ago;         /**< < 0: never, or not known when chunks_got > 0 */
	int no_rel;                  /**< the QP has no reliability scheme */
};

/** A send not yet complete. Times in seconds before now; < 0 = never. */
struct sdr_diag_send {
	uint32_t seq;
	double posted_ago;
	int waiting_cts;          /**< the peer's clear-to-send has not come */
	uint32_t pkts, pkts_sent; /**< data packets, and of those sent once */
	double rto;               /**< reliability: retransmission timeout now (0: none) */
	double last_ack_ago;      /**< the last acknowledgement of any send from the peer */
	int probing;              /**< no acknowledgement for a retransmission timeout: probing */
	unsigned backoff;         /**< the timeout's backoff factor (RTO / the estimates' RTO) */
	uint32_t chunks;          /**< reliability: the send's chunks (0: not known) ... */
	uint32_t unacked;         /**< ... of those, not acknowledged yet */
	double last_retx_ago;     /**< its last retransmission (< 0: none yet) */
	double stalled;           /**< > 0: the QP is stalled (its peer silent), this long */
	unsigned outage;          /**< stalled: which outage of the QP this is (1, 2, ...) */
};

/** "missing 18-63, 70, 72-80" of the clear bits below @p n of @p bm
 *  (at most @p max ranges, then "..."); into @p buf. @return length. */
size_t sdr_diag_missing(char *buf, size_t len, const uint64_t *bm, uint32_t n, unsigned max);

/** "recv #1234 posted 2.3 s ago, 17 of 64 chunks, missing 18-63, last
 *  packet from 10.99.1.1 1.9 s ago" (+ what loss without reliability
 *  means). @return length written (snprintf). */
int sdr_diag_recv_text(char *buf, size_t len, const struct sdr_diag_recv *d);

/** "send #88 waiting for the peer's clear-to-send for 4.0 s: the peer has
 *  not posted its receive", or the transmit / acknowledgement state (all
 *  sent, chunks known: "...: 12 of 16 chunks unacknowledged, last
 *  retransmission 40 ms ago"); on a stalled QP followed by "; stalled
 *  4.2 s (link silent), outage 3 of this QP". */
int sdr_diag_send_text(char *buf, size_t len, const struct sdr_diag_send *d);

/** The advice when a receive on a QP without reliability ended partial. */
extern const char sdr_diag_no_rel_hint[];

#endif /* SDR_DIAG_H */
