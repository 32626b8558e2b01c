/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-pipe's runtime protocol over D DCs: framing, payload encoding, the
 * clock-offset estimator (pipe_proto.h). Pure C; every decoder checks
 * lengths and ranges.
 */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "pipe_le.h"
#include "pipe_proto.h"

static void putd(uint8_t *p, double d)
{
	uint64_t v;

	memcpy(&v, &d, 8);
	pipe_put64(p, v);
}

static double getd(const uint8_t *p)
{
	uint64_t v = pipe_get64(p);
	double d;

	memcpy(&d, &v, 8);
	return d;
}

void pipe_msg_hdr_put(uint8_t hdr[PIPE_PROTO_HDR], enum pipe_msg_type type, uint32_t len)
{
	pipe_put32(hdr, PIPE_PROTO_MAGIC);
	pipe_put16(hdr + 4, (uint16_t)type);
	pipe_put16(hdr + 6, 0);
	pipe_put32(hdr + 8, len);
}

int pipe_msg_hdr_get(const uint8_t hdr[PIPE_PROTO_HDR], enum pipe_msg_type *type, uint32_t *len)
{
	uint16_t t = pipe_get16(hdr + 4);

	if (pipe_get32(hdr) != PIPE_PROTO_MAGIC || t < PIPE_MSG_HELLO || t >= PIPE_MSG_TYPES ||
	    pipe_get16(hdr + 6) != 0 || pipe_get32(hdr + 8) > PIPE_PROTO_MAX_PAYLOAD)
		return -EPROTO;
	*type = (enum pipe_msg_type)t;
	*len = pipe_get32(hdr + 8);
	return 0;
}

size_t pipe_hello_put(uint8_t *b, const struct pipe_hello *h)
{
	pipe_put32(b, h->version);
	pipe_put32(b + 4, h->dc);
	pipe_put32(b + 8, h->dcs);
	pipe_put32(b + 12, h->iters);
	pipe_put64(b + 16, h->digest);
	pipe_put64(b + 24, h->seed);
	return PIPE_HELLO_BYTES;
}

int pipe_hello_get(const uint8_t *b, size_t len, struct pipe_hello *h)
{
	if (len != PIPE_HELLO_BYTES)
		return -EPROTO;
	h->version = pipe_get32(b);
	h->dc = pipe_get32(b + 4);
	h->dcs = pipe_get32(b + 8);
	h->iters = pipe_get32(b + 12);
	h->digest = pipe_get64(b + 16);
	h->seed = pipe_get64(b + 24);
	if (h->dcs < 2 || h->dcs > PIPE_MAX_DC || h->dc >= h->dcs)
		return -EPROTO;
	return 0;
}

size_t pipe_ping_put(uint8_t *b, const struct pipe_ping *p)
{
	pipe_put32(b, p->seq);
	pipe_put32(b + 4, 0);
	putd(b + 8, p->t0);
	putd(b + 16, p->peer_t);
	return PIPE_PING_BYTES;
}

int pipe_ping_get(const uint8_t *b, size_t len, struct pipe_ping *p)
{
	if (len != PIPE_PING_BYTES || pipe_get32(b + 4) != 0)
		return -EPROTO;
	p->seq = pipe_get32(b);
	p->t0 = getd(b + 8);
	p->peer_t = getd(b + 16);
	return isfinite(p->t0) && isfinite(p->peer_t) ? 0 : -EPROTO;
}

size_t pipe_offset_put(uint8_t *b, const struct pipe_offset *o)
{
	putd(b, o->offset);
	putd(b + 8, o->rtt);
	return PIPE_OFFSET_BYTES;
}

int pipe_offset_get(const uint8_t *b, size_t len, struct pipe_offset *o)
{
	if (len != PIPE_OFFSET_BYTES)
		return -EPROTO;
	o->offset = getd(b);
	o->rtt = getd(b + 8);
	return isfinite(o->offset) && isfinite(o->rtt) && o->rtt >= 0 ? 0 : -EPROTO;
}

size_t pipe_qpinfo_put(uint8_t *b, const struct pipe_qpinfo *q, uint32_t n)
{
	pipe_put32(b, n);
	for (uint32_t i = 0; i < n; i++) {
		uint8_t *e = b + 4 + (size_t)i * PIPE_QPINFO_BYTES;

		pipe_put16(e, q[i].boundary);
		e[2] = q[i].dc;
		e[3] = 0;
		memcpy(e + 4, q[i].info, SDR_QP_INFO_WIRE);
	}
	return 4 + (size_t)n * PIPE_QPINFO_BYTES;
}

int pipe_qpinfo_get(const uint8_t *b, size_t len, struct pipe_qpinfo *q, uint32_t max, uint32_t *n)
{
	uint32_t k;

	if (len < 4)
		return -EPROTO;
	k = pipe_get32(b);
	if (k > max || len != 4 + (size_t)k * PIPE_QPINFO_BYTES)
		return -EPROTO;
	for (uint32_t i = 0; i < k; i++) {
		const uint8_t *e = b + 4 + (size_t)i * PIPE_QPINFO_BYTES;

		q[i].boundary = pipe_get16(e);
		q[i].dc = e[2];
		if (q[i].boundary >= PIPE_MAX_STAGES - 1 || q[i].dc >= PIPE_MAX_DC || e[3] != 0)
			return -EPROTO;
		memcpy(q[i].info, e + 4, SDR_QP_INFO_WIRE);
	}
	*n = k;
	return 0;
}

size_t pipe_start_put(uint8_t *b, const struct pipe_start *s)
{
	pipe_put32(b, s->iter);
	pipe_put32(b + 4, s->n);
	putd(b + 8, s->t_start);
	for (uint32_t i = 0; i < s->n; i++) {
		uint8_t *e = b + 16 + 16 * (size_t)i;

		pipe_put16(e, s->chan[i]);
		pipe_put16(e + 2, 0);
		pipe_put32(e + 4, 0);
		pipe_put64(e + 8, s->rate[i]);
	}
	return PIPE_START_BYTES(s->n);
}

int pipe_start_get(const uint8_t *b, size_t len, struct pipe_start *s)
{
	if (len < 16)
		return -EPROTO;
	s->iter = pipe_get32(b);
	s->n = pipe_get32(b + 4);
	s->t_start = getd(b + 8);
	if (s->n > PIPE_MAX_FLOWS || len != PIPE_START_BYTES(s->n) || !isfinite(s->t_start))
		return -EPROTO;
	for (uint32_t i = 0; i < s->n; i++) {
		const uint8_t *e = b + 16 + 16 * (size_t)i;

		s->chan[i] = pipe_get16(e);
		s->rate[i] = pipe_get64(e + 8);
		if (s->chan[i] >= 2 * PIPE_MAX_STAGES || pipe_get16(e + 2) || pipe_get32(e + 4))
			return -EPROTO;
	}
	return 0;
}

size_t pipe_events_put(uint8_t *b, uint32_t iter, const struct pipe_event *ev, uint32_t n)
{
	pipe_put32(b, iter);
	pipe_put32(b + 4, n);
	for (uint32_t i = 0; i < n; i++) {
		uint8_t *e = b + 8 + (size_t)i * PIPE_PROTO_EVENT_BYTES;
		const struct pipe_event *x = &ev[i];

		memset(e, 0, PIPE_PROTO_EVENT_BYTES);
		pipe_put32(e, x->iter);
		pipe_put16(e + 4, x->stage);
		pipe_put16(e + 6, x->m);
		e[8] = x->kind;
		e[9] = x->op;
		pipe_put16(e + 10, x->chan);
		putd(e + 16, x->t0);
		putd(e + 24, x->t1);
		pipe_put64(e + 32, x->csum);
	}
	return PIPE_EVENTS_BYTES(n);
}

int pipe_events_get(const uint8_t *b, size_t len, const struct pipe_cfg *c, uint32_t dc,
		    uint32_t iter, struct pipe_events *out)
{
	uint32_t n;

	if (len < 8 || pipe_get32(b) != iter)
		return -EPROTO;
	n = pipe_get32(b + 4);
	if (len != PIPE_EVENTS_BYTES((size_t)n))
		return -EPROTO;
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *e = b + 8 + (size_t)i * PIPE_PROTO_EVENT_BYTES;
		struct pipe_event x = {0};

		x.iter = pipe_get32(e);
		x.stage = pipe_get16(e + 4);
		x.m = pipe_get16(e + 6);
		x.kind = e[8];
		x.op = e[9];
		x.chan = pipe_get16(e + 10);
		x.t0 = getd(e + 16);
		x.t1 = getd(e + 24);
		x.csum = pipe_get64(e + 32);
		if (x.iter != iter || x.stage >= c->stages || c->dc_of[x.stage] != dc ||
		    x.kind > PIPE_I_WAIT_SEND || x.op > PIPE_B || x.m >= c->micro ||
		    (x.kind != PIPE_I_COMPUTE && x.chan >= PIPE_NCHAN(c->stages)) ||
		    !isfinite(x.t0) || !isfinite(x.t1) || x.t1 < x.t0 || pipe_get32(e + 12) ||
		    pipe_get64(e + 40))
			return -EPROTO;
		if (pipe_events_add(out, &x))
			return -ENOMEM;
	}
	return (int)n;
}

int pipe_clock_offset(const struct pipe_clock_sample *s, uint32_t n, double *offset, double *rtt)
{
	int best = -1;

	for (uint32_t i = 0; i < n; i++) {
		double r = s[i].t2 - s[i].t0;

		if (!isfinite(r) || !isfinite(s[i].t1) || r < 0)
			continue;
		if (best < 0 || r < s[best].t2 - s[best].t0)
			best = (int)i;
	}
	if (best < 0)
		return -EINVAL;
	*rtt = s[best].t2 - s[best].t0;
	*offset = s[best].t1 - (s[best].t0 + s[best].t2) / 2;
	return 0;
}
