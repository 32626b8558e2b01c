#!/usr/bin/env bash
# sdr-dpu demo: two DPUs, "dc-a" and "dc-b", each in its own network
# namespace, joined by a veth pair (MTU 9000) through net_af_packet. A host on
# dc-a sends messages of 1 B .. 64 MiB with verifiable content to a host on
# dc-b, which checks every byte and shows the SDR bitmap of each message.
# Without root: both DPUs in one process over a net_ring pair.
#   hw/x86/demo.sh [--sizes LIST] [--count N]
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
sizes=1,1K,4K,64K,1M,16M,64M
count=1
while [ $# -gt 0 ]; do
	case $1 in
	--sizes) sizes=$2; shift 2 ;;
	--count) count=$2; shift 2 ;;
	-h|--help) sed -n '2,8p' "$0"; exit 0 ;;
	*) echo "demo: unknown argument $1" >&2; exit 2 ;;
	esac
done
"$top/hw/x86/setup.sh" "$top/build" || exit 1
export SDR_BUILD=$top/build
. "$top/tests/integration/lib.sh"
. "$top/hw/x86/rig.sh"

if sdr_netns_up; then
	SDR_CLEANUPS+=("sdr_netns_down")
	echo "== dc-a ($NS_A, DPU $DIP_A) <== veth $VETH_A/$VETH_B, MTU 9000, net_af_packet ==> dc-b ($NS_B, DPU $DIP_B)"
	for side in a b; do
		if [ $side = a ]; then ns=$NS_A ifc=$VETH_A ip=$DIP_A mac=$DMAC_A peer=$DMAC_B
		else ns=$NS_B ifc=$VETH_B ip=$DIP_B mac=$DMAC_B peer=$DMAC_A; fi
		# shellcheck disable=SC2046
		ip netns exec "$ns" "$SDR_DPU" $(sdr_eal "sdr-demo-$side" 512) $(sdr_ns_vdev "$ifc") -- \
			--name "$SDR_TMP/$side.sock" --ip "$ip" --mac "$mac" --peer-mac "$peer" --port-rate 1g \
			>"$SDR_TMP/dpu-$side.log" 2>&1 &
		SDR_PIDS+=($!)
		sdr_wait_sock "$SDR_TMP/$side.sock" $! || { cat "$SDR_TMP/dpu-$side.log"; exit 1; }
	done
	RUN_A="ip netns exec $NS_A" RUN_B="ip netns exec $NS_B" BIND=$KIP_B
else
	echo "== not root (or no ip netns): running both DPUs in one process over a net_ring pair instead"
	sdr_start_ring_pair demo
	RUN_A="" RUN_B="" BIND=127.0.0.1
fi
SOCK_A=$SDR_TMP/a.sock SOCK_B=$SDR_TMP/b.sock
port=$(sdr_free_port)
$RUN_B "$SDR_RECV" --dpu "$SOCK_B" --server --bind "$BIND" --port "$port" --timeout 60 &
rpid=$!
sleep 0.5
$RUN_A "$SDR_SEND" --dpu "$SOCK_A" --connect "$BIND:$port" --sizes "$sizes" --count "$count" \
	--seed 42 --timeout 60 --quiet
srv=$?
wait $rpid
rrv=$?
echo
echo "== DPU counters at shutdown"
for p in "${SDR_PIDS[@]}"; do sdr_stop "$p"; done
SDR_PIDS=()
for f in "$SDR_TMP"/dpu*.log; do grep -v "^EAL\|^TELEMETRY" "$f" | sed -n '/########/,$p'; done
if [ $srv = 0 ] && [ $rrv = 0 ]; then
	echo "== demo OK: every message arrived bit-exact"
	exit 0
fi
echo "== demo FAILED (sender $srv, receiver $rrv)"
exit 1
