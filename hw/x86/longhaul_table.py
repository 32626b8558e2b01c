#!/usr/bin/python3
# The table and chart of hw/x86/longhaul.sh (x86 rig, host side): reads the
# runs' logs (sdr-send's / longhaul_tcp.py's output) and the sending DPU's
# extra packets, prints one row per scheme and writes a PNG (matplotlib).
#   longhaul_table.py OUT.png MSGS DATA_PKTS NAME:SEND_LOG:EXTRA_PKTS ...
import re
import sys

png, msgs, data_pkts = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rows = []
for spec in sys.argv[4:]:
    name, log, extra = spec.split(":")
    text = open(log, errors="replace").read()
    # (one size: its own line; several: the line of them all)
    pat = r"send completion time, size %s: n (\d+) mean ([\d.]+) ms p50 ([\d.]+) ms p99 ([\d.]+) ms"
    m = re.search(pat % "all", text) or re.search(pat % r"\d+", text)
    r = re.search(r"receiver: (\d+) ok, (\d+) failed, (\d+) bytes, goodput ([\d.]+) Gbit/s", text)
    ok = int(r.group(1)) if r else 0
    rows.append({
        "name": name,
        "ok": ok, "lost": msgs - ok,
        "p50": float(m.group(3)) if m else float("nan"),
        "p99": float(m.group(4)) if m else float("nan"),
        "goodput": float(r.group(4)) * 1e3 if r else 0.0,
        "extra": (100.0 * int(extra) / data_pkts) if extra not in ("", "-") else None,
        "local": name.endswith("none"),
    })
print("%-22s %9s %10s %10s %15s %16s" % ("", "whole", "p50 ms", "p99 ms", "goodput Mbit/s",
                                         "extra packets"))
for x in rows:
    print("%-22s %4d/%-4d %10s %10s %15.0f %16s" % (
        x["name"], x["ok"], msgs,
        ("%.1f" % x["p50"]) + ("*" if x["local"] else ""),
        ("%.1f" % x["p99"]) + ("*" if x["local"] else ""),
        x["goodput"], "-" if x["extra"] is None else "%.1f %%" % x["extra"]))
if any(x["local"] for x in rows):
    none = next(x for x in rows if x["local"])
    print("* none: completion is local (the packets left the DPU); %d of %d messages arrived"
          " in part - lost for the application" % (none["lost"], msgs))
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("(no matplotlib: no chart; Debian package python3-matplotlib)")
    sys.exit(0)
fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4))
names = [x["name"] for x in rows]
xs = range(len(rows))
a1.bar([i - 0.2 for i in xs], [x["p50"] for x in rows], 0.4, label="p50")
a1.bar([i + 0.2 for i in xs], [x["p99"] for x in rows], 0.4, label="p99")
a1.set_xticks(list(xs), names, rotation=15)
a1.set_ylabel("message completion time (ms)")
a1.set_yscale("log")
a1.legend()
a2.bar(list(xs), [x["goodput"] for x in rows],
       color=["#bbbbbb" if x["local"] else "#4477aa" for x in rows])
for i, x in enumerate(rows):
    a2.text(i, x["goodput"], "%d/%d whole" % (x["ok"], msgs), ha="center", va="bottom",
            fontsize=8)
a2.set_xticks(list(xs), names, rotation=15)
a2.set_ylabel("goodput (Mbit/s, whole messages)")
fig.suptitle("1 MiB messages over 25 ms RTT, 1 Gbit/s, 1 % loss")
fig.tight_layout()
fig.savefig(png, dpi=110)
print("chart: " + png)
