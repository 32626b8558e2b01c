# SPDX-License-Identifier: BSD-3-Clause
"""The ctypes structures and constants of host/python/sdr/_capi.py match the
C headers: every size and field offset (printed by layout.c) and every
constant. Usage: test_layout.py LAYOUT_EXE (PYTHONPATH has host/python)."""
import ctypes
import json
import os
import subprocess
import sys

from sdr import _capi

wrap = os.environ.get("SDR_EXE_WRAPPER", "").split()   # qemu in the aarch64 cross build
out = subprocess.run(wrap + [sys.argv[1]], check=True, capture_output=True,
                     text=True).stdout.splitlines()
layout, consts = json.loads(out[0]), json.loads(out[1])
structs = {"sdr_ctx_attr": _capi.CtxAttr, "sdr_qp_attr": _capi.QpAttr, "sdr_qp_info": _capi.QpInfo,
           "sdr_send_wr": _capi.SendWr, "sdr_recv_wr": _capi.RecvWr, "sdr_wc": _capi.Wc,
           "sdr_ctx_stats": _capi.CtxStats}
bad = []
for name, cls in structs.items():
    c = layout[name]
    if ctypes.sizeof(cls) != c["__size__"]:
        bad.append(f"sizeof({name}): ctypes {ctypes.sizeof(cls)}, C {c['__size__']}")
    fields = {f for f, _ in cls._fields_}
    for f, off in c.items():
        if f == "__size__":
            continue
        if f not in fields:
            bad.append(f"{name}.{f}: missing in ctypes")
        elif getattr(cls, f).offset != off:
            bad.append(f"{name}.{f}: ctypes offset {getattr(cls, f).offset}, C {off}")
    for f in fields - set(c):
        bad.append(f"{name}.{f}: not a field of the C struct")
py = {"SDR_REL_NONE": _capi.REL_NONE, "SDR_REL_SR": _capi.REL_SR, "SDR_REL_EC": _capi.REL_EC,
      "SDR_REL_AUTO": _capi.REL_AUTO, "SDR_EC_RS": _capi.EC_RS,
      "SDR_EC_XOR": _capi.EC_XOR, "SDR_SQ_SEND": _capi.SQ_SEND,
      "SDR_SQ_RECV": _capi.SQ_RECV, "SDR_CQE_F_PARTIAL": _capi.CQE_F_PARTIAL,
      "SDR_CQE_F_IMM": _capi.CQE_F_IMM, "SDR_POLL_PENDING": _capi.POLL_PENDING,
      "SDR_POLL_DONE": _capi.POLL_DONE, "SDR_POLL_PARTIAL": _capi.POLL_PARTIAL,
      "SDR_HANDLES": _capi.SDR_HANDLES, "SDR_QP_INFO_WIRE": _capi.QP_INFO_WIRE}
for k, v in consts.items():
    if py[k] != v:
        bad.append(f"{k}: Python {py[k]}, C {v}")
if bad:
    print("layout mismatch:\n  " + "\n  ".join(bad))
    sys.exit(1)
print(f"ctypes layout of {len(structs)} structures and {len(consts)} constants matches the C headers")
