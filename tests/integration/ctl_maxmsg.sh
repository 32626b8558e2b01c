#!/usr/bin/env bash
# --max-msg is the upper bound of a QP's max_msg, not only its default.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ctl_lib.sh"
sdr_start_ring_pair maxmsg --max-msg 16M
sdr_ctl_run maxmsg "$SOCK_A"
rig_stop "$DPU_PID" || sdr_fail "daemon did not stop cleanly"
sdr_ctl_expect
