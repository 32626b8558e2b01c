#!/usr/bin/env bash
# The outage horizon at QP_CREATE (docs/reliability.md "Outage horizon"):
# the request's horizon_ms (0 = the daemon's --outage-horizon-ms, UINT32_MAX
# = never) comes back in the reply; a 2.0-sized request (no horizon_ms) is
# served with a 2.0-sized reply; the libsdr attribute reaches the daemon.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/ctl_lib.sh"
sdr_start_ring_pair horizon --outage-horizon-ms 7000
sdr_ctl_run horizon "$SOCK_A" 7000
rig_stop "$DPU_PID" || sdr_fail "daemon did not stop cleanly"
echo "outage horizon: per-QP values echoed, 2.0 requests answered in 2.0 size"
