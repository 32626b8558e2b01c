/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Long-haul link emulator, pure-C core: the model (struct sdr_link): its
 * PRNG, the per-frame decision (loss, corruption, duplication, delay,
 * jitter, reordering, the bottleneck's queue) and its counters. common/link/,
 * no DPDK; the configuration's text is sdr_link_cfg.c. See sdr_link.h.
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

#define NS_PER_S 1000000000ull

/* ---------------------------------------------------------------- PRNG -- */

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9E3779B97F4A7C15ull);

	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

void sdr_link_rng_seed(struct sdr_link_rng *r, uint64_t seed, unsigned stream)
{
	/* Each stream starts its own splitmix64 sequence: seed mixed with the
	 * stream number, so streams of one seed are unrelated. */
	uint64_t x = seed ^ ((uint64_t)(stream + 1) * 0xD1B54A32D192ED03ull);

	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&x);
	if ((r->s[0] | r->s[1] | r->s[2] | r->s[3]) == 0)
		r->s[0] = 1; /* xoshiro must not start from all zeros */
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t sdr_link_rng_next(struct sdr_link_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

double sdr_link_rng_unit(struct sdr_link_rng *r)
{
	return (double)(sdr_link_rng_next(r) >> 11) * 0x1.0p-53;
}

/* Uniform integer in [0, n) (n > 0), multiply-high: no modulo bias worth
 * speaking of for n << 2^64. */
static inline uint64_t rng_below(struct sdr_link_rng *r, uint64_t n)
{
	return (uint64_t)(((unsigned __int128)sdr_link_rng_next(r) * n) >> 64);
}

static inline bool rng_bernoulli(struct sdr_link_rng *r, double p)
{
	return sdr_link_rng_unit(r) < p;
}

/* ------------------------------------------------------------ the model -- */

static bool prob_ok(double p)
{
	return p >= 0.0 && p <= 1.0; /* false for NaN */
}

/* The shared-network features: limits sdr_link_parse() enforces too. */
static int sched_check(const struct sdr_link_cfg *c)
{
	if (c->nrate_steps > SDR_LINK_SCHED_MAX || c->ndown > SDR_LINK_SCHED_MAX)
		return -1;
	if ((c->nrate_steps || c->bg_bps || c->ecn_kmin_bytes) && c->rate_bps == 0)
		return -1; /* they are features of the bottleneck */
	for (unsigned i = 0; i < c->nrate_steps; i++) {
		const struct sdr_link_rate_step *st = &c->rate_step[i];

		if (st->rate_bps < SDR_LINK_MIN_RATE_BPS || st->rate_bps > SDR_LINK_MAX_RATE_BPS ||
		    st->at_ns == 0 || (i > 0 && st->at_ns <= c->rate_step[i - 1].at_ns))
			return -1;
	}
	for (unsigned i = 0; i < c->ndown; i++)
		if (c->down[i].len_ns == 0 || c->down[i].at_ns > UINT64_MAX / 2 ||
		    c->down[i].len_ns > UINT64_MAX / 2)
			return -1;
	if (c->bg_bps > SDR_LINK_MAX_RATE_BPS || (c->bg_off_ns != 0 && c->bg_on_ns == 0))
		return -1;
	if (c->ecn_kmin_bytes > c->ecn_kmax_bytes || !prob_ok(c->ecn_pmax))
		return -1;
	return 0;
}

int sdr_link_init(struct sdr_link *link, const struct sdr_link_cfg *cfg)
{
	if (link == NULL || cfg == NULL)
		return -EINVAL;
	if (cfg->delay_ns > SDR_LINK_MAX_DELAY_NS || cfg->jitter_ns > SDR_LINK_MAX_DELAY_NS ||
	    cfg->reorder_extra_ns > SDR_LINK_MAX_DELAY_NS ||
	    cfg->rate_bps > SDR_LINK_MAX_RATE_BPS ||
	    (cfg->rate_bps != 0 && cfg->rate_bps < SDR_LINK_MIN_RATE_BPS) ||
	    (cfg->rate_bps != 0 &&
	     (cfg->buffer_bytes == 0 || cfg->buffer_bytes > SDR_LINK_MAX_BUFFER)) ||
	    !prob_ok(cfg->loss) || !prob_ok(cfg->reorder) || !prob_ok(cfg->dup) ||
	    !prob_ok(cfg->corrupt) || cfg->corrupt_max_bits < 1 ||
	    cfg->corrupt_max_bits > SDR_LINK_CORRUPT_MAX_BITS || cfg->limit < 1 ||
	    cfg->limit > SDR_LINK_MAX_LIMIT)
		return -EINVAL;
	if (cfg->ge && (!prob_ok(cfg->ge_p_gb) || !prob_ok(cfg->ge_p_bg) ||
			!prob_ok(cfg->ge_loss_good) || !prob_ok(cfg->ge_loss_bad)))
		return -EINVAL;
	if (sched_check(cfg) != 0)
		return -EINVAL;
	memset(link, 0, sizeof(*link));
	link->cfg = *cfg;
	for (unsigned i = 0; i < SDR_LINK_RNG_COUNT; i++)
		sdr_link_rng_seed(&link->rng[i], cfg->seed, i);
	return 0;
}

/* Time of @p now_ns on the link's schedules (0 before the first frame). */
static uint64_t sched_t(const struct sdr_link *l, uint64_t now_ns)
{
	return l->started && now_ns > l->origin_ns ? now_ns - l->origin_ns : 0;
}

uint64_t sdr_link_rate_at(const struct sdr_link *l, uint64_t now_ns)
{
	uint64_t t = sched_t(l, now_ns), r = l->cfg.rate_bps;

	for (unsigned i = 0; i < l->cfg.nrate_steps && l->cfg.rate_step[i].at_ns <= t; i++)
		r = l->cfg.rate_step[i].rate_bps;
	return r;
}

bool sdr_link_is_down(const struct sdr_link *l, uint64_t now_ns)
{
	uint64_t t = sched_t(l, now_ns);

	for (unsigned i = 0; i < l->cfg.ndown; i++)
		if (t >= l->cfg.down[i].at_ns && t - l->cfg.down[i].at_ns < l->cfg.down[i].len_ns)
			return true;
	return false;
}

void sdr_link_set_origin(struct sdr_link *l, uint64_t now_ns)
{
	l->origin_ns = now_ns;
	l->started = true;
}

/* The first absolute time after @p t at which the bottleneck's rate or the
 * background traffic changes, UINT64_MAX if never. @p bg_on: the background
 * is sending at @p t. */
static uint64_t next_change(const struct sdr_link *l, uint64_t t, bool *bg_on)
{
	const struct sdr_link_cfg *c = &l->cfg;
	uint64_t st = sched_t(l, t), next = UINT64_MAX;

	for (unsigned i = 0; i < c->nrate_steps; i++)
		if (c->rate_step[i].at_ns > st) {
			next = t + (c->rate_step[i].at_ns - st);
			break;
		}
	*bg_on = c->bg_bps != 0;
	if (c->bg_bps != 0 && c->bg_off_ns != 0) {
		uint64_t period = c->bg_on_ns + c->bg_off_ns, ph = st % period;
		uint64_t edge;

		*bg_on = ph < c->bg_on_ns;
		edge = t + (*bg_on ? c->bg_on_ns - ph : period - ph);
		if (edge < next)
			next = edge;
	}
	return next;
}

/* Run the bottleneck from the last arrival up to @p now_ns: it drains at the
 * rate in force (piecewise along the schedule) while the background traffic
 * (if on) pours in, drop-tail at the buffer. drain_rem and bg_rem carry the
 * fractions of a bit (in units of 1e-9 bit) so that no rounding drifts over
 * millions of frames. */
static void bottleneck_advance(struct sdr_link *l, uint64_t now_ns)
{
	const struct sdr_link_cfg *c = &l->cfg;
	uint64_t t = l->last_arrival_ns, cap_bits = c->buffer_bytes * 8;

	while (t < now_ns) {
		bool bg_on;
		uint64_t end = next_change(l, t, &bg_on), in = 0, out, b;
		unsigned __int128 num;

		if (end > now_ns)
			end = now_ns;
		if (bg_on) {
			num = (unsigned __int128)(end - t) * c->bg_bps + l->bg_rem;
			in = (uint64_t)(num / NS_PER_S);
			l->bg_rem = (uint64_t)(num % NS_PER_S);
			l->stats.bg_bytes += in / 8; /* (whole bytes; the rest is noise) */
		}
		num = (unsigned __int128)(end - t) * sdr_link_rate_at(l, t) + l->drain_rem;
		out = (uint64_t)(num / NS_PER_S);
		l->drain_rem = (uint64_t)(num % NS_PER_S);
		b = l->backlog_bits + in;
		if (b > out) {
			b -= out;
		} else {
			b = 0;
			l->drain_rem = 0;
		}
		if (b > cap_bits) {
			l->stats.bg_dropped_bytes += (b - cap_bits) / 8;
			b = cap_bits;
		}
		l->backlog_bits = b;
		t = end;
	}
}

uint64_t sdr_link_backlog_at(const struct sdr_link *link, uint64_t now_ns)
{
	struct sdr_link tmp = *link;

	if (tmp.cfg.rate_bps == 0)
		return 0;
	if (now_ns < tmp.last_arrival_ns)
		now_ns = tmp.last_arrival_ns;
	bottleneck_advance(&tmp, now_ns);
	return (tmp.backlog_bits + 7) / 8;
}

/* When the last bit of the backlog (which ends with the frame just queued)
 * leaves: the bits ahead, less the fraction of a bit already drained, sent
 * at the rates of the schedule from @p now_ns on; ceil to a whole ns. */
static uint64_t bottleneck_exit(const struct sdr_link *l, uint64_t now_ns)
{
	unsigned __int128 need = (unsigned __int128)l->backlog_bits * NS_PER_S - l->drain_rem;
	uint64_t t = now_ns;

	for (;;) {
		uint64_t r = sdr_link_rate_at(l, t), next = t;
		unsigned __int128 can;

		/* the next rate change (background edges do not delay a frame
		 * already queued: the queue is FIFO) */
		for (unsigned i = 0; i < l->cfg.nrate_steps; i++)
			if (l->cfg.rate_step[i].at_ns > sched_t(l, t)) {
				next = t + (l->cfg.rate_step[i].at_ns - sched_t(l, t));
				break;
			}
		if (next == t)
			return t + (uint64_t)((need + r - 1) / r);
		can = (unsigned __int128)(next - t) * r;
		if (need <= can)
			return t + (uint64_t)((need + r - 1) / r);
		need -= can;
		t = next;
	}
}

/* Mark an ECN-capable frame that finds @p backlog bytes queued? RED-like
 * between kmin and kmax (one draw per ECN-capable frame while marking is
 * on, so the stream stays aligned). */
static bool ecn_mark(struct sdr_link *l, uint64_t backlog)
{
	const struct sdr_link_cfg *c = &l->cfg;
	double u = sdr_link_rng_unit(&l->rng[SDR_LINK_RNG_ECN]);

	if (backlog < c->ecn_kmin_bytes)
		return false;
	if (backlog >= c->ecn_kmax_bytes)
		return true;
	return u < c->ecn_pmax * (double)(backlog - c->ecn_kmin_bytes) /
			   (double)(c->ecn_kmax_bytes - c->ecn_kmin_bytes);
}

bool sdr_link_mark_at_exit(struct sdr_link *l, uint64_t exit_ns)
{
	/* the frame's own bits have left at its exit: what remains queued
	 * came after it */
	if (!ecn_mark(l, sdr_link_backlog_at(l, exit_ns)))
		return false;
	l->stats.ce_marked++;
	return true;
}

enum sdr_link_action sdr_link_decide(struct sdr_link *l, uint64_t now_ns, uint32_t frame_len,
				     struct sdr_link_verdict *v)
{
	return sdr_link_decide_ecn(l, now_ns, frame_len, SDR_LINK_ECN_NOT_ECT, v);
}

enum sdr_link_action sdr_link_decide_ecn(struct sdr_link *l, uint64_t now_ns, uint32_t frame_len,
					 unsigned ecn, struct sdr_link_verdict *v)
{
	const struct sdr_link_cfg *c = &l->cfg;
	struct sdr_link_stats *st = &l->stats;
	uint64_t exit_ns, t, bits = (uint64_t)(frame_len ? frame_len : 1) * 8;
	uint64_t found_bytes = 0; /* the backlog the frame finds at the bottleneck */
	bool lost_ge = false, lost = false;

	v->action = SDR_LINK_DELIVER;
	v->reordered = false;
	v->duplicate = false;
	v->ce = false;
	v->ce_at_exit = false;
	v->n_flips = 0;

	if (!l->started)
		sdr_link_set_origin(l, now_ns);
	if (now_ns < l->last_arrival_ns)
		now_ns = l->last_arrival_ns;
	st->pkts_in++;
	st->bytes_in += frame_len;
	ecn &= 3;
	if (ecn != SDR_LINK_ECN_NOT_ECT)
		st->ect_in++;

	/* 0. outage */
	if (c->ndown != 0 && sdr_link_is_down(l, now_ns)) {
		st->dropped_down++;
		v->action = SDR_LINK_DROP_DOWN;
		return v->action;
	}

	/* 1. bottleneck: drop-tail FIFO served at rate */
	if (c->rate_bps != 0) {
		bottleneck_advance(l, now_ns);
		l->last_arrival_ns = now_ns;
		st->rate_bps_now = sdr_link_rate_at(l, now_ns);
		found_bytes = (l->backlog_bits + 7) / 8;
		st->backlog_bytes = found_bytes;
		if (found_bytes + frame_len > c->buffer_bytes) {
			st->dropped_buffer++;
			v->action = SDR_LINK_DROP_BUFFER;
			return v->action;
		}
		if (c->ecn_kmin_bytes != 0 && ecn != SDR_LINK_ECN_NOT_ECT) {
			if (c->ecn_dequeue) {
				v->ce_at_exit = true;
			} else if (ecn_mark(l, found_bytes)) {
				v->ce = true;
				st->ce_marked++;
			}
		}
		l->backlog_bits += bits;
		st->backlog_bytes = (l->backlog_bits + 7) / 8;
		if (st->backlog_bytes > st->max_backlog_bytes)
			st->max_backlog_bytes = st->backlog_bytes;
		exit_ns = bottleneck_exit(l, now_ns);
	} else {
		l->last_arrival_ns = now_ns;
		exit_ns = now_ns;
	}
	v->bottleneck_exit_ns = exit_ns;

	/* 2. loss on the span. Each enabled model always draws the same
	 * number of numbers per frame, so its stream stays aligned. */
	if (c->ge) {
		struct sdr_link_rng *r = &l->rng[SDR_LINK_RNG_GE];
		double step = sdr_link_rng_unit(r), u = sdr_link_rng_unit(r);

		if (l->ge_bad) {
			if (step < c->ge_p_bg)
				l->ge_bad = false;
		} else if (step < c->ge_p_gb) {
			l->ge_bad = true;
		}
		if (l->ge_bad)
			st->ge_bad_frames++;
		lost_ge = u < (l->ge_bad ? c->ge_loss_bad : c->ge_loss_good);
	}
	if (c->loss > 0)
		lost = rng_bernoulli(&l->rng[SDR_LINK_RNG_LOSS], c->loss);
	if (lost_ge) {
		st->dropped_ge++;
		v->action = SDR_LINK_DROP_GE;
		return v->action;
	}
	if (lost) {
		st->dropped_loss++;
		v->action = SDR_LINK_DROP_LOSS;
		return v->action;
	}

	/* 3. propagation delay + jitter, never earlier than the frame ahead */
	t = exit_ns + c->delay_ns;
	if (c->jitter_ns != 0)
		t += rng_below(&l->rng[SDR_LINK_RNG_JITTER], c->jitter_ns + 1);
	if (t < l->last_depart_ns)
		t = l->last_depart_ns;

	/* 4. reorder: held back, and it does not hold back the frames behind */
	if (c->reorder > 0 && rng_bernoulli(&l->rng[SDR_LINK_RNG_REORDER], c->reorder)) {
		v->reordered = true;
		st->reordered++;
		t += c->reorder_extra_ns;
		/* ecnmark=dequeue: a frame taken out of order is decided on
		 * the backlog it found (a holder of frames in departure order,
		 * as the DPDK glue's FIFO, does not hold it in exit order) */
		if (v->ce_at_exit) {
			v->ce_at_exit = false;
			if (ecn_mark(l, found_bytes)) {
				v->ce = true;
				st->ce_marked++;
			}
		}
	} else {
		l->last_depart_ns = t;
	}
	v->depart_ns = t;
	v->dup_depart_ns = t;

	/* 5. duplicate */
	if (c->dup > 0 && rng_bernoulli(&l->rng[SDR_LINK_RNG_DUP], c->dup)) {
		v->duplicate = true;
		st->duplicated++;
	}

	/* 6. corrupt: distinct bits at byte offsets >= 42 */
	if (c->corrupt > 0) {
		struct sdr_link_rng *r = &l->rng[SDR_LINK_RNG_CORRUPT];

		if (rng_bernoulli(r, c->corrupt)) {
			if (frame_len <= SDR_LINK_CORRUPT_MIN_OFFSET) {
				st->corrupt_short++;
			} else {
				uint64_t region = (uint64_t)(frame_len -
							     SDR_LINK_CORRUPT_MIN_OFFSET) *
						  8;
				uint64_t k = 1 + rng_below(r, c->corrupt_max_bits);

				if (k > region)
					k = region;
				while (v->n_flips < k) {
					uint32_t b = (uint32_t)(SDR_LINK_CORRUPT_MIN_OFFSET * 8 +
								rng_below(r, region));
					bool dupbit = false;

					for (unsigned i = 0; i < v->n_flips; i++)
						dupbit |= v->flip_bit[i] == b;
					if (!dupbit)
						v->flip_bit[v->n_flips++] = b;
				}
				st->corrupted++;
			}
		}
	}

	st->delivered++;
	st->bytes_delivered += frame_len;
	if (t > now_ns)
		st->delayed++;
	return v->action;
}

void sdr_link_corrupt_apply(uint8_t *frame, uint32_t len, const struct sdr_link_verdict *v)
{
	for (unsigned i = 0; i < v->n_flips; i++) {
		uint32_t b = v->flip_bit[i];

		if (b / 8 < len)
			frame[b / 8] ^= (uint8_t)(1u << (b % 8));
	}
}

/* ------------------------------------------------------------ counters -- */

static const char *const stat_names[] = {
#define SDR_LINK_STATS_NAME_(name, help) #name,
	SDR_LINK_STATS(SDR_LINK_STATS_NAME_)
#undef SDR_LINK_STATS_NAME_
};

static const char *const stat_help[] = {
#define SDR_LINK_STATS_HELP_(name, help) help,
	SDR_LINK_STATS(SDR_LINK_STATS_HELP_)
#undef SDR_LINK_STATS_HELP_
};

unsigned sdr_link_stats_count(void)
{
	return (unsigned)(sizeof(stat_names) / sizeof(stat_names[0]));
}

const char *sdr_link_stats_name(unsigned i)
{
	return i < sdr_link_stats_count() ? stat_names[i] : NULL;
}

const char *sdr_link_stats_help(unsigned i)
{
	return i < sdr_link_stats_count() ? stat_help[i] : NULL;
}

uint64_t sdr_link_stats_value(const struct sdr_link_stats *s, unsigned i)
{
	/* the struct is exactly the X-macro list of uint64_t, in order */
	const uint64_t *v = (const uint64_t *)s;

	_Static_assert(sizeof(struct sdr_link_stats) ==
			       sizeof(stat_names) / sizeof(stat_names[0]) * sizeof(uint64_t),
		       "sdr_link_stats must be the SDR_LINK_STATS list of uint64_t");
	return i < sdr_link_stats_count() ? v[i] : 0;
}

void sdr_link_stats_print(FILE *f, const char *title, const struct sdr_link_stats *s)
{
	fprintf(f, "  ######## link emulator %s ########\n", title ? title : "");
	fprintf(f, "  RX-in:      packets: %-14" PRIu64 " bytes: %" PRIu64 "\n", s->pkts_in,
		s->bytes_in);
	fprintf(f,
		"  Delivered:  packets: %-14" PRIu64 " bytes: %-14" PRIu64 " delayed: %" PRIu64
		"\n",
		s->delivered, s->bytes_delivered, s->delayed);
	fprintf(f,
		"  Released:   packets: %-14" PRIu64 " held: %-14" PRIu64 " max-held: %" PRIu64
		"\n",
		s->released, s->held, s->max_held);
	fprintf(f,
		"  Dropped:    buffer: %-15" PRIu64 " loss: %-14" PRIu64 " ge-loss: %-10" PRIu64
		" limit: %" PRIu64 "\n",
		s->dropped_buffer, s->dropped_loss, s->dropped_ge, s->dropped_limit);
	fprintf(f,
		"  Altered:    reordered: %-12" PRIu64 " duplicated: %-8" PRIu64
		" dup-failed: %-7" PRIu64 " corrupted: %" PRIu64 " (too short: %" PRIu64 ")\n",
		s->reordered, s->duplicated, s->dup_failed, s->corrupted, s->corrupt_short);
	fprintf(f,
		"  Bottleneck: backlog: %-13" PRIu64 " max-backlog: %-7" PRIu64
		" ge-bad: %-11" PRIu64 " max-release-lag-ns: %" PRIu64 "\n",
		s->backlog_bytes, s->max_backlog_bytes, s->ge_bad_frames, s->max_release_lag_ns);
	if (s->ect_in || s->bg_bytes || s->dropped_down || s->rate_bps_now)
		fprintf(f,
			"  Shared:     ect-in: %-14" PRIu64 " ce-marked: %-9" PRIu64
			" down-dropped: %-5" PRIu64 " bg-bytes: %" PRIu64 " (dropped %" PRIu64
			") rate-now: %" PRIu64 "\n",
			s->ect_in, s->ce_marked, s->dropped_down, s->bg_bytes, s->bg_dropped_bytes,
			s->rate_bps_now);
}
