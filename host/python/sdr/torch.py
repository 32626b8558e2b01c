# SPDX-License-Identifier: BSD-3-Clause
"""torch.distributed backend "sdr": tensors between ranks through sdr-dpu.

``import sdr.torch`` registers the backend; then the standard API works::

    import torch.distributed as dist, sdr.torch
    dist.init_process_group("sdr", rank=r, world_size=n, init_method="tcp://host:port")
    dist.send(t, 1); dist.recv(t, 0); w = dist.isend(t, 1); w.wait()

Ranks attached to different DPUs talk through libsdr QPs (one for
point-to-point, one for collectives, per pair; QP infos are exchanged through
PyTorch's own store). Ranks attached to the same DPU (a DPU cannot send to
itself) talk through a unix socket. CPU and CUDA tensors: a CUDA tensor is
staged through registered host memory pinned with cudaHostRegister, copied
on a side stream ordered with the caller's current stream (the CUDA path is
chosen at run time; docs/training.md). PyTorch 1.13 and 2.x are both
supported (registration chosen at import: _select_api). Supported: send,
recv, isend, irecv,
batch_isend_irecv, barrier, broadcast, all_reduce (SUM, PRODUCT, MIN, MAX;
star through rank 0, reduced in rank order, so bit-reproducible). Anything
else raises RuntimeError naming what is supported. See docs/training.md.

Configuration: ``pg_options=sdr.torch.Options(...)`` in init_process_group,
else the environment: SDR_DPU (daemon socket), SDR_REL (none, sr, auto, ec,
ec:rs:K:M, ec:xor:K:M; default auto), SDR_MAX_MSG, SDR_CHUNK_PKTS,
SDR_SPIN_US, SDR_POLL_US, SDR_PATHS, SDR_CHANNELS.
"""
import ctypes
import collections
import datetime
import errno as _errno
import inspect
import os
import socket
import struct
import tempfile
import threading
import time
import weakref

import torch
import torch.distributed as dist
from torch._C import _distributed_c10d as _c10d
from torch._C._distributed_c10d import Work as _Work

from . import _capi, core
from .core import SdrError

BACKEND = "sdr"


def _select_api(c10d, register_backend):
    """How to register with this torch: (name, base class, extra keyword
    arguments of register_backend).

    torch 2.x (c10d has a Backend class; register_backend takes devices=):
    the group is registered for the cpu and cuda devices. Its class stays a
    ProcessGroup subclass: torch 2.x binds Python overrides (a trampoline)
    for ProcessGroup only, not for Backend, and init_process_group uses a
    ProcessGroup returned by the creator as the group itself (as torch's own
    Python process groups do). torch 1.13: a ProcessGroup, no devices=."""
    try:
        params = inspect.signature(register_backend).parameters
    except (TypeError, ValueError):
        params = {}
    if getattr(c10d, "Backend", None) is not None and "devices" in params:
        return "2.x", c10d.ProcessGroup, {"devices": ["cpu", "cuda"]}
    return "1.13", c10d.ProcessGroup, {}


API, _Base, _REGISTER_KW = _select_api(_c10d, dist.Backend.register_backend)
_SUPPORTED = ("send, recv, isend, irecv, batch_isend_irecv, barrier, broadcast, "
              "all_reduce (sum, product, min, max)")

# dtype codes carried in the immediate (and the local frame header)
_DTYPES = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float16,
           torch.float32, torch.float64, torch.bool, torch.bfloat16, torch.complex64,
           torch.complex128]
_DTYPE_CODE = {d: i + 1 for i, d in enumerate(_DTYPES)}

# immediate: kind (4 bits) | dtype code (8) | low 20 bits of the op's byte count
K_P2P, K_BARRIER, K_BCAST, K_REDUCE = 1, 2, 3, 4
_KIND_NAMES = {K_P2P: "send/recv", K_BARRIER: "barrier", K_BCAST: "broadcast",
               K_REDUCE: "all_reduce"}
S_P2P, S_COLL = 0, 1   # streams: point-to-point, collectives


def _imm(kind, dtype, nbytes):
    return (kind & 15) << 28 | (_DTYPE_CODE.get(dtype, 0) & 255) << 20 | (nbytes & 0xFFFFF)


def _imm_text(imm):
    code = imm >> 20 & 255
    dt = _DTYPES[code - 1] if 1 <= code <= len(_DTYPES) else "?"
    return f"{_KIND_NAMES.get(imm >> 28, '?')} of a {dt} tensor"


def _env_int(name, default):
    v = os.environ.get(name)
    if v is None or v == "":
        return default
    try:
        return int(v, 0)
    except ValueError:
        raise ValueError(f"{name}={v!r}: not an integer") from None


class Options:
    """Options of the sdr backend (``pg_options`` of init_process_group).

    dpu:        the sdr-dpu daemon's socket (--name); default $SDR_DPU, then
                /tmp/sdr-dpu.sock
    rel:        reliability of the QPs: none, sr, auto, ec (= ec:rs:32:8),
                ec:rs:K:M, ec:xor:K:M; default $SDR_REL, then auto. Every rank
                must use the same.
    max_msg:    bytes per libsdr message (QP slot); a larger tensor travels
                as several messages. Default $SDR_MAX_MSG, then the daemon's
                (--max-msg, 64 MiB).
    chunk_pkts: packets per receive-bitmap chunk (default $SDR_CHUNK_PKTS,
                then the daemon's --chunk-pkts)
    paths:      UDP source ports (ECMP paths) each QP sprays over, 1..16
                (docs/multipath.md; default $SDR_PATHS, then the daemon's
                --paths)
    channels:   DPU workers (channels, docs/host-api.md "Channels") that
                carry each remote peer's large messages, 1..8: with W > 1
                a second QP per peer and stream, of W channels, carries
                every message above (W - 1) chunks (a shorter one would
                cost a filler message per channel without a byte), the
                first the others. Every rank must use
                the same. Default $SDR_CHANNELS, then 1
    spin_us:    a wait polls back to back (yielding the CPU) this long
                (default $SDR_SPIN_US, then 1000), then
    poll_us:    sleeps this long between polls (default $SDR_POLL_US,
                then 50)
    arena_mb:   size of each registered memory arena for sdr.torch.empty()
                and staging copies (default 64)
    local_dir:  directory of the unix sockets between ranks on the same DPU
                (default: a new temporary directory)
    """

    def __init__(self, dpu=None, rel=None, max_msg=None, chunk_pkts=None, poll_us=None,
                 spin_us=None, arena_mb=64, local_dir=None, paths=None, channels=None):
        self.dpu = dpu or os.environ.get("SDR_DPU") or core.DEFAULT_SOCKET
        self.rel = rel or os.environ.get("SDR_REL") or "auto"
        core.parse_rel(self.rel)  # ValueError now rather than at QP creation
        self.max_msg = int(max_msg) if max_msg is not None else _env_int("SDR_MAX_MSG", 0)
        self.chunk_pkts = (int(chunk_pkts) if chunk_pkts is not None
                           else _env_int("SDR_CHUNK_PKTS", 0))
        self.poll_us = int(poll_us) if poll_us is not None else _env_int("SDR_POLL_US", 50)
        self.spin_us = int(spin_us) if spin_us is not None else _env_int("SDR_SPIN_US", 1000)
        self.arena_mb = int(arena_mb)
        self.local_dir = local_dir
        self.paths = int(paths) if paths is not None else _env_int("SDR_PATHS", 0)
        if not 0 <= self.paths <= 16:
            raise ValueError(f"sdr.torch.Options: paths {self.paths}: 0..16")
        self.channels = int(channels) if channels is not None else _env_int("SDR_CHANNELS", 1)
        if not 1 <= self.channels <= 8:
            raise ValueError(f"sdr.torch.Options: channels {self.channels}: 1..8")
        if (self.max_msg < 0 or self.chunk_pkts < 0 or self.poll_us < 0 or self.spin_us < 0
                or self.arena_mb <= 0):
            raise ValueError("sdr.torch.Options: max_msg, chunk_pkts, poll_us, spin_us must be "
                             ">= 0, arena_mb > 0")

    def __repr__(self):
        return (f"sdr.torch.Options(dpu={self.dpu!r}, rel={self.rel!r}, max_msg={self.max_msg}, "
                f"chunk_pkts={self.chunk_pkts}, spin_us={self.spin_us}, poll_us={self.poll_us}, "
                f"paths={self.paths}, channels={self.channels})")


# ---------------------------------------------------------------- devices

class _CudaHooks:
    """The CUDA runtime as the staging path uses it. Chosen at run time:
    None when torch has no CUDA (CPU builds never touch CUDA)."""

    def __init__(self):
        self._side = {}
        self._reg = None

    def is_device(self, t):
        return t.device.type == "cuda"

    def pin(self, addr, nbytes):
        """cudaHostRegister: the arena becomes pinned (DMA-able) memory."""
        err = None
        try:
            err = torch.cuda.cudart().cudaHostRegister(addr, nbytes, 0)
        except (AttributeError, RuntimeError, TypeError):
            lib = self._cudart()
            err = lib.cudaHostRegister(ctypes.c_void_p(addr), ctypes.c_size_t(nbytes),
                                       ctypes.c_uint(0))
        code = int(getattr(err, "value", err) or 0)
        if code != 0:
            raise RuntimeError(f"sdr backend: cudaHostRegister of {nbytes} bytes failed "
                               f"(cudaError {code})")

    def unpin(self, addr):
        try:
            torch.cuda.cudart().cudaHostUnregister(addr)
        except (AttributeError, RuntimeError, TypeError):
            self._cudart().cudaHostUnregister(ctypes.c_void_p(addr))

    def _cudart(self):
        if self._reg is None:
            for name in ("libcudart.so", "libcudart.so.13", "libcudart.so.12",
                         "libcudart.so.11.0"):
                try:
                    self._reg = ctypes.CDLL(name)
                    break
                except OSError:
                    continue
            if self._reg is None:
                raise RuntimeError("sdr backend: libcudart not found for cudaHostRegister")
        return self._reg

    def side(self, device):
        if device not in self._side:
            self._side[device] = torch.cuda.Stream(device=device)
        return self._side[device]

    def d2h(self, dst, src):
        """dst (pinned host) <- src (device) on the side stream, after the
        work already queued on the caller's current stream (the producer).
        Returns an event that completes with the copy."""
        cur = torch.cuda.current_stream(src.device)
        side = self.side(src.device)
        side.wait_stream(cur)
        with torch.cuda.stream(side):
            dst.copy_(src, non_blocking=True)
            src.record_stream(side)
            ev = torch.cuda.Event()
            ev.record(side)
        return ev

    def h2d(self, dst, src):
        """dst (device) <- src (pinned host) on the side stream; the
        caller's current stream then waits for it. Returns the copy's event."""
        cur = torch.cuda.current_stream(dst.device)
        side = self.side(dst.device)
        side.wait_stream(cur)
        with torch.cuda.stream(side):
            dst.copy_(src, non_blocking=True)
            dst.record_stream(side)
            ev = torch.cuda.Event()
            ev.record(side)
        cur.wait_event(ev)
        return ev

    def to_host(self, t):
        return t.detach().to("cpu")

    def empty(self, shape, dtype, device):
        return torch.empty(shape, dtype=dtype, device=device)


_HOOKS = []   # [hooks or None] once decided


def _device_hooks():
    if not _HOOKS:
        try:
            ok = torch.cuda.is_available()
        except Exception:
            ok = False
        _HOOKS.append(_CudaHooks() if ok else None)
    return _HOOKS[0]


def _set_device_hooks(hooks):
    """Tests: replace the CUDA hooks (a fake device on a CPU-only machine)."""
    _HOOKS[:] = [hooks]


def _is_dev(t):
    h = _device_hooks()
    return h is not None and h.is_device(t)


def _ready(ev):
    return ev is None or ev.query()


# ---------------------------------------------------------------- memory

class _Pool:
    """Registered memory arenas with a first-fit allocator. Blocks back the
    tensors of sdr.torch.empty() and the staging copies of tensors that do
    not live in registered memory."""

    ALIGN = 64

    def __init__(self, ctx, arena_bytes):
        self.ctx = ctx
        self.arena_bytes = arena_bytes
        self.arenas = []         # [Buffer, free list [(off, len)] sorted by off]
        self.lock = threading.Lock()
        self.deferred = collections.deque()  # blocks freed by finalizers
        self.after = []          # (event, block): free once a device copy finished
        self.pinned = set()      # arenas registered with cudaHostRegister

    def _drain(self):
        while self.deferred:
            ai, off, n = self.deferred.popleft()
            self._free_locked(ai, off, n)
        if self.after:
            keep = []
            for ev, blk in self.after:
                if _ready(ev):
                    self._free_locked(*blk)
                else:
                    keep.append((ev, blk))
            self.after = keep

    def free_after(self, blk, ev):
        self.after.append((ev, blk))

    def pin(self, ai):
        """Pin arena @p ai for device copies (once)."""
        if ai not in self.pinned:
            buf = self.arenas[ai][0]
            _device_hooks().pin(buf.addr, buf.size)
            self.pinned.add(ai)

    def unpin_all(self):
        h = _device_hooks()
        for ai in sorted(self.pinned):
            try:
                h.unpin(self.arenas[ai][0].addr)
            except Exception:
                pass
        self.pinned.clear()

    def alloc(self, nbytes):
        n = max(self.ALIGN, (int(nbytes) + self.ALIGN - 1) // self.ALIGN * self.ALIGN)
        with self.lock:
            self._drain()
            for ai, (buf, fl) in enumerate(self.arenas):
                for i, (off, ln) in enumerate(fl):
                    if ln >= n:
                        if ln == n:
                            del fl[i]
                        else:
                            fl[i] = (off + n, ln - n)
                        return ai, off, n
            size = max(self.arena_bytes, (n + (2 << 20) - 1) // (2 << 20) * (2 << 20))
            buf = self.ctx.alloc(size)
            self.arenas.append([buf, [(n, size - n)] if size > n else []])
            return len(self.arenas) - 1, 0, n

    def _free_locked(self, ai, off, n):
        fl = self.arenas[ai][1]
        fl.append((off, n))
        fl.sort()
        out = []
        for o, ln in fl:
            if out and out[-1][0] + out[-1][1] == o:
                out[-1] = (out[-1][0], out[-1][1] + ln)
            else:
                out.append((o, ln))
        fl[:] = out

    def free(self, blk):
        with self.lock:
            self._free_locked(*blk)

    def free_later(self, blk):
        self.deferred.append(blk)  # called from finalizers: no lock

    def view(self, blk, nbytes):
        buf = self.arenas[blk[0]][0]
        return buf.view(blk[1], nbytes)

    def locate(self, addr, nbytes):
        """(MR, offset) when [addr, addr+nbytes) lies in an arena, else None."""
        for buf, _ in self.arenas:
            if buf.addr <= addr and addr + nbytes <= buf.addr + buf.size:
                return buf.mr, addr - buf.addr
        return None

    def tensor(self, shape, dtype):
        esz = torch.empty((), dtype=dtype).element_size()
        n = 1
        for d in shape:
            n *= int(d)
        if n == 0:
            return torch.empty(shape, dtype=dtype)
        blk = self.alloc(n * esz)
        arr = self.view(blk, n * esz)
        weakref.finalize(arr, self.free_later, blk)
        return torch.frombuffer(arr, dtype=dtype).view(*shape)


# ---------------------------------------------------------------- operations

class _Op:
    """One send or receive of a tensor to/from one peer (one or several
    libsdr messages, or one frame on a local channel)."""
    __slots__ = ("kind", "send", "peer", "stream", "tensor", "nbytes", "imm", "pieces", "left",
                 "error", "done", "staging", "target", "t_post", "what", "posted", "chan",
                 "handles", "ready", "dev_target", "shadow", "src")

    def __init__(self, send, peer, stream, tensor, kind, what):
        self.send, self.peer, self.stream, self.tensor = send, peer, stream, tensor
        self.kind = kind
        self.nbytes = tensor.numel() * tensor.element_size()
        self.imm = _imm(kind, tensor.dtype, self.nbytes)
        self.error = None
        self.done = False
        self.staging = None   # pool block
        self.target = None    # recv: user tensor to copy the staging into
        self.pieces = []      # (mr, offset, length) per libsdr message
        self.left = 0
        self.posted = 0
        self.t_post = time.monotonic()
        self.what = what
        self.chan = None
        self.handles = []
        self.ready = None      # device event to wait for before posting (staging copy)
        self.dev_target = False  # recv: target is a device tensor (copy on the side stream)
        self.shadow = None     # the pinned shadow of an sdr.torch.empty(device=) tensor
        self.src = None        # send: the device tensor (alive until staged)

    def fail(self, exc):
        if not self.done:
            self.error = exc
            self.done = True


def _flat_bytes_view(t):
    """A writable ctypes byte array over a contiguous CPU tensor's memory."""
    n = t.numel() * t.element_size()
    return (ctypes.c_ubyte * n).from_address(t.data_ptr())


class _SdrChannel:
    """Both streams to one remote peer: one libsdr QP each, and with
    Options.channels W > 1 a QP of W channels each (``big``) for the
    messages above ``big_over`` bytes: both ends cut a tensor into the same
    pieces and pick the QP by a piece's length, so each QP's messages
    match in order."""

    def __init__(self, pg, peer, qps, big=None, big_over=0):
        self.pg, self.peer, self.qps = pg, peer, qps
        self.big, self.big_over = big or {}, big_over
        self.posts = {"small": 0, "big": 0}  # messages posted on each kind of QP
        self.piece = {}      # stream -> largest message (both ends' max_msg)
        self.queue = {(s, d): collections.deque() for s in (S_P2P, S_COLL) for d in (0, 1)}
        self.broken = {S_P2P: None, S_COLL: None}

    def post(self, op):
        if self.broken[op.stream]:
            op.fail(self.broken[op.stream])
            return
        op.chan = self
        q = self.queue[(op.stream, int(op.send))]
        q.append(op)
        if len(q) == 1:
            self.kick(op.stream, int(op.send))

    def kick(self, stream, send):
        """Post queued messages in order until a ring is full."""
        q = self.queue[(stream, send)]
        small, big = self.qps[stream], self.big.get(stream)
        while q:
            op = q[0]
            if op.done:  # failed while queued
                q.popleft()
                continue
            if not _ready(op.ready):  # its device-to-host copy still runs: in order
                return
            op.ready = None
            op.src = None
            while op.posted < len(op.pieces):
                mr, off, ln = op.pieces[op.posted]
                wr = self.pg._new_wr(op, op.posted)
                qp = big if big is not None and ln > self.big_over else small
                try:
                    if send:
                        h = qp.post_send(mr, off, ln, imm=op.imm, wr_id=wr)
                    else:
                        h = qp.post_recv(mr, off, ln, wr_id=wr)
                except SdrError as e:
                    self.pg._wr.pop(wr, None)
                    if e.again:
                        return
                    self.fail(SdrError(e.errno, e.call, e.reason, f"{op.what}: {e.detail}",
                                       status=True), stream)
                    return
                op.handles.append(h)
                op.posted += 1
                self.posts["big" if qp is big else "small"] += 1
            q.popleft()

    def kick_all(self):
        for (s, d), q in self.queue.items():
            if q:
                self.kick(s, d)

    def fail(self, exc, stream):
        """A failed or timed-out message leaves the QP's numbering unknown:
        every pending and later operation of that stream (point-to-point or
        collectives) to this peer fails."""
        if self.broken[stream] is None:
            self.broken[stream] = SdrError(
                exc.errno or _errno.EIO, "sdr.torch",
                detail=f"{'point-to-point' if stream == S_P2P else 'collective'} connection to "
                       f"rank {self.peer} broken by an earlier error: {exc}")
        for (s, _), q in self.queue.items():
            while s == stream and q:
                q.popleft().fail(exc)
        for op, _ in list(self.pg._wr.values()):
            if op.chan is self and op.stream == stream:
                op.fail(exc)

    def progress_state(self, op):
        """Text for a timeout: how much of each receive landed (live bitmap),
        in sdr-diag's words (core.describe_recv)."""
        parts = []
        now = time.monotonic()
        for h in op.handles:
            if isinstance(h, core.RecvHandle):
                try:
                    parts.append(core.describe_recv(h.seq, now - op.t_post, h.bitmap(),
                                                    no_rel=h.qp.rel == "none"))
                except SdrError:
                    pass
        return ("; " + "; ".join(parts)) if parts else ""


class _LocalChannel:
    """Both streams to a rank on the same DPU, over one unix stream socket.
    Frames: stream (u8), pad (3), imm (u32), length (u64), payload. A
    sender thread and a receiver thread per peer; receives land straight in
    the tensor's memory when the receive is already posted."""
    HDR = struct.Struct("<B3xIQ")

    def __init__(self, pg, peer, sock):
        self.pg, self.peer, self.sock = pg, peer, sock
        self.lock = threading.Lock()
        self.posted = {S_P2P: collections.deque(), S_COLL: collections.deque()}
        self.unexpected = {S_P2P: collections.deque(), S_COLL: collections.deque()}
        self.sendq = collections.deque()
        self.send_cv = threading.Condition(self.lock)
        self.broken = None
        self.stream_broken = {S_P2P: None, S_COLL: None}
        self.closing = False
        self.tx = threading.Thread(target=self._tx, name=f"sdr-local-tx-{peer}", daemon=True)
        self.rx = threading.Thread(target=self._rx, name=f"sdr-local-rx-{peer}", daemon=True)
        self.tx.start()
        self.rx.start()

    def post(self, op):
        op.chan = self
        with self.lock:
            if self.broken or self.stream_broken[op.stream]:
                op.fail(self.broken or self.stream_broken[op.stream])
                return
            if op.send:
                self.sendq.append(op)
                self.send_cv.notify()
                return
            if self.unexpected[op.stream]:
                imm, data = self.unexpected[op.stream].popleft()
            else:
                self.posted[op.stream].append(op)
                return
        self._deliver(op, imm, len(data), data)

    def _deliver(self, op, imm, length, data):
        err = _check_arrival(op, length, imm, self.peer)
        if err:
            op.fail(err)
            return
        if length:
            ctypes.memmove(op.tensor.data_ptr(), (ctypes.c_char * length).from_buffer(data),
                           length)
        op.done = True

    def _tx(self):
        while True:
            with self.lock:
                while not self.sendq and not self.closing and not self.broken:
                    self.send_cv.wait()
                if self.closing or self.broken:
                    return
                op = self.sendq.popleft()
            try:
                self.sock.sendall(self.HDR.pack(op.stream, op.imm, op.nbytes))
                if op.nbytes:
                    self.sock.sendall(memoryview(_flat_bytes_view(op.tensor)))
                op.done = True
            except OSError as e:
                self._broken(e, op)
                return

    def _read_exact(self, mv):
        got = 0
        while got < len(mv):
            n = self.sock.recv_into(mv[got:])
            if n == 0:
                raise ConnectionResetError(_errno.ECONNRESET,
                                           f"rank {self.peer} closed its connection "
                                           "(process exited?)")
            got += n

    def _rx(self):
        hdr = bytearray(self.HDR.size)
        try:
            while True:
                self._read_exact(memoryview(hdr))
                stream, imm, length = self.HDR.unpack(hdr)
                if stream not in self.posted:
                    raise OSError(_errno.EPROTO, f"bad frame from rank {self.peer}")
                with self.lock:
                    op = self.posted[stream].popleft() if self.posted[stream] else None
                if op is not None and length == op.nbytes and not _check_arrival(op, length, imm,
                                                                                self.peer):
                    if length:
                        self._read_exact(memoryview(_flat_bytes_view(op.tensor)))
                    op.done = True
                    continue
                data = bytearray(length)
                if length:
                    self._read_exact(memoryview(data))
                if op is not None:
                    self._deliver(op, imm, length, data)
                else:
                    with self.lock:
                        op = self.posted[stream].popleft() if self.posted[stream] else None
                        if op is None:
                            self.unexpected[stream].append((imm, data))
                    if op is not None:
                        self._deliver(op, imm, length, data)
        except OSError as e:
            if not self.closing:
                self._broken(e, None)

    def _broken(self, e, op):
        err = SdrError(e.errno or _errno.EPIPE, "sdr.torch",
                       detail=f"local connection to rank {self.peer}: {e.strerror or e}")
        with self.lock:
            self.broken = err
            pend = list(self.sendq) + [o for q in self.posted.values() for o in q]
            self.sendq.clear()
            for q in self.posted.values():
                q.clear()
            self.send_cv.notify_all()
        if op is not None:
            op.fail(err)
        for o in pend:
            o.fail(err)

    def fail(self, exc, stream):
        """A timed-out receive would take the next frame: the stream is
        unusable from now on."""
        with self.lock:
            if self.stream_broken[stream] is None:
                self.stream_broken[stream] = SdrError(
                    exc.errno or _errno.EIO, "sdr.torch",
                    detail=f"local connection to rank {self.peer} broken by an earlier error: "
                           f"{exc}")

    def kick_all(self):
        pass

    def progress_state(self, op):
        return ""

    def close(self):
        """Stop both threads and wait for them: at interpreter exit a daemon
        thread still running would be torn down under the interpreter."""
        with self.lock:
            self.closing = True
            self.send_cv.notify_all()
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        for t in (self.tx, self.rx):
            if t is not threading.current_thread():
                t.join(timeout=5)
        self.sock.close()


def _check_arrival(op, length, imm, peer):
    """None, or the exception a receive of the wrong size or kind gets."""
    if length != op.nbytes:
        return SdrError(_errno.EMSGSIZE, "sdr.torch",
                        detail=f"{op.what}: rank {peer} sent {length} bytes, the receiving tensor "
                               f"{tuple(op.tensor.shape)} {op.tensor.dtype} holds {op.nbytes}")
    if imm is not None and imm != op.imm:
        return SdrError(_errno.EBADMSG, "sdr.torch",
                        detail=f"{op.what}: rank {peer} sent a {_imm_text(imm)} "
                               f"({imm & 0xFFFFF} mod 2^20 bytes), this receive expects a "
                               f"{_imm_text(op.imm)} ({op.nbytes} bytes): the ranks' calls do "
                               "not match")
    return None


# ---------------------------------------------------------------- work

def _finish_ops(pg, ops):
    """Completed operations: copy staged receives out, free staging."""
    for o in ops:
        if o.target is not None and o.error is None:
            if o.dev_target:
                ev = _device_hooks().h2d(o.target, o.tensor.view(o.target.shape))
                if o.shadow is not None:
                    o.shadow[1] = ev   # the shadow is busy until the copy ran
                elif o.staging is not None:
                    pg.pool.free_after(o.staging, ev)
                    o.staging = None
            else:
                o.target.copy_(o.tensor.view(o.target.shape))
            o.target = None
    pg._release(ops)


class _SdrWork(_Work):
    """Work of the sdr backend: wait(timeout) polls libsdr until every
    operation completed, raising the first error, or SdrError(ETIMEDOUT)
    when the timeout (default: the process group's) passes."""

    def __init__(self, pg, ops, tensors, src=-1, gen=None, name="op", after=None):
        super().__init__()
        self._pg, self._ops, self._tensors, self._src = pg, list(ops), tensors, src
        self._gen, self._name = gen, name
        self._after = after   # on success: copy a collective's host result to the device
        self._exc = None
        self._finished = False
        if gen is not None:
            with pg._lock:
                pg._gens.append(self)
                self._step()

    def _step(self):
        """Advance a collective: next phase once the current ops are done."""
        while self._gen is not None:
            for o in self._ops:
                if o.done and o.error is not None:
                    self._exc = o.error
                    self._gen = None
                    return
            if not all(o.done for o in self._ops):
                return
            _finish_ops(self._pg, self._ops)
            try:
                self._ops = list(self._gen.send(None))
            except StopIteration:
                self._gen = None
                self._ops = []
            except SdrError as e:
                self._exc = e
                self._gen = None

    def _check(self):
        if self._finished:
            return True
        if self._gen is not None:
            return False
        if self._exc is None:
            for o in self._ops:
                if not o.done:
                    return False
                if o.error is not None:
                    self._exc = o.error
                    break
        if self._exc is None:
            _finish_ops(self._pg, self._ops)
            if self._after is not None:
                self._after()
                self._after = None
        else:
            self._pg._release(self._ops)
        self._finished = True
        return True

    def is_completed(self):
        self._pg._progress()
        return self._check()

    def is_success(self):
        return self.is_completed() and self._exc is None

    def exception(self):
        return self._exc

    def wait(self, timeout=datetime.timedelta(0)):
        pg = self._pg
        t = timeout.total_seconds() if isinstance(timeout, datetime.timedelta) else float(timeout)
        if t <= 0:
            t = pg._timeout
        t_start = time.monotonic()
        deadline = t_start + t
        last = t_start
        while True:
            pg._progress()
            if self._check():
                break
            now = time.monotonic()
            # a daemon restart (libsdr re-attaches, bounded by its window) is
            # not the operation's fault: that time does not count
            ctx = getattr(pg, "ctx", None)
            if ctx is not None and not ctx.closed and ctx.watch_restart():
                deadline += now - last
            last = now
            if now >= deadline:
                pending = [o for o in self._ops if not o.done]
                o = pending[0] if pending else None
                detail = f"{self._name} not complete after {t:.3f} s"
                if o is not None:
                    detail += (f": {o.what} pending for {now - o.t_post:.3f} s"
                               f"{o.chan.progress_state(o) if o.chan else ''}")
                exc = SdrError(_errno.ETIMEDOUT, "sdr.torch", detail=detail)
                for p in pending:
                    if p.chan is not None:
                        p.chan.fail(exc, p.stream)
                    p.fail(exc)
                if self._gen is not None:
                    self._gen = None
                self._exc = exc
                self._check()
                break
            # poll back to back (yielding the CPU) for spin_us, then sleep
            # poll_us between polls: short waits end without a sleep's
            # wake-up latency, long ones (a round trip across DCs) do not
            # burn a core that ranks and daemons share
            if now - t_start < pg._spin_s:
                os.sched_yield()
            else:
                time.sleep(pg._poll_s)
        if self._exc is not None:
            raise self._exc
        return True

    def synchronize(self):
        pass

    def result(self):
        return self._tensors

    def source_rank(self):
        return self._src

    def _source_rank(self):
        return self._src

    def get_future(self):
        raise RuntimeError("sdr backend: Work.get_future() is not supported; use wait()")


# ---------------------------------------------------------------- process group

class ProcessGroupSDR(_Base):
    """The "sdr" process group. Created by init_process_group("sdr", ...)."""

    def __init__(self, store, rank, size, timeout, options=None):
        super().__init__(rank, size)
        opts = options if options is not None else Options()
        if not isinstance(opts, Options):
            raise TypeError(f"sdr backend: pg_options must be sdr.torch.Options, not "
                            f"{type(opts).__name__}")
        self.opts = opts
        self._rank, self._size = rank, size
        self._timeout = (timeout.total_seconds() if isinstance(timeout, datetime.timedelta)
                         else float(timeout))
        self._poll_s = opts.poll_us * 1e-6
        self._spin_s = opts.spin_us * 1e-6
        self._lock = threading.RLock()
        self._wr = {}
        self._next_wr = 1
        self._gens = []
        self._chans = {}
        self._closed = False
        self._coalescing = None
        self._shadows = {}    # (data_ptr, nbytes) of a device tensor -> [block, user]
        self.ctx = core.Context(opts.dpu)
        self.pool = _Pool(self.ctx, opts.arena_mb << 20)
        self._listener = None
        self._local_path = None
        try:
            self._connect(store)
        except BaseException:
            self._shutdown()
            raise
        weakref.finalize(self, ProcessGroupSDR._finalize, self.ctx, list(self._chans.values()),
                         self.pool)

    # -- bootstrap
    def _connect(self, store):
        r, n = self._rank, self._size
        rel = core.format_rel(*core.parse_rel(self.opts.rel))
        probe = self.ctx.qp(rel=rel, max_msg=self.opts.max_msg, chunk_pkts=self.opts.chunk_pkts,
                            paths=self.opts.paths)
        pinfo = probe.info()
        dpu_id = f"{pinfo.ip}/{pinfo.mac}"
        probe.destroy()
        store.set(f"sdr/dpu/{r}", dpu_id)
        store.set(f"sdr/rel/{r}", rel)
        store.set(f"sdr/chan/{r}", str(self.opts.channels))
        ids = {p: store.get(f"sdr/dpu/{p}").decode() for p in range(n)}
        for p in range(n):
            prel = store.get(f"sdr/rel/{p}").decode()
            if prel != rel:
                raise ValueError(f"sdr backend: rank {r} uses reliability {rel}, rank {p} uses "
                                 f"{prel} (SDR_REL / Options.rel must agree on every rank)")
            pch = int(store.get(f"sdr/chan/{p}").decode())
            if pch != self.opts.channels:
                raise ValueError(f"sdr backend: rank {r} uses {self.opts.channels} channels, "
                                 f"rank {p} {pch} (SDR_CHANNELS / Options.channels must agree "
                                 "on every rank)")
        local = [p for p in range(n) if p != r and ids[p] == dpu_id]
        remote = [p for p in range(n) if p != r and ids[p] != dpu_id]
        # remote peers: a QP per stream
        qps = {}
        for p in remote:
            qps[p] = {s: self.ctx.qp(rel=rel, max_msg=self.opts.max_msg,
                                     chunk_pkts=self.opts.chunk_pkts,
                                     paths=self.opts.paths) for s in (S_P2P, S_COLL)}
            for s, q in qps[p].items():
                store.set(f"sdr/qp/{r}/{p}/{s}", bytes(q.info()))
        # ... and with channels, a QP of that many channels per stream for
        # the large messages (its info: one per channel, back to back)
        big, big_over = {}, 0
        w = self.opts.channels
        if w > 1:
            for p in remote:
                big[p] = {s: self.ctx.qp(rel=rel, max_msg=self.opts.max_msg,
                                         chunk_pkts=self.opts.chunk_pkts, paths=self.opts.paths,
                                         channels=w) for s in (S_P2P, S_COLL)}
                for s, q in big[p].items():
                    store.set(f"sdr/qpc/{r}/{p}/{s}", b"".join(bytes(i) for i in q.info()))
            if big:
                # (a message of W - 1 stripes of one chunk or less would
                # cost a filler per channel without a byte: they stay on
                # the ordinary QP)
                i0 = next(iter(big.values()))[S_P2P].info()[0]
                big_over = (w - 1) * i0.chunk_pkts * i0.mtu
        # local peers: the lower rank listens
        if any(p > r for p in local):
            d = self.opts.local_dir or tempfile.mkdtemp(prefix="sdr-torch-")
            self._local_path = os.path.join(d, f"rank{r}-{os.getpid()}.sock")
            self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self._listener.bind(self._local_path)
            self._listener.listen(len(local))
            store.set(f"sdr/unix/{r}", self._local_path)
        for p in remote:
            for s, q in qps[p].items():
                info = core.QPInfo.from_bytes(store.get(f"sdr/qp/{p}/{r}/{s}"))
                q.connect(info)
            for s, q in big.get(p, {}).items():
                raw = store.get(f"sdr/qpc/{p}/{r}/{s}")
                n1 = _capi.QP_INFO_WIRE
                if len(raw) != w * n1:
                    raise SdrError(_errno.EPROTO, "sdr.torch",
                                   detail=f"rank {p}'s channel QP info: {len(raw)} bytes, "
                                          f"want {w} x {n1}")
                q.connect([core.QPInfo.from_bytes(raw[i * n1:(i + 1) * n1]) for i in range(w)])
            ch = _SdrChannel(self, p, qps[p], big.get(p), big_over)
            for s, q in qps[p].items():
                mine = self.opts.max_msg or q.info().max_msg
                ch.piece[s] = min(mine, q.peer.max_msg)
                if p in big:
                    ch.piece[s] = min([ch.piece[s]] + [i.max_msg for i in big[p][s].peer])
            self._chans[p] = ch
        for p in local:
            if p < r:
                path = store.get(f"sdr/unix/{p}").decode()
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                try:
                    s.connect(path)
                except OSError as e:
                    raise SdrError(e.errno or _errno.ECONNREFUSED, "sdr.torch",
                                   detail=f"rank {p} shares this rank's DPU ({dpu_id}); its local "
                                          f"socket {path} refused: {e.strerror} (ranks on one "
                                          "DPU must run on the same host)") from None
                s.sendall(struct.pack("<I", r))
                self._chans[p] = _LocalChannel(self, p, s)
        nacc = sum(1 for p in local if p > r)
        if nacc:
            self._listener.settimeout(self._timeout)
            for _ in range(nacc):
                try:
                    s, _ = self._listener.accept()
                except socket.timeout:
                    raise SdrError(_errno.ETIMEDOUT, "sdr.torch",
                                   detail="a rank on the same DPU did not connect within the "
                                          "timeout") from None
                s.settimeout(None)
                pr = struct.unpack("<I", _recv_exact(s, 4))[0]
                if pr not in local or pr in self._chans:
                    raise SdrError(_errno.EPROTO, "sdr.torch", detail=f"unexpected local peer {pr}")
                self._chans[pr] = _LocalChannel(self, pr, s)
            self._listener.close()
            self._listener = None
            os.unlink(self._local_path)

    @staticmethod
    def _finalize(ctx, chans, pool=None):
        for c in chans:
            if isinstance(c, _LocalChannel):
                c.close()
        if pool is not None and pool.pinned:
            pool.unpin_all()   # before the arenas are unmapped
        try:
            if not ctx.closed and not any(b._views_alive() for b in ctx._bufs.values()):
                ctx.close()
        except Exception:
            pass

    def _shutdown(self):
        ProcessGroupSDR._finalize(self.ctx, list(self._chans.values()), self.pool)
        if self._listener is not None:
            self._listener.close()
            try:
                os.unlink(self._local_path)
            except OSError:
                pass

    # -- engine
    def _new_wr(self, op, idx):
        wr = self._next_wr
        self._next_wr += 1
        self._wr[wr] = (op, idx)
        return wr

    def _progress(self):
        with self._lock:
            for c in self._chans.values():
                c.kick_all()
            try:
                wcs = self.ctx.poll(64) if self._wr else []
            except SdrError as e:
                for op, _ in list(self._wr.values()):
                    op.fail(e)
                self._wr.clear()
                wcs = []
            for wc in wcs:
                op, idx = self._wr.pop(wc.wr_id, (None, 0))
                if op is None or op.done:
                    continue
                if wc.status:
                    if wc.status == -_errno.EMSGSIZE:
                        if op.send:
                            det = (f"{op.what}: rank {op.peer} posted a smaller receive than "
                                   f"this {op.nbytes}-byte tensor")
                        else:
                            det = (f"{op.what}: rank {op.peer} sent more than the "
                                   f"{op.nbytes} bytes of the receiving tensor "
                                   f"{tuple(op.tensor.shape)} {op.tensor.dtype}")
                    elif wc.status == -_errno.ECONNABORTED:
                        det = (f"{op.what}: the connection to rank {op.peer} did not survive "
                               f"a restart of this host's sdr-dpu daemon: "
                               f"{self.ctx.last_error()}")
                    elif wc.status == -_errno.ETIMEDOUT:
                        det = (f"{op.what}: no progress for the daemon's --global-timeout-ms "
                               f"(rank {op.peer} dead or unreachable, or its matching "
                               f"{'receive' if op.send else 'send'} not posted in time)")
                    else:
                        det = f"{op.what}: {core.strerror(wc.status)}"
                    exc = SdrError(wc.status, "sdr.torch", detail=det, status=True)
                    op.fail(exc)
                    op.chan.fail(exc, op.stream)
                    continue
                if not op.send:
                    err = None
                    if wc.partial:
                        err = SdrError(_errno.EIO, "sdr.torch",
                                       detail=f"{op.what}: message {wc.seq} completed with chunks "
                                              "missing")
                    elif wc.length != op.pieces[idx][2]:
                        got = sum(p[2] for p in op.pieces[:idx]) + wc.length
                        err = SdrError(_errno.EMSGSIZE, "sdr.torch",
                                       detail=f"{op.what}: rank {op.peer} sent {got} bytes, the "
                                              f"receiving tensor {tuple(op.tensor.shape)} "
                                              f"{op.tensor.dtype} holds {op.nbytes}")
                    elif wc.has_imm and wc.imm != op.imm:
                        err = _check_arrival(op, op.nbytes, wc.imm, op.peer)
                    if err is not None:
                        op.fail(err)
                        op.chan.fail(err, op.stream)
                        continue
                op.left -= 1
                if op.left == 0:
                    op.done = True
            if self._gens:
                for w in list(self._gens):
                    w._step()
                    if w._gen is None:
                        self._gens.remove(w)

    def _release(self, ops):
        for o in ops:
            if o.shadow is not None and o.shadow[1] is o:
                o.shadow[1] = None
            if o.staging is not None:
                # a staging block is reused only once no message uses it: after
                # a failure the DPU may still place or read it, so it stays
                if o.done and o.error is None:
                    self.pool.free(o.staging)
                o.staging = None

    def _channel(self, peer):
        if not isinstance(peer, int) or not 0 <= peer < self._size:
            raise ValueError(f"sdr backend: rank {peer} is not in the group (size {self._size})")
        if peer == self._rank:
            raise ValueError(f"sdr backend: rank {peer} cannot send to or receive from itself")
        return self._chans[peer]

    def _prepare(self, op, ch):
        t = op.tensor
        dev = _is_dev(t)
        if t.device.type != "cpu" and not dev:
            raise RuntimeError(f"sdr backend: CPU and CUDA tensors only (got a {t.device} "
                               "tensor" + ("" if t.device.type != "cuda" else
                                           ", and torch cannot use CUDA here") + ")")
        if t.is_sparse:
            raise RuntimeError("sdr backend: sparse tensors are not supported")
        if dev and isinstance(ch, _LocalChannel):
            # same DPU: through the unix socket from host memory
            if op.send:
                op.tensor = _device_hooks().to_host(t).contiguous()
            else:
                op.target = t
                op.tensor = torch.empty(t.shape, dtype=t.dtype)
            return
        if dev:
            self._prepare_dev(op, ch)
            return
        if isinstance(ch, _LocalChannel):
            if not t.is_contiguous():
                if op.send:
                    op.tensor = t.contiguous()
                else:
                    op.target = t
                    op.tensor = torch.empty(t.shape, dtype=t.dtype)
            return
        n = op.nbytes
        if n == 0:
            raise ValueError(f"sdr backend: {op.what}: empty tensors cannot be sent (libsdr "
                             "messages hold at least one byte)")
        loc = self.pool.locate(t.data_ptr(), n) if t.is_contiguous() else None
        if loc is None:
            blk = self.pool.alloc(n)
            st = torch.frombuffer(self.pool.view(blk, n), dtype=t.dtype)
            if op.send:
                st.copy_(t.reshape(-1))
            else:
                op.target = t
            op.staging = blk
            op.tensor = st
            loc = self.pool.locate(st.data_ptr(), n)
        mr, off = loc
        step = ch.piece[op.stream]
        op.pieces = [(mr, off + o, min(step, n - o)) for o in range(0, n, step)]
        op.left = len(op.pieces)

    def _prepare_dev(self, op, ch):
        """A device tensor over a libsdr QP: its pinned shadow (empty(device=))
        when free, else a pool block; the send posts once the device-to-host
        copy ran (op.ready), the receive copies back at wait()."""
        t, n = op.tensor, op.nbytes
        if n == 0:
            raise ValueError(f"sdr backend: {op.what}: empty tensors cannot be sent (libsdr "
                             "messages hold at least one byte)")
        sh = self._shadows.get((t.data_ptr(), n)) if t.is_contiguous() else None
        if sh is not None and (sh[1] is None or (isinstance(sh[1], _Op) and sh[1].done)
                               or (not isinstance(sh[1], _Op) and _ready(sh[1]))):
            blk = sh[0]
            sh[1] = op
            op.shadow = sh
        else:
            blk = self.pool.alloc(n)
            op.staging = blk
        self.pool.pin(blk[0])
        st = torch.frombuffer(self.pool.view(blk, n), dtype=t.dtype)
        if op.send:
            src = t.reshape(-1)
            op.ready = _device_hooks().d2h(st, src)
            op.src = src
        else:
            op.target = t
            op.dev_target = True
        op.tensor = st
        mr, off = self.pool.locate(st.data_ptr(), n)
        step = ch.piece[op.stream]
        op.pieces = [(mr, off + o, min(step, n - o)) for o in range(0, n, step)]
        op.left = len(op.pieces)

    def _drop_shadow(self, key):
        sh = self._shadows.pop(key, None)
        if sh is None:
            return
        if sh[1] is not None and not isinstance(sh[1], _Op):
            self.pool.free_after(sh[0], sh[1])
        elif isinstance(sh[1], _Op) and not sh[1].done:
            pass   # an operation still uses it: never reused (as a failed staging block)
        else:
            self.pool.free_later(sh[0])

    def _post(self, send, peer, tensor, stream, kind, what):
        ch = self._channel(peer)
        op = _Op(send, peer, stream, tensor, kind, what)
        with self._lock:
            self._prepare(op, ch)
            ch.post(op)
        return op

    # -- point to point
    def send(self, tensors, dst, tag=0):
        t = self._one(tensors, "send")
        self._tag(tag)
        op = self._post(True, dst, t, S_P2P, K_P2P, f"send of {tuple(t.shape)} {t.dtype} to "
                                                   f"rank {dst}")
        return self._work([op], tensors, name="send")

    def recv(self, tensors, src, tag=0):
        t = self._one(tensors, "recv")
        self._tag(tag)
        op = self._post(False, src, t, S_P2P, K_P2P, f"recv of {tuple(t.shape)} {t.dtype} from "
                                                    f"rank {src}")
        return self._work([op], tensors, src=src, name="recv")

    def recv_anysource(self, tensors, tag=0):
        raise RuntimeError("sdr backend: recv without src (any source) is not supported: give "
                           "src=")

    def _work(self, ops, tensors, src=-1, name="op"):
        w = _SdrWork(self, ops, tensors, src=src, name=name)
        if self._coalescing is not None:
            self._coalescing.append(w)
        return w

    def _start_coalescing(self, device=None):
        self._coalescing = []

    def _end_coalescing(self, arg=None):
        """Operations were posted as they came (in order): nothing to flush.
        torch 1.13 passes the requests (and uses none back); torch 2.x
        passes a device and waits on the one Work returned (its
        batch_isend_irecv of CUDA tensors): all the coalesced operations."""
        works, self._coalescing = self._coalescing or [], None
        if isinstance(arg, list):
            return None
        return _SdrWork(self, [o for w in works for o in w._ops], [], name="coalesced")

    # torch 2.x's trampoline calls these names for C++ callers
    start_coalescing = _start_coalescing
    end_coalescing = _end_coalescing

    @staticmethod
    def _one(tensors, what):
        if len(tensors) != 1:
            raise RuntimeError(f"sdr backend: {what} takes exactly one tensor, got {len(tensors)}")
        return tensors[0]

    @staticmethod
    def _tag(tag):
        if tag != 0:
            raise RuntimeError("sdr backend: tags are not supported (tag must be 0); messages "
                               "between two ranks match in posting order")

    # -- collectives (star through rank 0)
    def _coll_buf(self, like, peer):
        ch = self._chans[peer]
        if isinstance(ch, _LocalChannel):
            return torch.empty(like.shape, dtype=like.dtype)
        return self.pool.tensor(like.shape, like.dtype)

    def barrier(self, opts=None):
        one = torch.zeros(1, dtype=torch.uint8)
        return _SdrWork(self, [], [], gen=self._g_barrier(one), name="barrier")

    def _g_barrier(self, one):
        r, n = self._rank, self._size
        if n == 1:
            return
        if r == 0:
            bufs = {p: self._coll_buf(one, p) for p in range(1, n)}
            yield [self._post(False, p, bufs[p], S_COLL, K_BARRIER, f"barrier: token from rank {p}")
                   for p in range(1, n)]
            yield [self._post(True, p, bufs[p], S_COLL, K_BARRIER, f"barrier: release of rank {p}")
                   for p in range(1, n)]
        else:
            b = self._coll_buf(one, 0)
            yield [self._post(True, 0, b, S_COLL, K_BARRIER, "barrier: token to rank 0"),
                   self._post(False, 0, b, S_COLL, K_BARRIER, "barrier: release from rank 0")]

    def broadcast(self, tensors, opts=None):
        t = self._one(tensors, "broadcast")
        root = opts.rootRank if opts is not None else 0
        if not 0 <= root < self._size:
            raise ValueError(f"sdr backend: broadcast root {root} not in the group")
        if _is_dev(t):
            host = _device_hooks().to_host(t).contiguous()
            return _SdrWork(self, [], tensors, gen=self._g_bcast(host, root), name="broadcast",
                            after=lambda: t.copy_(host.view(t.shape)))
        return _SdrWork(self, [], tensors, gen=self._g_bcast(t, root), name="broadcast")

    def _g_bcast(self, t, root):
        r, n = self._rank, self._size
        if n == 1:
            return
        if r == root:
            yield [self._post(True, p, t, S_COLL, K_BCAST, f"broadcast to rank {p}")
                   for p in range(n) if p != root]
        else:
            yield [self._post(False, root, t, S_COLL, K_BCAST, f"broadcast from rank {root}")]

    _REDUCE = None

    def allreduce(self, tensors, opts=None):
        t = self._one(tensors, "all_reduce")
        rop = opts.reduceOp if opts is not None else dist.ReduceOp.SUM
        fns = {dist.ReduceOp.SUM: torch.Tensor.add_, dist.ReduceOp.PRODUCT: torch.Tensor.mul_,
               dist.ReduceOp.MIN: lambda a, b: torch.minimum(a, b, out=a),
               dist.ReduceOp.MAX: lambda a, b: torch.maximum(a, b, out=a)}
        fn = None
        for k, f in fns.items():
            if rop == k:
                fn = f
        if fn is None:
            raise RuntimeError("sdr backend: all_reduce supports SUM, PRODUCT, MIN and MAX")
        if _is_dev(t):
            # through host memory: the reduction runs on the CPU, in rank order
            host = _device_hooks().to_host(t).contiguous()
            return _SdrWork(self, [], tensors, gen=self._g_allreduce(host, fn),
                            name="all_reduce", after=lambda: t.copy_(host.view(t.shape)))
        return _SdrWork(self, [], tensors, gen=self._g_allreduce(t, fn), name="all_reduce")

    def _g_allreduce(self, t, fn):
        r, n = self._rank, self._size
        if n == 1:
            return
        if r == 0:
            bufs = {p: self._coll_buf(t, p) for p in range(1, n)}
            yield [self._post(False, p, bufs[p], S_COLL, K_REDUCE, f"all_reduce: part of rank {p}")
                   for p in range(1, n)]
            for p in range(1, n):  # rank order: the same sum on every run
                fn(t, bufs[p].view(t.shape))
            yield [self._post(True, p, t, S_COLL, K_REDUCE, f"all_reduce: result to rank {p}")
                   for p in range(1, n)]
        else:
            yield [self._post(True, 0, t, S_COLL, K_REDUCE, "all_reduce: part to rank 0"),
                   self._post(False, 0, t, S_COLL, K_REDUCE, "all_reduce: result from rank 0")]

    # -- the rest: a clear error
    def _unsupported(self, name):
        raise RuntimeError(f"sdr backend: {name} is not supported (supported: {_SUPPORTED})")

    def allgather(self, *a, **k):
        self._unsupported("all_gather")

    def _allgather_base(self, *a, **k):
        self._unsupported("all_gather_into_tensor")

    def allgather_coalesced(self, *a, **k):
        self._unsupported("all_gather_coalesced")

    def allreduce_coalesced(self, *a, **k):
        self._unsupported("all_reduce_coalesced")

    def alltoall(self, *a, **k):
        self._unsupported("all_to_all")

    def alltoall_base(self, *a, **k):
        self._unsupported("all_to_all_single")

    def gather(self, *a, **k):
        self._unsupported("gather")

    def scatter(self, *a, **k):
        self._unsupported("scatter")

    def reduce(self, *a, **k):
        self._unsupported("reduce")

    def reduce_scatter(self, *a, **k):
        self._unsupported("reduce_scatter")

    def _reduce_scatter_base(self, *a, **k):
        self._unsupported("reduce_scatter_tensor")

    def monitored_barrier(self, *a, **k):
        self._unsupported("monitored_barrier")

    def getBackendName(self):
        return BACKEND

    def name(self):
        return BACKEND

    def local_peers(self):
        """Ranks on the same DPU (unix socket), for diagnostics."""
        return sorted(p for p, c in self._chans.items() if isinstance(c, _LocalChannel))


def _recv_exact(s, n):
    b = bytearray()
    while len(b) < n:
        x = s.recv(n - len(b))
        if not x:
            raise SdrError(_errno.ECONNRESET, "sdr.torch", detail="local peer closed during setup")
        b += x
    return bytes(b)


def _create(dist_opts, pg_options):
    return ProcessGroupSDR(dist_opts.store, dist_opts.group_rank, dist_opts.group_size,
                           dist_opts.timeout, pg_options)


def _sdr_group(group):
    """The ProcessGroupSDR behind ``group`` (default: the default group), or None."""
    pg = group
    if pg is None:
        if not dist.is_initialized():
            return None
        pg = dist.distributed_c10d._get_default_group()
    if isinstance(pg, ProcessGroupSDR):
        return pg
    return None


def empty(*shape, dtype=torch.float32, group=None, device=None):
    """A tensor in registered memory of the sdr process group ``group``
    (default: the default group), so that send/recv move it without a copy.
    ``device="cuda"``: a device tensor with a pinned shadow in registered
    memory (its sends and receives stage through the shadow, one DMA copy).
    With another backend (gloo for comparisons) a plain torch.empty()."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list, torch.Size)):
        shape = tuple(shape[0])
    pg = _sdr_group(group)
    if device is not None and str(device) != "cpu":
        h = _device_hooks()
        t = (h.empty(shape, dtype, device) if h is not None
             else torch.empty(shape, dtype=dtype, device=device))
        n = t.numel() * t.element_size()
        if pg is not None and n and _is_dev(t):
            with pg._lock:
                blk = pg.pool.alloc(n)
                pg.pool.pin(blk[0])
                key = (t.data_ptr(), n)
                pg._shadows[key] = [blk, None]
            weakref.finalize(t, pg._drop_shadow, key)
        return t
    if pg is not None:
        with pg._lock:
            return pg.pool.tensor(shape, dtype)
    return torch.empty(shape, dtype=dtype)


def zeros(*shape, dtype=torch.float32, group=None, device=None):
    """empty() filled with zeros."""
    return empty(*shape, dtype=dtype, group=group, device=device).zero_()


def _register():
    if BACKEND.upper() in dist.Backend._plugins or hasattr(dist.Backend, BACKEND.upper()):
        return
    dist.Backend.register_backend(BACKEND, _create, extended_api=True, **_REGISTER_KW)


_register()
