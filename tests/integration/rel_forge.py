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
  parity-done the same parity, naming only receives the receiver has
              completed (sdr-recv's log, --recv-log; at most 64, once an
              eighth of the messages arrived): parity the receiving
              firmware drops on its header, before its ICRC, when the frame
              carries the key (ec_parity_early)
  abort       to the receiver: ABORT entries (-EMSGSIZE) for every message
  closed      to the sender: QP-CLOSED (the receiving QP is gone), one per
              frame, no FULL bit set: with the key it would fail every
              outstanding send -ECONNRESET

Each round sends every entry twice: in wire format version 2 frames with a
random key (never the QP's) and in version 1 frames (no key), all with the
right source address, source QPN and a valid ICRC. --use-key is the control
experiment: the version 2 frames carry the QP's real key (an attacker who
read the QP info), which shows that the frames are otherwise well formed
and effective. --bad-icrc flips a bit of every frame's ICRC. Prints, one
per line, "v2 N" and "v1 N": the frames of each version sent to the
target; for parity-done and --bad-icrc also "want:COUNTER N" for each of
ctrl_bad_key, ctrl_bad, bad_icrc and ec_parity_early: what the target must
count (its honest peer sends no parity that the early drop takes: one
parity packet per message, RS(1,1)).
"""
import argparse
import os
import random
import socket
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'external'))
try:
    import scapy.all  # noqa: F401 (build_packets builds with it)
    import build_packets as bp
except ImportError as e:
    print(f"rel_forge: scapy not available ({e}): skipping", file=sys.stderr)
    sys.exit(77)

EMSGSIZE = 90
TO_SENDER = ('ack-full', 'ack-closed', 'cts', 'nack', 'closed')
TO_RECEIVER = ('parity', 'parity-done', 'abort')


def completed(log, want, timeout=20.0):
    """Message numbers whose receives sdr-recv reported completed ("msg N
    size S ..." lines of its log): waits until there are at least @p want."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            done = {int(l.split()[1]) for l in open(log)
                    if l.startswith('msg ') and l.split()[2:3] == ['size']}
        except FileNotFoundError:
            done = set()
        if len(done) >= want:
            return sorted(done)
        if time.monotonic() > deadline:
            sys.exit(f"rel_forge: only {len(done)} completed receives in {log}")
        time.sleep(0.02)


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
    ap.add_argument('--bad-icrc', action='store_true', help="flip a bit of every frame's ICRC")
    ap.add_argument('--recv-log', help="parity-done: sdr-recv's log (its per-message lines)")
    ap.add_argument('--queues', type=int, default=1,
                    help="RX queues of the target's port (one per worker): above 1 a frame"
                         " may reach a worker that does not own the QP, which checks its"
                         " ICRC before anything else")
    a = ap.parse_args()
    rnd = random.Random(a.seed)
    t_start = time.monotonic()
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
    elif a.attack == 'closed':
        typ, per, ents = bp.CTRL_CLOSED, 1, [bp.closed_entry(a.messages, 1)]
    elif a.attack == 'abort':
        typ, per, ents = bp.CTRL_ABORT, bp.ABORT_MAX, [bp.abort_entry(s, -EMSGSIZE, a.size)
                                                       for s in seqs]
    else:
        evil = bytes([0xA5]) * a.size
        typ, per = bp.CTRL_PARITY, 1
        if a.attack == 'parity-done':
            # (at most 64 receives: few frames, so that the attack is over
            # long before the transfer even where scapy is slow)
            seqs = completed(a.recv_log, max(1, a.messages // 8))[:64]
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
            f = bytearray(bytes(bp.ctrl_frame(msg, psn=rnd.getrandbits(24), **addr)))
            if a.bad_icrc:
                f[-1] ^= 0x40
            frames.append((ver, bytes(f)))
    # the frames go out through a raw packet socket, as built: scapy's sendp
    # re-dissects every frame and took seconds per round of 800 parity frames
    # on a loaded machine, so that the transfer ended before the attack did
    tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    tx.bind((a.iface, 0))
    time.sleep(max(0.0, ready + a.delay - time.monotonic()))
    t0 = time.monotonic()
    t_built = t0 - ready
    for r in range(a.rounds):
        for _, f in frames:
            tx.send(f)
        for ver, _ in frames:
            n[ver] += 1
        if r + 1 < a.rounds:
            time.sleep(max(0.0, t0 + (r + 1) * a.interval - time.monotonic()))
    print(f"rel_forge: {a.attack}: {a.rounds} rounds of {len(frames)} frames to QP "
          f"{dst['qpn']:#x} in {time.monotonic() - t0:.2f} s (QP info after {ready - t_start:.2f} s,"
          f" frames built and sent from {t_built:.2f} s after it)", file=sys.stderr)
    print("v2", n[2])
    print("v1", n[1])
    if a.attack == 'parity-done' or a.bad_icrc:
        # version 1 frames fail the header check (no key) and version 2
        # frames the key check, except with --use-key: then, naming
        # completed receives, they are dropped on their header before their
        # ICRC is looked at; anything that is not dropped early has its
        # ICRC checked first
        keyed_early = a.use_key and a.attack == 'parity-done'
        v2_icrc = a.bad_icrc and not keyed_early
        want = {'ec_parity_early': n[2] if keyed_early else 0,
                'ctrl_bad_key': 0 if keyed_early or a.bad_icrc else n[2],
                'ctrl_bad': 0 if a.bad_icrc else n[1],
                'bad_icrc': (n[1] if a.bad_icrc else 0) + (n[2] if v2_icrc else 0)}
        if keyed_early and a.bad_icrc and a.queues > 1:
            # (the early drop is the owning worker's: a frame another
            # worker's queue got has its ICRC checked first)
            want['ec_parity_early+bad_icrc'] = want.pop('ec_parity_early') + want.pop('bad_icrc')
        for k, v in want.items():
            print(f"want:{k}", v)
    return 0


if __name__ == '__main__':
    sys.exit(main())
