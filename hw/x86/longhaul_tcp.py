#!/usr/bin/python3
# The kernel-TCP yardstick of hw/x86/longhaul.sh (x86 rig, host side): the
# same messages as sdr-send's (--sizes one size, --count N, --window W in
# flight) over one TCP connection; a message completes when the receiver's
# 8-byte acknowledgement of it arrives back (like SR's final ACK). Prints
# "send completion time, size all: n N mean X ms p50 X ms p99 X ms" and
# "receiver: N ok, 0 failed, B bytes, goodput G Gbit/s" as sdr-send does.
#   longhaul_tcp.py server ADDR PORT    |    longhaul_tcp.py client ADDR PORT SIZE COUNT WINDOW
import socket
import struct
import sys
import time


def server(addr, port):
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((addr, port))
    ls.listen(1)
    ls.settimeout(60)
    c, _ = ls.accept()
    size, count = struct.unpack("!QQ", c.recv(16, socket.MSG_WAITALL))
    buf = bytearray(1 << 20)
    for i in range(count):
        left = size
        while left:
            n = c.recv_into(buf, min(left, len(buf)))
            if not n:
                return 1
            left -= n
        c.sendall(struct.pack("!Q", i))
    c.close()
    return 0


def client(addr, port, size, count, window):
    s = socket.create_connection((addr, port), timeout=120)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.sendall(struct.pack("!QQ", size, count))
    data = b"\x5a" * size
    post, ct = {}, []
    sent = done = 0
    t0 = time.monotonic()
    while done < count:
        while sent < count and sent - done < window:
            post[sent] = time.monotonic()
            s.sendall(data)
            sent += 1
        (i,) = struct.unpack("!Q", s.recv(8, socket.MSG_WAITALL))
        ct.append(time.monotonic() - post.pop(i))
        done += 1
    el = time.monotonic() - t0
    ct.sort()
    q = lambda p: ct[min(len(ct) - 1, int(p * len(ct)))] * 1e3
    print("send completion time, size all: n %d mean %.3f ms p50 %.3f ms p99 %.3f ms max %.3f ms"
          % (len(ct), sum(ct) / len(ct) * 1e3, q(0.5), q(0.99), ct[-1] * 1e3))
    print("receiver: %d ok, 0 failed, %d bytes, goodput %.3f Gbit/s"
          % (count, size * count, size * count * 8 / el / 1e9))
    return 0


if __name__ == "__main__":
    a = sys.argv
    if a[1] == "server":
        sys.exit(server(a[2], int(a[3])))
    sys.exit(client(a[2], int(a[3]), int(a[4]), int(a[5]), int(a[6])))
