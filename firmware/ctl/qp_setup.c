/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * QP set-up (layer ctl, no socket; qp_setup.h): a QP's objects made and
 * taken apart. The requests that lead here, their checks and their replies
 * are ctrl_qp.c's; the memory comes from ctl_mem.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>

#include "ctl_mem.h"
#include "qp_setup.h"
#include "rel.h"

void sdr_qp_attr_sizes(const struct sdr_qp_attr_abi *a, uint32_t *max_msg, uint32_t *ppc)
{
	*max_msg = a->max_msg ? a->max_msg : sdr_g.cfg.max_msg;
	*ppc = a->chunk_pkts ? a->chunk_pkts : sdr_g.cfg.chunk_pkts;
}

/* The QP segment: its header, the host's view of the message slots, and
 * each slot's bitmap of chunks landed. */
static void qseg_format(struct sdr_qp *qp, size_t slot_off, size_t bm_off, uint32_t chunk_words)
{
	struct sdr_qseg_hdr *qh = qp->qseg;

	qh->magic = SDR_QSEG_MAGIC;
	qh->slots = SDR_MAX_MSGS;
	qh->bitmap_words = chunk_words;
	qh->chunk_bytes = qp->mtu * qp->ppc;
	qh->slot_off = slot_off;
	qh->bitmap_off = bm_off;
}

void sdr_qp_horizon_set(struct sdr_qp *qp, uint32_t req_ms)
{
	uint32_t ms = req_ms == UINT32_MAX ? 0 : req_ms ? req_ms : sdr_g.cfg.outage_horizon_ms;

	qp->horizon_ms = ms;
	qp->horizon_tsc = sdr_ms_cycles(ms);
}

int sdr_qp_setup(struct sdr_qp **out, struct sdr_hctx *c, const struct sdr_qp_attr_abi *a,
		 const struct sdr_qp_ids *ids, char *why, size_t why_len)
{
	const struct sdr_rel_ops *ops = sdr_rel_ops_of(a->reliability);
	struct sdr_inst *in = c->inst;
	uint32_t gens = sdr_g.cfg.generations;
	uint32_t mtu = sdr_g.cfg.mtu;
	uint32_t max_msg, ppc, chunk_words;
	size_t slot_off, bm_off, size;
	struct sdr_qp *qp;
	char init_why[96];
	int err;

	if (!ops) { /* (the caller checked the attributes) */
		snprintf(why, why_len, "reliability %u is not available", a->reliability);
		return -EOPNOTSUPP;
	}
	sdr_qp_attr_sizes(a, &max_msg, &ppc);
	qp = sdr_qp_mem_alloc();
	if (!qp) {
		snprintf(why, why_len, "out of memory");
		return -ENOMEM;
	}
	chunk_words = sdr_words_for((max_msg / mtu + ppc - 1) / ppc);
	slot_off = RTE_ALIGN_CEIL(sizeof(struct sdr_qseg_hdr), SDR_CACHE_LINE);
	bm_off = RTE_ALIGN_CEIL(slot_off + SDR_MAX_MSGS * sizeof(struct sdr_qseg_slot),
				SDR_CACHE_LINE);
	size = RTE_ALIGN_CEIL(bm_off + (size_t)SDR_MAX_MSGS * chunk_words * 8, 4096);
	qp->qseg = sdr_seg_create("sdr-qp", size, &qp->qseg_fd);
	if (!qp->qseg) {
		snprintf(why, why_len, "cannot create the QP segment: %s", strerror(errno));
		sdr_qp_mem_free(qp);
		return -ENOMEM;
	}
	qp->qseg_size = size;
	qp->id = ids->id;
	qp->qpn_base = in->qpn_first + ids->id * gens;
	qp->rkey = ids->rkey;
	qp->ctrl_key = ids->ctrl_key;
	qp->max_msg = max_msg;
	qp->ppc = ppc;
	qp->mtu = mtu;
	qp->gens = gens;
	qp->reliability = a->reliability;
	qp->ops = ops;
	qp->info_ec = a->reliability == SDR_REL_EC ? sdr_ec_param_pack(a->ec_code, a->ec_k, a->ec_m)
						   : 0;
	qp->rate_bps = a->rate_bps;
	qp->inst = in;
	qp->ctx = c;
	qp->worker = c->worker;
	qp->state = SDR_QPS_CREATED;
	sdr_qp_horizon_set(qp, ids->horizon_ms);
	qp->cc_mode = ids->cc;
	qp->paths = ids->paths;
	qseg_format(qp, slot_off, bm_off, chunk_words);
	if (sdr_rq_init(&qp->rq, mtu, max_msg, ppc, gens, qp->rkey,
			(uint64_t *)((uint8_t *)qp->qseg + bm_off),
			(struct sdr_qseg_slot *)((uint8_t *)qp->qseg + slot_off))) {
		snprintf(why, why_len, "out of memory for packet bitmaps");
		err = -ENOMEM;
		goto fail_seg;
	}
	qp->rq.stripe = ids->stripe; /* (placement and the senders read it) */
	err = qp->ops->qp_init(qp, a, init_why, sizeof(init_why));
	if (err) {
		snprintf(why, why_len, "%s", init_why);
		sdr_rq_fini(&qp->rq);
		goto fail_seg;
	}
	*out = qp;
	return 0;
fail_seg:
	sdr_seg_free(qp->qseg, size, qp->qseg_fd);
	sdr_qp_mem_free(qp);
	return err;
}

int sdr_qp_adopt_seg(struct sdr_qp *qp, int fd, char *why, size_t why_len)
{
	const struct sdr_qseg_hdr *ours = qp->qseg;
	struct sdr_qseg_hdr h;
	struct statfs sfs;
	struct stat st;
	int seals;
	void *p;

	if (fd < 0) {
		snprintf(why, why_len, "QP_RESTORE needs the QP's segment fd (SCM_RIGHTS)");
		return -EBADF;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || fstatfs(fd, &sfs) ||
	    (uint32_t)sfs.f_type != (uint32_t)TMPFS_MAGIC) {
		snprintf(why, why_len, "the passed segment is not a shmem memfd");
		return -EBADF;
	}
	seals = fcntl(fd, F_GET_SEALS);
	if (seals < 0 || (seals & (F_SEAL_SHRINK | F_SEAL_GROW)) != (F_SEAL_SHRINK | F_SEAL_GROW)) {
		snprintf(why, why_len, "the passed segment is not sealed against resizing");
		return -EPERM;
	}
	if ((uint64_t)st.st_size != qp->qseg_size) {
		snprintf(why, why_len, "the passed segment has %lld bytes, the QP's has %zu",
			 (long long)st.st_size, qp->qseg_size);
		return -EINVAL;
	}
	p = mmap(NULL, qp->qseg_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
	if (p == MAP_FAILED) {
		snprintf(why, why_len, "mmap of the passed segment failed: %s", strerror(errno));
		return -errno;
	}
	memcpy(&h, p, sizeof(h)); /* (host-writable: one copy, compared once) */
	if (h.magic != ours->magic || h.slots != ours->slots ||
	    h.bitmap_words != ours->bitmap_words || h.chunk_bytes != ours->chunk_bytes ||
	    h.slot_off != ours->slot_off || h.bitmap_off != ours->bitmap_off) {
		munmap(p, qp->qseg_size);
		snprintf(why, why_len, "the passed segment is not this QP's (its header differs)");
		return -EINVAL;
	}
	/* our offsets, never the header's */
	size_t slot_off = (size_t)((uint8_t *)qp->rq.shared - (uint8_t *)qp->qseg);
	size_t bm_off = (size_t)((uint8_t *)qp->rq.chunk_bm - (uint8_t *)qp->qseg);

	sdr_seg_free(qp->qseg, qp->qseg_size, qp->qseg_fd);
	qp->qseg = p;
	qp->qseg_fd = fd;
	qp->rq.chunk_bm = (uint64_t *)((uint8_t *)p + bm_off);
	qp->rq.shared = (struct sdr_qseg_slot *)((uint8_t *)p + slot_off);
	return 0;
}

void sdr_qp_teardown(struct sdr_qp *qp)
{
	qp->ops->qp_fini(qp);
	sdr_rq_fini(&qp->rq);
	sdr_seg_free(qp->qseg, qp->qseg_size, qp->qseg_fd);
	sdr_qp_mem_free(qp);
}

void sdr_qp_info_fill(const struct sdr_qp *qp, struct sdr_qp_info *x)
{
	x->qpn = qp->qpn_base;
	x->rkey = qp->rkey;
	x->ctrl_key = qp->ctrl_key;
	x->ip = qp->inst->ip;
	memcpy(x->mac, qp->inst->mac, 6);
	x->mtu = (uint16_t)qp->mtu;
	x->max_msg = qp->max_msg;
	x->chunk_pkts = qp->ppc;
	x->generations = (uint8_t)qp->gens;
	x->reliability = qp->reliability;
	x->ec = qp->info_ec;
}
