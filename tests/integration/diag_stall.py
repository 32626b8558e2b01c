# SPDX-License-Identifier: BSD-3-Clause
"""A constructed stall between two DPUs (sockets A and B), then sdr-diag on
the daemon's --metrics port must say in plain words where it is stuck.
Scenarios: norecv (A sends, B never posts its receive: the send waits for
the clear-to-send), partial (a QP without reliability over a lossy link:
the receive has some chunks, names the missing ones and says what to add),
linkdown (an SR QP over a link that drops everything: the receive has no
packet, the send waits for an acknowledgement: none of its chunks
acknowledged, retransmitted, the timeout backed off), peerdead (the
receiving host goes away in the middle of an SR message: its DPU answers
with QP-CLOSED, docs/reliability.md "Faults: link outages", so the send
does not stall: it completes -ECONNRESET within a second, and sdr-diag
shows nothing outstanding on the sender's QP).
Usage: diag_stall.py SOCK_A SOCK_B METRICS_PORT SCENARIO SDR_DIAG"""
import re
import subprocess
import sys
import time

import sdr

sock_a, sock_b, mport, scenario, diag = sys.argv[1:6]
a, b = sdr.Context(sock_a), sdr.Context(sock_b)
rel = "sr" if scenario in ("linkdown", "peerdead") else "none"
chunk = 1 if scenario == "partial" else 0
# (peerdead: paced, so that the message is still going when the peer leaves)
qa = a.qp(rel=rel, max_msg=1 << 20, chunk_pkts=chunk,
          rate_bps=40_000_000 if scenario == "peerdead" else 0)
qb = b.qp(rel=rel, max_msg=1 << 20, chunk_pkts=chunk)
qa.connect(qb.info())
qb.connect(qa.info())
ba, bb = a.alloc(1 << 20), b.alloc(1 << 20)
size = {"norecv": 65536, "partial": 1 << 20, "linkdown": 262144, "peerdead": 1 << 20}[scenario]
if scenario != "norecv":
    qb.post_recv(bb, 0, size)
time.sleep(0.2)
qa.post_send(ba, 0, size)
if scenario == "peerdead":
    time.sleep(0.1)
    b.close(force=True)  # its DPU destroys the QP and tells A (QP-CLOSED)
closed = None
if scenario == "peerdead":
    t0 = time.monotonic()
    while closed is None and time.monotonic() - t0 < 1.5:
        for wc in a.poll():
            closed = (wc.status, time.monotonic() - t0)
        time.sleep(0.01)
time.sleep(1.5)
out = subprocess.run([diag, mport], capture_output=True, text=True, timeout=20)
print(out.stdout)
ok = out.returncode == (0 if scenario == "peerdead" else 1)  # something is outstanding


def want(pattern):
    global ok
    if not re.search(pattern, out.stdout):
        print("FAIL: sdr-diag does not say: %s" % pattern)
        ok = False


if scenario == "norecv":
    want(r"send #0 waiting for the peer's clear-to-send for \d+\.\d s: the peer has not posted "
         r"its receive")
elif scenario == "partial":
    m = re.search(r"recv #0 posted \d+\.\d s ago, (\d+) of 256 chunks, missing (\d+)", out.stdout)
    if not m or not 0 < int(m.group(1)) < 256:
        print("FAIL: no partial receive line")
        ok = False
    want(r"last packet from 10\.0\.0\.1 \d+\.\d s ago")
    want(r"this QP has no reliability scheme \(--rel none\).*use --rel sr")
elif scenario == "peerdead":
    # the peer's QP is gone: the send failed fast, -ECONNRESET (104 on Linux)
    print("send completion after the peer left: %s" % (closed,))
    if not closed or closed[0] != -104 or closed[1] > 1.0:
        print("FAIL: the send did not complete -ECONNRESET within 1 s of the peer leaving")
        ok = False
    if "send #0" in out.stdout:
        print("FAIL: sdr-diag still shows the send")
        ok = False
else:
    want(r"recv #0 posted \d+\.\d s ago, 0 of \d+ chunks, no packet of it yet from 10\.0\.0\.1")
    want(r"send #0 posted \d+\.\d s ago, all 64 packets sent, no acknowledgement from the peer "
         r"yet \(retransmission timeout")
    # nothing acknowledged, retransmitted with the timeout backed off
    want(r"no acknowledgement from the peer yet \(retransmission timeout [^)]*, backoff \d+x\): "
         r"(\d+) of \1 chunks unacknowledged, last retransmission \d+(\.\d)? (s|ms|us) ago")
print("diag %s: %s" % (scenario, "OK" if ok else "FAILED"))
sys.exit(0 if ok else 1)
