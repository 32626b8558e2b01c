/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-perf's small helpers: the monotonic clock, sleeps and the growable
 * string it writes JSON lines with, and the stop flag its signal handler
 * sets. Lowest layer of sdr-perf; libc only.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "perf.h"

volatile sig_atomic_t g_stop; /* set by sdr-perf.c's handler: SIGINT, SIGTERM, SIGHUP */

double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void sleep_us(unsigned us)
{
	struct timespec ts = {.tv_sec = us / 1000000, .tv_nsec = (long)(us % 1000000) * 1000L};
	nanosleep(&ts, NULL);
}

void sleep_ms(unsigned ms)
{
	sleep_us(ms * 1000u);
}

void sb_add(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		size_t room = b->cap - b->len;
		va_start(ap, fmt);
		n = vsnprintf(b->p ? b->p + b->len : NULL, room, fmt, ap);
		va_end(ap);
		if (n < 0)
			return;
		if ((size_t)n < room) {
			b->len += (size_t)n;
			return;
		}
		size_t ncap = (b->cap ? b->cap * 2 : 512) + (size_t)n;
		char *np = realloc(b->p, ncap);
		if (!np)
			abort();
		b->p = np;
		b->cap = ncap;
	}
}

/* JSON string value (escapes quotes, backslashes, control characters). */
void sb_jstr(struct sbuf *b, const char *s)
{
	sb_add(b, "\"");
	for (; s && *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			sb_add(b, "\\%c", ch);
		else if (ch < 0x20)
			sb_add(b, "\\u%04x", ch);
		else
			sb_add(b, "%c", ch);
	}
	sb_add(b, "\"");
}

void sb_jnum(struct sbuf *b, const char *key, double v)
{
	if (isfinite(v))
		sb_add(b, ",\"%s\":%.6g", key, v);
	else
		sb_add(b, ",\"%s\":null", key);
}
