#!/bin/bash
# The measurement set of docs/benchmarks.md, in one go, side by side:
#   host/perf/bench.sh [BUILD_DIR] [OUT_DIR]      (root for the veth part)
# Writes OUT_DIR/bench.jsonl (one JSON line per run; testpmd runs get
# {"mode":"testpmd",...} lines) and OUT_DIR/*.png, and prints a summary.
set -u
build=${1:-build}
out=${2:-/tmp/sdr-bench}
perf=$build/host/perf/sdr-perf
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
dur=${SDR_BENCH_DURATION:-2}
mkdir -p "$out"
j=$out/bench.jsonl
: >"$j"
run() { echo "+ sdr-perf $*" >&2; "$perf" "$@" --json-only | tee -a "$j"; }

# (1) data path over the net_ring pair: 4 KiB payload packets (64 KiB
# messages = 16 full packets), 64 B messages (1 packet of 64 B + 7
# immediate-only packets), 4 KiB messages (1 + 7); ICRC on / off
for icrc in "" --no-icrc; do
	run bw --size 64K --window 64 --duration "$dur" --warmup 200 $icrc
	run bw --size 64 --window 256 --duration "$dur" --warmup 2000 $icrc
	run bw --size 4K --window 256 --duration "$dur" --warmup 2000 $icrc
done
# testpmd io / mac forwarding between two net_ring ports, same EAL recipe
for fwd in io mac; do
	echo "+ dpdk-testpmd --forward-mode=$fwd (net_ring0 <-> net_ring1)" >&2
	pps=$(timeout -s INT 8 dpdk-testpmd --no-huge --no-shconf --no-pci -m 1024 \
		--file-prefix=sdr-bench-tp$$ --vdev=net_ring0 --vdev=net_ring1 -l 0-1 \
		--log-level=lib.eal:warning -- --forward-mode=$fwd --tx-first --stats-period=2 \
		--txpkts=64 --burst=32 --total-num-mbufs=8192 --rxd=512 --txd=512 2>&1 |
		awk '/Rx-pps:/ {v[n++ % 2] = $2} END {print v[0] + v[1]}')
	echo "{\"mode\":\"testpmd\",\"fwd\":\"$fwd\",\"pmd\":\"net_ring\",\"workers\":1,\"mpps\":$(awk -v p="$pps" 'BEGIN{print p/1e6}')}" | tee -a "$j"
done
# (2) 1 -> 2 workers (one QP pair; the machine has 2 CPUs)
for w in 1 2; do
	run bw --size 64K --window 64 --duration "$dur" --warmup 200 --workers $w
	run bw --size 64 --window 256 --duration "$dur" --warmup 2000 --workers $w
done
# (3) pacing conformance over 1 s windows (ring, then veth if root)
for r in 500m 2g 10g; do
	run bw --size 64K --window 64 --duration 4 --warmup 200 --port-rate $r
done
if [ "$(id -u)" = 0 ]; then
	run bw --rig veth --size 64K --window 64 --duration 4 --warmup 200 --port-rate 1g
fi
# (4) codec
for c in rs xor; do
	"$perf" codec --code $c --k 32 --m 8 --chunk 4K --duration 1 --json-only | tee -a "$j"
done
# goodput vs message size (bw runs, no loss)
"$perf" sweep --sweep-mode bw --sizes 1K,4K,16K,64K,256K,1M --iters 2000 --window 64 \
	--json-only 2>/dev/null | tee -a "$j"
# completion time vs loss per scheme (lat runs, window 4)
"$perf" sweep --sizes 4K,64K,1M --loss 0,1e-4,1e-3,1e-2 --schemes none,sr --iters 200 \
	--window 4 --recv-timeout-ms 50 --json-only 2>/dev/null | tee -a "$j"
/usr/bin/python3 "$here/plot.py" "$j" --out-dir "$out"
