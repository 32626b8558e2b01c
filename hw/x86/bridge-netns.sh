# Two "datacenters" joined through a bump in the wire (sourced; root):
#
#   netns A: veth VETH_A (KIP_A; DPU A's net_af_packet)
#        <-> netns BR: veth BR_A  [sdr-dpu --bridge, --link each way]  veth BR_B
#        <-> netns B: veth VETH_B (KIP_B; DPU B's net_af_packet)
#
# Everything between the DCs - the DPUs' RoCE frames and kernel TCP (gloo,
# PyTorch's store) - crosses the bridge and so the same emulated link.
# Offloads are off on every veth: the bridge forwards frames as af_packet
# sees them, so they must be real frames (no GSO super-packets, checksums
# filled in). Names and addresses as hw/x86/rig.sh.
# shellcheck shell=bash
. "$(dirname "${BASH_SOURCE[0]}")/rig.sh"
NS_BR=sdr-br-$SDR_NS_TAG
BR_A=ba$SDR_NS_TAG BR_B=bb$SDR_NS_TAG

sdr_bridge_netns_up() {
	[ "$(id -u)" = 0 ] || return 1
	command -v ip >/dev/null && command -v ethtool >/dev/null || return 1
	local ns
	for ns in "$NS_A" "$NS_B" "$NS_BR"; do
		ip netns add "$ns" || { sdr_bridge_netns_down; return 1; }
		ip -n "$ns" link set lo up
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1
	done
	ip link add "$VETH_A" netns "$NS_A" type veth peer name "$BR_A" netns "$NS_BR" &&
		ip link add "$VETH_B" netns "$NS_B" type veth peer name "$BR_B" netns "$NS_BR" ||
		{ sdr_bridge_netns_down; return 1; }
	local x
	for x in "$NS_A $VETH_A $KIP_A" "$NS_B $VETH_B $KIP_B" "$NS_BR $BR_A -" "$NS_BR $BR_B -"; do
		set -- $x
		ip -n "$1" link set "$2" mtu 9000 up
		ip netns exec "$1" ethtool -K "$2" tso off gso off gro off tx off rx off >/dev/null 2>&1
		[ "$3" = - ] || ip -n "$1" addr add "$3/24" dev "$2"
	done
	return 0
}

sdr_bridge_netns_down() {
	ip netns del "$NS_A" 2>/dev/null
	ip netns del "$NS_B" 2>/dev/null
	ip netns del "$NS_BR" 2>/dev/null
	return 0
}

# sdr_bridge_vdevs: the bridge's two ports
sdr_bridge_vdevs() {
	echo "$(rig_vdev "$BR_A" 1 0)" "$(rig_vdev "$BR_B" 1 1)"
}
