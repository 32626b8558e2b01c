# SPDX-License-Identifier: BSD-3-Clause
"""One rank of the GPU check's NCCL parts (tests layer; run by
tests/gpu/run.sh under sdr.launch, 2 ranks on one GPU). Each rank claims
its own NCCL_HOSTID, so NCCL sees two hosts and must use its network
transport between them: the sdr plugin (NCCL_NET=sdr) or NCCL's Socket
transport (NCCL_NET=Socket), as run.sh says.

  --check: all_reduce (sum), broadcast (root 0) and send/recv both ways of
           CUDA float32 tensors of 1 KiB - 64 MiB, every element compared
           exactly with what it must be (integer values: sums are exact)
  --bench: all_reduce of 1 - 64 MiB, the median time of --iters runs
Rank 0 writes --json."""
import argparse
import json
import os
import statistics
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--iters", type=int, default=5)
    ap.add_argument("--json", required=True)
    ap.add_argument("--label", default="")
    a = ap.parse_args()
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    # before NCCL starts: each rank a host of its own
    os.environ["NCCL_HOSTID"] = f"sdr-gpu-check-host{rank}"
    import torch
    import torch.distributed as dist
    dev = torch.device("cuda", int(os.environ.get("SDR_GPU_DEVICE", "0")))
    torch.cuda.set_device(dev)
    dist.init_process_group("nccl", init_method="env://", rank=rank, world_size=world)
    res = {"label": a.label, "torch": torch.__version__,
           "nccl": ".".join(str(x) for x in torch.cuda.nccl.version()),
           "gpu": torch.cuda.get_device_name(dev), "checks": [], "bench": []}
    sizes = [1 << k for k in range(10, 27, 2)]   # 1 KiB, 4 KiB, ... 64 MiB
    bad = []
    if a.check:
        for n in sizes:
            e = n // 4
            base = (torch.arange(e, device=dev, dtype=torch.int64) % 1009).to(torch.float32)
            t0 = time.monotonic()
            x = base + 7 * rank
            dist.all_reduce(x)
            ok_ar = torch.equal(x, base * 2 + 7)
            y = base * 3 if rank == 0 else torch.zeros(e, device=dev)
            dist.broadcast(y, 0)
            ok_bc = torch.equal(y, base * 3)
            z = base + 11 if rank == 0 else torch.zeros(e, device=dev)
            if rank == 0:
                dist.send(z, 1)
                w = torch.zeros(e, device=dev)
                dist.recv(w, 1)
                ok_sr = torch.equal(w, base + 13)
            else:
                dist.recv(z, 0)
                ok_sr = torch.equal(z, base + 11)
                dist.send(base + 13, 0)
            torch.cuda.synchronize(dev)
            row = {"bytes": n, "all_reduce": ok_ar, "broadcast": ok_bc, "send_recv": ok_sr,
                   "seconds": time.monotonic() - t0}
            res["checks"].append(row)
            if not (ok_ar and ok_bc and ok_sr):
                bad.append(row)
            print(f"rank {rank}: {n} B: all_reduce {ok_ar}, broadcast {ok_bc}, "
                  f"send/recv {ok_sr}", flush=True)
    if a.bench:
        for n in [1 << k for k in range(20, 27)]:
            x = torch.ones(n // 4, device=dev)
            for _ in range(2):
                dist.all_reduce(x)
            torch.cuda.synchronize(dev)
            ts = []
            for _ in range(a.iters):
                dist.barrier()
                torch.cuda.synchronize(dev)
                t = time.monotonic()
                dist.all_reduce(x)
                torch.cuda.synchronize(dev)
                ts.append(time.monotonic() - t)
            med = statistics.median(ts)
            res["bench"].append({"bytes": n, "median_ms": med * 1e3,
                                 "algbw_gbps": n / med / 1e9})
            if rank == 0:
                print(f"{a.label}: all_reduce {n >> 20} MiB: {med * 1e3:.2f} ms, "
                      f"{n / med / 1e9:.2f} GB/s", flush=True)
    res["pass"] = not bad
    if rank == 0:
        with open(a.json, "w") as f:
            json.dump(res, f)
    dist.barrier()
    dist.destroy_process_group()
    if bad:
        print(f"rank {rank}: WRONG RESULTS: {bad}", flush=True)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
