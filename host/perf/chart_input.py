# SPDX-License-Identifier: BSD-3-Clause
"""The command line and the input of sdr-perf's chart tools (flows_plot.py,
paths_plot.py): one sdr-perf JSON line of a given "mode" from a file or
stdin, a PNG to write. A module beside them (host program)."""
import argparse
import json
import sys


def args(doc, what, default_out, more=None):
    """INPUT (`what`: the sdr-perf output it reads, '-' for stdin), --out,
    --title, and what `more(parser)` adds; the description is the first
    line of `doc`."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("input", help="%s, '-' for stdin" % what)
    ap.add_argument("--out", default=default_out,
                    help="PNG to write (default %s)" % default_out)
    ap.add_argument("--title", default=None, help="chart title (default: from the run)")
    if more:
        more(ap)
    return ap.parse_args()


def last_run(path, mode):
    """The last JSON line of `path` (or stdin, '-') that starts with
    {"mode":"MODE", or None."""
    f = sys.stdin if path == "-" else open(path)
    runs = [json.loads(line) for line in f if line.startswith('{"mode":"%s"' % mode)]
    return runs[-1] if runs else None
