#!/usr/bin/env bash
# A host that never reads its control replies stalls nobody: another host
# attaches and creates a QP meanwhile, the non-reader is dropped after
# --ctl-reply-timeout-ms, and SIGINT stops the daemon at once even while it
# is stuck. An untouched 3 GiB registration blocks nobody either and does
# not grow the daemon's RSS.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ctl_lib.sh"
sdr_start_ring_pair stall --ctl-reply-timeout-ms 1000
sdr_ctl_run stall "$SOCK_A" "$DPU_PID"
rig_stop "$DPU_PID" || sdr_fail "daemon did not stop cleanly"
sdr_ctl_expect
grep -q "dropped: it did not take its reply within 1000 ms" "$DPU_LOG" ||
	sdr_fail "the daemon did not log the drop"

# SIGINT while a non-reading client is stuck (reply timeout 60 s)
sdr_start_ring_pair stall2 --ctl-reply-timeout-ms 60000
"$SDR_TEST_CTL" hold "$SOCK_A" >"$SDR_TMP/hold.log" 2>&1 &
hold=$!
SDR_PIDS+=("$hold")
for _ in $(seq 200); do grep -q READY "$SDR_TMP/hold.log" && break; kill -0 $hold || break; sleep 0.1; done
cat "$SDR_TMP/hold.log"
grep -q READY "$SDR_TMP/hold.log" || sdr_fail "the holding client did not get ready"
t0=$(date +%s%N)
kill -INT "$DPU_PID"
for _ in $(seq 100); do kill -0 "$DPU_PID" 2>/dev/null || break; sleep 0.02; done
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
kill -0 "$DPU_PID" 2>/dev/null && { tail "$DPU_LOG"; sdr_fail "daemon still running ${ms} ms after SIGINT"; }
echo "SIGINT with a stuck non-reading client: the daemon exited after $ms ms"
[ "$ms" -lt 2000 ] || sdr_fail "the daemon needed $ms ms to stop"
kill $hold 2>/dev/null
