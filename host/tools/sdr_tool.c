/* SPDX-License-Identifier: BSD-3-Clause */
#include <errno.h>
#include <getopt.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "sdr_tool.h"
#include "sdr_units.h"

static const char *const default_sizes = "1,4K,64K,1M,16M,64M";

static void usage(const struct tool_opts *o, FILE *f)
{
	const char *me = o->is_sender ? "sdr-send" : "sdr-recv";

	fprintf(f,
		"Usage: %s [options]\n"
		"%s\n\n"
		"Daemon:\n"
		"  --dpu PATH           sdr-dpu control socket (default %s)\n"
		"QP info exchange, either TCP bootstrap (perftest style):\n",
		me,
		o->is_sender ? "Send pattern messages (or a file) through libsdr to sdr-recv."
			     : "Receive messages through libsdr, verify them, report bitmaps.",
		SDR_DEFAULT_SOCKET);
	if (o->is_sender)
		fprintf(f, "  --connect HOST[:PORT] connect to 'sdr-recv --server' (port default --port;\n"
			   "                       retried until --timeout)\n"
			   "  --port P             default port for --connect (default %d)\n",
			TOOL_DEFAULT_PORT);
	else
		fprintf(f, "  --server             wait for one sdr-send on TCP; the sender's plan then\n"
			   "                       sets sizes, count, seed, max-msg and file mode\n"
			   "  --port P             TCP port (default %d)\n"
			   "  --bind ADDR          listen address (default 0.0.0.0)\n",
			TOOL_DEFAULT_PORT);
	fprintf(f,
		"or command line (no TCP; give both sides the same --sizes/--count/--seed):\n"
		"  --local-qpn N        request this QPN block base at QP create\n"
		"  --local-rkey K       request this R_Key at QP create\n"
		"  --peer TEXT|@FILE    peer QP info (text form, e.g. from its QPINFO line);\n"
		"                       @FILE waits up to --timeout for the file to appear\n"
		"Either mode:\n"
		"  --print-qp           print 'QPINFO <text>' with our own QP info\n"
		"  --qp-file F          write our QP info text to F\n"
		"Messages:\n"
		"  --sizes LIST         comma list with K/M/G suffixes (default %s)\n"
		"  --count N            repeat the size list N times (default 1)\n"
		"  --seed S             pattern seed (default 1)\n"
		"  --max-msg BYTES      QP max message (default: largest size rounded up to\n"
		"                       1 MiB; in file mode the daemon default)\n"
		"  --chunk-pkts N       packets per bitmap chunk (default: daemon default)\n"
		"  --window N           messages in flight (default 8)\n"
		"%s"
		"  --rel none|sr|ec|auto reliability of the QP: none (raw SDR), sr (Selective\n"
		"                       Repeat on the DPU), ec (erasure coding with SR\n"
		"                       fallback) or auto (the DPU picks SR or an EC code per\n"
		"                       message from the measured RTT and loss, daemon\n"
		"                       --auto-schemes); with TCP the sender's choice is sent in\n"
		"                       the plan, without TCP give both sides the same\n"
		"                       (default none)\n"
		"  --ec CODE:K:M        with --rel ec: rs:K:M (Reed-Solomon) or xor:K:M, K data\n"
		"                       and M parity chunks per submessage, 1 <= K <= 64,\n"
		"                       1 <= M <= 32 (default rs:32:8)\n"
		"  --timeout SEC        give up when nothing completes for SEC seconds,\n"
		"                       report pending messages and partial bitmaps, exit 1\n"
		"                       (default 10)\n",
		default_sizes,
		o->is_sender ? "  --rate RATE          pace this QP's sends (bit/s: 200m, 1.5gbit; default\n"
			       "                       unpaced; the daemon's --port-rate still applies)\n"
			     : "");
	if (o->is_sender)
		fprintf(f, "  --file F             send file F in messages of max_msg bytes; the plan\n"
			   "                       tells the receiver the file size (TCP mode)\n");
	else
		fprintf(f, "  --out F              file mode: write the received file to F instead of\n"
			   "                       verifying a pattern\n"
			   "  --file-size BYTES    file mode without TCP: the size of the sender's file\n"
			   "                       (with the same --max-msg as the sender)\n");
	fprintf(f,
		"Output: one line per completed message (a first line starting with '#' names\n"
		"the columns): index, size, %s,\n"
		"  time = ms since this tool's first post (the same in sdr-send and sdr-recv),\n"
		"  Gbit/s over the interval since the previous completion%s;\n"
		"then a summary.\n"
		"  --json               one JSON object per line instead (\"t_ms\": time%s),\n"
		"                       then the summary\n"
		"  --quiet              summary only\n"
		"  --help               this text\n"
		"Exit status: 0 only if every message %s.\n",
		o->is_sender ? "status" : "status, chunks set/total",
		o->is_sender ? ",\n  completion = ms from this send's post to its completion" : "",
		o->is_sender ? ", \"ct_ms\": completion" : "",
		o->is_sender ? "completed without error (and, with TCP, the\n"
			       "             receiver verified every message)"
			     : "arrived complete and verified");
}

static int parse_u32(const char *s, uint32_t *v, int suffix)
{
	uint64_t x;

	if (sdr_parse_u64(s, &x, suffix) || x > UINT32_MAX)
		return -1;
	*v = (uint32_t)x;
	return 0;
}

static int parse_sizes(const char *s, struct tool_opts *o)
{
	char buf[1024], *tok, *save = NULL;

	if (strlen(s) >= sizeof(buf))
		return -1;
	strcpy(buf, s);
	o->nsizes = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t v;

		if (o->nsizes == TOOL_MAX_SIZES || sdr_parse_u64(tok, &v, 1) || v == 0 || v > UINT32_MAX)
			return -1;
		o->sizes[o->nsizes++] = v;
	}
	return o->nsizes ? 0 : -1;
}

enum {
	O_DPU = 256, O_SERVER, O_BIND, O_PORT, O_CONNECT, O_LQPN, O_LRKEY, O_PEER, O_PRINT, O_QPF,
	O_SIZES, O_COUNT, O_SEED, O_MAXMSG, O_CHUNK, O_WINDOW, O_TIMEOUT, O_JSON, O_QUIET, O_FILE,
	O_OUT, O_FSIZE, O_HELP, O_REL, O_RATE, O_EC
};

void tool_parse(struct tool_opts *o, int argc, char **argv)
{
	static const struct option lo_send[] = {
		{"dpu", 1, 0, O_DPU}, {"port", 1, 0, O_PORT}, {"connect", 1, 0, O_CONNECT},
		{"local-qpn", 1, 0, O_LQPN}, {"local-rkey", 1, 0, O_LRKEY}, {"peer", 1, 0, O_PEER},
		{"print-qp", 0, 0, O_PRINT}, {"qp-file", 1, 0, O_QPF}, {"sizes", 1, 0, O_SIZES},
		{"count", 1, 0, O_COUNT}, {"seed", 1, 0, O_SEED}, {"max-msg", 1, 0, O_MAXMSG},
		{"chunk-pkts", 1, 0, O_CHUNK}, {"window", 1, 0, O_WINDOW},
		{"timeout", 1, 0, O_TIMEOUT}, {"json", 0, 0, O_JSON}, {"quiet", 0, 0, O_QUIET},
		{"file", 1, 0, O_FILE}, {"rel", 1, 0, O_REL}, {"rate", 1, 0, O_RATE},
		{"ec", 1, 0, O_EC}, {"help", 0, 0, O_HELP}, {0, 0, 0, 0}};
	static const struct option lo_recv[] = {
		{"dpu", 1, 0, O_DPU}, {"server", 0, 0, O_SERVER}, {"bind", 1, 0, O_BIND},
		{"port", 1, 0, O_PORT}, {"local-qpn", 1, 0, O_LQPN}, {"local-rkey", 1, 0, O_LRKEY},
		{"peer", 1, 0, O_PEER}, {"print-qp", 0, 0, O_PRINT}, {"qp-file", 1, 0, O_QPF},
		{"sizes", 1, 0, O_SIZES}, {"count", 1, 0, O_COUNT}, {"seed", 1, 0, O_SEED},
		{"max-msg", 1, 0, O_MAXMSG}, {"chunk-pkts", 1, 0, O_CHUNK},
		{"window", 1, 0, O_WINDOW}, {"timeout", 1, 0, O_TIMEOUT}, {"json", 0, 0, O_JSON},
		{"quiet", 0, 0, O_QUIET}, {"out", 1, 0, O_OUT}, {"file-size", 1, 0, O_FSIZE},
		{"rel", 1, 0, O_REL}, {"ec", 1, 0, O_EC}, {"help", 0, 0, O_HELP}, {0, 0, 0, 0}};
	int c, bad = 0;
	uint32_t port = 0;

	o->dpu = SDR_DEFAULT_SOCKET;
	o->port = TOOL_DEFAULT_PORT;
	o->count = 1;
	o->seed = 1;
	o->window = 8;
	o->timeout = 10;
	parse_sizes(default_sizes, o);
	while ((c = getopt_long(argc, argv, "", o->is_sender ? lo_send : lo_recv, NULL)) != -1) {
		switch (c) {
		case O_DPU: o->dpu = optarg; break;
		case O_SERVER: o->server = 1; break;
		case O_BIND: o->bind = optarg; break;
		case O_PORT:
			if (parse_u32(optarg, &port, 0) || port == 0 || port > 65535)
				bad = fprintf(stderr, "bad --port '%s'\n", optarg);
			o->port = (uint16_t)port;
			break;
		case O_CONNECT: o->connect = optarg; break;
		case O_LQPN:
			if (parse_u32(optarg, &o->local_qpn, 0) || o->local_qpn > 0xFFFFFF)
				bad = fprintf(stderr, "bad --local-qpn '%s'\n", optarg);
			break;
		case O_LRKEY:
			if (parse_u32(optarg, &o->local_rkey, 0))
				bad = fprintf(stderr, "bad --local-rkey '%s'\n", optarg);
			break;
		case O_PEER: o->peer = optarg; break;
		case O_PRINT: o->print_qp = 1; break;
		case O_QPF: o->qp_file = optarg; break;
		case O_SIZES:
			if (parse_sizes(optarg, o))
				bad = fprintf(stderr, "bad --sizes '%s' (1..4G each, at most %d)\n",
					      optarg, TOOL_MAX_SIZES);
			break;
		case O_COUNT:
			if (parse_u32(optarg, &o->count, 0) || o->count == 0)
				bad = fprintf(stderr, "bad --count '%s'\n", optarg);
			break;
		case O_SEED:
			if (sdr_parse_u64(optarg, &o->seed, 0))
				bad = fprintf(stderr, "bad --seed '%s'\n", optarg);
			break;
		case O_MAXMSG:
			if (parse_u32(optarg, &o->max_msg, 1) || o->max_msg == 0)
				bad = fprintf(stderr, "bad --max-msg '%s'\n", optarg);
			break;
		case O_CHUNK:
			if (parse_u32(optarg, &o->chunk_pkts, 0) || o->chunk_pkts == 0)
				bad = fprintf(stderr, "bad --chunk-pkts '%s'\n", optarg);
			break;
		case O_WINDOW:
			if (parse_u32(optarg, &o->window, 0) || o->window == 0 || o->window > 1024)
				bad = fprintf(stderr, "bad --window '%s' (1..1024)\n", optarg);
			break;
		case O_TIMEOUT: {
			char *end;

			o->timeout = strtod(optarg, &end);
			if (*end || !(o->timeout > 0) || o->timeout > 1e6)
				bad = fprintf(stderr, "bad --timeout '%s'\n", optarg);
			break;
		}
		case O_JSON: o->json = 1; break;
		case O_QUIET: o->quiet = 1; break;
		case O_FILE: o->file = optarg; break;
		case O_OUT: o->out = optarg; break;
		case O_FSIZE:
			if (sdr_parse_u64(optarg, &o->file_size, 1) || o->file_size == 0)
				bad = fprintf(stderr, "bad --file-size '%s'\n", optarg);
			break;
		case O_REL:
			if (!strcmp(optarg, "none"))
				o->rel = SDR_REL_NONE;
			else if (!strcmp(optarg, "sr"))
				o->rel = SDR_REL_SR;
			else if (!strcmp(optarg, "ec"))
				o->rel = SDR_REL_EC;
			else if (!strcmp(optarg, "auto"))
				o->rel = SDR_REL_AUTO;
			else
				bad = fprintf(stderr, "bad --rel '%s' (none, sr, ec or auto)\n", optarg);
			o->rel_set = 1;
			break;
		case O_EC: {
			unsigned code, k, m;
			if (sdr_ec_param_parse(optarg, &code, &k, &m))
				bad = fprintf(stderr, "bad --ec '%s' (rs:K:M or xor:K:M, 1 <= K <= 64,"
						      " 1 <= M <= 32, xor M <= K)\n", optarg);
			else
				o->ec = sdr_ec_param_pack(code, k, m);
			o->ec_set = 1;
			break;
		}
		case O_RATE:
			if (sdr_parse_rate(optarg, &o->rate_bps))
				bad = fprintf(stderr, "bad --rate '%s' (e.g. 200m, 1.5gbit)\n", optarg);
			break;
		case O_HELP: usage(o, stdout); exit(0);
		default: bad = 1;
		}
	}
	if (optind < argc)
		bad = fprintf(stderr, "unexpected argument '%s'\n", argv[optind]);
	if (!bad) {
		int tcp = o->server || o->connect;

		if (tcp && o->peer)
			bad = fprintf(stderr, "--peer is for command-line mode, not with TCP\n");
		else if (!tcp && !o->peer && !o->print_qp && !o->qp_file)
			bad = fprintf(stderr, "need %s or --peer (see --help)\n",
				      o->is_sender ? "--connect" : "--server");
		else if (!o->is_sender && o->out && !tcp && !o->file_size)
			bad = fprintf(stderr, "--out without TCP needs --file-size\n");
		else if (!o->is_sender && o->file_size && !o->out)
			bad = fprintf(stderr, "--file-size needs --out\n");
	}
	if (!bad && o->rel_set && o->server)
		bad = fprintf(stderr, "--rel comes from the sender's plan with --server\n");
	if (!bad && o->ec_set && o->server)
		bad = fprintf(stderr, "--ec comes from the sender's plan with --server\n");
	if (!bad && o->ec_set && o->rel != SDR_REL_EC)
		bad = fprintf(stderr, "--ec needs --rel ec\n");
	if (!bad && o->rel == SDR_REL_EC && !o->ec_set)
		o->ec = sdr_ec_param_pack(1, 32, 8); /* rs:32:8 */
	if (bad) {
		usage(o, stderr);
		exit(2);
	}
}

/* ---------------- plan ---------------- */

int tool_plan_from_opts(const struct tool_opts *o, struct tool_plan *p, uint64_t file_size,
			uint32_t msg_size)
{
	memset(p, 0, sizeof(*p));
	p->seed = o->seed;
	p->max_msg = o->max_msg;
	p->chunk_pkts = o->chunk_pkts;
	p->rel = o->rel;
	p->ec = o->rel == SDR_REL_EC ? o->ec : 0;
	if (file_size) {
		p->file_mode = 1;
		p->file_size = file_size;
		p->count = 1;
		p->nsizes = 1;
		p->sizes[0] = msg_size;
		p->max_msg = msg_size;
		return 0;
	}
	p->count = o->count;
	p->nsizes = o->nsizes;
	memcpy(p->sizes, o->sizes, sizeof(p->sizes));
	if (p->max_msg == 0)
		p->max_msg = tool_plan_default_max_msg(p);
	for (uint32_t i = 0; i < p->nsizes; i++)
		if (p->sizes[i] > p->max_msg) {
			fprintf(stderr, "size %llu exceeds --max-msg %u\n",
				(unsigned long long)p->sizes[i], p->max_msg);
			return -1;
		}
	return 0;
}

uint64_t tool_plan_messages(const struct tool_plan *p)
{
	if (p->file_mode)
		return (p->file_size + p->sizes[0] - 1) / p->sizes[0];
	return (uint64_t)p->count * p->nsizes;
}

uint64_t tool_plan_size(const struct tool_plan *p, uint64_t i)
{
	if (p->file_mode) {
		uint64_t off = i * p->sizes[0];

		return p->file_size - off < p->sizes[0] ? p->file_size - off : p->sizes[0];
	}
	return p->sizes[i % p->nsizes];
}

uint64_t tool_plan_max_size(const struct tool_plan *p)
{
	uint64_t m = 0;

	for (uint32_t i = 0; i < p->nsizes; i++)
		if (p->sizes[i] > m)
			m = p->sizes[i];
	if (p->file_mode && p->file_size < m)
		m = p->file_size;
	return m;
}

uint32_t tool_plan_default_max_msg(const struct tool_plan *p)
{
	uint64_t m = tool_plan_max_size(p), mib = 1u << 20;

	m = (m + mib - 1) / mib * mib;
	return m > UINT32_MAX ? UINT32_MAX : (uint32_t)m;
}

/* ---------------- TCP bootstrap ---------------- */

int tool_write_full(int fd, const void *buf, size_t len)
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

int tool_read_full(int fd, void *buf, size_t len)
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

int tool_tcp_listen_accept(const struct tool_opts *o)
{
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(o->port)};
	int one = 1, ls, s;

	if (o->bind && inet_pton(AF_INET, o->bind, &sa.sin_addr) != 1) {
		fprintf(stderr, "bad --bind address '%s'\n", o->bind);
		return -1;
	}
	ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (ls < 0)
		return -1;
	setsockopt(ls, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(ls, (struct sockaddr *)&sa, sizeof(sa)) || listen(ls, 1)) {
		fprintf(stderr, "listen on port %u: %s\n", o->port, strerror(errno));
		close(ls);
		return -1;
	}
	if (!o->quiet && !o->json)
		fprintf(stderr, "waiting for sdr-send on port %u\n", o->port);
	s = accept(ls, NULL, NULL);
	close(ls);
	if (s >= 0)
		setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return s;
}

int tool_tcp_connect(const struct tool_opts *o)
{
	char host[256], port[8];
	const char *colon = strrchr(o->connect, ':');
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *ai, *a;
	double deadline = tool_now() + o->timeout;
	int s = -1, one = 1, rc;
	size_t hl = colon ? (size_t)(colon - o->connect) : strlen(o->connect);

	if (hl == 0 || hl >= sizeof(host)) {
		fprintf(stderr, "bad --connect '%s'\n", o->connect);
		return -1;
	}
	memcpy(host, o->connect, hl);
	host[hl] = '\0';
	if (colon) {
		uint32_t p;

		if (parse_u32(colon + 1, &p, 0) || p == 0 || p > 65535) {
			fprintf(stderr, "bad port in --connect '%s'\n", o->connect);
			return -1;
		}
		snprintf(port, sizeof(port), "%u", p);
	} else {
		snprintf(port, sizeof(port), "%u", o->port);
	}
	rc = getaddrinfo(host, port, &hints, &ai);
	if (rc) {
		fprintf(stderr, "%s: %s\n", host, gai_strerror(rc));
		return -1;
	}
	/* the receiver may not listen yet: retry until --timeout */
	for (;;) {
		for (a = ai; a; a = a->ai_next) {
			s = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
			if (s < 0)
				continue;
			if (connect(s, a->ai_addr, a->ai_addrlen) == 0)
				break;
			close(s);
			s = -1;
		}
		if (s >= 0 || tool_now() > deadline)
			break;
		usleep(100000);
	}
	freeaddrinfo(ai);
	if (s < 0) {
		fprintf(stderr, "connect %s:%s: %s\n", host, port, strerror(errno));
		return -1;
	}
	setsockopt(s, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return s;
}

static void put_u32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (24 - 8 * i));
}
static void put_u64(uint8_t *p, uint64_t v)
{
	put_u32(p, (uint32_t)(v >> 32));
	put_u32(p + 4, (uint32_t)v);
}
static uint32_t get_u32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static uint64_t get_u64(const uint8_t *p) { return (uint64_t)get_u32(p) << 32 | get_u32(p + 4); }

/* plan: "SDRP" ver count nsizes seed(8) max_msg chunk_pkts file_mode
 *       file_size(8) sizes[64](8 each) rel; big-endian (version 2 added rel;
 *       its upper 16 bits carry the EC parameters, sdr_ec_param_pack) */
#define PLAN_MAGIC 0x53445250u
#define PLAN_VERSION 2
#define PLAN_LEN (48 + 8 * TOOL_MAX_SIZES)

int tool_send_plan(int fd, const struct tool_plan *p)
{
	uint8_t b[PLAN_LEN];

	memset(b, 0, sizeof(b));
	put_u32(b, PLAN_MAGIC);
	put_u32(b + 4, PLAN_VERSION);
	put_u32(b + 8, p->count);
	put_u32(b + 12, p->nsizes);
	put_u64(b + 16, p->seed);
	put_u32(b + 24, p->max_msg);
	put_u32(b + 28, p->chunk_pkts);
	put_u32(b + 32, p->file_mode);
	put_u64(b + 36, p->file_size);
	for (int i = 0; i < TOOL_MAX_SIZES; i++)
		put_u64(b + 44 + 8 * i, p->sizes[i]);
	put_u32(b + 44 + 8 * TOOL_MAX_SIZES, p->rel | (uint32_t)p->ec << 16);
	return tool_write_full(fd, b, sizeof(b));
}

int tool_recv_plan(int fd, struct tool_plan *p)
{
	uint8_t b[PLAN_LEN];

	if (tool_read_full(fd, b, sizeof(b)))
		return -1;
	memset(p, 0, sizeof(*p));
	if (get_u32(b) != PLAN_MAGIC || get_u32(b + 4) != PLAN_VERSION)
		return -1;
	p->rel = get_u32(b + 44 + 8 * TOOL_MAX_SIZES);
	p->ec = (uint16_t)(p->rel >> 16);
	p->rel &= 0xFFFF;
	if (p->rel != SDR_REL_NONE && p->rel != SDR_REL_SR && p->rel != SDR_REL_EC &&
	    p->rel != SDR_REL_AUTO)
		return -1;
	if (p->rel == SDR_REL_EC
		    ? sdr_ec_param_check(sdr_ec_param_code(p->ec), sdr_ec_param_k(p->ec),
					 sdr_ec_param_m(p->ec)) || (p->ec >> 14)
		    : p->ec != 0)
		return -1;
	p->count = get_u32(b + 8);
	p->nsizes = get_u32(b + 12);
	p->seed = get_u64(b + 16);
	p->max_msg = get_u32(b + 24);
	p->chunk_pkts = get_u32(b + 28);
	p->file_mode = get_u32(b + 32);
	p->file_size = get_u64(b + 36);
	if (p->nsizes == 0 || p->nsizes > TOOL_MAX_SIZES || p->count == 0 || p->max_msg == 0 ||
	    p->file_mode > 1 || (p->file_mode && (p->file_size == 0 || p->nsizes != 1)))
		return -1;
	for (uint32_t i = 0; i < p->nsizes; i++) {
		p->sizes[i] = get_u64(b + 44 + 8 * i);
		if (p->sizes[i] == 0 || p->sizes[i] > p->max_msg)
			return -1;
	}
	return 0;
}

int tool_send_result(int fd, const struct tool_result *r)
{
	uint8_t b[36];

	put_u32(b, 0x53445252u); /* "SDRR" */
	put_u64(b + 4, r->ok);
	put_u64(b + 12, r->failed);
	put_u64(b + 20, r->bytes);
	put_u64(b + 28, r->elapsed_ns);
	return tool_write_full(fd, b, sizeof(b));
}

int tool_recv_result(int fd, struct tool_result *r)
{
	uint8_t b[36];

	if (tool_read_full(fd, b, sizeof(b)) || get_u32(b) != 0x53445252u)
		return -1;
	r->ok = get_u64(b + 4);
	r->failed = get_u64(b + 12);
	r->bytes = get_u64(b + 20);
	r->elapsed_ns = get_u64(b + 28);
	return 0;
}

int tool_send_info(int fd, const struct sdr_qp_info *i)
{
	uint8_t b[SDR_QP_INFO_WIRE];

	sdr_qp_info_encode(i, b);
	return tool_write_full(fd, b, sizeof(b));
}

void tool_linger(int fd, double timeout)
{
	double deadline = tool_now() + timeout;
	char b[64];

	shutdown(fd, SHUT_WR);
	while (tool_now() < deadline) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int ms = (int)((deadline - tool_now()) * 1e3) + 1;
		int rc = poll(&p, 1, ms);

		if (rc < 0 && errno == EINTR)
			continue;
		if (rc <= 0)
			return;
		ssize_t n = recv(fd, b, sizeof(b), 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return; /* EOF: the sender is done */
	}
}

int tool_recv_info(int fd, struct sdr_qp_info *i)
{
	uint8_t b[SDR_QP_INFO_WIRE];

	if (tool_read_full(fd, b, sizeof(b)))
		return -1;
	return sdr_qp_info_decode(b, i);
}

/* ---------------- command-line exchange ---------------- */

int tool_publish_qp(const struct tool_opts *o, const struct sdr_qp_info *info)
{
	char txt[256];

	if (sdr_qp_info_format(info, txt, sizeof(txt)) < 0)
		return -1;
	if (o->print_qp) {
		printf("QPINFO %s\n", txt);
		fflush(stdout);
	}
	if (o->qp_file) {
		/* write then rename, so a reader never sees half a line */
		char tmp[4096];
		FILE *f;

		snprintf(tmp, sizeof(tmp), "%s.tmp.%d", o->qp_file, (int)getpid());
		f = fopen(tmp, "w");
		if (f == NULL || fprintf(f, "%s\n", txt) < 0 || fclose(f) != 0 ||
		    rename(tmp, o->qp_file) != 0) {
			fprintf(stderr, "cannot write %s: %s\n", o->qp_file, strerror(errno));
			return -1;
		}
	}
	return 0;
}

int tool_peer_from_opts(const struct tool_opts *o, struct sdr_qp_info *info)
{
	char line[512];

	if (o->peer[0] != '@') {
		if (sdr_qp_info_parse(o->peer, info)) {
			fprintf(stderr, "malformed --peer '%s'\n", o->peer);
			return -1;
		}
		return 0;
	}
	double deadline = tool_now() + o->timeout;
	for (;;) {
		FILE *f = fopen(o->peer + 1, "r");

		if (f) {
			char *ok = fgets(line, sizeof(line), f);

			fclose(f);
			if (ok) {
				line[strcspn(line, "\r\n")] = '\0';
				if (sdr_qp_info_parse(line, info) == 0)
					return 0;
				fprintf(stderr, "malformed QP info in %s\n", o->peer + 1);
				return -1;
			}
		}
		if (tool_now() > deadline) {
			fprintf(stderr, "timed out waiting for %s\n", o->peer + 1);
			return -1;
		}
		usleep(50000);
	}
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
		printf("{\"latency\":\"%s\",\"size\":%s,\"n\":%llu,\"mean_ms\":%.3f,\"p50_ms\":%.3f,"
		       "\"p99_ms\":%.3f,\"max_ms\":%.3f}\n",
		       who, size, (unsigned long long)n, sum / (double)n * 1e3, v[(n - 1) / 2] * 1e3,
		       v[i99] * 1e3, v[n - 1] * 1e3);
	else
		printf("%s completion time, size %s: n %llu mean %.3f ms p50 %.3f ms p99 %.3f ms"
		       " max %.3f ms\n",
		       who, size, (unsigned long long)n, sum / (double)n * 1e3, v[(n - 1) / 2] * 1e3,
		       v[i99] * 1e3, v[n - 1] * 1e3);
}

void tool_latency_report(const char *who, const double *t, const uint64_t *sz, uint64_t n,
			 int json)
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

double tool_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void tool_backoff(uint32_t *idle)
{
	if (++*idle > 256) {
		struct timespec ts = {0, 50000};

		nanosleep(&ts, NULL);
	}
}

int tool_cq_wait(struct sdr_ctx *ctx, struct sdr_wc *wc, int max, uint32_t *idle, double tlast,
		 double timeout)
{
	int n = sdr_cq_poll(ctx, wc, max);

	if (n < 0) {
		fprintf(stderr, "sdr_cq_poll: %s (%s)\n", sdr_strerror(n), sdr_last_error(ctx));
		return -1;
	}
	if (n == 0) {
		tool_backoff(idle);
		if (tool_now() - tlast > timeout) {
			fprintf(stderr, "timeout: nothing completed for %.1f s\n", timeout);
			return -1;
		}
		return 0;
	}
	*idle = 0;
	return n;
}

int tool_qp_connect(struct sdr_ctx *ctx, struct sdr_qp *qp, const struct sdr_qp_info *remote)
{
	int rc = sdr_qp_connect(qp, remote);

	if (rc)
		fprintf(stderr, "sdr_qp_connect: %s (%s)\n", sdr_strerror(rc), sdr_last_error(ctx));
	return rc ? -1 : 0;
}
