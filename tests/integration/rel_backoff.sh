#!/usr/bin/env bash
# RTO backoff toward a dead peer (RFC 6298 5.4, 5.5; docs/reliability.md
# "Probing"): the receiving daemon is stopped (SIGSTOP, the moment it dies
# for the sender) and killed (-9) mid-transfer, and not restarted. The sender must stop retransmitting at the paced rate, back off
# exponentially (capped), and still end the outstanding sends with
# -ETIMEDOUT from its global timeout G.
#
# The bound. Once the peer has said nothing for an RTO, the sender
# retransmits one unit per RTO, the RTO doubling from R0 up to the cap C
# (1 s) on every unanswered expiry; before that, only units that expire
# within an RTO of the last ACK go again, once each. So after the kill the
# sender retransmits at most
#   B1 + N * U packets:
#   B1 = min(P, r * 2 RTO0): one round of what was in flight, at most the
#        P packets of the W outstanding sends of S bytes, and at most what
#        the pacer (r packets/s, --port-rate over 4096-byte packets) can
#        send in RTT + RTO <= 2 RTO0 (RTO0: the sender's RTO read by
#        telemetry just before the kill, RTO >= SRTT);
#   N  = the number of terms of R0, 2 R0, 4 R0, ... (each capped at C) whose
#        sum stays <= G + M (M = 500 ms: ACKs in flight at the kill, timer
#        granularity), R0 = max(--sr-min-rto-us, RTO0 / 2) (the RTO may still
#        shrink from ACKs in flight);
#   U  = packets per unit (chunk_pkts).
# Without backoff and probing every outstanding unit would go once per RTO
# (about 1.5 RTT = 40 ms here), G / RTO = 75 rounds, at the paced rate.
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
# kill <= B1 + N * U; exactly one global timeout (sr_send_timeouts = 1); the
# completions are, in order, sends that completed, 1..W -ETIMEDOUT, then
# -ENOTCONN for sends the tool posted afterwards, nothing else; the global
# timeout, not the tool's own (--timeout 3 G: nothing completed for 3 G),
# ended them; the sending daemon survives. The seconds from the kill to the
# -ETIMEDOUT are printed, not asserted.
# Skipped (77) without root or dpdk-telemetry.py.
#   env: SDR_BACKOFF_CASES ("small large ec"), SDR_BACKOFF_GTO_MS (3000)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
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

# one_case NAME SIZE COUNT MIN_DONE UNIT LINK SDR-SEND-ARGS...: transfer COUNT
# messages, kill B once MIN_DONE sends completed (COUNT: enough that the
# transfer is still on when the telemetry has been read, few enough that the
# tool does not spend long failing the rest with -ENOTCONN), wait for the
# sender; returns non-zero (with FAIL lines) if an assertion failed
one_case() {
	local c=$1 S=$2 count=$3 min_done=$4 unit=$5 link=$6 port=$((20000 + RANDOM % 20000))
	local slog=$SDR_TMP/$1-send.log prefix r1 s1 retx0 rto0 tk te srv ndone elapsed nto seq bad=0
	shift 6
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
	# The peer dies when it is stopped (SIGSTOP: no ACK leaves it from then
	# on); A's retransmission counter is read after that, so nothing A
	# retransmitted while the telemetry client started (seconds under ASan
	# on a loaded machine) is counted as "after the kill". The RTO is read
	# before: ACKs still arrive then, and the bound allows it to halve.
	rto0=$(qp_stat "$prefix" rto_us) || sdr_fail "cannot read daemon A's RTO through telemetry"
	kill -STOP "$PB"
	tk=$(date +%s.%N)
	retx0=$(qp_stat "$prefix" sr_retx_pkts) || sdr_fail "cannot read daemon A's counters through telemetry"
	kill -KILL "$PB"
	ndone=$(grep -c "^msg .* sent" "$slog")
	sdr_log "$c: killed the receiving daemon: $ndone sends of $S had completed; sender RTO $rto0 us, $retx0 packets retransmitted so far"
	wait $s1
	srv=$?
	te=$(date +%s.%N)
	kill -KILL $r1 2>/dev/null
	wait $r1 2>/dev/null
	elapsed=$(echo "$te - $tk" | bc)
	kill -0 "$PA" || sdr_fail "$c: the sending daemon died"
	rig_stop "$PA" || sdr_fail "$c: daemon A did not stop cleanly"
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
	/usr/bin/python3 - "$A_JSON" "$retx0" "$rto0" $W "$S" $MTU "$G" $RMIN_US $CAP_MS $MARGIN_MS \
		"$unit" "$SR_PORT_RATE" <<'EOF' || bad=1
import json, sys
(path, retx0, rto0, W, S, mtu, G, rmin_us, cap_ms, margin_ms, U, rate) = sys.argv[1:]
def num(x):
    m = {"K": 1 << 10, "M": 1 << 20}
    return int(x[:-1]) * m[x[-1]] if x[-1] in m else int(x)
size, W, mtu, G, retx0, U = num(S), int(W), int(mtu), int(G), int(retx0), int(U)
rto0_ms = int(rto0) / 1000
r = {"k": 1e3, "m": 1e6, "g": 1e9}[rate[-1]] * float(rate[:-1]) / 8 / mtu  # packets/s, at most
d = json.load(open(path))
t = d["instances"][0]["qp_totals"]
P = W * -(-size // mtu)
B1 = min(P, int(r * 2 * rto0_ms / 1000 + 1))
r0 = max(int(rmin_us) / 1000, rto0_ms / 2)
N, t_ms, rto = 0, 0.0, r0
while t_ms + rto <= G + int(margin_ms):
    t_ms += rto
    N += 1
    rto = min(2 * rto, int(cap_ms))
bound = B1 + N * U
after = t["sr_retx_pkts"] - retx0
print("after the kill: %d packets retransmitted (in all: %d units, %d RTO expiries, %d backoffs,"
      " %d deferred while probing); bound B1 + N * U = %d + %d * %d = %d (B1: min(P = %d, %.0f"
      " packets/s * 2 * %.1f ms); N: unanswered RTOs in %d + %s ms doubling from %.1f ms to %s ms)"
      % (after, t["sr_retx_units"], t["sr_rto_expiries"], t["sr_rto_backoffs"],
         t.get("sr_probe_defers", 0), B1, N, U, bound, P, r, rto0_ms, G, margin_ms, r0, cap_ms))
bad = []
if after > bound:
    bad.append("%d retransmitted packets after the kill > bound %d" % (after, bound))
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
	small) one_case small 64K 4000 20 16 "$SR_LINK_BASE" --rel sr ;;
	large) one_case large 16M 40 2 16 "$SR_LINK_BASE" --rel sr ;;
	ec) one_case ec 4M 200 4 1 "$SR_LINK_BASE,loss=1e-2" --rel ec --ec rs:32:8 --chunk-pkts 1 ;;
	*) sdr_fail "unknown case $c" ;;
	esac || { failed+=("$c"); grep -A30 "drops and errors" "$A_LOG" | head -30; }
done
[ ${#failed[@]} = 0 ] || sdr_fail "cases failed: ${failed[*]}"
echo "dead peer: retransmissions backed off within the bound, the outstanding sends ended -ETIMEDOUT from the global timeout ($cases)"
