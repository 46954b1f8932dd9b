"""Reading what the doctor checks from the running system."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from keel.upgrade.slots import UpgradeStatus

import hashlib
import json
import time
from pathlib import Path

from keel.doctor.checks import RulesetState
from keel.doctor.history import HistoryState
from keel.model import RouterModel
from keel.model.nic_roles import Resolution
from keel.parse import nftlist, procstat
from keel.parse.hardware import Device, Link
from keel.parse.nic_first_seen import FirstSeen
from keel.parse.nic_identity import Port
from keel.parse.tcqdisc import Qdisc
from keel.parse.wgdump import WgInterface
from keel.render import nft
from keel.system import nic_ports, nic_record
from keel.system.commands import Runner
from keel.system.cpu_sysfs import CpuTuning, read_tuning
from keel.system.cpu_times import read_cpu_times
from keel.system.hardware import read_devices, read_link, read_secure_boot
from keel.system.qdiscs import read_qdiscs
from keel.system.source import RunnerSource, SourceError
from keel.system.wireguard import read_wireguard

HISTORY_PIDFILE = Path("/run/keel/history.pid")  # S42history writes it


def steal_over(seconds: float) -> dict[str, procstat.CpuShare]:
    before = read_cpu_times()
    time.sleep(seconds)
    return procstat.shares(before, read_cpu_times())


def qdiscs(runner: Runner) -> list[Qdisc]:
    try:
        return read_qdiscs(RunnerSource(runner))
    except SourceError:
        return []


def wireguard(runner: Runner) -> dict[str, WgInterface]:
    try:
        return read_wireguard(RunnerSource(runner))
    except SourceError:
        return {}


def mtus(runner: Runner) -> dict[str, int]:
    proc = runner.run(["ip", "-j", "link", "show"], check=False)
    return {link["ifname"]: link.get("mtu", 0) for link in json.loads(proc.stdout or "[]")}


def ruleset(model: RouterModel, runner: Runner, run_dir: Path) -> RulesetState:
    """The firewall as `keel apply` left it and as it is now."""
    from keel.apply.engine import LIVE_STAMP

    def stamp(name: str) -> str | None:
        try:
            return (run_dir / "state" / name).read_text().strip() or None
        except OSError:
            return None

    listed = runner.run(list(nft.LIST_STATELESS), check=False)
    pairing = runner.run(list(nft.LIST_PAIRING), check=False)
    return RulesetState(
        rendered_sha=hashlib.sha256(nft.render_ruleset(model).encode()).hexdigest(),
        loaded_sha=stamp("nft.sha"), recorded=stamp(LIVE_STAMP),
        live=nftlist.normalized(listed.stdout) if listed.returncode == 0 else None,
        pairing=tuple(nftlist.set_elements(pairing.stdout)) if pairing.returncode == 0
        else ())


def devices() -> list[Device]:
    """The network and storage devices, each with the driver that took it."""
    return read_devices()


def secure_boot() -> str | None:
    return read_secure_boot()


def links(model: RouterModel) -> dict[str, Link]:
    """The link of each NIC the config assigns (the WANs' and the LANs')."""
    names = [w.interface for w in model.wans] + [lan.interface for lan in model.lans]
    return {name: read_link(name) for name in names}


def ports() -> list[Port]:
    return nic_ports.read_ports()


def roles(model: RouterModel) -> Resolution:
    """The WAN's and the LAN's NICs resolved on this machine now."""
    return nic_ports.resolve_in_force(model)


def first_seen() -> dict[str, FirstSeen]:
    return nic_record.read_first_seen()


def tuning() -> CpuTuning:
    return read_tuning()


def upgrade() -> UpgradeStatus | None:
    """The slots and the last upgrade; None on a machine with no slots (no
    rauc.slot= at boot: not a keel image, or a test host)."""
    from keel.upgrade import slots, system

    try:
        if slots.booted_slot(system.cmdline()) is None:
            return None
        return system.read_status()
    except OSError:
        return None


def history() -> HistoryState:
    """The history daemon as S42history started it: its pidfile's process,
    its newest point (latest.json), its last batch kept (written.json) and the
    store's bytes on /data (the file and its WAL)."""
    from keel.history.daemon import LATEST
    from keel.history.store import DEFAULT_PATH
    from keel.system.processes import pid_alive, pidfile_pid

    pid = pidfile_pid(str(HISTORY_PIDFILE))

    def field_of(path: Path, name: str) -> float | None:
        try:
            value = json.loads(path.read_text())[name]
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return float(value) if isinstance(value, int | float) else None

    sizes = [p.stat().st_size for p in (DEFAULT_PATH, DEFAULT_PATH.with_name(
        DEFAULT_PATH.name + "-wal")) if p.exists()]
    try:
        newest: float | None = float(json.loads(LATEST.read_text())["point"]["t"])
    except (OSError, ValueError, KeyError, TypeError):
        newest = None
    return HistoryState(running=pid is not None and pid_alive(pid), newest=newest,
                        kept_at=field_of(LATEST.with_name("written.json"), "at"),
                        store_bytes=sum(sizes) if sizes else None)


def metrics(run_dir: Path) -> bool:
    """The metrics endpoint (keel metrics-serve) runs: its pidfile's process."""
    from keel.apply.metrics import PIDFILE

    return _runs(run_dir / PIDFILE)


def fleet_agent(run_dir: Path) -> bool:
    """The fleet channel's agent (keel fleet agent) runs: its pidfile's process."""
    from keel.apply.fleet import PIDFILE

    return _runs(run_dir / PIDFILE)


def fleet_watch(run_dir: Path) -> bool:
    """The hub's watcher (keel fleet watch) runs: its pidfile's process."""
    from keel.apply.fleet import WATCH_PIDFILE

    return _runs(run_dir / WATCH_PIDFILE)


def _runs(pidfile: Path) -> bool:
    """A daemon keel started runs: its pidfile's process is alive."""
    from keel.system.processes import pid_alive, pidfile_pid

    pid = pidfile_pid(str(pidfile))
    return pid is not None and pid_alive(pid)
