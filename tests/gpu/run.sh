#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The GPU check (tests layer; docs/nccl.md "The GPU check"). Runs from the
# folder hw/x86/gpu-bundle.sh builds, on a machine with one NVIDIA GPU and
# python3 with torch 2.x, CUDA and NCCL; nothing is installed, no network:
#
#   <bundle>/tests/gpu/run.sh        (in the source tree: runs out/gpu-bundle's)
#
# Two DPUs in one sdr-dpu (a ring pair, no root), then
#  (a) two NCCL ranks on the one GPU, each with its own NCCL_HOSTID (NCCL
#      must use its network between them), NCCL_NET_PLUGIN=sdr NCCL_NET=sdr,
#      1e-3 loss each way, SDR_REL=auto: all_reduce, broadcast and send/recv
#      of 1 KiB - 64 MiB CUDA tensors exact; NCCL's log (NCCL_DEBUG=INFO)
#      and the daemon's counters show that the sdr plugin carried it;
#  (b) pipeline training of the character GPT (host/python/train) with CUDA
#      tensors over the torch backend "sdr", 2 stages in 2 processes on the
#      GPU, 1e-3 loss, bit-identical to one process (train_pipe.py --device
#      cuda --verify: deterministic algorithms, CUBLAS_WORKSPACE_CONFIG
#      :4096:8, no TF32, cuDNN deterministic without benchmark);
#  (c) all_reduce of 1 - 64 MiB: NCCL over sdr (lossless link) vs NCCL's
#      Socket transport. Without network namespaces (not used here) Socket
#      runs over the kernel's loopback, not through the emulated link.
# One summary line per part, all in OUT/summary.json (OUT: $SDR_GPU_OUT,
# default ./sdr-gpu-check-<time>), with every log. Exit 0 only when (a)
# and (b) pass; 1 when one fails; 2 when the machine cannot run the check
# (the message says what is missing). Under 8 minutes.
#   env: SDR_GPU_PYTHON (default python3), SDR_GPU_OUT, SDR_GPU_MEM_MB (EAL
#   memory of the daemon, default 2048); SDR_GPU_SELFTEST=1: on a machine
#   without GPU, only (b) on the CPU (the bundle's plumbing; tests/gpu's
#   bundle test), exit status as if (a) had passed
set -u
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
B=$(cd "$here/../.." && pwd)
if [ ! -x "$B/bin/sdr-dpu" ]; then
	for c in "${SDR_GPU_BUNDLE:-}" "$B/out/gpu-bundle"; do
		[ -n "$c" ] && [ -x "$c/bin/sdr-dpu" ] && [ -x "$c/tests/gpu/run.sh" ] &&
			exec "$c/tests/gpu/run.sh" "$@"
	done
	echo "GPU check: no bundle here: build it on a CPU machine with hw/x86/gpu-bundle.sh," \
		"carry out/gpu-bundle/ to the GPU machine and run its tests/gpu/run.sh" >&2
	exit 2
fi
PY=${SDR_GPU_PYTHON:-python3}
OUT=${SDR_GPU_OUT:-$PWD/sdr-gpu-check-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT" || exit 2
OUT=$(cd "$OUT" && pwd)
T0=$(date +%s)
say() { printf '%s\n' "$*" | tee -a "$OUT/summary.txt"; }
cannot() {
	say "GPU check: cannot run: $*"
	printf '{"ran": false, "reason": "%s"}\n' "$(echo "$*" | tr -d '"\\' | tr '\n' ' ')" \
		>"$OUT/summary.json"
	exit 2
}

# ---- what the machine must have
command -v "$PY" >/dev/null 2>&1 || cannot "no $PY (set SDR_GPU_PYTHON to a python3 with torch)"
want=$(sed -n 's/^glibc >= //p' "$B/DEPENDS" 2>/dev/null)
have=$(getconf GNU_LIBC_VERSION 2>/dev/null | awk '{print $2}')
if [ -n "$want" ] && [ -n "$have" ] &&
	[ "$(printf '%s\n%s\n' "$want" "$have" | sort -V | head -1)" != "$want" ]; then
	cannot "the bundle needs glibc >= $want, this machine has $have"
fi
# the bundle's DPDK drivers (no DPDK installed here): EAL loads them only
# from a path no other user can write
if ! grep -q '^if ls' "$B/bin/sdr-dpu" ||
	! sh -c "$(sed -n 's/^if \(ls .*\); then$/\1/p' "$B/bin/sdr-dpu")" >/dev/null 2>&1; then
	d=$B/lib/daemon/pmds
	while [ -n "$d" ] && [ "$d" != / ]; do
		[ -n "$(find "$d" -maxdepth 0 -perm -0002 2>/dev/null)" ] &&
			cannot "the bundle lies under $d, which anyone may write: DPDK refuses to load" \
				"its drivers from there; move the bundle (e.g. to \$HOME)"
		d=$(dirname "$d")
	done
fi
"$B/bin/sdr-dpu" --help >/dev/null 2>"$OUT/sdr-dpu-help.err" ||
	cannot "the bundle's sdr-dpu does not start: $(tail -2 "$OUT/sdr-dpu-help.err")"
env_json=$("$PY" - 2>"$OUT/env.err" <<'PY'
import json, sys
try:
    import torch
except Exception as e:
    print(json.dumps({"missing": f"torch is not importable: {e}"})); sys.exit(0)
import torch.distributed as dist
info = {"python": sys.version.split()[0], "torch": torch.__version__,
        "cuda": torch.version.cuda}
if not torch.cuda.is_available():
    info["missing"] = (f"torch {torch.__version__} cannot use CUDA (torch.version.cuda="
                       f"{torch.version.cuda}; a CPU-only torch, or no driver/GPU)")
elif not dist.is_available() or not dist.is_nccl_available():
    info["missing"] = f"torch {torch.__version__} has no NCCL (torch.distributed NCCL backend)"
else:
    info["nccl"] = ".".join(str(x) for x in torch.cuda.nccl.version())
    info["gpu"] = torch.cuda.get_device_name(0)
    info["gpus"] = torch.cuda.device_count()
print(json.dumps(info))
PY
) || cannot "$PY failed: $(tail -3 "$OUT/env.err")"
echo "$env_json" >"$OUT/env.json"
missing=$("$PY" -c 'import json,sys; print(json.loads(sys.argv[1]).get("missing",""))' "$env_json")
SELF=${SDR_GPU_SELFTEST:-0}
[ -z "$missing" ] || [ "$SELF" = 1 ] || cannot "$missing"
say "GPU check: $(cat "$B/VERSION" 2>/dev/null) on $env_json"
case $("$PY" -c 'import torch; print(torch.__version__.split(".")[0])') in
1) say "GPU check: note: torch 1.x; the check is meant for torch 2.x" ;;
esac

# ---- the environment of every part
export LD_LIBRARY_PATH="$B/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONPATH="$B/python${PYTHONPATH:+:$PYTHONPATH}"
export SDR_LIBSDR="$B/lib/libsdr.so.2" SDR_PIPE="$B/bin/sdr-pipe"
export SDR_MAX_MSG=4194304 NCCL_BUFFSIZE=4194304
export NCCL_IB_DISABLE=1 NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1 NCCL_MAX_NCHANNELS=2
export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET,ENV
export CUBLAS_WORKSPACE_CONFIG=:4096:8
DPU_PID=
cleanup() { [ -n "$DPU_PID" ] && kill -KILL "$DPU_PID" 2>/dev/null; }
trap cleanup EXIT

# start_pair NAME [A's options] [--instance B's options]
start_pair() {
	local name=$1 a=() b=() inb=0 i
	shift
	for i in "$@"; do
		if [ $inb = 0 ] && [ "$i" = --instance ]; then inb=1; continue; fi
		if [ $inb = 0 ]; then a+=("$i"); else b+=("$i"); fi
	done
	SA=$OUT/$name-a.sock SB=$OUT/$name-b.sock STATS=$OUT/$name-stats.json
	rm -f "$SA" "$SB"
	"$B/bin/sdr-dpu" --no-huge --no-shconf --no-pci -m "${SDR_GPU_MEM_MB:-2048}" \
		--file-prefix="sdr-gpu-$name-$$" --log-level=lib.eal:warning \
		--log-level=pmd.net.ring:warning -- --ring-pair --name "$SA" --ip 10.0.0.1 \
		"${a[@]}" --instance --name "$SB" --ip 10.0.0.2 "${b[@]}" --stats-json "$STATS" \
		>"$OUT/$name-dpu.log" 2>&1 &
	DPU_PID=$!
	for _ in $(seq 300); do
		[ -S "$SA" ] && [ -S "$SB" ] && return 0
		kill -0 "$DPU_PID" 2>/dev/null || break
		sleep 0.1
	done
	say "GPU check: sdr-dpu ($name) did not start: $(tail -3 "$OUT/$name-dpu.log")"
	return 1
}
stop_pair() {
	kill -INT "$DPU_PID" 2>/dev/null
	for _ in $(seq 300); do kill -0 "$DPU_PID" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$DPU_PID" 2>/dev/null
	DPU_PID=
}
# pair_stat NAME: "messages received, frames the link dropped" from a pair's stats JSON
pair_stat() {
	"$PY" - "$OUT/$1-stats.json" <<'PY' 2>/dev/null || echo "0 0"
import json, sys
d = json.load(open(sys.argv[1]))
ins = d["instances"]
print(sum(i["qp_totals"]["msgs_recv"] for i in ins),
      sum(i.get("link", {}).get("dropped_loss", 0) for i in ins))
PY
}
launch() { # LOG TIMEOUT ARGS...: sdr.launch of 2 ranks, one per DPU of the pair
	local log=$1 t=$2
	shift 2
	timeout $((t + 20)) "$PY" -m sdr.launch --ranks 2 --place 0,1 --dpu "$SA,$SB" \
		--timeout "$t" -- "$@" >"$log" 2>&1
}
loss="loss=1e-3"

# ---- (a) NCCL over sdr under 1e-3 loss, AUTO
a_pass=false a_why=
if [ "$SELF" = 1 ]; then
	a_pass=true a_line="not run (self-test without GPU)"
elif start_pair a --link "$loss,seed=1" --port-rate 10g --instance --link "$loss,seed=2" \
	--port-rate 10g; then
	SDR_REL=auto NCCL_NET_PLUGIN=sdr NCCL_NET=sdr launch "$OUT/a.log" 180 \
		"$here/nccl_check.py" --check --json "$OUT/a.json" --label nccl-sdr
	rc=$?
	stop_pair
	read -r msgs lost < <(pair_stat a)
	loaded=$(grep -c 'NET/Plugin.*sdr\|Using network sdr' "$OUT/a.log")
	via=$(grep -c 'via NET/sdr' "$OUT/a.log")
	closed=$(grep -cE 'NET/sdr : (send|receive) comm on sdr0 closed: [1-9][0-9]* messages, [1-9]' \
		"$OUT/a.log")
	ok=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["pass"])' "$OUT/a.json" \
		2>/dev/null)
	if [ $rc != 0 ]; then a_why="the ranks exited $rc (a.log)"
	elif [ "$ok" != True ]; then a_why="wrong results (a.json)"
	elif [ "$loaded" = 0 ]; then a_why="NCCL's log does not show the sdr plugin loaded"
	elif [ "$closed" = 0 ] || [ "${msgs:-0}" = 0 ]; then
		a_why="no traffic through the plugin (plugin lines $closed, daemon messages $msgs)"
	else a_pass=true
	fi
	a_line="all_reduce, broadcast, send/recv 1 KiB - 64 MiB exact; plugin loaded ($loaded"
	a_line="$a_line log lines, $via channels via NET/sdr), $closed comms closed with traffic,"
	a_line="$a_line $msgs messages through sdr-dpu, $lost frames lost to the link"
else
	a_why="sdr-dpu did not start" a_line=
fi
say "GPU check (a) NCCL over sdr, 2 ranks on 1 GPU, 1e-3 loss, AUTO:" \
	"$([ $a_pass = true ] && echo PASS || echo "FAIL: $a_why") - $a_line"
dev=cuda
[ "$SELF" = 1 ] && dev=cpu

# ---- (b) pipeline training, CUDA tensors over the sdr backend, bit-identical
b_pass=false b_why= b_line=
if start_pair b --link "$loss,seed=3" --port-rate 10g --instance --link "$loss,seed=4" \
	--port-rate 10g; then
	SDR_REL=auto launch "$OUT/b.log" 200 "$B/python/train/train_pipe.py" --device $dev \
		--verify --iters 4 --sched 1f1b --quiet --out "$OUT/b-train"
	rc=$?
	stop_pair
	read -r msgs lost < <(pair_stat b)
	b_line=$(grep -o 'bit-identity: .*' "$OUT/b.log" | head -1)
	if [ $rc != 0 ]; then b_why="exit $rc (b.log)"
	elif ! grep -q 'bit-identity: .* PASS' "$OUT/b.log"; then b_why="not bit-identical"
	elif [ "${msgs:-0}" = 0 ]; then b_why="no message through sdr-dpu"
	else b_pass=true
	fi
	b_line="$b_line; $msgs messages through sdr-dpu, $lost frames lost to the link"
else
	b_why="sdr-dpu did not start"
fi
say "GPU check (b) pipeline training, $dev tensors over the sdr backend, 2 stages, 1e-3" \
	"loss: $([ $b_pass = true ] && echo PASS || echo "FAIL: $b_why") - $b_line"

# ---- (c) NCCL over sdr vs NCCL Socket, all_reduce 1 - 64 MiB (informative)
c_line="not run"
if [ "$SELF" = 1 ]; then
	c_line="not run (self-test without GPU)"
elif start_pair c --instance; then
	SDR_REL=sr NCCL_NET_PLUGIN=sdr NCCL_NET=sdr launch "$OUT/c-sdr.log" 120 \
		"$here/nccl_check.py" --bench --json "$OUT/c-sdr.json" --label nccl-sdr
	rs=$?
	stop_pair
	NCCL_NET_PLUGIN=none NCCL_NET=Socket launch "$OUT/c-socket.log" 120 \
		"$here/nccl_check.py" --bench --json "$OUT/c-socket.json" --label nccl-socket
	rk=$?
	c_line=$("$PY" - "$OUT/c-sdr.json" "$OUT/c-socket.json" "$rs" "$rk" <<'PY'
import json, sys
def load(p):
    try:
        return {r["bytes"]: r for r in json.load(open(p))["bench"]}
    except Exception:
        return {}
s, k = load(sys.argv[1]), load(sys.argv[2])
rows = ["size     sdr ms  sdr GB/s   socket ms  socket GB/s"]
for n in sorted(set(s) | set(k)):
    a, b = s.get(n), k.get(n)
    f = lambda r, key, w: f"{r[key]:{w}.2f}" if r else " " * (w - 1) + "-"
    rows.append(f"{n >> 20:3d} MiB {f(a, 'median_ms', 9)} {f(a, 'algbw_gbps', 9)}   "
                f"{f(b, 'median_ms', 9)} {f(b, 'algbw_gbps', 11)}")
print(f"sdr exit {sys.argv[3]}, socket exit {sys.argv[4]}; " + " | ".join(rows))
PY
)
	printf '%s\n' "$c_line" | tr '|' '\n' >"$OUT/c-table.txt"
fi
say "GPU check (c) all_reduce, NCCL over sdr (lossless ring pair, SR) vs NCCL Socket" \
	"(over loopback: no namespaces, not the emulated link): $c_line"

# ---- summary
el=$(($(date +%s) - T0))
"$PY" - "$OUT" "$a_pass" "$b_pass" "$el" <<'PY'
import json, os, sys
out = sys.argv[1]
def load(n):
    try:
        return json.load(open(os.path.join(out, n)))
    except Exception:
        return None
lines = [l.rstrip("\n") for l in open(os.path.join(out, "summary.txt"))]
res = {"ran": True, "env": load("env.json"), "seconds": int(sys.argv[4]),
       "a": {"pass": sys.argv[2] == "true", "line": next((l for l in lines if "(a)" in l), ""),
             "results": load("a.json")},
       "b": {"pass": sys.argv[3] == "true", "line": next((l for l in lines if "(b)" in l), ""),
             "result": load("b-train/result.json")},
       "c": {"line": next((l for l in lines if "(c)" in l), ""), "sdr": load("c-sdr.json"),
             "socket": load("c-socket.json"),
             "note": "Socket ran over the loopback interface: without network namespaces "
                     "the emulated link is not in its path"}}
json.dump(res, open(os.path.join(out, "summary.json"), "w"), indent=1)
PY
say "GPU check: $([ $a_pass = true ] && [ $b_pass = true ] && echo PASS || echo FAIL)" \
	"in ${el} s; logs and summary.json in $OUT"
[ $a_pass = true ] && [ $b_pass = true ]
