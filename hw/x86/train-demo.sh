#!/usr/bin/env bash
# Real training across two "datacenters" over sdr-dpu, against PyTorch's
# gloo over kernel TCP on the same emulated link. One command, as root (it
# installs what is missing, python3-torch and ethtool included, and builds):
#
#   hw/x86/train-demo.sh [--iters N] [--bench-iters N] [--losses LIST]
#                        [--schemes LIST] [--sched NAME] [--out DIR] [--quick]
#
# A character-level GPT (host/python/train) in 4 pipeline stages, 2 per DC,
# one rank per stage (docs/training.md):
#  0. Overhead: each DC a network namespace with its sdr-dpu; a 4 MiB
#     tensor moved by dist.send/dist.recv vs `sdr-perf lat` on the same DPUs.
#  1. Correctness: the same DCs, the DPUs'
#     --link delay=12.5ms,rate=1gbit,buffer=4MB,loss=1e-2 (RTT 25 ms, 1 %
#     loss each way). The main run trains --iters iterations (default 30)
#     over AUTO and checks every parameter and every loss bit for bit
#     against one process; SR and EC runs (fewer iterations), then every
#     schedule once. Each prints its iteration time next to sdr-pipe's
#     prediction from the measured per-stage compute times.
#  2. Yardstick: DC A - bump in the wire (sdr-dpu --bridge, the same link
#     each way) - DC B, so that kernel TCP sees the link too. For each loss
#     rate (--losses, default 0,1e-4,1e-3,1e-2): gloo with Reno and with
#     BBR (the DPUs stopped), then sdr with SR, EC RS(32,8) and AUTO, the
#     same model and schedule, --bench-iters iterations each (default 8).
#  3. The report (host/python/bench/train_report.py): tables, the loss
#     curve, and the charts DIR/train-iteration-time.png and
#     DIR/train-loss.png.
# --quick: 10 iterations, 3 per benchmark cell, losses 0 and 1e-2.
# Without root: only step 1's main run, on a net_ring pair, and says so.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
iters=30 bench_iters=8 losses=0,1e-4,1e-3,1e-2 schemes=sr,ec:rs:32:8,auto sched=1f1b out=""
while [ $# -gt 0 ]; do
	case $1 in
	--iters) iters=$2; shift 2 ;;
	--bench-iters) bench_iters=$2; shift 2 ;;
	--losses) losses=$2; shift 2 ;;
	--schemes) schemes=$2; shift 2 ;;
	--sched) sched=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--quick) iters=10 bench_iters=3 losses=0,1e-2; shift ;;
	-h|--help) sed -n '2,/^set -u$/{/^set -u$/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
	*) echo "train-demo: unknown argument $1 (--help)" >&2; exit 2 ;;
	esac
done
# hw/x86/setup.sh installs what is missing (python3-torch and ethtool among it)
"$top/hw/x86/setup.sh" "$top/build" || exit 1
/usr/bin/python3 -c 'import torch' 2>/dev/null ||
	{ echo "train-demo: /usr/bin/python3 cannot import torch (apt-get install python3-torch)"; exit 1; }
export SDR_BUILD=$top/build
. "$top/tests/integration/lib.sh"
. "$top/hw/x86/bridge-netns.sh"
export PYTHONPATH="$top/host/python" SDR_LIBSDR="$SDR_BUILD/host/libsdr/libsdr.so.2"
# the build's tools, wherever its layout puts them
sdr_bin() { find "$SDR_BUILD" -name "$1" -type f -perm -u+x 2>/dev/null | head -1; }
SDR_PIPE=$(sdr_bin sdr-pipe) SDR_PERF=$(sdr_bin sdr-perf)
export SDR_PIPE SDR_PERF
out=${out:-$top/out/train-demo}
mkdir -p "$out"
TRAIN="$top/host/python/train/train_pipe.py"
# the model: 4 stages (one block each), 8 micro-batches of 16 x 64 characters,
# width 32: 128 KiB activations and gradients per micro-batch
MODEL="--dim 32 --heads 2 --layers 4 --seq 64 --mb 16 --micro 8 --rtt 25ms --rate 1g"
LINK="delay=12.5ms,rate=1gbit,buffer=4MB"
say() { printf '\n== %s\n' "$*"; }

# run TAG BACKEND REL SCHED ITERS META [train_pipe args]: one training run
run() {
	local tag=$1 backend=$2 rel=$3 s=$4 n=$5 meta=$6
	shift 6
	local envs=() net=()
	if [ -n "$RUN_NETNS" ]; then
		net=(--netns "$NS_A,$NS_B" --master "$KIP_A")
		envs=(--env "0:GLOO_SOCKET_IFNAME=$VETH_A" --env "1:GLOO_SOCKET_IFNAME=$VETH_A"
			--env "2:GLOO_SOCKET_IFNAME=$VETH_B" --env "3:GLOO_SOCKET_IFNAME=$VETH_B")
	fi
	rm -rf "${out:?}/$tag"
	printf '%-22s %-5s %-12s %-8s %3s iterations ... ' "$tag" "$backend" "$rel" "$s" "$n"
	# shellcheck disable=SC2086
	env -u SDR_DPU SDR_REL="$rel" /usr/bin/python3 -m sdr.launch --ranks 4 --place 0,0,1,1 \
		--dpu "$SOCK_A,$SOCK_B" "${net[@]}" "${envs[@]}" --timeout 1800 -- "$TRAIN" $MODEL \
		--backend "$backend" --sched "$s" --iters "$n" --timeout 600 --out "$out/$tag" \
		--meta "$meta" "$@" >"$out/$tag.log" 2>&1
	local rc=$?
	if [ $rc = 0 ]; then
		/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))
print("%.1f ms/iteration (predicted %.1f)%s" % (r["meas_iter_ms"], r["pred_iter_ms"],
      {True: ", bit-identical", False: ", NOT bit-identical", None: ""}[r.get("bit_identical")]))' \
			"$out/$tag/result.json"
	else
		echo "FAILED (status $rc, $out/$tag.log)"
		tail -15 "$out/$tag.log"
	fi
	return $rc
}

# dpus LINK: (re)start both DPUs on the DC ends, with LINK on their RX (or none)
dpus() {
	local side ns ifc ip mac peer seed
	dpus_stop
	for side in a b; do
		if [ $side = a ]; then ns=$NS_A ifc=$VETH_A ip=$DIP_A mac=$DMAC_A peer=$DMAC_B seed=11
		else ns=$NS_B ifc=$VETH_B ip=$DIP_B mac=$DMAC_B peer=$DMAC_A seed=12; fi
		rm -f "$SDR_TMP/$side.sock"
		# shellcheck disable=SC2046
		ip netns exec "$ns" "$SDR_DPU" $(rig_eal "sdr-td-$side-$$" 1024) $(rig_vdev "$ifc") -- \
			--name "$SDR_TMP/$side.sock" --ip "$ip" --mac "$mac" --peer-mac "$peer" \
			--port-rate 900m --chunk-pkts 1 ${1:+--link "$1,seed=$seed"} \
			>>"$out/dpu-$side.log" 2>&1 &
		eval "DPU_$side=$!"
		SDR_PIDS+=($!)
		rig_wait_sock "$SDR_TMP/$side.sock" $! || { tail "$out/dpu-$side.log"; exit 1; }
	done
	SOCK_A=$SDR_TMP/a.sock SOCK_B=$SDR_TMP/b.sock
}
dpus_stop() {
	[ -n "${DPU_a:-}" ] && rig_stop "$DPU_a"
	[ -n "${DPU_b:-}" ] && rig_stop "$DPU_b"
	DPU_a="" DPU_b=""
}

fails=0
if [ "$(id -u)" != 0 ]; then
	say "not root: the main run only, both DPUs in one process over a net_ring pair (no emulated link; the gloo comparison needs root)"
	sdr_start_ring_pair train-demo
	RUN_NETNS=""
	run main-auto sdr auto "$sched" "$iters" '{"phase":"correctness","loss":0}' --verify || fails=1
	/usr/bin/python3 "$top/host/python/bench/train_report.py" "$out" --main main-auto
	exit $fails
fi

say "0. overhead: dist.send/dist.recv of a 4 MiB tensor vs sdr-perf lat, same two DPUs (netns, no emulated link)"
rig_netns_up || { echo "train-demo: cannot create network namespaces"; exit 1; }
SDR_CLEANUPS+=("rig_netns_down")
RUN_NETNS=1
dpus ""
env -u SDR_DPU /usr/bin/python3 "$top/host/python/bench/p2p_overhead.py" --dpu-a "$SOCK_A" \
	--dpu-b "$SOCK_B" --size 4M --iters 100 --rounds 3 --staged --netns "$NS_A,$NS_B" \
	--master "$KIP_A" >"$out/overhead.log" 2>&1 || { fails=1; tail "$out/overhead.log"; }
grep -v '^{' "$out/overhead.log"
grep '^{' "$out/overhead.log" >"$out/overhead.json"

say "1. correctness: two DCs (netns), DPU-side --link $LINK,loss=1e-2 on both, RTT 25 ms"
dpus "$LINK,loss=1e-2"
run main-auto sdr auto "$sched" "$iters" '{"phase":"correctness","loss":0.01}' --verify || fails=1
few=$(( iters < 5 ? iters : 5 ))
run lossy-sr sdr sr "$sched" "$few" '{"phase":"correctness","loss":0.01}' --verify || fails=1
run lossy-ec sdr ec:rs:32:8 "$sched" "$few" '{"phase":"correctness","loss":0.01}' --verify || fails=1
for s in gpipe 1f1b geopipe greedy; do
	[ "$s" = "$sched" ] && continue
	run "lossy-auto-$s" sdr auto "$s" "$few" '{"phase":"correctness","loss":0.01}' --verify || fails=1
done
dpus "$LINK"
run lossless-auto sdr auto "$sched" "$few" '{"phase":"correctness","loss":0}' --verify || fails=1
dpus_stop
rig_netns_down

say "2. yardstick: DC A - sdr-dpu --bridge ($LINK,loss=P each way) - DC B; gloo (kernel TCP) and sdr, $sched"
sdr_bridge_netns_up || { echo "train-demo: cannot build the bridge rig"; exit 1; }
SDR_CLEANUPS+=("sdr_bridge_netns_down")
for p in ${losses//,/ }; do
	# (empty first: the wait below must not read a previous run's log)
	: >"$out/bridge-$p.log"
	# shellcheck disable=SC2046
	ip netns exec "$NS_BR" "$SDR_DPU" $(rig_eal "sdr-tdbr-$$" 1024) -l 0 $(sdr_bridge_vdevs) -- \
		--bridge --link "$LINK,loss=$p,seed=21" --stats-json "$out/bridge-$p.json" \
		>"$out/bridge-$p.log" 2>&1 &
	bpid=$!
	SDR_PIDS+=("$bpid")
	for _ in $(seq 100); do grep -qs forwarding "$out/bridge-$p.log" && break; sleep 0.1; done
	grep -qs forwarding "$out/bridge-$p.log" || {
		cat "$out/bridge-$p.log"
		echo "train-demo: the bump in the wire did not start forwarding in 10 s" >&2
		exit 1
	}
	SOCK_A=$SDR_TMP/none-a.sock SOCK_B=$SDR_TMP/none-b.sock
	for cc in reno bbr; do
		ip netns exec "$NS_A" sysctl -qw net.ipv4.tcp_congestion_control=$cc
		ip netns exec "$NS_B" sysctl -qw net.ipv4.tcp_congestion_control=$cc
		run "grid-$p-gloo-$cc" gloo tcp "$sched" "$bench_iters" \
			"{\"phase\":\"grid\",\"loss\":$p,\"label\":\"gloo $cc\",\"cc\":\"$cc\"}" --quiet || fails=1
	done
	ip netns exec "$NS_A" sysctl -qw net.ipv4.tcp_congestion_control=reno
	ip netns exec "$NS_B" sysctl -qw net.ipv4.tcp_congestion_control=reno
	dpus ""
	for rel in ${schemes//,/ }; do
		run "grid-$p-sdr-${rel//:/-}" sdr "$rel" "$sched" "$bench_iters" \
			"{\"phase\":\"grid\",\"loss\":$p,\"label\":\"sdr $rel\"}" --quiet || fails=1
	done
	dpus_stop
	rig_stop "$bpid"
done
sdr_bridge_netns_down

say "3. report"
/usr/bin/python3 "$top/host/python/bench/train_report.py" "$out" --main main-auto
if [ $fails = 0 ]; then
	say "train-demo OK: results in $out"
else
	say "train-demo: some runs FAILED (logs in $out)"
fi
exit $fails
