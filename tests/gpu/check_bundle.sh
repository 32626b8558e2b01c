#!/usr/bin/env bash
# The GPU bundle on this (CPU) machine (tests layer, suite gpu): built by
# hw/x86/gpu-bundle.sh from this tree (build dir SDR_GPU_BUILD) under
# 60 MiB with every library it needs resolved; its sdr-dpu runs --help and
# starts a ring pair with 1e-3 loss (as root with the system's DPDK hidden
# in a mount namespace, so that the bundle's own DPDK libraries and drivers
# run, as on a machine without Debian packages); the NCCL harness drives
# the bundle's plugin and libsdr through it; run.sh refuses clearly (exit 2)
# without CUDA, and its CPU self-test (part (b) on the CPU, torch 1.13 of
# /usr/bin/python3) passes.
. "$(dirname "$0")/../integration/lib.sh"
top=$(cd "$(dirname "$0")/../.." && pwd)
# not under /tmp: EAL loads drivers (-d) only from paths no one else may write
gb=${SDR_GPU_BUILD:-$SDR_BUILD-gpu}
bundle=$gb/bundle-test
SDR_CLEANUPS+=("rm -rf '$bundle'")
"$top/hw/x86/gpu-bundle.sh" --out "$bundle" --build "$gb" \
	>"$SDR_TMP/bundle.log" 2>&1 || { tail -30 "$SDR_TMP/bundle.log"; sdr_fail "gpu-bundle.sh"; }
tail -2 "$SDR_TMP/bundle.log"
size=$(du -sb "$bundle" | cut -f1)
[ "$size" -lt $((60 << 20)) ] || sdr_fail "bundle of $size bytes: over 60 MiB"
for f in bin/sdr-dpu bin/sdr-pipe lib/libsdr.so.2 lib/libnccl-net-sdr.so python/sdr/torch.py \
	python/train/train_pipe.py tests/gpu/run.sh tests/gpu/nccl_check.py DEPENDS SHA256SUMS; do
	[ -e "$bundle/$f" ] || sdr_fail "bundle lacks $f"
done
(cd "$bundle" && sha256sum --quiet -c SHA256SUMS) || sdr_fail "SHA256SUMS do not match"
nm -D --defined-only "$bundle/lib/libnccl-net-sdr.so" | grep -q ' ncclNetPlugin_v10$' ||
	sdr_fail "the bundle's plugin exports no ncclNetPlugin_v10"
"$bundle/bin/sdr-dpu" --help | grep -q 'Usage: sdr-dpu' || sdr_fail "bundle sdr-dpu --help"

# a ring pair from the bundle; as root without the system's DPDK drivers.
# EAL loads drivers (-d) only from a path without a world-writable
# directory above it (not under /tmp): elsewhere a private copy under
# $HOME, else the system's DPDK
insecure() { # PATH: 0 when a directory on it is world-writable
	local d=$1
	while [ -n "$d" ] && [ "$d" != / ]; do
		[ -n "$(find "$d" -maxdepth 0 -perm -0002 2>/dev/null)" ] && return 0
		d=$(dirname "$d")
	done
	return 1
}
run_bundle=$bundle
if insecure "$bundle" && [ -n "${HOME:-}" ] && [ -d "$HOME" ] && ! insecure "$HOME"; then
	run_bundle=$HOME/.cache/sdr-gpu-bundle-check.$$
	mkdir -p "$HOME/.cache" && cp -a "$bundle" "$run_bundle" || sdr_fail "copy to $run_bundle"
	SDR_CLEANUPS+=("rm -rf '$run_bundle'")
	echo "the bundle lies under a world-writable directory: its copy $run_bundle runs"
fi
SA=$SDR_TMP/a.sock SB=$SDR_TMP/b.sock
hide=()
if insecure "$run_bundle"; then
	echo "no private place for the bundle: the system's DPDK runs (bundle's DPDK not checked)"
elif [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
	pmd=$(sed -n 's|^if ls "\(.*\)"/librte_mempool_ring.*|\1|p' "$run_bundle/bin/sdr-dpu")
	[ -d "$pmd" ] || sdr_fail "the bundle's sdr-dpu wrapper names no driver directory"
	mkdir -p "$SDR_TMP/empty"
	hide=(unshare -m sh -c "mount --bind '$SDR_TMP/empty' '$pmd' && exec \"\$0\" \"\$@\"")
	echo "system DPDK drivers ($pmd) hidden: the bundle's DPDK runs"
fi
"${hide[@]}" "$run_bundle/bin/sdr-dpu" $(rig_eal "sdr-gpub-$$") -- --ring-pair --name "$SA" \
	--ip 10.0.0.1 --link loss=1e-3,seed=31 --port-rate 2g --instance --name "$SB" \
	--ip 10.0.0.2 --link loss=1e-3,seed=32 --port-rate 2g >"$SDR_TMP/dpu.log" 2>&1 &
DPU_PID=$!
SDR_PIDS+=("$DPU_PID")
rig_wait_sock "$SA" "$DPU_PID" && rig_wait_sock "$SB" "$DPU_PID" ||
	{ cat "$SDR_TMP/dpu.log"; sdr_fail "the bundle's sdr-dpu did not start a ring pair"; }
LD_LIBRARY_PATH="$bundle/lib" SDR_REL=auto "$SDR_NCCL_HARNESS" \
	--plugin "$bundle/lib/libnccl-net-sdr.so" --dpu0 "$SA" --dpu1 "$SB" --api 10 --rounds 1 \
	--timeout 60 >"$SDR_TMP/harness.log" 2>&1 ||
	{ tail -30 "$SDR_TMP/harness.log"; sdr_fail "harness through the bundle"; }
grep '^nccl_harness' "$SDR_TMP/harness.log" | tail -1
rig_stop "$DPU_PID" || sdr_fail "the bundle's sdr-dpu did not stop cleanly"

# run.sh without CUDA: a clear refusal, exit 2
out=$(SDR_GPU_OUT=$SDR_TMP/refuse SDR_GPU_PYTHON=/usr/bin/python3 "$bundle/tests/gpu/run.sh" 2>&1)
rc=$?
echo "$out" | tail -1
[ $rc = 2 ] || sdr_fail "run.sh without CUDA exited $rc (want 2): $out"
echo "$out" | grep -q 'GPU check: cannot run: .*CUDA' || sdr_fail "run.sh did not say CUDA: $out"
# its CPU self-test: part (b) on the CPU through the bundle
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
	SDR_GPU_SELFTEST=1 SDR_GPU_MEM_MB=512 SDR_GPU_OUT=$SDR_TMP/self SDR_GPU_PYTHON=/usr/bin/python3 \
		"$bundle/tests/gpu/run.sh" >"$SDR_TMP/self.log" 2>&1 ||
		{
			cat "$SDR_TMP/self.log"
			for f in b.log b-dpu.log; do
				[ -f "$SDR_TMP/self/$f" ] && { echo "--- $f (tail)"; tail -40 "$SDR_TMP/self/$f"; }
			done
			sdr_fail "run.sh self-test"
		}
	grep '(b)' "$SDR_TMP/self.log"
	/usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["b"]["pass"]' \
		"$SDR_TMP/self/summary.json" || sdr_fail "self-test summary.json"
else
	sdr_skip "torch is not importable by /usr/bin/python3: run.sh's self-test not run"
fi
echo "gpu bundle: $((size >> 10)) KiB, sdr-dpu + plugin + libsdr work from it; run.sh refuses" \
	"without CUDA and passes its CPU self-test"
