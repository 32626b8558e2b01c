# SPDX-License-Identifier: BSD-3-Clause
"""sdr.core.describe_recv says what common/sdr_diag.c says (sdr-diag, the
tools): the cases of tests/common/test_diag.c, word for word. No daemon."""
import sys

from sdr import core

bm = [True] * 18 + [False] * 46
bm[3] = False
got = core.describe_recv(1234, 2.3, bm, "10.99.1.1", 1.9)
want = ("recv #1234 posted 2.3 s ago, 17 of 64 chunks, missing 3, 18-63, last packet from "
        "10.99.1.1 1.9 s ago")
assert got == want, (got, want)
got = core.describe_recv(1234, 0.04, [False] * 64, "10.99.1.1")
want = "recv #1234 posted 40 ms ago, 0 of 64 chunks, no packet of it yet from 10.99.1.1"
assert got == want, (got, want)
got = core.describe_recv(1234, 0.04, [i % 2 == 0 for i in range(64)], "10.99.1.1", no_rel=True)
assert "missing 1, 3, 5, 7, 9, 11, ..." in got and core.NO_REL_HINT in got, got
print("describe_recv: as sdr_diag.c")
sys.exit(0)
