"""The one ping process type: `ping -D -O -n -i INTERVAL target` read line by
line on a thread, its lines turned into final samples by
keel.parse.ping.PingTracker (one timestamp rule, one loss rule). The
dashboard's latency probes and the bufferbloat self-test both run it. An
IPv6 target is pinged with -6; a probe outside the tunnel carries the
tunnel's fwmark (-m), as WireGuard's own packets do, so that it leaves by
the WAN when the tunnel takes the default route (wireguard.route = all)."""

from __future__ import annotations

import ipaddress
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence

from keel.parse.ping import LOSS_AFTER_S, LatencySample, PingTracker

INTERVAL = 0.2  # 5 Hz

Spawn = Callable[[Sequence[str]], "subprocess.Popen[str]"]


def _popen(argv: Sequence[str]) -> subprocess.Popen[str]:
    return subprocess.Popen(list(argv), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            stdin=subprocess.DEVNULL, text=True, bufsize=1,
                            start_new_session=True)


def family(target: str) -> list[str]:
    """ping's family option for an address: -6 for IPv6 (iputils reads an
    IPv6 literal anyway; -6 says so and fails rather than resolve), none for
    IPv4; ValueError for what is not an IP address."""
    return ["-6"] if ipaddress.ip_address(target).version == 6 else []


def mark_option(mark: int | None) -> list[str]:
    """-m MARK: the probe is routed as packets with that fwmark are."""
    return [] if mark is None else ["-m", str(mark)]


def ping_argv(target: str, interval: float = INTERVAL, mark: int | None = None) -> list[str]:
    return ["ping", *family(target), "-D", "-O", "-n", "-i", str(interval),
            *mark_option(mark), target]


class PingProcess:
    """One ping process and its reader thread. Each start() runs a new
    process with a new tracker (sequence numbers start again with it).
    `on_sample` is called on the reader thread with each final sample."""

    def __init__(self, target: str, interval: float = INTERVAL,
                 loss_after: float = LOSS_AFTER_S, spawn: Spawn = _popen,
                 on_sample: Callable[[LatencySample], None] | None = None,
                 argv: Sequence[str] | None = None, keep: int = 5000,
                 mark: int | None = None) -> None:
        self.target, self.interval, self.loss_after = target, interval, loss_after
        self.argv = list(argv or ping_argv(target, interval, mark))
        self.spawn, self.on_sample = spawn, on_sample
        self.samples: deque[LatencySample] = deque(maxlen=keep)  # every final sample
        self._new: list[LatencySample] = []
        self._lock = threading.Lock()
        self._tracker = PingTracker(interval, loss_after)
        self._proc: subprocess.Popen[str] | None = None
        self.error: str | None = None

    def start(self) -> None:
        self._tracker = PingTracker(self.interval, self.loss_after)
        try:
            self._proc = self.spawn(self.argv)
        except OSError as exc:
            self.error = f"{self.argv[0]}: {exc.strerror}"
            return
        threading.Thread(target=self._read, args=(self._proc, self._tracker),
                         name=f"ping-{self.target}", daemon=True).start()

    def _read(self, proc: subprocess.Popen[str], tracker: PingTracker) -> None:
        assert proc.stdout is not None
        for line in proc.stdout:
            with self._lock:
                got = tracker.feed(line)
                self._keep(got)
            for sample in got:
                if self.on_sample is not None:
                    self.on_sample(sample)

    def _keep(self, got: list[LatencySample]) -> None:
        self.samples.extend(got)
        self._new.extend(got)

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None and proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    def drain(self, now: float) -> list[LatencySample]:
        """What became final since the last drain (overdue probes lost by now)."""
        with self._lock:
            self._keep(self._tracker.expire(now))
            out, self._new = self._new, []
        return sorted(out, key=lambda s: s.sent)

    def between(self, start: float, end: float) -> list[LatencySample]:
        """Final samples of the probes sent in [start, end)."""
        with self._lock:
            return sorted((s for s in self.samples if start <= s.sent < end),
                          key=lambda s: s.sent)

    def settle(self, before: float, clock: Callable[[], float] = time.time) -> None:
        """Wait until every probe sent before `before` is final (at most until
        the loss timeout after `before`, and two intervals)."""
        deadline = max(clock(), before) + self.loss_after + 2 * self.interval
        while clock() < deadline:
            with self._lock:
                self._keep(self._tracker.expire(clock()))
                if not self._tracker.pending_before(before):
                    return
            time.sleep(self.interval)


ICMP_IPV4_HEADERS = 28  # IPv4 + ICMP headers: `ping -s` counts the payload only
ICMP_IPV6_HEADERS = 48  # IPv6 + ICMPv6 headers


def df_argv(addr: str, mtu: int, mark: int | None = None) -> list[str]:
    """One echo of `mtu` bytes in all (the IP header too) that may not be
    fragmented (IPv6 routers never fragment; -M do keeps the sender from it)."""
    headers = ICMP_IPV6_HEADERS if family(addr) else ICMP_IPV4_HEADERS
    return ["ping", *family(addr), "-M", "do", "-n", "-c", "1", "-W", "1", *mark_option(mark),
            "-s", str(mtu - headers), addr]


def df_probe(addr: str, mtu: int, mark: int | None = None, tries: int = 2) -> bool:
    """Does a packet of `mtu` bytes with don't-fragment set reach `addr`
    (sent with fwmark `mark`, when given)?"""
    argv = df_argv(addr, mtu, mark)
    for _ in range(tries):
        if subprocess.run(argv, capture_output=True, text=True, check=False).returncode == 0:
            return True
    return False
