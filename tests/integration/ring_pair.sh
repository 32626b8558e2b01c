#!/usr/bin/env bash
# Two DPUs in one process over a net_ring pair: messages from 1 B to 64 MiB
# arrive bit-exact with full bitmaps; no drop counter moves.
. "$(dirname "$0")/lib.sh"
sdr_start_ring_pair ring
port=$(sdr_free_port)
sizes=${SDR_SIZES:-1,2,3,7,100,1023,1024,1025,4095,4096,4097,8191,32768,65536,65537,1M,4M,16M,64M}
"$SDR_RECV" --dpu "$SOCK_B" --server --bind 127.0.0.1 --port "$port" --timeout 120 \
	>"$SDR_TMP/recv.log" 2>&1 &
rpid=$!
sleep 0.3
"$SDR_SEND" --dpu "$SOCK_A" --connect "127.0.0.1:$port" --sizes "$sizes" --count 2 --seed 7 \
	--timeout 120 >"$SDR_TMP/send.log" 2>&1
srv=$?
wait $rpid
rrv=$?
cat "$SDR_TMP/recv.log"
tail -3 "$SDR_TMP/send.log"
sdr_stop "$DPU_PID"
[ $srv = 0 ] || { cat "$SDR_TMP/send.log"; sdr_fail "sdr-send exited $srv"; }
[ $rrv = 0 ] || sdr_fail "sdr-recv exited $rrv"
nmsg=$(( $(echo "$sizes" | tr ',' '\n' | wc -l) * 2 ))
got=$(sdr_json_qp_sum msgs_recv)
[ "$got" = "$nmsg" ] || sdr_fail "daemon counted $got complete receives, expected $nmsg"
for c in bad_icrc no_recv stale_gen bad_len bad_va bad_rkey dup_pkt dup_imm imm_mismatch tx_full cq_lost; do
	v=$(sdr_json_drop $c)
	[ "$v" = 0 ] || sdr_fail "drop counter $c = $v on a clean link"
done
echo "ring pair: $nmsg messages bit-exact"
