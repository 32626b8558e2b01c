#!/usr/bin/env bash
# sdr-pipe end to end: two DCs (network namespaces, one sdr-dpu each over
# veth + net_af_packet, the link emulator on both directions), one sdr-pipe
# process per DC running its stages as threads. Small pipeline (4 stages,
# 2 per DC, 4 micro-batches, short compute times), every schedule, with
# reliability none and SR, then a lossy link with SR and with EC. Checks: both
# processes exit 0 (every payload's header and checksum verified by the
# receiving stage), and the executed event log re-checked offline
# (sdr-pipe --check-events: every F/B exactly once per stage and iteration
# in program order, F(s,m) after F(s-1,m), B(s,m) after B(s+1,m) and F(s,m),
# received checksums equal the sent ones). A tampered log must be rejected.
# Timing is not checked. Skipped (77) without root.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sr_lib.sh"
: "${SDR_PIPE:=$SDR_BUILD/host/pipe/sdr-pipe}"
[ -x "$SDR_PIPE" ] || sdr_skip "no $SDR_PIPE"
sr_netns_setup

COMMON="--place 2,2 --micro 4 --tf 2ms --tb 4ms --act 64K --grad 48K --rtt 10ms --rate 900m --iters 2 --timeout 20"

# pipe_run TAG [sdr-pipe args]: both DCs; 0 when both exit 0 and the merged
# log passes the offline check
pipe_run() {
	local tag=$1 port=$((20000 + RANDOM % 20000))
	shift
	ip netns exec "$NS_A" "$SDR_PIPE" $COMMON "$@" --dc 0 --dpu "$A_SOCK" --server $KIP_A \
		--port $port --events "$SDR_TMP/$tag.ev" --svg "$SDR_TMP/$tag.svg" \
		>"$SDR_TMP/$tag-a.log" 2>&1 &
	local apid=$!
	ip netns exec "$NS_B" "$SDR_PIPE" $COMMON "$@" --dc 1 --dpu "$B_SOCK" --connect $KIP_A:$port \
		--events "$SDR_TMP/$tag-b.ev" >"$SDR_TMP/$tag-b.log" 2>&1
	local brv=$?
	wait $apid
	local arv=$?
	if [ $arv != 0 ] || [ $brv != 0 ]; then
		cat "$SDR_TMP/$tag-a.log" "$SDR_TMP/$tag-b.log"
		return 1
	fi
	grep -E "^(iterations|bubble|every)" "$SDR_TMP/$tag-a.log"
	"$SDR_PIPE" $COMMON "$@" --check-events "$SDR_TMP/$tag.ev" || return 1
	"$SDR_PIPE" $COMMON "$@" --check-events "$SDR_TMP/$tag-b.ev" || return 1
	grep -q "</svg>" "$SDR_TMP/$tag.svg" || { echo "no chart"; return 1; }
	return 0
}

sr_pair lossless "delay=5ms,rate=1gbit,buffer=4MB"
n=0
for s in "1f1b --rel none" "gpipe --rel sr" "geopipe --rel sr" "greedy --rel none" "1f1b --comm nonblocking --rel sr"; do
	n=$((n + 1))
	sdr_log "case $n: --sched $s"
	# shellcheck disable=SC2086
	pipe_run "c$n" --sched $s || { cat "$A_LOG" "$B_LOG"; sdr_fail "--sched $s"; }
done

# the offline check can fail: a changed checksum, a reordered pair of events
ev=$SDR_TMP/c3.ev
awk 'BEGIN{d=0} !/^#/ && $3==3 && !d {$9="0123456789abcdef"; d=1} {print}' "$ev" >"$SDR_TMP/bad1.ev"
"$SDR_PIPE" $COMMON --sched geopipe --rel sr --check-events "$SDR_TMP/bad1.ev" &&
	sdr_fail "a tampered checksum passed the check"
awk '!/^#/ && $2==2 && $3==0 && !d {held=$0; d=1; next} {print} held && !p {print held; p=1}' "$ev" >"$SDR_TMP/bad2.ev"
"$SDR_PIPE" $COMMON --sched geopipe --rel sr --check-events "$SDR_TMP/bad2.ev" &&
	sdr_fail "a reordered log passed the check"
rig_stop "$PA"; rig_stop "$PB"

# lossy link: SR repairs it, payloads still verified
sr_pair lossy "delay=5ms,rate=1gbit,buffer=4MB,loss=1e-2"
sdr_log "case lossy: --sched greedy --rel sr, loss 1e-2"
pipe_run lossy --sched greedy --rel sr || { cat "$A_LOG" "$B_LOG"; sdr_fail "lossy greedy"; }
sdr_log "case lossy: --sched geopipe --rel ec:rs:8:2, loss 1e-2"
pipe_run lossy-ec --sched geopipe --rel ec:rs:8:2 || { cat "$A_LOG" "$B_LOG"; sdr_fail "lossy geopipe EC"; }
rig_stop "$PA"; rig_stop "$PB"
echo "sdr-pipe e2e: $n lossless cases + 2 lossy (SR, EC), every payload verified, dependency order ok, tampered logs rejected"
