#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Hostile and lossy input for an EC receiver, built with scapy from
docs/wire-format.md (data, parity and NACK packets by
tests/external/build_packets.py; parity bytes and bad fields here).

Message 0 (--msg-len bytes, sdr-send's pattern and immediate)
for a receiving QP with XOR(k, m) and one-packet chunks: the data packets
of the chunks in --lose and every immediate-only packet are withheld; the
valid parity chunks are computed here (parity i = XOR of data chunks j with
j % m == i, zero-padded to the coded length) and interleaved with one
malformed or mismatched packet per receive-side drop counter; then message
1 of the same length, whole and without parity. Prints the
counters the receiver must show, one "name value" per line, on stdout.
"""
import argparse
import sys
import os

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'external'))
try:
    from scapy.all import Ether, sendp
    import build_packets as bp
except ImportError as e:
    print(f"ec_hostile: scapy not available ({e}): skipping", file=sys.stderr)
    sys.exit(77)

XOR = bp.EC_XOR


def ctrl_frame(a, msg, psn):
    return bp.ctrl_frame(msg, src_mac=a.src_mac, dst_mac=a.dst_mac, src_ip=a.src_ip,
                         dst_ip=a.dst_ip, dest_qpn=a.dest_qpn, src_qpn=a.src_qpn, psn=psn)


def parity_msg(a, data, *, seq=0, msg_len=None, imm=None, code=XOR, k=None, m=None,
               flags=0, sub=0, pidx=0, resv=0, pkt=0, npkt=1, clen=None, src_qpn=None,
               key=None):
    hdr = bp.parity_header(seq, a.msg_len if msg_len is None else msg_len,
                           a.imm if imm is None else imm, code, a.k if k is None else k,
                           a.m if m is None else m, sub=sub, pidx=pidx, pkt=pkt, npkt=npkt,
                           clen=a.mtu if clen is None else clen, flags=flags, resv=resv)
    return bp.ctrl_message(bp.CTRL_PARITY, [hdr + data],
                           a.src_qpn if src_qpn is None else src_qpn,
                           a.key if key is None else key)


def bad_icrc(frame):
    """The frame with one bit of its ICRC (its last 4 bytes) flipped."""
    b = bytearray(bytes(frame))
    b[-1] ^= 0x40
    return Ether(bytes(b))


def nack_msg(a, entries):
    return bp.ctrl_message(bp.CTRL_NACK, [bp.nack_entry(*e) for e in entries], a.src_qpn, a.key)


def main():
    ap = argparse.ArgumentParser()
    for o in ('--src-mac', '--dst-mac', '--src-ip', '--dst-ip', '--iface'):
        ap.add_argument(o, required=True)
    ap.add_argument('--dest-qpn', type=lambda s: int(s, 0), required=True)
    ap.add_argument('--src-qpn', type=lambda s: int(s, 0), required=True)
    ap.add_argument('--rkey', type=lambda s: int(s, 0), required=True)
    ap.add_argument('--key', type=lambda s: int(s, 0), required=True,
                    help="the receiving QP's control key (its QP info)")
    ap.add_argument('--max-msg', type=int, required=True)
    ap.add_argument('--msg-len', type=int, default=20000)
    ap.add_argument('--seed', type=lambda s: int(s, 0), required=True)
    ap.add_argument('--k', type=int, default=8)
    ap.add_argument('--m', type=int, default=2)
    ap.add_argument('--lose', default='1,2', help='data chunks (packets) withheld')
    ap.add_argument('--queues', type=int, default=1,
                    help="RX queues of the receiver's port (one per worker): above 1 the"
                         " frames may reach a worker that does not own the QP, which checks"
                         " their ICRC before anything else")
    a = ap.parse_args()
    a.mtu = 4096
    a.generations = 4
    a.sport = 0xC000 | (a.dest_qpn & 0x3FFF)
    a.pattern, a.pattern_seed, a.imm_is_seq, a.user_imm = 'splitmix', a.seed, True, 0
    a.imm = 0  # sdr-send's immediate of message 0 is its index
    lose = {int(x) for x in a.lose.split(',')}
    npkts = -(-a.msg_len // a.mtu)
    assert npkts <= a.k, "one submessage only"
    data = bp.pattern_splitmix(a.seed, 0, a.msg_len)
    chunks = [data[i * a.mtu:(i + 1) * a.mtu].ljust(a.mtu, b'\0') for i in range(npkts)]
    par = []
    for i in range(a.m):
        p = bytearray(a.mtu)
        for j in range(i, npkts, a.m):
            for b, v in enumerate(chunks[j]):
                p[b] ^= v
        par.append(bytes(p))
    groups = {j % a.m for j in lose}
    assert len(groups) == len(lose), "XOR repairs one loss per group"

    frames, psn = [], 0
    pk, psn = bp.message_packets(a, 0, psn)
    for off, n, f in pk:
        if off < npkts and off not in lose:
            frames.append(Ether(bytes(f)))

    def c(msg):
        nonlocal psn
        frames.append(ctrl_frame(a, msg, psn))
        psn += 1

    expect = {}

    def bad(name, msg, icrc=True):
        c(msg)
        if not icrc:
            frames[-1] = bad_icrc(frames[-1])
        expect[name] = expect.get(name, 0) + 1

    p0 = par[min(groups)]
    g0 = min(groups)
    # before any valid parity: every field check
    bad('ec_parity_bad', parity_msg(a, p0, pidx=g0, k=0))
    bad('ec_parity_bad', parity_msg(a, p0, pidx=a.m))        # index out of range
    bad('ec_param_mismatch', parity_msg(a, p0, pidx=g0, code=1))  # RS on an XOR QP
    bad('ec_param_mismatch', parity_msg(a, p0, pidx=g0, k=a.k + 1))
    bad('ec_parity_unknown', parity_msg(a, p0, pidx=g0, seq=1000))
    bad('ec_parity_len', parity_msg(a, p0, pidx=g0, msg_len=a.max_msg + 1))
    bad('ec_parity_len', parity_msg(a, p0[:100], pidx=g0))   # payload too short
    bad('ec_parity_len', parity_msg(a, p0, pidx=g0, clen=a.mtu - 4))
    bad('ec_parity_sub', parity_msg(a, p0, pidx=g0, sub=1))
    bad('ec_parity_sub', parity_msg(a, p0, pidx=g0, npkt=2))
    bad('wrong_peer', parity_msg(a, p0, pidx=g0, src_qpn=a.src_qpn + 4))
    # the valid parity chunk with a corrupted ICRC: the message has no EC
    # state yet, so it takes the full path and the ICRC refuses it
    bad('bad_icrc', parity_msg(a, p0, pidx=g0), icrc=False)
    # the first valid parity chunk, then a duplicate and a contradicting one
    c(parity_msg(a, p0, pidx=g0))
    bad('ec_parity_dup', parity_msg(a, p0, pidx=g0))
    # a needed parity chunk (the submessage still lacks data) with a
    # corrupted ICRC: not dropped early, refused by the ICRC
    g1 = max(groups)
    if g1 != g0:
        bad('bad_icrc', parity_msg(a, par[g1], pidx=g1), icrc=False)
    bad('ec_param_mismatch', parity_msg(a, p0, pidx=g0, imm=0x1234))
    bad('ec_parity_len', parity_msg(a, p0, pidx=g0, msg_len=a.msg_len - 1))
    # a parity chunk of a group that lost nothing is stored but not needed
    # NACKs at a receiver with no sends: malformed, then stale
    bad('nack_bad', nack_msg(a, [(0, 0, 8, 0x80, 1)]))        # unknown flag
    bad('nack_bad', nack_msg(a, [(0, 0, 2, 0, 0x4)]))         # bit past k
    bad('nack_stale', nack_msg(a, [(5, 0, 8, 0, 1)]))
    # the other parity chunks: the message becomes decodable
    for g in sorted(groups - {g0}):
        c(parity_msg(a, par[g], pidx=g))
    # after completion (the receiver's tool waits for message 1, below, so
    # the QP is still there): dropped on the header, before the ICRC, which
    # is not even looked at; without the key it is refused as before
    bad('ec_parity_early', parity_msg(a, p0, pidx=g0))
    bad('ec_parity_early', parity_msg(a, p0, pidx=g0), icrc=False)
    bad('ctrl_bad_key', parity_msg(a, p0, pidx=g0, key=a.key ^ 1))
    bad('bad_icrc', parity_msg(a, p0, pidx=g0, key=a.key ^ 1), icrc=False)
    # message 1, complete and without parity: the QP still works
    pk, psn = bp.message_packets(a, 1, psn)
    frames += [Ether(bytes(f)) for _, _, f in pk]
    sendp(frames, iface=a.iface, verbose=False)
    print(f"ec_hostile: {len(frames)} packets; {npkts - len(lose)} of {npkts} data packets,"
          f" {len(groups)} parity chunks", file=sys.stderr)
    expect['ec_chunks_recovered'] = len(lose)
    if a.queues > 1:
        # (the early drop is the owning worker's: where the frames reach
        # another worker's queue, the keyed parity with a bad ICRC has its
        # ICRC checked first)
        expect['bad_icrc+ec_parity_early'] = expect.pop('bad_icrc') + expect.pop('ec_parity_early')
    for k_, v in sorted(expect.items()):
        print(k_, v)
    return 0


if __name__ == '__main__':
    sys.exit(main())
