/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-perf's arithmetic of a measurement: latency percentiles, packets and
 * frame bytes of a message (common/sdr_wire.h), and the memcpy and
 * copy+CRC baselines that a run's goodput is set against. Host program.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sdr_wire.h"
#include "perf.h"

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return x < y ? -1 : x > y;
}

void lat_stats(float *v, uint64_t n, double *out, int with_min)
{
	double sum = 0;

	if (!n) {
		for (int i = 0; i < (with_min ? 6 : 5); i++)
			out[i] = NAN;
		return;
	}
	qsort(v, n, sizeof(*v), cmp_float);
	for (uint64_t i = 0; i < n; i++)
		sum += v[i];
		/* nearest-rank percentiles */
#define PCT(p) v[(uint64_t)ceil((p) * (double)n) ? (uint64_t)ceil((p) * (double)n) - 1 : 0]
	out[0] = sum / (double)n;
	out[1] = PCT(0.50);
	out[2] = PCT(0.99);
	out[3] = PCT(0.999);
	out[4] = v[n - 1];
	if (with_min)
		out[5] = v[0];
#undef PCT
}

/* Data packets of a message (immediate-only ones included: only with a
 * non-zero --imm) and their frame bytes, what the pacers charge:
 * common/sdr_wire.h's one definition. */
uint64_t pkts_per_msg(uint64_t size)
{
	return sdr_wire_msg_pkts(size, o.mtu, o.imm != 0);
}

double msg_wire_bytes(uint64_t size)
{
	uint64_t full = size / o.mtu, rem = size % o.mtu;
	int imm = o.imm != 0;

	return (double)full * sdr_wire_data_frame_bytes(o.mtu, imm) +
	       (rem ? (double)sdr_wire_data_frame_bytes((uint32_t)rem, imm) : 0.0) +
	       (double)sdr_wire_imm_only_pkts(full + (rem ? 1 : 0), imm) *
		       sdr_wire_data_frame_bytes(0, 1);
}

/* Copy the measured payload once, in MTU pieces, from the send buffers to
 * the receive buffers: the cost of one of the two copies the DPU makes per
 * payload byte (host -> mbuf on TX, mbuf -> host on RX). */
double memcpy_baseline(uint8_t *src, size_t src_len, uint8_t *dst, size_t dst_len, uint64_t bytes)
{
	uint64_t done = 0;
	size_t so = 0, d_o = 0;
	double t0;

	if (!bytes || src_len < o.mtu || dst_len < o.mtu)
		return NAN;
	t0 = now_s();
	while (done < bytes) {
		size_t piece = bytes - done < o.mtu ? (size_t)(bytes - done) : o.mtu;
		if (so + piece > src_len)
			so = 0;
		if (d_o + piece > dst_len)
			d_o = 0;
		memcpy(dst + d_o, src + so, piece);
		__asm__ volatile("" ::: "memory");
		so += piece;
		d_o += piece;
		done += piece;
	}
	return (double)bytes * 8 / (now_s() - t0) / 1e9;
}

/* The bound of the data path on this core, in the same process right after
 * the run: each MTU piece of the measured payload is copied from the send
 * buffers into one of 32 frame buffers (an mbuf of a burst), CRC'd twice with
 * the function the ICRC uses (sdr_icrc_crc32(): once as TX computes it, once
 * as RX verifies it) and copied into the receive buffers. That is the work
 * no data path can skip; everything else it does (headers, parse, rings,
 * placement, bitmaps, completions) comes on top. Per CPU-second of this
 * thread (CLOCK_THREAD_CPUTIME_ID), like the worker's figures; the payload
 * is capped at 2 GiB. */
#define BOUND_BUFS 32

/* The daemon's ICRC code (sdr-dpu --icrc-crc, given with --dpu-arg; else
 * its default), chosen the same way here for the bound. With --rig attach
 * the daemons' own choice is unknown: the default is taken. */
static const char *bound_crc(void)
{
	const char *crc = "auto";

	for (int i = 0; i < o.n_dpu_extra; i++)
		if (!strncmp(o.dpu_extra[i], "--icrc-crc=", 11))
			crc = o.dpu_extra[i] + 11;
	return crc;
}

static volatile uint32_t bound_sink; /* the CRCs are used: not optimised away */
double bound_baseline(uint8_t *src, size_t src_len, uint8_t *dst, size_t dst_len, uint64_t bytes)
{
	static uint8_t frame[BOUND_BUFS][4096 + 128];
	uint64_t done = 0;
	size_t so = 0, d_o = 0;
	struct timespec t0, t1;
	unsigned b = 0;

	if (bytes > (2ull << 30))
		bytes = 2ull << 30;
	if (!bytes || src_len < o.mtu || dst_len < o.mtu || o.mtu > 4096)
		return NAN;
	if (sdr_icrc_select(bound_crc()))
		return NAN;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	while (done < bytes) {
		size_t piece = bytes - done < o.mtu ? (size_t)(bytes - done) : o.mtu;
		uint8_t *f = frame[b++ % BOUND_BUFS];

		if (so + piece > src_len)
			so = 0;
		if (d_o + piece > dst_len)
			d_o = 0;
		memcpy(f, src + so, piece);
		bound_sink ^= sdr_icrc_crc32(0, f, piece);
		bound_sink ^= sdr_icrc_crc32(0, f, piece);
		memcpy(dst + d_o, f, piece);
		__asm__ volatile("" ::: "memory");
		so += piece;
		d_o += piece;
		done += piece;
	}
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
	return (double)done * 8 /
	       ((double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9) / 1e9;
}
