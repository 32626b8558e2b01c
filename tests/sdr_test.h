/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The harness of every C test (tests/meson.build: sdr_test_dep):
 *   CHECK(cond)                 count a failure, go on
 *   CHECK(cond, "fmt", ...)     the same, with a message
 *   REQUIRE(cond[, "fmt", ...]) a failure ends the test (exit 1): for checks
 *                               whose failure makes the rest meaningless
 *   CHECK_EQ(a, b)              CHECK that also prints both integer values
 *   CHECK_OR_BREAK(cond)        CHECK, then leave the enclosing loop
 *   BAIL_IF_MANY()              exit after more than 50 failures
 *   t_finish(name)              the verdict line and the exit status
 *   T_MAIN(prog, cases)         main() of a test binary whose one argument
 *                               names its case ({"name", fn} table)
 * plus a reproducible PRNG (t_seed, t_rnd, t_below, t_range).
 * Counters: t_checks (CHECK and REQUIRE evaluated), t_failures.
 *
 * SDR_TEST_SEED=N overrides a test's random seed (the seed is printed at
 * start so a failing run can be replayed).
 */
#ifndef SDR_TEST_H
#define SDR_TEST_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int t_failures __attribute__((unused));
static unsigned t_checks __attribute__((unused));

/* "file:line: KIND failed: cond[: message]" on stderr. The message format
 * arrives with a leading space (" " "fmt": it may be empty). */
static inline void t_report(const char *kind, const char *file, int line, const char *cond,
			    const char *fmt, ...) __attribute__((format(printf, 5, 6)));
static inline void t_report(const char *kind, const char *file, int line, const char *cond,
			    const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s:%d: %s failed: %s", file, line, kind, cond);
	if (fmt[0] && fmt[1]) {
		fputc(':', stderr);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
	}
	fputc('\n', stderr);
}

#define CHECK(cond, ...)                                                               \
	do {                                                                           \
		t_checks++;                                                            \
		if (!(cond)) {                                                         \
			t_failures++;                                                  \
			t_report("CHECK", __FILE__, __LINE__, #cond, " " __VA_ARGS__); \
		}                                                                      \
	} while (0)

#define REQUIRE(cond, ...)                                                               \
	do {                                                                             \
		t_checks++;                                                              \
		if (!(cond)) {                                                           \
			t_failures++;                                                    \
			t_report("REQUIRE", __FILE__, __LINE__, #cond, " " __VA_ARGS__); \
			exit(1);                                                         \
		}                                                                        \
	} while (0)

/* Like CHECK, also prints two integer values. */
#define CHECK_EQ(a, b)                                                                    \
	do {                                                                              \
		long long a_ = (long long)(a), b_ = (long long)(b);                       \
		t_checks++;                                                               \
		if (a_ != b_) {                                                           \
			fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%lld != %lld)\n", \
				__FILE__, __LINE__, #a, #b, a_, b_);                      \
			t_failures++;                                                     \
		}                                                                         \
	} while (0)

/* Abort the current loop after a failure so one bug does not print 10^5 lines. */
#define CHECK_OR_BREAK(cond)                                                             \
	if (t_checks++, !(cond)) {                                                       \
		fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
		t_failures++;                                                            \
		break;                                                                   \
	}

/* Give up on the whole test after too many failures. */
#define BAIL_IF_MANY()                                                     \
	do {                                                               \
		if (t_failures > 50) {                                     \
			fprintf(stderr, "too many failures, giving up\n"); \
			exit(1);                                           \
		}                                                          \
	} while (0)

static uint64_t t_rng __attribute__((unused)) = 0x9E3779B97F4A7C15ull;

/* xorshift64*: reproducible from the seed, independent of the code under test */
static inline uint64_t t_rnd(void)
{
	t_rng ^= t_rng >> 12;
	t_rng ^= t_rng << 25;
	t_rng ^= t_rng >> 27;
	return t_rng * 0x2545F4914F6CDD1DULL;
}

/** Uniform-ish in [0, n); 0 when n == 0. */
static inline uint64_t t_below(uint64_t n)
{
	return n ? t_rnd() % n : 0;
}

/** Uniform-ish in [lo, hi]. */
static inline uint64_t t_range(uint64_t lo, uint64_t hi)
{
	return lo + t_below(hi - lo + 1);
}

static inline void t_seed(const char *name, uint64_t dflt)
{
	const char *s = getenv("SDR_TEST_SEED");

	t_rng = s ? strtoull(s, NULL, 0) : dflt;
	if (t_rng == 0)
		t_rng = 1;
	printf("%s: seed %llu (SDR_TEST_SEED to replay)\n", name, (unsigned long long)t_rng);
}

static inline int t_finish(const char *name)
{
	if (t_failures) {
		fprintf(stderr, "%s: %d check(s) FAILED\n", name, t_failures);
		return 1;
	}
	printf("%s: all checks passed\n", name);
	return 0;
}

/** One case of a test binary that runs the case its argument names. */
struct t_case {
	const char *name;
	void (*fn)(void);
};

/** Run the case of @p cases (@p n of them) named by the one argument, with
 *  its seed (1 unless SDR_TEST_SEED) and verdict. @return the exit status:
 *  2 for a usage error or an unknown case. */
static inline int t_run_case(const char *prog, int argc, char **argv, const struct t_case *cases,
			     size_t n)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s", prog);
		for (size_t i = 0; i < n; i++)
			fprintf(stderr, "%c%s", i ? '|' : ' ', cases[i].name);
		fprintf(stderr, "\n");
		return 2;
	}
	for (size_t i = 0; i < n; i++)
		if (!strcmp(argv[1], cases[i].name)) {
			t_seed(cases[i].name, 1);
			cases[i].fn();
			return t_finish(cases[i].name);
		}
	fprintf(stderr, "%s: no test %s\n", prog, argv[1]);
	return 2;
}

/** main() of a test binary: @p cases a static array of struct t_case. */
#define T_MAIN(prog, cases)                                                                   \
	int main(int argc, char **argv)                                                       \
	{                                                                                     \
		return t_run_case(prog, argc, argv, cases, sizeof(cases) / sizeof(cases[0])); \
	}

#endif /* SDR_TEST_H */
