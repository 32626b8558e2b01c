#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# tests/skips.py, the skip accounting of tests/run.sh, on made-up meson test
# logs: counts, reasons taken from the tests' own output, the allow-list and
# the CI=true rule (a skip not on the allow-list is a failure).
# Usage: test_skips.sh [path/to/skips.py]
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SK=${1:-$here/skips.py}
PY=${SDR_PYTHON:-/usr/bin/python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
check() { # description command...
	local d=$1; shift
	if "$@"; then echo "ok: $d"; else echo "FAIL: $d"; fails=$((fails + 1)); fi
}

cat > "$tmp/testlog.json" <<'J'
{"name": "sdr-dpu:unit / a", "result": "OK", "stdout": "fine\n"}
{"name": "sdr-dpu:integration / netns", "result": "SKIP", "stdout": "setting up\nSKIP: needs root for ip netns\n"}
{"name": "sdr-dpu:unit / b", "result": "FAIL", "stdout": "boom\n"}
{"name": "sdr-dpu:integration / ring_pair", "result": "SKIP", "stdout": "SKIP: not built: needs sdr-dpu: libdpdk not found\n"}
{"name": "sdr-dpu:unit / quiet", "result": "SKIP", "stdout": "line 1\nline 2\nlast words\n"}
{"name": "sdr-dpu:unit / c", "result": "EXPECTEDFAIL", "stdout": ""}
{"name": "sdr-dpu:unit / d", "result": "TIMEOUT", "stdout": ""}
J
out=$("$PY" "$SK" count "$tmp/testlog.json" build/ "$tmp/skips")
check "count: 2 passed, 2 failed, 3 skipped (got '$out')" [ "$out" = "2 2 3" ]
check "three skip lines" [ "$(wc -l < "$tmp/skips")" = 3 ]
check "reason of netns is its SKIP line" grep -qxF "build/	netns	SKIP: needs root for ip netns" "$tmp/skips"
check "reason of a test left out of the build" \
	grep -qxF "build/	ring_pair	SKIP: not built: needs sdr-dpu: libdpdk not found" "$tmp/skips"
check "reason of a test that does not say skip: its last lines" \
	grep -qxF "build/	quiet	line 2 | last words" "$tmp/skips"
out=$("$PY" "$SK" count "$tmp/no-such-log.json" build-x/ "$tmp/skips" 2>/dev/null)
check "a missing test log counts as one failure (got '$out')" [ "$out" = "0 1 0" ]

printf '# comment\n\nnetns   needs root   # trailing comment\n' > "$tmp/allow"
out=$(CI= "$PY" "$SK" report "$tmp/skips" "$tmp/allow"); rc=$?
check "without CI: exit 0, unexpected 0" [ "$rc:$(echo "$out" | tail -n1)" = "0:unexpected 0" ]
check "without CI: every skip listed with its reason" \
	bash -c '[ "$(echo "$1" | grep -c "^  build/ ")" = 3 ]' _ "$out"
check "without CI: nothing marked a failure" bash -c '! echo "$1" | grep -q "counts as failed"' _ "$out"

out=$(CI=true "$PY" "$SK" report "$tmp/skips" "$tmp/allow"); rc=$?
check "CI=true: two skips not on the allow-list are failures" \
	[ "$rc:$(echo "$out" | tail -n1)" = "0:unexpected 2" ]
check "CI=true: the allowed skip is marked with its reason" \
	bash -c 'echo "$1" | grep -qF "build/ netns: SKIP: needs root for ip netns  [allowed: needs root]"' _ "$out"
check "CI=true: ring_pair marked a failure" \
	bash -c 'echo "$1" | grep "ring_pair" | grep -q "counts as failed"' _ "$out"

: > "$tmp/none"
out=$(CI=true "$PY" "$SK" report "$tmp/none" "$tmp/allow")
check "no skips: 'skipped (0): none', unexpected 0" \
	[ "$(echo "$out" | paste -sd'|')" = "skipped (0): none|unexpected 0" ]

printf 'netns\n' > "$tmp/bad-allow"
out=$("$PY" "$SK" report "$tmp/skips" "$tmp/bad-allow"); rc=$?
check "an allow-list entry without a reason: exit 2 (got $rc)" [ $rc = 2 ]
check "... and says which line" bash -c 'echo "$1" | grep -q "bad-allow:1: .netns. has no reason"' _ "$out"

check "the project's allow-list parses" bash -c '"$1" "$2" report "$3" "$4" >/dev/null' _ \
	"$PY" "$SK" "$tmp/none" "$here/skip-allow.txt"

[ $fails = 0 ] || { echo "FAIL: $fails check(s)"; exit 1; }
echo PASS
