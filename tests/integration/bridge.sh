#!/usr/bin/env bash
# sdr-dpu --bridge (firmware/ctl/bridge.c), the bump in the wire: three network
# namespaces, DC A - bridge - DC B (hw/x86/bridge-netns.sh), the link
# emulator each way. Checks: kernel TCP crosses the bridge and arrives
# bit-exact (8 MB with a digest) through 5 % loss each way; a TCP connect
# takes at least the emulated round trip (2 x 5 ms: frames never leave
# early); the counters account for every frame (per direction: in = out +
# TX drops; emulator: offered = delivered + dropped) and the loss was
# really applied in both directions; the port 1 -> 0 direction is a link
# of two paths (--link-ba ...,paths=2) whose per-path counters ("lanes")
# add up to its totals; two DPUs on the DCs move SR messages
# through the same bridge bit-exact; bad options are refused with a
# message. Skipped (77) without root.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../../hw/x86/bridge-netns.sh"
[ "$(id -u)" = 0 ] || sdr_skip "needs root for ip netns"
command -v ethtool >/dev/null || sdr_skip "needs ethtool (Debian: apt-get install ethtool)"
out=$("$SDR_DPU" --no-huge -- --bridge --link bogus=1 2>&1) && sdr_fail "a bad --link passed"
case $out in *"unknown key 'bogus'"*) ;; *) sdr_fail "bad --link: $out" ;; esac
out=$("$SDR_DPU" --no-huge -- --bridge --ip 1.2.3.4 2>&1) && sdr_fail "a DPU option passed"
case $out in *"'--ip'"*) ;; *) sdr_fail "DPU option: $out" ;; esac
sdr_bridge_netns_up || sdr_skip "cannot create network namespaces here"
SDR_CLEANUPS+=("sdr_bridge_netns_down")
BJSON=$SDR_TMP/bridge.json
# shellcheck disable=SC2046
ip netns exec "$NS_BR" "$SDR_DPU" $(rig_eal "sdr-br-$$" 1024) -l 0 $(sdr_bridge_vdevs) -- \
	--bridge --link "delay=5ms,rate=1gbit,buffer=2MB,loss=5%,seed=9" --stats-json "$BJSON" \
	--link-ba "delay=5ms,rate=1gbit,buffer=2MB,loss=5%,seed=9,paths=2" \
	>"$SDR_TMP/bridge.log" 2>&1 &
BPID=$!
SDR_PIDS+=("$BPID")
for _ in $(seq 100); do grep -q forwarding "$SDR_TMP/bridge.log" && break; kill -0 $BPID || break; sleep 0.1; done
grep -q forwarding "$SDR_TMP/bridge.log" || { cat "$SDR_TMP/bridge.log"; sdr_fail "bridge did not start"; }
cat "$SDR_TMP/bridge.log" | grep "sdr-dpu --bridge"

# kernel TCP through the bridge: bytes intact, connect >= one round trip
port=$((20000 + RANDOM % 20000))
ip netns exec "$NS_B" /usr/bin/python3 -c '
import hashlib, socket, sys
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((sys.argv[1], int(sys.argv[2]))); s.listen(1); s.settimeout(60)
c, _ = s.accept(); h = hashlib.sha256(); n = 0
while True:
    b = c.recv(1 << 20)
    if not b: break
    h.update(b); n += len(b)
print(n, h.hexdigest())' $KIP_B $port >"$SDR_TMP/tcp-recv.out" &
rpid=$!
sleep 0.5
ip netns exec "$NS_A" /usr/bin/python3 -c '
import hashlib, os, socket, sys, time
data = bytes(range(256)) * (8 << 12) + os.urandom(1 << 20)
t = time.monotonic(); s = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=60)
rtt = time.monotonic() - t
s.sendall(data); s.close()
print(len(data), hashlib.sha256(data).hexdigest(), "%.6f" % rtt)' $KIP_B $port >"$SDR_TMP/tcp-send.out" ||
	sdr_fail "TCP send through the bridge failed"
wait $rpid || sdr_fail "TCP receiver failed"
read -r sn sh rtt <"$SDR_TMP/tcp-send.out"
read -r rn rh <"$SDR_TMP/tcp-recv.out"
echo "TCP: sent $sn bytes, received $rn, connect took $rtt s"
[ "$sn" = "$rn" ] && [ "$sh" = "$rh" ] || sdr_fail "TCP bytes differ through the bridge"
awk -v r="$rtt" 'BEGIN { exit !(r >= 0.010) }' || sdr_fail "connect in $rtt s: below the emulated 10 ms round trip"

# two DPUs on the DCs, SR messages through the same bridge
for side in a b; do
	if [ $side = a ]; then ns=$NS_A ifc=$VETH_A ip=$DIP_A mac=$DMAC_A peer=$DMAC_B
	else ns=$NS_B ifc=$VETH_B ip=$DIP_B mac=$DMAC_B peer=$DMAC_A; fi
	# shellcheck disable=SC2046
	ip netns exec "$ns" "$SDR_DPU" $(rig_eal "sdr-brd-$side-$$" 512) $(rig_vdev "$ifc") -- \
		--name "$SDR_TMP/$side.sock" --ip "$ip" --mac "$mac" --peer-mac "$peer" \
		--port-rate 900m >"$SDR_TMP/dpu-$side.log" 2>&1 &
	SDR_PIDS+=($!)
	rig_wait_sock "$SDR_TMP/$side.sock" $! || { cat "$SDR_TMP/dpu-$side.log"; sdr_fail "DPU $side"; }
done
port=$((20000 + RANDOM % 20000))
ip netns exec "$NS_B" "$SDR_RECV" --dpu "$SDR_TMP/b.sock" --server --bind $KIP_B --port $port \
	--timeout 60 --quiet >"$SDR_TMP/recv.log" 2>&1 &
rpid=$!
sleep 0.5
ip netns exec "$NS_A" "$SDR_SEND" --dpu "$SDR_TMP/a.sock" --connect $KIP_B:$port --rel sr \
	--sizes 4K,256K,1M --count 4 --seed 3 --timeout 60 --quiet >"$SDR_TMP/send.log" 2>&1 ||
	{ cat "$SDR_TMP/send.log" "$SDR_TMP/recv.log"; sdr_fail "SR through the bridge"; }
wait $rpid || { cat "$SDR_TMP/recv.log"; sdr_fail "sdr-recv through the bridge"; }
tail -2 "$SDR_TMP/send.log"
rig_stop "$BPID" || sdr_fail "bridge did not stop cleanly"
/usr/bin/python3 - "$BJSON" <<'PYEOF' || sdr_fail "bridge counters"
import json, sys
d = json.load(open(sys.argv[1]))["bridge"]
for x in d:
    l = x["link"]
    print(f"port {x['in']} -> {x['out']}: {x['rx']} frames in, {x['tx']} out, {x['tx_drop']} TX drops; "
          f"emulator: {l['pkts_in']} offered, {l['delivered']} delivered, {l['dropped_loss']} lost, "
          f"{l['dropped_buffer']} buffer drops")
    drops = sum(l[k] for k in ("dropped_buffer", "dropped_ge", "dropped_loss", "dropped_limit"))
    assert l["pkts_in"] == l["delivered"] + drops, "emulator counters do not add up"
    assert x["rx"] == x["tx"] + x["tx_drop"], "forwarding counters do not add up"
    assert l["released"] - l["held"] <= l["delivered"] + l["duplicated"], "released more than delivered"
    assert x["rx"] == l["released"], "the bridge forwarded other frames than the emulator released"
    assert l["dropped_loss"] > 0, "no loss applied in this direction"
    # per path (--link-ba: two, the ACKs and TCP's one flow each on one)
    lanes = x["lanes"]
    want = (["default:delay=5ms"] if x["in"] == 0
            else ["default/p0:delay=5ms", "default/p1:delay=5ms"])
    assert [y["lane"].split(",")[0] for y in lanes] == want, [y["lane"] for y in lanes]
    for k in ("pkts_in", "delivered", "dropped_loss", "released"):
        assert l[k] == sum(y[k] for y in lanes), (k, lanes)
PYEOF
echo "bridge: TCP and SR across the bump in the wire intact, delay and loss applied each way, every frame counted"
