#!/usr/bin/env bash
# Per-peer links in the daemon (--link-peer), on a ring pair (no root): DPU B
# (10.0.0.2) emulates 1 s for unlisted sources (--link delay=1s,...), 20 ms for
# frames from A (10.0.0.1, profile "froma"), and a profile of two paths for an
# address no one sends from (lanes nobody/p0, nobody/p1). A transfer A -> B must take profile froma's lane only:
# every frame A sent is in that lane's counters (stats JSON and telemetry
# /sdr/link,1,0), none in the default lane or the unused profile; the lanes
# add up to the totals; the first message completes no earlier than 20 ms
# (a lower bound only). Bad --link-peer arguments are refused with a message.
# Then --link of four paths: a sprayed QP's frames spread over lanes
# default/p0..p3, and they add up to what A sent.
. "$(dirname "$0")/lib.sh"
TEL=$(command -v dpdk-telemetry.py || true)
# refused before the EAL starts a port
for bad in "froma:10.0.0.1" "10.0.0.300:delay=1ms" "x:10.0.0.1:delay=1ms --link-peer y:10.0.0.1:" \
	"default:10.0.0.1:" "a:10.0.0.1:delay=5xs" "a:10.0.0.1:paths=9" "a:10.0.0.1:delay=1ms|bogus=1"; do
	# shellcheck disable=SC2046,SC2086
	out=$("$SDR_DPU" $(rig_eal "sdr-lpbad-$$" 256) -- --ring-pair --name "$SDR_TMP/x.sock" \
		--ip 10.0.0.1 --instance --name "$SDR_TMP/y.sock" --ip 10.0.0.2 --link-peer $bad 2>&1)
	rc=$?
	[ $rc != 0 ] && echo "$out" | grep -q "link-peer" ||
		{ echo "$out"; sdr_fail "--link-peer $bad: rc $rc, no message"; }
	echo "refused: --link-peer $bad: $(echo "$out" | grep link-peer | head -1)"
done

sdr_start_ring_pair linkpeer --link delay=1s,rate=100mbit \
	--link-peer "froma:10.0.0.1:delay=20ms,rate=1gbit,buffer=4MB" --link-peer "nobody:10.0.0.77:delay=5ms|delay=7ms"
grep -q "link emulator on RX of port 1: nobody:10.0.0.77:delay=5ms | delay=7ms" "$DPU_LOG" ||
	{ cat "$DPU_LOG"; sdr_fail "the daemon did not print the profile of two paths"; }
grep -q "link emulator on RX of port 1: froma:10.0.0.1:delay=20ms,rate=1gbit,buffer=4MB" "$DPU_LOG" ||
	{ cat "$DPU_LOG"; sdr_fail "the daemon did not print the profile"; }
sdr_xfer "" --json -- --sizes 1,64K,1M --count 3 --quiet
if [ -n "$TEL" ]; then
	printf '/sdr/link,1,0\n/sdr/link,1,3\n/sdr/link,1\n' |
		timeout 20 /usr/bin/python3 "$TEL" -f "sdr-linkpeer-$$" >"$SDR_TMP/tel.log" 2>&1
fi
rig_stop "$DPU_PID" || sdr_fail "daemon did not stop cleanly"
/usr/bin/python3 - "$SDR_TMP/recv.log" "$STATS" "$SDR_TMP/tel.log" <<'PY' || { cat "$DPU_LOG"; sdr_fail "lanes"; }
import json, os, sys
msgs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{"msg"')]
assert len(msgs) == 9 and all(m["status"] == "complete" for m in msgs), msgs
first = min(m["t_ms"] for m in msgs)
print("first message complete after %.1f ms (profile delay 20 ms)" % first)
assert first >= 19.9, "faster than the profile's delay"
d = json.load(open(sys.argv[2]))
a, b = d["instances"]
tot = b["link"]
lanes = {l["lane"].split(":")[0]: l for l in tot["lanes"]}
assert list(lanes) == ["froma", "nobody/p0", "nobody/p1", "default"], list(lanes)
assert tot["lanes"][0]["lane"] == "froma:10.0.0.1:delay=20ms,rate=1gbit,buffer=4MB"
assert tot["lanes"][1]["lane"] == "nobody/p0:10.0.0.77:delay=5ms", tot["lanes"][1]["lane"]
assert tot["lanes"][2]["lane"] == "nobody/p1:10.0.0.77:delay=7ms", tot["lanes"][2]["lane"]
assert tot["lanes"][3]["lane"] == "default:delay=1s,rate=100mbit,buffer=1.5MB"
for k in ("pkts_in", "delivered", "released", "bytes_in", "held"):
    assert tot[k] == sum(l[k] for l in tot["lanes"]), k
assert lanes["froma"]["pkts_in"] == a["tx_pkts"] > 0, (lanes["froma"]["pkts_in"], a["tx_pkts"])
assert lanes["froma"]["released"] == b["rx_pkts"]
assert lanes["default"]["pkts_in"] == 0
assert lanes["nobody/p0"]["pkts_in"] == 0 and lanes["nobody/p1"]["pkts_in"] == 0
assert a["link"]["on"] == 0 and a["link"]["lanes"] == []
print("lane froma: in %d released %d (A sent %d); default, nobody/p0 and nobody/p1: 0"
      % (lanes["froma"]["pkts_in"], lanes["froma"]["released"], a["tx_pkts"]))
tel = [json.loads(l) for l in open(sys.argv[3]) if l.startswith("{")] if os.path.exists(sys.argv[3]) else []
if tel:
    t0, t2, tall = (o["/sdr/link"] for o in tel if "/sdr/link" in o)
    assert t0["lane"] == "froma:10.0.0.1:delay=20ms,rate=1gbit,buffer=4MB" and t0["lanes"] == 4, t0
    assert t2["lane"] == "default:delay=1s,rate=100mbit,buffer=1.5MB" and t2["pkts_in"] == 0, t2
    assert t0["pkts_in"] == tall["pkts_in"] == lanes["froma"]["pkts_in"], (t0, tall)
    print("telemetry /sdr/link,1,LANE: ok")
PY

# --link of paths (no profile): lanes default/p0..p3, a sprayed SR QP's
# frames spread over them by their source ports, every frame A sent in one
# of them; the start-up line gives the paths back
sdr_start_ring_pair linkpaths --paths 16 --link "delay=2ms | delay=3ms | delay=4ms | delay=5ms"
grep -q "link emulator on RX of port 1: delay=2ms | delay=3ms | delay=4ms | delay=5ms" "$DPU_LOG" ||
	{ cat "$DPU_LOG"; sdr_fail "the daemon did not print --link's paths"; }
sdr_xfer 2 --quiet -- --rel sr --sizes 1M --count 4 --quiet
rig_stop "$DPU_PID" || sdr_fail "daemon did not stop cleanly"
/usr/bin/python3 - "$STATS" <<'PY' || { cat "$DPU_LOG"; sdr_fail "--link paths"; }
import json, sys
a, b = json.load(open(sys.argv[1]))["instances"]
tot = b["link"]
names = [l["lane"] for l in tot["lanes"]]
assert names == ["default/p%d:delay=%dms" % (k, k + 2) for k in range(4)], names
for k in ("pkts_in", "delivered", "released", "bytes_in", "held"):
    assert tot[k] == sum(l[k] for l in tot["lanes"]), k
n = [l["pkts_in"] for l in tot["lanes"]]
assert sum(n) == a["tx_pkts"] > 0, (n, a["tx_pkts"])
assert sum(1 for x in n if x > 0) >= 2, n
print("--link of 4 paths: frames per path %s (A sent %d)" % (n, a["tx_pkts"]))
PY
echo "link_peer: frames from A took profile froma only; lanes add up to the totals;" \
	"bad profiles refused; --link of paths"
