#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine (run as root for the
# package set-up and the network-namespace tests; as a user, the root-only
# tests are skipped):
#   1. build in ./build and run every suite: unit, integration, external, fuzz, bluefield,
#      variants (integration tests again with every QP spraying over 4 paths)
#      (not soak: an hour long, `meson test -C build --suite soak`, docs/reliability.md;
#      not ccbench: congestion-control fairness and convergence and its share
#      beside kernel TCP, figures of the machine's load,
#      `meson test -C build --suite ccbench`, docs/congestion.md;
#      not pathbench: multipath's path sum and failover, figures of a machine
#      whose daemon has its CPU, `meson test -C build --suite pathbench`,
#      docs/multipath.md; not chanbench: the efficiency of one QP over two
#      workers, the same kind of figure, `meson test -C build --suite chanbench`,
#      docs/architecture.md "Channels")
#   2. build with ASan+UBSan in ./build-asan and run unit + integration
#   3. libFuzzer build with clang in ./build-fuzz (bounded fuzzing runs)
# Before its last line it lists every skipped test with its reason (the
# test's own output); a test a meson guard left out of a build (see "Not
# built" at the end of `meson setup`) reports skip and is listed too.
# It ends with one line "tests: N passed, N failed, N skipped" and exits non-zero
# if anything failed. SDR_TEST_QUICK=1 skips steps 2 and 3.
# CI=true (as in .ci/run): a skip is a failure unless its test is on
# tests/skip-allow.txt (test name, then why it may skip).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
status=0
skips=$(mktemp)
trap 'rm -f "$skips"' EXIT
P=0 F=0 S=0
add() { # build-dir: count the results of its last meson test run, note its skips
	local p f s
	read -r p f s < <(/usr/bin/python3 tests/skips.py count "$1/meson-logs/testlog.json" "$1/" "$skips")
	P=$((P + p)); F=$((F + f)); S=$((S + s))
}

echo "== 1. build + all suites (build/)"
hw/x86/setup.sh "$top/build" || exit 1
meson test -C build --no-suite soak --no-suite ccbench --no-suite pathbench --no-suite chanbench \
	--print-errorlogs ||
	status=1
add build

if [ "${SDR_TEST_QUICK:-0}" != 1 ]; then
	echo "== 2. ASan + UBSan build, unit + integration suites (build-asan/)"
	hw/x86/setup.sh "$top/build-asan" -Db_sanitize=address,undefined || exit 1
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		meson test -C build-asan --suite unit --suite integration --print-errorlogs || status=1
	add build-asan
	echo "== 3. libFuzzer build with clang (build-fuzz/)"
	if [ ! -f build-fuzz/build.ninja ]; then
		CC=clang meson setup build-fuzz -Dfuzz=enabled >build-fuzz.log 2>&1 ||
			{ tail -30 build-fuzz.log; echo "clang configure failed"; exit 1; }
	fi
	ninja -C build-fuzz >build-fuzz.log 2>&1 || { tail -30 build-fuzz.log; echo "clang build failed"; exit 1; }
	meson test -C build-fuzz --suite fuzz --print-errorlogs || status=1
	add build-fuzz
fi
# Every skip with its reason; under CI=true the ones not on the allow-list fail.
rc=0
report=$(/usr/bin/python3 tests/skips.py report "$skips" tests/skip-allow.txt) || rc=$?
unexpected=$(echo "$report" | sed -n '$s/^unexpected \([0-9]*\)$/\1/p')
if [ $rc = 0 ] && [ -n "$unexpected" ]; then
	echo "$report" | sed '$d'
	F=$((F + unexpected)); S=$((S - unexpected))
else
	echo "$report"
	echo "tests/skips.py report failed (exit $rc)"
	F=$((F + 1)); status=1
fi
echo "tests: $P passed, $F failed, $S skipped"
[ "$F" = 0 ] || status=1
exit $status
