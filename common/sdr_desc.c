/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <stddef.h>

#include "sdr_hostdesc.h"

static int reserved_zero(const struct sdr_sqe *d)
{
	for (size_t i = 0; i < sizeof(d->reserved); i++)
		if (d->reserved[i])
			return 0;
	return 1;
}

static int check_mr(const struct sdr_sqe *d, struct sdr_mr_ent *mrs, uint32_t nmrs,
		    struct sdr_mr_ent **mr_out, enum sdr_ctr *ctr)
{
	struct sdr_mr_ent *mr;

	if (d->mr_id >= nmrs)
		goto unknown;
	mr = &mrs[d->mr_id];
	if (!atomic_load_explicit(&mr->valid, memory_order_acquire))
		goto unknown;
	/* overflow-safe: offset <= len and length <= len - offset */
	if (d->offset > mr->len || d->length > mr->len - d->offset) {
		*ctr = SDR_CTR_sqe_bad_range;
		return -ERANGE;
	}
	*mr_out = mr;
	return 0;
unknown:
	*ctr = SDR_CTR_sqe_bad_mr;
	return -ENOENT;
}

int sdr_sqe_check(const struct sdr_sqe *d, const struct sdr_qp_limits *qp,
		  struct sdr_mr_ent *mrs, uint32_t nmrs, struct sdr_mr_ent **mr_out,
		  enum sdr_ctr *ctr)
{
	*mr_out = NULL;
	if (d->flags || !reserved_zero(d) || d->opcode < SDR_SQ_SEND || d->opcode > SDR_SQ_STREAM_END) {
		*ctr = SDR_CTR_sqe_bad;
		return -EINVAL;
	}
	if (!qp) {
		*ctr = SDR_CTR_sqe_bad_qp;
		return -EBADF;
	}
	switch (d->opcode) {
	case SDR_SQ_RECV_COMPLETE:
	case SDR_SQ_STREAM_END:
		return 0;
	case SDR_SQ_STREAM_START:
		if (d->length == 0 || d->length > qp->max_msg) {
			*ctr = SDR_CTR_sqe_bad_len;
			return -EMSGSIZE;
		}
		break;
	case SDR_SQ_STREAM_DATA:
		if (d->length == 0 || d->msg_offset % qp->mtu || d->msg_offset >= qp->max_msg ||
		    d->length > qp->max_msg - d->msg_offset) {
			*ctr = SDR_CTR_sqe_bad;
			return -EINVAL;
		}
		return check_mr(d, mrs, nmrs, mr_out, ctr);
	case SDR_SQ_SEND:
	case SDR_SQ_RECV:
		if (d->length == 0 || d->length > qp->max_msg) {
			*ctr = SDR_CTR_sqe_bad_len;
			return -EMSGSIZE;
		}
		break;
	}
	if (!qp->connected) {
		*ctr = SDR_CTR_sqe_not_conn;
		return -ENOTCONN;
	}
	if (d->opcode == SDR_SQ_STREAM_START)
		return 0;
	return check_mr(d, mrs, nmrs, mr_out, ctr);
}
