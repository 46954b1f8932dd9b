"""The lab's QEMU command lines: links are unix datagram sockets between the
two guests, and no guest ever gets QEMU's user-mode (slirp) network."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.lab.accel import QEMU, Accel
from tests.lab.guest import NIC_MODELS, Guest
from tests.lab.lab import Lab
from tests.lab.paths import EmulatorCrash, LabError

TCG = Accel(name="tcg", timeout_factor=4.0, reason="test", load_aware=False)


def make_lab(tmp_path: Path) -> Lab:
    lab = Lab(tmp_path, accel=TCG)
    image = tmp_path / "image.qcow2"
    for name in ("lan", "edge", "hub"):
        lab.guest(name, image=image)
    lab.link("lan", lab.guests["lan"], lab.guests["edge"])
    lab.link("wan", lab.guests["edge"], lab.guests["hub"])
    return lab


def netdevs(argv: list[str]) -> list[str]:
    return [argv[i + 1] for i, arg in enumerate(argv) if arg == "-netdev"]


def test_links_are_point_to_point_unix_datagram_sockets(tmp_path):
    lab = make_lab(tmp_path)
    try:
        edge = lab.guests["edge"]
        hub = lab.guests["hub"]
        assert [nic.link for nic in edge.nics] == ["lan", "wan"]
        wan_edge, wan_hub = edge.nics[1], hub.nics[0]
        assert wan_edge.local == wan_hub.remote and wan_edge.remote == wan_hub.local
        for netdev in netdevs(edge.qemu_argv()):
            assert netdev.startswith("dgram,") and "local.type=unix" in netdev
            assert "remote.type=unix" in netdev
    finally:
        lab.close()


def test_no_guest_gets_a_user_mode_network(tmp_path):
    lab = make_lab(tmp_path)
    try:
        for guest in lab.guests.values():
            argv = guest.qemu_argv()
            assert "-nodefaults" in argv
            assert "-nic" not in argv
            assert not any(n.startswith(("user", "socket", "tap")) for n in netdevs(argv))
    finally:
        lab.close()


def test_the_hardware_lab_asks_qemu_for_each_disk_bus_screen_and_nic_model(tmp_path,
                                                                          monkeypatch):
    """The hardware matrix's command lines (tests/lab/labs.py: IMAGE), each
    one checked against the QEMU that runs them: every device it names exists."""
    from tests.lab import guest, labs

    monkeypatch.setattr(guest, "dev_image", lambda: tmp_path / "image.qcow2")
    lab = Lab(tmp_path, accel=TCG)
    guests = labs.IMAGE.define(lab)
    argvs = {name: g.qemu_argv() for name, g in guests.items()}
    assert "nvme,drive=boot,serial=keel-boot,bootindex=0" in argvs["nvme"]
    assert "virtio-vga" in argvs["nvme"] and "VGA" in argvs["ahci"]
    assert argvs["ide"][argvs["ide"].index("-machine") + 1] == "pc"
    assert "usb-storage,drive=boot,bus=xhci.0,bootindex=0" in argvs["usb"]
    devices = {arg.split(",")[0] for argv in argvs.values()
               for i, arg in enumerate(argv) if i and argv[i - 1] == "-device"}
    assert set(NIC_MODELS) <= devices
    known = subprocess.run([QEMU, "-device", "help"], capture_output=True, text=True,
                           check=True).stdout
    assert [d for d in sorted(devices) if f'name "{d}"' not in known] == []
    with pytest.raises(LabError, match="disk bus 'sata'"):
        Guest("x", tmp_path, disk_bus="sata", image=tmp_path / "i.qcow2", accel=TCG)
    with pytest.raises(LabError, match="NIC models"):
        lab.link("bad", guests["usb"], guests["ide"], models=("ne2k_pci", "e1000"))


def test_macs_are_unique_across_the_lab(tmp_path):
    lab = make_lab(tmp_path)
    try:
        macs = [nic.mac for g in lab.guests.values() for nic in g.nics]
        assert len(macs) == len(set(macs)) == 4
    finally:
        lab.close()


def test_tcg_scales_timeouts():
    assert TCG.scale(10) == 40
    assert TCG.qemu_args() == ["-accel", "tcg", "-cpu", "max"]


def test_a_busy_host_scales_timeouts_more_within_a_cap():
    from tests.lab.accel import BUSY_CAP, busy

    assert busy(load=0.3, cores=2) == 1.0  # idle: as TCG alone
    assert busy(load=3.0, cores=2) == 1.5  # three busy guests on 2 cores
    assert busy(load=40.0, cores=2) == BUSY_CAP
    loaded = Accel(name="tcg", timeout_factor=4.0, reason="test")
    assert TCG.scale(10) <= loaded.scale(10) <= TCG.scale(10) * BUSY_CAP


class FlakyEmulator(Guest):
    """A stand-in for QEMU: the first run dies of the assertion QEMU 10 once
    failed here under TCG; the second gives a login prompt and a shell (its
    boot's apply ended)."""

    @property
    def applied_record(self) -> str:
        return str(self.workdir / "applied.json")

    def qemu_argv(self) -> list[str]:
        crashed = self.workdir / "crashed-once"
        script = (f"if [ -e {crashed} ]; then touch {self.applied_record}; printf 'login: '; "
                  "read -r user; exec sh -i; fi; "
                  f"touch {crashed}; echo 'qemu-system-x86_64: system/physmem.c:2678: "
                  "iotlb_to_section: Assertion `section_index < d->map.sections_nb` failed.'; "
                  "exit 134")
        return ["sh", "-c", script]


class BrokenGuest(Guest):
    def qemu_argv(self) -> list[str]:
        return ["sh", "-c", "echo 'Kernel panic - not syncing: VFS'; exit 1"]


def test_a_guest_whose_emulator_crashes_at_boot_boots_once_more(tmp_path, capsys):
    image = tmp_path / "image.qcow2"
    subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", str(image), "1M"], check=True)
    guest = FlakyEmulator("edge", tmp_path, image=image, accel=TCG)
    try:
        guest.start()
        guest.wait_for_login(5)
        assert guest.check("echo up") == "up"
    finally:
        guest.stop()
    assert "QEMU crashed" in capsys.readouterr().err
    assert "iotlb_to_section" in (tmp_path / "edge.console.crashed.log").read_text()


def test_a_guest_that_dies_otherwise_fails_at_once(tmp_path):
    image = tmp_path / "image.qcow2"
    subprocess.run(["qemu-img", "create", "-q", "-f", "qcow2", str(image), "1M"], check=True)
    guest = BrokenGuest("edge", tmp_path, image=image, accel=TCG)
    try:
        guest.start()
        with pytest.raises(LabError, match=r"(?s)QEMU exited.*Kernel panic") as err:
            guest.wait_for_login(5)
        assert not isinstance(err.value, EmulatorCrash)
    finally:
        guest.stop()


def test_a_schedule_scaled_keeps_its_shape_and_its_floor_grows() -> None:
    from tests.lab import autorate

    half = autorate.scaled(autorate.SCHEDULE, 0.5)
    assert [(p.seconds, p.down_kbit, p.up_kbit) for p in half] == [
        (20, 2000, 750), (20, 750, 300), (20, 1500, 600)]
    assert autorate.scaled(autorate.SCHEDULE, 1.0) == autorate.SCHEDULE
    # one 1500-byte packet each way at 90 % of the lowest rates (1500/600)
    assert round(autorate.floor_ms(autorate.SCHEDULE), 1) == round(12000 / 1350 + 12000 / 540, 1)
    assert autorate.floor_ms(half) == 2 * autorate.floor_ms(autorate.SCHEDULE)
