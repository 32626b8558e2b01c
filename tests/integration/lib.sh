# Shared helpers of the integration tests (sourced). Binaries come from the
# environment (meson sets them) or from ./build.
# shellcheck shell=bash
set -u
: "${SDR_BUILD:=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/build}"
: "${SDR_DPU:=$SDR_BUILD/firmware/sdr-dpu}"
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

# EAL arguments that work without hugepages; $1 = unique prefix, $2 = MB
sdr_eal() { echo "--no-huge --no-shconf --no-pci -m ${2:-512} --file-prefix=$1 --log-level=lib.eal:warning --log-level=pmd.net.ring:warning"; }

# Wait until a unix socket exists (daemon ready) or the pid died.
sdr_wait_sock() {
	local sock=$1 pid=$2
	for _ in $(seq 200); do
		[ -S "$sock" ] && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# Stop a daemon cleanly (SIGINT) so that it writes its stats JSON.
sdr_stop() {
	local pid=$1
	kill -INT "$pid" 2>/dev/null || return 0
	for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || return 0; sleep 0.1; done
	kill -KILL "$pid" 2>/dev/null
	return 1
}

# Start the two DPUs of one process over a net_ring pair.
# Sets DPU_PID, SOCK_A, SOCK_B, STATS (JSON written at exit), DPU_LOG.
sdr_start_ring_pair() {
	local tag=$1; shift
	SOCK_A=$SDR_TMP/a.sock SOCK_B=$SDR_TMP/b.sock STATS=$SDR_TMP/stats.json DPU_LOG=$SDR_TMP/dpu.log
	# shellcheck disable=SC2046
	"$SDR_DPU" $(sdr_eal "sdr-$tag-$$") -- --ring-pair --name "$SOCK_A" --ip 10.0.0.1 \
		--instance --name "$SOCK_B" --ip 10.0.0.2 --stats-json "$STATS" "$@" >"$DPU_LOG" 2>&1 &
	DPU_PID=$!
	SDR_PIDS+=("$DPU_PID")
	sdr_wait_sock "$SOCK_A" "$DPU_PID" && sdr_wait_sock "$SOCK_B" "$DPU_PID" ||
		{ cat "$DPU_LOG"; sdr_fail "daemon did not start"; }
}

# Read a counter from the stats JSON: sdr_json_drop NAME
sdr_json_drop() {
	/usr/bin/python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["drops"][sys.argv[2]])' "$STATS" "$1"
}
# Sum a per-QP stat over all instances: sdr_json_qp_sum NAME
sdr_json_qp_sum() {
	/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(sum(i["qp_totals"][sys.argv[2]] for i in d["instances"]))' "$STATS" "$1"
}
sdr_free_port() { /usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
