#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""check_interpose.py SYSROOT [--expect-clash PROBE] EXE...

Fails when an executable exports (in its dynamic symbol table) a function or
object that one of the shared libraries it needs also defines: at run time the
executable's definition interposes the library's own, so the library calls a
stranger. Copy relocations (the executable holds the copy of a library's data
object, like stdout, by design) are not clashes. That is how a static DPDK, which brings OpenSSL's libcrypto.a into
the link, once replaced ISA-L's gf_mul() with OpenSSL's and crashed the
Reed-Solomon encoder (meson.build, -Wl,--exclude-libs,ALL).

SYSROOT is where the needed libraries are looked up ('' natively, the arm64
sysroot in the cross build). --expect-clash PROBE: PROBE is an executable that
deliberately defines gf_mul and links libisal; the check must report it (so
this test can fail). Exit 0 clean, 1 clash or error.
"""
import os
import subprocess
import sys

# The linker's and C runtime's own symbols every executable defines.
RUNTIME = {"_IO_stdin_used", "_start", "main", "data_start", "__data_start", "_edata",
           "_end", "__end__", "__bss_start", "__bss_start__", "__bss_end__", "_bss_end__",
           "_fini", "_init", "__dso_handle", "__libc_csu_init", "__libc_csu_fini"}


def defined_dynamic(path):
    out = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True,
                         text=True, check=True).stdout
    syms = set()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "TtDdBbRrVvWwGgSsi":
            syms.add(parts[2].split("@")[0])
    return syms


def copy_relocated(path):
    """Data objects of a library the executable holds a copy of (R_*_COPY:
    the library is redirected to the copy on purpose, e.g. stdout, optind)."""
    out = subprocess.run(["readelf", "-rW", path], capture_output=True, text=True,
                         check=True).stdout
    return {l.split()[4].split("@")[0] for l in out.splitlines()
            if "_COPY" in l and len(l.split()) >= 5}


def needed(path):
    out = subprocess.run(["readelf", "-d", path], capture_output=True, text=True,
                         check=True).stdout
    return [l.split("[", 1)[1].rstrip("]") for l in out.splitlines() if "(NEEDED)" in l]


def lib_dirs(sysroot):
    triplets = ["aarch64-linux-gnu", "x86_64-linux-gnu"]
    dirs = []
    for base in ("lib", "usr/lib"):
        for t in triplets:
            dirs.append(os.path.join(sysroot or "/", base, t))
        dirs.append(os.path.join(sysroot or "/", base))
    return [d for d in dirs if os.path.isdir(d)]


def find_lib(name, dirs):
    for d in dirs:
        p = os.path.join(d, name)
        if os.path.exists(p):
            return os.path.realpath(p)
    return None


def clashes(exe, dirs):
    mine = defined_dynamic(exe) - RUNTIME - copy_relocated(exe)
    found = {}
    for lib in needed(exe):
        p = find_lib(lib, dirs)
        if p is None:
            raise RuntimeError("%s: needed library %s not found in %s" % (exe, lib, dirs))
        both = mine & defined_dynamic(p)
        if both:
            found[lib] = sorted(both)
    return found


def main(argv):
    if len(argv) < 2:
        print(__doc__)
        return 1
    sysroot, args = argv[1], argv[2:]
    probe = None
    if args[:1] == ["--expect-clash"]:
        probe, args = args[1], args[2:]
    dirs = lib_dirs(sysroot)
    bad = 0
    if probe:
        c = clashes(probe, dirs)
        if any("gf_mul" in v for v in c.values()):
            print("ok   the check reports the probe's gf_mul (%s)" % c)
        else:
            print("FAIL the check does not see the probe's gf_mul clash: %s" % c)
            bad += 1
    for exe in args:
        c = clashes(exe, dirs)
        if c:
            bad += 1
            for lib, syms in c.items():
                print("FAIL %s exports %d symbol(s) that %s defines: %s" % (
                    os.path.basename(exe), len(syms), lib, " ".join(syms[:20])))
        else:
            print("ok   %s exports nothing its shared libraries define" % os.path.basename(exe))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
