"""A router that touches nothing: a command runner that only records (and
fails the commands a test asks it to), and every path keel writes or reads
(/data, /run, /etc, the CPU and NIC tuning files) under a temporary
directory. For tests of the whole `keel apply --boot` path."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from keel.apply import command, engine
from keel.apply.command import Applier
from keel.state.revisions import RevisionStore
from keel.system import links, pm_qos
from keel.system.commands import CommandError, Runner
from keel.system.cpu_sysfs import CpuTuning
from keel.tuning import cpu as cpu_tuning

# a made-up WireGuard private key that `wg genkey` "prints"; a test's output
# must never show it
FAKE_PRIVATE_KEY = "mJ1JYpGGd2ghT2bsyeZmoTpOG3C/a1j4KZl41LPf5l8="
# the NICs `ip -j -d link show` lists: a WAN and a LAN, up
LINKS = json.dumps([{"ifname": name, "flags": ["UP"], "mtu": 1500, "linkinfo": {}}
                    for name in ("eth0", "eth1")])


class RecordingRunner(Runner):
    """Every command succeeds with no output, except `wg genkey` (a key),
    `ip -j -d link show` (eth0 and eth1) and those `fails` picks
    (CommandError, as the real tools' failures)."""

    def __init__(self, fails: Callable[[list[str]], bool] | None = None) -> None:
        super().__init__()
        self.fails = fails
        self.inputs: list[str | None] = []

    def run(self, argv: Sequence[str], *, input: str | None = None, check: bool = True,
            timeout: float = 30) -> subprocess.CompletedProcess[str]:
        argv = list(argv)
        self.ran.append(argv)
        self.inputs.append(input)
        if self.fails is not None and self.fails(argv):
            if check:
                raise CommandError(argv, 2, "refused (by the test)")
            return subprocess.CompletedProcess(argv, 2, "", "refused (by the test)")
        out = ""
        if argv[:2] == ["wg", "genkey"]:
            out = FAKE_PRIVATE_KEY + "\n"
        elif argv == ["ip", "-j", "-d", "link", "show"]:
            out = LINKS
        return subprocess.CompletedProcess(argv, 0, out, "")

    def start(self, argv: Sequence[str]) -> None:
        self.run(argv)


@dataclass
class FakeRouter:
    root: Path
    runner: RecordingRunner
    said: list[str] = field(default_factory=list)

    @property
    def user(self) -> Path:
        return self.root / "data/keel/keel.toml"

    @property
    def default(self) -> Path:
        return self.root / "etc/keel/keel.toml"

    @property
    def run_dir(self) -> Path:
        return self.root / "run/keel"

    @property
    def revisions(self) -> RevisionStore:
        return RevisionStore(self.root / "data/keel/revisions")

    @property
    def key_path(self) -> Path:
        return self.root / "data/keel/wireguard.key"

    def applier(self, report: Callable[[str], None] | None = None) -> Applier:
        return Applier(self.runner, report=report or self.said.append,
                       revisions=self.revisions, key_path=self.key_path, run_dir=self.run_dir)

    def boot(self) -> int:
        """`keel apply --boot`, on this router."""
        return command._apply_at_boot(self.applier(), self.user, self.default)

    def ran(self, *prefix: str) -> list[list[str]]:
        return [argv for argv in self.runner.ran if argv[:len(prefix)] == list(prefix)]


@contextmanager
def fake_router(default_text: str, fails: Callable[[list[str]], bool] | None = None
                ) -> Iterator[FakeRouter]:
    """A router whose shipped default is `default_text`; nothing real is read
    for tuning and nothing real is written."""
    with (tempfile.TemporaryDirectory(prefix="keel-fake-") as tmp,
          pytest.MonkeyPatch.context() as mp):
        root = Path(tmp)
        router = FakeRouter(root, RecordingRunner(fails))
        router.default.parent.mkdir(parents=True)
        router.default.write_text(default_text)
        router.user.parent.mkdir(parents=True)
        (root / "sys/class/net").mkdir(parents=True)
        mp.setattr(command, "USER_CONFIG", router.user)
        mp.setattr(command, "DEFAULT_CONFIG", router.default)
        mp.setattr(command, "PENDING", router.run_dir / "pending-confirm.json")
        mp.setattr(engine, "RUN_DIR", router.run_dir)
        mp.setattr(command, "make_applier", lambda report=print: router.applier(report))
        mp.setattr(engine.Probe, "cpu_tuning", lambda self: CpuTuning({}, "none", (), None))
        mp.setattr(pm_qos, "PM_QOS_DEVICE", root / "dev/cpu_dma_latency")
        mp.setattr(cpu_tuning, "NET_ROOT", root / "sys/class/net")
        mp.setattr(links, "NET", str(root / "sys/class/net"))
        mp.setattr(engine.Probe, "sysfs_root", str(root))  # the NICs' identities
        mp.setattr(os, "fsync", lambda fd: None)  # a temporary directory needs no durability
        yield router
