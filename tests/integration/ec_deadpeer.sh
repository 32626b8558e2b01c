#!/usr/bin/env bash
# Erasure coding and a dead peer: the receiving daemon is killed (-9) in the
# middle of an EC transfer. Parity, NACKs and the backstop timers cannot
# help any more; the sender's QP must get -ETIMEDOUT completions from its
# daemon's global timeout (not from the tool giving up) and the sending
# daemon keeps serving: after the receiving daemon restarted, a new EC
# transfer succeeds bit-exact. Skipped (77) without root.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sr_lib.sh"
sr_netns_setup

gto=3000   # global timeout (ms)
tool_to=60 # the tools' own timeout: far beyond gto, so it cannot be what fires
link="$SR_LINK_BASE,loss=1e-2"
ec=(--rel ec --ec rs:32:8 --chunk-pkts 1)
sr_pair d "$link" --global-timeout-ms $gto
sr_kill_midway d1 "$link" $gto $tool_to 4M 60 "${ec[@]}"
sr_transfer d2 4K,256K,4M 3 "${ec[@]}" || { cat "$A_LOG" "$B_LOG"; sdr_fail "EC transfer after the restart failed"; }
rig_stop "$PA"; rig_stop "$PB"
to=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["instances"][0]["qp_totals"]["sr_send_timeouts"])' "$A_JSON")
par=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["instances"][0]["qp_totals"]["ec_par_pkts_tx"])' "$A_JSON")
[ "$to" -ge 1 ] || sdr_fail "the sending daemon counted no send timeout"
[ "$par" -gt 0 ] || sdr_fail "no parity was sent: EC was not on"
echo "EC dead peer: -ETIMEDOUT at the sender ($to QP timeout), sending daemon alive, new EC transfer bit-exact"
