#!/usr/bin/env bash
# sdr-dpu over an emulated long-haul link (x86 rig): the same transfer -
# COUNT messages of SIZE - with reliability none, SR, EC RS(32,8) and AUTO,
# and kernel TCP as the yardstick, over 25 ms RTT, 1 Gbit/s, 1 % loss; a
# table (completion time p50/p99, goodput, extra packets: parity or
# retransmissions, whole messages) and a PNG chart. As root: DC A - bump in
# the wire (sdr-dpu --bridge, the link each way) - DC B, so TCP crosses the
# same link. Without root: both DPUs in one process over a net_ring pair,
# the link on each receive side, and no TCP (it says so).
#   hw/x86/longhaul.sh [--count N] [--size BYTES] [--out DIR]
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
count=40 size=1M out=$top/build/demo
while [ $# -gt 0 ]; do
	case $1 in
	--count) count=$2; shift 2 ;;
	--size) size=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	-h|--help) sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "longhaul: unknown argument $1" >&2; exit 2 ;;
	esac
done
: "${SDR_BUILD:=$top/build}"
export SDR_BUILD SDR_NS_TAG=lh$$
: "${SDR_SEND:=$SDR_BUILD/host/tools/sdr-send}" "${SDR_RECV:=$SDR_BUILD/host/tools/sdr-recv}"
. "$top/hw/x86/bridge-netns.sh"
rig_session
mkdir -p "$out"
export MPLCONFIGDIR=$RIG_TMP/mpl # (a user without a writable home)
LINK="delay=12.5ms,rate=1gbit,buffer=4MB,loss=0.01"
bytes=$(/usr/bin/python3 -c "import sys; s=sys.argv[1]; m={'K':1<<10,'M':1<<20}; print(int(s[:-1])*m[s[-1]] if s[-1] in m else int(s))" "$size")
data_pkts=$(( (bytes + 4095) / 4096 * count ))

if [ "$(id -u)" = 0 ] && sdr_bridge_netns_up; then
	ROOT=1
	RIG_CLEAN=sdr_bridge_netns_down
	trap 'rig_session_end; sdr_bridge_netns_down' EXIT
	echo "== long haul: DC A ($NS_A) - bump in the wire ($LINK each way) - DC B ($NS_B)"
	# shellcheck disable=SC2046
	ip netns exec "$NS_BR" "$SDR_DPU" $(rig_eal "sdr-lhbr-$$" 1024) $(sdr_bridge_vdevs) -- \
		--bridge --link "$LINK,seed=7" >"$RIG_TMP/bridge.log" 2>&1 &
	RIG_PIDS+=("$!")
	for _ in $(seq 100); do grep -qs forwarding "$RIG_TMP/bridge.log" && break; sleep 0.1; done
	grep -qs forwarding "$RIG_TMP/bridge.log" || { cat "$RIG_TMP/bridge.log"; exit 1; }
	rig_ns_pair "$RIG_TMP/a.sock" "$RIG_TMP/b.sock" "$RIG_TMP/dpu-a.log" "$RIG_TMP/dpu-b.log" \
		--port-rate 900m --metrics 127.0.0.1:9464 || exit 1
	RIG_PIDS+=("$RIG_PID_A" "$RIG_PID_B")
	RUN_A="ip netns exec $NS_A" RUN_B="ip netns exec $NS_B" BIND=$KIP_B
	METRICS="ip netns exec $NS_A curl -sf http://127.0.0.1:9464/metrics"
else
	ROOT=0
	echo "== long haul, not root: both DPUs in one process over a net_ring pair, $LINK on each"
	echo "   receive side; skipped: the kernel-TCP yardstick (it needs network namespaces and"
	echo "   the bump in the wire: run as root)"
	mp=$(rig_free_port)
	rig_ring_pair longhaul "$RIG_TMP/a.sock" "$RIG_TMP/b.sock" "$RIG_TMP/dpu.log" \
		--port-rate 900m --link "$LINK,seed=7" --metrics "127.0.0.1:$mp" \
		--instance --port-rate 900m --link "$LINK,seed=8" || exit 1
	RIG_PIDS+=("$RIG_PID")
	RUN_A="" RUN_B="" BIND=127.0.0.1
	METRICS="curl -sf http://127.0.0.1:$mp/metrics"
fi
# extra: retransmitted and parity packets the sending DPU has sent so far
extra() {
	$METRICS | awk '/^sdr_qp_(sr_retx_pkts|ec_par_pkts_tx)_total\{dpu="[^"]*a\.sock"/ {s += $2}
		END {printf "%d\n", s}'
}
run() { # run NAME REL... : one transfer, its log in $RIG_TMP/NAME.log
	local name=$1 port e0 e1 tmo=30
	shift
	[ "$1" = none ] && tmo=3 # (none: partial messages never complete)
	port=$(rig_free_port)
	e0=$(extra)
	$RUN_B "$SDR_RECV" --dpu "$RIG_TMP/b.sock" --server --bind "$BIND" --port "$port" \
		--timeout $tmo --quiet >"$RIG_TMP/$name.recv" 2>&1 &
	local rp=$!
	sleep 0.3
	$RUN_A "$SDR_SEND" --dpu "$RIG_TMP/a.sock" --connect "$BIND:$port" --sizes "$size" \
		--count "$count" --chunk-pkts 1 --timeout $tmo --rel "$@" \
		>"$RIG_TMP/$name.log" 2>&1
	wait $rp
	e1=$(extra)
	echo "$((e1 - e0))" >"$RIG_TMP/$name.extra"
	printf '   %-8s %s (%d s)\n' "$name" "$(grep '^receiver:' "$RIG_TMP/$name.log")" \
		$(( $(date +%s) - t0 ))
}
t0=$(date +%s)
run none none
run sr sr
run ec ec --ec rs:32:8
run auto auto
rows=("sdr none:$RIG_TMP/none.log:-" "sdr SR:$RIG_TMP/sr.log:$(cat "$RIG_TMP/sr.extra")"
      "sdr EC RS(32,8):$RIG_TMP/ec.log:$(cat "$RIG_TMP/ec.extra")"
      "sdr AUTO:$RIG_TMP/auto.log:$(cat "$RIG_TMP/auto.extra")")
if [ $ROOT = 1 ]; then
	# the namespace's congestion control, and CUBIC (Linux's default) where it may be set
	ccs=$(ip netns exec "$NS_A" sysctl -n net.ipv4.tcp_congestion_control)
	[ "$ccs" = cubic ] || ccs="$ccs cubic"
	for cc in $ccs; do
		ip netns exec "$NS_A" sysctl -qw net.ipv4.tcp_congestion_control=$cc 2>/dev/null ||
			{ echo "   tcp-$cc: cannot be set here (sysctl refused), skipped"; continue; }
		port=$(rig_free_port)
		ip netns exec "$NS_B" /usr/bin/python3 "$top/hw/x86/longhaul_tcp.py" server "$KIP_B" \
			"$port" &
		tp=$!
		sleep 0.3
		timeout 60 ip netns exec "$NS_A" /usr/bin/python3 "$top/hw/x86/longhaul_tcp.py" client \
			"$KIP_B" "$port" "$bytes" "$count" 8 >"$RIG_TMP/tcp-$cc.log" 2>&1
		kill $tp 2>/dev/null
		wait $tp 2>/dev/null
		printf '   %-8s %s (%d s)\n' "tcp-$cc" "$(grep '^receiver:' "$RIG_TMP/tcp-$cc.log")" \
			$(( $(date +%s) - t0 ))
		rows+=("kernel TCP ($cc):$RIG_TMP/tcp-$cc.log:-")
	done
fi
echo
echo "== $count messages of $size over 25 ms RTT, 1 Gbit/s, 1 % loss (in $(( $(date +%s) - t0 )) s)"
/usr/bin/python3 "$top/hw/x86/longhaul_table.py" "$out/longhaul.png" "$count" "$data_pkts" \
	"${rows[@]}" | tee "$out/longhaul.txt"
