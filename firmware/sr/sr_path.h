/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Multipath spraying in the SR engine (docs/multipath.md): the path (UDP
 * source port, sdr_rss_sport_path()) of every unit and retransmission, the
 * policy's events (sdr_spray.h) from the engine's sends, ACKs and losses,
 * and units of a path found dead moved to the others. One path (the
 * default): nothing changes, the template's port.
 * Layer sr/: part of the SR engine; calls only the primitives (prim/) and common/.
 */
#ifndef SDR_SR_PATH_H
#define SDR_SR_PATH_H

#include <stdio.h>

#include "sr.h"

struct sdr_kv;

/** Set-up (sdr_sr_init): the paths the QP asked for, else --paths. */
void sdr_sr_path_setup(struct sdr_sr *sr, const struct sdr_qp *qp);

/** Before the engine transmits (sdr_sr_qp_tx): the ports once the QP is
 *  connected (again), the policy's rounds, units of dead paths to the
 *  retransmit queue. */
void sdr_sr_path_tx_begin(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_sr *sr, uint64_t now);

/** Unit @p u finished its first pass (its last packet left at @p now): it
 *  went on the current path; the next unit's path is chosen. */
void sdr_sr_path_first_sent(struct sdr_qp *qp, struct sdr_sr *sr, struct sdr_sr_unit *u,
			    uint64_t now);

/** A retransmission of unit @p u starts: its path is chosen. */
void sdr_sr_path_retx_start(struct sdr_qp *qp, struct sdr_sr *sr, uint64_t now);
/** Before each retransmitted packet: its port (and the path's count). */
static inline void sdr_sr_path_retx_port(struct sdr_qp *qp, struct sdr_sr *sr)
{
	if (sr->spray.n > 1) {
		qp->tx_sport = sr->spray.p[sr->spray_retx].sport;
		sr->spray.p[sr->spray_retx].frames++;
		sr->spray.p[sr->spray_retx].retx_frames++;
	}
}

/** A data packet of a first pass left (on the current path's port). */
static inline void sdr_sr_path_pkt_sent(struct sdr_sr *sr)
{
	if (sr->spray.n > 1)
		sr->spray.p[sr->spray.cur].frames++;
}
/** The retransmission of @p u ended (its last packet left at @p now). */
void sdr_sr_path_retx_sent(struct sdr_qp *qp, struct sdr_sr *sr, struct sdr_sr_unit *u,
			   uint64_t now);
/** After the retransmissions: the port of the first pass again. */
static inline void sdr_sr_path_retx_end(struct sdr_qp *qp, const struct sdr_sr *sr)
{
	if (sr->spray.n > 1)
		qp->tx_sport = sr->spray.p[sr->spray.cur].sport;
}

/** Unit @p u (sent at u->tx_tsc) acknowledged; @p rtt its sample or 0. */
static inline void sdr_sr_path_acked(struct sdr_sr *sr, const struct sdr_sr_unit *u, uint64_t rtt,
				     uint64_t now)
{
	if (sr->spray.n > 1)
		sdr_spray_acked(&sr->spray, u->path, u->tx_tsc, rtt, now);
}

/** An RTT sample @p rtt of unit @p u as if taken on the QP's slowest path
 *  (what the QP's RTO estimator takes: the RTO is the last resort, so it
 *  must not fire on the slow path's units), and as if on its fastest one
 *  (what the congestion controller takes: its delay signal is each path's
 *  queueing, not the paths' different base RTTs). One path: @p rtt. */
static inline uint64_t sdr_sr_path_rtt_slowest(const struct sdr_sr *sr, const struct sdr_sr_unit *u,
					       uint64_t rtt)
{
	return sr->spray.n > 1 ? sdr_spray_rtt_shift(&sr->spray, u->path, rtt, 1) : rtt;
}
static inline uint64_t sdr_sr_path_rtt_fastest(const struct sdr_sr *sr, const struct sdr_sr_unit *u,
					       uint64_t rtt)
{
	return sr->spray.n > 1 ? sdr_spray_rtt_shift(&sr->spray, u->path, rtt, 0) : rtt;
}

/** Unit @p u was last sent on a path now suspended (it is being moved). */
static inline int sdr_sr_path_moved(const struct sdr_sr *sr, const struct sdr_sr_unit *u)
{
	return sr->spray.n > 1 && sr->spray.p[u->path % SDR_SPRAY_MAX].state != SDR_SPRAY_ACTIVE;
}

/** Unit @p u declared lost (timer, NACK, RACK). */
static inline void sdr_sr_path_lost(struct sdr_sr *sr, const struct sdr_sr_unit *u)
{
	if (sr->spray.n > 1)
		sdr_spray_lost(&sr->spray, u->path);
}

/** Stats: a line per path; JSON "paths":[...]; telemetry keys path<i>_*
 *  (frames, retx_frames, srtt_us, min_rtt_us, active). Nothing with one
 *  path. */
void sdr_sr_path_print(FILE *f, const struct sdr_sr *sr);
void sdr_sr_path_json(FILE *f, const struct sdr_sr *sr);
void sdr_sr_path_kv(const struct sdr_sr *sr, const struct sdr_kv *kv);

#endif /* SDR_SR_PATH_H */
