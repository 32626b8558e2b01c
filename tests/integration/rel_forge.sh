#!/usr/bin/env bash
# Control packets are authenticated (wire format version 2, docs/wire-format.md
# section 6): an attacker on the path who knows both QPs' numbers and
# addresses (from the QP info the tools print) but not the destination QP's
# 64-bit control key forges ACKs (FULL, CLOSED), CTS, NACKs, QP-CLOSED,
# RS(1,1) PARITY with its own bytes, and ABORTs
# (tests/integration/rel_forge.py, scapy),
# each in version 2 frames with a random key and in version 1 frames.
#
# Rig: two daemons in two namespaces (veth + net_af_packet), 10 ms RTT, 2 %
# loss on the data direction only (so that a falsely completed send is
# visible: its lost packets are never retransmitted), an AUTO QP pair
# (ACK, NACK and PARITY are all meaningful to it), N messages of 1000 B
# (one packet each), the sender paced so that the transfer outlasts the
# attack. Frames to the sender are injected on the receiver's veth and the
# other way round. One case per attack, fresh daemons each.
#
# Each case asserts: sdr-send completed all N sends with status 0 and
# sdr-recv verified all N receives (so the sender completed only what the
# receiver really got and no receive completed with attacker bytes); no QP
# died (no send error, partial receive or global timeout); the target
# daemon counted the forged frames exactly: ctrl_bad_key = version 2 frames,
# ctrl_bad = version 1 frames; the sender accepted exactly the control
# packets the receiver sent (ACKs, NACKs, CTS each at most what was sent; the
# sum plus those that arrived before the sender connected or after it closed
# = what was sent) and the receiver no ABORT; every frame is accounted
# for (rel_check.py). All cases run; the test names the failed ones.
# Skipped (77) without root or scapy.
# Control experiments (keyed-parity, keyed-ack-closed): the same frames
# with the QP's real key must do harm (receives completed with the
# attacker's bytes, sends completed -EIO), and the key must not be refused:
# the forged frames are well formed, and only the key stops them.
# The early drop (parity dropped on its header before its ICRC when its
# receive or submessage is complete, docs/security.md) opens no hole:
# parity-done forges RS(1,1) parity naming receives already completed,
# parity-done-icrc the same with a corrupted ICRC; without the key both are
# refused exactly as before (ctrl_bad_key / ctrl_bad, or bad_icrc), never
# dropped early. withkey-parity-done (the key, a valid
# ICRC) and withkey-parity-done-icrc (the key, a corrupted ICRC) are dropped
# early, each frame exactly once in ec_parity_early, and do no harm (every
# message delivered and verified). In these four the daemons' AUTO
# candidates are sr and rs:1:1, so that honest parity is never dropped
# early (one packet per message, the first: it completes the receive), and
# the counts are exact.
#   env: SDR_FORGE_CASES ("ack-full ack-closed cts nack closed parity abort
#        keyed-parity keyed-ack-closed parity-done parity-done-icrc
#        withkey-parity-done withkey-parity-done-icrc"),
#        SDR_FORGE_MSGS (400), SDR_FORGE_RATE (1m: sdr-send --rate)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
. "$here/sr_lib.sh"
PY=/usr/bin/python3
$PY -c 'import scapy.contrib.roce' 2>/dev/null || sdr_skip "python3-scapy not installed"
sr_netns_setup

cases=${SDR_FORGE_CASES:-"ack-full ack-closed cts nack closed parity abort keyed-parity keyed-ack-closed parity-done parity-done-icrc withkey-parity-done withkey-parity-done-icrc"}
N=${SDR_FORGE_MSGS:-400}
SIZE=1000
RATE=${SDR_FORGE_RATE:-1m}
failed=()
n=0

# keyed_check CASE SEND_LOG RECV_LOG A_JSON B_JSON FORGED TARGET STILL: the
# control experiment (the attacker has the key) must show the attack's effect
keyed_check() {
	local c=$1 slog=$2 rlog=$3 bad=0
	[ "$8" = 1 ] || { echo "  FAIL: sdr-send ended before the attack did"; bad=1; }
	$PY - "$@" <<'PY' || bad=1
import json, re, sys
c, slog, rlog, aj, bj, forged, target = sys.argv[1:8]
A, B = json.load(open(aj)), json.load(open(bj))
f = dict((l.split()[0], int(l.split()[1])) for l in open(forged))
T = A if target == "a" else B
bad = []
if T["drops"].get("ctrl_bad_key"):
    bad.append("ctrl_bad_key = %d: the real key was refused" % T["drops"]["ctrl_bad_key"])
if T["drops"].get("ctrl_bad") != f["v1"]:
    bad.append("ctrl_bad = %s, expected %d (version 1)" % (T["drops"].get("ctrl_bad"), f["v1"]))
if c == "keyed-parity":
    n = len(re.findall(r"error \(data mismatch", open(rlog).read()))
    print("  receives completed with the attacker's bytes: %d" % n)
    if not n:
        bad.append("no receive took the attacker's parity: the forged PARITY frames are not effective")
elif c == "keyed-ack-closed":
    n = A["instances"][0]["qp_totals"]["sr_send_closed"]
    print("  sends completed -EIO by the forged CLOSED entries: %d" % n)
    if not n:
        bad.append("no send closed: the forged ACK frames are not effective")
for x in bad:
    print("  FAIL:", x)
sys.exit(1 if bad else 0)
PY
	return $bad
}

for c in $cases; do
	n=$((n + 1))
	# to the sender: 2 % loss on the data direction, so that a send
	# completed by a forged ACK misses its retransmissions; to the
	# receiver: no loss on its side, which drops forged frames too
	keyed=() attack=$c opts=() allow=ctrl_bad,ctrl_bad_key count=$N
	case $c in
	keyed-*) keyed=(--use-key) attack=${c#keyed-} ;;
	withkey-*) opts=(--use-key) attack=${c#withkey-} ;;
	esac
	case $attack in
	*-icrc) opts+=(--bad-icrc) attack=${attack%-icrc} allow=bad_icrc ;;
	esac
	[ "$attack" = parity-done ] && opts+=(--recv-log "$SDR_TMP/$c-recv.log")
	# extra: the parity attacks forge RS(1,1) parity; an AUTO receiver
	# refuses a k below the smallest k of its candidates (ec_param_mismatch),
	# so the daemons list rs:1:1 among their candidates: the key is then
	# the only check that stands between the forged parity and the buffer
	extra=()
	case $attack in
	# (the QPs must outlive the attack: scapy builds the 800 frames in 2-5 s
	# on a loaded 2-vCPU machine, after its own import, and the rounds take
	# 0.6 s more, while N messages take some 5 s at the lowest rate, 1m; so
	# sdr-send sends 2N, some 10 s, and the attack still names the first N)
	parity) rounds=3 interval=0.3 target=b lossb="" count=$((2 * N))
		extra=(--auto-schemes "sr,rs:1:1,rs:8:2") ;;
	# (one RS(1,1) parity packet per honest EC message: none is early)
	parity-done) rounds=3 interval=0.3 target=b lossb="" extra=(--auto-schemes "sr,rs:1:1") ;;
	abort) rounds=10 interval=0.1 target=b lossb="" ;;
	*) rounds=30 interval=0.05 target=a lossb=",loss=2%" ;;
	esac
	sdr_log "case $n: forged $c, $rounds rounds, $count messages"
	A_SOCK=$SDR_TMP/$c-a.sock B_SOCK=$SDR_TMP/$c-b.sock A_JSON=$SDR_TMP/$c-a.json B_JSON=$SDR_TMP/$c-b.json
	A_LOG=$SDR_TMP/$c-a.log B_LOG=$SDR_TMP/$c-b.log
	sr_dpu a "$A_SOCK" "$A_JSON" "$A_LOG" "delay=5ms,seed=$((2 * n + 1))" "${extra[@]}" ||
		sdr_fail "daemon A did not start"
	PA=$RIG_PID
	SDR_PIDS+=("$PA")
	sr_dpu b "$B_SOCK" "$B_JSON" "$B_LOG" "delay=5ms$lossb,seed=$((2 * n + 2))" "${extra[@]}" ||
		sdr_fail "daemon B did not start"
	PB=$RIG_PID
	SDR_PIDS+=("$PB")
	port=$((20000 + RANDOM % 20000))
	slog=$SDR_TMP/$c-send.log rlog=$SDR_TMP/$c-recv.log
	# the attacker first (scapy takes a while to load): it waits for the
	# QPINFO lines of both tools, then for both QPs to connect
	if [ $target = a ]; then ns=$NS_B ifc=$VETH_B; else ns=$NS_A ifc=$VETH_A; fi
	ip netns exec "$ns" $PY "$here/rel_forge.py" --attack "$attack" "${keyed[@]}" "${opts[@]}" --sender "@$slog" \
		--receiver "@$rlog" --iface "$ifc" --messages "$N" --size $SIZE --rounds $rounds \
		--interval $interval --seed $n --queues "${SDR_TEST_QPAIRS:-1}" >"$SDR_TMP/$c-forged" &
	fpid=$!
	ip netns exec "$NS_B" "$SDR_RECV" --dpu "$B_SOCK" --server --bind $KIP_B --port $port \
		--print-qp --window 64 --timeout 10 >"$rlog" 2>&1 &
	rpid=$!
	ip netns exec "$NS_A" "$SDR_SEND" --dpu "$A_SOCK" --connect $KIP_B:$port --rel auto \
		--print-qp --sizes $SIZE --count "$count" --window 16 --rate "$RATE" --seed $n --timeout 10 \
		>"$slog" 2>&1 &
	spid=$!
	wait $fpid
	frv=$?
	# the QPs must outlive the attack, or its frames are not counted as forged
	still=1
	kill -0 $spid 2>/dev/null || { still=0; echo "  FAIL: sdr-send ended before the attack did"; }
	wait $spid
	srv=$?
	wait $rpid
	rrv=$?
	sleep 0.1
	rig_stop "$PA"
	rig_stop "$PB"
	ok=1
	grep -E "^(sent|receiver):" "$slog" | sed 's/^/  /'
	if [ $frv != 0 ]; then
		echo "  FAIL: the attacker could not send (exit $frv)"
		failed+=("$c")
		sdr_log "case $n: forged $c: FAILED"
		continue
	fi
	if [ ${#keyed[@]} != 0 ]; then
		# control experiment: with the key the same frames do harm
		keyed_check "$c" "$slog" "$rlog" "$A_JSON" "$B_JSON" "$SDR_TMP/$c-forged" $target $still &&
			sdr_log "case $n: forged $c (with the QP's key): the frames did harm, as they must" ||
			{ failed+=("$c"); sdr_log "case $n: forged $c: FAILED"; }
		continue
	fi
	if [ $srv != 0 ] || [ $rrv != 0 ] || ! grep -qE "^sent: $count ok, 0 failed" "$slog" ||
		! grep -qE "^receiver: $count ok, 0 failed" "$slog"; then
		ok=0
		echo "  sdr-send exited $srv, sdr-recv $rrv; sends by status, receives not verified:"
		grep -oE "^msg [0-9]+ size [0-9]+ (sent|error \([^)]*\))" "$slog" |
			sed -E 's/^msg [0-9]+ size [0-9]+ //' | sort | uniq -c | sed 's/^/    send: /'
		grep -oE "(error \((data mismatch|immediate|length|no immediate|[a-zA-Z ]+)|incomplete|partial)" "$rlog" |
			sort | uniq -c | sed 's/^/    recv: /'
	fi
	[ $still = 1 ] || ok=0
	$PY - "$A_JSON" "$B_JSON" "$SDR_TMP/$c-forged" $target <<'EOF' | sed 's/^/  /'
import json, sys
A, B = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
forged = dict((l.split()[0], int(l.split()[1])) for l in open(sys.argv[3]))
target = sys.argv[4]
T, O = (A, B) if target == "a" else (B, A)
bad = []
want = {k[5:]: v for k, v in forged.items() if k.startswith("want:")} or \
    {"ctrl_bad_key": forged["v2"], "ctrl_bad": forged["v1"]}
for k, w in want.items():
    got = sum(T["drops"].get(c, 0) for c in k.split("+")) if "+" in k else T["drops"].get(k)
    print("%s at the %s: %s (expected %d; forged v2 %d, v1 %d)"
          % (k, "sender" if target == "a" else "receiver", got, w, forged["v2"], forged["v1"]))
    if got != w:
        bad.append("%s = %s, expected %d" % (k, got, w))
# (the attacked side's veth also shows the injected frames to the other
# daemon: ICRC before address, so corrupted ones count bad_icrc there)
for k in ("ctrl_bad_key", "ctrl_bad", "ctrl_unknown", "ec_parity_early"):
    if O["drops"].get(k):
        bad.append("%s = %d at the daemon that was not attacked" % (k, O["drops"][k]))
a, b = A["instances"][0]["qp_totals"], B["instances"][0]["qp_totals"]
# what the receiver sent the sender: CTS before the sender connected count as
# qp_not_ready, a last ACK after it destroyed its QP as unknown_qp, or as
# tomb_pkts while its tombstone answers (QP-CLOSED), and the receiver's own
# QP-CLOSED as tomb_closed where the sender had destroyed its QP as well
pairs = [("ACKs", a["sr_acks_rx"], b["sr_acks_tx"]), ("NACKs", a["ec_nacks_rx"], b["ec_nacks_tx"]),
         ("CTS", a["cts_rx"], b["cts_tx"])]
for what, rx, tx in pairs:
    print("%s: sender accepted %d, receiver sent %d" % (what, rx, tx))
    if rx > tx:
        bad.append("sender accepted %d %s, the receiver sent %d" % (rx, what, tx))
rx, tx = sum(p[1] for p in pairs), sum(p[2] for p in pairs)
# (and the QP-CLOSED the receiver sends when its QP is destroyed, which
# the sender accepts while its own QP is still there)
rx += a.get("peer_closed", 0)
tx += B["drops"].get("closed_tx", 0)
early = A["drops"]["qp_not_ready"]
late = (A["drops"]["unknown_qp"] + A["drops"].get("tomb_pkts", 0) +
        A["drops"].get("tomb_closed", 0))
print("control: sender accepted %d + before connect %d + after close %d, receiver sent %d"
      % (rx, early, late, tx))
if rx + early + late != tx:
    bad.append("sender accepted %d control packets + %d before connect + %d after close,"
               " the receiver sent %d" % (rx, early, late, tx))
ab = sum(v for k, v in b.items() if k.startswith("abort") and k.endswith("_rx"))
if ab:
    bad.append("the receiver accepted %d ABORT packets" % ab)
for x in bad:
    print("FAIL:", x)
sys.exit(1 if bad else 0)
EOF
	[ "${PIPESTATUS[0]}" = 0 ] || ok=0
	$PY "$here/rel_check.py" --sender "$A_JSON" --receiver "$B_JSON" --messages "$count" \
		--first-pass "$($PY "$here/sr_check.py" --print-first-pass --sizes $SIZE --count "$count")" \
		--allow $allow | sed 's/^/  /'
	[ "${PIPESTATUS[0]}" = 0 ] || ok=0
	if [ $ok = 1 ]; then
		sdr_log "case $n: forged $c: ok"
	else
		grep -A40 "drops and errors" "$A_LOG" "$B_LOG" | grep -v "####" | head -50
		failed+=("$c")
		sdr_log "case $n: forged $c: FAILED"
	fi
done
[ ${#failed[@]} = 0 ] || sdr_fail "${#failed[@]} of $n cases failed: ${failed[*]}"
echo "forged control packets ($cases): without the QP's key every one dropped and counted (ctrl_bad_key / ctrl_bad), every message delivered bit-exact and acknowledged only when received; with the key (control experiments) the same frames do harm"
