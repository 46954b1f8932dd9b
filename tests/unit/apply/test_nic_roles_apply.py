"""`keel apply` resolves the config's NICs on the machine's sysfs (a fake
router over tests/fixtures/sysfs.py trees): a LAN that is not here gets no
dnsmasq, a WAN named by identity is its kernel name in every command, a
WAN on no NIC here is refused (the boot falls back), and what each role
was first found on is kept on /data."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from keel.parse.nic_first_seen import parse_first_seen
from tests.fixtures import sysfs
from tests.unit.apply import fake_router as fr

SHIPPED = (Path(__file__).resolve().parents[3] / "overlay/etc/keel/keel.toml").read_text()


def links(*names: str) -> str:
    return json.dumps([{"ifname": n, "flags": ["UP"], "mtu": 1500, "linkinfo": {}}
                       for n in names])


def dnsmasq_started(router: fr.FakeRouter) -> bool:
    return any(argv and argv[0] == "dnsmasq" for argv in router.runner.ran)


def test_the_shipped_default_on_a_one_nic_vps_starts_no_dnsmasq(monkeypatch):
    monkeypatch.setattr(fr, "LINKS", links("eth0"))
    with fr.fake_router(SHIPPED) as router:
        sysfs.build(router.root, sysfs.KVM_VPS)
        assert router.boot() == 0
        assert not dnsmasq_started(router)
        assert any("lan.interface eth1: no such NIC on this machine: no LAN service" in line
                   for line in router.said)
        assert [r["name"] for r in json.loads((router.run_dir / "nics.json").read_text())] == \
            ["eth0", None]


def test_the_shipped_default_with_its_lan_here_serves_it(monkeypatch):
    monkeypatch.setattr(fr, "LINKS", links("eth0", "eth1"))
    with fr.fake_router(SHIPPED) as router:
        assert router.boot() == 0
        assert dnsmasq_started(router)


@pytest.mark.parametrize("tree", ["THREE_NICS_DEV_IMAGE", "THREE_NICS_RELEASE"])
def test_nics_named_by_identity_are_their_kernel_names_in_every_command(monkeypatch, tree):
    monkeypatch.setattr(fr, "LINKS", links("eth0", "eth1", "eth2"))
    text = SHIPPED.replace('interface = "eth0"', 'interface = "pci:00:05.0"', 1).replace(
        'interface = "eth1"', 'interface = "mac:52:54:00:00:03:01"', 1)
    assert "pci:00:05.0" in text and "mac:52:54:00:00:03:01" in text
    with fr.fake_router(text) as router:
        sysfs.build(router.root, getattr(sysfs, tree))
        assert router.boot() == 0
        e1000 = "eth0" if tree == "THREE_NICS_DEV_IMAGE" else "eth2"
        rtl = "eth1" if tree == "THREE_NICS_DEV_IMAGE" else "eth0"
        conf = (router.run_dir / "dnsmasq.conf").read_text()
        assert f"interface={rtl}\n" in conf
        assert not any("pci:" in " ".join(argv) or "mac:" in " ".join(argv)
                       for argv in router.runner.ran)
        roles = json.loads((router.run_dir / "nics.json").read_text())
        assert [(r["spec"], r["name"]) for r in roles] == [
            ("pci:00:05.0", e1000), ("mac:52:54:00:00:03:01", rtl)]
        kept = parse_first_seen((router.root / "data/keel/nics.json").read_text())
        assert kept["wan.interface"].identity == "mac:52:54:00:00:05:01"
        assert kept["wan.interface"].driver == "e1000"


def test_a_wan_on_no_nic_here_is_refused_and_the_boot_falls_back(monkeypatch):
    monkeypatch.setattr(fr, "LINKS", links("eth0"))
    user = SHIPPED.replace('interface = "eth0"', 'interface = "mac:52:54:00:99:99:99"', 1)
    with fr.fake_router(SHIPPED) as router:
        sysfs.build(router.root, sysfs.KVM_VPS)
        router.user.write_text(user)
        assert router.boot() == 0
        said = "\n".join(router.said)
        assert "wan.interface mac:52:54:00:99:99:99: no NIC here has this" in said
        assert said.endswith("etc/keel/keel.toml (fallback; `keel doctor` says why)")
