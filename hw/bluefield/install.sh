#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# install.sh - install this sdr-dpu bundle on a BlueField DPU's Arm Linux.
#
# Usage (on the DPU, as root, in the unpacked bundle):
#   ./install.sh [--instance NAME [--config FILE] [--start] [--no-enable]]
#   ./install.sh --uninstall
#
#   --prefix DIR     install prefix (default /opt/sdr-dpu)
#   --instance NAME  create /etc/sdr-dpu/NAME.conf (from --config FILE, else from
#                    the example; an existing file is never overwritten) and
#                    enable sdr-dpu@NAME.service
#   --config FILE    configuration to install for --instance
#   --start          also start the instance now (systemctl enable --now)
#   --no-enable      install the configuration but do not enable the unit
#   --root DIR       install into an alternate root (image building, tests):
#                    no systemctl, no ldconfig, no architecture check
#   --force          install even if this is not aarch64 or libraries are missing
#   --uninstall      stop and disable every sdr-dpu@ instance, remove the
#                    installed files (configurations in /etc/sdr-dpu are kept)
#
# What goes where: PREFIX/{bin,sbin,lib,include,share}, the unit as
# /etc/systemd/system/sdr-dpu@.service, configurations in /etc/sdr-dpu/,
# PREFIX/lib registered in /etc/ld.so.conf.d/sdr-dpu.conf.

set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
die() { echo "install.sh: $*" >&2; exit 1; }
say() { echo "install.sh: $*"; }

prefix=/opt/sdr-dpu root='' instance='' config='' start=0 enable=1 force=0 uninstall=0
while [ $# -gt 0 ]; do
	case "$1" in
	--prefix) prefix=${2:?}; shift 2 ;;
	--root) root=${2:?}; shift 2 ;;
	--instance) instance=${2:?}; shift 2 ;;
	--config) config=${2:?}; shift 2 ;;
	--start) start=1; shift ;;
	--no-enable) enable=0; shift ;;
	--force) force=1; shift ;;
	--uninstall) uninstall=1; shift ;;
	-h|--help) sed -n '3,25p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) die "unknown argument '$1' (see --help)" ;;
	esac
done
case "$prefix" in /*) ;; *) die "--prefix must be absolute" ;; esac
[[ "$prefix" =~ ^[A-Za-z0-9/_.+-]+$ ]] || die "unsupported characters in --prefix"
if [ -n "$root" ]; then
	root=$(mkdir -p "$root" && cd "$root" && pwd)
fi
if [ -n "$instance" ] && ! [[ "$instance" =~ ^[A-Za-z0-9_.-]+$ ]]; then
	die "bad instance name '$instance' (letters, digits, _ . -)"
fi
[ -z "$config" ] || [ -n "$instance" ] || die "--config needs --instance"
[ -z "$config" ] || [ -r "$config" ] || die "cannot read $config"

live=0; [ -z "$root" ] && live=1
if [ $live = 1 ]; then
	[ "$(id -u)" = 0 ] || die "run as root (or use --root DIR)"
	if [ "$(uname -m)" != aarch64 ] && [ $force = 0 ]; then
		die "this bundle is for aarch64 (BlueField Arm cores), this is $(uname -m); --force to override"
	fi
fi
have_systemd=0
[ $live = 1 ] && command -v systemctl >/dev/null && [ -d /run/systemd/system ] && have_systemd=1

P=$root$prefix
unit=$root/etc/systemd/system/sdr-dpu@.service
manifest=$P/share/sdr-dpu/MANIFEST

if [ $uninstall = 1 ]; then
	if [ $have_systemd = 1 ]; then
		for u in $(systemctl list-units --all --plain --no-legend 'sdr-dpu@*' | awk '{print $1}'); do
			systemctl disable --now "$u" || true
		done
		for l in /etc/systemd/system/*.wants/sdr-dpu@*.service; do
			[ -e "$l" ] || [ -L "$l" ] || continue
			systemctl disable "$(basename "$l")" || true
		done
	fi
	if [ -f "$manifest" ]; then
		while IFS= read -r f; do rm -f "$root$f"; done < "$manifest"
		rm -f "$manifest"
	fi
	rm -f "$unit" "$root/etc/ld.so.conf.d/sdr-dpu.conf"
	find "$P" -depth -type d -empty -delete 2>/dev/null || true
	[ $live = 1 ] && ldconfig
	[ $have_systemd = 1 ] && systemctl daemon-reload
	say "removed sdr-dpu from $prefix (configurations in /etc/sdr-dpu kept)"
	exit 0
fi

for d in bin sbin lib systemd etc/sdr-dpu; do
	[ -d "$here/$d" ] || die "bundle is incomplete: $d/ missing in $here"
done

# ---- files -----------------------------------------------------------------
mkdir -p "$P/share/sdr-dpu" "$P/share/doc/sdr-dpu"
tmpman=$(mktemp)
trap 'rm -f "$tmpman"' EXIT
(cd "$here" && find bin sbin lib include share -mindepth 1 \( -type f -o -type l \) 2>/dev/null) |
	sort | while IFS= read -r f; do
		mkdir -p "$(dirname "$P/$f")"
		cp -P --preserve=mode,links "$here/$f" "$P/$f.new.$$"
		mv -f "$P/$f.new.$$" "$P/$f"
		echo "$prefix/$f" >> "$tmpman"
	done
for f in README DEPENDS VERSION; do
	[ -f "$here/$f" ] || continue
	cp "$here/$f" "$P/share/doc/sdr-dpu/$f"
	echo "$prefix/share/doc/sdr-dpu/$f" >> "$tmpman"
done
cp "$here/etc/sdr-dpu/example.conf" "$P/share/doc/sdr-dpu/example.conf"
echo "$prefix/share/doc/sdr-dpu/example.conf" >> "$tmpman"
# pkg-config: the bundle's .pc files say prefix=/opt/sdr-dpu
if [ "$prefix" != /opt/sdr-dpu ]; then
	for pc in "$P"/lib/pkgconfig/*.pc; do
		[ -f "$pc" ] && sed -i "s|^prefix=/opt/sdr-dpu\$|prefix=$prefix|" "$pc"
	done
fi
mv "$tmpman" "$manifest"
trap - EXIT

mkdir -p "$(dirname "$unit")"
sed "s|/opt/sdr-dpu|$prefix|g" "$here/systemd/sdr-dpu@.service" > "$unit"
chmod 0644 "$unit"
mkdir -p "$root/etc/sdr-dpu"
chmod 0755 "$root/etc/sdr-dpu"
[ -e "$root/etc/sdr-dpu/example.conf" ] ||
	install -m 0644 "$here/etc/sdr-dpu/example.conf" "$root/etc/sdr-dpu/example.conf"
mkdir -p "$root/etc/ld.so.conf.d"
echo "$prefix/lib" > "$root/etc/ld.so.conf.d/sdr-dpu.conf"
say "installed into $root$prefix, unit $unit"

# ---- run-time libraries -------------------------------------------------------
if [ $live = 1 ]; then
	ldconfig
	missing=""
	if [ -f "$here/DEPENDS" ]; then
		while IFS= read -r so; do
			[ -z "$so" ] || [ "${so:0:1}" = "#" ] && continue
			ldconfig -p | grep -q "^[[:space:]]*$so " || missing="$missing $so"
		done < "$here/DEPENDS"
	fi
	need_glibc=$(sed -n 's/^# glibc >= \([0-9.]*\)$/\1/p' "$here/DEPENDS" 2>/dev/null)
	have_glibc=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
	if [ -n "$need_glibc" ] && [ -n "$have_glibc" ] &&
	   [ "$(printf '%s\n%s\n' "$need_glibc" "$have_glibc" | sort -V | head -n 1)" != "$need_glibc" ]; then
		missing="$missing glibc>=$need_glibc(have $have_glibc)"
	fi
	if [ -n "$missing" ]; then
		echo "install.sh: libraries missing on this system:$missing" >&2
		echo "install.sh: install them with the DPU OS's package manager (docs/bluefield.md lists the packages)" >&2
		[ $force = 1 ] || die "missing libraries (use --force to install anyway)"
	fi
	"$prefix/bin/sdr-dpu" --version || die "$prefix/bin/sdr-dpu --version failed"
fi

# ---- instance ----------------------------------------------------------------
if [ -n "$instance" ]; then
	conf=$root/etc/sdr-dpu/$instance.conf
	if [ -e "$conf" ]; then
		say "keeping existing $conf"
	else
		install -m 0644 "${config:-$here/etc/sdr-dpu/example.conf}" "$conf"
		say "created $conf - edit it (ALLOW, IP, PEER_MAC, LCORES) before starting"
	fi
	"$P/sbin/sdr-dpu-launch" --check "$conf" || die "$conf is not valid"
fi
if [ $have_systemd = 1 ]; then
	systemctl daemon-reload
	if [ -n "$instance" ] && [ $enable = 1 ]; then
		if [ $start = 1 ]; then
			systemctl enable --now "sdr-dpu@$instance.service"
			systemctl --no-pager status "sdr-dpu@$instance.service" || true
		else
			systemctl enable "sdr-dpu@$instance.service"
		fi
	fi
elif [ -n "$instance" ] && [ $enable = 1 ] && [ -n "$root" ]; then
	# Offline image: enable by the symlink systemctl would make.
	mkdir -p "$root/etc/systemd/system/multi-user.target.wants"
	ln -sfn ../sdr-dpu@.service \
		"$root/etc/systemd/system/multi-user.target.wants/sdr-dpu@$instance.service"
	say "enabled sdr-dpu@$instance.service in $root"
fi
say "done. Check: systemctl status sdr-dpu@<instance>; journalctl -u sdr-dpu@<instance>"
