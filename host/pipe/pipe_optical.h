/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file pipe_optical.h
 * The optical layer in simulation: an elastic optical network between the
 * DCs of a pipeline, where every cross-DC transfer is a lightpath request
 * (routing and spectrum assignment, RSA), after the CBA paper (arXiv
 * 2512.20080, docs/papers.md §4). docs/pipeline.md §6 "Optical layer" has
 * every choice and its sensitivity.
 *
 *  - Topology: undirected links with lengths in km, each a fibre pair
 *    (one spectrum per direction); NSFNET (14 nodes, 22 links) built in.
 *  - Candidate paths: the K shortest loopless paths by length (Yen), ties
 *    by hops then node sequence.
 *  - Spectrum: @c fs frequency slots per fibre; a request of n slots takes
 *    n + guard contiguous slots, the same on every fibre of its path
 *    (continuity), at the lowest index where they are free (first fit).
 *  - RSA algorithms: KSP-FF (the first of the K paths, in length order,
 *    with a fit), SD-FF (the shortest path only), CD (among the K paths
 *    with a fit, the lowest cost: length / shortest length + mean slot
 *    use of its fibres + share of the block's neighbour slots that are
 *    free, i.e. congestion, distance and neighbour contiguity).
 *  - A pipeline (host/pipe/pipe.h programs, the DES engine of pipe_des.c):
 *    each cross-DC channel sends its transfers one at a time; a transfer
 *    requests a lightpath of n slots (fixed or drawn per request, or from
 *    the CBA rule of pipe_cba.h, unit: slots) on the path between its DCs' nodes and
 *    takes setup + bytes*8 / (n * slot rate) to send and the path's
 *    propagation more to arrive; the lightpath is held until it arrives. A
 *    blocked request waits for the next release in the network, or a fixed
 *    time, and retries (or first retries at the minimum, opt_blocked).
 *  - Background: at each PP event (a transfer's first request), with some
 *    probability, a burst of lightpath requests between uniform random
 *    node pairs with uniform slot counts and exponential holding times.
 */
#ifndef SDR_PIPE_OPTICAL_H
#define SDR_PIPE_OPTICAL_H

#include <stddef.h>
#include <stdint.h>

#include "pipe.h"

#define OPT_MAX_NODES 32u
#define OPT_MAX_LINKS 64u                   /**< undirected */
#define OPT_MAX_FIBERS (2u * OPT_MAX_LINKS) /**< fibre 2l: a -> b, 2l+1: b -> a */
#define OPT_MAX_FS 128u
#define OPT_MAX_K 8u
#define OPT_MAX_HOPS 16u

/* ---------------- topology and paths ---------------- */

struct opt_topo {
	uint32_t nodes, nlinks;
	uint8_t a[OPT_MAX_LINKS], b[OPT_MAX_LINKS];
	double km[OPT_MAX_LINKS];
};

/** Empty topology of @p nodes nodes. */
void opt_topo_init(struct opt_topo *t, uint32_t nodes);
/** Add an undirected link. @return its index, or -EINVAL (bad node, a == b,
 *  duplicate, km <= 0, too many links). */
int opt_topo_add(struct opt_topo *t, uint32_t a, uint32_t b, double km);
/** NSFNET, 14 nodes (0-based: node i is the literature's i + 1) and 22 links
 *  with lengths in km (docs/pipeline.md §6 lists them and their source). */
void opt_topo_nsfnet(struct opt_topo *t);

struct opt_path {
	uint32_t hops;
	uint16_t fib[OPT_MAX_HOPS]; /**< directed fibres in order */
	uint8_t node[OPT_MAX_HOPS + 1];
	double km;
};

/** Up to @p K shortest loopless paths from @p src to @p dst by length (Yen's
 *  algorithm), shortest first; ties by hops, then node sequence.
 *  @return the number found (0: unreachable), or -EINVAL. */
int opt_ksp(const struct opt_topo *t, uint32_t src, uint32_t dst, uint32_t K, struct opt_path *out);

/* ---------------- spectrum ---------------- */

struct opt_spec {
	uint32_t nfib, nfs;
	uint64_t used[OPT_MAX_FIBERS][2]; /**< bit j: slot j in use */
};

void opt_spec_init(struct opt_spec *s, uint32_t nfib, uint32_t nfs);
/** Lowest start of @p width slots free on every fibre of @p p, or -1. */
int opt_first_fit(const struct opt_spec *s, const struct opt_path *p, uint32_t width);
/** Take (@p on) or release slots [start, start + width) on every fibre of @p p. */
void opt_spec_set(struct opt_spec *s, const struct opt_path *p, uint32_t start, uint32_t width,
		  int on);
/** Slots in use on fibre @p f. */
uint32_t opt_spec_count(const struct opt_spec *s, uint32_t f);

enum opt_alg { OPT_KSP_FF = 0, OPT_SD_FF, OPT_CD, OPT_ALG_COUNT };
const char *opt_alg_name(enum opt_alg a);
/** @return 0 or -EINVAL. */
int opt_alg_parse(const char *s, enum opt_alg *a);

/**
 * Route and assign @p width slots (request + guard) among @p n candidate
 * paths (shortest first) with algorithm @p alg.
 * @return the index of the chosen path (slot start in @p start), or -1
 *         (blocked: no candidate the algorithm may use has a fit).
 */
int opt_rsa(const struct opt_spec *s, enum opt_alg alg, const struct opt_path *cands, uint32_t n,
	    uint32_t width, uint32_t *start);

/* ---------------- the pipeline over the optical network ---------------- */

enum opt_blocked {
	OPT_BLOCKED_WAIT = 0, /**< wait for the next release, retry the same request */
	OPT_BLOCKED_MIN,      /**< retry at once with fs_min slots, then wait */
};

struct opt_cfg {
	struct opt_topo topo;
	uint32_t nfs;                     /**< slots per fibre (80) */
	double fs_bps;                    /**< bit/s per slot (75e9: 12.5 GHz at 64QAM) */
	uint32_t guard;                   /**< guard slots per lightpath (1) */
	uint32_t K;                       /**< candidate paths (4) */
	double s_per_km;                  /**< propagation (5e-6 s/km) */
	double setup;                     /**< s to set up a lightpath (0) */
	uint32_t dc_node[PIPE_MAX_DC];    /**< node of each DC */
	enum opt_alg alg;                 /**< for the pipeline's requests */
	int cba;                          /**< slots per request from the CBA rule */
	uint32_t fs_init;                 /**< slots of a request without CBA, CBA's start; 0 =
	                                   uniform in [fs_min, fs_max] per request (drawn
	                                   every iteration without CBA, once with it) */
	uint32_t fs_min, fs_max, fs_step; /**< rule's bounds and step */
	double intra_lat;                 /**< CB labels (s) */
	enum opt_blocked blocked;
	double retry;                  /**< s from a blocked request to its retry; 0 = at
	                                   the next release in the network */
	double bg_prob;                /**< burst probability per PP event (0.95) */
	uint32_t bg_count;             /**< requests per burst (60) */
	uint32_t bg_every;             /**< a PP event is every bg_every-th first request (1) */
	uint32_t bg_fs_min, bg_fs_max; /**< slots of a background request (4..20) */
	double bg_hold;                /**< mean holding time (0.2 s) */
	int bg_same_alg;               /**< background routed with alg (else KSP-FF) */
	int bg_first; /**< a burst is served before the PP request that caused it */
	uint64_t seed;
};

/** The CBA paper's setup: NSFNET, 80 slots of 75 Gbit/s, guard 1, K 4, 5 us/km,
 *  1..6 slots (drawn per request), background 0.95 x 60 of 4..20 slots for 0.2 s, DCs
 *  at the default sites (docs/pipeline.md §6). */
void opt_cfg_default(struct opt_cfg *oc);

/** What one iteration did. */
struct opt_iter {
	double iter_time, bubble;    /**< s; mean over stages */
	uint32_t pp_req, pp_blocked; /**< transfers; of them blocked at the first request */
	uint32_t pp_retries;         /**< further requests of blocked transfers */
	uint32_t bg_req, bg_blocked;
	double fs_mean;      /**< slots per granted PP lightpath */
	double wait_blocked; /**< s transfers spent blocked */
	uint32_t ncb;        /**< CB transfers */
};

/**
 * Run @p iters iterations of @p prog (a finished @p pc: its placement says
 * which DC, hence which node, each stage is in; act/grad bytes are the
 * transfer sizes) back to back over one network state; iteration i's slots
 * per request come from iteration i-1's labels and blocked requests when
 * oc->cba.
 * @return 0, -EINVAL (bad configuration: a DC node outside the topology,
 *         unreachable DCs, slot bounds, a request wider than a fibre),
 *         -ENOMEM, -EDEADLK.
 */
int opt_run(const struct opt_cfg *oc, const struct pipe_cfg *pc, const struct pipe_prog *prog,
	    uint32_t iters, struct opt_iter *out);

#endif /* SDR_PIPE_OPTICAL_H */
