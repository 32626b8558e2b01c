#!/usr/bin/env bash
# A host killed mid-transfer leaves the daemon healthy: its QPs and mappings
# are torn down, and new hosts transfer data afterwards.
. "$(dirname "$0")/lib.sh"
sdr_start_ring_pair death
port=$(rig_free_port)
# A receiver for a long run of 64 MiB messages, killed after the first ones.
"$SDR_RECV" --dpu "$SOCK_B" --server --bind 127.0.0.1 --port "$port" --timeout 60 --quiet \
	>"$SDR_TMP/r1.log" 2>&1 &
r1=$!
sleep 0.3
"$SDR_SEND" --dpu "$SOCK_A" --connect "127.0.0.1:$port" --sizes 64M --count 50 --timeout 60 \
	--quiet >"$SDR_TMP/s1.log" 2>&1 &
s1=$!
sleep 2
kill -KILL $r1
sleep 0.5
kill -KILL $s1 2>/dev/null
wait $r1 $s1 2>/dev/null
kill -0 "$DPU_PID" || { cat "$DPU_LOG"; sdr_fail "daemon died with its host"; }
# exactly one teardown per killed host, each naming that host's pid
for _ in $(seq 50); do [ "$(grep -c 'host pid .* detached' "$DPU_LOG")" -ge 2 ] && break; sleep 0.1; done
n=$(grep -c "host pid .* detached" "$DPU_LOG")
[ "$n" = 2 ] || { cat "$DPU_LOG"; sdr_fail "daemon logged $n host detaches, expected 2"; }
for p in $r1 $s1; do
	c=$(grep -c "host pid $p detached" "$DPU_LOG")
	[ "$c" = 1 ] || { cat "$DPU_LOG"; sdr_fail "host pid $p: $c detaches, expected 1"; }
done
# new hosts on the same daemon
port=$(rig_free_port)
"$SDR_RECV" --dpu "$SOCK_B" --server --bind 127.0.0.1 --port "$port" --timeout 60 --quiet \
	>"$SDR_TMP/r2.log" 2>&1 &
r2=$!
sleep 0.3
"$SDR_SEND" --dpu "$SOCK_A" --connect "127.0.0.1:$port" --sizes 1,4K,1M,16M --count 2 \
	--timeout 60 --quiet >"$SDR_TMP/s2.log" 2>&1 || { cat "$SDR_TMP/s2.log"; sdr_fail "second sender failed"; }
wait $r2 || { cat "$SDR_TMP/r2.log"; sdr_fail "second receiver failed"; }
rig_stop "$DPU_PID" || sdr_fail "daemon did not stop cleanly"
n=$(grep -c "host pid .* detached" "$DPU_LOG")
[ "$n" = 4 ] || { cat "$DPU_LOG"; sdr_fail "daemon logged $n host detaches in all, expected 4"; }
echo "host death: daemon healthy, later transfers bit-exact"
