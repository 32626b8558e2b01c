#!/usr/bin/env bash
# Multi-DC measurements of docs/pipeline.md "Measured on the transport":
# sdr-pipe over the multi-DC rig (hw/x86/mdc.sh: one namespace and sdr-dpu per
# DC, a router, per-peer links from one network description), each run next
# to the DES of the same description and policy (DC 0's JSON line carries
# both, iteration by iteration). Two sets:
#   policy  no loss: --policy equal vs cba (and whatever POLICIES lists) per
#           schedule, runs interleaved (A B A B ...) REPS times;
#   loss    every link at LOSS: SR, EC and AUTO (LOSS_RELS) per schedule,
#           daemons with 4 KiB chunks (--chunk-pkts 1), the DES with the
#           completion-time model at the same chunk;
#   shift   a shared bottleneck with one communication-bound flow and one
#           that can spare rate (SHIFT_NET: the same chain at half the
#           rates, DC 2 -> DC 3 as fast as the others), activations SHIFT_ACT
#           and gradients SHIFT_GRAD; SHIFT_POLICIES per schedule
#           (SHIFT_SCHEDS), interleaved, REPS times.
# Writes OUT/results.jsonl (one line per run: DC 0's JSON plus "set" and
# "rep"), then host/pipe/mdc_report.py OUT: OUT/table.md and PNG charts.
# Needs root.
#   SDR_BUILD=$PWD/build host/pipe/measure_mdc.sh [OUT]      (OUT: ./mdc-results)
# Environment: DCS (4), PLACE (0,0,1,1,2,2,3,3), NET (a description file;
# default: the four-DC network written below), SETS ("policy loss shift"), SCHEDS
# ("1f1b geopipe greedy"), POLICIES ("equal cba"), REPS (3), ITERS (8: the
# first is excluded from the medians), MICRO (16), TF (4ms; tb = 2 tf),
# SIZE (256K: activations and gradients), REL (sr: the policy set's
# reliability), LOSS (1e-2), LOSS_RELS ("sr ec:rs:32:8 auto"), LOSS_SCHEDS
# ("geopipe 1f1b"), LOSS_POLICY (equal), PORT_RATE (2g: every daemon's
# --port-rate and the DES's rate of an unpaced QP), SHIFT_NET (a file;
# default: written below), SHIFT_ACT (512K), SHIFT_GRAD (128K), SHIFT_SCHEDS
# ("geopipe greedy 1f1b"), SHIFT_POLICIES ("equal cba cba-shift"), EXTRA (more
# sdr-pipe options).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../hw/x86/mdc.sh"
[ "$(id -u)" = 0 ] || { echo "measure_mdc.sh: needs root (ip netns)" >&2; exit 2; }
OUT=${1:-mdc-results}
mkdir -p "$OUT" || exit 1
OUT=$(cd "$OUT" && pwd)
DCS=${DCS:-4} PLACE=${PLACE:-0,0,1,1,2,2,3,3} SETS=${SETS:-"policy loss shift"}
SCHEDS=${SCHEDS:-"1f1b geopipe greedy"} POLICIES=${POLICIES:-"equal cba"} REPS=${REPS:-3}
ITERS=${ITERS:-8} MICRO=${MICRO:-16} TF=${TF:-4ms} SIZE=${SIZE:-256K} REL=${REL:-sr}
LOSS=${LOSS:-1e-2} LOSS_RELS=${LOSS_RELS:-"sr ec:rs:32:8 auto"} LOSS_SCHEDS=${LOSS_SCHEDS:-"geopipe 1f1b"}
LOSS_POLICY=${LOSS_POLICY:-equal} PORT_RATE=${PORT_RATE:-2g}
SHIFT_ACT=${SHIFT_ACT:-512K} SHIFT_GRAD=${SHIFT_GRAD:-128K} SHIFT_SCHEDS=${SHIFT_SCHEDS:-"geopipe greedy 1f1b"}
SHIFT_POLICIES=${SHIFT_POLICIES:-"equal cba cba-shift"}

MDC_TAG=ms$$
MDC_DIR=$(mktemp -d /tmp/sdr-mdc-measure.XXXXXX)
trap 'mdc_down; rm -rf "$MDC_DIR"' EXIT
if [ -z "${NET:-}" ]; then
	NET=$OUT/mdc4.net
	cat >"$NET" <<'EOF'
# Four DCs in a chain 0 - 1 - 2 - 3 (placement 0,0,1,1,2,2,3,3): 5, 12.5 and
# 25 ms one way, 0.5 to 2 Gbit/s, DC 1's activations and DC 3's gradients
# share one bottleneck into DC 2.
link l01   to=1 from=0   delay=5ms    rate=1gbit   buffer=4MB
link l10   to=0 from=1   delay=5ms    rate=1gbit   buffer=4MB
link into2 to=2 from=1,3 delay=12.5ms rate=1gbit   buffer=4MB
link l21   to=1 from=2   delay=12.5ms rate=2gbit   buffer=4MB
link l23   to=3 from=2   delay=25ms   rate=500mbit buffer=4MB
EOF
fi
if [ -z "${SHIFT_NET:-}" ]; then
	SHIFT_NET=$OUT/mdc4-shift.net
	cat >"$SHIFT_NET" <<'EOF'
# The chain of mdc4.net at half the rates, DC 2 -> DC 3 as fast as the
# others: with 512 KiB activations and 128 KiB gradients, into2 carries DC
# 1's activations (communication-bound at half the link) and DC 3's
# gradients (which can spare rate), and no other link limits the pipeline
# as much.
link l01   to=1 from=0   delay=5ms    rate=500mbit buffer=4MB
link l10   to=0 from=1   delay=5ms    rate=500mbit buffer=4MB
link into2 to=2 from=1,3 delay=12.5ms rate=500mbit buffer=4MB
link l21   to=1 from=2   delay=12.5ms rate=1gbit   buffer=4MB
link l23   to=3 from=2   delay=25ms   rate=500mbit buffer=4MB
EOF
fi
RESULTS=$OUT/results.jsonl
: >"$RESULTS"
COMMON="--place $PLACE --micro $MICRO --tf $TF --act $SIZE --grad $SIZE --rate $PORT_RATE --iters $ITERS --timeout 30 ${EXTRA:-}"
n=0

# run SET REP NETFILE ARGS...: one run on every DC; DC 0's JSON line, tagged,
# appended to RESULTS
run() {
	local set=$1 rep=$2 net=$3 line
	shift 3
	n=$((n + 1))
	# shellcheck disable=SC2086
	if ! mdc_pipe "r$n" $COMMON --net "$net" "$@" --json 2>"$OUT/run$n.err"; then
		echo "measure_mdc.sh: run $n ($set: $*) failed, see $OUT/run$n.err" >&2
		return 1
	fi
	line=$(grep '^{' "$MDC_DIR/r$n-0.log") || return 1
	echo "${line/#\{/{\"set\":\"$set\",\"rep\":$rep,}" >>"$RESULTS"
	echo "$line" | /usr/bin/python3 -c 'import json,sys; d=json.loads(sys.stdin.read()); print("  %-8s %-6s %-10s measured %8.1f ms  DES %8.1f ms  bubble %.3f / %.3f" % (d["sched"], d["policy"], d["rel"], d["meas_iter_ms"], d["pred_iter_ms"], d["meas_bubble"], d["pred_bubble"]))' >&2
}

for set in $SETS; do
	case $set in
	policy)
		MDC_NET=$NET MDC_DPU_ARGS="--port-rate $PORT_RATE"
		mdc_up "$DCS" || exit 1
		echo "set policy: $DCS DCs, $(grep -c '^link' "$NET") links, policies $POLICIES" >&2
		for rep in $(seq "$REPS"); do
			for s in $SCHEDS; do
				for pol in $POLICIES; do
					run policy "$rep" "$NET" --sched "$s" --rel "$REL" --policy "$pol"
				done
			done
		done
		mdc_down
		;;
	loss)
		lnet=$OUT/mdc4-loss.net
		sed "s/^\(link .*\)\$/\1 loss=$LOSS/" "$NET" >"$lnet"
		MDC_NET=$lnet MDC_DPU_ARGS="--port-rate $PORT_RATE --chunk-pkts 1"
		mdc_up "$DCS" || exit 1
		echo "set loss: every link at loss $LOSS, $LOSS_RELS" >&2
		for rep in $(seq "$REPS"); do
			for s in $LOSS_SCHEDS; do
				for rel in $LOSS_RELS; do
					run loss "$rep" "$lnet" --sched "$s" --rel "$rel" --policy "$LOSS_POLICY" \
						--chunk 4K
				done
			done
		done
		mdc_down
		;;
	shift)
		MDC_NET=$SHIFT_NET MDC_DPU_ARGS="--port-rate $PORT_RATE"
		mdc_up "$DCS" || exit 1
		echo "set shift: act $SHIFT_ACT, grad $SHIFT_GRAD, policies $SHIFT_POLICIES" >&2
		for rep in $(seq "$REPS"); do
			for s in $SHIFT_SCHEDS; do
				for pol in $SHIFT_POLICIES; do
					run shift "$rep" "$SHIFT_NET" --sched "$s" --rel "$REL" --policy "$pol" \
						--act "$SHIFT_ACT" --grad "$SHIFT_GRAD"
				done
			done
		done
		mdc_down
		;;
	*) echo "measure_mdc.sh: unknown set '$set' (policy, loss, shift)" >&2; exit 2 ;;
	esac
done
/usr/bin/python3 "$here/mdc_report.py" "$OUT"
