#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Chart of per-path shares over time from `sdr-perf --path-trace`
(docs/multipath.md "Failover over time"): top, each emulated path's share
of the frames that arrived in each sample interval (the receiver's link
emulator lanes, stacked) with the paths' outages (`down=` of --link)
shaded; below, the sender's frames per second and how many of its ports
(paths of the QP) the policy is using. A tool beside sdr-perf (host
program), like flows_plot.py.

    sdr-perf bw --paths 16 --link "A|B,down=3s+4s|C|D" --path-trace 0.1 ... > run.jsonl
    /usr/bin/python3 host/perf/paths_plot.py run.jsonl --out paths.png

Reads the last line starting with '{"mode":"paths"' of the file (or stdin,
'-'). Exit status 0 when the chart was written, 2 on bad input.
"""
import re
import sys

import chart_input
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}


def seconds(text):
    m = re.fullmatch(r"\s*([0-9.]+)\s*(s|ms|us|ns)\s*", text)
    return float(m.group(1)) * UNITS[m.group(2)] if m else None


def outages(link):
    """(path, start s, end s) of every down=T+L of each '|' path."""
    out = []
    for k, spec in enumerate(link.split("|")):
        for item in spec.split(","):
            key, _, val = item.partition("=")
            if key.strip() != "down":
                continue
            for w in val.split(";"):
                at, _, ln = w.partition("+")
                s, d = seconds(at), seconds(ln)
                if s is not None and d is not None:
                    out.append((k, s, s + d))
    return out


def deltas(rows):
    return [[max((b or 0) - (a or 0), 0) for a, b in zip(r0, r1)]
            for r0, r1 in zip(rows, rows[1:])]


def main():
    a = chart_input.args(__doc__, "sdr-perf output with --path-trace", "paths.png")
    r = chart_input.last_run(a.input, "paths")
    if r is None or len(r["t"]) < 3:
        print("paths_plot: no sdr-perf --path-trace JSON line (of 3 samples or more) in %s"
              % a.input, file=sys.stderr)
        return 2
    t = r["t"]
    tm = [(x0 + x1) / 2 for x0, x1 in zip(t, t[1:])]
    dt = [max(x1 - x0, 1e-9) for x0, x1 in zip(t, t[1:])]
    fig, (ax, ab) = plt.subplots(2, 1, figsize=(8, 5.5), sharex=True,
                                 gridspec_kw={"height_ratios": [3, 1.4]})
    lanes = [n for n in r["lanes"] if not n.startswith("default") or "/p" in n] or r["lanes"]
    idx = [r["lanes"].index(n) for n in lanes]
    if idx:
        d = deltas([[row[i] for i in idx] for row in r["lane_delivered"]])
        tot = [sum(x) for x in d]
        share = [[x[k] / s if s else 0 for x, s in zip(d, tot)] for k in range(len(idx))]
        ax.stackplot(tm, share, labels=lanes, alpha=0.85)
        ax.set_ylim(0, 1)
        ax.set_ylabel("share of the frames that arrived")
    for k, s, e in outages(r.get("link", "")):
        ax.axvspan(s, e, color="black", alpha=0.12, hatch="//", fill=False)
        ax.text(s + 0.05, 0.97, "path %d down" % k, fontsize=8, va="top",
                bbox=dict(facecolor="white", alpha=0.8, linewidth=0))
    ax.legend(fontsize=7, loc="lower left")
    ax.grid(alpha=0.3)
    fr = deltas(r["frames"])
    ab.plot(tm, [sum(x) / d_ / 1e3 for x, d_ in zip(fr, dt)], color="black",
            label="frames sent (k/s)")
    ab.set_ylabel("k frames/s")
    ab.set_xlabel("s")
    ab.grid(alpha=0.3)
    a2 = ab.twinx()
    a2.step(t, [sum(x) for x in r["active"]], where="post", color="tab:red",
            label="ports in use")
    a2.set_ylim(0, max(r["paths"], 1) + 1)
    a2.set_ylabel("ports in use", color="tab:red")
    ab.legend(fontsize=7, loc="lower left")
    ax.set_title(a.title or "a QP of %d ports over %d emulated paths (shaded: a path's down=), "
                 "sampled every %g s" % (r["paths"], len(idx), r["interval_s"]), fontsize=9)
    fig.tight_layout()
    fig.savefig(a.out, dpi=90)
    print("paths_plot: wrote %s" % a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
