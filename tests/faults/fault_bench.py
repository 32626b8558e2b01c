#!/usr/bin/env python3
# Fault benchmark (run by hand, root; tests/faults/, on the fault harness
# faultlib.py; the figures are in docs/reliability.md "Faults: measured"):
# a stream of verified messages between two daemons over veth on a
# long-haul emulated link, interrupted by a link outage (veth down for D s)
# or, where the daemon and libsdr restore QPs, a kill -9 and restart of the
# receiving or the sending daemon. Per run: the stall from the link's
# return (or the restarted daemon's socket appearing) to the first send
# completion and to the first receive completion after it, and the goodput
# (verified payload delivered) over the 2 s after against the 2 s before
# the fault. Prints a Markdown table with the machine (lscpu), the link,
# the sizes and the window; --json writes one object per run, --png a
# chart (matplotlib, when /usr/bin/python3 has it); --from LABEL=FILE
# (repeatable) only renders saved runs, several builds side by side.
#   sudo tests/faults/fault_bench.py --cases link:0.2,link:2,link:10 \
#       --rels sr,ec,auto --reps 3 --png docs/img/fault-stall.png
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import faultlib as F  # noqa: E402

EC = {"ec": ["--ec", "rs:8:2"]}


def machine():
    r = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    f = dict(ln.split(":", 1) for ln in r.splitlines() if ":" in ln)
    return "%s, %s CPU(s)%s" % (f.get("Model name", "?").strip(), f.get("CPU(s)", "?").strip(),
                                ", " + f["Hypervisor vendor"].strip() + " guest"
                                if "Hypervisor vendor" in f else "")


def size_bytes(s):
    m = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    return int(s[:-1]) * m[s[-1]] if s[-1] in m else int(s)


def one(rig, case, rel, a, rep):
    """one stream with one fault; returns the figures of the run"""
    kind, _, arg = case.partition(":")
    size = size_bytes(a.size)
    # enough messages that the stream cannot end before the window after
    # the fault even at the link's full rate; killed once measured
    span = a.pre + (float(arg) if kind == "link" else 3) + a.post + 5
    count = int(span * a.rate_bps / 8 / size) + 4 * a.window
    x = rig.transfer(a.size, count, rel=rel, window=a.window, seed=rep + 1, timeout=90,
                     send_args=EC.get(rel, []), line_buffered=True)
    if not x.wait_first("recv", 30):
        x.kill()
        raise RuntimeError("%s %s: no message arrived:\n%s" % (case, rel, "\n".join(x.check())))
    time.sleep(a.pre)
    t_fault = F.now()
    if kind == "link":
        td, t_back = rig.flap(float(arg))
    else:  # restart-recv / restart-send
        side = "b" if kind == "restart-recv" else "a"
        td, t_back = rig.daemons[side].restart()
    time.sleep(a.post + 1.0)
    s, r = x.kill()
    res = {"case": case, "rel": rel, "rep": rep, "size": size, "window": a.window,
           "fault_s": round(t_back - td, 3)}
    fs, fr = F.first_after(s.msgs, t_back), F.first_after(r.msgs, t_back)
    res["stall_send_ms"] = round((fs.t - t_back) * 1e3, 1) if fs else None
    res["stall_recv_ms"] = round((fr.t - t_back) * 1e3, 1) if fr else None
    ok = r.ok()
    before = F.goodput_bps(ok, t_fault - 2.0, t_fault)
    after = F.goodput_bps(ok, t_back, t_back + 2.0)
    res["goodput_before_mbps"] = round(before / 1e6, 1)
    res["goodput_after_mbps"] = round(after / 1e6, 1)
    res["after_over_before"] = round(after / before, 3) if before else None
    res["errors"] = len(s.bad()) + len(r.bad())
    res["dups"] = len(s.duplicates()) + len(r.duplicates())
    return res


def fmt(v, f="%.0f"):
    return "-" if v is None else f % v


def table(rows, out):
    print("| fault | build | rel | runs | stall to 1st send completion ms (median, max) | "
          "to 1st receive ms (median, max) | goodput before Mbit/s | 2 s after Mbit/s | "
          "after/before | error completions |", file=out)
    print("|---|---|---|---|---|---|---|---|---|---|", file=out)
    keys = []
    for r in rows:
        k = (r["case"], r.get("build", ""), r["rel"])
        if k not in keys:
            keys.append(k)
    for case, build, rel in keys:
        g = [r for r in rows if r["case"] == case and r["rel"] == rel and
             r.get("build", "") == build]

        def med(k):
            v = [r[k] for r in g if r[k] is not None]
            return statistics.median(v) if v else None

        def mx(k):
            v = [r[k] for r in g if r[k] is not None]
            return max(v) if v else None
        label = {"link": "link down %s s", "restart-recv": "receiver restart%s",
                 "restart-send": "sender restart%s"}
        kind, _, arg = case.partition(":")
        print("| %s | %s | %s | %d | %s, %s | %s, %s | %s | %s | %s | %d |"
              % (label[kind] % arg, build or "-", rel, len(g), fmt(med("stall_send_ms")),
                 fmt(mx("stall_send_ms")), fmt(med("stall_recv_ms")), fmt(mx("stall_recv_ms")),
                 fmt(med("goodput_before_mbps")), fmt(med("goodput_after_mbps")),
                 fmt(med("after_over_before"), "%.2f"), sum(r["errors"] for r in g)),
              file=out)


def chart(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("no matplotlib: no chart")
        return
    cases = []
    for r in rows:
        if r["case"] not in cases:
            cases.append(r["case"])
    groups = []
    for r in sorted(rows, key=lambda r: ["sr", "ec", "auto"].index(r["rel"])):
        if (r.get("build", ""), r["rel"]) not in groups:
            groups.append((r.get("build", ""), r["rel"]))
    builds = []
    for r in rows:  # in the order given
        if r.get("build", "") not in builds:
            builds.append(r.get("build", ""))
    groups.sort(key=lambda g: (builds.index(g[0]), ["sr", "ec", "auto"].index(g[1])))
    fig, ax = plt.subplots(1, 2, figsize=(11, 3.8))
    present = {c: [g for g in groups if any(r["case"] == c and r["rel"] == g[1] and
                                            r.get("build", "") == g[0] for r in rows)]
               for c in cases}
    w = 0.8 / max(len(v) for v in present.values())
    seen = set()
    for i, c in enumerate(cases):
        for k, (build, rel) in enumerate(present[c]):
            g = [r for r in rows if r["case"] == c and r["rel"] == rel and
                 r.get("build", "") == build]
            v = [r["stall_recv_ms"] for r in g if r["stall_recv_ms"] is not None]
            st = statistics.median(v) if v else 0
            v = [r["after_over_before"] for r in g if r["after_over_before"] is not None]
            gp = statistics.median(v) if v else 0
            x = i + (k - (len(present[c]) - 1) / 2) * w
            name = rel.upper() + (" " + build if build else "")
            style = {"color": "C%d" % ["sr", "ec", "auto"].index(rel),
                     "hatch": ["", "//", "..", "xx"][builds.index(build) % 4],
                     "edgecolor": "black",
                     "linewidth": 0.3, "label": None if name in seen else name}
            seen.add(name)
            ax[0].bar([x], [st], w, **style)
            style["label"] = None
            ax[1].bar([x], [gp], w, **style)
    names = [c.replace("link:", "link down ").replace("restart-", "restart ") +
             ("s" if c.startswith("link") else "") for c in cases]
    for a_ in ax:
        a_.set_xticks(range(len(cases)))
        a_.set_xticklabels(names, fontsize=8)
    ax[0].set_ylabel("ms from link return / daemon ready\nto the first receive completion")
    ax[1].set_ylabel("goodput 2 s after / 2 s before")
    ax[1].axhline(1.0, color="grey", lw=0.5)
    ax[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    print("chart:", path)


def main():
    ap = argparse.ArgumentParser(description="stall and goodput around faults")
    ap.add_argument("--cases", default="link:0.2,link:2,link:10",
                    help="link:SECONDS (outage), restart-recv, restart-send")
    ap.add_argument("--rels", default="sr,ec,auto")
    ap.add_argument("--size", default="1M", help="message size")
    ap.add_argument("--window", type=int, default=8, help="messages in flight")
    ap.add_argument("--link", default=F.LONGHAUL + ",loss=1e-3",
                    help="--link of both daemons (seeds added)")
    ap.add_argument("--port-rate", default="900m", help="--port-rate of both daemons")
    ap.add_argument("--rate-bps", type=float, default=1e9,
                    help="the link's rate: sizes the streams")
    ap.add_argument("--pre", type=float, default=3.0, help="seconds of stream before the fault")
    ap.add_argument("--post", type=float, default=2.0, help="seconds measured after it")
    ap.add_argument("--reps", type=int, default=1)
    ap.add_argument("--json", help="write the runs here (one JSON object per line)")
    ap.add_argument("--png", help="write a chart here")
    ap.add_argument("--from", dest="saved", action="append", default=[],
                    help="LABEL=FILE: render the runs saved with --json (no new runs)")
    a = ap.parse_args()
    if a.saved:
        rows = []
        for item in a.saved:
            label, _, path = item.partition("=")
            for ln in open(path):
                r = json.loads(ln)
                r["build"] = label
                rows.append(r)
        table(rows, sys.stdout)
        if a.png:
            chart(rows, a.png)
        return 0
    F.need_root()
    restore = F.restore_supported()
    cases = a.cases.split(",")
    if not restore and any(c.startswith("restart") for c in cases):
        print("restart cases left out: this build does not restore QPs (sdr-dpu --state-dir, "
              "libsdr re-attach)")
        cases = [c for c in cases if not c.startswith("restart")]
    rows = []
    with F.Rig() as rig:
        extra = ["--port-rate", a.port_rate] + F.horizon_args(60000)
        if restore:
            extra += ["--state-dir", os.path.join(rig.tmp, "state")]
        rig.daemon("a", ["--link", a.link + ",seed=101"] + extra)
        rig.daemon("b", ["--link", a.link + ",seed=202"] + extra)
        for rep in range(a.reps):
            for case in cases:
                for rel in a.rels.split(","):
                    r = one(rig, case, rel, a, rep)
                    F.log(json.dumps(r))
                    rows.append(r)
    head = subprocess.run(["git", "-C", F.SRC, "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True).stdout.strip()
    print("\nmachine: %s; kernel %s; commit %s; %s" % (machine(), platform.release(), head,
                                                        time.strftime("%Y-%m-%d")))
    print("link (each direction): %s; daemons --port-rate %s, outage horizon 60 s; "
          "messages of %s, window %d, SR / EC rs:8:2 / AUTO\n"
          % (a.link, a.port_rate, a.size, a.window))
    table(rows, sys.stdout)
    if a.json:
        with open(a.json, "w") as f:
            for r in rows:
                f.write(json.dumps(r) + "\n")
    if a.png:
        chart(rows, a.png)
    return 0


if __name__ == "__main__":
    F.main_wrap(main)
