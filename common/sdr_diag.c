/* SPDX-License-Identifier: BSD-3-Clause */
/* "Where is it stuck" in plain words (sdr_diag.h; common layer). */
#include <stdio.h>
#include <string.h>

#include "sdr_diag.h"

const char sdr_diag_no_rel_hint[] =
	"this QP has no reliability scheme (--rel none): a lost packet is never sent again, so"
	" on a lossy or overrun link partial messages are expected; use --rel sr, --rel ec or"
	" --rel auto (or pace the sender: the daemon's --port-rate, the tool's --rate)";

/* "2.3 s", "40 ms", "120 us" */
static void ago(char *buf, size_t len, double s)
{
	if (s >= 1.0)
		snprintf(buf, len, "%.1f s", s);
	else if (s >= 1e-3)
		snprintf(buf, len, "%.0f ms", s * 1e3);
	else
		snprintf(buf, len, "%.0f us", s * 1e6);
}

static int bit(const uint64_t *bm, uint32_t i)
{
	return (int)((bm[i / 64] >> (i % 64)) & 1);
}

size_t sdr_diag_missing(char *buf, size_t len, const uint64_t *bm, uint32_t n, unsigned max)
{
	size_t o = 0;
	unsigned k = 0;

	if (len)
		buf[0] = 0;
	for (uint32_t i = 0; i < n && o < len; i++) {
		uint32_t j = i;
		int w;

		if (bit(bm, i))
			continue;
		while (j + 1 < n && !bit(bm, j + 1))
			j++;
		if (k++ == max) {
			w = snprintf(buf + o, len - o, ", ...");
		} else if (j == i) {
			w = snprintf(buf + o, len - o, "%s%u", o ? ", " : "", i);
		} else {
			w = snprintf(buf + o, len - o, "%s%u-%u", o ? ", " : "", i, j);
		}
		if (w < 0)
			break;
		o += (size_t)w;
		if (k > max)
			break;
		i = j;
	}
	return o < len ? o : (len ? len - 1 : 0);
}

int sdr_diag_recv_text(char *buf, size_t len, const struct sdr_diag_recv *d)
{
	char t[32], l[32], miss[160] = "";
	int n;

	ago(t, sizeof(t), d->posted_ago);
	/* (with no chunk in, all are missing: not listed) */
	if (d->chunk_bm && d->chunks_got && d->chunks_got < d->chunks) {
		memcpy(miss, ", missing ", 10);
		sdr_diag_missing(miss + 10, sizeof(miss) - 10, d->chunk_bm, d->chunks, 6);
	}
	n = snprintf(buf, len, "recv #%u posted %s ago, %u of %u chunks%s", d->seq, t,
		     d->chunks_got, d->chunks, miss);
	if (n < 0 || (size_t)n >= len)
		return n;
	if (d->last_pkt_ago >= 0) {
		ago(l, sizeof(l), d->last_pkt_ago);
		n += snprintf(buf + n, len - (size_t)n, ", last packet%s%s %s ago",
			      d->peer && *d->peer ? " from " : "", d->peer ? d->peer : "", l);
	} else if (!d->chunks_got) {
		n += snprintf(buf + n, len - (size_t)n, ", no packet of it yet%s%s",
			      d->peer && *d->peer ? " from " : "", d->peer ? d->peer : "");
	}
	if ((size_t)n < len && d->no_rel && d->chunks_got && d->chunks_got < d->chunks)
		n += snprintf(buf + n, len - (size_t)n, " (%s)", sdr_diag_no_rel_hint);
	return n;
}

/* ": 12 of 16 chunks unacknowledged, last retransmission 40 ms ago" after
 * the @p n characters of @p buf, when the chunks are known */
static int send_chunks(char *buf, size_t len, int n, const struct sdr_diag_send *d)
{
	char x[32];

	if (!d->chunks || n < 0 || (size_t)n >= len)
		return n;
	if (d->last_retx_ago < 0)
		return n + snprintf(buf + n, len - (size_t)n,
				    ": %u of %u chunks unacknowledged,"
				    " none retransmitted yet",
				    d->unacked, d->chunks);
	ago(x, sizeof(x), d->last_retx_ago);
	return n + snprintf(buf + n, len - (size_t)n,
			    ": %u of %u chunks unacknowledged, last"
			    " retransmission %s ago",
			    d->unacked, d->chunks, x);
}

static int send_text(char *buf, size_t len, const struct sdr_diag_send *d)
{
	char t[32], l[32], r[32], b[32] = "";
	int n;

	if (d->waiting_cts) {
		ago(t, sizeof(t), d->posted_ago);
		return snprintf(buf, len,
				"send #%u waiting for the peer's clear-to-send for %s:"
				" the peer has not posted its receive",
				d->seq, t);
	}
	ago(t, sizeof(t), d->posted_ago);
	if (d->pkts_sent < d->pkts)
		return snprintf(buf, len,
				"send #%u posted %s ago, %u of %u packets on the wire"
				" (paced or behind other sends)",
				d->seq, t, d->pkts_sent, d->pkts);
	if (!d->rto)
		return snprintf(buf, len, "send #%u posted %s ago, all %u packets on the wire",
				d->seq, t, d->pkts);
	ago(r, sizeof(r), d->rto);
	if (d->backoff >= 2)
		snprintf(b, sizeof(b), ", backoff %ux", d->backoff);
	if (d->last_ack_ago < 0) {
		n = snprintf(buf, len,
			     "send #%u posted %s ago, all %u packets sent, no"
			     " acknowledgement from the peer yet (retransmission timeout %s%s)",
			     d->seq, t, d->pkts, r, b);
		return send_chunks(buf, len, n, d);
	}
	ago(l, sizeof(l), d->last_ack_ago);
	n = snprintf(buf, len,
		     "send #%u posted %s ago, all %u packets sent, waiting for the"
		     " peer's acknowledgement (last one %s ago, retransmission timeout %s%s%s)",
		     d->seq, t, d->pkts, l, r, b,
		     d->probing ? "; probing: one retransmission per timeout" : "");
	return send_chunks(buf, len, n, d);
}

int sdr_diag_send_text(char *buf, size_t len, const struct sdr_diag_send *d)
{
	int n = send_text(buf, len, d);
	char t[32];

	if (d->stalled > 0 && n >= 0 && (size_t)n < len) {
		ago(t, sizeof(t), d->stalled);
		n += snprintf(buf + n, len - (size_t)n,
			      "; stalled %s (link silent), outage %u of this QP", t, d->outage);
	}
	return n;
}
