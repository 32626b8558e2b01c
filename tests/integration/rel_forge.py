#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""An attacker on the path between two sdr-dpu daemons (rel_forge.sh): it
knows both QPs' numbers, IP and MAC addresses (the QP info text the tools
print, --print-qp) but not their control keys, and forges control packets
with scapy (tests/external/build_packets.py, from docs/wire-format.md):

  ack-full    to the sender: ACK entries FULL for every message
  ack-closed  to the sender: ACK entries CLOSED for every message
  cts         to the sender: CTS entries of length 1 for every message
  nack        to the sender: NACK entries, all 8 chunks of submessage 0
              missing, for every message (retransmission amplification)
  parity      to the receiver: RS(1,1) parity (parity = data) of every
              message, carrying attacker bytes, the message's length and
              its immediate (sdr-send's immediate of message n is n)
  abort       to the receiver: ABORT entries (-EMSGSIZE) for every message

Each round sends every entry twice: in wire format version 2 frames with a
random key (never the QP's) and in version 1 frames (no key), all with the
right source address, source QPN and a valid ICRC. --use-key is the control
experiment: the version 2 frames carry the QP's real key (an attacker who
read the QP info), which shows that the frames are otherwise well formed
and effective. Prints, one per line,
"v2 N" and "v1 N": the frames of each version sent to the target.
"""
import argparse
import os
import random
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'external'))
try:
    from scapy.all import sendp
    import build_packets as bp
except ImportError as e:
    print(f"rel_forge: scapy not available ({e}): skipping", file=sys.stderr)
    sys.exit(77)

EMSGSIZE = 90
TO_SENDER = ('ack-full', 'ack-closed', 'cts', 'nack')
TO_RECEIVER = ('parity', 'abort')


def qp_info(arg, timeout=20.0):
    """Fields of a QP info text (sdr_qp_info_format); @LOG: wait for the
    "QPINFO <text>" line a tool prints with --print-qp."""
    text, deadline = arg, time.monotonic() + timeout
    while text.startswith('@'):
        try:
            lines = [l for l in open(arg[1:]) if l.startswith('QPINFO ')]
        except FileNotFoundError:
            lines = []
        if lines:
            text = lines[0][len('QPINFO '):]
        elif time.monotonic() > deadline:
            sys.exit(f"rel_forge: no QPINFO line in {arg[1:]}")
        else:
            time.sleep(0.02)
    d = dict(kv.split('=', 1) for kv in text.strip().split(','))
    d['qpn'] = int(d['qpn'], 0)
    for k in ('mtu', 'chunk_pkts', 'max_msg'):
        d[k] = int(d[k])
    return d


def chunk(entries, n):
    return [entries[i:i + n] for i in range(0, len(entries), n)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--attack', required=True, choices=TO_SENDER + TO_RECEIVER)
    ap.add_argument('--sender', required=True, help="sender's QP info text, or @LOG")
    ap.add_argument('--receiver', required=True, help="receiver's QP info text, or @LOG")
    ap.add_argument('--delay', type=float, default=0.3,
                    help='seconds to wait after the QP info appeared (both QPs connect)')
    ap.add_argument('--iface', required=True)
    ap.add_argument('--messages', type=int, required=True)
    ap.add_argument('--size', type=int, required=True, help='message length (one packet)')
    ap.add_argument('--rounds', type=int, default=10)
    ap.add_argument('--interval', type=float, default=0.05)
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--use-key', action='store_true',
                    help="control experiment: version 2 frames carry the QP's real key")
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    snd, rcv = qp_info(a.sender), qp_info(a.receiver)
    ready = time.monotonic()
    if a.attack in TO_SENDER:
        src, dst = rcv, snd
    else:
        src, dst = snd, rcv
    mtu = dst['mtu']
    assert a.size <= mtu, "one-packet messages only"
    nchunks = -(-(-(-a.size // mtu)) // dst['chunk_pkts'])
    seqs = range(a.messages)
    # (type, entries per message, entry list); PARITY: one entry per message
    if a.attack == 'ack-full':
        typ, per, ents = bp.CTRL_ACK, bp.ACK_MAX, [bp.ack_entry(s, nchunks, bp.ACK_FULL, lost=0)
                                                   for s in seqs]
    elif a.attack == 'ack-closed':
        typ, per, ents = bp.CTRL_ACK, bp.ACK_MAX, [bp.ack_entry(s, 0, bp.ACK_CLOSED) for s in seqs]
    elif a.attack == 'cts':
        typ, per, ents = bp.CTRL_CTS, bp.CTS_MAX, [bp.cts_entry(s, 1) for s in seqs]
    elif a.attack == 'nack':
        typ, per, ents = bp.CTRL_NACK, bp.NACK_MAX, [bp.nack_entry(s, 0, 8, 0, 0xFF) for s in seqs]
    elif a.attack == 'abort':
        typ, per, ents = bp.CTRL_ABORT, bp.ABORT_MAX, [bp.abort_entry(s, -EMSGSIZE, a.size)
                                                       for s in seqs]
    else:
        evil = bytes([0xA5]) * a.size
        typ, per = bp.CTRL_PARITY, 1
        ents = [bp.parity_header(s, a.size, s, bp.EC_RS, 1, 1, sub=0, pidx=0, pkt=0, npkt=1,
                                 clen=a.size) + evil for s in seqs]
    addr = dict(src_mac=src['mac'], dst_mac=dst['mac'], src_ip=src['ip'], dst_ip=dst['ip'],
                dest_qpn=dst['qpn'], src_qpn=src['qpn'])
    key = dst.get('key')
    if a.use_key and key is None:
        sys.exit("rel_forge: --use-key, but the QP info has no key")
    frames, n = [], {1: 0, 2: 0}
    for group in chunk(ents, per):
        for ver in (2, 1):
            fake = rnd.getrandbits(64)
            while key is not None and fake == int(key, 0):
                fake = rnd.getrandbits(64)
            if a.use_key:
                fake = int(key, 0)
            msg = bp.ctrl_message(typ, group, src['qpn'], fake, ver)
            frames.append((ver, bytes(bp.ctrl_frame(msg, psn=rnd.getrandbits(24), **addr))))
    time.sleep(max(0.0, ready + a.delay - time.monotonic()))
    t0 = time.monotonic()
    for r in range(a.rounds):
        sendp([bp.Ether(f) for _, f in frames], iface=a.iface, verbose=False)
        for ver, _ in frames:
            n[ver] += 1
        if r + 1 < a.rounds:
            time.sleep(max(0.0, t0 + (r + 1) * a.interval - time.monotonic()))
    print(f"rel_forge: {a.attack}: {a.rounds} rounds of {len(frames)} frames to QP "
          f"{dst['qpn']:#x} in {time.monotonic() - t0:.2f} s", file=sys.stderr)
    print("v2", n[2])
    print("v1", n[1])
    return 0


if __name__ == '__main__':
    sys.exit(main())
