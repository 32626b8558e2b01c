/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * "Adding a scheme is one folder and one line in the table", for counters,
 * options and stats too (docs/architecture.md "Adding a scheme"): a toy
 * scheme declared in this file alone - its counter group, its option, its
 * stats hooks - is registered with sdr_rel_register() (the test's stand-in
 * for the table line in rel.c), and its counter and option show up in the
 * firmware's stats block, --stats-json and telemetry keys without an edit
 * to a shared file. It moves data as reliability "none" does (it borrows
 * none's calls), on the engine rig (engine_rig.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "auto_counters.h"
#include "engine_rig.h"
#include "rel.h"
#include "sdr_opts.h"
#include "sdr_test.h"
#include "stats.h"

/* ---- the toy scheme: what its folder would hold ---- */

#define TOY_RELIABILITY 9

/* its counters (toy_counters.h) */
#define TOY_QP_CTRS(X) X(toy, sends) X(toy, bytes)
SDR_QP_CTR_GROUP_DECLARE(toy, TOY_QP_CTRS);
SDR_QP_CTR_GROUP_DEFINE(toy, TOY_QP_CTRS);

/* its option (--toy-level) */
static uint32_t toy_level = 3;
static const struct sdr_opt toy_opts[] = {
	SDR_OPT_SECTION("\nToy (a test's scheme):"),
	{.name = "toy-level",
	 .arg = "N",
	 .kind = SDR_OPT_U32,
	 .min = 1,
	 .max = 9,
	 .var = &toy_level,
	 .help = "how toy it is (default 3)"},
	SDR_OPT_END,
};

/* its calls: none's, counting its sends */
static int toy_send_prepare(struct sdr_worker *w, struct sdr_qp *qp, struct sdr_smsg *sm,
			    uint64_t now)
{
	SDR_QP_CTR(qp, toy, sends)++;
	SDR_QP_CTR(qp, toy, bytes) += sm->len;
	return sdr_rel_none.send_prepare(w, qp, sm, now);
}

/* its stats */
static void toy_print(FILE *f, const struct sdr_qp *qp)
{
	fprintf(f, "    TOY: level %u | sends %" PRIu64 "\n", toy_level,
		SDR_QP_CTR(qp, toy, sends));
}

static void toy_json(FILE *f, const struct sdr_qp *qp)
{
	(void)qp;
	fprintf(f, ",\"toy\":{\"level\":%u}", toy_level);
}

static void toy_kv(const struct sdr_qp *qp, const struct sdr_kv *kv)
{
	(void)qp;
	kv->u64(kv->arg, "toy_level", toy_level);
}

static struct sdr_ctr_group *const toy_ctrs[] = {&sdr_qpc_toy, NULL};

static const struct sdr_rel_desc toy_desc = {
	.ctrs = toy_ctrs,
	.opts = toy_opts,
	.print = toy_print,
	.json = toy_json,
	.kv = toy_kv,
};

static struct sdr_rel_ops toy_ops; /* none's, with the above (main) */

/* ---- the test ---- */

static char *capture(void (*fn)(FILE *f, void *arg), void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	CHECK(f != NULL);
	fn(f, arg);
	fclose(f);
	return buf;
}

static void json_inst(FILE *f, void *arg)
{
	sdr_stats_inst_qps_json(f, arg);
}

static void print_qp(FILE *f, void *arg)
{
	sdr_stats_qp_print(f, arg);
}

struct kv_seen {
	uint64_t level, sends, retx;
	int has_level, has_sends, has_retx;
};

static void kv_u64(void *arg, const char *k, uint64_t v)
{
	struct kv_seen *s = arg;

	if (!strcmp(k, "toy_level"))
		s->level = v, s->has_level = 1;
	if (!strcmp(k, "toy_sends"))
		s->sends = v, s->has_sends = 1;
	if (!strcmp(k, "sr_retx_pkts"))
		s->retx = v, s->has_retx = 1;
}

static void kv_str(void *arg, const char *k, const char *v)
{
	(void)arg;
	(void)k;
	(void)v;
}

struct count_cqes {
	int side;
	size_t want;
};

static int have_cqes(struct rig *r, void *arg)
{
	const struct count_cqes *c = arg;
	return r->s[c->side].ncqe >= c->want;
}

static void t_toy(void)
{
	struct rig_opts o = {.args = "--mtu 1024 --chunk-pkts 4 --max-msg 65536 --toy-level 7",
			     .mem_bytes = 1u << 20,
			     .seed = t_rnd()};
	struct count_cqes cc = {.side = RIG_A, .want = 5};
	struct kv_seen seen = {0};
	struct sdr_qp *qa;
	char *js, *blk, want[128];

	toy_ops = sdr_rel_none;
	toy_ops.name = "toy";
	toy_ops.reliability = TOY_RELIABILITY;
	toy_ops.desc = &toy_desc;
	toy_ops.send_prepare = toy_send_prepare;
	/* the table line, at run time (before the command line is parsed) */
	CHECK_EQ(sdr_rel_register(&toy_ops), 0);
	CHECK_EQ(sdr_rel_register(&toy_ops), -EEXIST);
	CHECK(sdr_rel_ops_of(TOY_RELIABILITY) == &toy_ops);
	CHECK(sdr_qpc_toy.registered);
	/* after the firmware's own groups (whose slots do not move) */
	CHECK(sdr_qpc_toy.base >= sdr_qpc_auto.base + sdr_qpc_auto.n);

	o.attr.reliability = TOY_RELIABILITY;
	struct rig *r = rig_new(&o); /* parses --toy-level 7 */
	CHECK_EQ(toy_level, 7);
	qa = r->s[RIG_A].qp;
	CHECK(qa->ops == &toy_ops);
	for (uint32_t i = 0; i < 5; i++) {
		rig_recv(r, RIG_B, (uint64_t)i * 4096, 4096, 100 + i);
		rig_send(r, RIG_A, (uint64_t)i * 4096, 3000, i, 200 + i);
	}
	CHECK_EQ(rig_run_until(r, have_cqes, &cc, 1000000000ull), 0);
	CHECK_EQ(SDR_QP_CTR(qa, toy, sends), 5);
	CHECK_EQ(SDR_QP_CTR(qa, toy, bytes), 5 * 3000);

	/* --stats-json: the toy's counters in the QP's object and the totals,
	 * its option through its hook; the firmware's counters as before */
	js = capture(json_inst, r->s[RIG_A].in);
	printf("%s\n", js);
	CHECK(strstr(js, "\"toy_sends\":5") != NULL);
	CHECK(strstr(js, "\"toy_bytes\":15000") != NULL);
	CHECK(strstr(js, "\"toy\":{\"level\":7}") != NULL);
	CHECK(strstr(js, "\"qp_totals\":{\"tx_pkts\":") != NULL);
	CHECK(strstr(js, "\"sr_retx_pkts\":0") != NULL);
	CHECK(strstr(js, "\"ec_decodes\":0") != NULL);
	CHECK(strstr(js, "\"auto_msgs_ec\":0") != NULL);
	CHECK(strstr(js, "\"auto_closed\":[]") != NULL);
	snprintf(want, sizeof(want), "\"reliability\":%u", TOY_RELIABILITY);
	CHECK(strstr(js, want) != NULL);
	free(js);

	/* the stats block: the QP's line, then the toy's */
	blk = capture(print_qp, qa);
	printf("%s", blk);
	CHECK(strstr(blk, "msgs sent 5") != NULL);
	CHECK(strstr(blk, "    TOY: level 7 | sends 5\n") != NULL);
	free(blk);

	/* telemetry /sdr/qps keys */
	sdr_stats_qp_kv(qa, &(struct sdr_kv){.arg = &seen, .u64 = kv_u64, .str = kv_str});
	CHECK(seen.has_level && seen.level == 7);
	CHECK(seen.has_sends && seen.sends == 5);
	CHECK(seen.has_retx && seen.retx == 0);
	rig_free(r);
}

int main(void)
{
	t_seed("scheme_toy", 1);
	t_toy();
	return t_finish("scheme_toy");
}
