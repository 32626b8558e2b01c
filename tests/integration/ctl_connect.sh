#!/usr/bin/env bash
# QP_CONNECT refuses nonsense peers (non-unicast or reserved IPs, bad MACs,
# impossible QPNs, the QP itself, disagreeing parameters) with reasons.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ctl_lib.sh"
sdr_start_ring_pair connect
sdr_ctl_run connect "$SOCK_A" "$SOCK_B"
rig_stop "$DPU_PID" || sdr_fail "daemon did not stop cleanly"
sdr_ctl_expect
