#!/bin/bash
# Smoke test of sdr-perf: it runs, its JSON lines parse and carry positive
# numbers that agree with what was asked, plot.py makes PNGs, --path-trace
# samples per-path frames (paths_plot.py charts them), an unknown
# scheme is reported as skipped, and SIGINT leaves no daemon behind.
# No timing thresholds.
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${SDR_BUILD:=$here/../../build}"
: "${SDR_DPU:=$SDR_BUILD/firmware/sdr-dpu}"
: "${SDR_PERF:=$SDR_BUILD/host/perf/sdr-perf}"
: "${SDR_PERF_PLOT:=$here/../../host/perf/plot.py}"
: "${SDR_PYTHON:=/usr/bin/python3}"
export SDR_DPU
tmp=$(mktemp -d /tmp/sdr-perf-test.XXXXXX)
bgpid=
cleanup() {
	[ -n "$bgpid" ] && kill -KILL "$bgpid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
log() { printf '[%s] %s\n' "$(date +%T)" "$*"; }

[ -x "$SDR_PERF" ] || fail "no sdr-perf at $SDR_PERF"
[ -x "$SDR_DPU" ] || fail "no sdr-dpu at $SDR_DPU"

# check.py FILE EXPECTED_LINES PYTHON_ASSERTIONS: every '{' line parses and
# the assertions hold for each record r (list: rs)
check() {
	"$SDR_PYTHON" - "$@" <<'EOF'
import json, sys
path, nexp, code = sys.argv[1], int(sys.argv[2]), sys.argv[3]
rs = [json.loads(l) for l in open(path) if l.startswith("{")]
assert len(rs) == nexp, "expected %d JSON lines, got %d" % (nexp, len(rs))
exec(code, {"rs": rs})
print("ok: %d record(s)" % len(rs))
EOF
}

log "usage errors exit 2"
"$SDR_PERF" bw --rate 1zz >/dev/null 2>&1; [ $? = 2 ] || fail "a malformed --rate should be a usage error (exit 2)"
"$SDR_PERF" bw --rig attach >/dev/null 2>&1; [ $? = 2 ] || fail "--rig attach without sockets should exit 2"
"$SDR_PERF" bw --size 0 >/dev/null 2>&1; [ $? = 2 ] || fail "--size 0 should exit 2"
"$SDR_PERF" nosuchmode >/dev/null 2>&1; [ $? = 2 ] || fail "unknown mode should exit 2"

log "bw over a net_ring pair, 64 KiB x 50"
"$SDR_PERF" bw --rig ring --size 64K --iters 50 >"$tmp/bw.out" 2>"$tmp/bw.err" ||
	{ cat "$tmp/bw.out" "$tmp/bw.err"; fail "sdr-perf bw failed"; }
cat "$tmp/bw.out"
grep -q 'goodput' "$tmp/bw.out" || fail "no human block"
check "$tmp/bw.out" 1 '
r = rs[0]
assert r["mode"] == "bw" and r["rig"] == "ring" and r["pmd"] == "net_ring", r
assert r["status"] == "ok", r
assert r["size"] == 65536 and r["iters"] == 50 and r["msgs_ok"] == 50, r
assert r["msgs_partial"] == 0 and r["msgs_err"] == 0 and r["send_err"] == 0, r
assert r["bytes"] == 50 * 65536, r
assert r["pkts"] == 50 * 16, r             # 64 KiB / 4096 B MTU
for k in ("goodput_gbps", "wire_gbps", "mpps", "msg_rate", "elapsed_s", "lat_mean_us",
          "lat_p50_us", "lat_p99_us", "lat_p999_us", "lat_max_us", "send_lat_p50_us",
          "memcpy_gbps"):
    assert isinstance(r[k], (int, float)) and r[k] > 0, (k, r[k])
# CPU time comes in clock ticks: a 50-message run may see 0 ticks (then the
# per-CPU figures are null), never a negative or missing value
assert r["worker_cpu_s"] is not None and r["worker_cpu_s"] >= 0, r
for k in ("goodput_gbps_per_cpu", "mpps_per_cpu"):
    assert k in r and (r[k] is None or r[k] > 0), (k, r)
assert r["wire_gbps"] > r["goodput_gbps"], r
assert r["lat_p50_us"] <= r["lat_p99_us"] <= r["lat_p999_us"] <= r["lat_max_us"], r
assert r["lat_samples"] == 50, r
'  || fail "bw JSON"

log "--json-only: exactly one line, the JSON; packet accounting = the daemon's counters"
"$SDR_PERF" lat --size 100 --iters 20 --warmup 2 --json-only \
	--dpu-arg="--stats-json=$tmp/stats.json" >"$tmp/lat.out" 2>"$tmp/lat.err" ||
	{ cat "$tmp/lat.err"; fail "sdr-perf lat failed"; }
[ "$(wc -l <"$tmp/lat.out")" = 1 ] || { cat "$tmp/lat.out"; fail "--json-only printed more than one line"; }
check "$tmp/lat.out" 1 '
r = rs[0]
assert r["mode"] == "lat" and r["window"] == 1 and r["status"] == "ok", r
assert r["imm"] == 0, r                    # the default: no immediate
assert r["msgs_ok"] == 20 and r["bytes"] == 2000 and r["pkts"] == 20 * 1, r  # one packet each
assert r["lat_p50_us"] > 0, r
' || fail "lat JSON"
# the sending instance transmitted exactly (iters + warmup) messages of one
# frame (opcode 0x2A, 74 + 100 bytes), which is what sdr-perf charges as pkts
# and wire bytes
"$SDR_PYTHON" - "$tmp/stats.json" <<'EOF2' || fail "sdr-perf packet accounting differs from the daemon's"
import json, sys
a = json.load(open(sys.argv[1]))["instances"][0]
# and, at teardown, a QP-CLOSED (214 B) for its destroyed QP, and one per
# later packet of the peer for it (docs/wire-format.md section 6)
x = a["tx_pkts"] - 22 * 1
assert 1 <= x <= 3, a
assert a["tx_bytes"] == 22 * (74 + 100) + x * 214, a
print("ok: daemon sent", a["tx_pkts"], "frames,", a["tx_bytes"], "bytes (%d QP-CLOSED)" % x)
EOF2

log "--imm: messages with an immediate are padded to 8 packets"
"$SDR_PERF" lat --size 100 --iters 20 --warmup 2 --json-only --imm 0x12345678 \
	--dpu-arg="--stats-json=$tmp/stats-imm.json" >"$tmp/lat-imm.out" 2>"$tmp/lat.err" ||
	{ cat "$tmp/lat.err"; fail "sdr-perf lat --imm failed"; }
check "$tmp/lat-imm.out" 1 '
r = rs[0]
assert r["status"] == "ok" and r["imm"] == 0x12345678, r
assert r["msgs_ok"] == 20 and r["bytes"] == 2000 and r["pkts"] == 20 * 8, r  # padded to 8 packets
' || fail "lat --imm JSON"
# (iters + warmup) messages of 8 frames: one of 78 + 100 bytes and seven
# immediate-only ones of 78 bytes
"$SDR_PYTHON" - "$tmp/stats-imm.json" <<'EOF2' || fail "sdr-perf --imm packet accounting differs from the daemon's"
import json, sys
a = json.load(open(sys.argv[1]))["instances"][0]
x = a["tx_pkts"] - 22 * 8  # (QP-CLOSED at teardown, as above)
assert 1 <= x <= 3, a
assert a["tx_bytes"] == 22 * (78 + 100 + 7 * 78) + x * 214, a
print("ok: daemon sent", a["tx_pkts"], "frames,", a["tx_bytes"], "bytes (%d QP-CLOSED)" % x)
EOF2
"$SDR_PERF" bw --imm 0x1ffffffff >/dev/null 2>&1; [ $? = 2 ] || fail "--imm above 32 bits should exit 2"

log "codec: RS and XOR"
for code in rs xor; do
	"$SDR_PERF" codec --code $code --k 8 --m 2 --chunk 4K --iters 200 >"$tmp/codec-$code.out" ||
		fail "codec $code"
	cat "$tmp/codec-$code.out"
	check "$tmp/codec-$code.out" 1 "
r = rs[0]
assert r['mode'] == 'codec' and r['code'] == '$code' and r['status'] == 'ok', r
assert r['k'] == 8 and r['m'] == 2 and r['chunk'] == 4096, r
assert r['encode_iters'] == 200 and r['decode_iters'] == 200 and r['erasures'] == 2, r
for k in ('encode_GBps', 'encode_GBps_all', 'decode_GBps'):
    assert r[k] > 0, (k, r)
assert abs(r['encode_GBps_all'] / r['encode_GBps'] - 10 / 8) < 1e-4, r
" || fail "codec $code JSON"
done
"$SDR_PERF" codec --code xor --k 2 --m 3 >/dev/null 2>&1; [ $? = 2 ] || fail "XOR with m > k should be refused"

log "tiny sweep (2 losses x 2 schemes x 2 sizes) and plot.py"
"$SDR_PERF" sweep --sizes 4K,16K --loss 0,0.02 --schemes none,bogus --iters 20 --window 2 \
	--recv-timeout-ms 20 >"$tmp/sweep.out" 2>"$tmp/sweep.err" ||
	{ cat "$tmp/sweep.out" "$tmp/sweep.err"; fail "sweep failed"; }
grep -q 'sweep \[8/8\]' "$tmp/sweep.err" || { cat "$tmp/sweep.err"; fail "no progress lines"; }
check "$tmp/sweep.out" 8 '
ok = [r for r in rs if r["status"] == "ok"]
sk = [r for r in rs if r["status"] == "skipped"]
assert len(ok) == 4 and len(sk) == 4, rs
assert all(r["rel"] == "none" for r in ok), ok
assert all("bogus" in r["error"] for r in sk), sk
assert sorted({r["link"] for r in ok}) == ["", "loss=0.02"], ok
for r in ok:
    assert r["msgs_ok"] + r["msgs_partial"] + r["msgs_err"] == 20, r
    assert r["goodput_gbps"] > 0 and r["bytes"] > 0, r
    if r["link"] == "":
        assert r["msgs_ok"] == 20, r
' || fail "sweep JSON"
"$SDR_PYTHON" "$SDR_PERF_PLOT" "$tmp/sweep.out" --out-dir "$tmp/charts" >"$tmp/plot.out" 2>&1 ||
	{ cat "$tmp/plot.out"; fail "plot.py failed"; }
for png in completion-vs-loss.png goodput-vs-size.png; do
	f=$tmp/charts/$png
	[ -s "$f" ] || fail "plot.py did not write $png"
	[ "$(head -c 8 "$f" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "$png is not a PNG"
	[ "$(stat -c %s "$f")" -gt 5000 ] || fail "$png is suspiciously small"
done
echo '{"mode":"bw","status":"failed","error":"x"}' | "$SDR_PYTHON" "$SDR_PERF_PLOT" --out-dir "$tmp/none" 2>/dev/null
[ $? = 1 ] || fail "plot.py with nothing to plot should exit 1"

log "--path-trace: a QP of 4 ports over a --link of two paths, and paths_plot.py"
"$SDR_PERF" bw --rig ring --rel sr --size 256K --window 4 --duration 1 --warmup 0 --paths 4 \
	--link "delay=1ms|delay=2ms" --path-trace 0.05 --json-only >"$tmp/paths.out" \
	2>"$tmp/paths.err" || { cat "$tmp/paths.out" "$tmp/paths.err"; fail "--path-trace run failed"; }
check "$tmp/paths.out" 2 '
p = [r for r in rs if r["mode"] == "paths"][0]
b = [r for r in rs if r["mode"] == "bw"][0]
assert b["status"] == "ok" and b["msgs_ok"] > 0, b
assert p["paths"] == 4 and p["lanes"] == ["default/p0", "default/p1"], p
n = len(p["t"])
assert n >= 3 and len(p["frames"]) == len(p["active"]) == len(p["lane_delivered"]) == n, p
assert all(len(x) == 4 for x in p["frames"]) and all(len(x) == 2 for x in p["lane_delivered"])
assert all(t1 > t0 for t0, t1 in zip(p["t"], p["t"][1:])), p["t"]
for x0, x1 in zip(p["frames"], p["frames"][1:]):
    assert all(b1 >= a1 for a1, b1 in zip(x0, x1)), (x0, x1)
assert sum(p["frames"][-1]) > 0 and sum(p["lane_delivered"][-1]) > 0, p
assert all(0 <= sum(a) <= 4 for a in p["active"]), p["active"]
' || fail "--path-trace JSON"
"$SDR_PYTHON" "$here/../../host/perf/paths_plot.py" "$tmp/paths.out" --out "$tmp/paths.png" \
	>"$tmp/pplot.out" 2>&1 || { cat "$tmp/pplot.out"; fail "paths_plot.py failed"; }
[ "$(head -c 8 "$tmp/paths.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
	fail "paths_plot.py did not write a PNG"

log "SIGINT: sdr-perf stops its daemon and exits"
"$SDR_PERF" bw --size 4K --duration 60 --json-only >"$tmp/int.out" 2>"$tmp/int.err" &
bgpid=$!
dpid=
for _ in $(seq 100); do
	dpid=$(pgrep -P "$bgpid" | head -1)
	[ -n "$dpid" ] && [ -n "$(ls /tmp/sdr-perf.*/b.sock 2>/dev/null)" ] && break
	sleep 0.1
done
[ -n "$dpid" ] || fail "no daemon child of sdr-perf"
sleep 1
kill -INT "$bgpid"
for _ in $(seq 100); do kill -0 "$bgpid" 2>/dev/null || break; sleep 0.1; done
kill -0 "$bgpid" 2>/dev/null && fail "sdr-perf still running 10 s after SIGINT"
wait "$bgpid"; rc=$?
bgpid=
[ "$rc" = 1 ] || fail "interrupted run should exit 1, got $rc"
kill -0 "$dpid" 2>/dev/null && fail "daemon $dpid survived sdr-perf's SIGINT"
check "$tmp/int.out" 1 'assert rs[0]["status"] == "failed" and rs[0]["error"] == "interrupted", rs' ||
	fail "interrupted run JSON"
log "PASS"
