# SPDX-License-Identifier: BSD-3-Clause
"""Pipeline-parallel training with torch.distributed, executing the
schedules of sdr-pipe (host/pipe/pipe_sched.c): GPipe, blocking 1F1B,
GeoPipe-style non-blocking 1F1B with extra warm-up forwards, and the
CrossPipe-style greedy schedule. The schedules are not written again here:
``schedule()`` runs ``sdr-pipe --print-schedule`` and each stage executes its
program (compute F/B, post/wait receive/send) with dist.isend / dist.irecv /
dist.batch_isend_irecv, so the same code runs over the "sdr" backend and over
gloo. ``schedule(...).pred_iter_ms`` is sdr-pipe's discrete-event
prediction; give it the measured per-stage times (tf_stage, tb_stage).

    sch = schedule("1f1b", stages=4, micro=8, place=[0, 0, 1, 1], tf=0.01,
                   act_bytes=n, grad_bytes=n, rtt=0.025, rate_bps=1e9)
    st = Stage(sch, stage=rank, module=my_part, act_shape=(b, T, d),
               loss_fn=ce if last else None)
    res = st.run(inputs, targets)      # one iteration; then optimizer.step()
"""
import json
import os
import shutil
import subprocess
import time

import torch
import torch.distributed as dist

SCHEDULES = ("gpipe", "1f1b", "geopipe", "greedy")


def find_sdr_pipe():
    """The sdr-pipe command: $SDR_PIPE, the installed one (sdr/_paths.py),
    then PATH. Raises FileNotFoundError saying where it looked."""
    env = os.environ.get("SDR_PIPE")
    if env:
        if os.access(env, os.X_OK):
            return env
        raise FileNotFoundError(f"SDR_PIPE={env}: not an executable")
    tried = []
    try:
        from . import _paths
        p = os.path.join(_paths.BINDIR, "sdr-pipe")
        tried.append(p)
        if os.access(p, os.X_OK):
            return p
    except ImportError:
        pass
    p = shutil.which("sdr-pipe")
    if p:
        return p
    raise FileNotFoundError("sdr-pipe not found (tried " + ", ".join(tried + ["PATH"]) +
                            "); set SDR_PIPE to build/host/pipe/sdr-pipe")


def _ms(x):
    return f"{x * 1e3:.6f}ms"


class Schedule:
    """A schedule compiled by sdr-pipe: ``programs[s]`` is stage s's list of
    instructions (dicts: i = compute / post_recv / post_send / wait_recv /
    wait_send, op F/B, ch, m), ``channels[ch]`` has src/dst stage and kind
    (act/grad), ``pred_iter_ms`` the DES prediction."""

    def __init__(self, raw, argv):
        self.raw = raw
        self.argv = argv
        self.sched = raw["sched"]
        self.comm = raw["comm"]
        self.stages = raw["stages"]
        self.micro = raw["micro"]
        self.place = raw["place"]
        self.programs = raw["programs"]
        self.channels = {c["ch"]: c for c in raw["channels"]}
        self.pred_iter_ms = raw["pred_iter_ms"]
        self.pred_bubble = raw["pred_bubble"]
        self.delta_n = raw["delta_n"]

    def to_json(self):
        return json.dumps({"raw": self.raw, "argv": self.argv})

    @classmethod
    def from_json(cls, s):
        d = json.loads(s)
        return cls(d["raw"], d["argv"])


def schedule(sched, stages, micro, place=None, tf=0.01, tb=None, tf_stage=None, tb_stage=None,
             act_bytes=4096, grad_bytes=None, rtt=0.0, rate_bps=1e9, rel="none", comm=None,
             delta_n=None, mem_budget=None, sdr_pipe=None):
    """Compile ``sched`` with sdr-pipe --print-schedule. Times in seconds;
    ``place``: DC of each stage (default: first half DC 0); ``rel``: none,
    sr, ec[:rs:K:M] or auto (for the DES: SR-family sends complete when
    acknowledged). Raises ValueError with sdr-pipe's message."""
    if sched not in SCHEDULES:
        raise ValueError(f"schedule '{sched}': want one of {', '.join(SCHEDULES)}")
    tb = 2 * tf if tb is None else tb
    grad_bytes = act_bytes if grad_bytes is None else grad_bytes
    place = place or [0 if s < stages // 2 else 1 for s in range(stages)]
    if len(place) != stages:
        raise ValueError(f"place names {len(place)} stages, want {stages}")
    place = [int(d) for d in place]
    if place == sorted(place) and 0 < place.count(0) < stages:   # contiguous: "A,B"
        place_arg = f"{place.count(0)},{place.count(1)}"
    elif stages != 2:
        place_arg = ",".join(str(d) for d in place)
    else:
        raise ValueError(f"place {place}: sdr-pipe places 2 stages as one per DC, 0 then 1")
    argv = [sdr_pipe or find_sdr_pipe(), "--print-schedule", "--sched", sched,
            "--micro", str(micro), "--place", place_arg,
            "--tf", _ms(tf), "--tb", _ms(tb), "--act", str(int(act_bytes)),
            "--grad", str(int(grad_bytes)), "--rtt", _ms(rtt), "--rate", str(int(rate_bps)),
            "--rel", rel]
    if tf_stage is not None:
        argv += ["--tf-stage", ",".join(_ms(x) for x in tf_stage)]
    if tb_stage is not None:
        argv += ["--tb-stage", ",".join(_ms(x) for x in tb_stage)]
    if comm is not None:
        argv += ["--comm", comm]
    if delta_n is not None:
        argv += ["--delta-n", str(int(delta_n))]
    if mem_budget is not None:
        argv += ["--mem-budget", str(int(mem_budget))]
    r = subprocess.run(argv, capture_output=True, text=True)
    if r.returncode != 0:
        raise ValueError(f"sdr-pipe refused the schedule: {r.stderr.strip() or r.stdout.strip()}"
                         f" ({' '.join(argv)})")
    return Schedule(json.loads(r.stdout), argv)


class Stage:
    """One pipeline stage: executes its program of ``sch`` each iteration.

    module:    this stage's part of the model (input: stage 0 gets the
               micro-batch inputs, the others the activation of stage s-1)
    act_shape: shape of the activation between stages (and of its gradient)
    loss_fn:   last stage only: loss_fn(output, target) -> scalar; the
               stage back-propagates loss / micro
    ranks:     rank of each stage (default: rank s = stage s)
    alloc:     allocator of the communication buffers (default
               sdr.torch.empty, which is torch.empty unless the default group
               is the sdr backend: then the buffers are registered and
               receives land in them without a copy)
    device:    where the buffers live (default CPU); "cuda": device tensors,
               with pinned shadows under the sdr backend
    """

    def __init__(self, sch, stage, module, act_shape, act_dtype=torch.float32, loss_fn=None,
                 ranks=None, alloc=None, group=None, device=None):
        self.sch, self.s, self.module = sch, stage, module
        self.M = sch.micro
        self.S = sch.stages
        self.ranks = list(ranks) if ranks is not None else list(range(self.S))
        self.loss_fn = loss_fn
        self.group = group
        self.last = stage == self.S - 1
        if self.last and loss_fn is None:
            raise ValueError("the last stage needs a loss_fn")
        if alloc is None:
            from . import torch as sdr_torch
            alloc = lambda shape, dtype: sdr_torch.empty(*shape, dtype=dtype,  # noqa: E731
                                                         device=device)
        M = self.M
        self.act_in = [alloc(act_shape, act_dtype) for _ in range(M)] if stage > 0 else None
        self.grad_in = [alloc(act_shape, act_dtype) for _ in range(M)] if not self.last else None
        self.act_out = [alloc(act_shape, act_dtype) for _ in range(M)] if not self.last else None
        self.grad_out = [alloc(act_shape, act_dtype) for _ in range(M)] if stage > 0 else None
        self.prog = sch.programs[stage]
        for ins in self.prog:
            if ins["i"] != "compute":
                ch = sch.channels[ins["ch"]]
                if self.s not in (ch["src"], ch["dst"]):
                    raise ValueError(f"stage {stage}: instruction {ins} on a channel it is not on")

    def _buf(self, ch, m, send):
        c = self.sch.channels[ch]
        if c["kind"] == "act":
            return self.act_out[m] if send else self.act_in[m]
        return self.grad_out[m] if send else self.grad_in[m]

    def run(self, inputs=None, targets=None, t0=None):
        """One iteration. ``inputs[m]`` (stage 0) / ``targets[m]`` (last
        stage) per micro-batch. Gradients accumulate into the parameters in
        micro-batch order (every schedule runs B(s, m) in m order); the
        caller steps the optimizer. Returns a dict: losses (last stage: each
        loss / micro, as tensors), events (kind, op/ch, m, t0, t1 relative to
        ``t0``), compute time of F and B."""
        t0 = time.monotonic() if t0 is None else t0
        works = {}
        outs, inps, losses = [None] * self.M, [None] * self.M, [None] * self.M
        ev = []
        tF = tB = 0.0
        pending = []   # consecutive posts: one batch_isend_irecv

        def flush():
            if not pending:
                return
            if dist.get_backend(self.group) == "sdr":
                # the sdr backend posts in order as called: one Work per
                # operation (torch 2.x's batch_isend_irecv of CUDA tensors
                # would coalesce them into one)
                reqs = [p[1].op(p[1].tensor, p[1].peer, p[1].group, p[1].tag) for p in pending]
            else:
                reqs = dist.batch_isend_irecv([p[1] for p in pending])
            for (key, _), w in zip(pending, reqs):
                works[key] = w
            pending.clear()

        for ins in self.prog:
            kind = ins["i"]
            if kind in ("post_recv", "post_send"):
                ch, m = ins["ch"], ins["m"]
                send = kind == "post_send"
                c = self.sch.channels[ch]
                peer = self.ranks[c["dst"] if send else c["src"]]
                op = dist.P2POp(dist.isend if send else dist.irecv, self._buf(ch, m, send), peer,
                                group=self.group)
                pending.append(((kind[5:], ch, m), op))
                t = time.monotonic() - t0
                ev.append((kind, ch, m, t, t))
                continue
            flush()
            if kind in ("wait_recv", "wait_send"):
                key = (kind[5:], ins["ch"], ins["m"])
                a = time.monotonic()
                works.pop(key).wait()
                ev.append((kind, ins["ch"], ins["m"], a - t0, time.monotonic() - t0))
                continue
            m = ins["m"]
            a = time.monotonic()
            if ins["op"] == "F":
                if self.s == 0:
                    x = inputs[m]
                else:
                    x = self.act_in[m].detach().requires_grad_(True)
                out = self.module(x)
                if self.last:
                    losses[m] = self.loss_fn(out, targets[m]) / self.M
                else:
                    self.act_out[m].copy_(out.detach())
                    outs[m] = out
                inps[m] = x
                b = time.monotonic()
                tF += b - a
            else:
                if self.last:
                    losses[m].backward()
                else:
                    torch.autograd.backward(outs[m], self.grad_in[m])
                if self.s > 0:
                    self.grad_out[m].copy_(inps[m].grad)
                outs[m] = inps[m] = None
                b = time.monotonic()
                tB += b - a
            ev.append(("compute", ins["op"], m, a - t0, b - t0))
        flush()
        if works:
            raise RuntimeError(f"stage {self.s}: program left {len(works)} operation(s) unwaited")
        end = max(e[4] for e in ev if e[0] == "compute")
        return {"losses": losses if self.last else None, "events": ev, "tf": tF / self.M,
                "tb": tB / self.M, "end": end}
