#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# C formatting of the tree (tooling, outside the build's layers): applies
# .clang-format to every tracked *.c/*.h, or with --check lists the files
# clang-format would change and exits 1. Exit 77 when clang-format is missing.
#   tests/arch/format.sh [--check] [SOURCE_ROOT]
set -eu
check=0
if [ "${1:-}" = --check ]; then
	check=1
	shift
fi
top=$(cd "${1:-$(dirname "$0")/../..}" && pwd)

# Never formatted (generated or vendored code): shell patterns relative to
# the top, one per element. None today.
ignore=()

cf=${CLANG_FORMAT:-}
if [ -z "$cf" ]; then
	for c in clang-format clang-format-14; do
		if command -v "$c" >/dev/null; then
			cf=$c
			break
		fi
	done
fi
if [ -z "$cf" ]; then
	echo "format: clang-format not found (Debian: apt-get install clang-format): skipped"
	exit 77
fi
if [ ! -f "$top/.clang-format" ]; then
	echo "format: $top/.clang-format is missing"
	exit 1
fi
cd "$top"

# The tracked sources; outside a git checkout, every *.c/*.h but build trees.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	mapfile -t all < <(git ls-files -- '*.c' '*.h')
else
	mapfile -t all < <(find . \( -name '.*' -o -name 'build*' \) -prune -o \
		-type f \( -name '*.c' -o -name '*.h' \) -print | sed 's|^\./||' | sort)
fi
files=()
for f in "${all[@]}"; do
	[ -f "$f" ] || continue # (deleted in the work tree, not yet committed)
	for p in "${ignore[@]}"; do
		# shellcheck disable=SC2053
		[[ $f == $p ]] && continue 2
	done
	files+=("$f")
done
if [ ${#files[@]} = 0 ]; then
	echo "format: no C sources under $top"
	exit 1
fi

if [ $check = 0 ]; then
	"$cf" -i --style=file "${files[@]}"
	echo "format: ${#files[@]} files formatted ($("$cf" --version))"
	exit 0
fi
# One run over all files: each difference is an error "FILE:LINE:COL: error:
# ..." (the first of each file only), with the line and a caret after it.
out=$("$cf" --dry-run -Werror --ferror-limit=1 --style=file "${files[@]}" 2>&1) && rc=0 || rc=$?
mapfile -t bad < <(printf '%s\n' "$out" | sed -n 's/^\(.*\):[0-9]*:[0-9]*: error: .*/\1/p' | sort -u)
if [ $rc != 0 ] && [ ${#bad[@]} = 0 ]; then
	printf '%s\n' "$out"
	echo "format: $cf failed (exit $rc)"
	exit 1
fi
if [ ${#bad[@]} != 0 ]; then
	echo "format: ${#bad[@]} of ${#files[@]} files differ from .clang-format ($("$cf" --version)):"
	printf '  %s\n' "${bad[@]}"
	echo "format: run tests/arch/format.sh to apply; the first differences:"
	printf '%s\n' "$out" | head -n 12
	exit 1
fi
echo "format: ${#files[@]} files match .clang-format ($("$cf" --version))"
