#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Tests of the sdr-model CLI (host/model/sdr-model.c): the reference numbers of
# docs/model.md, this model's own outputs (4 KiB chunks, 1 Gbit/s, 25 ms RTT,
# 1e-2 per packet, RTO 1.5 RTT: SR ~45 ms vs RS(32,8) ~28 ms at 256 KiB, ~95
# vs ~67 ms at 4 MiB), the JSON
# output, --help, and rejection of bad values with exit status 2.
# Usage: test_model_cli.sh path/to/sdr-model
set -u
BIN=${1:?usage: $0 path/to/sdr-model}
# SDR_EXE_WRAPPER: runner of the binary (qemu in the aarch64 cross build)
sdr_model() { ${SDR_EXE_WRAPPER:-} "$BIN" "$@"; }
fail=0
err() { echo "FAIL: $*" >&2; fail=1; }

# field NAME VALUE: value of "NAME" for scheme VALUE in the JSON on stdin
sch_field() {
	tr '{' '\n' | grep "\"name\":\"$1\"" | sed -e "s/.*\"$2\":\([^,}]*\).*/\1/"
}

# in_range X LO HI
in_range() { awk -v x="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(x >= lo && x <= hi) }'; }

ref() { # size sr_lo sr_hi rs_lo rs_hi
	out=$(sdr_model --size "$1" --rate 1gbit --rtt 25ms --loss 1e-2 --chunk 4K --alpha 0.5 --json) ||
		{ err "reference run $1 failed"; return; }
	sr=$(echo "$out" | sch_field 'SR' mean_s)
	rs=$(echo "$out" | sch_field 'RS(32,8)' mean_s)
	echo "reference $1: SR mean $sr s, RS(32,8) mean $rs s"
	in_range "$sr" "$2" "$3" || err "$1: SR mean $sr not in [$2, $3]"
	in_range "$rs" "$4" "$5" || err "$1: RS(32,8) mean $rs not in [$4, $5]"
	echo "$out" | grep -q '"pick":"RS(32,8)"' || err "$1: pick is not RS(32,8)"
}
ref 256K 0.044 0.046 0.027 0.029
ref 4M 0.094 0.096 0.066 0.068

# the table names the pick and every scheme asked for
out=$(sdr_model --size 1M --rate 10g --rtt 10ms --loss 0 --chunk 4K --schemes xor16x4,sr,mds8x2)
echo "$out" | grep -q '^pick: SR ' || err "lossless pick is not SR: $out"
for s in 'XOR(16,4)' 'SR' 'RS(8,2)'; do
	echo "$out" | grep -q "^$s " || err "table lacks $s"
done
# objective p999 is accepted and reported
sdr_model --size 1M --rate 10g --rtt 10ms --chunk-loss 1e-3 --objective p999 | grep -q 'lowest p99.9' ||
	err "--objective p999"

# --help documents every flag
help=$(sdr_model --help) || err "--help exit status"
for f in --size --rate --rtt --loss --chunk-loss --chunk --mtu --alpha --beta --schemes \
	--objective --json --help --paced --parse-scheme --list-schemes; do
	echo "$help" | grep -q -- "$f " || err "--help does not document $f"
done

# bad values: exit 2 and a message naming the option
bad() { # expected-word args...
	word=$1
	shift
	msg=$(sdr_model "$@" 2>&1 >/dev/null)
	rc=$?
	[ "$rc" -eq 2 ] || err "'$*' exit $rc, expected 2"
	echo "$msg" | grep -q -- "$word" || err "'$*' message '$msg' lacks '$word'"
}
OK="--size 4M --rate 1g --rtt 25ms --loss 1e-3"
bad --size --size 0 --rate 1g --rtt 1 --loss 0
bad --size --size -4M --rate 1g --rtt 1 --loss 0
bad --size --size 4X --rate 1g --rtt 1 --loss 0
bad --size --size 1.5 --rate 1g --rtt 1 --loss 0
bad --rate --size 4M --rate 0 --rtt 1 --loss 0
bad --rate --size 4M --rate fast --rtt 1 --loss 0
bad --rtt --size 4M --rate 1g --rtt 5parsec --loss 0
bad --rtt --size 4M --rate 1g --rtt nan --loss 0
bad --loss --size 4M --rate 1g --rtt 1 --loss 1
bad --loss --size 4M --rate 1g --rtt 1 --loss 1e-3x
bad --chunk $OK --chunk 0
bad --mtu $OK --mtu 8T
bad --alpha $OK --alpha -1
bad --beta $OK --beta inf
bad --schemes $OK --schemes rs32
bad --schemes $OK --schemes xor8x16
bad --schemes $OK --schemes ,
bad --objective $OK --objective fastest
bad missing --size 4M
bad 'one of' $OK --chunk-loss 0.1
bad unexpected $OK extra
# the scheme module's view, for scripts: any spelling in, the canonical one out
sdr_model --parse-scheme RS32x8 | grep -q '"spec":"rs:32:8","label":"RS(32,8)".*"qp":true,"model":true' ||
	err "--parse-scheme RS32x8"
sdr_model --parse-scheme rs:200:50 | grep -q '"qp":false,"model":true' || err "--parse-scheme rs:200:50"
sdr_model --parse-scheme rs:8 >/dev/null 2>&1; [ $? -eq 2 ] || err "--parse-scheme rs:8 should exit 2"
sdr_model --list-schemes | grep -q '"qp_limits":{"k_max":64,"m_max":32' || err "--list-schemes"
# --schemes takes the canonical spelling too; the JSON names each scheme's spec
sdr_model --size 1M --rate 1g --rtt 10ms --loss 0 --schemes sr,rs:8:2 --json |
	grep -q '"name":"RS(8,2)","spec":"rs:8:2"' || err "--schemes rs:8:2 / spec"
# --paced: the model's rate is the frame rate x 4096 / 4174 (78 B around a packet)
a=$(sdr_model --size 1M --paced 900m --rtt 10ms --loss 0 --json | sed 's/.*"rate_bps":\([^,]*\).*/\1/')
in_range "$a" 883181600 883181601 || err "--paced 900m gave rate $a"
bad one $OK --paced 1g

# a per-chunk loss the model cannot handle is a model error (1), not usage
sdr_model --size 4M --rate 1g --rtt 1ms --loss 0.5 >/dev/null 2>&1
[ $? -eq 1 ] || err "--loss 0.5 with 16-packet chunks should exit 1"

[ $fail -eq 0 ] && echo "test_model_cli: all checks passed"
exit $fail
