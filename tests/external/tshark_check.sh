#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# tshark_check.sh PCAP
#
# Wireshark's own dissector must agree with docs/wire-format.md:
#  1. every UDP/4791 packet is dissected as InfiniBand (RRoCE),
#  2. every opcode 43 packet is named "Unreliable Connection (UC) - RDMA
#     WRITE Only with Immediate", every opcode 42 one "... RDMA WRITE Only"
#     (a message without immediate) and every opcode 36 one "... SEND Only",
#  3. DestQP, PSN, VA, R_Key, DMA length, immediate and ICRC as tshark
#     reads them equal what check_pcap.py (scapy) reads, packet by packet.
# Exit 0 ok, 1 mismatch, 77 when tshark or scapy is missing.
set -eu

if [ $# -ne 1 ]; then
	echo "usage: $0 PCAP" >&2
	exit 2
fi
pcap=$1
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3

if ! command -v tshark >/dev/null 2>&1; then
	echo "tshark_check: tshark not installed: skipping" >&2
	exit 77
fi
if ! "$py" -c 'import scapy.contrib.roce' >/dev/null 2>&1; then
	echo "tshark_check: scapy not available for $py: skipping" >&2
	exit 77
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# UDP 4791 is RoCEv2 in tshark by default; say so anyway, in case a local
# profile changed it.
# The RDMA payload is opaque to us, but tshark guesses at it with heuristic
# payload dissectors; "eth_over_ib" throws on a 1-byte payload whose byte is
# 0x08 (a truncated Ethertype). Switch the guessers off where tshark knows them.
noheur=""
for h in eth_over_ib fc_infiniband iser_infiniband lnet_ib rpcrdma_infiniband sdp_infiniband \
	smb_direct_infiniband smcr_infiniband; do
	tshark -r "$pcap" -c 1 --disable-heuristic "$h" >/dev/null 2>&1 && noheur="$noheur --disable-heuristic $h"
done
ts() {
	# shellcheck disable=SC2086
	tshark -r "$pcap" -d udp.port==4791,infiniband $noheur "$@" 2>"$tmp/tshark.err" || {
		cat "$tmp/tshark.err" >&2
		exit 1
	}
}

fail=0

# Same columns and formatting as check_pcap.py --fields. ImmDt shows up twice
# (the header and its field): occurrence=f keeps the first.
ts -Y 'udp.dstport == 4791' -T fields -E separator=/t -E occurrence=f \
	-e frame.number -e infiniband.bth.opcode -e infiniband.bth.destqp \
	-e infiniband.bth.psn -e infiniband.reth.va -e infiniband.reth.r_key \
	-e infiniband.reth.dmalen -e infiniband.immdt -e infiniband.invariant.crc \
	>"$tmp/tshark.txt"
n_udp=$(wc -l <"$tmp/tshark.txt")
n_ib=$(awk -F'\t' '$2 != ""' "$tmp/tshark.txt" | wc -l)
n43=$(awk -F'\t' '$2 == "43"' "$tmp/tshark.txt" | wc -l)
n42=$(awk -F'\t' '$2 == "42"' "$tmp/tshark.txt" | wc -l)
n36=$(awk -F'\t' '$2 == "36"' "$tmp/tshark.txt" | wc -l)
if [ "$n_udp" -eq 0 ]; then
	echo "FAIL: no RoCEv2 packets in $pcap" >&2
	exit 1
fi
if [ "$n_udp" -ne "$n_ib" ]; then
	echo "FAIL: $n_udp UDP/4791 packets but tshark dissects only $n_ib as InfiniBand" >&2
	fail=1
fi
if [ $((n43 + n42 + n36)) -ne "$n_ib" ]; then
	echo "FAIL: $((n_ib - n43 - n42 - n36)) RoCEv2 packets with another opcode" >&2
	fail=1
fi

# The names tshark gives the opcodes, from the packet details.
ts -Y 'udp.dstport == 4791' -V >"$tmp/details.txt"
check_name() { # opcode count expected-name
	named=$(grep -cF "Opcode: Unreliable Connection (UC) - $3 ($1)" "$tmp/details.txt" || true)
	if [ "$2" -ne "$named" ]; then
		echo "FAIL: $2 packets with opcode $1 but $named named \"$3\"" >&2
		fail=1
	fi
}
check_name 43 "$n43" "RDMA WRITE Only with Immediate"
check_name 42 "$n42" "RDMA WRITE Only"
check_name 36 "$n36" "SEND Only"

set +e
"$py" "$here/check_pcap.py" --fields -q --expect-bad-icrc any "$pcap" \
	>"$tmp/scapy.txt" 2>"$tmp/scapy.err"
rc=$?
set -e
# Exit 1 is a wire-format complaint, which is check_pcap's job to report,
# not this script's; the field dump is still complete. Anything else (77,
# a usage error, a crash) is real.
if [ $rc -ne 0 ] && [ $rc -ne 1 ]; then
	cat "$tmp/scapy.err" >&2
	exit $rc
fi
if ! diff -u "$tmp/scapy.txt" "$tmp/tshark.txt" >"$tmp/diff"; then
	echo "FAIL: tshark and scapy read different header fields (- scapy, + tshark):" >&2
	head -40 "$tmp/diff" >&2
	fail=1
fi

if [ $fail -ne 0 ]; then
	exit 1
fi
echo "tshark_check: $n_ib RoCEv2 packets ($n43 UC RDMA WRITE Only with Immediate," \
	"$n42 UC RDMA WRITE Only, $n36 UC SEND Only): names and fields agree with scapy"
