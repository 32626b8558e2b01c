#!/usr/bin/python3
"""Counter identities of a Selective Repeat run (docs/reliability.md).

Reads the daemons' --stats-json files and checks that every packet is
accounted for:

 1. sender data packets = first-pass packets of the plan + retransmitted
    packets (first pass of a message: ceil(size / MTU), and at least 8, the
    immediate-only packets included, when it carries a user immediate:
    sdr-send's message i carries immediate i, so message 0 has none);
 2. receiving port: frames the link emulator released = frames the port
    received;
 3. every received frame is counted exactly once: placed data packets +
    accepted control packets (CTS, ACK) + one drop counter;
 4. every message completed; with --min-retx, retransmissions happened.

Usage: sr_check.py --sizes 4K,1M --count N [--mtu 4096] --ring STATS
       sr_check.py ... --sender A.json --receiver B.json
       sr_check.py --sizes 1,100 --count N [--mtu 4096] [--no-imm] --print-first-pass
                   (the first-pass data packets of that sdr-send run)
"""
import argparse
import json
import os
import sys

# per-entry counters of control packets that were otherwise accepted
ENTRY_LEVEL = ("cts_bad", "cts_stale", "ack_bad", "ack_stale", "ack_unsent", "holes_bad",
               "holes_stale")


def size(s):
    mul = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(s[:-1]) * mul[s[-1].upper()] if s[-1].upper() in mul else int(s)


def frames_accounted(drops, insts):
    placed = sum(i["qp_totals"]["rx_pkts"] for i in insts)
    # (peer_closed: the peer's QP-CLOSED at its teardown)
    ctrl = sum(i["qp_totals"]["cts_rx"] + i["qp_totals"]["sr_acks_rx"] +
               i["qp_totals"].get("peer_closed", 0) for i in insts)
    dropped = sum(v for k, v in drops.items() if k not in ENTRY_LEVEL and k in RX_DROPS)
    return placed + ctrl + dropped, placed, ctrl, dropped


RX_DROPS = set()


def consts():
    """What the C code defines and this script needs (counter lists, packets
    per message): sdr_consts.json, written at build time by gen_consts.c
    (SDR_CONSTS, else the build tree's)."""
    path = os.environ.get("SDR_CONSTS") or os.path.join(
        os.environ.get("SDR_BUILD", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                 "..", "..", "build")),
        "tests", "integration", "sdr_consts.json")
    try:
        return json.load(open(path))
    except (OSError, ValueError) as e:
        sys.exit("cannot read %s (build the tree first): %s" % (path, e))


def rx_drop_names():
    """The receive-drop counters (SDR_RX_DROP_LIST of firmware/prim/sdr_counters.h)."""
    return consts()["rx_drops"]


def msg_pkts(size, mtu, imm):
    """Data packets of a message: ceil(size / MTU), at least 1; with a user
    immediate (imm != 0; 0 is none, opcode 0x2A) at least imm_nibbles."""
    n = max(-(-size // mtu), 1)
    return n if imm == 0 else max(n, consts()["imm_nibbles"])


def owned(length, w, c, s):
    """Bytes of a message of LENGTH that channel C of W owns with stripes of S
    bytes (common/sdr_stripe.h: stripes c, c+W, ...)."""
    full = length // s
    n = (full - c + w - 1) // w if full > c else 0
    return n * s + (length % s if full % w == c else 0)


def plan_pkts(sizes, count, mtu, no_imm=False, channels=1, stripe=0):
    """First-pass data packets of one sdr-send run of --sizes SIZES --count
    COUNT: message i has size sizes[i % len(sizes)] and user immediate i
    (docs/host-api.md), so message 0 carries none; with --no-imm none does.
    With CHANNELS > 1 (stripes of STRIPE bytes) a message is one message of
    each channel, of the bytes it owns, with the same immediate; a channel
    that owns none carries a one-byte filler whose immediate is 1 where the
    message's is 0, else 0 (host/libsdr/chan.c "short messages")."""
    msgs = [size(s) for s in sizes.split(",")] * count
    if channels > 1:
        def one(b, c, imm):
            n = owned(b, channels, c, stripe)
            return msg_pkts(n, mtu, imm) if n else msg_pkts(1, mtu, 1 if imm == 0 else 0)
        return sum(one(b, c, 0 if no_imm else i)
                   for i, b in enumerate(msgs) for c in range(channels))
    return sum(msg_pkts(b, mtu, 0 if no_imm else i) for i, b in enumerate(msgs))


def add_channel_args(ap):
    """--channels (default $SDR_CHANNELS, the tools' default too, else 1),
    --stripe and --chunk-pkts (the stripe's default: one chunk)."""
    ap.add_argument("--channels", type=int, default=int(os.environ.get("SDR_CHANNELS", "1")),
                    help="the run's --channels: every message is one per channel"
                         " (default $SDR_CHANNELS, else 1)")
    ap.add_argument("--stripe", type=int, default=0,
                    help="with --channels: stripe bytes (default MTU x --chunk-pkts)")
    ap.add_argument("--chunk-pkts", type=int, default=16,
                    help="the run's chunk_pkts (default the daemon's, 16)")


def channel_defaults(a):
    if a.channels > 1 and not a.stripe:
        a.stripe = a.mtu * a.chunk_pkts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", required=True)
    ap.add_argument("--count", type=int, required=True)
    ap.add_argument("--mtu", type=int, default=4096)
    ap.add_argument("--ring")
    ap.add_argument("--sender")
    ap.add_argument("--receiver")
    ap.add_argument("--extra", help="a second size list run on the same daemons")
    ap.add_argument("--extra-count", type=int, default=1)
    ap.add_argument("--min-retx", type=int, default=0)
    ap.add_argument("--link-nonzero", default="",
                    help="comma list of receiver link-emulator counters that must be > 0"
                         " (shows the case really exercised it)")
    ap.add_argument("--print-first-pass", action="store_true",
                    help="print the first-pass data packets of the run and exit")
    ap.add_argument("--no-imm", action="store_true", help="the run was sdr-send --no-imm")
    add_channel_args(ap)
    a = ap.parse_args()
    channel_defaults(a)
    first = plan_pkts(a.sizes, a.count, a.mtu, a.no_imm, a.channels, a.stripe)
    if a.extra:  # a second sdr-send run: its messages count from 0 again
        first += plan_pkts(a.extra, a.extra_count, a.mtu, a.no_imm, a.channels, a.stripe)
    nmsgs = (len(a.sizes.split(",")) * a.count + (len(a.extra.split(",")) * a.extra_count
                                                    if a.extra else 0)) * a.channels
    if a.print_first_pass:
        print(first)
        return 0
    RX_DROPS.update(rx_drop_names())
    bad = []

    if a.ring:
        d = json.load(open(a.ring))
        snd, rcv = d["instances"][0], d["instances"][1]
        groups = [(d["drops"], [snd, rcv], snd["rx_pkts"] + rcv["rx_pkts"])]
        if rcv["link"]["pkts_in"] != snd["tx_pkts"]:
            bad.append("receiver link saw %d frames, sender port sent %d"
                       % (rcv["link"]["pkts_in"], snd["tx_pkts"]))
    else:
        ds, dr = json.load(open(a.sender)), json.load(open(a.receiver))
        snd, rcv = ds["instances"][0], dr["instances"][0]
        groups = [(ds["drops"], [snd], snd["rx_pkts"]), (dr["drops"], [rcv], rcv["rx_pkts"])]
        # veth: the kernel may add frames of its own (IPv6 ND), never fewer
        if rcv["link"]["pkts_in"] < snd["tx_pkts"]:
            bad.append("receiver link saw %d frames, fewer than the %d the sender sent"
                       % (rcv["link"]["pkts_in"], snd["tx_pkts"]))
    st, rt = snd["qp_totals"], rcv["qp_totals"]
    retx = st["sr_retx_pkts"]
    print("sender: data packets %d = first pass %d + retransmitted %d (%d units, %d RTO expiries);"
          " ACKs rx %d" % (st["tx_pkts"], first, retx, st["sr_retx_units"],
                           st["sr_rto_expiries"], st["sr_acks_rx"]))
    if st["tx_pkts"] != first + retx:
        bad.append("sender data packets %d != first pass %d + retransmitted %d"
                   % (st["tx_pkts"], first, retx))
    for inst in (snd, rcv):
        if inst["link"]["on"] and inst["link"]["released"] != inst["rx_pkts"]:
            bad.append("%s: link released %d frames, port received %d"
                       % (inst["name"], inst["link"]["released"], inst["rx_pkts"]))
    for drops, insts, rx in groups:
        tot, placed, ctrl, dropped = frames_accounted(drops, insts)
        print("frames received %d = placed %d + control %d + counted drops %d"
              % (rx, placed, ctrl, dropped))
        if tot != rx:
            bad.append("frames received %d != placed %d + control %d + drops %d"
                       % (rx, placed, ctrl, dropped))
    if rt["msgs_recv"] != nmsgs or st["msgs_sent"] != nmsgs:
        bad.append("messages: sent %d, received %d, planned %d"
                   % (st["msgs_sent"], rt["msgs_recv"], nmsgs))
    if retx < a.min_retx:
        bad.append("only %d retransmitted packets (expected >= %d)" % (retx, a.min_retx))
    for k in filter(None, a.link_nonzero.split(",")):
        if not rcv["link"].get(k):
            bad.append("link emulator counter %s is 0: the case did not exercise it" % k)
        else:
            print("receiver link emulator: %s = %d" % (k, rcv["link"][k]))
    if st["sr_send_timeouts"] or rt["sr_recv_timeouts"]:
        bad.append("global timeouts on a working link")
    for b in bad:
        print("FAIL:", b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
