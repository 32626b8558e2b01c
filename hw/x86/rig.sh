# Two "datacenters" on one machine (sourced): network namespaces joined by a
# veth pair with a 9000-byte MTU. Each DPU runs in its namespace on
# net_af_packet over its veth end. Needs root (ip netns).
# shellcheck shell=bash
SDR_NS_TAG=${SDR_NS_TAG:-$$}
NS_A=sdr-a-$SDR_NS_TAG NS_B=sdr-b-$SDR_NS_TAG
VETH_A=sa$SDR_NS_TAG VETH_B=sb$SDR_NS_TAG
# kernel addresses carry the out-of-band QP-info bootstrap (TCP)
KIP_A=10.99.0.1 KIP_B=10.99.0.2
# the DPUs' own addresses and MACs (the kernel ignores frames to them)
DIP_A=10.99.1.1 DIP_B=10.99.1.2
DMAC_A=02:53:44:52:0a:01 DMAC_B=02:53:44:52:0b:01

sdr_netns_up() {
	[ "$(id -u)" = 0 ] || return 1
	command -v ip >/dev/null || return 1
	ip netns add "$NS_A" || return 1
	ip netns add "$NS_B" || { ip netns del "$NS_A"; return 1; }
	ip link add "$VETH_A" type veth peer name "$VETH_B" || { sdr_netns_down; return 1; }
	ip link set "$VETH_A" netns "$NS_A" && ip link set "$VETH_B" netns "$NS_B" || { sdr_netns_down; return 1; }
	for x in "A $NS_A $VETH_A $KIP_A" "B $NS_B $VETH_B $KIP_B"; do
		set -- $x
		ip -n "$2" link set lo up
		ip -n "$2" link set "$3" mtu 9000 up
		ip -n "$2" addr add "$4/24" dev "$3"
	done
	return 0
}

sdr_netns_down() {
	ip netns del "$NS_A" 2>/dev/null
	ip netns del "$NS_B" 2>/dev/null
	ip link del "$VETH_A" 2>/dev/null
	return 0
}

# sdr_ns_vdev IFACE: the af_packet vdev for a jumbo-frame veth
sdr_ns_vdev() { echo "--vdev=net_af_packet0,iface=$1,framesz=9216,blocksz=36864,framecnt=8192,qpairs=1"; }
