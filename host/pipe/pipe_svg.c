/* SPDX-License-Identifier: BSD-3-Clause */
/* sdr-pipe: SVG Gantt chart of measured and predicted iterations. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "pipe.h"
#include "pipe_net.h"

#define W_PX 1100.0
#define X0 70.0
#define ROW 22.0

static double span_of(const struct pipe_events *e, uint32_t iter, const struct pipe_des_out *p)
{
	double t = 0;

	if (e)
		for (size_t i = 0; i < e->n; i++)
			if (e->ev[i].iter == iter && e->ev[i].t1 > t)
				t = e->ev[i].t1;
	if (p) {
		for (size_t i = 0; i < p->ev.n; i++)
			if (p->ev.ev[i].t1 > t)
				t = p->ev.ev[i].t1;
		for (size_t i = 0; i < p->ntx; i++)
			if (p->tx[i].t_arrive > t)
				t = p->tx[i].t_arrive;
	}
	return t > 0 ? t : 1;
}

/* One chart row per link the prediction used (in link order; the pairs no
 * link carries share the last one): row_of[link + 1], -1 = unused. */
static uint32_t link_rows(const struct pipe_des_out *pred, int *row_of)
{
	uint8_t used[PIPE_NET_MAX_LINKS + 1] = {0};
	uint32_t n = 0;

	for (size_t i = 0; pred && i < pred->ntx; i++)
		used[pred->tx[i].link + 1] = 1;
	for (uint32_t l = 1; l <= PIPE_NET_MAX_LINKS; l++)
		row_of[l] = used[l] ? (int)n++ : -1;
	row_of[0] = used[0] ? (int)n++ : -1;
	return n;
}

static void panel(FILE *f, const struct pipe_cfg *c, const struct pipe_events *e, uint32_t iter,
		  const struct pipe_des_out *pred, double y0, double span, const char *label)
{
	double sx = (W_PX - X0 - 10) / span;
	int row_of[PIPE_NET_MAX_LINKS + 1];
	uint32_t nlr = link_rows(pred, row_of), rows = c->stages + nlr;
	struct pipe_net tmp;
	const struct pipe_net *net = pipe_net_of(c, &tmp);
	double step = pow(10, floor(log10(span / 5)));
	struct pipe_metrics m;

	if (span / step > 10)
		step *= 2;
	pipe_metrics_get(c, e, iter, &m);
	fprintf(f,
		"<text x='4' y='%.1f' font-weight='bold'>%s: iteration %.1f ms, bubble %.1f %%"
		"</text>\n",
		y0 + 14, label, m.iter_time * 1e3, m.bubble_all * 100);
	y0 += 22;
	for (double t = 0; t <= span + 1e-12; t += step) {
		double x = X0 + t * sx;

		fprintf(f, "<line x1='%.1f' y1='%.1f' x2='%.1f' y2='%.1f' stroke='#ddd'/>\n", x, y0,
			x, y0 + rows * ROW);
		fprintf(f, "<text x='%.1f' y='%.1f' font-size='9' text-anchor='middle'>%g</text>\n",
			x, y0 + rows * ROW + 10, t * 1e3);
	}
	for (uint32_t s = 0; s < c->stages; s++)
		fprintf(f, "<text x='4' y='%.1f' font-size='11'>s%u dc%u</text>\n",
			y0 + s * ROW + 15, s, c->dc_of[s]);
	for (int l = -1; l < (int)PIPE_NET_MAX_LINKS; l++)
		if (row_of[l + 1] >= 0)
			fprintf(f, "<text x='4' y='%.1f' font-size='11'>%s</text>\n",
				y0 + (c->stages + (uint32_t)row_of[l + 1]) * ROW + 15,
				l >= 0 && (uint32_t)l < net->nlinks ? net->link[l].name
								    : "no link");
	for (size_t i = 0; i < e->n; i++) {
		const struct pipe_event *x = &e->ev[i];
		double y = y0 + x->stage * ROW, w = (x->t1 - x->t0) * sx;

		if (x->iter != iter || x->stage >= c->stages)
			continue;
		if (x->kind == PIPE_I_COMPUTE) {
			fprintf(f,
				"<rect x='%.2f' y='%.1f' width='%.2f' height='%.1f' fill='%s' "
				"stroke='#fff' stroke-width='0.5'><title>%c%u</title></rect>\n",
				X0 + x->t0 * sx, y + 2, w, ROW - 4,
				x->op == PIPE_F ? "#4a7fd6" : "#3fa34d",
				x->op == PIPE_F ? 'F' : 'B', x->m);
			if (w > 14)
				fprintf(f,
					"<text x='%.2f' y='%.1f' font-size='9' fill='#fff' "
					"text-anchor='middle'>%u</text>\n",
					X0 + (x->t0 + x->t1) / 2 * sx, y + 14, x->m);
		} else if ((x->kind == PIPE_I_WAIT_RECV || x->kind == PIPE_I_WAIT_SEND) &&
			   w > 0.2) {
			fprintf(f,
				"<rect x='%.2f' y='%.1f' width='%.2f' height='5' fill='#d9534f'>"
				"<title>wait %s ch%u m%u</title></rect>\n",
				X0 + x->t0 * sx, y + ROW - 7, w,
				x->kind == PIPE_I_WAIT_RECV ? "recv" : "send", x->chan, x->m);
		}
	}
	if (pred)
		for (size_t i = 0; i < pred->ntx; i++) {
			const struct pipe_tx *t = &pred->tx[i];
			double y = y0 + (c->stages + (uint32_t)row_of[t->link + 1]) * ROW;

			fprintf(f,
				"<rect x='%.2f' y='%.1f' width='%.2f' height='%.1f' fill='%s' "
				"opacity='0.9'><title>ch%u m%u</title></rect>\n",
				X0 + t->t_start * sx, y + 4,
				fmax((t->t_end - t->t_start) * sx, 0.5), ROW - 10,
				t->chan & 1 ? "#8e5ea2" : "#e8a33d", t->chan, t->m);
			fprintf(f,
				"<line x1='%.2f' y1='%.1f' x2='%.2f' y2='%.1f' stroke='%s' "
				"stroke-width='1'/>\n",
				X0 + t->t_end * sx, y + ROW / 2, X0 + t->t_arrive * sx, y + ROW / 2,
				t->chan & 1 ? "#8e5ea2" : "#e8a33d");
		}
}

int pipe_svg_write(const char *path, const struct pipe_cfg *c, const struct pipe_events *meas,
		   uint32_t meas_iter, const struct pipe_des_out *pred, const char *title)
{
	FILE *f = fopen(path, "w");
	double span = span_of(meas, meas_iter, pred);
	double ph_m = meas ? 22 + c->stages * ROW + 24 : 0;
	int row_of[PIPE_NET_MAX_LINKS + 1];
	double ph_p = pred ? 22 + (c->stages + link_rows(pred, row_of)) * ROW + 24 : 0;
	double h = 30 + ph_m + ph_p + 20;

	if (!f)
		return -errno;
	fprintf(f,
		"<?xml version='1.0' encoding='UTF-8'?>\n<svg xmlns='http://www.w3.org/2000/svg' "
		"width='%.0f' height='%.0f' font-family='sans-serif' font-size='12'>\n"
		"<rect width='100%%' height='100%%' fill='#fff'/>\n"
		"<text x='4' y='16' font-size='13'>%s (ms; F blue, B green, waits red, "
		"link: activations orange, gradients purple; line = propagation)</text>\n",
		W_PX, h, title ? title : "sdr-pipe");
	if (meas)
		panel(f, c, meas, meas_iter, NULL, 30, span, "measured");
	if (pred)
		panel(f, c, &pred->ev, 0, pred, 30 + ph_m, span, "predicted (DES)");
	fprintf(f, "</svg>\n");
	return fclose(f) ? -errno : 0;
}
