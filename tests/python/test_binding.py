# SPDX-License-Identifier: BSD-3-Clause
"""The Python binding of libsdr against two running DPUs (sockets in argv:
A B). Checks what the binding promises (docs/training.md section 1): data
moves between contexts without a copy into a tensor/buffer, completions carry
length, immediate and flags, the live bitmap shows every chunk, a partial
completion, SR and EC QPs, QP info round trips, and libsdr's errors as
SdrError with errno and reason (missing daemon, bad length, EC mismatch,
closed context, buffers still viewed)."""
import errno
import sys
import time

import sdr

sock_a, sock_b = sys.argv[1], sys.argv[2]
try:
    import torch
except ImportError:
    torch = None
checks = 0


def check(cond, what):
    global checks
    if not cond:
        print(f"FAIL: {what}")
        sys.exit(1)
    checks += 1


def raises(fn, err, what, text=None):
    try:
        fn()
    except sdr.SdrError as e:
        check(e.errno == err, f"{what}: errno {e.errno} ({e}), want {errno.errorcode[err]}")
        if text:
            check(text in str(e), f"{what}: '{text}' not in '{e}'")
        return e
    check(False, f"{what}: no exception")


def wait_all(ctxs, n, timeout=10):
    out, t0 = [], time.monotonic()
    while len(out) < n:
        for c in ctxs:
            out += c.poll()
        if time.monotonic() - t0 > timeout:
            check(False, f"{n} completions within {timeout} s (got {out})")
    return out


# a missing daemon: errno and the socket path in the message
e = raises(lambda: sdr.Context("/nonexistent/sdr.sock"), errno.ENOENT, "missing daemon",
           "/nonexistent/sdr.sock")
check(e.call == "sdr_ctx_open", "call named")

a, b = sdr.Context(sock_a), sdr.Context(sock_b)
check(a.stats()["sq_posted"] == 0, "fresh context stats")

# ---- raw SDR (none): 1 MiB + 5 bytes, data, length, immediate, bitmap
N = (1 << 20) + 5
ba, bb = a.alloc(N), b.alloc(N)
qa, qb = a.qp(rel="none"), b.qp(rel="none")
ia, ib = qa.info(), qb.info()
check(sdr.QPInfo.from_bytes(bytes(ia)).qpn == ia.qpn, "QP info binary round trip")
check(str(sdr.QPInfo.parse(str(ib))) == str(ib), "QP info text round trip")
check(ia.ip != ib.ip, "two DPUs")
qa.connect(bytes(ib))
qb.connect(str(ia))
raises(lambda: qa.connect(ib), errno.EISCONN, "second connect")
src = memoryview(ba.view()).cast("B")
for i in range(0, N, 4099):
    src[i] = (i * 7 + 1) & 255
src[N - 1] = 0xA5
rh = qb.post_recv(bb, 0, N, wr_id=11)
bm = rh.bitmap()
check(len(bm) == -(-N // rh.chunk_bytes) and not any(bm), "bitmap empty before the send")
check(rh.imm() is None, "no immediate yet")
sh = qa.post_send(ba, 0, N, imm=0xC0FFEE, wr_id=12)
wcs = wait_all([a, b], 2)
r = [w for w in wcs if w.is_recv][0]
s = [w for w in wcs if not w.is_recv][0]
check(r.wr_id == 11 and r.length == N and r.status == 0 and not r.partial, f"recv wc {r}")
check(r.has_imm and r.imm == 0xC0FFEE, "immediate delivered")
check(s.wr_id == 12 and s.status == 0 and s.length == N, f"send wc {s}")
check(all(rh.bitmap()) and rh.chunks_done() == len(bm), "bitmap full")
check(rh.imm() == 0xC0FFEE and rh.seq == 0 and sh.seq == 0, "handle immediate / seq")
check(bytes(bb.view()) == bytes(ba.view()), "payload bit-exact")
if torch is not None:
    ta, tb = ba.tensor(torch.uint8, (N,)), bb.tensor(torch.uint8, (N,))
    check(ta.data_ptr() == ba.addr, "tensor views the buffer (no copy)")
    check(torch.equal(ta, tb), "tensors equal")
    tf = ba.tensor(torch.float32, (16, 1024), offset=4096)
    tf.fill_(1.5)
    check(memoryview(ba.view(4096, 4)).cast("B").cast("f")[0] == 1.5, "tensor writes land in the buffer")
    raises(lambda: a.close(), errno.EBUSY, "close while tensors view buffers", "tensor")
    del ta, tb, tf

# ---- partial completion: a receive nobody sends to, completed by hand
rh2 = qb.post_recv(bb, 0, 65536, wr_id=21)
rh2.complete()
w = wait_all([b], 1)[0]
check(w.wr_id == 21 and w.partial and w.status == 0, f"partial completion {w}")
check(rh2.poll() == sdr.POLL_PARTIAL, "handle says partial")
raises(lambda: rh2.complete(), errno.EALREADY, "complete twice")

# ---- errors of the data path: errno, call and libsdr's reason
e = raises(lambda: qa.post_send(ba, 0, 0), errno.EMSGSIZE, "zero-length send")
check(e.reason != "", "libsdr's reason kept")
raises(lambda: qa.post_send(ba, 0, N + 4096), errno.ERANGE, "send beyond the MR")

# ---- SR and EC, several messages, a send bigger than the posted receive
for rel in ("sr", "ec:rs:8:2", "auto"):
    xa, xb = (a.qp(rel=rel, chunk_pkts=1, max_msg=1 << 20),
              b.qp(rel=rel, chunk_pkts=1, max_msg=1 << 20))
    xa.connect(xb.info())
    xb.connect(xa.info())
    for k in range(3):
        xb.post_recv(bb, 0, 256 * 1024, wr_id=100 + k)
        xa.post_send(ba, 4096 * k, 256 * 1024, imm=k, wr_id=200 + k)
    wcs = wait_all([a, b], 6)
    check(all(w.status == 0 for w in wcs), f"{rel}: all ok {wcs}")
    check(bytes(bb.view(0, 256 * 1024)) == bytes(ba.view(8192, 256 * 1024)), f"{rel}: payload")
    xb.post_recv(bb, 0, 4096, wr_id=300)
    xa.post_send(ba, 0, 8192, wr_id=301)
    wcs = wait_all([a, b], 2)
    check(all(w.status == -errno.EMSGSIZE for w in wcs), f"{rel}: longer send fails both {wcs}")
    xa.destroy()
    xb.destroy()

# EC on one side, SR on the other: refused with a reason
xa, xb = a.qp(rel="ec:rs:8:2"), b.qp(rel="sr")
e = raises(lambda: xa.connect(xb.info()), errno.EINVAL, "EC/SR mismatch")
xa.destroy()
xb.destroy()
try:
    sdr.parse_rel("ec:rs:99:8")
    check(False, "bad EC code accepted")
except ValueError as e:
    check("K 1..64" in str(e), "bad EC code explained")

# ---- channels (libsdr 2.3): one QP over two workers where the daemon has
# them, else refused with the reason (docs/host-api.md "Channels")
try:
    ca = a.qp(rel="sr", chunk_pkts=1, channels=2)
except sdr.SdrError as e:
    check(e.errno == errno.ENOTSUP and "workers" in str(e), f"channels 2 refused: {e}")
else:
    cb = b.qp(rel="sr", chunk_pkts=1, channels=2)
    check(ca.channels == 2 and len(ca.info()) == 2, "two channels, two infos")
    raises(lambda: ca.connect(cb.info()[0]), errno.EINVAL, "one info for two channels")
    ca.connect([bytes(i) for i in cb.info()])
    cb.connect([str(i) for i in ca.info()])
    n = 3 * 4096 + 5
    src = memoryview(ba.view()).cast("B")
    for i in range(n):
        src[i] = (i * 13 + 7) & 255
    cb.post_recv(bb, 0, n, wr_id=400)
    ca.post_send(ba, 0, n, imm=77, wr_id=401)
    wcs = wait_all([a, b], 2)
    check(all(w.status == 0 for w in wcs), f"channels: all ok {wcs}")
    check(any(w.length == n and w.imm == 77 for w in wcs if w.is_recv), "channels: length, imm")
    check(bytes(bb.view(0, n)) == bytes(ba.view(0, n)), "channels: payload")
    ca.destroy()
    cb.destroy()

# ---- lifetime: a closed context refuses calls with EBADF
v = bb.view()
raises(lambda: b.close(), errno.EBUSY, "close while a view lives", "memoryview")
del v
b.close()
raises(lambda: qb.post_recv(bb, 0, 10), errno.ENOENT, "post on a closed context")
raises(lambda: b.poll(), errno.EBADF, "poll on a closed context")
del src
a.close()
print(f"python binding: {checks} checks passed")
