/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-pipe runtime: the wire between the DCs' processes (host/pipe/, runtime
 * above libsdr, apputil and pipe_proto.h). The protocol's messages over TCP,
 * the bootstrap (DC 0 checks each DC's configuration digest), the clock
 * offsets DC 0 measures, and the channels and QPs (infos relayed by DC 0).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "pipe_rt.h"
#include "sdr.h"
#include "sdr_app.h"

/* ---------------- TCP ---------------- */

/* The shared loops (host/apputil), as -EIO for this file's callers. */
static int wr_full(int fd, const void *b, size_t n)
{
	return app_write_full(fd, b, n) ? -EIO : 0;
}

static int rd_full(int fd, void *b, size_t n)
{
	return app_read_full(fd, b, n) ? -EIO : 0;
}

/* ---------------- reliability ---------------- */

/*
 * The single place that maps --rel to struct sdr_qp_attr. EC: code, k and m
 * are checked by the daemon (docs/host-api.md); AUTO lets the sender's DPU
 * pick SR or an EC code per message (docs/reliability.md).
 */
static int rel_apply(struct sdr_qp_attr *a, const struct sdr_scheme *r)
{
	if (sdr_scheme_check(r, 0))
		return -EINVAL;
	a->reliability = r->rel;
	a->ec_code = r->code;
	a->ec_k = (uint8_t)r->k;
	a->ec_m = (uint8_t)r->m;
	return 0;
}

/* ---------------- the protocol's messages ---------------- */

/* This process' clock as the protocol sees it (--clock-shift for tests). */
double rt_clk(const struct rt *r)
{
	return pipe_now() + r->o->clock_shift;
}

int rt_room(uint8_t **b, size_t *cap, size_t need)
{
	uint8_t *x;

	if (need <= *cap)
		return 0;
	x = realloc(*b, need);
	if (!x)
		return -ENOMEM;
	*b = x;
	*cap = need;
	return 0;
}

/* Send r->out[0..len) as one message of @p type. */
int rt_msg_send(struct rt *r, int fd, enum pipe_msg_type type, size_t len)
{
	uint8_t h[PIPE_PROTO_HDR];

	pipe_msg_hdr_put(h, type, (uint32_t)len);
	return wr_full(fd, h, sizeof(h)) || (len && wr_full(fd, r->out, len)) ? -EIO : 0;
}

/* Receive one message into r->in: of type @p want (0: any, type in *got).
 * -EIO (connection lost or timed out), -EPROTO (bad header or another type). */
int rt_msg_recv(struct rt *r, int fd, enum pipe_msg_type want, enum pipe_msg_type *got,
		uint32_t *len)
{
	uint8_t h[PIPE_PROTO_HDR];
	enum pipe_msg_type t;

	if (rd_full(fd, h, sizeof(h)))
		return -EIO;
	if (pipe_msg_hdr_get(h, &t, len) || (want && t != want))
		return -EPROTO;
	if (rt_room(&r->in, &r->in_cap, *len ? *len : 1))
		return -ENOMEM;
	if (*len && rd_full(fd, r->in, *len))
		return -EIO;
	if (got)
		*got = t;
	return 0;
}

void rt_proto_error(const char *what, uint32_t dc, int rc)
{
	fprintf(stderr, "sdr-pipe: %s (DC %u): %s\n", what, dc,
		rc == -EPROTO ? "protocol violated (another sdr-pipe version?)"
		: rc == -EIO  ? "connection lost or timed out"
			      : strerror(-rc));
}

/* A bootstrap connection must not wait for ever on a peer that stopped
 * without closing it: its longest silence is a whole iteration. */
static void sock_timeout(int fd, double s)
{
	struct timeval tv = {.tv_sec = (time_t)s, .tv_usec = 0};

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

/* ---------------- bootstrap ---------------- */

static void hello_mine(const struct rt *r, struct pipe_hello *h)
{
	*h = (struct pipe_hello){.version = PIPE_PROTO_VERSION,
				 .dc = r->o->dc,
				 .dcs = r->c->dcs,
				 .digest = pipe_cfg_digest(r->c),
				 .iters = r->o->iters,
				 .seed = r->o->seed};
}

/* Compare a peer's HELLO with ours (each side does, so each prints why). */
static int hello_check(const struct pipe_hello *me, const struct pipe_hello *peer)
{
	if (peer->version != me->version) {
		fprintf(stderr,
			"sdr-pipe: DC %u runs protocol version %u, this one %u (another "
			"sdr-pipe build)\n",
			peer->dc, peer->version, me->version);
		return -EPROTO;
	}
	if (peer->dcs != me->dcs || peer->digest != me->digest || peer->iters != me->iters ||
	    peer->seed != me->seed) {
		fprintf(stderr,
			"sdr-pipe: DC %u runs another configuration (pass every DC the same "
			"--stages/--micro/--place/--tf/--tb/--act/--grad/--rtt/--rate/--net/"
			"--sched/--comm/--delta-n/--mem-budget/--rel/--iters/--seed)\n",
			peer->dc);
		return -EPROTO;
	}
	if (peer->dc == me->dc) {
		fprintf(stderr, "sdr-pipe: two processes claim DC %u\n", peer->dc);
		return -EPROTO;
	}
	return 0;
}

/* DC 0: accept the other D - 1 DCs, each says HELLO first; answer with ours. */
int rt_boot_coordinator(struct rt *r)
{
	uint32_t D = r->c->dcs;
	int fds[PIPE_MAX_DC], rc;
	struct pipe_hello me, peer;
	char why[300];
	uint32_t len;

	hello_mine(r, &me);
	rc = app_tcp_accept_n(r->o->bind, r->o->port, (int)D - 1, r->o->timeout + 1, fds, why,
			      sizeof(why));
	if (rc) {
		fprintf(stderr, "sdr-pipe: bootstrap: %s\n", why);
		return rc;
	}
	for (uint32_t i = 0; i + 1 < D; i++) {
		sock_timeout(fds[i], r->o->timeout + 30);
		if ((rc = rt_msg_recv(r, fds[i], PIPE_MSG_HELLO, NULL, &len)) ||
		    (rc = pipe_hello_get(r->in, len, &peer))) {
			rt_proto_error("bootstrap: HELLO", 0, rc);
			goto fail;
		}
		if (rt_room(&r->out, &r->out_cap, PIPE_HELLO_BYTES) ||
		    (rc = rt_msg_send(r, fds[i], PIPE_MSG_HELLO, pipe_hello_put(r->out, &me)))) {
			rt_proto_error("bootstrap: HELLO", peer.dc, rc ? rc : -ENOMEM);
			rc = rc ? rc : -ENOMEM;
			goto fail;
		}
		if ((rc = hello_check(&me, &peer)))
			goto fail;
		if (r->fd[peer.dc] >= 0) {
			fprintf(stderr, "sdr-pipe: two processes claim DC %u\n", peer.dc);
			rc = -EPROTO;
			goto fail;
		}
		r->fd[peer.dc] = fds[i];
		fds[i] = -1;
	}
	return 0;
fail:
	for (uint32_t i = 0; i + 1 < D; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	return rc;
}

/* Other DCs: connect to DC 0, HELLO both ways. */
int rt_boot_peer(struct rt *r)
{
	struct pipe_hello me, peer;
	char why[300];
	uint32_t len;
	int rc, s = app_tcp_connect(r->o->connect, 0, r->o->timeout, why, sizeof(why));

	if (s < 0) {
		fprintf(stderr, "sdr-pipe: bootstrap: %s\n", why);
		return s;
	}
	r->fd[0] = s;
	sock_timeout(s, r->o->timeout + 30);
	hello_mine(r, &me);
	if (rt_room(&r->out, &r->out_cap, PIPE_HELLO_BYTES))
		return -ENOMEM;
	if ((rc = rt_msg_send(r, s, PIPE_MSG_HELLO, pipe_hello_put(r->out, &me))) ||
	    (rc = rt_msg_recv(r, s, PIPE_MSG_HELLO, NULL, &len)) ||
	    (rc = pipe_hello_get(r->in, len, &peer))) {
		rt_proto_error("bootstrap: HELLO", 0, rc);
		return rc;
	}
	if (peer.dc != 0) {
		fprintf(stderr, "sdr-pipe: %s is DC %u, not DC 0\n", r->o->connect, peer.dc);
		return -EPROTO;
	}
	return hello_check(&me, &peer);
}

/* DC 0: measure DC k's clock offset (PIPE_CLOCK_ROUNDS ping-pongs, the
 * sample of the smallest round trip) and tell it. */
int rt_clock_coordinator(struct rt *r, uint32_t k, struct pipe_run_out *out)
{
	struct pipe_clock_sample smp[PIPE_CLOCK_ROUNDS];
	struct pipe_offset off;
	uint32_t len;
	int rc;

	if (rt_room(&r->out, &r->out_cap, PIPE_PING_BYTES))
		return -ENOMEM;
	for (uint32_t i = 0; i < PIPE_CLOCK_ROUNDS; i++) {
		struct pipe_ping pg = {.seq = i, .t0 = rt_clk(r)};

		if ((rc = rt_msg_send(r, r->fd[k], PIPE_MSG_PING, pipe_ping_put(r->out, &pg))) ||
		    (rc = rt_msg_recv(r, r->fd[k], PIPE_MSG_PONG, NULL, &len)) ||
		    (rc = pipe_ping_get(r->in, len, &pg)))
			return rc;
		smp[i].t2 = rt_clk(r);
		if (pg.seq != i)
			return -EPROTO;
		smp[i].t0 = pg.t0;
		smp[i].t1 = pg.peer_t;
	}
	if (pipe_clock_offset(smp, PIPE_CLOCK_ROUNDS, &off.offset, &off.rtt))
		return -EPROTO;
	if (out) {
		out->clock_offset[k] = off.offset;
		out->clock_rtt[k] = off.rtt;
	}
	if (r->o->verbose)
		fprintf(stderr, "dc0: DC %u's clock is %+.6f ms from ours (round trip %.3f ms)\n",
			k, off.offset * 1e3, off.rtt * 1e3);
	return rt_msg_send(r, r->fd[k], PIPE_MSG_OFFSET, pipe_offset_put(r->out, &off));
}

/* Other DCs: answer DC 0's pings until it sends the offset. */
int rt_clock_peer(struct rt *r)
{
	enum pipe_msg_type t;
	uint32_t len;
	int rc;

	if (rt_room(&r->out, &r->out_cap, PIPE_PING_BYTES))
		return -ENOMEM;
	for (uint32_t i = 0; i <= PIPE_CLOCK_ROUNDS; i++) {
		struct pipe_ping pg;
		struct pipe_offset off;

		if ((rc = rt_msg_recv(r, r->fd[0], 0, &t, &len)))
			return rc;
		if (t == PIPE_MSG_OFFSET) {
			if ((rc = pipe_offset_get(r->in, len, &off)))
				return rc;
			r->offset = off.offset;
			if (r->o->verbose)
				fprintf(stderr,
					"dc%u: our clock is %+.6f ms from DC 0's (round trip %.3f"
					" ms)\n",
					r->o->dc, off.offset * 1e3, off.rtt * 1e3);
			return 0;
		}
		if (t != PIPE_MSG_PING || (rc = pipe_ping_get(r->in, len, &pg)))
			return -EPROTO;
		pg.peer_t = rt_clk(r);
		if ((rc = rt_msg_send(r, r->fd[0], PIPE_MSG_PONG, pipe_ping_put(r->out, &pg))))
			return rc;
	}
	return -EPROTO;
}

/* ---------------- QPs and channels ---------------- */

/* The boundary b | b+1 crosses DCs and this process is one end. */
static int my_boundary(const struct rt *r, uint32_t b)
{
	const uint8_t *d = r->c->dc_of;

	return d[b] != d[b + 1] && (d[b] == r->o->dc || d[b + 1] == r->o->dc);
}

int rt_setup_chans(struct rt *r)
{
	const struct pipe_cfg *c = r->c;
	uint32_t me = r->o->dc;

	for (uint32_t ch = 0; ch < PIPE_NCHAN(c->stages); ch++) {
		struct chan *k = &r->ch[ch];
		uint32_t M = c->micro;

		k->ch = ch;
		k->src = pipe_ch_src(ch);
		k->dst = pipe_ch_dst(ch);
		k->size = pipe_ch_bytes(c, ch);
		k->cross = c->dc_of[k->src] != c->dc_of[k->dst];
		if (!k->cross) {
			if (c->dc_of[k->src] != me)
				continue;
			k->buf = malloc(M * k->size);
			k->posted = calloc(M, sizeof(uint32_t));
			k->full = calloc(M, sizeof(uint32_t));
			if (!k->buf || !k->posted || !k->full)
				return -ENOMEM;
			memset(k->buf, 0, M * k->size); /* fault the pages in now */
			pthread_mutex_init(&k->mu, NULL);
			pthread_cond_init(&k->cv, NULL);
			continue;
		}
		uint32_t b = ch / 2; /* boundary b | b+1 */
		int is_src = c->dc_of[k->src] == me;

		if (c->dc_of[k->src] != me && c->dc_of[k->dst] != me)
			continue;
		k->qp = r->qp_of[b];
		uint8_t *mem = sdr_buf_alloc(r->ctx, M * k->size);

		if (!mem)
			return -errno;
		memset(mem, 0, M * k->size);
		k->mr = sdr_mr_reg(r->ctx, mem, M * k->size, 0);
		if (!k->mr) {
			fprintf(stderr, "sdr-pipe: sdr_mr_reg: %s (%s)\n", strerror(errno),
				sdr_last_error(r->ctx));
			return -errno;
		}
		if (is_src) {
			k->sbuf = mem;
			k->sh = calloc(M, sizeof(*k->sh));
		} else {
			k->buf = mem;
			k->rh = calloc(M, sizeof(*k->rh));
		}
		if (!k->sh && !k->rh)
			return -ENOMEM;
	}
	return 0;
}

/* One QP per cross-DC boundary this DC is an end of. */
int rt_create_qps(struct rt *r)
{
	const struct pipe_cfg *c = r->c;
	uint64_t mx = c->act_bytes > c->grad_bytes ? c->act_bytes : c->grad_bytes;
	uint32_t nb = 0;

	for (uint32_t b = 0; b + 1 < c->stages; b++)
		nb += my_boundary(r, b);
	if (nb == 0)
		return 0;
	r->ctx = sdr_ctx_open(r->o->dpu, NULL);
	if (!r->ctx) {
		fprintf(stderr, "sdr-pipe: cannot attach to %s: %s\n", r->o->dpu, strerror(errno));
		return -errno;
	}
	for (uint32_t b = 0; b + 1 < c->stages; b++) {
		struct sdr_qp_attr a = {0};

		if (!my_boundary(r, b))
			continue;
		a.max_msg = (uint32_t)((mx + 65535) & ~(uint64_t)65535);
		a.paths = c->paths; /* spraying over its source ports (--paths) */
		if (rel_apply(&a, &c->rel)) {
			fprintf(stderr, "sdr-pipe: --rel: not a scheme a QP runs\n");
			return -EINVAL;
		}
		r->qp_of[b] = sdr_qp_create(r->ctx, &a);
		if (!r->qp_of[b]) {
			fprintf(stderr, "sdr-pipe: sdr_qp_create: %s (%s)\n", strerror(errno),
				sdr_last_error(r->ctx));
			return -errno;
		}
	}
	return 0;
}

/* This DC's QP infos (one per boundary it is an end of) into @p q. */
static uint32_t my_qpinfos(const struct rt *r, struct pipe_qpinfo *q)
{
	uint32_t n = 0;

	for (uint32_t b = 0; b + 1 < r->c->stages; b++) {
		struct sdr_qp_info i;

		if (!my_boundary(r, b))
			continue;
		sdr_qp_info_get(r->qp_of[b], &i);
		q[n].boundary = (uint16_t)b;
		q[n].dc = (uint8_t)r->o->dc;
		sdr_qp_info_encode(&i, q[n].info);
		n++;
	}
	return n;
}

/* Connect the local QP of every boundary to the other end's info, found in
 * @p q (exactly one entry per boundary of this DC, from the right DC). */
static int connect_qps(struct rt *r, const struct pipe_qpinfo *q, uint32_t n)
{
	const uint8_t *d = r->c->dc_of;

	for (uint32_t b = 0; b + 1 < r->c->stages; b++) {
		uint32_t other = d[b] == r->o->dc ? d[b + 1] : d[b], found = 0, at = 0;
		struct sdr_qp_info peer;
		int rc;

		if (!my_boundary(r, b))
			continue;
		for (uint32_t i = 0; i < n; i++)
			if (q[i].boundary == b && q[i].dc == other) {
				found++;
				at = i;
			}
		if (found != 1 || sdr_qp_info_decode(q[at].info, &peer)) {
			fprintf(stderr, "sdr-pipe: no valid QP info of DC %u for boundary %u|%u\n",
				other, b, b + 1);
			return -EPROTO;
		}
		rc = sdr_qp_connect(r->qp_of[b], &peer);
		if (rc) {
			fprintf(stderr, "sdr-pipe: sdr_qp_connect: %s (%s)\n", sdr_strerror(rc),
				sdr_last_error(r->ctx));
			return rc;
		}
		if (r->o->verbose) {
			struct sdr_qp_info mine;

			/* host/pipe/compete.sh maps the daemons' QPs to pipelines by it */
			sdr_qp_info_get(r->qp_of[b], &mine);
			fprintf(stderr, "dc%u: boundary %u|%u: QP 0x%06x, DC %u's QP 0x%06x\n",
				r->o->dc, b, b + 1, mine.qpn, other, peer.qpn);
		}
	}
	return 0;
}

/* DC 0: collect every DC's QP infos, send each DC those of the other ends
 * of its boundaries, connect our own. Other DCs: send ours, get theirs. */
int rt_exchange_qps(struct rt *r)
{
	static struct pipe_qpinfo all[2 * PIPE_MAX_STAGES], sel[PIPE_MAX_STAGES];
	const uint8_t *d = r->c->dc_of;
	uint32_t n, k, len, got;
	int rc;

	n = my_qpinfos(r, all);
	if (rt_room(&r->out, &r->out_cap, 4 + (size_t)2 * PIPE_MAX_STAGES * PIPE_QPINFO_BYTES))
		return -ENOMEM;
	if (r->o->dc != 0) {
		if ((rc = rt_msg_send(r, r->fd[0], PIPE_MSG_QPINFO,
				      pipe_qpinfo_put(r->out, all, n))) ||
		    (rc = rt_msg_recv(r, r->fd[0], PIPE_MSG_QPINFO, NULL, &len)) ||
		    (rc = pipe_qpinfo_get(r->in, len, sel, PIPE_MAX_STAGES, &got))) {
			rt_proto_error("QP infos", 0, rc);
			return rc;
		}
		return connect_qps(r, sel, got);
	}
	for (k = 1; k < r->c->dcs; k++) {
		uint32_t want = 0;

		for (uint32_t b = 0; b + 1 < r->c->stages; b++)
			want += d[b] != d[b + 1] && (d[b] == k || d[b + 1] == k);
		if ((rc = rt_msg_recv(r, r->fd[k], PIPE_MSG_QPINFO, NULL, &len)) ||
		    (rc = pipe_qpinfo_get(r->in, len, all + n, 2 * PIPE_MAX_STAGES - n, &got))) {
			rt_proto_error("QP infos", k, rc);
			return rc;
		}
		for (uint32_t i = 0; i < got; i++) {
			uint32_t b = all[n + i].boundary;

			if (all[n + i].dc != k || b + 1 >= r->c->stages || d[b] == d[b + 1] ||
			    (d[b] != k && d[b + 1] != k)) {
				fprintf(stderr,
					"sdr-pipe: DC %u sent a QP info for boundary %u it is "
					"not an end of\n",
					k, b);
				return -EPROTO;
			}
		}
		if (got != want) {
			fprintf(stderr, "sdr-pipe: DC %u sent %u QP infos, its boundaries are %u\n",
				k, got, want);
			return -EPROTO;
		}
		n += got;
	}
	for (k = 1; k < r->c->dcs; k++) {
		uint32_t m = 0;

		for (uint32_t i = 0; i < n; i++) {
			uint32_t b = all[i].boundary, other = d[b] == all[i].dc ? d[b + 1] : d[b];

			if (other == k && all[i].dc != k)
				sel[m++] = all[i];
		}
		if ((rc = rt_msg_send(r, r->fd[k], PIPE_MSG_QPINFO,
				      pipe_qpinfo_put(r->out, sel, m)))) {
			rt_proto_error("QP infos", k, rc);
			return rc;
		}
	}
	return connect_qps(r, all, n);
}
