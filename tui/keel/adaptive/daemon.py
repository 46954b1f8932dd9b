"""The adaptive CAKE daemon, started by `keel apply` when wan.shaping.adaptive
is on:

    python -m keel.adaptive.daemon --peer 10.99.0.1 --egress eth0 --ingress ifb4eth0 \\
        --tunnel wg0 --source 10.99.0.2 --up 600:1350:1500 --down 1500:3600:4000

Every 1/ADAPT_PROBE_HZ seconds (1/ADAPT_RESTING_HZ while the line rests: each
direction at its base, next to no load) it sends a probe through the tunnel
to the peer's reflector, reads the answers that came meanwhile (one-way delay each
way, and the peer's stall), reads what got through each CAKE (the devices'
byte counters), notes whether this router stalled (the loop woke late) or a
core was saturated, steps each direction's controller
(keel.adaptive.controller) and writes a changed rate to CAKE over netlink.

Only answers that come through the tunnel to probes it sent are taken: its
socket is bound to the tunnel device (SO_BINDTODEVICE) and to this router's
tunnel address, and connected to the peer's (the kernel hands it nothing
else); each probe carries a sequence number drawn at random (a nonce, 32 bits
of the kernel's CSPRNG), and an answer counts only if it echoes one of the
last OUTSTANDING probes' number with the exact nanosecond that probe was
sent at, once (Outstanding). A host on the WAN that spoofs the peer's tunnel
address reaches neither the socket nor, with keel's ruleset (its `spoofed`
chain, keel.render.nft), the router; one that guessed its way in still
would need a number and a time it never saw. The wire format is unchanged
(a reflector of an earlier version answers these probes).

It keeps, in /run/keel: adapt.json (the rates now, for the console and
doctor, rewritten once a second; every ADAPT_STATE_RESTING_S at rest) and
adapt.jsonl (every change with its reason, and every cut skipped for a
stall; bounded)."""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import json
import os
import secrets
import signal
import socket
import sys
import threading
import time
from collections import OrderedDict, deque
from dataclasses import dataclass
from pathlib import Path

from keel import thresholds as th
from keel.adaptive import wire
from keel.adaptive.controller import Bounds, Decision, State, Tick, resting, start, step
from keel.adaptive.reflector import SO_TIMESTAMPNS, arrival_ns
from keel.parse.procstat import shares
from keel.system.cpu_times import read_cpu_times
from keel.system.links import TxBytes
from keel.system.source import SourceError

RUN_DIR = Path("/run/keel")
STATE = "adapt.json"
LOG = "adapt.jsonl"
LOG_MAX_LINES, LOG_KEEP_LINES = 4000, 2000
# probes remembered until answered: 6.4 s at ADAPT_PROBE_HZ, longer than the
# controller listens to a silent peer (an older answer says nothing now)
OUTSTANDING = 64
REBIND_S = 10.0  # how often the tunnel device's index is looked at (recreated: rebind)
IP_FREEBIND = getattr(socket, "IP_FREEBIND", 15)  # bind before the address is up


@dataclass(frozen=True)
class Plan:
    peer: str  # the peer's tunnel address (its reflector), IPv4
    egress: str
    ingress: str
    up: Bounds | None  # None: that direction is not shaped
    down: Bounds | None
    tunnel: str  # the tunnel device the probes go out of and the answers come in by
    source: str  # this router's tunnel address, IPv4: the probes' source


def _bounds(text: str) -> Bounds:
    try:
        low, base, high = (int(v) for v in text.split(":"))
        return Bounds(low, base, high)
    except ValueError as err:
        raise argparse.ArgumentTypeError(f"MIN:BASE:MAX in kbit/s, 0 < min <= base <= max "
                                         f"({err})") from None


def _ipv4(text: str) -> str:
    try:
        return str(ipaddress.IPv4Address(text))
    except ValueError:
        raise argparse.ArgumentTypeError("an IPv4 address (the probes are IPv4)") from None


def parse_args(argv: list[str]) -> Plan:
    p = argparse.ArgumentParser(prog="python -m keel.adaptive.daemon")
    p.add_argument("--peer", required=True, type=_ipv4,
                   help="the tunnel peer's IPv4 address (its reflector)")
    p.add_argument("--egress", required=True, help="the device with the upload CAKE")
    p.add_argument("--ingress", required=True, help="the IFB with the download CAKE")
    p.add_argument("--tunnel", required=True, help="the tunnel device (the socket is bound "
                                                   "to it)")
    p.add_argument("--source", required=True, type=_ipv4,
                   help="this router's IPv4 tunnel address (the probes' source)")
    p.add_argument("--up", type=_bounds, metavar="MIN:BASE:MAX")
    p.add_argument("--down", type=_bounds, metavar="MIN:BASE:MAX")
    a = p.parse_args(argv)
    if a.up is None and a.down is None:
        p.error("nothing to adapt: give --up, --down or both")
    return Plan(a.peer, a.egress, a.ingress, a.up, a.down, a.tunnel, a.source)


class Log:
    """adapt.jsonl: appended a line at a time, cut to its last LOG_KEEP_LINES
    once it passes LOG_MAX_LINES (rewritten atomically)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.lines = 0

    def add(self, record: dict) -> None:
        with self.path.open("a") as f:
            f.write(json.dumps(record, separators=(",", ":")) + "\n")
        self.lines += 1
        if self.lines > LOG_MAX_LINES:
            kept = self.path.read_text().splitlines()[-LOG_KEEP_LINES:]
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text("\n".join(kept) + "\n")
            os.replace(tmp, self.path)
            self.lines = len(kept)


class Outstanding:
    """The probes sent and not yet answered, the last OUTSTANDING of them:
    sequence number (random, a nonce) -> the nanosecond it was sent at."""

    def __init__(self, size: int = OUTSTANDING) -> None:
        self.size = size
        self.sent: OrderedDict[int, int] = OrderedDict()

    def new(self, sent_ns: int) -> int:
        """A fresh random sequence number for a probe sent at sent_ns."""
        seq = secrets.randbits(32)
        while seq in self.sent:
            seq = secrets.randbits(32)
        self.sent[seq] = sent_ns
        while len(self.sent) > self.size:
            self.sent.popitem(last=False)
        return seq

    def answered(self, ans: wire.Answer) -> bool:
        """Whether `ans` answers a probe sent and not answered yet (its
        number and its time both); that probe is then done with."""
        if self.sent.get(ans.seq) != ans.sent_ns:
            return False
        del self.sent[ans.seq]
        return True


def open_socket(plan: Plan, port: int) -> socket.socket:
    """The probes' socket: bound to the tunnel device and this router's
    tunnel address, connected to the peer's reflector."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, plan.tunnel.encode())
        sock.setsockopt(socket.SOL_IP, IP_FREEBIND, 1)
        sock.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        sock.setblocking(False)
        sock.bind((plan.source, 0))
        sock.connect((plan.peer, port))
    except OSError:
        sock.close()
        raise
    return sock


def _ifindex(name: str) -> int | None:
    try:
        return socket.if_nametoindex(name)
    except OSError:
        return None


class Counters:
    """What got through a device (its tx bytes) over the load window."""

    def __init__(self, dev: str) -> None:
        self.tx = TxBytes(dev)
        self.seen: deque[tuple[float, int]] = deque()

    def kbit(self, now: float) -> float:
        got = self.tx.read()
        if got is None:
            self.seen.clear()
            return 0.0
        self.seen.append((now, got))
        while len(self.seen) > 2 and now - self.seen[1][0] >= th.ADAPT_LOAD_WINDOW_S:
            self.seen.popleft()
        (t0, b0), (t1, b1) = self.seen[0], self.seen[-1]
        return (b1 - b0) * 8 / 1000 / (t1 - t0) if t1 > t0 and b1 >= b0 else 0.0


class Cpus:
    """A core saturated since the last read (keel.thresholds.CORE_SATURATED)."""

    def __init__(self) -> None:
        self.before = self._read()

    @staticmethod
    def _read() -> dict:
        try:
            return read_cpu_times()
        except SourceError:
            return {}

    def saturated(self) -> bool:
        after = self._read()
        per_cpu = shares(self.before, after)
        self.before = after
        return any(name != "cpu" and (s.busy >= th.CORE_SATURATED
                                      or s.softirq >= th.CORE_SATURATED)
                   for name, s in per_cpu.items())


def stall_words(late_ms: float, peer_stall_ms: float, saturated: bool) -> str:
    """Why a tick is no evidence about the line, in the log's words ("" when
    it is): this router's loop woke late, one of its cores was saturated, or
    the peer's answer says its CPU was away."""
    why = []
    if late_ms >= th.ADAPT_OWN_STALL_MS:
        why.append(f"this router woke {late_ms:.0f} ms late")
    if saturated:
        why.append("a core of this router saturated")
    if peer_stall_ms >= th.ADAPT_PEER_STALL_MS:
        why.append(f"the peer's CPU away {peer_stall_ms:.0f} ms")
    return ", ".join(why)


class Daemon:
    def __init__(self, plan: Plan, run_dir: Path = RUN_DIR, cake=None,
                 port: int = wire.PORT) -> None:
        from keel.system.cake_rate import CakeRates

        self.plan = plan
        self.run_dir = run_dir
        self.cake = cake or CakeRates()
        self.port = port
        self.sock = open_socket(plan, port)
        self.bound_index = _ifindex(plan.tunnel)
        self.next_rebind = time.monotonic() + REBIND_S
        self.outstanding = Outstanding()
        self.forged = 0  # answers refused: not to a probe of ours
        self.bounds = {way: b for way, b in (("up", plan.up), ("down", plan.down)) if b}
        self.states = {way: start(b) for way, b in self.bounds.items()}
        self.written = {way: 0 for way in self.bounds}
        self.devs = {"up": plan.egress, "down": plan.ingress}
        self.counters = {way: Counters(self.devs[way]) for way in self.bounds}
        self.cpus = Cpus()
        self.log = Log(run_dir / LOG)
        self.last_reply: float | None = None
        self.stalled_until = float("-inf")
        self.stall_why = ""  # the last stall's words (held ADAPT_STALL_HOLD_S)
        self.last_skip = {"up": float("-inf"), "down": float("-inf")}
        self.through = {"up": 0.0, "down": 0.0}
        self.answers = 0

    def _rebind(self, now: float) -> None:
        """A tunnel device made anew (another index) gets a new socket: the
        old one stays bound to the device that is gone."""
        if now < self.next_rebind:
            return
        self.next_rebind = now + REBIND_S
        index = _ifindex(self.plan.tunnel)
        if index is None or index == self.bound_index:
            return
        with contextlib.suppress(OSError):
            sock = open_socket(self.plan, self.port)
            self.sock.close()
            self.sock, self.bound_index = sock, index

    def _send(self) -> None:
        sent = time.time_ns()
        seq = self.outstanding.new(sent)
        with contextlib.suppress(OSError):  # no route now (tunnel down): the peer is silent
            self.sock.send(wire.probe(seq, sent))

    def _drain(self, now: float) -> tuple[list[float], list[float], int]:
        """The one-way delays (up, down) of the answers waiting, and the
        longest stall a peer's answer reported (ms)."""
        ups, downs, peer_stall_ms = [], [], 0
        while True:
            try:
                data, ancdata, _, _ = self.sock.recvmsg(64, socket.CMSG_SPACE(16))
            except (BlockingIOError, InterruptedError):
                break
            except OSError:  # e.g. ICMP unreachable from an earlier probe
                continue
            arrived = arrival_ns(ancdata)
            try:
                ans = wire.parse_answer(data)
            except wire.WireError:
                self.forged += 1
                continue
            if not self.outstanding.answered(ans):
                self.forged += 1
                continue
            up, down = ans.one_way_ms(arrived)
            ups.append(up)
            downs.append(down)
            peer_stall_ms = max(peer_stall_ms, ans.peer_stall_ms)
            self.last_reply = now
            self.answers += 1
        return ups, downs, peer_stall_ms

    def _write(self, way: str, decision: Decision, now: float) -> None:
        rate, dev = decision.rate_kbit, self.devs[way]
        written = self.written[way]
        if decision.kind == "stall-skipped":
            if now - self.last_skip[way] >= 1.0:  # a line a second at most
                self.last_skip[way] = now
                self.log.add({"t": time.time(), "dir": way, "rate_kbit": rate,
                              "kind": decision.kind, "reason": decision.reason})
            return
        small = written and abs(rate - written) < th.ADAPT_WRITE_LEAST * written
        if rate == written or (small and decision.kind not in ("cut", "base")):
            return
        try:
            self.cake.set(dev, rate)
        except OSError as err:
            self.log.add({"t": time.time(), "dir": way, "rate_kbit": rate, "kind": "error",
                          "reason": f"{dev}: {err}"})
            self.written[way] = 0  # written again next time
            return
        self.written[way] = rate
        self.log.add({"t": time.time(), "dir": way, "from_kbit": written, "rate_kbit": rate,
                      "kind": decision.kind, "reason": decision.reason})

    def tick(self, now: float, late_ms: float, check_cpus: bool) -> None:
        self._rebind(now)
        ups, downs, peer_stall_ms = self._drain(now)
        saturated = check_cpus and self.cpus.saturated()
        why = stall_words(late_ms, peer_stall_ms, saturated)
        if why:
            self.stalled_until, self.stall_why = now + th.ADAPT_STALL_HOLD_S, why
        stall = self.stall_why if now < self.stalled_until else ""
        for way, samples in (("up", ups), ("down", downs)):
            if way not in self.bounds:
                continue
            self.through[way] = self.counters[way].kbit(now)
            tick = Tick(now, tuple(samples), self.through[way], stall, self.last_reply)
            state: State
            state, decision = step(self.states[way], tick, self.bounds[way])
            self.states[way] = state
            self._write(way, decision, now)
        self._send()

    def period(self) -> float:
        """Seconds to the next tick: ADAPT_PROBE_HZ's, or ADAPT_RESTING_HZ's
        while every direction rests (keel.adaptive.controller.resting)."""
        if all(resting(self.states[way], self.through[way], b)
               for way, b in self.bounds.items()):
            return 1.0 / th.ADAPT_RESTING_HZ
        return 1.0 / th.ADAPT_PROBE_HZ

    def snapshot(self) -> dict:
        def one(way: str) -> dict:
            s, b = self.states[way], self.bounds[way]
            return {"rate_kbit": s.rate_kbit, "min_kbit": b.min_kbit, "base_kbit": b.base_kbit,
                    "max_kbit": b.max_kbit, "through_kbit": round(self.through[way]),
                    "baseline_ms": None if s.baseline_ms is None else round(s.baseline_ms, 2),
                    "dev": self.devs[way]}
        silent = (None if self.last_reply is None
                  else round(time.monotonic() - self.last_reply, 1))
        return {"t": time.time(), "peer": self.plan.peer, "answers": self.answers,
                "peer_silent_s": silent, **{way: one(way) for way in self.bounds}}

    def run(self, stop: threading.Event) -> None:
        state_path = self.run_dir / STATE
        began = next_at = time.monotonic()
        next_cpu = next_state = began
        last_shown: tuple | None = None
        period = self.period()  # the one slept before each tick: it says whether we rest
        for way in self.bounds:  # the base from the start (apply set it too)
            self._write(way, Decision(self.bounds[way].base_kbit, "start: the base", "base"),
                        began)
        while not stop.is_set():
            delay = next_at - time.monotonic()
            if delay > 0 and stop.wait(delay):
                break
            now = time.monotonic()
            late_ms = max(0.0, (now - next_at) * 1000)
            resting = period > 1.0 / th.ADAPT_PROBE_HZ
            # at rest nothing is cut: the cores need not be read
            check_cpus = not resting and now >= next_cpu
            if check_cpus:
                next_cpu = now + th.ADAPT_CPU_EVERY_S
            self.tick(now, late_ms, check_cpus)
            # at once when a rate changed or the first answer came
            shown = (tuple(s.rate_kbit for s in self.states.values()), self.last_reply is None)
            if now >= next_state or shown != last_shown:
                last_shown = shown
                next_state = now + (th.ADAPT_STATE_RESTING_S if resting else 1.0)
                tmp = state_path.with_suffix(".tmp")
                tmp.write_text(json.dumps(self.snapshot()) + "\n")
                os.replace(tmp, state_path)
            period = self.period()
            next_at += period
            if now - next_at > 1.0:  # far behind (a long stall): start the count again
                next_at = now + period


def main(argv: list[str] | None = None) -> int:
    plan = parse_args(sys.argv[1:] if argv is None else argv)
    RUN_DIR.mkdir(parents=True, exist_ok=True)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    daemon = Daemon(plan)
    try:
        daemon.run(stop)
    finally:
        (RUN_DIR / STATE).unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
