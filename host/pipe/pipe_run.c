/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-pipe runtime. One process per DC: each local stage is a thread that
 * interprets its program (pipe_prog_build()); compute is emulated by
 * sleeping until the op's deadline (payload fill and checksum verification
 * happen inside that window). A boundary between two local stages is a
 * shared-memory mailbox per channel; a boundary between DCs is one libsdr QP
 * (activations one way, gradients the other; message n of a direction is
 * micro-batch n % M of iteration n / M). DC 0 is the coordinator: every
 * other DC connects to it (TCP); it checks their configuration digests,
 * measures their clock offsets, relays the QP infos, and every iteration
 * sends each DC the start time and its QPs' rates (the controller,
 * pipe_cba.h) and gets its events back (pipe_proto.h). This file: pipe_run(),
 * the iterations, the rates and the controller's log; pipe_rt.h names the rest.
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

/* ---------------- rates ---------------- */

/* Apply the rate of the flow of channel @p ch (this DC sends it) to its QP. */
static int apply_rate(struct rt *r, uint32_t ch, uint64_t rate)
{
	uint32_t b = ch / 2;
	int rc;

	if (rate && rate < SDR_QP_RATE_MIN)
		rate = SDR_QP_RATE_MIN;
	if (rate > SDR_QP_RATE_MAX)
		rate = SDR_QP_RATE_MAX;
	if (r->qp_rate[b] == rate)
		return 0;
	pthread_mutex_lock(&r->sdr_mu);
	rc = sdr_qp_rate_set(r->qp_of[b], rate);
	pthread_mutex_unlock(&r->sdr_mu);
	if (rc) {
		fprintf(stderr, "sdr-pipe: sdr_qp_rate_set(channel %u, %llu bit/s): %s (%s)\n", ch,
			(unsigned long long)rate, sdr_strerror(rc), sdr_last_error(r->ctx));
		return rc;
	}
	r->qp_rate[b] = rate;
	return 0;
}

/* The START message of iteration @p it for DC @p k: its flows' rates. */
static void start_for(const struct rt *r, uint32_t it, double t, const struct pipe_alloc *a,
		      uint32_t k, struct pipe_start *s)
{
	s->iter = it;
	s->t_start = t;
	s->n = 0;
	for (uint32_t f = 0; f < r->fl.n; f++)
		if (r->fl.f[f].src_dc == k) {
			s->chan[s->n] = r->fl.f[f].chan;
			s->rate[s->n++] = a->rate[f];
		}
}

/* Apply a START's rates: each must be a channel this DC sends across DCs. */
static int apply_start(struct rt *r, const struct pipe_start *s)
{
	for (uint32_t i = 0; i < s->n; i++) {
		uint32_t ch = s->chan[i];
		int f = ch < PIPE_NCHAN(r->c->stages) ? r->fl.of_chan[ch] : -1;
		int rc;

		if (f < 0 || r->fl.f[f].src_dc != r->o->dc) {
			fprintf(stderr,
				"sdr-pipe: a rate for channel %u, which DC %u does not send\n", ch,
				r->o->dc);
			return -EPROTO;
		}
		if ((rc = apply_rate(r, ch, s->rate[i])))
			return rc;
	}
	return 0;
}

/* ---------------- the controller's log ---------------- */

static void ctl_log_line(const struct rt *r, uint32_t it, const struct pipe_pred_iter *pi,
			 const struct pipe_cba_label *lab)
{
	FILE *f = r->o->ctl_log;
	const struct pipe_cfg *c = r->c;
	uint8_t cb[PIPE_MAX_FLOWS];
	double wait[PIPE_MAX_FLOWS], slack;
	int first = 1;

	if (!f)
		return;
	pipe_cba_flow_labels(c, &r->fl, lab, cb, wait);
	fprintf(f,
		"{\"iter\":%u,\"policy\":\"%s\",\"iter_ms\":%.3f,\"bubble\":%.4f,\"cb\":%u,"
		"\"refused\":%u,\"undone\":%u,\"flows\":[",
		it, pipe_policy_name(r->o->policy ? r->o->policy->policy : PIPE_POLICY_NONE),
		pi->iter_time * 1e3, pi->bubble, pi->ncb, pi->alloc.nblocked, pi->alloc.undone);
	for (uint32_t i = 0; i < r->fl.n; i++) {
		const struct pipe_flow *x = &r->fl.f[i];

		fprintf(f, "%s{\"ch\":%u,\"src\":%u,\"dst\":%u,\"link\":", i ? "," : "", x->chan,
			x->src_dc, x->dst_dc);
		if (x->link >= 0)
			fprintf(f, "\"%s\"", r->net->link[x->link].name);
		else
			fprintf(f, "null");
		fprintf(f,
			",\"rate_bps\":%" PRIu64 ",\"req_bps\":%" PRIu64 ",\"refused\":%u,"
			"\"gave_bps\":%" PRIu64 ",\"cb\":%u,\"wait_ms\":%.3f",
			pi->alloc.rate[i], pi->alloc.req[i], pi->alloc.blocked[i],
			pi->alloc.gave[i], cb[i], wait[i] * 1e3);
		slack = pipe_cba_slack(c, r->net, &r->fl, lab, i, pi->alloc.rate[i], 0, NULL);
		if (isfinite(slack))
			fprintf(f, ",\"slack_ms\":%.3f", slack * 1e3);
		fprintf(f, "}");
	}
	fprintf(f, "],\"transfers\":[");
	for (uint32_t ch = 0; ch < PIPE_NCHAN(c->stages); ch++)
		for (uint32_t m = 0; m < c->micro; m++) {
			const struct pipe_cba_label *l = &lab[(size_t)ch * c->micro + m];

			if (!l->cross || !l->known)
				continue;
			fprintf(f, "%s{\"ch\":%u,\"m\":%u,\"cb\":%u,\"wait_ms\":%.3f",
				first ? "" : ",", ch, m, l->cb, l->wait * 1e3);
			if (isfinite(l->late))
				fprintf(f, ",\"late_ms\":%.3f", l->late * 1e3);
			fprintf(f, "}");
			first = 0;
		}
	fprintf(f, "]}\n");
	fflush(f);
}

/* ---------------- iterations ---------------- */

/* Append this DC's events of the current iteration to @p out. */
static int iter_events(struct rt *r, const uint32_t *mine, uint32_t nloc, struct pipe_events *out)
{
	for (uint32_t i = 0; i < nloc; i++) {
		const struct pipe_events *e = &r->ev[mine[i]];

		for (size_t k = r->ev_mark[mine[i]]; k < e->n; k++)
			if (pipe_events_add(out, &e->ev[k]))
				return -ENOMEM;
	}
	return 0;
}

/* Run iteration r->iter (start r->t_start) on the local stages. */
static void run_iter(struct rt *r, const uint32_t *mine, uint32_t nloc)
{
	for (uint32_t i = 0; i < nloc; i++)
		r->ev_mark[mine[i]] = r->ev[mine[i]].n;
	pthread_barrier_wait(&r->bar);
	pthread_barrier_wait(&r->bar);
	if (r->o->verbose) {
		struct timespec now;

		/* the wall clock: host/pipe/compete.sh times the iterations by it */
		clock_gettime(CLOCK_REALTIME, &now);
		fprintf(stderr, "dc%u: iteration %u done at %lld.%06ld (unix time)\n", r->o->dc,
			r->iter, (long long)now.tv_sec, now.tv_nsec / 1000);
	}
}

/* DC 0's iteration loop: decide, announce, run, collect, label. */
static int iterate_coordinator(struct rt *r, const uint32_t *mine, uint32_t nloc,
			       struct pipe_events *all, struct pipe_run_out *out)
{
	const struct pipe_cfg *c = r->c;
	struct pipe_policy_cfg none;
	const struct pipe_policy_cfg *pol = r->o->policy;
	struct pipe_alloc cur, next;
	struct pipe_start st;
	struct pipe_cba_label *lab = calloc((size_t)PIPE_NCHAN(c->stages) * c->micro, sizeof(*lab));
	char why[300];
	int rc = 0;

	if (!lab)
		return -ENOMEM;
	if (!pol) {
		pipe_policy_cfg_init(&none);
		pol = &none;
	}
	if ((rc = pipe_policy_alloc(c, r->net, &r->fl, pol, NULL, NULL, &cur, why, sizeof(why)))) {
		fprintf(stderr, "sdr-pipe: --policy %s: %s\n", pipe_policy_name(pol->policy), why);
		goto out;
	}
	if (rt_room(&r->out, &r->out_cap, PIPE_START_BYTES(PIPE_MAX_FLOWS))) {
		rc = -ENOMEM;
		goto out;
	}
	for (uint32_t it = 0; it < r->o->iters; it++) {
		double t = rt_clk(r) + START_AHEAD_S;
		struct pipe_pred_iter pi;
		struct pipe_metrics m;
		uint32_t len;
		int n;

		for (uint32_t k = 1; k < c->dcs; k++) {
			start_for(r, it, t, &cur, k, &st);
			if ((rc = rt_msg_send(r, r->fd[k], PIPE_MSG_START,
					      pipe_start_put(r->out, &st)))) {
				rt_proto_error("START", k, rc);
				goto out;
			}
		}
		start_for(r, it, t, &cur, 0, &st);
		if ((rc = apply_start(r, &st)))
			goto out;
		r->iter = it;
		r->t_start = t - r->o->clock_shift;
		run_iter(r, mine, nloc);
		if ((rc = iter_events(r, mine, nloc, all)))
			goto out;
		for (uint32_t k = 1; k < c->dcs; k++) {
			if ((rc = rt_msg_recv(r, r->fd[k], PIPE_MSG_EVENTS, NULL, &len)) ||
			    (n = pipe_events_get(r->in, len, c, k, it, all)) < 0) {
				rc = rc ? rc : n;
				rt_proto_error("events", k, rc);
				goto out;
			}
		}
		/* the merged log of this iteration: metrics, labels, the next rates */
		pipe_metrics_get(c, all, it, &m);
		n = pipe_cba_label(c, all, it, pol->intra_lat, lab);
		if (n < 0) {
			fprintf(stderr, "sdr-pipe: labels of iteration %u: %s\n", it, strerror(-n));
			rc = n;
			goto out;
		}
		cur.iter_time = m.iter_time; /* what these rates gave: the next decision's input */
		pi = (struct pipe_pred_iter){.iter_time = m.iter_time,
					     .bubble = m.bubble_all,
					     .ncb = (uint32_t)n,
					     .alloc = cur};
		if (out && out->it)
			out->it[it] = pi;
		ctl_log_line(r, it, &pi, lab);
		if (it + 1 < r->o->iters) {
			if ((rc = pipe_policy_alloc(c, r->net, &r->fl, pol, &cur, lab, &next, why,
						    sizeof(why)))) {
				fprintf(stderr, "sdr-pipe: --policy %s: %s\n",
					pipe_policy_name(pol->policy), why);
				goto out;
			}
			cur = next;
		}
	}
	for (uint32_t k = 1; k < c->dcs && !rc; k++)
		rc = rt_msg_send(r, r->fd[k], PIPE_MSG_BYE, 0);
out:
	free(lab);
	return rc;
}

/* Other DCs: START, apply the rates, run, send the events; BYE at the end. */
static int iterate_peer(struct rt *r, const uint32_t *mine, uint32_t nloc,
			struct pipe_events *local)
{
	static struct pipe_start st;
	uint32_t len;
	int rc;

	for (uint32_t it = 0; it < r->o->iters; it++) {
		size_t from = local->n;

		if ((rc = rt_msg_recv(r, r->fd[0], PIPE_MSG_START, NULL, &len)) ||
		    (rc = pipe_start_get(r->in, len, &st))) {
			rt_proto_error("START", 0, rc);
			return rc;
		}
		if (st.iter != it) {
			fprintf(stderr, "sdr-pipe: DC 0 started iteration %u, we expected %u\n",
				st.iter, it);
			return -EPROTO;
		}
		if ((rc = apply_start(r, &st)))
			return rc;
		r->iter = it;
		/* DC 0's clock -> ours (offset), -> CLOCK_MONOTONIC (shift) */
		r->t_start = st.t_start + r->offset - r->o->clock_shift;
		run_iter(r, mine, nloc);
		if ((rc = iter_events(r, mine, nloc, local)))
			return rc;
		len = (uint32_t)(local->n - from);
		if (rt_room(&r->out, &r->out_cap, PIPE_EVENTS_BYTES((size_t)len)))
			return -ENOMEM;
		if ((rc = rt_msg_send(r, r->fd[0], PIPE_MSG_EVENTS,
				      pipe_events_put(r->out, it, local->ev + from, len)))) {
			rt_proto_error("events", 0, rc);
			return rc;
		}
	}
	/* keep the QPs until DC 0 has everything */
	if ((rc = rt_msg_recv(r, r->fd[0], PIPE_MSG_BYE, NULL, &len))) {
		rt_proto_error("BYE", 0, rc);
		return rc;
	}
	return 0;
}

int pipe_run(const struct pipe_cfg *c, const struct pipe_prog *p, const struct pipe_rt_opts *o,
	     struct pipe_events *local, struct pipe_events *all, struct pipe_run_out *out)
{
	static struct rt r; /* large; one run per process */
	struct targ ta[PIPE_MAX_STAGES];
	pthread_t th[PIPE_MAX_STAGES];
	uint32_t nloc = 0, mine[PIPE_MAX_STAGES];
	int rc, threads = 0;

	if (c->dcs < 2 || o->dc >= c->dcs || o->iters == 0 || (o->dc == 0 && o->connect) ||
	    (o->dc != 0 && !o->connect) || !isfinite(o->clock_shift))
		return -EINVAL;
	memset(&r, 0, sizeof(r));
	r.c = c;
	r.p = p;
	r.o = o;
	for (uint32_t k = 0; k < PIPE_MAX_DC; k++)
		r.fd[k] = -1;
	pthread_mutex_init(&r.sdr_mu, NULL);
	r.net = pipe_net_of(c, &r.net_tmp);
	pipe_flows_get(c, r.net, &r.fl);
	if (out)
		memset(out->clock_offset, 0, sizeof(out->clock_offset)),
			memset(out->clock_rtt, 0, sizeof(out->clock_rtt));
	for (uint32_t s = 0; s < c->stages; s++)
		if (c->dc_of[s] == o->dc)
			mine[nloc++] = s;
	if (nloc == 0)
		return -EINVAL;
	rc = o->dc == 0 ? rt_boot_coordinator(&r) : rt_boot_peer(&r);
	if (rc)
		goto out;
	if (o->dc == 0) {
		for (uint32_t k = 1; k < c->dcs && !rc; k++)
			if ((rc = rt_clock_coordinator(&r, k, out)))
				rt_proto_error("clock offset", k, rc);
	} else if ((rc = rt_clock_peer(&r))) {
		rt_proto_error("clock offset", 0, rc);
	}
	if (rc || (rc = rt_create_qps(&r)) || (rc = rt_exchange_qps(&r)) ||
	    (rc = rt_setup_chans(&r)))
		goto out;
	pthread_barrier_init(&r.bar, NULL, nloc + 1);
	for (uint32_t i = 0; i < nloc; i++) {
		ta[i] = (struct targ){&r, mine[i]};
		if (pthread_create(&th[i], NULL, rt_stage_main, &ta[i]))
			rt_fatal("pthread_create failed");
		threads++;
	}
	if (o->dc == 0) {
		/* our own events go to all as each iteration ends, and to local */
		rc = iterate_coordinator(&r, mine, nloc, all, out);
		for (size_t k = 0; k < all->n && !rc; k++)
			if (c->dc_of[all->ev[k].stage] == 0)
				rc = pipe_events_add(local, &all->ev[k]);
	} else {
		rc = iterate_peer(&r, mine, nloc, local);
	}
	if (rc)
		rt_fatal("run failed: %s", strerror(-rc)); /* the stage threads wait at a barrier */
	for (int i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
out:
	for (uint32_t k = 0; k < PIPE_MAX_DC; k++)
		if (r.fd[k] >= 0)
			close(r.fd[k]);
	for (uint32_t s = 0; s < PIPE_MAX_STAGES; s++)
		pipe_events_free(&r.ev[s]);
	free(r.in);
	free(r.out);
	if (r.ctx)
		sdr_ctx_close(r.ctx);
	return rc;
}
