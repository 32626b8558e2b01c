/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Long-haul link emulator: per-peer profiles (pure C, no DPDK).
 *
 * One receiving port can emulate several links at once: a *profile* is a
 * link description (everything sdr_link_parse() takes) plus the source IPv4
 * addresses whose frames take it. Frames from every address of one profile
 * share one emulated link instance - one bottleneck FIFO at one rate, one
 * buffer, one loss process - so a profile naming several peers is a shared
 * bottleneck. Frames from any other source (and frames that are not IPv4:
 * ARP, IPv6) take the default lane: the --link description, or a perfect
 * link when there is none.
 *
 * A profile is written
 *
 *     [NAME:]IP[+IP...]:SPEC        e.g.  into2:10.100.0.2+10.100.1.2:delay=12.5ms,rate=2gbit
 *
 * NAME (optional; letters, digits, '_', '-', '.', starting with a letter, at
 * most SDR_LINK_PROFILE_NAME_MAX - 1 characters; default "peerN") labels the
 * profile's counters. SPEC may be empty: those peers cross a perfect link
 * even when a default --link is set. An address may appear in one profile
 * only. docs/link-emulator.md "Per-peer links".
 *
 * SPEC may hold several paths (SPEC | SPEC ..., or paths=N; see
 * sdr_link_parse_paths()): a profile of N paths occupies N consecutive
 * lanes, one struct sdr_link each (own bottleneck, loss, schedule,
 * counters), named NAME/p0 ... NAME/pN-1; a frame of the profile takes path
 * sdr_link_frame_path() (a hash of its UDP source port). docs/link-emulator.md
 * "Paths".
 *
 * The default lane (--link) may hold paths too (sdr_link_plan_init_spec():
 * "default/p0" ... when it has several), chosen the same way.
 *
 * The lanes of a plan are its profiles (each one lane per path) in the
 * order they were added, then the default lane's paths (always last).
 * sdr_link_set runs one struct sdr_link per lane and picks the lane of each
 * frame by its source address, then its path; the DPDK glue
 * (sdr_link_dpdk.h) holds each lane's frames in a FIFO of its own.
 */
#ifndef SDR_LINK_PEERS_H
#define SDR_LINK_PEERS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sdr_link.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Most per-peer profiles of one port (the default lane comes on top). */
#define SDR_LINK_PROFILES_MAX 16u
/** Lanes of a plan: the profiles' paths and the default lane's paths. */
#define SDR_LINK_LANES_MAX (4u * SDR_LINK_PROFILES_MAX + 1u)
/** Most source addresses over all profiles of a plan. */
#define SDR_LINK_PEER_ADDRS_MAX 64u
/** Room for a profile name, NUL included (a lane's name has room for
 *  "/pK" more). */
#define SDR_LINK_PROFILE_NAME_MAX 24u
/** Name of the default lane in counters. */
#define SDR_LINK_DEFAULT_LANE_NAME "default"
/** limit= of the default lane when it is a perfect link (no --link): it
 *  holds frames only until the end of the burst that brought them. */
#define SDR_LINK_PERFECT_LIMIT 4096u

/** One lane: a profile (naddr > 0) or the default lane (naddr == 0). */
struct sdr_link_profile {
	char name[SDR_LINK_PROFILE_NAME_MAX + 4]; /**< NAME, or NAME/pK for a path */
	struct sdr_link_cfg cfg;                  /**< this lane's (path's) link */
	uint8_t npaths;                           /**< paths of the profile (>= 1) */
	uint8_t path;                             /**< this lane is path @c path of them:
						       the profile's first lane is this - path */
	bool emulated;                            /**< false: the default lane without --link */
	unsigned naddr;                           /**< source addresses (0 for the default lane) */
	uint32_t addr[SDR_LINK_PEER_ADDRS_MAX];   /**< IPv4, host byte order */
};

/** Profiles and the default lane of one receiving port. */
struct sdr_link_plan {
	unsigned nlanes; /**< profiles' paths + the default lane's paths (the last
			      lanes: sdr_link_plan_default_lane()) */
	struct sdr_link_profile lane[SDR_LINK_LANES_MAX];
	unsigned naddr; /**< every listed address, for the lookup */
	uint32_t addr[SDR_LINK_PEER_ADDRS_MAX];
	uint8_t lane_of[SDR_LINK_PEER_ADDRS_MAX];
};

/**
 * Start a plan with only the default lane: @p dflt (the --link
 * description), or a perfect link (delay 0, no bottleneck, limit
 * SDR_LINK_PERFECT_LIMIT, emulated = false) when @p dflt is NULL.
 */
void sdr_link_plan_init(struct sdr_link_plan *p, const struct sdr_link_cfg *dflt);

/**
 * The same with a default lane of @p npaths paths (1..SDR_LINK_PATHS_MAX,
 * @p dflt[0..npaths - 1], as sdr_link_parse_paths() gives them): lanes
 * "default/p0" ... "default/pN-1" when npaths > 1, a frame of another source
 * taking the path of its UDP source port (sdr_link_frame_path()), as in a
 * profile. @p dflt NULL: a perfect link (@p npaths ignored).
 * @return 0, or -EINVAL (@p npaths out of range; @p p untouched).
 */
int sdr_link_plan_init_paths(struct sdr_link_plan *p, const struct sdr_link_cfg *dflt,
			     unsigned npaths);

/**
 * Start a plan from the --link text @p spec (untrusted; everything
 * sdr_link_parse_paths() takes: one path, "A | B ..." or paths=N), or a
 * perfect default lane when @p spec is NULL.
 * @return 0, or -EINVAL with the parser's message in @p err.
 */
int sdr_link_plan_init_spec(struct sdr_link_plan *p, const char *spec, char *err, size_t errlen);

/** First lane of the default lane's paths (the default lane's path 0). */
unsigned sdr_link_plan_default_lane(const struct sdr_link_plan *p);

/**
 * Add a profile "[NAME:]IP[+IP...]:SPEC" (untrusted text) in front of the
 * default lane. The plan is unchanged on error.
 * @return 0, or -EINVAL (bad name, bad or repeated address, an address
 *  already in another profile, a name already used or "default", bad SPEC:
 *  the message of sdr_link_parse()), -ENOSPC (more than
 *  SDR_LINK_PROFILES_MAX profiles, SDR_LINK_LANES_MAX lanes or
 *  SDR_LINK_PEER_ADDRS_MAX addresses);
 *  a one-line message in @p err.
 */
int sdr_link_plan_add(struct sdr_link_plan *p, const char *spec, char *err, size_t errlen);

/** Lane of a frame from source @p ip (host byte order): its profile's first
 *  lane (path 0), or the default lane's (sdr_link_plan_default_lane()). */
unsigned sdr_link_plan_lane(const struct sdr_link_plan *p, uint32_t ip);

/** The plan has a profile, or its default lane emulates something: the
 *  emulator is worth attaching. */
bool sdr_link_plan_active(const struct sdr_link_plan *p);

/**
 * The source IPv4 address (host byte order) of an Ethernet frame, untagged
 * or with one 802.1Q tag. @return 0, or -1 (too short, not IPv4).
 */
int sdr_link_frame_src_ipv4(const uint8_t *frame, uint32_t len, uint32_t *ip);

/**
 * Path (0 .. @p npaths - 1) of a frame whose UDP source port is @p port:
 * ((port x 2654435761) mod 2^32) >> 16, mod npaths (a Fibonacci hash, so
 * consecutive ports spread); 0 when npaths <= 1. A sender picks a port per
 * path with it.
 */
unsigned sdr_link_path_of_port(uint16_t port, unsigned npaths);

/**
 * Path of an Ethernet frame (untagged or one 802.1Q tag) among @p npaths:
 * an IPv4 UDP frame by its source port, an IPv4 TCP frame by
 * (source port XOR destination port) (sdr_link_path_of_port()); any other
 * frame (not IPv4, a non-first fragment, too short) takes path 0.
 */
unsigned sdr_link_frame_path(const uint8_t *frame, uint32_t len, unsigned npaths);

/** The ECN field (enum sdr_link_ecn) of an IPv4 or IPv6 frame (untagged or
 *  one 802.1Q tag), or -1 (too short, not IP). */
int sdr_link_frame_ecn(const uint8_t *frame, uint32_t len);

/** Mark an ECN-capable IPv4/IPv6 frame CE in place (the IPv4 header checksum
 *  updated incrementally, RFC 1624; the RoCEv2 ICRC masks the field).
 *  @return 0, or -1 (not IP, too short, or not ECN-capable: unchanged). */
int sdr_link_frame_mark_ce(uint8_t *frame, uint32_t len);

/**
 * Canonical text of lane @p i: "NAME:IP+IP:SPEC" for a profile,
 * "default:SPEC" for the default lane ("default:" when it is a perfect
 * link). sdr_link_plan_add() of a profile's text gives back the same
 * profile; for a lane of a profile of several paths it is the whole
 * profile's text (every path: sdr_link_paths_format()).
 * @return what snprintf() would have written.
 */
int sdr_link_plan_format(const struct sdr_link_plan *p, unsigned i, char *buf, size_t len);

/** Text of lane @p i alone, for counters: sdr_link_plan_format() for a
 *  profile of one path, "NAME/pK:IP+IP:SPEC" (this path's SPEC) for a path
 *  of several. */
int sdr_link_plan_format_lane(const struct sdr_link_plan *p, unsigned i, char *buf, size_t len);

/** Mbufs every lane may hold together (the sum of sdr_link_mbufs_needed()
 *  over the lanes: each lane holds its own span and buffer). */
unsigned sdr_link_plan_mbufs_needed(const struct sdr_link_plan *p, unsigned frame_bytes,
				    double line_rate_bps);

/**
 * Lower lanes' limits so that the lanes together hold at most @p frames
 * frames, max-min fair: what a lane can hold at most is
 * min(sdr_link_mbufs_needed(), its limit); a lane that needs no more than an
 * equal share of what the others leave keeps its limit, the others get equal
 * shares of the rest (at least 1 frame). A lane's limit is never raised.
 */
void sdr_link_plan_cap(struct sdr_link_plan *p, unsigned frames, unsigned frame_bytes,
		       double line_rate_bps);

/** Sum of per-lane (or per-queue) counters: counts add, the max_ fields
 *  take the larger value. */
void sdr_link_stats_add(struct sdr_link_stats *sum, const struct sdr_link_stats *s);

/** One emulated link per lane of a plan, and the lane of each frame. */
struct sdr_link_set {
	struct sdr_link_plan plan;
	struct sdr_link link[SDR_LINK_LANES_MAX];
	uint32_t last_ip; /**< one-entry cache of the lookup */
	unsigned last_lane;
	bool last_valid;
};

/** Initialise every lane from @p plan (copied). @return 0 or -EINVAL. */
int sdr_link_set_init(struct sdr_link_set *s, const struct sdr_link_plan *plan);

/** Lane of a frame (its source address, then its path; non-IPv4: the
 *  default lane's path 0). */
unsigned sdr_link_set_lane(struct sdr_link_set *s, const uint8_t *frame, uint32_t len);

/**
 * sdr_link_decide() on the lane of @p frame (its first @p head_len bytes
 * are readable; @p frame_len is the whole frame's length).
 * @param lane out: the lane that decided.
 */
enum sdr_link_action sdr_link_set_decide(struct sdr_link_set *s, uint64_t now_ns,
					 const uint8_t *frame, uint32_t head_len,
					 uint32_t frame_len, unsigned *lane,
					 struct sdr_link_verdict *v);

#ifdef __cplusplus
}
#endif

#endif /* SDR_LINK_PEERS_H */
