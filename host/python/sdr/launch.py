# SPDX-License-Identifier: BSD-3-Clause
"""Start the ranks of a torch.distributed job across the DCs of an sdr-dpu
rig and wait for them:

    python3 -m sdr.launch --ranks 4 --place 0,0,1,1 --dpu /tmp/a.sock,/tmp/b.sock \\
        [--netns nsA,nsB] [--master 10.99.0.1] [--timeout 600] -- script.py [args]

Rank r runs in DC place[r]: with SDR_DPU set to that DC's daemon socket
(--dpu, one per DC), inside that DC's network namespace (--netns, needs
root), with RANK, WORLD_SIZE, MASTER_ADDR (--master, default 127.0.0.1) and
MASTER_PORT (--port, default a free port) set, as init_method="env://"
wants. The output of every rank is prefixed with "[rN] ". Exit status: 0
when every rank exited 0; otherwise the first failing rank's status (124
when --timeout expired: every rank is then killed).
"""
import argparse
import os
import socket
import subprocess
import sys
import threading
import time


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="python3 -m sdr.launch",
                                 description="start torch.distributed ranks across sdr-dpu DCs")
    ap.add_argument("--ranks", type=int, required=True, help="number of ranks (world size)")
    ap.add_argument("--place", default=None,
                    help="DC of each rank, comma separated (default: first half DC 0, "
                         "second half DC 1)")
    ap.add_argument("--dpu", required=True,
                    help="daemon socket of each DC, comma separated (SDR_DPU of its ranks)")
    ap.add_argument("--netns", default=None,
                    help="network namespace of each DC, comma separated (ip netns exec; root)")
    ap.add_argument("--master", default="127.0.0.1", help="MASTER_ADDR (rank 0's address)")
    ap.add_argument("--port", type=int, default=0, help="MASTER_PORT (default: a free port)")
    ap.add_argument("--timeout", type=float, default=600, help="kill every rank after SEC s")
    ap.add_argument("--python", default=sys.executable, help="interpreter of the ranks")
    ap.add_argument("--env", action="append", default=[],
                    help="RANK:NAME=VALUE, an extra variable for one rank (repeatable)")
    ap.add_argument("script", nargs=argparse.REMAINDER, help="-- script.py [args]")
    a = ap.parse_args(argv)
    if a.script and a.script[0] == "--":
        a.script = a.script[1:]
    if not a.script:
        ap.error("no script given (after --)")
    if a.ranks < 1:
        ap.error("--ranks must be >= 1")
    a.dpus = a.dpu.split(",")
    a.place = ([int(x) for x in a.place.split(",")] if a.place else
               [0 if r < (a.ranks + 1) // 2 else 1 for r in range(a.ranks)])
    if len(a.place) != a.ranks:
        ap.error(f"--place names {len(a.place)} ranks, --ranks is {a.ranks}")
    if any(not 0 <= d < len(a.dpus) for d in a.place):
        ap.error(f"--place uses a DC without a --dpu socket ({len(a.dpus)} given)")
    a.nss = a.netns.split(",") if a.netns else None
    if a.nss is not None and len(a.nss) != len(a.dpus):
        ap.error("--netns needs one namespace per --dpu socket")
    return a


def _pump(prefix, stream, out):
    for line in iter(stream.readline, b""):
        out.write(prefix + line.decode(errors="replace"))
        out.flush()


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    port = a.port or free_port()
    procs, pumps = [], []
    for r in range(a.ranks):
        dc = a.place[r]
        env = dict(os.environ, RANK=str(r), WORLD_SIZE=str(a.ranks), LOCAL_RANK=str(r),
                   MASTER_ADDR=a.master, MASTER_PORT=str(port), SDR_DPU=a.dpus[dc],
                   SDR_DC=str(dc))
        for e in a.env:
            rr, _, kv = e.partition(":")
            k, _, v = kv.partition("=")
            if rr.isdigit() and int(rr) == r and k:
                env[k] = v
        cmd = [a.python] + a.script
        if a.nss:
            cmd = ["ip", "netns", "exec", a.nss[dc]] + cmd
        p = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        procs.append(p)
        t = threading.Thread(target=_pump, args=(f"[r{r}] ", p.stdout, sys.stdout), daemon=True)
        t.start()
        pumps.append(t)
    deadline = time.monotonic() + a.timeout
    rc = 0
    while any(p.poll() is None for p in procs):
        if time.monotonic() > deadline:
            print(f"sdr.launch: timeout after {a.timeout:.0f} s: killing every rank",
                  file=sys.stderr)
            for p in procs:
                if p.poll() is None:
                    p.kill()
            rc = 124
            break
        # one rank failed: give the others a moment to report, then stop them
        failed = [p for p in procs if p.poll() not in (None, 0)]
        if failed and rc == 0:
            rc = failed[0].returncode
            grace = time.monotonic() + 10
            while any(p.poll() is None for p in procs) and time.monotonic() < grace:
                time.sleep(0.05)
            for p in procs:
                if p.poll() is None:
                    p.kill()
        time.sleep(0.05)
    for p in procs:
        p.wait()
    for t in pumps:
        t.join(timeout=2)
    if rc == 0:
        bad = [(r, p.returncode) for r, p in enumerate(procs) if p.returncode != 0]
        if bad:
            rc = bad[0][1] if bad[0][1] > 0 else 1
    if rc:
        print(f"sdr.launch: failed (status {rc}): "
              + ", ".join(f"rank {r}: {p.returncode}" for r, p in enumerate(procs)),
              file=sys.stderr)
    return rc


if __name__ == "__main__":
    sys.exit(main())
