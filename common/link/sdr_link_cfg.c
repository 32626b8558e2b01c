/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Long-haul link emulator, pure-C core: its configuration (struct
 * sdr_link_cfg): the spec text parsed and formatted, and the mempool a
 * configuration needs. common/link/, no DPDK; the model that runs a
 * configuration is sdr_link.c. See sdr_link.h and docs/link-emulator.md.
 */
#include "sdr_link.h"
#include "sdr_units.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define SPEC_MAX 4096

/* ------------------------------------------------------------- parsing -- */

void sdr_link_seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (err == NULL || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

struct unit {
	const char *name;
	double mult;
};

/* for printing a spec back (sdr_link_format); parsing is sdr_parse_duration() */
static const struct unit time_units[] = {
	{"s", 1e9},
	{"ms", 1e6},
	{"us", 1e3},
	{"ns", 1},
};

static const struct unit rate_units[] = {
	{"bit", 1}, {"kbit", 1e3}, {"mbit", 1e6}, {"gbit", 1e9}, {"tbit", 1e12},
	{"bps", 1}, {"kbps", 1e3}, {"mbps", 1e6}, {"gbps", 1e9}, {"tbps", 1e12},
};

static const struct unit size_units[] = {
	{"b", 1},     {"kb", 1e3},     {"mb", 1e6},        {"gb", 1e9},
	{"tb", 1e12}, {"kib", 1024.0}, {"mib", 1048576.0}, {"gib", 1073741824.0},
};

#define N_UNITS(a) (sizeof(a) / sizeof((a)[0]))

/* A plain non-negative decimal number: digits, optional fraction, optional
 * exponent. strtod alone would also take "inf", "nan", hex and a sign. */
static int parse_number(const char *s, double *out, const char **end)
{
	char *e;

	if (!(isdigit((unsigned char)s[0]) || (s[0] == '.' && isdigit((unsigned char)s[1]))))
		return -1;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return -1; /* hex floats */
	errno = 0;
	*out = strtod(s, &e);
	if (errno != 0 || !isfinite(*out) || *out < 0)
		return -1;
	*end = e;
	return 0;
}

static int parse_with_unit(const char *key, const char *val, const struct unit *units,
			   size_t n_units, bool case_fold, const char *unit_help, double *out,
			   char *err, size_t errlen)
{
	const char *end;
	double v;

	if (parse_number(val, &v, &end) != 0) {
		sdr_link_seterr(
			err, errlen,
			"link spec: key '%s': '%s' is not a non-negative number with a unit (%s)",
			key, val, unit_help);
		return -EINVAL;
	}
	if (*end == '\0') {
		if (v == 0) {
			*out = 0;
			return 0;
		}
		sdr_link_seterr(err, errlen, "link spec: key '%s': '%s' needs a unit (%s)", key,
				val, unit_help);
		return -EINVAL;
	}
	for (size_t i = 0; i < n_units; i++) {
		if (case_fold ? strcasecmp(end, units[i].name) == 0
			      : strcmp(end, units[i].name) == 0) {
			*out = v * units[i].mult;
			return 0;
		}
	}
	sdr_link_seterr(err, errlen, "link spec: key '%s': unknown unit '%s' in '%s' (use %s)", key,
			end, val, unit_help);
	return -EINVAL;
}

static int parse_time_upto(const char *key, const char *val, uint64_t max_ns, uint64_t *ns,
			   char *err, size_t errlen);

static int parse_time(const char *key, const char *val, uint64_t *ns, char *err, size_t errlen)
{
	return parse_time_upto(key, val, SDR_LINK_MAX_DELAY_NS, ns, err, errlen);
}

/* A time on a schedule (rate=R@T, down=T+L, bg=R:ON:OFF): up to a week. */
static int parse_sched_time(const char *key, const char *val, uint64_t *ns, char *err,
			    size_t errlen)
{
	return parse_time_upto(key, val, SDR_LINK_MAX_SCHED_NS, ns, err, errlen);
}

static int parse_time_upto(const char *key, const char *val, uint64_t max_ns, uint64_t *ns,
			   char *err, size_t errlen)
{
	const char *unit;
	double v;

	/* common/sdr_units.c: the one duration parser, here with a unit required */
	switch (sdr_parse_duration(val, SDR_TIME_UNIT_NEEDED, SDR_TIME_NS, &v, &unit)) {
	case 0: break;
	case SDR_TIME_ENOUNIT:
		sdr_link_seterr(err, errlen,
				"link spec: key '%s': '%s' needs a unit (s, ms, us, ns)", key, val);
		return -EINVAL;
	case SDR_TIME_EUNIT:
		sdr_link_seterr(
			err, errlen,
			"link spec: key '%s': unknown unit '%s' in '%s' (use s, ms, us, ns)", key,
			unit, val);
		return -EINVAL;
	default:
		sdr_link_seterr(err, errlen,
				"link spec: key '%s': '%s' is not a non-negative number with a unit"
				" (s, ms, us, ns)",
				key, val);
		return -EINVAL;
	}
	v = nearbyint(v);
	if (v > (double)max_ns) {
		sdr_link_seterr(err, errlen,
				"link spec: key '%s': %s is more than the %s the emulator supports",
				key, val, max_ns == SDR_LINK_MAX_DELAY_NS ? "10 s" : "7 days");
		return -EINVAL;
	}
	*ns = (uint64_t)v;
	return 0;
}

static int parse_prob(const char *key, const char *val, double *p, char *err, size_t errlen)
{
	const char *end;
	double v;

	if (parse_number(val, &v, &end) != 0 || !(*end == '\0' || strcmp(end, "%") == 0)) {
		sdr_link_seterr(err, errlen,
				"link spec: key '%s': '%s' is not a probability (0..1, e.g. 1e-3, "
				"or 0.1%%)",
				key, val);
		return -EINVAL;
	}
	if (*end == '%')
		v /= 100.0;
	if (v > 1.0) {
		sdr_link_seterr(err, errlen, "link spec: key '%s': probability %s is more than 1",
				key, val);
		return -EINVAL;
	}
	*p = v;
	return 0;
}

static int parse_uint(const char *key, const char *val, uint64_t lo, uint64_t hi, uint64_t *out,
		      char *err, size_t errlen)
{
	char *e;
	unsigned long long v;

	if (!isdigit((unsigned char)val[0])) {
		sdr_link_seterr(err, errlen, "link spec: key '%s': '%s' is not an unsigned integer",
				key, val);
		return -EINVAL;
	}
	errno = 0;
	v = strtoull(val, &e, 0);
	if (errno != 0 || *e != '\0') {
		sdr_link_seterr(err, errlen,
				"link spec: key '%s': '%s' is not an unsigned 64-bit integer", key,
				val);
		return -EINVAL;
	}
	if (v < lo || v > hi) {
		sdr_link_seterr(err, errlen,
				"link spec: key '%s': %s is outside %" PRIu64 "..%" PRIu64, key,
				val, lo, hi);
		return -EINVAL;
	}
	*out = v;
	return 0;
}

/* Split "a:b:c" in place into at most max fields; returns the count or -1
 * if there are more. */
static int split_colon(char *s, char **f, int max)
{
	int n = 0;

	for (;;) {
		if (n == max)
			return -1;
		f[n++] = s;
		s = strchr(s, ':');
		if (s == NULL)
			return n;
		*s++ = '\0';
	}
}

enum key_id {
	K_DELAY,
	K_JITTER,
	K_RATE,
	K_BUFFER,
	K_LOSS,
	K_GE,
	K_REORDER,
	K_DUP,
	K_CORRUPT,
	K_SEED,
	K_LIMIT,
	K_ECN,
	K_BG,
	K_DOWN,
	K_ECNMARK,
	K_ARRIVAL,
	K_COUNT
};

static const char *const key_names[K_COUNT] = {
	"delay",   "jitter", "rate",  "buffer", "loss", "ge",   "reorder", "dup",
	"corrupt", "seed",   "limit", "ecn",    "bg",   "down", "ecnmark", "arrival",
};

void sdr_link_cfg_default(struct sdr_link_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->ge_loss_bad = 1.0;
	cfg->reorder_extra_ns = SDR_LINK_DEFAULT_REORDER_NS;
	cfg->corrupt_max_bits = 1;
	cfg->seed = SDR_LINK_DEFAULT_SEED;
	cfg->limit = SDR_LINK_DEFAULT_LIMIT;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* A rate with its unit; 0 only where @p zero_ok. */
static int parse_rate(const char *key, const char *val, bool zero_ok, uint64_t *out, char *err,
		      size_t errlen)
{
	double d;
	int rc = parse_with_unit(
		key, val, rate_units, N_UNITS(rate_units), true,
		"bit, kbit, mbit, gbit, tbit or bps, kbps, mbps, gbps, tbps (bits/s)", &d, err,
		errlen);

	if (rc != 0)
		return rc;
	d = nearbyint(d);
	if ((d != 0 || !zero_ok) &&
	    (d < (double)SDR_LINK_MIN_RATE_BPS || d > (double)SDR_LINK_MAX_RATE_BPS)) {
		sdr_link_seterr(err, errlen, "link spec: key '%s': %s is outside 1kbit..10tbit%s",
				key, val, zero_ok ? " (0 = no bottleneck)" : "");
		return -EINVAL;
	}
	*out = (uint64_t)d;
	return 0;
}

/* A size with its unit, 1 B .. 1 TB. */
static int parse_size(const char *key, const char *val, uint64_t *out, char *err, size_t errlen)
{
	double d;
	int rc = parse_with_unit(key, val, size_units, N_UNITS(size_units), true,
				 "B, KB, MB, GB, TB (x1000) or KiB, MiB, GiB (x1024)", &d, err,
				 errlen);

	if (rc != 0)
		return rc;
	d = nearbyint(d);
	if (d < 1 || d > (double)SDR_LINK_MAX_BUFFER) {
		sdr_link_seterr(err, errlen, "link spec: key '%s': %s is outside 1B..1TB", key,
				val);
		return -EINVAL;
	}
	*out = (uint64_t)d;
	return 0;
}

/* One step of a list key: "RATE@TIME" after rate=, "TIME+LEN" in down= and
 * after it. Times are since the link's first frame, in increasing order. */
static int parse_step(enum key_id k, char *val, struct sdr_link_cfg *c, char *err, size_t errlen)
{
	uint64_t a, b;
	int rc;

	if (k == K_RATE) {
		char *at = strchr(val, '@');

		if (at == NULL) {
			sdr_link_seterr(err, errlen,
					"link spec: '%s' after rate= must be RATE@TIME (a step of "
					"the rate schedule)",
					val);
			return -EINVAL;
		}
		*at = '\0';
		if ((rc = parse_rate("rate (schedule)", val, false, &b, err, errlen)) != 0 ||
		    (rc = parse_sched_time("rate (schedule time)", at + 1, &a, err, errlen)) != 0)
			return rc;
		if (c->nrate_steps == SDR_LINK_SCHED_MAX) {
			sdr_link_seterr(err, errlen,
					"link spec: key 'rate': more than %u schedule steps",
					SDR_LINK_SCHED_MAX + 1);
			return -EINVAL;
		}
		if (a == 0 || (c->nrate_steps > 0 && a <= c->rate_step[c->nrate_steps - 1].at_ns)) {
			sdr_link_seterr(err, errlen,
					"link spec: key 'rate': schedule times must increase "
					"(after @0s)");
			return -EINVAL;
		}
		c->rate_step[c->nrate_steps].at_ns = a;
		c->rate_step[c->nrate_steps++].rate_bps = b;
		return 0;
	}
	char *plus = strchr(val, '+');

	if (plus == NULL) {
		sdr_link_seterr(err, errlen,
				"link spec: key 'down': '%s' must be TIME+LENGTH (down from TIME "
				"for LENGTH)",
				val);
		return -EINVAL;
	}
	*plus = '\0';
	if ((rc = parse_sched_time("down (time)", val, &a, err, errlen)) != 0 ||
	    (rc = parse_sched_time("down (length)", plus + 1, &b, err, errlen)) != 0)
		return rc;
	if (b == 0) {
		sdr_link_seterr(err, errlen, "link spec: key 'down': the length must be > 0");
		return -EINVAL;
	}
	if (c->ndown == SDR_LINK_SCHED_MAX) {
		sdr_link_seterr(err, errlen, "link spec: key 'down': more than %u outages",
				SDR_LINK_SCHED_MAX);
		return -EINVAL;
	}
	if (c->ndown > 0 && a < c->down[c->ndown - 1].at_ns + c->down[c->ndown - 1].len_ns) {
		sdr_link_seterr(err, errlen,
				"link spec: key 'down': outages must be in order and not "
				"overlap");
		return -EINVAL;
	}
	c->down[c->ndown].at_ns = a;
	c->down[c->ndown++].len_ns = b;
	return 0;
}

/* A key of two words: @p no sets *@p out false, @p yes true */
static int parse_two_way(const char *key, const char *val, const char *no, const char *yes,
			 bool *out, char *err, size_t errlen)
{
	if (strcmp(val, no) == 0 || strcmp(val, yes) == 0) {
		*out = strcmp(val, yes) == 0;
		return 0;
	}
	sdr_link_seterr(err, errlen, "link spec: key '%s': '%s' must be %s or %s", key, val, no,
			yes);
	return -EINVAL;
}

static int parse_item(enum key_id k, const char *key, char *val, struct sdr_link_cfg *c, char *err,
		      size_t errlen)
{
	char *f[4];
	int n, rc;
	uint64_t u;

	switch (k) {
	case K_DELAY: return parse_time(key, val, &c->delay_ns, err, errlen);
	case K_JITTER: return parse_time(key, val, &c->jitter_ns, err, errlen);
	case K_RATE: {
		/* RATE, or the first step of a schedule: RATE@0s (the next
		 * steps are the items that follow, parse_step()) */
		char *at = strchr(val, '@');
		uint64_t t0 = 0;

		if (at != NULL) {
			*at = '\0';
			if ((rc = parse_sched_time("rate (schedule time)", at + 1, &t0, err,
						   errlen)) != 0)
				return rc;
			if (t0 != 0) {
				sdr_link_seterr(err, errlen,
						"link spec: key 'rate': a schedule starts at @0s "
						"(rate=R@0s,R@T,...), not @%s",
						at + 1);
				return -EINVAL;
			}
		}
		if ((rc = parse_rate(key, val, true, &u, err, errlen)) != 0)
			return rc;
		if (at != NULL && u == 0) {
			sdr_link_seterr(err, errlen,
					"link spec: key 'rate': a schedule needs a rate > 0 (an "
					"outage is down=T+LEN)");
			return -EINVAL;
		}
		c->rate_bps = u;
		return 0;
	}
	case K_ECN: {
		/* KMIN[:KMAX[:PMAX]] */
		uint64_t kmin, kmax;

		n = split_colon(val, f, 3);
		if (n < 1) {
			sdr_link_seterr(err, errlen,
					"link spec: key 'ecn': '%s' must be KMIN[:KMAX[:PMAX]] "
					"(backlog sizes)",
					val);
			return -EINVAL;
		}
		if ((rc = parse_size("ecn kmin", f[0], &kmin, err, errlen)) != 0)
			return rc;
		kmax = kmin;
		c->ecn_pmax = 1.0;
		if (n > 1 && (rc = parse_size("ecn kmax", f[1], &kmax, err, errlen)) != 0)
			return rc;
		if (n > 2 && (rc = parse_prob("ecn pmax", f[2], &c->ecn_pmax, err, errlen)) != 0)
			return rc;
		if (kmax < kmin) {
			sdr_link_seterr(err, errlen,
					"link spec: key 'ecn': KMAX %s is below KMIN %s", f[1],
					f[0]);
			return -EINVAL;
		}
		c->ecn_kmin_bytes = kmin;
		c->ecn_kmax_bytes = kmax;
		return 0;
	}
	case K_ECNMARK:
		/* where the bottleneck decides a mark: as the frame joins the
		 * queue (the backlog it finds) or as it leaves (the backlog it
		 * leaves behind) */
		return parse_two_way(key, val, "enqueue", "dequeue", &c->ecn_dequeue, err, errlen);
	case K_ARRIVAL:
		/* when the frames a poll finds arrived: at the poll, or spread
		 * over the time since the port was last found empty */
		return parse_two_way(key, val, "poll", "spread", &c->arrival_spread, err, errlen);
	case K_BG:
		/* RATE[:ON:OFF] */
		n = split_colon(val, f, 3);
		if (n != 1 && n != 3) {
			sdr_link_seterr(err, errlen,
					"link spec: key 'bg': '%s' must be RATE or RATE:ON:OFF",
					val);
			return -EINVAL;
		}
		if ((rc = parse_rate(key, f[0], false, &c->bg_bps, err, errlen)) != 0)
			return rc;
		if (n == 3) {
			if ((rc = parse_sched_time("bg on", f[1], &c->bg_on_ns, err, errlen)) !=
				    0 ||
			    (rc = parse_sched_time("bg off", f[2], &c->bg_off_ns, err, errlen)) !=
				    0)
				return rc;
			if (c->bg_on_ns == 0) {
				sdr_link_seterr(err, errlen, "link spec: key 'bg': ON must be > 0");
				return -EINVAL;
			}
		}
		return 0;
	case K_DOWN: return parse_step(K_DOWN, val, c, err, errlen);
	case K_BUFFER: return parse_size(key, val, &c->buffer_bytes, err, errlen);
	case K_LOSS: return parse_prob(key, val, &c->loss, err, errlen);
	case K_GE:
		n = split_colon(val, f, 4);
		if (n < 2) {
			sdr_link_seterr(err, errlen,
					"link spec: key 'ge': '%s' must be "
					"p_gb:p_bg[:loss_good[:loss_bad]]",
					val);
			return -EINVAL;
		}
		if ((rc = parse_prob("ge p_gb", f[0], &c->ge_p_gb, err, errlen)) != 0 ||
		    (rc = parse_prob("ge p_bg", f[1], &c->ge_p_bg, err, errlen)) != 0)
			return rc;
		c->ge_loss_good = 0.0;
		c->ge_loss_bad = 1.0;
		if (n > 2 &&
		    (rc = parse_prob("ge loss_good", f[2], &c->ge_loss_good, err, errlen)) != 0)
			return rc;
		if (n > 3 &&
		    (rc = parse_prob("ge loss_bad", f[3], &c->ge_loss_bad, err, errlen)) != 0)
			return rc;
		if (c->ge_p_bg == 0 && c->ge_p_gb > 0) {
			sdr_link_seterr(err, errlen,
					"link spec: key 'ge': p_bg must be > 0 (else the bad state "
					"never ends)");
			return -EINVAL;
		}
		c->ge = true;
		return 0;
	case K_REORDER:
		n = split_colon(val, f, 2);
		if (n < 1) {
			sdr_link_seterr(err, errlen,
					"link spec: key 'reorder': '%s' must be PROB[:EXTRA_DELAY]",
					val);
			return -EINVAL;
		}
		if ((rc = parse_prob(key, f[0], &c->reorder, err, errlen)) != 0)
			return rc;
		if (n == 2) {
			if ((rc = parse_time("reorder extra delay", f[1], &c->reorder_extra_ns, err,
					     errlen)) != 0)
				return rc;
			if (c->reorder_extra_ns == 0) {
				sdr_link_seterr(
					err, errlen,
					"link spec: key 'reorder': extra delay must be > 0");
				return -EINVAL;
			}
		}
		return 0;
	case K_DUP: return parse_prob(key, val, &c->dup, err, errlen);
	case K_CORRUPT:
		n = split_colon(val, f, 2);
		if (n < 1) {
			sdr_link_seterr(err, errlen,
					"link spec: key 'corrupt': '%s' must be PROB[:MAXBITS]",
					val);
			return -EINVAL;
		}
		if ((rc = parse_prob(key, f[0], &c->corrupt, err, errlen)) != 0)
			return rc;
		if (n == 2) {
			if ((rc = parse_uint("corrupt maxbits", f[1], 1, SDR_LINK_CORRUPT_MAX_BITS,
					     &u, err, errlen)) != 0)
				return rc;
			c->corrupt_max_bits = (unsigned)u;
		}
		return 0;
	case K_SEED: return parse_uint(key, val, 0, UINT64_MAX, &c->seed, err, errlen);
	case K_LIMIT:
		if ((rc = parse_uint(key, val, 1, SDR_LINK_MAX_LIMIT, &u, err, errlen)) != 0)
			return rc;
		c->limit = (unsigned)u;
		return 0;
	case K_COUNT: break;
	}
	return -EINVAL;
}

int sdr_link_parse(const char *spec, struct sdr_link_cfg *cfg, char *err, size_t errlen)
{
	char buf[SPEC_MAX];
	struct sdr_link_cfg c;
	bool seen[K_COUNT] = {false};
	int last = K_COUNT; /* the key whose list the next items may continue */
	char *item;
	size_t len;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (spec == NULL || cfg == NULL) {
		sdr_link_seterr(err, errlen, "link spec: missing");
		return -EINVAL;
	}
	len = strlen(spec);
	if (len >= sizeof(buf)) {
		sdr_link_seterr(err, errlen, "link spec: longer than %d characters", SPEC_MAX - 1);
		return -EINVAL;
	}
	memcpy(buf, spec, len + 1);
	sdr_link_cfg_default(&c);

	if (*trim(buf) != '\0') {
		/* strtok_r would silently merge ",,": walk by hand to reject it. */
		char *p = trim(buf);

		for (;;) {
			char *comma = strchr(p, ',');
			char *eq, *key, *val;
			int k, rc;

			if (comma != NULL)
				*comma = '\0';
			item = trim(p);
			if (*item == '\0') {
				sdr_link_seterr(err, errlen, "link spec: empty item (stray ',')");
				return -EINVAL;
			}
			eq = strchr(item, '=');
			if (eq == NULL && (last == K_RATE || last == K_DOWN)) {
				/* the next step of rate=R@0s,R@T,... or down=T+L,T+L */
				int rc = parse_step((enum key_id)last, item, &c, err, errlen);

				if (rc != 0)
					return rc;
				if (comma == NULL)
					break;
				p = comma + 1;
				continue;
			}
			if (eq == NULL) {
				sdr_link_seterr(err, errlen,
						"link spec: '%s' needs a value (key=value)", item);
				return -EINVAL;
			}
			*eq = '\0';
			key = trim(item);
			val = trim(eq + 1);
			for (k = 0; k < K_COUNT; k++)
				if (strcmp(key, key_names[k]) == 0)
					break;
			if (k == K_COUNT) {
				sdr_link_seterr(
					err, errlen,
					"link spec: unknown key '%s' (known: delay, jitter, rate, "
					"buffer, loss, ge, reorder, dup, corrupt, seed, limit, "
					"ecn, ecnmark, bg, down, arrival)",
					key);
				return -EINVAL;
			}
			if (seen[k]) {
				sdr_link_seterr(err, errlen, "link spec: key '%s' given twice",
						key);
				return -EINVAL;
			}
			seen[k] = true;
			if (*val == '\0') {
				sdr_link_seterr(err, errlen,
						"link spec: key '%s' has an empty value", key);
				return -EINVAL;
			}
			/* rate=R@0s and down= start lists the next items continue */
			last = (k == K_RATE && strchr(val, '@') != NULL) || k == K_DOWN ? k
											: K_COUNT;
			rc = parse_item((enum key_id)k, key, val, &c, err, errlen);
			if (rc != 0)
				return rc;
			if (comma == NULL)
				break;
			p = comma + 1;
		}
	}

	if (seen[K_BUFFER] && c.rate_bps == 0) {
		sdr_link_seterr(err, errlen,
				"link spec: key 'buffer' needs a bottleneck rate (rate=...); "
				"without one nothing queues");
		return -EINVAL;
	}
	if (c.rate_bps == 0 && (seen[K_ECN] || seen[K_BG])) {
		sdr_link_seterr(err, errlen,
				"link spec: key '%s' needs a bottleneck rate (rate=...): it is a "
				"feature of the bottleneck's queue",
				seen[K_ECN] ? "ecn" : "bg");
		return -EINVAL;
	}
	if (seen[K_ECNMARK] && !seen[K_ECN]) {
		sdr_link_seterr(err, errlen,
				"link spec: key 'ecnmark' needs a marking threshold (ecn=...)");
		return -EINVAL;
	}
	if (c.rate_bps != 0 && !seen[K_BUFFER])
		c.buffer_bytes = SDR_LINK_DEFAULT_BUFFER;
	*cfg = c;
	return 0;
}

/* ------------------------------------------------------ formatting -- */

/* Shortest exact rendering: "12.5ms", "200us", "1gbit", "4MB": the largest
 * unit of units[first..last] not larger than v. */
static void fmt_scaled(char *buf, size_t len, double v, const struct unit *units, size_t n,
		       size_t first, size_t last)
{
	size_t best = first;

	for (size_t i = first; i <= last && i < n; i++)
		if (units[i].mult < units[best].mult)
			best = i; /* smallest as the fallback */
	for (size_t i = first; i <= last && i < n; i++)
		if (units[i].mult <= v &&
		    (units[best].mult > v || units[i].mult > units[best].mult))
			best = i;
	snprintf(buf, len, "%.15g%s", v / units[best].mult, units[best].name);
}

static void fmt_time(char *buf, size_t len, uint64_t ns)
{
	if (ns == 0) {
		snprintf(buf, len, "0");
		return;
	}
	fmt_scaled(buf, len, (double)ns, time_units, N_UNITS(time_units), 0, 3);
}

static void fmt_rate(char *buf, size_t len, uint64_t bps)
{
	fmt_scaled(buf, len, (double)bps, rate_units, N_UNITS(rate_units), 0, 4);
}

static void fmt_size(char *buf, size_t len, uint64_t bytes)
{
	static const struct unit up[] = {{"B", 1}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}};

	fmt_scaled(buf, len, (double)bytes, up, N_UNITS(up), 0, 3);
}

int sdr_link_cfg_format(const struct sdr_link_cfg *c, char *buf, size_t len)
{
	char tmp[64], tmp2[64];
	size_t off = 0;
	int n = 0;

#define APPEND(...)                                                                              \
	do {                                                                                     \
		int w_ = snprintf(off < len ? buf + off : NULL, off < len ? len - off : 0, "%s", \
				  n > 0 ? "," : "");                                             \
		off += (size_t)w_;                                                               \
		w_ = snprintf(off < len ? buf + off : NULL, off < len ? len - off : 0,           \
			      __VA_ARGS__);                                                      \
		off += (size_t)w_;                                                               \
		n++;                                                                             \
	} while (0)

	if (len > 0)
		buf[0] = '\0';
	if (c->delay_ns) {
		fmt_time(tmp, sizeof(tmp), c->delay_ns);
		APPEND("delay=%s", tmp);
	}
	if (c->jitter_ns) {
		fmt_time(tmp, sizeof(tmp), c->jitter_ns);
		APPEND("jitter=%s", tmp);
	}
	if (c->rate_bps) {
		fmt_rate(tmp, sizeof(tmp), c->rate_bps);
		APPEND("rate=%s%s", tmp, c->nrate_steps ? "@0s" : "");
		for (unsigned i = 0; i < c->nrate_steps; i++) {
			fmt_rate(tmp, sizeof(tmp), c->rate_step[i].rate_bps);
			fmt_time(tmp2, sizeof(tmp2), c->rate_step[i].at_ns);
			APPEND("%s@%s", tmp, tmp2);
		}
		fmt_size(tmp, sizeof(tmp), c->buffer_bytes);
		APPEND("buffer=%s", tmp);
	}
	if (c->ecn_kmin_bytes) {
		fmt_size(tmp, sizeof(tmp), c->ecn_kmin_bytes);
		fmt_size(tmp2, sizeof(tmp2), c->ecn_kmax_bytes);
		APPEND("ecn=%s:%s:%.17g", tmp, tmp2, c->ecn_pmax);
		if (c->ecn_dequeue)
			APPEND("ecnmark=dequeue");
	}
	if (c->bg_bps) {
		fmt_rate(tmp, sizeof(tmp), c->bg_bps);
		if (c->bg_off_ns) {
			char tmp3[64];

			fmt_time(tmp2, sizeof(tmp2), c->bg_on_ns);
			fmt_time(tmp3, sizeof(tmp3), c->bg_off_ns);
			APPEND("bg=%s:%s:%s", tmp, tmp2, tmp3);
		} else {
			APPEND("bg=%s", tmp);
		}
	}
	for (unsigned i = 0; i < c->ndown; i++) {
		fmt_time(tmp, sizeof(tmp), c->down[i].at_ns);
		fmt_time(tmp2, sizeof(tmp2), c->down[i].len_ns);
		APPEND("%s%s+%s", i ? "" : "down=", tmp, tmp2);
	}
	if (c->loss > 0)
		APPEND("loss=%.17g", c->loss);
	if (c->ge)
		APPEND("ge=%.17g:%.17g:%.17g:%.17g", c->ge_p_gb, c->ge_p_bg, c->ge_loss_good,
		       c->ge_loss_bad);
	if (c->reorder > 0) {
		fmt_time(tmp2, sizeof(tmp2), c->reorder_extra_ns);
		APPEND("reorder=%.17g:%s", c->reorder, tmp2);
	}
	if (c->dup > 0)
		APPEND("dup=%.17g", c->dup);
	if (c->corrupt > 0)
		APPEND("corrupt=%.17g:%u", c->corrupt, c->corrupt_max_bits);
	if (c->seed != SDR_LINK_DEFAULT_SEED)
		APPEND("seed=%" PRIu64, c->seed);
	if (c->limit != SDR_LINK_DEFAULT_LIMIT)
		APPEND("limit=%u", c->limit);
	if (c->arrival_spread)
		APPEND("arrival=spread");
#undef APPEND
	return (int)off;
}

/* ------------------------------------------------------ mempool sizing -- */

struct sizing {
	double span_frames;   /* in flight after the bottleneck */
	double buffer_frames; /* in the bottleneck buffer */
	double total;
	double hold_ns;
	double eff_rate;
};

static void size_it(const struct sdr_link_cfg *c, unsigned frame_bytes, double line_rate_bps,
		    struct sizing *z)
{
	double frame_bits = (double)(frame_bytes ? frame_bytes : 64) * 8;
	double eff = line_rate_bps > 0 ? line_rate_bps : 0;
	double total;

	if (c->rate_bps != 0 && (eff == 0 || (double)c->rate_bps < eff))
		eff = (double)c->rate_bps;
	z->eff_rate = eff;
	z->hold_ns = (double)c->delay_ns + (double)c->jitter_ns +
		     (c->reorder > 0 ? (double)c->reorder_extra_ns : 0);
	z->span_frames = ceil(eff * z->hold_ns / 1e9 / frame_bits * (1.0 + c->dup));
	z->buffer_frames = c->rate_bps != 0 ? ceil((double)c->buffer_bytes * 8 / frame_bits) : 0;
	total = z->span_frames + z->buffer_frames;
	total += ceil(total / 8) + 512;
	if (total > (double)c->limit + 512)
		total = (double)c->limit + 512;
	z->total = total;
}

unsigned sdr_link_mbufs_needed(const struct sdr_link_cfg *cfg, unsigned frame_bytes,
			       double line_rate_bps)
{
	struct sizing z;

	size_it(cfg, frame_bytes, line_rate_bps, &z);
	return z.total > (double)UINT32_MAX ? UINT32_MAX : (unsigned)z.total;
}

int sdr_link_check_pool(const struct sdr_link_cfg *cfg, unsigned frame_bytes, double line_rate_bps,
			unsigned pool_mbufs, char *err, size_t errlen)
{
	struct sizing z;
	char rate[32], hold[32], bdp[32], buf[32];
	unsigned fb = frame_bytes ? frame_bytes : 64;

	size_it(cfg, frame_bytes, line_rate_bps, &z);
	if ((double)pool_mbufs >= z.total)
		return 0;
	fmt_rate(rate, sizeof(rate), (uint64_t)z.eff_rate);
	fmt_time(hold, sizeof(hold), (uint64_t)z.hold_ns);
	fmt_size(bdp, sizeof(bdp), (uint64_t)(z.eff_rate * z.hold_ns / 1e9 / 8));
	fmt_size(buf, sizeof(buf), cfg->rate_bps ? cfg->buffer_bytes : 0);
	sdr_link_seterr(err, errlen,
			"link emulator needs %.0f mbufs (BDP of %s x %s = %s = %.0f frames of %u "
			"B%s + buffer %s = %.0f frames + margin%s); the pool has %u; raise the "
			"pool size / -m or lower delay/rate/buffer (or set limit=)",
			z.total, rate, hold, bdp, z.span_frames, fb,
			cfg->dup > 0 ? " incl. duplicates" : "", buf, z.buffer_frames,
			z.total >= (double)cfg->limit + 512 ? ", capped by limit" : "", pool_mbufs);
	return -ENOSPC;
}

/* ------------------------------------------------------------- paths -- */

int sdr_link_parse_paths(const char *spec, struct sdr_link_cfg *cfg, unsigned *npaths, char *err,
			 size_t errlen)
{
	struct sdr_link_cfg c[SDR_LINK_PATHS_MAX];
	char buf[SPEC_MAX], rest[SPEC_MAX], sub[512];
	unsigned n = 0, copies = 0;
	char *p;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (spec == NULL || cfg == NULL || npaths == NULL) {
		sdr_link_seterr(err, errlen, "link spec: missing");
		return -EINVAL;
	}
	if (strlen(spec) >= sizeof(buf)) {
		sdr_link_seterr(err, errlen, "link spec: longer than %d characters", SPEC_MAX - 1);
		return -EINVAL;
	}
	strcpy(buf, spec);
	for (p = buf;;) {
		char *bar = strchr(p, '|'), *item;
		size_t off = 0;

		if (bar != NULL)
			*bar = '\0';
		if (n >= SDR_LINK_PATHS_MAX) {
			sdr_link_seterr(err, errlen, "link spec: more than %u paths ('|')",
					SDR_LINK_PATHS_MAX);
			return -EINVAL;
		}
		/* take paths=N out of the item; the rest is one path's spec */
		rest[0] = '\0';
		for (char *q = p;;) {
			char *comma = strchr(q, ',');

			if (comma != NULL)
				*comma = '\0';
			item = trim(q);
			if (strncmp(item, "paths", 5) == 0 && *trim(item + 5) == '=') {
				char *v = trim(strchr(item, '=') + 1), *end;
				unsigned long k;

				errno = 0;
				k = strtoul(v, &end, 10);
				if (copies != 0 || bar != NULL || n > 0) {
					sdr_link_seterr(err, errlen,
							"link spec: paths=N is for one spec alone "
							"(given twice, or with '|')");
					return -EINVAL;
				}
				if (*v == '\0' || *end != '\0' || errno != 0 || k < 1 ||
				    k > SDR_LINK_PATHS_MAX) {
					sdr_link_seterr(err, errlen,
							"link spec: paths='%s': a count 1..%u", v,
							SDR_LINK_PATHS_MAX);
					return -EINVAL;
				}
				copies = (unsigned)k;
			} else {
				int w = snprintf(rest + off, sizeof(rest) - off, "%s%s",
						 off ? "," : "", q);

				off += (size_t)w;
			}
			if (comma == NULL)
				break;
			q = comma + 1;
		}
		if (sdr_link_parse(rest, &c[n], sub, sizeof(sub)) != 0) {
			if (bar != NULL || n > 0)
				sdr_link_seterr(err, errlen, "path %u: %s", n, sub);
			else
				sdr_link_seterr(err, errlen, "%s", sub);
			return -EINVAL;
		}
		n++;
		if (bar == NULL)
			break;
		p = bar + 1;
	}
	if (copies > 1) {
		/* identical paths, each with its own random streams */
		for (unsigned k = 1; k < copies; k++) {
			c[k] = c[0];
			c[k].seed = c[0].seed + k;
		}
		n = copies;
	}
	memcpy(cfg, c, sizeof(c[0]) * n);
	*npaths = n;
	return 0;
}

int sdr_link_paths_format(const struct sdr_link_cfg *cfg, unsigned npaths, char *buf, size_t len)
{
	size_t off;
	bool same = npaths > 1;
	int n;

	for (unsigned k = 1; same && k < npaths; k++) {
		struct sdr_link_cfg x = cfg[k];

		x.seed = cfg[0].seed;
		same = cfg[k].seed == cfg[0].seed + k && memcmp(&x, &cfg[0], sizeof(x)) == 0;
	}
	n = sdr_link_cfg_format(&cfg[0], buf, len);
	off = n > 0 ? (size_t)n : 0;
	if (same) {
		n = snprintf(off < len ? buf + off : NULL, off < len ? len - off : 0, "%spaths=%u",
			     off ? "," : "", npaths);
		return (int)(off + (size_t)(n > 0 ? n : 0));
	}
	for (unsigned k = 1; k < npaths; k++) {
		n = snprintf(off < len ? buf + off : NULL, off < len ? len - off : 0, " | ");
		off += n > 0 ? (size_t)n : 0;
		n = sdr_link_cfg_format(&cfg[k], off < len ? buf + off : NULL,
					off < len ? len - off : 0);
		off += n > 0 ? (size_t)n : 0;
	}
	return (int)off;
}
