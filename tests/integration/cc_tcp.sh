#!/usr/bin/env bash
# Congestion control beside kernel TCP (docs/congestion.md "Beside kernel
# TCP"): the bump-in-the-wire rig (hw/x86/bridge-netns.sh: DC A - sdr-dpu
# --bridge - DC B, one DPU on each DC end), the bridge's emulator the shared
# bottleneck (LINK: 25 ms RTT, RATE, BUFFER, ECN marks from 100 KB). Per
# case, at the same time for DUR s: one kernel TCP bulk flow A -> B (its
# congestion control set with TCP_CONGESTION, net.ipv4.tcp_ecn in both DC
# namespaces as the case says) and one SR QP A -> B with --cc on (sdr-send/
# sdr-recv, 1 MiB messages, every one verified bit-exact). Over the common
# interval (from WARM s after both flows started to the first one's end,
# one clock): each flow's payload goodput >= MIN of the link (default 1/4:
# half its fair share; which flows, CHECK below); every sdr message
# complete, no send error. Prints both goodputs, the bottleneck's drops and
# CE marks and the sdr controller's state when TCP ended. Skipped (77)
# without root or ethtool.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../../hw/x86/bridge-netns.sh"
[ "$(id -u)" = 0 ] || sdr_skip "needs root for ip netns"
command -v ethtool >/dev/null || sdr_skip "needs ethtool (Debian: apt-get install ethtool)"

RATE_MBIT=${SDR_CCTCP_RATE_MBIT:-100}
LINK=${SDR_CCTCP_LINK:-delay=12.5ms,rate=${RATE_MBIT}mbit,buffer=1250KB,ecn=100KB}
# CC:ECN:CHECK - the TCP congestion control, net.ipv4.tcp_ecn in both DC
# namespaces, and what is asserted: "fair" both flows >= MIN of the link,
# "tcp" only TCP (sdr's figure printed). Beside a TCP that does not answer
# the bottleneck's marks (Reno without ECN, BBR) the sdr flow holds its share
# in the controller's TCP-competitive mode (docs/congestion.md)
CASES=${SDR_CCTCP_CASES:-reno:1:fair reno:0:fair bbr:1:fair bbr:0:fair}
DUR=${SDR_CCTCP_DUR:-14}
WARM=${SDR_CCTCP_WARM:-3}
MIN=${SDR_CCTCP_MIN:-0.25}
# SDR_CCTCP_DPU_ARGS: more options for both DPUs (e.g. --cc-noise-probe on)
# sdr's messages: its fair share for DUR s (it ends the interval early if
# it gets more, and finishes alone if it gets less)
MSGS=$((RATE_MBIT * 1000000 / 2 * DUR / 8 / 1048576))

for c in $CASES; do
	grep -qw "${c%%:*}" /proc/sys/net/ipv4/tcp_available_congestion_control ||
		modprobe "tcp_${c%%:*}" 2>/dev/null ||
		sdr_skip "TCP congestion control ${c%%:*} not available"
done
sdr_bridge_netns_up || sdr_skip "cannot create network namespaces here"
SDR_CLEANUPS+=("sdr_bridge_netns_down")

for side in a b; do
	if [ $side = a ]; then ns=$NS_A ifc=$VETH_A ip=$DIP_A mac=$DMAC_A peer=$DMAC_B
	else ns=$NS_B ifc=$VETH_B ip=$DIP_B mac=$DMAC_B peer=$DMAC_A; fi
	# shellcheck disable=SC2046,SC2086
	ip netns exec "$ns" "$SDR_DPU" $(rig_eal "sdr-ct-$side-$$" 512) $(rig_vdev "$ifc") -- \
		--name "$SDR_TMP/$side.sock" --ip "$ip" --mac "$mac" --peer-mac "$peer" \
		--port-rate $((RATE_MBIT * 3))m --cc on --cc-competitive on ${SDR_CCTCP_DPU_ARGS:-} \
		--stats-json "$SDR_TMP/dpu-$side.json" \
		--stats-interval 1 \
		>"$SDR_TMP/dpu-$side.log" 2>&1 &
	SDR_PIDS+=($!)
	eval "P_$side=$!"
	rig_wait_sock "$SDR_TMP/$side.sock" $! || { cat "$SDR_TMP/dpu-$side.log"; sdr_fail "DPU $side"; }
done

# TCP receiver: (CLOCK_MONOTONIC, bytes so far) every 50 ms, as JSON
TCP_RECV='
import json, socket, sys, time
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2]))); s.listen(1); s.settimeout(60)
c, _ = s.accept(); buf = bytearray(1 << 20); n = 0; pts = []; last = 0
while True:
    k = c.recv_into(buf)
    if not k: break
    n += k; t = time.monotonic()
    if not pts or t - last >= 0.05: pts.append((t, n)); last = t
pts.append((time.monotonic(), n))
print(json.dumps({"bytes": n, "pts": pts}))'
# TCP sender: bulk for DUR s with congestion control CC
TCP_SEND='
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, sys.argv[3].encode())
s.settimeout(60); s.connect((sys.argv[1], int(sys.argv[2])))
cc = s.getsockopt(socket.IPPROTO_TCP, socket.TCP_CONGESTION, 16).split(b"\0")[0].decode()
data = bytes(1 << 20); end = time.monotonic() + float(sys.argv[4]); n = 0
while time.monotonic() < end:
    s.sendall(data); n += len(data)
s.close()
print(cc, n)'

results=()
for c in $CASES; do
	IFS=: read -r cc ecn check <<<"$c"
	tag=$cc-ecn$ecn
	for ns in "$NS_A" "$NS_B"; do ip netns exec "$ns" sysctl -qw net.ipv4.tcp_ecn="$ecn"; done
	sdr_log "$tag: TCP $cc (tcp_ecn=$ecn) beside one SR QP (--cc on), $DUR s, link $LINK"
	bjson=$SDR_TMP/$tag-bridge.json
	# shellcheck disable=SC2046
	ip netns exec "$NS_BR" "$SDR_DPU" $(rig_eal "sdr-ctb-$$" 1024) -l 0 $(sdr_bridge_vdevs) -- \
		--bridge --link "$LINK" --stats-json "$bjson" >"$SDR_TMP/$tag-bridge.log" 2>&1 &
	bpid=$!
	SDR_PIDS+=("$bpid")
	for _ in $(seq 100); do
		grep -q forwarding "$SDR_TMP/$tag-bridge.log" 2>/dev/null && break
		kill -0 $bpid || break
		sleep 0.1
	done
	grep -q forwarding "$SDR_TMP/$tag-bridge.log" ||
		{ cat "$SDR_TMP/$tag-bridge.log"; sdr_fail "bridge did not start"; }
	n0=$(wc -l <"$SDR_TMP/dpu-a.log")
	snmp0=$(ip netns exec "$NS_A" awk '/^Tcp: [0-9]/ { print $13 }' /proc/net/snmp)
	sport=$((20000 + RANDOM % 20000)) tport=$((40001 + RANDOM % 20000))
	ip netns exec "$NS_B" "$SDR_RECV" --dpu "$SDR_TMP/b.sock" --server --bind $KIP_B \
		--port $sport --timeout 60 --json >"$SDR_TMP/$tag-recv.log" 2>&1 &
	srp=$!
	ip netns exec "$NS_B" /usr/bin/python3 -c "$TCP_RECV" $KIP_B $tport \
		>"$SDR_TMP/$tag-tcp-recv.json" 2>&1 &
	trp=$!
	sleep 0.5
	ip netns exec "$NS_A" "$SDR_SEND" --dpu "$SDR_TMP/a.sock" --connect $KIP_B:$sport --rel sr \
		--sizes 1M --count $MSGS --window 16 --seed 29 --timeout 60 --quiet \
		>"$SDR_TMP/$tag-send.log" 2>&1 &
	ssp=$!
	ip netns exec "$NS_A" /usr/bin/python3 -c "$TCP_SEND" $KIP_B $tport "$cc" "$DUR" \
		>"$SDR_TMP/$tag-tcp-send.out" 2>&1 &
	tsp=$!
	rc=0
	wait $tsp || { cat "$SDR_TMP/$tag-tcp-send.out"; rc=1; }
	n1=$(wc -l <"$SDR_TMP/dpu-a.log")
	wait $trp || { cat "$SDR_TMP/$tag-tcp-recv.json"; rc=1; }
	wait $ssp || { tail -5 "$SDR_TMP/$tag-send.log"; rc=1; }
	wait $srp || { tail -5 "$SDR_TMP/$tag-recv.log"; rc=1; }
	[ $rc = 0 ] || sdr_fail "$tag: a transfer failed"
	snmp1=$(ip netns exec "$NS_A" awk '/^Tcp: [0-9]/ { print $13 }' /proc/net/snmp)
	rig_stop "$bpid" || sdr_fail "bridge did not stop cleanly"
	tail -1 "$SDR_TMP/$tag-send.log"
	# the sdr QP's controller at the last stats interval before TCP ended
	sed -n "${n0},${n1}p" "$SDR_TMP/dpu-a.log" | grep "CC: rate" | tail -1 |
		sed 's/^ */sdr QP at TCP end: /'
	read -r used _ <"$SDR_TMP/$tag-tcp-send.out"
	[ "$used" = "$cc" ] || sdr_fail "$tag: the TCP socket ran $used, not $cc"
	results+=("$tag $((snmp1 - snmp0)) ${check:-fair}")
done
rig_stop "$P_a" || sdr_fail "DPU A did not stop cleanly"

/usr/bin/python3 - "$SDR_TMP" "$RATE_MBIT" "$WARM" "$MIN" "$MSGS" "${results[@]}" <<'PY' ||
import json, sys
tmp, rate, warm, mn, nmsg = sys.argv[1], float(sys.argv[2]) * 1e6, float(sys.argv[3]), \
    float(sys.argv[4]), int(sys.argv[5])
bad = []
for r in sys.argv[6:]:
    tag, retx, check = r.split()
    msgs = [json.loads(l) for l in open("%s/%s-recv.log" % (tmp, tag)) if l.startswith('{"msg"')]
    notok = [m for m in msgs if m["status"] != "complete"]
    assert len(msgs) == nmsg and not notok, "%s: %d of %d sdr messages, not complete: %s" % (
        tag, len(msgs), nmsg, notok[:3])
    sdr = sorted((m["t_mono_s"], m["size"]) for m in msgs)
    tcp = json.load(open("%s/%s-tcp-recv.json" % (tmp, tag)))["pts"]
    # the interval: WARM s after the flows started (together: TCP's first
    # bytes) to the earlier of their last ones
    start = tcp[0][0] + warm
    end = min(sdr[-1][0], tcp[-1][0])
    span = end - start
    assert span >= 4, "%s: common interval %.2f s (sdr %.2f..%.2f, TCP %.2f..%.2f)" % (
        tag, span, sdr[0][0], sdr[-1][0], tcp[0][0], tcp[-1][0])
    def at(t):  # TCP bytes received by t (the last sample at or before it)
        return max([b for (x, b) in tcp if x <= t] or [0])
    g_sdr = sum(sz for t, sz in sdr if start < t <= end) * 8 / span
    g_tcp = (at(end) - at(start)) * 8 / span
    br = json.load(open("%s/%s-bridge.json" % (tmp, tag)))["bridge"]
    fwd = [x["link"] for x in br if x["in"] == 0][0]
    print("%s: interval %.1f s: sdr %.1f Mbit/s, TCP %.1f Mbit/s (sum %.1f %% of %.0f Mbit/s); "
          "whole runs: sdr %.1f s, TCP %.1f s" % (
          tag, span, g_sdr / 1e6, g_tcp / 1e6, 100 * (g_sdr + g_tcp) / rate, rate / 1e6,
          sdr[-1][0] - sdr[0][0], tcp[-1][0] - tcp[0][0]))
    print("   bottleneck A->B: frames in %d, ECN-capable %d, CE marked %d, dropped_buffer %d, "
          "max backlog %d B; TCP retransmitted %s segments" % (
          fwd["pkts_in"], fwd.get("ect_in", 0), fwd.get("ce_marked", 0), fwd["dropped_buffer"],
          fwd.get("max_backlog_bytes", 0), retx))
    for name, g in (("sdr", g_sdr), ("TCP", g_tcp)):
        if (check == "fair" or name == "TCP") and g < mn * rate:
            bad.append("%s: %s %.1f Mbit/s < %.0f %% of the link" % (tag, name, g / 1e6, 100 * mn))
a = json.load(open(tmp + "/dpu-a.json"))["instances"][0]["qp_totals"]
print("sdr sender (all cases): %d packets retransmitted, %d send errors" % (
    a.get("sr_retx_pkts", 0), a["send_errors"]))
assert a["send_errors"] == 0, "sdr send errors"
assert not bad, "; ".join(bad)
PY
	sdr_fail "a flow got less than half its fair share beside kernel TCP"
echo "congestion control beside kernel TCP: each flow at least half its fair share, every message whole"
