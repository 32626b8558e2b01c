#!/usr/bin/env python3
# Fault harness (test layer, shared by the fault tests, the fault soak and
# the fault benchmark in tests/faults/): two sdr-dpu daemons in the rig's
# network namespaces over a veth pair (hw/x86/rig.sh, as the integration
# tests use it), link outages (`ip link set ... down/up` of the veth), kill -9
# and restart of a daemon with the same command line, and sdr-send/sdr-recv
# transfers with verification whose per-message completions are parsed and
# placed on this process's CLOCK_MONOTONIC timeline. Needs root.
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SRC = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.environ.get("SDR_BUILD", os.path.join(SRC, "build"))
SDR_DPU = os.environ.get("SDR_DPU", os.path.join(BUILD, "firmware", "sdr-dpu"))
SDR_SEND = os.environ.get("SDR_SEND", os.path.join(BUILD, "host", "tools", "sdr-send"))
SDR_RECV = os.environ.get("SDR_RECV", os.path.join(BUILD, "host", "tools", "sdr-recv"))
SDR_LIBSDR = os.environ.get("SDR_LIBSDR", os.path.join(BUILD, "host", "libsdr", "libsdr.so.2"))
RIG = os.path.join(SRC, "hw", "x86", "rig.sh")
# the sr_link.sh long-haul link (docs/reliability.md "Measured completion time")
LONGHAUL = "delay=12.5ms,rate=1gbit,buffer=4MB"


def now():
    """seconds on CLOCK_MONOTONIC, the clock of the tools' t0_mono_s"""
    return time.monotonic()


def log(*a):
    print("[%s]" % time.strftime("%H:%M:%S"), *a, flush=True)


class Skip(Exception):
    """the test cannot run here (exit 77)"""


def need_root():
    if os.geteuid() != 0:
        raise Skip("needs root for ip netns")
    for p in (SDR_DPU, SDR_SEND, SDR_RECV):
        if not os.access(p, os.X_OK):
            raise Skip("not built: " + p)


def daemon_has_option(opt):
    """whether this sdr-dpu knows --OPT (from its --help)"""
    r = subprocess.run([SDR_DPU, "--", "--help"], capture_output=True, text=True)
    return ("--" + opt) in (r.stdout + r.stderr)


def restore_supported():
    """whether a daemon restart is survivable with this build: sdr-dpu keeps
    instance state (--state-dir) and libsdr re-attaches (sdr_ctx_state)"""
    if not daemon_has_option("state-dir"):
        return False
    try:
        import ctypes
        return hasattr(ctypes.CDLL(SDR_LIBSDR), "sdr_ctx_state")
    except OSError:
        return False


def horizon_args(ms):
    """the daemon option that keeps a QP stalled, not failed, for ms
    (--outage-horizon-ms, or its old name --global-timeout-ms)"""
    if daemon_has_option("outage-horizon-ms"):
        return ["--outage-horizon-ms", str(ms)]
    return ["--global-timeout-ms", str(ms)]


class Daemon:
    """one sdr-dpu in the namespace of side a or b; the same command line
    for every start (restart() = kill -9, then start again)"""

    def __init__(self, rig, side, args, mem_mb=512):
        self.rig, self.side, self.args = rig, side, list(args)
        r = rig.env
        s = side.upper()
        self.ns, self.ifc = r["NS_" + s], r["VETH_" + s]
        other = "B" if s == "A" else "A"
        self.sock = os.path.join(rig.tmp, "%s.sock" % side)
        self.json = os.path.join(rig.tmp, "%s.json" % side)
        self.prefix = "sdr-fault-%s-%d" % (side, os.getpid())
        eal = subprocess.run(["bash", RIG, "eal", self.prefix, str(mem_mb)],
                             capture_output=True, text=True, check=True).stdout.split()
        self.cmd = (["ip", "netns", "exec", self.ns, SDR_DPU] + eal + [r["VDEV_" + s], "--",
                    "--name", self.sock, "--ip", r["DIP_" + s], "--mac", r["DMAC_" + s],
                    "--peer-mac", r["DMAC_" + other], "--stats-json", self.json] + self.args)
        self.proc = None
        self.starts = 0
        self.t_ready = None

    def log_path(self):
        return os.path.join(self.rig.tmp, "%s-%d.log" % (self.side, self.starts))

    def start(self, timeout=20):
        """start it; returns the monotonic time its socket appeared"""
        if os.path.exists(self.sock):
            os.unlink(self.sock)
        self.starts += 1
        out = open(self.log_path(), "w")
        self.proc = subprocess.Popen(self.cmd, stdout=out, stderr=subprocess.STDOUT)
        out.close()
        end = now() + timeout
        while now() < end:
            if os.path.exists(self.sock):
                self.t_ready = now()
                return self.t_ready
            if self.proc.poll() is not None:
                break
            time.sleep(0.01)
        self.kill9()
        raise RuntimeError("daemon %s did not start:\n%s" % (self.side, self.log()))

    def log(self):
        try:
            return open(self.log_path()).read()
        except OSError:
            return ""

    @property
    def pid(self):
        return self.proc.pid if self.proc else None

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def kill9(self):
        """SIGKILL; returns the monotonic time of the kill"""
        t = now()
        if self.alive():
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait()
        return t

    def restart(self, timeout=20):
        """kill -9 and start with the same command line; returns (time of
        the kill, time the new daemon's socket appeared)"""
        tk = self.kill9()
        return tk, self.start(timeout)

    def stop(self, timeout=30):
        """SIGINT (the daemon writes its stats JSON); 0 when it exited in
        time, else killed and 1"""
        if not self.alive():
            return 0
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(timeout)
            return 0
        except subprocess.TimeoutExpired:
            self.kill9()
            return 1

    def stats(self):
        """the stats JSON written at the last clean stop"""
        with open(self.json) as f:
            return json.load(f)

    def rss_kb(self):
        with open("/proc/%d/status" % self.pid) as f:
            for ln in f:
                if ln.startswith("VmRSS:"):
                    return int(ln.split()[1])
        return 0


class Rig:
    """the namespaces and veth of one tag, with daemons a and b"""

    def __init__(self, tag=None, keep=False):
        self.tag = tag or str(os.getpid() % 100000)
        self.tmp = tempfile.mkdtemp(prefix="sdr-fault.")
        self.keep = keep or os.environ.get("SDR_KEEP_TMP") == "1"
        r = subprocess.run(["bash", RIG, "veth-up", self.tag], capture_output=True, text=True)
        if r.returncode:
            shutil.rmtree(self.tmp, ignore_errors=True)
            raise Skip("cannot create the namespaces: " + r.stderr.strip())
        self.env = dict(ln.split("=", 1) for ln in r.stdout.splitlines() if "=" in ln)
        self.daemons = {}
        self.procs = []
        self.outages = []  # (t_down, t_up) of every flap

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        for d in self.daemons.values():
            d.stop()
        subprocess.run(["bash", RIG, "veth-down", self.tag], capture_output=True)
        if self.keep:
            print("kept", self.tmp)
        else:
            shutil.rmtree(self.tmp, ignore_errors=True)

    def daemon(self, side, args, start=True):
        d = Daemon(self, side, args)
        self.daemons[side] = d
        if start:
            d.start()
        return d

    def pair(self, args_a, args_b=None):
        """daemons a and b (b with args_a too when args_b is None)"""
        a = self.daemon("a", args_a)
        b = self.daemon("b", args_a if args_b is None else args_b)
        return a, b

    # ---- the link ----
    def _link(self, state):
        subprocess.run(["ip", "-n", self.env["NS_A"], "link", "set", self.env["VETH_A"],
                        state], check=True)

    def link_down(self):
        """veth end a down (the peer end loses its carrier too); returns
        the monotonic time"""
        self._link("down")
        t = now()
        self.outages.append([t, None])
        return t

    def link_up(self):
        self._link("up")
        t = now()
        if self.outages and self.outages[-1][1] is None:
            self.outages[-1][1] = t
        return t

    def flap(self, seconds):
        """link down for `seconds`; returns (t_down, t_up)"""
        td = self.link_down()
        time.sleep(seconds)
        return td, self.link_up()

    # ---- transfers ----
    def transfer(self, sizes, count, rel="sr", window=8, seed=1, timeout=60, send_args=(),
                 recv_args=(), line_buffered=False):
        """start sdr-recv in b (TCP bootstrap on b's kernel address) and
        sdr-send in a, both with --json; returns a running Transfer"""
        return Transfer(self, sizes, count, rel, window, seed, timeout, send_args, recv_args,
                        line_buffered)


class Msg:
    __slots__ = ("idx", "size", "status", "error", "reason", "t")

    def __init__(self, o, t0):
        self.idx, self.size, self.status = o["msg"], o["size"], o["status"]
        self.error = o.get("error", 0)
        self.reason = o.get("reason", "")
        if "t_mono_s" in o:  # the completion on CLOCK_MONOTONIC
            self.t = o["t_mono_s"]
        else:
            self.t = t0 + o["t_ms"] / 1e3 if t0 is not None else None


class Side:
    """the parsed output of one tool: per-message lines, summaries, exit"""

    def __init__(self, path, rc, errpath):
        self.rc = rc
        self.lines = []
        self.summary = {}
        self.peer = None
        self.err = open(errpath).read() if os.path.exists(errpath) else ""
        raw = []
        for ln in open(path):
            ln = ln.strip()
            if not ln.startswith("{"):
                continue
            try:
                o = json.loads(ln)
            except ValueError:
                continue
            if "summary" in o:
                if o.get("from") == "peer":
                    self.peer = o
                else:
                    self.summary = o
            elif "msg" in o:
                raw.append(o)
        t0 = self.summary.get("t0_mono_s")
        self.msgs = [Msg(o, t0) for o in raw]

    def ok(self):
        return [m for m in self.msgs if m.status in ("sent", "complete")]

    def bad(self):
        return [m for m in self.msgs if m.status not in ("sent", "complete")]

    def duplicates(self):
        seen, dup = set(), []
        for m in self.msgs:
            if m.idx in seen:
                dup.append(m.idx)
            seen.add(m.idx)
        return dup


class Transfer:
    def __init__(self, rig, sizes, count, rel, window, seed, timeout, send_args, recv_args,
                 line_buffered):
        e = rig.env
        self.rig = rig
        self.n = count * len(str(sizes).split(","))
        port = 20000 + (os.getpid() * 7 + len(rig.procs) * 13) % 20000
        tag = "x%d" % len(rig.procs)
        self.paths = {k: os.path.join(rig.tmp, "%s-%s" % (tag, k))
                      for k in ("send.out", "send.err", "recv.out", "recv.err")}
        pre = ["stdbuf", "-oL"] if line_buffered else []
        b, a = rig.daemons["b"], rig.daemons["a"]
        rcmd = (["ip", "netns", "exec", e["NS_B"]] + pre +
                [SDR_RECV, "--dpu", b.sock, "--server", "--bind", e["KIP_B"], "--port",
                 str(port), "--timeout", str(timeout), "--json", "--guard"] + list(recv_args))
        scmd = (["ip", "netns", "exec", e["NS_A"]] + pre +
                [SDR_SEND, "--dpu", a.sock, "--connect", "%s:%d" % (e["KIP_B"], port),
                 "--rel", rel, "--sizes", str(sizes), "--count", str(count), "--window",
                 str(window), "--seed", str(seed), "--timeout", str(timeout), "--json"] +
                list(send_args))
        self.recv = self._popen(rcmd, "recv")
        time.sleep(0.2)  # the listener first
        self.send = self._popen(scmd, "send")
        self.t_start = now()
        rig.procs += [self.recv, self.send]

    def _popen(self, cmd, what):
        out = open(self.paths[what + ".out"], "w")
        err = open(self.paths[what + ".err"], "w")
        p = subprocess.Popen(cmd, stdout=out, stderr=err)
        out.close()
        err.close()
        return p

    def running(self):
        return self.send.poll() is None or self.recv.poll() is None

    def wait_first(self, what="recv", timeout=30):
        """until the tool's output has its first message line (needs
        line_buffered); True when it came"""
        end = now() + timeout
        while now() < end:
            with open(self.paths[what + ".out"]) as f:
                if '"msg"' in f.read():
                    return True
            if not self.running():
                return False
            time.sleep(0.05)
        return False

    def kill(self):
        for p in (self.send, self.recv):
            if p.poll() is None:
                p.kill()
        return self.wait(5)

    def wait(self, timeout=None):
        """until both tools exit; returns (send Side, recv Side)"""
        end = None if timeout is None else now() + timeout
        for p in (self.send, self.recv):
            left = None if end is None else max(0.1, end - now())
            try:
                p.wait(left)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.s = Side(self.paths["send.out"], self.send.returncode, self.paths["send.err"])
        self.r = Side(self.paths["recv.out"], self.recv.returncode, self.paths["recv.err"])
        return self.s, self.r

    def check(self):
        """the accounting of a finished transfer: [] or what is wrong.
        sent = delivered = planned, every message once at each end, none
        failed, no unexpected completion, guard bytes intact (sdr-recv
        --guard reports a write outside a posted buffer as a failure)."""
        s, r = self.s, self.r
        bad = []
        if s.rc != 0:
            bad.append("sdr-send exited %s" % s.rc)
        if r.rc != 0:
            bad.append("sdr-recv exited %s" % r.rc)
        for name, side in (("send", s), ("recv", r)):
            d = side.duplicates()
            if d:
                bad.append("%s: duplicate completions of messages %s" % (name, d[:10]))
            if side.bad():
                m = side.bad()[0]
                bad.append("%s: %d message(s) not delivered, first %d: %s %s %s"
                           % (name, len(side.bad()), m.idx, m.status, m.error, m.reason))
            if side.summary.get("unexpected", 0):
                bad.append("%s: %d unexpected completions" % (name, side.summary["unexpected"]))
            if len(side.ok()) != self.n:
                bad.append("%s: %d of %d messages completed" % (name, len(side.ok()), self.n))
        if s.peer and (s.peer.get("ok") != self.n or s.peer.get("failed")):
            bad.append("receiver's result to the sender: %s" % s.peer)
        if bad:
            for what in ("send.err", "recv.err"):
                txt = open(self.paths[what]).read().strip()
                if txt:
                    bad.append("%s:\n%s" % (what, txt[-3000:]))
        return bad


def first_after(msgs, t):
    """the first message completing after monotonic time t, or None"""
    after = [m for m in msgs if m.t is not None and m.t >= t]
    return min(after, key=lambda m: m.t) if after else None


def goodput_bps(msgs, t_from, t_to):
    """payload bit/s of the messages completed in [t_from, t_to)"""
    b = sum(m.size for m in msgs if m.t is not None and t_from <= m.t < t_to)
    return 8.0 * b / (t_to - t_from) if t_to > t_from else 0.0


def main_wrap(fn):
    """run fn(); exit 77 on Skip, 1 on an AssertionError/RuntimeError"""
    try:
        rc = fn()
    except Skip as e:
        print("SKIP:", e)
        sys.exit(77)
    except (AssertionError, RuntimeError) as e:
        print("FAIL:", e, file=sys.stderr)
        sys.exit(1)
    sys.exit(rc or 0)
