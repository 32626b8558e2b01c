#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Chart of an `sdr-perf flows` run (docs/benchmarks.md "Competing flows"):
per-flow payload goodput per window over time (solid) and each flow's
congestion-controller rate at the end of the window (dotted), the link's
capacity as a line, Jain's index per window below. A tool beside sdr-perf
(host program), like plot.py.

    sdr-perf flows --qps 4 ... > flows.jsonl
    /usr/bin/python3 host/perf/flows_plot.py flows.jsonl --out flows.png

Reads the last line starting with '{"mode":"flows"' of the file (or stdin,
'-'). Exit status 0 when the chart was written, 2 on bad input.
"""
import sys

import chart_input
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def jain(x):
    s, q = sum(x), sum(v * v for v in x)
    return s * s / (len(x) * q) if q > 0 else 0.0


def main():
    a = chart_input.args(__doc__, "sdr-perf flows output (JSON line)", "flows.png")
    r = chart_input.last_run(a.input, "flows")
    if r is None:
        print("flows_plot: no sdr-perf flows JSON line in %s" % a.input, file=sys.stderr)
        return 2
    w = r["win_s"]
    fig, (ax, aj) = plt.subplots(2, 1, figsize=(8, 5.5), sharex=True,
                                 gridspec_kw={"height_ratios": [3, 1]})
    for fl in r["per_flow"]:
        t = [w * (i + 0.5) for i in range(len(fl["win_bps"]))]
        line, = ax.plot(t, [v / 1e6 for v in fl["win_bps"]], marker=".",
                        label="flow %d (%.1f Mbit/s)" % (fl["flow"], fl["goodput_bps"] / 1e6))
        rt = [(w * (i + 1), v / 1e6) for i, v in enumerate(fl.get("cc_rate_bps", [])) if v >= 0]
        if rt:
            ax.plot([x for x, _ in rt], [y for _, y in rt], linestyle=":",
                    color=line.get_color())
    if r.get("link_bps"):
        ax.axhline(r["link_bps"] / 1e6, color="grey", linewidth=0.8)
        ax.axhline(r["link_bps"] / 1e6 / r["flows"], color="grey", linewidth=0.8,
                   linestyle="--")
    ax.set_ylabel("Mbit/s (solid: goodput, dotted: controller rate)")
    ax.legend(fontsize=7, loc="upper right")
    ax.grid(alpha=0.3)
    nwin = min(len(fl["win_bps"]) for fl in r["per_flow"])
    js = [jain([fl["win_bps"][i] for fl in r["per_flow"]]) for i in range(nwin)]
    aj.plot([w * (i + 0.5) for i in range(nwin)], js, marker=".", color="black")
    aj.set_ylim(0, 1.05)
    aj.set_ylabel("Jain / %g s" % w)
    aj.set_xlabel("s")
    aj.grid(alpha=0.3)
    ax.set_title(a.title or "%d flows, rel %s, %s: %.1f %% of the link, Jain %.3f, CE %.3f, "
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
