#!/usr/bin/env bash
# Two DPUs in one process over a net_ring pair: messages from 1 B to 64 MiB
# arrive bit-exact with full bitmaps; no drop counter moves.
. "$(dirname "$0")/lib.sh"
sdr_start_ring_pair ring
port=$(rig_free_port)
sizes=${SDR_SIZES:-1,2,3,7,100,1023,1024,1025,4095,4096,4097,8191,32768,65536,65537,1M,4M,16M,64M}
"$SDR_RECV" --dpu "$SOCK_B" --server --bind 127.0.0.1 --port "$port" --timeout 120 \
	>"$SDR_TMP/recv.log" 2>&1 &
rpid=$!
sleep 0.3
"$SDR_SEND" --dpu "$SOCK_A" --connect "127.0.0.1:$port" --sizes "$sizes" --count 2 --seed 7 \
	--timeout 120 >"$SDR_TMP/send.log" 2>&1
srv=$?
wait $rpid
rrv=$?
cat "$SDR_TMP/recv.log"
tail -3 "$SDR_TMP/send.log"
# --print-qp with no peer: each tool prints its QP info and exits 0 having
# closed its context (a sanitizer build's leak check fails the exit otherwise)
for t in "$SDR_SEND" "$SDR_RECV"; do
	"$t" --dpu "$SOCK_A" --print-qp --sizes 4K --count 1 >"$SDR_TMP/pq.log" 2>&1
	prv=$?
	[ $prv = 0 ] || { cat "$SDR_TMP/pq.log"; sdr_fail "${t##*/} --print-qp exited $prv"; }
	grep -q '^QPINFO ' "$SDR_TMP/pq.log" || sdr_fail "${t##*/} --print-qp printed no QP info"
done
rig_stop "$DPU_PID"
[ $srv = 0 ] || { cat "$SDR_TMP/send.log"; sdr_fail "sdr-send exited $srv"; }
[ $rrv = 0 ] || sdr_fail "sdr-recv exited $rrv"
nmsg=$(( $(echo "$sizes" | tr ',' '\n' | wc -l) * 2 ))
got=$(sdr_json_qp_sum msgs_recv)
[ "$got" = "$nmsg" ] || sdr_fail "daemon counted $got complete receives, expected $nmsg"
for c in bad_icrc no_recv stale_gen bad_len bad_va bad_rkey dup_pkt dup_imm imm_mismatch tx_full cq_lost; do
	v=$(sdr_json_drop $c)
	[ "$v" = 0 ] || sdr_fail "drop counter $c = $v on a clean link"
done
# per-message lines: a header names the columns; 'time' is ms since the
# tool's first post in both tools (non-decreasing in completion order), and
# a send's completion time (post -> completion) never exceeds its 'time'
/usr/bin/python3 - "$SDR_TMP/send.log" "$SDR_TMP/recv.log" "$nmsg" <<'PY' || sdr_fail "per-message output"
import re, sys
for path, sender in ((sys.argv[1], True), (sys.argv[2], False)):
    lines = [l for l in open(path) if l.startswith(("# msg", "msg "))]
    assert lines[0].startswith("# msg INDEX size BYTES STATUS"), (path, lines[0])
    assert "time MS_SINCE_FIRST_POST" in lines[0], lines[0]
    assert ("completion MS_FROM_POST_TO_COMPLETION" in lines[0]) == sender, lines[0]
    rows = lines[1:]
    assert len(rows) == int(sys.argv[3]), (path, len(rows))
    prev = 0.0
    for l in rows:
        t = float(re.search(r" time ([0-9.]+) ms ", l).group(1))
        assert t >= prev, (path, l)
        prev = t
        if sender:
            c = float(re.search(r" completion ([0-9.]+) ms", l).group(1))
            assert 0 < c <= t + 0.001, l
print("per-message output: headers, time since first post, completion <= time")
PY
# every packet placed once: rx_pkts = the messages' packets (ceil(size/MTU),
# at least 8 with a user immediate; sdr-send's message 0 has none)
want=$(/usr/bin/python3 "$(dirname "$0")/sr_check.py" --print-first-pass --sizes "$sizes" --count 2)
got=$(sdr_json_qp_sum rx_pkts)
[ "$got" = "$want" ] || sdr_fail "QPs placed $got packets, the messages have $want"
echo "ring pair: $nmsg messages bit-exact"
