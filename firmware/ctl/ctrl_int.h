/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Inside the control plane's host socket (layer ctl): what its files share.
 * ctrl.c serves the sessions and dispatches requests to ctrl_res.c (MR
 * registration, quotas) and ctrl_qp.c (QP requests); ctrl_note.c words
 * their refusals. Nothing outside these files includes this.
 */
#ifndef SDR_CTRL_INT_H
#define SDR_CTRL_INT_H

#include <sys/types.h>

#include "sdr_types.h"

#define MAX_CLIENTS (SDR_MAX_INST * SDR_MAX_CTX)

/** What one client (uid or pid, --quota-key) holds on one instance. */
struct quota {
	int used;
	unsigned inst;
	uint32_t key;
	unsigned conns, ctxs, qps;
	uint64_t mr_bytes;
};

struct client {
	int fd;
	struct sdr_inst *in;
	struct sdr_hctx *ctx; /* after HELLO */
	struct quota *q;
	pid_t pid;
	uid_t uid;
	uint64_t hello_by; /* ms: dropped if not attached by then */
	/* A reply the socket could not take (the client does not read): no
	 * further request is read from the client until it is sent, and the
	 * client is dropped if that does not happen by pend_by. */
	int pending;
	int pend_fd; /* descriptor to pass (owned by its ctx/QP) or -1 */
	uint64_t pend_by;
	size_t pend_size; /* bytes of pend to send (a 2.0 client: SDR_CTL_RESP_SIZE_2_0) */
	struct sdr_ctl_resp pend;
};

/* ---- ctrl_note.c: refusals ---- */

/** Monotonic clock in ms. */
uint64_t ctl_now_ms(void);

/** Count a refusal or drop and log it, at most one line per second and
 *  counter (a hostile host must not flood the log); the suppressed lines
 *  are counted in the next one. */
void ctl_note(enum sdr_ctr ctr, const char *inst, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/** Refuse a request: status -@p err, the reason in r->msg. @return -err. */
int ctl_fail(struct sdr_ctl_resp *r, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/** The client as its reply names it ("client uid 1000"), and as the log
 *  does (with the pid in uid mode). */
const char *ctl_who(const struct client *cl, char buf[48]);
const char *ctl_who_log(const struct client *cl, char buf[64]);

/* ---- ctrl_res.c: quotas and memory regions ---- */

/** The quota entry of client @p key on instance @p inst (a free one made
 *  for it when it has none); NULL when the table is full. */
struct quota *ctl_quota_get(unsigned inst, uint32_t key);

/** MR_REG with memfd @p fd: @return 1 when the MR now owns @p fd, else
 *  0 or -errno (the reply says why). */
int ctl_req_mr_reg(struct client *cl, const struct sdr_ctl_req *q, int fd, struct sdr_ctl_resp *r);
int ctl_req_mr_dereg(struct client *cl, const struct sdr_ctl_req *q, struct sdr_ctl_resp *r);

/** Unmap a memory region (nothing when it is not mapped). */
void ctl_mr_unmap(struct sdr_mr_ent *mr);

/* ---- ctrl_qp.c: QP requests ---- */

int ctl_req_qp_create(struct client *cl, const struct sdr_ctl_req *q, struct sdr_ctl_resp *r,
		      int *pass);
int ctl_req_qp_connect(struct sdr_hctx *c, const struct sdr_ctl_req *q, struct sdr_ctl_resp *r);
int ctl_req_qp_set_rate(struct sdr_hctx *c, const struct sdr_ctl_req *q, struct sdr_ctl_resp *r);
int ctl_req_qp_destroy(struct client *cl, const struct sdr_ctl_req *q, struct sdr_ctl_resp *r);

/** QP_CREATE's range check of every attribute. @return 0 or -errno (the
 *  reply says why, counted ctl_attr_range). */
int ctl_qp_attr_check(const struct sdr_qp_attr_abi *a, struct sdr_ctl_resp *r);
/** The cc and paths of a QP_CREATE / QP_RESTORE in range. @return 0 or
 *  -EINVAL (the reply says why). */
int ctl_qp_cc_paths(const struct sdr_ctl_req *q, struct sdr_ctl_resp *r);
/** The stripe map of a QP_CREATE / QP_RESTORE (its chan and stripe, the
 *  attributes @p a already checked) into @p out. @return 0 or the refusal
 *  (in @p r). */
struct sdr_stripe;
int ctl_qp_chan(const struct sdr_ctl_req *q, struct sdr_stripe *out, struct sdr_ctl_resp *r);

/** Room for one more QP of @p cl (its quota, its context's table).
 *  @return 0 or -errno (the reply says why). */
int ctl_qp_room(struct client *cl, struct sdr_ctl_resp *r);

/** What QP_RESTORE adds to a QP it makes (ctrl_restore.c). */
struct ctl_qp_restore {
	int seg_fd;         /* the host's QP segment: adopted on success */
	uint32_t send_base; /* numbering of the sends and receives */
	uint32_t recv_base;
};

/** Make QP @p ids->id of @p cl with checked attributes @p a (after
 *  ctl_qp_room()), hand it to its worker, mark it held (state file) and
 *  fill the reply (id, seg_size, info, token, horizon). With @p rst, it is
 *  the restore of a QP: the host's segment, its numbering. @return 0 and
 *  the QP in *out, or -errno (the reply says why; rst->seg_fd not taken). */
struct sdr_qp_ids;
int ctl_qp_add(struct client *cl, const struct sdr_qp_attr_abi *a, const struct sdr_qp_ids *ids,
	       const struct ctl_qp_restore *rst, struct sdr_ctl_resp *r, struct sdr_qp **out);

/* ---- ctrl_restore.c: QP_RESTORE ---- */

/** QP_RESTORE with the QP segment fd @p fd: @return 1 when the QP now
 *  owns @p fd, else 0 or -errno (the reply says why). */
int ctl_req_qp_restore(struct client *cl, const struct sdr_ctl_req *q, int fd,
		       struct sdr_ctl_resp *r);

/** Take QP @p qp of context @p c off its worker and apart. */
void ctl_qp_destroy(struct sdr_hctx *c, struct sdr_qp *qp, uint8_t why);

#endif /* SDR_CTRL_INT_H */
