#!/usr/bin/env bash
# Hostile input at an EC receiver, from a sender written from
# docs/wire-format.md alone (scapy: tests/integration/ec_hostile.py): one
# message whose data arrives with two chunks missing and no immediate-only
# packets, valid XOR parity that repairs it, and one malformed or
# mismatched parity/NACK packet per receive-side check, then a second,
# whole message. Both receives must complete bit-exact with the right
# immediate (sdr-recv verifies), the two
# chunks must have been decoded into the host buffer, and every bad packet
# must be counted under its own counter and nothing else.
# Skipped (77) without root or scapy.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
PY=/usr/bin/python3
[ "$(id -u)" = 0 ] || sdr_skip "needs root (veth, raw sockets)"
$PY -c 'import scapy.contrib.roce' 2>/dev/null || sdr_skip "python3-scapy not installed"
rig_netns_up || sdr_skip "cannot create network namespaces"
SDR_CLEANUPS+=("rig_netns_down")
MAXMSG=1048576 RKEY=0x5eed1234 QPN=0x100 SEED=9
# shellcheck disable=SC2046
ip netns exec "$NS_B" "$SDR_DPU" $(rig_eal sdr-eh-$$ 256) $(rig_vdev "$VETH_B") -- \
	--name "$SDR_TMP/b.sock" --ip $DIP_B --mac $DMAC_B --peer-mac $DMAC_A --qpn-epoch 0 \
	--stats-json "$SDR_TMP/b.json" >"$SDR_TMP/b.log" 2>&1 &
pb=$!; SDR_PIDS+=($pb)
rig_wait_sock "$SDR_TMP/b.sock" $pb || { cat "$SDR_TMP/b.log"; sdr_fail "daemon did not start"; }
peer="qpn=0x200,rkey=0x1,key=0x0,ip=$DIP_A,mac=$DMAC_A,mtu=4096,max_msg=$MAXMSG,chunk_pkts=1,gen=4,rel=2,ec=xor:8:2"
ip netns exec "$NS_B" "$SDR_RECV" --dpu "$SDR_TMP/b.sock" --local-qpn $QPN --local-rkey $RKEY \
	--peer "$peer" --sizes 20000 --count 2 --seed $SEED --max-msg $MAXMSG --chunk-pkts 1 \
	--rel ec --ec xor:8:2 --timeout 10 --qp-file "$SDR_TMP/r.qp" >"$SDR_TMP/r.log" 2>&1 &
r=$!
for _ in $(seq 100); do [ -s "$SDR_TMP/r.qp" ] && break; sleep 0.05; done
# the receiver QP's control key: control packets without it are dropped
key=$(tr ',' '\n' <"$SDR_TMP/r.qp" | sed -n 's/^key=//p')
[ -n "$key" ] || sdr_fail "no control key in the receiver's QP info"
sleep 0.5
ip netns exec "$NS_A" $PY "$here/ec_hostile.py" --iface "$VETH_A" \
	--src-mac $DMAC_A --dst-mac $DMAC_B --src-ip $DIP_A --dst-ip $DIP_B \
	--dest-qpn $QPN --src-qpn 0x200 --rkey $RKEY --max-msg $MAXMSG --seed $SEED \
	--msg-len 20000 --k 8 --m 2 --lose 1,2 --key "$key" --queues "${SDR_TEST_QPAIRS:-1}" \
	>"$SDR_TMP/expect.txt" || sdr_fail "scapy could not send"
wait $r || { cat "$SDR_TMP/r.log"; sdr_fail "the message was not delivered bit-exact"; }
cat "$SDR_TMP/r.log"
rig_stop $pb
$PY - "$SDR_TMP/b.json" "$SDR_TMP/expect.txt" <<'PY' || { grep -A40 "drops and errors" "$SDR_TMP/b.log"; sdr_fail "counters"; }
import json, sys
d = json.load(open(sys.argv[1]))
want = dict((l.split()[0], int(l.split()[1])) for l in open(sys.argv[2]))
drops, qp = d["drops"], d["instances"][0]["qp_totals"]
bad = []
for k, v in want.items():
    got = sum(drops[c] if c in drops else qp[c] for c in k.split("+"))
    print("%-20s %d (expected %d)" % (k, got, v))
    if got != v:
        bad.append(k)
# every other EC drop counter stays 0
for k, v in drops.items():
    if (k.startswith("ec_") or k.startswith("nack_")) and v and \
            not any(k in w.split("+") for w in want):
        bad.append(k)
        print("%-20s %d (expected 0)" % (k, v))
if qp["ec_decodes"] != 1 or qp["ec_decode_failures"]:
    bad.append("ec_decodes")
for b in bad:
    print("FAIL:", b)
sys.exit(1 if bad else 0)
PY
echo "EC hostile input: message repaired bit-exact by decoding; every bad parity/NACK packet counted under its own name"
