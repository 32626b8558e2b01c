#!/usr/bin/env bash
# Acknowledgement is a guarantee, with the window full: sdr-recv keeps W
# receives and sdr-send W sends outstanding (W = 1000, and 1024, the most
# the API allows: a QP has 1024 message slots, libsdr refuses send or
# receive n with -EAGAIN until n - 1024 was reaped, and the tools cap
# --window at 1024), 1 B and 100 B messages, over a ring pair (no root)
# with a few ms of delay on both directions, no loss and 1 % Bernoulli loss
# on both directions, reliability SR, EC (RS(8,2)) and AUTO.
#
# Every case must show, exactly: sdr-send completed all N sends with status
# 0 and sdr-recv verified all N receives (length, immediate present and
# equal to the message index, every byte); the daemons counted N messages
# sent and N received, none partial, no send error, no global timeout, no
# host-interface error (an -ENOTCONN post is sqe_not_conn); and every
# packet is accounted for (tests/integration/rel_check.py: data packets =
# first pass + retransmissions, frames received = placed + control +
# counted drops, each emulator saw what the other port sent).
# All cases run; the test fails at the end naming every case that failed.
#   env: SDR_WIN_RELS ("sr ec auto"), SDR_WIN_LOSSES ("0 1e-2"),
#        SDR_WIN_WINDOWS ("1000 1024"), SDR_WIN_MSGS (4096), SDR_WIN_DELAY (3ms)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
rels=${SDR_WIN_RELS:-"sr ec auto"}
losses=${SDR_WIN_LOSSES:-"0 1e-2"}
windows=${SDR_WIN_WINDOWS:-"1000 1024"}
msgs=${SDR_WIN_MSGS:-4096}
delay=${SDR_WIN_DELAY:-3ms}
[ $((msgs % 2)) = 0 ] || sdr_fail "SDR_WIN_MSGS must be even (sizes 1,100 alternate)"
failed=()
n=0

# summary N LOG WHAT: the "WHAT: X ok, Y failed" line of a tool says X = N, Y = 0
summary_ok() {
	grep -qE "^$3: $1 ok, 0 failed" "$2"
}

for rel in $rels; do
	for loss in $losses; do
		for w in $windows; do
			n=$((n + 1))
			tag="$rel-loss$loss-w$w"
			link="delay=$delay,loss=$loss"
			sdr_log "case $n: $tag: $msgs messages of 1 B and 100 B, window $w, link $link"
			STATS=$SDR_TMP/$n.json DPU_LOG=$SDR_TMP/$n-dpu.log
			SOCK_A=$SDR_TMP/$n-a.sock SOCK_B=$SDR_TMP/$n-b.sock
			rig_ring_pair "win-$n" "$SOCK_A" "$SOCK_B" "$DPU_LOG" \
				--link "$link,seed=$((2 * n + 1))" --instance \
				--link "$link,seed=$((2 * n + 2))" --stats-json "$STATS" ||
				sdr_fail "daemon did not start"
			DPU_PID=$RIG_PID
			SDR_PIDS+=("$DPU_PID")
			port=$(rig_free_port)
			ec=()
			[ "$rel" = ec ] && ec=(--ec rs:8:2)
			"$SDR_RECV" --dpu "$SOCK_B" --server --bind 127.0.0.1 --port "$port" --timeout 10 \
				--window "$w" --quiet >"$SDR_TMP/$n-recv.log" 2>&1 &
			rpid=$!
			"$SDR_SEND" --dpu "$SOCK_A" --connect "127.0.0.1:$port" --rel "$rel" "${ec[@]}" \
				--sizes 1,100 --count $((msgs / 2)) --seed $n --window "$w" --timeout 10 \
				>"$SDR_TMP/$n-send.log" 2>&1
			srv=$?
			wait $rpid
			rrv=$?
			rig_stop "$DPU_PID" || sdr_fail "daemon did not stop cleanly"
			grep -E "^(sent|receiver):" "$SDR_TMP/$n-send.log"
			grep -E "^received:" "$SDR_TMP/$n-recv.log"
			ok=1
			if [ $srv != 0 ] || [ $rrv != 0 ] || ! summary_ok "$msgs" "$SDR_TMP/$n-send.log" sent ||
				! summary_ok "$msgs" "$SDR_TMP/$n-send.log" receiver ||
				! summary_ok "$msgs" "$SDR_TMP/$n-recv.log" received; then
				ok=0
				echo "  sdr-send exited $srv, sdr-recv $rrv; send completions by status:"
				grep -oE "^msg [0-9]+ size [0-9]+ (sent|error \([^)]*\))" "$SDR_TMP/$n-send.log" |
					sed -E 's/^msg [0-9]+ size [0-9]+ //' | sort | uniq -c | sed 's/^/   /'
				grep -m3 -E "error|timeout|pending" "$SDR_TMP/$n-send.log" | sed 's/^/   send: /'
				grep -m3 -E "error|timeout|incomplete" "$SDR_TMP/$n-recv.log" | sed 's/^/   recv: /'
			fi
			expect=()
			[ "$loss" != 0 ] && expect=(--min-repair 1 --nonzero dropped_loss)
			/usr/bin/python3 "$here/rel_check.py" --ring "$STATS" --messages "$msgs" \
				--first-pass "$(/usr/bin/python3 "$here/sr_check.py" --print-first-pass --sizes 1,100 \
					--count $((msgs / 2)))" "${expect[@]}" | sed 's/^/  /'
			[ "${PIPESTATUS[0]}" = 0 ] || ok=0
			if [ $ok = 1 ]; then
				sdr_log "case $n: $tag: ok"
			else
				grep -A40 "drops and errors" "$DPU_LOG" | head -40
				failed+=("$tag")
				sdr_log "case $n: $tag: FAILED"
			fi
		done
	done
done
[ ${#failed[@]} = 0 ] || sdr_fail "${#failed[@]} of $n cases failed: ${failed[*]}"
echo "full windows ($windows outstanding each way): $n cases, every message completed with status 0 at both ends, bit-exact, every packet accounted for"
