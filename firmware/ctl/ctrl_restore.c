/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * QP_RESTORE of the host socket (layer ctl; ctrl_int.h): a host whose daemon
 * restarted re-creates each of its QPs with the same identity (QPN, R_Key,
 * control key) from what it kept: the QP's info, its restore token, its
 * segment and its numbering. Every check of docs/security.md "Restoring a
 * QP" is here; the QP itself is made by ctrl_qp.c's ctl_qp_add().
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ctrl_int.h"
#include "qp_setup.h"
#include "restore_state.h"
#include "sdr_inst.h"

static int restore_refused(struct client *cl, struct sdr_ctl_resp *r, int err, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int restore_refused(struct client *cl, struct sdr_ctl_resp *r, int err, const char *fmt, ...)
{
	char wl[64];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
	va_end(ap);
	r->status = -err;
	ctl_note(SDR_CTR_ctl_restore_refused, cl->in->cfg.name, "QP_RESTORE of %s refused: %s",
		 ctl_who_log(cl, wl), r->msg);
	return -err;
}

/* constant time: how much of a token matches tells nothing */
static int token_eq(const uint8_t *a, const uint8_t *b)
{
	uint8_t d = 0;

	for (unsigned i = 0; i < SDR_RESTORE_TOKEN_LEN; i++)
		d |= a[i] ^ b[i];
	return d == 0;
}

/* The QP's identity as the host kept it against this daemon's: address,
 * sizes, scheme (EADDRNOTAVAIL names the first that differs). */
static int identity_check(struct client *cl, const struct sdr_ctl_req *q, struct sdr_ctl_resp *r)
{
	const struct sdr_qp_info *L = &q->restore.local;
	const struct sdr_qp_attr_abi *a = &q->qp_attr;
	struct sdr_inst *in = cl->in;
	uint32_t max_msg, ppc;
	char x[16], y[16];

	if (L->ip != in->ip) {
		sdr_format_ipv4(L->ip, x);
		sdr_format_ipv4(in->ip, y);
		return restore_refused(cl, r, EADDRNOTAVAIL,
				       "the QP was on IP %s, this daemon is %s", x, y);
	}
	if (memcmp(L->mac, in->mac, 6))
		return restore_refused(cl, r, EADDRNOTAVAIL,
				       "the QP was on another MAC than this daemon's");
	if (L->mtu != sdr_g.cfg.mtu || L->generations != sdr_g.cfg.generations)
		return restore_refused(cl, r, EADDRNOTAVAIL,
				       "mtu %u / generations %u of the QP, %u / %u of this daemon",
				       L->mtu, L->generations, sdr_g.cfg.mtu,
				       sdr_g.cfg.generations);
	sdr_qp_attr_sizes(a, &max_msg, &ppc);
	if (max_msg != L->max_msg || ppc != L->chunk_pkts || a->reliability != L->reliability ||
	    (a->reliability == SDR_REL_EC ? sdr_ec_param_pack(a->ec_code, a->ec_k, a->ec_m) : 0) !=
		    L->ec)
		return restore_refused(cl, r, EADDRNOTAVAIL,
				       "attributes (max_msg %u chunk_pkts %u rel %u) differ from"
				       " the QP's info (max_msg %u chunk_pkts %u rel %u ec 0x%x)",
				       max_msg, ppc, a->reliability, L->max_msg, L->chunk_pkts,
				       L->reliability, L->ec);
	return 0;
}

int ctl_req_qp_restore(struct client *cl, const struct sdr_ctl_req *q, int fd,
		       struct sdr_ctl_resp *r)
{
	const struct sdr_qp_restore_abi *R = &q->restore;
	const struct sdr_qp_info *L = &R->local;
	struct sdr_inst *in = cl->in;
	uint32_t gens = sdr_g.cfg.generations, id;
	struct ctl_qp_restore rst = {
		.seg_fd = fd, .send_base = R->send_base, .recv_base = R->recv_base};
	struct sdr_qp_ids ids;
	uint8_t tok[SDR_RESTORE_TOKEN_LEN];
	struct sdr_qp *qp;
	char wl[64];

	if (!sdr_rstate_enabled(in))
		return restore_refused(cl, r, EOPNOTSUPP,
				       "this daemon keeps no state (--state-dir none):"
				       " nothing to restore");
	/* the token first: who is not the creator learns nothing more */
	sdr_rstate_token(in, L->qpn, L->rkey, L->ctrl_key, cl->uid, tok);
	if (!token_eq(tok, R->token))
		return restore_refused(cl, r, EPERM,
				       "restore token does not match (QP 0x%x, its keys, or"
				       " another uid than its creator's)",
				       L->qpn);
	if (L->qpn < in->qpn_first || (L->qpn - in->qpn_first) % gens ||
	    (L->qpn - in->qpn_first) / gens >= SDR_MAX_QPS)
		return restore_refused(cl, r, EADDRNOTAVAIL,
				       "QPN 0x%x is not a block of this daemon's QPN range"
				       " (0x%x + k*%u)",
				       L->qpn, in->qpn_first, gens);
	id = (L->qpn - in->qpn_first) / gens;
	if (atomic_load(&in->qps[id]))
		return restore_refused(cl, r, EADDRINUSE, "QPN 0x%x (block %u) is in use", L->qpn,
				       id);
	if (identity_check(cl, q, r))
		return r->status;
	if (ctl_qp_attr_check(&q->qp_attr, r) || ctl_qp_cc_paths(q, r) ||
	    ctl_qp_chan(q, &ids.stripe, r) || ctl_qp_room(cl, r)) {
		sdr_g.ctl_ctr[SDR_CTR_ctl_restore_refused]++;
		return r->status;
	}
	ids.id = id;
	ids.rkey = L->rkey;
	ids.ctrl_key = L->ctrl_key;
	ids.horizon_ms = q->horizon_ms;
	ids.cc = q->cc;
	ids.paths = q->paths;
	if (ctl_qp_add(cl, &q->qp_attr, &ids, &rst, r, &qp)) {
		char why[sizeof(r->msg)];

		snprintf(why, sizeof(why), "%s", r->msg);
		return restore_refused(cl, r, -r->status, "%s", why);
	}
	if (R->connected) {
		struct sdr_ctl_req c = {.qp_id = id, .remote = q->remote};

		if (ctl_req_qp_connect(cl->ctx, &c, r)) {
			char why[sizeof(r->msg)];
			int err = -r->status;

			/* the QP goes again; the host keeps its segment */
			snprintf(why, sizeof(why), "%s", r->msg);
			qp->qseg_fd = -1;
			ctl_qp_destroy(cl->ctx, qp, SDR_CLOSED_DESTROYED);
			cl->q->qps--;
			memset(r, 0, sizeof(*r));
			r->type = SDR_CTL_QP_RESTORE;
			restore_refused(cl, r, err, "connect: %s", why);
			return 0; /* the host's fd: closed by the caller */
		}
	}
	sdr_g.ctl_ctr[SDR_CTR_ctl_restore_ok]++;
	printf("sdr-dpu[%s]: QP 0x%06x restored for %s (sends from %u, receives from %u%s)\n",
	       in->cfg.name, qp->qpn_base, ctl_who_log(cl, wl), R->send_base, R->recv_base,
	       R->connected ? ", connected" : "");
	return 1;
}
