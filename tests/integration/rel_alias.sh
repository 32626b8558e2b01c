#!/usr/bin/env bash
# No aliasing between messages n and n + 4096: they share msg_id (n % 1024)
# and generation ((n / 1024) % 4), hence DestQP, VA and R_Key, so a packet
# of message n delayed for longer than 4096 messages take must be dropped
# (counted), never placed into message n + 4096. Ring pair (no root), SR,
# many 1 B and 100 B messages (each 1 data packet + 7 immediate-only
# packets), the link emulator on the data direction delays 2 % of the
# frames by T (--link reorder=2%:T); SR repairs them long before they
# arrive.
#
# Whether a late packet meets a receive with its own msg_id and generation
# depends on D = messages completed during T, modulo 4096: with W receives
# posted the slot holds, at the packet's arrival, the receive
# n + 4096 k only when D mod 4096 lies in a band W wide. So the sender is
# paced (--rate) to a steady message rate r, measured first (with the same
# reordering, T short), and the test runs K segments with
# T_j = (2 * 4096 + j * 4096 / K) / r, j = 0..K-1, which put D mod 4096 at
# K points spaced 4096 / K <= W apart: every band position is covered, and
# some segments deliver hundreds of late packets into posted receives of
# their own generation. A segment whose rate is off the calibration by more
# than 30 % (the machine's load) is run again at its own rate (twice at
# most in a run).
#
# Every segment must show: all N sends completed with status 0 and all N
# receives verified (length, immediate present and = index, every byte);
# counter identities (rel_check.py), and late packets counted. Over all
# segments the late packets must have arrived (emulator `reordered`, drops
# late_pkt / stale_* > 0), and some must have met a posted receive of their
# own slot and generation and been dropped by their message number
# (stale_seq > 0): the aliasing case was exercised.
#   env: SDR_ALIAS_WINDOW (1024), SDR_ALIAS_SEGMENTS (8), SDR_ALIAS_RATE (30m,
#        sdr-send --rate), SDR_ALIAS_SECONDS (1.5: run time after T),
#        SDR_ALIAS_REL (sr)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
w=${SDR_ALIAS_WINDOW:-1024}
K=${SDR_ALIAS_SEGMENTS:-8}
rate=${SDR_ALIAS_RATE:-30m}
tail_s=${SDR_ALIAS_SECONDS:-1.5}
rel=${SDR_ALIAS_REL:-sr}
P=2%
failed=()
tot_late=0
tot_seq=0

# run TAG LINK MSGS: one transfer on a fresh ring pair, link emulator on the
# receiving instance only; sets SRV RRV, STATS, SEND_LOG RECV_LOG
run() {
	local tag=$1 link=$2 msgs=$3 port
	STATS=$SDR_TMP/$tag.json DPU_LOG=$SDR_TMP/$tag-dpu.log
	SOCK_A=$SDR_TMP/$tag-a.sock SOCK_B=$SDR_TMP/$tag-b.sock
	SEND_LOG=$SDR_TMP/$tag-send.log RECV_LOG=$SDR_TMP/$tag-recv.log
	rig_ring_pair "alias-$tag" "$SOCK_A" "$SOCK_B" "$DPU_LOG" --instance --link "$link" \
		--stats-json "$STATS" || sdr_fail "daemon did not start"
	DPU_PID=$RIG_PID
	SDR_PIDS+=("$DPU_PID")
	port=$(rig_free_port)
	"$SDR_RECV" --dpu "$SOCK_B" --server --bind 127.0.0.1 --port "$port" --timeout 10 \
		--window "$w" >"$RECV_LOG" 2>&1 &
	local rpid=$!
	"$SDR_SEND" --dpu "$SOCK_A" --connect "127.0.0.1:$port" --rel "$rel" --sizes 1,100 \
		--count $((msgs / 2)) --seed 5 --window "$w" --rate "$rate" --timeout 10 --quiet \
		>"$SEND_LOG" 2>&1
	SRV=$?
	wait $rpid
	RRV=$?
	rig_stop "$DPU_PID" || sdr_fail "daemon did not stop cleanly"
}

# calibration: the paced message rate with the same reordering, T short
cal=10000
run cal "delay=1ms,reorder=$P:5ms,limit=8192,seed=1" $cal
[ $SRV = 0 ] && [ $RRV = 0 ] || { tail -n 5 "$SEND_LOG" "$RECV_LOG"; sdr_fail "calibration transfer failed"; }
secs=$(sed -nE 's/^sent: [0-9]+ ok, 0 failed, [0-9]+ bytes in ([0-9.]+) s.*/\1/p' "$SEND_LOG")
[ -n "$secs" ] || { cat "$SEND_LOG"; sdr_fail "no elapsed time from sdr-send"; }
r=$(echo "$cal / $secs" | bc -l)
sdr_log "calibration: $cal messages in $secs s: $(printf %.0f "$r") messages/s (window $w, --rate $rate)"

j=0 redo=0 nseg=0
while [ $j -lt $K ]; do
	D=$((2 * 4096 + j * 4096 / K))
	T_ms=$(printf %.0f "$(echo "$D * 1000 / $r" | bc -l)")
	msgs=$(printf %.0f "$(echo "$r * ($T_ms / 1000 + $tail_s) / 2" | bc -l)")
	msgs=$((msgs * 2))
	tag=seg$j
	link="delay=1ms,reorder=$P:${T_ms}ms,limit=16384,seed=$((j + 11))"
	sdr_log "segment $j: T = $T_ms ms (D = $D messages at the calibrated rate), $msgs messages"
	run "$tag" "$link" "$msgs"
	nseg=$((nseg + 1))
	ok=1
	grep -E "^(sent|receiver):" "$SEND_LOG" | sed 's/^/  /'
	if [ $SRV != 0 ] || [ $RRV != 0 ] || ! grep -qE "^sent: $msgs ok, 0 failed" "$SEND_LOG" ||
		! grep -qE "^receiver: $msgs ok, 0 failed" "$SEND_LOG"; then
		ok=0
		echo "  sdr-send exited $SRV, sdr-recv $RRV; receives not verified, by reason:"
		grep -oE "error \((data mismatch|immediate|length|no immediate|[a-z ]+)" "$RECV_LOG" |
			sort | uniq -c | sed 's/^/    /'
		grep -m5 "error (" "$RECV_LOG" | sed 's/^/    /'
	fi
	/usr/bin/python3 "$here/rel_check.py" --ring "$STATS" --messages "$msgs" \
		--first-pass "$(/usr/bin/python3 "$here/sr_check.py" --print-first-pass --sizes 1,100 \
			--count $((msgs / 2)))" --nonzero reordered | sed 's/^/  /'
	[ "${PIPESTATUS[0]}" = 0 ] || ok=0
	late=$(/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))["drops"]
ks = [k for k in d if k == "late_pkt" or (k.startswith("stale_") and k != "stale_epoch")]
print(" ".join("%s=%d" % (k, d[k]) for k in ks), file=sys.stderr)
print(sum(d[k] for k in ks))' "$STATS" 2>"$SDR_TMP/$tag.late")
	echo "  late/stale drops: $(cat "$SDR_TMP/$tag.late")"
	tot_late=$((tot_late + late))
	# stale_seq: a late packet met a receive of its own slot and generation
	# (the aliasing case) and was dropped by its message number
	tot_seq=$((tot_seq + $(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["drops"].get("stale_seq", 0))' "$STATS")))
	[ $ok = 1 ] || { failed+=("T=${T_ms}ms"); sdr_log "segment $j: FAILED"; }
	# the machine's load changes the rate the sender keeps up: when this
	# segment's rate is off the calibration by more than 30 %, D was not
	# what was planned; take its rate and run the segment again (twice at
	# most in all)
	secs=$(sed -nE 's/^sent: [0-9]+ ok, [0-9]+ failed, [0-9]+ bytes in ([0-9.]+) s.*/\1/p' "$SEND_LOG")
	rs=$(echo "$msgs / ${secs:-0.000001}" | bc -l)
	if [ $redo -lt 2 ] && [ "$(echo "$rs > 1.3 * $r || $rs < 0.7 * $r" | bc -l)" = 1 ]; then
		redo=$((redo + 1))
		sdr_log "segment $j ran at $(printf %.0f "$rs") messages/s, not $(printf %.0f "$r"): again at that rate"
		r=$rs
		continue
	fi
	j=$((j + 1))
done
[ ${#failed[@]} = 0 ] || sdr_fail "${#failed[@]} of $nseg segments failed: ${failed[*]}"
[ "$tot_late" -gt 0 ] || sdr_fail "no late packet was counted: the segments did not exercise late arrivals"
[ "$tot_seq" -gt 0 ] || sdr_fail "no late packet met a receive of its own slot and generation (stale_seq = 0): the segments did not exercise aliasing"
echo "no aliasing: $nseg segments with 2 % of the data frames $(printf %.1f "$(echo "8192 / $r" | bc -l)")..$(printf %.1f "$(echo "12288 / $r" | bc -l)") s late, every message bit-exact with its own immediate; $tot_late late/stale packets counted and dropped, $tot_seq of them (stale_seq) in a receive of their own slot and generation"
