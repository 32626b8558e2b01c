/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * AUTO reliability (docs/reliability.md "AUTO"): per QP, estimate the
 * round-trip time and the chunk loss rate from what the sender observes, and
 * for each message pick the scheme (SR or an EC code) with the lowest
 * predicted completion time under the model of common/sdr_model.h.
 *
 * Estimates:
 *  - RTT: smoothed as RFC 6298 (SRTT with gain 1/8, RTTVAR 1/4) from the
 *    samples the caller feeds (ACK round trips of never-retransmitted
 *    chunks: Karn's rule is the caller's).
 *  - chunk loss: exponentially decayed counts of first-pass chunks sent and
 *    of those that were lost (retransmitted, recovered by parity or NACKed),
 *    L/S, with a half-life counted in chunks so that a 1-chunk and a
 *    1000-chunk message weigh by their chunks. The counts start at a prior
 *    (prior_loss x prior_chunks lost of prior_chunks sent): the estimate is
 *    shrunk towards the prior until real chunks outweigh it.
 *
 * Conservative start: until min_rtt_samples RTT samples exist, the pick is
 * cfg.initial (default SR: needs no estimate and is always correct).
 *
 * Decisions are cached per message-size class (quarter octaves of the chunk
 * count, evaluated at the size of the message that filled the class)
 * and recomputed when the estimates moved by more than 10 % (RTT) or 20 %
 * (loss) since the cached decision, so the model runs rarely (it takes
 * ~0.1-1 ms per evaluation of 5 candidates), not per message.
 *
 * Pure C, single-threaded per instance (one per QP, used by its worker).
 */
#ifndef SDR_AUTO_H
#define SDR_AUTO_H

#include <stddef.h>
#include <stdint.h>

#include "sdr_model.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SDR_AUTO_MAX_CANDS 8u
#define SDR_AUTO_CLASSES 160u /* chunk-count classes: quarter octaves up to 2^40 */

struct sdr_auto_cfg {
	double rate_bps;         /**< injection rate (the QP's or port's pacing), > 0 */
	uint32_t chunk_bytes;    /**< EC/bitmap chunk, >= 1 */
	uint32_t pkts_per_chunk; /**< >= 1 */
	double alpha;            /**< RTO = (1+alpha) RTT in the model (default 0.5) */
	double beta;             /**< FTO slack (default alpha/2: pass < 0) */
	struct sdr_scheme cands[SDR_AUTO_MAX_CANDS];
	uint32_t ncands; /**< 1..SDR_AUTO_MAX_CANDS; 0 = the model's default set */
	enum sdr_model_objective obj;
	struct sdr_scheme initial; /**< before estimates exist (default SR) */
	uint32_t min_rtt_samples;  /**< RTT samples needed before the model is used */
	double prior_loss;         /**< per-chunk loss assumed before samples, [0, 1) */
	double prior_chunks;       /**< weight of the prior, in chunks (>= 0) */
	double half_life_chunks;   /**< loss estimate half-life, chunks (> 0) */
};

/** Defaults: alpha 0.5, beta alpha/2, the model's 5 default candidates,
 *  mean objective, initial SR, 1 RTT sample, prior loss 1e-3 per chunk
 *  weighted as 1000 chunks, half-life 20000 chunks. rate, chunk and packets
 *  per chunk must be set by the caller. */
void sdr_auto_cfg_default(struct sdr_auto_cfg *cfg);

struct sdr_auto_class {
	double srtt, loss; /**< estimates the decision was made with */
	double mean;       /**< its predicted mean (s) */
	double p999;       /**< its predicted p99.9 (s) */
	uint8_t valid;
	uint8_t pick; /**< index into cfg.cands */
};

struct sdr_auto {
	struct sdr_auto_cfg cfg;
	double srtt, rttvar; /**< seconds; valid when rtt_samples > 0 */
	uint64_t rtt_samples;
	double lost, sent;                     /**< decayed chunk counts (prior included) */
	uint64_t chunks_seen;                  /**< real first-pass chunks fed (not decayed) */
	uint64_t picks[SDR_AUTO_MAX_CANDS];    /**< messages per candidate */
	uint64_t pick_min[SDR_AUTO_MAX_CANDS]; /**< smallest message (bytes) it was picked for */
	uint64_t pick_max[SDR_AUTO_MAX_CANDS]; /**< largest (both 0 while picks is 0) */
	uint64_t initial_picks;                /**< messages sent with cfg.initial (no estimate) */
	uint64_t evals;                        /**< model evaluations (cache misses) */
	uint64_t eval_errors;                  /**< evaluations that failed (cfg.initial used) */
	struct sdr_scheme last;                /**< the last pick */
	double last_mean, last_p999;           /**< its prediction (0 if initial) */
	struct sdr_auto_class cls[SDR_AUTO_CLASSES];
};

/**
 * Validate @p cfg and reset @p a.
 * @return 0; -EINVAL (NULL, rate <= 0, chunk or pkts 0, alpha < 0, ncands >
 *         SDR_AUTO_MAX_CANDS, a candidate the model rejects, prior_loss
 *         outside [0, 1), prior_chunks < 0, half_life_chunks <= 0).
 */
int sdr_auto_init(struct sdr_auto *a, const struct sdr_auto_cfg *cfg);

/** Feed an RTT sample (seconds, > 0; others are ignored). */
void sdr_auto_rtt(struct sdr_auto *a, double rtt_s);

/** Feed one message's outcome: @p sent first-pass data chunks, of which
 *  @p lost did not arrive the first time (lost <= sent; clamped). */
void sdr_auto_chunks(struct sdr_auto *a, uint64_t sent, uint64_t lost);

/** Current per-chunk loss estimate (prior included). */
double sdr_auto_loss(const struct sdr_auto *a);

/**
 * Pick the scheme for a message of @p msg_bytes (>= 1).
 * @param[out] out the scheme (always written)
 * @return index into cfg.cands (>= 0), or -1 when cfg.initial was used (not
 *         enough estimates, or the model failed: eval_errors counts that).
 */
int sdr_auto_pick(struct sdr_auto *a, uint64_t msg_bytes, struct sdr_scheme *out);

/** Change the injection rate (bit/s, > 0; others are ignored) and drop the
 *  cached decisions, which were made at the old rate. */
void sdr_auto_set_rate(struct sdr_auto *a, double rate_bps);

/**
 * Parse a candidate list: comma-separated items, each "sr" or an EC code a
 * QP can run, as sdr_scheme_parse() takes it ("rs:K:M", "xor:K:M":
 * 1 <= k <= 64, 1 <= m <= 32, XOR m <= k), e.g. "sr,rs:32:8,xor:32:8".
 * @param[out] cands at least SDR_AUTO_MAX_CANDS entries
 * @param[out] n     the number parsed (1..SDR_AUTO_MAX_CANDS)
 * @return 0; -EINVAL (NULL, empty list or item, unknown item, a scheme
 *         listed twice), -E2BIG (more than SDR_AUTO_MAX_CANDS items).
 */
int sdr_auto_schemes_parse(const char *s, struct sdr_scheme *cands, uint32_t *n);

#ifdef __cplusplus
}
#endif

#endif /* SDR_AUTO_H */
