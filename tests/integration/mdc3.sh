#!/usr/bin/env bash
# The multi-DC rig with three DCs (hw/x86/mdc.sh: three DC namespaces through
# a router namespace, one sdr-dpu each, per-peer links from one network
# description) and sdr-pipe over it: 6 stages placed 0,0,1,1,2,2, a shared
# bottleneck into DC 1 (DC 0's activations and DC 2's gradients, 12.5 ms),
# 5 ms DC 1 -> DC 0, 25 ms DC 1 -> DC 2, policy cba, SR. Checks:
#  - the three processes exit 0 (every payload's header and checksum
#    verified by its receiving stage) and DC 0's merged log of every DC
#    passes the offline dependency check;
#  - the per-peer delays show in the merged log: every cross-DC transfer
#    took at least its pair's one-way delay (wait end at the consumer - send
#    posted at the producer; a lower bound only, not a timing threshold);
#  - rates were applied: the controller's log has a rate for every cross-DC
#    QP every iteration, and DC 0's and DC 2's daemons report (telemetry
#    /sdr/qps, sampled while the run lasts) the rates it gave their QPs;
#  - the daemons' per-peer lanes carried the traffic (DC 1's shared lane
#    from both senders);
#  - clock offsets: near 0 on the rig's one clock; a second run with DC 2's
#    clock shifted by 300 ms measures that shift and still lines up (its
#    merged log passes the dependency check);
#  - a third run under cba-shift (4 iterations): payloads and dependencies
#    as above, every QP a rate every iteration, the shared link's two QPs at
#    exactly its rate together (what one gains the other gave), each within
#    [min, max] and moving at most a step;
#  - the rig is torn down (no namespace, no daemon left).
# Skipped (77) without root.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../../hw/x86/mdc.sh"
[ "$(id -u)" = 0 ] || sdr_skip "needs root (network namespaces)"
[ -x "$SDR_PIPE" ] || sdr_skip "no $SDR_PIPE"
TEL=$(command -v dpdk-telemetry.py || true)

MDC_TAG=it$$
MDC_DIR=$SDR_TMP/rig
MDC_NET=$SDR_TMP/mdc3.net
MDC_DPU_ARGS="--port-rate 900m --stats-interval 0"
cat >"$MDC_NET" <<'EOF'
# into DC 1: one shared bottleneck for DC 0's activations and DC 2's gradients
link into1 to=1 from=0,2 delay=12.5ms rate=500mbit buffer=4MB
link l10 to=0 from=1 delay=5ms rate=1gbit buffer=4MB
link l12 to=2 from=1 delay=25ms rate=1gbit buffer=4MB
EOF
SDR_CLEANUPS+=("mdc_down")
mdc_up 3 || sdr_fail "the rig did not come up"
sdr_log "rig up: $(ip netns list | grep -c "$MDC_TAG") namespaces"

COMMON="--place 0,0,1,1,2,2 --micro 4 --tf 2ms --tb 4ms --act 64K --grad 48K --net $MDC_NET --rate 900m --rel sr --timeout 20"

# pipe3 TAG [sdr-pipe args]: the three processes (mdc_pipe), DC 0 with the
# JSON line ($SDR_TMP/TAG.json), the merged events and the controller's log;
# then the offline dependency check of the merged log
pipe3() {
	local tag=$1
	shift
	MDC_PIPE_EXTRA[0]="--json --events $SDR_TMP/$tag.ev --ctl-log $SDR_TMP/$tag.ctl"
	# shellcheck disable=SC2086
	mdc_pipe "$tag" $COMMON "$@" || return 1
	grep '^{' "$MDC_DIR/$tag-0.log" >"$SDR_TMP/$tag.json"
	# shellcheck disable=SC2086
	"$SDR_PIPE" $COMMON "$@" --check-events "$SDR_TMP/$tag.ev" || return 1
}

# sample the rates DC 0's and DC 2's daemons give their QPs while the run lasts
sample_rates() {
	local k
	[ -n "$TEL" ] || return 0
	while :; do
		for k in 0 2; do
			printf '/sdr/qps,0\n' | timeout 5 /usr/bin/python3 "$TEL" -f "${MDC_PREFIX[k]}" 2>/dev/null |
				grep '^{' | sed "s/^/$k /" >>"$SDR_TMP/rates.log"
		done
		sleep 0.05
	done
}

sdr_log "run 1: cba, 10 iterations"
sample_rates &
spid=$!
pipe3 cba --sched geopipe --policy cba --iters 10 || { kill $spid; sdr_fail "the 3-DC run failed"; }
kill $spid 2>/dev/null
wait $spid 2>/dev/null

sdr_log "run 2: DC 2's clock shifted by +300 ms, 2 iterations"
MDC_PIPE_EXTRA[2]="--clock-shift 300ms"
pipe3 shift --sched 1f1b --policy equal --iters 2 || sdr_fail "the run with a shifted clock failed"

sdr_log "run 3: cba-shift, 4 iterations"
MDC_PIPE_EXTRA[2]=""
pipe3 cbashift --sched greedy --policy cba-shift --iters 4 || sdr_fail "the cba-shift run failed"

mdc_down || sdr_fail "a daemon did not stop cleanly"
left=$(ip netns list | grep -c "$MDC_TAG")
[ "$left" = 0 ] || sdr_fail "$left namespaces of the rig left"
for k in 0 1 2; do
	kill -0 "${MDC_PID[k]}" 2>/dev/null && sdr_fail "daemon of DC $k still running"
done

/usr/bin/python3 - "$SDR_TMP" "${MDC_STATS[@]}" <<'PY' || sdr_fail "checks"
import json, os, sys
tmp = sys.argv[1]
stats = sys.argv[2:]
delay = {(0, 1): 12.5, (2, 1): 12.5, (1, 0): 5.0, (1, 2): 25.0}   # ms, the network above
dc_of = [0, 0, 1, 1, 2, 2]
M = 4

def transfers(ev):
    """(src dc, dst dc) -> list of wait end at the consumer - send posted at the producer (ms)"""
    post, done = {}, {}
    for l in open(ev):
        if l.startswith('#'):
            continue
        it, st, kind, op, m, ch, t0, t1, cs = l.split()
        it, st, kind, m, ch = int(it), int(st), int(kind), int(m), int(ch)
        src = ch // 2 + 1 if ch & 1 else ch // 2
        dst = ch // 2 if ch & 1 else ch // 2 + 1
        if dc_of[src] == dc_of[dst]:
            continue
        if kind == 2 and st == src:
            post[(it, ch, m)] = float(t0)
        if kind == 3 and st == dst:
            done[(it, ch, m)] = float(t1)
    out = {}
    for k, t in done.items():
        ch = k[1]
        src = ch // 2 + 1 if ch & 1 else ch // 2
        dst = ch // 2 if ch & 1 else ch // 2 + 1
        out.setdefault((dc_of[src], dc_of[dst]), []).append((t - post[k]) * 1e3)
    return out

for run in ("cba", "shift"):
    tr = transfers(os.path.join(tmp, run + ".ev"))
    assert set(tr) == set(delay), (run, sorted(tr))
    for pair, ts in sorted(tr.items()):
        lo = min(ts)
        print("%s: DC %d -> DC %d: %d transfers, shortest %.2f ms (one-way delay %.1f ms)"
              % (run, pair[0], pair[1], len(ts), lo, delay[pair]))
        # the clock offsets are measured to ~0.1 ms here; 0.5 ms of slack
        assert lo >= delay[pair] - 0.5, "faster than the link's delay"

# clock offsets: ~0 on one clock; the shifted DC 2 measured
r1 = json.load(open(os.path.join(tmp, "cba.json")))
r2 = json.load(open(os.path.join(tmp, "shift.json")))
print("clock offsets (ms): run 1 %s, run 2 %s" % (r1["clock_offset_ms"], r2["clock_offset_ms"]))
assert all(abs(x) < 5 for x in r1["clock_offset_ms"]), r1["clock_offset_ms"]
o = r2["clock_offset_ms"]
assert abs(o[0]) < 5 and abs(o[1]) < 5 and abs(o[2] - 300) < 5, o
assert r1["dcs"] == 3 and r1["iters"] == 10 and r1["policy"] == "cba"
assert len(r1["meas_iters"]) == 10 and len(r1["pred_iters"]) == 10

# the controller's log: every iteration, every cross-DC QP a rate
ctl = [json.loads(l) for l in open(os.path.join(tmp, "cba.ctl"))]
assert [c["iter"] for c in ctl] == list(range(10)), [c["iter"] for c in ctl]
given = {}
for c in ctl:
    chans = sorted(f["ch"] for f in c["flows"])
    assert chans == [2, 3, 6, 7], chans
    for f in c["flows"]:
        assert f["rate_bps"] > 0, f
        given.setdefault((f["src"], f["ch"]), set()).add(f["rate_bps"])
    assert all(t["wait_ms"] >= 0 for t in c["transfers"])
    assert len(c["transfers"]) == 4 * M
shared = [f for f in ctl[0]["flows"] if f["link"] == "into1"]
assert len(shared) == 2 and sum(f["rate_bps"] for f in shared) <= 500e6, shared
print("controller: %d iterations, rates of the shared link's QPs per iteration: %s"
      % (len(ctl), [[f["rate_bps"] for f in c["flows"] if f["link"] == "into1"] for c in ctl]))

# cba-shift: rates every iteration, the shared link conserved, [min, max],
# at most a step per iteration (equal shares: into1 250 Mbit/s each, l10 and
# l12 1 Gbit/s; min and step a quarter of the share)
r3 = json.load(open(os.path.join(tmp, "cbashift.json")))
assert r3["policy"] == "cba-shift" and len(r3["meas_iters"]) == 4 and len(r3["pred_iters"]) == 4
ctl = [json.loads(l) for l in open(os.path.join(tmp, "cbashift.ctl"))]
assert [c["iter"] for c in ctl] == list(range(4)) and all(c["policy"] == "cba-shift" for c in ctl)
cap = {"into1": 500e6, "l10": 1e9, "l12": 1e9}
share = {"into1": 250e6, "l10": 1e9, "l12": 1e9}
prev = None
for c in ctl:
    rate = {f["ch"]: f["rate_bps"] for f in c["flows"]}
    assert sorted(rate) == [2, 3, 6, 7], rate
    assert rate[2] + rate[7] == 500e6, ("into1 not conserved", c["iter"], rate)
    for f in c["flows"]:
        assert share[f["link"]] / 4 <= f["rate_bps"] <= cap[f["link"]], f
        assert f["gave_bps"] <= share[f["link"]] / 4, f
        if prev:
            assert abs(f["rate_bps"] - prev[f["ch"]]) <= share[f["link"]] / 4, (f, prev)
    prev = rate
print("cba-shift: into1's QPs (ch 2, ch 7) per iteration: %s"
      % [[f["rate_bps"] for f in c["flows"] if f["link"] == "into1"] for c in ctl])

# the daemons' own view of the rates (telemetry samples during the run)
rl = os.path.join(tmp, "rates.log")
if os.path.exists(rl):
    seen = {0: set(), 2: set()}
    for l in open(rl):
        k, js = l.split(" ", 1)
        for q in json.loads(js)["/sdr/qps"].values():
            if q["rate_bps"]:
                seen[int(k)].add(q["rate_bps"])
    print("daemon rates seen: DC 0 %s, DC 2 %s" % (sorted(seen[0]), sorted(seen[2])))
    assert seen[0] and seen[0] <= given[(0, 2)], (seen[0], given[(0, 2)])
    assert seen[2] and seen[2] <= given[(2, 7)], (seen[2], given[(2, 7)])
else:
    print("no dpdk-telemetry.py: the daemons' rates not sampled")

# the per-peer lanes at the daemons (stats JSON written at exit)
lanes = []
for f in stats:
    inst = json.load(open(f))["instances"][0]
    lanes.append({l["lane"].split(":")[0]: l for l in inst["link"]["lanes"]})
into1 = lanes[1]["into1"]
assert into1["lane"].startswith("into1:10.100.0.2+10.100.2.2:delay=12.5ms,rate=500mbit")
assert into1["pkts_in"] > 0 and lanes[0]["l10"]["pkts_in"] > 0 and lanes[2]["l12"]["pkts_in"] > 0
for d in lanes:
    for l in d.values():
        assert l["pkts_in"] == l["delivered"] + l["dropped_buffer"] + l["dropped_loss"] + \
            l["dropped_ge"] + l["dropped_limit"]
print("lanes: into1 (DC 1, from DC 0 and DC 2) %d frames, l10 %d, l12 %d"
      % (into1["pkts_in"], lanes[0]["l10"]["pkts_in"], lanes[2]["l12"]["pkts_in"]))
PY
echo "mdc3: 3 DCs through a router, per-peer links, cba and cba-shift; payloads verified, dependencies ok, delays bounded below, rates applied, clock offsets measured, rig torn down"
