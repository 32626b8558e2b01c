#!/usr/bin/env bash
# Erasure coding and a dead peer: the receiving daemon is killed (-9) in the
# middle of an EC transfer. Parity, NACKs and the backstop timers cannot
# help any more; the sender's QP must get -ETIMEDOUT completions from its
# daemon's global timeout (not from the tool giving up) and the sending
# daemon keeps serving: after the receiving daemon restarted, a new EC
# transfer succeeds bit-exact. Skipped (77) without root.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../../hw/x86/netns.sh"
. "$(dirname "$0")/sr_lib.sh"
sr_netns_setup

gto=3000   # global timeout (ms)
tool_to=60 # the tools' own timeout: far beyond gto, so it cannot be what fires
link="$SR_LINK_BASE,loss=1e-2"
ec=(--rel ec --ec rs:32:8 --chunk-pkts 1)
sr_pair d "$link" --global-timeout-ms $gto
port=$((20000 + RANDOM % 20000))
ip netns exec "$NS_B" "$SDR_RECV" --dpu "$B_SOCK" --server --bind $KIP_B --port $port \
	--timeout $tool_to --quiet >"$SDR_TMP/d1-recv.log" 2>&1 &
r1=$!
ip netns exec "$NS_A" "$SDR_SEND" --dpu "$A_SOCK" --connect $KIP_B:$port "${ec[@]}" \
	--sizes 4M --count 60 --timeout $tool_to >"$SDR_TMP/d1-send.log" 2>&1 &
s1=$!
for _ in $(seq 100); do grep -q "^msg " "$SDR_TMP/d1-send.log" && break; sleep 0.1; done
grep -q "^msg " "$SDR_TMP/d1-send.log" || { cat "$SDR_TMP/d1-send.log"; sdr_fail "no message completed before the kill"; }
kill -KILL "$PB"
tk=$(date +%s.%N)
sdr_log "killed the receiving daemon"
B_JSON=$SDR_TMP/d2-b.json B_LOG=$SDR_TMP/d2-b.log
PB=$(sr_dpu "$NS_B" "$VETH_B" "$B_SOCK" $DIP_B $DMAC_B $DMAC_A "$B_JSON" "$B_LOG" \
	"$link,seed=303" --global-timeout-ms $gto) || sdr_fail "daemon B did not restart"
SDR_PIDS+=("$PB")
wait $s1
srv=$?
te=$(date +%s.%N)
kill -KILL $r1 2>/dev/null
wait $r1 2>/dev/null
[ $srv != 0 ] || sdr_fail "sdr-send succeeded although its peer died"
grep -q "error (timed out)" "$SDR_TMP/d1-send.log" ||
	{ cat "$SDR_TMP/d1-send.log"; sdr_fail "no -ETIMEDOUT completion at the sender"; }
grep -q "nothing completed for" "$SDR_TMP/d1-send.log" && sdr_fail "the tool timed out, not the daemon"
sdr_log "sender got -ETIMEDOUT and exited $(echo "$te - $tk" | bc) s after the kill (global timeout $gto ms)"
kill -0 "$PA" || sdr_fail "the sending daemon died"
sr_transfer d2 4K,256K,4M 3 "${ec[@]}" || { cat "$A_LOG" "$B_LOG"; sdr_fail "EC transfer after the restart failed"; }
sdr_stop "$PA"; sdr_stop "$PB"
to=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["instances"][0]["qp_totals"]["sr_send_timeouts"])' "$A_JSON")
par=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["instances"][0]["qp_totals"]["ec_par_pkts_tx"])' "$A_JSON")
[ "$to" -ge 1 ] || sdr_fail "the sending daemon counted no send timeout"
[ "$par" -gt 0 ] || sdr_fail "no parity was sent: EC was not on"
echo "EC dead peer: -ETIMEDOUT at the sender ($to QP timeout), sending daemon alive, new EC transfer bit-exact"
