# SPDX-License-Identifier: BSD-3-Clause
"""check() of the multi-rank torch tests (run by sdr.launch, which sets
RANK): a check that fails prints the rank and what failed and exits 1;
``rankcheck.checks`` counts the ones that held."""
import os
import sys

checks = 0


def check(cond, what):
    global checks
    if not cond:
        print(f"FAIL (rank {os.environ.get('RANK', '?')}): {what}", flush=True)
        sys.exit(1)
    checks += 1
