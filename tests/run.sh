#!/usr/bin/env bash
# The whole test suite, from a fresh Debian 12 machine (run as root for the
# package set-up and the network-namespace tests; as a user, the root-only
# tests are skipped):
#   1. build in ./build and run every suite: unit, integration, external, fuzz, bluefield
#      (not soak: an hour long, `meson test -C build --suite soak`, docs/reliability.md)
#   2. build with ASan+UBSan in ./build-asan and run unit + integration
#   3. libFuzzer build with clang in ./build-fuzz (bounded fuzzing runs)
# It ends with one line "tests: N passed, N failed, N skipped" and exits non-zero
# if anything failed. SDR_TEST_QUICK=1 skips steps 2 and 3.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
status=0
summary() { # build-dir: count results of its last meson test run
	/usr/bin/python3 - "$1/meson-logs/testlog.json" <<'PY'
import json, sys
p = f = s = 0
try:
    for line in open(sys.argv[1]):
        r = json.loads(line)["result"]
        if r in ("OK", "EXPECTEDFAIL"): p += 1
        elif r == "SKIP": s += 1
        else: f += 1
except FileNotFoundError:
    f = 1
print(p, f, s)
PY
}
P=0 F=0 S=0
add() { read -r p f s < <(summary "$1"); P=$((P + p)); F=$((F + f)); S=$((S + s)); }

echo "== 1. build + all suites (build/)"
hw/x86/setup.sh "$top/build" || exit 1
meson test -C build --no-suite soak --print-errorlogs || status=1
add build

if [ "${SDR_TEST_QUICK:-0}" != 1 ]; then
	echo "== 2. ASan + UBSan build, unit + integration suites (build-asan/)"
	hw/x86/setup.sh "$top/build-asan" -Dsanitize=true || exit 1
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
echo "tests: $P passed, $F failed, $S skipped"
[ "$F" = 0 ] || status=1
exit $status
