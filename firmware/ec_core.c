/* SPDX-License-Identifier: BSD-3-Clause */
/* Erasure-coding engine: set-up and the helpers both halves use (ec.h,
 * ec_int.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ec.h"
#include "ec_int.h"
#include "txq.h"

/* ---------------- parameters and clocks ---------------- */

struct sdr_ec *sdr_ec_codec(struct sdr_worker *w, unsigned code, unsigned k, unsigned m)
{
	struct sdr_ec *cd;
	unsigned n = RTE_DIM(w->ec_cache);

	for (unsigned i = 0; i < n; i++) {
		cd = w->ec_cache[i];
		if (cd && (unsigned)sdr_ec_code_of(cd) == code && sdr_ec_k(cd) == k && sdr_ec_m(cd) == m)
			return cd;
	}
	cd = sdr_ec_create((enum sdr_ec_code)code, k, m);
	if (!cd)
		return NULL;
	n = w->ec_cache_next++ % n;
	sdr_ec_free(w->ec_cache[n]);
	w->ec_cache[n] = cd;
	return cd;
}

void sdr_ec_worker_fini(struct sdr_worker *w)
{
	for (unsigned i = 0; i < RTE_DIM(w->ec_cache); i++) {
		sdr_ec_free(w->ec_cache[i]);
		w->ec_cache[i] = NULL;
	}
}

/* The rate packets of this QP leave at (bytes/s): its own pacer, else the
 * port's (--port-rate); 0 = unpaced. */
static uint64_t qp_rate(const struct sdr_qp *qp)
{
	if (qp->pacer.rate)
		return qp->pacer.rate;
	return qp->inst->cfg.port_rate / 8;
}

uint64_t sdr_ec_chunk_t_inj(const struct sdr_qp *qp)
{
	return sdr_ec_t_inj((uint64_t)qp->ppc * sdr_wire_data_frame_bytes(qp->mtu), qp_rate(qp),
			    sdr_g.tsc_hz);
}

/* ---------------- QP ---------------- */

int sdr_ec_init(struct sdr_qp *qp, struct sdr_ecq *ec, unsigned code, unsigned k, unsigned m,
		unsigned k_min, int per_message)
{
	uint32_t c = qp->mtu * qp->ppc;
	uint64_t pool = (uint64_t)sdr_g.cfg.ec_pool_mb << 20;

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
	 * QP accepts: k as given, or (code per message) any k down to 1 */
	ec->k_min = (uint8_t)(per_message ? k_min : k);
	ec->nsub_max = (qp->max_msg / c + ec->k_min - 1) / ec->k_min;
	ec->rmsg_stride = (sdr_ec_rmsg_bytes(ec->nsub_max, m) + 63) & ~(size_t)63;
	/* (calloc: a large region is mapped, not touched, until slots use it) */
	ec->rmsg_region = calloc(SDR_MAX_MSGS, ec->rmsg_stride);
	if (!ec->rmsg_region)
		return -ENOMEM;
	return sdr_ec_pool_init(&ec->pool, c, qp->ppc, (uint32_t)(pool / c ? pool / c : 1));
}
