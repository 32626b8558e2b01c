# SPDX-License-Identifier: BSD-3-Clause
"""Tables and charts of the runs of hw/x86/train-demo.sh: every
DIR/*/result.json written by host/python/train/train_pipe.py --out.

    python3 host/python/bench/train_report.py DIR [--main TAG] [--png-prefix P]

Prints (1) the correctness runs: scheme, schedule, link, bit-identity,
measured iteration time next to sdr-pipe's prediction; (2) the loss curve of
the --main run next to its single-process reference; (3) the yardstick
grid: iteration time per loss rate for gloo (kernel TCP, Reno and BBR) and
sdr (SR, EC, AUTO), with what a TCP model predicts for gloo: sdr-pipe's DES
fed with the run's measured per-stage times and, as link rate, the Mathis
et al. throughput MSS/RTT * C/sqrt(p) (C = 1.22, MSS 8948 B for a
9000-byte MTU; capped at the link rate). Writes P-iteration-time.png and
P-loss.png (matplotlib) and P-summary.json.
"""
import argparse
import glob
import json
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from sdr import pipeline  # noqa: E402

MSS = 8948
C_MATHIS = math.sqrt(1.5)   # 1.22


def mathis_bps(rtt_s, p, cap):
    if p <= 0:
        return cap
    return min(cap, MSS * 8 / rtt_s * C_MATHIS / math.sqrt(p))


def load(d):
    runs = {}
    for f in sorted(glob.glob(os.path.join(d, "*", "result.json"))):
        tag = os.path.basename(os.path.dirname(f))
        with open(f) as fh:
            runs[tag] = json.load(fh)
    return runs


def tcp_prediction(r):
    """DES of the run's schedule with the Mathis throughput as the link."""
    p = r.get("loss", 0.0)
    rate = mathis_bps(r["rtt_ms"] / 1e3, p, r["rate_bps"])
    tf = [x / 1e3 for x in r["tf_ms_stage"]]
    tb = [x / 1e3 for x in r["tb_ms_stage"]]
    s = pipeline.schedule(r["sched"], r["stages"], r["micro"], place=r["place"], tf=tf[0],
                          tb=tb[0], tf_stage=tf, tb_stage=tb, act_bytes=r["act_bytes"],
                          rtt=r["rtt_ms"] / 1e3, rate_bps=rate, rel="none", comm=r["comm"])
    return s.pred_iter_ms, rate


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--main", default=None, help="tag of the run whose loss curve is shown")
    ap.add_argument("--png-prefix", default=None, help="default DIR/train")
    a = ap.parse_args()
    runs = load(a.dir)
    if not runs:
        raise SystemExit(f"no */result.json under {a.dir}")
    prefix = a.png_prefix or os.path.join(a.dir, "train")
    summary = {"correctness": [], "grid": []}

    ovf = os.path.join(a.dir, "overhead.json")
    if os.path.exists(ovf) and os.path.getsize(ovf):
        with open(ovf) as fh:
            ov = json.load(fh)
        summary["overhead"] = ov
        print(f"\n== Overhead: a {ov['size']} B tensor, dist.send -> dist.recv vs sdr-perf lat "
              f"(one-way p50, us; rel {ov['rel']})")
        print(f"sdr-perf lat: {', '.join(f'{x:.0f}' for x in ov['sdr_perf_p50_us'])} (median "
              f"{ov['sdr_perf_ref_us']:.0f}); torch zero-copy {ov['torch_p50_us']:.0f} -> ratio "
              f"{ov['ratio']:.3f}" + (f"; torch staged {ov['staged_p50_us']:.0f} -> "
                                       f"{ov['staged_ratio']:.3f}" if "staged_p50_us" in ov else ""))
    corr = {t: r for t, r in runs.items() if r.get("phase") == "correctness"}
    if corr:
        print("\n== Correctness and prediction (DPU-side --link on both DPUs)")
        print(f"{'run':24s} {'scheme':10s} {'sched':8s} {'loss':>6s} {'iters':>5s} "
              f"{'bit-identical':>13s} {'measured ms':>11s} {'DES ms':>8s} {'meas/DES':>8s}")
        for t, r in corr.items():
            bi = r.get("bit_identical")
            print(f"{t:24s} {r['rel']:10s} {r['sched']:8s} {r.get('loss', 0):6g} {r['iters']:5d} "
                  f"{('yes' if bi else 'NO') if bi is not None else '-':>13s} "
                  f"{r['meas_iter_ms']:11.1f} {r['pred_iter_ms']:8.1f} {r['meas_over_pred']:8.3f}")
            summary["correctness"].append({k: r.get(k) for k in (
                "rel", "sched", "loss", "iters", "bit_identical", "meas_iter_ms", "pred_iter_ms",
                "meas_over_pred", "tf_ms_stage", "tb_ms_stage")} | {"tag": t})

    main_run = runs.get(a.main) if a.main else None
    if main_run and main_run.get("ref_losses"):
        print(f"\n== Loss curve of {a.main}: pipeline over sdr vs one process")
        print(f"{'iter':>4s}  {'pipeline':>20s}  {'reference':>20s}  equal")
        for i, (x, y) in enumerate(zip(main_run["losses"], main_run["ref_losses"])):
            print(f"{i:4d}  {x:20.17g}  {y:20.17g}  {'yes' if x == y else 'NO'}")

    grid = {t: r for t, r in runs.items() if r.get("phase") == "grid"}
    if grid:
        losses = sorted({r["loss"] for r in grid.values()})
        confs = []
        for r in grid.values():
            c = r["label"]
            if c not in confs:
                confs.append(c)
        order = ["gloo reno", "gloo bbr", "sdr sr", "sdr ec:rs:32:8", "sdr auto"]
        confs.sort(key=lambda c: order.index(c) if c in order else len(order))
        cell = {(r["label"], r["loss"]): r for r in grid.values()}
        print("\n== Iteration time (ms, median) through the bump in the wire: "
              "RTT %.0f ms, %.0f Mbit/s" % (next(iter(grid.values()))["rtt_ms"],
                                            next(iter(grid.values()))["rate_bps"] / 1e6))
        print("   each cell: measured (measured / sdr-pipe DES of the same run over a perfect "
              "link at the link rate, with the run's own per-stage compute times)")
        print(f"{'loss':>8s} " + " ".join(f"{c:>17s}" for c in confs)
              + f" {'gloo, TCP model':>15s} {'Mathis Mbit/s':>13s}")
        for p in losses:
            row = [cell.get((c, p)) for c in confs]
            ref = next((x for x in row if x is not None and x["backend"] == "gloo"), None)
            pred, rate = tcp_prediction(ref) if ref else (float("nan"), float("nan"))
            print(f"{p:8g} " + " ".join(
                f"{x['meas_iter_ms']:9.1f} ({x['meas_over_pred']:4.2f})" if x else f"{'-':>17s}"
                for x in row) + f" {pred:15.1f} {rate / 1e6:13.1f}")
            for c, x in zip(confs, row):
                if x:
                    summary["grid"].append({"label": c, "loss": p, "meas_iter_ms": x["meas_iter_ms"],
                                            "iter_ms": x["iter_ms"],
                                            "pred_iter_ms": x["pred_iter_ms"],
                                            "meas_over_pred": x["meas_over_pred"]})
            summary["grid"].append({"label": "TCP model (Mathis) for gloo", "loss": p,
                                    "pred_iter_ms": pred, "mathis_bps": rate})
    with open(prefix + "-summary.json", "w") as f:
        json.dump(summary, f, indent=1)
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("(matplotlib not importable: no charts)")
        return 0
    if grid:
        fig, (ax, ax2) = plt.subplots(2, 1, figsize=(9, 8), sharex=True)
        w = 0.8 / (len(confs) + 1)
        xs = range(len(losses))
        for k, c in enumerate(confs):
            ys = [cell[(c, p)]["meas_iter_ms"] if (c, p) in cell else float("nan") for p in losses]
            ax.bar([x + k * w for x in xs], ys, w, label=c)
            rs = [cell[(c, p)]["meas_over_pred"] if (c, p) in cell else float("nan")
                  for p in losses]
            ax2.bar([x + k * w for x in xs], rs, w, label=c)
        ax2.axhline(1.0, color="k", lw=0.8)
        ax2.set_ylabel("measured / DES over a perfect link\n(same run's compute times)")
        ax2.set_xticks([x + (len(confs) - 1) * w / 2 for x in xs])
        ax2.set_xticklabels([f"loss {p:g}" for p in losses])
        model = [g["pred_iter_ms"] for g in summary["grid"]
                 if g["label"].startswith("TCP model")]
        ax.plot([x + (len(confs) - 1) * w / 2 for x in xs], model, "k--o",
                label="gloo predicted (DES at the Mathis rate)")
        ax.set_ylabel("iteration time (ms, median)")
        r0 = next(iter(grid.values()))
        ax.set_title(f"{r0['sched']} pipeline, {r0['stages']} stages over 2 DCs, RTT "
                     f"{r0['rtt_ms']:.0f} ms, {r0['rate_bps'] / 1e9:g} Gbit/s: gloo (kernel TCP) "
                     "vs sdr", fontsize=9)
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(prefix + "-iteration-time.png", dpi=110)
        print(f"\nchart: {prefix}-iteration-time.png")
    if main_run and main_run.get("ref_losses"):
        fig, ax = plt.subplots(figsize=(7, 4))
        ax.plot(main_run["losses"], "b-", lw=3, alpha=0.5, label="pipeline over sdr")
        ax.plot(main_run["ref_losses"], "k:", lw=1.5, label="one process (reference)")
        ax.set_xlabel("iteration")
        ax.set_ylabel("training loss")
        ax.set_title(f"{a.main}: bit-identical: {main_run.get('bit_identical')}", fontsize=9)
        ax.legend()
        fig.tight_layout()
        fig.savefig(prefix + "-loss.png", dpi=110)
        print(f"chart: {prefix}-loss.png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
