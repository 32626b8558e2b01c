/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Instance state file (layer ctl; restore_state.h): --state-dir DIR (made
 * 0700), file <socket path, '/' as '_'>.state (0600), mapped shared so that
 * every change is in the file when the daemon dies, however it dies. It
 * holds a 32-byte random key (made once), the QPN epoch (reused at a
 * restart, so restored QPNs lie in this boot's range) and a bitmap of the
 * QP blocks hosts hold. At start, the blocks marked are reserved for their
 * restore during --restore-window-ms, then freed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctrl_int.h"
#include "restore_state.h"
#include "sdr_inst.h"
#include "sdr_siphash.h"

#define STATE_MAGIC 0x53445249u /* "SDRI" */
#define STATE_VERSION 1
#define BLOCK_WORDS (SDR_MAX_QPS / 64)

struct state_file {
	uint32_t magic;
	uint32_t version;
	uint8_t key[32];              /* restore tokens: SipHash key = its first 16 bytes */
	uint32_t epoch;               /* QPN epoch of the incarnation that wrote it */
	uint32_t generations;         /* QPNs per block then (a change frees every block) */
	uint64_t blocks[BLOCK_WORDS]; /* held by hosts */
};

static struct rstate {
	struct state_file *f;
	uint64_t reserved[BLOCK_WORDS];
	uint64_t window_end; /* ms (ctl_now_ms) */
	int nreserved;
	char path[512];
} rs[SDR_MAX_INST];

static int bit(const uint64_t *bm, uint32_t i)
{
	return (bm[i / 64] >> (i % 64)) & 1;
}

static void bit_put(uint64_t *bm, uint32_t i, int v)
{
	if (v)
		bm[i / 64] |= 1ull << (i % 64);
	else
		bm[i / 64] &= ~(1ull << (i % 64));
}

static int state_path(const struct sdr_inst *in, char *buf, size_t len)
{
	const char *n = in->cfg.name;
	size_t o;
	int k = snprintf(buf, len, "%s/", sdr_g.cfg.state_dir);

	if (k < 0 || (size_t)k >= len)
		return -1;
	o = (size_t)k;
	while (*n == '/')
		n++;
	for (; *n && o + 1 < len; n++)
		buf[o++] = *n == '/' ? '_' : *n;
	if (snprintf(buf + o, len - o, ".state") >= (int)(len - o))
		return -1;
	return 0;
}

int sdr_rstate_open(struct sdr_inst *in, uint32_t *epoch)
{
	struct rstate *r = &rs[in->idx];
	char path[512];
	struct stat st;
	int fd, fresh;
	void *p;

	if (!sdr_g.cfg.state_dir || !strcmp(sdr_g.cfg.state_dir, "none"))
		return 0;
	if (mkdir(sdr_g.cfg.state_dir, 0700) && errno != EEXIST) {
		fprintf(stderr, "sdr-dpu: --state-dir %s: %s; QPs cannot be restored\n",
			sdr_g.cfg.state_dir, strerror(errno));
		return 0;
	}
	if (state_path(in, path, sizeof(path))) {
		fprintf(stderr, "sdr-dpu: state file path too long; QPs cannot be restored\n");
		return 0;
	}
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (st.st_uid != geteuid() || (st.st_mode & 077))) {
		fprintf(stderr, "sdr-dpu: state file %s unusable (%s); QPs cannot be restored\n",
			path, fd < 0 ? strerror(errno) : "not a private regular file of this user");
		if (fd >= 0)
			close(fd);
		return 0;
	}
	fresh = st.st_size != sizeof(struct state_file);
	if (fresh && ftruncate(fd, sizeof(struct state_file))) {
		fprintf(stderr, "sdr-dpu: state file %s: %s\n", path, strerror(errno));
		close(fd);
		return 0;
	}
	p = mmap(NULL, sizeof(struct state_file), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (p == MAP_FAILED) {
		fprintf(stderr, "sdr-dpu: state file %s: mmap: %s\n", path, strerror(errno));
		return 0;
	}
	r->f = p;
	snprintf(r->path, sizeof(r->path), "%s", path);
	if (fresh || r->f->magic != STATE_MAGIC || r->f->version != STATE_VERSION ||
	    r->f->epoch >= SDR_QPN_EPOCHS) {
		memset(r->f, 0, sizeof(*r->f));
		while (getrandom(r->f->key, sizeof(r->f->key), 0) != (ssize_t)sizeof(r->f->key))
			;
		r->f->version = STATE_VERSION;
		r->f->generations = sdr_g.cfg.generations;
		r->f->magic = STATE_MAGIC;
		printf("sdr-dpu[%s]: new state file %s\n", in->cfg.name, path);
		return 0;
	}
	if (r->f->generations != sdr_g.cfg.generations) {
		memset(r->f->blocks, 0, sizeof(r->f->blocks));
		r->f->generations = sdr_g.cfg.generations;
	}
	memcpy(r->reserved, r->f->blocks, sizeof(r->reserved));
	for (unsigned i = 0; i < SDR_MAX_QPS; i++)
		r->nreserved += bit(r->reserved, i);
	r->window_end = ctl_now_ms() + sdr_g.cfg.restore_window_ms;
	*epoch = r->f->epoch;
	printf("sdr-dpu[%s]: state file %s: QPN epoch %u, %d QP blocks reserved for restore for %u"
	       " ms\n",
	       in->cfg.name, path, r->f->epoch, r->nreserved, sdr_g.cfg.restore_window_ms);
	return 1;
}

void sdr_rstate_set_epoch(struct sdr_inst *in, uint32_t epoch)
{
	struct rstate *r = &rs[in->idx];

	if (!r->f || r->f->epoch == epoch)
		return;
	/* another range (an explicit --qpn-epoch): nothing of the old one
	 * can be restored */
	r->f->epoch = epoch;
	memset(r->f->blocks, 0, sizeof(r->f->blocks));
	memset(r->reserved, 0, sizeof(r->reserved));
	r->nreserved = 0;
}

int sdr_rstate_enabled(const struct sdr_inst *in)
{
	return rs[in->idx].f != NULL;
}

static void window_check(struct rstate *r)
{
	if (!r->nreserved || (int64_t)(ctl_now_ms() - r->window_end) < 0)
		return;
	/* over: what nobody restored is free again */
	for (unsigned w = 0; w < BLOCK_WORDS; w++) {
		r->f->blocks[w] &= ~r->reserved[w];
		r->reserved[w] = 0;
	}
	r->nreserved = 0;
}

int sdr_rstate_reserved(struct sdr_inst *in, uint32_t id)
{
	struct rstate *r = &rs[in->idx];

	if (!r->f || id >= SDR_MAX_QPS)
		return 0;
	window_check(r);
	return bit(r->reserved, id);
}

uint64_t sdr_rstate_window_left_ms(struct sdr_inst *in)
{
	struct rstate *r = &rs[in->idx];
	uint64_t now = ctl_now_ms();

	if (!r->f)
		return 0;
	window_check(r);
	return r->nreserved && r->window_end > now ? r->window_end - now : 0;
}

void sdr_rstate_mark(struct sdr_inst *in, uint32_t id, int used)
{
	struct rstate *r = &rs[in->idx];

	if (!r->f || id >= SDR_MAX_QPS)
		return;
	if (bit(r->reserved, id)) {
		bit_put(r->reserved, id, 0);
		r->nreserved--;
	}
	bit_put(r->f->blocks, id, used);
}

static int stopping[SDR_MAX_INST];

int sdr_rstate_stopping(const struct sdr_inst *in)
{
	return stopping[in->idx];
}

void sdr_rstate_close_all(void)
{
	for (unsigned i = 0; i < SDR_MAX_INST; i++)
		if (rs[i].f) {
			uint64_t held = 0;

			stopping[i] = 1;
			for (unsigned w = 0; w < BLOCK_WORDS; w++)
				held |= rs[i].f->blocks[w];
			msync(rs[i].f, sizeof(*rs[i].f), MS_SYNC);
			munmap(rs[i].f, sizeof(*rs[i].f));
			rs[i].f = NULL;
			/* a clean stop with no QP held by a host leaves nothing to
			 * restore: the file goes (the next start draws a new
			 * epoch and key, as without a state file) */
			if (!held && rs[i].path[0] && unlink(rs[i].path) == 0)
				printf("sdr-dpu: state file %s removed (no QP held)\n", rs[i].path);
		}
}

void sdr_rstate_token(const struct sdr_inst *in, uint32_t qpn, uint32_t rkey, uint64_t ctrl_key,
		      uid_t uid, uint8_t out[SDR_RESTORE_TOKEN_LEN])
{
	const struct rstate *r = &rs[in->idx];
	uint8_t m[256 + 24];
	size_t n = strnlen(in->cfg.name, 255), o;
	uint32_t u = (uint32_t)uid;

	memset(out, 0, SDR_RESTORE_TOKEN_LEN);
	if (!r->f)
		return;
	/* the name with its NUL, then the numbers little-endian */
	memcpy(m, in->cfg.name, n);
	m[n] = 0;
	o = n + 1;
	for (unsigned i = 0; i < 4; i++)
		m[o++] = (uint8_t)(qpn >> (8 * i));
	for (unsigned i = 0; i < 4; i++)
		m[o++] = (uint8_t)(rkey >> (8 * i));
	for (unsigned i = 0; i < 8; i++)
		m[o++] = (uint8_t)(ctrl_key >> (8 * i));
	for (unsigned i = 0; i < 4; i++)
		m[o++] = (uint8_t)(u >> (8 * i));
	sdr_siphash24_128(r->f->key, m, o, out);
}
