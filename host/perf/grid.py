#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Measured completion times next to the model's predictions (docs/benchmarks.md §6).

    host/perf/grid.sh            # runs the sweep, then this script
    /usr/bin/python3 host/perf/grid.py runs.jsonl --model build/host/model/sdr-model \\
        --rtt 25ms --rate 900m [--md table.md] [--png grid.png]

Reads sdr-perf JSON lines (lat runs of a sweep over sizes x loss x schemes),
asks sdr-model for the prediction of every cell with the same link (RTT,
injection rate, per-packet loss, chunk = chunk_pkts x mtu) and prints a
markdown table:

  loss | size | per scheme: measured mean (p99) and model mean, ratio
       | AUTO: measured mean, what it picked, vs the best / worst fixed scheme

What is compared: the *sender's* completion (post -> send completion, which
under SR / EC / AUTO means the receiver acknowledged every chunk), the same
event the model's T = ... + RTT describes. The receive-side completion
(post -> receive complete, about half an RTT earlier) is in the JSON as lat_*.

The model's injection rate is the pacing rate scaled by payload / frame bytes
(4096 / 4174 at MTU 4096): the pacer counts frame bytes, the model chunks
(sdr-model --paced does it). What a scheme is, its spelling and label come
from sdr-model --parse-scheme; --rtt and --rate are read by sdr-model too:
nothing of the C code is re-implemented here.
Exit 0; 1 if no usable run; 2 on bad input.
"""
import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plot import fmt_size, loss_of  # noqa: E402  (the sweep charts' helpers)


SCHEMES = {}


def scheme(model, s):
    """sdr-model --parse-scheme: the scheme module's view of an sdr-perf
    scheme ('sr', 'rs:32:8', 'auto', ...), or None if it is not one."""
    if s not in SCHEMES:
        r = subprocess.run([model, "--parse-scheme", s], capture_output=True, text=True)
        SCHEMES[s] = json.loads(r.stdout) if r.returncode == 0 else None
    return SCHEMES[s]


def model_name(model, s):
    """The spec sdr-model --schemes takes, for a scheme the model evaluates."""
    d = scheme(model, s)
    return d["spec"] if d and d["model"] else None


def model_label(model, s):
    d = scheme(model, s)
    return d["label"] if d else s


def predict(model, size, loss, rtt, rate, chunk, mtu, schemes, alpha):
    """Per spec: sdr-model's prediction; and the whole JSON (rate_bps, frame_bytes)."""
    cmd = [model, "--size", str(size), "--paced", rate, "--rtt", rtt,
           "--loss", "%g" % loss, "--chunk", str(chunk), "--mtu", str(mtu),
           "--alpha", "%g" % alpha, "--schemes", ",".join(schemes), "--json"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode:
        raise ValueError(r.stderr.strip())
    d = json.loads(r.stdout)
    return {s["spec"]: s for s in d["schemes"]}, d


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--model", required=True, help="the sdr-model binary")
    ap.add_argument("--rtt", required=True, help="emulated RTT, e.g. 25ms")
    ap.add_argument("--rate", required=True, help="pacing rate of frame bytes, e.g. 900m")
    ap.add_argument("--alpha", type=float, default=0.5, help="model RTO = (1+alpha) RTT")
    ap.add_argument("--md", help="also write the table to this file")
    ap.add_argument("--png", help="write a chart (measured vs model per scheme)")
    ap.add_argument("--json-out", help="write one JSON line per cell here")
    ap.add_argument("--dpi", type=int, default=110, help="chart resolution (default 110)")
    a = ap.parse_args()
    runs = []
    for path in a.files or ["-"]:
        f = sys.stdin if path == "-" else open(path, encoding="utf-8")
        for line in f:
            if line.startswith("{"):
                try:
                    runs.append(json.loads(line))
                except json.JSONDecodeError as e:
                    print("grid.py: %s: bad JSON line: %s" % (path, e), file=sys.stderr)
                    return 2
    cells = {}
    for r in runs:
        if r.get("mode") not in ("lat", "bw") or r.get("status") != "ok":
            if r.get("status") in ("failed", "skipped"):
                print("grid.py: left out: %s %s %s: %s" % (r.get("scheme", r.get("rel")),
                      fmt_size(r.get("size", 0)), r.get("link"), r.get("error")), file=sys.stderr)
            continue
        scheme = r.get("scheme", r.get("rel"))
        key = (loss_of(r.get("link")), r["size"])
        cells.setdefault(key, {})[scheme] = r
    if not cells:
        print("grid.py: no usable run", file=sys.stderr)
        return 1
    fixed = sorted({s for c in cells.values() for s in c if model_name(a.model, s)},
                   key=lambda s: (s != "sr", s))
    has_auto = any("auto" in c for c in cells.values())
    any_run = next(iter(next(iter(cells.values())).values()))
    mtu, chunk = any_run["mtu"], any_run["mtu"] * any_run["chunk_pkts"]
    model_json = {}
    head = "| loss | size |"
    sep = "|---:|---:|"
    for s in fixed:
        head += " %s measured mean (p99) | model mean | meas/model |" % model_label(a.model, s)
        sep += "---:|---:|---:|"
    if has_auto:
        head += " AUTO measured mean (p99) | AUTO / best fixed | AUTO / worst fixed |"
        sep += "---:|---:|---:|"
    lines = [head, sep]
    out_json = []
    chart = {}
    for (loss, size) in sorted(cells):
        c = cells[(loss, size)]
        names = [model_name(a.model, s) for s in fixed]
        try:
            pred, model_json = predict(a.model, size, loss, a.rtt, a.rate, chunk, mtu, names,
                                       a.alpha)
        except ValueError as e:
            print("grid.py: sdr-model refused the cell (bad --rtt or --rate?): %s" % e,
                  file=sys.stderr)
            return 2
        row = "| %g | %s |" % (loss, fmt_size(size))
        means = {}
        rec = {"loss": loss, "size": size}
        for s in fixed:
            p = pred[model_name(a.model, s)]["mean_s"] * 1e3
            if s in c:
                m = c[s]["send_lat_mean_us"] / 1e3
                p99 = c[s]["send_lat_p99_us"] / 1e3
                means[s] = m
                row += " %.1f (%.1f) | %.1f | %.2f |" % (m, p99, p, m / p)
                rec[s] = {"mean_ms": m, "p99_ms": p99, "model_ms": p, "samples": c[s]["lat_samples"]}
                chart.setdefault(s, []).append((loss, size, m, p))
            else:
                row += " - | %.1f | - |" % p
                rec[s] = {"model_ms": p}
        if has_auto:
            if "auto" in c and means:
                m = c["auto"]["send_lat_mean_us"] / 1e3
                p99 = c["auto"]["send_lat_p99_us"] / 1e3
                best, worst = min(means.values()), max(means.values())
                row += " %.1f (%.1f) | %.2f | %.2f |" % (m, p99, m / best, m / worst)
                rec["auto"] = {"mean_ms": m, "p99_ms": p99, "vs_best": m / best,
                               "vs_worst": m / worst}
            else:
                row += " - | - | - |"
        lines.append(row)
        out_json.append(rec)
    text = "\n".join(lines)
    print(text)
    print("\n(model: RTT %s, injection %.4g bit/s of payload = %s of frames x %d/%d, chunk %d B,"
          " alpha %g; measured: sender completion, %s)"
          % (a.rtt, model_json.get("rate_bps", 0), a.rate, mtu, model_json.get("frame_bytes", 0),
             chunk, a.alpha, "post -> send completion"))
    if a.md:
        with open(a.md, "w", encoding="utf-8") as f:
            f.write(text + "\n")
    if a.json_out:
        with open(a.json_out, "w", encoding="utf-8") as f:
            for rec in out_json:
                f.write(json.dumps(rec) + "\n")
    if a.png and chart:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        losses = sorted({k[0] for k in cells})
        fig, axes = plt.subplots(1, len(losses), figsize=(5 * len(losses), 4), squeeze=False)
        for ax, loss in zip(axes[0], losses):
            for s, pts in sorted(chart.items()):
                pts = sorted(p for p in pts if p[0] == loss)
                if not pts:
                    continue
                xs = [p[1] for p in pts]
                ln, = ax.plot(xs, [p[2] for p in pts], "o-",
                              label="%s measured" % model_label(a.model, s))
                ax.plot(xs, [p[3] for p in pts], "--", color=ln.get_color(),
                        label="%s model" % model_label(a.model, s))
            if has_auto:
                pts = sorted((k[1], cells[k]["auto"]["send_lat_mean_us"] / 1e3)
                             for k in cells if k[0] == loss and "auto" in cells[k])
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], "k^:", label="AUTO measured")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("message size (bytes)")
            ax.set_ylabel("mean completion time (ms)")
            ax.set_title("loss %g" % loss)
            ax.grid(True, which="both", alpha=0.3)
        axes[0][0].legend(fontsize=7)
        fig.tight_layout()
        fig.savefig(a.png, dpi=a.dpi)
        print("wrote %s" % a.png, file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
