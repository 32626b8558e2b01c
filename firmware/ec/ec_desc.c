/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The erasure-coding engine as the control plane sees it (layer ec): its
 * counter group, its options (typed sdr_opts entries), its stats line
 * (ec_desc.h).
 */
#include <inttypes.h>

#include "ec_desc.h"
#include "sdr_opts.h"

SDR_QP_CTR_GROUP_DEFINE(ec, SDR_EC_QP_CTRS);

struct sdr_ec_cfg sdr_ec_cfg = {
	.beta_milli = 1000,
	.rtt_us = 0,
	.pool_mb = 64,
};

const struct sdr_opt sdr_ec_opts[] = {
	SDR_OPT_SECTION("\nErasure coding (QPs with reliability EC, and AUTO's EC messages;\n"
			"docs/reliability.md):"),
	{.name = "ec-beta",
	 .arg = "B",
	 .kind = SDR_OPT_MILLI,
	 .fmin = 0,
	 .fmax = 16,
	 .var = &sdr_ec_cfg.beta_milli,
	 .help = "fallback timeout FTO = (M + ceil(M*m/k)) * T_INJ + B * RTT\n"
		 "(default 1.0; 0..16)"},
	{.name = "ec-rtt-us",
	 .arg = "US",
	 .kind = SDR_OPT_U32,
	 .min = 0,
	 .max = 10000000,
	 .var = &sdr_ec_cfg.rtt_us,
	 .help = "RTT of the FTO (default 0 = estimate: the QP's smoothed\n"
		 "RTT, else the smallest CTS-to-first-packet time)"},
	{.name = "ec-pool-mb",
	 .arg = "MB",
	 .kind = SDR_OPT_U32,
	 .min = 1,
	 .max = 65536,
	 .var = &sdr_ec_cfg.pool_mb,
	 .help = "parity buffers of one receiving EC or AUTO QP (default 64)"},
	SDR_OPT_END,
};

void sdr_ec_stats_print(FILE *f, const struct sdr_qp *qp, const struct sdr_eceng *ec)
{
	fprintf(f,
		"    EC %s(%u,%u): subs encoded %" PRIu64 " parity pkts tx %" PRIu64 " rx %" PRIu64
		" | decodes %" PRIu64 " chunks recovered %" PRIu64 " failures %" PRIu64
		" | FTO expiries %" PRIu64 " NACKs tx %" PRIu64 " rx %" PRIu64
		" | pool %u/%u bufs\n",
		ec->per_message ? "per-message, max" : sdr_ec_code_name((enum sdr_ec_code)ec->code),
		ec->k, ec->m, SDR_QP_CTR(qp, ec, subs_encoded), SDR_QP_CTR(qp, ec, par_pkts_tx),
		SDR_QP_CTR(qp, ec, par_pkts_rx), SDR_QP_CTR(qp, ec, decodes),
		SDR_QP_CTR(qp, ec, chunks_recovered), SDR_QP_CTR(qp, ec, decode_failures),
		SDR_QP_CTR(qp, ec, fto_expiries), SDR_QP_CTR(qp, ec, nacks_tx),
		SDR_QP_CTR(qp, ec, nacks_rx), (unsigned)ec->pool.inuse, (unsigned)ec->pool.nalloc);
}
