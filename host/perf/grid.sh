#!/bin/bash
# The completion-time grid of docs/benchmarks.md §6, in one command (root):
#   host/perf/grid.sh [BUILD_DIR] [OUT_DIR]
# Two daemons in namespaces over veth + net_af_packet (sdr-perf --rig veth),
# the link emulator on both with 25 ms RTT and a 1 Gbit/s bottleneck, senders
# paced at 900 Mbit/s, 4 KiB chunks (chunk = 1 packet; the SDR-RDMA paper's
# default chunk is 64 KiB);
# every scheme x loss x size cell is one sdr-perf lat run of GRID_ITERS
# messages, side by side in one sweep (one daemon pair per loss rate).
# Then grid.py puts the model's prediction next to every cell:
#   OUT_DIR/grid.jsonl  sdr-perf JSON lines      OUT_DIR/grid.md   the table
#   OUT_DIR/grid.png    measured vs model chart  OUT_DIR/cells.jsonl
# Environment: GRID_SIZES (256K,4M,32M), GRID_LOSS (1e-4,1e-3,1e-2),
# GRID_SCHEMES (sr,rs:32:8,auto), GRID_ITERS (20), GRID_RATE (900m),
# GRID_EXTRA (more sdr-perf options). Schemes the firmware refuses are
# reported as skipped and left out of the table.
set -u
build=${1:-build}
out=${2:-/tmp/sdr-grid}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
sizes=${GRID_SIZES:-256K,4M,32M}
loss=${GRID_LOSS:-1e-4,1e-3,1e-2}
schemes=${GRID_SCHEMES:-sr,rs:32:8,auto}
iters=${GRID_ITERS:-20}
rate=${GRID_RATE:-900m}
[ "$(id -u)" = 0 ] || { echo "grid.sh: the veth rig needs root" >&2; exit 2; }
[ -x "$build/host/perf/sdr-perf" ] && [ -x "$build/host/model/sdr-model" ] ||
	{ echo "grid.sh: build $build first (meson setup $build && ninja -C $build)" >&2; exit 2; }
mkdir -p "$out"
# RTO = 1.5 x SRTT (--sr-rttvar-k 0): the RTO the model assumes
# shellcheck disable=SC2086
"$build/host/perf/sdr-perf" sweep --rig veth --sweep-mode lat \
	--link delay=12.5ms,rate=1gbit,buffer=4MB --port-rate "$rate" --chunk-pkts 1 \
	--sizes "$sizes" --loss "$loss" --schemes "$schemes" --iters "$iters" --warmup 2 \
	--dpu-arg=--sr-rttvar-k=0 --json-only ${GRID_EXTRA:-} >"$out/grid.jsonl"
rc=$?
/usr/bin/python3 "$here/grid.py" "$out/grid.jsonl" --model "$build/host/model/sdr-model" \
	--rtt 25ms --rate "$rate" --md "$out/grid.md" --png "$out/grid.png" \
	--json-out "$out/cells.jsonl" || exit 1
exit $rc
