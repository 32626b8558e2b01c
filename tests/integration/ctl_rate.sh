#!/usr/bin/env bash
# A QP's rate has one range, at QP_CREATE and at QP_SET_RATE alike (raw
# requests, so the daemon's own check is what answers).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ctl_lib.sh"
sdr_start_ring_pair rate
sdr_ctl_run rate "$SOCK_A"
rig_stop "$DPU_PID" || sdr_fail "daemon did not stop cleanly"
sdr_ctl_expect
