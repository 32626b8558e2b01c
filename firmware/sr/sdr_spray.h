/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Multipath spraying policy of one QP (docs/multipath.md), pure C so that
 * unit tests drive it without the EAL: a QP sends each retransmission unit
 * on one of n paths (entropy values: UDP source ports, sdr_rss.h), chosen
 * by smooth weighted round robin; per path an RTT, loss and CE estimate per
 * round (one path SRTT) adjusts its weight in the way of PLB ("PLB:
 * Congestion Signals are Simple and Effective for Network Load Balancing",
 * SIGCOMM 2022): congested rounds in a row halve it, a clean round adds
 * one; a path whose units go unanswered for several SRTTs (or that loses
 * most of them) is suspended and probed later with one unit at a time. At
 * least half of the paths stay active (a suspension is a guess; a stall
 * of most of them is the QP's, which the SR engine handles).
 * Layer sr/ (a building block of the SR engine, like sdr_sr.h); time in TSC cycles.
 */
#ifndef SDR_SPRAY_H
#define SDR_SPRAY_H

#include <stdint.h>

#define SDR_SPRAY_MAX 16              /* paths per QP (SDR_RSS_PATHS_MAX) */
#define SDR_SPRAY_W_MAX 16            /* weight of a path at most */
#define SDR_SPRAY_W_INIT 8            /* weight of a path at the start */
#define SDR_SPRAY_CONG_ROUNDS 2       /* congested rounds in a row that halve a weight */
#define SDR_SPRAY_LOSS_MILLI 20       /* a round losing more than 2 % of its units is lossy */
#define SDR_SPRAY_DEAD_LOSS_MILLI 250 /* loss estimate above 25 % of units: suspended */
#define SDR_SPRAY_STALL_SRTT \
	3                           /* no ACK for this many SRTTs (and an RTO) of a waiting
                                      unit while units sent later on other paths were
                                      answered: stalled */
#define SDR_SPRAY_PROBE_SRTT 8      /* a suspended path is probed after this many SRTTs */
#define SDR_SPRAY_PROBE_SHIFT_MAX 6 /* ... doubled per failed probe, up to 64 times */
#define SDR_SPRAY_TX_RING 8         /* send times of a path's latest units kept */

enum sdr_spray_state {
	SDR_SPRAY_ACTIVE = 0,
	SDR_SPRAY_SUSPENDED = 1, /* stalled or lossy: one probe unit per probe interval */
};

/** One path (entropy value) of a QP. */
struct sdr_spray_path {
	uint64_t srtt, min_rtt; /* its RTT samples (cycles; 0 = none yet) */
	uint64_t pend_tsc;      /* a unit sent on it waits for its ACK since (0 = none) */
	uint64_t tx_ring[SDR_SPRAY_TX_RING];       /* send times: unit k (of units) in slot k % 8 */
	uint64_t last_tx_tsc;                      /* last unit sent on it */
	uint64_t round_end;                        /* the current round ends (cycles) */
	uint64_t probe_tsc;                        /* suspended: the next probe unit at */
	int32_t credit;                            /* smooth weighted round robin */
	uint32_t r_acked, r_lost, r_ce, r_delayed; /* this round's units */
	uint32_t loss_milli, ce_milli;             /* per-round fractions, smoothed (x1000) */
	uint16_t sport;                            /* its UDP source port */
	uint8_t state;                             /* enum sdr_spray_state */
	uint8_t weight;                            /* 1..SDR_SPRAY_W_MAX */
	uint8_t cong;                              /* congested rounds in a row */
	uint8_t probes;                            /* failed probes in a row */
	uint8_t probing;                           /* its probe unit is out */
	uint8_t revived;                           /* active again after a probe, its weight
                                                      not yet back at SDR_SPRAY_W_INIT */
	/* counters (stats) */
	uint64_t units, acked, lost, ce, suspends, probes_sent, halvings;
	uint64_t frames;      /* data packets sent on it (first passes and retransmissions) */
	uint64_t retx_frames; /* of which retransmissions */
	uint64_t moved;       /* its units sent again on another path when it was suspended */
};

/** The paths of one QP. n <= 1: no spraying (the template's port). */
struct sdr_spray {
	uint8_t n;             /* paths (0/1: off) */
	uint8_t cur;           /* path of the next first-pass unit */
	uint64_t floor;        /* smallest stall wait (cycles) */
	uint64_t next_poll;    /* sdr_spray_poll() has work at or after this */
	uint64_t dflt_rtt;     /* a path's RTT before its first sample (cycles) */
	uint64_t newest_acked; /* the latest send time of a unit acknowledged (any path) */
	struct sdr_spray_path p[SDR_SPRAY_MAX];
};

/** @p n paths (1..SDR_SPRAY_MAX; more are cut) with source ports
 *  @p sports; @p floor: the smallest stall wait (ACK coalescing, jitter),
 *  @p dflt_rtt: a path's RTT before it has a sample. */
void sdr_spray_init(struct sdr_spray *s, unsigned n, const uint16_t *sports, uint64_t floor,
		    uint64_t dflt_rtt, uint64_t now);

/** The path of the next unit: a suspended path whose probe is due (one
 *  unit), else the active path of largest credit (smooth WRR). */
unsigned sdr_spray_pick(struct sdr_spray *s, uint64_t now);

/** A unit left on path @p p (all its packets). */
void sdr_spray_sent(struct sdr_spray *s, unsigned p, uint64_t now);

/** A unit of path @p p, sent at @p tx_tsc, acknowledged; @p rtt its
 *  sample (0: none, e.g. a retransmission). */
void sdr_spray_acked(struct sdr_spray *s, unsigned p, uint64_t tx_tsc, uint64_t rtt, uint64_t now);

/** A unit of path @p p was declared lost (timer, NACK, RACK). */
void sdr_spray_lost(struct sdr_spray *s, unsigned p);

/** @p n CE marks were echoed for units of path @p p. */
void sdr_spray_ce(struct sdr_spray *s, unsigned p, uint32_t n);

/** @p n CE marks echoed, shared among the paths by @p units (units that
 *  an ACK newly acknowledged per path). @return 0 when it acknowledged
 *  none (nothing to share by: the marks wait), else 1. */
int sdr_spray_ce_share(struct sdr_spray *s, const uint16_t *units, uint32_t n);

/** The whole QP stalled and its peer answers again: every suspended path
 *  is probed at once (a QP-wide outage says nothing of one path). */
void sdr_spray_resume(struct sdr_spray *s, uint64_t now);

/** Rounds and stalls; @p rto: the QP's RTO, the shortest stall (a path
 *  whose queue grows is not dead). @return a bit mask of the paths found
 *  stalled now (or whose probe went unanswered): their outstanding units
 *  should go to another path at once. A path suspended for its loss
 *  estimate is not in it: what it carries mostly arrives. */
uint32_t sdr_spray_poll(struct sdr_spray *s, uint64_t now, uint64_t rto);

/** @p rtt, a sample of path @p p, moved by the difference of the base
 *  RTTs (min_rtt) of path @p p and the slowest (@p slowest) or fastest
 *  active path that has a sample; never below 1. */
uint64_t sdr_spray_rtt_shift(const struct sdr_spray *s, unsigned p, uint64_t rtt, int slowest);

/** Active paths. */
unsigned sdr_spray_active(const struct sdr_spray *s);

/** The name of a path's state ("active", "suspended"). */
const char *sdr_spray_state_name(unsigned state);

#endif /* SDR_SPRAY_H */
