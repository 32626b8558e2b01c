#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""libsdr exports its API and nothing else.

Usage: check_exports.py NM LIBSDR_SO MAP HEADER...

The API is the set of (non-static) functions declared in the installed
headers (host/libsdr/sdr.h and the common/ headers it installs and includes). Checks
that `NM -D --defined-only LIBSDR_SO` lists exactly that set (apart from the
version nodes of MAP, e.g. LIBSDR_2), every symbol with the version of the
node MAP lists it in, and that MAP's global lists together are the same set
too. MAP has one node per release (LIBSDR_2, LIBSDR_2.1, ...), each inheriting
the one before; the first ends with 'local: *;'; a symbol is in one node only,
except the compat entries: besides its default version (NAME@@NODE), a symbol
that moved to a later node is also exported under the node it was first
released in (NAME@OLD, from host/libsdr/compat.c; OLD lists it too) so that
programs linked then still start: exactly the pairs of COMPAT, each OLD a node
before NAME's.
"""
import re
import subprocess
import sys

# (symbol, the node it was first released in): compat entries of host/libsdr/compat.c
COMPAT = {
    ("sdr_scheme_check", "LIBSDR_2"),
    ("sdr_scheme_format", "LIBSDR_2"),
    ("sdr_scheme_parse", "LIBSDR_2"),
    ("sdr_ctx_stats_get", "LIBSDR_2"),  # 2.2: the struct grew (the 2.0 part only)
}

def strip_c(text):
    """Comments, preprocessor lines and C++ guards out; bodies folded."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r"\\\n", " ", text)
    # extern "C" { ... } of the __cplusplus guards
    text = re.sub(r'#ifdef\s+__cplusplus\s*\n[^#]*#endif', " ", text)
    text = "\n".join(l for l in text.splitlines() if not l.lstrip().startswith("#"))
    # fold innermost { ... } (struct and inline function bodies) until none is left
    while True:
        t = re.sub(r"\{[^{}]*\}", ";", text)
        if t == text:
            return text
        text = t


def declared(headers):
    names = {}
    for h in headers:
        for stmt in strip_c(open(h).read()).split(";"):
            stmt = " ".join(stmt.split())
            m = re.search(r"\b(sdr_\w+)\s*\(", stmt)
            if not m or re.search(r"\b(static|typedef)\b", stmt):
                continue
            names[m.group(1)] = h
    return names


def map_nodes(path):
    """[(node, parent, {symbol})] of MAP in order; exits on a malformed map."""
    text = re.sub(r"/\*.*?\*/", " ", open(path).read(), flags=re.S)
    text = re.sub(r"#[^\n]*", " ", text)
    nodes, pos = [], 0
    node_re = re.compile(r"\s*([\w.]+)\s*\{(.*?)\}\s*([\w.]*)\s*;", flags=re.S)
    while text[pos:].strip():
        m = node_re.match(text, pos)
        if not m:
            sys.exit("FAIL: %s: expected version nodes 'NAME { global: ...; } [PARENT];'" % path)
        node, body, parent = m.group(1), m.group(2), m.group(3) or None
        g = re.search(r"global\s*:(.*?)(local\s*:|$)", body, flags=re.S)
        if not g:
            sys.exit("FAIL: %s: node %s needs 'global:'" % (path, node))
        has_local = re.search(r"local\s*:\s*\*\s*;", body) is not None
        if has_local != (not nodes):
            sys.exit("FAIL: %s: 'local: *;' belongs in the first node (only), not in %s"
                     % (path, node))
        if nodes and parent != nodes[-1][0]:
            sys.exit("FAIL: %s: node %s must inherit %s (the node before it), not %s"
                     % (path, node, nodes[-1][0], parent))
        nodes.append((node, parent, {s.strip() for s in g.group(1).split(";") if s.strip()}))
        pos = m.end()
    if not nodes:
        sys.exit("FAIL: %s: no version node" % path)
    return nodes


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    nm, lib, mapfile, headers = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    nodes = map_nodes(mapfile)
    version_of, in_map, twice, listed_compat = {}, set(), [], set()
    for node, _, syms in nodes:
        for sym in sorted(in_map & syms):  # a compat entry's node, then its own
            if (sym, version_of[sym]) in COMPAT:
                listed_compat.add((sym, version_of[sym]))
            else:
                twice.append(sym)
        in_map |= syms
        for sym in syms:
            version_of[sym] = node
    api = declared(headers)
    out = subprocess.run([nm, "-D", "--defined-only", lib], check=True,
                         stdout=subprocess.PIPE, universal_newlines=True).stdout
    exported, unversioned, compat = set(), [], set()
    order = [n[0] for n in nodes]
    for line in out.splitlines():
        f = line.split()
        if len(f) < 3:
            continue
        kind, sym = f[1], f[2]
        name, _, ver = sym.partition("@")
        default = not ver or ver.startswith("@")
        ver = ver.lstrip("@")
        if kind == "A" and name in order:  # a version node itself
            continue
        if not default:  # NAME@OLD: a compat entry, checked against COMPAT below
            compat.add((name, ver))
            continue
        exported.add(name)
        if ver != version_of.get(name, ver):
            unversioned.append((sym, version_of[name]))
    print("%s: %d symbols exported, %d functions declared in %s, %d in %s (%s)" % (
        lib, len(exported), len(api), " ".join(h.rsplit("/", 1)[-1] for h in headers),
        len(in_map), mapfile.rsplit("/", 1)[-1],
        ", ".join("%s: %d" % (n[0], len(n[2])) for n in nodes)))
    bad = 0
    if len(api) < 10 or "sdr_ctx_open" not in api:
        print("FAIL: the header parse found too little: %s" % sorted(api))
        bad += 1
    for s in sorted(exported - set(api)):
        print("FAIL: exported but not declared in the installed headers: %s" % s)
        bad += 1
    for s in sorted(set(api) - exported):
        print("FAIL: declared in %s but not exported: %s" % (api[s], s))
        bad += 1
    for s in sorted(in_map ^ set(api)):
        print("FAIL: %s: %s %s" % (mapfile, s, "listed but not declared in a header"
                                   if s in in_map else "declared but not listed"))
        bad += 1
    for s in twice:
        print("FAIL: %s: %s listed in two version nodes" % (mapfile, s))
        bad += 1
    for s, node in unversioned:
        print("FAIL: %s: not of version %s" % (s, node))
        bad += 1
    for name, ver in sorted(compat - COMPAT):
        print("FAIL: %s@%s exported but not a compat entry of COMPAT" % (name, ver))
        bad += 1
    for name, ver in sorted(COMPAT - compat):
        print("FAIL: compat entry %s@%s not exported (host/libsdr/compat.c)" % (name, ver))
        bad += 1
    for name, ver in sorted(COMPAT - listed_compat):
        print("FAIL: %s: compat entry %s@%s needs %s listed in node %s too"
              % (mapfile, name, ver, name, ver))
        bad += 1
    for name, ver in sorted(COMPAT & compat):
        if name not in version_of or ver not in order or \
                order.index(ver) >= order.index(version_of[name]):
            print("FAIL: %s@%s: compat node must come before the symbol's node (%s)"
                  % (name, ver, version_of.get(name)))
            bad += 1
    if bad:
        sys.exit("FAIL: %d problem(s)" % bad)
    print("PASS: exports == API (%s); compat: %s" % (", ".join(sorted(exported)),
          ", ".join("%s@%s" % c for c in sorted(compat))))


main()
