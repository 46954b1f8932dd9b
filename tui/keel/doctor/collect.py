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
