#!/usr/bin/env bash
# External validation of the firmware itself (needs root for a veth pair):
#  1. sdr-dpu "dc-a" transmits into a net_pcap file (tx_pcap) while it hears
#     dc-b's clear-to-send through rx_iface; tshark must decode every data
#     packet as "UC RDMA WRITE Only with Immediate" (message 0, whose
#     immediate is 0: "UC RDMA WRITE Only") with the documented fields and
#     scapy must recompute the same ICRC for every packet.
#  2. scapy builds data packets from docs/wire-format.md alone (plus extra
#     copies with flipped payload bits) and sends them into dc-b's port: the
#     clean ones land at the right offsets (sdr-recv verifies every byte and
#     the immediate; message 0 goes as 0x2A packets), the corrupted ones are
#     counted as bad_icrc and dropped.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../integration/lib.sh"
PY=/usr/bin/python3
[ "$(id -u)" = 0 ] || sdr_skip "needs root (veth, raw sockets)"
command -v tshark >/dev/null || sdr_skip "tshark not installed"
$PY -c 'import scapy.contrib.roce' 2>/dev/null || sdr_skip "python3-scapy not installed"
rig_netns_up || sdr_skip "cannot create network namespaces"
SDR_CLEANUPS+=("rig_netns_down")
MAXMSG=1048576

# ---- 1. capture of sdr-dpu's transmit ----
# shellcheck disable=SC2046
ip netns exec "$NS_B" "$SDR_DPU" $(rig_eal sdr-xb 256) $(rig_vdev "$VETH_B") -- \
	--name "$SDR_TMP/b.sock" --ip $DIP_B --mac $DMAC_B --peer-mac $DMAC_A --qpn-epoch 0 \
	--stats-json "$SDR_TMP/b.json" >"$SDR_TMP/b.log" 2>&1 &
pb=$!; SDR_PIDS+=($pb)
rig_wait_sock "$SDR_TMP/b.sock" $pb || { cat "$SDR_TMP/b.log"; sdr_fail "dc-b did not start"; }
sizes=1,100,4096,5000,65536
# capture TAG [SDR-SEND OPTIONS]: dc-a sends the sizes into its own pcap
# (with SDR_TEST_QPAIRS 2, a daemon of two workers: two TX queues, each into
# a pcap of its own, merged for the checks; both RX queues hear the veth, so
# every frame dc-a hears comes in twice: a duplicate control frame)
capture() {
	local tag=$1 pa r1 npk vdev
	shift
	vdev="--vdev=net_pcap0,rx_iface=$VETH_A,tx_pcap=$SDR_TMP/a_tx_$tag.pcap"
	if [ "${SDR_TEST_QPAIRS:-1}" -gt 1 ]; then
		vdev="--vdev=net_pcap0,rx_iface_in=$VETH_A,rx_iface_in=$VETH_A"
		vdev="$vdev,tx_pcap=$SDR_TMP/a_tx_$tag.0.pcap,tx_pcap=$SDR_TMP/a_tx_$tag.1.pcap"
	fi
	# shellcheck disable=SC2046
	ip netns exec "$NS_A" "$SDR_DPU" $(rig_eal "sdr-xa$tag" 256) "$vdev" -- \
		--name "$SDR_TMP/a.sock" --ip $DIP_A --mac $DMAC_A --peer-mac $DMAC_B --qpn-epoch 0 \
		--stats-json "$SDR_TMP/a.json" >"$SDR_TMP/a.log" 2>&1 &
	pa=$!; SDR_PIDS+=($pa)
	rig_wait_sock "$SDR_TMP/a.sock" $pa || { cat "$SDR_TMP/a.log"; sdr_fail "dc-a did not start"; }
	ip netns exec "$NS_B" "$SDR_RECV" --dpu "$SDR_TMP/b.sock" --server --bind $KIP_B \
		--port 18516 --timeout 3 >"$SDR_TMP/r1.log" 2>&1 &
	r1=$!
	sleep 0.5
	# the data goes into the capture, so only local completion is expected here
	ip netns exec "$NS_A" "$SDR_SEND" --dpu "$SDR_TMP/a.sock" --connect $KIP_B:18516 \
		--sizes $sizes --seed 5 --max-msg $MAXMSG --timeout 20 "$@" >"$SDR_TMP/s1.log" 2>&1
	# (its exit status carries the receiver's verdict: nothing arrived, by design)
	grep -q "^sent: 5 ok, 0 failed" "$SDR_TMP/s1.log" ||
		{ cat "$SDR_TMP/s1.log" "$SDR_TMP/a.log"; sdr_fail "sender did not complete into net_pcap"; }
	wait $r1 # it times out: nothing reached it
	rig_stop $pa
	if [ "${SDR_TEST_QPAIRS:-1}" -gt 1 ]; then
		mergecap -w "$SDR_TMP/a_tx_$tag.pcap" "$SDR_TMP/a_tx_$tag.0.pcap" \
			"$SDR_TMP/a_tx_$tag.1.pcap" || sdr_fail "mergecap"
	fi
	# (sdr-send's message i carries immediate i: message 0 has none; with
	# --no-imm none has)
	npk=$($PY "$here/../integration/sr_check.py" --print-first-pass --sizes $sizes --count 1 "$@")
	echo "== capture $tag: expecting $npk data packets (incl. immediate-only) for sizes $sizes"
	$PY "$here/check_pcap.py" "$SDR_TMP/a_tx_$tag.pcap" --expect-data "$npk" --mtu 4096 \
		--max-msg $MAXMSG --complete || sdr_fail "scapy rejected sdr-dpu's packets"
	bash "$here/tshark_check.sh" "$SDR_TMP/a_tx_$tag.pcap" ||
		sdr_fail "tshark disagrees with sdr-dpu's packets"
}
capture imm
capture noimm --no-imm # one UC RDMA WRITE Only (0x2A) per MTU, nothing else

# ---- 2. scapy-built packets into dc-b ----
RKEY=0x5eed1234 QPN=0x100 SEED=9
peer="qpn=0x200,rkey=0x1,key=0x0,ip=$DIP_A,mac=$DMAC_A,mtu=4096,max_msg=$MAXMSG,chunk_pkts=16,gen=4,rel=0"
ip netns exec "$NS_B" "$SDR_RECV" --dpu "$SDR_TMP/b.sock" --local-qpn $QPN --local-rkey $RKEY \
	--peer "$peer" --sizes 1,5000,65536 --seed $SEED --max-msg $MAXMSG --timeout 10 \
	>"$SDR_TMP/r2.log" 2>&1 &
r2=$!
sleep 1
seq=0
for len in 1 5000 65536; do
	extra=""
	[ $len = 65536 ] && extra="--corrupt 3 --corrupt-extra"
	# shellcheck disable=SC2086
	ip netns exec "$NS_A" $PY "$here/build_packets.py" --iface "$VETH_A" \
		--src-mac $DMAC_A --dst-mac $DMAC_B --src-ip $DIP_A --dst-ip $DIP_B \
		--dest-qpn $QPN --generations 4 --rkey $RKEY --mtu 4096 --max-msg $MAXMSG \
		--msg-seq $seq --msg-len $len --pattern splitmix --pattern-seed $SEED --imm-is-seq \
		--src-qpn 0x200 $extra || sdr_fail "scapy could not send"
	seq=$((seq + 1))
done
wait $r2 || { cat "$SDR_TMP/r2.log"; sdr_fail "scapy-built packets did not land bit-exact"; }
cat "$SDR_TMP/r2.log"
rig_stop $pb
bad=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["drops"]["bad_icrc"])' "$SDR_TMP/b.json")
[ "$bad" = 3 ] || sdr_fail "dc-b counted $bad bad_icrc drops, expected the 3 corrupted packets"
echo "external: tshark and scapy agree with sdr-dpu; scapy-built packets placed; 3 corrupted dropped"
