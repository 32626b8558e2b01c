#!/bin/bash
# Multipath figures through sdr-perf on the ring rig (docs/multipath.md "The
# path sum" and "Failover"), suite pathbench: figures of a machine whose
# daemon has its CPU, so tests/run.sh (and CI) leaves it out by design, as
# ccbench; run it with `meson test -C build --suite pathbench` on a quiet
# machine. Four paths of 250 Mbit/s (one-way 5 / 6 / 8 / 12.5 ms, 4 MB
# buffers), one SR QP, 1 MiB messages, window 16:
#   sum       --paths 16 paced at 950 Mbit/s: payload goodput >= SDR_PATH_SUM
#             (0.9) of the paths' 1 Gbit/s, no message failed, no
#             retransmission spurious; --paths 1 printed beside it;
#   failover  path 1 down from 3 s to 7 s, paced at 700 Mbit/s: the frames
#             the receiving emulator delivered over the first second of the
#             outage >= SDR_PATH_SUM of the sender's 700 Mbit/s (the three
#             remaining paths carry 750), no message failed;
#   lossy     path 1 loses 5 % of its frames, --paths 16 paced at 700
#             Mbit/s: payload goodput >= SDR_PATH_LOSSY (0.85) of the three
#             clean paths' 750 Mbit/s, no message failed (that the lossy
#             path's ports carry fewer frames: spray_paths, in CI).
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
. "$here/lib.sh" pathbench
case=${1:?usage: path_bench.sh sum|failover|lossy}
frac=${SDR_PATH_SUM:-0.9}
P="delay=5ms,rate=250mbit,buffer=4MB|delay=6ms,rate=250mbit,buffer=4MB"
P="$P|delay=8ms,rate=250mbit,buffer=4MB|delay=12.5ms,rate=250mbit,buffer=4MB"
F="delay=5ms,rate=250mbit,buffer=4MB|delay=6ms,rate=250mbit,buffer=4MB,down=3s+4s"
F="$F|delay=8ms,rate=250mbit,buffer=4MB|delay=12.5ms,rate=250mbit,buffer=4MB"
L="delay=5ms,rate=250mbit,buffer=4MB|delay=6ms,rate=250mbit,buffer=4MB,loss=0.05"
L="$L|delay=8ms,rate=250mbit,buffer=4MB|delay=12.5ms,rate=250mbit,buffer=4MB"

# run TAG PATHS RATE DURATION LINK [more sdr-perf options]: the JSON lines
# in $tmp/TAG.jsonl, the daemons' stats (totals over the closed QPs too) in
# $tmp/TAG-stats.json
run() {
	local tag=$1 np=$2 rate=$3 dur=$4 link=$5
	shift 5
	"$SDR_PERF" bw --rig ring --rel sr --size 1M --window 16 --duration "$dur" --warmup 0 \
		--paths "$np" --port-rate "$rate" --link "$link" --json-only "$@" \
		--dpu-arg="--stats-json=$tmp/$tag-stats.json" >"$tmp/$tag.jsonl" 2>"$tmp/$tag.err" ||
		{ cat "$tmp/$tag.jsonl" "$tmp/$tag.err"; fail "sdr-perf --paths $np"; }
}

case $case in
sum)
	run p16 16 950m 8 "$P"
	run p1 1 950m 8 "$P"
	"$SDR_PYTHON" - "$tmp" "$frac" <<'PY' || fail "path sum"
import json, sys
tmp, frac = sys.argv[1], float(sys.argv[2])
def res(tag):
    r = [json.loads(l) for l in open("%s/%s.jsonl" % (tmp, tag)) if l.startswith("{")][-1]
    d = json.load(open("%s/%s-stats.json" % (tmp, tag)))["instances"]
    link = d[1]["link"]  # the receiving instance's emulator: the paths
    drops = sum(v for k, v in link.items() if k.startswith("dropped") and isinstance(v, int))
    return r, d[0]["qp_totals"], drops
r16, s16, d16 = res("p16")
r1, s1, d1 = res("p1")
for tag, r, s, dr in (("paths 16", r16, s16, d16), ("paths 1", r1, s1, d1)):
    print("%s: payload goodput %.3f Gbit/s of the paths' 1 Gbit/s (%d messages, %d failed);"
          " frames the paths dropped %d; retransmitted units %d, spurious %d"
          % (tag, r["goodput_gbps"], r["msgs_ok"], r["msgs_err"], dr, s["sr_retx_units"],
             s["sr_spurious_retx"]))
assert r16["status"] == "ok" and r16["msgs_err"] == 0 and r16["msgs_partial"] == 0, r16
# (a path whose ports carry more than its 250 Mbit/s overflows its buffer
# until the policy lowers their weights: real losses, after which a
# retransmission may race a late original; without a drop, none may)
assert d16 > 0 or s16["sr_spurious_retx"] == 0, "spurious retransmissions without a loss"
assert r16["goodput_gbps"] >= frac, "paths 16: %.3f Gbit/s < %.2f of the sum" % (
    r16["goodput_gbps"], frac)
PY
	;;
failover)
	run fo 16 700m 10 "$F" --path-trace 0.1
	"$SDR_PYTHON" - "$tmp/fo.jsonl" "$frac" <<'PY' || fail "failover"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
frac = float(sys.argv[2])
r = [x for x in rows if x.get("mode") == "bw"][-1]
tr = [x for x in rows if x.get("mode") == "paths"][-1]
t, L = tr["t"], tr["lane_delivered"]
FRAME = 4096 + 78  # bytes of a full data frame on the wire (docs/wire-format.md)
def mbps(a, b):
    i = min(range(len(t)), key=lambda k: abs(t[k] - a))
    j = min(range(len(t)), key=lambda k: abs(t[k] - b))
    return (sum(L[j]) - sum(L[i])) * FRAME * 8 / (t[j] - t[i]) / 1e6
before, first, rest = mbps(1, 3), mbps(3, 4), mbps(4, 7)
print("delivered: %.0f Mbit/s before the outage, %.0f over its first second, %.0f over"
      " 4-7 s; payload goodput %.3f Gbit/s over the run (%d messages, %d failed)"
      % (before, first, rest, r["goodput_gbps"], r["msgs_ok"], r["msgs_err"]))
assert r["status"] == "ok" and r["msgs_err"] == 0, r
assert first >= frac * 700, "%.0f Mbit/s in the outage's first second" % first
PY
	;;
lossy)
	run ls 16 700m 8 "$L" --path-trace 0.5
	"$SDR_PYTHON" - "$tmp" "${SDR_PATH_LOSSY:-0.85}" <<'PY' || fail "lossy path"
import json, sys
tmp, frac = sys.argv[1], float(sys.argv[2])
rows = [json.loads(l) for l in open("%s/ls.jsonl" % tmp) if l.startswith("{")]
r = [x for x in rows if x.get("mode") == "bw"][-1]
tr = [x for x in rows if x.get("mode") == "paths"][-1]
lanes = tr["lane_delivered"][-1]  # frames each path delivered, at the end
s = json.load(open("%s/ls-stats.json" % tmp))["instances"][0]["qp_totals"]
print("lossy path 1 (5 %%): payload goodput %.3f Gbit/s (%.0f %% of the clean paths' 750"
      " Mbit/s; %d messages, %d failed); frames delivered per path %s; retransmitted units"
      " %d, spurious %d" % (r["goodput_gbps"], r["goodput_gbps"] / 0.75 * 100, r["msgs_ok"],
                            r["msgs_err"], lanes, s["sr_retx_units"], s["sr_spurious_retx"]))
assert r["status"] == "ok" and r["msgs_err"] == 0, r
assert r["goodput_gbps"] >= frac * 0.75, "%.3f Gbit/s < %.2f of 750 Mbit/s" % (
    r["goodput_gbps"], frac)
PY
	;;
*) fail "unknown case $case" ;;
esac
echo PASS
