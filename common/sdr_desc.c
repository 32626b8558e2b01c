/* SPDX-License-Identifier: BSD-3-Clause */
/* Submission descriptor validation, shared by libsdr and sdr-dpu (sdr_desc.h). */
#include <errno.h>
#include <stddef.h>

#include "sdr_desc.h"

static int reserved_zero(const struct sdr_sqe *d)
{
	for (size_t i = 0; i < sizeof(d->reserved); i++)
		if (d->reserved[i])
			return 0;
	return 1;
}

static int refuse(enum sdr_desc_why *why, enum sdr_desc_why w, int rc)
{
	*why = w;
	return rc;
}

static int check_mr(const struct sdr_sqe *d, const struct sdr_desc_qp *qp, const uint64_t *mr_len,
		    enum sdr_desc_why *why)
{
	/* a channel's message: the real bytes its virtual ones stand for */
	uint64_t len = sdr_stripe_extent(&qp->stripe, d->length);

	if (mr_len == NULL)
		return refuse(why, SDR_DESC_BAD_MR, -ENOENT);
	/* overflow-safe: offset <= len and length <= len - offset */
	if (d->offset > *mr_len || len > *mr_len - d->offset)
		return refuse(why, SDR_DESC_BAD_RANGE, -ERANGE);
	return 0;
}

int sdr_desc_check(const struct sdr_sqe *d, const struct sdr_desc_qp *qp, const uint64_t *mr_len,
		   enum sdr_desc_why *why)
{
	*why = SDR_DESC_OK;
	if (d->flags || !reserved_zero(d) || d->opcode < SDR_SQ_SEND ||
	    d->opcode > SDR_SQ_STREAM_END)
		return refuse(why, SDR_DESC_BAD, -EINVAL);
	if (!qp)
		return refuse(why, SDR_DESC_BAD_QP, -EBADF);
	switch (d->opcode) {
	case SDR_SQ_RECV_COMPLETE:
	case SDR_SQ_STREAM_END: return 0;
	case SDR_SQ_STREAM_START:
		if (qp->stripe.w > 1) /* (a channel: streams are not striped) */
			return refuse(why, SDR_DESC_BAD, -EINVAL);
		if (d->length == 0 || d->length > qp->max_msg)
			return refuse(why, SDR_DESC_BAD_LEN, -EMSGSIZE);
		break;
	case SDR_SQ_STREAM_DATA:
		if (qp->stripe.w > 1 || d->length == 0 || d->msg_offset % qp->mtu ||
		    d->msg_offset >= qp->max_msg || d->length > qp->max_msg - d->msg_offset)
			return refuse(why, SDR_DESC_BAD, -EINVAL);
		return check_mr(d, qp, mr_len, why);
	case SDR_SQ_SEND:
	case SDR_SQ_RECV:
		if (d->length == 0 || d->length > qp->max_msg)
			return refuse(why, SDR_DESC_BAD_LEN, -EMSGSIZE);
		break;
	}
	if (!qp->connected)
		return refuse(why, SDR_DESC_NOT_CONN, -ENOTCONN);
	if (d->opcode == SDR_SQ_STREAM_START)
		return 0;
	return check_mr(d, qp, mr_len, why);
}

const char *sdr_desc_why_str(enum sdr_desc_why why)
{
	switch (why) {
	case SDR_DESC_OK: return "ok";
	case SDR_DESC_BAD: return "bad opcode, flags, reserved bytes or stream offsets";
	case SDR_DESC_BAD_QP: return "no such QP";
	case SDR_DESC_BAD_MR: return "MR deregistered or unknown";
	case SDR_DESC_BAD_RANGE: return "offset + length outside the MR";
	case SDR_DESC_BAD_LEN: return "length 0 or above max_msg";
	case SDR_DESC_NOT_CONN: return "QP not connected";
	}
	return "?";
}
