#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The worked examples of docs/wire-format.md section 5, read from the page.

Wire-format unit test (pure Python, zlib only): the hex dumps of the two worked
examples (a message with and one without immediate) and of the CRC input are
parsed out of the text of the page; every field is checked against the
example's stated parameters and the rules of sections 1-5 (UDP source port
0xC000 | receiver's block, DestQP, PSN, VA, immediate, pad), the CRC input is
rebuilt from the frame by masking as section 5 says, its zlib.crc32 must be
the value the page states and the ICRC bytes on the wire. Then test_wire
--examples rebuilds both frames with the project's own builder and compares
them byte for byte.

Usage: doc_examples.py DOC [TEST_WIRE]     (exit 0 ok, 1 failure)
       doc_examples.py --print             (the frames these parameters give)
"""
import os
import re
import shlex
import struct
import subprocess
import sys
import tempfile
import zlib

# The example's parameters, as the page's prose states them.
N = 1027                      # message number
BLOCK, G = 0x100, 4           # receiver's QP block base, generations
RKEY, M, MTU = 0x5D12, 65536, 1024
IMM = 0x89ABCDEF              # user immediate
DST, SRC = '02:00:00:00:00:02', '02:00:00:00:00:01'
SIP, DIP = '10.0.0.1', '10.0.0.2'
PAYLOAD = b'hello'


def mac(s):
    return bytes(int(x, 16) for x in s.split(':'))


def ip(s):
    return bytes(int(x) for x in s.split('.'))


def csum(b):
    s = sum(struct.unpack('!%dH' % (len(b) // 2), b))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def fields():
    msg_id, gen = N % 1024, (N // 1024) % G
    imm = msg_id << 22 | 0 << 4 | ((IMM >> 4 * 0) & 0xF)  # packet 0's nibble
    return {'dqpn': BLOCK + gen, 'psn': N >> 10, 'va': msg_id * M, 'imm': imm,
            'sport': 0xC000 | (BLOCK & 0x3FFF)}


def build(with_imm):
    """The frame from sections 1-5, independently of the C code."""
    f = fields()
    body = struct.pack('!QII', f['va'], RKEY, len(PAYLOAD))
    if with_imm:
        body += struct.pack('!I', f['imm'])
    body += PAYLOAD
    pad = -len(body) % 4
    bth = struct.pack('!BBHI', 0x2B if with_imm else 0x2A, 0x80 | pad << 4, 0xFFFF,
                      f['dqpn']) + struct.pack('!I', f['psn'])
    udp_len = 8 + len(bth) + len(body) + pad + 4
    udp = struct.pack('!HHHH', f['sport'], 4791, udp_len, 0)
    iph = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + udp_len, 0, 0x4000, 64, 17, 0,
                      ip(SIP), ip(DIP))
    iph = iph[:10] + struct.pack('!H', csum(iph)) + iph[12:]
    frame = mac(DST) + mac(SRC) + b'\x08\x00' + iph + udp + bth + body + b'\0' * pad
    return frame + struct.pack('<I', zlib.crc32(crc_input(frame)))


def crc_input(frame):
    """Section 5: 8 x 0xFF, IPv4 with TOS/TTL/checksum ones, UDP checksum
    ones, BTH byte 4 ones, the rest up to the ICRC."""
    b = bytearray(frame[14:])
    b[1] = 0xFF
    b[8] = 0xFF
    b[10:12] = b'\xff\xff'
    b[26:28] = b'\xff\xff'
    b[28 + 4] = 0xFF
    return b'\xff' * 8 + bytes(b)


def dump(b):
    return '\n'.join('%04x  %s' % (i, ' '.join('%02x' % x for x in b[i:i + 16]))
                     for i in range(0, len(b), 16))


def blocks(text):
    """The ``` blocks of a text, as bytes (offset column dropped)."""
    out = []
    for blk in re.findall(r'```\n(.*?)```', text, re.S):
        out.append(bytes(int(x, 16) for line in blk.strip().split('\n')
                         for x in line.split()[1:]))
    return out


class Check:
    def __init__(self):
        self.failed = 0

    def __call__(self, ok, what):
        if not ok:
            print('FAIL:', what)
            self.failed += 1


def main():
    if sys.argv[1:] == ['--print']:
        for w in (1, 0):
            f = build(w)
            print(dump(f), '\n', '%d CRC bytes, crc32 0x%08X' % (len(crc_input(f[:-4])),
                                                               zlib.crc32(crc_input(f[:-4]))))
            if w:
                print(dump(crc_input(f[:-4])))
        return 0
    if len(sys.argv) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    text = open(sys.argv[1]).read()
    check = Check()
    sec = text[text.index('## 5. ICRC'):text.index('## 6.')]
    a = sec.index('**Worked example.**')
    b = sec.index('**Worked example without immediate.**')
    ex_imm, ex_crc = blocks(sec[a:b])[:2]
    ex_noimm = blocks(sec[b:])[0]
    f = fields()
    for name, frame, w in (('with immediate', ex_imm, 1), ('without', ex_noimm, 0)):
        check(len(frame) > 60, name + ': a frame parsed from the page')
        sport, = struct.unpack('!H', frame[34:36])
        check(sport == f['sport'], '%s: UDP source port 0x%04X, the rule gives 0x%04X'
              % (name, sport, f['sport']))
        check(frame[42] == (0x2B if w else 0x2A), name + ': opcode')
        check(frame[47:50] == f['dqpn'].to_bytes(3, 'big'), name + ': DestQP')
        check(frame[51:54] == f['psn'].to_bytes(3, 'big'), name + ': PSN')
        check(frame[54:62] == f['va'].to_bytes(8, 'big'), name + ': VA')
        if w:
            check(frame[70:74] == f['imm'].to_bytes(4, 'big'), name + ': immediate')
        crc = zlib.crc32(crc_input(frame[:-4]))
        check(frame[-4:] == struct.pack('<I', crc),
              '%s: ICRC on the page %s, zlib.crc32 of its CRC input %s'
              % (name, frame[-4:].hex(), struct.pack('<I', crc).hex()))
        check(frame == build(w), '%s: the page\'s frame is not what sections 1-5 give:\n%s'
              % (name, dump(build(w))))
        # the stated CRC value and wire bytes of this example
        part = sec[a:b] if w else sec[b:]
        m = re.search(r'0x([0-9A-F]{8})`?, on the wire `([0-9a-f ]+)`', part)
        check(m is not None, name + ': the stated CRC')
        if m:
            check(int(m.group(1), 16) == crc, '%s: stated CRC 0x%s, computed 0x%08X'
                  % (name, m.group(1), crc))
            check(bytes.fromhex(m.group(2)) == frame[-4:], name + ': stated wire bytes')
    check(ex_crc == crc_input(ex_imm[:-4]), 'the CRC input dump is not the masked frame')
    m = re.search(r'The (\d+) bytes the CRC runs over', sec[a:b])
    check(m and int(m.group(1)) == len(ex_crc), 'the CRC input byte count')
    m = re.search(r'The (\d+) bytes the CRC runs over', sec[b:])
    check(m and int(m.group(1)) == len(crc_input(ex_noimm[:-4])),
          'the CRC input byte count without immediate')

    # the project's own builder: test_wire --examples (data/write lines)
    if len(sys.argv) == 3:
        common = [DST, SRC, SIP, DIP] + [hex(x) for x in (f['sport'], 64, 0, f['dqpn'],
                                                          f['psn'], 1, f['va'], RKEY,
                                                          len(PAYLOAD))]
        lines = ['# docs/wire-format.md section 5',
                 ' '.join(['data'] + common + [hex(f['imm']), PAYLOAD.hex(), ex_imm.hex()]),
                 ' '.join(['write'] + common + [PAYLOAD.hex(), ex_noimm.hex()])]
        with tempfile.NamedTemporaryFile('w', suffix='.txt', delete=False) as fp:
            fp.write('\n'.join(lines) + '\n')
        try:
            # a cross build's test_wire runs under its emulator (meson
            # hands scripts the cross file's runner in MESON_EXE_WRAPPER)
            wrapper = shlex.split(os.environ.get('MESON_EXE_WRAPPER', ''))
            r = subprocess.run(wrapper + [sys.argv[2], '--examples', fp.name],
                               capture_output=True, text=True)
        finally:
            os.unlink(fp.name)
        check(r.returncode == 0, 'test_wire rebuilds the examples: rc %d\n%s%s'
              % (r.returncode, r.stdout, r.stderr))
        check('data 1, write 1' in r.stdout, 'test_wire read both examples: ' + r.stdout)
    print('doc_examples: %s' % ('ok' if not check.failed else '%d failures' % check.failed))
    return 1 if check.failed else 0


if __name__ == '__main__':
    sys.exit(main())
