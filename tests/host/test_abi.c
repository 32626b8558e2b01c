/* SPDX-License-Identifier: BSD-3-Clause */
/* Unit test of common/sdr_abi.c: QP info text and binary forms. */
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <string.h>

#include "sdr_abi.h"
#include "sdr_test.h"

static struct sdr_qp_info sample(void)
{
	struct sdr_qp_info q;

	memset(&q, 0, sizeof(q));
	q.qpn = 0x000104;
	q.rkey = 0x1a2b3c4d;
	q.ip = 0x0A000001;
	memcpy(q.mac, "\x02\x00\x00\xab\xcd\x01", 6);
	q.mtu = 4096;
	q.max_msg = 67108864;
	q.chunk_pkts = 16;
	q.generations = 4;
	q.reliability = SDR_REL_NONE;
	q.ctrl_key = 0xF1E2D3C4B5A69788ull;
	return q;
}

static int same(const struct sdr_qp_info *a, const struct sdr_qp_info *b)
{
	return a->qpn == b->qpn && a->rkey == b->rkey && a->ip == b->ip &&
	       !memcmp(a->mac, b->mac, 6) && a->mtu == b->mtu && a->max_msg == b->max_msg &&
	       a->chunk_pkts == b->chunk_pkts && a->generations == b->generations &&
	       a->reliability == b->reliability && a->ec == b->ec && a->ctrl_key == b->ctrl_key;
}

static void test_text(void)
{
	struct sdr_qp_info q = sample(), r;
	char buf[256], small[20];
	int n;

	n = sdr_qp_info_format(&q, buf, sizeof(buf));
	CHECK(n > 0 && (size_t)n == strlen(buf));
	CHECK(strstr(buf, "qpn=0x000104") && strstr(buf, "ip=10.0.0.1") &&
	      strstr(buf, "mac=02:00:00:ab:cd:01") && strstr(buf, "rkey=0x1a2b3c4d") &&
	      strstr(buf, "key=0xf1e2d3c4b5a69788"));
	memset(&r, 0xEE, sizeof(r));
	CHECK(sdr_qp_info_parse(buf, &r) == 0);
	CHECK(same(&q, &r));
	CHECK(sdr_qp_info_format(&q, small, sizeof(small)) == -1);

	/* keys in another order, rel omitted, decimal qpn */
	CHECK(sdr_qp_info_parse("mtu=1024,qpn=8,rkey=7,key=5,ip=1.2.3.4,mac=00:11:22:33:44:55,"
				"max_msg=4096,chunk_pkts=1,gen=8",
				&r) == 0);
	CHECK(r.qpn == 8 && r.rkey == 7 && r.mtu == 1024 && r.generations == 8 &&
	      r.reliability == 0 && r.ip == 0x01020304);

	static const char *const bad[] = {
		"",
		"qpn=0x000104",
		/* missing key */
		"qpn=0x4,rkey=1,ip=10.0.0.1,mac=02:00:00:00:00:01,mtu=4096,max_msg=64,chunk_pkts="
		"16,gen=4",
		/* key beyond 64 bits */
		"qpn=0x4,rkey=1,key=0x10000000000000000,ip=10.0.0.1,mac=02:00:00:00:00:01,mtu=4096,"
		"max_msg=64,chunk_pkts=16,gen=4",
		/* missing mac */
		"qpn=0x4,rkey=1,key=5,ip=10.0.0.1,mtu=4096,max_msg=64,chunk_pkts=16,gen=4",
		/* duplicate key */
		"qpn=0x4,qpn=0x4,rkey=1,key=5,ip=10.0.0.1,mac=02:00:00:00:00:01,mtu=4096,max_msg="
		"64,chunk_pkts=16,gen=4",
		/* unknown key */
		"qpn=0x4,rkey=1,key=5,ip=10.0.0.1,mac=02:00:00:00:00:01,mtu=4096,max_msg=64,chunk_"
		"pkts=16,gen=4,foo=1",
		/* trailing comma */
		"qpn=0x4,rkey=1,key=5,ip=10.0.0.1,mac=02:00:00:00:00:01,mtu=4096,max_msg=64,chunk_"
		"pkts=16,gen=4,",
		/* bad mtu */
		"qpn=0x4,rkey=1,key=5,ip=10.0.0.1,mac=02:00:00:00:00:01,mtu=1500,max_msg=64,chunk_"
		"pkts=16,gen=4",
		/* gen not a power of two */
		"qpn=0x6,rkey=1,key=5,ip=10.0.0.1,mac=02:00:00:00:00:01,mtu=4096,max_msg=64,chunk_"
		"pkts=16,gen=3",
		/* qpn not aligned to gen */
		"qpn=0x5,rkey=1,key=5,ip=10.0.0.1,mac=02:00:00:00:00:01,mtu=4096,max_msg=64,chunk_"
		"pkts=16,gen=4",
		/* qpn beyond 24 bits */
		"qpn=0x1000000,rkey=1,key=5,ip=10.0.0.1,mac=02:00:00:00:00:01,mtu=4096,max_msg=64,"
		"chunk_pkts=16,gen=4",
		/* rkey beyond 32 bits */
		"qpn=0x4,rkey=0x100000000,key=5,ip=10.0.0.1,mac=02:00:00:00:00:01,mtu=4096,max_msg="
		"64,chunk_pkts=16,gen=4",
		/* bad ip */
		"qpn=0x4,rkey=1,key=5,ip=10.0.0.256,mac=02:00:00:00:00:01,mtu=4096,max_msg=64,"
		"chunk_pkts=16,gen=4",
		/* bad mac */
		"qpn=0x4,rkey=1,key=5,ip=10.0.0.1,mac=02:00:00:00:00,mtu=4096,max_msg=64,chunk_"
		"pkts=16,gen=4",
		/* garbage in number, negative, empty value, zero max_msg, rel out of range */
		"qpn=0x4,rkey=1x,key=5,ip=10.0.0.1,mac=02:00:00:00:00:01,mtu=4096,max_msg=64,chunk_"
		"pkts=16,gen=4",
		"qpn=0x4,rkey=-1,key=5,ip=10.0.0.1,mac=02:00:00:00:00:01,mtu=4096,max_msg=64,chunk_"
		"pkts=16,gen=4",
		"qpn=,rkey=1,key=5,ip=10.0.0.1,mac=02:00:00:00:00:01,mtu=4096,max_msg=64,chunk_"
		"pkts=16,gen=4",
		"qpn=0x4,rkey=1,key=5,ip=10.0.0.1,mac=02:00:00:00:00:01,mtu=4096,max_msg=0,chunk_"
		"pkts=16,gen=4",
		"qpn=0x4,rkey=1,key=5,ip=10.0.0.1,mac=02:00:00:00:00:01,mtu=4096,max_msg=64,chunk_"
		"pkts=16,gen=4,rel=4",
		"qpn=0x4,rkey=1,key=5,ip=10.0.0.1,mac=02:00:00:00:00:01,mtu=4096,max_msg=64,chunk_"
		"pkts=0,gen=4",
		" qpn=0x4,rkey=1,key=5,ip=10.0.0.1,mac=02:00:00:00:00:01,mtu=4096,max_msg=64,chunk_"
		"pkts=16,gen=4",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = sdr_qp_info_parse(bad[i], &r);

		if (rc != -1)
			fprintf(stderr, "accepted malformed: '%s'\n", bad[i]);
		CHECK(rc == -1);
	}
	CHECK(sdr_qp_info_parse(NULL, &r) == -1);
}

static void test_binary(void)
{
	struct sdr_qp_info q = sample(), r;
	uint8_t w[SDR_QP_INFO_WIRE], w2[SDR_QP_INFO_WIRE];

	sdr_qp_info_encode(&q, w);
	/* big-endian fields at fixed offsets */
	CHECK(w[0] == 0 && w[1] == 0 && w[2] == 0x01 && w[3] == 0x04);
	CHECK(w[4] == 0x1a && w[7] == 0x4d && w[8] == 10 && w[11] == 1);
	CHECK(w[18] == 0x10 && w[19] == 0x00 && w[28] == 4);
	CHECK(w[32] == 0xF1 && w[39] == 0x88); /* control key, big-endian */
	CHECK(sdr_qp_info_decode(w, &r) == 0 && same(&q, &r));
	sdr_qp_info_encode(&r, w2);
	CHECK(memcmp(w, w2, sizeof(w)) == 0);

	memcpy(w2, w, sizeof(w));
	w2[31] = 1; /* EC parameters without reliability EC */
	CHECK(sdr_qp_info_decode(w2, &r) == -1);
	memcpy(w2, w, sizeof(w));
	w2[19] = 0x01; /* mtu 4097 */
	CHECK(sdr_qp_info_decode(w2, &r) == -1);
	memcpy(w2, w, sizeof(w));
	w2[28] = 5; /* generations */
	CHECK(sdr_qp_info_decode(w2, &r) == -1);
	memcpy(w2, w, sizeof(w));
	w2[0] = 1; /* qpn > 24 bits */
	CHECK(sdr_qp_info_decode(w2, &r) == -1);
	memcpy(w2, w, sizeof(w));
	w2[29] = 9; /* reliability */
	CHECK(sdr_qp_info_decode(w2, &r) == -1);
}

static void test_ec(void)
{
	struct sdr_qp_info q = sample(), r;
	uint8_t w[SDR_QP_INFO_WIRE];
	unsigned code, k, m;
	char buf[256];

	/* pack/unpack over the whole range */
	for (code = 1; code <= 2; code++)
		for (k = 1; k <= 64; k++)
			for (m = 1; m <= 32; m++) {
				uint16_t v = sdr_ec_param_pack(code, k, m);
				CHECK(sdr_ec_param_code(v) == code && sdr_ec_param_k(v) == k &&
				      sdr_ec_param_m(v) == m);
				CHECK((sdr_ec_param_check(code, k, m) == 0) ==
				      (code == 1 || m <= k));
			}
	CHECK(sdr_ec_param_check(0, 32, 8) == -EINVAL);
	CHECK(sdr_ec_param_check(3, 32, 8) == -EINVAL);
	CHECK(sdr_ec_param_check(1, 0, 8) == -EINVAL);
	CHECK(sdr_ec_param_check(1, 65, 8) == -EINVAL);
	CHECK(sdr_ec_param_check(1, 32, 0) == -EINVAL);
	CHECK(sdr_ec_param_check(1, 32, 33) == -EINVAL);
	CHECK(sdr_ec_param_check(2, 4, 5) == -EINVAL);
	/* the command-line form */
	CHECK(sdr_ec_param_parse("rs:32:8", &code, &k, &m) == 0 && code == 1 && k == 32 && m == 8);
	CHECK(sdr_ec_param_parse("xor:32:8", &code, &k, &m) == 0 && code == 2 && k == 32 && m == 8);
	CHECK(sdr_ec_param_parse("rs:64:32", &code, &k, &m) == 0 && k == 64 && m == 32);
	static const char *const bad[] = {"",          "rs",       "rs:",
					  "rs:32",     "rs:32:",   "rs::8",
					  "rs:32:8:1", "rs:-1:8",  "rs:32:+8",
					  "RS:32:8",   "xor:4:5",  "rs:65:1",
					  "rs:32:33",  "rs:0:1",   "rs:1:0",
					  "ec:32:8",   "rs:32:8 ", "rs:99999999999999999999:1",
					  "xor:0x10:2"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		int rc = sdr_ec_param_parse(bad[i], &code, &k, &m);
		if (rc != -EINVAL)
			fprintf(stderr, "accepted '%s'\n", bad[i]);
		CHECK(rc == -EINVAL);
	}
	CHECK(sdr_ec_param_parse(NULL, &code, &k, &m) == -EINVAL);

	/* QP info of an EC QP: text and binary round trips */
	q.reliability = SDR_REL_EC;
	q.ec = sdr_ec_param_pack(1, 32, 8);
	CHECK(sdr_qp_info_format(&q, buf, sizeof(buf)) > 0 && strstr(buf, ",rel=2,ec=rs:32:8"));
	memset(&r, 0, sizeof(r));
	CHECK(sdr_qp_info_parse(buf, &r) == 0 && same(&q, &r));
	sdr_qp_info_encode(&q, w);
	CHECK(w[29] == SDR_REL_EC && w[30] == 0x17 && w[31] == 0xC7); /* 1<<12 | 31<<6 | 7 */
	CHECK(sdr_qp_info_decode(w, &r) == 0 && same(&q, &r));
	/* EC without parameters, or with invalid ones, is refused */
	w[30] = w[31] = 0;
	CHECK(sdr_qp_info_decode(w, &r) == -1);
	w[30] = 0x20; /* code 2 (XOR), k 1, m 1 */
	w[31] = 0x00;
	CHECK(sdr_qp_info_decode(w, &r) == 0 && sdr_ec_param_code(r.ec) == 2);
	w[31] = 0x01; /* XOR k 1 m 2: m > k */
	CHECK(sdr_qp_info_decode(w, &r) == -1);
	w[30] = 0xC0; /* bits 15..14 reserved */
	w[31] = 0x00;
	CHECK(sdr_qp_info_decode(w, &r) == -1);
	CHECK(sdr_qp_info_parse("qpn=8,rkey=7,key=5,ip=1.2.3.4,mac=00:11:22:33:44:55,mtu=1024,"
				"max_msg=4096,chunk_pkts=1,gen=8,rel=2",
				&r) == -1); /* no ec */
	CHECK(sdr_qp_info_parse("qpn=8,rkey=7,key=5,ip=1.2.3.4,mac=00:11:22:33:44:55,mtu=1024,"
				"max_msg=4096,chunk_pkts=1,gen=8,rel=1,ec=rs:8:2",
				&r) == -1);
	CHECK(sdr_qp_info_parse("qpn=8,rkey=7,key=5,ip=1.2.3.4,mac=00:11:22:33:44:55,mtu=1024,"
				"max_msg=4096,chunk_pkts=1,gen=8,rel=2,ec=xor:8:2",
				&r) == 0 &&
	      r.reliability == SDR_REL_EC && sdr_ec_param_k(r.ec) == 8);
}

int main(void)
{
	test_text();
	test_binary();
	test_ec();
	if (t_failures) {
		fprintf(stderr, "%d check(s) failed\n", t_failures);
		return 1;
	}
	printf("test_abi: ok\n");
	return 0;
}
