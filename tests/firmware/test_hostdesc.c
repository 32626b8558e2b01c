/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Unit tests of descriptor validation as the DPU runs it (common/sdr_desc.c
 * through firmware/prim/sdr_hostdesc.h): every errno path of
 * sdr_sqe_check() (and its counter), the accept paths, and a random sweep
 * that checks the verdict against an independent reference.
 */
#include <errno.h>
#include <string.h>

#include "sdr_hostdesc.h"
#include "sdr_test.h"

#define NMRS 8
#define MTU 4096
#define MAX_MSG (1u << 20)

static struct sdr_mr_ent mrs[NMRS];
static uint8_t backing[NMRS][64];

static void mrs_init(void)
{
	memset(mrs, 0, sizeof(mrs));
	for (int i = 0; i < NMRS; i++) {
		mrs[i].addr = backing[i];
		mrs[i].fd = -1;
	}
	/* 0: small, 1: 4 GiB + 1, 2: huge, 3: invalid (deregistered), 4: zero length */
	mrs[0].len = 10000;
	mrs[1].len = (1ull << 32) + 1;
	mrs[2].len = UINT64_MAX;
	mrs[3].len = 10000;
	mrs[4].len = 0;
	mrs[5].len = MAX_MSG;
	for (int i = 0; i < NMRS; i++)
		atomic_store(&mrs[i].valid, i != 3);
}

static struct sdr_sqe sqe(uint8_t op, uint32_t mr, uint64_t off, uint32_t len)
{
	struct sdr_sqe d;

	memset(&d, 0, sizeof(d));
	d.opcode = op;
	d.qp_id = 3;
	d.mr_id = mr;
	d.wr_id = 0xABCDEF;
	d.offset = off;
	d.length = len;
	return d;
}

#define EXPECT(d, qp, want_rc, want_ctr) expect(d, qp, want_rc, want_ctr, __LINE__)
static void expect(struct sdr_sqe d, const struct sdr_qp_limits *qp, int want_rc,
		   enum sdr_ctr want_ctr, int line)
{
	struct sdr_mr_ent *mr = (struct sdr_mr_ent *)&d; /* poison: must be overwritten */
	enum sdr_ctr ctr = SDR_CTR__MAX;
	struct sdr_sqe copy = d;
	int rc = sdr_sqe_check(&d, qp, mrs, NMRS, &mr, &ctr);

	CHECK(memcmp(&copy, &d, sizeof(d)) == 0); /* the descriptor is input only */
	if (rc != want_rc) {
		fprintf(stderr, "line %d: sdr_sqe_check = %d, want %d\n", line, rc, want_rc);
		t_failures++;
		return;
	}
	if (rc != 0) {
		if (ctr != want_ctr) {
			fprintf(stderr, "line %d: counter %s, want %s\n", line,
				(unsigned)ctr < SDR_CTR__MAX ? sdr_ctr_names[ctr] : "(unset)",
				sdr_ctr_names[want_ctr]);
			t_failures++;
		}
		CHECK(mr == NULL);
		return;
	}
	/* accepted: data-moving opcodes get their (valid) MR, others none */
	if (d.opcode == SDR_SQ_SEND || d.opcode == SDR_SQ_RECV || d.opcode == SDR_SQ_STREAM_DATA) {
		if (mr != &mrs[d.mr_id]) {
			fprintf(stderr, "line %d: accepted without the right MR\n", line);
			t_failures++;
		} else {
			CHECK(atomic_load(&mr->valid));
			CHECK(d.offset <= mr->len && d.length <= mr->len - d.offset);
		}
	} else {
		CHECK(mr == NULL);
	}
}

static const struct sdr_qp_limits qp_ok = {.max_msg = MAX_MSG, .mtu = MTU, .connected = 1};
static const struct sdr_qp_limits qp_nc = {.max_msg = MAX_MSG, .mtu = MTU, .connected = 0};

static void test_malformed(void)
{
	struct sdr_sqe d;

	/* opcode outside 1..6 */
	EXPECT(sqe(0, 0, 0, 100), &qp_ok, -EINVAL, SDR_CTR_sqe_bad);
	EXPECT(sqe(7, 0, 0, 100), &qp_ok, -EINVAL, SDR_CTR_sqe_bad);
	EXPECT(sqe(0xFF, 0, 0, 100), &qp_ok, -EINVAL, SDR_CTR_sqe_bad);
	/* flags must be 0 */
	for (int bit = 0; bit < 8; bit++) {
		d = sqe(SDR_SQ_SEND, 0, 0, 100);
		d.flags = (uint8_t)(1u << bit);
		EXPECT(d, &qp_ok, -EINVAL, SDR_CTR_sqe_bad);
	}
	/* every reserved byte must be 0 */
	for (size_t i = 0; i < sizeof(d.reserved); i++) {
		d = sqe(SDR_SQ_RECV, 0, 0, 100);
		d.reserved[i] = 0x80;
		EXPECT(d, &qp_ok, -EINVAL, SDR_CTR_sqe_bad);
	}
	/* malformed wins over unknown QP */
	EXPECT(sqe(9, 0, 0, 100), NULL, -EINVAL, SDR_CTR_sqe_bad);
	/* unknown QP, for every opcode */
	for (uint8_t op = SDR_SQ_SEND; op <= SDR_SQ_STREAM_END; op++)
		EXPECT(sqe(op, 0, 0, 100), NULL, -EBADF, SDR_CTR_sqe_bad_qp);
}

static void test_send_recv(void)
{
	for (uint8_t op = SDR_SQ_SEND; op <= SDR_SQ_RECV; op++) {
		/* accepted */
		EXPECT(sqe(op, 0, 0, 1), &qp_ok, 0, 0);
		EXPECT(sqe(op, 0, 0, 10000), &qp_ok, 0, 0);
		EXPECT(sqe(op, 0, 9999, 1), &qp_ok, 0, 0);
		EXPECT(sqe(op, 5, 0, MAX_MSG), &qp_ok, 0, 0);
		EXPECT(sqe(op, 1, 1ull << 32, 1), &qp_ok, 0, 0);
		EXPECT(sqe(op, 2, UINT64_MAX - MAX_MSG, MAX_MSG), &qp_ok, 0, 0);
		/* length: zero, one past max_msg, huge */
		EXPECT(sqe(op, 0, 0, 0), &qp_ok, -EMSGSIZE, SDR_CTR_sqe_bad_len);
		EXPECT(sqe(op, 5, 0, MAX_MSG + 1), &qp_ok, -EMSGSIZE, SDR_CTR_sqe_bad_len);
		EXPECT(sqe(op, 2, 0, UINT32_MAX), &qp_ok, -EMSGSIZE, SDR_CTR_sqe_bad_len);
		/* unconnected QP */
		EXPECT(sqe(op, 0, 0, 100), &qp_nc, -ENOTCONN, SDR_CTR_sqe_not_conn);
		/* MR id: out of the table, huge, deregistered */
		EXPECT(sqe(op, NMRS, 0, 100), &qp_ok, -ENOENT, SDR_CTR_sqe_bad_mr);
		EXPECT(sqe(op, UINT32_MAX, 0, 100), &qp_ok, -ENOENT, SDR_CTR_sqe_bad_mr);
		EXPECT(sqe(op, 3, 0, 100), &qp_ok, -ENOENT, SDR_CTR_sqe_bad_mr);
		/* range: just past the end, offset past the end, overflow */
		EXPECT(sqe(op, 0, 0, 10001), &qp_ok, -ERANGE, SDR_CTR_sqe_bad_range);
		EXPECT(sqe(op, 0, 9999, 2), &qp_ok, -ERANGE, SDR_CTR_sqe_bad_range);
		EXPECT(sqe(op, 0, 10000, 1), &qp_ok, -ERANGE, SDR_CTR_sqe_bad_range);
		EXPECT(sqe(op, 0, 10001, 1), &qp_ok, -ERANGE, SDR_CTR_sqe_bad_range);
		EXPECT(sqe(op, 0, UINT64_MAX, 1), &qp_ok, -ERANGE, SDR_CTR_sqe_bad_range);
		EXPECT(sqe(op, 0, UINT64_MAX - 5, 100), &qp_ok, -ERANGE, SDR_CTR_sqe_bad_range);
		EXPECT(sqe(op, 1, UINT64_MAX, 1), &qp_ok, -ERANGE, SDR_CTR_sqe_bad_range);
		EXPECT(sqe(op, 1, 1ull << 32, 2), &qp_ok, -ERANGE, SDR_CTR_sqe_bad_range);
		EXPECT(sqe(op, 2, UINT64_MAX, 1), &qp_ok, -ERANGE, SDR_CTR_sqe_bad_range);
		EXPECT(sqe(op, 2, UINT64_MAX - 99, 100), &qp_ok, -ERANGE, SDR_CTR_sqe_bad_range);
		EXPECT(sqe(op, 2, UINT64_MAX - 100, 100), &qp_ok, 0, 0);
		EXPECT(sqe(op, 4, 0, 1), &qp_ok, -ERANGE, SDR_CTR_sqe_bad_range);
		/* a zero-length check comes before the MR lookup */
		EXPECT(sqe(op, 3, 0, 0), &qp_ok, -EMSGSIZE, SDR_CTR_sqe_bad_len);
	}
	/* an MR that becomes valid later (published by the control plane) */
	atomic_store(&mrs[3].valid, 1);
	EXPECT(sqe(SDR_SQ_SEND, 3, 0, 100), &qp_ok, 0, 0);
	atomic_store(&mrs[3].valid, 0);
	EXPECT(sqe(SDR_SQ_SEND, 3, 0, 100), &qp_ok, -ENOENT, SDR_CTR_sqe_bad_mr);
	/* nmrs bounds the table even if entries exist past it */
	{
		struct sdr_mr_ent *mr;
		enum sdr_ctr ctr = SDR_CTR__MAX;
		struct sdr_sqe d = sqe(SDR_SQ_SEND, 2, 0, 100);

		CHECK(sdr_sqe_check(&d, &qp_ok, mrs, 2, &mr, &ctr) == -ENOENT);
		CHECK(ctr == SDR_CTR_sqe_bad_mr && mr == NULL);
		CHECK(sdr_sqe_check(&d, &qp_ok, mrs, 0, &mr, &ctr) == -ENOENT);
	}
}

static void test_stream(void)
{
	struct sdr_sqe d;

	/* START: length only, no MR */
	EXPECT(sqe(SDR_SQ_STREAM_START, 0, 0, MAX_MSG), &qp_ok, 0, 0);
	EXPECT(sqe(SDR_SQ_STREAM_START, UINT32_MAX, UINT64_MAX, 1), &qp_ok, 0, 0);
	EXPECT(sqe(SDR_SQ_STREAM_START, 0, 0, 0), &qp_ok, -EMSGSIZE, SDR_CTR_sqe_bad_len);
	EXPECT(sqe(SDR_SQ_STREAM_START, 0, 0, MAX_MSG + 1), &qp_ok, -EMSGSIZE, SDR_CTR_sqe_bad_len);
	EXPECT(sqe(SDR_SQ_STREAM_START, 0, 0, 100), &qp_nc, -ENOTCONN, SDR_CTR_sqe_not_conn);

	/* DATA: MTU-aligned offset inside the message, MR range */
	d = sqe(SDR_SQ_STREAM_DATA, 0, 0, 4096);
	d.msg_offset = 3 * MTU;
	EXPECT(d, &qp_ok, 0, 0);
	d.msg_offset = MAX_MSG - MTU;
	EXPECT(d, &qp_ok, 0, 0);
	d.msg_offset = 1; /* misaligned */
	EXPECT(d, &qp_ok, -EINVAL, SDR_CTR_sqe_bad);
	d.msg_offset = MTU - 1;
	EXPECT(d, &qp_ok, -EINVAL, SDR_CTR_sqe_bad);
	d.msg_offset = MTU + 512;
	EXPECT(d, &qp_ok, -EINVAL, SDR_CTR_sqe_bad);
	d.msg_offset = MAX_MSG; /* at the end */
	EXPECT(d, &qp_ok, -EINVAL, SDR_CTR_sqe_bad);
	d.msg_offset = UINT32_MAX - (UINT32_MAX % MTU); /* aligned, far past */
	EXPECT(d, &qp_ok, -EINVAL, SDR_CTR_sqe_bad);
	d.msg_offset = MAX_MSG - MTU; /* runs past the end of the message */
	d.length = MTU + 1;
	EXPECT(d, &qp_ok, -EINVAL, SDR_CTR_sqe_bad);
	d.msg_offset = 0;
	d.length = 0;
	EXPECT(d, &qp_ok, -EINVAL, SDR_CTR_sqe_bad);
	d.length = UINT32_MAX;
	EXPECT(d, &qp_ok, -EINVAL, SDR_CTR_sqe_bad);
	d.length = 100;
	d.mr_id = 3;
	EXPECT(d, &qp_ok, -ENOENT, SDR_CTR_sqe_bad_mr);
	d.mr_id = 0;
	d.offset = 9950;
	EXPECT(d, &qp_ok, -ERANGE, SDR_CTR_sqe_bad_range);
	d.offset = UINT64_MAX;
	EXPECT(d, &qp_ok, -ERANGE, SDR_CTR_sqe_bad_range);

	/* END and RECV_COMPLETE carry only numbers */
	for (uint8_t op = SDR_SQ_RECV_COMPLETE; op <= SDR_SQ_STREAM_END; op += 3) {
		d = sqe(op, UINT32_MAX, UINT64_MAX, 0);
		d.seq = 12345;
		EXPECT(d, &qp_ok, 0, 0);
		d.reserved[23] = 1;
		EXPECT(d, &qp_ok, -EINVAL, SDR_CTR_sqe_bad);
	}
}

/* Random descriptors against an independent statement of the rules. */
static int reference(const struct sdr_sqe *d, const struct sdr_qp_limits *qp, enum sdr_ctr *ctr)
{
	int res_zero = 1;

	for (size_t i = 0; i < sizeof(d->reserved); i++)
		res_zero &= d->reserved[i] == 0;
	if (d->opcode < 1 || d->opcode > 6 || d->flags || !res_zero)
		return *ctr = SDR_CTR_sqe_bad, -EINVAL;
	if (!qp)
		return *ctr = SDR_CTR_sqe_bad_qp, -EBADF;
	if (d->opcode == SDR_SQ_RECV_COMPLETE || d->opcode == SDR_SQ_STREAM_END)
		return 0;
	if (d->opcode == SDR_SQ_STREAM_DATA) {
		/* [msg_offset, msg_offset + length) inside the message, aligned */
		if (d->length == 0 || d->msg_offset % qp->mtu ||
		    (uint64_t)d->msg_offset + d->length > qp->max_msg)
			return *ctr = SDR_CTR_sqe_bad, -EINVAL;
	} else {
		if (d->length == 0 || d->length > qp->max_msg)
			return *ctr = SDR_CTR_sqe_bad_len, -EMSGSIZE;
		if (!qp->connected)
			return *ctr = SDR_CTR_sqe_not_conn, -ENOTCONN;
		if (d->opcode == SDR_SQ_STREAM_START)
			return 0;
	}
	if (d->mr_id >= NMRS || !atomic_load(&mrs[d->mr_id].valid))
		return *ctr = SDR_CTR_sqe_bad_mr, -ENOENT;
	/* 128-bit arithmetic: no overflow in the reference */
	if ((unsigned __int128)d->offset + d->length > mrs[d->mr_id].len)
		return *ctr = SDR_CTR_sqe_bad_range, -ERANGE;
	return 0;
}

static uint64_t pick64(void)
{
	switch (t_below(6)) {
	case 0: return 0;
	case 1: return UINT64_MAX - t_below(MAX_MSG * 2);
	case 2: return t_below(20000);
	case 3: return (1ull << 32) - 2 + t_below(4);
	default: return t_rnd();
	}
}

static uint32_t pick32(void)
{
	switch (t_below(6)) {
	case 0: return 0;
	case 1: return (uint32_t)t_below(MAX_MSG + 2);
	case 2: return (uint32_t)t_below(3) * MTU + (uint32_t)t_below(2);
	case 3: return MAX_MSG - (uint32_t)t_below(MTU + 2);
	case 4: return (uint32_t)t_below(20000);
	default: return (uint32_t)t_rnd();
	}
}

static void test_random(void)
{
	uint64_t accepted = 0;

	for (int i = 0; i < 300000; i++) {
		struct sdr_sqe d;
		const struct sdr_qp_limits *qp = t_below(20) == 0 ? NULL
						 : t_below(5)     ? &qp_ok
								  : &qp_nc;
		enum sdr_ctr want_ctr = SDR_CTR__MAX, ctr = SDR_CTR__MAX;
		struct sdr_mr_ent *mr = NULL;
		int want, rc;

		memset(&d, 0, sizeof(d));
		d.opcode = (uint8_t)(t_below(10) ? t_range(1, 6) : t_below(256));
		d.flags = t_below(30) ? 0 : (uint8_t)t_rnd();
		if (t_below(30) == 0)
			d.reserved[t_below(sizeof(d.reserved))] = (uint8_t)t_range(1, 255);
		d.mr_id = (uint32_t)(t_below(10) ? t_below(NMRS) : t_rnd());
		d.offset = pick64();
		d.length = pick32();
		d.msg_offset = pick32();
		d.seq = (uint32_t)t_rnd();
		d.imm = (uint32_t)t_rnd();
		want = reference(&d, qp, &want_ctr);
		rc = sdr_sqe_check(&d, qp, mrs, NMRS, &mr, &ctr);
		if (rc != want || (rc && ctr != want_ctr)) {
			fprintf(stderr,
				"op %u flags %u mr %u off %llu len %u msg_off %u qp %s: got %d "
				"(%s), "
				"want %d (%s)\n",
				d.opcode, d.flags, d.mr_id, (unsigned long long)d.offset, d.length,
				d.msg_offset, qp ? (qp->connected ? "conn" : "unconn") : "NULL", rc,
				rc && (unsigned)ctr < SDR_CTR__MAX ? sdr_ctr_names[ctr] : "-", want,
				want ? sdr_ctr_names[want_ctr] : "-");
			t_failures++;
			BAIL_IF_MANY();
		}
		accepted += rc == 0;
	}
	CHECK(accepted > 1000); /* the sweep reached the accept paths */
}

/* A channel of a multi-channel QP (docs/architecture.md "Channels"): its
 * lengths are virtual, the real bytes they stand for must lie in the MR; no
 * streams. MR 0 has 10000 bytes; stripes of 4096 over 2 channels. */
static void test_channel(void)
{
	static const struct sdr_qp_limits ch0 = {
		.max_msg = MAX_MSG, .mtu = MTU, .connected = 1, .stripe = {2, 0, 4096}};
	static const struct sdr_qp_limits ch1 = {
		.max_msg = MAX_MSG, .mtu = MTU, .connected = 1, .stripe = {2, 1, 4096}};

	for (uint8_t op = SDR_SQ_SEND; op <= SDR_SQ_RECV; op++) {
		/* channel 1's first byte is real byte 4096 */
		EXPECT(sqe(op, 0, 0, 1), &ch1, 0, 0);
		EXPECT(sqe(op, 0, 5903, 1), &ch1, 0, 0);
		EXPECT(sqe(op, 0, 5904, 1), &ch1, -ERANGE, SDR_CTR_sqe_bad_range);
		/* 4097 virtual bytes: real 0..8192 for channel 0, 4096..12288 for 1 */
		EXPECT(sqe(op, 0, 0, 4097), &ch0, 0, 0);
		EXPECT(sqe(op, 0, 0, 4097), &ch1, -ERANGE, SDR_CTR_sqe_bad_range);
		EXPECT(sqe(op, 0, 0, 4097), &qp_ok, 0, 0); /* (an ordinary QP: 4097 bytes) */
		EXPECT(sqe(op, 0, 1807, 4097), &ch0, 0, 0);
		EXPECT(sqe(op, 0, 1808, 4097), &ch0, -ERANGE, SDR_CTR_sqe_bad_range);
	}
	EXPECT(sqe(SDR_SQ_STREAM_START, 0, 0, 4096), &ch0, -EINVAL, SDR_CTR_sqe_bad);
	EXPECT(sqe(SDR_SQ_STREAM_DATA, 0, 0, 4096), &ch1, -EINVAL, SDR_CTR_sqe_bad);
}

int main(void)
{
	t_seed("test_hostdesc", 0x48444553);
	mrs_init();
	test_malformed();
	test_send_recv();
	test_stream();
	test_channel();
	test_random();
	return t_finish("test_hostdesc");
}
