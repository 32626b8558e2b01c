#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""The figures of host/pipe/compete.sh: N sdr-pipe pipelines competing for one
link (docs/pipeline.md "Competing pipelines", docs/congestion.md). A host
tool beside sdr-pipe, no libsdr: it reads the two daemons' DPDK telemetry
(their own unix sockets) and the pipelines' outputs.

    compete.py sample --tel PREFIX_A --tel PREFIX_B --out samples.jsonl
        every --interval s (default 0.1), one JSON line of both daemons' link
        emulators (/sdr/link) and QPs (/sdr/qps), until SIGTERM or SIGINT

    compete.py report --dir DIR --pipes N --link SPEC [--flow-win S]
                      [--json F] [--png F]
        DIR holds samples.jsonl, starts (one 'K SECONDS' line per pipeline
        start), and per pipeline K its DC 0 output pK-a.out (sdr-pipe --json)
        and stderr pK-a.err (sdr-pipe --verbose: the QP numbers). Prints the
        report (text), writes it as one JSON line {"mode":"pipe-compete"} and
        the chart (PNG: per-pipeline rates over time, the queues, Jain's index
        per window).

Direction a->b is DC 0 to DC 1 (activations; daemon b's emulator is its
bottleneck), b->a the gradients (daemon a's). The steady state runs from
--warm after the last pipeline's start to the first pipeline's end. A
pipeline's goodput is the payload it moves across (sdr-pipe's bytes_cross
per iteration, both directions) per second of its iterations that ran
wholly in the steady state (their ends: sdr-pipe --verbose); its rates over
time are its QPs' received bytes per window (frames' payload,
retransmissions included) at the receiving daemons. Exit status 0, 1 when a pipeline failed or its QPs
were not found, 2 on bad input.
"""
import argparse
import json
import math
import os
import re
import signal
import socket
import sys
import time

LINK_KEYS = ("pkts_in", "ce_marked", "ect_in", "dropped_buffer", "dropped_loss", "backlog_bytes",
             "rate_bps_now")
QP_KEYS = ("rx_bytes", "tx_bytes", "cc_rate_bps", "cc_rx_pkts", "cc_rx_ce", "cc_dec_ecn",
           "cc_dec_delay", "cc_dec_loss", "cc_increases", "cc_srtt_us", "cc_base_rtt_us", "cc_acked",
           "cc_ce_echoed", "cc_ce")


# ---------------------------------------------------------------- sample

def tel_path(prefix):
    if os.geteuid() == 0:
        return "/var/run/dpdk/%s/dpdk_telemetry.v2" % prefix
    run = os.environ.get("XDG_RUNTIME_DIR") or "/tmp"
    return "%s/dpdk/%s/dpdk_telemetry.v2" % (run, prefix)


class Tel:
    """One DPDK telemetry v2 connection (SOCK_SEQPACKET: the daemon's hello,
    then one JSON answer per command)."""

    def __init__(self, prefix):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.s.settimeout(2.0)
        self.s.connect(tel_path(prefix))
        hello = json.loads(self.s.recv(4096).decode())
        self.max = int(hello.get("max_output_len", 16384))

    def get(self, cmd):
        self.s.send(cmd.encode())
        d = json.loads(self.s.recv(self.max).decode())
        return d.get(cmd.split(",")[0]) or {}


def sample(a):
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    signal.signal(signal.SIGINT, lambda *_: stop.append(1))
    tels, deadline = [None] * len(a.tel), time.time() + a.connect_timeout
    with open(a.out, "w") as out:
        while not stop:
            line = {"t": round(time.time(), 4)}
            for i, p in enumerate(a.tel):
                side = "ab"[i]
                try:
                    if tels[i] is None:
                        tels[i] = Tel(p)
                    ln = tels[i].get("/sdr/link,0")
                    qs = tels[i].get("/sdr/qps,0")
                except (OSError, ValueError):
                    tels[i] = None
                    if time.time() > deadline:
                        print("compete.py: no telemetry from daemon %s (prefix %s)" % (side, p),
                              file=sys.stderr)
                        return 1
                    continue
                line[side] = {
                    "link": {k: ln[k] for k in LINK_KEYS if k in ln},
                    "qps": {int(q[3:], 16): {k: v[k] for k in QP_KEYS if k in v}
                            for q, v in qs.items() if q.startswith("qp_0x")}}
                deadline = time.time() + a.connect_timeout
            out.write(json.dumps(line, separators=(",", ":")) + "\n")
            out.flush()
            time.sleep(a.interval)
    return 0


# ---------------------------------------------------------------- report

def size_of(s):
    m = re.fullmatch(r"([0-9.]+)\s*([kmgt]i?)?b?", s.strip().lower())
    if not m:
        raise ValueError("not a size: %s" % s)
    mult = {"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12, "ki": 1024, "mi": 1024 ** 2,
            "gi": 1024 ** 3}[m.group(2) or ""]
    return float(m.group(1)) * mult


def link_param(spec, key):
    for kv in spec.split(","):
        k, _, v = kv.partition("=")
        if k.strip() == key:
            return v
    return None


def jain(x):
    s, q = sum(x), sum(v * v for v in x)
    return s * s / (len(x) * q) if q > 0 and x else float("nan")


def pct(xs, p):
    if not xs:
        return float("nan")
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(math.ceil(p / 100.0 * len(xs))) - 1)]


QP_LINE = re.compile(r"^dc0: boundary (\d+)\|(\d+): QP 0x([0-9a-f]+), DC (\d+)'s QP 0x([0-9a-f]+)$")
IT_LINE = re.compile(r"^dc0: iteration (\d+) done at ([0-9.]+) \(unix time\)$")


def load_pipe(d, k):
    """DC 0's JSON report, its QPs (qpn on a, qpn on b) and the end times
    of its iterations, of pipeline k."""
    rep, qps, ends = None, [], []
    try:
        with open(os.path.join(d, "p%d-a.out" % k)) as f:
            for ln in f:
                if ln.startswith('{"mode":"run"'):
                    rep = json.loads(ln)
        with open(os.path.join(d, "p%d-a.err" % k)) as f:
            for ln in f:
                m = QP_LINE.match(ln.strip())
                if m and m.group(4) == "1":
                    qps.append((int(m.group(3), 16), int(m.group(5), 16)))
                m = IT_LINE.match(ln.strip())
                if m:
                    ends.append(float(m.group(2)))
    except OSError:
        pass
    return rep, qps, ends


def report(a):
    buf = size_of(link_param(a.link, "buffer") or "0") or float("nan")
    starts = {}
    with open(os.path.join(a.dir, "starts")) as f:
        for ln in f:
            k, t = ln.split()
            starts[int(k)] = float(t)
    smp = []
    with open(os.path.join(a.dir, "samples.jsonl")) as f:
        for ln in f:
            try:
                s = json.loads(ln)
            except ValueError:
                continue  # the last line, cut by the stop
            if "a" in s and "b" in s:
                smp.append(s)
    if len(smp) < 2:
        print("compete.py: fewer than 2 telemetry samples", file=sys.stderr)
        return 2
    t0 = min(starts.values())
    pipes, bad = [], 0
    for k in range(a.pipes):
        rep, qps, iends = load_pipe(a.dir, k)
        p = {"pipe": k, "start_s": round(starts.get(k, float("nan")) - t0, 3), "ok": rep is not None,
             "qps_a": [q[0] for q in qps], "qps_b": [q[1] for q in qps],
             "iter_end_s": [round(e - t0, 3) for e in iends]}
        if rep is None or not qps:
            bad += 1
            p["error"] = "no run report" if rep is None else "no QP numbers (sdr-pipe --verbose)"
        if rep:
            p["iter_ms"] = rep["meas_iter_ms"]
            p["iters"] = rep["iters"]
            p["bytes_cross"] = rep["bytes_cross"]
            p["payloads_verified"] = rep.get("payloads_verified", False)
        pipes.append(p)

    # the QPs' counters at each sample, per pipeline and direction (a->b is
    # received on b, by its QP there; b->a on a): a QP not there yet counts
    # 0, one that is gone keeps its last values
    last = {"a": {}, "b": {}}
    for s in smp:
        for side in "ab":
            last[side].update(s[side]["qps"])
            s[side]["qps"] = dict(last[side])

    def qv(s, side, qpn, key):
        return s[side]["qps"].get(str(qpn), {}).get(key, 0)

    def ce_frac(s, side, qs):
        pk = sum(qv(s, side, q, "cc_rx_pkts") for q in qs)
        return sum(qv(s, side, q, "cc_rx_ce") for q in qs) / pk if pk > 0 else None

    def rx(s, p):
        return (sum(qv(s, "b", q, "rx_bytes") for q in p["qps_b"]),
                sum(qv(s, "a", q, "rx_bytes") for q in p["qps_a"]))

    # per window: each pipeline's received payload rate (both directions)
    win = a.flow_win
    wins, w_end = [], smp[0]["t"] + win
    i0 = 0
    for i, s in enumerate(smp):
        if s["t"] >= w_end or i == len(smp) - 1:
            dt = s["t"] - smp[i0]["t"]
            if dt > 0:
                row = {"t_s": round(s["t"] - t0, 3), "rates_bps": [], "rates_ab_bps": [],
                       "rates_ba_bps": [], "cc_bps_ab": [],
                       "capacity_bps": s["b"]["link"].get("rate_bps_now")}
                for p in pipes:
                    r1, r0 = rx(s, p), rx(smp[i0], p)
                    d = [(x - y) for x, y in zip(r1, r0)]
                    row["rates_bps"].append(round((d[0] + d[1]) * 8 / dt))
                    row["rates_ab_bps"].append(round(d[0] * 8 / dt))
                    row["rates_ba_bps"].append(round(d[1] * 8 / dt))
                    row["cc_bps_ab"].append(sum(qv(s, "a", q, "cc_rate_bps") for q in p["qps_a"]))
                wins.append(row)
            i0, w_end = i, s["t"] + win

    # steady state: every pipeline running (after the last start, before
    # the first end of a pipeline, i.e. the first time its QPs' bytes stop)
    last_start = max(starts.values()) - t0
    ends = []
    for p in pipes:
        r = [sum(rx(s, p)) for s in smp]
        j = next((j for j in range(len(r) - 1, -1, -1) if r[j] < r[-1]), len(r) - 1)
        p["end_s"] = round(smp[min(j + 1, len(smp) - 1)]["t"] - t0, 3)
        ends.append(p["end_s"])
    first_end = min(ends) if ends else 0
    # a pipeline's goodput: its cross-DC payload per second over its
    # iterations that ran wholly in the steady state (all pipelines running)
    for p in pipes:
        e = p["iter_end_s"]
        its = [(e[i - 1], e[i]) for i in range(1, len(e))
               if e[i - 1] >= last_start + a.warm and e[i] <= first_end]
        p["steady_iters"] = len(its)
        p["goodput_bps"] = (p.get("bytes_cross", 0) * 8 * len(its) / sum(y - x for x, y in its)
                            if its else None)
    steady = [w for w in wins if w["t_s"] - win >= last_start + a.warm and w["t_s"] <= first_end]
    for w in wins:
        w["jain"] = round(jain(w["rates_bps"]), 4) if all(r > 0 for r in w["rates_bps"]) else None
    jains = [w["jain"] for w in steady if w["jain"] is not None]

    # the bottleneck of each direction, over the whole run
    def link(side):
        l0, l1 = smp[0][side]["link"], smp[-1][side]["link"]
        d = {k: l1.get(k, 0) - l0.get(k, 0) for k in ("pkts_in", "ce_marked", "ect_in",
                                                      "dropped_buffer", "dropped_loss")}
        q = [s[side]["link"].get("backlog_bytes", 0) for s in smp]
        # (no ECN-capable frame - the controller off - is no fraction: None)
        return {"frames": d["pkts_in"], "ce_marked": d["ce_marked"], "ect": d["ect_in"],
                "ce_frac": d["ce_marked"] / d["ect_in"] if d["ect_in"] else None,
                "dropped_buffer": d["dropped_buffer"],
                "drop_frac": d["dropped_buffer"] / d["pkts_in"] if d["pkts_in"] else 0.0,
                "queue_p50_bytes": pct(q, 50), "queue_p99_bytes": pct(q, 99),
                "queue_max_bytes": max(q), "queue_p99_of_buffer": pct(q, 99) / buf}

    links = {"ab": link("b"), "ba": link("a")}
    for k in ("ab", "ba"):
        u = [sum(w["rates_%s_bps" % k]) / w["capacity_bps"] for w in steady if w["capacity_bps"]]
        links[k]["steady_rx_of_capacity"] = round(sum(u) / len(u), 4) if u else None
    for p in pipes:
        s = smp[-1]
        p["ce_frac_ab"] = ce_frac(s, "b", p["qps_b"]) if links["ab"]["ect"] else None
        p["ce_frac_ba"] = ce_frac(s, "a", p["qps_a"]) if links["ba"]["ect"] else None
        p["cuts_ecn_delay_loss"] = [sum(qv(s, side, q, key) for side, qs in
                                        (("a", p["qps_a"]), ("b", p["qps_b"])) for q in qs)
                                    for key in ("cc_dec_ecn", "cc_dec_delay", "cc_dec_loss")]
        p["rx_bytes_ab"], p["rx_bytes_ba"] = rx(s, p)
        st = [w["rates_bps"][p["pipe"]] for w in steady]
        p["steady_rx_bps"] = sum(st) / len(st) if st else None
    gp = [p["goodput_bps"] for p in pipes if p["goodput_bps"] is not None]
    if len(gp) < len(pipes):
        print("compete.py: %d pipeline(s) finished no iteration in the steady state: Jain's index "
              "of the goodputs over the others" % (len(pipes) - len(gp)), file=sys.stderr)
    res = {"mode": "pipe-compete", "pipes": a.pipes, "link": a.link, "flow_win_s": win,
           "steady_s": [round(last_start + a.warm, 3), round(first_end, 3)],
           "jain_goodput": round(jain(gp), 4) if gp else None,
           "jain_steady_min": min(jains) if jains else None,
           "jain_steady_mean": round(sum(jains) / len(jains), 4) if jains else None,
           "steady_windows": len(steady), "links": links, "per_pipe": pipes, "windows": wins,
           "queue_ab": [[round(s["t"] - t0, 2), s["b"]["link"].get("backlog_bytes", 0)]
                        for s in smp]}
    print("pipelines: %d on %s" % (a.pipes, a.link))
    for p in pipes:
        if not p["ok"]:
            print("  pipe %d: FAILED (%s)" % (p["pipe"], p.get("error")))
            continue
        ce = p["ce_frac_ab"]
        print("  pipe %d: start %5.1f s, %d iterations (median %.1f ms), %d in the steady state: "
              "goodput %s Mbit/s, received %s Mbit/s, CE %s, cuts ecn/delay/loss %s" %
              (p["pipe"], p["start_s"], p["iters"], p["iter_ms"], p["steady_iters"],
               "%.1f" % (p["goodput_bps"] / 1e6) if p["goodput_bps"] else "-",
               "%.1f" % (p["steady_rx_bps"] / 1e6) if p["steady_rx_bps"] else "-",
               "%.4f" % ce if ce is not None else "-",
               "/".join("%.0f" % c for c in p["cuts_ecn_delay_loss"])))
    print("Jain's index: of the goodputs %s; per %g s window in the steady state "
          "(%.1f-%.1f s, %d windows) min %s mean %s" %
          (res["jain_goodput"], win, res["steady_s"][0], res["steady_s"][1], len(steady),
           res["jain_steady_min"], res["jain_steady_mean"]))
    for k, name in (("ab", "a->b (DC 0 to DC 1)"), ("ba", "b->a")):
        ln = links[k]
        u = ln["steady_rx_of_capacity"]
        print("  bottleneck %s: steady %s of its capacity received, frames %d, CE %s,"
              " dropped_buffer %d (%.2e), queue p50 %.0f p99 %.0f max %.0f bytes (p99 %.1f %% of"
              " the buffer)" %
              (name, "%.1f %%" % (100 * u) if u is not None else "-", ln["frames"],
               "%.4f of ECT" % ln["ce_frac"] if ln["ce_frac"] is not None
               else "- (no ECN-capable frame)",
               ln["dropped_buffer"], ln["drop_frac"],
               ln["queue_p50_bytes"], ln["queue_p99_bytes"], ln["queue_max_bytes"],
               100 * ln["queue_p99_of_buffer"]))
    if a.json:
        with open(a.json, "w") as f:
            f.write(json.dumps(res) + "\n")
    if a.png:
        chart(res, a.png)
    return 1 if bad else 0


def chart(res, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    w = res["windows"]
    t = [x["t_s"] for x in w]
    fig, ax = plt.subplots(3, 1, figsize=(9, 8), sharex=True,
                           gridspec_kw={"height_ratios": [3, 1.3, 1]})
    for k in range(res["pipes"]):
        ln, = ax[0].plot(t, [x["rates_ab_bps"][k] / 1e6 for x in w], label="pipe %d received" % k)
        ax[0].plot(t, [x["cc_bps_ab"][k] / 1e6 for x in w], ":", color=ln.get_color(),
                   label="pipe %d controller" % k)
    ax[0].plot(t, [(x["capacity_bps"] or 0) / 1e6 for x in w], "k--", label="link capacity")
    ax[0].set_ylabel("a->b Mbit/s")
    ax[0].set_title("%d sdr-pipe pipelines on %s: DC 0 to DC 1 (activations)"
                    % (res["pipes"], res["link"]), fontsize=9)
    ax[0].legend(fontsize=7, ncol=2)
    ax[1].plot([q[0] for q in res["queue_ab"]], [q[1] / 1e3 for q in res["queue_ab"]],
               color="tab:red", lw=0.8)
    ax[1].set_ylabel("queue a->b (KB)")
    ax[2].plot(t, [x["jain"] if x["jain"] is not None else float("nan") for x in w], "o-")
    ax[2].set_ylim(0, 1.05)
    ax[2].set_ylabel("Jain (both\ndirections)")
    ax[2].set_xlabel("s since the first pipeline's start")
    for a in ax:
        a.axvspan(res["steady_s"][0], res["steady_s"][1], color="0.9", zorder=0)
        a.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter,
                                 epilog=__doc__.split("\n\n", 1)[1])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sample", help="sample the daemons' telemetry")
    s.add_argument("--tel", action="append", required=True,
                   help="EAL file prefix of daemon a, then of b")
    s.add_argument("--out", required=True)
    s.add_argument("--interval", type=float, default=0.1)
    s.add_argument("--connect-timeout", type=float, default=20.0,
                   help="give up when a daemon answers nothing for this long (s)")
    r = sub.add_parser("report", help="the figures and the chart")
    r.add_argument("--dir", required=True)
    r.add_argument("--pipes", type=int, required=True)
    r.add_argument("--link", required=True, help="the emulator's spec (its buffer=)")
    r.add_argument("--flow-win", type=float, default=1.0, help="window of the rates (s)")
    r.add_argument("--warm", type=float, default=1.0,
                   help="seconds after the last start left out of the steady state")
    r.add_argument("--json")
    r.add_argument("--png")
    a = ap.parse_args()
    if a.cmd == "sample":
        if len(a.tel) != 2:
            ap.error("sample: --tel twice (daemon a, daemon b)")
        return sample(a)
    try:
        return report(a)
    except (OSError, ValueError, KeyError) as e:
        print("compete.py: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
