#!/usr/bin/env bash
# The Python binding of libsdr (host/python/sdr) against two DPUs over a
# net_ring pair (no root): tests/python/test_binding.py says what is checked.
# Needs /usr/bin/python3 only (torch optional: the tensor checks run when it
# imports).
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/py_lib.sh"
sdr_start_ring_pair py-binding
sdr_py "$SDR_PY_TESTS/test_binding.py" "$SOCK_A" "$SOCK_B" || { cat "$DPU_LOG"; sdr_fail "binding test"; }
rig_stop "$DPU_PID" || sdr_fail "daemon did not stop cleanly"
