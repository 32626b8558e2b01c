/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-pipe: the network description between the DCs of a pipeline
 * (pipe_net.h): parser, lookups, the default network of a configuration, the
 * receiving daemon's per-peer link arguments, and the cross-DC flows of a
 * configuration (below the DES and the CBA policies, which both read them).
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipe_net.h"

static void net_clear(struct pipe_net *net)
{
	memset(net, 0, sizeof(*net));
	memset(net->pair, -1, sizeof(net->pair));
}

static int name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n >= PIPE_NET_NAME_MAX || !isalpha((unsigned char)s[0]))
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-' && s[i] != '.')
			return 0;
	return 1;
}

/* a DC number 0..PIPE_MAX_DC-1, the whole of [s, e) */
static int parse_dc(const char *s, const char *e, uint32_t *out)
{
	if (e - s != 1 || *s < '0' || *s >= '0' + PIPE_MAX_DC)
		return -1;
	*out = (uint32_t)(*s - '0');
	return 0;
}

/* "A[,B...]" into a DC mask */
static int parse_from(const char *s, uint8_t *mask)
{
	*mask = 0;
	while (*s) {
		const char *e = strchr(s, ',');
		uint32_t d;

		if (!e)
			e = s + strlen(s);
		if (parse_dc(s, e, &d) || (*mask & (1u << d)))
			return -1;
		*mask |= (uint8_t)(1u << d);
		s = *e ? e + 1 : e;
		if (*e && !*s)
			return -1; /* trailing comma */
	}
	return *mask ? 0 : -1;
}

/* Bernoulli loss plus the long-run Gilbert-Elliott loss of one path */
static double cfg_loss(const struct sdr_link_cfg *k)
{
	double ge = 0;

	if (k->ge && k->ge_p_gb + k->ge_p_bg > 0) {
		double pb = k->ge_p_gb / (k->ge_p_gb + k->ge_p_bg);

		ge = (1 - pb) * k->ge_loss_good + pb * k->ge_loss_bad;
	}
	return 1 - (1 - ge) * (1 - k->loss);
}

/* link @p l's path summaries from its @p n parsed paths */
static void set_paths(struct pipe_net_link *l, const struct sdr_link_cfg *cfg, unsigned n)
{
	l->cfg = cfg[0];
	l->npaths = n;
	for (unsigned p = 0; p < n; p++) {
		l->path[p].delay_ns = cfg[p].delay_ns;
		l->path[p].rate_bps = cfg[p].rate_bps;
		l->path[p].loss = cfg_loss(&cfg[p]);
	}
}

/* One "link" item: words[1..n-1]. */
static int parse_link(struct pipe_net *net, char **w, int n, int line, char *why, size_t whylen)
{
	struct pipe_net_link *l;
	struct sdr_link_cfg cfg[PIPE_NET_PATHS_MAX];
	char spec[4096] = "", err[600];
	int have_to = 0, have_from = 0;
	unsigned np = 0;
	size_t off = 0;

	if (n < 2 || !name_ok(w[1])) {
		sdr_link_seterr(why, whylen,
				"line %d: 'link' needs a name (a letter, then letters, digits, "
				"'_', '-', '.'; "
				"at most %u characters)",
				line, PIPE_NET_NAME_MAX - 1);
		return -EINVAL;
	}
	if (net->nlinks == PIPE_NET_MAX_LINKS) {
		sdr_link_seterr(why, whylen, "line %d: more than %u links", line,
				PIPE_NET_MAX_LINKS);
		return -EINVAL;
	}
	for (uint32_t i = 0; i < net->nlinks; i++)
		if (strcmp(net->link[i].name, w[1]) == 0) {
			sdr_link_seterr(why, whylen, "line %d: link name '%s' used twice", line,
					w[1]);
			return -EINVAL;
		}
	l = &net->link[net->nlinks];
	memset(l, 0, sizeof(*l));
	strcpy(l->name, w[1]);
	for (int i = 2; i < n; i++) {
		if (strncmp(w[i], "to=", 3) == 0) {
			uint32_t d;

			if (have_to || parse_dc(w[i] + 3, w[i] + strlen(w[i]), &d)) {
				sdr_link_seterr(why, whylen,
						"line %d: link %s: bad or repeated to= '%s' (one "
						"DC, 0..%d)",
						line, l->name, w[i] + 3, PIPE_MAX_DC - 1);
				return -EINVAL;
			}
			l->to = (uint8_t)d;
			have_to = 1;
		} else if (strncmp(w[i], "from=", 5) == 0) {
			if (have_from || parse_from(w[i] + 5, &l->from_mask)) {
				sdr_link_seterr(why, whylen,
						"line %d: link %s: bad or repeated from= '%s' (DCs "
						"0..%d, comma-separated, "
						"each once)",
						line, l->name, w[i] + 5, PIPE_MAX_DC - 1);
				return -EINVAL;
			}
			have_from = 1;
		} else {
			/* keys join with ','; '|' (a word, or a word's end) between paths */
			int sep = off && spec[off - 1] != '|' && w[i][0] != '|';
			int k = snprintf(spec + off, sizeof(spec) - off, "%s%s", sep ? "," : "",
					 w[i]);

			if (k < 0 || (size_t)k >= sizeof(spec) - off) {
				sdr_link_seterr(why, whylen,
						"line %d: link %s: emulator keys too long", line,
						l->name);
				return -EINVAL;
			}
			off += (size_t)k;
		}
	}
	if (!have_to || !have_from) {
		sdr_link_seterr(why, whylen, "line %d: link %s needs to=DC and from=DC[,DC...]",
				line, l->name);
		return -EINVAL;
	}
	if (l->from_mask & (1u << l->to)) {
		sdr_link_seterr(why, whylen, "line %d: link %s: DC %u sends to itself", line,
				l->name, l->to);
		return -EINVAL;
	}
	if (sdr_link_parse_paths(spec, cfg, &np, err, sizeof(err))) {
		sdr_link_seterr(why, whylen, "line %d: link %s: %s", line, l->name, err);
		return -EINVAL;
	}
	set_paths(l, cfg, np);
	if (sdr_link_paths_format(cfg, np, l->spec, sizeof(l->spec)) >= (int)sizeof(l->spec)) {
		sdr_link_seterr(why, whylen, "line %d: link %s: emulator keys too long", line,
				l->name);
		return -EINVAL;
	}
	for (uint32_t d = 0; d < PIPE_MAX_DC; d++)
		if (l->from_mask & (1u << d)) {
			int8_t *p = &net->pair[d][l->to];

			if (*p >= 0) {
				sdr_link_seterr(
					why, whylen,
					"line %d: link %s: DC %u -> DC %u is already link %s", line,
					l->name, d, l->to, net->link[*p].name);
				return -EINVAL;
			}
			*p = (int8_t)net->nlinks;
		}
	net->nlinks++;
	return 0;
}

int pipe_net_parse(const char *text, struct pipe_net *net, char *why, size_t whylen)
{
	char *buf = strdup(text ? text : ""), *p, *save = NULL;
	uint32_t dcs_set = 0, maxdc = 0;
	int line = 0, rc = 0;

	if (!buf)
		return -ENOMEM;
	net_clear(net);
	for (p = buf; *p; p++)
		if (*p == ';')
			*p = '\n';
	/* strtok_r on "\n" would merge empty lines and lose the numbering */
	for (char *ln = buf, *next; ln && !rc; ln = next) {
		char *w[64], *c;
		int n = 0;

		next = strchr(ln, '\n');
		if (next)
			*next++ = '\0';
		line++;
		if ((c = strchr(ln, '#')))
			*c = '\0';
		for (char *t = strtok_r(ln, " \t\r", &save); t;
		     t = strtok_r(NULL, " \t\r", &save)) {
			if (n == 64) {
				sdr_link_seterr(why, whylen, "line %d: too many words", line);
				rc = -EINVAL;
				break;
			}
			w[n++] = t;
		}
		if (rc || n == 0)
			continue;
		if (strcmp(w[0], "link") == 0) {
			rc = parse_link(net, w, n, line, why, whylen);
		} else if (strcmp(w[0], "dcs") == 0) {
			char *e;
			unsigned long d = n == 2 ? strtoul(w[1], &e, 10) : 0;

			if (n != 2 || dcs_set || *e || d < 2 || d > PIPE_MAX_DC) {
				sdr_link_seterr(why, whylen, "line %d: 'dcs N' once, 2 <= N <= %d",
						line, PIPE_MAX_DC);
				rc = -EINVAL;
			}
			dcs_set = (uint32_t)d;
		} else {
			sdr_link_seterr(why, whylen,
					"line %d: unknown item '%s' (known: link, dcs)", line,
					w[0]);
			rc = -EINVAL;
		}
	}
	free(buf);
	if (rc)
		return rc;
	if (net->nlinks == 0) {
		sdr_link_seterr(why, whylen, "no link in the network description");
		return -EINVAL;
	}
	for (uint32_t i = 0; i < net->nlinks; i++) {
		const struct pipe_net_link *l = &net->link[i];

		for (uint32_t d = 0; d < PIPE_MAX_DC; d++)
			if (((l->from_mask >> d) & 1 || l->to == d) && d > maxdc)
				maxdc = d;
	}
	if (dcs_set && maxdc >= dcs_set) {
		sdr_link_seterr(why, whylen, "DC %u named, but 'dcs %u' (DCs 0..%u)", maxdc,
				dcs_set, dcs_set - 1);
		return -EINVAL;
	}
	net->dcs = dcs_set ? dcs_set : maxdc + 1;
	return 0;
}

int pipe_net_load(const char *path, struct pipe_net *net, char *why, size_t whylen)
{
	FILE *f = fopen(path, "r");
	char *buf;
	size_t n;
	int rc;

	if (!f) {
		rc = -errno;
		sdr_link_seterr(why, whylen, "%s: %s", path, strerror(-rc));
		return rc;
	}
	buf = malloc(PIPE_NET_TEXT_MAX + 1);
	if (!buf) {
		fclose(f);
		return -ENOMEM;
	}
	n = fread(buf, 1, PIPE_NET_TEXT_MAX + 1, f);
	rc = ferror(f) ? -EIO : 0;
	fclose(f);
	if (!rc && n > PIPE_NET_TEXT_MAX) {
		sdr_link_seterr(why, whylen, "%s: longer than %u bytes", path, PIPE_NET_TEXT_MAX);
		rc = -EINVAL;
	}
	if (!rc && memchr(buf, '\0', n)) {
		sdr_link_seterr(why, whylen, "%s: not a text file", path);
		rc = -EINVAL;
	}
	if (!rc) {
		buf[n] = '\0';
		rc = pipe_net_parse(buf, net, why, whylen);
	} else if (rc == -EIO) {
		sdr_link_seterr(why, whylen, "%s: read error", path);
	}
	free(buf);
	return rc;
}

void pipe_net_default(const struct pipe_cfg *c, struct pipe_net *net)
{
	uint32_t D = c->dcs >= 2 ? c->dcs : 2;

	net_clear(net);
	net->dcs = D;
	for (uint32_t a = 0; a < D; a++)
		for (uint32_t b = 0; b < D; b++) {
			struct pipe_net_link *l;

			if (a == b)
				continue;
			l = &net->link[net->nlinks];
			snprintf(l->name, sizeof(l->name), "d%u-d%u", a, b);
			l->to = (uint8_t)b;
			l->from_mask = (uint8_t)(1u << a);
			sdr_link_cfg_default(&l->cfg);
			l->cfg.delay_ns = (uint64_t)llround(c->rtt / 2 * 1e9);
			l->cfg.rate_bps = c->rate_bps;
			l->cfg.buffer_bytes = SDR_LINK_DEFAULT_BUFFER;
			l->cfg.loss = c->loss;
			sdr_link_cfg_format(&l->cfg, l->spec, sizeof(l->spec));
			set_paths(l, &l->cfg, 1);
			net->pair[a][b] = (int8_t)net->nlinks++;
		}
}

const struct pipe_net *pipe_net_of(const struct pipe_cfg *c, struct pipe_net *tmp)
{
	if (c->net)
		return c->net;
	pipe_net_default(c, tmp);
	return tmp;
}

int pipe_net_lookup(const struct pipe_net *net, uint32_t from, uint32_t to)
{
	if (from >= net->dcs || to >= net->dcs)
		return -1;
	return net->pair[from][to];
}

double pipe_net_delay(const struct pipe_net *net, uint32_t from, uint32_t to)
{
	int l = pipe_net_lookup(net, from, to);
	uint64_t d = 0;

	if (l < 0)
		return 0;
	for (uint32_t p = 0; p < pipe_net_paths(net, l); p++)
		if (net->link[l].path[p].delay_ns > d)
			d = net->link[l].path[p].delay_ns;
	return (double)d * 1e-9;
}

double pipe_net_delay_ctl(const struct pipe_net *net, uint32_t from, uint32_t to)
{
	int l = pipe_net_lookup(net, from, to);
	uint64_t sum = 0;

	if (l < 0)
		return 0;
	if (pipe_net_paths(net, l) == 1)
		return pipe_net_delay(net, from, to);
	for (uint32_t p = 0; p < pipe_net_paths(net, l); p++)
		sum += net->link[l].path[p].delay_ns;
	return (double)sum / pipe_net_paths(net, l) * 1e-9;
}

uint64_t pipe_net_rate(const struct pipe_net *net, int l)
{
	uint64_t r = 0;

	if (l < 0)
		return 0;
	for (uint32_t p = 0; p < pipe_net_paths(net, l); p++) {
		if (!net->link[l].path[p].rate_bps)
			return 0;
		r += net->link[l].path[p].rate_bps;
	}
	return r;
}

uint32_t pipe_net_paths(const struct pipe_net *net, int l)
{
	return l < 0 || net->link[l].npaths < 1 ? 1 : net->link[l].npaths;
}

double pipe_net_path_share(const struct pipe_net *net, int l, uint32_t p)
{
	uint32_t n = pipe_net_paths(net, l);
	uint64_t sum = pipe_net_rate(net, l);

	if (n == 1)
		return p == 0 ? 1 : 0;
	if (p >= n)
		return 0;
	return sum ? (double)net->link[l].path[p].rate_bps / (double)sum : 1.0 / n;
}

double pipe_net_loss(const struct pipe_net *net, int l)
{
	double loss = 0;

	if (l < 0)
		return 0;
	if (pipe_net_paths(net, l) == 1)
		return net->link[l].path[0].loss;
	for (uint32_t p = 0; p < pipe_net_paths(net, l); p++)
		loss += pipe_net_path_share(net, l, p) * net->link[l].path[p].loss;
	return loss;
}

int pipe_net_check(const struct pipe_net *net, const struct pipe_cfg *c, uint64_t *unmapped,
		   char *why, size_t whylen)
{
	uint64_t um = 0;

	if (net->dcs < c->dcs) {
		sdr_link_seterr(why, whylen, "the placement uses %u DCs, the network has %u",
				c->dcs, net->dcs);
		return -EINVAL;
	}
	for (uint32_t s = 0; s + 1 < c->stages; s++) {
		uint32_t a = c->dc_of[s], b = c->dc_of[s + 1];

		if (a == b)
			continue;
		if (net->pair[a][b] < 0)
			um |= 1ull << (a * PIPE_MAX_DC + b);
		if (net->pair[b][a] < 0)
			um |= 1ull << (b * PIPE_MAX_DC + a);
	}
	if (unmapped)
		*unmapped = um;
	return 0;
}

int pipe_net_link_args(const struct pipe_net *net, uint32_t dc, const char *const *addr, char *buf,
		       size_t len)
{
	size_t off = 0;

	if (dc >= net->dcs || !addr)
		return -EINVAL;
	if (len)
		buf[0] = '\0';
	for (uint32_t i = 0; i < net->nlinks; i++) {
		const struct pipe_net_link *l = &net->link[i];
		int k;

		if (l->to != dc)
			continue;
		k = snprintf(off < len ? buf + off : NULL, off < len ? len - off : 0,
			     "%s:", l->name);
		off += (size_t)k;
		for (uint32_t d = 0, first = 1; d < net->dcs; d++) {
			struct in_addr ia;

			if (!(l->from_mask & (1u << d)))
				continue;
			if (!addr[d] || inet_pton(AF_INET, addr[d], &ia) != 1)
				return -EINVAL;
			k = snprintf(off < len ? buf + off : NULL, off < len ? len - off : 0,
				     "%s%s", first ? "" : "+", addr[d]);
			off += (size_t)k;
			first = 0;
		}
		/* the spec without blanks: its paths' " | " as "|" */
		k = snprintf(off < len ? buf + off : NULL, off < len ? len - off : 0, ":");
		off += (size_t)k;
		for (const char *s = l->spec; *s; s++)
			if (*s != ' ') {
				if (off + 1 < len)
					buf[off] = *s;
				off++;
			}
		k = snprintf(off < len ? buf + off : NULL, off < len ? len - off : 0, "\n");
		off += (size_t)k;
	}
	if (off >= len)
		return -ENOSPC;
	return (int)off;
}

int pipe_net_write(FILE *f, const struct pipe_net *net)
{
	fprintf(f, "dcs %u\n", net->dcs);
	for (uint32_t i = 0; i < net->nlinks; i++) {
		const struct pipe_net_link *l = &net->link[i];
		const char *s = l->spec;

		fprintf(f, "link %s to=%u from=", l->name, l->to);
		for (uint32_t d = 0, first = 1; d < PIPE_MAX_DC; d++)
			if (l->from_mask & (1u << d)) {
				fprintf(f, "%s%u", first ? "" : ",", d);
				first = 0;
			}
		/* the canonical spec's commas become the format's blanks */
		if (*s)
			fputc(' ', f);
		for (; *s; s++)
			fputc(*s == ',' ? ' ' : *s, f);
		fputc('\n', f);
	}
	return ferror(f) ? -EIO : 0;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	return h * 0xff51afd7ed558ccdull;
}

static uint64_t mix_str(uint64_t h, const char *s)
{
	for (; *s; s++)
		h = mix(h, (unsigned char)*s);
	return mix(h, 0);
}

uint64_t pipe_net_digest(const struct pipe_net *net)
{
	uint64_t h = 0x504950454e455421ull;

	h = mix(h, net->dcs);
	h = mix(h, net->nlinks);
	for (uint32_t i = 0; i < net->nlinks; i++) {
		h = mix_str(h, net->link[i].name);
		h = mix(h, net->link[i].to);
		h = mix(h, net->link[i].from_mask);
		h = mix_str(h, net->link[i].spec);
	}
	return h;
}

/* ---------------- flows ---------------- */

void pipe_flows_get(const struct pipe_cfg *c, const struct pipe_net *net, struct pipe_flows *fl)
{
	memset(fl, 0, sizeof(*fl));
	for (uint32_t ch = 0; ch < 2 * PIPE_MAX_STAGES; ch++)
		fl->of_chan[ch] = -1;
	for (uint32_t ch = 0; ch < PIPE_NCHAN(c->stages); ch++) {
		uint32_t a = c->dc_of[pipe_ch_src(ch)], b = c->dc_of[pipe_ch_dst(ch)];
		struct pipe_flow *f;

		if (a == b)
			continue;
		f = &fl->f[fl->n];
		f->chan = (uint16_t)ch;
		f->src_dc = (uint8_t)a;
		f->dst_dc = (uint8_t)b;
		f->link = (int16_t)pipe_net_lookup(net, a, b);
		fl->of_chan[ch] = (int16_t)fl->n++;
	}
}
