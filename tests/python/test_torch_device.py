# SPDX-License-Identifier: BSD-3-Clause
"""The device (CUDA) staging path of the sdr backend without a GPU: a fake
device hook (tests layer, run by tests/python/torch_backend.sh under
sdr.launch, 2 ranks on 2 DPUs). Device tensors are CPU tensors the hook
calls device tensors; its copies run at once but its events complete only
after a few queries, so sends must wait for the device-to-host copy before
they post. Checks: point-to-point of device tensors of several sizes
bit-exact (pool staging and the pinned shadows of sdr.torch.empty(device=)),
every staging arena pinned once and unpinned at the end, the host-to-device
copy done at wait(), all_reduce and broadcast of device tensors."""
import os
import sys

import torch
import torch.distributed as dist

import sdr.torch as st


class FakeEvent:
    def __init__(self, log):
        self.left = 3
        log.append(self)

    def query(self):
        self.left -= 1
        return self.left <= 0


class FakeHooks:
    def __init__(self):
        self.pinned, self.unpinned, self.events, self.h2d_calls = [], [], [], 0

    def is_device(self, t):
        return getattr(t, "_fake_dev", False)

    def pin(self, addr, n):
        self.pinned.append((addr, n))

    def unpin(self, addr):
        self.unpinned.append(addr)

    def d2h(self, dst, src):
        dst.copy_(src)
        return FakeEvent(self.events)   # sends: posted only once this completed

    def h2d(self, dst, src):
        dst.copy_(src)
        self.h2d_calls += 1
        return FakeEvent([])

    def to_host(self, t):
        return t.detach().clone()

    def empty(self, shape, dtype, device):
        t = torch.empty(shape, dtype=dtype)
        t._fake_dev = True
        return t


def dev(t):
    t._fake_dev = True
    return t


def main():
    hooks = FakeHooks()
    st._set_device_hooks(hooks)
    rank = int(os.environ["RANK"])
    dist.init_process_group("sdr", init_method="env://", rank=rank, world_size=2)
    pg = st._sdr_group(None)
    assert pg is not None, "no sdr group behind the default group"
    peer = 1 - rank
    for n in (1, 7, 4096, 65537, 1 << 20):
        want = torch.arange(n, dtype=torch.int32) * (3 + n % 5)
        if rank == 0:
            dist.send(dev(want.clone()), peer)
        else:
            got = dev(torch.zeros(n, dtype=torch.int32))
            before = hooks.h2d_calls
            dist.recv(got, peer)
            assert hooks.h2d_calls == before + 1, "receive not copied to the device at wait()"
            assert torch.equal(got, want), f"{n} int32: wrong data"
    # shadows: sdr.torch.empty(device=) tensors, both directions, reused
    a = st.empty(64, 1024, device="fake")
    assert hooks.is_device(a) and len(pg._shadows) == 1, "empty(device=) gave no shadow"
    for i in range(3):
        if rank == i % 2:
            a.copy_(torch.full((64, 1024), float(i) + 0.5))
            w = dist.isend(a, peer)
        else:
            w = dist.irecv(a, peer)
        w.wait()
        assert torch.equal(a, torch.full((64, 1024), float(i) + 0.5)), f"shadow round {i}"
        assert len(pg._shadows) == 1
    # collectives of device tensors (through host memory, result copied back)
    x = dev(torch.full((1000,), float(rank + 1)))
    dist.all_reduce(x)
    assert torch.equal(x, torch.full((1000,), 3.0)), "all_reduce of a device tensor"
    b = dev(torch.full((300,), 7.0) if rank == 0 else torch.zeros(300))
    dist.broadcast(b, 0)
    assert torch.equal(b, torch.full((300,), 7.0)), "broadcast of a device tensor"
    assert hooks.pinned, "no staging arena pinned"
    assert len({a for a, _ in hooks.pinned}) == len(hooks.pinned), "an arena pinned twice"
    assert all(e.left <= 0 for e in hooks.events), "a send posted before its copy completed"
    del a
    dist.barrier()
    dist.destroy_process_group()
    pg._shutdown()
    assert sorted(hooks.unpinned) == sorted(a for a, _ in hooks.pinned), "arenas not unpinned"
    print(f"rank {rank}: device staging: p2p, shadows, all_reduce, broadcast; "
          f"{len(hooks.pinned)} arena(s) pinned and unpinned")
    return 0


if __name__ == "__main__":
    sys.exit(main())
