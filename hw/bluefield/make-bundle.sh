#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# make-bundle.sh - build the aarch64 install bundle for a BlueField DPU:
#   sdr-dpu-<version>-aarch64.tar.gz
#
# Usage: hw/bluefield/make-bundle.sh [--out DIR]
#
#   --out DIR   where the tarball goes (default: the cross build dir)
#
# Steps: arm64 sysroot + cross build (hw/bluefield/cross-build.sh, reused when
# up to date), `meson install --strip` of the cross build (prefix /opt/sdr-dpu)
# into a staging dir, plus the launcher, hugepage helper, systemd unit, example
# configuration, installer, README, DEPENDS (sonames needed at run time) and
# SHA256SUMS. The last line printed on stdout is the tarball's path.
# Environment: SDR_BF_BUILD, SDR_BF_SYSROOT, SDR_BF_MESON_OPTS (cross-build.sh).
# Exit: 0 done, 77 no arm64 sysroot possible here, other: error.

set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
BUILD=${SDR_BF_BUILD:-$repo/build-aarch64}
export SDR_BF_BUILD=$BUILD
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
out=
while [ $# -gt 0 ]; do
	case "$1" in
	--out) out=${2:?}; shift 2 ;;
	-h|--help) sed -n '3,18p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "make-bundle: unknown argument '$1'" >&2; exit 2 ;;
	esac
done
out=${out:-$BUILD}
log() { echo "make-bundle: $*" >&2; }

rc=0
"$here/cross-build.sh" || rc=$?
[ $rc -eq 0 ] || exit $rc

exec 8>"${TMPDIR:-/tmp}/sdr-bf-build-$(echo "$BUILD" | md5sum | cut -c1-12).lock"
flock 8

version=$(meson introspect --projectinfo "$BUILD" |
	"$PY" -c 'import json,sys; print(json.load(sys.stdin)["version"])')
[[ "$version" =~ ^[0-9A-Za-z.+~-]+$ ]] || { log "odd project version '$version'"; exit 1; }
name=sdr-dpu-$version-aarch64
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
stage=$tmp/$name

log "meson install --strip (prefix /opt/sdr-dpu) into a staging dir"
meson install -C "$BUILD" --no-rebuild --strip --quiet --destdir "$tmp/dest" >&2
inst=$tmp/dest/opt/sdr-dpu
[ -x "$inst/bin/sdr-dpu" ] || { log "the cross build installed no bin/sdr-dpu (firmware not built?)"; exit 1; }
ls "$inst"/lib/libsdr.so* >/dev/null 2>&1 || { log "the cross build installed no lib/libsdr.so*"; exit 1; }

mkdir -p "$stage"
cp -a "$inst"/. "$stage"/
install -D -m 0755 "$here/sdr-dpu-launch" "$stage/sbin/sdr-dpu-launch"
install -D -m 0755 "$here/sdr-dpu-hugepages" "$stage/sbin/sdr-dpu-hugepages"
install -D -m 0644 "$here/sdr-dpu@.service" "$stage/systemd/sdr-dpu@.service"
install -D -m 0644 "$here/example.conf" "$stage/etc/sdr-dpu/example.conf"
install -D -m 0755 "$here/install.sh" "$stage/install.sh"
sed "s/@VERSION@/$version/g" "$here/bundle-README" > "$stage/README"
echo "$version" > "$stage/VERSION"
[ -f "$repo/docs/bluefield.md" ] &&
	install -D -m 0644 "$repo/docs/bluefield.md" "$stage/share/doc/sdr-dpu/bluefield.md"

# Shared libraries the aarch64 binaries need that the bundle does not carry.
{
	echo "# sonames needed at run time by the binaries in bin/ and lib/ (checked by install.sh)"
	own=$(cd "$stage/lib" && ls 2>/dev/null | tr '\n' ' ')
	find "$stage/bin" "$stage/lib" -type f | while IFS= read -r f; do
		{ aarch64-linux-gnu-readelf -d "$f" 2>/dev/null || true; } |
			sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'
	done | sort -u | while IFS= read -r so; do
		case " $own " in *" $so "*) ;; *) echo "$so" ;; esac
	done
	# Newest glibc symbol version any binary needs (install.sh compares).
	find "$stage/bin" "$stage/lib" -type f | while IFS= read -r f; do
		{ aarch64-linux-gnu-objdump -T "$f" 2>/dev/null || true; } | { grep -oE 'GLIBC_[0-9]+\.[0-9]+' || true; }
	done | sed 's/GLIBC_//' | sort -uV | tail -n 1 | sed 's/^/# glibc >= /'
} > "$stage/DEPENDS"

(cd "$stage" && find . -type f ! -name SHA256SUMS | sed 's|^\./||' | sort |
	xargs sha256sum > SHA256SUMS)

mkdir -p "$out"
tarball=$(cd "$out" && pwd)/$name.tar.gz
tar --sort=name --owner=0 --group=0 --numeric-owner -C "$tmp" -czf "$tarball.tmp" "$name"
mv -f "$tarball.tmp" "$tarball"
log "wrote $tarball ($(du -h "$tarball" | cut -f1))"
echo "$tarball"
