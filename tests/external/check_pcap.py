#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Check every RoCEv2 packet of a pcap against docs/wire-format.md.

The ICRC is recomputed by scapy (scapy.contrib.roce.BTH.compute_icrc), not by
sdr-dpu code. Data packets (opcode 0x2B, with immediate, and 0x2A, a message
without immediate) are checked field by field: BTH (TVer 0, P_Key 0xFFFF,
PadCnt), RETH DMA length = payload length, immediate layout, and with --mtu
and --max-msg also VA = msg_id * M + pkt_offset * MTU (for 0x2A: VA a
multiple of the MTU, msg_id = VA / M < 1024) and the packet-size rules.
Control packets (opcode 0x24) must carry a well-formed SDR control message.
Messages are reassembled per (DestQP, PSN, msg_id): the SE packet gives the
length, and the user immediate nibbles must agree (a 0x2A packet says all
eight are 0; its message has no immediate-only packets). 0x2A packets are
reassembled only with --mtu and --max-msg (their msg_id is in the VA).

Exit status: 0 all good, 1 a mismatch (each printed as "FAIL: ..."),
2 usage error, 77 scapy missing.

  check_pcap.py PCAP [--expect-data N] [--expect-ctrl N] [--expect-bad-icrc N|any]
                [--mtu MTU --max-msg M] [--complete] [--fields] [--compare PCAP2]
                [-q]

--fields prints one tab-separated line per RoCEv2 packet on stdout in the
format tshark -T fields uses (tshark_check.sh diffs the two) and the summary
on stderr.
"""
import argparse
import struct
import sys

try:
    from scapy.all import Ether, IP, UDP, PcapReader
    from scapy.contrib.roce import BTH
except ImportError as e:
    print(f"check_pcap: scapy not available ({e}): skipping", file=sys.stderr)
    sys.exit(77)

ROCE_PORT = 4791
OP_SEND_ONLY = 0x24
OP_WRITE_ONLY = 0x2A
OP_WRITE_ONLY_IMM = 0x2B
CTRL_MAGIC = 0x53445243
CTRL_HDR = 20  # magic, version 2, type, count, src_qpn, key
CTRL_TYPES = {1: 'CTS', 2: 'ACK', 3: 'NACK', 4: 'PARITY', 5: 'ABORT', 6: 'QP-CLOSED'}
CLOSED_ENTRY = 136  # recv_next, reason, 3 reserved, 1024 FULL bits
IMM_NIBBLES = 8


def imm_fields(imm):
    return imm >> 22, (imm >> 4) & ((1 << 18) - 1), imm & 0xF


class Checker:
    def __init__(self, args):
        self.a = args
        self.fail = 0
        self.n = {'frames': 0, 'roce': 0, 'data': 0, 'ctrl': 0, 'bad_icrc': 0, 'other': 0,
                  'payload_bytes': 0}
        self.msgs = {}  # (dqpn, msg_id) -> dict

    def err(self, frame_no, what):
        self.fail += 1
        if self.fail <= 50:
            print(f"FAIL: frame {frame_no}: {what}", file=sys.stderr)
        elif self.fail == 51:
            print("FAIL: ... (further failures not shown)", file=sys.stderr)

    def packet(self, no, raw_frame):
        self.n['frames'] += 1
        eth = Ether(raw_frame)
        if IP not in eth or UDP not in eth or eth[UDP].dport != ROCE_PORT:
            self.n['other'] += 1
            return
        ip = eth[IP]
        # Trailing Ethernet padding is not part of the packet; scapy would
        # otherwise hand it to the BTH payload.
        end = 14 + ip.len
        if end > len(raw_frame):
            self.err(no, f"IP total length {ip.len} exceeds frame ({len(raw_frame)} B)")
            return
        frame = raw_frame[:end]
        eth = Ether(frame)
        self.n['roce'] += 1
        if BTH not in eth:
            self.err(no, "UDP 4791 without a BTH")
            return
        ip, udp, bth = eth[IP], eth[UDP], eth[BTH]
        wire_icrc = frame[-4:]
        good_icrc = bth.compute_icrc(None)
        icrc_ok = wire_icrc == good_icrc
        if not icrc_ok:
            self.n['bad_icrc'] += 1
            if not self.a.quiet:
                print(f"frame {no}: ICRC {wire_icrc.hex()} on the wire, scapy computes "
                      f"{good_icrc.hex()}", file=sys.stderr)
        # Generic RoCEv2 header rules every sdr-dpu packet follows.
        if ip.flags != 'DF' or ip.frag != 0:
            self.err(no, f"IP flags {ip.flags} frag {ip.frag}: want DF, offset 0")
        if udp.len != ip.len - ip.ihl * 4:
            self.err(no, f"UDP length {udp.len} != IP payload {ip.len - ip.ihl * 4}")
        if not 0xC000 <= udp.sport <= 0xFFFF:
            self.err(no, f"UDP source port {udp.sport} outside 49152..65535")
        if bth.version != 0:
            self.err(no, f"BTH TVer {bth.version}")
        if bth.pkey != 0xFFFF:
            self.err(no, f"P_Key {bth.pkey:#x}")
        body = bytes(frame[14 + ip.ihl * 4 + 8 + 12:-4])  # after BTH, before ICRC
        if bth.padcount > len(body):
            self.err(no, f"PadCnt {bth.padcount} > {len(body)} bytes after the BTH")
            return
        unpadded = body[:len(body) - bth.padcount]

        if bth.opcode in (OP_WRITE_ONLY_IMM, OP_WRITE_ONLY):
            self.data(no, bth, unpadded, wire_icrc, icrc_ok)
        elif bth.opcode == OP_SEND_ONLY:
            self.ctrl(no, bth, unpadded, wire_icrc)
        else:
            self.err(no, f"opcode {bth.opcode:#x} is none of 0x2B, 0x2A, 0x24")

    def fields(self, no, op, bth, va='', rkey='', dmalen='', imm='', wire_icrc=b''):
        if self.a.fields:
            print('\t'.join(str(x) for x in (
                no, op, f"0x{bth.dqpn:06x}", bth.psn, va, rkey, dmalen, imm,
                f"0x{wire_icrc.hex()}")))

    def data(self, no, bth, unpadded, wire_icrc, icrc_ok):
        self.n['data'] += 1
        write = bth.opcode == OP_WRITE_ONLY  # no ImmDt: the immediate is 0
        hlen = 16 if write else 20
        if len(unpadded) < hlen:
            self.err(no, f"data packet with {len(unpadded)} B after the BTH: no RETH"
                         f"{'' if write else '+ImmDt'}")
            return
        va, rkey, dmalen = struct.unpack('!QII', unpadded[:16])
        imm = None if write else struct.unpack('!I', unpadded[16:20])[0]
        payload = unpadded[hlen:]
        self.fields(no, bth.opcode, bth, f"0x{va:016x}", f"0x{rkey:08x}", dmalen,
                    '' if write else f"{imm:08x}", wire_icrc)
        if not icrc_ok:
            return  # fields of a corrupted packet prove nothing
        self.n['payload_bytes'] += len(payload)
        if dmalen != len(payload):
            self.err(no, f"RETH DMA length {dmalen} != payload {len(payload)} B")
        if bth.padcount != (-len(payload)) % 4:
            self.err(no, f"PadCnt {bth.padcount} for a {len(payload)} B payload")
        mtu, M = self.a.mtu, self.a.max_msg
        if write:
            if dmalen == 0:
                self.err(no, "UC RDMA WRITE Only (0x2A) without payload: such a "
                             "message has no immediate-only packets")
            if not (mtu and M):
                return  # its place is in the VA: cannot be reassembled without M
            if va % mtu or va // M >= 1024:
                self.err(no, f"0x2A VA {va:#x}: not a multiple of MTU {mtu} inside "
                             f"1024 slots of {M} B")
                return
            msg_id, off, frag = va // M, (va % M) // mtu, 0
        else:
            msg_id, off, frag = imm_fields(imm)
        if mtu and M:
            if va != msg_id * M + off * mtu:
                self.err(no, f"VA {va:#x} != msg_id {msg_id} * {M} + pkt_offset {off} * {mtu}")
            if dmalen > mtu:
                self.err(no, f"DMA length {dmalen} > MTU {mtu}")
            if dmalen and off * mtu + dmalen > M:
                self.err(no, f"pkt_offset {off} + {dmalen} B past the {M} B slot")
            if dmalen and not bth.solicited and dmalen != mtu:
                self.err(no, f"non-last packet (SE 0) of {dmalen} B, want MTU {mtu}")
        if dmalen == 0 and (bth.solicited or not 1 <= off < IMM_NIBBLES):
            self.err(no, f"immediate-only packet (DMA length 0) at pkt_offset {off}"
                         f"{' with SE' if bth.solicited else ''}: want SE 0, offset 1..7")
        # (DestQP, PSN, msg_id) names one message: its PSN is seq >> 10
        m = self.msgs.setdefault((bth.dqpn, bth.psn, msg_id), {'nib': {}, 'offs': set(), 'se': None,
                                                      'rkey': rkey, 'first': no,
                                                      'write': False})
        if rkey != m['rkey']:
            self.err(no, f"R_Key {rkey:#x} differs within message {msg_id} ({m['rkey']:#x})")
        # a 0x2A packet gives every nibble (all 0), a 0x2B packet one
        for n in (range(IMM_NIBBLES) if write else (off % IMM_NIBBLES,)):
            if m['nib'].setdefault(n, frag) != frag:
                self.err(no, f"user-immediate nibble {n} of message {msg_id} "
                             f"is {frag:#x} here, {m['nib'][n]:#x} before")
        m['write'] |= write
        m['offs'].add((off, dmalen, bool(bth.solicited)))
        if bth.solicited:
            if m['se'] is not None and m['se'] != (off, dmalen):
                self.err(no, f"second SE packet for message {msg_id}")
            m['se'] = (off, dmalen)

    def ctrl(self, no, bth, msg, wire_icrc):
        self.n['ctrl'] += 1
        self.fields(no, OP_SEND_ONLY, bth, wire_icrc=wire_icrc)
        if len(msg) < CTRL_HDR:
            self.err(no, f"control message of {len(msg)} B, header needs {CTRL_HDR}")
            return
        magic, ver, typ, count, src_qpn, _key = struct.unpack('!IBBHIQ', msg[:CTRL_HDR])
        if magic != CTRL_MAGIC or ver != 2 or typ not in CTRL_TYPES:
            self.err(no, f"control header magic {magic:#x} version {ver} type {typ}")
            return
        if typ == 1 and (count > 64 or CTRL_HDR + 8 * count > len(msg)):
            self.err(no, f"CTS count {count} does not fit {len(msg)} B")
        if typ == 6:
            # a destroyed QP's DPU tells the peer (docs/wire-format.md §6)
            if count != 1 or len(msg) < CTRL_HDR + CLOSED_ENTRY:
                self.err(no, f"QP-CLOSED count {count} in {len(msg)} B (needs 1 entry "
                             f"of {CLOSED_ENTRY} B)")
                return
            e = msg[CTRL_HDR:CTRL_HDR + CLOSED_ENTRY]
            reason = e[4]
            if reason not in (1, 2) or e[5:8] != b'\0\0\0':
                self.err(no, f"QP-CLOSED reason {reason}, reserved {e[5:8].hex()}")
        if not self.a.quiet and not self.a.fields and typ == 1:
            ents = [struct.unpack('!II', msg[CTRL_HDR + 8 * i:CTRL_HDR + 8 + 8 * i])
                    for i in range(count)]
            print(f"frame {no}: CTS from QP {src_qpn:#x} to {bth.dqpn:#x}: "
                  + ', '.join(f"seq {s} len {ln}" for s, ln in ents), file=sys.stderr)

    def messages(self):
        """Per-message rules; needs the SE packet to know the message length."""
        done = 0
        for (dqpn, _, msg_id), m in sorted(self.msgs.items()):
            if m['se'] is None:
                if self.a.complete:
                    self.err(m['first'], f"message {msg_id} on QP {dqpn:#x}: no SE packet")
                continue
            last_off, _ = m['se']
            npkts = last_off + 1
            # a message without immediate (0x2A) has no immediate-only packets
            want = set(range(npkts if m['write'] else max(npkts, IMM_NIBBLES)))
            offs = {o for o, _, _ in m['offs']}
            for o, ln, se in m['offs']:
                if o >= npkts and ln:
                    self.err(m['first'], f"message {msg_id}: {ln} B at offset {o} after "
                                         f"the SE packet's offset {last_off}")
            if self.a.complete:
                if offs != want:
                    self.err(m['first'], f"message {msg_id} on QP {dqpn:#x}: offsets "
                                         f"{sorted(want - offs)} missing")
                else:
                    user = sum(m['nib'][i] << (4 * i) for i in range(IMM_NIBBLES))
                    done += 1
                    if not self.a.quiet and not self.a.fields:
                        print(f"message {msg_id} on QP {dqpn:#x}: {npkts} packets, "
                              f"user immediate {user:#010x}", file=sys.stderr)
        return done


def compare(c, p1, p2):
    """Two independent builders must agree on every byte (timestamps aside)."""
    with PcapReader(p1) as r1, PcapReader(p2) as r2:
        f1 = [bytes(p) for p in r1]
        f2 = [bytes(p) for p in r2]
    if len(f1) != len(f2):
        c.err('-', f"{p1} has {len(f1)} frames, {p2} has {len(f2)}")
    for no, (x, y) in enumerate(zip(f1, f2), 1):
        if x != y:
            i = next((i for i in range(min(len(x), len(y))) if x[i] != y[i]),
                     min(len(x), len(y)))
            c.err(no, f"differs from {p2} at byte {i} (lengths {len(x)}, {len(y)})")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('pcap')
    ap.add_argument('--expect-data', type=int, help='exact number of data packets')
    ap.add_argument('--expect-ctrl', type=int, help='exact number of control packets')
    ap.add_argument('--expect-bad-icrc', default='0', metavar='N|any',
                    help="exact number of packets whose ICRC must NOT match "
                         "(default 0; 'any' to not check)")
    ap.add_argument('--mtu', type=int, default=0, help='path MTU (payload bytes per packet)')
    ap.add_argument('--max-msg', type=int, default=0, help='M: bytes per message slot')
    ap.add_argument('--complete', action='store_true',
                    help='every message must be complete (no loss in the capture)')
    ap.add_argument('--fields', action='store_true', help='print tshark-style fields')
    ap.add_argument('--compare', metavar='PCAP2',
                    help='PCAP2 must hold the same frames, byte for byte, in the same order')
    ap.add_argument('-q', '--quiet', action='store_true')
    a = ap.parse_args()
    if bool(a.mtu) != bool(a.max_msg):
        ap.error('--mtu and --max-msg go together')
    if a.expect_bad_icrc != 'any' and not a.expect_bad_icrc.isdigit():
        ap.error("--expect-bad-icrc takes a count or 'any'")

    c = Checker(a)
    try:
        with PcapReader(a.pcap) as rd:
            for no, pkt in enumerate(rd, 1):
                c.packet(no, bytes(pkt))
    except (OSError, EOFError) as e:
        print(f"FAIL: cannot read {a.pcap}: {e}", file=sys.stderr)
        return 1
    if a.compare:
        compare(c, a.pcap, a.compare)
    complete = c.messages()
    n = c.n
    if a.expect_data is not None and n['data'] != a.expect_data:
        c.err('-', f"{n['data']} data packets, expected {a.expect_data}")
    if a.expect_ctrl is not None and n['ctrl'] != a.expect_ctrl:
        c.err('-', f"{n['ctrl']} control packets, expected {a.expect_ctrl}")
    if a.expect_bad_icrc != 'any' and n['bad_icrc'] != int(a.expect_bad_icrc):
        c.err('-', f"{n['bad_icrc']} packets with a bad ICRC, expected {a.expect_bad_icrc}")
    print(f"check_pcap: {n['frames']} frames, {n['roce']} RoCEv2 ({n['data']} data, "
          f"{n['ctrl']} control), {n['bad_icrc']} bad ICRC, {n['other']} other, "
          f"{n['payload_bytes']} payload bytes, {len(c.msgs)} messages"
          + (f" ({complete} complete)" if a.complete else "")
          + (f": {c.fail} FAILURES" if c.fail else ": OK"), file=sys.stderr)
    return 1 if c.fail else 0


if __name__ == '__main__':
    sys.exit(main())
