#!/usr/bin/env bash
# Hostile host descriptors against a real daemon pair; each rejection is
# counted exactly: test_hostile prints how many descriptors of each kind it
# injected ("expect COUNTER N"); every host-interface counter must equal its
# expectation (0 for the kinds it did not inject).
. "$(dirname "$0")/lib.sh"
sdr_start_ring_pair hostile
"$SDR_TEST_HOSTILE" "$SOCK_A" "$SOCK_B" >"$SDR_TMP/hostile.out" ||
	{ cat "$SDR_TMP/hostile.out" "$DPU_LOG"; sdr_fail "test_hostile failed"; }
cat "$SDR_TMP/hostile.out"
rig_stop "$DPU_PID"
# the two hosts of instance a and the one of instance b
n=$(grep -c "host pid .* detached" "$DPU_LOG")
[ "$n" = 3 ] || { cat "$DPU_LOG"; sdr_fail "daemon logged $n detaches, expected 3"; }
/usr/bin/python3 - "$STATS" "$SDR_TMP/hostile.out" "$(dirname "$0")" <<'PY' ||
import json, sys
sys.path.insert(0, sys.argv[3])
from sr_check import consts
drops = json.load(open(sys.argv[1]))["drops"]
expect = {}
for line in open(sys.argv[2]):
    if line.startswith("expect "):
        _, name, n = line.split()
        expect[name] = int(n)
host = consts()["host_errs"]  # SDR_HOST_ERR_LIST of firmware/prim/sdr_counters.h
assert set(expect) <= set(host), "unknown counters %s" % (set(expect) - set(host))
assert len(expect) == 8, expect
bad = []
for name in host:
    if name == "sq_throttled":
        # (a deferral of the fair SQ service, not a descriptor: how often
        # it happens depends on how many refused descriptors one poll saw)
        print("counter %-14s = %d (not compared)" % (name, drops[name]))
        continue
    want, got = expect.get(name, 0), drops[name]
    print("counter %-14s = %d (expected %d)" % (name, got, want))
    if got != want:
        bad.append(name)
assert not bad, "counters differ: %s" % bad
PY
	sdr_fail "host-interface counters differ from the injected descriptors"
