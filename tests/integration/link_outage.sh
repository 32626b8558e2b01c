#!/usr/bin/env bash
# Outages are stalls (docs/reliability.md "Faults: link outages"): three
# concurrent streams A -> B, SR, EC (RS(8,2)) and AUTO, at --link loss=1e-3;
# the veth link is set down for 10 s, and in a second run for 0.2 s, in the
# middle of them. Every message arrives bit-exact (sdr-recv verifies the
# pattern), no completion is an error, and each stream's next completion
# comes within OUTAGE_BOUND_MS of the link coming back (default: the probe
# interval --probe-max-ms 1000 + 3000 ms for a few RTTs and a loaded 2-core
# machine; printed per stream), and the streams end within OUTAGE_DONE_S
# (default 20 s: about 3 s of data, and EC's recovery of a lost FULL
# acknowledgement on a loaded machine) of it. Then a short horizon: with
# --outage-horizon-ms 2000 a 5 s outage ends the SR stream's sends in
# -ETIMEDOUT (sr_send_timeouts), as documented. Skipped (77) without root.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/sr_lib.sh"
. "$(dirname "$0")/outage_lib.sh"
sr_netns_setup

PROBE_MS=1000
BOUND_MS=${OUTAGE_BOUND_MS:-$((PROBE_MS + 3000))}
DONE_S=${OUTAGE_DONE_S:-20}
link="delay=2ms,rate=1gbit,buffer=4MB,loss=1e-3"
SDR_CLEANUPS+=("ip -n $NS_A link set $VETH_A up")

# run_outage SECONDS: the three streams, the link down SECONDS among them
run_outage() {
	local secs=$1 count=15 n ms log bad=0
	ol_stream sr-$secs $count 256K,1M --rel sr --rate 50m
	ol_stream ec-$secs $count 256K,1M --rel ec --ec rs:8:2 --rate 50m
	ol_stream auto-$secs $count 256K,1M --rel auto --rate 50m
	ol_flowing 3
	ip -n "$NS_A" link set "$VETH_A" down
	sleep "$secs"
	local res
	res=$(ol_after '^msg ' 30 ip -n "$NS_A" link set "$VETH_A" up)
	local t_up t_end
	t_up=$(date +%s.%N)
	ol_wait || bad=1
	t_end=$(date +%s.%N)
	# the rest of the streams (about 2.5 s of data at their rate) takes no
	# outage-sized pause after the resume (no RTO set by an ACK that waited
	# for the outage)
	echo "link down $secs s: the streams ended $(echo "$t_end - $t_up" | bc) s after the link came back (bound $DONE_S s)"
	[ "$(echo "$t_end - $t_up < $DONE_S" | bc)" = 1 ] || bad=1
	while read -r n ms; do
		echo "link down $secs s: $n resumed $ms ms after the link came back (bound $BOUND_MS ms)"
		[ "$ms" -ge 0 ] && [ "$ms" -le "$BOUND_MS" ] || bad=1
	done <<<"$res"
	for log in "${OL_SEND_LOGS[@]}" "${OL_RECV_LOGS[@]}"; do
		if grep -qE 'error|mismatch|still pending' "$log"; then
			grep -E 'error|mismatch|still pending' "$log" | head -3
			bad=1
		fi
	done
	for log in "${OL_SEND_LOGS[@]}"; do
		[ "$(grep -c '^msg .* sent' "$log")" = $((2 * count)) ] || bad=1
	done
	if [ $bad = 1 ]; then
		for log in "${OL_SEND_LOGS[@]}" "${OL_RECV_LOGS[@]}"; do
			echo "== $log"
			tail -8 "$log"
		done
		sdr_fail "link down $secs s: a stream failed, or resumed late"
	fi
	ol_reset
}

sr_pair lo "$link"
run_outage 10
run_outage 0.2
rig_stop "$PA"
rig_stop "$PB"
j() { $PY -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$@"; }
q='d["instances"][0]["qp_totals"]'
echo "daemon A: outages $(j "$A_JSON" "$q[\"sr_outages\"]"), units sent at once on resume" \
	"$(j "$A_JSON" "$q[\"sr_resume_units\"]"), send errors $(j "$A_JSON" "$q[\"send_errors\"]")," \
	"send timeouts $(j "$A_JSON" "$q[\"sr_send_timeouts\"]")"
[ "$(j "$A_JSON" "$q[\"sr_outages\"]")" -ge 3 ] || sdr_fail "daemon A counted no outage per stream"
[ "$(j "$A_JSON" "$q[\"send_errors\"]")" = 0 ] || sdr_fail "daemon A counted send errors"

# a short horizon: the outage outlasts it. (The tools' TCP bootstrap runs
# over the same link: they are stopped, not waited for.)
sr_pair hz "$link" --outage-horizon-ms 2000
ol_stream sr-hz 40 256K,1M --rel sr --rate 50m
ol_flowing 3
res=$(ol_after '^msg .* error \(timed out\)' 8 ip -n "$NS_A" link set "$VETH_A" down)
ms=${res#sr-hz }
[ "$ms" -ge 0 ] && [ "$ms" -lt 5000 ] && sleep "$(echo "scale=3; (5000 - $ms) / 1000" | bc)"
ip -n "$NS_A" link set "$VETH_A" up
kill -KILL "${OL_SEND_PIDS[0]}" "${OL_RECV_PIDS[0]}" 2>/dev/null
ol_wait
grep -q '^msg .* error (timed out)' "${OL_SEND_LOGS[0]}" ||
	{ tail -20 "${OL_SEND_LOGS[0]}"; sdr_fail "no -ETIMEDOUT completion at the sender"; }
rig_stop "$PA"
rig_stop "$PB"
echo "horizon 2000 ms: the sender's first -ETIMEDOUT came $ms ms into the 5 s outage," \
	"sr_send_timeouts $(j "$A_JSON" "$q[\"sr_send_timeouts\"]")"
[ "$(j "$A_JSON" "$q[\"sr_send_timeouts\"]")" -ge 1 ] || sdr_fail "no horizon expiry counted"
# (the horizon counts from the last progress, a little before the cut)
[ "$ms" -ge 1000 ] && [ "$ms" -le 5000 ] ||
	sdr_fail "the 2 s horizon ended the sends $ms ms into the outage (want 1000..5000)"
echo "link outage: 10 s and 0.2 s outages survived by SR, EC and AUTO; a 2 s horizon ends a 5 s outage"
