/* SPDX-License-Identifier: BSD-3-Clause */
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "sdr_app.h"

double app_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void app_backoff(uint32_t *idle)
{
	if (++*idle > 256) {
		struct timespec ts = {0, 50000};

		nanosleep(&ts, NULL);
	}
}

int app_write_full(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int app_read_full(int fd, void *buf, size_t len)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = recv(fd, p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void say(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (why == NULL || len == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
}

int app_tcp_accept_n(const char *bind_addr, uint16_t port, int n, double timeout_s, int *fds,
		     char *why, size_t whylen)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
	double deadline = app_now() + timeout_s;
	int one = 1, ls, s, e, got = 0;

	if (n < 1) {
		say(why, whylen, "accept: %d connections", n);
		return -EINVAL;
	}
	if (bind_addr && inet_pton(AF_INET, bind_addr, &sa.sin_addr) != 1) {
		say(why, whylen, "bad bind address '%s'", bind_addr);
		return -EINVAL;
	}
	ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ls < 0) {
		e = errno;
		say(why, whylen, "socket: %s", strerror(e));
		return -e;
	}
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(ls, (struct sockaddr *)&sa, sizeof(sa)) || listen(ls, n)) {
		e = errno;
		say(why, whylen, "listen on port %u: %s", port, strerror(e));
		close(ls);
		return -e;
	}
	while (got < n) {
		struct pollfd p = {.fd = ls, .events = POLLIN};
		int ms = -1, rc;

		if (timeout_s > 0) {
			double left = deadline - app_now();

			if (left <= 0) {
				say(why, whylen, "%d of %d connected to port %u within %.3g s", got,
				    n, port, timeout_s);
				e = ETIMEDOUT;
				goto fail;
			}
			ms = (int)(left * 1e3) + 1;
		}
		rc = poll(&p, 1, ms);
		if (rc < 0 && errno != EINTR) {
			e = errno;
			say(why, whylen, "poll: %s", strerror(e));
			goto fail;
		}
		if (rc <= 0)
			continue;
		s = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
		if (s < 0) {
			e = errno;
			say(why, whylen, "accept on port %u: %s", port, strerror(e));
			goto fail;
		}
		setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		fds[got++] = s;
	}
	close(ls);
	return 0;
fail:
	close(ls);
	while (got > 0)
		close(fds[--got]);
	return -e;
}

int app_tcp_accept_one(const char *bind_addr, uint16_t port, double timeout_s, char *why,
		       size_t whylen)
{
	int s, rc = app_tcp_accept_n(bind_addr, port, 1, timeout_s, &s, why, whylen);

	return rc ? rc : s;
}

int app_tcp_connect(const char *host_port, uint16_t default_port, double timeout_s, char *why,
		    size_t whylen)
{
	char host[256], port[8];
	const char *colon = host_port ? strrchr(host_port, ':') : NULL;
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai, *a;
	double deadline = app_now() + timeout_s;
	int s = -1, one = 1, rc, e = ETIMEDOUT;
	size_t hl;

	if (host_port == NULL) {
		say(why, whylen, "no HOST[:PORT]");
		return -EINVAL;
	}
	hl = colon ? (size_t)(colon - host_port) : strlen(host_port);
	if (hl == 0 || hl >= sizeof(host) || (!colon && default_port == 0)) {
		say(why, whylen, "bad HOST%s '%s'", default_port ? "[:PORT]" : ":PORT", host_port);
		return -EINVAL;
	}
	memcpy(host, host_port, hl);
	host[hl] = '\0';
	if (colon) {
		char *end;
		unsigned long p;

		errno = 0;
		p = strtoul(colon + 1, &end, 10);
		if (colon[1] < '0' || colon[1] > '9' || errno || *end || p == 0 || p > 65535) {
			say(why, whylen, "bad port in '%s'", host_port);
			return -EINVAL;
		}
		snprintf(port, sizeof(port), "%lu", p);
	} else {
		snprintf(port, sizeof(port), "%u", default_port);
	}
	rc = getaddrinfo(host, port, &hints, &ai);
	if (rc) {
		say(why, whylen, "%s: %s", host, gai_strerror(rc));
		return -EINVAL;
	}
	/* the other side may not listen yet: retry until the timeout */
	for (;;) {
		for (a = ai; a; a = a->ai_next) {
			s = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
			if (s < 0) {
				e = errno;
				continue;
			}
			if (connect(s, a->ai_addr, a->ai_addrlen) == 0)
				break;
			e = errno;
			close(s);
			s = -1;
		}
		if (s >= 0 || app_now() > deadline)
			break;
		usleep(100000);
	}
	freeaddrinfo(ai);
	if (s < 0) {
		say(why, whylen, "connect %s:%s: %s", host, port, strerror(e));
		return -e;
	}
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return s;
}

int app_send_qp_info(int fd, const struct sdr_qp_info *i)
{
	uint8_t b[SDR_QP_INFO_WIRE];

	sdr_qp_info_encode(i, b);
	return app_write_full(fd, b, sizeof(b));
}

int app_recv_qp_info(int fd, struct sdr_qp_info *i)
{
	uint8_t b[SDR_QP_INFO_WIRE];

	if (app_read_full(fd, b, sizeof(b)))
		return -1;
	return sdr_qp_info_decode(b, i);
}

void app_linger(int fd, double timeout)
{
	double deadline = app_now() + timeout;
	char b[64];

	shutdown(fd, SHUT_WR);
	while (app_now() < deadline) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int ms = (int)((deadline - app_now()) * 1e3) + 1;
		int rc = poll(&p, 1, ms);

		if (rc < 0 && errno == EINTR)
			continue;
		if (rc <= 0)
			return;
		ssize_t n = recv(fd, b, sizeof(b), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return; /* EOF: the peer is done */
	}
}

int app_qp_connect(struct sdr_ctx *ctx, struct sdr_qp *qp, const struct sdr_qp_info *remote)
{
	int rc = sdr_qp_connect(qp, remote);

	if (rc)
		fprintf(stderr, "sdr_qp_connect: %s (%s)\n", sdr_strerror(rc), sdr_last_error(ctx));
	return rc ? -1 : 0;
}

int app_restart_note(struct sdr_ctx *ctx, double *t_back)
{
	static const struct sdr_ctx *seen_ctx;
	static uint64_t seen;
	static double back;
	static int down;
	struct sdr_ctx_stats st;
	int s = sdr_ctx_state(ctx);

	if (ctx != seen_ctx) {
		seen_ctx = ctx;
		seen = 0;
		back = 0;
		down = 0;
	}
	if (s == SDR_CTX_REATTACHING) {
		back = app_now();
		if (!down)
			fprintf(stderr, "sdr: the daemon is gone: re-attaching (%s)\n",
				sdr_last_error(ctx));
		down = 1;
	}
	if (sdr_ctx_stats_get(ctx, &st) == 0 && st.reattaches > seen) {
		seen = st.reattaches;
		fprintf(stderr,
			"sdr: daemon restarted: re-attached after %llu ms, %llu QP(s) restored, "
			"%llu not, %llu operation(s) posted again\n",
			(unsigned long long)st.reattach_last_ms,
			(unsigned long long)st.qps_restored, (unsigned long long)st.qps_lost,
			(unsigned long long)st.ops_replayed);
	}
	if (s == SDR_CTX_LIVE)
		down = 0;
	if (t_back)
		*t_back = back;
	return s;
}

int app_cq_wait(struct sdr_ctx *ctx, struct sdr_wc *wc, int max, uint32_t *idle, double tlast,
		double timeout)
{
	int n = sdr_cq_poll(ctx, wc, max);
	double back;

	if (n < 0) {
		fprintf(stderr, "sdr_cq_poll: %s (%s)\n", sdr_strerror(n), sdr_last_error(ctx));
		return -1;
	}
	if (n == 0) {
		app_backoff(idle);
		if (app_restart_note(ctx, &back) != SDR_CTX_LIVE)
			return 0;
		if (back > tlast)
			tlast = back;
		if (app_now() - tlast > timeout) {
			fprintf(stderr, "timeout: nothing completed for %.1f s\n", timeout);
			return -1;
		}
		return 0;
	}
	*idle = 0;
	return n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static void lat_line(const char *who, const char *size, double *v, uint64_t n, int json)
{
	double sum = 0;
	uint64_t i99;

	if (n == 0)
		return;
	qsort(v, n, sizeof(*v), cmp_double);
	for (uint64_t i = 0; i < n; i++)
		sum += v[i];
	/* nearest-rank percentiles */
	i99 = (uint64_t)((double)n * 0.99 + 0.999999999);
	i99 = i99 ? i99 - 1 : 0;
	if (json)
		printf("{\"latency\":\"%s\",\"size\":%s,\"n\":%llu,\"mean_ms\":%.3f,\"p50_ms\":%."
		       "3f,"
		       "\"p99_ms\":%.3f,\"max_ms\":%.3f}\n",
		       who, size, (unsigned long long)n, sum / (double)n * 1e3,
		       v[(n - 1) / 2] * 1e3, v[i99] * 1e3, v[n - 1] * 1e3);
	else
		printf("%s completion time, size %s: n %llu mean %.3f ms p50 %.3f ms p99 %.3f ms"
		       " max %.3f ms\n",
		       who, size, (unsigned long long)n, sum / (double)n * 1e3,
		       v[(n - 1) / 2] * 1e3, v[i99] * 1e3, v[n - 1] * 1e3);
}

void app_latency_report(const char *who, const double *t, const uint64_t *sz, uint64_t n, int json)
{
	double *v = malloc((n ? n : 1) * sizeof(*v));
	uint64_t *seen = malloc((n ? n : 1) * sizeof(*seen));
	uint64_t nseen = 0;
	char name[32];

	if (v == NULL || seen == NULL) {
		free(v);
		free(seen);
		return;
	}
	for (uint64_t i = 0; i < n; i++) {
		uint64_t k = 0, m = 0, s = sz[i];

		for (k = 0; k < nseen && seen[k] != s; k++)
			;
		if (k < nseen)
			continue;
		seen[nseen++] = s;
		for (uint64_t j = i; j < n; j++)
			if (sz[j] == s)
				v[m++] = t[j];
		snprintf(name, sizeof(name), "%llu", (unsigned long long)s);
		lat_line(who, name, v, m, json);
	}
	if (nseen > 1) {
		memcpy(v, t, n * sizeof(*v));
		lat_line(who, json ? "\"all\"" : "all", v, n, json);
	}
	free(v);
	free(seen);
}
