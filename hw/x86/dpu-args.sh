#!/usr/bin/env bash
# shellcheck shell=bash
# sdr-dpu with the words of SDR_TEST_DPU_ARGS added to its options: the
# binary rig.sh runs in place of SDR_DPU_REAL when SDR_TEST_DPU_ARGS is set,
# so that every daemon a test starts runs a variant (e.g. --paths 4: the
# suite "variants" in tests/integration/meson.build). The words go right
# after the EAL arguments' "--", before the test's own options, so an option
# the test gives itself wins where the daemon takes the last one. A bridge
# (--bridge), --help and --version run unchanged: they take no DPU options.
set -u
for x in "$@"; do
	case $x in --bridge | --help | --version) exec "$SDR_DPU_REAL" "$@" ;; esac
done
a=()
added=0
for x in "$@"; do
	a+=("$x")
	if [ $added = 0 ] && [ "$x" = -- ]; then
		# shellcheck disable=SC2206 # the words split on purpose
		a+=($SDR_TEST_DPU_ARGS)
		added=1
	fi
done
exec "$SDR_DPU_REAL" "${a[@]}"
