"""keel.render.dhcpcd: dhcpcd.conf and argv for DHCPv6 prefix delegation on
the WAN, the DUID's format, and the LANs' IPv6 facts."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from keel.model import Lan, RouterModel, Wan
from keel.render import dhcpcd

DUID = "00:04:" + ":".join(["ab"] * 16)


def model(ipv6: str = "auto", pd: int = 56, *lans: Lan) -> RouterModel:
    return RouterModel(wans=(Wan("eth0", ipv6=ipv6, ipv6_pd_length=pd),), lans=lans)


LAN = Lan("eth1", "192.168.77.1/24", ipv6_from_wan=True)


def test_no_config_when_no_wan_is_on_auto():
    assert dhcpcd.render_dhcpcd(model("off", 56, LAN), DUID) is None
    assert dhcpcd.delegated_lans(model("off", 56, LAN)) == ()
    assert not dhcpcd.lan_has_ipv6(model("off", 56, LAN), LAN)


def test_ipv6_only_no_rs_no_hooks_keels_duid_and_the_delegation():
    text = dhcpcd.render_dhcpcd(model("auto", 56, LAN), DUID)
    assert text is not None
    lines = [line.strip() for line in text.splitlines() if not line.startswith("#")]
    for want in ("ipv6only", "noipv6rs", "script /dev/null", "vendorclassid", f"duid {DUID}",
                 "interface eth0", "ia_pd 1/::/56 eth1/0/64"):
        assert want in lines, want
    assert not any(line.startswith(("ipv4", "ia_na", "option", "hostname")) for line in lines)


def test_lans_get_sla_ids_from_zero_in_order_and_static_only_lans_none():
    lans = (LAN, Lan("eth2", "10.0.2.1/24"), Lan("eth3", "10.0.3.1/24", ipv6_from_wan=True),
            Lan("eth4", "10.0.4.1/24", address6="2001:db8:100:1::1/64"))
    m = model("auto", 60, *lans)
    assert [(lan.interface, sla) for lan, sla in dhcpcd.delegated_lans(m)] == [
        ("eth1", 0), ("eth3", 1)]
    assert "  ia_pd 1/::/60 eth1/0/64 eth3/1/64" in dhcpcd.render_dhcpcd(m, DUID).splitlines()
    assert [dhcpcd.lan_has_ipv6(m, lan) for lan in lans] == [True, False, True, True]


def test_a_prefix_is_asked_for_even_when_no_lan_takes_it():
    text = dhcpcd.render_dhcpcd(model("auto", 48, Lan("eth1", "10.0.0.1/24")), DUID)
    assert "  ia_pd 1/::/48 -" in text.splitlines()


def test_argv_runs_in_the_foreground_on_the_auto_wans_only():
    m = RouterModel(wans=(Wan("eth0", ipv6="auto"), Wan("eth9")), lans=(LAN,))
    assert dhcpcd.dhcpcd_argv(m, "/run/keel/dhcpcd.conf") == [
        "dhcpcd", "-B", "-f", "/run/keel/dhcpcd.conf", "eth0"]
    assert dhcpcd.dhcpcd_argv(m, "/x.conf", "/usr/sbin/dhcpcd")[0] == "/usr/sbin/dhcpcd"


def test_duid_uuid_and_parse():
    duid = dhcpcd.duid_uuid(bytes(range(16)))
    assert duid.startswith("00:04:00:01:02") and len(duid.split(":")) == 18
    assert dhcpcd.parse_duid(" 00:04:AB:cd \n") == "00:04:ab:cd"
    for bad in ("", "00", "0004ab", "00:04:zz", "00:04:", ":00:04", "00:04:abc",
                ":".join(["00"] * 131), "00:04\n:ab"):
        with pytest.raises(dhcpcd.DuidError):
            dhcpcd.parse_duid(bad)
    with pytest.raises(dhcpcd.DuidError):
        dhcpcd.duid_uuid(b"short")


def test_a_bad_duid_renders_nothing():
    with pytest.raises(dhcpcd.DuidError):
        dhcpcd.render_dhcpcd(model("auto", 56, LAN), "not a duid\nscript /bin/sh")


@given(st.text(max_size=600))
def test_parse_duid_takes_only_its_format(text):
    """Whatever the file on /data holds: a clean DUID back, or DuidError."""
    try:
        value = dhcpcd.parse_duid(text)
    except dhcpcd.DuidError:
        return
    parts = value.split(":")
    assert 2 <= len(parts) <= dhcpcd.MAX_DUID_BYTES
    assert all(len(p) == 2 and int(p, 16) >= 0 for p in parts)
    assert "\n" not in value and " " not in value


@given(st.binary(min_size=16, max_size=16))
def test_every_made_duid_parses_back(raw):
    duid = dhcpcd.duid_uuid(raw)
    assert dhcpcd.parse_duid(duid) == duid
