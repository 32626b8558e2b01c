#!/usr/bin/env bash
# Selective Repeat message completion time against the ideal (RTT + size /
# rate), over veth + net_af_packet with the link emulator on both
# directions: 25 ms RTT, 1 Gbit/s bottleneck (daemons paced at 900 Mbit/s),
# Bernoulli loss 0, 1e-3, 1e-2. One message in flight (--window 1), so the
# sender's post-to-completion time is the message completion time.
# A benchmark, not a test (not in the meson suite); needs root.
#   usage: sudo tests/integration/sr_measure.sh [SIZES [COUNT [LOSSES]]]
# Prints a markdown table (docs/reliability.md).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sr_lib.sh"
sr_netns_setup
sizes=${1:-64K,1M,16M}
count=${2:-20}
losses=${3:-"0 1e-3 1e-2"}
rtt_ms=25 rate_bps=1000000000
out=$SDR_TMP/table.txt
for l in $losses; do
	sr_pair "m$l" "$SR_LINK_BASE,loss=$l" >&2
	sr_transfer "m$l" "$sizes" "$count" --window 1 --json >&2 || sdr_fail "loss $l: transfer failed"
	rig_stop "$PA"; rig_stop "$PB"
	retx=$(/usr/bin/python3 -c 'import json,sys; t=json.load(open(sys.argv[1]))["instances"][0]["qp_totals"]; print(t["sr_retx_pkts"], t["tx_pkts"])' "$A_JSON")
	/usr/bin/python3 - "$SDR_TMP/m$l-send.log" "$l" "$rtt_ms" "$rate_bps" "$retx" >>"$out" <<'PY'
import json, sys
log, loss, rtt, rate, retx = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
r, tx = retx.split()
for line in open(log):
    if not line.startswith('{"latency"'):
        continue
    d = json.loads(line)
    if d["size"] == "all":
        continue
    ideal = rtt + d["size"] * 8 / rate * 1e3
    print("| %s | %s | %d | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f | %s/%s |" % (
        loss, d["size"] if d["size"] < 1 << 20 else "%d MiB" % (d["size"] >> 20), d["n"], ideal,
        d["mean_ms"], d["p50_ms"], d["p99_ms"], d["mean_ms"] / ideal, d["p99_ms"] / ideal, r, tx))
PY
done
echo "| loss | size | n | ideal ms | mean ms | p50 ms | p99 ms | mean/ideal | p99/ideal | retx/tx pkts (all sizes) |"
echo "|---|---|---|---|---|---|---|---|---|---|"
cat "$out"
