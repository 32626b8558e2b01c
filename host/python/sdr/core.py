# SPDX-License-Identifier: BSD-3-Clause
"""Python binding of libsdr (host/libsdr/sdr.h) over ctypes.

Objects: :class:`Context` (attachment to an sdr-dpu daemon), :class:`Buffer`
(shareable memory from ``sdr_buf_alloc``, viewable as a torch tensor without
a copy), :class:`MR` (registration), :class:`QP`, :class:`QPInfo`,
:class:`SendHandle` / :class:`RecvHandle` (with the live receive bitmap) and
:class:`Completion` (from :meth:`Context.poll`).

Every failure of libsdr raises :class:`SdrError`, an ``OSError`` whose
``errno`` is libsdr's errno and whose ``reason`` is the daemon's message
(``sdr_last_error``). Data-path calls never block; a full ring raises
``SdrError`` with ``errno == errno.EAGAIN`` (``SdrError.again``).

A context and everything created from it must not be used by two threads at
once (libsdr's rule); :class:`Context` holds a lock (``ctx.lock``) that its
methods take, so concurrent calls are serialised rather than corrupting it.

Daemon restarts: libsdr re-attaches to the daemon's next incarnation within
its window (``Context(reattach_ms=...)``, $SDR_REATTACH_MS, default 30 s) and
carries the QPs and their outstanding operations over; nothing raises while
it does. :meth:`Context.poll` logs the event on the ``sdr`` logger ("daemon
restarted, QPs restored in N ms"). What cannot be carried over still raises:
SdrError(ECONNABORTED) for the operations of a QP the new daemon did not
restore (the reason in ``reason``), SdrError(EPIPE) once the window expired.
"""
import ctypes
import errno as _errno
import logging
import os
import threading
import time

from . import _capi

_lib = None
log = logging.getLogger("sdr")


def lib():
    """The loaded libsdr (ctypes.CDLL), loaded on first use."""
    global _lib
    if _lib is None:
        _lib = _capi.load()
    return _lib


def strerror(status):
    """libsdr's description of a status / negative errno (sdr_strerror)."""
    return lib().sdr_strerror(int(status)).decode()


class SdrError(OSError):
    """A libsdr call failed. ``errno``: the errno (positive), ``strerror``:
    libsdr's description, ``reason``: the daemon's or libsdr's message for
    this failure ("" when none), ``call``: the libsdr function."""

    def __init__(self, err, call, reason="", detail="", status=False):
        err = abs(int(err))
        # status: err is a completion status / data-path errno, described by
        # sdr_strerror(); otherwise an ordinary errno (os.strerror)
        super().__init__(err, strerror(-err) if status else os.strerror(err))
        self.call = call
        self.reason = reason or ""
        self.detail = detail or ""

    @property
    def again(self):
        return self.errno == _errno.EAGAIN

    def __str__(self):
        s = f"{self.call}: [{_errno.errorcode.get(self.errno, self.errno)}] {self.strerror}"
        if self.detail:
            s += f" ({self.detail})"
        if self.reason:
            s += f"; reason: {self.reason}"
        return s


REL_NAMES = {"none": _capi.REL_NONE, "sr": _capi.REL_SR, "ec": _capi.REL_EC,
             "auto": _capi.REL_AUTO}


def parse_rel(spec):
    """'none' | 'sr' | 'auto' | 'ec' | 'ec:rs:K:M' | 'ec:xor:K:M' ->
    (reliability, ec_code, k, m). 'ec' alone is RS(32,8)."""
    s = str(spec).strip().lower()
    if s in ("none", "sr", "auto"):
        return REL_NAMES[s], 0, 0, 0
    if s == "ec":
        s = "ec:rs:32:8"
    if s.startswith("ec:"):
        code, k, m = ctypes.c_uint(), ctypes.c_uint(), ctypes.c_uint()
        if lib().sdr_ec_param_parse(s[3:].encode(), ctypes.byref(code), ctypes.byref(k),
                                    ctypes.byref(m)) == 0:
            return _capi.REL_EC, code.value, k.value, m.value
    raise ValueError(f"reliability '{spec}': want none, sr, auto, ec or ec:rs:K:M / "
                     "ec:xor:K:M (K 1..64, M 1..32, XOR: M <= K)")


def format_rel(rel, code=0, k=0, m=0):
    if rel == _capi.REL_EC:
        return f"ec:{'xor' if code == _capi.EC_XOR else 'rs'}:{k}:{m}"
    return {v: n for n, v in REL_NAMES.items()}.get(rel, str(rel))


class QPInfo:
    """What a peer needs to connect to a QP. ``bytes(info)`` /
    :meth:`from_bytes` give the 40-byte wire form (sdr_qp_info_encode),
    ``str(info)`` / :meth:`parse` the text form."""

    def __init__(self, raw=None):
        self.raw = raw if raw is not None else _capi.QpInfo()

    def __bytes__(self):
        out = (_capi.c_u8 * _capi.QP_INFO_WIRE)()
        lib().sdr_qp_info_encode(ctypes.byref(self.raw), out)
        return bytes(out)

    @classmethod
    def from_bytes(cls, b):
        b = bytes(b)
        if len(b) != _capi.QP_INFO_WIRE:
            raise ValueError(f"QP info: {len(b)} bytes, want {_capi.QP_INFO_WIRE}")
        raw = _capi.QpInfo()
        rc = lib().sdr_qp_info_decode((_capi.c_u8 * len(b)).from_buffer_copy(b), ctypes.byref(raw))
        if rc:
            raise SdrError(rc, "sdr_qp_info_decode", detail="malformed QP info")
        return cls(raw)

    def __str__(self):
        buf = ctypes.create_string_buffer(512)
        lib().sdr_qp_info_format(ctypes.byref(self.raw), buf, len(buf))
        return buf.value.decode()

    @classmethod
    def parse(cls, text):
        raw = _capi.QpInfo()
        if lib().sdr_qp_info_parse(str(text).encode(), ctypes.byref(raw)):
            raise SdrError(_errno.EINVAL, "sdr_qp_info_parse", detail=f"malformed QP info '{text}'")
        return cls(raw)

    @property
    def ip(self):
        v = self.raw.ip
        return f"{v >> 24 & 255}.{v >> 16 & 255}.{v >> 8 & 255}.{v & 255}"

    @property
    def mac(self):
        return ":".join(f"{x:02x}" for x in self.raw.mac)

    def __getattr__(self, name):  # qpn, rkey, mtu, max_msg, chunk_pkts, ...
        raw = self.__dict__.get("raw")
        if raw is not None and name in dict(_capi.QpInfo._fields_):
            return getattr(raw, name)
        raise AttributeError(name)

    def __repr__(self):
        return f"QPInfo({self})"


class Completion:
    """One work completion (struct sdr_wc)."""
    __slots__ = ("wr_id", "seq", "length", "imm", "status", "opcode", "flags", "handle", "qp")

    def __init__(self, wc):
        self.wr_id, self.seq, self.length = wc.wr_id, wc.seq, wc.length
        self.imm, self.status, self.opcode, self.flags = wc.imm, wc.status, wc.opcode, wc.flags
        self.handle, self.qp = wc.handle, wc.qp

    @property
    def is_recv(self):
        return self.opcode == _capi.SQ_RECV

    @property
    def partial(self):
        return bool(self.flags & _capi.CQE_F_PARTIAL)

    @property
    def has_imm(self):
        return bool(self.flags & _capi.CQE_F_IMM)

    def __repr__(self):
        return (f"Completion(wr_id={self.wr_id}, {'recv' if self.is_recv else 'send'}, "
                f"seq={self.seq}, length={self.length}, status={self.status}, "
                f"flags={self.flags:#x}, imm={self.imm:#x})")


class Context:
    """Attachment to the sdr-dpu daemon listening on ``path`` (default
    $SDR_DPU, then /tmp/sdr-dpu.sock). ``ctl_timeout_ms``: timeout of one
    control request (0 = libsdr's 5000). ``reattach_ms``: re-attach window
    after a daemon death (0 = $SDR_REATTACH_MS, else 30000;
    ``REATTACH_OFF``: a daemon death is final, EPIPE)."""

    REATTACH_OFF = _capi.REATTACH_OFF

    def __init__(self, path=None, ctl_timeout_ms=0, reattach_ms=0):
        self.path = path or os.environ.get("SDR_DPU") or _capi.DEFAULT_SOCKET
        self.lock = threading.RLock()
        self._bufs = {}
        self._qps = set()
        self._rs_t, self._rs_state, self._rs_seen, self._rs_down = 0.0, _capi.CTX_LIVE, 0, False
        attr = _capi.CtxAttr(ctl_timeout_ms=int(ctl_timeout_ms), reattach_ms=int(reattach_ms))
        ctypes.set_errno(0)
        h = lib().sdr_ctx_open(self.path.encode(), ctypes.byref(attr))
        if not h:
            e = ctypes.get_errno() or _errno.EIO
            hint = ""
            if e in (_errno.ENOENT, _errno.ECONNREFUSED):
                hint = "is sdr-dpu running with --name " + self.path + "?"
            raise SdrError(e, "sdr_ctx_open",
                           detail=f"cannot attach to the sdr-dpu daemon at {self.path}: "
                                  f"{os.strerror(e)}" + (f"; {hint}" if hint else ""))
        self._h = h
        self._wc = (_capi.Wc * 64)()

    # -- helpers
    def _handle(self):
        if not self._h:
            raise SdrError(_errno.EBADF, "sdr", detail="context is closed")
        return self._h

    def last_error(self):
        """sdr_last_error(): the reason of the last failed call ('' if none)."""
        return lib().sdr_last_error(self._h).decode(errors="replace") if self._h else ""

    def _fail(self, rc, call, detail="", status=False):
        return SdrError(rc, call, reason=self.last_error(), detail=detail, status=status)

    def close(self, force=False):
        """Detach: destroys every QP and MR and unmaps every buffer. Refused
        (EBUSY) while a tensor or memoryview still views a buffer of this
        context, unless ``force`` (then such views dangle)."""
        with self.lock:
            if not self._h:
                return
            if not force:
                busy = [b for b in self._bufs.values() if b._views_alive()]
                if busy:
                    raise SdrError(_errno.EBUSY, "sdr_ctx_close",
                                   detail=f"{len(busy)} buffer(s) still viewed by tensors or "
                                          "memoryviews; delete them first (or close(force=True))")
            for b in self._bufs.values():
                b._dead()
            for q in self._qps:
                q._h = None
            self._bufs.clear()
            self._qps.clear()
            lib().sdr_ctx_close(self._h)
            self._h = None

    @property
    def closed(self):
        return not self._h

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()

    def __del__(self):
        # at interpreter exit, tensors may still exist: leave the mapping to
        # the process's end rather than unmapping under them
        try:
            if self._h and not any(b._views_alive() for b in self._bufs.values()):
                self.close()
        except Exception:
            pass

    # -- memory
    def alloc(self, size, register=True):
        """Shareable, zero-filled, page-aligned memory of ``size`` bytes
        (sdr_buf_alloc), registered (sdr_mr_reg) unless ``register`` is
        false. Returns a :class:`Buffer`."""
        size = int(size)
        if size <= 0:
            raise SdrError(_errno.EINVAL, "sdr_buf_alloc", detail=f"size {size}")
        with self.lock:
            ctypes.set_errno(0)
            addr = lib().sdr_buf_alloc(self._handle(), size)
            if not addr:
                raise self._fail(ctypes.get_errno() or _errno.ENOMEM, "sdr_buf_alloc",
                                 f"{size} bytes")
            b = Buffer(self, addr, size)
            self._bufs[addr] = b
        if register:
            try:
                b.register()
            except SdrError:
                b.free()
                raise
        return b

    def buffer_of(self, addr, length=1):
        """The :class:`Buffer` holding [addr, addr + length), or None."""
        for b in self._bufs.values():
            if b.addr <= addr and addr + length <= b.addr + b.size:
                return b
        return None

    # -- queue pairs
    def qp(self, rel="none", max_msg=0, chunk_pkts=0, rate_bps=0, paths=0, channels=1,
           stripe_chunks=0):
        """Create a QP (sdr_qp_create). ``rel``: 'none', 'sr', 'auto', 'ec'
        or 'ec:rs:K:M' / 'ec:xor:K:M'; ``max_msg`` / ``chunk_pkts`` 0 = the
        daemon's defaults; ``rate_bps`` paces the QP's sends (0 = unpaced);
        ``paths``: UDP source ports its sends are sprayed over, 1..16
        (docs/multipath.md; 0 = the daemon's --paths); ``channels``: one QP
        served by that many DPU workers (sdr_qp_create_ext, libsdr 2.3;
        docs/host-api.md "Channels": 0 = the daemon's --channels, 1..8; its
        ``info()`` is then a list, one per channel), ``stripe_chunks`` their
        stripe in chunks (0 = 1)."""
        r, code, k, m = parse_rel(rel)
        if not 0 <= int(paths) <= 16:
            raise ValueError(f"paths {paths}: 0 (the daemon's --paths) or 1..16")
        if not 0 <= int(channels) <= 8 or not 0 <= int(stripe_chunks) <= 255:
            raise ValueError(f"channels {channels} (0..8), stripe_chunks {stripe_chunks}"
                             " (0..255)")
        a = _capi.QpAttr(max_msg=int(max_msg), chunk_pkts=int(chunk_pkts), reliability=r,
                         ec_code=code, ec_k=k, ec_m=m, rate_bps=int(rate_bps))
        a.reserved[1] = int(paths)  # (struct sdr_qp_attr: horizon_ms, paths, cc)
        ext = None
        if int(channels) != 1:
            fn = lib().optional.get("sdr_qp_create_ext")
            if fn is None:
                raise SdrError(_errno.ENOTSUP, "sdr_qp_create_ext",
                               detail="libsdr before 2.3: no channels")
            ext = _capi.QpAttrExt(size=ctypes.sizeof(_capi.QpAttrExt), channels=int(channels),
                                  stripe_chunks=int(stripe_chunks), attr=a)
        with self.lock:
            ctypes.set_errno(0)
            h = (fn(self._handle(), ctypes.byref(ext)) if ext is not None
                 else lib().sdr_qp_create(self._handle(), ctypes.byref(a)))
            if not h:
                raise self._fail(ctypes.get_errno() or _errno.EIO, "sdr_qp_create",
                                 f"reliability {format_rel(r, code, k, m)}")
            q = QP(self, h, format_rel(r, code, k, m))
            self._qps.add(q)
            return q

    # -- completions
    def poll(self, max=64):
        """Drain completions (sdr_cq_poll): a list of :class:`Completion`,
        oldest first (possibly empty). While libsdr re-attaches to a restarted
        daemon: empty (the event is logged, :meth:`watch_restart`). Raises
        SdrError(EPIPE) once the daemon is gone for good and nothing is
        left."""
        max = min(int(max), len(self._wc))
        with self.lock:
            n = lib().sdr_cq_poll(self._handle(), self._wc, max)
            if n < 0:
                raise self._fail(n, "sdr_cq_poll")
            out = [Completion(self._wc[i]) for i in range(n)]
        if n == 0:
            self.watch_restart()
        return out

    def state(self):
        """'live', 'reattaching' (the daemon is gone and libsdr re-attaches
        within its window, or it is back and libsdr posts the outstanding
        operations again) or 'dead' (sdr_ctx_state; 'live' with a libsdr
        before 2.2)."""
        if not self._h:
            return "dead"
        fn = lib().optional.get("sdr_ctx_state")
        s = fn(self._h) if fn is not None else _capi.CTX_LIVE
        return {_capi.CTX_REATTACHING: "reattaching", _capi.CTX_DEAD: "dead"}.get(s, "live")

    def watch_restart(self, every=0.02):
        """Notice a daemon restart (looks at most every ``every`` s): logs on
        the ``sdr`` logger when the daemon goes and when libsdr is back
        ("daemon restarted, QPs restored in N ms ..."). Returns True while
        libsdr re-attaches (time that timeouts of the caller should not
        count)."""
        now = time.monotonic()
        if now - self._rs_t < every or not self._h:
            return self._rs_state == _capi.CTX_REATTACHING
        self._rs_t = now
        fn = lib().optional.get("sdr_ctx_state")
        if fn is None:
            return False
        st = _capi.CtxStats()
        with self.lock:
            s = fn(self._h)
            lib().sdr_ctx_stats_get(self._h, ctypes.byref(st))
            why = self.last_error()
        if s == _capi.CTX_REATTACHING and not self._rs_down:
            log.warning("sdr: the daemon at %s is gone: re-attaching (%s)", self.path, why)
            self._rs_down = True
        if st.reattaches > self._rs_seen:
            self._rs_seen = st.reattaches
            log.warning("sdr: daemon at %s restarted, QPs restored in %d ms (%d QP(s) restored, "
                        "%d not, %d operation(s) posted again)", self.path, st.reattach_last_ms,
                        st.qps_restored, st.qps_lost, st.ops_replayed)
            if st.qps_lost:
                log.error("sdr: %d QP(s) not restored after the daemon restart: their "
                          "operations fail with ECONNABORTED (%s)", st.qps_lost, why)
        if s != _capi.CTX_REATTACHING:
            self._rs_down = False
        self._rs_state = s
        return s == _capi.CTX_REATTACHING

    def stats(self):
        """Counters of this context (sdr_ctx_stats_get) as a dict."""
        st = _capi.CtxStats()
        with self.lock:
            rc = lib().sdr_ctx_stats_get(self._handle(), ctypes.byref(st))
        if rc:
            raise self._fail(rc, "sdr_ctx_stats_get")
        return {f: getattr(st, f) for f, _ in _capi.CtxStats._fields_}


class Buffer:
    """Memory from sdr_buf_alloc(), registered (``.mr``) unless asked not to.
    ``view()`` is a writable ctypes byte array over it (buffer protocol: use
    ``memoryview(buf.view())``); ``tensor(dtype, shape, offset)`` a torch
    tensor over it, without a copy."""

    def __init__(self, ctx, addr, size):
        self.ctx, self.addr, self.size = ctx, addr, size
        self.mr = None
        self._views = []  # weak references to the objects handed out

    def _views_alive(self):
        import weakref  # noqa: F401  (weak references are created in view())
        self._views = [w for w in self._views if w() is not None]
        return bool(self._views)

    def _dead(self):
        self.addr = None
        self.mr = None

    def _check(self):
        if not self.addr:
            raise SdrError(_errno.EBADF, "sdr", detail="buffer freed or context closed")

    def view(self, offset=0, length=None):
        """A ctypes (c_ubyte * length) array over bytes [offset, offset+length)."""
        import weakref
        self._check()
        length = self.size - offset if length is None else int(length)
        if offset < 0 or length <= 0 or offset + length > self.size:
            raise ValueError(f"range [{offset}, {offset + length}) outside a {self.size}-byte buffer")
        arr = (ctypes.c_ubyte * length).from_address(self.addr + offset)
        self._views.append(weakref.ref(arr))
        return arr

    def tensor(self, dtype=None, shape=None, offset=0):
        """A torch tensor over the buffer (torch.frombuffer: no copy). Keep
        the buffer's context open while the tensor lives."""
        import torch
        dtype = dtype or torch.uint8
        esz = torch.empty((), dtype=dtype).element_size()
        if shape is None:
            n = (self.size - offset) // esz
            shape = (n,)
        elif isinstance(shape, int):
            shape = (shape,)
        n = 1
        for d in shape:
            n *= int(d)
        if n == 0:
            return torch.empty(shape, dtype=dtype)
        t = torch.frombuffer(self.view(offset, n * esz), dtype=dtype)
        return t.view(*shape)

    def register(self, offset=0, length=None):
        """Register [offset, offset+length) (sdr_mr_reg); the first
        registration becomes ``.mr``."""
        self._check()
        length = self.size - offset if length is None else int(length)
        with self.ctx.lock:
            ctypes.set_errno(0)
            h = lib().sdr_mr_reg(self.ctx._handle(), self.addr + offset, length, 0)
            if not h:
                raise self.ctx._fail(ctypes.get_errno() or _errno.EIO, "sdr_mr_reg",
                                     f"{length} bytes")
            mr = MR(self, h, offset, length)
            if self.mr is None:
                self.mr = mr
            return mr

    def free(self):
        """Deregister and free (sdr_buf_free). Refused while views exist."""
        self._check()
        if self._views_alive():
            raise SdrError(_errno.EBUSY, "sdr_buf_free", detail="still viewed by a tensor")
        with self.ctx.lock:
            if self.mr is not None:
                self.mr.dereg()
            rc = lib().sdr_buf_free(self.ctx._handle(), self.addr)
            if rc:
                raise self.ctx._fail(rc, "sdr_buf_free")
            self.ctx._bufs.pop(self.addr, None)
            self._dead()


class MR:
    """A registered range of a :class:`Buffer`."""

    def __init__(self, buf, h, offset, length):
        self.buf, self._h, self.offset, self.length = buf, h, offset, length

    @property
    def id(self):
        return lib().sdr_mr_id(self._h)

    def dereg(self):
        ctx = self.buf.ctx
        with ctx.lock:
            if not self._h:
                return
            rc = lib().sdr_mr_dereg(self._h)
            if rc:
                raise ctx._fail(rc, "sdr_mr_dereg")
            self._h = None
            if self.buf.mr is self:
                self.buf.mr = None


class QP:
    """A queue pair. ``info()`` goes to the peer out of band; ``connect()``
    takes the peer's. Sends and receives are numbered per direction from 0
    at connect: send n lands in receive n."""

    def __init__(self, ctx, h, rel):
        self.ctx, self._h, self.rel = ctx, h, rel
        self.peer = None

    def _handle(self):
        if not self._h:
            raise SdrError(_errno.EBADF, "sdr", detail="QP destroyed or context closed")
        return self._h

    @property
    def channels(self):
        """Channels of the QP (1 for an ordinary QP; docs/host-api.md "Channels")."""
        fn = lib().optional.get("sdr_qp_channels")
        return fn(self._handle()) if fn is not None else 1

    def info(self):
        """The :class:`QPInfo` for the peer; a list of them, one per
        channel, for a QP of several channels."""
        n = self.channels
        if n > 1:
            raw = (_capi.QpInfo * n)()
            with self.ctx.lock:
                rc = lib().optional["sdr_qp_infos_get"](self._handle(), raw, n)
            if rc:
                raise self.ctx._fail(rc, "sdr_qp_infos_get")
            return [QPInfo(_capi.QpInfo.from_buffer_copy(raw[i])) for i in range(n)]
        raw = _capi.QpInfo()
        with self.ctx.lock:
            rc = lib().sdr_qp_info_get(self._handle(), ctypes.byref(raw))
        if rc:
            raise self.ctx._fail(rc, "sdr_qp_info_get")
        return QPInfo(raw)

    def connect(self, peer):
        """Connect to the peer's :class:`QPInfo` (or its bytes / text); a
        list of them, one per channel, for a QP of several channels."""
        def one(p):
            if isinstance(p, (bytes, bytearray)):
                return QPInfo.from_bytes(p)
            return QPInfo.parse(p) if isinstance(p, str) else p
        if isinstance(peer, (list, tuple)):
            infos = [one(p) for p in peer]
            raw = (_capi.QpInfo * len(infos))(*[i.raw for i in infos])
            fn = lib().optional.get("sdr_qp_connect_infos")
            if fn is None:
                raise SdrError(_errno.ENOTSUP, "sdr_qp_connect_infos",
                               detail="libsdr before 2.3: no channels")
            with self.ctx.lock:
                rc = fn(self._handle(), raw, len(infos))
            if rc:
                raise self.ctx._fail(rc, "sdr_qp_connect_infos", f"{len(infos)} peer infos")
            self.peer = infos
            return
        peer = one(peer)
        with self.ctx.lock:
            rc = lib().sdr_qp_connect(self._handle(), ctypes.byref(peer.raw))
        if rc:
            raise self.ctx._fail(rc, "sdr_qp_connect", f"peer {peer}")
        self.peer = peer

    def set_rate(self, rate_bps):
        with self.ctx.lock:
            rc = lib().sdr_qp_rate_set(self._handle(), int(rate_bps))
        if rc:
            raise self.ctx._fail(rc, "sdr_qp_rate_set")

    def destroy(self):
        with self.ctx.lock:
            if not self._h:
                return
            rc = lib().sdr_qp_destroy(self._h)
            self._h = None
            self.ctx._qps.discard(self)
        if rc:
            raise self.ctx._fail(rc, "sdr_qp_destroy")

    @staticmethod
    def _place(mr, offset, length):
        if mr is None or mr._h is None:
            raise SdrError(_errno.ENOENT, "sdr", detail="memory not registered")
        if length is None:
            length = mr.length - offset
        return int(offset) + mr.offset, int(length)

    def post_send(self, mr, offset=0, length=None, imm=0, wr_id=0):
        """Post a one-shot send of ``length`` bytes at ``offset`` of ``mr``
        (an :class:`MR` or a registered :class:`Buffer`) with the 32-bit
        immediate ``imm`` (0, the default, is no immediate: the message
        costs no packets for it). Returns a :class:`SendHandle`; raises
        SdrError (EAGAIN when a ring is full)."""
        if isinstance(mr, Buffer):
            mr = mr.mr
        off, length = self._place(mr, offset, length)
        wr = _capi.SendWr(mr=mr._h, addr=None, offset=off, length=length,
                          imm=int(imm) & 0xFFFFFFFF, wr_id=int(wr_id))
        h = _capi.c_vp()
        with self.ctx.lock:
            rc = lib().sdr_send_post(self._handle(), ctypes.byref(wr), ctypes.byref(h))
        if rc:
            raise SdrError(rc, "sdr_send_post", reason="" if rc == -_errno.EAGAIN else
                           self.ctx.last_error(), detail=f"{length} bytes", status=True)
        return SendHandle(self, h.value, wr_id)

    def post_recv(self, mr, offset=0, length=None, wr_id=0):
        """Post the next receive into ``length`` bytes at ``offset`` of ``mr``.
        Returns a :class:`RecvHandle`."""
        if isinstance(mr, Buffer):
            mr = mr.mr
        off, length = self._place(mr, offset, length)
        wr = _capi.RecvWr(mr=mr._h, addr=None, offset=off, length=length, wr_id=int(wr_id))
        h = _capi.c_vp()
        with self.ctx.lock:
            rc = lib().sdr_recv_post(self._handle(), ctypes.byref(wr), ctypes.byref(h))
        if rc:
            raise SdrError(rc, "sdr_recv_post", reason="" if rc == -_errno.EAGAIN else
                           self.ctx.last_error(), detail=f"{length} bytes", status=True)
        return RecvHandle(self, h.value, wr_id, length)


class _Handle:
    def __init__(self, qp, h, wr_id):
        self.qp, self._h, self.wr_id = qp, h, wr_id

    def _poll(self, fn, call):
        with self.qp.ctx.lock:
            rc = fn(self._h)
        if rc < 0:
            raise self.qp.ctx._fail(rc, call, status=True)
        return rc


def _ago(s):
    return "%.1f s" % s if s >= 1.0 else ("%.0f ms" % (s * 1e3) if s >= 1e-3 else "%.0f us" % (s * 1e6))


def describe_recv(seq, posted_ago, bitmap, peer="", last_pkt_ago=-1.0, no_rel=False):
    """A receive not yet complete in plain words, the sentence of sdr-diag
    and the C tools (common/sdr_diag.c, sdr_diag_recv_text): "recv #12
    posted 2.3 s ago, 17 of 64 chunks, missing 18-63, last packet from
    10.99.1.1 1.9 s ago". ``bitmap``: a list of bools, one per chunk."""
    got, n = sum(1 for b in bitmap if b), len(bitmap)
    out = "recv #%d posted %s ago, %d of %d chunks" % (seq, _ago(posted_ago), got, n)
    if 0 < got < n:
        ranges, i = [], 0
        while i < n:
            if bitmap[i]:
                i += 1
                continue
            j = i
            while j + 1 < n and not bitmap[j + 1]:
                j += 1
            if len(ranges) == 6:
                ranges.append("...")
                break
            ranges.append(str(i) if i == j else "%d-%d" % (i, j))
            i = j + 1
        out += ", missing " + ", ".join(ranges)
    frm = " from " + peer if peer else ""
    if last_pkt_ago >= 0:
        out += ", last packet%s %s ago" % (frm, _ago(last_pkt_ago))
    elif not got:
        out += ", no packet of it yet" + frm
    if no_rel and 0 < got < n:
        out += " (" + NO_REL_HINT + ")"
    return out


NO_REL_HINT = ("this QP has no reliability scheme (--rel none): a lost packet is never sent "
               "again, so on a lossy or overrun link partial messages are expected; use --rel "
               "sr, --rel ec or --rel auto (or pace the sender: the daemon's --port-rate, the "
               "tool's --rate)")


class SendHandle(_Handle):
    """A posted send. ``poll()``: True once on the wire (SR/EC/AUTO:
    acknowledged), False while pending; raises SdrError on a failed send."""

    @property
    def seq(self):
        return lib().sdr_send_seq(self._h)

    def poll(self):
        return self._poll(lib().sdr_send_poll, "sdr_send_poll") != _capi.POLL_PENDING


class RecvHandle(_Handle):
    """A posted receive with its live chunk bitmap."""

    def __init__(self, qp, h, wr_id, length):
        super().__init__(qp, h, wr_id)
        self.length = length

    @property
    def seq(self):
        return lib().sdr_recv_seq(self._h)

    def poll(self):
        """sdr.POLL_PENDING (0), POLL_DONE (1) or POLL_PARTIAL (2); raises
        SdrError on a failed receive."""
        return self._poll(lib().sdr_recv_poll, "sdr_recv_poll")

    @property
    def chunk_bytes(self):
        return lib().sdr_recv_chunk_bytes(self._h)

    def chunks_done(self):
        return self._poll(lib().sdr_recv_chunks_done, "sdr_recv_chunks_done")

    def bitmap(self):
        """The live chunk bitmap: a list of bools, one per chunk of the posted
        length (chunk i = bytes [i*chunk_bytes, (i+1)*chunk_bytes))."""
        words, n = ctypes.POINTER(_capi.c_u64)(), ctypes.c_size_t()
        with self.qp.ctx.lock:
            rc = lib().sdr_recv_bitmap_get(self._h, ctypes.byref(words), ctypes.byref(n))
        if rc:
            raise self.qp.ctx._fail(rc, "sdr_recv_bitmap_get")
        nw = (n.value + 63) // 64
        w = [words[i] for i in range(nw)]
        return [bool(w[i >> 6] >> (i & 63) & 1) for i in range(n.value)]

    def imm(self):
        """The sender's immediate, or None until all of it arrived."""
        v = _capi.c_u32()
        with self.qp.ctx.lock:
            rc = lib().sdr_recv_imm_get(self._h, ctypes.byref(v))
        if rc == -_errno.EAGAIN:
            return None
        if rc:
            raise self.qp.ctx._fail(rc, "sdr_recv_imm_get")
        return v.value

    def complete(self):
        """Complete now even with chunks missing (sdr_recv_complete)."""
        self._poll(lib().sdr_recv_complete, "sdr_recv_complete")
