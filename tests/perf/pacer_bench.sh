#!/usr/bin/env bash
# sdr-pacer-bench (host/perf/pacer-bench.c), which drives sdr-dpu's pacer
# (common/sdr_wheel.h) as a worker does: its precision figures come from a
# virtual clock, so they are deterministic and checkable (its cost figures
# are wall time and are not checked). Checks: the pacer delivers the
# configured rate (backlogged, within 1 %); with many QPs each visit the
# scheduler hands out sends a frame (only due QPs are visited); on on/off
# traffic no QP exceeds its rate by more than one frame in 10; bad options
# are usage errors (2).
set -u
B=${SDR_PACER_BENCH:?}
# SDR_EXE_WRAPPER: runner of the binary (qemu in the aarch64 cross build)
bench() { ${SDR_EXE_WRAPPER:-} "$B" "$@"; }
PY=${SDR_PYTHON:-/usr/bin/python3}
fail() { echo "FAIL: $*" >&2; exit 1; }
out=$(bench --flows 1,8,64 --frames 4174,142 --sim-ms 20 --reps 1 --json) || fail "backlogged run"
out2=$(bench --flows 4,64 --frames 142,4174 --sim-ms 40 --reps 1 --json --msg 16K --load 0.5) ||
	fail "on/off run"
"$PY" - "$out" "$out2" <<'PY' || exit 1
import json, sys
back = [json.loads(l) for l in sys.argv[1].splitlines()]
onoff = [json.loads(l) for l in sys.argv[2].splitlines()]
assert len(back) == 6 and len(onoff) == 4, (len(back), len(onoff))
for r in back:
    assert r["pacer"] == "timing_wheel", r
    assert abs(r["rate_ratio"] - 1) < 0.01, r
    assert r["frames"] > 0 and r["ns_per_frame"] > 0, r
    if r["flows"] >= 8: # a QP's frames are far apart: one visit, one frame
        assert abs(r["visits_per_frame"] - 1) < 0.001, r
for r in onoff:
    assert r["max_peak"] <= 1.11, r
print("backlogged: rate within 1 %% for %d runs, a visit per frame with >= 8 QPs; on/off"
      " peak at most %.2fx" % (len(back), max(r["max_peak"] for r in onoff)))
PY
for bad in "--flows 0" "--frames 10" "--share 2" "--poll-ns x" "--msg 2G" "extra"; do
	# shellcheck disable=SC2086
	bench $bad >/dev/null 2>&1
	[ $? = 2 ] || fail "'$bad' is not a usage error"
done
bench --help | grep -q -- "--slot-shift" || fail "--help"
echo "sdr-pacer-bench: ok"
