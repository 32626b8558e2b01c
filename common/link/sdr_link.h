/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Long-haul link emulator: the pure-C decision core (no DPDK).
 *
 * A link is described by one option string, e.g.
 *
 *     "delay=12.5ms,jitter=0.2ms,rate=1gbit,buffer=4MB,loss=1e-3,seed=7"
 *
 * (every key, unit and default is in docs/link-emulator.md). The core is fed
 * one arriving frame at a time (arrival time in ns, frame length) and returns a
 * verdict: dropped (and why) or delivered at a departure time, possibly
 * reordered, duplicated, or with bits to flip. It owns no packets and no clock,
 * so it can be tested with exact arithmetic on a simulated clock; the DPDK glue
 * (sdr_link_dpdk.h) holds the mbufs and releases them.
 *
 * Model, in the order it is applied to each arriving frame:
 *   0. outage: a frame arriving while the link is down (down=) is lost
 *      (dropped_down);
 *   1. bottleneck: a drop-tail FIFO of @c buffer bytes served at @c rate
 *      (which may follow a schedule, rate=R@T,R@T,...), shared with the
 *      emulator's own background traffic (bg=); a frame that does not fit in
 *      the backlog is dropped (dropped_buffer), otherwise it leaves the
 *      bottleneck when every byte ahead of it and its own len*8/rate have
 *      been sent; an ECN-capable frame that finds the backlog at or above
 *      the marking threshold (ecn=) is marked CE, a frame that is not ECN-
 *      capable is never marked; with ecnmark=dequeue the mark is decided
 *      when the frame leaves, on the backlog it leaves behind (the caller
 *      asks sdr_link_mark_at_exit() then);
 *   2. loss on the span: Gilbert-Elliott state step + per-state loss
 *      (dropped_ge), then Bernoulli loss (dropped_loss);
 *   3. propagation: + delay + uniform jitter in [0, jitter], clamped so a
 *      frame never departs before the previous in-order frame (jitter never
 *      reorders);
 *   4. reorder: with probability @c reorder the frame gets @c extra more delay
 *      and does not hold back the frames behind it, so they overtake it;
 *   5. duplicate: with probability @c dup a clean copy departs right after it;
 *   6. corrupt: with probability @c corrupt, 1..maxbits distinct random bits
 *      at byte offsets >= SDR_LINK_CORRUPT_MIN_OFFSET are flipped in the
 *      original (the RoCE ICRC must catch it).
 *
 * Every random feature draws from its own xoshiro256** stream derived from
 * @c seed, so the same seed and the same arrival sequence give the same
 * verdicts, and switching one feature on does not change another's decisions.
 *
 * Not thread-safe: one struct sdr_link per receive queue.
 */
#ifndef SDR_LINK_H
#define SDR_LINK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Corruption never touches the first 42 bytes (Ethernet 14 + IPv4 20 + UDP 8):
 *  flipped bits land in the UDP payload (BTH, payload, ICRC). */
#define SDR_LINK_CORRUPT_MIN_OFFSET 42u
/** Most bits one corruption event may flip (corrupt=P:MAXBITS). */
#define SDR_LINK_CORRUPT_MAX_BITS 32u
/** Default buffer (bytes) when rate= is set without buffer=: 1000 x 1500 B,
 *  the same as netem's default limit of 1000 packets of 1500 B. */
#define SDR_LINK_DEFAULT_BUFFER 1500000u
/** Default extra delay of a reordered frame (reorder=P without :TIME). */
#define SDR_LINK_DEFAULT_REORDER_NS 1000000u
/** Default most frames the DPDK glue holds at once (limit=). */
#define SDR_LINK_DEFAULT_LIMIT 65536u
/** Default seed. */
#define SDR_LINK_DEFAULT_SEED 1u
/** Most steps of a rate schedule, and most outages of down=. */
#define SDR_LINK_SCHED_MAX 16u

/** ECN field of an IPv4/IPv6 header (the low two bits of the TOS / traffic
 *  class byte, RFC 3168). */
enum sdr_link_ecn {
	SDR_LINK_ECN_NOT_ECT = 0,
	SDR_LINK_ECN_ECT1 = 1,
	SDR_LINK_ECN_ECT0 = 2,
	SDR_LINK_ECN_CE = 3,
};

/** One step of a capacity schedule: @c rate_bps from @c at_ns on (time since
 *  the link's first frame). */
struct sdr_link_rate_step {
	uint64_t at_ns;
	uint64_t rate_bps;
};

/** One outage: down from @c at_ns for @c len_ns (time since the first frame). */
struct sdr_link_outage {
	uint64_t at_ns;
	uint64_t len_ns;
};

/* Upper bounds the parser enforces (sanity, and no overflow in ns/bit math). */
#define SDR_LINK_MAX_DELAY_NS 10000000000ull     /**< 10 s */
#define SDR_LINK_MAX_SCHED_NS 604800000000000ull /**< 7 days: times of schedules */
#define SDR_LINK_MAX_RATE_BPS 10000000000000ull  /**< 10 Tbit/s */
#define SDR_LINK_MIN_RATE_BPS 1000ull            /**< 1 kbit/s */
#define SDR_LINK_MAX_BUFFER 1000000000000ull     /**< 1 TB */
#define SDR_LINK_MAX_LIMIT (1u << 24)

/** Parsed link description. Zero/false means "feature off". */
struct sdr_link_cfg {
	uint64_t delay_ns;         /**< fixed one-way delay */
	uint64_t jitter_ns;        /**< extra delay uniform in [0, jitter_ns] */
	uint64_t rate_bps;         /**< bottleneck rate, bits/s; 0 = no bottleneck */
	uint64_t buffer_bytes;     /**< bottleneck buffer (only with rate_bps) */
	double loss;               /**< Bernoulli loss probability */
	bool ge;                   /**< Gilbert-Elliott loss model on */
	double ge_p_gb;            /**< P(good -> bad) per frame */
	double ge_p_bg;            /**< P(bad -> good) per frame */
	double ge_loss_good;       /**< loss probability in the good state */
	double ge_loss_bad;        /**< loss probability in the bad state */
	double reorder;            /**< reorder probability */
	uint64_t reorder_extra_ns; /**< extra delay of a reordered frame */
	double dup;                /**< duplication probability */
	double corrupt;            /**< corruption probability */
	unsigned corrupt_max_bits; /**< flip 1..corrupt_max_bits bits */
	uint64_t seed;
	unsigned limit; /**< most frames held by the DPDK glue */
	/* a shared network (docs/link-emulator.md "Shared bottleneck") */
	unsigned nrate_steps; /**< rate schedule after the first rate (0 = fixed) */
	struct sdr_link_rate_step rate_step[SDR_LINK_SCHED_MAX];
	uint64_t ecn_kmin_bytes; /**< mark ECT frames from this backlog on; 0 = off */
	uint64_t ecn_kmax_bytes; /**< mark every ECT frame from here (>= kmin) */
	double ecn_pmax;         /**< marking probability just below kmax (linear
	                              from 0 at kmin, RED-like; 1 when kmin == kmax) */
	bool ecn_dequeue;        /**< decide the mark as the frame leaves the
	                              bottleneck, on the backlog behind it
	                              (ecnmark=dequeue), not as it arrives */
	bool arrival_spread;     /**< arrival=spread (the DPDK glue): frames that
	                              one poll, or a run of full polls, found
	                              together arrived over the time since the
	                              port was last found empty, evenly, not all
	                              at the poll (docs/link-emulator.md
	                              "Arrival times") */
	uint64_t bg_bps;         /**< background traffic into the bottleneck; 0 = none */
	uint64_t bg_on_ns;       /**< on/off background: on for this long ... */
	uint64_t bg_off_ns;      /**< ... then off for this long (0 = always on) */
	unsigned ndown;          /**< outages (down=) */
	struct sdr_link_outage down[SDR_LINK_SCHED_MAX];
};

/** Verdict kinds. */
enum sdr_link_action {
	SDR_LINK_DELIVER = 0,
	SDR_LINK_DROP_BUFFER, /**< bottleneck buffer full (drop-tail) */
	SDR_LINK_DROP_GE,     /**< Gilbert-Elliott loss */
	SDR_LINK_DROP_LOSS,   /**< Bernoulli loss */
	SDR_LINK_DROP_DOWN,   /**< the link is down (down=) */
};

/** What to do with one arriving frame. */
struct sdr_link_verdict {
	enum sdr_link_action action;
	bool reordered;              /**< got the reorder extra delay */
	bool ce;                     /**< mark the frame CE (it was ECN-capable) */
	bool ce_at_exit;             /**< ecnmark=dequeue: its mark is decided when
					  it leaves the bottleneck, at
					  bottleneck_exit_ns (sdr_link_mark_at_exit);
					  a reordered frame is decided at once, on
					  the backlog it found (ce) */
	bool duplicate;              /**< emit a copy at dup_depart_ns */
	uint8_t n_flips;             /**< bits to flip (0 = not corrupted) */
	uint64_t depart_ns;          /**< release time of the frame */
	uint64_t dup_depart_ns;      /**< release time of the copy (== depart_ns) */
	uint64_t bottleneck_exit_ns; /**< when its last bit left the bottleneck */
	uint32_t flip_bit[SDR_LINK_CORRUPT_MAX_BITS]; /**< bit index in the frame,
		bit b is (frame[b / 8] >> (b % 8)) & 1; all >= 8*42, distinct */
};

/*
 * Counters. One X-macro list yields the struct fields and their names, so a
 * new counter is one line and always has a name in stats output/telemetry.
 * "core" counters are kept by struct sdr_link; "glue" counters by the DPDK
 * part (zero when only the core is used).
 */
#define SDR_LINK_STATS(X)                                                      \
	X(pkts_in, "frames offered to the link")                               \
	X(bytes_in, "bytes offered to the link")                               \
	X(delivered, "frames that survive the link (decided to deliver)")      \
	X(bytes_delivered, "bytes of delivered frames")                        \
	X(delayed, "delivered frames with departure later than arrival")       \
	X(dropped_buffer, "dropped: bottleneck buffer full (drop-tail)")       \
	X(dropped_ge, "dropped: Gilbert-Elliott burst loss")                   \
	X(dropped_loss, "dropped: Bernoulli loss")                             \
	X(dropped_limit, "dropped: emulator holds 'limit' frames already")     \
	X(reordered, "frames given the reorder extra delay")                   \
	X(duplicated, "frames decided to be duplicated")                       \
	X(dup_failed, "duplicates not made (no mbuf in dup pool or no slot)")  \
	X(corrupted, "frames with bits flipped")                               \
	X(corrupt_short, "corruption skipped: frame <= 42 bytes")              \
	X(released, "frames (and copies) handed to the application")           \
	X(held, "frames held right now (current queue depth)")                 \
	X(max_held, "most frames held at once")                                \
	X(backlog_bytes, "bottleneck backlog at the last arrival (bytes)")     \
	X(max_backlog_bytes, "largest bottleneck backlog seen (bytes)")        \
	X(ge_bad_frames, "frames that found the Gilbert-Elliott bad state")    \
	X(max_release_lag_ns, "largest (release time - departure time), ns")   \
	X(dropped_down, "dropped: the link was down (down=)")                  \
	X(ect_in, "ECN-capable frames offered (ECT(0), ECT(1) or CE)")         \
	X(ce_marked, "ECN-capable frames marked CE at the bottleneck")         \
	X(bg_bytes, "background traffic offered to the bottleneck (bytes)")    \
	X(bg_dropped_bytes, "background traffic dropped: buffer full (bytes)") \
	X(rate_bps_now, "bottleneck rate at the last arrival (bit/s)")

/** All counters, uint64_t each, in SDR_LINK_STATS order. */
struct sdr_link_stats {
#define SDR_LINK_STATS_FIELD_(name, help) uint64_t name;
	SDR_LINK_STATS(SDR_LINK_STATS_FIELD_)
#undef SDR_LINK_STATS_FIELD_
};

/** xoshiro256** state (one per random feature). */
struct sdr_link_rng {
	uint64_t s[4];
};

enum sdr_link_stream {
	SDR_LINK_RNG_LOSS = 0,
	SDR_LINK_RNG_GE,
	SDR_LINK_RNG_JITTER,
	SDR_LINK_RNG_REORDER,
	SDR_LINK_RNG_DUP,
	SDR_LINK_RNG_CORRUPT,
	SDR_LINK_RNG_ECN,
	SDR_LINK_RNG_COUNT
};

/** One emulated link direction. Treat the fields as private. */
struct sdr_link {
	struct sdr_link_cfg cfg;
	struct sdr_link_rng rng[SDR_LINK_RNG_COUNT];
	uint64_t last_arrival_ns; /**< arrivals are clamped to be monotonic */
	uint64_t backlog_bits;    /**< bits in the bottleneck at last_arrival_ns */
	uint64_t drain_rem;       /**< fractional bits drained, in 1/1e9 bit */
	uint64_t last_depart_ns;  /**< in-order departure floor */
	bool ge_bad;              /**< Gilbert-Elliott state */
	bool started;             /**< origin_ns is set (the first frame came) */
	uint64_t origin_ns;       /**< time 0 of the schedules (rate, bg, down) */
	uint64_t bg_rem;          /**< fractional background bits, in 1/1e9 bit */
	struct sdr_link_stats stats;
};

/**
 * Parse a link option string into @p cfg (defaults filled in first).
 *
 * The spec is comma-separated key=value pairs; an empty string is a perfect
 * link. Keys: delay, jitter, rate, buffer, loss, ge, reorder, dup, corrupt,
 * seed, limit (see docs/link-emulator.md).
 *
 * @param spec    NUL-terminated option string (untrusted).
 * @param cfg     output; untouched on error.
 * @param err     if not NULL, receives a one-line message naming the key and
 *                what is wrong.
 * @param errlen  size of @p err.
 * @return 0, or -EINVAL (bad syntax, unknown or repeated key, bad number,
 *         unknown unit, value out of range, buffer= without rate=).
 */
int sdr_link_parse(const char *spec, struct sdr_link_cfg *cfg, char *err, size_t errlen);

/** Most paths of one link description (docs/link-emulator.md "Paths"). */
#define SDR_LINK_PATHS_MAX 8u

/**
 * Parse a link description of one or more paths: single-path specs
 * separated by '|' (at most SDR_LINK_PATHS_MAX; an empty one is a perfect
 * path), or one spec with paths=N: N identical paths whose seeds are
 * seed, seed + 1, ... (each its own random streams).
 *
 * @param cfg     out: SDR_LINK_PATHS_MAX entries; untouched on error.
 * @param npaths  out: the number of paths (1 for a plain spec).
 * @return 0 or -EINVAL (a message naming the path in @p err).
 */
int sdr_link_parse_paths(const char *spec, struct sdr_link_cfg *cfg, unsigned *npaths, char *err,
			 size_t errlen);

/**
 * Canonical text of @p npaths paths: "SPEC,paths=N" when they are what
 * paths=N makes, else "SPEC | SPEC | ..."; sdr_link_parse_paths() of it
 * gives the same paths. @return what snprintf() would have written.
 */
int sdr_link_paths_format(const struct sdr_link_cfg *cfg, unsigned npaths, char *buf, size_t len);

/** Fill @p cfg with the defaults (a perfect link, seed 1, default limit). */
void sdr_link_cfg_default(struct sdr_link_cfg *cfg);

/**
 * Write the canonical option string of @p cfg (every non-default key) into
 * @p buf. Parsing the result gives the same cfg.
 * @return the length snprintf() would have written (>= len means truncated).
 */
int sdr_link_cfg_format(const struct sdr_link_cfg *cfg, char *buf, size_t len);

/**
 * Initialise @p link from @p cfg (copied) and zero the counters.
 * @return 0, or -EINVAL if @p cfg violates the limits sdr_link_parse enforces.
 */
int sdr_link_init(struct sdr_link *link, const struct sdr_link_cfg *cfg);

/**
 * Decide the fate of one arriving frame.
 *
 * @param now_ns     arrival time; an arrival earlier than the previous one is
 *                   treated as arriving at the previous one's time.
 * @param frame_len  frame length in bytes (Ethernet header to last payload
 *                   byte, no FCS); 0 is treated as 1 for the bottleneck.
 * @param v          output verdict.
 * @return v->action.
 *
 * Cost (sdr-link-perf, x86-64 test VM, gcc -O2): ~4 ns/frame for delay only,
 * ~11 ns with rate+buffer+jitter+loss (a 128-bit division), ~22 ns with every
 * feature on.
 */
enum sdr_link_action sdr_link_decide(struct sdr_link *link, uint64_t now_ns, uint32_t frame_len,
				     struct sdr_link_verdict *v);

/**
 * sdr_link_decide() for a frame whose IP header carries the ECN field
 * @p ecn (enum sdr_link_ecn): an ECN-capable frame may come out with
 * v->ce set (the caller rewrites the field to CE and the IPv4 checksum).
 * sdr_link_decide() is this with SDR_LINK_ECN_NOT_ECT.
 */
enum sdr_link_action sdr_link_decide_ecn(struct sdr_link *link, uint64_t now_ns, uint32_t frame_len,
					 unsigned ecn, struct sdr_link_verdict *v);

/**
 * ecnmark=dequeue: decide the mark of an ECN-capable frame whose verdict had
 * ce_at_exit, as it leaves the bottleneck at @p exit_ns (its
 * bottleneck_exit_ns): the backlog then, behind it, against the marking
 * thresholds (counted in ce_marked). Exact when no frame arrived after
 * @p exit_ns before this call (an arrival after it counts as arriving at it):
 * ask for every frame whose exit time has come before feeding a later
 * arrival, in the order they arrived.
 * @return mark it CE.
 */
bool sdr_link_mark_at_exit(struct sdr_link *link, uint64_t exit_ns);

/**
 * Set time 0 of the link's schedules (rate=R@T, bg= on/off, down=) to
 * @p now_ns; without this call it is the arrival time of the first frame.
 * Call before the first frame.
 */
void sdr_link_set_origin(struct sdr_link *link, uint64_t now_ns);

/** Bottleneck rate in force at @p now_ns (bit/s; 0: no bottleneck). */
uint64_t sdr_link_rate_at(const struct sdr_link *link, uint64_t now_ns);

/** Is the link down (down=) at @p now_ns? */
bool sdr_link_is_down(const struct sdr_link *link, uint64_t now_ns);

/** Flip the bits listed in @p v in a contiguous frame of @p len bytes
 *  (bits beyond @p len are ignored). */
void sdr_link_corrupt_apply(uint8_t *frame, uint32_t len, const struct sdr_link_verdict *v);

/** Bottleneck backlog in bytes (rounded up) if a frame arrived at @p now_ns
 *  (does not change state; now_ns before the last arrival counts as it). */
uint64_t sdr_link_backlog_at(const struct sdr_link *link, uint64_t now_ns);

/** Number of counters in struct sdr_link_stats. */
unsigned sdr_link_stats_count(void);
/** Name of counter @p i (NULL if out of range). */
const char *sdr_link_stats_name(unsigned i);
/** One-line description of counter @p i (NULL if out of range). */
const char *sdr_link_stats_help(unsigned i);
/** Value of counter @p i (0 if out of range). */
uint64_t sdr_link_stats_value(const struct sdr_link_stats *s, unsigned i);

/**
 * Print a testpmd-like stats block:
 *
 *   ######## link emulator <title> ########
 *   RX-in:    packets: N  bytes: N
 *   ...
 */
void sdr_link_stats_print(FILE *f, const char *title, const struct sdr_link_stats *s);

/**
 * Mbufs the emulator may hold at once: frames in flight on the span
 * (bandwidth-delay product of min(rate, line_rate) x (delay + jitter +
 * reorder extra) / frame, times (1 + dup)), frames in the bottleneck buffer
 * (buffer / frame), plus a margin of 1/8 + 512 for bursts; capped at
 * cfg->limit + 512 since the glue never holds more than @c limit.
 *
 * @param frame_bytes    typical (smallest expected) frame size; 0 -> 64.
 * @param line_rate_bps  rate at which frames can arrive (the port speed).
 */
unsigned sdr_link_mbufs_needed(const struct sdr_link_cfg *cfg, unsigned frame_bytes,
			       double line_rate_bps);

/**
 * Check that a pool of @p pool_mbufs can feed the emulator and, if not, write
 * a message such as "link emulator needs 11104 mbufs (BDP of 1gbit x 12.5ms =
 * 1.5625MB = 1042 frames of 1500 B + buffer 4MB = 2667 frames + margin); the
 * pool has 8191; raise the pool size / -m or lower delay/rate/buffer".
 *
 * @return 0 if it fits, -ENOSPC if not (message in @p err).
 */
int sdr_link_check_pool(const struct sdr_link_cfg *cfg, unsigned frame_bytes, double line_rate_bps,
			unsigned pool_mbufs, char *err, size_t errlen);

/** Write a one-line message into @p err (if not NULL) - the parsers' errors
 *  (sdr_link_cfg.c, sdr_link_peers.c, and sdr-pipe's network and controller
 *  parsers). */
void sdr_link_seterr(char *err, size_t errlen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* PRNG, exposed for tests. */
/** Seed @p r from @p seed and a stream number with splitmix64. */
void sdr_link_rng_seed(struct sdr_link_rng *r, uint64_t seed, unsigned stream);
/** Next 64 random bits (xoshiro256**). */
uint64_t sdr_link_rng_next(struct sdr_link_rng *r);
/** Uniform double in [0, 1). */
double sdr_link_rng_unit(struct sdr_link_rng *r);

#ifdef __cplusplus
}
#endif

#endif /* SDR_LINK_H */
