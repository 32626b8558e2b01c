/* SPDX-License-Identifier: BSD-3-Clause */
/* Transmit primitive (txq.h), the DPDK side: mbuf allocation, bursts to
 * the port. Pacing and frame building are in txframe.c.
 * Layer prim/: a primitive, the lowest firmware layer; calls only common/ code. */
#include <rte_ethdev.h>
#include <rte_pause.h>

#include "txq.h"

struct rte_mbuf *sdr_txq_alloc(struct sdr_worker *w, struct sdr_inst *in)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(in->pool);
	if (!m)
		w->ctr[SDR_CTR_tx_nombuf]++;
	return m;
}

void sdr_txq_flush(struct sdr_worker *w, unsigned i)
{
	struct sdr_inst *in = &sdr_g.inst[i];
	unsigned n = w->ntxb[i], sent = 0, tries = 0;

	if (unlikely(w->tx_off)) { /* stopping (worker.c drain()) */
		w->ctr[SDR_CTR_tx_at_exit] += n;
		rte_pktmbuf_free_bulk(w->txb[i], n);
		w->ntxb[i] = 0;
		return;
	}
	while (sent < n && tries++ < 64) {
		uint16_t k = rte_eth_tx_burst(in->port, (uint16_t)w->idx, &w->txb[i][sent],
					      (uint16_t)(n - sent));
		for (unsigned j = sent; j < sent + k; j++)
			w->port[i].tx_bytes += w->txb[i][j]->pkt_len;
		sent += k;
		if (sent < n)
			rte_pause();
	}
	w->port[i].tx_pkts += sent;
	if (sent < n) {
		w->ctr[SDR_CTR_tx_full] += n - sent;
		rte_pktmbuf_free_bulk(&w->txb[i][sent], n - sent);
	}
	w->ntxb[i] = 0;
}

void sdr_txq_enqueue(struct sdr_worker *w, struct sdr_inst *in, struct rte_mbuf *m)
{
	w->txb[in->idx][w->ntxb[in->idx]++] = m;
	if (w->ntxb[in->idx] == SDR_BURST)
		sdr_txq_flush(w, in->idx);
}
