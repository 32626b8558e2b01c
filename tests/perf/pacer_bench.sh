#!/usr/bin/env bash
# sdr-pacer-bench (host/perf/pacer-bench.c): its precision figures come from a
# virtual clock, so they are deterministic and checkable (its cost figures
# are wall time and are not checked). Checks: both pacers deliver their
# configured rate (backlogged, within 1 %); on on/off traffic the timing
# wheel never exceeds a QP's rate by more than one frame in 10 while the
# token bucket bursts its depth (> 1.5x); bad options are usage errors (2).
set -u
B=${SDR_PACER_BENCH:?}
# SDR_EXE_WRAPPER: runner of the binary (qemu in the aarch64 cross build)
bench() { ${SDR_EXE_WRAPPER:-} "$B" "$@"; }
PY=${SDR_PYTHON:-/usr/bin/python3}
fail() { echo "FAIL: $*" >&2; exit 1; }
out=$(bench --flows 1,8 --frames 4174,142 --sim-ms 20 --reps 1 --json) || fail "backlogged run"
out2=$(bench --flows 4 --frames 142 --sim-ms 40 --reps 1 --json --msg 16K --load 0.5) || fail "on/off run"
"$PY" - "$out" "$out2" <<'PY' || exit 1
import json, sys
back = [json.loads(l) for l in sys.argv[1].splitlines()]
onoff = [json.loads(l) for l in sys.argv[2].splitlines()]
assert len(back) == 8 and len(onoff) == 2, (len(back), len(onoff))
for r in back:
    assert abs(r["rate_ratio"] - 1) < 0.01, r
    assert r["frames"] > 0 and r["ns_per_frame"] > 0, r
w = [r for r in onoff if r["pacer"] == "timing_wheel"][0]
t = [r for r in onoff if r["pacer"] == "token_bucket"][0]
assert w["max_peak"] <= 1.11, w
assert t["max_peak"] > 1.5, t
print("backlogged: rate within 1 %% for %d runs; on/off peak: wheel %.2fx, token bucket %.2fx"
      % (len(back), w["max_peak"], t["max_peak"]))
PY
for bad in "--flows 0" "--frames 10" "--share 2" "--poll-ns x" "--msg 2G" "extra"; do
	# shellcheck disable=SC2086
	bench $bad >/dev/null 2>&1
	[ $? = 2 ] || fail "'$bad' is not a usage error"
done
bench --help | grep -q -- "--slot-shift" || fail "--help"
echo "sdr-pacer-bench: ok"
