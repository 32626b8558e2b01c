# SPDX-License-Identifier: BSD-3-Clause
"""The Python binding across a daemon restart (docs/host-api.md §6), the
Python half of py_restart.sh (sockets A B, a control folder in argv): SR QPs
between two contexts, messages before, during and after a kill -9 of the
daemon and its restart with the same command line (done by the script when
this writes CTL/ready; it writes CTL/restarted). Nothing raises meanwhile;
the restart is logged on the 'sdr' logger; every message completes once, with
status 0, bit-exact; the contexts' counters tell the restore."""
import logging
import os
import sys
import time

import sdr

sock_a, sock_b, ctl = sys.argv[1], sys.argv[2], sys.argv[3]
records = []


class Keep(logging.Handler):
    def emit(self, r):
        records.append(r.getMessage())


logging.getLogger("sdr").addHandler(Keep())
logging.getLogger("sdr").setLevel(logging.WARNING)


def check(cond, what):
    if not cond:
        print(f"FAIL: {what}")
        print("sdr log:", records)
        sys.exit(1)


M, N = 64 * 1024, 12  # bytes per message, messages
a, b = sdr.Context(sock_a), sdr.Context(sock_b)
check(a.state() == "live", "a fresh context is live")
ba, bb = a.alloc(M * N), b.alloc(M * N)
qa, qb = a.qp(rel="sr"), b.qp(rel="sr")
qa.connect(qb.info())
qb.connect(qa.info())
src = memoryview(ba.view()).cast("B")
for i in range(M * N):
    src[i] = (i * 131 + 7) & 255
seen = {}


def poll_once():
    for c in (a, b):
        for wc in c.poll():  # must not raise while the daemon restarts
            key = ("r" if wc.is_recv else "s", wc.wr_id)
            check(key not in seen, f"{key} completed twice")
            seen[key] = wc


def drain(timeout, want):
    t0 = time.monotonic()
    while len(seen) < want:
        poll_once()
        if time.monotonic() - t0 > timeout:
            return False
        time.sleep(0.001)
    return True


for i in range(N):
    qb.post_recv(bb, i * M, M, wr_id=i)
for i in range(4):
    qa.post_send(ba, i * M, M, imm=i + 1, wr_id=i)
check(drain(10, 8), "4 messages before the kill")
for i in range(4, 8):  # outstanding or not when the daemon dies
    qa.post_send(ba, i * M, M, imm=i + 1, wr_id=i)
open(os.path.join(ctl, "ready"), "w").close()
t0 = time.monotonic()
down = False
while not os.path.exists(os.path.join(ctl, "restarted")):
    poll_once()
    down = down or a.state() == "reattaching"
    check(time.monotonic() - t0 < 60, "the daemon restarted within 60 s")
    time.sleep(0.001)
check(down, "libsdr noticed the death while the daemon was down")
for i in range(8, N):  # after the restart (maybe before libsdr noticed it)
    qa.post_send(ba, i * M, M, imm=i + 1, wr_id=i)
check(drain(30, 2 * N), f"all {N} messages after the restart (got {sorted(seen)})")
dst = memoryview(bb.view()).cast("B")
for i in range(N):
    s, r = seen[("s", i)], seen[("r", i)]
    check(s.status == 0 and r.status == 0 and not r.partial, f"message {i}: status 0")
    check(r.length == M and r.has_imm and r.imm == i + 1, f"message {i}: length and immediate")
check(bytes(dst) == bytes(src), "every byte as sent")
for c in (a, b):
    c.watch_restart(every=0)
    st = c.stats()
    check(c.state() == "live", "live again")
    check(st["reattaches"] == 1 and st["qps_restored"] == 1 and st["qps_lost"] == 0,
          f"counters of the restore: {st}")
check(sum("re-attaching" in m for m in records) == 2, f"two 'gone' lines: {records}")
check(sum("restarted, QPs restored in" in m for m in records) == 2,
      f"two 'restarted' lines: {records}")
print("\n".join(records))
print(f"PASS: {N} messages across a daemon restart, once and bit-exact; restart logged")
