/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Per-QP counters (layer prim): the counters every QP keeps (SDR_QP_BASE_CTRS)
 * and the slots a reliability scheme's counter groups take. A scheme declares
 * its group in its own folder as an X-macro list (e.g. sr/sr_counters.h);
 * the scheme table (rel.c) gives each group its slots at start-up, and the
 * stats code prints every group through it (stats.h: sdr_stats_qp_foreach),
 * so no shared file names a scheme's counters (docs/architecture.md
 * "Adding a scheme").
 */
#ifndef SDR_QPCTR_H
#define SDR_QPCTR_H

#include <stdint.h>

/* The counters of every QP, whatever its scheme: X(name) */
/* clang-format off */
#define SDR_QP_BASE_CTRS(X)                                                                  \
	X(tx_pkts) X(tx_bytes) X(rx_pkts) X(rx_bytes) X(msgs_sent) X(msgs_recv) X(msgs_partial) \
	X(send_errors) X(cts_tx) X(cts_rx) X(aborts_tx) X(aborts_rx) X(chunks_done)           \
	X(peer_closed) X(closed_full)
/* clang-format on */

/* Slots for the schemes' counter groups, all groups together */
#define SDR_QP_XCTRS_MAX 64

struct sdr_qp_stats {
#define SDR_QP_STAT_FIELD(n) uint64_t n;
	SDR_QP_BASE_CTRS(SDR_QP_STAT_FIELD)
#undef SDR_QP_STAT_FIELD
	uint64_t x[SDR_QP_XCTRS_MAX]; /* the groups' counters (struct sdr_ctr_group::base) */
};

/** Add every counter of @p src to @p dst. */
static inline void sdr_qp_stats_fold(struct sdr_qp_stats *dst, const struct sdr_qp_stats *src)
{
#define SDR_QP_STAT_ADD(n) dst->n += src->n;
	SDR_QP_BASE_CTRS(SDR_QP_STAT_ADD)
#undef SDR_QP_STAT_ADD
	for (unsigned i = 0; i < SDR_QP_XCTRS_MAX; i++)
		dst->x[i] += src->x[i];
}

/**
 * A scheme's group of per-QP counters: declared with SDR_QP_CTR_GROUP_DECLARE
 * in its header and defined with SDR_QP_CTR_GROUP_DEFINE in one of its files.
 * Its counters are printed as GROUP_NAME (sr_retx_pkts) and counted with
 * SDR_QP_CTR(qp, GROUP, NAME)++.
 */
struct sdr_ctr_group {
	const char *name;         /* "sr" */
	const char *const *names; /* the counters' printed names: "sr_retx_pkts", ... */
	unsigned n;
	unsigned base;  /* its first slot in struct sdr_qp_stats::x (rel.c) */
	int registered; /* base is valid */
};

#define SDR_QPC_ENUM_(g, n) SDR_QPC_##g##_##n,
#define SDR_QPC_NAME_(g, n) #g "_" #n,

/** In a header: enum SDR_QPC_<g>_<name> and the group sdr_qpc_<g>; LIST(X)
 *  calls X(g, name) per counter. */
#define SDR_QP_CTR_GROUP_DECLARE(g, LIST)              \
	enum { LIST(SDR_QPC_ENUM_) SDR_QPC_##g##__N }; \
	extern struct sdr_ctr_group sdr_qpc_##g

/** In one .c file: the group's names and its descriptor. */
#define SDR_QP_CTR_GROUP_DEFINE(g, LIST)                                        \
	static const char *const sdr_qpc_##g##_names[] = {LIST(SDR_QPC_NAME_)}; \
	struct sdr_ctr_group sdr_qpc_##g = {                                    \
		.name = #g, .names = sdr_qpc_##g##_names, .n = SDR_QPC_##g##__N}

/** Counter NAME of group G of @p st (struct sdr_qp_stats), an lvalue. */
#define SDR_QPS_CTR(st, g, n) ((st)->x[sdr_qpc_##g.base + SDR_QPC_##g##_##n])
/** Counter NAME of group G of QP @p qp, an lvalue: SDR_QP_CTR(qp, sr, retx_pkts)++ */
#define SDR_QP_CTR(qp, g, n) SDR_QPS_CTR(&(qp)->st, g, n)

/** Where a scheme's telemetry keys go (a DPDK telemetry dict in stats.c;
 *  struct sdr_rel_desc::kv). */
struct sdr_kv {
	void *arg;
	void (*u64)(void *arg, const char *key, uint64_t v);
	void (*str)(void *arg, const char *key, const char *v);
};

/** Where a scheme's Prometheus metrics of a QP go (stats.c: sdr_stats_walk;
 *  struct sdr_rel_desc::metrics): @p name without the "sdr_qp_" prefix (and,
 *  for a counter, "_total"), in base units (seconds); @p label one more label
 *  pair ('choice="sr"') or NULL. */
struct sdr_metric_sink {
	void *arg;
	void (*gauge)(void *arg, const char *name, const char *help, const char *label, double v);
	void (*counter)(void *arg, const char *name, const char *help, const char *label, double v);
};

#endif /* SDR_QPCTR_H */
