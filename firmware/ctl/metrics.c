/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Prometheus metrics over HTTP (--metrics [ADDR:]PORT; control plane).
 * libmicrohttpd serves the connections on threads of its own (one per
 * connection, at most METRICS_CONNS, each closed after METRICS_IDLE_S idle):
 * a scraper that never reads holds one of them, nothing else. The pages are
 * rendered by the control thread (sdr_metrics_poll(), from its loop), which
 * alone may walk the QP tables, from the stats module's walk
 * (sdr_stats_walk()) - so every counter the daemon has appears here.
 * The workers are never involved. docs/operations.md lists the metrics.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "metrics.h"
#include "sdr_hist.h"
#include "sdr_types.h"
#include "sdr_units.h"
#include "stats.h"

#ifndef SDR_HAVE_MICROHTTPD
int sdr_metrics_start(const char *spec)
{
	fprintf(stderr,
		"sdr-dpu: --metrics %s: built without libmicrohttpd (Debian package"
		" libmicrohttpd-dev)\n",
		spec);
	return -1;
}
void sdr_metrics_poll(void)
{
}
void sdr_metrics_stop(void)
{
}
#else
#include <microhttpd.h>

#define METRICS_CONNS 16
#define METRICS_IDLE_S 5
#define METRICS_WAIT_MS 3000 /* a page the control thread did not render by then: 503 */
#define MAX_FAMILIES 256
#define HIST_HELP                                                                              \
	"send completion time (post to completion; for SR, EC and AUTO until the receiver has" \
	" all of it) by message size class"

enum page { PAGE_METRICS, PAGE_OPS, PAGE__MAX };

static struct MHD_Daemon *mhd;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static uint64_t want[PAGE__MAX], done[PAGE__MAX]; /* request / render generations */
static char *page[PAGE__MAX];
static size_t page_len[PAGE__MAX];
static volatile int wanted; /* any want[] > done[] (read without the lock) */

/* ---- rendering (control thread) ---- */

struct family {
	char name[96];
	char help[192];
	const char *type;
	char *buf;
	size_t len;
	FILE *f;
};

struct render {
	struct family fam[MAX_FAMILIES];
	unsigned n;
};

static struct family *family(struct render *r, const char *name, const char *help, const char *type)
{
	for (unsigned i = 0; i < r->n; i++)
		if (!strcmp(r->fam[i].name, name))
			return &r->fam[i];
	if (r->n == MAX_FAMILIES)
		return NULL;
	struct family *fm = &r->fam[r->n];
	snprintf(fm->name, sizeof(fm->name), "%s", name);
	snprintf(fm->help, sizeof(fm->help), "%s", help);
	fm->type = type;
	fm->f = open_memstream(&fm->buf, &fm->len);
	if (!fm->f)
		return NULL;
	r->n++;
	return fm;
}

static void on_sample(void *arg, enum sdr_stat_kind kind, const char *name, const char *help,
		      const char *labels, double v)
{
	char full[96];
	struct family *fm;

	snprintf(full, sizeof(full), "sdr_%s%s", name, kind == SDR_STAT_COUNTER ? "_total" : "");
	fm = family(arg, full, help, kind == SDR_STAT_COUNTER ? "counter" : "gauge");
	if (!fm)
		return;
	if (v == (double)(uint64_t)v && v < 1e19)
		fprintf(fm->f, "%s{%s} %" PRIu64 "\n", full, labels, (uint64_t)v);
	else
		fprintf(fm->f, "%s{%s} %.9g\n", full, labels, v);
}

static void on_hist(void *arg, const char *labels, const struct sdr_ct_hist *h)
{
	static const char *name = "sdr_message_completion_seconds";
	struct family *fm = family(arg, name, HIST_HELP, "histogram");
	double hz = sdr_g.tsc_hz ? (double)sdr_g.tsc_hz : 1.0;

	if (!fm)
		return;
	for (unsigned c = 0; c < SDR_CT_CLASSES; c++) {
		uint64_t n[SDR_CT_BUCKETS + 1], cum = 0;

		for (unsigned b = 0; b <= SDR_CT_BUCKETS; b++)
			n[b] = *(const volatile uint64_t *)&h->n[c][b];
		for (unsigned b = 0; b <= SDR_CT_BUCKETS; b++)
			cum += n[b];
		if (!cum)
			continue;
		cum = 0;
		for (unsigned b = 0; b < SDR_CT_BUCKETS; b++) {
			cum += n[b];
			fprintf(fm->f, "%s_bucket{%s,size_class=\"%s\",le=\"%g\"} %" PRIu64 "\n",
				name, labels, sdr_ct_class_name[c], sdr_ct_bound_s[b], cum);
		}
		cum += n[SDR_CT_BUCKETS];
		fprintf(fm->f, "%s_bucket{%s,size_class=\"%s\",le=\"+Inf\"} %" PRIu64 "\n", name,
			labels, sdr_ct_class_name[c], cum);
		fprintf(fm->f, "%s_sum{%s,size_class=\"%s\"} %.9g\n", name, labels,
			sdr_ct_class_name[c], (double)h->sum_cyc[c] / hz);
		fprintf(fm->f, "%s_count{%s,size_class=\"%s\"} %" PRIu64 "\n", name, labels,
			sdr_ct_class_name[c], cum);
	}
}

static char *render_metrics(size_t *len)
{
	struct render *r = calloc(1, sizeof(*r));
	struct sdr_stats_sink sink = {.sample = on_sample, .hist = on_hist};
	char *out = NULL;
	FILE *f;

	if (!r)
		return NULL;
	sink.arg = r;
	/* the histogram family first, so that it is listed even when empty */
	family(r, "sdr_message_completion_seconds", HIST_HELP, "histogram");
	sdr_stats_walk(&sink);
	f = open_memstream(&out, len);
	for (unsigned i = 0; i < r->n; i++) {
		struct family *fm = &r->fam[i];

		fclose(fm->f);
		if (f) {
			fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", fm->name, fm->help, fm->name,
				fm->type);
			fwrite(fm->buf, 1, fm->len, f);
		}
		free(fm->buf);
	}
	free(r);
	if (!f)
		return NULL;
	fclose(f);
	return out;
}

static char *render_ops(size_t *len)
{
	char *out = NULL;
	FILE *f = open_memstream(&out, len);

	if (!f)
		return NULL;
	sdr_stats_ops(f);
	fclose(f);
	return out;
}

void sdr_metrics_poll(void)
{
	uint64_t w[PAGE__MAX];

	if (!mhd || !wanted)
		return;
	pthread_mutex_lock(&mu);
	memcpy(w, want, sizeof(w));
	wanted = 0;
	pthread_mutex_unlock(&mu);
	for (int p = 0; p < PAGE__MAX; p++) {
		size_t len = 0;
		char *s;

		if (w[p] == done[p])
			continue;
		s = p == PAGE_METRICS ? render_metrics(&len) : render_ops(&len);
		pthread_mutex_lock(&mu);
		free(page[p]);
		page[p] = s;
		page_len[p] = s ? len : 0;
		done[p] = w[p];
		pthread_mutex_unlock(&mu);
	}
	pthread_cond_broadcast(&cv);
}

/* ---- HTTP (libmicrohttpd's threads) ---- */

static enum MHD_Result reply(struct MHD_Connection *c, unsigned code, const char *type,
			     const char *body, size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, (void *)(uintptr_t)body,
								 MHD_RESPMEM_MUST_COPY);
	enum MHD_Result rc;

	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", type);
	rc = MHD_queue_response(c, code, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result text(struct MHD_Connection *c, unsigned code, const char *msg)
{
	return reply(c, code, "text/plain; charset=utf-8", msg, strlen(msg));
}

/* Ask the control thread for page @p p and wait for it (at most
 * METRICS_WAIT_MS): this connection's thread waits, nothing else. */
static enum MHD_Result serve(struct MHD_Connection *c, enum page p, const char *type)
{
	struct timespec until;
	enum MHD_Result rc;
	uint64_t gen;
	int ok = 1;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += METRICS_WAIT_MS / 1000;
	until.tv_nsec += (METRICS_WAIT_MS % 1000) * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&mu);
	gen = ++want[p];
	wanted = 1;
	while (done[p] < gen && ok)
		ok = pthread_cond_timedwait(&cv, &mu, &until) == 0;
	if (done[p] < gen || !page[p])
		rc = text(c, MHD_HTTP_SERVICE_UNAVAILABLE, "sdr-dpu: the control thread is busy\n");
	else
		rc = reply(c, MHD_HTTP_OK, type, page[p], page_len[p]);
	pthread_mutex_unlock(&mu);
	return rc;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **state)
{
	(void)cls;
	(void)version;
	(void)upload;
	if (strcmp(method, "GET") && strcmp(method, "HEAD"))
		return text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "sdr-dpu: only GET\n");
	if (!*state) { /* the first call: headers only */
		const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							     MHD_HTTP_HEADER_CONTENT_LENGTH);
		const char *te = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
							     MHD_HTTP_HEADER_TRANSFER_ENCODING);
		*state = (void *)1;
		if ((cl && strcmp(cl, "0")) || te) /* a GET with a body */
			return text(c, MHD_HTTP_BAD_REQUEST, "sdr-dpu: no body expected\n");
		return MHD_YES; /* (answered on the next call) */
	}
	if (*upload_size)
		return text(c, MHD_HTTP_BAD_REQUEST, "sdr-dpu: no body expected\n");
	if (!strcmp(url, "/metrics"))
		return serve(c, PAGE_METRICS, "text/plain; version=0.0.4; charset=utf-8");
	if (!strcmp(url, "/ops"))
		return serve(c, PAGE_OPS, "text/plain; charset=utf-8");
	if (!strcmp(url, "/"))
		return text(c, MHD_HTTP_OK,
			    "sdr-dpu " SDR_VERSION ": /metrics (Prometheus),"
			    " /ops (operations not complete, sdr-diag)\n");
	return text(c, MHD_HTTP_NOT_FOUND, "sdr-dpu: no such page (/metrics, /ops)\n");
}

int sdr_metrics_start(const char *spec)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
	const char *colon = strrchr(spec, ':');
	uint64_t port;
	char addr[64];

	if (colon) {
		size_t n = (size_t)(colon - spec);
		if (n >= sizeof(addr))
			goto bad;
		memcpy(addr, spec, n);
		addr[n] = 0;
		if (n && inet_pton(AF_INET, addr, &sa.sin_addr) != 1)
			goto bad;
	}
	if (sdr_parse_u64(colon ? colon + 1 : spec, &port, 0) || port > 65535)
		goto bad;
	sa.sin_port = htons((uint16_t)port);
	mhd = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_THREAD_PER_CONNECTION,
			       (uint16_t)port, NULL, NULL, on_request, NULL, MHD_OPTION_SOCK_ADDR,
			       (struct sockaddr *)&sa, MHD_OPTION_CONNECTION_LIMIT,
			       (unsigned)METRICS_CONNS, MHD_OPTION_CONNECTION_TIMEOUT,
			       (unsigned)METRICS_IDLE_S, MHD_OPTION_END);
	if (!mhd) {
		fprintf(stderr, "sdr-dpu: --metrics %s: cannot listen there (in use?)\n", spec);
		return -1;
	}
	printf("sdr-dpu: metrics on http://%s:%u/metrics\n",
	       colon && colon != spec ? addr : "0.0.0.0", (unsigned)port);
	return 0;
bad:
	fprintf(stderr, "sdr-dpu: --metrics: '%s' is not [IPv4-ADDR:]PORT\n", spec);
	return -1;
}

void sdr_metrics_stop(void)
{
	if (!mhd)
		return;
	/* wake the connections that wait for a page; then stop */
	pthread_mutex_lock(&mu);
	for (int p = 0; p < PAGE__MAX; p++)
		done[p] = want[p] = UINT64_MAX / 2;
	pthread_mutex_unlock(&mu);
	pthread_cond_broadcast(&cv);
	MHD_stop_daemon(mhd);
	mhd = NULL;
	for (int p = 0; p < PAGE__MAX; p++) {
		free(page[p]);
		page[p] = NULL;
	}
}
#endif /* SDR_HAVE_MICROHTTPD */
