#!/bin/bash
# The pacer and QP/worker scaling measurements of docs/benchmarks.md §8, in
# one go on the ring rig (about 15 minutes):
#
#   host/perf/limits.sh BUILD_DIR OUT_DIR [ROUNDS]
#
#  rates    1 s windows of a QP paced with --rate, and of a port paced with
#           --port-rate, at 100 Mbit/s .. 20 Gbit/s (64 KiB messages, 4 s);
#  onoff    on/off traffic (--gap-us) of a paced QP: peak over 10 frame times,
#           in all windows and after idle, with the default --pace-burst and
#           with a catch-up of one frame;
#  cost     the pacer's cycles per loop with 1 paced QP and with 256 sharing
#           the same aggregate rate (2 Gbit/s, under a port rate of 2.5 that
#           bounds what 256 late QPs catch up at once), ROUNDS rounds
#           interleaved;
#  scale    goodput per worker CPU-second at 1, 16, 256 and 1024 QP pairs and
#           1 and 2 workers (64 KiB messages, window 64), ROUNDS rounds, the
#           eight configurations interleaved in each; hand-offs, QP set-up
#           time and daemon memory per QP.
# Every run is one JSON line in OUT_DIR/limits.jsonl (with a "bench" key);
# the tables are printed at the end (host/perf/limits.py).
# SDR_LIMITS=rates,onoff,cost,scale picks a subset. ROUNDS defaults to 3.
# SDR_LIMITS_OLD=BUILD_DIR (e.g. /tmp/sdr-compare/254f20f/build, which
# host/perf/compare.sh builds): the runs an earlier sdr-perf can make (no
# --qps, --gap-us) are made with it too, right after the same run with
# BUILD_DIR, and the tables show both and their ratio.
set -u
build=${1:?usage: host/perf/limits.sh BUILD_DIR OUT_DIR [ROUNDS]}
out=${2:?usage: host/perf/limits.sh BUILD_DIR OUT_DIR [ROUNDS]}
rounds=${3:-3}
parts=${SDR_LIMITS:-rates,onoff,cost,scale}
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
perf=$build/host/perf/sdr-perf
export SDR_DPU=$build/firmware/sdr-dpu
[ -x "$perf" ] && [ -x "$SDR_DPU" ] || { echo "limits: build $build first" >&2; exit 1; }
mkdir -p "$out"
jl=$out/limits.jsonl
: >"$jl"

old=${SDR_LIMITS_OLD:-}
[ -z "$old" ] || [ -x "$old/firmware/sdr-dpu" ] || { echo "limits: no build in $old" >&2; exit 1; }
oldperf=
for p in "$old/host/perf/sdr-perf" "$old/hw/perf/sdr-perf"; do [ -x "$p" ] && oldperf=$p; done

one() { # SIDE PERF DPU BENCH sdr-perf arguments...
	local side=$1 pf=$2 dpu=$3 bench=$4 j
	shift 4
	echo "limits: $side $bench: $*" >&2
	j=$(SDR_DPU=$dpu "$pf" bw --json-only "$@" 2>/dev/null | tail -1)
	[ -n "$j" ] || j='{"status":"failed","error":"no output"}'
	printf '{"bench":"%s","side":"%s","args":"%s","run":%s}\n' "$bench" "$side" "$*" "$j" >>"$jl"
}
run() { # BENCH sdr-perf arguments...: this build
	one new "$perf" "$SDR_DPU" "$@"
}
run2() { # BENCH sdr-perf arguments...: this build, then the earlier one
	one new "$perf" "$SDR_DPU" "$@"
	[ -n "$oldperf" ] && one old "$oldperf" "$old/firmware/sdr-dpu" "$@"
}

has() { case ",$parts," in *",$1,"*) return 0 ;; esac; return 1; }

if has rates; then
	for r in 100m 1g 5g 10g 20g; do
		icrc=
		case $r in 10g | 20g) icrc=--no-icrc ;; esac # (the CPU, not the pacer, limits above)
		run2 rate_qp --size 64K --duration 4 --warmup 100 --rate $r $icrc
		run2 rate_port --size 64K --duration 4 --warmup 100 --port-rate $r $icrc
	done
fi
if has onoff; then
	for r in 100m 1g; do
		run onoff --size 64K --rate $r --gap-us 500 --duration 3 --warmup 20 --qps 2
		run onoff_strict --size 64K --rate $r --gap-us 500 --duration 3 --warmup 20 --qps 2 \
			--dpu-arg=--pace-burst=4174
	done
fi
if has cost; then
	for i in $(seq "$rounds"); do
		run cost_1 --size 64K --duration 3 --warmup 100 --window 512 --qps 1 --rate 2g \
			--port-rate 2500m
		run cost_256 --size 64K --duration 3 --warmup 512 --window 512 --qps 256 --rate 7812500 \
			--port-rate 2500m
	done
fi
if has scale; then
	for i in $(seq "$rounds"); do
		for w in 1 2; do
			run2 scale --size 64K --duration 3 --warmup 2048 --window 64 --workers $w
			for q in 16 256 1024; do
				run scale --size 64K --duration 3 --warmup 2048 --window 64 --qps $q \
					--workers $w --timeout 60
			done
		done
	done
fi
/usr/bin/python3 "$here/limits.py" "$jl"
