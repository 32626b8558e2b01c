#!/usr/bin/env bash
# A send longer than the posted receive completes -EMSGSIZE at both ends, on
# QPs of every reliability (tests/integration/test_msgsize.c: two oversize
# sends, one-packet and two-packet, between messages that fit; the QP keeps
# working; no byte is written past a posted receive). Ring pair, no root.
#   env: SDR_MSGSIZE_RELS ("none sr ec auto")
. "$(dirname "$0")/lib.sh"
: "${SDR_TEST_MSGSIZE:=$SDR_BUILD/tests/integration/test_msgsize}"
rels=${SDR_MSGSIZE_RELS:-"none sr ec auto"}
sdr_start_ring_pair msgsize
failed=()
# one process (host contexts) per reliability: nothing of one run's QPs can
# reach the next
for rel in $rels; do
	"$SDR_TEST_MSGSIZE" "$SOCK_A" "$SOCK_B" "$rel" || failed+=("$rel")
done
sdr_stop "$DPU_PID" || sdr_fail "daemon did not stop cleanly"
[ ${#failed[@]} = 0 ] || { grep -A30 "drops and errors" "$DPU_LOG"; sdr_fail "a send longer than its receive did not fail -EMSGSIZE at both ends: ${failed[*]}"; }
echo "send longer than the posted receive: -EMSGSIZE at both ends on $rels; the QPs kept working"
