"""The forwards of the config in force as one immutable snapshot: each with
its role on this router, its hits (the connections its named counter
counted; None when the ruleset has no such counter) and whether its target
answers a TCP connect now ("not checked" for UDP). `keel forwards` prints
it; the console's tunnel screen polls it in a worker thread."""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from keel.forwards.probe import NOT_CHECKED, Counters, read_counters, tcp_status
from keel.model.router import Forward, RouterModel
from keel.render.nft import forward_counter
from keel.render.wireguard import hub_peer

MAX_PARALLEL = 8  # targets checked at once (each waits up to probe.CONNECT_TIMEOUT_S)

ReadCounters = Callable[[], tuple[Counters | None, str]]
Check = Callable[[str, int], str]


@dataclass(frozen=True)
class ForwardRow:
    name: str
    protocol: str  # "tcp", "udp" or "both"
    public: str  # the public port(s): "8080", "8000-8010"
    target: str  # "192.168.77.50:80", or the address alone (the same port(s))
    via: str | None  # the edge it is behind
    role: str  # "outer", "inner" or "local" (keel.model.router.Forward)
    hits: int | None  # connections let in; None: the ruleset has no such counter
    status: str  # "answers", "refused", "no answer", "not checked"


@dataclass(frozen=True)
class ForwardsSnapshot:
    rows: tuple[ForwardRow, ...] = ()
    hub: bool = False  # a tunnel that reaches no hub: edges reach us
    counters_note: str = ""  # why there are no hits at all ("" when nft listed them)
    problem: str = ""  # why there is nothing to show (the config in force is invalid)
    taken_at: float = 0.0  # wall-clock seconds

    @property
    def shown(self) -> bool:
        """Whether the console shows the forwards: some, or on a hub."""
        return bool(self.rows) or self.hub or bool(self.problem)


def is_hub(model: RouterModel) -> bool:
    return model.wireguard is not None and hub_peer(model.wireguard) is None


def checked_port(forward: Forward) -> int:
    """The port a target is checked on: its own, else the first public one."""
    return forward.target_port if forward.target_port is not None else forward.port_low


def _status(forward: Forward, check: Check) -> str:
    if forward.protocol == "udp":
        return NOT_CHECKED
    return check(forward.address, checked_port(forward))


def collect(model: RouterModel, read: ReadCounters = read_counters, check: Check = tcp_status,
            clock: Callable[[], float] = time.time) -> ForwardsSnapshot:
    """The snapshot of `model`'s forwards: the counters read once, the
    targets checked side by side (at most MAX_PARALLEL at a time)."""
    forwards = model.forwards
    counters, note = read() if forwards else ({}, "")
    if forwards:
        with ThreadPoolExecutor(max_workers=min(MAX_PARALLEL, len(forwards)),
                                thread_name_prefix="keel-forward-check") as pool:
            statuses = list(pool.map(lambda f: _status(f, check), forwards))
    else:
        statuses = []
    rows = tuple(
        ForwardRow(f.name, f.protocol, f.public, f.target, f.via, f.role,
                   None if counters is None or forward_counter(f) not in counters
                   else counters[forward_counter(f)][0], status)
        for f, status in zip(forwards, statuses, strict=True))
    return ForwardsSnapshot(rows, is_hub(model), note, "", clock())


def collect_in_force(read: ReadCounters = read_counters, check: Check = tcp_status,
                     clock: Callable[[], float] = time.time) -> ForwardsSnapshot:
    """The snapshot of the config in force (the user's, else the shipped
    default); one saying why when that config is invalid."""
    from keel.apply.command import config_in_force
    from keel.model.reading import InvalidConfig, read_model

    try:
        model = read_model(config_in_force())
    except InvalidConfig as err:
        return ForwardsSnapshot(problem=f"the config in force is invalid: {err.summary()}",
                                taken_at=clock())
    return collect(model, read, check, clock)
