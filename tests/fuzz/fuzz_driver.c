/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stand-in for libFuzzer's main() when the compiler has none (gcc): replays
 * the harness's built-in seeds and any files given, then runs a bounded
 * number of random mutations of them through LLVMFuzzerTestOneInput().
 * Not coverage guided, but the same harness and invariants run in every
 * build. Also writes the built-in seeds as files for libFuzzer's corpus.
 *
 *   DRIVER [-runs=N] [-seed=S] [FILE|DIR ...]   replay + N mutations
 *   DRIVER --write-seeds DIR [CORPUS_DIR [LIST]]  write seeds, create the
 *                    corpus dir, write LIST for libFuzzer -seed_inputs=@LIST
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sdr_fuzz.h"

#define DRIVER_MAX_INPUT 65536
#define DRIVER_MAX_INPUTS 4096

struct corpus {
	uint8_t *data[DRIVER_MAX_INPUTS];
	size_t len[DRIVER_MAX_INPUTS];
	size_t n;
};

static uint64_t rng = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545F4914F6CDD1DULL;
}

static size_t rnd_below(size_t n)
{
	return n ? (size_t)(rnd() % n) : 0;
}

static void corpus_add(const uint8_t *d, size_t len, void *arg)
{
	struct corpus *c = arg;
	uint8_t *copy;

	if (c->n == DRIVER_MAX_INPUTS || len > DRIVER_MAX_INPUT)
		return;
	copy = malloc(len ? len : 1);
	if (copy == NULL)
		return;
	memcpy(copy, d, len);
	c->data[c->n] = copy;
	c->len[c->n++] = len;
}

static int add_file(struct corpus *c, const char *path)
{
	static uint8_t buf[DRIVER_MAX_INPUT];
	FILE *fp = fopen(path, "rb");
	size_t n;

	if (fp == NULL) {
		fprintf(stderr, "fuzz driver: %s: %s\n", path, strerror(errno));
		return -1;
	}
	n = fread(buf, 1, sizeof(buf), fp);
	fclose(fp);
	corpus_add(buf, n, c);
	return 0;
}

static int add_path(struct corpus *c, const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *de;

	if (stat(path, &st) != 0) {
		fprintf(stderr, "fuzz driver: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode))
		return add_file(c, path);
	d = opendir(path);
	if (d == NULL)
		return -1;
	while ((de = readdir(d)) != NULL) {
		char p[4096];

		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", path, de->d_name);
		if (stat(p, &st) == 0 && S_ISREG(st.st_mode))
			add_file(c, p);
	}
	closedir(d);
	return 0;
}

/* Values that sit on length and field boundaries of the headers. */
static const uint16_t interesting16[] = {0,      1,      4,      8,      19,     20,
					 0x2B,   0x24,   0x0800, 0x0806, 0x8100, 4791,
					 0x4000, 0x2000, 0x7FFF, 0xFFFF};

/* Apply 1..8 random edits; returns the new length (<= cap). */
static size_t mutate(uint8_t *b, size_t len, size_t cap)
{
	int edits = 1 + (int)rnd_below(8);

	while (edits--) {
		size_t pos = rnd_below(len);

		switch (rnd_below(7)) {
		case 0: /* bit flip */
			if (len)
				b[pos] ^= (uint8_t)(1u << rnd_below(8));
			break;
		case 1: /* random byte */
			if (len)
				b[pos] = (uint8_t)rnd();
			break;
		case 2: /* interesting 16-bit big-endian value */
			if (len >= 2) {
				uint16_t v = interesting16[rnd_below(sizeof(interesting16) /
								     sizeof(interesting16[0]))];

				pos = rnd_below(len - 1);
				b[pos] = (uint8_t)(v >> 8);
				b[pos + 1] = (uint8_t)v;
			}
			break;
		case 3: /* truncate */ len = rnd_below(len + 1); break;
		case 4: /* append random bytes */
		{
			size_t add = rnd_below(64);

			if (len + add > cap)
				add = cap - len;
			for (size_t i = 0; i < add; i++)
				b[len + i] = (uint8_t)rnd();
			len += add;
			break;
		}
		case 5: /* erase a run */
			if (len) {
				size_t n = 1 + rnd_below(len - pos);

				memmove(b + pos, b + pos + n, len - pos - n);
				len -= n;
			}
			break;
		default: /* 0x00 / 0xFF extremes */
			if (len)
				b[pos] = rnd_below(2) ? 0xFF : 0x00;
			break;
		}
	}
	return len;
}

/* The list file is libFuzzer's -seed_inputs=@LIST format: comma-separated paths. */
static int write_seeds(const char *dir, const char *corpus_dir, const char *list)
{
	struct corpus c = {.n = 0};
	FILE *lf = NULL;

	if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "fuzz driver: mkdir %s: %s\n", dir, strerror(errno));
		return 1;
	}
	/* libFuzzer refuses a corpus directory that does not exist */
	if (corpus_dir && mkdir(corpus_dir, 0755) != 0 && errno != EEXIST) {
		fprintf(stderr, "fuzz driver: mkdir %s: %s\n", corpus_dir, strerror(errno));
		return 1;
	}
	if (list && (lf = fopen(list, "w")) == NULL) {
		fprintf(stderr, "fuzz driver: %s: %s\n", list, strerror(errno));
		return 1;
	}
	sdr_fuzz_seeds(corpus_add, &c);
	for (size_t i = 0; i < c.n; i++) {
		char p[4096];
		FILE *fp;

		snprintf(p, sizeof(p), "%s/seed-%03zu", dir, i);
		fp = fopen(p, "wb");
		if (fp == NULL || fwrite(c.data[i], 1, c.len[i], fp) != c.len[i]) {
			fprintf(stderr, "fuzz driver: write %s failed\n", p);
			if (fp)
				fclose(fp);
			if (lf)
				fclose(lf);
			return 1;
		}
		fclose(fp);
		free(c.data[i]);
		if (lf)
			fprintf(lf, "%s%s", i ? "," : "", p);
	}
	if (lf && fclose(lf) != 0)
		return 1;
	printf("wrote %zu seeds to %s\n", c.n, dir);
	return 0;
}

int main(int argc, char **argv)
{
	static struct corpus c;
	static uint8_t work[DRIVER_MAX_INPUT];
	unsigned long long runs = 20000;

	if (argc >= 3 && strcmp(argv[1], "--write-seeds") == 0)
		return write_seeds(argv[2], argc >= 4 ? argv[3] : NULL, argc >= 5 ? argv[4] : NULL);

	for (int i = 1; i < argc; i++) {
		if (strncmp(argv[i], "-runs=", 6) == 0) {
			runs = strtoull(argv[i] + 6, NULL, 0);
		} else if (strncmp(argv[i], "-seed=", 6) == 0) {
			rng = strtoull(argv[i] + 6, NULL, 0);
			if (rng == 0)
				rng = 1;
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "fuzz driver: ignoring libFuzzer flag %s\n", argv[i]);
		} else if (add_path(&c, argv[i]) != 0) {
			return 1;
		}
	}
	sdr_fuzz_seeds(corpus_add, &c);
	if (c.n == 0) {
		fprintf(stderr, "fuzz driver: no inputs\n");
		return 1;
	}
	for (size_t i = 0; i < c.n; i++)
		LLVMFuzzerTestOneInput(c.data[i], c.len[i]);
	for (unsigned long long r = 0; r < runs; r++) {
		size_t k = rnd_below(c.n), len = c.len[k];

		memcpy(work, c.data[k], len);
		len = mutate(work, len, sizeof(work));
		LLVMFuzzerTestOneInput(work, len);
	}
	printf("fuzz driver: %zu inputs replayed, %llu mutations, no invariant broken\n", c.n,
	       runs);
	for (size_t i = 0; i < c.n; i++)
		free(c.data[i]);
	return 0;
}
