#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Calls between the firmware's files run one way.

Builds the file-level call graph of firmware/*.c from universal-ctags
(which file defines each global function) and the calls of those names in
every other file, then checks:
  1. no cycle: no two files call each other, directly or through others;
  2. no file outside the scheme registry names a scheme (sdr_rel_none, ...),
     and no scheme file (rel_*.c) calls a function of another scheme file.
Prints the graph in data-flow order, or every violation; exit 1 on any.
Exit 77 when universal-ctags is missing.

  check_calls.py FIRMWARE_DIR
"""
import os
import re
import shutil
import subprocess
import sys


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    fw = os.path.abspath(sys.argv[1])
    if not shutil.which('ctags'):
        print("check_calls: ctags (universal-ctags) not installed: skipping", file=sys.stderr)
        return 77
    srcs = sorted(f for f in os.listdir(fw) if f.endswith('.c'))
    hdrs = sorted(f for f in os.listdir(fw) if f.endswith('.h'))
    # global function -> its .c file (a static function is only called from
    # its own file, and static names may repeat across files)
    out = subprocess.run(['ctags', '-x', '--c-kinds=f', '--language-force=C'] +
                         [os.path.join(fw, f) for f in srcs],
                         capture_output=True, text=True, check=True).stdout
    defined = {}
    for line in out.splitlines():
        name, _kind, _line, path, text = line.split(None, 4)
        if not re.match(r'\s*static\b', text):
            defined[name] = os.path.basename(path)
    edges = {f: set() for f in srcs}
    why = {}
    # calls: every use of a global function's name followed by "(" in
    # another file, comments and strings removed (a function pointer taken
    # without a call is not a call: the ops tables are meant to be that)
    call = re.compile(r'\b([A-Za-z_]\w*)\s*\(')
    for f in srcs:
        text = open(os.path.join(fw, f)).read()
        text = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
        text = re.sub(r'//[^\n]*', ' ', text)
        text = re.sub(r'"(\\.|[^"\\\n])*"', '""', text)
        for m in call.finditer(text):
            target = defined.get(m.group(1))
            if target and target != f:
                edges[f].add(target)
                why.setdefault((f, target), set()).add(m.group(1))
    bad = []
    # 1. cycles (Tarjan)
    index, low, on, stack, comps = {}, {}, set(), [], []

    def strong(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            comps.append(comp)
    sys.setrecursionlimit(10000)
    for v in edges:
        if v not in index:
            strong(v)
    for comp in comps:
        if len(comp) > 1:
            ties = [f"{a} -> {b}: {', '.join(sorted(why[(a, b)]))}"
                    for a in comp for b in edges[a] if b in comp]
            bad.append("cycle: " + ", ".join(sorted(comp)) + "\n    " + "\n    ".join(ties))
    # 2. schemes: named only by the registry, never calling each other
    schemes = [f for f in srcs if f.startswith('rel_')]
    for f in srcs:
        text = open(os.path.join(fw, f)).read()
        for m in re.finditer(r'\bsdr_rel_(none|sr|ec|auto)\b', text):
            if f != 'rel.c' and f != f"rel_{m.group(1)}.c":
                bad.append(f"{f} names the scheme {m.group(0)}")
        if f in schemes:
            for t in edges[f]:
                if t in schemes:
                    bad.append(f"scheme {f} calls scheme {t}: {', '.join(sorted(why[(f, t)]))}")
    for b in bad:
        print("FAIL:", b)
    if bad:
        return 1
    # the graph, callers before callees
    order, seen = [], set()

    def visit(v):
        if v in seen:
            return
        seen.add(v)
        for w in sorted(edges[v]):
            visit(w)
        order.append(v)
    for v in sorted(edges):
        visit(v)
    for v in reversed(order):
        print(f"{v:16s} -> {' '.join(sorted(edges[v])) or '-'}")
    print(f"check_calls: {len(srcs)} files, {sum(len(e) for e in edges.values())} file-to-file "
          "call edges, no cycle, schemes independent")
    return 0


if __name__ == '__main__':
    sys.exit(main())
