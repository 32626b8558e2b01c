#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# run_selftest.sh MODE GEN_PCAP
#
# Self-tests of the external validators that need no firmware:
#   scapy    packets built by scapy from docs/wire-format.md (build_packets.py)
#            pass check_pcap.py and tshark_check.sh: docs, scapy and tshark agree
#   corrupt  --corrupt N packets are exactly the ones check_pcap.py rejects, and
#            a wrong --max-msg is caught: the checker can fail
#   ours     packets from OUR builder (gen_pcap, sdr_build_*_hdr) pass
#            check_pcap.py and tshark_check.sh
#   compare  gen_pcap and build_packets.py, given the same arguments, write
#            byte-identical packets
# Exit 77 when scapy (or, where used, tshark) is missing.
set -eu

if [ $# -ne 2 ]; then
	echo "usage: $0 scapy|corrupt|ours|compare GEN_PCAP" >&2
	exit 2
fi
mode=$1
gen_pcap=$2
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3

if ! "$py" -c 'import scapy.contrib.roce' >/dev/null 2>&1; then
	echo "selftest: scapy not available for $py: skipping" >&2
	exit 77
fi
need_tshark() {
	if ! command -v tshark >/dev/null 2>&1; then
		echo "selftest: tshark not installed: skipping" >&2
		exit 77
	fi
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Messages 1022..1025 cross the msg_id wrap (1023 -> 0) and so the
# generation (DestQP 0x100 -> 0x101); lengths give full, partial, single and
# multi-packet messages. Each mode runs with a user immediate (opcode 0x2B,
# immediate-only packets) and with none ($noimm: --user-imm 0, opcode 0x2A,
# ceil(len / MTU) packets).
addr="--src-mac 02:00:00:00:00:01 --dst-mac 02:00:00:00:00:02 --src-ip 10.0.0.1
      --dst-ip 10.0.0.2 --src-qpn 0x200 --dest-qpn 0x100 --generations 4 --rkey 0x5d12
      --mtu 1024 --max-msg 65536 --user-imm 0x89abcdef --pattern-seed 7"
shape="--mtu 1024 --max-msg 65536"
noimm="--user-imm 0"

expect_fail() { # what command...
	what=$1
	shift
	set +e
	"$@" >"$tmp/out" 2>&1
	rc=$?
	set -e
	if [ $rc -eq 0 ]; then
		echo "FAIL: $what was accepted" >&2
		cat "$tmp/out" >&2
		exit 1
	fi
	if [ $rc -ne 1 ]; then
		echo "FAIL: $what: exit $rc, want 1" >&2
		cat "$tmp/out" >&2
		exit 1
	fi
	echo "ok: $what rejected: $(grep -m1 FAIL "$tmp/out")"
}

case $mode in
scapy)
	need_tshark
	# 9000 B: 9 packets; 3000 B: 3 + 5 immediate-only; 1 B: 1 + 7
	# shellcheck disable=SC2086
	"$py" "$here/build_packets.py" $addr --msg-seq 1022 --messages 2 --msg-len 9000 \
		--pcap "$tmp/a.pcap"
	# shellcheck disable=SC2086
	"$py" "$here/build_packets.py" $addr --msg-seq 1024 --messages 1 --msg-len 3000 \
		--pcap "$tmp/b.pcap"
	# shellcheck disable=SC2086
	"$py" "$here/build_packets.py" $addr --msg-seq 1025 --messages 1 --msg-len 1 \
		--pcap "$tmp/c.pcap"
	# the same without immediate: 9 + 9, 3, 1 packets of opcode 0x2A
	# shellcheck disable=SC2086
	"$py" "$here/build_packets.py" $addr $noimm --msg-seq 1022 --messages 2 --msg-len 9000 \
		--pcap "$tmp/d.pcap"
	# shellcheck disable=SC2086
	"$py" "$here/build_packets.py" $addr $noimm --msg-seq 1024 --messages 1 --msg-len 3000 \
		--pcap "$tmp/e.pcap"
	# shellcheck disable=SC2086
	"$py" "$here/build_packets.py" $addr $noimm --msg-seq 1025 --messages 1 --msg-len 1 \
		--pcap "$tmp/f.pcap"
	for f in a b c d e f; do
		n=$(case $f in a | d) echo 18 ;; b | c) echo 8 ;; e) echo 3 ;; f) echo 1 ;; esac)
		# shellcheck disable=SC2086
		"$py" "$here/check_pcap.py" "$tmp/$f.pcap" $shape --complete --expect-data "$n"
		sh "$here/tshark_check.sh" "$tmp/$f.pcap"
	done
	;;
corrupt)
	# shellcheck disable=SC2086
	"$py" "$here/build_packets.py" $addr --msg-seq 5 --messages 3 --msg-len 5000 \
		--corrupt 3 --seed 11 --pcap "$tmp/a.pcap" >"$tmp/corrupted"
	[ "$(grep -c '^corrupt ' "$tmp/corrupted")" -eq 3 ]
	# shellcheck disable=SC2086
	"$py" "$here/check_pcap.py" "$tmp/a.pcap" $shape --expect-bad-icrc 3 --expect-data 24
	# shellcheck disable=SC2086
	expect_fail "a pcap with 3 corrupted packets" \
		"$py" "$here/check_pcap.py" "$tmp/a.pcap" $shape
	# shellcheck disable=SC2086
	"$py" "$here/build_packets.py" $addr --msg-seq 5 --messages 1 --msg-len 5000 \
		--pcap "$tmp/b.pcap" >/dev/null
	expect_fail "VA checked against the wrong M" \
		"$py" "$here/check_pcap.py" "$tmp/b.pcap" --mtu 1024 --max-msg 131072
	expect_fail "VA checked against the wrong MTU" \
		"$py" "$here/check_pcap.py" "$tmp/b.pcap" --mtu 2048 --max-msg 65536
	expect_fail "a wrong packet count" \
		"$py" "$here/check_pcap.py" "$tmp/b.pcap" --expect-data 7
	# without immediate (0x2A): the same, 5 packets per message
	# shellcheck disable=SC2086
	"$py" "$here/build_packets.py" $addr $noimm --msg-seq 5 --messages 3 --msg-len 5000 \
		--corrupt 3 --seed 11 --pcap "$tmp/c.pcap" >"$tmp/corrupted"
	[ "$(grep -c '^corrupt ' "$tmp/corrupted")" -eq 3 ]
	# shellcheck disable=SC2086
	"$py" "$here/check_pcap.py" "$tmp/c.pcap" $shape --expect-bad-icrc 3 --expect-data 15
	# shellcheck disable=SC2086
	expect_fail "a 0x2A pcap with 3 corrupted packets" \
		"$py" "$here/check_pcap.py" "$tmp/c.pcap" $shape
	# shellcheck disable=SC2086
	"$py" "$here/build_packets.py" $addr $noimm --msg-seq 5 --messages 1 --msg-len 5000 \
		--pcap "$tmp/d.pcap" >/dev/null
	"$py" "$here/check_pcap.py" "$tmp/d.pcap" $shape --complete --expect-data 5
	expect_fail "0x2A VA against the wrong MTU" \
		"$py" "$here/check_pcap.py" "$tmp/d.pcap" --mtu 4096 --max-msg 65536 --complete
	expect_fail "0x2A VA against the wrong M" \
		"$py" "$here/check_pcap.py" "$tmp/d.pcap" --mtu 1024 --max-msg 131072 --complete
	;;
ours)
	need_tshark
	# shellcheck disable=SC2086
	"$gen_pcap" "$tmp/a.pcap" $addr --msg-seq 1020 --messages 6 --msg-len 3000 --cts 3
	# shellcheck disable=SC2086
	"$py" "$here/check_pcap.py" "$tmp/a.pcap" $shape --complete --expect-data 48 \
		--expect-ctrl 1
	sh "$here/tshark_check.sh" "$tmp/a.pcap"
	for len in 1 3 4095 4096 65536; do
		# shellcheck disable=SC2086
		"$gen_pcap" "$tmp/b.pcap" $addr --msg-seq 3 --messages 2 --msg-len $len >/dev/null
		# shellcheck disable=SC2086
		"$py" "$here/check_pcap.py" "$tmp/b.pcap" $shape --complete -q
	done
	sh "$here/tshark_check.sh" "$tmp/b.pcap"
	# without immediate: opcode 0x2A, 3 packets per 3000 B message
	# shellcheck disable=SC2086
	"$gen_pcap" "$tmp/c.pcap" $addr $noimm --msg-seq 1020 --messages 6 --msg-len 3000 --cts 3
	# shellcheck disable=SC2086
	"$py" "$here/check_pcap.py" "$tmp/c.pcap" $shape --complete --expect-data 18 \
		--expect-ctrl 1
	sh "$here/tshark_check.sh" "$tmp/c.pcap"
	for len in 1 4096 65536; do
		# shellcheck disable=SC2086
		"$gen_pcap" "$tmp/d.pcap" $addr $noimm --msg-seq 3 --messages 2 --msg-len $len \
			>/dev/null
		# shellcheck disable=SC2086
		"$py" "$here/check_pcap.py" "$tmp/d.pcap" $shape --complete -q \
			--expect-data $((2 * ((len + 1023) / 1024)))
	done
	;;
compare)
	for imm in 0x89abcdef 0; do
		for len in 1 3 1024 3000 9000; do
			# shellcheck disable=SC2086
			"$gen_pcap" "$tmp/ours.pcap" $addr --user-imm $imm --msg-seq 1021 \
				--messages 4 --msg-len $len >/dev/null
			# shellcheck disable=SC2086
			"$py" "$here/build_packets.py" $addr --user-imm $imm --msg-seq 1021 \
				--messages 4 --msg-len $len --pcap "$tmp/scapy.pcap" 2>/dev/null
			# shellcheck disable=SC2086
			"$py" "$here/check_pcap.py" "$tmp/ours.pcap" $shape --complete -q \
				--compare "$tmp/scapy.pcap"
		done
	done
	# a version 2 control packet (CTS) first: our encoder and the scapy
	# builder agree on the control header (key included) and the entries
	for n in 1 5 64; do
		# shellcheck disable=SC2086
		"$gen_pcap" "$tmp/ours.pcap" $addr --msg-seq 1021 --messages 1 --msg-len 3000 \
			--cts $n --psn 77 >/dev/null
		# shellcheck disable=SC2086
		"$py" "$here/build_packets.py" $addr --msg-seq 1021 --messages 1 --msg-len 3000 \
			--cts $n --psn 77 --pcap "$tmp/scapy.pcap" 2>/dev/null
		# shellcheck disable=SC2086
		"$py" "$here/check_pcap.py" "$tmp/ours.pcap" $shape --complete -q \
			--expect-ctrl 1 --compare "$tmp/scapy.pcap"
	done
	;;
*)
	echo "unknown mode $mode" >&2
	exit 2
	;;
esac
echo "selftest $mode: passed"
