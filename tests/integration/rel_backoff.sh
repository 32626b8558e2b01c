#!/usr/bin/env bash
# RTO backoff toward a dead peer (RFC 6298 5.5): the receiving daemon is
# killed (-9) mid-transfer and not restarted. The sender must back off its
# retransmissions exponentially (capped) and still end the outstanding sends
# with -ETIMEDOUT from its global timeout G.
#
# The bound. At the kill the sender has at most W sends of S bytes
# outstanding, P = W * ceil(S / MTU) data packets. With the RTO doubling on
# every expiry, from R0 up to the cap C (1 s, docs/reliability.md), the
# k-th retransmission of a unit comes no earlier than R0 + 2 R0 + ... (each
# term capped at C) after its last transmission; so between the kill and
# the timeout (G, plus a margin M of 500 ms for ACKs still in flight at the
# kill and timer granularity) a unit is retransmitted at most N times, N =
# the number of terms of that series whose sum stays <= G + M, and the
# sender retransmits at most N * P packets. R0 = half the sender's RTO read
# just before the kill (its RTO may still shrink from ACKs in flight),
# floored at --sr-min-rto-us. Without backoff the same units would go once
# per RTO (about 1.5 RTT = 40 ms here), G / RTO = 75 times.
#
# Cases, fresh daemons each (25 ms RTT, 1 Gbit/s):
#  small: SR, W = 8 sends of 64 KiB, all on the wire before the kill: the
#         bound N * P is a few RTO rounds of them;
#  large: SR, W = 8 sends of 16 MiB (128 MiB outstanding, 1.2 s of first
#         transmission at the paced rate): the first pass goes on after the
#         kill; the global timeout must still end the sends;
#  ec:    EC RS(32,8) with one-packet chunks, W = 8 sends of 4 MiB, 1 % loss
#         (the dead-peer rig of ec_deadpeer.sh).
# Each case asserts, from the sender's per-QP counters (DPDK telemetry just
# before the kill, its stats JSON at exit): retransmitted packets after the
# kill <= N * P; exactly one global timeout (sr_send_timeouts = 1); the
# completions are, in order, sends that completed, 1..W -ETIMEDOUT, then
# -ENOTCONN for sends the tool posted afterwards, nothing else; the global
# timeout, not the tool's own (--timeout 3 G: nothing completed for 3 G),
# ended them; the sending daemon survives. The seconds from the kill to the
# -ETIMEDOUT are printed, not asserted.
# Skipped (77) without root or dpdk-telemetry.py.
#   env: SDR_BACKOFF_CASES ("small large ec"), SDR_BACKOFF_GTO_MS (3000)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/../../hw/x86/netns.sh"
. "$here/sr_lib.sh"
TEL=$(command -v dpdk-telemetry.py) || sdr_skip "dpdk-telemetry.py not installed (Debian package dpdk)"
sr_netns_setup

cases=${SDR_BACKOFF_CASES:-"small large ec"}
G=${SDR_BACKOFF_GTO_MS:-3000}
W=8
RMIN_US=2000   # the daemon's default RTO floor, given explicitly
CAP_MS=1000    # the backoff ceiling (docs/reliability.md)
MARGIN_MS=500
MTU=4096
tool_to=$((3 * G / 1000))
failed=()

qp_stat() { # qp_stat PREFIX NAME: a counter of the (only) QP of daemon A, from telemetry
	echo '/sdr/qps,0' | timeout 20 /usr/bin/python3 "$TEL" -f "$1" 2>/dev/null |
		/usr/bin/python3 -c '
import json, sys
o = next(json.loads(l) for l in sys.stdin if l.startswith("{"))["/sdr/qps"]
qps = list(o.values())
assert len(qps) == 1, "expected one QP on daemon A, found %d" % len(qps)
print(qps[0][sys.argv[1]])' "$2"
}

# one_case NAME SIZE MIN_DONE: transfer, kill B once MIN_DONE sends completed,
# wait for the sender; returns non-zero (with FAIL lines) if an assertion failed
one_case() {
	local c=$1 S=$2 min_done=$3 link=$4 port=$((20000 + RANDOM % 20000)) slog=$SDR_TMP/$1-send.log
	local prefix r1 s1 retx0 rto0 tk te srv ndone elapsed nto seq bad=0 count=$(($3 + 3 * W))
	shift 4
	sr_pair "$c" "$link" --global-timeout-ms "$G" --sr-min-rto-us $RMIN_US
	# telemetry of daemon A: its EAL file prefix is on its command line
	prefix=$(tr '\0' '\n' <"/proc/$PA/cmdline" | sed -n 's/^--file-prefix=//p')
	[ -n "$prefix" ] || sdr_fail "no --file-prefix on daemon A's command line"
	ip netns exec "$NS_B" "$SDR_RECV" --dpu "$B_SOCK" --server --bind $KIP_B --port $port \
		--timeout "$tool_to" --window $W --quiet >"$SDR_TMP/$c-recv.log" 2>&1 &
	r1=$!
	ip netns exec "$NS_A" "$SDR_SEND" --dpu "$A_SOCK" --connect $KIP_B:$port "$@" \
		--sizes "$S" --count $count --window $W --timeout "$tool_to" >"$slog" 2>&1 &
	s1=$!
	for _ in $(seq 200); do [ "$(grep -c "^msg .* sent" "$slog")" -ge "$min_done" ] && break; sleep 0.1; done
	[ "$(grep -c "^msg .* sent" "$slog")" -ge "$min_done" ] || { cat "$slog"; sdr_fail "$c: the transfer did not get going"; }
	retx0=$(qp_stat "$prefix" sr_retx_pkts) && rto0=$(qp_stat "$prefix" rto_us) ||
		sdr_fail "cannot read daemon A's counters through telemetry"
	kill -KILL "$PB"
	tk=$(date +%s.%N)
	ndone=$(grep -c "^msg .* sent" "$slog")
	sdr_log "$c: killed the receiving daemon: $ndone sends of $S had completed; sender RTO $rto0 us, $retx0 packets retransmitted so far"
	wait $s1
	srv=$?
	te=$(date +%s.%N)
	kill -KILL $r1 2>/dev/null
	wait $r1 2>/dev/null
	elapsed=$(echo "$te - $tk" | bc)
	kill -0 "$PA" || sdr_fail "$c: the sending daemon died"
	sdr_stop "$PA" || sdr_fail "$c: daemon A did not stop cleanly"
	[ $srv != 0 ] || sdr_fail "$c: sdr-send succeeded although its peer died"
	# completions in log order, runs of the same kind counted
	grep "^msg " "$slog" | sed -E 's/^msg [0-9]+ size [0-9]+ (sent|error \(([^)]*)\)).*/\1/' |
		sed -E 's/^error \(//; s/\)$//' | uniq -c >"$SDR_TMP/$c-order"
	sdr_log "$c: sender exited $elapsed s after the kill; completions in order: $(tr -s ' \n' ' ' <"$SDR_TMP/$c-order")"
	if grep -q "nothing completed for" "$slog"; then
		echo "FAIL: $c: the tool's own timeout ($tool_to s without a completion) fired, not the daemon's global timeout ($G ms)"
		tail -3 "$slog"
		bad=1
	fi
	nto=$(grep -c "error (timed out)" "$slog")
	if [ "$nto" -lt 1 ] || [ "$nto" -gt $W ]; then
		echo "FAIL: $c: $nto -ETIMEDOUT completions, expected 1..$W (the sends outstanding)"
		bad=1
	fi
	seq=$(awk '{print $2}' "$SDR_TMP/$c-order" | tr '\n' ' ')
	case "$seq" in
	"sent timed " | "sent timed QP ") ;;
	*) echo "FAIL: $c: completions not in the order: sent, -ETIMEDOUT, -ENOTCONN"; bad=1 ;;
	esac
	/usr/bin/python3 - "$A_JSON" "$retx0" "$rto0" $W "$S" $MTU "$G" $RMIN_US $CAP_MS $MARGIN_MS <<'EOF' || bad=1
import json, sys
path, retx0, rto0, W, S, mtu, G, rmin_us, cap_ms, margin_ms = sys.argv[1:]
size = int(S[:-1]) * {"K": 1 << 10, "M": 1 << 20}[S[-1]] if S[-1] in "KM" else int(S)
W, mtu, G, retx0 = int(W), int(mtu), int(G), int(retx0)
d = json.load(open(path))
t = d["instances"][0]["qp_totals"]
P = W * -(-size // mtu)
r0 = max(int(rmin_us), int(rto0) / 2) / 1000
# N: k-th retransmission no earlier than sum_{j<k} min(R0 2^j, C) after the last send
N, t_ms, rto = 0, 0.0, r0
while t_ms + rto <= G + int(margin_ms):
    t_ms += rto
    N += 1
    rto = min(2 * rto, int(cap_ms))
after = t["sr_retx_pkts"] - retx0
print("after the kill: %d packets retransmitted (in all: %d units, %d RTO expiries, %d backoffs);"
      " bound N * P = %d * %d = %d (N: retransmissions of a unit in %d + %s ms, RTO doubling"
      " from %.1f ms to %s ms; P: packets of %d outstanding sends of %d B)"
      % (after, t["sr_retx_units"], t["sr_rto_expiries"], t["sr_rto_backoffs"], N, P, N * P,
         G, margin_ms, r0, cap_ms, W, size))
bad = []
if after > N * P:
    bad.append("%d retransmitted packets after the kill > bound %d" % (after, N * P))
if t["sr_send_timeouts"] != 1:
    bad.append("sr_send_timeouts = %d, expected exactly 1 (the QP's one global timeout)"
               % t["sr_send_timeouts"])
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
EOF
	return $bad
}

for c in $cases; do
	case $c in
	small) one_case small 64K 20 "$SR_LINK_BASE" --rel sr ;;
	large) one_case large 16M 2 "$SR_LINK_BASE" --rel sr ;;
	ec) one_case ec 4M 4 "$SR_LINK_BASE,loss=1e-2" --rel ec --ec rs:32:8 --chunk-pkts 1 ;;
	*) sdr_fail "unknown case $c" ;;
	esac || { failed+=("$c"); grep -A30 "drops and errors" "$A_LOG" | head -30; }
done
[ ${#failed[@]} = 0 ] || sdr_fail "cases failed: ${failed[*]}"
echo "dead peer: retransmissions backed off within the bound, the outstanding sends ended -ETIMEDOUT from the global timeout ($cases)"
