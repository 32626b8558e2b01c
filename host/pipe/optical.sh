#!/usr/bin/env bash
# The optical layer's reproduction of the CBA paper (docs/pipeline.md §6
# "Optical layer"): the paper's grid and the sensitivity to every choice the
# paper leaves open, as JSON lines, then the tables and charts.
#   host/pipe/optical.sh [OUTDIR]          (default /tmp/sdr-optical)
# Environment: SDR_BUILD (build), SEEDS (3), ITERS (12), WARMUP (2),
# IMG (docs/img: where the charts go; empty = no charts).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
: "${SDR_BUILD:=$here/../../build}"
out=${1:-/tmp/sdr-optical}
SEEDS=${SEEDS:-3} ITERS=${ITERS:-12} WARMUP=${WARMUP:-2}
IMG=${IMG-$here/../../docs/img}
opt=("$SDR_BUILD/host/pipe/sdr-optical" --json --seeds "$SEEDS" --iters "$ITERS" --warmup "$WARMUP")
mkdir -p "$out"

# the grid: 8B and 70B, GPipe and 1F1B, 16/32/64/128 micro-batches, KSP-FF,
# SD-FF and CD with and without CBA
nice -n 10 "${opt[@]}" --grid > "$out/grid.jsonl"

# sensitivity: one choice at a time, 8B with 64 micro-batches, both schedules
while IFS='|' read -r name args; do
	[ -n "$name" ] || continue
	# shellcheck disable=SC2086
	nice -n 10 "${opt[@]}" --model 8b --sched all --micro 64 $args |
		sed "s/^{/{\"variant\":\"$name\",/"
done > "$out/sensitivity.jsonl" <<'VARIANTS'
default (as in the grid)|
compute: tf 20 ms|--tf 20ms
compute: tf 40 ms|--tf 40ms
compute: tf 80 ms|--tf 80ms
sites: 1,6,11,3,10,14 (scattered)|--sites 1,6,11,3,10,14
sites: 8,9,10,12,13,14 (east)|--sites 8,9,10,12,13,14
placement: 0,1,2,3,4,5,0,1 (every boundary crosses)|--place 0,1,2,3,4,5,0,1
blocked: retry after 50 ms|--retry 50ms
blocked: retry after 200 ms|--retry 200ms
blocked: fall back to 1 slot|--blocked min
slots: fixed 2 (CBA starts at 2)|--fs-init 2
slots: fixed 4|--fs-init 4
slots: fixed 6|--fs-init 6
background: every 4th transfer|--bg-every 4
background: every 16th transfer|--bg-every 16
background: before the PP request|--bg-order before
background: routed like the PP requests|--bg-route same
paths: K = 2|--k 2
paths: K = 8|--k 8
labels: intra-DC latency 5 ms|--intra-lat 5ms
VARIANTS

/usr/bin/python3 "$here/optical_report.py" "$out" ${IMG:+--img "$IMG"}
