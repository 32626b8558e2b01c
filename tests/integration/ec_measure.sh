#!/usr/bin/env bash
# Erasure coding against Selective Repeat, side by side on the same pair of
# daemons (one run): message completion time (sender post -> completion,
# i.e. the receiver's FULL ACK) over veth + net_af_packet with the link
# emulator on both directions, 25 ms RTT, 1 Gbit/s bottleneck (daemons
# paced at 900 Mbit/s), Bernoulli loss (default 1e-2), 4 KiB chunks
# (--chunk-pkts 1; the SDR-RDMA paper's default chunk is 64 KiB), one
# message in flight.
# A benchmark, not a test (not in the meson suite); needs root.
#   usage: sudo tests/integration/ec_measure.sh [SIZE:COUNT ... ]
#   env:   EC_LOSS (1e-2), EC_CODE (rs:32:8), EC_CHUNK_PKTS (1)
# Prints a markdown table (docs/reliability.md, "Erasure coding").
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sr_lib.sh"
sr_netns_setup
runs=${*:-"256K:200 4M:40 32M:8"}
loss=${EC_LOSS:-1e-2}
code=${EC_CODE:-rs:32:8}
ppc=${EC_CHUNK_PKTS:-1}
out=$SDR_TMP/table.txt
sr_pair meas "$SR_LINK_BASE,loss=$loss" >&2
for r in $runs; do
	size=${r%:*} count=${r#*:}
	for rel in sr ec; do
		args=(--window 1 --json --chunk-pkts "$ppc" --rel "$rel")
		[ $rel = ec ] && args+=(--ec "$code")
		sr_transfer "m-$size-$rel" "$size" "$count" "${args[@]}" >&2 ||
			sdr_fail "$rel $size: transfer failed"
		grep '^{"latency"' "$SDR_TMP/m-$size-$rel-send.log" | grep -v '"size":"all"' |
			sed "s/^/$rel /" >>"$SDR_TMP/lat.txt"
	done
done
rig_stop "$PA"; rig_stop "$PB"
/usr/bin/python3 - "$SDR_TMP/lat.txt" "$loss" "$code" "$A_JSON" "$B_JSON" <<'PY'
import json, sys
lat, loss, code, aj, bj = sys.argv[1:6]
rows = {}
for line in open(lat):
    rel, js = line.split(" ", 1)
    d = json.loads(js)
    rows.setdefault(d["size"], {})[rel] = d
def sz(n):
    return "%d KiB" % (n >> 10) if n < 1 << 20 else "%d MiB" % (n >> 20)
print("| size | n | SR mean | SR p99 | EC %s mean | EC p99 | EC/SR mean | EC/SR p99 |" % code.upper())
print("|---|---|---|---|---|---|---|---|")
for s in sorted(rows):
    r = rows[s]
    if "sr" not in r or "ec" not in r:
        continue
    sr, ec = r["sr"], r["ec"]
    print("| %s | %d / %d | %.1f | %.1f | %.1f | %.1f | %.2f | %.2f |" % (
        sz(s), sr["n"], ec["n"], sr["mean_ms"], sr["p99_ms"], ec["mean_ms"], ec["p99_ms"],
        ec["mean_ms"] / sr["mean_ms"], ec["p99_ms"] / sr["p99_ms"]))
a = json.load(open(aj))["instances"][0]["qp_totals"]
b = json.load(open(bj))["instances"][0]["qp_totals"]
print()
print("(loss %s; sender totals over all runs: data pkts %d, retransmitted %d, parity pkts %d;"
      " receiver: chunks recovered %d, NACKs %d)" % (loss, a["tx_pkts"], a["sr_retx_pkts"],
      a["ec_par_pkts_tx"], b["ec_chunks_recovered"], b["ec_nacks_tx"]))
PY
