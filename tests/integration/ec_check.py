#!/usr/bin/python3
"""Counter identities of an erasure-coding run (docs/reliability.md, "Erasure
coding"), read from the two daemons' --stats-json files:

 1. sender data packets = first-pass packets of the plan + retransmitted
    packets (parity packets are counted apart: ec_par_pkts_tx);
 2. receiving port: frames the link emulator released = frames received;
 3. every received frame is counted exactly once: placed data packets +
    accepted control packets (CTS, ACK, accepted parity, NACK) + one drop
    counter;
 4. every message completed, no global timeout, no decode failure, no
    malformed or mismatched parity between two honest daemons;
 5. EC was really on: the sender encoded submessages and sent parity, the
    receiver accepted parity; with --min-recovered N the receiver decoded at
    least N chunks into the host buffer; with --min-nacks N it sent at least
    N NACKs and the sender retransmitted at least N chunks for NACKs.

Usage: ec_check.py --sizes 4K,1M --count N --sender A.json --receiver B.json
       [--extra 4M --extra-count 2] [--min-recovered N] [--min-nacks N]
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sr_check import msg_pkts, rx_drop_names, size  # noqa: E402

# per-entry counters of control packets that were otherwise accepted
ENTRY_LEVEL = ("cts_bad", "cts_stale", "ack_bad", "ack_stale", "nack_bad", "nack_stale")
# never on a link between two honest daemons (corruption is caught by the ICRC)
MUST_BE_ZERO = ("ec_parity_bad", "ec_parity_not_ec", "ec_param_mismatch", "ec_parity_sub",
                "ec_parity_len", "nack_bad", "ec_encode_failed")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", required=True)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--mtu", type=int, default=4096)
    ap.add_argument("--sender", required=True)
    ap.add_argument("--receiver", required=True)
    ap.add_argument("--extra")
    ap.add_argument("--extra-count", type=int, default=1)
    ap.add_argument("--min-recovered", type=int, default=0)
    ap.add_argument("--min-nacks", type=int, default=0)
    a = ap.parse_args()
    rx_drops = set(rx_drop_names())
    sizes = [size(s) for s in a.sizes.split(",")] * a.count
    if a.extra:
        sizes += [size(s) for s in a.extra.split(",")] * a.extra_count
    first = sum(msg_pkts(s, a.mtu) for s in sizes)
    bad = []
    ds, dr = json.load(open(a.sender)), json.load(open(a.receiver))
    snd, rcv = ds["instances"][0], dr["instances"][0]
    st, rt = snd["qp_totals"], rcv["qp_totals"]
    retx = st["sr_retx_pkts"]
    print("sender: data packets %d = first pass %d + retransmitted %d (%d units: %d for NACKs,"
          " %d RTO expiries); parity packets %d of %d submessages; NACKs rx %d"
          % (st["tx_pkts"], first, retx, st["sr_retx_units"], st["ec_nack_retx_units"],
             st["sr_rto_expiries"], st["ec_par_pkts_tx"], st["ec_subs_encoded"], st["ec_nacks_rx"]))
    print("receiver: parity packets accepted %d (chunks %d), decodes %d, chunks recovered %d,"
          " decode failures %d, FTO expiries %d, NACKs tx %d (%d entries)"
          % (rt["ec_par_pkts_rx"], rt["ec_par_chunks_rx"], rt["ec_decodes"],
             rt["ec_chunks_recovered"], rt["ec_decode_failures"], rt["ec_fto_expiries"],
             rt["ec_nacks_tx"], rt["ec_nack_entries_tx"]))
    if st["tx_pkts"] != first + retx:
        bad.append("sender data packets %d != first pass %d + retransmitted %d"
                   % (st["tx_pkts"], first, retx))
    # veth: the kernel may add frames of its own (IPv6 ND), never fewer
    if rcv["link"]["pkts_in"] < snd["tx_pkts"]:
        bad.append("receiver link saw %d frames, fewer than the %d the sender's port sent"
                   % (rcv["link"]["pkts_in"], snd["tx_pkts"]))
    if snd["tx_pkts"] < st["tx_pkts"] + st["ec_par_pkts_tx"]:
        bad.append("sender port sent %d frames, fewer than its data %d + parity %d"
                   % (snd["tx_pkts"], st["tx_pkts"], st["ec_par_pkts_tx"]))
    for inst in (snd, rcv):
        if inst["link"]["on"] and inst["link"]["released"] != inst["rx_pkts"]:
            bad.append("%s: link released %d frames, port received %d"
                       % (inst["name"], inst["link"]["released"], inst["rx_pkts"]))
    for drops, inst in ((ds["drops"], snd), (dr["drops"], rcv)):
        t = inst["qp_totals"]
        placed = t["rx_pkts"]
        ctrl = t["cts_rx"] + t["sr_acks_rx"] + t["ec_par_pkts_rx"] + t["ec_nacks_rx"]
        dropped = sum(v for k, v in drops.items() if k in rx_drops and k not in ENTRY_LEVEL)
        print("%s: frames received %d = placed %d + control %d + counted drops %d"
              % (inst["name"], inst["rx_pkts"], placed, ctrl, dropped))
        if placed + ctrl + dropped != inst["rx_pkts"]:
            bad.append("%s: frames received %d != placed %d + control %d + drops %d"
                       % (inst["name"], inst["rx_pkts"], placed, ctrl, dropped))
        for k in MUST_BE_ZERO:
            if drops.get(k):
                bad.append("%s: counter %s = %d" % (inst["name"], k, drops[k]))
    if rt["msgs_recv"] != len(sizes) or st["msgs_sent"] != len(sizes):
        bad.append("messages: sent %d, received %d, planned %d"
                   % (st["msgs_sent"], rt["msgs_recv"], len(sizes)))
    if st["sr_send_timeouts"] or rt["sr_recv_timeouts"]:
        bad.append("global timeouts on a working link")
    if rt["ec_decode_failures"]:
        bad.append("%d decode failures" % rt["ec_decode_failures"])
    if not st["ec_subs_encoded"] or not st["ec_par_pkts_tx"] or not rt["ec_par_pkts_rx"]:
        bad.append("EC was not on: no parity encoded, sent or accepted")
    if rt["ec_chunks_recovered"] < a.min_recovered:
        bad.append("only %d chunks recovered by decoding (expected >= %d)"
                   % (rt["ec_chunks_recovered"], a.min_recovered))
    if rt["ec_chunks_recovered"] and rt["ec_decodes"] == 0:
        bad.append("chunks recovered without a decode")
    if a.min_nacks:
        if rt["ec_nacks_tx"] < a.min_nacks or st["ec_nacks_rx"] < 1:
            bad.append("NACKs: receiver sent %d, sender got %d (expected >= %d sent)"
                       % (rt["ec_nacks_tx"], st["ec_nacks_rx"], a.min_nacks))
        if st["ec_nack_retx_units"] < 1 or retx < 1:
            bad.append("no retransmission for NACKs (%d units, %d packets retransmitted)"
                       % (st["ec_nack_retx_units"], retx))
    for b in bad:
        print("FAIL:", b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
