#!/usr/bin/env bash
# Messages without immediate, one packet each (opcode 0x2A,
# docs/wire-format.md §2), over a ring pair with the link emulator on both
# directions, for every reliability: NONE on a clean link (it recovers
# nothing), SR, EC (RS(8,2)) and AUTO with 1 % loss, duplication and
# reordering. sdr-send --no-imm sends 1 B .. 4 KiB messages (one MTU each:
# one packet, no immediate-only packets); sdr-recv verifies every byte and
# that each completed with immediate 0 (SDR_CQE_F_IMM). From the daemon's
# counters, exactly: the sender's data packets = one per message + the
# retransmitted ones, every frame accounted for (rel_check.py), no
# imm_mismatch / dup_imm / bad_len / bad_va, and NONE's receiver placed
# exactly one packet per message.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
sizes=1,64,1000,4096
count=${SDR_SMALL_COUNT:-300}
msgs=$((4 * count))
failed=()
n=0
for rel in none sr ec auto; do
	n=$((n + 1))
	link="delay=1ms"
	[ $rel != none ] && link="$link,loss=1e-2,dup=1%,reorder=1%:1ms"
	STATS=$SDR_TMP/$n.json DPU_LOG=$SDR_TMP/$n-dpu.log
	rig_ring_pair "small-$n" "$SDR_TMP/$n-a.sock" "$SDR_TMP/$n-b.sock" "$DPU_LOG" \
		--link "$link,seed=$((2 * n + 1))" --instance --link "$link,seed=$((2 * n + 2))" \
		--stats-json "$STATS" || sdr_fail "daemon did not start"
	DPU_PID=$RIG_PID
	SDR_PIDS+=("$DPU_PID")
	port=$(rig_free_port)
	ec=()
	[ $rel = ec ] && ec=(--ec rs:8:2)
	"$SDR_RECV" --dpu "$SDR_TMP/$n-b.sock" --server --bind 127.0.0.1 --port "$port" \
		--timeout 30 --window 64 --quiet >"$SDR_TMP/$n-recv.log" 2>&1 &
	rpid=$!
	sleep 0.3
	"$SDR_SEND" --dpu "$SDR_TMP/$n-a.sock" --connect "127.0.0.1:$port" --rel $rel "${ec[@]}" \
		--no-imm --sizes $sizes --count "$count" --seed $((40 + n)) --window 64 --timeout 30 \
		--quiet >"$SDR_TMP/$n-send.log" 2>&1
	srv=$?
	wait $rpid
	rrv=$?
	rig_stop "$DPU_PID" || sdr_fail "daemon did not stop cleanly"
	ok=1
	grep -E "^(sent|receiver|received):" "$SDR_TMP/$n-send.log" "$SDR_TMP/$n-recv.log" |
		sed 's/^/  /'
	if [ $srv != 0 ] || [ $rrv != 0 ] ||
		! grep -qE "^received: $msgs ok, 0 failed" "$SDR_TMP/$n-recv.log"; then
		ok=0
		echo "  sdr-send exited $srv, sdr-recv $rrv"
		grep -m5 "error (" "$SDR_TMP/$n-recv.log" | sed 's/^/    /'
	fi
	first=$(/usr/bin/python3 "$here/sr_check.py" --print-first-pass --no-imm --sizes $sizes \
		--count "$count")
	# (with $SDR_CHANNELS W > 1, the tools' default: W messages of the
	# daemons per message, the one-byte fillers among them with an immediate)
	w=${SDR_CHANNELS:-1}
	[ "$w" != 1 ] || [ "$first" = "$msgs" ] ||
		{ ok=0; echo "  first pass $first, expected one packet per message"; }
	/usr/bin/python3 - "$STATS" "$rel" "$msgs" "$first" "$w" <<'PY' || ok=0
import json, sys
d = json.load(open(sys.argv[1]))
rel, msgs, first, w = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
snd, rcv = (i["qp_totals"] for i in d["instances"])
# (W > 1: the fillers carry an immediate, in immediate-only packets that a
# duplicate or a repeat makes dup_imm)
bad = ["%s = %d" % (c, d["drops"][c])
       for c in ("imm_mismatch", "dup_imm", "bad_len", "bad_va") if d["drops"][c]
       and not (c == "dup_imm" and w > 1)]
if rel == "none":
    # no loss, no recovery: exactly one data packet per message each way
    # (W > 1: the first pass, and W messages per message)
    if snd["tx_pkts"] != first or rcv["rx_pkts"] != first or rcv["msgs_recv"] != msgs * w:
        bad.append("tx_pkts %d rx_pkts %d msgs_recv %d, want %d, %d, %d"
                   % (snd["tx_pkts"], rcv["rx_pkts"], rcv["msgs_recv"], first, first, msgs * w))
print("  %s: sender data packets %d (%d retransmitted), receiver placed %d for %d messages"
      % (rel, snd["tx_pkts"], snd["sr_retx_pkts"], rcv["rx_pkts"], msgs))
for b in bad:
    print("  FAIL:", b)
sys.exit(1 if bad else 0)
PY
	if [ $rel != none ]; then
		/usr/bin/python3 "$here/rel_check.py" --ring "$STATS" --messages "$msgs" \
			--first-pass "$first" --min-repair 1 --nonzero dropped_loss | sed 's/^/  /'
		[ "${PIPESTATUS[0]}" = 0 ] || ok=0
	fi
	if [ $ok = 1 ]; then
		sdr_log "$rel: $msgs one-packet messages ok"
	else
		grep -A40 "drops and errors" "$DPU_LOG" | head -40
		failed+=("$rel")
	fi
done
[ ${#failed[@]} = 0 ] || sdr_fail "failed: ${failed[*]}"
echo "one-packet messages without immediate: bit-exact on none, sr, ec and auto, one packet per message"
