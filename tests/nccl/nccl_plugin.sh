#!/usr/bin/env bash
# libnccl-net-sdr.so driven as NCCL's proxy drives it (tests/nccl/nccl_harness.c):
# two ranks over a ring pair of sdr-dpu with 1e-3 loss on both directions,
# reliability AUTO. API v10 (what NCCL 2.2x loads; two send + receive comm
# pairs per rank on one shared libsdr context), then v8 and v9: every
# message of 0 B - 8 MiB bit-exact with the sent size reported, within
# NCCL's 32 requests per comm; then the errors NCCL must see: a send larger
# than the receive, a peer that exits, the daemon killed under traffic, no
# daemon at init. Under ASan the harness checks for leaks at each exit.
. "$(dirname "$0")/../integration/lib.sh"
H=${SDR_NCCL_HARNESS:-$SDR_BUILD/tests/nccl/nccl_harness}
P=${SDR_NCCL_PLUGIN:-$SDR_BUILD/host/nccl/libnccl-net-sdr.so}
[ -x "$H" ] && [ -f "$P" ] || sdr_fail "harness $H or plugin $P not built"
export SDR_REL=auto
[ "${SDR_SANITIZE:-none}" != none ] && export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
link=loss=1e-3
# AUTO's model needs a rate: both instances paced (as tests/integration/auto_ring.sh)
start() { # TAG SEED
	SOCK_A=$SDR_TMP/$1-a.sock SOCK_B=$SDR_TMP/$1-b.sock STATS=$SDR_TMP/$1.json
	DPU_LOG=$SDR_TMP/$1-dpu.log
	rig_ring_pair "nccl$1" "$SOCK_A" "$SOCK_B" "$DPU_LOG" --link "$link,seed=$2" \
		--port-rate 2g --global-timeout-ms 3000 --instance --link "$link,seed=$(($2 + 1))" \
		--port-rate 2g --global-timeout-ms 3000 --stats-json "$STATS" ||
		sdr_fail "daemon did not start"
	DPU_PID=$RIG_PID
	SDR_PIDS+=("$DPU_PID")
}
start ok 11
run() { # NAME ARGS...: the harness, its output kept
	local name=$1; shift
	"$H" --plugin "$P" --dpu0 "$SOCK_A" --dpu1 "$SOCK_B" --timeout 60 "$@" \
		>"$SDR_TMP/$name.log" 2>&1
	local rc=$?
	grep -E '^nccl_harness' "$SDR_TMP/$name.log"
	return $rc
}
for api in 10 8 9; do
	# v10 (what NCCL 2.2x loads): 2 comm pairs per rank sharing the device's context
	args=(--rounds 2); [ $api = 10 ] && args=(--rounds 3 --pairs 2)
	run "ok$api" --api $api "${args[@]}" ||
		{ tail -40 "$SDR_TMP/ok$api.log"; tail -20 "$DPU_LOG"; sdr_fail "traffic, API v$api"; }
	grep -q 'NET/sdr : send comm on sdr0 closed: [1-9][0-9]* messages' "$SDR_TMP/ok$api.log" ||
		sdr_fail "API v$api: no close statistics in the plugin's log"
done
rig_stop "$DPU_PID" || sdr_fail "daemon did not stop cleanly"
lost=$(/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(sum(i["link"]["dropped_loss"] for i in d["instances"]))' "$STATS")
echo "the emulated link dropped $lost frames during the traffic runs"
[ "${lost:-0}" -gt 0 ] || sdr_fail "the lossy link lost nothing: the runs proved nothing"
start err 21
run mismatch --mode mismatch --timeout 30 ||
	{ cat "$SDR_TMP/mismatch.log"; sdr_fail "size mismatch did not surface as an error"; }
grep -q 'size mismatch' "$SDR_TMP/mismatch.log" || sdr_fail "no 'size mismatch' in the log"
run peergone --mode peer-gone --timeout 30 ||
	{ cat "$SDR_TMP/peergone.log"; sdr_fail "a peer that exited did not surface"; }
grep -q 'peer closed its connection\|no progress\|failed' "$SDR_TMP/peergone.log" ||
	sdr_fail "peer gone: no reason in the log"
# the daemon killed under traffic and not started again: once libsdr's
# re-attach window is over (2 s here, 30 s by default), both ranks get
# ncclSystemError from test/isend (a daemon back within the window is a stall)
export SDR_REATTACH_MS=2000
ready=$SDR_TMP/ready
run deaddaemon --mode dead-daemon --ready "$ready" --timeout 60 &
hp=$!
for _ in $(seq 600); do
	[ -e "$ready.0" ] && [ -e "$ready.1" ] && break
	kill -0 $hp 2>/dev/null || break
	sleep 0.1
done
[ -e "$ready.0" ] && [ -e "$ready.1" ] ||
	{ wait $hp; cat "$SDR_TMP/deaddaemon.log"; sdr_fail "no traffic before the kill"; }
kill -KILL "$DPU_PID"
wait "$DPU_PID" 2>/dev/null
wait $hp || { cat "$SDR_TMP/deaddaemon.log"; sdr_fail "a dead daemon did not surface"; }
grep -q 'daemon .* is gone' "$SDR_TMP/deaddaemon.log" ||
	sdr_fail "dead daemon: no reason in the log"
# no daemon at all: init fails (NCCL then falls back to its own transports)
SOCK_A=$SDR_TMP/none-a.sock SOCK_B=$SDR_TMP/none-b.sock run nodaemon --mode no-daemon ||
	{ cat "$SDR_TMP/nodaemon.log"; sdr_fail "init without a daemon"; }
echo "nccl plugin: v10/v8/v9 traffic bit-exact under 1e-3 loss; mismatch, peer gone," \
	"dead daemon and no daemon surface"
