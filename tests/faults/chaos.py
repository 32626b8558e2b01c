#!/usr/bin/env python3
# Chaos test (integration, root; tests/faults/, the fault harness
# faultlib.py): ~60 s of back-to-back verified transfers (SR, EC, AUTO;
# 1 B .. 1 MiB) between two daemons over veth, the link emulator on both
# directions (loss, reordering, duplication), while a random schedule
# takes the veth down for 0.05..3 s at a time and, on a build that restores
# QPs after a restart (sdr-dpu --state-dir, libsdr re-attach), kills -9 and
# restarts a daemon (one fault in five). The schedule comes from one seed,
# printed first: SDR_CHAOS_SEED=N replays it. Asserts, per transfer:
# every message delivered once at each end and verified (sent = delivered
# = planned), no error completion, no unexpected or duplicate completion,
# no byte written in a receive slot past its message (sdr-recv --guard);
# for the whole run without restarts
# (a kill -9 takes the daemon's counters with it), the daemons' counter
# identities (rel_check.py: every data packet first pass or retransmission,
# every received frame placed, accepted or counted once).
#   env: SDR_CHAOS_SEED, SDR_CHAOS_SECONDS (60), SDR_CHAOS_RESTART (unset:
#        where supported; 0: never; 1: required)
import os
import random
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import faultlib as F  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
IT = os.path.join(F.SRC, "tests", "integration")
LINK = "delay=2ms,loss=1e-3,reorder=1%:3ms,dup=0.5%"
SIZES = "1,100,4K,64K,1M"
COUNT = 3
RELS = (("sr", []), ("ec", ["--ec", "rs:8:2"]), ("auto", []))


class Chaos(threading.Thread):
    """the fault schedule: link outages (and daemon restarts), from rng"""

    def __init__(self, rig, rng, restart):
        super().__init__(daemon=True)
        self.rig, self.rng, self.restart = rig, rng, restart
        self.stop_ev = threading.Event()
        self.events = []
        # held by a restart, and by a transfer's start until its tools have
        # attached: libsdr re-attaches to a daemon that comes back, but a
        # tool's first attach to a daemon that is down fails
        self.lock = threading.Lock()

    gap = (0.5, 4.0)  # seconds between faults, uniform

    def run(self):
        while not self.stop_ev.wait(self.rng.uniform(*self.gap)):
            if self.restart and self.rng.random() < 0.2:
                side = self.rng.choice("ab")
                with self.lock:
                    tk, tr = self.rig.daemons[side].restart()
                self.events.append("restart %s (%.2f s)" % (side, tr - tk))
            else:
                down = self.rng.choice((0.05, 0.2, 0.5, 1.0, self.rng.uniform(0.05, 3.0)))
                self.rig.flap(down)
                self.events.append("outage %.2f s" % down)


def run():
    F.need_root()
    seed = int(os.environ.get("SDR_CHAOS_SEED") or random.SystemRandom().randrange(1, 1 << 31))
    secs = float(os.environ.get("SDR_CHAOS_SECONDS", "60"))
    want = os.environ.get("SDR_CHAOS_RESTART", "")
    restart = want != "0" and F.restore_supported()
    print("chaos seed %d (replay: SDR_CHAOS_SEED=%d); daemon restarts %s"
          % (seed, seed, "on" if restart else "off"), flush=True)
    if want == "1" and not restart:
        raise F.Skip("SDR_CHAOS_RESTART=1 needs sdr-dpu --state-dir and libsdr re-attach")
    rng = random.Random(seed)
    with F.Rig() as rig:
        extra = F.horizon_args(60000)
        if restart:
            extra += ["--state-dir", os.path.join(rig.tmp, "state")]
        rig.daemon("a", ["--link", "%s,seed=%d" % (LINK, rng.randrange(1 << 30))] + extra)
        rig.daemon("b", ["--link", "%s,seed=%d" % (LINK, rng.randrange(1 << 30))] + extra)
        chaos = Chaos(rig, random.Random(rng.randrange(1 << 30)), restart)
        t_end = F.now() + secs
        chaos.start()
        rounds = msgs = first = 0
        while F.now() < t_end:
            rel, ec = RELS[rounds % len(RELS)]
            rounds += 1
            with chaos.lock:
                x = rig.transfer(SIZES, COUNT, rel=rel, window=8, seed=seed + rounds,
                                 timeout=60, send_args=ec)
                if restart:
                    time.sleep(1.0)  # (attached)
            x.wait(90)
            bad = x.check()
            if bad:
                chaos.stop_ev.set()
                raise AssertionError("round %d (%s) after %s:\n%s"
                                     % (rounds, rel, chaos.events, "\n".join(bad)))
            msgs += x.n
            first += int(subprocess.run(
                [sys.executable, os.path.join(IT, "sr_check.py"), "--print-first-pass",
                 "--sizes", SIZES, "--count", str(COUNT)],
                capture_output=True, text=True, check=True).stdout)
        chaos.stop_ev.set()
        chaos.join()
        rig.link_up()
        outages = [e for e in chaos.events if e.startswith("outage")]
        F.log("%d rounds, %d messages; faults: %s" % (rounds, msgs, ", ".join(chaos.events)))
        assert outages, "the schedule took the link down not once: it proved nothing"
        for d in rig.daemons.values():
            assert d.stop() == 0, "daemon %s did not stop cleanly" % d.side
        if not restart:  # a restart starts the counters again
            r = subprocess.run(
                [sys.executable, os.path.join(IT, "rel_check.py"), "--sender",
                 rig.daemons["a"].json, "--receiver", rig.daemons["b"].json, "--messages",
                 str(msgs), "--first-pass", str(first), "--min-repair", "1"],
                capture_output=True, text=True)
            print(r.stdout.strip())
            assert r.returncode == 0, "counter identities:\n" + r.stderr + r.stdout
        print("chaos: %d rounds, %d messages (SR, EC, AUTO) bit-exact, once each, guards "
              "intact, through %d outages%s (seed %d)"
              % (rounds, msgs, len(outages),
                 "" if not restart else " and %d restarts" % (len(chaos.events) - len(outages)),
                 seed))


if __name__ == "__main__":
    F.main_wrap(run)
