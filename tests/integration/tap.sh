#!/usr/bin/env bash
# net_tap (root): without --mac the DPU does not take its kernel interface's
# MAC (a locally administered 02:53:44:52:xx:yy instead), answers ARP for its
# IP with that MAC, and its start-up note about frame sizes names net_tap's
# own remedy (the kernel interface's MTU), not net_af_packet's vdev
# parameters. With --mac it uses the given MAC.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || sdr_skip "needs root (net_tap creates a kernel interface)"
[ -c /dev/net/tun ] || sdr_skip "no /dev/net/tun"
ifc=sdrtap$$
ifc=${ifc:0:15}
start() { # $1 = tag, rest = sdr-dpu options
	local tag=$1; shift
	LOG=$SDR_TMP/$tag.log
	# shellcheck disable=SC2046
	"$SDR_DPU" $(rig_eal "sdr-tap-$tag-$$") --vdev="net_tap0,iface=$ifc" -- \
		--name "$SDR_TMP/$tag.sock" --ip 10.213.0.1 --peer-mac 02:00:00:00:00:09 "$@" \
		>"$LOG" 2>&1 &
	PID=$!
	SDR_PIDS+=("$PID")
	rig_wait_sock "$SDR_TMP/$tag.sock" "$PID" || { cat "$LOG"; sdr_fail "daemon did not start"; }
}
# (the socket exists a moment before the "ready" line is printed: wait for it)
ready_mac() {
	local m=""
	for _ in $(seq 100); do
		m=$(sed -n 's/.*ready on port .* mac \([0-9a-f:]*\) peer-mac.*/\1/p' "$LOG")
		[ -n "$m" ] && break
		sleep 0.05
	done
	echo "$m"
}

start nomac
kmac=$(cat "/sys/class/net/$ifc/address")
dmac=$(ready_mac)
echo "kernel interface $ifc: $kmac; DPU: $dmac"
[ -n "$dmac" ] || { cat "$LOG"; sdr_fail "no ready line"; }
[ "$dmac" != "$kmac" ] || sdr_fail "the DPU uses its kernel interface's MAC $kmac"
case $dmac in 02:53:44:52:*) ;; *) sdr_fail "default MAC $dmac is not 02:53:44:52:xx:yy" ;; esac
grep -q "note: port 0 (net_tap) has its kernel interface's MAC $kmac; this DPU uses $dmac" "$LOG" ||
	{ cat "$LOG"; sdr_fail "no note about the MAC"; }
# the frame-size note: net_tap's remedy, not net_af_packet's
grep -q "reports frames up to" "$LOG" || { cat "$LOG"; sdr_fail "no frame-size note at MTU 4096"; }
grep -q "net_tap: give its kernel interface an MTU of at least 4160, e.g. ip link set $ifc mtu 9000" "$LOG" ||
	{ cat "$LOG"; sdr_fail "frame-size note does not name net_tap's remedy"; }
if grep -q "framesz" "$LOG"; then cat "$LOG"; sdr_fail "net_tap note names net_af_packet's parameters"; fi
# the kernel resolves the DPU's IP to the DPU's MAC (the daemon answers ARP)
ip addr add 10.213.0.2/24 dev "$ifc"
# a UDP datagram to the DPU's IP makes the kernel ask ARP (the datagram
# itself is dropped by the DPU: not RoCE)
poke() { /usr/bin/python3 -c 'import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("10.213.0.1", 9))'; }
got=""
for _ in $(seq 30); do
	poke
	sleep 0.1
	got=$(ip neigh show 10.213.0.1 dev "$ifc" | awk '/lladdr/ {print $3}')
	[ -n "$got" ] && break
done
[ "$got" = "$dmac" ] || { ip neigh show dev "$ifc"; cat "$LOG"; sdr_fail "kernel resolved 10.213.0.1 to '$got', expected $dmac"; }
rig_stop "$PID" || sdr_fail "daemon did not stop cleanly"

start withmac --mac 02:aa:bb:cc:dd:ee
[ "$(ready_mac)" = 02:aa:bb:cc:dd:ee ] || { cat "$LOG"; sdr_fail "--mac not used"; }
if grep -q "kernel interface's MAC" "$LOG"; then sdr_fail "MAC note printed although --mac was given"; fi
rig_stop "$PID" || sdr_fail "daemon did not stop cleanly"
echo "net_tap: own default MAC $dmac (kernel $kmac), ARP answered with it, net_tap MTU hint"
