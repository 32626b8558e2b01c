# SPDX-License-Identifier: BSD-3-Clause
"""Pipeline-parallel training of the character-level GPT (charlm.py) over
torch.distributed, one rank per stage, with a schedule of sdr-pipe
(sdr.pipeline). Run one process per stage (python3 -m sdr.launch sets RANK,
WORLD_SIZE, MASTER_ADDR/PORT and SDR_DPU):

    python3 -m sdr.launch --ranks 4 --place 0,0,1,1 --dpu A.sock,B.sock -- \\
        host/python/train/train_pipe.py --sched 1f1b --iters 20 --verify

Per iteration: every rank waits for a common start time (rank 0 sets it in
PyTorch's store: all ranks share one machine's CLOCK_MONOTONIC), runs its
stage's program, steps AdamW. Iteration time = from the start to the end of
the last compute op of any stage (optimizer step excluded), as sdr-pipe
measures it. After the run rank 0 prints the measured median iteration time
(iterations 1..N-1) next to sdr-pipe's DES prediction fed with the measured
median per-stage F and B times, the link's --rtt / --rate and the
activation size. --verify: rank 0 then runs the same micro-batches in one
process (the reference) and compares every parameter bit for bit and the
loss curves side by side; exit status 1 if anything differs.
"""
import argparse
import datetime
import json
import os
import statistics
import sys
import tempfile
import time

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import charlm  # noqa: E402
from sdr import pipeline  # noqa: E402


def sync(dev):
    if dev.type == "cuda":
        torch.cuda.synchronize(dev)


def parse_time(s):
    s = str(s)
    for suf, mul in (("ms", 1e-3), ("us", 1e-6), ("s", 1.0)):
        if s.endswith(suf):
            return float(s[:-len(suf)]) * mul
    return float(s)


def parse_rate(s):
    s = str(s).lower()
    for suf, mul in (("g", 1e9), ("m", 1e6), ("k", 1e3)):
        if s.endswith(suf):
            return float(s[:-1]) * mul
    return float(s)


def parse_place(s, stages):
    v = [int(x) for x in s.split(",")]
    if len(v) == 2 and stages != 2 and sum(v) == stages:   # "A,B": stages per DC
        return [0] * v[0] + [1] * v[1]
    if len(v) != stages or any(d not in (0, 1) for d in v):
        raise SystemExit(f"--place '{s}': want 'A,B' (stages per DC) or the DC of each of the "
                         f"{stages} stages")
    return v


def args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--backend", default="sdr", help="sdr (default) or gloo")
    ap.add_argument("--sched", default="1f1b", choices=pipeline.SCHEDULES)
    ap.add_argument("--comm", default=None, choices=["blocking", "nonblocking"],
                    help="sdr-pipe --comm (default: gpipe/1f1b blocking, others non-blocking)")
    ap.add_argument("--delta-n", type=int, default=None, help="GeoPipe extra warm-up forwards "
                    "(default: sdr-pipe's rule from RTT, sizes and the measured times)")
    ap.add_argument("--place", default=None, help="'A,B' stages per DC or the DC of each stage "
                    "(default: half and half)")
    ap.add_argument("--micro", type=int, default=4, help="micro-batches per iteration")
    ap.add_argument("--mb", type=int, default=4, help="sequences per micro-batch")
    ap.add_argument("--seq", type=int, default=64, help="context length (characters)")
    ap.add_argument("--dim", type=int, default=64, help="model width")
    ap.add_argument("--heads", type=int, default=4, help="attention heads")
    ap.add_argument("--layers", type=int, default=4, help="transformer blocks (>= stages)")
    ap.add_argument("--iters", type=int, default=10, help="training iterations")
    ap.add_argument("--lr", type=float, default=3e-3, help="AdamW learning rate")
    ap.add_argument("--seed", type=int, default=1234, help="initialisation and data seed")
    ap.add_argument("--text", default=charlm.DEFAULT_TEXT, help="training text")
    ap.add_argument("--threads", type=int, default=1, help="torch threads per rank")
    ap.add_argument("--device", default="cpu", help="cpu (default) or cuda[:N]: the model, "
                    "activations and gradients on that device (CUDA tensors over the "
                    "backend); the reference runs on it too")
    ap.add_argument("--rtt", default="0", help="round trip of the emulated link, for the "
                    "schedule's cost model and the prediction (e.g. 25ms)")
    ap.add_argument("--rate", default="1g", help="bottleneck rate of the link (bit/s, k/m/g)")
    ap.add_argument("--rel", default=None, help="reliability the prediction assumes (none, sr, "
                    "ec..., auto); default $SDR_REL for sdr (auto if unset), none for gloo")
    ap.add_argument("--timeout", type=float, default=120, help="process group timeout (s)")
    ap.add_argument("--verify", action="store_true", help="rank 0 compares every parameter "
                    "with a one-process run of the same micro-batches")
    ap.add_argument("--out", default=None, help="directory for stage parameters and "
                    "result.json (default: a temporary directory)")
    ap.add_argument("--json", action="store_true", help="rank 0 prints the result as one JSON "
                    "line")
    ap.add_argument("--quiet", action="store_true", help="no per-iteration lines")
    ap.add_argument("--meta", default=None, help="a JSON object merged into result.json "
                    "(labels of a benchmark run)")
    return ap.parse_args()


def main():
    a = args()
    rank, world = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
    torch.set_num_threads(a.threads)
    torch.use_deterministic_algorithms(True)
    dev = torch.device(a.device)
    if dev.type == "cuda":
        # bit-identical runs on a GPU: deterministic kernels (the cuBLAS
        # workspace setting must be in the environment before CUDA starts),
        # no TF32, no cuDNN autotuning
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        torch.backends.cuda.matmul.allow_tf32 = False
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
        # attention through the math kernels: the fused ones (flash, memory
        # efficient, cuDNN) have non-deterministic backward passes
        for name in ("enable_flash_sdp", "enable_mem_efficient_sdp", "enable_cudnn_sdp"):
            if hasattr(torch.backends.cuda, name):
                getattr(torch.backends.cuda, name)(False)
        torch.cuda.set_device(dev)
    S = world
    if S < 2:
        raise SystemExit("train_pipe: needs at least 2 ranks (one per stage)")
    place = parse_place(a.place, S) if a.place else [0 if s < S // 2 else 1 for s in range(S)]
    cfg = charlm.Config(text=a.text, dim=a.dim, heads=a.heads, layers=a.layers, seq=a.seq,
                        mb=a.mb, micro=a.micro, lr=a.lr, seed=a.seed)
    rel = a.rel or (os.environ.get("SDR_REL") or "auto" if a.backend == "sdr" else "none")
    rtt, rate = parse_time(a.rtt), parse_rate(a.rate)
    if a.backend == "sdr":
        import sdr.torch  # noqa: F401  registers the backend
    dist.init_process_group(a.backend, init_method="env://", rank=rank, world_size=world,
                            timeout=datetime.timedelta(seconds=a.timeout))
    store = dist.distributed_c10d._get_default_store()
    data = charlm.Data(cfg.text)
    names = charlm.stage_pieces(cfg, S)[rank]
    part = charlm.Part([(n, m) for n, m in charlm.build_pieces(cfg, data.vocab)
                        if n in names]).to(dev)
    last = rank == S - 1
    act_shape = (cfg.mb, cfg.seq, cfg.dim)
    act_bytes = cfg.mb * cfg.seq * cfg.dim * 4

    # per-stage compute times for the schedule: a few F+B on iteration 0's
    # shapes (gradients discarded), then rank 0 compiles the schedule
    x0, y0 = (t.to(dev) for t in data.micro_batch(cfg, 0, 0))
    tf, tb = [], []
    for _ in range(3):
        inp = x0 if rank == 0 else torch.randn(act_shape, device=dev, requires_grad=True)
        t = time.monotonic()
        out = part(inp)
        sync(dev)
        t1 = time.monotonic()
        (charlm.loss_fn(out, y0) if last else out.sum()).backward()
        sync(dev)
        t2 = time.monotonic()
        tf.append(t1 - t)
        tb.append(t2 - t1)
    for p in part.parameters():
        p.grad = None
    store.set(f"warm/{rank}", json.dumps([statistics.median(tf), statistics.median(tb)]))
    if rank == 0:
        w = [json.loads(store.get(f"warm/{s}")) for s in range(S)]
        sch = pipeline.schedule(a.sched, S, cfg.micro, place=place, tf=w[0][0], tb=w[0][1],
                                tf_stage=[x[0] for x in w], tb_stage=[x[1] for x in w],
                                act_bytes=act_bytes, rtt=rtt, rate_bps=rate, rel=rel,
                                comm=a.comm, delta_n=a.delta_n)
        store.set("schedule", sch.to_json())
    sch = pipeline.Schedule.from_json(store.get("schedule").decode())
    stage = pipeline.Stage(sch, rank, part, act_shape, loss_fn=charlm.loss_fn if last else None,
                           device=dev if dev.type != "cpu" else None)
    opt = charlm.optimizer(cfg, part.parameters())
    if rank == 0 and not a.quiet:
        print(f"train_pipe: {a.backend} backend, {sch.sched} ({sch.comm}), {S} stages "
              f"(DCs {place}), {cfg.micro} micro-batches of {cfg.mb}x{cfg.seq} chars, "
              f"dim {cfg.dim}, {cfg.layers} layers, vocab {data.vocab}, "
              f"activation {act_bytes} B, delta_n {sch.delta_n}", flush=True)

    results = []
    for it in range(a.iters):
        mbs = [tuple(t.to(dev) for t in data.micro_batch(cfg, it, m)) for m in range(cfg.micro)]
        store.set(f"it/{it}/ready/{rank}", "1")
        if rank == 0:
            for s in range(S):
                store.get(f"it/{it}/ready/{s}")
            store.set(f"it/{it}/start", repr(time.monotonic() + 0.02))
        start = float(store.get(f"it/{it}/start").decode())
        while time.monotonic() < start:
            time.sleep(min(0.001, max(0.0, start - time.monotonic())))
        res = stage.run([x for x, _ in mbs] if rank == 0 else None,
                        [y for _, y in mbs] if last else None, t0=start)
        opt.step()
        opt.zero_grad(set_to_none=True)
        sync(dev)
        rep = {"end": res["end"], "tf": res["tf"], "tb": res["tb"]}
        if last:
            rep["loss"] = float(torch.stack([x.detach() for x in res["losses"]]).sum())
        store.set(f"it/{it}/res/{rank}", json.dumps(rep))
        if rank == 0:
            r = [json.loads(store.get(f"it/{it}/res/{s}")) for s in range(S)]
            row = {"iter": it, "loss": r[-1]["loss"], "iter_ms": max(x["end"] for x in r) * 1e3,
                   "tf_ms": [x["tf"] * 1e3 for x in r], "tb_ms": [x["tb"] * 1e3 for x in r]}
            results.append(row)
            if not a.quiet:
                print(f"iter {it:3d}  loss {row['loss']:.6f}  iteration {row['iter_ms']:8.1f} ms",
                      flush=True)

    out = a.out
    if out is None:
        if rank == 0:
            store.set("outdir", tempfile.mkdtemp(prefix="train-pipe-"))
        out = store.get("outdir").decode()
    os.makedirs(out, exist_ok=True)
    torch.save(part.flat_state(), os.path.join(out, f"stage{rank}.pt"))
    store.set(f"saved/{rank}", "1")
    rc = 0
    if rank == 0:
        for s in range(S):
            store.get(f"saved/{s}")
        rc = report(a, cfg, data, sch, place, rel, rtt, rate, act_bytes, results, out, S)
        store.set("verdict", str(rc))
    rc = int(store.get("verdict").decode())
    dist.barrier()
    dist.destroy_process_group()
    return rc


def report(a, cfg, data, sch, place, rel, rtt, rate, act_bytes, results, out, S):
    stats = results[1:] if len(results) > 1 else results
    meas = statistics.median(r["iter_ms"] for r in stats)
    tf = [statistics.median(r["tf_ms"][s] for r in stats) / 1e3 for s in range(S)]
    tb = [statistics.median(r["tb_ms"][s] for r in stats) / 1e3 for s in range(S)]
    pred = pipeline.schedule(a.sched, S, cfg.micro, place=place, tf=tf[0], tb=tb[0], tf_stage=tf,
                             tb_stage=tb, act_bytes=act_bytes, rtt=rtt, rate_bps=rate, rel=rel,
                             comm=a.comm, delta_n=a.delta_n)
    res = {"device": a.device, "backend": a.backend,
           "rel": rel if a.backend == "sdr" else "tcp", "sched": sch.sched,
           "comm": sch.comm, "stages": S, "place": place, "micro": cfg.micro,
           "config": cfg.as_dict(), "act_bytes": act_bytes, "rtt_ms": rtt * 1e3,
           "rate_bps": rate, "iters": len(results), "losses": [r["loss"] for r in results],
           "iter_ms": [r["iter_ms"] for r in results], "meas_iter_ms": meas,
           "pred_iter_ms": pred.pred_iter_ms, "meas_over_pred": meas / pred.pred_iter_ms,
           "tf_ms_stage": [x * 1e3 for x in tf], "tb_ms_stage": [x * 1e3 for x in tb],
           "delta_n": sch.delta_n}
    if a.meta:
        res.update(json.loads(a.meta))
    rc = 0
    if a.verify:
        ref_losses, ref = charlm.reference(cfg, data, len(results), device=a.device)
        mine = {}
        for s in range(S):
            mine.update(torch.load(os.path.join(out, f"stage{s}.pt")))
        bad = [k for k in ref if k not in mine or not torch.equal(ref[k], mine[k])
               or ref[k].dtype != mine[k].dtype]
        extra = [k for k in mine if k not in ref]
        same_loss = all(x == y for x, y in zip(res["losses"], ref_losses))
        res.update({"ref_losses": ref_losses, "params": len(ref), "params_differ": bad + extra,
                    "bit_identical": not bad and not extra and same_loss})
        if not a.quiet:
            print("iter  pipeline loss         reference loss        equal")
            for i, (x, y) in enumerate(zip(res["losses"], ref_losses)):
                print(f"{i:4d}  {x:.17g}  {y:.17g}  {'yes' if x == y else 'NO'}")
        print(f"bit-identity: {len(ref) - len(bad)}/{len(ref)} parameters equal bit for bit "
              f"after {len(results)} iterations, loss curves "
              f"{'identical' if same_loss else 'DIFFER'}: "
              f"{'PASS' if res['bit_identical'] else 'FAIL'}"
              + (f" (differ: {', '.join((bad + extra)[:5])})" if bad or extra else ""),
              flush=True)
        rc = 0 if res["bit_identical"] else 1
    print(f"iteration time: measured {meas:.1f} ms (median of iterations "
          f"{1 if len(results) > 1 else 0}..{len(results) - 1}), sdr-pipe DES prediction "
          f"{pred.pred_iter_ms:.1f} ms with the measured per-stage F "
          f"[{', '.join(f'{x * 1e3:.1f}' for x in tf)}] ms and B "
          f"[{', '.join(f'{x * 1e3:.1f}' for x in tb)}] ms (measured/predicted "
          f"{meas / pred.pred_iter_ms:.3f})", flush=True)
    with open(os.path.join(out, "result.json"), "w") as f:
        json.dump(res, f)
    if a.json:
        print(json.dumps(res), flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
