#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# check-bundle.sh - test of the BlueField install bundle (meson suite 'bluefield').
#
# Makes the bundle with hw/bluefield/make-bundle.sh (reusing build-aarch64/ and
# the arm64 sysroot when present) and checks:
#   - tarball layout: one top directory sdr-dpu-<version>-aarch64, every
#     required file, no absolute or '..' paths, SHA256SUMS verifies;
#   - readelf: sdr-dpu and libsdr (and every ELF file in it) are AArch64 ELF64;
#   - pkg-config file: prefix /opt/sdr-dpu;
#   - systemd unit: `systemd-analyze verify` (paths pointed at the unpacked
#     bundle) when available, plus structural checks;
#   - configuration: the example parses through sdr-dpu-launch --check and
#     --dry-run gives the expected command line; malformed files are rejected;
#     every key is documented in docs/bluefield.md;
#   - the bundled sdr-dpu --version and --help run under qemu-aarch64-static,
#     and --help lists every option the launcher can emit;
#   - hugepage helper against a fake sysfs; install.sh --root and --uninstall.
# Exit: 0 pass, 1 fail, 77 skip (only when the arm64 packages are unavailable).

set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
SYSROOT=${SDR_BF_SYSROOT:-$repo/.sysroot-arm64}
export SDR_BF_SYSROOT=$SYSROOT

fails=0 checks=0
ok() { checks=$((checks + 1)); echo "ok   $*"; }
bad() { checks=$((checks + 1)); fails=$((fails + 1)); echo "FAIL $*"; }
check() { # description command...
	local d=$1; shift
	if "$@"; then ok "$d"; else bad "$d"; fi
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

rc=0
"$repo/hw/bluefield/make-bundle.sh" --out "$tmp/out" > "$tmp/bundle.path" 2> "$tmp/bundle.log" || rc=$?
if [ $rc -eq 77 ]; then
	tail -n 5 "$tmp/bundle.log"
	echo "SKIP: arm64 cross packages unavailable, bundle not built"
	exit 77
elif [ $rc -ne 0 ]; then
	tail -n 40 "$tmp/bundle.log"
	echo "FAIL make-bundle.sh exited $rc"
	exit 1
fi
tarball=$(tail -n 1 "$tmp/bundle.path")
version=$(meson introspect --projectinfo "${SDR_BF_BUILD:-$repo/build-aarch64}" |
	/usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["version"])')
top=sdr-dpu-$version-aarch64
echo "bundle: $tarball"
check "tarball is named $top.tar.gz" [ "$(basename "$tarball")" = "$top.tar.gz" ]

# ---- layout ----------------------------------------------------------------------
tar tzf "$tarball" > "$tmp/list" || bad "tar can list the tarball"
check "every entry is under $top/" \
	bash -c "! grep -v '^$top/' '$tmp/list' | grep -q ."
check "no absolute or .. paths" bash -c "! grep -qE '(^/|(^|/)\\.\\.(/|\$))' '$tmp/list'"
check "entries owned by root (uid 0)" \
	bash -c "tar tvzf '$tarball' --numeric-owner | awk '{print \$2}' | sort -u | grep -qx '0/0'"
for f in bin/sdr-dpu sbin/sdr-dpu-launch sbin/sdr-dpu-hugepages systemd/sdr-dpu@.service \
	 etc/sdr-dpu/example.conf install.sh README VERSION DEPENDS SHA256SUMS include/sdr/sdr.h; do
	check "bundle has $f" grep -qx "$top/$f" "$tmp/list"
done
check "bundle has lib/libsdr.so*" grep -qE "^$top/lib/libsdr\\.so" "$tmp/list"
check "bundle has lib/pkgconfig/*.pc" grep -qE "^$top/lib/pkgconfig/[^/]+\\.pc\$" "$tmp/list"

mkdir -p "$tmp/x"
tar xzf "$tarball" -C "$tmp/x" || bad "tarball extracts"
B=$tmp/x/$top
check "SHA256SUMS verifies" bash -c "cd '$B' && sha256sum --quiet -c SHA256SUMS"
for f in bin/sdr-dpu sbin/sdr-dpu-launch sbin/sdr-dpu-hugepages install.sh; do
	check "$f is executable" [ -x "$B/$f" ]
done
check "VERSION says $version" [ "$(cat "$B/VERSION")" = "$version" ]

# ---- ELF -------------------------------------------------------------------------
elf_is_aarch64() {
	local h
	h=$(readelf -h "$1" 2>/dev/null) || return 1
	grep -qE 'Machine:[[:space:]]+AArch64' <<<"$h" && grep -qE 'Class:[[:space:]]+ELF64' <<<"$h"
}
check "bin/sdr-dpu is an AArch64 ELF64 (readelf)" elf_is_aarch64 "$B/bin/sdr-dpu"
check "bin/sdr-dpu uses the aarch64 dynamic loader" \
	bash -c "readelf -l '$B/bin/sdr-dpu' | grep -q 'ld-linux-aarch64.so.1'"
libsdr=$(find "$B/lib" -name 'libsdr.so.*' -type f | head -n 1)
check "libsdr ($(basename "${libsdr:-none}")) is an AArch64 ELF64 shared object" \
	bash -c "[ -n '$libsdr' ] && readelf -h '$libsdr' | grep -qE 'Type:[[:space:]]+DYN' && readelf -h '$libsdr' | grep -qE 'Machine:[[:space:]]+AArch64'"
check "libsdr has SONAME libsdr.so.N" \
	bash -c "readelf -d '$libsdr' | grep -qE 'SONAME.*\\[libsdr\\.so\\.[0-9]+\\]'"
nonarm=""
while IFS= read -r f; do
	if head -c 4 "$f" | grep -q $'\x7fELF'; then
		elf_is_aarch64 "$f" || nonarm="$nonarm ${f#"$B"/}"
	fi
done < <(find "$B" -type f)
check "every ELF file in the bundle is AArch64${nonarm:+ (not:$nonarm)}" [ -z "$nonarm" ]
check "DPDK is linked statically into sdr-dpu (no librte_*.so NEEDED)" \
	bash -c "! readelf -d '$B/bin/sdr-dpu' | grep -q 'NEEDED.*librte_'"
check "DEPENDS lists libc.so.6" grep -qx 'libc.so.6' "$B/DEPENDS"
check "DEPENDS states the glibc version needed ($(grep '^# glibc' "$B/DEPENDS"))" \
	grep -qE '^# glibc >= 2\.[0-9]+$' "$B/DEPENDS"

pc=$(find "$B/lib/pkgconfig" -name '*.pc' | head -n 1)
check "$(basename "${pc:-none.pc}"): prefix=/opt/sdr-dpu" grep -qx 'prefix=/opt/sdr-dpu' "${pc:-/dev/null}"
if [ -n "$pc" ]; then
	pcname=$(basename "$pc" .pc)
	check "pkg-config $pcname: -I/opt/sdr-dpu/include/sdr and -lsdr" bash -c \
		"PKG_CONFIG_LIBDIR='$B/lib/pkgconfig' pkg-config --cflags --libs $pcname | grep -q -- '-I/opt/sdr-dpu/include/sdr' &&
		 PKG_CONFIG_LIBDIR='$B/lib/pkgconfig' pkg-config --libs $pcname | grep -q -- '-lsdr'"
fi

# ---- systemd unit ----------------------------------------------------------------
U=$B/systemd/sdr-dpu@.service
unit_get() { sed -n "s/^$1=//p" "$U"; }
check "unit: ExecStart runs the launcher on /etc/sdr-dpu/%i.conf" \
	[ "$(unit_get ExecStart)" = "/opt/sdr-dpu/sbin/sdr-dpu-launch /etc/sdr-dpu/%i.conf" ]
check "unit: Restart=on-failure" [ "$(unit_get Restart)" = on-failure ]
check "unit: sections [Unit] [Service] [Install]" bash -c \
	"grep -qx '\\[Unit\\]' '$U' && grep -qx '\\[Service\\]' '$U' && grep -qx '\\[Install\\]' '$U'"
check "unit: every ExecStart/ExecStartPre program is in the bundle" bash -c '
	for p in $(sed -n "s/^ExecStart\(Pre\)\{0,1\}=[+-]\{0,1\}\([^ ]*\).*/\2/p" "$1"); do
		[ -x "$2/${p#/opt/sdr-dpu/}" ] || { echo "missing $p"; exit 1; }
	done' _ "$U" "$B"
check "unit: hardening (NoNewPrivileges, ProtectSystem, ProtectHome, PrivateTmp)" bash -c \
	"grep -qx 'NoNewPrivileges=yes' '$U' && grep -qx 'ProtectSystem=full' '$U' &&
	 grep -qx 'ProtectHome=yes' '$U' && grep -qx 'PrivateTmp=yes' '$U'"
if command -v systemd-analyze >/dev/null; then
	mkdir -p "$tmp/unit"
	sed "s|/opt/sdr-dpu|$B|g" "$U" > "$tmp/unit/sdr-dpu@.service"
	out=$(systemd-analyze verify "$tmp/unit/sdr-dpu@check.service" 2>&1); r=$?
	if [ $r -eq 0 ] && [ -z "$out" ]; then
		ok "systemd-analyze verify sdr-dpu@check.service: clean"
	else
		echo "$out"; bad "systemd-analyze verify sdr-dpu@check.service (exit $r)"
	fi
else
	echo "note: systemd-analyze not installed - structural unit checks only"
fi

# ---- configuration and launcher --------------------------------------------------
L=$B/sbin/sdr-dpu-launch
C=$B/etc/sdr-dpu/example.conf
check "example.conf passes sdr-dpu-launch --check" "$L" --check "$C"
words=()
dry=$("$L" --dry-run "$C" 2>&1) || bad "sdr-dpu-launch --dry-run example.conf"
echo "dry-run: $dry"
eval "words=($dry)"
want_seq() { # expect these consecutive words somewhere in the command line
	local i j n=$# a=("$@")
	for ((i = 0; i + n <= ${#words[@]}; i++)); do
		for ((j = 0; j < n; j++)); do [ "${words[i + j]}" = "${a[j]}" ] || continue 2; done
		return 0
	done
	return 1
}
check "dry-run: runs the bundled bin/sdr-dpu" [ "${words[0]}" = "$B/bin/sdr-dpu" ]
check "dry-run: LCORES -> -l 0-3" want_seq -l 0-3
check "dry-run: ALLOW -> -a with mlx5 devargs" want_seq -a 0000:03:00.0,dv_flow_en=1
check "dry-run: FILE_PREFIX default from instance" want_seq --file-prefix=sdr-dpu-example
check "dry-run: SOCKET default /run/sdr-dpu/<instance>.sock after --" \
	want_seq -- --name /run/sdr-dpu/example.sock
check "dry-run: IP and PEER_MAC" want_seq --ip 192.0.2.10 --peer-mac 02:00:00:00:00:02
check "dry-run: link/reliability defaults" want_seq --mtu 4096 --chunk-pkts 16 --max-msg 64M --generations 4
check "dry-run: ICRC=yes emits no --no-icrc" bash -c "! grep -q -- '--no-icrc' <<<'$dry'"
check "launcher --get HUGEPAGES" [ "$("$L" --get HUGEPAGES "$C")" = 1024 ]

cfg() { printf '%b' "$2" > "$tmp/$1.conf"; echo "$tmp/$1.conf"; }
reject() { # description file
	if "$L" --check "$2" >/dev/null 2>"$tmp/err"; then bad "rejects $1"
	else ok "rejects $1: $(cat "$tmp/err")"; fi
}
base='IP=10.0.0.1\nPEER_MAC=02:00:00:00:00:01\n'
reject "unknown key" "$(cfg k1 "${base}FROB=1\n")"
reject "repeated key" "$(cfg k2 "${base}MTU=1024\nMTU=2048\n")"
reject "bad IPv4" "$(cfg k3 'IP=10.0.0.300\nPEER_MAC=02:00:00:00:00:01\n')"
reject "bad MAC" "$(cfg k4 'IP=10.0.0.1\nPEER_MAC=02:00:00:00:01\n')"
reject "bad MTU" "$(cfg k5 "${base}MTU=1500\n")"
reject "non-numeric PORT" "$(cfg k6 "${base}PORT=0;reboot\n")"
reject "missing IP" "$(cfg k7 'PEER_MAC=02:00:00:00:00:01\n')"
reject "line without =" "$(cfg k8 "${base}just words\n")"
reject "HUGE=no without MEMORY_MB" "$(cfg k9 "${base}HUGE=no\n")"
q=$(cfg q1 "${base}VDEV=\"net_ring0 net_ring1\"\nEAL_EXTRA='--log-level=*:debug'\nICRC=no\nHUGE=no\nMEMORY_MB=256\n")
dry=$("$L" --dry-run --bin /x/sdr-dpu "$q" 2>&1) || bad "dry-run of a quoted config"
eval "words=($dry)"
check "quoted list value -> two --vdev words" want_seq --vdev=net_ring0 --vdev=net_ring1
check "glob characters are passed literally" want_seq '--log-level=*:debug'
check "HUGE=no MEMORY_MB=256 -> -m 256 --no-huge" want_seq -m 256 --no-huge
check "ICRC=no -> --no-icrc" want_seq --no-icrc
undoc=""
keys=$(grep -oE '\[[A-Z_]+\]=[a-z0-9]+' "$L" | sed 's/^\[\([A-Z_]*\)\].*/\1/' | sort -u)
for k in $keys; do
	grep -q "\`$k\`" "$repo/docs/bluefield.md" 2>/dev/null || undoc="$undoc $k"
done
check "docs/bluefield.md documents every config key${undoc:+ (missing:$undoc)}" \
	[ -n "$keys" -a -z "$undoc" ]

# ---- the bundled binary under qemu -----------------------------------------------
Q="qemu-aarch64-static -cpu cortex-a72 -L $SYSROOT"
ver=$($Q "$B/bin/sdr-dpu" --version 2>&1); r=$?
echo "sdr-dpu --version: $ver"
check "qemu: sdr-dpu --version exits 0 and prints $version" bash -c "[ $r -eq 0 ] && grep -qF -- '$version' <<<'$ver'"
$Q "$B/bin/sdr-dpu" --help > "$tmp/help" 2>&1; r=$?
check "qemu: sdr-dpu --help exits 0 with a usage text" bash -c "[ $r -eq 0 ] && grep -q 'Usage' '$tmp/help'"
missing=""
for o in $(grep -oE '"--?[a-z-]+"' "$L" | tr -d '"' | sort -u); do
	case "$o" in --dry-run|--check|--get|--bin|--help|--|-h|-a|-l|-m|--vdev|--main-lcore|--no-huge|--file-prefix|--log-level) continue ;; esac
	grep -q -- "$o" "$tmp/help" || missing="$missing $o"
done
for o in --name --port --ip --mac --peer-mac --link --mtu --chunk-pkts --max-msg --generations \
	 --workers --idle-us --idle-spins --cts-resend-ms --mbufs --no-icrc --stats-interval --stats-json; do
	grep -q -- "$o" "$L" || missing="$missing (launcher:$o)"
	grep -q -- "$o" "$tmp/help" || missing="$missing $o"
done
check "sdr-dpu --help lists every option the launcher emits${missing:+ (missing:$missing)}" [ -z "$missing" ]
$Q "$B/bin/sdr-dpu" --frobnicate >/dev/null 2>&1; r=$?
check "qemu: sdr-dpu rejects an unknown option (exit $r != 0)" [ $r -ne 0 ]

# ---- hugepage helper (fake sysfs) ------------------------------------------------
H=$B/sbin/sdr-dpu-hugepages
F=$tmp/sys
mkdir -p "$F/kernel/mm/hugepages/hugepages-2048kB"
echo 16 > "$F/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"
"$H" --sysfs "$F" --config "$C" >/dev/null
check "hugepages: config HUGEPAGES=1024 raises the 2M pool 16 -> 1024" \
	[ "$(cat "$F/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages")" = 1024 ]
"$H" --sysfs "$F" --pages 8 >/dev/null
check "hugepages: never lowers a reservation" \
	[ "$(cat "$F/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages")" = 1024 ]
check "hugepages: a missing 1G pool is an error" bash -c "! '$H' --sysfs '$F' --pages 2 --size 1G 2>/dev/null"
check "hugepages: HUGE=no config needs nothing" "$H" --sysfs "$F" --config "$q"

# ---- installer into an alternate root --------------------------------------------
R=$tmp/root
"$B/install.sh" --root "$R" --instance a > "$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; bad "install.sh --root"; }
for f in opt/sdr-dpu/bin/sdr-dpu opt/sdr-dpu/sbin/sdr-dpu-launch opt/sdr-dpu/include/sdr/sdr.h \
	 etc/systemd/system/sdr-dpu@.service etc/sdr-dpu/a.conf etc/sdr-dpu/example.conf \
	 etc/ld.so.conf.d/sdr-dpu.conf opt/sdr-dpu/share/sdr-dpu/MANIFEST; do
	check "install --root: $f" [ -e "$R/$f" ]
done
check "install --root: libsdr in /opt/sdr-dpu/lib" bash -c "ls '$R'/opt/sdr-dpu/lib/libsdr.so.* >/dev/null"
check "install --root: sdr-dpu@a enabled (wants link)" \
	[ -L "$R/etc/systemd/system/multi-user.target.wants/sdr-dpu@a.service" ]
check "install --root: installed binary is the bundle's" cmp -s "$B/bin/sdr-dpu" "$R/opt/sdr-dpu/bin/sdr-dpu"
cp "$R/etc/sdr-dpu/a.conf" "$tmp/a.before"
"$B/install.sh" --root "$R" --instance a >/dev/null 2>&1
check "install --root again: existing a.conf is kept" cmp -s "$tmp/a.before" "$R/etc/sdr-dpu/a.conf"
"$B/install.sh" --root "$R" --uninstall >/dev/null 2>&1 || bad "install.sh --uninstall"
check "uninstall: binaries and unit removed" bash -c \
	"[ ! -e '$R/opt/sdr-dpu/bin/sdr-dpu' ] && [ ! -e '$R/etc/systemd/system/sdr-dpu@.service' ]"
check "uninstall: configurations kept" [ -f "$R/etc/sdr-dpu/a.conf" ]

if [ "$(uname -m)" != aarch64 ]; then
	out=$("$B/install.sh" --prefix "$tmp/never" 2>&1); r=$?
	check "install.sh refuses a live install on $(uname -m) (exit $r: ${out##*: })" \
		[ $r -ne 0 -a ! -e "$tmp/never" ]
fi

echo "bundle check: $checks checks, $fails failed"
[ $fails -eq 0 ] || exit 1
exit 0
