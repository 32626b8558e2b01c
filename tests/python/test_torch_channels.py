# SPDX-License-Identifier: BSD-3-Clause
"""The torch.distributed backend "sdr" with Options.channels = 2 (started by
sdr.launch with 2 ranks, one per DPU, each DPU of two workers): a remote
peer's messages above one chunk travel on a QP of two channels (one per
worker), the others on the ordinary QP. Checks: bit-exact isend/irecv of
every size class both ways (below the threshold, above it, a tensor cut
into pieces of both kinds), all_reduce and broadcast of a tensor split over
several messages, that both kinds of QP carried messages, and that a
channel count out of range is refused."""
import datetime
import os

import torch
import torch.distributed as dist

import rankcheck
import sdr
import sdr.torch
from rankcheck import check

R, W = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
assert W == 2, "run with 2 ranks"


def pattern(n, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(-1000, 1000, (n,), generator=g).float()


try:
    sdr.torch.Options(channels=9)
    check(False, "channels=9 accepted")
except ValueError as e:
    check("channels 9" in str(e), f"channels=9: {e}")

opts = sdr.torch.Options(max_msg=1 << 20, channels=2)   # 1 MiB messages
check(opts.channels == 2, f"Options.channels {opts.channels}")
dist.init_process_group("sdr", init_method="env://", rank=R, world_size=W,
                        timeout=datetime.timedelta(seconds=60), pg_options=opts)
pg = dist.distributed_c10d._get_default_group()
peer = 1 - R
ch = pg._chans[peer]
check(ch.big and all(q.channels == 2 for q in ch.big.values()),
      "a QP of two channels per stream")
over = ch.big_over
check(over > 0, f"threshold {over} B")
# floats: below the threshold, just above it, 1 MiB pieces + a small tail
for n in (1, 1000, over // 4 + 1, 300_000, (1 << 20) + 7):
    for zc in (False, True):
        out = pattern(n, 100 * R + n)
        if zc:
            o2 = sdr.torch.empty(n)
            o2.copy_(out)
            out = o2
        inp = sdr.torch.zeros(n) if zc else torch.zeros(n)
        rq = dist.irecv(inp, peer)
        sq = dist.isend(out, peer)
        sq.wait()
        rq.wait()
        check(torch.equal(inp, pattern(n, 100 * peer + n)), f"isend/irecv n={n} zc={zc}")
check(ch.posts["big"] > 0 and ch.posts["small"] > 0,
      f"messages on both kinds of QP: {ch.posts}")
big0 = ch.posts["big"]
# collectives over the same peer (stream of the collectives)
x = pattern(1 << 19, 7 + R)
want = pattern(1 << 19, 7) + pattern(1 << 19, 8)
dist.all_reduce(x)
check(torch.equal(x, want), "all_reduce of 2 MiB (sum)")
b = pattern(400_000, 55) if R == 0 else torch.zeros(400_000)
dist.broadcast(b, 0)
check(torch.equal(b, pattern(400_000, 55)), "broadcast of 1.6 MB")
check(ch.posts["big"] > big0, f"collectives on the channel QP: {ch.posts}")
dist.barrier()
dist.destroy_process_group()
print(f"rank {R}: {rankcheck.checks} checks passed; posts {ch.posts}", flush=True)
