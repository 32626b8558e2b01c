#!/usr/bin/env bash
# Selective Repeat and a dead peer: the receiving daemon is killed (-9)
# mid-transfer. The sender's QP gets -ETIMEDOUT completions from its daemon's
# global timeout (not from the tool giving up), the sending daemon keeps
# serving; the receiving daemon restarts in a new QPN epoch, counts the old
# QP's retransmissions as stale_epoch, and new transfers succeed.
# Skipped (77) without root.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../../hw/x86/netns.sh"
. "$(dirname "$0")/sr_lib.sh"
sr_netns_setup

gto=4000   # global timeout (ms): long enough for the restarted daemon to come up
tool_to=60 # the tools' own timeout: far beyond gto, so it cannot be what fires
link="$SR_LINK_BASE,loss=1e-3"
sr_pair r "$link" --global-timeout-ms $gto
port=$((20000 + RANDOM % 20000))
ip netns exec "$NS_B" "$SDR_RECV" --dpu "$B_SOCK" --server --bind $KIP_B --port $port \
	--timeout $tool_to --quiet >"$SDR_TMP/r1-recv.log" 2>&1 &
r1=$!
t0=$(date +%s.%N)
# line-buffered, so that the first completion shows up in the log at once
ip netns exec "$NS_A" "$SDR_SEND" --dpu "$A_SOCK" --connect $KIP_B:$port --rel sr \
	--sizes 16M --count 40 --timeout $tool_to >"$SDR_TMP/r1-send.log" 2>&1 &
s1=$!
# kill the receiving daemon once data flows
for _ in $(seq 100); do grep -q "^msg " "$SDR_TMP/r1-send.log" && break; sleep 0.1; done
grep -q "^msg " "$SDR_TMP/r1-send.log" || { cat "$SDR_TMP/r1-send.log"; sdr_fail "no message completed before the kill"; }
kill -KILL "$PB"
tk=$(date +%s.%N)
sdr_log "killed the receiving daemon"
# restart it at once (same socket, a new QPN epoch), same link
B_JSON=$SDR_TMP/r2-b.json B_LOG=$SDR_TMP/r2-b.log
PB=$(sr_dpu "$NS_B" "$VETH_B" "$B_SOCK" $DIP_B $DMAC_B $DMAC_A "$B_JSON" "$B_LOG" \
	"$link,seed=303" --global-timeout-ms $gto) || sdr_fail "daemon B did not restart"
SDR_PIDS+=("$PB")
wait $s1
srv=$?
te=$(date +%s.%N)
kill -KILL $r1 2>/dev/null
wait $r1 2>/dev/null
[ $srv != 0 ] || sdr_fail "sdr-send succeeded although its peer died"
grep -q "error (timed out)" "$SDR_TMP/r1-send.log" ||
	{ cat "$SDR_TMP/r1-send.log"; sdr_fail "no -ETIMEDOUT completion at the sender"; }
el=$(echo "$te - $tk" | bc)
sdr_log "sender got -ETIMEDOUT and exited $el s after the kill (global timeout $gto ms, tool timeout $tool_to s)"
# the tool's own timeout did not fire: the daemon's global timeout did
grep -q "nothing completed for" "$SDR_TMP/r1-send.log" && sdr_fail "the tool timed out, not the daemon"
kill -0 "$PA" || sdr_fail "the sending daemon died"
# new transfers over the same sending daemon and the restarted receiver
sr_transfer r2 4K,1M,16M 3 || { cat "$A_LOG" "$B_LOG"; sdr_fail "transfer after the restart failed"; }
sdr_stop "$PA"; sdr_stop "$PB"
st=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["drops"]["stale_epoch"])' "$B_JSON")
to=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["instances"][0]["qp_totals"]["sr_send_timeouts"])' "$A_JSON")
sdr_log "restarted receiver: stale_epoch = $st; sender: sr_send_timeouts = $to"
[ "$st" -gt 0 ] || sdr_fail "the old QP's packets were not counted as stale_epoch"
[ "$to" -ge 1 ] || sdr_fail "the sending daemon counted no send timeout"
echo "SR restart: -ETIMEDOUT at the sender, stale packets counted ($st), new transfers bit-exact"
