#!/usr/bin/env bash
# Two daemons in two network namespaces over veth + net_af_packet (the real
# kernel path): messages from 1 B to 64 MiB arrive bit-exact; per-message
# bitmaps full. Skipped (77) without root.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../../hw/x86/rig.sh"
[ "$(id -u)" = 0 ] || sdr_skip "needs root for ip netns"
sdr_netns_up || sdr_skip "cannot create network namespaces here"
SDR_CLEANUPS+=("sdr_netns_down")
STATS=$SDR_TMP/b.json
start_dpu() { # ns iface sock ip mac peermac json log
	# shellcheck disable=SC2046
	ip netns exec "$1" "$SDR_DPU" $(sdr_eal "sdr-ns-$1" 512) $(sdr_ns_vdev "$2") -- \
		--name "$3" --ip "$4" --mac "$5" --peer-mac "$6" --stats-json "$7" --port-rate ${SDR_PORT_RATE:-1g} >"$8" 2>&1 &
	SDR_PIDS+=($!)
	sdr_wait_sock "$3" $! || { cat "$8"; sdr_fail "daemon in $1 did not start"; }
	echo $!
}
pa=$(start_dpu "$NS_A" "$VETH_A" "$SDR_TMP/a.sock" $DIP_A $DMAC_A $DMAC_B "$SDR_TMP/a.json" "$SDR_TMP/a.log")
pb=$(start_dpu "$NS_B" "$VETH_B" "$SDR_TMP/b.sock" $DIP_B $DMAC_B $DMAC_A "$SDR_TMP/b.json" "$SDR_TMP/b.log")
SDR_PIDS+=("$pa" "$pb")
sizes=${SDR_SIZES:-1,4095,4096,4097,65536,1M,16M,64M}
ip netns exec "$NS_B" "$SDR_RECV" --dpu "$SDR_TMP/b.sock" --server --bind $KIP_B --port 18515 \
	--timeout 180 >"$SDR_TMP/recv.log" 2>&1 &
rpid=$!
sleep 0.5
ip netns exec "$NS_A" "$SDR_SEND" --dpu "$SDR_TMP/a.sock" --connect $KIP_B:18515 \
	--sizes "$sizes" --seed 11 --timeout 180 >"$SDR_TMP/send.log" 2>&1
srv=$?
wait $rpid
rrv=$?
cat "$SDR_TMP/recv.log"
sdr_stop "$pa"; sdr_stop "$pb"
[ $srv = 0 ] || { cat "$SDR_TMP/send.log" "$SDR_TMP/a.log"; sdr_fail "sdr-send exited $srv"; }
[ $rrv = 0 ] || { cat "$SDR_TMP/b.log"; sdr_fail "sdr-recv exited $rrv"; }
for c in bad_icrc stale_gen bad_len bad_va bad_rkey imm_mismatch cq_lost; do
	v=$(sdr_json_drop $c)
	[ "$v" = 0 ] || sdr_fail "dc-b drop counter $c = $v"
done
echo "netns veth/af_packet: all messages bit-exact"
