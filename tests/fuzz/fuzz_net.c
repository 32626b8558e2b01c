/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fuzz harness for sdr-pipe's network description (host/pipe/pipe_net.c):
 * the text of --net / --net-text is untrusted input. The input is the text
 * itself (NUL-terminated copy).
 *
 * Invariants (abort() on violation): a refused text leaves a reason; an
 * accepted one has 2..PIPE_MAX_DC DCs and at most PIPE_NET_MAX_LINKS links,
 * every pair it maps points at a link that receives at the pair's
 * destination and carries its source, every link's senders map to it, names
 * are valid and distinct; every link has 1..PIPE_NET_PATHS_MAX paths whose
 * shares add up to 1; its canonical form parses to the same digest; the
 * per-peer link arguments of every DC never write past the buffer, at any
 * buffer size, are the same text whatever the size once they fit, and hold
 * no blank (one word per link).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipe_net.h"
#include "sdr_fuzz.h"

static void check(int ok)
{
	if (!ok)
		abort();
}

static void invariants(const struct pipe_net *n)
{
	static const char *const addr[PIPE_MAX_DC] = {"10.0.0.1", "10.0.1.1", "10.0.2.1",
						      "10.0.3.1", "10.0.4.1", "10.0.5.1"};
	static char full[16384];
	char small[PIPE_NET_MAX_LINKS * 8];

	check(n->dcs >= 2 && n->dcs <= PIPE_MAX_DC && n->nlinks >= 1 &&
	      n->nlinks <= PIPE_NET_MAX_LINKS);
	for (uint32_t a = 0; a < PIPE_MAX_DC; a++)
		for (uint32_t b = 0; b < PIPE_MAX_DC; b++) {
			int l = n->pair[a][b];

			check(l >= -1 && l < (int)n->nlinks);
			if (l >= 0)
				check(n->link[l].to == b && (n->link[l].from_mask >> a & 1) &&
				      a != b && a < n->dcs && b < n->dcs &&
				      pipe_net_lookup(n, a, b) == l);
		}
	for (uint32_t i = 0; i < n->nlinks; i++) {
		const struct pipe_net_link *k = &n->link[i];
		size_t len = strnlen(k->name, PIPE_NET_NAME_MAX);

		check(len > 0 && len < PIPE_NET_NAME_MAX && isalpha((unsigned char)k->name[0]));
		check(k->from_mask && !(k->from_mask >> k->to & 1));
		for (uint32_t d = 0; d < PIPE_MAX_DC; d++)
			if (k->from_mask >> d & 1)
				check(n->pair[d][k->to] == (int8_t)i);
		for (uint32_t j = 0; j < i; j++)
			check(strcmp(k->name, n->link[j].name) != 0);
		check(pipe_net_loss(n, (int)i) >= 0 && pipe_net_loss(n, (int)i) <= 1);
		check(k->npaths >= 1 && k->npaths <= PIPE_NET_PATHS_MAX &&
		      pipe_net_paths(n, (int)i) == k->npaths);
		{
			double sum = 0;

			for (uint32_t p = 0; p < k->npaths; p++)
				sum += pipe_net_path_share(n, (int)i, p);
			check(sum > 1 - 1e-9 && sum < 1 + 1e-9);
		}
	}
	/* the canonical form says the same */
	{
		char *text = NULL;
		size_t tl = 0;
		FILE *f = open_memstream(&text, &tl);
		struct pipe_net m;
		char why[256];

		check(f != NULL && pipe_net_write(f, n) == 0);
		fclose(f);
		check(pipe_net_parse(text, &m, why, sizeof(why)) == 0);
		check(pipe_net_digest(&m) == pipe_net_digest(n) && m.dcs == n->dcs);
		free(text);
	}
	/* link arguments: bounded writes, the same text once it fits */
	for (uint32_t dc = 0; dc < n->dcs; dc++) {
		int rc = pipe_net_link_args(n, dc, addr, full, sizeof(full));

		check(rc >= 0 && (size_t)rc == strlen(full) && !strchr(full, ' '));
		for (size_t sz = 0; sz < sizeof(small); sz += 7) {
			memset(small, 0x5a, sizeof(small));
			int r = pipe_net_link_args(n, dc, addr, sz ? small : NULL, sz);

			if (sz > (size_t)rc) {
				check(r == rc && memcmp(small, full, (size_t)rc + 1) == 0);
			} else {
				check(r == -ENOSPC);
			}
			for (size_t k = sz; k < sizeof(small); k++)
				check((unsigned char)small[k] == 0x5a);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), why[256];
	struct pipe_net n;
	int rc;

	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	why[0] = '\0';
	rc = pipe_net_parse(text, &n, why, sizeof(why));
	if (rc == 0)
		invariants(&n);
	else
		check(rc == -EINVAL && why[0] != '\0');
	free(text);
	return 0;
}

void sdr_fuzz_seeds(sdr_fuzz_emit_fn emit, void *arg)
{
	static const char *const seeds[] = {
		("link l01 to=1 from=0 delay=2.5ms rate=1gbit buffer=2MB loss=0\n"
		 "link into2 to=2 from=0,1 delay=12.5ms rate=2gbit buffer=4MB\n"),
		"dcs 6; link a to=5 from=0,1,2,3,4 delay=1ms rate=10gbit ge=0.01:0.1:0:1 seed=7",
		"# comment\nlink x to=0 from=1 jitter=1ms reorder=0.01:2ms dup=0.001 "
		"corrupt=1e-4:3",
		"link a to=1 from=0;link a to=0 from=1",
		"link a to=1 from=0 buffer=1MB",
		"dcs 2\nlink a to=2 from=0",
		"link a to=1 from=0,0,",
		"link m to=1 from=0 delay=5ms rate=250mbit | delay=12.5ms rate=250mbit",
		"link p to=1 from=0 delay=2ms rate=1gbit paths=4 seed=3; link q to=0 from=1 |",
		"link u to=1 from=0 rate=300mbit|rate=100mbit loss=0.01 |rate=600mbit "
		"ge=0.01:0.09:0:1",
	};

	for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++)
		emit((const uint8_t *)seeds[i], strlen(seeds[i]), arg);
}
