#!/usr/bin/env python3
# Soak with faults (suite soak, root; tests/faults/, the fault harness
# faultlib.py and chaos.py's fault schedule): the chaos test's traffic (SR,
# EC, AUTO; 1 B .. 1 MiB, loss, reordering, duplication) for
# SDR_SOAK_SECONDS (default 3600) while the veth goes down for 0.05..3 s
# every 5..60 s and, where the daemon and libsdr restore QPs, a daemon is
# killed (-9) and restarted (one fault in five; SDR_SOAK_RESTART=0: never).
# Asserts what chaos.py asserts, per transfer and for the whole run, and
# that neither daemon grows: a least-squares line of each one's resident
# memory after every round (tests/integration/mem_slope.py, as soak.sh;
# from its last start), past the first third of the run (the receiving
# daemon first uses its mbuf pool's pages for ~200 rounds, ~45 MB at -m
# 512, then is flat: soak 10 minutes or more), rises by at most
# SDR_SOAK_MAX_SLOPE bytes per round (1024).
#   sudo SDR_SOAK_SECONDS=600 meson test -C build --suite soak soak_faults
#   env: SDR_SOAK_SECONDS, SDR_SOAK_SEED (random, printed), SDR_SOAK_RESTART,
#        SDR_SOAK_MAX_SLOPE
import os
import random
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import faultlib as F  # noqa: E402
import chaos as C  # noqa: E402

sys.path.insert(0, C.IT)
import mem_slope  # noqa: E402


def run():
    F.need_root()
    secs = float(os.environ.get("SDR_SOAK_SECONDS", "3600"))
    seed = int(os.environ.get("SDR_SOAK_SEED") or random.SystemRandom().randrange(1, 1 << 31))
    want = os.environ.get("SDR_SOAK_RESTART", "")
    restart = want != "0" and F.restore_supported()
    limit = float(os.environ.get("SDR_SOAK_MAX_SLOPE", "1024"))
    print("soak with faults: %.0f s, seed %d (replay: SDR_SOAK_SEED=%d)" % (secs, seed, seed),
          flush=True)
    if want == "1" and not restart:
        raise F.Skip("SDR_SOAK_RESTART=1 needs sdr-dpu --state-dir and libsdr re-attach")
    rng = random.Random(seed)
    with F.Rig() as rig:
        extra = F.horizon_args(60000)
        if restart:
            extra += ["--state-dir", os.path.join(rig.tmp, "state")]
        for side in "ab":
            rig.daemon(side, ["--link", "%s,seed=%d" % (C.LINK, rng.randrange(1 << 30))] + extra)
        chaos = C.Chaos(rig, random.Random(rng.randrange(1 << 30)), restart)
        chaos.gap = (5.0, 60.0)
        samples = {"a": [], "b": []}
        t0 = F.now()
        chaos.start()
        rounds = msgs = first = 0
        while F.now() < t0 + secs or rounds < 3:
            rel, ec = C.RELS[rounds % len(C.RELS)]
            rounds += 1
            with chaos.lock:
                x = rig.transfer(C.SIZES, C.COUNT, rel=rel, seed=seed + rounds, timeout=60,
                                 send_args=ec)
                if restart:
                    time.sleep(1.0)  # (attached: chaos.py)
            x.wait(120)
            bad = x.check()
            if bad:
                chaos.stop_ev.set()
                raise AssertionError("round %d (%s) after %s:\n%s"
                                     % (rounds, rel, chaos.events[-5:], "\n".join(bad)))
            msgs += x.n
            first += int(subprocess.run(
                [sys.executable, os.path.join(C.IT, "sr_check.py"), "--print-first-pass",
                 "--sizes", C.SIZES, "--count", str(C.COUNT)],
                capture_output=True, text=True, check=True).stdout)
            for side, d in rig.daemons.items():
                k = mem_slope.sample_at_rest(d.pid, 10)
                samples[side].append([rounds, F.now() - t0, d.starts, k["rss"], k["heap"],
                                      k["anon"], k["shmem"], k["file"], k["host"]])
            if rounds % 50 == 1:
                F.log("round %d, %d messages, %d faults; RSS a %d kB, b %d kB"
                      % (rounds, msgs, len(chaos.events), samples["a"][-1][3],
                         samples["b"][-1][3]))
        chaos.stop_ev.set()
        chaos.join()
        rig.link_up()
        outages = sum(1 for e in chaos.events if e.startswith("outage"))
        F.log("%d rounds, %d messages, %d outages, %d restarts"
              % (rounds, msgs, outages, len(chaos.events) - outages))
        grew = []
        for side, rows in samples.items():
            # from the last start of the daemon on (a restart starts it afresh)
            rows = [r for r in rows if r[2] == rows[-1][2]]
            print("daemon %s:" % side)
            cols = {"rss": 3, "heap": 4, "anon": 5, "shmem": 6, "file": 7, "host": 8}
            _, _, failed = mem_slope.report(rows, cols, max(20, len(rows) // 3), limit)
            if failed:
                grew.append(side)
        for d in rig.daemons.values():
            assert d.stop() == 0, "daemon %s did not stop cleanly" % d.side
        if not restart:
            r = subprocess.run(
                [sys.executable, os.path.join(C.IT, "rel_check.py"), "--sender",
                 rig.daemons["a"].json, "--receiver", rig.daemons["b"].json, "--messages",
                 str(msgs), "--first-pass", str(first), "--min-repair", "1"],
                capture_output=True, text=True)
            print(r.stdout.strip())
            assert r.returncode == 0, "counter identities:\n" + r.stderr + r.stdout
        assert not grew, "resident memory grew: daemon(s) %s" % ", ".join(grew)
        print("soak with faults: %d rounds, %d messages bit-exact through %d outages; "
              "identities hold; RSS did not grow (seed %d)" % (rounds, msgs, outages, seed))


if __name__ == "__main__":
    F.main_wrap(run)
