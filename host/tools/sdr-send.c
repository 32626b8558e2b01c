/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-send: send pattern messages (or a file) through libsdr.
 * main() sets up (daemon, QP, peer exchange); run() drives the tools' loop
 * (sdr_loop.c) with the send side of it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sdr.h"
#include "sdr_diag.h"
#include "sdr_pattern.h"
#include "sdr_tool.h"

static struct tool_opts opt = {.is_sender = 1};

/* post-to-completion time and size of every successful send */
struct send_lat {
	double *lat;
	uint64_t *lsz, n;
};

static int send_one(struct tool_loop *l, struct tool_slot *s, uint64_t idx, uint8_t *p)
{
	uint64_t sz = tool_plan_size(l->plan, idx);
	struct sdr_send_wr wr = {.mr = l->mr,
				 .addr = p,
				 .length = (uint32_t)sz,
				 .imm = tool_plan_imm(l->plan, idx),
				 .wr_id = idx};
	int rc;

	if (l->fd >= 0) {
		ssize_t r = pread(l->fd, p, sz, (off_t)(idx * l->plan->sizes[0]));

		if (r != (ssize_t)sz) {
			fprintf(stderr, "read %s: short read\n", opt.file);
			return -1;
		}
	} else {
		sdr_pattern_fill(p, sz, l->plan->seed, idx);
	}
	rc = sdr_send_post(l->qp, &wr, &s->sh);
	if (rc == -EAGAIN)
		return rc;
	if (rc) {
		fprintf(stderr, "sdr_send_post(msg %" PRIu64 "): %s (%s)\n", idx, sdr_strerror(rc),
			sdr_last_error(l->ctx));
		return -1;
	}
	s->t_post = app_now();
	return 0;
}

static int send_done(struct tool_loop *l, struct tool_slot *s, const struct sdr_wc *wc, double t,
		     double dt)
{
	struct send_lat *sl = l->priv;
	uint64_t idx = s->idx, sz = tool_plan_size(l->plan, idx);

	if (wc->status == 0) {
		sl->lat[sl->n] = t - s->t_post;
		sl->lsz[sl->n++] = sz;
	}
	if (opt.quiet)
		return wc->status == 0;
	if (opt.json)
		printf("{\"msg\":%" PRIu64 ",\"size\":%" PRIu64 ",\"status\":\"%s\","
		       "\"error\":%d,\"t_ms\":%.3f,\"gbps\":%.3f,\"ct_ms\":%.3f,"
		       "\"t_mono_s\":%.6f}\n",
		       idx, sz, wc->status ? "error" : "sent", wc->status, (t - l->t0) * 1e3,
		       (double)sz * 8 / dt / 1e9, (t - s->t_post) * 1e3, t);
	else
		printf("msg %" PRIu64 " size %" PRIu64 " %s%s%s time %.3f ms %.3f Gbit/s"
		       " completion %.3f ms\n",
		       idx, sz, wc->status ? "error (" : "sent",
		       wc->status ? sdr_strerror(wc->status) : "", wc->status ? ")" : "",
		       (t - l->t0) * 1e3, (double)sz * 8 / dt / 1e9, (t - s->t_post) * 1e3);
	return wc->status == 0;
}

static void send_pending(struct tool_loop *l, struct tool_slot *s)
{
	(void)l;
	fprintf(stderr, "msg %" PRIu64 " still pending\n", s->idx);
}

static const struct tool_loop_ops send_ops = {
	.header = "# msg INDEX size BYTES STATUS time MS_SINCE_FIRST_POST GBIT/S_SINCE_PREVIOUS"
		  " completion MS_FROM_POST_TO_COMPLETION",
	.opcode = SDR_SQ_SEND,
	.post = send_one,
	.complete = send_done,
	.pending = send_pending,
};

static int run(struct sdr_ctx *ctx, struct sdr_qp *qp, const struct tool_plan *plan, int file_fd,
	       struct tool_result *res)
{
	uint64_t total = tool_plan_messages(plan);
	struct send_lat sl = {malloc((total ? total : 1) * sizeof(double)),
			      malloc((total ? total : 1) * sizeof(uint64_t)), 0};
	struct tool_loop l = {.opt = &opt,
			      .ops = &send_ops,
			      .ctx = ctx,
			      .qp = qp,
			      .plan = plan,
			      .fd = file_fd,
			      .priv = &sl};

	int rc = -1;

	if (sl.lat == NULL || sl.lsz == NULL) {
		fprintf(stderr, "cannot allocate %" PRIu64 " bytes of buffers: %s\n",
			opt.window * tool_plan_max_size(plan), strerror(errno));
	} else if (tool_loop_run(&l, res) == 0) {
		app_latency_report("send", sl.lat, sl.lsz, sl.n, opt.json);
		rc = 0;
	}
	free(sl.lat);
	free(sl.lsz);
	return rc;
}

/* Everything between attaching and detaching: the exit status of main. The
 * socket it opens is left in *sock for main to close. */
static int session(struct sdr_ctx *ctx, struct tool_plan *plan, int file_fd, uint64_t file_size,
		   int *sock)
{
	struct tool_result res = {0}, peer_res;
	struct sdr_qp_attr attr = {0};
	struct sdr_scheme sch;
	struct sdr_qp_info local[SDR_CHANNELS_MAX], remote[SDR_CHANNELS_MAX];
	unsigned nch = opt.channels ? opt.channels : 1;
	struct sdr_qp *qp;
	int ok;

	attr.max_msg = opt.file ? opt.max_msg : plan->max_msg;
	attr.chunk_pkts = opt.chunk_pkts;
	sch = sdr_scheme_of(opt.rel, opt.ec);
	attr.reliability = sch.rel;
	if (sch.rel == SDR_REL_EC) {
		attr.ec_code = sch.code;
		attr.ec_k = (uint8_t)sch.k;
		attr.ec_m = (uint8_t)sch.m;
	}
	attr.rate_bps = opt.rate_bps;
	attr.want_qpn = opt.local_qpn;
	attr.want_rkey = opt.local_rkey;
	qp = tool_qp_create(ctx, &opt, &attr);
	if (qp == NULL)
		return 1;
	sdr_qp_infos_get(qp, local, nch);
	if (opt.file && tool_plan_from_opts(&opt, plan, file_size, local[0].max_msg))
		return 2;
	for (unsigned c = 0; c < nch; c++)
		if (tool_publish_qp(&opt, &local[c]))
			return 1;
	if (opt.connect) {
		*sock = tool_tcp_connect(&opt);
		if (*sock < 0 || tool_send_infos(*sock, local, nch) ||
		    tool_send_plan(*sock, plan) || tool_recv_infos(*sock, remote, nch)) {
			fprintf(stderr, "QP info exchange with %s failed\n", opt.connect);
			return 1;
		}
	} else if (opt.peer) {
		if (tool_peer_from_opts(&opt, &remote[0]))
			return 1;
	} else {
		return 0; /* only --print-qp / --qp-file */
	}
	if (tool_qp_connect(ctx, qp, remote, nch))
		return 1;
	if (run(ctx, qp, plan, file_fd, &res))
		return 1;
	ok = res.failed == 0 && res.unexpected == 0;
	double secs = res.elapsed_ns ? (double)res.elapsed_ns * 1e-9 : 1e-9;
	if (opt.json)
		printf("{\"summary\":\"send\",\"ok\":%" PRIu64 ",\"failed\":%" PRIu64
		       ",\"bytes\":%" PRIu64 ",\"elapsed_s\":%.6f,\"gbps\":%.3f,"
		       "\"unexpected\":%" PRIu64 ",\"t0_mono_s\":%.6f}\n",
		       res.ok, res.failed, res.bytes, secs, (double)res.bytes * 8 / secs / 1e9,
		       res.unexpected, res.t0);
	else
		printf("sent: %" PRIu64 " ok, %" PRIu64 " failed, %" PRIu64
		       " bytes in %.3f s, %.3f Gbit/s (payload, local completion)\n",
		       res.ok, res.failed, res.bytes, secs, (double)res.bytes * 8 / secs / 1e9);
	if (*sock >= 0) {
		if (tool_recv_result(*sock, &peer_res)) {
			fprintf(stderr, "no result from the receiver\n");
			ok = 0;
		} else {
			double ps = peer_res.elapsed_ns ? (double)peer_res.elapsed_ns * 1e-9 : 1e-9;

			if (opt.json)
				printf("{\"summary\":\"recv\",\"from\":\"peer\",\"ok\":%" PRIu64
				       ",\"failed\":%" PRIu64 ",\"bytes\":%" PRIu64
				       ",\"elapsed_s\":%.6f,\"goodput_gbps\":%.3f}\n",
				       peer_res.ok, peer_res.failed, peer_res.bytes, ps,
				       (double)peer_res.bytes * 8 / ps / 1e9);
			else
				printf("receiver: %" PRIu64 " ok, %" PRIu64 " failed, %" PRIu64
				       " bytes, goodput %.3f Gbit/s\n",
				       peer_res.ok, peer_res.failed, peer_res.bytes,
				       (double)peer_res.bytes * 8 / ps / 1e9);
			if (peer_res.failed || peer_res.ok != tool_plan_messages(plan))
				ok = 0;
			if (peer_res.failed && sch.rel == SDR_REL_NONE)
				fprintf(stderr,
					"sdr-send: the receiver did not get %" PRIu64
					" message(s) whole: %s\n",
					peer_res.failed, sdr_diag_no_rel_hint);
		}
	}
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct tool_plan plan;
	struct sdr_ctx *ctx;
	uint64_t file_size = 0;
	int file_fd = -1, sock = -1, rc;

	/* per-message lines are progress: line-buffer them into pipes/logs too */
	setvbuf(stdout, NULL, _IOLBF, 0);

	tool_parse(&opt, argc, argv);
	if (opt.file) {
		struct stat sb;

		file_fd = open(opt.file, O_RDONLY | O_CLOEXEC);
		if (file_fd < 0 || fstat(file_fd, &sb) < 0 || sb.st_size == 0) {
			fprintf(stderr, "%s: %s\n", opt.file,
				file_fd < 0 ? strerror(errno) : "empty");
			if (file_fd >= 0)
				close(file_fd);
			return 2;
		}
		file_size = (uint64_t)sb.st_size;
	} else if (tool_plan_from_opts(&opt, &plan, 0, 0)) {
		return 2;
	}
	ctx = sdr_ctx_open(opt.dpu, NULL);
	if (ctx == NULL) {
		fprintf(stderr, "cannot attach to %s: %s (%s)\n", opt.dpu, strerror(errno),
			sdr_last_error(NULL));
		if (file_fd >= 0)
			close(file_fd);
		return 1;
	}
	rc = session(ctx, &plan, file_fd, file_size, &sock);
	if (sock >= 0)
		close(sock);
	sdr_ctx_close(ctx);
	if (file_fd >= 0)
		close(file_fd);
	return rc;
}
