/* SPDX-License-Identifier: BSD-3-Clause */
/* Erasure-coding engine (layer ec): set-up, the plug-in's hooks table for
 * the reliable-QP core, its stats line, and the helpers both halves use (ec.h,
 * ec_int.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ec.h"
#include "ec_desc.h"
#include "ec_int.h"
#include "rel.h"
#include "txq.h"

/* ---------------- parameters and clocks ---------------- */

struct sdr_ec *sdr_eceng_codec_of(const struct sdr_eceng *ec, unsigned code, unsigned k, unsigned m)
{
	for (unsigned i = 0; i < ec->ncd; i++)
		if (ec->cd[i].code == code && ec->cd[i].k == k && ec->cd[i].m == m)
			return ec->cd[i].cd;
	return NULL;
}

/* The rate packets of this QP leave at (bytes/s): its own, else the
 * port's (--port-rate); 0 = unpaced. */
static uint64_t qp_rate(const struct sdr_qp *qp)
{
	if (qp->rate_bps)
		return qp->rate_bps / 8;
	return qp->inst->cfg.port_rate / 8;
}

uint64_t sdr_eceng_chunk_t_inj(const struct sdr_qp *qp)
{
	return sdr_ecfw_t_inj((uint64_t)qp->ppc * sdr_wire_data_frame_bytes(qp->mtu, 1),
			      qp_rate(qp), sdr_g.tsc_hz);
}

/* ---------------- QP ---------------- */

static void eceng_stats_print(const void *ctx, FILE *f, const struct sdr_qp *qp)
{
	sdr_ec_stats_print(f, qp, ctx);
}

/* What the engine adds to the reliable-QP core (sr_qp.h). */
static const struct sdr_sr_hooks eceng_hooks = {
	.send_prepared = sdr_eceng_send_prepared,
	.tx_before = sdr_eceng_tx_parity,
	.data_sent = sdr_eceng_data_sent,
	.rx_nack = sdr_eceng_rx_nack,
	.recv_posted = sdr_eceng_recv_posted,
	.data_placed = sdr_eceng_data_placed,
	.rx_parity = sdr_eceng_rx_parity,
	.rx_parity_early = sdr_eceng_rx_parity_early,
	.recv_done = sdr_eceng_recv_done,
	.next_due = sdr_eceng_next_due,
	.poll = sdr_eceng_poll,
	.reset = sdr_eceng_reset,
	.stats_print = eceng_stats_print,
};

int sdr_eceng_init(struct sdr_qp *qp, struct sdr_eceng *ec, struct sdr_sr *sr,
		   const struct sdr_scheme *codes, unsigned ncodes, int per_message)
{
	uint32_t c = qp->mtu * qp->ppc;
	uint64_t pool = (uint64_t)sdr_ec_cfg.pool_mb << 20;
	unsigned code = SDR_EC_RS, k = 1, m = 1, k_min = SDR_EC_K_MAX;

	/* the codec handles; the buffers are sized for the code with the most
	 * parity, the receive state for the smallest k */
	for (unsigned i = 0; i < ncodes && ec->ncd < SDR_ECENG_CODES; i++) {
		const struct sdr_scheme *s = &codes[i];
		struct sdr_eceng_codec *q = &ec->cd[ec->ncd];

		if (s->rel != SDR_REL_EC || sdr_eceng_codec_of(ec, s->code, s->k, s->m))
			continue;
		q->cd = sdr_ec_create((enum sdr_ec_code)s->code, s->k, s->m);
		if (!q->cd)
			return -ENOMEM;
		q->code = s->code;
		q->k = (uint8_t)s->k;
		q->m = (uint8_t)s->m;
		ec->ncd++;
		if (s->k < k_min)
			k_min = s->k;
		if (s->m >= m) {
			code = s->code;
			k = s->k;
			m = s->m;
		}
	}
	if (k_min > k)
		k_min = k;
	ec->code = (uint8_t)code;
	ec->k = (uint8_t)k;
	ec->m = (uint8_t)m;
	ec->per_message = (uint8_t)per_message;
	ec->txpar = aligned_alloc(64, (size_t)(m ? m : 1) * c);
	ec->zero = aligned_alloc(64, c);
	ec->shortc = aligned_alloc(64, c);
	if (!ec->txpar || !ec->zero || !ec->shortc)
		return -ENOMEM;
	memset(ec->zero, 0, c);
	/* receive state of every slot, for the largest message and code the
	 * QP accepts */
	ec->k_min = (uint8_t)k_min;
	ec->nsub_max = (qp->max_msg / c + ec->k_min - 1) / ec->k_min;
	ec->rmsg_stride = (sdr_eceng_rmsg_bytes(ec->nsub_max, m) + 63) & ~(size_t)63;
	/* (calloc: a large region is mapped, not touched, until slots use it) */
	ec->rmsg_region = calloc(SDR_MAX_MSGS, ec->rmsg_stride);
	if (!ec->rmsg_region ||
	    sdr_ecfw_pool_init(&ec->pool, c, qp->ppc, (uint32_t)(pool / c ? pool / c : 1)))
		return -ENOMEM;
	/* plugged in: the core calls the hooks from now on */
	ec->sr = sr;
	sr->hooks = &eceng_hooks;
	sr->hook_ctx = ec;
	/* a completed receive's FULL is sent twice, one ACK period apart */
	sr->full_copies = 2;
	return 0;
}
