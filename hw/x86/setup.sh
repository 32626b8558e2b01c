#!/usr/bin/env bash
# Set-up shared by the demo and the test command: install what is missing
# from Debian (when root), then configure and build into ./build.
# Usage: hw/x86/setup.sh [build-dir] [meson options...]
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
bdir=${1:-$top/build}
[ $# -gt 0 ] && shift
# What the build and every test need on a fresh Debian 12 (installed without
# recommends): libclang-rt-dev holds clang's libFuzzer and sanitizer runtimes
# (only recommended by clang); binutils: nm/readelf (libsdr_exports,
# check-bundle); procps: pgrep (perf_smoke); bc (SR dead-peer tests);
# systemd: systemd-analyze verify of the bundle's unit (check-bundle);
# python3-torch: the torch.distributed backend's tests (tests/python);
# ethtool: the bump-in-the-wire rig turns veth offloads off (bridge test,
# hw/x86/bridge-netns.sh); libmicrohttpd-dev: the daemon's --metrics HTTP
# server; prometheus: promtool and a real server scraping it (tests); curl:
# the metrics tests; tmux: sdr-top's terminal test (sdr-top is Python's curses,
# on ncurses); clang-format: the C style check (clang_format). The
# BlueField cross compiler and qemu are installed by hw/bluefield/make-sysroot.sh.
pkgs="meson ninja-build pkg-config gcc clang libclang-rt-dev binutils python3
      libdpdk-dev dpdk dpdk-dev libisal-dev libpcap-dev
      iproute2 procps bc systemd tshark python3-scapy python3-matplotlib gnuplot-nox
      universal-ctags python3-torch ethtool libmicrohttpd-dev prometheus curl tmux
      clang-format"
missing=""
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
	if [ "$(id -u)" = 0 ]; then
		echo "setup: installing:$missing"
		export DEBIAN_FRONTEND=noninteractive
		# tshark asks whether non-root users may capture; answer no
		echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
		apt-get update -qq
		# shellcheck disable=SC2086
		apt-get install -y -qq --no-install-recommends $missing >/dev/null
	else
		echo "setup: missing Debian packages:$missing"
		echo "setup: run as root (or: sudo apt-get install$missing)"
		exit 1
	fi
fi
log=$(mktemp)
trap 'rm -f "$log"' EXIT
quiet() { # run quietly; on failure show what it said
	"$@" >"$log" 2>&1 || { tail -40 "$log"; echo "setup: FAILED: $*" >&2; exit 1; }
}
if [ ! -f "$bdir/build.ninja" ]; then
	quiet meson setup "$bdir" "$top" "$@"
elif [ $# -gt 0 ]; then
	quiet meson configure "$bdir" "$@"
fi
quiet ninja -C "$bdir"
echo "setup: built in $bdir"
