# Helpers of the Python tests (sourced after tests/integration/lib.sh).
# shellcheck shell=bash
SDR_PY_TESTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${SDR_SRC:=$(cd "$SDR_PY_TESTS/../.." && pwd)}"
: "${SDR_PYTHON:=/usr/bin/python3}"
export PYTHONPATH="$SDR_SRC/host/python${PYTHONPATH:+:$PYTHONPATH}"
export SDR_LIBSDR="${SDR_LIBSDR:-$SDR_BUILD/host/libsdr/libsdr.so.2}"
# meson passes SDR_PIPE; by hand: wherever the build put it
: "${SDR_PIPE:=$(find "$SDR_BUILD" -name sdr-pipe -type f -perm -u+x 2>/dev/null | head -1)}"
export SDR_PIPE
# In a -Dsanitize=true build libsdr needs the ASan runtime loaded first:
# preload it into python (whose own and torch's allocations are not
# instrumented, so leak detection is off for the Python processes).
SDR_PY_ENV=()
if ldd "$SDR_LIBSDR" 2>/dev/null | grep -q libasan; then
	SDR_PY_ENV=("LD_PRELOAD=$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
		"ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0")
fi
# sdr_py ARGS: Debian's python with the package of this tree. lib.sh's
# SDR_DPU (the daemon binary) is not passed on: for the sdr package SDR_DPU
# is a daemon socket (sdr.launch sets it per rank).
sdr_py() { env -u SDR_DPU "${SDR_PY_ENV[@]}" "$SDR_PYTHON" "$@"; }
# skip (77) unless torch imports
sdr_py_need_torch() {
	local why
	why=$("$SDR_PYTHON" -c 'import torch' 2>&1) ||
		sdr_skip "torch is not importable by $SDR_PYTHON (Debian: apt-get install python3-torch): $(echo "$why" | tail -1)"
}
