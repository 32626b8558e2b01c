#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Known-answer vectors for test_wire, produced independently of our C code.

Every frame, ICRC included, is built by scapy (scapy.contrib.roce.BTH computes
the ICRC); RETH and ImmDt are packed by hand from docs/wire-format.md because
scapy has no layer for them. test_wire rebuilds the 'data', 'write' and 'ctrl'
frames with sdr_build_*_hdr()/sdr_pkt_finish() and must get the same bytes, and
checks sdr_icrc_compute()/sdr_icrc_inplace()/sdr_parse() on every frame.

Output, one vector per line (numbers hex, payload '-' when empty):
  data  DST SRC SIP DIP SPORT TTL DSCP DQPN PSN SE VA RKEY DMALEN IMM PAYLOAD FRAME
  write DST SRC SIP DIP SPORT TTL DSCP DQPN PSN SE VA RKEY DMALEN PAYLOAD FRAME
        (opcode 0x2A, UC RDMA WRITE Only: a message without immediate)
  ctrl  DST SRC SIP DIP SPORT TTL DSCP DQPN PSN MSG FRAME
  raw  FRAME        (shapes our builder never emits: IP options, FECN/BECN,
                     ECN bits; they must still parse and verify)
Usage: gen_icrc_vectors.py OUTFILE [--seed N]
"""
import argparse
import random
import struct
import sys

try:
    from scapy.all import Ether, IP, UDP, Raw, raw
    from scapy.layers.inet import IPOption_Router_Alert, IPOption_NOP
    from scapy.contrib.roce import BTH
except ImportError as e:  # the test treats a missing vector file as skip
    print(f"scapy not available: {e}", file=sys.stderr)
    sys.exit(77)

OP_SEND_ONLY = 0x24
OP_WRITE_ONLY = 0x2A
OP_WRITE_ONLY_IMM = 0x2B


def rand_mac(r):
    b = [r.randrange(256) for _ in range(6)]
    b[0] &= 0xFE  # unicast
    return ':'.join(f'{x:02x}' for x in b)


def rand_ip(r):
    return '.'.join(str(r.randrange(1, 255)) for _ in range(4))


def frame(dst, src, sip, dip, sport, ttl, dscp, opcode, se, dqpn, psn, body,
          ip_opts=None, tos_extra=0, fecn=0, becn=0):
    """body = everything after the BTH except pad and ICRC."""
    pad = (-len(body)) % 4
    ip = IP(src=sip, dst=dip, tos=(dscp << 2) | tos_extra, ttl=ttl or 64, id=0, flags='DF')
    if ip_opts:
        ip.options = ip_opts
    pkt = (Ether(dst=dst, src=src) / ip / UDP(sport=sport, dport=4791, chksum=0) /
           BTH(opcode=opcode, solicited=se, padcount=pad, pkey=0xFFFF, dqpn=dqpn, psn=psn,
               fecn=fecn, becn=becn) /
           Raw(body + b'\0' * pad))
    return raw(pkt)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('out')
    ap.add_argument('--seed', type=int, default=1)
    args = ap.parse_args()
    r = random.Random(args.seed)
    lines = []
    sizes = list(range(0, 9)) + [13, 63, 64, 1023, 1024, 1025, 2048, 4095, 4096]
    sizes += [r.randrange(0, 4097) for _ in range(8)]

    for n in sizes:
        dst, src, sip, dip = rand_mac(r), rand_mac(r), rand_ip(r), rand_ip(r)
        sport = 0xC000 | r.randrange(0x4000)
        ttl = r.choice([0, 1, 64, 255])
        dscp = r.randrange(64)
        dqpn, psn = r.randrange(1 << 24), r.randrange(1 << 24)
        se = r.randrange(2)
        va, rkey, imm = r.randrange(1 << 64), r.randrange(1 << 32), r.randrange(1 << 32)
        payload = bytes(r.randrange(256) for _ in range(n))
        body = struct.pack('!QII', va, rkey, n) + struct.pack('!I', imm) + payload
        f = frame(dst, src, sip, dip, sport, ttl, dscp, OP_WRITE_ONLY_IMM, se, dqpn, psn, body)
        lines.append(' '.join(['data', dst, src, sip, dip] +
                              [hex(x) for x in (sport, ttl, dscp, dqpn, psn, se, va, rkey, n, imm)] +
                              [payload.hex() or '-', f.hex()]))
        # the same packet of a message without immediate: no ImmDt
        body = struct.pack('!QII', va, rkey, n) + payload
        f = frame(dst, src, sip, dip, sport, ttl, dscp, OP_WRITE_ONLY, se, dqpn, psn, body)
        lines.append(' '.join(['write', dst, src, sip, dip] +
                              [hex(x) for x in (sport, ttl, dscp, dqpn, psn, se, va, rkey, n)] +
                              [payload.hex() or '-', f.hex()]))

    for n in (1, 2, 3):  # control: a CTS with n entries, plus odd lengths
        dst, src, sip, dip = rand_mac(r), rand_mac(r), rand_ip(r), rand_ip(r)
        sport, dqpn, psn = 0xC000 | r.randrange(0x4000), r.randrange(1 << 24), r.randrange(1 << 24)
        msg = struct.pack('!IBBHI', 0x53445243, 1, 1, n, r.randrange(1 << 24))
        for _ in range(n):
            msg += struct.pack('!II', r.randrange(1 << 32), r.randrange(1 << 32))
        for m in (msg, msg + b'\x01', msg + b'\x01\x02\x03'):
            f = frame(dst, src, sip, dip, sport, 0, 0, OP_SEND_ONLY, 0, dqpn, psn, m)
            lines.append(' '.join(['ctrl', dst, src, sip, dip] +
                                  [hex(x) for x in (sport, 0, 0, dqpn, psn)] + [m.hex(), f.hex()]))

    # Fields the ICRC masks or skips, and IP options (ICRC covers them).
    for opts, tos_extra, fecn, becn in (([IPOption_Router_Alert()], 0, 0, 0),
                                        ([IPOption_NOP()] * 8, 0, 0, 0),
                                        (None, 3, 1, 1), (None, 1, 0, 1),
                                        ([IPOption_Router_Alert()], 2, 1, 0)):
        n = r.randrange(0, 300)
        payload = bytes(r.randrange(256) for _ in range(n))
        body = struct.pack('!QIII', r.randrange(1 << 64), r.randrange(1 << 32), n,
                           r.randrange(1 << 32)) + payload
        f = frame(rand_mac(r), rand_mac(r), rand_ip(r), rand_ip(r), 0xC123, 17, 10,
                  OP_WRITE_ONLY_IMM, 1, r.randrange(1 << 24), r.randrange(1 << 24), body,
                  ip_opts=opts, tos_extra=tos_extra, fecn=fecn, becn=becn)
        lines.append('raw ' + f.hex())

    with open(args.out, 'w') as fp:
        fp.write(f'# generated by gen_icrc_vectors.py --seed {args.seed} with scapy\n')
        fp.write('\n'.join(lines) + '\n')


if __name__ == '__main__':
    main()
