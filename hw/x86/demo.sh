#!/usr/bin/env bash
# sdr-dpu demo: two DPUs, "dc-a" and "dc-b", each in its own network
# namespace, joined by a veth pair (MTU 9000) through net_af_packet. A host on
# dc-a sends messages of 1 B .. 64 MiB with verifiable content to a host on
# dc-b, which checks every byte and shows the SDR bitmap of each message.
# Without root: both DPUs in one process over a net_ring pair. Then the
# point of it (hw/x86/longhaul.sh): the same kind of transfer over an
# emulated long-haul link (25 ms RTT, 1 Gbit/s, 1 % loss) with reliability
# none, SR, EC RS(32,8) and AUTO, and kernel TCP as the yardstick: a table
# and build/demo/longhaul.png.
#   hw/x86/demo.sh [--sizes LIST] [--count N] [--no-long-haul]
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
sizes=1,1K,4K,64K,1M,16M,64M
count=1
longhaul=1
while [ $# -gt 0 ]; do
	case $1 in
	--sizes) sizes=$2; shift 2 ;;
	--count) count=$2; shift 2 ;;
	--no-long-haul) longhaul=0; shift ;;
	-h|--help) sed -n '2,13p' "$0"; exit 0 ;;
	*) echo "demo: unknown argument $1" >&2; exit 2 ;;
	esac
done
"$top/hw/x86/setup.sh" "$top/build" || exit 1
export SDR_BUILD=$top/build
: "${SDR_SEND:=$SDR_BUILD/host/tools/sdr-send}" "${SDR_RECV:=$SDR_BUILD/host/tools/sdr-recv}"
. "$top/hw/x86/rig.sh"
rig_session

if rig_netns_up; then
	RIG_NETNS=1
	echo "== dc-a ($NS_A, DPU $DIP_A) <== veth $VETH_A/$VETH_B, MTU 9000, net_af_packet ==> dc-b ($NS_B, DPU $DIP_B)"
	rig_ns_pair "$RIG_TMP/a.sock" "$RIG_TMP/b.sock" "$RIG_TMP/dpu-a.log" "$RIG_TMP/dpu-b.log" \
		--port-rate 1g || exit 1
	RIG_PIDS+=("$RIG_PID_A" "$RIG_PID_B")
	RUN_A="ip netns exec $NS_A" RUN_B="ip netns exec $NS_B" BIND=$KIP_B
else
	echo "== not root (or no ip netns): running both DPUs in one process over a net_ring pair instead"
	rig_ring_pair demo "$RIG_TMP/a.sock" "$RIG_TMP/b.sock" "$RIG_TMP/dpu.log" || exit 1
	RIG_PIDS+=("$RIG_PID")
	RUN_A="" RUN_B="" BIND=127.0.0.1
fi
SOCK_A=$RIG_TMP/a.sock SOCK_B=$RIG_TMP/b.sock
port=$(rig_free_port)
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
for p in "${RIG_PIDS[@]}"; do rig_stop "$p"; done
RIG_PIDS=()
for f in "$RIG_TMP"/dpu*.log; do grep -v "^EAL\|^TELEMETRY" "$f" | sed -n '/########/,$p'; done
if [ $srv != 0 ] || [ $rrv != 0 ]; then
	echo "== demo FAILED (sender $srv, receiver $rrv)"
	exit 1
fi
echo "== demo OK: every message arrived bit-exact"
[ $longhaul = 1 ] || exit 0
echo
echo "== why: the same kind of transfer over a long-haul link (hw/x86/longhaul.sh)"
rig_session_end
trap - EXIT
exec "$top/hw/x86/longhaul.sh"
