/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Long-haul link emulator, per-peer profiles: parsing "[NAME:]IP[+IP...]:SPEC",
 * the lane of a frame by its source address (and its path by its UDP source
 * port), one struct sdr_link per lane.
 * See sdr_link_peers.h and docs/link-emulator.md "Per-peer links".
 */
#include "sdr_link_peers.h"
#include "sdr_wire.h" /* sdr_parse_ipv4, sdr_format_ipv4 */

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#define ETH_HLEN 14u
#define ETH_TYPE_IPV4 0x0800u
#define ETH_TYPE_VLAN 0x8100u
#define ETH_TYPE_IPV6 0x86DDu
#define IPV4_SRC_OFF 12u
#define IPV4_MIN_HLEN 20u
#define PROFILE_SPEC_MAX 4096u

int sdr_link_plan_init_paths(struct sdr_link_plan *p, const struct sdr_link_cfg *dflt,
			     unsigned npaths)
{
	if (dflt != NULL && (npaths < 1 || npaths > SDR_LINK_PATHS_MAX))
		return -EINVAL;
	memset(p, 0, sizeof(*p));
	if (dflt == NULL) {
		struct sdr_link_profile *d = &p->lane[0];

		p->nlanes = 1;
		snprintf(d->name, sizeof(d->name), "%s", SDR_LINK_DEFAULT_LANE_NAME);
		d->npaths = 1;
		sdr_link_cfg_default(&d->cfg);
		d->cfg.limit = SDR_LINK_PERFECT_LIMIT;
		return 0;
	}
	p->nlanes = npaths;
	for (unsigned k = 0; k < npaths; k++) {
		struct sdr_link_profile *d = &p->lane[k];

		if (npaths > 1)
			snprintf(d->name, sizeof(d->name), "%s/p%u", SDR_LINK_DEFAULT_LANE_NAME, k);
		else
			snprintf(d->name, sizeof(d->name), "%s", SDR_LINK_DEFAULT_LANE_NAME);
		d->cfg = dflt[k];
		d->npaths = (uint8_t)npaths;
		d->path = (uint8_t)k;
		d->emulated = true;
	}
	return 0;
}

void sdr_link_plan_init(struct sdr_link_plan *p, const struct sdr_link_cfg *dflt)
{
	(void)sdr_link_plan_init_paths(p, dflt, 1);
}

int sdr_link_plan_init_spec(struct sdr_link_plan *p, const char *spec, char *err, size_t errlen)
{
	struct sdr_link_cfg path[SDR_LINK_PATHS_MAX];
	unsigned n = 0;
	int rc;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (spec == NULL) {
		sdr_link_plan_init(p, NULL);
		return 0;
	}
	rc = sdr_link_parse_paths(spec, path, &n, err, errlen);
	return rc ? rc : sdr_link_plan_init_paths(p, path, n);
}

unsigned sdr_link_plan_default_lane(const struct sdr_link_plan *p)
{
	return p->nlanes - 1u - p->lane[p->nlanes - 1].path;
}

static bool name_ok(const char *s, size_t n)
{
	if (n == 0 || n >= SDR_LINK_PROFILE_NAME_MAX || !isalpha((unsigned char)s[0]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && s[i] != '_' && s[i] != '-' && s[i] != '.')
			return false;
	return true;
}

/* Length of the profile name in a lane name (NAME or NAME/pK). */
static size_t group_len(const char *name)
{
	return strcspn(name, "/");
}

int sdr_link_plan_add(struct sdr_link_plan *p, const char *spec, char *err, size_t errlen)
{
	char buf[PROFILE_SPEC_MAX], *ips, *link, *c;
	struct sdr_link_profile prof;
	struct sdr_link_cfg path[SDR_LINK_PATHS_MAX];
	unsigned nprof = 0, npaths = 0, first = sdr_link_plan_default_lane(p);
	unsigned ndflt = p->nlanes - first;
	char sub[512];

	for (unsigned i = 0; i < first; i++)
		nprof += p->lane[i].path == 0;

	if (err != NULL && errlen > 0)
		err[0] = '\0';
	if (spec == NULL || strlen(spec) >= sizeof(buf)) {
		sdr_link_seterr(err, errlen, "link peer: %s",
				spec ? "longer than 4095 characters" : "missing");
		return -EINVAL;
	}
	if (nprof >= SDR_LINK_PROFILES_MAX) {
		sdr_link_seterr(err, errlen, "link peer: more than %u profiles",
				SDR_LINK_PROFILES_MAX);
		return -ENOSPC;
	}
	strcpy(buf, spec);
	memset(&prof, 0, sizeof(prof));
	prof.emulated = true;
	/* [NAME:] - a name starts with a letter, an address with a digit */
	ips = buf;
	while (isspace((unsigned char)*ips))
		ips++;
	if (isalpha((unsigned char)*ips)) {
		c = strchr(ips, ':');
		if (c == NULL || !name_ok(ips, (size_t)(c - ips))) {
			sdr_link_seterr(err, errlen,
					"link peer '%s': a profile is [NAME:]IP[+IP...]:SPEC; NAME "
					"is a letter"
					" then letters, digits, '_', '-', '.' (at most %u)",
					spec, SDR_LINK_PROFILE_NAME_MAX - 1);
			return -EINVAL;
		}
		*c = '\0';
		snprintf(prof.name, sizeof(prof.name), "%s", ips);
		ips = c + 1;
	} else {
		snprintf(prof.name, sizeof(prof.name), "peer%u", nprof);
	}
	if (strcmp(prof.name, SDR_LINK_DEFAULT_LANE_NAME) == 0) {
		sdr_link_seterr(err, errlen, "link peer '%s': the name '%s' is the default lane's",
				spec, SDR_LINK_DEFAULT_LANE_NAME);
		return -EINVAL;
	}
	for (unsigned i = 0; i < first; i++)
		if (group_len(p->lane[i].name) == strlen(prof.name) &&
		    strncmp(p->lane[i].name, prof.name, strlen(prof.name)) == 0) {
			sdr_link_seterr(err, errlen,
					"link peer '%s': a profile named '%s' exists already", spec,
					prof.name);
			return -EINVAL;
		}
	link = strchr(ips, ':');
	if (link == NULL) {
		sdr_link_seterr(err, errlen,
				"link peer '%s': no ':' before the link description"
				" ([NAME:]IP[+IP...]:SPEC; an empty SPEC is a perfect link)",
				spec);
		return -EINVAL;
	}
	*link++ = '\0';
	/* IP[+IP...] */
	for (char *a = ips;;) {
		char *plus = strchr(a, '+');
		uint32_t ip;

		if (plus != NULL)
			*plus = '\0';
		while (isspace((unsigned char)*a))
			a++;
		for (char *e = a + strlen(a); e > a && isspace((unsigned char)e[-1]);)
			*--e = '\0';
		if (sdr_parse_ipv4(a, &ip) != 0) {
			sdr_link_seterr(err, errlen, "link peer '%s': '%s' is not an IPv4 address",
					spec, a);
			return -EINVAL;
		}
		for (unsigned i = 0; i < prof.naddr; i++)
			if (prof.addr[i] == ip) {
				sdr_link_seterr(err, errlen, "link peer '%s': %s given twice", spec,
						a);
				return -EINVAL;
			}
		for (unsigned i = 0; i < p->naddr; i++)
			if (p->addr[i] == ip) {
				sdr_link_seterr(err, errlen,
						"link peer '%s': %s is already in profile '%s'",
						spec, a, p->lane[p->lane_of[i]].name);
				return -EINVAL;
			}
		if (p->naddr + prof.naddr >= SDR_LINK_PEER_ADDRS_MAX) {
			sdr_link_seterr(err, errlen,
					"link peer: more than %u addresses in all profiles",
					SDR_LINK_PEER_ADDRS_MAX);
			return -ENOSPC;
		}
		prof.addr[prof.naddr++] = ip;
		if (plus == NULL)
			break;
		a = plus + 1;
	}
	if (sdr_link_parse_paths(link, path, &npaths, sub, sizeof(sub)) != 0) {
		sdr_link_seterr(err, errlen, "link peer '%s': %s", prof.name, sub);
		return -EINVAL;
	}
	if (p->nlanes + npaths > SDR_LINK_LANES_MAX) {
		sdr_link_seterr(err, errlen,
				"link peer '%s': more than %u lanes in all (a lane per path, the"
				" default lane's included)",
				prof.name, SDR_LINK_LANES_MAX);
		return -ENOSPC;
	}
	/* insert before the default lane's paths: one lane per path */
	memmove(&p->lane[first + npaths], &p->lane[first], ndflt * sizeof(p->lane[0]));
	for (unsigned k = 0; k < npaths; k++) {
		struct sdr_link_profile *l = &p->lane[first + k];

		*l = prof;
		l->cfg = path[k];
		l->npaths = (uint8_t)npaths;
		l->path = (uint8_t)k;
		if (npaths > 1) /* (a name is shorter than the room by "/pK") */
			snprintf(l->name, sizeof(l->name), "%.*s/p%c",
				 (int)(SDR_LINK_PROFILE_NAME_MAX - 1), prof.name, (char)('0' + k));
	}
	for (unsigned i = 0; i < prof.naddr; i++) {
		p->addr[p->naddr] = prof.addr[i];
		p->lane_of[p->naddr++] = (uint8_t)first;
	}
	p->nlanes += npaths;
	return 0;
}

unsigned sdr_link_plan_lane(const struct sdr_link_plan *p, uint32_t ip)
{
	for (unsigned i = 0; i < p->naddr; i++)
		if (p->addr[i] == ip)
			return p->lane_of[i];
	return sdr_link_plan_default_lane(p);
}

bool sdr_link_plan_active(const struct sdr_link_plan *p)
{
	return p->nlanes > 1 || p->lane[0].emulated;
}

int sdr_link_frame_src_ipv4(const uint8_t *f, uint32_t len, uint32_t *ip)
{
	uint32_t l3 = ETH_HLEN;
	unsigned type;

	if (len < ETH_HLEN)
		return -1;
	type = (unsigned)f[12] << 8 | f[13];
	if (type == ETH_TYPE_VLAN) {
		if (len < ETH_HLEN + 4)
			return -1;
		type = (unsigned)f[16] << 8 | f[17];
		l3 += 4;
	}
	if (type != ETH_TYPE_IPV4 || len < l3 + IPV4_MIN_HLEN || (f[l3] >> 4) != 4)
		return -1;
	f += l3 + IPV4_SRC_OFF;
	*ip = (uint32_t)f[0] << 24 | (uint32_t)f[1] << 16 | (uint32_t)f[2] << 8 | f[3];
	return 0;
}

/* The L3 header of an untagged or single-tagged frame: offset and
 * ethertype, or 0 when too short. */
static uint32_t frame_l3(const uint8_t *f, uint32_t len, unsigned *type)
{
	uint32_t l3 = ETH_HLEN;

	if (len < ETH_HLEN)
		return 0;
	*type = (unsigned)f[12] << 8 | f[13];
	if (*type == ETH_TYPE_VLAN) {
		if (len < ETH_HLEN + 4)
			return 0;
		*type = (unsigned)f[16] << 8 | f[17];
		l3 += 4;
	}
	return l3;
}

unsigned sdr_link_path_of_port(uint16_t port, unsigned npaths)
{
	if (npaths <= 1)
		return 0;
	return (((uint32_t)port * 2654435761u) >> 16) % npaths;
}

unsigned sdr_link_frame_path(const uint8_t *f, uint32_t len, unsigned npaths)
{
	unsigned type = 0;
	uint32_t l3, l4;
	unsigned sport, dport;

	if (npaths <= 1)
		return 0;
	l3 = frame_l3(f, len, &type);
	if (l3 == 0 || type != ETH_TYPE_IPV4 || len < l3 + IPV4_MIN_HLEN || (f[l3] >> 4) != 4)
		return 0;
	if (((f[l3 + 6] & 0x1f) | f[l3 + 7]) != 0)
		return 0; /* a fragment after the first: no ports */
	l4 = l3 + (f[l3] & 15u) * 4u;
	if ((f[l3] & 15u) < 5 || len < l4 + 4)
		return 0;
	sport = (unsigned)f[l4] << 8 | f[l4 + 1];
	dport = (unsigned)f[l4 + 2] << 8 | f[l4 + 3];
	if (f[l3 + 9] == 17) /* UDP */
		return sdr_link_path_of_port((uint16_t)sport, npaths);
	if (f[l3 + 9] == 6) /* TCP */
		return sdr_link_path_of_port((uint16_t)(sport ^ dport), npaths);
	return 0;
}

int sdr_link_frame_ecn(const uint8_t *f, uint32_t len)
{
	unsigned type = 0;
	uint32_t l3 = frame_l3(f, len, &type);

	if (l3 == 0)
		return -1;
	if (type == ETH_TYPE_IPV4 && len >= l3 + IPV4_MIN_HLEN && (f[l3] >> 4) == 4)
		return f[l3 + 1] & 3;
	if (type == ETH_TYPE_IPV6 && len >= l3 + 2 && (f[l3] >> 4) == 6)
		return (f[l3 + 1] >> 4) & 3; /* traffic class bits 1:0 */
	return -1;
}

int sdr_link_frame_mark_ce(uint8_t *f, uint32_t len)
{
	unsigned type = 0;
	uint32_t l3 = frame_l3(f, len, &type);

	if (l3 == 0)
		return -1;
	if (type == ETH_TYPE_IPV4 && len >= l3 + IPV4_MIN_HLEN && (f[l3] >> 4) == 4) {
		uint16_t old = (uint16_t)(f[l3] << 8 | f[l3 + 1]), new, hc;
		uint32_t sum;

		if ((f[l3 + 1] & 3) == 0)
			return -1; /* not ECN-capable: never marked */
		f[l3 + 1] |= 3;
		new = (uint16_t)(f[l3] << 8 | f[l3 + 1]);
		/* incremental checksum update, RFC 1624 eqn. 3: HC' = ~(~HC + ~m + m') */
		hc = (uint16_t)(f[l3 + 10] << 8 | f[l3 + 11]);
		sum = (uint16_t)~hc + (uint32_t)(uint16_t)~old + new;
		sum = (sum & 0xffff) + (sum >> 16);
		sum = (sum & 0xffff) + (sum >> 16);
		hc = (uint16_t)~sum;
		f[l3 + 10] = (uint8_t)(hc >> 8);
		f[l3 + 11] = (uint8_t)hc;
		return 0;
	}
	if (type == ETH_TYPE_IPV6 && len >= l3 + 2 && (f[l3] >> 4) == 6) {
		if (((f[l3 + 1] >> 4) & 3) == 0)
			return -1;
		f[l3 + 1] |= 0x30; /* no header checksum in IPv6 */
		return 0;
	}
	return -1;
}

static int format_profile(const struct sdr_link_profile *x, size_t namelen, const char *spec,
			  char *buf, size_t len)
{
	char a[16];
	size_t off;
	int n;

	n = snprintf(buf, len, "%.*s:", (int)namelen, x->name);
	off = n > 0 ? (size_t)n : 0;
	for (unsigned k = 0; k < x->naddr; k++) {
		sdr_format_ipv4(x->addr[k], a);
		n = snprintf(off < len ? buf + off : NULL, off < len ? len - off : 0, "%s%s",
			     k ? "+" : "", a);
		off += n > 0 ? (size_t)n : 0;
	}
	n = snprintf(off < len ? buf + off : NULL, off < len ? len - off : 0, "%s%s",
		     x->naddr ? ":" : "", spec);
	off += n > 0 ? (size_t)n : 0;
	return (int)off;
}

int sdr_link_plan_format(const struct sdr_link_plan *p, unsigned i, char *buf, size_t len)
{
	const struct sdr_link_profile *x = &p->lane[i];
	struct sdr_link_cfg path[SDR_LINK_PATHS_MAX];
	unsigned first = i - x->path, n = x->npaths;
	char spec[8192];

	if (n > 1 && x->path < n && first + n <= p->nlanes && n <= SDR_LINK_PATHS_MAX) {
		for (unsigned k = 0; k < n; k++)
			path[k] = p->lane[first + k].cfg;
		sdr_link_paths_format(path, n, spec, sizeof(spec));
		return format_profile(x, group_len(x->name), spec, buf, len);
	}
	if (x->emulated)
		sdr_link_cfg_format(&x->cfg, spec, sizeof(spec));
	else
		spec[0] = '\0';
	return format_profile(x, strlen(x->name), spec, buf, len);
}

int sdr_link_plan_format_lane(const struct sdr_link_plan *p, unsigned i, char *buf, size_t len)
{
	const struct sdr_link_profile *x = &p->lane[i];
	char spec[1536];

	if (x->npaths <= 1)
		return sdr_link_plan_format(p, i, buf, len);
	sdr_link_cfg_format(&x->cfg, spec, sizeof(spec));
	return format_profile(x, strlen(x->name), spec, buf, len);
}

unsigned sdr_link_plan_mbufs_needed(const struct sdr_link_plan *p, unsigned frame_bytes,
				    double line_rate_bps)
{
	uint64_t sum = 0;

	for (unsigned i = 0; i < p->nlanes; i++)
		sum += sdr_link_mbufs_needed(&p->lane[i].cfg, frame_bytes, line_rate_bps);
	return sum > UINT32_MAX ? UINT32_MAX : (unsigned)sum;
}

void sdr_link_plan_cap(struct sdr_link_plan *p, unsigned frames, unsigned frame_bytes,
		       double line_rate_bps)
{
	unsigned want[SDR_LINK_LANES_MAX];
	bool done[SDR_LINK_LANES_MAX] = {false};
	uint64_t left = frames;
	unsigned nleft = p->nlanes;

	/* What a lane can hold at most: its bandwidth-delay product and buffer
	 * (sdr_link_mbufs_needed()), never more than its limit. */
	for (unsigned i = 0; i < p->nlanes; i++) {
		unsigned need = sdr_link_mbufs_needed(&p->lane[i].cfg, frame_bytes, line_rate_bps);

		want[i] = need < p->lane[i].cfg.limit ? need : p->lane[i].cfg.limit;
	}
	/* Max-min fair (water-filling): a lane that wants no more than an
	 * equal share of what is left keeps its limit; the others share the
	 * rest equally. */
	for (bool moved = true; moved && nleft > 0;) {
		uint64_t share = left / nleft;

		moved = false;
		for (unsigned i = 0; i < p->nlanes; i++)
			if (!done[i] && want[i] <= share) {
				done[i] = true;
				left -= want[i];
				nleft--;
				moved = true;
			}
	}
	for (unsigned i = 0; i < p->nlanes; i++) {
		uint64_t share = nleft ? left / nleft : 0;

		if (!done[i])
			p->lane[i].cfg.limit = share < 1 ? 1 : (unsigned)share;
	}
}

void sdr_link_stats_add(struct sdr_link_stats *sum, const struct sdr_link_stats *s)
{
	uint64_t *d = (uint64_t *)sum;

	for (unsigned i = 0; i < sdr_link_stats_count(); i++)
		d[i] += sdr_link_stats_value(s, i);
	/* the high-water marks do not add up */
	sum->max_held -= s->max_held;
	sum->max_backlog_bytes -= s->max_backlog_bytes;
	sum->max_release_lag_ns -= s->max_release_lag_ns;
	if (s->max_held > sum->max_held)
		sum->max_held = s->max_held;
	if (s->max_backlog_bytes > sum->max_backlog_bytes)
		sum->max_backlog_bytes = s->max_backlog_bytes;
	if (s->max_release_lag_ns > sum->max_release_lag_ns)
		sum->max_release_lag_ns = s->max_release_lag_ns;
	/* nor does a rate: the largest lane's */
	sum->rate_bps_now -= s->rate_bps_now;
	if (s->rate_bps_now > sum->rate_bps_now)
		sum->rate_bps_now = s->rate_bps_now;
}

int sdr_link_set_init(struct sdr_link_set *s, const struct sdr_link_plan *plan)
{
	unsigned dflt;

	if (plan == NULL || plan->nlanes < 1 || plan->nlanes > SDR_LINK_LANES_MAX ||
	    plan->naddr > SDR_LINK_PEER_ADDRS_MAX)
		return -EINVAL;
	/* the default lane's paths end the plan, and no address leads there */
	if (plan->lane[plan->nlanes - 1].path + 1u != plan->lane[plan->nlanes - 1].npaths)
		return -EINVAL;
	dflt = sdr_link_plan_default_lane(plan);
	for (unsigned i = 0; i < plan->naddr; i++)
		if (plan->lane_of[i] >= dflt || plan->lane[plan->lane_of[i]].path != 0)
			return -EINVAL;
	for (unsigned i = 0; i < plan->nlanes; i++) {
		const struct sdr_link_profile *x = &plan->lane[i];

		if (x->npaths < 1 || x->npaths > SDR_LINK_PATHS_MAX || x->path >= x->npaths ||
		    i - x->path + x->npaths > plan->nlanes || (i >= dflt && x->naddr != 0))
			return -EINVAL;
	}
	memset(s, 0, sizeof(*s));
	s->plan = *plan;
	for (unsigned i = 0; i < plan->nlanes; i++)
		if (sdr_link_init(&s->link[i], &plan->lane[i].cfg) != 0)
			return -EINVAL;
	return 0;
}

unsigned sdr_link_set_lane(struct sdr_link_set *s, const uint8_t *frame, uint32_t len)
{
	unsigned lane;
	uint32_t ip;

	if (s->plan.naddr == 0 || sdr_link_frame_src_ipv4(frame, len, &ip) != 0) {
		lane = sdr_link_plan_default_lane(&s->plan);
	} else {
		if (!s->last_valid || s->last_ip != ip) {
			s->last_ip = ip;
			s->last_lane = sdr_link_plan_lane(&s->plan, ip);
			s->last_valid = true;
		}
		lane = s->last_lane;
	}
	if (s->plan.lane[lane].npaths > 1)
		return lane + sdr_link_frame_path(frame, len, s->plan.lane[lane].npaths);
	return lane;
}

enum sdr_link_action sdr_link_set_decide(struct sdr_link_set *s, uint64_t now_ns,
					 const uint8_t *frame, uint32_t head_len,
					 uint32_t frame_len, unsigned *lane,
					 struct sdr_link_verdict *v)
{
	int ecn = sdr_link_frame_ecn(frame, head_len); /* -1: not IP, never marked */

	*lane = sdr_link_set_lane(s, frame, head_len);
	return sdr_link_decide_ecn(&s->link[*lane], now_ns, frame_len, ecn > 0 ? (unsigned)ecn : 0,
				   v);
}
