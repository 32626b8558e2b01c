#!/usr/bin/env bash
# Measurements of docs/pipeline.md: sdr-pipe over two sdr-dpu daemons in
# network namespaces with the link emulator (RTT = 2 x DELAY_MS), one JSON line
# per run on stdout (DC 0's report). Needs root.
#   SDR_BUILD=build-pipe host/pipe/measure.sh
# Environment: DELAY_MS (12.5: one-way delay, milliseconds), LINKRATE (1gbit),
# PORT_RATE (900m), LOSSES
# ("0"), RELS ("none"; with loss use sr), SCHEDS ("1f1b 1f1b-nb geopipe
# greedy"), TFS ("12.5ms"), STAGES (8), MICRO (16), SIZE (256K), ITERS (3),
# EXTRA (more sdr-pipe options), DPU_EXTRA (more sdr-dpu options, e.g.
# "--chunk-pkts 1" for 4 KiB chunks as EC wants).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../hw/x86/rig.sh"
rig_session
[ "$(id -u)" = 0 ] || { echo "measure.sh: needs root (ip netns)" >&2; exit 2; }
rig_netns_up || { echo "measure.sh: cannot create network namespaces" >&2; exit 1; }
RIG_NETNS=1
: "${SDR_PIPE:=$SDR_BUILD/host/pipe/sdr-pipe}"
DELAY_MS=${DELAY_MS:-12.5} LINKRATE=${LINKRATE:-1gbit}
LOSSES=${LOSSES:-0} RELS=${RELS:-none} SCHEDS=${SCHEDS:-"1f1b 1f1b-nb geopipe greedy"}
TFS=${TFS:-12.5ms} STAGES=${STAGES:-8} MICRO=${MICRO:-16} SIZE=${SIZE:-256K} ITERS=${ITERS:-3}
rtt_ms=$(awk -v d="$DELAY_MS" 'BEGIN { print 2 * d }')
rate=${PORT_RATE:-900m}
for loss in $LOSSES; do
	link="delay=${DELAY_MS}ms,rate=$LINKRATE,buffer=8MB"
	[ "$loss" != 0 ] && link="$link,loss=$loss"
	A_SOCK=$RIG_TMP/a.sock B_SOCK=$RIG_TMP/b.sock
	for side in a b; do
		# shellcheck disable=SC2086
		rig_ns_dpu $side "$RIG_TMP/$side.sock" "$RIG_TMP/m$loss-$side.log" --port-rate "$rate" \
			--link "$link,seed=$([ $side = a ] && echo 101 || echo 202)" ${DPU_EXTRA:-} >&2 || exit 1
		RIG_PIDS+=("$RIG_PID")
	done
	for rel in $RELS; do
		for tf in $TFS; do
			for s in $SCHEDS; do
				case $s in
				1f1b-nb) sa="--sched 1f1b --comm nonblocking" ;;
				*) sa="--sched $s" ;;
				esac
				port=$((20000 + RANDOM % 20000))
				args="--stages $STAGES --micro $MICRO --tf $tf --act $SIZE --grad $SIZE --rtt ${rtt_ms}ms --rate $rate --iters $ITERS --rel $rel $sa ${EXTRA:-}"
				# shellcheck disable=SC2086
				ip netns exec "$NS_A" "$SDR_PIPE" $args --dc 0 --dpu "$A_SOCK" --server $KIP_A --port $port \
					--json --svg "${SVG_DIR:-/tmp}/pipe-$s-$tf-$loss-$rel.svg" >"$RIG_TMP/a.out" 2>&1 &
				apid=$!
				# shellcheck disable=SC2086
				ip netns exec "$NS_B" "$SDR_PIPE" $args --dc 1 --dpu "$B_SOCK" --connect $KIP_A:$port \
					--quiet >"$RIG_TMP/b.out" 2>&1
				wait $apid
				grep '^{' "$RIG_TMP/a.out" | sed "s/^{/{\"loss\":$loss,/" || cat "$RIG_TMP/a.out" "$RIG_TMP/b.out" >&2
			done
		done
	done
	for p in "${RIG_PIDS[@]}"; do rig_stop "$p"; done
	RIG_PIDS=()
done
