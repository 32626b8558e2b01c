#!/usr/bin/env bash
# Receive completion flags (test_partial.c) against a ring pair: PARTIAL for
# missing data, IMM_PARTIAL for a missing immediate, each in its own case;
# then the daemon's accounting of those receives, and the stats JSON's
# qp_totals object holds exactly the per-QP counters (no filler key).
. "$(dirname "$0")/lib.sh"
sdr_start_ring_pair partial
"$SDR_TEST_PARTIAL" "$SOCK_A" "$SOCK_B" || { cat "$DPU_LOG"; sdr_fail "test_partial failed"; }
rig_stop "$DPU_PID" || sdr_fail "daemon did not stop cleanly"
# 5 receives: 1 whole, 3 completed early by the host, 1 cancelled by the
# destruction of its QP (nothing arrived); the packets sent after an early
# completion are late: 8 data packets of message 0, the 7 immediate-only
# packets of message 1, the 2 data + 6 immediate-only packets of message 2.
[ "$(sdr_json_qp_sum msgs_recv)" = 1 ] || sdr_fail "msgs_recv $(sdr_json_qp_sum msgs_recv), expected 1"
[ "$(sdr_json_qp_sum msgs_partial)" = 4 ] || sdr_fail "msgs_partial $(sdr_json_qp_sum msgs_partial), expected 4"
[ "$(sdr_json_drop late_pkt)" = 23 ] || sdr_fail "late_pkt $(sdr_json_drop late_pkt), expected 23"
[ "$(sdr_json_drop dup_imm)" = 0 ] || sdr_fail "dup_imm $(sdr_json_drop dup_imm), expected 0"
# packets placed = packets that brought something new: 8 + 1 + 0 + (2 data + 6
# immediate-only)
[ "$(sdr_json_qp_sum rx_pkts)" = 17 ] || sdr_fail "rx_pkts $(sdr_json_qp_sum rx_pkts), expected 17"
/usr/bin/python3 - "$STATS" "$(dirname "$0")" <<'PY' || sdr_fail "stats JSON qp_totals"
import json, sys
sys.path.insert(0, sys.argv[2])
from sr_check import consts
d = json.load(open(sys.argv[1]))
names = consts()["qp_stats"]  # the per-QP counters (gen_consts.c)
for inst in d["instances"]:
    keys = list(inst["qp_totals"])
    assert keys == names, "qp_totals keys %s != QP_STATS %s" % (keys, names)
    assert all(isinstance(v, int) for v in inst["qp_totals"].values())
print("qp_totals: exactly the %d per-QP counters" % len(names))
PY
echo "partial: PARTIAL / IMM_PARTIAL each in its case, accounting exact"
