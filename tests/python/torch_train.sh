#!/usr/bin/env bash
# Pipeline-parallel training over the sdr backend, bit-identical to one
# process (no root: two DPUs in one process over a net_ring pair). A tiny
# character-level GPT (host/python/train) in 4 stages, 2 per DPU (cross-DPU
# boundaries through libsdr QPs, the others through the local socket), 3
# iterations of every sdr-pipe schedule (gpipe, 1f1b, geopipe, greedy), then
# a lossy link (1 % loss each way) with SR, EC and AUTO. Each run: every
# parameter and the loss of every iteration equal bit for bit to a
# single-process run of the same micro-batches (train_pipe.py --verify);
# under loss the daemons must have lost and repaired packets. Timing is
# printed, not checked. Skipped (77) when torch is not importable.
. "$(dirname "$0")/../integration/lib.sh"
. "$(dirname "$0")/py_lib.sh"
sdr_py_need_torch
TRAIN="$SDR_SRC/host/python/train/train_pipe.py"
# 1 MiB messages (activations are 8 KiB): smaller per-QP state on the daemons
export SDR_MAX_MSG=1048576
MODEL="--dim 32 --heads 2 --layers 4 --seq 32 --mb 2 --micro 4 --iters 3 --quiet --verify"

train() { # train TAG REL [train_pipe args]: 0 when bit-identical
	local tag=$1 rel=$2
	shift 2
	sdr_log "$tag: SDR_REL=$rel $*"
	# shellcheck disable=SC2086
	SDR_REL=$rel sdr_py -m sdr.launch --ranks 4 --place 0,0,1,1 --dpu "$SOCK_A,$SOCK_B" \
		--timeout 120 -- "$TRAIN" $MODEL --out "$SDR_TMP/$tag" "$@" >"$SDR_TMP/$tag.log" 2>&1
	local rc=$?
	grep -E "bit-identity|iteration time" "$SDR_TMP/$tag.log"
	if [ $rc != 0 ] || ! grep -q "bit-identity: .* PASS" "$SDR_TMP/$tag.log"; then
		cat "$SDR_TMP/$tag.log"
		return 1
	fi
}

sdr_start_ring_pair torch-train
for s in gpipe 1f1b geopipe greedy; do
	train "$s" auto --sched "$s" || sdr_fail "$s: not bit-identical"
done
rig_stop "$DPU_PID" || sdr_fail "daemon did not stop cleanly"

# lossy: 1 % Bernoulli loss and 1 ms one way on each DPU's receive side,
# 4 KiB chunks for EC
link="delay=1ms,loss=1e-2"
SOCK_A=$SDR_TMP/la.sock SOCK_B=$SDR_TMP/lb.sock STATS=$SDR_TMP/lossy.json
# shellcheck disable=SC2046
"$SDR_DPU" $(rig_eal "sdr-torch-lossy-$$") -- --ring-pair --chunk-pkts 1 --name "$SOCK_A" \
	--ip 10.0.0.1 --link "$link,seed=5" --instance --name "$SOCK_B" --ip 10.0.0.2 \
	--link "$link,seed=6" --stats-json "$STATS" >"$SDR_TMP/lossy-dpu.log" 2>&1 &
LPID=$!
SDR_PIDS+=("$LPID")
rig_wait_sock "$SOCK_A" $LPID && rig_wait_sock "$SOCK_B" $LPID ||
	{ cat "$SDR_TMP/lossy-dpu.log"; sdr_fail "lossy daemons did not start"; }
train lossy-sr sr --sched 1f1b --rtt 2ms || sdr_fail "SR under loss: not bit-identical"
train lossy-ec ec:rs:8:2 --sched greedy --rtt 2ms || sdr_fail "EC under loss: not bit-identical"
train lossy-auto auto --sched geopipe --rtt 2ms || sdr_fail "AUTO under loss: not bit-identical"
rig_stop "$LPID" || sdr_fail "lossy daemons did not stop cleanly"
lost=$(/usr/bin/python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(sum(i.get("link", {}).get("dropped_loss", 0) for i in d["instances"]))' "$STATS")
echo "the emulated link dropped $lost frames"
[ "${lost:-0}" -gt 0 ] || sdr_fail "the lossy link lost nothing: the lossy runs proved nothing"
echo "pipeline training over sdr: 4 schedules lossless + SR, EC, AUTO at 1 % loss, all bit-identical to one process"
