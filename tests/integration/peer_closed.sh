#!/usr/bin/env bash
# Peer gone vs path silent (docs/reliability.md "Faults: link outages"): an
# SR stream A -> B with sends outstanding; the receiving process is killed
# (-9), so daemon B destroys its QP (its host died) and keeps a tombstone.
# B tells A at once (one QP-CLOSED) and answers A's retransmissions from the
# tombstone: A's outstanding sends must complete -ECONNRESET within
# CLOSED_BOUND_MS (default 1500) of the kill, far under the outage horizon
# (60 s), and daemon A counts the QP-CLOSED (peer_closed), daemon B its
# answers (closed_tx). Skipped (77) without root.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sr_lib.sh"
. "$(dirname "$0")/outage_lib.sh"
sr_netns_setup

BOUND_MS=${CLOSED_BOUND_MS:-1500}
link="delay=2ms,rate=1gbit,buffer=4MB,loss=1e-3"
sr_pair pc "$link"
# paced so that sends stay outstanding (window 8) for the whole run
ol_stream sr 400 256K,1M --rel sr --rate 50m
ol_flowing 3
res=$(ol_after '^msg .* error' 10 kill -KILL "${OL_RECV_PIDS[0]}")
echo "after the receiver's kill: first error completion at the sender: $res ms"
wait "${OL_SEND_PIDS[0]}" && sdr_fail "sdr-send succeeded although its peer's QP is gone"
wait "${OL_RECV_PIDS[0]}" 2>/dev/null
slog=${OL_SEND_LOGS[0]}
grep '^msg .* error' "$slog" | head -3
grep -q '^msg .* error (Connection reset by peer)' "$slog" ||
	{ tail -20 "$slog"; sdr_fail "no -ECONNRESET completion at the sender"; }
grep -q '^msg .* error (timed out)' "$slog" && sdr_fail "a send timed out instead"
ms=${res#sr }
[ "$ms" -ge 0 ] && [ "$ms" -le "$BOUND_MS" ] ||
	sdr_fail "the sender learnt of the closed QP after $ms ms (bound $BOUND_MS ms)"
rig_stop "$PA"
rig_stop "$PB"
j() { $PY -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }
pcl=$(j "$A_JSON" 'd["instances"][0]["qp_totals"]["peer_closed"]')
ctx=$(j "$B_JSON" 'd["drops"]["closed_tx"]')
sto=$(j "$A_JSON" 'd["instances"][0]["qp_totals"]["sr_send_timeouts"]')
echo "daemon A: peer_closed $pcl, sr_send_timeouts $sto; daemon B: closed_tx $ctx"
[ "$pcl" -ge 1 ] || sdr_fail "daemon A counted no QP-CLOSED"
[ "$ctx" -ge 1 ] || sdr_fail "daemon B sent no QP-CLOSED"
[ "$sto" = 0 ] || sdr_fail "daemon A timed out a send"
echo "peer closed: the sender failed -ECONNRESET $ms ms after its peer's process died"
