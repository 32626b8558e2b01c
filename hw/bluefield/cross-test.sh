#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# cross-test.sh - the aarch64 (BlueField) test entry point.
#
#   1. make the arm64 sysroot (hw/bluefield/make-sysroot.sh); exit 77 (skip)
#      with a message if the arm64 packages cannot be fetched here;
#   2. configure + build everything for aarch64 in build-aarch64/ with -Werror
#      (hw/bluefield/cross-build.sh);
#   3. run `meson test --suite unit` there: every test binary is an aarch64
#      executable run by qemu-aarch64-static through meson's exe_wrapper;
#   4. run `meson test --suite bluefield` there (the EAL probe: DPDK EAL +
#      net_ring vdev + SDR packets, statically linked DPDK, under qemu).
#
# Usage: hw/bluefield/cross-test.sh [--unit-only]
# Environment: SDR_BF_BUILD, SDR_BF_SYSROOT, SDR_BF_MESON_OPTS (see
# cross-build.sh). Exit: 0 all ran and passed, 77 skipped, 1 failure.

set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
BUILD=${SDR_BF_BUILD:-$repo/build-aarch64}
export SDR_BF_BUILD=$BUILD
unit_only=0
[ "${1:-}" = "--unit-only" ] && unit_only=1

say() { echo "cross-test: $*"; }

rc=0
"$here/cross-build.sh" || rc=$?
if [ $rc -eq 77 ]; then
	say "SKIPPED: aarch64 cross build and qemu tests (arm64 packages unavailable here)"
	exit 77
elif [ $rc -ne 0 ]; then
	say "FAILED: aarch64 cross build (exit $rc)"
	exit 1
fi

# Summarise a meson test run from its JSON log: "N passed, N failed, N skipped".
summary() {
	/usr/bin/python3 - "$BUILD/meson-logs/testlog.json" <<-'PYEOF'
	import json, sys, collections
	c = collections.Counter(); names = collections.defaultdict(list)
	for line in open(sys.argv[1]):
	    t = json.loads(line); r = t["result"]; c[r] += 1; names[r].append(t["name"].split(" / ")[-1])
	ok = c["OK"] + c["EXPECTEDFAIL"]
	bad = sum(v for k, v in c.items() if k not in ("OK", "EXPECTEDFAIL", "SKIP"))
	for r in sorted(names):
	    print("  %-8s %s" % (r, " ".join(sorted(names[r]))))
	print("aarch64: %d passed, %d failed, %d skipped" % (ok, bad, c["SKIP"]))
	PYEOF
}

fail=0
run_suite() { # suite
	local suite=$1 out r=0
	if ! meson test -C "$BUILD" --list --suite "$suite" >/dev/null 2>&1 ||
	   [ -z "$(meson test -C "$BUILD" --list --suite "$suite" 2>/dev/null)" ]; then
		say "suite '$suite': no tests defined in the aarch64 build - nothing ran"
		return 0
	fi
	say "running suite '$suite' under qemu-aarch64-static -cpu cortex-a72 (meson exe_wrapper)"
	out=$(meson test -C "$BUILD" --no-rebuild --suite "$suite" --print-errorlogs \
		--num-processes 2 2>&1) || r=$?
	echo "$out" | grep -E '^ *[0-9]+/[0-9]+ ' || true
	say "suite '$suite' on aarch64/qemu:"
	summary
	if [ $r -ne 0 ]; then
		echo "$out" | tail -n 60
		fail=1
	fi
}

run_suite unit
[ $unit_only = 1 ] || run_suite bluefield

if [ $fail -ne 0 ]; then
	say "FAILED (logs: $BUILD/meson-logs/testlog.txt)"
	exit 1
fi
say "OK: aarch64 build is -Werror clean and its tests pass under qemu"
