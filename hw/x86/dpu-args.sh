#!/usr/bin/env bash
# shellcheck shell=bash
# sdr-dpu with the words of SDR_TEST_DPU_ARGS added to its options: the
# binary rig.sh runs in place of SDR_DPU_REAL when SDR_TEST_DPU_ARGS is set,
# so that every daemon a test starts runs a variant (e.g. --paths 4: the
# suite "variants" in tests/integration/meson.build). The words go right
# after the EAL arguments' "--", before the test's own options, so an option
# the test gives itself wins where the daemon takes the last one. The words
# of SDR_TEST_EAL_ARGS (e.g. --lcores=0@0,1@0,2@1 for --workers 2 on two
# CPUs) go first, before the test's EAL arguments; a test that sets the
# lcores itself (-l, -c, --lcores) keeps its own. SDR_TEST_QPAIRS sets the
# queue pairs of every af_packet port. A bridge (--bridge),
# --help and --version run unchanged: they take no DPU options.
set -u
for x in "$@"; do
	case $x in --bridge | --help | --version) exec "$SDR_DPU_REAL" "$@" ;; esac
done
eal=()
if [ -n "${SDR_TEST_EAL_ARGS:-}" ]; then
	own=0
	for x in "$@"; do
		[ "$x" = -- ] && break
		case $x in -l | -l* | -c | -c* | --lcores*) own=1 ;; esac
	done
	# shellcheck disable=SC2206 # the words split on purpose
	[ $own = 1 ] || eal=($SDR_TEST_EAL_ARGS)
fi
a=("${eal[@]}")
added=0
for x in "$@"; do
	# SDR_TEST_QPAIRS: that many queue pairs of every af_packet port (a
	# worker needs one; the kernel's fanout spreads the frames over them)
	if [ -n "${SDR_TEST_QPAIRS:-}" ] && [ $added = 0 ]; then
		case $x in
		--vdev=net_af_packet*qpairs=*) x=$(echo "$x" | sed "s/qpairs=[0-9]*/qpairs=$SDR_TEST_QPAIRS/") ;;
		--vdev=net_af_packet*) x="$x,qpairs=$SDR_TEST_QPAIRS" ;;
		esac
	fi
	a+=("$x")
	if [ $added = 0 ] && [ "$x" = -- ]; then
		# shellcheck disable=SC2206 # the words split on purpose
		a+=($SDR_TEST_DPU_ARGS)
		added=1
	fi
done
exec "$SDR_DPU_REAL" "${a[@]}"
