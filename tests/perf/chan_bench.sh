#!/bin/bash
# Channels' cost (docs/architecture.md "Channels", docs/benchmarks.md):
# goodput per worker CPU-second of one SR QP on the ring rig, lossless, with
# one channel and with two (one QP served by two workers), the daemons of
# both runs with --workers 2 (a one-channel QP leaves the second worker
# idle). Reports eff(W) = goodput / worker CPU-seconds for W = 1 and 2,
# their ratio (SDR_CHAN_EFF, default 0.8, is the least it must reach) and
# the CPU. Suite chanbench: a figure of a machine whose daemon has its CPUs,
# so tests/run.sh (and CI) leaves it out by design, as pathbench; run it with
# `meson test -C build --suite chanbench` on a quiet machine.
#   env: SDR_CHAN_EFF SDR_CHAN_SIZE (1M) SDR_CHAN_DUR (s, 4) SDR_CHAN_REPS (3)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/lib.sh" chanbench
frac=${SDR_CHAN_EFF:-0.8}
size=${SDR_CHAN_SIZE:-1M}
dur=${SDR_CHAN_DUR:-4}
reps=${SDR_CHAN_REPS:-3}

for r in $(seq "$reps"); do
	for w in 1 2; do
		"$SDR_PERF" bw --rig ring --rel sr --size "$size" --window 16 --duration "$dur" \
			--warmup 16 --workers 2 --channels "$w" --json-only \
			>"$tmp/w$w-$r.json" 2>"$tmp/w$w-$r.err" ||
			{ cat "$tmp/w$w-$r.json" "$tmp/w$w-$r.err"; fail "sdr-perf --channels $w"; }
	done
done
cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
"$SDR_PYTHON" - "$tmp" "$reps" "$frac" "$cpu" "$(nproc)" <<'PY' || fail "channel efficiency"
import json, statistics, sys
tmp, reps, frac, cpu, ncpu = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4], sys.argv[5]
eff, gp = {}, {}
for w in (1, 2):
    rows = [json.loads(open("%s/w%d-%d.json" % (tmp, w, r)).read().strip().splitlines()[-1])
            for r in range(1, reps + 1)]
    for x in rows:
        assert x["status"] == "ok" and x["msgs_err"] == 0 and x["msgs_partial"] == 0, x
        assert x["channels"] == w and x["workers"] == 2, x
    eff[w] = statistics.median(x["goodput_gbps_per_cpu"] for x in rows)
    gp[w] = statistics.median(x["goodput_gbps"] for x in rows)
    print("W=%d: goodput %.3f Gbit/s, %.3f Gbit/s per worker CPU-second (median of %d: %s)"
          % (w, gp[w], eff[w], reps, ", ".join("%.3f" % x["goodput_gbps_per_cpu"] for x in rows)))
ratio = eff[2] / eff[1]
print("eff(W=2)/eff(W=1) = %.3f (at least %.2f), goodput ratio %.3f; CPU: %s, %s CPUs online"
      % (ratio, frac, gp[2] / gp[1], cpu, ncpu))
print(json.dumps({"mode": "chan_bench", "eff_w1": eff[1], "eff_w2": eff[2], "ratio": ratio,
                  "goodput_w1": gp[1], "goodput_w2": gp[2], "cpu": cpu, "ncpu": int(ncpu)}))
sys.exit(0 if ratio >= frac else 1)
PY
echo "chan_bench: one QP over two workers keeps at least $frac of one worker's goodput per CPU-second"
