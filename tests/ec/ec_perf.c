/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Erasure-coding throughput benchmark (not a test: it never fails on speed).
 *
 *   ec_perf [--code rs|xor] [--k K] [--m M] [--chunk BYTES] [--erasures E]
 *           [--stripes N] [--seconds S] [--msg BYTES] [--backend NAME]
 *
 * (--backend: isal-rs, isal-rs-gfni or xor-u64; the code follows it;
 * default: the code's default backend, sdr_ec_default_ops())
 *
 * One thread. Measures, each for about S seconds:
 *   encode                      sdr_ec_encode() of one stripe
 *   decode, same pattern        sdr_ec_decode() of E lost data chunks, the
 *                               same chunks every call (RS: cached tables)
 *   decode, new pattern         E lost data chunks, a different pattern on
 *                               every call (RS: decode matrix + tables rebuilt)
 * Calls cycle over N stripes (N * (k + m) * chunk bytes of buffers): N = 1
 * keeps the stripe in cache, a large N measures from memory.
 *
 * Then the sender's two ways of encoding a message of --msg bytes (default
 * 1 MiB, 0 = skip) cut into submessages of k chunks, each chunk copied
 * into a packet buffer first as the firmware does (a pool of 64 buffers):
 *   send, copy only              the copies alone (the baseline)
 *   send, encode at sub end      sdr_ec_encode() of each submessage from the
 *                                message buffer after its k chunks were copied
 *   send, encode incrementally   sdr_ec_encode_update() of each chunk right
 *                                after its copy (parity zeroed per submessage)
 * (per CPU-second of the thread; the difference to the baseline is the
 * encoder's cost in the data path;
 * under valgrind --tool=callgrind the three are the functions send_copy,
 * send_subend and send_incremental).
 *
 * Byte counts (GB = 10^9 bytes), printed with every figure:
 *   "data"        k * chunk per call: the user bytes protected/repaired;
 *   "data+parity" (k + m) * chunk per encode call: bytes read + written;
 *   "recovered"   E * chunk per decode call: bytes written by decode.
 * Before timing, the decoded chunks are compared with the originals.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "sdr_ec.h"

#ifndef SDR_ISAL_VERSION
#define SDR_ISAL_VERSION "unknown (built without the meson define)"
#endif

#define N_PATTERNS 64

struct cfg {
	enum sdr_ec_code code;
	const struct sdr_ec_ops *ops; /* --backend; NULL: the code's default */
	unsigned int k, m, erasures, stripes;
	size_t chunk, msg;
	double seconds;
};

static uint64_t rng = 0x243F6A8885A308D3ull;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545F4914F6CDD1DULL;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU time of this thread: the sender figures are per CPU-second (a shared
 * machine takes the CPU away; the data path's figures are per worker
 * CPU-second too). */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [--code rs|xor] [--k K] [--m M] [--chunk BYTES] [--erasures E]\n"
		"          [--stripes N] [--seconds S] [--msg BYTES] [--backend "
		"isal-rs|isal-rs-gfni|xor-u64]\n"
		"defaults: --code rs --k 32 --m 8 --chunk 4096 --erasures m --stripes 1 "
		"--seconds 0.5 --msg 1048576\n",
		prog);
}

static int parse_uint(const char *s, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (s == NULL || *s == '\0' || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno != 0 || *end != '\0' || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

static int parse_args(int argc, char **argv, struct cfg *c)
{
	int i, have_e = 0;
	unsigned long v;

	c->code = SDR_EC_RS;
	c->ops = NULL;
	c->k = 32;
	c->m = 8;
	c->chunk = 4096;
	c->stripes = 1;
	c->seconds = 0.5;
	c->msg = 1 << 20;
	for (i = 1; i < argc; i++) {
		const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (strcmp(opt, "--help") == 0 || strcmp(opt, "-h") == 0) {
			usage(argv[0]);
			exit(0);
		}
		if (val == NULL)
			goto bad;
		i++;
		if (strcmp(opt, "--code") == 0) {
			if (sdr_ec_code_parse(val, &c->code) != 0)
				goto bad;
		} else if (strcmp(opt, "--k") == 0) {
			if (parse_uint(val, SDR_EC_MAX_CHUNKS, &v) != 0)
				goto bad;
			c->k = (unsigned int)v;
		} else if (strcmp(opt, "--m") == 0) {
			if (parse_uint(val, SDR_EC_MAX_CHUNKS, &v) != 0)
				goto bad;
			c->m = (unsigned int)v;
		} else if (strcmp(opt, "--chunk") == 0) {
			if (parse_uint(val, 1ul << 30, &v) != 0 || v == 0)
				goto bad;
			c->chunk = v;
		} else if (strcmp(opt, "--erasures") == 0) {
			if (parse_uint(val, SDR_EC_MAX_CHUNKS, &v) != 0)
				goto bad;
			c->erasures = (unsigned int)v;
			have_e = 1;
		} else if (strcmp(opt, "--stripes") == 0) {
			if (parse_uint(val, 1u << 16, &v) != 0 || v == 0)
				goto bad;
			c->stripes = (unsigned int)v;
		} else if (strcmp(opt, "--backend") == 0) {
			static const struct sdr_ec_ops *const all[] = {
				&sdr_ec_isal_rs_ops, &sdr_ec_gfni_rs_ops, &sdr_ec_xor_ops};
			c->ops = NULL;
			for (unsigned b = 0; b < sizeof(all) / sizeof(all[0]); b++)
				if (strcmp(val, all[b]->name) == 0)
					c->ops = all[b];
			if (c->ops == NULL)
				goto bad;
		} else if (strcmp(opt, "--msg") == 0) {
			if (parse_uint(val, 1ul << 30, &v) != 0)
				goto bad;
			c->msg = v;
		} else if (strcmp(opt, "--seconds") == 0) {
			char *end;

			c->seconds = strtod(val, &end);
			if (*end != '\0' || !(c->seconds >= 0.01 && c->seconds <= 60))
				goto bad;
		} else {
			goto bad;
		}
	}
	if (c->ops != NULL)
		c->code = c->ops->code;
	if (sdr_ec_check_params(c->code, c->k, c->m) != 0) {
		fprintf(stderr, "invalid (k, m) = (%u, %u) for %s (see sdr_ec.h limits)\n", c->k,
			c->m, sdr_ec_code_name(c->code));
		return -EINVAL;
	}
	if (!have_e)
		c->erasures = c->m < c->k ? c->m : c->k;
	if (c->erasures < 1 || c->erasures > c->m || c->erasures > c->k) {
		fprintf(stderr, "--erasures must be in [1, min(k, m)]\n");
		return -EINVAL;
	}
	if ((double)c->stripes * (c->k + c->m) * (double)c->chunk > 4e9) {
		fprintf(stderr, "buffers would exceed 4 GB; lower --stripes or --chunk\n");
		return -EINVAL;
	}
	return 0;
bad:
	usage(argv[0]);
	return -EINVAL;
}

/* ---- the sender's encoding, as the firmware does it ---- */

#define SEND_PKTS 64 /* packet buffers, reused in turn */

struct sender {
	const struct cfg *c;
	struct sdr_ec *ec;
	uint8_t *msg;            /* c->msg bytes, a whole number of chunks */
	uint8_t *pkt[SEND_PKTS]; /* chunk bytes each */
	uint8_t *par[SDR_EC_MAX_CHUNKS];
	uint8_t *zero; /* a zero chunk: padding of the last submessage */
	size_t nchunks;
};

static void copy_chunk(struct sender *x, size_t c)
{
	memcpy(x->pkt[c % SEND_PKTS], x->msg + c * x->c->chunk, x->c->chunk);
}

__attribute__((noinline)) static void send_copy(struct sender *x)
{
	for (size_t c = 0; c < x->nchunks; c++)
		copy_chunk(x, c);
}

__attribute__((noinline)) static int send_subend(struct sender *x)
{
	const uint8_t *data[SDR_EC_MAX_CHUNKS];
	unsigned int k = x->c->k;

	for (size_t c = 0; c < x->nchunks; c++) {
		copy_chunk(x, c);
		if ((c + 1) % k && c + 1 < x->nchunks)
			continue;
		for (unsigned int i = 0; i < k; i++) {
			size_t d = c / k * k + i;
			data[i] = d < x->nchunks ? x->msg + d * x->c->chunk : x->zero;
		}
		if (sdr_ec_encode(x->ec, data, x->par, x->c->chunk))
			return -1;
	}
	return 0;
}

__attribute__((noinline)) static int send_incremental(struct sender *x)
{
	unsigned int k = x->c->k;

	for (size_t c = 0; c < x->nchunks; c++) {
		if (c % k == 0)
			for (unsigned int j = 0; j < x->c->m; j++)
				memset(x->par[j], 0, x->c->chunk);
		copy_chunk(x, c);
		if (sdr_ec_encode_update(x->ec, (unsigned int)(c % k), x->msg + c * x->c->chunk,
					 x->par, x->c->chunk))
			return -1;
	}
	return 0;
}

/* The three, interleaved call by call for about c->seconds each; checks
 * first that both encoders give the same parity. */
static int sender_figures(const struct cfg *c, struct sdr_ec *ec)
{
	struct sender x = {.c = c, .ec = ec};
	double t[3] = {0, 0, 0}, data_b;
	unsigned long it = 0;
	uint8_t *ref = NULL;
	int rc = -1;

	x.nchunks = (c->msg + c->chunk - 1) / c->chunk;
	x.msg = malloc(x.nchunks * c->chunk);
	x.zero = calloc(1, c->chunk);
	ref = malloc((size_t)c->m * c->chunk);
	if (!x.msg || !x.zero || !ref)
		goto out;
	for (size_t b = 0; b < x.nchunks * c->chunk; b++)
		x.msg[b] = (uint8_t)rnd();
	for (unsigned int i = 0; i < SEND_PKTS; i++)
		if (!(x.pkt[i] = malloc(c->chunk)))
			goto out;
	for (unsigned int j = 0; j < c->m; j++)
		if (!(x.par[j] = malloc(c->chunk)))
			goto out;
	if (send_subend(&x))
		goto out;
	for (unsigned int j = 0; j < c->m; j++)
		memcpy(ref + (size_t)j * c->chunk, x.par[j], c->chunk);
	if (send_incremental(&x))
		goto out;
	for (unsigned int j = 0; j < c->m; j++)
		if (memcmp(ref + (size_t)j * c->chunk, x.par[j], c->chunk))
			goto out; /* (the last submessage's parity) */
	do {
		double t0 = cpu_now();

		send_copy(&x);
		t[0] += cpu_now() - t0;
		t0 = cpu_now();
		send_subend(&x);
		t[1] += cpu_now() - t0;
		t0 = cpu_now();
		send_incremental(&x);
		t[2] += cpu_now() - t0;
		it++;
	} while (t[0] + t[1] + t[2] < 3 * c->seconds);
	data_b = (double)c->msg * it;
	printf("send, copy only:            %8.3f GB/s data  %9.0f ns/message of %zu B  "
	       "[%lu messages; CPU time]\n",
	       data_b / t[0] / 1e9, t[0] / it * 1e9, c->msg, it);
	printf("send, encode at sub end:    %8.3f GB/s data  %9.0f ns/message (encode %.0f ns)\n",
	       data_b / t[1] / 1e9, t[1] / it * 1e9, (t[1] - t[0]) / it * 1e9);
	printf("send, encode incrementally: %8.3f GB/s data  %9.0f ns/message (encode %.0f ns)\n",
	       data_b / t[2] / 1e9, t[2] / it * 1e9, (t[2] - t[0]) / it * 1e9);
	rc = 0;
out:
	for (unsigned int i = 0; i < SEND_PKTS; i++)
		free(x.pkt[i]);
	for (unsigned int j = 0; j < c->m; j++)
		free(x.par[j]);
	free(x.msg);
	free(x.zero);
	free(ref);
	return rc;
}

/* Lost data chunks: E distinct indices < k; for XOR in distinct groups (at
 * most one per group, so every pattern is repairable). */
static void make_pattern(const struct cfg *c, uint8_t *present)
{
	unsigned int lost = 0, i;

	memset(present, 1, c->k + c->m);
	while (lost < c->erasures) {
		i = (unsigned int)(rnd() % c->k);
		if (!present[i])
			continue;
		if (c->code == SDR_EC_XOR) {
			unsigned int j, clash = 0;

			for (j = i % c->m; j < c->k; j += c->m)
				clash |= !present[j];
			if (clash)
				continue;
		}
		present[i] = 0;
		lost++;
	}
}

static void print_cpu(void)
{
	char line[256], model[256] = "", part[256] = "";
	FILE *f = fopen("/proc/cpuinfo", "r");
	struct utsname u;
	double load[3] = {0, 0, 0};

	if (f != NULL) {
		while (fgets(line, sizeof(line), f) != NULL) {
			char *colon = strchr(line, ':');

			if (colon == NULL)
				continue;
			line[strcspn(line, "\n")] = '\0';
			if (model[0] == '\0' && strncmp(line, "model name", 10) == 0)
				snprintf(model, sizeof(model), "%s", colon + 2);
			if (part[0] == '\0' && strncmp(line, "CPU part", 8) == 0)
				snprintf(part, sizeof(part), "%s", colon + 2);
		}
		fclose(f);
	}
	if (uname(&u) != 0)
		snprintf(u.machine, sizeof(u.machine), "?");
	printf("cpu:        %s%s%s (%s, %ld online)\n", model[0] ? model : "",
	       part[0] ? "CPU part " : "", part, u.machine, sysconf(_SC_NPROCESSORS_ONLN));
#if defined(__x86_64__) && defined(__GNUC__)
	__builtin_cpu_init();
	printf("cpu flags:  avx2=%s avx512f=%s avx512bw=%s (ISA-L picks its kernels at run time)\n",
	       __builtin_cpu_supports("avx2") ? "yes" : "no",
	       __builtin_cpu_supports("avx512f") ? "yes" : "no",
	       __builtin_cpu_supports("avx512bw") ? "yes" : "no");
#endif
	f = fopen("/proc/loadavg", "r");
	if (f != NULL) {
		if (fscanf(f, "%lf %lf %lf", &load[0], &load[1], &load[2]) == 3)
			printf("load avg:   %.2f %.2f %.2f at start (other work on this machine "
			       "skews "
			       "the figures)\n",
			       load[0], load[1], load[2]);
		fclose(f);
	}
}

int main(int argc, char **argv)
{
	struct cfg c;
	struct sdr_ec *ec;
	unsigned int n, s, i, p;
	uint8_t ***chunks, **orig, *present[N_PATTERNS];
	uint8_t **buf;
	double t0, t, data_b, total_b;
	unsigned long it;

	if (parse_args(argc, argv, &c) != 0)
		return 2;
	n = c.k + c.m;
	ec = c.ops ? sdr_ec_create_with(c.ops, c.k, c.m) : sdr_ec_create(c.code, c.k, c.m);
	if (ec == NULL) {
		fprintf(stderr, "sdr_ec_create: %s\n", strerror(errno));
		return 1;
	}

	/* stripes[s][i] -> chunk i of stripe s; one allocation per chunk */
	chunks = calloc(c.stripes, sizeof(*chunks));
	orig = calloc(c.k, sizeof(*orig));
	buf = calloc((size_t)c.stripes * n, sizeof(*buf));
	if (chunks == NULL || orig == NULL || buf == NULL)
		goto nomem;
	for (s = 0; s < c.stripes; s++) {
		chunks[s] = calloc(n, sizeof(**chunks));
		if (chunks[s] == NULL)
			goto nomem;
		for (i = 0; i < n; i++) {
			chunks[s][i] = buf[(size_t)s * n + i] = malloc(c.chunk);
			if (chunks[s][i] == NULL)
				goto nomem;
			for (size_t b = 0; b < c.chunk; b++)
				chunks[s][i][b] = (uint8_t)rnd();
		}
	}
	for (i = 0; i < c.k; i++) {
		orig[i] = malloc(c.chunk);
		if (orig[i] == NULL)
			goto nomem;
		memcpy(orig[i], chunks[0][i], c.chunk);
	}
	for (p = 0; p < N_PATTERNS; p++) {
		present[p] = malloc(n);
		if (present[p] == NULL)
			goto nomem;
		do
			make_pattern(&c, present[p]);
		while (p > 0 && c.k > c.erasures && memcmp(present[p], present[p - 1], n) == 0);
	}

	/* Correctness first: encode, erase, decode, compare. */
	for (s = 0; s < c.stripes; s++)
		if (sdr_ec_encode(ec, (const uint8_t *const *)chunks[s], chunks[s] + c.k,
				  c.chunk) != 0)
			goto fail;
	for (p = 0; p < 2; p++) {
		for (i = 0; i < c.k; i++)
			if (!present[p][i])
				memset(chunks[0][i], 0xEE, c.chunk);
		if (sdr_ec_decode(ec, chunks[0], present[p], c.chunk) != (int)c.erasures)
			goto fail;
		for (i = 0; i < c.k; i++)
			if (memcmp(chunks[0][i], orig[i], c.chunk) != 0)
				goto fail;
	}

	printf("ec_perf:    code %s, backend %s, k=%u m=%u, chunk %zu B, %u lost data "
	       "chunk(s) per decode\n",
	       sdr_ec_code_name(c.code), sdr_ec_backend_name(ec), c.k, c.m, c.chunk, c.erasures);
	printf("isa-l:      %s\n", SDR_ISAL_VERSION);
	print_cpu();
	printf("setup:      1 thread, %u stripe(s) cycled = %.1f KiB of buffers, ~%.2f s per "
	       "figure, GB = 1e9 B\n",
	       c.stripes, (double)c.stripes * n * (double)c.chunk / 1024.0, c.seconds);

	data_b = (double)c.k * (double)c.chunk;
	total_b = (double)n * (double)c.chunk;

	/* encode */
	it = 0;
	t0 = now();
	do {
		for (i = 0; i < 16; i++, it++) {
			uint8_t **st = chunks[it % c.stripes];

			sdr_ec_encode(ec, (const uint8_t *const *)st, st + c.k, c.chunk);
		}
		t = now() - t0;
	} while (t < c.seconds);
	printf("encode:               %8.3f GB/s data (k*chunk/call)   %8.3f GB/s data+parity "
	       "((k+m)*chunk/call)   %9.0f ns/call  [%lu calls]\n",
	       data_b * it / t / 1e9, total_b * it / t / 1e9, t / it * 1e9, it);

	/* decode, same pattern */
	it = 0;
	t0 = now();
	do {
		for (i = 0; i < 16; i++, it++)
			sdr_ec_decode(ec, chunks[it % c.stripes], present[0], c.chunk);
		t = now() - t0;
	} while (t < c.seconds);
	printf("decode, same pattern: %8.3f GB/s data (k*chunk/call)   %8.3f GB/s recovered "
	       "(%u*chunk/call)       %9.0f ns/call  [%lu calls]\n",
	       data_b * it / t / 1e9, (double)c.erasures * c.chunk * it / t / 1e9, c.erasures,
	       t / it * 1e9, it);

	/* decode, new pattern each call */
	it = 0;
	t0 = now();
	do {
		for (i = 0; i < 16; i++, it++)
			sdr_ec_decode(ec, chunks[it % c.stripes], present[it % N_PATTERNS],
				      c.chunk);
		t = now() - t0;
	} while (t < c.seconds);
	printf("decode, new pattern:  %8.3f GB/s data (k*chunk/call)   %8.3f GB/s recovered "
	       "(%u*chunk/call)       %9.0f ns/call  [%lu calls]\n",
	       data_b * it / t / 1e9, (double)c.erasures * c.chunk * it / t / 1e9, c.erasures,
	       t / it * 1e9, it);

	if (c.msg && sender_figures(&c, ec))
		goto fail;

	/* the timed decodes must still have produced the originals */
	for (s = 0; s < c.stripes; s++)
		for (p = 0; p < 1; p++)
			if (sdr_ec_decode(ec, chunks[s], present[0], c.chunk) != (int)c.erasures)
				goto fail;
	for (i = 0; i < c.k; i++)
		if (memcmp(chunks[0][i], orig[i], c.chunk) != 0)
			goto fail;

	for (i = 0; i < (size_t)c.stripes * n; i++)
		free(buf[i]);
	for (s = 0; s < c.stripes; s++)
		free(chunks[s]);
	for (i = 0; i < c.k; i++)
		free(orig[i]);
	for (p = 0; p < N_PATTERNS; p++)
		free(present[p]);
	free(chunks);
	free(orig);
	free(buf);
	sdr_ec_free(ec);
	return 0;
fail:
	fprintf(stderr, "ec_perf: encode/decode result is wrong; not reporting figures\n");
	return 1;
nomem:
	fprintf(stderr, "ec_perf: out of memory\n");
	return 1;
}
