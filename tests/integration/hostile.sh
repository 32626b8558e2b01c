#!/usr/bin/env bash
# Hostile host descriptors against a real daemon pair; each rejection is counted.
. "$(dirname "$0")/lib.sh"
sdr_start_ring_pair hostile
"$SDR_TEST_HOSTILE" "$SOCK_A" "$SOCK_B" || { cat "$DPU_LOG"; sdr_fail "test_hostile failed"; }
sdr_stop "$DPU_PID"
grep -q "host pid .* detached" "$DPU_LOG" || sdr_fail "daemon did not log the detach"
for c in sqe_bad sqe_bad_qp sqe_bad_mr sqe_bad_range sqe_bad_len sqe_not_conn sqe_no_target; do
	v=$(sdr_json_drop $c)
	[ "$v" -gt 0 ] || sdr_fail "counter $c did not count the hostile descriptor"
	echo "counter $c = $v"
done
