/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-recv: receive messages through libsdr, verify them against the
 * pattern (or write them to a file), report bitmaps.
 * main() sets up (daemon, peer exchange, QP); run() is the receive loop.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sdr.h"
#include "sdr_pattern.h"
#include "sdr_tool.h"

struct rslot {
	int busy;
	uint64_t idx;
	struct sdr_recv_handle *h;
};

static struct tool_opts opt = {.is_sender = 0};

static void report(uint64_t idx, uint64_t sz, const char *status, const char *why, int chunks,
		   size_t nchunks, double t_ms, double gbps)
{
	if (opt.quiet)
		return;
	if (opt.json)
		printf("{\"msg\":%" PRIu64 ",\"size\":%" PRIu64 ",\"status\":\"%s\",\"reason\":\"%s\","
		       "\"chunks\":%d,\"chunks_total\":%zu,\"t_ms\":%.3f,\"gbps\":%.3f}\n",
		       idx, sz, status, why, chunks, nchunks, t_ms, gbps);
	else
		printf("msg %" PRIu64 " size %" PRIu64 " %s%s%s%s chunks %d/%zu time %.3f ms %.3f Gbit/s\n",
		       idx, sz, status, why[0] ? " (" : "", why, why[0] ? ")" : "", chunks, nchunks,
		       t_ms, gbps);
}

static int run(struct sdr_ctx *ctx, struct sdr_qp *qp, const struct tool_plan *plan, int out_fd,
	       struct tool_result *res)
{
	uint64_t total = tool_plan_messages(plan), maxsz = tool_plan_max_size(plan);
	uint64_t next = 0, done = 0, bytes = 0, okc = 0;
	uint32_t w = opt.window, idle = 0;
	struct rslot *slots = calloc(w, sizeof(*slots));
	uint8_t *buf = sdr_buf_alloc(ctx, w * maxsz);
	struct sdr_mr *mr;
	double t0, tprev, tlast;

	if (slots == NULL || buf == NULL) {
		fprintf(stderr, "cannot allocate %" PRIu64 " bytes of buffers: %s\n", w * maxsz,
			strerror(errno));
		return -1;
	}
	mr = sdr_mr_reg(ctx, buf, w * maxsz, 0);
	if (mr == NULL) {
		fprintf(stderr, "sdr_mr_reg: %s (%s)\n", strerror(errno), sdr_last_error(ctx));
		return -1;
	}
	if (!opt.quiet && !opt.json)
		printf("# msg INDEX size BYTES STATUS chunks SET/TOTAL time MS_SINCE_FIRST_POST"
		       " GBIT/S_SINCE_PREVIOUS\n");
	t0 = tprev = tlast = app_now();
	while (done < total) {
		struct sdr_wc wc[16];
		int n;

		/* keep up to `window` receives posted ahead of the data */
		while (next < total && !slots[next % w].busy) {
			struct rslot *s = &slots[next % w];
			struct sdr_recv_wr wr = {.mr = mr, .addr = buf + (next % w) * maxsz,
						 .length = (uint32_t)tool_plan_size(plan, next),
						 .wr_id = next};
			int rc = sdr_recv_post(qp, &wr, &s->h);

			if (rc == -EAGAIN)
				break;
			if (rc) {
				fprintf(stderr, "sdr_recv_post(msg %" PRIu64 "): %s (%s)\n", next,
					sdr_strerror(rc), sdr_last_error(ctx));
				return -1;
			}
			s->busy = 1;
			s->idx = next++;
		}
		n = app_cq_wait(ctx, wc, 16, &idle, tlast, opt.timeout);
		if (n < 0)
			break;
		if (n == 0)
			continue;
		for (int i = 0; i < n; i++) {
			double t = app_now(), dt;
			uint64_t idx = wc[i].wr_id, sz;
			struct rslot *s;
			const uint64_t *bm;
			size_t nch = 0;
			int chunks, good = 0;
			char why[96] = "";

			if (wc[i].qp != qp || wc[i].opcode != SDR_SQ_RECV || idx >= total ||
			    !slots[idx % w].busy || slots[idx % w].idx != idx) {
				fprintf(stderr, "unexpected completion wr_id %" PRIu64 " status %d\n",
					idx, wc[i].status);
				continue;
			}
			s = &slots[idx % w];
			sz = tool_plan_size(plan, idx);
			sdr_recv_bitmap_get(s->h, &bm, &nch);
			chunks = sdr_recv_chunks_done(s->h);
			dt = t - tprev > 1e-9 ? t - tprev : 1e-9;
			tprev = tlast = t;
			done++;
			if (wc[i].status) {
				snprintf(why, sizeof(why), "%s", sdr_strerror(wc[i].status));
			} else if (wc[i].flags & SDR_CQE_F_PARTIAL) {
				snprintf(why, sizeof(why), "bitmap not full");
			} else if (wc[i].flags & SDR_CQE_F_IMM_PARTIAL) {
				snprintf(why, sizeof(why), "immediate incomplete");
			} else if (wc[i].length != sz) {
				snprintf(why, sizeof(why), "length %u, expected %" PRIu64, wc[i].length, sz);
			} else if (!(wc[i].flags & SDR_CQE_F_IMM)) {
				/* a full receive has every nibble of the immediate */
				snprintf(why, sizeof(why), "no immediate");
			} else if (wc[i].imm != tool_plan_imm(plan, idx)) {
				snprintf(why, sizeof(why), "immediate 0x%x, expected 0x%x", wc[i].imm,
					 tool_plan_imm(plan, idx));
			} else if (out_fd >= 0) {
				const uint8_t *p = buf + (idx % w) * maxsz;

				if (pwrite(out_fd, p, sz, (off_t)(idx * plan->sizes[0])) != (ssize_t)sz)
					snprintf(why, sizeof(why), "write: %s", strerror(errno));
				else
					good = 1;
			} else {
				size_t bad = sdr_pattern_check(buf + (idx % w) * maxsz, sz, plan->seed, idx);

				if (bad < sz)
					snprintf(why, sizeof(why), "data mismatch at byte %zu", bad);
				else
					good = 1;
			}
			if (good) {
				okc++;
				bytes += sz;
			}
			report(idx, sz,
			       good ? "complete"
				    : (wc[i].status == 0 &&
				       (wc[i].flags & (SDR_CQE_F_PARTIAL | SDR_CQE_F_IMM_PARTIAL))) ? "partial"
												   : "error",
			       why, chunks, nch, (t - t0) * 1e3, (double)sz * 8 / dt / 1e9);
			s->busy = 0;
		}
	}
	if (done < total) {
		/* give up: show what the bitmaps say about the pending messages */
		for (uint32_t i = 0; i < w; i++) {
			struct rslot *s = &slots[i];
			const uint64_t *bm;
			size_t nch = 0;

			if (!s->busy)
				continue;
			sdr_recv_bitmap_get(s->h, &bm, &nch);
			report(s->idx, tool_plan_size(plan, s->idx), "incomplete", "timeout",
			       sdr_recv_chunks_done(s->h), nch, (app_now() - t0) * 1e3, 0);
		}
	}
	free(slots);
	res->ok = okc;
	res->failed = total - okc;
	res->bytes = bytes;
	res->elapsed_ns = (uint64_t)((tlast - t0) * 1e9);
	return 0;
}

int main(int argc, char **argv)
{
	struct tool_plan plan;
	struct tool_result res = {0};
	struct sdr_qp_attr attr = {0};
	struct sdr_scheme sch;
	struct sdr_qp_info local, remote;
	struct sdr_ctx *ctx;
	struct sdr_qp *qp;
	int out_fd = -1, sock = -1;

	/* per-message lines are progress: line-buffer them into pipes/logs too */
	setvbuf(stdout, NULL, _IOLBF, 0);

	tool_parse(&opt, argc, argv);
	ctx = sdr_ctx_open(opt.dpu, NULL);
	if (ctx == NULL) {
		fprintf(stderr, "cannot attach to %s: %s (%s)\n", opt.dpu, strerror(errno),
			sdr_last_error(NULL));
		return 1;
	}
	if (opt.server) {
		sock = tool_tcp_listen_accept(&opt);
		if (sock < 0 || app_recv_qp_info(sock, &remote) || tool_recv_plan(sock, &plan)) {
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
		out_fd = open(opt.out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (out_fd < 0 || ftruncate(out_fd, (off_t)plan.file_size) < 0) {
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
	qp = sdr_qp_create(ctx, &attr);
	if (qp == NULL) {
		fprintf(stderr, "sdr_qp_create: %s (%s)\n", strerror(errno), sdr_last_error(ctx));
		return 1;
	}
	sdr_qp_info_get(qp, &local);
	if (tool_publish_qp(&opt, &local))
		return 1;
	if (sock >= 0) {
		if (app_send_qp_info(sock, &local)) {
			fprintf(stderr, "bootstrap: cannot send our QP info\n");
			return 1;
		}
	} else if (opt.peer) {
		if (tool_peer_from_opts(&opt, &remote))
			return 1;
	} else {
		return 0; /* only --print-qp / --qp-file */
	}
	if (app_qp_connect(ctx, qp, &remote))
		return 1;
	if (run(ctx, qp, &plan, out_fd, &res))
		return 1;
	double secs = res.elapsed_ns ? (double)res.elapsed_ns * 1e-9 : 1e-9;
	if (opt.json)
		printf("{\"summary\":\"recv\",\"ok\":%" PRIu64 ",\"failed\":%" PRIu64
		       ",\"bytes\":%" PRIu64 ",\"elapsed_s\":%.6f,\"goodput_gbps\":%.3f}\n",
		       res.ok, res.failed, res.bytes, secs, (double)res.bytes * 8 / secs / 1e9);
	else
		printf("received: %" PRIu64 " ok, %" PRIu64 " failed, %" PRIu64
		       " bytes in %.3f s, goodput %.3f Gbit/s (payload bytes of verified messages)\n",
		       res.ok, res.failed, res.bytes, secs, (double)res.bytes * 8 / secs / 1e9);
	if (sock >= 0) {
		tool_send_result(sock, &res);
		app_linger(sock, opt.timeout);
		close(sock);
	}
	if (out_fd >= 0)
		close(out_fd);
	sdr_ctx_close(ctx);
	return res.failed == 0 ? 0 : 1;
}
