#!/usr/bin/env bash
# QP_RESTORE after a daemon restart (docs/security.md "Restoring a QP"): the
# daemon (a ring pair) is killed with -9 while hosts hold QPs and started
# again with the same command line; its state file (--state-dir) gives it
# the same key and QPN epoch. The blocks of the old QPs are reserved for
# --restore-window-ms; hostile restores (wrong token, other keys, another
# uid, bad segments, another address, a second claim) are refused with
# their errno and counted; the rightful ones get the same QPN, R_Key and
# control key; an unclaimed block is free after the window. Then
# --state-dir none: no token, no restore.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ctl_lib.sh"
: "${SDR_TEST_RESTORE:=$SDR_BUILD/tests/integration/test_restore}"
STATE=$SDR_TMP/state
OPTS=(--state-dir "$STATE" --restore-window-ms 4000)

start() {
	sdr_start_ring_pair restore "${OPTS[@]}"
	if [ "$(id -u)" = 0 ]; then # the other uid (65534) must reach the socket
		chmod 0711 "$SDR_TMP"
		chmod 0666 "$SOCK_A"
	fi
}
start
first_pid=$DPU_PID
[ "$(stat -c %a "$STATE")" = 700 ] || sdr_fail "state dir is not 0700"
for f in "$STATE"/*.state; do
	[ "$(stat -c %a "$f")" = 600 ] || sdr_fail "state file $f is not 0600"
done
[ "$(ls "$STATE"/*.state | wc -l)" = 2 ] || sdr_fail "expected one state file per instance"

"$SDR_TEST_RESTORE" restore "$SOCK_A" "$SOCK_B" >"$SDR_TMP/ctl.log" 2>&1 &
tp=$!
for _ in $(seq 100); do grep -q READY "$SDR_TMP/ctl.log" && break; sleep 0.1; done
grep -q READY "$SDR_TMP/ctl.log" || { cat "$SDR_TMP/ctl.log"; sdr_fail "test_restore did not get ready"; }
epoch1=$(grep -o 'QPs 0x[0-9a-f]*' "$SDR_TMP/ctl.log")
kill -KILL "$first_pid"
wait "$first_pid" 2>/dev/null
sleep 1
start
grep -q "QP blocks reserved for restore" "$DPU_LOG" || sdr_fail "restart did not read its state file"
wait "$tp"
rc=$?
cat "$SDR_TMP/ctl.log"
[ $rc = 0 ] || { tail -30 "$DPU_LOG"; sdr_fail "test_restore restore failed (exit $rc) after $epoch1"; }
rig_stop "$DPU_PID" || sdr_fail "daemon did not stop cleanly"
sdr_ctl_expect
grep -q "QP_RESTORE of .* refused: restore token does not match" "$DPU_LOG" ||
	sdr_fail "the daemon did not log the refused restore"

# no state: a token of zeros, QP_RESTORE refused
OPTS=(--state-dir none)
sdr_start_ring_pair restore-none "${OPTS[@]}"
SDR_TEST_CTL=$SDR_TEST_RESTORE sdr_ctl_run none "$SOCK_A"
rig_stop "$DPU_PID" || sdr_fail "daemon did not stop cleanly"
sdr_ctl_expect
echo "QP_RESTORE: reserved blocks, refusals and rightful restores as expected"
