/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-optical: a pipeline's cross-DC transfers as lightpath requests in an
 * elastic optical network (host/pipe/pipe_optical.h), with and without the
 * CBA rule, over the CBA paper's grid (arXiv 2512.20080). Seeded and
 * reproducible; one JSON line per configuration. docs/pipeline.md §6
 * "Optical layer".
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipe.h"
#include "pipe_optical.h"
#include "sdr_opts.h"
#include "sdr_units.h"

/* The models of the paper's grid: bytes per transfer (activation = gradient)
 * and the forward time per micro-batch on one stage (backward: twice). The
 * 8B time is fitted so that CD-CBA's GPipe iteration at M = 64 matches the
 * paper's 12.93 s (docs/pipeline.md §6); 70B scales it by the parameter
 * count (70.6 / 8.03: the same tokens per micro-batch, FLOPs ~ parameters). */
struct model {
	const char *name;
	uint64_t bytes;
	double tf;
};

#define TF_8B 0.0575
static const struct model models[] = {
	{"8b", 512ull << 20, TF_8B},
	{"70b", 1024ull << 20, TF_8B * 70.6 / 8.03},
};
#define NMODELS (sizeof(models) / sizeof(models[0]))

/* the options a handler parses (the others are typed entries) */
enum { O_MODEL = 1, O_MICRO, O_ALG, O_BG_FS, O_SITES, O_PLACE, O_GRID };

struct cli {
	struct opt_cfg oc;
	int model;     /* -1: all */
	double tf, tb; /* 0: the model's */
	uint64_t size; /* 0: the model's */
	int sched;     /* -1: gpipe and 1f1b */
	uint32_t micro[8], nmicro;
	int alg; /* -1: all */
	int cba; /* 0 off, 1 on, 2 both */
	uint32_t iters, warmup, seeds;
	uint8_t place[PIPE_MAX_STAGES];
	uint32_t stages;
	int json, paths;
};

static int parse_list(const char *s, uint32_t *v, uint32_t max, uint32_t *n, uint32_t lo,
		      uint32_t hi)
{
	char buf[256], *save = NULL, *tok;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	*n = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t x;

		if (*n == max || sdr_parse_u64(tok, &x, 0) || x < lo || x > hi)
			return -1;
		v[(*n)++] = (uint32_t)x;
	}
	return *n ? 0 : -1;
}

static int on_opt(const struct sdr_opt *o, const char *arg, void *ctx)
{
	struct cli *c = ctx;
	uint32_t l[PIPE_MAX_STAGES], n;

	switch (o->id) {
	case O_MODEL:
		c->model = -2;
		for (size_t i = 0; i < NMODELS; i++)
			if (strcmp(arg, models[i].name) == 0)
				c->model = (int)i;
		if (strcmp(arg, "all") == 0)
			c->model = -1;
		return c->model == -2 ? -1 : 0;
	case O_MICRO: return parse_list(arg, c->micro, 8, &c->nmicro, 1, PIPE_MAX_MICRO);
	case O_ALG: {
		enum opt_alg a;

		if (strcmp(arg, "all") == 0)
			c->alg = -1;
		else if (opt_alg_parse(arg, &a))
			return -1;
		else
			c->alg = (int)a;
		return 0;
	}
	case O_BG_FS:
		if (parse_list(arg, l, 2, &n, 1, OPT_MAX_FS) || n != 2 || l[0] > l[1])
			return -1;
		c->oc.bg_fs_min = l[0];
		c->oc.bg_fs_max = l[1];
		return 0;
	case O_SITES:
		if (parse_list(arg, l, PIPE_MAX_DC, &n, 1, c->oc.topo.nodes) || n != PIPE_MAX_DC)
			return -1;
		for (uint32_t i = 0; i < n; i++)
			c->oc.dc_node[i] = l[i] - 1;
		return 0;
	case O_PLACE:
		if (parse_list(arg, l, PIPE_MAX_STAGES, &n, 0, PIPE_MAX_DC - 1) || n < 2)
			return -1;
		c->stages = n;
		for (uint32_t i = 0; i < n; i++)
			c->place[i] = (uint8_t)l[i];
		return pipe_place_check(c->place, n, NULL) ? -1 : 0;
	case O_GRID:
		c->model = -1;
		c->sched = -1;
		c->alg = -1;
		c->cba = 2;
		c->nmicro = 4;
		c->micro[0] = 16;
		c->micro[1] = 32;
		c->micro[2] = 64;
		c->micro[3] = 128;
		return 0;
	}
	return -1;
}

/* the typed entries' targets: fields of struct cli */
#define C(f) .off = offsetof(struct cli, f)
#define N32(f, lo, hi) .kind = SDR_OPT_U32, .min = (lo), .max = (hi), C(f)
/* a duration in seconds (a bare number too) up to a minute; above 0 with gt0 */
#define DUR(f, gt0) \
	.kind = SDR_OPT_DURATION, .fmin = 0, .fmax = 60, C(f), .flags = (gt0) ? SDR_OPTF_GT_MIN : 0

_Static_assert(sizeof(enum opt_blocked) == sizeof(int), "--blocked stores an int");
static const struct sdr_opt_name scheds[] = {
	{"gpipe", PIPE_SCHED_GPIPE}, {"1f1b", PIPE_SCHED_1F1B}, {"all", -1}, SDR_OPT_NAMES_END};
static const struct sdr_opt_name cbas[] = {{"off", 0}, {"on", 1}, {"both", 2}, SDR_OPT_NAMES_END};
static const struct sdr_opt_name blockeds[] = {
	{"wait", OPT_BLOCKED_WAIT}, {"min", OPT_BLOCKED_MIN}, SDR_OPT_NAMES_END};
static const struct sdr_opt_name bg_routes[] = {{"ksp-ff", 0}, {"same", 1}, SDR_OPT_NAMES_END};
static const struct sdr_opt_name bg_orders[] = {{"after", 0}, {"before", 1}, SDR_OPT_NAMES_END};

static const struct sdr_opt opts[] = {
	SDR_OPT_SECTION("pipeline:"),
	{.name = "model",
	 .arg = "NAME",
	 .fn = on_opt,
	 .id = O_MODEL,
	 .dflt = "8b",
	 .help = "8b (512 MiB per transfer) | 70b (1 GiB) | all; sets --size\n"
		 "and --tf"},
	{.name = "tf",
	 .arg = "T",
	 DUR(tf, 1),
	 .help = "forward time per micro-batch and stage (default: the\n"
		 "model's, 8b 57.5ms, 70b 505.5ms; docs/pipeline.md §6)"},
	{.name = "tb", .arg = "T", DUR(tb, 1), .dflt = "2*tf", .help = "backward time"},
	{.name = "size",
	 .arg = "SIZE",
	 .kind = SDR_OPT_SIZE,
	 .min = PIPE_HDR_BYTES,
	 .max = 1ull << 30,
	 C(size),
	 .help = "bytes per transfer, activations and gradients (default:\n"
		 "the model's)"},
	{.name = "sched",
	 .arg = "NAME",
	 .kind = SDR_OPT_ENUM,
	 .names = scheds,
	 C(sched),
	 .dflt = "gpipe",
	 .help = "gpipe | 1f1b | all (non-blocking: a transfer starts when\n"
		 "its producer ends)"},
	{.name = "micro",
	 .arg = "LIST",
	 .fn = on_opt,
	 .id = O_MICRO,
	 .dflt = "64",
	 .help = "micro-batches per iteration, e.g. 16,32,64,128"},
	{.name = "place",
	 .arg = "LIST",
	 .fn = on_opt,
	 .id = O_PLACE,
	 .dflt = "0,0,1,2,3,4,5,5",
	 .help = "DC of each stage"},
	SDR_OPT_SECTION("network and RSA:"),
	{.name = "alg",
	 .arg = "NAME",
	 .fn = on_opt,
	 .id = O_ALG,
	 .dflt = "all",
	 .help = "ksp-ff | sd-ff | cd | all (pipe_optical.h defines them)"},
	{.name = "cba",
	 .arg = "MODE",
	 .kind = SDR_OPT_ENUM,
	 .names = cbas,
	 C(cba),
	 .dflt = "both",
	 .help = "off (fixed --fs-init slots) | on (the CBA rule per request)\n"
		 "| both"},
	{.name = "fs-init",
	 .arg = "N",
	 N32(oc.fs_init, 0, 1000000),
	 .help = "slots of a request without CBA, and CBA's start; 0 =\n"
		 "uniform in [fs-min, fs-max] per request (default 0)"},
	{.name = "fs-min",
	 .arg = "N",
	 N32(oc.fs_min, 0, 1000000),
	 .dflt = "1",
	 .help = "CBA's fewest slots"},
	{.name = "fs-max",
	 .arg = "N",
	 N32(oc.fs_max, 0, 1000000),
	 .dflt = "6",
	 .help = "CBA's most slots"},
	{.name = "blocked",
	 .arg = "MODE",
	 .kind = SDR_OPT_ENUM,
	 .names = blockeds,
	 C(oc.blocked),
	 .dflt = "wait",
	 .help = "a blocked transfer: wait (retry at the next release) |\n"
		 "min (retry at once with --fs-min slots, then wait)"},
	{.name = "retry",
	 .arg = "T",
	 DUR(oc.retry, 0),
	 .dflt = "0",
	 .help = "a blocked request retries after T; 0 = at the next release\n"
		 "in the network"},
	{.name = "sites",
	 .arg = "LIST",
	 .fn = on_opt,
	 .id = O_SITES,
	 .dflt = "2,4,7,8,9,13",
	 .help = "NSFNET node (1..14) of DC 0..5"},
	{.name = "k", .arg = "K", N32(oc.K, 1, OPT_MAX_K), .dflt = "4", .help = "candidate paths"},
	{.name = "fs",
	 .arg = "N",
	 N32(oc.nfs, 2, OPT_MAX_FS),
	 .dflt = "80",
	 .help = "slots per fibre"},
	{.name = "setup",
	 .arg = "T",
	 DUR(oc.setup, 0),
	 .dflt = "0",
	 .help = "lightpath setup time"},
	{.name = "intra-lat",
	 .arg = "T",
	 DUR(oc.intra_lat, 0),
	 .dflt = "100us",
	 .help = "CB labels: intra-DC latency"},
	SDR_OPT_SECTION("background traffic:"),
	{.name = "bg-prob",
	 .arg = "P",
	 .kind = SDR_OPT_DOUBLE,
	 .fmin = 0,
	 .fmax = 1,
	 C(oc.bg_prob),
	 .dflt = "0.95",
	 .help = "probability of a burst per PP event"},
	{.name = "bg-count",
	 .arg = "N",
	 N32(oc.bg_count, 0, 1000000),
	 .dflt = "60",
	 .help = "requests per burst"},
	{.name = "bg-every",
	 .arg = "N",
	 N32(oc.bg_every, 1, 1000000),
	 .dflt = "1",
	 .help = "a PP event is every N-th transfer's first request"},
	{.name = "bg-fs",
	 .arg = "A,B",
	 .fn = on_opt,
	 .id = O_BG_FS,
	 .dflt = "4,20",
	 .help = "slots of a background request, uniform"},
	{.name = "bg-hold",
	 .arg = "T",
	 DUR(oc.bg_hold, 1),
	 .dflt = "0.2s",
	 .help = "mean holding time, exponential"},
	{.name = "bg-route",
	 .arg = "MODE",
	 .kind = SDR_OPT_ENUM,
	 .names = bg_routes,
	 C(oc.bg_same_alg),
	 .dflt = "ksp-ff",
	 .help = "ksp-ff | same (as --alg)"},
	{.name = "bg-order",
	 .arg = "MODE",
	 .kind = SDR_OPT_ENUM,
	 .names = bg_orders,
	 C(oc.bg_first),
	 .dflt = "after",
	 .help = "a burst comes after | before the request that caused it"},
	SDR_OPT_SECTION("run:"),
	{.name = "grid",
	 .fn = on_opt,
	 .id = O_GRID,
	 .help = "the paper's grid: --model all --sched all --micro\n"
		 "16,32,64,128 --alg all --cba both"},
	{.name = "iters",
	 .arg = "N",
	 N32(iters, 1, 1000),
	 .dflt = "12",
	 .help = "iterations per run, back to back on one network"},
	{.name = "warmup",
	 .arg = "N",
	 N32(warmup, 0, 1000000),
	 .dflt = "2",
	 .help = "first iterations left out of the means"},
	{.name = "seeds",
	 .arg = "N",
	 N32(seeds, 1, 1000000),
	 .dflt = "3",
	 .help = "runs per configuration (seeds SEED..SEED+N-1), averaged"},
	{.name = "seed",
	 .arg = "N",
	 .kind = SDR_OPT_U64,
	 C(oc.seed),
	 .dflt = "1",
	 .help = "first seed"},
	{.name = "print-paths",
	 .kind = SDR_OPT_BOOL,
	 C(paths),
	 .help = "print the candidate paths between the DCs, then exit"},
	{.name = "json", .kind = SDR_OPT_BOOL, C(json), .help = "one JSON line per configuration"},
	{.name = "help", .short_name = 'h', .help = "this text"},
	SDR_OPT_END,
};

static const struct sdr_opts opt_set = {
	.prog = "sdr-optical",
	.usage = "usage: sdr-optical [options]\n"
		 "A pipeline's cross-DC transfers as lightpath requests on NSFNET among\n"
		 "background traffic; KSP-FF, SD-FF and CD with and without the CBA rule.\n",
	.opt = opts,
	.col = 23,
};

struct acc {
	double iter, bubble, pp_req, pp_blk, bg_req, bg_blk, fs, retries, wait, ncb;
	uint32_t n;
};

static void acc_add(struct acc *a, const struct opt_iter *x)
{
	a->iter += x->iter_time;
	a->bubble += x->bubble;
	a->pp_req += x->pp_req;
	a->pp_blk += x->pp_blocked;
	a->bg_req += x->bg_req;
	a->bg_blk += x->bg_blocked;
	a->fs += x->fs_mean;
	a->retries += x->pp_retries;
	a->wait += x->wait_blocked;
	a->ncb += x->ncb;
	a->n++;
}

static int run_one(const struct cli *cl, const struct model *md, enum pipe_sched sched, uint32_t M,
		   enum opt_alg alg, int cba)
{
	static struct pipe_order ord;
	struct pipe_cfg pc;
	struct pipe_prog prog;
	struct opt_iter *it = calloc(cl->iters, sizeof(*it));
	struct opt_cfg oc = cl->oc;
	struct acc a = {0};
	int rc;

	if (!it)
		return -ENOMEM;
	pipe_cfg_init(&pc);
	pc.stages = cl->stages;
	memcpy(pc.dc_of, cl->place, sizeof(pc.dc_of));
	pc.micro = M;
	pc.sched = sched;
	pc.comm = PIPE_COMM_NONBLOCKING;
	pc.tf = cl->tf > 0 ? cl->tf : md->tf;
	pc.tb = cl->tb > 0 ? cl->tb : 2 * pc.tf;
	pc.act_bytes = pc.grad_bytes = cl->size ? cl->size : md->bytes;
	if ((rc = pipe_cfg_finish(&pc)) || (rc = pipe_order_build(&pc, &ord)) ||
	    (rc = pipe_prog_build(&pc, &ord, &prog))) {
		free(it);
		return rc;
	}
	oc.alg = alg;
	oc.cba = cba;
	for (uint32_t s = 0; s < cl->seeds && !rc; s++) {
		oc.seed = cl->oc.seed + s;
		rc = opt_run(&oc, &pc, &prog, cl->iters, it);
		for (uint32_t i = cl->warmup; i < cl->iters && !rc; i++)
			acc_add(&a, &it[i]);
	}
	pipe_prog_free(&prog);
	free(it);
	if (rc)
		return rc;
	if (cl->json)
		printf("{\"model\":\"%s\",\"sched\":\"%s\",\"micro\":%u,\"alg\":\"%s\",\"cba\":%s,"
		       "\"tf_ms\":%.3f,\"bytes\":%" PRIu64
		       ",\"iters\":%u,\"warmup\":%u,\"seeds\":%u,"
		       "\"iter_s\":%.6f,\"bubble\":%.6f,\"pp_blocking\":%.6f,\"bg_blocking\":%.6f,"
		       "\"pp_req\":%.1f,\"fs_mean\":%.4f,\"retries\":%.2f,\"blocked_wait_s\":%.6f,"
		       "\"cb\":%.1f,\"fs_init\":%u,\"blocked\":\"%s\",\"retry_s\":%g,\"bg_every\":%"
		       "u,\"bg_route\":\"%s\","
		       "\"bg_order\":\"%s\",\"sites\":[%u,%u,%u,%u,%u,%u]}\n",
		       md->name, pipe_sched_name(sched), M, opt_alg_name(alg),
		       cba ? "true" : "false", pc.tf * 1e3, pc.act_bytes, cl->iters, cl->warmup,
		       cl->seeds, a.iter / a.n, a.bubble / a.n, a.pp_req ? a.pp_blk / a.pp_req : 0,
		       a.bg_req ? a.bg_blk / a.bg_req : 0, a.pp_req / a.n, a.fs / a.n,
		       a.retries / a.n, a.wait / a.n, a.ncb / a.n, oc.fs_init,
		       oc.blocked == OPT_BLOCKED_WAIT ? "wait" : "min", oc.retry, oc.bg_every,
		       oc.bg_same_alg ? "same" : "ksp-ff", oc.bg_first ? "before" : "after",
		       oc.dc_node[0] + 1, oc.dc_node[1] + 1, oc.dc_node[2] + 1, oc.dc_node[3] + 1,
		       oc.dc_node[4] + 1, oc.dc_node[5] + 1);
	else
		printf("%-3s %-5s M=%-3u %-6s %-4s  iteration %8.3f s  bubble %5.1f %%  PP blocked "
		       "%5.2f %%  background blocked %5.1f %%  slots %.2f\n",
		       md->name, pipe_sched_name(sched), M, opt_alg_name(alg), cba ? "+CBA" : "",
		       a.iter / a.n, a.bubble / a.n * 100, a.pp_req ? a.pp_blk / a.pp_req * 100 : 0,
		       a.bg_req ? a.bg_blk / a.bg_req * 100 : 0, a.fs / a.n);
	return 0;
}

static void print_paths(const struct cli *cl)
{
	const struct opt_cfg *oc = &cl->oc;

	for (uint32_t a = 0; a < PIPE_MAX_DC; a++)
		for (uint32_t b = 0; b < PIPE_MAX_DC; b++) {
			struct opt_path p[OPT_MAX_K];
			int n;

			if (a == b)
				continue;
			n = opt_ksp(&oc->topo, oc->dc_node[a], oc->dc_node[b], oc->K, p);
			for (int k = 0; k < n; k++) {
				printf("DC%u->DC%u path %d: %5.0f km, %u hops:", a, b, k, p[k].km,
				       p[k].hops);
				for (uint32_t h = 0; h <= p[k].hops; h++)
					printf(" %u", p[k].node[h] + 1u);
				printf("\n");
			}
		}
}

int main(int argc, char **argv)
{
	static const uint8_t place[8] = {0, 0, 1, 2, 3, 4, 5, 5};
	struct cli cl;
	int n;

	setvbuf(stdout, NULL, _IOLBF, 0);
	memset(&cl, 0, sizeof(cl));
	opt_cfg_default(&cl.oc);
	cl.model = 0;
	cl.sched = PIPE_SCHED_GPIPE;
	cl.micro[0] = 64;
	cl.nmicro = 1;
	cl.alg = -1;
	cl.cba = 2;
	cl.iters = 12;
	cl.warmup = 2;
	cl.seeds = 3;
	cl.stages = 8;
	memcpy(cl.place, place, sizeof(place));
	n = sdr_opts_parse(&opt_set, argc, argv, &cl);
	if (n == SDR_OPTS_HELP)
		return 0;
	if (n != argc) {
		if (n >= 0)
			sdr_opts_usage(&opt_set, stderr);
		return 2;
	}
	if (cl.warmup >= cl.iters) {
		fprintf(stderr, "sdr-optical: --warmup %u leaves no iteration of %u\n", cl.warmup,
			cl.iters);
		return 2;
	}
	if (cl.oc.fs_min > cl.oc.fs_max ||
	    (cl.oc.fs_init && (cl.oc.fs_init < cl.oc.fs_min || cl.oc.fs_init > cl.oc.fs_max)) ||
	    cl.oc.fs_max + cl.oc.guard > cl.oc.nfs || cl.oc.bg_fs_max + cl.oc.guard > cl.oc.nfs) {
		fprintf(stderr,
			"sdr-optical: slots: want 1 <= fs-min <= fs-init <= fs-max, and every "
			"request plus its guard within --fs %u\n",
			cl.oc.nfs);
		return 2;
	}
	if (cl.paths) {
		print_paths(&cl);
		return 0;
	}
	for (size_t md = 0; md < NMODELS; md++) {
		if (cl.model >= 0 && (size_t)cl.model != md)
			continue;
		for (int sc = PIPE_SCHED_GPIPE; sc <= PIPE_SCHED_1F1B; sc++) {
			if (cl.sched >= 0 && cl.sched != sc)
				continue;
			for (uint32_t mi = 0; mi < cl.nmicro; mi++)
				for (int al = 0; al < OPT_ALG_COUNT; al++) {
					if (cl.alg >= 0 && cl.alg != al)
						continue;
					for (int cb = 0; cb < 2; cb++) {
						int rc;

						if (cl.cba != 2 && cl.cba != cb)
							continue;
						rc = run_one(&cl, &models[md], (enum pipe_sched)sc,
							     cl.micro[mi], (enum opt_alg)al, cb);
						if (rc) {
							fprintf(stderr, "sdr-optical: %s\n",
								rc == -EINVAL
									? "invalid configuration "
									  "(DC sites, "
									  "placement or slots)"
									: strerror(-rc));
							return 1;
						}
					}
				}
		}
	}
	return 0;
}
