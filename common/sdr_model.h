/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion-time model of SDR's reliability schemes (the SDR-RDMA paper,
 * arXiv 2505.05366, section 4.2 and appendices A and B; summarised in
 * docs/papers.md §1.4, computed as docs/model.md says). Pure C, no DPDK; the
 * firmware's AUTO mode, the host tools and the sdr-model CLI all use it.
 *
 * Time is in seconds, rates in bit/s. Notation:
 *   M      message size in chunks, ceil(msg_bytes / chunk_bytes)
 *   T      T_INJ = chunk_bytes * 8 / rate, time to inject one chunk
 *   p_c    per-chunk loss, 1 - (1 - p)^N for N packets of loss p each
 *   RTO    (1 + alpha) * RTT; O = RTO + T
 *   SR     X_i = i*T + O*(Y_i - 1), Y_i ~ Geometric(1 - p_c), i = 1..M;
 *          T_SR = max_i X_i + RTT. E[.] and quantiles are computed exactly on
 *          the lattice of values X_i can take (no time grid), see
 *          docs/model.md.
 *   EC     (M + ceil(M*m/k)) chunks injected; L = ceil(M/k) submessages
 *          decode independently (MDS: any m of k+m lost; XOR: at most one
 *          lost per modulo group). If any fails, the receiver NACKs after the
 *          FTO and the failed submessages' data chunks are resent with SR:
 *          T_EC = inj + RTT                                (no failure)
 *          T_EC = inj + RTT + (1+beta)*RTT + max X(c)      (c data chunks
 *                                                           in failed subs)
 *
 * Every function is reentrant and allocation-free.
 */
#ifndef SDR_MODEL_H
#define SDR_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "sdr_scheme.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Packet size used to derive packets per chunk when none is given. */
#define SDR_MODEL_MTU_DEFAULT 4096u
/** Largest message, in chunks, the model accepts (2^31). */
#define SDR_MODEL_MAX_CHUNKS (1ull << 31)
/** Retransmission rounds the SR distribution is carried to; a per-chunk loss
 *  so high that more are needed for a 1e-16 tail is rejected with -ERANGE. */
#define SDR_MODEL_MAX_ROUNDS 256u
/** Largest k + m for an MDS code (GF(2^8) Reed-Solomon, as ISA-L). */
#define SDR_MODEL_MAX_KM SDR_SCHEME_MODEL_KM_MAX

/* A scheme is a struct sdr_scheme (sdr_scheme.h): SR (rel SDR_REL_SR), or EC
 * (rel SDR_REL_EC) with the MDS (Reed-Solomon, SDR_EC_RS) or modulo-group XOR
 * (SDR_EC_XOR) code, k data and m parity chunks per submessage, falling back
 * to SR; within the model's limits (sdr_scheme_check() with
 * SDR_SCHEME_MODEL). Parse and print schemes with sdr_scheme_parse() (flags
 * SDR_SCHEME_MODEL | SDR_SCHEME_SR_EC, and SDR_SCHEME_MODEL_NAMES for the
 * model's own names rs<k>x<m>) and sdr_scheme_format(). */

/** What sdr_model_pick() minimises. */
enum sdr_model_objective {
	SDR_MODEL_OBJ_MEAN = 0, /**< predicted mean completion time */
	SDR_MODEL_OBJ_P999 = 1, /**< predicted 99.9th percentile */
};

/** Link and message parameters plus the scheme to evaluate. */
struct sdr_model_params {
	uint64_t msg_bytes;       /**< message size, >= 1 */
	uint32_t chunk_bytes;     /**< bitmap chunk size, >= 1 */
	uint32_t pkts_per_chunk;  /**< N; 0 = ceil(chunk_bytes / SDR_MODEL_MTU_DEFAULT) */
	double rate_bps;          /**< link rate, > 0 */
	double rtt_s;             /**< round-trip time, >= 0 */
	double pkt_loss;          /**< i.i.d. per-packet loss p, in [0, 1) */
	double alpha;             /**< RTO = (1 + alpha) * RTT, alpha >= 0 */
	double beta;              /**< FTO slack beta * RTT, >= 0; < 0 means alpha / 2 */
	struct sdr_scheme scheme; /**< SR or EC */
};

/** Everything the model predicts for one (params, scheme). */
struct sdr_model_result {
	struct sdr_scheme scheme;
	uint64_t chunks;         /**< M */
	uint64_t parity_chunks;  /**< ceil(M * m / k); 0 for SR */
	uint64_t submsgs;        /**< L = ceil(M / k); 0 for SR */
	uint32_t pkts_per_chunk; /**< N actually used */
	double t_inj;            /**< T_INJ, one chunk */
	double p_chunk;          /**< per-chunk loss */
	double rto;              /**< (1 + alpha) * RTT */
	double beta;             /**< beta actually used */
	double fto;              /**< (M + parity) * T_INJ + beta * RTT; 0 for SR */
	double p_ec;             /**< decode success of one full submessage; 1 for SR */
	double p_fallback;       /**< P(at least one submessage fails); 0 for SR */
	double mean;             /**< exact mean of the protocol abstraction */
	double mean_paper;       /**< the paper's formula read literally (EC: its lower-bound
	                             form; docs/papers.md §1.4) */
	double p99;              /**< 99th percentile */
	double p999;             /**< 99.9th percentile */
	int exact_regime;        /**< 1 if t_start(M) = M*T <= RTO: SR formula exact */
};

/**
 * Per-chunk loss from per-packet loss: 1 - (1 - p)^n, computed without
 * cancellation. Returns NaN if p is outside [0, 1] or NaN.
 */
double sdr_model_p_chunk(double p, uint32_t n);

/**
 * Probability that one submessage of k data and m parity chunks decodes when
 * each chunk is lost independently with probability p (the paper's App. B).
 * MDS: at most m of k+m lost. XOR: parity g covers data j with j mod m == g;
 * every group of data plus its parity loses at most one chunk (equals
 * [(1-p)^n + n p (1-p)^(n-1)]^m, n = k/m + 1, when m divides k).
 * Returns NaN for bad arguments (not a code, k or m == 0, MDS k+m > 255, XOR m > k,
 * p outside [0, 1]).
 */
double sdr_model_p_ec(enum sdr_ec_code code, uint32_t k, uint32_t m, double p);

/** 1 - sdr_model_p_ec(), computed directly so tiny values keep their digits. */
double sdr_model_p_ec_fail(enum sdr_ec_code code, uint32_t k, uint32_t m, double p);

/**
 * E[max_i X_i] of the SR model for @p chunks chunks (the RTT is NOT added).
 * @param chunks  M, <= SDR_MODEL_MAX_CHUNKS (0 gives 0)
 * @param t_inj   T_INJ > 0
 * @param o       O = RTO + T_INJ, > 0
 * @param p_chunk per-chunk loss in [0, 1)
 * @param[out] out the mean
 * @return 0; -EINVAL bad argument or NULL out; -ERANGE p_chunk so close to 1
 *         that more than SDR_MODEL_MAX_ROUNDS rounds matter.
 */
int sdr_model_sr_max_mean(uint64_t chunks, double t_inj, double o, double p_chunk, double *out);

/**
 * P(max_i X_i <= t) of the SR model (same arguments as sdr_model_sr_max_mean).
 * @return 0; -EINVAL; -ERANGE.
 */
int sdr_model_sr_max_cdf(uint64_t chunks, double t_inj, double o, double p_chunk, double t,
			 double *out);

/**
 * Evaluate one scheme: mean, p99, p99.9 and the intermediate quantities.
 * @return 0; -EINVAL NULL pointer or a parameter out of range (see the field
 *         comments; message over SDR_MODEL_MAX_CHUNKS chunks, bad scheme);
 *         -ERANGE per-chunk loss too close to 1 (see SDR_MODEL_MAX_ROUNDS).
 */
int sdr_model_eval(const struct sdr_model_params *prm, struct sdr_model_result *res);

/**
 * Quantile q in (0, 1) of the completion time of prm's scheme.
 * @return 0; -EINVAL (also q outside (0, 1)); -ERANGE as sdr_model_eval().
 */
int sdr_model_quantile(const struct sdr_model_params *prm, double q, double *out);

/** SR, RS(32,8), RS(16,4), RS(8,2), XOR(32,8). */
extern const struct sdr_scheme sdr_model_default_schemes[];
#define SDR_MODEL_N_DEFAULT_SCHEMES 5u

/**
 * Evaluate every candidate under prm's link parameters (prm->scheme is
 * ignored) and pick the one with the smallest objective; on a tie the earlier
 * candidate wins, so list the cheaper scheme (SR) first.
 * @param cands   candidates, NULL = sdr_model_default_schemes
 * @param n       number of candidates (>= 1), ignored when cands is NULL
 * @param results NULL or an array of n results, filled in candidate order
 * @param best    out: index of the pick
 * @return 0; -EINVAL bad link parameter, bad candidate, n == 0 or best NULL;
 *         -ERANGE as sdr_model_eval().
 */
int sdr_model_pick(const struct sdr_model_params *prm, const struct sdr_scheme *cands, size_t n,
		   enum sdr_model_objective obj, struct sdr_model_result *results, size_t *best);

#ifdef __cplusplus
}
#endif

#endif /* SDR_MODEL_H */
