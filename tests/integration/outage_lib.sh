# Helpers of the fault tests link_outage.sh and peer_closed.sh (sourced
# after lib.sh and sr_lib.sh): concurrent sdr-send/sdr-recv streams over the
# rig's veth pair, and how long after an event each stream's next completion
# came. Not a test of its own.
# shellcheck shell=bash

OL_SEND_PIDS=() OL_RECV_PIDS=() OL_SEND_LOGS=() OL_RECV_LOGS=() OL_NAMES=()
: "${PY:=/usr/bin/python3}"

# ol_stream NAME COUNT SIZES [sdr-send args]: a stream A -> B (TCP
# bootstrap; sdr-recv verifies the pattern), in the background; the tools'
# own timeout (60 s) is far beyond any outage here.
ol_stream() {
	local name=$1 count=$2 sizes=$3 port=$((20000 + RANDOM % 20000))
	shift 3
	local slog=$SDR_TMP/$name-send.log rlog=$SDR_TMP/$name-recv.log
	ip netns exec "$NS_B" "$SDR_RECV" --dpu "$B_SOCK" --server --bind $KIP_B --port $port \
		--timeout 60 >"$rlog" 2>&1 &
	OL_RECV_PIDS+=($!)
	ip netns exec "$NS_A" "$SDR_SEND" --dpu "$A_SOCK" --connect $KIP_B:$port --sizes "$sizes" \
		--count "$count" --seed 23 --timeout 60 "$@" >"$slog" 2>&1 &
	OL_SEND_PIDS+=($!)
	OL_SEND_LOGS+=("$slog")
	OL_RECV_LOGS+=("$rlog")
	OL_NAMES+=("$name")
}

# ol_flowing N: until every stream's sender completed N messages (20 s)
ol_flowing() {
	local n=$1 log
	for _ in $(seq 200); do
		local all=1
		for log in "${OL_SEND_LOGS[@]}"; do
			[ "$(grep -c '^msg .* sent' "$log")" -ge "$n" ] || all=0
		done
		[ $all = 1 ] && return 0
		sleep 0.1
	done
	for log in "${OL_SEND_LOGS[@]}"; do tail -5 "$log"; done
	sdr_fail "the streams did not get going"
}

# ol_after REGEX TIMEOUT_S CMD...: run CMD, then print for every stream the
# ms from CMD's end until its sender's log got a new line matching REGEX
# (-1: none within TIMEOUT_S), one "NAME MS" line each.
ol_after() {
	local re=$1 to=$2
	shift 2
	$PY - "$re" "$to" "${#OL_SEND_LOGS[@]}" "${OL_NAMES[@]}" "${OL_SEND_LOGS[@]}" -- "$@" <<'PYEOF'
import re, subprocess, sys, time
rx, to, n = re.compile(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
names, logs = sys.argv[4:4 + n], sys.argv[4 + n:4 + 2 * n]
cmd = sys.argv[4 + 2 * n + 1:]
def hits(p):
    with open(p, errors="replace") as f:
        return sum(1 for l in f if rx.search(l))
base = [hits(p) for p in logs]
subprocess.run(cmd, check=True)
t0 = time.monotonic()
got = [None] * n
while time.monotonic() - t0 < to and None in got:
    for i, p in enumerate(logs):
        if got[i] is None and hits(p) > base[i]:
            got[i] = (time.monotonic() - t0) * 1e3
    time.sleep(0.01)
for i in range(n):
    print("%s %d" % (names[i], -1 if got[i] is None else round(got[i])))
PYEOF
}

# ol_wait: wait for every stream; 0 when every tool exited 0
ol_wait() {
	local rc=0 p
	for p in "${OL_SEND_PIDS[@]}" "${OL_RECV_PIDS[@]}"; do
		wait "$p" || rc=1
	done
	return $rc
}

# ol_reset: forget the streams (after ol_wait)
ol_reset() {
	OL_SEND_PIDS=() OL_RECV_PIDS=() OL_SEND_LOGS=() OL_RECV_LOGS=() OL_NAMES=()
}
