# SPDX-License-Identifier: BSD-3-Clause
"""ctypes declarations of libsdr (host/libsdr/sdr.h, common/sdr_abi.h).

The structures mirror the C layout field by field; tests/python/test_layout.py
compares every size and offset with the C compiler's (tests/python/layout.c).
Nothing here is public API: use the classes of :mod:`sdr`.
"""
import ctypes
import ctypes.util
import os

c_u8, c_u16, c_u32, c_i32, c_u64 = (ctypes.c_uint8, ctypes.c_uint16, ctypes.c_uint32,
                                     ctypes.c_int32, ctypes.c_uint64)
c_vp = ctypes.c_void_p

# enum sdr_reliability
REL_NONE, REL_SR, REL_EC, REL_AUTO = 0, 1, 2, 3
# struct sdr_qp_attr::ec_code
EC_RS, EC_XOR = 1, 2
# enum sdr_sq_op (struct sdr_wc::opcode)
SQ_SEND, SQ_RECV = 1, 2
# struct sdr_wc::flags
CQE_F_PARTIAL, CQE_F_IMM = 0x01, 0x02
# sdr_recv_poll() results
POLL_PENDING, POLL_DONE, POLL_PARTIAL = 0, 1, 2
SDR_HANDLES = 1024
QP_INFO_WIRE = 40
DEFAULT_SOCKET = "/tmp/sdr-dpu.sock"


# struct sdr_ctx_attr::reattach_ms: no re-attach after a daemon death
REATTACH_OFF = 0xFFFFFFFF
# sdr_ctx_state()
CTX_LIVE, CTX_REATTACHING, CTX_DEAD = 0, 1, 2


class CtxAttr(ctypes.Structure):
    _fields_ = [("ctl_timeout_ms", c_u32), ("reattach_ms", c_u32), ("reserved", c_u32 * 6)]


class QpAttr(ctypes.Structure):
    _fields_ = [("max_msg", c_u32), ("chunk_pkts", c_u32), ("reliability", c_u8),
                ("ec_code", c_u8), ("ec_k", c_u8), ("ec_m", c_u8), ("want_qpn", c_u32),
                ("want_rkey", c_u32), ("reserved", c_u32 * 3), ("rate_bps", c_u64)]


class QpAttrExt(ctypes.Structure):  # 2.3: sdr_qp_create_ext (channels)
    _fields_ = [("size", c_u32), ("channels", c_u32), ("stripe_chunks", c_u32),
                ("reserved", c_u32), ("attr", QpAttr)]


class QpInfo(ctypes.Structure):
    _fields_ = [("qpn", c_u32), ("rkey", c_u32), ("ip", c_u32), ("mac", c_u8 * 6),
                ("mtu", c_u16), ("max_msg", c_u32), ("chunk_pkts", c_u32),
                ("generations", c_u8), ("reliability", c_u8), ("ec", c_u16),
                ("ctrl_key", c_u64)]


class SendWr(ctypes.Structure):
    _fields_ = [("mr", c_vp), ("addr", c_vp), ("offset", c_u64), ("length", c_u32),
                ("imm", c_u32), ("wr_id", c_u64)]


class RecvWr(ctypes.Structure):
    _fields_ = [("mr", c_vp), ("addr", c_vp), ("offset", c_u64), ("length", c_u32),
                ("reserved", c_u32), ("wr_id", c_u64)]


class Wc(ctypes.Structure):
    _fields_ = [("wr_id", c_u64), ("qp", c_vp), ("handle", c_vp), ("seq", c_u32),
                ("length", c_u32), ("imm", c_u32), ("status", c_i32), ("opcode", c_u8),
                ("flags", c_u8), ("reserved", c_u16)]


class CtxStats(ctypes.Structure):
    _fields_ = [("sq_posted", c_u64), ("sq_full", c_u64), ("cq_full", c_u64),
                ("slot_busy", c_u64), ("cqe_seen", c_u64), ("cqe_unmatched", c_u64),
                ("wc_dropped", c_u64), ("wc_orphaned", c_u64),
                # 2.2: re-attach after a daemon restart (a 2.1 library leaves them 0)
                ("reattaches", c_u64), ("reattach_expired", c_u64), ("reattach_last_ms", c_u64),
                ("qps_restored", c_u64), ("qps_lost", c_u64), ("mrs_lost", c_u64),
                ("ops_replayed", c_u64), ("ops_aborted", c_u64), ("wc_duplicate", c_u64)]


# name -> (restype, argtypes); every function of sdr.h the binding uses
_PROTOS = {
    "sdr_ctx_open": (c_vp, [ctypes.c_char_p, ctypes.POINTER(CtxAttr)]),
    "sdr_ctx_close": (None, [c_vp]),
    "sdr_last_error": (ctypes.c_char_p, [c_vp]),
    "sdr_strerror": (ctypes.c_char_p, [ctypes.c_int]),
    "sdr_ctx_stats_get": (ctypes.c_int, [c_vp, ctypes.POINTER(CtxStats)]),
    "sdr_buf_alloc": (c_vp, [c_vp, ctypes.c_size_t]),
    "sdr_buf_free": (ctypes.c_int, [c_vp, c_vp]),
    "sdr_mr_reg": (c_vp, [c_vp, c_vp, ctypes.c_size_t, c_u32]),
    "sdr_mr_dereg": (ctypes.c_int, [c_vp]),
    "sdr_mr_id": (c_u32, [c_vp]),
    "sdr_qp_create": (c_vp, [c_vp, ctypes.POINTER(QpAttr)]),
    "sdr_qp_destroy": (ctypes.c_int, [c_vp]),
    "sdr_qp_rate_set": (ctypes.c_int, [c_vp, c_u64]),
    "sdr_qp_info_get": (ctypes.c_int, [c_vp, ctypes.POINTER(QpInfo)]),
    "sdr_qp_connect": (ctypes.c_int, [c_vp, ctypes.POINTER(QpInfo)]),
    "sdr_send_post": (ctypes.c_int, [c_vp, ctypes.POINTER(SendWr), ctypes.POINTER(c_vp)]),
    "sdr_send_poll": (ctypes.c_int, [c_vp]),
    "sdr_send_seq": (c_u32, [c_vp]),
    "sdr_recv_post": (ctypes.c_int, [c_vp, ctypes.POINTER(RecvWr), ctypes.POINTER(c_vp)]),
    "sdr_recv_bitmap_get": (ctypes.c_int, [c_vp, ctypes.POINTER(ctypes.POINTER(c_u64)),
                                           ctypes.POINTER(ctypes.c_size_t)]),
    "sdr_recv_chunks_done": (ctypes.c_int, [c_vp]),
    "sdr_recv_chunk_bytes": (c_u32, [c_vp]),
    "sdr_recv_imm_get": (ctypes.c_int, [c_vp, ctypes.POINTER(c_u32)]),
    "sdr_recv_complete": (ctypes.c_int, [c_vp]),
    "sdr_recv_poll": (ctypes.c_int, [c_vp]),
    "sdr_recv_seq": (c_u32, [c_vp]),
    "sdr_cq_poll": (ctypes.c_int, [c_vp, ctypes.POINTER(Wc), ctypes.c_int]),
    "sdr_qp_info_format": (ctypes.c_int, [ctypes.POINTER(QpInfo), ctypes.c_char_p,
                                          ctypes.c_size_t]),
    "sdr_qp_info_parse": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(QpInfo)]),
    "sdr_qp_info_encode": (None, [ctypes.POINTER(QpInfo), ctypes.POINTER(c_u8)]),
    "sdr_qp_info_decode": (ctypes.c_int, [ctypes.POINTER(c_u8), ctypes.POINTER(QpInfo)]),
    "sdr_ec_param_parse": (ctypes.c_int, [ctypes.c_char_p, ctypes.POINTER(ctypes.c_uint),
                                          ctypes.POINTER(ctypes.c_uint),
                                          ctypes.POINTER(ctypes.c_uint)]),
}
# functions of later libsdr releases: None where the library predates them
_PROTOS_OPTIONAL = {
    "sdr_ctx_state": (ctypes.c_int, [c_vp]),  # 2.2
    "sdr_qp_create_ext": (c_vp, [c_vp, ctypes.POINTER(QpAttrExt)]),  # 2.3: channels
    "sdr_qp_channels": (ctypes.c_int, [c_vp]),  # 2.3
    "sdr_qp_infos_get": (ctypes.c_int, [c_vp, ctypes.POINTER(QpInfo), ctypes.c_uint]),  # 2.3
    "sdr_qp_connect_infos": (ctypes.c_int, [c_vp, ctypes.POINTER(QpInfo), ctypes.c_uint]),
}


def _candidates():
    """Where libsdr may be, in order: $SDR_LIBSDR, the directory meson
    installed it to (sdr/_paths.py), the dynamic linker's search path."""
    env = os.environ.get("SDR_LIBSDR")
    if env:
        return [env]
    out = []
    try:
        from . import _paths  # written by meson at install time
        out.append(os.path.join(_paths.LIBDIR, "libsdr.so.2"))
    except ImportError:
        pass
    found = ctypes.util.find_library("sdr")
    if found:
        out.append(found)
    out.append("libsdr.so.2")
    return out


def load():
    """Load libsdr.so and declare its functions. Raises OSError naming every
    place that was tried."""
    errs = []
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path, use_errno=True)
        except OSError as e:
            errs.append(f"{path}: {e}")
            continue
        for name, (res, args) in _PROTOS.items():
            fn = getattr(lib, name)
            fn.restype = res
            fn.argtypes = args
        lib.optional = {}
        for name, (res, args) in _PROTOS_OPTIONAL.items():
            fn = getattr(lib, name, None)
            if fn is not None:
                fn.restype = res
                fn.argtypes = args
            lib.optional[name] = fn
        lib.path = path
        return lib
    raise OSError("cannot load libsdr (set SDR_LIBSDR to the path of libsdr.so.2, e.g. "
                  "build/host/libsdr/libsdr.so.2): " + "; ".join(errs))
