#!/usr/bin/env bash
# Soak: one daemon pair (ring pair, no root) runs transfers back to back for
# SDR_SOAK_SECONDS (default 3600), rotating the reliability SR, EC (RS(16,4))
# and AUTO, messages of 1 B to 4 MiB, over a link emulator on both
# directions with 2 ms delay, Bernoulli loss 1e-3, Gilbert-Elliott loss
# bursts (mean 4 frames), 1 % reordering and 0.5 % duplication.
#
# Asserts: every round's messages arrive bit-exact (sdr-recv verifies
# length, immediate and every byte; sdr-send reports all sends ok); at the
# end the counter identities of the whole run hold (rel_check.py: every
# data packet = first pass + retransmission, every received frame placed,
# accepted as control or counted as a drop; all messages sent and received,
# none partial, no timeout); and the daemon does not grow: a least-squares
# line of its resident memory (/proc/PID/smaps after every round, once the
# round's hosts are torn down) against the round number, fitted over the
# run but its first SDR_SOAK_WARMUP rounds (default the first tenth, at
# least 20: they touch the pools' pages and lift malloc's high-water
# mark), rises by at most SDR_SOAK_MAX_SLOPE bytes per round (default
# 1024; reported in bytes per round and MB per hour, per kind of mapping:
# heap, other anonymous, shared, file, shared with hosts; a short run is
# sensitive to one late step of malloc's high-water mark: soak 10 minutes
# or more; docs/reliability.md "Soak: what grew"), and the mbufs out of
# each port's pool at rest (telemetry instN_mbufs_in_use, sampled after
# every round once the link is idle) never exceed the value at rest after
# the first round by more than 16 (a leak of one mbuf per message would
# pass that within a round).
#
# Suite `soak`, not run by tests/run.sh:
#   meson test -C build --suite soak                              (1 hour)
#   SDR_SOAK_SECONDS=120 meson test -C build --suite soak         (2 minutes)
# (meson's timeout for it is 4200 s; for longer runs add --timeout-multiplier)
#   env: SDR_SOAK_SECONDS (3600), SDR_SOAK_SIZES (1,100,4K,64K,1M,4M),
#        SDR_SOAK_COUNT (4: repetitions of the sizes per round), SDR_SOAK_LINK,
#        SDR_SOAK_WARMUP (auto), SDR_SOAK_MAX_SLOPE (1024 bytes per round)
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
TEL=$(command -v dpdk-telemetry.py) || sdr_skip "dpdk-telemetry.py not installed (Debian package dpdk)"
duration=${SDR_SOAK_SECONDS:-3600}
sizes=${SDR_SOAK_SIZES:-1,100,4K,64K,1M,4M}
count=${SDR_SOAK_COUNT:-4}
link=${SDR_SOAK_LINK:-delay=2ms,loss=1e-3,ge=0.0002:0.25,reorder=1%:3ms,dup=0.5%}
prefix="sdr-soak-$$" # (rig_ring_pair's EAL file prefix for TAG soak: telemetry)
SOCK_A=$SDR_TMP/a.sock SOCK_B=$SDR_TMP/b.sock STATS=$SDR_TMP/stats.json DPU_LOG=$SDR_TMP/dpu.log
RIG_MEM_MB=1024 rig_ring_pair soak "$SOCK_A" "$SOCK_B" "$DPU_LOG" --link "$link,seed=11" \
	--instance --link "$link,seed=12" --stats-json "$STATS" || sdr_fail "daemon did not start"
DPU_PID=$RIG_PID
SDR_PIDS+=("$DPU_PID")

# sample: "RSS HEAP ANON SHMEM FILE HOST (kB) MBUFS_A MBUFS_B" of the idle daemon
# (once the last round's hosts are torn down: HOST 0)
sample() {
	local rss m
	rss=$(/usr/bin/python3 "$here/mem_slope.py" sample "$DPU_PID" --at-rest 10) || return 1
	m=$(echo /sdr/stats | timeout 20 /usr/bin/python3 "$TEL" -f "$prefix" 2>/dev/null |
		/usr/bin/python3 -c '
import json, sys
o = next(json.loads(l) for l in sys.stdin if l.startswith("{"))["/sdr/stats"]
print(o["inst0_mbufs_in_use"], o["inst1_mbufs_in_use"])') || return 1
	echo "$rss $m"
}

rels=(sr ec auto)
samples=$SDR_TMP/samples
: >"$samples"
t0=$(date +%s)
round=0
nmsg=0
while [ $(($(date +%s) - t0)) -lt "$duration" ] || [ $round -lt 3 ]; do
	rel=${rels[$((round % 3))]}
	round=$((round + 1))
	ec=()
	[ "$rel" = ec ] && ec=(--ec rs:16:4)
	port=$(rig_free_port)
	"$SDR_RECV" --dpu "$SOCK_B" --server --bind 127.0.0.1 --port "$port" --timeout 30 --quiet \
		>"$SDR_TMP/recv.log" 2>&1 &
	rpid=$!
	"$SDR_SEND" --dpu "$SOCK_A" --connect "127.0.0.1:$port" --rel "$rel" "${ec[@]}" \
		--sizes "$sizes" --count "$count" --seed $round --timeout 30 --quiet \
		>"$SDR_TMP/send.log" 2>&1
	srv=$?
	wait $rpid
	rrv=$?
	if [ $srv != 0 ] || [ $rrv != 0 ]; then
		cat "$SDR_TMP/send.log" "$SDR_TMP/recv.log"
		sdr_fail "round $round ($rel): a message was lost or corrupted (sdr-send $srv, sdr-recv $rrv)"
	fi
	nmsg=$((nmsg + count * $(echo "$sizes" | tr ',' '\n' | wc -l)))
	sleep 0.5 # the link and the ACK timers at rest
	s=$(sample) || sdr_fail "cannot read the daemon's telemetry"
	echo "$round $(($(date +%s) - t0)) $rel $s" >>"$samples"
	[ $((round % 20)) = 1 ] && sdr_log "round $round ($rel), $nmsg messages: RSS kB, mbufs in use at rest (a, b): $s"
done
sdr_log "$round rounds, $nmsg messages in $(($(date +%s) - t0)) s"
rig_stop "$DPU_PID" || sdr_fail "daemon did not stop cleanly"

# one sdr-send run per round
first=$(/usr/bin/python3 "$here/sr_check.py" --print-first-pass --sizes "$sizes" --count "$count")
/usr/bin/python3 "$here/rel_check.py" --ring "$STATS" --messages $nmsg \
	--first-pass $((first * round)) --min-repair 1 --nonzero dropped_loss,dropped_ge,reordered,duplicated ||
	{ grep -A40 "drops and errors" "$DPU_LOG"; sdr_fail "counter identities of the soak"; }
/usr/bin/python3 "$here/mem_slope.py" fit "$samples" --col 4 --kinds 5 \
	--skip "${SDR_SOAK_WARMUP:-auto}" --max-bytes-per-round "${SDR_SOAK_MAX_SLOPE:-1024}" ||
	sdr_fail "the daemon grew"
/usr/bin/python3 - "$samples" <<'EOF' || sdr_fail "mbufs held at rest grew"
import sys
rows = [l.split() for l in open(sys.argv[1])]
ma = [int(r[9]) for r in rows]
mb = [int(r[10]) for r in rows]
print("mbufs in use at rest: a %d..%d (first %d), b %d..%d (first %d)"
      % (min(ma), max(ma), ma[0], min(mb), max(mb), mb[0]))
bad = []
for name, m in (("a", ma), ("b", mb)):
    if max(m) > m[0] + 16:
        i = m.index(max(m))
        bad.append("instance %s: %d mbufs in use at rest after round %d, %d after round 1"
                   % (name, max(m), i + 1, m[0]))
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
EOF
echo "soak: $round rounds, $nmsg messages (SR, EC, AUTO; 1 B..4 MiB) bit-exact over a lossy, bursty, reordering, duplicating link; identities hold; RSS (least-squares slope) and mbufs at rest did not grow"
