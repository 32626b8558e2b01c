/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file pipe_proto.h
 * The bootstrap and controller protocol of sdr-pipe's runtime over D DCs
 * (pipe_run.c), as pure functions: message framing and encoding (explicit
 * little endian, every field checked on decode: the bytes come from another
 * process over TCP) and the clock-offset estimator. No sockets here.
 *
 * DC 0 is the coordinator; every other DC has one TCP connection to it.
 *
 *   peer -> 0   HELLO    its DC, D, the configuration digest, iterations, seed
 *   0 -> peer   HELLO    DC 0's (each side checks the other's)
 *   0 -> peer   PING     x PIPE_CLOCK_ROUNDS: DC 0's clock when sent
 *   peer -> 0   PONG     the same, plus the peer's clock when it answered
 *   0 -> peer   OFFSET   the peer's clock minus DC 0's, as DC 0 measured it
 *   peer -> 0   QPINFO   one QP info per cross-DC boundary the peer is an end of
 *   0 -> peer   QPINFO   the other ends' QP infos of the same boundaries
 *   per iteration i:
 *   0 -> peer   START    i, the start time (DC 0's clock), the rates of the
 *                        peer's sending QPs (one per cross-DC channel it sends)
 *   peer -> 0   EVENTS   i, the peer's events of iteration i (times relative
 *                        to the iteration's start)
 *   0 -> peer   BYE      after the last iteration's events
 *
 * Every message is a 12-byte header (magic "PIPM", type, zero flags, payload
 * length) and the payload. docs/pipeline.md "Multi-DC rig and runtime".
 */
#ifndef SDR_PIPE_PROTO_H
#define SDR_PIPE_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "pipe.h"
#include "sdr_abi.h" /* SDR_QP_INFO_WIRE */

#define PIPE_PROTO_MAGIC 0x4d504950u /* "PIPM" little endian */
#define PIPE_PROTO_VERSION 2u        /* 1: the two-DC protocol before it */
#define PIPE_PROTO_HDR 12u
/** Largest payload a receiver accepts (an iteration's events of one DC:
 *  64 stages x 2048 instructions x 48 B is 6 MiB). */
#define PIPE_PROTO_MAX_PAYLOAD (8u << 20)
/** Bytes of one event on the wire. */
#define PIPE_PROTO_EVENT_BYTES 48u
/** Ping-pong rounds of the clock-offset measurement. */
#define PIPE_CLOCK_ROUNDS 16u

enum pipe_msg_type {
	PIPE_MSG_HELLO = 1,
	PIPE_MSG_PING,
	PIPE_MSG_PONG,
	PIPE_MSG_OFFSET,
	PIPE_MSG_QPINFO,
	PIPE_MSG_START,
	PIPE_MSG_EVENTS,
	PIPE_MSG_BYE,
	PIPE_MSG_TYPES
};

/** Encode a header. */
void pipe_msg_hdr_put(uint8_t hdr[PIPE_PROTO_HDR], enum pipe_msg_type type, uint32_t len);
/** Decode and check a header: magic, a known type, flags zero, length at
 *  most PIPE_PROTO_MAX_PAYLOAD. @return 0 or -EPROTO. */
int pipe_msg_hdr_get(const uint8_t hdr[PIPE_PROTO_HDR], enum pipe_msg_type *type, uint32_t *len);

/* Each payload: an encoder returning its length (the buffer must hold it;
 * the sizes are below) and a decoder returning 0, or -EPROTO for a length
 * that does not match, or a field out of range. */

struct pipe_hello {
	uint32_t version; /**< PIPE_PROTO_VERSION */
	uint32_t dc;      /**< the sender's DC */
	uint32_t dcs;     /**< D as the sender's configuration has it */
	uint64_t digest;  /**< pipe_cfg_digest() */
	uint32_t iters;
	uint64_t seed;
};
#define PIPE_HELLO_BYTES 32u
size_t pipe_hello_put(uint8_t *b, const struct pipe_hello *h);
/** Also -EPROTO: dc >= PIPE_MAX_DC, dcs not 2..PIPE_MAX_DC, dc >= dcs. */
int pipe_hello_get(const uint8_t *b, size_t len, struct pipe_hello *h);

/** PING (peer_t unused) and PONG: DC 0's clock when it sent the ping, the
 *  peer's when it answered. */
struct pipe_ping {
	uint32_t seq;
	double t0, peer_t;
};
#define PIPE_PING_BYTES 24u
size_t pipe_ping_put(uint8_t *b, const struct pipe_ping *p);
/** Also -EPROTO: a time that is not finite. */
int pipe_ping_get(const uint8_t *b, size_t len, struct pipe_ping *p);

/** OFFSET: the peer's clock minus DC 0's (s) and the round trip of the
 *  sample it came from. */
struct pipe_offset {
	double offset, rtt;
};
#define PIPE_OFFSET_BYTES 16u
size_t pipe_offset_put(uint8_t *b, const struct pipe_offset *o);
/** Also -EPROTO: not finite, rtt < 0. */
int pipe_offset_get(const uint8_t *b, size_t len, struct pipe_offset *o);

/** One QP info of a cross-DC boundary (stage b | b+1), from DC @c dc. */
struct pipe_qpinfo {
	uint16_t boundary;
	uint8_t dc;
	uint8_t info[SDR_QP_INFO_WIRE]; /**< sdr_qp_info_encode() */
};
#define PIPE_QPINFO_BYTES (4u + SDR_QP_INFO_WIRE)
/** Payload: a count, then the entries. @return its length. */
size_t pipe_qpinfo_put(uint8_t *b, const struct pipe_qpinfo *q, uint32_t n);
/** @param max room in @p q. Also -EPROTO: more than @p max entries, a
 *  boundary >= PIPE_MAX_STAGES - 1, a dc >= PIPE_MAX_DC. */
int pipe_qpinfo_get(const uint8_t *b, size_t len, struct pipe_qpinfo *q, uint32_t max, uint32_t *n);

/** START: iteration, start time on DC 0's clock, one rate per cross-DC
 *  channel the receiving DC sends (0 = unpaced). */
struct pipe_start {
	uint32_t iter;
	double t_start;
	uint32_t n;
	uint16_t chan[PIPE_MAX_FLOWS];
	uint64_t rate[PIPE_MAX_FLOWS];
};
#define PIPE_START_BYTES(n) (16u + 16u * (n))
size_t pipe_start_put(uint8_t *b, const struct pipe_start *s);
/** Also -EPROTO: more than PIPE_MAX_FLOWS rates, a channel >=
 *  2 * PIPE_MAX_STAGES, a start time that is not finite. */
int pipe_start_get(const uint8_t *b, size_t len, struct pipe_start *s);

/** EVENTS: iteration @p iter, @p n events. */
#define PIPE_EVENTS_BYTES(n) (8u + PIPE_PROTO_EVENT_BYTES * (n))
size_t pipe_events_put(uint8_t *b, uint32_t iter, const struct pipe_event *ev, uint32_t n);
/**
 * Decode and append to @p out the events of a peer's EVENTS message. Every
 * event must be of iteration @p iter, of a stage of @p c placed in DC
 * @p dc, with a kind, op, micro-batch and channel in range and finite times.
 * @return the number of events, -EPROTO (anything else; @p out may have
 *  some of them), -ENOMEM.
 */
int pipe_events_get(const uint8_t *b, size_t len, const struct pipe_cfg *c, uint32_t dc,
		    uint32_t iter, struct pipe_events *out);

/* ---------------- clock offset ---------------- */

/** One ping-pong: DC 0 sent at t0 and got the answer at t2 (its clock), the
 *  peer answered at t1 (its clock). */
struct pipe_clock_sample {
	double t0, t1, t2;
};

/**
 * The peer's clock minus DC 0's from @p n samples: the sample with the
 * smallest round trip t2 - t0 (the least queuing), offset t1 - (t0 + t2) / 2.
 * Its error is at most half that round trip (all of it one way).
 * @return 0, or -EINVAL (no sample with a finite, non-negative round trip).
 */
int pipe_clock_offset(const struct pipe_clock_sample *s, uint32_t n, double *offset, double *rtt);

#endif /* SDR_PIPE_PROTO_H */
