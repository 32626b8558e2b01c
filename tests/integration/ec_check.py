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

With --ring STATS the two daemons are the two instances of one sdr-dpu
--ring-pair (instance 0 sends): one JSON, one set of drop counters for
both, and the receiving link sees exactly what the sending port sent.
With --auto the QPs are AUTO (docs/reliability.md "AUTO"): EC is required
only for the messages the sender's DPU sent with an EC code, and its AUTO
counters must add up (every message SR or EC, a conservative start, model
evaluations without errors).

Usage: ec_check.py --sizes 4K,1M --count N (--sender A.json --receiver B.json | --ring S.json)
       [--extra 4M --extra-count 2] [--min-recovered N] [--min-nacks N] [--auto]
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sr_check import add_channel_args, channel_defaults, plan_pkts, rx_drop_names  # noqa: E402

# per-entry counters of control packets that were otherwise accepted
ENTRY_LEVEL = ("cts_bad", "cts_stale", "ack_bad", "ack_stale", "ack_unsent", "holes_bad",
               "holes_stale", "nack_bad", "nack_stale")
# never on a link between two honest daemons (corruption is caught by the ICRC)
MUST_BE_ZERO = ("ec_parity_bad", "ec_parity_not_ec", "ec_param_mismatch", "ec_parity_sub",
                "ec_parity_len", "nack_bad", "ec_encode_failed")


def auto_check(snd, st, bad, nqps=1):
    """The sender's AUTO QP (each of its NQPS channels): every message SR or
    EC, a conservative start, evaluations without errors. Returns the
    messages sent with an EC code."""
    qps = [q for q in snd["qps"] + snd.get("auto_closed", []) if "auto" in q]
    if len(qps) != nqps:
        bad.append("expected %d AUTO QP(s) at the sender, found %d" % (nqps, len(qps)))
        return 0
    return sum(auto_check_qp(q, bad) for q in qps)


def auto_check_qp(q, bad):
    au = q["auto"]
    print("AUTO: srtt %.1f ms, chunk loss %.4f, evals %d (errors %d), initial %d, picks %s,"
          " msgs EC %d SR %d" % (au["srtt_us"] / 1000, au["chunk_loss"], au["evals"],
                                 au["eval_errors"], au["initial_picks"], au["picks"],
                                 au["msgs_ec"], au["msgs_sr"]))
    if au["msgs_ec"] + au["msgs_sr"] != q["msgs_sent"]:
        bad.append("AUTO: msgs_ec %d + msgs_sr %d != msgs_sent %d"
                   % (au["msgs_ec"], au["msgs_sr"], q["msgs_sent"]))
    if au["msgs_ec"] != sum(v for k, v in au["picks"].items() if k != "SR"):
        bad.append("AUTO: EC messages %d != EC picks %s" % (au["msgs_ec"], au["picks"]))
    if au["eval_errors"]:
        bad.append("AUTO: %d model evaluations failed" % au["eval_errors"])
    if au["initial_picks"] < 1 or au["evals"] < 1:
        bad.append("AUTO: expected a conservative start and at least one model evaluation")
    return au["msgs_ec"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", required=True)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--mtu", type=int, default=4096)
    ap.add_argument("--sender")
    ap.add_argument("--receiver")
    ap.add_argument("--ring", help="stats JSON of one sdr-dpu --ring-pair (instance 0 sends)")
    ap.add_argument("--auto", action="store_true", help="the QPs are AUTO")
    ap.add_argument("--extra")
    ap.add_argument("--extra-count", type=int, default=1)
    ap.add_argument("--min-recovered", type=int, default=0)
    ap.add_argument("--min-nacks", type=int, default=0)
    add_channel_args(ap)
    a = ap.parse_args()
    channel_defaults(a)
    rx_drops = set(rx_drop_names())
    first = plan_pkts(a.sizes, a.count, a.mtu, channels=a.channels, stripe=a.stripe)
    if a.extra:  # a second sdr-send run: its messages count from 0 again
        first += plan_pkts(a.extra, a.extra_count, a.mtu, channels=a.channels, stripe=a.stripe)
    nmsgs = (len(a.sizes.split(",")) * a.count + (len(a.extra.split(",")) * a.extra_count
                                                    if a.extra else 0)) * a.channels
    bad = []
    if a.ring:
        d = json.load(open(a.ring))
        snd, rcv = d["instances"][0], d["instances"][1]
        groups = [(d["drops"], [snd, rcv], "both instances")]
    elif a.sender and a.receiver:
        ds, dr = json.load(open(a.sender)), json.load(open(a.receiver))
        snd, rcv = ds["instances"][0], dr["instances"][0]
        groups = [(ds["drops"], [snd], snd["name"]), (dr["drops"], [rcv], rcv["name"])]
    else:
        ap.error("give --ring, or --sender and --receiver")
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
    if a.ring:
        if rcv["link"]["pkts_in"] != snd["tx_pkts"]:
            bad.append("receiver link saw %d frames, the sender's port sent %d"
                       % (rcv["link"]["pkts_in"], snd["tx_pkts"]))
    # veth: the kernel may add frames of its own (IPv6 ND), never fewer
    elif rcv["link"]["pkts_in"] < snd["tx_pkts"]:
        bad.append("receiver link saw %d frames, fewer than the %d the sender's port sent"
                   % (rcv["link"]["pkts_in"], snd["tx_pkts"]))
    if snd["tx_pkts"] < st["tx_pkts"] + st["ec_par_pkts_tx"]:
        bad.append("sender port sent %d frames, fewer than its data %d + parity %d"
                   % (snd["tx_pkts"], st["tx_pkts"], st["ec_par_pkts_tx"]))
    for inst in (snd, rcv):
        if inst["link"]["on"] and inst["link"]["released"] != inst["rx_pkts"]:
            bad.append("%s: link released %d frames, port received %d"
                       % (inst["name"], inst["link"]["released"], inst["rx_pkts"]))
    for drops, insts, name in groups:
        rx = sum(i["rx_pkts"] for i in insts)
        placed = sum(i["qp_totals"]["rx_pkts"] for i in insts)
        ctrl = sum(i["qp_totals"]["cts_rx"] + i["qp_totals"]["sr_acks_rx"] +
                   i["qp_totals"]["ec_par_pkts_rx"] + i["qp_totals"]["ec_nacks_rx"] +
                   i["qp_totals"].get("peer_closed", 0) for i in insts)
        dropped = sum(v for k, v in drops.items() if k in rx_drops and k not in ENTRY_LEVEL)
        print("%s: frames received %d = placed %d + control %d + counted drops %d"
              % (name, rx, placed, ctrl, dropped))
        if placed + ctrl + dropped != rx:
            bad.append("%s: frames received %d != placed %d + control %d + drops %d"
                       % (name, rx, placed, ctrl, dropped))
        for k in MUST_BE_ZERO:
            if drops.get(k):
                bad.append("%s: counter %s = %d" % (name, k, drops[k]))
    if rt["msgs_recv"] != nmsgs or st["msgs_sent"] != nmsgs:
        bad.append("messages: sent %d, received %d, planned %d"
                   % (st["msgs_sent"], rt["msgs_recv"], nmsgs))
    if st["sr_send_timeouts"] or rt["sr_recv_timeouts"]:
        bad.append("global timeouts on a working link")
    if rt["ec_decode_failures"]:
        bad.append("%d decode failures" % rt["ec_decode_failures"])
    ec_msgs = auto_check(snd, st, bad, a.channels) if a.auto else nmsgs
    if ec_msgs and (not st["ec_subs_encoded"] or not st["ec_par_pkts_tx"] or
                    not rt["ec_par_pkts_rx"]):
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
