# SPDX-License-Identifier: BSD-3-Clause
"""sdr-pipe --print-schedule as the PyTorch pipeline (sdr.pipeline) reads
it, for every schedule over a grid of shapes and placements: every stage
computes F and B of every micro-batch once, B in micro-batch order (the
gradient accumulation order the bit-identity relies on); every post is
waited for later in the same program; a stage sends only on channels it
feeds and receives only on channels it is fed by; and on every channel the
sender posts its messages in the same order as the receiver posts its
receives (torch.distributed and libsdr match messages in posting order).
Also: refused configurations raise ValueError with sdr-pipe's message.
Needs SDR_PIPE (the build's sdr-pipe) and torch (sdr.pipeline imports it)."""
import sys

try:
    import torch  # noqa: F401
except ImportError as e:
    print(f"SKIP: torch is not importable: {e}")
    sys.exit(77)
from sdr import pipeline

n = 0
for sched in pipeline.SCHEDULES:
    for S in (2, 3, 4, 5):
        for M in (1, 2, 5, 8):
            places = [[0 if s < S // 2 else 1 for s in range(S)]]
            if S > 2:
                places.append([s % 2 for s in range(S)])
            for place in places:
                for rtt in (0.0, 0.025):
                    sch = pipeline.schedule(sched, S, M, place=place, tf=0.01, rtt=rtt,
                                            act_bytes=65536, rate_bps=1e9, rel="sr")
                    what = f"{sched} S={S} M={M} place={place} rtt={rtt}"
                    assert sch.stages == S and sch.micro == M and sch.place == place, what
                    sends, recvs = {}, {}
                    for s, prog in enumerate(sch.programs):
                        f = [i["m"] for i in prog if i["i"] == "compute" and i["op"] == "F"]
                        b = [i["m"] for i in prog if i["i"] == "compute" and i["op"] == "B"]
                        assert sorted(f) == list(range(M)), f"{what}: stage {s} F {f}"
                        assert b == list(range(M)), f"{what}: stage {s} B order {b}"
                        open_ = set()
                        for i in prog:
                            k = i["i"]
                            if k.startswith("post_"):
                                ch = sch.channels[i["ch"]]
                                send = k == "post_send"
                                assert (ch["src"] if send else ch["dst"]) == s, \
                                    f"{what}: stage {s} {k} on channel {ch}"
                                (sends if send else recvs).setdefault(i["ch"], []).append(i["m"])
                                open_.add((k[5:], i["ch"], i["m"]))
                            elif k.startswith("wait_"):
                                key = (k[5:], i["ch"], i["m"])
                                assert key in open_, f"{what}: stage {s} waits for {key} unposted"
                                open_.remove(key)
                        assert not open_, f"{what}: stage {s} never waits for {open_}"
                    assert sends.keys() == recvs.keys(), what
                    for ch in sends:
                        assert sends[ch] == recvs[ch], \
                            f"{what}: channel {ch} sent in order {sends[ch]}, received {recvs[ch]}"
                    assert sch.pred_iter_ms > 0, what
                    n += 1
for bad, kw in (("geopipe", {"comm": "blocking"}), ("1f1b", {"micro": 0})):
    try:
        pipeline.schedule(bad, 4, kw.pop("micro", 4), **kw)
        raise AssertionError(f"{bad} {kw} accepted")
    except ValueError as e:
        assert "sdr-pipe" in str(e), e
try:
    pipeline.schedule("zigzag", 4, 4)
    raise AssertionError("unknown schedule accepted")
except ValueError:
    pass
print(f"sdr-pipe schedules as the PyTorch pipeline reads them: {n} configurations consistent")
