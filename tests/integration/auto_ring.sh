#!/usr/bin/env bash
# AUTO without root: two DPUs in one process over a net_ring pair
# (sdr-dpu --ring-pair, as sr_ring.sh), the link emulator on both directions
# with 5 ms delay and Bernoulli loss 1e-2, QPs with reliability AUTO (the
# sender's DPU picks SR or an EC code per message, docs/reliability.md
# "AUTO"). Every message arrives bit-exact (sdr-recv checks the pattern of
# every byte), every packet is accounted for, and AUTO's counters add up:
# each message SR or EC, a conservative start, model evaluations without
# errors, EC's counters for the messages it coded (ec_check.py --ring
# --auto). Which scheme the model picks is not asserted (auto_link.sh does
# that over veth with a known bottleneck).
#   env: SDR_AUTO_RING_LINK SDR_SIZES SDR_COUNT SDR_AUTO_WINDOW
. "$(dirname "$0")/lib.sh"
link=${SDR_AUTO_RING_LINK:-delay=5ms,loss=1e-2}
sizes=${SDR_SIZES:-4K,64K,256K,1M,4M}
count=${SDR_COUNT:-4}
SOCK_A=$SDR_TMP/a.sock SOCK_B=$SDR_TMP/b.sock STATS=$SDR_TMP/stats.json DPU_LOG=$SDR_TMP/dpu.log
# the model needs a rate: pace both instances (as the veth tests do)
rig_ring_pair autoring "$SOCK_A" "$SOCK_B" "$DPU_LOG" --link "$link,seed=5" --port-rate 1g \
	--instance --link "$link,seed=6" --port-rate 1g --stats-json "$STATS" ||
	sdr_fail "daemon did not start"
DPU_PID=$RIG_PID
SDR_PIDS+=("$DPU_PID")
port=$(rig_free_port)
"$SDR_RECV" --dpu "$SOCK_B" --server --bind 127.0.0.1 --port "$port" --timeout 60 --quiet \
	>"$SDR_TMP/recv.log" 2>&1 &
rpid=$!
sleep 0.3
"$SDR_SEND" --dpu "$SOCK_A" --connect "127.0.0.1:$port" --rel auto --sizes "$sizes" \
	--count "$count" --window "${SDR_AUTO_WINDOW:-2}" --seed 23 --timeout 60 \
	>"$SDR_TMP/send.log" 2>&1
srv=$?
wait $rpid
rrv=$?
tail -2 "$SDR_TMP/send.log"
cat "$SDR_TMP/recv.log"
rig_stop "$DPU_PID" || sdr_fail "daemon did not stop cleanly"
[ $srv = 0 ] || { cat "$SDR_TMP/send.log" "$DPU_LOG"; sdr_fail "sdr-send exited $srv"; }
[ $rrv = 0 ] || { cat "$DPU_LOG"; sdr_fail "sdr-recv exited $rrv (a message was lost or corrupted)"; }
/usr/bin/python3 "$(dirname "$0")/ec_check.py" --sizes "$sizes" --count "$count" --ring "$STATS" \
	--auto || { grep -A40 "drops and errors" "$DPU_LOG"; sdr_fail "counter identities"; }
echo "AUTO over a lossy ring pair ($link): every message bit-exact, every packet accounted for"
