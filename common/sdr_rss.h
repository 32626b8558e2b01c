/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Receive-side scaling as sdr-dpu uses it to steer a QP's packets to the
 * worker that owns the QP (docs/architecture.md "multiple workers",
 * docs/wire-format.md §4).
 *
 * A packet's UDP source port is derived from its destination QP's QPN
 * (sdr_rss_sport()), so the receiving DPU chooses it: where the port hashes
 * the UDP source port alone (Toeplitz, RTE_ETH_RSS_L4_SRC_ONLY) with the key
 * below and a redirection table whose entry i is queue i mod nq, the daemon
 * gives a new QP a QPN whose source port lands on the queue of the QP's
 * worker (sdr_rss_steers()). Elsewhere the hand-off ring carries packets
 * that arrive on another worker's queue.
 *
 * Multipath (docs/multipath.md): a QP may spray its packets over up to
 * SDR_RSS_PATHS_MAX source ports, sdr_rss_sport_path(qpn, k): port k is
 * port 0 XOR a constant delta whose Toeplitz hash has its low
 * SDR_RSS_SPRAY_BITS bits zero. The hash is linear over XOR, so every port of
 * the set has the low bits of port 0's hash and lands on the same queue for
 * any queue count and any redirection table of up to 2^SDR_RSS_SPRAY_BITS
 * entries. Port 0 is sdr_rss_sport(qpn): one path is today's wire.
 *
 * The Toeplitz hash is the one of Microsoft's RSS specification (the
 * function NICs implement in hardware). Pure C.
 */
#ifndef SDR_RSS_H
#define SDR_RSS_H

#include <stddef.h>
#include <stdint.h>

#include "sdr_wire.h" /* SDR_UDP_SPORT_BASE */

#define SDR_RSS_KEY_LEN 40
/** The key sdr-dpu programs: the specification's example key (most PMDs'
 *  default as well). */
extern const uint8_t sdr_rss_key[SDR_RSS_KEY_LEN];

/** Toeplitz hash of @p len bytes of @p in under @p key (at least len + 4
 *  bytes long). */
uint32_t sdr_toeplitz(const uint8_t *key, const uint8_t *in, size_t len);

/** The UDP source port of packets to the QP whose block base is @p qpn:
 *  0xC000 | (qpn & 0x3FFF), in 49152..65535. */
static inline uint16_t sdr_rss_sport(uint32_t qpn)
{
	return (uint16_t)(SDR_UDP_SPORT_BASE | (qpn & 0x3FFFu));
}

/** Ports per QP at most (entropy values of multipath spraying). */
#define SDR_RSS_PATHS_MAX 16
/** Low hash bits every port of a QP's set shares: RETAs up to 512 entries. */
#define SDR_RSS_SPRAY_BITS 9
/** Delta k of the set (sdr_rss_sport_path()); delta 0 is 0. Each is below
 *  0x4000 (the set stays in 49152..65535) and its hash under sdr_rss_key
 *  has its low SDR_RSS_SPRAY_BITS bits zero. */
extern const uint16_t sdr_rss_path_delta[SDR_RSS_PATHS_MAX];

/** The UDP source port of path @p k (< SDR_RSS_PATHS_MAX) of packets to
 *  the QP whose block base is @p qpn; path 0 is sdr_rss_sport(qpn). */
static inline uint16_t sdr_rss_sport_path(uint32_t qpn, unsigned k)
{
	return (uint16_t)(sdr_rss_sport(qpn) ^ sdr_rss_path_delta[k & (SDR_RSS_PATHS_MAX - 1)]);
}

/** The queue a packet with UDP source port @p sport lands on when the port
 *  hashes the source port alone with sdr_rss_key into a redirection table
 *  of @p reta_size entries (a power of two), entry i = queue i mod @p nq. */
unsigned sdr_rss_queue(uint16_t sport, unsigned reta_size, unsigned nq);

/** Does the QP with block base @p qpn get its packets on queue @p queue? */
static inline int sdr_rss_steers(uint32_t qpn, unsigned queue, unsigned reta_size, unsigned nq)
{
	return sdr_rss_queue(sdr_rss_sport(qpn), reta_size, nq) == queue;
}

#endif /* SDR_RSS_H */
