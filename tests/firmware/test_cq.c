/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit test of the completion primitive (firmware/prim/cq.c) on a real CQ ring
 * (common/sdr_ring.h) without the EAL: the completions of a loop pass reach
 * the ring only when the pass flushes them (one producer-index store), in
 * posting order; a full ring sends them, still in order, through the
 * overflow FIFO, which later completions queue behind until it drains; a
 * full FIFO counts cq_lost. The host's view is a consumer on the same ring.
 */
#include <stdlib.h>
#include <string.h>

#include "cq.h"
#include "sdr_dpu.h"
#include "sdr_test.h"

#define RING 8
#define OVF 40

struct sdr_dpu sdr_g; /* (cq.c's header declares it; nothing here reads it) */

static struct sdr_ring_idx idx;
static struct sdr_cqe ents[RING];
static struct sdr_ring host;
static uint64_t next_posted, next_seen;

static void post(struct sdr_worker *w, struct sdr_hctx *c, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct sdr_cqe e = {.wr_id = next_posted++, .opcode = SDR_SQ_RECV};
		sdr_cq_post(w, c, &e);
	}
}

/* The host polls everything in the ring: in order, none twice, none lost. */
static unsigned host_poll(void)
{
	struct sdr_cqe e[RING];
	unsigned n = sdr_ring_dequeue_burst(&host, e, RING);

	for (unsigned i = 0; i < n; i++)
		CHECK_EQ(e[i].wr_id, next_seen++);
	return n;
}

int main(void)
{
	static struct sdr_worker w;
	static struct sdr_hctx c;

	t_seed("test_cq", 1);
	sdr_ring_format(&idx, RING, sizeof(struct sdr_cqe));
	CHECK_EQ(sdr_ring_attach(&c.cq, &idx, ents, RING, sizeof(struct sdr_cqe), 1), 0);
	CHECK_EQ(sdr_ring_attach(&host, &idx, ents, RING, sizeof(struct sdr_cqe), 0), 0);
	c.ovf = calloc(OVF, sizeof(*c.ovf));
	c.ovf_cap = OVF;

	/* a pass's completions wait for its flush */
	post(&w, &c, 5);
	CHECK_EQ(sdr_ring_avail_checked(&host), 0);
	CHECK_EQ(atomic_load(&idx.prod), 0);
	sdr_cq_flush(&w, &c);
	CHECK_EQ(atomic_load(&idx.prod), 5); /* one store for the five */
	CHECK_EQ(host_poll(), 5);
	sdr_cq_flush(&w, &c); /* nothing staged: nothing happens */
	CHECK_EQ(atomic_load(&idx.prod), 5);

	/* a burst of SDR_BURST goes out at once; the ring takes 8, the FIFO the rest */
	post(&w, &c, SDR_BURST);
	CHECK_EQ(c.ncqb, 0);
	CHECK_EQ(sdr_ring_avail_checked(&host), RING);
	CHECK_EQ(c.ovf_n, SDR_BURST - RING);
	/* later completions queue behind the FIFO, not in the staging buffer */
	post(&w, &c, 2);
	CHECK_EQ(c.ncqb, 0);
	CHECK_EQ(c.ovf_n, SDR_BURST - RING + 2);
	sdr_cq_flush(&w, &c);
	/* the host frees room, the worker drains: order kept */
	while (c.ovf_n) {
		CHECK_OR_BREAK(host_poll() > 0);
		sdr_cq_drain(&c);
	}
	host_poll();
	CHECK_EQ(next_seen, next_posted);
	/* staged again once the FIFO is empty */
	post(&w, &c, 3);
	CHECK_EQ(c.ncqb, 3);
	sdr_cq_flush(&w, &c);
	CHECK_EQ(host_poll(), 3);

	/* nobody polls: ring (8) + FIFO (40) hold 48; the rest is counted lost */
	post(&w, &c, RING + OVF + 5);
	sdr_cq_flush(&w, &c);
	CHECK_EQ(c.ovf_n, OVF);
	CHECK_EQ(w.ctr[SDR_CTR_cq_lost], 5);
	CHECK_EQ(w.ctr[SDR_CTR_cq_lost], next_posted - next_seen - RING - OVF);
	free(c.ovf);
	return t_finish("test_cq");
}
