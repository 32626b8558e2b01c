#!/usr/bin/env bash
# Selective Repeat and a dead peer: the receiving daemon is killed (-9)
# mid-transfer. The sender's QP gets -ETIMEDOUT completions from its daemon's
# global timeout (not from the tool giving up), the sending daemon keeps
# serving; the receiving daemon (without a state file: --state-dir none, so
# nothing is restored) restarts in a new QPN epoch, counts the old
# QP's retransmissions as stale_epoch, and new transfers succeed.
# Skipped (77) without root.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sr_lib.sh"
sr_netns_setup

gto=4000   # global timeout (ms): long enough for the restarted daemon to come up
tool_to=60 # the tools' own timeout: far beyond gto, so it cannot be what fires
link="$SR_LINK_BASE,loss=1e-3"
sr_pair r "$link" --global-timeout-ms $gto --state-dir none
sr_kill_midway r1 "$link" $gto $tool_to 16M 40 --rel sr
# new transfers over the same sending daemon and the restarted receiver
sr_transfer r2 4K,1M,16M 3 || { cat "$A_LOG" "$B_LOG"; sdr_fail "transfer after the restart failed"; }
rig_stop "$PA"; rig_stop "$PB"
st=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["drops"]["stale_epoch"])' "$B_JSON")
to=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["instances"][0]["qp_totals"]["sr_send_timeouts"])' "$A_JSON")
sdr_log "restarted receiver: stale_epoch = $st; sender: sr_send_timeouts = $to"
[ "$st" -gt 0 ] || sdr_fail "the old QP's packets were not counted as stale_epoch"
[ "$to" -ge 1 ] || sdr_fail "the sending daemon counted no send timeout"
echo "SR restart: -ETIMEDOUT at the sender, stale packets counted ($st), new transfers bit-exact"
