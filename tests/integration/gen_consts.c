/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Writes what the Python checkers (sr_check.py, ec_check.py) need of the C
 * code as JSON, at build time, so that no script reads a C header:
 *   rx_drops        the receive-drop counters (SDR_RX_DROP_LIST of
 *                   firmware/prim/sdr_counters.h), in order
 *   host_errs, tx_errs  the other two counter lists
 *   qp_stats        the per-QP counters (SDR_QP_BASE_CTRS of firmware/prim/sdr_qpctr.h,
 *                   then the groups of the schemes SR, EC, AUTO: sr/sr_counters.h,
 *                   ec/ec_counters.h, rel/auto_counters.h), in the order of the
 *                   stats JSON's qp_totals (the order of the scheme table, rel.c)
 *   imm_nibbles     data packets at least of a message that carries a user
 *                   immediate (SDR_IMM_NIBBLES; common/sdr_wire_build.c
 *                   sdr_wire_msg_pkts()); one without has ceil(size / MTU)
 * Usage: gen_consts OUT.json (meson runs it at build time; DPDK headers for
 * no DPDK).
 */
#include <stdio.h>

#include "sdr_counters.h"
#include "auto_counters.h"
#include "ec_counters.h"
#include "sdr_qpctr.h"
#include "sr_counters.h"
#include "sdr_wire.h"

#define NAME(n, d) " \"" #n "\"",
#define QP_STAT(n) " \"" #n "\"",
#define QP_GSTAT(g, n) " \"" #g "_" #n "\"",

static void list(FILE *f, const char *key, const char *const *v, size_t n, int last)
{
	fprintf(f, "  \"%s\": [", key);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%s", i ? "," : "", v[i]);
	fprintf(f, "]%s\n", last ? "" : ",");
}

int main(int argc, char **argv)
{
	static const char *const rx[] = {SDR_RX_DROP_LIST(NAME)};
	static const char *const host[] = {SDR_HOST_ERR_LIST(NAME)};
	static const char *const tx[] = {SDR_TX_ERR_LIST(NAME)};
	static const char *const qp[] = {SDR_QP_BASE_CTRS(QP_STAT) SDR_SR_QP_CTRS(
		QP_GSTAT) SDR_EC_QP_CTRS(QP_GSTAT) SDR_AUTO_QP_CTRS(QP_GSTAT)};
	FILE *f;

	if (argc != 2 || (f = fopen(argv[1], "w")) == NULL) {
		fprintf(stderr, "usage: gen_consts OUT.json\n");
		return 2;
	}
	fprintf(f, "{\n");
	list(f, "rx_drops", rx, sizeof(rx) / sizeof(rx[0]), 0);
	list(f, "host_errs", host, sizeof(host) / sizeof(host[0]), 0);
	list(f, "tx_errs", tx, sizeof(tx) / sizeof(tx[0]), 0);
	list(f, "qp_stats", qp, sizeof(qp) / sizeof(qp[0]), 0);
	fprintf(f, "  \"imm_nibbles\": %d\n}\n", SDR_IMM_NIBBLES);
	return fclose(f) ? 1 : 0;
}
