/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-perf codec: encode/decode throughput of the erasure codec
 * (common/sdr_ec.h, ISA-L or XOR), a human block and one JSON line.
 * Host program; no daemon.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf.h"

int run_codec(void)
{
	unsigned k = o.k, m = o.m;
	struct sdr_ec *ec = sdr_ec_create(o.code, k, m);
	uint8_t *mem, *ptr[SDR_EC_MAX_CHUNKS], present[SDR_EC_MAX_CHUNKS];
	uint64_t it, enc_iters = 0, dec_iters = 0;
	double t0, enc_s, dec_s, budget = o.duration > 0 ? o.duration : 0.5;
	int erased = 0, rc;
	struct sbuf j = {0};

	if (!ec) {
		fprintf(stderr, "sdr-perf: sdr_ec_create: %s\n", strerror(errno));
		return 1;
	}
	mem = aligned_alloc(64, ((k + m) * o.chunk + 63) / 64 * 64);
	if (!mem) {
		sdr_ec_free(ec);
		return 1;
	}
	for (uint64_t i = 0; i < (k + m) * o.chunk; i++)
		mem[i] = (uint8_t)(i * 2654435761u >> 13);
	for (unsigned i = 0; i < k + m; i++)
		ptr[i] = mem + i * o.chunk;
	/* encode: --iters calls, or as many as fit in --duration (default 0.5 s) */
	t0 = now_s();
	for (it = 0; !g_stop; it++) {
		if (o.iters_set ? it >= o.iters : (it & 15) == 0 && now_s() - t0 >= budget)
			break;
		rc = sdr_ec_encode(ec, (const uint8_t *const *)ptr, ptr + k, o.chunk);
		if (rc) {
			fprintf(stderr, "sdr-perf: sdr_ec_encode: %s\n", strerror(-rc));
			return 1;
		}
		enc_iters++;
	}
	enc_s = now_s() - t0;
	/* decode: erase m data chunks (one per XOR group: chunks 0..m-1) */
	memset(present, 1, sizeof(present));
	for (unsigned i = 0; i < m && i < k; i++, erased++)
		present[i] = 0;
	t0 = now_s();
	for (it = 0; !g_stop; it++) {
		if (o.iters_set ? it >= o.iters : (it & 15) == 0 && now_s() - t0 >= budget)
			break;
		rc = sdr_ec_decode(ec, ptr, present, o.chunk);
		if (rc < 0) {
			fprintf(stderr, "sdr-perf: sdr_ec_decode: %s\n", strerror(-rc));
			return 1;
		}
		dec_iters++;
	}
	dec_s = now_s() - t0;
	double enc_data = (double)enc_iters * k * o.chunk / enc_s / 1e9;
	double enc_all = (double)enc_iters * (k + m) * o.chunk / enc_s / 1e9;
	double dec_data = (double)dec_iters * k * o.chunk / dec_s / 1e9;
	if (!o.json_only) {
		printf("  ---------------- sdr-perf codec: %s(%u,%u) chunk %" PRIu64
		       " B, backend %s"
		       " ----------------\n",
		       sdr_ec_code_name(o.code), k, m, o.chunk, sdr_ec_backend_name(ec));
		printf("  encode : %" PRIu64 " calls in %.6f s  %.3f GB/s of data (k chunks)"
		       "  %.3f GB/s data+parity\n",
		       enc_iters, enc_s, enc_data, enc_all);
		printf("  decode : %" PRIu64 " calls in %.6f s  %.3f GB/s of data (k chunks),"
		       " %d data chunks erased\n",
		       dec_iters, dec_s, dec_data, erased);
		printf("  -----------------------------------------------------------------\n");
	}
	sb_add(&j, "{\"mode\":\"codec\",\"code\":");
	sb_jstr(&j, sdr_ec_code_name(o.code));
	sb_add(&j, ",\"backend\":");
	sb_jstr(&j, sdr_ec_backend_name(ec));
	sb_add(&j,
	       ",\"k\":%u,\"m\":%u,\"chunk\":%" PRIu64
	       ",\"status\":\"ok\",\"encode_iters\":%" PRIu64 ",\"decode_iters\":%" PRIu64
	       ",\"erasures\":%d",
	       k, m, o.chunk, enc_iters, dec_iters, erased);
	sb_jnum(&j, "encode_GBps", enc_data);
	sb_jnum(&j, "encode_GBps_all", enc_all);
	sb_jnum(&j, "decode_GBps", dec_data);
	sb_add(&j, "}");
	printf("%s\n", j.p);
	free(j.p);
	free(mem);
	sdr_ec_free(ec);
	return g_stop ? 1 : 0;
}
