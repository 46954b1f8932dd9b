"""Applying what is in force plans nothing for dhcpcd, whoever runs the
apply: the boot (`keel apply --boot` under BusyBox init, PATH
/sbin:/usr/sbin:/bin:/usr/bin) and root's login shell (Debian's profile:
/usr/sbin before /sbin) find the same dhcpcd. On a merged /usr (the dev
image: /sbin is a link to usr/sbin) each PATH named it by another path, so
the command line, and the stamp's digest of it, differed: a stop and a
restart of dhcpcd planned right after boot on an unchanged config."""

from __future__ import annotations

import os
from pathlib import Path

from keel.apply import ipv6 as plan6
from keel.apply.ipv6 import DHCPCD_STAMP
from tests.unit.apply.test_ipv6_plan import EDGE6, Probe6


class Probed(Probe6):
    """Probe6 with the real program lookup, in a tree of our own."""

    def __init__(self, run_dir: Path, dirs: tuple[str, ...], **kw) -> None:
        super().__init__(run_dir, **kw)
        self.program_dirs = dirs

    def program(self, name):
        return plan6.Probe.program(self, name)


def merged_usr(root: Path) -> tuple[str, ...]:
    """root/usr/sbin/dhcpcd, root/sbin a link to usr/sbin; the program
    directories in Probe's order, under root."""
    (root / "usr/sbin").mkdir(parents=True)
    (root / "usr/bin").mkdir()
    (root / "bin").mkdir()
    prog = root / "usr/sbin/dhcpcd"
    prog.write_text("#!/bin/sh\n")
    prog.chmod(0o755)
    os.symlink("usr/sbin", root / "sbin")
    return tuple(str(root / d) for d in ("usr/sbin", "sbin", "usr/bin", "bin"))


def test_the_boots_plan_is_in_force_for_a_login_shell(tmp_path, monkeypatch):
    root = tmp_path / "root"
    dirs = merged_usr(root)
    run_dir = tmp_path / "run"
    # the boot: BusyBox init's PATH
    monkeypatch.setenv("PATH", f"{root}/sbin:{root}/usr/sbin:{root}/bin:{root}/usr/bin")
    (step,) = plan6.plan_dhcpcd(EDGE6, Probed(run_dir, dirs))
    ((_, stamp),) = step.stamps
    assert Path(step.commands[0][7]).name == "dhcpcd"
    # later, from root's shell (Debian's /etc/profile), on the state the boot left
    monkeypatch.setenv("PATH", f"{root}/usr/sbin:{root}/usr/bin:{root}/sbin:{root}/bin")
    after = Probed(run_dir, dirs, running=("dhcpcd.pid",),
                   stamps={DHCPCD_STAMP: stamp.strip()})
    assert plan6.plan_dhcpcd(EDGE6, after) == []


def test_a_program_is_found_in_keels_directories_whatever_the_path(tmp_path, monkeypatch):
    dirs = merged_usr(tmp_path)
    elsewhere = tmp_path / "local"
    elsewhere.mkdir()
    (elsewhere / "dhcpcd").write_text("#!/bin/sh\n")
    (elsewhere / "dhcpcd").chmod(0o755)
    found = set()
    for path in (f"{elsewhere}:{tmp_path}/sbin", f"{tmp_path}/sbin:{tmp_path}/usr/sbin",
                 f"{tmp_path}/usr/sbin", ""):
        monkeypatch.setenv("PATH", path)
        found.add(Probed(tmp_path / "run", dirs).program("dhcpcd"))
    assert found == {f"{tmp_path}/usr/sbin/dhcpcd"}
    assert Probed(tmp_path / "run", dirs).program("no-such-program") is None
