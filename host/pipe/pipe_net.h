/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file pipe_net.h
 * The network between the DCs of a pipeline: one definition that drives the
 * DES (pipe_des_run(): one FIFO per link at its rate, its delay, its loss),
 * the allocation policies' capacity constraints (pipe_cba.h) and the rig
 * (pipe_net_link_args(): the receiving daemon's per-peer link arguments).
 *
 * A network is D DCs and a list of directed emulated links. A link has a
 * name, the DC that receives its traffic and the set of DCs whose traffic it
 * carries; several senders on one link share its bottleneck. Every ordered
 * pair (from, to) is carried by at most one link; a pair in no link is "not
 * emulated" (no delay, no bottleneck: the sender's own rate only).
 *
 * Text format (docs/pipeline.md "Multi-DC model"), one item per line (or
 * separated by ';'), '#' starts a comment, words separated by blanks:
 *
 *     dcs 3                                        (optional: D, 2..6)
 *     link l12 to=2 from=1 delay=2.5ms rate=1gbit buffer=2MB loss=0
 *     link into3 to=3 from=0,1,2 delay=12.5ms rate=2gbit buffer=4MB
 *
 * Every word after to= and from= is one key of the firmware's link emulator
 * (docs/link-emulator.md: delay, jitter, rate, buffer, loss, ge, reorder,
 * dup, corrupt, seed, limit), checked by its own parser and passed to the
 * daemon verbatim in canonical form. A link of several paths (ECMP by the
 * UDP source port, docs/link-emulator.md "Paths") is written in the
 * emulator's own syntax (sdr_link_parse_paths()): the word '|' between the
 * keys of one path and those of the next, or paths=N for N identical paths:
 *
 *     link l01 to=1 from=0 delay=5ms rate=250mbit | delay=12.5ms rate=250mbit
 *     link l10 to=0 from=1 delay=5ms rate=250mbit paths=2
 *
 * Its paths are its FIFOs in the DES, its capacity is the sum of their
 * rates, its delay the longest path's (pipe_net_rate(), pipe_net_delay()).
 * Names: a letter, then
 * letters, digits, '_', '-', '.', at most PIPE_NET_NAME_MAX - 1 characters
 * (the firmware's per-peer profile names). Without a dcs line, D is one
 * more than the highest DC named.
 */
#ifndef SDR_PIPE_NET_H
#define SDR_PIPE_NET_H

#include <stddef.h>
#include <stdint.h>

#include "pipe.h"
#include "sdr_link.h"

/** Most links: one per ordered DC pair. */
#define PIPE_NET_MAX_LINKS (PIPE_MAX_DC * (PIPE_MAX_DC - 1))
/** Room for a link name, NUL included. */
#define PIPE_NET_NAME_MAX 24u
/** Room for a link's canonical emulator spec, NUL included (its paths). */
#define PIPE_NET_SPEC_MAX 1024u
/** Most paths of one link (the link emulator's). */
#define PIPE_NET_PATHS_MAX SDR_LINK_PATHS_MAX

/** What the DES and the policies read of one path of a link. */
struct pipe_net_path {
	uint64_t delay_ns; /**< one-way delay (jitter not included) */
	uint64_t rate_bps; /**< bottleneck rate; 0 = none */
	double loss;       /**< Bernoulli + long-run Gilbert-Elliott loss, i.i.d. */
};
/** Longest description pipe_net_load() reads. */
#define PIPE_NET_TEXT_MAX 65536u

struct pipe_net_link {
	char name[PIPE_NET_NAME_MAX];
	uint8_t to;                   /**< receiving DC */
	uint8_t from_mask;            /**< bit d: traffic of DC d takes this link */
	struct sdr_link_cfg cfg;      /**< the emulator keys, parsed (path 0's) */
	char spec[PIPE_NET_SPEC_MAX]; /**< canonical spec (sdr_link_paths_format()) */
	uint32_t npaths;              /**< 1..PIPE_NET_PATHS_MAX */
	struct pipe_net_path path[PIPE_NET_PATHS_MAX];
};

struct pipe_net {
	uint32_t dcs; /**< D */
	uint32_t nlinks;
	struct pipe_net_link link[PIPE_NET_MAX_LINKS];
	int8_t pair[PIPE_MAX_DC][PIPE_MAX_DC]; /**< [from][to]: link index, -1 = none */
};

/**
 * Parse a description (the format above; '\n' or ';' end an item).
 * @param why  receives "line N: ..." naming what is wrong (may be NULL)
 * @return 0, -EINVAL (syntax, unknown word, bad DC, a pair in two links, a
 *         name used twice or not valid, a DC >= dcs, an emulator key the
 *         link emulator refuses, more than PIPE_NET_MAX_LINKS links, no link).
 */
int pipe_net_parse(const char *text, struct pipe_net *net, char *why, size_t whylen);

/** pipe_net_parse() of the file @p path (at most PIPE_NET_TEXT_MAX bytes).
 *  @return 0, -EINVAL (as pipe_net_parse(), or too long), -errno (open/read). */
int pipe_net_load(const char *path, struct pipe_net *net, char *why, size_t whylen);

/** The network a configuration without a description means: D = @p c's DCs,
 *  one link per ordered pair of DCs, named "dA-dB", delay rtt/2, rate
 *  rate_bps, loss c->loss (buffer: the emulator's default). */
void pipe_net_default(const struct pipe_cfg *c, struct pipe_net *net);

/** @p c->net, or the default network of @p c built in @p tmp. */
const struct pipe_net *pipe_net_of(const struct pipe_cfg *c, struct pipe_net *tmp);

/** Link index carrying DC @p from's traffic to DC @p to, or -1 (not
 *  emulated, or a DC outside the network). */
int pipe_net_lookup(const struct pipe_net *net, uint32_t from, uint32_t to);

/** One-way delay from DC @p from to DC @p to in seconds (0 when not
 *  emulated); jitter is not included. A link of several paths: its longest
 *  path's (a message spread over the paths in proportion to their rates
 *  ends on every path at once, so its last byte arrives over that one). */
double pipe_net_delay(const struct pipe_net *net, uint32_t from, uint32_t to);

/** One-way delay from DC @p from to DC @p to in seconds that a packet of
 *  one UDP source port expects (a QP's clear-to-send and acknowledgments
 *  keep its port 0, which the ECMP hash puts on a path not known here): the
 *  mean of the link's path delays; pipe_net_delay() for a single path. */
double pipe_net_delay_ctl(const struct pipe_net *net, uint32_t from, uint32_t to);

/** Bottleneck rate of link @p l in bit/s: the sum of its paths' rates;
 *  0 = no bottleneck (a path without a rate makes the link unbounded). */
uint64_t pipe_net_rate(const struct pipe_net *net, int l);

/** Bernoulli loss of link @p l plus the long-run Gilbert-Elliott loss
 *  (docs/link-emulator.md), as one i.i.d. per-packet loss; 0 for l < 0.
 *  A link of several paths: its paths' losses weighted by their shares of
 *  the bytes (pipe_net_path_share()). */
double pipe_net_loss(const struct pipe_net *net, int l);

/** Paths of link @p l (1 for a plain link or l < 0). */
uint32_t pipe_net_paths(const struct pipe_net *net, int l);

/** Share of link @p l's bytes that a QP spraying over all its paths sends
 *  on path @p p: rate / sum of the rates (equal shares when a path has no
 *  rate); 1 for a single path. The DES's model of the sender's weighted
 *  round robin once its weights have settled (docs/pipeline.md). */
double pipe_net_path_share(const struct pipe_net *net, int l, uint32_t p);

/**
 * Check @p net against a finished configuration: every DC of the placement
 * is in the network. Ordered pairs that carry pipeline traffic but no link
 * are listed in @p unmapped (bit from*PIPE_MAX_DC + to; may be NULL): they
 * are legal ("not emulated") but usually an oversight worth a warning.
 * @return 0 or -EINVAL (message in @p why).
 */
int pipe_net_check(const struct pipe_net *net, const struct pipe_cfg *c, uint64_t *unmapped,
		   char *why, size_t whylen);

/**
 * The receiving daemon's per-peer link arguments for DC @p dc: one line per
 * link into @p dc, "NAME:IP[+IP...]:SPEC" (the value of one sdr-dpu
 * --link-peer), the IPs being @p addr[from] of the link's senders, in DC
 * order, SPEC the canonical spec with its paths' " | " written "|" (the
 * same paths; a line stays one word for a shell). Pairs into @p dc that are not emulated produce nothing (the daemon's
 * default lane).
 * @param addr  one IPv4 address per DC of the network (dotted quad)
 * @return characters written (without the NUL), -EINVAL (dc outside the
 *         network, a missing or malformed address), -ENOSPC (buffer too small).
 */
int pipe_net_link_args(const struct pipe_net *net, uint32_t dc, const char *const *addr, char *buf,
		       size_t len);

/** Write @p net in the text format (canonical specs), one item per line.
 *  @return 0 or -EIO. */
int pipe_net_write(FILE *f, const struct pipe_net *net);

/** 64-bit digest of the network (DCs, names, pairs, canonical specs). */
uint64_t pipe_net_digest(const struct pipe_net *net);

/* ---------------- flows ---------------- */

/** One cross-DC sending QP: a channel that crosses DCs. */
struct pipe_flow {
	uint16_t chan;
	uint8_t src_dc, dst_dc;
	int16_t link; /**< pipe_net link index, -1 = not emulated */
};

struct pipe_flows {
	uint32_t n;
	struct pipe_flow f[PIPE_MAX_FLOWS];
	int16_t of_chan[2 * PIPE_MAX_STAGES]; /**< flow index of a channel, -1 = local */
};

/** The cross-DC channels of finished @p c, in channel order, and their links. */
void pipe_flows_get(const struct pipe_cfg *c, const struct pipe_net *net, struct pipe_flows *fl);

#endif /* SDR_PIPE_NET_H */
