# Shared preamble of the sdr-perf tests (sourced as `. "$here/lib.sh" TAG`,
# `here` the script's folder): the binaries from the environment (meson
# sets them) or the build tree, SDR_DPU exported for sdr-perf, a temporary
# directory $tmp (/tmp/sdr-TAG.*) removed at exit, and fail().
# shellcheck shell=bash
set -u
: "${SDR_BUILD:=$here/../../build}"
: "${SDR_DPU:=$SDR_BUILD/firmware/sdr-dpu}"
: "${SDR_PERF:=$SDR_BUILD/host/perf/sdr-perf}"
: "${SDR_PYTHON:=/usr/bin/python3}"
export SDR_DPU
tmp=$(mktemp -d "/tmp/sdr-$1.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
