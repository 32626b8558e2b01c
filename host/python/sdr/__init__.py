# SPDX-License-Identifier: BSD-3-Clause
"""sdr: Python binding of libsdr, the host library of sdr-dpu.

    import sdr
    ctx = sdr.Context("/tmp/a.sock")          # attach to a daemon
    buf = ctx.alloc(1 << 20)                  # shareable memory, registered
    t = buf.tensor(torch.float32, (256, 1024))  # a tensor over it, no copy
    qp = ctx.qp(rel="sr")
    peer_info = exchange(bytes(qp.info()))    # out of band
    qp.connect(peer_info)
    h = qp.post_recv(buf, 0, t.nbytes, wr_id=1)
    h.bitmap()                                # live partial completion
    for wc in ctx.poll(): ...

``import sdr.torch`` registers the torch.distributed backend "sdr"
(docs/training.md). Errors raise :class:`SdrError` (errno, reason).
"""
from ._capi import (CQE_F_IMM, CQE_F_PARTIAL, DEFAULT_SOCKET, EC_RS, EC_XOR,
                    POLL_DONE, POLL_PARTIAL, POLL_PENDING, REL_AUTO, REL_EC, REL_NONE, REL_SR,
                    SDR_HANDLES, SQ_RECV, SQ_SEND)
from .core import (MR, QP, Buffer, Completion, Context, QPInfo, RecvHandle, SdrError,
                   SendHandle, format_rel, lib, parse_rel, strerror)

__all__ = ["Context", "Buffer", "MR", "QP", "QPInfo", "SendHandle", "RecvHandle", "Completion",
           "SdrError", "lib", "strerror", "parse_rel", "format_rel", "DEFAULT_SOCKET",
           "REL_NONE", "REL_SR", "REL_EC", "REL_AUTO", "EC_RS", "EC_XOR",
           "SQ_SEND", "SQ_RECV", "CQE_F_PARTIAL", "CQE_F_IMM", "POLL_PENDING", "POLL_DONE",
           "POLL_PARTIAL", "SDR_HANDLES"]
__version__ = "0.1.0"
