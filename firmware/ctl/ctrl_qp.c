/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * QP requests of the host socket (layer ctl; ctrl_int.h): QP_CREATE (the
 * attributes' ranges, the QPN block, the quota, room for completions, then
 * qp_setup.c's objects handed to the worker), QP_CONNECT (the peer's
 * checks), QP_SET_RATE and QP_DESTROY.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include <rte_cycles.h>

#include "auto_desc.h"
#include "cq.h"
#include "ctrl_int.h"
#include "ec_desc.h"
#include "qp_setup.h"
#include "rel.h"
#include "restore_state.h"
#include "sdr_rss.h"
#include "sdr_tomb.h"
#include "sr_qp.h"
#include "stats.h"
#include "worker.h"

/* A secret (R_Key, control key): from the kernel's CSPRNG, not rte_rand(). */
static uint64_t sdr_secret64(void)
{
	uint64_t v = 0;

	while (getrandom(&v, sizeof(v), 0) != (ssize_t)sizeof(v))
		;
	return v;
}

/* Which attributes qp_attr_check() looks at. */
#define ATTR_RATE 1u /* rate_bps: QP_CREATE and QP_SET_RATE */
#define ATTR_ALL (~0u)

static int attr_refused(struct sdr_ctl_resp *r, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int attr_refused(struct sdr_ctl_resp *r, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
	va_end(ap);
	r->status = -err;
	sdr_g.ctl_ctr[SDR_CTR_ctl_attr_range]++;
	return -err;
}

/* The range of every QP attribute a host sets, in one place: QP_CREATE
 * checks them all (ATTR_ALL), and every later change of an attribute
 * (QP_SET_RATE: ATTR_RATE) goes through the same check, so that no value is
 * refused at one and accepted at the other. A size of 0 is the daemon's
 * default (sdr_qp_attr_sizes()). */
static int qp_attr_check(const struct sdr_qp_attr_abi *a, unsigned which, struct sdr_ctl_resp *r)
{
	uint32_t mtu = sdr_g.cfg.mtu;
	uint32_t max_msg, ppc;
	uint64_t pool = (uint64_t)sdr_ec_cfg.pool_mb << 20;

	sdr_qp_attr_sizes(a, &max_msg, &ppc);

	if ((which & ATTR_RATE) && a->rate_bps &&
	    (a->rate_bps < SDR_QP_RATE_MIN || a->rate_bps > SDR_QP_RATE_MAX))
		return attr_refused(r, EINVAL,
				    "rate_bps %llu out of range (0 = unpaced, else %llu .."
				    " %llu bit/s)",
				    (unsigned long long)a->rate_bps, SDR_QP_RATE_MIN,
				    SDR_QP_RATE_MAX);
	if (which != ATTR_ALL)
		return 0;
	if (!sdr_rel_ops_of(a->reliability))
		return attr_refused(r, EOPNOTSUPP,
				    "reliability %u is not available in this firmware"
				    " (NONE, SR, EC or AUTO)",
				    a->reliability);
	if (ppc < 1 || ppc > 1024)
		return attr_refused(r, EINVAL, "chunk_pkts %u out of [1, 1024]", ppc);
	if (max_msg > sdr_g.cfg.max_msg)
		return attr_refused(r, EINVAL, "max_msg %u exceeds the daemon's --max-msg %u",
				    max_msg, sdr_g.cfg.max_msg);
	if (max_msg % (mtu * ppc) || max_msg < 8 * mtu || max_msg / mtu > SDR_MAX_PKTS)
		return attr_refused(r, EINVAL,
				    "max_msg %u must be a multiple of the chunk (%u B),"
				    " >= 8 packets and <= %u packets",
				    max_msg, mtu * ppc, SDR_MAX_PKTS);
	if (a->reliability == SDR_REL_EC) {
		if (sdr_ec_param_check(a->ec_code, a->ec_k, a->ec_m))
			return attr_refused(r, EINVAL,
					    "EC parameters code %u k %u m %u invalid (code 1"
					    " RS or 2 XOR, 1 <= k <= 64, 1 <= m <= 32, XOR m <= k)",
					    a->ec_code, a->ec_k, a->ec_m);
		/* parity memory of the pool: at least one submessage's parity */
		if ((uint64_t)a->ec_m * mtu * ppc > pool)
			return attr_refused(r, EINVAL,
					    "EC: m (%u) parity chunks of %u B exceed"
					    " --ec-pool-mb %u",
					    a->ec_m, mtu * ppc, sdr_ec_cfg.pool_mb);
	} else if (a->ec_code || a->ec_k || a->ec_m) {
		return attr_refused(r, EINVAL, "EC parameters given for reliability %u (must be 0)",
				    a->reliability);
	} else if (a->reliability == SDR_REL_AUTO &&
		   (uint64_t)sdr_auto_opts.max_m * mtu * ppc > pool) {
		return attr_refused(r, EINVAL,
				    "AUTO: m (%u) parity chunks of %u B (--auto-schemes)"
				    " exceed --ec-pool-mb %u",
				    sdr_auto_opts.max_m, mtu * ppc, sdr_ec_cfg.pool_mb);
	}
	return 0;
}

/* when block @p a was last destroyed (0: never, or no tombstone) */
static uint64_t tomb_tsc(const struct sdr_inst *in, uint32_t a)
{
	return in->tombs ? in->tombs[a].d.made_tsc : 0;
}

/* Is block @p a's tombstone older than block @p b's? */
static int tomb_older(const struct sdr_inst *in, uint32_t a, uint32_t b)
{
	return tomb_tsc(in, a) < tomb_tsc(in, b);
}

/* The QP's block (qp_id): the one the host asks for (want_qpn), else a
 * free one. */
static int qp_block_pick(struct sdr_hctx *c, const struct sdr_qp_attr_abi *a,
			 struct sdr_ctl_resp *r, uint32_t *id_out)
{
	struct sdr_inst *in = c->inst;
	uint32_t gens = sdr_g.cfg.generations;
	uint32_t id;

	if (a->want_qpn) {
		/* Either a block base of this boot's range, or one of the epoch-0
		 * range 0x100 + k*G, which names block k of this boot (so that a
		 * fixed --local-qpn works whatever the epoch; the QP info tells
		 * the actual QPN). */
		uint32_t base = a->want_qpn >= in->qpn_first ? in->qpn_first : SDR_QPN_FIRST;
		if (a->want_qpn < base || (a->want_qpn - base) % gens ||
		    (a->want_qpn - base) / gens >= SDR_MAX_QPS)
			return ctl_fail(
				r, EINVAL,
				"QPN 0x%x is not a block base (0x%x + k*%u or 0x%x + k*%u, k < %d)",
				a->want_qpn, in->qpn_first, gens, SDR_QPN_FIRST, gens, SDR_MAX_QPS);
		id = (a->want_qpn - base) / gens;
		if (atomic_load(&in->qps[id]))
			return ctl_fail(r, EADDRINUSE, "QPN 0x%x (block %u) is in use", a->want_qpn,
					id);
		if (sdr_rstate_reserved(in, id)) {
			ctl_note(SDR_CTR_ctl_qpn_reserved, in->cfg.name,
				 "QP_CREATE of QPN 0x%x refused: reserved for restore",
				 a->want_qpn);
			return ctl_fail(r, EADDRINUSE,
					"QPN 0x%x (block %u) is reserved for the restore of a QP of"
					" the previous incarnation (%llu ms more)",
					a->want_qpn, id,
					(unsigned long long)sdr_rstate_window_left_ms(in));
		}
	} else {
		/* where the port steers by QPN (port.c), the first free one whose
		 * packets land on the context's worker; else the first free one
		 * (the hand-off ring brings the others) */
		uint32_t any = SDR_MAX_QPS, steer = SDR_MAX_QPS;

		/* ... and among those the one whose tombstone is oldest (none
		 * best): a destroyed QP's tombstone lasts until its block is
		 * used again */
		for (id = 0; id < SDR_MAX_QPS; id++) {
			if (atomic_load(&in->qps[id]) || sdr_rstate_reserved(in, id))
				continue;
			if (any == SDR_MAX_QPS || tomb_older(in, id, any))
				any = id;
			if ((!in->rss_steer || sdr_rss_steers(in->qpn_first + id * gens, c->worker,
							      in->rss_reta, sdr_g.nworkers)) &&
			    (steer == SDR_MAX_QPS || tomb_older(in, id, steer)))
				steer = id;
		}
		id = steer != SDR_MAX_QPS ? steer : any;
		if (id == SDR_MAX_QPS)
			return ctl_fail(r, ENOSPC, "no free QP (%d)", SDR_MAX_QPS);
	}
	*id_out = id;
	return 0;
}

int ctl_qp_attr_check(const struct sdr_qp_attr_abi *a, struct sdr_ctl_resp *r)
{
	return qp_attr_check(a, ATTR_ALL, r);
}

int ctl_qp_room(struct client *cl, struct sdr_ctl_resp *r)
{
	struct sdr_hctx *c = cl->ctx;
	struct sdr_inst *in = c->inst;

	if (sdr_g.cfg.quota_qps && cl->q->qps >= sdr_g.cfg.quota_qps) {
		char w[48], wl[64];
		ctl_note(SDR_CTR_ctl_quota_qps, in->cfg.name,
			 "QP_CREATE of %s refused: %u QPs"
			 " (--quota-qps)",
			 ctl_who_log(cl, wl), cl->q->qps);
		return ctl_fail(r, EDQUOT, "%s has %u QPs on this DPU (--quota-qps %u)",
				ctl_who(cl, w), cl->q->qps, sdr_g.cfg.quota_qps);
	}
	if (c->nqps == SDR_MAX_QPS_PER_CTX)
		return ctl_fail(r, ENOSPC, "too many QPs in this context (%d)",
				SDR_MAX_QPS_PER_CTX);
	return 0;
}

int ctl_qp_cc_paths(const struct sdr_ctl_req *q, struct sdr_ctl_resp *r)
{
	if (q->cc > SDR_QP_CC_ON)
		return ctl_fail(r, EINVAL,
				"cc %u out of range (0 = the daemon's --cc, 1 off, 2 on)", q->cc);
	if (q->paths > SDR_PATHS_MAX)
		return ctl_fail(r, EINVAL,
				"paths %u out of range (0 = the daemon's --paths, 1..%u)", q->paths,
				SDR_PATHS_MAX);
	return 0;
}

int ctl_qp_chan(const struct sdr_ctl_req *q, struct sdr_stripe *out, struct sdr_ctl_resp *r)
{
	unsigned w = SDR_CHAN_W(q->chan), ch = SDR_CHAN_C(q->chan);
	uint32_t max_msg, ppc;

	memset(out, 0, sizeof(*out));
	if (!q->chan) {
		if (q->stripe)
			return ctl_fail(r, EINVAL, "stripe %u without chan", q->stripe);
		return 0;
	}
	if (w < 1 || w > SDR_CHANNELS_MAX || ch >= w)
		return ctl_fail(
			r, EINVAL,
			"chan 0x%02x: channel %u of %u (channels 1..%u, channel < channels)",
			q->chan, ch, w, SDR_CHANNELS_MAX);
	sdr_qp_attr_sizes(&q->qp_attr, &max_msg, &ppc);
	out->w = w;
	out->c = ch;
	out->s = (q->stripe ? q->stripe : 1u) * ppc * sdr_g.cfg.mtu;
	return 0;
}

int ctl_qp_add(struct client *cl, const struct sdr_qp_attr_abi *a, const struct sdr_qp_ids *ids,
	       const struct ctl_qp_restore *rst, struct sdr_ctl_resp *r, struct sdr_qp **out)
{
	struct sdr_hctx *c = cl->ctx;
	struct sdr_inst *in = c->inst;
	struct sdr_cmd cmd = {.type = SDR_CMD_ADD_QP};
	struct sdr_qp *qp;
	int err;

	if (SDR_CQ_OVF_FOR(c->nqps + 1) > c->ovf_cap) {
		/* room for this QP's completions too: doubled, handed to the
		 * worker with the QP (it moves what waits) */
		uint32_t n = c->nqps ? 2 * c->nqps : 1;

		if (n > SDR_MAX_QPS_PER_CTX)
			n = SDR_MAX_QPS_PER_CTX;
		cmd.arg = SDR_CQ_OVF_FOR(n);
		cmd.aux = calloc(cmd.arg, sizeof(struct sdr_cqe));
		if (!cmd.aux)
			return ctl_fail(r, ENOMEM, "out of memory");
	}
	err = sdr_qp_setup(&qp, c, a, ids, r->msg, sizeof(r->msg));
	if (!err && rst) {
		/* the host's segment (its bitmaps) instead of a fresh one */
		err = sdr_qp_adopt_seg(qp, rst->seg_fd, r->msg, sizeof(r->msg));
		if (err)
			sdr_qp_teardown(qp);
	}
	if (err) {
		free(cmd.aux);
		r->status = err;
		return err;
	}
	if (rst) {
		qp->send_next = qp->tx_cursor = qp->ack_cursor = rst->send_base;
		qp->rq.next_seq = rst->recv_base;
		qp->restored = 1;
	}
	c->qps[c->nqps++] = qp;
	cl->q->qps++;
	cmd.obj = qp;
	/* (the worker sets up its pacing at the QP's rate_bps) */
	if (sdr_worker_call(qp->worker, &cmd) == 0)
		free(cmd.aux); /* the old FIFO, or NULL */
	atomic_store_explicit(&in->qps[ids->id], qp, memory_order_release);
	sdr_rstate_mark(in, ids->id, 1);

	r->id = ids->id;
	r->seg_size = qp->qseg_size;
	sdr_qp_info_fill(qp, &r->info);
	sdr_rstate_token(in, qp->qpn_base, qp->rkey, qp->ctrl_key, cl->uid, r->token);
	r->horizon_ms = qp->horizon_ms;
	r->ext = SDR_EXT_QP(ids->stripe.w ? SDR_CHAN(ids->stripe.w, ids->stripe.c) : 0,
			    ids->stripe.w ? ids->stripe.s / (qp->ppc * qp->mtu) : 0);
	*out = qp;
	return 0;
}

int ctl_req_qp_create(struct client *cl, const struct sdr_ctl_req *q, struct sdr_ctl_resp *r,
		      int *pass)
{
	struct sdr_hctx *c = cl->ctx;
	const struct sdr_qp_attr_abi *a = &q->qp_attr;
	struct sdr_qp_ids ids;
	struct sdr_qp *qp;

	if (qp_attr_check(a, ATTR_ALL, r) || ctl_qp_cc_paths(q, r))
		return r->status;
	if (ctl_qp_chan(q, &ids.stripe, r))
		return r->status;
	if (ctl_qp_room(cl, r))
		return r->status;
	if (qp_block_pick(c, a, r, &ids.id))
		return r->status;
	ids.rkey = a->want_rkey ? a->want_rkey : (uint32_t)sdr_secret64();
	ids.ctrl_key = sdr_secret64();
	ids.horizon_ms = q->horizon_ms; /* (0 from a 2.0 host: the daemon's) */
	ids.cc = q->cc;                 /* (0 from a 2.0 host: the daemon's --cc) */
	ids.paths = q->paths;           /* (0 from a 2.0 host: the daemon's --paths) */
	if (ctl_qp_add(cl, a, &ids, NULL, r, &qp))
		return r->status;
	*pass = qp->qseg_fd;
	return 0;
}

static struct sdr_qp *own_qp(struct sdr_hctx *c, uint32_t qp_id)
{
	for (unsigned i = 0; i < c->nqps; i++)
		if (c->qps[i]->id == qp_id)
			return c->qps[i];
	return NULL;
}

static int connect_refused(struct sdr_qp *qp, struct sdr_ctl_resp *r, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int connect_refused(struct sdr_qp *qp, struct sdr_ctl_resp *r, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
	va_end(ap);
	r->status = -EINVAL;
	ctl_note(SDR_CTR_ctl_connect_refused, qp->inst->cfg.name,
		 "QP_CONNECT of QP 0x%06x refused: %s", qp->qpn_base, r->msg);
	return -EINVAL;
}

/* The peer a QP is to send to and accept packets from: an sdr-dpu QP on
 * a unicast address, agreeing with ours; never the QP itself. */
static int peer_check(struct sdr_qp *qp, const struct sdr_qp_info *x, struct sdr_ctl_resp *r)
{
	const struct sdr_inst *in = qp->inst;
	static const uint8_t zero_mac[6];
	char ip[16], mac[18];

	sdr_format_ipv4(x->ip, ip);
	sdr_format_mac(x->mac, mac);
	if ((x->ip >> 24) == 0)
		return connect_refused(qp, r, "peer IP %s is not a host address (0.0.0.0/8)", ip);
	if (x->ip == 0xFFFFFFFFu)
		return connect_refused(qp, r, "peer IP %s is the broadcast address", ip);
	if ((x->ip >> 28) == 0xE)
		return connect_refused(qp, r,
				       "peer IP %s is multicast (224.0.0.0/4): RC/UC peers are"
				       " unicast",
				       ip);
	if ((x->ip >> 28) == 0xF)
		return connect_refused(qp, r, "peer IP %s is reserved (240.0.0.0/4)", ip);
	if ((x->ip >> 24) == 127)
		return connect_refused(qp, r,
				       "peer IP %s is loopback (127.0.0.0/8): the DPU's packets"
				       " leave through its port",
				       ip);
	if (!memcmp(x->mac, zero_mac, 6) || (x->mac[0] & 1))
		return connect_refused(qp, r, "peer MAC %s is %s", mac,
				       x->mac[0] & 1 ? "multicast/broadcast" : "zero");
	if (x->generations == 0 || (x->generations & (x->generations - 1)))
		return connect_refused(qp, r, "peer generations %u is not a power of two",
				       x->generations);
	if (x->qpn > SDR_QPN_MASK || x->qpn + x->generations - 1 > SDR_QPN_MASK ||
	    x->qpn % x->generations || x->qpn < SDR_QPN_FIRST)
		return connect_refused(qp, r,
				       "peer QPN 0x%x is not a QPN block base (24 bits, aligned"
				       " to its %u generations, >= 0x%x)",
				       x->qpn, x->generations, SDR_QPN_FIRST);
	if (x->ip == in->ip && x->qpn == qp->qpn_base)
		return connect_refused(qp, r, "peer is this QP itself (IP %s, QPN 0x%x)", ip,
				       x->qpn);
	if (x->mtu != qp->mtu || x->max_msg != qp->max_msg || x->chunk_pkts != qp->ppc ||
	    x->generations != qp->gens || x->reliability != qp->reliability)
		return connect_refused(qp, r,
				       "peer QP disagrees: mtu %u/%u max_msg %u/%u chunk_pkts"
				       " %u/%u gens %u/%u rel %u/%u (ours/peer's)",
				       qp->mtu, x->mtu, qp->max_msg, x->max_msg, qp->ppc,
				       x->chunk_pkts, qp->gens, x->generations, qp->reliability,
				       x->reliability);
	if (qp->info_ec && x->ec != qp->info_ec)
		return connect_refused(qp, r,
				       "peer QP's EC parameters disagree: code %u k %u m %u /"
				       " code %u k %u m %u (ours/peer's)",
				       sdr_ec_param_code(qp->info_ec), sdr_ec_param_k(qp->info_ec),
				       sdr_ec_param_m(qp->info_ec), sdr_ec_param_code(x->ec),
				       sdr_ec_param_k(x->ec), sdr_ec_param_m(x->ec));
	if (!qp->info_ec && x->ec)
		return connect_refused(qp, r,
				       "peer info carries EC parameters 0x%x with reliability %u",
				       x->ec, x->reliability);
	return 0;
}

int ctl_req_qp_connect(struct sdr_hctx *c, const struct sdr_ctl_req *q, struct sdr_ctl_resp *r)
{
	struct sdr_qp *qp = own_qp(c, q->qp_id);
	struct sdr_qp_info remote = q->remote;
	struct sdr_cmd cmd = {.type = SDR_CMD_CONNECT_QP, .remote = &remote};

	if (!qp)
		return ctl_fail(r, ENOENT, "no QP %u in this context", q->qp_id);
	if (qp->state != SDR_QPS_CREATED)
		return ctl_fail(r, EISCONN, "QP %u is already connected", q->qp_id);
	if (peer_check(qp, &remote, r))
		return r->status;
	cmd.obj = qp;
	return sdr_worker_call(qp->worker, &cmd) ? ctl_fail(r, ETIMEDOUT, "worker did not answer")
						 : 0;
}

int ctl_req_qp_set_rate(struct sdr_hctx *c, const struct sdr_ctl_req *q, struct sdr_ctl_resp *r)
{
	struct sdr_qp *qp = own_qp(c, q->qp_id);
	struct sdr_cmd cmd = {.type = SDR_CMD_SET_RATE, .arg = q->qp_attr.rate_bps};

	if (!qp)
		return ctl_fail(r, ENOENT, "no QP %u in this context", q->qp_id);
	if (qp_attr_check(&q->qp_attr, ATTR_RATE, r))
		return r->status;
	cmd.obj = qp;
	return sdr_worker_call(qp->worker, &cmd) ? ctl_fail(r, ETIMEDOUT, "worker did not answer")
						 : 0;
}

/* The tombstone of @p qp, which its worker let go of (docs/reliability.md
 * "Faults: link outages"): its peer's packets are answered with QP-CLOSED,
 * which completes the peer's sends this QP received whole and fails the
 * others with -ECONNRESET. Only a QP that had a peer leaves one. */
static void qp_tombstone(struct sdr_qp *qp, int had_peer, uint8_t why)
{
	struct sdr_tomb_data d = {0};

	if (!qp->inst->tombs || !had_peer)
		return;
	d.qpn_base = qp->qpn_base;
	d.remote_qpn = qp->remote.qpn;
	d.remote_ip = qp->remote.ip;
	d.remote_key = qp->remote.ctrl_key;
	d.made_tsc = rte_get_tsc_cycles();
	d.l2 = qp->l2;
	d.closed.recv_next = qp->rq.next_seq;
	d.closed.reason = why;
	/* receives it completed FULL: their sends are delivered (the SR
	 * core's final entries; a QP without reliability reports none) */
	if (qp->reliability != SDR_REL_NONE)
		sdr_sr_qp_closed_full(qp, &d.closed);
	sdr_tomb_write(&qp->inst->tombs[qp->id], &d);
}

void ctl_qp_destroy(struct sdr_hctx *c, struct sdr_qp *qp, uint8_t why)
{
	/* (a daemon that stops with a state file says nothing: its next
	 * incarnation restores the QP, docs/reliability.md "Restarts") */
	int had_peer = (qp->state == SDR_QPS_CONNECTED || qp->state == SDR_QPS_ERROR) &&
		       !sdr_rstate_stopping(qp->inst);
	/* (the worker sends the peer one QP-CLOSED: arg) */
	struct sdr_cmd cmd = {.type = SDR_CMD_DEL_QP,
			      .obj = qp,
			      .arg = (had_peer ? why : 0) |
				     (sdr_rstate_stopping(qp->inst) ? SDR_DEL_QP_QUIET : 0)};
	unsigned i;

	atomic_store_explicit(&qp->inst->qps[qp->id], NULL, memory_order_release);
	sdr_rstate_mark(qp->inst, qp->id, 0);
	sdr_worker_call(qp->worker, &cmd);
	sdr_worker_quiesce_all(); /* no worker still holds a pointer from a lookup */
	qp_tombstone(qp, had_peer, why);
	for (i = 0; i < c->nqps && c->qps[i] != qp; i++)
		;
	c->qps[i] = c->qps[--c->nqps];
	/* with periodic stats: the QP's last block, its counters final (no
	 * worker touches it any more), which the next period could not show */
	if (sdr_g.cfg.stats_interval) {
		printf("sdr-dpu[%s]: QP 0x%06x closed; its last stats:\n", qp->inst->cfg.name,
		       qp->qpn_base);
		sdr_stats_qp_print(stdout, qp);
		fflush(stdout);
	}
	sdr_qp_stats_fold(&qp->inst->closed, &qp->st);
	sdr_ct_hist_fold(&qp->inst->closed_hist, &qp->ct_hist);
	sdr_qp_teardown(qp);
}

int ctl_req_qp_destroy(struct client *cl, const struct sdr_ctl_req *q, struct sdr_ctl_resp *r)
{
	struct sdr_qp *qp = own_qp(cl->ctx, q->qp_id);
	if (!qp)
		return ctl_fail(r, ENOENT, "no QP %u in this context", q->qp_id);
	ctl_qp_destroy(cl->ctx, qp, SDR_CLOSED_DESTROYED);
	cl->q->qps--;
	return 0;
}
