#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Charts from sdr-perf JSON lines (docs/benchmarks.md).

    sdr-perf sweep ... > runs.jsonl
    /usr/bin/python3 host/perf/plot.py runs.jsonl --out-dir charts/

Reads every line that starts with '{' from the files given (or stdin, or
'-'), ignores everything else (human blocks, progress lines), and writes:

  completion-vs-loss.png   message completion time (post -> receive
                           complete, p50 and p99) against the link loss rate,
                           one line per reliability scheme, size and window,
                           plus the fraction of messages that arrived complete
                           (lat runs if there are any, else bw runs)
  goodput-vs-size.png      goodput (payload Gbit/s) against message size,
                           one line per scheme / loss / rig / workers / window
                           / ICRC / pacing (bw runs if any, else lat runs)

Runs that failed or were skipped are listed on stderr and left out. A chart
with no data is not written. Exit status: 0 if at least one chart was
written, 1 otherwise, 2 on bad input.
"""
import argparse
import json
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def loss_of(link):
    """Bernoulli loss probability of a --link spec ('' = 0)."""
    m = re.search(r"(?:^|,)loss=([0-9.eE+-]+)", link or "")
    return float(m.group(1)) if m else 0.0


def fmt_size(n):
    for unit, div in (("G", 1 << 30), ("M", 1 << 20), ("K", 1 << 10)):
        if n >= div and n % div == 0:
            return "%d%s" % (n // div, unit)
    return "%dB" % n


def read_runs(paths):
    runs = []
    streams = []
    if not paths or paths == ["-"]:
        streams.append(("<stdin>", sys.stdin))
    else:
        for p in paths:
            streams.append((p, sys.stdin if p == "-" else open(p, encoding="utf-8")))
    for name, f in streams:
        for no, line in enumerate(f, 1):
            line = line.strip()
            if not line.startswith("{"):
                continue
            try:
                r = json.loads(line)
            except ValueError as e:
                raise SystemExit("plot.py: %s:%d: not JSON: %s" % (name, no, e))
            if not isinstance(r, dict) or "mode" not in r:
                raise SystemExit("plot.py: %s:%d: not an sdr-perf record" % (name, no))
            runs.append(r)
    return runs


def pick_mode(runs, prefer, want):
    """The mode a chart uses: --*-mode if given, else prefer if present."""
    if want:
        return want
    modes = {r.get("mode") for r in runs if r.get("status") == "ok"}
    return prefer if prefer in modes else ({"bw", "lat"} - {prefer}).pop()


def completion_chart(runs, out, mode):
    pts = {}
    for r in runs:
        if r.get("mode") != mode or r.get("status") != "ok":
            continue
        if r.get("lat_p50_us") is None:
            continue
        key = (r.get("rel", "?"), r["size"], r.get("window", 0))
        total = max(1, r.get("msgs_ok", 0) + r.get("msgs_partial", 0) + r.get("msgs_err", 0))
        pts.setdefault(key, []).append(
            (loss_of(r.get("link")), r["lat_p50_us"] / 1e3, r["lat_p99_us"] / 1e3,
             r.get("msgs_ok", 0) / total))
    if not pts:
        return False
    fig, (ax, ax2) = plt.subplots(2, 1, figsize=(8, 7), sharex=True,
                                  gridspec_kw={"height_ratios": [3, 1]})
    any_loss = any(p[0] > 0 for v in pts.values() for p in v)
    for (rel, size, window), v in sorted(pts.items()):
        v.sort()
        xs = [p[0] for p in v]
        label = "%s %s w%d" % (rel, fmt_size(size), window)
        line, = ax.plot(xs, [p[2] for p in v], marker="o", label=label + " p99")
        ax.plot(xs, [p[1] for p in v], marker=".", linestyle="--", color=line.get_color(),
                label=label + " p50")
        ax2.plot(xs, [p[3] for p in v], marker="o", color=line.get_color())
    if any_loss:
        losses = sorted({p[0] for v in pts.values() for p in v})
        nonzero = [x for x in losses if x > 0]
        ax.set_xscale("symlog", linthresh=min(nonzero) / 10)
        ax.set_xticks(losses)
        ax.set_xticklabels(["%g" % x for x in losses])
        ax.minorticks_off()
    ax.set_yscale("log")
    ax.set_ylabel("completion time (ms)\npost -> receive complete")
    ax.set_title("sdr-perf %s: message completion time vs loss" % mode)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    ax2.set_ylabel("complete\nfraction")
    ax2.set_ylim(-0.05, 1.05)
    ax2.set_xlabel("link loss probability per packet")
    ax2.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return True


def goodput_chart(runs, out, mode):
    series = {}
    for r in runs:
        if r.get("mode") != mode or r.get("status") != "ok":
            continue
        if r.get("goodput_gbps") is None:
            continue
        key = (r.get("rel", "?"), loss_of(r.get("link")), r.get("rig", "?"),
               r.get("workers", 1), r.get("icrc", True), r.get("port_rate_bps", 0),
               r.get("window", 0))
        series.setdefault(key, []).append((r["size"], r["goodput_gbps"]))
    if not series:
        return False
    fig, ax = plt.subplots(figsize=(8, 5))
    for (rel, loss, rig, workers, icrc, rate, window), v in sorted(series.items()):
        v.sort()
        label = "%s loss=%g %s %d worker(s) win %d%s%s" % (
            rel, loss, rig, workers, window, "" if icrc else " no-icrc",
            " paced %gG" % (rate / 1e9) if rate else "")
        ax.plot([p[0] for p in v], [p[1] for p in v], marker="o", label=label)
    ax.set_xscale("log", base=2)
    sizes = sorted({s for v in series.values() for s, _ in v})
    ax.set_xticks(sizes)
    ax.set_xticklabels([fmt_size(s) for s in sizes], rotation=45)
    ax.set_xlabel("message size")
    ax.set_ylabel("goodput (payload Gbit/s)")
    ax.set_title("sdr-perf %s: goodput vs message size" % mode)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("inputs", nargs="*", help="JSON-lines files (default stdin)")
    ap.add_argument("--out-dir", default=".", help="where the PNGs go (default .)")
    ap.add_argument("--prefix", default="", help="file name prefix")
    ap.add_argument("--completion-mode", choices=("bw", "lat"),
                    help="runs of this mode in the completion chart (default lat if any)")
    ap.add_argument("--goodput-mode", choices=("bw", "lat"),
                    help="runs of this mode in the goodput chart (default bw if any)")
    a = ap.parse_args()
    try:
        runs = read_runs(a.inputs)
    except OSError as e:
        print("plot.py: %s" % e, file=sys.stderr)
        return 2
    for r in runs:
        if r.get("status") not in (None, "ok"):
            print("plot.py: left out (%s): %s rel=%s size=%s: %s" % (
                r.get("status"), r.get("mode"), r.get("rel"), r.get("size"),
                r.get("error", "")), file=sys.stderr)
    os.makedirs(a.out_dir, exist_ok=True)
    wrote = []
    for name, fn, mode in (
            ("completion-vs-loss.png", completion_chart,
             pick_mode(runs, "lat", a.completion_mode)),
            ("goodput-vs-size.png", goodput_chart, pick_mode(runs, "bw", a.goodput_mode))):
        path = os.path.join(a.out_dir, a.prefix + name)
        if fn(runs, path, mode):
            wrote.append(path)
    for p in wrote:
        print(p)
    if not wrote:
        print("plot.py: no bw/lat runs with status ok: nothing to plot", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
