#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# e2e_qemu.sh - the aarch64 build end to end under qemu-user (suite 'bluefield'
# of the cross build): sdr-dpu (DPDK statically linked) runs two DPU
# instances joined by a net_ring pair; the aarch64 sdr-recv and sdr-send
# (libsdr) attach through the unix sockets and move messages of 1 B .. 1 MiB,
# which sdr-recv verifies byte by byte. Checks: both tools exit 0, the
# receiver reports every message ok, no data-path drop counter moved, sdr-dpu
# stops cleanly on SIGINT and writes its stats JSON.
#
# Environment (set by tests/bluefield/meson.build): SDR_DPU, SDR_SEND, SDR_RECV,
# SDR_BF_WRAPPER (the runner of aarch64 binaries: qemu-aarch64-static -L <sysroot>;
# empty or unset on a native aarch64 machine).

set -u
wrap=${SDR_BF_WRAPPER:-${MESON_EXE_WRAPPER:-}}
# shellcheck disable=SC2206
W=($wrap)
tmp=$(mktemp -d /tmp/sdr-bf-e2e.XXXXXX)
pids=()
cleanup() {
	local p
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*"; for f in "$tmp"/*.log; do echo "--- $f"; tail -n 20 "$f"; done; exit 1; }

echo "runner: ${wrap:-native}"
sa=$tmp/a.sock sb=$tmp/b.sock
"${W[@]}" "$SDR_DPU" --no-huge --no-shconf --no-pci -m 256 --file-prefix="sdr-bf-e2e-$$" \
	--log-level='*:warning' -- --ring-pair --name "$sa" --ip 10.0.0.1 \
	--instance --name "$sb" --ip 10.0.0.2 --idle-us 200 --stats-json "$tmp/stats.json" \
	> "$tmp/dpu.log" 2>&1 &
dpu=$!
pids+=("$dpu")
for _ in $(seq 300); do
	[ -S "$sa" ] && [ -S "$sb" ] && break
	kill -0 "$dpu" 2>/dev/null || fail "sdr-dpu exited during start-up"
	sleep 0.1
done
[ -S "$sa" ] && [ -S "$sb" ] || fail "sdr-dpu sockets did not appear in 30 s"
grep -q "ready on port" "$tmp/dpu.log" || fail "sdr-dpu did not report ready"

# A free TCP port on loopback for the sdr-send <-> sdr-recv rendezvous.
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
sizes=1,100,4095,4096,4097,65536,1M
count=2
"${W[@]}" "$SDR_RECV" --dpu "$sb" --server --bind 127.0.0.1 --port "$port" --timeout 120 \
	> "$tmp/recv.log" 2>&1 &
rp=$!
pids+=("$rp")
sleep 0.5
"${W[@]}" "$SDR_SEND" --dpu "$sa" --connect "127.0.0.1:$port" --sizes "$sizes" --count $count \
	--seed 11 --timeout 120 > "$tmp/send.log" 2>&1
srv=$?
wait "$rp"
rrv=$?
[ $srv = 0 ] || fail "sdr-send exited $srv"
[ $rrv = 0 ] || fail "sdr-recv exited $rrv"
n=$(( $(echo "$sizes" | tr ',' '\n' | wc -l) * count ))
grep -qE "^received: $n ok, 0 failed" "$tmp/recv.log" ||
	fail "sdr-recv did not report $n verified messages"

kill -INT "$dpu"
for _ in $(seq 200); do kill -0 "$dpu" 2>/dev/null || break; sleep 0.1; done
kill -0 "$dpu" 2>/dev/null && fail "sdr-dpu did not stop within 20 s of SIGINT"
wait "$dpu"
drv=$?
[ $drv = 0 ] || fail "sdr-dpu exited $drv after SIGINT"
[ -s "$tmp/stats.json" ] || fail "sdr-dpu wrote no stats JSON"
# Data-path drops that a lossless ring pair must never see. Control-plane
# counters are only reported: under qemu everything is slow, clear-to-send
# re-sends (--cts-resend-ms) fire and may arrive after the window moved.
# unknown_qp is bounded below instead: at teardown each side's QP goes when
# its tool exits, and a packet already on its way to it (a CTS re-send, the
# peer's QP-CLOSED) may find no QP: where the QP's tombstone is, it counts
# tomb_pkts or tomb_closed instead (docs/wire-format.md section 6).
must_be_zero="truncated not_ipv4 ip_bad not_udp not_roce bad_bth bad_icrc bad_dma_len
stale_gen no_recv bad_rkey bad_va bad_len imm_mismatch dup_pkt sqe_bad sq_corrupt
cq_lost tx_nombuf tx_full"
out=$(/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["drops"]
strict = sys.argv[2].split()
missing = [k for k in strict if k not in d]
bad = ["%s=%s" % (k, d[k]) for k in strict if d.get(k)]
info = ["%s=%s" % (k, v) for k, v in d.items() if v and k not in strict]
print("missing:" + ",".join(missing)); print("bad:" + " ".join(bad)); print("info:" + " ".join(info))
' "$tmp/stats.json" "$must_be_zero") || fail "stats JSON does not parse"
missing=$(sed -n 's/^missing://p' <<<"$out")
bad=$(sed -n 's/^bad://p' <<<"$out")
info=$(sed -n 's/^info://p' <<<"$out")
[ -z "$missing" ] || echo "note: stats JSON has no counter(s) $missing"
[ -z "$bad" ] || fail "data-path drop counters moved on a clean ring pair: $bad"
late=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["drops"].get("unknown_qp", 0))' \
	"$tmp/stats.json")
[ "$late" -le 4 ] || fail "unknown_qp=$late: more packets for no QP than a teardown leaves"
[ -z "$info" ] || echo "note: other non-zero counters (not failures): $info"
tail -n 1 "$tmp/recv.log"
echo "e2e: $n messages ($sizes x $count) verified through sdr-dpu under ${wrap:-native}"
