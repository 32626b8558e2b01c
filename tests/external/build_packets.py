#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Build sdr-dpu data packets with scapy from docs/wire-format.md alone
(and, as a library, control packets of wire format versions 1 and 2:
ctrl_message(), ctrl_frame(), the *_entry() builders and parse_ctrl()).

No sdr-dpu code is used: this is the "independent sender" that proves the
documented format is enough to talk to a receiver. Each message of
--msg-len bytes (at least 1) becomes packets p = 0 .. npkts-1
(npkts = ceil(len / MTU)) of MTU bytes except the last, which has SE set.
With a non-zero --user-imm they are UC RDMA WRITE Only with Immediate
(0x2B): packet p carries nibble p % 8 of the immediate, and zero-length
immediate-only packets at offsets npkts..7 follow when npkts < 8. With
--user-imm 0 (the absent immediate) they are UC RDMA WRITE Only (0x2A): no
ImmDt, the VA alone places them, no immediate-only packets. Every packet of
message seq has PSN seq >> 10 (with msg_id = seq % 1024 from the immediate
or the VA, it names the whole 32-bit message number).

Payload byte i of the message with sequence number seq is
    (pattern_seed + seq * 131 + i * 7 + (i >> 8)) & 0xFF
so a receiver can check what it got without a copy of the data.

  build_packets.py --src-mac M --dst-mac M --src-ip A --dst-ip A
                   --dest-qpn BASE --rkey K --mtu MTU --max-msg M
                   [--generations G] [--msg-seq N] [--messages K]
                   [--msg-len L] [--user-imm X] [--pattern-seed S]
                   [--src-qpn Q] [--sport PORT] [--corrupt N] [--seed R]
                   [--cts N [--psn P] [--key K]]
                   (--pcap FILE | --iface IF)

--cts N puts one CTS control packet first (wire format version 2), with N
entries seq = --msg-seq + i, length = --max-msg, PSN P, key K (default 0),
as tests/external/gen_pcap does with the same options.

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

OP_WRITE_ONLY = 0x2A
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
    # immediate 0 = no immediate: 0x2A packets, no immediate-only packets
    for off in range(max(npkts, IMM_NIBBLES) if user_imm else npkts):
        chunk = data[off * a.mtu:(off + 1) * a.mtu] if off < npkts else b''
        pad = (-len(chunk)) % 4
        reth = struct.pack('!QII', msg_id * a.max_msg + off * a.mtu, a.rkey, len(chunk))
        if user_imm:
            imm = imm_pack(msg_id, off, (user_imm >> (4 * (off % IMM_NIBBLES))) & 0xF)
            op, hdrs = OP_WRITE_ONLY_IMM, reth + struct.pack('!I', imm)
        else:
            op, hdrs = OP_WRITE_ONLY, reth
        pkt = (Ether(src=a.src_mac, dst=a.dst_mac) /
               IP(src=a.src_ip, dst=a.dst_ip, id=0, flags='DF', ttl=64, tos=0) /
               UDP(sport=a.sport, dport=4791, chksum=0) /
               BTH(opcode=op, solicited=int(off == npkts - 1),
                   padcount=pad, pkey=0xFFFF, dqpn=dqpn, psn=(seq >> 10) & 0xFFFFFF) /
               Raw(hdrs + chunk + b'\0' * pad))
        out.append((off, len(chunk), bytearray(raw(pkt))))
    return out, psn


# ---------------------------------------------------------------------------
# Control packets (docs/wire-format.md section 6): UC SEND Only to the peer's
# QP block base, the control message at offset 54, pad, ICRC.
#
# Version 2 header, 20 bytes: magic "SDRC", version 2, type, count, src_qpn
# (the sender's QP block base), key (8 bytes, big-endian) = the DESTINATION
# QP's 64-bit control key from its QP info (text form key=0x<16 hex>);
# entries from offset 20. Version 1 (12 bytes, no key, entries from offset
# 12) is what firmware before version 2 sent and accepted; a version 2
# receiver drops it (ctrl_bad). Both are built here so that tests can send
# either.

OP_SEND_ONLY = 0x24
CTRL_MAGIC = 0x53445243
CTRL_CTS, CTRL_ACK, CTRL_NACK, CTRL_PARITY, CTRL_ABORT, CTRL_CLOSED = 1, 2, 3, 4, 5, 6
ACK_FULL, ACK_CLOSED = 0x1, 0x2
NACK_IMM = 0x1
EC_RS, EC_XOR = 1, 2
CTS_MAX, ACK_MAX, NACK_MAX, ABORT_MAX = 64, 32, 64, 64


def ctrl_header(typ, count, src_qpn, key=0, version=2):
    """Control message header: 20 bytes (version 2, with the destination
    QP's key) or 12 bytes (version 1, no key)."""
    h = struct.pack('!IBBHI', CTRL_MAGIC, version, typ, count, src_qpn & 0xFFFFFFFF)
    if version >= 2:
        h += struct.pack('!Q', key & MASK64)
    return h


def cts_entry(seq, length):
    """CTS entry (8 bytes): receive number seq posted with length bytes."""
    return struct.pack('!II', seq & 0xFFFFFFFF, length & 0xFFFFFFFF)


def ack_entry(seq, cum, flags=0, off=0, window=0, lost=None):
    """ACK entry (28 bytes): seq, cum, flags (ACK_FULL, ACK_CLOSED), 24-bit
    window offset, 128-bit selective window (bit i = chunk cum + off + i,
    least significant bit of the first byte first). A FULL entry carries
    `lost` (big-endian, 4 bytes) in place of the window's first bytes."""
    if lost is not None:
        win = struct.pack('!I', lost & 0xFFFFFFFF) + bytes(12)
    else:
        win = (window & ((1 << 128) - 1)).to_bytes(16, 'little')
    return struct.pack('!IIB', seq & 0xFFFFFFFF, cum & 0xFFFFFFFF, flags) + \
        (off & 0xFFFFFF).to_bytes(3, 'big') + win


def nack_entry(seq, sub, k, flags=0, missing=0):
    """NACK entry (16 bytes): submessage sub of message seq, k data chunks,
    flags (NACK_IMM), missing-chunk bitmap (bit i = chunk sub*k + i)."""
    return struct.pack('!IHBBQ', seq & 0xFFFFFFFF, sub, k, flags, missing & MASK64)


def parity_header(seq, msg_len, imm, code, k, m, sub=0, pidx=0, pkt=0, npkt=1, clen=0,
                  flags=0, resv=0):
    """PARITY header (28 bytes); the parity bytes follow it."""
    return struct.pack('!IIIBBBBHBBHHI', seq & 0xFFFFFFFF, msg_len, imm & 0xFFFFFFFF, code, k,
                       m, flags, sub, pidx, resv, pkt, npkt, clen)


def abort_entry(seq, status, length):
    """ABORT entry (12 bytes, version 2, sender -> receiver): send seq
    completed with status (int32, e.g. -EMSGSIZE) and was length bytes."""
    return struct.pack('!IiI', seq & 0xFFFFFFFF, status, length & 0xFFFFFFFF)


def closed_entry(recv_next, reason, full=bytes(128)):
    """QP-CLOSED entry (136 bytes, version 2, a destroyed QP's DPU -> its
    peer): its next receive number, the reason (1 destroyed, 2 detached),
    3 zero bytes, 1024 FULL bits (receive recv_next - 1024 + i)."""
    assert len(full) == 128
    return struct.pack('!IB3x', recv_next & 0xFFFFFFFF, reason) + bytes(full)


def ctrl_message(typ, entries, src_qpn, key=0, version=2, count=None):
    """Header + entries (a list of entry byte strings; for PARITY one
    element, parity header + parity bytes). count defaults to len(entries)."""
    n = len(entries) if count is None else count
    return ctrl_header(typ, n, src_qpn, key, version) + b''.join(entries)


def ctrl_frame(msg, *, src_mac, dst_mac, src_ip, dst_ip, dest_qpn, src_qpn, psn=0):
    """The frame of one control message: UC SEND Only to the block base
    dest_qpn, UDP source port from dest_qpn (src_qpn is the message's own
    field); scapy computes lengths, checksum and ICRC."""
    del src_qpn  # (in msg already)
    pad = (-len(msg)) % 4
    return (Ether(src=src_mac, dst=dst_mac) /
            IP(src=src_ip, dst=dst_ip, id=0, flags='DF', ttl=64, tos=0) /
            UDP(sport=0xC000 | (dest_qpn & 0x3FFF), dport=4791, chksum=0) /
            BTH(opcode=OP_SEND_ONLY, solicited=0, padcount=pad, pkey=0xFFFF,
                dqpn=dest_qpn & 0xFFFFFF, psn=psn & 0xFFFFFF) /
            Raw(msg + b'\0' * pad))


def parse_ctrl(msg):
    """Split a control message: (version, type, count, src_qpn, key or None,
    entry bytes). Raises ValueError on a bad magic or a short header."""
    if len(msg) < 12:
        raise ValueError('control message shorter than 12 bytes')
    magic, ver, typ, count, src = struct.unpack('!IBBHI', msg[:12])
    if magic != CTRL_MAGIC:
        raise ValueError(f'bad magic {magic:#x}')
    if ver >= 2:
        if len(msg) < 20:
            raise ValueError('version 2 control message shorter than 20 bytes')
        return ver, typ, count, src, struct.unpack('!Q', msg[12:20])[0], msg[20:]
    return ver, typ, count, src, None, msg[12:]


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
                    help="sender's QP block base (control packets' src_qpn)")
    ap.add_argument('--sport', type=lambda s: int(s, 0), default=None,
                    help='UDP source port (default 0xC000 | (dest-qpn & 0x3FFF))')
    ap.add_argument('--pattern', choices=('simple', 'splitmix'), default='simple',
                    help='payload pattern: simple (see above) or splitmix (sdr-recv --verify)')
    ap.add_argument('--imm-is-seq', action='store_true',
                    help='user immediate of each message = its sequence number (as sdr-send)')
    ap.add_argument('--corrupt', type=int, default=0, metavar='N')
    ap.add_argument('--corrupt-extra', action='store_true',
                    help='corrupted packets are extra copies sent before the clean ones')
    ap.add_argument('--seed', type=int, default=1, help='random seed for --corrupt')
    ap.add_argument('--cts', type=int, default=0, metavar='N',
                    help='one CTS control packet with N entries first')
    ap.add_argument('--psn', type=lambda s: int(s, 0), default=0, help='PSN of the CTS packet')
    ap.add_argument('--key', type=lambda s: int(s, 0), default=0,
                    help="control key in the CTS packet (the receiving QP's)")
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
        a.sport = 0xC000 | (a.dest_qpn & 0x3FFF)
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
        # payload starts after Eth 14 + IP 20 + UDP 8 + BTH 12 + RETH 16
        # (+ ImmDt 4 with opcode 0x2B)
        f[(74 if f[42] == OP_WRITE_ONLY_IMM else 70) + r.randrange(n)] ^= 1 << r.randrange(8)
        print(f"corrupt {seq} {off}")

    pkts = [Ether(bytes(f)) for _, _, _, f in extra + frames]
    if a.cts:
        if a.cts > CTS_MAX:
            ap.error(f'--cts: at most {CTS_MAX} entries')
        msg = ctrl_message(CTRL_CTS, [cts_entry(a.msg_seq + i, a.max_msg) for i in range(a.cts)],
                           a.src_qpn, a.key)
        pkts.insert(0, ctrl_frame(msg, src_mac=a.src_mac, dst_mac=a.dst_mac, src_ip=a.src_ip,
                                  dst_ip=a.dst_ip, dest_qpn=a.dest_qpn, src_qpn=a.src_qpn,
                                  psn=a.psn))
    if a.pcap:
        wrpcap(a.pcap, pkts)
    else:
        sendp(pkts, iface=a.iface, verbose=False)
    print(f"build_packets: {len(pkts)} packets, {a.messages} message(s) of {a.msg_len} B",
          file=sys.stderr)
    return 0


if __name__ == '__main__':
    sys.exit(main())
