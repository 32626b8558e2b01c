# Shared helpers of the integration tests (sourced). Binaries come from the
# environment (meson sets them) or from ./build. The rig itself (EAL
# arguments, namespaces and veth, the two-daemon recipes, waiting for and
# stopping daemons) is hw/x86/rig.sh, sourced here: rig_* functions.
# shellcheck shell=bash
set -u
: "${SDR_BUILD:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build}"
. "$(dirname "${BASH_SOURCE[0]}")/../../hw/x86/rig.sh"
: "${SDR_SEND:=$SDR_BUILD/host/tools/sdr-send}"
: "${SDR_RECV:=$SDR_BUILD/host/tools/sdr-recv}"
SDR_TMP=$(mktemp -d /tmp/sdr-it.XXXXXX)
SDR_PIDS=()
SDR_CLEANUPS=()

sdr_log() { printf '[%s] %s\n' "$(date +%T)" "$*"; }
sdr_fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }
sdr_skip() { printf 'SKIP: %s\n' "$*"; exit 77; }

sdr_cleanup() {
	local p
	for p in "${SDR_PIDS[@]}"; do kill -INT "$p" 2>/dev/null; done
	for p in "${SDR_PIDS[@]}"; do
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null
	done
	for p in "${SDR_CLEANUPS[@]}"; do eval "$p" 2>/dev/null; done
	if [ "${SDR_KEEP_TMP:-0}" = 1 ]; then echo "kept $SDR_TMP"; else rm -rf "$SDR_TMP"; fi
}
trap sdr_cleanup EXIT

# Start the two DPUs of one process over a net_ring pair (rig_ring_pair);
# extra arguments go to instance B (and the global options to both).
# Sets DPU_PID, SOCK_A, SOCK_B, STATS (JSON written at exit), DPU_LOG.
sdr_start_ring_pair() {
	local tag=$1; shift
	SOCK_A=$SDR_TMP/a.sock SOCK_B=$SDR_TMP/b.sock STATS=$SDR_TMP/stats.json DPU_LOG=$SDR_TMP/dpu.log
	rig_ring_pair "$tag" "$SOCK_A" "$SOCK_B" "$DPU_LOG" --instance --stats-json "$STATS" "$@" ||
		{ sdr_fail "daemon did not start"; }
	DPU_PID=$RIG_PID
	SDR_PIDS+=("$DPU_PID")
}

# One transfer between the ring pair's instances: sdr-recv as a server on
# SOCK_B, sdr-send from SOCK_A, both with --timeout 30; fails the test if
# either fails. sdr_xfer TAG RECV_ARGS... -- SEND_ARGS...; their output in
# $SDR_TMP/recvTAG.log and sendTAG.log.
sdr_xfer() {
	local tag=$1 port rpid
	shift
	local -a ra=() sa=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do ra+=("$1"); shift; done
	[ $# -gt 0 ] && shift
	sa=("$@")
	port=$(rig_free_port)
	"$SDR_RECV" --dpu "$SOCK_B" --server --bind 127.0.0.1 --port "$port" --timeout 30 "${ra[@]}" \
		>"$SDR_TMP/recv$tag.log" 2>&1 &
	rpid=$!
	sleep 0.3
	"$SDR_SEND" --dpu "$SOCK_A" --connect "127.0.0.1:$port" --timeout 30 "${sa[@]}" \
		>"$SDR_TMP/send$tag.log" 2>&1 || { cat "$SDR_TMP/send$tag.log"; sdr_fail "sdr-send failed"; }
	wait $rpid || { cat "$SDR_TMP/recv$tag.log" "$DPU_LOG"; sdr_fail "sdr-recv failed"; }
}

# Read a counter from the stats JSON: sdr_json_drop NAME
sdr_json_drop() {
	/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["drops"][sys.argv[2]])' "$STATS" "$1"
}
# Sum a per-QP stat over all instances: sdr_json_qp_sum NAME
sdr_json_qp_sum() {
	/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sum(i["qp_totals"][sys.argv[2]] for i in d["instances"]))' "$STATS" "$1"
}
