#!/bin/bash
# Compare the data path of an earlier revision with the working tree, side by
# side in one run (a 2-core machine cannot give absolute figures that mean
# anything from one run to the next; ratios measured interleaved can):
#
#   host/perf/compare.sh REV [ROUNDS]
#
# builds REV in a git worktree beside this tree (under $SDR_COMPARE_DIR,
# default /tmp/sdr-compare/REV; reused when already built), then runs the
# benchmark set below ROUNDS times (default 3), alternating REV and the
# working tree's build (./build, or $SDR_BUILD) run by run: A B A B ...
# Each run is sdr-perf bw on the ring rig (one sdr-dpu, net_ring pair, one
# worker for both DPUs, 4 KiB MTU, ICRC on). It prints, per benchmark, the
# median of the per-worker-CPU-second figures of each side and their ratio
# (working tree / REV): goodput (data bytes, Gbit/s), packet rate (all
# packets, Mpps) and messages; the raw JSON lines go to
# $SDR_COMPARE_DIR/compare-<time>.jsonl.
#
# The set (one per line, sdr-perf bw arguments), overridable with
# SDR_COMPARE_SET (a file with the same format):
#   --size 64 --window 256             64 B messages
#   --size 4K --window 256             4 KiB messages
#   --size 64K --window 64             4 KiB packets
#   --size 1M --rel sr                 SR
#   --size 1M --rel ec --ec rs:32:8    EC RS(32,8)
#   --size 1M --rel ec --ec xor:32:8   EC XOR(32,8)
# Worker CPU time is read from /proc in 10 ms ticks: keep --duration (default
# 3 s, SDR_COMPARE_DURATION) long enough that a figure is made of hundreds.
set -u
rev=${1:?usage: host/perf/compare.sh REV [ROUNDS]}
rounds=${2:-3}
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
new=${SDR_BUILD:-$top/build}
dir=${SDR_COMPARE_DIR:-/tmp/sdr-compare}
dur=${SDR_COMPARE_DURATION:-3}
old_src=$dir/$rev
old=$old_src/build

find_perf() { # build dir -> sdr-perf (host/perf since the layout change, hw/perf before)
	for p in "$1/host/perf/sdr-perf" "$1/hw/perf/sdr-perf"; do
		[ -x "$p" ] && { echo "$p"; return 0; }
	done
	return 1
}

[ -x "$new/firmware/sdr-dpu" ] && find_perf "$new" >/dev/null ||
	{ echo "compare: build the working tree first (hw/x86/setup.sh $new)" >&2; exit 1; }
if ! find_perf "$old" >/dev/null || [ ! -x "$old/firmware/sdr-dpu" ]; then
	mkdir -p "$dir"
	if [ ! -d "$old_src" ]; then
		git -C "$top" worktree add --detach "$old_src" "$rev" >&2 ||
			{ echo "compare: cannot check out $rev" >&2; exit 1; }
	fi
	echo "compare: building $rev in $old" >&2
	(meson setup "$old" "$old_src" >/dev/null && ninja -C "$old" >/dev/null) ||
		{ echo "compare: $rev does not build" >&2; exit 1; }
fi

set_file=${SDR_COMPARE_SET:-}
if [ -z "$set_file" ]; then
	set_file=$(mktemp)
	trap 'rm -f "$set_file"' EXIT
	cat >"$set_file" <<'EOF'
--size 64 --window 256
--size 4K --window 256
--size 64K --window 64
--size 1M --rel sr
--size 1M --rel ec --ec rs:32:8
--size 1M --rel ec --ec xor:32:8
EOF
fi
out=$dir/compare-$(date +%Y%m%d-%H%M%S).jsonl
: >"$out"
for r in $(seq "$rounds"); do
	while read -r args; do
		[ -n "$args" ] || continue
		for side in old new; do
			b=$old
			[ $side = new ] && b=$new
			# shellcheck disable=SC2086
			j=$(SDR_DPU=$b/firmware/sdr-dpu LD_LIBRARY_PATH=$b/host/libsdr:$b/host \
				"$(find_perf "$b")" bw $args --duration "$dur" --json-only 2>/dev/null | tail -1)
			printf '{"round":%d,"side":"%s","args":"%s","run":%s}\n' "$r" "$side" "$args" \
				"${j:-null}" >>"$out"
			echo "compare: round $r $side: $args" >&2
		done
	done <"$set_file"
done
/usr/bin/python3 - "$out" "$rev" <<'PY'
import json, statistics, sys
rows = {}
for line in open(sys.argv[1]):
    x = json.loads(line)
    r = x["run"]
    if not r or r.get("status") != "ok" or not r.get("worker_cpu_s"):
        rows.setdefault(x["args"], {}).setdefault("failed_" + x["side"], 0)
        rows[x["args"]]["failed_" + x["side"]] += 1
        continue
    rows.setdefault(x["args"], {}).setdefault(x["side"], []).append(r)
print("per worker CPU-second, medians; ratio = working tree / %s (ring rig, net_ring, "
      "4 KiB MTU, ICRC on, 1 worker)" % sys.argv[2])
print("%-34s %21s %21s %21s" % ("benchmark", "goodput Gbit/s", "Mpps", "msgs/s"))
for args, v in rows.items():
    if "old" not in v or "new" not in v:
        print("%-34s no successful run on both sides (%s)" % (args, v))
        continue
    def med(side, key):
        return statistics.median(r["msgs_ok"] / r["worker_cpu_s"] if key == "msgs_per_cpu"
                                 else r[key] for r in v[side])
    cols = []
    for key in ("goodput_gbps_per_cpu", "mpps_per_cpu", "msgs_per_cpu"):
        o, n = med("old", key), med("new", key)
        cols.append("%7.2f→%-7.2f %5.2fx" % (o, n, n / o if o else float("nan"))
                    if key != "msgs_per_cpu" else "%7.0f→%-7.0f %5.2fx" % (o, n, n / o if o else 0))
    fails = {k: c for k, c in v.items() if k.startswith("failed_")}
    print("%-34s %s%s" % (args, " ".join(cols), ("  " + str(fails)) if fails else ""))
print("raw runs:", sys.argv[1])
PY
