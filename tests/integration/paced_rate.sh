#!/usr/bin/env bash
# Pacing as a property (not a benchmark): a QP created with a rate never
# sends faster than that rate over a whole transfer (10 % slack for the
# bucket depth), while the same transfer unpaced on the same rig is not
# held back (it exceeds the paced rate, so this test can fail).
. "$(dirname "$0")/lib.sh"
sdr_start_ring_pair paced
RATE_MBPS=200
run() { # extra sender args...; prints "bytes seconds"
	local port log=$SDR_TMP/s$$.$RANDOM
	port=$(rig_free_port)
	"$SDR_RECV" --dpu "$SOCK_B" --server --bind 127.0.0.1 --port "$port" --timeout 30 --quiet \
		>"$log.r" 2>&1 &
	local rp=$!
	sleep 0.3
	"$SDR_SEND" --dpu "$SOCK_A" --connect "127.0.0.1:$port" --sizes 1M --count 8 --quiet "$@" \
		>"$log" 2>&1 || { cat "$log" "$log.r"; sdr_fail "transfer failed: $*"; }
	wait $rp || sdr_fail "receiver failed"
	sed -n 's/^sent: 8 ok, 0 failed, \([0-9]*\) bytes in \([0-9.]*\) s.*/\1 \2/p' "$log"
}
read -r pb ps < <(run --rate ${RATE_MBPS}m)
read -r ub us < <(run)
[ -n "$pb" ] && [ -n "$ub" ] || sdr_fail "could not read the sender's summary"
/usr/bin/python3 - "$pb" "$ps" "$ub" "$us" "$RATE_MBPS" <<'PY' || sdr_fail "pacing property violated"
import sys
pb, ps, ub, us, rate = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
paced = pb * 8 / ps / 1e6
unpaced = ub * 8 / us / 1e6
print(f"paced at {rate:.0f} Mbit/s: {paced:.1f} Mbit/s of payload; unpaced: {unpaced:.1f} Mbit/s")
assert paced <= rate * 1.10, f"paced transfer ran at {paced:.1f} Mbit/s > {rate:.0f} + 10 %"
assert unpaced > rate * 1.10, f"unpaced transfer only {unpaced:.1f} Mbit/s: the check above proves nothing"
PY
rig_stop "$DPU_PID"
