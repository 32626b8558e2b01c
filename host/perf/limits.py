#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The tables of host/perf/limits.sh (docs/benchmarks.md §8) from its JSON
lines: limits.py OUT_DIR/limits.jsonl"""
import json
import statistics
import sys


def rate_bps(s):
    mult = {"k": 1e3, "m": 1e6, "g": 1e9}
    s = s.lower()
    return float(s[:-1]) * mult[s[-1]] if s[-1] in mult else float(s)


def arg(args, name):
    a = args.split()
    return a[a.index(name) + 1] if name in a else None


def main():
    runs = [json.loads(l) for l in open(sys.argv[1])]
    for x in runs:
        x.setdefault("side", "new")
    bad = [x for x in runs if x["run"].get("status") != "ok"]
    for x in bad:
        print("failed: %s %s %s: %s" % (x["side"], x["bench"], x["args"], x["run"].get("error")))
    olds = [x for x in runs if x["run"].get("status") == "ok" and x["side"] == "old"]
    ok = [x for x in runs if x["run"].get("status") == "ok" and x["side"] == "new"]

    rates = [x for x in ok if x["bench"] in ("rate_qp", "rate_port")]
    if rates:
        print("\n1 s windows (wire Gbit/s at the receiver) / the configured rate"
              " (earlier build: same run, right after):")
        print("| configured | paced by | windows / configured | all within 1 %? |"
              " earlier build | goodput per worker CPU-s, this / earlier |")
        print("|---|---|---|---|---|---|")
        for x in rates:
            r = x["run"]
            conf = rate_bps(arg(x["args"], "--rate") or arg(x["args"], "--port-rate"))
            w = [v * 1e9 / conf for v in r["win_wire_gbps"]]
            o = [y["run"] for y in olds if y["bench"] == x["bench"] and y["args"] == x["args"]]
            wo = [v * 1e9 / conf for v in o[0]["win_wire_gbps"]] if o else []
            ratio = (r["goodput_gbps_per_cpu"] / o[0]["goodput_gbps_per_cpu"]
                     if o and r.get("goodput_gbps_per_cpu") and o[0].get("goodput_gbps_per_cpu")
                     else float("nan"))
            print("| %s | %s | %s | %s | %s | %.2f |" % (
                arg(x["args"], "--rate") or arg(x["args"], "--port-rate"),
                "--rate" if x["bench"] == "rate_qp" else "--port-rate",
                " ".join("%.4f" % v for v in w) or "-",
                "yes" if w and all(abs(v - 1) <= 0.01 for v in w) else "no",
                " ".join("%.4f" % v for v in wo) or "-", ratio))

    onoff = [x for x in ok if x["bench"].startswith("onoff")]
    if onoff:
        print("\nOn/off traffic (64 KiB messages, 2 QPs, 500 us idle between a QP's sends):")
        print("| rate | --pace-burst | window (10 frame times) | peak, all windows | peak, after idle |"
              " messages |")
        print("|---|---|---|---|---|---|")
        for x in onoff:
            r = x["run"]
            print("| %s | %s | %.1f us | %.3f | %.3f | %d |" % (
                arg(x["args"], "--rate"),
                "1 frame (4174 B)" if x["bench"] == "onoff_strict" else "default",
                r["peak_window_us"], r["peak_rate"], r["peak_rate_after_idle"], r["msgs_ok"]))

    cost = {}
    for x in ok:
        if x["bench"] in ("cost_1", "cost_256"):
            cost.setdefault(x["bench"], []).append(x["run"])
    if len(cost) == 2:
        print("\nThe pacer's cost per worker loop, aggregate 2 Gbit/s (medians of %d rounds):"
              % min(len(v) for v in cost.values()))
        print("| paced QPs | pacer cycles / loop | frames / loop | QP visits / loop |"
              " wire Gbit/s |")
        print("|---|---|---|---|---|")
        med = {}
        for b in ("cost_1", "cost_256"):
            v = cost[b]
            med[b] = statistics.median(r["pace_cycles_per_poll"] for r in v)
            print("| %s | %.0f (%s) | %.2f | %.2f | %.3f |" % (
                b[5:], med[b], " ".join("%.0f" % r["pace_cycles_per_poll"] for r in v),
                statistics.median(r["pace_frames"] / r["worker_loops"] for r in v),
                statistics.median(r["qp_visits_per_loop"] for r in v),
                statistics.median(r["wire_gbps"] for r in v)))
        print("256 / 1: %.2f" % (med["cost_256"] / med["cost_1"]))

    scale, oscale = {}, {}
    for x in ok:
        if x["bench"] == "scale":
            r = x["run"]
            scale.setdefault((r["workers"], r.get("qps", 1)), []).append(r)
    for x in olds:
        if x["bench"] == "scale":
            oscale.setdefault(x["run"]["workers"], []).append(x["run"])
    if scale:
        print("\nQP and worker scaling (64 KiB messages, window 64; medians over rounds):")
        print("| workers | QP pairs | goodput Gbit/s per worker CPU-s | / 1 QP | wall Gbit/s |"
              " hand-offs per packet | QP set-up us | daemon KiB per QP (after run) |")
        print("|---|---|---|---|---|---|---|---|")
        for (w, q) in sorted(scale):
            v = scale[(w, q)]
            g = statistics.median(r["goodput_gbps_per_cpu"] for r in v)
            base = scale.get((w, 1))
            g1 = statistics.median(r["goodput_gbps_per_cpu"] for r in base) if base else float("nan")
            print("| %d | %d | %.2f (%s) | %.2f | %.2f | %.3f | %.0f | %.0f (%.0f) |" % (
                w, q, g, " ".join("%.2f" % r["goodput_gbps_per_cpu"] for r in v), g / g1,
                statistics.median(r["goodput_gbps"] for r in v),
                statistics.median(r["handoff_pkts"] / max(1, r["pkts"]) for r in v),
                statistics.median(r["qp_setup_us_per_qp"] for r in v),
                statistics.median(r["dpu_rss_kib_per_qp"] for r in v),
                statistics.median(r["dpu_rss_kib_per_qp_end"] for r in v)))
    for w, v in sorted(oscale.items()):
        g = statistics.median(r["goodput_gbps_per_cpu"] for r in v)
        n = statistics.median(r["goodput_gbps_per_cpu"] for r in scale.get((w, 1), [{"goodput_gbps_per_cpu": float("nan")}]))
        print("earlier build, %d worker(s), 1 QP pair: %.2f (%s) Gbit/s per worker CPU-s;"
              " this / earlier %.2f" % (w, g, " ".join("%.2f" % r["goodput_gbps_per_cpu"]
                                                       for r in v), n / g))
    return 0


if __name__ == "__main__":
    sys.exit(main())
