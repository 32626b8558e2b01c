/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * sdr-dpu wire format, the control messages (docs/wire-format.md §6): the
 * common header and its checks, and one codec for the messages that are a
 * list of fixed-size entries (CTS, ACK, NACK, ABORT, CLOSED: a row of the
 * table below each), plus the PARITY header. Pure C; the decoders take untrusted
 * bytes whose length sdr_ctrl_hdr_decode() has checked.
 */
#include <string.h>

#include "sdr_wire_priv.h"

static void ctrl_hdr_put(uint8_t *msg, uint8_t type, uint16_t n, uint32_t src_qpn)
{
	wr32(msg, SDR_CTRL_MAGIC);
	msg[4] = SDR_CTRL_VERSION;
	msg[5] = type;
	wr16(msg + 6, n);
	wr32(msg + 8, src_qpn);
	wr64(msg + SDR_CTRL_KEY_OFF, 0);
}

void sdr_ctrl_key_put(uint8_t *msg, uint64_t key)
{
	wr64(msg + SDR_CTRL_KEY_OFF, key);
}

/* ---- the entries of each list message: wire <-> struct ---- */

static void cts_put(uint8_t *p, const void *v)
{
	const struct sdr_cts_entry *e = v;

	wr32(p, e->seq);
	wr32(p + 4, e->length);
}

static int cts_get(const uint8_t *p, void *v)
{
	struct sdr_cts_entry *e = v;

	e->seq = rd32(p);
	e->length = rd32(p + 4);
	return 0;
}

static void abort_put(uint8_t *p, const void *v)
{
	const struct sdr_abort_entry *e = v;

	wr32(p, e->seq);
	wr32(p + 4, (uint32_t)e->status);
	wr32(p + 8, e->length);
}

static int abort_get(const uint8_t *p, void *v)
{
	struct sdr_abort_entry *e = v;

	e->seq = rd32(p);
	e->status = (int32_t)rd32(p + 4);
	e->length = rd32(p + 8);
	return 0;
}

static int ack_ok(const void *v)
{
	return ((const struct sdr_ack_entry *)v)->off <= SDR_ACK_OFF_MAX;
}

static void ack_put(uint8_t *p, const void *v)
{
	const struct sdr_ack_entry *e = v;

	wr32(p, e->seq);
	wr32(p + 4, e->cum);
	p[8] = e->flags;
	wr24(p + 9, e->off);
	memcpy(p + 12, e->bits, sizeof(e->bits));
	if ((e->flags & SDR_ACK_F_FULL) && e->lost)
		wr32(p + 12, e->lost);
}

static int ack_get(const uint8_t *p, void *v)
{
	struct sdr_ack_entry *e = v;

	e->seq = rd32(p);
	e->cum = rd32(p + 4);
	e->flags = p[8];
	e->off = rd24(p + 9);
	memcpy(e->bits, p + 12, sizeof(e->bits));
	e->lost = (e->flags & SDR_ACK_F_FULL) ? rd32(p + 12) : 0;
	return e->flags & ~SDR_ACK_F_MASK ? -1 : 0;
}

static int nack_ok(const void *v)
{
	const struct sdr_nack_entry *e = v;

	return e->k >= 1 && e->k <= SDR_EC_K_MAX && !(e->flags & ~SDR_NACK_F_MASK);
}

static void nack_put(uint8_t *p, const void *v)
{
	const struct sdr_nack_entry *e = v;

	wr32(p, e->seq);
	wr16(p + 4, e->sub);
	p[6] = e->k;
	p[7] = e->flags;
	wr64(p + 8, e->missing);
}

static int nack_get(const uint8_t *p, void *v)
{
	struct sdr_nack_entry *e = v;

	e->seq = rd32(p);
	e->sub = rd16(p + 4);
	e->k = p[6];
	e->flags = p[7];
	e->missing = rd64(p + 8);
	if (!nack_ok(e))
		return -1;
	if (e->k < 64 && (e->missing >> e->k))
		return -1;
	return 0;
}

static int closed_ok(const void *v)
{
	const struct sdr_closed_msg *c = v;

	return c->reason == SDR_CLOSED_DESTROYED || c->reason == SDR_CLOSED_DETACHED;
}

static void closed_put(uint8_t *p, const void *v)
{
	const struct sdr_closed_msg *c = v;

	wr32(p, c->recv_next);
	p[4] = c->reason;
	p[5] = p[6] = p[7] = 0;
	memcpy(p + 8, c->full, sizeof(c->full));
}

static int closed_get(const uint8_t *p, void *v)
{
	struct sdr_closed_msg *c = v;

	c->recv_next = rd32(p);
	c->reason = p[4];
	memcpy(c->full, p + 8, sizeof(c->full));
	return closed_ok(c) && !p[5] && !p[6] && !p[7] ? 0 : -1;
}

/* One list message: its entries' size on the wire and in memory, how many
 * a receiver takes, what an encoder refuses (ok: NULL = nothing), and the
 * entry's codec. */
struct entry_codec {
	uint16_t wire, max;
	size_t size;
	int (*ok)(const void *e);
	void (*put)(uint8_t *p, const void *e);
	int (*get)(const uint8_t *p, void *e);
};

static const struct entry_codec codecs[SDR_CTRL__MAX] = {
	[SDR_CTRL_CTS] = {SDR_CTS_ENTRY_WIRE, SDR_CTS_MAX_ENTRIES, sizeof(struct sdr_cts_entry),
			  NULL, cts_put, cts_get},
	[SDR_CTRL_ACK] = {SDR_ACK_ENTRY_WIRE, SDR_ACK_MAX_ENTRIES, sizeof(struct sdr_ack_entry),
			  ack_ok, ack_put, ack_get},
	[SDR_CTRL_NACK] = {SDR_NACK_ENTRY_WIRE, SDR_NACK_MAX_ENTRIES, sizeof(struct sdr_nack_entry),
			   nack_ok, nack_put, nack_get},
	[SDR_CTRL_ABORT] = {SDR_ABORT_ENTRY_WIRE, SDR_ABORT_MAX_ENTRIES,
			    sizeof(struct sdr_abort_entry), NULL, abort_put, abort_get},
	[SDR_CTRL_CLOSED] = {SDR_CLOSED_ENTRY_WIRE, 1, sizeof(struct sdr_closed_msg), closed_ok,
			     closed_put, closed_get},
};

/* The message of @p type with @p n entries from @p e; its length, or 0 if
 * a receiver would refuse it (too many entries, an entry out of range). */
static size_t entries_encode(uint8_t type, uint8_t *msg, uint32_t src_qpn, const void *e,
			     uint16_t n)
{
	const struct entry_codec *c = &codecs[type];
	const uint8_t *in = e;

	if (n > c->max)
		return 0;
	for (uint16_t i = 0; c->ok && i < n; i++)
		if (!c->ok(in + (size_t)i * c->size))
			return 0;
	ctrl_hdr_put(msg, type, n, src_qpn);
	for (uint16_t i = 0; i < n; i++)
		c->put(msg + SDR_CTRL_HDR_WIRE + (size_t)i * c->wire, in + (size_t)i * c->size);
	return SDR_CTRL_HDR_WIRE + (size_t)n * c->wire;
}

/* Entry @p i of a message that sdr_ctrl_hdr_decode() accepted. */
static int entry_decode(uint8_t type, const uint8_t *msg, uint16_t i, void *e)
{
	const struct entry_codec *c = &codecs[type];

	return c->get(msg + SDR_CTRL_HDR_WIRE + (size_t)i * c->wire, e);
}

int sdr_ctrl_hdr_decode(const uint8_t *msg, size_t len, struct sdr_ctrl_hdr *h)
{
	const struct entry_codec *c;

	if (len < SDR_CTRL_HDR_WIRE)
		return -1;
	h->magic = rd32(msg);
	h->version = msg[4];
	h->type = msg[5];
	h->count = rd16(msg + 6);
	h->src_qpn = rd32(msg + 8);
	h->key = rd64(msg + SDR_CTRL_KEY_OFF);
	if (h->magic != SDR_CTRL_MAGIC || h->version != SDR_CTRL_VERSION)
		return -1;
	if (h->type == 0 || h->type >= SDR_CTRL__MAX)
		return -1;
	if (h->type == SDR_CTRL_PARITY && (h->count != 1 || len <= SDR_PARITY_DATA_OFF))
		return -1;
	if (h->type == SDR_CTRL_CLOSED && h->count != 1)
		return -1;
	c = &codecs[h->type];
	if (c->wire && (h->count > c->max || (size_t)h->count * c->wire > len - SDR_CTRL_HDR_WIRE))
		return -1;
	return 0;
}

size_t sdr_ctrl_cts_encode(uint8_t *msg, uint32_t src_qpn, const struct sdr_cts_entry *e,
			   uint16_t n)
{
	return entries_encode(SDR_CTRL_CTS, msg, src_qpn, e, n);
}

void sdr_ctrl_cts_entry_decode(const uint8_t *msg, uint16_t i, struct sdr_cts_entry *e)
{
	entry_decode(SDR_CTRL_CTS, msg, i, e);
}

size_t sdr_ctrl_ack_encode(uint8_t *msg, uint32_t src_qpn, const struct sdr_ack_entry *e,
			   uint16_t n)
{
	return entries_encode(SDR_CTRL_ACK, msg, src_qpn, e, n);
}

int sdr_ctrl_ack_entry_decode(const uint8_t *msg, uint16_t i, struct sdr_ack_entry *e)
{
	return entry_decode(SDR_CTRL_ACK, msg, i, e);
}

/* ---- the ECN echo after an ACK's entries ---- */

size_t sdr_ctrl_ack_encode_echo(uint8_t *msg, uint32_t src_qpn, const struct sdr_ack_entry *e,
				uint16_t n, const struct sdr_ack_echo *echo)
{
	size_t len = sdr_ctrl_ack_encode(msg, src_qpn, e, n);
	uint8_t *p = msg + len;

	if (!len)
		return 0;
	p[0] = SDR_ACK_ECHO_TAG;
	p[1] = SDR_ACK_ECHO_VERSION;
	p[2] = p[3] = 0;
	wr32(p + 4, echo->ce);
	wr32(p + 8, echo->pkts);
	return len + SDR_ACK_ECHO_WIRE;
}

int sdr_ctrl_ack_echo_decode(const uint8_t *msg, size_t len, const struct sdr_ctrl_hdr *h,
			     struct sdr_ack_echo *echo)
{
	size_t at = SDR_CTRL_HDR_WIRE + (size_t)h->count * SDR_ACK_ENTRY_WIRE;
	const uint8_t *p = msg + at;

	if (h->type != SDR_CTRL_ACK || len < at + SDR_ACK_ECHO_WIRE)
		return -1;
	if (p[0] != SDR_ACK_ECHO_TAG || p[1] != SDR_ACK_ECHO_VERSION || p[2] || p[3])
		return -1;
	echo->ce = rd32(p + 4);
	echo->pkts = rd32(p + 8);
	return 0;
}

/* ---- hole reports after the ECN echo ---- */

static size_t holes_at(const struct sdr_ctrl_hdr *h)
{
	return SDR_CTRL_HDR_WIRE + (size_t)h->count * SDR_ACK_ENTRY_WIRE + SDR_ACK_ECHO_WIRE;
}

size_t sdr_ctrl_ack_encode_holes(uint8_t *msg, uint32_t src_qpn, const struct sdr_ack_entry *e,
				 uint16_t n, const struct sdr_ack_echo *echo,
				 const struct sdr_ack_hole *hole, unsigned nh)
{
	size_t len;
	uint8_t *p;

	if (nh > SDR_ACK_HOLES_MAX)
		return 0;
	for (unsigned i = 0; i < nh; i++)
		if (hole[i].first > SDR_ACK_HOLE_FIRST_MAX || (hole[i].have & 1))
			return 0; /* (what a decoder refuses) */
	len = sdr_ctrl_ack_encode_echo(msg, src_qpn, e, n, echo);
	if (!len || !nh)
		return len;
	p = msg + len;
	p[0] = SDR_ACK_HOLES_TAG;
	p[1] = SDR_ACK_HOLES_VERSION;
	p[2] = (uint8_t)nh;
	p[3] = 0;
	p += SDR_ACK_HOLES_HDR_WIRE;
	for (unsigned i = 0; i < nh; i++, p += SDR_ACK_HOLE_WIRE) {
		wr32(p, hole[i].seq);
		wr32(p + 4, hole[i].chunk);
		wr16(p + 8, hole[i].first);
		p[10] = p[11] = 0;
		wr64(p + 12, hole[i].have);
	}
	return len + SDR_ACK_HOLES_HDR_WIRE + (size_t)nh * SDR_ACK_HOLE_WIRE;
}

int sdr_ctrl_ack_holes_count(const uint8_t *msg, size_t len, const struct sdr_ctrl_hdr *h)
{
	size_t at = holes_at(h);
	struct sdr_ack_echo echo;
	const uint8_t *p;

	if (sdr_ctrl_ack_echo_decode(msg, len, h, &echo) || len <= at)
		return 0; /* no echo, or nothing after it */
	p = msg + at;
	if (p[0] != SDR_ACK_HOLES_TAG)
		return 0; /* something else after it: not ours to judge */
	if (len < at + SDR_ACK_HOLES_HDR_WIRE || p[1] != SDR_ACK_HOLES_VERSION || !p[2] ||
	    p[2] > SDR_ACK_HOLES_MAX || p[3] ||
	    len < at + SDR_ACK_HOLES_HDR_WIRE + (size_t)p[2] * SDR_ACK_HOLE_WIRE)
		return -1;
	return p[2];
}

int sdr_ctrl_ack_hole_decode(const uint8_t *msg, const struct sdr_ctrl_hdr *h, unsigned i,
			     struct sdr_ack_hole *x)
{
	const uint8_t *p = msg + holes_at(h) + SDR_ACK_HOLES_HDR_WIRE +
			   (size_t)i * SDR_ACK_HOLE_WIRE;
	uint16_t first = rd16(p + 8);

	x->seq = rd32(p);
	x->chunk = rd32(p + 4);
	x->first = first;
	x->have = rd64(p + 12);
	if (p[10] || p[11] || first > SDR_ACK_HOLE_FIRST_MAX || (x->have & 1))
		return -1;
	return 0;
}

size_t sdr_ctrl_nack_encode(uint8_t *msg, uint32_t src_qpn, const struct sdr_nack_entry *e,
			    uint16_t n)
{
	return entries_encode(SDR_CTRL_NACK, msg, src_qpn, e, n);
}

int sdr_ctrl_nack_entry_decode(const uint8_t *msg, uint16_t i, struct sdr_nack_entry *e)
{
	return entry_decode(SDR_CTRL_NACK, msg, i, e);
}

size_t sdr_ctrl_abort_encode(uint8_t *msg, uint32_t src_qpn, const struct sdr_abort_entry *e,
			     uint16_t n)
{
	return entries_encode(SDR_CTRL_ABORT, msg, src_qpn, e, n);
}

void sdr_ctrl_abort_entry_decode(const uint8_t *msg, uint16_t i, struct sdr_abort_entry *e)
{
	entry_decode(SDR_CTRL_ABORT, msg, i, e);
}

size_t sdr_ctrl_closed_encode(uint8_t *msg, uint32_t src_qpn, const struct sdr_closed_msg *c)
{
	return entries_encode(SDR_CTRL_CLOSED, msg, src_qpn, c, 1);
}

int sdr_ctrl_closed_decode(const uint8_t *msg, struct sdr_closed_msg *c)
{
	return entry_decode(SDR_CTRL_CLOSED, msg, 0, c);
}

/* ---- PARITY: one header, then the parity bytes ---- */

static int parity_hdr_ok(const struct sdr_parity_hdr *h)
{
	return (h->code == SDR_EC_RS || h->code == SDR_EC_XOR) && h->k >= 1 &&
	       h->k <= SDR_EC_K_MAX && h->m >= 1 && h->m <= SDR_EC_M_MAX && h->pidx < h->m &&
	       h->npkt >= 1 && h->pkt < h->npkt && !h->flags && !h->resv && h->clen >= 1 &&
	       h->msg_len >= 1;
}

size_t sdr_ctrl_parity_encode(uint8_t *msg, uint32_t src_qpn, const struct sdr_parity_hdr *h)
{
	uint8_t *p = msg + SDR_CTRL_HDR_WIRE;

	if (!parity_hdr_ok(h))
		return 0;
	ctrl_hdr_put(msg, SDR_CTRL_PARITY, 1, src_qpn);
	wr32(p, h->seq);
	wr32(p + 4, h->msg_len);
	wr32(p + 8, h->imm);
	p[12] = h->code;
	p[13] = h->k;
	p[14] = h->m;
	p[15] = h->flags;
	wr16(p + 16, h->sub);
	p[18] = h->pidx;
	p[19] = h->resv;
	wr16(p + 20, h->pkt);
	wr16(p + 22, h->npkt);
	wr32(p + 24, h->clen);
	return SDR_PARITY_DATA_OFF;
}

int sdr_ctrl_parity_decode(const uint8_t *msg, size_t len, struct sdr_parity_hdr *h,
			   const uint8_t **data, uint32_t *dlen)
{
	const uint8_t *p = msg + SDR_CTRL_HDR_WIRE;

	if (len <= SDR_PARITY_DATA_OFF)
		return -1;
	h->seq = rd32(p);
	h->msg_len = rd32(p + 4);
	h->imm = rd32(p + 8);
	h->code = p[12];
	h->k = p[13];
	h->m = p[14];
	h->flags = p[15];
	h->sub = rd16(p + 16);
	h->pidx = p[18];
	h->resv = p[19];
	h->pkt = rd16(p + 20);
	h->npkt = rd16(p + 22);
	h->clen = rd32(p + 24);
	*data = msg + SDR_PARITY_DATA_OFF;
	*dlen = (uint32_t)(len - SDR_PARITY_DATA_OFF);
	return parity_hdr_ok(h) ? 0 : -1;
}
