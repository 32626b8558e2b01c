#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Tables and charts of sdr-optical's runs (host/pipe/optical.sh).

optical_report.py DIR [--img IMGDIR]

Reads DIR/grid.jsonl and DIR/sensitivity.jsonl (one JSON object per
configuration, as sdr-optical --json prints them), prints the Markdown tables
of docs/pipeline.md §6 "Optical layer" (ours beside the CBA paper's figures)
and, with --img, writes PNG charts there.
"""
import argparse
import json
import os
import sys

# The CBA paper (arXiv 2512.20080; JOCN extension): Llama-3 8B, GPipe, 64
# micro-batches: CD-CBA against KSP-FF / SD-FF / CD.
PAPER_HEAD = {"time": {"ksp-ff": 14.35, "sd-ff": 15.34, "cd": 28.72},
              "bubble": {"ksp-ff": 4.74, "sd-ff": 5.22, "cd": 10.99},
              "cdcba_iter_s": 12.93, "cdcba_blocking": 1.77}
PAPER_MAX = {"gpipe": {"time": 31.25, "bubble": 11.81, "blocking": 19.33},
             "1f1b": {"time": 26.11, "bubble": 7.35, "blocking": 17.87}}
BASES = ["ksp-ff", "sd-ff", "cd"]


def load(path):
    rows = []
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line:
                rows.append(json.loads(line))
    return rows


def index(rows):
    """(variant, model, sched, micro, alg, cba) -> row"""
    return {(r.get("variant", ""), r["model"], r["sched"], r["micro"], r["alg"], r["cba"]): r
            for r in rows}


def cmp(ix, var, model, sched, micro):
    """CD-CBA against each baseline without CBA: time %, bubble points,
    blocking points; None when a run is missing."""
    c = ix.get((var, model, sched, micro, "cd", True))
    if c is None:
        return None
    out = {"cdcba": c}
    for b in BASES:
        r = ix.get((var, model, sched, micro, b, False))
        if r is None:
            return None
        out[b] = {"time": 100 * (r["iter_s"] - c["iter_s"]) / r["iter_s"],
                  "bubble": 100 * (r["bubble"] - c["bubble"]),
                  "blocking": 100 * (r["pp_blocking"] - c["pp_blocking"]),
                  "base": r}
    return out


def fmt3(d, key):
    return " / ".join("%.2f" % d[b][key] for b in BASES)


def grid_tables(ix, rows):
    print("### Headline: Llama-3 8B, GPipe, 64 micro-batches\n")
    h = cmp(ix, "", "8b", "gpipe", 64)
    if h:
        c = h["cdcba"]
        print("| | paper | ours |")
        print("|---|---|---|")
        print("| CD-CBA iteration (s) | %.2f | %.2f |" % (PAPER_HEAD["cdcba_iter_s"], c["iter_s"]))
        print("| iteration time vs KSP-FF / SD-FF / CD (%%) | −%s | −%s |" % (
            " / −".join("%.2f" % PAPER_HEAD["time"][b] for b in BASES),
            " / −".join("%.2f" % h[b]["time"] for b in BASES)))
        print("| bubble ratio vs KSP-FF / SD-FF / CD (points) | −%s | −%s |" % (
            " / −".join("%.2f" % PAPER_HEAD["bubble"][b] for b in BASES),
            " / −".join("%.2f" % h[b]["bubble"] for b in BASES)))
        print("| CD-CBA blocking (%%) | %.2f | %.2f |" % (PAPER_HEAD["cdcba_blocking"],
                                                      100 * c["pp_blocking"]))
        print("| baselines' blocking KSP-FF / SD-FF / CD (%%) | – | %s |" % " / ".join(
            "%.2f" % (100 * h[b]["base"]["pp_blocking"]) for b in BASES))
        print()
    print("### Every configuration: CD-CBA against KSP-FF / SD-FF / CD\n")
    print("| model | schedule | M | CD-CBA iteration (s) | time −% | bubble −points | "
          "blocking CD-CBA / baselines (%) | X+CBA vs X time −% |")
    print("|---|---|---|---|---|---|---|---|")
    maxima = {}
    for model in ("8b", "70b"):
        for sched in ("gpipe", "1f1b"):
            for micro in (16, 32, 64, 128):
                d = cmp(ix, "", model, sched, micro)
                if not d:
                    continue
                own = []
                for b in BASES:
                    x = ix.get(("", model, sched, micro, b, False))
                    y = ix.get(("", model, sched, micro, b, True))
                    own.append("%.2f" % (100 * (x["iter_s"] - y["iter_s"]) / x["iter_s"]))
                print("| %s | %s | %d | %.2f | %s | %s | %.2f / %s | %s |" % (
                    model, sched, micro, d["cdcba"]["iter_s"], fmt3(d, "time"),
                    fmt3(d, "bubble"), 100 * d["cdcba"]["pp_blocking"],
                    " / ".join("%.2f" % (100 * d[b]["base"]["pp_blocking"]) for b in BASES),
                    " / ".join(own)))
                m = maxima.setdefault(sched, {"time": -1e9, "bubble": -1e9, "blocking": -1e9})
                for b in BASES:
                    for k in ("time", "bubble", "blocking"):
                        m[k] = max(m[k], d[b][k])
    print()
    print("### Largest reduction across configurations (CD-CBA against any baseline)\n")
    print("| schedule | time −% paper / ours | bubble −points paper / ours | "
          "blocking −points paper / ours |")
    print("|---|---|---|---|")
    for sched in ("gpipe", "1f1b"):
        if sched in maxima:
            p, o = PAPER_MAX[sched], maxima[sched]
            print("| %s | %.2f / %.2f | %.2f / %.2f | %.2f / %.2f |" % (
                sched, p["time"], o["time"], p["bubble"], o["bubble"], p["blocking"],
                o["blocking"]))
    print()
    bg = [r["bg_blocking"] for r in rows]
    if bg:
        print("Background requests blocked: %.1f–%.1f %% across the grid.\n" % (
            100 * min(bg), 100 * max(bg)))


def sens_table(ix, rows):
    variants = []
    for r in rows:
        if r["variant"] not in variants:
            variants.append(r["variant"])
    print("### Sensitivity (8B, 64 micro-batches; one choice changed at a time)\n")
    print("| choice | schedule | CD-CBA iteration (s) | time −% vs KSP-FF / SD-FF / CD | "
          "CD-CBA blocking (%) | CD blocking (%) | KSP-FF+CBA vs KSP-FF time −% |")
    print("|---|---|---|---|---|---|---|")
    for v in variants:
        for sched in ("gpipe", "1f1b"):
            d = cmp(ix, v, "8b", sched, 64)
            if not d:
                continue
            x = ix[(v, "8b", sched, 64, "ksp-ff", False)]
            y = ix[(v, "8b", sched, 64, "ksp-ff", True)]
            print("| %s | %s | %.2f | %s | %.2f | %.2f | %.2f |" % (
                v, sched, d["cdcba"]["iter_s"], fmt3(d, "time"),
                100 * d["cdcba"]["pp_blocking"], 100 * d["cd"]["base"]["pp_blocking"],
                100 * (x["iter_s"] - y["iter_s"]) / x["iter_s"]))
    print()


def charts(ix, grid, sens, img):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    styles = {("ksp-ff", False): ("tab:blue", "--"), ("ksp-ff", True): ("tab:blue", "-"),
              ("sd-ff", False): ("tab:orange", "--"), ("sd-ff", True): ("tab:orange", "-"),
              ("cd", False): ("tab:green", "--"), ("cd", True): ("tab:green", "-")}
    for key, ylabel, scale, fname in (("iter_s", "iteration (s)", 1, "optical-grid-time.png"),
                                      ("pp_blocking", "PP requests blocked (%)", 100,
                                       "optical-grid-blocking.png")):
        fig, axes = plt.subplots(2, 2, figsize=(10, 7))
        for i, model in enumerate(("8b", "70b")):
            for j, sched in enumerate(("gpipe", "1f1b")):
                ax = axes[i][j]
                for (alg, cba), (col, ls) in styles.items():
                    xs, ys = [], []
                    for micro in (16, 32, 64, 128):
                        r = ix.get(("", model, sched, micro, alg, cba))
                        if r:
                            xs.append(micro)
                            ys.append(r[key] * scale)
                    if xs:
                        ax.plot(xs, ys, color=col, linestyle=ls, marker="o", markersize=3,
                                label=alg.upper() + ("+CBA" if cba else ""))
                ax.set_xscale("log", base=2)
                ax.set_xticks([16, 32, 64, 128])
                ax.set_xticklabels(["16", "32", "64", "128"])
                ax.set_title("Llama-3 %s, %s" % (model.upper(), "GPipe" if sched == "gpipe"
                                                  else "1F1B"))
                ax.set_xlabel("micro-batches")
                ax.set_ylabel(ylabel)
                ax.grid(alpha=0.3)
        axes[0][0].legend(fontsize=8)
        fig.suptitle("sdr-optical: NSFNET, 8 stages on 6 DCs (dashed: without CBA)")
        fig.tight_layout()
        fig.savefig(os.path.join(img, fname), dpi=110)
        plt.close(fig)
    if sens:
        variants = []
        for r in sens:
            if r["variant"] not in variants:
                variants.append(r["variant"])
        fig, ax = plt.subplots(figsize=(10, 0.35 * len(variants) + 1.5))
        ys = range(len(variants))
        for k, (sched, col) in enumerate((("gpipe", "tab:purple"), ("1f1b", "tab:cyan"))):
            vals = []
            for v in variants:
                d = cmp(ix, v, "8b", sched, 64)
                vals.append(d["ksp-ff"]["time"] if d else 0)
            ax.barh([y + 0.4 * k for y in ys], vals, height=0.4, color=col,
                    label="GPipe" if sched == "gpipe" else "1F1B")
        ax.set_yticks([y + 0.2 for y in ys])
        ax.set_yticklabels(variants, fontsize=8)
        ax.invert_yaxis()
        ax.axvline(PAPER_HEAD["time"]["ksp-ff"], color="k", linestyle=":",
                   label="paper, GPipe (14.35 %)")
        ax.set_xlabel("CD-CBA iteration time below KSP-FF (%), 8B, 64 micro-batches")
        ax.grid(axis="x", alpha=0.3)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(os.path.join(img, "optical-sensitivity.png"), dpi=110)
        plt.close(fig)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir")
    ap.add_argument("--img", help="write the PNG charts here")
    a = ap.parse_args()
    grid = load(os.path.join(a.dir, "grid.jsonl"))
    sp = os.path.join(a.dir, "sensitivity.jsonl")
    sens = load(sp) if os.path.exists(sp) else []
    ix = index(grid + sens)
    grid_tables(ix, grid)
    if sens:
        sens_table(ix, sens)
    if a.img:
        charts(ix, grid, sens, a.img)
    return 0


if __name__ == "__main__":
    sys.exit(main())
