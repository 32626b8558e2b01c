/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of common/sdr_ring.h: FIFO behaviour against a model, 32-bit
 * counter wrap-around, full/empty/partial bursts, hostile shared indices,
 * and a two-thread producer/consumer stress (order and content checked, no
 * timing assertions).
 */
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "sdr_ring.h"
#include "sdr_test.h"

struct ent {
	uint64_t seq;
	uint64_t check; /* function of seq: catches torn or stale entries */
};

static uint64_t check_of(uint64_t seq)
{
	return ~(seq * 0x9E3779B97F4A7C15ull);
}

/* index block and entries as one shared allocation, like the real segment */
struct shm {
	struct sdr_ring_idx idx;
	struct ent e[];
};

static struct shm *shm_new(uint32_t size, uint32_t start)
{
	size_t bytes = sizeof(struct shm) + (size_t)size * sizeof(struct ent);
	/* C11: the size must be a multiple of the alignment */
	struct shm *s = aligned_alloc(SDR_CACHE_LINE, (bytes + SDR_CACHE_LINE - 1) /
							      SDR_CACHE_LINE * SDR_CACHE_LINE);

	if (s == NULL) {
		perror("aligned_alloc");
		exit(1);
	}
	sdr_ring_format(&s->idx, size, sizeof(struct ent));
	atomic_store(&s->idx.prod, start);
	atomic_store(&s->idx.cons, start);
	memset(s->e, 0xEE, (size_t)size * sizeof(struct ent));
	return s;
}

static void attach_or_die(struct sdr_ring *r, struct sdr_ring_idx *idx, void *e, uint32_t size,
			  uint32_t esize, int prod)
{
	if (sdr_ring_attach(r, idx, e, size, esize, prod) != 0) {
		fprintf(stderr, "sdr_ring_attach(size %u) failed\n", size);
		exit(1);
	}
}

static void test_attach(void)
{
	struct shm *s = shm_new(8, 0);
	struct sdr_ring r = {0};

	CHECK(sdr_ring_attach(&r, &s->idx, s->e, 0, sizeof(struct ent), 1) == -1);
	CHECK(sdr_ring_attach(&r, &s->idx, s->e, 6, sizeof(struct ent), 1) == -1);
	CHECK(sdr_ring_attach(&r, &s->idx, s->e, 0x80000001u, sizeof(struct ent), 0) == -1);
	CHECK(sdr_ring_attach(&r, &s->idx, s->e, 8, 0, 0) == -1);
	CHECK(sdr_ring_attach(&r, &s->idx, s->e, 1, sizeof(struct ent), 0) == 0);
	CHECK(sdr_ring_attach(&r, &s->idx, s->e, 8, sizeof(struct ent), 0) == 0);
	CHECK(r.mask == 7 && r.size == 8 && r.local == 0);
	/* the trusted size wins over whatever the shared block says */
	s->idx.size = 1u << 30;
	CHECK(sdr_ring_attach(&r, &s->idx, s->e, 8, sizeof(struct ent), 0) == 0);
	CHECK(r.size == 8);
	free(s);
}

/* Random bursts against a model FIFO, counters starting at @p start. */
static void test_model(uint32_t size, uint32_t start, int rounds)
{
	struct shm *s = shm_new(size, start);
	struct sdr_ring p = {0}, c = {0};
	struct ent in[80], out[80];
	uint64_t next_in = 0, next_out = 0;

	attach_or_die(&p, &s->idx, s->e, size, sizeof(struct ent), 1);
	attach_or_die(&c, &s->idx, s->e, size, sizeof(struct ent), 0);
	CHECK(p.local == start && c.local == start);
	CHECK(sdr_ring_free(&p) == size);
	CHECK(sdr_ring_avail_checked(&c) == 0);
	CHECK(sdr_ring_dequeue_burst(&c, out, 4) == 0);

	for (int r = 0; r < rounds; r++) {
		uint32_t want = (uint32_t)t_below(80), got, used = (uint32_t)(next_in - next_out);
		uint32_t expect = want < size - used ? want : size - used;

		CHECK_OR_BREAK(sdr_ring_free(&p) == size - used);
		for (uint32_t i = 0; i < want; i++)
			in[i] = (struct ent){next_in + i, check_of(next_in + i)};
		got = sdr_ring_enqueue_burst(&p, in, want);
		CHECK_OR_BREAK(got == expect);
		next_in += got;
		CHECK_OR_BREAK(atomic_load(&s->idx.prod) == (uint32_t)(start + next_in));
		CHECK_OR_BREAK(sdr_ring_avail_checked(&c) == (int64_t)(next_in - next_out));

		used = (uint32_t)(next_in - next_out);
		want = (uint32_t)t_below(80);
		expect = want < used ? want : used;
		if (t_below(4) == 0 && used) {
			/* peek + consume path */
			uint32_t k = (uint32_t)t_range(1, used);

			for (uint32_t i = 0; i < k; i++) {
				const struct ent *e = sdr_ring_peek(&c, i);
				CHECK_OR_BREAK(e->seq == next_out + i &&
					       e->check == check_of(e->seq));
			}
			sdr_ring_consume(&c, k);
			next_out += k;
		} else {
			got = sdr_ring_dequeue_burst(&c, out, want);
			CHECK_OR_BREAK(got == expect);
			for (uint32_t i = 0; i < got; i++)
				CHECK_OR_BREAK(out[i].seq == next_out + i &&
					       out[i].check == check_of(out[i].seq));
			next_out += got;
		}
		CHECK_OR_BREAK(atomic_load(&s->idx.cons) == (uint32_t)(start + next_out));
	}
	/* drain: everything that went in comes out, in order, once */
	while (next_out < next_in) {
		uint32_t got = sdr_ring_dequeue_burst(&c, out, 80);
		CHECK_OR_BREAK(got > 0);
		for (uint32_t i = 0; i < got; i++)
			CHECK(out[i].seq == next_out + i);
		next_out += got;
	}
	CHECK(sdr_ring_avail_checked(&c) == 0);
	CHECK(sdr_ring_free(&p) == size);
	/* the counters really wrapped when we started near the top */
	if (start > UINT32_MAX - 1000u && next_in > 2000)
		CHECK(atomic_load(&s->idx.prod) < start);
	free(s);
}

static void test_full_empty(uint32_t start)
{
	enum { size = 16 };
	struct shm *s = shm_new(size, start);
	struct sdr_ring p = {0}, c = {0};
	struct ent in[size + 5], out[size + 5];

	attach_or_die(&p, &s->idx, s->e, size, sizeof(struct ent), 1);
	attach_or_die(&c, &s->idx, s->e, size, sizeof(struct ent), 0);
	for (uint32_t i = 0; i < size + 5; i++)
		in[i] = (struct ent){i, check_of(i)};
	/* burst larger than the ring: partial */
	CHECK(sdr_ring_enqueue_burst(&p, in, size + 5) == size);
	CHECK(sdr_ring_free(&p) == 0);
	CHECK(sdr_ring_enqueue_burst(&p, in, 1) == 0);
	CHECK(sdr_ring_enqueue_burst(&p, in, 0) == 0);
	CHECK(sdr_ring_avail_checked(&c) == size);
	/* partial dequeue, then top up to full again */
	CHECK(sdr_ring_dequeue_burst(&c, out, 3) == 3);
	CHECK(out[0].seq == 0 && out[2].seq == 2);
	CHECK(sdr_ring_free(&p) == 3);
	CHECK(sdr_ring_enqueue_burst(&p, in + size, 5) == 3);
	CHECK(sdr_ring_avail_checked(&c) == size);
	CHECK(sdr_ring_dequeue_burst(&c, out, size + 5) == size);
	for (uint32_t i = 0; i < size; i++)
		CHECK(out[i].seq == i + 3);
	CHECK(sdr_ring_avail_checked(&c) == 0);
	CHECK(sdr_ring_dequeue_burst(&c, out, 1) == 0);
	CHECK(sdr_ring_dequeue_burst(&c, out, 0) == 0);
	CHECK(sdr_ring_free(&p) == size);
	free(s);
}

/* The consumer must not believe a producer index more than size ahead. */
static void test_hostile_prod(uint32_t start)
{
	const uint32_t size = 32;
	struct shm *s = shm_new(size, start);
	struct sdr_ring c = {0};
	struct ent out[4];
	static const uint32_t bad_delta[] = {33,          34,          1000,       0x7FFFFFFF,
					     0x80000000u, 0xFFFFFFFFu, 0xFFFFFFE0u};

	attach_or_die(&c, &s->idx, s->e, size, sizeof(struct ent), 0);
	for (size_t i = 0; i < sizeof(bad_delta) / sizeof(bad_delta[0]); i++) {
		atomic_store(&s->idx.prod, start + bad_delta[i]);
		CHECK(sdr_ring_avail_checked(&c) == -1);
		memset(out, 0x11, sizeof(out));
		CHECK(sdr_ring_dequeue_burst(&c, out, 4) == 0);
		CHECK(out[0].seq == 0x1111111111111111ull); /* nothing copied */
		CHECK(c.local == start && atomic_load(&s->idx.cons) == start);
	}
	/* exactly size ahead is legal (a full ring) */
	atomic_store(&s->idx.prod, start + size);
	CHECK(sdr_ring_avail_checked(&c) == size);
	CHECK(sdr_ring_dequeue_burst(&c, out, 4) == 4);
	CHECK(c.local == start + 4);
	/* after consuming, the legal window moves with our index */
	atomic_store(&s->idx.prod, start + 4 + size);
	CHECK(sdr_ring_avail_checked(&c) == size);
	atomic_store(&s->idx.prod, start + 4 + size + 1);
	CHECK(sdr_ring_avail_checked(&c) == -1);
	/* producer rolled back behind the consumer: impossible too */
	atomic_store(&s->idx.prod, start + 3);
	CHECK(sdr_ring_avail_checked(&c) == -1);
	free(s);
}

/* The producer must not believe a consumer index ahead of its own. */
static void test_hostile_cons(uint32_t start)
{
	const uint32_t size = 8;
	struct shm *s = shm_new(size, start);
	struct sdr_ring p = {0};
	struct ent in[8] = {{1, 1}, {2, 2}, {3, 3}, {4, 4}, {5, 5}, {6, 6}, {7, 7}, {8, 8}};
	static const uint32_t ahead[] = {1, 2, 8, 9, 1000, 0x80000000u, 0xFFFFFFF7u};

	attach_or_die(&p, &s->idx, s->e, size, sizeof(struct ent), 1);
	CHECK(sdr_ring_enqueue_burst(&p, in, 2) == 2); /* local = start + 2 */
	for (size_t i = 0; i < sizeof(ahead) / sizeof(ahead[0]); i++) {
		uint8_t before[sizeof(struct ent) * 8];

		atomic_store(&s->idx.cons, start + 2 + ahead[i]);
		CHECK(sdr_ring_free(&p) == 0);
		memcpy(before, s->e, sizeof(before));
		/* more than the room the producer knows of: it reads the index */
		CHECK(sdr_ring_enqueue_burst(&p, in, 7) == 0);
		CHECK(memcmp(before, s->e, sizeof(before)) == 0); /* nothing overwritten */
		CHECK(p.local == start + 2);
	}
	/* legal positions: cons in [local - size, local] */
	atomic_store(&s->idx.cons, start + 2);
	CHECK(sdr_ring_free(&p) == size);
	atomic_store(&s->idx.cons, start + 2 - size);
	CHECK(sdr_ring_free(&p) == 0);
	atomic_store(&s->idx.cons, start + 2 - size - 1); /* too far behind: also impossible */
	CHECK(sdr_ring_free(&p) == 0);
	atomic_store(&s->idx.cons, start);
	CHECK(sdr_ring_free(&p) == size - 2);
	free(s);
}

/* ---- two threads ---- */

#define STRESS_N 2000000ull

struct stress {
	struct shm *s;
	uint32_t size;
	uint64_t bad; /* consumer: first wrong seq + 1, or 0 */
	uint64_t received;
	uint64_t seed;
};

static uint64_t xs(uint64_t *st)
{
	*st ^= *st >> 12;
	*st ^= *st << 25;
	*st ^= *st >> 27;
	return *st * 0x2545F4914F6CDD1DULL;
}

static void *producer(void *arg)
{
	struct stress *st = arg;
	struct sdr_ring p = {0};
	struct ent buf[32];
	uint64_t next = 0, rs = st->seed | 1;

	attach_or_die(&p, &st->s->idx, st->s->e, st->size, sizeof(struct ent), 1);
	while (next < STRESS_N) {
		uint32_t want = 1 + (uint32_t)(xs(&rs) % 32), got;

		if (want > STRESS_N - next)
			want = (uint32_t)(STRESS_N - next);
		for (uint32_t i = 0; i < want; i++)
			buf[i] = (struct ent){next + i, check_of(next + i)};
		got = sdr_ring_enqueue_burst(&p, buf, want);
		next += got;
		if (got == 0)
			sched_yield(); /* only 2 cores, shared: do not spin hard */
	}
	return NULL;
}

static void *consumer(void *arg)
{
	struct stress *st = arg;
	struct sdr_ring c = {0};
	struct ent buf[32];
	uint64_t next = 0, rs = (st->seed * 3) | 1;

	attach_or_die(&c, &st->s->idx, st->s->e, st->size, sizeof(struct ent), 0);
	while (next < STRESS_N) {
		uint32_t want = 1 + (uint32_t)(xs(&rs) % 32), got;

		if (sdr_ring_avail_checked(&c) < 0) {
			st->bad = next + 1;
			break;
		}
		got = sdr_ring_dequeue_burst(&c, buf, want);
		for (uint32_t i = 0; i < got; i++) {
			if (buf[i].seq != next + i || buf[i].check != check_of(next + i)) {
				st->bad = next + i + 1;
				return NULL; /* the producer may then block: the test fails anyway */
			}
		}
		next += got;
		if (got == 0)
			sched_yield();
	}
	st->received = next;
	return NULL;
}

/* The producer reads the consumer's index only when the value it last read
 * leaves too little room: the consumer writes that cache line on every
 * poll. A stale value only shows less room, so whatever the consumer writes
 * there, nothing it has not released is overwritten. */
static void test_peer_cache(uint32_t start)
{
	const uint32_t size = 16;
	struct shm *s = shm_new(size, start);
	struct sdr_ring p = {0}, c = {0};
	struct ent in[size], out[size];

	attach_or_die(&p, &s->idx, s->e, size, sizeof(struct ent), 1);
	attach_or_die(&c, &s->idx, s->e, size, sizeof(struct ent), 0);
	for (uint32_t i = 0; i < size; i++)
		in[i] = (struct ent){i, check_of(i)};
	CHECK(sdr_ring_enqueue_burst(&p, in, 10) == 10);
	CHECK(sdr_ring_dequeue_burst(&c, out, 10) == 10); /* cons = start + 10 */
	/* room for 6 is known: the index is not read (a garbage value there
	 * goes unnoticed, and harms nothing) */
	atomic_store(&s->idx.cons, start + 12345);
	CHECK(sdr_ring_enqueue_burst(&p, in, 6) == 6);
	CHECK(p.peer == start);
	/* more: read; garbage (ahead of the producer) means no room */
	CHECK(sdr_ring_enqueue_burst(&p, in, 1) == 0);
	/* the real index: 10 released, 6 in the ring */
	atomic_store(&s->idx.cons, start + 10);
	CHECK(sdr_ring_enqueue_burst(&p, in, size) == 10);
	CHECK(p.peer == start + 10 && p.local == start + 26);
	CHECK(sdr_ring_avail_checked(&c) == size);
	CHECK(sdr_ring_dequeue_burst(&c, out, size) == size);
	for (uint32_t i = 0; i < 6; i++)
		CHECK_OR_BREAK(out[i].seq == i && out[6 + i].seq == i);
	free(s);
}

static void test_threads(uint32_t size, uint32_t start)
{
	struct stress st = {.s = shm_new(size, start), .size = size, .seed = t_rnd()};
	pthread_t tp, tc;

	CHECK(pthread_create(&tc, NULL, consumer, &st) == 0);
	CHECK(pthread_create(&tp, NULL, producer, &st) == 0);
	pthread_join(tc, NULL);
	if (st.bad) {
		fprintf(stderr, "stress: wrong entry at seq %llu\n",
			(unsigned long long)st.bad - 1);
		t_failures++;
		/* the producer may wait forever for room; do not join it */
		return;
	}
	pthread_join(tp, NULL);
	CHECK(st.received == STRESS_N);
	CHECK(atomic_load(&st.s->idx.prod) == (uint32_t)(start + STRESS_N));
	CHECK(atomic_load(&st.s->idx.cons) == (uint32_t)(start + STRESS_N));
	free(st.s);
}

int main(void)
{
	static const uint32_t starts[] = {
		0, 5, UINT32_MAX - 7, UINT32_MAX, UINT32_MAX - 300, 0x80000000u - 3};

	t_seed("test_ring", 0x52494E47);
	test_attach();
	for (size_t i = 0; i < sizeof(starts) / sizeof(starts[0]); i++) {
		test_full_empty(starts[i]);
		test_hostile_prod(starts[i]);
		test_hostile_cons(starts[i]);
		test_peer_cache(starts[i]);
		test_model(1, starts[i], 2000);
		test_model(16, starts[i], 20000);
		test_model(64, starts[i], 20000);
	}
	test_threads(64, UINT32_MAX - 1000);
	test_threads(8, UINT32_MAX - 3);
	return t_finish("test_ring");
}
