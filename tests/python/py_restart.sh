#!/usr/bin/env bash
# The Python binding across a daemon restart (no root): a net_ring pair with
# a state file; tests/python/test_restart.py moves messages between its two
# contexts while the daemon is killed (-9) and started again 1 s later with
# the same command line (libsdr re-attaches, the daemon restores the QPs).
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/py_lib.sh"
OPTS=(--state-dir "$SDR_TMP/state" --global-timeout-ms 30000)
mkdir -p "$SDR_TMP/ctl"
sdr_start_ring_pair py-restart "${OPTS[@]}"
sdr_py "$SDR_PY_TESTS/test_restart.py" "$SOCK_A" "$SOCK_B" "$SDR_TMP/ctl" \
	>"$SDR_TMP/py.log" 2>&1 &
py=$!
for _ in $(seq 300); do [ -e "$SDR_TMP/ctl/ready" ] && break; kill -0 $py || break; sleep 0.05; done
[ -e "$SDR_TMP/ctl/ready" ] || { cat "$SDR_TMP/py.log"; sdr_fail "the Python side did not get ready"; }
kill -KILL "$DPU_PID"
wait "$DPU_PID" 2>/dev/null
sleep 1
mv "$DPU_LOG" "$DPU_LOG.1"
sdr_start_ring_pair py-restart "${OPTS[@]}"
touch "$SDR_TMP/ctl/restarted"
wait $py
rc=$?
cat "$SDR_TMP/py.log"
[ $rc = 0 ] || { tail -n 20 "$DPU_LOG"; sdr_fail "test_restart.py"; }
grep -c "restored for" "$DPU_LOG" | grep -qx 2 || { cat "$DPU_LOG"; sdr_fail "the daemon did not restore both QPs"; }
rig_stop "$DPU_PID" || sdr_fail "daemon did not stop cleanly"
