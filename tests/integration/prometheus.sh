#!/usr/bin/env bash
# A real Prometheus server (Debian's prometheus) scrapes a daemon pair in
# two network namespaces (sdr-dpu --metrics) every second during an SR
# transfer; its HTTP API then answers the questions docs/operations.md
# shows: both targets up, the receive rate during the transfer (PromQL
# rate()) near what the tools measured, and the 99th percentile of message
# completion time from the histogram (histogram_quantile()). Root.
. "$(dirname "$0")/lib.sh"
[ "${SDR_HAVE_METRICS:-1}" = 1 ] || sdr_skip "sdr-dpu built without --metrics (Debian package libmicrohttpd-dev)"
[ "$(id -u)" = 0 ] || sdr_skip "needs root for ip netns"
PROM=$(command -v prometheus) || sdr_skip "prometheus not installed (Debian package prometheus)"
command -v curl >/dev/null || sdr_skip "curl not installed"
rig_netns_up || sdr_skip "cannot create network namespaces here"
SDR_CLEANUPS+=("rig_netns_down")
MP=9464
for side in a b; do
	rig_ns_dpu $side "$SDR_TMP/$side.sock" "$SDR_TMP/$side.log" --port-rate 1g \
		--metrics "$MP" || sdr_fail "daemon $side did not start"
	SDR_PIDS+=("$RIG_PID")
done
PP=$(rig_free_port)
cat >"$SDR_TMP/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: sdr-dpu
    static_configs:
      - targets: ['127.0.0.1:$MP', '$KIP_B:$MP']
YML
# (ahead of the daemons' busy-polling workers on a small machine)
ip netns exec "$NS_A" nice -n -10 "$PROM" --config.file="$SDR_TMP/prometheus.yml" \
	--storage.tsdb.path="$SDR_TMP/tsdb" --web.listen-address="127.0.0.1:$PP" \
	>"$SDR_TMP/prom.log" 2>&1 &
SDR_PIDS+=("$!")
P() { ip netns exec "$NS_A" curl -sf "$@"; }
for _ in $(seq 100); do P "http://127.0.0.1:$PP/-/ready" >/dev/null && break; sleep 0.2; done
P "http://127.0.0.1:$PP/-/ready" >/dev/null || { tail "$SDR_TMP/prom.log"; sdr_fail "prometheus not ready"; }
sleep 2 # (a first scrape of both before the transfer)

ip netns exec "$NS_B" "$SDR_RECV" --dpu "$SDR_TMP/b.sock" --server --bind "$KIP_B" --port 18516 \
	--timeout 60 --quiet >"$SDR_TMP/recv.log" 2>&1 &
rpid=$!
sleep 0.5
t0=$(date +%s)
ip netns exec "$NS_A" "$SDR_SEND" --dpu "$SDR_TMP/a.sock" --connect "$KIP_B:18516" \
	--sizes 1M --count 300 --rel sr --rate 300m --timeout 60 >"$SDR_TMP/send.log" 2>&1 ||
	{ tail "$SDR_TMP/send.log"; sdr_fail "transfer failed"; }
t1=$(date +%s)
wait $rpid || sdr_fail "receiver failed"
tail -2 "$SDR_TMP/send.log"
sleep 2.5 # (the last samples)
q() { # q PROMQL TIME: the query's result as JSON
	P --data-urlencode "query=$1" --data-urlencode "time=$2" "http://127.0.0.1:$PP/api/v1/query"
}
dur=$(( t1 - t0 + 4 )) # (and 2 s either side: samples even when scrapes come late)
up=$(q 'sum(up{job="sdr-dpu"})' "$t1")
rate=$(q "sum(rate(sdr_qp_rx_bytes_total{qp!=\"closed\"}[${dur}s])) * 8" "$((t1 + 2))")
p99=$(q 'histogram_quantile(0.99, sum by (le) (increase(sdr_message_completion_seconds_bucket{size_class="1MiB"}[1h])))' "$(date +%s)")
p50=$(q 'histogram_quantile(0.5, sum by (le) (increase(sdr_message_completion_seconds_bucket{size_class="1MiB"}[1h])))' "$(date +%s)")
echo "up: $up"; echo "rate: $rate"; echo "p99: $p99"; echo "p50: $p50"
/usr/bin/python3 - "$up" "$rate" "$p99" "$p50" "$SDR_TMP/send.log" <<'PY' || sdr_fail "Prometheus's answers are not as expected"
import json, math, re, sys
def val(s):
    r = json.loads(s)["data"]["result"]
    assert r, "empty result: %s" % s
    return float(r[0]["value"][1])
up, rate, p99, p50 = (val(x) for x in sys.argv[1:5])
log = open(sys.argv[5]).read()
assert up == 2, "targets up: %s" % up
assert 80e6 < rate < 450e6, "receive rate %.0f bit/s around a 300 Mbit/s paced transfer" % rate
m = re.search(r"size 1048576: n 300 mean ([\d.]+) ms p50 ([\d.]+) ms p99 ([\d.]+) ms", log)
assert m, "no completion-time line from sdr-send"
tool_p50 = float(m.group(2)) / 1e3
assert math.isfinite(p99) and p50 <= p99 < 10, (p50, p99)
# the buckets bound the tool's own measure (one bucket's width either way)
assert tool_p50 / 3 < p50 < tool_p50 * 3, "p50 %.4f s from Prometheus, %.4f s from sdr-send" % (p50, tool_p50)
print("prometheus: 2 targets up, %.0f Mbit/s received around the transfer, completion time p50 %.1f ms"
      " (sdr-send: %.1f ms) p99 %.1f ms" % (rate / 1e6, p50 * 1e3, tool_p50 * 1e3, p99 * 1e3))
PY
echo "prometheus: OK"
