#!/usr/bin/env python3
# Memory growth of a long-running process (test helper of the soak suites,
# tests/integration/soak.sh and tests/faults/soak_faults.py): sample its
# resident memory by kind of mapping from /proc/PID/smaps, and fit a
# least-squares line of RSS against the round number over a whole run.
#   mem_slope.py sample PID [--at-rest S]
#       one line "RSS HEAP ANON SHMEM FILE HOST" (kB; HOST: memfd segments
#       shared with attached hosts, "sdr-*"); --at-rest: first wait up to S
#       seconds for HOST to be 0 (a host that just exited is torn down by
#       the daemon's control thread a moment later)
#   mem_slope.py fit FILE [--max-bytes-per-round B] [--skip N|auto]
#       FILE: lines "ROUND SECONDS ... RSS_KB" with RSS in column --col
#       (default 4, 1-based); prints the slope per round and per hour of
#       every column that is a memory kind, exits 1 above the threshold.
import argparse
import sys
import time


def sample(pid):
    """kB resident: total, [heap], other private anonymous, shared memory
    (memfd, /dev/zero, hugepage files, SysV), file-backed, and apart from
    shared memory the segments shared with hosts (memfd "sdr-*": their
    buffers, contexts and QP segments)."""
    kinds = {"rss": 0, "heap": 0, "anon": 0, "shmem": 0, "file": 0, "host": 0}
    kind = "anon"
    with open("/proc/%d/smaps" % pid) as f:
        for line in f:
            head = line.split(None, 5)
            if not head:
                continue
            if "-" in head[0] and len(head) >= 5 and ":" not in head[0]:
                name = head[5].strip() if len(head) > 5 else ""
                shared = head[1][3] == "s"
                if name == "[heap]":
                    kind = "heap"
                elif name.startswith("/memfd:sdr-"):
                    kind = "host"
                elif name.startswith("/memfd:") or name.startswith("/dev/zero") \
                        or name.startswith("/SYSV") or "huge" in name or shared:
                    kind = "shmem"
                elif name.startswith("/"):
                    kind = "file"
                else:
                    kind = "anon"
            elif head[0] == "Rss:":
                kb = int(head[1])
                kinds["rss"] += kb
                kinds[kind] += kb
    return kinds


def sample_at_rest(pid, wait):
    """sample(), after waiting up to `wait` s for no host segment mapped"""
    end = time.monotonic() + wait
    k = sample(pid)
    while k["host"] and time.monotonic() < end:
        time.sleep(0.1)
        k = sample(pid)
    return k


def fit(xs, ys):
    """least-squares slope and intercept of ys over xs"""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    if sxx == 0:
        return 0.0, my
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    return b, my - b * mx


def report(rows, cols, skip, limit, out=sys.stdout):
    """rows: lists [round, seconds, ...]; cols: {name: index of a kB
    column}. Fits each column over rounds skip+1..n; returns (slope of
    the first column in bytes per round, bytes per hour, failed)."""
    use = rows[skip:] if len(rows) - skip >= 3 else rows
    xs = [float(r[0]) for r in use]
    secs = float(use[-1][1]) - float(use[0][1])
    rounds = xs[-1] - xs[0]
    per_hour = 3600.0 * rounds / secs if secs > 0 else 0.0
    first = None
    for name, c in cols.items():
        ys = [1024.0 * float(r[c]) for r in use]
        b, a = fit(xs, ys)
        resid = max(abs(y - (a + b * x)) for x, y in zip(xs, ys))
        print("%-6s slope %+9.0f B/round = %+8.2f MB/hour (%.0f rounds/hour), "
              "%.1f -> %.1f MB, worst residual %.0f kB (rounds %d..%d)"
              % (name, b, b * per_hour / 1e6, per_hour, ys[0] / 1e6, ys[-1] / 1e6,
                 resid / 1024, xs[0], xs[-1]), file=out)
        if first is None:
            first = (b, b * per_hour)
    failed = first[0] > limit
    if failed:
        print("FAIL: RSS grows %.0f bytes per round (> %d bytes per round)"
              % (first[0], limit), file=out)
    return first[0], first[1], failed


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sample")
    s.add_argument("pid", type=int)
    s.add_argument("--at-rest", type=float, default=0,
                   help="wait up to this many seconds for no host segment mapped")
    f = sub.add_parser("fit")
    f.add_argument("file")
    f.add_argument("--col", type=int, default=4, help="1-based column of RSS kB")
    f.add_argument("--kinds", type=int, default=0,
                   help="number of columns after RSS that are heap/anon/shmem/file/host kB")
    f.add_argument("--skip", default="auto",
                   help="warm-up rounds left out (auto: the first tenth, at least 20)")
    f.add_argument("--max-bytes-per-round", type=float, default=1024)
    a = ap.parse_args()
    if a.cmd == "sample":
        k = sample_at_rest(a.pid, a.at_rest)
        print(k["rss"], k["heap"], k["anon"], k["shmem"], k["file"], k["host"])
        return 0
    rows = [ln.split() for ln in open(a.file) if ln.strip()]
    if not rows:
        print("no samples")
        return 1
    skip = max(20, len(rows) // 10) if a.skip == "auto" else int(a.skip)
    cols = {"rss": a.col - 1}
    for i, name in enumerate(("heap", "anon", "shmem", "file", "host")[:a.kinds]):
        cols[name] = a.col + i
    _, _, failed = report(rows, cols, skip, a.max_bytes_per_round)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
