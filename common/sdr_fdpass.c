/* SPDX-License-Identifier: BSD-3-Clause */
/* A message plus a descriptor over a unix socket (sdr_fdpass.h). */
#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "sdr_fdpass.h"

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Wait for @p ev on @p sock until @p deadline (ms, CLOCK_MONOTONIC).
 * 0 ready (or an error the call itself will report), -ETIMEDOUT. */
static int wait_for(int sock, short ev, long long deadline)
{
	for (;;) {
		struct pollfd p = {.fd = sock, .events = ev};
		long long left = deadline - now_ms();
		int rc;

		if (left < 0)
			left = 0;
		rc = poll(&p, 1, (int)(left > 0x7fffffff ? 0x7fffffff : left));
		if (rc > 0)
			return 0;
		if (rc == 0)
			return -ETIMEDOUT;
		if (errno != EINTR)
			return -errno;
	}
}

/* After a send/recv failed with errno (not EINTR): 0 to try again once the
 * socket is ready (within the deadline), or the error to return. */
static int io_wait(int sock, short ev, int timeout_ms, long long deadline)
{
	if (errno != EAGAIN && errno != EWOULDBLOCK)
		return -errno;
	if (timeout_ms == 0)
		return -EAGAIN;
	if (timeout_ms < 0)
		return -ETIMEDOUT; /* the socket's own SO_SNDTIMEO / SO_RCVTIMEO */
	return wait_for(sock, ev, deadline);
}

int sdr_fd_send(int sock, const void *msg, size_t len, int fd, int timeout_ms)
{
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = (void *)msg, .iov_len = len};
	struct msghdr mh = {.msg_iov = &iov, .msg_iovlen = 1};
	long long deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	int flags = MSG_NOSIGNAL | (timeout_ms >= 0 ? MSG_DONTWAIT : 0);
	ssize_t n;

	if (fd >= 0) {
		struct cmsghdr *cm;

		memset(&u, 0, sizeof(u));
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof(u.buf);
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &fd, sizeof(int));
	}
	for (;;) {
		n = sendmsg(sock, &mh, flags);
		if (n >= 0)
			return (size_t)n == len ? 0 : -EPROTO;
		if (errno == EINTR)
			continue;
		int rc = io_wait(sock, POLLOUT, timeout_ms, deadline);
		if (rc)
			return rc;
	}
}

ssize_t sdr_fd_recv(int sock, void *msg, size_t len, int *fd, int timeout_ms)
{
	union {
		char buf[CMSG_SPACE(sizeof(int) * SDR_FDPASS_MAX)];
		struct cmsghdr align;
	} u;
	struct iovec iov = {.iov_base = msg, .iov_len = len};
	struct msghdr mh;
	long long deadline = now_ms() + (timeout_ms > 0 ? timeout_ms : 0);
	int flags = MSG_CMSG_CLOEXEC | (timeout_ms >= 0 ? MSG_DONTWAIT : 0);
	ssize_t n;

	*fd = -1;
	for (;;) {
		memset(&mh, 0, sizeof(mh));
		mh.msg_iov = &iov;
		mh.msg_iovlen = 1;
		mh.msg_control = u.buf;
		mh.msg_controllen = sizeof(u.buf);
		n = recvmsg(sock, &mh, flags);
		if (n >= 0)
			break;
		if (errno == EINTR)
			continue;
		int rc = io_wait(sock, POLLIN, timeout_ms, deadline);
		if (rc)
			return rc;
	}
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		size_t nfd = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);

		for (size_t k = 0; k < nfd; k++) {
			int f;

			memcpy(&f, CMSG_DATA(cm) + k * sizeof(int), sizeof(int));
			if (*fd < 0)
				*fd = f;
			else
				close(f); /* more than the protocol passes */
		}
	}
	if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) {
		if (*fd >= 0)
			close(*fd);
		*fd = -1;
		return -EMSGSIZE;
	}
	return n;
}
