/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * common/sdr_fdpass.c, the control socket's message + descriptor transport
 * of libsdr and sdr-dpu: a memfd arrives as a working descriptor, waits
 * end as the timeout says, truncation and extra descriptors are refused,
 * a hang-up reads 0.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "sdr_fdpass.h"
#include "sdr_test.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(void)
{
	int sv[2], fd = -1, mfd;
	char msg[64] = "request", got[64], small[8], c;
	double t;

	REQUIRE(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv) == 0);
	/* a message with a memfd: the receiver's descriptor is the same file */
	mfd = memfd_create("fdpass", MFD_CLOEXEC);
	REQUIRE(mfd >= 0 && write(mfd, "x", 1) == 1);
	CHECK(sdr_fd_send(sv[0], msg, sizeof(msg), mfd, -1) == 0);
	CHECK(sdr_fd_recv(sv[1], got, sizeof(got), &fd, -1) == (ssize_t)sizeof(msg));
	CHECK(!memcmp(got, msg, sizeof(msg)) && fd >= 0 && fd != mfd);
	CHECK(pread(fd, &c, 1, 0) == 1 && c == 'x');
	close(fd);
	/* no descriptor: -1 */
	CHECK(sdr_fd_send(sv[0], msg, 10, -1, 0) == 0);
	CHECK(sdr_fd_recv(sv[1], got, sizeof(got), &fd, 100) == 10 && fd == -1);
	/* nothing there: -EAGAIN without waiting, -ETIMEDOUT after the wait */
	CHECK(sdr_fd_recv(sv[1], got, sizeof(got), &fd, 0) == -EAGAIN && fd == -1);
	t = now();
	CHECK(sdr_fd_recv(sv[1], got, sizeof(got), &fd, 50) == -ETIMEDOUT);
	CHECK(now() - t >= 0.045 && now() - t < 2);
	/* the socket's own timeout counts as one too */
	struct timeval tv = {.tv_sec = 0, .tv_usec = 30000};
	setsockopt(sv[1], SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	CHECK(sdr_fd_recv(sv[1], got, sizeof(got), &fd, -1) == -ETIMEDOUT);
	/* a message longer than the buffer: refused, its descriptor closed */
	CHECK(sdr_fd_send(sv[0], msg, sizeof(msg), mfd, -1) == 0);
	CHECK(sdr_fd_recv(sv[1], small, sizeof(small), &fd, -1) == -EMSGSIZE && fd == -1);
	/* more descriptors than one: the first is kept, the rest closed */
	{
		union {
			char buf[CMSG_SPACE(3 * sizeof(int))];
			struct cmsghdr align;
		} u;
		int fds[3] = {mfd, mfd, mfd};
		struct iovec iov = {.iov_base = msg, .iov_len = 4};
		struct msghdr mh = {.msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = u.buf,
				    .msg_controllen = sizeof(u.buf)};
		struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);

		memset(&u, 0, sizeof(u));
		cm = CMSG_FIRSTHDR(&mh);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(fds));
		memcpy(CMSG_DATA(cm), fds, sizeof(fds));
		CHECK(sendmsg(sv[0], &mh, 0) == 4);
		CHECK(sdr_fd_recv(sv[1], got, sizeof(got), &fd, -1) == 4 && fd >= 0);
		CHECK(fd < 0 || (pread(fd, &c, 1, 0) == 1 && c == 'x'));
		close(fd);
	}
	/* the peer hangs up: 0; sending to it: -EPIPE, no SIGPIPE */
	close(sv[0]);
	CHECK(sdr_fd_recv(sv[1], got, sizeof(got), &fd, 100) == 0);
	CHECK(sdr_fd_send(sv[1], msg, 4, -1, -1) == -EPIPE);
	close(sv[1]);
	close(mfd);
	return t_finish("test_fdpass");
}
