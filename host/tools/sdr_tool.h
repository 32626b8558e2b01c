/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Code of sdr-send and sdr-recv only: options, the message plan and its
 * exchange, QP info on the command line. What other host programs share
 * with them is in host/apputil/ (sdr_app.h).
 */
#ifndef SDR_TOOL_H
#define SDR_TOOL_H

#include <stdint.h>

#include "sdr.h"
#include "sdr_app.h"

#define TOOL_MAX_SIZES 64
#define TOOL_DEFAULT_PORT 18515

struct tool_opts {
	int is_sender;
	const char *dpu;
	/* bootstrap */
	int server;
	const char *bind;
	uint32_t port;       /* 1..65535 */
	const char *connect; /* HOST[:PORT] */
	uint32_t local_qpn, local_rkey;
	const char *peer; /* text, or @FILE */
	int print_qp;
	const char *qp_file;
	/* plan */
	uint64_t sizes[TOOL_MAX_SIZES];
	uint32_t nsizes;
	uint32_t count;
	uint64_t seed;
	uint32_t max_msg;
	uint32_t chunk_pkts;
	uint32_t channels;      /* --channels: of the QP (1 = an ordinary QP; both ends) */
	uint32_t stripe_chunks; /* --stripe-chunks: with --channels (0 = 1) */
	uint32_t window;
	double timeout;
	int json, quiet;
	const char *file;   /* sdr-send */
	const char *out;    /* sdr-recv */
	uint64_t file_size; /* sdr-recv without TCP */
	uint8_t rel;        /* enum sdr_reliability: --rel none|sr|ec|auto */
	uint16_t ec;        /* --ec CODE:K:M packed (sdr_ec_param_pack), with --rel ec */
	uint64_t rate_bps;  /* sender: --rate, 0 = unpaced */
	int rel_set, ec_set, ec_in_rel;
	int no_imm; /* --no-imm: every message with immediate 0 (none) */
	int guard;  /* sdr-recv --guard: check that no byte of a slot past its
		     * message was written */
};

/** What both sides agree on (sent by the sender over TCP). */
struct tool_plan {
	uint32_t count, nsizes;
	uint64_t seed;
	uint32_t max_msg, chunk_pkts;
	uint32_t file_mode;
	uint64_t file_size;
	uint64_t sizes[TOOL_MAX_SIZES];
	uint32_t rel;    /* enum sdr_reliability of both QPs */
	uint16_t ec;     /* their EC parameters (sdr_ec_param_pack), 0 unless EC */
	uint32_t no_imm; /* 1: message n carries immediate 0 (none), not n */
};

/** The user immediate of message @p n of plan @p p: n, or 0 (no immediate)
 *  with --no-imm. */
static inline uint32_t tool_plan_imm(const struct tool_plan *p, uint64_t n)
{
	return p->no_imm ? 0 : (uint32_t)n;
}

struct tool_result {
	uint64_t ok, failed, bytes, elapsed_ns; /* sent to the sender over TCP */
	/* local only (--json summary): completions that matched no message in
	 * flight (a duplicate, or a stray wr_id; they make the exit status 1),
	 * and t0 of the loop (CLOCK_MONOTONIC seconds: a harness that reads the
	 * same clock places "t_ms" of the message lines on its own timeline) */
	uint64_t unexpected;
	double t0;
};

/** Parse argv; prints usage and exits on --help or error. */
void tool_parse(struct tool_opts *o, int argc, char **argv);

/** Plan from the options (sender; receiver without TCP). In file mode
 *  needs the message size (max_msg of the QP). */
int tool_plan_from_opts(const struct tool_opts *o, struct tool_plan *p, uint64_t file_size,
			uint32_t msg_size);
uint64_t tool_plan_messages(const struct tool_plan *p);
uint64_t tool_plan_size(const struct tool_plan *p, uint64_t i);
uint64_t tool_plan_max_size(const struct tool_plan *p);
/** QP max_msg for the plan when the user gave none: the largest size
 *  rounded up to 1 MiB (0 = daemon default in file mode). */
uint32_t tool_plan_default_max_msg(const struct tool_plan *p);

/* TCP bootstrap: returns a connected socket or -1 (message printed). */
int tool_tcp_listen_accept(const struct tool_opts *o);
int tool_tcp_connect(const struct tool_opts *o);
int tool_send_plan(int fd, const struct tool_plan *p);
int tool_recv_plan(int fd, struct tool_plan *p);
int tool_send_result(int fd, const struct tool_result *r);
int tool_recv_result(int fd, struct tool_result *r);

/* ---- the message loop of both tools (sdr_loop.c) ---- */

/** Message idx of the window, posted into buffer slot idx % window. */
struct tool_slot {
	int busy;
	uint64_t idx;
	double t_post;              /* sdr-send: when it was posted */
	struct sdr_send_handle *sh; /* sdr-send */
	struct sdr_recv_handle *rh; /* sdr-recv */
};

struct tool_loop;

/** What sdr-send and sdr-recv do differently in tool_loop_run(). */
struct tool_loop_ops {
	const char *header; /* column line, printed first unless --quiet / --json */
	uint8_t opcode;     /* of the completions expected: SDR_SQ_SEND / SDR_SQ_RECV */
	/** Post message @p idx from / into @p buf: 0, -EAGAIN (try again after
	 *  completions) or -1 (reason printed: the loop stops). */
	int (*post)(struct tool_loop *l, struct tool_slot *s, uint64_t idx, uint8_t *buf);
	/** Report the completion @p wc of message s->idx (@p t its time, @p dt
	 *  since the previous completion): 1 if the message counts as delivered. */
	int (*complete)(struct tool_loop *l, struct tool_slot *s, const struct sdr_wc *wc, double t,
			double dt);
	/** After giving up (timeout, daemon gone): message s->idx did not complete. */
	void (*pending)(struct tool_loop *l, struct tool_slot *s);
};

struct tool_loop {
	/* set by the caller */
	const struct tool_opts *opt;
	const struct tool_loop_ops *ops;
	struct sdr_ctx *ctx;
	struct sdr_qp *qp;
	const struct tool_plan *plan;
	int fd;     /* --file (sdr-send) / --out (sdr-recv), or -1 */
	void *priv; /* the caller's */
	/* set by tool_loop_run() */
	uint8_t *buf;   /* window * maxsz bytes, registered as mr */
	uint64_t maxsz; /* largest message of the plan */
	struct sdr_mr *mr;
	double t0; /* app_now() before the first post */
};

/** Move the plan's messages through @p l->qp: a window of --window posts,
 *  completions until all are done or --timeout passes without one. Fills
 *  @p res; -1 on a set-up or post failure (reason printed). */
int tool_loop_run(struct tool_loop *l, struct tool_result *res);

/** --print-qp / --qp-file for our QP. */
int tool_publish_qp(const struct tool_opts *o, const struct sdr_qp_info *info);
/** The QP of the tool with attributes @p a: sdr_qp_create(), or
 *  sdr_qp_create_ext() with --channels N > 1; NULL with the reason printed. */
struct sdr_qp *tool_qp_create(struct sdr_ctx *ctx, const struct tool_opts *o,
			      const struct sdr_qp_attr *a);
/** --channels infos of the QP exchanged over the TCP bootstrap, one after
 *  the other (@p n of them: both ends give the same --channels). */
int tool_send_infos(int fd, const struct sdr_qp_info *i, unsigned n);
int tool_recv_infos(int fd, struct sdr_qp_info *i, unsigned n);
/** Connect @p qp to the peer's @p n infos (sdr_qp_connect_infos()); -1
 *  with the reason printed. */
int tool_qp_connect(struct sdr_ctx *ctx, struct sdr_qp *qp, const struct sdr_qp_info *remote,
		    unsigned n);
/** --peer TEXT or @FILE (waits up to --timeout for the file). */
int tool_peer_from_opts(const struct tool_opts *o, struct sdr_qp_info *info);

#endif /* SDR_TOOL_H */
