#!/bin/bash
# Many QPs and two workers through sdr-perf, with exact accounting (no
# timing thresholds):
#  - 1024 QP pairs created, connected and moving data: 3072 messages, three
#    on every pair (message n on pair n mod 1024), every one complete; the
#    daemon's own counters agree (messages sent and received, data frames
#    both ways) and every data frame went through the pacer;
#  - 64 pairs on 2 workers: two contexts per side, pair k on worker k mod 2
#    at both ends, so the ring pair's per-queue rings steer every packet to
#    its owner: no hand-off;
#  - on/off traffic (--gap-us) of paced QPs: in any window of 10 frame times
#    that begins after a QP was idle it sends at most its rate plus one
#    frame (the pacer's schedule, not timing); usage errors for --qps and
#    --gap-us.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/lib.sh" qpscale
log() { printf '[%s] %s\n' "$(date +%T)" "$*"; }

log "usage errors"
"$SDR_PERF" bw --qps 0 >/dev/null 2>&1; [ $? = 2 ] || fail "--qps 0 should exit 2"
"$SDR_PERF" bw --qps 1025 >/dev/null 2>&1; [ $? = 2 ] || fail "--qps 1025 should exit 2"
"$SDR_PERF" bw --gap-us -1 >/dev/null 2>&1; [ $? = 2 ] || fail "--gap-us -1 should exit 2"

log "1024 QP pairs, 4 KiB messages"
# --recv-timeout-ms 0: the ring pair loses nothing (the drop counters must
# stay 0), and a receiver that lags its sender by more than sdr-perf's 200 ms
# (ASan, a loaded machine) would otherwise be sent a RECV_COMPLETE for a
# receive that then completes on its own (sqe_no_target)
"$SDR_PERF" bw --qps 1024 --size 4K --iters 2048 --warmup 1024 --window 256 --timeout 60 \
	--recv-timeout-ms 0 --dpu-arg="--stats-json=$tmp/s1.json" --json-only >"$tmp/r1.json" 2>"$tmp/r1.err" ||
	{ cat "$tmp/r1.json" "$tmp/r1.err"; fail "sdr-perf --qps 1024"; }
"$SDR_PYTHON" - "$tmp/r1.json" "$tmp/s1.json" <<'PY' || fail "1024 QPs: accounting"
import json, sys
r = json.loads(open(sys.argv[1]).read())
d = json.load(open(sys.argv[2]))
assert r["status"] == "ok" and r["qps"] == 1024 and r["ctxs"] == 1, r
assert r["msgs_ok"] == 2048 and r["msgs_partial"] == 0 and r["msgs_err"] == 0, r
# a 4 KiB message without immediate (sdr-perf's default) is one packet
P = 1
assert r["bytes"] == 2048 * 4096 and r["pkts"] == 2048 * P, r
assert r["qp_setup_us_per_qp"] > 0 and r["dpu_rss_kib_per_qp"] > 0, r
a, b = d["instances"][0], d["instances"][1]
n = 2048 + 1024                       # measured + warm-up: 3 per QP pair
assert a["qp_totals"]["msgs_sent"] == n and b["qp_totals"]["msgs_recv"] == n, (a, b)
assert a["qp_totals"]["tx_pkts"] == n * P and b["qp_totals"]["rx_pkts"] == n * P, (a, b)
assert b["qp_totals"]["msgs_partial"] == 0 and a["qp_totals"]["send_errors"] == 0, (a, b)
# the sender sends data only (rel none), and a QP-CLOSED (214 B) for each QP
# it destroys at teardown (docs/wire-format.md section 6)
x = a["tx_pkts"] - n * P
assert 0 < x <= 1024 and a["tx_bytes"] - a["qp_totals"]["tx_bytes"] - n * P * 74 == x * 214, a
assert sum(w["pace_frames"] for w in d["workers"]) == n * P, d["workers"]
# (at teardown both ends destroy the pairs: a QP-CLOSED that meets the
# other end's tombstone is tomb_closed, one that finds neither QP nor
# tombstone would be unknown_qp)
drops = {k: v for k, v in d["drops"].items()
         if v and k not in ("cts_stale", "tomb_pkts", "tomb_closed", "closed_tx")}
assert not drops, drops
print("1024 QP pairs: %d messages, %d data frames each way; set-up %.0f us per QP, %.0f KiB"
      " resident per QP" % (n, n * P, r["qp_setup_us_per_qp"], r["dpu_rss_kib_per_qp"]))
PY

log "64 QP pairs on 2 workers"
"$SDR_PERF" bw --qps 64 --workers 2 --size 16K --iters 256 --warmup 64 --timeout 60 \
	--json-only >"$tmp/r2.json" 2>"$tmp/r2.err" ||
	{ cat "$tmp/r2.json" "$tmp/r2.err"; fail "sdr-perf --qps 64 --workers 2"; }
"$SDR_PYTHON" - "$tmp/r2.json" <<'PY' || fail "2 workers: steering"
import json, sys
r = json.loads(open(sys.argv[1]).read())
assert r["status"] == "ok" and r["qps"] == 64 and r["ctxs"] == 2 and r["workers"] == 2, r
assert r["msgs_ok"] == 256 and r["bytes"] == 256 * 16384, r
assert r["handoff_pkts"] == 0, r
assert r["pace_frames"] > 0, r
print("64 QP pairs on 2 workers: %d messages, no packet handed off" % r["msgs_ok"])
PY

log "on/off traffic of paced QPs"
"$SDR_PERF" bw --qps 2 --size 64K --rate 400m --gap-us 300 --iters 40 --warmup 4 --timeout 60 \
	--json-only >"$tmp/r3.json" 2>"$tmp/r3.err" ||
	{ cat "$tmp/r3.json" "$tmp/r3.err"; fail "sdr-perf --gap-us"; }
"$SDR_PYTHON" - "$tmp/r3.json" <<'PY' || fail "on/off: peak after idle"
import json, sys
r = json.loads(open(sys.argv[1]).read())
assert r["status"] == "ok" and r["msgs_ok"] == 40 and r["gap_us"] == 300, r
assert r["peak_window_us"] > 0 and r["peak_rate"] > 0, r
# 16 frames of 4174 B per message: 10 frame times allow 10 frames, + 1
assert r["peak_rate_after_idle"] <= 1.1 + 1e-9, r
print("on/off: peak %.3fx, after idle %.3fx of the rate over %.1f us"
      % (r["peak_rate"], r["peak_rate_after_idle"], r["peak_window_us"]))
PY
log "PASS"
