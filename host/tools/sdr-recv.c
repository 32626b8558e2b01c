/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-recv: receive messages through libsdr, verify them against the
 * pattern (or write them to a file), report bitmaps.
 * main() sets up (daemon, peer exchange, QP); run() drives the tools' loop
 * (sdr_loop.c) with the receive side of it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sdr.h"
#include "sdr_diag.h"
#include "sdr_wire.h"
#include "sdr_pattern.h"
#include "sdr_tool.h"

static struct tool_opts opt = {.is_sender = 0};

#define RECV_GUARD 0xA5 /* --guard: the byte of a slot past its message */

static void report(uint64_t idx, uint64_t sz, const char *status, const char *why, int chunks,
		   size_t nchunks, double t0, double t_ms, double gbps)
{
	if (opt.quiet)
		return;
	if (opt.json)
		printf("{\"msg\":%" PRIu64 ",\"size\":%" PRIu64 ",\"status\":\"%s\","
		       "\"reason\":\"%s\",\"chunks\":%d,\"chunks_total\":%zu,"
		       "\"t_ms\":%.3f,\"gbps\":%.3f,\"t_mono_s\":%.6f}\n",
		       idx, sz, status, why, chunks, nchunks, t_ms, gbps, t0 + t_ms / 1e3);
	else
		printf("msg %" PRIu64 " size %" PRIu64 " %s%s%s%s chunks %d/%zu time %.3f ms"
		       " %.3f Gbit/s\n",
		       idx, sz, status, why[0] ? " (" : "", why, why[0] ? ")" : "", chunks, nchunks,
		       t_ms, gbps);
}

/* Why message s->idx (@p sz bytes, completion @p wc) is not delivered, or ""
 * (verified against the pattern, or written to --out). */
static void recv_verdict(struct tool_loop *l, const struct tool_slot *s, const struct sdr_wc *wc,
			 uint64_t sz, char *why, size_t whysz)
{
	uint64_t idx = s->idx;
	const uint8_t *p = l->buf + (idx % opt.window) * l->maxsz;

	if (wc->status) {
		snprintf(why, whysz, "%s", sdr_strerror(wc->status));
	} else if (wc->flags & SDR_CQE_F_PARTIAL) {
		snprintf(why, whysz, "bitmap not full");
	} else if (wc->flags & SDR_CQE_F_IMM_PARTIAL) {
		snprintf(why, whysz, "immediate incomplete");
	} else if (wc->length != sz) {
		snprintf(why, whysz, "length %u, expected %" PRIu64, wc->length, sz);
	} else if (!(wc->flags & SDR_CQE_F_IMM)) {
		/* a full receive has every nibble of the immediate */
		snprintf(why, whysz, "no immediate");
	} else if (wc->imm != tool_plan_imm(l->plan, idx)) {
		snprintf(why, whysz, "immediate 0x%x, expected 0x%x", wc->imm,
			 tool_plan_imm(l->plan, idx));
	} else if (l->fd >= 0) {
		if (pwrite(l->fd, p, sz, (off_t)(idx * l->plan->sizes[0])) != (ssize_t)sz)
			snprintf(why, whysz, "write: %s", strerror(errno));
	} else {
		size_t bad = sdr_pattern_check(p, sz, l->plan->seed, idx);

		if (bad < sz)
			snprintf(why, whysz, "data mismatch at byte %zu", bad);
	}
	if (opt.guard && why[0] == '\0')
		for (uint64_t i = sz; i < l->maxsz; i++)
			if (p[i] != RECV_GUARD) {
				snprintf(why, whysz,
					 "guard byte %" PRIu64 " past the message written", i - sz);
				break;
			}
}

static unsigned partial_seen; /* receives that ended with part of their chunks */
static char peer_ip[16];      /* the sender's DPU */

static int recv_one(struct tool_loop *l, struct tool_slot *s, uint64_t idx, uint8_t *p)
{
	struct sdr_recv_wr wr = {.mr = l->mr,
				 .addr = p,
				 .length = (uint32_t)tool_plan_size(l->plan, idx),
				 .wr_id = idx};
	int rc;

	if (opt.guard) /* the slot past the message: nothing may write there */
		memset(p + wr.length, RECV_GUARD, l->maxsz - wr.length);
	rc = sdr_recv_post(l->qp, &wr, &s->rh);

	if (!rc)
		s->t_post = app_now();
	if (rc && rc != -EAGAIN) {
		fprintf(stderr, "sdr_recv_post(msg %" PRIu64 "): %s (%s)\n", idx, sdr_strerror(rc),
			sdr_last_error(l->ctx));
		return -1;
	}
	return rc;
}

static int recv_done(struct tool_loop *l, struct tool_slot *s, const struct sdr_wc *wc, double t,
		     double dt)
{
	uint64_t sz = tool_plan_size(l->plan, s->idx);
	const uint64_t *bm;
	size_t nch = 0;
	int chunks, good;
	char why[96] = "";

	sdr_recv_bitmap_get(s->rh, &bm, &nch);
	chunks = sdr_recv_chunks_done(s->rh);
	recv_verdict(l, s, wc, sz, why, sizeof(why));
	good = why[0] == '\0';
	if (!good && chunks)
		partial_seen++;
	report(s->idx, sz,
	       good ? "complete"
	       : (wc->status == 0 && (wc->flags & (SDR_CQE_F_PARTIAL | SDR_CQE_F_IMM_PARTIAL)))
		       ? "partial"
		       : "error",
	       why, chunks, nch, l->t0, (t - l->t0) * 1e3, (double)sz * 8 / dt / 1e9);
	return good;
}

/* give up: show what the bitmaps say about the pending messages */
static void recv_pending(struct tool_loop *l, struct tool_slot *s)
{
	const uint64_t *bm;
	size_t nch = 0;

	struct sdr_diag_recv d = {.seq = (uint32_t)s->idx, .last_pkt_ago = -1};
	char line[512];

	sdr_recv_bitmap_get(s->rh, &bm, &nch);
	report(s->idx, tool_plan_size(l->plan, s->idx), "incomplete", "timeout",
	       sdr_recv_chunks_done(s->rh), nch, l->t0, (app_now() - l->t0) * 1e3, 0);
	d.posted_ago = app_now() - s->t_post;
	d.chunks_got = (uint32_t)sdr_recv_chunks_done(s->rh);
	d.chunks = (uint32_t)nch;
	d.chunk_bm = bm;
	d.peer = peer_ip;
	sdr_diag_recv_text(line, sizeof(line), &d);
	fprintf(stderr, "  %s\n", line);
	if (d.chunks_got)
		partial_seen++;
}

static const struct tool_loop_ops recv_ops = {
	.header = "# msg INDEX size BYTES STATUS chunks SET/TOTAL time MS_SINCE_FIRST_POST"
		  " GBIT/S_SINCE_PREVIOUS",
	.opcode = SDR_SQ_RECV,
	.post = recv_one,
	.complete = recv_done,
	.pending = recv_pending,
};

static int run(struct sdr_ctx *ctx, struct sdr_qp *qp, const struct tool_plan *plan, int out_fd,
	       struct tool_result *res)
{
	struct tool_loop l = {
		.opt = &opt, .ops = &recv_ops, .ctx = ctx, .qp = qp, .plan = plan, .fd = out_fd};

	return tool_loop_run(&l, res);
}

/* Everything between attaching and detaching: the exit status of main. The
 * descriptors it opens are left in *sock and *out_fd for main to close. */
static int session(struct sdr_ctx *ctx, int *sock, int *out_fd)
{
	struct tool_plan plan;
	struct tool_result res = {0};
	struct sdr_qp_attr attr = {0};
	struct sdr_scheme sch;
	struct sdr_qp_info local[SDR_CHANNELS_MAX], remote[SDR_CHANNELS_MAX];
	unsigned nch = opt.channels ? opt.channels : 1;
	struct sdr_qp *qp;

	if (opt.server) {
		*sock = tool_tcp_listen_accept(&opt);
		if (*sock < 0 || tool_recv_infos(*sock, remote, nch) ||
		    tool_recv_plan(*sock, &plan)) {
			fprintf(stderr, "bootstrap: bad or missing QP info / plan from sdr-send\n");
			return 1;
		}
		if (plan.file_mode && !opt.out) {
			fprintf(stderr, "the sender sends a file: give --out F\n");
			return 1;
		}
		if (!plan.file_mode && opt.out) {
			fprintf(stderr, "--out given but the sender sends pattern messages\n");
			return 1;
		}
	} else {
		uint32_t msg = opt.max_msg;

		if (opt.out && msg == 0) {
			fprintf(stderr, "--out without TCP needs the sender's --max-msg\n");
			return 2;
		}
		if (tool_plan_from_opts(&opt, &plan, opt.out ? opt.file_size : 0, msg))
			return 2;
	}
	if (opt.out) {
		*out_fd = open(opt.out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (*out_fd < 0 || ftruncate(*out_fd, (off_t)plan.file_size) < 0) {
			fprintf(stderr, "%s: %s\n", opt.out, strerror(errno));
			return 1;
		}
	}
	attr.max_msg = plan.max_msg;
	attr.chunk_pkts = opt.chunk_pkts ? opt.chunk_pkts : plan.chunk_pkts;
	sch = sdr_scheme_of(plan.rel, plan.ec);
	attr.reliability = sch.rel;
	if (sch.rel == SDR_REL_EC) {
		attr.ec_code = sch.code;
		attr.ec_k = (uint8_t)sch.k;
		attr.ec_m = (uint8_t)sch.m;
	}
	attr.want_qpn = opt.local_qpn;
	attr.want_rkey = opt.local_rkey;
	qp = tool_qp_create(ctx, &opt, &attr);
	if (qp == NULL)
		return 1;
	sdr_qp_infos_get(qp, local, nch);
	for (unsigned c = 0; c < nch; c++)
		if (tool_publish_qp(&opt, &local[c]))
			return 1;
	if (*sock >= 0) {
		if (tool_send_infos(*sock, local, nch)) {
			fprintf(stderr, "bootstrap: cannot send our QP info\n");
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
	sdr_format_ipv4(remote[0].ip, peer_ip);
	if (run(ctx, qp, &plan, *out_fd, &res))
		return 1;
	double secs = res.elapsed_ns ? (double)res.elapsed_ns * 1e-9 : 1e-9;
	if (opt.json)
		printf("{\"summary\":\"recv\",\"ok\":%" PRIu64 ",\"failed\":%" PRIu64
		       ",\"bytes\":%" PRIu64 ",\"elapsed_s\":%.6f,\"goodput_gbps\":%.3f,"
		       "\"unexpected\":%" PRIu64 ",\"t0_mono_s\":%.6f}\n",
		       res.ok, res.failed, res.bytes, secs, (double)res.bytes * 8 / secs / 1e9,
		       res.unexpected, res.t0);
	else
		printf("received: %" PRIu64 " ok, %" PRIu64 " failed, %" PRIu64 " bytes in %.3f s,"
		       " goodput %.3f Gbit/s (payload bytes of verified messages)\n",
		       res.ok, res.failed, res.bytes, secs, (double)res.bytes * 8 / secs / 1e9);
	if (partial_seen && sch.rel == SDR_REL_NONE) /* explain the usual cause */
		fprintf(stderr, "sdr-recv: %u message(s) arrived in part: %s\n", partial_seen,
			sdr_diag_no_rel_hint);
	if (*sock >= 0) {
		tool_send_result(*sock, &res);
		app_linger(ctx, *sock, opt.timeout);
	}
	return res.failed == 0 && res.unexpected == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct sdr_ctx *ctx;
	int out_fd = -1, sock = -1, rc;

	/* per-message lines are progress: line-buffer them into pipes/logs too */
	setvbuf(stdout, NULL, _IOLBF, 0);

	tool_parse(&opt, argc, argv);
	ctx = sdr_ctx_open(opt.dpu, NULL);
	if (ctx == NULL) {
		fprintf(stderr, "cannot attach to %s: %s (%s)\n", opt.dpu, strerror(errno),
			sdr_last_error(NULL));
		return 1;
	}
	rc = session(ctx, &sock, &out_fd);
	if (sock >= 0)
		close(sock);
	if (out_fd >= 0)
		close(out_fd);
	sdr_ctx_close(ctx);
	return rc;
}
