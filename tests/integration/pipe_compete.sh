#!/usr/bin/env bash
# host/pipe/compete.sh: two sdr-pipe pipelines competing on the veth rig
# with the congestion controller on (docs/pipeline.md "Competing
# pipelines"). A small pipeline (2 stages, 4 micro-batches of 512 KiB
# activations and 384 KiB gradients, 12 iterations), 1 s apart, on a 100 Mbit/s, 25 ms RTT link that marks
# from 100 KB. Checks what the tool reports, not how fair the run was (that
# is timing, docs/congestion.md):
#  - both pipelines passed (every payload verified) and the tool exits 0;
#  - each pipeline's QPs were found by their numbers in the daemons'
#    telemetry: the bytes its QPs received are its payload (iterations x
#    micro-batches x activation bytes on b, gradient bytes on a), within
#    what the last sample misses and retransmissions add;
#  - the controller was on (each pipeline's receiving QP counted its packets
#    and a CE fraction), the link's frames counted, Jain's index in (0, 1];
#  - the chart is a PNG; bad options are refused with status 2.
# Skipped (77) without root.
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" = 0 ] || sdr_skip "needs root (network namespaces)"
COMPETE=$(cd "$(dirname "$0")/../.." && pwd)/host/pipe/compete.sh
[ -x "$SDR_BUILD/host/pipe/sdr-pipe" ] || sdr_skip "no sdr-pipe"
/usr/bin/python3 -c 'import matplotlib' 2>/dev/null || sdr_skip "no python3-matplotlib"

"$COMPETE" --pipes 0 >/dev/null 2>&1
[ $? = 2 ] || sdr_fail "--pipes 0 was not refused with status 2"
"$COMPETE" --cc maybe >/dev/null 2>&1
[ $? = 2 ] || sdr_fail "--cc maybe was not refused with status 2"
"$COMPETE" --help | grep -q -- "--pipes N" || sdr_fail "--help does not list --pipes"

out=$SDR_TMP/compete
SDR_BUILD=$SDR_BUILD "$COMPETE" --pipes 2 --gap 1 --out "$out" -- --stages 2 --micro 4 \
	--tf 2ms --tb 4ms --act 512K --grad 384K --sched 1f1b --comm nonblocking --rel sr \
	--iters 12 >"$SDR_TMP/compete.log" 2>&1
rc=$?
cat "$SDR_TMP/compete.log"
[ $rc = 0 ] || { tail -n 20 "$out"/dpu-*.log; sdr_fail "compete.sh exited $rc"; }
head -c 8 "$out/rates.png" | od -An -c | grep -q "P   N   G" || sdr_fail "rates.png is not a PNG"
/usr/bin/python3 - "$out/report.json" <<'EOF' || sdr_fail "report"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["mode"] == "pipe-compete" and r["pipes"] == 2, r["mode"]
for p in r["per_pipe"]:
    k = p["pipe"]
    assert p["ok"] and p["payloads_verified"], "pipe %d did not pass" % k
    assert len(p["qps_a"]) == 1 and len(p["qps_b"]) == 1, "pipe %d: QPs %s %s" % (
        k, p["qps_a"], p["qps_b"])
    for d, want in (("ab", 12 * 4 * 512 * 1024), ("ba", 12 * 4 * 384 * 1024)):
        got = p["rx_bytes_" + d]
        assert 0.9 * want <= got <= 1.5 * want, "pipe %d %s: received %d of %d" % (k, d, got, want)
    assert p["ce_frac_ab"] is not None and 0 <= p["ce_frac_ab"] <= 1, "pipe %d: no CE count" % k
    assert len(p["iter_end_s"]) == 12, "pipe %d: iteration ends %s" % (k, p["iter_end_s"])
assert len(set(p["qps_a"][0] for p in r["per_pipe"])) == 2, "the pipelines share a QP"
for d in ("ab", "ba"):
    assert r["links"][d]["frames"] > 0, d
j = r["jain_goodput"]
assert j is None or 0 < j <= 1.0 + 1e-9, j
assert r["windows"] and all(len(w["rates_bps"]) == 2 for w in r["windows"])
# the second pipeline starts while the first has most of its run ahead
assert r["steady_windows"] >= 1, "the pipelines did not overlap: %s" % r["steady_s"]
print("report ok: pipes %s, Jain of the goodputs %s" % (
    [(p["pipe"], round(p["rx_bytes_ab"] / 1e6, 2)) for p in r["per_pipe"]], j))
EOF
echo "pipe_compete: two pipelines, their QPs found and counted, report and chart written"
