#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Counting and judging test results for tests/run.sh.

  skips.py count TESTLOG.json LABEL SKIPFILE
      Prints "passed failed skipped" of one `meson test` run and appends one
      line per skipped test to SKIPFILE: LABEL <tab> name <tab> reason.
      The reason is the test's own output: its lines that mention a skip,
      else its last lines. Tests a meson guard left out of the build are
      registered as tests that report skip (tests/not-built.sh), so they are
      counted here like any other skip.

  skips.py report SKIPFILE ALLOWFILE
      Prints every skip with its reason. With CI=true in the environment a
      skip whose test is not on ALLOWFILE is a failure: it is marked so and
      counted. Prints "unexpected N" as its last line (N = those failures;
      0 without CI=true). Exit status 2 if ALLOWFILE is malformed.

ALLOWFILE: one test name per line, then the reason it may skip; '#' starts
a comment; blank lines are ignored. A name without a reason is an error.
"""
import json
import os
import sys

SKIP_WORDS = ("skip", "not built")


def reason_of(out):
    lines = [l.strip() for l in out.splitlines() if l.strip()]
    said = [l for l in lines if any(w in l.lower() for w in SKIP_WORDS)]
    pick = said[-3:] if said else lines[-2:]
    return " | ".join(l[:240] for l in pick) or "(no output)"


def count(testlog, label, skipfile):
    p = f = s = 0
    skips = []
    try:
        with open(testlog) as fp:
            for line in fp:
                t = json.loads(line)
                r = t["result"]
                if r in ("OK", "EXPECTEDFAIL"):
                    p += 1
                elif r == "SKIP":
                    s += 1
                    out = (t.get("stdout") or "") + "\n" + (t.get("stderr") or "")
                    skips.append((t["name"].split(" / ")[-1], reason_of(out)))
                else:
                    f += 1
    except (FileNotFoundError, ValueError, KeyError) as e:
        print("skips.py: %s: %s" % (testlog, e), file=sys.stderr)
        f += 1
    with open(skipfile, "a") as fp:
        for name, why in skips:
            fp.write("%s\t%s\t%s\n" % (label, name, why.replace("\t", " ")))
    print(p, f, s)


def read_allow(path):
    allow, errors = {}, []
    try:
        lines = open(path).read().splitlines()
    except FileNotFoundError:
        return allow, errors
    for n, line in enumerate(lines, 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split(None, 1)
        if len(parts) < 2:
            errors.append("%s:%d: '%s' has no reason" % (path, n, parts[0]))
            continue
        allow[parts[0]] = parts[1]
    return allow, errors


def report(skipfile, allowfile):
    allow, errors = read_allow(allowfile)
    for e in errors:
        print("skip allow-list: " + e)
    if errors:
        sys.exit(2)
    ci = os.environ.get("CI", "") == "true"
    try:
        rows = [l.rstrip("\n").split("\t", 2) for l in open(skipfile) if l.strip()]
    except FileNotFoundError:
        rows = []
    bad = 0
    print("skipped (%d):%s" % (len(rows), "" if rows else " none"))
    for label, name, why in rows:
        mark = ""
        if name in allow:
            mark = "  [allowed: %s]" % allow[name]
        elif ci:
            mark = "  [CI: not on %s: counts as failed]" % os.path.relpath(allowfile)
            bad += 1
        print("  %s %s: %s%s" % (label, name, why, mark))
    if bad:
        print("CI=true: %d skip(s) not on the allow-list count as failures" % bad)
    print("unexpected %d" % bad)


def main():
    a = sys.argv[1:]
    if len(a) == 4 and a[0] == "count":
        count(a[1], a[2], a[3])
    elif len(a) == 3 and a[0] == "report":
        report(a[1], a[2])
    else:
        sys.exit(__doc__)


main()
