#!/usr/bin/env bash
# shellcheck shell=bash
# The x86 rig: two "datacenters" on one machine. One definition of
#  - the EAL arguments that work without hugepages (rig_eal),
#  - the network namespaces joined by a veth pair with a 9000-byte MTU, their
#    kernel and DPU addresses (rig_netns_up / rig_netns_down, rig_vdev),
#  - the two-daemon recipes: both DPUs in one sdr-dpu over a net_ring pair
#    (rig_ring_pair, no root), or one sdr-dpu per namespace on net_af_packet
#    over its veth end (rig_ns_dpu for one side, rig_ns_pair for both; root),
#  - waiting for a daemon and stopping it (rig_wait_sock, rig_stop).
#
# Sourced by hw/x86/demo.sh, host/pipe/measure.sh and the tests' library
# (tests/integration/lib.sh). Run as a command it serves programs that are
# not shell scripts (sdr-perf --rig veth):
#   rig.sh veth-up TAG [QPAIRS]   create the namespaces and veth of TAG; print
#                                 NAME=VALUE lines: NS_A NS_B VETH_A VETH_B
#                                 KIP_A KIP_B DIP_A DIP_B DMAC_A DMAC_B VDEV_A
#                                 VDEV_B (QPAIRS queue pairs, default 1)
#   rig.sh veth-down TAG          remove them again
#   rig.sh eal PREFIX [MB]        the EAL arguments, one per line
# Binaries: SDR_DPU (default $SDR_BUILD/firmware/sdr-dpu, SDR_BUILD default
# ./build of this tree).

: "${SDR_BUILD:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build}"
: "${SDR_DPU:=$SDR_BUILD/firmware/sdr-dpu}"
# SDR_TEST_DPU_ARGS (words): options every daemon started through SDR_DPU
# gets (hw/x86/dpu-args.sh runs in its place; the suite "variants")
if [ -n "${SDR_TEST_DPU_ARGS:-}" ] && [ -z "${SDR_DPU_REAL:-}" ]; then
	export SDR_DPU_REAL=$SDR_DPU
	SDR_DPU=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/dpu-args.sh
	export SDR_DPU
fi

SDR_NS_TAG=${SDR_NS_TAG:-$$}
# rig_names TAG: the namespace and interface names of TAG (interface names
# stay within the kernel's 15 characters for tags of up to 13)
rig_names() {
	NS_A=sdr-a-$1 NS_B=sdr-b-$1
	VETH_A=sa$1 VETH_B=sb$1
}
rig_names "$SDR_NS_TAG"
# kernel addresses carry the out-of-band QP-info bootstrap (TCP)
KIP_A=10.99.0.1 KIP_B=10.99.0.2
# the DPUs' own addresses and MACs (the kernel ignores frames to them)
DIP_A=10.99.1.1 DIP_B=10.99.1.2
DMAC_A=02:53:44:52:0a:01 DMAC_B=02:53:44:52:0b:01

# rig_eal PREFIX [MB]: EAL arguments that work without hugepages; PREFIX must
# be unique per running daemon
rig_eal() {
	echo "--no-huge --no-shconf --no-pci -m ${2:-512} --file-prefix=$1" \
		"--log-level=lib.eal:warning --log-level=pmd.net.ring:warning"
}

# rig_vdev IFACE [QPAIRS] [N]: the af_packet vdev (net_af_packetN, default 0)
# for a jumbo-frame veth end
rig_vdev() {
	echo "--vdev=net_af_packet${3:-0},iface=$1,framesz=9216,blocksz=36864,framecnt=8192,qpairs=${2:-1}"
}

# rig_netns_up: the two namespaces of SDR_NS_TAG joined by the veth pair,
# kernel addresses KIP_A/KIP_B on it. Needs root; 1 on failure (nothing left).
rig_netns_up() {
	[ "$(id -u)" = 0 ] || return 1
	command -v ip >/dev/null || return 1
	ip netns add "$NS_A" || return 1
	ip netns add "$NS_B" || { ip netns del "$NS_A"; return 1; }
	ip link add "$VETH_A" type veth peer name "$VETH_B" || { rig_netns_down; return 1; }
	ip link set "$VETH_A" netns "$NS_A" && ip link set "$VETH_B" netns "$NS_B" ||
		{ rig_netns_down; return 1; }
	local x
	for x in "$NS_A $VETH_A $KIP_A" "$NS_B $VETH_B $KIP_B"; do
		set -- $x
		ip -n "$1" link set lo up
		ip -n "$1" link set "$2" mtu 9000 up
		ip -n "$1" addr add "$3/24" dev "$2"
	done
	return 0
}

rig_netns_down() {
	ip netns del "$NS_A" 2>/dev/null
	ip netns del "$NS_B" 2>/dev/null
	ip link del "$VETH_A" 2>/dev/null
	return 0
}

# rig_wait_sock SOCK PID: until the daemon's unix socket exists (0) or the
# pid died / 20 s passed (1)
rig_wait_sock() {
	local sock=$1 pid=$2
	for _ in $(seq 200); do
		[ -S "$sock" ] && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# rig_stop PID: stop a daemon cleanly (SIGINT, so that it writes its stats
# JSON); SIGKILL after 30 s (then 1)
rig_stop() {
	local pid=$1
	kill -INT "$pid" 2>/dev/null || return 0
	for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
	kill -KILL "$pid" 2>/dev/null
	return 1
}

# rig_free_port: a free TCP port on 127.0.0.1
rig_free_port() {
	/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# rig_ring_pair TAG SOCK_A SOCK_B LOG [A's options] [--instance B's options]:
# both DPUs in one sdr-dpu over a net_ring pair (sdr-dpu --ring-pair), A at
# 10.0.0.1 on SOCK_A, B at 10.0.0.2 on SOCK_B; the options before --instance
# go to A (and the global ones anywhere), those after it to B. EAL file
# prefix sdr-TAG-PID, RIG_MEM_MB of memory (default 512), RIG_LCORES the
# EAL's --lcores (default: its own; e.g. 0@0,1@1,2@0 for --workers 2 on two
# CPUs). Sets RIG_PID; 1 (daemon killed, its log on stderr) when it did
# not come up.
rig_ring_pair() {
	local tag=$1 sa=$2 sb=$3 log=$4 i
	shift 4
	local a=() b=() inb=0
	for i in "$@"; do
		if [ $inb = 0 ] && [ "$i" = --instance ]; then inb=1; continue; fi
		if [ $inb = 0 ]; then a+=("$i"); else b+=("$i"); fi
	done
	rm -f "$sa" "$sb"
	# shellcheck disable=SC2046
	"$SDR_DPU" $(rig_eal "sdr-$tag-$$" "${RIG_MEM_MB:-512}") ${RIG_LCORES:+--lcores=$RIG_LCORES} \
		-- --ring-pair --name "$sa" --ip 10.0.0.1 "${a[@]}" \
		--instance --name "$sb" --ip 10.0.0.2 "${b[@]}" >"$log" 2>&1 &
	RIG_PID=$!
	rig_wait_sock "$sa" "$RIG_PID" && rig_wait_sock "$sb" "$RIG_PID" && return 0
	kill -KILL "$RIG_PID" 2>/dev/null
	cat "$log" >&2
	return 1
}

# rig_dpu NS IFACE SOCK LOG IP MAC PEER_MAC [options]: one sdr-dpu in network
# namespace NS on net_af_packet over IFACE (RIG_MEM_MB of EAL memory, default
# 512). Sets RIG_PID and RIG_PREFIX (its EAL file prefix: dpdk-telemetry.py
# -f RIG_PREFIX); 1 (daemon killed, its log on stderr) when it did not come up.
rig_dpu() {
	local ns=$1 ifc=$2 sock=$3 log=$4 ip=$5 mac=$6 pmac=$7
	shift 7
	rm -f "$sock"
	RIG_PREFIX=sdr-$ns-$ifc-$RANDOM
	# shellcheck disable=SC2046
	ip netns exec "$ns" "$SDR_DPU" $(rig_eal "$RIG_PREFIX" "${RIG_MEM_MB:-512}") \
		$(rig_vdev "$ifc") -- --name "$sock" --ip "$ip" --mac "$mac" --peer-mac "$pmac" "$@" \
		>"$log" 2>&1 &
	RIG_PID=$!
	rig_wait_sock "$sock" "$RIG_PID" && return 0
	kill -KILL "$RIG_PID" 2>/dev/null
	cat "$log" >&2
	return 1
}

# rig_ns_dpu SIDE SOCK LOG [options]: the DPU of dc-SIDE (a or b) in its
# namespace on net_af_packet over its veth end, with that side's --ip, --mac
# and --peer-mac (rig_netns_up first). Sets RIG_PID; 1 (daemon killed, its
# log on stderr) when it did not come up.
rig_ns_dpu() {
	local side=$1 sock=$2 log=$3
	shift 3
	case $side in
	a) rig_dpu "$NS_A" "$VETH_A" "$sock" "$log" "$DIP_A" "$DMAC_A" "$DMAC_B" "$@" ;;
	b) rig_dpu "$NS_B" "$VETH_B" "$sock" "$log" "$DIP_B" "$DMAC_B" "$DMAC_A" "$@" ;;
	*) echo "rig_ns_dpu: side a or b, not '$side'" >&2; return 1 ;;
	esac
}

# rig_ns_pair SOCK_A SOCK_B LOG_A LOG_B [options for both]: rig_ns_dpu for
# both sides. Sets RIG_PID_A and RIG_PID_B; 1 when one did not come up.
rig_ns_pair() {
	local sa=$1 sb=$2 la=$3 lb=$4
	shift 4
	RIG_PID_A= RIG_PID_B=
	rig_ns_dpu a "$sa" "$la" "$@" || return 1
	RIG_PID_A=$RIG_PID
	rig_ns_dpu b "$sb" "$lb" "$@" || return 1
	RIG_PID_B=$RIG_PID
}

# rig_session: for scripts that are not tests (the tests' lib.sh has its
# own): a temporary directory RIG_TMP, and at exit every daemon in RIG_PIDS
# stopped, the namespaces removed when RIG_NETNS=1, RIG_TMP deleted.
rig_session() {
	RIG_TMP=$(mktemp -d /tmp/sdr-rig.XXXXXX)
	RIG_PIDS=()
	RIG_NETNS=0
	trap rig_session_end EXIT
}
rig_session_end() {
	local p
	for p in "${RIG_PIDS[@]}"; do rig_stop "$p"; done
	[ "$RIG_NETNS" = 1 ] && rig_netns_down
	rm -rf "$RIG_TMP"
}

# ---- command mode ----
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
	set -u
	case ${1:-} in
	veth-up)
		[ $# -ge 2 ] || { echo "usage: rig.sh veth-up TAG [QPAIRS]" >&2; exit 2; }
		rig_names "$2"
		rig_netns_up || { echo "rig.sh: cannot create the namespaces and veth of '$2' (root?)" >&2; exit 1; }
		for v in NS_A NS_B VETH_A VETH_B KIP_A KIP_B DIP_A DIP_B DMAC_A DMAC_B; do
			echo "$v=${!v}"
		done
		echo "VDEV_A=$(rig_vdev "$VETH_A" "${3:-1}")"
		echo "VDEV_B=$(rig_vdev "$VETH_B" "${3:-1}")"
		;;
	veth-down)
		[ $# -ge 2 ] || { echo "usage: rig.sh veth-down TAG" >&2; exit 2; }
		rig_names "$2"
		rig_netns_down
		;;
	eal)
		[ $# -ge 2 ] || { echo "usage: rig.sh eal PREFIX [MB]" >&2; exit 2; }
		# shellcheck disable=SC2046
		printf '%s\n' $(rig_eal "$2" "${3:-512}")
		;;
	*)
		sed -n '3,25p' "$0" | sed 's/^# \{0,1\}//'
		[ "${1:-}" = -h ] || [ "${1:-}" = --help ]
		exit $?
		;;
	esac
fi
