/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Refusals of the host socket (layer ctl; ctrl_int.h): a refused request's
 * status and text, the counter of a refusal or drop and its rate-limited
 * log line, and how a client is named in them.
 */
#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#include "ctrl_int.h"

uint64_t ctl_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

void ctl_note(enum sdr_ctr ctr, const char *inst, const char *fmt, ...)
{
	static uint64_t last[SDR_CTR__MAX], quiet[SDR_CTR__MAX];
	uint64_t t = ctl_now_ms();
	char buf[256];
	va_list ap;

	sdr_g.ctl_ctr[ctr]++;
	if (last[ctr] && t - last[ctr] < 1000) {
		quiet[ctr]++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (quiet[ctr])
		printf("sdr-dpu[%s]: %s (%s; %llu more not logged)\n", inst, buf,
		       sdr_ctr_names[ctr], (unsigned long long)quiet[ctr]);
	else
		printf("sdr-dpu[%s]: %s (%s)\n", inst, buf, sdr_ctr_names[ctr]);
	last[ctr] = t;
	quiet[ctr] = 0;
}

int ctl_fail(struct sdr_ctl_resp *r, int err, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->msg, sizeof(r->msg), fmt, ap);
	va_end(ap);
	r->status = -err;
	return -err;
}

const char *ctl_who(const struct client *cl, char buf[48])
{
	if (sdr_g.cfg.quota_by_pid)
		snprintf(buf, 48, "client pid %d", (int)cl->pid);
	else
		snprintf(buf, 48, "client uid %u", (unsigned)cl->uid);
	return buf;
}

const char *ctl_who_log(const struct client *cl, char buf[64])
{
	if (sdr_g.cfg.quota_by_pid)
		snprintf(buf, 64, "client pid %d", (int)cl->pid);
	else
		snprintf(buf, 64, "client uid %u (pid %d)", (unsigned)cl->uid, (int)cl->pid);
	return buf;
}
