#!/usr/bin/env bash
# A link emulator with a delay and no rate (--link delay=2s) on a ring pair
# with 512 MB of EAL memory: its worst case (2 s of a 10 Gbit/s port) does
# not fit, and the daemon must start anyway, with a note, the emulator
# capped to the mbufs it got (overload would count as dropped_limit), and
# deliver a transfer 2 s late, every frame accounted for; at teardown the
# QP-CLOSED sent later meets the other end's tombstone (tomb_closed).
. "$(dirname "$0")/lib.sh"
sdr_start_ring_pair linkdelay --link delay=2s
grep -q "note: --link: EAL memory holds [0-9]* mbufs per RX queue" "$DPU_LOG" ||
	{ cat "$DPU_LOG"; sdr_fail "no note about the capped emulator"; }
lim=$(sed -n 's/.*link emulator on RX of port [0-9]*: delay=2s,limit=\([0-9]*\).*/\1/p' "$DPU_LOG")
[ -n "$lim" ] && [ "$lim" -ge 1024 ] && [ "$lim" -lt 65536 ] ||
	{ cat "$DPU_LOG"; sdr_fail "emulator limit '$lim' not capped below the default 65536"; }
sdr_xfer "" --json -- --sizes 1,64K,1M,4M --count 2 --quiet
sleep 2.5 # the QP-CLOSED of each QP's teardown is 2 s on its way as well
rig_stop "$DPU_PID" || sdr_fail "daemon did not stop cleanly"
/usr/bin/python3 - "$SDR_TMP/recv.log" "$STATS" <<'PY' || { cat "$SDR_TMP/recv.log"; sdr_fail "delay or accounting"; }
import json, sys
msgs = [json.loads(l) for l in open(sys.argv[1]) if l.startswith('{"msg"')]
assert len(msgs) == 8 and all(m["status"] == "complete" for m in msgs), msgs
first = min(m["t_ms"] for m in msgs)
print("first message complete after %.0f ms" % first)
assert first >= 1990, "a message arrived after %.1f ms, less than the 2 s delay" % first
d = json.load(open(sys.argv[2]))
b = d["instances"][1]
assert b["link"]["on"] == 1
l = b["link"]
print("emulator: in %d delivered %d released %d dropped_limit %d" %
      (l["pkts_in"], l["delivered"], l["released"], l["dropped_limit"]))
assert l["pkts_in"] == l["delivered"] == l["released"] == b["rx_pkts"] > 0
assert l["dropped_limit"] == 0
# teardown: each end destroys its QP and sends a QP-CLOSED, 2 s on its
# way; the one sent later arrives after the other end destroyed its QP and
# meets that end's tombstone: tomb_closed, not unknown_qp (a QP-CLOSED is
# never answered)
dr = d["drops"]
print("teardown: tomb_closed %d, unknown_qp %d, closed_tx %d" %
      (dr["tomb_closed"], dr["unknown_qp"], dr["closed_tx"]))
assert dr["tomb_closed"] >= 1 and dr["unknown_qp"] == 0, dr
PY
echo "link delay=2s without rate: started with a capped emulator, transfer delivered 2 s late"
