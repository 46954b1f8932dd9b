"""Fake live data: a Source whose counters move with the clock (for the UI's
benchmark, development and tests), built on the lab fixtures' shapes."""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Callable, Sequence

from keel.stall.summary import CpuStall, StallSecond
from keel.system.adaptive import STATE_PATH as ADAPT_STATE
from keel.system.source import SourceError

PEER_KEY = "DGDJOoNeCQAxEAKW/6R/XQpwi4FNhdoJTo1LLorzzRg="
IFACE_KEY = "HlOu1tgN6jIPCqo/B9y+b7TT1bltyagEMGZGjSZNPVI="
# adaptive CAKE (FakeLiveSource(adaptive=True)): each direction's device and
# its (min, base, max) kbit/s
ADAPT = {"up": ("eth0", 20_000, 40_000, 44_000), "down": ("ifb4eth0", 20_000, 40_000, 44_000)}
KWORKERS = {9: ("kworker/0:0-wg-crypt-wg0", 0), 236: ("kworker/1:2+wg-crypt-wg0", 1),
            41: ("kworker/1:0-events", 1)}


def _tin(rate: int, sent: int, peak: int, avg: int, drops: int) -> dict:
    return {"threshold_rate": rate, "sent_bytes": sent, "backlog_bytes": 0, "target_us": 5000,
            "interval_us": 100000, "peak_delay_us": peak, "avg_delay_us": avg,
            "base_delay_us": 40, "sent_packets": sent // 1200, "drops": drops, "ecn_mark": 0}


class FakeLiveSource:
    """Two CPUs, wg0 with one peer, CAKE on eth0 and ifb4eth0. A load wave of
    `period` seconds drives throughput, softirq and the CAKE delays: a loaded
    tunnel throughout (never below a fifth of the peak, so every figure moves
    every second; the peak a quarter period in, as the fake probes')."""

    STEP = 0.05  # seconds: the counters move at most this often (the fake's own cost)
    ADAPT_PERIOD = 120.0  # adaptive=True: the line's capacity (so CAKE's rate) in waves

    def __init__(self, clock: Callable[[], float] = time.monotonic,
                 wallclock: Callable[[], float] = time.time, period: float = 40.0,
                 cpufreq: bool = False, adaptive: bool = False) -> None:
        self.clock, self.wallclock, self.period, self.cpufreq = clock, wallclock, period, cpufreq
        self.adaptive = adaptive
        self._lock = threading.Lock()
        self._t: float | None = None
        self.ticks = {f"cpu{i}": dict.fromkeys(
            ("user", "system", "idle", "softirq", "steal"), 1000) for i in range(2)}
        self.kticks = dict.fromkeys(KWORKERS, 100)
        self.wg = [25_753_676, 18_544_440, 20_000, 15_000]  # rx tx bytes, rx tx packets
        self.cake = {"eth0": 19_224_038, "ifb4eth0": 26_669_234}
        self.handshake = int(wallclock()) - 5

    def load(self, t: float) -> float:
        return 0.2 + 0.4 * (1 + math.sin(2 * math.pi * t / self.period))

    def adapted_kbit(self, way: str, t: float) -> int:
        """Adaptive CAKE's rate of a direction at t: the line's capacity falls
        to its minimum half a period in, and is back at the base by the end."""
        _, low, base, _ = ADAPT[way]
        dip = max(0.0, math.sin(2 * math.pi * t / self.ADAPT_PERIOD))
        return round(base - (base - low) * dip)

    def _adapt_json(self) -> str:
        t = self._t or 0.0

        def way(name: str) -> dict:
            dev, low, base, high = ADAPT[name]
            return {"rate_kbit": self.adapted_kbit(name, t), "min_kbit": low, "base_kbit": base,
                    "max_kbit": high, "through_kbit": 0, "baseline_ms": 2.4, "dev": dev}
        return json.dumps({"t": self.wallclock(), "peer": "10.99.0.2", "answers": 1000,
                           "peer_silent_s": 0.1, "up": way("up"), "down": way("down")})

    def _advance(self) -> None:
        with self._lock:
            t = self.clock()
            if self._t is not None and t - self._t < self.STEP:
                return  # a poll reads many files within a moment: one step for them
            dt = 0.0 if self._t is None else max(0.0, t - self._t)
            self._t = t
            load = self.load(t)
            hz_ticks = dt * 100
            for i, cpu in enumerate(self.ticks.values()):
                sirq = (0.05 + 0.5 * load) * (1.4 if i else 0.6)
                parts = {"user": 0.02, "system": 0.03 + 0.1 * load, "softirq": sirq,
                         "steal": 0.01}
                parts["idle"] = max(0.0, 1 - sum(parts.values()))
                for k, share in parts.items():
                    cpu[k] += round(share * hz_ticks)
            for pid, (comm, _) in KWORKERS.items():
                if "wg-crypt" in comm:
                    self.kticks[pid] += round(0.15 * load * hz_ticks)
            bps = 4e6 + 36e6 * load  # bits/s each way
            nbytes = round(bps / 8 * dt)
            self.wg[0] += nbytes
            self.wg[1] += round(nbytes * 0.3)
            self.wg[2] += nbytes // 1200
            self.wg[3] += nbytes // 3000
            up, down = round(nbytes * 0.3), nbytes
            if self.adaptive:  # no more gets through than CAKE's rate lets
                up = min(up, round(self.adapted_kbit("up", t) * 125 * dt))
                down = min(down, round(self.adapted_kbit("down", t) * 125 * dt * 0.97))
            self.cake["eth0"] += up
            self.cake["ifb4eth0"] += down
            if int(t) % 25 == 0:
                self.handshake = int(self.wallclock())

    # --- the Source interface ---------------------------------------------
    def read_text(self, path: str) -> str:
        self._advance()
        if path == "/proc/stat":
            rows = [[c["user"], 0, c["system"], c["idle"], 0, 0, c["softirq"], c["steal"]]
                    for c in self.ticks.values()]
            total = [sum(col) for col in zip(*rows, strict=True)]
            lines = ["cpu  " + " ".join(map(str, total)) + " 0 0"]
            lines += [f"{name} " + " ".join(map(str, row)) + " 0 0"
                      for name, row in zip(self.ticks, rows, strict=True)]
            return "\n".join(lines) + "\n"
        parts = path.strip("/").split("/")
        if parts[0] == "proc" and len(parts) == 3 and parts[1].isdigit():
            pid = int(parts[1])
            if pid not in KWORKERS:
                raise SourceError(2, "No such file", path)
            comm, cpu = KWORKERS[pid]
            if parts[2] == "comm":
                return comm + "\n"
            fields = ["I", "2"] + ["0"] * 9 + ["0", str(self.kticks[pid])] + ["0"] * 25
            fields[36] = str(cpu)
            return f"{pid} ({comm}) " + " ".join(fields) + "\n"
        if path == "/proc/loadavg":
            return f"{0.2 + 0.5 * self.load(self.clock()):.2f} 0.15 0.10 1/80 4242\n"
        if path == "/proc/uptime":
            return f"{self.clock():.2f} 0.00\n"
        if path == "/proc/cpuinfo":
            return "cpu MHz\t\t: 2300.022\ncpu MHz\t\t: 2300.022\n"
        if path.startswith("/sys/class/net/"):
            dev, rest = parts[3], "/".join(parts[4:])
            if rest == "uevent":
                return f"DEVTYPE=wireguard\nINTERFACE={dev}\n" if dev == "wg0" else \
                    f"INTERFACE={dev}\n"
            names = ["rx_bytes", "tx_bytes", "rx_packets", "tx_packets"]
            if dev == "wg0" and rest.startswith("statistics/") and parts[-1] in names:
                return f"{self.wg[names.index(parts[-1])]}\n"
        if self.cpufreq and path.startswith("/sys/devices/system/cpu/"):
            return self._sysfs(path)
        if self.adaptive and path == ADAPT_STATE:
            return self._adapt_json()
        raise SourceError(2, "No such file", path)

    def _sysfs(self, path: str) -> str:
        values = {"scaling_governor": "performance", "scaling_cur_freq": "2394000",
                  "scaling_max_freq": "2400000", "scaling_min_freq": "800000",
                  "current_driver": "intel_idle", "name": None, "latency": None,
                  "disable": None, "usage": "10", "time": "100"}
        leaf = path.rsplit("/", 1)[1]
        state = path.split("/cpuidle/state")[1][0] if "/cpuidle/state" in path else None
        if leaf == "name" and state is not None:
            return ("POLL", "C1", "C6")[int(state)] + "\n"
        if leaf == "latency" and state is not None:
            return ("0", "2", "133")[int(state)] + "\n"
        if leaf == "disable" and state is not None:
            return ("0", "0", "1")[int(state)] + "\n"
        if leaf in values and values[leaf] is not None:
            return values[leaf] + "\n"
        raise SourceError(2, "No such file", path)

    def listdir(self, path: str) -> list[str]:
        path = path.rstrip("/")
        if path == "/proc":
            return ["1", "self", *map(str, KWORKERS)]
        if path == "/sys/class/net":
            return ["eth0", "ifb4eth0", "lo", "wg0"]
        if self.cpufreq and path == "/sys/devices/system/cpu":
            return ["cpu0", "cpu1", "cpufreq", "cpuidle"]
        if self.cpufreq and path.endswith("/cpuidle"):
            return ["state0", "state1", "state2"]
        raise SourceError(2, "No such directory", path)

    def run(self, argv: Sequence[str]) -> str:
        self._advance()
        if tuple(argv[:2]) == ("wg", "show"):
            return (f"wg0\t(hidden)\t{IFACE_KEY}\t51820\toff\n"
                    f"wg0\t{PEER_KEY}\t(none)\t192.0.2.2:51820\t10.99.0.2/32\t"
                    f"{self.handshake}\t{self.wg[0]}\t{self.wg[1]}\t25\n")
        if tuple(argv[:1]) == ("tc",):
            load = self.load(self._t or 0.0)
            peak, avg = int(2000 + 9000 * load), int(300 + 4000 * load)
            up_bw = down_bw = 5_000_000  # bytes/s: 40 Mbit/s
            if self.adaptive:
                up_bw = self.adapted_kbit("up", self._t or 0.0) * 125
                down_bw = self.adapted_kbit("down", self._t or 0.0) * 125
            egress = {"kind": "cake", "handle": "8001:", "dev": "eth0", "root": True,
                      "options": {"bandwidth": up_bw, "diffserv": "besteffort"},
                      "bytes": self.cake["eth0"], "packets": self.cake["eth0"] // 1200,
                      "drops": 9, "backlog": 0, "qlen": 0,
                      "tins": [_tin(5_000_000, self.cake["eth0"], peak // 2, avg // 2, 9)]}
            ingress = {"kind": "cake", "handle": "8002:", "dev": "ifb4eth0", "root": True,
                       "options": {"bandwidth": down_bw, "diffserv": "diffserv4",
                                   "ingress": True},
                       "bytes": self.cake["ifb4eth0"], "packets": self.cake["ifb4eth0"] // 1200,
                       "drops": 3, "backlog": int(3000 * load), "qlen": 0,
                       "tins": [_tin(312_500, 0, 0, 0, 0),
                                _tin(5_000_000, self.cake["ifb4eth0"], peak, avg, 3),
                                _tin(2_500_000, 134, 92, 1, 0), _tin(1_250_000, 0, 0, 0, 0)]}
            return json.dumps([egress, ingress])
        raise SourceError(f"{argv[0]}: not faked")

    # --- the stall meter's latest second ------------------------------------
    def stall(self) -> StallSecond:
        """A healthy meter: wakeups within a fraction of a millisecond."""
        load = self.load(self.clock())
        cpus = tuple(CpuStall(i, 100, round(0.15 + 0.2 * load, 3), round(0.3 + 0.4 * load, 3),
                              round(15 + 10 * load, 1)) for i in range(2))
        return StallSecond(self.wallclock(), cpus, max(c.p99_ms for c in cpus),
                           max(c.max_ms for c in cpus), sum(c.stalled_ms for c in cpus), 0.0,
                           True)
