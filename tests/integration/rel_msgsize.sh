#!/usr/bin/env bash
# A send longer than the posted receive completes -EMSGSIZE at both ends, on
# QPs of every reliability (tests/integration/test_msgsize.c: two oversize
# sends, one-packet and two-packet, between messages that fit; the QP keeps
# working; no byte is written past a posted receive). Ring pair, no root.
# Every received frame is accounted for, ABORT packets included (placed +
# accepted control + counted drops = frames received).
#   env: SDR_MSGSIZE_RELS ("none sr ec auto")
. "$(dirname "$0")/lib.sh"
export SDR_IT_DIR
SDR_IT_DIR=$(cd "$(dirname "$0")" && pwd)
: "${SDR_TEST_MSGSIZE:=$SDR_BUILD/tests/integration/test_msgsize}"
rels=${SDR_MSGSIZE_RELS:-"none sr ec auto"}
sdr_start_ring_pair msgsize
failed=()
# one process (host contexts) per reliability: nothing of one run's QPs can
# reach the next
for rel in $rels; do
	"$SDR_TEST_MSGSIZE" "$SOCK_A" "$SOCK_B" "$rel" || failed+=("$rel")
done
rig_stop "$DPU_PID" || sdr_fail "daemon did not stop cleanly"
[ ${#failed[@]} = 0 ] || { grep -A30 "drops and errors" "$DPU_LOG"; sdr_fail "a send longer than its receive did not fail -EMSGSIZE at both ends: ${failed[*]}"; }
# every received frame is counted once, the ABORT packets too: placed data
# packets + accepted control packets + receive drops = frames received
/usr/bin/python3 - "$STATS" <<'PY' || { grep -A30 "drops and errors" "$DPU_LOG"; sdr_fail "frames not accounted for"; }
import json, os, sys
sys.path.insert(0, os.environ.get("SDR_IT_DIR", "."))
from sr_check import rx_drop_names
from rel_check import ctrl_accepted, ENTRY_LEVEL
d = json.load(open(sys.argv[1]))
rx = set(rx_drop_names())
ins = d["instances"]
tot = sum(i["rx_pkts"] for i in ins)
placed = sum(i["qp_totals"]["rx_pkts"] for i in ins)
ctrl = sum(ctrl_accepted(i["qp_totals"]) for i in ins)
dropped = sum(v for k, v in d["drops"].items() if k in rx and k not in ENTRY_LEVEL)
print("frames received %d = placed %d + control %d + counted drops %d%s"
      % (tot, placed, ctrl, dropped, "" if tot == placed + ctrl + dropped else
         ": FAIL, %d frames counted nowhere" % (tot - placed - ctrl - dropped)))
sys.exit(0 if tot == placed + ctrl + dropped else 1)
PY
echo "send longer than the posted receive: -EMSGSIZE at both ends on $rels; the QPs kept working"
