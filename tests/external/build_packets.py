#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Build sdr-dpu data packets with scapy from docs/wire-format.md alone.

No sdr-dpu code is used: this is the "independent sender" that proves the
documented format is enough to talk to a receiver. Each message of
--msg-len bytes (at least 1) becomes packets p = 0 .. npkts-1
(npkts = ceil(len / MTU)) of MTU bytes except the last, which has SE set, plus
zero-length immediate-only packets at offsets npkts..7 when npkts < 8.
Packet p carries nibble p % 8 of --user-imm in its immediate; every packet of
message seq has PSN seq >> 10 (with msg_id = seq % 1024 in the immediate, it
names the whole 32-bit message number).

Payload byte i of the message with sequence number seq is
    (pattern_seed + seq * 131 + i * 7 + (i >> 8)) & 0xFF
so a receiver can check what it got without a copy of the data.

  build_packets.py --src-mac M --dst-mac M --src-ip A --dst-ip A
                   --dest-qpn BASE --rkey K --mtu MTU --max-msg M
                   [--generations G] [--msg-seq N] [--messages K]
                   [--msg-len L] [--user-imm X] [--pattern-seed S]
                   [--src-qpn Q | --sport PORT] [--corrupt N] [--seed R]
                   (--pcap FILE | --iface IF)

--corrupt N flips one payload bit in N randomly chosen packets that carry
payload, after the ICRC was computed, so a verifying receiver must drop
exactly those; their (seq, pkt_offset) are printed on stdout as
"corrupt SEQ OFFSET". Exit 77 when scapy is missing.
"""
import argparse
import random
import struct
import sys

try:
    from scapy.all import Ether, IP, UDP, Raw, raw, wrpcap, sendp
    from scapy.contrib.roce import BTH
except ImportError as e:
    print(f"build_packets: scapy not available ({e}): skipping", file=sys.stderr)
    sys.exit(77)

OP_WRITE_ONLY_IMM = 0x2B
MAX_MSGS = 1024
MAX_PKTS = 1 << 18
IMM_NIBBLES = 8


def pattern(seed, seq, length):
    return bytes((seed + seq * 131 + i * 7 + (i >> 8)) & 0xFF for i in range(length))


MASK64 = (1 << 64) - 1


def pattern_splitmix(seed, seq, length):
    """The pattern sdr-send/sdr-recv use (docs/host-api.md): splitmix64 words,
    state seeded with seed ^ ((seq + 1) * golden), bytes little-endian."""
    state = (seed ^ ((seq + 1) * 0x9E3779B97F4A7C15)) & MASK64
    out = bytearray()
    while len(out) < length:
        state = (state + 0x9E3779B97F4A7C15) & MASK64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
        z ^= z >> 31
        out += z.to_bytes(8, 'little')
    return bytes(out[:length])


def imm_pack(msg_id, pkt_off, frag):
    return ((msg_id % MAX_MSGS) << 22) | ((pkt_off % MAX_PKTS) << 4) | (frag & 0xF)


def message_packets(a, seq, psn=0):
    """Frames of message number seq, in sending order; returns (frames, psn).
    (psn is passed through for callers that number their control packets.)"""
    msg_id = seq % MAX_MSGS
    gen = (seq // MAX_MSGS) % a.generations
    dqpn = (a.dest_qpn + gen) & 0xFFFFFF
    data = (pattern_splitmix if a.pattern == 'splitmix' else pattern)(a.pattern_seed, seq, a.msg_len)
    user_imm = seq & 0xFFFFFFFF if a.imm_is_seq else a.user_imm
    npkts = -(-a.msg_len // a.mtu)
    out = []
    for off in range(max(npkts, IMM_NIBBLES)):
        chunk = data[off * a.mtu:(off + 1) * a.mtu] if off < npkts else b''
        pad = (-len(chunk)) % 4
        imm = imm_pack(msg_id, off, (user_imm >> (4 * (off % IMM_NIBBLES))) & 0xF)
        reth = struct.pack('!QII', msg_id * a.max_msg + off * a.mtu, a.rkey, len(chunk))
        pkt = (Ether(src=a.src_mac, dst=a.dst_mac) /
               IP(src=a.src_ip, dst=a.dst_ip, id=0, flags='DF', ttl=64, tos=0) /
               UDP(sport=a.sport, dport=4791, chksum=0) /
               BTH(opcode=OP_WRITE_ONLY_IMM, solicited=int(off == npkts - 1),
                   padcount=pad, pkey=0xFFFF, dqpn=dqpn, psn=(seq >> 10) & 0xFFFFFF) /
               Raw(reth + struct.pack('!I', imm) + chunk + b'\0' * pad))
        out.append((off, len(chunk), bytearray(raw(pkt))))
    return out, psn


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--src-mac', required=True)
    ap.add_argument('--dst-mac', required=True)
    ap.add_argument('--src-ip', required=True)
    ap.add_argument('--dst-ip', required=True)
    ap.add_argument('--dest-qpn', type=lambda s: int(s, 0), required=True,
                    help='receiver QP block base (generation 0)')
    ap.add_argument('--generations', type=int, default=1, help='G: QPNs in the block')
    ap.add_argument('--rkey', type=lambda s: int(s, 0), required=True)
    ap.add_argument('--mtu', type=int, required=True, choices=(256, 512, 1024, 2048, 4096))
    ap.add_argument('--max-msg', type=int, required=True, help='M: bytes per message slot')
    ap.add_argument('--msg-seq', type=int, default=0, help='sequence number of the first message')
    ap.add_argument('--messages', type=int, default=1, help='consecutive messages to build')
    ap.add_argument('--msg-len', type=int, default=4096)
    ap.add_argument('--user-imm', type=lambda s: int(s, 0), default=0)
    ap.add_argument('--pattern-seed', type=lambda s: int(s, 0), default=0)
    ap.add_argument('--src-qpn', type=lambda s: int(s, 0), default=0,
                    help="sender's QP block base (only feeds the UDP source port)")
    ap.add_argument('--sport', type=lambda s: int(s, 0), default=None,
                    help='UDP source port (default 0xC000 | (src-qpn & 0x3FFF))')
    ap.add_argument('--pattern', choices=('simple', 'splitmix'), default='simple',
                    help='payload pattern: simple (see above) or splitmix (sdr-recv --verify)')
    ap.add_argument('--imm-is-seq', action='store_true',
                    help='user immediate of each message = its sequence number (as sdr-send)')
    ap.add_argument('--corrupt', type=int, default=0, metavar='N')
    ap.add_argument('--corrupt-extra', action='store_true',
                    help='corrupted packets are extra copies sent before the clean ones')
    ap.add_argument('--seed', type=int, default=1, help='random seed for --corrupt')
    dst = ap.add_mutually_exclusive_group(required=True)
    dst.add_argument('--pcap')
    dst.add_argument('--iface')
    a = ap.parse_args()

    g = a.generations
    if g < 1 or g & (g - 1):
        ap.error('--generations must be a power of two')
    if not 1 <= a.msg_len <= a.max_msg:
        ap.error('--msg-len must be within 1..--max-msg (empty messages do not exist)')
    if -(-a.msg_len // a.mtu) > MAX_PKTS:
        ap.error('message has more packets than pkt_offset can name')
    if a.sport is None:
        a.sport = 0xC000 | (a.src_qpn & 0x3FFF)
    if not 0xC000 <= a.sport <= 0xFFFF:
        ap.error('--sport must be in 49152..65535')
    a.user_imm &= 0xFFFFFFFF

    frames = []
    for k in range(a.messages):
        seq = a.msg_seq + k
        pk, _ = message_packets(a, seq)
        frames += [(seq, off, n, f) for off, n, f in pk]

    with_payload = [i for i, (_, _, n, _) in enumerate(frames) if n > 0]
    if a.corrupt > len(with_payload):
        ap.error(f'--corrupt {a.corrupt}: only {len(with_payload)} packets carry payload')
    r = random.Random(a.seed)
    extra = []
    for i in sorted(r.sample(with_payload, a.corrupt)):
        seq, off, n, f = frames[i]
        if a.corrupt_extra:
            f = bytearray(f)
            extra.append((seq, off, n, f))
        # payload starts after Eth 14 + IP 20 + UDP 8 + BTH 12 + RETH 16 + ImmDt 4
        f[74 + r.randrange(n)] ^= 1 << r.randrange(8)
        print(f"corrupt {seq} {off}")

    pkts = [Ether(bytes(f)) for _, _, _, f in extra + frames]
    if a.pcap:
        wrpcap(a.pcap, pkts)
    else:
        sendp(pkts, iface=a.iface, verbose=False)
    print(f"build_packets: {len(pkts)} packets, {a.messages} message(s) of {a.msg_len} B",
          file=sys.stderr)
    return 0


if __name__ == '__main__':
    sys.exit(main())
