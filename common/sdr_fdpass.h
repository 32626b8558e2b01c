/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One message with at most one file descriptor (SCM_RIGHTS) over a unix
 * socket: the control protocol between libsdr and sdr-dpu
 * (docs/host-api.md, common/sdr_abi.h). Pure C, no DPDK; used by libsdr
 * and the daemon's control plane, and by tests that play either side.
 *
 * Timeouts (timeout_ms): < 0 wait as the socket does (blocking, bounded by
 * its SO_SNDTIMEO / SO_RCVTIMEO), 0 do not wait, > 0 wait at most that many
 * milliseconds. EINTR is retried in every case.
 */
#ifndef SDR_FDPASS_H
#define SDR_FDPASS_H

#include <stddef.h>
#include <sys/types.h>

/** Descriptors one received message may carry; more are closed. */
#define SDR_FDPASS_MAX 4

/**
 * Send @p len bytes of @p msg as one message, with @p fd attached unless it
 * is negative (the caller keeps its own copy). Never raises SIGPIPE.
 * @return 0 (all @p len bytes went); -ETIMEDOUT (the wait or the socket's
 *         timeout expired), -EAGAIN (no room and @p timeout_ms 0), -EPROTO
 *         (sent short), or another -errno (-EPIPE: the peer is gone).
 */
int sdr_fd_send(int sock, const void *msg, size_t len, int fd, int timeout_ms);

/**
 * Receive one message of at most @p len bytes into @p msg; *@p fd gets the
 * first descriptor passed with it (close-on-exec), -1 if none.
 * @return bytes received (> 0); 0 the peer hung up; -ETIMEDOUT (nothing
 *         within the wait or the socket's timeout), -EAGAIN (nothing, and
 *         @p timeout_ms 0); -EMSGSIZE (the message or its descriptors did
 *         not fit: any descriptor closed, *@p fd -1); another -errno.
 */
ssize_t sdr_fd_recv(int sock, void *msg, size_t len, int *fd, int timeout_ms);

#endif /* SDR_FDPASS_H */
