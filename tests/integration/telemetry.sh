#!/usr/bin/env bash
# Counters are readable with DPDK's own dpdk-telemetry.py while traffic flows.
. "$(dirname "$0")/lib.sh"
TEL=$(command -v dpdk-telemetry.py) || sdr_skip "dpdk-telemetry.py not installed (Debian package dpdk)"
sdr_start_ring_pair tel
port=$(rig_free_port)
"$SDR_RECV" --dpu "$SOCK_B" --server --bind 127.0.0.1 --port "$port" --timeout 30 --quiet \
	>"$SDR_TMP/r.log" 2>&1 &
rpid=$!
sleep 0.3
"$SDR_SEND" --dpu "$SOCK_A" --connect "127.0.0.1:$port" --sizes 4K,1M --count 3 --quiet \
	>"$SDR_TMP/s.log" 2>&1 || sdr_fail "transfer failed"
wait $rpid || sdr_fail "receiver failed"
prefix="sdr-tel-$$"
out=$(printf '/sdr/stats\n/sdr/qps,1\n/sdr/link,0\n' | timeout 20 /usr/bin/python3 "$TEL" -f "$prefix" 2>&1)
echo "$out" | head -c 400; echo
rig_stop "$DPU_PID"
echo "$out" | /usr/bin/python3 -c '
import json, sys
objs = [json.loads(l) for l in sys.stdin if l.startswith("{")]
st = next(o["/sdr/stats"] for o in objs if "/sdr/stats" in o)
assert "bad_icrc" in st and "sqe_bad" in st, "drop counters missing"
assert st["inst1_rx_pkts"] > 6 * 8, "instance b received %d packets" % st["inst1_rx_pkts"]
assert st["inst0_tx_pkts"] == st["inst1_rx_pkts"], "ring pair: a tx %d != b rx %d" % (st["inst0_tx_pkts"], st["inst1_rx_pkts"])
print("telemetry: %d counters, b received %d packets" % (len(st), st["inst1_rx_pkts"]))
' || sdr_fail "telemetry output not as expected"
