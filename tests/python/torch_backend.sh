#!/usr/bin/env bash
# The torch.distributed backend "sdr" over a net_ring pair (no root): 4
# ranks, 2 per DPU (tests/python/test_torch_backend.py says what is
# checked), the CUDA staging path with a fake device hook on 2 ranks
# (test_torch_device.py), then init_process_group against a missing
# daemon. Skipped (77) when torch is not importable by /usr/bin/python3.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/py_lib.sh"
sdr_py_need_torch
sdr_start_ring_pair torch-be --global-timeout-ms 1500
cd "$SDR_TMP" || exit 1
sdr_py -m sdr.launch --ranks 4 --place 0,1,0,1 --dpu "$SOCK_A,$SOCK_B" --timeout 150 -- \
	"$SDR_PY_TESTS/test_torch_backend.py" || { cat "$DPU_LOG"; sdr_fail "backend test"; }
# the device (CUDA) staging path with a fake device hook: 2 ranks, one per DPU
sdr_py -m sdr.launch --ranks 2 --place 0,1 --dpu "$SOCK_A,$SOCK_B" --timeout 120 -- \
	"$SDR_PY_TESTS/test_torch_device.py" || { cat "$DPU_LOG"; sdr_fail "device staging test"; }
# a missing daemon: a clear exception naming the socket, at once
out=$(env "${SDR_PY_ENV[@]}" SDR_DPU="$SDR_TMP/none.sock" "$SDR_PYTHON" -c '
import sys, torch.distributed as dist, sdr, sdr.torch
try:
    dist.init_process_group("sdr", init_method="tcp://127.0.0.1:'"$(rig_free_port)"'", rank=0, world_size=1)
except sdr.SdrError as e:
    print("raised:", e.errno, e); sys.exit(0)
print("no exception"); sys.exit(1)' 2>&1) || sdr_fail "missing daemon: $out"
echo "$out"
case $out in *"raised: 2 "*"$SDR_TMP/none.sock"*) ;; *) sdr_fail "missing daemon: no ENOENT with the path: $out" ;; esac
rig_stop "$DPU_PID" || sdr_fail "daemon did not stop cleanly"
echo "sdr backend: p2p, batches, collectives, errors, timeouts and a dead peer behave"
