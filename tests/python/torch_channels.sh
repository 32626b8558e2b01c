#!/usr/bin/env bash
# The torch.distributed backend "sdr" with channels (Options.channels 2,
# docs/training.md) over a net_ring pair of two workers per DPU (no root):
# 2 ranks, one per DPU (tests/python/test_torch_channels.py says what is
# checked), Selective Repeat over a lossy, reordering link. Skipped (77)
# when torch is not importable by /usr/bin/python3.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/py_lib.sh"
sdr_py_need_torch
RIG_LCORES=0@0,1@1,2@0 sdr_start_ring_pair torch-ch --workers 2 --global-timeout-ms 3000 \
	--link delay=1ms,loss=1e-2,dup=1%,reorder=1%:1ms,seed=7
cd "$SDR_TMP" || exit 1
SDR_REL=sr sdr_py -m sdr.launch --ranks 2 --place 0,1 --dpu "$SOCK_A,$SOCK_B" --timeout 120 -- \
	"$SDR_PY_TESTS/test_torch_channels.py" || { cat "$DPU_LOG"; sdr_fail "channels test"; }
grep -q "worker 1" "$DPU_LOG" || { cat "$DPU_LOG"; sdr_fail "no QP on worker 1"; }
rig_stop "$DPU_PID" || sdr_fail "daemon did not stop cleanly"
echo "sdr backend with 2 channels: p2p of every size class, all_reduce, broadcast bit-exact over SR with loss"
