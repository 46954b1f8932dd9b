"""A staged upgrade of the hub's edges (`keel fleet upgrade BUNDLE`, and the
fleet screen's [u]): the hub sends the bundle to each edge through the
tunnel (keel.fleet.wire's upgrade request), the edge installs it as `keel
upgrade FILE` would, with its own keyring, and reboots into it; the hub then
waits for that edge's health gate to decide (the edge's last upgrade
outcome changes: kept, or rolled back with why).

The order: one edge first (the operator's --first, else the first peer with
upgrade_first = true, else the first edge in the config), alone; then the
rest in groups of `group`, side by side. An edge that refuses the bundle,
is rolled back by its gate, or does not come back within the bound stops the
rollout there: the edges after it are not touched, and the verdict names
the edge and why. The hub does not check the bundle itself: the first edge
is the check (its refusal costs one transfer, nothing else).

The state of the rollout (`Rollout`) is published on every change: the
command prints it, and writes it to STATE for the console's fleet screen."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import threading
import time
from collections.abc import Callable, Collection, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from keel.fleet import wire
from keel.fleet.hub import Edge, read_reply, why
from keel.ports import FLEET_TCP
from keel.shown import shown

STATE = Path("/run/keel/fleet/rollout.json")  # the rollout now, or the last one
LOCK = Path("/run/keel/fleet/rollout.lock")  # held while a rollout runs
LOG = Path("/run/keel/fleet-rollout.log")  # a rollout started from the console prints here
SEND_CHUNK = 1 << 20
MAX_GROUP = 16
DEFAULT_GROUP = 4
POLL_S = 10.0  # an edge asked for its outcome this often while it reboots
MAX_STATE_BYTES = 64 * 1024

# an edge's phases, in order; the last three end it
WAITING, ASKING, SENDING, INSTALLING, BOOTING = (
    "waiting", "asking", "sending", "installing", "booting")
KEPT, FAILED, UNTOUCHED = "kept", "failed", "untouched"
PHASES = (WAITING, ASKING, SENDING, INSTALLING, BOOTING, KEPT, FAILED, UNTOUCHED)


class RolloutError(ValueError):
    """A rollout that cannot start: why, in one line (no edge touched)."""


@dataclass(frozen=True)
class Step:
    """One edge's part: where it is, and what it said."""

    name: str
    stage: int  # 0: the first edge, alone; 1.. the groups after
    phase: str = WAITING
    detail: str = ""
    percent: int | None = None  # of the bundle sent

    def line(self) -> str:
        """Its state in words, within the VGA console's 80 columns."""
        what = {WAITING: "waiting", ASKING: "asking its status",
                SENDING: f"sending the bundle {self.percent or 0}%",
                INSTALLING: "installing (the edge checks the signature and writes)",
                BOOTING: "rebooted into it: its health gate decides",
                KEPT: "KEPT", FAILED: "STOPPED HERE", UNTOUCHED: "untouched"}[self.phase]
        text = f"{shown(self.name, 20):<21} {what}"
        if self.detail:
            text += f": {shown(self.detail, 200)}"
        return text if len(text) <= 80 else text[:77] + "..."


@dataclass(frozen=True)
class Rollout:
    bundle: str  # the bundle's file name
    size: int
    started: float  # the hub's clock
    steps: tuple[Step, ...]
    ended: bool = False
    verdict: str = ""  # once ended: every edge kept, or where it stopped and why
    pid: int = 0  # the process running it

    @property
    def ok(self) -> bool:
        return self.ended and all(s.phase == KEPT for s in self.steps)

    def with_step(self, step: Step) -> Rollout:
        return replace(self, steps=tuple(step if s.name == step.name else s
                                         for s in self.steps))

    def step(self, name: str) -> Step:
        return next(s for s in self.steps if s.name == name)

    def lines(self) -> list[str]:
        head = f"upgrade {shown(self.bundle, 40)} ({self.size >> 20} MiB)"
        if self.ended:
            head += f": {shown(self.verdict, 200)}"
        out = [head if len(head) <= 80 else head[:77] + "..."]
        return out + ["  " + s.line()[:78] for s in self.steps]

    def as_json(self) -> dict[str, Any]:
        return {**asdict(self), "steps": [asdict(s) for s in self.steps]}

    @classmethod
    def from_json(cls, data: Any) -> Rollout:
        """Our own STATE file read back (ValueError when it is not one)."""
        if not isinstance(data, dict) or not isinstance(data.get("steps"), list):
            raise ValueError("not a rollout")
        steps = []
        for s in data["steps"][:256]:
            if not isinstance(s, dict) or s.get("phase") not in PHASES:
                raise ValueError("not a step")
            percent = s.get("percent")
            steps.append(Step(str(s.get("name", ""))[:64], int(s.get("stage", 0)), s["phase"],
                              str(s.get("detail", ""))[:300],
                              None if percent is None else int(percent)))
        return cls(str(data.get("bundle", ""))[:200], int(data.get("size", 0)),
                   float(data.get("started", 0.0)), tuple(steps), bool(data.get("ended")),
                   str(data.get("verdict", ""))[:300], int(data.get("pid", 0)))


def stages(edges: Sequence[Edge], first: str | None, flagged: Collection[str],
           group: int = DEFAULT_GROUP) -> list[list[Edge]]:
    """The order: [the first edge], then the rest in groups of `group`, in
    the config's order. RolloutError when `first` is no edge's name, or
    there is no edge."""
    if not edges:
        raise RolloutError("no edges to upgrade (keel pair: an edge paired by an older keel "
                           "must pair again)")
    if not 1 <= group <= MAX_GROUP:
        raise RolloutError(f"--group {group}: 1 to {MAX_GROUP} edges at a time")
    names = [e.name for e in edges]
    if first is not None and first not in names:
        raise RolloutError(f"--first {shown(first, 64)}: no edge of that name "
                           f"(the edges: {', '.join(shown(n, 64) for n in names)})")
    lead = first or next((n for n in names if n in flagged), names[0])
    rest = [e for e in edges if e.name != lead]
    return [[e for e in edges if e.name == lead]] + [
        rest[i:i + group] for i in range(0, len(rest), group)]


def digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(SEND_CHUNK):
            h.update(chunk)
    return h.hexdigest()


# --- the real channel ---------------------------------------------------------------

def send_bundle(address: str, offer: wire.Offer, path: Path,
                progress: Callable[[int], None], reply_s: float,
                port: int = FLEET_TCP, timeout_s: float = 60.0) -> tuple[str, str]:
    """The upgrade request and the bundle's bytes to the agent at `address`,
    then its one-line reply within `reply_s` (its install): (version, slot).
    Raises OSError (no connection, stalled) or WireError (its refusal)."""
    with socket.create_connection((address, port), timeout=timeout_s) as conn:
        conn.sendall(wire.upgrade_request(offer))
        sent, shown_at = 0, -1
        with path.open("rb") as f:
            while chunk := f.read(SEND_CHUNK):
                try:
                    conn.sendall(chunk)
                except OSError:
                    # the edge stopped reading: its refusal may have come first
                    return wire.parse_installed_reply(read_reply(conn, 5.0))
                sent += len(chunk)
                percent = sent * 100 // offer.size
                if percent != shown_at:
                    progress(percent)
                    shown_at = percent
        if sent != offer.size:
            raise OSError(f"the bundle changed while it was sent ({sent} of {offer.size} bytes)")
        return wire.parse_installed_reply(read_reply(conn, reply_s))


def status_of(edge: Edge) -> wire.Status:
    from keel.fleet.hub import ask

    return wire.parse_status_reply(ask(edge.address, wire.status_request()))


# --- the rollout ---------------------------------------------------------------------

Send = Callable[[Edge, Callable[[int], None]], tuple[str, str]]


class Runner:
    """Runs one rollout over `plan` (stages()); `send(edge, progress)` gives
    an edge the bundle (its (version, slot) installed, or raises),
    `status(edge)` asks it; `publish` gets the Rollout on every change.
    `back_s`: how long an edge has, from its install, to report its gate's
    outcome."""

    def __init__(self, plan: list[list[Edge]], rollout: Rollout, send: Send,
                 status: Callable[[Edge], wire.Status], publish: Callable[[Rollout], None],
                 back_s: float, poll_s: float = POLL_S,
                 clock: Callable[[], float] = time.monotonic,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.plan, self.state = plan, rollout
        self.send, self.status, self.publish = send, status, publish
        self.back_s, self.poll_s, self.clock, self.sleep = back_s, poll_s, clock, sleep
        self._lock = threading.Lock()

    def _set(self, name: str, phase: str, detail: str = "", percent: int | None = None) -> None:
        with self._lock:
            step = replace(self.state.step(name), phase=phase, detail=detail, percent=percent)
            self.state = self.state.with_step(step)
            self.publish(self.state)

    def run(self) -> Rollout:
        self.publish(self.state)
        for n, group in enumerate(self.plan):
            with ThreadPoolExecutor(max_workers=len(group)) as pool:
                list(pool.map(self.one, group))
            failed = [self.state.step(e.name) for e in group
                      if self.state.step(e.name).phase == FAILED]
            if failed:
                later = [e.name for g in self.plan[n + 1:] for e in g]
                for name in later:
                    self._set(name, UNTOUCHED)
                first = failed[0]
                verdict = f"stopped at {first.name}: {first.detail}"
                if later:
                    verdict += f"; {', '.join(later)} not touched"
                return self._end(verdict)
        kept = {self.state.step(e.name).detail for g in self.plan for e in g}
        return self._end(f"every edge kept it ({', '.join(sorted(kept))})")

    def _end(self, verdict: str) -> Rollout:
        with self._lock:
            self.state = replace(self.state, ended=True, verdict=verdict)
            self.publish(self.state)
        return self.state

    def one(self, edge: Edge) -> None:
        self._set(edge.name, ASKING)
        try:
            before = self.status(edge).last_upgrade
        except (OSError, ValueError) as err:
            self._set(edge.name, FAILED, f"no answer before the upgrade: {why(err)}")
            return
        self._set(edge.name, SENDING, percent=0)

        def progress(percent: int) -> None:
            if percent >= 100:
                self._set(edge.name, INSTALLING)
            else:
                self._set(edge.name, SENDING, percent=percent)

        try:
            version, slot = self.send(edge, progress)
        except (OSError, ValueError) as err:
            self._set(edge.name, FAILED, why(err))
            return
        self._set(edge.name, BOOTING, f"keel {version} in slot {slot}")
        self._outcome(edge, before, version)

    def _outcome(self, edge: Edge, before: wire.Upgrade | None, version: str) -> None:
        """Wait for the edge's last upgrade outcome to change (its gate
        decided), up to back_s."""
        deadline = self.clock() + self.back_s
        last_error = "it has not answered since"
        while self.clock() < deadline:
            self.sleep(self.poll_s)
            try:
                st = self.status(edge)
            except (OSError, ValueError) as err:
                last_error = f"no answer: {why(err)}"
                continue
            last_error = "it answers, its gate has not decided"
            outcome = st.last_upgrade
            if outcome is None or outcome == before:
                continue
            if outcome.result == "kept" and outcome.version == version and st.version == version:
                self._set(edge.name, KEPT, f"keel {version}")
            else:
                reason = f": {outcome.reason}" if outcome.reason else ""
                self._set(edge.name, FAILED, f"{outcome.result}{reason}; it runs keel "
                                             f"{st.version} in slot {st.slot or '?'}")
            return
        self._set(edge.name, FAILED, f"no outcome within {self.back_s:.0f} s of its install "
                                     f"({last_error})")


def write_state(rollout: Rollout, path: Path = STATE) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(rollout.as_json()) + "\n")
    tmp.replace(path)


def read_state(path: Path = STATE) -> Rollout | None:
    """The rollout now or the last one (None: none, or unreadable). One
    that says it runs but whose process is gone ended without a verdict."""
    try:
        if path.stat().st_size > MAX_STATE_BYTES:
            return None
        rollout = Rollout.from_json(json.loads(path.read_text()))
    except (OSError, ValueError, TypeError):
        return None
    from keel.system.processes import pid_alive

    if not rollout.ended and (rollout.pid <= 0 or not pid_alive(rollout.pid)):
        return replace(rollout, ended=True,
                       verdict="cut short: the rollout's process ended without a verdict")
    return rollout


@contextlib.contextmanager
def held(lock: Path = LOCK):
    """This process's hold on the rollout lock (RolloutError: one runs)."""
    import fcntl

    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a+") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RolloutError("a rollout runs already (keel fleet shows it)") from None
        yield


def upgrade(target: str, first: str | None, group: int, tunnel_wait: int,
            show: Callable[[Rollout], None]) -> Rollout:
    """`keel fleet upgrade`: the bundle at `target` (a path, or an https URL
    fetched once onto /data) rolled out to the edges of the config in force;
    `show` gets each change. RolloutError (or keel.upgrade's errors) before
    any edge is touched."""
    from keel.apply.errors import InvalidConfig
    from keel.fleet.hub import fleet_edges
    from keel.model.reading import config_in_force, read_loaded
    from keel.thresholds import FLEET_INSTALL_REPLY_S, FLEET_UPGRADE_BACK_S
    from keel.upgrade import fetch
    from keel.upgrade.record import check_tunnel_wait
    from keel.upgrade.target import check_target

    target = check_target(target)
    try:
        check_tunnel_wait(tunnel_wait)
    except ValueError as err:
        raise RolloutError(f"--tunnel-wait {tunnel_wait}: {err}") from None
    try:
        config = read_loaded(config_in_force()).config
    except InvalidConfig as err:
        raise RolloutError(f"the config in force is invalid: {err.summary()}") from None
    edges = fleet_edges(config)
    flagged = {p.name for p in config.wireguard.peer if p.fleet == "edge" and p.upgrade_first}
    plan = stages(edges, first, flagged, group)
    with held():
        fetched = "://" in target
        path = fetch.fetch(target, fetch.DOWNLOAD) if fetched else Path(target)
        try:
            try:
                size = path.stat().st_size
            except OSError as err:
                raise RolloutError(f"no bundle at {shown(target)}: {err.strerror}") from None
            if not wire.MIN_BUNDLE <= size <= wire.MAX_BUNDLE:
                raise RolloutError(f"{shown(target)} is {size} bytes: not a bundle")
            offer = wire.Offer(size, digest(path), tunnel_wait)
            steps = tuple(Step(e.name, n) for n, g in enumerate(plan) for e in g)
            rollout = Rollout(Path(target).name, size, time.time(), steps, pid=os.getpid())

            def publish(state: Rollout) -> None:
                with contextlib.suppress(OSError):
                    write_state(state)
                show(state)

            return Runner(plan, rollout,
                          lambda edge, progress: send_bundle(edge.address, offer, path,
                                                             progress, FLEET_INSTALL_REPLY_S),
                          status_of, publish, FLEET_UPGRADE_BACK_S).run()
        finally:
            if fetched:
                path.unlink(missing_ok=True)


def order_in_force(group: int = DEFAULT_GROUP) -> str:
    """The rollout's order for the config in force, in words (the console
    asks with it); RolloutError when there is none."""
    from keel.apply.errors import InvalidConfig
    from keel.fleet.hub import fleet_edges
    from keel.model.reading import config_in_force, read_loaded

    try:
        config = read_loaded(config_in_force()).config
    except InvalidConfig as err:
        raise RolloutError(f"the config in force is invalid: {err.summary()}") from None
    flagged = {p.name for p in config.wireguard.peer if p.fleet == "edge" and p.upgrade_first}
    plan = stages(fleet_edges(config), None, flagged, group)
    words = f"{shown(plan[0][0].name, 64)} first, alone"
    if len(plan) > 1:
        words += f"; then {', '.join(shown(e.name, 64) for g in plan[1:] for e in g)}"
        words += f", {group} at a time"
    return words

