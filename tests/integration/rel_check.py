#!/usr/bin/python3
"""Counter identities of a run with reliability SR, EC or AUTO, from the
daemons' --stats-json files (a ring pair: one file, instance 0 sends and
instance 1 receives; or two daemons: --sender A.json --receiver B.json).

 1. sender data packets = first-pass packets of the plan + retransmitted
    packets (--first-pass: sr_check.py --print-first-pass computes it for
    an sdr-send run; parity packets are counted apart, ec_par_pkts_tx);
 2. every port received exactly the frames its link emulator released; on
    the ring pair each emulator saw exactly the frames the other port sent;
 3. every received frame is counted exactly once: placed data packets +
    accepted control packets (CTS, ACK, parity, NACK, ABORT) + one
    receive-drop counter;
 4. exactly the planned messages were sent and received, none partial, no
    send error, no global timeout, no host-interface error, no decode
    failure, and nothing an honest peer never sends (malformed control or
    parity packets, a control packet with a wrong key);
 5. --min-retx N: at least N packets were retransmitted; --min-repair N:
    retransmitted packets + chunks rebuilt from parity >= N; --nonzero
    NAME[,NAME]: these drop or link-emulator counters are > 0 (the case
    exercised what it claims), --sum-nonzero NAME+NAME: their sum is > 0.

Usage: rel_check.py --messages N --first-pass P (--ring STATS |
       --sender A.json --receiver B.json) [--min-retx N] [--nonzero ..]
"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from sr_check import rx_drop_names  # noqa: E402

# per-entry counters of control packets that were otherwise accepted
ENTRY_LEVEL = ("cts_bad", "cts_stale", "ack_bad", "ack_stale", "ack_unsent", "holes_bad",
               "holes_stale", "nack_bad", "nack_stale")
# counted per entry or per packet that an honest peer never produces
MUST_BE_ZERO = ("ctrl_bad", "ctrl_bad_key", "ctrl_unknown", "cts_bad", "ack_bad",
                "ec_parity_bad", "ec_parity_not_ec", "ec_param_mismatch", "ec_parity_sub",
                "ec_parity_len", "nack_bad", "ec_encode_failed", "wrong_peer", "bad_rkey",
                "bad_va", "bad_len", "imm_mismatch", "bad_icrc")
HOST_ERRORS = ("sqe_bad", "sqe_no_target", "sqe_bad_qp", "sqe_bad_mr", "sqe_bad_range",
               "sqe_bad_len", "sqe_not_conn", "sqe_busy", "sq_corrupt", "cq_lost")


def ctrl_accepted(t):
    """Control packets a QP accepted (each also counted by exactly one of
    these). ABORT is wire format version 2; older firmware has no counter."""
    n = t["cts_rx"] + t["sr_acks_rx"] + t["ec_par_pkts_rx"] + t["ec_nacks_rx"]
    n += sum(v for k, v in t.items() if k.startswith("abort") and k.endswith("_rx"))
    n += t.get("peer_closed", 0)  # the peer's QP-CLOSED (its QP was destroyed)
    return n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--messages", type=int, required=True,
                    help="messages the tools sent; with $SDR_CHANNELS W > 1 (the"
                         " tools' default) the daemons count W per message")
    ap.add_argument("--first-pass", type=int, required=True,
                    help="data packets of the plan's first transmission")
    ap.add_argument("--ring")
    ap.add_argument("--sender")
    ap.add_argument("--receiver")
    ap.add_argument("--min-retx", type=int, default=0)
    ap.add_argument("--min-repair", type=int, default=0,
                    help="retransmitted packets + chunks rebuilt from parity >= N")
    ap.add_argument("--nonzero", default="")
    ap.add_argument("--sum-nonzero", default="")
    ap.add_argument("--allow", default="", help="MUST_BE_ZERO counters this case may move")
    a = ap.parse_args()
    a.messages *= int(os.environ.get("SDR_CHANNELS", "1"))
    rx_drops = set(rx_drop_names())
    allow = set(filter(None, a.allow.split(",")))
    bad = []
    if a.ring:
        d = json.load(open(a.ring))
        snd, rcv = d["instances"][0], d["instances"][1]
        groups = [(d["drops"], [snd, rcv])]
        drops_all = d["drops"]
        for x, y in ((snd, rcv), (rcv, snd)):
            if y["link"]["on"] and y["link"]["pkts_in"] != x["tx_pkts"]:
                bad.append("%s's link saw %d frames, %s's port sent %d"
                           % (y["name"], y["link"]["pkts_in"], x["name"], x["tx_pkts"]))
    else:
        ds, dr = json.load(open(a.sender)), json.load(open(a.receiver))
        snd, rcv = ds["instances"][0], dr["instances"][0]
        groups = [(ds["drops"], [snd]), (dr["drops"], [rcv])]
        drops_all = {k: ds["drops"][k] + dr["drops"].get(k, 0) for k in ds["drops"]}
    st, rt = snd["qp_totals"], rcv["qp_totals"]
    retx = st["sr_retx_pkts"]
    print("sender: data packets %d = first pass %d + retransmitted %d (%d units, %d RTO"
          " expiries, %d for NACKs); parity packets %d; ACKs rx %d, NACKs rx %d"
          % (st["tx_pkts"], a.first_pass, retx, st["sr_retx_units"], st["sr_rto_expiries"],
             st["ec_nack_retx_units"], st["ec_par_pkts_tx"], st["sr_acks_rx"], st["ec_nacks_rx"]))
    if st["tx_pkts"] != a.first_pass + retx:
        bad.append("sender data packets %d != first pass %d + retransmitted %d"
                   % (st["tx_pkts"], a.first_pass, retx))
    for inst in (snd, rcv):
        if inst["link"]["on"] and inst["link"]["released"] != inst["rx_pkts"]:
            bad.append("%s: link released %d frames, port received %d"
                       % (inst["name"], inst["link"]["released"], inst["rx_pkts"]))
    for drops, insts in groups:
        rx = sum(i["rx_pkts"] for i in insts)
        placed = sum(i["qp_totals"]["rx_pkts"] for i in insts)
        ctrl = sum(ctrl_accepted(i["qp_totals"]) for i in insts)
        dropped = sum(v for k, v in drops.items() if k in rx_drops and k not in ENTRY_LEVEL)
        print("frames received %d = placed %d + control %d + counted drops %d"
              % (rx, placed, ctrl, dropped))
        if placed + ctrl + dropped != rx:
            bad.append("frames received %d != placed %d + control %d + drops %d"
                       % (rx, placed, ctrl, dropped))
    print("messages: sent %d, received %d (partial %d), planned %d"
          % (st["msgs_sent"], rt["msgs_recv"], rt["msgs_partial"], a.messages))
    if st["msgs_sent"] != a.messages or rt["msgs_recv"] != a.messages:
        bad.append("messages: sent %d, received %d, planned %d"
                   % (st["msgs_sent"], rt["msgs_recv"], a.messages))
    for name, t in (("sender", st), ("receiver", rt)):
        for k in ("msgs_partial", "send_errors", "sr_send_timeouts", "sr_recv_timeouts",
                  "sr_send_closed", "ec_decode_failures"):
            if t[k]:
                bad.append("%s: %s = %d" % (name, k, t[k]))
    for k in MUST_BE_ZERO + HOST_ERRORS:
        if drops_all.get(k) and k not in allow:
            bad.append("counter %s = %d" % (k, drops_all[k]))
    if retx < a.min_retx:
        bad.append("only %d retransmitted packets (expected >= %d)" % (retx, a.min_retx))
    rec = rt["ec_chunks_recovered"]
    if retx + rec < a.min_repair:
        bad.append("only %d retransmitted packets + %d chunks rebuilt from parity (expected >= %d)"
                   % (retx, rec, a.min_repair))
    link = {k: snd["link"].get(k, 0) + rcv["link"].get(k, 0) for k in rcv["link"]}
    for k in filter(None, a.nonzero.split(",")):
        v = drops_all[k] if k in drops_all else link.get(k, 0)
        print("%s = %d" % (k, v))
        if not v:
            bad.append("counter %s is 0: the case did not exercise it" % k)
    if a.sum_nonzero:
        names = a.sum_nonzero.split("+")
        v = sum(drops_all.get(k, 0) for k in names)
        print("%s = %d" % (" + ".join(names), v))
        if not v:
            bad.append("%s = 0: the case did not exercise it" % " + ".join(names))
    for b in bad:
        print("FAIL:", b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
