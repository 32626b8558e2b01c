/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-dpu firmware (layer prim): an instance - one port with its address,
 * mbuf pool, host contexts and QP table (looked up by QPN), and the
 * counters folded in from its destroyed QPs. No DPDK header (the pool is
 * a pointer).
 */
#ifndef SDR_INST_H
#define SDR_INST_H

#include <stdatomic.h>
#include <stdint.h>

#include "config.h"
#include "sdr_limits.h"
#include "sdr_qp.h"

struct rte_mempool;
struct sdr_hctx;
struct sdr_tomb;

struct sdr_inst {
	unsigned idx;
	struct sdr_inst_cfg cfg;
	uint16_t port;
	uint8_t mac[6], peer_mac[6];
	uint32_t ip;
	int listen_fd;
	struct rte_mempool *pool;
	struct sdr_hctx *ctxs[SDR_MAX_CTX];
	struct sdr_qp *_Atomic qps[SDR_MAX_QPS];
	void *link[SDR_MAX_WORKERS];    /* struct sdr_link_rx * per queue, or NULL */
	struct sdr_qp_stats closed;     /* folded in from destroyed QPs (main lcore) */
	struct sdr_ct_hist closed_hist; /* completion times of the destroyed QPs' sends */
	uint32_t qpn_first;             /* QPN of block 0 in this boot (epoch) */
	/* the port steers each QP's packets to its worker's queue (RSS on the
	 * UDP source port alone, common/sdr_rss.h): QPNs are chosen for it */
	uint8_t rss_steer;
	uint16_t rss_reta; /* its redirection table's size */
	/* what destroyed QPs left, one per QPN block (sdr_tomb.h; NULL: none) */
	struct sdr_tomb *tombs;
};

/** Is @p qpn inside this boot's QPN range (see --qpn-epoch)? */
static inline int sdr_qpn_in_epoch(const struct sdr_inst *in, uint32_t qpn, uint32_t gens)
{
	return qpn >= in->qpn_first && (qpn - in->qpn_first) / gens < SDR_MAX_QPS;
}

static inline struct sdr_qp *sdr_qp_lookup(struct sdr_inst *in, uint32_t qpn, uint32_t gens,
					   uint32_t *gen)
{
	uint32_t rel = qpn - in->qpn_first;
	struct sdr_qp *qp;

	if (!sdr_qpn_in_epoch(in, qpn, gens))
		return NULL;
	qp = atomic_load_explicit(&in->qps[rel / gens], memory_order_acquire);
	*gen = rel % gens;
	return qp;
}

/** A QP's flow in its worker's pacer and timer wheel. */
static inline uint32_t sdr_qp_flow(const struct sdr_qp *qp)
{
	return qp->inst->idx * SDR_MAX_QPS + qp->id;
}

#endif /* SDR_INST_H */
