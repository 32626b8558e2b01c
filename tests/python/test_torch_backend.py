# SPDX-License-Identifier: BSD-3-Clause
"""The torch.distributed backend "sdr", 4 ranks (started by sdr.launch with
--place 0,1,0,1: ranks 0 and 2 on DPU A, 1 and 3 on DPU B), so that every
rank has cross-DPU peers (libsdr QPs) and one peer on its own DPU (unix
socket). Checks (docs/training.md): bit-exact send/recv/isend/irecv and
batch_isend_irecv with plain tensors (staged) and sdr.torch.empty() tensors
(zero copy), tensors split over several messages, non-contiguous tensors,
several dtypes, barrier, broadcast from every root, all_reduce (sum, max);
clear errors for unsupported calls, tags, any-source receives, a receive of
the wrong size or dtype; Work.wait(timeout) returns with ETIMEDOUT; a dead
peer raises (SR family: its DPU answers with QP-CLOSED, ECONNRESET; the
daemon's --global-timeout-ms, which the wrapper sets to 1500 ms, well
below the group's timeout, bounds a peer that goes silent instead)."""
import datetime
import errno
import os
import time

import torch
import torch.distributed as dist

import rankcheck
import sdr
import sdr.torch
from rankcheck import check

R, W = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
assert W == 4, "run with 4 ranks"
torch.manual_seed(0)


def expect(fn, exc, what, err=None, text=None):
    t0 = time.monotonic()
    try:
        fn()
    except exc as e:
        if err is not None:
            check(getattr(e, "errno", None) == err, f"{what}: errno {getattr(e, 'errno', None)}, "
                                                    f"want {errno.errorcode[err]} ({e})")
        if text is not None:
            check(text in str(e), f"{what}: '{text}' not in: {e}")
        print(f"rank {R}: {what}: raised as expected after {time.monotonic() - t0:.2f} s: {e}",
              flush=True)
        return e
    check(False, f"{what}: no exception")


def pattern(n, seed, dtype=torch.float32):
    g = torch.Generator().manual_seed(seed)
    if dtype.is_floating_point:
        return torch.randn(n, generator=g).to(dtype)
    if dtype == torch.bool:
        return torch.randint(0, 2, (n,), generator=g).bool()
    return torch.randint(-1000, 1000, (n,), generator=g).to(dtype)


opts = sdr.torch.Options(max_msg=1 << 20)   # 1 MiB messages: bigger tensors are split
dist.init_process_group("sdr", init_method="env://", rank=R, world_size=W,
                        timeout=datetime.timedelta(seconds=60), pg_options=opts)
pg = dist.distributed_c10d._get_default_group()
check(dist.get_backend() == "sdr", "backend name")
check(pg.local_peers() == [(R + 2) % 4], f"local peer on the same DPU: {pg.local_peers()}")
nxt, prv = (R + 1) % W, (R - 1) % W            # cross-DPU ring
loc = (R + 2) % W                              # same DPU

# ---- ring exchanges, every size class, plain (staged) and registered tensors
for n in (1, 1000, 300_000, 1 << 20):          # 4 MB float32: 4 messages of 1 MiB
    for zc in (False, True):
        for peer_to, peer_from in ((nxt, prv), (loc, loc)):
            seed_out, seed_in = 1000 * R + n, 1000 * peer_from + n
            out = pattern(n, seed_out)
            if zc:
                o2 = sdr.torch.empty(n)
                o2.copy_(out)
                out = o2
                inp = sdr.torch.zeros(n)
            else:
                inp = torch.zeros(n)
            rq = dist.irecv(inp, peer_from)
            sq = dist.isend(out, peer_to)
            sq.wait()
            rq.wait()
            check(torch.equal(inp, pattern(n, seed_in)),
                  f"isend/irecv n={n} zero-copy={zc} from {peer_from}")
check(pg.pool.locate(sdr.torch.empty(8).data_ptr(), 32) is not None,
      "sdr.torch.empty() lives in registered memory")

# blocking send / recv, several dtypes: on the ring even ranks send first,
# on the local pair the lower rank
for dt in (torch.int64, torch.float16, torch.bool, torch.float64, torch.uint8):
    a = pattern(777, 7 + R, dt)
    b = torch.zeros(777, dtype=dt)
    for peer in (nxt, loc):
        src = peer if peer == loc else prv
        if (R % 2 == 0) if peer != loc else (R < loc):
            dist.send(a, peer)
            dist.recv(b, src)
        else:
            dist.recv(b, src)
            dist.send(a, peer)
        check(torch.equal(b, pattern(777, 7 + src, dt)), f"send/recv {dt} via {peer}")

# non-contiguous tensors in both directions
m = pattern(64 * 48, 5 + R).view(64, 48)
got = torch.zeros(64, 48)
reqs = dist.batch_isend_irecv([dist.P2POp(dist.isend, m.t(), nxt),
                               dist.P2POp(dist.irecv, got.t(), prv)])
for q in reqs:
    q.wait()
check(torch.equal(got, pattern(64 * 48, 5 + prv).view(64, 48)), "non-contiguous")

# batch_isend_irecv with both neighbours and the local peer at once
ops, bufs = [], {}
for p in (nxt, prv, loc):
    ops.append(dist.P2POp(dist.isend, pattern(5000, 100 * R + p), p))
for p in (nxt, prv, loc):
    bufs[p] = torch.zeros(5000)
    ops.append(dist.P2POp(dist.irecv, bufs[p], p))
for q in dist.batch_isend_irecv(ops):
    q.wait()
for p in (nxt, prv, loc):
    check(torch.equal(bufs[p], pattern(5000, 100 * p + R)), f"batch from {p}")

# ---- collectives
for _ in range(3):
    dist.barrier()
for root in range(W):
    t = torch.full((3000,), float(R)) if R != root else pattern(3000, 42 + root)
    dist.broadcast(t, root)
    check(torch.equal(t, pattern(3000, 42 + root)), f"broadcast from {root}")
x = torch.arange(10000, dtype=torch.float32) * (R + 1)
dist.all_reduce(x)
check(torch.equal(x, torch.arange(10000, dtype=torch.float32) * 10), "all_reduce sum")
y = torch.tensor([R, -R, 7], dtype=torch.int64)
dist.all_reduce(y, op=dist.ReduceOp.MAX)
check(y.tolist() == [3, 0, 7], f"all_reduce max {y.tolist()}")
z = pattern(2 << 20, 9 + R)                    # 8 MiB: several messages per rank
w = dist.all_reduce(z, async_op=True)
w.wait()
ref = pattern(2 << 20, 9)
for p in range(1, W):
    ref += pattern(2 << 20, 9 + p)             # rank order, as the backend sums
check(torch.equal(z, ref), "all_reduce of 8 MiB, bit-identical to the rank-order sum")

# ---- a subgroup (its own contexts and QPs): ranks 1 and 2 (on two DPUs)
sub = dist.new_group([1, 2], backend="sdr")
if R in (1, 2):
    v = torch.full((100,), float(R))
    dist.all_reduce(v, group=sub)
    check(torch.equal(v, torch.full((100,), 3.0)), "all_reduce in a subgroup")
    w = pattern(300, 77 + R)
    got = torch.zeros(300)
    if R == 1:
        dist.send(w, 2, group=sub)              # global ranks, as the API takes them
        dist.recv(got, 2, group=sub)
    else:
        dist.recv(got, 1, group=sub)
        dist.send(w, 1, group=sub)
    check(torch.equal(got, pattern(300, 77 + (3 - R))), "send/recv in a subgroup")
dist.barrier()

# ---- clear errors for what is not supported
expect(lambda: dist.all_gather([torch.zeros(1)] * W, torch.zeros(1)), RuntimeError,
       "all_gather", text="not supported")
expect(lambda: dist.send(torch.zeros(1), nxt, tag=3), RuntimeError, "tag", text="tags")
expect(lambda: dist.recv(torch.zeros(1)), RuntimeError, "any-source recv", text="src")
expect(lambda: dist.send(torch.zeros(1), R), ValueError, "send to itself", text="itself")
dist.barrier()

# ---- bad input: wrong size and dtype (each breaks the pair it is on)
if R == 0:
    dist.send(torch.zeros(10), 1)                               # cross: smaller than posted
    dist.send(torch.zeros(10), 2)                               # local: smaller than posted
elif R == 1:
    expect(lambda: dist.recv(torch.zeros(20), 0), sdr.SdrError, "cross recv too big",
           errno.EMSGSIZE, "sent 40 bytes")
    expect(lambda: dist.recv(torch.zeros(10), 2), sdr.SdrError, "cross recv too small",
           errno.EMSGSIZE, "sent more than")
elif R == 2:
    expect(lambda: dist.recv(torch.zeros(20), 0), sdr.SdrError, "local recv too big",
           errno.EMSGSIZE, "sent 40 bytes")
    expect(lambda: dist.send(torch.zeros(20), 1), sdr.SdrError, "cross send too big",
           errno.EMSGSIZE, "smaller receive")
    dist.send(torch.zeros(4, dtype=torch.float32), 3)           # dtype mismatch, same size
elif R == 3:
    expect(lambda: dist.recv(torch.zeros(4, dtype=torch.int32), 2), sdr.SdrError,
           "cross recv of another dtype", errno.EBADMSG, "torch.float32")
dist.barrier()

# ---- Work.wait(timeout) returns; a dead peer raises
if R == 2:   # local peer 0 never sends
    w = dist.irecv(torch.zeros(8), 0)
    t0 = time.monotonic()
    expect(lambda: w.wait(datetime.timedelta(seconds=0.5)), sdr.SdrError, "wait(0.5 s)",
           errno.ETIMEDOUT, "not complete after 0.500 s")
    el = time.monotonic() - t0
    check(0.5 <= el < 30, f"wait(0.5 s) took {el:.2f} s")
dist.barrier()
if R == 3:
    print(f"rank 3: exiting without a word ({rankcheck.checks} checks passed)", flush=True)
    os._exit(0)
if R == 0:   # cross peer 3 is gone: its DPU's QP-CLOSED ends the send (docs/reliability.md
    # "Faults: link outages"): -ECONNRESET, or -ENOTCONN once the QP failed
    t0 = time.monotonic()
    e = expect(lambda: dist.send(torch.zeros(1000), 3), sdr.SdrError, "send to a dead peer")
    check(getattr(e, "errno", None) in (errno.ECONNRESET, errno.ENOTCONN),
          f"send to a dead peer: errno {getattr(e, 'errno', None)}, want ECONNRESET or ENOTCONN")
    check("not complete after" not in str(e), "ended by the daemon, not by the 60 s wait: " + str(e))
    check(time.monotonic() - t0 < 60, "raised before the group's timeout")
    expect(lambda: dist.send(torch.zeros(1000), 3), sdr.SdrError, "pair stays broken",
           text="broken")
if R == 1:   # local peer 3 is gone: its socket closed
    expect(lambda: dist.recv(torch.zeros(8), 3), sdr.SdrError, "recv from a dead local peer",
           text="rank 3")
print(f"rank {R}: {rankcheck.checks} checks passed", flush=True)
os._exit(0)   # rank 3 is gone: no barrier at exit
