#!/usr/bin/env bash
# Two workers: where the ring pair steers and where the hand-off takes over.
# A net_ring pair leads the TX queue q of one DPU to the RX queue q of the
# other; the daemon gives the k-th context of each instance to worker k mod
# 2, so the sender's and the receiver's first contexts share worker 0 and no
# packet is handed off (handoff_rx = 0). With a placeholder context attached
# to the receiving DPU first, the receiver lands on worker 1: every packet
# of the transfer, both ways, arrives on the other worker's queue and
# crosses the hand-off ring (handoff_rx = all packets sent), and the
# transfer still verifies (sdr-recv checks every byte), with nothing dropped.
. "$(dirname "$0")/lib.sh"
TEL=$(command -v dpdk-telemetry.py) || sdr_skip "dpdk-telemetry.py not installed (Debian package dpdk)"

run() { # TAG PLACEHOLDER(0|1): prints the workers' and the ports' counters as JSON
	local tag=$1 ph=$2 sa=$SDR_TMP/a$1.sock sb=$SDR_TMP/b$1.sock port pport rpid ppid=
	# shellcheck disable=SC2046
	"$SDR_DPU" $(rig_eal "sdr-ho$tag-$$" 512) --lcores=0@0,1@1,2@0 -- --ring-pair --workers 2 \
		--name "$sa" --ip 10.0.0.1 --instance --name "$sb" --ip 10.0.0.2 \
		>"$SDR_TMP/dpu$tag.log" 2>&1 &
	DPU_PID=$!
	SDR_PIDS+=("$DPU_PID")
	rig_wait_sock "$sa" "$DPU_PID" && rig_wait_sock "$sb" "$DPU_PID" ||
		{ cat "$SDR_TMP/dpu$tag.log" >&2; sdr_fail "daemon did not start"; }
	if [ "$ph" = 1 ]; then # attached, never used: takes worker 0 of instance b
		pport=$(rig_free_port)
		"$SDR_RECV" --dpu "$sb" --server --bind 127.0.0.1 --port "$pport" --timeout 60 --quiet \
			>"$SDR_TMP/ph$tag.log" 2>&1 &
		ppid=$!
		SDR_PIDS+=("$ppid")
		for _ in $(seq 50); do grep -q "context 0" "$SDR_TMP/dpu$tag.log" && break; sleep 0.1; done
		grep -q "(context 0, worker 0)" "$SDR_TMP/dpu$tag.log" || sdr_fail "placeholder did not attach"
	fi
	port=$(rig_free_port)
	"$SDR_RECV" --dpu "$sb" --server --bind 127.0.0.1 --port "$port" --timeout 30 --quiet \
		>"$SDR_TMP/r$tag.log" 2>&1 &
	rpid=$!
	sleep 0.3
	"$SDR_SEND" --dpu "$sa" --connect "127.0.0.1:$port" --sizes 4K,1M --count 4 --quiet \
		>"$SDR_TMP/s$tag.log" 2>&1 || { cat "$SDR_TMP/s$tag.log" "$SDR_TMP/r$tag.log" >&2; sdr_fail "transfer failed"; }
	wait "$rpid" || { cat "$SDR_TMP/r$tag.log" >&2; sdr_fail "receiver failed (verification)"; }
	printf '/sdr/workers\n/sdr/stats\n' | timeout 20 /usr/bin/python3 "$TEL" -f "sdr-ho$tag-$$" 2>&1 |
		grep '^{' >"$SDR_TMP/tel$tag.json"
	[ -n "$ppid" ] && { kill "$ppid" 2>/dev/null; wait "$ppid" 2>/dev/null; }
	grep -q "attached (context [0-9]*, worker $((ph)))" "$SDR_TMP/dpu$tag.log" ||
		sdr_fail "receiver not on worker $ph"
	rig_stop "$DPU_PID"
}

run same 0
run other 1
# the data packets of each sdr-send run (the CTS come on top)
first=$(/usr/bin/python3 "$(dirname "$0")/sr_check.py" --print-first-pass --sizes 4K,1M --count 4)
/usr/bin/python3 - "$SDR_TMP/telsame.json" "$SDR_TMP/telother.json" "$first" <<'PY' || sdr_fail "hand-off counts"
import json, sys
first = int(sys.argv[3])
def load(p):
    d = {}
    for l in open(p):
        d.update(json.loads(l))
    return d["/sdr/workers"], d["/sdr/stats"]
for path, crossing in ((sys.argv[1], False), (sys.argv[2], True)):
    w, st = load(path)
    sent = st["inst0_tx_pkts"] + st["inst1_tx_pkts"]
    assert w["workers"] == 2, w
    assert sent == st["inst0_rx_pkts"] + st["inst1_rx_pkts"] and sent > first, (st, first)
    assert st["handoff_full"] == 0, st
    # (a QP-CLOSED a destroyed QP sends its peer at teardown finds no QP
    # when the peer is gone as well: it is dropped where it arrives)
    gone = st["unknown_qp"] + st["tomb_pkts"] + st["tomb_closed"]
    assert gone <= st["closed_tx"], ("only QP-CLOSED frames find no QP", st)
    if crossing:
        assert w["handoff_rx"] == sent - gone, ("every packet crosses", w["handoff_rx"], sent,
                                                gone)
        assert w["w0_handoff_rx"] > 0 and w["w1_handoff_rx"] > 0, w
    else:
        assert w["handoff_rx"] == 0, ("steered by the ring pair", w)
    print("%s: %d packets, %d handed off (worker 0: %d, worker 1: %d)"
          % ("receiver on worker 1" if crossing else "same worker", sent, w["handoff_rx"],
             w["w0_handoff_rx"], w["w1_handoff_rx"]))
PY
