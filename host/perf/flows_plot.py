#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Chart of an `sdr-perf flows` run (docs/benchmarks.md "Competing flows"):
per-flow payload goodput per window over time (solid) and each flow's
congestion-controller rate at the end of the window (dotted), marked where
its controller cut (down triangle), held while a queue drained (square:
a probe's overshoot or a deep queue) or spared a delay cut because the
queue did not last (x) within the window; the link's
capacity (its schedule, as a step) and the fair share; below, Jain's index
per window and the fraction of the bottleneck's ECN-capable frames it
marked CE. A tool beside sdr-perf (host
program), like plot.py.

    sdr-perf flows --qps 4 ... > flows.jsonl
    /usr/bin/python3 host/perf/flows_plot.py flows.jsonl --out flows.png

Reads the last line starting with '{"mode":"flows"' of the file (or stdin,
'-'); --from/--to draw a part of the run (seconds from its start). Exit
status 0 when the chart was written, 2 on bad input.
"""
import sys

import chart_input
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def jain(x):
    s, q = sum(x), sum(v * v for v in x)
    return s * s / (len(x) * q) if q > 0 else 0.0


def options(ap):
    ap.add_argument("--from", dest="t0", type=float, default=None,
                    help="draw from this second of the run (default: its start)")
    ap.add_argument("--to", dest="t1", type=float, default=None,
                    help="draw up to this second of the run (default: its end)")
    ap.add_argument("--avg", type=int, default=1,
                    help="goodput, Jain's index and the CE fraction over this many windows "
                         "(default 1: short windows of a run with --flow-win hold a whole "
                         "number of messages each, and the goodput jumps between them)")


def group(x, k):
    """The means of x over consecutive groups of k (the last may be shorter)."""
    return [sum(x[i:i + k]) / len(x[i:i + k]) for i in range(0, len(x), k)]


def mids(w, k, ngroups, nwin):
    """The times (s) of the middles of ngroups groups of k windows of w s
    (the last group ends at window nwin)."""
    return [w * min(k * i + k / 2, nwin) for i in range(ngroups)]


def decisions(ax, fl, key, w, marker, color, label):
    """Markers on the flow's controller rate at the end of each window in
    which its controller made a decision of kind `key` (cc_win_...)."""
    rate, n = fl.get("cc_rate_bps", []), fl.get(key, [])
    pts = [(w * (i + 1), rate[i] / 1e6) for i in range(min(len(rate), len(n)))
           if n[i] > 0 and rate[i] >= 0]
    if pts:
        ax.plot([x for x, _ in pts], [y for _, y in pts], linestyle="none", marker=marker,
                markersize=5, markerfacecolor="none", color=color, label=label)
    return bool(pts)


def main():
    a = chart_input.args(__doc__, "sdr-perf flows output (JSON line)", "flows.png", options)
    r = chart_input.last_run(a.input, "flows")
    if r is None:
        print("flows_plot: no sdr-perf flows JSON line in %s" % a.input, file=sys.stderr)
        return 2
    w, k = r["win_s"], max(a.avg, 1)
    fig, (ax, aj) = plt.subplots(2, 1, figsize=(8, 5.5), sharex=True,
                                 gridspec_kw={"height_ratios": [3, 1]})
    cut_seen = hold_seen = spared_seen = False
    for fl in r["per_flow"]:
        g = group(fl["win_bps"], k)
        line, = ax.plot(mids(w, k, len(g), len(fl["win_bps"])), [v / 1e6 for v in g],
                        marker=".", label="flow %d (%.1f Mbit/s)" % (fl["flow"], fl["goodput_bps"] / 1e6))
        rt = [(w * (i + 1), v / 1e6) for i, v in enumerate(fl.get("cc_rate_bps", [])) if v >= 0]
        if rt:
            ax.plot([x for x, _ in rt], [y for _, y in rt], linestyle=":",
                    color=line.get_color())
        # (one legend entry per kind, the first flow that has one)
        c = decisions(ax, fl, "cc_win_cuts", w, "v", line.get_color(),
                      None if cut_seen else "controller cut")
        h = decisions(ax, fl, "cc_win_holds_drain", w, "s", line.get_color(),
                      None if hold_seen else "controller held (queue draining)")
        p = decisions(ax, fl, "cc_win_delay_spared", w, "x", line.get_color(),
                      None if spared_seen else "delay cut spared (queue did not last)")
        cut_seen, hold_seen, spared_seen = cut_seen or c, hold_seen or h, spared_seen or p
    cap = r.get("win_link_rate_bps", [])
    if cap and all(v > 0 for v in cap):
        # the capacity at each window's end: the schedule as a step
        xs = [0.0] + [w * (i + 1) for i in range(len(cap))]
        ys = [cap[0] / 1e6] + [v / 1e6 for v in cap]
        ax.step(xs, ys, where="pre", color="grey", linewidth=0.8, label="capacity")
        ax.step(xs, [y / r["flows"] for y in ys], where="pre", color="grey", linewidth=0.8,
                linestyle="--", label="fair share")
    elif r.get("link_bps"):
        ax.axhline(r["link_bps"] / 1e6, color="grey", linewidth=0.8)
        ax.axhline(r["link_bps"] / 1e6 / r["flows"], color="grey", linewidth=0.8,
                   linestyle="--")
    ax.set_ylabel("Mbit/s (solid: goodput, dotted: controller rate)")
    ax.legend(fontsize=7, loc="upper right")
    ax.grid(alpha=0.3)
    nwin = min(len(fl["win_bps"]) for fl in r["per_flow"])
    gs = [group(fl["win_bps"][:nwin], k) for fl in r["per_flow"]]
    js = [jain([g[i] for g in gs]) for i in range(len(gs[0]))]
    aj.plot(mids(w, k, len(js), nwin), js, marker=".", color="black", label="Jain")
    ce, ect = r.get("win_link_ce", []), r.get("win_link_ect", [])
    if ce and ect and all(v >= 0 for v in ce + ect):
        ce, ect = group(ce, k), group(ect, k)
        cf = [(x, c / e) for x, c, e in zip(mids(w, k, len(ce), nwin), ce, ect) if e > 0]
        aj.plot([x for x, _ in cf], [y for _, y in cf], color="tab:red", linewidth=0.8,
                label="CE of ECT frames")
        aj.legend(fontsize=7, loc="lower right")
    aj.set_ylim(0, 1.05)
    aj.set_ylabel("per %g s" % (w * k))
    aj.set_xlabel("s")
    aj.grid(alpha=0.3)
    if a.t0 is not None or a.t1 is not None:
        aj.set_xlim(a.t0 if a.t0 is not None else 0, a.t1 if a.t1 is not None else w * nwin)
    ax.set_title(a.title or "%d flows, rel %s, %s:\n%.1f %% of the link, Jain %.3f, CE %.3f, "
                 "queue p99 %.0f KB" % (r["flows"], r["rel"], r["link"],
                                        100 * r["goodput_bps"] / r["link_bps"], r["jain"],
                                        r["link_ce"] / max(r["link_ect"], 1),
                                        r["queue_p99_bytes"] / 1e3), fontsize=8)
    fig.tight_layout()
    fig.savefig(a.out, dpi=100)
    print("flows_plot: wrote %s" % a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
