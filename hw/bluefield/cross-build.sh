#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# cross-build.sh - configure and build the whole project for aarch64
# (BlueField Arm cores) in build-aarch64/, against the arm64 sysroot.
#
# Usage: hw/bluefield/cross-build.sh [ninja targets...]
#
# Environment (all optional):
#   SDR_BF_BUILD       build dir            (default <repo>/build-aarch64)
#   SDR_BF_SYSROOT     arm64 sysroot        (default <repo>/.sysroot-arm64)
#   SDR_BF_MESON_OPTS  extra `meson setup` options, e.g. -Dfirmware=disabled
#
# The build uses -Ddpdk_static=true (see docs/bluefield.md: a static DPDK
# makes the bundle independent of the DPU's DPDK packages and keeps the EAL
# from loading plugins from the sysroot under qemu), --prefix=/opt/sdr-dpu
# and --libdir=lib (the install layout of the bundle on the DPU).
#
# Exit status: 0 built; 77 the arm64 sysroot cannot be made here (skip);
# other: configure or compile error (the build must be -Werror clean).

set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
BUILD=${SDR_BF_BUILD:-$repo/build-aarch64}
SYSROOT=${SDR_BF_SYSROOT:-$repo/.sysroot-arm64}
OPTS=${SDR_BF_MESON_OPTS:-}
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3

log() { echo "cross-build: $*" >&2; }

rc=0
"$here/make-sysroot.sh" "$SYSROOT" || rc=$?
if [ $rc -ne 0 ]; then
	[ $rc -eq 77 ] && log "SKIP: no arm64 sysroot (see make-sysroot messages above)"
	exit $rc
fi

# One cross build at a time in this build dir (tests may call us in parallel).
# The lock lives outside the tree (the build dir itself may be wiped).
mkdir -p "$(dirname "$BUILD")"
exec 8>"${TMPDIR:-/tmp}/sdr-bf-build-$(echo "$BUILD" | md5sum | cut -c1-12).lock"
flock 8

setup_opts=(--cross-file "$SYSROOT/meson-sysroot.ini"
	    --cross-file "$here/aarch64-linux-gnu.ini"
	    -Ddpdk_static=true --prefix=/opt/sdr-dpu --libdir=lib)
# shellcheck disable=SC2206
extra=($OPTS)

opt_value() { # name -> current value of a meson option in $BUILD
	"$PY" - "$BUILD/meson-info/intro-buildoptions.json" "$1" <<-'EOF'
	import json, sys
	for o in json.load(open(sys.argv[1])):
	    if o["name"] == sys.argv[2]:
	        v = o["value"]
	        print(str(v).lower() if isinstance(v, bool) else v)
	EOF
}

wipe_build() { # only ever delete a meson build dir (or an empty one)
	[ -e "$BUILD" ] || return 0
	if [ -d "$BUILD/meson-private" ] || [ -d "$BUILD/meson-logs" ] || [ -z "$(ls -A "$BUILD")" ]; then
		rm -rf "$BUILD"
	else
		log "$BUILD exists and is not a meson build dir; not touching it"
		exit 1
	fi
}

# A build dir configured against another sysroot (moved clone, other
# SDR_BF_SYSROOT) is set up again from scratch.
if [ -f "$BUILD/build.ninja" ] && [ "$(cat "$BUILD/.sdr-bf-sysroot" 2>/dev/null)" != "$SYSROOT" ]; then
	log "$BUILD was configured for another sysroot: setting it up again"
	wipe_build
fi
if [ -f "$BUILD/build.ninja" ] && [ -f "$BUILD/meson-info/intro-buildoptions.json" ]; then
	if [ "$(opt_value dpdk_static)" != "true" ] || [ "$(opt_value prefix)" != "/opt/sdr-dpu" ] ||
	   [ "$(opt_value libdir)" != "lib" ] || [ ${#extra[@]} -gt 0 ]; then
		log "reconfiguring $BUILD"
		meson configure "$BUILD" -Ddpdk_static=true --prefix=/opt/sdr-dpu \
			--libdir=lib "${extra[@]}" >/dev/null
	else
		log "reusing $BUILD"
	fi
else
	log "meson setup $BUILD (aarch64 cross, sysroot $SYSROOT)"
	wipe_build
	setup_log=$(mktemp)
	meson setup "$BUILD" "$repo" "${setup_opts[@]}" "${extra[@]}" >"$setup_log" 2>&1 || {
		tail -n 30 "$setup_log" >&2
		rm -f "$setup_log"
		log "meson setup failed (full log: $BUILD/meson-logs/meson-log.txt)"
		exit 1
	}
	grep -E '^(Host machine cpu|Run-time dependency)' "$setup_log" >&2 || true
	rm -f "$setup_log"
	echo "$SYSROOT" > "$BUILD/.sdr-bf-sysroot"
fi

log "ninja -C $BUILD $*"
ninja -C "$BUILD" "$@" >&2
