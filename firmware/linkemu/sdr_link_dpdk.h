/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Long-haul link emulator, DPDK glue: an RX callback that sits on any
 * port/queue and turns it into the far end of an emulated long-haul link.
 *
 * Every burst returned by rte_eth_rx_burst() enters the emulator (arrival time
 * = TSC converted to ns at the moment the callback runs; with arrival=spread
 * in the default lane's cfg, evenly since the port was last found drained:
 * sdr_link_rx_process()); the callback then
 * returns, in place of the burst, the held frames whose departure time has
 * come (at most the caller's nb_pkts). It runs on every rx_burst call, also
 * when the port returned nothing, so an idle port still releases held frames:
 * the release granularity is the poll interval of the lcore.
 *
 * An instance runs one emulated link per lane of a plan (sdr_link_peers.h):
 * per-peer profiles chosen by the frame's source IPv4 address, and the
 * default lane for every other frame, each of them of one or several paths
 * chosen by the frame's UDP source port; an instance made from one struct
 * sdr_link_cfg has only the default lane, of one path.
 *
 * Held frames sit in a FIFO ring per lane (in-order frames: their departure
 * times are monotonic, O(1) per frame) and one binary min-heap (reordered
 * frames only, O(log n)); release takes the earliest of the lanes' FIFO
 * heads and the heap's top (O(lanes) per released frame). A lane holds at
 * most its cfg.limit frames; beyond that its arriving frames are dropped
 * (dropped_limit).
 *
 * Held frames keep their mbufs: the RX mempool must be big enough for the
 * bandwidth-delay product, see sdr_link_mbufs_needed()/sdr_link_check_pool().
 *
 * Threading: one struct sdr_link_rx per port/queue, used only by the lcore
 * that polls that queue. sdr_link_rx_stats() may be called from another lcore
 * (counters are read without locks; a value may be one burst old).
 */
#ifndef SDR_LINK_DPDK_H
#define SDR_LINK_DPDK_H

#include <stdint.h>

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include "sdr_link.h"
#include "sdr_link_peers.h"

#ifdef __cplusplus
extern "C" {
#endif

struct sdr_link_rx;

/**
 * Called for every frame (or copy) the emulator releases, just before it is
 * handed to the application. For tests and tracing; NULL disables it.
 * @param arrival_ns  when the original frame entered the emulator
 * @param depart_ns   the departure time the model gave it
 * @param release_ns  the emulator's clock when it was released (>= depart_ns)
 */
typedef void (*sdr_link_trace_fn)(const struct rte_mbuf *m, uint64_t arrival_ns, uint64_t depart_ns,
				  uint64_t release_ns, void *arg);

/** The emulator's clock: TSC converted to ns. */
uint64_t sdr_link_now_ns(void);

/**
 * Create an emulator instance that is not attached to any port; feed it with
 * sdr_link_rx_process(). sdr_link_rx_attach() is this plus the RX callback.
 *
 * @param cfg        link description (copied); see sdr_link_parse().
 * @param socket_id  NUMA socket for the holding structures (SOCKET_ID_ANY ok).
 * @param dup_pool   mempool for duplicates; NULL = the pool of the frame
 *                   being duplicated.
 * @return the instance, or NULL with rte_errno (and errno) set to
 *         EINVAL (bad cfg) or ENOMEM (no memory for cfg->limit entries:
 *         about 2 x 40 B per entry, from EAL memory, see -m).
 */
struct sdr_link_rx *sdr_link_rx_create(const struct sdr_link_cfg *cfg, int socket_id,
				       struct rte_mempool *dup_pool);

/**
 * The same with per-peer lanes: one emulated link per lane of @p plan
 * (copied). Memory: 32 B x the next power of two of each lane's limit
 * (FIFO) + 32 B x the sum of the limits (heap).
 * @return the instance, or NULL with rte_errno EINVAL / ENOMEM.
 */
struct sdr_link_rx *sdr_link_rx_create_plan(const struct sdr_link_plan *plan, int socket_id,
					    struct rte_mempool *dup_pool);

/**
 * Attach an emulator to RX queue @p queue of @p port with
 * rte_eth_add_rx_callback(). The port may be started or not.
 *
 * @return the instance, or NULL with rte_errno (and errno) set to
 *         EINVAL (bad cfg, or bad queue), ENODEV (no such port),
 *         ENOTSUP (ethdev built without RX callbacks), ENOMEM.
 */
struct sdr_link_rx *sdr_link_rx_attach(uint16_t port, uint16_t queue,
				       const struct sdr_link_cfg *cfg,
				       struct rte_mempool *dup_pool);

/** sdr_link_rx_attach() with per-peer lanes (sdr_link_rx_create_plan()). */
struct sdr_link_rx *sdr_link_rx_attach_plan(uint16_t port, uint16_t queue,
					    const struct sdr_link_plan *plan,
					    struct rte_mempool *dup_pool);

/**
 * Detach (if attached), free every held mbuf, and free @p rx. NULL is a no-op.
 * The caller must make sure no lcore is inside rte_eth_rx_burst() on that
 * port/queue (stop the worker, or call it from the polling lcore itself):
 * ethdev does not wait for running callbacks.
 */
void sdr_link_rx_detach(struct sdr_link_rx *rx);

/** arrival=spread: most frames of full polls held before they are admitted
 *  (sdr_link_rx_process()) */
#define SDR_LINK_PEND_MAX 512u

/**
 * Run the emulator on a burst, as the RX callback does, with an explicit
 * clock (tests, or an application that wants to call it itself).
 * With arrival=spread (the default lane's cfg), @p now_ns is when the
 * frames were found: they are taken to have arrived evenly since the last
 * call that found the port drained (fewer than @p max_pkts frames), and a
 * call with @p nb_pkts == @p max_pkts keeps them, unadmitted, and returns
 * nothing until such a call (or SDR_LINK_PEND_MAX frames) comes.
 *
 * @param pkts     in: @p nb_pkts new frames; out: the released frames.
 * @param max_pkts room in @p pkts (>= nb_pkts).
 * @param now_ns   arrival time of the new frames (arrival=poll, the default)
 *                 and release clock.
 * @return number of frames written to @p pkts.
 */
uint16_t sdr_link_rx_process(struct sdr_link_rx *rx, struct rte_mbuf **pkts, uint16_t nb_pkts,
			     uint16_t max_pkts, uint64_t now_ns);

/**
 * Release held frames that are due at @p now_ns without offering new ones
 * (same as sdr_link_rx_process() with nb_pkts = 0, except that with
 * arrival=spread it neither admits frames kept from full polls nor counts
 * as a poll that found the port drained).
 */
uint16_t sdr_link_rx_release(struct sdr_link_rx *rx, struct rte_mbuf **pkts, uint16_t max_pkts,
			     uint64_t now_ns);

/** Earliest departure time among held frames, UINT64_MAX if none. */
uint64_t sdr_link_rx_next_departure(const struct sdr_link_rx *rx);

/** Copy every counter (core + glue), summed over the lanes
 *  (sdr_link_stats_add()), into @p stats. */
void sdr_link_rx_stats(const struct sdr_link_rx *rx, struct sdr_link_stats *stats);

/** Lanes of the instance (the profiles' paths, then the default lane's). */
unsigned sdr_link_rx_nlanes(const struct sdr_link_rx *rx);
/** The plan the instance runs (lane names, addresses, descriptions). */
const struct sdr_link_plan *sdr_link_rx_plan(const struct sdr_link_rx *rx);
/** Counters of lane @p lane alone (zero if out of range). */
void sdr_link_rx_lane_stats(const struct sdr_link_rx *rx, unsigned lane,
			    struct sdr_link_stats *stats);

/** Install (or with NULL remove) a per-release trace hook. */
void sdr_link_rx_set_trace(struct sdr_link_rx *rx, sdr_link_trace_fn fn, void *arg);

/** The configuration of the instance's default lane (its path 0). */
const struct sdr_link_cfg *sdr_link_rx_cfg(const struct sdr_link_rx *rx);

/** Flip the bits of @p v in a (possibly multi-segment) mbuf chain. */
void sdr_link_corrupt_mbuf(struct rte_mbuf *m, const struct sdr_link_verdict *v);

#ifdef __cplusplus
}
#endif

#endif /* SDR_LINK_DPDK_H */
