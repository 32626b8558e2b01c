#!/usr/bin/env bash
# sdr-top and sdr-diag against daemons with --metrics. sdr-diag on
# constructed stalls (a receiver that does not post, a lossy link without
# reliability, a link that drops everything, a peer that goes away) says where each operation is
# stuck in plain words (diag_stall.py). sdr-top --once / --json list the
# QPs of a running transfer, and its live ncurses view runs in tmux: the
# table, sorting by a key, quitting. No root (ring pairs).
. "$(dirname "$0")/lib.sh"
[ "${SDR_HAVE_METRICS:-1}" = 1 ] || sdr_skip "sdr-dpu built without --metrics (Debian package libmicrohttpd-dev)"
command -v tmux >/dev/null || sdr_skip "tmux not installed (Debian package tmux)"
TOOLS=$SDR_BUILD/host/tools
. "$(dirname "$0")/../python/py_lib.sh" # (the package of this tree, ASan preloaded)
stall() { # stall SOCK_A SOCK_B METRICS_PORT SCENARIO
	timeout 60 env -u SDR_DPU "${SDR_PY_ENV[@]}" "$SDR_PYTHON" "$(dirname "$0")/diag_stall.py" \
		"$@" "$TOOLS/sdr-diag"
}
# two ring pairs: B of the first receives over a lossy link, B of the
# second over one that drops every frame
MP1=$(rig_free_port) MP2=$(rig_free_port)
sdr_start_ring_pair diag1 --metrics "127.0.0.1:$MP1" --link loss=0.02
S1A=$SOCK_A S1B=$SOCK_B
SOCK_A2=$SDR_TMP/a2.sock SOCK_B2=$SDR_TMP/b2.sock
rig_ring_pair diag2 "$SOCK_A2" "$SOCK_B2" "$SDR_TMP/dpu2.log" --metrics "127.0.0.1:$MP2" \
	--instance --link loss=1 || sdr_fail "second daemon did not start"
SDR_PIDS+=("$RIG_PID")
for s in norecv partial peerdead; do
	stall "$S1A" "$S1B" "$MP1" $s || sdr_fail "sdr-diag, $s"
done
stall "$SOCK_A2" "$SOCK_B2" "$MP2" linkdown || sdr_fail "sdr-diag, linkdown"
"$TOOLS/sdr-diag" "$MP1" >/dev/null; [ $? = 0 ] || sdr_fail "sdr-diag: something outstanding after the stalls ended"
"$TOOLS/sdr-diag" 127.0.0.1:1 >/dev/null; [ $? = 2 ] || sdr_fail "sdr-diag: exit 2 for a daemon that is not there"

for p in "${SDR_PIDS[@]}"; do rig_stop "$p"; done
SDR_PIDS=()

# a transfer for sdr-top to show (SR, paced: several seconds) on a clean pair
MP1=$(rig_free_port)
sdr_start_ring_pair top --metrics "127.0.0.1:$MP1"
S1A=$SOCK_A S1B=$SOCK_B
port=$(rig_free_port)
"$SDR_RECV" --dpu "$S1B" --server --bind 127.0.0.1 --port "$port" --timeout 30 --quiet \
	>"$SDR_TMP/r.log" 2>&1 &
rpid=$!
sleep 0.3
"$SDR_SEND" --dpu "$S1A" --connect "127.0.0.1:$port" --sizes 1M --count 150 --rel sr \
	--rate 300m --quiet >"$SDR_TMP/s.log" 2>&1 &
spid=$!
sleep 1
"$TOOLS/sdr-top" --once "$MP1" >"$SDR_TMP/once.txt" || sdr_fail "sdr-top --once failed"
cat "$SDR_TMP/once.txt"
grep -q "^sdr-top .*: 1 daemon(s), [2-9] QP(s)" "$SDR_TMP/once.txt" || sdr_fail "sdr-top --once: no QPs"
grep -Eq " sr +10\.0\.0\.2 +[0-9.]+[KMG]b/s " "$SDR_TMP/once.txt" ||
	sdr_fail "sdr-top --once: no SR QP with goodput towards 10.0.0.2"
"$TOOLS/sdr-top" --json "$MP1" | /usr/bin/python3 -c '
import json, sys
d = json.load(sys.stdin)
qs = [q for q in d["qps"] if q["scheme"] == "sr"]
assert len(qs) == 2, d
assert max(q["goodput_bps"] for q in qs) > 10e6, qs
assert any(q["pacing_rate_bps"] == 300e6 for q in qs), qs
assert d["daemons"][0]["version"] and not d["errors"], d
print("sdr-top --json: %d QPs, %.0f Mbit/s" % (len(d["qps"]), max(q["goodput_bps"] for q in qs) / 1e6))
' || sdr_fail "sdr-top --json"

# the live view in tmux
T=sdrtop$$
SDR_CLEANUPS+=("tmux kill-session -t $T")
tmux new-session -d -s "$T" -x 160 -y 30 "$TOOLS/sdr-top --sort q $MP1 127.0.0.1:1; echo sdr-top-exit=\$?; sleep 30"
pane() { tmux capture-pane -p -t "$T"; }
seen=0
for _ in $(seq 40); do
	pane >"$SDR_TMP/pane.txt"
	grep -q "INSTANCE" "$SDR_TMP/pane.txt" && grep -Eq " sr +10\.0\.0\." "$SDR_TMP/pane.txt" &&
		{ seen=1; break; }
	sleep 0.25
done
cat "$SDR_TMP/pane.txt"
[ $seen = 1 ] || sdr_fail "sdr-top in tmux: no table with the SR QPs"
grep -q "sort: qp" "$SDR_TMP/pane.txt" || sdr_fail "sdr-top: --sort q not shown"
grep -q "unreachable: 127.0.0.1:1" "$SDR_TMP/pane.txt" || sdr_fail "sdr-top: a daemon that is not there is not named"
grep -q "drops:" "$SDR_TMP/pane.txt" || sdr_fail "sdr-top: no drops line"
tmux send-keys -t "$T" r
sleep 1.5
pane | grep -q "sort: retx_pkts" || { pane; sdr_fail "sdr-top: key r did not sort by retransmissions"; }
tmux send-keys -t "$T" Q
quit=0
for _ in $(seq 20); do pane | grep -q "sdr-top-exit=0" && { quit=1; break; }; sleep 0.2; done
[ $quit = 1 ] || { pane; sdr_fail "sdr-top: Q did not quit (with status 0)"; }
wait $spid || { cat "$SDR_TMP/s.log"; sdr_fail "transfer failed"; }
wait $rpid || sdr_fail "receiver failed"
echo "top_diag: OK"
