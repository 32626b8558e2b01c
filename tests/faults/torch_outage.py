#!/usr/bin/env python3
# Training through faults (integration, root; tests/faults/, the fault
# harness faultlib.py): pipeline-parallel training of the tiny GPT
# (host/python/train/train_pipe.py, 4 stages, 2 per DPU, SR) over two
# daemons on veth, with a 5 s link outage in the middle of the run; it must
# finish and stay bit-identical to a single-process run of the same
# micro-batches (train_pipe.py --verify), and the outage must show as one
# long iteration. Where the daemon and libsdr restore QPs after a daemon
# restart (sdr-dpu --state-dir, libsdr re-attach), the same run again with
# a kill -9 and restart of daemon b, then of daemon a, mid-run. Skipped (77)
# when /usr/bin/python3 cannot import torch.
#   env: SDR_TORCH_OUTAGE_S (5)
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import faultlib as F  # noqa: E402

TRAIN = os.path.join(F.SRC, "host", "python", "train", "train_pipe.py")
MODEL = ("--dim 32 --heads 2 --layers 4 --seq 32 --mb 2 --micro 4 --iters 8 --verify "
         "--sched 1f1b --rtt 2ms").split()
PY = "/usr/bin/python3"


def train(rig, tag, fault):
    """one training run; fault(rig) is called once iteration 2 is done.
    Returns (rc, output, iteration times in ms)."""
    env = dict(os.environ)
    env.pop("SDR_DPU", None)  # for the sdr package it is a daemon socket
    env["PYTHONPATH"] = os.path.join(F.SRC, "host", "python")
    env.setdefault("SDR_LIBSDR", os.path.join(F.BUILD, "host", "libsdr", "libsdr.so.2"))
    env.setdefault("SDR_PIPE", os.path.join(F.BUILD, "host", "pipe", "sdr-pipe"))
    env["SDR_REL"] = "sr"
    env["SDR_MAX_MSG"] = "1048576"
    out_path = os.path.join(rig.tmp, tag + ".log")
    a, b = rig.daemons["a"], rig.daemons["b"]
    cmd = [PY, "-u", "-m", "sdr.launch", "--ranks", "4", "--place", "0,0,1,1", "--dpu",
           "%s,%s" % (a.sock, b.sock), "--timeout", "100", "--", TRAIN] + MODEL + [
               "--out", os.path.join(rig.tmp, tag)]
    with open(out_path, "w") as out:
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, env=env)
    done = False
    while p.poll() is None:
        if not done and re.search(r"iter +2 ", open(out_path).read()):
            fault(rig)
            done = True
        time.sleep(0.05)
    txt = open(out_path).read()
    iters = [float(x) for x in re.findall(r"iter +\d+ +loss \S+ +iteration +([\d.]+) ms", txt)]
    if not done:
        raise AssertionError("%s: the run ended before iteration 2 (rc %d):\n%s"
                             % (tag, p.returncode, txt[-4000:]))
    return p.returncode, txt, iters


def check(tag, rc, txt, iters, longest_min_ms):
    F.log("%s: rc %d, iteration ms %s" % (tag, rc, ", ".join("%.0f" % t for t in iters)))
    for ln in txt.splitlines():
        if "bit-identity" in ln or "restored" in ln or "restart" in ln:
            print("  " + ln)
    if rc != 0 or not re.search(r"bit-identity: .* PASS", txt):
        raise AssertionError("%s: not bit-identical to one process (rc %d):\n%s"
                             % (tag, rc, txt[-6000:]))
    assert iters and max(iters) >= longest_min_ms, \
        "%s: no iteration took %.0f ms: the fault did not hit the run" % (tag, longest_min_ms)


def run():
    F.need_root()
    r = subprocess.run([PY, "-c", "import torch"], capture_output=True, text=True)
    if r.returncode:
        raise F.Skip("torch is not importable by %s: %s" % (PY, r.stderr.strip()[-200:]))
    outage = float(os.environ.get("SDR_TORCH_OUTAGE_S", "5"))
    restore = F.restore_supported()
    with F.Rig() as rig:
        extra = F.horizon_args(60000)
        if restore:
            extra += ["--state-dir", os.path.join(rig.tmp, "state")]
        rig.daemon("a", ["--link", "delay=1ms,loss=1e-3,seed=5"] + extra)
        rig.daemon("b", ["--link", "delay=1ms,loss=1e-3,seed=6"] + extra)

        def flap(rg):
            F.log("link down for %.1f s" % outage)
            rg.flap(outage)

        rc, txt, it = train(rig, "outage", flap)
        check("outage", rc, txt, it, outage * 1000 * 0.9)
        if not restore:
            print("daemon restarts: not run (needs sdr-dpu --state-dir and libsdr re-attach)")
        else:
            for side in ("b", "a"):
                def kill(rg, side=side):
                    tk, tr = rg.daemons[side].restart()
                    F.log("daemon %s killed (-9) and up again in %.2f s" % (side, tr - tk))

                rc, txt, it = train(rig, "restart-" + side, kill)
                check("restart-" + side, rc, txt, it, 0)
    print("torch training: bit-identical to one process through a %.0f s link outage%s"
          % (outage, " and a restart of each daemon" if restore else ""))


if __name__ == "__main__":
    F.main_wrap(run)
