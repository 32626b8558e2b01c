#!/usr/bin/env bash
# Counters are readable with DPDK's own dpdk-telemetry.py while traffic flows:
# /sdr/stats, /sdr/qps, /sdr/link, the workers' loop and pacer counters
# (/sdr/workers: every data frame went through the pacer) and a paced QP's
# peak rate from its recorded departures (/sdr/pace_peak, --pace-trace): in
# a window that begins with a frame sent after the QP was idle, never more
# than its rate allows plus one frame (a property of the pacer's schedule,
# not of timing: a token bucket would send its depth there).
. "$(dirname "$0")/lib.sh"
TEL=$(command -v dpdk-telemetry.py) || sdr_skip "dpdk-telemetry.py not installed (Debian package dpdk)"
sdr_start_ring_pair tel --pace-trace 65536
RATE=200000000
port=$(rig_free_port)
"$SDR_RECV" --dpu "$SOCK_B" --server --bind 127.0.0.1 --port "$port" --timeout 30 --quiet \
	>"$SDR_TMP/r.log" 2>&1 &
rpid=$!
sleep 0.3
"$SDR_SEND" --dpu "$SOCK_A" --connect "127.0.0.1:$port" --sizes 4K,1M --count 3 --quiet \
	--rate $RATE >"$SDR_TMP/s.log" 2>&1 || sdr_fail "transfer failed"
wait $rpid || sdr_fail "receiver failed"
prefix="sdr-tel-$$"
# 10 frame times of a 4 KiB frame (4174 B) at the QP's rate
win_ns=$((10 * 4174 * 8 * 1000000000 / RATE))
out=$(printf '/sdr/stats\n/sdr/qps,1\n/sdr/link,0\n/sdr/workers\n/sdr/pace_peak,0,0,%s\n' "$win_ns" |
	timeout 20 /usr/bin/python3 "$TEL" -f "$prefix" 2>&1)
echo "$out" | head -c 400; echo
rig_stop "$DPU_PID"
# the data packets of that sdr-send run (its immediates decide which
# messages carry immediate-only packets)
first=$(/usr/bin/python3 "$(dirname "$0")/sr_check.py" --print-first-pass --sizes 4K,1M --count 3)
echo "$out" | /usr/bin/python3 -c '
import json, sys
rate, win_ns, first = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
objs = [json.loads(l) for l in sys.stdin if l.startswith("{")]
def get(k):
    return next(o[k] for o in objs if k in o)
st = get("/sdr/stats")
assert "bad_icrc" in st and "sqe_bad" in st, "drop counters missing"
assert st["inst1_rx_pkts"] > 6 * 8, "instance b received %d packets" % st["inst1_rx_pkts"]
assert st["inst0_tx_pkts"] == st["inst1_rx_pkts"], "ring pair: a tx %d != b rx %d" % (st["inst0_tx_pkts"], st["inst1_rx_pkts"])
print("telemetry: %d counters, b received %d packets" % (len(st), st["inst1_rx_pkts"]))
wk = get("/sdr/workers")
# the sender (instance a) sends only data frames, each through the pacer,
# and the QP-CLOSED of its QP at teardown (unpaced; docs/reliability.md)
assert wk["pace_frames"] == st["inst0_tx_pkts"] - 1 == first, (wk["pace_frames"], st["inst0_tx_pkts"], first)
assert wk["loops"] > 0 and wk["visits_touched"] > 0 and wk["pace_polls"] > 0, wk
assert wk["w0_loops"] == wk["loops"] and wk["workers"] == 1, wk
pk = get("/sdr/pace_peak")
assert pk["frames"] == wk["pace_frames"], pk
assert pk["idle_starts"] >= 1, pk
allowed = rate / 8 * win_ns / 1e9 + 4174
assert pk["peak_bytes_after_idle"] <= allowed, ("burst after idle", pk, allowed)
print("workers: %d loops, %d paced frames; pace_peak after idle %.3f x the rate (+1 frame allowed)"
      % (wk["loops"], wk["pace_frames"], pk["peak_bytes_after_idle"] / (rate / 8 * win_ns / 1e9)))
' "$RATE" "$win_ns" "$first" || sdr_fail "telemetry output not as expected"
