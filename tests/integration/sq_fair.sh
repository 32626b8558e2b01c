#!/usr/bin/env bash
# A host flooding its SQ with refused descriptors gets a small share of the
# worker: a refused descriptor costs 16 of the 32 credits a context gets per
# worker loop, so the flooder is served 2 descriptors per loop and then
# deferred (sq_throttled), where a well-behaved context gets 32; the
# well-behaved host on the same worker keeps its goodput.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ctl_lib.sh"
sdr_start_ring_pair sqfair
sdr_ctl_run sqfair "$SOCK_A" "$SOCK_B"
rig_stop "$DPU_PID" || sdr_fail "daemon did not stop cleanly"
bad=$(sdr_json_drop sqe_bad_qp)
thr=$(sdr_json_drop sq_throttled)
echo "flooder: $bad refused descriptors served, deferred $thr times for want of credit"
[ "$bad" -gt 1000 ] || sdr_fail "the flood was not served ($bad)"
# each worker loop serves the flooder at most 2 descriptors and, while more
# are waiting, defers the rest: about one deferral per 2 served
[ $((thr * 4)) -ge "$bad" ] || sdr_fail "only $thr deferrals for $bad refused descriptors: the flooder was not held to 2 per loop"
