# Helpers of the reliability tests over veth + net_af_packet (sourced after
# lib.sh; the rig is hw/x86/rig.sh's). Not a test of its own.
# shellcheck shell=bash

# sr_netns_setup: skip (77) without root or namespaces; otherwise the two
# namespaces of the rig are up and torn down at exit.
sr_netns_setup() {
	[ "$(id -u)" = 0 ] || sdr_skip "needs root for ip netns"
	rig_netns_up || sdr_skip "cannot create network namespaces here"
	SDR_CLEANUPS+=("rig_netns_down")
}

SR_LINK_BASE=${SR_LINK_BASE:-delay=12.5ms,rate=1gbit,buffer=4MB}
SR_PORT_RATE=${SR_PORT_RATE:-900m}

# sr_dpu SIDE SOCK JSON LOG LINK [extra daemon args...]: the daemon of side
# a or b (rig_ns_dpu) with its stats JSON, the paced port and the link
# emulator. Sets RIG_PID.
sr_dpu() {
	local side=$1 sock=$2 json=$3 log=$4 link=$5
	shift 5
	rig_ns_dpu "$side" "$sock" "$log" --stats-json "$json" --port-rate "$SR_PORT_RATE" \
		--link "$link" "$@"
}

# sr_pair TAG LINK [extra daemon args]: both daemons with the same link spec
# (different seeds). Sets PA PB, A_SOCK B_SOCK, A_JSON B_JSON, A_LOG B_LOG.
sr_pair() {
	local tag=$1 link=$2
	shift 2
	A_SOCK=$SDR_TMP/$tag-a.sock B_SOCK=$SDR_TMP/$tag-b.sock
	A_JSON=$SDR_TMP/$tag-a.json B_JSON=$SDR_TMP/$tag-b.json
	A_LOG=$SDR_TMP/$tag-a.log B_LOG=$SDR_TMP/$tag-b.log
	sr_dpu a "$A_SOCK" "$A_JSON" "$A_LOG" "$link,seed=101" "$@" ||
		{ sdr_fail "daemon A did not start"; }
	PA=$RIG_PID
	SDR_PIDS+=("$PA")
	sr_dpu b "$B_SOCK" "$B_JSON" "$B_LOG" "$link,seed=202" "$@" ||
		{ sdr_fail "daemon B did not start"; }
	PB=$RIG_PID
	SDR_PIDS+=("$PB")
}

# sr_transfer TAG SIZES COUNT [extra sdr-send args]: sdr-recv in B (TCP
# bootstrap), sdr-send in A with --rel sr. Returns 0 when both exit 0.
sr_transfer() {
	local tag=$1 sizes=$2 count=$3 port=$((20000 + RANDOM % 20000))
	shift 3
	ip netns exec "$NS_B" "$SDR_RECV" --dpu "$B_SOCK" --server --bind $KIP_B --port $port \
		--timeout 60 --quiet >"$SDR_TMP/$tag-recv.log" 2>&1 &
	local rpid=$!
	ip netns exec "$NS_A" "$SDR_SEND" --dpu "$A_SOCK" --connect $KIP_B:$port --rel sr \
		--sizes "$sizes" --count "$count" --seed 17 --timeout 60 --quiet "$@" \
		>"$SDR_TMP/$tag-send.log" 2>&1
	local srv=$?
	wait $rpid
	local rrv=$?
	grep -E "^(sent|receiver|send completion time, size all)" "$SDR_TMP/$tag-send.log"
	[ $srv = 0 ] && [ $rrv = 0 ] && return 0
	cat "$SDR_TMP/$tag-send.log" "$SDR_TMP/$tag-recv.log"
	return 1
}

# sr_kill_midway TAG LINK GTO TOOL_TO SIZES COUNT [sdr-send args]: a transfer
# from A to B (TCP bootstrap); once a message completed, daemon B is killed
# (-9) and restarted at once (same socket, new QPN epoch: --state-dir none,
# so the old QPs are not restorable; LINK with another seed,
# --global-timeout-ms GTO). Fails unless the sender then exits non-zero
# with an -ETIMEDOUT completion from its daemon (not its own TOOL_TO
# timeout) and daemon A is still alive. Sets B_JSON, B_LOG, PB to the new
# daemon and SR_KILL_ELAPSED to the seconds from the kill to the sender's
# exit.
sr_kill_midway() {
	local tag=$1 link=$2 gto=$3 tool_to=$4 sizes=$5 count=$6 port=$((20000 + RANDOM % 20000))
	shift 6
	local slog=$SDR_TMP/$tag-send.log
	ip netns exec "$NS_B" "$SDR_RECV" --dpu "$B_SOCK" --server --bind $KIP_B --port $port \
		--timeout "$tool_to" --quiet >"$SDR_TMP/$tag-recv.log" 2>&1 &
	local r1=$!
	ip netns exec "$NS_A" "$SDR_SEND" --dpu "$A_SOCK" --connect $KIP_B:$port "$@" \
		--sizes "$sizes" --count "$count" --timeout "$tool_to" >"$slog" 2>&1 &
	local s1=$!
	# kill the receiving daemon once data flows
	for _ in $(seq 100); do grep -q "^msg " "$slog" && break; sleep 0.1; done
	grep -q "^msg " "$slog" || { cat "$slog"; sdr_fail "no message completed before the kill"; }
	kill -KILL "$PB"
	local tk te srv
	tk=$(date +%s.%N)
	sdr_log "killed the receiving daemon"
	B_JSON=$SDR_TMP/$tag-b2.json B_LOG=$SDR_TMP/$tag-b2.log
	sr_dpu b "$B_SOCK" "$B_JSON" "$B_LOG" "$link,seed=303" --global-timeout-ms "$gto" \
		--state-dir none ||
		{ sdr_fail "daemon B did not restart"; }
	PB=$RIG_PID
	SDR_PIDS+=("$PB")
	wait $s1
	srv=$?
	te=$(date +%s.%N)
	kill -KILL $r1 2>/dev/null
	wait $r1 2>/dev/null
	[ $srv != 0 ] || sdr_fail "sdr-send succeeded although its peer died"
	grep -q "error (timed out)" "$slog" ||
		{ cat "$slog"; sdr_fail "no -ETIMEDOUT completion at the sender"; }
	# the tool's own timeout did not fire: the daemon's global timeout did
	grep -q "nothing completed for" "$slog" && sdr_fail "the tool timed out, not the daemon"
	kill -0 "$PA" || sdr_fail "the sending daemon died"
	SR_KILL_ELAPSED=$(echo "$te - $tk" | bc)
	sdr_log "sender got -ETIMEDOUT and exited $SR_KILL_ELAPSED s after the kill (global timeout $gto ms, tool timeout $tool_to s)"
}
