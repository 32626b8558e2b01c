/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-pipe runtime's own declarations (host/pipe/, the program's runtime
 * above libsdr and the pipe core): a process' state, its channels, and the
 * entries of its parts. Calls go pipe_run.c (iterations, rates, the
 * controller's log) -> pipe_rt_stage.c (stage threads) and pipe_rt_boot.c
 * (the protocol's messages, bootstrap, clocks, QPs) -> apputil, libsdr.
 */
#ifndef PIPE_RT_H
#define PIPE_RT_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "pipe_net.h"
#include "pipe_proto.h"
#include "pipe_run.h"
#include "sdr.h"

/* DC 0 announces an iteration's start this long ahead (its own clock) */
#define START_AHEAD_S 0.02

struct chan {
	uint32_t ch, src, dst;
	uint64_t size;
	int cross;
	/* intra-DC mailbox: generation (iter + 1) per message */
	uint8_t *buf;
	uint32_t *posted, *full;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	/* cross-DC */
	struct sdr_qp *qp;
	struct sdr_mr *mr;
	uint8_t *sbuf;
	struct sdr_send_handle **sh;
	struct sdr_recv_handle **rh;
};

struct rt {
	const struct pipe_cfg *c;
	const struct pipe_prog *p;
	const struct pipe_rt_opts *o;
	struct sdr_ctx *ctx;
	pthread_mutex_t sdr_mu;
	struct chan ch[2 * PIPE_MAX_STAGES];
	struct sdr_qp *qp_of[PIPE_MAX_STAGES]; /* per boundary b (b | b+1) */
	pthread_barrier_t bar;
	double t_start; /* this iteration's start, CLOCK_MONOTONIC of this process */
	uint32_t iter;
	struct pipe_events ev[PIPE_MAX_STAGES];
	size_t ev_mark[PIPE_MAX_STAGES];    /* where the current iteration's events start */
	uint64_t csum_out[PIPE_MAX_STAGES]; /* checksum of the last fill, per stage */
	uint64_t qp_rate[PIPE_MAX_STAGES];  /* rate set on the local QP of boundary b */
	/* the protocol (main thread only) */
	int fd[PIPE_MAX_DC]; /* DC 0: the connection of DC k; other DCs: fd[0] */
	uint8_t *in, *out;   /* message buffers */
	size_t in_cap, out_cap;
	double offset; /* other DCs: this clock minus DC 0's, as DC 0 measured it */
	struct pipe_net net_tmp;
	const struct pipe_net *net;
	struct pipe_flows fl;
};

struct targ {
	struct rt *r;
	uint32_t s;
};

/* pipe_rt_stage.c: the stage threads and the helpers they share with pipe_run.c */
void rt_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void rt_sleep_until(double t);
void rt_nap(uint32_t us);
void *rt_stage_main(void *arg);

/* pipe_rt_boot.c: the protocol's messages */
double rt_clk(const struct rt *r);
int rt_room(uint8_t **b, size_t *cap, size_t need);
int rt_msg_send(struct rt *r, int fd, enum pipe_msg_type type, size_t len);
int rt_msg_recv(struct rt *r, int fd, enum pipe_msg_type want, enum pipe_msg_type *got,
		uint32_t *len);
void rt_proto_error(const char *what, uint32_t dc, int rc);
/* pipe_rt_boot.c: bootstrap, clocks, QPs and channels */
int rt_boot_coordinator(struct rt *r);
int rt_boot_peer(struct rt *r);
int rt_clock_coordinator(struct rt *r, uint32_t k, struct pipe_run_out *out);
int rt_clock_peer(struct rt *r);
int rt_setup_chans(struct rt *r);
int rt_create_qps(struct rt *r);
int rt_exchange_qps(struct rt *r);

#endif
