#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# compete.sh: N sdr-pipe pipelines competing for one link (docs/pipeline.md
# "Competing pipelines"). Two sdr-dpu daemons in two network namespaces
# (the veth rig, hw/x86/rig.sh), the link emulator on each as the bottleneck
# of its direction, and N pipelines of two DCs each (one sdr-pipe process
# per DC, its own QP per crossing boundary), started --gap apart. The
# daemons' telemetry is sampled every 0.1 s. Prints per pipeline its
# iterations, goodput (cross-DC payload per median iteration), received rate
# in the steady state, CE fractions and its controllers' cuts; Jain's index of
# the goodputs and per window; each direction's queue (p50, p99, max), CE
# marks and drops. Writes DIR/report.json (one JSON line) and DIR/rates.png
# (rates over time, the queue, Jain's index per window). Needs root.
#
# usage: compete.sh [options] [-- sdr-pipe options]
#   --pipes N        pipelines (default 2, at most 16)
#   --gap SEC        seconds between two pipelines' starts (default 2)
#   --cc on|off      the daemons' congestion control (sdr-dpu --cc; default on)
#   --link SPEC      link emulator of both daemons (sdr-dpu --link; default
#                    delay=12.5ms,rate=100mbit,buffer=4MB,ecn=100KB: a rate
#                    this rig carries on a 2-core machine)
#   --port-rate R    each daemon's port pace: every QP's ceiling (default 300m)
#   --dpu-arg ARG    one more sdr-dpu option (repeatable)
#   --flow-win SEC   window of the rates and of Jain's index (default 1)
#   --out DIR        where the logs, report.json and rates.png go (default
#                    ./pipe-compete; made if missing)
#   -h, --help       this text
# sdr-pipe options after '--' replace the default pipeline: --stages 2
#   --micro 8 --tf 2ms --tb 4ms --act 1M --grad 1M --sched 1f1b --comm
#   nonblocking --rel sr --iters 12 (each process also gets --dc, --dpu, its
#   addresses, --json, --verbose and --timeout 60 unless given).
# Binaries: SDR_BUILD (default ./build of this tree): firmware/sdr-dpu,
# host/pipe/sdr-pipe. Exit status: 0 when every pipeline passed (every payload
# verified) and its QPs were found in the telemetry, 1 otherwise, 2 on a bad
# option.
set -u
here=$(cd "$(dirname "$0")" && pwd)
usage() { sed -n '3,36p' "$0" | sed 's/^# \{0,1\}//'; }

PIPES=2 GAP=2 CC=on FLOW_WIN=1 OUT=./pipe-compete
LINK=delay=12.5ms,rate=100mbit,buffer=4MB,ecn=100KB
PORT_RATE=300m
DPU_ARGS=()
PIPE_ARGS=(--stages 2 --micro 8 --tf 2ms --tb 4ms --act 1M --grad 1M --sched 1f1b
	--comm nonblocking --rel sr --iters 12)
bad() { echo "compete.sh: $*" >&2; exit 2; }
while [ $# -gt 0 ]; do
	case $1 in
	--pipes) PIPES=${2:-}; shift 2 ;;
	--gap) GAP=${2:-}; shift 2 ;;
	--cc) CC=${2:-}; shift 2 ;;
	--link) LINK=${2:-}; shift 2 ;;
	--port-rate) PORT_RATE=${2:-}; shift 2 ;;
	--dpu-arg) DPU_ARGS+=("${2:-}"); shift 2 ;;
	--flow-win) FLOW_WIN=${2:-}; shift 2 ;;
	--out) OUT=${2:-}; shift 2 ;;
	-h | --help) usage; exit 0 ;;
	--) shift; [ $# -gt 0 ] && PIPE_ARGS=("$@"); break ;;
	*) bad "unknown option '$1' (--help)" ;;
	esac
done
[[ $PIPES =~ ^[0-9]+$ ]] && [ "$PIPES" -ge 1 ] && [ "$PIPES" -le 16 ] ||
	bad "--pipes: 1..16, not '$PIPES'"
[[ $GAP =~ ^[0-9]+(\.[0-9]+)?$ ]] || bad "--gap: seconds, not '$GAP'"
[[ $FLOW_WIN =~ ^[0-9]+(\.[0-9]+)?$ ]] && [ "$FLOW_WIN" != 0 ] ||
	bad "--flow-win: seconds > 0, not '$FLOW_WIN'"
case $CC in on | off) ;; *) bad "--cc: on or off, not '$CC'" ;; esac
[ "$(id -u)" = 0 ] || { echo "compete.sh: needs root (ip netns)" >&2; exit 2; }

. "$here/../../hw/x86/rig.sh"
: "${SDR_PIPE:=$SDR_BUILD/host/pipe/sdr-pipe}"
[ -x "$SDR_PIPE" ] || bad "no sdr-pipe at $SDR_PIPE (SDR_BUILD)"
[ -x "$SDR_DPU" ] || bad "no sdr-dpu at $SDR_DPU (SDR_BUILD)"
has() { local o; for o in "${PIPE_ARGS[@]}"; do [ "$o" = "$1" ] && return 0; done; return 1; }
has --timeout || PIPE_ARGS+=(--timeout 60)
mkdir -p "$OUT" || exit 1
OUT=$(cd "$OUT" && pwd)
rm -f "$OUT"/p*-[ab].out "$OUT"/p*-[ab].err "$OUT/samples.jsonl" "$OUT/starts"

rig_session
rig_netns_up || { echo "compete.sh: cannot create network namespaces" >&2; exit 1; }
RIG_NETNS=1
prefix=()
for side in a b; do
	seed=$([ $side = a ] && echo 101 || echo 202)
	rig_ns_dpu $side "$RIG_TMP/$side.sock" "$OUT/dpu-$side.log" --port-rate "$PORT_RATE" \
		--cc "$CC" --link "$LINK,seed=$seed" "${DPU_ARGS[@]}" || exit 1
	RIG_PIDS+=("$RIG_PID")
	prefix+=("$RIG_PREFIX")
done
/usr/bin/python3 "$here/compete.py" sample --tel "${prefix[0]}" --tel "${prefix[1]}" \
	--out "$OUT/samples.jsonl" &
spid=$!

pids=()
for k in $(seq 0 $((PIPES - 1))); do
	[ "$k" -gt 0 ] && sleep "$GAP"
	port=$((18700 + k)) # (the namespace is new: nothing else listens there)
	echo "$k $(date +%s.%N)" >>"$OUT/starts"
	ip netns exec "$NS_A" "$SDR_PIPE" "${PIPE_ARGS[@]}" --seed $((k + 1)) --dc 0 \
		--dpu "$RIG_TMP/a.sock" --server "$KIP_A" --port "$port" --json --verbose \
		>"$OUT/p$k-a.out" 2>"$OUT/p$k-a.err" &
	pids+=($!)
	ip netns exec "$NS_B" "$SDR_PIPE" "${PIPE_ARGS[@]}" --seed $((k + 1)) --dc 1 \
		--dpu "$RIG_TMP/b.sock" --connect "$KIP_A:$port" --quiet --verbose \
		>"$OUT/p$k-b.out" 2>"$OUT/p$k-b.err" &
	pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
sleep 0.5 # the last counters
kill "$spid" 2>/dev/null
wait "$spid" || { echo "compete.sh: the telemetry sampler failed" >&2; rc=1; }
[ $rc = 0 ] || for k in $(seq 0 $((PIPES - 1))); do
	grep -q '"mode":"run"' "$OUT/p$k-a.out" ||
		{ echo "pipeline $k failed:"; tail -n 5 "$OUT/p$k-a.err" "$OUT/p$k-b.err"; } >&2
done
/usr/bin/python3 "$here/compete.py" report --dir "$OUT" --pipes "$PIPES" --link "$LINK" \
	--flow-win "$FLOW_WIN" --json "$OUT/report.json" --png "$OUT/rates.png" || rc=1
echo "compete.sh: $OUT/report.json, $OUT/rates.png"
exit $rc
