/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers shared by the host programs built on libsdr (sdr-send, sdr-recv,
 * sdr-pipe): monotonic time and polling back-off, whole-buffer socket I/O,
 * the TCP bootstrap connection and the QP info exchange over it, completion
 * waiting and completion-time statistics. A static library of its own
 * (host/apputil/, sdr_app_dep); nothing here is part of libsdr's API.
 */
#ifndef SDR_APP_H
#define SDR_APP_H

#include <stddef.h>
#include <stdint.h>

#include "sdr.h"

/** CLOCK_MONOTONIC in seconds. */
double app_now(void);

/** Count an empty poll in @p idle; past 256 in a row, sleep 50 us (the
 *  machine's cores are shared). Reset @p idle to 0 after work. */
void app_backoff(uint32_t *idle);

/** Write / read exactly @p len bytes (EINTR retried, no SIGPIPE).
 *  @return 0, or -1 (error, or end of stream before @p len bytes). */
int app_write_full(int fd, const void *buf, size_t len);
int app_read_full(int fd, void *buf, size_t len);

/**
 * Listen on @p bind (IPv4 address, NULL = any) port @p port and accept one
 * connection (TCP_NODELAY set).
 * @param timeout_s  > 0: give up after that long; otherwise wait for ever
 * @param why        what failed, for the caller's message (may be NULL)
 * @return the connected socket, or -errno (-EINVAL bad address,
 *         -ETIMEDOUT, the socket calls' errors).
 */
int app_tcp_accept_one(const char *bind, uint16_t port, double timeout_s, char *why, size_t whylen);

/**
 * The same for @p n connections (listen backlog @p n): on success @p fds
 * holds the @p n connected sockets in the order they were accepted.
 * @return 0, or -errno as app_tcp_accept_one() (-EINVAL: n < 1 too); on
 *         failure no socket is left open.
 */
int app_tcp_accept_n(const char *bind, uint16_t port, int n, double timeout_s, int *fds, char *why,
		     size_t whylen);

/**
 * Connect to "HOST[:PORT]" (TCP_NODELAY set), retrying every 100 ms until
 * @p timeout_s has passed: the listening side may not be up yet.
 * @param default_port used without ":PORT"; 0 = ":PORT" is required
 * @return the connected socket, or -errno (-EINVAL malformed HOST[:PORT] or
 *         unknown host, -ETIMEDOUT / the last connect error).
 */
int app_tcp_connect(const char *host_port, uint16_t default_port, double timeout_s, char *why,
		    size_t whylen);

/** A QP info in its fixed binary form (sdr_qp_info_encode) over @p fd.
 *  @return 0, or -1 (I/O error; receive: or a QP info that does not decode). */
int app_send_qp_info(int fd, const struct sdr_qp_info *i);
int app_recv_qp_info(int fd, struct sdr_qp_info *i);

/** Half-close @p fd and wait (at most @p timeout s) until the peer closes
 *  its end: keeps the caller's QPs alive while the peer may still need them. */
void app_linger(int fd, double timeout);

/** sdr_qp_connect() with the reason printed on stderr. @return 0 or -1. */
int app_qp_connect(struct sdr_ctx *ctx, struct sdr_qp *qp, const struct sdr_qp_info *remote);

/** Poll up to @p max completions. Nothing there: back off and return 0, or
 *  -1 once nothing has completed for @p timeout s since @p tlast (or since
 *  the daemon came back from a restart: the time libsdr spends re-attaching
 *  does not count). A CQ error also returns -1. Messages go to stderr.
 *  Otherwise the count (idle reset). */
int app_cq_wait(struct sdr_ctx *ctx, struct sdr_wc *wc, int max, uint32_t *idle, double tlast,
		double timeout);

/** A daemon restart under @p ctx (libsdr re-attaches, docs/host-api.md §6):
 *  one line on stderr when the daemon goes and one when libsdr is back
 *  ("sdr: daemon restarted: re-attached after N ms, ..."). Returns
 *  sdr_ctx_state(); *@p t_back (may be NULL) gets the app_now() of the last
 *  moment libsdr was still re-attaching (0: never), for timeouts that the
 *  outage must not count against. One context per process. */
int app_restart_note(struct sdr_ctx *ctx, double *t_back);

/** Print completion-time statistics (mean, p50, p99, max in ms) of the
 *  @p n messages whose times (seconds) are @p t and sizes @p sz: one line
 *  per distinct size and one over all (JSON lines with @p json). Sorts
 *  copies; @p t and @p sz are not changed. */
void app_latency_report(const char *who, const double *t, const uint64_t *sz, uint64_t n, int json);

#endif /* SDR_APP_H */
