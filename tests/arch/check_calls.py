#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Calls between the firmware's files run one way.

Builds the file-level call graph of the .c files under FIRMWARE_DIR (every
subfolder) from universal-ctags (which file defines each global function)
and the calls of those names in every other file, then checks:
  1. folder = layer: every file sits in a layer folder (LAYERS), and a file
     calls only functions of its own folder or of a lower one;
  2. no cycle: no two files call each other, directly or through others;
  3. no file outside the scheme registry (rel/rel.c) names a scheme
     (sdr_rel_none, ...), and no scheme file (rel/rel_*.c) calls a function
     of another scheme file.
Prints the graph in data-flow order, or every violation; exit 1 on any.
Exit 77 when universal-ctags is missing.

  check_calls.py [--stamp FILE] FIRMWARE_DIR
"""
import os
import re
import shutil
import subprocess
import sys

# The firmware's layers, top first (docs/architecture.md): a call goes to
# the same folder or a lower one. sr/ holds the reliable-QP core
# (sr_qp.c) and ec/ the EC engine, its plug-in: the core calls the engine
# only through the hooks table the engine installs (struct sdr_sr_hooks;
# function pointers are not calls here), and the engine calls the core
# (completing a receive it decoded, noting chunks, retransmitting what a
# NACK lists), so ec sits above sr. linkemu/ is the link emulator's DPDK
# callback, a library the control plane installs that calls no firmware
# code.
LAYERS = ['ctl', 'loop', 'rel', 'ec', 'sr', 'prim', 'linkemu']


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    fw = os.path.abspath(sys.argv[1])
    if not shutil.which('ctags'):
        print("check_calls: ctags (universal-ctags) not installed: skipping", file=sys.stderr)
        return 77
    # every .c file by its path under fw ("sr/sr_send.c")
    srcs = sorted(os.path.relpath(os.path.join(d, f), fw)
                  for d, _dirs, files in os.walk(fw) for f in files if f.endswith('.c'))
    # global function -> its .c file (a static function is only called from
    # its own file, and static names may repeat across files)
    out = subprocess.run(['ctags', '-x', '--c-kinds=f', '--language-force=C'] +
                         [os.path.join(fw, f) for f in srcs],
                         capture_output=True, text=True, check=True).stdout
    defined = {}
    for line in out.splitlines():
        name, _kind, _line, path, text = line.split(None, 4)
        if not re.match(r'\s*static\b', text):
            defined[name] = os.path.relpath(path, fw)
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
    # 1. folder = layer: calls go to the same or a lower folder
    def layer(f):
        d = os.path.dirname(f)
        return LAYERS.index(d) if d in LAYERS else None
    for f in srcs:
        if layer(f) is None:
            bad.append(f"{f} is not in a layer folder ({', '.join(LAYERS)})")
    for f in srcs:
        for t in sorted(edges[f]):
            if layer(f) is not None and layer(t) is not None and layer(t) < layer(f):
                bad.append(f"{f} calls {t}, a higher layer "
                           f"({os.path.dirname(f)} -> {os.path.dirname(t)}): "
                           f"{', '.join(sorted(why[(f, t)]))}")
    # 2. cycles (Tarjan)
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
    # 3. schemes: named only by the registry, never calling each other
    schemes = [f for f in srcs if f.startswith('rel/rel_')]
    for f in srcs:
        text = open(os.path.join(fw, f)).read()
        for m in re.finditer(r'\bsdr_rel_(none|sr|ec|auto)\b', text):
            if f != 'rel/rel.c' and f != f"rel/rel_{m.group(1)}.c":
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
        print(f"{v:24s} -> {' '.join(sorted(edges[v])) or '-'}")
    print(f"check_calls: {len(srcs)} files, {sum(len(e) for e in edges.values())} file-to-file "
          f"call edges, calls down the layers {' > '.join(LAYERS)}, no cycle, "
          "schemes independent")
    return 0


if __name__ == '__main__':
    # --stamp FILE (the build's own check, firmware/meson.build): on success
    # write FILE, so that ninja fails the build on a violation and reruns the
    # check only when a firmware file changes; ctags missing is a warning there.
    stamp = None
    if len(sys.argv) > 2 and sys.argv[1] == '--stamp':
        stamp = sys.argv[2]
        del sys.argv[1:3]
    if stamp:
        import io
        out, sys.stdout = sys.stdout, io.StringIO()
        rc = main()
        text, sys.stdout = sys.stdout.getvalue(), out
        if rc != 0:
            print(text, end='')
    else:
        rc = main()
    if stamp and rc in (0, 77):
        with open(stamp, 'w') as f:
            f.write('checked\n' if rc == 0 else 'not checked: universal-ctags missing\n')
        rc = 0
    sys.exit(rc)
