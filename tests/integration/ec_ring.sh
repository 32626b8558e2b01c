#!/usr/bin/env bash
# Erasure coding without root: two DPUs in one process over a net_ring pair
# (sdr-dpu --ring-pair, as sr_ring.sh), the link emulator on both directions
# with 2 ms delay and Bernoulli loss 1e-2, QPs with reliability EC:
# RS(8,2) with 4-packet chunks, then XOR(8,4) with one-packet chunks. Every
# message arrives bit-exact (sdr-recv checks the pattern of every byte,
# chunks rebuilt from parity included), every packet is accounted for and
# the receiver rebuilt chunks from parity (ec_check.py --ring).
#   env: SDR_EC_RING_CASES="code:k:m,chunk_pkts ..." SDR_EC_RING_LINK SDR_SIZES SDR_COUNT
. "$(dirname "$0")/lib.sh"
link=${SDR_EC_RING_LINK:-delay=2ms,loss=1e-2}
sizes=${SDR_SIZES:-1,4K,20K,256K,1M}
count=${SDR_COUNT:-4}
n=0
for c in ${SDR_EC_RING_CASES:-rs:8:2,4 xor:8:4,1}; do
	n=$((n + 1))
	IFS=, read -r ec ppc <<<"$c"
	sdr_log "case $n: --rel ec --ec $ec --chunk-pkts $ppc over a ring pair, --link $link"
	SOCK_A=$SDR_TMP/e$n-a.sock SOCK_B=$SDR_TMP/e$n-b.sock
	STATS=$SDR_TMP/e$n.json DPU_LOG=$SDR_TMP/e$n-dpu.log
	rig_ring_pair "ecring$n" "$SOCK_A" "$SOCK_B" "$DPU_LOG" --link "$link,seed=$((10 + n))" \
		--instance --link "$link,seed=$((20 + n))" --stats-json "$STATS" ||
		sdr_fail "daemon did not start"
	DPU_PID=$RIG_PID
	SDR_PIDS+=("$DPU_PID")
	port=$(rig_free_port)
	"$SDR_RECV" --dpu "$SOCK_B" --server --bind 127.0.0.1 --port "$port" --timeout 60 --quiet \
		>"$SDR_TMP/e$n-recv.log" 2>&1 &
	rpid=$!
	sleep 0.3
	"$SDR_SEND" --dpu "$SOCK_A" --connect "127.0.0.1:$port" --rel ec --ec "$ec" \
		--chunk-pkts "$ppc" --sizes "$sizes" --count "$count" --seed $((30 + n)) --timeout 60 \
		>"$SDR_TMP/e$n-send.log" 2>&1
	srv=$?
	wait $rpid
	rrv=$?
	tail -2 "$SDR_TMP/e$n-send.log"
	cat "$SDR_TMP/e$n-recv.log"
	rig_stop "$DPU_PID" || sdr_fail "daemon did not stop cleanly"
	[ $srv = 0 ] || { cat "$SDR_TMP/e$n-send.log" "$DPU_LOG"; sdr_fail "case $c: sdr-send exited $srv"; }
	[ $rrv = 0 ] || { cat "$DPU_LOG"; sdr_fail "case $c: sdr-recv exited $rrv (a message was lost or corrupted)"; }
	/usr/bin/python3 "$(dirname "$0")/ec_check.py" --sizes "$sizes" --count "$count" \
		--chunk-pkts "$ppc" --ring "$STATS" --min-recovered 1 ||
		{ grep -A40 "drops and errors" "$DPU_LOG"; sdr_fail "case $c: counter identities"; }
done
echo "EC over a lossy ring pair ($link): $n codes, every message bit-exact, every packet accounted for"
