#!/usr/bin/env bash
# Hitless daemon restart (docs/reliability.md "Restarts"): mid-transfer
# (sdr-send -> sdr-recv, messages of 1 B to 4 MiB, 256 in flight, 1e-3
# loss), the receiving daemon, in another run the sending daemon, in a third
# both are killed (-9) and started again 1 s later with the same command line
# (its state file: same key, same QPN epoch). libsdr re-attaches and restores
# its QP (QP_RESTORE), replays what was not complete and says so on the
# tool's stderr; every message arrives exactly once and bit-exact, every send
# completes with status 0. For SR, EC and AUTO; and once with SIGTERM (a
# planned restart: the daemon stops cleanly and its peers hear no QP-CLOSED).
# SDR_RESTART_SET=single (this file: the receiver's, then the sender's daemon)
# or both (restart_both.sh: both daemons, and the SIGTERM restart), so that
# each test stays under 2 min. Skipped (77) without root.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sr_lib.sh"
sr_netns_setup

link="$SR_LINK_BASE,loss=1e-3"
count=${SDR_RESTART_COUNT:-12} # x 5 sizes
# (generous windows: a loaded machine takes long to start a daemon)
opts=(--outage-horizon-ms 90000 --restore-window-ms 90000 --state-dir "$SDR_TMP/state")
export SDR_REATTACH_MS=90000 # libsdr's re-attach window

restart_a() {
	A_JSON=$SDR_TMP/$tag-a2.json A_LOG=$SDR_TMP/$tag-a2.log
	sr_dpu a "$A_SOCK" "$A_JSON" "$A_LOG" "$link,seed=101" "${opts[@]}" ||
		sdr_fail "$tag: daemon A did not restart"
	PA=$RIG_PID
	SDR_PIDS+=("$PA")
}

one() {
	local rel=$1 victim=$2 sig=${3:-KILL} tag=$1-$2-${3:-KILL} port=$((20000 + RANDOM % 20000))
	local r s srv rrv json log
	sr_pair "$tag" "$link" "${opts[@]}"
	ip netns exec "$NS_B" "$SDR_RECV" --dpu "$B_SOCK" --server --bind $KIP_B --port $port \
		--timeout 60 >"$SDR_TMP/$tag-recv.log" 2>&1 &
	r=$!
	ip netns exec "$NS_A" "$SDR_SEND" --dpu "$A_SOCK" --connect $KIP_B:$port --rel "$rel" \
		--sizes 1,4K,64K,1M,4M --count "$count" --window 256 --seed 23 --timeout 60 \
		>"$SDR_TMP/$tag-send.log" 2>&1 &
	s=$!
	for _ in $(seq 100); do grep -q "^msg " "$SDR_TMP/$tag-send.log" && break; sleep 0.1; done
	grep -q "^msg " "$SDR_TMP/$tag-send.log" || sdr_fail "$tag: nothing completed before the kill"
	[ "$victim" = both ] && kill -KILL "$PA"
	if [ "$victim" != sender ]; then
		kill -"$sig" "$PB"
		wait "$PB" 2>/dev/null
		[ "$victim" = both ] && wait "$PA" 2>/dev/null
		sleep 1
		[ "$victim" = both ] && restart_a
		B_JSON=$SDR_TMP/$tag-b2.json B_LOG=$SDR_TMP/$tag-b2.log
		sr_dpu b "$B_SOCK" "$B_JSON" "$B_LOG" "$link,seed=202" "${opts[@]}" ||
			sdr_fail "$tag: daemon B did not restart"
		PB=$RIG_PID json=$B_JSON log=$B_LOG
		SDR_PIDS+=("$PB")
	else
		kill -"$sig" "$PA"
		wait "$PA" 2>/dev/null
		sleep 1
		restart_a
		json=$A_JSON log=$A_LOG
	fi
	if [ "$victim" = both ]; then sdr_log "$tag: both daemons were killed and are back"
	else sdr_log "$tag: the $victim's daemon was stopped (SIG$sig) and is back"; fi
	wait $s
	srv=$?
	wait $r
	rrv=$?
	grep -E "^(sent|received):" "$SDR_TMP/$tag-send.log" "$SDR_TMP/$tag-recv.log"
	if [ $srv != 0 ] || [ $rrv != 0 ]; then
		tail -n 20 "$SDR_TMP/$tag-send.log" "$SDR_TMP/$tag-recv.log" "$log"
		sdr_fail "$tag: sdr-send exited $srv, sdr-recv $rrv"
	fi
	local n=$((5 * count))
	grep -q "^sent: $n ok, 0 failed" "$SDR_TMP/$tag-send.log" ||
		sdr_fail "$tag: not every send completed with status 0"
	grep -q "^received: $n ok, 0 failed" "$SDR_TMP/$tag-recv.log" ||
		sdr_fail "$tag: not every message arrived once, verified"
	grep -q "QP 0x[0-9a-f]* restored for" "$log" ||
		sdr_fail "$tag: the restarted daemon restored no QP"
	[ "$victim" != both ] || grep -q "QP 0x[0-9a-f]* restored for" "$A_LOG" ||
		sdr_fail "$tag: the restarted sending daemon restored no QP"
	# the tools (app_restart_note) say that libsdr re-attached
	local tl
	case $victim in receiver) tl=recv ;; sender) tl=send ;; *) tl="send recv" ;; esac
	for t in $tl; do
		grep -q "^sdr: daemon restarted: re-attached after [0-9]* ms, 1 QP(s) restored, 0 not" \
			"$SDR_TMP/$tag-$t.log" || sdr_fail "$tag: sdr-$t did not report its re-attach"
	done
	grep -h "^sdr: daemon restarted" "$SDR_TMP/$tag-send.log" "$SDR_TMP/$tag-recv.log"
	rig_stop "$PA"
	rig_stop "$PB"
	ok=$(/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["drops"]["ctl_restore_ok"])' "$json")
	[ "$ok" = 1 ] || sdr_fail "$tag: ctl_restore_ok = $ok, expected 1"
}

if [ "${SDR_RESTART_SET:-single}" = both ]; then
	for rel in ${SDR_RESTART_RELS:-sr ec auto}; do
		one "$rel" both KILL
	done
	# a planned restart: SIGTERM (the daemon stops cleanly, its peers hear
	# no QP-CLOSED, the next incarnation restores the QPs)
	one sr receiver TERM
	echo "restart_both: every message exactly once and bit-exact across kill -9 of both daemons (SR, EC, AUTO) and a SIGTERM restart"
else
	for rel in ${SDR_RESTART_RELS:-sr ec auto}; do
		for victim in receiver sender; do
			one "$rel" "$victim" KILL
		done
	done
	echo "restart: every message exactly once and bit-exact across kill -9 of either daemon (SR, EC, AUTO)"
fi
