#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Tables and charts of host/pipe/measure_mdc.sh (docs/pipeline.md "Measured
on the transport").

    mdc_report.py OUT

reads OUT/results.jsonl (one line per run: DC 0's JSON of sdr-pipe, with the
measured and the DES's iterations, plus "set" and "rep") and writes
OUT/table.md (printed too) and, when matplotlib imports, OUT/policy.png
(iteration time and bubble per schedule and policy, measured next to the
DES), OUT/cba-iters.png (iteration by iteration under cba, measured and
DES), OUT/loss.png (SR, EC, AUTO at loss, measured next to the DES), and
for the shift set OUT/shift.png (as policy.png) and OUT/shift-iters.png
(iteration by iteration under each policy, measured and DES, and the rates
cba-shift moved).

Figures: the median over repetitions of each run's median iteration time
over iterations 1.. (iteration 0 warms up); the DES's figure is its median
over the same iterations; "mean" columns: the same with each run's mean over
iterations 1.. (cba's rates change from one iteration to the next, so its
median and mean differ). "P / equal" is the median of the ratios of runs
made next to each other (same repetition); "per run" lists those ratios."""
import json
import os
import statistics
import sys


def load(path):
    runs = []
    with open(path) as f:
        for line in f:
            if line.startswith("{"):
                runs.append(json.loads(line))
    return runs


def place(r):
    """the DC of each stage, "0,0,1,..." (a JSON array; runs before it was one
    printed the digits without separators)"""
    p = r["place"]
    return ",".join(str(d) for d in p) if isinstance(p, list) else ",".join(p)


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def mean_iter(r, key):
    """mean iteration time (ms) over iterations 1.. of a run (measured or DES)"""
    its = r[key][1:] or r[key]
    return statistics.mean(x["iter_ms"] for x in its)


def group(runs, *keys):
    g = {}
    for r in runs:
        g.setdefault(tuple(r[k] for k in keys), []).append(r)
    return g


POLICIES = ["none", "equal", "static", "cba", "cba-shift"]
SCHEDS = ["1f1b", "gpipe", "geopipe", "greedy"]


def policy_table(runs, out):
    """the table of one set of policy runs, then each policy's ratio to equal"""
    rows = []
    g = group(runs, "sched", "policy")
    scheds = sorted({k[0] for k in g}, key=lambda s: SCHEDS.index(s) if s in SCHEDS else 9)
    pols = sorted({k[1] for k in g}, key=lambda p: POLICIES.index(p) if p in POLICIES else 9)
    out.append("| schedule | policy | runs | measured iter (ms) | DES (ms) | meas/DES | "
               "mean meas (ms) | mean DES (ms) | bubble meas | bubble DES | refused / iter |")
    out.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for s in scheds:
        for p in pols:
            rs = g.get((s, p), [])
            if not rs:
                continue
            m = med([r["meas_iter_ms"] for r in rs])
            d = med([r["pred_iter_ms"] for r in rs])
            refused = med([statistics.mean(x["refused"] for x in r["meas_iters"][1:] or r["meas_iters"])
                           for r in rs])
            out.append("| %s | %s | %d | %.1f | %.1f | %.3f | %.1f | %.1f | %.1f %% | %.1f %% | %.2f |" % (
                s, p, len(rs), m, d, m / d, med([mean_iter(r, "meas_iters") for r in rs]),
                med([mean_iter(r, "pred_iters") for r in rs]), 100 * med([r["meas_bubble"] for r in rs]),
                100 * med([r["pred_bubble"] for r in rs]), refused))
            rows.append((s, p, m, d, med([r["meas_bubble"] for r in rs]),
                         med([r["pred_bubble"] for r in rs])))
    if "equal" not in pols:
        return rows
    for p in pols:
        if p == "equal":
            continue
        out.append("")
        out.append("| schedule | %s / equal measured: median (mean) | per run | "
                   "%s / equal DES: median (mean) |" % (p, p))
        out.append("|---|---:|---|---:|")
        for s in scheds:
            eq = {r["rep"]: r for r in g.get((s, "equal"), [])}
            cb = {r["rep"]: r for r in g.get((s, p), [])}
            reps = sorted(set(eq) & set(cb))
            if not reps:
                continue
            each = [cb[k]["meas_iter_ms"] / eq[k]["meas_iter_ms"] for k in reps]
            rd = med([cb[k]["pred_iter_ms"] / eq[k]["pred_iter_ms"] for k in reps])
            mm = med([mean_iter(cb[k], "meas_iters") / mean_iter(eq[k], "meas_iters") for k in reps])
            md = med([mean_iter(cb[k], "pred_iters") / mean_iter(eq[k], "pred_iters") for k in reps])
            out.append("| %s | %.3f (%.3f) | %s | %.3f (%.3f) |" % (
                s, med(each), mm, ", ".join("%.3f" % x for x in each), rd, md))
    return rows


def loss_table(runs, out):
    rows = []
    g = group(runs, "sched", "rel")
    out.append("| schedule | reliability | runs | measured iter (ms) | DES (ms) | meas/DES | "
               "bubble meas | bubble DES |")
    out.append("|---|---|---:|---:|---:|---:|---:|---:|")
    # schedules and reliabilities in the order the runs came (the script's order)
    for (s, rel), rs in g.items():
        m = med([r["meas_iter_ms"] for r in rs])
        d = med([r["pred_iter_ms"] for r in rs])
        out.append("| %s | %s | %d | %.1f | %.1f | %.3f | %.1f %% | %.1f %% |" % (
            s, rel, len(rs), m, d, m / d, 100 * med([r["meas_bubble"] for r in rs]),
            100 * med([r["pred_bubble"] for r in rs])))
        rows.append((s, rel, m, d))
    return rows


def bars(plt, rows, path, title):
    """iteration time and bubble per schedule and policy, measured next to the DES"""
    fig, ax = plt.subplots(1, 2, figsize=(11, 4))
    labels = ["%s\n%s" % (s, p) for s, p, *_ in rows]
    x = range(len(rows))
    for a, (mi, di, what) in zip(ax, ((2, 3, "iteration time (ms)"), (4, 5, "bubble ratio"))):
        a.bar([i - 0.2 for i in x], [r[mi] for r in rows], 0.4, label="measured")
        a.bar([i + 0.2 for i in x], [r[di] for r in rows], 0.4, label="DES")
        a.set_xticks(list(x))
        a.set_xticklabels(labels, fontsize=7)
        a.set_ylabel(what)
        a.legend()
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def shift_iters(plt, runs, path):
    """per schedule (first repetition): iteration times under each policy,
    measured and DES, and the rates of the flows cba-shift moved"""
    scheds = sorted({r["sched"] for r in runs}, key=lambda s: SCHEDS.index(s) if s in SCHEDS else 9)
    fig, ax = plt.subplots(2, len(scheds), figsize=(4.6 * len(scheds), 6.4), squeeze=False)
    rep = min(r["rep"] for r in runs)
    for col, s in enumerate(scheds):
        rs = {r["policy"]: r for r in runs if r["sched"] == s and r["rep"] == rep}
        a = ax[0][col]
        for p in sorted(rs, key=lambda p: POLICIES.index(p) if p in POLICIES else 9):
            ln = a.plot([x["iter_ms"] for x in rs[p]["meas_iters"]], "o-", label="%s measured" % p)
            a.plot([x["iter_ms"] for x in rs[p]["pred_iters"]], "--", color=ln[0].get_color(),
                   label="%s DES" % p)
        a.set_title("%s (rep %d)" % (s, rep))
        a.set_xlabel("iteration")
        a.set_ylabel("iteration time (ms)")
        a.legend(fontsize=6)
        a = ax[1][col]
        sh = rs.get("cba-shift")
        if not sh:
            continue
        nf = len(sh["meas_iters"][0]["rates_bps"])
        moved = [f for f in range(nf)
                 if len({x["rates_bps"][f] for x in sh["meas_iters"] + sh["pred_iters"]}) > 1]
        for f in moved:
            ln = a.plot([x["rates_bps"][f] / 1e6 for x in sh["meas_iters"]], "o-",
                        label="flow %d, controller" % f)
            a.plot([x["rates_bps"][f] / 1e6 for x in sh["pred_iters"]], "--", color=ln[0].get_color(),
                   label="flow %d, DES" % f)
        a.set_xlabel("iteration")
        a.set_ylabel("cba-shift rate (Mbit/s)")
        a.legend(fontsize=6)
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def charts(outdir, prow, lrow, srow, runs):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib not importable: no charts)")
        return
    if prow:
        bars(plt, prow, os.path.join(outdir, "policy.png"),
             "multi-DC rig: policies, measured next to the DES")
    if srow:
        bars(plt, srow, os.path.join(outdir, "shift.png"),
             "multi-DC rig, a CB flow and one with slack on one link: measured next to the DES")
        shift_iters(plt, [r for r in runs if r.get("set") == "shift"],
                    os.path.join(outdir, "shift-iters.png"))
    cba = [r for r in runs if r.get("set") == "policy" and r["policy"] == "cba"]
    if cba:
        scheds = sorted({r["sched"] for r in cba})
        fig, ax = plt.subplots(1, len(scheds), figsize=(4.5 * len(scheds), 3.6), squeeze=False)
        for a, s in zip(ax[0], scheds):
            r = next(x for x in cba if x["sched"] == s)
            a.plot([x["iter_ms"] for x in r["meas_iters"]], "o-", label="measured")
            a.plot([x["iter_ms"] for x in r["pred_iters"]], "s--", label="DES")
            a.set_title("%s, cba (rep %d)" % (s, r["rep"]))
            a.set_xlabel("iteration")
            a.set_ylabel("ms")
            a.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, "cba-iters.png"), dpi=80)
        plt.close(fig)
    if lrow:
        fig, a = plt.subplots(figsize=(7, 4))
        x = range(len(lrow))
        a.bar([i - 0.2 for i in x], [r[2] for r in lrow], 0.4, label="measured")
        a.bar([i + 0.2 for i in x], [r[3] for r in lrow], 0.4, label="DES")
        a.set_xticks(list(x))
        a.set_xticklabels(["%s\n%s" % (s, rel) for s, rel, *_ in lrow], fontsize=8)
        a.set_ylabel("iteration time (ms)")
        a.set_title("multi-DC rig at loss: SR, EC, AUTO")
        a.legend()
        fig.tight_layout()
        fig.savefig(os.path.join(outdir, "loss.png"), dpi=80)
        plt.close(fig)


def header(r0, what):
    return ("### %s (%d DCs, place %s, S=%d M=%d, tf %.1f ms, act %d B, grad %d B, rel %s, "
            "%d iterations per run)" % (what, r0["dcs"], place(r0), r0["stages"], r0["micro"],
                                         r0["tf_ms"], r0["act_bytes"], r0["grad_bytes"], r0["rel"],
                                         r0["iters"]))


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    outdir = sys.argv[1]
    runs = load(os.path.join(outdir, "results.jsonl"))
    if not runs:
        print("mdc_report.py: no runs in %s/results.jsonl" % outdir)
        return 1
    out = []
    pol = [r for r in runs if r.get("set") == "policy"]
    los = [r for r in runs if r.get("set") == "loss"]
    shf = [r for r in runs if r.get("set") == "shift"]
    prow = lrow = srow = []
    if pol:
        out.append(header(pol[0], "No loss: policies"))
        out.append("")
        prow = policy_table(pol, out)
        out.append("")
    if los:
        r0 = los[0]
        out.append("### Loss on every link: reliability (policy %s)" % r0["policy"])
        out.append("")
        lrow = loss_table(los, out)
        out.append("")
    if shf:
        out.append(header(shf[0], "A CB flow and one with slack on one link: policies"))
        out.append("")
        srow = policy_table(shf, out)
        out.append("")
    text = "\n".join(out)
    print(text)
    with open(os.path.join(outdir, "table.md"), "w") as f:
        f.write(text + "\n")
    charts(outdir, prow, lrow, srow, runs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
