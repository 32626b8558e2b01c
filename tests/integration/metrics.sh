#!/usr/bin/env bash
# sdr-dpu --metrics: the Prometheus page during and after a transfer (every
# family promtool accepts; message counts, bytes and the completion-time
# histogram agree with what the tools moved), bad requests answered with
# 4xx, and scrapers that never finish a request or never read the answer
# block nothing: while 24 of them hang, a transfer runs at full speed and,
# once they time out, a scrape is answered again. No root (ring pair).
. "$(dirname "$0")/lib.sh"
[ "${SDR_HAVE_METRICS:-1}" = 1 ] || sdr_skip "sdr-dpu built without --metrics (Debian package libmicrohttpd-dev)"
command -v curl >/dev/null || sdr_skip "curl not installed"
MPORT=$(rig_free_port)
sdr_start_ring_pair metrics --metrics "127.0.0.1:$MPORT" --link delay=2ms,loss=0.005
M=http://127.0.0.1:$MPORT
grep -q "metrics on http://127.0.0.1:$MPORT/metrics" "$DPU_LOG" || { cat "$DPU_LOG"; sdr_fail "no metrics line"; }

code() { curl -s -o /dev/null -w '%{http_code}' "$@"; }
[ "$(code "$M/metrics")" = 200 ] || sdr_fail "GET /metrics not 200"
[ "$(code -X POST -d x=1 "$M/metrics")" = 405 ] || sdr_fail "POST not answered 405"
[ "$(code "$M/no-such-page")" = 404 ] || sdr_fail "unknown page not answered 404"
[ "$(code -X GET -H 'Content-Length: 5' --data-binary hello "$M/metrics")" -ge 400 ] ||
	sdr_fail "GET with a body not answered 4xx"
# requests that are not HTTP: 400, or (not even a request line) closed at
# once; never a hang
raw() {
	printf "$1" | timeout 5 /usr/bin/python3 -c '
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=4)
s.sendall(sys.stdin.buffer.read()); print(s.recv(64).decode(errors="replace").split("\r\n")[0])' "$MPORT"
}
for req in 'GET  HTTP/1.1\r\nHost: x\r\n\r\n' 'GET /metrics\r\n\r\n' \
	'GET /x HTTP/1.1\r\nBad header line\r\n\r\n'; do
	r=$(raw "$req") || sdr_fail "no answer to '$req'"
	case $r in "HTTP/1."*" 400 "*) ;; *) sdr_fail "'$req' answered '$r'" ;; esac
done
r=$(raw 'BLAH\r\n\r\n') || sdr_fail "'BLAH' left hanging"
echo "bad requests: 405, 404, 4xx, '$r'"

# a transfer that lasts a while (SR over the lossy link), scraped meanwhile
port=$(rig_free_port)
"$SDR_RECV" --dpu "$SOCK_B" --server --bind 127.0.0.1 --port "$port" --timeout 30 --quiet \
	>"$SDR_TMP/r.log" 2>&1 &
rpid=$!
sleep 0.3
"$SDR_SEND" --dpu "$SOCK_A" --connect "127.0.0.1:$port" --sizes 4K,256K,1M --count 30 \
	--rel sr --rate 200m --quiet >"$SDR_TMP/s.log" 2>&1 &
spid=$!
for _ in $(seq 60); do # (until the live QP has sent something)
	curl -sf "$M/metrics" >"$SDR_TMP/during.txt" || sdr_fail "scrape during the transfer failed"
	grep -q '^sdr_qp_msgs_sent_total{.*scheme="sr"} [1-9]' "$SDR_TMP/during.txt" && break
	sleep 0.05
done
wait $spid || { cat "$SDR_TMP/s.log"; sdr_fail "transfer failed"; }
wait $rpid || { cat "$SDR_TMP/r.log"; sdr_fail "receiver failed"; }
curl -sf "$M/metrics" >"$SDR_TMP/after.txt" || sdr_fail "scrape after the transfer failed"
grep -q '^sdr_qp_msgs_sent_total{.*scheme="sr"} [1-9]' "$SDR_TMP/during.txt" ||
	{ head -50 "$SDR_TMP/during.txt"; sdr_fail "no live SR QP with messages sent during the transfer"; }
grep -q "^sdr_build_info{version=\"[0-9.]*\"} 1" "$SDR_TMP/after.txt" || sdr_fail "no sdr_build_info"
if command -v promtool >/dev/null; then
	for f in during after; do
		promtool check metrics <"$SDR_TMP/$f.txt" || sdr_fail "promtool rejects the $f page"
	done
	echo "promtool check metrics: both pages accepted"
else
	PROMTOOL_MISSING=1
fi
/usr/bin/python3 - "$SDR_TMP/after.txt" <<'PY' || sdr_fail "metrics do not add up"
import re, sys
vals = {}
for line in open(sys.argv[1]):
    m = re.match(r'^(\w+)\{(.*)\} (\S+)$', line)
    if m:
        vals.setdefault(m.group(1), []).append((dict(re.findall(r'(\w+)="([^"]*)"', m.group(2))),
                                                float(m.group(3))))
def tot(name, **want):
    return sum(v for lb, v in vals.get(name, []) if all(lb.get(k) == x for k, x in want.items()))
a = [lb["dpu"] for lb, _ in vals["sdr_port_tx_packets_total"] if lb["dpu"].endswith("a.sock")][0]
sent = tot("sdr_qp_msgs_sent_total", dpu=a)
assert sent == 90, "instance a sent %d messages, want 90" % sent
n = tot("sdr_message_completion_seconds_count", dpu=a)
assert n == sent, "histogram counts %d completions, want %d" % (n, sent)
inf = tot("sdr_message_completion_seconds_bucket", dpu=a, le="+Inf")
assert inf == n, (inf, n)
for cls, k in (("4KiB", 30), ("256KiB", 0), ("1MiB", 60)):
    got = tot("sdr_message_completion_seconds_count", dpu=a, size_class=cls)
    assert got == k, "size class %s: %d completions, want %d" % (cls, got, k)
s = tot("sdr_message_completion_seconds_sum", dpu=a)
assert 90 * 0.002 < s < 90 * 5, "completion time sum %.3f s" % s
# the link emulator on B's receive side saw every data frame A sent
lk = tot("sdr_link_pkts_in_total")
assert lk >= tot("sdr_qp_tx_pkts_total", dpu=a) > 0, (lk,)
assert tot("sdr_drops_total") >= 0 and len(vals["sdr_drops_total"]) > 10
print("metrics: %d messages, %d completions in the histogram (sum %.3f s), %d link frames"
      % (sent, n, s, lk))
PY

# slow scrapers: 12 that never finish their request, 12 that never read
/usr/bin/python3 - "$MPORT" 24 >"$SDR_TMP/slow.log" 2>&1 <<'PY' &
import socket, sys, time
port, n = int(sys.argv[1]), int(sys.argv[2])
socks = []
for i in range(n):
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", port))
    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n" + (b"\r\n" if i % 2 else b"X-Slow: 1"))
    socks.append(s)
print("holding", len(socks), flush=True)
time.sleep(12)
PY
slowpid=$!
SDR_PIDS+=("$slowpid")
sleep 1
t0=$(date +%s.%N)
"$SDR_RECV" --dpu "$SOCK_B" --server --bind 127.0.0.1 --port "$port" --timeout 20 --quiet \
	>"$SDR_TMP/r2.log" 2>&1 &
rpid=$!
sleep 0.3
"$SDR_SEND" --dpu "$SOCK_A" --connect "127.0.0.1:$port" --sizes 1M --count 20 --rel sr \
	--quiet >"$SDR_TMP/s2.log" 2>&1 || { cat "$SDR_TMP/s2.log"; sdr_fail "transfer failed while scrapers hang"; }
wait $rpid || sdr_fail "receiver failed while scrapers hang"
t1=$(date +%s.%N)
echo "transfer with 24 hanging scrapers: $(echo "$t1 - $t0" | bc) s"
[ "$(echo "$t1 - $t0 < 8" | bc)" = 1 ] || sdr_fail "transfer took $(echo "$t1 - $t0" | bc) s"
grep -q holding "$SDR_TMP/slow.log" || { cat "$SDR_TMP/slow.log"; sdr_fail "slow scrapers did not connect"; }
# libmicrohttpd closes them after 5 s idle: then a scrape is answered again
ok=0
for _ in $(seq 40); do
	if curl -sf -m 2 "$M/metrics" -o /dev/null; then ok=1; break; fi
	sleep 0.25
done
[ $ok = 1 ] || sdr_fail "no scrape answered after the slow scrapers"
kill "$slowpid" 2>/dev/null
curl -sf "$M/ops" | head -3
[ "${PROMTOOL_MISSING:-0}" = 1 ] && sdr_skip "promtool not installed (Debian package prometheus): the page was not checked by it"
echo "metrics: OK"
