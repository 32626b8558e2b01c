#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# gpu-bundle.sh - build, on a CPU machine, the folder the GPU check carries
# to a machine with a GPU, torch and NCCL but no Debian packages and no
# network (x86 platform script; docs/nccl.md "The GPU check").
#
# Usage: hw/x86/gpu-bundle.sh [--out DIR] [--build DIR] [--tar]
#
#   --out DIR    the bundle folder (default out/gpu-bundle; replaced)
#   --build DIR  the build it comes from (default build-gpu: release)
#   --tar        also write DIR.tar.gz
#
# Layout: bin/sdr-dpu and bin/sdr-pipe (wrappers that set their library
# path), libexec/ (the stripped binaries), lib/ (libsdr.so.2,
# libnccl-net-sdr.so and what they need beyond glibc), lib/daemon/ (what
# sdr-dpu needs beyond glibc: DPDK's shared libraries; in pmds/ the drivers
# EAL loads, given with -d by the wrapper), python/ (the sdr package and the
# training scripts), hw/x86/rig.sh, tests/gpu/ (run.sh and its Python
# parts), DEPENDS (the newest glibc symbol version used), VERSION, README,
# SHA256SUMS. DPDK is carried, not linked statically: Debian's static DPDK
# does not link natively (libpcap.a and librte_bpf.a both define
# bpf_validate; -lsystemd has no archive); the BlueField bundle links it
# statically against its own sysroot. The folder must stay under 60 MiB
# (checked here). The last line printed is the folder's path.
# Exit: 0, 1 error, 2 usage.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
out=$top/out/gpu-bundle build=$top/build-gpu tar=0
while [ $# -gt 0 ]; do
	case $1 in
	--out) out=${2:?}; shift 2 ;;
	--build) build=${2:?}; shift 2 ;;
	--tar) tar=1; shift ;;
	-h|--help) sed -n '3,27p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "gpu-bundle: unknown argument '$1' (--help)" >&2; exit 2 ;;
	esac
done
log() { echo "gpu-bundle: $*" >&2; }
trap 'log "failed (status $?) at line $LINENO: $BASH_COMMAND"' ERR
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
LIMIT=$((60 << 20))

# 1. the build: release, DPDK shared (carried below)
if [ ! -f "$build/build.ninja" ]; then
	log "meson setup $build (release)"
	meson setup "$build" "$top" -Dbuildtype=release -Db_ndebug=true >&2
elif meson introspect --buildoptions "$build" | "$PY" -c '
import json, sys
sys.exit(0 if any(o["name"] == "dpdk_static" and o["value"] for o in json.load(sys.stdin)) else 1)'
then
	meson configure "$build" -Ddpdk_static=false >&2
fi
log "building sdr-dpu, libsdr, the NCCL plugin and sdr-pipe in $build"
# regenerate first when the tree changed (meson compile resolves target
# names with the build's previous introspection data)
ninja -C "$build" build.ninja >&2
meson compile -C "$build" sdr-dpu host/libsdr/sdr:shared_library nccl-net-sdr sdr-pipe >&2

# the targets' files, wherever the tree's layout puts them
target_file() {
	meson introspect --targets "$build" | "$PY" -c '
import json, sys
for t in json.load(sys.stdin):
    if t["name"] == sys.argv[1] and t["type"] == sys.argv[2]:
        print(t["filename"][0]); break' "$1" "$2"
}
dpu=$(target_file sdr-dpu executable)
pipe=$(target_file sdr-pipe executable)
libsdr=$(target_file sdr "shared library")
plugin=$(target_file nccl-net-sdr "shared library")
for f in "$dpu" "$pipe" "$libsdr" "$plugin"; do
	[ -f "$f" ] || { log "not built: '$f'"; exit 1; }
done

# 2. the layout
rm -rf "$out"
mkdir -p "$out"/{bin,libexec,lib/daemon/pmds,python/train,hw/x86,tests/gpu}
install -m 0755 "$dpu" "$out/libexec/sdr-dpu"
install -m 0755 "$pipe" "$out/libexec/sdr-pipe"
install -m 0644 "$libsdr" "$out/lib/libsdr.so.2"
ln -s libsdr.so.2 "$out/lib/libsdr.so"
install -m 0644 "$plugin" "$out/lib/libnccl-net-sdr.so"
strip --strip-unneeded "$out/libexec/sdr-dpu" "$out/libexec/sdr-pipe" \
	"$out/lib/libsdr.so.2" "$out/lib/libnccl-net-sdr.so"
cat >"$out/bin/sdr-pipe" <<'WRAP'
#!/bin/sh
# sdr-pipe of the GPU bundle: its libraries from the bundle, then the system's
b=$(cd "$(dirname "$0")/.." && pwd)
LD_LIBRARY_PATH="$b/lib"${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} exec "$b/libexec/sdr-pipe" "$@"
WRAP
# where EAL looks for drivers on its own (compiled in): where it exists, the
# same DPDK is installed and must be used (EAL loads every driver there, and
# a second copy of a library panics); elsewhere the bundle's
pmddir=$(pkg-config --variable=pmdsdir libdpdk 2>/dev/null || true)
[ -n "$pmddir" ] && [ -d "$pmddir" ] || pmddir=$(ls -d /usr/lib/*/dpdk/pmds-* 2>/dev/null | tail -1)
[ -d "$pmddir" ] || { log "DPDK's driver directory not found"; exit 1; }
cat >"$out/bin/sdr-dpu" <<WRAP
#!/bin/sh
# sdr-dpu of the GPU bundle: DPDK's libraries and, with EAL options (a "--"
# among the arguments), its drivers (-d) from the bundle - unless this
# machine has the same DPDK installed (its drivers in $pmddir:
# EAL loads every driver there itself, and two copies of a library do not mix)
b=\$(cd "\$(dirname "\$0")/.." && pwd)
if ls "$pmddir"/librte_mempool_ring.so* >/dev/null 2>&1; then
	export LD_LIBRARY_PATH="\$b/lib"\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
	exec "\$b/libexec/sdr-dpu" "\$@"
fi
export LD_LIBRARY_PATH="\$b/lib:\$b/lib/daemon"\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
for a in "\$@"; do
	[ "\$a" = -- ] && exec "\$b/libexec/sdr-dpu" -d "\$b/lib/daemon/pmds" "\$@"
done
exec "\$b/libexec/sdr-dpu" "\$@"
WRAP
chmod 0755 "$out/bin/sdr-dpu" "$out/bin/sdr-pipe"

# 3. shared libraries beyond glibc: what libsdr, the plugin and sdr-pipe
# need into lib/ (the Python processes load them), the rest of what sdr-dpu
# needs into lib/daemon/ (only sdr-dpu's wrapper puts it on the path)
glibc='^(linux-vdso|ld-linux|libc|libm|libdl|libpthread|librt|libresolv|libutil)\.so'
carry() { # DIR ELF...: copy the non-glibc libraries ldd resolves
	local dir=$1 so path
	shift
	ldd "$@" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u |
		while read -r so path; do
			[[ $so =~ $glibc ]] && continue
			case $so in libsdr.so*|libnccl-net-sdr.so) continue ;; esac
			[ -e "$out/lib/$so" ] || [ -e "$out/lib/daemon/$so" ] && continue
			cp -L "$path" "$dir/$so"
			strip --strip-unneeded "$dir/$so" 2>/dev/null || true
		done
}
LD_LIBRARY_PATH="$out/lib" carry "$out/lib" "$out/lib/libsdr.so.2" \
	"$out/lib/libnccl-net-sdr.so" "$out/libexec/sdr-pipe"
if ldd "$out/libexec/sdr-dpu" | grep -q 'librte_eal\.so'; then
	# the drivers EAL loads at run time from Debian's plugin directory: the
	# ring mempool (net_ring itself is linked)
	src=$(ls "$pmddir"/librte_mempool_ring.so.[0-9]* 2>/dev/null | head -1)
	[ -n "$src" ] || { log "no librte_mempool_ring in $pmddir"; exit 1; }
	# (EAL loads the files of a -d directory named *.so or *.so.<ABI>)
	cp -L "$src" "$out/lib/daemon/pmds/librte_mempool_ring.so"
	strip --strip-unneeded "$out"/lib/daemon/pmds/* 2>/dev/null || true
fi
carry "$out/lib/daemon" "$out/libexec/sdr-dpu" "$out"/lib/daemon/pmds/*
missing=$(LD_LIBRARY_PATH="$out/lib:$out/lib/daemon" ldd "$out"/libexec/* "$out"/lib/*.so* \
	"$out"/lib/daemon/*.so* "$out"/lib/daemon/pmds/* 2>/dev/null | grep 'not found' || true)
[ -z "$missing" ] || { log "unresolved libraries: $missing"; exit 1; }

# 4. Python and scripts
cp -r "$top/host/python/sdr" "$out/python/sdr"
rm -rf "$out/python/sdr/__pycache__" "$out/python/sdr/_paths.py.in"
cat >"$out/python/sdr/_paths.py" <<'PATHS'
# SPDX-License-Identifier: BSD-3-Clause
# Written by hw/x86/gpu-bundle.sh: the bundle's libsdr and sdr-pipe, found
# relative to this package (python/sdr/ in the bundle).
import os as _os
_B = _os.path.dirname(_os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))))
LIBDIR = _os.path.join(_B, "lib")
BINDIR = _os.path.join(_B, "bin")
PATHS
cp "$top/host/python/train/charlm.py" "$top/host/python/train/train_pipe.py" "$out/python/train/"
install -m 0644 "$top/hw/x86/rig.sh" "$out/hw/x86/rig.sh"
cp "$top"/tests/gpu/*.sh "$top"/tests/gpu/*.py "$out/tests/gpu/"
chmod 0755 "$out/tests/gpu/run.sh"
version=$(meson introspect --projectinfo "$build" |
	"$PY" -c 'import json,sys; print(json.load(sys.stdin)["version"])')
echo "$version $(git -C "$top" rev-parse --short HEAD 2>/dev/null || echo unknown)" \
	>"$out/VERSION"
{
	echo "# newest glibc symbol version any binary of the bundle needs (run.sh compares)"
	find "$out/libexec" "$out/lib" -type f | while IFS= read -r f; do
		{ objdump -T "$f" 2>/dev/null || true; } | { grep -oE 'GLIBC_[0-9]+\.[0-9]+' || true; }
	done | sed 's/GLIBC_//' | sort -uV | tail -n 1 | sed 's/^/glibc >= /'
} >"$out/DEPENDS"
cat >"$out/README" <<README
sdr-dpu GPU bundle $version: sdr-dpu (with DPDK's libraries), libsdr, the
NCCL net plugin libnccl-net-sdr.so, the Python package sdr and the GPU check.
Needs: x86-64 Linux, $(tail -n 1 "$out/DEPENDS"), python3 with torch 2.x, CUDA
and NCCL, one GPU. Nothing is installed. The check (under 8 minutes):

    tests/gpu/run.sh        (logs and JSON in ./sdr-gpu-check-<time>/)

NCCL over sdr-dpu elsewhere: LD_LIBRARY_PATH=<bundle>/lib NCCL_NET_PLUGIN=sdr
SDR_DPU=<daemon socket>; the torch backend: PYTHONPATH=<bundle>/python.
docs/nccl.md and docs/training.md of the source tree say more.
README
(cd "$out" && find . -type f ! -name SHA256SUMS | sed 's|^\./||' | sort |
	xargs sha256sum >SHA256SUMS)

# 5. size
size=$(du -sb "$out" | cut -f1)
log "$(du -sh "$out" | cut -f1) in $out (limit 60 MiB)"
if [ "$size" -ge "$LIMIT" ]; then
	log "the bundle is $size bytes: over 60 MiB"
	du -ab "$out" | sort -n | tail -8 >&2
	exit 1
fi
if [ $tar = 1 ]; then
	tar --sort=name --owner=0 --group=0 --numeric-owner -C "$(dirname "$out")" \
		-czf "$out.tar.gz" "$(basename "$out")"
	log "wrote $out.tar.gz"
fi
echo "$out"
