# SPDX-License-Identifier: BSD-3-Clause
"""Overhead of the torch.distributed backend "sdr" over libsdr itself: the
time dist.send / dist.recv take to move one tensor of --size bytes between
two ranks on two DPUs, next to what `sdr-perf lat` measures for one message
of the same size on the same two daemons, in the same run (sdr-perf before
and after each torch run; the median of their p50s is the reference).

Both are one-way times on one clock (the processes share the machine's
CLOCK_MONOTONIC): sdr-perf from posting the send to the receive's
completion, the receive posted ahead; here from just before dist.send on
rank 0 to dist.recv returning on rank 1, rank 1 being inside dist.recv
(posted) before rank 0 sends. The tensors live in registered memory
(sdr.torch.empty: zero copy); --staged adds a run with plain tensors
(copied through a registered staging buffer).

    python3 host/python/bench/p2p_overhead.py --dpu-a A.sock --dpu-b B.sock \\
        [--size 4M] [--iters 200] [--rounds 3] [--rel none] [--staged] [--sdr-perf PATH]
        [--netns nsA,nsB --master ADDR]

Prints a table and one JSON line (ratio = torch median / sdr-perf median).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def parse_size(s):
    s = str(s).upper()
    for suf, mul in (("K", 1 << 10), ("M", 1 << 20), ("G", 1 << 30)):
        if s.endswith(suf):
            return int(float(s[:-1]) * mul)
    return int(s)


def rank_main():
    import torch
    import torch.distributed as dist
    import sdr.torch

    r = int(os.environ["RANK"])
    size, iters, staged = int(os.environ["P2P_SIZE"]), int(os.environ["P2P_ITERS"]), \
        os.environ.get("P2P_STAGED") == "1"
    torch.set_num_threads(1)
    dist.init_process_group("sdr", init_method="env://", rank=r, world_size=2)
    store = dist.distributed_c10d._get_default_store()
    n = size // 4
    t = torch.empty(n) if staged else sdr.torch.empty(n)
    t.fill_(float(r))
    tok = sdr.torch.zeros(1)
    warm = max(3, iters // 10)
    one_way, send_ret = [], []
    for i in range(warm + iters):
        if r == 1:
            dist.send(tok, 0)                # "about to receive"
            dist.recv(t, 0)
            t1 = time.monotonic()
            store.set(f"t1/{i}", repr(t1))
        else:
            dist.recv(tok, 1)
            time.sleep(0.003)                # rank 1 is inside dist.recv by now
            t0 = time.monotonic()
            dist.send(t, 1)
            t2 = time.monotonic()
            t1 = float(store.get(f"t1/{i}").decode())
            if i >= warm:
                one_way.append(t1 - t0)
                send_ret.append(t2 - t0)
    if r == 1:
        ok = bool((t == 0).all())
        store.set("ok", "1" if ok else "0")
    else:
        ok = store.get("ok").decode() == "1"
        print(json.dumps({"one_way_us": [x * 1e6 for x in one_way],
                          "send_return_us": [x * 1e6 for x in send_ret], "ok": ok}), flush=True)
    dist.barrier()
    dist.destroy_process_group()


def sdr_perf(a):
    cmd = [a.sdr_perf, "lat", "--rig", "attach", "--dpu-a", a.dpu_a, "--dpu-b", a.dpu_b,
           "--size", str(a.size), "--iters", str(a.iters), "--rel", a.rel, "--json-only"]
    r = subprocess.run(cmd, capture_output=True, text=True)
    line = [x for x in r.stdout.splitlines() if x.startswith("{")]
    if r.returncode != 0 or not line:
        raise SystemExit(f"sdr-perf failed ({' '.join(cmd)}):\n{r.stdout}{r.stderr}")
    j = json.loads(line[-1])
    return j


def torch_run(a, staged):
    env = dict(os.environ, P2P_SIZE=str(a.size), P2P_ITERS=str(a.iters),
               P2P_STAGED="1" if staged else "0", SDR_REL=a.rel)
    cmd = [sys.executable, "-m", "sdr.launch", "--ranks", "2", "--dpu", f"{a.dpu_a},{a.dpu_b}",
           "--timeout", "600"]
    if a.netns:
        cmd += ["--netns", a.netns, "--master", a.master]
    cmd += ["--", os.path.abspath(__file__), "--rank-mode"]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True)
    line = [x[5:] for x in r.stdout.splitlines() if x.startswith("[r0] {")]
    if r.returncode != 0 or not line:
        raise SystemExit(f"torch ranks failed:\n{r.stdout}{r.stderr}")
    j = json.loads(line[-1])
    if not j["ok"]:
        raise SystemExit("torch ranks: the received tensor is wrong")
    return j


def main():
    if "--rank-mode" in sys.argv:
        return rank_main()
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dpu-a", required=True, help="socket of DPU A (rank 0, sender)")
    ap.add_argument("--dpu-b", required=True, help="socket of DPU B (rank 1, receiver)")
    ap.add_argument("--size", type=parse_size, default=4 << 20, help="bytes (default 4M)")
    ap.add_argument("--iters", type=int, default=200, help="measured messages per run")
    ap.add_argument("--rel", default="none", help="reliability of both (none, sr, ...)")
    ap.add_argument("--staged", action="store_true", help="also plain (staged) tensors")
    ap.add_argument("--rounds", type=int, default=3, help="torch runs, each followed by an "
                    "sdr-perf run (default 3)")
    ap.add_argument("--sdr-perf", default=os.environ.get("SDR_PERF", "sdr-perf"),
                    help="sdr-perf binary (default $SDR_PERF, then PATH)")
    ap.add_argument("--netns", default=None, help="nsA,nsB: run the ranks in these namespaces")
    ap.add_argument("--master", default="127.0.0.1", help="rank 0's address (with --netns)")
    a = ap.parse_args()
    # alternate: sdr-perf, then (torch, sdr-perf) per round
    perf = [sdr_perf(a)]
    zc, st = [], []
    for _ in range(a.rounds):
        zc += torch_run(a, False)["one_way_us"]
        if a.staged:
            st += torch_run(a, True)["one_way_us"]
        perf.append(sdr_perf(a))
    ref = statistics.median(p["lat_p50_us"] for p in perf)
    out = {"size": a.size, "rel": a.rel, "iters": a.iters, "rounds": a.rounds,
           "sdr_perf_p50_us": [p["lat_p50_us"] for p in perf],
           "sdr_perf_mean_us": [p["lat_mean_us"] for p in perf],
           "sdr_perf_ref_us": ref,
           "torch_p50_us": statistics.median(zc), "torch_mean_us": statistics.mean(zc)}
    out["ratio"] = out["torch_p50_us"] / ref
    if st:
        out["staged_p50_us"] = statistics.median(st)
        out["staged_ratio"] = out["staged_p50_us"] / ref
    print(f"{a.size} B, rel {a.rel}, {a.rounds} rounds of {a.iters} messages (one-way, us):")
    print("  sdr-perf lat (libsdr)   p50 per run: "
          + ", ".join(f"{p['lat_p50_us']:.1f}" for p in perf) + f"   -> median {ref:.1f}")
    print(f"  dist.send -> dist.recv  p50 {out['torch_p50_us']:.1f}   mean "
          f"{out['torch_mean_us']:.1f}   (sdr.torch.empty tensors, zero copy)")
    if st:
        print(f"  dist.send -> dist.recv  p50 {out['staged_p50_us']:.1f}   "
              f"(plain tensors, staged copies)")
    print(f"  ratio torch / sdr-perf: {out['ratio']:.3f}"
          + (f" (staged {out['staged_ratio']:.3f})" if st else ""))
    print(json.dumps(out))


if __name__ == "__main__":
    sys.exit(main())
