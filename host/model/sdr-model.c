/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-model: predicted completion time of SR and EC(k, m) for one message
 * over one link, from the model in common/sdr_model.h (docs/model.md).
 *
 *   sdr-model --size 4M --rtt 25ms --rate 1gbit --loss 1e-3 --chunk 4K
 *
 * prints mean, p99 and p99.9 per scheme and the scheme the AUTO mode would
 * pick. Exit status: 0 success, 1 model error, 2 usage error.
 */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sdr_model.h"
#include "sdr_opts.h"
#include "sdr_wire.h"
#include "sdr_units.h"

#define MAX_SCHEMES 32
/* what --schemes takes: SR or EC codes within the model's limits, also in
 * the model's own names (rs32x8) */
#define MODEL_SCHEMES (SDR_SCHEME_MODEL | SDR_SCHEME_MODEL_NAMES | SDR_SCHEME_SR_EC)

static int bad(const char *opt, const char *val, const char *why)
{
	fprintf(stderr, "sdr-model: invalid %s '%s': %s\n", opt, val, why);
	return -EINVAL;
}

/* number followed by a suffix looked up in a table; whole string consumed */
struct suffix {
	const char *s;
	double mult;
};

static int parse_scaled(const char *opt, const char *val, const struct suffix *tab, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(val, &end);
	if (end == val || errno == ERANGE || !isfinite(v))
		return bad(opt, val, "not a finite number");
	if (v < 0)
		return bad(opt, val, "must not be negative");
	for (const struct suffix *s = tab; s->s != NULL; s++)
		if (strcasecmp(end, s->s) == 0) {
			*out = v * s->mult;
			if (!isfinite(*out))
				return bad(opt, val, "out of range");
			return 0;
		}
	return bad(opt, val, "unknown unit suffix");
}

static const struct suffix size_sfx[] = {
	{"", 1},         {"b", 1},       {"k", 0x1p10},   {"kb", 0x1p10},  {"kib", 0x1p10},
	{"m", 0x1p20},   {"mb", 0x1p20}, {"mib", 0x1p20}, {"g", 0x1p30},   {"gb", 0x1p30},
	{"gib", 0x1p30}, {"t", 0x1p40},  {"tb", 0x1p40},  {"tib", 0x1p40}, {NULL, 0},
};
static const struct suffix rate_sfx[] = {
	{"", 1},        {"bit", 1},     {"bps", 1},    {"b/s", 1},    {"k", 1e3},    {"kbit", 1e3},
	{"kbps", 1e3},  {"kb/s", 1e3},  {"m", 1e6},    {"mbit", 1e6}, {"mbps", 1e6}, {"mb/s", 1e6},
	{"g", 1e9},     {"gbit", 1e9},  {"gbps", 1e9}, {"gb/s", 1e9}, {"t", 1e12},   {"tbit", 1e12},
	{"tbps", 1e12}, {"tb/s", 1e12}, {NULL, 0},
};

static int parse_bytes(const char *opt, const char *val, uint64_t max, uint64_t *out)
{
	double v;
	int rc = parse_scaled(opt, val, size_sfx, &v);

	if (rc)
		return rc;
	if (v < 1 || v > (double)max)
		return bad(opt, val, "out of range");
	if (v != floor(v))
		return bad(opt, val, "not a whole number of bytes");
	*out = (uint64_t)v;
	return 0;
}

static int parse_prob(const char *opt, const char *val, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(val, &end);
	if (end == val || *end != '\0' || errno == ERANGE || !(v >= 0.0 && v < 1.0))
		return bad(opt, val, "must be a probability in [0, 1)");
	*out = v;
	return 0;
}

static int parse_schemes(const char *val, struct sdr_scheme *out, size_t *n)
{
	char buf[1024];
	char *save = NULL, *tok;

	if (strlen(val) >= sizeof(buf))
		return bad("--schemes", val, "too long");
	strcpy(buf, val);
	*n = 0;
	for (tok = strtok_r(buf, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		if (*n == MAX_SCHEMES)
			return bad("--schemes", val, "more than 32 schemes");
		if (sdr_scheme_parse(tok, MODEL_SCHEMES, NULL, &out[*n]) != 0) {
			fprintf(stderr,
				"sdr-model: invalid --schemes entry '%s': expected sr, rs:K:M "
				"(k+m <= %u) or xor:K:M (m <= k <= %u); also rs<K>x<M>, "
				"xor<K>x<M>\n",
				tok, SDR_SCHEME_MODEL_KM_MAX, SDR_SCHEME_MODEL_XOR_K_MAX);
			return -EINVAL;
		}
		(*n)++;
	}
	if (*n == 0)
		return bad("--schemes", val, "empty list");
	return 0;
}

static void fmt_bytes(uint64_t b, char *buf, size_t len)
{
	static const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	double v = (double)b;
	int u = 0;

	while (v >= 1024 && u < 4 && fmod(v, 1024) == 0) {
		v /= 1024;
		u++;
	}
	snprintf(buf, len, "%.6g %s", v, unit[u]);
}

/* ---------------- options ---------------- */

struct cli {
	struct sdr_model_params p;
	struct sdr_scheme sch[MAX_SCHEMES];
	size_t nsch;
	enum sdr_model_objective obj;
	uint64_t chunk, mtu;
	double paced_bps; /* --paced: frame-byte rate; 0 = --rate given */
	int have_size, have_rate, have_rtt, have_loss, chunk_loss, json;
};

enum { O_SIZE = 1, O_RATE, O_PACED, O_RTT, O_LOSS, O_CHUNK_LOSS, O_CHUNK, O_MTU, O_SCHEMES, O_OBJ };

static int on_opt(const struct sdr_opt *o, const char *arg, void *ctx)
{
	struct cli *c = ctx;
	char opt[32];
	double v;
	int rc = 0;

	snprintf(opt, sizeof(opt), "--%s", o->name);
	switch (o->id) {
	case O_SIZE:
		rc = parse_bytes(opt, arg, (uint64_t)1 << 62, &c->p.msg_bytes);
		c->have_size = 1;
		break;
	case O_RATE:
	case O_PACED:
		if (c->have_rate) {
			fprintf(stderr, "sdr-model: give one of --rate and --paced, once\n");
			return -2;
		}
		rc = parse_scaled(opt, arg, rate_sfx, &v);
		if (rc == 0 && !(v > 0))
			rc = bad(opt, arg, "must be > 0");
		if (o->id == O_RATE)
			c->p.rate_bps = v;
		else
			c->paced_bps = v;
		c->have_rate = 1;
		break;
	case O_RTT: /* a typed entry; stored */ c->have_rtt = 1; break;
	case O_LOSS:
	case O_CHUNK_LOSS:
		if (c->have_loss) {
			fprintf(stderr, "sdr-model: give one of --loss and --chunk-loss, once\n");
			return -2;
		}
		rc = parse_prob(opt, arg, &c->p.pkt_loss);
		c->chunk_loss = o->id == O_CHUNK_LOSS;
		c->have_loss = 1;
		break;
	case O_CHUNK: rc = parse_bytes(opt, arg, UINT32_MAX, &c->chunk); break;
	case O_MTU: rc = parse_bytes(opt, arg, UINT32_MAX, &c->mtu); break;
	case O_SCHEMES: rc = parse_schemes(arg, c->sch, &c->nsch); break;
	case O_OBJ:
		if (strcasecmp(arg, "mean") == 0)
			c->obj = SDR_MODEL_OBJ_MEAN;
		else if (strcasecmp(arg, "p999") == 0 || strcasecmp(arg, "p99.9") == 0)
			c->obj = SDR_MODEL_OBJ_P999;
		else
			rc = bad(opt, arg, "expected mean or p999");
		break;
	}
	return rc ? -2 : 0;
}

/* --parse-scheme SPEC: the scheme as JSON (for scripts: host/perf/grid.py) */
static int on_parse_scheme(const struct sdr_opt *o, const char *arg, void *ctx)
{
	struct sdr_scheme s;
	char spec[SDR_SCHEME_STR_MAX], label[SDR_SCHEME_STR_MAX];

	(void)o;
	(void)ctx;
	if (sdr_scheme_parse(arg, SDR_SCHEME_MODEL | SDR_SCHEME_MODEL_NAMES, NULL, &s)) {
		fprintf(stderr,
			"sdr-model: '%s' is not a scheme (none, sr, auto, rs:K:M, xor:K:M,"
			" ec:CODE:K:M, rs<K>x<M>, xor<K>x<M>)\n",
			arg);
		exit(2);
	}
	sdr_scheme_format(&s, SDR_SCHEME_SPEC, spec, sizeof(spec));
	sdr_scheme_format(&s, SDR_SCHEME_LABEL, label, sizeof(label));
	printf("{\"spec\":\"%s\",\"label\":\"%s\",\"rel\":\"%s\",\"code\":%s%s%s,"
	       "\"k\":%u,\"m\":%u,\"qp\":%s,\"model\":%s}\n",
	       spec, label, sdr_rel_name(s.rel), s.code ? "\"" : "",
	       s.code ? sdr_ec_code_name(s.code) : "null", s.code ? "\"" : "", s.k, s.m,
	       sdr_scheme_check(&s, 0) == 0 ? "true" : "false",
	       sdr_scheme_check(&s, SDR_SCHEME_MODEL | SDR_SCHEME_SR_EC) == 0 ? "true" : "false");
	exit(0);
}

/* --list-schemes: what a scheme may be, as JSON */
static int on_list_schemes(const struct sdr_opt *o, const char *arg, void *ctx)
{
	static const struct sdr_scheme dflt = SDR_SCHEME_EC_DEFAULT;
	char spec[SDR_SCHEME_STR_MAX];

	(void)o;
	(void)arg;
	(void)ctx;
	printf("{\"reliabilities\":{");
	for (unsigned r = 0; r <= SDR_REL_AUTO; r++)
		printf("%s\"%s\":%u", r ? "," : "", sdr_rel_name(r), r);
	printf("},\"codes\":{\"%s\":%d,\"%s\":%d},", sdr_ec_code_name(SDR_EC_RS), SDR_EC_RS,
	       sdr_ec_code_name(SDR_EC_XOR), SDR_EC_XOR);
	printf("\"qp_limits\":{\"k_max\":%d,\"m_max\":%d,\"xor_m_le_k\":true},", SDR_EC_K_MAX,
	       SDR_EC_M_MAX);
	printf("\"model_limits\":{\"rs_k_plus_m_max\":%d,\"xor_k_max\":%d,\"xor_m_le_k\":true},",
	       SDR_SCHEME_MODEL_KM_MAX, SDR_SCHEME_MODEL_XOR_K_MAX);
	sdr_scheme_format(&dflt, SDR_SCHEME_SPEC, spec, sizeof(spec));
	printf("\"ec_default\":\"%s\",\"model_default\":[", spec);
	for (unsigned i = 0; i < SDR_MODEL_N_DEFAULT_SCHEMES; i++) {
		sdr_scheme_format(&sdr_model_default_schemes[i], SDR_SCHEME_SPEC, spec,
				  sizeof(spec));
		printf("%s\"%s\"", i ? "," : "", spec);
	}
	printf("]}\n");
	exit(0);
}

/* typed entries: fields of struct cli */
#define C(f) .off = offsetof(struct cli, f)
#define NONNEG(f) .kind = SDR_OPT_DOUBLE, C(f) /* [0, infinity) */

static const struct sdr_opt opts[] = {
	{.name = "size",
	 .arg = "BYTES",
	 .fn = on_opt,
	 .id = O_SIZE,
	 .help = "message size; suffix K, M, G, T (powers of 1024; KiB, MB\n"
		 "and so on are read the same), e.g. 256K, 4M, 1.5G"},
	{.name = "rate",
	 .arg = "RATE",
	 .fn = on_opt,
	 .id = O_RATE,
	 .help = "link rate in bit/s; suffix k, m, g, t (powers of 1000)\n"
		 "optionally followed by bit, bps or b/s, e.g. 1gbit, 400G"},
	{.name = "paced",
	 .arg = "RATE",
	 .fn = on_opt,
	 .id = O_PACED,
	 .help = "instead of --rate: the pacing rate of frame bytes (sdr-dpu\n"
		 "--port-rate, a QP's rate_bps); the model's rate is RATE x\n"
		 "MTU / frame bytes of a full packet (78 B of headers and\n"
		 "ICRC around it)"},
	{.name = "rtt",
	 .arg = "TIME",
	 .kind = SDR_OPT_DURATION,
	 C(p.rtt_s),
	 .fn = on_opt,
	 .id = O_RTT,
	 .help = "round-trip time; suffix s, ms, us or ns (bare = seconds)"},
	{.name = "loss",
	 .arg = "P",
	 .fn = on_opt,
	 .id = O_LOSS,
	 .help = "i.i.d. per-packet loss probability, 0 <= P < 1"},
	{.name = "chunk-loss",
	 .arg = "P",
	 .fn = on_opt,
	 .id = O_CHUNK_LOSS,
	 .help = "per-chunk loss instead (ignores --mtu for the loss)"},
	{.name = "chunk",
	 .arg = "BYTES",
	 .fn = on_opt,
	 .id = O_CHUNK,
	 .dflt = "64K",
	 .help = "bitmap chunk size"},
	{.name = "mtu",
	 .arg = "BYTES",
	 .fn = on_opt,
	 .id = O_MTU,
	 .dflt = "4K",
	 .help = "packet payload size; packets per chunk = ceil(chunk/mtu),\n"
		 "per-chunk loss = 1-(1-P)^packets"},
	{.name = "alpha",
	 .arg = "A",
	 NONNEG(p.alpha),
	 .dflt = "0.5",
	 .help = "RTO = (1+A)*RTT, A >= 0"},
	{.name = "beta",
	 .arg = "B",
	 NONNEG(p.beta),
	 .dflt = "A/2",
	 .help = "fallback timeout slack: FTO = injection time + B*RTT,\nB >= 0"},
	{.name = "schemes",
	 .arg = "LIST",
	 .fn = on_opt,
	 .id = O_SCHEMES,
	 .dflt = "sr,rs:32:8,rs:16:4,rs:8:2,xor:32:8",
	 .help = "comma-separated: sr, rs:K:M (k+m <= 255), xor:K:M\n"
		 "(m <= k <= 4096); the model's names rs<K>x<M> (alias\n"
		 "mds<K>x<M>) and xor<K>x<M> too, any case; on a tie the\n"
		 "earlier scheme is picked"},
	{.name = "objective",
	 .arg = "OBJ",
	 .fn = on_opt,
	 .id = O_OBJ,
	 .dflt = "mean",
	 .help = "what the pick minimises: mean or p999"},
	{.name = "json",
	 .kind = SDR_OPT_BOOL,
	 C(json),
	 .help = "print one JSON object instead of the table"},
	{.name = "parse-scheme",
	 .arg = "SPEC",
	 .fn = on_parse_scheme,
	 .help = "print SPEC (any spelling of a scheme) as JSON: spec,\n"
		 "label, rel, code, k, m, whether a QP runs it and the\n"
		 "model evaluates it; exit 2 if it is none"},
	{.name = "list-schemes",
	 .fn = on_list_schemes,
	 .help = "print what a scheme may be as JSON: reliabilities, codes,\n"
		 "a QP's and the model's limits, the defaults"},
	{.name = "help", .help = "this text"},
	SDR_OPT_END,
};

static const struct sdr_opts opt_set = {
	.prog = "sdr-model",
	.usage =
		"Usage: sdr-model --size BYTES (--rate RATE | --paced RATE) --rtt TIME\n"
		"                 (--loss P | --chunk-loss P) [--chunk BYTES] [--mtu BYTES]\n"
		"                 [--alpha A] [--beta B] [--schemes LIST] [--objective mean|p999]\n"
		"                 [--json]\n"
		"       sdr-model --parse-scheme SPEC | --list-schemes\n"
		"\n"
		"Predicts the completion time of one SDR Write under selective repeat (SR) and\n"
		"erasure coding with SR fallback (EC), using the model of docs/model.md.\n"
		"\n",
	.opt = opts,
	.col = 21,
};

int main(int argc, char **argv)
{
	struct cli c = {.p = {.alpha = 0.5, .beta = -1.0},
			.nsch = SDR_MODEL_N_DEFAULT_SCHEMES,
			.obj = SDR_MODEL_OBJ_MEAN,
			.chunk = 64 << 10,
			.mtu = SDR_MODEL_MTU_DEFAULT};
	struct sdr_model_result res[MAX_SCHEMES];
	size_t best;
	int first, rc;

	memcpy(c.sch, sdr_model_default_schemes, sizeof(c.sch[0]) * c.nsch);
	first = sdr_opts_parse(&opt_set, argc, argv, &c);
	if (first == SDR_OPTS_HELP)
		return 0;
	if (first < 0)
		return 2;
	if (first < argc) {
		fprintf(stderr, "sdr-model: unexpected argument '%s'\n", argv[first]);
		return 2;
	}
	if (!c.have_size || !c.have_rate || !c.have_rtt || !c.have_loss) {
		fprintf(stderr, "sdr-model: missing%s%s%s%s (see --help)\n",
			c.have_size ? "" : " --size", c.have_rate ? "" : " --rate",
			c.have_rtt ? "" : " --rtt", c.have_loss ? "" : " --loss");
		return 2;
	}
	/* the pacers count frame bytes; the model injects chunks of payload
	 * (in frames of a message with an immediate: 4 B more per packet than
	 * without, 0.1 % at 4 KiB) */
	if (c.paced_bps > 0)
		c.p.rate_bps = c.paced_bps * (double)c.mtu /
			       (double)sdr_wire_data_frame_bytes((uint32_t)c.mtu, 1);
	struct sdr_model_params p = c.p;
	struct sdr_scheme *sch = c.sch;
	size_t nsch = c.nsch;
	enum sdr_model_objective obj = c.obj;
	uint64_t chunk = c.chunk, mtu = c.mtu;
	int chunk_loss = c.chunk_loss, json = c.json;

	p.chunk_bytes = (uint32_t)chunk;
	p.pkts_per_chunk = chunk_loss ? 1 : (uint32_t)((chunk + mtu - 1) / mtu);

	rc = sdr_model_pick(&p, sch, nsch, obj, res, &best);
	if (rc == -ERANGE) {
		fprintf(stderr, "sdr-model: per-chunk loss %.3g is too close to 1 for the model\n",
			sdr_model_p_chunk(p.pkt_loss, p.pkts_per_chunk));
		return 1;
	}
	if (rc) {
		fprintf(stderr, "sdr-model: bad parameters (%s): message over %llu chunks?\n",
			strerror(-rc), (unsigned long long)SDR_MODEL_MAX_CHUNKS);
		return 1;
	}

	const struct sdr_model_result *r0 = &res[0];
	char names[MAX_SCHEMES][SDR_SCHEME_STR_MAX], sz[32], ck[32];
	for (size_t i = 0; i < nsch; i++)
		sdr_scheme_format(&res[i].scheme, SDR_SCHEME_LABEL, names[i], sizeof(names[i]));
	fmt_bytes(p.msg_bytes, sz, sizeof(sz));
	fmt_bytes(chunk, ck, sizeof(ck));

	if (json) {
		printf("{\"msg_bytes\":%llu,\"chunk_bytes\":%u,\"pkts_per_chunk\":%u,"
		       "\"chunks\":%llu,\"rate_bps\":%.17g,\"rtt_s\":%.17g,\"pkt_loss\":%.17g,"
		       "\"p_chunk\":%.17g,\"alpha\":%.17g,\"beta\":%.17g,\"rto_s\":%.17g,"
		       "\"t_inj_s\":%.17g,\"exact_regime\":%s,\"objective\":\"%s\",\"schemes\":[",
		       (unsigned long long)p.msg_bytes, p.chunk_bytes, r0->pkts_per_chunk,
		       (unsigned long long)r0->chunks, p.rate_bps, p.rtt_s,
		       chunk_loss ? r0->p_chunk : p.pkt_loss, r0->p_chunk, p.alpha, r0->beta,
		       r0->rto, r0->t_inj, r0->exact_regime ? "true" : "false",
		       obj == SDR_MODEL_OBJ_MEAN ? "mean" : "p999");
		for (size_t i = 0; i < nsch; i++) {
			char spec[SDR_SCHEME_STR_MAX];

			sdr_scheme_format(&sch[i], SDR_SCHEME_SPEC, spec, sizeof(spec));
			printf("%s{\"name\":\"%s\",\"spec\":\"%s\",\"mean_s\":%.17g,\"mean_paper_"
			       "s\":%.17g,"
			       "\"p99_s\":%.17g,\"p999_s\":%.17g,\"p_fallback\":%.17g,"
			       "\"p_ec\":%.17g,\"parity_chunks\":%llu,\"submsgs\":%llu,"
			       "\"fto_s\":%.17g}",
			       i ? "," : "", names[i], spec, res[i].mean, res[i].mean_paper,
			       res[i].p99, res[i].p999, res[i].p_fallback, res[i].p_ec,
			       (unsigned long long)res[i].parity_chunks,
			       (unsigned long long)res[i].submsgs, res[i].fto);
		}
		printf("],\"pick\":\"%s\"", names[best]);
		if (c.paced_bps > 0)
			printf(",\"paced_bps\":%.17g,\"frame_bytes\":%u", c.paced_bps,
			       sdr_wire_data_frame_bytes((uint32_t)mtu, 1));
		printf("}\n");
		return 0;
	}

	printf("message %s = %llu chunks of %s (%u packet%s each), link %.6g Gbit/s, RTT %.6g ms\n",
	       sz, (unsigned long long)r0->chunks, ck, r0->pkts_per_chunk,
	       r0->pkts_per_chunk == 1 ? "" : "s", p.rate_bps / 1e9, p.rtt_s * 1e3);
	printf("loss %.3g per %s -> %.3g per chunk; T_INJ %.6g us; RTO %.6g ms (alpha %.3g); "
	       "beta %.3g\n",
	       p.pkt_loss, chunk_loss ? "chunk" : "packet", r0->p_chunk, r0->t_inj * 1e6,
	       r0->rto * 1e3, p.alpha, r0->beta);
	printf("t_start(M) = %.6g ms %s RTO: SR formula %s\n\n",
	       (double)r0->chunks * r0->t_inj * 1e3, r0->exact_regime ? "<=" : ">",
	       r0->exact_regime ? "exact" : "a lower bound (retransmissions overlap first sends)");
	printf("%-11s %11s %11s %11s %14s %11s %8s\n", "scheme", "mean ms", "p99 ms", "p99.9 ms",
	       "paper mean ms", "P_fallback", "parity");
	for (size_t i = 0; i < nsch; i++) {
		const struct sdr_model_result *r = &res[i];

		if (r->scheme.rel == SDR_REL_SR)
			printf("%-11s %11.3f %11.3f %11.3f %14.3f %11s %8s\n", names[i],
			       r->mean * 1e3, r->p99 * 1e3, r->p999 * 1e3, r->mean_paper * 1e3, "-",
			       "-");
		else
			printf("%-11s %11.3f %11.3f %11.3f %14.3f %11.3g %8llu\n", names[i],
			       r->mean * 1e3, r->p99 * 1e3, r->p999 * 1e3, r->mean_paper * 1e3,
			       r->p_fallback, (unsigned long long)r->parity_chunks);
	}
	printf("\npick: %s (lowest %s)\n", names[best],
	       obj == SDR_MODEL_OBJ_MEAN ? "mean" : "p99.9");
	return 0;
}
