#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Calls between the firmware's files run one way.

Builds the file-level call graph of firmware/*.c from universal-ctags
(which file defines each function) and cscope (which functions each function
calls), then checks:
  1. no cycle: no two files call each other, directly or through others;
  2. no file outside the scheme registry names a scheme (sdr_rel_none, ...),
     and no scheme file (rel_*.c) calls a function of another scheme file.
Prints the graph in data-flow order, or every violation; exit 1 on any.
Exit 77 when ctags or cscope is missing.

  check_calls.py FIRMWARE_DIR
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    fw = os.path.abspath(sys.argv[1])
    for tool in ('ctags', 'cscope'):
        if not shutil.which(tool):
            print(f"check_calls: {tool} not installed: skipping", file=sys.stderr)
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
    with tempfile.TemporaryDirectory() as tmp:
        lst = os.path.join(tmp, 'files')
        with open(lst, 'w') as fh:
            fh.write('\n'.join(os.path.join(fw, f) for f in srcs + hdrs) + '\n')
        db = os.path.join(tmp, 'cscope.out')
        subprocess.run(['cscope', '-b', '-k', '-i', lst, '-f', db], check=True, cwd=tmp)
        for name, target in defined.items():
            # rows: the file of each call of NAME, the calling function, ...
            res = subprocess.run(['cscope', '-d', '-L', '-3', name, '-f', db],
                                 capture_output=True, text=True, check=True, cwd=tmp).stdout
            for row in res.splitlines():
                caller_file = os.path.basename(row.split()[0])
                if caller_file in edges and caller_file != target:
                    edges[caller_file].add(target)
                    why.setdefault((caller_file, target), set()).add(name)
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
